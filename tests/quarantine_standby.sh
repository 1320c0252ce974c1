#!/bin/sh
# quarantine_standby.sh - a host that reads the journal from a hot
# standby (sync_database) quarantines a damaged journal event as any
# other host does: the mark goes to the primary (database), since the
# standby is read-only
#
# Host B: database = the primary, sync_database = the standby.  One of
# list q's events is damaged with SQL.  B's sync must skip it, mark it
# in the journal (on the primary, with the reason), say "quarantined and
# skipped" (not "could not be marked"), and its rebuild and a second
# such host (C) must then skip it as quarantined before, once the
# standby has the mark.  A second damaged event met by B's rebuild is
# marked too.  Runs under tests/pg.sh; files in a mktemp -d directory.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
QHOLD=$top_builddir/tests/qhold
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-qstandby.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
primary="host=$PGHOST port=$PGPORT dbname=$PGDATABASE"
standby="host=$PGHOST port=$PG_STANDBY_PORT dbname=$PGDATABASE"
for h in B C; do
	mkdir -p "$T/$h" || exit 99
	printf 'tokens_dir = %s/tokens-%s\ndatabase = %s\nsync_database = %s\n' \
	    "$T" "$h" "$primary" "$standby" > "$T/$h/listgate.conf"
done

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
lgB() { "$LISTGATE" --allow-root --config "$T/B" "$@"; }
lgC() { "$LISTGATE" --allow-root --config "$T/C" "$@"; }
run() { "$@" > "$T/out" 2> "$T/err"; rc=$?; }
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
sqls() { psql -X -q -A -t -v ON_ERROR_STOP=1 -p "$PG_STANDBY_PORT" -c "$1"; }
# journal LIST CLASS FILE: one event; its id on stdout
journal() {
	"$QHOLD" -j "$1" "$2" "$3" > /dev/null || exit 99
	sql "SELECT max(id) FROM train_journal WHERE list = '$1'"
}
# catchup: tests/lib.sh
marked() { sql "SELECT string_agg(id::text, ' ' ORDER BY id) FROM train_journal WHERE quarantined_at IS NOT NULL AND quarantine_reason LIKE 'stored message is corrupt%'"; }

lgB migrate -q || exit 99
sh "$PG_SH" standby-create || exit 99

journal q spam "$DATA/spam1.eml" > /dev/null
bad1=$(journal q spam "$DATA/spam2.eml")
journal q ham "$DATA/ham1.eml" > /dev/null
sql "UPDATE train_journal SET message_z = substring(message_z FROM 1 FOR length(message_z) / 2) WHERE id = $bad1"
catchup || exit 99

run lgB sync --list q
check "sync from the standby with a damaged event exits 0" test "$rc" -eq 0
check "... applies the two others" \
    grep -q "^list q: 2 journal events applied, 1 quarantined and skipped" "$T/out"
check "... says it quarantined the damaged one" \
    grep -q "journal event $bad1 cannot be applied (stored message is corrupt.*): quarantined and skipped" "$T/err"
check "... not that it could not mark it" \
    sh -c "! grep -q 'could not be marked' '$T/err'"
check "... and marks it in the journal through the primary" \
    test "$(marked)" = "$bad1"

catchup || exit 99
run lgC sync --list q
check "a second host reading the standby skips it" test "$rc" -eq 0
check "... as quarantined before" \
    grep -q "journal event $bad1 skipped: quarantined before" "$T/err"

# a rebuild from the standby meets another damaged event: marked too
bad2=$(journal q ham "$DATA/ham2.eml")
sql "UPDATE train_journal SET size = size + 1 WHERE id = $bad2"
catchup || exit 99
run lgB rebuild --list q
check "rebuild from the standby exits 0" test "$rc" -eq 0
check "... marks the new damaged event through the primary" \
    test "$(marked)" = "$bad1 $bad2"
check "... and says so" \
    grep -q "journal event $bad2 cannot be applied (.*): quarantined and skipped" "$T/err"

# the primary out of reach: the event is skipped all the same, the
# failure to mark it said, the sync not failed for it
bad3=$(journal q spam "$DATA/spam3.eml")
sql "UPDATE train_journal SET size = size + 1 WHERE id = $bad3"
catchup || exit 99
$PG_CTL_STOP
run lgB sync --list q
check "with the primary down, sync from the standby still exits 0" \
    test "$rc" -eq 0
check "... skipping the event and saying it could not be marked" \
    grep -q "journal event $bad3 cannot be applied (.*): skipped, but it could not be marked" "$T/err"
$PG_CTL_START
check "... which stays unmarked" test "$(marked)" = "$bad1 $bad2"

echo "1..$n"
[ "$fails" -eq 0 ]

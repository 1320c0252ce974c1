#!/bin/sh
# sync_lost_list.sh - a token file of a list that has no journal events
# left (a failover to a standby that lost the list's first commits) is
# refused by `listgate sync` and `sync --check` over every list, naming
# the rebuild, never skipped in silence
#
# Host A trains list dev, which the streaming standby replays; the
# standby stops, A trains list young (its first events) and syncs it.
# The primary dies and the standby is promoted: its journal has no
# event of young at all, so the journal's list of names leaves young
# out, and A's young.kch would go on scoring with the lost training
# (unlike a rebuild, or a host that never had the file) while sync
# exits 0.  A's sync (and --check) must fail naming young and `listgate
# rebuild --list young`, leave the file alone, and still sync dev; after
# the rebuild, sync exits 0 again.  Runs under tests/pg.sh with a
# streaming standby; files in a mktemp -d directory.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-lostlist.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
mkdir -p "$T/A/lists" || exit 99
printf 'tokens_dir = %s/tokens-A\ndatabase = host=%s port=%s dbname=%s\n' \
    "$T" "$PGHOST" "$PGPORT" "$PGDATABASE" > "$T/A/listgate.conf"
: > "$T/A/lists/dev.conf"
: > "$T/A/lists/young.conf"

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), catchup
lgA() { "$LISTGATE" --allow-root --config "$T/A" "$@"; }
run() { "$@" > "$T/out" 2> "$T/err"; rc=$?; }
sqls() { psql -X -q -A -t -v ON_ERROR_STOP=1 -p "$PG_STANDBY_PORT" -c "$1"; }
posts() {
	lgA score --list "$1" --db-stats |
	    awk '$1 ~ /_posts$/ { n += $2 } END { print n + 0 }'
}

lgA migrate -q || exit 99
sh "$PG_SH" standby-create || exit 99
lgA train -q --list dev --ham "$DATA/ham1.eml" "$DATA/ham2.eml" || exit 99
catchup || exit 99
sh "$PG_SH" standby-stop || exit 99
lgA train -q --list young --spam "$DATA/spam1.eml" "$DATA/spam2.eml" ||
    exit 99
run lgA sync
check "before the failover, sync exits 0" test "$rc" -eq 0
check "... young's token file holds its 2 posts" test "$(posts young)" -eq 2
$PG_CTL_STOP
{ sh "$PG_SH" standby-start && sh "$PG_SH" standby-promote; } || exit 99
sed "s/port=$PGPORT /port=$PG_STANDBY_PORT /" "$T/A/listgate.conf" > "$T/c" &&
    mv "$T/c" "$T/A/listgate.conf" || exit 99
if [ "$(sqls "SELECT count(*) FROM train_journal WHERE list = 'young'")" != 0 ]; then
	echo "# the promoted standby has young's events: cannot test" >&2
	exit 99
fi
lgA train -q --list dev --spam "$DATA/spam3.eml" || exit 99

cp "$T/tokens-A/young.kch" "$T/before.kch"
run lgA sync
check "after the failover, sync exits 1" test "$rc" -eq 1
check "... naming list young and its rebuild" \
    grep -q "list young: .*listgate --config [^ ]* rebuild --list young" "$T/err"
check "... leaving young's token file alone" \
    cmp -s "$T/tokens-A/young.kch" "$T/before.kch"
check "... and still syncing dev" grep -q "^list dev: " "$T/out"
run lgA sync --check
check "sync --check exits 1" test "$rc" -eq 1
check "... naming list young and its rebuild" \
    grep -q "list young: .*rebuild --list young" "$T/err"
run lgA rebuild --list young
check "rebuild --list young exits 0" test "$rc" -eq 0
check "... leaving it without the lost posts" test "$(posts young)" -eq 0
run lgA sync
check "then sync exits 0" test "$rc" -eq 0
# a token file of no configured list (a former site store, once
# site_list is unset) is scored by no filter: left alone, as before
cp "$T/before.kch" "$T/tokens-A/former.kch"
run lgA sync
check "a token file of no configured list at a journal position: sync exits 0" \
    test "$rc" -eq 0
check "... and leaves it alone" cmp -s "$T/tokens-A/former.kch" "$T/before.kch"
rm -f "$T/tokens-A/former.kch"
run lgA sync --check
check "... and so does sync --check" test "$rc" -eq 0

echo "1..$n"
[ "$fails" -eq 0 ]

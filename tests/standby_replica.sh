#!/bin/sh
# standby_replica.sh - a host whose sync_database is not a replica of its
# database (another database, here one of the primary's own cluster,
# with listgate's schema and a site feed of its own) is told so, naming
# both settings, and nothing is applied: before, it fed the site store
# on the primary and applied the other database's feed, where what the
# primary fed never comes (the site store stopped learning without a
# word), and built the lists' token files from the other journal
#
# Host A trains on the primary; host B reads the journal from a real
# streaming standby (tests/pg.sh standby-create) and its site store
# follows A's; host C reads it from the database "other" of the same
# cluster: its sync (of everything, a list, --check, --site) and its
# rebuild of the site store exit 1 with the message, and make no token
# file.  Runs under tests/pg.sh; files in a mktemp -d directory.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-replica.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
primary="host=$PGHOST port=$PGPORT dbname=$PGDATABASE"
for h in A B C D; do
	mkdir -p "$T/$h/lists" || exit 99
	printf 'tokens_dir = %s/tokens-%s\ndatabase = %s\nsite_list = site\n' \
	    "$T" "$h" "$primary" > "$T/$h/listgate.conf"
	: > "$T/$h/lists/dev.conf"
	: > "$T/$h/lists/site.conf"
done
printf 'sync_database = host=%s port=%s dbname=%s\n' "$PGHOST" \
    "$PG_STANDBY_PORT" "$PGDATABASE" >> "$T/B/listgate.conf"
printf 'sync_database = host=%s port=%s dbname=other\n' "$PGHOST" \
    "$PGPORT" >> "$T/C/listgate.conf"
# D: the other database alone, trained and fed on its own
printf 'tokens_dir = %s/tokens-D\ndatabase = host=%s port=%s dbname=other\nsite_list = site\n' \
    "$T" "$PGHOST" "$PGPORT" > "$T/D/listgate.conf"

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), catchup
lg() { h=$1; shift; "$LISTGATE" --allow-root --config "$T/$h" "$@"; }
run() { "$@" > "$T/out" 2> "$T/err"; rc=$?; }
spos() {
	lg "$1" score --list site --db-stats | sed -n 's/^journal_pos //p'
}
said_not_replica() {
	grep -q "${1:-}sync_database in $T/C/listgate.conf does not replicate database there: it is another database of the primary's cluster" "$T/err"
}

sh "$PG_SH" standby-create || exit 99
psql -X -q -c "CREATE DATABASE other" || exit 99
lg A migrate -q && lg D migrate -q || exit 99
lg D train -q --list dev --spam "$DATA/spam1.eml" && lg D sync -q || exit 99
lg A train -q --list dev --spam "$DATA"/spam[2-5].eml &&
    lg A train -q --list dev --ham "$DATA"/ham[2-5].eml && lg A sync -q ||
    exit 99
catchup || exit 99

run lg B sync
check "a host reading from a streaming standby syncs (exit 0)" test "$rc" -eq 0
check "... its site store where host A's is" test "$(spos B)" = "$(spos A)"

run lg C sync
check "a host reading from another database: sync exits 1" test "$rc" -eq 1
check "... naming sync_database, database and how they differ" said_not_replica
check "... and makes no site store from the other database's feed" \
    test ! -e "$T/tokens-C/site.kch"
check "... nor a list's token file from its journal" \
    test ! -e "$T/tokens-C/dev.kch"
run lg C sync --list dev
check "sync --list exits 1 too" test "$rc" -eq 1
check "... saying so" said_not_replica
check "... and makes no token file" test ! -e "$T/tokens-C/dev.kch"
run lg C sync --check
check "sync --check exits 1 too" test "$rc" -eq 1
check "... saying so" said_not_replica
run lg C sync --site
check "sync --site exits 1 too" test "$rc" -eq 1
check "... saying so" said_not_replica
run lg C rebuild --list site
check "rebuild of the site store exits 1" test "$rc" -eq 1
check "... with the same message" said_not_replica "site store site: "
check "... and makes no site store" test ! -e "$T/tokens-C/site.kch"

echo "1..$n"
[ "$fails" -eq 0 ]

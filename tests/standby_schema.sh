#!/bin/sh
# standby_schema.sh - a host whose sync_database is a standby that has
# not replayed the primary's migration yet is told so, not only to run
# `listgate migrate` (which migrates database, the primary, and would
# change nothing)
#
# The standby is made before the schema exists and its replay paused;
# `listgate migrate` runs on the primary; host B's sync (and rebuild)
# from the standby must exit 1 saying the standby has not replayed the
# migration yet.  Then a standby at an older version (the last
# migration's row replayed later) likewise.  Once replay resumes, B's
# sync exits 0.  Host A, on the primary alone, is unaffected.  Runs
# under tests/pg.sh with a streaming standby; files in a mktemp -d
# directory.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-stschema.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), catchup, two_hosts, pause_replay
two_hosts "$T" || exit 99
lgA() { "$LISTGATE" --allow-root --config "$T/A" "$@"; }
lgB() { "$LISTGATE" --allow-root --config "$T/B" "$@"; }
run() { "$@" > "$T/out" 2> "$T/err"; rc=$?; }
sqlp() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
sqls() { psql -X -q -A -t -v ON_ERROR_STOP=1 -p "$PG_STANDBY_PORT" -c "$1"; }
said_behind() {
	grep -q "standby .*has not replayed the primary's migration yet" "$T/err"
}

sh "$PG_SH" standby-create || exit 99
pause_replay || exit 99
lgA migrate -q || exit 99
lgA train -q --list dev --spam "$DATA/spam1.eml" || exit 99
run lgB sync
check "a standby without the schema yet: sync exits 1" test "$rc" -eq 1
check "... saying the standby has not replayed the migration" said_behind
run lgB rebuild --list dev
check "... and so does rebuild" said_behind
sqls "SELECT pg_wal_replay_resume()" > /dev/null || exit 99
catchup || exit 99
run lgB sync
check "once it has caught up, sync exits 0" test "$rc" -eq 0

# a standby one migration behind: the last migration's row comes later
v=$(sqlp "SELECT max(version) FROM schema_migrations")
nm=$(sqlp "SELECT name FROM schema_migrations WHERE version = $v")
sqlp "DELETE FROM schema_migrations WHERE version = $v" || exit 99
catchup || exit 99
pause_replay || exit 99
sqlp "INSERT INTO schema_migrations (version, name) VALUES ($v, '$nm')" ||
    exit 99
run lgA sync
check "the primary migrated: host A's sync exits 0" test "$rc" -eq 0
run lgB sync
check "a standby a migration behind: sync exits 1" test "$rc" -eq 1
check "... saying the standby has not replayed the migration" said_behind
sqls "SELECT pg_wal_replay_resume()" > /dev/null || exit 99
catchup || exit 99
run lgB sync
check "once it has caught up, sync exits 0" test "$rc" -eq 0

echo "1..$n"
[ "$fails" -eq 0 ]

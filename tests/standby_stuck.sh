#!/bin/sh
# standby_stuck.sh - a host whose sync_database is a standby that has
# stopped replaying (or is far behind) is warned on every sync: each
# sync applies what the standby has, so the host's token files went
# without the training written since, and nothing said so
#
# Host A trains on the primary; host B reads the journal from a real
# streaming standby (tests/pg.sh standby-create), whose replay is paused
# while A trains a post whose journal row is then dated an hour back (a
# standby stuck for an hour).  B's sync exits 0, applying what the
# standby has, and warns naming sync_database; once the standby has
# caught up, the warning is gone.  Runs under tests/pg.sh; files in a
# mktemp -d directory.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-ststuck.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), catchup, two_hosts, pause_replay
two_hosts "$T" || exit 99
lg() { h=$1; shift; "$LISTGATE" --allow-root --config "$T/$h" "$@"; }
run() { "$@" > "$T/out" 2> "$T/err"; rc=$?; }
sqlp() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
sqls() { psql -X -q -A -t -v ON_ERROR_STOP=1 -p "$PG_STANDBY_PORT" -c "$1"; }
pos() { lg "$1" score --list dev --db-stats | sed -n 's/^journal_pos //p'; }
warned() {
	grep -q "warning: sync_database in $T/B/listgate.conf lacks journal events the primary (database) had $1 minutes ago (it ends at event $2): its replay is stuck or far behind" "$T/err"
}

sh "$PG_SH" standby-create || exit 99
lg A migrate -q || exit 99
lg A train -q --list dev --spam "$DATA"/spam[1-3].eml &&
    lg A train -q --list dev --ham "$DATA"/ham[1-3].eml || exit 99
catchup || exit 99
run lg B sync
check "host B syncs from a standby that has caught up (exit 0)" \
    test "$rc" -eq 0
check "... without a warning" test ! -s "$T/err"
last=$(pos B)

pause_replay || exit 99
lg A train -q --list dev --spam "$DATA/spam4.eml" || exit 99
sqlp "UPDATE train_journal SET created_at = created_at - interval '1 hour' \
    WHERE id = (SELECT max(id) FROM train_journal)" || exit 99
run lg B sync
check "a sync from a standby stuck for an hour exits 0" test "$rc" -eq 0
check "... applying what it has" test "$(pos B)" = "$last"
check "... and warns that the standby lacks the primary's training" \
    warned 60 "$last"
run lg B sync --list dev
check "sync --list warns too" warned 60 "$last"

sqls "SELECT pg_wal_replay_resume()" > /dev/null || exit 99
catchup || exit 99
run lg B sync
check "once the standby has caught up, sync exits 0" test "$rc" -eq 0
check "... without a warning" test ! -s "$T/err"
check "... its token file at the journal's end" \
    test "$(pos B)" = "$(sqlp "SELECT max(id) FROM train_journal")"

echo "1..$n"
[ "$fails" -eq 0 ]

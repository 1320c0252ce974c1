#!/bin/sh
# standby_rebuild.sh - a rebuild that reads the journal from a standby
# that is behind never sets the token file back: a token file that
# learnt events the standby has not replayed yet (a train on this host)
# is left alone, with a message saying the standby is behind; --force
# rebuilds it all the same, with a warning that the primary's journal
# goes on past the file, and a sync once the standby has caught up
# brings the rest.  Before, the rebuild took the training out of the
# file without a word, and for good should the standby's replay have
# stopped: no sync said anything then.
#
# Host A trains on the primary; host B reads the journal from a real
# streaming standby (tests/pg.sh standby-create), whose replay is
# paused while B trains.  Runs under tests/pg.sh; files in a mktemp -d
# directory.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-stbuild.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), catchup, two_hosts, pause_replay
two_hosts "$T" || exit 99
lg() { h=$1; shift; "$LISTGATE" --allow-root --config "$T/$h" "$@"; }
run() { "$@" > "$T/out" 2> "$T/err"; rc=$?; }
sqls() { psql -X -q -A -t -v ON_ERROR_STOP=1 -p "$PG_STANDBY_PORT" -c "$1"; }
pos() { lg "$1" score --list dev --db-stats | sed -n 's/^journal_pos //p'; }
dump() {
	{
		lg "$1" score --list dev --db-dump | LC_ALL=C sort
		lg "$1" score --list dev --db-stats
	}
}

sh "$PG_SH" standby-create || exit 99
lg A migrate -q || exit 99
lg A train -q --list dev --spam "$DATA"/spam[1-3].eml &&
    lg A train -q --list dev --ham "$DATA"/ham[1-3].eml || exit 99
catchup || exit 99
lg B sync -q --list dev || exit 99
before=$(pos B)

pause_replay || exit 99
run lg B train --list dev --spam "$DATA/spam4.eml"
check "host B trains while the standby's replay is paused" test "$rc" -eq 0
p=$(pos B)
check "... its token file learns the event at once" test "$p" -gt "$before"
dump B > "$T/trained"
run lg B rebuild --list dev
check "rebuild from the standby that has not replayed it exits 1" \
    test "$rc" -eq 1
check "... saying the standby has not replayed the file's event" \
    grep -q "list dev: .*dev.kch: the token file is at journal position $p, an event the primary (database) has but the standby (sync_database) has not replayed yet: the journal there ends at $before" "$T/err"
dump B > "$T/after"
check "... and leaves the token file as it was" cmp -s "$T/trained" "$T/after"
run lg B rebuild --list dev --force
check "rebuild --force rebuilds all the same (exit 0)" test "$rc" -eq 0
check "... from what the standby has" test "$(pos B)" = "$before"
check "... warning that the primary's journal goes on past it" \
    grep -q "warning: list dev: the standby (sync_database in $T/B/listgate.conf) is behind the primary: the rebuilt token file ends at journal position $before, the primary's journal goes on to $p" "$T/err"

sqls "SELECT pg_wal_replay_resume()" > /dev/null || exit 99
catchup || exit 99
run lg B sync --list dev
check "once the standby has caught up, sync brings the rest" \
    test "$rc" -eq 0 -a "$(pos B)" = "$p"
run lg B rebuild --list dev
check "a rebuild then exits 0" test "$rc" -eq 0
check "... without a warning" test ! -s "$T/err"
dump B > "$T/rebuilt"
check "... to the file the training made" cmp -s "$T/trained" "$T/rebuilt"

echo "1..$n"
[ "$fails" -eq 0 ]

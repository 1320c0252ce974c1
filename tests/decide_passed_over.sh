#!/bin/sh
# decide_passed_over.sh - a decision waiting for its list's journal lock
# is not passed over for good by `train` runs following one another
#
# A decision tries for its locks in short transactions (it holds no
# server connection of a pooler while it waits).  A `train` waited for
# the journal lock inside its statement, in the lock's queue, and got
# it the moment its holder let go: while trains followed one another
# (two cron jobs, a spam folder trained by each moderator), a try never
# found the lock free, and the decision waited for all of them.  A run
# now tries for the lock as a decision does.  Here a train holds the
# lock (reading its post from a pipe); a second one must wait without
# queueing for it; then two loops of trains run for 18 s, each train
# holding the lock 0.4 s, and a decision begun meanwhile must end well
# before the loops do.  The conninfo's statement_timeout and
# lock_timeout (set for the hold path) cut none of these waits.  Never
# reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-passed.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
mkdir -p "$CONF/lists" || exit 99
printf 'tokens_dir = %s/tokens\ndatabase = "options='"'"'-c lock_timeout=200 -c statement_timeout=300'"'"'"\n' \
    "$T" > "$CONF/listgate.conf"
printf 'deliver = /bin/true\n' > "$CONF/lists/dev.conf"

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
lgt() { timeout 60 "$LISTGATE" --allow-root --config "$CONF" "$@"; }
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# count dev's journal locks held (t) or waited for (f)
jlocks() {
	sql "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND
	    classid = 19527 AND objid = hashtext('dev')::oid AND objsubid = 2
	    AND granted = '$1'"
}
# a train holding the journal lock for about $1 s: its post comes late
slowtrain() {
	{ sleep "$1"; cat "$DATA/spam1.eml"; } |
	    lgt train -q --list dev --spam - > /dev/null 2>&1
}

lgt migrate -q || exit 99
lgt train -q --list dev --spam "$DATA"/spam[0-9].eml || exit 99
lgt train -q --list dev --ham "$DATA"/ham[0-9].eml || exit 99
lgt filter --list dev --mta qmail < "$DATA/spam2.eml" > /dev/null 2>&1
[ $? -eq 99 ] || exit 99
id=$(sql "SELECT id FROM held_posts WHERE list = 'dev'")
[ -n "$id" ] || exit 99

slowtrain 2 &
t1=$!
i=0
while [ "$(jlocks t)" -eq 0 ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
slowtrain 0 &
t2=$!
sleep 1
check "a train behind another does not wait in the lock's queue ($(jlocks f) waiting)" \
    test "$(jlocks f)" -eq 0
wait "$t1"
r1=$?
wait "$t2"
r2=$?
check "... and ends well once the other is done ($r1 $r2)" \
    test "$r1" -eq 0 -a "$r2" -eq 0

end=$(( $(date +%s) + 18 ))
loop() {
	while [ "$(date +%s)" -lt "$end" ]; do
		slowtrain 0.4
	done
}
loop &
l1=$!
loop &
l2=$!
sleep 1
t0=$(now_ms)
lgt reject "$id" > "$T/rj.out" 2>&1
r=$?
took=$(( $(now_ms) - t0 ))
wait "$l1" "$l2"
check "a decision while trains follow one another ends well ($r: $(head -n 1 "$T/rj.out"))" \
    test "$r" -eq 0
check "... well before they stop (in $took ms)" test "$took" -lt 12000
check "... journaled once" test "$(sql "SELECT count(*) FROM train_journal
    WHERE post_id = $id")" -eq 1
check "... no advisory lock left" test "$(sql "SELECT count(*) FROM pg_locks
    WHERE locktype = 'advisory'")" -eq 0

echo "1..$n"
[ "$fails" -eq 0 ]

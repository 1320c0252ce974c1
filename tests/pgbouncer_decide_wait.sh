#!/bin/sh
# pgbouncer_decide_wait.sh - decisions waiting for a list's journal lock
# hold no server connection of a transaction-mode pgbouncer, so the
# filter's hold path still gets one
#
# A training run holds the list's journal lock for as long as it
# journals its posts (seconds for a large one), and every decision on
# one of the list's posts (approve, reject, discard, expire, a reply by
# mail, the web page) waits for that lock.  Through pgbouncer in
# transaction mode, a decision that waited inside its transaction kept
# a server connection of the pool the whole time: two moderators
# deciding while a train ran took both of the test pool's connections,
# and a post arriving then could not be held until the train ended (its
# filter waited in pgbouncer's queue, and past its watchdog the MTA got
# a temporary failure).  Here a session holds the journal lock on the
# server for 8 s; two decisions go through pgbouncer (pool of two) and
# wait; a post held by the filter meanwhile must take well under the
# lock's time, and the decisions must end well once the lock is free.
# Never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run --pgbouncer sh "$0" "$@"
fi
: "${PGBOUNCER_PORT:?run by tests/pg.sh run --pgbouncer}"
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-bdecide.XXXXXX") || exit 99
hpid=
trap '[ -n "$hpid" ] && kill "$hpid" 2>/dev/null; rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
mkdir -p "$CONF/lists" || exit 99
printf 'tokens_dir = %s/tokens\ndatabase = host=%s port=%s dbname=%s\n' \
    "$T" "$PGHOST" "$PGBOUNCER_PORT" "$PGDATABASE" > "$CONF/listgate.conf"
printf '#!/bin/sh\ncat >> %s/released\n' "$T" > "$T/release.sh"
printf 'deliver = /bin/true\nrelease = /bin/sh %s/release.sh\n' "$T" \
    > "$CONF/lists/dev.conf"

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
lgt() { timeout 60 "$LISTGATE" --allow-root --config "$CONF" "$@"; }
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
nlocks() { sql "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

lgt migrate -q || exit 99
lgt train -q --list dev --spam "$DATA"/spam[0-9].eml || exit 99
lgt train -q --list dev --ham "$DATA"/ham[0-9].eml || exit 99
for f in spam2 spam3 spam4; do
	lgt filter --list dev --mta qmail < "$DATA/$f.eml" > /dev/null 2>&1
	[ $? -eq 99 ] || exit 99
done
set -- $(sql "SELECT id FROM held_posts WHERE list = 'dev' ORDER BY id")
[ $# -eq 3 ] || exit 99
rj=$1 ds=$2 ap=$3

# both server connections of the pool made, so that the decisions below
# can take both
psql -X -q -p "$PGBOUNCER_PORT" -c 'SELECT pg_sleep(0.3)' > /dev/null 2>&1 &
psql -X -q -p "$PGBOUNCER_PORT" -c 'SELECT pg_sleep(0.3)' > /dev/null 2>&1
wait

# the journal lock of dev, held on the server itself (not through the
# pool) for 8 s, as a long train would
PGAPPNAME=holder psql -X -q -c "BEGIN; SELECT pg_advisory_xact_lock(19527,
    hashtext('dev')); SELECT pg_sleep(8); COMMIT" > /dev/null 2>&1 &
hpid=$!
i=0
while [ "$(sql "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a
    ON a.pid = l.pid WHERE l.granted AND a.application_name = 'holder' AND
    l.locktype = 'advisory'")" -eq 0 ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
t0=$(now_ms)

lgt reject "$rj" > "$T/rj.out" 2>&1 &
p1=$!
lgt discard "$ds" > "$T/ds.out" 2>&1 &
p2=$!
sleep 1
lgt filter --list dev --mta qmail < "$DATA/spam-test.eml" > "$T/f.out" 2>&1
frc=$?
t1=$(now_ms)
new=$(sql "SELECT count(*) FROM held_posts WHERE list = 'dev' AND id > $ap AND status = 'held'")
check "a post comes while two decisions wait for the journal lock: held (exit 99; $frc: $(head -n 1 "$T/f.out"))" \
    test "$frc" -eq 99
check "... in well under the lock's 8 s (took $((t1 - t0 - 1000)) ms after the decisions began waiting)" \
    test $((t1 - t0)) -lt 5000
check "... while the lock was still held" kill -0 "$hpid"
check "... and the decisions still wait ($(sql "SELECT status FROM held_posts WHERE id = $rj") $(sql "SELECT status FROM held_posts WHERE id = $ds"))" \
    test "$(sql "SELECT count(*) FROM held_posts WHERE id IN ($rj, $ds) AND status = 'held'")" -eq 2
check "... the new post is in the queue" test "$new" -eq 1

# an approval waits as well, and releases the post once it has the lock
lgt approve "$ap" > "$T/ap.out" 2>&1 &
p3=$!
wait "$hpid"
hpid=
wait "$p1"; r1=$?
wait "$p2"; r2=$?
wait "$p3"; r3=$?
check "once the lock is free the reject ends well ($r1: $(head -n 1 "$T/rj.out"))" test "$r1" -eq 0
check "... the discard too ($r2: $(head -n 1 "$T/ds.out"))" test "$r2" -eq 0
check "... and the approval ($r3: $(head -n 1 "$T/ap.out"))" test "$r3" -eq 0
check "... each decided as asked" test \
    "$(sql "SELECT status FROM held_posts WHERE id = $rj")/$(sql "SELECT status FROM held_posts WHERE id = $ds")" = "rejected/discarded"
check "... each journaled once" test "$(sql "SELECT count(*) FROM train_journal
    WHERE post_id IN ($rj, $ds, $ap)")" -eq 3
check "... the approved post released" test -s "$T/released"
check "... no advisory lock left" test "$(nlocks)" -eq 0

echo "1..$n"
[ "$fails" -eq 0 ]

#!/bin/sh
# web_approve_wait.sh - an approval on `listgate web` that waits for its
# post's lock after the post's 'releasing' mark, against a private
# PostgreSQL (tests/pg.sh)
#
# An approval commits the post's 'releasing' mark, then takes the post's
# lock again on a second connection before it runs the release; a
# training run of the list (or another session) holding the lock then
# makes it wait.  Web's approvals waited without end: the request hung
# as long as the lock was held (a train's whole run), the post
# 'releasing' meanwhile, and a server stopped then waited too, past its
# own wait for the requests, or was killed by its supervisor with the
# post left 'releasing', nothing released.  As in approve_stop.sh, the
# mark's commit is slowed (a deferred trigger sleeps 3 s in it) and a
# session queues for the post's lock meanwhile (hold_post_lock), which
# it gets as the mark commits.  Checks:
#   - the wait ends at the list's timeout: the request is answered 502
#     saying the release was not run, the post held again, not
#     released, nothing learnt;
#   - a SIGTERM to the server during the wait ends it at once: the
#     request is answered, the server exits 0 well before the lock
#     comes free, the post held again and not released;
#   - so do both for a decision waiting for its list's journal lock
#     before anything of the post changes (a train running): 503,
#     nothing decided, a bulk form answered after one wait, not one
#     per post; at a stop, nothing decided after the stop;
#   - the database lost during the wait after the mark: the answer says
#     the post was not released and stays 'releasing', and what to run.
# Never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if ! command -v curl >/dev/null 2>&1; then
	echo "web_approve_wait: curl is not installed; skipping" >&2
	exit 77
fi
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
QHOLD=$top_builddir/tests/qhold
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-webwait.XXXXXX") || exit 99
trap 'kill "$webpid" 2>/dev/null; sleep 0.5; rm -rf "$T"' EXIT INT TERM
webpid=
. "$top_srcdir/tests/lib.sh"	# check, pg_activity, hold_post_lock
. "$top_srcdir/tests/web_lib.sh"

web_setup || { echo "Bail out! setup failed"; exit 99; }
status() { sql "SELECT status FROM held_posts WHERE id = $1"; }
learnt() { sql "SELECT count(*) FROM train_journal WHERE post_id = $1 AND op = 'learn'"; }
# end the session holding the post's lock, and wait for it
unhold() {
	sql "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(%'" > /dev/null
	wait "$holder"
}
sql 'CREATE FUNCTION lg_test_slow_mark() RETURNS trigger LANGUAGE plpgsql
    AS $$BEGIN PERFORM pg_sleep(3); RETURN NULL; END$$' || exit 99
sql "CREATE CONSTRAINT TRIGGER slow_mark AFTER UPDATE ON held_posts
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.status =
    'releasing') EXECUTE FUNCTION lg_test_slow_mark()" || exit 99

# --- the list's timeout ends the wait -------------------------------------
printf 'release = /bin/sh %s/release.sh {list}\ntimeout = 5\n' "$T" \
    > "$CONF/lists/dev.conf"
web_start || exit 99
a=$("$QHOLD" dev "$DATA/ham1.eml" 0.9) || exit 99
t0=$(date +%s)
curl -s -o "$T/a.body" -w '%{http_code}' --max-time 25 \
    -u alice:alice-secret-1 -d action=approve "$URL/api/lists/dev/held/$a" \
    > "$T/a.code" 2>&1 &
cpid=$!
if pg_activity 1 "query = 'COMMIT' AND wait_event = 'PgSleep'"; then
	hold_post_lock "$a" 40 || bad "the lock's session never waited"
	wait "$cpid"
	t1=$(date +%s)
	st=$(status "$a")
	unhold
	check "an approval waiting for its post's lock after the mark ends at the list's timeout ($((t1 - t0)) s)" \
	    test $((t1 - t0)) -lt 15
	check "... answered 502 ($(cat "$T/a.code"))" \
	    test "$(cat "$T/a.code")" = 502
	check "... saying the release was not run" \
	    grep -q 'release command not run: timed out waiting' "$T/a.body"
	check "... the post held again (was $st)" test "$st" = held
	check "... not released" test ! -e "$T/released.dev"
	check "... nothing learnt" test "$(learnt "$a")" -eq 0
else
	bad "the mark's commit never began"
	wait "$cpid"
fi
web_stop
rm -f "$T/released.dev"

# --- a stop ends the wait -----------------------------------------------------
printf 'release = /bin/sh %s/release.sh {list}\ntimeout = 60\n' "$T" \
    > "$CONF/lists/dev.conf"
web_start || exit 99
b=$("$QHOLD" dev "$DATA/ham2.eml" 0.9) || exit 99
curl -s -o "$T/b.body" -w '%{http_code}' --max-time 40 \
    -u alice:alice-secret-1 -d action=approve "$URL/api/lists/dev/held/$b" \
    > "$T/b.code" 2>&1 &
cpid=$!
if pg_activity 1 "query = 'COMMIT' AND wait_event = 'PgSleep'"; then
	hold_post_lock "$b" 20 || bad "the lock's session never waited"
	t0=$(date +%s)
	web_stop
	t1=$(date +%s)
	st=$(status "$b")
	wait "$cpid"
	unhold
	check "SIGTERM while an approval waits for its post's lock after the mark: web exits 0 ($webrc)" \
	    test "$webrc" -eq 0
	check "... at once, not once the lock comes free ($((t1 - t0)) s)" \
	    test $((t1 - t0)) -lt 10
	check "... the post held again (was $st)" test "$st" = held
	check "... not released" test ! -e "$T/released.dev"
	check "... nothing learnt" test "$(learnt "$b")" -eq 0
	check "... and the request is answered, 502 ($(cat "$T/b.code"))" \
	    test "$(cat "$T/b.code")" = 502
	check "... saying the release was not run" \
	    grep -q 'release command not run: stopped' "$T/b.body"
else
	bad "the mark's commit never began"
	wait "$cpid"
	web_stop
fi
sql "DROP TRIGGER slow_mark ON held_posts" || exit 99

# --- the wait before anything changes -----------------------------------------
# a training run of list dev holds its journal lock (QUEUE_LOCK_JOURNAL,
# 0x4c47) for 40 s: a decision waits for it before it touches the post
journal_lock() {
	PGOPTIONS="-c client_min_messages=warning" psql -X -q -A -t \
	    -c "SELECT pg_advisory_lock(19527, hashtext('dev'))" \
	    -c "SELECT pg_sleep($1)" > /dev/null 2>&1 &
	holder=$!
	pg_activity 1 "query LIKE 'SELECT pg_sleep(%'"
}
printf 'release = /bin/sh %s/release.sh {list}\ntimeout = 3\n' "$T" \
    > "$CONF/lists/dev.conf"
web_start || exit 99
c=$("$QHOLD" dev "$DATA/ham3.eml" 0.9) || exit 99
pd=$("$QHOLD" dev "$DATA/ham4.eml" 0.9) || exit 99
pe=$("$QHOLD" dev "$DATA/spam1.eml" 0.9) || exit 99
journal_lock 40 || bad "the journal lock was never taken"
t0=$(date +%s)
req POST "/api/lists/dev/held/$c" --max-time 25 -u alice:alice-secret-1 \
    -d action=reject
t1=$(date +%s)
check "a decision waiting for its list's journal lock ends at the list's timeout ($((t1 - t0)) s)" \
    test $((t1 - t0)) -lt 10
check "... answered 503 ($code)" test "$code" = 503
check "... saying nothing was decided" \
    grep -q "post $c: nothing was decided: its lock stayed held" "$T/body"
check "... the post still held ($(status "$c"))" test "$(status "$c")" = held
# a bulk form waits once, not once per post
J=$T/jar
req POST /login -c "$J" -d "user=alice&password=alice-secret-1"
req GET /lists/dev -b "$J"
csrf=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$T/body" | head -n 1)
t0=$(date +%s)
req POST /lists/dev/bulk --max-time 25 -b "$J" \
    -d "csrf=$csrf&action=approve&id=$c&id=$pd&id=$pe"
t1=$(date +%s)
req GET /lists/dev -b "$J"
check "a bulk form behind the journal lock is answered after one timeout ($((t1 - t0)) s)" \
    test $((t1 - t0)) -lt 10
check "... saying none was decided: the list was busy" \
    grep -q '0 posts approved; 3 not decided: the list was busy' "$T/body"
check "... all three still held" test "$(status "$c")$(status "$pd")$(status "$pe")" = heldheldheld
web_stop
unhold

# a stop ends the wait at once: the post is not decided after the stop
printf 'release = /bin/sh %s/release.sh {list}\ntimeout = 60\n' "$T" \
    > "$CONF/lists/dev.conf"
web_start || exit 99
journal_lock 20 || bad "the journal lock was never taken"
curl -s -o "$T/c.body" -w '%{http_code}' --max-time 40 \
    -u alice:alice-secret-1 -d action=reject "$URL/api/lists/dev/held/$c" \
    > "$T/c.code" 2>&1 &
cpid=$!
sleep 1
t0=$(date +%s)
web_stop
t1=$(date +%s)
st=$(status "$c")
wait "$cpid"
unhold
check "SIGTERM while a decision waits for its list's journal lock: web exits 0 ($webrc)" \
    test "$webrc" -eq 0
check "... at once, not once the lock comes free ($((t1 - t0)) s)" \
    test $((t1 - t0)) -lt 10
check "... the post still held, not decided after the stop ($st, then $(status "$c"))" \
    test "$st" = held -a "$(status "$c")" = held
check "... and the request is answered, 503 ($(cat "$T/c.code"))" \
    test "$(cat "$T/c.code")" = 503
check "... saying the server is stopping" \
    grep -q 'nothing was decided: the server is stopping' "$T/c.body"

# --- the database lost during the wait after the mark -----------------------------
# the approval's lock connection is gone, and the database does not come
# back while it tries again (10 s): the post stays 'releasing', nothing
# released, and the answer says so and what to run (it said "database
# error")
printf 'release = /bin/sh %s/release.sh {list}\ntimeout = 60\n' "$T" \
    > "$CONF/lists/dev.conf"
sql "CREATE CONSTRAINT TRIGGER slow_mark AFTER UPDATE ON held_posts
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.status =
    'releasing') EXECUTE FUNCTION lg_test_slow_mark()" || exit 99
web_start || exit 99
f=$("$QHOLD" dev "$DATA/spam2.eml" 0.9) || exit 99
rm -f "$T/released.dev"
curl -s -o "$T/f.body" -w '%{http_code}' --max-time 60 \
    -u alice:alice-secret-1 -d action=approve "$URL/api/lists/dev/held/$f" \
    > "$T/f.code" 2>&1 &
cpid=$!
if pg_activity 1 "query = 'COMMIT' AND wait_event = 'PgSleep'"; then
	hold_post_lock "$f" 40 || bad "the lock's session never waited"
	sh "$PG_SH" stop > /dev/null 2>&1
	wait "$cpid"
	sh "$PG_SH" start > /dev/null 2>&1 ||
	    { echo "Bail out! PostgreSQL did not start again"; exit 99; }
	wait "$holder"
	check "the database lost while an approval waits for its post's lock after the mark: 500 ($(cat "$T/f.code"))" \
	    test "$(cat "$T/f.code")" = 500
	check "... the answer says the post was not released, stays 'releasing', and what to run" \
	    grep -q "post $f was not released: .*stays so.*approve --force $f" "$T/f.body"
	check "... as it is: 'releasing' ($(status "$f")), not released" \
	    test "$(status "$f")" = releasing -a ! -e "$T/released.dev"
else
	bad "the mark's commit never began"
	wait "$cpid"
fi
sql "DROP TRIGGER slow_mark ON held_posts" || exit 99
web_stop
webpid=
echo "1..$n"
[ "$fails" -eq 0 ]

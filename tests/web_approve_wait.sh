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
#     comes free, the post held again and not released.
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
webpid=
sql "DROP TRIGGER slow_mark ON held_posts" || exit 99
echo "1..$n"
[ "$fails" -eq 0 ]

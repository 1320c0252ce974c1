#!/bin/sh
# approve_stop.sh - SIGTERM and SIGHUP during a bulk `approve`, against
# a private PostgreSQL (tests/pg.sh)
#
# approve of two posts is stopped while the first post's release
# command runs (a moderator's ssh session closing, a service stopped).
# Checks:
#   - the release in progress runs to its end and its outcome is
#     recorded: the post is approved, learnt once, released once, never
#     left 'releasing' with its release going on unrecorded;
#   - the posts after it are left held, each named as not decided, and
#     approve exits 1;
#   - a second signal ends the run at once (the post then stays
#     'releasing', the documented recovery applies);
#   - a signal after the post's mark commits and before its release
#     starts (the approval taking the post's lock again on its second
#     connection) holds the post again, its release never run, where it
#     ended the run and left the post 'releasing' with nothing released.
#   - so does moderate's watchdog then (an approval by mail waiting for
#     the post's lock after the mark past its deadline): the reply is
#     deferred, the post held, where the watchdog left it 'releasing'.
#   - and a SIGTERM to moderate then: the reply is deferred, the post
#     held, where the release ran afterwards all the same.
# The release command waits for the test's go, so nothing here hangs on
# timing.  Never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
QHOLD=$top_builddir/tests/qhold
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-apstop.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
mkdir -p "$CONF/lists" "$T/out" || exit 99

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), pg_activity, hold_post_lock
sql() { PGOPTIONS="-c client_min_messages=warning" psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }

printf 'tokens_dir = %s/tokens\n' "$T" > "$CONF/listgate.conf"
# the release: says it started, waits for the go (at most 30 s), then
# delivers the post to $T/out
cat > "$T/release.sh" <<EOS
#!/bin/sh
touch "$T/started"
i=0
while [ ! -e "$T/go" ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done
cat > "$T/out/\$\$.tmp" && mv "$T/out/\$\$.tmp" "$T/out/\$\$.eml"
EOS
printf 'release = /bin/sh %s/release.sh\ntimeout = 60\n' "$T" \
    > "$CONF/lists/dev.conf"
"$LISTGATE" --allow-root --config "$CONF" migrate -q || exit 99

# wait (at most 30 s) for the release to start
started() {
	i=0
	while [ ! -e "$T/started" ] && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	test -e "$T/started"
}
status() { sql "SELECT status FROM held_posts WHERE id = $1"; }
learnt() { sql "SELECT count(*) FROM train_journal WHERE post_id = $1 AND op = 'learn'"; }

for sig in TERM HUP; do
	sql "TRUNCATE held_posts, train_journal, decided_posts CASCADE" || exit 99
	rm -f "$T/started" "$T/go" "$T"/out/*
	a=$("$QHOLD" dev "$DATA/spam1.eml" 0.98) || exit 99
	b=$("$QHOLD" dev "$DATA/ham1.eml" 0.98) || exit 99
	"$LISTGATE" --allow-root --config "$CONF" approve --by alice "$a" \
	    "$b" > "$T/stdout" 2> "$T/stderr" &
	p=$!
	started || { bad "SIG$sig: the release never started"; continue; }
	kill -"$sig" "$p"
	sleep 0.3
	touch "$T/go"
	wait "$p"
	rc=$?
	check "SIG$sig during a release: approve exits 1 (not killed: $rc)" \
	    test "$rc" -eq 1
	check "SIG$sig: the post being released is recorded approved (is $(status "$a"))" \
	    test "$(status "$a")" = approved
	check "SIG$sig: ... learnt once as ham" test "$(learnt "$a")" -eq 1
	check "SIG$sig: ... and released once" \
	    test "$(ls "$T/out" | grep -c '\.eml$')" -eq 1
	check "SIG$sig: the post after it stays held" \
	    test "$(status "$b")" = held
	check "SIG$sig: ... and is named as not decided" \
	    grep -q "post $b: not decided: stopped by signal" "$T/stderr"
done

# a second signal ends the run at once: the documented 'releasing'
sql "TRUNCATE held_posts, train_journal, decided_posts CASCADE" || exit 99
rm -f "$T/started" "$T/go" "$T"/out/*
a=$("$QHOLD" dev "$DATA/spam1.eml" 0.98) || exit 99
"$LISTGATE" --allow-root --config "$CONF" approve "$a" > "$T/stdout" \
    2> "$T/stderr" &
p=$!
if started; then
	kill -TERM "$p"
	sleep 0.3
	kill -TERM "$p"
	wait "$p"
	rc=$?
	touch "$T/go"
	check "a second SIGTERM ends approve at once (status $rc)" \
	    test "$rc" -eq 143
	check "... leaving the post 'releasing' (is $(status "$a"))" \
	    test "$(status "$a")" = releasing
else
	bad "the release never started"
fi
sleep 0.5	# the orphaned release finishes before the directory goes

# a stop between the mark and the release.  The mark's commit is slowed
# (a deferred trigger sleeps 3 s in it) and a session queues meanwhile
# for the post's decision lock: it gets the lock as the mark commits and
# keeps it 20 s, while the approval waits to take it again on its second
# connection; the test sends SIGTERM then.
sql "TRUNCATE held_posts, train_journal, decided_posts CASCADE" || exit 99
rm -f "$T/started" "$T/go" "$T"/out/*
touch "$T/go"
sql 'CREATE FUNCTION lg_test_slow_mark() RETURNS trigger LANGUAGE plpgsql
    AS $$BEGIN PERFORM pg_sleep(3); RETURN NULL; END$$' || exit 99
sql "CREATE CONSTRAINT TRIGGER slow_mark AFTER UPDATE ON held_posts
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.status =
    'releasing') EXECUTE FUNCTION lg_test_slow_mark()" || exit 99
a=$("$QHOLD" dev "$DATA/spam1.eml" 0.98) || exit 99
b=$("$QHOLD" dev "$DATA/ham1.eml" 0.98) || exit 99
"$LISTGATE" --allow-root --config "$CONF" approve "$a" "$b" \
    > "$T/stdout" 2> "$T/stderr" &
p=$!
if pg_activity 1 "query = 'COMMIT' AND wait_event = 'PgSleep'"; then
	hold_post_lock "$a" 20 ||
	    bad "the lock's session never waited"
	t0=$(date +%s)
	kill -TERM "$p"
	wait "$p"
	rc=$?
	t1=$(date +%s)
	sql "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(20)'" > /dev/null
	wait "$holder"
	check "SIGTERM between the mark and the release: approve exits 1 (not killed: $rc)" \
	    test "$rc" -eq 1
	check "... at once, not once the lock comes free ($((t1 - t0)) s)" \
	    test $((t1 - t0)) -lt 10
	check "... the post is held again (is $(status "$a"))" \
	    test "$(status "$a")" = held
	check "... its release never ran" test ! -e "$T/started"
	check "... nothing is learnt" test "$(learnt "$a")" -eq 0
	check "... and approve says why" grep -q "post $a (list dev): release command not run: stopped" "$T/stderr"
	check "... the post after it stays held" test "$(status "$b")" = held
	check "... and is named as not decided" \
	    grep -q "post $b: not decided: stopped by signal" "$T/stderr"
else
	bad "the mark's commit never began"
	kill -TERM "$p"
	wait "$p"
fi
sql "DROP TRIGGER slow_mark ON held_posts" || exit 99

# a moderator's approval by mail whose watchdog comes while it waits for
# the post's lock after the mark (as above, the lock held past it)
MAILTEXT=$top_builddir/tests/mailtext
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
mkdir -p "$T/mail" || exit 99
# the watchdog of moderate: 6 s
printf 'tokens_dir = %s/tokens\nsecret_file = %s/secret\ntimeout = 6\n' \
    "$T" "$T" > "$CONF/listgate.conf"
lg init > /dev/null 2>&1 || exit 99
printf '#!/bin/sh\ncat > "%s/mail/$2.$1"\n' "$T" > "$T/notify.sh"
{
	printf 'moderators = alice@example.org\n'
	printf 'moderation_address = dev-moderate@lists.example.org\n'
	printf 'notify = /bin/sh %s/notify.sh {moderator} {id}\n' "$T"
} >> "$CONF/lists/dev.conf"
rm -f "$T/started" "$T"/out/*
touch "$T/go"
m=$("$QHOLD" dev "$DATA/ham2.eml" 0.98) || exit 99
lg notify --remind "$m" > /dev/null 2>&1 || exit 99
addr=$("$MAILTEXT" "$T/mail/$m.alice@example.org" |
    sed -n 's/^  approve: *mailto:\(.*\)$/\1/p' | head -n 1)
test -n "$addr" || exit 99
sql "CREATE CONSTRAINT TRIGGER slow_mark AFTER UPDATE ON held_posts
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.status =
    'releasing') EXECUTE FUNCTION lg_test_slow_mark()" || exit 99
printf 'From: Alice <alice@example.org>\nTo: x\nSubject: Re: held\nMessage-ID: <r.%s@example.org>\n\nok\n' "$$" |
    lg moderate --mta postfix -f alice@example.org -- "$addr" \
    > "$T/mod.out" 2>&1 &
p=$!
if pg_activity 1 "query = 'COMMIT' AND wait_event = 'PgSleep'"; then
	PGOPTIONS="-c client_min_messages=warning" psql -X -q -A -t \
	    -c "SELECT pg_advisory_lock(19536, $m)" \
	    -c "SELECT pg_sleep(10)" > /dev/null 2>&1 &
	holder=$!
	wait "$p"
	rc=$?
	check "the watchdog while an approval by mail waits for its post's lock after the mark: the reply is deferred ($rc)" \
	    test "$rc" -eq 75
	check "... the post is held again (is $(status "$m"))" \
	    test "$(status "$m")" = held
	check "... its release never ran" test ! -e "$T/started"
	wait "$holder"
else
	bad "the mark's commit never began"
	kill -TERM "$p"
	wait "$p"
fi
sql "DROP TRIGGER slow_mark ON held_posts" || exit 99

# a SIGTERM to moderate while its approval waits for the post's lock
# after the mark (the lock held 3 s past the mark): the release is not
# started afterwards, the reply ends as a failed release does
printf 'tokens_dir = %s/tokens\nsecret_file = %s/secret\ntimeout = 30\n' \
    "$T" "$T" > "$CONF/listgate.conf"
rm -f "$T/started" "$T"/out/*
m=$("$QHOLD" dev "$DATA/ham3.eml" 0.98) || exit 99
lg notify --remind "$m" > /dev/null 2>&1 || exit 99
addr=$("$MAILTEXT" "$T/mail/$m.alice@example.org" |
    sed -n 's/^  approve: *mailto:\(.*\)$/\1/p' | head -n 1)
test -n "$addr" || exit 99
sql "CREATE CONSTRAINT TRIGGER slow_mark AFTER UPDATE ON held_posts
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.status =
    'releasing') EXECUTE FUNCTION lg_test_slow_mark()" || exit 99
printf 'From: Alice <alice@example.org>\nTo: x\nSubject: Re: held\nMessage-ID: <r2.%s@example.org>\n\nok\n' "$$" \
    > "$T/reply" || exit 99
# (not through lg or a pipe: the signal is for listgate itself)
"$LISTGATE" --allow-root --config "$CONF" moderate --mta postfix \
    -f alice@example.org -- "$addr" < "$T/reply" > "$T/mod.out" 2>&1 &
p=$!
if pg_activity 1 "query = 'COMMIT' AND wait_event = 'PgSleep'"; then
	hold_post_lock "$m" 3 ||
	    bad "the lock's session never waited"
	kill -TERM "$p"
	wait "$p"
	rc=$?
	wait "$holder"
	check "SIGTERM to moderate while its approval waits for the post's lock after the mark: the reply is deferred ($rc)" \
	    test "$rc" -eq 75
	check "... the post is held again (is $(status "$m"))" \
	    test "$(status "$m")" = held
	check "... its release never ran" test ! -e "$T/started"
else
	bad "the mark's commit never began"
	kill -TERM "$p"
	wait "$p"
fi
sql "DROP TRIGGER slow_mark ON held_posts" || exit 99

echo "1..$n"
[ "$fails" -eq 0 ]

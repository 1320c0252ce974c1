#!/bin/sh
# approve_restart.sh - PostgreSQL restarted while an approval's release
# command runs, against a private PostgreSQL (tests/pg.sh)
#
# The approval marks the post 'releasing', runs the release (3 s here),
# and records the outcome on the connection that holds the post's lock;
# the restart ends that connection meanwhile.  Checks:
#   - a release that delivered: the post is recorded approved and learnt
#     once once the server is back, not left 'releasing' (which says
#     "it may be on the list already" and waits for a person);
#   - a release that failed: the post is held again, not left
#     'releasing' though it never reached the list.
#   - an approval of two posts, the restart during the first one's
#     release: both are approved and released once, the token file is
#     synced afterwards, and approve exits 0 (its own connection, gone
#     with the restart, failed the second post and the sync: exit 1
#     with the server back);
#   - a restart while the approval waits to take the post's lock again
#     after its mark (before the release): the approval opens its
#     connection again and releases, not leaving the post 'releasing'
#     with nothing released.
#   - a crash of the server (pg_ctl stop -m immediate) during the
#     release, the server running with synchronous_commit off (as
#     tests/pg.sh starts it, unless PG_TEST_FSYNC=on) and its WAL
#     writer slowed: the mark 'releasing' reached the disk before the
#     release ran, and the post is recorded approved once the server is
#     back (the mark was lost with the crash, and the released post
#     was held again for a second release).
# Never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	# an asynchronous commit not flushed by the time of the crash
	PG_TEST_OPTS="${PG_TEST_OPTS:-} -c wal_writer_delay=10000"
	export PG_TEST_OPTS
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
QHOLD=$top_builddir/tests/qhold
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-aprestart.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
mkdir -p "$CONF/lists" "$T/out" || exit 99

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), pg_activity, hold_post_lock
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }

printf 'tokens_dir = %s/tokens\n' "$T" > "$CONF/listgate.conf"
# says it started, takes 3 s, then fails while $T/fail exists, else
# delivers the post to $T/out
cat > "$T/release.sh" <<EOS
#!/bin/sh
touch "$T/started"
sleep 3
test ! -e "$T/fail" || exit 1
cat > "$T/out/\$\$.tmp" && mv "$T/out/\$\$.tmp" "$T/out/\$\$.eml"
EOS
printf 'release = /bin/sh %s/release.sh\ntimeout = 60\n' "$T" \
    > "$CONF/lists/dev.conf"
lg migrate -q || exit 99

# approve post $1 and restart the server during its release
approve_restart() {
	rm -f "$T/started"
	lg approve $1 > "$T/ap.out" 2> "$T/ap.err" &
	p=$!
	i=0
	while [ ! -e "$T/started" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	${PG_HOW_STOP:-$PG_CTL_STOP} > /dev/null 2>&1
	$PG_CTL_START > /dev/null 2>&1 || { echo "Bail out! no restart"; exit 99; }
	wait "$p"
	rc=$?
}
status() { sql "SELECT status FROM held_posts WHERE id = $1"; }
nout() { ls "$T/out" | grep -c '\.eml$'; }

a=$("$QHOLD" dev "$DATA/ham1.eml" 0.9) || exit 99
approve_restart "$a"
check "a release that delivered: the post is recorded approved (is $(status "$a"): $(head -n 1 "$T/ap.err"))" \
    test "$(status "$a")" = approved
check "... learnt once as ham" test "$(sql "SELECT count(*) FROM train_journal WHERE post_id = $a AND op = 'learn' AND class = 'ham'")" -eq 1
check "... released once" test "$(nout)" -eq 1
check "... and approve says so" grep -q "^post $a approved" "$T/ap.out"

b=$("$QHOLD" dev "$DATA/ham2.eml" 0.9) || exit 99
touch "$T/fail"
approve_restart "$b"
check "a release that failed: the post is held again (is $(status "$b"): $(head -n 1 "$T/ap.err"))" \
    test "$(status "$b")" = held
check "... not released" test "$(nout)" -eq 1
check "... unlearnt" test "$(sql "SELECT count(*) FROM train_journal WHERE post_id = $b")" -eq 0
check "... approve exits 1 saying it stays held" \
    sh -c "test $rc -eq 1 && grep -q 'the post stays held' '$T/ap.err'"

# two posts, the restart during the first one's release
rm -f "$T/fail"
d1=$("$QHOLD" dev "$DATA/ham3.eml" 0.9) || exit 99
d2=$("$QHOLD" dev "$DATA/ham4.eml" 0.9) || exit 99
approve_restart "$d1 $d2"
check "two posts, a restart during the first release: both approved (are $(status "$d1") and $(status "$d2"): $(head -n 1 "$T/ap.err"))" \
    test "$(status "$d1")" = approved -a "$(status "$d2")" = approved
check "... each released once" test "$(nout)" -eq 3
check "... and approve exits 0 (is $rc: $(tail -n 1 "$T/ap.err"))" test "$rc" -eq 0
check "... the token file synced with both" test "$(lg sync --list dev)" = \
    "list dev: 0 journal events applied, position $(sql "SELECT max(id) FROM train_journal WHERE list = 'dev'")"

# the server restarted while an approval waits to take its post's lock
# again after its mark: the mark's commit is slowed (a deferred trigger
# sleeps 3 s in it) and a session queued meanwhile for the post's
# decision lock gets it as the mark commits, so that the approval waits
# for it on its second connection when the restart comes
rm -f "$T/fail" "$T/started"
sql 'CREATE FUNCTION lg_test_slow_mark() RETURNS trigger LANGUAGE plpgsql
    AS $$BEGIN PERFORM pg_sleep(3); RETURN NULL; END$$' > /dev/null || exit 99
sql "CREATE CONSTRAINT TRIGGER slow_mark AFTER UPDATE ON held_posts
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.status =
    'releasing') EXECUTE FUNCTION lg_test_slow_mark()" > /dev/null || exit 99
c=$("$QHOLD" dev "$DATA/spam1.eml" 0.9) || exit 99
lg approve "$c" > "$T/ap.out" 2> "$T/ap.err" &
p=$!
if pg_activity 1 "query = 'COMMIT' AND wait_event = 'PgSleep'"; then
	hold_post_lock "$c" 30 ||
	    bad "the lock's session never waited"
	$PG_CTL_STOP > /dev/null 2>&1
	$PG_CTL_START > /dev/null 2>&1 || { echo "Bail out! no restart"; exit 99; }
	wait "$p"
	wait "$holder"
	check "a restart while the approval waits for its post's lock after the mark: the post is approved (is $(status "$c"): $(head -n 1 "$T/ap.err"))" \
	    test "$(status "$c")" = approved
	check "... released once" test "$(nout)" -eq 4
	check "... learnt once as ham" test "$(sql "SELECT count(*) FROM train_journal WHERE post_id = $c AND op = 'learn' AND class = 'ham'")" -eq 1
else
	bad "the mark's commit never began"
	kill "$p"
	wait "$p"
fi
sql "DROP TRIGGER slow_mark ON held_posts" > /dev/null || exit 99

# a crash during the release, the mark's commit asynchronous
e=$("$QHOLD" dev "$DATA/spam2.eml" 0.9) || exit 99
PG_HOW_STOP="sh $PG_SH crash"
approve_restart "$e"
PG_HOW_STOP=
check "a crash during the release: the post is recorded approved (is $(status "$e"): $(head -n 1 "$T/ap.err"))" \
    test "$(status "$e")" = approved
check "... released once" test "$(nout)" -eq 5

echo "1..$n"
[ "$fails" -eq 0 ]

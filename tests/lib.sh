# lib.sh - shell functions shared by the command tests, sourced after
# $top_srcdir is checked (not a test itself):
#
#   . "$top_srcdir/tests/lib.sh"
#
# TAP output: ok/bad/check print one numbered line each and count them
# in $n and the failures in $fails; a test ends with
#   echo "1..$n"; [ $fails -eq 0 ]

fails=0
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); echo "not ok $n - $1"; fails=$((fails + 1)); }
# check DESCRIPTION COMMAND...: passes when the command does
check() {
	d=$1; shift
	if "$@"; then ok "$d"; else bad "$d"; fi
}

# pg_part: run this script again as `$0 pg` under tests/pg.sh (a
# private PostgreSQL cluster) and fold its TAP lines into ours as
# "[pg]" lines, one more line for the whole.  For tests whose point lies
# elsewhere: without a server the part prints a "# SKIP" line (the test
# still passes; run-all.sh fails on such lines under CI).  A test whose
# point is PostgreSQL execs tests/pg.sh instead and exits 77 without
# one.  Needs $T.
pg_part() {
	sh "$top_srcdir/tests/pg.sh" run sh "$0" pg > "$T/pg.out" 2>&1
	prc=$?
	sed -e 's/^ok [0-9]* - /ok - [pg] /' -e 's/^not ok [0-9]* - /not ok - [pg] /' \
	    -e '/^1\.\./d' "$T/pg.out"
	case $prc in
	0) ok "hold path under PostgreSQL" ;;
	77) echo "# SKIP hold path under PostgreSQL: no PostgreSQL server installed" ;;
	*) bad "hold path under PostgreSQL (status $prc)" ;;
	esac
}

# catchup: wait (at most 30 s) until the standby of tests/pg.sh (port
# $PG_STANDBY_PORT) has replayed everything the primary has committed so
# far: the insert position, since with synchronous_commit off
# (tests/pg.sh) a commit record may still sit in the WAL buffers, past
# pg_current_wal_lsn() (the write position), and a standby that
# replayed up to that has not seen the commit yet
catchup() {
	lsn=$(psql -X -q -A -t -v ON_ERROR_STOP=1 -c \
	    "SELECT pg_current_wal_insert_lsn()")
	i=0
	while [ $i -lt 600 ]; do
		[ "$(psql -X -q -A -t -v ON_ERROR_STOP=1 -p "$PG_STANDBY_PORT" \
		    -c "SELECT pg_last_wal_replay_lsn() >= '$lsn'::pg_lsn")" = t ] &&
		    return 0
		sleep 0.05
		i=$((i + 1))
	done
	echo "# the standby did not catch up with $lsn" >&2
	return 1
}

# pause_replay: pause the streaming standby's replay (port
# $PG_STANDBY_PORT) and wait until it says so, at most 10 s; 1 when the
# pause cannot be asked for
pause_replay() {
	psql -X -q -A -t -v ON_ERROR_STOP=1 -p "$PG_STANDBY_PORT" \
	    -c "SELECT pg_wal_replay_pause()" > /dev/null || return 1
	i=0
	while [ "$(psql -X -q -A -t -v ON_ERROR_STOP=1 -p "$PG_STANDBY_PORT" \
	    -c 'SELECT pg_get_wal_replay_pause_state()')" != paused ] &&
	    [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
}

# two_hosts DIR: the two list hosts of the standby tests, DIR/A and DIR/B,
# each a configuration with list dev and a tokens directory of its own
# (DIR/tokens-A, DIR/tokens-B), both on the primary ($PGHOST, $PGPORT,
# $PGDATABASE); B reads the journal from the standby ($PG_STANDBY_PORT,
# sync_database).  1 when a directory cannot be made
two_hosts() {
	for h in A B; do
		mkdir -p "$1/$h/lists" || return 1
		printf 'tokens_dir = %s/tokens-%s\ndatabase = host=%s port=%s dbname=%s\n' \
		    "$1" "$h" "$PGHOST" "$PGPORT" "$PGDATABASE" \
		    > "$1/$h/listgate.conf" || return 1
		: > "$1/$h/lists/dev.conf" || return 1
	done
	printf 'sync_database = host=%s port=%s dbname=%s\n' "$PGHOST" \
	    "$PG_STANDBY_PORT" "$PGDATABASE" >> "$1/B/listgate.conf"
}

# pg_activity N WHERE: wait until at least N sessions of pg_stat_activity
# match WHERE, at most 30 s; 1 when they never did
pg_activity() {
	i=0
	while [ "$(psql -X -q -A -t -v ON_ERROR_STOP=1 -c \
	    "SELECT count(*) FROM pg_stat_activity WHERE $2")" -lt "$1" ] &&
	    [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ $i -lt 300 ]
}

# hold_post_lock ID SECS: once an approval has marked post ID 'releasing'
# and waits to commit the mark (a deferred trigger sleeping in COMMIT),
# take the post's decision lock (QUEUE_LOCK_POST, 0x4c50, and the id)
# for SECS seconds in a session of its own, its pid in $holder, so that
# the approval waits for the lock after its mark; returns once the
# holder waits behind the COMMIT, the post is 'releasing' and 0.3 s more
# have passed; 1 when the holder never waited for the lock
hold_post_lock() {
	PGOPTIONS="-c client_min_messages=warning" psql -X -q -A -t \
	    -c "SELECT pg_advisory_lock(19536, $1)" \
	    -c "SELECT pg_sleep($2)" > /dev/null 2>&1 &
	holder=$!
	pg_activity 1 "wait_event_type = 'Lock' AND wait_event = 'advisory'" ||
	    return 1
	i=0
	while [ "$(psql -X -q -A -t -c \
	    "SELECT status FROM held_posts WHERE id = $1")" != releasing ] &&
	    [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	sleep 0.3
}

# fifo_wait PID: wait until process PID is blocked opening a FIFO that
# has no writer yet (its kernel wait channel, wait_for_partner), at most
# 120 s: a listgate under valgrind (LISTGATE_WRAP) takes seconds to
# start, and a signal sent before it is up kills it before it can catch
# it.  Where /proc does not say (no wchan), it waits 1 s.  0, or 1 when
# the process ended or never got there.
fifo_wait() {
	[ -r "/proc/$1/wchan" ] || { sleep 1; return 0; }
	i=0
	while [ $i -lt 2400 ]; do
		case $(cat "/proc/$1/wchan" 2>/dev/null) in
		wait_for_partner|fifo_open) return 0 ;;
		esac
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

# advisory_wait: wait (at most 10 s) until some session of the test's
# database holds an advisory lock (a list's journal lock: a train run
# reading a FIFO has begun its batch).  0, or 1 when none came.
advisory_wait() {
	i=0
	while [ "$(psql -X -q -A -t -c "SELECT count(*) FROM pg_locks
	    WHERE locktype = 'advisory' AND granted")" = 0 ]; do
		[ $i -lt 100 ] || return 1
		sleep 0.1
		i=$((i + 1))
	done
	return 0
}

# decided_once: the checks after approve, reject, discard and expire
# (expire_action = discard-learn) of posts $ap, $rj, $ds and $ex waited
# behind a lock: each exited 0 ($r_approve, $r_reject, $r_discard,
# $r_expire; its output in $T/CMD.out), its post is decided and learnt
# once, the approved one released once into $T/out.  Needs the test's
# status ID and learnt ID CLASS (queries of held_posts and train_journal).
decided_once() {
	check "approve behind it waits and exits 0 ($r_approve: $(head -n 1 "$T/approve.out"))" \
	    test "$r_approve" -eq 0
	check "... the post approved (is $(status "$ap")), released once, learnt once" \
	    test "$(status "$ap")" = approved -a "$(ls "$T/out" | grep -c '\.eml$')" -eq 1 \
	    -a "$(learnt "$ap" ham)" -eq 1
	check "reject behind it waits and exits 0 ($r_reject: $(head -n 1 "$T/reject.out"))" \
	    test "$r_reject" -eq 0
	check "... the post rejected (is $(status "$rj")) and learnt once" \
	    test "$(status "$rj")" = rejected -a "$(learnt "$rj" spam)" -eq 1
	check "discard behind it waits and exits 0 ($r_discard: $(head -n 1 "$T/discard.out"))" \
	    test "$r_discard" -eq 0
	check "... the post discarded (is $(status "$ds")) and learnt once" \
	    test "$(status "$ds")" = discarded -a "$(learnt "$ds" spam)" -eq 1
	check "expire (discard-learn) behind it waits and exits 0 ($r_expire: $(head -n 1 "$T/expire.out"))" \
	    test "$r_expire" -eq 0
	check "... the post expired (is $(status "$ex")) and learnt once" \
	    test "$(status "$ex")" = expired -a "$(learnt "$ex" spam)" -eq 1
}

# lock_file FILE: a trainer's write lock on FILE, held for 5 seconds by a
# background process (its pid in $lockpid); returns once the lock is
# taken (or after 5 s of waiting).  Needs python3 and $T.
lock_file() {
	rm -f "$T/locked"
	python3 -c '
import fcntl, sys, time
f = open(sys.argv[1], "r+b")
fcntl.lockf(f, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
time.sleep(5)
' "$1" "$T/locked" &
	lockpid=$!
	i=0
	while [ ! -e "$T/locked" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
}

# journal_train LIST: the training posts of tests/data/train, each three
# times, into LIST's training journal (tests/qhold -j); 0, or 1 when
# qhold failed.  Needs $T, $DATA and $QHOLD.
journal_train() {
	for c in spam ham; do
		: > "$T/$c.posts"
		for i in 1 2 3; do
			for f in "$DATA/$c"[0-9].eml; do
				cat "$f" >> "$T/$c.posts"
				printf '\n\f\n' >> "$T/$c.posts"
			done
		done
		"$QHOLD" -j "$1" "$c" "$T/$c.posts" > /dev/null || return 1
	done
}

# lib_old_cookie SECRET_FILE LIST ID ACTION EXPIRY: a moderation cookie in
# the format of listgate before 0.2.0 (the MAC over list, number, action and
# expiry whole, not bound to a post or a moderator; expiry in seconds
# since the epoch, written as 7 base-36 digits), made with the secret
lib_old_cookie() {
	_v=$5 _e=
	for _i in 1 2 3 4 5 6 7; do
		_e=$(printf %s "0123456789abcdefghijklmnopqrstuvwxyz" |
		    cut -c$((_v % 36 + 1)))$_e
		_v=$((_v / 36))
	done
	printf '%s' "$_e"
	printf 'listgate-moderate-1\000%s\000%s\000%s\000%s' "$2" "$3" "$4" \
	    "$_e" | openssl dgst -sha256 -hmac "$(cat "$1")" -binary |
	    head -c 13 | base32 | tr A-Z a-z | cut -c1-20
}

# "SPAM HAM" of token $2 in list $1's token file, through the test's lg
# function: the file keeps a key per token, not its text, so the key
# comes from `tokens --keys` on a post ($3) that carries the token
token_counts() {
	_k=$(lg tokens --list "$1" --keys "$3" | awk -v t="$2" '$2 == t { print $1; exit }')
	[ -n "$_k" ] || { echo "no $2 in $3"; return; }
	lg score --list "$1" --db-dump | awk -v k="$_k" '$3 == k { print $1, $2 }'
}

#!/bin/sh
# torture_outage.sh - what listgate does when what it stands on fails:
# PostgreSQL stopped, restarted mid-stream, slower than
# statement_timeout; the token file missing, unreadable, truncated or
# with scattered damage; the spool on a full file system
#
# Each case must end in a temporary failure with one clear line (the
# filter: exactly one "listgate filter: temporary failure: ..." line on
# standard error naming the cause, and the dialect's exit code, qmail
# 111 or Postfix 75; other commands: exit 1 and at most two lines), or
# in the documented recovery (a missing or damaged token file: `sync`
# or `rebuild` recreates it from the journal), and the post is retried
# to success afterwards: delivered or held, once.  Never a crash, a
# hang, a post lost or stored twice.
#   - PostgreSQL stopped: filter (a post to hold), approve, sync, train;
#     started again: the retry holds the post once;
#   - PostgreSQL restarted while 8 filters work through a stream of
#     posts (and sync loops): every post delivered or held once;
#   - statement_timeout (set in the conninfo's options) shorter than an
#     INSERT slowed by a trigger (pg_sleep), then by a lock that another
#     session holds: filter and approve fail cleanly, nothing stored;
#     the filter's watchdog (timeout) when no statement_timeout is set;
#   - the token file missing (sync recreates it), unreadable (as an
#     unprivileged user), truncated (rebuild recreates it), with
#     scattered damage: bytes overwritten at random places (the file
#     must be refused when opened, issue 8 defect 11; rebuild recreates
#     it);
#   - the spool on a full tmpfs (mounted as root; TMPDIR points at it)
#     with a post over the in-memory spool limit (32 MiB).
# Needs PostgreSQL (tests/pg.sh); the tmpfs and unreadable cases need
# root or print a "# SKIP" line.  LISTGATE_TORTURE=long repeats the
# restart and damage cases (figures in the "# " lines).
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
QHOLD=$top_builddir/tests/qhold
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-outage.XXXXXX") || exit 99
MNT=
cleanup() {
	[ -n "$MNT" ] && umount "$MNT" 2>/dev/null
	[ -n "${LOCKPID:-}" ] && kill "$LOCKPID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
CONF=$T/conf
. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
. "$top_srcdir/tests/stress_lib.sh"
STRESS_LOCK_WAIT=5000
stress_conf "$CONF" || exit 99
mkdir -p "$T/tmp" || exit 99
chmod 1777 "$T/tmp"
TMPDIR=$T/tmp
export TMPDIR
if [ "$(stress_mode)" = long ]; then
	REPEAT=${STRESS_REPEAT:-10}
	NSTREAM=${STRESS_POSTS:-400}
else
	REPEAT=${STRESS_REPEAT:-1}
	NSTREAM=${STRESS_POSTS:-80}
fi

lg migrate -q || exit 99
gen_mbox "$T/ham0" 150 1 ham
gen_mbox "$T/spam0" 150 2 spam
lg train -q --list dev --ham "$T/ham0" && lg train -q --list dev --spam "$T/spam0" ||
    { echo "# the first training failed"; exit 99; }
gen_posts "$T/gen" 400 11
mkdir -p "$T/posts"
post_sums "$T/gen"

# a fresh copy of a small generated post of kind K (s: spam, h: ham) in
# $post; fresh so that the same bytes are never a retry of another case
nfresh=0
fresh() {
	nfresh=$((nfresh + 1))
	_src=$(grep -l "^Message-ID: <[0-9.]*\.$1@" "$T"/gen/*.eml | sed -n "$((nfresh % 50 + 1))p")
	post=$T/posts/p$nfresh.eml
	sed "s/^Message-ID: <\(.*\)>/Message-ID: <o$nfresh.\1>/" "$_src" > "$post"
	sha256sum "$post" | sed 's/  / /' >> "$T/post.sums"
}
# run the filter on $post under dialect $1; rc in $rc, stderr in $T/err;
# FILT_PIPE=1 feeds it through a pipe (Postfix's way; qmail-local hands
# over a file, which the filter maps in place instead of spooling)
filt() {
	if [ "${FILT_PIPE:-0}" = 1 ]; then
		cat "$post" | lg filter --list dev --mta "$1" -f s@example.net \
		    -- dev@lists.example.org > "$T/out" 2> "$T/err"
	else
		lg filter --list dev --mta "$1" -f s@example.net \
		    -- dev@lists.example.org < "$post" > "$T/out" 2> "$T/err"
	fi
	rc=$?
}
# one clear temporary failure: the dialect's code, exactly one line on
# stderr, naming the cause ($2, an extended regular expression)
tempfail() {	# tempfail DIALECT CAUSE-RE
	_want=75
	[ "$1" = qmail ] && _want=111
	[ "$rc" -eq "$_want" ] && [ "$(wc -l < "$T/err")" -eq 1 ] &&
	    grep -Eqi "temporary failure: .*($2)" "$T/err" && return 0
	echo "# exit $rc (want $_want), stderr:"
	head -n 3 "$T/err" | sed 's/^/#   /'
	return 1
}
# a command that cannot work: exit 1, one or two lines naming the cause
cmdfail() {	# cmdfail CAUSE-RE
	[ "$rc" -eq 1 ] && [ -s "$T/err" ] && [ "$(wc -l < "$T/err")" -le 2 ] &&
	    grep -Eqi "$1" "$T/err" && return 0
	echo "# exit $rc (want 1), stderr:"
	head -n 3 "$T/err" | sed 's/^/#   /'
	return 1
}
run() { "$@" > "$T/out" 2> "$T/err"; rc=$?; }
nrows() { sql "SELECT count(*) FROM held_posts WHERE raw_sha256 = decode('$(sha256sum < "$post" | cut -c1-64)', 'hex')"; }

# the baseline: a spam post is held, a ham post passes
fresh s
filt qmail
check "baseline: a spam post is held (qmail 99)" test "$rc" -eq 99
fresh h
filt qmail
check "baseline: a ham post passes (qmail 0)" test "$rc" -eq 0

# --- PostgreSQL stopped ------------------------------------------------------------------
DBDOWN='database|connect|server'
fresh s
held_post=$(sql "SELECT max(id) FROM held_posts")
$PG_CTL_STOP
filt qmail
check "database stopped: filter --mta qmail defers with one line" tempfail qmail "$DBDOWN"
filt postfix
check "database stopped: filter --mta postfix defers with one line" tempfail postfix "$DBDOWN"
run lg approve "$held_post"
check "database stopped: approve fails with one clear line" cmdfail "$DBDOWN"
run lg sync --list dev
check "database stopped: sync fails with one clear line" cmdfail "$DBDOWN"
run lg train --list dev --ham "$T/ham0"
check "database stopped: train fails with one clear line" cmdfail "$DBDOWN"
$PG_CTL_START
filt qmail
check "database back: the retry holds the post" test "$rc" -eq 99 -a "$(nrows)" -eq 1
filt qmail
check "... and another retry finds it held, once" test "$rc" -eq 99 -a "$(nrows)" -eq 1
run lg approve "$held_post"
check "database back: approve succeeds" test "$rc" -eq 0

# --- PostgreSQL restarted mid-stream -------------------------------------------------------
stream_worker() {	# worker W of 8 over posts $T/stream/*.eml
	w=$1
	i=0
	for f in "$T"/stream/*.eml; do
		i=$((i + 1))
		[ $((i % 8)) -eq "$w" ] || continue
		tries=0
		while :; do
			tries=$((tries + 1))
			lg filter --list dev --mta qmail -f s@example.net \
			    -- dev@lists.example.org < "$f" > /dev/null 2> "$T/sw$w.err"
			rc=$?
			if [ "$rc" -eq 111 ]; then
				cat "$T/sw$w.err" >> "$T/stream.defer"
				[ "$(wc -l < "$T/sw$w.err")" -eq 1 ] ||
				    { echo "--- $f"; cat "$T/sw$w.err"; } >> "$T/stream.multi"
				[ "$tries" -lt 100 ] && { sleep 0.2; continue; }
			fi
			break
		done
		[ "$rc" -eq 0 ] && /bin/sh "$T/sink.sh" deliver < "$f"
		echo "${f##*/} $rc $tries" >> "$T/stream.res"
	done
}
restarts=0 sdefer=0 sposts=0 sbad=0
rep=0
while [ $rep -lt "$REPEAT" ]; do
	rep=$((rep + 1))
	rm -rf "$T/stream" "$T/stream.res" "$T/stream.defer" "$T/stream.multi"
	gen_posts "$T/stream" "$NSTREAM" $((500 + rep))
	(cd "$T/stream" && sha256sum -- *.eml) | sed 's/  / /' >> "$T/post.sums"
	: > "$T/sink.log"
	pids=
	w=0
	while [ $w -lt 8 ]; do
		stream_worker $w &
		pids="$pids $!"
		w=$((w + 1))
	done
	( while [ ! -e "$T/stream.stop" ]; do
		lg sync -q --list dev > /dev/null 2>&1; sleep 0.1
	  done ) &
	syncpid=$!
	# stop the server once a third of the posts are through; 1 s later
	# start it again
	while [ "$(cat "$T/stream.res" 2>/dev/null | wc -l)" -lt $((NSTREAM / 3)) ]; do
		sleep 0.05
	done
	$PG_CTL_STOP
	sleep 1
	$PG_CTL_START
	restarts=$((restarts + 1))
	# shellcheck disable=SC2086
	wait $pids
	touch "$T/stream.stop"
	wait "$syncpid"
	rm -f "$T/stream.stop"
	sposts=$((sposts + NSTREAM))
	sdefer=$((sdefer + $(cat "$T/stream.defer" 2>/dev/null | wc -l)))
	(cd "$T/stream" && sha256sum -- *.eml) | awk '{ print $1 }' > "$T/stream.sums"
	sql "SELECT encode(raw_sha256, 'hex') FROM held_posts" > "$T/rows"
	x=$(awk 'FILENAME == ARGV[1] { p[$1] = 1; next }
	    FILENAME == ARGV[2] { if ($1 == "deliver") d[$2]++; next }
	    { h[$1]++ }
	    END { for (s in p) if (d[s] + h[s] != 1) n++; print n + 0 }' \
	    "$T/stream.sums" "$T/sink.log" "$T/rows")
	nok=$(awk '$2 == 0 || $2 == 99' "$T/stream.res" | wc -l)
	[ "$x" -eq 0 ] && [ "$nok" -eq "$NSTREAM" ] || sbad=$((sbad + 1))
	# every deferral said why, in one line
	if [ -s "$T/stream.multi" ]; then
		sbad=$((sbad + 1))
		echo "# deferrals that said more than one line:"
		head -n 6 "$T/stream.multi" | sed 's/^/#   /'
	fi
	if [ -s "$T/stream.defer" ] &&
	    grep -Evqi "temporary failure: .*($DBDOWN)" "$T/stream.defer"; then
		sbad=$((sbad + 1))
		grep -Evi "temporary failure: .*($DBDOWN)" "$T/stream.defer" | head -n 3 | sed 's/^/# /'
	fi
done
check "database restarted mid-stream ($restarts restarts, $sposts posts by 8 filters, $sdefer deferrals): every post delivered or held once" \
    test "$sbad" -eq 0
check "... and a sync afterwards succeeds" lg sync -q --list dev

# --- statement_timeout: a slow INSERT, then a lock held by another session -----------------
cp "$CONF/listgate.conf" "$T/listgate.conf.orig"
sed "s/^database = \"\(.*\)\"$/database = \"\1 options='-c statement_timeout=500'\"/" \
    "$T/listgate.conf.orig" > "$CONF/listgate.conf"
sql "CREATE FUNCTION slow() RETURNS trigger LANGUAGE plpgsql AS
    \$\$ BEGIN PERFORM pg_sleep(8); RETURN NEW; END \$\$;
    CREATE TRIGGER slow BEFORE INSERT ON held_posts
    FOR EACH ROW EXECUTE FUNCTION slow()" || exit 99
fresh s
t0=$(date +%s)
filt postfix
t1=$(date +%s)
check "an INSERT slower than statement_timeout: filter defers with one line" \
    tempfail postfix 'statement timeout|cancel'
check "... without waiting for the INSERT (8 s): in $((t1 - t0)) s, storing nothing" \
    test $((t1 - t0)) -le 5 -a "$(nrows)" -eq 0
# a post whose compressed form is over 1 MiB goes through a large
# object, in a transaction: the failed INSERT's reason is the one given
# (it said "current transaction is aborted", of the schema check after it)
fresh s
head -c 2000000 /dev/urandom | base64 >> "$post"
t0=$(date +%s)
filt postfix
t1=$(date +%s)
check "a large post (2.7 MB) whose INSERT is slower than statement_timeout: filter defers naming it" \
    tempfail postfix 'statement timeout|cancel'
check "... in $((t1 - t0)) s, storing nothing" \
    test $((t1 - t0)) -le 5 -a "$(nrows)" -eq 0
sql "DROP TRIGGER slow ON held_posts"
# another session holds a lock on the queue (until it is terminated)
fresh s
lock_post=$("$QHOLD" dev "$post" 0.95) || exit 99
fresh s
psql -X -q -c "BEGIN; LOCK TABLE held_posts IN ACCESS EXCLUSIVE MODE;
    SELECT pg_sleep(30); COMMIT" > /dev/null 2>&1 &
LOCKPID=$!
i=0
while [ "$(sql "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
    WHERE c.relname = 'held_posts' AND l.mode = 'AccessExclusiveLock' AND l.granted")" -eq 0 ] &&
    [ $i -lt 200 ]; do
	sleep 0.1
	i=$((i + 1))
done
filt qmail
check "a lock held by another session: filter defers with one line" \
    tempfail qmail 'statement timeout|cancel|lock'
cp "$T/err" "$T/err.filter"
run lg approve "$lock_post"
check "... approve fails with one clear line" cmdfail 'statement timeout|cancel|lock'
# the lock goes (psql has no statement_timeout: it would wait for it)
sql "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
    WHERE query LIKE '%LOCK TABLE held_posts%' AND pid <> pg_backend_pid()" > /dev/null
wait "$LOCKPID"
LOCKPID=
check "... the filter stored nothing" test "$(nrows)" -eq 0
check "... and approve left its post held" \
    test "$(sql "SELECT status FROM held_posts WHERE id = $lock_post")" = held
filt qmail
check "the lock gone: the retry holds the post once" test "$rc" -eq 99 -a "$(nrows)" -eq 1
# no statement_timeout: the filter's own watchdog (timeout) defers
cp "$T/listgate.conf.orig" "$CONF/listgate.conf"
printf 'timeout = 2\n' >> "$CONF/lists/dev.conf"
sql "CREATE TRIGGER slow BEFORE INSERT ON held_posts
    FOR EACH ROW EXECUTE FUNCTION slow()" || exit 99
fresh s
t0=$(date +%s)
filt qmail
t1=$(date +%s)
check "no statement_timeout, the INSERT slower than the watchdog: filter defers with one line" \
    sh -c "test $rc -eq 111 && test \$(wc -l < '$T/err') -eq 1 && grep -qi 'timed out' '$T/err'"
check "... after the watchdog's 2 s, not the INSERT's 8 ($((t1 - t0)) s)" test $((t1 - t0)) -le 6
sleep 7	# the server finishes the INSERT of the killed session
sql "DROP TRIGGER slow ON held_posts"
filt qmail
check "... and the retry holds the post once" test "$rc" -eq 99 -a "$(nrows)" -eq 1
sed -i '/^timeout = 2$/d' "$CONF/lists/dev.conf"

# --- the token file ----------------------------------------------------------------------------
TOK=$T/tokens/dev.kch
lg sync -q --list dev || exit 99
lg score --list dev --db-dump | LC_ALL=C sort > "$T/dump.good"
TOKFILE='token file|dev\.kch'
# missing: the filter defers and says how it comes back; sync recreates it
rm -f "$TOK"
fresh s
filt qmail
check "token file missing: filter defers with one line naming it" tempfail qmail "$TOKFILE"
check "... and the line says that sync or rebuild recreates it" \
    grep -Eq 'listgate (--config [^ ]+ )?(sync|rebuild)' "$T/err"
grep -Eq 'listgate (--config [^ ]+ )?(sync|rebuild)' "$T/err" || sed 's/^/# it says: /' "$T/err"
run lg sync --list dev
check "token file missing: sync recreates it from the journal" test "$rc" -eq 0
lg score --list dev --db-dump | LC_ALL=C sort > "$T/dump"
check "... with the same records" cmp -s "$T/dump" "$T/dump.good"
filt qmail
check "... and the retry holds the post" test "$rc" -eq 99 -a "$(nrows)" -eq 1

# unreadable: as an unprivileged user (root reads anything).  Under
# root the run happens in a directory of its own under /tmp that nobody
# can reach (the checkout may be under /root): a copy of the binary, of
# the configuration (pointing at a copy of the token file, mode 000) and
# a spool directory
if [ "$(id -u)" -ne 0 ]; then
	U=$T/unread
	as_user() { "$@"; }
elif command -v setpriv >/dev/null 2>&1 && U=$(mktemp -d /tmp/lg-unread.XXXXXX); then
	as_user() { setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }
else
	U=
fi
if [ -n "$U" ]; then
	mkdir -p "$U/conf/lists" "$U/tokens" "$U/tmp"
	chmod 755 "$U" "$U/conf" "$U/conf/lists" "$U/tokens"
	chmod 1777 "$U/tmp"
	cp "$LISTGATE" "$U/listgate"
	sed "s|^tokens_dir = .*|tokens_dir = $U/tokens|" "$CONF/listgate.conf" > "$U/conf/listgate.conf"
	cp "$CONF/lists/dev.conf" "$U/conf/lists/"
	cp "$TOK" "$U/tokens/dev.kch"
	chmod 644 "$U/conf/listgate.conf" "$U/conf/lists/dev.conf"
	chmod 000 "$U/tokens/dev.kch"
	fresh s
	as_user env TMPDIR="$U/tmp" "$U/listgate" $LG_ROOT --config "$U/conf" filter --list dev \
	    --mta postfix -f s@example.net -- dev@lists.example.org < "$post" > "$T/out" 2> "$T/err"
	rc=$?
	check "token file unreadable: filter defers with one line naming it" \
	    tempfail postfix "$TOKFILE|permission"
	check "... storing nothing" test "$(nrows)" -eq 0
	chmod 644 "$U/tokens/dev.kch"
	as_user env TMPDIR="$U/tmp" "$U/listgate" $LG_ROOT --config "$U/conf" filter --list dev \
	    --mta qmail -f s@example.net -- dev@lists.example.org < "$post" > "$T/out" 2> "$T/err"
	rc=$?
	check "readable again: the retry succeeds" \
	    test "$rc" -eq 0 -o "$rc" -eq 99
	[ "$U" = "$T/unread" ] || rm -rf "$U"
else
	echo "# SKIP token file unreadable: needs a user other than root (setpriv)"
fi

# truncated: to half its size; rebuild recreates it
sz=$(wc -c < "$TOK")
truncate -s $((sz / 2)) "$TOK"
fresh s
filt qmail
check "token file truncated: filter defers with one line naming it" tempfail qmail "$TOKFILE"
run lg rebuild --list dev
check "token file truncated: rebuild recreates it" test "$rc" -eq 0
lg score --list dev --db-dump | LC_ALL=C sort > "$T/dump"
check "... with the same records" cmp -s "$T/dump" "$T/dump.good"
filt qmail
check "... and the retry holds the post" test "$rc" -eq 99 -a "$(nrows)" -eq 1

# scattered damage: 64 runs of 8 random bytes past the first 4 KiB; the
# damage must be found when the file is opened (issue 8 defect 11)
dmg_defer=0 dmg_crash=0 dmg_other=0 dmg_fixed=0
rep=0
while [ $rep -lt "$REPEAT" ]; do
	rep=$((rep + 1))
	cp "$TOK" "$T/tok.good"
	sz=$(wc -c < "$TOK")
	python3 - "$TOK" "$sz" "$rep" <<'EOF'
import random, sys
path, size, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
r = random.Random(seed)
with open(path, "r+b") as f:
	for _ in range(64):
		f.seek(r.randrange(4096, max(4097, size - 8)))
		f.write(bytes(r.randrange(256) for _ in range(8)))
EOF
	fresh s
	filt qmail
	if [ "$rc" -gt 128 ]; then
		dmg_crash=$((dmg_crash + 1))
	elif tempfail qmail "$TOKFILE" > /dev/null; then
		dmg_defer=$((dmg_defer + 1))
	else
		dmg_other=$((dmg_other + 1))
		[ "$dmg_other" -eq 1 ] && echo "# damaged token file: filter exit $rc: $(head -n 1 "$T/err")"
	fi
	run lg rebuild --list dev
	lg score --list dev --db-dump 2>/dev/null | LC_ALL=C sort > "$T/dump"
	[ "$rc" -eq 0 ] && cmp -s "$T/dump" "$T/dump.good" && dmg_fixed=$((dmg_fixed + 1))
	# the post, whatever happened, is now held once
	filt qmail
	[ "$rc" -eq 99 ] && [ "$(nrows)" -eq 1 ] || dmg_fixed=$((dmg_fixed - 1))
done
check "scattered damage ($REPEAT files): no crash ($dmg_crash)" test "$dmg_crash" -eq 0
check "scattered damage: found when the file is opened: filter defers with one line ($dmg_defer of $REPEAT; $dmg_other scored the damaged file)" \
    test "$dmg_defer" -eq "$REPEAT"
check "scattered damage: rebuild recreates the file, the retry holds the post ($dmg_fixed of $REPEAT)" \
    test "$dmg_fixed" -eq "$REPEAT"

# --- the spool on a full file system -------------------------------------------------------------
if [ "$(id -u)" -eq 0 ] && MNT=$T/spool && mkdir -p "$MNT" &&
    mount -t tmpfs -o size=40m tmpfs "$MNT" 2>/dev/null; then
	# a post over the 32 MiB kept in memory: the rest goes to $TMPDIR
	fresh h
	{ cat "$post"; yes 'h1 h2 h3 padding of a very large post h4 h5' | head -c 34000000; } > "$T/big.eml"
	post=$T/big.eml
	sha256sum "$post" | sed 's/  / /' >> "$T/post.sums"
	dd if=/dev/zero of="$MNT/filler" bs=64k 2>/dev/null	# fill it
	: > "$T/sink.log"
	TMPDIR=$MNT FILT_PIPE=1
	filt postfix
	check "spool on a full tmpfs: filter --mta postfix defers with one line" \
	    tempfail postfix 'spool|space|write'
	filt qmail
	check "spool on a full tmpfs: filter --mta qmail defers with one line" \
	    tempfail qmail 'spool|space|write'
	check "... delivering nothing" test ! -s "$T/sink.log"
	check "... leaving no file in the spool" test "$(ls "$MNT")" = filler
	rm -f "$MNT/filler"
	filt postfix
	TMPDIR=$T/tmp FILT_PIPE=0
	check "space again: the retry succeeds" test "$rc" -eq 0
	[ "$rc" -eq 0 ] || head -n 2 "$T/err" | sed 's/^/# /'
	check "... delivered whole, or held" \
	    test "$(grep -c "^deliver $(sha256sum < "$post" | cut -c1-64) " "$T/sink.log")" -eq 1 -o "$(nrows)" -eq 1
	umount "$MNT" && MNT=
else
	MNT=
	echo "# SKIP the spool on a full tmpfs: needs root to mount one"
fi

left=$(temp_left "$T/tokens" "$T/tmp")
check "no temporary file is left behind" test -z "$left"
echo "# outages: database stopped 1x, restarted $restarts x under $sposts posts ($sdefer deferrals), statement_timeout 2x, watchdog 1x; token file missing, unreadable, truncated 1x each, damaged $REPEAT x ($dmg_defer refused, $dmg_other scored, $dmg_crash crashed)"
echo "1..$n"
[ "$fails" -eq 0 ]

#!/bin/sh
# evidence_lock.sh - a slow member_check (or a DNS server that does not
# answer) never keeps the token file from the list's filters: train
# (without a database), sync and the sync after a moderator's decision
# gather a post's evidence before they take the file for writing, so a
# filter that comes meanwhile waits no longer than it always may
# (lock_wait_ms = 1000 here, against a check of 3 s) and passes its
# post instead of deferring it; the post learnt still gets its
# member:yes, and syncs at once or killed learn each event once.
#
# Works in a private temporary configuration directory; needs $LISTGATE
# and $top_srcdir (set by make).
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-evlock.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
mkdir -p "$CONF/lists" || exit 99
printf 'tokens_dir = %s/tokens\nlock_wait_ms = 1000\n' "$T" \
    > "$CONF/listgate.conf"

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), pg_part
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
now() { date +%s%N; }
# "SPAM HAM" of token $1 in list m's token file (token_counts, lib.sh)
learnt() { token_counts m "$@"; }

# the list manager's stand-in: everyone is a member; slow@ takes 3 s to
# say so while $T/slow exists
cat > "$T/check.sh" <<EOS
#!/bin/sh
echo "\$1" >> "$T/calls"
case \$1 in
slow@*) [ -e "$T/slow" ] && sleep 3 ;;
spam@*) exit 1 ;;
esac
exit 0
EOS
chmod +x "$T/check.sh"
cat > "$CONF/lists/m.conf" <<EOF2
member_check = $T/check.sh {sender}
member_check_ms = 5000
EOF2
# a post from $1 into $2, its Message-ID made its own by $3; ham talks
# of the meeting, spam of pills
post() {
	{
		printf 'From: Someone <%s>\nSubject: %s\n' "$1" "$4"
		printf 'Message-ID: <%s.%s.%s@example.org>\n\n' "$3" "$1" "$$"
		printf '%s\n' "$5"
	} > "$2"
}
HAM='Hello all, the meeting agenda is attached below, see you there.'
SPAM='Cheap pills online now, buy viagra cialis pharmacy discount.'
i=0
while [ $i -lt 8 ]; do
	post yes@example.org "$T/ham$i.eml" "h$i" "about the meeting" "$HAM"
	post spam@example.net "$T/spam$i.eml" "s$i" "pills" "$SPAM"
	i=$((i + 1))
done
post slow@example.org "$T/slow.eml" slow "about the meeting" "$HAM"
post yes@example.org "$T/next.eml" next "about the meeting" "$HAM"

# wait (at most 5 s) until the check has been asked about slow@: the
# writer in the background is gathering the slow post's evidence now
wait_slow() {
	i=0
	while ! grep -q '^slow@' "$T/calls" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	sleep 0.2
}
# a filter of the next post while the check of slow@ runs: its exit
# status in $rc, its time in $ms
filter_meanwhile() {
	wait_slow
	t0=$(now)
	lg filter --list m --mta qmail < "$T/next.eml" 2> "$T/ferr"
	rc=$?
	ms=$(( ($(now) - t0) / 1000000 ))
}

# --- under PostgreSQL: sync, and a decision's sync --------------------------
if [ "${1:-}" = pg ]; then
	: "${top_builddir:?set by make check}"
	QHOLD=$top_builddir/tests/qhold
	lg migrate -q || exit 99
	lg train -q --list m --ham "$T"/ham?.eml &&
	    lg train -q --list m --spam "$T"/spam?.eml
	check "train through the journal exits 0" test $? -eq 0
	# the slow post journaled behind the token file's back: the next
	# sync learns it
	"$QHOLD" -j m ham "$T/slow.eml" > /dev/null || exit 99
	: > "$T/calls"
	touch "$T/slow"
	lg sync --list m -q > "$T/sync.out" 2>&1 &
	spid=$!
	filter_meanwhile
	wait "$spid"
	src=$?
	check "a filter while sync asks a slow member_check: not deferred (exit $rc, $ms ms)" \
	    test "$rc" -eq 0 -o "$rc" -eq 99
	check "... and it waited less than lock_wait_ms ($ms ms)" \
	    test "$ms" -lt 1000
	check "... sync exits 0" test "$src" -eq 0
	check "... which asked about the post once" \
	    test "$(grep -c '^slow@' "$T/calls")" -eq 1
	check "... and learnt the slow post's member:yes" \
	    test "$(learnt member:yes "$T/slow.eml")" = "0 9"
	lg sync --check --list m > "$T/check.out" 2>&1
	check "... the token file at the journal's end, as a rebuild" \
	    test $? -eq 0
	lg score --list m --db-dump | LC_ALL=C sort > "$T/synced"
	lg rebuild --list m -q > /dev/null 2>&1
	lg score --list m --db-dump | LC_ALL=C sort > "$T/rebuilt"
	check "... with the tokens a rebuild learns" cmp -s "$T/synced" "$T/rebuilt"
	# a moderator's approval: the decision's sync learns the post
	printf '#!/bin/sh\ncat > /dev/null\n' > "$T/release.sh"
	chmod +x "$T/release.sh"
	printf 'release = %s/release.sh\n' "$T" >> "$CONF/lists/m.conf"
	post slow@example.org "$T/held.eml" held "about the meeting" "$HAM"
	id=$("$QHOLD" m "$T/held.eml" 0.9) || exit 99
	: > "$T/calls"
	lg approve "$id" > "$T/approve.out" 2>&1 &
	apid=$!
	filter_meanwhile
	wait "$apid"
	arc=$?
	check "a filter while an approval's sync asks a slow member_check: not deferred (exit $rc, $ms ms)" \
	    test "$rc" -eq 0 -o "$rc" -eq 99
	check "... approve exits 0" test "$arc" -eq 0
	check "... and the file learnt the post's member:yes" \
	    test "$(learnt member:yes "$T/slow.eml")" = "0 10"
	rm -f "$T/slow"
	# many events, three syncs at once, each gathering ahead and
	# taking the file after the others moved it on: every event learnt
	# once, as a rebuild learns them (the first batch in a transaction,
	# the rest in a private copy)
	: > "$T/many.posts"
	i=0
	while [ $i -lt 60 ]; do
		if [ $((i % 3)) -eq 0 ]; then
			post spam@example.net "$T/p.eml" "m$i" "pills $i" "$SPAM $i"
		else
			post yes@example.org "$T/p.eml" "m$i" "meeting $i" "$HAM $i"
		fi
		cat "$T/p.eml" >> "$T/many.posts"
		printf '\n\f\n' >> "$T/many.posts"
		i=$((i + 1))
	done
	"$QHOLD" -j m ham "$T/many.posts" > /dev/null || exit 99
	lg sync --list m -q > "$T/s1" 2>&1 & p1=$!
	lg sync --list m -q > "$T/s2" 2>&1 & p2=$!
	lg sync --list m -q > "$T/s3" 2>&1 & p3=$!
	r1=0; r2=0; r3=0
	wait $p1 || r1=$?; wait $p2 || r2=$?; wait $p3 || r3=$?
	check "three syncs at once exit 0 ($r1 $r2 $r3)" \
	    test $r1 -eq 0 -a $r2 -eq 0 -a $r3 -eq 0
	lg score --list m --db-dump | LC_ALL=C sort > "$T/synced"
	lg rebuild --list m -q > /dev/null 2>&1
	lg score --list m --db-dump | LC_ALL=C sort > "$T/rebuilt"
	check "... every event learnt once, as a rebuild learns them" \
	    cmp -s "$T/synced" "$T/rebuilt"
	check "... member:yes from 40 more posts, member:no from 20" \
	    test "$(learnt member:yes "$T/slow.eml")" = "0 50" -a \
	    "$(learnt member:no "$T/spam0.eml")" = "8 20"
	# syncs killed at any point (gathering, applying, committing): the
	# file stays at a position it learnt exactly up to
	sed 's/^Message-ID: <m/Message-ID: <k/' "$T/many.posts" > "$T/kill.posts"
	"$QHOLD" -j m spam "$T/kill.posts" > /dev/null || exit 99
	for d in 0.05 0.1 0.15 0.2 0.3 0.4 0.6; do
		lg sync --list m -q > /dev/null 2>&1 &
		kp=$!
		sleep $d
		kill -9 $kp 2>/dev/null
		wait $kp 2>/dev/null
	done
	lg sync --list m -q > "$T/s4" 2>&1
	check "a sync after seven killed ones exits 0" test $? -eq 0
	lg score --list m --db-dump | LC_ALL=C sort > "$T/synced"
	lg rebuild --list m -q > /dev/null 2>&1
	lg score --list m --db-dump | LC_ALL=C sort > "$T/rebuilt"
	check "... every event learnt once, as a rebuild learns them" \
	    cmp -s "$T/synced" "$T/rebuilt"
	echo "1..$n"
	[ $fails -eq 0 ]
	exit
fi

# --- without a database: train ------------------------------------------
lg train -q --list m --ham "$T"/ham?.eml && lg train -q --list m --spam "$T"/spam?.eml
check "train exits 0" test $? -eq 0
: > "$T/calls"
touch "$T/slow"
lg train -q --list m --ham "$T/slow.eml" &
tpid=$!
filter_meanwhile
wait "$tpid"
trc=$?
check "a filter while train asks a slow member_check: passed (exit $rc, $ms ms)" \
    test "$rc" -eq 0
check "... and it waited less than lock_wait_ms ($ms ms)" test "$ms" -lt 1000
check "... train exits 0" test "$trc" -eq 0
check "... and learnt the slow post's member:yes" \
    test "$(learnt member:yes "$T/slow.eml")" = "0 9"
# score of four slow posts (12 s of checks) reads the file only once
# each post's evidence is in: a train meanwhile is not kept waiting
# past its 10 s for the file
: > "$T/calls"
lg score --list m "$T/slow.eml" "$T/slow.eml" "$T/slow.eml" "$T/slow.eml" \
    > "$T/score.out" 2>&1 &
spid=$!
wait_slow
t0=$(now)
lg train -q --list m --ham "$T/ham0.eml" "$T/next.eml" > "$T/train.out" 2>&1
trc=$?
ms=$(( ($(now) - t0) / 1000000 ))
wait "$spid"
src=$?
check "a train while score asks slow member_checks: learnt (exit $trc, $ms ms)" \
    test "$trc" -eq 0 -a "$ms" -lt 5000
check "... score exits 0, four posts scored" \
    test "$src" -eq 0 -a "$(grep -c '^ham ' "$T/score.out")" -eq 4
# a long train, whose posts past the first few used to go into a
# private copy of the file held for the rest of the run: four slow
# posts at its end (12 s) keep no other train out past its 10 s wait
i=0
while [ $i -lt 19 ]; do
	post yes@example.org "$T/f$i.eml" "f$i" "meeting $i" "$HAM $i"
	i=$((i + 1))
done
i=0
while [ $i -lt 4 ]; do
	post slow@example.org "$T/sl$i.eml" "sl$i" "slow $i" "$HAM slow $i"
	i=$((i + 1))
done
post yes@example.org "$T/u.eml" u "meeting u" "$HAM u"
: > "$T/calls"
lg train -q --list m --ham "$T"/f*.eml "$T"/sl?.eml > "$T/train1.out" 2>&1 &
tpid=$!
wait_slow
t0=$(now)
lg train -q --list m --ham "$T/u.eml" > "$T/train2.out" 2>&1
trc=$?
tms=$(( ($(now) - t0) / 1000000 ))
filter_meanwhile
wait "$tpid"
t1rc=$?
check "a train while a long train asks slow member_checks: learnt (exit $trc, $tms ms)" \
    test "$trc" -eq 0 -a "$tms" -lt 5000
check "... a filter meanwhile passed (exit $rc, $ms ms)" \
    test "$rc" -eq 0 -a "$ms" -lt 1000
check "... the long train exits 0 ($(head -c 200 "$T/train1.out"))" test "$t1rc" -eq 0
check "... and every post learnt its member:yes" \
    test "$(learnt member:yes "$T/slow.eml")" = "0 35"
rm -f "$T/slow"

# --- ... nor a DNS server that does not answer ------------------------------
# (a resolver that reads the questions and never answers: each post with
# a public relay waits dns_timeout_ms = 3000 for it)
if command -v python3 > /dev/null 2>&1; then
	python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    s.recv(4096)
    open(sys.argv[2], "a").write("asked\n")
' "$T/dnsport" "$T/dnsasked" &
	dpid=$!
	i=0
	while [ ! -s "$T/dnsport" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	printf 'dnsbl_zones = bl.test\ndns_server = 127.0.0.1:%s\ndns_timeout_ms = 3000\n' \
	    "$(cat "$T/dnsport")" >> "$CONF/listgate.conf"
	{
		printf 'Received: from mail.example.com (mail.example.com [66.60.167.66]) by mx.example.org (Postfix) with ESMTP id 4F1; Mon, 2 Dec 2024 10:00:00 +0000\n'
		cat "$T/ham0.eml" | sed 's/^Message-ID: <h0\./Message-ID: <dns./'
	} > "$T/relay.eml"
	: > "$T/dnsasked"
	lg train -q --list m --ham "$T/relay.eml" &
	tpid=$!
	i=0
	while [ ! -s "$T/dnsasked" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	sleep 0.2
	t0=$(now)
	lg filter --list m --mta qmail < "$T/next.eml" 2> "$T/ferr"
	rc=$?
	ms=$(( ($(now) - t0) / 1000000 ))
	wait "$tpid"
	trc=$?
	kill "$dpid"
	wait "$dpid" 2>/dev/null
	check "a filter while train waits for a silent DNS server: passed (exit $rc, $ms ms)" \
	    test "$rc" -eq 0 -a "$ms" -lt 1000
	check "... train exits 0" test "$trc" -eq 0
else
	echo "# SKIP a silent DNS server: no python3"
fi

pg_part
echo "1..$n"
[ $fails -eq 0 ]

#!/bin/sh
# evidence_member.sh - subscriber evidence: a list's member_check answers
# member:yes (exit 0) or member:no (exit 1); any other exit, a signal, a
# program that cannot start and the time-out give no token and never
# fail the post; the sender is the envelope's (filter -f), else the
# post's Return-Path, else its From; answers are cached for
# member_cache_s; score -v shows the token, train learns it, and (under
# PostgreSQL) sync replays the journal with it; a stop of the filter
# kills a check still running, a list's timeout shorter than the check's
# cuts the check short instead of deferring the post, and neither a
# SIGCHLD ignored nor a SIGTERM blocked by whoever started listgate
# changes any of it.
#
# Works in a private temporary configuration directory; needs $LISTGATE
# and $top_srcdir (set by make).
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-member.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
mkdir -p "$CONF/lists" || exit 99
printf 'tokens_dir = %s/tokens\n' "$T" > "$CONF/listgate.conf"

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), pg_part
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
# the member:* tokens of a post (file $1) for list $2
mtoks() { lg tokens --list "${2:-m}" "$1" | grep '^member:' | tr '\n' ' '; }
now() { date +%s%N; }
# "SPAM HAM" of token $1 in list m's token file (token_counts, lib.sh)
learnt() { token_counts m "$@"; }

# the list manager's stand-in: the sender's local part says what to do
cat > "$T/check.sh" <<EOS
#!/bin/sh
echo "\$1 \$2" >> "$T/calls"
case \$1 in
yes@*) exit 0 ;;
no@*) exit 1 ;;
three@*) exit 3 ;;
slow@*) sleep 30 & echo \$! > "$T/sleep.pid"; wait; exit 0 ;;
sig@*) kill -9 \$\$ ;;
esac
exit 1
EOS
chmod +x "$T/check.sh"
cat > "$CONF/lists/m.conf" <<EOF2
member_check = $T/check.sh {sender} {list}
member_check_ms = 300
EOF2
# a post from $1 (From), with a Return-Path when $2 is given (and not
# empty), into $T/post.eml; $3 makes its Message-ID (and so the post)
# one of its own: train learns a post given twice in one run once
post() {
	{
		[ -n "${2:-}" ] && printf 'Return-Path: %s\n' "$2"
		printf 'From: Someone <%s>\nSubject: about the meeting\n' "$1"
		printf 'Message-ID: <%s%s.%s@example.org>\n\n' "${3:-}" "$1" "$$"
		printf 'Hello all, the meeting agenda is attached below.\n'
	} > "$T/post.eml"
}

# --- under PostgreSQL: sync replays the journal with the evidence ---------
# (the journal keeps no envelope: the sender is the Return-Path, else From)
if [ "${1:-}" = pg ]; then
	lg migrate -q || exit 99
	i=0
	while [ $i -lt 4 ]; do
		post yes@example.org "" "$i."; cp "$T/post.eml" "$T/jham$i.eml"
		post no@example.org "<no@example.org>" "$i."
		cp "$T/post.eml" "$T/jspam$i.eml"
		i=$((i + 1))
	done
	lg train -q --list m --ham "$T"/jham?.eml &&
	    lg train -q --list m --spam "$T"/jspam?.eml
	check "train through the journal with member_check exits 0" test $? -eq 0
	rm -f "$T/tokens/m.kch"
	lg sync --list m -q > /dev/null 2>&1
	check "sync rebuilt member:yes from the journal's ham (From)" \
	    test "$(learnt member:yes "$T/jham0.eml")" = "0 4"
	check "... and member:no from its spam (Return-Path)" \
	    test "$(learnt member:no "$T/jspam0.eml")" = "4 0"
	# the evidence sees what sync sees: the first max_scan_bytes + 1
	# bytes (here the From comes after them), also when train learns
	# the posts alongside the journal, tokenized in worker threads
	printf 'member_check = %s/check.sh {sender} {list}\nmax_scan_bytes = 1024\n' \
	    "$T" > "$CONF/lists/cut.conf"
	i=0
	while [ $i -lt 6 ]; do
		{
			j=0
			while [ $j -lt 30 ]; do
				printf 'X-Padding-%d: %s\n' $j \
				    "abcdefghijklmnopqrstuvwxyz0123456789abcdefghij"
				j=$((j + 1))
			done
			printf 'From: <yes@example.org>\nSubject: cut %d\n\n' $i
			printf 'Body words for post %d.\n' $i
		} > "$T/cut$i.eml"
		i=$((i + 1))
	done
	: > "$T/calls"
	LISTGATE_TRAIN_THREADS=2 lg train -q --list cut --ham "$T"/cut?.eml
	check "train of posts whose From lies past max_scan_bytes exits 0" \
	    test $? -eq 0
	lg score --list cut --db-dump | LC_ALL=C sort > "$T/cut-followed"
	rm -f "$T/tokens/cut.kch"
	lg sync --list cut -q > /dev/null 2>&1
	lg score --list cut --db-dump | LC_ALL=C sort > "$T/cut-synced"
	check "... the file learnt alongside = the one sync rebuilt" \
	    cmp -s "$T/cut-followed" "$T/cut-synced"
	check "... and no member_check ran (no sender in what is read)" \
	    test ! -s "$T/calls"
	# one sync of every list: list a's check times out on every post,
	# which says nothing of list b's (given up on a, b is still asked)
	printf 'member_check = %s/check.sh {sender} {list}\nmember_check_ms = 200\n' \
	    "$T" > "$CONF/lists/a.conf"
	printf 'member_check = %s/check.sh {sender} {list}\n' "$T" \
	    > "$CONF/lists/b.conf"
	i=0
	while [ $i -lt 5 ]; do
		post slow@example.org "" "a$i."; cp "$T/post.eml" "$T/a$i.eml"
		post yes@example.org "" "b$i."; cp "$T/post.eml" "$T/b$i.eml"
		i=$((i + 1))
	done
	lg train -q --list a --ham "$T"/a?.eml &&
	    lg train -q --list b --ham "$T"/b?.eml
	check "train of lists a and b exits 0" test $? -eq 0
	rm -f "$T/tokens/a.kch" "$T/tokens/b.kch"
	: > "$T/calls"
	lg sync -q > /dev/null 2>&1
	check "sync of every list exits 0" test $? -eq 0
	check "... list b's check asked after list a's timed out" \
	    test "$(grep -c ' b$' "$T/calls")" -eq 5
	check "... and list b learnt member:yes from its 5 posts" \
	    test "$(token_counts b member:yes "$T/b0.eml")" = "0 5"
	# listgate web, one process for days: a check that hung through
	# three of its syncs is asked again by the next one
	if ! command -v curl > /dev/null 2>&1; then
		echo "# SKIP listgate web's syncs: no curl"
		echo "1..$n"
		[ $fails -eq 0 ]
		exit
	fi
	cat > "$T/hang.sh" <<EOS
#!/bin/sh
echo "\$1" >> "$T/wcalls"
[ -e "$T/hang" ] && sleep 5
exit 0
EOS
	printf '#!/bin/sh\ncat > /dev/null\n' > "$T/release.sh"
	chmod +x "$T/hang.sh" "$T/release.sh"
	printf 'member_check = %s/hang.sh {sender}\nmember_check_ms = 200\nrelease = %s/release.sh\n' \
	    "$T" "$T" > "$CONF/lists/w.conf"
	printf 'web-secret-123\n' | lg user add wu --lists w > /dev/null
	i=0
	while [ $i -lt 4 ]; do
		post yes@example.org "" "w$i."
		eval "wid$i=\$(\"\$top_builddir/tests/qhold\" w \"\$T/post.eml\" 0.9)" ||
		    exit 99
		i=$((i + 1))
	done
	"$LISTGATE" --allow-root --config "$CONF" web --listen 127.0.0.1:0 \
	    2> "$T/web.log" &
	webpid=$!
	i=0
	while ! grep -q 'listening on' "$T/web.log" && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	URL=http://127.0.0.1:$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' \
	    "$T/web.log" | head -n 1)
	# approve post $1 and wait until the web's sync has learnt it
	wapprove() {
		curl -s -o /dev/null -u wu:web-secret-123 -d action=approve \
		    "$URL/api/lists/w/held/$1"
		j=0
		while [ $j -lt 100 ]; do
			lg sync --check --list w > "$T/wcheck" 2>&1
			grep -q 'journal position \([0-9]*\) of \1$' \
			    "$T/wcheck" && return
			sleep 0.1
			j=$((j + 1))
		done
	}
	: > "$T/wcalls"
	touch "$T/hang"
	wapprove "$wid0"; wapprove "$wid1"; wapprove "$wid2"
	rm -f "$T/hang"
	wapprove "$wid3"
	kill "$webpid"
	wait "$webpid" 2>/dev/null
	nc=$(wc -l < "$T/wcalls")
	check "listgate web: a check that hung through 3 syncs is asked again by the next ($nc calls)" \
	    test "$nc" -eq 4
	check "... which learns its member:yes" \
	    test "$(token_counts w member:yes "$T/post.eml")" = "0 1"
	echo "1..$n"
	[ $fails -eq 0 ]
	exit
fi

# --- the exits ----------------------------------------------------------
post yes@example.org
check "exit 0: member:yes" test "$(mtoks "$T/post.eml")" = "member:yes "
check "... the command got {sender} and {list}" \
    grep -qx "yes@example.org m" "$T/calls"
post no@example.org
check "exit 1: member:no" test "$(mtoks "$T/post.eml")" = "member:no "
post three@example.org
check "exit 3: no evidence" test -z "$(mtoks "$T/post.eml")"
lg tokens --list m "$T/post.eml" > /dev/null
check "... and the post is tokenized all the same (exit 0)" test $? -eq 0
post sig@example.org
check "killed by a signal: no evidence" test -z "$(mtoks "$T/post.eml")"

# --- the time-out -------------------------------------------------------
post slow@example.org
t0=$(now)
out=$(mtoks "$T/post.eml")
ms=$(( ($(now) - t0) / 1000000 ))
check "a check slower than member_check_ms: no evidence" test -z "$out"
echo "# a 30 s check with member_check_ms = 300: the post took $ms ms"
check "... the post waited about the time-out, not the check ($ms ms)" \
    test "$ms" -lt 2000
sleep 0.2
# (a killed orphan may linger as a zombie until init reaps it)
st=$(sed 's/^[0-9]* ([^)]*) \(.\).*/\1/' "/proc/$(cat "$T/sleep.pid")/stat" 2>/dev/null)
check "... and the check's whole process group was killed (state '$st')" \
    test -z "$st" -o "$st" = Z

# --- started with SIGCHLD ignored -------------------------------------------
# (a parent's SIG_IGN is kept across exec: the children would reap
# themselves, and the check's answer be lost)
if command -v python3 > /dev/null 2>&1; then
	post yes@example.org
	python3 -c 'import os, signal, sys
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
os.execv(sys.argv[1], sys.argv[1:])' "$LISTGATE" --allow-root --config "$CONF" \
	    tokens --list m "$T/post.eml" | grep '^member:' > "$T/out"
	check "started with SIGCHLD ignored: member:yes all the same" \
	    test "$(cat "$T/out")" = "member:yes"
else
	echo "# SKIP SIGCHLD ignored: no python3"
fi

# --- a stop of the filter during a check ---------------------------------------
# (member_check_ms 3000: SIGTERM while the check runs defers the post
# and kills the check's group; also when whoever started the filter
# blocked SIGALRM and SIGTERM, a mask exec keeps)
printf 'member_check = %s/check.sh {sender} {list}\nmember_check_ms = 3000\n' \
    "$T" > "$CONF/lists/wd.conf"
post slow@example.org
for how in plain blocked; do
	if [ $how = blocked ]; then
		command -v python3 > /dev/null 2>&1 || {
			echo "# SKIP a stop with SIGTERM blocked: no python3"
			break
		}
		set -- python3 -c 'import os, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM, signal.SIGTERM})
os.execv(sys.argv[1], sys.argv[1:])'
	else
		set --
	fi
	rm -f "$T/sleep.pid"
	"$@" "$LISTGATE" --allow-root --config "$CONF" filter --list wd \
	    --mta qmail < "$T/post.eml" 2> "$T/err" &
	fpid=$!
	i=0
	while [ ! -s "$T/sleep.pid" ] && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	kill -TERM "$fpid"
	wait "$fpid"
	rc=$?
	check "a stop ($how) during member_check: deferred (exit $rc)" \
	    test "$rc" -eq 111
	check "... saying so" grep -q "terminated by a signal, deferring" "$T/err"
	sleep 0.2
	st=$(sed 's/^[0-9]* ([^)]*) \(.\).*/\1/' \
	    "/proc/$(cat "$T/sleep.pid" 2>/dev/null)/stat" 2>/dev/null)
	check "... and the check's group was killed (state '$st')" \
	    test -s "$T/sleep.pid" -a \( -z "$st" -o "$st" = Z \)
done
set --

# --- a list's timeout shorter than member_check_ms ------------------------------
# (timeout 2 s, member_check_ms 5000: the check gets half of what is
# left before the watchdog, less a second, and the post is decided as
# without it, where the watchdog deferred it for as long as the check
# hung)
printf 'timeout = 2\n' > "$CONF/lists/wd.conf"
lg train -q --list wd --ham "$T/post.eml" || exit 99
lg filter --list wd --mta qmail < "$T/post.eml" 2> "$T/err.off"
off_rc2=$?
rm -f "$T/sleep.pid"
printf 'member_check = %s/check.sh {sender} {list}\nmember_check_ms = 5000\ntimeout = 2\n' \
    "$T" > "$CONF/lists/wd.conf"
t0=$(now)
lg filter --list wd --mta qmail < "$T/post.eml" 2> "$T/err"
rc=$?
ms=$(( ($(now) - t0) / 1000000 ))
check "timeout 2 s, a check that hangs: no watchdog ($ms ms)" \
    sh -c "! grep -q 'timed out' '$T/err' && test $ms -lt 1900"
check "... the outcome of the post without the check (exit $rc)" \
    test "$rc" -eq "$off_rc2"
sleep 0.2
st=$(sed 's/^[0-9]* ([^)]*) \(.\).*/\1/' \
    "/proc/$(cat "$T/sleep.pid" 2>/dev/null)/stat" 2>/dev/null)
check "... and the check's group was killed (state '$st')" \
    test -s "$T/sleep.pid" -a \( -z "$st" -o "$st" = Z \)

# --- a post padded past the token cap ------------------------------------------
# (20000 tokens a post: the answer still counts, not crowded out by
# thousands of words of the post's own)
{
	printf 'From: <yes@example.org>\nSubject: padded\n\n'
	awk 'BEGIN { for (i = 0; i < 21000; i++) printf "w%dq ", i; print "" }'
} > "$T/padded.eml"
check "a post with more words than the token cap: member:yes all the same" \
    test "$(mtoks "$T/padded.eml")" = "member:yes "

# --- a program that cannot start ----------------------------------------
cat > "$CONF/lists/gone.conf" <<EOF2
member_check = $T/no-such-program {sender}
EOF2
post yes@example.org
check "a member_check that cannot start: no evidence" \
    test -z "$(mtoks "$T/post.eml" gone)"
lg tokens --list gone "$T/post.eml" > /dev/null
check "... and the post is tokenized all the same" test $? -eq 0
printf 'member_check = %s/check.sh {sender}\n' "$T" > "$CONF/lists/bad.conf"
printf 'member_check = check.sh {sender}\n' > "$CONF/lists/bad.conf"
lg config check --list bad > "$T/out" 2>&1
check "a relative member_check program is a configuration error" \
    test $? -ne 0
check "... naming the file and the key" \
    grep -q "bad.conf:1.*member_check" "$T/out"
rm -f "$CONF/lists/bad.conf"

# --- which sender ---------------------------------------------------------
post no@example.org "<yes@example.org>"
check "Return-Path before From" test "$(mtoks "$T/post.eml")" = "member:yes "
post yes@example.org "<>"
check "a null Return-Path (a bounce): nobody to ask" \
    test -z "$(mtoks "$T/post.eml")"
post "-oQ/tmp/x@example.org"
check "an address starting with '-' is never handed over" \
    test -z "$(mtoks "$T/post.eml")"
check "... and the command never saw it" \
    sh -c "! grep -q -- '-oQ' '$T/calls'"

# --- learnt and shown like any other token ----------------------------------
i=0
while [ $i -lt 8 ]; do
	post yes@example.org "" "$i."
	cp "$T/post.eml" "$T/ham$i.eml"
	post no@example.org "" "$i."
	cp "$T/post.eml" "$T/spam$i.eml"
	i=$((i + 1))
done
lg train -q --list m --ham "$T"/ham?.eml && lg train -q --list m --spam "$T"/spam?.eml
check "train with member_check exits 0" test $? -eq 0
check "train learnt member:yes from the ham" \
    test "$(learnt member:yes "$T/ham0.eml")" = "0 8"
check "... and member:no from the spam" \
    test "$(learnt member:no "$T/spam0.eml")" = "8 0"
post yes@example.org
lg score --list m -v "$T/post.eml" > "$T/out"
check "score -v shows member:yes among the deciding tokens" \
    grep -q "^    member:yes 0\.[0-9]* 0 8$" "$T/out"

# --- filter: the envelope sender decides ------------------------------------
post other@example.org
: > "$T/calls"
lg filter --list m --mta qmail -f yes@example.org < "$T/post.eml"
rc=$?
check "filter -f a member: the post passes (exit 0)" test "$rc" -eq 0
check "... the envelope sender was asked about, not From" \
    grep -q "^yes@example.org" "$T/calls"
lg filter --list m --mta qmail -f no@example.org < "$T/post.eml"
rc=$?
check "filter -f a non-member: held (no database here: deferred, 111)" \
    test "$rc" -eq 111
# the summary line says what was asked (stderr when it is a terminal)
script -qc "'$LISTGATE' --allow-root --config '$CONF' filter --list m --mta qmail -f yes@example.org < '$T/post.eml'" \
    /dev/null > "$T/tty" 2>&1
check "the filter's log line says what member_check answered" \
    grep -q 'action=pass .* evidence="member=yes"' "$T/tty"
post three@example.org
script -qc "'$LISTGATE' --allow-root --config '$CONF' filter --list m --mta qmail < '$T/post.eml'" \
    /dev/null > "$T/tty" 2>&1
check "... and when it gave no evidence" \
    grep -q 'evidence="member=exit 3"' "$T/tty"

# --- cache ------------------------------------------------------------------
printf 'member_cache_s = 3600\n' >> "$CONF/lists/m.conf"
mkdir -p "$T/tokens"
post yes@example.org
: > "$T/calls"
mtoks "$T/post.eml" > /dev/null
mtoks "$T/post.eml" > "$T/second"
check "with member_cache_s the second post is answered from the cache" \
    test "$(wc -l < "$T/calls")" -eq 1
check "... with the same token" grep -q "member:yes" "$T/second"
check "... kept in tokens_dir/m.members" test -s "$T/tokens/m.members"
check "... which names no sender" \
    sh -c "! grep -q 'example.org' '$T/tokens/m.members'"

pg_part
echo "1..$n"
[ $fails -eq 0 ]

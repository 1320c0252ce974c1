#!/bin/sh
# evidence_dnsbl.sh - DNSBL answers as evidence, never a block, against a
# real DNS server on loopback (Debian's rbldnsd), never a public one:
#   - a list trained on ham from a listed relay learns the listing as
#     hammy, and then passes a ham post from that relay (the way a big
#     list host was once listed by its neighbourhood);
#   - every zone is asked at once: one answer per listing zone;
#   - the relay asked about is the one our MTA saw, whatever the client
#     said in HELO (a PTR record of "helo" included);
#   - a slow (stopped) or dead server costs at most dns_timeout_ms, and
#     the post's score and outcome are those without DNSBL;
#   - of the system's resolvers, a first that does not answer leaves
#     the next one time to (as root, in namespaces of the test's own).
# Exits 77 without rbldnsd (tests/run-all.sh installs it).
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
RBLDNSD=${RBLDNSD:-/usr/sbin/rbldnsd}
if [ ! -x "$RBLDNSD" ]; then
	echo "# SKIP: rbldnsd not installed (Debian package rbldnsd)"
	exit 77
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-dnsbl.XXXXXX") || exit 99
rpid=
cleanup() {
	if [ -n "$rpid" ]; then
		kill -CONT "$rpid" 2>/dev/null
		kill "$rpid" 2>/dev/null
		wait "$rpid" 2>/dev/null
	fi
	rm -rf "$T"
}
trap cleanup EXIT INT TERM
. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
now() { date +%s%N; }

# --- the zones and the server ---------------------------------------------
# bl.test lists the list host 66.187.233.211 (and its /24), as a
# neighbourhood listing would; nx.test lists nothing these posts use
mkdir -p "$T/zones" && chmod 755 "$T" "$T/zones"
printf '66.187.233.0/24\n' > "$T/zones/bl"
printf '66.187.233.211 :127.0.0.4:\n' > "$T/zones/bl4"
printf '192.0.2.99\n' > "$T/zones/nx"
# err.test answers as Spamhaus does a query it refuses (through a public
# resolver: 127.255.255.254; too many: .255) and lists one address with
# a code outside 127.0.0.x, as some zones do
printf '66.187.233.211 :127.255.255.254:\n66.187.233.212 :127.255.255.255:\n66.187.233.213 :127.0.1.2:\n' \
    > "$T/zones/err"
# many.test lists 66.187.233.211 under six codes, more than the four a
# zone's answer keeps (as Spamhaus ZEN can: SBL, CSS, XBL, PBL); rbldnsd
# rotates them from one answer to the next, as caching resolvers do
for c in 11 10 2 3 4 9; do
	printf '211.233.187.66 A 127.0.0.%s\n' "$c"
done > "$T/zones/many"
# mute.test never answers (its servers gone, as a defunct zone's are):
# rbldnsd drops every query for it
printf '66.187.233.0/24\n' > "$T/zones/mute"
printf '0.0.0.0/0 :ignore\n' > "$T/zones/mute.acl"
chmod 644 "$T/zones/"*
user=
[ "$(id -u)" -eq 0 ] && user="-u nobody"
port=
for try in 1 2 3 4 5 6 7 8; do
	p=$((20000 + ($$ * 7 + try * 613) % 30000))
	# shellcheck disable=SC2086
	"$RBLDNSD" -n $user -b "127.0.0.1/$p" -w "$T/zones" \
	    bl.test:ip4set:bl bl4.test:ip4set:bl4 nx.test:ip4set:nx \
	    err.test:ip4set:err many.test:generic:many \
	    mute.test:ip4set:mute mute.test:acl:mute.acl \
	    > "$T/rbldnsd.log" 2>&1 &
	rpid=$!
	i=0
	while [ $i -lt 50 ] && ! grep -q "started" "$T/rbldnsd.log"; do
		kill -0 "$rpid" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	if grep -q "started" "$T/rbldnsd.log"; then
		port=$p
		break
	fi
	wait "$rpid" 2>/dev/null
	rpid=
done
if [ -z "$port" ]; then
	echo "could not start rbldnsd:"
	sed 's/^/# /' "$T/rbldnsd.log"
	exit 99
fi
echo "# rbldnsd on 127.0.0.1:$port (pid $rpid)"

CONF=$T/conf
mkdir -p "$CONF/lists"
# conf: DNSBL on; conf-off: the same without it
cat > "$CONF/listgate.conf" <<EOF2
tokens_dir = $T/tokens
dnsbl_zones = bl.test, bl4.test, nx.test
dns_server = 127.0.0.1:$port
dns_timeout_ms = 300
EOF2
mkdir -p "$T/conf-off/lists"
printf 'tokens_dir = %s/tokens\n' "$T" > "$T/conf-off/listgate.conf"
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
lgoff() { "$LISTGATE" --allow-root --config "$T/conf-off" "$@"; }

# a post handed over by relay $2 ($1 its name) with words $3
post() {
	printf 'Received: from %s (%s [%s]) by mx.example.org (Postfix) with ESMTP id 4F%s; Mon, 2 Dec 2024 10:00:00 +0000\n' \
	    "$1" "$1" "$2" "$$"
	printf 'From: someone%s@example.net\nSubject: %s\n\n%s\n' "$4" "$3" "$3"
}
HAM="the build fails on sparc again, patch attached for the configure script"
SPAM="cheap watches and pills, click here now, limited offer, buy today"
i=0
while [ $i -lt 12 ]; do
	post listman.example.com 66.187.233.211 "$HAM version $i" $i > "$T/ham$i.eml"
	post 066.dsl.surewest.net 66.60.167.$((i + 10)) "$SPAM number $i" $i > "$T/spam$i.eml"
	i=$((i + 1))
done

# --- asked and answered --------------------------------------------------------
lg tokens --list dev "$T/ham0.eml" | grep '^dnsbl:' > "$T/out"
check "the listed relay gets one token per listing zone" \
    test "$(tr '\n' ' ' < "$T/out")" = "dnsbl:bl.test:127.0.0.2 dnsbl:bl4.test:127.0.0.4 "
lg tokens --list dev "$T/spam0.eml" | grep -c '^dnsbl:' > "$T/out"
check "an unlisted relay gets none" test "$(cat "$T/out")" -eq 0

# the error codes of a zone that refuses the query are no listing; a
# listing's code is kept whole
mkdir -p "$T/conf-err/lists"
printf 'tokens_dir = %s/tokens\ndnsbl_zones = err.test\ndns_server = 127.0.0.1:%s\n' \
    "$T" "$port" > "$T/conf-err/listgate.conf"
for a in 211 212 213; do
	post listman.example.com 66.187.233.$a "$HAM" e$a > "$T/e$a.eml"
	"$LISTGATE" --allow-root --config "$T/conf-err" tokens --list dev \
	    "$T/e$a.eml" | grep '^dnsbl:' | tr '\n' ' ' > "$T/e$a.out"
done
check "127.255.255.254 (a refused query) is no listing" test ! -s "$T/e211.out"
check "... nor is 127.255.255.255 (too many queries)" test ! -s "$T/e212.out"
check "... and a code 127.0.1.2 is kept whole" \
    test "$(cat "$T/e213.out")" = "dnsbl:err.test:127.0.1.2 "
# the filter's log line tells a refusal from "not listed" (a zone that
# refuses the site's resolver would otherwise look as if it worked)
for a in 211 213; do
	script -qc "'$LISTGATE' --allow-root --config '$T/conf-err' filter --list dev --mta qmail < '$T/e$a.eml'" \
	    /dev/null > "$T/e$a.tty" 2>&1
done
check "the filter's log line says a zone refused the query" \
    grep -q 'evidence="dnsbl=0/1+refused"' "$T/e211.tty"
check "... and not of a zone that answered" \
    grep -q 'evidence="dnsbl=1/1"' "$T/e213.tty"

# a zone that answers with more codes than are kept: the lowest four,
# the same ones whatever order the records come in (each ask of the
# same relay gives the same tokens, or what is learnt is not what is
# scored)
mkdir -p "$T/conf-many/lists"
printf 'tokens_dir = %s/tokens\ndnsbl_zones = many.test\ndns_server = 127.0.0.1:%s\n' \
    "$T" "$port" > "$T/conf-many/listgate.conf"
: > "$T/many.out"
for a in 1 2 3 4; do
	"$LISTGATE" --allow-root --config "$T/conf-many" tokens --list dev \
	    "$T/e211.eml" | grep '^dnsbl:' | tr '\n' ' ' >> "$T/many.out"
	echo >> "$T/many.out"
done
sort -u "$T/many.out" > "$T/many.u"
check "six codes: the four lowest, the same each time" \
    test "$(cat "$T/many.u")" = "dnsbl:many.test:127.0.0.2 dnsbl:many.test:127.0.0.3 dnsbl:many.test:127.0.0.4 dnsbl:many.test:127.0.0.9 "

# a listed relay whose own PTR record says "helo", and whose HELO is an
# unlisted address: sendmail writes "from [HELO] (helo [IP] (may be
# forged))", and the address asked about is the one our MTA saw, not
# the one the client chose
printf 'Received: from [66.60.167.66] (helo [66.187.233.211] (may be forged)) by mx.example.org (8.15.2/8.15.2) with ESMTP id x1; Mon, 2 Dec 2024 10:00:00 +0000\nFrom: a@example.net\nSubject: hi\n\n%s\n' \
    "$HAM" > "$T/helo.eml"
lg tokens --list dev "$T/helo.eml" > "$T/out"
check "a relay named \"helo\" is asked about, not its HELO literal" \
    grep -qx 'src:ip:66.187.233.211' "$T/out"
check "... and its listings count" test "$(grep '^dnsbl:' "$T/out" |
    tr '\n' ' ')" = "dnsbl:bl.test:127.0.0.2 dnsbl:bl4.test:127.0.0.4 "

# a listed relay whose HELO is several words with a " by " and a
# loopback literal of its own (Postfix writes such a HELO whole), above
# a Received line of its own making that names an unlisted host: the
# relay asked about is still the one our MTA saw, not the line below
printf 'Received: from x [127.0.0.1] by y (unknown [66.187.233.211]) by mx.example.org (Postfix) with ESMTP id 4F2; Mon, 2 Dec 2024 10:00:00 +0000\nReceived: from clean.example.net (clean.example.net [66.60.167.66]) by x; Mon, 2 Dec 2024 09:59:00 +0000\nFrom: a@example.net\nSubject: hi\n\n%s\n' \
    "$HAM" > "$T/byhelo.eml"
lg tokens --list dev "$T/byhelo.eml" > "$T/out"
check "a HELO with \" by \" in it does not choose the relay asked about" \
    grep -qx 'src:ip:66.187.233.211' "$T/out"
check "... and the relay's listings count" test "$(grep '^dnsbl:' "$T/out" |
    tr '\n' ' ')" = "dnsbl:bl.test:127.0.0.2 dnsbl:bl4.test:127.0.0.4 "

# a post padded past the token cap (20000 a post) keeps the listings:
# words of its own do not crowd them out
{
	post listman.example.com 66.187.233.211 "padded" pad
	awk 'BEGIN { for (i = 0; i < 21000; i++) printf "w%dq ", i; print "" }'
} > "$T/padded.eml"
lg tokens --list dev "$T/padded.eml" | grep '^dnsbl:' > "$T/out"
check "a post with more words than the token cap keeps its listings" \
    test "$(tr '\n' ' ' < "$T/out")" = "dnsbl:bl.test:127.0.0.2 dnsbl:bl4.test:127.0.0.4 "

# a zone too long to ask about an IPv6 relay (64 bytes of nibbles before
# it pass the 253 of a DNS name; an IPv4 relay's query fits): nothing is
# asked, and nothing is waited for
long=$(printf '%063d' 0 | tr 0 a)
long="$long.$long.$long.longzone"
mkdir -p "$T/conf-long/lists"
printf 'tokens_dir = %s/tokens\ndnsbl_zones = %s\ndns_server = 127.0.0.1:%s\ndns_timeout_ms = 3000\n' \
    "$T" "$long" "$port" > "$T/conf-long/listgate.conf"
printf 'Received: from mail.example.com (mail.example.com [IPv6:2a00:1450:4001:81c::2005]) by mx.example.org (Postfix) with ESMTP id 4F1; Mon, 2 Dec 2024 10:00:00 +0000\nFrom: a@example.net\nSubject: v6\n\n%s\n' \
    "$HAM" > "$T/v6.eml"
t0=$(now)
"$LISTGATE" --allow-root --config "$T/conf-long" tokens --list dev "$T/v6.eml" \
    > "$T/out"
ms=$(( ($(now) - t0) / 1000000 ))
check "a zone an IPv6 query cannot fit costs no wait ($ms ms, dns_timeout_ms 3000)" \
    test "$ms" -lt 1500
check "... and gives no token" test "$(grep -c '^dnsbl:' "$T/out")" -eq 0

# one zone that never answers among zones that do: a command handling
# many posts stops asking that zone after 3 time-outs in a row, as it
# does a resolver that never answers, and goes on asking the others
mkdir -p "$T/conf-mute/lists"
printf 'tokens_dir = %s/tokens\ndnsbl_zones = bl.test mute.test\ndns_server = 127.0.0.1:%s\ndns_timeout_ms = 300\n' \
    "$T" "$port" > "$T/conf-mute/listgate.conf"
i=0
while [ $i -lt 12 ]; do
	echo "From someone@example.net Mon Dec  2 10:00:00 2024"
	cat "$T/ham$i.eml"
	echo
	i=$((i + 1))
done > "$T/mute.mbox"
t0=$(now)
"$LISTGATE" --allow-root --config "$T/conf-mute" tokens --list dev \
    "$T/mute.mbox" > "$T/out"
ms=$(( ($(now) - t0) / 1000000 ))
echo "# 12 posts, one of two zones mute, dns_timeout_ms = 300: $ms ms"
check "a zone that never answers is given up after 3 time-outs ($ms ms)" \
    test "$ms" -lt 2400
check "... and the zone that answers is asked about every post" \
    test "$(grep -c '^dnsbl:bl.test:127.0.0.2$' "$T/out")" -eq 12

# --- learnt as evidence: the listing turns hammy ----------------------------------
lg train -q --list dev --ham "$T"/ham[0-9].eml "$T"/ham1[01].eml &&
    lg train -q --list dev --spam "$T"/spam[0-9].eml "$T"/spam1[01].eml
check "train with DNSBL exits 0" test $? -eq 0
# (the token file keeps a key per token: `tokens --keys` gives the
# listing's, from a post that carries it)
k=$(lg tokens --list dev --keys "$T/ham0.eml" |
    awk '$2 == "dnsbl:bl.test:127.0.0.2" { print $1; exit }')
lg score --list dev --db-dump | awk -v k="$k" '$3 == k { print $1, $2 }' > "$T/out"
check "the listing was learnt from the ham" test "$(cat "$T/out")" = "0 12"
post listman.example.com 66.187.233.211 \
    "ping: anyone seen the sparc configure failure since the patch" 99 \
    > "$T/new.eml"
lg score --list dev -v "$T/new.eml" > "$T/out"
check "a new ham post from the listed list host scores ham" \
    grep -q "^ham " "$T/out"
check "... its listing votes hammy" \
    grep -q "^    dnsbl:bl.test:127.0.0.2 0\.0[0-9]* 0 12$" "$T/out"
lg filter --list dev --mta qmail < "$T/new.eml"
check "... and the filter passes it (exit 0)" test $? -eq 0

# --- the same outcome as without DNSBL when the server is slow or dead --------------
lgoff score --list dev "$T/new.eml" > "$T/off"
lgoff filter --list dev --mta qmail < "$T/new.eml"
off_rc=$?
kill -STOP "$rpid"
t0=$(now)
lg score --list dev "$T/new.eml" > "$T/slow"
ms=$(( ($(now) - t0) / 1000000 ))
echo "# a stopped server, three zones, dns_timeout_ms = 300: score took $ms ms"
check "a stopped server costs at most the time-out, all zones at once ($ms ms)" \
    test "$ms" -lt 900
check "... and the score is the one without DNSBL" cmp -s "$T/off" "$T/slow"
t0=$(now)
lg filter --list dev --mta qmail < "$T/new.eml"
rc=$?
ms=$(( ($(now) - t0) / 1000000 ))
check "... and so is the filter's outcome (exit $rc, $ms ms)" \
    test "$rc" -eq "$off_rc" -a "$ms" -lt 900
# a list whose timeout is shorter than dns_timeout_ms: the evidence is
# cut short within the watchdog's time, and the post passes as without
# DNSBL, where the watchdog deferred it for as long as the server hung
mkdir -p "$T/conf-short/lists"
printf 'tokens_dir = %s/tokens\ndnsbl_zones = bl.test\ndns_server = 127.0.0.1:%s\ndns_timeout_ms = 5000\ntimeout = 2\n' \
    "$T" "$port" > "$T/conf-short/listgate.conf"
t0=$(now)
"$LISTGATE" --allow-root --config "$T/conf-short" filter --list dev \
    --mta qmail < "$T/new.eml" 2> "$T/short.err"
rc=$?
ms=$(( ($(now) - t0) / 1000000 ))
check "timeout 2 s, dns_timeout_ms 5000, a stopped server: the filter's outcome stands (exit $rc, $ms ms)" \
    test "$rc" -eq "$off_rc" -a "$ms" -lt 1900
kill -CONT "$rpid"
kill "$rpid"
wait "$rpid" 2>/dev/null
rpid=
t0=$(now)
lg score --list dev "$T/new.eml" > "$T/dead"
ms=$(( ($(now) - t0) / 1000000 ))
check "a dead server: the score without DNSBL ($ms ms)" \
    cmp -s "$T/off" "$T/dead"
check "... within the time-out" test "$ms" -lt 900
# many posts in one process against the stopped server: each waits the
# time-out until EVIDENCE_GIVE_UP in a row, then none
i=0
while [ $i -lt 8 ]; do cp "$T/new.eml" "$T/many$i.eml"; i=$((i + 1)); done
"$RBLDNSD" -n $user -b "127.0.0.1/$port" -w "$T/zones" bl.test:ip4set:bl \
    > "$T/rbldnsd.log" 2>&1 &
rpid=$!
sleep 0.5
kill -STOP "$rpid"
t0=$(now)
lg score --list dev "$T"/many?.eml > /dev/null
ms=$(( ($(now) - t0) / 1000000 ))
echo "# 8 posts in one score run against a stopped server: $ms ms"
check "a batch against a stopped server gives up after 3 time-outs ($ms ms)" \
    test "$ms" -lt 2500

# --- the system's resolvers, the first of which does not answer --------------
# (no dns_server: resolv.conf names two; the first never answers, as
# when its host is down.  The second must be asked within the time, not
# after it.  Needs root: a network and mount namespace of the test's own,
# with resolv.conf bound over and rbldnsd on port 53 of 127.0.0.2 and .3)
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null 2>&1 &&
    command -v ip >/dev/null 2>&1 && unshare -n -m true 2>/dev/null; then
	mkdir -p "$T/conf-sys/lists"
	printf 'tokens_dir = %s/tokens\ndnsbl_zones = bl.test\ndns_timeout_ms = 1000\n' \
	    "$T" > "$T/conf-sys/listgate.conf"
	printf 'nameserver 127.0.0.2\nnameserver 127.0.0.3\n' > "$T/resolv.conf"
	cat > "$T/sys.sh" <<EOS
ip link set lo up || exit 1
mount --bind "$T/resolv.conf" /etc/resolv.conf || exit 1
"$RBLDNSD" -n $user -b 127.0.0.2/53 -w "$T/zones" bl.test:ip4set:bl \
    > "$T/r2.log" 2>&1 &
p2=\$!
"$RBLDNSD" -n $user -b 127.0.0.3/53 -w "$T/zones" bl.test:ip4set:bl \
    > "$T/r3.log" 2>&1 &
p3=\$!
i=0
while [ \$i -lt 50 ] && ! { grep -q started "$T/r2.log" &&
    grep -q started "$T/r3.log"; }; do
	sleep 0.1
	i=\$((i + 1))
done
kill -STOP \$p2
t0=\$(date +%s%N)
"$LISTGATE" --allow-root --config "$T/conf-sys" tokens --list dev \
    "$T/new.eml" > "$T/sys.out"
echo \$(( (\$(date +%s%N) - t0) / 1000000 )) > "$T/sys.ms"
kill -CONT \$p2
kill \$p2 \$p3
wait
EOS
	unshare -n -m sh "$T/sys.sh"
	ms=$(cat "$T/sys.ms" 2>/dev/null)
	check "system resolvers, the first mute: the second answers in time (${ms:-?} ms)" \
	    grep -qx 'dnsbl:bl.test:127.0.0.2' "$T/sys.out"
else
	echo "# SKIP system resolvers: needs root, unshare and ip"
fi

echo "1..$n"
[ $fails -eq 0 ]

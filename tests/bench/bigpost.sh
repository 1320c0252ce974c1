#!/bin/sh
# bigpost.sh - a 20 MB post must score in under 1 s and 64 MiB
#
# Builds a post of about 20 MB (a real header, a text part and a base64
# attachment of random bytes), trains a throwaway list on a few small
# posts, then scores the big post with `listgate score` three times read
# from stdin and three times named as a file (mapped), and passes it
# three times through `listgate filter --mta qmail` from a file and three
# times from a pipe (the MTAs' ways: the whole post is read and spooled;
# the list's ham_cutoff is 1, so it passes without a database), each under
# /usr/bin/time -v.  Prints wall time and peak
# RSS of every run and fails when the worst exceeds the limits.
#
#   sh tests/bench/bigpost.sh [--listgate PATH] [--size BYTES]
#
# Works in a mktemp -d directory, removed at the end; never reads /etc.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
lg=${LISTGATE:-}
size=$((20 * 1024 * 1024))
max_ms=1000
max_kib=$((64 * 1024))

die() { echo "bigpost: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
	case $1 in
	--listgate) [ $# -ge 2 ] || die "--listgate needs a path"; lg=$2; shift ;;
	--size) [ $# -ge 2 ] || die "--size needs bytes"; size=$2; shift ;;
	*) die "usage: sh tests/bench/bigpost.sh [--listgate PATH] [--size BYTES]" ;;
	esac
	shift
done
if [ -z "$lg" ]; then
	if [ -x "$top/listgate" ]; then
		lg=$top/listgate
	elif [ -f "$top/build/Makefile" ]; then
		# build/ brought up to date, as bench.sh does
		(cd "$top/build" && make -s >/dev/null 2>&1) ||
			die "make in $top/build failed"
		lg=$top/build/listgate
	fi
fi
if [ -z "$lg" ] || [ ! -x "$lg" ]; then
	die "no listgate binary (give --listgate PATH)"
fi
if [ ! -x /usr/bin/time ]; then
	[ "$(id -u)" -eq 0 ] || die "needs /usr/bin/time (Debian package time)"
	DEBIAN_FRONTEND=noninteractive apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null
fi
unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGSERVICE 2>/dev/null || true

T=$(mktemp -d "${TMPDIR:-/tmp}/lg-bigpost.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
mkdir -p "$CONF/lists" "$T/train"
printf 'tokens_dir = %s/tokens\n' "$CONF" >"$CONF/listgate.conf"
# every post passes (scores are below 1), so filter needs no database:
# this measures time and memory, not the verdict
printf 'ham_cutoff = 1\nspam_cutoff = 1\n' >"$CONF/lists/big.conf"
LISTGATE_CONFIG=$CONF
export LISTGATE_CONFIG

# small training posts: the list must exist before it can score
i=0
for w in "release notes for the parser" "patch review for header folding" \
    "build failure on arm64 with gcc"; do
	i=$((i + 1))
	cat >"$T/train/ham$i.eml" <<EOF
From: Dev $i <dev$i@project.example.org>
To: dev@lists.example.org
Subject: $w
Message-ID: <ham$i@project.example.org>
Date: Mon, 1 Jan 2024 09:0$i:00 +0000

Hello, about the $w: I pushed a branch with the change and a test.
EOF
done
i=0
for w in "cheap watches online" "you won a lottery prize" \
    "enlarge your income today"; do
	i=$((i + 1))
	cat >"$T/train/spam$i.eml" <<EOF
From: Winner $i <promo$i@offers.example.com>
To: dev@lists.example.org
Subject: $w!!!
Message-ID: <spam$i@offers.example.com>
Date: Mon, 1 Jan 2024 10:0$i:00 +0000

Click here now for $w, limited offer, act now, free money.
EOF
done
"$lg" --config "$CONF" train --list big --ham "$T/train"/ham*.eml >/dev/null ||
	die "training failed"
"$lg" --config "$CONF" train --list big --spam "$T/train"/spam*.eml >/dev/null ||
	die "training failed"

# the big post: a real header, a text part, a base64 attachment
post=$T/big.eml
{
	cat <<'EOF'
Return-Path: <alice@project.example.org>
Received: from mail.project.example.org (mail.project.example.org [192.0.2.10])
	by mx.lists.example.org (Postfix) with ESMTPS id 4F1A2B3C4D
	for <dev@lists.example.org>; Mon,  1 Jan 2024 09:00:00 +0000 (UTC)
From: Alice Developer <alice@project.example.org>
To: dev@lists.example.org
Subject: core dump of the crashing build, as requested
Message-ID: <bigpost.20240101090000@project.example.org>
Date: Mon, 1 Jan 2024 09:00:00 +0000
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="=-=big-post-boundary=-="

This is a multi-part message in MIME format.

--=-=big-post-boundary=-=
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: 8bit

EOF
	n=0
	while [ $n -lt 2000 ]; do
		echo "Line $n of the log: the parser stopped at offset $((n * 977)) while unfolding a header field."
		n=$((n + 1))
	done
	cat <<'EOF'

--=-=big-post-boundary=-=
Content-Type: application/octet-stream; name="core.bin"
Content-Disposition: attachment; filename="core.bin"
Content-Transfer-Encoding: base64

EOF
} >"$post"
have=$(wc -c <"$post")
# base64 grows 57 bytes to 77 (76 + newline); leave room for the trailer
raw=$(( (size - have - 40) * 57 / 77 ))
[ $raw -gt 0 ] || die "--size too small"
head -c "$raw" /dev/urandom | base64 -w 76 >>"$post"
printf '\n--=-=big-post-boundary=-=--\n' >>"$post"
bytes=$(wc -c <"$post")

# run_one MODE: score or filter the post once, print "ms kib what"
run_one() {
	m=$1
	case $m in
	stdin)	set -- "$lg" --config "$CONF" score --list big
		exec 3<"$post" ;;
	file)	set -- "$lg" --config "$CONF" score --list big "$post"
		exec 3</dev/null ;;
	filter|pipe)
		set -- "$lg" --config "$CONF" filter --list big --mta qmail
		exec 3<"$post" ;;
	esac
	t0=$(date +%s%N)
	rc=0
	if [ "$m" = pipe ]; then	# Postfix pipe(8) hands the post over a pipe
		cat <&3 | { /usr/bin/time -v -o "$T/time" "$@" >"$T/out" \
		    2>"$T/err" || echo $? >"$T/rc"; }
		[ ! -f "$T/rc" ] || { rc=$(cat "$T/rc"); rm -f "$T/rc"; }
	else
		/usr/bin/time -v -o "$T/time" "$@" <&3 >"$T/out" 2>"$T/err" ||
			rc=$?
	fi
	t1=$(date +%s%N)
	exec 3<&-
	[ "$rc" -eq 0 ] || die "$* exited $rc: $(cat "$T/err")"
	case $m in filter|pipe) echo "exit 0: passed" >"$T/out" ;; esac
	kib=$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$T/time")
	echo "$(( (t1 - t0) / 1000000 )) $kib $(cat "$T/out")"
}

echo "bigpost: $bytes bytes, listgate $lg"
fail=0
worst_ms=0
worst_kib=0
for mode in stdin stdin stdin file file file filter filter filter \
    pipe pipe pipe; do
	r=$(run_one $mode) || exit 1
	# shellcheck disable=SC2086 # the words of run_one's line
	set -- $r
	printf 'bigpost: %-6s %5d ms %7d KiB peak RSS  (%s %s %s)\n' "$mode" "$1" \
	    "$2" "${3:-?}" "${4:-}" "${5:-}"
	[ "$1" -gt "$worst_ms" ] && worst_ms=$1
	[ "$2" -gt "$worst_kib" ] && worst_kib=$2
done
echo "bigpost: worst $worst_ms ms (limit $max_ms), $worst_kib KiB (limit $max_kib)"
[ "$worst_ms" -lt "$max_ms" ] || { echo "bigpost: FAIL: too slow" >&2; fail=1; }
[ "$worst_kib" -lt "$max_kib" ] || { echo "bigpost: FAIL: too much memory" >&2; fail=1; }
[ $fail -eq 0 ] && echo "bigpost: ok"
exit $fail

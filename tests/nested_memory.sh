#!/bin/sh
# nested_memory.sh - message/rfc822 parts sent in quoted-printable and
# nested in one another, each level with an HTML part whose conversion
# takes all a part may (16 MiB: TSCII grows twelvefold; its tags show no
# text): the nested walks share one set of conversion buffers, so
# `listgate score` on a list of max_scan_bytes = 32 MiB stays within the
# limit below (one set per level: 77 MiB for this 7 MB post, now 40).
# The peak RSS is measured as tests/queue_bigpost.sh does (getrusage of
# the child, through python3); a sanitizer build has a limit of its own.
# Files in a mktemp -d directory.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-nestmem.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
DATA=$top_srcdir/tests/data/train

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }

command -v python3 >/dev/null 2>&1 || { echo "python3 is needed"; exit 99; }
mkdir -p "$CONF/lists" || exit 99
printf 'tokens_dir = tokens\n' > "$CONF/listgate.conf"
printf 'max_scan_bytes = 33554432\n' > "$CONF/lists/big.conf"
lg train -q --list big --spam "$DATA/spam1.eml" > /dev/null &&
    lg train -q --list big --ham "$DATA/ham1.eml" > /dev/null ||
    { echo "# training failed"; exit 99; }

# four levels below the post's own, each quoted-printable that decodes
# to itself (no '=' before two hex digits, lines under 76 bytes)
python3 - "$T/nested.eml" <<'PY' || exit 99
import sys
unit = b"<i x=\x82\x82\x82\x82\x82\x82\x82\x82>\n"
leaf = unit * (1400000 // len(unit))
body = b"Subject: x\nContent-Type: text/html; charset=tscii\n\n" + leaf
for k in range(4):
    body = (b"Subject: l%d\nMIME-Version: 1.0\n"
            b"Content-Type: multipart/mixed; boundary=zz%d\n\n"
            b"--zz%d\nContent-Type: text/html; charset=tscii\n\n" % (k, k, k) +
            leaf + b"--zz%d\nContent-Type: message/rfc822\n"
            b"Content-Transfer-Encoding: quoted-printable\n\n" % k +
            body + b"\n--zz%d--\n" % k)
open(sys.argv[1], "wb").write(
    b"From: a@example.org\nTo: big@example.org\nSubject: nested\n"
    b"MIME-Version: 1.0\nContent-Type: message/rfc822\n"
    b"Content-Transfer-Encoding: quoted-printable\n\n" + body)
PY

if grep -q __asan_init "$LISTGATE" 2>/dev/null; then
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0
	export ASAN_OPTIONS
	lim=75
else
	lim=60
fi

set -- $(python3 -c '
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
' "$LISTGATE" --allow-root --config "$CONF" score --list big "$T/nested.eml")
check "score of the nested post exits 0 (status $1)" test "$1" -eq 0
check "... in at most $lim MiB (peak RSS $2 MiB)" test "$2" -le "$lim"
echo "# score of $(wc -c < "$T/nested.eml") bytes nested 5 deep: peak RSS $2 MiB"

echo "1..$n"
[ "$fails" -eq 0 ]

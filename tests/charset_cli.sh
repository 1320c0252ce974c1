#!/bin/sh
# charset_cli.sh - `listgate tokens` exits 0 whatever charset a post names
# and whatever byte it holds: a sample of the charsets `iconv -l` lists
# (every 40th, and those whose output grows most or is odd: TSCII, UTF-7,
# UTF-16, UCS-4, ISO-2022-JP-3, BIG5-HKSCS), each byte 0x00-0xff repeated
# in a text/plain body, in an RFC 2047 encoded word and in an RFC 2231
# file name, all in one mbox read by one process.  (tests/check_charset
# walks every charset in-process; this is the command's side.)
top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
lg=${LISTGATE:-$top/build/listgate}
T=$(mktemp -d) || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
. "$top/tests/lib.sh"

command -v python3 >/dev/null || { echo "charset_cli: needs python3"; exit 99; }
iconv -l > "$T/names" || { echo "charset_cli: iconv -l failed"; exit 99; }

python3 - "$T/names" "$T/posts.mbox" <<'EOF' > "$T/count" || exit 99
import base64, sys
names = []
for line in open(sys.argv[1]):
    for n in line.replace(",", " ").split():
        n = n.rstrip("/")
        if n:
            names.append(n)
pick = names[::40] + ["TSCII", "UTF-7", "UTF-16", "10646-1:1993",
                      "ISO-2022-JP-3", "BIG5-HKSCS"]
posts = 0
with open(sys.argv[2], "wb") as f:
    for cs in pick:
        for c in range(256):
            b = bytes([c]) * 64
            csb = cs.encode()
            for post in (
                b"Subject: body\nContent-Type: text/plain; charset=\"" +
                csb + b"\"\n\n" + b + b"\n",
                b"Subject: =?" + csb + b"?B?" + base64.b64encode(b) +
                b"?=\n\nword\n",
                b"Subject: name\nContent-Type: application/octet-stream\n"
                b"Content-Disposition: attachment; filename*=" + csb +
                b"''" + b"".join(b"%%%02X" % c for _ in range(64)) +
                b"\n\nname\n"):
                f.write(b"From sample@example.org Mon Jan  1 00:00:00 2024\n")
                f.write(post + b"\n")
                posts += 1
print(posts)
EOF
want=$(cat "$T/count")

"$lg" --allow-root tokens "$T/posts.mbox" > "$T/out" 2> "$T/err"
rc=$?
check "tokens exits 0 on $want posts in sampled charsets (status $rc)" \
    [ $rc -eq 0 ]
[ -s "$T/err" ] && sed 's/^/# stderr: /' "$T/err" | head -5
got=$(grep -c '^# ' "$T/out")
check "every post was tokenized ($got of $want)" [ "$got" -eq "$want" ]
# TSCII's 0x82, the byte that grows twelvefold, whole (64 x 12 bytes:
# one word too long to keep, so a skip token of its length) in the body
# and in the subject
check "TSCII 0x82 x 64 in a body is 768 bytes of text" \
    grep -q "^skip:8 760\$" "$T/out"
check "TSCII 0x82 x 64 in an encoded word is 768 bytes of subject" \
    grep -q "^subj:skip:8 760\$" "$T/out"
check "no anomaly says the text was cut" \
    sh -c "! grep -q '^anomaly:.*truncated' '$T/out'"
echo "1..$n"
[ $fails -eq 0 ]

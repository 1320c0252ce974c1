#!/bin/sh
# web_attack.sh - `listgate web` attacked as a moderator's browser or a
# stranger would: session cookies tossed in by another site under the
# same domain, Host names of another site (DNS rebinding), hostile held
# posts shown on the pages, odd requests.  A private PostgreSQL
# (tests/pg.sh) and curl, as in tests/web_api.sh.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if ! command -v curl >/dev/null 2>&1; then
	echo "web_attack: curl is not installed; skipping" >&2
	exit 77
fi
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
QHOLD=$top_builddir/tests/qhold
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-webattack.XXXXXX") || exit 99
trap 'kill "$webpid" 2>/dev/null; rm -rf "$T"' EXIT INT TERM
webpid=
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/web_lib.sh"
has() { grep -q "$1" "$T/body"; }
status_of() { sql "SELECT status FROM held_posts WHERE id = $1"; }
# log in as $1 with password $2: the session id in $sid, the page's
# CSRF token in $csrf
login() {
	curl -s -o /dev/null -D "$T/lhdr" -d "user=$1&password=$2" "$URL/login"
	sid=$(sed -n 's/^[Ss]et-[Cc]ookie: lgsid=\([0-9a-f]*\);.*/\1/p' "$T/lhdr")
	csrf=$(curl -s -H "Cookie: lgsid=$sid" "$URL/lists" |
	    sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' | head -n 1)
}

web_setup || { echo "Bail out! setup failed"; exit 99; }
id1=$("$QHOLD" dev "$DATA/spam1.eml" 0.98) || exit 99
web_start || { echo "Bail out! listgate web did not start"; exit 99; }
A="-u alice:alice-secret-1"

# --- two session cookies (cookie tossing) ---------------------------------
# carol (list other) has a site under the same parent domain set her
# own session's cookie for it, with a longer path: alice's browser then
# sends it first.  The server took the first lgsid: alice worked in
# carol's session without knowing it.
# fresh sessions: carol's in $sidC, alice's in $sidA (her page's CSRF
# token in $csrfA)
two() {
	login carol carol-secret-1
	sidC=$sid
	login alice alice-secret-1
	sidA=$sid
	csrfA=$csrf
}
two
check "two logins give two sessions" \
    test ${#sidA} -eq 64 -a ${#sidC} -eq 64 -a "$sidA" != "$sidC"
req GET /lists -H "Cookie: lgsid=$sidC; lgsid=$sidA"
check "a page with the cookies of two live sessions: 400 ($code)" \
    test "$code" = 400
check "... saying why" has "cookies of two login sessions"
check "... and it is nobody's page" sh -c "! grep -q 'carol\|alice' '$T/body'"
# neither session lives on: the login page (which a cookie tossed for
# a longer path does not reach) must not send the browser back into
# them, and nobody works on in a session of another's choosing
req GET /lists -H "Cookie: lgsid=$sidA"
check "... and alice's session has ended ($code)" test "$code" = 303
req GET /lists -H "Cookie: lgsid=$sidC"
check "... and carol's ($code)" test "$code" = 303
two
req GET /api/lists -H "Cookie: lgsid=$sidC; lgsid=$sidA"
check "the API too: 400 ($code)" test "$code" = 400
check "... as JSON" has '"error": "the request carries the cookies of two'
two
req POST "/lists/dev/held/$id1" -H "Cookie: lgsid=$sidA; lgsid=$sidC" \
    -d "action=reject&csrf=$csrfA"
check "a decision with them: 400 ($code), nothing decided" \
    sh -c "test $code = 400 && test \"\$(psql -X -A -t -c \"SELECT status FROM held_posts WHERE id = $id1\")\" = held"
two
req GET /lists -H "Cookie: lgsid=$sidC" -H "Cookie: lgsid=$sidA"
check "two Cookie lines are read both: 400 ($code)" test "$code" = 400
two
dead=$(printf '%064d' 0)
req GET /lists -H "Cookie: lgsid=$dead; other=1; lgsid=$sidA"
check "a dead session's cookie before the live one: the live one counts (200, not $code)" \
    sh -c "test $code = 200 && grep -q alice '$T/body'"
req GET /lists -H "Cookie: lgsid=junk; lgsid=\"$sidA\""
check "... a malformed one too, and a quoted value is read (200, not $code)" \
    test "$code" = 200
req GET /lists -H "Cookie: lgsid=$sidA; lgsid=$sidA"
check "the same session twice is one: 200 ($code)" test "$code" = 200
many=
for i in 1 2 3 4 5 6 7 8 9; do
	many="$many lgsid=$(printf '%063d' 0)$i;"
done
req GET /lists -H "Cookie:$many lgsid=$sidA"
check "more session cookies than any browser sends: 400 ($code)" \
    test "$code" = 400
login alice alice-secret-1
req POST "/lists/dev/held/$id1" -H "Cookie: lgsid=$sid" \
    -d "action=reject&csrf=$csrf"
check "alice alone decides: 303 ($code), rejected" \
    sh -c "test $code = 303 && test \"\$(psql -X -A -t -c \"SELECT status FROM held_posts WHERE id = $id1\")\" = rejected"

# a login ends the sessions its request's cookies named: the tossed one
# dies (it once stayed, and every request after the login named two
# live sessions), and so does the browser's own session from before the
# login (a session id stolen before it kept working for hours)
two
curl -s -o /dev/null -D "$T/lhdr" -H "Cookie: lgsid=$sidC; lgsid=$sidA" \
    -d "user=alice&password=alice-secret-1" "$URL/login"
sidA2=$(sed -n 's/^[Ss]et-[Cc]ookie: lgsid=\([0-9a-f]*\);.*/\1/p' "$T/lhdr")
check "a login with a tossed session cookie starts a new session" \
    test ${#sidA2} -eq 64 -a "$sidA2" != "$sidA"
req GET /lists -H "Cookie: lgsid=$sidC; lgsid=$sidA2"
check "... the browser's next request is alice's (200, not $code)" \
    sh -c "test $code = 200 && grep -q alice '$T/body'"
req GET /lists -H "Cookie: lgsid=$sidC"
check "... the tossed session has ended ($code)" test "$code" = 303
req GET /lists -H "Cookie: lgsid=$sidA"
check "... and so has alice's session from before the login ($code)" \
    test "$code" = 303
two
req GET /login -H "Cookie: lgsid=$sidC; lgsid=$sidA"
check "the login page with two live sessions' cookies: the form, saying why ($code)" \
    sh -c "test $code = 200 && grep -q 'name=\"password\"' '$T/body' && grep -q 'cookies of two login sessions' '$T/body'"

# --- an http page of the same host (behind a TLS proxy) -------------------
# port 80 is plain HTTP: whoever is on the network path can answer for
# http://lists.example.org with a page that posts to the https site.
# Its Origin named the right host, and only the host was compared.
login alice alice-secret-1
idO=$("$QHOLD" dev "$DATA/spam3.eml" 0.97) || exit 99
req POST "/api/lists/dev/held/$idO" -H "Cookie: __Host-lgsid=$sid" \
    -H "X-CSRF-Token: $csrf" -H 'X-Forwarded-Proto: https' \
    -H "Origin: http://127.0.0.1:$port" -d action=approve
check "over https (the proxy says), a POST from the http origin of the same host: 403 ($code)" \
    test "$code" = 403
check "... nothing decided" test "$(status_of "$idO")" = held
req POST "/api/lists/dev/held/$idO" -H "Cookie: __Host-lgsid=$sid" \
    -H "X-CSRF-Token: $csrf" -H 'X-Forwarded-Proto: https' \
    -H "Origin: https://127.0.0.1:$port" -d action=reject
check "... from the https origin: 200 ($code)" test "$code" = 200
req POST "/lists/dev/held/$idO" -H "Cookie: lgsid=$sid" \
    -H "Origin: http://127.0.0.1:$port" -d "action=reject&csrf=$csrf"
check "without the proxy saying https, an http Origin is the page's own (303 to the list, $code)" \
    test "$code" = 303

# --- cookie tossing behind a TLS proxy: a __Host- cookie ------------------
# A site under the same parent domain can set an lgsid cookie for the
# whole domain; read beside the moderator's own, two live sessions
# ended both (a way to log anyone out).  Over https the session cookie
# is __Host-lgsid, which a browser takes only with Secure, Path=/ and
# no Domain, so no other host can set it; plain lgsid is not read.
curl -s -o /dev/null -D "$T/lhdr" -H 'X-Forwarded-Proto: https' \
    -d "user=alice&password=alice-secret-1" "$URL/login"
hsid=$(sed -n 's/^[Ss]et-[Cc]ookie: __Host-lgsid=\([0-9a-f]*\);.*/\1/p' "$T/lhdr")
check "over https a login's cookie is __Host-lgsid" test ${#hsid} -eq 64
check "... Secure, Path=/ and no Domain" sh -c \
    "grep -i '^Set-Cookie: __Host-lgsid=' '$T/lhdr' | grep '; Secure' | grep '; Path=/;' | grep -qvi 'domain='"
login carol carol-secret-1
req GET /lists -H 'X-Forwarded-Proto: https' \
    -H "Cookie: lgsid=$sid; __Host-lgsid=$hsid"
check "over https, another site's lgsid cookie (a live session) beside alice's: alice's page ($code)" \
    sh -c "test $code = 200 && grep -q alice '$T/body'"
req GET /lists -H 'X-Forwarded-Proto: https' -H "Cookie: __Host-lgsid=$hsid"
check "... and alice's session lives on ($code)" test "$code" = 200
req GET /lists -H 'X-Forwarded-Proto: https' -H "Cookie: lgsid=$sid"
check "over https a plain lgsid cookie alone is no session ($code)" \
    test "$code" = 303
req GET /lists -H "Cookie: lgsid=$sid"
check "... and over plain HTTP it still is carol's ($code)" \
    sh -c "test $code = 200 && grep -q carol '$T/body'"
req GET /lists -H 'X-Forwarded-Proto: https' -H "Cookie: __Host-lgsid=$hsid"
hcsrf=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$T/body" | head -n 1)
req POST /logout -H 'X-Forwarded-Proto: https' -H "Cookie: __Host-lgsid=$hsid" \
    -H "Origin: https://127.0.0.1:$port" -d "csrf=$hcsrf"
check "a logout over https ends the __Host- cookie (Max-Age=0)" \
    grep -qi '^Set-Cookie: __Host-lgsid=;.*Max-Age=0' "$T/hdr"

# --- odd requests ----------------------------------------------------------------
# raw HTTP/1.1 to the server: METHOD PATH EXTRA-HEADER-LINES BODY; the
# answer's status line in $T/raw
raw() {
	python3 - "$port" "$1" "$2" "$3" "$4" > "$T/raw" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.environ["top_srcdir"], "tests"))
from rawhttp import exchange
import base64
port, method, path, extra, body = sys.argv[1:6]
auth = base64.b64encode(b"alice:alice-secret-1").decode()
req = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
       f"Authorization: Basic {auth}\r\n" + extra.replace("|", "\r\n") +
       "\r\n").encode() + body.encode()
out, _ = exchange(port, req)
print(out.split(b"\r\n")[0].decode("ascii", "replace"))
print(out.split(b"\r\n\r\n", 1)[-1].decode("utf-8", "replace"))
PY
}
id2=$("$QHOLD" dev "$DATA/spam2.eml" 0.97) || exit 99
# libmicrohttpd reads the first Content-Length: a proxy in front that
# reads the last (or a second request hidden in the body) decides what
# the client never sent as a request of its own
raw POST "/api/lists/dev/held/$id2" \
    "Content-Length: 14|Content-Length: 0|Connection: close|" action=approve
check "Content-Length given twice: 400 ($(head -n 1 "$T/raw"))" \
    grep -q '^HTTP/1.1 400' "$T/raw"
check "... saying why" grep -q 'Content-Length is given twice' "$T/raw"
check "... and nothing was decided" test "$(status_of "$id2")" = held
raw POST "/api/lists/dev/held/$id2" "Content-Length: 13|Connection: close|" \
    action=reject
check "with one Content-Length the same request decides (200)" \
    sh -c "grep -q '^HTTP/1.1 200' '$T/raw' && test \"\$(psql -X -A -t -c \"SELECT status FROM held_posts WHERE id = $id2\")\" = rejected"

# Transfer-Encoding beside a Content-Length (or a coding other than
# chunked): libmicrohttpd read the body chunked and kept the connection
# open, a proxy in front that goes by the length sees the chunks' rest
# as a request of its own; an unknown coding's body was read to the
# connection's end, the next request in it.  Each request is followed
# on its connection by a GET that must not be answered.  $1: the extra
# header lines (| for CRLF); the answer's status lines in $T/raw, the
# first answer's body after them
smuggle() {
	python3 - "$port" "/api/lists/dev/held/$id2" "$1" > "$T/raw" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.environ["top_srcdir"], "tests"))
from rawhttp import exchange
import base64
port, path, extra = sys.argv[1:4]
auth = base64.b64encode(b"alice:alice-secret-1").decode()
body = b"e\r\naction=approve\r\n0\r\n\r\n"
nxt = (f"GET /style.css HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
       "Connection: close\r\n\r\n").encode()
req = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
       f"Authorization: Basic {auth}\r\n" + extra.replace("|", "\r\n") +
       "\r\n").encode() + body + nxt
out, closed = exchange(port, req, timeout=5)
if not closed:
    out += b"\r\n(no end: the connection stayed open)"
for line in out.split(b"\r\n"):
    if line.startswith(b"HTTP/1.1 ") or line.startswith(b"(no end"):
        print(line.decode("ascii", "replace"))
print(out.split(b"\r\n\r\n", 1)[-1].decode("utf-8", "replace"))
PY
}
id2=$("$QHOLD" dev "$DATA/spam2.eml" 0.97) || exit 99
smuggle "Content-Length: 3|Transfer-Encoding: chunked|"
check "Transfer-Encoding and Content-Length: 400 ($(grep '^HTTP\|^(no' "$T/raw" | tr '\n' ' '))" \
    test "$(grep -c '^HTTP/1.1 \|^(no end' "$T/raw")" = 1 -a \
    "$(head -n 1 "$T/raw")" = "HTTP/1.1 400 Bad Request"
check "... saying why" grep -q 'Transfer-Encoding and Content-Length' "$T/raw"
check "... and nothing was decided" test "$(status_of "$id2")" = held
smuggle "Transfer-Encoding: chunked|Content-Length: 3|"
check "... in the other order too ($(grep '^HTTP\|^(no' "$T/raw" | tr '\n' ' '))" \
    test "$(grep -c '^HTTP/1.1 \|^(no end' "$T/raw")" = 1 -a \
    "$(head -n 1 "$T/raw")" = "HTTP/1.1 400 Bad Request"
smuggle "Transfer-Encoding: identity|"
check "a Transfer-Encoding other than chunked: 400 ($(grep '^HTTP\|^(no' "$T/raw" | tr '\n' ' '))" \
    test "$(grep -c '^HTTP/1.1 \|^(no end' "$T/raw")" = 1 -a \
    "$(head -n 1 "$T/raw")" = "HTTP/1.1 400 Bad Request"
smuggle "Transfer-Encoding: chunked|Transfer-Encoding: chunked|"
check "Transfer-Encoding given twice: 400 ($(grep '^HTTP\|^(no' "$T/raw" | tr '\n' ' '))" \
    test "$(grep -c '^HTTP/1.1 \|^(no end' "$T/raw")" = 1 -a \
    "$(head -n 1 "$T/raw")" = "HTTP/1.1 400 Bad Request"
check "... and nothing was decided by any of them" test "$(status_of "$id2")" = held
smuggle "Transfer-Encoding: chunked|"
check "chunked alone decides, and the next request is answered ($(grep '^HTTP\|^(no' "$T/raw" | tr '\n' ' '))" \
    test "$(grep -c '^HTTP/1.1 ' "$T/raw")" = 2 -a \
    "$(head -n 1 "$T/raw")" = "HTTP/1.1 200 OK" -a "$(status_of "$id2")" = approved

# a blank before a header name's colon: libmicrohttpd kept
# "Transfer-Encoding " as a header of its own and went by the length,
# while a proxy that reads it as Transfer-Encoding (RFC 9112 says to
# refuse it) sees the chunk, a whole approval, as this request's body:
# libmicrohttpd decided it as a request of its own
id3=$("$QHOLD" dev "$DATA/spam3.eml" 0.97) || exit 99
python3 - "$port" "$id3" > "$T/raw" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.environ["top_srcdir"], "tests"))
from rawhttp import exchange
import base64
port, pid = sys.argv[1:3]
auth = base64.b64encode(b"alice:alice-secret-1").decode()
hidden = (f"POST /api/lists/dev/held/{pid} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
          f"Authorization: Basic {auth}\r\nContent-Length: 14\r\n\r\n"
          "action=approve").encode()
assert 16 <= len(hidden) < 256
req = (f"POST /api/lists/dev/held/{pid} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
       f"Authorization: Basic {auth}\r\nTransfer-Encoding : chunked\r\n"
       "Content-Length: 4\r\n\r\n").encode() + \
      b"%02x\r\n" % len(hidden) + hidden + b"\r\n0\r\n\r\n"
out, _ = exchange(port, req, timeout=5)
for line in out.split(b"\r\n"):
    if line.startswith(b"HTTP/1.1 ") or line.startswith(b"{"):
        print(line.decode("utf-8", "replace"))
PY
check "a blank before a header name's colon: 400 ($(grep '^HTTP' "$T/raw" | tr '\n' ' '))" \
    test "$(grep -c '^HTTP/1.1 ' "$T/raw")" = 1 -a \
    "$(head -n 1 "$T/raw")" = "HTTP/1.1 400 Bad Request"
check "... saying why" grep -q 'header name that is not a token' "$T/raw"
check "... and the approval in its chunk was not decided" \
    test "$(status_of "$id3")" = held

# a %00 in the path: libmicrohttpd decodes it and hands the handler a C
# string, cut there: "/style.css%00.html" was the stylesheet and
# "/lists/dev%00x" the page of list dev.  A path with a control
# character in it is nobody's: 400
login alice alice-secret-1
req GET "/style.css%00.html"
check "a %00 in the path: 400, not the stylesheet cut at it ($code)" \
    sh -c "test $code = 400 && ! grep -q 'font:' '$T/body'"
check "... saying why" has "control character in the path"
req GET "/lists/dev%00x" -H "Cookie: lgsid=$sid"
check "... nor list dev's page for /lists/dev%00x ($code)" test "$code" = 400
req GET "/api/lists/dev%00x/held" $A
check "... nor in the API ($code), as JSON" \
    sh -c "test $code = 400 && grep -q '\"error\": \"a control character in the path' '$T/body'"
req POST "/api/lists/dev/held/$id3%00x" $A -d action=approve
check "... nor a decision ($code), nothing decided" \
    sh -c "test $code = 400 && test \"\$(psql -X -A -t -c \"SELECT status FROM held_posts WHERE id = $id3\")\" = held"
req GET "/lists/dev%1F" -H "Cookie: lgsid=$sid"
c1=$code
req GET "/lists/dev%7f" -H "Cookie: lgsid=$sid"
check "%1F and %7f too ($c1, $code)" test "$c1" = 400 -a "$code" = 400
req GET "/style.css%2500"
check "an escaped percent sign is no control character (404, $code)" \
    test "$code" = 404
check "... and the refusal's log line has the path as asked" \
    grep -q 'path="/style.css%00.html" status=400' "$T/web.log"

# --- hostile held posts on the pages -------------------------------------------
# headers and bodies as a spammer writes them: markup in encoded words
# (B and Q), bidirectional overrides, NUL bytes, invalid UTF-8 (overlong,
# surrogates, stray bytes), a 100 000-byte Subject and a 2 MB line, an
# HTML part with scripts.  Nothing of it may reach a page as markup, a
# control or a byte that is not UTF-8.
python3 - "$T" <<'PY'
import base64, sys
T = sys.argv[1]
ew = lambda s: b"=?UTF-8?B?" + base64.b64encode(s.encode()) + b"?="
posts = {
 "x1": b"From: " + ew('"><img src=x onerror=alert(1)> <a@b>') + b"\nSubject: " +
       ew("<script>alert(1)</script>\u202eevil\u2066x\u200f") +
       b"\nMessage-ID: <x1@x>\n\n<svg onload=alert(2)>\u202e\n".replace(b"\\u202e", "\u202e".encode()),
 "x2": b"From: x\x00y@example.org\nSubject: nul\x00here \xff\xfe \xc0\xaf\xed\xa0\x80\n"
       b"Message-ID: <x2@x>\n\nbody\x00nul \xed\xa0\x80 \x1b[31mred\n",
 "x3": b"From: long@example.org\nSubject: " + b"<b>" * 30000 + b"\nMessage-ID: <x3@x>\n\n" +
       b"<i>" * 700000 + b"\n",
 "x4": b"From: a@example.org\nSubject: =?UTF-8?Q?=3Cscript=3Ealert(3)=3C/script=3E?=\n"
       b"Content-Type: multipart/alternative; boundary=b\nMessage-ID: <x4@x>\n\n--b\n"
       b"Content-Type: text/html; charset=utf-8\nContent-Transfer-Encoding: base64\n\n" +
       base64.b64encode("<script>alert(4)</script><iframe src=//evil></iframe>\u2067".encode()) +
       b"\n--b--\n",
}
for k, v in posts.items():
    open(f"{T}/{k}.eml", "wb").write(v)
PY
# (qhold stores the Subject it is given for the list page: what filter
# stores after decoding the header)
hostile=
for f in x1 x2 x3 x4; do
	hostile="$hostile $(QHOLD_SUBJECT=$(printf '<script>alert(1)</script>\342\200\256evil\033[31m\342\201\246 %s' $f) \
	    "$QHOLD" dev "$T/$f.eml" 0.9)" || exit 99
done
login alice alice-secret-1
# no markup but ours, no bidirectional control, no NUL or C0 control but
# TAB and LF, valid UTF-8
clean_page() {
	python3 - "$1" <<'PY'
import re, sys
b = open(sys.argv[1], "rb").read()
t = b.decode("utf-8")	# fails on a byte that is not UTF-8
ours = {"html", "head", "meta", "title", "link", "body", "header", "b",
        "a", "form", "input", "button", "main", "p", "h1", "h2", "svg",
        "rect", "table", "tr", "th", "td", "dl", "dt", "dd", "pre", "span",
        "div", "ul", "li", "code", "br", "text", "label"}
tags = set(m.lower() for m in re.findall(r"<([a-zA-Z][a-zA-Z0-9]*)", t))
bad = tags - ours
bidi = [c for c in t if 0x202a <= ord(c) <= 0x202e or 0x2066 <= ord(c) <= 0x2069 or ord(c) in (0x200e, 0x200f, 0x61c)]
ctl = [c for c in t if ord(c) < 0x20 and c not in "\t\n"]
if bad or bidi or ctl or re.search(r"<[^>]*\son[a-z]+\s*=", t, re.I):
    print("tags", sorted(bad), "bidi", len(bidi), "controls", len(ctl))
    sys.exit(1)
PY
}
req GET "/lists/dev?limit=500" -H "Cookie: lgsid=$sid"
check "the list page with hostile posts: 200 ($code)" test "$code" = 200
check "... no markup of theirs, no bidirectional control, no control byte, valid UTF-8" \
    clean_page "$T/body"
check "... their markup shown as text, the override and the escape masked" has '&lt;script&gt;alert(1)&lt;/script&gt;&#xfffd;evil&#xfffd;\[31m&#xfffd; x1'
for i in $hostile; do
	for q in "" "?raw=1"; do
		req GET "/lists/dev/held/$i$q" -H "Cookie: lgsid=$sid"
		check "post $i$q: 200 ($code), nothing of it as markup or a control" \
		    sh -c "test $code = 200 && tail -c 100 '$T/body' | grep -q '</html>'"
		check "... clean" clean_page "$T/body"
	done
	req GET "/api/lists/dev/held/$i" $A
	check "post $i through the API: JSON that parses, no control or bidirectional character" \
	    python3 -c 'import json,sys; d=json.load(open(sys.argv[1], encoding="utf-8")); s=json.dumps(d, ensure_ascii=False); sys.exit(any(ord(c) < 0x20 and c not in "\t\n" or 0x202a <= ord(c) <= 0x202e or 0x2066 <= ord(c) <= 0x2069 for c in s))' "$T/body"
done
# a key written with an escape is the same key: not a second field
# another reader takes for the real one
idJ=$("$QHOLD" dev "$DATA/spam4.eml" 0.9) || exit 99
req POST "/api/lists/dev/held/$idJ" $A -H 'Content-Type: application/json' \
    -d '{"action": "reject", "act\u0069on": "approve"}'
check "JSON: action and act\\u0069on: 400 ($code), nothing decided" \
    sh -c "test $code = 400 && grep -q 'action is given twice' '$T/body' && test \"\$(psql -X -A -t -c \"SELECT status FROM held_posts WHERE id = $idJ\")\" = held"
req POST "/api/lists/dev/held/$idJ" $A -d 'action=reject&act%69on=approve'
check "a form: action and act%69on: 400 ($code), nothing decided" \
    sh -c "test $code = 400 && test \"\$(psql -X -A -t -c \"SELECT status FROM held_posts WHERE id = $idJ\")\" = held"

# --- another list's posts: nothing of them read, locked or waited for ----------
# alice (list dev) names posts of list other by their numbers.  A
# decision on one being released waited for its release (its lock),
# so the time of the 404 told that it was being released; a corrupt
# one's bytes were read, a 500 instead of the 404 of any other number
cp "$CONF/lists/other.conf" "$T/other.conf"
cat > "$T/slow.sh" <<EOS
#!/bin/sh
: > "$T/releasing"
i=0
while [ -e "$T/hold" ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i + 1)); done
cat > /dev/null
EOS
printf 'release = /bin/sh %s/slow.sh\n' "$T" > "$CONF/lists/other.conf"
idB=$("$QHOLD" other "$DATA/ham1.eml" 0.9) || exit 99
: > "$T/hold"
rm -f "$T/releasing"
curl -s -o "$T/bobbody" -u bob:bob-secret-12 -d action=approve \
    "$URL/api/lists/other/held/$idB" &
bobpid=$!
i=0
while [ ! -e "$T/releasing" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
req POST "/api/lists/dev/held/$idB" $A -d action=reject -m 3
check "a decision on another list's post being released: 404 at once ($code)" \
    sh -c "test $code = 404 && grep -q 'no post $idB in list dev' '$T/body'"
login alice alice-secret-1
req POST "/lists/dev/bulk" -H "Cookie: lgsid=$sid" \
    -d "csrf=$csrf&action=discard&id=$idB" -m 3
check "... in a bulk form: answered at once ($code)" test "$code" = 303
rm -f "$T/hold"
wait "$bobpid"
check "... and bob's approval of it went through" \
    sh -c "test \"\$(psql -X -A -t -c \"SELECT status FROM held_posts WHERE id = $idB\")\" = approved"
cp "$T/other.conf" "$CONF/lists/other.conf"
idC=$("$QHOLD" other "$DATA/ham2.eml" 0.9) || exit 99
sql "UPDATE held_posts SET raw_z = '\\x00'::bytea WHERE id = $idC" || exit 99
req GET "/api/lists/dev/held/$idC" $A
check "another list's corrupt post through the API: 404 ($code)" \
    sh -c "test $code = 404 && grep -q 'no post $idC in list dev' '$T/body'"
req GET "/lists/dev/held/$idC" -H "Cookie: lgsid=$sid"
check "... and its page: 404 ($code)" test "$code" = 404
sql "DELETE FROM held_posts WHERE id = $idC" || exit 99

# --- a list's page past its end ----------------------------------------------
# posts decided meanwhile (or an old link) leave a page past the end:
# it said "No held posts here." with posts held, and its "previous"
# link led to another empty page
printf 'From: p@example.org\nSubject: pager\nMessage-ID: <pager@example.org>\n\nbody\n' \
    > "$T/pager.eml"
"$QHOLD" dev "$T/pager.eml" 0.9 > /dev/null || exit 99
nheld=$(sql "SELECT count(*) FROM held_posts WHERE list = 'dev' AND status = 'held'")
req GET "/lists/dev?offset=$((nheld + 40))&limit=10" -H "Cookie: lgsid=$sid"
check "a page past the end: 200 ($code), saying $nheld are held" \
    sh -c "test $code = 200 && grep -q 'the list has $nheld held' '$T/body' && ! grep -q 'No held posts here' '$T/body'"
check "... its previous page is the last with posts" \
    grep -q "offset=$(((nheld - 1) / 10 * 10))&amp;limit=10\" rel=\"prev\"" "$T/body"

# --- Host names (DNS rebinding) ------------------------------------------------
# a page of evil.example whose name is made to point at 127.0.0.1 talks
# to the server as evil.example: its Host header says so
req GET /login -H "Host: evil.example:$port"
check "without web_allowed_hosts any Host is answered, as before ($code)" \
    test "$code" = 200
# no Host at all: HTTP/1.1 requires one (RFC 9112 3.2: a server MUST
# answer 400), web_allowed_hosts set or not; HTTP/1.0 does not
req GET /login -H "Host:"
check "an HTTP/1.1 request without Host: 400 ($code)" test "$code" = 400
check "... saying why" has "HTTP/1.1 request needs a Host header"
req GET /api/lists -H "Host:" $A
check "... the API too ($code), as JSON" \
    sh -c "test $code = 400 && grep -q '\"error\": \"an HTTP/1.1 request needs a Host' '$T/body'"
req GET /login -0 -H "Host:"
check "... an HTTP/1.0 one without Host is answered ($code)" \
    test "$code" = 200
req GET /login -H "Host;"
check "... an HTTP/1.1 one with an empty Host too ($code)" test "$code" = 200
web_stop
printf 'web_allowed_hosts = Lists.Example.org, lists2.example.org\n' \
    >> "$CONF/listgate.conf"
lg config check > "$T/cc" 2>&1
check "config check takes web_allowed_hosts" grep -q 'web_allowed_hosts = ' "$T/cc"
if web_start; then
	ok "the server starts with web_allowed_hosts"
else
	bad "the server starts with web_allowed_hosts"
fi
req GET /login -H "Host: evil.example:$port"
check "with web_allowed_hosts, a page for another host name: 421 ($code)" \
    test "$code" = 421
check "... saying which name and why" \
    grep -q 'does not answer for the host name <b>evil.example</b> (web_allowed_hosts)' "$T/body"
req POST /login -H "Host: evil.example" -d "user=alice&password=alice-secret-1"
check "... a login through it too ($code), no session" \
    sh -c "test $code = 421 && ! grep -qi '^Set-Cookie' '$T/hdr'"
req GET /api/lists -H "Host: evil.example" $A
check "... and the API ($code), as JSON" \
    sh -c "test $code = 421 && grep -q '\"error\": \"this server does not answer for the host name evil.example' '$T/body'"
req GET /login -H "Host: lists.example.org.evil.example"
check "... a name that only starts with an allowed one: 421 ($code)" \
    test "$code" = 421
req GET /login -H "Host: LISTS.example.ORG.:$port"
check "an allowed name (any case, a final dot, a port): 200 ($code)" \
    test "$code" = 200
req GET /login -H "Host: lists2.example.org"
check "... the second one too ($code)" test "$code" = 200
req GET /login
check "an address (127.0.0.1:PORT) always passes ($code)" test "$code" = 200
req GET /login -H "Host: localhost:$port"
check "... and localhost ($code)" test "$code" = 200
req GET /login -H "Host: [::1]:$port"
check "... and [::1] ($code)" test "$code" = 200
req GET /login -H "Host: lists.example.org:x"
check "a malformed Host: 400 ($code)" test "$code" = 400
req GET /login -0 -H "Host:"
check "no Host at all (HTTP/1.0): 400 ($code)" test "$code" = 400
req GET /login -H "Host:"
check "... nor HTTP/1.1 ($code)" test "$code" = 400
# two Host lines, the allowed name first: libmicrohttpd read the first
# and answered (a login, a session for it), while a proxy or a log in
# front may go by the other
twohosts() {
	python3 - "$port" "$1" "$2" > "$T/raw" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.environ["top_srcdir"], "tests"))
from rawhttp import exchange
port, path, body = sys.argv[1:4]
out, _ = exchange(port, (f"POST {path} HTTP/1.1\r\nHost: lists.example.org\r\n"
                         "Host: evil.example\r\nConnection: close\r\n"
                         "Content-Type: application/x-www-form-urlencoded\r\n"
                         f"Content-Length: {len(body)}\r\n\r\n{body}").encode(),
                  timeout=5)
sys.stdout.write(out.decode("utf-8", "replace"))
PY
}
twohosts /login "user=alice&password=alice-secret-1"
check "two Host lines: 400 ($(head -n 1 "$T/raw" | tr -d '\r'))" \
    grep -q '^HTTP/1.1 400' "$T/raw"
check "... saying why, and no session" \
    sh -c "grep -q 'Host is given twice' '$T/raw' && ! grep -qi '^Set-Cookie' '$T/raw'"
check "each refusal has its log line" \
    grep -q 'method=GET path="/login" status=421' "$T/web.log"
web_stop
printf 'web_allowed_hosts = lists.example.org:443\n' > "$T/bad.conf"
cp "$CONF/listgate.conf" "$T/good.conf"
grep -v web_allowed_hosts "$T/good.conf" > "$CONF/listgate.conf"
cat "$T/bad.conf" >> "$CONF/listgate.conf"
lg config check > "$T/cc" 2>&1
check "a name with a port is a configuration error naming the line" \
    grep -q 'listgate.conf:[0-9]*: .*web_allowed_hosts.*without a port' "$T/cc"
cp "$T/good.conf" "$CONF/listgate.conf"
web_start || { echo "Bail out! listgate web did not start again"; exit 99; }

# --- connections up to the open files limit --------------------------------------
# systemd (and most shells) give a soft limit of 1024 open files: 1016
# idle connections (the loopback is a trusted proxy, with no limit per
# address) took every descriptor, so a moderator's decision got no
# database connection (503), and libmicrohttpd retried its accept in a
# loop, logging each failure (hundreds of thousands of lines a second)
web_stop
idF=$("$QHOLD" dev "$DATA/spam4.eml" 0.97) || exit 99
softnf=$(ulimit -S -n)
ulimit -S -n 1024 2>/dev/null
web_start || { echo "Bail out! listgate web did not start at 1024 files"; exit 99; }
ulimit -S -n "$softnf"
python3 - "$port" "$idF" > "$T/fds" 2>&1 <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.environ["top_srcdir"], "tests"))
from rawhttp import exchange
import base64, resource, socket, time
port, pid = int(sys.argv[1]), sys.argv[2]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
want = 1200 if hard == resource.RLIM_INFINITY else min(hard, 1200)
if soft < want:
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
# the moderator's connection first, then the flood
k = socket.create_connection(("127.0.0.1", port), timeout=30)
flood = []
try:
    for i in range(1100):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        flood.append(s)
except OSError:
    pass
time.sleep(1)
for s in flood:
    try:
        s.send(b"GET /api/lists HTTP/1.1\r\nHost: x\r\n")
    except OSError:
        pass
time.sleep(2)
auth = base64.b64encode(b"alice:alice-secret-1").decode()
out, _ = exchange(port, (f"POST /api/lists/dev/held/{pid} HTTP/1.1\r\n"
                         f"Host: 127.0.0.1\r\nAuthorization: Basic {auth}\r\n"
                         "Content-Length: 14\r\nConnection: close\r\n\r\n"
                         "action=approve").encode(), sock=k)
print(len(flood), out.split(b"\r\n")[0].decode("ascii", "replace"))
for s in flood:
    s.close()
PY
check "a decision beside 1100 idle connections at 1024 open files: 200 ($(cat "$T/fds"))" \
    grep -q ' HTTP/1.1 200' "$T/fds"
check "... the post approved" test "$(status_of "$idF")" = approved
nemf=$(grep -c 'Too many open files\|resource limit' "$T/web.log")
check "... and no accept failing over and over in the log ($nemf lines)" \
    test "$nemf" -lt 10
req GET /api/lists $A
check "... and the server answers afterwards ($code)" test "$code" = 200

# --- the sender's notice of a rejection is sealed ---------------------------------
# a post rejected on the page tells its sender (sender_notice), as a
# reject by mail does; the notice went out without the X-Listgate-Seal
# of every other message listgate sends, so a sender's address that
# leads back to a list listgate filters had it held and noticed as a
# stranger's post (each notice of it noticed in turn)
cp "$CONF/lists/dev.conf" "$T/dev.conf"
printf '#!/bin/sh\ncat >> "%s/notified.$1"\n' "$T" > "$T/notify.sh"
printf 'moderation_address = dev-moderate@example.org\nnotify = /bin/sh %s/notify.sh {moderator}\nsender_notice = yes\n' \
    "$T" >> "$CONF/lists/dev.conf"
idS=$("$QHOLD" dev "$DATA/spam2.eml" 0.98) || exit 99
login alice alice-secret-1
req POST "/lists/dev/held/$idS" -H "Cookie: lgsid=$sid" \
    -d "action=reject&csrf=$csrf"
check "a post rejected on the page: 303 ($code), its sender told" \
    sh -c "test $code = 303 && grep -q '^Subject: \[dev\] your post was not accepted' '$T/notified.sender@example.org'"
check "... in a notice sealed as listgate's own (X-Listgate-Seal)" \
    grep -q '^X-Listgate-Seal: [a-z2-7]\{32\}$' "$T/notified.sender@example.org"
# without the secret no notice goes out: never one unsealed
mv "$T/secret" "$T/secret.away"
rm -f "$T/notified.sender@example.org"
idS=$("$QHOLD" dev "$DATA/spam3.eml" 0.98) || exit 99
req POST "/lists/dev/held/$idS" -H "Cookie: lgsid=$sid" \
    -d "action=reject&csrf=$csrf"
check "without the secret: rejected ($code), no notice, the log says why" \
    sh -c "test $code = 303 && test ! -e '$T/notified.sender@example.org' && grep -q 'post $idS: sender not notified: secret_file' '$T/web.log'"
mv "$T/secret.away" "$T/secret"
cp "$T/dev.conf" "$CONF/lists/dev.conf"

# --- clients that do not read their answers ---------------------------------------
# a request kept its database connection until its answer was sent
# whole: a page larger than the socket's buffers, asked for on
# WEB_DB_POOL (16) connections that read nothing (or a byte at a time:
# a phone on a bad line, or one moderator on purpose), left every other
# moderator's request waiting for a connection, however short
python3 -c '
import sys
o = sys.stdout.buffer
o.write(b"From: a@example.org\nSubject: wide\nMessage-ID: <wide@x>\n\n")
o.write((b"<" * 999 + b"\n") * 300)' > "$T/wide.eml"
idW=$("$QHOLD" dev "$T/wide.eml" 0.9) || exit 99
login alice alice-secret-1
python3 - "$port" "$idW" "$sid" > "$T/noread" 2>&1 <<'PY' &
import socket, sys, time
port, pid, sid = int(sys.argv[1]), sys.argv[2], sys.argv[3]
socks = []
for i in range(16):
    s = socket.socket()
    # a small window and small segments: the server's socket takes
    # little of the answer, as over a slow link
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 536)
    s.connect(("127.0.0.1", port))
    s.sendall((f"GET /lists/dev/held/{pid}?raw=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
               f"Cookie: lgsid={sid}\r\n\r\n").encode())
    socks.append(s)
print("asked", flush=True)
time.sleep(12)
PY
nrpid=$!
sleep 3
t0=$(date +%s)
req GET /api/lists -u bob:bob-secret-12 -m 8
check "a request beside 16 that do not read their pages: 200 ($code, $(($(date +%s) - t0)) s)" \
    test "$code" = 200
kill "$nrpid" 2>/dev/null
wait "$nrpid" 2>/dev/null

web_stop
webpid=
check "the server stopped cleanly" test "$webrc" -eq 0
echo "1..$n"
[ "$fails" -eq 0 ]

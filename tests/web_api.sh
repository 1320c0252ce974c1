#!/bin/sh
# web_api.sh - `listgate web` and its JSON API against a private
# PostgreSQL (tests/pg.sh), with curl: every status code where it
# belongs, an approval that releases the post byte for byte and trains
# it once (a second one is a 409 that changes nothing), CSRF and origin
# checks, cross-list access by id, oversized requests, path traversal,
# header injection, slow clients, the login limits, the log line per
# request, users.conf handling, a PostgreSQL restart and a clean stop
# on SIGTERM that answers the requests in progress.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if ! command -v curl >/dev/null 2>&1; then
	echo "web_api: curl is not installed; skipping" >&2
	exit 77
fi
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
QHOLD=$top_builddir/tests/qhold
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-webapi.XXXXXX") || exit 99
trap 'kill "$webpid" 2>/dev/null; rm -rf "$T"' EXIT INT TERM
webpid=
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/web_lib.sh"
has() { grep -q "$1" "$T/body"; }

# --- users.conf and listgate user ------------------------------------------
web_setup || { echo "Bail out! setup failed"; exit 99; }
check "user add wrote users.conf with mode 0600" \
    test "$(stat -c %a "$CONF/users.conf")" = 600
check "users.conf holds yescrypt hashes, not passwords" \
    sh -c "grep -q '^alice:\\\$y\\\$' '$CONF/users.conf' && ! grep -q secret '$CONF/users.conf'"
lg user list > "$T/out"
check "user list names each account and its lists" \
    sh -c "grep -qx 'alice dev' '$T/out' && grep -qx 'bob all' '$T/out'"
printf 'x\n' | lg user add eve --lists dev > /dev/null 2> "$T/err"
check "a short password is refused" grep -q "shorter than" "$T/err"
# the minimum counts characters, not bytes: 7 characters in 8 bytes are
# too few, 8 in 10 enough
printf 'abcd\303\251fg\n' | lg user add eve --lists dev > /dev/null 2> "$T/err"
check "7 characters in 8 bytes are refused as shorter than 8 characters" \
    grep -q "shorter than 8 characters" "$T/err"
printf 'p\303\244ssw\303\266rd\n' | lg user add eve --lists dev > /dev/null 2> "$T/err"
check "8 characters in 10 bytes are taken" grep -q '^eve:\$y\$' "$CONF/users.conf"
lg user del eve > /dev/null
# the longest password is hashed (511 bytes: libxcrypt's crypt_r takes
# no more); a longer one, or one with a NUL byte, is refused saying so
head -c 511 /dev/zero | tr '\0' p | lg user add long --lists dev > /dev/null 2> "$T/err"
check "a password of 511 bytes is taken" grep -q '^long:\$y\$' "$CONF/users.conf"
head -c 512 /dev/zero | tr '\0' p | lg user add long2 --lists dev > /dev/null 2> "$T/err"
check "one of 512 bytes is refused, saying the limit" \
    grep -q "password longer than 511 bytes" "$T/err"
printf 'eve-secret-12\000more\n' | lg user add eve --lists dev > /dev/null 2> "$T/err"
check "a password with a NUL byte is refused, saying so" \
    grep -q "the password holds a NUL byte" "$T/err"
check "... and no account is made" sh -c "! grep -q '^eve:' '$CONF/users.conf'"
lg user del long > /dev/null
# on a terminal the password is read without echo: ^C, a hangup or a
# kill at the prompt turn echo back on before the run ends by the signal
command -v python3 > /dev/null 2>&1 || { echo "Bail out! python3 is needed"; exit 99; }
tty_stop() {	# tty_stop int|term|hup: "echo signal=N" or what went wrong
	python3 - "$LISTGATE" "$CONF" "$1" <<'PY'
import os, pty, signal, sys, termios, time
lg, conf, how = sys.argv[1:4]
pid, fd = pty.fork()
if pid == 0:
    # the signals as a terminal's program gets them, whatever this test
    # inherited (under nohup SIGHUP came ignored, and the run waited
    # for a child that never ended)
    for s in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
        signal.signal(s, signal.SIG_DFL)
    os.execv(lg, [lg, "--allow-root", "--config", conf, "user", "add",
        "ttyuser", "--lists", "dev"])
buf, end = b"", time.time() + 10
while b"Password:" not in buf and time.time() < end:
    buf += os.read(fd, 100)
time.sleep(0.3)
if how == "int":
    os.write(fd, b"\x03")
else:
    os.kill(pid, getattr(signal, "SIG" + how.upper()))
end = time.time() + 10
while True:
    done, st = os.waitpid(pid, os.WNOHANG)
    if done or time.time() > end:
        break
    time.sleep(0.02)
if not done:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    print("still running 10 s after the signal")
    sys.exit(0)
print("echo" if termios.tcgetattr(fd)[3] & termios.ECHO else "noecho",
    "signal=%d" % os.WTERMSIG(st) if os.WIFSIGNALED(st) else
    "exit=%d" % os.WEXITSTATUS(st))
PY
}
check "^C at the password prompt: echo is back, the run ends by SIGINT" \
    test "$(tty_stop int)" = "echo signal=2"
check "SIGTERM there: the same" test "$(tty_stop term)" = "echo signal=15"
check "SIGHUP there: the same" test "$(tty_stop hup)" = "echo signal=1"
check "... and no account is made" sh -c "! grep -q '^ttyuser:' '$CONF/users.conf'"
printf 'eve-secret-12\n' | lg user add alice --lists dev > /dev/null 2> "$T/err"
check "adding an existing user is refused" grep -q "exists" "$T/err"
printf 'eve-secret-12\n' | lg user add eve --lists '../etc' > /dev/null 2> "$T/err"
rc=$?
check "a bad list name is refused" grep -q "bad list name" "$T/err"
# ... as a usage error (2, as a bad user name), before the password is
# read (asked twice on a terminal, then hashed): it exited 1, and with
# no password on standard input it spoke of the password, not the list
check "... a usage error (2)" test "$rc" -eq 2
lg user add eve --lists 'dev,a..b' < /dev/null > /dev/null 2> "$T/err"
rc=$?
check "... said before any password is read" \
    sh -c "test $rc -eq 2 && grep -q \"^listgate user: --lists: bad list name \\\`a..b'\" '$T/err' && ! grep -qi password '$T/err'"
printf 'dave-secret-1\n' | lg user add dave --lists dev,other > /dev/null
lg user del dave > /dev/null
check "user del removes the account" sh -c "! grep -q '^dave:' '$CONF/users.conf'"
cp "$CONF/users.conf" "$T/users.good"
chmod 644 "$CONF/users.conf"
lg user list > /dev/null 2> "$T/err"
check "a users.conf others may read is refused, naming the file" \
    grep -q "users.conf: mode 0644" "$T/err"
chmod 600 "$CONF/users.conf"
printf 'mallory:plaintext:dev\n' >> "$CONF/users.conf"
lg user list > /dev/null 2> "$T/err"
check "a line without a yescrypt hash is refused with FILE:LINE" \
    grep -q "users.conf:6: user mallory: the password hash is not" "$T/err"
cp "$T/users.good" "$CONF/users.conf"
chmod 600 "$CONF/users.conf"

# --- posts, and the server ----------------------------------------------------
id1=$("$QHOLD" dev "$DATA/spam1.eml" 0.98) || exit 99
id2=$("$QHOLD" dev "$DATA/ham1.eml" 0.71) || exit 99
id3=$("$QHOLD" other "$DATA/spam2.eml" 0.99) || exit 99
# a configured list with nothing held, and posts held for a list whose
# configuration is gone
printf 'release = /bin/true\n' > "$CONF/lists/empty.conf"
"$QHOLD" zgone "$DATA/spam2.eml" 0.99 > /dev/null || exit 99
web_start || { echo "Bail out! listgate web did not start"; exit 99; }
# a client that trickles its request, a header line every 10 s, is
# never idle for the 30 s that close a connection: it held its
# connection (and with 64 of them from each of 16 addresses, or /64s,
# every connection of the server) for as long as it liked.  It runs
# beside the checks below and is looked at near the end.
python3 - "$port" > "$T/trickle.out" 2>&1 <<'EOF' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"GET /api/lists HTTP/1.1\r\nHost: x\r\n")
t0 = time.time()
while time.time() - t0 < 100:
    time.sleep(10)
    try:
        s.sendall(b"X-a: b\r\n")
        s.settimeout(0.1)
        if s.recv(100) == b"":
            break
    except socket.timeout:
        continue
    except OSError:
        break
print(int(time.time() - t0))
EOF
tricklepid=$!
# a client that reads its answer a little at a time (8 KiB a second
# through a small window: its connection is never idle for 30 s) held
# its connection's thread and the answer for as long as it liked (4
# minutes for the page of this post, 2 MB: each of its header's bytes
# is masked, 8 bytes of HTML), and the socket up to 4 MiB of it.  It must read it whole in 60 s and 1 s
# per 32 KiB, here 122 s; one that reads nothing is idle, closed after
# 30 s.  They run beside the checks below; the post goes once its page
# is made (the counts below are of the others).
python3 -c '
import sys
o = sys.stdout.buffer
o.write(b"From: a@example.org\nSubject: slow\nMessage-ID: <slowread@x>\n")
for i in range(128):
    o.write(b"X-Pad-%d: " % i + b"\x80" * 1990 + b"\n")
o.write(b"\nhello\n")' > "$T/slowread.eml"
idW=$("$QHOLD" dev "$T/slowread.eml" 0.9) || exit 99
curl -s -o /dev/null -D "$T/lhdr" -d "user=bob&password=bob-secret-12" \
    "$URL/login"
sidW=$(sed -n 's/^[Ss]et-[Cc]ookie: lgsid=\([0-9a-f]*\);.*/\1/p' "$T/lhdr")
python3 - "$port" "$idW" "$sidW" > "$T/slowread.out" 2>&1 <<'EOF' &
import re, socket, sys, time
port, pid, sid = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def ask():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 536)
    s.connect(("127.0.0.1", port))
    s.sendall((f"GET /lists/dev/held/{pid} HTTP/1.1\r\n"
               f"Host: 127.0.0.1\r\nCookie: lgsid={sid}\r\n\r\n").encode())
    return s
slow, deaf = ask(), ask()
t0 = time.time()
got = slow.recv(2048)
m = re.search(rb"Content-Length: (\d+)", got, re.I)
size = int(m.group(1)) if m else 0
print("asked", size, flush=True)
slow.settimeout(0.2)
end = None
while time.time() - t0 < 140 and end is None:
    time.sleep(1)
    n = 0
    while n < 8192:
        try:
            d = slow.recv(8192 - n)
        except socket.timeout:
            break
        except OSError:
            end = "reset"
            break
        if not d:
            end = "closed"
            break
        n += len(d)
        got += d
print("read", int(time.time() - t0), len(got), size, end or "open")
slow.close()
# the one that read nothing: its answer's start, then the end
deaf.settimeout(1)
n = 0
try:
    while True:
        d = deaf.recv(65536)
        if not d:
            print("deaf closed", n)
            break
        n += len(d)
except OSError:
    print("deaf open", n)
EOF
readerpid=$!
A="-u alice:alice-secret-1"
B="-u bob:bob-secret-12"
i=0
until grep -q '^asked' "$T/slowread.out" || [ $i -ge 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
sql "DELETE FROM held_posts WHERE id = $idW"
req GET /api/lists $B
check "a request beside a client that reads its answer slowly: 200 ($code)" \
    test "$code" = 200

# 401
req GET /api/lists
check "401 without credentials" test "$code" = 401
check "... as JSON with an error" has '"error"'
check "... and a Basic challenge" grep -qi '^WWW-Authenticate: Basic' "$T/hdr"
req GET /api/lists -u alice:wrong-password
check "401 with a wrong password" test "$code" = 401
req GET /api/lists -u nobody-here:alice-secret-1
check "401 for an unknown user" test "$code" = 401

# 200: lists, held, one post
req GET /api/lists $A
check "GET /api/lists: 200" test "$code" = 200
check "... alice sees dev with 2 held" has '{"list": "dev", "held": 2}'
check "... and not other" sh -c "! grep -q other '$T/body'"
req GET /api/lists $B
check "bob (all) sees both lists" \
    sh -c "grep -q '\"list\": \"dev\", \"held\": 2' '$T/body' && grep -q '\"list\": \"other\", \"held\": 1' '$T/body'"
check "... every list in name order: configured ones with 0, others held" \
    test "$(tr -d ' \n' < "$T/body")" = '[{"list":"dev","held":2},{"list":"empty","held":0},{"list":"other","held":1},{"list":"zgone","held":1}]'
req GET /api/lists -u carol:carol-secret-1
check "carol sees only other" \
    test "$(tr -d ' \n' < "$T/body")" = '[{"list":"other","held":1}]'
req GET "/api/lists/dev/held?offset=0&limit=1" $A
check "GET held: 200 with total 2 and one entry" \
    sh -c "test $code = 200 && grep -q '\"total\": 2' '$T/body' && test \$(grep -c '\"id\"' '$T/body') -eq 1"
check "... entries carry id, sender, subject, score, held_at, sha256" \
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); e=d["entries"][0]; sys.exit(sorted(e) != ["held_at","id","score","sender","sha256","subject"])' "$T/body"
check "... sha256 is the post's" \
    has "\"sha256\": \"$(sql "SELECT encode(raw_sha256, 'hex') FROM held_posts WHERE id = $id1")\""
cp "$T/body" "$T/held1"
req GET "/api/lists/dev/held" $A
cp "$T/body" "$T/held-all"
# the route as the issue and listgate(1) write it, the values left
# empty: the defaults, as on the list's page (it was a 400, "bad offset")
req GET "/api/lists/dev/held?offset=&limit=" $A
check "GET held?offset=&limit= (empty): 200, the defaults" \
    sh -c "test $code = 200 && cmp -s '$T/body' '$T/held-all'"
req GET "/api/lists/dev/held?offset=1&limit=" $A
check "... offset=1 with an empty limit: the second post" \
    sh -c "test $code = 200 && grep -q '\"total\": 2' '$T/body' && test \$(grep -c '\"id\"' '$T/body') -eq 1 && ! cmp -s '$T/body' '$T/held1'"
# held_at is the same second in the listing and in the post's own
# answer, whatever the fraction (the listing rounded it: 13.7 s gave
# 14, the post 13); moved earlier, so that it stays the oldest
sql "UPDATE held_posts SET arrived_at = date_trunc('second', arrived_at) - interval '0.3 s' WHERE id = $id1" || exit 99
req GET "/api/lists/dev/held?limit=1" $A
python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["entries"][0]; print(e["id"], e["held_at"])' "$T/body" > "$T/at-list"
req GET "/api/lists/dev/held/$id1" $A
python3 -c 'import json,sys; e=json.load(open(sys.argv[1])); print(e["id"], e["held_at"])' "$T/body" > "$T/at-one"
sql "SELECT $id1 || ' ' || to_char(arrived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') FROM held_posts WHERE id = $id1" > "$T/at-db"
check "held_at in the listing = in the post's answer = the second it arrived in (a fraction of .7 s)" \
    sh -c "cmp -s '$T/at-list' '$T/at-one' && cmp -s '$T/at-one' '$T/at-db'"
sed 's/^/# /' "$T/at-list" "$T/at-one" "$T/at-db"
req GET "/api/lists/dev/held/$id1" $A
check "GET one post: 200" test "$code" = 200
check "... its headers, decoded" has '"name": "Subject", "value": "Cheap pills, huge discount, buy now"'
check "... its deciding tokens with probabilities" has '"token": "tok1", "probability": 0.990000'
check "... a text preview" has '"preview": "Buy cheap viagra now!'

# 403, 404
req GET /api/lists/other/held $A
check "403 for a list the user may not see" test "$code" = 403
req GET "/api/lists/other/held/$id3" $A
check "403 for a post of such a list" test "$code" = 403
req GET /api/lists/nosuch/held $B
check "404 for an unknown list" test "$code" = 404
req GET /api/lists/dev/held/999999 $A
check "404 for an unknown id" test "$code" = 404
req GET "/api/lists/dev/held/$id3" $A
check "404 for another list's post asked for by id through one's own list" \
    test "$code" = 404
req POST "/api/lists/dev/held/$id3" $A -d action=approve
check "... and it cannot be decided that way (404)" test "$code" = 404
check "... it stays held" \
    test "$(sql "SELECT status FROM held_posts WHERE id = $id3")" = held
req GET /api/nothing $A
check "404 for an unknown API path" test "$code" = 404
req GET "/api/lists/dev/held/1x" $A
check "404 for an id that is not a number" test "$code" = 404

# 405
req DELETE /api/lists $A
check "405 for DELETE /api/lists" test "$code" = 405
check "... with an Allow header" grep -qi '^Allow: GET, HEAD' "$T/hdr"
req PUT "/api/lists/dev/held/$id1" $A -d action=approve
check "405 for PUT on a post" test "$code" = 405
req POST /api/lists/dev/held $A -d action=approve
check "405 for POST on a list's held posts" test "$code" = 405

# 400
req POST "/api/lists/dev/held/$id1" $A -d action=frobnicate
check "400 for a bad action" test "$code" = 400
req POST "/api/lists/dev/held/$id1" $A -d note=hi
check "400 without an action" test "$code" = 400
# a multipart form (curl -F) is not read: it said "bad action: want
# approve, reject or discard" of action=approve
req POST "/api/lists/dev/held/$id1" $A -F action=approve
check "400 for a multipart form, saying it is not read and what to send" \
    sh -c "test $code = 400 && grep -q 'a multipart body is not read: send the form as application/x-www-form-urlencoded' '$T/body' && ! grep -q 'bad action' '$T/body'"
check "... and the post stays held" \
    test "$(sql "SELECT status FROM held_posts WHERE id = $id1")" = held
req POST "/api/lists/dev/held/$id1" $A -H 'Content-Type: application/json' \
    -d '{"action": "approve"'
check "400 for broken JSON" test "$code" = 400
req GET "/api/lists/dev/held?limit=0" $A
check "400 for limit=0" test "$code" = 400
req GET "/api/lists/dev/held?offset=-1" $A
check "400 for offset=-1" test "$code" = 400

# 413
head -c 70000 /dev/zero | tr '\0' 'a' > "$T/big"
req POST "/api/lists/dev/held/$id1" $A --data-binary "@$T/big"
check "413 for a body over 64 KiB" test "$code" = 413
check "... as JSON" has '"error"'
req POST "/api/lists/dev/held/$id1" $A -H 'Transfer-Encoding: chunked' \
    --data-binary "@$T/big"
check "413 for a chunked body over 64 KiB" test "$code" = 413
check "... and nothing was decided" \
    test "$(sql "SELECT status FROM held_posts WHERE id = $id1")" = held
long=$(head -c 3000 /dev/zero | tr '\0' 'x')
req GET "/api/lists/dev/held?x=$long" $A
check "a URL past the limit is refused (414)" test "$code" = 414
big_hdr=$(head -c 40000 /dev/zero | tr '\0' 'h')
req GET /api/lists $A -H "X-Big: $big_hdr"
check "headers past the connection's memory are refused (4xx)" \
    sh -c "test $code -ge 400 && test $code -lt 500"
# refused before its headers were in, it is logged with the address it
# came from (it said addr=?: an attacker's requests named nobody)
big_line='addr=127\.0\.0\.1 user=- method=- path="/api/lists" status=0 '
i=0
while ! grep -q "$big_line" "$T/web.log" && [ $i -lt 30 ]; do
	sleep 0.1
	i=$((i + 1))
done
check "... and its log line names the client's address" \
    grep -q "$big_line" "$T/web.log"

# 200 approve: the post released byte for byte, trained once
nj=$(sql 'SELECT count(*) FROM train_journal')
req POST "/api/lists/dev/held/$id1" $A -H 'Content-Type: application/json' \
    -d '{"action": "approve"}'
check "approve (JSON body): 200" test "$code" = 200
check "... answers the new status" has '"status": "approved"'
check "... released the identical bytes" cmp -s "$T/released.dev" "$DATA/spam1.eml"
check "... recorded who decided" \
    test "$(sql "SELECT status || ' ' || decided_by FROM held_posts WHERE id = $id1")" = "approved web:alice"
check "... journalled one ham learn for the post" \
    test "$(sql "SELECT count(*) FROM train_journal WHERE post_id = $id1 AND class = 'ham' AND op = 'learn'")" -eq 1 -a \
    "$(sql 'SELECT count(*) FROM train_journal')" -eq $((nj + 1))
i=0
while [ ! -f "$T/tokens/dev.kch" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.3
lg score --list dev -v "$DATA/spam1.eml" > "$T/score1"
check "... and the sync thread trained the token file once (ham 1)" \
    grep -q '^ *cheap [0-9.]* 0 1$' "$T/score1"
cp "$T/released.dev" "$T/released.before"
req POST "/api/lists/dev/held/$id1" $A -d action=approve
check "a second approval: 409" test "$code" = 409
check "... naming who decided and when" \
    sh -c "grep -q '\"decided_by\": \"web:alice\"' '$T/body' && grep -q '\"decided_at\": \"20[0-9-]*T[0-9:]*Z\"' '$T/body' && grep -q 'already approved by web:alice at' '$T/body'"
check "... releases nothing more" cmp -s "$T/released.dev" "$T/released.before"
check "... journals nothing more" \
    test "$(sql 'SELECT count(*) FROM train_journal')" -eq $((nj + 1))
req POST "/api/lists/dev/held/$id1" $A -d action=reject
check "rejecting an approved post: 409, nothing changed" \
    sh -c "test $code = 409 && test \"\$(psql -X -A -t -c \"SELECT status FROM held_posts WHERE id = $id1\")\" = approved"

# a failing release: 502, the post stays held
touch "$T/fail"
req POST "/api/lists/dev/held/$id2" $A -d action=approve
check "a failing release command: 502" test "$code" = 502
check "... the post stays held" \
    test "$(sql "SELECT status FROM held_posts WHERE id = $id2")" = held
rm -f "$T/fail"
req POST "/api/lists/dev/held/$id2" $B -d "action=reject&note=spammy"
check "reject as bob (form body): 200" test "$code" = 200
check "... journals one spam learn" \
    test "$(sql "SELECT count(*) FROM train_journal WHERE post_id = $id2 AND class = 'spam'")" -eq 1

# --- two releases at once: neither command holds the other's input open --
# (a release command started by one thread must not inherit the pipe
# that feeds another thread's command, or that one never sees the end of
# its post).  slow: reads its post, then stays 4 s; dev: waits 1 s before
# reading, so its 1 MB post is still being written while slow starts.
cat > "$T/slow.sh" <<EOS
#!/bin/sh
cat > /dev/null
sleep 4
EOS
cat > "$T/late.sh" <<EOS
#!/bin/sh
sleep 1
cat >> "$T/released.late"
EOS
printf 'release = /bin/sh %s/slow.sh\n' "$T" > "$CONF/lists/slow.conf"
printf 'release = /bin/sh %s/late.sh\n' "$T" > "$CONF/lists/late.conf"
{ cat "$DATA/ham2.eml"; head -c 1000000 /dev/zero | tr '\0' 'x' | fold -w 70; } > "$T/bigpost"
idL=$("$QHOLD" late "$T/bigpost" 0.6) || exit 99
idS=$("$QHOLD" slow "$DATA/ham3.eml" 0.6) || exit 99
t0=$(date +%s%N)
curl -s -o "$T/late.out" -w '%{http_code}' $B -d action=approve \
    "$URL/api/lists/late/held/$idL" > "$T/late.code" &
lpid=$!
sleep 0.3
curl -s -o /dev/null $B -d action=approve "$URL/api/lists/slow/held/$idS" &
spid=$!
wait "$lpid"
t1=$(date +%s%N)
wait "$spid"
check "two approvals at once: each release sees the end of its post (late took $(( (t1 - t0) / 1000000 )) ms, slow holds on 4 s)" \
    sh -c "test \"\$(cat '$T/late.code')\" = 200 && test $(( (t1 - t0) / 1000000 )) -lt 3500"
check "... and got its post whole" cmp -s "$T/released.late" "$T/bigpost"

# --- sessions, CSRF, origin ---------------------------------------------------------
J=$T/jar
req POST /login -c "$J" -d "user=alice&password=wrong"
check "a wrong login: 401" test "$code" = 401
req POST /login -c "$J" -d "user=alice&password=alice-secret-1"
check "a login: 303 to /lists" \
    sh -c "test $code = 303 && grep -qi '^Location: /lists' '$T/hdr'"
check "... its cookie is HttpOnly and SameSite=Strict, not Secure over plain HTTP" \
    sh -c "grep -i '^Set-Cookie: lgsid=' '$T/hdr' | grep -q 'HttpOnly; SameSite=Strict' && ! grep -i '^Set-Cookie' '$T/hdr' | grep -q Secure"
req POST /login -d "user=alice&password=alice-secret-1" \
    -H 'X-Forwarded-Proto: https' -H 'X-Forwarded-For: 192.0.2.7'
check "... and __Host-lgsid, Secure, when the trusted proxy says https" \
    grep -i '^Set-Cookie: __Host-lgsid=' "$T/hdr" | grep -q '; Secure'
req GET /lists/dev -b "$J"
check "the list page with the session: 200" test "$code" = 200
csrf=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$T/body" | head -n 1)
check "... carries a CSRF token" test ${#csrf} -eq 64
id4=$("$QHOLD" dev "$DATA/spam3.eml" 0.93) || exit 99
req POST "/api/lists/dev/held/$id4" -b "$J" -d action=discard
check "an API POST from a page session without the CSRF token: 403" \
    test "$code" = 403
req POST "/lists/dev/held/$id4" -b "$J" -d action=discard
check "a page POST without the CSRF token: 403" test "$code" = 403
req POST "/lists/dev/held/$id4" -b "$J" -d "action=discard&csrf=$(echo "$csrf" | tr 0-9a-f a-f0-9)"
check "a page POST with a wrong CSRF token: 403" test "$code" = 403
check "... nothing was decided" \
    test "$(sql "SELECT status FROM held_posts WHERE id = $id4")" = held
req POST "/api/lists/dev/held/$id4" -b "$J" -H "X-CSRF-Token: $csrf" \
    -H 'Origin: http://evil.example' -d action=discard
check "a POST with the token but from another origin: 403" test "$code" = 403
req POST "/lists/dev/held/$id4" -b "$J" -H 'Sec-Fetch-Site: cross-site' \
    -d "action=discard&csrf=$csrf"
check "a POST marked Sec-Fetch-Site: cross-site: 403" test "$code" = 403
req POST "/api/lists/dev/held/$id4" -b "$J" -H "X-CSRF-Token: $csrf" \
    -d action=discard
check "an API POST from the session with its token: 200" test "$code" = 200
id5=$("$QHOLD" dev "$DATA/spam4.eml" 0.95) || exit 99
req POST "/lists/dev/held/$id5" -b "$J" -d "action=reject&csrf=$csrf"
check "a page POST with its token: 303 back to the list" \
    sh -c "test $code = 303 && grep -qi '^Location: /lists/dev' '$T/hdr'"
check "... decided" test "$(sql "SELECT status FROM held_posts WHERE id = $id5")" = rejected
req GET /lists/dev -b "$J"
check "... and the next page says so" grep -q "post $id5 rejected" "$T/body"
# a bulk form is read whole before anything is decided: one with a bad
# pair after the first id once rejected that post and answered 400 "the
# form could not be read"
printf 'From: b@example.org\nSubject: bulk\nMessage-ID: <bulk@x>\n\nbulk\n' > "$T/bulk.eml"
idB=$("$QHOLD" dev "$T/bulk.eml" 0.9) || exit 99
req POST /lists/dev/bulk -b "$J" -d "csrf=$csrf&action=reject&id=$idB&id=%zz"
check "a bulk form that cannot be read: 400" test "$code" = 400
check "... and nothing of it was decided" \
    test "$(sql "SELECT status FROM held_posts WHERE id = $idB")" = held
req POST /lists/dev/bulk -b "$J" -d "csrf=$csrf&action=reject&id=$idB"
check "the same bulk form without the bad pair: 303, decided" \
    sh -c "test $code = 303 && test \"\$(psql -X -A -t -c \"SELECT status FROM held_posts WHERE id = $idB\")\" = rejected"
# a page's approval whose release command fails is answered 502 with
# the reason, the post still held (it was a 303 back to the list, as
# for a success: the log said status=303 for the failure)
printf 'From: c@example.org\nSubject: fails\nMessage-ID: <fails@x>\n\nfails\n' > "$T/fails.eml"
idF=$("$QHOLD" dev "$T/fails.eml" 0.9) || exit 99
touch "$T/fail"
req POST "/lists/dev/held/$idF" -b "$J" -d "action=approve&csrf=$csrf"
rm -f "$T/fail"
check "a page approval whose release command fails: 502 ($code), saying why" \
    sh -c "test $code = 502 && grep -q 'not approved: release command' '$T/body'"
check "... the post stays held" \
    test "$(sql "SELECT status FROM held_posts WHERE id = $idF")" = held
# a post of list dev with subject $1 held: its id
hold_named() {
	printf 'From: %s@example.org\nSubject: %s\nMessage-ID: <%s@x>\n\n%s\n' \
	    "$1" "$1" "$1" "$1" > "$T/$1.eml" && "$QHOLD" dev "$T/$1.eml" 0.9
}
sha_of() { sql "SELECT encode(raw_sha256, 'hex') FROM held_posts WHERE id = $1"; }
status_of() { sql "SELECT status FROM held_posts WHERE id = $1"; }
# the answer was $1 and post $2 is still held
answered_held() { decided_as "$1" "$2" held; }
# the answer was $1 and post $2 is now $3
decided_as() { test "$code" = "$1" && test "$(status_of "$2")" = "$3"; }
# the answer was $1, post $2 is still held, and the answer says $3
said_held() { answered_held "$1" "$2" && grep -q "$3" "$T/body"; }
# post $1 takes post $2's number, $2 gone (a failover or a restore gave
# the number to another post)
move_onto() {
	sql "DELETE FROM held_posts WHERE id = $2" &&
	    sql "UPDATE held_posts SET id = $2 WHERE id = $1"
}
# a page names the post it shows, and a decision from it takes no
# other post under that number (a failover or a restore gave the number
# to another post since the page was read)
idS=$(hold_named shown) || exit 99
idL=$(hold_named later) || exit 99
shaS=$(sha_of "$idS")
req GET "/lists/dev/held/$idS" -b "$J"
check "a post's page names the post it shows" \
    grep -q "name=\"post\" value=\"$shaS\"" "$T/body"
req GET "/lists/dev" -b "$J"
check "... and so does each row of the list's page" \
    grep -q "name=\"post-$idS\" value=\"$shaS\"" "$T/body"
move_onto "$idL" "$idS"
req POST "/lists/dev/held/$idS" -b "$J" -d "action=approve&csrf=$csrf&post=$shaS"
check "the page's decision, another post under its number now: back to the list ($code)" \
    test "$code" = 303
check "... nothing decided" \
    test "$(status_of "$idS")" = held
req GET /lists/dev -b "$J"
check "... the list's page says why" grep -q "post $idS is not the post this page showed" "$T/body"
req POST /lists/dev/bulk -b "$J" -d "csrf=$csrf&action=reject&id=$idS&post-$idS=$shaS"
check "... nor by the list page's bulk form" \
    test "$(status_of "$idS")" = held
req GET /lists/dev -b "$J"
check "... which says why" grep -q "is not the post this page showed" "$T/body"
# (it once counted the post as "1 already decided")
check "... and counts it as not the post shown, not as decided" \
    sh -c "grep -q '0 posts rejected; 1 not the post the page showed (' '$T/body' && ! grep -q 'already decided' '$T/body'"
req POST "/lists/dev/held/$idS" -b "$J" -d "action=approve&csrf=$csrf&post=zz"
check "a page's post that is not a SHA-256: 400, nothing decided" \
    answered_held 400 "$idS"
# a post left releasing by an approval that stopped: not in the table,
# but named under it with what to do
idR=$(hold_named stuckrelease) || exit 99
sql "UPDATE held_posts SET status = 'releasing', decided_by = 'alice',
    decided_at = now() - interval '3 hours' WHERE id = $idR" || exit 99
req GET /lists/dev -b "$J"
check "a post being released: not among the held posts of the list's page" \
    sh -c "! grep -q 'id=\"post-$idR\"' '$T/body'"
check "... named under them, who approved it and when" \
    grep -q "<li id=\"releasing-$idR\">post <a href=\"/lists/dev/held/$idR\">$idR</a>: .*, approved by alice 3h ago</li>" "$T/body"
check "... with what to do" grep -q "listgate --config [^ ]* approve --mark-approved ID" "$T/body"
sql "UPDATE held_posts SET status = 'approved' WHERE id = $idR" || exit 99
req GET /lists/dev -b "$J"
check "... and gone once it is approved" \
    sh -c "! grep -q 'Being released' '$T/body'"
req POST /lists/dev/bulk -b "$J" -d "csrf=$csrf&action=reject&id=$idS&post-$idS=zz"
check "... in a bulk form too" \
    answered_held 400 "$idS"
req POST /lists/dev/bulk -b "$J" -d "csrf=$csrf&action=reject&id=$idS&post-$idS=$shaS&post-$idS=zz"
check "... and as a second copy after a good one" \
    answered_held 400 "$idS"
shaL=$(sha_of "$idS")
# a field given twice is refused whatever its values, not read as its
# first (it was: the post's own sha256 first decided it, whatever came
# after)
req POST /lists/dev/bulk -b "$J" -d "csrf=$csrf&action=reject&id=$idS&post-$idS=$shaL&post-$idS=$shaS"
check "a bulk form naming a post twice: 400, nothing decided" \
    answered_held 400 "$idS"
req POST "/lists/dev/held/$idS" -b "$J" -d "action=reject&csrf=$csrf&post=$shaL&post=$shaS"
check "... nor a post's page form" \
    answered_held 400 "$idS"
req POST "/lists/dev/held/$idS" -b "$J" -d "action=reject&action=approve&csrf=$csrf&post=$shaL"
check "... nor one with two actions, which says so" \
    said_held 400 "$idS" 'gives its action twice'
req POST "/lists/dev/bulk" -b "$J" -d "csrf=$csrf&action=reject&id=$idS&post-$idS=$shaL"
check "the post's own page decides it" \
    test "$(status_of "$idS")" = rejected
# the API names a post by its SHA-256 too: a script that lists, then
# decides across a failover that gave the number to another post, took
# that post (it decided by number only)
idP=$(hold_named listed) || exit 99
idQ=$(hold_named after) || exit 99
shaP=$(sha_of "$idP")
req GET "/api/lists/dev/held/$idP" $A
check "the API's post names its sha256" has "\"sha256\": \"$shaP\""
move_onto "$idQ" "$idP"
req POST "/api/lists/dev/held/$idP" $A -d "action=reject&sha256=$shaP"
check "an API decision naming the listed post, another under its number now: 409" \
    said_held 409 "$idP" 'is not the post with that sha256'
check "... nothing decided" \
    test "$(status_of "$idP")" = held
req POST "/api/lists/dev/held/$idP" $A -H 'Content-Type: application/json' \
    -d "{\"action\": \"reject\", \"sha256\": \"$shaP\"}"
check "... nor as JSON" answered_held 409 "$idP"
req POST "/api/lists/dev/held/$idP" $A -d "action=reject&sha256=$(echo "$shaP" | tr a-f A-F)"
check "an API sha256 that is not 64 lower-case hex digits: 400, nothing decided" \
    answered_held 400 "$idP"
req POST "/api/lists/dev/held/$idP" $A -H 'Content-Type: application/json' \
    -d '{"action": "reject", "sha256": 7}'
check "... nor one that is not a JSON string" \
    answered_held 400 "$idP"
req POST "/api/lists/dev/held/$idP?sha256=$shaP" $A -d "action=reject"
check "... nor one in the URL (it was ignored, and the post decided)" \
    said_held 400 "$idP" 'sha256 goes in the body'
req POST "/api/lists/dev/held/$idP" $A -d "action=reject&sha256=${shaP}00"
check "... and a long one is named as such" \
    said_held 400 "$idP" 'bad sha256'
shaQ=$(sha_of "$idP")
req POST "/api/lists/dev/held/$idP" $A -d "action=reject&sha256=$shaQ&sha256=$shaP"
check "an API sha256 given twice: 400, nothing decided (the first decided it)" \
    said_held 400 "$idP" 'sha256 is given twice'
req POST "/api/lists/dev/held/$idP" $A -H 'Content-Type: application/json' \
    -d "{\"action\": \"reject\", \"sha256\": \"$shaQ\", \"sha256\": \"$shaP\"}"
check "... nor as JSON" said_held 400 "$idP" 'sha256 is given twice'
req POST "/api/lists/dev/held/$idP" $A -d "action=reject&action=approve&sha256=$shaQ"
check "... nor two actions" said_held 400 "$idP" 'action is given twice'
req POST "/api/lists/dev/held/$idP" $A -H 'Content-Type: application/json' \
    -d "{\"action\": \"reject\", \"note\": \"a\", \"note\": \"b\", \"sha256\": \"$shaQ\"}"
check "... nor two notes" said_held 400 "$idP" 'note is given twice'
# a note longer than the 1023 bytes kept: 400 saying so (it was "not a
# valid form", which sent a script's writer after a bad escape)
longnote=$(printf 'n%.0s' $(seq 1024))
req POST "/api/lists/dev/held/$idP" $A -d "action=reject&note=$longnote&sha256=$shaQ"
check "a note of 1024 bytes: 400 saying it is too long, nothing decided" \
    said_held 400 "$idP" 'note longer than 1023 bytes'
req POST "/api/lists/dev/held/$idP" $A -H 'Content-Type: application/json' \
    -d "{\"action\": \"reject\", \"note\": \"$longnote\", \"sha256\": \"$shaQ\"}"
check "... as JSON too" said_held 400 "$idP" 'note longer than 1023 bytes'
req POST "/api/lists/dev/held/$idP" $A -d "action=reject&note=%zz&sha256=$shaQ"
check "... a bad escape in it is still not a valid form" \
    said_held 400 "$idP" 'not a valid form'
req POST "/api/lists/dev/held/$idP" $A -d "action=reject&sha256=$shaQ"
check "the post's own sha256 decides it" \
    decided_as 200 "$idP" rejected
req GET "/lists/other" -b "$J"
check "a page of a list the user may not see: 403" test "$code" = 403
req GET "/lists/dev/held/$id3" -b "$J"
check "another list's post through one's own list page: 404" test "$code" = 404
req GET /lists/dev
check "a page without a session: 303 to /login" \
    sh -c "test $code = 303 && grep -qi '^Location: /login' '$T/hdr'"
req POST /logout -b "$J" -c "$J" -d "csrf=$csrf"
req GET /lists/dev -b "$J"
check "after logout the session is gone" test "$code" = 303

# --- hostile paths and headers ---------------------------------------------------
req GET "/lists/..%2f..%2fetc%2fpasswd" $A
check "path traversal in a list name: 404, no file" \
    sh -c "test $code = 404 || test $code = 303; ! grep -q root: '$T/body'"
req GET "/api/lists/..%2F..%2Fetc%2Fpasswd/held" $A
check "path traversal through the API: 404" test "$code" = 404
req GET "/style.css/../../../../etc/passwd" $A
check "no file behind the stylesheet's path" \
    sh -c "! grep -q root: '$T/body'"
req GET "/api/lists/dev/held/$id1%0d%0aSet-Cookie:%20x=1" $A
check "CRLF in the path: 400 (a control character), no header injected" \
    sh -c "test $code = 400 && ! grep -qi '^Set-Cookie: x=1' '$T/hdr'"
check "... and the log line stays one line, the path as asked" \
    grep -q 'path="/api/lists/dev/held/[0-9]*%0d%0aSet-Cookie:%20x=1" status=400' "$T/web.log"
evil_sub=$(printf 'Subject: =?UTF-8?B?%s?=' "$(printf 'x\r\nSet-Cookie: y=2\r\n<script>alert(1)</script>' | base64 -w0)")
{ printf 'From: a@example.org\n%s\nMessage-ID: <evil@x>\n\n<b>hi</b> \033[31m\n' "$evil_sub"; } > "$T/evil.eml"
id6=$("$QHOLD" dev "$T/evil.eml" 0.9) || exit 99
req GET "/api/lists/dev/held/$id6" $A
check "a post's hostile header reaches JSON escaped and masked" \
    sh -c "test $code = 200 && grep -q 'x  Set-Cookie: y=2  <script>' '$T/body' && ! grep -qi '^Set-Cookie: y' '$T/hdr'"
check "... the JSON parses" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/body"
req GET "/lists/dev/held/$id6" -u alice:alice-secret-1
A_J=$T/jar2
curl -s -o /dev/null -c "$A_J" -d "user=alice&password=alice-secret-1" "$URL/login"
req GET "/lists/dev/held/$id6" -b "$A_J"
# an Authorization header that is no Basic credentials (a proxy's
# "Bearer" in front of the page, say) leaves the session's cookie to
# decide: the API answered 401 to every call of the page
req GET "/api/lists/dev/held/$id6" -b "$A_J" -H "Authorization: Bearer abc"
check "the API with a session cookie and an Authorization: Bearer header: 200 ($code)" \
    test "$code" = 200
req GET "/api/lists/dev/held/$id6" -H "Authorization: Bearer abc"
check "... without the cookie: 401 ($code)" test "$code" = 401
req GET "/api/lists/dev/held/$id6" -b "$A_J" -u alice:wrong-password
check "... a wrong Basic password with the cookie: still 401 ($code)" \
    test "$code" = 401
req GET "/lists/dev/held/$id6" -b "$A_J"
check "a post's HTML and scripts are shown as text on its page" \
    sh -c "grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' '$T/body' && ! grep -q '<script>' '$T/body' && grep -q '&lt;b&gt;hi&lt;/b&gt;' '$T/body'"
# a post of bytes that each become 8 bytes of HTML (&#xfffd;): 250 KB of
# headers and 600 KB of body; its page with the source once passed the
# answer's 4 MiB and came cut short with a 200
python3 -c '
import sys
o = sys.stdout.buffer
o.write(b"From: a@example.org\nSubject: big\nMessage-ID: <big@x>\n")
for i in range(200):
    o.write(b"X-Junk-%d: " % i + b"\xff" * 1200 + b"\n")
o.write(b"\n" + (b"\xfe" * 999 + b"\n") * 600)' > "$T/huge.eml"
id7=$("$QHOLD" dev "$T/huge.eml" 0.9) || exit 99
req GET "/lists/dev/held/$id7?raw=1" -b "$A_J"
check "a post whose every byte is masked: its page with the source comes whole" \
    sh -c "test $code = 200 && tail -c 300 '$T/body' | grep -q '</html>'"
check "... the source cut with a marker, the headers shown (up to 200)" \
    sh -c "grep -q '&#xfffd;\.\.\.</pre>' '$T/body' && test \$(grep -o '<dt>X-Junk-[0-9]*</dt>' '$T/body' | wc -l) -ge 190"
req GET "/api/lists/dev/held/$id7" $A
check "... and through the API its JSON parses" \
    sh -c "test $code = 200 && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' '$T/body'"
# 180 posts whose subjects are 4096 masked bytes (the most the queue
# keeps; 6 bytes of JSON each): listed 500 at a time they once made an
# answer of 4.4 MB, past the 4 MiB cap
QHOLD_SUBJECT=$(python3 -c 'print("\x01" * 4096, end="")') \
    "$QHOLD" -n flood "$DATA/spam1.eml" 180 > /dev/null || exit 99
req GET "/api/lists/flood/held?limit=500" $B
check "a listing of 180 posts with 4096-byte masked subjects: 200, JSON that parses" \
    sh -c "test $code = 200 && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(len(d[\"entries\"]) != 180)' '$T/body'"
check "... each subject cut with a marker" \
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["entries"][0]["subject"]; sys.exit(not (s.endswith("...") and len(s) <= 300))' "$T/body"
# a post held unscored because it was larger than max_post_bytes
# (verdict oversize, the score stored 0): its score was 0.000000 in the
# listing (which has no verdict) and a green bar at 0.0000 on the page,
# a post surely ham; now null, and "not scored" on the pages
idO=$("$QHOLD" ovs "$DATA/spam2.eml" 0) || exit 99
"$QHOLD" ovs "$DATA/spam1.eml" 0.97 > /dev/null || exit 99
sql "UPDATE held_posts SET verdict = 'oversize' WHERE id = $idO" || exit 99
req GET "/api/lists/ovs/held" $B
check "an oversize post (unscored) in the listing: score null, the scored one's a number" \
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s={e["id"]: e["score"] for e in d["entries"]}; sys.exit(not (len(s) == 2 and s.pop(int(sys.argv[2])) is None and list(s.values()) == [0.97]))' "$T/body" "$idO"
req GET "/api/lists/ovs/held/$idO" $B
check "... in its own answer: score null, verdict oversize" \
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d["score"] is None and d["verdict"] == "oversize"))' "$T/body"
B_J=$T/jar-bob
curl -s -o /dev/null -c "$B_J" -d "user=bob&password=bob-secret-12" "$URL/login"
req GET "/lists/ovs" -b "$B_J"
check "... on the list's page: not scored, no score bar at 0" \
    sh -c "test $code = 200 && grep -q 'not scored (oversize)' '$T/body' && ! grep -q 'aria-label=\"score 0.0000\"' '$T/body' && grep -q 'aria-label=\"score 0.9700\"' '$T/body'"
req GET "/lists/ovs/held/$idO" -b "$B_J"
check "... and on its own page" \
    sh -c "test $code = 200 && grep -q 'not scored (oversize' '$T/body' && ! grep -q 'aria-label=\"score' '$T/body'"
# a post held oversize may be up to 1 GiB: its page and its answer read
# it whole (the compressed bytes and the post, each time), so that a few
# moderators opening it, or one in a few tabs, took gigabytes of memory;
# now only its first WEB_MAX_POST_READ (4 MiB) are fetched and read
{ printf 'From: a@example.org\nSubject: a long one\nMessage-ID: <long@x>\n\nhello at the top\n'
  head -c 48000000 /dev/zero | tr '\0' x | fold -w 76; } > "$T/long.eml"
idL=$("$QHOLD" dev "$T/long.eml" 0.9) || exit 99
rm -f "$T/long.eml"
# the growth of the server's resident memory at its peak during a request
peak() {
	echo 5 > "/proc/$webpid/clear_refs" 2>/dev/null || return 1
	h0=$(awk '/^VmHWM:/ { print $2 }' "/proc/$webpid/status")
	req "$@"
	h1=$(awk '/^VmHWM:/ { print $2 }' "/proc/$webpid/status")
	grew=$(((h1 - h0) / 1024))
}
if [ -w "/proc/$webpid/clear_refs" ]; then
	peak GET "/lists/dev/held/$idL?raw=1" -b "$A_J"
	check "a 48 MB post's page: 200 with its text, in less than 24 MB more memory (${grew} MB)" \
	    sh -c "test $code = 200 && grep -q 'hello at the top' '$T/body' && test $grew -lt 24"
	check "... saying that only its first 4 MiB were read, and what prints it whole" \
	    sh -c "grep -q '<p id=\"cut\">Only the first 4 MiB' '$T/body' && grep -q ' show $idL</code> prints it whole' '$T/body'"
	peak GET "/api/lists/dev/held/$idL" $A
	check "... its answer: 200, in less than 24 MB more memory (${grew} MB)" \
	    sh -c "test $code = 200 && test $grew -lt 24"
	check "... size the whole post's, read_bytes 4 MiB, the preview from them" \
	    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d["size"] > 48000000 and d["read_bytes"] == 4194304 and d["preview"].startswith("hello at the top")))' "$T/body"
	# a decision that releases nothing (a rejection, a discard) fetched
	# the post's compressed bytes all the same, unused: 30 MB of them
	# for a post that does not compress
	{ printf 'From: a@example.org\nSubject: noise\nMessage-ID: <noise@x>\n\n'
	  head -c 22500000 /dev/urandom | base64 -w 76; } > "$T/noise.eml"
	idN=$("$QHOLD" dev "$T/noise.eml" 0.9) || exit 99
	rm -f "$T/noise.eml"
	peak POST "/api/lists/dev/held/$idN" $A -d action=discard
	check "a 30 MB post that does not compress discarded: 200, in less than 12 MB more memory (${grew} MB)" \
	    sh -c "test $code = 200 && test $grew -lt 12 && test \"\$(psql -X -A -t -c 'SELECT status FROM held_posts WHERE id = $idN')\" = discarded"
	# a rejection tells the sender (sender_notice), whose notice needs
	# the post's header: it read the post whole
	cp "$CONF/lists/dev.conf" "$T/dev.conf"
	printf '#!/bin/sh\ncat >> "%s/notified.$1"\n' "$T" > "$T/notify.sh"
	printf 'moderation_address = dev-moderate@example.org\nnotify = /bin/sh %s/notify.sh {moderator}\nsender_notice = yes\n' \
	    "$T" >> "$CONF/lists/dev.conf"
	{ printf 'From: a@example.org\nSubject: long again\nMessage-ID: <long2@x>\n\n'
	  head -c 48000000 /dev/zero | tr '\0' x | fold -w 76; } > "$T/long.eml"
	idL2=$("$QHOLD" dev "$T/long.eml" 0.9) || exit 99
	rm -f "$T/long.eml"
	peak POST "/api/lists/dev/held/$idL2" $A -d action=reject
	check "a 48 MB post rejected, its sender told (in reply to its Message-ID): in less than 12 MB more memory (${grew} MB)" \
	    sh -c "test $code = 200 && test $grew -lt 12 && grep -q '<long2@x>' '$T/notified.sender@example.org'"
	# ... and the robot rules still see a header longer than what is
	# read first: a list's post (List-Id) after 1.5 MB of fields is
	# never answered
	python3 -c '
import sys
o = sys.stdout.buffer
o.write(b"From: a@example.org\nSubject: a list post\nMessage-ID: <lhdr@x>\n")
for i in range(20000):
    o.write(b"X-Pad-%d: " % i + b"y" * 70 + b"\n")
o.write(b"List-Id: <other.lists.example.org>\n\n" + b"z" * 76 * 30000)' > "$T/lhdr.eml"
	idH=$("$QHOLD" dev "$T/lhdr.eml" 0.9) || exit 99
	req POST "/api/lists/dev/held/$idH" $A -d action=reject
	check "a list's post whose List-Id comes after 1.5 MB of header: rejected, its sender not told" \
	    sh -c "test $code = 200 && ! grep -q '<lhdr@x>' '$T/notified.sender@example.org'"
	cp "$T/dev.conf" "$CONF/lists/dev.conf"
else
	echo "# SKIP a long post's page: /proc/PID/clear_refs cannot be written"
fi
req GET "/api/lists/dev/held/$id6" $A
check "a short post's answer reads it whole (read_bytes is its size)" \
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d["read_bytes"] == d["size"] > 0))' "$T/body"

# --- a slow client (slowloris) does not block others -----------------------------
python3 - "$port" > "$T/slow.out" 2>&1 <<'EOF' &
import socket, sys, time
port = int(sys.argv[1])
socks = []
for i in range(80):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        s.sendall(b"GET /api/lists HTTP/1.1\r\nHost: x\r\n")
        socks.append(s)
    except OSError:
        pass
for k in range(8):
    for s in socks:
        try:
            s.sendall(b"X-a: b\r\n")
        except OSError:
            pass
    time.sleep(0.5)
print(len(socks))
EOF
slowpid=$!
sleep 1
t0=$(date +%s%N)
req GET /api/lists $A
t1=$(date +%s%N)
check "a normal request is answered while 80 connections trickle headers" \
    sh -c "test $code = 200 && test $(( (t1 - t0) / 1000000 )) -lt 2000"
wait "$slowpid"

# --- login limits: per account, per address --------------------------------------
for i in 1 2 3 4 5; do
	req GET /api/lists -u carol:wrong-$i
done
req GET /api/lists -u carol:carol-secret-1
check "after 5 failures the account must wait (429), right password or not" \
    sh -c "test $code = 429 && grep -qi '^Retry-After: [0-9]' '$T/hdr'"
req GET /api/lists $B
check "... other accounts are not held up" test "$code" = 200
for i in $(seq 1 20); do
	req POST /login -d "user=u$i&password=x" -H "X-Forwarded-For: 198.51.100.9"
done
req POST /login -d "user=bob&password=bob-secret-12" -H "X-Forwarded-For: 198.51.100.9"
check "after 20 failures from one address it must wait (429)" test "$code" = 429
req POST /login -d "user=bob&password=bob-secret-12" -H "X-Forwarded-For: 198.51.100.10"
check "... other addresses are not held up" test "$code" = 303
# an IPv6 address counts for its /64
for i in $(seq 1 20); do
	req POST /login -d "user=u$i&password=x" -H "X-Forwarded-For: 2001:db8:1:2::$i"
done
req POST /login -d "user=bob&password=bob-secret-12" -H "X-Forwarded-For: 2001:db8:1:2:ffff::1"
check "20 failures from one IPv6 /64: another address in it must wait (429)" test "$code" = 429
req POST /login -d "user=bob&password=bob-secret-12" -H "X-Forwarded-For: 2001:db8:1:3::1"
check "... the next /64 is not held up" test "$code" = 303
# a proxy that sends the client's port ("192.0.2.1:4711", "[v6]:4711"):
# the address without it (it was the proxy's own address for every
# client, so one client's 20 failures held up every login)
for i in $(seq 1 20); do
	req POST /login -d "user=p$i&password=x" -H "X-Forwarded-For: 192.0.2.44:$((4000 + i))"
done
req POST /login -d "user=bob&password=bob-secret-12" -H "X-Forwarded-For: 192.0.2.44:9"
check "20 failures from one address with a port each: the address must wait (429)" \
    test "$code" = 429
req POST /login -d "user=bob&password=bob-secret-12" -H "X-Forwarded-For: 192.0.2.45:4711"
check "... another address with a port is not held up (303, not $code)" \
    test "$code" = 303
req POST /login -d "user=bob&password=bob-secret-12" -H "X-Forwarded-For: [2001:db8:7::1]:4711"
check "... nor a bracketed IPv6 address with a port (303, not $code)" \
    test "$code" = 303
req GET /lists -H "X-Forwarded-For: [2001:db8:7::2]"
check "... and the log names the addresses without their ports" \
    sh -c "grep -q 'addr=192.0.2.44 ' '$T/web.log' && grep -q 'addr=192.0.2.45 ' '$T/web.log' && grep -q 'addr=2001:db8:7::1 ' '$T/web.log' && grep -q 'addr=2001:db8:7::2 ' '$T/web.log'"
req GET /lists -H "X-Forwarded-For: 192.0.2.46:x" -H "X-Forwarded-For: [192.0.2.47]:1"
check "... a port that is not a number, an IPv4 address in brackets: the proxy's address" \
    sh -c "! grep -q 'addr=192.0.2.4[67]' '$T/web.log'"
# a client's own X-Forwarded-For line comes before the one a proxy adds
# (HAProxy's option forwardfor): the last line is the proxy's
for i in $(seq 1 20); do
	req POST /login -d "user=x$i&password=x" \
	    -H "X-Forwarded-For: 192.0.2.$((100 + i))" \
	    -H "X-Forwarded-For: 198.51.100.20"
done
req POST /login -d "user=bob&password=bob-secret-12" \
    -H "X-Forwarded-For: 192.0.2.150" -H "X-Forwarded-For: 198.51.100.20"
check "20 failures with X-Forwarded-For lines of the client's own before the proxy's: the proxy's address must wait (429, not $code)" \
    test "$code" = 429
check "... and the log names the proxy's address" \
    sh -c "grep -q 'addr=198.51.100.20 ' '$T/web.log' && ! grep -q 'addr=192.0.2.150 ' '$T/web.log'"
# a new password ends the sessions of the old one
printf 'dave-secret-1\n' | lg user add dave --lists dev,other > /dev/null
sleep 1.1
D_J=$T/jar-dave
curl -s -o /dev/null -c "$D_J" -H "X-Forwarded-For: 192.0.2.77" \
    -d "user=dave&password=dave-secret-1" "$URL/login"
req GET /lists/dev -b "$D_J"
check "dave logged in" test "$code" = 200
printf 'dave-secret-2\n' | lg user add dave --lists dev,other --replace > /dev/null
sleep 1.1
req GET /lists/dev -b "$D_J"
check "a new password (user add --replace) ends the old password's sessions" test "$code" = 303
req GET /api/lists -u dave:dave-secret-2
check "... and the new password works" test "$code" = 200
curl -s -o /dev/null -c "$D_J" -H "X-Forwarded-For: 192.0.2.78" \
    -d "user=dave&password=dave-secret-2" "$URL/login"
printf 'dave-secret-2\n' | lg user add dave --lists dev --replace > /dev/null
sleep 1.1
req GET /lists/dev -b "$D_J"
check "the same password again (only the lists change) keeps the sessions" test "$code" = 200
# a script's Basic polls (its credentials remembered) reset nobody's
# count of wrong guesses: only a password that is hashed and right does
printf 'erin-secret-1\n' | lg user add erin --lists dev > /dev/null
sleep 1.1
req GET /api/lists -u erin:erin-secret-1 -H "X-Forwarded-For: 192.0.2.90"
for i in 1 2 3 4; do
	req GET /api/lists -u erin:guess-$i -H "X-Forwarded-For: 192.0.2.9$i"
done
req GET /api/lists -u erin:erin-secret-1 -H "X-Forwarded-For: 192.0.2.90"
check "erin's script polls (200) between wrong guesses" test "$code" = 200
req GET /api/lists -u erin:guess-5 -H "X-Forwarded-For: 192.0.2.95"
req GET /api/lists -u erin:guess-6 -H "X-Forwarded-For: 192.0.2.96"
check "... the 6th wrong guess waits all the same (429)" test "$code" = 429
# guesses sent all at once get no more tries than guesses sent one by
# one: 30 at once for one account, from 30 addresses
python3 - "$URL" > "$T/race" <<'EOF2'
import base64, sys, threading, urllib.request, urllib.error
url, codes = sys.argv[1], []
def guess(i):
	req = urllib.request.Request(url + "/api/lists", headers={
	    "Authorization": "Basic " + base64.b64encode(
	        ("dave:guess-%d" % i).encode()).decode(),
	    "X-Forwarded-For": "203.0.113.%d" % (i + 1)})
	try:
		urllib.request.urlopen(req, timeout=60)
		codes.append(200)
	except urllib.error.HTTPError as e:
		codes.append(e.code)
	except Exception:
		codes.append(0)
ts = [threading.Thread(target=guess, args=(i,)) for i in range(30)]
for t in ts: t.start()
for t in ts: t.join()
print(codes.count(401), codes.count(429), len(codes))
EOF2
read n401 n429 nall < "$T/race"
check "30 guesses at once for one account: at most 5 checked ($n401 401, $n429 429)" \
    test "$nall" = 30 -a "$n401" -le 5 -a $((n401 + n429)) -eq 30

# --- a PostgreSQL restart ---------------------------------------------------------
# it ends every connection; the idle ones in the pool are dropped when
# next taken, not failed on (a decision once got 500, and each of a
# read's first few tries too)
idR1=$("$QHOLD" dev "$DATA/spam3.eml" 0.97) || exit 99
idR2=$("$QHOLD" dev "$DATA/spam4.eml" 0.97) || exit 99
pids=
for i in 1 2 3 4 5 6; do
	curl -s -o /dev/null $B "$URL/api/lists/dev/held" &
	pids="$pids $!"
done
wait $pids
sh "$PG_SH" stop && sh "$PG_SH" start ||
    { echo "Bail out! PostgreSQL did not restart"; exit 99; }
req POST "/api/lists/dev/held/$idR1" $B -d action=reject
check "after a PostgreSQL restart a decision is made (200, not $code)" \
    test "$code" = 200
codes=
for i in 1 2 3 4 5 6 7 8; do
	req GET /api/lists/dev/held $B
	codes="$codes $code"
done
check "... and reads after it answer 200 ($codes)" \
    test "$codes" = " 200 200 200 200 200 200 200 200"
# the sync thread's connection was ended too: its first sync after the
# restart fails, and the list is tried again a second later (it once
# stayed behind the journal until the next decision on it)
i=0
while [ $i -lt 100 ]; do
	lg sync --check --list dev > "$T/check" 2>&1
	grep -q 'journal position \([0-9]*\) of \1$' "$T/check" && break
	sleep 0.1
	i=$((i + 1))
done
check "... and the decision's training reaches the token file ($(tail -n 1 "$T/check"))" \
    grep -q 'journal position \([0-9]*\) of \1$' "$T/check"
check "... after a failed sync that was tried again" \
    grep -q 'token files behind the journal: next try in 1 s' "$T/web.log"

# the list's page a decision goes back to, when the database is gone
# by then: its 503 took the session's message (what the decision did)
# and showed nothing of it, so the moderator never saw it
idR3=$("$QHOLD" dev "$DATA/spam-test.eml" 0.97) || exit 99
BJ=$T/bjar
curl -s -o /dev/null -c "$BJ" -d "user=bob&password=bob-secret-12" "$URL/login"
req GET "/lists/dev/held/$idR3" -b "$BJ"
bcsrf=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$T/body" | head -n 1)
req POST "/lists/dev/held/$idR3" -b "$BJ" -d "csrf=$bcsrf&action=reject"
check "a page's decision goes back to the list ($code)" test "$code" = 303
sh "$PG_SH" stop || { echo "Bail out! PostgreSQL did not stop"; exit 99; }
req GET /lists/dev -b "$BJ"
sh "$PG_SH" start || { echo "Bail out! PostgreSQL did not restart"; exit 99; }
check "... whose 503, the database gone, still says what the decision did ($code)" \
    sh -c "test $code = 503 && grep -q 'post $idR3 rejected' '$T/body'"

# --- users.conf changes reach the running server ------------------------------------
# at once: users.conf was looked at once a second, so the requests of
# the second after a change were answered as before it (a list taken
# away still decided on, a deleted account still let in)
stale=
for i in 1 2 3 4 5; do
	printf 'alice-secret-1\n' | lg user add alice --replace --lists other > /dev/null
	req GET /lists/dev -b "$A_J"
	c1=$code
	req GET /api/lists/dev/held $A
	[ "$c1$code" = 403403 ] || stale="$stale $i:$c1,$code"
	printf 'alice-secret-1\n' | lg user add alice --replace --lists dev > /dev/null
	req GET /lists/dev -b "$A_J"
	c1=$code
	req GET /api/lists/dev/held $A
	[ "$c1$code" = 200200 ] || stale="$stale $i+:$c1,$code"
done
check "a list taken from an account is refused at once, and given back too (${stale:-every time})" \
    test -z "$stale"
lg user del alice > /dev/null
req GET /api/lists $A
check "a deleted account is refused at once" test "$code" = 401
req GET /lists/dev -b "$A_J"
check "... and its sessions end" test "$code" = 303
# an account whose hash has other yescrypt parameters than listgate's
# (mkpasswd -R): its logins take another time than those of a name
# without an account (the hash of a dummy, of listgate's parameters),
# which tells that it exists; the log says so, and what to run
if weak=$(perl -e 'print crypt("weak-secret-1", q($y$j75$abcdefghijklmnop$))' 2>/dev/null) &&
    case $weak in '$y$j75$'*) true;; *) false;; esac; then
	printf 'weak:%s:dev\n' "$weak" >> "$CONF/users.conf"
	req GET /api/lists -u weak:weak-secret-1
	check "an account of other yescrypt parameters logs in ($code)" test "$code" = 200
	check "... and the log warns of it, saying what to run" \
	    grep -q "web: user weak: its password hash has other yescrypt parameters than listgate makes.* user add weak --replace" "$T/web.log"
	printf 'weak-secret-1\n' | lg user add weak --replace --lists dev > /dev/null
	req GET /api/lists -u weak:weak-secret-1
	check "... which, run, makes it one of listgate's: no warning more" \
	    test "$(grep -c 'web: user weak: its password hash' "$T/web.log")" -eq 1
	lg user del weak > /dev/null
else
	echo "# SKIP a hash of other parameters: no perl, or its crypt has no yescrypt"
fi

wait "$tricklepid"
tk=$(cat "$T/trickle.out")
check "a request trickled a line every 10 s is cut off in 60 s (after $tk s)" \
    test "$tk" -ge 55 -a "$tk" -le 75
check "... saying so in the log" \
    grep -q 'closed: no whole request in 60 s' "$T/web.log"
wait "$readerpid"
sed 's/^/# slow reader: /' "$T/slowread.out"
grep "path=\"/lists/dev/held/$idW\"" "$T/web.log" | sed "s/^/# /"
sw_ms=$(sed -n "s|.*path=\"/lists/dev/held/$idW\" status=200 bytes=[0-9]* ms=\([0-9]*\)\.[0-9] end=error\$|\1|p" \
    "$T/web.log")
check "an answer read 8 KiB a second: its connection cut off in 60 s and 1 s per 32 KiB (122 s; after ${sw_ms:-no end in} ms)" \
    test "${sw_ms:-0}" -ge 118000 -a "${sw_ms:-999999}" -le 130000
check "... and reset: what its socket held of the answer is dropped" \
    grep -q '^read 1[0-9][0-9] [0-9]* [0-9]* reset$' "$T/slowread.out"
check "... saying so in the log" \
    grep -q 'closed: the answer was not read whole in 60 s and 1 s per 32 KiB' "$T/web.log"
check "... and one that reads nothing is closed too (30 s idle)" \
    grep -q '^deaf closed' "$T/slowread.out"

# --- the log and the stop -------------------------------------------------------------
check "one log line per request, with status and user" \
    grep -q "user=bob method=POST path=\"/api/lists/dev/held/$id2\" status=200" "$T/web.log"
check "no password, hash or session id in the log" \
    sh -c "! grep -q 'secret\|\\\$y\\\$\|$csrf' '$T/web.log'"
# a decision in progress at SIGTERM is answered before the server stops
# (the answer was lost: the post released, the client told nothing);
# slow's release takes 4 s
idT=$("$QHOLD" slow "$DATA/ham4.eml" 0.6) || exit 99
# and a client that never ends its headers (one more every second): it
# must not hold the stop up (it once did for the timeout and 5 s)
python3 - "$port" "$T/trickling" <<'PY' > "$T/trickle.out" 2>&1 &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /api/lists HTTP/1.1\r\nHost: x\r\n")
open(sys.argv[2], "w").close()
for i in range(60):
    time.sleep(1)
    try:
        s.sendall(b"X-a: b\r\n")
    except OSError:
        break
PY
tpid=$!
i=0
while [ ! -e "$T/trickling" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
curl -s -o /dev/null -w '%{http_code}' $B -d action=approve \
    "$URL/api/lists/slow/held/$idT" > "$T/stop.code" 2>&1 &
cpid=$!
i=0
while [ "$(sql "SELECT status FROM held_posts WHERE id = $idT")" != releasing ] &&
    [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
t0=$(date +%s)
kill -TERM "$webpid"
sleep 0.5
# a new connection meanwhile is refused, not left in the backlog
curl -s -m 3 -o /dev/null "$URL/style.css"
crc=$?
wait "$webpid"
webrc=$?
took=$(($(date +%s) - t0))
kill "$tpid" 2>/dev/null
wait "$tpid" 2>/dev/null
sed 's/^/# trickler: /' "$T/trickle.out"
wait "$cpid"
check "a connection made while the server stops is refused (curl exit $crc)" \
    test "$crc" -eq 7 -o "$crc" -eq 52 -o "$crc" -eq 56
check "a client that never ends its headers does not hold the stop up (${took} s)" \
    test "$took" -le 20
check "a decision in progress at SIGTERM is answered ($(cat "$T/stop.code"))" \
    test "$(cat "$T/stop.code")" = 200
check "... and recorded" \
    test "$(sql "SELECT status FROM held_posts WHERE id = $idT")" = approved
check "SIGTERM stops it cleanly (exit 0)" test "$webrc" -eq 0
check "... saying so" grep -q "web: stopped" "$T/web.log"
webpid=
echo "1..$n"
[ "$fails" -eq 0 ]

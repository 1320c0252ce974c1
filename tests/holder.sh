#!/bin/sh
# holder.sh - `listgate holder`: filter hands the posts it holds to the
# resident holder over its Unix socket, and holds them itself whenever
# the holder does not answer; nothing is lost and nothing held twice
#
# Runs under tests/pg.sh, with pgbouncer (transaction pooling) in front
# of the private PostgreSQL for the first part, as a busy site would run
# it (docs/scaling.md), and directly for the rest.  Checks:
#   - a spam post goes through the holder: qmail exit 99, one row with
#     exactly the bytes received, the log says holder=yes, and the
#     filter process never loaded libpq (LD_DEBUG=files); the holder
#     sends the hold notices (notices=holder) and they carry the id,
#     and a reply to the notice approves the post (its cookie bound to
#     the bytes stored);
#   - the same bytes again: the same id, still one row; a discarded
#     post is stored as discarded, without notices, and once when the
#     holder answers too late and the filter stores it too;
#   - a second holder on the same socket refuses to start;
#   - hostile clients (garbage, a huge length, a request cut short, a
#     bad field) get an error or nothing, and the holder goes on;
#   - the database down: the holder answers an error, filter tries
#     itself and defers (111), nothing stored; back up, the holder's
#     workers connect again on their own;
#   - a holder that accepts and never answers: filter waits at most a
#     quarter of the list's timeout, then holds the post itself;
#   - the holder killed (SIGKILL): its workers go with it, filter holds
#     the post itself (libpq loaded, holder_error in the log), and a
#     new holder replaces the stale socket;
#   - listgate.conf changed to another database: the holder reads it
#     again and stores there;
#   - a filter of another configuration (another database) on the
#     holder's socket holds its post itself, in its own database;
#   - SIGTERM: the socket goes at once, even while a worker is busy;
#     the holder exits 0 when its workers are done.
# Never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run --pgbouncer sh "$0" "$@"
fi
: "${PGBOUNCER_PORT:?run by tests/pg.sh run --pgbouncer}"
command -v script >/dev/null 2>&1 || { echo "script(1) missing: skip"; exit 77; }
QHOLD=$top_builddir/tests/qhold
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-holder.XXXXXX") || exit 99
hpid=
stop_holder() {
	if [ -n "$hpid" ]; then
		kill "$hpid" 2>/dev/null
		wait "$hpid" 2>/dev/null
		hpid=
	fi
}
trap 'stop_holder; [ -n "${fpid:-}" ] && kill "$fpid" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
CONF=$T/conf
SOCK=$T/holder.sock
MAIL=$T/mail
mkdir -p "$CONF/lists" "$MAIL" || exit 99
# the database directly; the same through pgbouncer in $CONF_B, with a
# socket of its own
printf 'tokens_dir = %s/tokens\nsecret_file = %s/secret\ndatabase = host=%s port=%s dbname=%s\nholder_socket = %s\n' \
    "$T" "$T" "$PGHOST" "$PGPORT" "$PGDATABASE" "$SOCK" \
    > "$CONF/listgate.conf"
cat > "$T/notify.sh" <<EOF
#!/bin/sh
# notify.sh MODERATOR ID: one file per notice
cat > "$MAIL/\$2.\$1"
EOF
cat > "$CONF/lists/dev.conf" <<EOF
deliver = /bin/sh -c "cat > /dev/null"
release = /bin/sh -c "cat > $T/released"
moderators = alice@example.org
moderation_address = dev-moderate@lists.example.org
notify = /bin/sh $T/notify.sh {moderator} {id}
EOF

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
nrows() { sql "SELECT count(*) FROM held_posts WHERE list = 'dev'"; }

lg init > /dev/null 2>&1 || exit 99
lg migrate -q || exit 99
journal_train dev || exit 99
lg sync -q --list dev || exit 99

# post N: a spam post of its own bytes
post() {
	{ printf 'Received: by mx%s.example.org; holder test\n' "$1"
	  cat "$DATA/spam-test.eml"; } > "$T/post$1.eml"
}
# filter FILE OUT: the exit status; the log line (stderr on a terminal,
# script(1)) in OUT, the loader's list of files in OUT.ld.*
filter() {
	rm -f "$2".ld.*
	script -qec "LD_DEBUG=files LD_DEBUG_OUTPUT='$2.ld' '$LISTGATE' \
	    --allow-root --config '$C' filter --list dev --mta qmail \
	    < '$1'; echo \"exit=\$?\"" /dev/null > "$2" 2>&1
	st=$(sed -n 's/^exit=\([0-9]*\).*/\1/p' "$2")
	return "${st:-1}"
}
starts() { case $1 in "$2"*) return 0 ;; esac; echo "# $1"; return 1; }
loaded_libpq() { cat "$1".ld.* 2>/dev/null | grep -q 'file=libpq\.so'; }
logged_id() { sed -n 's/.* id=\([0-9]*\) .*/\1/p' "$1" | head -n 1; }
start_holder() {
	# the last holder's log goes first: its "listening on" line (the
	# same socket) could be read before this one's shell truncates the
	# file, and the check after the wait then found it empty (seen in
	# CI: "did not say it listens", an empty log, a holder 0 s old)
	rm -f "$T/holder.log"
	"$LISTGATE" --allow-root --config "$C" holder --workers 2 \
	    > "$T/holder.log" 2>&1 &
	hpid=$!
	# (a stale socket may be there before it: only its word counts;
	# a sanitizer build on a busy machine may take seconds to connect)
	i=0
	while ! grep -q "listening on $S" "$T/holder.log" && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q "listening on $S" "$T/holder.log" && [ -S "$S" ] && return 0
	echo "# the holder did not say it listens within 60 s:"
	sed 's/^/# /' "$T/holder.log"
	holder_stuck "$hpid"
	return 1
}
# holder_stuck PID: what a holder that never came up is doing
holder_stuck() {
	echo "# its processes, and what they wait in:"
	ps -o pid,ppid,stat,wchan:32,etime,args -p "$1" 2>&1 | sed 's/^/# /'
	pgrep -P "$1" | while read -r c; do
		ps -o pid,ppid,stat,wchan:32,etime,args -p "$c" | sed 1d | sed 's/^/# /'
	done
	for f in /proc/"$1"/task/*/stack; do
		[ -r "$f" ] && sed 's/^/# kernel: /' "$f"
	done
	if command -v gdb > /dev/null 2>&1; then
		timeout 30 gdb -q -batch -p "$1" -ex 'thread apply all bt' 2>&1 |
		    grep '^#' | sed 's/^/# gdb: /'
	fi
	echo "# the database's sessions:"
	psql -X -q -A -t -c "SELECT pid, state, wait_event_type, wait_event,
	    now() - query_start, left(query, 80) FROM pg_stat_activity
	    WHERE datname IS NOT NULL" 2>&1 | sed 's/^/# /'
}
# the configuration and socket in use
C=$CONF S=$SOCK

# --- through pgbouncer -------------------------------------------------------------
CONF_B=$T/conf-b
mkdir -p "$CONF_B/lists" || exit 99
cp "$CONF/lists/dev.conf" "$CONF_B/lists/dev.conf"
printf 'tokens_dir = %s/tokens\nsecret_file = %s/secret\ndatabase = host=%s port=%s dbname=%s\nholder_socket = %s\n' \
    "$T" "$T" "$PGHOST" "$PGBOUNCER_PORT" "$PGDATABASE" "$T/holder-b.sock" \
    > "$CONF_B/listgate.conf"
C=$CONF_B S=$T/holder-b.sock
check "a holder whose database is pgbouncer starts" start_holder
post 0
filter "$T/post0.eml" "$T/f0"
check "... a spam post held through it and pgbouncer (99, holder=yes)" \
    sh -c "test $? -eq 99 && grep -q ' holder=yes' '$T/f0'"
check "... the filter never loaded libpq" sh -c "! cat '$T/f0'.ld.* | grep -q 'file=libpq'"
check "... (the loader's log is there: the check can fail)" \
    sh -c "cat '$T/f0'.ld.* | grep -q 'file=libc\.so'"
check "... one row, the post's bytes" test "$(sql "SELECT count(*) FROM held_posts
    WHERE list = 'dev' AND size = $(wc -c < "$T/post0.eml")")" -eq 1
stop_holder
check "... SIGTERM: it exits and removes its socket" test ! -e "$S"
sql "DELETE FROM held_posts" || exit 99
C=$CONF S=$SOCK

run_help() { lg holder --help > "$T/help" 2>&1; grep -q "usage: listgate .*holder" "$T/help"; }
check "holder --help" run_help
lg holder --workers 0 > /dev/null 2> "$T/werr"
check "holder --workers 0: usage error (2)" test $? -eq 2
check "... naming the value" grep -q "bad --workers '0' (want 1 to 64)" "$T/werr"
check "holder starts and creates its socket" start_holder
check "... mode 0660" test "$(stat -c %a "$SOCK")" = 660

# --- a post held through the holder ------------------------------------------------
post 1
filter "$T/post1.eml" "$T/f1"
check "spam through the holder: qmail exit 99" test $? -eq 99
check "... the log says holder=yes" grep -q ' holder=yes' "$T/f1"
check "... and that the holder sends the notices" grep -q ' notices=holder' "$T/f1"
check "... one row" test "$(nrows)" -eq 1
id1=$(logged_id "$T/f1")
check "... the logged id is the row's" \
    test "$id1" = "$(sql "SELECT max(id) FROM held_posts WHERE list = 'dev'")"
check "... the filter never loaded libpq" sh -c "! cat '$T/f1'.ld.* | grep -q 'file=libpq'"
i=0
while [ ! -e "$MAIL/$id1.alice@example.org" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check "... the moderator's notice went out, for that post" \
    test -s "$MAIL/$id1.alice@example.org"
filter "$T/post1.eml" "$T/f1b"
check "the same bytes again: exit 99" test $? -eq 99
check "... the same id" test "$(logged_id "$T/f1b")" = "$id1"
check "... still one row" test "$(nrows)" -eq 1

# SIGHUP (kill -HUP, a unit's reload) changes nothing: it ended the
# holder, which Restart=on-failure does not start again
kill -HUP "$hpid"
pkill -HUP -P "$hpid"
i=0
while ! grep -q 'SIGHUP' "$T/holder.log" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
check "SIGHUP: the holder goes on, its socket there, saying so" \
    sh -c "kill -0 $hpid && test -S '$S' && grep -q 'holder: SIGHUP: listgate.conf is read again when it changes; nothing to do' '$T/holder.log'"
check "... its workers too" test "$(pgrep -c -P "$hpid")" -eq 2
filter "$T/post1.eml" "$T/f1h"
check "... and holds posts (99, holder=yes)" \
    sh -c "test $? -eq 99 && grep -q ' holder=yes' '$T/f1h'"
# the notice's approve address is bound to the post the holder stored
# (its SHA-256): a reply to it approves
a1=$("$top_builddir/tests/mailtext" "$MAIL/$id1.alice@example.org" |
    sed -n 's/^Reply-To: <\(.*\)>$/\1/p')
printf 'From: alice@example.org\nTo: x\nSubject: Re\nMessage-ID: <r1@example.org>\n\nok\n' |
    lg moderate --mta postfix -f alice@example.org -- "$a1" > "$T/m1" 2>&1
check "a reply to the holder's notice: exit 0" test $? -eq 0
check "... approves the post" \
    test "$(sql "SELECT status FROM held_posts WHERE id = $id1")" = approved
check "the stored bytes are the bytes received (released by the reply)" \
    cmp -s "$T/released" "$T/post1.eml"
# discarded: a list that discards everything it holds
cp "$CONF/lists/dev.conf" "$T/dev.conf.orig"
echo "discard_cutoff = 0.9" >> "$CONF/lists/dev.conf"
echo "spam_cutoff = 0.9" >> "$CONF/lists/dev.conf"
post 2
filter "$T/post2.eml" "$T/f2"
check "a post past discard_cutoff: exit 99 through the holder" test $? -eq 99
check "... logged as discarded, holder=yes" grep -q 'action=discarded .* holder=yes' "$T/f2"
id2=$(logged_id "$T/f2")
check "... stored as discarded" \
    test "$(sql "SELECT status FROM held_posts WHERE id = ${id2:-0}")" = discarded
check "... and no notice" test -z "$(ls "$MAIL" | grep "^${id2:-x}\.")"
# the holder answers late: a session locks held_posts for 4 s, the
# filter gives up on the holder after 2 s (a quarter of its timeout)
# and stores the post itself while the holder's INSERT still waits;
# both go on when the lock goes, and the post is stored once
echo "timeout = 8" >> "$CONF/lists/dev.conf"
post 3
maxid=$(sql "SELECT max(id) FROM held_posts")
psql -X -q -c "BEGIN; LOCK TABLE held_posts IN SHARE MODE;
    SELECT pg_sleep(4); COMMIT" > /dev/null 2>&1 &
lpid=$!
i=0
while [ "$(sql "SELECT count(*) FROM pg_locks l JOIN pg_class c ON
    c.oid = l.relation WHERE c.relname = 'held_posts' AND
    l.mode = 'ShareLock' AND l.granted")" != 1 ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
filter "$T/post3.eml" "$T/f3"
rc=$?
wait "$lpid"
check "a discarded post the holder stores late: exit 99" test $rc -eq 99
check "... the filter stored it itself" grep -q 'holder_error="the holder did not answer in time' "$T/f3"
i=0
# (the holder's INSERT may still be finishing)
while [ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE state =
    'active' AND query LIKE 'INSERT INTO held_posts%'")" != 0 ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
check "... one row for it, not one each (migration 0010)" \
    test "$(sql "SELECT count(*) FROM held_posts WHERE id > $maxid")" -eq 1
sql "DELETE FROM held_posts WHERE id > $maxid" || exit 99
cp "$T/dev.conf.orig" "$CONF/lists/dev.conf"

# --- one holder per socket -----------------------------------------------------
lg holder > "$T/h2.log" 2>&1
check "a second holder on the socket: exit 1" test $? -eq 1
check "... saying another holder runs there" grep -q "another holder runs on this socket" "$T/h2.log"
check "... and the first still serves" test -S "$SOCK"

# --- hostile clients -----------------------------------------------------------
hostile() {	# hostile NAME: send a bad request, print the answer
	python3 - "$SOCK" "$1" <<'EOF'
import socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(15)
s.connect(sys.argv[1])
what = sys.argv[2]
def field(b):
    return struct.pack(">I", len(b)) + b
if what == "garbage":
    s.sendall(b"GET / HTTP/1.0\r\n\r\n")
elif what == "huge":
    s.sendall(b"LGH1" + struct.pack(">I", 0xffffffff))
elif what == "short":
    s.sendall(b"LGH1" + struct.pack(">I", 1000) + b"abc")
    s.close()
    sys.exit(0)
elif what == "badfield":
    fields = [b"dev", b"", b"", b"", b"", b"", b"spam", b"", b"held", b"",
              b"0.99", b"7", b"0", b"", b"x" * 10]
    fields[1] = b"a\0b"
    body = b"".join(field(f) for f in fields)
    s.sendall(b"LGH1" + struct.pack(">I", len(body)) + body)
elif what == "good":
    fields = [b"dev", b"", b"", b"", b"", b"", b"spam", b"", b"held", b"",
              b"0.99", b"7", b"0", b"", b"Subject: good\n\nhello\n"]
    body = b"".join(field(f) for f in fields)
    s.sendall(b"LGH1" + struct.pack(">I", len(body)) + body)
elif what == "badlist":
    fields = [b"../etc", b"", b"", b"", b"", b"", b"spam", b"", b"held", b"",
              b"0.99", b"7", b"0", b"", b"x" * 10]
    body = b"".join(field(f) for f in fields)
    s.sendall(b"LGH1" + struct.pack(">I", len(body)) + body)
s.shutdown(socket.SHUT_WR)
print(s.recv(2000).decode("ascii", "replace").strip())
EOF
}
a=$(hostile garbage)
check "garbage bytes: an error answer (ER ...)" test "${a#ER }" != "$a"
a=$(hostile huge)
check "a 4 GiB length: an error answer" test "${a#ER }" != "$a"
hostile short > /dev/null
a=$(hostile badfield)
check "a field with a NUL: an error answer naming it" \
    sh -c "echo '$a' | grep -q '^ER field 2 holds a NUL'"
a=$(hostile badlist)
check "a list name with ../: an error answer" \
    sh -c "echo '$a' | grep -q '^ER bad list name'"
check "... nothing stored for any of them" test "$(nrows)" -eq 2
post 3
filter "$T/post3.eml" "$T/f3"
check "after them the holder still holds posts (exit 99, holder=yes)" \
    sh -c "test $? -eq 99 && grep -q ' holder=yes' '$T/f3'"

# --- the database down -------------------------------------------------------------
$PG_CTL_STOP
post 4
filter "$T/post4.eml" "$T/f4"
check "database down: exit 111 (the MTA retries)" test $? -eq 111
check "... the holder's error is in the log" grep -q 'holder_error="the holder failed' "$T/f4"
check "... and the filter tried itself (libpq loaded)" loaded_libpq "$T/f4"
$PG_CTL_START
check "... nothing was stored" test "$(nrows)" -eq 3
filter "$T/post4.eml" "$T/f4b"
check "database back: the retry is held through the holder (99)" test $? -eq 99
check "... holder=yes (its workers connected again)" grep -q ' holder=yes' "$T/f4b"
check "... once" test "$(nrows)" -eq 4

# --- listgate.conf changed under the holder: another database ---------
# (an administrator who moves the queue and forgets the holder: it
# must follow, or its posts would go where no moderator looks)
sql "CREATE DATABASE other" || exit 99
cp "$CONF/listgate.conf" "$T/listgate.conf.orig"
sed "s/dbname=$PGDATABASE\$/dbname=other/" "$T/listgate.conf.orig" > "$T/lc.new"
mv "$T/lc.new" "$CONF/listgate.conf"
lg migrate -q || exit 99
post 8
filter "$T/post8.eml" "$T/f8"
check "listgate.conf names another database: exit 99" test $? -eq 99
check "... held through the holder (holder=yes)" grep -q ' holder=yes' "$T/f8"
check "... in the new database" test "$(psql -X -q -A -t -d other -c \
    "SELECT count(*) FROM held_posts WHERE list = 'dev'")" -eq 1
check "... not in the old one" test "$(nrows)" -eq 4
check "... the holder says it read listgate.conf again" \
    grep -q 'listgate.conf changed: read again' "$T/holder.log"
# a listgate.conf that does not load: the holder stores nothing (it
# would not know where), the filter says what is wrong and defers
{ cat "$T/listgate.conf.orig"; echo 'no such key'; } > "$T/lc.new"
mv "$T/lc.new" "$CONF/listgate.conf"
post 9
filter "$T/post9.eml" "$T/f9"
check "listgate.conf broken: the filter defers (111)" test $? -eq 111
a=$(hostile good)
check "... and the holder refuses a post" \
    starts "$a" "ER listgate.conf changed and does not load: $CONF/listgate.conf:"
# gone for a moment (an editor's rename): not libpq's defaults either
rm "$CONF/listgate.conf"
a=$(hostile good)
check "listgate.conf gone: the holder refuses a post" \
    starts "$a" "ER $CONF/listgate.conf: No such file"
nother=$(psql -X -q -A -t -d other -c "SELECT count(*) FROM held_posts")
check "... nothing stored in either database" test "$nother:$(nrows)" = 1:4
mv "$T/listgate.conf.orig" "$CONF/listgate.conf"

# --- a filter of another configuration on this holder's socket ---------
# (a second configuration made from a copy of the first keeps its
# holder_socket: the holder must not store its posts in the holder's
# own database, where no moderator of that configuration looks)
CONF_O=$T/conf-o
mkdir -p "$CONF_O/lists" || exit 99
cp "$CONF/lists/dev.conf" "$CONF_O/lists/dev.conf" || exit 99
sed "s/dbname=$PGDATABASE\$/dbname=other/" "$CONF/listgate.conf" \
    > "$CONF_O/listgate.conf" || exit 99
nother() { psql -X -q -A -t -d other -c "SELECT count(*) FROM held_posts"; }
n0=$(nother)
post 10
C=$CONF_O
filter "$T/post10.eml" "$T/f10"
rc=$?
C=$CONF
check "a filter whose database is another on this holder's socket: 99" \
    test $rc -eq 99
check "... it holds the post itself, saying why" \
    grep -q 'holder_error="the holder failed: not stored: .*names another database' "$T/f10"
check "... in its own database" test "$(nother)" -eq $((n0 + 1))
check "... not in the holder's" test "$(nrows)" -eq 4

# --- SIGTERM while a worker is busy --------------------------------------
# a client that sends part of a request and stays 3 s keeps one worker
# reading; the socket must go at once all the same (a filter then holds
# its post itself at once instead of queueing behind a stopping holder)
python3 - "$SOCK" "$T/busy" <<'EOF2' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(b"LGH1")
open(sys.argv[2], "w").close()
time.sleep(3)
s.close()
EOF2
bpid=$!
i=0
while [ ! -e "$T/busy" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.3
kill -TERM "$hpid"
sleep 0.5
check "SIGTERM with a worker busy: the socket is gone at once" test ! -e "$SOCK"
check "... while the holder still waits for that worker" kill -0 "$hpid"
wait "$hpid"
check "... then it exits 0" test $? -eq 0
hpid=
wait "$bpid"
grep -q "holder: stopped" "$T/holder.log"
check "... and says so in its log" test $? -eq 0
# (-f first: flock would create a missing file and pass)
check "... its lock file stays, unlocked (a new holder takes it)" \
    sh -c 'test -f "$1" && flock -n "$1" true' sh "$SOCK.lock"

# --- a holder that never answers -------------------------------------------------------
python3 - "$SOCK" <<'EOF' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(5)
conns = []
end = time.time() + 30
while time.time() < end:
    c, _ = s.accept()
    conns.append(c)	# read nothing, answer nothing
EOF
fpid=$!
i=0
while [ ! -S "$SOCK" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
echo "timeout = 4" >> "$CONF/lists/dev.conf"
post 5
t0=$(date +%s%N)
filter "$T/post5.eml" "$T/f5"
rc=$?
t1=$(date +%s%N)
check "a holder that never answers: exit 99 all the same" test $rc -eq 99
check "... the filter waited for it at most a quarter of the timeout (1 s; took $(( (t1 - t0) / 1000000 )) ms)" \
    test $(( (t1 - t0) / 1000000 )) -lt 3500
check "... and held it itself: holder_error, the row there" \
    sh -c "grep -q 'holder_error=\"the holder did not answer in time' '$T/f5' && test \$(psql -X -q -A -t -c \"SELECT count(*) FROM held_posts WHERE list = 'dev'\") -eq 5"
kill "$fpid" 2>/dev/null
wait "$fpid" 2>/dev/null
fpid=
rm -f "$SOCK"
cp "$T/dev.conf.orig" "$CONF/lists/dev.conf"

# --- the holder killed ---------------------------------------------------------------
start_holder
check "the holder runs as three processes: itself and two workers" \
    test "$(pgrep -f "[c]onfig $CONF holder" | wc -l)" -eq 3
kill -9 "$hpid"
wait "$hpid" 2>/dev/null
hpid=
i=0
# ("[c]": the pattern does not match the command line of the check)
while pgrep -f "[c]onfig $CONF holder" > /dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
check "SIGKILL: the workers go with the holder" sh -c "! pgrep -f '[c]onfig $CONF holder' > /dev/null"
check "... the stale socket stays" test -S "$SOCK"
post 6
filter "$T/post6.eml" "$T/f6"
check "no holder: the filter holds the post itself (99)" test $? -eq 99
check "... holder_error in the log" grep -q 'holder_error="cannot connect to the holder' "$T/f6"
check "... libpq loaded" loaded_libpq "$T/f6"
check "... the row there" test "$(nrows)" -eq 6
check "a new holder replaces the stale socket" start_holder
post 7
filter "$T/post7.eml" "$T/f7"
rc=$?
check "... and holds posts (99, holder=yes)" \
    sh -c "test $rc -eq 99 && grep -q ' holder=yes' '$T/f7'"
grep -q ' holder=yes' "$T/f7" || sed 's/^/# /' "$T/f7" "$T/holder.log"
check "... seven posts, seven rows" test "$(nrows)" -eq 7
stop_holder

echo "1..$n"
[ "$fails" -eq 0 ]

#!/bin/sh
# queue_connect.sh - opening a connection to PostgreSQL: whatever the
# server says while the connection is made reaches the user only in
# listgate's own one-line messages, never raw from libpq; a server that
# accepts but never answers is given up after connect_timeout, and with
# two hosts libpq moves on from it to the next.
#
# The server here ends each session after 1 ms idle (idle_session_timeout,
# a role setting), and a loop of pg_terminate_backend ends the rest, so
# a FATAL often arrives together with the
# handshake's last message: libpq's default notice processor printed it
# on standard error, as a line of its own, before listgate could set its
# own (the stray "FATAL:  terminating connection due to administrator
# command" of a deferral in torture_outage.sh).
#
# Runs under tests/pg.sh; works in a mktemp -d directory removed at the
# end.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-connect.XXXXXX") || exit 99
trap 'kill "$hangpid" "$hog1" "$hog2" "$killer" 2>/dev/null; rm -rf "$T"' EXIT INT TERM
hangpid= hog1= hog2= killer=
. "$top_srcdir/tests/lib.sh"
CONF=$T/conf
mkdir -p "$CONF/lists" || exit 99
printf 'tokens_dir = %s/tokens\n' "$T" > "$CONF/listgate.conf"
: > "$CONF/lists/dev.conf"
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
lg migrate > /dev/null || { echo "Bail out! migrate failed"; exit 99; }

psql -X -q -c "CREATE ROLE hasty LOGIN SUPERUSER" -c \
    "ALTER ROLE hasty SET idle_session_timeout = '1ms'" || exit 99
N=${CONNECT_TRIES:-10}
[ "${LISTGATE_TORTURE:-}" = long ] && N=${CONNECT_TRIES:-100}
# two busy loops, and the client at the lowest priority: it wakes late
# for the handshake's last message, by when the FATAL has come too
sh -c 'while :; do :; done' & hog1=$!
sh -c 'while :; do :; done' & hog2=$!
# and the administrator ending its sessions as they come
sh -c 'while :; do psql -X -q -t -c "SELECT pg_terminate_backend(pid)
    FROM pg_stat_activity WHERE usename = '"'hasty'"'" > /dev/null 2>&1
    done' & killer=$!
i=0
: > "$T/err"
# at least N runs (10; 100 with LISTGATE_TORTURE=long), and on until 20
# of them were ended by the server (a run that finishes within the idle
# millisecond says nothing); the two busy loops take both cores of a
# 2-core machine, so the fewer runs the better for the tests beside it
while [ $i -lt $N ] || { [ "$(wc -l < "$T/err")" -lt 20 ] &&
    [ $i -lt $((N * 10)) ]; }; do
	PGUSER=hasty nice -n 19 "$LISTGATE" --allow-root --config "$CONF" \
	    stats --json > /dev/null 2>> "$T/err"
	i=$((i + 1))
done
kill "$hog1" "$hog2" "$killer"
check "$i connections to a server that ends them at once: every line on standard error is listgate's" \
    sh -c "! grep -qv '^listgate' '$T/err'"
ended=$(grep -c '^listgate' "$T/err")
check "... and the server did end them ($ended times, in listgate's words)" \
    test "$ended" -ge 20
if grep -v '^listgate' "$T/err" > /dev/null; then
	grep -v '^listgate' "$T/err" | sort | uniq -c | sed 's/^/#   /'
fi

# a server that accepts and never answers
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1] + "/.s.PGSQL.7"); s.listen(8)
conns = []
while True:
    c, _ = s.accept(); conns.append(c)
' "$T" &
hangpid=$!
i=0
while [ ! -S "$T/.s.PGSQL.7" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
printf 'database = "host=%s port=7 connect_timeout=2"\n' "$T" >> "$CONF/listgate.conf"
t0=$(date +%s)
lg stats --json > /dev/null 2> "$T/err2"
rc=$?
t1=$(date +%s)
check "a server that never answers: the command fails ($rc)" test "$rc" -ne 0
check "... after connect_timeout (2 s; took $((t1 - t0)) s)" \
    test $((t1 - t0)) -ge 1 -a $((t1 - t0)) -le 10
check "... saying the time ran out" grep -q "cannot connect to the database: timeout expired" "$T/err2"
check "... naming the setting and its file" \
    grep -q "timeout expired.*(database in $CONF/listgate.conf)" "$T/err2"
# two hosts, the first one that never answers: after its connect_timeout
# libpq moves on to the second, as it always did
sed -i '/^database = /d' "$CONF/listgate.conf"
printf 'database = "host=%s,%s port=7,%s connect_timeout=2"\n' "$T" "$PGHOST" \
    "$PGPORT" >> "$CONF/listgate.conf"
t0=$(date +%s)
lg stats --json > /dev/null 2> "$T/err3"
rc=$?
t1=$(date +%s)
check "two hosts, the first never answering: the second is used ($rc, $((t1 - t0)) s)" \
    test "$rc" -eq 0 -a $((t1 - t0)) -ge 1
sed -i '/^database = /d' "$CONF/listgate.conf"
printf 'database = "connect_timeout=abc"\n' >> "$CONF/listgate.conf"
lg stats --json > /dev/null 2> "$T/err4"
check "a connect_timeout that is not a number is refused, saying so" \
    grep -q "connect_timeout is not a whole number" "$T/err4"
# a database name that is itself a connection string (a password in it):
# libpq expands only the outer one, the server gets the inner one whole
# as a database name, and its FATAL quotes it; listgate's message masks
# it (and the quoted piece the server cut at 63 bytes)
for inner in "user=x password=hunter2" \
    "postgresql://u:hunter2@db.example.org/lg?sslmode=disable&application_name=$(printf '%060d' 0)"; do
	sed -i '/^database = /d' "$CONF/listgate.conf"
	printf 'database = "host=%s port=%s dbname=\047%s\047"\n' "$PGHOST" \
	    "$PGPORT" "$inner" >> "$CONF/listgate.conf"
	lg stats --json > /dev/null 2> "$T/err5"
	rc=$?
	check "a dbname that is a connection string: the command fails ($rc)" \
	    test "$rc" -eq 1
	check "... saying the database does not exist" \
	    grep -q 'FATAL: *database "\*\*\*\*\*\*\*\*" does not exist' "$T/err5"
	check "... without the password" sh -c "! grep -q hunter2 '$T/err5'"
done
# ... and the rest of libpq's message stays as it was (a socket's path
# in quotes, no database name there)
sed -i '/^database = /d' "$CONF/listgate.conf"
printf 'database = "host=%s/none dbname=\047user=x password=hunter2\047"\n' \
    "$T" >> "$CONF/listgate.conf"
lg stats --json > /dev/null 2> "$T/err7"
check "a dbname that is a connection string, no server: libpq's words kept" \
    grep -q "socket \"$T/none/.s.PGSQL.5432\" failed: No such file or directory" "$T/err7"
check "... without the password" sh -c "! grep -q hunter2 '$T/err7'"
sed -i '/^database = /d' "$CONF/listgate.conf"
printf 'database = "host=%s port=%s dbname=nosuchdb"\n' "$PGHOST" "$PGPORT" \
    >> "$CONF/listgate.conf"
lg stats --json > /dev/null 2> "$T/err6"
check "a plain database name that does not exist is named" \
    grep -q 'database "nosuchdb" does not exist' "$T/err6"
echo "1..$n"
[ "$fails" -eq 0 ]

#!/bin/sh
# queue_deadlink.sh - a database server that goes silent over TCP in the
# middle of a command (its host down, a link cut: no reset, no answer)
# is given up on in about 30 s, not after the system's two hours of TCP
# keepalive idle time: listgate asks libpq for keepalives (15 s idle,
# then 3 probes 5 s apart) unless the conninfo says otherwise.  The
# command says what failed, and the post it was deciding stays held.
#
# The server runs in this network namespace and listens on one end of a
# veth pair; the command runs in a namespace of its own at the other
# end.  A moderator's reject waits for a row another session holds;
# then the server's end of the link goes down, so the keepalive probes
# are dropped without a word.  Needs root and ip(8) with network
# namespaces (exit 77 without them; .ci/run runs as root).
#
# Runs under tests/pg.sh; works in a mktemp -d directory removed at the
# end.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
# names made by the outer run, kept for the run under tests/pg.sh
NS=${LGDEAD_NS:-lgdead$$}
A=${LGDEAD_A:-lgd$$a}	# the server's end (this namespace)
B=${LGDEAD_B:-lgd$$b}	# the client's end (namespace $NS)
NET=10.213.77
if [ -z "${PG_TEST_DIR:-}" ]; then
	[ "$(id -u)" -eq 0 ] || { echo "1..0 # SKIP needs root (network namespaces)"; exit 77; }
	command -v ip > /dev/null 2>&1 ||
	    { echo "1..0 # SKIP needs ip(8) from iproute2"; exit 77; }
	cleanup() { ip link del "$A" 2>/dev/null; ip netns del "$NS" 2>/dev/null; }
	trap cleanup EXIT INT TERM
	if ! { ip netns add "$NS" &&
	    ip link add "$A" type veth peer name "$B" &&
	    ip link set "$B" netns "$NS" &&
	    ip addr add "$NET.1/24" dev "$A" && ip link set "$A" up &&
	    ip -n "$NS" addr add "$NET.2/24" dev "$B" &&
	    ip -n "$NS" link set "$B" up && ip -n "$NS" link set lo up; }
	then
		echo "1..0 # SKIP cannot make a network namespace and a veth pair here"
		exit 77
	fi
	LGDEAD_NS=$NS LGDEAD_A=$A LGDEAD_B=$B \
	    PG_TEST_OPTS="${PG_TEST_OPTS:-} -c listen_addresses=$NET.1" \
	    sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
	exit $?
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-deadlink.XXXXXX") || exit 99
trap 'kill "$lockpid" 2>/dev/null; rm -rf "$T"' EXIT INT TERM
lockpid=
. "$top_srcdir/tests/lib.sh"
QHOLD=$top_builddir/tests/qhold
DATA=$top_srcdir/tests/data/train
CONF=$T/conf
mkdir -p "$CONF/lists" || exit 99
printf 'tokens_dir = %s/tokens\n' "$T" > "$CONF/listgate.conf"
: > "$CONF/lists/dev.conf"
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
"$LISTGATE" --allow-root --config "$CONF" migrate > /dev/null ||
    { echo "Bail out! migrate failed"; exit 99; }
id=$("$QHOLD" dev "$DATA/spam1.eml" 0.98) || exit 99

# the client's namespace reaches the server over TCP only
printf 'host all all %s.0/24 trust\n' "$NET" >> "$PG_TEST_DIR/data/pg_hba.conf"
sql "SELECT pg_reload_conf()" > /dev/null || exit 99
cat >> "$CONF/listgate.conf" <<EOF
database = "host=$NET.1 port=$PGPORT dbname=$PGDATABASE user=$PGUSER"
EOF
remote() {
	env -u PGHOST -u PGPORT -u PGDATABASE -u PGUSER ip netns exec "$NS" \
	    "$LISTGATE" --allow-root --config "$CONF" "$@"
}
remote held --list dev > "$T/held" 2> "$T/err0"
check "over the veth link the queue answers (exit $?)" grep -q "^ *$id " "$T/held"

# another session holds the post's row; the reject waits for it
psql -X -q -v ON_ERROR_STOP=1 -c "BEGIN" \
    -c "SELECT id FROM held_posts WHERE id = $id FOR UPDATE" \
    -c "SELECT pg_sleep(300)" > /dev/null 2>&1 &
lockpid=$!
waitfor() {	# SQL that counts: until it is above 0, 10 s at most
	i=0
	while [ "$(sql "$1")" -eq 0 ] && [ $i -lt 100 ]; do
		sleep 0.1; i=$((i + 1))
	done
}
waitfor "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(300)%' AND pid <> pg_backend_pid()"
onlink="SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND client_addr = '$NET.2'"
# ss(8) in the client's namespace: the keepalive timer of its one
# connection to the server, in seconds (-1: none within 3 s; until the
# server's delayed ACK of the query, the timer is the retransmission's)
katimer() {
	j=0
	while [ $j -lt 30 ]; do
		k=$(ip netns exec "$NS" ss -tno state established \
		    "( dport = :$PGPORT )" |
		    sed -n 's/.*timer:(keepalive,\([0-9a-z.]*\),.*/\1/p' |
		    head -1)
		if [ -n "$k" ]; then
			echo "$k" | awk '{ s = 0; t = $0
			    if (t ~ /min/) {
				    split(t, a, "min"); s = a[1] * 60; t = a[2]
			    }
			    if (t ~ /ms/) t = 0
			    sub(/sec/, "", t); print int(s + t) }'
			return
		fi
		sleep 0.1; j=$((j + 1))
	done
	echo -1
}
# the conninfo's own settings win over listgate's
sed 's/^database = "host=/database = "keepalives_idle=99 host=/' \
    "$CONF/listgate.conf" > "$T/conf99" && mkdir -p "$T/c99/lists" &&
    cp "$T/conf99" "$T/c99/listgate.conf" && : > "$T/c99/lists/dev.conf" ||
    exit 99
env -u PGHOST -u PGPORT -u PGDATABASE -u PGUSER ip netns exec "$NS" \
    "$LISTGATE" --allow-root --config "$T/c99" reject --by mod "$id" \
    > /dev/null 2> "$T/err99" &
rpid=$!
waitfor "$onlink"
ka=$(katimer)
[ "$ka" -gt 30 ] || { cat "$T/err99"; ip netns exec "$NS" ss -tno; } | sed 's/^/#   /'
check "a conninfo's keepalives_idle=99 wins (timer at $ka s)" \
    test "$ka" -gt 30 -a "$ka" -le 99
kill "$rpid"; wait "$rpid" 2>/dev/null
sql "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE client_addr = '$NET.2'" > /dev/null
i=0
while [ "$(sql "$onlink")" -gt 0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done

t0=$(date +%s)
remote reject --by mod "$id" > "$T/out" 2> "$T/err" &
rpid=$!
# the reject is connected over TCP and waits for the row lock
waitfor "$onlink"
check "the reject waits on the row over TCP" test "$(sql "$onlink")" -eq 1
ka=$(katimer)
check "... with listgate's keepalives (timer at $ka s, at most 15)" \
    test "$ka" -ge 0 -a "$ka" -le 15
# the link dies: nothing the client sends reaches the server any more,
# and nothing comes back
ip link set "$A" down || exit 99
# 30 s of keepalives, and a margin for a loaded machine; without them
# the reject would wait for hours (given up here after 120 s)
i=0
while kill -0 "$rpid" 2>/dev/null && [ $i -lt 1200 ]; do
	sleep 0.1; i=$((i + 1))
done
if kill -0 "$rpid" 2>/dev/null; then
	kill "$rpid"
	rc=timeout
else
	wait "$rpid"; rc=$?
fi
t1=$(date +%s)
check "the reject gives up on the silent server (exit $rc after $((t1 - t0)) s)" \
    test "$rc" != timeout -a "$rc" != 0
check "... within about 30 s of the link's end (took $((t1 - t0)) s)" \
    test $((t1 - t0)) -ge 20 -a $((t1 - t0)) -le 75
check "... saying the database failed" grep -q "^listgate reject: .*database" "$T/err"
sed 's/^/#   /' "$T/err"
ip link set "$A" up || exit 99
kill "$lockpid" 2>/dev/null
wait "$lockpid" 2>/dev/null
lockpid=
sql "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(300)%' AND pid <> pg_backend_pid()" > /dev/null
check "the post is still held" \
    test "$(sql "SELECT status FROM held_posts WHERE id = $id")" = held
echo "1..$n"
[ "$fails" -eq 0 ]

#!/bin/sh
# pgbouncer_approve_pool.sh - approvals through pgbouncer in
# transaction mode never wait for a server connection while holding one
#
# An approval holds its post's lock in a transaction of a second
# connection across the release command, which through a pooler holds a
# server connection for as long as the release runs.  It used to take
# that lock before marking the post 'releasing' on its first
# connection, so it held one server connection and waited for a second:
# approvals of as many lists as the pool has server connections, each
# holding one, waited for ever (until pgbouncer's query_wait_timeout,
# 120 s, ended them with "server closed the connection unexpectedly"),
# and every filter's hold waited behind them until its watchdog
# deferred the post.  With a pool of one server connection a single
# approval did.  Here the pool is one: an approval must end well, and
# three approvals of three lists at once must all end well, one release
# after the other, each post released once.  Never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	PGBOUNCER_POOL_SIZE=1
	export PGBOUNCER_POOL_SIZE
	exec sh "$top_srcdir/tests/pg.sh" run --pgbouncer sh "$0" "$@"
fi
: "${PGBOUNCER_PORT:?run by tests/pg.sh run --pgbouncer}"
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-bpool.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
mkdir -p "$CONF/lists" || exit 99
printf 'tokens_dir = %s/tokens\ndatabase = host=%s port=%s dbname=%s\n' \
    "$T" "$PGHOST" "$PGBOUNCER_PORT" "$PGDATABASE" > "$CONF/listgate.conf"
# the release: a second's pause, then the post appended to released.LIST
printf '#!/bin/sh\nsleep 1\ncat >> %s/released.$1\n' "$T" > "$T/release.sh"

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
# (well under pgbouncer's query_wait_timeout of 120 s)
lgt() { timeout 40 "$LISTGATE" --allow-root --config "$CONF" "$@"; }
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
nlocks() { sql "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

lgt migrate -q || exit 99
for l in d1 d2 d3 d4; do
	printf 'deliver = /bin/true\nrelease = /bin/sh %s/release.sh %s\n' \
	    "$T" "$l" > "$CONF/lists/$l.conf"
	lgt train -q --list $l --spam "$DATA"/spam[0-9].eml || exit 99
	lgt train -q --list $l --ham "$DATA"/ham[0-9].eml || exit 99
	lgt filter --list $l --mta qmail < "$DATA/spam1.eml" > /dev/null 2>&1
	[ $? -eq 99 ] || exit 99
done
id() { sql "SELECT id FROM held_posts WHERE list = '$1'"; }
st() { sql "SELECT status FROM held_posts WHERE list = '$1'"; }

# one approval, the pool's one server connection
t0=$(now_ms)
lgt approve "$(id d1)" > "$T/a1.out" 2>&1
rc=$?
t1=$(now_ms)
check "an approval through a pool of one server connection: exit 0 ($rc: $(head -n 1 "$T/a1.out"); $((t1 - t0)) ms)" \
    test $rc -eq 0
check "... approved" test "$(st d1)" = approved
check "... released once" test "$(grep -c '^Subject' "$T/released.d1")" -eq 1

# three at once, of three lists (one list's approvals run one after the
# other anyway: its journal lock is held across the release)
t0=$(now_ms)
for l in d2 d3 d4; do
	lgt approve "$(id $l)" > "$T/a-$l.out" 2>&1 &
done
wait
t1=$(now_ms)
for l in d2 d3 d4; do
	check "three approvals at once: $l approved ($(st $l): $(head -n 1 "$T/a-$l.out"))" \
	    test "$(st $l)" = approved
	check "... $l released once" \
	    test "$(grep -c '^Subject' "$T/released.$l" 2>/dev/null)" = 1
done
check "... within 30 s ($((t1 - t0)) ms)" test $((t1 - t0)) -lt 30000
check "... each journaled once" test "$(sql "SELECT count(*) FROM
    train_journal WHERE source = 'moderation'")" -eq 4
check "... no advisory lock left" test "$(nlocks)" -eq 0

echo "1..$n"
[ "$fails" -eq 0 ]

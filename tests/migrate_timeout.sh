#!/bin/sh
# migrate_timeout.sh - `migrate` under a statement_timeout set in the
# database conninfo's options (for the filter's hold path), against a
# private PostgreSQL (tests/pg.sh)
#
# A migration waits for its tables' locks up to --lock-timeout, and a
# second migrate waits for the first (the migrate lock) as long as it
# runs; a statement_timeout of 100 ms must cut neither.  Migration
# 0011 is made pending again (its column dropped, its record and
# 0012's deleted), a session reads notice_outbox for 1.5 s (a `notify`
# run), and two migrates start behind it: both must end well, the
# migration applied once.  Never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-migto.XXXXXX") || exit 99
hpid=
trap '[ -n "$hpid" ] && kill "$hpid" 2>/dev/null; rm -rf "$T"' EXIT INT TERM

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
mkdir -p "$T/conf/lists" || exit 99
printf 'tokens_dir = %s/tokens\ndatabase = "options='"'"'-c statement_timeout=100'"'"'"\n' \
    "$T" > "$T/conf/listgate.conf"
mig() { "$LISTGATE" --allow-root --config "$T/conf" migrate "$@"; }

mig -q > "$T/out" 2>&1
check "migrate of a new database under statement_timeout = 100 ms exits 0 ($(head -n 1 "$T/out"))" \
    test $? -eq 0
sql "ALTER TABLE notice_outbox DROP COLUMN claimed_until;
    DELETE FROM schema_migrations WHERE version >= 11" || exit 99

# a reader of notice_outbox for 1.5 s; returns once its lock is granted
PGAPPNAME=reader psql -X -q -c "BEGIN;
    LOCK TABLE notice_outbox IN ACCESS SHARE MODE; SELECT pg_sleep(1.5);
    COMMIT" > /dev/null 2>&1 &
hpid=$!
i=0
while [ "$(sql "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a
    ON a.pid = l.pid WHERE l.granted AND a.application_name = 'reader' AND
    l.relation = 'notice_outbox'::regclass")" -eq 0 ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
mig --lock-timeout 10 > "$T/a.out" 2> "$T/a.err" &
a=$!
sleep 0.3
mig --lock-timeout 10 > "$T/b.out" 2> "$T/b.err" &
b=$!
wait "$a"
ra=$?
wait "$b"
rb=$?
wait "$hpid"
hpid=
check "a migrate whose migration waits 1.5 s for its table (--lock-timeout 10) exits 0 ($ra: $(head -n 1 "$T/a.err"))" \
    test "$ra" -eq 0
check "a second migrate meanwhile waits for it and exits 0 ($rb: $(head -n 1 "$T/b.err"))" \
    test "$rb" -eq 0
check "0011 was applied once, by one of them" \
    test "$(cat "$T/a.out" "$T/b.out" | grep -c 'applied 0011_outbox_claim')" -eq 1
check "... its column is there" test "$(sql "SELECT count(*) FROM pg_attribute
    WHERE attrelid = 'notice_outbox'::regclass AND attname = 'claimed_until'")" -eq 1
check "... and every migration is recorded" \
    test "$(sql "SELECT count(*) FROM schema_migrations")" -eq "$(ls "$top_srcdir"/migrations/*.sql | wc -l)"

echo "1..$n"
[ "$fails" -eq 0 ]

#!/bin/sh
# queue_pgbouncer.sh - every command that talks to PostgreSQL, through
# pgbouncer in transaction pooling mode: migrate, train (the journal
# COPY), sync, rebuild, filter's hold path, held, show, and
# decisions (approve, reject, discard, expire), two moderators deciding
# one post at once among them
#
# Transaction pooling hands each transaction to whichever server
# connection is free, so nothing may outlive a transaction: a session
# advisory lock taken in one transaction and released in the next is
# left behind on a pooled server connection, and the next client there
# inherits it.  The pool here is two server connections handed out round
# robin (tests/pg.sh --pgbouncer), warmed up so both exist: state left
# behind shows at once.  After every command the server must hold no
# advisory lock, and no command may wait on one another left behind.
# Assertions read the server directly (PGPORT), listgate goes through
# pgbouncer (its port in the database conninfo).  Never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run --pgbouncer sh "$0" "$@"
fi
: "${PGBOUNCER_PORT:?run by tests/pg.sh run --pgbouncer}"
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-qbouncer.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
mkdir -p "$CONF/lists" || exit 99
printf 'tokens_dir = %s/tokens\ndatabase = host=%s port=%s dbname=%s\n' \
    "$T" "$PGHOST" "$PGBOUNCER_PORT" "$PGDATABASE" > "$CONF/listgate.conf"
# release: the post appended to $T/released after a pause, so that a
# second moderator comes in while it runs
cat > "$T/release.sh" <<EOF
#!/bin/sh
sleep 1
cat >> "$T/released"
EOF
printf 'release = /bin/sh %s/release.sh\ndeliver = /bin/true\n' "$T" \
    > "$CONF/lists/dev.conf"

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), pg_part, lock_file
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
# a listgate command that must not hang on a lock left behind
lgt() { timeout 30 "$LISTGATE" --allow-root --config "$CONF" "$@"; }
run() { "$@" > "$T/out" 2> "$T/err"; rc=$?; }
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
# advisory locks held on the server, by anyone
nlocks() { sql "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"; }
# transactions pgbouncer has passed on for the test database
nxact() {
	psql -X -q -A -t -F ' ' -p "$PGBOUNCER_PORT" -d pgbouncer \
	    -c 'SHOW STATS' | awk -v db="$PGDATABASE" '$1 == db { print $2 }'
}
# both server connections of the pool in use at once, so that both stay
# in the pool afterwards and round robin alternates between them
warm() {
	psql -X -q -p "$PGBOUNCER_PORT" -c 'SELECT pg_sleep(0.3)' \
	    > /dev/null 2>&1 &
	psql -X -q -p "$PGBOUNCER_PORT" -c 'SELECT pg_sleep(0.3)' \
	    > /dev/null 2>&1
	wait
}
warm
nservers() {
	psql -X -q -A -t -p "$PGBOUNCER_PORT" -d pgbouncer -c 'SHOW SERVERS' |
	    grep -c "|$PGDATABASE|"
}
check "the pool has two server connections" test "$(nservers)" -eq 2

# --- migrate ------------------------------------------------------------------
x0=$(nxact)
run lgt migrate
check "migrate through pgbouncer exits 0" test "$rc" -eq 0
check "... applies the migrations" grep -q "applied 0001_queue" "$T/out"
check "... went through pgbouncer" test "$(nxact)" -gt "$x0"
check "... and leaves no advisory lock behind" test "$(nlocks)" -eq 0
for i in 1 2 3; do
	run lgt migrate
	check "migrate again ($i) exits 0 at once" test "$rc" -eq 0
done
check "... leaving no advisory lock" test "$(nlocks)" -eq 0
# two at once on a new database: one applies, the other waits and finds
# nothing left to do
createdb lg_race || exit 99
mkdir -p "$T/race" || exit 99
sed "s/dbname=$PGDATABASE/dbname=lg_race/" "$CONF/listgate.conf" \
    > "$T/race/listgate.conf"
timeout 30 "$LISTGATE" --allow-root --config "$T/race" migrate -q > "$T/m1" 2>&1 &
p1=$!
timeout 30 "$LISTGATE" --allow-root --config "$T/race" migrate -q > "$T/m2" 2>&1
r2=$?
wait "$p1"
r1=$?
nmig=$(ls "$top_srcdir"/migrations/[0-9]*.sql | wc -l)
check "two migrates at once through pgbouncer both exit 0" \
    test "$r1" -eq 0 -a "$r2" -eq 0
check "... each migration applied once" test "$(psql -X -q -A -t -d lg_race \
    -c 'SELECT count(*) FROM schema_migrations')" -eq "$nmig"
check "... no advisory lock left" test "$(nlocks)" -eq 0

# --- train: the journal's COPY, then sync -----------------------------------
run lgt train --list dev --spam "$DATA"/spam[0-9].eml
check "train --spam through pgbouncer exits 0" test "$rc" -eq 0
run lgt train --list dev --ham "$DATA"/ham[0-9].eml
check "train --ham through pgbouncer exits 0" test "$rc" -eq 0
check "... journals every post" \
    test "$(sql "SELECT count(*) FROM train_journal WHERE list = 'dev'")" -eq 8
check "... and syncs the token file" test -f "$T/tokens/dev.kch"
check "... no advisory lock left" test "$(nlocks)" -eq 0

# --- the hold path -------------------------------------------------------------
run lgt filter --list dev --mta qmail < "$DATA/spam-test.eml"
check "filter holds a spam post through pgbouncer (exit 99)" test "$rc" -eq 99
id=$(sql "SELECT max(id) FROM held_posts WHERE list = 'dev'")
check "... one row held" \
    test "$(sql "SELECT count(*) FROM held_posts WHERE status = 'held'")" -eq 1
run lgt filter --list dev --mta qmail < "$DATA/spam-test.eml"
check "the same bytes again: exit 99, held once" test "$rc" -eq 99 -a \
    "$(sql "SELECT count(*) FROM held_posts")" -eq 1
run lgt filter --list dev --mta qmail < "$DATA/ham-test.eml"
check "a ham post passes (exit 0)" test "$rc" -eq 0
run lgt held --list dev
check "held lists it" grep -q "^$id " "$T/out"
run lgt show "$id"
check "show prints it" test "$rc" -eq 0

# --- two moderators approve the same post at once ---------------------------------
nj=$(sql 'SELECT count(*) FROM train_journal')
warm
lgt approve --by m1 "$id" > "$T/out1" 2>&1 &
p1=$!
sleep 0.2
lgt approve --by m2 "$id" > "$T/out2" 2>&1
r2=$?
wait "$p1"
r1=$?
check "two approvals at once: the first exits 0" test "$r1" -eq 0
check "... the second waits for it and finds it approved (exit 0)" \
    sh -c "test $r2 -eq 0 && grep -q 'already approved' '$T/out2'"
check "... the post is released once" cmp -s "$T/released" "$DATA/spam-test.eml"
check "... and journaled once" \
    test "$(sql 'SELECT count(*) FROM train_journal')" -eq $((nj + 1))
check "... approved by m1" test "$(sql "SELECT status || ' ' || decided_by FROM held_posts WHERE id = $id")" = "approved m1"
check "... no advisory lock left" test "$(nlocks)" -eq 0
for i in 1 2 3; do
	run lgt reject "$id"
	check "a later reject ($i) finds it decided at once (exit 1)" \
	    sh -c "test $rc -eq 1 && grep -q 'already approved' '$T/err'"
done

# --- an approval and a rejection at once ------------------------------------------
run lgt filter --list dev --mta qmail < "$DATA/spam2.eml"
id2=$(sql "SELECT max(id) FROM held_posts WHERE list = 'dev'")
check "a second post is held" test "$rc" -eq 99 -a "$id2" -gt "$id"
: > "$T/released"
nj=$(sql 'SELECT count(*) FROM train_journal')
warm
lgt approve --by m1 "$id2" > "$T/out1" 2>&1 &
p1=$!
sleep 0.2
lgt reject --by m2 "$id2" > "$T/out2" 2>&1
r2=$?
wait "$p1"
r1=$?
check "approve and reject at once: the approval wins (exit 0)" test "$r1" -eq 0
check "... the rejection waits and finds it approved (exit 1)" \
    sh -c "test $r2 -eq 1 && grep -q 'already approved' '$T/out2'"
check "... released once" cmp -s "$T/released" "$DATA/spam2.eml"
check "... journaled once" \
    test "$(sql 'SELECT count(*) FROM train_journal')" -eq $((nj + 1))
check "... no advisory lock left" test "$(nlocks)" -eq 0

# --- an approving process killed during its release ------------------------------------
cat > "$T/kill.sh" <<EOF
#!/bin/sh
cat >> "$T/released.kill"
kill -9 \$PPID
sleep 5
EOF
printf 'release = /bin/sh %s/kill.sh\n' "$T" > "$CONF/lists/dev.conf"
run lgt filter --list dev --mta qmail < "$DATA/spam3.eml"
id3=$(sql "SELECT max(id) FROM held_posts WHERE list = 'dev'")
run lgt approve "$id3"
check "an approval killed during its release does not exit 0" test "$rc" -ne 0
run lgt approve "$id3"
check "... the next approval says it was interrupted, at once" \
    sh -c "test $rc -eq 1 && grep -q 'previous approve was interrupted' '$T/err'"
check "... and released nothing more" cmp -s "$T/released.kill" "$DATA/spam3.eml"
check "... no advisory lock left" test "$(nlocks)" -eq 0

# --- discard and expire ------------------------------------------------------------------
run lgt filter --list dev --mta qmail < "$DATA/spam4.eml"
id4=$(sql "SELECT max(id) FROM held_posts WHERE list = 'dev'")
run lgt discard "$id4"
check "discard through pgbouncer exits 0" test "$rc" -eq 0 -a \
    "$(sql "SELECT status FROM held_posts WHERE id = $id4")" = discarded
{ echo "X-Expire: 1"; cat "$DATA/spam4.eml"; } > "$T/old.eml"
run lgt filter --list dev --mta qmail < "$T/old.eml"
id5=$(sql "SELECT max(id) FROM held_posts WHERE list = 'dev'")
sql "UPDATE held_posts SET arrived_at = now() - interval '30 days' WHERE id = $id5"
run lgt expire --list dev
check "expire through pgbouncer exits 0" test "$rc" -eq 0 -a \
    "$(sql "SELECT status FROM held_posts WHERE id = $id5")" = expired
check "... no advisory lock left" test "$(nlocks)" -eq 0

# --- sync and rebuild through pgbouncer ---------------------------------------------------
run lgt sync --list dev
check "sync through pgbouncer exits 0" test "$rc" -eq 0
"$LISTGATE" --allow-root --config "$CONF" score --list dev --db-dump | LC_ALL=C sort \
    > "$T/synced"
run lgt rebuild --list dev
check "rebuild through pgbouncer exits 0" test "$rc" -eq 0
"$LISTGATE" --allow-root --config "$CONF" score --list dev --db-dump | LC_ALL=C sort \
    > "$T/rebuilt"
check "... and equals the synced token file" cmp -s "$T/synced" "$T/rebuilt"
check "no advisory lock left at the end" test "$(nlocks)" -eq 0

echo "1..$n"
[ "$fails" -eq 0 ]

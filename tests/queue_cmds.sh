#!/bin/sh
# queue_cmds.sh - migrate, held, show, approve, reject, discard, expire,
# sync and rebuild end to end against a private PostgreSQL (tests/pg.sh)
#
# Posts are held with tests/qhold (queue_hold, as the filter does), so
# this test does not depend on the filter's verdicts.  Token files are
# compared with a full dump (kchashmgr list -pv -px, sorted; meta
# records, the journal position included).  Works in a mktemp -d
# directory removed at the end; never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
QHOLD=$top_builddir/tests/qhold
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-queue.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
mkdir -p "$CONF/lists" || exit 99
printf 'tokens_dir = %s/tokens\n' "$T" > "$CONF/listgate.conf"
# the release command: the post to $T/released.LIST, fails while $T/fail
# exists
cat > "$T/release.sh" <<EOF
#!/bin/sh
cat > "$T/released.\$1" || exit 1
test ! -e "$T/fail"
EOF
for l in dev ref other unl unlref; do
	printf 'release = /bin/sh %s/release.sh {list}\n' "$T" \
	    > "$CONF/lists/$l.conf"
done

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), pg_part, lock_file
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
run() { "$@" > "$T/out" 2> "$T/err"; rc=$?; }
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
# the token file of a list as sorted hex lines
dump() {
	if command -v kchashmgr >/dev/null 2>&1; then
		kchashmgr list -pv -px "$1" | LC_ALL=C sort
	else
		"$LISTGATE" --allow-root --config "$2" score --list "$3" --db-dump |
		    LC_ALL=C sort
	fi
}

# --- help ------------------------------------------------------------------
for c in migrate held show approve reject discard expire sync rebuild; do
	run lg "$c" --help
	check "$c --help exits 0 with usage" \
	    sh -c "test $rc -eq 0 && grep -q 'usage: listgate' '$T/out'"
done
run lg show
check "show without ID is a usage error" test "$rc" -eq 2
run lg approve x12
check "approve with a bad ID is a usage error" test "$rc" -eq 2
# an ID past the largest post number is no number, not "no post
# 9223372036854775807" (strtoll's clamp)
for c in show approve; do
	run lg "$c" 99999999999999999999
	check "$c with an ID too large is a usage error naming it" sh -c \
	    "test $rc -eq 2 && grep -q \"bad post ID '99999999999999999999'\" '$T/err'"
done
run lg rebuild
check "rebuild without --list is a usage error" test "$rc" -eq 2
run lg rebuild --list dev extra
check "rebuild with an extra argument is a usage error naming it" sh -c \
    "test $rc -eq 2 && grep -q \"unexpected argument 'extra'\" '$T/err'"
# a bad list name is named, with what a list name is, by every command
for c in held stats expire sync rebuild "notify --pending"; do
	run lg $c --list Dev
	check "$c --list Dev: a usage error naming the name and the rule" \
	    sh -c "test $rc -eq 2 && grep -qF \"bad list name 'Dev' (want [a-z0-9]\" '$T/err'"
done

# --- schema ----------------------------------------------------------------
run lg held
check "held before migrate fails" test "$rc" -eq 1
check "... and says to run migrate" grep -q "listgate --config [^ ]* migrate" "$T/err"
nmig=$(ls "$top_srcdir"/migrations/[0-9]*.sql | wc -l)
first=$(cd "$top_srcdir/migrations" && ls [0-9]*.sql | head -1 | sed 's/\.sql$//')
last=$(cd "$top_srcdir/migrations" && ls [0-9]*.sql | tail -1 | sed 's/\.sql$//')
run lg migrate --status
check "migrate --status on an empty database exits 0" test "$rc" -eq 0
check "... says version 0" grep -q "^schema version 0, " "$T/out"
check "... and names every migration pending, in order" sh -c \
    "test \"\$(grep -c '^pending ' '$T/out')\" -eq $nmig && grep -A$nmig '^schema' '$T/out' | sed -n '2p' | grep -qx 'pending $first' && tail -1 '$T/out' | grep -qx 'pending $last'"
run lg migrate
check "migrate exits 0" test "$rc" -eq 0
check "migrate names what it applied" grep -q "applied 0001_queue" "$T/out"
check "... 0002_hold_once too" grep -q "applied 0002_hold_once" "$T/out"
run lg migrate --status
check "migrate --status afterwards: nothing pending" \
    sh -c "test $rc -eq 0 && ! grep -q '^pending' '$T/out'"
run lg migrate
check "migrate again exits 0" test "$rc" -eq 0
check "migrate again applies nothing" grep -q "(0 migrations applied)" "$T/out"
check "schema_migrations has one row per migration" \
    test "$(sql 'SELECT count(*) FROM schema_migrations')" -eq "$nmig"
sql "INSERT INTO schema_migrations (version, name) VALUES (9999, 'future')"
run lg migrate
check "migrate refuses a newer schema" test "$rc" -eq 1
check "... saying so" grep -q "newer than this listgate" "$T/err"
run lg held
check "held refuses a newer schema" test "$rc" -eq 1
# migrate --status said it on standard output only, exit 1 with nothing
# on standard error (a monitoring script's cron line keeps that)
run lg migrate --status
check "migrate --status on a newer schema exits 1" \
    sh -c "test $rc -eq 1 && grep -q '^schema version 9999, this listgate knows [0-9]* (the database is newer' '$T/out'"
check "... saying why on standard error too" \
    grep -q "^listgate migrate: the database schema is version 9999, newer than this listgate knows ([0-9]*): upgrade listgate" "$T/err"
sql "DELETE FROM schema_migrations WHERE version = 9999"
run lg migrate --lock-timeout 0
check "migrate --lock-timeout 0 is a usage error" test "$rc" -eq 2

# --- a migration behind a long transaction gives up within its lock timeout ---
# 0011 alters notice_outbox (ACCESS EXCLUSIVE).  While a session keeps
# the table in a long transaction, migrate waits for it, and every
# query of the table that comes after (the filter's, moderators')
# queues behind migrate: it gives up after its lock timeout (5 s by
# default, --lock-timeout), rolls back,
# names the table and the session, and the queued query goes on.  (The
# test undoes 0011 to make it pending again, and forgets the later ones.)
createdb lg_lock || exit 99
PGDATABASE=lg_lock run lg migrate -q || exit 99
ms() { echo $(($(date +%s%N) / 1000000)); }
# what migrate or migrate --status takes without waiting for a lock (a
# few ms; seconds with LISTGATE_WRAP's valgrind, which starts, reads its
# symbols and checks for leaks at exit): the bounds below are a lock
# timeout plus slack plus twice that (the error path's own queries, a
# loaded host)
b0=$(ms)
PGDATABASE=lg_lock "$LISTGATE" --allow-root --config "$CONF" migrate -q \
    > /dev/null 2>&1 || exit 99
PGDATABASE=lg_lock "$LISTGATE" --allow-root --config "$CONF" migrate \
    --status > /dev/null 2>&1 || exit 99
own=$((($(ms) - b0) / 2))
echo "# migrate and migrate --status without a lock: $own ms each"
PGDATABASE=lg_lock sql "ALTER TABLE notice_outbox DROP COLUMN claimed_until;
    DELETE FROM schema_migrations WHERE version >= 11" || exit 99
PGDATABASE=lg_lock PGAPPNAME=longtx psql -X -q -c "BEGIN;
    SELECT count(*) FROM notice_outbox; SELECT pg_sleep(30); COMMIT" \
    > /dev/null 2>&1 &
hpid=$!
locked() {	# locked GRANTED: rows of pg_locks on notice_outbox
	PGDATABASE=lg_lock sql "SELECT count(*) FROM pg_locks
	    WHERE relation = 'notice_outbox'::regclass AND granted = $1"
}
i=0
while [ "$(locked true)" -eq 0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
m0=$(ms)
( PGDATABASE=lg_lock "$LISTGATE" --allow-root --config "$CONF" migrate \
    > "$T/mig.out" 2> "$T/mig.err"
  echo $? > "$T/mig.rc"; ms > "$T/mig.end" ) &
mpid=$!
i=0
while [ "$(locked false)" -eq 0 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
q0=$(ms)
PGDATABASE=lg_lock sql "SELECT count(*) FROM notice_outbox" > /dev/null
q1=$(ms)
wait $mpid
mrc=$(cat "$T/mig.rc")
mms=$(($(cat "$T/mig.end") - m0))
check "migrate behind a long transaction exits 1" test "$mrc" -eq 1
check "... within its default lock timeout of 5 s (took $mms ms)" \
    test "$mms" -lt $((6500 + 2 * own))
check "... a query of the table meanwhile waited no longer (took $((q1 - q0)) ms)" \
    test $((q1 - q0)) -lt 6500
check "... it names the migration, the table, the session and what to do" \
    grep -q "migration 0011_outbox_claim waited 5 s for a lock (lock_timeout) and was not applied: table notice_outbox is locked (AccessShareLock) by the session of pid [0-9]* (user [^,]*, application 'longtx', active).*Run migrate again once that transaction has ended.*--lock-timeout" "$T/mig.err"
[ "$mrc" -eq 1 ] || sed "s/^/# /" "$T/mig.err"
check "... and applied nothing" test "$(PGDATABASE=lg_lock sql \
    "SELECT count(*) FROM schema_migrations WHERE version = 11") $(PGDATABASE=lg_lock \
    sql "SELECT count(*) FROM pg_attribute WHERE attrelid = 'notice_outbox'::regclass
        AND attname = 'claimed_until'")" = "0 0"
PGDATABASE=lg_lock sql "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
    WHERE application_name = 'longtx'" > /dev/null
wait $hpid
PGDATABASE=lg_lock run lg migrate --lock-timeout 3600
check "... once that transaction ended, migrate applies it" \
    sh -c "test $rc -eq 0 && grep -q 'applied 0011_outbox_claim' '$T/out'"

# --- a migrate stopped while it waits takes its server session with it ---
# ^C, a kill or a lost ssh session ended migrate, but its server session
# stayed queued for the lock up to --lock-timeout, every query of the
# table queued behind it: the server now looks for its client every
# second, and the session ends with it
PGDATABASE=lg_lock sql "ALTER TABLE notice_outbox DROP COLUMN claimed_until;
    DELETE FROM schema_migrations WHERE version >= 11" || exit 99
PGDATABASE=lg_lock PGAPPNAME=longtx psql -X -q -c "BEGIN;
    SELECT count(*) FROM notice_outbox; SELECT pg_sleep(30); COMMIT" \
    > /dev/null 2>&1 &
hpid=$!
i=0
while [ "$(locked true)" -eq 0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
PGDATABASE=lg_lock "$LISTGATE" --allow-root --config "$CONF" migrate \
    --lock-timeout 60 > /dev/null 2>&1 &
mpid=$!
i=0
while [ "$(locked false)" -eq 0 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
kill -TERM $mpid
wait $mpid
q0=$(ms)
PGDATABASE=lg_lock sql "SELECT count(*) FROM notice_outbox" > /dev/null
q1=$(ms)
check "a query of the table after migrate was killed waiting for its lock waits no longer than a few seconds (took $((q1 - q0)) ms; the lock's holder lasts 30 s)" \
    test $((q1 - q0)) -lt 5000
check "... and the migration was not applied" test "$(PGDATABASE=lg_lock sql \
    "SELECT count(*) FROM schema_migrations WHERE version = 11")" -eq 0
PGDATABASE=lg_lock sql "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
    WHERE application_name = 'longtx'" > /dev/null
wait $hpid
PGDATABASE=lg_lock run lg migrate -q || exit 99

# --- schema_migrations itself locked by another session ----------------------
# migrate reads the schema's version from schema_migrations and records
# each migration there: a session holding that table (an open
# transaction that altered or locked it) made migrate wait too, bounded
# by lock_timeout but failing with "canceling statement due to lock
# timeout" and no word of who held it.  Both waits now end as the
# migrations' own do: the table, the session, what to do.
# holdmig MODE APP: a session holding schema_migrations locked in MODE
# for 30 s (its psql's pid in $hpid); returns once the lock is granted
holdmig() {
	PGDATABASE=lg_lock PGAPPNAME=$2 psql -X -q -c "BEGIN;
	    LOCK TABLE schema_migrations IN $1 MODE; SELECT pg_sleep(30);
	    COMMIT" > /dev/null 2>&1 &
	hpid=$!
	i=0
	while [ "$(PGDATABASE=lg_lock sql "SELECT count(*) FROM pg_locks l
	    JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.granted AND
	    a.application_name = '$2' AND
	    l.relation = 'schema_migrations'::regclass")" -eq 0 ] &&
	    [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
}
endhold() {
	PGDATABASE=lg_lock sql "SELECT pg_terminate_backend(pid) FROM
	    pg_stat_activity WHERE application_name = '$1'" > /dev/null
	wait $hpid
}
holdmig "ACCESS EXCLUSIVE" migx
m0=$(ms)
PGDATABASE=lg_lock run lg migrate --lock-timeout 1
mms=$(($(ms) - m0))
check "migrate with schema_migrations locked exits 1 (took $mms ms)" \
    test "$rc" -eq 1 -a "$mms" -lt $((4000 + 2 * own))
check "... naming the table, the session and what to do" \
    grep -q "migrate waited 1 s for a lock (lock_timeout) to read the schema's version: table schema_migrations is locked (AccessExclusiveLock) by the session of pid [0-9]* (user [^,]*, application 'migx', [^)]*).*Run migrate again once that transaction has ended.*--lock-timeout" "$T/err"
sed "s/^/# /" "$T/err"
endhold migx
# migrate --status reads the version from the same table: it waited for
# such a session for as long as it lasted, without a word.  It now
# gives up after the same lock timeout (its default, --lock-timeout),
# naming the session.  (timeout bounds the old endless wait.)
holdmig "ACCESS EXCLUSIVE" migx
m0=$(ms)
PGDATABASE=lg_lock run timeout 20 "$LISTGATE" --allow-root --config "$CONF" \
    migrate --status
mms=$(($(ms) - m0))
check "migrate --status with schema_migrations locked exits 1 within its default lock timeout of 5 s (rc $rc, took $mms ms)" \
    test "$rc" -eq 1 -a "$mms" -lt $((6500 + 2 * own))
check "... naming the table, the session and what to do" \
    grep -q "migrate --status waited 5 s for a lock (lock_timeout) to read the schema's version: table schema_migrations is locked (AccessExclusiveLock) by the session of pid [0-9]* (user [^,]*, application 'migx', [^)]*).*Run migrate --status again once that transaction has ended.*--lock-timeout" "$T/err"
check "... and prints no version" test ! -s "$T/out"
sed "s/^/# /" "$T/err"
m0=$(ms)
PGDATABASE=lg_lock run timeout 20 "$LISTGATE" --allow-root --config "$CONF" \
    migrate --status --lock-timeout 1
mms=$(($(ms) - m0))
check "migrate --status --lock-timeout 1 gives up after 1 s (rc $rc, took $mms ms)" \
    sh -c "test $rc -eq 1 -a $mms -lt $((4000 + 2 * own)) && grep -q 'migrate --status waited 1 s for a lock' '$T/err'"
endhold migx
PGDATABASE=lg_lock run lg migrate --status --lock-timeout 1
check "... once that session ended, migrate --status answers" \
    sh -c "test $rc -eq 0 && grep -q '^schema version ' '$T/out'"
# a lock that lets the version be read but not a migration be recorded
PGDATABASE=lg_lock sql "ALTER TABLE notice_outbox DROP COLUMN claimed_until;
    DELETE FROM schema_migrations WHERE version >= 11" || exit 99
holdmig SHARE migs
m0=$(ms)
PGDATABASE=lg_lock run lg migrate --lock-timeout 1
mms=$(($(ms) - m0))
check "migrate that cannot record its migration exits 1 (took $mms ms)" \
    test "$rc" -eq 1 -a "$mms" -lt $((4000 + 2 * own))
check "... naming the migration, the table and the session" \
    grep -q "migration 0011_outbox_claim waited 1 s for a lock (lock_timeout) and was not applied: table schema_migrations is locked (ShareLock) by the session of pid [0-9]* (user [^,]*, application 'migs', [^)]*).*Run migrate again once that transaction has ended.*--lock-timeout" "$T/err"
sed "s/^/# /" "$T/err"
endhold migs
check "... and applied nothing" test "$(PGDATABASE=lg_lock sql \
    "SELECT count(*) FROM schema_migrations WHERE version = 11") $(PGDATABASE=lg_lock \
    sql "SELECT count(*) FROM pg_attribute WHERE attrelid = 'notice_outbox'::regclass
        AND attname = 'claimed_until'")" = "0 0"
PGDATABASE=lg_lock run lg migrate
check "... once that session ended, migrate applies it" \
    sh -c "test $rc -eq 0 && grep -q 'applied 0011_outbox_claim' '$T/out'"

# --- a schema of its own, in a database another program migrates too ---------
# listgate's schema first in search_path, public (with the other
# program's schema_migrations, golang-migrate's columns, at its version
# 20) after it: migrate makes listgate's tables in listgate's schema and
# leaves the other table alone
createdb lg_shared || exit 99
PGDATABASE=lg_shared sql "CREATE SCHEMA lg;
    CREATE TABLE public.schema_migrations (version bigint PRIMARY KEY,
        dirty boolean NOT NULL);
    INSERT INTO public.schema_migrations VALUES (20, false)" || exit 99
# before migrate, a command reading the other program's table (the
# first schema_migrations of the path) says to migrate, not that it is
# newer than this listgate
PGDATABASE=lg_shared PGOPTIONS='-c search_path=lg,public' run lg held
check "held beside another program's schema_migrations, listgate's schema first and empty: says to migrate (rc $rc)" \
    sh -c "test $rc -eq 1 && grep -q 'no listgate schema in schema lg yet.*run .listgate --config [^ ]* migrate.' '$T/err'"
# migrate --status says what migrate would do: nothing applied yet
PGDATABASE=lg_shared PGOPTIONS='-c search_path=lg,public' run lg migrate \
    --status
check "migrate --status beside another program's schema_migrations: version 0, not the other's (rc $rc)" \
    sh -c "test $rc -eq 0 && grep -q '^schema version 0, ' '$T/out' && test \"\$(grep -c '^pending ' '$T/out')\" -eq $nmig"
PGDATABASE=lg_shared PGOPTIONS='-c search_path=lg,public' run lg migrate
[ "$rc" -eq 0 ] || sed 's/^/# /' "$T/err"
check "migrate into its own schema beside another program's schema_migrations" \
    test "$rc" -eq 0
check "... its tables in that schema" test "$(PGDATABASE=lg_shared sql \
    "SELECT count(*) FROM pg_tables WHERE schemaname = 'lg'
        AND tablename IN ('schema_migrations', 'held_posts')")" -eq 2
check "... the other program's table as it was" test "$(PGDATABASE=lg_shared \
    sql "SELECT string_agg(version || ' ' || dirty, ',')
        FROM public.schema_migrations")" = "20 false"
PGDATABASE=lg_shared PGOPTIONS='-c search_path=lg,public' run lg held
check "... and held works there" test "$rc" -eq 0
# a connection that does not see that schema is not told to migrate
# (which would apply nothing) but why it does not see it
PGDATABASE=lg_shared sql "DROP TABLE public.schema_migrations" || exit 99
PGDATABASE=lg_shared run lg held
check "held with listgate's schema not in search_path fails" test "$rc" -eq 1
check "... naming the schema and search_path" \
    grep -q 'schema lg.*search_path' "$T/err"
sql "CREATE ROLE outsider LOGIN" || exit 99
PGUSER=outsider PGDATABASE=lg_shared PGOPTIONS='-c search_path=lg,public' \
    run lg held
check "held as a role that may not use listgate's schema fails" \
    test "$rc" -eq 1
check "... saying which roles to grant" grep -q 'grant.*listgate_moderator' \
    "$T/err"
# migrate --status and migrate as that role: not "schema version 0",
# every migration pending, nor "permission denied for schema public"
for c in "migrate --status" "migrate"; do
	PGUSER=outsider PGDATABASE=lg_shared \
	    PGOPTIONS='-c search_path=lg,public' run lg $c
	check "$c as a role that may not use listgate's schema fails (rc $rc)" \
	    sh -c "test $rc -eq 1 && ! grep -q '^schema version 0' '$T/out'"
	check "... naming the schema and saying which roles to grant" grep -q \
	    'schema lg, which the role outsider may not use: grant.*listgate_moderator' \
	    "$T/err"
done
# an administrator whose role has a schema of its own name (PostgreSQL's
# secure schema usage pattern: "$user" comes first in the default
# search_path) migrates the schema every other role uses, in public: it
# made a second listgate schema in its own, with every migration, and
# left public's as it was (the filters deferring, "run listgate migrate")
createdb lg_own || exit 99
PGDATABASE=lg_own run lg migrate -q
[ "$rc" -eq 0 ] || exit 99
sql "CREATE ROLE lgadm LOGIN IN ROLE listgate_admin" || exit 99
PGDATABASE=lg_own sql "CREATE SCHEMA lgadm AUTHORIZATION lgadm" || exit 99
PGUSER=lgadm PGDATABASE=lg_own run lg migrate --status
check "migrate --status by a role with a schema of its own: up to date" \
    sh -c "test $rc -eq 0 && ! grep -q '^pending' '$T/out'"
PGUSER=lgadm PGDATABASE=lg_own run lg migrate
check "migrate by a role with a schema of its own applies nothing (rc $rc)" \
    sh -c "test $rc -eq 0 && grep -q '(0 migrations applied)' '$T/out'"
check "... and makes no listgate tables in that schema" test "$(PGDATABASE=lg_own \
    sql "SELECT count(*) FROM pg_tables WHERE schemaname = 'lgadm'")" -eq 0
# 0011 undone (as above): applied where the tables are
PGDATABASE=lg_own sql "ALTER TABLE notice_outbox DROP COLUMN claimed_until;
    DELETE FROM schema_migrations WHERE version >= 11" || exit 99
PGUSER=lgadm PGDATABASE=lg_own run lg migrate
nrec=$(PGDATABASE=lg_own sql "SELECT count(*) FROM public.schema_migrations")
col=$(PGDATABASE=lg_own sql "SELECT count(*) FROM pg_attribute WHERE
    attrelid = 'public.notice_outbox'::regclass AND attname = 'claimed_until'")
check "... a migration missing there is applied there (rc $rc, $nrec of $nmig recorded, column $col)" \
    sh -c "test $rc -eq 0 && grep -q 'applied 0011_outbox_claim' '$T/out' && test '$nrec $col' = '$nmig 1'"
check "... still nothing in the role's own schema" test "$(PGDATABASE=lg_own \
    sql "SELECT count(*) FROM pg_tables WHERE schemaname = 'lgadm'")" -eq 0
# another program's schema_migrations elsewhere is not listgate's
createdb lg_app || exit 99
PGDATABASE=lg_app sql "CREATE SCHEMA app; CREATE TABLE app.schema_migrations
    (version bigint PRIMARY KEY, dirty boolean NOT NULL)" || exit 99
PGDATABASE=lg_app run lg held
check "held on a database without listgate's schema says to migrate" \
    grep -q 'no listgate schema: run `listgate --config [^ ]* migrate`' "$T/err"
# another program's schema_migrations in the first schema of the path
# (public, as listgate's by default): golang-migrate's, at a version of
# its own that read as "newer than this listgate knows: upgrade
# listgate" (and as a wrong number), Rails's text column as a type error
createdb lg_golang || exit 99
PGDATABASE=lg_golang sql "CREATE TABLE schema_migrations (version bigint
    PRIMARY KEY, dirty boolean NOT NULL);
    INSERT INTO schema_migrations VALUES (20230101120000, false)" || exit 99
for c in "migrate --status" "migrate" "held"; do
	PGDATABASE=lg_golang run lg $c
	check "$c beside another program's schema_migrations in public fails (rc $rc)" \
	    test "$rc" -eq 1
	check "... saying it is not listgate's, and what to do" grep -q \
	    "schema_migrations in schema public is not listgate's.*CREATE SCHEMA listgate.*search_path=listgate,public" \
	    "$T/err"
	check "... not to upgrade listgate" sh -c "! grep -q 'upgrade' '$T/err' '$T/out'"
done
check "... the other program's table as it was" test "$(PGDATABASE=lg_golang \
    sql "SELECT string_agg(version || ' ' || dirty, ',')
        FROM schema_migrations")" = "20230101120000 false"
# listgate's schema_migrations made by hand (its columns, no rows, no
# held_posts yet) is listgate's: migrate applies every migration there
createdb lg_byhand || exit 99
PGDATABASE=lg_byhand sql "CREATE TABLE schema_migrations (version integer
    PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL
    DEFAULT now())" || exit 99
PGDATABASE=lg_byhand run lg migrate
check "migrate into a schema_migrations made by hand (rc $rc)" \
    sh -c "test $rc -eq 0 && grep -q '($nmig migrations applied)' '$T/out'"
createdb lg_rails || exit 99
PGDATABASE=lg_rails sql "CREATE TABLE schema_migrations (version varchar
    PRIMARY KEY); INSERT INTO schema_migrations VALUES ('20230101120000')" ||
    exit 99
for c in "migrate --status" "migrate" "held"; do
	PGDATABASE=lg_rails run lg $c
	check "$c beside a text schema_migrations says it is not listgate's (rc $rc)" \
	    sh -c "test $rc -eq 1 && grep -q \"schema_migrations in schema public is not listgate's\" '$T/err'"
done

# --- holding and listing -----------------------------------------------------
id1=$("$QHOLD" dev "$DATA/spam1.eml" 0.98) || exit 99
id2=$("$QHOLD" dev "$DATA/ham1.eml" 0.71) || exit 99
id3=$("$QHOLD" other "$DATA/spam2.eml") || exit 99
run lg held
check "held exits 0" test "$rc" -eq 0
check "held lists the three posts" test "$(grep -c 'a held test post' "$T/out")" -eq 3
run lg held --list dev
check "held --list dev lists two" test "$(grep -c 'a held test post' "$T/out")" -eq 2
check "held shows the score" grep -q "0.9800" "$T/out"
run lg held --json
check "held --json exits 0" test "$rc" -eq 0
if command -v python3 >/dev/null 2>&1; then
	check "held --json is a JSON array of 3" \
	    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(len(d) != 3 or d[0]["id"] <= 0)' "$T/out"
else
	echo "# SKIP the checks at line 98: python3 is not installed"
fi
# a post that arrived at .9 of a second arrived in that second, not the
# next (a rounded time lies in the future: age_seconds -1 for a post just
# held); a server clock ahead of ours shows age 0, as the table does
sql "UPDATE held_posts SET arrived_at = '2024-01-01 00:00:00.9+00' WHERE id = $id2"
sql "UPDATE held_posts SET arrived_at = now() + interval '1 hour' WHERE id = $id3"
run lg held --json
if command -v python3 >/dev/null 2>&1; then
	check "held --json: arrived is the second the post arrived in" \
	    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=[x for x in d if x["id"] == int(sys.argv[2])][0]; sys.exit(r["arrived"] != 1704067200)' "$T/out" "$id2"
	check "held --json: age_seconds is never negative" \
	    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(min(x["age_seconds"] for x in d) < 0)' "$T/out"
fi
run env TZ=UTC "$LISTGATE" --allow-root --config "$CONF" show "$id2"
check "show: Arrived is the second the post arrived in" \
    grep -q "^Arrived: *2024-01-01 00:00:00 +0000" "$T/out"
sql "UPDATE held_posts SET arrived_at = now() WHERE id IN ($id2, $id3)"
# output that cannot be written (a full disk) is a failure, said so, not
# exit 0 with a file cut short
if [ -w /dev/full ]; then
	for a in held "held --json" "show $id1" "migrate --status" migrate; do
		lg $a > /dev/full 2> "$T/err"
		rc=$?
		check "$a to a full disk exits 1" test "$rc" -eq 1
		check "... saying so" grep -q "cannot write the standard output" \
		    "$T/err"
	done
else
	echo "# SKIP the full disk checks: no /dev/full"
fi
run lg held --list ../etc
check "held refuses a bad list name" test "$rc" -eq 2
# a flood of held posts (3000, 64 KiB of deciding tokens each: 190 MiB
# of rows) is listed row by row, in a few MiB: it was read into memory
# whole, and under a 100 MiB limit failed with "out of memory for query
# result", listing nothing
sql "INSERT INTO held_posts (list, env_sender, env_recipient, from_hdr,
    subject, message_id, size, score, verdict, clues, raw_z, raw_sha256)
    SELECT 'flood', env_sender, env_recipient, from_hdr, subject,
    message_id, size, score, verdict, repeat('tok 0.99 1 0 ', 5000) || g,
    raw_z, sha256(g::text::bytea) FROM held_posts,
    generate_series(1, 3000) g WHERE id = $id1"
# (peak RSS, as tests/nested_memory.sh measures it: under ASan too,
# where a limit of address space cannot be set)
if grep -q __asan_init "$LISTGATE" 2>/dev/null; then
	lim=150
else
	lim=100
fi
flood() {	# flood [OPTION]: the exit status and peak RSS (MiB) of held
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0 \
	    python3 -c '
import resource, subprocess, sys
with open(sys.argv[1], "wb") as out:
    r = subprocess.run(sys.argv[2:], stdout=out)
print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
' "$T/out" "$LISTGATE" --allow-root --config "$CONF" held --list flood "$@"
}
read -r frc frss <<EOF
$(flood)
EOF
check "held lists 3000 posts of 64 KiB of tokens (exit ${frc:-?}) in at most $lim MiB (peak RSS ${frss:-?} MiB)" \
    test "${frc:-1}" -eq 0 -a "${frss:-999999}" -le "$lim"
check "... every one" test "$(grep -c ' flood ' "$T/out")" -eq 3000
read -r frc frss <<EOF
$(flood --json)
EOF
check "held --json too (exit ${frc:-?}, peak RSS ${frss:-?} MiB)" \
    test "${frc:-1}" -eq 0 -a "${frss:-999999}" -le "$lim"
sql "DELETE FROM held_posts WHERE list = 'flood'"
run lg show "$id1"
check "show exits 0" test "$rc" -eq 0
check "show prints the subject" grep -q "^Subject: *a held test post" "$T/out"
check "show prints the deciding tokens" grep -q "tok1 0.99" "$T/out"
check "show previews the decoded text" grep -q "viagra" "$T/out"
run lg show 999999
check "show of a missing post fails" test "$rc" -eq 1
# a preview cut short says so (...), also when every character takes 4
# bytes: 2100 emoji were shown as 2000, the buffer's 8000 bytes, with no
# mark that the text went on
{
	printf 'From: a@example.org\nSubject: emoji\n'
	printf 'Content-Type: text/plain; charset=utf-8\n\n'
	i=0
	while [ "$i" -lt 2100 ]; do
		printf '\360\237\230\200'
		i=$((i + 1))
	done
	printf '\n'
} > "$T/emoji.eml"
ide=$("$QHOLD" other "$T/emoji.eml" 0.5) || exit 99
run lg show "$ide"
check "show of a post with a long text: exit 0" test "$rc" -eq 0
check "... its preview cut with ..." sh -c 'tail -n 1 "$1" | grep -q "[.][.][.]\$"' \
    sh "$T/out"
sql "DELETE FROM held_posts WHERE id = $ide"

# --- approve: release with the exact bytes, or nothing -------------------------
touch "$T/fail"
run lg approve "$id1"
check "approve with a failing release exits 1" test "$rc" -eq 1
check "... saying the post stays held" grep -q "stays held" "$T/err"
check "... naming the post and its list" grep -q "post $id1 (list dev): release command" "$T/err"
check "... and records nothing" \
    test "$(sql "SELECT status FROM held_posts WHERE id = $id1")" = held
check "... and journals nothing" \
    test "$(sql 'SELECT count(*) FROM train_journal')" -eq 0
rm -f "$T/fail" "$T/released.dev"
run lg approve --by alice --note "fine" "$id1"
check "approve exits 0" test "$rc" -eq 0
check "release got the identical bytes" cmp -s "$T/released.dev" "$DATA/spam1.eml"
check "approval recorded with who and note" \
    test "$(sql "SELECT status || ' ' || decided_by || ' ' || note FROM held_posts WHERE id = $id1")" = "approved alice fine"
check "approve journals one ham learn" \
    test "$(sql "SELECT count(*) FROM train_journal WHERE class = 'ham' AND op = 'learn'")" -eq 1
check "approve synced the token file" test -f "$T/tokens/dev.kch"
dump "$T/tokens/dev.kch" "$CONF" dev > "$T/dump1"
rm -f "$T/released.dev"
run lg approve "$id1"
check "approving again exits 0" test "$rc" -eq 0
check "... says it is already approved" grep -q "already approved" "$T/out"
check "... does not release again" test ! -e "$T/released.dev"
check "... journals nothing more" \
    test "$(sql 'SELECT count(*) FROM train_journal')" -eq 1
dump "$T/tokens/dev.kch" "$CONF" dev > "$T/dump2"
check "... and leaves the counts alone" cmp -s "$T/dump1" "$T/dump2"
run lg held --list dev
check "an approved post is no longer listed" test "$(grep -c 'a held test post' "$T/out")" -eq 1

# --- reject then forced approve = learnt as ham only ------------------------------
run lg reject "$id2"
check "reject exits 0" test "$rc" -eq 0
run lg approve "$id2"
check "approve of a rejected post without --force exits 1" test "$rc" -eq 1
check "... saying it is already rejected" grep -q "already rejected" "$T/err"
check "... naming the post and its list" \
    grep -q "post $id2 (list dev) is already rejected" "$T/err"
run lg approve --force "$id2"
check "approve --force exits 0" test "$rc" -eq 0
check "... released it" cmp -s "$T/released.dev" "$DATA/ham1.eml"
# the same two posts approved straight away on another list
r1=$("$QHOLD" ref "$DATA/spam1.eml") || exit 99
r2=$("$QHOLD" ref "$DATA/ham1.eml") || exit 99
lg approve -q "$r1" "$r2" > /dev/null 2>&1
dump "$T/tokens/dev.kch" "$CONF" dev | grep -v '^00 70 6F 73' > "$T/dump-dev"
dump "$T/tokens/ref.kch" "$CONF" ref | grep -v '^00 70 6F 73' > "$T/dump-ref"
check "reject + forced approve counts = learnt as ham only" \
    cmp -s "$T/dump-dev" "$T/dump-ref"

# --- a decision changed after a manual unlearn of the post's bytes -----------------
# rejected (learnt as spam), its spam learning undone by hand with
# `train --unlearn`, then approved: the approval must not unlearn it as
# spam a second time (that took from the other spam's counts)
u1=$("$QHOLD" unl "$DATA/ham2.eml") || exit 99
u2=$("$QHOLD" unlref "$DATA/ham2.eml") || exit 99
for l in unl unlref; do lg train -q --list "$l" --spam "$DATA/spam2.eml"; done
run lg reject "$u1"
check "unl: reject exits 0" test "$rc" -eq 0
run lg train --list unl --unlearn --spam "$DATA/ham2.eml"
check "unl: the manual unlearn of the rejected post's bytes exits 0" \
    test "$rc" -eq 0
run lg approve --force "$u1"
check "unl: the forced approval exits 0" test "$rc" -eq 0
check "unl: the approval journals no second spam unlearning" \
    test "$(sql "SELECT count(*) FROM train_journal WHERE list = 'unl' AND class = 'spam' AND op = 'unlearn'")" -eq 1
lg approve -q "$u2" > /dev/null 2>&1
dump "$T/tokens/unl.kch" "$CONF" unl | grep -v '^00 70 6F 73' > "$T/dump-unl"
dump "$T/tokens/unlref.kch" "$CONF" unlref | grep -v '^00 70 6F 73' > "$T/dump-unlref"
check "unl: counts = the other spam and the post learnt as ham" \
    cmp -s "$T/dump-unl" "$T/dump-unlref"

# --- discard and expire ----------------------------------------------------------
run lg discard "$id3"
check "discard exits 0" test "$rc" -eq 0
check "discard journals a spam learn" \
    test "$(sql "SELECT count(*) FROM train_journal WHERE list = 'other' AND class = 'spam'")" -eq 1
e1=$("$QHOLD" dev "$DATA/spam3.eml") || exit 99
e2=$("$QHOLD" dev "$DATA/spam4.eml") || exit 99
sql "UPDATE held_posts SET arrived_at = now() - interval '10 days' WHERE id = $e1"
nj=$(sql 'SELECT count(*) FROM train_journal')
run lg expire --older-than 5
check "expire exits 0" test "$rc" -eq 0
check "expire expired the old post" \
    test "$(sql "SELECT status FROM held_posts WHERE id = $e1")" = expired
check "... and not the new one" \
    test "$(sql "SELECT status FROM held_posts WHERE id = $e2")" = held
check "expire trains nothing" test "$(sql 'SELECT count(*) FROM train_journal')" -eq "$nj"
printf 'release = /bin/true\nhold_expiry_days = 1\n' > "$CONF/lists/dev.conf"
sql "UPDATE held_posts SET arrived_at = now() - interval '2 days' WHERE id = $e2"
run lg expire --list dev
check "expire uses the list's hold_expiry_days" \
    test "$(sql "SELECT status FROM held_posts WHERE id = $e2")" = expired

# --- sync and rebuild ------------------------------------------------------------
run lg sync
check "sync of everything exits 0" test "$rc" -eq 0
dump "$T/tokens/dev.kch" "$CONF" dev > "$T/before"
run lg rebuild --list dev
check "rebuild exits 0" test "$rc" -eq 0
dump "$T/tokens/dev.kch" "$CONF" dev > "$T/after"
check "rebuild gives identical counts (and position)" cmp -s "$T/before" "$T/after"
check "rebuild leaves no temporary file" \
    test -z "$(find "$T/tokens" -name '.*' -print)"
rm -f "$T/tokens/dev.kch"
run lg rebuild --list dev
dump "$T/tokens/dev.kch" "$CONF" dev > "$T/after"
check "rebuild recreates a missing token file" cmp -s "$T/before" "$T/after"
# a list without journal events: an empty file at position 0 (a new file
# is built in bulk, and bulk wrote nothing when nothing was learnt)
printf 'release = /bin/true\n' > "$CONF/lists/quiet.conf"
run lg rebuild --list quiet
check "rebuild of a list without journal events exits 0" test "$rc" -eq 0
check "... making an empty token file at position 0" test "$(lg score \
    --list quiet --db-stats | tr '\n' ' ')" = \
    "spam_posts 0 ham_posts 0 tokens 0 journal_pos 0 "
check "... and no temporary file" \
    test -z "$(find "$T/tokens" -name '.*' -print)"
check "... and no warning: the list has a file" test ! -s "$T/err"
rm -f "$CONF/lists/quiet.conf" "$T/tokens/quiet.kch"
# a list with neither journal events nor a file (a misspelt name): the
# empty token file made is warned of, by sync --list and by rebuild
run lg sync --list devv
check "sync --list of a list with nothing: exit 0" test "$rc" -eq 0
check "... warning of the empty token file it made" grep -q \
    "listgate sync: warning: list devv has no journal events and no $CONF/lists/devv.conf: its token file $T/tokens/devv.kch is empty, and so is its pass counter $T/tokens/devv.passed (a misspelt list name?" "$T/err"
run lg sync --list devv
check "... once: a second sync of the file says nothing" test ! -s "$T/err"
run lg rebuild --list devv
check "rebuild of such a list warns too" grep -q \
    "listgate rebuild: warning: list devv has no journal events and no" "$T/err"
# ... naming the pass counter it made beside the token file: removing
# only "that file" (the token file), as it said, left the counter, which
# alone kept stats and expire from warning of the misspelt name
check "... naming both files it made" grep -q \
    "its token file $T/tokens/devv.kch is empty, and so is its pass counter $T/tokens/devv.passed (a misspelt list name? then remove both)" "$T/err"
for f in $(grep -o "$T/tokens/devv\.[a-z]*" "$T/err"); do rm -f "$f"; done
run lg stats --list devv
check "... and once they are removed, stats warns of the name again" \
    grep -q "listgate stats: warning: list devv has no .*(a misspelt list name?)" "$T/err"
rm -f "$T/tokens/devv.kch" "$T/tokens/devv.passed"
# sync --check of such a list said its token file "does not exist: `sync`
# or `rebuild --list devv` recreates it", sending the administrator to
# make a token file for the misspelt name
run lg sync --check --list devv
check "sync --check of a list with nothing fails" test "$rc" -eq 1
check "... saying it may be a misspelt name" grep -q \
    "listgate sync: list devv has no journal events, no token file $T/tokens/devv.kch and no $CONF/lists/devv.conf: nothing to check (a misspelt list name?)" "$T/err"
check "... not advising a rebuild" sh -c "! grep -q rebuild '$T/err'"
check "... and making no file" test ! -e "$T/tokens/devv.kch"
# held and notify of a misspelt list said nothing of it (an empty
# table, a silent cron line): they warn as stats does, exit 0
run lg held --list devv
check "held --list of a list that is nowhere: exit 0, warning of it, naming the configuration" \
    sh -c "test $rc -eq 0 && grep -qx \"listgate held: warning: list devv has no $CONF/lists/devv.conf, no token file or pass counter in $T/tokens, and no held post or journal event: nothing to list (a misspelt list name?)\" '$T/err'"
run lg held --list dev --json
check "... and not for a list that has a file" \
    sh -c "test $rc -eq 0 && test ! -s '$T/err'"
run lg notify --pending --quiet --list devv
check "notify --pending --quiet --list of a list that is nowhere: exit 0, warning of it" \
    sh -c "test $rc -eq 0 && grep -qx \"listgate notify: warning: list devv has no $CONF/lists/devv.conf, no token file or pass counter in $T/tokens, and no held post or journal event: nothing to send (a misspelt list name?)\" '$T/err'"
run lg notify --pending --quiet --list dev
check "... and not for a list that has a file" \
    sh -c "test $rc -eq 0 && test ! -s '$T/err'"

# a list trained without the database (position 0, posts counted): its
# training is not in the journal, and a rebuild would drop it
printf 'release = /bin/true\n' > "$CONF/lists/solo.conf"
env -u PGHOST -u PGPORT -u PGDATABASE -u PGUSER -u PGHOSTADDR -u PGSERVICE \
    "$LISTGATE" --allow-root --config "$CONF" train -q --list solo --spam \
    "$DATA/spam1.eml" "$DATA/spam2.eml" || exit 99
dump "$T/tokens/solo.kch" "$CONF" solo > "$T/solo.before"
run lg rebuild --list solo
check "rebuild refuses a token file trained without the journal" \
    test "$rc" -eq 1
check "... naming its posts and --force" grep -q \
    "holds 2 spam and 0 ham posts trained without the journal.*--force" \
    "$T/err"
dump "$T/tokens/solo.kch" "$CONF" solo > "$T/solo.after"
check "... and leaves it as it was" cmp -s "$T/solo.before" "$T/solo.after"
# the database configured later: sync adds the journal's events on top
# of that training and the file's position moves past 0, but the two
# spam are still not in the journal
lg sync -q --list solo || exit 99
lg train -q --list solo --ham "$DATA/ham1.eml" || exit 99
check "(the file's position is past 0 now)" test "$(lg score --list solo \
    --db-stats | sed -n 's/^journal_pos //p')" -gt 0
dump "$T/tokens/solo.kch" "$CONF" solo > "$T/solo.before"
run lg rebuild --list solo
check "rebuild refuses it past position 0 too" test "$rc" -eq 1
check "... naming only the posts the journal does not have" grep -q \
    "holds 2 spam and 0 ham posts trained without the journal.*--force" \
    "$T/err"
dump "$T/tokens/solo.kch" "$CONF" solo > "$T/solo.after"
check "... and leaves it as it was" cmp -s "$T/solo.before" "$T/solo.after"
run lg rebuild --list solo --force
check "rebuild --force replaces it with the journal's view (its one ham)" \
    test "$rc" -eq 0 -a "$(lg score --list solo --db-stats | \
    sed -n 's/^\(spam\|ham\)_posts //p' | tr '\n' ' ')" = "0 1 "
rm -f "$CONF/lists/solo.conf" "$T/tokens/solo.kch"

rm -f "$T/tokens/dev.kch"
run lg sync --list dev
dump "$T/tokens/dev.kch" "$CONF" dev > "$T/after"
check "sync recreates a missing token file from the journal" \
    cmp -s "$T/before" "$T/after"

# a token file of the old format 1 (token text keys) in its place: the
# journal rebuilds it.  Its one post at position 0 was trained without
# the journal: the rebuild that every command's refusal names dropped
# it without a word, as it drops no post of a current file (the whole
# training of a list from before its database)
"$top_builddir/tests/mkoldtok" "$T/tokens/dev.kch" cur 20000 \
    "s:$DATA/spam1.eml" || exit 99
run lg sync --list dev
check "sync refuses a format 1 token file" test "$rc" -eq 1
check "... and says to run listgate rebuild --list dev" \
    grep -q "run \`listgate --config [^ ]* rebuild --list dev\`" "$T/err"
run lg rebuild --list dev
check "rebuild of a format 1 file with a post trained without the journal fails" \
    test "$rc" -eq 1
check "... naming the post, and that it converted the file" grep -q \
    "holds 1 spam and 0 ham posts trained without the journal.*--force.*was converted to the current one" \
    "$T/err"
check "... which keeps the post" test "$(lg score --list dev --db-stats | \
    sed -n 's/^\(spam\|ham\)_posts //p' | tr '\n' ' ')" = "1 0 "
run lg rebuild --list dev --force
check "rebuild --force replaces it from the journal" \
    sh -c "test $rc -eq 0 && grep -q 'rebuilt .* from' '$T/out'"
dump "$T/tokens/dev.kch" "$CONF" dev > "$T/after"
check "... with the journal's counts" cmp -s "$T/before" "$T/after"

# --- two moderators approve the same post at once --------------------------------
cat > "$T/slow.sh" <<EOF
#!/bin/sh
sleep 1
cat >> "$T/released.slow"
EOF
printf 'release = /bin/sh %s/slow.sh\n' "$T" > "$CONF/lists/dev.conf"
c1=$("$QHOLD" dev "$DATA/ham2.eml") || exit 99
nj=$(sql 'SELECT count(*) FROM train_journal')
lg approve -q --by m1 "$c1" > "$T/out1" 2>&1 &
p1=$!
lg approve -q --by m2 "$c1" > "$T/out2" 2>&1 &
p2=$!
wait "$p1"; wait "$p2"
check "concurrent approvals release the post once" \
    cmp -s "$T/released.slow" "$DATA/ham2.eml"
check "... and journal it once" \
    test "$(sql 'SELECT count(*) FROM train_journal')" -eq $((nj + 1))

# --- an approve interrupted after the release command ran ------------------------
# (1) the database goes away while the release runs: the approval cannot
# be recorded, the post stays 'releasing'
cat > "$T/drop.sh" <<EOF
#!/bin/sh
cat >> "$T/released.drop" || exit 1
PG_TEST_DIR=$PG_TEST_DIR sh "$PG_SH" stop >/dev/null 2>&1
EOF
printf 'release = /bin/sh %s/drop.sh\n' "$T" > "$CONF/lists/dev.conf"
d1=$("$QHOLD" dev "$DATA/ham3.eml") || exit 99
nj=$(sql 'SELECT count(*) FROM train_journal')
run lg approve "$d1"
check "approve whose connection drops after the release exits 1" \
    test "$rc" -eq 1
check "... saying the post was released but not recorded" \
    grep -q "was released, but the approval could not be recorded" "$T/err"
check "... and the command that records it, with --config DIR" \
    grep -q "once the database is back, run \`listgate --config [^ ]* approve --mark-approved $d1\`\$" "$T/err"
$PG_CTL_START
check "... the post stays 'releasing'" \
    test "$(sql "SELECT status FROM held_posts WHERE id = $d1")" = releasing
run lg held --list dev
check "held lists it, marked RELEASING" grep -q "^$d1 .*RELEASING" "$T/out"
run lg held --list dev --json
check "held --json gives its status" grep -q '"status": "releasing"' "$T/out"
run lg approve "$d1"
check "approve again exits 1" test "$rc" -eq 1
check "... saying a previous approve was interrupted" grep -q \
    "post $d1 (list dev) was being released when a previous approve was interrupted; check the list archive, then run \`listgate --config [^ ]* approve --force $d1\` to release it again or \`listgate --config [^ ]* approve --mark-approved $d1\` to record it without releasing" \
    "$T/err"
check "... and does not release it again" \
    cmp -s "$T/released.drop" "$DATA/ham3.eml"
run lg reject "$d1"
check "reject of a releasing post exits 1 (nothing changed)" \
    test "$rc" -eq 1 -a \
    "$(sql "SELECT status FROM held_posts WHERE id = $d1")" = releasing
check "... naming the commands to run, with --config DIR" grep -q \
    "then run \`listgate --config [^ ]* approve --mark-approved $d1\` if it reached the list, or \`listgate --config [^ ]* reject --force $d1\`\$" \
    "$T/err"
run lg approve --mark-approved "$d1"
check "approve --mark-approved exits 0" test "$rc" -eq 0
check "... records it approved" \
    test "$(sql "SELECT status FROM held_posts WHERE id = $d1")" = approved
check "... without releasing it" cmp -s "$T/released.drop" "$DATA/ham3.eml"
check "... and journals it once" \
    test "$(sql 'SELECT count(*) FROM train_journal')" -eq $((nj + 1))
run lg approve --mark-approved "$id1"
check "--mark-approved of a post not releasing exits 1" test "$rc" -eq 1
run lg approve --force --mark-approved "$d1"
check "--force with --mark-approved is a usage error" test "$rc" -eq 2
run lg reject --mark-approved "$d1"
check "reject --mark-approved is a usage error" test "$rc" -eq 2

# (2) the approving process is killed (SIGKILL) right after the release
# command handed the post on; --force then releases it again, once
cat > "$T/kill.sh" <<EOF
#!/bin/sh
cat >> "$T/released.kill" || exit 1
if [ ! -e "$T/killed" ]; then
	: > "$T/killed"
	kill -9 \$PPID
fi
EOF
printf 'release = /bin/sh %s/kill.sh\n' "$T" > "$CONF/lists/dev.conf"
k1=$("$QHOLD" dev "$DATA/ham4.eml") || exit 99
run lg approve "$k1"
check "approve killed during the release does not exit 0" test "$rc" -ne 0
check "... the post stays 'releasing'" \
    test "$(sql "SELECT status FROM held_posts WHERE id = $k1")" = releasing
run lg approve "$k1"
check "approve again exits 1 and releases nothing" \
    test "$rc" -eq 1 -a "$(wc -c < "$T/released.kill")" -eq \
    "$(wc -c < "$DATA/ham4.eml")"
run lg approve --force "$k1"
check "approve --force exits 0" test "$rc" -eq 0
cat "$DATA/ham4.eml" "$DATA/ham4.eml" > "$T/twice"
check "... released it a second time" cmp -s "$T/released.kill" "$T/twice"
check "... approved" \
    test "$(sql "SELECT status FROM held_posts WHERE id = $k1")" = approved

# (3) a release that fails puts the post back: held, undecided
printf 'release = /bin/false\n' > "$CONF/lists/dev.conf"
f1=$("$QHOLD" dev "$DATA/spam3.eml" 0.5) || exit 99
run lg approve "$f1"
check "a failed release: approve exits 1" test "$rc" -eq 1
check "... the post is held again, undecided" test \
    "$(sql "SELECT status || coalesce(decided_by, '-') FROM held_posts WHERE id = $f1")" = "held-"

# (3b) a release that fails for good (qmail's 100: ezmlm-send refusing
# the post) was taken for a temporary failure, with nothing kept of why:
# the post is held again, its note says why (show, held), and approve
# says the list refused it for good
printf 'release = /bin/sh -c "cat > /dev/null; echo refused >&2; exit 100"\n' \
    > "$CONF/lists/dev.conf"
f2=$("$QHOLD" dev "$DATA/spam2.eml" 0.5) || exit 99
run lg approve "$f2"
check "a release refused for good (exit 100 under qmail): approve exits 1" \
    test "$rc" -eq 1
check "... saying the list refused it for good" \
    grep -q "post $f2 (list dev): release command /bin/sh exited with status 100: the list refused it for good; the post stays held, its note saying why" "$T/err"
sed 's/^/# /' "$T/err"
check "... the post is held again, undecided, the refusal its note" test \
    "$(sql "SELECT status || coalesce(decided_by, '-') || ' ' || note FROM held_posts WHERE id = $f2")" = \
    "held- release refused the post for good: release command /bin/sh exited with status 100"
run lg show "$f2"
check "... show says why" grep -q "^Note: *release refused the post for good: release command /bin/sh exited with status 100" "$T/out"
run lg held --list dev
check "... held marks it" grep -q "^$f2 .*RELEASE REFUSED (see show)" "$T/out"
run lg held --list dev --json
check "... and gives its note in JSON" python3 -c "
import json; d = [p for p in json.load(open('$T/out')) if p['id'] == $f2][0]
assert d['note'].startswith('release refused the post for good: ') and d['status'] == 'held'"
# a temporary failure afterwards keeps the note (it was cleared)
printf 'release = /bin/false\n' > "$CONF/lists/dev.conf"
run lg approve "$f2"
check "... a failed release then keeps its note" test \
    "$(sql "SELECT status || ' ' || note FROM held_posts WHERE id = $f2")" = \
    "held release refused the post for good: release command /bin/sh exited with status 100"
# once what refused it is fixed, approve releases it
printf 'release = /bin/sh %s/release.sh {list}\n' "$T" > "$CONF/lists/dev.conf"
rm -f "$T/released.dev"
run lg approve "$f2"
check "... approved once the release takes it" sh -c \
    "test $rc -eq 0 && test \"\$(psql -X -A -t -c 'SELECT status FROM held_posts WHERE id = $f2')\" = approved && cmp -s '$T/released.dev' '$DATA/spam2.eml'"
# under Postfix (mta = postfix) 100 is no permanent code: a temporary
# failure, as before; EX_UNAVAILABLE (69) is
cp "$CONF/listgate.conf" "$T/listgate.conf.saved"
echo "mta = postfix" >> "$CONF/listgate.conf"
printf 'release = /bin/sh -c "cat > /dev/null; exit 100"\n' > "$CONF/lists/dev.conf"
f3=$("$QHOLD" dev "$DATA/spam3.eml" 0.5) || exit 99
run lg approve "$f3"
check "under mta = postfix, a release exiting 100 fails for now, no note" sh -c \
    "test $rc -eq 1 && ! grep -q 'for good' '$T/err' && test -z \"\$(psql -X -A -t -c 'SELECT note FROM held_posts WHERE id = $f3')\""
printf 'release = /bin/sh -c "cat > /dev/null; exit 69"\n' > "$CONF/lists/dev.conf"
run lg approve "$f3"
check "... exiting 69 (EX_UNAVAILABLE) is refused for good" sh -c \
    "test $rc -eq 1 && grep -q 'status 69: the list refused it for good' '$T/err'"
cp "$T/listgate.conf.saved" "$CONF/listgate.conf"
printf 'release = /bin/false\n' > "$CONF/lists/dev.conf"

# (4) its reports and its errors in the order of the posts, also when
# both go to one file (a cron job's mail, 2>&1 | less)
o1=$("$QHOLD" dev "$DATA/spam1.eml" 0.5) || exit 99
o2=$("$QHOLD" dev "$DATA/spam2.eml" 0.5) || exit 99
lg reject "$o1" 999999 "$o2" > "$T/both" 2>&1
check "reports and errors in one file come in the order of the posts" \
    test "$(sed -n 's/.*post \([0-9]*\).*/\1/p' "$T/both" | tr '\n' ' ')" = \
    "$o1 999999 $o2 "

# --- sync_database's errors name it -------------------------------------------------
# a query that failed on the server sync_database names said "database:
# ...", which sent the administrator to the other setting (database):
# the same database (another is refused as no replica of it, below),
# through a role that may read the schema's version but not the journal
sql "CREATE ROLE lg_nojournal LOGIN" || exit 99
sql "GRANT SELECT ON schema_migrations TO lg_nojournal" || exit 99
createdb lg_syncbare || exit 99
cp "$CONF/listgate.conf" "$T/listgate.conf.saved"
echo "sync_database = user=lg_nojournal" >> "$CONF/listgate.conf"
sdb="(the journal is read from sync_database in $CONF/listgate.conf)"
run lg sync
check "sync whose sync_database fails a query exits 1" test "$rc" -eq 1
check "... naming sync_database" grep -qF "$sdb" "$T/err"
run lg sync --list dev
check "sync --list names it too" grep -qF "$sdb" "$T/err"
run lg sync --check --list dev
check "sync --check names it too" grep -qF "$sdb" "$T/err"
run lg rebuild --list dev
check "rebuild names it too" grep -qF "$sdb" "$T/err"
# another database, with listgate's schema, is no replica of database
createdb lg_syncdb || exit 99
PGDATABASE=lg_syncdb lg migrate -q || exit 99
cp "$T/listgate.conf.saved" "$CONF/listgate.conf"
echo "sync_database = dbname=lg_syncdb" >> "$CONF/listgate.conf"
run lg sync --list dev
check "sync whose sync_database is another database exits 1" \
    test "$rc" -eq 1
check "... saying it does not replicate database" grep -qF \
    "sync_database in $CONF/listgate.conf does not replicate database there: it is another database of the primary's cluster" "$T/err"
run lg rebuild --list dev
check "... and so does rebuild" grep -qF "list dev: sync_database in $CONF/listgate.conf does not replicate database there" "$T/err"
cp "$T/listgate.conf.saved" "$CONF/listgate.conf"
echo "sync_database = dbname=lg_syncbare" >> "$CONF/listgate.conf"
run lg sync
check "sync whose sync_database has no schema exits 1" test "$rc" -eq 1
check "... naming sync_database" \
    grep -qF "(sync_database in $CONF/listgate.conf)" "$T/err"
cp "$T/listgate.conf.saved" "$CONF/listgate.conf"

# --- the database down ---------------------------------------------------------------
$PG_CTL_STOP
run lg held
check "held with the server down exits 1" test "$rc" -eq 1
check "... saying it cannot connect" grep -q "cannot connect" "$T/err"
$PG_CTL_START
run lg held
check "held after restart exits 0" test "$rc" -eq 0

echo "1..$n"
[ "$fails" -eq 0 ]

#!/bin/sh
# queue_roles.sh - the PostgreSQL roles of migration 0003: a login role in
# listgate_filter holds posts (and answers a retried delivery with the
# same row) but can neither list, show nor decide them, nor read the
# journal; a login role in listgate_moderator lists, shows, decides and
# syncs but cannot hold; listgate_admin owns the tables and migrates.
# The migration runs as a role with CREATEROLE that owns its database,
# not only as a superuser.
#
# Runs under tests/pg.sh (a private cluster, trust authentication: each
# command picks its role with PGUSER).  Works in a mktemp -d directory
# removed at the end; never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
QHOLD=$top_builddir/tests/qhold
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-roles.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
mkdir -p "$CONF/lists" || exit 99
printf 'tokens_dir = %s/tokens\n' "$T" > "$CONF/listgate.conf"
# every post is held (ham_cutoff 0); release reads the post and keeps it
printf 'ham_cutoff = 0\nspam_cutoff = 0\nrelease = /bin/sh -c "cat > %s/released"\n' \
    "$T" > "$CONF/lists/dev.conf"

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
run() { "$@" > "$T/out" 2> "$T/err"; rc=$?; }
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
# as ROLE SQL: one statement as a login role; status and error kept
as() { PGUSER=$1 psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$2" > "$T/out" 2> "$T/err"; rc=$?; }
denied() {
	test "$rc" -ne 0 && grep -q "permission denied" "$T/err" ||
	    { echo "# status $rc, stderr: $(cat "$T/err")"; return 1; }
}

# --- migrate as a role with CREATEROLE that owns its database ---------------
sql "CREATE ROLE dba LOGIN CREATEROLE" || exit 99
createdb -O dba lg_dba || exit 99

# --- two migrates at once, of two databases of one cluster -------------------
# The roles belong to the cluster, the migrate lock to one database: a
# migrate of another database (another site's, run by the same
# playbook) creates them in the same moment.  Here its transaction is
# held open at that point, so that the race is met each time.
createdb -O dba lg_race || exit 99
PGUSER=dba psql -X -q -v ON_ERROR_STOP=1 -c "BEGIN;
    CREATE ROLE listgate_filter NOLOGIN; SELECT pg_sleep(2); COMMIT;" \
    > /dev/null 2>&1 &
racer=$!
sleep 0.5
PGDATABASE=lg_race PGUSER=dba run lg migrate
wait $racer
[ "$rc" -eq 0 ] || sed 's/^/# /' "$T/err"
check "migrate while another database's migrate creates the roles" \
    test "$rc" -eq 0
check "... and 0003_roles applied there" grep -q "applied 0003_roles" "$T/out"
PGDATABASE=lg_dba PGUSER=dba run lg migrate
check "migrate 0001-0003 as a CREATEROLE database owner (not a superuser)" \
    test "$rc" -eq 0
check "... applied 0003_roles" grep -q "applied 0003_roles" "$T/out"
for r in listgate_filter listgate_moderator listgate_admin; do
	check "role $r exists and cannot log in" \
	    test "$(sql "SELECT rolcanlogin FROM pg_roles WHERE rolname = '$r'")" = f
done
check "listgate_admin owns every table" test "$(PGDATABASE=lg_dba sql \
    "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'
        AND tableowner <> 'listgate_admin'")" -eq 0
check "... of the tables of 0001 and 0002 at least" test "$(PGDATABASE=lg_dba sql \
    "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'
        AND tableowner = 'listgate_admin' AND tablename IN
        ('held_posts', 'schema_migrations', 'train_journal')")" -eq 3
check "... listgate_moderator may update a held post's decision only (0012)" \
    test "$(PGDATABASE=lg_dba sql "SELECT
        has_table_privilege('listgate_moderator', 'held_posts', 'UPDATE')::int::text ||
        has_column_privilege('listgate_moderator', 'held_posts', 'raw_z', 'UPDATE')::int::text ||
        has_column_privilege('listgate_moderator', 'held_posts', 'status', 'UPDATE')::int::text")" = 001
check "... and the sequences" test "$(PGDATABASE=lg_dba sql \
    "SELECT count(*) FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner
      WHERE c.relkind = 'S' AND r.rolname <> 'listgate_admin'
        AND c.relnamespace = 'public'::regnamespace")" -eq 0

# --- the test database: the roles exist already ------------------------------
run lg migrate
check "migrate where the roles exist (superuser)" test "$rc" -eq 0
sql "CREATE ROLE pipe LOGIN; GRANT listgate_filter TO pipe;
     CREATE ROLE alice LOGIN; GRANT listgate_moderator TO alice;
     CREATE ROLE adm LOGIN; GRANT listgate_admin TO adm;
     CREATE ROLE nobody_else LOGIN" || exit 99
"$QHOLD" -j dev spam "$DATA/spam1.eml" >/dev/null || exit 99
"$QHOLD" -j dev ham "$DATA/ham1.eml" >/dev/null || exit 99
PGUSER=adm run lg sync --list dev
check "sync as listgate_admin" test "$rc" -eq 0

# --- the filter's role --------------------------------------------------------
PGUSER=pipe lg filter --list dev < "$DATA/spam2.eml" > "$T/out" 2> "$T/err"
check "listgate_filter: filter holds a post (99)" test $? -eq 99
id=$(sql "SELECT max(id) FROM held_posts")
PGUSER=pipe lg filter --list dev < "$DATA/spam2.eml" > "$T/out" 2> "$T/err"
check "... a retried delivery (same bytes) is held again (99)" test $? -eq 99
check "... as the same one row" test "$(sql "SELECT count(*) FROM held_posts")" -eq 1
PGUSER=pipe run lg held
check "listgate_filter: held fails, permission denied" denied
PGUSER=pipe run lg show "$id"
check "listgate_filter: show fails, permission denied" denied
PGUSER=pipe run lg approve "$id"
check "listgate_filter: approve fails, permission denied" denied
check "... the post stays held, nothing released" sh -c \
    "test \"\$(psql -X -A -t -c 'SELECT status FROM held_posts')\" = held &&
    test ! -e '$T/released'"
PGUSER=pipe run lg sync --list dev
check "listgate_filter: sync (reading the journal) fails" denied
as pipe "SELECT raw_z FROM held_posts"
check "listgate_filter: reading a held post's bytes fails" denied
as pipe "SELECT subject, env_sender FROM held_posts"
check "listgate_filter: reading its subject and sender fails" denied
as pipe "UPDATE held_posts SET status = 'approved', decided_at = now()"
check "listgate_filter: changing a row fails" denied
as pipe "DELETE FROM held_posts"
check "listgate_filter: deleting fails" denied
as pipe "INSERT INTO train_journal (list, class, op, source, size, message_z)
         VALUES ('dev', 'ham', 'learn', 'x', 0, '')"
check "listgate_filter: journaling fails" denied
PGUSER=pipe run lg migrate --status
check "listgate_filter: migrate --status runs the schema check" \
    grep -q "schema version \([0-9]*\), this listgate knows \1\b" "$T/out"
PGUSER=pipe run lg migrate
check "listgate_filter: migrate on an up-to-date schema exits 0" test "$rc" -eq 0
check "... applying nothing" grep -q "(0 migrations applied)" "$T/out"
# a post past discard_cutoff, delivered twice (migration 0010)
cp "$CONF/lists/dev.conf" "$T/dev.conf.orig"
printf 'discard_cutoff = 0\n' >> "$CONF/lists/dev.conf"
PGUSER=pipe lg filter --list dev < "$DATA/spam1.eml" > "$T/out" 2> "$T/err"
check "listgate_filter: filter discards a post (99)" test $? -eq 99
PGUSER=pipe lg filter --list dev < "$DATA/spam1.eml" > "$T/out" 2> "$T/err"
check "... and the same bytes again (99)" test $? -eq 99
check "... stored once" test "$(sql "SELECT count(*) FROM held_posts
    WHERE status = 'discarded'")" -eq 1
sql "DELETE FROM held_posts WHERE status = 'discarded'" || exit 99
cp "$T/dev.conf.orig" "$CONF/lists/dev.conf"

# --- a login role in none of them ------------------------------------------
PGUSER=nobody_else lg filter --list dev < "$DATA/spam3.eml" > "$T/out" 2> "$T/err"
check "a role in no listgate role: filter defers (111)" test $? -eq 111
check "... permission denied" grep -q "permission denied" "$T/err"
check "... naming the roles to grant" grep -q \
    "permission denied.*in none of listgate_filter.*listgate_moderator.*listgate_admin" \
    "$T/err"
for c in held "migrate --status"; do
	PGUSER=nobody_else run lg $c
	check "a role in no listgate role: $c fails (rc $rc)" test "$rc" -eq 1
	check "... naming the roles to grant" grep -q \
	    "permission denied.*in none of listgate_filter.*listgate_moderator.*listgate_admin" \
	    "$T/err"
done

# --- a moderator ----------------------------------------------------------------
PGUSER=alice run lg held --list dev
check "listgate_moderator: held lists the post" grep -q "^ *$id " "$T/out"
PGUSER=alice run lg show "$id"
check "listgate_moderator: show works" test "$rc" -eq 0
nj=$(sql "SELECT count(*) FROM train_journal")
PGUSER=alice run lg approve "$id"
check "listgate_moderator: approve works" test "$rc" -eq 0
check "... the post was released" cmp -s "$T/released" "$DATA/spam2.eml"
check "... recorded approved" test "$(sql "SELECT status FROM held_posts WHERE id = $id")" = approved
check "... and journaled" test "$(sql "SELECT count(*) FROM train_journal")" -eq $((nj + 1))
id2=$("$QHOLD" dev "$DATA/spam3.eml") || exit 99
PGUSER=alice run lg reject "$id2"
check "listgate_moderator: reject works" test "$rc" -eq 0
# expire (migration 0006's reminded_at too) and stats
printf 'hold_expiry_days = 1\nexpire_action = discard-learn\n' > "$CONF/lists/ex.conf"
id3=$("$QHOLD" ex "$DATA/spam4.eml") || exit 99
sql "UPDATE held_posts SET arrived_at = now() - interval '2 days' WHERE id = $id3"
PGUSER=alice run lg expire
check "listgate_moderator: expire works (discard-learn)" \
    sh -c "test $rc -eq 0 && test \"\$(psql -X -A -t -c \"SELECT status FROM held_posts WHERE id = $id3\")\" = expired"
as alice "UPDATE held_posts SET reminded_at = now() WHERE id = $id"
check "listgate_moderator: may record a reminder (0006)" test "$rc" -eq 0
PGUSER=alice run lg stats --json
check "listgate_moderator: stats works" \
    sh -c "test $rc -eq 0 && grep -q '\"list\":\"ex\"' '$T/out'"
PGUSER=pipe run lg stats --json
check "listgate_filter: stats fails, permission denied" denied
PGUSER=alice lg filter --list dev < "$DATA/spam4.eml" > "$T/out" 2> "$T/err"
check "listgate_moderator: filter cannot hold (111)" test $? -eq 111
check "... permission denied" grep -q "permission denied" "$T/err"
# the site store (migration 0008): a moderator feeds and syncs it; the
# filter's role can do neither
printf 'site_list = site\n' >> "$CONF/listgate.conf"
PGUSER=alice run lg sync --site
check "listgate_moderator: sync --site feeds and applies the site store" \
    sh -c "test $rc -eq 0 && grep -q 'events newly fed' '$T/out'"
check "... every journal event fed once" test "$(sql "SELECT count(*) FROM \
    site_feed")" -eq "$(sql "SELECT count(*) FROM train_journal")"
PGUSER=pipe run lg sync --site
check "listgate_filter: sync --site fails" denied
sed -i '/^site_list/d' "$CONF/listgate.conf"
as alice "DELETE FROM held_posts"
check "listgate_moderator: deleting fails" denied
# moderate counts its answers to replies that decided nothing (0013)
as alice "INSERT INTO moderation_answers (address, list) VALUES ('a@example.org', 'dev');
    DELETE FROM moderation_answers WHERE sent_at < now() - interval '1 hour';
    SELECT count(*) FROM moderation_answers"
check "listgate_moderator: may count moderate's answers" test "$rc" -eq 0
as pipe "SELECT count(*) FROM moderation_answers"
check "listgate_filter: reading them fails" denied
# a moderator decides a held post; what the filter stored stays as it
# was (migration 0012): rewritten bytes would be released and journaled
# as the sender's, a post moved to another list released there unseen
id4=$("$QHOLD" dev "$DATA/spam4.eml") || exit 99
as alice "UPDATE held_posts SET raw_z = raw_z, size = size WHERE id = $id4"
check "listgate_moderator: rewriting a held post's bytes fails" denied
as alice "UPDATE held_posts SET list = 'ex' WHERE id = $id4"
check "listgate_moderator: moving a held post to another list fails" denied
as alice "UPDATE held_posts SET env_sender = 'boss@example.org', from_hdr = '',
          subject = '', score = 0, raw_sha256 = raw_sha256 WHERE id = $id4"
check "listgate_moderator: changing its sender, score or SHA-256 fails" denied
check "... the post is as the filter stored it" test "$(sql "SELECT list ||
    ' ' || status FROM held_posts WHERE id = $id4")" = "dev held"
PGUSER=alice run lg discard "$id4"
check "listgate_moderator: deciding it still works (discard)" test "$rc" -eq 0
as alice "ALTER TABLE held_posts ADD COLUMN x int"
check "listgate_moderator: altering a table fails" grep -q "must be owner" "$T/err"

# --- migrate as a role that may not ------------------------------------------
# a migration pending: the filter's and a moderator's role are told
# which role migrates, not only "permission denied for table
# schema_migrations"; on a new database a role in no listgate role is
# told so too, not only "permission denied for schema public"
sql "DELETE FROM schema_migrations WHERE version =
    (SELECT max(version) FROM schema_migrations)" || exit 99
for r in alice pipe; do
	PGUSER=$r run lg migrate
	check "$r: migrate with a migration pending fails (rc $rc)" \
	    test "$rc" -eq 1
	check "... saying it runs as a member of listgate_admin" grep -q \
	    "permission denied.*migrate runs as a member of listgate_admin" \
	    "$T/err"
done
createdb lg_empty || exit 99
PGDATABASE=lg_empty PGUSER=nobody_else run lg migrate
check "a role in no listgate role: migrate of a new database fails (rc $rc)" \
    test "$rc" -eq 1
check "... saying who may migrate" grep -q \
    "permission denied for schema.*migrate runs as a member of listgate_admin.*superuser or a role with CREATEROLE" \
    "$T/err"

# --- the administrator ----------------------------------------------------------
PGUSER=adm run lg migrate
check "listgate_admin: migrate exits 0" test "$rc" -eq 0
check "... applying the migration left pending" grep -q "(1 migration applied)" \
    "$T/out"
as adm "ALTER TABLE held_posts ADD COLUMN lg_test_x int"
check "listgate_admin: owns the tables (ALTER works)" test "$rc" -eq 0
as adm "CREATE TABLE lg_test_later (id int)"
check "listgate_admin: may create tables (later migrations)" test "$rc" -eq 0

echo "1..$n"
[ $fails -eq 0 ]

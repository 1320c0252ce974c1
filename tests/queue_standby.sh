#!/bin/sh
# queue_standby.sh - many list hosts on one PostgreSQL, with PostgreSQL's
# own streaming replication: a primary and a hot standby made with
# pg_basebackup (tests/pg.sh standby-create), and two list hosts, each a
# configuration directory with its own tokens directory
#
#   host A   database = the primary: filters, moderates, trains, syncs
#   host B   database = the primary (its filter holds posts there),
#            sync_database = the standby only: sync and rebuild read the
#            journal from the replica
#
# Checks that posts are filtered on both hosts and moderated and trained
# on A; that B's journal reads go to the standby (it is read-only, and
# B syncs with the primary stopped); that both token files end
# identical, record for record and position, and equal to a rebuild;
# that a standby whose replay is paused makes B's sync apply only what
# it has and catch up later, each event once; that a token file ahead
# of the standby is refused with a message saying the standby is
# behind, and left alone; that a standby that is down makes B's
# sync fail naming the problem, with the token file untouched; and that
# B's sync --site feeds the site store through the primary and reads
# the feed from the standby, ending equal to A's; that a site store
# ahead of the standby is refused as the standby being behind; and that
# after a failover to a standby that lost the last commits, where the
# promoted standby's journal ids come round again, host A's sync
# refuses its token file (built from the lost events) and names
# `listgate rebuild`, instead of skipping the new events that took the
# ids it has; and that its site store, which learnt the lost events
# through feed numbers the promoted standby hands out again as journal
# ids, is refused as built from another database and named for a
# rebuild, not as a site store built from its own journal; and that a
# sync that cannot check the position (lock_timeout) refuses too.  And
# that a host syncing from a standby whose database lost the event at
# its token file's position, though its journal goes on past it, is
# refused, not applied past it.
# Unix sockets in the cluster's directory only; never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-standby.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
primary="host=$PGHOST port=$PGPORT dbname=$PGDATABASE"
standby="host=$PGHOST port=$PG_STANDBY_PORT dbname=$PGDATABASE"
for h in A B C; do
	mkdir -p "$T/$h/lists" || exit 99
	printf 'tokens_dir = %s/tokens-%s\ndatabase = %s\n' "$T" "$h" \
	    "$primary" > "$T/$h/listgate.conf"
	cat > "$T/$h/lists/dev.conf" <<EOF
release = /bin/sh -c "cat >> $T/released"
deliver = /bin/true
EOF
done
# B and C read the journal from the standby only
for h in B C; do
	printf 'sync_database = %s\n' "$standby" >> "$T/$h/listgate.conf"
done

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), pg_part, lock_file
lgA() { "$LISTGATE" --allow-root --config "$T/A" "$@"; }
lgB() { "$LISTGATE" --allow-root --config "$T/B" "$@"; }
lgC() { "$LISTGATE" --allow-root --config "$T/C" "$@"; }
run() { "$@" > "$T/out" 2> "$T/err"; rc=$?; }
sqlp() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
sqls() { psql -X -q -A -t -v ON_ERROR_STOP=1 -p "$PG_STANDBY_PORT" -c "$1"; }
# a host's token file: every record, then its counts and position
dump() {
	{
		"$LISTGATE" --allow-root --config "$T/$1" score --list dev --db-dump |
		    LC_ALL=C sort
		"$LISTGATE" --allow-root --config "$T/$1" score --list dev --db-stats
	}
}
pos() {
	"$LISTGATE" --allow-root --config "$T/$1" score --list dev --db-stats |
	    sed -n 's/^journal_pos //p'
}
# catchup, pause_replay: tests/lib.sh (the caller checks the pause's
# state when it matters)
# "list dev: N journal events applied, ..." -> N
applied() { sed -n 's/^list dev: \([0-9]*\) journal event.* applied.*/\1/p' "$T/out"; }

start=$(date +%s)
sh "$PG_SH" standby-create || exit 99
check "the standby is a hot standby in recovery" \
    test "$(sqls 'SELECT pg_is_in_recovery()')" = t
check "... and read-only" sh -c "psql -X -q -p $PG_STANDBY_PORT \
    -c 'CREATE TABLE t (x int)' 2>&1 | grep -q 'read-only transaction'"

# --- A trains; B syncs from the standby ------------------------------------------
lgA migrate -q || exit 99
run lgA train --list dev --spam "$DATA"/spam[0-9].eml
check "host A trains spam through the journal" test "$rc" -eq 0
run lgA train --list dev --ham "$DATA"/ham[0-9].eml
check "host A trains ham" test "$rc" -eq 0
catchup || exit 99
run lgB sync --list dev
check "host B syncs from the standby" test "$rc" -eq 0
check "... building its token file from all 8 events" test "$(pos B)" = "$(pos A)"
dump A > "$T/dA"
dump B > "$T/dB"
check "... identical to host A's" cmp -s "$T/dA" "$T/dB"

# --- both hosts filter (holding on the primary); A moderates ----------------------
run lgB filter --list dev --mta qmail < "$DATA/spam-test.eml"
check "host B holds a spam post (exit 99)" test "$rc" -eq 99
idB=$(sqlp "SELECT max(id) FROM held_posts")
run lgA filter --list dev --mta qmail < "$DATA/spam2.eml"
check "host A holds a spam post (exit 99)" test "$rc" -eq 99
idA=$(sqlp "SELECT max(id) FROM held_posts")
run lgB filter --list dev --mta qmail < "$DATA/ham-test.eml"
check "host B passes a ham post (exit 0)" test "$rc" -eq 0
run lgA filter --list dev --mta qmail < "$DATA/ham-test.eml"
check "host A passes a ham post (exit 0)" test "$rc" -eq 0
check "both held posts are on the primary" test "$idA" -gt "$idB" -a \
    "$(sqlp "SELECT count(*) FROM held_posts WHERE status = 'held'")" -eq 2
run lgA approve "$idB"
check "host A approves host B's post" test "$rc" -eq 0
check "... released" cmp -s "$T/released" "$DATA/spam-test.eml"
run lgA reject "$idA"
check "host A rejects its own" test "$rc" -eq 0
lgA sync -q --list dev || exit 99
catchup || exit 99
run lgB sync --list dev
check "host B syncs the two decisions from the standby" \
    test "$rc" -eq 0 -a "$(applied)" = 2
dump A > "$T/dA"
dump B > "$T/dB"
check "... and matches host A" cmp -s "$T/dA" "$T/dB"

# --- B reads only the standby: it syncs with the primary stopped -------------------
lgA train -q --list dev --ham "$DATA/ham-test.eml" || exit 99
catchup || exit 99
$PG_CTL_STOP
run lgB sync --list dev
check "with the primary stopped, host B still syncs from the standby" \
    test "$rc" -eq 0 -a "$(applied)" = 1
run lgB filter --list dev --mta qmail < "$DATA/spam3.eml"
check "... while its filter, which holds on the primary, defers (111)" \
    test "$rc" -eq 111
$PG_CTL_START
dump A > "$T/dA"
dump B > "$T/dB"
check "host B = host A after the primary restarts" cmp -s "$T/dA" "$T/dB"

# --- a standby that is behind ------------------------------------------------------
pause_replay || exit 99
check "replay on the standby is paused" \
    test "$(sqls 'SELECT pg_get_wal_replay_pause_state()')" = paused
posB=$(pos B)
lgA train -q --list dev --spam "$DATA/spam3.eml" "$DATA/spam4.eml" || exit 99
run lgA filter --list dev --mta qmail < "$DATA/spam3.eml"
id3=$(sqlp "SELECT max(id) FROM held_posts")
check "host A holds another post" test "$rc" -eq 99
run lgA reject "$id3"
check "... and rejects it" test "$rc" -eq 0
lgA sync -q --list dev || exit 99
check "host A is ahead (3 events more)" test "$(sqlp \
    "SELECT count(*) FROM train_journal WHERE list = 'dev' AND id > $posB")" -eq 3
run lgB sync --list dev
check "host B's sync from the paused standby exits 0" test "$rc" -eq 0
check "... and applies nothing it has not got" \
    test "$(applied)" = 0 -a "$(pos B)" = "$posB"
# a token file further on than the standby: host C has host A's file
mkdir -p "$T/tokens-C" && cp "$T/tokens-A/dev.kch" "$T/tokens-C/dev.kch"
cp "$T/tokens-C/dev.kch" "$T/c.before"
run lgC sync --list dev
check "a token file ahead of the standby: sync exits 1" test "$rc" -eq 1
check "... saying the standby is behind" grep -q "standby is behind" "$T/err"
check "... and leaves the file alone" cmp -s "$T/tokens-C/dev.kch" "$T/c.before"
run lgC sync --check --list dev
check "sync --check of that file exits 1" test "$rc" -eq 1
check "... saying the standby is behind, not to rebuild" sh -c \
    "grep -q 'standby is behind' '$T/err' &&
     ! grep -q 'another (or a restored) database' '$T/err'"
sqls "SELECT pg_wal_replay_resume()" > /dev/null || exit 99
catchup || exit 99
run lgB sync --list dev
check "replay resumed: host B catches up with the 3 events" \
    test "$rc" -eq 0 -a "$(applied)" = 3
run lgB sync --list dev
check "... a second sync applies none" test "$rc" -eq 0 -a "$(applied)" = 0
run lgC sync --list dev
check "... host C's file is in step again, nothing applied twice" \
    test "$rc" -eq 0 -a "$(applied)" = 0
dump A > "$T/dA"
dump B > "$T/dB"
dump C > "$T/dC"
check "host B = host A, record for record and position" cmp -s "$T/dA" "$T/dB"
check "host C = host A" cmp -s "$T/dA" "$T/dC"
run lgB rebuild --list dev
check "rebuild on host B from the standby exits 0" test "$rc" -eq 0
dump B > "$T/dR"
check "... and equals the synced files" cmp -s "$T/dA" "$T/dR"

# --- a standby that is down ----------------------------------------------------------------
sh "$PG_SH" standby-stop || exit 99
lgA train -q --list dev --ham "$DATA/ham1.eml" || exit 99
cp "$T/tokens-B/dev.kch" "$T/b.before"
run lgB sync --list dev
check "standby down: host B's sync exits 1" test "$rc" -eq 1
check "... saying it cannot connect, and through which setting" \
    sh -c "grep -q 'cannot connect to the database' '$T/err' &&
        grep -q 'sync_database in .*/B/listgate.conf' '$T/err'"
check "... the token file untouched" cmp -s "$T/tokens-B/dev.kch" "$T/b.before"
run lgB rebuild --list dev
check "... rebuild fails the same way (exit 1)" test "$rc" -eq 1
check "... leaving the token file, and no temporary file" sh -c \
    "cmp -s '$T/tokens-B/dev.kch' '$T/b.before' &&
     test -z \"\$(find '$T/tokens-B' -name '.*' -print)\""
sh "$PG_SH" standby-start || exit 99
catchup || exit 99
run lgB sync --list dev
check "the standby back: host B applies the one event it missed" \
    test "$rc" -eq 0 -a "$(applied)" = 1
dump A > "$T/dA"
dump B > "$T/dB"
check "... and equals host A" cmp -s "$T/dA" "$T/dB"

# --- the site store on host B: fed through the primary, read from the
# standby (which cannot be written) --------------------------------------
for h in A B; do
	printf 'site_list = site\n' >> "$T/$h/listgate.conf"
done
sdump() {
	"$LISTGATE" --allow-root --config "$T/$1" score --list site --db-dump | LC_ALL=C sort
	"$LISTGATE" --allow-root --config "$T/$1" score --list site --db-stats
}
nj=$(sqlp "SELECT count(*) FROM train_journal")
run lgB sync --site
check "host B's sync --site exits 0" test "$rc" -eq 0
check "... feeding every journal event through the primary" \
    grep -q "^site store site: $nj events fed through the primary" "$T/out"
check "... the feed is on the primary" \
    test "$(sqlp 'SELECT count(*) FROM site_feed')" = "$nj"
catchup || exit 99
run lgB sync --site
check "... a second sync --site once the standby has it exits 0" \
    test "$rc" -eq 0
run lgA sync --site
check "host A's sync --site (one database) exits 0" test "$rc" -eq 0
sdump A > "$T/sA"
sdump B > "$T/sB"
check "host B's site store = host A's, record for record and position" \
    cmp -s "$T/sA" "$T/sB"
check "... holding all $nj events" \
    test "$(awk '$1 ~ /_posts$/ { n += $2 } END { print n }' "$T/sB")" = "$nj"

# the primary down: host B cannot feed, but applies what the standby
# has been fed (and says what failed)
lgA train -q --list dev --spam "$DATA/spam2.eml" || exit 99
lgA sync -q --site || exit 99
catchup || exit 99
$PG_CTL_STOP
run lgB sync --site
check "the primary down: host B's sync --site exits 1" test "$rc" -eq 1
check "... saying it cannot feed through the primary" \
    grep -q "cannot feed it through the primary" "$T/err"
check "... but applies the event the standby has been fed" \
    grep -q "^list site (the site store): 0 events newly fed, 1 applied" \
    "$T/out"
$PG_CTL_START
sdump A > "$T/sA"
sdump B > "$T/sB"
check "... ending equal to host A's" cmp -s "$T/sA" "$T/sB"
# and rebuilding it then (its file gone): built from what the standby
# has been fed, still exit 1 for the feed
rm -f "$T/tokens-B/site.kch"
$PG_CTL_STOP
run lgB rebuild --list site
check "the primary down: host B's rebuild of the site store exits 1" \
    test "$rc" -eq 1
check "... saying it cannot feed through the primary" \
    grep -q "cannot feed it through the primary" "$T/err"
check "... but rebuilds it from the standby's feed" \
    grep -q "^list site: rebuilt .* from $((nj + 1)) journal events" "$T/out"
$PG_CTL_START
sdump B > "$T/sB"
check "... equal to host A's" cmp -s "$T/sA" "$T/sB"

# a site store further on than the standby (host C has host A's file):
# refused as for a list, saying the standby is behind, not that the file
# was built from a list's own journal
printf 'site_list = site\n' >> "$T/C/listgate.conf"
pause_replay || exit 99
lgA train -q --list dev --ham "$DATA/ham1.eml" || exit 99
lgA sync -q --site || exit 99
cp "$T/tokens-A/site.kch" "$T/tokens-C/site.kch"
cp "$T/tokens-C/site.kch" "$T/c.before"
run lgC sync --site
check "a site store ahead of the standby: sync --site exits 1" test "$rc" -eq 1
check "... saying the standby is behind" grep -q "standby is behind" "$T/err"
check "... not that it was built from its own journal" \
    sh -c "! grep -q 'built from its own journal' '$T/err'"
check "... and leaves the file alone" cmp -s "$T/tokens-C/site.kch" "$T/c.before"
run lgC sync --check --site
check "sync --check of that site store exits 1, the standby behind" \
    sh -c "test $rc -eq 1 && grep -q 'standby is behind' '$T/err'"
sqls "SELECT pg_wal_replay_resume()" > /dev/null || exit 99
catchup || exit 99
run lgC sync --site
check "replay resumed: host C's site store syncs, nothing applied twice" \
    sh -c "test $rc -eq 0 && grep -q '0 events newly fed, 0 applied' '$T/out'"

# --- a standby of a database that lost the token file's position --------
# Host D syncs database r2 from the standby.  r2 is restored from a dump
# taken before D's last 4 events, with its id sequence further on (as a
# failover that loses fewer than 32 ids leaves it): the event at D's
# position is missing for good, and the new events are past it.  The
# standby cannot tell that from a commit it has not replayed yet, but
# going on would hide it from every later sync.
mkdir -p "$T/D/lists" || exit 99
cp "$T/A/lists/dev.conf" "$T/D/lists/" || exit 99
printf 'tokens_dir = %s/tokens-D\ndatabase = %s\nsync_database = %s\n' \
    "$T" "host=$PGHOST port=$PGPORT dbname=r2" \
    "host=$PGHOST port=$PG_STANDBY_PORT dbname=r2" > "$T/D/listgate.conf"
lgD() { "$LISTGATE" --allow-root --config "$T/D" "$@"; }
"$PG_BIN/createdb" r2 || exit 99
lgD migrate -q || exit 99
lgD train -q --list dev --spam "$DATA"/spam[0-9].eml || exit 99
"$PG_BIN/pg_dump" -Fc -f "$T/r2.dump" r2 || exit 99
lgD train -q --list dev --ham "$DATA"/ham[0-9].eml || exit 99
catchup || exit 99
lgD sync -q --list dev || exit 99
"$PG_BIN/dropdb" r2 && "$PG_BIN/createdb" r2 &&
    "$PG_BIN/pg_restore" -d r2 "$T/r2.dump" &&
    psql -X -q -d r2 -c "SELECT setval('train_journal_id_seq', 30)" \
    > /dev/null || exit 99
lgD train -q --list dev --ham "$DATA/ham1.eml" "$DATA/ham2.eml" 2> /dev/null
catchup || exit 99
check "r2 on the standby lacks host D's position 8 but goes on to 32" test \
    "$(psql -X -A -t -p "$PG_STANDBY_PORT" -d r2 -c "SELECT count(*) FILTER
        (WHERE id = 8) || ' ' || max(id) FROM train_journal")" = "0 32"
cp "$T/tokens-D/dev.kch" "$T/d.before"
run lgD sync --list dev
check "host D's sync from that standby exits 1" test "$rc" -eq 1
check "... saying the standby lacks the event, and to rebuild if it was lost" \
    grep -q "position 8 is an event written at .*on this standby does not have although it goes on to 32.*listgate --config [^ ]* rebuild --list dev" "$T/err"
check "... and leaves the file alone" cmp -s "$T/tokens-D/dev.kch" "$T/d.before"
run lgD sync --check --list dev
check "sync --check says so too (exit 1)" sh -c \
    "test $rc -eq 1 && grep -q 'on this standby does not have' '$T/err'"

# --- a failover to a standby that lost the last commits ------------------
# The standby stops; the primary takes 40 events (more than the 32 ids a
# sequence logs ahead, so the standby never hears of the last ids handed
# out) and host A learns them; the primary dies and the standby is
# promoted.  Its journal ends before those 40, and the ids it hands out
# next are some of the same.
catchup || exit 99
sh "$PG_SH" standby-stop || exit 99
mkdir "$T/lost" "$T/new" || exit 99
for i in $(seq 40); do
	{ printf 'X-Lost: %s\n' "$i"; cat "$DATA/ham1.eml"; } > "$T/lost/$i.eml"
done
for i in $(seq 50); do
	{ printf 'X-New: %s\n' "$i"; cat "$DATA/spam1.eml"; } > "$T/new/$i.eml"
done
lgA train -q --list dev --ham "$T"/lost/*.eml || exit 99
lgA sync -q --list dev || exit 99
lgA sync -q --site || exit 99	# its site store learns them too
posA=$(pos A)
siteA=$(lgA score --list site --db-stats | sed -n 's/^journal_pos //p')
check "host A learnt the 40 events on the primary" test "$posA" = \
    "$(sqlp "SELECT max(id) FROM train_journal WHERE list = 'dev'")"
$PG_CTL_STOP
{ sh "$PG_SH" standby-start && sh "$PG_SH" standby-promote; } || exit 99
check "the standby is promoted" test "$(sqls 'SELECT pg_is_in_recovery()')" = f
check "... and lost the 40 events" test "$(sqls \
    "SELECT count(*) FROM train_journal WHERE list = 'dev' AND id > $posA - 40")" -eq 0
sed "s/port=$PGPORT /port=$PG_STANDBY_PORT /" "$T/A/listgate.conf" > "$T/A.conf" &&
    mv "$T/A.conf" "$T/A/listgate.conf" || exit 99
run lgA train -q --list dev --spam "$T"/new/*.eml
check "host A trains 50 new events on the promoted standby" \
    test "$(sqls "SELECT count(*) FROM train_journal WHERE list = 'dev' AND
        id > $posA - 40")" -eq 50
check "... whose ids reach host A's position again" test "$(sqls \
    "SELECT count(*) FROM train_journal WHERE list = 'dev' AND id = $posA")" -eq 1
cp "$T/tokens-A/dev.kch" "$T/a.before"
run lgA sync --list dev
check "host A's sync exits 1" test "$rc" -eq 1
check "... saying the file has events the database does not, and to rebuild" \
    grep -q "journal position $posA is an event written at .*this database does not have.*listgate --config [^ ]* rebuild --list dev" "$T/err"
check "... and leaves the file alone" cmp -s "$T/tokens-A/dev.kch" "$T/a.before"
run lgA sync --check --list dev
check "sync --check says so too (exit 1)" \
    sh -c "test $rc -eq 1 && grep -q 'this database does not have' '$T/err'"
# a check that cannot be made refuses too: its statement waits past
# lock_timeout behind an administrator's VACUUM FULL of the journal
# (going on would apply past the position, record the next event's
# mark, and hide the failover from every later sync).  The lock is held
# for 3 s: the check's statement gives up after 2, the next one gets in
cp "$T/A/listgate.conf" "$T/A.conf.save" || exit 99
sed "s/^database = .*/& options='-c lock_timeout=2000'/" "$T/A.conf.save" \
    > "$T/A/listgate.conf" || exit 99
psql -X -q -p "$PG_STANDBY_PORT" -c "BEGIN" \
    -c "LOCK TABLE train_journal IN ACCESS EXCLUSIVE MODE" \
    -c "SELECT pg_sleep(3)" -c "COMMIT" > /dev/null &
locker=$!
i=0
while [ "$(sqls "SELECT count(*) FROM pg_locks WHERE granted AND
    relation = 'train_journal'::regclass AND
    mode = 'AccessExclusiveLock'")" != 1 ] && [ $i -lt 200 ]; do
	sleep 0.05
	i=$((i + 1))
done
run lgA sync --list dev
wait "$locker"
cp "$T/A.conf.save" "$T/A/listgate.conf" || exit 99
check "a sync whose check of the position times out exits 1" \
    test "$rc" -eq 1
check "... saying it cannot check the position" grep -q \
    "cannot check that the token file's journal position $posA .*lock timeout.*nothing applied" \
    "$T/err"
check "... and leaves the file alone" cmp -s "$T/tokens-A/dev.kch" "$T/a.before"
run lgA rebuild --list dev
check "rebuild from the promoted standby exits 0" test "$rc" -eq 0
run lgA sync --list dev
check "... and sync is content again, applying nothing" \
    test "$rc" -eq 0 -a "$(applied)" = 0
check "... the file holding the promoted journal's posts" test "$(lgA score \
    --list dev --db-stats | awk '$1 ~ /_posts$/ { n += $2 } END { print n }')" = \
    "$(sqls "SELECT count(*) FROM train_journal WHERE list = 'dev'")"

# host A's site store learnt the lost events through feed numbers that
# the promoted standby hands out again as journal ids: that is not a
# site store built from its own journal (the other kind), but one built
# from events this database does not have
for i in $(seq 51 100); do
	{ printf 'X-New: %s\n' "$i"; cat "$DATA/spam1.eml"; } > "$T/new/$i.eml"
done
lgA train -q --list dev --spam "$T"/new/5[1-9].eml "$T"/new/[6-9]?.eml \
    "$T/new/100.eml" || exit 99
check "host A's site store position is a journal id on the promoted standby" \
    test "$(sqls "SELECT count(*) FROM train_journal WHERE id = $siteA")" -eq 1
cp "$T/tokens-A/site.kch" "$T/s.before"
run lgA sync --list site
check "host A's sync of its site store exits 1" test "$rc" -eq 1
check "... naming the database, not the file's kind, and to rebuild" sh -c \
    "grep -q 'position $siteA .*this database does not have.*rebuild --list site' '$T/err' &&
     ! grep -q 'its own journal' '$T/err'"
check "... and leaves the file alone" cmp -s "$T/tokens-A/site.kch" "$T/s.before"
run lgA sync --check --list site
check "sync --check of it says so too (exit 1)" sh -c "test $rc -eq 1 &&
    grep -q 'this database does not have' '$T/err' &&
    ! grep -q 'its own journal' '$T/err'"
run lgA rebuild --list site
check "rebuild of the site store from the promoted standby exits 0" \
    test "$rc" -eq 0
run lgA sync --site
check "... and sync --site is content again" test "$rc" -eq 0

echo "# queue_standby: $(($(date +%s) - start)) s with the standby"
echo "1..$n"
[ "$fails" -eq 0 ]

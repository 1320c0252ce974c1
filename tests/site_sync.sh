#!/bin/sh
# site_sync.sh - the site store: `listgate sync --site` applies every
# list's journal events to it exactly once (late commits of one list
# behind another's newer events included, unlearning too, killed runs
# resumed), rebuild agrees, a file of the wrong kind is refused (by sync
# --check too); and a list scores with it (score -v shows the site's
# part, a list without a token file of its own scores with the site's
# alone, filter passes)
#
# Runs under tests/pg.sh (a private PostgreSQL); temporary files in a
# mktemp -d directory.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
QHOLD=$top_builddir/tests/qhold
ROUNDS=${LG_KILL_ROUNDS:-15}
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-site.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)

# configurations: a and b share the database, each with its own tokens
for c in a b; do
	mkdir -p "$T/conf-$c/lists" || exit 99
	printf 'tokens_dir = %s/tokens-%s\nsite_list = site\n' "$T" "$c" \
	    > "$T/conf-$c/listgate.conf"
done
lg() { c=$1; shift; "$LISTGATE" --allow-root --config "$T/conf-$c" "$@"; }
stat_of() {	# stat_of CONF LIST KEY: a --db-stats value
	lg "$1" score --list "$2" --db-stats | awk -v k="$3" '$1 == k { print $2 }'
}
dump() {	# dump CONF LIST: every record, sorted
	lg "$1" score --list "$2" --db-dump | LC_ALL=C sort
}
# journal totals (learnt minus unlearnt) of a class over every list
jtotal() {
	psql -X -A -t -c "SELECT coalesce(sum(CASE op WHEN 'learn' THEN 1 \
	    ELSE -1 END), 0) FROM train_journal WHERE class = '$1'"
}
# gen FILE SEED N LO HI: N posts with words wLO..wHI, separated by form
# feed lines (qhold -j reads them so)
gen() {
	awk -v seed="$2" -v n="$3" -v lo="$4" -v hi="$5" 'BEGIN {
		srand(seed);
		for (i = 0; i < n; i++) {
			printf "From: u%d@example.org\nSubject: post %d of %d\n",
			    int(rand() * 50), i, seed;
			printf "Message-ID: <%d.%d@example.org>\n\n", seed, i;
			nw = 20 + int(rand() * 60);
			for (k = 0; k < nw; k++)
				printf "w%d%s", lo + int(rand() * (hi - lo)),
				    k % 12 == 11 ? "\n" : " ";
			printf "\n\f\n";
		}
	}' > "$1"
}
# one post of the same kinds, as a file
one() {
	gen "$T/one" "$2" 1 "$3" "$4"
	sed '$d' "$T/one" > "$1"
}

lg a migrate -q || exit 99

# --- every list's events, once -------------------------------------------
gen "$T/p1" 1 40 0 2000
gen "$T/p2" 2 30 2000 4000
"$QHOLD" -j dev ham "$T/p1" > /dev/null || exit 99
"$QHOLD" -j ops spam "$T/p2" > /dev/null || exit 99
lg a sync --site > "$T/out" 2>&1
check "sync --site exits 0" test $? -eq 0
check "... feeds and applies both lists' 70 events" \
    grep -q "list site (the site store): 70 events newly fed, 70 applied" \
    "$T/out"
check "... the site store learnt 40 ham and 30 spam" \
    test "$(stat_of a site ham_posts) $(stat_of a site spam_posts)" = "40 30"
pos=$(stat_of a site journal_pos)
last=$(psql -X -A -t -c "SELECT max(seq) FROM site_feed")
check "... its position is the last feed number" test "$pos" = "$last"
lg a sync --site > "$T/out" 2>&1
check "a second sync --site applies nothing" \
    grep -q "0 events newly fed, 0 applied" "$T/out"
check "... and the counts stay" \
    test "$(stat_of a site ham_posts) $(stat_of a site spam_posts)" = "40 30"

# --- a late commit of one list behind a newer event of another -----------
# dev's event takes its id first and commits last: a site store that
# followed the journal's ids would skip it for ever
did=$(psql -X -A -t -c "SELECT min(id) FROM train_journal WHERE list = 'dev'")
psql -X -q -c "BEGIN; SELECT pg_advisory_xact_lock(x'4c47'::int, hashtext('dev'));
    INSERT INTO train_journal (list, class, op, source, size, message_z)
    SELECT list, class, op, source, size, message_z FROM train_journal
    WHERE id = $did; SELECT pg_sleep(3); COMMIT;" > /dev/null 2>&1 &
late=$!
sleep 1
gen "$T/p3" 3 5 2000 4000
"$QHOLD" -j ops spam "$T/p3" > /dev/null || exit 99
lg a sync --site > "$T/out" 2>&1
check "sync --site while dev's event is uncommitted feeds ops's 5" \
    grep -q "5 events newly fed, 5 applied" "$T/out"
lateid=$(psql -X -A -t -c "SELECT max(id) FROM train_journal WHERE list = 'ops'")
wait "$late"
check "dev's late event has the lower id" test "$(psql -X -A -t -c \
    "SELECT max(id) FROM train_journal WHERE list = 'dev'")" -lt "$lateid"
lg a sync --site > "$T/out" 2>&1
check "the next sync --site feeds and applies dev's late event" \
    grep -q "1 event newly fed, 1 applied" "$T/out"
check "... the site store has every event: 41 ham, 35 spam" \
    test "$(stat_of a site ham_posts) $(stat_of a site spam_posts)" = "41 35"

# --- unlearning flows through, and train --list SITE goes in too -----------
sed -n '1,/^\f$/p' "$T/p1" | sed '$d' > "$T/u"
lg a train -q --list dev --ham --unlearn "$T/u"
check "train --unlearn on dev (journaled) exits 0" test $? -eq 0
one "$T/s1" 77 2000 4000
lg a train --list site --spam "$T/s1" > "$T/out" 2>&1
check "train --list site through the journal exits 0" test $? -eq 0
check "... and feeds the site store as it syncs it (unlearning included)" \
    test "$(stat_of a site ham_posts) $(stat_of a site spam_posts)" = "40 36"

# --- killed at random points, resumed --------------------------------------
r=1
killed=0
while [ "$r" -le "$ROUNDS" ]; do
	cls=ham; l=dev; lo=0
	[ $((r % 3)) -eq 0 ] && { cls=spam; l=ops; lo=2000; }
	gen "$T/pk" "$((100 + r))" 60 "$lo" "$((lo + 2000))"
	[ $((r % 5)) -eq 0 ] && l=l$r
	"$QHOLD" -j "$l" "$cls" "$T/pk" > /dev/null || exit 99
	delay=$(awk -v s="$r" 'BEGIN { srand(s * 7919); printf "%.3f", rand() * 0.06 }')
	lg a sync -q --site 2>/dev/null &
	pid=$!
	sleep "$delay"
	kill -9 "$pid" 2>/dev/null && killed=$((killed + 1))
	wait "$pid" 2>/dev/null
	r=$((r + 1))
done
echo "# $ROUNDS rounds: $killed runs of sync --site killed while running"
lg a sync --site > "$T/out" 2>&1
check "sync --site after the kills exits 0" test $? -eq 0
check "... the site store's counts are the journal's" \
    test "$(stat_of a site ham_posts) $(stat_of a site spam_posts)" = \
    "$(jtotal ham) $(jtotal spam)"
lg b sync --site > "$T/out-b" 2>&1
check "a clean single sync --site into other tokens exits 0" test $? -eq 0
dump a site > "$T/dump-a"
dump b site > "$T/dump-b"
check "the dump is not empty" test "$(wc -l < "$T/dump-a")" -gt 100
check "killed-and-resumed site store = clean single sync" \
    cmp -s "$T/dump-a" "$T/dump-b"
lg a rebuild -q --list site
check "rebuild --list site exits 0" test $? -eq 0
dump a site > "$T/dump-r"
check "rebuild of the site store = clean single sync" \
    cmp -s "$T/dump-r" "$T/dump-b"

# --- sync without --list: every list, then the site store ----------------
gen "$T/p4" 4 3 0 2000
"$QHOLD" -j dev ham "$T/p4" > /dev/null || exit 99
lg a sync > "$T/out" 2>&1
check "sync syncs every list and then the site store" \
    sh -c "grep -q '^list dev: ' '$T/out' && grep -q '^list ops: ' '$T/out' &&
    tail -n 1 '$T/out' | grep -q '^list site (the site store): 3 events newly fed, 3 applied'"
check "... the lists' own files are their own journals" \
    test "$(stat_of a ops spam_posts)" = "$(psql -X -A -t -c \
    "SELECT count(*) FROM train_journal WHERE list = 'ops'")"

# --- a token file of the other kind is refused -----------------------------
mkdir -p "$T/conf-c" || exit 99
printf 'tokens_dir = %s/tokens-a\nsite_list = dev\n' "$T" > "$T/conf-c/listgate.conf"
lg c sync --site > "$T/out" 2>&1
check "sync --site refuses a list's file made the site store" test $? -eq 1
check "... saying to rebuild it" \
    grep -q "built from its own journal, not from the site feed.*rebuild --list dev" \
    "$T/out"
lg c sync --check --site > "$T/out" 2>&1
check "sync --check finds the list's file made the site store at fault" \
    test $? -eq 1
check "... saying to rebuild it" \
    grep -q "built from its own journal, not from the site feed.*rebuild --list dev" \
    "$T/out"
printf 'tokens_dir = %s/tokens-a\n' "$T" > "$T/conf-c/listgate.conf"
lg c sync --list site > "$T/out" 2>&1
check "a list's sync refuses the site store's file" test $? -eq 1
check "... saying so" grep -q "built from the site feed" "$T/out"
lg c sync --check --list site > "$T/out" 2>&1
check "sync --check finds the site store's file at fault for a list" \
    test $? -eq 1
check "... saying so" grep -q "built from the site feed" "$T/out"

# --- scoring with the site store -------------------------------------------
one "$T/ham" 900 0 2000
one "$T/spam" 901 2000 4000
lg a score --list fresh -v "$T/ham" > "$T/out" 2>&1
check "a list without a token file scores with the site store" test $? -eq 0
check "... as ham" grep -q "^ham " "$T/out"
check "... -v names the site store and its weight" \
    grep -q "^  site store site weight 3 own posts 0 site posts" "$T/out"
check "... and each token's site part: all of it" \
    sh -c "grep '^    w' '$T/out' | head -1 | grep -q ' 0 0 site 0\.[0-9]* 1\.00\$'"
lg a score --list fresh "$T/spam" > "$T/out" 2>&1
check "... a spam post as spam" grep -q "^spam " "$T/out"
lg a score --list fresh --json "$T/ham" > "$T/out" 2>&1
check "--json has the site's weight" \
    grep -q '"site":{"list":"site","weight":3,"own_posts":0,' "$T/out"
lg a filter --list fresh --mta qmail < "$T/ham" > /dev/null 2>&1
check "filter passes the ham post of the list without a token file" \
    test $? -eq 0
nd=$(($(stat_of a dev ham_posts) + $(stat_of a dev spam_posts)))
lg a filter --list fresh --mta qmail < "$T/spam" > /dev/null 2>&1
check "filter holds the spam post of the list without a token file (99)" \
    test $? -eq 99
check "... its deciding tokens kept as moderation reads them (tok f spam ham)" \
    sh -c "psql -X -A -t -c \"SELECT clues FROM held_posts WHERE list = 'fresh'\" |
    awk 'NF { n++; if (NF != 4 || \$2 + 0 != \$2) bad++ } END { exit !(n > 0 && !bad) }'"
lg a score --list dev -v "$T/ham" > "$T/out" 2>&1
check "a trained list ($nd posts) scores with the site store too" \
    grep -q "^  site store site weight 3 own posts $nd " "$T/out"
# clue lines "tok f spam ham site F W": the tokens the list has in 100
# posts or more give the site at most S / (S + 100) of their say
check "... the site's share of a token the list knows well is small" \
    awk '/^    / && $5 == "site" && $3 + $4 >= 100 { n++; if ($7 > 0.03) bad++ }
        END { exit !(n > 0 && !bad) }' "$T/out"
printf 'site_weight = 0\n' > "$T/conf-a/lists/fresh.conf"
lg a score --list fresh "$T/ham" > "$T/out" 2>&1
check "site_weight = 0: the list's own (missing) file again" \
    sh -c "test $? -eq 1 && grep -q 'fresh.kch does not exist' '$T/out'"
printf 'site_weight = 0.5\n' > "$T/conf-a/lists/dev.conf"
lg a score --list dev -v "$T/ham" > "$T/out" 2>&1
check "site_weight = 0.5 sets the weight" \
    grep -q "^  site store site weight 0.5 own posts $nd " "$T/out"
lg a score --list site -v "$T/ham" > "$T/out" 2>&1
check "the site list itself scores with its own file alone" \
    sh -c "! grep -q 'site store' '$T/out' && ! grep -q ' site [0-9]' '$T/out'"

# --- fed under a statement_timeout (one set in the database conninfo's
# options for the filter's hold path) while another feeder holds the
# feed's lock: the feed waits for it, as a journal batch does ------------
mkdir -p "$T/conf-d/lists" || exit 99
printf 'tokens_dir = %s/tokens-a\nsite_list = site\ndatabase = "options='"'"'-c statement_timeout=100'"'"'"\n' \
    "$T" > "$T/conf-d/listgate.conf"
gen "$T/p5" 5 3 0 2000
"$QHOLD" -j dev ham "$T/p5" > /dev/null || exit 99
psql -X -q -c "BEGIN; SELECT pg_advisory_xact_lock(x'4c53'::int, 0);
    SELECT pg_sleep(2); COMMIT;" > /dev/null 2>&1 &
holder=$!
sleep 0.5
lg d sync --site > "$T/out" 2>&1
rc=$?
wait "$holder"
check "sync --site under statement_timeout = 100 ms waits for another feeder" \
    test "$rc" -eq 0
check "... then feeds and applies the 3 new events" \
    grep -q "3 events newly fed, 3 applied" "$T/out"

# --- a feed with nothing new reads each list's newest journal events
# through its index, not the whole journal: 20000 events more, fed, then
# one more sync --site reads at most a few rows per list -------------
psql -X -q -c "INSERT INTO train_journal (list, class, op, source, size,
    message_z) SELECT 'bulk' || (g % 8), 'ham', 'learn', 'cli', size,
    message_z FROM train_journal, generate_series(1, 20000) g
    WHERE id = (SELECT min(id) FROM train_journal)" || exit 99
lg a sync -q --site || exit 99
jreads() {	# rows of train_journal read so far (sequential and by index)
	psql -X -A -t -c "SELECT pg_stat_force_next_flush()" > /dev/null 2>&1
	psql -X -A -t -c "SELECT pg_stat_clear_snapshot();
	    SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)
	    FROM pg_stat_user_tables WHERE relname = 'train_journal'" | tail -n 1
}
sleep 1		# the statistics of the feeding sync reach the server
r0=$(jreads)
lg a sync --site > "$T/out" 2>&1
sleep 1
r1=$(jreads)
echo "# a feed with nothing new read $((r1 - r0)) journal rows"
check "a sync --site with nothing new reads few journal rows" \
    sh -c "grep -q '0 events newly fed, 0 applied' '$T/out' &&
    test $((r1 - r0)) -lt 2000"

echo "1..$n"
[ "$fails" -eq 0 ]

#!/bin/sh
# torture_kill.sh - SIGKILL of train, sync, rebuild, approve and filter
# at random points; after each kill the next run succeeds and nothing is
# lost, doubled or left half-done
#
# Each round starts one command on list "dev" (against a private
# PostgreSQL, tests/pg.sh, and a real token file) and kills it after a
# random delay between 0 and 1.3 times what a clean run of it took
# (measured first), so kills land before connecting, mid-batch, in a
# commit, mid-transfer to a release or deliver command (those read
# slowly: 1 KiB, a pause, the rest; the posts are 150 KiB; under Postfix
# the filter reads the post from a pipe, as pipe(8) hands it over), and
# after the end.  After each kill:
#   - the next run succeeds: train journals a batch, sync applies, rebuild
#     rebuilds; a killed approve is approved by the next one (or, when
#     the post was left 'releasing', by the documented recovery: the
#     sink is checked, then approve --force or --mark-approved); a
#     killed filter's post is retried by "the MTA" until it succeeds;
#   - nothing is trained twice or lost: a killed train journaled all of
#     its batch or none, and after the next sync the token file's
#     spam/ham counts and position are exactly the journal's;
#   - no held post is lost: its row is held, releasing or approved;
#   - no partial post reached a sink: every record of the deliver and
#     release sinks is a whole post (gen_posts, tests/stress_lib.sh);
#   - no temporary file is left behind in tokens_dir or $TMPDIR once
#     the next run is done.
# At the end the token file equals a rebuild (score --db-dump).
# Rounds: a handful of kills per command in make check; at least 50
# each with LISTGATE_TORTURE=long (STRESS_KILLS overrides).  Known
# failures (issue 8, defect 3, until the fix merges): a killed parent
# hands a truncated post to release/deliver, whose record then fails the
# whole-post check.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
QHOLD=$top_builddir/tests/qhold
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-kill.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
CONF=$T/conf
. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
. "$top_srcdir/tests/stress_lib.sh"
STRESS_LOCK_WAIT=5000
stress_conf "$CONF" || exit 99
mkdir -p "$T/tmp" || exit 99
TMPDIR=$T/tmp
export TMPDIR

if [ "$(stress_mode)" = long ]; then
	KILLS=${STRESS_KILLS:-50}
else
	KILLS=${STRESS_KILLS:-4}
fi
MAXROUNDS=$((KILLS * 3))

# listgate in the foreground of a subshell (exec), so $! is its pid
lgx() { exec "$LISTGATE" $LG_ROOT --config "$CONF" "$@"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# a random delay in seconds, up to 1.3 x $1 ms (seeded by $2)
delay() { awk -v m="$1" -v s="$2" 'BEGIN { srand(s); printf "%.3f", rand() * m * 1.3 / 1000 }'; }

# start "$@" (a listgate command line), kill it after a random delay;
# $killed is 1 when it was still running (killed), 0 when it had ended
KSEED=0
kill_run() {
	_max=$1
	shift
	KSEED=$((KSEED + 1))
	_d=$(delay "$_max" "$KSEED")
	( lgx "$@" ) > "$T/k.out" 2>&1 < /dev/null &
	_p=$!
	sleep "$_d"
	if kill -9 "$_p" 2>/dev/null; then
		killed=1
	else
		killed=0
	fi
	wait "$_p" 2>/dev/null
	krc=$?
	[ "$killed" = 1 ] && [ "$krc" -ne 137 ] && killed=0	# it had just ended
	return 0
}

# a release or deliver command still reading when its parent died ends
# by itself: wait for the sink to be idle (at most 10 s)
sink_idle() {
	_i=0
	while [ -n "$(ls "$T/sink")" ] && [ $_i -lt 100 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
}

# the token file's counts against the journal's: "" when they agree
# (list $1, default dev)
counts_differ() {
	_l=${1:-dev}
	_f=$(lg score --list "$_l" --db-stats 2>&1 |
	    awk '{ v[$1] = $2 } END { print v["spam_posts"], v["ham_posts"], v["journal_pos"] }')
	_j=$(sql "SELECT
	    sum(CASE WHEN class = 'spam' THEN (CASE WHEN op = 'learn' THEN 1 ELSE -1 END) ELSE 0 END),
	    sum(CASE WHEN class = 'ham' THEN (CASE WHEN op = 'learn' THEN 1 ELSE -1 END) ELSE 0 END),
	    max(id) FROM train_journal WHERE list = '$_l'" | tr '|' ' ')
	[ "$_f" = "$_j" ] || echo "token file $_f, journal $_j"
}

# one line per problem into $T/problems.WHAT, shown at the end
problem() { echo "$2" >> "$T/problems.$1"; }

lg migrate -q || exit 99
gen_mbox "$T/ham0" 100 1 ham
gen_mbox "$T/spam0" 100 2 spam
lg train -q --list dev --ham "$T/ham0" && lg train -q --list dev --spam "$T/spam0" ||
    { echo "# the first training failed"; exit 99; }
# the posts for approve and filter: large ones (every 25th of gen_posts)
gen_posts "$T/gen" 500 7
mkdir -p "$T/posts"
for f in "$T"/gen/*.eml; do
	[ "$(wc -c < "$f")" -gt 100000 ] && mv "$f" "$T/posts/"
done
rm -rf "$T/gen"
post_sums "$T/posts"
ls "$T"/posts/*.eml > "$T/big"
NBIG=$(wc -l < "$T/big")
i=0
# a fresh copy of the next large post in $post (the same bytes again
# would be a retry of the first), its SHA-256 in $T/post.sums
fresh_post() {
	i=$((i + 1))
	post=$(sed -n "$(( (i - 1) % NBIG + 1 ))p" "$T/big")
	sed "s/^Message-ID: <\(.*\)>/Message-ID: <a$i.\1>/" "$post" > "$T/posts/a$i.eml"
	post=$T/posts/a$i.eml
	sha256sum "$post" | sed 's/  / /' >> "$T/post.sums"
}

# --- train ----------------------------------------------------------------------------
t=$(now_ms)
gen_mbox "$T/batch" 40 100 spam
lg train -q --list dev --spam "$T/batch" || exit 99
ms_train=$(($(now_ms) - t))
k=0 r=0
while [ $k -lt "$KILLS" ] && [ $r -lt $MAXROUNDS ]; do
	r=$((r + 1))
	c=ham
	[ $((r % 2)) -eq 0 ] && c=spam
	gen_mbox "$T/batch" 40 $((200 + r)) "$c"
	before=$(sql "SELECT count(*) FROM train_journal")
	kill_run "$ms_train" train -q --list dev --"$c" "$T/batch"
	k=$((k + killed))
	after=$(sql "SELECT count(*) FROM train_journal")
	d=$((after - before))
	[ "$d" -eq 0 ] || [ "$d" -eq 40 ] ||
	    problem train "round $r: a killed train journaled $d of 40 posts"
	gen_mbox "$T/batch" 5 $((5000 + r)) "$c"
	lg train -q --list dev --"$c" "$T/batch" > "$T/out" 2>&1 ||
	    problem train "round $r: the next train failed: $(head -n 1 "$T/out")"
	x=$(counts_differ)
	[ -z "$x" ] || problem train "round $r: $x"
	x=$(temp_left "$T/tokens" "$T/tmp")
	[ -z "$x" ] || problem train "round $r: left behind: $x"
done
kills_train=$k rounds_train=$r
check "train killed $k times in $r rounds: the next run succeeds, all or none journaled, counts = journal, no temporary file" \
    test ! -s "$T/problems.train"

# --- sync: a backlog of journaled posts each round ----------------------------------------
gen_mbox "$T/batch" 150 300 ham
sed 's/^From trainer@.*$/\f/' "$T/batch" | sed '1d' > "$T/batch.ff"
"$QHOLD" -j dev ham "$T/batch.ff" > /dev/null || exit 99
t=$(now_ms)
lg sync -q --list dev || exit 99
ms_sync=$(($(now_ms) - t))
k=0 r=0
while [ $k -lt "$KILLS" ] && [ $r -lt $MAXROUNDS ]; do
	r=$((r + 1))
	c=ham
	[ $((r % 3)) -eq 0 ] && c=spam
	gen_mbox "$T/batch" 80 $((300 + r)) "$c"
	sed 's/^From trainer@.*$/\f/' "$T/batch" | sed '1d' > "$T/batch.ff"
	"$QHOLD" -j dev "$c" "$T/batch.ff" > /dev/null || exit 99
	kill_run "$ms_sync" sync -q --list dev
	k=$((k + killed))
	lg sync -q --list dev > "$T/out" 2>&1 ||
	    problem sync "round $r: the next sync failed: $(head -n 1 "$T/out")"
	x=$(counts_differ)
	[ -z "$x" ] || problem sync "round $r: $x"
	x=$(temp_left "$T/tokens" "$T/tmp")
	[ -z "$x" ] || problem sync "round $r: left behind: $x"
done
kills_sync=$k rounds_sync=$r
check "sync killed $k times in $r rounds: the next sync succeeds, counts = journal, no temporary file" \
    test ! -s "$T/problems.sync"

# --- rebuild: list rb, a journal of 300 posts (dev's grows with every
# round above, and a rebuild reads all of it) -------------------------------------------
for c in ham spam; do
	gen_mbox "$T/batch" 150 "$([ $c = ham ] && echo 401 || echo 402)" "$c"
	sed 's/^From trainer@.*$/\f/' "$T/batch" | sed '1d' > "$T/batch.ff"
	"$QHOLD" -j rb "$c" "$T/batch.ff" > /dev/null || exit 99
done
t=$(now_ms)
lg rebuild -q --list rb || exit 99
ms_rebuild=$(($(now_ms) - t))
k=0 r=0
while [ $k -lt "$KILLS" ] && [ $r -lt $MAXROUNDS ]; do
	r=$((r + 1))
	kill_run "$ms_rebuild" rebuild -q --list rb
	k=$((k + killed))
	lg score --list rb --db-stats > "$T/out" 2>&1 ||
	    problem rebuild "round $r: the token file does not open after the kill: $(head -n 1 "$T/out")"
	if [ $((r % 2)) -eq 0 ]; then
		lg rebuild -q --list rb > "$T/out" 2>&1 ||
		    problem rebuild "round $r: the next rebuild failed: $(head -n 1 "$T/out")"
	else
		lg sync -q --list rb > "$T/out" 2>&1 ||
		    problem rebuild "round $r: the next sync failed: $(head -n 1 "$T/out")"
	fi
	x=$(counts_differ rb)
	[ -z "$x" ] || problem rebuild "round $r: $x"
	x=$(temp_left "$T/tokens" "$T/tmp")
	[ -z "$x" ] || problem rebuild "round $r: left behind: $x"
done
kills_rebuild=$k rounds_rebuild=$r
check "rebuild killed $k times in $r rounds: the file still opens, the next run succeeds, counts = journal, no temporary file" \
    test ! -s "$T/problems.rebuild"

# --- approve: the release command reads slowly -------------------------------------------
touch "$T/slow"
hold_next() {	# hold a fresh post: its id in $id
	fresh_post
	id=$("$QHOLD" dev "$post" 0.95) || exit 99
}
hold_next
t=$(now_ms)
lg approve -q "$id" || exit 99
ms_approve=$(($(now_ms) - t))
k=0 r=0 nforce=0 nmark=0
while [ $k -lt "$KILLS" ] && [ $r -lt $MAXROUNDS ]; do
	r=$((r + 1))
	hold_next
	kill_run "$ms_approve" approve -q --by killed "$id"
	k=$((k + killed))
	sink_idle
	st=$(sql "SELECT status FROM held_posts WHERE id = $id")
	case $st in
	held|approved) ;;
	releasing)
		# the documented recovery: look at the list (the sink), then
		# --mark-approved when the post is there, else --force
		sum=$(sha256sum < "$post" | cut -c1-64)
		if grep -q "^release $sum " "$T/sink.log"; then
			lg approve -q --mark-approved "$id" > "$T/out" 2>&1
			nmark=$((nmark + 1))
		else
			lg approve -q --force "$id" > "$T/out" 2>&1
			nforce=$((nforce + 1))
		fi
		[ $? -eq 0 ] || problem approve "round $r: the recovery of a 'releasing' post failed: $(head -n 1 "$T/out")" ;;
	*)
		problem approve "round $r: a held post is lost: status '$st'" ;;
	esac
	lg approve -q "$id" > "$T/out" 2>&1 ||
	    problem approve "round $r: the next approve failed: $(head -n 1 "$T/out")"
	st=$(sql "SELECT status FROM held_posts WHERE id = $id")
	[ "$st" = approved ] || problem approve "round $r: status '$st' after the next approve"
	# a killed approve may have committed its decision and not synced
	# (the next one finds it decided and leaves the file): sync applies it
	lg sync -q --list dev > "$T/out" 2>&1 ||
	    problem approve "round $r: sync after the approvals failed: $(head -n 1 "$T/out")"
	sink_idle
	nrel=$(grep -c "^release $(sha256sum < "$post" | cut -c1-64) " "$T/sink.log")
	[ "$nrel" -ge 1 ] || problem approve "round $r: approved but never released whole"
	x=$(counts_differ)
	[ -z "$x" ] || problem approve "round $r: $x"
	x=$(temp_left "$T/tokens" "$T/tmp")
	[ -z "$x" ] || problem approve "round $r: left behind: $x"
	nev=$(sql "SELECT count(*) FROM train_journal WHERE post_id = $id")
	[ "$nev" -eq 1 ] || problem approve "round $r: $nev training events for the post"
done
kills_approve=$k rounds_approve=$r
check "approve killed $k times in $r rounds: no held post lost, the next approve (or the documented recovery, $nforce --force, $nmark --mark-approved) succeeds, trained once, no temporary file" \
    test ! -s "$T/problems.approve"
bad_release=$(awk 'NR == FNR { ok[$1] = 1; next } $1 == "release" && !($2 in ok)' \
    "$T/post.sums" "$T/sink.log" | wc -l)
check "no partial post reached the release command ($bad_release partial of $(grep -c '^release' "$T/sink.log") records)" \
    test "$bad_release" -eq 0

# --- filter: Postfix, the deliver command reads slowly; qmail; held posts ---------------
printf 'ham_cutoff = 0.5\nspam_cutoff = 0.9\ndeliver = /bin/sh %s/sink.sh deliver\nrelease = /bin/sh %s/sink.sh release\n' \
    "$T" "$T" > "$CONF/lists/dev.conf"
fresh_post
t=$(now_ms)
lg filter --list dev --mta postfix -f s@example.net -- dev@lists.example.org \
    < "$post" > /dev/null 2>&1
ms_filter=$(($(now_ms) - t))
k=0 r=0 nretry=0 nfheld=0
while [ $k -lt "$KILLS" ] && [ $r -lt $MAXROUNDS ]; do
	r=$((r + 1))
	fresh_post
	mta=postfix ok=0 tmp=75
	if [ $((r % 2)) -eq 0 ]; then
		mta=qmail ok="0 99" tmp=111
	fi
	sum=$(sha256sum < "$post" | cut -c1-64)
	KSEED=$((KSEED + 1))
	d=$(delay "$ms_filter" "$KSEED")
	# Postfix's pipe(8) hands the post over through a pipe (the filter
	# then feeds deliver from its own copy); qmail-local gives a file
	if [ "$mta" = postfix ]; then
		cat "$post" | ( lgx filter --list dev --mta "$mta" -f s@example.net \
		    -- dev@lists.example.org ) > "$T/k.out" 2>&1 &
	else
		( lgx filter --list dev --mta "$mta" -f s@example.net \
		    -- dev@lists.example.org ) < "$post" > "$T/k.out" 2>&1 &
	fi
	p=$!
	sleep "$d"
	if kill -9 "$p" 2>/dev/null; then killed=1; else killed=0; fi
	wait "$p" 2>/dev/null
	frc=$?
	[ "$killed" = 1 ] && [ "$frc" -ne 137 ] && killed=0
	k=$((k + killed))
	sink_idle
	# the MTA retries a killed filter (and a deferred one) until it
	# succeeds; qmail's exit 0 means the next .qmail line delivers
	tries=0
	if [ "$killed" = 1 ] || [ "$frc" -eq "$tmp" ]; then
		while :; do
			tries=$((tries + 1))
			cat "$post" | lg filter --list dev --mta "$mta" \
			    -f s@example.net -- dev@lists.example.org > "$T/out" 2>&1
			frc=$?
			[ "$frc" -ne "$tmp" ] || [ $tries -ge 20 ] && break
			sleep 0.2
		done
		nretry=$((nretry + tries))
	fi
	case " $ok " in
	*" $frc "*) ;;
	*) problem filter "round $r ($mta): the retried filter ended with exit $frc: $(head -n 1 "$T/out")" ;;
	esac
	[ "$mta" = qmail ] && [ "$frc" -eq 0 ] && /bin/sh "$T/sink.sh" deliver < "$post"
	sink_idle
	nd=$(grep -c "^deliver $sum " "$T/sink.log")
	nh=$(sql "SELECT count(*) FROM held_posts WHERE list = 'dev' AND
	    raw_sha256 = decode('$sum', 'hex') AND status = 'held'")
	[ "$nh" -gt 0 ] && nfheld=$((nfheld + 1))
	[ $((nd + nh)) -ge 1 ] || problem filter "round $r ($mta): the post was neither delivered whole nor held"
	[ "$nh" -le 1 ] || problem filter "round $r ($mta): held $nh times"
	x=$(temp_left "$T/tokens" "$T/tmp")
	[ -z "$x" ] || problem filter "round $r ($mta): left behind: $x"
done
kills_filter=$k rounds_filter=$r
check "filter killed $k times in $r rounds ($nretry retries, $nfheld posts held): each post ends delivered or held once, no temporary file" \
    test ! -s "$T/problems.filter"
bad_deliver=$(awk 'NR == FNR { ok[$1] = 1; next } $1 == "deliver" && !($2 in ok)' \
    "$T/post.sums" "$T/sink.log" | wc -l)
check "no partial post reached the deliver command ($bad_deliver partial of $(grep -c '^deliver' "$T/sink.log") records)" \
    test "$bad_deliver" -eq 0
rm -f "$T/slow"

# --- at the end: the token file equals a rebuild -----------------------------------------
lg sync -q --list dev
check "a last sync exits 0" test $? -eq 0
lg score --list dev --db-dump | LC_ALL=C sort > "$T/dump1"
lg rebuild -q --list dev
lg score --list dev --db-dump | LC_ALL=C sort > "$T/dump2"
check "the token file equals a rebuild (score --db-dump)" \
    test -s "$T/dump1" -a -z "$(cmp "$T/dump1" "$T/dump2" 2>&1)"

for w in train sync rebuild approve filter; do
	[ -s "$T/problems.$w" ] && head -n 5 "$T/problems.$w" | sed "s/^/# $w: /"
done
echo "# kills: train $kills_train/$rounds_train rounds (clean run ${ms_train} ms), sync $kills_sync/$rounds_sync (${ms_sync} ms), rebuild $kills_rebuild/$rounds_rebuild (${ms_rebuild} ms), approve $kills_approve/$rounds_approve (${ms_approve} ms), filter $kills_filter/$rounds_filter (${ms_filter} ms)"
echo "1..$n"
[ "$fails" -eq 0 ]

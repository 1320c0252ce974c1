#!/bin/sh
# torture_concurrent.sh - 16 filters at once on one list, while `train`,
# `sync`, `rebuild` and moderators (two of them approving the same post
# at once) loop against it; nothing is lost, nothing happens twice
#
# Generated posts (ham, spam and mixed; some multipart, some large; see
# gen_posts in tests/stress_lib.sh) go through `listgate filter`, half
# of the workers speaking Postfix (the list's deliver command is a sink)
# and half qmail (exit 0: the worker hands the post to the sink itself,
# as the next .qmail line would).  A deferred post is retried, as the
# MTA would, until it succeeds.  Then:
#   - every post ended delivered or held, exactly one of the two, once;
#     the counts add up to the number of posts;
#   - every approved post was released exactly once with its exact
#     bytes, and nothing else was released; no post is left 'releasing';
#   - every decided post has exactly one training event;
#   - every record in the sinks is a whole post;
#   - after a last sync the token file's counts are the journal's, and
#     it equals, record for record, a `rebuild` (score --db-dump);
#   - no filter, nor a `score` reading beside them, died by a signal;
#   - every train, sync, rebuild and decision exited 0, and no
#     temporary file is left (tokens dir, $TMPDIR, the sinks').
# Short in make check (300 posts); LISTGATE_TORTURE=long: 2,000 posts
# (STRESS_POSTS overrides either).  Runs under tests/pg.sh; never reads
# /etc; works in a mktemp -d directory removed at the end.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-concurrent.XXXXXX") || exit 99
trap 'touch "$T/stop"; wait; rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
CONF=$T/conf
. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
. "$top_srcdir/tests/stress_lib.sh"
stress_conf "$CONF" || exit 99
# the filters' configuration: the same list, but a short lock wait, so
# that some posts are deferred while a trainer holds the token file
CONF_F=$T/conf-f
mkdir -p "$CONF_F/lists" "$T/tmp" || exit 99
sed 's/^lock_wait_ms = .*/lock_wait_ms = 50/' "$CONF/listgate.conf" > "$CONF_F/listgate.conf"
cp "$CONF/lists/dev.conf" "$CONF_F/lists/"
lgf() { "$LISTGATE" $LG_ROOT --config "$CONF_F" "$@"; }
TMPDIR=$T/tmp
export TMPDIR

NW=16
if [ "$(stress_mode)" = long ]; then
	NPOSTS=${STRESS_POSTS:-2000}
else
	NPOSTS=${STRESS_POSTS:-300}
fi

lg migrate -q || exit 99
gen_mbox "$T/ham0" 150 1 ham
gen_mbox "$T/spam0" 150 2 spam
lg train -q --list dev --ham "$T/ham0" && lg train -q --list dev --spam "$T/spam0" ||
    { echo "# the first training failed"; exit 99; }
gen_posts "$T/posts" "$NPOSTS" 42
post_sums "$T/posts"
t0=$(date +%s)

# --- the loops beside the filters: each logs "WHAT EXIT" lines ------------------
train_loop() {
	k=0
	while [ ! -e "$T/stop" ]; do
		k=$((k + 1))
		c=ham
		[ $((k % 2)) -eq 0 ] && c=spam
		gen_mbox "$T/tr.mbox" 4 $((1000 + k)) "$c"
		lg train -q --list dev --"$c" "$T/tr.mbox" >> "$T/loop.err" 2>&1
		echo "train $?" >> "$T/loops"
	done
}
sync_loop() {
	while [ ! -e "$T/stop" ]; do
		lg sync -q --list dev >> "$T/loop.err" 2>&1
		echo "sync $?" >> "$T/loops"
		sleep 0.05
	done
}
rebuild_loop() {
	while [ ! -e "$T/stop" ]; do
		lg rebuild -q --list dev >> "$T/loop.err" 2>&1
		echo "rebuild $?" >> "$T/loops"
		sleep 0.3
	done
}
# readers beside the filters: `score` over the posts; any death by a
# signal (a reader's mapping of the token file cut short: SIGBUS) is
# logged
read_loop() {
	while [ ! -e "$T/stop" ]; do
		for f in "$T"/posts/*[0-9]5.eml; do
			[ -e "$T/stop" ] && break
			lg score --list dev "$f" > /dev/null 2> "$T/r$1.err"
			rc=$?
			echo "score $rc" >> "$T/loops"
			[ "$rc" -gt 128 ] && { echo "score: signal $((rc - 128))"; cat "$T/r$1.err"; } >> "$T/bad.log"
		done
	done
}
# a moderator's round: a few held posts; one in four rejected, one in
# eight discarded, the others approved by two moderators at once
moderate_loop() {
	while [ ! -e "$T/stop" ]; do
		ids=$(sql "SELECT id FROM held_posts WHERE list = 'dev' AND
		    status = 'held' ORDER BY random() LIMIT 4" 2>>"$T/loop.err")
		[ -z "$ids" ] && { sleep 0.1; continue; }
		for id in $ids; do
			case $((id % 8)) in
			0|4)
				lg reject -q --by m3 "$id" >> "$T/loop.err" 2>&1
				echo "reject $?" >> "$T/loops" ;;
			2)
				lg discard -q --by m3 "$id" >> "$T/loop.err" 2>&1
				echo "discard $?" >> "$T/loops" ;;
			*)
				lg approve -q --by m1 "$id" > "$T/a1" 2>&1 &
				a1=$!
				lg approve -q --by m2 "$id" > "$T/a2" 2>&1
				r2=$?
				wait "$a1"
				r1=$?
				cat "$T/a1" "$T/a2" >> "$T/loop.err"
				echo "approve $r1" >> "$T/loops"
				echo "approve $r2" >> "$T/loops"
				echo "$id" >> "$T/approved.twice" ;;
			esac
		done
	done
}

# --- the filters: worker W takes posts W, W+16, ...; even workers speak
# Postfix, odd ones qmail; a deferred post is retried (at most 60 times)
worker() {
	w=$1
	i=$w
	while [ "$i" -lt "$NPOSTS" ]; do
		f=$(printf '%s/posts/%05d.eml' "$T" "$i")
		tries=0
		while :; do
			tries=$((tries + 1))
			if [ $((w % 2)) -eq 0 ]; then
				lgf filter --list dev --mta postfix -f s@example.net \
				    -- dev@lists.example.org < "$f" > /dev/null 2> "$T/w$w.err"
				rc=$?
				[ "$rc" -eq 75 ] && defer=1 || defer=0
			else
				lgf filter --list dev --mta qmail -f s@example.net \
				    -- dev@lists.example.org < "$f" > /dev/null 2> "$T/w$w.err"
				rc=$?
				[ "$rc" -eq 111 ] && defer=1 || defer=0
				if [ "$rc" -eq 0 ]; then
					/bin/sh "$T/sink.sh" deliver < "$f"
				fi
			fi
			case $rc in
			0|99|75|111) ;;
			*) { echo "$i: exit $rc"; cat "$T/w$w.err"; } >> "$T/bad.log" ;;
			esac
			if [ "$defer" = 1 ]; then
				sed "s/^/$i: /" "$T/w$w.err" >> "$T/defer.log"
				[ "$tries" -lt 60 ] && { sleep 0.2; continue; }
			fi
			break
		done
		echo "$(basename "$f") $w $rc $tries" >> "$T/res"
		i=$((i + NW))
	done
}

train_loop & p_train=$!
sync_loop & p_sync=$!
rebuild_loop & p_rebuild=$!
moderate_loop & p_mod=$!
read_loop 1 & p_r1=$!
read_loop 2 & p_r2=$!
pids=
w=0
while [ "$w" -lt "$NW" ]; do
	worker "$w" &
	pids="$pids $!"
	w=$((w + 1))
done
# shellcheck disable=SC2086
wait $pids
t1=$(date +%s)
touch "$T/stop"
wait "$p_train" "$p_sync" "$p_rebuild" "$p_mod" "$p_r1" "$p_r2"
t2=$(date +%s)

# --- every post ended delivered or held, once ----------------------------------------
check "every post has a result" test "$(wc -l < "$T/res")" -eq "$NPOSTS"
nfail=$(awk '($2 % 2 == 0 && $3 != 0) || ($2 % 2 == 1 && $3 != 0 && $3 != 99)' "$T/res" | wc -l)
check "every post ended in success (deferred ones after retries)" test "$nfail" -eq 0
[ "$nfail" -eq 0 ] || awk '($2 % 2 == 0 && $3 != 0) || ($2 % 2 == 1 && $3 != 0 && $3 != 99)' \
    "$T/res" | head -n 5 | sed 's/^/# failed: /'
[ -s "$T/bad.log" ] && head -n 10 "$T/bad.log" | sed 's/^/# /'
ndefer=$(awk '{ d += $4 - 1 } END { print d + 0 }' "$T/res")
nposts_deferred=$(awk '$4 > 1' "$T/res" | wc -l)

sql "SELECT encode(raw_sha256, 'hex'), status, id FROM held_posts
    WHERE list = 'dev' ORDER BY id" | tr '|' ' ' > "$T/rows"
# per post: deliveries, rows, releases
awk '
	FILENAME == ARGV[1] { post[$1] = $2; next }		# post.sums
	FILENAME == ARGV[2] { if ($1 == "deliver") d[$2]++; else r[$2]++; next }
	{ h[$1]++; st[$1] = $2 }				# rows
	END {
		for (s in post) {
			if (d[s] + h[s] != 1) {
				printf "%s: delivered %d times, held %d times\n",
				    post[s], d[s], h[s]; bad++
			}
			if (h[s] && st[s] == "approved" && r[s] != 1) {
				printf "%s: approved, released %d times\n", post[s], r[s]; bad++
			}
			if (h[s] && st[s] != "approved" && r[s]) {
				printf "%s: %s, released %d times\n", post[s], st[s], r[s]; bad++
			}
			if (h[s] && st[s] == "releasing") {
				printf "%s: left releasing\n", post[s]; bad++
			}
		}
		exit bad > 0
	}' "$T/post.sums" "$T/sink.log" "$T/rows" > "$T/acct"
check "each post delivered once or held once, and each approved one released once" \
    test $? -eq 0
head -n 8 "$T/acct" | sed 's/^/# /'
ndeliv=$(grep -c '^deliver ' "$T/sink.log")
nheld=$(wc -l < "$T/rows")
check "the counts add up: $ndeliv delivered + $nheld held = $NPOSTS posts" \
    test $((ndeliv + nheld)) -eq "$NPOSTS"
# the qmail workers' exit codes say which it was
nq0=$(awk '$2 % 2 == 1 && $3 == 0' "$T/res" | wc -l)
nq99=$(awk '$2 % 2 == 1 && $3 == 99' "$T/res" | wc -l)
nq_held=$(awk 'NR == FNR { if ($2 % 2 == 1 && $3 == 99) q[$1] = 1; next }
    ($2 in q)' "$T/res" "$T/post.sums" | awk '{ print $1 }' |
    grep -c -F -f - "$T/rows")
check "qmail: every exit 99 is a held row ($nq99), every exit 0 was not held" \
    test "$nq_held" -eq "$nq99"
check "every record in the sinks is a whole post" sink_check

nrel=$(grep -c '^release ' "$T/sink.log")
napp=$(grep -c ' approved ' "$T/rows")
check "releases ($nrel) = approved posts ($napp)" test "$nrel" -eq "$napp"
nodd=$(sql "SELECT count(*) FROM held_posts h WHERE list = 'dev' AND
    (SELECT count(*) FROM train_journal j WHERE j.post_id = h.id) <>
    (CASE WHEN status IN ('approved', 'rejected', 'discarded') THEN 1 ELSE 0 END)")
check "every decided post has exactly one training event, undecided none" \
    test "$nodd" -eq 0

# --- the loops --------------------------------------------------------------------
for what in train sync rebuild approve reject discard score; do
	eval "n_$what=\$(grep -c \"^$what \" \"\$T/loops\")"
	eval "f_$what=\$(grep \"^$what \" \"\$T/loops\" | grep -vc ' 0\$')"
done
# shellcheck disable=SC2154
check "every train ($n_train), sync ($n_sync), rebuild ($n_rebuild) exited 0" \
    test $((f_train + f_sync + f_rebuild)) -eq 0
# shellcheck disable=SC2154
check "every approve ($n_approve, in pairs), reject ($n_reject), discard ($n_discard) exited 0" \
    test $((f_approve + f_reject + f_discard)) -eq 0
# shellcheck disable=SC2154
check "no filter or reader ($n_score scores beside) died by a signal" \
    test "$(cat "$T/bad.log" 2>/dev/null | grep -c 'signal\|exit 1[3-9][0-9]')" -eq 0
check "the moderators approved some posts twice at once" \
    test "$(wc -l < "$T/approved.twice" 2>/dev/null || echo 0)" -gt 0
if [ $((f_train + f_sync + f_rebuild + f_approve + f_reject + f_discard)) -gt 0 ]; then
	sort "$T/loop.err" | uniq -c | sort -rn | head -n 5 | sed 's/^/# /'
fi

# --- the token file: the journal's counts, and what a rebuild makes ----------------
lg sync -q --list dev
check "a last sync exits 0" test $? -eq 0
lg score --list dev --db-stats > "$T/stats"
jstats=$(sql "SELECT
    sum(CASE WHEN class = 'spam' THEN (CASE WHEN op = 'learn' THEN 1 ELSE -1 END) ELSE 0 END),
    sum(CASE WHEN class = 'ham' THEN (CASE WHEN op = 'learn' THEN 1 ELSE -1 END) ELSE 0 END),
    max(id) FROM train_journal WHERE list = 'dev'" | tr '|' ' ')
fstats=$(awk '{ v[$1] = $2 } END { print v["spam_posts"], v["ham_posts"], v["journal_pos"] }' "$T/stats")
check "token file spam/ham/position ($fstats) = the journal's ($jstats)" \
    test "$fstats" = "$jstats"
lg score --list dev --db-dump | LC_ALL=C sort > "$T/dump1"
lg rebuild -q --list dev
check "rebuild exits 0" test $? -eq 0
lg score --list dev --db-dump | LC_ALL=C sort > "$T/dump2"
lg score --list dev --db-stats > "$T/stats2"
check "the dump is not empty" test "$(wc -l < "$T/dump1")" -gt 100
check "the token file equals a rebuild (score --db-dump)" cmp -s "$T/dump1" "$T/dump2"
check "... and so do its counts" cmp -s "$T/stats" "$T/stats2"
left=$(temp_left "$T/tokens" "$T/tmp" "$T/sink")
check "no temporary file is left behind" test -z "$left"
[ -z "$left" ] || echo "$left" | head -n 5 | sed 's/^/# left: /'

reasons=$(sed 's/^[0-9]*: //' "$T/defer.log" 2>/dev/null | sort | uniq -c | sort -rn | head -n 3)
echo "# $NPOSTS posts through $NW concurrent filters in $((t1 - t0)) s (loops stopped at $((t2 - t0)) s):"
echo "#   $ndeliv delivered, $nheld held; $ndefer deferrals on $nposts_deferred posts, all retried to success"
echo "#   $napp approved and released ($nrel releases), $n_reject rejects, $n_discard discards, $n_approve approve runs ($(wc -l < "$T/approved.twice" 2>/dev/null || echo 0) posts approved by two moderators at once)"
echo "#   $n_train trains, $n_sync syncs, $n_rebuild rebuilds beside them; qmail exits: $nq0 pass, $nq99 held"
[ -n "$reasons" ] && echo "$reasons" | sed 's/^/#   deferred: /'
echo "1..$n"
[ "$fails" -eq 0 ]

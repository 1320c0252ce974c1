#!/bin/sh
# stats.sh - `listgate stats` against a hand-built queue history in a
# private PostgreSQL (tests/pg.sh): rows inserted with SQL at fixed
# times relative to today (UTC), passes counted by the filter itself
# and written into the counter file for an earlier day; every figure of
# the JSON is checked exactly, per list and per period, and the text
# output's lines.  Works in a mktemp -d directory removed at the end.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
command -v python3 >/dev/null 2>&1 || { echo "python3 is needed"; exit 99; }
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-stats.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
mkdir -p "$CONF/lists" || exit 99
printf 'tokens_dir = %s/tokens\n' "$T" > "$CONF/listgate.conf"
# every post passes the filter of dev (cutoffs at 1)
printf 'ham_cutoff = 1\nspam_cutoff = 1\n' > "$CONF/lists/dev.conf"

. "$top_srcdir/tests/lib.sh"
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
run() { "$@" > "$T/out" 2> "$T/err"; rc=$?; }
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
# a Python expression over the JSON in $T/out (d), with L = list dev's
# (or $JSLIST's) object and P = its periods by start date; $2, when
# given, a statement run first (names for the expression)
js() {
	python3 -c "
import json, sys
d = json.load(open('$T/out'))
L = {l['list']: l for l in d['lists']}.get('${JSLIST:-dev}')
P = {p['start']: p for p in (L or {}).get('periods', [])}
${2:-}
ok = ($1)
if not ok:
    print(json.dumps(L, indent=1)[:3000], file=sys.stderr)
sys.exit(0 if ok else 1)" 2>> "$T/js.err"
}

run lg stats --help
check "stats --help exits 0 with usage" \
    sh -c "test $rc -eq 0 && grep -q 'usage: listgate' '$T/out'"
run lg stats --by month
check "--by month is a usage error" test "$rc" -eq 2
run lg stats --since 2026-13-01
check "a bad --since is a usage error" test "$rc" -eq 2
for bad in 2026-02-30 2026-11-31 2023-02-29 2026-04-31; do
	run lg stats --json --since "$bad"
	check "--since $bad (no such day) is a usage error naming it" \
	    sh -c "test $rc -eq 2 && grep -q -- \"--since '$bad'\" '$T/err'"
done
# text that is no YYYY-MM-DD (glibc's strptime skips blanks before a
# number and takes a single digit: these were read as days)
for bad in '2026- 1- 5' ' 2026-11-5' '2026-11- 5' '2026-1-05 '; do
	run lg stats --json --since "$bad"
	check "--since '$bad' (not YYYY-MM-DD) is a usage error" \
	    sh -c "test $rc -eq 2 && grep -q -- \"bad --since '$bad'\" '$T/err'"
done
run lg stats --since 2999-01-01
check "a --since in the future is a usage error" test "$rc" -eq 2
run lg stats --since 1969-12-31
check "a --since before 1970 is a usage error that says what is wanted" \
    sh -c "test $rc -eq 2 && grep -q -- \"bad --since '1969-12-31' (want a day of the calendar, YYYY-MM-DD, from 1970-01-01 on)\" '$T/err'"
run lg stats --list ../x
check "a bad list name is a usage error" test "$rc" -eq 2

run lg migrate
check "migrate" test "$rc" -eq 0

# trained posts: 2 ham through the journal, synced into the token file
run lg train --list dev --ham "$DATA/ham1.eml" "$DATA/ham2.eml"
check "train" test "$rc" -eq 0
check "... prepares the filter's pass counter, group-writable" \
    test "$(stat -c %a "$T/tokens/dev.passed")" = 660

# passes: three by the filter today, five written for two days ago
for i in 1 2 3; do
	lg filter --list dev --mta qmail < "$DATA/ham3.eml" > /dev/null 2>&1
done
check "the filter passed and counted" test -f "$T/tokens/dev.passed"
# a counter whose lock someone keeps (here flock(1); a filter stopped
# with SIGSTOP does the same) costs a post half a second, uncounted: it
# waited for the watchdog
# (on a terminal, for the filter's summary line on stderr)
t0=$(date +%s%N)
script -qec "flock '$T/tokens/dev.passed' '$LISTGATE' --allow-root \
    --config '$CONF' filter --list dev --mta qmail < '$DATA/ham3.eml'" \
    /dev/null > "$T/locked.log" 2>&1
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "a filter with the pass counter's lock kept passes ($rc) in ${ms} ms, < 5 s" \
    sh -c "test $rc -eq 0 && test $ms -lt 5000"
check "... and notes it uncounted" \
    grep -q 'action=pass .*passcount=failed' "$T/locked.log"
python3 - "$T/tokens/dev.passed" <<'EOF' || exit 99
import struct, sys, time
day = int(time.time() // 86400) - 2
f = open(sys.argv[1], 'r+b')
f.seek(64 + 8 * (day % 1024))
f.write(struct.pack('=Q', day << 32 | 5))
EOF

# the history (d0 = today 00:00 UTC):
#   id 101 arrived d0-2 01:00, approved an hour later        (3600 s)
#   id 102 arrived d0-2 02:00, rejected two hours later      (7200 s)
#   id 103 arrived d0-1 01:00, discarded four hours later    (14400 s)
#   id 104 arrived d0-20, expired d0-1 05:00                 (no delay)
#   id 105 arrived d0 00:00, still held
#   id 106 arrived d0-1 06:00, discarded by the filter
#   id 107 arrived d0-40, approved an hour later             (outside)
#   id 108 arrived d0-10, approved 30 minutes later          (1800 s)
#   id 109 arrived d0-3, approved, then rejected d0-3 05:00  (18000 s),
#          the approval undone in the journal: spam released
#   id 201 list other: arrived d0-1, still held
sql "
CREATE TEMP TABLE h (id int8, list text, arr interval, dec interval,
    status text, by text);
INSERT INTO h VALUES
 (101, 'dev', '-2 days 1 hour',  '1 hour',   'approved',  'mod'),
 (102, 'dev', '-2 days 2 hours', '2 hours',  'rejected',  'mod'),
 (103, 'dev', '-1 day 1 hour',   '4 hours',  'discarded', 'mod'),
 (104, 'dev', '-20 days',        NULL,       'expired',   'cron'),
 (105, 'dev', '0',               NULL,       'held',      NULL),
 (106, 'dev', '-1 day 6 hours',  '0',        'discarded', 'listgate filter'),
 (107, 'dev', '-40 days',        '1 hour',   'approved',  'mod'),
 (108, 'dev', '-10 days',        '30 minutes', 'approved', 'mod'),
 (109, 'dev', '-3 days',         '5 hours',  'rejected',  'mod'),
 (201, 'other', '-1 day',        NULL,       'held',      NULL);
INSERT INTO held_posts (id, list, arrived_at, size, score, verdict, raw_z,
    raw_sha256, status, decided_by, decided_at)
SELECT id, list, d0 + arr, 10, 0.9, 'spam', '\\x00'::bytea,
    decode(lpad(to_hex(id), 64, '0'), 'hex'), status, by,
    CASE WHEN status = 'held' THEN NULL
         WHEN id = 104 THEN d0 - interval '1 day' + interval '5 hours'
         ELSE d0 + arr + dec END
  FROM h, (SELECT date_trunc('day', now() AT TIME ZONE 'UTC')
      AT TIME ZONE 'UTC' AS d0) z;
INSERT INTO train_journal (list, class, op, source, post_id, size,
    message_z, created_at)
SELECT 'dev', c, o, 'moderation', 109, 1, '\\x00'::bytea,
    date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' + t
  FROM (VALUES ('ham', 'learn', interval '-3 days 1 hour'),
               ('ham', 'unlearn', interval '-3 days 5 hours'),
               ('spam', 'learn', interval '-3 days 5 hours')) v(c, o, t);
" || exit 99

run lg stats --json
check "stats --json exits 0" test "$rc" -eq 0
check "... the window: the last 30 days, no periods" \
    js "d['by'] is None and len(d['lists']) == 2 and 'periods' not in L"
check "... passed 8 (3 today by the filter, 5 two days ago)" js "L['passed'] == 8"
check "... held 7 (arrived in the window, not the filter's discard)" js "L['held'] == 7"
check "... approved 2, rejected 2, discarded 1, expired 1" \
    js "(L['approved'], L['rejected'], L['discarded'], L['expired']) == (2, 2, 1, 1)"
check "... the filter's discard apart" js "L['filter_discarded'] == 1"
check "... delay median 7200 s, 90th percentile 16560 s (5 decisions)" \
    js "L['delay_median_s'] == 7200 and L['delay_p90_s'] == 16560 and L['decisions'] == 5"
check "... ham held 2 of 10, spam released 1 of 3" \
    js "L['ham_held_rate'] == 0.2 and abs(L['spam_released_rate'] - 1/3) < 1e-6 and L['reversed'] == 1"
check "... drift: the last 7 days against the 30 before" \
    js "abs(L['drift']['last_7_days']['ham_held_rate'] - 1/9) < 1e-6 and L['drift']['previous_30_days']['ham_held_rate'] == 1 and abs(L['drift']['last_7_days']['spam_released_rate'] - 1/3) < 1e-6 and L['drift']['previous_30_days']['spam_released_rate'] is None"
check "... trained: the token file and the journal" \
    js "L['trained']['token_file']['ham'] == 2 and L['trained']['token_file']['spam'] == 0 and L['trained']['token_file']['tokens'] > 0 and L['trained']['token_file']['bytes'] > 0 and L['trained']['journal'] == {'ham': 2, 'spam': 1}"
check "... the other list: one held, no token file" \
    js "[l for l in d['lists'] if l['list'] == 'other'][0]['held'] == 1 and [l for l in d['lists'] if l['list'] == 'other'][0]['trained']['token_file'] is None and [l for l in d['lists'] if l['list'] == 'other'][0]['delay_median_s'] is None"

run lg stats --json --list devv
check "--list of a list that is nowhere (a misspelt name): exit 0, zeros, and a warning" \
    sh -c "test $rc -eq 0 && python3 -m json.tool '$T/out' > /dev/null && grep -q '^listgate stats: warning: list devv has no $CONF/lists/devv.conf, no token file or pass counter in $T/tokens, and no held post or journal event: nothing to report (a misspelt list name?)\$' '$T/err'"
for l in dev other; do
	run lg stats --json --list $l
	check "... none for $l (a file, or held posts only)" \
	    sh -c "test $rc -eq 0 && ! grep -q warning '$T/err'"
done

# a token file that cannot be read fails the command, but hides none of
# the list's figures from the database
echo "not a token file" > "$T/tokens/other.kch"
run lg stats --json
check "a list's token file that cannot be read: stats exits 1, naming the list" \
    sh -c "test $rc -eq 1 && grep -q '^listgate stats: list other: ' '$T/err'"
check "... both lists still reported" js "len(d['lists']) == 2"
JSLIST=other check "... the list's held post and trained journal still there, the file marked unreadable" \
    js "L['held'] == 1 and L['trained']['token_file'] is None and L['trained']['token_file_unreadable'] is True and 'journal' in L['trained']"
run lg stats --list other
check "... the text says so" grep -q "^  token file: cannot be read" "$T/out"
rm -f "$T/tokens/other.kch"

lg stats --json --list dev --by day > /dev/full 2> "$T/err"; rc=$?
check "an output that cannot be written exits 1, saying so" \
    sh -c "test $rc -eq 1 && grep -q 'cannot write the standard output' '$T/err'"
run lg stats --json --list dev --by day
check "stats --by day exits 0" test "$rc" -eq 0
check "... 30 days, one period each, oldest first" \
    js "len(L['periods']) == 30 and L['periods'][0]['start'] == d['since'] and L['periods'][-1]['start'] == d['until']"
d0=$(date -u +%Y-%m-%d)
d1=$(date -u -d '-1 day' +%Y-%m-%d)
d2=$(date -u -d '-2 days' +%Y-%m-%d)
d3=$(date -u -d '-3 days' +%Y-%m-%d)
d10=$(date -u -d '-10 days' +%Y-%m-%d)
d20=$(date -u -d '-20 days' +%Y-%m-%d)
check "... today: passed 3, held 1" \
    js "(P['$d0']['passed'], P['$d0']['held'], P['$d0']['approved']) == (3, 1, 0)"
check "... yesterday: held 1, discarded 1, expired 1, the filter's discard, delay 14400" \
    js "(P['$d1']['held'], P['$d1']['discarded'], P['$d1']['expired'], P['$d1']['filter_discarded'], P['$d1']['delay_median_s'], P['$d1']['delay_p90_s']) == (1, 1, 1, 1, 14400, 14400)"
check "... two days ago: passed 5, held 2, approved 1, rejected 1, delays 5400 and 6840" \
    js "(P['$d2']['passed'], P['$d2']['held'], P['$d2']['approved'], P['$d2']['rejected'], P['$d2']['delay_median_s'], P['$d2']['delay_p90_s']) == (5, 2, 1, 1, 5400, 6840)"
check "... three days ago: the reversed approval" \
    js "(P['$d3']['held'], P['$d3']['rejected'], P['$d3']['reversed'], P['$d3']['delay_median_s']) == (1, 1, 1, 18000)"
check "... ten and twenty days ago" \
    js "(P['$d10']['held'], P['$d10']['approved'], P['$d10']['delay_median_s'], P['$d20']['held'], P['$d20']['expired']) == (1, 1, 1800, 1, 0)"
check "... the periods add up to the totals" \
    js "all(sum(p[k] for p in L['periods']) == L[k] for k in ('passed', 'held', 'approved', 'rejected', 'discarded', 'expired'))"
check "... a day without anything has zeros and no delay" \
    js "all(p['held'] == 0 and p['delay_median_s'] is None for s, p in P.items() if s not in ('$d0', '$d1', '$d2', '$d3', '$d10', '$d20'))"

run lg stats --json --list dev --since "$d2"
check "--since: from that day on" \
    js "d['since'] == '$d2' and (L['passed'], L['held'], L['approved'], L['rejected'], L['discarded'], L['expired']) == (8, 4, 1, 1, 1, 1)"
check "... delays 3600 7200 14400: median 7200, 90th percentile 12960" \
    js "L['delay_median_s'] == 7200 and L['delay_p90_s'] == 12960"

run lg stats --json --list dev --since 2024-02-29
check "--since a leap day is that day" \
    sh -c "test $rc -eq 0 && grep -q '\"since\":\"2024-02-29\"' '$T/out'"

# the cap on periods counts weeks under --by week, days under --by day
run lg stats --json --list dev --by week --since 2000-01-01
check "--by week since 2000 (some 1400 weeks) exits 0, a period a week" \
    sh -c "test $rc -eq 0 && python3 -c \"
import datetime, json, sys
L = json.load(open('$T/out'))['lists'][0]
s, t = datetime.date(2000, 1, 1), datetime.datetime.now(datetime.timezone.utc).date()
sys.exit(len(L['periods']) != 1 + sum(1 for i in range(1, (t - s).days + 1) if (s + datetime.timedelta(i)).weekday() == 0))\""
run lg stats --json --list dev --by day --since 2000-01-01
check "--by day since 2000 (some 9800 days) is a usage error" \
    sh -c "test $rc -eq 2 && grep -q 'at most 3998' '$T/err'"

run lg stats --json --list dev --by week --since "$d20"
check "--by week: weeks from Monday, the first cut at --since" \
    js "all(__import__('datetime').date.fromisoformat(p['start']).weekday() == 0 for p in L['periods'][1:]) and L['periods'][0]['start'] == '$d20' and all(sum(p[k] for p in L['periods']) == L[k] for k in ('passed', 'held', 'approved', 'rejected', 'discarded', 'expired'))"

run lg stats --list dev --by day
check "text: exits 0" test "$rc" -eq 0
check "... the counts line" \
    grep -q '^  passed 8  held 7  approved 2  rejected 2  discarded 1  expired 1  (discarded by the filter 1)$' "$T/out"
check "... the delays" \
    grep -q "moderators' delay: median 2h 00m, 90th percentile 4h 36m (5 decisions)" "$T/out"
check "... the rates and the drift" \
    sh -c "grep -q '^  ham held 20.0%, spam released 33.3%' '$T/out' && grep -q '^  drift: ham held 11.1% in the last 7 days against 100.0% in the 30 before' '$T/out'"
check "... a row per day" grep -q "^  $d2  *5  *2  *1  *1  *0  *0  *1h 30m  *1h 54m$" "$T/out"
check "... no sparkline off a terminal" sh -c "! grep -q '^  passed  *|' '$T/out'"
if command -v script >/dev/null 2>&1; then
	# (COLUMNS: the charts fit the terminal, whichever runs the tests)
	script -qec "COLUMNS=80 '$LISTGATE' --allow-root --config '$CONF' stats --list dev --by day" /dev/null > "$T/tty" 2>&1
	check "on a terminal: sparklines per period" \
	    sh -c "grep -q '^  passed  *|.*| max 5' '$T/tty' && grep -q '^  held  *|.*| max 2' '$T/tty'"
	script -qec "COLUMNS=80 '$LISTGATE' --allow-root --config '$CONF' stats --list dev" /dev/null > "$T/tty" 2>&1
	check "... and a bar chart without --by" \
	    grep -q '^  passed  *|########################################| 8' "$T/tty"
	# 30 days in 40 columns; 6 counts in 30 columns: the charts fit
	# (they wrapped, a line of 30 marks or a bar of 40 on any terminal)
	script -qec "COLUMNS=40 '$LISTGATE' --allow-root --config '$CONF' stats --list dev --by day" /dev/null > "$T/tty" 2>&1
	check "... in 40 columns: 4 sparklines of 40 at most, the peaks kept" \
	    sh -c "awk '/^  (passed|held|spam|delay) +\|/ { sub(/\r\$/, \"\"); if (length(\$0) > 40) bad = 1; n++ } END { exit !(n == 4 && !bad) }' '$T/tty' && grep -q '^  passed  *|[^|]*@[^|]*| max 5' '$T/tty' && grep -q '^  held  *|[^|]*@[^|]*| max 2' '$T/tty'"
	script -qec "COLUMNS=30 '$LISTGATE' --allow-root --config '$CONF' stats --list dev" /dev/null > "$T/tty" 2>&1
	check "... and a bar chart of 30 columns at most" \
	    sh -c "awk '/^  [a-z]+ +\|[# ]*\| [0-9]/ { sub(/\r\$/, \"\"); if (length(\$0) > 30) bad = 1; n++ } END { exit !(n == 6 && !bad) }' '$T/tty' && grep -q '^  passed  *|#*| 8' '$T/tty'"
else
	echo "# SKIP the terminal checks: script(1) is not installed"
fi

# a decision 1234567 s (14 days 6h 56m 7s) after its post arrived: the
# JSON has the delay to the second
sql "
INSERT INTO held_posts (id, list, arrived_at, size, score, verdict, raw_z,
    raw_sha256, status, decided_by, decided_at)
SELECT 301, 'slow', d0 - interval '15 days', 10, 0.9, 'spam', '\\x00'::bytea,
    decode(lpad(to_hex(301), 64, '0'), 'hex'), 'approved', 'mod',
    d0 - interval '15 days' + interval '1234567 seconds'
  FROM (SELECT date_trunc('day', now() AT TIME ZONE 'UTC')
      AT TIME ZONE 'UTC' AS d0) z;
" || exit 99
run lg stats --json --list slow
check "a delay of 1234567 s is 1234567 in the JSON, not 1.23457e+06" \
    sh -c "test $rc -eq 0 && grep -q '\"delay_median_s\":1234567,\"delay_p90_s\":1234567,' '$T/out'"

# decisions stamped before their posts arrived (the server's clock set
# back between the two): a delay of 0, not "no decision"
sql "
INSERT INTO held_posts (id, list, arrived_at, size, score, verdict, raw_z,
    raw_sha256, status, decided_by, decided_at)
SELECT id, 'skew', d0 - interval '1 day', 10, 0.9, 'spam', '\\x00'::bytea,
    decode(lpad(to_hex(id), 64, '0'), 'hex'), 'rejected', 'mod',
    d0 - interval '1 day' - interval '300 seconds'
  FROM generate_series(401, 402) id,
      (SELECT date_trunc('day', now() AT TIME ZONE 'UTC')
      AT TIME ZONE 'UTC' AS d0) z;
" || exit 99
run lg stats --json --list skew
check "delays below 0 (a clock set back) count as 0, not as none" \
    sh -c "test $rc -eq 0 && grep -q '\"delay_median_s\":0,\"delay_p90_s\":0,\"filter_discarded\":0,\"decisions\":2,' '$T/out'"
run lg stats --list skew
check "... in the text as well" \
    grep -q "moderators' delay: median 0s, 90th percentile 0s (2 decisions)" "$T/out"

# the pass counter remembers 1024 days: a period that begins before has
# its passed posts short (0), and approved / (approved + 0) is no rate
# of ham held (it read 1, every good post held)
sql "
INSERT INTO held_posts (id, list, arrived_at, size, score, verdict, raw_z,
    raw_sha256, status, decided_by, decided_at)
SELECT id, 'old', d0 - make_interval(days => a), 10, 0.9, 'spam',
    '\\x00'::bytea, decode(lpad(to_hex(id), 64, '0'), 'hex'), 'approved',
    'mod', d0 - make_interval(days => a) + interval '1 hour'
  FROM (VALUES (501, 1100), (502, 2)) v(id, a),
      (SELECT date_trunc('day', now() AT TIME ZONE 'UTC')
      AT TIME ZONE 'UTC' AS d0) z;
" || exit 99
printf 'ham_cutoff = 1\nspam_cutoff = 1\n' > "$CONF/lists/old.conf"
lg train --list old --ham "$DATA/ham1.eml" > /dev/null 2>&1
lg filter --list old --mta qmail < "$DATA/ham3.eml" > /dev/null 2>&1
d1100=$(date -u -d '-1100 days' +%Y-%m-%d)
JSLIST=old
run lg stats --json --list old --since "$d1100" --by week
check "--since 1100 days ago: no ham held rate for the span or its first week (passed unknown there)" \
    js "L['approved'] == 2 and L['ham_held_rate'] is None and P['$d1100']['approved'] == 1 and P['$d1100']['ham_held_rate'] is None"
# (the approval 2 days ago and today's pass share a week or not, as the
# calendar falls: each week's own rate, approved / (approved + passed))
check "... but for the weeks the counter remembers" \
    js "len(W) > 0 and all(p['ham_held_rate'] == p['approved'] / (p['approved'] + p['passed']) for p in W) and sum(p['approved'] for p in W) == 1 and sum(p['passed'] for p in W) == 1" \
    "W = [p for p in L['periods'][1:] if p['approved'] or p['passed']]"
run lg stats --list old --since "$d1100"
check "... and none in the text" grep -q '^  ham held -, spam released -' "$T/out"
run lg stats --json --list old
check "... the last 30 days have theirs" js "L['ham_held_rate'] == 0.5"

# a pass counter that cannot be read hides none of the database's
# figures (it dropped the whole list, held and approved included)
printf 'not a pass counter, but long enough to have a header' \
    > "$T/tokens/old.passed"
run lg stats --json --list old --by day
check "an unreadable pass counter: exit 1, said once, naming the file" \
    sh -c "test $rc -eq 1 && test \$(grep -c 'old.passed: not a listgate pass counter' '$T/err') -eq 1"
check "... the list's other figures shown, passed null, no ham held rate" \
    js "L['approved'] == 1 and L['passed'] is None and L['ham_held_rate'] is None and all(p['passed'] is None for p in L['periods']) and L['drift']['last_7_days']['ham_held_rate'] is None"
run lg stats --list old
check "... and in the text" \
    sh -c "test $rc -eq 1 && grep -q '^  passed ?  held 1  approved 1 ' '$T/out' && grep -q '^  ham held -,' '$T/out'"
# on a terminal the bar chart and the sparkline said 0 passed posts
# where the figures above say "?"
if command -v script >/dev/null 2>&1; then
	script -qec "COLUMNS=80 '$LISTGATE' --allow-root --config '$CONF' stats --list old" /dev/null > "$T/tty" 2>&1
	check "... and the bar chart on a terminal: passed ?, not 0" \
	    sh -c "grep -q '^  passed  *| *| ?' '$T/tty' && ! grep -q '^  passed  *|.*| 0' '$T/tty' && grep -q '^  approved  *|#*| 1' '$T/tty'"
	script -qec "COLUMNS=80 '$LISTGATE' --allow-root --config '$CONF' stats --list old --by day" /dev/null > "$T/tty" 2>&1
	check "... and its sparkline: passed ?, not a max of 0" \
	    sh -c "grep -q '^  passed  *|?*| max ?' '$T/tty' && ! grep -q '^  passed  *|.*| max 0' '$T/tty' && grep -q '^  held  *|.*| max 1' '$T/tty'"
else
	echo "# SKIP the terminal checks: script(1) is not installed"
fi
cat "$T/js.err" 2>/dev/null | head -40

echo "1..$n"
[ "$fails" -eq 0 ]

#!/bin/sh
# site_failover.sh - after a failover to a standby that lost the site
# feed's last transaction, the site store is refused, never applied on
# from a feed number that now names another event of the same batch
#
# A training batch's events share their mark (the time of the
# transaction).  Host A trains three events of list a in one batch; the
# standby replays them, then stops; A feeds them into its site store
# (feed numbers s1..s3, position s3), a transaction the standby never
# gets.  The primary dies and the standby is promoted; the sequence the
# feed numbers came from goes back to before s1 (the test arranges
# that the feed's first number is the one that logged the sequence
# ahead: that log is lost), so one new event of list b takes s1, and
# the next feed gives s2, s3, s4 to the three events: s3 is now the
# second event, whose mark is the third's.  A's sync --site must refuse
# its site store (exit 1, naming the rebuild) and leave it alone; it
# took s3 as its own event and applied s4, the third event, twice.  A
# site store that recorded the mark alone (before this check) is still
# taken when its event is the one at its position.  Runs under
# tests/pg.sh with a streaming standby; files in a mktemp -d directory.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
# an old style position record is written with Kyoto Cabinet's tool
command -v kchashmgr > /dev/null 2>&1 ||
    { echo "kchashmgr (kyotocabinet-utils) missing: skip"; exit 77; }
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-sitefo.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
for h in A F; do
	mkdir -p "$T/$h" || exit 99
	printf 'tokens_dir = %s/tokens-%s\ndatabase = host=%s port=%s dbname=%s\nsite_list = site\n' \
	    "$T" "$h" "$PGHOST" "$PGPORT" "$PGDATABASE" > "$T/$h/listgate.conf"
done

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
lgA() { "$LISTGATE" --allow-root --config "$T/A" "$@"; }
lgF() { "$LISTGATE" --allow-root --config "$T/F" "$@"; }
run() { "$@" > "$T/out" 2> "$T/err"; rc=$?; }
sqlp() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
sqls() { psql -X -q -A -t -v ON_ERROR_STOP=1 -p "$PG_STANDBY_PORT" -c "$1"; }
# catchup: tests/lib.sh
stats() { "$LISTGATE" --allow-root --config "$T/$1" score --list site --db-stats; }
pos() { stats "$1" | sed -n 's/^journal_pos //p'; }
posts() { stats "$1" | awk '$1 ~ /_posts$/ { n += $2 } END { print n + 0 }'; }

lgA migrate -q || exit 99
sh "$PG_SH" standby-create || exit 99

# --- the site store's position in a batch, old style (the mark alone) -----
lgA train -q --list c --ham "$DATA/ham1.eml" "$DATA/ham2.eml" || exit 99
lgA sync -q --site || exit 99
p=$(pos A)
# the position record as listgate wrote it before: position, then the
# mark of the event fed at it (the time of its batch)
m=$(sqlp "SELECT greatest(floor(extract(epoch FROM j.created_at))::int8 * 1000000 + round(extract(microseconds FROM j.created_at AT TIME ZONE 'UTC'))::int8 % 1000000, 1) FROM site_feed f JOIN train_journal j ON j.id = f.event_id WHERE f.seq = $p")
le() { printf '%016x' "$1" | sed 's/\(..\)\(..\)\(..\)\(..\)\(..\)\(..\)\(..\)\(..\)/\8\7\6\5\4\3\2\1/'; }
kchashmgr set -sx "$T/tokens-A/site.kch" 00706f73 "$(le "$p")$(le "$m")" || exit 99
lgA train -q --list c --spam "$DATA/spam1.eml" || exit 99
run lgA sync --site
check "a site store that recorded its event's mark alone still syncs" \
    test "$rc" -eq 0
check "... applying the new event" test "$(posts A)" -eq 3

# --- a failover that loses the feed's transaction ---------------------------
lgA train -q --list a --ham "$DATA/ham1.eml" "$DATA/ham2.eml" "$DATA/ham3.eml" ||
    exit 99
# the feed's first number must be the one that logs the sequence ahead
lc=$(sqlp "SELECT log_cnt FROM train_journal_id_seq")
i=0
while [ "$i" -lt "$lc" ]; do
	sqlp "SELECT nextval('train_journal_id_seq')" > /dev/null || exit 99
	i=$((i + 1))
done
sqlp "CHECKPOINT" > /dev/null || exit 99
catchup || exit 99
sh "$PG_SH" standby-stop || exit 99
lgA sync -q --site || exit 99
s1=$(sqlp "SELECT min(f.seq) FROM site_feed f JOIN train_journal j ON j.id = f.event_id WHERE j.list = 'a'")
before=$(posts A)
check "host A's site store learnt the batch" test "$before" -eq 6
$PG_CTL_STOP
{ sh "$PG_SH" standby-start && sh "$PG_SH" standby-promote; } || exit 99
for h in A F; do
	sed "s/port=$PGPORT /port=$PG_STANDBY_PORT /" "$T/$h/listgate.conf" > "$T/c" &&
	    mv "$T/c" "$T/$h/listgate.conf" || exit 99
done
lgA train -q --list b --spam "$DATA/spam2.eml" || exit 99
if [ "$(sqls "SELECT max(id) FROM train_journal WHERE list = 'b'")" != "$s1" ]; then
	echo "# the promoted standby did not hand out $s1 again: cannot test" >&2
	exit 99
fi
cp "$T/tokens-A/site.kch" "$T/before.kch"
run lgA sync --site
check "after the failover, host A's sync --site exits 1" test "$rc" -eq 1
check "... saying to rebuild the site store" \
    grep -q "listgate --config [^ ]* rebuild --list site" "$T/err"
check "... and leaves the file alone" cmp -s "$T/tokens-A/site.kch" "$T/before.kch"
check "... having learnt no post twice" test "$(posts A)" -eq "$before"
run lgA rebuild --list site
check "rebuild of the site store exits 0" test "$rc" -eq 0
lgF sync -q --site || exit 99
check "... and makes it what a fresh host builds" \
    test "$(posts A) $(pos A)" = "$(posts F) $(pos F)"

echo "1..$n"
[ "$fails" -eq 0 ]

#!/bin/sh
# queue_quarantine.sh - sync and rebuild never block on one journal event
# they cannot apply: it is quarantined (marked in the journal, logged,
# reported) and the events after it are applied
#
# Two events of list q are damaged with SQL, as a disk or a careless
# hand could: one's compressed bytes are cut in half, another's recorded
# size no longer matches them.  sync must apply every other event, mark
# the two, say so, and leave a token file equal (counts, not position)
# to one built from the good events alone (list r).  Later syncs, a
# rebuild and a second host skip the marked events without reading
# them.  The site store, which reads only the head of a post larger
# than the site list's max_scan_bytes, learns one damaged past its head
# in its syncs and its rebuild alike, although the list's own sync
# quarantines it.  Runs under tests/pg.sh; files in a mktemp -d
# directory.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
QHOLD=$top_builddir/tests/qhold
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-quarantine.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
for h in a b; do
	mkdir -p "$T/conf-$h" || exit 99
	printf 'tokens_dir = %s/tokens-%s\n' "$T" "$h" > "$T/conf-$h/listgate.conf"
done

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
lg() { "$LISTGATE" --allow-root --config "$T/conf-a" "$@"; }
run() { "$@" > "$T/out" 2> "$T/err"; rc=$?; }
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
# dump HOST LIST [all]: the list's token file as sorted hex lines,
# without the journal position unless "all"
dump() {
	if command -v kchashmgr >/dev/null 2>&1; then
		kchashmgr list -pv -px "$T/tokens-$1/$2.kch"
	else
		"$LISTGATE" --allow-root --config "$T/conf-$1" score --list "$2" --db-dump
	fi | LC_ALL=C sort | if [ "${3:-}" = all ]; then cat; else
		grep -v '^00 70 6F 73'; fi
}
# journal LIST CLASS FILE: one event; its id on stdout
journal() {
	"$QHOLD" -j "$1" "$2" "$3" > /dev/null || exit 99
	sql "SELECT max(id) FROM train_journal WHERE list = '$1'"
}

lg migrate -q || exit 99

# list q: six events, two of them damaged below; list r: the four good
# ones, in the same order
journal q spam "$DATA/spam1.eml" > /dev/null
bad1=$(journal q spam "$DATA/spam2.eml")
journal q ham "$DATA/ham1.eml" > /dev/null
bad2=$(journal q ham "$DATA/ham2.eml")
journal q spam "$DATA/spam3.eml" > /dev/null
last=$(journal q ham "$DATA/ham3.eml")
for p in spam1 ham1 spam3 ham3; do
	case $p in spam*) c=spam ;; *) c=ham ;; esac
	journal r $c "$DATA/$p.eml" > /dev/null
done
sql "UPDATE train_journal SET message_z = substring(message_z FROM 1 FOR length(message_z) / 2) WHERE id = $bad1"
sql "UPDATE train_journal SET size = size + 1 WHERE id = $bad2"

# --- the first sync meets them ------------------------------------------------
run lg sync --list q
check "sync with two damaged events exits 0" test "$rc" -eq 0
check "... applies the four others" \
    grep -q "^list q: 4 journal events applied, 2 quarantined and skipped, position $last\$" "$T/out"
check "... names the first damaged event and quarantines it" \
    grep -q "journal event $bad1 cannot be applied (stored message is corrupt.*): quarantined and skipped" "$T/err"
check "... and the second" \
    grep -q "journal event $bad2 cannot be applied (stored message is corrupt.*): quarantined and skipped" "$T/err"
check "... marks both in the journal, with the reason" \
    test "$(sql "SELECT count(*) FROM train_journal WHERE quarantined_at IS NOT NULL AND quarantine_reason LIKE 'stored message is corrupt%'")" -eq 2
check "... and only those" \
    test "$(sql "SELECT string_agg(id::text, ' ' ORDER BY id) FROM train_journal WHERE quarantined_at IS NOT NULL")" = "$bad1 $bad2"
"$LISTGATE" --allow-root --config "$T/conf-a" sync -q --list r || exit 99
dump a q > "$T/q"
dump a r > "$T/r"
check "the token file equals one trained on the good events only" \
    cmp -s "$T/q" "$T/r"

# --- training goes on after them ----------------------------------------------
last=$(journal q ham "$DATA/ham4.eml")
journal r ham "$DATA/ham4.eml" > /dev/null
run lg sync --list q
check "the next sync exits 0" test "$rc" -eq 0
check "... applies the new event" \
    grep -q "^list q: 1 journal event applied, position $last\$" "$T/out"
check "... and warns of nothing (the damaged ones are behind it)" \
    test ! -s "$T/err"
run lg sync
check "sync of every list exits 0" test "$rc" -eq 0
dump a q > "$T/q"
dump a r > "$T/r"
check "... and the counts still equal the good events'" cmp -s "$T/q" "$T/r"

# --- rebuild, and a second host, skip them unread ------------------------------
dump a q all > "$T/before"
run lg rebuild --list q
check "rebuild exits 0" test "$rc" -eq 0
check "... says it skipped both" \
    grep -q "rebuilt .* from 5 journal events, 2 quarantined and skipped" "$T/out"
check "... as quarantined before" \
    test "$(grep -c "skipped: quarantined before (stored message is corrupt" "$T/err")" -eq 2
dump a q all > "$T/after"
check "... and builds the same file (position included)" \
    cmp -s "$T/before" "$T/after"
run "$LISTGATE" --allow-root --config "$T/conf-b" sync --list q
check "a second host's first sync exits 0" test "$rc" -eq 0
check "... reports the two as quarantined before" \
    test "$(grep -c "journal event \($bad1\|$bad2\) skipped: quarantined before" "$T/err")" -eq 2
dump b q all > "$T/b"
check "... and builds the same file" cmp -s "$T/before" "$T/b"

# --- a quarantine is no excuse for a real failure ----------------------------------
rm -f "$T/tokens-a/q.kch"
$PG_CTL_STOP
run lg sync --list q
check "with the database down sync still fails (exit 1)" test "$rc" -eq 1
$PG_CTL_START
check "... and quarantines nothing more" \
    test "$(sql "SELECT count(*) FROM train_journal WHERE quarantined_at IS NOT NULL")" -eq 2

# --- the site store judges an event by what it reads itself --------------------
# A post larger than the site list's max_scan_bytes is read by the site
# store only as far as its head, whose bytes are sound; list big's own
# sync reads it whole, finds that it lies about its size and
# quarantines it.  The site store must not learn it in one run and skip
# it (as quarantined) in the next: sync --site and rebuild agree.
mkdir -p "$T/conf-s/lists" || exit 99
printf 'tokens_dir = %s/tokens-s\nsite_list = site\n' "$T" > "$T/conf-s/listgate.conf"
printf 'max_scan_bytes = 1024\n' > "$T/conf-s/lists/site.conf"
lgs() { "$LISTGATE" --allow-root --config "$T/conf-s" "$@"; }
awk 'BEGIN { srand(3); printf "From: a@example.org\nSubject: big\n\n";
	for (k = 0; k < 12000; k++)
		printf "w%d%s", int(rand() * 50000), k % 12 == 11 ? "\n" : " " }' \
    > "$T/big.eml"
big=$(journal big spam "$T/big.eml")
journal big ham "$DATA/ham1.eml" > /dev/null
sql "UPDATE train_journal SET size = size + 1 WHERE id = $big"
run lgs sync --site
check "sync --site with a post damaged past its head exits 0" test "$rc" -eq 0
run lgs sync --list big
check "... list big's sync quarantines it" \
    test "$(sql "SELECT count(*) FROM train_journal WHERE id = $big AND quarantined_at IS NOT NULL")" -eq 1
run lgs sync --site
dump s site > "$T/site-sync"
run lgs rebuild --list site
check "... a rebuild of the site store exits 0" test "$rc" -eq 0
dump s site > "$T/site-rebuilt"
check "... and makes the file the syncs made" \
    cmp -s "$T/site-sync" "$T/site-rebuilt"

# --- the site list's own events: the site store's sync is their sync ------------
# list site's token file is the site store, so no list sync ever reads
# its events but the site store's: a damaged one of them must be
# quarantined there, once, and other lists' left to their own syncs.
bads=$(journal site spam "$DATA/spam4.eml")
badq=$(journal q spam "$DATA/spam4.eml")
journal site ham "$DATA/ham4.eml" > /dev/null
sql "UPDATE train_journal SET message_z = substring(message_z FROM 1 FOR length(message_z) / 2) WHERE id IN ($bads, $badq)"
run lgs sync --site
check "sync --site with a damaged event of the site list's own exits 0" \
    test "$rc" -eq 0
check "... quarantines it in the journal" \
    test "$(sql "SELECT count(*) FROM train_journal WHERE id = $bads AND quarantined_at IS NOT NULL AND quarantine_reason LIKE 'stored message is corrupt%'")" -eq 1
check "... and says so" \
    grep -q "journal event $bads cannot be applied (stored message is corrupt.*): quarantined and skipped" "$T/err"
check "... but leaves another list's to that list's sync" \
    test "$(sql "SELECT count(*) FROM train_journal WHERE id = $badq AND quarantined_at IS NOT NULL")" -eq 0
check "... saying so" \
    grep -q "journal event $badq cannot be applied (.*): skipped, but .*the site store leaves that to the list's own sync" "$T/err"

echo "1..$n"
[ "$fails" -eq 0 ]

#!/bin/sh
# queue_train.sh - `listgate train` with a database configured goes
# through the training journal and then syncs; the token file it gives
# equals one trained directly (no database); with the database down
# nothing is trained.  Prints train throughput both ways.
#
# Runs under tests/pg.sh; temporary files in a mktemp -d directory.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-qtrain.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
# conf-db: the database from the PG* environment; conf-solo: no
# database at all (the environment is cleared for it)
for c in db solo; do
	mkdir -p "$T/conf-$c" || exit 99
	printf 'tokens_dir = %s/tokens-%s\n' "$T" "$c" > "$T/conf-$c/listgate.conf"
done

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), pg_part, lock_file
lgdb() { "$LISTGATE" --allow-root --config "$T/conf-db" "$@"; }
lgsolo() {
	env -u PGHOST -u PGPORT -u PGUSER -u PGDATABASE \
	    "$LISTGATE" --allow-root --config "$T/conf-solo" "$@"
}
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
# the token file of list dev (or $2) without the journal position record
dump() {
	if command -v kchashmgr >/dev/null 2>&1; then
		# (not the journal position, nor the feature families that
		# only a file built from the journal records)
		kchashmgr list -pv -px "$T/tokens-$1/${2:-dev}.kch" | LC_ALL=C sort |
		    grep -v -e '^00 70 6F 73' -e '^00 66 65 61 74 73'
	else
		"$LISTGATE" --allow-root --config "$T/conf-$1" score --list "${2:-dev}" --db-dump |
		    LC_ALL=C sort
	fi
}
now() { date +%s.%N; }

lgdb migrate -q || exit 99
lgdb train --list dev --spam "$DATA"/spam[0-9].eml > "$T/sum-db" 2> "$T/err"
check "train --spam with a database exits 0" test $? -eq 0
# the tokens directory does not exist yet: train makes it, as without a
# database, so that the journal's posts are learnt as they are journalled
check "... and warns of nothing (the tokens directory is made first)" \
    test ! -s "$T/err"
test -s "$T/err" && sed 's/^/# /' "$T/err"
lgdb train --list dev --ham "$DATA"/ham[0-9].eml >> "$T/sum-db"
check "train --ham with a database exits 0" test $? -eq 0
check "the posts are in the journal" \
    test "$(sql "SELECT count(*) FROM train_journal WHERE list = 'dev' AND source = 'manual'")" -eq 8
check "the token file was synced" test -f "$T/tokens-db/dev.kch"
lgsolo train --list dev --spam "$DATA"/spam[0-9].eml > "$T/sum-solo" || exit 99
lgsolo train --list dev --ham "$DATA"/ham[0-9].eml >> "$T/sum-solo" || exit 99
dump db > "$T/d-db"
dump solo > "$T/d-solo"
check "journal training = direct training, record for record" \
    cmp -s "$T/d-db" "$T/d-solo"
lgdb train --list dev --spam --unlearn "$DATA/spam1.eml" >> "$T/sum-db"
lgsolo train --list dev --spam --unlearn "$DATA/spam1.eml" >> "$T/sum-solo"
dump db > "$T/d-db"
dump solo > "$T/d-solo"
check "unlearning through the journal = unlearning directly" \
    cmp -s "$T/d-db" "$T/d-solo"
# the summary: posts, new tokens, seconds, with a database too (it said
# "trained 4 posts as spam through the journal in 0.12 s": no tokens)
sed 's/ through the journal//; s/ in [0-9.]* s$//' "$T/sum-db" > "$T/sum-db.cut"
sed 's/ in [0-9.]* s$//' "$T/sum-solo" > "$T/sum-solo.cut"
check "the summary says the new tokens, through the journal as directly" \
    sh -c "grep -q '^trained 4 posts as spam ([1-9][0-9]* new tokens)\$' '$T/sum-db.cut' && cmp -s '$T/sum-db.cut' '$T/sum-solo.cut'"
check "... and the tokens an unlearn removed" \
    grep -q '^unlearned 1 post as spam ([1-9][0-9]* tokens removed)$' "$T/sum-db.cut"
sed 's/^/# /' "$T/sum-db"
check "the unlearn is journaled" \
    test "$(sql "SELECT count(*) FROM train_journal WHERE op = 'unlearn'")" -eq 1
# unlearning a post the journal never learnt as the class (the other
# class given, a post never trained, one unlearned already) was
# journaled, and every host's sync and every rebuild took it from the
# counts of the posts that were, exit 0: it is skipped, named, not
# journaled, and the run exits 1, as without a database
lgdb train -q --list nlj --spam "$DATA/spam1.eml" "$DATA/spam3.eml" || exit 99
lgdb train -q --list nlj --ham "$DATA/ham1.eml" || exit 99
dump db nlj > "$T/nl0"
lgdb train --list nlj --spam --unlearn "$DATA/spam2.eml" > "$T/out" 2> "$T/err"
rc=$?
check "unlearn of a post the journal never learnt: exit 1 (exit $rc)" \
    test "$rc" -eq 1
check "... naming it, saying nothing was unlearned for it" grep -q \
    "^listgate train: list nlj: $DATA/spam2.eml: never learnt as spam (the journal has no learning of these bytes as spam left to undo): skipped, nothing unlearned for it" \
    "$T/err"
sed 's/^/# /' "$T/err"
check "... not journaled" test "$(sql "SELECT count(*) FROM train_journal WHERE list = 'nlj' AND op = 'unlearn'")" -eq 0
dump db nlj > "$T/nl1"
check "... and every count is as it was" cmp -s "$T/nl0" "$T/nl1"
lgdb train --list nlj --ham --unlearn "$DATA/spam1.eml" "$DATA/ham1.eml" \
    "$DATA/spam4.eml" > "$T/out" 2> "$T/err"
rc=$?
check "unlearn of the wrong class: exit 1, the post of the class unlearned" \
    sh -c "test $rc -eq 1 && grep -q '^unlearned 1 post as ham through the journal' '$T/out'"
check "... the others named, the first of them" grep -q \
    "^listgate train: list nlj: 2 posts were never learnt as ham (the journal has no learning of their bytes as ham left to undo; the first: $DATA/spam1.eml): skipped, nothing unlearned for them" \
    "$T/err"
check "... one unlearn journaled" test "$(sql "SELECT count(*) FROM train_journal WHERE list = 'nlj' AND op = 'unlearn'")" -eq 1
lgdb score --list nlj --db-stats > "$T/out" 2>&1
check "... and the spam posts' counts are untouched" \
    sh -c "grep -qx 'spam_posts 2' '$T/out' && grep -qx 'ham_posts 0' '$T/out'"
lgdb train --list nlj --ham --unlearn "$DATA/ham1.eml" > "$T/out" 2> "$T/err"
rc=$?
check "unlearning a post twice: the second time skipped (exit $rc)" \
    sh -c "test $rc -eq 1 && grep -q 'ham1.eml: never learnt as ham' '$T/err'"
lgdb train -q --list nlj --spam --unlearn "$DATA/spam3.eml" || exit 99
check "a post learnt is unlearned (exit $?)" test "$(sql "SELECT count(*) FROM train_journal WHERE list = 'nlj' AND op = 'unlearn'")" -eq 2
# what every host's sync gives, a rebuild from the journal gives
dump db nlj > "$T/nl2"
lgdb rebuild -q --list nlj > "$T/out" 2>&1 || exit 99
dump db nlj > "$T/nl3"
check "... and a rebuild from the journal equals the synced file" \
    cmp -s "$T/nl2" "$T/nl3"
lgsolo train -q --list nlj --spam "$DATA/spam1.eml" "$DATA/spam3.eml" || exit 99
lgsolo train -q --list nlj --spam --unlearn "$DATA/spam3.eml" || exit 99
dump solo nlj > "$T/nl4"
check "... and the file trained directly" cmp -s "$T/nl2" "$T/nl4"
# the same post twice in one run is journaled once
lgdb train --list dupj --spam "$DATA/spam1.eml" "$DATA/spam1.eml" > "$T/out" 2>&1
check "train FILE FILE with a database: one journal event" \
    test "$(sql "SELECT count(*) FROM train_journal WHERE list = 'dupj'")" -eq 1
check "... the other counted as a duplicate" \
    grep -q "^skipped 1 duplicate post" "$T/out"
# the progress line on a terminal: the posts go into the journal, and the
# token file learns them after it; no count of new tokens until then (it
# said "0 tokens new" for the whole run, while the summary gave the count)
if command -v script >/dev/null 2>&1; then
	script -qec "'$LISTGATE' --allow-root --config '$T/conf-db' train --list ttyj --spam $DATA/spam1.eml $DATA/spam2.eml" /dev/null > "$T/tty" 2>&1
	tr '\r' '\n' < "$T/tty" | sed 's/^/# /'
	check "on a terminal through the journal: the progress line says so" \
	    grep -q 'trained 2 posts through the journal, [0-9]* posts/s' "$T/tty"
	check "... and no count of tokens it does not have" \
	    sh -c "! grep -q '0 tokens new' '$T/tty' && grep -q 'trained 2 posts as spam through the journal ([1-9][0-9]* new tokens)' '$T/tty'"
else
	ok "# SKIP no script(1): the progress line"
	ok "# SKIP no script(1): the progress line"
fi

# a stop while the posts are committed, or synced into the token file:
# no next post to stop at (it said "stopping at the next post"); the
# run finishes and says so
for st in commit sync; do
	LISTGATE_TEST_TRAIN_STOP=$st lgdb train -q --list "stop$st" --spam \
	    "$DATA/spam1.eml" "$DATA/spam2.eml" > "$T/out" 2>&1
	check "train stopped at its $st finishes it (exit $?)" test $? -eq 0
	sed 's/^/# /' "$T/out"
	check "... and says so, not that it stops at a next post" sh -c \
	    "grep -q '^listgate train: .*finishing the $st' '$T/out' && ! grep -q 'next post' '$T/out'"
	check "... both posts journaled" \
	    test "$(sql "SELECT count(*) FROM train_journal WHERE list = 'stop$st'")" -eq 2
	lgdb score --list "stop$st" --db-stats > "$T/out" 2>&1
	check "... and in the token file" grep -qx "spam_posts 2" "$T/out"
done

# a second host of the same database, its token file not made yet: the
# sync after a run applies the list's whole journal, and its summary
# gave that file's every token as the run's ("trained 1 post ... (1779
# new tokens)"); it says the sync applied other events too now
mkdir -p "$T/conf-db2" || exit 99
printf 'tokens_dir = %s/tokens-db2\n' "$T" > "$T/conf-db2/listgate.conf"
ndev=$(sql "SELECT count(*) FROM train_journal WHERE list = 'dev'")
"$LISTGATE" --allow-root --config "$T/conf-db2" train --list dev --ham \
    "$DATA/ham-test.eml" > "$T/out" 2>&1
check "train on a host whose token file is behind the journal exits 0" \
    test $? -eq 0
sed 's/^/# /' "$T/out"
check "... its summary says the sync applied the $ndev other events" \
    grep -q "^trained 1 post as ham through the journal in [0-9.]* s (its sync also applied $ndev other journal events: the token file's change is not this run's alone)\$" "$T/out"
"$LISTGATE" --allow-root --config "$T/conf-db2" train --list dev --spam \
    "$DATA/spam-test.eml" > "$T/out" 2>&1
sed 's/^/# /' "$T/out"
check "... and once the file is up to date, the run's new tokens" \
    grep -q "^trained 1 post as spam through the journal ([1-9][0-9]* new tokens) in [0-9.]* s\$" "$T/out"

$PG_CTL_STOP
lgdb train -q --list dev --spam "$DATA/spam2.eml" > "$T/out" 2>&1
check "train with the database down exits 1" test $? -eq 1
# with worker threads the database is opened meanwhile: the same words
# as without, naming the list, the connection's error, and what became
# of the posts
LISTGATE_TRAIN_THREADS=0 lgdb train -q --list dev --spam \
    "$DATA"/spam[0-9].eml > "$T/out0" 2>&1
r0=$?
LISTGATE_TRAIN_THREADS=2 lgdb train -q --list dev --spam \
    "$DATA"/spam[0-9].eml > "$T/out2" 2>&1
check "... with or without worker threads" test $? -eq 1 -a "$r0" -eq 1
check "... saying the same" cmp -s "$T/out0" "$T/out2"
check "... naming the list and the connection's failure" \
    grep -q "^listgate train: list dev: cannot connect to the database" "$T/out2"
check "... and that nothing was journaled" \
    grep -qx "listgate train: list dev: stopped; none of the posts were journaled" "$T/out2"
sed 's/^/# /' "$T/out0" "$T/out2"
$PG_CTL_START
dump db > "$T/d-db2"
check "... and trained nothing" cmp -s "$T/d-db" "$T/d-db2"

# --- throughput: an mbox of generated posts ------------------------------------
N=${LG_TRAIN_POSTS:-3000}
awk -v n="$N" 'BEGIN { srand(5); for (i = 0; i < n; i++) {
	printf "From sender@example.org Mon Jan  1 00:00:00 2024\n";
	printf "From: u%d@example.org\nSubject: post %d w%d\n", i % 300, i, i;
	printf "Message-ID: <%d@example.org>\n\n", i;
	for (k = 0; k < 250; k++)
		printf "w%d%s", int(rand() * rand() * 20000), k % 12 == 11 ? "\n" : " ";
	printf "\n\n" } }' > "$T/mbox"
t0=$(now)
lgdb train -q --list big --ham "$T/mbox"
check "train of $N posts through the journal exits 0" test $? -eq 0
t1=$(now)
lgsolo train -q --list big --ham "$T/mbox"
t2=$(now)
check "the journal holds them" \
    test "$(sql "SELECT count(*) FROM train_journal WHERE list = 'big'")" -eq "$N"
# posts are tokenized (and compressed for the journal) ahead by worker
# threads: the token files are the same with none and with four
LISTGATE_TRAIN_THREADS=0 lgsolo train -q --list one --ham "$T/mbox" ||
    exit 99
LISTGATE_TRAIN_THREADS=4 lgsolo train -q --list four --ham "$T/mbox" ||
    exit 99
LISTGATE_TRAIN_THREADS=0 lgdb train -q --list one --ham "$T/mbox" ||
    exit 99
LISTGATE_TRAIN_THREADS=4 lgdb train -q --list four --ham "$T/mbox" ||
    exit 99
dump solo one > "$T/d-one"
dump solo four > "$T/d-four"
dump db four > "$T/d-dbfour"
check "$N posts learnt in four threads = in one" \
    test "$(wc -l < "$T/d-one")" -gt 1000
check "... token file for token file" cmp -s "$T/d-one" "$T/d-four"
check "... and through the journal" cmp -s "$T/d-one" "$T/d-dbfour"
events() {
	sql "SELECT count(*), md5(string_agg(md5(message_z) || size, ','
	    ORDER BY id)) FROM train_journal WHERE list = '$1'"
}
check "... which journaled the same events in the same order" \
    test "$(events one)" = "$(events four)" -a "$(events four)" != "0|"
# a statement_timeout set for the filter's hold path (the conninfo's
# options) does not cut a training run, whose journal COPY lasts it
mkdir -p "$T/conf-st" || exit 99
printf 'tokens_dir = %s/tokens-st\ndatabase = "options='"'"'-c statement_timeout=100'"'"'"\n' \
    "$T" > "$T/conf-st/listgate.conf"
# (twice as many posts: a second mbox of the same posts with other
# Message-IDs; the same mbox twice would be learnt once)
sed 's/^Message-ID: <\(.*\)>$/Message-ID: <b.\1>/' "$T/mbox" > "$T/mbox2" ||
    exit 99
LISTGATE_TRAIN_THREADS=0 "$LISTGATE" --allow-root --config "$T/conf-st" \
    train -q --list slow --ham "$T/mbox" "$T/mbox2" 2> "$T/err-st"
check "train under statement_timeout = 100 ms exits 0" test $? -eq 0
sed 's/^/# /' "$T/err-st"
check "... and journals every post" \
    test "$(sql "SELECT count(*) FROM train_journal WHERE list = 'slow'")" -eq $((2 * N))
# nor a sync's or a rebuild's reading of the journal: one statement
# that lasts while the posts it sends are learnt, the server waiting to
# send the rest (40 posts of 120 KB: 2 MB compressed, far more than the
# socket holds, and a second of learning natively; the reading was
# cancelled, "the token file is unchanged")
awk 'BEGIN { srand(7); for (i = 0; i < 40; i++) {
	printf "From sender@example.org Mon Jan  1 00:00:00 2024\n";
	printf "From: u%d@example.org\nSubject: long post %d\n", i, i;
	printf "Message-ID: <long%d@example.org>\n\n", i;
	for (k = 0; k < 15000; k++)
		printf "w%d%s", int(rand() * 1000000), k % 12 == 11 ? "\n" : " ";
	printf "\n\n" } }' > "$T/mbox-long"
lgdb train -q --list long --ham "$T/mbox-long" || exit 99
lgst() { "$LISTGATE" --allow-root --config "$T/conf-st" "$@"; }
lgst sync --list long > "$T/out-st" 2>&1
check "sync under statement_timeout = 100 ms of long posts exits 0" \
    test $? -eq 0
sed 's/^/# /' "$T/out-st"
dump db long > "$T/d-long-db"
dump st long > "$T/d-long-st"
check "... and learns them all" \
    sh -c "test -s '$T/d-long-st' && cmp -s '$T/d-long-db' '$T/d-long-st'"
lgst rebuild --list long > "$T/out-st" 2>&1
check "rebuild under statement_timeout = 100 ms of long posts exits 0" \
    test $? -eq 0
sed 's/^/# /' "$T/out-st"
dump st long > "$T/d-long-st"
check "... the same token file" \
    sh -c "test -s '$T/d-long-st' && cmp -s '$T/d-long-db' '$T/d-long-st'"
# a post larger than the journal keeps (1 GiB; a sparse file here) is
# named and skipped: the others are journaled and learnt
mkdir -p "$T/huge" || exit 99
cp "$DATA/spam1.eml" "$T/huge/a" && cp "$DATA/spam2.eml" "$T/huge/c" &&
    truncate -s 1073741825 "$T/huge/b" || exit 99
lgdb train -q --list huge --spam "$T/huge" 2> "$T/err-huge"
check "a post over 1 GiB: train exits 1" test $? -eq 1
check "... naming it" grep -q "huge/b: post of 1073741825 bytes is larger than the journal keeps" "$T/err-huge"
check "... and journals the others" \
    test "$(sql "SELECT count(*) FROM train_journal WHERE list = 'huge'")" -eq 2
lgdb score --list huge --db-stats > "$T/stats-huge" 2>&1
check "... which the token file learnt" grep -qx "spam_posts 2" "$T/stats-huge"
rm -f "$T/huge/b"
# a token file that is a symbolic link (to another disk) stays one
# through a rebuild from the journal, and the rebuild builds its new file
# beside the link's target: it built it in the tokens directory, whose
# disk may have no room for it
mkdir -p "$T/disk" && chmod 700 "$T/disk" || exit 99
mv "$T/tokens-db/huge.kch" "$T/disk/huge.kch" &&
    ln -s "$T/disk/huge.kch" "$T/tokens-db/huge.kch" || exit 99
if command -v strace >/dev/null 2>&1 &&
    strace -f -o /dev/null -e trace=none true 2>/dev/null; then
	# (LeakSanitizer cannot work under ptrace: it would end the traced
	# run with an error of its own, exit 1; the other runs check leaks)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
	    strace -f -o "$T/strace-rb" -e trace=openat,open,rename \
	    "$LISTGATE" --allow-root --config "$T/conf-db" rebuild \
	    --list huge > "$T/out-rb" 2>&1
	rc=$?
	check "rebuild of a token file that is a link exits 0 (exit $rc)" \
	    test "$rc" -eq 0
	check "... writing nothing of it in the tokens directory" \
	    sh -c "! grep -E 'O_CREAT|rename' '$T/strace-rb' | grep -q '$T/tokens-db/\.huge\.'"
	check "... building it beside the link's target" \
	    grep -q "$T/disk/\.huge\.rebuild-" "$T/strace-rb"
else
	lgdb rebuild --list huge > "$T/out-rb" 2>&1
	check "rebuild of a token file that is a link exits 0" test $? -eq 0
	ok "# SKIP no strace (or no ptrace here): where rebuild builds"
	ok "# SKIP no strace (or no ptrace here): where rebuild builds"
fi
check "... and keeps the link, the rebuilt file its target" \
    sh -c "test -L '$T/tokens-db/huge.kch' && test ! -L '$T/disk/huge.kch'"
lgdb score --list huge --db-stats > "$T/stats-huge" 2>&1
check "... which has the posts" grep -qx "spam_posts 2" "$T/stats-huge"
awk -v a="$t0" -v b="$t1" -v c="$t2" -v n="$N" 'BEGIN {
	printf "# train %d posts (%d KiB each): through the journal + sync %.0f posts/s, token file only %.0f posts/s\n",
	    n, 2, n / (b - a), n / (c - b) }'

echo "1..$n"
[ "$fails" -eq 0 ]

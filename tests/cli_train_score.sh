#!/bin/sh
# cli_train_score.sh - `listgate train` and `listgate score` end to end
#
# Works in a private temporary configuration directory, removed at the
# end; never reads /etc.  Needs $LISTGATE and $top_srcdir (set by make).
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-cli-train.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
mkdir -p "$CONF/lists" || exit 99
printf 'tokens_dir = %s/tokens\nlock_wait_ms = 3000\n' "$CONF" \
    > "$CONF/listgate.conf"

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), pg_part, fifo_wait
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
# run a command, keep its stdout/stderr in $T/out $T/err and its status in $rc
run() { "$@" > "$T/out" 2> "$T/err"; rc=$?; }

# --- help and usage ---------------------------------------------------
run lg train --help
check "train --help exits 0" test "$rc" -eq 0
check "train --help prints usage" grep -q "usage: listgate" "$T/out"
run lg score --help
check "score --help exits 0" test "$rc" -eq 0
check "score --help prints usage" grep -q -- "--json" "$T/out"
check "... and when a post's name follows its score: for an mbox or a directory of one post too" \
    grep -q "or an mbox, a maildir or a directory, even of one post" "$T/out"
# migrate --help names the key that names the database (it said
# "conninfo", a key listgate.conf does not have)
run lg migrate --help
check "migrate --help names the key database" sh -c \
    "test $rc -eq 0 && grep -q 'the key database of listgate.conf' '$T/out' && ! grep -q conninfo '$T/out'"
run lg train --spam "$DATA/spam1.eml"
check "train without --list is a usage error" test "$rc" -eq 2
run lg train --list dev "$DATA/spam1.eml"
check "train without --spam/--ham is a usage error" test "$rc" -eq 2
run lg train --list dev --spam --ham "$DATA/spam1.eml"
check "--spam with --ham is a usage error" test "$rc" -eq 2
run lg train --list dev --spam
check "train without PATH is a usage error" test "$rc" -eq 2
run lg score
check "score without --list is a usage error" test "$rc" -eq 2
# getopt's own messages carry the prefix of every other message
for c in train score tokens held tune user "config check"; do
	run lg $c --bogus
	check "$c --bogus: a usage error that begins 'listgate $c:'" sh -c \
	    "test $rc -eq 2 && head -1 '$T/err' | grep -q \"^listgate $c: unrecognized option '--bogus'\""
done
# standard input is read once: a second - would learn an empty post
run lg train --list dev --spam - "$DATA/spam1.eml" - < "$DATA/spam2.eml"
check "train with - twice is a usage error" test "$rc" -eq 2
check "... that says - is read once" grep -q -- "- (standard input) may be given only once" "$T/err"
check "... and trains nothing" test ! -e "$CONF/tokens/dev.kch"
run lg score --list dev - - < "$DATA/spam2.eml"
check "score with - twice is a usage error" test "$rc" -eq 2
check "... that says - is read once" grep -q -- "- (standard input) may be given only once" "$T/err"

# --- bad list names: refused before any path is built -------------------
for name in ../x ../../tmp/x 'a/b' '.hidden' 'UPPER'; do
	run lg train --list "$name" --spam "$DATA/spam1.eml"
	check "train refuses list name '$name'" test "$rc" -eq 2 -o "$rc" -eq 1
	run lg score --list "$name" "$DATA/spam1.eml"
	check "score refuses list name '$name'" test "$rc" -eq 2 -o "$rc" -eq 1
done
# a name the pattern allows but for its "..": the message says why (it
# gave only the pattern, which a..b matches)
dotdot="bad list name 'a..b' (want [a-z0-9][a-z0-9._-]*, at most 64 bytes, no \"..\")"
run lg train --list a..b --spam "$DATA/spam1.eml"
check "train --list a..b: a usage error that names the \"..\"" \
    sh -c 'test "$1" -eq 2 && grep -qF "$2" "$3"' - "$rc" "$dotdot" "$T/err"
run lg score --list a..b "$DATA/spam1.eml"
check "score --list a..b: the same" \
    sh -c 'test "$1" -eq 2 && grep -qF "$2" "$3"' - "$rc" "$dotdot" "$T/err"
run lg tokens --list a..b "$DATA/spam1.eml"
check "tokens --list a..b: the same" \
    sh -c 'test "$1" -eq 2 && grep -qF "$2" "$3"' - "$rc" "$dotdot" "$T/err"
check "no token file was created for bad names" \
    test -z "$(find "$T" -name '*.kch' -print)"
check "no x.kch outside the tokens directory" test ! -e "$CONF/x.kch"

# --- score before training ------------------------------------------------
run lg score --list dev "$DATA/spam-test.eml"
check "score of an untrained list fails" test "$rc" -eq 1
check "... and says to train first" grep -q "train" "$T/err"

# --- train: files and a maildir ---------------------------------------
run lg train --list dev --spam "$DATA/spam1.eml" "$DATA/spam2.eml" \
    "$DATA/spam3.eml" "$DATA/spam4.eml"
check "train 4 spam files exits 0" test "$rc" -eq 0
check "summary says 4 posts as spam" \
    grep -q "^trained 4 posts as spam ([0-9]* new tokens) in [0-9.]* s$" "$T/out"
check "the token file exists" test -f "$CONF/tokens/dev.kch"

# the same post twice in one run (a path given twice, a post saved twice
# in an mbox) is learnt once, the duplicate counted: the token file is
# the one of each post once
run lg train --list dup --spam "$DATA/spam1.eml" "$DATA/spam2.eml" \
    "$DATA/spam1.eml"
check "train FILE FILE2 FILE exits 0" test "$rc" -eq 0
check "... learns 2 posts" grep -q "^trained 2 posts as spam" "$T/out"
check "... and says the third was the same post, learnt once" grep -qx \
    "skipped 1 duplicate post (the same bytes as a post before it in this run, learnt once): $DATA/spam1.eml" \
    "$T/out"
run lg train --list once --spam "$DATA/spam1.eml" "$DATA/spam2.eml"
check "... the same token file as each post once" sh -c \
    "'$LISTGATE' --allow-root --config '$CONF' score --list dup --db-dump | LC_ALL=C sort > '$T/d-dup' && '$LISTGATE' --allow-root --config '$CONF' score --list once --db-dump | LC_ALL=C sort > '$T/d-once' && cmp -s '$T/d-dup' '$T/d-once'"
{ printf 'From a@example.org Mon Jan  5 10:00:00 2026\n'; cat "$DATA/spam3.eml"
  printf '\nFrom a@example.org Mon Jan  5 10:00:00 2026\n'; cat "$DATA/spam3.eml"
  printf '\n'; } > "$T/dup.mbox"
run lg train --list dup --spam "$T/dup.mbox"
check "an mbox with a post saved twice: learnt once" \
    grep -q "^trained 1 post as spam (.*) in" "$T/out"
check "... the copy named" grep -q "^skipped 1 duplicate post .*: $T/dup.mbox:2\$" "$T/out"
run lg train --list dup --spam --unlearn "$DATA/spam1.eml" "$DATA/spam1.eml"
check "unlearn FILE FILE: unlearned once" sh -c \
    "grep -q '^unlearned 1 post as spam' '$T/out' && grep -q '^skipped 1 duplicate post (the same bytes as a post before it in this run, unlearned once)' '$T/out'"
run lg train --list dup --spam --quiet "$DATA/spam4.eml" "$DATA/spam4.eml"
check "--quiet: a duplicate is not an error, nothing printed" \
    sh -c "test $rc -eq 0 && test ! -s '$T/out' && test ! -s '$T/err'"
# the duplicate's name is a file's, chosen by whoever made the archive:
# a terminal's escapes in it are made harmless on standard output, as in
# every message (they went out raw)
mkdir -p "$T/esc" || exit 99
cp "$DATA/spam1.eml" "$T/esc/a" &&
    cp "$DATA/spam1.eml" "$T/esc/b$(printf '\033]0;x\007')" || exit 99
run lg train --list escd --spam "$T/esc"
check "a duplicate named with a terminal's escape: named, the escape made harmless" \
    sh -c "grep -q '^skipped 1 duplicate post .*: $T/esc/b?]0;x?\$' '$T/out' && ! grep -q \"\$(printf '\033')\" '$T/out'"

MD=$T/maildir
mkdir -p "$MD/new" "$MD/cur" "$MD/tmp"
cp "$DATA/ham1.eml" "$MD/new/1.host"
cp "$DATA/ham2.eml" "$MD/new/2.host"
cp "$DATA/ham3.eml" "$MD/cur/3.host:2,S"
cp "$DATA/ham4.eml" "$MD/cur/4.host:2,S"
cp "$DATA/spam1.eml" "$MD/tmp/5.host"		# tmp/ is not read
cp "$DATA/spam1.eml" "$MD/cur/.6.host"		# nor dot files
run lg train --list dev --ham "$MD"
check "train a maildir exits 0" test "$rc" -eq 0
check "maildir: 4 posts as ham" grep -q "^trained 4 posts as ham" "$T/out"

run lg score --list dev --db-stats
check "stats: 4 spam posts" grep -qx "spam_posts 4" "$T/out"
check "stats: 4 ham posts" grep -qx "ham_posts 4" "$T/out"

# standard error closed (a cron line's 2>&-): the messages must not go
# into the token file, which took the free descriptor 2
cp "$CONF/tokens/dev.kch" "$T/dev.kch.keep" || exit 99
missing=$T/no/$(printf '%0200d' 0)
lg train -q --list dev --spam "$DATA/spam1.eml" "$missing" 2>&-
check "train with stderr closed: exit 1 (a path is missing)" test $? -eq 1
check "... and the message is not written into the token file" \
    test "$(grep -a -c "No such file" "$CONF/tokens/dev.kch")" -eq 0
cp "$T/dev.kch.keep" "$CONF/tokens/dev.kch" || exit 99

# --- score ------------------------------------------------------------
run lg score --list dev "$DATA/spam-test.eml" "$DATA/ham-test.eml"
check "score two files exits 0" test "$rc" -eq 0
check "two lines, VERDICT SCORE FILE" test "$(grep -c \
    '^\(ham\|unsure\|spam\) [0-9.e-]* .*-test\.eml$' "$T/out")" -eq 2
s_spam=$(awk '/spam-test/ {print $2}' "$T/out")
s_ham=$(awk '/ham-test/ {print $2}' "$T/out")
check "spam-like post scores higher than ham-like ($s_spam > $s_ham)" \
    awk -v a="$s_spam" -v b="$s_ham" 'BEGIN { exit !(a + 0 > b + 0) }'

run lg score --list dev < "$DATA/spam-test.eml"
check "score from stdin exits 0" test "$rc" -eq 0
check "one post, no name: two fields" \
    test "$(awk '{print NF}' "$T/out")" = "2"
check "stdin score equals file score" \
    test "$(awk '{print $2}' "$T/out")" = "$s_spam"

run lg score --list dev --json "$DATA/ham-test.eml"
check "--json exits 0" test "$rc" -eq 0
check "--json prints one object with the fields" grep -q \
    '^{"file":".*ham-test.eml","verdict":"[a-z]*","score":[0-9.e-]*,"log_qh":.*,"log_qs":.*,"tokens":[0-9]*' \
    "$T/out"
if command -v python3 > /dev/null 2>&1; then
	check "--json is valid JSON" python3 -c \
	    'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$T/out"
else
	echo "# SKIP the checks at line 103: python3 is not installed"
fi

run lg score --list dev -v "$DATA/spam-test.eml"
check "-v exits 0" test "$rc" -eq 0
check "-v prints indented clues" grep -q '^    ' "$T/out"

# the vote budget (listgate.conf(5), vote_budget): a text's later tokens
# (here 280 unseen words past a paragraph's first 20) vote as 20 when
# it is on; a short post scores the same either way
{ printf 'From: a@example.org\nSubject: long\n\n'
  awk 'BEGIN { for (i = 0; i < 300; i++) printf "zyqword%d ", i; print "" }'
} > "$T/long.eml"
printf 'From: a@example.org\nSubject: short\n\nzyqa zyqb zyqc\n' \
    > "$T/short.eml"
test ! -e "$CONF/lists/dev.conf" || exit 99
run lg score --list dev "$T/long.eml" "$T/short.eml"
cp "$T/out" "$T/budget-off"
printf 'vote_budget = yes\n' > "$CONF/lists/dev.conf"
run lg score --list dev "$T/long.eml" "$T/short.eml"
rm -f "$CONF/lists/dev.conf"
check "vote_budget = yes: a long post's tail weighs less, it scores otherwise" \
    sh -c "test $rc -eq 0 && test \"\$(awk '/long/ {print \$2}' '$T/out')\" != \"\$(awk '/long/ {print \$2}' '$T/budget-off')\""
check "... a short post the same" \
    sh -c "test \"\$(awk '/short/ {print \$2}' '$T/out')\" = \"\$(awk '/short/ {print \$2}' '$T/budget-off')\""

run lg score --list dev "$DATA/spam-test.eml" "$T/nonexistent"
check "a missing file makes score exit 1" test "$rc" -eq 1
check "... naming the file" grep -q "nonexistent" "$T/err"
check "... after scoring the others" test "$(wc -l < "$T/out")" -eq 1

# output that cannot be written (a reader gone with SIGPIPE ignored, a
# full disk) stops the run: it scored every post first (minutes for a
# large corpus); here it would wait on the FIFO after the mbox
awk 'BEGIN { for (i = 0; i < 2000; i++) printf "From x\nSubject: p%d\n\nbody\n\n", i }' \
    > "$T/many.mbox"
mkfifo "$T/never" || exit 99
timeout 10 "$LISTGATE" --allow-root --config "$CONF" score --list dev \
    "$T/many.mbox" "$T/never" > /dev/full 2> "$T/err"
rc=$?
check "score to a full output stops at once, exit 1" test "$rc" -eq 1
check "... saying so" grep -q "cannot write the standard output" "$T/err"

# --- mbox input -------------------------------------------------------
MB=$T/posts.mbox
for f in spam-test ham-test spam2; do
	echo "From sender@example.org Mon Jan  1 00:00:00 2024"
	cat "$DATA/$f.eml"
	echo
done > "$MB"
run lg score --list dev "$MB"
check "mbox: three posts scored" test "$(wc -l < "$T/out")" -eq 3
check "mbox: posts named FILE:N" grep -q "posts.mbox:3$" "$T/out"
check "mbox post 1 scores like the file" \
    test "$(awk 'NR == 1 {print $2}' "$T/out")" = "$s_spam"
run lg train --list mb --spam - < "$MB"
check "train an mbox from stdin: 3 posts" \
    grep -q "^trained 3 posts as spam" "$T/out"

# --- learn then unlearn gives the same token file contents ------------
lg train --list u --spam "$DATA/spam1.eml" > /dev/null || bad "train u"
lg train --list u --ham "$DATA/ham1.eml" > /dev/null || bad "train u"
lg score --list u --db-stats > "$T/stats0"
lg score --list u --db-dump | sort > "$T/dump0"
lg score --list u -v "$DATA/spam-test.eml" > "$T/v0"
run lg train --list u --spam "$DATA/spam2.eml" "$DATA/spam3.eml" "$DATA/ham2.eml"
check "learn 3 more" grep -q "^trained 3 posts as spam" "$T/out"
run lg train --list u --ham "$MD"
check "learn the maildir" grep -q "^trained 4 posts as ham" "$T/out"
lg score --list u --db-dump | sort > "$T/dumpmid"
differ() { ! cmp -s "$1" "$2"; }
check "the counts changed" differ "$T/dump0" "$T/dumpmid"
run lg train --list u --ham --unlearn "$MD"
check "unlearn the maildir" grep -q "^unlearned 4 posts as ham" "$T/out"
run lg train --list u --spam --unlearn "$DATA/ham2.eml" "$DATA/spam3.eml" \
    "$DATA/spam2.eml"
check "unlearn the 3" grep -q "^unlearned 3 posts as spam" "$T/out"
lg score --list u --db-stats > "$T/stats1"
lg score --list u --db-dump | sort > "$T/dump1"
lg score --list u -v "$DATA/spam-test.eml" > "$T/v1"
check "message counts restored" cmp -s "$T/stats0" "$T/stats1"
check "every token count restored" cmp -s "$T/dump0" "$T/dump1"
check "score -v output identical" cmp -s "$T/v0" "$T/v1"
check "the dump is not empty" test -s "$T/dump0"
lg train --list u --spam --unlearn "$DATA/spam1.eml" > /dev/null
lg train --list u --ham --unlearn "$DATA/ham1.eml" > /dev/null
lg score --list u --db-stats > "$T/stats2"
check "unlearning everything empties the file" test \
    "$(grep -v journal_pos "$T/stats2" | tr '\n' ' ')" = \
    "spam_posts 0 ham_posts 0 tokens 0 "
# unlearning a post that was never learnt as the class (the other class
# given, a post never trained, one unlearned already) took from the
# counts of the posts that were: it is skipped, named, and the run
# exits 1; the others in the run are unlearned
lg train -q --list nl --spam "$DATA/spam1.eml" "$DATA/spam3.eml" || exit 99
lg train -q --list nl --ham "$DATA/ham1.eml" || exit 99
lg score --list nl --db-dump | sort > "$T/nl0"
run lg train --list nl --spam --unlearn "$DATA/spam2.eml"
check "unlearn of a post never learnt: exit 1 (exit $rc)" test "$rc" -eq 1
check "... naming it, saying nothing was unlearned for it" grep -q \
    "^listgate train: list nl: $DATA/spam2.eml: never learnt as spam (some of its tokens have no spam count in the token file): skipped, nothing unlearned for it" \
    "$T/err"
lg score --list nl --db-dump | sort > "$T/nl1"
check "... and every count is as it was" cmp -s "$T/nl0" "$T/nl1"
run lg train --list nl --ham --unlearn "$DATA/spam1.eml" "$DATA/ham1.eml" \
    "$DATA/spam4.eml"
check "unlearn of the wrong class: exit 1, the post of the class unlearned" \
    sh -c "test $rc -eq 1 && grep -q '^unlearned 1 post as ham' '$T/out'"
check "... the others named, the first of them" grep -q \
    "^listgate train: list nl: 2 posts were never learnt as ham (some of their tokens have no ham count in the token file; the first: $DATA/spam1.eml): skipped, nothing unlearned for them" \
    "$T/err"
run lg score --list nl --db-stats
check "... and the spam posts' counts are untouched" \
    sh -c "grep -qx 'spam_posts 2' '$T/out' && grep -qx 'ham_posts 0' '$T/out'"
run lg train --list nl --ham --unlearn "$DATA/ham1.eml"
check "unlearning a post twice: the second time skipped (exit $rc)" \
    sh -c "test $rc -eq 1 && grep -q 'ham1.eml: never learnt as ham' '$T/err'"
run lg train --list none --spam --unlearn "$DATA/spam1.eml"
check "unlearn on a list without a token file fails" test "$rc" -eq 1
check "... and creates nothing" test ! -e "$CONF/tokens/none.kch"

# --- only max_scan_bytes of each post are tokenized ------------------------
printf 'max_scan_bytes = 1024\n' > "$CONF/lists/small.conf"
{
	printf 'From: a@example.org\nSubject: scan limit\n\nzzzearlyword\n'
	i=0
	while [ $i -lt 60 ]; do
		echo "filler text line number $i of the long post body here"
		i=$((i + 1))
	done
	printf 'zzzlateword\n'
} > "$T/long.eml"
run lg train --list small --spam "$T/long.eml"
check "train with a small max_scan_bytes" test "$rc" -eq 0
lg score --list small --db-dump > "$T/dump-small"
# the token file keeps keys, not text: tokens --keys gives each token's
# key (with the default max_scan_bytes, so both words are there)
lg tokens --keys "$T/long.eml" > "$T/keys-long"
k_early=$(awk '$2 == "zzzearlyword" {print $1}' "$T/keys-long")
k_late=$(awk '$2 == "zzzlateword" {print $1}' "$T/keys-long")
check "tokens --keys gives both words a 16-digit key" sh -c \
    "echo '$k_early $k_late' | grep -Eqx '[0-9a-f]{16} [0-9a-f]{16}'"
check "a word within max_scan_bytes is learnt" \
    grep -q " $k_early\$" "$T/dump-small"
check "a word past max_scan_bytes is not" sh -c \
    "! grep -q ' $k_late\$' '$T/dump-small'"
lg train --list big --spam "$T/long.eml" > /dev/null
check "with the default limit both are learnt" sh -c \
    "'$LISTGATE' --allow-root --config '$CONF' score --list big --db-dump | grep -Ec ' ($k_early|$k_late)\$' | grep -qx 2"
check "the dump has no token text" sh -c \
    "! grep -q zzz '$T/dump-small'"

# --- a long training run lets scorers in between its batches -------------
awk 'BEGIN {
	for (i = 0; i < 4000; i++) {
		printf "From x@example.org Mon Jan  1 00:00:00 2024\n"
		printf "From: a%d@example.org\nSubject: post %d\n\n", i % 50, i
		for (l = 0; l < 12; l++) {
			for (w = 0; w < 10; w++)
				printf "w%d ", (i * 7 + l * 13 + w * 101) % 20000
			printf "\n"
		}
		printf "\n"
	}
}' > "$T/many.mbox"
lg train --list dev --ham "$T/many.mbox" > "$T/bg.out" 2>&1 &
bg=$!
scored=0 failed=0
while kill -0 $bg 2> /dev/null; do
	if lg score --list dev "$DATA/spam-test.eml" > /dev/null 2> "$T/bg.err"
	then scored=$((scored + 1)); else failed=$((failed + 1)); fi
done
wait $bg
check "background training of 4000 posts succeeds" \
    grep -q "^trained 4000 posts as ham" "$T/bg.out"
check "no scorer timed out during training ($scored scored)" test "$failed" -eq 0

# --- a token file of the old format 1 is refused; rebuild converts it ---
# (no database here: rebuild rewrites the file itself)
MKOLD=$top_builddir/tests/mkoldtok
day=$(($(date +%s) / 86400))
"$MKOLD" "$CONF/tokens/old.kch" cur "$day" "s:$DATA/spam1.eml" \
    "s:$DATA/spam2.eml" "h:$DATA/ham1.eml" || bad "mkoldtok"
lg train --list fresh --spam "$DATA/spam1.eml" "$DATA/spam2.eml" \
    > /dev/null || bad "train fresh"
lg train --list fresh --ham "$DATA/ham1.eml" > /dev/null || bad "train fresh"
cp "$CONF/tokens/old.kch" "$T/old-copy.kch"
run lg score --list old "$DATA/spam-test.eml"
check "score refuses a format 1 token file" test "$rc" -eq 1
check "... saying it is of another format" grep -q "format 1" "$T/err"
check "... and to run listgate --config DIR rebuild --list old" \
    grep -q "run \`listgate --config [^ ]* rebuild --list old\`" "$T/err"
run lg train --list old --spam "$DATA/spam3.eml"
check "train refuses it too" test "$rc" -eq 1
check "... with the same advice" grep -q "listgate --config [^ ]* rebuild --list old" "$T/err"
check "... and leaves it alone" cmp -s "$CONF/tokens/old.kch" "$T/old-copy.kch"
# a list without a token file: rebuild's message named `sync` and
# `rebuild --list L` itself, which need a database, as what recreates it
run lg rebuild --list nosuch
check "rebuild without a database or token file fails" test "$rc" -eq 1
check "... saying to train the list, not to sync or rebuild" sh -c \
    "grep -q 'no token file $CONF/tokens/nosuch.kch to convert or compact: train the list first' '$T/err' &&
    ! grep -q 'sync\\|rebuild --list' '$T/err'"
check "... and that no lists/nosuch.conf may mean a misspelt name" grep -qF \
    "nor is there a $CONF/lists/nosuch.conf (a misspelt list name?)" "$T/err"
check "... making no file" test ! -e "$CONF/tokens/nosuch.kch"
run lg rebuild --list old
check "rebuild without a database converts it" \
    sh -c "test $rc -eq 0 && grep -q '^list old: converted' '$T/out'"
lg score --list old --db-dump | LC_ALL=C sort > "$T/dump-old"
lg score --list fresh --db-dump | LC_ALL=C sort > "$T/dump-fresh"
check "the converted file holds what training anew gives" \
    sh -c "test -s '$T/dump-old' && cmp -s '$T/dump-old' '$T/dump-fresh'"
lg score --list old --db-stats | grep -v journal_pos > "$T/stats-old"
lg score --list fresh --db-stats | grep -v journal_pos > "$T/stats-fresh"
check "... and the same message counts" cmp -s "$T/stats-old" "$T/stats-fresh"
check "... and scores posts the same" test \
    "$(lg score --list old "$DATA/spam-test.eml")" = \
    "$(lg score --list fresh "$DATA/spam-test.eml")"
run lg rebuild --list old
check "rebuild of a current file compacts it" \
    sh -c "test $rc -eq 0 && grep -q '^list old: compacted' '$T/out'"
check "rebuild leaves no temporary file" \
    sh -c "! ls -a '$CONF/tokens' | grep -q compact"
"$MKOLD" "$CONF/tokens/othertok.kch" other "$day" "s:$DATA/spam1.eml" ||
    bad "mkoldtok other"
cp "$CONF/tokens/othertok.kch" "$T/other-copy.kch"
run lg rebuild --list othertok
check "a file of another tokenizer is not converted" test "$rc" -eq 1
check "... the message says to retrain or use the journal" sh -c \
    "grep -q retrain '$T/err' && grep -q journal '$T/err'"
check "... and the file is left alone" \
    cmp -s "$CONF/tokens/othertok.kch" "$T/other-copy.kch"
# the refusal every command gives says the same, not that rebuild
# converts it (the message said "or converts it when no database is
# configured", which rebuild then refused)
run lg score --list othertok "$DATA/spam-test.eml"
said=no
test "$rc" -eq 1 &&
    grep -q 'run `listgate --config [^ ]* rebuild --list othertok`' "$T/err" &&
    grep -q 'without a database a file .* cannot be converted: .*train the list again' "$T/err" &&
    ! grep -q 'converts it' "$T/err" && said=yes
check "score of a file of another tokenizer: refused, naming rebuild and retraining, promising no conversion (rc $rc)" \
    test "$said" = yes
[ "$said" = yes ] || sed 's/^/# /' "$T/err"
# a file written by a newer listgate (a downgrade): rebuild without a
# database cannot convert it, and said to run rebuild (itself) to convert it
if command -v kchashmgr > /dev/null 2>&1; then
	cp "$CONF/tokens/old.kch" "$CONF/tokens/newer.kch"
	# the format record ("\0format", u32) one past this program's
	kchashmgr set -sx "$CONF/tokens/newer.kch" "00 66 6f 72 6d 61 74" \
	    "$(printf '%02x 00 00 00' $(($(kchashmgr get -sx -px \
	    "$CONF/tokens/newer.kch" "00 66 6f 72 6d 61 74" | cut -c1-2 |
	    sed 's/^/0x/') + 1)))" || bad "kchashmgr set"
	run lg rebuild --list newer
	check "rebuild without a database of a newer listgate's file: refused, saying it cannot be converted" \
	    sh -c "test $rc -eq 1 && grep -q 'written by a newer listgate cannot be converted' '$T/err' && ! grep -q 'converts it' '$T/err'"
elif [ "${CI:-}" = 1 ]; then
	bad "kchashmgr (kyotocabinet-utils) is not installed"
else
	echo "# SKIP a newer listgate's file: kchashmgr is not installed"
fi
run lg rebuild --list nofile
check "rebuild without a database or a token file fails clearly" sh -c \
    "test $rc -eq 1 && grep -q 'no database is configured' '$T/err'"

# --- unreadable input ---------------------------------------------------
run lg train --list dev --spam "$T/nonexistent"
check "train of a missing file exits 1" test "$rc" -eq 1
check "... naming it" grep -q "nonexistent" "$T/err"

# --- interrupted: it says what was learnt ------------------------------
# SIGTERM while train waits on its next input (a FIFO with no writer
# yet): it stops before that post, rolls back the unfinished batch and
# says so (it died without a word, the batch rolled back or not)
run lg train -q --list intr --spam "$DATA/spam1.eml"
mkfifo "$T/fifo" || exit 99
(exec "$LISTGATE" --allow-root --config "$CONF" train --list intr --spam \
    "$DATA/spam2.eml" "$T/fifo") > "$T/out" 2> "$T/err" &
tpid=$!
fifo_wait "$tpid" || echo "# train did not come to wait on the FIFO"
kill -TERM "$tpid"
timeout 10 sh -c "printf 'Subject: late\n\nlate post\n' > '$T/fifo'"
wait "$tpid"
rc=$?
check "train stopped by SIGTERM exits 1" test "$rc" -eq 1
check "... says it was stopped, with what was learnt" \
    grep -q "list intr: stopped: 0 posts learnt; the 1 post read was rolled back" "$T/err"
run lg score --list intr --db-stats
check "... and learnt nothing more" grep -qx "spam_posts 1" "$T/out"
# past 16 posts the rest of the run is one batch: the message says how
# many posts it held (it said "the unfinished batch", read as a few
# posts, for all but the first 16 of an archive; no worker threads, so
# that the first 16 are learnt before the stop)
mkdir -p "$T/twenty" || exit 99
i=0
while [ $i -lt 20 ]; do
	printf 'Subject: post %d\n\nbody %d\n' $i $i > "$T/twenty/$i.eml"
	i=$((i + 1))
done
rm -f "$T/fifo" && mkfifo "$T/fifo" || exit 99
(LISTGATE_TRAIN_THREADS=0 exec "$LISTGATE" --allow-root --config "$CONF" \
    train --list intr --spam "$T/twenty" "$T/fifo") > "$T/out" 2> "$T/err" &
tpid=$!
fifo_wait "$tpid" || echo "# train did not come to wait on the FIFO"
kill -TERM "$tpid"
timeout 10 sh -c "printf 'Subject: late\n\nlate post\n' > '$T/fifo'"
wait "$tpid"
rc=$?
sed 's/^/# /' "$T/err"
check "stopped past 16 posts: the message says how many posts were rolled back" \
    sh -c "test $rc -eq 1 && grep -qx 'listgate train: list intr: stopped: 16 posts learnt; the 4 posts read after them were rolled back' '$T/err'"
run lg score --list intr --db-stats
check "... and the token file holds the 16" grep -qx "spam_posts 17" "$T/out"

# a stop while the last batch is committed: there is no next post to
# stop at (it said "stopping at the next post"); the run finishes, and
# says so (LISTGATE_TEST_TRAIN_STOP sends the SIGTERM at that stage)
run env LISTGATE_TEST_TRAIN_STOP=commit "$LISTGATE" --allow-root \
    --config "$CONF" train --list stopc --spam "$DATA/spam1.eml" \
    "$DATA/spam2.eml"
check "train stopped during its commit finishes it (exit $rc)" test "$rc" -eq 0
check "... saying so" grep -qx "listgate train: finishing the commit of the posts read (once more: at once)" "$T/err"
check "... and not that it stops at a next post" sh -c "! grep -q 'next post' '$T/err'"
sed 's/^/# /' "$T/err"
run lg score --list stopc --db-stats
check "... and learnt both posts" grep -qx "spam_posts 2" "$T/out"

# a signal ignored by whoever started train stays ignored: under nohup
# (SIGHUP), or started in the background of a script (SIGINT), the
# terminal closing or a ^C for the foreground stopped the run and
# rolled it back
mkfifo "$T/fifo2" || exit 99
(trap '' HUP INT; exec "$LISTGATE" --allow-root --config "$CONF" train \
    --list nohup --spam "$DATA/spam2.eml" "$T/fifo2") > "$T/out" \
    2> "$T/err" &
tpid=$!
fifo_wait "$tpid" || echo "# train did not come to wait on the FIFO"
kill -HUP "$tpid"
kill -INT "$tpid"
timeout 10 sh -c "printf 'Subject: late\n\nlate post\n' > '$T/fifo2'"
wait "$tpid"
rc=$?
check "train with SIGHUP and SIGINT ignored goes on through them (exit $rc)" \
    test "$rc" -eq 0
check "... and says nothing of them" sh -c "! grep -q 'stop' '$T/err'"
run lg score --list nohup --db-stats
check "... and learnt both posts" grep -qx "spam_posts 2" "$T/out"

# a token file that is a symbolic link to nothing (its target moved, a
# disk not mounted): train says so, and so does score (train said
# "another run created it meanwhile; train again", as often as it ran,
# and score sent to train)
mkdir -p "$CONF/tokens" && ln -s "$T/gone/dangle.kch" "$CONF/tokens/dangle.kch"
run lg train --list dangle --spam "$DATA/spam1.eml"
check "train into a link to nothing fails, naming the link and its target" \
    sh -c "test $rc -eq 1 && grep -q 'dangle.kch is a symbolic link to $T/gone/dangle.kch, which does not exist' '$T/err' && ! grep -q 'train again' '$T/err'"
check "... and leaves the link alone" test -L "$CONF/tokens/dangle.kch"
run lg score --list dangle "$DATA/spam1.eml"
check "score of a link to nothing says so" sh -c \
    "test $rc -eq 1 && grep -q 'is a symbolic link to $T/gone/dangle.kch, which does not exist' '$T/err'"
rm -f "$CONF/tokens/dangle.kch"
run lg train --list dangle --spam "$DATA/spam1.eml"
check "... and once the link is gone, train makes the file" test "$rc" -eq 0
# ... and with a site store, the list's scores do not go on with the
# site store's counts alone, as for a list that has no file yet (its
# own training, on a disk not mounted, was silently left out)
mkdir -p "$T/sconf/lists" "$T/sconf/tokens" && chmod 750 "$T/sconf/tokens" &&
    printf 'tokens_dir = %s/sconf/tokens\nsite_list = site\n' "$T" \
    > "$T/sconf/listgate.conf" || exit 99
lgs() { "$LISTGATE" --allow-root --config "$T/sconf" "$@"; }
lgs train -q --list site --spam "$DATA/spam1.eml" &&
    lgs train -q --list site --ham "$DATA/ham1.eml" || exit 99
run lgs score --list young "$DATA/spam2.eml"
check "(a list without a token file scores with the site store)" test "$rc" -eq 0
ln -s "$T/gone/young.kch" "$T/sconf/tokens/young.kch"
run lgs score --list young "$DATA/spam2.eml"
check "a list whose token file is a link to nothing is not scored with the site store alone" \
    sh -c "test $rc -eq 1 && grep -q 'young.kch is a symbolic link to $T/gone/young.kch, which does not exist' '$T/err'"

# a token file that is a symbolic link to a file on another disk stays
# a link: a compaction (`rebuild` without a database) and a long train
# (its later posts in bulk mode, a private copy renamed into place)
# write the new file beside the link's target (they renamed it over the
# link, and the list's tokens went back to the tokens directory's disk)
mkdir -p "$T/disk" && chmod 700 "$T/disk" || exit 99
lg train -q --list linked --spam "$DATA/spam1.eml" &&
    mv "$CONF/tokens/linked.kch" "$T/disk/linked.kch" &&
    ln -s "../../disk/linked.kch" "$CONF/tokens/linked.kch" || exit 99
run lg rebuild --list linked
check "rebuild (no database) of a token file that is a link keeps the link" \
    sh -c "test $rc -eq 0 && test -L '$CONF/tokens/linked.kch' && test -f '$T/disk/linked.kch' && test ! -L '$T/disk/linked.kch'"
mkdir -p "$T/many" || exit 99
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	{ cat "$DATA/ham1.eml"; echo "post $i"; } > "$T/many/$i.eml" || exit 99
done
run lg train --list linked --ham "$T/many"
check "... and so does a train of 20 posts (bulk mode)" \
    sh -c "test $rc -eq 0 && test -L '$CONF/tokens/linked.kch' && test ! -L '$T/disk/linked.kch'"
check "... which learnt them in the link's target" \
    sh -c "'$LISTGATE' --allow-root --config '$CONF' score --list linked --db-stats | grep -qx 'ham_posts 20'"
check "... leaving no private copy behind" \
    sh -c "test -z \"\$(ls -A '$T/disk' | grep -v '^linked.kch\$')\" && test -z \"\$(ls -A '$CONF/tokens' | grep '^\.linked')\""

# one file for two lists (a hard link beside it): a compaction or a bulk
# write renamed a new file over one name and left the other list with
# the old file, and the two lists parted without a word.  Refused, both
# named.  A name elsewhere (a backup made with cp -al) is parted from
lg train -q --list hl1 --spam "$DATA/spam1.eml" &&
    ln "$CONF/tokens/hl1.kch" "$CONF/tokens/hl2.kch" || exit 99
run lg rebuild --list hl1
check "rebuild (no database) of one file for two lists exits 1" \
    test "$rc" -eq 1
check "... naming both names" grep -qF \
    "token file $CONF/tokens/hl1.kch is the same file as $CONF/tokens/hl2.kch (a hard link" \
    "$T/err"
check "... which stay one file" \
    test "$CONF/tokens/hl1.kch" -ef "$CONF/tokens/hl2.kch"
run lg train --list hl2 --ham "$T/many"
check "a train of 20 posts (bulk mode past the first) of it exits 1" \
    test "$rc" -eq 1
check "... saying why" grep -qF \
    "token file $CONF/tokens/hl2.kch is the same file as $CONF/tokens/hl1.kch (a hard link" \
    "$T/err"
check "... and keeps them one file" \
    test "$CONF/tokens/hl1.kch" -ef "$CONF/tokens/hl2.kch"
mkdir -p "$T/backup" && rm -f "$CONF/tokens/hl2.kch" &&
    ln "$CONF/tokens/hl1.kch" "$T/backup/hl1.kch" || exit 99
run lg rebuild --list hl1
check "a second name elsewhere (a backup) does not keep rebuild from it" \
    sh -c "test $rc -eq 0 && ! test '$CONF/tokens/hl1.kch' -ef '$T/backup/hl1.kch'"

# an empty file (a delivery that failed, a directory's placeholder) is
# no post: the filter refuses one, and learnt it counted as a post of
# the list (spam_posts 2 here), shifting every score
: > "$T/empty.eml"
run lg train --list empty --spam "$T/empty.eml" "$DATA/spam1.eml"
check "train of an empty file exits 1" test "$rc" -eq 1
check "... naming it as empty and skipped" \
    grep -q "^listgate train: list empty: $T/empty.eml: an empty post (0 bytes): skipped" "$T/err"
run lg score --list empty --db-stats
check "... and learns the other post only" grep -qx "spam_posts 1" "$T/out"

# a maildir in use: a post that its reader moves from new/ to cur/ (or
# renames in cur/ with other flags) after train listed the maildir is
# read where it is now (it was named "No such file or directory" and
# left out, exit 1).  The first entry, a sparse file of 600 MiB, keeps
# train busy (its SHA-256) while the post is moved
mkdir -p "$T/md/new" "$T/md/cur" "$T/md/tmp" || exit 99
truncate -s 600M "$T/md/new/0.big.host" || exit 99
cp "$DATA/spam1.eml" "$T/md/new/1.a.host" || exit 99
cp "$DATA/spam2.eml" "$T/md/cur/2.b.host:2,S" || exit 99
lg train --list inuse --spam "$T/md" > "$T/out" 2> "$T/err" &
pid=$!
sleep 0.3
mv "$T/md/new/1.a.host" "$T/md/cur/1.a.host:2,S"
wait $pid
rc=$?
sed 's/^/# /' "$T/err"
check "a maildir post moved from new/ to cur/ while train reads: exit 0" \
    test "$rc" -eq 0
run lg score --list inuse --db-stats
check "... and it is learnt, where it is now" grep -qx "spam_posts 3" "$T/out"
rm -rf "$T/md"

# a directory's link to nothing (a stale search result of mairix or
# notmuch) is a post that cannot be read: named, exit 1 (it was left out
# unsaid, exit 0)
mkdir -p "$T/links" || exit 99
ln -s "$DATA/spam1.eml" "$T/links/a" && ln -s "$T/nowhere.eml" "$T/links/b" ||
    exit 99
run lg train --list links --spam "$T/links"
check "a directory with a link to nothing: train exits 1" test "$rc" -eq 1
check "... naming the link and where it leads" \
    grep -q "^listgate train: list links: $T/links/b: a symbolic link to $T/nowhere.eml, which does not exist" "$T/err"
run lg score --list links --db-stats
check "... and learns the other post" grep -qx "spam_posts 1" "$T/out"

# a compressed archive as downloaded (Mailman's 2024-January.txt.gz) is
# no message file nor mbox: refused, named (it was learnt as one post
# of binary bytes, exit 0)
mkdir -p "$T/arch" || exit 99
cp "$DATA/spam1.eml" "$T/arch/a.eml" || exit 99
gzip -c "$DATA/spam2.eml" > "$T/arch/2024-January.txt.gz" || exit 99
run lg train --list arch --spam "$T/arch"
check "a directory with a gzip archive: train exits 1" test "$rc" -eq 1
check "... naming it as compressed" \
    grep -q "^listgate train: list arch: $T/arch/2024-January.txt.gz: compressed (gzip), not a message file or mbox: uncompress it first" "$T/err"
run lg score --list arch --db-stats
check "... and learns the other post only" grep -qx "spam_posts 1" "$T/out"

# on a terminal, a message starts a line of its own: the progress line
# is cleared first (it was glued to the end of the progress line)
if command -v script >/dev/null 2>&1; then
	script -qec "'$LISTGATE' --allow-root --config '$CONF' train --list tty --spam '$DATA/spam1.eml' '$T/nonexistent' '$DATA/spam2.eml'" /dev/null > "$T/tty" 2>&1
	check "on a terminal: the progress line is drawn, singular for 1" \
	    sh -c "grep -q 'trained 1 post (' '$T/tty' && ! grep -Eq '(^|[^0-9.])1 posts([^/]|\$)' '$T/tty'"
	check "... and a message starts a line of its own" sh -c \
	    "tr '\\r' '\\n' < '$T/tty' | sed 's/$(printf '\033')\\[K//g' | grep -q '^listgate train: list tty: .*nonexistent'"
else
	ok "# SKIP no script(1): the progress line"
	ok "# SKIP no script(1): the progress line"
fi

echo "1..$n"
test "$fails" -eq 0

#!/bin/sh
# torture_score_train.sh - `listgate score`, `tokens` and `train` with the
# n-th allocation failing, for every n
#
# score and tokens: exit 0 or 1, never a signal or a sanitizer report,
# and an exit 0 prints exactly what the run without failures printed (an
# allocation failure may not silently change a score or a token list).
# train: exit 0 or 1, and afterwards the token file still opens and
# holds the old state or the new one, never a mix: 0 means the new state,
# and a failed run must leave the old one (Kyoto Cabinet transaction; a
# run that says "failed" but learnt the posts would learn them twice when
# the administrator repeats it).  The state is `score --db-stats` and the
# sorted `score --db-dump`.  tests/torture_lib.sh has the loop.  Works in
# a mktemp -d directory removed at the end; never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
DATA=$top_srcdir/tests/data/train
MAIL=$top_srcdir/tests/data/mail
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-torture-st.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), pg_part, lock_file
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
. "$top_srcdir/tests/torture_lib.sh"

mkdir -p "$CONF/lists" || exit 99
printf 'tokens_dir = tokens\nlock_wait_ms = 2000\n' > "$CONF/listgate.conf"
printf 'ham_cutoff = 0.5\nspam_cutoff = 0.9\n' > "$CONF/lists/demo.conf"
lg train --quiet --list demo --spam "$DATA"/spam[1-4].eml >/dev/null &&
    lg train --quiet --list demo --ham "$DATA"/ham[1-4].eml >/dev/null ||
    { echo "# training failed"; exit 99; }

# exit 0 must print what the clean run printed
check_same() {
	if [ "$rc" -eq 0 ] && ! cmp -s "$T/out" "$T/base.out"; then
		echo "n=$1: exit 0 but the output differs from the clean run:"
		diff "$T/base.out" "$T/out" | head -n 6
		return 1
	fi
	return 0
}

# exit 0 must print exactly what the clean run printed, deciding tokens
# (-v) included; exit 1 must say why on standard error
check_scores() {
	check_same "$1" || return 1
	if [ "$rc" -ne 0 ] &&
	    ! grep -v '^listgate: allocations' "$T/err" | grep -q .; then
		echo "n=$1: exit $rc without a message"
		return 1
	fi
	return 0
}

# --- score ------------------------------------------------------------------
run_score_two() {
	"$LISTGATE" --allow-root --config "$CONF" score --list demo "$DATA/ham-test.eml" \
	    "$DATA/spam-test.eml"
}
torture "score, two posts" "0 1" run_score_two check_same
run_score_stdin() {
	"$LISTGATE" --allow-root --config "$CONF" score --list demo -v < "$DATA/spam-test.eml"
}
TORTURE_CMP_OUT=0
torture "score -v, a post on standard input" "0 1" run_score_stdin check_scores
run_score_dir() {
	"$LISTGATE" --allow-root --config "$CONF" score --list demo -v --json "$MAIL"
}
torture "score -v --json, the fixture directory" "0 1" run_score_dir check_scores
TORTURE_CMP_OUT=1

# --- tokens -----------------------------------------------------------------
for f in 0005-nested-multipart 0011-rfc2047 0012-rfc2231 0013-charsets \
    0014-html 0016-digest; do
	POST=$MAIL/$f.eml
	run_tokens() { "$LISTGATE" --allow-root tokens "$POST"; }
	torture "tokens, $f.eml" "0 1" run_tokens check_same
done

# --- train ------------------------------------------------------------------
# the state of list tr's token file, or "MISSING"
state() {
	if [ ! -e "$CONF/tokens/tr.kch" ]; then
		echo MISSING
		return 0
	fi
	unset LISTGATE_FAIL_ALLOC LISTGATE_ALLOC_REPORT
	lg score --list tr --db-stats 2>&1 || return 1
	lg score --list tr --db-dump 2>&1 | LC_ALL=C sort || return 1
}

# prepare list tr (FROM: a token file, or "none"), learn with the
# arguments, and record the old and the new state
prepare_train() {
	from=$1; shift
	TRAIN_ARGS=$*
	rm -f "$CONF/tokens/tr.kch" "$T/from.kch"
	[ "$from" = none ] || cp "$from" "$T/from.kch"
	restore
	state > "$T/old.state" || { echo "# cannot read the old state"; exit 99; }
	# shellcheck disable=SC2086
	lg train --quiet --list tr $TRAIN_ARGS > /dev/null 2>&1 ||
	    { echo "# training $TRAIN_ARGS failed"; exit 99; }
	state > "$T/new.state" || { echo "# cannot read the new state"; exit 99; }
	cmp -s "$T/old.state" "$T/new.state" &&
	    { echo "# training $TRAIN_ARGS changed nothing"; exit 99; }
}
restore() {
	rm -f "$CONF/tokens/tr.kch"
	[ -e "$T/from.kch" ] && cp "$T/from.kch" "$CONF/tokens/tr.kch"
	return 0
}
run_train() {
	restore
	# shellcheck disable=SC2086
	"$LISTGATE" --allow-root --config "$CONF" train --quiet --list tr $TRAIN_ARGS
}
# 0: the new state; 1: the old one (the run learnt nothing: out of
# memory stops train before it commits, and it says "0 posts learnt").
# A post of the mbox is named FILE:N in every message.  A failed run
# that was to create the token file leaves none (not an empty one, which
# filter would score against instead of deferring), and no temporary
# file next to it.
check_state() {
	if grep 'three\.mbox: ' "$T/err" | grep -qv 'while opening'; then
		echo "n=$1: a message names the mbox, not the post (FILE:N):"
		grep 'three\.mbox: ' "$T/err" | head -n 2
		return 1
	fi
	if grep -q 'stopped' "$T/err" &&
	    ! grep -Eq 'stopped: 0 posts (learnt|unlearned)' "$T/err"; then
		echo "n=$1: the summary does not say that no post was learnt:"
		grep 'stopped' "$T/err" | head -n 2
		return 1
	fi
	if ! state > "$T/now.state"; then
		echo "n=$1: exit $rc and the token file no longer opens:"
		head -n 3 "$T/now.state"
		return 1
	fi
	for _f in "$CONF"/tokens/tr.kch?* "$CONF"/tokens/.tr*; do
		[ -e "$_f" ] || continue
		echo "n=$1: exit $rc left $_f behind"
		return 1
	done
	if cmp -s "$T/now.state" "$T/new.state"; then
		[ "$rc" -eq 0 ] && return 0
		echo "n=$1: exit $rc, but the posts were learnt (a repeat learns them twice)"
		grep -v '^listgate: allocations' "$T/err" | head -n 2
		return 1
	fi
	if cmp -s "$T/now.state" "$T/old.state"; then
		[ "$rc" -ne 0 ] && return 0
		echo "n=$1: exit 0, but nothing was learnt"
		return 1
	fi
	echo "n=$1: exit $rc left a state that is neither the old nor the new one:"
	diff "$T/old.state" "$T/now.state" | head -n 6
	grep -v '^listgate: allocations' "$T/err" | head -n 2
	return 1
}
TORTURE_CMP_OUT=0
prepare_train "$CONF/tokens/demo.kch" --spam "$DATA/spam-test.eml"
torture "train --spam, one post into a token file" "0 1" run_train check_state
# a mbox of three posts: one transaction
for f in spam-test spam1 spam2; do
	echo "From torture@example.net Mon Jan  1 00:00:00 2024"
	cat "$DATA/$f.eml"
	echo
done > "$T/three.mbox"
prepare_train "$CONF/tokens/demo.kch" --spam "$T/three.mbox"
torture "train --spam, an mbox of three posts" "0 1" run_train check_state
prepare_train "$CONF/tokens/demo.kch" --ham "$DATA/ham-test.eml" \
    "$DATA/ham1.eml"
torture "train --ham, two files" "0 1" run_train check_state
prepare_train none --ham "$DATA/ham-test.eml"
torture "train --ham, creating the token file" "0 1" run_train check_state
prepare_train "$CONF/tokens/demo.kch" --spam --unlearn "$DATA/spam1.eml"
torture "train --unlearn" "0 1" run_train check_state

echo "1..$n"
[ $fails -eq 0 ]

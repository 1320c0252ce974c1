#!/bin/sh
# torture_admin.sh - `listgate tune`, `tune --apply`, `stats` and
# `expire` with the n-th allocation failing, for every n (tests/
# torture_lib.sh), against a private PostgreSQL
#
# Each run must exit 0 or 1, never by a signal or with a sanitizer
# report, and print exactly what the clean run printed when nothing
# failed.  tune --apply: the list's file is either untouched or exactly
# what the clean run wrote, and no temporary file is left beside it;
# turning word pairs on, the key is set only with the token file rebuilt
# with them.
# expire: the post is either still held, untrained, or expired with its
# one training event (discard-learn), and the failure is not said as
# "stopped".  Needs PostgreSQL (tests/pg.sh;
# skipped when none is installed).  Never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
DATA=$top_srcdir/tests/data/tune
QHOLD=$top_builddir/tests/qhold
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-torture-admin.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
mkdir -p "$CONF/lists" || exit 99

fails=0
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); echo "not ok $n - $1"; fails=$((fails + 1)); }
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
sql() { psql -X -A -t -q -c "$1" 2>/dev/null; }
# the loops run hundreds of commands: fewer, spread over the range
# (set before torture_lib.sh, whose own defaults would win otherwise)
TORTURE_DENSE=${TORTURE_DENSE:-80}
TORTURE_SPARSE=${TORTURE_SPARSE:-40}
. "$top_srcdir/tests/torture_lib.sh"

printf 'tokens_dir = %s/tokens\n' "$T" > "$CONF/listgate.conf"
printf '# dev\nham_cutoff = 0.000001\n' > "$CONF/lists/dev.conf"
printf 'hold_expiry_days = 1\nexpire_action = discard-learn\n' \
    > "$CONF/lists/ex.conf"
unset LISTGATE_FAIL_ALLOC LISTGATE_ALLOC_REPORT
lg migrate > /dev/null 2> "$T/err" || { cat "$T/err"; exit 99; }
# a journal of 25 ham and 25 spam: enough for tune, quick to read
lg train --quiet --list dev --ham $(ls "$DATA"/ham/*.eml | head -25) \
    > /dev/null &&
    lg train --quiet --list dev --spam $(ls "$DATA"/spam/*.eml | head -25) \
    > /dev/null || { echo "# training failed"; exit 99; }
cp "$CONF/lists/dev.conf" "$T/dev.before"

run_tune() { lg tune --list dev --json; }
# its JSON says how long it took: the rest must be the clean run's
check_tune() {
	[ "$(torture_hit)" = 0 ] || return 0
	sed 's/"seconds":[0-9.]*//' "$T/out" > "$T/out.s"
	sed 's/"seconds":[0-9.]*//' "$T/base.out" > "$T/base.s"
	cmp -s "$T/out.s" "$T/base.s" && return 0
	echo "n=$1: no allocation failed but the output differs"
	return 1
}
TORTURE_CMP_OUT=0
torture "tune --json" "0 1" run_tune check_tune
# the text report (histogram, table, advice) too
run_tune_text() { lg tune --list dev; }
check_tune_text() {
	[ "$(torture_hit)" = 0 ] || return 0
	sed 's/scored in [0-9.]* s/scored/' "$T/out" > "$T/out.s"
	sed 's/scored in [0-9.]* s/scored/' "$T/base.out" > "$T/base.s"
	cmp -s "$T/out.s" "$T/base.s" && return 0
	echo "n=$1: no allocation failed but the output differs"
	return 1
}
torture "tune (text)" "0 1" run_tune_text check_tune_text

# --apply: the clean run's file is the one to end with
lg tune --list dev --apply > /dev/null 2>&1 || { echo "# apply failed"; exit 99; }
cp "$CONF/lists/dev.conf" "$T/dev.after"
run_apply() {
	cp "$T/dev.before" "$CONF/lists/dev.conf"
	lg tune --list dev --apply
}
check_apply() {
	if ! cmp -s "$CONF/lists/dev.conf" "$T/dev.before" &&
	    ! cmp -s "$CONF/lists/dev.conf" "$T/dev.after"; then
		echo "n=$1: exit $rc left lists/dev.conf neither old nor new"
		return 1
	fi
	if [ "$rc" -eq 0 ] && ! cmp -s "$CONF/lists/dev.conf" "$T/dev.after"; then
		echo "n=$1: exit 0 but lists/dev.conf is not the new file"
		return 1
	fi
	if [ "$(ls "$CONF/lists" | grep -c tmp)" -ne 0 ]; then
		echo "n=$1: a temporary file left in lists/"
		return 1
	fi
	return 0
}
torture "tune --apply" "0 1" run_apply check_apply

# --apply turning word pairs on: the token file rebuilt with them, then
# the key.  After any run: the key unchanged and the file as it was or
# rebuilt with pairs (read by nobody while the key says no), or both new
python3 "$top_srcdir/tests/mkpairs.py" "$T/pairs" 25 || exit 99
printf 'ham_cutoff = 0.5\n' > "$CONF/lists/pairs.conf"
cp "$CONF/lists/pairs.conf" "$T/pairs.before"
lg train --quiet --list pairs --ham "$T/pairs/ham" > /dev/null &&
    lg train --quiet --list pairs --spam "$T/pairs/spam" > /dev/null ||
    { echo "# training failed"; exit 99; }
cp "$T/tokens/pairs.kch" "$T/pairs.kch.before"
ntok() { lg score --list pairs --db-dump 2>/dev/null | wc -l; }
n0=$(ntok)
lg tune --list pairs --apply > /dev/null 2>&1 || { echo "# apply failed"; exit 99; }
grep -q '^word_pairs = yes$' "$CONF/lists/pairs.conf" ||
    { echo "# tune did not turn word pairs on"; exit 99; }
cp "$CONF/lists/pairs.conf" "$T/pairs.after"
n1=$(ntok)
[ "$n1" -gt "$n0" ] || { echo "# no pairs in the rebuilt file"; exit 99; }
run_pairs() {
	cp "$T/pairs.before" "$CONF/lists/pairs.conf"
	cp "$T/pairs.kch.before" "$T/tokens/pairs.kch"
	lg tune --list pairs --apply
}
check_pairs() {
	_nt=$(ntok)
	if cmp -s "$CONF/lists/pairs.conf" "$T/pairs.after"; then
		[ "$_nt" -eq "$n1" ] && return 0
		echo "n=$1: word_pairs = yes with $_nt tokens in the file, want $n1"
		return 1
	fi
	if ! cmp -s "$CONF/lists/pairs.conf" "$T/pairs.before"; then
		echo "n=$1: exit $rc left lists/pairs.conf neither old nor new"
		return 1
	fi
	if [ "$rc" -eq 0 ]; then
		echo "n=$1: exit 0 but lists/pairs.conf is the old file"
		return 1
	fi
	if [ "$_nt" -ne "$n0" ] && [ "$_nt" -ne "$n1" ]; then
		echo "n=$1: $_nt tokens in the file: neither $n0 nor $n1"
		return 1
	fi
	return 0
}
torture "tune --apply, word pairs turned on" "0 1" run_pairs check_pairs

run_stats() { lg stats --json --by day; }
torture "stats --json --by day" "0 1" run_stats

# expire: a fresh old post each run
run_expire() {
	(unset LISTGATE_FAIL_ALLOC LISTGATE_ALLOC_REPORT
	 sql "UPDATE held_posts SET status = 'expired', decided_at = now(),
	     decided_by = 'x' WHERE list = 'ex' AND status = 'held'"
	 k=$(($(cat "$T/k" 2>/dev/null || echo 0) + 1))
	 echo "$k" > "$T/k"
	 sed "s/^Subject: /Subject: run $k /" "$(ls "$DATA"/spam/*.eml | head -1)" \
	     > "$T/post.eml"
	 id=$("$QHOLD" ex "$T/post.eml") || exit 99
	 echo "$id" > "$T/id"
	 sql "UPDATE held_posts SET arrived_at = now() - interval '2 days'
	     WHERE id = $id") || return 99
	lg expire --quiet
}
check_expire() {
	id=$(cat "$T/id")
	# an allocation failure is said as one ("list ex: stopped" was what
	# expire said when its list of posts due could not grow)
	if grep -q "stopped" "$T/err"; then
		echo "n=$1: $(grep stopped "$T/err")"
		return 1
	fi
	st=$(sql "SELECT status FROM held_posts WHERE id = $id")
	ev=$(sql "SELECT count(*) FROM train_journal WHERE post_id = $id")
	if [ "$st" = expired ] && [ "$ev" = 1 ]; then
		return 0
	fi
	if [ "$rc" -ne 0 ] && [ "$st" = held ] && [ "$ev" = 0 ]; then
		return 0
	fi
	echo "n=$1: exit $rc left status '$st' with $ev training events"
	return 1
}
TORTURE_CMP_OUT=0
torture "expire (discard-learn)" "0 1" run_expire check_expire

echo "1..$n"
[ "$fails" -eq 0 ]

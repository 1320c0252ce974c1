#!/bin/sh
# hostile_posts.sh - hostile posts through the whole command
#
# tests/mkhostile writes named worst cases (an empty post, NUL bytes
# only, a 10 MB header line with and without a newline, 100 000 nested
# multipart levels and message/rfc822 levels, a million header lines,
# a 100 KB boundary, 10 MB of base64 on one line, bare CRs, 100 000
# encoded words, hostile HTML, ...) and 100 fixed-seed random posts
# (1000 with LISTGATE_TORTURE=long; the fuzzers go on from there).
# Each must go through `score`, `tokens`, `train` and `filter` without
# a signal or a sanitizer report, and with the right exit class:
#   score, tokens: 0 (hostile bytes are input, not errors; overruns
#       truncate); train, train --unlearn: 0 but for the empty post,
#       which is no post (named and skipped, exit 1);
#   filter --mta postfix on a list whose cutoffs pass everything: 0 and
#       the `deliver` command gets the post byte for byte, from a file
#       and from a pipe; only the empty post defers (75);
#   filter --mta qmail on a trained list without a database: 0 (pass)
#       or 111 (a hold that cannot be stored);
#   score of the deepest and longest ones with the n-th allocation
#       failing (tests/torture_lib.sh): 0 with the clean run's output,
#       or 1.
# Any crash found here becomes a fixture under tests/data/mail.  Works
# in a mktemp -d directory removed at the end; never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
DATA=$top_srcdir/tests/data/train
MKHOSTILE=$top_builddir/tests/mkhostile
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-hostile.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
SINK=$T/sink
H=$T/posts
SAN_RE='(Address|Leak|Memory|Thread|UndefinedBehavior)Sanitizer|runtime error:'

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), pg_part, lock_file
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }

mkdir -p "$CONF/lists" "$H" || exit 99
nrandom=100
[ "${LISTGATE_TORTURE:-}" = long ] && nrandom=1000
"$MKHOSTILE" "$H" "$nrandom" || { echo "# mkhostile failed"; exit 99; }
printf 'tokens_dir = tokens\nlock_wait_ms = 2000\n' > "$CONF/listgate.conf"
printf 'ham_cutoff = 0.5\nspam_cutoff = 0.9\n' > "$CONF/lists/demo.conf"
printf 'ham_cutoff = 1\nspam_cutoff = 1\ndeliver = /bin/sh -c "cat > %s"\n' \
    "$SINK" > "$CONF/lists/open.conf"
lg train --quiet --list demo --spam "$DATA"/spam[1-4].eml >/dev/null &&
    lg train --quiet --list demo --ham "$DATA"/ham[1-4].eml >/dev/null ||
    { echo "# training failed"; exit 99; }
cp "$CONF/tokens/demo.kch" "$CONF/tokens/open.kch" || exit 99
nposts=$(ls "$H" | wc -l)

# the problem with the last run ($rc, $T/err) or nothing; WANT = the
# allowed exit codes
problem() {
	if [ "$rc" -gt 128 ]; then
		echo "killed by signal $((rc - 128))"
	elif grep -Eq "$SAN_RE" "$T/err"; then
		echo "sanitizer report:"
		grep -E -A10 "$SAN_RE" "$T/err" | head -n 12 | sed 's/^/#   /'
	else
		case " $1 " in
		*" $rc "*) ;;
		*) echo "exit $rc, want $1: $(head -c 200 "$T/err")" ;;
		esac
	fi
}

# run CMD on every post one by one; name each that fails
each() {
	_desc=$1 _want=$2; shift 2
	_bad=0
	for p in "$H"/*.eml; do
		"$@" "$p" > "$T/out" 2> "$T/err" < /dev/null
		rc=$?
		_why=$(problem "$_want")
		if [ -n "$_why" ]; then
			echo "# ${p##*/}: $_why"
			_bad=$((_bad + 1))
		fi
	done
	[ $_bad -eq 0 ] && ok "$_desc: $nposts posts" ||
	    bad "$_desc: $_bad of $nposts posts"
}

# --- score: all posts in one process, then one by one if that failed ----------
lg score --list demo "$H" > "$T/out" 2> "$T/err"
rc=$?
why=$(problem 0)
lines=$(wc -l < "$T/out")
if [ -z "$why" ] && [ "$lines" -eq "$nposts" ]; then
	ok "score: $nposts hostile posts in one run, one line each"
else
	bad "score: $nposts hostile posts in one run ($lines lines) $why"
	each "score, one by one" 0 lg score --list demo
fi
bad_lines=$(grep -Ecv '^(ham|unsure|spam) [0-9.e-]+ ' "$T/out")
[ "$bad_lines" -eq 0 ] && ok "score: every line is VERDICT SCORE NAME" ||
    bad "score: $bad_lines lines are not VERDICT SCORE NAME"
lg score --list demo -v --json "$H" > "$T/out" 2> "$T/err"
rc=$?
why=$(problem 0)
lines=$(grep -c '^{"file":.*}$' "$T/out")
[ -z "$why" ] && [ "$lines" -eq "$nposts" ] &&
    ok "score -v --json: one object per post" ||
    bad "score -v --json: $lines objects for $nposts posts $why"
if LC_ALL=C grep -q '[[:cntrl:]]' "$T/out"; then
	bad "score -v --json: control bytes in the output"
else
	ok "score -v --json: no control bytes reach the output"
fi

# --- tokens, one process per post -------------------------------------------
each "tokens" 0 "$LISTGATE" --allow-root tokens

# --- train and unlearn the lot --------------------------------------------------
# (the empty post is no post: named and skipped, exit 1; every other
# one is learnt)
only_empty() {
	why=$(problem 1)
	[ -z "$why" ] && ! grep -v 'h01-empty.eml: an empty post (0 bytes): skipped$' "$T/err" |
	    grep -qv '1 input could not be read$' ||
	    why="${why:-an error besides the empty post: $(head -c 300 "$T/err")}"
}
lg train --quiet --list tr --spam "$H" > "$T/out" 2> "$T/err"
rc=$?
only_empty
[ -z "$why" ] && ok "train --spam: all hostile posts, the empty one skipped" ||
    bad "train --spam: all hostile posts: $why"
lg score --list tr --db-stats > "$T/stats" 2>&1
grep -qx "spam_posts $((nposts - 1))" "$T/stats" && ok "train: $((nposts - 1)) posts counted" ||
    bad "train: $((nposts - 1)) posts counted ($(tr '\n' ' ' < "$T/stats"))"
lg train --quiet --list tr --spam --unlearn "$H" > "$T/out" 2> "$T/err"
rc=$?
only_empty
[ -z "$why" ] && ok "train --spam --unlearn: all hostile posts, the empty one skipped" ||
    bad "train --spam --unlearn: all hostile posts: $why"
lg score --list tr --db-stats > "$T/stats" 2>&1
grep -qx "spam_posts 0" "$T/stats" && grep -qx "tokens 0" "$T/stats" &&
    ok "unlearning gives back an empty token file" ||
    bad "unlearning gives back an empty token file ($(tr '\n' ' ' < "$T/stats"))"

# --- filter: the post passes through unchanged, from a file and a pipe -------------
filter_file() {
	rm -f "$SINK"
	"$LISTGATE" --allow-root --config "$CONF" filter --list open --mta postfix \
	    -f s@example.net -- open@lists.example.org < "$1"
}
filter_pipe() {
	rm -f "$SINK"
	cat "$1" | "$LISTGATE" --allow-root --config "$CONF" filter --list open \
	    --mta postfix -f s@example.net -- open@lists.example.org
}
for how in file pipe; do
	nb=0
	for p in "$H"/*.eml; do
		"filter_$how" "$p" > "$T/out" 2> "$T/err"
		rc=$?
		if [ -s "$p" ]; then want=0; else want=75; fi
		why=$(problem $want)
		if [ -z "$why" ] && [ $rc -eq 0 ] && ! cmp -s "$SINK" "$p"; then
			why="delivered, but not byte for byte"
		fi
		if [ -z "$why" ] && [ $rc -ne 0 ] && [ -e "$SINK" ]; then
			why="deferred after deliver ran"
		fi
		if [ -n "$why" ]; then
			echo "# ${p##*/}: $why"
			nb=$((nb + 1))
		fi
	done
	[ $nb -eq 0 ] &&
	    ok "filter --mta postfix from a $how: every post delivered unchanged (the empty one deferred)" ||
	    bad "filter --mta postfix from a $how: $nb of $nposts posts"
done
filter_qmail() {
	"$LISTGATE" --allow-root --config "$CONF" filter --list demo --mta qmail \
	    -f s@example.net -- demo@lists.example.org < "$1"
}
each "filter --mta qmail, trained list, no database" "0 111" filter_qmail

# --- the deep and the long ones with the n-th allocation failing ------------------
. "$top_srcdir/tests/torture_lib.sh"
check_same() {
	if [ "$rc" -eq 0 ] && ! cmp -s "$T/out" "$T/base.out"; then
		echo "n=$1: exit 0 but the output differs from the clean run"
		return 1
	fi
	return 0
}
run_score() { "$LISTGATE" --allow-root --config "$CONF" score --list demo "$POST"; }
for POST in "$H"/h05-*.eml "$H"/h08-*.eml "$H"/h12-*.eml "$H"/h13-*.eml \
    "$H"/h15-*.eml "$H"/h16-*.eml "$H"/h17-*.eml "$H"/r0006.eml; do
	torture "score ${POST##*/}" "0 1" run_score check_same
done

echo "1..$n"
[ $fails -eq 0 ]

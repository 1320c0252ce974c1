#!/bin/sh
# parse_diff.sh - the differential test: listgate's body words against
# those Python's email package extracts (tests/parse_diff.py), on every
# fixture and on every 10th post of the SpamAssassin public corpus
#
#   sh tests/parse_diff.sh           make check: fixtures and the sample
#   sh tests/parse_diff.sh --long    the whole corpus (about 6,000 posts)
#
# Fails when a post's recall is below 0.9 and the allow-list
# (tests/data/parse_diff_allow.txt) does not say why, and, in the long
# mode, when the corpus' 1st-percentile recall is below 0.98.  The corpus
# is never fetched here: it is used when $LISTGATE_CORPUS names it or it
# is in the cache (tests/bench/corpus.sh --find); otherwise that part
# prints a "# SKIP" line (run-all.sh fetches it first, so CI never skips).
top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
lg=${LISTGATE:-$top/build/listgate}
long=0
case ${1:-} in
--long) long=1 ;;
"") ;;
-h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
*) echo "usage: sh tests/parse_diff.sh [--long]" >&2; exit 2 ;;
esac
command -v python3 >/dev/null || { echo "parse_diff: needs python3"; exit 99; }
allow=$top/tests/data/parse_diff_allow.txt
fail=0

python3 "$top/tests/parse_diff.py" --listgate "$lg" --strict \
    --allow "$allow" --fixtures "$top/tests/data/mail" || fail=1

if data=$(sh "$top/tests/bench/corpus.sh" --find); then
	if [ $long -eq 1 ]; then
		python3 "$top/tests/parse_diff.py" --listgate "$lg" --strict \
		    --allow "$allow" --corpus "$data" --all --min-p1 0.98 ||
		    fail=1
	else
		python3 "$top/tests/parse_diff.py" --listgate "$lg" --strict \
		    --allow "$allow" --corpus "$data" --sample 10 || fail=1
	fi
else
	echo "# SKIP corpus part: no SpamAssassin corpus (set LISTGATE_CORPUS," \
	    "or fetch it: sh tests/bench/corpus.sh)"
fi
exit $fail

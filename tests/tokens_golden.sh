#!/bin/sh
# tokens_golden.sh - `listgate tokens` output of chosen fixtures against
# the expected token lists, plus the command's contract (stdin, empty
# input, unreadable file, usage).
#
# For each tests/data/tokens/X.ref the post is tests/data/mail/X.eml and
# `$LISTGATE tokens < X.eml` must print exactly X.ref.  When the
# tokenizer changes on purpose (and TOK_VERSION is bumped once token
# files exist), regenerate the refs from a fresh build and review the
# diff before committing:
#	LISTGATE=build/listgate top_srcdir=. REGEN=1 sh tests/tokens_golden.sh
#	git diff tests/data/tokens
top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
lg=${LISTGATE:-$top/build/listgate}
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0
n=0

for ref in "$top"/tests/data/tokens/*.ref; do
	[ -f "$ref" ] || continue
	base=$(basename "$ref" .ref)
	eml="$top/tests/data/mail/$base.eml"
	if [ ! -f "$eml" ]; then
		echo "FAIL $base: no fixture $eml"
		fail=1
		continue
	fi
	if ! "$lg" --allow-root tokens < "$eml" > "$tmp/out"; then
		echo "FAIL $base: listgate tokens exited non-zero"
		fail=1
		continue
	fi
	if [ -n "$REGEN" ]; then
		cp "$tmp/out" "$ref"
		echo "regenerated $ref"
		continue
	fi
	if ! cmp -s "$tmp/out" "$ref"; then
		echo "FAIL $base: tokens differ from $ref"
		diff "$ref" "$tmp/out" | head -20
		fail=1
	fi
	# the file argument gives the same tokens as standard input
	if ! "$lg" --allow-root tokens "$eml" | cmp -s - "$ref"; then
		echo "FAIL $base: FILE and stdin differ"
		fail=1
	fi
	n=$((n + 1))
done
[ -n "$REGEN" ] && exit 0
[ "$n" -ge 5 ] || { echo "FAIL: only $n golden files"; fail=1; }

# empty input: exit 0; a missing file: exit 1 naming it
: > "$tmp/empty"
"$lg" --allow-root tokens < "$tmp/empty" > /dev/null || { echo "FAIL: empty input"; fail=1; }
if "$lg" --allow-root tokens "$tmp/nonexistent" > /dev/null 2> "$tmp/err"; then
	echo "FAIL: a missing file succeeded"
	fail=1
else
	[ $? -eq 1 ] || { echo "FAIL: missing file: exit not 1"; fail=1; }
	grep -q "$tmp/nonexistent" "$tmp/err" ||
	    { echo "FAIL: message does not name the file"; fail=1; }
fi
"$lg" --allow-root tokens --help | grep -q "usage: listgate \[--config DIR\] tokens" ||
    { echo "FAIL: --help"; fail=1; }
"$lg" --allow-root tokens --bogus > /dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL: a bad option is not a usage error"; fail=1; }
# binary garbage: exit 0, every line at most 255 bytes
head -c 200000 /dev/urandom > "$tmp/junk" 2>/dev/null ||
    dd if=/dev/urandom of="$tmp/junk" bs=1000 count=200 2>/dev/null
"$lg" --allow-root tokens "$tmp/junk" > "$tmp/jout" || { echo "FAIL: garbage input"; fail=1; }
awk 'length($0) > 255 { bad = 1 } END { exit bad }' "$tmp/jout" ||
    { echo "FAIL: a token longer than 255 bytes"; fail=1; }

[ $fail -eq 0 ] && echo "tokens golden: $n posts ok"
exit $fail

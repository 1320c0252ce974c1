#!/bin/sh
# sync_foreign.sh - another list's token file put in place of a list's
# (an administrator's copy, a restore into the wrong name) is refused by
# sync, train and sync --check, never learnt on top of
#
# Lists a and b each learn a few posts through the journal, a's first.
# a's token file then replaces b's: its journal position is an event of
# list a that comes before b's newest, so the file is not "ahead" of b's
# journal, and its mark is the event's own.  sync, train and sync --check
# of b must refuse, naming list a and `listgate rebuild --list b`, and
# leave the file as it was; rebuild then makes b's file equal to one
# built from b's journal alone.  Runs under tests/pg.sh; temporary
# files in a mktemp -d directory.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-foreign.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
for c in main fresh; do
	mkdir -p "$T/conf-$c/lists" || exit 99
	printf 'tokens_dir = %s/tokens-%s\n' "$T" "$c" > "$T/conf-$c/listgate.conf"
	: > "$T/conf-$c/lists/a.conf"
	: > "$T/conf-$c/lists/b.conf"
done

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
lg() { "$LISTGATE" --allow-root --config "$T/conf-main" "$@"; }
run() { "$@" > "$T/out" 2> "$T/err"; rc=$?; }
dump() {	# dump CONF LIST: the list's token file, sorted
	"$LISTGATE" --allow-root --config "$T/conf-$1" score --list "$2" \
	    --db-dump | LC_ALL=C sort
}

lg migrate -q || exit 99
lg train -q --list a --spam "$DATA"/spam[12].eml &&
    lg train -q --list a --ham "$DATA"/ham[12].eml &&
    lg train -q --list b --spam "$DATA"/spam[34].eml &&
    lg train -q --list b --ham "$DATA"/ham[34].eml || exit 99
run lg sync --check
check "two lists trained through the journal: sync --check exits 0" \
    test "$rc" -eq 0

cp "$T/tokens-main/a.kch" "$T/tokens-main/b.kch" || exit 99
cksum < "$T/tokens-main/b.kch" > "$T/before"
run lg sync --list b
check "sync of list b with list a's token file in place fails" \
    test "$rc" -eq 1
check "... saying the file was built from list a's journal" \
    grep -q "token file of list b was built from the journal of list a" "$T/err"
check "... and to run rebuild" grep -q "listgate --config [^ ]* rebuild --list b" "$T/err"
lg train -q --list b --ham "$DATA"/ham-test.eml 2> "$T/err"
check "train of list b still journals the post (it is not lost)" \
    test "$(psql -X -q -A -t -c "SELECT count(*) FROM train_journal WHERE list = 'b'")" -eq 5
check "... and its sync warns with the same words" \
    grep -q "built from the journal of list a" "$T/err"
cksum < "$T/tokens-main/b.kch" > "$T/after"
check "the copied file is left as it was" cmp -s "$T/before" "$T/after"
run lg sync --check --list b
check "sync --check of list b fails" test "$rc" -ne 0
check "... naming list a" grep -q "journal of list a" "$T/out" "$T/err"
run lg sync --list a
check "list a's own file still syncs" test "$rc" -eq 0

run lg rebuild --list b
check "rebuild --list b exits 0" test "$rc" -eq 0
run lg sync --list b
check "then sync of list b exits 0" test "$rc" -eq 0
"$LISTGATE" --allow-root --config "$T/conf-fresh" sync -q > /dev/null 2>&1
dump main b > "$T/b.main"
dump fresh b > "$T/b.fresh"
check "b's rebuilt file holds exactly b's journal (as a fresh sync's)" \
    cmp -s "$T/b.main" "$T/b.fresh"
check "... which is not list a's" test -s "$T/b.fresh"
dump fresh a > "$T/a.fresh"
check "... (a's file differs from b's)" test "$(cat "$T/a.fresh" | cksum)" != "$(cat "$T/b.fresh" | cksum)"

echo "1..$n"
[ "$fails" -eq 0 ]

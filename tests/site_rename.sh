#!/bin/sh
# site_rename.sh - a list renamed in SQL (its journal events given the
# new name) does not stop the site store's feed, and no event is fed or
# learnt twice
#
# List old learns four posts, which the site store is fed and learns.
# The administrator renames the list: UPDATE train_journal SET list =
# 'new' (and moves the token file).  The feed then read those events
# again as the new list's (it has no last fed yet) and, site_feed
# taking each event once, failed on every sync from then on ("duplicate
# key value violates unique constraint"), the site store learning
# nothing more.  Now sync exits 0, feeds and applies only the newer
# events, and the site store equals one a fresh host builds.  Runs
# under tests/pg.sh; files in a mktemp -d directory.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-siteren.XXXXXX") || exit 99
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
dump() {
	"$LISTGATE" --allow-root --config "$T/$1" score --list site --db-dump |
	    LC_ALL=C sort
	"$LISTGATE" --allow-root --config "$T/$1" score --list site --db-stats
}
posts() {
	"$LISTGATE" --allow-root --config "$T/$1" score --list site --db-stats |
	    awk '$1 ~ /_posts$/ { n += $2 } END { print n + 0 }'
}

lgA migrate -q || exit 99
lgA train -q --list old --spam "$DATA"/spam[1-4].eml || exit 99
lgA sync -q || exit 99
check "the site store learnt list old's 4 posts" test "$(posts A)" -eq 4
sqlp "UPDATE train_journal SET list = 'new' WHERE list = 'old'" || exit 99
mv "$T/tokens-A/old.kch" "$T/tokens-A/new.kch" || exit 99
lgA train -q --list dev --ham "$DATA"/ham1.eml "$DATA"/ham2.eml || exit 99
run lgA sync
check "after the rename, sync exits 0" test "$rc" -eq 0
check "... the site store fed and applied the 2 new events alone" \
    grep -q "^list site (the site store): [0-9]* events* newly fed, 2 applied" "$T/out"
check "... having learnt 6 posts, none twice" test "$(posts A)" -eq 6
check "... each event fed once" test "$(sqlp "SELECT count(*) FROM site_feed")" -eq 6
lgA train -q --list new --ham "$DATA"/ham3.eml || exit 99
run lgA sync
check "the renamed list's next event is fed and learnt" \
    test "$rc" -eq 0 -a "$(posts A)" -eq 7
lgF sync -q || exit 99
dump A > "$T/dA"
dump F > "$T/dF"
check "the site store equals a fresh host's" cmp -s "$T/dA" "$T/dF"

echo "1..$n"
[ "$fails" -eq 0 ]

#!/bin/sh
# settings_tokens.sh - one source of tokenizer and classifier settings:
# for a list with max_scan_bytes = 2048 and max_tokens = 5, train
# (through the journal and directly), sync, rebuild, score and filter
# see exactly the tokens `tokens --list L` prints, none of the words
# past the first 2048 bytes, and filter and score let the same 5 tokens
# vote.  Fails when any of them takes the defaults instead.
#
# Runs under tests/pg.sh; temporary files in a mktemp -d directory.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-settok.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
# conf-db: the database from the PG* environment; conf-solo: none
for c in db solo; do
	mkdir -p "$T/conf-$c/lists" || exit 99
	printf 'tokens_dir = %s/tokens-%s\n' "$T" "$c" > "$T/conf-$c/listgate.conf"
	printf 'max_scan_bytes = 2048\nmax_tokens = 5\n' > "$T/conf-$c/lists/small.conf"
done

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
lgdb() { "$LISTGATE" --allow-root --config "$T/conf-db" "$@"; }
lgsolo() {
	env -u PGHOST -u PGPORT -u PGUSER -u PGDATABASE \
	    "$LISTGATE" --allow-root --config "$T/conf-solo" "$@"
}
# the tokens of list small's token file, sorted
dump() {
	"$LISTGATE" --allow-root --config "$T/conf-$1" score --list small --db-dump |
	    sed 's/^[0-9]* [0-9]* //' | LC_ALL=C sort
}
# post N: words pNeK in its first 1500 bytes, then words pNlK up to
# about 4 KiB (the ones past byte 2048 must never be seen)
mkpost() {
	awk -v i="$1" 'BEGIN {
		printf "From: a%d@example.org\nTo: small@lists.example.org\n", i
		printf "Subject: settings post %d\nMessage-ID: <%d@settings.example>\n\n", i, i
		n = 0
		for (k = 0; n < 1500; k++) {
			w = sprintf("p%de%d", i, k)
			printf "%s%s", w, k % 10 == 9 ? "\n" : " "
			n += length(w) + 1
		}
		for (k = 0; n < 4000; k++) {
			w = sprintf("p%dl%d", i, k)
			printf "%s%s", w, k % 10 == 9 ? "\n" : " "
			n += length(w) + 1
		}
		printf "p%dlast\n", i
	}' > "$T/p$1.eml"
}
for i in 1 2 3 4 5; do mkpost "$i"; done
# the union of `tokens --list small` over posts 1-4: what must be learnt
for i in 1 2 3 4; do lgdb tokens --list small "$T/p$i.eml"; done |
    LC_ALL=C sort -u > "$T/want"
# ... and their keys, which the token file keeps (score --db-dump)
for i in 1 2 3 4; do lgdb tokens --list small --keys "$T/p$i.eml"; done |
    awk '{print $1}' | LC_ALL=C sort -u > "$T/wantk"

check "tokens --list small leaves out the words past 2048 bytes" \
    sh -c "! grep -qx 'p1last' '$T/want' && ! grep -q '^p1l2[0-9][0-9]' '$T/want'"
lgdb tokens "$T/p1.eml" > "$T/default"
check "tokens without --list (the defaults) sees them" grep -qx p1last "$T/default"
check "tokens --list sees the words before 2048 bytes" grep -qx p1e10 "$T/want"
lgdb tokens --list nosuch.list "$T/p1.eml" > "$T/nosuch"
check "tokens --list of a list without a file: the defaults" \
    cmp -s "$T/default" "$T/nosuch"
lgdb tokens --list ../x "$T/p1.eml" > /dev/null 2>&1
check "tokens --list with a bad name is a usage error" test $? -eq 2

# train through the journal: the first train builds the file, the second
# applies the journal to it (both in qc_sync_list)
lgdb migrate -q || exit 99
lgdb train -q --list small --spam "$T/p1.eml" "$T/p2.eml"
check "train --spam through the journal exits 0" test $? -eq 0
lgdb train -q --list small --ham "$T/p3.eml" "$T/p4.eml"
check "train --ham through the journal exits 0" test $? -eq 0
dump db > "$T/got"
check "train + sync learnt exactly what tokens --list prints" cmp -s "$T/wantk" "$T/got"
cmp -s "$T/wantk" "$T/got" || diff "$T/wantk" "$T/got" | head -5 | sed 's/^/# /'

rm -f "$T/tokens-db/small.kch"
lgdb sync -q --list small
check "sync of a missing token file exits 0" test $? -eq 0
dump db > "$T/got"
check "sync built exactly what tokens --list prints" cmp -s "$T/wantk" "$T/got"

lgdb rebuild -q --list small
check "rebuild exits 0" test $? -eq 0
dump db > "$T/got"
check "rebuild built exactly what tokens --list prints" cmp -s "$T/wantk" "$T/got"

lgsolo train -q --list small --spam "$T/p1.eml" "$T/p2.eml" &&
    lgsolo train -q --list small --ham "$T/p3.eml" "$T/p4.eml"
check "train without a database exits 0" test $? -eq 0
dump solo > "$T/got"
check "train without a database learnt exactly what tokens --list prints" \
    cmp -s "$T/wantk" "$T/got"

# score and filter on a post of their own: the token count and the
# number of voting tokens (max_tokens = 5)
ntok=$(lgdb tokens --list small "$T/p5.eml" | wc -l)
ndef=$(lgdb tokens "$T/p5.eml" | wc -l)
check "post 5 has fewer tokens under the list's settings ($ntok < $ndef)" \
    test "$ntok" -lt "$ndef"
lgdb score --list small --json "$T/p5.eml" > "$T/score"
check "score --json counts the tokens tokens --list prints ($ntok)" \
    grep -q "\"tokens\":$ntok," "$T/score"
check "score lets max_tokens = 5 tokens vote" grep -q '"used":5[,}]' "$T/score"
if command -v script >/dev/null 2>&1; then
	# filter logs its one summary line to stderr only on a terminal
	script -qc "'$LISTGATE' --allow-root --config '$T/conf-db' filter --list small --mta qmail -f a5@example.org -- small@lists.example.org < '$T/p5.eml'" \
	    /dev/null > "$T/tty" 2>&1
	check "filter logs tokens=$ntok as tokens --list counts" \
	    grep -q "list=small .* tokens=$ntok used=" "$T/tty"
	check "filter lets max_tokens = 5 tokens vote" \
	    grep -q "list=small .* used=5 " "$T/tty"
	grep -q "list=small" "$T/tty" || sed 's/^/# /' "$T/tty"
else
	bad "script(1) is needed to see filter's log line"
fi

echo "1..$n"
[ "$fails" -eq 0 ]

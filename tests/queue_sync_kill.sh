#!/bin/sh
# queue_sync_kill.sh - `listgate sync` killed with SIGKILL at random
# points loses nothing and applies nothing twice; `rebuild` agrees
#
# 50 rounds: journal another batch of generated posts, start sync, kill
# it after a random delay (0-80 ms: before connecting, while building
# the missing file, mid-batch, during a commit).  Then one clean sync; its token file must equal, record for
# record (meta and journal position included), a file synced once from
# the same journal into a second tokens_dir, and a rebuild.  Runs under
# tests/pg.sh; temporary files in a mktemp -d directory.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
QHOLD=$top_builddir/tests/qhold
ROUNDS=${LG_KILL_ROUNDS:-50}
PER_ROUND=${LG_KILL_POSTS:-150}
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-kill.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
for c in a b; do
	mkdir -p "$T/conf-$c" || exit 99
	printf 'tokens_dir = %s/tokens-%s\n' "$T" "$c" > "$T/conf-$c/listgate.conf"
done

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), pg_part, lock_file
dump() {	# dump CONF: the token file of list "big", sorted
	if command -v kchashmgr >/dev/null 2>&1; then
		kchashmgr list -pv -px "$T/tokens-$1/big.kch" | LC_ALL=C sort
	else
		"$LISTGATE" --allow-root --config "$T/conf-$1" score --list big --db-dump |
		    LC_ALL=C sort
	fi
}

# PER_ROUND generated posts (words from a 4000-word vocabulary, some
# multi-part) into $T/posts, separated by form-feed lines
gen() {
	awk -v seed="$1" -v n="$PER_ROUND" 'BEGIN {
		srand(seed);
		for (i = 0; i < n; i++) {
			printf "From: u%d@example.org\nSubject: post %d of %d w%d\n",
			    int(rand() * 300), i, seed, int(rand() * 4000);
			printf "Message-ID: <%d.%d@example.org>\n\n", seed, i;
			nw = 20 + int(rand() * 120);
			for (k = 0; k < nw; k++)
				printf "w%d%s", int(rand() * rand() * 4000),
				    k % 12 == 11 ? "\n" : " ";
			printf "\nhttp://h%d.example/p%d\n\f\n", int(rand() * 50),
			    int(rand() * 9);
		}
	}' > "$T/posts"
}

"$LISTGATE" --allow-root --config "$T/conf-a" migrate -q || exit 99

r=1
killed=0
start=$(date +%s)
while [ "$r" -le "$ROUNDS" ]; do
	gen "$r"
	cls=ham
	[ $((r % 3)) -eq 0 ] && cls=spam
	"$QHOLD" -j big "$cls" "$T/posts" > /dev/null || exit 99
	delay=$(awk -v s="$r" 'BEGIN { srand(s * 7919); printf "%.3f", rand() * 0.08 }')
	"$LISTGATE" --allow-root --config "$T/conf-a" sync -q --list big 2>/dev/null &
	pid=$!
	sleep "$delay"
	if kill -9 "$pid" 2>/dev/null; then
		killed=$((killed + 1))
	fi
	wait "$pid" 2>/dev/null
	r=$((r + 1))
done
end=$(date +%s)
echo "# $ROUNDS rounds of $PER_ROUND posts: $killed syncs killed while running, $((end - start)) s"
nev=$(psql -X -A -t -c "SELECT count(*) FROM train_journal WHERE list = 'big'")
check "the journal holds every generated post" \
    test "$nev" -eq $((ROUNDS * PER_ROUND))
nev=$((nev + PER_ROUND))

# three syncs at once: the token file's lock serialises them and each
# re-reads the position under it
gen 999
"$QHOLD" -j big spam "$T/posts" > /dev/null || exit 99
for i in 1 2 3; do
	"$LISTGATE" --allow-root --config "$T/conf-a" sync -q --list big > "$T/out$i" 2>&1 &
	eval "p$i=\$!"
done
wait "$p1"; r1=$?; wait "$p2"; r2=$?; wait "$p3"; r3=$?
check "three concurrent syncs exit 0" test "$r1$r2$r3" = 000
"$LISTGATE" --allow-root --config "$T/conf-a" sync --list big > "$T/out" 2>&1
check "sync after the kills exits 0" test $? -eq 0
t0=$(date +%s)
"$LISTGATE" --allow-root --config "$T/conf-b" sync --list big > "$T/out-b" 2>&1
check "a clean single sync exits 0" test $? -eq 0
t1=$(date +%s)
echo "# clean sync of $nev events: $((t1 - t0)) s ($(cat "$T/out-b"))"
dump a > "$T/dump-a"
dump b > "$T/dump-b"
check "the dump is not empty" test "$(wc -l < "$T/dump-a")" -gt 100
check "killed-and-resumed counts = clean single sync" \
    cmp -s "$T/dump-a" "$T/dump-b"
"$LISTGATE" --allow-root --config "$T/conf-a" rebuild -q --list big
check "rebuild exits 0" test $? -eq 0
check "no temporary build file is left behind" \
    test -z "$(find "$T/tokens-a" -name '.*' -print)"
dump a > "$T/dump-r"
check "rebuild counts = clean single sync" cmp -s "$T/dump-r" "$T/dump-b"

echo "1..$n"
[ "$fails" -eq 0 ]

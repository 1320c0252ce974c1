#!/bin/sh
# train_side.sh - two listgate binaries and bogofilter trained side by
# side on the SpamAssassin corpus's training half, as bench.sh trains
# (one process per class, every path in one argv): through the journal
# (a private PostgreSQL, syncing to disk) and standalone, ROUNDS rounds
# alternating, the fastest of each kept.  Not part of `make check`.
#
#   sh tests/bench/train_side.sh OLD NEW [SPLIT [ROUNDS]]
#
# OLD, NEW: listgate binaries; SPLIT: 100 (default) or 15; ROUNDS: 5.
# The corpus comes from tests/bench/corpus.sh's cache (LISTGATE_CORPUS
# names another data/ directory).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
[ $# -ge 2 ] || { sed -n '8p' "$0" | sed 's/^# *//' >&2; exit 2; }
old=$(realpath "$1"); new=$(realpath "$2")
split=${3:-100}; rounds=${4:-5}
data=${LISTGATE_CORPUS:-$top/cache/spam-assassin/package/data}
[ -d "$data" ] || sh "$here/corpus.sh" >/dev/null
command -v bogofilter >/dev/null || { echo "train_side: no bogofilter" >&2; exit 1; }

if [ -z "${PG_TEST_DIR:-}" ]; then
	PG_TEST_FSYNC=on exec sh "$top/tests/pg.sh" run sh "$0" "$old" "$new" "$split" "$rounds"
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-trainside.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM
python3 -c "
import sys; sys.path.insert(0, '$here')
import tunelib, os
lim = 128 if '$split' == '100' else 38
for c in ('ham', 'spam'):
    with open('$T/' + c, 'w') as f:
        for cl, p, b in tunelib.posts('$data'):
            if cl == c and b < lim:
                f.write(os.path.join('$data', p) + '\n')
"
mk() { rm -rf "$1"; mkdir -p "$1/tokens"; chmod 750 "$1/tokens"; printf 'tokens_dir = %s/tokens\n' "$1" > "$1/listgate.conf"; }
now() { date +%s.%N; }
mk "$T/cj"
"$new" --allow-root --config "$T/cj" migrate -q
for r in $(seq "$rounds"); do
	for v in old new; do
		eval lg=\$$v
		a=$(now)
		xargs -s 2000000 -a "$T/ham" "$lg" --allow-root --config "$T/cj" train -q --list "j$r$v" --ham
		xargs -s 2000000 -a "$T/spam" "$lg" --allow-root --config "$T/cj" train -q --list "j$r$v" --spam
		b=$(now)
		mk "$T/cd"
		env -u PGHOST -u PGPORT -u PGDATABASE -u PGUSER sh -c '
		    xargs -s 2000000 -a "$1/ham" "$2" --allow-root --config "$1/cd" train -q --list d --ham &&
		    xargs -s 2000000 -a "$1/spam" "$2" --allow-root --config "$1/cd" train -q --list d --spam' sh "$T" "$lg"
		c=$(now)
		echo "journal $v $(echo "$b - $a" | bc)"
		echo "standalone $v $(echo "$c - $b" | bc)"
	done
	rm -rf "$T/bf"; mkdir "$T/bf"
	a=$(now)
	xargs -s 2000000 -a "$T/ham" bogofilter -d "$T/bf" -n -B
	xargs -s 2000000 -a "$T/spam" bogofilter -d "$T/bf" -s -B
	echo "bogofilter - $(echo "$(now) - $a" | bc)"
done > "$T/times"
awk -v sp="$split" '
	{ k = $1 " " $2; if (!(k in best) || $3 < best[k]) best[k] = $3 }
	END {
		bf = best["bogofilter -"]
		printf "split %s%%, fastest of each (s); bogofilter %.3f\n", sp, bf
		n = split("journal old,journal new,standalone old,standalone new", ks, ",")
		for (i = 1; i <= n; i++)
			printf "  %-16s %.3f  bogofilter/this %.2f\n", ks[i],
			    best[ks[i]], bf / best[ks[i]]
	}' "$T/times"

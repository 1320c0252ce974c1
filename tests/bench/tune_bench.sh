#!/bin/sh
# tune_bench.sh - what `listgate tune` buys on the SpamAssassin corpus,
# against bogofilter at its defaults and as bogotune -D tunes it
#
# Not part of `make check`: it needs the corpus (fetched by bench.sh),
# bogofilter with bogotune (Debian's bogofilter package) and PostgreSQL
# (a private cluster from tests/pg.sh: tune reads a list's journal).
# For the 100% and 15% training halves of bench.sh's split, the training
# half is the list's journal and the test half is never seen by tune nor
# bogotune; see tune_bench.py and tests/bench/README.md.  Then times a
# tune of a 4000-post journal.
#
#   sh tests/bench/tune_bench.sh [--listgate PATH] [--splits 100,15]
#                                [--timing N] [--out DIR]
#
# Results: a table on standard output, and tune.json, table.txt and
# each tune's JSON in cache/bench-results/tune-DATE/ (or --out).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=${LISTGATE_CACHE:-$top/cache}
lg=${LISTGATE:-}
splits=100,15
timing=4000
out=

usage() {
	sed -n '13,14p' "$0" | sed 's/^# *//' >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case $1 in
	--listgate) [ $# -ge 2 ] || usage; lg=$2; shift ;;
	--splits) [ $# -ge 2 ] || usage; splits=$2; shift ;;
	--timing) [ $# -ge 2 ] || usage; timing=$2; shift ;;
	--out) [ $# -ge 2 ] || usage; out=$2; shift ;;
	-h|--help) usage ;;
	*) echo "tune_bench: unknown argument $1" >&2; usage ;;
	esac
	shift
done

# the corpus and the binary, as bench.sh finds, fetches or builds them
prep=$(sh "$here/bench.sh" --prepare ${lg:+--listgate "$lg"}) || exit 1
data=$(printf '%s\n' "$prep" | sed -n 1p)
lg=$(printf '%s\n' "$prep" | sed -n 2p)
command -v bogotune >/dev/null || {
	echo "tune_bench: bogotune is missing (Debian: apt-get install bogofilter)" >&2
	exit 1
}
command -v stdbuf >/dev/null || { echo "tune_bench: stdbuf is missing" >&2; exit 1; }

stamp=$(date -u +%Y%m%dT%H%M%SZ)
[ -n "$out" ] || out=$cache/bench-results/tune-$stamp
work=$cache/tune-work
rm -rf "$work"
mkdir -p "$work/home" "$out"
HOME=$work/home
LISTGATE_CONFIG=/nonexistent-listgate-config
export HOME LISTGATE_CONFIG
echo "tune_bench: listgate $lg; results in $out" >&2
exec sh "$top/tests/pg.sh" run python3 "$here/tune_bench.py" \
    --listgate "$lg" --data "$data" --work "$work" --out "$out" \
    --splits "$splits" --timing "$timing"

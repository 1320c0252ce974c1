#!/bin/sh
# valgrind.sh - run listgate under valgrind's memcheck; the wrapper that
# `run-all.sh --valgrind` (and run-all.sh under CI) puts in place of
# listgate for a subset of the command-line tests:
#
#   make check TESTS="..." LISTGATE_WRAP=$top_srcdir/tests/valgrind.sh \
#       VG_LOGDIR=DIR
#
# Every run writes its own DIR/vg.PID.XXXXXX.log (a PID alone is reused
# in a long run, and a reused name would overwrite a log); a clean run
# leaves it empty (-q:
# valgrind prints only errors and leaks).  An error or a leak (definite,
# indirect or possible) also makes the run exit 97, so the test sees
# it.  Configured commands (deliver, release) are not traced.  The real
# binary is $LISTGATE_BIN (make check sets it).
: "${LISTGATE_BIN:?set by make check}"
: "${VG_LOGDIR:=${TMPDIR:-/tmp}}"
# no valgrind, or no log: say so and fail as a memcheck error would (97),
# leaving no empty log to be counted as a clean run
command -v valgrind >/dev/null 2>&1 || { echo "valgrind.sh: no valgrind" >&2; exit 97; }
# a descriptor 0, 1 or 2 the caller closed (a test's 2>&-) is opened on
# /dev/null first: valgrind's log file would take its number, and what
# listgate writes there would read as an error in the log
[ -e /proc/$$/fd/0 ] || exec 0</dev/null
[ -e /proc/$$/fd/1 ] || exec 1>/dev/null
[ -e /proc/$$/fd/2 ] || exec 2>/dev/null
# valgrind starts only with a TMPDIR it can write (it keeps the
# client's command line there): a run that points TMPDIR at a directory
# that cannot be written, to see listgate fail on it
# (tests/filter_postfix_codes.sh), runs listgate itself, unchecked, and
# leaves no log (a run not checked is not counted as a clean one)
if [ -n "${TMPDIR:-}" ] && ! { [ -d "$TMPDIR" ] && [ -w "$TMPDIR" ]; }; then
	exec "$LISTGATE_BIN" "$@"
fi
log=$(mktemp --suffix=.log "$VG_LOGDIR/vg.$$.XXXXXX") || exit 97
exec valgrind -q --tool=memcheck --error-exitcode=97 \
	--leak-check=full --show-leak-kinds=definite,indirect,possible \
	--errors-for-leak-kinds=definite,indirect,possible \
	--trace-children=no --child-silent-after-fork=yes \
	--suppressions="$(dirname "$0")/valgrind.supp" \
	--log-file="$log" "$LISTGATE_BIN" "$@"

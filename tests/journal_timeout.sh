#!/bin/sh
# journal_timeout.sh - a `train` that waits for the list's journal lock
# behind another training run, under a statement_timeout set in the
# database conninfo's options (for the filter's hold path), against a
# private PostgreSQL (tests/pg.sh)
#
# The first train reads its posts from a FIFO the test keeps open, so
# its batch (and the list's journal lock) lasts 2 s: a big mailbox
# being learnt.  A second train of the list meanwhile must wait for it,
# not be cut after 100 ms, and journal its post.  Never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-jto.XXXXXX") || exit 99
tp=
trap '[ -n "$tp" ] && kill -9 "$tp" 2>/dev/null; rm -rf "$T"' EXIT INT TERM

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
mkdir -p "$T/conf/lists" || exit 99
printf 'tokens_dir = %s/tokens\ndatabase = "options='"'"'-c statement_timeout=100'"'"'"\n' \
    "$T" > "$T/conf/listgate.conf"
lg() { "$LISTGATE" --allow-root --config "$T/conf" "$@"; }

lg migrate -q || exit 99
mkfifo "$T/fifo" || exit 99
"$LISTGATE" --allow-root --config "$T/conf" train -q --list dev \
    --spam "$T/fifo" > "$T/t1.out" 2>&1 &
tp=$!
exec 7> "$T/fifo"
cat "$DATA/spam2.eml" >&7
# the run has begun its batch: the list's journal lock is held
advisory_wait
# (not through lg: a shell function's redirection keeps a copy of the
# FIFO open in the background shell)
"$LISTGATE" --allow-root --config "$T/conf" train -q --list dev \
    --ham "$DATA/ham1.eml" > "$T/t2.out" 2>&1 7>&- &
t2=$!
sleep 2
exec 7>&-
wait "$t2"
r2=$?
wait "$tp"
r1=$?
tp=
check "the first train ends well ($r1: $(head -n 1 "$T/t1.out"))" test "$r1" -eq 0
check "a second train of the list waits for it 2 s and exits 0 ($r2: $(head -n 1 "$T/t2.out"))" \
    test "$r2" -eq 0
check "both posts are journaled" \
    test "$(sql "SELECT count(*) FROM train_journal WHERE list = 'dev'")" -eq 2
check "sync afterwards exits 0" lg sync -q

echo "1..$n"
[ "$fails" -eq 0 ]

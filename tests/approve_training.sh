#!/bin/sh
# approve_training.sh - an approval while a `train` run of the same list
# holds the list's training journal, against a private PostgreSQL
# (tests/pg.sh)
#
# train reads its posts from a FIFO the test keeps open, so the run (and
# its journal batch) lasts as long as the test wants: a big mailbox
# being learnt.  An approve of a held post of that list meanwhile must
# not release the post and then wait to record it: ended then (the
# watchdog of `moderate`, a kill), the post would stay 'releasing' after
# its release, unrecorded and unlearnt.  Checks:
#   - while train runs, approve has not released the post, and when it
#     is killed (SIGKILL, as a watchdog's end) the post is still held;
#   - once train has ended, approve releases it once, records it and
#     learns it once; the train run's post is journaled too.
# Never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
QHOLD=$top_builddir/tests/qhold
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-aptrain.XXXXXX") || exit 99
tp=
trap '[ -n "$tp" ] && kill -9 "$tp" 2>/dev/null; rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
mkdir -p "$CONF/lists" "$T/out" || exit 99

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }

printf 'tokens_dir = %s/tokens\n' "$T" > "$CONF/listgate.conf"
cat > "$T/release.sh" <<EOS
#!/bin/sh
cat > "$T/out/\$\$.tmp" && mv "$T/out/\$\$.tmp" "$T/out/\$\$.eml"
EOS
printf 'release = /bin/sh %s/release.sh\ntimeout = 60\n' "$T" \
    > "$CONF/lists/dev.conf"
lg migrate -q || exit 99
id=$("$QHOLD" dev "$DATA/ham1.eml" 0.98) || exit 99
status() { sql "SELECT status FROM held_posts WHERE id = $id"; }
nreleased() { ls "$T/out" | grep -c '\.eml$'; }

# a train run that holds the journal of dev until the FIFO closes
mkfifo "$T/fifo" || exit 99
lg train -q --list dev --spam "$T/fifo" > "$T/train.out" 2>&1 &
tp=$!
exec 7> "$T/fifo"
cat "$DATA/spam2.eml" >&7
# the run has begun its batch: its journal lock is held
advisory_wait

"$LISTGATE" --allow-root --config "$CONF" approve "$id" > "$T/ap.out" \
    2> "$T/ap.err" &
ap=$!
sleep 2
check "while train runs, approve has not released the post (released $(nreleased))" \
    test "$(nreleased)" -eq 0
kill -9 "$ap" 2>/dev/null
wait "$ap" 2>/dev/null
check "approve ended there (a watchdog's end) leaves the post held (is $(status))" \
    test "$(status)" = held

exec 7>&-
wait "$tp"
trc=$?
tp=
check "the train run ends well (status $trc)" test "$trc" -eq 0
lg approve "$id" > "$T/ap.out" 2> "$T/ap.err"
rc=$?
check "approve afterwards exits 0 (status $rc: $(head -n 1 "$T/ap.err"))" \
    test "$rc" -eq 0
check "... the post approved (is $(status))" test "$(status)" = approved
check "... released once (released $(nreleased))" test "$(nreleased)" -eq 1
check "... learnt once as ham" test "$(sql "SELECT count(*) FROM train_journal WHERE post_id = $id AND op = 'learn' AND class = 'ham'")" -eq 1
check "the train run's post is journaled" test "$(sql "SELECT count(*) FROM train_journal WHERE post_id IS NULL AND class = 'spam'")" -eq 1

echo "1..$n"
[ "$fails" -eq 0 ]

#!/bin/sh
# web_quarantine.sh - a damaged journal event that the web server's sync
# meets first is quarantined with a warning in its log, as sync's is
#
# List dev's journal gets an event whose stored message is cut in half;
# no sync runs.  A moderator approves a held post through the API: the
# web server's sync thread applies dev's journal, skips the damaged
# event and marks it.  That sync passes it for good (the token file's
# position goes past it, so no later sync warns of it), so its log must
# say it, as `listgate sync` does: "journal event N cannot be applied
# (...): quarantined and skipped".  Runs under tests/pg.sh; needs curl.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if ! command -v curl >/dev/null 2>&1; then
	echo "web_quarantine: curl is not installed; skipping" >&2
	exit 77
fi
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
QHOLD=$top_builddir/tests/qhold
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-webq.XXXXXX") || exit 99
trap 'kill "$webpid" 2>/dev/null; rm -rf "$T"' EXIT INT TERM
webpid=
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/web_lib.sh"

web_setup || { echo "Bail out! setup failed"; exit 99; }
"$QHOLD" -j dev spam "$DATA/spam2.eml" > /dev/null || exit 99
bad=$(sql "SELECT max(id) FROM train_journal WHERE list = 'dev'")
sql "UPDATE train_journal SET message_z = substring(message_z FROM 1 FOR length(message_z) / 2) WHERE id = $bad"
"$QHOLD" -j dev ham "$DATA/ham1.eml" > /dev/null || exit 99
id=$("$QHOLD" dev "$DATA/spam1.eml" 0.98) || exit 99
web_start || exit 99
req POST "/api/lists/dev/held/$id" -u alice:alice-secret-1 -d action=approve
check "approve through the API: 200" test "$code" = 200
i=0
while [ "$(sql "SELECT count(*) FROM train_journal WHERE id = $bad AND quarantined_at IS NOT NULL")" != 1 ] &&
    [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
sleep 0.3
check "the web server's sync quarantined the damaged event" \
    test "$(sql "SELECT count(*) FROM train_journal WHERE id = $bad AND quarantined_at IS NOT NULL")" -eq 1
check "... and applied the others (ham 2, spam 0)" \
    test "$(lg score --list dev --db-stats | awk '$1 ~ /_posts$/ { printf "%s ", $2 }')" = "0 2 "
check "... and its log says so, naming the list, the event and the reason" \
    grep -q "list dev: journal event $bad cannot be applied (stored message is corrupt.*): quarantined and skipped" "$T/web.log"
run_sync() { lg sync --list dev > "$T/out" 2> "$T/err"; }
run_sync
check "a later sync has nothing to say of it (the position is past it)" \
    test ! -s "$T/err"
web_stop

echo "1..$n"
[ "$fails" -eq 0 ]

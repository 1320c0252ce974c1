#!/bin/sh
# web_browser.sh - the moderation page in a real browser: Debian's
# Chromium, headless, driven by playwright-core (tests/web/driver.mjs)
#
# Starts a private PostgreSQL (tests/pg.sh) and `listgate web`, holds two
# posts through `listgate filter` (so their deciding tokens are real),
# logs in, sees both posts with their tokens, approves one with its
# page's button (opened from the list sorted by score, and back to that
# view), presses Enter in the other's checked box (nothing decided) and
# rejects it with the bulk button, then checks through the command line
# that the first was released byte for byte and trained as ham, the
# second trained as spam once and its sender told (sender_notice).  A third held post, its Subject and From one long word each, is
# read on a phone (375 pixels wide, touch): each page is laid out for
# that screen, and nothing on it is wider; then approved from its page
# after the session ended in another tab: the login page says nothing
# was decided, and the post stays held.  The screenshot of the queue
# page is saved beside this test's log as tests/web_browser.png (and
# web_browser-after.png, web_browser-phone.png).
#
# Needs node, tests/web/node_modules/playwright-core (`npm install` in
# tests/web; tests/run-all.sh does it) and /usr/bin/chromium; without
# them it is skipped (77), which run-all.sh does not allow under CI.
# $LISTGATE_WEB_MODULES may name that node_modules directory elsewhere
# (run-all.sh does, for `make distcheck`, whose source tree has none):
# the driver then runs from a copy beside a link to it.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
for need in node curl /usr/bin/chromium; do
	if ! command -v "$need" >/dev/null 2>&1; then
		echo "web_browser: $need is not installed; skipping" >&2
		exit 77
	fi
done
MODULES=${LISTGATE_WEB_MODULES:-$top_srcdir/tests/web/node_modules}
if [ ! -d "$MODULES/playwright-core" ]; then
	echo "web_browser: playwright-core is not installed in $MODULES (cd" \
	    "tests/web && npm install); skipping" >&2
	exit 77
fi
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-webbrowser.XXXXXX") || exit 99
chmod 755 "$T"
trap 'kill "$webpid" 2>/dev/null; rm -rf "$T"' EXIT INT TERM
webpid=
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/web_lib.sh"
SHOT=$top_builddir/tests/web_browser.png

web_setup || { echo "Bail out! setup failed"; exit 99; }
# a list that knows a little, and holds everything (ham_cutoff 0.01)
printf 'release = /bin/sh %s/release.sh {list}\nham_cutoff = 0.01\n' "$T" \
    > "$CONF/lists/dev.conf"
# a rejection tells the sender (sender_notice): the notify command saves
# each message as $T/notified.RECIPIENT
printf '#!/bin/sh\ncat >> "%s/notified.$1"\n' "$T" > "$T/notify.sh"
printf 'moderation_address = dev-moderate@example.org\nnotify = /bin/sh %s/notify.sh {moderator}\nsender_notice = yes\n' \
    "$T" >> "$CONF/lists/dev.conf"
lg train -q --list dev --spam "$DATA/spam2.eml" "$DATA/spam3.eml" \
    "$DATA/spam4.eml" > /dev/null &&
lg train -q --list dev --ham "$DATA/ham2.eml" "$DATA/ham3.eml" \
    "$DATA/ham4.eml" > /dev/null && lg sync -q > /dev/null ||
	{ echo "Bail out! training failed"; exit 99; }
for f in ham1 spam1; do
	lg filter --list dev --mta qmail -f sender@example.org -- dev@example.org \
	    < "$DATA/$f.eml" > /dev/null 2>&1
	rc=$?
	check "filter holds $f.eml (exit 99)" test "$rc" -eq 99
done
idA=$(sql "SELECT id FROM held_posts WHERE status = 'held' ORDER BY id LIMIT 1")
idR=$(sql "SELECT id FROM held_posts WHERE status = 'held' ORDER BY id OFFSET 1 LIMIT 1")
check "two posts are held" test -n "$idA" -a -n "$idR"
# a third, for the phone: its Subject, From and a URL each one long word
w=$(printf '%0150d' 0 | tr 0 W)
printf 'From: "%s" <%s@example.net>\nTo: dev@example.org\nSubject: %s\nMessage-ID: <long.%s@example.org>\n\nhttp://example.com/%s cheap pills\n' \
    "$w" "$w" "$w" "$$" "$w" > "$T/long.eml"
lg filter --list dev --mta qmail -f sender@example.org -- dev@example.org \
    < "$T/long.eml" > /dev/null 2>&1
check "filter holds a post of long words (exit 99)" test "$?" -eq 99
idL=$(sql "SELECT id FROM held_posts WHERE message_id = '<long.$$@example.org>'")
lg score --list dev -v "$DATA/ham1.eml" > "$T/before.A"
lg score --list dev -v "$DATA/spam1.eml" > "$T/before.R"

web_start || { echo "Bail out! listgate web did not start"; exit 99; }
rm -f "$SHOT"
WEBDIR=$top_srcdir/tests/web
if [ "$MODULES" != "$WEBDIR/node_modules" ]; then
	mkdir "$T/web" && cp "$WEBDIR/driver.mjs" "$WEBDIR/package.json" "$T/web/" &&
	    ln -s "$MODULES" "$T/web/node_modules" ||
		{ echo "Bail out! cannot copy the driver"; exit 99; }
	WEBDIR=$T/web
fi
(cd "$WEBDIR" && node driver.mjs "$URL" alice alice-secret-1 \
    dev "$idA" "$idR" "$SHOT" "$idL") > "$T/driver.out" 2>&1
drc=$?
sed -e 's/^ok [0-9]* - /ok - [browser] /' \
    -e 's/^not ok [0-9]* - /not ok - [browser] /' -e '/^1\.\./d' \
    "$T/driver.out"
check "the browser run passed" test "$drc" -eq 0
check "the screenshot is a PNG" sh -c "head -c 8 '$SHOT' | grep -q PNG"

# --- the command line agrees ------------------------------------------------
lg show "$idA" > "$T/showA"
lg show "$idR" > "$T/showR"
check "listgate show: the first post is approved by web:alice" \
    grep -q "^Decided: .* by web:alice" "$T/showA"
check "... and says approved" grep -q "^Status: *approved" "$T/showA"
check "listgate show: the second post is rejected" \
    grep -q "^Status: *rejected" "$T/showR"
check "the first post was released byte for byte" \
    cmp -s "$T/released.dev" "$DATA/ham1.eml"
check "... once" test "$(grep -c '^Message-ID' "$T/released.dev")" -eq 1
check "the post whose checkbox got Enter was rejected once (one journal event)" \
    test "$(sql "SELECT count(*) FROM train_journal WHERE post_id = $idR")" -eq 1
check "the rejected post's sender was told (sender_notice), as by mail" \
    grep -q "^Subject: \[dev\] your post was not accepted" "$T/notified.sender@example.org"
check "... once, and for no other post" \
    test "$(grep -c '^Subject:' "$T/notified.sender@example.org")" -eq 1
check "the post approved after its session ended is still held" \
    test "$(sql "SELECT status FROM held_posts WHERE id = $idL")" = held

# trained: every token of the post counted once more, as ham (resp.
# spam), once the server's sync thread has run
# "TOKEN PROB SPAM HAM" lines of score -v, as "TOKEN SPAM HAM"
counts() { awk 'NF == 4 && $2 ~ /^[0-9.]+$/ { print $1, $3, $4 }' "$1" | sort; }
# every token: after = before + (ds, dh); prints the number of tokens
delta_ok() {
	counts "$1" > "$T/c1"
	counts "$2" > "$T/c2"
	join "$T/c1" "$T/c2" | awk -v ds="$3" -v dh="$4" '
	    { n++; if ($4 != $2 + ds || $5 != $3 + dh) bad++ }
	    END { if (bad || n < 10) exit 1; print n }'
}
i=0
while [ $i -lt 50 ]; do
	lg score --list dev -v "$DATA/ham1.eml" > "$T/after.A"
	lg score --list dev -v "$DATA/spam1.eml" > "$T/after.R"
	if delta_ok "$T/before.A" "$T/after.A" 0 1 > /dev/null &&
	    delta_ok "$T/before.R" "$T/after.R" 1 0 > /dev/null; then
		break
	fi
	sleep 0.1
	i=$((i + 1))
done
check "listgate score -v: the approved post was learnt as ham, once" \
    delta_ok "$T/before.A" "$T/after.A" 0 1
check "listgate score -v: the rejected post was learnt as spam, once" \
    delta_ok "$T/before.R" "$T/after.R" 1 0
check "the journal holds one ham and one spam event for them" \
    test "$(sql "SELECT string_agg(class || op, ',' ORDER BY post_id) FROM train_journal WHERE post_id IN ($idA, $idR)")" = "hamlearn,spamlearn"
web_stop
check "listgate web stops on SIGTERM (exit 0)" test "$webrc" -eq 0
webpid=
grep 'web: addr=' "$T/web.log" | sed 's/^/# /' | tail -n 12
echo "1..$n"
[ "$fails" -eq 0 ]

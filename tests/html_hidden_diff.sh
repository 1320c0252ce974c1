#!/bin/sh
# html_hidden_diff.sh - html_to_text()'s hidden text against a browser:
# Debian's Chromium, headless, through playwright-core
# (tests/web/html_hidden.mjs), judges which text of each HTML snippet a
# reader is shown, by its own computed styles; tests/htmlsplit says
# which text listgate puts in its hidden text.  Text the browser shows
# and listgate calls hidden (a way to move a spam's words out of the
# learnt vocabulary) fails the test; the other direction (the old
# behaviour: shown as text) is only counted.  The snippets: the attacks
# written in the driver and $HTML_HIDDEN_N (300) random ones from seed
# $HTML_HIDDEN_SEED (1).
#
# Needs node, playwright-core and /usr/bin/chromium as tests/web_browser.sh
# does (and $LISTGATE_WEB_MODULES the same way); without them it is
# skipped (77).
set -u

: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
for need in node /usr/bin/chromium; do
	if ! command -v "$need" >/dev/null 2>&1; then
		echo "html_hidden_diff: $need is not installed; skipping" >&2
		exit 77
	fi
done
MODULES=${LISTGATE_WEB_MODULES:-$top_srcdir/tests/web/node_modules}
if [ ! -d "$MODULES/playwright-core" ]; then
	echo "html_hidden_diff: playwright-core is not installed in $MODULES" \
	    "(cd tests/web && npm install); skipping" >&2
	exit 77
fi
SPLIT=$top_builddir/tests/htmlsplit
[ -x "$SPLIT" ] || { echo "Bail out! $SPLIT is missing"; exit 99; }
WEBDIR=$top_srcdir/tests/web
T=
if [ "$MODULES" != "$WEBDIR/node_modules" ]; then
	T=$(mktemp -d "${TMPDIR:-/tmp}/lg-hidden.XXXXXX") || exit 99
	trap 'rm -rf "$T"' EXIT INT TERM
	cp "$WEBDIR/html_hidden.mjs" "$WEBDIR/package.json" "$T/" &&
	    ln -s "$MODULES" "$T/node_modules" ||
		{ echo "Bail out! cannot copy the driver"; exit 99; }
	WEBDIR=$T
fi
cd "$WEBDIR" && exec node html_hidden.mjs "$SPLIT" "${HTML_HIDDEN_N:-300}" \
    "${HTML_HIDDEN_SEED:-1}"

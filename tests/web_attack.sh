#!/bin/sh
# web_attack.sh - `listgate web` attacked as a moderator's browser or a
# stranger would: session cookies tossed in by another site under the
# same domain, Host names of another site (DNS rebinding), hostile held
# posts shown on the pages, odd requests.  A private PostgreSQL
# (tests/pg.sh) and curl, as in tests/web_api.sh.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if ! command -v curl >/dev/null 2>&1; then
	echo "web_attack: curl is not installed; skipping" >&2
	exit 77
fi
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
QHOLD=$top_builddir/tests/qhold
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-webattack.XXXXXX") || exit 99
trap 'kill "$webpid" 2>/dev/null; rm -rf "$T"' EXIT INT TERM
webpid=
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/web_lib.sh"
has() { grep -q "$1" "$T/body"; }
status_of() { sql "SELECT status FROM held_posts WHERE id = $1"; }
# log in as $1 with password $2: the session id in $sid, the page's
# CSRF token in $csrf
login() {
	curl -s -o /dev/null -D "$T/lhdr" -d "user=$1&password=$2" "$URL/login"
	sid=$(sed -n 's/^[Ss]et-[Cc]ookie: lgsid=\([0-9a-f]*\);.*/\1/p' "$T/lhdr")
	csrf=$(curl -s -H "Cookie: lgsid=$sid" "$URL/lists" |
	    sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' | head -n 1)
}

web_setup || { echo "Bail out! setup failed"; exit 99; }
id1=$("$QHOLD" dev "$DATA/spam1.eml" 0.98) || exit 99
web_start || { echo "Bail out! listgate web did not start"; exit 99; }

# --- two session cookies (cookie tossing) ---------------------------------
# carol (list other) has a site under the same parent domain set her
# own session's cookie for it, with a longer path: alice's browser then
# sends it first.  The server took the first lgsid: alice worked in
# carol's session without knowing it.
login carol carol-secret-1
sidC=$sid
login alice alice-secret-1
sidA=$sid
csrfA=$csrf
check "two logins give two sessions" \
    test ${#sidA} -eq 64 -a ${#sidC} -eq 64 -a "$sidA" != "$sidC"
req GET /lists -H "Cookie: lgsid=$sidC; lgsid=$sidA"
check "a page with the cookies of two live sessions: 400 ($code)" \
    test "$code" = 400
check "... saying why" has "cookies of two login sessions"
check "... and it is nobody's page" sh -c "! grep -q 'carol\|alice' '$T/body'"
req GET /api/lists -H "Cookie: lgsid=$sidC; lgsid=$sidA"
check "the API too: 400 ($code)" test "$code" = 400
check "... as JSON" has '"error": "the request carries the cookies of two'
req POST "/lists/dev/held/$id1" -H "Cookie: lgsid=$sidA; lgsid=$sidC" \
    -d "action=reject&csrf=$csrfA"
check "a decision with them: 400 ($code), nothing decided" \
    sh -c "test $code = 400 && test \"\$(psql -X -A -t -c \"SELECT status FROM held_posts WHERE id = $id1\")\" = held"
req GET /lists -H "Cookie: lgsid=$sidC" -H "Cookie: lgsid=$sidA"
check "two Cookie lines are read both: 400 ($code)" test "$code" = 400
dead=$(printf '%064d' 0)
req GET /lists -H "Cookie: lgsid=$dead; other=1; lgsid=$sidA"
check "a dead session's cookie before the live one: the live one counts (200, not $code)" \
    sh -c "test $code = 200 && grep -q alice '$T/body'"
req GET /lists -H "Cookie: lgsid=junk; lgsid=\"$sidA\""
check "... a malformed one too, and a quoted value is read (200, not $code)" \
    test "$code" = 200
req GET /lists -H "Cookie: lgsid=$sidA; lgsid=$sidA"
check "the same session twice is one: 200 ($code)" test "$code" = 200
many=
for i in 1 2 3 4 5 6 7 8 9; do
	many="$many lgsid=$(printf '%063d' 0)$i;"
done
req GET /lists -H "Cookie:$many lgsid=$sidA"
check "more session cookies than any browser sends: 400 ($code)" \
    test "$code" = 400
req POST "/lists/dev/held/$id1" -H "Cookie: lgsid=$sidA" \
    -d "action=reject&csrf=$csrfA"
check "alice alone decides: 303 ($code), rejected" \
    sh -c "test $code = 303 && test \"\$(psql -X -A -t -c \"SELECT status FROM held_posts WHERE id = $id1\")\" = rejected"

web_stop
webpid=
check "the server stopped cleanly" test "$webrc" -eq 0
echo "1..$n"
[ "$fails" -eq 0 ]

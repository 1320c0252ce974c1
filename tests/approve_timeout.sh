#!/bin/sh
# approve_timeout.sh - a release command killed by its time-out, against
# a private PostgreSQL (tests/pg.sh)
#
# A release command killed before it read the whole post cannot have
# handed it on: the post is held again, and the next approve releases
# it.  One killed after it read the whole post may have (it delivered,
# then hung saying so): putting the post back as held let the next
# approve send it to the list a second time, the moderator told only
# that the release timed out.  It stays 'releasing' now, approve says
# the list may have it, and a plain approve of it releases nothing.
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
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-aptime.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
mkdir -p "$CONF/lists" "$T/out" || exit 99

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
sql() { PGOPTIONS="-c client_min_messages=warning" psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
lg() { timeout 60 "$LISTGATE" --allow-root --config "$CONF" "$@"; }
status() { sql "SELECT status FROM held_posts WHERE id = $1"; }
nout() { ls "$T/out" | grep -c '\.eml$'; }

printf 'tokens_dir = %s/tokens\n' "$T" > "$CONF/listgate.conf"
# the release: delivers the post to $T/out, then hangs (a sleep of its
# own length: tests running beside this one sleep too)
hang="30.$$"
cat > "$T/deliver-hang.sh" <<EOS
#!/bin/sh
cat > "$T/out/\$\$.tmp" && mv "$T/out/\$\$.tmp" "$T/out/\$\$.eml"
exec /bin/sleep $hang
EOS
cat > "$T/deliver.sh" <<EOS
#!/bin/sh
cat > "$T/out/\$\$.tmp" && mv "$T/out/\$\$.tmp" "$T/out/\$\$.eml"
EOS
conf() { printf 'release = %s\ntimeout = 2\n' "$1" > "$CONF/lists/dev.conf"; }
conf "/bin/sh $T/deliver.sh"
lg migrate -q || exit 99
id1=$("$QHOLD" dev "$DATA/spam1.eml" 0.98) || exit 99
id2=$("$QHOLD" dev "$DATA/spam2.eml" 0.98) || exit 99

# --- killed before it read the post: held again --------------------------------------
conf "/bin/sleep $hang"
lg approve "$id1" > "$T/a1" 2>&1
check "a release killed before it read the post: exit 1" test $? -eq 1
check "... held again" test "$(status "$id1")" = held
grep -q "timed out after 2 s (killed); the post stays held" "$T/a1" &&
    ok "... and says it timed out" ||
    { bad "... and says it timed out"; sed 's/^/# /' "$T/a1"; }
conf "/bin/sh $T/deliver.sh"
lg approve "$id1" > /dev/null 2>&1
check "... the next approve releases it" test "$(status "$id1")" = approved
check "... once" test "$(nout)" -eq 1

# --- killed after it read the whole post: it may have delivered ------------------------
conf "/bin/sh $T/deliver-hang.sh"
lg approve "$id2" > "$T/a2" 2>&1
check "a release killed after it read the whole post: exit 1" test $? -eq 1
check "... it delivered" test "$(nout)" -eq 2
check "... the post stays 'releasing'" test "$(status "$id2")" = releasing
grep -q "timed out after 2 s (killed) after it had read the whole post; it stays 'releasing': the list may have it; check the list archive, then run .* approve --force $id2" "$T/a2" &&
    ok "... and says the list may have it" ||
    { bad "... and says the list may have it"; sed 's/^/# /' "$T/a2"; }
conf "/bin/sh $T/deliver.sh"
lg approve "$id2" > "$T/a3" 2>&1
check "... a plain approve then: exit 1" test $? -eq 1
check "... not released twice" test "$(nout)" -eq 2
lg approve --mark-approved "$id2" > /dev/null 2>&1
check "... --mark-approved records it" test "$(status "$id2")" = approved
check "... no sleep is left running" sh -c "! pgrep -f '^/bin/sleep $hang\$' >/dev/null"

echo "1..$n"
[ "$fails" -eq 0 ]

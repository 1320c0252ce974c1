#!/bin/sh
# web_bulk_stop.sh - SIGTERM of `listgate web` during a bulk approval
# (the list page's form, many posts checked), against a private
# PostgreSQL (tests/pg.sh)
#
# The server waits for the requests in progress at most the longest
# timeout and 5 s (here 3 + 5 s), then stops libmicrohttpd, which joins
# each request's thread.  A bulk form of six posts whose releases take
# 2 s each went on deciding posts after the stop, past that wait, and
# its client got no answer; with a page of 500 posts systemd's stop
# time-out (TimeoutStopSec=320) kills the server mid-release, leaving a
# post 'releasing'.  Checks:
#   - the post being released at the stop is approved, released once;
#     the posts after it are left held (not released); none is
#     'releasing';
#   - the form is answered (303) before the server stops;
#   - a form whose database goes away (the first release stops it) is
#     answered 500 with what became of its posts: the first released
#     and left 'releasing' (and what to run), the others not decided.
# Never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if ! command -v curl >/dev/null 2>&1; then
	echo "web_bulk_stop: curl is not installed; skipping" >&2
	exit 77
fi
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
QHOLD=$top_builddir/tests/qhold
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-webstop.XXXXXX") || exit 99
trap 'kill "$webpid" 2>/dev/null; sleep 2.5; rm -rf "$T"' EXIT INT TERM
webpid=
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/web_lib.sh"

web_setup || { echo "Bail out! setup failed"; exit 99; }
printf 'timeout = 3\n' >> "$CONF/listgate.conf"
mkdir -p "$T/out" || exit 99
# each release takes 2 s, then delivers its post to $T/out
cat > "$T/slow.sh" <<EOS
#!/bin/sh
sleep 2
cat > "$T/out/\$\$.tmp" && mv "$T/out/\$\$.tmp" "$T/out/\$\$.eml"
EOS
printf 'release = /bin/sh %s/slow.sh\ntimeout = 3\n' "$T" > "$CONF/lists/dev.conf"
web_start || exit 99

ids=
form=
for f in ham1 ham2 ham3 ham4 spam1 spam2; do
	id=$("$QHOLD" dev "$DATA/$f.eml" 0.9) || exit 99
	ids="$ids $id"
	form="$form&id=$id"
done
J=$T/jar
req POST /login -c "$J" -d "user=alice&password=alice-secret-1"
req GET /lists/dev -b "$J"
csrf=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$T/body" | head -n 1)
[ ${#csrf} -eq 64 ] || { echo "Bail out! no CSRF token"; exit 99; }

curl -s -o /dev/null -D "$T/bulk.hdr" -w '%{http_code}' -b "$J" \
    -d "csrf=$csrf&action=approve$form" "$URL/lists/dev/bulk" \
    > "$T/bulk.code" 2>&1 &
cpid=$!
i=0
while [ "$(sql "SELECT count(*) FROM held_posts WHERE status = 'releasing'")" -eq 0 ] &&
    [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
web_stop
wait "$cpid"
sleep 2.5	# a release cut off ends meanwhile

nrel=$(sql "SELECT count(*) FROM held_posts WHERE status = 'releasing'")
nap=$(sql "SELECT count(*) FROM held_posts WHERE status = 'approved'")
nheld=$(sql "SELECT count(*) FROM held_posts WHERE status = 'held'")
nout=$(ls "$T/out" | grep -c '\.eml$')
check "web stops cleanly (exit $webrc)" test "$webrc" -eq 0
check "no post is left 'releasing' ($nrel; $nap approved, $nheld held)" \
    test "$nrel" -eq 0
check "every post is approved or held" test $((nap + nheld)) -eq 6
check "... and each approved post released once, no other ($nout released)" \
    test "$nout" -eq "$nap"
check "the post being released at the stop is approved, the others left held ($nap approved, $nheld held)" \
    test "$nap" -eq 1 -a "$nheld" -eq 5
check "the bulk form is answered ($(cat "$T/bulk.code"))" \
    test "$(cat "$T/bulk.code")" = 303

# --- the database gone during a bulk form ------------------------------------------
# the first post's release stops PostgreSQL: its approval cannot be
# recorded (it stays 'releasing'), and the form stopped there.  It
# answered 303 to the list's page, which needs the database too: a 503
# that said nothing of the form, whose message (the post released and
# left 'releasing', what to run; the posts not decided) was lost.
cat > "$T/pgstop.sh" <<EOS
#!/bin/sh
cat > "$T/out/pgstop.eml"
PG_TEST_DIR=$PG_TEST_DIR sh "$PG_SH" stop
EOS
printf 'release = /bin/sh %s/pgstop.sh\ntimeout = 30\n' "$T" > "$CONF/lists/dev.conf"
ids=
form=
for f in ham1 ham2 ham3; do
	id=$("$QHOLD" dev "$DATA/$f.eml" 0.9) || exit 99
	ids="$ids $id"
	form="$form&id=$id"
done
first=${ids# }
first=${first%% *}
web_start || exit 99
req POST /login -c "$J" -d "user=alice&password=alice-secret-1"
req GET /lists/dev -b "$J"
csrf=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$T/body" | head -n 1)
req POST /lists/dev/bulk -b "$J" -d "csrf=$csrf&action=approve$form"
check "a bulk form whose database went away is answered with its outcome: 500 ($code)" \
    test "$code" = 500
check "... saying the post released could not be recorded, and what to run" \
    grep -q "post $first was released but the approval could not be recorded.*--mark-approved $first" "$T/body"
check "... and that the two others were not decided" \
    grep -q '2 not decided: the database failed' "$T/body"
sh "$PG_SH" start || { echo "Bail out! PostgreSQL did not start again"; exit 99; }
others=$(echo $ids | cut -d ' ' -f 2- | tr ' ' ',')
st1=$(sql "SELECT status FROM held_posts WHERE id = $first")
st2=$(sql "SELECT string_agg(status, ',') FROM held_posts WHERE id IN ($others)")
check "... as they were not: 'releasing' for the first ($st1), held for the others ($st2)" \
    test "$st1" = releasing -a "$st2" = held,held
web_stop
webpid=
echo "1..$n"
[ "$fails" -eq 0 ]

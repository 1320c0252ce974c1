#!/bin/sh
# queue_bigpost.sh - large posts in bounded memory: holding a 60 MB post
# compresses it as a stream; sync fetches only what it tokenizes
#
# A post of about 60 MB (a text part and a base64 attachment of random
# bytes, which compresses to about 46 MB) is held through `listgate
# filter` from a file (qmail-local's way) and from a pipe (Postfix's),
# each run's peak RSS measured (getrusage of the child, through
# python3).  Held whole, it must come back byte for byte when approved.
# The limits hold whatever the post's size: the spool keeps at most
# 32 MiB of a piped post in memory, the rest of the work goes in 1 MiB
# chunks.  Under a sanitizer build (ASan's shadow and allocator) the
# limits are higher and ASan's quarantine is off.  Then six posts of
# 20 MB are journaled and synced: sync must stay as small as for one post
# and learn exactly what training the whole posts directly learns.  Runs
# under tests/pg.sh; files in a mktemp -d directory.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-bigpost.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
mkdir -p "$CONF/lists" || exit 99
printf 'tokens_dir = %s/tokens\ndatabase = "host=%s port=%s user=%s dbname=%s"\n' \
    "$T" "$PGHOST" "$PGPORT" "$PGUSER" "$PGDATABASE" > "$CONF/listgate.conf"
# every post is held (no score is below 0)
printf 'ham_cutoff = 0\nspam_cutoff = 0.9\nrelease = /bin/sh -c "cat > %s/released"\n' \
    "$T" > "$CONF/lists/big.conf"

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
command -v python3 >/dev/null 2>&1 || { echo "python3 is needed"; exit 99; }
# rss IN CMD...: run CMD with stdin from IN (- : none); "STATUS MIB"
rss() {
	python3 -c '
import resource, subprocess, sys
stdin = open(sys.argv[1], "rb") if sys.argv[1] != "-" else subprocess.DEVNULL
r = subprocess.run(sys.argv[2:], stdin=stdin, stdout=subprocess.DEVNULL)
print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
' "$@"
}
# mkpost MIB TAG FILE: a post of about MIB MiB
mkpost() {
	{
		printf 'From: big@example.org\nTo: big@lists.example.org\n'
		printf 'Subject: the %s attachment\nMessage-ID: <%s@example.org>\n' "$2" "$2"
		printf 'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="b0"\n\n'
		printf -- '--b0\nContent-Type: text/plain\n\nsee the attachment %s\n' "$2"
		printf -- '--b0\nContent-Type: application/octet-stream\n'
		printf 'Content-Transfer-Encoding: base64\n\n'
		head -c $(($1 * 1024 * 1024 * 3 / 4)) /dev/urandom | base64 -w 76
		printf -- '--b0--\n'
	} > "$3"
}

if grep -q __asan_init "$LISTGATE" 2>/dev/null; then
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0
	export ASAN_OPTIONS
	lim_file=48 lim_pipe=100 lim_sync=48
else
	lim_file=32 lim_pipe=56 lim_sync=40
fi

lg migrate -q || exit 99
lg train -q --list big --spam "$DATA/spam1.eml" > /dev/null || exit 99

# --- holding a 60 MB post ------------------------------------------------------
mkpost 60 file "$T/p1.eml"
size=$(wc -c < "$T/p1.eml")
set -- $(rss "$T/p1.eml" env SENDER=a@example.org "$LISTGATE" --allow-root --config "$CONF" \
    filter --mta qmail --list big)
check "a 60 MB post from a file is held (exit $1)" test "$1" -eq 99
check "... in at most $lim_file MiB (peak RSS $2 MiB)" test "$2" -le "$lim_file"
echo "# hold of $size bytes from a file: peak RSS $2 MiB"
id=$(sql "SELECT id FROM held_posts WHERE message_id = '<file@example.org>'")
check "... stored whole" test "$(sql "SELECT size FROM held_posts WHERE id = $id")" -eq "$size"
check "... with its SHA-256" test "$(sql "SELECT encode(raw_sha256, 'hex') FROM held_posts WHERE id = $id")" = \
    "$(sha256sum < "$T/p1.eml" | cut -d' ' -f1)"
check "... and no large object left behind" \
    test "$(sql "SELECT count(*) FROM pg_largeobject_metadata")" -eq 0
lg approve -q "$id" > /dev/null 2> "$T/err"
check "approving it releases it byte for byte" cmp -s "$T/released" "$T/p1.eml"
rm -f "$T/released" "$T/p1.eml"

mkpost 60 pipe "$T/p2.eml"
set -- $(rss - sh -c 'cat "$1" | "$2" --allow-root --config "$3" filter --mta postfix \
    --list big -f a@example.org -- big@lists.example.org' sh "$T/p2.eml" \
    "$LISTGATE" "$CONF")
check "a 60 MB post from a pipe is held (exit $1)" test "$1" -eq 0
check "... in at most $lim_pipe MiB (peak RSS $2 MiB)" test "$2" -le "$lim_pipe"
echo "# hold of $size bytes from a pipe: peak RSS $2 MiB"
check "... stored whole" test "$(sql "SELECT encode(raw_sha256, 'hex') FROM held_posts WHERE message_id = '<pipe@example.org>'")" = \
    "$(sha256sum < "$T/p2.eml" | cut -d' ' -f1)"
rm -f "$T/p2.eml"

# --- a small post still goes in one statement; a hold that fails midway
# leaves nothing behind -----------------------------------------------------------
lg filter --mta qmail --list big < "$DATA/spam-test.eml" > /dev/null 2>&1
check "a small post is held too" \
    test "$(sql "SELECT count(*) FROM held_posts WHERE message_id = '<t1@cheap-pills.example>'")" -eq 1
mkpost 8 fail "$T/p3.eml"
# the list name passes the filter but not the table's CHECK: the INSERT
# fails after the large object was written
sql "ALTER TABLE held_posts ADD CONSTRAINT no_fail CHECK (message_id <> '<fail@example.org>')"
lg filter --mta qmail --list big < "$T/p3.eml" > /dev/null 2> "$T/err"
rc=$?
check "a hold that fails after writing 8 MB defers (exit $rc)" test "$rc" -eq 111
check "... and leaves no large object behind" \
    test "$(sql "SELECT count(*) FROM pg_largeobject_metadata")" -eq 0
check "... nor a row" \
    test "$(sql "SELECT count(*) FROM held_posts WHERE message_id = '<fail@example.org>'")" -eq 0
sql "ALTER TABLE held_posts DROP CONSTRAINT no_fail"

# --- syncing large posts ----------------------------------------------------------
# six posts of 20 MB journaled (15 MB each compressed): sync holds one
# post's head at a time, never the posts, whatever their number
QHOLD=$top_builddir/tests/qhold
mkdir -p "$T/ref/lists"
printf 'tokens_dir = %s/ref-tokens\n' "$T" > "$T/ref/listgate.conf"
for i in 1 2 3 4 5 6; do
	mkpost 20 "s$i" "$T/s$i.eml"
	"$QHOLD" -j sync spam "$T/s$i.eml" > /dev/null || exit 99
	"$LISTGATE" --allow-root --config "$T/ref" train -q --list sync --spam "$T/s$i.eml" \
	    > /dev/null || exit 99
	[ "$i" -eq 1 ] && cp "$T/s1.eml" "$T/keep.eml"
	rm -f "$T/s$i.eml"
done
set -- $(rss - "$LISTGATE" --allow-root --config "$CONF" sync -q --list sync)
check "sync of six 20 MB posts exits 0 (exit $1)" test "$1" -eq 0
check "... in at most $lim_sync MiB (peak RSS $2 MiB)" test "$2" -le "$lim_sync"
echo "# sync of 6 journaled posts of 20 MB: peak RSS $2 MiB"
dump() {
	if command -v kchashmgr >/dev/null 2>&1; then
		kchashmgr list -pv -px "$1"
	else
		"$LISTGATE" --allow-root --config "$2" score --list sync --db-dump
	fi | LC_ALL=C sort | grep -v '^00 70 6F 73'
}
dump "$T/tokens/sync.kch" "$CONF" > "$T/d-sync"
dump "$T/ref-tokens/sync.kch" "$T/ref" > "$T/d-ref"
check "... and learns what training the whole posts learns" \
    cmp -s "$T/d-sync" "$T/d-ref"
# one post alone: about the same peak (it does not grow with the posts)
"$QHOLD" -j one spam "$T/keep.eml" > /dev/null || exit 99
set -- $(rss - "$LISTGATE" --allow-root --config "$CONF" sync -q --list one) "$2"
check "one 20 MB post syncs in about the same (peak RSS $2 MiB, six: $3 MiB)" \
    test "$3" -le $(($2 + 8))

echo "1..$n"
[ "$fails" -eq 0 ]

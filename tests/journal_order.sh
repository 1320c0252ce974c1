#!/bin/sh
# journal_order.sh - sync never skips a journal event committed after
# an event of a higher id, against a private PostgreSQL (tests/pg.sh)
#
# sync applies a list's events in id order from the token file's
# position, so the ids of one list must come in the order their
# transactions commit: they are taken under the list's journal lock.
# With CACHE 20 on the journal's sequence (set by an administrator, or
# a dump/restore of such a database) each session takes its ids from a
# block of its own: an `approve` of three posts (lists a, b, a) takes
# 1..20 at its first, a `train` of list a meanwhile (while the release
# of the post of list b waits) takes 21..40 and syncs list a to 21, and
# the approval's third event (list a) gets 3: committed after the sync
# reached 21, never applied.  Each case compares list a's token file
# with one synced afresh from the journal; with CACHE 1 and with CACHE
# 20 they must be equal.  Never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
QHOLD=$top_builddir/tests/qhold
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-jorder.XXXXXX") || exit 99
ap=
trap '[ -n "$ap" ] && kill -9 "$ap" 2>/dev/null; rm -rf "$T"' EXIT INT TERM

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }

# the release of list a's posts is at once; list b's waits for $T/go
cat > "$T/release.sh" <<EOS
#!/bin/sh
cat > /dev/null
EOS
cat > "$T/release-b.sh" <<EOS
#!/bin/sh
: > "$T/b-started"
i=0
while [ ! -e "$T/go" ] && [ \$i -lt 600 ]; do
	sleep 0.1
	i=\$((i + 1))
done
cat > /dev/null
EOS
for c in main fresh; do
	mkdir -p "$T/conf-$c/lists" || exit 99
	printf 'tokens_dir = %s/tokens-%s\n' "$T" "$c" \
	    > "$T/conf-$c/listgate.conf"
	printf 'release = /bin/sh %s/release.sh\ntimeout = 60\n' "$T" \
	    > "$T/conf-$c/lists/a.conf"
	printf 'release = /bin/sh %s/release-b.sh\ntimeout = 60\n' "$T" \
	    > "$T/conf-$c/lists/b.conf"
done
lg() { "$LISTGATE" --allow-root --config "$T/conf-main" "$@"; }
dump() {	# dump CONF LIST: the list's token file, sorted
	"$LISTGATE" --allow-root --config "$T/conf-$1" score --list "$2" \
	    --db-dump | LC_ALL=C sort
}

lg migrate -q || exit 99

# one case: the journal's sequence with CACHE $1
order_case() {
	cache=$1
	sql "SET client_min_messages = warning;
	    TRUNCATE held_posts, train_journal, decided_posts CASCADE" ||
	    exit 99
	sql "ALTER SEQUENCE train_journal_id_seq CACHE $cache" || exit 99
	rm -rf "$T/tokens-main" "$T/tokens-fresh" "$T/go" "$T/b-started"
	p1=$("$QHOLD" a "$DATA/ham1.eml" 0.98) &&
	    p2=$("$QHOLD" b "$DATA/ham2.eml" 0.98) &&
	    p3=$("$QHOLD" a "$DATA/ham3.eml" 0.98) || exit 99
	lg approve -q "$p1" "$p2" "$p3" > "$T/ap.out" 2> "$T/ap.err" &
	ap=$!
	i=0
	while [ ! -e "$T/b-started" ] && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	check "CACHE $cache: the release of list b's post has begun" \
	    test -e "$T/b-started"
	lg train -q --list a --spam "$DATA/spam1.eml" > "$T/tr.out" 2>&1
	check "CACHE $cache: train of list a meanwhile exits 0 ($(head -n 1 "$T/tr.out"))" \
	    test $? -eq 0
	: > "$T/go"
	wait "$ap"
	rc=$?
	ap=
	check "CACHE $cache: approve of the three posts exits 0 ($(head -n 1 "$T/ap.err"))" \
	    test "$rc" -eq 0
	lg sync -q > "$T/sync.out" 2>&1
	check "CACHE $cache: sync exits 0 ($(head -n 1 "$T/sync.out"))" \
	    test $? -eq 0
	"$LISTGATE" --allow-root --config "$T/conf-fresh" sync -q \
	    > /dev/null 2>&1 || exit 99
	dump main a > "$T/a.main"
	dump fresh a > "$T/a.fresh"
	check "CACHE $cache: list a's token file holds all its journal (as a fresh sync's; ids $(sql "SELECT string_agg(id::text, ',' ORDER BY id) FROM train_journal WHERE list = 'a'"))" \
	    cmp -s "$T/a.main" "$T/a.fresh"
	check "CACHE $cache: ... which holds the approval's tokens" \
	    test -s "$T/a.fresh"
}

order_case 1
order_case 20

echo "1..$n"
[ "$fails" -eq 0 ]

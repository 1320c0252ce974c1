#!/bin/sh
# approve_stop.sh - SIGTERM and SIGHUP during a bulk `approve`, against
# a private PostgreSQL (tests/pg.sh)
#
# approve of two posts is stopped while the first post's release
# command runs (a moderator's ssh session closing, a service stopped).
# Checks:
#   - the release in progress runs to its end and its outcome is
#     recorded: the post is approved, learnt once, released once, never
#     left 'releasing' with its release going on unrecorded;
#   - the posts after it are left held, each named as not decided, and
#     approve exits 1;
#   - a second signal ends the run at once (the post then stays
#     'releasing', the documented recovery applies).
# The release command waits for the test's go, so nothing here hangs on
# timing.  Never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
QHOLD=$top_builddir/tests/qhold
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-apstop.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
mkdir -p "$CONF/lists" "$T/out" || exit 99

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
sql() { PGOPTIONS="-c client_min_messages=warning" psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }

printf 'tokens_dir = %s/tokens\n' "$T" > "$CONF/listgate.conf"
# the release: says it started, waits for the go (at most 30 s), then
# delivers the post to $T/out
cat > "$T/release.sh" <<EOS
#!/bin/sh
touch "$T/started"
i=0
while [ ! -e "$T/go" ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done
cat > "$T/out/\$\$.tmp" && mv "$T/out/\$\$.tmp" "$T/out/\$\$.eml"
EOS
printf 'release = /bin/sh %s/release.sh\ntimeout = 60\n' "$T" \
    > "$CONF/lists/dev.conf"
"$LISTGATE" --allow-root --config "$CONF" migrate -q || exit 99

# wait (at most 30 s) for the release to start
started() {
	i=0
	while [ ! -e "$T/started" ] && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	test -e "$T/started"
}
status() { sql "SELECT status FROM held_posts WHERE id = $1"; }
learnt() { sql "SELECT count(*) FROM train_journal WHERE post_id = $1 AND op = 'learn'"; }

for sig in TERM HUP; do
	sql "TRUNCATE held_posts, train_journal, decided_posts CASCADE" || exit 99
	rm -f "$T/started" "$T/go" "$T"/out/*
	a=$("$QHOLD" dev "$DATA/spam1.eml" 0.98) || exit 99
	b=$("$QHOLD" dev "$DATA/ham1.eml" 0.98) || exit 99
	"$LISTGATE" --allow-root --config "$CONF" approve --by alice "$a" \
	    "$b" > "$T/stdout" 2> "$T/stderr" &
	p=$!
	started || { bad "SIG$sig: the release never started"; continue; }
	kill -"$sig" "$p"
	sleep 0.3
	touch "$T/go"
	wait "$p"
	rc=$?
	check "SIG$sig during a release: approve exits 1 (not killed: $rc)" \
	    test "$rc" -eq 1
	check "SIG$sig: the post being released is recorded approved (is $(status "$a"))" \
	    test "$(status "$a")" = approved
	check "SIG$sig: ... learnt once as ham" test "$(learnt "$a")" -eq 1
	check "SIG$sig: ... and released once" \
	    test "$(ls "$T/out" | grep -c '\.eml$')" -eq 1
	check "SIG$sig: the post after it stays held" \
	    test "$(status "$b")" = held
	check "SIG$sig: ... and is named as not decided" \
	    grep -q "post $b: not decided: stopped by signal" "$T/stderr"
done

# a second signal ends the run at once: the documented 'releasing'
sql "TRUNCATE held_posts, train_journal, decided_posts CASCADE" || exit 99
rm -f "$T/started" "$T/go" "$T"/out/*
a=$("$QHOLD" dev "$DATA/spam1.eml" 0.98) || exit 99
"$LISTGATE" --allow-root --config "$CONF" approve "$a" > "$T/stdout" \
    2> "$T/stderr" &
p=$!
if started; then
	kill -TERM "$p"
	sleep 0.3
	kill -TERM "$p"
	wait "$p"
	rc=$?
	touch "$T/go"
	check "a second SIGTERM ends approve at once (status $rc)" \
	    test "$rc" -eq 143
	check "... leaving the post 'releasing' (is $(status "$a"))" \
	    test "$(status "$a")" = releasing
else
	bad "the release never started"
fi
sleep 0.5	# the orphaned release finishes before the directory goes

echo "1..$n"
[ "$fails" -eq 0 ]

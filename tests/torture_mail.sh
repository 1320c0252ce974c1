#!/bin/sh
# torture_mail.sh - `listgate moderate` (approve by mail), `filter` with
# hold notices and `listgate notify --pending` with the n-th allocation
# failing, for every n (up to TORTURE_DENSE, then in steps), against a
# private PostgreSQL
#
# Before each moderate run a fresh spam post is held by `filter`, whose
# hold notice (saved by the list's notify script) gives the approve
# address.  Each run must exit 0 or 75 (Postfix's temporary failure),
# never by a signal or with a sanitizer report (tests/torture_lib.sh),
# and leave a whole state:
#   exit 0: the post approved, released once with its exact bytes, one
#           training event (or, shown as a "# " line, left 'releasing'
#           after a release whose approval could not be recorded: the
#           documented QUEUE_UNRECORDED path, answered as such);
#   exit 75: nothing changed (held, no event, not released), so that the
#           MTA's retry decides it.
# filter: exit 99 with the post held whatever its notices met, or 111
# with nothing stored.  notify --pending: exit 0 or 1, and a clean run
# afterwards sends what was left (nothing lost).  Needs PostgreSQL
# (tests/pg.sh; skipped when none is installed).  Never reads /etc.
# About 2 minutes.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-torture-mail.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
MAIL=$T/mail
mkdir -p "$CONF/lists" "$MAIL" || exit 99
TORTURE_DENSE=${TORTURE_DENSE:-250}
TORTURE_SPARSE=${TORTURE_SPARSE:-100}

fails=0
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); echo "not ok $n - $1"; fails=$((fails + 1)); }
sql() { psql -X -A -t -q -c "$1" 2>/dev/null; }
. "$top_srcdir/tests/torture_lib.sh"
# a command with no allocation failing
clean() {
	(unset LISTGATE_FAIL_ALLOC LISTGATE_ALLOC_REPORT
	 exec "$LISTGATE" --allow-root --config "$CONF" "$@")
}

{
	printf 'tokens_dir = %s/tokens\nsecret_file = %s/secret\n' "$T" "$T"
	printf 'database = "host=%s port=%s user=%s dbname=%s"\n' \
	    "$PGHOST" "$PGPORT" "$PGUSER" "$PGDATABASE"
} > "$CONF/listgate.conf"
cat > "$T/release.sh" <<EOF
#!/bin/sh
cat > "$T/released" || exit 1
echo run >> "$T/releases"
EOF
cat > "$T/notify.sh" <<EOF
#!/bin/sh
test -e "$T/notify-fail" && exit 75
cat > "$MAIL/\$(date +%s%N).\$\$.\$1"
EOF
cat > "$CONF/lists/dev.conf" <<EOF
ham_cutoff = 0
spam_cutoff = 0.9
release = /bin/sh $T/release.sh
moderators = alice@example.org
moderation_address = dev-moderate@lists.example.org
notify = /bin/sh $T/notify.sh {moderator}
notify_max_per_hour = 100000
EOF
clean init > /dev/null 2>&1 || { echo "# init failed"; exit 99; }
clean migrate > /dev/null 2> "$T/err" || { cat "$T/err"; exit 99; }
clean train --quiet --list dev --spam "$DATA"/spam[1-4].eml > /dev/null &&
    clean train --quiet --list dev --ham "$DATA"/ham[1-4].eml > /dev/null ||
    { echo "# training failed"; exit 99; }
printf 'From: Alice <alice@example.org>\nSubject: Re: held\n\nok\n' \
    > "$T/reply.eml"

# hold a fresh copy of the spam post: its id in $T/id, its approve
# address in $T/addr
hold_fresh() {
	clean sync --quiet > /dev/null 2>&1 || { echo "# sync failed"; return 1; }
	k=$(($(cat "$T/k" 2>/dev/null || echo 0) + 1))
	echo "$k" > "$T/k"
	sed "s/^Message-ID: <\(.*\)>/Message-ID: <tm$k.\1>/" \
	    "$DATA/spam-test.eml" > "$T/post.eml"
	rm -f "$MAIL"/*
	clean filter --list dev --mta qmail -f s@example.net -- \
	    dev@lists.example.org < "$T/post.eml" > /dev/null 2>&1
	[ $? -eq 99 ] || { echo "# could not hold a post"; return 1; }
	sql "SELECT max(id) FROM held_posts" > "$T/id"
	sed -n 's/^Reply-To: <\(.*\)>$/\1/p' "$MAIL"/*.alice@example.org \
	    > "$T/addr" 2>/dev/null
	[ -s "$T/addr" ] || { echo "# no notice"; return 1; }
	rm -f "$T/released" "$T/releases"
}

run_moderate() {
	hold_fresh || return 99
	"$LISTGATE" --allow-root --config "$CONF" moderate --mta postfix \
	    -f alice@example.org -- "$(cat "$T/addr")" < "$T/reply.eml"
}

check_moderated() {
	id=$(cat "$T/id")
	st=$(sql "SELECT status FROM held_posts WHERE id = $id")
	ev=$(sql "SELECT count(*) FROM train_journal WHERE post_id = $id")
	nrel=0
	[ -e "$T/releases" ] && nrel=$(wc -l < "$T/releases")
	if [ "$rc" -eq 0 ] && [ "$st" = approved ] && [ "$ev" = 1 ] &&
	    [ "$nrel" = 1 ] && cmp -s "$T/released" "$T/post.eml"; then
		return 0
	fi
	if [ "$rc" -eq 0 ] && [ "$st" = releasing ] && [ "$nrel" = 1 ]; then
		echo "$1" >> "$T/note.unrecorded"
		return 0
	fi
	if [ "$rc" -eq 75 ] && [ "$st" = held ] && [ "$ev" = 0 ] &&
	    [ "$nrel" = 0 ]; then
		return 0
	fi
	echo "n=$1: exit $rc left status '$st', $ev training events, $nrel releases"
	grep -v '^listgate: allocations' "$T/err" | head -n 2
	return 1
}

TORTURE_CMP_OUT=0
torture "moderate: approve by mail" "0 75" run_moderate check_moderated
if [ -s "$T/note.unrecorded" ]; then
	echo "# released, approval not recorded (answered; approve --mark-approved) at n =" \
	    $(cat "$T/note.unrecorded")
fi

# --- filter with hold notices: the post's outcome never changes ---------------------
# every run holds a fresh post (exit 99, whatever its notices met) or
# defers it with nothing stored (111)
run_filter() {
	k=$(($(cat "$T/k" 2>/dev/null || echo 0) + 1))
	echo "$k" > "$T/k"
	sed "s/^Message-ID: <\(.*\)>/Message-ID: <tf$k.\1>/" \
	    "$DATA/spam-test.eml" > "$T/post.eml"
	echo "<tf$k.$(sed -n 's/^Message-ID: <\(.*\)>/\1/p' "$DATA/spam-test.eml")>" > "$T/msgid"
	"$LISTGATE" --allow-root --config "$CONF" filter --list dev --mta qmail \
	    -f s@example.net -- dev@lists.example.org < "$T/post.eml"
}
check_filter() {
	nh=$(sql "SELECT count(*) FROM held_posts WHERE message_id = '$(cat "$T/msgid")' AND status = 'held'")
	[ "$rc" -eq 99 ] && [ "$nh" = 1 ] && return 0
	[ "$rc" -eq 111 ] && [ "$nh" = 0 ] && return 0
	echo "n=$1: exit $rc with $nh rows held"
	return 1
}
TORTURE_DENSE=100 TORTURE_SPARSE=100
torture "filter with hold notices" "99 111" run_filter check_filter

# --- notify --pending: nothing lost ----------------------------------------------
# three notices that could not be sent, nothing else pending
sql "UPDATE notice_outbox SET state = 'dropped', done_at = now() WHERE state = 'pending'" > /dev/null
touch "$T/notify-fail"
for i in 1 2 3; do
	hold_fresh > /dev/null 2>&1
done
rm -f "$T/notify-fail"
npend=$(sql "SELECT count(*) FROM notice_outbox WHERE state = 'pending'")
sql "CREATE TABLE outbox_copy AS SELECT * FROM notice_outbox" > /dev/null
run_pending() {
	sql "DELETE FROM notice_outbox; INSERT INTO notice_outbox SELECT * FROM outbox_copy" > /dev/null
	rm -f "$MAIL"/*
	"$LISTGATE" --allow-root --config "$CONF" notify --pending --quiet
}
check_pending() {
	# whatever this run did not send, a clean run sends
	clean notify --pending --quiet > /dev/null 2>&1 ||
	    { echo "n=$1: a clean notify --pending afterwards failed"; return 1; }
	left=$(sql "SELECT count(*) FROM notice_outbox WHERE state = 'pending'")
	sent=$(ls "$MAIL" | wc -l)
	if [ "$left" != 0 ] || [ "$sent" -lt "$npend" ]; then
		echo "n=$1: exit $rc, then $left still pending and $sent of $npend sent"
		return 1
	fi
	return 0
}
[ "$npend" -ge 3 ] || { echo "# only $npend notices pending"; exit 99; }
# (its allocations repeat per notice: the first ones densely, then steps)
TORTURE_DENSE=40 TORTURE_SPARSE=20
torture "notify --pending" "0 1" run_pending check_pending

echo "1..$n"
[ $fails -eq 0 ]

#!/bin/sh
# moderate_loop.sh - moderation by mail never answers itself, against a
# private PostgreSQL (tests/pg.sh)
#
# A careless administrator makes a list's moderator an address that
# leads back to a list listgate filters (the list itself: "every member
# moderates").  Each hold notice carries the held spam, so the filter
# holds it; a notice of that notice would come back again, for ever
# (the MTA's hop count never grows: each notice is a new message, the
# last one attached).  Here the list's notify command hands each message
# for the list's own address straight to `listgate filter` (as the MTA
# would), at most 6 times.  Checks:
#   - the spam post is held and noticed once; the notice, held in turn,
#     gets no notice (no outbox row), and the filter's log line says why;
#   - `notify --remind` of that held notice queues nothing either;
#   - nor does `expire` with expire_action = remind, which counts no
#     reminder sent and warns of it;
#   - a stranger's post that carries X-Listgate-List (without the seal
#     only the site's secret makes) is held and noticed as any other.
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
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-modloop.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
mkdir -p "$CONF/lists" || exit 99

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), journal_train
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }

printf 'tokens_dir = %s/tokens\nsecret_file = %s/var/secret\ndatabase = host=%s port=%s dbname=%s user=%s\n' \
    "$T" "$T" "$PGHOST" "$PGPORT" "$PGDATABASE" "$PGUSER" > "$CONF/listgate.conf"
lg init > /dev/null 2>&1 || exit 99
# the MTA: a message to dev@ goes through dev's filter, the log line (on
# a terminal: script(1)) kept; each hop counted, 6 at most
cat > "$T/mta.sh" <<EOF
#!/bin/sh
n=\$(cat "$T/hops" 2>/dev/null || echo 0)
n=\$((n + 1))
echo \$n > "$T/hops"
cat > "$T/msg.\$n"
[ \$n -ge 6 ] && exit 0
if [ "\$1" = dev@lists.example.org ]; then
	script -qec "'$LISTGATE' --allow-root --config '$CONF' filter --list dev \
	    --mta qmail -f dev-owner@lists.example.org -- dev@lists.example.org \
	    < '$T/msg.\$n'" /dev/null >> "$T/filter.log" 2>&1
fi
exit 0
EOF
cat > "$CONF/lists/dev.conf" <<EOF
ham_cutoff = 0.5
spam_cutoff = 0.9
moderators = dev@lists.example.org
moderation_address = dev-moderate@lists.example.org
notify = /bin/sh $T/mta.sh {moderator}
EOF
lg migrate -q || exit 99
journal_train dev || exit 99
lg sync -q --list dev || exit 99

lg filter --list dev --mta qmail -f spammer@example.net -- dev@lists.example.org \
    < "$DATA/spam-test.eml" > /dev/null 2>&1
check "the spam post is held" test $? -eq 99
first=$(sql "SELECT min(id) FROM held_posts")
check "... and its notice went to the list's own address, once" \
    test "$(sql "SELECT count(*) FROM notice_outbox WHERE post_id = $first AND state = 'sent'")" -eq 1
hops=$(cat "$T/hops" 2>/dev/null || echo 0)
check "the notice, held in turn, is not noticed: one message sent, not a loop ($hops)" \
    test "$hops" -eq 1
check "... two posts held: the spam and its notice" \
    test "$(sql "SELECT count(*) FROM held_posts")" -eq 2
second=$(sql "SELECT max(id) FROM held_posts")
check "... no outbox row for the held notice" \
    test "$(sql "SELECT count(*) FROM notice_outbox WHERE post_id = $second")" -eq 0
check "... the filter's log line says why" \
    grep -q "notices=none notice_error=\"the post is a notice of listgate's" "$T/filter.log"
lg notify --remind "$second" > "$T/remind.out" 2>&1
check "notify --remind of the held notice queues nothing" \
    test "$(sql "SELECT count(*) FROM notice_outbox WHERE post_id = $second")" -eq 0
check "... sends nothing" test "$(cat "$T/hops")" -eq "$hops"
check "... and says why" grep -q "post $second is a notice of listgate's" "$T/remind.out"
# expire_action = remind of that held notice: no reminder either, and
# none counted sent ("moderators reminded" of a post nobody heard of)
cp "$CONF/lists/dev.conf" "$T/dev.conf.keep"
printf 'hold_expiry_days = 1\nexpire_action = remind\n' >> "$CONF/lists/dev.conf"
sql "UPDATE held_posts SET arrived_at = now() - interval '2 days' WHERE id = $second"
lg expire --list dev > "$T/expire.out" 2> "$T/expire.err"
check "expire (remind) of the held notice exits 0" test $? -eq 0
check "... queues nothing, sends nothing" sh -c "test $(sql "SELECT count(*) FROM notice_outbox WHERE post_id = $second") -eq 0 && test \$(cat '$T/hops') -eq $hops"
check "... counts no reminder sent" \
    sh -c "grep -q '^0 posts expired (0 learnt as spam), 0 reminders sent\$' '$T/expire.out' && ! grep -q 'moderators reminded' '$T/expire.out'"
check "... and says why" \
    grep -q "warning: post $second (list dev) is a notice of listgate's (a moderator's address leads to a list): no reminder, it would loop" "$T/expire.err"
cp "$T/dev.conf.keep" "$CONF/lists/dev.conf"


# a stranger's post that carries the fields of listgate's notices (a
# made-up seal): it is no notice of listgate's, and its moderators hear
# of it; held, not passed
hops=$(cat "$T/hops")
before=$(sql "SELECT max(id) FROM held_posts")
{ printf 'X-Listgate-List: dev\nX-Listgate-Seal: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n'
  cat "$DATA/spam-test.eml"; } > "$T/forged.eml"
lg filter --list dev --mta qmail -f spammer@example.net -- dev@lists.example.org \
    < "$T/forged.eml" > /dev/null 2>&1
check "a stranger's post with X-Listgate-List is held (not passed)" test $? -eq 99
third=$(sql "SELECT min(id) FROM held_posts WHERE id > $before")
check "... and its notice is sent: the field alone proves nothing" \
    test "$(sql "SELECT count(*) FROM notice_outbox WHERE post_id = $third AND state = 'sent'")" -eq 1
check "... once: that notice, held in turn, carries the seal and stops there" \
    test "$(cat "$T/hops")" -eq $((hops + 1))
check "... a notice of listgate's is sealed" grep -q "^X-Listgate-Seal: [a-z2-7]\{32\}$" "$T/msg.1"

echo "1..$n"
[ "$fails" -eq 0 ]

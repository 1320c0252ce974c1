#!/bin/sh
# notify_outage.sh - a held post's hold notices survive the database
# failing right after the hold, against a private PostgreSQL
# (tests/pg.sh)
#
# The filter holds a spam post while another session keeps notice_outbox
# locked (a migration, a VACUUM FULL, an administrator's psql); the
# filter's connection is then ended (pg_terminate_backend: the server's
# restart, a failover, a pooler dropping it) while it waits for that
# lock.  Checks:
#   - the post is held only with its notices in the outbox: exit 99 with
#     a row per moderator, or a temporary failure (111) with the post not
#     held, never a post held that no notice will announce;
#   - the post is held once (after the MTA's retry of a 111), and every
#     moderator gets its notice (then or from `notify --pending`).
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
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-notout.XXXXXX") || exit 99
locker=
trap '[ -n "$locker" ] && kill "$locker" 2>/dev/null; rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
MAIL=$T/mail
mkdir -p "$CONF/lists" "$MAIL" || exit 99

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), journal_train
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
nmail() { ls "$MAIL" | grep -c "\.$1\$"; }

printf 'tokens_dir = %s/tokens\nsecret_file = %s/var/secret\ndatabase = host=%s port=%s dbname=%s user=%s\n' \
    "$T" "$T" "$PGHOST" "$PGPORT" "$PGDATABASE" "$PGUSER" > "$CONF/listgate.conf"
lg init > /dev/null 2>&1 || exit 99
cat > "$T/notify.sh" <<EOF
#!/bin/sh
n=\$(date +%s%N).\$\$
cat > "$MAIL/\$n.tmp" && mv "$MAIL/\$n.tmp" "$MAIL/\$n.\$1"
EOF
cat > "$CONF/lists/dev.conf" <<EOF
ham_cutoff = 0.5
spam_cutoff = 0.9
timeout = 60
moderators = alice@example.org bob@example.org
moderation_address = dev-moderate@lists.example.org
notify = /bin/sh $T/notify.sh {moderator}
EOF
lg migrate -q || exit 99
journal_train dev || exit 99
lg sync -q --list dev || exit 99

held() { sql "SELECT count(*) FROM held_posts WHERE message_id = '<outage@test>'"; }
rows() { sql "SELECT count(*) FROM notice_outbox o JOIN held_posts p ON p.id = o.post_id WHERE p.message_id = '<outage@test>'"; }
sed 's/^Message-ID: .*/Message-ID: <outage@test>/' "$DATA/spam-test.eml" > "$T/post"

# the table locked against writes, in a session of its own
PGAPPNAME=lg-locker psql -X -q -c "BEGIN; LOCK TABLE notice_outbox IN SHARE MODE; SELECT pg_sleep(60)" \
    > /dev/null 2>&1 &
locker=$!
i=0
until [ "$(sql "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE a.application_name = 'lg-locker' AND l.relation = 'notice_outbox'::regclass AND l.granted")" -eq 1 ]; do
	i=$((i + 1)); [ $i -lt 100 ] || { echo "# the lock was not taken"; exit 99; }
	sleep 0.1
done
lg filter --list dev --mta qmail -f spammer@example.net -- dev@lists.example.org \
    < "$T/post" > "$T/filter.out" 2>&1 &
fpid=$!
# the filter's connection ends while it waits for the table
i=0
until [ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%notice_outbox%' AND pid <> pg_backend_pid()")" -ge 1 ]; do
	i=$((i + 1)); [ $i -lt 200 ] || { echo "# the filter never waited for the lock"; break; }
	sleep 0.1
done
sql "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%notice_outbox%' AND pid <> pg_backend_pid()" > /dev/null
wait "$fpid"
rc=$?
sql "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'lg-locker'" > /dev/null
wait "$locker" 2>/dev/null
locker=
h=$(held) r=$(rows)
case $rc in
99)	check "filter exit 99: the post is held with a notice per moderator queued ($h held, $r rows)" \
	    test "$h" -eq 1 -a "$r" -eq 2 ;;
111)	check "filter exit 111: the post is not held ($h held)" test "$h" -eq 0 ;;
*)	bad "filter exit $rc: neither held nor a temporary failure"
	sed 's/^/# /' "$T/filter.out" ;;
esac

# the MTA retries only a temporary failure
if [ "$rc" -eq 111 ]; then
	lg filter --list dev --mta qmail -f spammer@example.net -- \
	    dev@lists.example.org < "$T/post" > "$T/filter.out" 2>&1
	check "the MTA's retry: exit 99" test $? -eq 99
fi
check "the post is held once" test "$(held)" -eq 1
lg notify --pending --quiet > "$T/notify.out" 2>&1
check "alice hears of it" test "$(nmail alice@example.org)" -eq 1
check "bob hears of it" test "$(nmail bob@example.org)" -eq 1

echo "1..$n"
[ "$fails" -eq 0 ]

#!/bin/sh
# lock_timeout.sh - the waits for listgate's advisory locks under a
# lock_timeout set in the database conninfo's options (for the filter's
# hold path), against a private PostgreSQL (tests/pg.sh)
#
# A session of the test holds a lock for 2 s, as a long run would: the
# list's journal lock (a train of the list), the site feed's (another
# sync), migrate's (another migrate).  Behind it, under lock_timeout =
# 100 ms, a train, each decision (approve, reject, discard, expire with
# expire_action = discard-learn, the web page's, a reply by mail), a
# sync with a site store and a migrate must wait and end well, not be
# cut after 100 ms.  The lock_timeout still bounds the wait for a
# table's lock afterwards in the same transaction (a train behind an
# ACCESS EXCLUSIVE lock of train_journal fails).  Never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
QHOLD=$top_builddir/tests/qhold
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-lockto.XXXXXX") || exit 99
hpid=
trap '[ -n "$hpid" ] && kill "$hpid" 2>/dev/null; rm -rf "$T"' EXIT INT TERM

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
mkdir -p "$T/conf/lists" "$T/out" || exit 99
printf 'tokens_dir = %s/tokens\ndatabase = "options='"'"'-c lock_timeout=100'"'"'"\n' \
    "$T" > "$T/conf/listgate.conf"
lg() { "$LISTGATE" --allow-root --config "$T/conf" "$@"; }
cat > "$T/release.sh" <<EOS
#!/bin/sh
cat > "$T/out/\$\$.tmp" && mv "$T/out/\$\$.tmp" "$T/out/\$\$.eml"
EOS
printf 'release = /bin/sh %s/release.sh\nhold_expiry_days = 3\nexpire_action = discard-learn\n' \
    "$T" > "$T/conf/lists/dev.conf"
status() { sql "SELECT status FROM held_posts WHERE id = $1"; }
learnt() { sql "SELECT count(*) FROM train_journal WHERE post_id = $1 AND op = 'learn' AND class = '$2'"; }

# hold SQL: a session runs SQL (which takes a lock) and keeps the lock
# for 2 s; returns once it holds it
hold() {
	PGAPPNAME=holder psql -X -q -c "BEGIN; $1; SELECT pg_sleep(2);
	    COMMIT" > /dev/null 2>&1 &
	hpid=$!
	i=0
	while [ "$(sql "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity
	    a ON a.pid = l.pid WHERE l.granted AND a.application_name =
	    'holder' AND l.locktype IN ('advisory', 'relation')")" -eq 0 ] &&
	    [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}
unhold() { wait "$hpid"; hpid=; }

lg migrate -q || exit 99

# --- a train behind the list's journal lock ---------------------------------
hold "SELECT pg_advisory_xact_lock(19527, hashtext('dev'))"	# "LG"
lg train -q --list dev --ham "$DATA/ham1.eml" > "$T/t.out" 2>&1
rc=$?
unhold
check "a train behind the journal lock waits and exits 0 ($rc: $(head -n 1 "$T/t.out"))" \
    test "$rc" -eq 0
check "... its post journaled" \
    test "$(sql "SELECT count(*) FROM train_journal WHERE list = 'dev'")" -eq 1

# --- the decisions behind it ------------------------------------------------
ap=$("$QHOLD" dev "$DATA/ham2.eml" 0.98) || exit 99
rj=$("$QHOLD" dev "$DATA/spam1.eml") || exit 99
ds=$("$QHOLD" dev "$DATA/spam3.eml") || exit 99
ex=$("$QHOLD" dev "$DATA/spam4.eml") || exit 99
sql "UPDATE held_posts SET arrived_at = now() - interval '4 days' WHERE id = $ex" || exit 99
hold "SELECT pg_advisory_xact_lock(19527, hashtext('dev'))"
for c in "approve $ap" "reject $rj" "discard $ds" "expire --list dev"; do
	lg $c > "$T/${c%% *}.out" 2>&1 &
	eval "p_${c%% *}=\$!"
done
for c in approve reject discard expire; do
	eval "wait \$p_$c"
	eval "r_$c=\$?"
done
unhold
decided_once

# --- sync's site feed behind another feeder's lock ----------------------------
printf 'site_list = site\n' >> "$T/conf/listgate.conf"
hold "SELECT pg_advisory_xact_lock(19539, 0)"	# "LS"
lg sync -q > "$T/s.out" 2>&1
rc=$?
unhold
check "a sync behind another's site feed waits and exits 0 ($rc: $(head -n 1 "$T/s.out"))" \
    test "$rc" -eq 0
check "... the site store fed" \
    test "$(sql "SELECT count(*) > 0 FROM site_feed")" = t

# --- migrate behind another migrate -----------------------------------------
hold "SELECT pg_advisory_xact_lock(1279741257)"	# "LGMI"
lg migrate -q > "$T/m.out" 2>&1
rc=$?
unhold
check "a migrate behind another waits and exits 0 ($rc: $(head -n 1 "$T/m.out"))" \
    test "$rc" -eq 0

# --- the web page's decision behind a train ----------------------------------
# (web_lib.sh: lists dev and other, users; the same $CONF, lg and sql)
. "$top_srcdir/tests/web_lib.sh"
web_setup || exit 99
printf 'tokens_dir = %s/tokens\ndatabase = "options='"'"'-c lock_timeout=100'"'"'"\n' \
    "$T" > "$CONF/listgate.conf"
wr=$("$QHOLD" dev "$DATA/spam2.eml") || exit 99
web_start || exit 99
hold "SELECT pg_advisory_xact_lock(19527, hashtext('dev'))"
req POST "/api/lists/dev/held/$wr" -u alice:alice-secret-1 -d action=reject
unhold
web_stop
check "the web page's reject behind it waits: 200 ($code: $(head -c 200 "$T/body"))" \
    test "$code" = 200
check "... the post rejected (is $(status "$wr")) and learnt once" \
    test "$(status "$wr")" = rejected -a "$(learnt "$wr" spam)" -eq 1

# --- a moderator's reply by mail behind a train ------------------------------
MAILTEXT=$top_builddir/tests/mailtext
mkdir -p "$T/mail" || exit 99
printf 'secret_file = %s/secret\n' "$T" >> "$CONF/listgate.conf"
lg init > /dev/null 2>&1 || exit 99
printf '#!/bin/sh\ncat > "%s/mail/$2.$1"\n' "$T" > "$T/notify.sh"
{
	printf 'moderators = alice@example.org\n'
	printf 'moderation_address = dev-moderate@lists.example.org\n'
	printf 'notify = /bin/sh %s/notify.sh {moderator} {id}\n' "$T"
} >> "$CONF/lists/dev.conf"
mr=$("$QHOLD" dev "$DATA/ham4.eml") || exit 99
lg notify --remind "$mr" > /dev/null 2>&1 || exit 99
addr=$("$MAILTEXT" "$T/mail/$mr.alice@example.org" |
    sed -n 's/^  reject: *mailto:\(.*\)$/\1/p' | head -n 1)
test -n "$addr" || exit 99
hold "SELECT pg_advisory_xact_lock(19527, hashtext('dev'))"
printf 'From: Alice <alice@example.org>\nTo: x\nSubject: Re: held\nMessage-ID: <r.%s@example.org>\n\nok\n' "$$" |
    lg moderate --mta postfix -f alice@example.org -- "$addr" > "$T/mod.out" 2>&1
rc=$?
unhold
check "a moderator's reject by mail behind it waits and exits 0 ($rc: $(head -n 1 "$T/mod.out"))" \
    test "$rc" -eq 0
check "... the post rejected (is $(status "$mr")) and learnt once" \
    test "$(status "$mr")" = rejected -a "$(learnt "$mr" spam)" -eq 1

# --- a table's lock is still bounded by lock_timeout --------------------------
hold "LOCK TABLE train_journal IN ACCESS EXCLUSIVE MODE"
lg train -q --list dev --ham "$DATA/ham3.eml" > "$T/t.out" 2>&1
rc=$?
unhold
check "a train behind an ACCESS EXCLUSIVE lock of train_journal still fails after lock_timeout ($rc: $(head -n 1 "$T/t.out"))" \
    sh -c "test $rc -ne 0 && grep -q 'lock timeout' '$T/t.out'"
check "sync afterwards exits 0" lg sync -q

echo "1..$n"
[ "$fails" -eq 0 ]

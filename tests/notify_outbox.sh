#!/bin/sh
# notify_outbox.sh - the outbox of hold notices under failures, against
# a private PostgreSQL (tests/pg.sh)
#
# Checks:
#   - a notify command that fails for one moderator only: the others get
#     theirs, and reminders queued meanwhile (expire's remind, `notify
#     --remind`) do not pile up for the failing one: once it works it
#     gets the post once more, not once per reminder;
#   - many lists with notices that cannot go (more than a run reads
#     at once, 1024): a list after them in the alphabet still gets its
#     notices sent;
#   - expire's reminders keep to notify_max_per_hour: past it they wait
#     for the digest, as hold notices do, not one mail per post at once;
#   - a run whose claim on a row ran out and whose send then failed
#     leaves the claim of the run that took the row over alone: a third
#     run does not send it too.
#   - notify_max_per_hour holds across senders at once: posts held by
#     filters at once, and one held while two `notify --pending` runs
#     send, get no more notices in the hour than it allows (each sender
#     counted only the notices sent, not those others were sending);
#     the rest wait for the digest;
#   - so do expire's reminders: one sent while a filter sends a notice
#     of the hour's last post waits for the digest.
#   - a digest of more posts than it lists (NOTICE_MAX_DIGEST, 200)
#     counts them all in its subject and says how many more wait; the
#     next run's digest lists them.
#   - notify --pending stopped (SIGTERM) while a notice is being sent
#     records it before it ends: the next run does not send it again;
#     so does expire stopped while it sends a reminder;
#   - a digest being sent does not count against notify_max_per_hour: a
#     post held meanwhile gets its own notice.
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
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-notbox.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
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
# fails for a moderator while $T/fail.<address> exists
cat > "$T/notify.sh" <<EOF
#!/bin/sh
[ -e "$T/fail.\$1" ] && exit 1
# once each: fails after 4 s, or sends after 6 s
if [ -e "$T/slowfail.\$1" ]; then rm -f "$T/slowfail.\$1"; sleep 4; exit 1; fi
if [ -e "$T/slowok.\$1" ]; then rm -f "$T/slowok.\$1"; sleep 6; fi
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

# hold post $1 (a Message-ID) of list $2
hold() {
	sed "s/^Message-ID: .*/Message-ID: <$1@test>/" "$DATA/spam-test.eml" |
	    lg filter --list "$2" --mta qmail -f spammer@example.net -- \
	    "$2@lists.example.org" > "$T/filter.out" 2>&1
}
postid() { sql "SELECT id FROM held_posts WHERE message_id = '<$1@test>'"; }

# --- one moderator's notify fails; reminders meanwhile -------------------
: > "$T/fail.bob@example.org"
hold remind dev
check "the post is held" test $? -eq 99
id=$(postid remind)
check "alice hears of it" test "$(nmail alice@example.org)" -eq 1
check "bob does not yet" test "$(nmail bob@example.org)" -eq 0
for i in 1 2 3; do
	lg notify --remind "$id" > "$T/remind.out" 2>&1
done
check "alice is reminded each time" test "$(nmail alice@example.org)" -eq 4
rm -f "$T/fail.bob@example.org"
lg notify --pending --quiet > "$T/notify.out" 2>&1
check "notify --pending: exit 0" test $? -eq 0
b=$(nmail bob@example.org)
check "bob hears of it once the command works, not once per reminder ($b)" \
    test "$b" -ge 1 -a "$b" -le 2
lg notify --pending --quiet > "$T/notify.out" 2>&1
check "nothing left pending" test "$(sql "SELECT count(*) FROM notice_outbox WHERE state = 'pending'")" -eq 0

# --- many lists whose notices cannot go, then one whose can --------------
# 1100 lists with moderators but no notify: an error each, their rows stay
i=0
while [ $i -lt 1100 ]; do
	echo "moderators = m@example.org" > "$CONF/lists/a$i.conf"
	i=$((i + 1))
done
hold many dev
check "a second post is held" test $? -eq 99
id=$(postid many)
# (its notices to go from notify --pending, as after a failed send)
sql "UPDATE notice_outbox SET tries = 1 WHERE post_id = $id" > /dev/null
rm -f "$MAIL"/*
sql "INSERT INTO notice_outbox (list, post_id, moderator, kind) SELECT 'a' || i, $id, 'm@example.org', 'remind' FROM generate_series(0, 1099) i" > /dev/null
sql "UPDATE notice_outbox SET state = 'pending', done_at = NULL, claimed_until = NULL WHERE post_id = $id AND list = 'dev'" > /dev/null
lg notify --pending --quiet > "$T/notify.out" 2>&1
check "notify --pending: exit 1 (the lists that cannot send)" test $? -eq 1
check "alice hears of dev's post" test "$(nmail alice@example.org)" -eq 1
check "bob hears of dev's post" test "$(nmail bob@example.org)" -eq 1

# --- expire's reminders past notify_max_per_hour -----------------------
rm -f "$CONF"/lists/a*.conf
sql "DELETE FROM notice_outbox" > /dev/null
cat > "$CONF/lists/ops.conf" <<EOF
ham_cutoff = 0.5
spam_cutoff = 0.9
timeout = 60
moderators = carol@example.org
moderation_address = ops-moderate@lists.example.org
notify = /bin/sh $T/notify.sh {moderator}
notify_max_per_hour = 1
hold_expiry_days = 3
expire_action = remind
EOF
journal_train ops || exit 99
lg sync -q --list ops || exit 99
rm -f "$MAIL"/*
for m in r1 r2 r3; do
	hold $m ops
done
check "carol hears of the first post only" test "$(nmail carol@example.org)" -eq 1
lg notify --pending --quiet > "$T/notify.out" 2>&1
check "and a digest of the others" test "$(nmail carol@example.org)" -eq 2
sql "UPDATE held_posts SET arrived_at = now() - interval '10 days' WHERE list = 'ops'" > /dev/null
lg expire > "$T/expire.out" 2>&1
c=$(nmail carol@example.org)
check "expire reminds of three posts past the hour's one: none sent at once ($c)" \
    test "$c" -eq 2
check "... all three queued" test "$(sql "SELECT count(*) FROM notice_outbox WHERE kind = 'remind' AND state = 'pending'")" -eq 3
lg notify --pending --quiet > "$T/notify.out" 2>&1
check "they go in one digest" test "$(nmail carol@example.org)" -eq 3

# --- a lease run out, then a failure: the next claim stands --------------
rm -f "$MAIL"/*
: > "$T/fail.alice@example.org"
hold lease dev
rm -f "$T/fail.alice@example.org"
id=$(postid lease)
# run A: alice's command fails after 4 s; its claim runs out meanwhile
# (a run stopped, a slow server)
: > "$T/slowfail.alice@example.org"
lg notify --pending --quiet --list dev > "$T/a.out" 2>&1 &
apid=$!
sleep 1
sql "UPDATE notice_outbox SET claimed_until = now() - interval '1 second' WHERE post_id = $id AND moderator = 'alice@example.org'" > /dev/null
# run B takes the row over and sends it, in 6 s
: > "$T/slowok.alice@example.org"
lg notify --pending --quiet --list dev > "$T/b.out" 2>&1 &
bpid=$!
wait "$apid"
# run C while B sends
lg notify --pending --quiet --list dev > "$T/c.out" 2>&1
wait "$bpid"
a=$(nmail alice@example.org)
check "a row taken over after a lease ran out: alice gets it once ($a)" test "$a" -eq 1
check "... and it is sent" test "$(sql "SELECT state FROM notice_outbox WHERE post_id = $id AND moderator = 'alice@example.org'")" = sent

# --- notify_max_per_hour across senders at once ---------------------------
# a notify command that takes 3 s: the senders overlap
cat > "$T/slow.sh" <<EOF
#!/bin/sh
[ -e "$T/fail.\$1" ] && exit 1
sleep 3
n=\$(date +%s%N).\$\$
cat > "$MAIL/\$n.tmp" && mv "$MAIL/\$n.tmp" "$MAIL/\$n.\$1"
EOF
cat > "$CONF/lists/bud.conf" <<EOF
ham_cutoff = 0.5
spam_cutoff = 0.9
timeout = 60
moderators = dave@example.org
moderation_address = bud-moderate@lists.example.org
notify = /bin/sh $T/slow.sh {moderator}
notify_max_per_hour = 2
EOF
journal_train bud || exit 99
lg sync -q --list bud || exit 99
# the posts of the hour whose notice was sent
sentposts() { sql "SELECT count(DISTINCT post_id) FROM notice_outbox WHERE list = 'bud' AND state = 'sent'"; }
rm -f "$MAIL"/*
# six posts held at once: each filter reads that none was sent yet
pids=
for m in f1 f2 f3 f4 f5 f6; do
	sed "s/^Message-ID: .*/Message-ID: <$m@test>/" "$DATA/spam-test.eml" |
	    lg filter --list bud --mta qmail -f spammer@example.net -- \
	    bud@lists.example.org > "$T/filter.$m" 2>&1 &
	pids="$pids $!"
done
for p in $pids; do wait "$p"; done
check "six posts held at once" test "$(sql "SELECT count(*) FROM held_posts WHERE list = 'bud'")" -eq 6
s=$(sentposts)
check "filters at once: dave hears of two posts at once, as notify_max_per_hour says ($s)" \
    test "$s" -eq 2 -a "$(nmail dave@example.org)" -eq 2
lg notify --pending --quiet --list bud > "$T/notify.out" 2>&1
check "... of the other four in one digest" \
    test "$(nmail dave@example.org)" -eq 3 -a "$(sentposts)" -eq 2
# four posts whose notices failed, then two notify --pending runs at
# once, and a post held while they send
sql "DELETE FROM notice_outbox WHERE list = 'bud'" > /dev/null
rm -f "$MAIL"/*
: > "$T/fail.dave@example.org"
for m in p1 p2 p3 p4; do
	hold $m bud
done
rm -f "$T/fail.dave@example.org"
check "four notices pending" test "$(sql "SELECT count(*) FROM notice_outbox WHERE list = 'bud' AND state = 'pending' AND NOT digest")" -eq 4
lg notify --pending --quiet --list bud > "$T/a.out" 2>&1 &
apid=$!
lg notify --pending --quiet --list bud > "$T/b.out" 2>&1 &
bpid=$!
i=0
while [ "$(sql "SELECT count(*) FROM notice_outbox WHERE list = 'bud' AND claimed_until > now()")" -lt 2 ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
hold p5 bud
wait "$apid"
wait "$bpid"
s=$(sentposts)
check "two notify --pending at once and a hold meanwhile: two posts noticed in the hour ($s)" \
    test "$s" -eq 2
lg notify --pending --quiet --list bud > "$T/notify.out" 2>&1
check "... the others in the digests, none left pending" \
    test "$(sql "SELECT count(*) FROM notice_outbox WHERE list = 'bud' AND state = 'pending'")" -eq 0 -a "$(sentposts)" -eq 2

# --- expire's reminders counted as they go out ---------------------------
# a post held while its notice failed, due for a reminder, and a post
# held (its notice taking 3 s) while expire runs: the hour allows one
cat > "$CONF/lists/rem.conf" <<EOF
ham_cutoff = 0.5
spam_cutoff = 0.9
timeout = 60
moderators = erin@example.org
moderation_address = rem-moderate@lists.example.org
notify = /bin/sh $T/slow.sh {moderator}
notify_max_per_hour = 1
hold_expiry_days = 3
expire_action = remind
EOF
journal_train rem || exit 99
lg sync -q --list rem || exit 99
remposts() { sql "SELECT count(DISTINCT post_id) FROM notice_outbox WHERE list = 'rem' AND state = 'sent'"; }
: > "$T/fail.erin@example.org"
hold e1 rem
rm -f "$T/fail.erin@example.org"
sql "UPDATE notice_outbox SET state = 'dropped', done_at = now() WHERE list = 'rem'" > /dev/null
sql "UPDATE held_posts SET arrived_at = now() - interval '10 days' WHERE list = 'rem'" > /dev/null
rm -f "$MAIL"/*
hold e2 rem &
hpid=$!
i=0
while [ "$(sql "SELECT count(*) FROM notice_outbox WHERE list = 'rem' AND claimed_until > now()")" -lt 1 ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
lg expire --list rem > "$T/expire.out" 2>&1
check "expire while a filter sends: exit 0" test $? -eq 0
wait "$hpid"
s=$(remposts)
check "expire's reminder past the hour's one notice, claimed while a filter sent its own, is not sent ($s)" \
    test "$s" -eq 1 -a "$(nmail erin@example.org)" -eq 1
check "... it waits in the outbox" grep -q "reminder queued" "$T/expire.out"
lg notify --pending --quiet --list rem > "$T/notify.out" 2>&1
check "... for the digest" test "$(nmail erin@example.org)" -eq 2 -a "$(remposts)" -eq 1

# --- a digest of more posts than it lists ---------------------------------
cat > "$CONF/lists/dg.conf" <<EOF
moderators = gina@example.org
moderation_address = dg-moderate@lists.example.org
notify = /bin/sh $T/notify.sh {moderator}
notify_max_per_hour = 0
EOF
"$QHOLD" -n dg "$DATA/spam-test.eml" 203 > /dev/null || exit 99
sql "INSERT INTO notice_outbox (list, post_id, moderator, kind, digest) SELECT 'dg', id, 'gina@example.org', 'hold', true FROM held_posts WHERE list = 'dg'" > /dev/null
rm -f "$MAIL"/*
lg notify --pending --quiet --list dg > "$T/notify.out" 2>&1
check "203 posts waiting: one digest" test "$(nmail gina@example.org)" -eq 1
dm=$(ls "$MAIL"/*.gina@example.org)
check "... whose subject counts all 203" \
    grep -q "^Subject: \[dg\] held: 203 posts wait" "$dm"
check "... which lists 200 and says 3 more wait" \
    grep -q "^(3 more: a later digest lists them" "$dm"
check "... the 3 left pending" test "$(sql "SELECT count(*) FROM notice_outbox WHERE list = 'dg' AND state = 'pending'")" -eq 3
rm -f "$MAIL"/*
lg notify --pending --quiet --list dg > "$T/notify.out" 2>&1
dm=$(ls "$MAIL"/*.gina@example.org)
check "... and the next run's digest lists them, no more line" \
    test "$(grep -c -e "^Subject: \[dg\] held: 3 posts wait" -e "more: a later" "$dm")" -eq 1

# --- notify --pending stopped mid-send ------------------------------------
# the notice being sent is recorded before the run ends: once its claim
# would have run out, the next run does not send it again
cat > "$CONF/lists/stp.conf" <<EOF
moderators = hank@example.org
moderation_address = stp-moderate@lists.example.org
notify = /bin/sh $T/slow.sh {moderator}
EOF
journal_train stp || exit 99
lg sync -q --list stp || exit 99
: > "$T/fail.hank@example.org"
hold s1 stp
rm -f "$T/fail.hank@example.org"
rm -f "$MAIL"/*
"$LISTGATE" --allow-root --config "$CONF" notify --pending --quiet \
    --list stp > "$T/stop.out" 2>&1 &
spid=$!
i=0
while [ "$(sql "SELECT count(*) FROM notice_outbox WHERE list = 'stp' AND claimed_until > now()")" -lt 1 ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
sleep 0.5
kill -TERM "$spid"
wait "$spid"
check "notify --pending stopped by SIGTERM: exit 1" test $? -eq 1
check "... it says so" grep -q "stopped by signal" "$T/stop.out"
check "... the notice being sent went out" test "$(nmail hank@example.org)" -eq 1
# (a lease that ran out: what a killed run's claim comes to)
sql "UPDATE notice_outbox SET claimed_until = now() - interval '1 second' WHERE list = 'stp' AND claimed_until IS NOT NULL" > /dev/null
lg notify --pending --quiet --list stp > "$T/notify.out" 2>&1
h=$(nmail hank@example.org)
check "... and is not sent again by the next run ($h)" test "$h" -eq 1

# --- expire stopped while it sends a reminder ------------------------------
cat > "$CONF/lists/exs.conf" <<EOF
moderators = ivy@example.org
moderation_address = exs-moderate@lists.example.org
notify = /bin/sh $T/slow.sh {moderator}
hold_expiry_days = 3
expire_action = remind
EOF
journal_train exs || exit 99
lg sync -q --list exs || exit 99
: > "$T/fail.ivy@example.org"
hold x1 exs
rm -f "$T/fail.ivy@example.org"
sql "UPDATE notice_outbox SET state = 'dropped', done_at = now() WHERE list = 'exs'" > /dev/null
sql "UPDATE held_posts SET arrived_at = now() - interval '10 days' WHERE list = 'exs'" > /dev/null
rm -f "$MAIL"/*
"$LISTGATE" --allow-root --config "$CONF" expire --list exs \
    > "$T/stop.out" 2>&1 &
spid=$!
i=0
while [ "$(sql "SELECT count(*) FROM notice_outbox WHERE list = 'exs' AND claimed_until > now()")" -lt 1 ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
sleep 0.5
kill -TERM "$spid"
wait "$spid"
check "expire stopped by SIGTERM while it reminds: exit 1" test $? -eq 1
check "... it says so" grep -q "stopped by signal" "$T/stop.out"
check "... the reminder being sent went out" test "$(nmail ivy@example.org)" -eq 1
sql "UPDATE notice_outbox SET claimed_until = now() - interval '1 second' WHERE list = 'exs' AND claimed_until IS NOT NULL" > /dev/null
lg notify --pending --quiet --list exs > "$T/notify.out" 2>&1
h=$(nmail ivy@example.org)
check "... and is not sent again by the next run ($h)" test "$h" -eq 1

# --- a digest being sent does not spend the hour's notices ----------------
# three posts waiting for a digest (held past the hour's budget, the
# hour since gone by); a post held while their digest goes out
cat > "$CONF/lists/dgc.conf" <<EOF
ham_cutoff = 0.5
spam_cutoff = 0.9
timeout = 60
moderators = jack@example.org
moderation_address = dgc-moderate@lists.example.org
notify = /bin/sh $T/slow.sh {moderator}
notify_max_per_hour = 2
EOF
journal_train dgc || exit 99
lg sync -q --list dgc || exit 99
: > "$T/fail.jack@example.org"
for m in c1 c2 c3; do
	hold $m dgc
done
rm -f "$T/fail.jack@example.org"
sql "UPDATE notice_outbox SET digest = true WHERE list = 'dgc'" > /dev/null
rm -f "$MAIL"/*
lg notify --pending --quiet --list dgc > "$T/a.out" 2>&1 &
apid=$!
i=0
while [ "$(sql "SELECT count(*) FROM notice_outbox WHERE list = 'dgc' AND claimed_until > now()")" -lt 3 ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
hold c4 dgc
wait "$apid"
c=$(sql "SELECT count(DISTINCT post_id) FROM notice_outbox WHERE list = 'dgc' AND state = 'sent'")
check "a post held while a digest goes out gets its notice: the digest spends none of the hour's ($c)" \
    test "$c" -eq 1 -a "$(nmail jack@example.org)" -eq 2

echo "1..$n"
[ "$fails" -eq 0 ]

#!/bin/sh
# moderate_mail.sh - moderation by mail end to end against a private
# PostgreSQL (tests/pg.sh): `listgate init`, hold notices from `filter`,
# replies through `listgate moderate`, refusals, sender notices,
# `notify --pending` with the outbox and digests, `notify --remind`
# (of a held post; of a decided one and of none, each said as it is)
#
# The list's notify command is a script that saves each message it is
# given (stdin) to a file named after {moderator}; `release` saves the
# released post.  Notices are read back with tests/mailtext (the
# project's own parser, gate/mail).  Checks:
#   - init creates the directories and a 0600 secret, whole or not at
#     all, and changes nothing when run again (warning of a secret
#     listgate would refuse);
#   - a held post produces one notice per moderator (From, Reply-To,
#     Subject, the deciding tokens, three links, the post attached);
#   - a reply to the approve address releases the post byte for byte,
#     records the From address as who decided and trains it as ham, the
#     token file synced; reject trains spam and tells the sender;
#     discard trains spam and tells nobody;
#   - a replayed cookie, one character changed, another list, post or
#     action, an expired and a malformed cookie are each refused with
#     an answer that says why, and change nothing;
#   - a post decided already is answered with who decided and when (the
#     way the reply asks: "already approved", not "refused"); an
#     expired one says nobody decided it, and how an approval still can
#     be given;
#   - an expired cookie of a moderator's notice, sent from an address
#     not in moderators, is answered to that moderator (one bound to no
#     moderator, to nobody);
#   - a cookie whose post number is now another list's post (reused
#     after a restore) is refused and decides nothing; so is one whose
#     number is now another post of its own list (its cookie is bound to
#     the post's SHA-256), also when that post took the number while
#     moderate checked the cookie, while one made before that binding
#     is taken;
#   - a release that hangs ends before moderate's watchdog: the post
#     is held again and the MTA's retry releases it;
#   - a release that succeeds saying "5.1.1 ...", and a defer after
#     it: what pipe(8) reads begins with listgate's line, never with the
#     release's status code;
#   - an approval for a list without a release command is refused with
#     an answer naming the key (not retried by the MTA for days), and
#     the same address approves once release is set;
#   - an automatic reply decides nothing; a database that is down, a
#     lists/ directory missing or unreadable are temporary failures
#     (75 / 111);
#   - qmail's $EXT/$HOST with the '-' delimiter;
#   - a notice that could not be sent stays in the outbox and `notify
#     --pending` sends it; past notify_max_per_hour notices wait for one
#     digest; a post decided meanwhile is dropped from the outbox;
#   - two senders at once (the filter and notify --pending, or two
#     --pending runs) send each notice once; a row another sender
#     claimed waits until its claim ran out;
#   - the pending notices of a moderator removed from the list's
#     moderators are dropped, never sent (all of them when no moderator
#     is left, or the list's file is gone);
#   - a post decided while notify --pending sends the notices before it
#     gets none; one being released keeps its notices pending, sent
#     when a failed release holds it again, dropped once approved; a decided post's dropped rows do not hold back the
#     digest of the others;
#   - a robot's field past the first MiB of a reply's header counts;
#   - an oversize post, held unscored, gets its hold notice too;
#   - a rejected post whose envelope sender is the list's own address
#     tells no one (the notice would go to every member);
#   - a notify command that hangs ends the run's sending after one time
#     limit, the rest left for the next run.
# Never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
QHOLD=$top_builddir/tests/qhold
MAILTEXT=$top_builddir/tests/mailtext
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-modmail.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
MAIL=$T/mail
mkdir -p "$MAIL" "$CONF" || exit 99

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
status() { sql "SELECT status FROM held_posts WHERE id = $1"; }
events() { sql "SELECT count(*) FROM train_journal WHERE post_id = $1"; }
nmail() { ls "$MAIL" | grep -c "\.$1\$"; }
# the newest message to an address
last_to() { ls -t "$MAIL"/*."$1" 2>/dev/null | head -1; }
# a post with its own Message-ID
post() {	# post FIXTURE MSGID > file
	sed "s/^Message-ID: .*/Message-ID: <$2>/" "$DATA/$1"
}
# a reply from alice to an address
reply() {	# reply SUBJECT [HEADER] > file
	printf 'From: Alice <alice@example.org>\nTo: x\nSubject: %s\nMessage-ID: <reply.%s@example.org>\n%s\nok\n' \
	    "$1" "$$" "${2:-}"
}
# a new hour of answers: moderate answers an address at most 10 times
# an hour about replies that decided nothing, and the refusals below
# are many more (the loop with an auto-responder counts them)
# (KEEP_HOUR set: the count goes on)
fresh_hour() {
	[ -n "${KEEP_HOUR:-}" ] || sql "DELETE FROM moderation_answers" > /dev/null 2>&1
}
# pipe a reply to ADDR into moderate (Postfix style): exit status in $rc
moderate() {	# moderate ADDR SENDER < reply
	fresh_hour
	lg moderate --mta postfix -f "$2" -- "$1" > "$T/mod.out" 2>&1
	rc=$?
}

# --- init ------------------------------------------------------------------
printf 'tokens_dir = %s/tokens\nsecret_file = %s/var/secret\n' "$T" "$T" \
    > "$CONF/listgate.conf"
lg init > "$T/init.out" 2>&1
check "init exits 0" test $? -eq 0
check "init creates lists/" test -d "$CONF/lists"
check "init creates the tokens directory" test -d "$T/tokens"
check "... mode 0750, as listgate.conf(5) says" test "$(stat -c %a "$T/tokens")" = 750
check "init creates the secret" test -f "$T/var/secret"
check "... mode 0600" test "$(stat -c %a "$T/var/secret")" = 600
check "... 32 random bytes (64 hex digits)" \
    grep -Eqx '[0-9a-f]{64}' "$T/var/secret"
check "init says what it created" grep -q "created secret $T/var/secret" "$T/init.out"
cp "$T/var/secret" "$T/secret.before"
lg init > "$T/init.out" 2>&1
check "init again exits 0" test $? -eq 0
check "init again changes nothing" cmp -s "$T/secret.before" "$T/var/secret"
check "... and says so" grep -q "secret $T/var/secret exists: unchanged" "$T/init.out"
# an init killed while it writes the secret (here by SIGXFSZ: no file
# may grow) leaves none, never an empty one that the next init keeps;
# one that exists and listgate would refuse gets a warning
mkdir -p "$T/iconf" || exit 99
printf 'tokens_dir = %s/itokens\nsecret_file = %s/ivar/secret\n' "$T" "$T" \
    > "$T/iconf/listgate.conf"
(ulimit -f 0; exec "$LISTGATE" --allow-root --config "$T/iconf" init) \
    > /dev/null 2>&1
check "init killed while writing the secret leaves no secret" \
    test ! -e "$T/ivar/secret"
"$LISTGATE" --allow-root --config "$T/iconf" init > "$T/init.out" 2>&1
check "... the next init makes it whole" grep -Eqx '[0-9a-f]{64}' "$T/ivar/secret"
: > "$T/ivar/secret"
"$LISTGATE" --allow-root --config "$T/iconf" init > "$T/init.out" 2>&1
check "init warns of an empty secret, naming it" \
    grep -q "warning: listgate refuses it: secret_file $T/ivar/secret: 0 bytes, want at least 32" "$T/init.out"
check "... and leaves it" test ! -s "$T/ivar/secret"
run_help() { lg "$1" --help > "$T/help" 2>&1; grep -q "usage: listgate" "$T/help"; }
for c in init moderate notify; do
	check "$c --help" run_help "$c"
done
lg notify --pending --remind 1 > "$T/n.out" 2>&1
check "notify --pending --remind: a usage error" test $? -eq 2
check "... saying they exclude each other" \
    grep -q "listgate notify: --pending and --remind exclude each other" "$T/n.out"
# a reply on stdin: --help is no answer to it; the dialect is the one
# the options after it give
echo x | lg moderate --help --mta postfix > /dev/null 2>&1
check "moderate --help before --mta postfix, a reply on stdin: exit 75" \
    test $? -eq 75
echo x | lg moderate --help > /dev/null 2>&1
check "moderate --help, a reply on stdin, qmail: exit 111" test $? -eq 111
# no recipient at all (a master.cf line without -- ${recipient}): every
# reply would be dropped, so the MTA keeps them
reply "no recipient" | env -u EXT -u HOST -u RECIPIENT -u LOCAL \
    "$LISTGATE" --allow-root --config "$CONF" moderate --mta postfix \
    -f alice@example.org > "$T/mod.out" 2>&1
check "moderate without any recipient: a temporary failure (75)" test $? -eq 75
check "... saying what the pipe command lacks" grep -q \
    'temporary failure: no recipient: .*end the pipe command of master.cf with -- ${recipient}' "$T/mod.out"
# usage errors under mta = postfix in listgate.conf: 75, never 111 (a
# bounce of the moderator's reply)
mkdir -p "$T/pfconf/lists" || exit 99
echo 'mta = postfix' > "$T/pfconf/listgate.conf"
for args in "--bogus a@b" "a@b c@d" "--mta bogus a@b" "--help --bogus"; do
	echo x | "$LISTGATE" --allow-root --config "$T/pfconf" moderate $args \
	    > /dev/null 2>&1
	check "moderate $args under mta = postfix: exit 75" test $? -eq 75
done

# --- lists ------------------------------------------------------------------
cat > "$T/notify.sh" <<EOF
#!/bin/sh
# notify.sh MODERATOR ID: one file per message, named after its recipient
test -e "$T/notify-fail" && exit 75
# a slow MTA: says it started, then takes 2 s
test -e "$T/notify-slow" && { touch "$T/notify-busy"; sleep 2; }
# a stuck MTA: hangs past notify's time limit
test -e "$T/notify-hang" && exec /bin/sleep 120
# an administrator's purge (or a failover) while the run sends: the post
# numbered in notify-delete is gone
if test -e "$T/notify-delete"; then
	PGHOST='$PGHOST' PGPORT='$PGPORT' PGUSER='$PGUSER' PGDATABASE='$PGDATABASE' \
	    psql -X -q -c "DELETE FROM held_posts WHERE id = \$(cat "$T/notify-delete")" \
	    > /dev/null 2>&1
	rm -f "$T/notify-delete"
fi
n=\$(date +%s%N).\$\$
cat > "$MAIL/\$n.tmp" && mv "$MAIL/\$n.tmp" "$MAIL/\$n.\$1"
echo "\$2" > "$MAIL/\$n.\$1.id"
EOF
cat > "$T/release.sh" <<EOF
#!/bin/sh
cat > "$T/released.\$1"
# a release that fails after a while: says it started, then waits for
# release-go and exits 1
if test -e "$T/release-fail"; then
	touch "$T/release-busy"
	i=0
	while ! test -e "$T/release-go" && test \$i -lt 300; do
		sleep 0.1; i=\$((i + 1))
	done
	exit 1
fi
EOF
for l in dev ops; do
	cat > "$CONF/lists/$l.conf" <<EOF
ham_cutoff = 0.5
spam_cutoff = 0.9
release = /bin/sh $T/release.sh {list}
moderators = alice@example.org bob@example.org
moderation_address = $l-moderate@lists.example.org
notify = /bin/sh $T/notify.sh {moderator} {id}
sender_notice = yes
EOF
done
# qmail's delimiter
sed -e 's/^moderation_address = .*/moderation_address = q-moderate@lists.example.org/' \
    "$CONF/lists/dev.conf" > "$CONF/lists/q.conf"
echo "recipient_delimiter = -" >> "$CONF/lists/q.conf"
# a notify template whose {moderator} follows an option ("-i"): the
# template check takes it for that option's value (listgate cannot know
# which options take one); argv.sh records its arguments, one a line
cat > "$T/argv.sh" <<EOF
#!/bin/sh
printf '%s\\n' "\$@" >> "$T/argv.log"
cat > "$T/opt-last.eml"
EOF
sed -e 's/^moderation_address = .*/moderation_address = opt-moderate@lists.example.org/' \
    -e "s|^notify = .*|notify = /bin/sh $T/argv.sh -i {moderator}|" \
    "$CONF/lists/dev.conf" > "$CONF/lists/opt.conf"
# two of the three keys: config check says what is missing
printf 'moderators = a@example.org\nmoderation_address = half-moderate@x.example\n' \
    > "$CONF/lists/half.conf"
lg config check --list half > /dev/null 2> "$T/cc.err"
check "config check: half a moderation setup still passes" test $? -eq 0
check "... with a warning naming the missing key" \
    grep -q "half.conf: no hold notices are sent without notify" "$T/cc.err"
rm -f "$CONF/lists/half.conf"
lg migrate -q || exit 99
for l in dev ops q opt; do
	journal_train "$l" || exit 99
	lg sync -q --list "$l" || exit 99
done
rm -f "$MAIL"/*

# hold FIXTURE MSGID SENDER [LIST]: filter a post; prints its id
hold() {
	post "$1" "$2" > "$T/$2.eml"
	lg filter --list "${4:-dev}" --mta qmail -f "$3" -- "${4:-dev}@lists.example.org" \
	    < "$T/$2.eml" > "$T/filter.out" 2>&1
	[ $? -eq 99 ] || { echo "# filter of $2 did not hold" >&2; cat "$T/filter.out" >&2; return 1; }
	sql "SELECT id FROM held_posts WHERE message_id = '<$2>'"
}
# the action address of a notice file: approve from Reply-To, the
# others from the decoded text's mailto: links
addr_of() {	# addr_of FILE ACTION
	"$MAILTEXT" "$1" > "$T/notice.txt" || return 1
	if [ "$2" = approve ]; then
		sed -n 's/^Reply-To: <\(.*\)>$/\1/p' "$T/notice.txt"
	else
		sed -n "s/^  $2: *mailto:\\(.*\\)\$/\\1/p" "$T/notice.txt" | head -1
	fi
}

# --- a held post: a notice to each moderator ------------------------------------
id1=$(hold spam-test.eml mm1@test spammer@example.net) || exit 1
check "filter holds the spam post" test -n "$id1"
check "one notice to alice" test "$(nmail alice@example.org)" -eq 1
check "one notice to bob" test "$(nmail bob@example.org)" -eq 1
check "... after the held row committed: the outbox says sent" \
    test "$(sql "SELECT count(*) FROM notice_outbox WHERE post_id = $id1 AND state = 'sent'")" -eq 2
n1=$(last_to alice@example.org)
"$MAILTEXT" "$n1" > "$T/n1.txt"
check "the notice parses back without anomalies" grep -q "^-- parts [0-9]* anomalies 0$" "$T/n1.txt"
check "From: the moderation address" grep -q '^From: "dev moderation" <dev-moderate@lists.example.org>$' "$T/n1.txt"
check "Reply-To: the approve address" \
    grep -Eq "^Reply-To: <dev-moderate\+approve-$id1-[a-z0-9]{27}@lists.example.org>\$" "$T/n1.txt"
check "Subject: [dev] held: SUBJECT (score S)" \
    grep -Eq '^Subject: \[dev\] held: .* \(score [01]\.[0-9]{4}\)$' "$T/n1.txt"
check "the text names the sender" grep -q "^Sender:  <spammer@example.net>" "$T/n1.txt"
check "... the score and verdict" grep -Eq "^Score:   [01]\.[0-9]{4} \(verdict: (spam|unsure)\)" "$T/n1.txt"
tok1=$(sql "SELECT split_part(split_part(clues, E'\n', 1), ' ', 1) FROM held_posts WHERE id = $id1")
check "... the deciding tokens (the first: $tok1)" grep -qF "  $tok1" "$T/n1.txt"
check "... ten of them" test "$(grep -Ec '^  [01]\.[0-9]{6}  ' "$T/n1.txt")" -eq 10
check "... three mailto: links" test "$(grep -c '^  [a-z]*: *mailto:dev-moderate+' "$T/n1.txt")" -eq 3
check "... a quoted preview" grep -q "^  | " "$T/n1.txt"
check "the post is attached as message/rfc822" grep -q "^Content-Type: message/rfc822" "$n1"
check "... byte for byte" sh -c "grep -qF \"\$(head -c 300 '$T/mm1@test.eml' | tail -n 3 | head -1)\" '$n1'"
check "the notice id is passed as {id}" grep -qx "$id1" "$n1.id"

# --- a reply that says the contrary of approving ----------------------------------------
# the notice's Reply-To is the approve address: a moderator who replies
# "reject" wants the post rejected, and approving it sent the spam to the
# list.  Refused, the address left unused (the approval below uses it)
a1=$(addr_of "$n1" approve)
printf 'From: Alice <alice@example.org>\nTo: x\nSubject: Re: held\nMessage-ID: <contrary.%s@example.org>\n\n\n  Reject, this is spam.\n\nOn Mon, listgate wrote:\n> Reply to this message to approve the post\n' \
    "$$" > "$T/rc1.eml"
nbefore=$(nmail alice@example.org)
moderate "$a1" alice@example.org < "$T/rc1.eml"
st=$(status "$id1"); ev=$(events "$id1")
check "a reply that begins with Reject: exit 0, the post still held" \
    sh -c "test $rc -eq 0 && test '$st' = held && test '$ev' -eq 0"
"$MAILTEXT" "$(last_to alice@example.org)" > "$T/ans.txt"
check "... answered to alice" test "$(nmail alice@example.org)" -eq $((nbefore + 1))
check "... refused, saying why and what to do" \
    sh -c "grep -q '^Subject: \[dev\] refused: approve post $id1\$' '$T/ans.txt' &&
        tr '\n' ' ' < '$T/ans.txt' | grep -q 'begins with \"reject\", but a message to this address (a reply to the notice) approves the post'"
printf 'From: Alice <alice@example.org>\nTo: x\nSubject: Re: held\nMessage-ID: <contrary2.%s@example.org>\nContent-Type: text/html\n\n<div dir="ltr"><p>SPAM!</p></div><blockquote>Reply to this message to approve</blockquote>\n' \
    "$$" > "$T/rc2.eml"
moderate "$a1" alice@example.org < "$T/rc2.eml"
st=$(status "$id1")
check "... so is one in HTML (top-posted) whose first word is SPAM" \
    sh -c "test $rc -eq 0 && test '$st' = held"
# a reply whose first word approves and whose first line says the
# contrary after it: "Yes, this is spam" approved the post
printf 'From: Alice <alice@example.org>\nTo: x\nSubject: Re: held\nMessage-ID: <yesspam.%s@example.org>\n\nYes, this is spam.\n\n> held\n' \
    "$$" > "$T/rc3.eml"
moderate "$a1" alice@example.org < "$T/rc3.eml"
st=$(status "$id1"); ev=$(events "$id1")
"$MAILTEXT" "$(last_to alice@example.org)" > "$T/ans.txt"
check "a reply \"Yes, this is spam\": exit 0, the post still held, the answer says why" \
    sh -c "test $rc -eq 0 && test '$st' = held && test '$ev' -eq 0 &&
        tr '\n' ' ' < '$T/ans.txt' | grep -q 'its first line says .spam., but a message to this address'"
# the decision in the Subject, the text left empty: it approved the post
printf 'From: Alice <alice@example.org>\nTo: x\nSubject: Re: REJECT\nMessage-ID: <subj.%s@example.org>\n\n\n> held\n' \
    "$$" > "$T/rc4.eml"
moderate "$a1" alice@example.org < "$T/rc4.eml"
st=$(status "$id1"); ev=$(events "$id1")
"$MAILTEXT" "$(last_to alice@example.org)" > "$T/ans.txt"
check "a reply whose Subject is \"Re: REJECT\": exit 0, the post still held, the answer says why" \
    sh -c "test $rc -eq 0 && test '$st' = held && test '$ev' -eq 0 &&
        tr '\n' ' ' < '$T/ans.txt' | grep -q 'its Subject begins with .reject., but a message to this address'"

# --- approve by reply ----------------------------------------------------------------
reply "Re: held" > "$T/r1.eml"
nbefore=$(nmail alice@example.org)
moderate "$a1" alice@example.org < "$T/r1.eml"
check "moderate approve exits 0" test "$rc" -eq 0
check "... the post is approved" test "$(status "$id1")" = approved
check "... released byte for byte" cmp -s "$T/released.dev" "$T/mm1@test.eml"
check "... the From address recorded as who decided" \
    test "$(sql "SELECT decided_by FROM held_posts WHERE id = $id1")" = alice@example.org
check "... trained as ham" \
    test "$(sql "SELECT class || op FROM train_journal WHERE post_id = $id1")" = hamlearn
lg sync --list dev > "$T/sync.out" 2>&1
check "... and the token file synced already" grep -q " 0 journal events applied" "$T/sync.out"
check "... an answer to alice" test "$(nmail alice@example.org)" -eq $((nbefore + 1))
"$MAILTEXT" "$(last_to alice@example.org)" > "$T/ans.txt"
check "... that says approved" grep -q "^Subject: \[dev\] approved: post $id1$" "$T/ans.txt"
check "... in reply to hers" grep -q "^In-Reply-To: <reply.$$@example.org>" "$T/ans.txt"

# --- a replayed cookie ------------------------------------------------------------------
moderate "$a1" alice@example.org < "$T/r1.eml"
check "replay: exit 0" test "$rc" -eq 0
check "... nothing changed" test "$(events "$id1")" -eq 1
"$MAILTEXT" "$(last_to alice@example.org)" > "$T/ans.txt"
check "... the answer says it was used already" grep -q "already used" "$T/ans.txt"
check "... and that nothing is left to do for the post" \
    sh -c "grep -q 'there is\$' '$T/ans.txt' && grep -q '^nothing left to do for it' '$T/ans.txt' &&
        ! grep -q 'current hold notice' '$T/ans.txt'"
check "... refused" grep -q "^Subject: \[dev\] refused: approve post $id1$" "$T/ans.txt"
# a third party replays the used address (it was in a forwarded notice,
# a log) with the envelope sender of its victim, over and over: the
# victim gets nothing (no backscatter), the answer goes to the moderator
# the notice was sent to
nalice=$(nmail alice@example.org)
moderate "$a1" victim@victim.example < "$T/r1.eml"
moderate "$a1" victim@victim.example < "$T/r1.eml"
check "replay from a stranger's envelope sender: exit 0, nothing changed" \
    test "$rc" -eq 0 -a "$(events "$id1")" -eq 1
check "... no answer to the stranger's address" test "$(nmail victim@victim.example)" -eq 0
check "... the answers go to alice, whose notice it was" \
    test "$(nmail alice@example.org)" -eq $((nalice + 2))

# --- reject: trains spam, the sender is told ------------------------------------------------
id2=$(hold spam2.eml mm2@test poster@example.net) || exit 1
r2=$(addr_of "$(last_to bob@example.org)" reject)
check "the reject link is in the notice" test -n "$r2"
moderate "$r2" bob@example.org < "$T/r1.eml"
check "moderate reject exits 0" test "$rc" -eq 0
check "... rejected" test "$(status "$id2")" = rejected
check "... trained as spam" \
    test "$(sql "SELECT class || op FROM train_journal WHERE post_id = $id2")" = spamlearn
check "... the sender gets one notice" test "$(nmail poster@example.net)" -eq 1
"$MAILTEXT" "$(last_to poster@example.net)" > "$T/snd.txt"
check "... that says so" grep -q "^Subject: \[dev\] your post was not accepted" "$T/snd.txt"
check "... auto-replied" grep -q "^Auto-Submitted: auto-replied" "$T/snd.txt"
check "... and was not released" sh -c "! grep -q mm2@test '$T/released.dev'"

# --- discard: trains spam, nobody is told --------------------------------------------------
id3=$(hold spam3.eml mm3@test victim@example.org) || exit 1
d3=$(addr_of "$(last_to alice@example.org)" discard)
moderate "$d3" alice@example.org < "$T/r1.eml"
check "moderate discard exits 0" test "$rc" -eq 0
check "... discarded" test "$(status "$id3")" = discarded
check "... trained as spam" \
    test "$(sql "SELECT class || op FROM train_journal WHERE post_id = $id3")" = spamlearn
check "... no notice to the sender" test "$(nmail victim@example.org)" -eq 0

# --- an envelope sender that starts with '-': never {moderator} ------------
# a sender notice goes through notify with {moderator} the post's
# envelope sender: after "-i" it was passed as an option of its own
# (sendmail -oQ/-C: a spammer's options to the site's mailer)
: > "$T/argv.log"
ido=$(hold spam2.eml mmopt@test "-oQ/tmp/lg-evil@example.net" opt) || exit 1
check "the -i template sends the hold notice" grep -qx -- "-i" "$T/argv.log"
ro=$(addr_of "$T/opt-last.eml" reject)
check "... with a reject link" test -n "$ro"
moderate "$ro" alice@example.org < "$T/r1.eml"
check "reject of a post from -oQ/...: exit 0" test "$rc" -eq 0
check "... rejected" test "$(status "$ido")" = rejected
check "... no sender notice: the sender never reaches notify's arguments" \
    sh -c "! grep -q -- '^-oQ' '$T/argv.log'"

# --- refusals: each changes nothing and says why ---------------------------------------------
id4=$(hold spam4.eml mm4@test bouncer@example.net) || exit 1
n4=$(last_to alice@example.org)
a4=$(addr_of "$n4" approve)
r4=$(addr_of "$n4" reject)
ev4=$(events "$id4")
refused() {	# refused DESCRIPTION ADDR PATTERN
	moderate "$2" alice@example.org < "$T/r1.eml"
	"$MAILTEXT" "$(last_to alice@example.org)" > "$T/ans.txt"
	if [ "$rc" -eq 0 ] && [ "$(status "$id4")" = held ] &&
	    [ "$(events "$id4")" -eq "$ev4" ] && grep -q "was refused: $3" "$T/ans.txt"; then
		ok "refused: $1"
	else
		bad "refused: $1 (exit $rc, status $(status "$id4"))"
		sed 's/^/# /' "$T/mod.out" "$T/ans.txt"
	fi
}
local4=${a4%@*}
ck4=${local4##*-}
flip() {	# the cookie with character $1 (1-based) changed
	c=$(printf %s "$ck4" | cut -c"$1")
	[ "$c" = a ] && r=b || r=a
	printf %s "$ck4" | sed "s/./$r/$1"
}
for pos in 1 7 8 20 27; do
	refused "cookie character $pos changed" \
	    "${local4%-*}-$(flip $pos)@lists.example.org" "the cookie does not match"
done
refused "the cookie of another post" \
    "dev-moderate+approve-$id1-$ck4@lists.example.org" "the cookie does not match"
refused "the cookie of another action" \
    "dev-moderate+approve-$id4-${r4##*-}" "the cookie does not match"
check "(the reject cookie itself is genuine)" test -n "${r4##*-}"
refused "the cookie at another list's address" \
    "ops-moderate+approve-$id4-$ck4@lists.example.org" "the cookie does not match"
refused "a malformed cookie" \
    "dev-moderate+approve-$id4-abc@lists.example.org" "malformed cookie"
refused "a malformed post number" \
    "dev-moderate+approve-0$id4-$ck4@lists.example.org" "malformed post number"
# a genuine cookie that expired an hour ago, made with the secret
old_cookie() { lib_old_cookie "$T/var/secret" dev "$@"; }
refused "an expired cookie" \
    "dev-moderate+approve-$id4-$(old_cookie "$id4" approve $(($(date +%s) - 3600)))@lists.example.org" \
    "the address expired"
# a cookie of today's format: bound to the post (its SHA-256, of the
# bytes filter read) and to the moderator its notice went to
bound_cookie() {	# bound_cookie ID ACTION EXPIRY POSTFILE MODERATOR
	_o=$(old_cookie "$1" "$2" "$3")
	printf '%s' "$(printf %s "$_o" | cut -c1-19)"
	{ printf 'listgate-moderate-post-1\000dev\000%s\000%s\000%s' "$1" "$2" \
	    "$(printf %s "$_o" | cut -c1-7)"
	  openssl dgst -sha256 -binary < "$4"
	  printf '%s\000' "$5"; } |
	    openssl dgst -sha256 -hmac "$(cat "$T/var/secret")" -binary |
	    head -c 5 | base32 | tr A-Z a-z
}
b36() {	# the value of base-36 digits
	_v=0
	for _c in $(printf %s "$1" | sed 's/./& /g'); do
		_d=$(awk -v c="$_c" 'BEGIN { print index("0123456789abcdefghijklmnopqrstuvwxyz", c) - 1 }')
		_v=$((_v * 36 + _d))
	done
	echo "$_v"
}
check "(bound_cookie makes the cookie of alice's notice)" test \
    "$(bound_cookie "$id4" approve "$(b36 "$(printf %s "$ck4" | cut -c1-7)")" \
    "$T/mm4@test.eml" alice@example.org)" = "$ck4"
# alice's notice, expired, answered from another address of hers (one
# not in moderators: an alias, her own server's name): the cookie is
# genuine and names her, so she is told it expired, as of a post
# decided already; it said nothing to anyone, and she took the post for
# approved
nalice=$(nmail alice@example.org)
moderate "dev-moderate+approve-$id4-$(bound_cookie "$id4" approve \
    $(($(date +%s) - 3600)) "$T/mm4@test.eml" alice@example.org)@lists.example.org" \
    alice@mail.example.org < "$T/r1.eml"
check "alice's expired notice from another address of hers: exit 0" \
    test "$rc" -eq 0 -a "$(status "$id4")" = held -a "$(events "$id4")" -eq "$ev4"
check "... answered to alice, whose notice it was" \
    test "$(nmail alice@example.org)" -eq $((nalice + 1))
"$MAILTEXT" "$(last_to alice@example.org)" > "$T/ans.txt"
check "... saying it expired" grep -q "was refused: the address expired" "$T/ans.txt"
check "... never to the envelope sender" test "$(nmail alice@mail.example.org)" -eq 0
# one bound to no moderator of the list proves no notice: nobody is told
nbefore=$(ls "$MAIL" | wc -l)
moderate "dev-moderate+approve-$id4-$(bound_cookie "$id4" approve \
    $(($(date +%s) - 3600)) "$T/mm4@test.eml" mallory@example.net)@lists.example.org" \
    mallory@example.net < "$T/r1.eml"
check "an expired cookie bound to no moderator: exit 0, no answer at all" \
    test "$rc" -eq 0 -a "$(ls "$MAIL" | wc -l)" -eq "$nbefore"
# the same computation with a future expiry is accepted: the expired
# refusal above is about the expiry alone
ck4old=$(old_cookie "$id4" approve $(($(date +%s) + 3600)))
reply "x" "Auto-Submitted: auto-replied" > "$T/auto.eml"
nbefore=$(ls "$MAIL" | wc -l)
moderate "dev-moderate+approve-$id4-$ck4old@lists.example.org" alice@example.org < "$T/auto.eml"
check "an automatic reply: exit 0" test "$rc" -eq 0
check "... decides nothing" test "$(status "$id4")" = held
check "... and gets no answer" test "$(ls "$MAIL" | wc -l)" -eq "$nbefore"
moderate "dev-moderate+approve-$id4-$ck4old@lists.example.org" "" < "$T/r1.eml"
check "a null envelope sender decides nothing" test "$(status "$id4")" = held
check "... and is handled (exit 0)" test "$rc" -eq 0
# no sender at all (a pipe command without -f ${sender}, no $SENDER) is
# the command's fault, not a bounce: ignored, every reply's decision
# would be lost; the MTA keeps it until the command is mended
env -u SENDER "$LISTGATE" --allow-root --config "$CONF" moderate --mta postfix \
    -- "dev-moderate+approve-$id4-$ck4old@lists.example.org" < "$T/r1.eml" \
    > "$T/mod.out" 2>&1
check "no envelope sender at all: a temporary failure (75)" test $? -eq 75
check "... saying what the pipe command lacks" grep -q \
    'temporary failure: no envelope sender: .*-f ${sender}' "$T/mod.out"
check "... the post still held" test "$(status "$id4")" = held
# what other responders and bounces say of themselves: each decides
# nothing and gets no answer
# moderate_log ADDR SENDER FILE: as moderate, with the log line (on a
# terminal: script(1)) in $T/mod.out
moderate_log() {
	fresh_hour
	script -qec "'$LISTGATE' --allow-root --config '$CONF' moderate \
	    --mta postfix -f '$2' -- '$1' < '$3'; echo \"exit=\$?\"" \
	    /dev/null > "$T/mod.out" 2>&1
	rc=$(sed -n 's/^exit=\([0-9]*\).*/\1/p' "$T/mod.out")
	rc=${rc:-1}
}
robot() {	# robot DESCRIPTION SENDER FILE
	nbefore=$(ls "$MAIL" | wc -l)
	moderate_log "dev-moderate+approve-$id4-$ck4old@lists.example.org" "$2" "$3"
	if [ "$rc" -eq 0 ] && [ "$(status "$id4")" = held ] &&
	    [ "$(ls "$MAIL" | wc -l)" -eq "$nbefore" ] &&
	    grep -q "never decides" "$T/mod.out"; then
		ok "a robot's reply decides nothing: $1"
	else
		bad "a robot's reply decides nothing: $1 (exit $rc, status $(status "$id4"))"
		sed 's/^/# /' "$T/mod.out"
	fi
}
for h in "Precedence: auto_reply" "X-Precedence: bulk" \
    "Precedence: bulk (vacation)" 'Precedence: "junk"' \
    "X-Autogenerated: Reply" \
    "Content-Type: multipart/report; report-type=delivery-status; boundary=b"; do
	reply "x" "$h" > "$T/robot.eml"
	robot "$h" alice@example.org "$T/robot.eml"
done
reply "x" > "$T/robot.eml"
robot "envelope sender MAILER-DAEMON" MAILER-DAEMON@mx.example.org "$T/robot.eml"
# (a second copy of a field, and one past 64 KiB of header, count too)
reply "x" "Precedence: first-class
Precedence: bulk" > "$T/robot.eml"
robot "the second Precedence" alice@example.org "$T/robot.eml"
{ printf 'From: Alice <alice@example.org>\nSubject: x\n'
  i=0
  while [ $i -lt 1000 ]; do
	printf 'Received: from relay%d.example.org by mx.example.org; a line of some eighty characters\n' $i
	i=$((i + 1))
  done
  printf 'Auto-Submitted: auto-replied\n\nok\n'; } > "$T/robot.eml"
robot "Auto-Submitted past 64 KiB" alice@example.org "$T/robot.eml"
# (and one past the first MiB, which the walk stopped at: the robot
# rules read the whole header)
awk 'BEGIN { printf "From: Alice <alice@example.org>\nSubject: x\n"
	for (i = 0; i < 13000; i++)
		printf "Received: from relay%d.example.org by mx.example.org; a line of some eighty characters\n", i
	printf "Auto-Submitted: auto-replied\n\nok\n" }' > "$T/robot.eml"
robot "Auto-Submitted past 1 MiB" alice@example.org "$T/robot.eml"
# a refusal goes to the list's moderators only: anyone may put any
# envelope sender on a mail to an action address (backscatter)
nbefore=$(ls "$MAIL" | wc -l)
moderate_log "dev-moderate+approve-$id4-$(flip 3)@lists.example.org" victim@victim.example "$T/r1.eml"
check "a refused reply from a stranger: exit 0" test "$rc" -eq 0
check "... no answer to the stranger" test "$(ls "$MAIL" | wc -l)" -eq "$nbefore"
check "... the log says why" grep -q "answered only to the list's moderators" "$T/mod.out"
# so does one whose last characters (those bound to the post) changed
moderate_log "dev-moderate+approve-$id4-$(flip 27)@lists.example.org" victim@victim.example "$T/r1.eml"
check "a stranger's cookie changed in its last character: exit 0" test "$rc" -eq 0
check "... no answer to the stranger" test "$(ls "$MAIL" | wc -l)" -eq "$nbefore"
check "... the log says why" grep -q "answered only to the list's moderators" "$T/mod.out"
moderate "dev-moderate+WIN-A-PRIZE@lists.example.org" dev@lists.example.org < "$T/r1.eml"
check "... nor to the list's own address" test "$(ls "$MAIL" | wc -l)" -eq "$nbefore"
# the bare moderation address (a reply to a digest or to an answer):
# the moderator is told to use the action addresses; nothing decided
moderate "dev-moderate@lists.example.org" bob@example.org < "$T/r1.eml"
"$MAILTEXT" "$(last_to bob@example.org)" > "$T/ans.txt"
check "the bare moderation address: answered to a moderator" \
    grep -q "^Subject: \[dev\] nothing decided: no action in the address$" "$T/ans.txt"
check "... saying it is the moderation address itself" \
    grep -q "^decided nothing: it is the list.s moderation address itself,$" "$T/ans.txt"
check "... not a malformed cookie" test "$(grep -ci malformed "$T/ans.txt")" -eq 0
# its answer comes before the cookie's key is loaded: it went out
# without the seal every other message of listgate's carries
check "... sealed as listgate's own (X-Listgate-Seal)" \
    grep -q "^X-Listgate-Seal: [a-z2-7]\{32\}$" "$T/ans.txt"
check "... and which addresses decide" \
    grep -q "Reply-To is the approve address" "$T/ans.txt"
check "... nothing decided" test "$(status "$id4")" = held
# a moderator who is the site's postmaster decides like anyone with the
# cookie; the answers to a sender who is no moderator (decided; decided
# already) go to the moderator the cookie was made for
idp=$(hold spam2.eml mmpm@test y@example.net) || exit 1
ap=$(addr_of "$(last_to alice@example.org)" approve)
nalice=$(nmail alice@example.org)
moderate "$ap" postmaster@example.org < "$T/r1.eml"
check "a reply from envelope sender postmaster@ decides" test "$(status "$idp")" = approved
moderate "$ap" prvs=1234abcdef=alice@example.org < "$T/r1.eml"
check "... the same cookie again from a tagged sender: answered to alice (decided already)" \
    sh -c "test -z \"\$(ls '$MAIL' | grep -F prvs=)\" && test $(nmail alice@example.org) -eq $((nalice + 2))"
# a From: that is the name the filter stores its own discards under is
# no name to record a moderator's decision under: the envelope sender
# is recorded, and the reply decides (it is not deferred for days)
idf=$(hold spam2.eml mmfb@test y@example.net) || exit 1
af=$(addr_of "$(last_to alice@example.org)" approve)
printf 'From: listgate filter\nTo: x\nSubject: Re: held\n\nok\n' > "$T/rf.eml"
moderate "$af" alice@example.org < "$T/rf.eml"
check "a reply From: listgate filter: exit 0" test "$rc" -eq 0
check "... it decides" test "$(status "$idf")" = approved
check "... recorded under the envelope sender" \
    test "$(sql "SELECT decided_by FROM held_posts WHERE id = $idf")" = alice@example.org

# --- database down: the MTA retries -------------------------------------------------------------
$PG_CTL_STOP
moderate "$a4" alice@example.org < "$T/r1.eml"
check "database down: Postfix exit 75" test "$rc" -eq 75
lg moderate --mta qmail -f alice@example.org -- "$a4" < "$T/r1.eml" > /dev/null 2>&1
check "database down: qmail exit 111" test $? -eq 111
$PG_CTL_START
check "... nothing changed" test "$(status "$id4")" = held

# --- lists/ missing or unreadable: the MTA retries -----------------------------------------------
# (a configuration problem, not "no list has this address": the reply
# would be refused, unanswered, and lost)
mv "$CONF/lists" "$CONF/lists.away"
moderate "$a4" alice@example.org < "$T/r1.eml"
mv "$CONF/lists.away" "$CONF/lists"
check "lists/ missing: Postfix exit 75" test "$rc" -eq 75
check "... the error names the directory" \
    grep -q "temporary failure: cannot read the list directory $CONF/lists: No such file" "$T/mod.out"
check "... nothing changed" test "$(status "$id4")" = held
# unreadable by the user the MTA runs moderate as (root reads anything:
# then that user is nobody)
chmod 755 "$T" "$CONF"
if [ "$(id -u)" -eq 0 ]; then
	chmod 700 "$CONF/lists"
	asuser="runuser -u nobody -- env ASAN_OPTIONS=${ASAN_OPTIONS:-}"
else
	chmod 000 "$CONF/lists"
	asuser=
fi
$asuser "$LISTGATE" --config "$CONF" moderate --mta qmail -f alice@example.org \
    -- "$a4" < "$T/r1.eml" > "$T/mod.out" 2>&1
rc=$?
chmod 755 "$CONF/lists"
chmod 700 "$T"
check "lists/ unreadable: qmail exit 111" test "$rc" -eq 111
check "... the error names the directory" \
    grep -q "temporary failure: cannot read the list directory $CONF/lists: Permission denied" "$T/mod.out"
check "... nothing changed" test "$(status "$id4")" = held

# --- decided already: who and when -----------------------------------------------------------------
lg approve --by carol "$id4" > /dev/null 2>&1
moderate "$r4" alice@example.org < "$T/r1.eml"
check "decided already: exit 0" test "$rc" -eq 0
check "... still approved" test "$(status "$id4")" = approved
"$MAILTEXT" "$(last_to alice@example.org)" > "$T/ans.txt"
check "... the answer says by whom and when" \
    grep -Eq "the post was already approved by carol at [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{5} UTC" "$T/ans.txt"
check "... and that nothing is left to do, not to use a current notice" \
    sh -c "grep -q '^Nothing was changed.  The post was decided already: there is$' '$T/ans.txt' &&
        ! grep -q 'current hold notice' '$T/ans.txt'"
# decided the way the reply asks (carol approved first, as two
# moderators do): said so, not "refused", as approve on the command line
# counts it done
moderate "$a4" bob@example.org < "$T/r1.eml"
check "approve of a post approved already: exit 0" \
    test "$rc" -eq 0 -a "$(status "$id4")" = approved
"$MAILTEXT" "$(last_to bob@example.org)" > "$T/ans.txt"
check "... answered: already approved, not refused" \
    grep -q "^Subject: \[dev\] already approved: post $id4\$" "$T/ans.txt"
check "... by whom and when, nothing left to do" \
    sh -c "grep -Eq '^Post $id4 to the list dev was already approved by carol at [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{5} UTC,\$' '$T/ans.txt' &&
        grep -q 'nothing is left to do' '$T/ans.txt' && ! grep -q 'refused' '$T/ans.txt'"
moderate "$ck4old" alice@example.org < "$T/r1.eml"
check "not an action address at all: exit 0" test "$rc" -eq 0
# expired (hold_expiry_days, `listgate expire`): nobody decided it and
# it never reached the list; the answer said it was "decided already"
# with "nothing left to do", and an approval can still be given
# (a post of ops: dev's notices of the hour are counted for later tests)
id72=$(hold spam3.eml mm72@test r@example.net ops) || exit 1
n72=$(last_to alice@example.org)
a72=$(addr_of "$n72" approve)
r72=$(addr_of "$n72" reject)
sql "UPDATE held_posts SET status = 'expired', decided_by = 'listgate@host', decided_at = now() WHERE id = $id72"
moderate "$a72" alice@example.org < "$T/r1.eml"
check "approve of an expired post: exit 0, still expired" \
    test "$rc" -eq 0 -a "$(status "$id72")" = expired
"$MAILTEXT" "$(last_to alice@example.org)" > "$T/ans.txt"
check "... the answer says it expired and nobody decided it" \
    grep -Eq "the post expired at [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{5} UTC \(held longer than hold_expiry_days\): nobody decided it" "$T/ans.txt"
check "... that it was not released, and how it still can be" \
    sh -c "grep -q 'The post was not released to the list' '$T/ans.txt' &&
        grep -q 'approve --force $id72' '$T/ans.txt' &&
        ! grep -q 'decided already' '$T/ans.txt'"
moderate "$r72" alice@example.org < "$T/r1.eml"
"$MAILTEXT" "$(last_to alice@example.org)" > "$T/ans.txt"
check "reject of an expired post: nothing left to do, no approve --force" \
    sh -c "grep -q 'nobody decided it' '$T/ans.txt' &&
        grep -q 'There is nothing left to do for it' '$T/ans.txt' &&
        ! grep -q 'approve --force' '$T/ans.txt'"
lg approve --force "$id72" > /dev/null 2>&1
check "... approve --force, as the answer said, releases it" \
    test "$(status "$id72")" = approved -a -s "$T/released.ops"

# --- a post number reused (the database restored from a backup) ------------------------------------
# an ops cookie for a number that is now a dev post: refused for good
# and answered; the dev post is neither decided nor released
id10=$(hold spam1.eml mm11@test r@example.net ops) || exit 1
a10=$(addr_of "$(last_to alice@example.org)" approve)
sql "UPDATE held_posts SET list = 'dev' WHERE id = $id10"
rm -f "$T/released.dev"
moderate "$a10" alice@example.org < "$T/r1.eml"
check "another list's post under the cookie's number: exit 0" test "$rc" -eq 0
check "... not decided" test "$(status "$id10")" = held
check "... not released" test ! -e "$T/released.dev"
check "... no training" test "$(events "$id10")" -eq 0
"$MAILTEXT" "$(last_to alice@example.org)" > "$T/ans.txt"
check "... answered: refused, no such post" \
    grep -q "was refused: there is no such post" "$T/ans.txt"
check "... the answer does not name the other list" sh -c "! grep -qw dev '$T/ans.txt'"
moderate "$a10" alice@example.org < "$T/r1.eml"
check "... the MTA's retry (were there one): exit 0, still held" \
    test "$rc" -eq 0 -a "$(status "$id10")" = held
sql "DELETE FROM held_posts WHERE id = $id10"
# a notice of a post that is gone proves nothing of its post or its
# moderator: a stranger with it gets no answer (no backscatter)
nbefore=$(ls "$MAIL" | wc -l)
moderate_log "$a10" victim@victim.example "$T/r1.eml"
check "a post that is gone, a stranger's reply: exit 0" test "$rc" -eq 0
check "... no answer to the stranger" test "$(ls "$MAIL" | wc -l)" -eq "$nbefore"
check "... the log says why" grep -q "answered only to the list's moderators" "$T/mod.out"

# --- a post number reused within the list (a failover or a restore) ------------------------------------
# the cookie is bound to the post it was made for: the dev post that has
# the number now is neither decided nor released by it
id27=$(hold spam1.eml mm27@test r@example.net) || exit 1
a27=$(addr_of "$(last_to alice@example.org)" approve)
id28=$(hold spam2.eml mm28@test r@example.net) || exit 1
# the first post is lost, and the second takes its number
sql "DELETE FROM held_posts WHERE id = $id27"
sql "DELETE FROM notice_outbox WHERE post_id = $id28"
sql "UPDATE held_posts SET id = $id27 WHERE id = $id28"
rm -f "$T/released.dev"
moderate_log "$a27" alice@example.org "$T/r1.eml"
check "a cookie of the post that had the number before: exit 0" test "$rc" -eq 0
check "... the post under it now is not decided" test "$(status "$id27")" = held
check "... not released" test ! -e "$T/released.dev"
check "... no training" test "$(events "$id27")" -eq 0
check "... the log says why" grep -q "is another post than the cookie was made for" "$T/mod.out"
"$MAILTEXT" "$(last_to alice@example.org)" > "$T/ans.txt"
check "... answered: refused, made for another post" \
    grep -q "was refused: the cookie does not match the post that has this number now" "$T/ans.txt"
# a cookie made before cookies were bound to their post (listgate
# before 0.2.0: the MAC over list, number, action and expiry whole) is
# taken until it expires, for the post under its number
moderate "dev-moderate+approve-$id27-$(old_cookie "$id27" approve $(($(date +%s) + 3600)))@lists.example.org" \
    alice@example.org < "$T/r1.eml"
check "a cookie from before the binding: exit 0" test "$rc" -eq 0
check "... approves the post under its number" test "$(status "$id27")" = approved
check "... released" cmp -s "$T/released.dev" "$T/mm28@test.eml"

# the post that takes the number commits after moderate looked for it
# and before the decision locks it: moderate saw no post to check the
# cookie against, and the decision must not take the one it finds then
# (another session moves it onto the number, holding the decision's
# lock on it until it commits)
id31=$(hold spam3.eml mm31@test r@example.net) || exit 1
a31=$(addr_of "$(last_to alice@example.org)" approve)
id32=$(hold spam4.eml mm32@test r@example.net) || exit 1
sql "DELETE FROM held_posts WHERE id = $id31"
sql "DELETE FROM notice_outbox WHERE post_id = $id32"
psql -X -q -A -t -v ON_ERROR_STOP=1 -c "BEGIN; UPDATE held_posts SET id = $id31 WHERE id = $id32; SELECT pg_advisory_xact_lock($((0x4c50)), $id31); SELECT pg_sleep(4); COMMIT" \
    > /dev/null 2>&1 &
mover=$!
waited=0
while [ "$(sql "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = $((0x4c50)) AND objid = $id31 AND granted")" -ne 1 ] &&
    [ $waited -lt 100 ]; do
	sleep 0.1
	waited=$((waited + 1))
done
rm -f "$T/released.dev"
moderate "$a31" alice@example.org < "$T/r1.eml"
wait $mover
check "a cookie whose post is gone, its number taken meanwhile: exit 0" test "$rc" -eq 0
check "... the post that took the number is not decided" test "$(status "$id31")" = held
check "... not released" test ! -e "$T/released.dev"
check "... no training" test "$(events "$id31")" -eq 0
"$MAILTEXT" "$(last_to alice@example.org)" > "$T/ans.txt"
check "... answered: refused, no such post" \
    grep -q "was refused: there is no such post" "$T/ans.txt"

# --- a moderator removed: the notices sent to that address decide nothing ------------------------------------
id29=$(hold spam3.eml mm29@test r@example.net) || exit 1
a29b=$(addr_of "$(last_to bob@example.org)" approve)
a29a=$(addr_of "$(last_to alice@example.org)" approve)
check "each moderator's notice has its own cookie" test "$a29a" != "$a29b"
cp "$CONF/lists/dev.conf" "$T/dev.conf.saved"
sed -i "s/^moderators = .*/moderators = Alice@Example.ORG/" "$CONF/lists/dev.conf"
moderate_log "$a29b" bob@example.org "$T/r1.eml"
check "bob removed from moderators: his notice's reply exits 0" test "$rc" -eq 0
check "... decides nothing" test "$(status "$id29")" = held
check "... the log says why" grep -q "no longer among the moderators" "$T/mod.out"
check "... and the log gives the removed moderator as a cause, not only a reused number" \
    grep -q "(the notice went to an address no longer in moderators, or post $id29 is another post" "$T/mod.out"
moderate "$a29a" alice@example.org < "$T/r1.eml"
check "... alice's (her address in another case) approves it" \
    test "$rc" -eq 0 -a "$(status "$id29")" = approved
check "... recording whose notice it was" \
    test "$(sql "SELECT note FROM held_posts WHERE id = $id29")" = \
    "by mail (envelope sender <alice@example.org>, the notice sent to <Alice@Example.ORG>)"
cp "$T/dev.conf.saved" "$CONF/lists/dev.conf"

# --- a release that hangs: it ends before moderate's watchdog ------------------------------------
# (the global timeout; the list inherits it): the post is held again and
# the MTA's retry of the reply releases it
id11=$(hold spam3.eml mm12@test r@example.net) || exit 1
a11=$(addr_of "$(last_to alice@example.org)" approve)
cp "$CONF/lists/dev.conf" "$T/dev.conf.saved"
cp "$CONF/listgate.conf" "$T/listgate.conf.saved"
# (a sleep of its own length: tests running beside this one sleep too)
hang="30.$$"
sed -i "s|^release = .*|release = /bin/sleep $hang|" "$CONF/lists/dev.conf"
echo "timeout = 4" >> "$CONF/listgate.conf"
t0=$(date +%s%N)
moderate "$a11" alice@example.org < "$T/r1.eml"
ms=$((($(date +%s%N) - t0) / 1000000))
cp "$T/dev.conf.saved" "$CONF/lists/dev.conf"
cp "$T/listgate.conf.saved" "$CONF/listgate.conf"
check "a release that hangs: exit 75" test "$rc" -eq 75
check "... before the watchdog (took $ms ms)" test "$ms" -lt 3900
check "... the post is held again, not left 'releasing'" \
    test "$(status "$id11")" = held
check "... the error says the release timed out" \
    grep -q "temporary failure: post $id11: release command /bin/sleep: .*timed out after" "$T/mod.out"
check "... and no sleep is left running" sh -c "! pgrep -f '^/bin/sleep $hang\$' >/dev/null"
rm -f "$T/released.dev"
moderate "$a11" alice@example.org < "$T/r1.eml"
check "... the MTA's retry approves it: exit 0" test "$rc" -eq 0
check "... approved" test "$(status "$id11")" = approved
check "... released" cmp -s "$T/released.dev" "$T/mm12@test.eml"

# --- a release refused for good (qmail's 100, ezmlm-send's permanent
# failure): it was a temporary failure, 111, and qmail retried the reply
# and the release for days; it is refused now, as an LMTP 5xx is: the
# reply answered, exit 0, the post held with the refusal as its note
id70=$(hold spam1.eml mm70@test r@example.net) || exit 1
a70=$(addr_of "$(last_to alice@example.org)" approve)
cp "$CONF/lists/dev.conf" "$T/dev.conf.saved"
sed -i "s|^release = .*|release = /bin/sh -c \"cat > /dev/null; exit 100\"|" \
    "$CONF/lists/dev.conf"
lg moderate --mta qmail -f alice@example.org -- "$a70" < "$T/r1.eml" \
    > "$T/mod.out" 2>&1
rc=$?
cp "$T/dev.conf.saved" "$CONF/lists/dev.conf"
check "a release refused for good (exit 100, qmail): the reply is not retried (exit $rc)" \
    test "$rc" -eq 0
"$MAILTEXT" "$(last_to alice@example.org)" > "$T/ans.txt"
check "... the answer says the list refused the post for good" \
    grep -q "the list refused the post for good when it was released" "$T/ans.txt"
check "... the post is held, the refusal its note" test \
    "$(sql "SELECT status || ' ' || note FROM held_posts WHERE id = $id70")" = \
    "held release refused the post for good: release command /bin/sh exited with status 100"

# --- a list without a release command: an approval by mail cannot
# release the post.  It was a temporary failure, the MTA retried the
# reply for days and the moderator heard nothing until its bounce; it is
# refused now with an answer that names the key, and the address still
# works once release is set
id71=$(hold spam2.eml mm71@test r@example.net) || exit 1
a71=$(addr_of "$(last_to alice@example.org)" approve)
cp "$CONF/lists/dev.conf" "$T/dev.conf.saved"
sed -i "/^release = /d" "$CONF/lists/dev.conf"
nalice=$(nmail alice@example.org)
moderate "$a71" alice@example.org < "$T/r1.eml"
check "approve of a list without release: the reply is not retried (exit $rc)" \
    test "$rc" -eq 0
check "... the post stays held" test "$(status "$id71")" = held
check "... alice is answered" test "$(nmail alice@example.org)" -eq $((nalice + 1))
"$MAILTEXT" "$(last_to alice@example.org)" > "$T/ans.txt"
check "... the answer says the list has no release command" \
    grep -q "the list has no release command" "$T/ans.txt"
check "... and names the file to set it in" grep -q "lists/dev.conf" "$T/ans.txt"
cp "$T/dev.conf.saved" "$CONF/lists/dev.conf"
rm -f "$T/released.dev"
moderate "$a71" alice@example.org < "$T/r1.eml"
check "... with release set, the same address approves it" \
    test "$rc" -eq 0 -a "$(status "$id71")" = approved
check "... released" cmp -s "$T/released.dev" "$T/mm71@test.eml"

# --- SIGTERM while the release runs: the release is stopped and the post
# held again for the MTA's retry (not left 'releasing')
id16=$(hold spam2.eml mm16@test r@example.net) || exit 1
a16=$(addr_of "$(last_to alice@example.org)" approve)
cp "$CONF/lists/dev.conf" "$T/dev.conf.saved"
rm -f "$T/rel.started"
sed -i "s|^release = .*|release = /bin/sh -c \"touch $T/rel.started; exec /bin/sleep $hang\"|" \
    "$CONF/lists/dev.conf"
"$LISTGATE" --allow-root --config "$CONF" moderate --mta postfix \
    -f alice@example.org -- "$a16" < "$T/r1.eml" > "$T/mod.out" 2>&1 &
mpid=$!
i=0
while [ ! -e "$T/rel.started" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
kill -TERM "$mpid"
wait "$mpid"
rc=$?
cp "$T/dev.conf.saved" "$CONF/lists/dev.conf"
check "SIGTERM while the release runs: exit 75" test "$rc" -eq 75
check "... the post is held again, not left 'releasing'" \
    test "$(status "$id16")" = held
check "... and the release is stopped" \
    sh -c "! pgrep -f '^/bin/sleep $hang\$' >/dev/null"
rm -f "$T/released.dev"
moderate "$a16" alice@example.org < "$T/r1.eml"
check "... the MTA's retry approves and releases it" \
    sh -c "test $rc -eq 0 && test \"\$(psql -X -A -t -c 'SELECT status FROM held_posts WHERE id = $id16')\" = approved && cmp -s '$T/released.dev' '$T/mm16@test.eml'"

# --- qmail: $EXT and $HOST, the '-' delimiter --------------------------------------------------------
id5=$(hold spam1.eml mm5@test x@example.net q) || exit 1
a5=$(addr_of "$(last_to alice@example.org)" approve)
check "qmail list: the action address uses '-'" \
    sh -c "echo '$a5' | grep -Eq '^q-moderate-approve-$id5-[a-z0-9]{27}@lists.example.org\$'"
ext=${a5%@*}
EXT=$ext HOST=lists.example.org SENDER=alice@example.org RECIPIENT="lists-$a5" \
    "$LISTGATE" --allow-root --config "$CONF" moderate --mta qmail < "$T/r1.eml" > "$T/mod.out" 2>&1
check "qmail: exit 0 with \$EXT@\$HOST" test $? -eq 0
check "... approved" test "$(status "$id5")" = approved
check "... released" cmp -s "$T/released.q" "$T/mm5@test.eml"

# --- the outbox: a notice that could not be sent waits for notify --pending -----------------------
touch "$T/notify-fail"
id6=$(hold spam2.eml mm6@test y@example.net) || exit 1
check "notify failing: the post is held all the same" test "$(status "$id6")" = held
check "... two notices pending" \
    test "$(sql "SELECT count(*) FROM notice_outbox WHERE post_id = $id6 AND state = 'pending'")" -eq 2
check "... the reason kept" \
    test "$(sql "SELECT count(*) FROM notice_outbox WHERE post_id = $id6 AND last_error LIKE '%status 75%'")" -eq 2
lg notify --pending > "$T/np.out" 2>&1
check "notify --pending while it still fails: exit 1" test $? -eq 1
rm -f "$T/notify-fail"
nbefore=$(nmail bob@example.org)
lg notify --pending > "$T/np.out" 2>&1
check "notify --pending: exit 0" test $? -eq 0
check "... bob got the notice" test "$(nmail bob@example.org)" -eq $((nbefore + 1))
check "... nothing pending" test "$(sql "SELECT count(*) FROM notice_outbox WHERE state = 'pending'")" -eq 0
check "... it says so" grep -q "2 notices sent" "$T/np.out"

# --- two senders at once: each notice goes out once --------------------------------
# notify --pending (cron) while the filter still sends the post's notices
touch "$T/notify-slow"
rm -f "$T/notify-busy"
na=$(nmail alice@example.org)
nb=$(nmail bob@example.org)
( hold spam3.eml mm11@test y@example.net > "$T/id11" ) &
i=0
while [ ! -e "$T/notify-busy" ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
lg notify --pending > "$T/np.out" 2>&1
wait
id11=$(cat "$T/id11")
check "notify --pending while the filter sends: one notice to alice" \
    test "$(nmail alice@example.org)" -eq $((na + 1))
check "... one to bob" test "$(nmail bob@example.org)" -eq $((nb + 1))
check "... both rows sent, each once" \
    test "$(sql "SELECT count(*) FROM notice_outbox WHERE post_id = $id11 AND state = 'sent' AND tries = 1")" -eq 2
# two notify --pending runs at once
touch "$T/notify-fail"
id12=$(hold spam4.eml mm12@test y@example.net) || exit 1
rm -f "$T/notify-fail"
na=$(nmail alice@example.org)
nb=$(nmail bob@example.org)
lg notify --pending > "$T/np1.out" 2>&1 &
lg notify --pending > "$T/np2.out" 2>&1
wait
check "two notify --pending runs at once: one notice to alice" \
    test "$(nmail alice@example.org)" -eq $((na + 1))
check "... one to bob" test "$(nmail bob@example.org)" -eq $((nb + 1))
rm -f "$T/notify-slow"
# a row another sender claimed waits; once its claim ran out (a sender
# killed mid-send), the next run sends it
touch "$T/notify-fail"
id13=$(hold spam1.eml mm13@test y@example.net) || exit 1
rm -f "$T/notify-fail"
sql "UPDATE notice_outbox SET claimed_until = now() + interval '1 hour' WHERE post_id = $id13"
na=$(nmail alice@example.org)
lg notify --pending > "$T/np.out" 2>&1
check "a claimed row: notify --pending leaves it" test "$(nmail alice@example.org)" -eq "$na"
check "... pending" \
    test "$(sql "SELECT count(*) FROM notice_outbox WHERE post_id = $id13 AND state = 'pending'")" -eq 2
sql "UPDATE notice_outbox SET claimed_until = now() - interval '1 second' WHERE post_id = $id13"
lg notify --pending > "$T/np.out" 2>&1
check "a claim that ran out: notify --pending sends the row" \
    test "$(nmail alice@example.org)" -eq $((na + 1))
check "... and marks it, claim released" \
    test "$(sql "SELECT count(*) FROM notice_outbox WHERE post_id = $id13 AND state = 'sent' AND claimed_until IS NULL")" -eq 2
# a post decided while notify --pending sends the notices before it:
# no "held" notice goes out for it (the run read its rows as pending,
# then took seconds per notice), and the next run drops its rows
touch "$T/notify-fail"
id22=$(hold spam1.eml mm22@test y@example.net) || exit 1
id23=$(hold spam3.eml mm23@test y@example.net) || exit 1
rm -f "$T/notify-fail" "$T/notify-busy"
touch "$T/notify-slow"
lg notify --pending > "$T/np.out" 2>&1 &
i=0
while [ ! -e "$T/notify-busy" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
lg reject --by carol "$id23" > /dev/null 2>&1
wait
rm -f "$T/notify-slow"
check "a post decided while notify --pending sends: its notices do not go out" \
    test "$(cat "$MAIL"/*.id | grep -cx "$id23")" -eq 0
check "... the post before it gets its two" \
    test "$(cat "$MAIL"/*.id | grep -cx "$id22")" -eq 2
lg notify --pending > "$T/np.out" 2>&1
check "... the next run drops its rows" \
    test "$(sql "SELECT count(*) FROM notice_outbox WHERE post_id = $id23 AND state = 'dropped'")" -eq 2
# a post being released while notify --pending runs: its notices are
# neither sent nor dropped; the release fails, the post is held again,
# and the next run sends them (the moderators were never told of it)
touch "$T/notify-fail"
id51=$(hold spam2.eml mm51@test y@example.net) || exit 1
rm -f "$T/notify-fail" "$T/release-busy" "$T/release-go"
touch "$T/release-fail"
lg approve --by carol "$id51" > "$T/ap51.out" 2>&1 &
i=0
while [ ! -e "$T/release-busy" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
check "a post being released: it is releasing" test "$(status "$id51")" = releasing
lg notify --pending > "$T/np.out" 2>&1
check "... notify --pending exits 0" test $? -eq 0
check "... its notices are not sent" \
    test "$(cat "$MAIL"/*.id | grep -cx "$id51")" -eq 0
check "... nor dropped: both still pending" \
    test "$(sql "SELECT count(*) FROM notice_outbox WHERE post_id = $id51 AND state = 'pending'")" -eq 2
check "... counted as waiting" grep -q " 0 dropped, 2 waiting" "$T/np.out"
touch "$T/release-go"
wait
rm -f "$T/release-fail" "$T/release-busy" "$T/release-go"
check "... the release fails: held again" test "$(status "$id51")" = held
lg notify --pending > "$T/np.out" 2>&1
check "... the next run sends its two notices" \
    test "$(cat "$MAIL"/*.id | grep -cx "$id51")" -eq 2
# a release interrupted (the approving process killed): the notices wait
# while the post stays releasing, and are dropped once it is approved
touch "$T/notify-fail"
id52=$(hold spam3.eml mm52@test y@example.net) || exit 1
rm -f "$T/notify-fail"
sql "UPDATE held_posts SET status = 'releasing', decided_by = 'carol', decided_at = now() WHERE id = $id52"
lg notify --pending > "$T/np.out" 2>&1
check "an interrupted release: notify --pending keeps its notices" \
    test "$(sql "SELECT count(*) FROM notice_outbox WHERE post_id = $id52 AND state = 'pending'")" -eq 2
lg approve --mark-approved --by carol "$id52" > /dev/null 2>&1
check "... approve --mark-approved" test "$(status "$id52")" = approved
lg notify --pending > "$T/np.out" 2>&1
check "... then the next run drops them, sending nothing" \
    test "$(sql "SELECT count(*) FROM notice_outbox WHERE post_id = $id52 AND state = 'dropped' AND last_error = 'the post is approved'")" -eq 2
check "... nothing sent for it" \
    test "$(cat "$MAIL"/*.id | grep -cx "$id52")" -eq 0
# a notify command that hangs (the MTA stuck): the run stops after the
# first one killed at its time limit, instead of taking that long for
# every pending notice (runs from cron piled up); the next run sends the
# one left, then the one that hung
touch "$T/notify-fail"
id26=$(hold spam1.eml mm26@test y@example.net) || exit 1
rm -f "$T/notify-fail"
touch "$T/notify-hang"
t0=$(date +%s)
lg notify --pending > "$T/np.out" 2>&1
nrc=$?
secs=$(($(date +%s) - t0))
rm -f "$T/notify-hang"
check "a notify command that hangs: notify --pending exits 1" test "$nrc" -eq 1
check "... after one command's time limit, not one per notice (took $secs s)" \
    test "$secs" -lt 100
check "... the other notice waits" grep -q " 1 failed, 0 dropped, 1 waiting" "$T/np.out"
lg notify --pending > "$T/np.out" 2>&1
check "... the next run sends both" \
    test "$(sql "SELECT count(*) FROM notice_outbox WHERE post_id = $id26 AND state = 'sent'")" -eq 2

# --- a moderator removed: the notices still pending for him are dropped -------------
touch "$T/notify-fail"
id14=$(hold spam2.eml mm14@test y@example.net) || exit 1
id15=$(hold spam3.eml mm15@test y@example.net) || exit 1
rm -f "$T/notify-fail"
cp "$CONF/lists/dev.conf" "$T/dev.conf.orig"
sed -i 's/^moderators = .*/moderators = alice@example.org/' "$CONF/lists/dev.conf"
na=$(nmail alice@example.org)
nb=$(nmail bob@example.org)
lg notify --remind "$id15" > "$T/rm.out" 2>&1
check "bob removed: notify --remind exits 0" test $? -eq 0
check "... bob gets nothing" test "$(nmail bob@example.org)" -eq "$nb"
# (her notice of the post, still pending, is the reminder: not both)
check "... alice her notice, which is the reminder" test "$(nmail alice@example.org)" -eq $((na + 1))
lg notify --pending > "$T/np.out" 2>&1
check "bob removed: notify --pending exits 0" test $? -eq 0
check "... bob gets nothing" test "$(nmail bob@example.org)" -eq "$nb"
check "... alice her notice" test "$(nmail alice@example.org)" -eq $((na + 2))
check "... bob's rows dropped, saying why" \
    test "$(sql "SELECT count(*) FROM notice_outbox WHERE post_id IN ($id14, $id15) AND moderator = 'bob@example.org' AND state = 'dropped' AND last_error = 'the moderator is no longer in moderators'")" -eq 2
check "... nothing pending" \
    test "$(sql "SELECT count(*) FROM notice_outbox WHERE post_id IN ($id14, $id15) AND state = 'pending'")" -eq 0
mv "$T/dev.conf.orig" "$CONF/lists/dev.conf"
# every moderator removed (moderation by mail turned off), or the list's
# file removed: the rows are dropped like those of one removed moderator,
# not kept pending with notify --pending failing on every run
touch "$T/notify-fail"
id24=$(hold spam1.eml mm24@test y@example.net) || exit 1
rm -f "$T/notify-fail"
cp "$CONF/lists/dev.conf" "$T/dev.conf.orig"
sed -i '/^moderators = /d' "$CONF/lists/dev.conf"
lg notify --pending > "$T/np.out" 2>&1
check "no moderators left: notify --pending exits 0" test $? -eq 0
check "... the rows dropped, saying why" \
    test "$(sql "SELECT count(*) FROM notice_outbox WHERE post_id = $id24 AND state = 'dropped' AND last_error = 'the moderator is no longer in moderators'")" -eq 2
check "... it says so" grep -q "2 dropped" "$T/np.out"
mv "$T/dev.conf.orig" "$CONF/lists/dev.conf"
touch "$T/notify-fail"
id25=$(hold spam3.eml mm25@test y@example.net ops) || exit 1
rm -f "$T/notify-fail"
mv "$CONF/lists/ops.conf" "$T/ops.conf.orig"
lg notify --pending > "$T/np.out" 2>&1
check "the list's file removed: notify --pending exits 0" test $? -eq 0
check "... its rows dropped" \
    test "$(sql "SELECT count(*) FROM notice_outbox WHERE post_id = $id25 AND state = 'dropped'")" -eq 2
mv "$T/ops.conf.orig" "$CONF/lists/ops.conf"
sql "DELETE FROM held_posts WHERE id IN ($id24, $id25)"

# --- a moderator at an address a notice's To: cannot carry (an address
# literal loads, as it did before): the others get theirs, and that row
# is dropped, saying why, not sent with a raw header or retried for ever
cp "$CONF/lists/dev.conf" "$T/dev.conf.orig"
sed -i 's/^moderators = .*/moderators = alice@example.org, carol@[192.0.2.1]/' \
    "$CONF/lists/dev.conf"
na=$(nmail alice@example.org)
id17=$(hold spam1.eml mm17@test y@example.net) || exit 1
check "a moderator at an address literal: the list loads and holds" \
    test -n "$id17"
check "... alice gets her notice" test "$(nmail alice@example.org)" -eq $((na + 1))
check "... no notice goes to the literal" \
    test "$(ls "$MAIL" | grep -c -F 'carol@')" -eq 0
check "... its row dropped, saying why" \
    test "$(sql "SELECT count(*) FROM notice_outbox WHERE post_id = $id17 AND moderator = 'carol@[192.0.2.1]' AND state = 'dropped' AND last_error LIKE 'a notice cannot go to this address%'")" -eq 1
mv "$T/dev.conf.orig" "$CONF/lists/dev.conf"

# --- a moderation_address at its longest: LOCAL{delim}approve-ID-COOKIE@DOMAIN
# must fit in the 320 bytes moderate takes.  264 bytes work end to end; a
# longer one (which loaded before, sent notices, and had every reply
# dropped as "not an action address") is refused with the file and line
long=$(printf '%0246d' 0 | tr 0 m)@lists.example.org
sed -e "s/^moderation_address = .*/moderation_address = $long/" \
    "$CONF/lists/dev.conf" > "$CONF/lists/long.conf"
echo "recipient_delimiter = -" >> "$CONF/lists/long.conf"
cp "$T/tokens/dev.kch" "$T/tokens/long.kch"
na=$(nmail alice@example.org)
id18=$(hold spam1.eml mm18@test y@example.net long) || exit 1
check "a moderation_address of 264 bytes: the post is held" test -n "$id18"
check "... alice gets a notice" test "$(nmail alice@example.org)" -eq $((na + 1))
a18=$(addr_of "$(last_to alice@example.org)" approve)
check "... its approve address fits in 320 bytes" test "${#a18}" -le 320
moderate "$a18" alice@example.org < "$T/r1.eml"
check "... a reply to it approves" test "$(status "$id18")" = approved
long=$(printf '%0282d' 0 | tr 0 m)@lists.example.org
sed -i "s/^moderation_address = .*/moderation_address = $long/" \
    "$CONF/lists/long.conf"
post spam2.eml mm19@test > "$T/mm19.eml"
lg filter --list long --mta qmail -f y@example.net < "$T/mm19.eml" \
    > "$T/filter.out" 2>&1
check "a moderation_address of 300 bytes: the post is left with the MTA (111)" \
    test $? -eq 111
check "... nothing held" \
    test "$(sql "SELECT count(*) FROM held_posts WHERE message_id = '<mm19@test>'")" -eq 0
check "... the error names the file, the line and the limit" grep -q \
    "lists/long.conf:5: moderation_address: .* is too long (300 bytes; at most 264" \
    "$T/filter.out"
rm -f "$CONF/lists/long.conf" "$T/tokens/long.kch"

# --- a notify command that hangs: the post's outcome and time are kept --------------------
sed -e 's/^moderation_address = .*/moderation_address = slow-moderate@lists.example.org/' \
    -e "s|^notify = .*|notify = /bin/sleep $hang|" "$CONF/lists/dev.conf" > "$CONF/lists/slow.conf"
echo "timeout = 4" >> "$CONF/lists/slow.conf"
cp "$T/tokens/dev.kch" "$T/tokens/slow.kch"
t0=$(date +%s%N)
post spam3.eml mm10@test > "$T/mm10.eml"
lg filter --list slow --mta qmail -f s@example.net < "$T/mm10.eml" > /dev/null 2>&1
frc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
check "a hanging notify: the post is held all the same (exit 99)" test "$frc" -eq 99
check "... within the list's timeout less a second (took $ms ms)" test "$ms" -lt 3900
check "... its notices wait in the outbox" \
    test "$(sql "SELECT count(*) FROM notice_outbox o JOIN held_posts p ON p.id = o.post_id WHERE p.message_id = '<mm10@test>' AND o.state = 'pending'")" -eq 2
check "... the one that ran was killed at the deadline" \
    test "$(sql "SELECT count(*) FROM notice_outbox o JOIN held_posts p ON p.id = o.post_id WHERE p.message_id = '<mm10@test>' AND o.last_error LIKE '%timed out%'")" -eq 1
check "... and no sleep is left running" sh -c "! pgrep -f '^/bin/sleep $hang\$' >/dev/null"
rm -f "$CONF/lists/slow.conf"
sql "DELETE FROM held_posts WHERE message_id = '<mm10@test>'"

# --- past notify_max_per_hour: one digest --------------------------------------------------------------
echo "notify_max_per_hour = 0" >> "$CONF/lists/ops.conf"
nbefore=$(nmail alice@example.org)
id7=$(hold spam1.eml mm7@test z@example.net ops) || exit 1
id8=$(hold spam3.eml mm8@test z@example.net ops) || exit 1
id9=$(hold spam4.eml mm9@test z@example.net ops) || exit 1
check "past the limit: no notice at once" test "$(nmail alice@example.org)" -eq "$nbefore"
check "... they wait for the digest" \
    test "$(sql "SELECT count(*) FROM notice_outbox WHERE list = 'ops' AND digest AND state = 'pending'")" -eq 6
lg reject --by carol "$id9" > /dev/null 2>&1
lg notify --pending --list ops > "$T/np.out" 2>&1
check "notify --pending sends the digests: exit 0" test $? -eq 0
check "... one to alice" test "$(nmail alice@example.org)" -eq $((nbefore + 1))
"$MAILTEXT" "$(last_to alice@example.org)" > "$T/dg.txt"
check "... listing the two posts still held" \
    grep -q "^Subject: \[ops\] held: 2 posts wait for moderation" "$T/dg.txt"
check "... with their links" test "$(grep -c "approve: mailto:ops-moderate+approve-" "$T/dg.txt")" -eq 2
check "... the decided post dropped" \
    test "$(sql "SELECT count(*) FROM notice_outbox WHERE post_id = $id9 AND state = 'dropped'")" -eq 2
check "... the digest rows marked" \
    test "$(sql "SELECT count(*) FROM notice_outbox WHERE list = 'ops' AND state = 'digest'")" -eq 4
a8=$(sed -n "s/^  approve: mailto:\\(ops-moderate+approve-$id8-.*\\)\$/\\1/p" "$T/dg.txt")
moderate "$a8" alice@example.org < "$T/r1.eml"
check "a digest's link approves" test "$(status "$id8")" = approved
# the oldest waiting post decided meanwhile: its rows are dropped, and
# each moderator's digest of the others still goes out in this run (the
# dropped row once stood for "that moderator's digest went already")
id20=$(hold spam2.eml mm20@test z@example.net ops) || exit 1
id21=$(hold spam4.eml mm21@test z@example.net ops) || exit 1
lg reject --by carol "$id20" > /dev/null 2>&1
na=$(nmail alice@example.org)
nb=$(nmail bob@example.org)
lg notify --pending --list ops > "$T/np.out" 2>&1
check "the oldest waiting post decided: notify --pending exits 0" test $? -eq 0
check "... alice gets her digest in the same run" \
    test "$(nmail alice@example.org)" -eq $((na + 1))
check "... bob his" test "$(nmail bob@example.org)" -eq $((nb + 1))
"$MAILTEXT" "$(last_to alice@example.org)" > "$T/dg.txt"
check "... listing the post still held" \
    grep -q "^  approve: mailto:ops-moderate+approve-$id21-" "$T/dg.txt"
check "... its rows marked, the decided post's dropped" \
    test "$(sql "SELECT string_agg(state, ',' ORDER BY post_id, moderator) FROM notice_outbox WHERE post_id IN ($id20, $id21)")" = dropped,dropped,digest,digest

# a post deleted while notify --pending sends (a purge, a failover):
# the rows after it of another post are sent about that post, built
# from it again (the run had freed it when it found the deleted one
# gone, and then took the freed one for it)
cp "$CONF/lists/dev.conf" "$T/dev.conf.saved"
echo "notify_max_per_hour = 100000" >> "$CONF/lists/dev.conf"
touch "$T/notify-fail"
id40=$(hold spam1.eml mm40@test y@example.net) || exit 1
id41=$(hold spam3.eml mm41@test y@example.net) || exit 1
rm -f "$T/notify-fail"
# bob's row of the first post tried once more: the run sends alice's,
# then the second post's two (deleted meanwhile), then bob's
sql "UPDATE notice_outbox SET tries = tries + 1 WHERE post_id = $id40 AND moderator = 'bob@example.org'"
echo "$id41" > "$T/notify-delete"
lg notify --pending --list dev > "$T/np.out" 2>&1
check "a post deleted while notify --pending sends: exit 0" test $? -eq 0
check "... the post deleted" test -z "$(status "$id41")"
notice_of() {	# notice_of ID MODERATOR: the notice file
	for f in "$MAIL"/*."$2".id; do
		grep -qx "$1" "$f" && { echo "${f%.id}"; return; }
	done
}
f40a=$(notice_of "$id40" alice@example.org)
f40b=$(notice_of "$id40" bob@example.org)
check "... alice's notice of the other post" test -n "$f40a"
check "... and bob's" test -n "$f40b"
"$MAILTEXT" "$f40a" 2>/dev/null | grep "^Subject: " > "$T/s40a"
"$MAILTEXT" "$f40b" 2>/dev/null | grep "^Subject: " > "$T/s40b"
check "... bob's says what alice's says (built from the post)" \
    sh -c "test -s '$T/s40a' && cmp -s '$T/s40a' '$T/s40b'"
check "... with the post attached byte for byte" \
    sh -c "grep -qF \"\$(head -c 300 '$T/mm40@test.eml' | tail -n 3 | head -1)\" '$f40b'"
cp "$T/dev.conf.saved" "$CONF/lists/dev.conf"

# --- a reminder ---------------------------------------------------------------------------------------
nbefore=$(nmail bob@example.org)
lg notify --remind "$id7" > "$T/rm.out" 2>&1
check "notify --remind: exit 0" test $? -eq 0
check "... bob reminded" test "$(nmail bob@example.org)" -eq $((nbefore + 1))
"$MAILTEXT" "$(last_to bob@example.org)" > "$T/rm.txt"
check "... a 'still held' notice" grep -q "^Subject: \[ops\] still held: " "$T/rm.txt"
a7=$(addr_of "$(last_to bob@example.org)" approve)
moderate "$a7" bob@example.org < "$T/r1.eml"
check "... whose approve address approves the post (bound to it)" \
    test "$rc" -eq 0 -a "$(status "$id7")" = approved
lg notify --remind "$id8" > "$T/rm.out" 2>&1
check "notify --remind of a decided post: exit 1" test $? -eq 1
check "... saying what it is instead of held" \
    grep -qx "listgate notify: post $id8 (list ops) is approved, not held: no reminder" "$T/rm.out"
nope=$(sql "SELECT max(id) + 1000 FROM held_posts")
lg notify --remind "$nope" > "$T/rm.out" 2>&1
check "notify --remind of a post that never was: exit 1" test $? -eq 1
check "... saying there is no such post, not that it is not held" \
    grep -qx "listgate notify: no post $nope: no reminder" "$T/rm.out"

# --- a moderator whose address looks like a list robot's --------------------------------------
# (lists-admin@, owner-x@: names people use) is answered like any other
cp "$CONF/lists/dev.conf" "$T/dev.conf.saved"
sed -i "s/^moderators = .*/moderators = lists-admin@example.org owner-jo@example.org/" \
    "$CONF/lists/dev.conf"
id50=$(hold spam3.eml mm50@test r@example.net) || exit 1
for m in lists-admin@example.org owner-jo@example.org; do
	nbefore=$(nmail "$m")
	a50=$(addr_of "$(last_to "$m")" approve)
	moderate "$a50" "$m" < "$T/r1.eml"
	check "$m approves by reply" test "$rc" -eq 0 -a "$(status "$id50")" = approved
	check "... and gets an answer" test "$(nmail "$m")" -eq $((nbefore + 1))
done
# a stranger at such an address, a moderator of no list, gets none (the
# moderator whose cookie it is does)
nbefore=$(nmail owner-jo@example.org)
moderate "$a50" dev-bounces@example.org < "$T/r1.eml"
check "a list's bounce address with a moderator's cookie: no answer to it" \
    test "$rc" -eq 0 -a "$(nmail dev-bounces@example.org)" -eq 0 -a \
    "$(nmail owner-jo@example.org)" -eq $((nbefore + 1))
cp "$T/dev.conf.saved" "$CONF/lists/dev.conf"

# --- an oversize post: held unscored for a moderator, who hears of it ----------------------
echo "max_post_bytes = 1024" >> "$CONF/lists/dev.conf"
{ post ham-test.eml mm60@test; i=0; while [ $i -lt 40 ]; do
	echo "a long post, line $i, past the list's max_post_bytes"; i=$((i + 1)); done; } \
    > "$T/mm60@test.eml"
nbefore=$(nmail alice@example.org)
lg filter --list dev --mta qmail -f jo@example.net -- dev@lists.example.org \
    < "$T/mm60@test.eml" > "$T/filter.out" 2>&1
check "an oversize post is held (exit 99)" test $? -eq 99
id60=$(sql "SELECT id FROM held_posts WHERE message_id = '<mm60@test>'")
check "... with the verdict oversize" \
    test "$(sql "SELECT verdict FROM held_posts WHERE id = $id60")" = oversize
check "... and alice gets its hold notice" test "$(nmail alice@example.org)" -eq $((nbefore + 1))
"$MAILTEXT" "$(last_to alice@example.org)" > "$T/n60.txt"
check "... which says why it is held" \
    grep -q "^Held as: oversize: [0-9]* bytes, max_post_bytes 1024" "$T/n60.txt"
check "... with the verdict oversize" grep -q "(verdict: oversize)" "$T/n60.txt"
# its score was given as 0.0000 (the 0 stored for a post never scored,
# the score of a post surely ham), in the Subject and the text
check "... saying it was not scored, in the text and the Subject, with no score of 0" \
    sh -c "grep -q '^Score:   not scored (verdict: oversize)\$' '$T/n60.txt' && grep -Eq '^Subject: \[dev\] held: .* \(not scored: oversize\)\$' '$T/n60.txt' && ! grep -q '0\.0000' '$T/n60.txt'"
check "... and no token (not scored)" grep -q "^  (none recorded)" "$T/n60.txt"
a60=$(addr_of "$(last_to alice@example.org)" approve)
moderate "$a60" alice@example.org < "$T/r1.eml"
check "... whose approve address approves it" \
    test "$rc" -eq 0 -a "$(status "$id60")" = approved
check "... released whole" cmp -s "$T/released.dev" "$T/mm60@test.eml"
cp "$T/dev.conf.saved" "$CONF/lists/dev.conf"

# --- a post whose envelope sender is the list itself: no notice to the list -----------------
id61=$(hold spam2.eml mm61@test dev@lists.example.org) || exit 1
r61=$(addr_of "$(last_to alice@example.org)" reject)
moderate_log "$r61" alice@example.org "$T/r1.eml"
check "a post sent as the list itself is rejected by mail" \
    test "$rc" -eq 0 -a "$(status "$id61")" = rejected
check "... and its sender notice does not go to the list" \
    test "$(nmail dev@lists.example.org)" -eq 0
check "... the log says why" \
    grep -q "sender not notified: the sender is the list's own address" "$T/mod.out"

# a post whose envelope sender is the list's address with an extension
# (dev+x@ reaches dev@, every member; dev-x@ under qmail): the notice,
# which quotes the spammer's Subject, would go to the whole list
# (so is another list's address at the list's domain: ops@, ops+x@)
for snd in dev+x@lists.example.org dev-x@LISTS.example.org dev-moderate+y@lists.example.org \
    ops@lists.example.org OPS+x@lists.example.org; do
	id63=$(hold spam2.eml "mm63.$snd@test" "$snd") || exit 1
	r63=$(addr_of "$(last_to alice@example.org)" reject)
	moderate_log "$r63" alice@example.org "$T/r1.eml"
	check "a post sent as $snd is rejected by mail" \
	    test "$rc" -eq 0 -a "$(status "$id63")" = rejected
	check "... and its sender notice does not go to the list" \
	    test "$(nmail "$snd")" -eq 0
	check "... the log says why" \
	    grep -Eq "sender not notified: the sender is the list's own address|sender not notified: the sender is the address of the list ops" "$T/mod.out"
done

# --- reject on the command line: the sender is not told (listgate(1)) -------------------------
id62=$(hold spam2.eml mm62@test cli-poster@example.net) || exit 1
lg reject -q "$id62" > /dev/null 2>&1
check "reject on the command line rejects" test "$(status "$id62")" = rejected
check "... and tells no sender, even with sender_notice = yes" \
    test "$(nmail cli-poster@example.net)" -eq 0
lg reject --help > "$T/help" 2>&1
check "... as reject --help says" grep -q "^Their senders are not told (sender_notice is for a reject by mail" "$T/help"

# --- a reminder of a large post reads what its notice can attach ---------------------------------
# (at most 10 MiB: a larger post gets its header alone), not the whole
# post: notify --remind and --pending loaded a post held oversize, which
# may be 1 GiB, whole into memory, compressed and decompressed
{ printf 'From: Big <big@example.net>\nTo: dev@lists.example.org\nSubject: huge\nMessage-ID: <mm64@test>\n\nhello at the top\n'
  head -c 22500000 /dev/urandom | base64 -w 76; } > "$T/huge.eml"
id64=$("$QHOLD" dev "$T/huge.eml" 0.9) || exit 1
nbefore=$(nmail alice@example.org)
python3 -c 'import resource, subprocess, sys
r = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
open(sys.argv[1], "w").write("%d %d\n" % (r.returncode,
    resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024))' \
    "$T/rss" "$LISTGATE" --allow-root --config "$CONF" notify --remind "$id64"
read -r rc64 mb64 < "$T/rss"
check "a 30 MB post: notify --remind exits 0 and alice is reminded" \
    test "$rc64" -eq 0 -a "$(nmail alice@example.org)" -eq $((nbefore + 1))
check "... in less than 40 MB of memory (${mb64} MB; reading the whole post took 82)" \
    test "$mb64" -lt 40
"$MAILTEXT" "$(last_to alice@example.org)" > "$T/rm64.txt"
check "... the notice gives its whole size and attaches its header only" \
    sh -c "grep -q '^ *Size: *$(wc -c < "$T/huge.eml") bytes' '$T/rm64.txt' && grep -q 'its header only: it is too large' '$T/rm64.txt'"

# --- two lists that share one moderation address ------------------------------------------
# (config check refuses it, but the MTA delivers the replies all the
# same): each reply goes to the list its cookie was made for.  It went
# to the first list found, which refused the other's cookie
for l in sha shb; do
	sed -e 's/^moderation_address = .*/moderation_address = shared-moderate@lists.example.org/' \
	    "$CONF/lists/dev.conf" > "$CONF/lists/$l.conf"
	journal_train "$l" || exit 99
	lg sync -q --list "$l" || exit 99
done
for l in sha shb; do
	ids=$(hold spam-test.eml "shared-$l@test" spammer@example.net "$l") || exit 1
	as=$(addr_of "$(last_to alice@example.org)" approve)
	reply "Re: held" > "$T/rs.eml"
	moderate "$as" alice@example.org < "$T/rs.eml"
	check "shared moderation address, a reply for list $l: decided" \
	    test "$rc" -eq 0 -a "$(status "$ids")" = approved
	check "... released to $l" test -s "$T/released.$l"
done
rm -f "$CONF/lists/sha.conf" "$CONF/lists/shb.conf"

# --- a moderator's auto-responder that marks nothing: the loop ends ------------------------
# It answers every mail at once, "Re: SUBJECT" from alice to its From,
# with no Auto-Submitted, Precedence or robot's Subject.  listgate's
# answers come from the bare moderation address: each of its replies
# decided nothing and was answered, and that answered again, for ever.
# An address is answered about replies that decided nothing at most 10
# times an hour; the 10th answer says so, and the loop ends
fresh_hour
export KEEP_HOUR=1
nbefore=$(nmail alice@example.org)
subj="[dev] approved: post $id1"
prev="<reply.$$@example.org>"
i=0
while [ $i -lt 40 ]; do
	i=$((i + 1))
	n0=$(nmail alice@example.org)
	printf 'From: Alice <alice@example.org>\nTo: <dev-moderate@lists.example.org>\nSubject: Re: %s\nMessage-ID: <away.%d@example.org>\nIn-Reply-To: %s\n\nI am away until Monday and will read your mail then.\n' \
	    "$subj" "$i" "$prev" > "$T/away.eml"
	moderate dev-moderate@lists.example.org alice@example.org < "$T/away.eml"
	[ "$rc" -eq 0 ] || break
	[ "$(nmail alice@example.org)" -gt "$n0" ] || break
	"$MAILTEXT" "$(last_to alice@example.org)" > "$T/away.txt"
	subj=$(sed -n 's/^Subject: //p' "$T/away.txt" | head -1)
	prev=$(sed -n 's/^Message-ID: //p' "$T/away.txt" | head -1)
done
nans=$(($(nmail alice@example.org) - nbefore))
check "an auto-responder that answers every answer: 10 answers, then none ($nans answers, $i replies)" \
    test "$nans" -eq 10 -a "$i" -eq 11
check "... each refused: nothing decided" grep -q '^Subject: \[dev\] nothing decided: no action in the address$' "$T/away.txt"
check "... the 10th says further ones get none this hour" \
    sh -c "tr '\n' ' ' < '$T/away.txt' | grep -q 'This is answer 10 of at most 10 within an hour to messages of yours that decided nothing: further ones get no answer until the hour is over'"
moderate_log dev-moderate@lists.example.org alice@example.org "$T/away.eml"
check "... the next reply: exit 0, no answer" \
    test "$rc" -eq 0 -a "$(($(nmail alice@example.org) - nbefore))" -eq 10
check "... the log says why" \
    grep -q 'no answer: <alice@example.org> had 10 answers to messages that decided nothing in the last hour' "$T/mod.out"
# the count is of refusals: a decision is still answered (the notice
# sent at once, past the hour's notices of this test)
cp "$CONF/lists/dev.conf" "$T/dev.conf.saved"
echo "notify_max_per_hour = 100000" >> "$CONF/lists/dev.conf"
idl=$(hold spam2.eml loop1@test spammer@example.net) || exit 1
cp "$T/dev.conf.saved" "$CONF/lists/dev.conf"
al=$(addr_of "$(last_to alice@example.org)" approve)
reply "Re: held" > "$T/rl.eml"
nl=$(nmail alice@example.org)
moderate "$al" alice@example.org < "$T/rl.eml"
if [ "$rc" -eq 0 ] && [ "$(status "$idl")" = approved ] &&
    [ "$(nmail alice@example.org)" -eq $((nl + 1)) ]; then
	ok "... a decision past the 10: decided and answered"
else
	bad "... a decision past the 10: decided and answered (exit $rc, $(status "$idl"))"
	sed 's/^/# /' "$T/mod.out"
fi
# bob's count is his own
nb=$(nmail bob@example.org)
moderate dev-moderate@lists.example.org bob@example.org < "$T/away.eml"
check "... another moderator's refusal is answered" test "$(nmail bob@example.org)" -eq $((nb + 1))
# and once the hour is over, alice is answered again
sql "UPDATE moderation_answers SET sent_at = sent_at - interval '61 minutes'"
moderate dev-moderate@lists.example.org alice@example.org < "$T/away.eml"
check "... an hour later, alice's refusal is answered again" \
    test "$(($(nmail alice@example.org) - nl))" -eq 2
check "... the rows past the hour deleted" \
    test "$(sql "SELECT count(*) FROM moderation_answers")" -eq 1
unset KEEP_HOUR

# --- a release that says "5.1.1 ..." and exits 0, then a defer ------------------------
# (moderate's watchdog while the approval cannot be recorded: another
# session holds decided_posts).  pipe(8) takes a status code at the
# start of a command's output over a non-zero exit status: the release's
# words first had Postfix bounce the moderator's reply moderate
# deferred.  They follow a line of listgate's now
sed -e 's/^moderation_address = .*/moderation_address = r55-moderate@lists.example.org/' \
    -e "s|^release = .*|release = /bin/sh $T/release55.sh|" \
    "$CONF/lists/dev.conf" > "$CONF/lists/r55.conf"
journal_train r55 || exit 99
lg sync -q --list r55 || exit 99
id55=$(hold spam3.eml mm55@test r@example.net r55) || exit 1
a55=$(addr_of "$(last_to alice@example.org)" approve)
cp "$CONF/listgate.conf" "$T/listgate.conf.saved"
cat > "$T/release55.sh" <<EOF
#!/bin/sh
cat > /dev/null
export PGHOST='$PGHOST' PGPORT='$PGPORT' PGUSER='$PGUSER' PGDATABASE='$PGDATABASE'
psql -X -q -c "BEGIN; LOCK TABLE decided_posts IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(20); COMMIT" \\
    > /dev/null 2>&1 < /dev/null &
i=0
while [ "\$(psql -X -A -t -c "SELECT count(*) FROM pg_locks WHERE relation = 'decided_posts'::regclass AND mode = 'AccessExclusiveLock' AND granted")" != 1 ] &&
    [ \$i -lt 60 ]; do
	sleep 0.05; i=\$((i + 1))
done
echo "5.1.1 no such user"
exit 0
EOF
echo "timeout = 5" >> "$CONF/listgate.conf"
moderate "$a55" alice@example.org < "$T/r1.eml"
sql "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(20)%' AND pid <> pg_backend_pid()" > /dev/null
cp "$T/listgate.conf.saved" "$CONF/listgate.conf"
rm -f "$CONF/lists/r55.conf"
check "release says 5.1.1 and exits 0, the approval not recorded in time: exit 75" \
    test "$rc" -eq 75
check "... the watchdog's" grep -q "^listgate moderate: timed out$" "$T/mod.out"
# (what pipe(8) reads: standard output and error together)
if head -c 12 "$T/mod.out" | grep -Eq '^[245]\.[0-9]{1,3}\.[0-9]{1,3}'; then
	bad "... what Postfix reads does not begin with the release's status code"
	sed 's/^/# /' "$T/mod.out"
else
	ok "... what Postfix reads does not begin with the release's status code"
fi
check "... the release's words follow a line of listgate's" sh -c \
    "head -n 1 '$T/mod.out' | grep -qx 'listgate: /bin/sh exited with status 0; its output:' &&
    sed -n 2p '$T/mod.out' | grep -qx '5.1.1 no such user'" ||
    sed 's/^/# /' "$T/mod.out"

echo "1..$n"
[ $fails -eq 0 ]

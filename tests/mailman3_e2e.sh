#!/bin/sh
# mailman3_e2e.sh - listgate in front of a real Mailman 3, behind a real
# Postfix, set up as docs/mailman3.md says
#
# A private Postfix (its own config and queue under a mktemp -d
# directory; loopback only, never relays), a private Mailman 3 (its own
# mailman.cfg, var directory and SQLite database; its runners run as
# `list'; LMTP and REST on loopback ports) and a private PostgreSQL
# (tests/pg.sh).  Postfix routes the posting addresses dev@ and ann@ and
# the moderation address dev-moderate@ to pipe(8) services running
# `listgate filter` and `listgate moderate` as `list' (maxproc 10,
# null_sender=); every other Mailman address (dev-request@, ...) goes
# through Mailman's own transport map (postfix_lmtp, written by Mailman
# and postmap'ed with `postmap -c` for this instance: Mailman's
# postmap_command) straight to Mailman's LMTP runner.  The list dev
# delivers and releases through LMTP (deliver = lmtp:127.0.0.1:PORT
# dev@lists.example.org) and lets Mailman accept what listgate passed
# or approved (default_member_action and default_nonmember_action =
# accept); the list ann keeps Mailman's holds for non-members and
# releases through `mailman inject -q pipeline`, run as `list'.
# Mailman's outgoing SMTP goes to a sink on loopback (tests/lmtpd.py
# --smtp) where member@example.net's copies land.
#
# Checks: Mailman starts and its lists are created over REST; a ham post
# and a Latin-1 post (which `mailman inject' cannot read) reach the
# member through Mailman, and so does a post from "a b"@example.net with
# that envelope sender (pipe(8)'s flags=q quotes it: not quoted twice);
# a post to dev-request@ never meets listgate
# and Mailman's command runner answers it; a spam post is held, the hold
# notice reaches the moderator's mailbox, a reply to its approve address
# (SMTP to Postfix) is piped to `listgate moderate', and the post
# reaches the member through Mailman with nothing left in Mailman's own
# hold queue; a post Mailman refuses (501, MIME defects) is held with
# Mailman's reply as its note; for ann, `approve' as root cannot run
# `mailman inject' (Mailman refuses root), as `list' it releases the
# post past Mailman's non-member hold, and a Latin-1 post cannot be
# released that way (inject's UnicodeDecodeError: it stays held).
# Prints the time each part takes as "#" lines.
#
# Needs root, Postfix and Mailman 3 (Debian's mailman3), bash, curl and
# /usr/bin/python3; when Postfix or Mailman is missing and we run as
# root with CI=true or LISTGATE_E2E=1 they are installed (run-all.sh
# installs them first); otherwise the test is skipped (77), and so it is
# without a PostgreSQL server.  Under CI (CI=true) nothing skips: a
# missing or uninstallable part is an error (99), and a Mailman that
# does not start fails the test.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
DATA=$top_srcdir/tests/data/train
me=$0
case $me in /*) ;; *) me=$(pwd)/$me ;; esac
PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
export PATH
PY=/usr/bin/python3	# Mailman's Python (another python3 may come first)

skip() { echo "# SKIP: $1"; exit 77; }
# under CI nothing may skip: what is missing there is an error (99)
unavailable() {
	if [ "${CI:-}" = true ]; then
		echo "# ERROR (CI=true, so no skip): $1"
		exit 99
	fi
	skip "$1"
}
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# --- outer part: get Postfix and Mailman, then the inner part under pg.sh ---
if [ "${1:-}" != inner ]; then
	[ "$(id -u)" -eq 0 ] || unavailable "needs root (Postfix's master runs as root, Mailman as list)"
	for c in bash curl; do
		command -v $c >/dev/null 2>&1 || unavailable "needs $c"
	done
	t0=$(date +%s%N)
	install=
	command -v postfix >/dev/null 2>&1 && [ -x /usr/lib/postfix/sbin/master ] ||
	    install="$install postfix"
	[ -x /usr/bin/mailman ] && [ -x /usr/lib/mailman3/bin/master ] ||
	    install="$install mailman3"
	if [ -n "$install" ]; then
		[ "${CI:-}" = true ] || [ "${LISTGATE_E2E:-}" = 1 ] ||
		    skip "not installed:$install (set LISTGATE_E2E=1 to install)"
		echo "# installing$install (no services started)"
		debconf-set-selections <<-EOF || unavailable "debconf-set-selections failed"
		postfix postfix/main_mailer_type select No configuration
		mailman3 mailman3/config_hyperkitty boolean false
		mailman3 mailman3/dbconfig-install boolean true
		mailman3 mailman3/database-type select sqlite3
		EOF
		# the packages' own services stay stopped
		policy=
		if [ ! -e /usr/sbin/policy-rc.d ]; then
			printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d &&
			    chmod 755 /usr/sbin/policy-rc.d && policy=1
		fi
		# shellcheck disable=SC2086
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		    --no-install-recommends $install >/dev/null 2>&1 || {
			apt-get update -q >/dev/null 2>&1
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			    --no-install-recommends $install >/dev/null 2>&1
		}
		rc=$?
		[ -n "$policy" ] && rm -f /usr/sbin/policy-rc.d
		[ $rc -eq 0 ] || unavailable "could not install$install"
		echo "# installing took $(ms_since "$t0") ms"
	fi
	"$PY" -c 'import mailman' 2>/dev/null || unavailable "$PY cannot import mailman"
	getent passwd list >/dev/null || unavailable "no user list"
	sh "$top_srcdir/tests/pg.sh" run sh "$me" inner
	rc=$?
	[ $rc -eq 77 ] && unavailable "no PostgreSQL server (tests/pg.sh)"
	exit $rc
fi

# --- inner part ---------------------------------------------------------------
T0=$(date +%s%N)
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-mm3-e2e.XXXXXX") || exit 99
chmod 755 "$T"
PF=$T/postfix		# the Postfix instance's config_directory
Q=$T/queue
CONF=$T/listgate
MM=$T/mm		# Mailman's var_dir
MMCFG=$T/mailman.cfg
SINK=$T/sink
MASTER_PID=
SINK_PID=

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
cleanup() {
	postfix -c "$PF" stop >/dev/null 2>&1
	if [ -f "$MM/master.pid" ] || [ -n "$MASTER_PID" ]; then
		[ -n "$MASTER_PID" ] || MASTER_PID=$(cat "$MM/master.pid" 2>/dev/null)
		(cd "$T" && runuser -u list -- mailman -C "$MMCFG" stop -q) >/dev/null 2>&1
		i=0
		while [ -n "$MASTER_PID" ] && [ $i -lt 300 ] &&
		    kill -0 "$MASTER_PID" 2>/dev/null &&
		    ! grep -q '^State:.*Z' "/proc/$MASTER_PID/status" 2>/dev/null; do
			sleep 0.1; i=$((i + 1))
		done
		# the master leads its own process group (setsid)
		[ -n "$MASTER_PID" ] && kill -0 "$MASTER_PID" 2>/dev/null &&
		    ! grep -q '^State:.*Z' "/proc/$MASTER_PID/status" 2>/dev/null &&
		    kill -KILL -- "-$MASTER_PID" 2>/dev/null
	fi
	[ -n "$SINK_PID" ] && kill "$SINK_PID" 2>/dev/null && wait "$SINK_PID" 2>/dev/null
	if { [ $fails -ne 0 ] || [ "${LISTGATE_E2E_LOG:-}" = 1 ]; }; then
		echo "# --- Postfix log ---"
		sed 's/^/# /' "$T/maillog" 2>/dev/null
		echo "# --- Mailman log ---"
		sed 's/^/# /' "$MM/logs/mailman.log" 2>/dev/null | tail -n 80
		echo "# --- Mailman's SMTP log ---"
		sed 's/^/# /' "$MM/logs/smtp.log" 2>/dev/null | tail -n 20
	fi
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

mkdir -p "$PF" "$Q" "$T/pfdata" "$T/bin" "$SINK" "$CONF/lists" "$MM" \
    "$T/mbox" "$T/var" || exit 99
chown postfix "$T/pfdata" || exit 99
chown list:list "$MM" "$T/var" || exit 99
chmod 1777 "$T/mbox"

# four free loopback ports: Postfix's SMTP, Mailman's LMTP and REST, the sink
set -- $("$PY" -c '
import socket
s = [socket.socket() for _ in range(4)]
for x in s:
    x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')
PORT=$1 LMTP=$2 REST=$3 SINKPORT=$4
[ -n "$SINKPORT" ] || exit 99
RPASS=$("$PY" -c 'import secrets; print(secrets.token_hex(12))')

# an SMTP client for loopback: inject.sh HOST:PORT [--] SENDER RECIPIENT < post
# (exit 0 when the server took the post, 75 otherwise)
cat > "$T/bin/inject.sh" <<'EOF'
#!/bin/bash
set -u
hp=$1
shift
[ "$1" = -- ] && shift
from=$1 to=$2
case "$from$to" in *$'\r'*|*$'\n'*|*'<'*|*'>'*) exit 75 ;; esac
exec 3<>"/dev/tcp/${hp%:*}/${hp#*:}" || exit 75
reply() {
	local line
	while IFS= read -r -t 30 line <&3; do
		line=${line%$'\r'}
		[ "${line:3:1}" = "-" ] && continue
		[ "${line:0:1}" = "$1" ] && return 0
		echo "inject: $line" >&2
		return 1
	done
	echo "inject: no reply" >&2
	return 1
}
send() { printf '%s\r\n' "$1" >&3; }
reply 2 || exit 75
send "HELO localhost"; reply 2 || exit 75
send "MAIL FROM:<$from>"; reply 2 || exit 75
send "RCPT TO:<$to>"; reply 2 || exit 75
send "DATA"; reply 3 || exit 75
sed -e 's/\r$//' -e 's/^\./../' -e 's/$/\r/' >&3
printf '.\r\n' >&3
reply 2 || exit 75
send "QUIT"
exit 0
EOF
chmod 755 "$T/bin/inject.sh"

# --- the SMTP sink for Mailman's outgoing mail --------------------------------------
"$PY" "$top_srcdir/tests/lmtpd.py" --smtp "$SINK" > "$T/sink.log" 2>&1 &
SINK_PID=$!
i=0
while [ ! -s "$SINK/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
SINKPORT=$(cat "$SINK/port" 2>/dev/null)
[ -n "$SINKPORT" ] || { echo "# the SMTP sink did not start"; exit 99; }

# --- Mailman: a private instance, as docs/mailman3.md says ------------------------------
cat > "$MMCFG" <<EOF
[mailman]
layout: e2e
site_owner: postmaster@example.org

[paths.e2e]
var_dir: $MM
# Debian's master and runner scripts
bin_dir: /usr/lib/mailman3/bin
pid_file: $MM/master.pid

[database]
class: mailman.database.sqlite.SQLiteDatabase
url: sqlite:///$MM/data/mailman.db

[webservice]
hostname: 127.0.0.1
port: $REST
admin_user: restadmin
admin_pass: $RPASS
workers: 1
configuration: $T/gunicorn.cfg

[mta]
incoming: mailman.mta.postfix.LMTP
outgoing: mailman.mta.deliver.deliver
lmtp_host: 127.0.0.1
lmtp_port: $LMTP
smtp_host: 127.0.0.1
smtp_port: $SINKPORT
# postmap for this Postfix instance (its main.cf is not /etc/postfix's)
configuration: $T/mailman-postfix.cfg
EOF
for r in in out pipeline command virgin; do
	printf '\n[runner.%s]\nsleep_time: 0.25s\n' "$r" >> "$MMCFG"
done
for r in archive bounces digest nntp retry task; do
	printf '\n[runner.%s]\nstart: no\n' "$r" >> "$MMCFG"
done
cat > "$T/mailman-postfix.cfg" <<EOF
[postfix]
postmap_command: /usr/sbin/postmap -c $PF
transport_file_type: hash
EOF
printf '[gunicorn]\ngraceful_timeout = 2\ntimeout = 60\n' > "$T/gunicorn.cfg"
chmod 644 "$T/gunicorn.cfg" "$T/mailman-postfix.cfg"
chown root:list "$MMCFG" && chmod 640 "$MMCFG"	# as Debian's mailman.cfg
mm() { (cd "$T" && runuser -u list -- mailman -C "$MMCFG" "$@"); }
rest() {	# rest METHOD PATH [key=value ...]: the status code; body in $T/rest.out
	m=$1 p=$2
	shift 2
	set -- $(for kv in "$@"; do printf -- '--data-urlencode %s ' "$kv"; done)
	curl -s -o "$T/rest.out" -w '%{http_code}' -u "restadmin:$RPASS" \
	    -X "$m" "$@" "http://127.0.0.1:$REST/3.1$p"
}
lmtp_banner() {
	bash -c "exec 3<>/dev/tcp/127.0.0.1/$LMTP && IFS= read -r -t 5 l <&3 &&
	    case \$l in 220*) exit 0 ;; esac; exit 1" 2>/dev/null
}

# Postfix's main.cf must be there before Mailman's postmap runs
cat > "$PF/main.cf" <<EOF
compatibility_level = 3.6
queue_directory = $Q
data_directory = $T/pfdata
mail_owner = postfix
setgid_group = postdrop
maillog_file = $T/maillog
maillog_file_prefixes = $T
myhostname = mx.example.org
mydomain = example.org
myorigin = example.org
mydestination = mod.example.org
alias_maps = texthash:$PF/aliases
alias_database =
inet_interfaces = loopback-only
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
relayhost =
default_transport = error:5.7.1 this test machine never relays
smtpd_relay_restrictions = permit_mynetworks, reject_unauth_destination
smtpd_recipient_restrictions = permit_mynetworks, reject
biff = no
smtputf8_enable = no
# --- Mailman 3 behind listgate (docs/mailman3.md) ---
recipient_delimiter = +
owner_request_special = no
unknown_local_recipient_reject_code = 550
transport_maps = hash:$PF/listgate_transport, hash:$MM/data/postfix_lmtp
local_recipient_maps = hash:$MM/data/postfix_lmtp, \$alias_maps
relay_domains = hash:$MM/data/postfix_domains
listgate_destination_recipient_limit = 1
listgatemod_destination_recipient_limit = 1
EOF

tm=$(date +%s%N)
mm start > "$T/mm-start.out" 2>&1
mrc=$?
i=0
ready=0
while [ $i -lt 600 ]; do
	code=$(curl -s -o /dev/null -w '%{http_code}' -u "restadmin:$RPASS" \
	    "http://127.0.0.1:$REST/3.1/system/versions" 2>/dev/null)
	if [ "$code" = 200 ] && lmtp_banner; then
		ready=1
		for r in command in lmtp out pipeline rest virgin; do
			grep -q " $r runner started\." "$MM/logs/mailman.log" 2>/dev/null ||
			    ready=0
		done
		[ $ready -eq 1 ] && break
	fi
	# no master 10 s after the start: it died (its log says why)
	if [ $i -ge 50 ]; then
		p=$(cat "$MM/master.pid" 2>/dev/null)
		[ -n "$p" ] && kill -0 "$p" 2>/dev/null || break
	fi
	sleep 0.2
	i=$((i + 1))
done
MASTER_PID=$(cat "$MM/master.pid" 2>/dev/null)
if [ $mrc -eq 0 ] && [ $ready -eq 1 ]; then
	ok "Mailman 3 started as list: REST, LMTP and its runners ready"
else
	bad "Mailman 3 started as list: REST, LMTP and its runners ready (start exit $mrc)"
	sed 's/^/# /' "$T/mm-start.out"
	exit 1
fi
echo "# Mailman start to ready: $(ms_since "$tm") ms"

# --- lists over REST ----------------------------------------------------------------
tm=$(date +%s%N)
r=0
[ "$(rest POST /domains mail_host=lists.example.org)" = 201 ] || r=1
for l in dev ann; do
	[ "$(rest POST /lists fqdn_listname=$l@lists.example.org)" = 201 ] || r=1
	[ "$(rest POST /members list_id=$l.lists.example.org \
	    subscriber=member@example.net pre_verified=true pre_confirmed=true \
	    pre_approved=true send_welcome_message=false)" = 201 ] || r=1
	[ "$(rest PATCH /lists/$l.lists.example.org/config \
	    send_welcome_message=false)" = 204 ] || r=1
done
# dev: Mailman takes what listgate passed or approved, from anyone
[ "$(rest PATCH /lists/dev.lists.example.org/config \
    default_member_action=accept default_nonmember_action=accept)" = 204 ] || r=1
rest GET /lists/dev.lists.example.org/config > /dev/null
grep -q '"default_nonmember_action": "accept"' "$T/rest.out" &&
    grep -q '"default_member_action": "accept"' "$T/rest.out" || r=1
rest GET /lists/ann.lists.example.org/config > /dev/null
grep -q '"default_nonmember_action": "hold"' "$T/rest.out" || r=1
check "REST: domain, lists dev and ann, member@example.net, dev accepts" test $r -eq 0
echo "# REST setup: $(ms_since "$tm") ms"
grep -q "^dev-request@lists.example.org *lmtp:\[127.0.0.1\]:$LMTP" "$MM/data/postfix_lmtp" &&
    [ -f "$MM/data/postfix_lmtp.db" ] && [ -f "$MM/data/postfix_domains.db" ] &&
    ok "Mailman wrote postfix_lmtp and ran its postmap_command (postmap -c)" ||
    bad "Mailman wrote postfix_lmtp and ran its postmap_command (postmap -c)"

# --- listgate ---------------------------------------------------------------------------
cat > "$CONF/listgate.conf" <<EOF
tokens_dir = tokens
mta = postfix
database = "host=$PGHOST port=$PGPORT user=$PGUSER dbname=$PGDATABASE connect_timeout=3"
secret_file = $T/var/secret
EOF
cat > "$CONF/lists/dev.conf" <<EOF
ham_cutoff = 0.5
spam_cutoff = 0.9
deliver = lmtp:127.0.0.1:$LMTP dev@lists.example.org
release = lmtp:127.0.0.1:$LMTP dev@lists.example.org
moderators = mod@mod.example.org
moderation_address = dev-moderate@lists.example.org
notify = $T/bin/inject.sh 127.0.0.1:$PORT dev-owner@lists.example.org {moderator}
EOF
cat > "$CONF/lists/ann.conf" <<EOF
ham_cutoff = 0.5
spam_cutoff = 0.9
deliver = lmtp:127.0.0.1:$LMTP ann@lists.example.org
release = /usr/bin/mailman -C $MMCFG inject -q pipeline ann@lists.example.org
EOF
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
lg migrate >/dev/null || { echo "# migrate failed"; exit 99; }
for l in dev ann; do
	lg train --quiet --list $l --spam "$DATA"/spam[1-4].eml &&
	    lg train --quiet --list $l --ham "$DATA"/ham[1-4].eml ||
	    { echo "# training failed"; exit 99; }
done
chmod -R a+rX,go-w "$CONF"
chown -R list "$CONF/tokens" || exit 99
runuser -u list -- "$LISTGATE" --config "$CONF" init >/dev/null ||
    { echo "# listgate init as list failed"; exit 99; }
lg config check --list dev >/dev/null && lg config check --list ann >/dev/null ||
    { echo "# config check failed"; exit 99; }

# --- the private Postfix ---------------------------------------------------------------
cat > "$PF/listgate_transport" <<EOF
dev@lists.example.org           listgate:dev
ann@lists.example.org           listgate:ann
dev-moderate@lists.example.org  listgatemod:
EOF
postmap -c "$PF" "hash:$PF/listgate_transport" || exit 99
cat > "$PF/aliases" <<EOF
mod	$T/mbox/mod
EOF
cat > "$PF/master.cf" <<EOF
127.0.0.1:$PORT inet n - n - - smtpd
pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
local     unix  -       n       n       -       -       local
lmtp      unix  -       -       n       -       -       lmtp
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
listgate  unix  -       n       n       -       10      pipe
  flags=Rq user=list null_sender= argv=$LISTGATE --config $CONF filter --mta postfix --list \${nexthop} -f \${sender} -- \${recipient}
listgatemod unix -      n       n       -       10      pipe
  flags=Rq user=list null_sender= argv=$LISTGATE --config $CONF moderate --mta postfix -f \${sender} -- \${recipient}
EOF
postfix -c "$PF" check >/dev/null 2>&1 ||
    { echo "# postfix check failed"; sed 's/^/# /' "$T/maillog"; exit 99; }
postfix -c "$PF" start >/dev/null 2>&1 ||
    { echo "# postfix start failed"; sed 's/^/# /' "$T/maillog"; exit 99; }
i=0
until bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT" 2>/dev/null || [ $i -ge 50 ]; do
	sleep 0.2; i=$((i + 1))
done
bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT" 2>/dev/null &&
    ok "private Postfix listens on 127.0.0.1:$PORT" ||
    { bad "private Postfix listens on 127.0.0.1:$PORT"; exit 1; }

# --- helpers ------------------------------------------------------------------------------
inject() {	# inject FILE SENDER RECIPIENT: SMTP to the private Postfix
	"$T/bin/inject.sh" "127.0.0.1:$PORT" "$2" "$3" < "$1"
}
post() {	# post FIXTURE MSGID > file: with its own Message-ID and a Date
	echo "Date: Thu, 03 Dec 2026 10:00:00 +0000"
	sed -e "s/^Message-ID: .*/Message-ID: <$2>/" -e '/^Date: /d' "$DATA/$1"
}
# the sink's copy of Message-ID $1 for recipient $2 (its file name)
sink_for() {
	for f in $(grep -il "^Message-ID: <$1>" "$SINK"/msg.* 2>/dev/null); do
		grep -qi "^RCPT TO:<$2>" "$SINK/env.${f##*.}" && { echo "$f"; return 0; }
	done
	return 1
}
wait_sink() {	# wait_sink MSGID RCPT [SECONDS]
	i=0
	while [ $i -lt $((${3:-60} * 5)) ]; do
		sink_for "$1" "$2" >/dev/null && return 0
		sleep 0.2; i=$((i + 1))
	done
	return 1
}
wait_log() {	# wait_log PATTERN SECONDS
	i=0
	while [ $i -lt $(($2 * 5)) ]; do
		grep -q "$1" "$T/maillog" 2>/dev/null && return 0
		sleep 0.2; i=$((i + 1))
	done
	return 1
}
sql() { psql -X -A -t -q -c "$1" 2>/dev/null; }
held_id() {	# the id of the held post with Message-ID $1
	sql "SELECT id FROM held_posts WHERE message_id = '<$1>' AND status = 'held'"
}
wait_held() {
	i=0
	until [ -n "$(held_id "$1")" ] || [ $i -ge 150 ]; do sleep 0.2; i=$((i + 1)); done
	[ -n "$(held_id "$1")" ]
}
mm_held() {	# posts in Mailman's own hold queue of list $1
	rest GET "/lists/$1.lists.example.org/held" > /dev/null
	sed -n 's/.*"total_size": *\([0-9]*\).*/\1/p' "$T/rest.out"
}
# the decoded text of a message (its first text/plain part), as UTF-8
text_of() {
	"$PY" -c '
import email, email.policy, sys
m = email.message_from_binary_file(open(sys.argv[1], "rb"),
                                   policy=email.policy.default)
p = m.get_body(preferencelist=("plain",))
sys.stdout.write(p.get_content() if p is not None else "")' "$1"
}

# --- a ham post: Postfix, listgate, LMTP, Mailman, the member ------------------------------
tm=$(date +%s%N)
post ham-test.eml mm3-ham@test > "$T/ham.eml"
inject "$T/ham.eml" alice@example.org dev@lists.example.org ||
    bad "Postfix accepts a post for dev@"
wait_sink mm3-ham@test member@example.net &&
    ok "a ham post reaches the member through listgate (LMTP) and Mailman" ||
    bad "a ham post reaches the member through listgate (LMTP) and Mailman"
echo "# ham post, SMTP to Postfix to the member's copy at the sink: $(ms_since "$tm") ms"
grep -q "to=<dev@lists.example.org>, relay=listgate, .*status=sent" "$T/maillog" &&
    ok "... Postfix piped it to listgate" || bad "... Postfix piped it to listgate"
f=$(sink_for mm3-ham@test member@example.net)
[ -n "$f" ] && grep -q "^Subject: \[Dev\] Re: Release candidate" "$f" &&
    grep -qi "^RCPT TO:<member@example.net>" "$SINK/env.${f##*.}" &&
    grep -q "^List-Id: <dev.lists.example.org>" "$f" &&
    ok "... as Mailman's list copy ([Dev] prefix, List-Id)" ||
    bad "... as Mailman's list copy ([Dev] prefix, List-Id)"
[ -n "$f" ] && text_of "$f" | grep -q "arm64 linker error" &&
    ok "... with the body" || bad "... with the body"

# --- a Latin-1 post (mailman inject cannot read it) -----------------------------------------
{
	echo "Date: Thu, 03 Dec 2026 10:05:00 +0000"
	echo "From: Erin Reviewer <erin@project.example.org>"
	echo "To: dev@lists.example.org"
	echo "Subject: Re: Release candidate build fails on arm64"
	echo "Message-ID: <mm3-latin1@test>"
	echo "MIME-Version: 1.0"
	echo "Content-Type: text/plain; charset=iso-8859-1"
	echo "Content-Transfer-Encoding: 8bit"
	echo
	echo "I reviewed the patch for the arm64 linker error; the test suite passes"
	printf 'on the branch now. Fran\347ois agrees: na\357ve caf\351 r\351sum\351.\n'
	echo "The release candidate can be tagged after the parser fix is merged."
} > "$T/latin1.eml"
tm=$(date +%s%N)
inject "$T/latin1.eml" erin@project.example.org dev@lists.example.org ||
    bad "Postfix accepts the Latin-1 post"
wait_sink mm3-latin1@test member@example.net &&
    ok "a Latin-1 post reaches the member" || bad "a Latin-1 post reaches the member"
f=$(sink_for mm3-latin1@test member@example.net)
[ -n "$f" ] && text_of "$f" | grep -q "Fran$(printf '\303\247')ois agrees: na$(printf '\303\257')ve caf$(printf '\303\251') r$(printf '\303\251')sum$(printf '\303\251')" &&
    ok "... its text intact (decoded from what Mailman sent)" ||
    bad "... its text intact (decoded from what Mailman sent)"
echo "# Latin-1 post to the member: $(ms_since "$tm") ms"

# --- a sender whose local part needs quotes ---------------------------------------------------
# (pipe(8) with flags=q hands it to listgate quoted, "a b"@example.net:
# MAIL FROM to Mailman must name that mailbox, not quote it a second time)
post ham-test.eml mm3-quoted@test > "$T/quoted.eml"
inject "$T/quoted.eml" '"a b"@example.net' dev@lists.example.org ||
    bad "Postfix accepts a post from \"a b\"@example.net"
wait_sink mm3-quoted@test member@example.net &&
    ok "a post from \"a b\"@example.net reaches the member" ||
    bad "a post from \"a b\"@example.net reaches the member"
f=$(sink_for mm3-quoted@test member@example.net)
mf=$([ -n "$f" ] && tr -d '\r' < "$f" | sed -n 's/^X-MailFrom: //p' | head -n 1)
check "... Mailman got MAIL FROM:<\"a b\"@example.net> (X-MailFrom: $mf)" \
    test "$mf" = '"a b"@example.net'

# --- dev-request@: Mailman's own address, never listgate's ------------------------------------
tm=$(date +%s%N)
printf 'From: sender@example.com\nTo: dev-request@lists.example.org\nSubject: help\nMessage-ID: <mm3-request@test>\n\nhelp\n' \
    > "$T/request.eml"
inject "$T/request.eml" sender@example.com dev-request@lists.example.org ||
    bad "Postfix accepts a post for dev-request@"
i=0
reply=
while [ $i -lt 300 ] && [ -z "$reply" ]; do
	for f in $(grep -l "^Subject: The results of your email commands" "$SINK"/msg.* 2>/dev/null); do
		grep -qi "^RCPT TO:<sender@example.com>" "$SINK/env.${f##*.}" && reply=$f
	done
	[ -z "$reply" ] && sleep 0.2
	i=$((i + 1))
done
[ -n "$reply" ] && ok "dev-request@ reaches Mailman: its command runner answers the sender" ||
    bad "dev-request@ reaches Mailman: its command runner answers the sender"
grep -q "to=<dev-request@lists.example.org>, relay=127.0.0.1\[127.0.0.1\]:$LMTP, .*status=sent" "$T/maillog" &&
    ok "... straight from Postfix to Mailman's LMTP (postfix_lmtp)" ||
    bad "... straight from Postfix to Mailman's LMTP (postfix_lmtp)"
grep "to=<dev-request@" "$T/maillog" | grep -q "relay=listgate" &&
    bad "... never through listgate" || ok "... never through listgate"
sink_for mm3-request@test member@example.net >/dev/null &&
    bad "... and not sent to the members" || ok "... and not sent to the members"
echo "# dev-request@ to Mailman's answer: $(ms_since "$tm") ms"

# --- a spam post: held, a notice, approved by mail, through Mailman to the member --------------
tm=$(date +%s%N)
post spam-test.eml mm3-spam@test > "$T/spam.eml"
inject "$T/spam.eml" spammer@example.net dev@lists.example.org ||
    bad "Postfix accepts the spam post"
wait_held mm3-spam@test && ok "a spam post is held by listgate" ||
    bad "a spam post is held by listgate"
sleep 1
sink_for mm3-spam@test member@example.net >/dev/null &&
    bad "... and not delivered" || ok "... and not delivered"
i=0
until grep -q "^Reply-To: <dev-moderate+approve-" "$T/mbox/mod" 2>/dev/null ||
    [ $i -ge 150 ]; do sleep 0.2; i=$((i + 1)); done
grep -q "^Subject: \[dev\] held: " "$T/mbox/mod" 2>/dev/null &&
    ok "the hold notice reaches the moderator's mailbox" ||
    bad "the hold notice reaches the moderator's mailbox"
approve=$(sed -n 's/^Reply-To: <\(dev-moderate+approve-[0-9]*-[a-z0-9]*@lists.example.org\)>$/\1/p' \
    "$T/mbox/mod" | head -1)
[ -n "$approve" ] && ok "the notice's Reply-To is the approve address" ||
    bad "the notice's Reply-To is the approve address"
printf 'From: Moderator <mod@mod.example.org>\nTo: %s\nSubject: Re: held\n\nok\n' \
    "$approve" > "$T/reply.eml"
ta=$(date +%s%N)
inject "$T/reply.eml" mod@mod.example.org "$approve" &&
    ok "Postfix takes the moderator's reply over SMTP" ||
    bad "Postfix takes the moderator's reply over SMTP"
wait_sink mm3-spam@test member@example.net &&
    ok "the approved post reaches the member through Mailman" ||
    bad "the approved post reaches the member through Mailman"
echo "# reply to the approve address to the member's copy: $(ms_since "$ta") ms"
wait_log "relay=listgatemod, .*status=sent" 5 &&
    ok "... Postfix piped the reply to listgate moderate" ||
    bad "... Postfix piped the reply to listgate moderate"
[ "$(sql "SELECT status || ' ' || decided_by FROM held_posts WHERE message_id = '<mm3-spam@test>'")" = \
    "approved mod@mod.example.org" ] && ok "... approved, by the reply's From" ||
    bad "... approved, by the reply's From"
f=$(sink_for mm3-spam@test member@example.net)
[ -n "$f" ] && text_of "$f" | grep -q "Cheap viagra and discount meds" &&
    ok "... with its body" || bad "... with its body"
[ "$(mm_held dev)" = 0 ] && ok "Mailman's own hold queue for dev is empty" ||
    bad "Mailman's own hold queue for dev is empty ($(mm_held dev))"
echo "# spam post held, notice, reply, release to the member: $(ms_since "$tm") ms"

# --- a post Mailman refuses (501: MIME defects): held with Mailman's reply ----------------------
post ham-test.eml mm3-defect@test |
    sed 's|^Content-Type: text/plain; charset=utf-8|Content-Type: multipart/mixed|' > "$T/defect.eml"
inject "$T/defect.eml" alice@example.org dev@lists.example.org ||
    bad "Postfix accepts the defective post"
wait_held mm3-defect@test &&
    ok "a post Mailman refuses for good (5xx) is held, not bounced" ||
    bad "a post Mailman refuses for good (5xx) is held, not bounced"
note=$(sql "SELECT note FROM held_posts WHERE message_id = '<mm3-defect@test>'")
case $note in
"deliver refused the post: lmtp:127.0.0.1:$LMTP: end of data: 501 Message has defects")
	ok "... its note is Mailman's reply" ;;
*)	bad "... its note is Mailman's reply (got: $note)" ;;
esac
grep "to=<dev@lists.example.org>" "$T/maillog" | grep -q "status=bounced" &&
    bad "... Postfix bounced nothing" || ok "... Postfix bounced nothing"

# --- ann: Mailman holds non-members; release with mailman inject -q pipeline as list ----------------
tm=$(date +%s%N)
post spam-test.eml mm3-ann@test | sed 's/^To: .*/To: ann@lists.example.org/' > "$T/ann.eml"
inject "$T/ann.eml" spammer@example.net ann@lists.example.org ||
    bad "Postfix accepts a spam post for ann@"
wait_held mm3-ann@test && ok "ann: a spam post is held by listgate" ||
    bad "ann: a spam post is held by listgate"
id=$(held_id mm3-ann@test)
(cd "$T" && lg approve "$id") > "$T/approve-root.out" 2>&1
check "ann: approve as root cannot run mailman inject (Mailman refuses root)" \
    test $? -ne 0
grep -q "run as root" "$T/approve-root.out" && ok "... Mailman says so" ||
    { bad "... Mailman says so"; sed 's/^/# /' "$T/approve-root.out"; }
check "... the post stays held" test "$(held_id mm3-ann@test)" = "$id"
(cd "$T" && runuser -u list -- "$LISTGATE" --config "$CONF" approve "$id") \
    > "$T/approve-list.out" 2>&1
check "ann: approve as list releases it with mailman inject -q pipeline" test $? -eq 0
wait_sink mm3-ann@test member@example.net &&
    ok "... past Mailman's non-member hold, to the member" ||
    bad "... past Mailman's non-member hold, to the member"
[ "$(mm_held ann)" = 0 ] && ok "... nothing in Mailman's hold queue for ann" ||
    bad "... nothing in Mailman's hold queue for ann ($(mm_held ann))"
echo "# ann: held, approve as list, inject to the member: $(ms_since "$tm") ms"
# a Latin-1 post: inject cannot read it, the approval fails and it stays held
{
	# (another spam than the one just approved: approving trained that
	# one as ham)
	post spam2.eml mm3-ann-latin1@test | sed \
	    -e 's/^To: .*/To: ann@lists.example.org/' \
	    -e 's/^Content-Type: .*/Content-Type: text\/plain; charset=iso-8859-1/'
	printf 'Offre sp\351ciale, caf\351 gratuit!\n'
} > "$T/ann-latin1.eml"
inject "$T/ann-latin1.eml" spammer@example.net ann@lists.example.org ||
    bad "Postfix accepts a Latin-1 spam post for ann@"
if wait_held mm3-ann-latin1@test; then
	id=$(held_id mm3-ann-latin1@test)
	(cd "$T" && runuser -u list -- "$LISTGATE" --config "$CONF" approve "$id") \
	    > "$T/approve-latin1.out" 2>&1
	rc=$?
	[ $rc -ne 0 ] && [ "$(held_id mm3-ann-latin1@test)" = "$id" ] &&
	    ok "ann: a Latin-1 post cannot be released through mailman inject (stays held)" ||
	    bad "ann: a Latin-1 post cannot be released through mailman inject (stays held)"
	grep -q "UnicodeDecodeError" "$T/approve-latin1.out" &&
	    ok "... inject's UnicodeDecodeError" ||
	    { bad "... inject's UnicodeDecodeError"; sed 's/^/# /' "$T/approve-latin1.out"; }
else
	bad "ann: a Latin-1 spam post is held"
fi

n_shunt=$(ls "$MM/queue/shunt" 2>/dev/null | wc -l)
check "nothing in Mailman's shunt queue" test "$n_shunt" -eq 0
echo "# the whole test (after installing): $(ms_since "$T0") ms"
echo "1..$n"
[ $fails -eq 0 ]

#!/bin/sh
# config_check.sh - `listgate config check`: effective settings, FILE:LINE
# errors, exit status, one moderation address per list
#
# Works in a private temporary configuration directory removed at the
# end; never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-config-check.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
mkdir -p "$CONF/lists" || exit 99

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), pg_part, lock_file
run() { "$@" > "$T/out" 2> "$T/err"; rc=$?; }
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }

run lg config --help
check "config --help exits 0" test "$rc" -eq 0
check "config --help prints usage" grep -q "usage: listgate" "$T/out"
run lg config
check "config without an action is a usage error" test "$rc" -eq 2
run lg config frobnicate
check "config with an unknown action is a usage error" test "$rc" -eq 2

# the table of keys: needs no configuration, one line per key
tab=$(printf '\t')
run "$LISTGATE" --allow-root --config "$T/nonexistent" config keys
check "config keys exits 0 without a configuration" test "$rc" -eq 0
check "config keys names its columns" \
    grep -qx "# name${tab}file${tab}type${tab}default${tab}range${tab}description" "$T/out"
check "config keys: six fields a line" \
    awk -F "$tab" '!/^#/ && NF != 6 { bad = 1 } END { exit bad }' "$T/out"
check "config keys: a list's timeout defaults to the global one" \
    grep -q "^timeout${tab}list${tab}integer${tab}the global timeout${tab}\[1, 3600\]${tab}" "$T/out"
check "config keys: robx strictly between 0 and 1" \
    grep -q "^robx${tab}list${tab}number${tab}0.6${tab}(0, 1)${tab}" "$T/out"
check "config keys: on_error's choices" \
    grep -q "^on_error${tab}list${tab}choice${tab}defer${tab}defer|pass${tab}" "$T/out"
run lg config keys extra
check "config keys with an argument is a usage error" test "$rc" -eq 2

# no files at all: every default is printed
run lg config check --list dev
check "an empty directory checks fine" test "$rc" -eq 0
for kv in "mta = qmail" "lock_wait_ms = 5000" "timeout = 300" \
    "log_facility = mail" "ham_cutoff = 0.3" "spam_cutoff = 0.9999" \
    "discard_cutoff = off" "on_error = defer" "hold_expiry_days = 14" \
    "max_scan_bytes = 1048576" "max_post_bytes = 67108864"; do
	check "default printed: $kv" grep -qx "$kv" "$T/out"
done
check "tokens_dir defaults to DIR/tokens" grep -q "^tokens_dir = .*/conf/tokens$" "$T/out"
check "an unset database is said to be unset" grep -q "^# database (not set)" "$T/out"
check "... and sync_database too (the journal read from database)" \
    grep -q "^# sync_database (not set)" "$T/out"
check "a list without a file says so" grep -q "lists/dev.conf (no file: defaults)" "$T/out"

# every list file is checked without --list
cat > "$CONF/listgate.conf" <<'EOF'
# global
mta = postfix
database = "host=/run/postgresql dbname=lg password=hunter2"
sync_database = "host=standby.example.org dbname=lg password=hunter3"
EOF
cat > "$CONF/lists/good.conf" <<'EOF'
ham_cutoff = 0.3
deliver = /usr/sbin/sendmail -i -f {sender} -- "dev list@example.org"
moderators = a@example.org, b@example.org
EOF
run lg config check
check "good files check fine" test "$rc" -eq 0
check "settings from the files are printed" grep -qx "ham_cutoff = 0.3" "$T/out"
check "templates print quoted as needed" \
    grep -qx 'deliver = /usr/sbin/sendmail -i -f {sender} -- "dev list@example.org"' "$T/out"
check "the password is never printed" sh -c "! grep -q hunter2 '$T/out'"
check "... nor sync_database's" sh -c "! grep -q hunter3 '$T/out'"
check "sync_database is printed" \
    grep -q "^sync_database = \".*host='standby.example.org'" "$T/out"
check "mta from listgate.conf" grep -qx "mta = postfix" "$T/out"

# the printed settings load back
sed -n '/^# lists\/good.conf/,$p' "$T/out" | sed 1d > "$CONF/lists/again.conf"
run lg config check --list again
check "printed list settings load back" test "$rc" -eq 0
check "and say the same" grep -qx 'deliver = /usr/sbin/sendmail -i -f {sender} -- "dev list@example.org"' "$T/out"

# errors: FILE:LINE on stderr, exit 1, other lists still checked
printf '\n# c\nspam_cutoff = 1.5\n' > "$CONF/lists/bad.conf"
run lg config check
check "a bad list file fails the check" test "$rc" -eq 1
check "the error names file and line" grep -q "lists/bad.conf:3: spam_cutoff: 1.5 is out of range" "$T/err"
check "the good lists are still printed" grep -q "^# lists/good.conf" "$T/out"
run lg config check --list good
check "--list checks only that list" test "$rc" -eq 0
printf 'deliver = sendmail {recipient}\n' > "$CONF/lists/bad.conf"
run lg config check --list bad
check "an unsafe template fails" test "$rc" -eq 1
check "and says so" grep -q "lists/bad.conf:1: deliver: unsafe template" "$T/err"
# an envelope value that could begin an option: refused unless `--' or an
# option taking it as its value comes first
printf '# x\nrelease = /usr/sbin/sendmail {recipient}\n' > "$CONF/lists/bad.conf"
run lg config check --list bad
check "a placeholder alone as an argument fails" test "$rc" -eq 1
check "naming file, line and the placeholder" grep -q \
    "lists/bad.conf:2: release: unsafe template: {recipient} begins argument 1, where a value starting with '-' would be read as an option" "$T/err"
printf 'release = /usr/sbin/sendmail -i -f {sender} -- {recipient}\n' > "$CONF/lists/bad.conf"
run lg config check --list bad
check "after -f and after -- it is accepted" test "$rc" -eq 0
rm -f "$CONF/lists/bad.conf"
# a bad name on the command line is a usage error (2), as for every
# other command's --list (held, stats, sync, tune ...); it was 1, the
# status of a configuration error
run lg config check --list ../x
check "a bad list name is a usage error (2)" test "$rc" -eq 2
check "... naming it" grep -q "listgate config: bad list name '../x' (want" "$T/err"
run lg config --list Dev check
check "... also given before the action" test "$rc" -eq 2
run lg config check --list nosuch
check "a good name without a file of its own is checked with the defaults (0)" \
    test "$rc" -eq 0
: > "$CONF/lists/UPPER.conf"
run lg config check
check "a list file with a bad name fails the check" test "$rc" -eq 1
check "and is named" grep -q "UPPER.conf: bad list name" "$T/err"
rm -f "$CONF/lists/UPPER.conf"
# expire_action = remind without what notices need: expire would fail
printf 'expire_action = remind\nmoderators = a@example.org\n' > "$CONF/lists/rem.conf"
run lg config check --list rem
check "expire_action = remind without moderation by mail: a warning (exit 0)" \
    test "$rc" -eq 0
check "... naming the file and the keys not set" grep -q \
    "warning: $CONF/lists/rem.conf: expire_action = remind sends reminders through the hold notices, which need moderators, moderation_address and notify (not set: moderation_address notify)" "$T/err"
rm -f "$CONF/lists/rem.conf"
# no deliver under mta = postfix: passing is delivering there, and filter
# defers every post it would pass (the list loads fine); a warning (exit
# 0: the pipe service's --mta qmail would make it a qmail list)
printf 'ham_cutoff = 0.3\n' > "$CONF/lists/nodel.conf"
run lg config check --list nodel
check "no deliver under mta = postfix: a warning (exit 0)" test "$rc" -eq 0
check "... naming the list's file and listgate.conf's mta line" grep -qF \
    "warning: $CONF/lists/nodel.conf: deliver is not set, and under mta = postfix ($CONF/listgate.conf:2) passing a post is delivering it: filter defers every post of the list it would pass" "$T/err"
run lg config check --list nofile
check "... also for a list without a file of its own" grep -qF \
    "warning: $CONF/lists/nofile.conf (no file: defaults): deliver is not set" "$T/err"
run lg config check --list good
check "... none for a list with deliver" sh -c \
    "test $rc -eq 0 && ! grep -q 'deliver is not set' '$T/err'"
rm -f "$CONF/lists/nodel.conf"
# a moderator no hold notice can go to (the outbox drops every notice to
# it): "a; b" made the moderator "a;", "<c>" one with its brackets.  It
# loads (address literals did before); a warning naming file, line and
# address (exit 0)
printf 'deliver = /bin/true\n# x\nmoderators = alice@example.org; bob@example.org <carol@example.org> dave@[192.0.2.1]\n' > "$CONF/lists/semi.conf"
run lg config check --list semi
check "a moderator no notice can go to: a warning (exit 0)" test "$rc" -eq 0
check "... naming file, line and the address, and saying how to separate them" grep -qF \
    "warning: $CONF/lists/semi.conf:3: moderators: no hold notice can go to \`alice@example.org;' (a notice goes only to an address of ASCII without any of <>()[];:\\): the outbox drops every notice to it; addresses are separated by commas or blanks, without ; or <...>" "$T/err"
check "... for <carol@example.org> too" grep -qF \
    "no hold notice can go to \`<carol@example.org>'" "$T/err"
check "... and an address literal" grep -qF \
    "no hold notice can go to \`dave@[192.0.2.1]'" "$T/err"
check "... not for bob@example.org" sh -c "! grep -qF 'go to \`bob@' '$T/err'"
rm -f "$CONF/lists/semi.conf"
# moderators without release: approving is releasing, and every approval
# fails (approve, web, a reply), leaving the post held; a warning (exit 0)
printf 'deliver = /bin/true\nmoderators = a@example.org\n' > "$CONF/lists/norel.conf"
run lg config check --list norel
check "moderators without release: a warning (exit 0)" test "$rc" -eq 0
check "... naming the file and saying no post can be approved" grep -qF \
    "warning: $CONF/lists/norel.conf: moderators are set but release is not: no post of the list can be approved" "$T/err"
printf 'release = /bin/true\n' >> "$CONF/lists/norel.conf"
run lg config check --list norel
check "... none with release" sh -c "test $rc -eq 0 && ! grep -q warning '$T/err'"
rm -f "$CONF/lists/norel.conf"
# notify sending notices from the held post's (forged) envelope sender
# (with a secret_file of its own: a list that sends notices without one
# is an error, below)
cp "$CONF/listgate.conf" "$T/global.save" || exit 99
{ od -An -tx1 -N32 /dev/urandom | tr -d ' \n'; echo; } > "$T/nf.secret" &&
    chmod 600 "$T/nf.secret" || exit 99
printf 'secret_file = %s/nf.secret\n' "$T" >> "$CONF/listgate.conf"
for how in '-f {sender}' '-r {sender}' '-f{sender}' '--from={sender}'; do
	printf 'deliver = /bin/true\nrelease = /bin/true\nmoderators = a@example.org\nmoderation_address = dev-moderate@example.org\nnotify = /usr/sbin/sendmail -i %s -- {moderator}\n' "$how" > "$CONF/lists/nf.conf"
	run lg config check --list nf
	check "notify with $how: a warning (exit 0)" sh -c "test $rc -eq 0 &&
	    grep -q 'warning: $CONF/lists/nf.conf: notify sends the notices from the held post.s envelope sender' '$T/err'"
done
printf 'deliver = /bin/true\nrelease = /bin/true\nmoderators = a@example.org\nmoderation_address = dev-moderate@example.org\nnotify = /usr/sbin/sendmail -i -f dev-owner@example.org -- {moderator}\n' > "$CONF/lists/nf.conf"
run lg config check --list nf
check "... none with the list's own address" sh -c "test $rc -eq 0 && ! grep -q warning '$T/err'"
rm -f "$CONF/lists/nf.conf"
mv "$T/global.save" "$CONF/listgate.conf" || exit 99
# one post's evidence outlasting the filters' wait for the token file:
# no warning (sync, train and rebuild gather it before they take the
# file, tests/evidence_lock.sh)
cp "$CONF/listgate.conf" "$T/global.save" || exit 99
printf 'lock_wait_ms = 1000\n' >> "$CONF/listgate.conf"
printf 'deliver = /bin/true\nmember_check = /bin/true\nmember_check_ms = 3000\n' > "$CONF/lists/ev.conf"
run lg config check --list ev
check "member_check_ms past lock_wait_ms: no warning (exit 0)" sh -c "test $rc -eq 0 && ! grep -q warning '$T/err'"
rm -f "$CONF/lists/ev.conf"
mv "$T/global.save" "$CONF/listgate.conf" || exit 99
# a timeout at or past Postfix's time limit (command_time_limit, 1000 s):
# pipe(8) kills listgate and bounces the post before the watchdog can
# defer it.  A warning naming FILE:LINE and what to raise (exit 0:
# main.cf may have raised it already); under qmail none
cp "$CONF/listgate.conf" "$T/global.save" || exit 99
printf 'timeout = 1200\n' >> "$CONF/listgate.conf"
tline=$(grep -c '' "$CONF/listgate.conf")
printf 'ham_cutoff = 0.3\n\ntimeout = 1000\ndeliver = /bin/true\n' > "$CONF/lists/slow.conf"
printf 'timeout = 999\n' > "$CONF/lists/quick.conf"
run lg config check --list slow
check "timeout = 1200 in listgate.conf under mta = postfix: a warning (exit 0)" \
    test "$rc" -eq 0
check "... naming file and line" grep -q \
    "warning: $CONF/listgate.conf:$tline: timeout = 1200 under mta = postfix: Postfix's pipe(8) kills a command at its time limit" "$T/err"
check "... and the limit to raise instead" grep -q \
    "listgate_time_limit = 1260s and listgatemod_time_limit = 1260s in main.cf" "$T/err"
check "a list's own timeout = 1000: a warning naming its file and line" grep -q \
    "warning: $CONF/lists/slow.conf:3: timeout = 1000 under mta = postfix" "$T/err"
run lg config check --list quick
check "a list's timeout = 999: none of its own" sh -c \
    "test $rc -eq 0 && ! grep -q 'quick.conf.*timeout' '$T/err'"
mv "$T/global.save" "$CONF/listgate.conf" || exit 99
run lg config check --list slow
check "... listgate.conf's default timeout: no warning of it" sh -c \
    "test $rc -eq 0 && ! grep -qF '$CONF/listgate.conf' '$T/err'"
sed 's/^mta = postfix$/mta = qmail/' "$CONF/listgate.conf" > "$T/global.q"
cp "$CONF/listgate.conf" "$T/global.save" || exit 99
{ cat "$T/global.q"; printf 'timeout = 3600\n'; } > "$CONF/listgate.conf"
run lg config check --list slow
check "timeout = 3600 under mta = qmail: no warning" sh -c \
    "test $rc -eq 0 && ! grep -q 'timeout' '$T/err'"
mv "$T/global.save" "$CONF/listgate.conf" || exit 99
rm -f "$CONF/lists/slow.conf" "$CONF/lists/quick.conf"
# two lists with one moderation address and delimiter: the replies to it
# reach one list only, so the check fails, naming both files
printf 'moderation_address = dev-moderate@lists.example.org\n' > "$CONF/lists/shared1.conf"
printf '# ops\nmoderation_address = Dev-Moderate@Lists.Example.org\n' > "$CONF/lists/shared2.conf"
run lg config check
check "a moderation_address shared by two lists fails the check" test "$rc" -eq 1
check "naming both files, the address and the delimiter" grep -q \
    "lists/shared1.conf and .*/lists/shared2.conf: both lists have moderation_address dev-moderate@lists.example.org with recipient_delimiter +" "$T/err"
run lg config check --list shared2
check "... with --list too" test "$rc" -eq 1
check "... naming the other list's file" grep -q "lists/shared1.conf and .*/lists/shared2.conf" "$T/err"
run lg config check --list good
check "... the other lists still check fine" test "$rc" -eq 0
echo 'recipient_delimiter = -' >> "$CONF/lists/shared2.conf"
run lg config check
check "the same address with another delimiter is fine" test "$rc" -eq 0
rm -f "$CONF/lists/shared1.conf" "$CONF/lists/shared2.conf"
# a moderation_address whose action addresses (LOCAL+approve-ID-COOKIE@
# DOMAIN) would outgrow the 320 bytes `listgate moderate' takes: 264
# bytes check fine, 300 fail, naming the file, the line and the limit
long=$(printf '%0246d' 0 | tr 0 m)@lists.example.org
printf '# long\nmoderation_address = %s\n' "$long" > "$CONF/lists/long.conf"
run lg config check --list long
check "a moderation_address of 264 bytes checks fine" test "$rc" -eq 0
long=$(printf '%0282d' 0 | tr 0 m)@lists.example.org
printf '# long\nmoderation_address = %s\n' "$long" > "$CONF/lists/long.conf"
run lg config check --list long
check "one of 300 bytes fails the check" test "$rc" -eq 1
check "naming the file, the line and the longest that works" grep -q \
    "lists/long.conf:2: moderation_address: \`m*\.\.\.' is too long (300 bytes; at most 264, whatever the recipient_delimiter: an action address" "$T/err"
rm -f "$CONF/lists/long.conf"
# a database libpq cannot parse: config check says so, naming the file
# and the key; neither it nor a command that connects shows the
# password, which libpq's parse errors quote
mkdir -p "$T/pwconf/lists" || exit 99
printf 'database = postgresql://u:hunter2%%zz@db.example.org/lg\nsync_database = "host=db2 password=hunter3 dbname"\n' \
    > "$T/pwconf/listgate.conf"
run "$LISTGATE" --allow-root --config "$T/pwconf" config check
check "a database that does not parse fails the check" test "$rc" -eq 1
check "... naming listgate.conf and the key" grep -q \
    "pwconf/listgate.conf: database: the connection string does not parse: invalid percent-encoded token" "$T/err"
check "... and sync_database" grep -q \
    "pwconf/listgate.conf: sync_database: the connection string does not parse: missing \"=\" after" "$T/err"
check "... never showing the passwords" \
    sh -c "! grep -q hunter '$T/out' && ! grep -q hunter '$T/err'"
for c in "migrate" "migrate --status" "held" "approve 1" "show 1" "sync"; do
	run "$LISTGATE" --allow-root --config "$T/pwconf" $c
	check "$c with it: fails (exit 1) saying why" sh -c \
	    "test $rc -eq 1 && grep -q 'does not parse' '$T/err'"
	check "... without the password" sh -c "! grep -q hunter '$T/err'"
done
# a URI whose password holds a raw '@' or '/' parses, but libpq makes
# a host name or a port of a piece of the password, which its connection
# errors quote ("could not translate host name "2x@localhost"", "invalid
# integer value "hun" for connection option "port""): refused before
# libpq, by config check and by every command, without the password
for uri in 'postgresql://u:hunter@2x@localhost/lg' \
    'postgresql://u:hun/ter2x@localhost/lg' \
    'postgres://u:hu,n@ter2x@localhost:5432,db2/lg?sslmode=disable'; do
	printf 'database = %s\n' "$uri" > "$T/pwconf/listgate.conf"
	run "$LISTGATE" --allow-root --config "$T/pwconf" config check
	check "a URI with a raw '@' past its user part fails the check ($uri)" \
	    test "$rc" -eq 1
	check "... saying why" grep -q \
	    "pwconf/listgate.conf: database: the connection string does not parse: a URI with a raw '@' past its user part" "$T/err"
	check "... never showing the password" \
	    sh -c "! grep -q 'ter2x\\|2x@' '$T/out' '$T/err'"
	for c in "held" "migrate --status"; do
		run "$LISTGATE" --allow-root --config "$T/pwconf" $c
		check "$c with it: fails (exit 1) saying why" sh -c \
		    "test $rc -eq 1 && grep -q 'does not parse: a URI' '$T/err'"
		check "... without the password" \
		    sh -c "! grep -q 'ter2x\\|2x@\\|\"hun' '$T/err'"
	done
done
# an empty value left unquoted: libpq reads the next setting, password
# and all, as its value, and quotes it in its errors ("invalid sslmode
# value: "password=..."", the server's "role "password=..." does not
# exist"): refused before libpq, naming the key, never the password
for kv in "user= password=hunter2x dbname=lg" \
    "sslmode=  password=hunter2x"; do
	printf 'database = "host=/nonexistent %s"\n' "$kv" > "$T/pwconf/listgate.conf"
	run "$LISTGATE" --allow-root --config "$T/pwconf" config check
	check "an empty value left unquoted fails the check ($kv)" \
	    test "$rc" -eq 1
	check "... naming the key and how to write it" grep -q \
	    "database: the connection string does not parse as meant: ${kv%%=*} has no value of its own.*${kv%%=*}=''" "$T/err"
	check "... never showing the password" \
	    sh -c "! grep -q hunter2x '$T/out' '$T/err'"
	run "$LISTGATE" --allow-root --config "$T/pwconf" held
	check "held with it: fails (exit 1) saying why, without the password" \
	    sh -c "test $rc -eq 1 && grep -q 'does not parse as meant' '$T/err' && ! grep -q hunter2x '$T/err'"
done
printf 'database = "host=/nonexistent user=\047\047 password=hunter2x options = -cx=y"\n' \
    > "$T/pwconf/listgate.conf"
run "$LISTGATE" --allow-root --config "$T/pwconf" config check
check "an empty value written '' and a value with '=' check fine" \
    test "$rc" -eq 0
# '@' where libpq reads it right: in the password before a '?', in
# the query, or written %40
for uri in 'postgresql://u:hun?ter2x@db.invalid/lg' \
    'postgresql://db.invalid/lg?user=a@b' \
    'postgresql://u%40x:pw@db.invalid/l%40g'; do
	printf 'database = %s\n' "$uri" > "$T/pwconf/listgate.conf"
	run "$LISTGATE" --allow-root --config "$T/pwconf" config check
	check "a URI libpq reads right still checks fine ($uri)" test "$rc" -eq 0
done

echo 'lock_wait_ms = soon' >> "$CONF/listgate.conf"
run lg config check
check "a bad listgate.conf fails" test "$rc" -eq 1
check "naming listgate.conf:5" grep -q "listgate.conf:5: lock_wait_ms: \`soon' is not a whole number" "$T/err"
run "$LISTGATE" --allow-root --config "$T/nonexistent" config check
check "a missing directory fails" test "$rc" -eq 1
check "and says which" grep -q "nonexistent: configuration directory" "$T/err"
run env LISTGATE_CONFIG="$T/nonexistent2" "$LISTGATE" --allow-root config check
check "\$LISTGATE_CONFIG names the directory" grep -q "nonexistent2" "$T/err"

# a lists/ that everyone may write in, without a list file in it: every
# list's load refuses it (filter deferred every post), but config check
# loaded none and exited 0
mkdir -p "$T/open/lists" || exit 99
: > "$T/open/listgate.conf"
chmod 777 "$T/open/lists"
run "$LISTGATE" --allow-root --config "$T/open" config check
check "a lists/ others may write in, no list file: exit 1 (exit $rc)" \
    test "$rc" -eq 1
check "... naming it" grep -q "^listgate config: $T/open/lists: writable by everyone (mode 0777)" "$T/err"
printf 'Subject: x\n\nhello\n' | "$LISTGATE" --allow-root --config "$T/open" \
    filter --list dev --mta qmail > /dev/null 2>&1
rc=$?
check "... as filter defers every post there (exit $rc)" test "$rc" -eq 111
chmod 755 "$T/open/lists"

# a list that sends hold notices, and a secret_file that is not there
# (init not run) or that listgate refuses: every notice waited in the
# outbox and every reply was deferred, and config check exited 0
mkdir -p "$T/nosecret/lists" || exit 99
printf 'secret_file = %s/nosecret/secret\n' "$T" > "$T/nosecret/listgate.conf"
printf 'moderators = m@example.org\nmoderation_address = dev-moderate@example.org\nnotify = /usr/sbin/sendmail -t\nrelease = /bin/true\n' \
    > "$T/nosecret/lists/dev.conf"
run "$LISTGATE" --allow-root --config "$T/nosecret" config check
check "a list that sends notices without the secret: exit 1 (exit $rc)" \
    test "$rc" -eq 1
check "... naming secret_file and the list" grep -q "^listgate config: secret_file $T/nosecret/secret: No such file or directory (run .*init. to create it): list dev sends hold notices" "$T/err"
check "... once" test "$(grep -c secret_file "$T/err")" -eq 1
printf '%064d\n' 0 | tr 0 a > "$T/nosecret/secret"
chmod 644 "$T/nosecret/secret"
run "$LISTGATE" --allow-root --config "$T/nosecret" config check
check "... and one listgate refuses (exit $rc)" sh -c \
    "test $rc -eq 1 && grep -q 'secret_file $T/nosecret/secret: mode 644' '$T/err'"
rm -f "$T/nosecret/secret"
"$LISTGATE" --allow-root --config "$T/nosecret" init > /dev/null 2>&1 || exit 99
run "$LISTGATE" --allow-root --config "$T/nosecret" config check
check "... a good one passes (exit $rc)" test "$rc" -eq 0

# a command whose program is not there (a typo) or is no executable
# file: every run of it fails (every post passed deferred under
# Postfix, every approval refused), and config check said nothing
mkdir -p "$T/prog/lists" || exit 99
: > "$T/prog/listgate.conf"
printf 'ham_cutoff = 0.4\ndeliver = /usr/sbin/sendmial -i -- dev@example.org\nrelease = %s/prog/listgate.conf\n' "$T" \
    > "$T/prog/lists/dev.conf"
printf 'deliver = lmtp:127.0.0.1:24 dev@example.org\n' > "$T/prog/lists/lm.conf"
run "$LISTGATE" --allow-root --config "$T/prog" config check
check "a command's program that is not there: exit 0, a warning (exit $rc)" \
    test "$rc" -eq 0
check "... naming the file, the line and the program" grep -qx "listgate config: warning: $T/prog/lists/dev.conf:2: deliver: /usr/sbin/sendmial: No such file or directory: every run of the command fails" "$T/err"
check "... and one that is no executable file" grep -qx "listgate config: warning: $T/prog/lists/dev.conf:3: release: $T/prog/listgate.conf: not an executable file: every run of the command fails" "$T/err"
check "... and no LMTP server" sh -c "! grep -q 'lm.conf' '$T/err'"

# an empty --config (a script's --config "$CONF" with CONF unset) was
# taken as none: the command acted on $LISTGATE_CONFIG, or on
# /etc/listgate, another site's lists and database
mkdir -p "$T/site/lists" || exit 99
: > "$T/site/listgate.conf"
run env LISTGATE_CONFIG="$T/site" "$LISTGATE" --allow-root --config "" \
    config check
check "an empty --config is a usage error (exit $rc)" test "$rc" -eq 2
check "... saying so" grep -qx "listgate: --config: an empty directory name (give a directory, or leave --config out for \$LISTGATE_CONFIG or .*)" "$T/err"
check "... not checking \$LISTGATE_CONFIG's directory instead" test ! -s "$T/out"
run env LISTGATE_CONFIG="$T/site" "$LISTGATE" --allow-root --config= config check
check "and so is --config= (exit $rc)" test "$rc" -eq 2

echo "1..$n"
[ $fails -eq 0 ]

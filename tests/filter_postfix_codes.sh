#!/bin/sh
# filter_postfix_codes.sh - `listgate filter --mta postfix` exit codes
#
# Postfix's pipe(8) bounces a post for any exit status that is not a
# sysexits code it treats as temporary, so under Postfix nothing but 0,
# 69, 75 or 77 may ever leave the filter; every failure this script can
# provoke (missing or bad configuration, bad list name, missing token
# file, database down, spool write failure, oversized post, usage error,
# a `deliver` that fails or hangs until the watchdog fires, memory
# exhaustion) must be 75, and a pass must really be delivered by the
# list's `deliver` command (exit 0 only after it exited 0).
#
# The hold path needs PostgreSQL: it runs under tests/pg.sh and is
# skipped when no server is installed.  Works in a mktemp -d directory
# removed at the end; never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-filter-postfix.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
SINK=$T/sink

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), pg_part, lock_file
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
# expect WANT DESCRIPTION: compare with $rc; anything outside 0 69 75 77
# is a failure on its own
expect() {
	case $rc in
	0|69|75|77) ;;
	*) bad "$2: exit $rc is not one Postfix understands"; return ;;
	esac
	if [ "$rc" -eq "$1" ]; then ok "$2 (exit $rc)"
	else bad "$2 (exit $rc, want $1)"; sed 's/^/# /' "$T/err"; fi
}
# pf LIST POST [options]: pipe(8)'s way: argv envelope, post on a pipe
pf() {
	list=$1; post=$2; shift 2
	rm -f "$SINK"
	cat "$post" | "$LISTGATE" --allow-root --config "$CONF" filter --mta postfix \
	    --list "$list" "$@" -f 'sender@example.net' -- "$list@lists.example.org" \
	    > "$T/out" 2> "$T/err"
	rc=$?
}
deliver_line() {
	printf 'deliver = /bin/sh -c "cat > %s" -- {sender} {recipient}\n' "$SINK"
}

setup_conf() {
	rm -rf "$CONF"
	mkdir -p "$CONF/lists" || exit 99
	{
		echo 'tokens_dir = tokens'
		echo 'mta = postfix'
		echo 'lock_wait_ms = 200'
		[ -n "${1:-}" ] && echo "database = \"$1\""
	} > "$CONF/listgate.conf"
	{ printf 'ham_cutoff = 0.5\nspam_cutoff = 0.9\n'; deliver_line; } \
	    > "$CONF/lists/demo.conf"
	# with a database, training goes through its journal: schema first
	if [ -n "${1:-}" ]; then
		lg migrate >/dev/null 2>"$T/err" || { cat "$T/err"; exit 99; }
	fi
	lg train --quiet --list demo --spam "$DATA"/spam[1-4].eml >/dev/null &&
	    lg train --quiet --list demo --ham "$DATA"/ham[1-4].eml >/dev/null ||
	    { echo "# training failed"; exit 99; }
}

if [ "${1:-}" = pg ]; then
	# --- inside tests/pg.sh: the hold path ----------------------------
	setup_conf "host=$PGHOST port=$PGPORT user=$PGUSER dbname=$PGDATABASE"
	count() {
		psql -X -A -t -q -c "SELECT count(*) FROM held_posts WHERE $1" \
		    2>/dev/null
	}
	pf demo "$DATA/spam-test.eml"
	expect 0 "a spam post is held: 0 under Postfix"
	[ ! -e "$SINK" ] && ok "a held post is not delivered" ||
	    bad "a held post is not delivered"
	c=$(count "status = 'held' AND env_sender = 'sender@example.net'")
	[ "$c" = 1 ] && ok "held exactly once, with its envelope" ||
	    bad "held exactly once, with its envelope (count '$c')"
	sh "$PG_SH" stop >/dev/null 2>&1
	pf demo "$DATA/spam-test.eml"
	expect 75 "database down: EX_TEMPFAIL"
	[ ! -e "$SINK" ] && ok "nothing delivered while the database was down" ||
	    bad "nothing delivered while the database was down"
	pf demo "$DATA/ham-test.eml"
	expect 0 "a ham post passes with the database down (no database needed)"
	sh "$PG_SH" start >/dev/null 2>&1
	pf demo "$DATA/spam-test.eml"
	expect 0 "database back: held"
	# the same bytes as the post held first: a retry, stored once
	c=$(count "true")
	[ "$c" = 1 ] && ok "one hold in all (the same bytes are one post)" ||
	    bad "one hold in all (the same bytes are one post) (count '$c')"

	# --- size is a verdict: an oversize ham post is held, not delivered
	cp "$CONF/tokens/demo.kch" "$CONF/tokens/small.kch"
	{ printf 'max_post_bytes = 1024\non_error = pass\n'; deliver_line; } \
	    > "$CONF/lists/small.conf"
	awk 'BEGIN { for (i = 0; i < 100; i++) print "padding line number " i }' |
	    cat "$DATA/ham-test.eml" - > "$T/big.eml"
	pf small "$T/big.eml"
	expect 0 "an oversize post is held: 0 under Postfix"
	[ ! -e "$SINK" ] && ok "an oversize post is not delivered" ||
	    bad "an oversize post is not delivered"
	c=$(count "list = 'small' AND verdict = 'oversize' AND size = $(wc -c < "$T/big.eml")")
	[ "$c" = 1 ] && ok "held whole with the verdict oversize" ||
	    bad "held whole with the verdict oversize (count '$c')"
	sed 's/^Message-ID: .*/Message-ID: <big2@test>/' "$T/big.eml" > "$T/big2.eml"
	sh "$PG_SH" stop >/dev/null 2>&1
	pf small "$T/big2.eml"
	expect 75 "oversize with the database down and on_error = pass: EX_TEMPFAIL"
	[ ! -e "$SINK" ] && ok "and not delivered" || bad "and not delivered"
	sh "$PG_SH" start >/dev/null 2>&1

	# --- a retry after a moderator decided (the filter killed after its
	# INSERT committed, simulated): exit 0, never delivered again
	# trained from its own journal as demo was (a copy of demo's file
	# would be refused by the decision's sync: another list's)
	lg train --quiet --list dec --spam "$DATA"/spam[1-4].eml >/dev/null &&
	    lg train --quiet --list dec --ham "$DATA"/ham[1-4].eml >/dev/null ||
	    bad "training list dec"
	{ printf 'ham_cutoff = 0.5\nspam_cutoff = 0.9\n'; deliver_line
	  printf 'release = /bin/sh -c "cat >> %s/rel.dec"\n' "$T"; } \
	    > "$CONF/lists/dec.conf"
	sed 's/^Message-ID: .*/Message-ID: <dec1@test>/' "$DATA/spam-test.eml" \
	    > "$T/dec1.eml"
	pf dec "$T/dec1.eml"
	expect 0 "a post is held"
	id=$(psql -X -A -t -q -c "SELECT id FROM held_posts WHERE message_id = '<dec1@test>'")
	lg approve -q "$id" > /dev/null 2> "$T/err"
	cmp -s "$T/rel.dec" "$T/dec1.eml" && ok "approved: released once" ||
	    bad "approved: released once"
	# it now scores as ham (trained so, and a cutoff every score is under)
	{ printf 'ham_cutoff = 1\nspam_cutoff = 1\n'; deliver_line
	  printf 'release = /bin/sh -c "cat >> %s/rel.dec"\n' "$T"; } \
	    > "$CONF/lists/dec.conf"
	pf dec "$T/dec1.eml"
	expect 0 "the MTA's retry after the approval: exit 0"
	[ ! -e "$SINK" ] && ok "... without delivering it again" ||
	    bad "... without delivering it again"
	cmp -s "$T/rel.dec" "$T/dec1.eml" && ok "... nor releasing it again" ||
	    bad "... nor releasing it again"
	c=$(count "message_id = '<dec1@test>'")
	[ "$c" = 1 ] && ok "... nor holding it again" ||
	    bad "... nor holding it again (count '$c')"
	pf dec "$DATA/ham-test.eml"
	expect 0 "another post is still delivered"
	cmp -s "$SINK" "$DATA/ham-test.eml" && ok "... by deliver" ||
	    bad "... by deliver"
	echo "1..$n"
	[ $fails -eq 0 ]
	exit
fi

setup_conf

# --- pass: delivered by `deliver`, byte for byte ------------------------------
pf demo "$DATA/ham-test.eml"
expect 0 "a ham post is delivered"
cmp -s "$SINK" "$DATA/ham-test.eml" && ok "the sink got the post unchanged" ||
    bad "the sink got the post unchanged"
"$LISTGATE" --allow-root --config "$CONF" filter --mta postfix --list demo \
    -f 'sender@example.net' -- demo@lists.example.org \
    < "$DATA/ham-test.eml" > "$T/out" 2> "$T/err"
rc=$?
expect 0 "the post as a file on stdin"
cmp -s "$SINK" "$DATA/ham-test.eml" && ok "delivered unchanged from a file" ||
    bad "delivered unchanged from a file"
# envelope values are single arguments, never shell text
evil='a b"c'"'"';touch '"$T"'/pwned;`touch '"$T"'/pwned2` $(id)'
printf 'ham_cutoff = 0.5\ndeliver = /bin/sh -c "printf %%s \\"$1\\" > %s/arg1; printf %%s \\"$2\\" > %s/arg2; cat > %s" -- {sender} x{recipient}y\n' \
    "$T" "$T" "$SINK" > "$CONF/lists/args.conf"
cp "$CONF/tokens/demo.kch" "$CONF/tokens/args.kch"
cat "$DATA/ham-test.eml" | "$LISTGATE" --allow-root --config "$CONF" filter --mta postfix \
    --list args -f "$evil" -- "-r @x" > "$T/out" 2> "$T/err"
rc=$?
expect 0 "a hostile sender passes as data"
[ "$(cat "$T/arg1")" = "$evil" ] && ok "{sender} arrives as one argument, unchanged" ||
    bad "{sender} arrives as one argument, unchanged (got '$(cat "$T/arg1")')"
[ "$(cat "$T/arg2")" = "x-r @xy" ] && ok "{recipient} is substituted inside its word" ||
    bad "{recipient} is substituted inside its word"
[ ! -e "$T/pwned" ] && [ ! -e "$T/pwned2" ] && ok "no shell interpreted the sender" ||
    bad "no shell interpreted the sender"

# --- failures of `deliver` ------------------------------------------------
cp "$CONF/tokens/demo.kch" "$CONF/tokens/nod.kch"
printf 'ham_cutoff = 0.5\n' > "$CONF/lists/nod.conf"
pf nod "$DATA/ham-test.eml"
expect 75 "no deliver command under Postfix"
cp "$CONF/tokens/demo.kch" "$CONF/tokens/fail.kch"
printf 'deliver = /bin/false\n' > "$CONF/lists/fail.conf"
pf fail "$DATA/ham-test.eml"
expect 75 "deliver exits 1"
printf 'deliver = /bin/sh -c "exit 67"\n' > "$CONF/lists/fail.conf"
pf fail "$DATA/ham-test.eml"
expect 75 "deliver exits 67 (EX_NOUSER): still a temporary failure"
printf 'deliver = /nonexistent/program\n' > "$CONF/lists/fail.conf"
pf fail "$DATA/ham-test.eml"
expect 75 "deliver program missing"
printf 'deliver = /bin/sh -c "kill -9 $$"\n' > "$CONF/lists/fail.conf"
pf fail "$DATA/ham-test.eml"
expect 75 "deliver killed by a signal"
# a deliver that says why in pipe(8)'s terms: pipe(8) takes an enhanced
# status code at the start of the command's output over its exit
# status, so a "5.1.1 ..." first would have Postfix bounce the post the
# filter defers (seen with a real Postfix: dsn=5.1.1, status=bounced)
printf 'deliver = /bin/sh -c "cat > /dev/null; echo 5.1.1 no such list here; echo 5.1.1 said twice >&2; exit 69"\n' \
    > "$CONF/lists/fail.conf"
cat "$DATA/ham-test.eml" | "$LISTGATE" --allow-root --config "$CONF" filter \
    --mta postfix --list fail -f sender@example.net -- fail@lists.example.org \
    > "$T/both" 2>&1
rc=$?
cp "$T/both" "$T/err"
expect 75 "deliver exits 69 saying 5.1.1: a temporary failure"
# (what pipe(8) reads: standard output and error together)
if head -c 12 "$T/both" | grep -Eq '^[245]\.[0-9]{1,3}\.[0-9]{1,3}'; then
	bad "... and what Postfix reads does not begin with a status code of the command's"
	sed 's/^/# /' "$T/both"
else
	ok "... and what Postfix reads does not begin with a status code of the command's"
fi
head -n 1 "$T/both" | grep -q '^listgate: /bin/sh exited with status 69; its output:$' &&
    grep -q '^5\.1\.1 no such list here$' "$T/both" &&
    grep -q '^5\.1\.1 said twice$' "$T/both" &&
    grep -q '^listgate filter: temporary failure: deliver: /bin/sh exited with status 69$' "$T/both" &&
    ok "... the command's words follow ours, which say what they mean" ||
    { bad "... the command's words follow ours, which say what they mean"; sed 's/^/# /' "$T/both"; }
# a program that writes without end: its output is kept in memory no
# further than 1 MiB (what it writes past it is dropped), passed on no
# further than 4 KiB, and its exit 0 is a delivery still
printf 'deliver = /bin/sh -c "cat > %s; head -c 3000000 /dev/zero | tr x y; exit 0"\n' \
    "$SINK" > "$CONF/lists/fail.conf"
rm -f "$SINK"
cat "$DATA/ham-test.eml" | "$LISTGATE" --allow-root --config "$CONF" filter \
    --mta postfix --list fail -f sender@example.net -- fail@lists.example.org \
    > "$T/both" 2>&1
rc=$?
expect 0 "deliver that writes 3 MB and exits 0: delivered"
# (after a line of listgate's, as every program's output)
words=$(tail -n +2 "$T/both" | wc -c)
cmp -s "$SINK" "$DATA/ham-test.eml" && [ "$words" -le 4097 ] &&
    head -n 1 "$T/both" | grep -qx 'listgate: /bin/sh exited with status 0; its output:' &&
    ok "... the post whole, 4 KiB of its output at most ($words bytes), after a line of listgate's" ||
    bad "... the post whole, 4 KiB of its output at most ($words bytes), after a line of listgate's"
# a program that writes to /dev/stderr and /dev/stdout by name (a
# script's `echo ... >/dev/stderr', with O_TRUNC, or >>): they open as
# they do under pipe(8) itself, and its exit 0 is a delivery (their
# opens failed with EPERM on the sealed output file: deferred for ever)
for red in '>' '>>'; do
	printf 'deliver = /bin/sh -ec "cat > %s; echo said %s /dev/stderr; echo told %s /dev/stdout"\n' \
	    "$SINK" "$red" "$red" > "$CONF/lists/fail.conf"
	pf fail "$DATA/ham-test.eml"
	expect 0 "deliver that writes to /dev/stderr with $red: delivered"
	cmp -s "$SINK" "$DATA/ham-test.eml" && grep -qx 'said' "$T/err" &&
	    grep -qx 'told' "$T/err" &&
	    ok "... the post whole, its words passed on" ||
	    { bad "... the post whole, its words passed on"; sed 's/^/# /' "$T/err"; }
done
# a program that copies the post to its output, as tee does: its output
# is as long as the post, which may be far past 1 MiB
cp "$CONF/tokens/demo.kch" "$CONF/tokens/tee.kch"
printf 'ham_cutoff = 1\nspam_cutoff = 1\ndeliver = /usr/bin/tee %s\n' "$SINK" \
    > "$CONF/lists/tee.conf"
{ cat "$DATA/ham-test.eml"; i=0; while [ $i -lt 1500 ]; do
	printf '%01400d\n' $i; i=$((i + 1)); done; } > "$T/big.eml"
pf tee "$T/big.eml"
expect 0 "deliver = tee of a post of $(wc -c < "$T/big.eml") bytes: delivered"
cmp -s "$SINK" "$T/big.eml" && ok "... the post whole" || bad "... the post whole"
printf 'deliver = /bin/true\n' > "$CONF/lists/fail.conf"
pf fail "$DATA/ham-test.eml"
expect 0 "deliver that does not read its input but exits 0"
printf 'deliver = sendmail -i {recipient}\n' > "$CONF/lists/fail.conf"
pf fail "$DATA/ham-test.eml"
expect 75 "deliver with a relative program is refused"
grep -q "unsafe template" "$T/err" && ok "and the reason says why" ||
    bad "and the reason says why"

# --- the watchdog ---------------------------------------------------------------
cp "$CONF/tokens/demo.kch" "$CONF/tokens/slow.kch"
printf 'timeout = 1\ndeliver = /bin/sleep 30\n' > "$CONF/lists/slow.conf"
start=$(date +%s)
pf slow "$DATA/ham-test.eml"
took=$(( $(date +%s) - start ))
expect 75 "deliver hangs: the watchdog defers"
# the deliver command sleeps 30 s: ending well before that is the
# watchdog's doing, however slow a sanitizer build on a busy machine is
[ "$took" -le 12 ] && ok "within the timeout, long before the hang ends (${took}s)" ||
    bad "within the timeout, long before the hang ends (${took}s)"
# deliver's own time-out (the list's timeout less a second: 2 s here)
# ends it before the watchdog, and the MTA is told why, the program
# named once (it was "deliver: /bin/sleep: /bin/sleep: timed out ...")
printf 'timeout = 3\ndeliver = /bin/sleep 30\n' > "$CONF/lists/slow.conf"
pf slow "$DATA/ham-test.eml"
expect 75 "deliver hangs: its own time-out defers"
grep -qx "listgate filter: temporary failure: deliver: /bin/sleep: timed out after [12] s (killed)" \
    "$T/err" && ok "... the reason naming the program once" ||
    { bad "... the reason naming the program once"; sed 's/^/# /' "$T/err"; }

# --- told to stop (SIGTERM) while deliver runs: deliver, in a process group
# of its own, is stopped with the filter, or the MTA's retry would make
# the list get the post twice
printf 'deliver = /bin/sh -c "touch %s.started; sleep 3; cat > %s.term"\n' \
    "$SINK" "$SINK" > "$CONF/lists/slow.conf"
rm -f "$SINK.started" "$SINK.term"
cat "$DATA/ham-test.eml" | "$LISTGATE" --allow-root --config "$CONF" filter \
    --mta postfix --list slow -f s@x -- slow@l > "$T/out" 2> "$T/err" &
fpid=$!
i=0
while [ ! -e "$SINK.started" ] && [ $i -lt 200 ]; do
	sleep 0.05; i=$((i + 1))
done
kill -TERM "$fpid"
wait "$fpid"
rc=$?
expect 75 "SIGTERM while deliver runs: deferred"
grep -q "terminated by a signal, deferring" "$T/err" &&
    ok "... saying why" || bad "... saying why"
sleep 3.5
[ -e "$SINK.started" ] && [ ! -e "$SINK.term" ] &&
    ok "... and deliver stopped with it: nothing delivered" ||
    bad "... and deliver stopped with it: nothing delivered"

# --- a stop after deliver exited 0, before the filter reaped it (the
# filter stopped meanwhile, to hold that moment): delivered, exit 0, or
# the MTA would deliver the post again
printf '#!/bin/sh\ncat > %s.zombie\nkill -STOP $PPID\nexit 0\n' "$SINK" \
    > "$T/zombie.sh"
printf 'deliver = /bin/sh %s/zombie.sh\n' "$T" > "$CONF/lists/slow.conf"
rm -f "$SINK.zombie"
cat "$DATA/ham-test.eml" | "$LISTGATE" --allow-root --config "$CONF" filter \
    --mta postfix --list slow -f s@x -- slow@l > "$T/out" 2> "$T/err" &
fpid=$!
i=0
while [ "$(awk '{print $3}' "/proc/$fpid/stat" 2>/dev/null)" != T ] &&
    [ $i -lt 200 ]; do
	sleep 0.05; i=$((i + 1))
done
# and its deliver has exited (a zombie, not reaped)
i=0
while [ -n "$(ps -o stat= --ppid "$fpid" | grep -v Z)" ] && [ $i -lt 100 ]; do
	sleep 0.05; i=$((i + 1))
done
kill -TERM "$fpid"
kill -CONT "$fpid"
wait "$fpid"
rc=$?
expect 0 "SIGTERM after deliver exited 0, not yet reaped: delivered"
cmp -s "$SINK.zombie" "$DATA/ham-test.eml" && grep -q "after the post was delivered" "$T/err" &&
    ok "... once, and saying so" || bad "... once, and saying so"

# --- configuration and environment failures --------------------------------------
cat "$DATA/ham-test.eml" | "$LISTGATE" --allow-root --config "$T/nonexistent" filter \
    --mta postfix --list demo -f s@x -- demo@l > "$T/out" 2> "$T/err"
rc=$?
expect 75 "missing configuration directory"
cp "$CONF/listgate.conf" "$T/saved.conf"
echo 'timeout = forever' >> "$CONF/listgate.conf"
pf demo "$DATA/ham-test.eml"
expect 75 "bad listgate.conf"
# the dialect from listgate.conf (mta = postfix), which does not load:
# pipe(8)'s envelope options say Postfix; qmail's 111 would make it
# bounce the post
cat "$DATA/ham-test.eml" | "$LISTGATE" --allow-root --config "$CONF" filter \
    --list demo -f s@x -- demo@l > "$T/out" 2> "$T/err"
rc=$?
expect 75 "bad listgate.conf that names the dialect, no --mta"
cat "$DATA/ham-test.eml" | "$LISTGATE" --allow-root --config "$T/nonexistent" \
    filter --list demo -f s@x -- demo@l > "$T/out" 2> "$T/err"
rc=$?
expect 75 "missing configuration directory, no --mta"
if [ "$(id -u)" -eq 0 ]; then
	# root without --allow-root: refused, and no listgate.conf to
	# name the dialect
	cat "$DATA/ham-test.eml" | "$LISTGATE" --config "$T/nonexistent" \
	    filter --list demo -f s@x -- demo@l > "$T/out" 2> "$T/err"
	rc=$?
	expect 75 "root refused, no configuration directory, no --mta"
fi
# moderate, the other pipe command, the same way: a moderator's reply
# bounced for 111
printf 'From: mod@example.org\n\nok\n' | "$LISTGATE" --allow-root \
    --config "$CONF" moderate -f mod@example.org \
    -- demo-moderate+approve-5-abcdefgh@l > "$T/out" 2> "$T/err"
rc=$?
expect 75 "moderate: bad listgate.conf that names the dialect, no --mta"
printf 'From: mod@example.org\n\nok\n' | "$LISTGATE" --allow-root \
    --config "$T/nonexistent" moderate -f mod@example.org \
    -- demo-moderate+approve-5-abcdefgh@l > "$T/out" 2> "$T/err"
rc=$?
expect 75 "moderate: missing configuration directory, no --mta"
printf 'From: mod@example.org\n\nok\n' | "$LISTGATE" --allow-root \
    --config "$T/nonexistent" moderate --bogus -f mod@example.org \
    -- demo-moderate+approve-5-abcdefgh@l > "$T/out" 2> "$T/err"
rc=$?
expect 75 "moderate: a usage error, no configuration directory, no --mta"
if [ "$(id -u)" -eq 0 ]; then
	printf 'From: mod@example.org\n\nok\n' | "$LISTGATE" \
	    --config "$T/nonexistent" moderate -f mod@example.org \
	    -- demo-moderate+approve-5-abcdefgh@l > "$T/out" 2> "$T/err"
	rc=$?
	expect 75 "moderate: root refused, no configuration directory, no --mta"
fi
# and qmail-local, the envelope in the environment, still gets 111
printf 'From: mod@example.org\n\nok\n' | env SENDER=mod@example.org \
    EXT=moderate+approve-5-abcdefgh HOST=l "$LISTGATE" --allow-root \
    --config "$T/nonexistent" moderate > "$T/out" 2> "$T/err"
rc=$?
if [ "$rc" -eq 111 ]; then ok "moderate under qmail: missing configuration directory (exit 111)"
else bad "moderate under qmail: missing configuration directory (exit $rc, want 111)"; fi
# --- a listgate.conf that hangs: the dialect before it is read ---------------
# its open delayed 3 s (strace, as an NFS server away would), SIGALRM
# sent meanwhile (the watchdog; its default is 300 s): the watchdog
# answered with qmail's 111 until listgate.conf named the dialect, and
# pipe(8) bounced the post for it
# hang CMD...: CMD with a post, listgate.conf's open slow, SIGALRM at 1 s
hang() {
	strace -f -o /dev/null -P "$CONF/listgate.conf" \
	    -e inject=openat:delay_enter=3000000 "$@" \
	    < "$DATA/ham-test.eml" > "$T/out" 2> "$T/err" &
	pid=$!
	sleep 1
	kill -ALRM $(pgrep -P $pid) 2>/dev/null
	wait $pid
	rc=$?
}
if command -v strace > /dev/null 2>&1 && command -v pgrep > /dev/null 2>&1 &&
    strace -o /dev/null true 2>/dev/null; then
	hang "$LISTGATE" --allow-root --config "$CONF" filter --list demo \
	    -f s@x -- demo@l
	expect 75 "listgate.conf hangs, pipe(8)'s envelope: the watchdog defers"
	grep -q "timed out" "$T/err" && ok "... the watchdog's doing" ||
	    bad "... the watchdog's doing"
	hang env -u HOST -u DTLINE "$LISTGATE" --allow-root --config "$CONF" \
	    filter --list demo
	expect 75 "listgate.conf hangs, no envelope options: 75 (both MTAs retry)"
	hang env -u HOST -u DTLINE "$LISTGATE" --allow-root --config "$CONF" \
	    moderate -f mod@x -- demo-moderate+approve-5-abcdefgh@l
	expect 75 "moderate: listgate.conf hangs, pipe(8)'s envelope: 75"
	# qmail-local's environment: its own 111
	hang env SENDER=s@x RECIPIENT=demo@l LOCAL=demo HOST=l "$LISTGATE" \
	    --allow-root --config "$CONF" filter --list demo
	[ "$rc" -eq 111 ] && ok "listgate.conf hangs under qmail-local: 111" ||
	    bad "listgate.conf hangs under qmail-local: 111 (exit $rc)"
	# as root, main reads listgate.conf (to leave root) before the
	# command's watchdog is armed: no watchdog at all, until the MTA's
	# time limit, which Postfix ends with a bounce
	if [ "$(id -u)" -eq 0 ]; then
		hang env -u HOST -u DTLINE "$LISTGATE" --config "$CONF" filter \
		    --list demo -f s@x -- demo@l
		expect 75 "root, listgate.conf hangs while main reads it: deferred"
		hang env -u HOST -u DTLINE "$LISTGATE" --config "$CONF" moderate \
		    -f mod@x -- demo-moderate+approve-5-abcdefgh@l
		expect 75 "root, moderate, listgate.conf hangs in main: deferred"
	fi
else
	echo "# SKIP a listgate.conf that hangs: needs strace and pgrep"
fi
cat "$DATA/ham-test.eml" | env -u HOST -u DTLINE "$LISTGATE" --allow-root \
    --config "$T/nonexistent" filter --list demo > "$T/out" 2> "$T/err"
rc=$?
expect 75 "missing configuration directory, no --mta, no envelope: 75"
cp "$T/saved.conf" "$CONF/listgate.conf"
printf 'spam_cutoff = 0.3\nham_cutoff = 0.4\n' > "$CONF/lists/broken.conf"
pf broken "$DATA/ham-test.eml"
expect 75 "bad lists/L.conf"
for name in ../demo DEMO .x a/b "$(printf 'a%.0s' $(seq 1 65))"; do
	pf "$name" "$DATA/ham-test.eml"
	expect 75 "bad list name '$(printf %.20s "$name")'"
	grep -qF "bad list name '$name' (want" "$T/err" &&
	    ok "... the message names '$(printf %.20s "$name")'" ||
	    bad "... the message names '$(printf %.20s "$name")'"
done
pf untrained "$DATA/ham-test.eml"
expect 75 "missing token file"
{ printf 'on_error = pass\n'; deliver_line; } > "$CONF/lists/lenient.conf"
pf lenient "$DATA/ham-test.eml"
expect 0 "missing token file with on_error = pass: delivered"
cmp -s "$SINK" "$DATA/ham-test.eml" && ok "on_error = pass delivered the post" ||
    bad "on_error = pass delivered the post"
# a deliver that fails is not tried again in the same run because
# on_error = pass: passing is delivering (it ran twice, and a deliver
# that failed after taking the post delivered it twice)
cp "$CONF/lists/demo.conf" "$T/demo.saved"
{ printf 'ham_cutoff = 0.5\nspam_cutoff = 0.9\non_error = pass\n'
  printf 'deliver = /bin/sh -c "echo x >> %s.tries; exit 75"\n' "$T/flaky"; } \
    > "$CONF/lists/demo.conf"
pf demo "$DATA/ham-test.eml"
expect 75 "a ham post whose deliver fails, on_error = pass: deferred"
check_tries=$(wc -l < "$T/flaky.tries" 2>/dev/null || echo 0)
[ "$check_tries" -eq 1 ] && ok "... deliver ran once" ||
    bad "... deliver ran once (ran $check_tries times)"
cp "$T/demo.saved" "$CONF/lists/demo.conf"
pf demo "$DATA/spam-test.eml"
expect 75 "a spam post with no database configured"
[ ! -e "$SINK" ] && ok "and it was not delivered" || bad "and it was not delivered"
printf 'database = "host=%s/nosock port=1 connect_timeout=2"\n' "$T" \
    >> "$CONF/listgate.conf"
pf demo "$DATA/spam-test.eml"
expect 75 "database unreachable"
cp "$T/saved.conf" "$CONF/listgate.conf"
# a database that accepts the connection and then says nothing: the
# watchdog (timeout = 1) defers long before libpq gives up
if command -v python3 >/dev/null 2>&1; then
	mkdir -p "$T/hang"
	python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1]); s.listen(8)
conns = []
while True:
    conns.append(s.accept()[0])
' "$T/hang/.s.PGSQL.5432" &
	hangpid=$!
	i=0
	while [ ! -S "$T/hang/.s.PGSQL.5432" ] && [ $i -lt 50 ]; do
		sleep 0.1; i=$((i + 1))
	done
	printf 'database = "host=%s/hang port=5432 dbname=x user=x"\n' "$T" \
	    >> "$CONF/listgate.conf"
	cp "$CONF/tokens/demo.kch" "$CONF/tokens/hang.kch"
	{ printf 'ham_cutoff = 0.5\ntimeout = 1\n'; deliver_line; } \
	    > "$CONF/lists/hang.conf"
	start=$(date +%s)
	pf hang "$DATA/spam-test.eml"
	took=$(( $(date +%s) - start ))
	expect 75 "database hangs: the watchdog defers"
	# the server never answers, so only the watchdog ends the wait
	[ "$took" -le 12 ] && ok "within the timeout (${took}s)" ||
	    bad "within the timeout (${took}s)"
	# a post that passes needs no database: whether a moderator decided
	# it already is in the token file (sync records decisions there)
	{ printf 'ham_cutoff = 0.5\ntimeout = 30\n'; deliver_line; } \
	    > "$CONF/lists/hang.conf"
	start=$(date +%s)
	pf hang "$DATA/ham-test.eml"
	took=$(( $(date +%s) - start ))
	expect 0 "database hangs: a ham post still passes"
	cmp -s "$SINK" "$DATA/ham-test.eml" && ok "... delivered" ||
	    bad "... delivered"
	# (a filter that asked the hanging server would wait for its
	# connect time-out, or for the watchdog)
	[ "$took" -le 2 ] && ok "... without touching the database (${took}s)" ||
	    bad "... without touching the database (${took}s)"
	kill "$hangpid" 2>/dev/null
	wait "$hangpid" 2>/dev/null
	cp "$T/saved.conf" "$CONF/listgate.conf"
else
	echo "# SKIP the checks at line 207: python3 is not installed"
fi

# a trainer holding the token file's write lock: the reader gives up
# after lock_wait_ms (200 ms here)
if command -v python3 >/dev/null 2>&1; then
	lock_file "$CONF/tokens/demo.kch"
	pf demo "$DATA/ham-test.eml"
	kill "$lockpid" 2>/dev/null
	wait "$lockpid" 2>/dev/null
	expect 75 "token file locked by a trainer (lock wait)"
	grep -q "locked" "$T/err" && ok "and the reason says so" ||
	    bad "and the reason says so"
else
	echo "# SKIP the checks at line 241: python3 is not installed"
fi

# --- the post itself --------------------------------------------------------
cp "$CONF/tokens/demo.kch" "$CONF/tokens/small.kch"
{ printf 'max_post_bytes = 1024\n'; deliver_line; } > "$CONF/lists/small.conf"
awk 'BEGIN { for (i = 0; i < 100; i++) print "padding line number " i }' |
    cat "$DATA/ham-test.eml" - > "$T/big.eml"
pf small "$T/big.eml"
expect 75 "post larger than max_post_bytes, no database to hold it"
# size is a verdict: on_error = pass covers only the host's failures
{ printf 'max_post_bytes = 1024\non_error = pass\n'; deliver_line; } \
    > "$CONF/lists/small.conf"
pf small "$T/big.eml"
expect 75 "oversize with on_error = pass: deferred"
[ ! -e "$SINK" ] && ok "and not delivered" || bad "and not delivered"
{ printf 'max_post_bytes = 1024\non_error = pass\noversize = defer\n'
  deliver_line; } > "$CONF/lists/small.conf"
pf small "$T/big.eml"
expect 75 "oversize = defer with on_error = pass: deferred"
[ ! -e "$SINK" ] && ok "and not delivered" || bad "and not delivered"
{ printf 'on_error = pass\n'; deliver_line; } > "$CONF/lists/lenient.conf"
: > "$T/empty.eml"
pf lenient "$T/empty.eml"
expect 75 "an empty post with on_error = pass: deferred (the sender chose it)"
# past the in-memory spool (32 MiB) into a TMPDIR that cannot be written
{ cat "$DATA/ham-test.eml"
  awk 'BEGIN { s = sprintf("%0100d", 0); for (i = 0; i < 340000; i++) print s }'
} > "$T/huge.eml"
cat "$T/huge.eml" | TMPDIR=$T/no/such/dir "$LISTGATE" --allow-root --config "$CONF" filter \
    --mta postfix --list demo -f s@x -- demo@l > "$T/out" 2> "$T/err"
rc=$?
expect 75 "spool cannot be written (TMPDIR unwritable, 34 MB post)"
# a file size limit (ulimit -f, as an MTA may set) below the post: the
# spool file's write fails and the filter says so; SIGXFSZ killed it
# (exit 153, no reason given).  A deliver gets SIGXFSZ's default back.
(ulimit -f 20000 && cat "$T/huge.eml" | "$LISTGATE" --allow-root \
    --config "$CONF" filter --mta postfix --list demo -f s@x -- demo@l \
    > "$T/out" 2> "$T/err")
rc=$?
expect 75 "spool past the file size limit (ulimit -f, 34 MB post)"
grep -q "temporary failure: spool: .*File too large" "$T/err" &&
    ok "... the reason says the file is too large" ||
    bad "... the reason says the file is too large"
# moderate, the other pipe command, reads its reply the same way
(ulimit -f 20000 && cat "$T/huge.eml" | "$LISTGATE" --allow-root \
    --config "$CONF" moderate --mta postfix -f s@x \
    -- demo-moderate+approve-5-abcdefgh@l > "$T/out" 2> "$T/err")
rc=$?
expect 75 "moderate: a reply past the file size limit (ulimit -f, 34 MB)"
grep -q "File too large" "$T/err" &&
    ok "... the reason says the file is too large" ||
    { bad "... the reason says the file is too large"; sed 's/^/# /' "$T/err"; }
cp "$CONF/lists/demo.conf" "$T/demo.saved"
{ printf 'ham_cutoff = 0.5\nspam_cutoff = 0.9\n'
  printf 'deliver = /bin/sh -c "grep SigIgn /proc/self/status > %s"\n' "$SINK"; } \
    > "$CONF/lists/demo.conf"
pf demo "$DATA/ham-test.eml"
expect 0 "deliver that reads its ignored signals"
# SIGXFSZ is 25: bit 24 of the mask, the low bit of the 7th hex digit
# from the right
sigign=$(sed -n 's/^SigIgn:[[:space:]]*//p' "$SINK")
case $sigign in
?????????[02468ace]??????) ok "... deliver does not ignore SIGXFSZ ($sigign)" ;;
*) bad "... deliver does not ignore SIGXFSZ ($sigign)" ;;
esac
cp "$T/demo.saved" "$CONF/lists/demo.conf"
cat "$T/huge.eml" | "$LISTGATE" --allow-root --config "$CONF" filter \
    --mta postfix --list demo -f s@x -- demo@l > "$T/out" 2> "$T/err"
rc=$?
expect 0 "the same 34 MB post with a writable TMPDIR is delivered"
cmp -s "$SINK" "$T/huge.eml" && ok "delivered unchanged from the spool file" ||
    bad "delivered unchanged from the spool file"
rm -f "$T/huge.eml"
: > "$T/empty.eml"
pf demo "$T/empty.eml"
expect 75 "an empty post"

# --- usage errors ------------------------------------------------------------
cat "$DATA/ham-test.eml" | "$LISTGATE" --allow-root --config "$CONF" filter --mta postfix \
    -f s@x -- r@x > "$T/out" 2> "$T/err"
rc=$?
expect 75 "usage: no --list"
cat "$DATA/ham-test.eml" | "$LISTGATE" --allow-root --config "$CONF" filter --mta postfix \
    --list demo --bogus -f s@x -- r@x > "$T/out" 2> "$T/err"
rc=$?
expect 75 "usage: unknown option"
cat "$DATA/ham-test.eml" | "$LISTGATE" --allow-root --config "$CONF" filter --mta exim \
    --list demo -f s@x -- r@x > "$T/out" 2> "$T/err"
rc=$?
expect 75 "usage: unknown --mta, envelope options say Postfix"
grep -q "bad --mta 'exim' (want qmail or postfix)" "$T/err" &&
    ok "... the message names the value" ||
    bad "... the message names the value"
cat "$DATA/ham-test.eml" | "$LISTGATE" --allow-root --config "$CONF" filter --list demo \
    -f s@x -- r@x extra > "$T/out" 2> "$T/err"
rc=$?
expect 75 "usage: two recipients (dialect from listgate.conf)"
cat "$DATA/ham-test.eml" | "$LISTGATE" --allow-root --bogus --config "$CONF" filter \
    --mta postfix --list demo -f s@x -- r@x > "$T/out" 2> "$T/err"
rc=$?
expect 75 "usage: unknown global option before filter"
cat "$DATA/ham-test.eml" | "$LISTGATE" --allow-root --help filter --mta postfix \
    --list demo -f s@x -- r@x > "$T/out" 2> "$T/err"
rc=$?
expect 75 "global --help before filter with a post on stdin is not a delivery"
cat "$DATA/ham-test.eml" | "$LISTGATE" --allow-root --config "$CONF" filter --mta postfix \
    --list > "$T/out" 2> "$T/err"
rc=$?
expect 75 "usage: --list without its argument"

cat "$DATA/ham-test.eml" | "$LISTGATE" --allow-root --config "$CONF" filter --mta postfix \
    --list demo --help -f s@x -- r@x > "$T/out" 2> "$T/err"
rc=$?
expect 75 "--help with a post on stdin is not a delivery"
cat "$DATA/ham-test.eml" | "$LISTGATE" --allow-root --config "$CONF" filter --help \
    --mta postfix --list demo > "$T/out" 2> "$T/err"
rc=$?
expect 75 "--help before --mta postfix"
cat "$DATA/ham-test.eml" | "$LISTGATE" --allow-root --config "$CONF" filter --help \
    --list demo > "$T/out" 2> "$T/err"
rc=$?
expect 75 "--help, no dialect on the command line: 75, temporary to both"
# --help reads no configuration: reading listgate.conf can hang (an NFS
# server away; here strace holds its open for 60 s), and --help read it
# with the watchdog already off, until the MTA's own time limit
if command -v strace >/dev/null 2>&1 &&
    strace -f -o /dev/null -e trace=none true 2>/dev/null; then
	start=$(date +%s)
	# (LeakSanitizer cannot work under ptrace: it would end the traced
	# run with an error of its own, exit 1; the other runs check leaks)
	cat "$DATA/ham-test.eml" | ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
	    timeout -s KILL 30 strace -f -o /dev/null \
	    -P "$CONF/listgate.conf" -e trace=%file \
	    -e inject=%file:delay_enter=60000000 "$LISTGATE" \
	    --allow-root --config "$CONF" filter --help --list demo \
	    > "$T/out" 2> "$T/err"
	rc=$?
	took=$(( $(date +%s) - start ))
	expect 75 "--help, listgate.conf hanging: answered at once (${took}s)"
	grep -q "usage: listgate \[--config DIR\] filter" "$T/out" &&
	    ok "... with the usage" || bad "... with the usage"
else
	ok "# SKIP no strace (or no ptrace here): --help with listgate.conf hanging"
fi

# --- a misspelt command in master.cf or a .qmail line -----------------------------
# (`listgate filtre ...`): exit 2, a usage error, had Postfix bounce every
# post until someone noticed.  Run as an MTA runs it (a post on stdin,
# envelope options or qmail-local's environment) it defers now, in the
# dialect's code; typed at a terminal it stays a usage error (2)
for args in "filtre --mta postfix --list demo -f s@x -- r@x" \
    "filtre --list demo -f s@x -- r@x" "--config $CONF filtre -f s@x" \
    "--bogus filtre --list demo" "--config $CONF --mta postfix -f s@x -- r@x"; do
	cat "$DATA/ham-test.eml" | "$LISTGATE" --allow-root $args \
	    > "$T/out" 2> "$T/err"
	rc=$?
	expect 75 "unknown or no command, run as Postfix runs it ($args)"
done
grep -q "usage: listgate" "$T/err" && ok "... the usage still said" ||
    bad "... the usage still said"
cat "$DATA/ham-test.eml" | "$LISTGATE" --allow-root filtre --list demo \
    > "$T/out" 2> "$T/err"
rc=$?
grep -q "^listgate: unknown command 'filtre' (try listgate --help)$" "$T/err" &&
    ok "... the command named" || bad "... the command named"
cat "$DATA/ham-test.eml" | "$LISTGATE" --allow-root filtre --mta qmail \
    --list demo > "$T/out" 2> "$T/err"
rc=$?
check "unknown command with --mta qmail: qmail's temporary failure, 111 (exit $rc)" test "$rc" -eq 111
cat "$DATA/ham-test.eml" | env HOST=lists.example.org DTLINE="Delivered-To: x" \
    "$LISTGATE" --allow-root filtre > "$T/out" 2> "$T/err"
rc=$?
check "unknown command under qmail-local's environment: 111 (exit $rc)" test "$rc" -eq 111
cat "$DATA/ham-test.eml" | env -u HOST -u DTLINE "$LISTGATE" --allow-root \
    snyc --list demo2 extra > "$T/out" 2> "$T/err"
rc=$?
expect 75 "unknown command with --list, stdin not a terminal: 75"
env -u HOST -u DTLINE "$LISTGATE" --allow-root snyc < /dev/null \
    > "$T/out" 2> "$T/err"
rc=$?
check "unknown command without envelope options (a cron line): 2, a usage error (exit $rc)" test "$rc" -eq 2
env HOST=lists.example.org "$LISTGATE" --version < /dev/null > "$T/out" 2> "$T/err"
rc=$?
check "--version with \$HOST set (tcsh exports it) and no MTA options: 0, the version (exit $rc)" \
    sh -c "test $rc -eq 0 && grep -q '^listgate ' '$T/out'"
if command -v script > /dev/null 2>&1; then
	script -qec "'$LISTGATE' --allow-root filtre --mta postfix --list demo -f s@x -- r@x" \
	    /dev/null > "$T/out" 2>&1
	rc=$?
	check "the same typed at a terminal: 2, a usage error (exit $rc)" test "$rc" -eq 2
	grep -q "unknown command 'filtre'" "$T/out" && ok "... saying so" ||
	    bad "... saying so"
else
	echo "# no script(1): the terminal case is not checked"
fi

# --- a log socket that blocks --------------------------------------------------
# syslog stopped or stuck, its queue full: a datagram socket at /dev/log
# that nobody reads, in a mount namespace of its own (/dev a tmpfs
# there, with the devices bound back).  The watchdog (timeout = 2) ends
# the filter with the outcome it decided; it was disarmed before the log
# line, and the filter hung in syslog(3) until the MTA's own time limit,
# which Postfix ends with a bounce.
cat > "$T/stuck.sh" <<'EOF'
# stuck.sh DIR CMD...: CMD with /dev/log full (in a private namespace)
set -e
D=$1; shift
mount --make-rprivate /
mkdir -p "$D/olddev"
rm -f "$D/filled"
mount --rbind /dev "$D/olddev"
mount -t tmpfs -o mode=755 none /dev
for f in null zero full random urandom tty; do
	[ -e "$D/olddev/$f" ] || continue
	touch "/dev/$f"
	mount --bind "$D/olddev/$f" "/dev/$f"
done
ln -s /proc/self/fd /dev/fd
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/dev/log")
c = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
c.connect("/dev/log")
c.setblocking(False)
n = 0
try:
    while True:
        c.send(b"x" * 100)
        n += 1
except BlockingIOError:
    pass
open(sys.argv[1], "w").write("%d\n" % n)
time.sleep(600)
' "$D/filled" &
i=0
while [ ! -s "$D/filled" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -s "$D/filled" ]
set +e
"$@"
rc=$?
kill $! 2>/dev/null
exit $rc
EOF
if [ "$(id -u)" -eq 0 ] && command -v unshare > /dev/null 2>&1 &&
    command -v python3 > /dev/null 2>&1 && unshare -m true 2>/dev/null; then
	cp "$CONF/lists/demo.conf" "$T/demo.saved"
	printf 'timeout = 2\n' >> "$CONF/lists/demo.conf"
	# stuck POST: filter under Postfix with /dev/log full, at most 60 s
	stuck() {
		rm -f "$SINK"
		start=$(date +%s)
		timeout 60 unshare -m sh "$T/stuck.sh" "$T/ns" sh -c \
		    'cat "$1" | "$2" --allow-root --config "$3" filter --mta postfix \
		    --list demo -f s@x -- demo@l' sh "$1" "$LISTGATE" "$CONF" \
		    > "$T/out" 2> "$T/err"
		rc=$?
		took=$(( $(date +%s) - start ))
	}
	stuck "$DATA/spam-test.eml"
	expect 75 "syslog stuck, a spam post and no database: deferred"
	[ "$took" -le 15 ] && ok "... by the watchdog (${took}s)" ||
	    bad "... by the watchdog (${took}s)"
	stuck "$DATA/ham-test.eml"
	expect 0 "syslog stuck, a ham post: delivered"
	cmp -s "$SINK" "$DATA/ham-test.eml" && [ "$took" -le 15 ] &&
	    ok "... and said so within the watchdog's time (${took}s)" ||
	    bad "... and said so within the watchdog's time (${took}s)"
	grep -q "timed out writing the log line" "$T/err" &&
	    ok "... its last words say the log line did not go" ||
	    bad "... its last words say the log line did not go"
	cp "$T/demo.saved" "$CONF/lists/demo.conf"
	# moderate, the other pipe command: its answer as without syslog
	cp "$CONF/listgate.conf" "$T/saved.conf"
	printf 'timeout = 2\n' >> "$CONF/listgate.conf"
	printf 'From: mod@example.org\nSubject: Re: held\n\nyes\n' > "$T/reply.eml"
	"$LISTGATE" --allow-root --config "$CONF" moderate --mta postfix \
	    -f mod@example.org -- demo-moderate+approve-5-abcdefgh@l \
	    < "$T/reply.eml" > /dev/null 2>&1
	want=$?
	start=$(date +%s)
	timeout 60 unshare -m sh "$T/stuck.sh" "$T/ns" sh -c \
	    '"$1" --allow-root --config "$2" moderate --mta postfix \
	    -f mod@example.org -- demo-moderate+approve-5-abcdefgh@l < "$3"' \
	    sh "$LISTGATE" "$CONF" "$T/reply.eml" > "$T/out" 2> "$T/err"
	rc=$?
	took=$(( $(date +%s) - start ))
	expect "$want" "syslog stuck, moderate: the answer it gives without"
	[ "$took" -le 15 ] && ok "... within its watchdog's time (${took}s)" ||
	    bad "... within its watchdog's time (${took}s)"
	cp "$T/saved.conf" "$CONF/listgate.conf"
else
	echo "# SKIP a log socket that blocks: needs root, unshare and python3"
fi

# --- memory exhaustion: every allocation failure is 0 or 75 ------------------------
worst=0
i=1
while [ $i -le 150 ]; do
	cat "$DATA/ham-test.eml" | LISTGATE_FAIL_ALLOC=$i "$LISTGATE" --allow-root \
	    --config "$CONF" filter --mta postfix --list demo -f s@x -- r@x \
	    > /dev/null 2>&1
	r=$?
	if [ $r -ne 0 ] && [ $r -ne 75 ]; then worst=$r; break; fi
	i=$((i + 1))
done
[ $worst -eq 0 ] && ok "allocation failures 1..150: every exit is 0 or 75" ||
    bad "allocation failure $i: exit $worst"

# --- no --mta, listgate.conf's mta its default (qmail) -----------------------------
# pipe(8) gives the envelope as options and sets none of qmail-local's
# variables: qmail's 0 for a good post told Postfix it was delivered,
# and deliver never ran (the post lost)
sed -i '/^mta = /d' "$CONF/listgate.conf"
rm -f "$SINK"
env -u DTLINE -u RPLINE "$LISTGATE" --allow-root --config "$CONF" filter \
    --list demo -f sender@example.net -- demo@lists.example.org \
    < "$DATA/ham-test.eml" > "$T/out" 2> "$T/err"
rc=$?
expect 0 "no --mta, no mta in listgate.conf, the envelope as options: a good post"
check "... delivered by deliver, byte for byte" cmp -s "$SINK" "$DATA/ham-test.eml"
# (the log goes to standard error when it is a terminal)
script -qec "env -u DTLINE -u RPLINE '$LISTGATE' --allow-root --config '$CONF' filter --list demo -f sender@example.net -- demo@lists.example.org < '$DATA/ham-test.eml'" \
    /dev/null > "$T/tty" 2>&1
check "... a warning says why it answered as Postfix" \
    grep -q "mta = qmail (listgate.conf's, or its default), but the envelope came as options (-f, --) and not from qmail-local: answering as Postfix" "$T/tty"
# under qmail-local (its DTLINE), -f and all, qmail's dialect stays
rm -f "$SINK"
DTLINE='Delivered-To: demo@lists.example.org' "$LISTGATE" --allow-root \
    --config "$CONF" filter --list demo -f sender@example.net \
    < "$DATA/ham-test.eml" > "$T/out" 2> "$T/err"
rc=$?
check "... under qmail-local's environment: qmail's pass (0, no deliver)" \
    sh -c "test $rc -eq 0 && test ! -e '$SINK' && ! grep -q 'answering as Postfix' '$T/err'"
echo 'mta = postfix' >> "$CONF/listgate.conf"

# --- the hold path, with a private PostgreSQL ----------------------------------
if [ -f "$top_srcdir/tests/pg.sh" ]; then
	pg_part
fi

echo "1..$n"
[ $fails -eq 0 ]

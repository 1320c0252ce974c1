#!/bin/sh
# fault_inject.sh - no post lost when system calls fail: strace's fault
# injection (strace -f -e inject=SYSCALL:error=ERRNO:when=N) makes the
# Nth call of one system call fail in listgate (and in the commands it
# starts), for a sweep of N, and after each run the post is looked for
# from the outside
#
#   filter --mta postfix (deliver)    exit 0 and the deliver command got
#   filter --mta qmail                the whole post, or the post held
#   filter through listgate holder    (one row, its bytes); or exit 75 /
#                                     111 (the MTA retries); never another
#                                     code, never 0 with the post nowhere
#   train                             the token file is either as before
#                                     or as after a clean run (a batch
#                                     rolls back whole), score reads it
#   approve, reject                   exit 0 and the post released (the
#                                     release command got it) or decided;
#                                     else still held or releasing, and a
#                                     clean retry finishes it
#   sync                              a clean sync after it gives the
#                                     same token file as a clean sync
#                                     alone (each event applied once)
#   notify --pending                  each notice sent or still pending
#
# After every injected failure the list's token file must stay readable
# (`listgate score` works), and a failing command must say why on
# standard error.  The system calls: write, read, openat, fsync, rename,
# mmap, pipe2, clone3, memfd_create, wait4, socket, connect, poll,
# accept4, sendto (full sweep only), recvfrom, ftruncate, fallocate,
# pwrite64, pread64, flock, fcntl, with the error a full disk, a broken
# disk, a lack of descriptors or memory, a reset connection would give;
# a post of 32 MiB and more (spooled to a file) too.  By default a
# bounded sample of N per call (the first three, the middle, the last
# two), under a minute on 2 cores; FAULT_SWEEP=full tries every N.
# FAULT_MESSAGES=FILE collects what the failing commands said.  Calls made by the dynamic loader
# before main (a listgate that cannot even start is the MTA's to retry;
# nothing of ours runs) are skipped.  The PostgreSQL part runs under
# tests/pg.sh and is skipped without a server; without strace, exit 77.
# Works in a mktemp -d directory removed at the end; never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
command -v strace >/dev/null 2>&1 || { echo "strace missing: skip"; exit 77; }
DATA=$top_srcdir/tests/data/train
QHOLD=$top_builddir/tests/qhold
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-fault.XXXXXX") || exit 99
trap '[ -n "${hpid:-}" ] && kill "$hpid" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
CONF=$T/conf
SWEEP=${FAULT_SWEEP:-quick}

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), pg_part, journal_train
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }

# strace works here (not inside a container that forbids ptrace)?
if ! strace -f -qq -o /dev/null -e trace=none true 2>/dev/null; then
	echo "1..0 # SKIP strace cannot trace here (ptrace not allowed)"
	exit 77
fi

# AddressSanitizer's own allocator ends the process when a mapping
# fails: no mmap injection in such a build (run-all.sh's sanitizer pass)
ASAN=
grep -q __asan_init "$LISTGATE" 2>/dev/null && ASAN=1
# and LeakSanitizer cannot work under ptrace: it would end every traced
# run with an error of its own (the other tests check the leaks)
if [ -n "$ASAN" ]; then
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	export ASAN_OPTIONS
fi
# nomap LIST: LIST without the mmap entries under AddressSanitizer
nomap() {
	if [ -n "$ASAN" ]; then
		printf '%s\n' $1 | grep -v 'mmap:'
	else
		printf '%s\n' $1
	fi
}

# the calls of SYSCALL the dynamic loader makes before main: a run that
# does nothing (listgate --version) less what it does after main
base_of() {
	case $1 in write|fsync|rename|ftruncate|fallocate|pwrite64|flock|sendto|recvfrom|clone3|pipe2)
		echo 0; return ;;
	esac
	strace -qq -e trace="$1" -o "$T/base.st" "$LISTGATE" --version \
	    > /dev/null 2>&1
	grep -c "^$1(" "$T/base.st"
}

# count SYSCALL CMD...: the calls of SYSCALL in the process that makes
# the most of them (stdin from $IN)
count() {
	sc=$1; shift
	cat "$IN" | strace -f -qq -e trace="$sc" -o "$T/count.st" "$@" \
	    > /dev/null 2>&1
	grep "$sc(" "$T/count.st" | grep -v 'resumed>' | awk '{ print $1 }' |
	    sort | uniq -c | sort -rn | awk 'NR == 1 { print $1 } END { if (NR == 0) print 0 }'
}

# points FIRST LAST: the N to try, FIRST..LAST (all of them under
# FAULT_SWEEP=full; else the first three, the middle and the last two)
points() {
	if [ "$2" -lt "$1" ]; then return; fi
	if [ "$SWEEP" = full ] || [ $(($2 - $1)) -lt 6 ]; then
		seq "$1" "$2"
	else
		printf '%s\n' "$1" $(($1 + 1)) $(($1 + 2)) $((($1 + $2) / 2)) \
		    $(($2 - 1)) "$2"
	fi
}

# inject SYSCALL ERRNO N CMD...: CMD with the Nth call of SYSCALL
# failing with ERRNO in each of its processes; stdin from $IN on a pipe
# (as the MTA gives it, fed from outside the traced processes), rc,
# $T/out, $T/err
inject() {
	sc=$1 e=$2 w=$3; shift 3
	cat "$IN" | { strace -f -qq -o /dev/null -e trace="$sc" \
	    -e inject="$sc:error=$e:when=$w" "$@" > "$T/out" 2> "$T/err"
	    echo $? > "$T/rc"; }
	rc=$(cat "$T/rc")
}

# failures are counted per case and reported one line per case kind
# (TAP stays short: one line per command and call)
case_bad=0
case_n=0
# fail WHAT: one failed case, with what it printed
fail() {
	case_bad=$((case_bad + 1))
	echo "# FAIL: $what: $1"
	sed -e 's/^/#   stderr: /' "$T/err" | head -n 5
}
# tally DESCRIPTION: one TAP line for the cases run since the last tally
tally() {
	echo "# $(( $(date +%s) - ${tstart:-$(date +%s)} )) s"
	tstart=$(date +%s)
	if [ "$case_bad" -eq 0 ]; then ok "$1 ($case_n cases)"
	else bad "$1 ($case_bad of $case_n cases failed)"; fi
	case_bad=0
	case_n=0
}
# readable LIST: the token file still reads
readable() {
	if ! lg score --list "$1" < "$DATA/ham-test.eml" > /dev/null 2> "$T/score.err"; then
		fail "the token file of $1 no longer reads: $(head -n 1 "$T/score.err")"
		return 1
	fi
}
# said: a failing command said why
# (FAULT_MESSAGES=FILE collects them, for a look at their words)
said() {
	[ -s "$T/err" ] || fail "exit $rc without a word on standard error"
	[ -z "${FAULT_MESSAGES:-}" ] ||
	    sed "s|^|$what: |" "$T/err" >> "$FAULT_MESSAGES"
}

# held_once TAG: filter under qmail (exit $rc) held the post tagged TAG
# once (99), or deferred it (111) and held it at most once
held_once() {
	r=$(rows "$1")
	case $rc in
	99) [ "$r" = 1 ] || fail "exit 99, and $r rows held: LOST" ;;
	111) said; [ "$r" -le 1 ] || fail "exit 111, and $r rows" ;;
	*) fail "exit $rc: neither held nor a temporary failure" ;;
	esac
}

# errtext ERRNO: its message
errtext() {
	case $1 in
	ENOSPC) echo "No space left on device" ;;
	EIO) echo "Input/output error" ;;
	EMFILE) echo "Too many open files" ;;
	ENOMEM) echo "Cannot allocate memory" ;;
	ENOLCK) echo "No locks available" ;;
	EXDEV) echo "Invalid cross-device link" ;;
	*) echo "$1" ;;
	esac
}

# why: a failing command gave the system's reason (the injected error's
# text), not only the operation that failed
why() {
	# (the dynamic loader's own words for a library it cannot map)
	grep -q -e "$(errtext "$e")" -e "failed to map segment" "$T/err" ||
	    fail "exit $rc, and the message does not say why ($(errtext "$e"))"
}

# unique N SRC DEST: SRC with a Message-ID and bytes of its own
unique() {
	sed "s/^Message-ID: .*/Message-ID: <fi-$1@fault.test>/" "$2" > "$3"
	grep -q "^Message-ID: <fi-$1@fault.test>" "$3" ||
	    { printf 'Message-ID: <fi-%s@fault.test>\n' "$1"; cat "$2"; } > "$3"
}

SYSCALLS_FILTER="write:ENOSPC read:EIO openat:EMFILE fsync:EIO mmap:ENOMEM
	clone3:EAGAIN pipe2:EMFILE ftruncate:EIO pwrite64:ENOSPC pread64:EIO
	flock:ENOLCK fcntl:ENOLCK rename:EXDEV"

tstart=$(date +%s)

# --- setup --------------------------------------------------------------------
# the deliver and release commands: dd, whose writes of 512 bytes are
# many more than filter's or approve's own, so that a sweep of N reaches
# them too (cat copies with copy_file_range, which strace's sweep of
# write would never reach)
DD=$(command -v dd) || { echo "dd missing"; exit 99; }
# conf_write [DATABASE]: listgate.conf and the list demo
conf_write() {
	mkdir -p "$CONF/lists" || exit 99
	{
		printf 'tokens_dir = %s/tokens\n' "$T"
		# (init makes the cookie secret here, not in /var/lib)
		printf 'secret_file = %s/secret\n' "$T"
		echo 'lock_wait_ms = 200'
		[ -n "${1:-}" ] && printf 'database = %s\n' "$1"
		[ -n "${2:-}" ] && printf 'holder_socket = %s\n' "$2"
	} > "$CONF/listgate.conf"
	cat > "$CONF/lists/demo.conf" <<-EOF
	ham_cutoff = 0.5
	spam_cutoff = 0.9
	timeout = 4
	deliver = $DD bs=512 status=none of=$T/sink
	release = $DD bs=512 status=none of=$T/released
	EOF
}

if [ "${1:-}" != pg ]; then
	conf_write
	mkdir -p "$T/tokens"
	lg train --quiet --list demo --spam "$DATA"/spam[1-4].eml > /dev/null &&
	    lg train --quiet --list demo --ham "$DATA"/ham[1-4].eml > /dev/null ||
	    { echo "# training failed"; exit 99; }
	cp "$T/tokens/demo.kch" "$T/demo.kch.orig"
	# the list of the big post: dd copies it in 1 MiB blocks (in 512
	# bytes, the sweep would take minutes)
	cp "$T/tokens/demo.kch" "$T/tokens/big.kch"
	sed 's/ bs=512 / bs=1M /' "$CONF/lists/demo.conf" > "$CONF/lists/big.conf"

	# --- filter: a good post passes under Postfix and qmail -----------
	# a post larger than filter keeps in memory (LG_MAX_SPOOL_MEM, 32
	# MiB): spooled to a temporary file, mapped, and copied for deliver
	{ cat "$DATA/ham-test.eml"
	  yes "an ordinary line of a long post, again and again" |
	    head -c 34000000; } > "$T/big.eml"
	k=0
	for mta in postfix qmail; do
		for se in $(nomap "$SYSCALLS_FILTER big:write:ENOSPC big:mmap:ENOMEM
		    big:openat:EMFILE big:read:EIO big:memfd_create:EMFILE"); do
			src=$DATA/ham-test.eml list=demo
			case $se in big:*) src=$T/big.eml se=${se#big:} list=big ;; esac
			sc=${se%%:*} e=${se#*:}
			unique "$mta-$sc" "$src" "$T/post"
			IN=$T/post
			base=$(base_of "$sc")
			total=$(count "$sc" "$LISTGATE" --allow-root --config "$CONF" \
			    filter --list $list --mta "$mta" -f s@example.net -- $list@l)
			for w in $(points $((base + 1)) $((total + 1))); do
				k=$((k + 1)); case_n=$((case_n + 1))
				what="filter --mta $mta, $sc #$w fails with $e ($(basename "$src"))"
				rm -f "$T/sink"
				inject "$sc" "$e" "$w" "$LISTGATE" --allow-root \
				    --config "$CONF" filter --list $list --mta "$mta" \
				    -f s@example.net -- $list@l
				case $mta:$rc in
				postfix:0)
					cmp -s "$T/sink" "$T/post" ||
					    fail "exit 0, and the deliver command did not get the post: LOST" ;;
				postfix:75|qmail:111) said ;;
				qmail:0) ;;
				*) fail "exit $rc: neither delivered nor a temporary failure" ;;
				esac
				readable $list
			done
		done
		tally "filter --mta $mta: a good post is delivered or deferred"
	done

	# --- train: one batch, whole or not at all -------------------------
	kchashmgr list -pv -px "$T/demo.kch.orig" | LC_ALL=C sort > "$T/before.dump"
	lg train --quiet --list demo --spam "$DATA/spam-test.eml" "$DATA/ham-test.eml" > /dev/null ||
	    exit 99
	kchashmgr list -pv -px "$T/tokens/demo.kch" | LC_ALL=C sort > "$T/after.dump"
	# an input that cannot be read is named and skipped (listgate(1)):
	# the other one learnt alone
	for c in spam ham; do
		cp "$T/demo.kch.orig" "$T/tokens/demo.kch"
		lg train --quiet --list demo --spam "$DATA/$c-test.eml" > /dev/null || exit 99
		kchashmgr list -pv -px "$T/tokens/demo.kch" | LC_ALL=C sort > "$T/only-$c.dump"
	done
	IN=/dev/null
	for se in $(nomap "write:ENOSPC pwrite64:ENOSPC fsync:EIO openat:EMFILE
	    read:EIO pread64:EIO mmap:ENOMEM ftruncate:EIO fallocate:ENOSPC
	    rename:EXDEV flock:ENOLCK fcntl:ENOLCK"); do
		sc=${se%%:*} e=${se#*:}
		cp "$T/demo.kch.orig" "$T/tokens/demo.kch"
		base=$(base_of "$sc")
		total=$(count "$sc" "$LISTGATE" --allow-root --config "$CONF" \
		    train --quiet --list demo --spam "$DATA/spam-test.eml" "$DATA/ham-test.eml")
		for w in $(points $((base + 1)) $((total + 1))); do
			case_n=$((case_n + 1))
			what="train, $sc #$w fails with $e"
			cp "$T/demo.kch.orig" "$T/tokens/demo.kch"
			rm -f "$T/tokens/demo.kch.wal" "$T/tokens/"*.tmp 2>/dev/null
			inject "$sc" "$e" "$w" "$LISTGATE" --allow-root --config "$CONF" \
			    train --quiet --list demo --spam "$DATA/spam-test.eml" "$DATA/ham-test.eml"
			readable demo || continue
			kchashmgr list -pv -px "$T/tokens/demo.kch" | LC_ALL=C sort > "$T/now.dump"
			if [ "$rc" -eq 0 ]; then
				cmp -s "$T/now.dump" "$T/after.dump" ||
				    fail "exit 0, and the token file is not what a clean run makes"
			else
				said
				why
				skipped=
				for c in spam:ham ham:spam; do
					grep -q "${c%:*}-test.eml: .*$(errtext "$e")" "$T/err" &&
					    grep -q "1 input could not be read" "$T/err" &&
					    cmp -s "$T/now.dump" "$T/only-${c#*:}.dump" &&
					    skipped=1
				done
				[ -n "$skipped" ] ||
				    cmp -s "$T/now.dump" "$T/before.dump" ||
				    cmp -s "$T/now.dump" "$T/after.dump" ||
				    fail "exit $rc, and the token file is neither as before nor as after"
			fi
		done
	done
	tally "train: the token file as before or as after, and readable"

	pg_part
	echo "1..$n"
	[ "$fails" -eq 0 ]
	exit
fi

# --- inside tests/pg.sh: the hold path, the holder, the decisions -----------
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
rows() { sql "SELECT count(*) FROM held_posts WHERE message_id = '<fi-$1@fault.test>'"; }
DB="host=$PGHOST port=$PGPORT dbname=$PGDATABASE"
MAIL=$T/mail
SOCK=$T/holder.sock
conf_write "$DB"
mkdir -p "$T/tokens" "$MAIL"
cat > "$T/notify.sh" <<EOF
#!/bin/sh
# notify.sh MODERATOR ID: one file per notice; fails while notify-fail is
test -e "$T/notify-fail" && exit 75
cat > "$MAIL/\$2.\$1.tmp" && mv "$MAIL/\$2.\$1.tmp" "$MAIL/\$2.\$1"
EOF
cat >> "$CONF/lists/demo.conf" <<EOF
moderators = alice@example.org
moderation_address = demo-moderate@lists.example.org
notify = /bin/sh $T/notify.sh {moderator} {id}
notify_max_per_hour = 100000
EOF
lg init > /dev/null 2>&1 || exit 99
lg migrate -q || exit 99
journal_train demo || exit 99
lg sync -q --list demo || exit 99
# holds do not notify (only the notify part below turns it on)
touch "$T/notify-fail"

# (a send that fails on a live connection leaves libpq waiting for an
# answer the server never sends: the watchdog's 4 s each, so only in
# the full sweep; the commands without a watchdog never get it)
SYSCALLS_HOLD="write:ENOSPC read:EIO openat:EMFILE mmap:ENOMEM
	recvfrom:ECONNRESET socket:EMFILE clone3:EAGAIN"
[ "$SWEEP" = full ] && SYSCALLS_HOLD="$SYSCALLS_HOLD sendto:ECONNRESET
	connect:EAGAIN poll:EINTR pipe2:EMFILE fsync:EIO"

# --- filter holds a spam post, itself -----------------------------------------
k=0
for mta in postfix qmail; do
	for se in $(nomap "$SYSCALLS_HOLD"); do
		sc=${se%%:*} e=${se#*:}
		unique "h-$mta-$sc" "$DATA/spam-test.eml" "$T/post"
		IN=$T/post
		base=$(base_of "$sc")
		total=$(count "$sc" "$LISTGATE" --allow-root --config "$CONF" \
		    filter --list demo --mta "$mta" -f s@example.net -- demo@l)
		for w in $(points $((base + 1)) $((total + 1))); do
			k=$((k + 1)); case_n=$((case_n + 1))
			what="filter --mta $mta holding, $sc #$w fails with $e"
			unique "h$k" "$DATA/spam-test.eml" "$T/post"
			rm -f "$T/sink"
			inject "$sc" "$e" "$w" "$LISTGATE" --allow-root \
			    --config "$CONF" filter --list demo --mta "$mta" \
			    -f s@example.net -- demo@l
			r=$(rows "h$k")
			case $mta:$rc in
			postfix:0|qmail:99)
				[ "$r" = 1 ] || fail "exit $rc, and $r rows held: LOST" ;;
			postfix:75|qmail:111)
				said
				[ "$r" -le 1 ] || fail "exit $rc, and $r rows" ;;
			*) fail "exit $rc: neither held nor a temporary failure" ;;
			esac
			[ -e "$T/sink" ] && fail "a spam post was delivered"
			readable demo
		done
	done
	tally "filter --mta $mta: a spam post is held or deferred"
done

# --- filter holds through listgate holder ------------------------------------
hpid=
spid=
start_holder() {	# start_holder [STRACE-ARGS...]
	rm -f "$T/holder.log"
	"$@" "$LISTGATE" --allow-root --config "$CONF" holder --workers 1 \
	    > "$T/holder.log" 2>&1 &
	spid=$!
	# the socket (its log may be the writes that fail); the holder
	# itself, strace's child (strace ignores SIGTERM)
	i=0
	while [ ! -S "$SOCK" ] && [ $i -lt 100 ]; do
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.05; i=$((i + 1))
	done
	hpid=$spid
	if [ $# -gt 0 ]; then
		hpid=$(ps -o pid= --ppid "$spid" | head -n 1 | tr -d ' ')
		[ -n "$hpid" ] || hpid=$spid
	fi
}
stop_holder() {
	[ -n "$hpid" ] || return 0
	kill "$hpid" 2>/dev/null
	wait "$spid" 2>/dev/null
	hpid=
	rm -f "$SOCK"
}
conf_write "$DB" "$SOCK"
cat >> "$CONF/lists/demo.conf" <<EOF
moderators = alice@example.org
moderation_address = demo-moderate@lists.example.org
notify = /bin/sh $T/notify.sh {moderator} {id}
notify_max_per_hour = 100000
EOF
# the holder's calls fail (one worker: its calls are counted from its
# start); filter itself runs clean and must hold the post either way
IN=/dev/null
HOLDER_CALLS="read:EIO accept4:EMFILE recvfrom:ECONNRESET mmap:ENOMEM"
[ "$SWEEP" = full ] && HOLDER_CALLS="$HOLDER_CALLS write:EPIPE
	sendto:ECONNRESET poll:EINTR openat:EMFILE"
for se in $(nomap "$HOLDER_CALLS"); do
	sc=${se%%:*} e=${se#*:}
	for w in $(points 1 12 | head -n 3); do
		k=$((k + 1)); case_n=$((case_n + 1))
		what="filter with the holder's $sc #$w failing with $e"
		start_holder strace -f -qq -o /dev/null -e trace="$sc" \
		    -e inject="$sc:error=$e:when=$w+"
		unique "h$k" "$DATA/spam-test.eml" "$T/post"
		lg filter --list demo --mta qmail -f s@example.net -- demo@l \
		    < "$T/post" > "$T/out" 2> "$T/err"
		rc=$?
		held_once "h$k"
		stop_holder
	done
done
# filter's own calls fail while it talks to a clean holder
start_holder
for se in write:EPIPE read:ECONNRESET connect:EAGAIN socket:EMFILE \
    poll:EINTR; do
	sc=${se%%:*} e=${se#*:}
	unique "hc-$sc" "$DATA/spam-test.eml" "$T/post"
	IN=$T/post
	total=$(count "$sc" "$LISTGATE" --allow-root --config "$CONF" \
	    filter --list demo --mta qmail -f s@example.net -- demo@l)
	base=$(base_of "$sc")
	for w in $(points $((base + 1)) $((total + 1))); do
		k=$((k + 1)); case_n=$((case_n + 1))
		what="filter to the holder, $sc #$w fails with $e"
		unique "h$k" "$DATA/spam-test.eml" "$T/post"
		inject "$sc" "$e" "$w" "$LISTGATE" --allow-root --config "$CONF" \
		    filter --list demo --mta qmail -f s@example.net -- demo@l
		held_once "h$k"
	done
done
stop_holder
tally "filter through the holder: held or deferred"
conf_write "$DB"
cat >> "$CONF/lists/demo.conf" <<EOF
moderators = alice@example.org
moderation_address = demo-moderate@lists.example.org
notify = /bin/sh $T/notify.sh {moderator} {id}
notify_max_per_hour = 100000
EOF

# --- approve and reject ---------------------------------------------------
# hold_one K: a post of its own held (qhold); its id
hold_one() {
	unique "$1" "$DATA/spam-test.eml" "$T/post"
	"$QHOLD" demo "$T/post" 0.99
}
IN=/dev/null
SYSCALLS_DECIDE="write:ENOSPC read:EIO openat:EMFILE mmap:ENOMEM
	recvfrom:ECONNRESET clone3:EAGAIN pipe2:EMFILE fsync:EIO
	pwrite64:ENOSPC rename:EXDEV memfd_create:EMFILE wait4:EINTR"
for cmd in approve reject; do
	for se in $(nomap "$SYSCALLS_DECIDE"); do
		sc=${se%%:*} e=${se#*:}
		k=$((k + 1))
		id=$(hold_one "d$k") || exit 99
		base=$(base_of "$sc")
		total=$(count "$sc" "$LISTGATE" --allow-root --config "$CONF" \
		    "$cmd" "$id")
		for w in $(points $((base + 1)) $((total + 1))); do
			k=$((k + 1)); case_n=$((case_n + 1))
			what="$cmd, $sc #$w fails with $e"
			id=$(hold_one "d$k") || exit 99
			rm -f "$T/released"
			inject "$sc" "$e" "$w" "$LISTGATE" --allow-root \
			    --config "$CONF" "$cmd" "$id"
			st=$(sql "SELECT status FROM held_posts WHERE id = $id")
			case $cmd:$rc:$st in
			approve:0:approved)
				cmp -s "$T/released" "$T/post" ||
				    fail "exit 0, status approved, and the release command did not get the post: LOST" ;;
			reject:0:rejected) ;;
			*:0:*) fail "exit 0, and the post is $st" ;;
			approve:*:held)
				said
				rm -f "$T/released"
				lg approve "$id" > /dev/null 2>&1 &&
				    cmp -s "$T/released" "$T/post" ||
				    fail "exit $rc, held, and a clean approve does not release it" ;;
			approve:*:releasing)
				said
				grep -q "$id" "$T/err" ||
				    fail "exit $rc, releasing, and the message does not name the post" ;;
			approve:*:approved)
				said
				cmp -s "$T/released" "$T/post" ||
				    fail "exit $rc, status approved, and the release command did not get the post: LOST" ;;
			reject:*:held|reject:*:rejected) said ;;
			*) fail "exit $rc, and the post is '$st'" ;;
			esac
			readable demo
		done
	done
	tally "$cmd: the post decided and released, or still held"
done

# --- sync: every journal event applied once --------------------------------
cp "$T/tokens/demo.kch" "$T/sync0.kch"
sync_events() {
	"$QHOLD" -j demo spam "$DATA/spam-test.eml" > /dev/null &&
	    "$QHOLD" -j demo ham "$DATA/ham-test.eml" > /dev/null
}
lg sync -q --list demo || exit 99
cp "$T/tokens/demo.kch" "$T/sync0.kch"
sync_events || exit 99
lg sync -q --list demo || exit 99
kchashmgr list -pv -px "$T/tokens/demo.kch" | LC_ALL=C sort > "$T/sync.ref"
for se in $(nomap "write:ENOSPC pwrite64:ENOSPC fsync:EIO openat:EMFILE
    read:EIO pread64:EIO mmap:ENOMEM ftruncate:EIO fallocate:ENOSPC
    rename:EXDEV recvfrom:ECONNRESET flock:ENOLCK fcntl:ENOLCK"); do
	sc=${se%%:*} e=${se#*:}
	cp "$T/sync0.kch" "$T/tokens/demo.kch"
	base=$(base_of "$sc")
	total=$(count "$sc" "$LISTGATE" --allow-root --config "$CONF" sync -q --list demo)
	for w in $(points $((base + 1)) $((total + 1))); do
		case_n=$((case_n + 1))
		what="sync, $sc #$w fails with $e"
		cp "$T/sync0.kch" "$T/tokens/demo.kch"
		inject "$sc" "$e" "$w" "$LISTGATE" --allow-root --config "$CONF" \
		    sync -q --list demo
		if [ "$rc" -ne 0 ]; then
			said
			case $sc in recvfrom) ;; *) why ;; esac
		fi
		readable demo || continue
		lg sync -q --list demo > /dev/null 2> "$T/err" ||
		    { fail "a clean sync after it fails"; continue; }
		kchashmgr list -pv -px "$T/tokens/demo.kch" | LC_ALL=C sort > "$T/now.dump"
		cmp -s "$T/now.dump" "$T/sync.ref" ||
		    fail "exit $rc, and the token file after a clean sync differs from one sync's"
	done
done
tally "sync: each journal event applied once, the token file readable"

# --- notify --pending: each notice sent or still pending -----------------------
for se in write:ENOSPC read:EIO openat:EMFILE recvfrom:ECONNRESET \
    clone3:EAGAIN memfd_create:EMFILE wait4:EINTR; do
	sc=${se%%:*} e=${se#*:}
	for w in $(points 1 8 | head -n 4); do
		k=$((k + 1)); case_n=$((case_n + 1))
		what="notify --pending, $sc #$w fails with $e"
		touch "$T/notify-fail"
		unique "n$k" "$DATA/spam-test.eml" "$T/post"
		lg filter --list demo --mta qmail -f s@example.net -- demo@l \
		    < "$T/post" > /dev/null 2>&1
		id=$(sql "SELECT id FROM held_posts WHERE message_id = '<fi-n$k@fault.test>'")
		[ -n "$id" ] || { fail "the post was not held"; continue; }
		rm -f "$T/notify-fail"
		inject "$sc" "$e" "$w" "$LISTGATE" --allow-root --config "$CONF" \
		    notify --pending
		[ "$rc" -eq 0 ] || said
		st=$(sql "SELECT state FROM notice_outbox WHERE post_id = $id")
		case $st in
		sent) [ -e "$MAIL/$id.alice@example.org" ] ||
			fail "the outbox says sent, and no notice went out: LOST" ;;
		pending) ;;
		*) fail "the notice is '$st'" ;;
		esac
		sql "DELETE FROM notice_outbox WHERE state = 'pending'" > /dev/null
	done
done
tally "notify --pending: a notice sent or still pending"

echo "1..$n"
[ "$fails" -eq 0 ]

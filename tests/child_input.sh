#!/bin/sh
# child_input.sh - a deliver or release command gets the whole post even
# when the listgate process that started it dies first (SIGKILL; approve
# stopped by SIGTERM or SIGINT lets the release end and records it), and
# filter's SIGTERM and SIGINT stop
# the deliver command with it: nothing delivered, never a part; and
# filter's SIGTERM or watchdog (SIGALRM) stops its member_check too
#
# The command says it started, waits (before reading a byte) until the
# test has killed its parent with SIGKILL, SIGTERM or SIGINT, then
# copies its standard input to a sink and exits 0.  The sink must hold
# the complete post (200 KiB, more than a pipe buffer): never a part of
# it that the command took for all of it.  `filter` (Postfix dialect,
# `deliver`) here; `approve` (`release`) under tests/pg.sh.  Works in a
# mktemp -d directory removed at the end; never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
QHOLD=$top_builddir/tests/qhold
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-child.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
mkdir -p "$CONF/lists" || exit 99

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), pg_part
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
command -v python3 >/dev/null 2>&1 || { echo "# python3 is needed"; exit 99; }

# the post: a ham post grown to 200 KiB
{
	cat "$DATA/ham-test.eml"
	i=0
	while [ $i -lt 3300 ]; do
		echo "Line $i: the build of the release branch went through again."
		i=$((i + 1))
	done
} > "$T/big.eml"
size=$(wc -c < "$T/big.eml")
[ "$size" -ge 200000 ] || { echo "# the post is only $size bytes"; exit 99; }

# the command: "started" with its pid, then wait for $T/go, then copy
cat > "$T/slow.sh" <<END
#!/bin/sh
echo \$\$ > "$T/started.\$1"
while [ ! -e "$T/go" ]; do sleep 0.05; done
cat > "$T/sink.\$1.tmp" && mv "$T/sink.\$1.tmp" "$T/sink.\$1"
END

# bg FEED CMD...: start CMD in the background with SIGINT and SIGTERM at
# their defaults (a shell's background job ignores SIGINT), the post
# written to its standard input through a pipe, as an MTA does (FEED 1)
# or nothing there (FEED 0).  $bgpid is the helper that waits for it and
# exits with its status (128 + the signal that killed it); CMD's own pid
# is in $T/pid.
bg() {
	feed=$1
	shift
	python3 -c 'import os, signal, sys
feed, pidfile, post = sys.argv[1] == "1", sys.argv[2], sys.argv[3]
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.dup2(r if feed else os.open("/dev/null", os.O_RDONLY), 0)
    os.close(r)
    os.close(w)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.execv(sys.argv[4], sys.argv[4:])
os.close(r)
with open(pidfile + ".tmp", "w") as f:
    f.write("%d\n" % pid)
os.rename(pidfile + ".tmp", pidfile)
if feed:
    data = open(post, "rb").read()
    try:
        while data:
            data = data[os.write(w, data):]
    except BrokenPipeError:
        pass
os.close(w)
st = os.waitpid(pid, 0)[1]
sys.exit(128 + os.WTERMSIG(st) if os.WIFSIGNALED(st) else os.WEXITSTATUS(st))
' "$feed" "$T/pid" "$T/big.eml" "$@" &
	bgpid=$!
}
# wait_for FILE PID: until FILE exists, PID has gone, or 30 s
wait_for() {
	i=0
	while [ ! -e "$1" ] && kill -0 "$2" 2>/dev/null && [ $i -lt 600 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	[ -e "$1" ]
}

# kill_parent WHAT TAG SIG FEED CMD...: run CMD (a listgate command that
# starts slow.sh TAG; the post on its input when FEED is 1), kill it with
# SIG once slow.sh runs, let slow.sh read, and check what reached the
# sink: the whole post when SIG killed listgate, nothing when listgate
# handles SIG by stopping the command with it (filter's SIGTERM and
# SIGINT: a deliver that went on would deliver a post the MTA retries)
kill_parent() {
	what=$1 tag=$2 sig=$3
	shift 3
	rm -f "$T/go" "$T/pid"
	bg "$@"
	if ! wait_for "$T/started.$tag" "$bgpid"; then
		bad "$what: the command started"
		kill -KILL "$(cat "$T/pid")" 2>/dev/null
		wait "$bgpid" 2>/dev/null
		return
	fi
	kill -"$sig" "$(cat "$T/pid")"
	wait "$bgpid" 2>/dev/null
	st=$?
	stops=
	[ "$what" = filter ] && [ "$sig" != KILL ] && stops=1
	if [ -n "$stops" ]; then
		check "$what: SIG$sig ends it with a temporary failure (status $st)" \
		    test "$st" -eq 75
	else
		check "$what: listgate died of SIG$sig (status $st)" \
		    test "$st" -gt 128
	fi
	: > "$T/go"
	cpid=$(cat "$T/started.$tag")
	i=0
	while kill -0 "$cpid" 2>/dev/null && [ $i -lt 600 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	if [ -n "$stops" ]; then
		check "$what after SIG$sig: the command was stopped with it, nothing delivered" \
		    test ! -e "$T/sink.$tag" -a ! -e "$T/sink.$tag.tmp"
	elif [ -e "$T/sink.$tag" ] && cmp -s "$T/sink.$tag" "$T/big.eml"; then
		ok "$what after SIG$sig: the command read the whole post"
	else
		got=$(cat "$T/sink.$tag" 2>/dev/null | wc -c)
		bad "$what after SIG$sig: the command read the whole post (got $got of $size bytes)"
	fi
}

if [ "${1:-}" = pg ]; then
	# --- inside tests/pg.sh: approve and release ---------------------
	printf 'tokens_dir = %s/tokens\n' "$T" > "$CONF/listgate.conf"
	lg migrate -q || exit 99
	for sig in KILL TERM INT; do
		l=r-$(echo "$sig" | tr A-Z a-z)
		printf 'release = /bin/sh %s/slow.sh {list}\n' "$T" \
		    > "$CONF/lists/$l.conf"
		id=$("$QHOLD" "$l" "$T/big.eml" 0.9) || exit 99
		if [ "$sig" = KILL ]; then
			kill_parent "approve" "$l" "$sig" 0 "$LISTGATE" \
			    --allow-root --config "$CONF" approve "$id"
			st=$(psql -X -A -t -q -c "SELECT status FROM held_posts WHERE id = $id")
			check "approve after SIG$sig: the post stays 'releasing' (got $st)" \
			    test "$st" = releasing
			continue
		fi
		# SIGTERM and SIGINT during the release: approve lets it
		# end and records its outcome (approve_stop.sh has the rest)
		rm -f "$T/go" "$T/pid"
		bg 0 "$LISTGATE" --allow-root --config "$CONF" approve "$id"
		if ! wait_for "$T/started.$l" "$bgpid"; then
			bad "approve: the command started"
			kill -KILL "$(cat "$T/pid")" 2>/dev/null
			wait "$bgpid" 2>/dev/null
			continue
		fi
		kill -"$sig" "$(cat "$T/pid")"
		sleep 0.2
		: > "$T/go"
		wait "$bgpid" 2>/dev/null
		rc=$?
		check "approve: SIG$sig during the release lets it end (status $rc)" \
		    test "$rc" -eq 0
		check "approve after SIG$sig: the command read the whole post" \
		    cmp -s "$T/sink.$l" "$T/big.eml"
		st=$(psql -X -A -t -q -c "SELECT status FROM held_posts WHERE id = $id")
		check "approve after SIG$sig: the post is recorded approved (got $st)" \
		    test "$st" = approved
	done
	echo "1..$n"
	[ $fails -eq 0 ]
	exit
fi

# --- filter under Postfix: deliver ------------------------------------
{
	echo 'tokens_dir = tokens'
	echo 'mta = postfix'
} > "$CONF/listgate.conf"
printf 'ham_cutoff = 1\nspam_cutoff = 1\n' > "$CONF/lists/base.conf"
lg train --quiet --list base --ham "$DATA"/ham[1-4].eml >/dev/null ||
    { echo "# training failed"; exit 99; }
for sig in KILL TERM INT; do
	l=d-$(echo "$sig" | tr A-Z a-z)
	printf 'ham_cutoff = 1\nspam_cutoff = 1\ndeliver = /bin/sh %s/slow.sh {list}\n' \
	    "$T" > "$CONF/lists/$l.conf"
	cp "$CONF/tokens/base.kch" "$CONF/tokens/$l.kch"
	kill_parent "filter" "$l" "$sig" 1 "$LISTGATE" --allow-root --config "$CONF" \
	    filter --mta postfix --list "$l" -f a@example.org -- \
	    "$l@example.org"
done

# --- filter's member_check: stopped with the filter too --------------------
# (it runs in a process group of its own; left alone it would go on
# after the post was deferred, for as long as it takes)
cat > "$T/member.sh" <<END
#!/bin/sh
echo \$\$ > "$T/member.pid"
exec sleep 30
END
chmod +x "$T/member.sh"
for sig in TERM ALRM; do
	l=m-$(echo "$sig" | tr A-Z a-z)
	printf 'ham_cutoff = 1\nspam_cutoff = 1\ndeliver = /bin/true\nmember_check = %s/member.sh {sender}\nmember_check_ms = 5000\n' \
	    "$T" > "$CONF/lists/$l.conf"
	cp "$CONF/tokens/base.kch" "$CONF/tokens/$l.kch"
	rm -f "$T/member.pid" "$T/pid"
	bg 1 "$LISTGATE" --allow-root --config "$CONF" filter --mta postfix \
	    --list "$l" -f a@example.org -- "$l@example.org"
	if ! wait_for "$T/member.pid" "$bgpid"; then
		bad "filter: member_check started"
		kill -KILL "$(cat "$T/pid")" 2>/dev/null
		wait "$bgpid" 2>/dev/null
		continue
	fi
	kill -"$sig" "$(cat "$T/pid")"
	wait "$bgpid" 2>/dev/null
	st=$?
	check "filter in member_check: SIG$sig defers (status $st)" test "$st" -eq 75
	mpid=$(cat "$T/member.pid")
	# gone, or a zombie nobody reaps in a container without an init
	i=0
	while [ $i -lt 40 ]; do
		case $(ps -o stat= -p "$mpid" 2>/dev/null) in
		''|Z*) break ;;
		esac
		sleep 0.05
		i=$((i + 1))
	done
	s=$(ps -o stat= -p "$mpid" 2>/dev/null)
	kill -KILL "$mpid" 2>/dev/null
	check "... and member_check was stopped with it (state '$s')" \
	    test -z "$s" -o "${s#Z}" != "$s"
done

pg_part
echo "1..$n"
[ $fails -eq 0 ]

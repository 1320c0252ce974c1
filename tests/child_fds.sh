#!/bin/sh
# child_fds.sh - deliver, release, notify and member_check start with
# standard input, output and error and no other descriptor of ours:
# not the token file (a program could write it, and one that goes on
# running keeps a file a compaction replaced alive), not the database's
# socket, not the web server's connections, not what our own caller
# left open
#
# Each command execs `ls -l /proc/self/fd` into a file: what ls shows
# beyond 0, 1, 2 and its own listing of the directory came from us.
# Each listgate runs with descriptor 7 (and 9) open: what an MTA or a
# shell may leave to its commands.  Under tests/pg.sh `approve` (release),
# `filter` holding a post (notify) and `listgate web` deciding one
# (release; its sync thread has token files open meanwhile).  Works in
# a mktemp -d directory removed at the end; never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
QHOLD=$top_builddir/tests/qhold
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-fds.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
mkdir -p "$CONF/lists" || exit 99

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), pg_part
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }

# the command: the descriptors it has to $T/fds.$1
cat > "$T/fds.sh" <<END
#!/bin/sh
exec ls -l /proc/self/fd > "$T/fds.\$1"
END

# only_std FILE: the listing FILE shows no descriptor but 0, 1, 2 and
# ls's own (its directory, /proc/PID/fd); the others to the log
only_std() {
	test -s "$1" || return 1
	sed -n 's/.* \([0-9][0-9]*\) -> \(.*\)$/\1 \2/p' "$1" |
	    grep -v -e '^[012] ' -e '^[0-9]* /proc/[0-9]*/fd$' > "$1.extra"
	[ -s "$1.extra" ] && sed 's/^/#   also: /' "$1.extra"
	test ! -s "$1.extra"
}

if [ "${1:-}" = pg ]; then
	# --- inside tests/pg.sh ------------------------------------------
	printf 'tokens_dir = %s/tokens\nsecret_file = %s/secret\n' "$T" "$T" \
	    > "$CONF/listgate.conf"
	printf 'release = /bin/sh %s/fds.sh rel\n' "$T" > "$CONF/lists/rel.conf"
	{
		echo 'ham_cutoff = 0.01'
		echo 'spam_cutoff = 0.02'
		echo 'moderators = mod@example.org'
		echo 'moderation_address = ntf-moderate@lists.example.org'
		printf 'notify = /bin/sh %s/fds.sh ntf\n' "$T"
		printf 'release = /bin/sh %s/fds.sh web\n' "$T"
	} > "$CONF/lists/ntf.conf"
	lg init > /dev/null 2>&1 || exit 99
	lg migrate -q || exit 99

	# approve: release, with the database's connection open
	id=$("$QHOLD" rel "$DATA/spam1.eml" 0.9) || exit 99
	: > "$T/stray"
	lg approve "$id" > "$T/out" 2> "$T/err" 7< "$T/stray"
	check "approve exits 0" test $? -eq 0
	check "release has only descriptors 0, 1 and 2" only_std "$T/fds.rel"

	# filter holds a post: notify
	journal_train ntf || exit 99
	lg sync -q --list ntf || exit 99
	lg filter --list ntf --mta qmail -f s@example.net -- \
	    ntf@lists.example.org < "$DATA/spam-test.eml" > "$T/out" 2>&1 \
	    7< "$T/stray"
	check "filter holds the post (exit 99)" test $? -eq 99
	check "notify has only descriptors 0, 1 and 2" only_std "$T/fds.ntf"

	# listgate web: release, with its listening socket, a client's
	# connection and the sync thread's token file open
	if command -v curl > /dev/null 2>&1; then
		. "$top_srcdir/tests/web_lib.sh"
		printf 'bob-secret-12\n' | lg user add bob --lists all \
		    > /dev/null || exit 99
		id=$(psql -X -q -A -t -c "SELECT max(id) FROM held_posts
		    WHERE list = 'ntf'") || exit 99
		web_start 7< "$T/stray" || exit 99
		req POST "/api/lists/ntf/held/$id" -u bob:bob-secret-12 \
		    -d action=approve
		check "web approves (200)" test "$code" = 200
		web_stop
		check "web's release has only descriptors 0, 1 and 2" \
		    only_std "$T/fds.web"
	else
		echo "# SKIP listgate web: curl is not installed"
	fi
	echo "1..$n"
	[ $fails -eq 0 ]
	exit
fi

# --- filter under Postfix: deliver, member_check ------------------------
{
	echo 'tokens_dir = tokens'
	echo 'mta = postfix'
} > "$CONF/listgate.conf"
{
	echo 'ham_cutoff = 1'
	echo 'spam_cutoff = 1'
	printf 'deliver = /bin/sh %s/fds.sh dl\n' "$T"
	printf 'member_check = /bin/sh %s/fds.sh mc {sender}\n' "$T"
} > "$CONF/lists/dl.conf"
lg train --quiet --list dl --ham "$DATA"/ham[1-4].eml >/dev/null ||
    { echo "# training failed"; exit 99; }
: > "$T/stray"
lg filter --mta postfix --list dl -f s@example.org -- dl@example.org \
    < "$DATA/ham-test.eml" > "$T/out" 2> "$T/err" 7< "$T/stray" 9>> "$T/stray"
check "filter delivered (exit 0)" test $? -eq 0
check "deliver has only descriptors 0, 1 and 2" only_std "$T/fds.dl"
check "member_check has only descriptors 0, 1 and 2" only_std "$T/fds.mc"

pg_part
echo "1..$n"
[ $fails -eq 0 ]

#!/bin/sh
# torture_filter.sh - `listgate filter` with the n-th allocation failing,
# for every n (STYLE.md: "fail the n-th allocation for every n and expect
# defer, never a crash")
#
# A ham and a spam post go through `filter --mta postfix` and `--mta
# qmail`; every fixture of tests/data/mail through `--mta qmail`.  Each
# run must end in the post's own outcome or in defer (75 / 111), never
# in a signal, another exit code or a sanitizer report (tests/
# torture_lib.sh has the loop).  Under Postfix an exit 0 for ham must
# mean the `deliver` command got the post byte for byte, and a defer
# must mean it got nothing (no delivery the MTA would repeat).  The hold
# path runs under tests/pg.sh (skipped without a PostgreSQL server):
# there an exit "held" must mean exactly one new row and a defer none.
# Works in a mktemp -d directory removed at the end; never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
DATA=$top_srcdir/tests/data/train
MAIL=$top_srcdir/tests/data/mail
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-torture-filter.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
SINK=$T/sink

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), pg_part, lock_file
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
. "$top_srcdir/tests/torture_lib.sh"

setup_conf() {
	rm -rf "$CONF"
	mkdir -p "$CONF/lists" || exit 99
	{
		echo 'tokens_dir = tokens'
		echo 'lock_wait_ms = 2000'
		[ -n "${1:-}" ] && echo "database = \"$1\""
	} > "$CONF/listgate.conf"
	{
		printf 'ham_cutoff = 0.5\nspam_cutoff = 0.9\n'
		printf 'deliver = /bin/sh -c "cat > %s"\n' "$SINK"
	} > "$CONF/lists/demo.conf"
	# with a database, train goes through its journal: schema first
	if [ -n "${1:-}" ]; then
		lg migrate >/dev/null || { echo "# migrate failed"; exit 99; }
	fi
	lg train --quiet --list demo --spam "$DATA"/spam[1-4].eml >/dev/null &&
	    lg train --quiet --list demo --ham "$DATA"/ham[1-4].eml >/dev/null ||
	    { echo "# training failed"; exit 99; }
}

# the runs: one post through filter (POST and MTA set by the caller)
run_filter() {
	rm -f "$SINK"
	"$LISTGATE" --allow-root --config "$CONF" filter --list demo --mta "$MTA" \
	    -f sender@example.net -- demo@lists.example.org < "$POST"
}

# Postfix, ham: 0 = delivered unchanged, 75 = nothing delivered
check_pf_pass() {
	if [ "$rc" -eq 0 ] && ! cmp -s "$SINK" "$POST"; then
		echo "n=$1: exit 0 but deliver did not get the post"
		return 1
	fi
	if [ "$rc" -ne 0 ] && [ -e "$SINK" ]; then
		echo "n=$1: exit $rc after deliver ran (a retry delivers twice)"
		return 1
	fi
	return 0
}

# never delivered (spam, or qmail where deliver is not used)
check_no_sink() {
	if [ -e "$SINK" ]; then
		echo "n=$1: deliver ran for a post that must not pass"
		return 1
	fi
	return 0
}

if [ "${1:-}" = pg ]; then
	# --- inside tests/pg.sh: the hold path ----------------------------
	setup_conf "host=$PGHOST port=$PGPORT user=$PGUSER dbname=$PGDATABASE"
	lg migrate >/dev/null 2>"$T/err" || { cat "$T/err"; exit 99; }
	rows() {
		psql -X -A -t -q -c "SELECT count(*) FROM held_posts" 2>/dev/null
	}
	# HELD = the exit code for "held": one row; any other exit: none.
	# The rows go after each run: the same bytes held again would be a
	# retry of the held post (stored once, migration 0002).
	check_hold() {
		now=$(rows)
		psql -X -q -c "DELETE FROM held_posts" >/dev/null 2>&1
		if [ "$rc" -eq "$HELD" ]; then want=1; else want=0; fi
		if [ "$now" != "$want" ]; then
			echo "n=$1: exit $rc left $now rows, want $want"
			return 1
		fi
		check_no_sink "$1"
	}
	psql -X -q -c "DELETE FROM held_posts" >/dev/null 2>&1
	POST=$DATA/spam-test.eml
	MTA=postfix HELD=0
	torture "filter --mta postfix, spam held in PostgreSQL" "0 75" \
	    run_filter check_hold
	MTA=qmail HELD=99
	torture "filter --mta qmail, spam held in PostgreSQL" "99 111" \
	    run_filter check_hold
	POST=$DATA/ham-test.eml MTA=postfix
	torture "filter --mta postfix, ham with a database" "0 75" \
	    run_filter check_pf_pass
	echo "1..$n"
	[ $fails -eq 0 ]
	exit
fi

setup_conf

# --- the pass path and the no-database defer ------------------------------
POST=$DATA/ham-test.eml MTA=postfix
torture "filter --mta postfix, ham delivered" "0 75" run_filter check_pf_pass
MTA=qmail
torture "filter --mta qmail, ham passed" "0 111" run_filter check_no_sink
POST=$DATA/spam-test.eml MTA=postfix
torture "filter --mta postfix, spam without a database" "75" run_filter \
    check_no_sink
MTA=qmail
torture "filter --mta qmail, spam without a database" "111" run_filter \
    check_no_sink

# --- a post past the in-memory spool (32 MiB): spooled to a file ---------------
{ cat "$DATA/ham-test.eml"
  awk 'BEGIN { s = sprintf("%0100d", 0); for (i = 0; i < 340000; i++) print s }'
} > "$T/big.eml"
run_filter_pipe() {
	rm -f "$SINK"
	cat "$POST" | "$LISTGATE" --allow-root --config "$CONF" filter --list demo \
	    --mta "$MTA" -f sender@example.net -- demo@lists.example.org
}
POST=$T/big.eml MTA=postfix
torture "filter --mta postfix, a 34 MB ham post on a pipe" "0 75" \
    run_filter_pipe check_pf_pass
rm -f "$T/big.eml"

# --- every parser fixture (MIME, codecs, charsets, HTML) under qmail ---------
# the outcome of each is its own business (pass, or defer for lack of a
# database); with a failing allocation it may only become a defer
MTA=qmail
for POST in "$MAIL"/*.eml; do
	rm -f "$SINK"
	"$LISTGATE" --allow-root --config "$CONF" filter --list demo --mta qmail \
	    -f s@x -- demo@l < "$POST" > /dev/null 2>&1
	want=$?
	case $want in
	0|111) ;;
	*) bad "${POST##*/}: exit $want without failures"; continue ;;
	esac
	[ $want -eq 111 ] && allowed=111 || allowed="$want 111"
	torture "filter --mta qmail, ${POST##*/}" "$allowed" run_filter \
	    check_no_sink
done

# --- the hold path, with a private PostgreSQL ----------------------------------
pg_part

echo "1..$n"
[ $fails -eq 0 ]

#!/bin/sh
# torture_hold.sh - what `listgate filter` stores with a held post, with
# the n-th allocation failing, for every n
#
# A spam post goes through `filter --mta postfix` and `--mta qmail` into
# a private PostgreSQL (tests/pg.sh; exit 77 without a server: holding
# is the point).  Every
# run must end in "held" or in defer (tests/torture_lib.sh has the
# loop), and a held post must carry what the clean run stored: its From,
# Subject and Message-ID and its deciding tokens (out of memory while
# reading them defers instead of holding a post without them).  Works in
# a mktemp -d directory removed at the end; never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
DATA=$top_srcdir/tests/data/train
if [ "${1:-}" != pg ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" pg
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-torture-hold.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), pg_part, lock_file
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
. "$top_srcdir/tests/torture_lib.sh"


# --- inside tests/pg.sh ---------------------------------------------------------
mkdir -p "$CONF/lists" || exit 99
{
	echo 'tokens_dir = tokens'
	echo 'lock_wait_ms = 2000'
	echo "database = \"host=$PGHOST port=$PGPORT user=$PGUSER dbname=$PGDATABASE\""
} > "$CONF/listgate.conf"
printf 'ham_cutoff = 0.5\nspam_cutoff = 0.9\ndeliver = /bin/false\n' \
    > "$CONF/lists/demo.conf"
lg migrate >/dev/null 2>"$T/err" || { cat "$T/err"; exit 99; }
lg train --quiet --list demo --spam "$DATA"/spam[1-4].eml >/dev/null &&
    lg train --quiet --list demo --ham "$DATA"/ham[1-4].eml >/dev/null ||
    { echo "# training failed"; exit 99; }

POST=$DATA/spam-test.eml
run_filter() {
	"$LISTGATE" --allow-root --config "$CONF" filter --list demo --mta "$MTA" \
	    -f sender@example.net -- demo@lists.example.org < "$POST"
}
# the stored headers and clues of every row, then removes them (the same
# bytes held again would be a retry of the held post)
rows() {
	psql -X -A -t -q -c "SELECT from_hdr, subject, message_id, clues
	    FROM held_posts ORDER BY id" 2>/dev/null
	psql -X -q -c "DELETE FROM held_posts" >/dev/null 2>&1
}
# held: one row, the clean run's; any other exit: no row
check_row() {
	rows > "$T/rows"
	if [ "$1" = 0 ]; then
		cp "$T/rows" "$T/base.rows"
		if ! grep -q 'Huge discount' "$T/rows" ||
		    ! grep -q 't1@cheap-pills' "$T/rows" ||
		    ! grep -q 'Deals Team' "$T/rows" ||
		    [ "$(wc -l < "$T/rows")" -lt 3 ]; then
			echo "n=0: the clean run stored no headers or clues:"
			head -n 3 "$T/rows"
			return 1
		fi
		return 0
	fi
	if [ "$rc" -eq "$HELD" ]; then
		if ! cmp -s "$T/rows" "$T/base.rows"; then
			echo "n=$1: held, but the row differs from the clean run's:"
			diff "$T/base.rows" "$T/rows" | head -n 6
			return 1
		fi
	elif [ -s "$T/rows" ]; then
		echo "n=$1: exit $rc left a row"
		return 1
	fi
	return 0
}

rows > /dev/null
MTA=postfix HELD=0
torture "filter --mta postfix, the held row" "0 75" run_filter check_row
MTA=qmail HELD=99
torture "filter --mta qmail, the held row" "99 111" run_filter check_row

echo "1..$n"
[ $fails -eq 0 ] && [ $n -gt 0 ]

#!/bin/sh
# cli_stdout.sh - what an administrator's command prints is its answer:
# when standard output cannot take it (here /dev/full, a full disk under
# a script's log), the command fails (exit 1) and says so on standard
# error; and `init` names the file it could not write.  The commands
# that need the database run in a part under tests/pg.sh (skipped
# without a server).  Works in a mktemp -d directory removed at the end;
# never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-out.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
. "$top_srcdir/tests/lib.sh"
[ -w /dev/full ] || { echo "cli_stdout: needs /dev/full"; exit 77; }
CONF=$T/conf
mkdir -p "$CONF" || exit 99
printf 'tokens_dir = %s/tokens\nsecret_file = %s/secret/key\n' "$T" "$T" \
    > "$CONF/listgate.conf"
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
run() { "$@" 2> "$T/err"; rc=$?; }
# full CMD...: exit 1 with stdout on /dev/full, saying so
full() {
	run lg "$@" > /dev/full
	if [ "$rc" -eq 1 ] &&
	    grep -q "cannot write the standard output" "$T/err"; then
		ok "$* > /dev/full: exit 1, saying so"
	else
		bad "$* > /dev/full: exit 1, saying so (exit $rc: $(head -1 "$T/err"))"
	fi
}

if [ "${1:-}" = pg ]; then
	# --- inside tests/pg.sh: the commands that checked nothing: sync,
	# rebuild, train, approve and notify exited 0 ----------------------
	: "${top_builddir:?set by make check}"
	DATA=$top_srcdir/tests/data/train
	mkdir -p "$CONF/lists" || exit 99
	printf 'cat > /dev/null\n' > "$T/rel.sh"
	printf 'release = /bin/sh %s/rel.sh\n' "$T" > "$CONF/lists/dev.conf"
	lg migrate -q || exit 99
	full train --list dev --spam "$DATA/spam1.eml"
	full sync
	full rebuild --list dev
	id=$("$top_builddir/tests/qhold" dev "$DATA/spam2.eml" 0.9) || exit 99
	full approve "$id"
	full notify --pending
	full stats
	# a listing that cannot be written stops (a reader gone: the rest
	# of a flood of held posts would be formatted for nothing)
	"$top_builddir/tests/qhold" -n dev "$DATA/spam2.eml" 300 > /dev/null ||
	    exit 99
	if command -v strace >/dev/null 2>&1 &&
	    strace -f -o /dev/null -e trace=none true 2>/dev/null; then
		for a in held "held --json"; do
			strace -o "$T/strace" -e trace=write "$LISTGATE" \
			    --allow-root --config "$CONF" $a > /dev/full \
			    2> "$T/err"
			rc=$?
			w=$(grep -c '^write(1,' "$T/strace")
			check "$a to a full disk stops at once (exit $rc, $w writes)" \
			    test "$rc" -eq 1 -a "$w" -le 2
		done
	else
		ok "# SKIP no strace (or no ptrace here): held stopping"
	fi
	echo "1..$n"
	[ "$fails" -eq 0 ]
	exit
fi

# --- --help and --version: every command's, but filter's and
# moderate's (they answer the MTA with their exit status) -------------------
full --help
full --version
for c in train score tokens held show approve reject discard expire \
    notify sync rebuild stats tune init migrate config holder web user; do
	full "$c" --help
done
full config keys

# --- init -----------------------------------------------------------------
# it exited 0 with what it did lost
full init
check "... having done its work all the same" \
    sh -c "test -d '$CONF/lists' && test -d '$T/tokens' && test -s '$T/secret/key'"
full init
run lg init > "$T/out"
check "init again, to a file: exit 0" test "$rc" -eq 0
check "... saying nothing changed" \
    grep -q "secret $T/secret/key exists: unchanged" "$T/out"

# the secret's write failing (strace's fault injection: the first
# write(2) is the secret's, standard output to a file being written at
# exit): exit 1 naming the secret, not the temporary file it removed
if command -v strace >/dev/null 2>&1 &&
    strace -f -o /dev/null -e trace=none true 2>/dev/null; then
	rm -rf "$T/secret"
	run strace -f -o /dev/null -e trace=write \
	    -e inject=write:error=ENOSPC:when=1 \
	    "$LISTGATE" --allow-root --config "$CONF" init > "$T/out"
	check "init, the secret's write failing: exit 1" test "$rc" -eq 1
	check "... naming the secret, and why" \
	    grep -q "cannot write the secret $T/secret/key (nothing made): No space left on device" "$T/err"
	check "... which is not there, nor a temporary file" \
	    sh -c "test -z \"\$(ls -A '$T/secret')\""
else
	ok "# SKIP no strace (or no ptrace here): the secret's write failing"
fi

# --- a reader gone ------------------------------------------------------------
# a closed pipe is output that cannot be written, as a full disk: exit 1,
# said so (listgate(1), EXIT STATUS); the command was killed by SIGPIPE
# (status 141, no word), which in `approve IDS | grep -q ...` left the
# posts after the first undecided.  SIGPIPE at its default for the
# command, as from an interactive shell
if env --default-signal=PIPE true 2>/dev/null; then
	awk 'BEGIN { for (i = 0; i < 5000; i++)
	    printf "From x@y Mon Jan  1 00:00:00 2024\nSubject: p%d\n\nbody word%d\n\n", i, i }' \
	    > "$T/many.mbox"
	env --default-signal=PIPE sh -c '"$1" --allow-root --config "$2" \
	    tokens "$3" 2> "$4"; echo $? > "$5"' sh "$LISTGATE" "$CONF" \
	    "$T/many.mbox" "$T/err" "$T/rc" | head -c 1 > /dev/null
	rc=$(cat "$T/rc")
	check "tokens to a closed pipe: exit 1 (exit $rc)" test "$rc" -eq 1
	check "... saying so" grep -q "cannot write the standard output" \
	    "$T/err"
else
	ok "# SKIP no env --default-signal: the closed pipe"
fi
# ... and ends the run: the rest would be tokenized for nothing (one
# write(2) of standard output tried, not one per buffer of 3000 posts)
if command -v strace >/dev/null 2>&1 &&
    strace -f -o /dev/null -e trace=none true 2>/dev/null; then
	awk 'BEGIN { for (i = 0; i < 3000; i++)
	    printf "From x@y Mon Jan  1 00:00:00 2024\nSubject: p%d\n\nbody word%d\n\n", i, i }' \
	    > "$T/many.mbox"
	strace -o "$T/strace" -e trace=write "$LISTGATE" --allow-root \
	    --config "$CONF" tokens "$T/many.mbox" > /dev/full 2> "$T/err"
	rc=$?
	w=$(grep -c '^write(1,' "$T/strace")
	check "tokens to a full disk stops at once (exit $rc, $w writes)" \
	    test "$rc" -eq 1 -a "$w" -le 2
else
	ok "# SKIP no strace (or no ptrace here): tokens stopping"
fi

# score --db-dump to a full disk: the walk over the token file stops at
# the first write that fails (it went through every record, one
# write(2) a buffer, and was told of the failure only at exit)
if command -v strace >/dev/null 2>&1 &&
    strace -f -o /dev/null -e trace=none true 2>/dev/null; then
	lg train -q --list dump --spam "$T/many.mbox" || exit 99
	strace -o "$T/strace" -e trace=write "$LISTGATE" --allow-root \
	    --config "$CONF" score --list dump --db-dump > /dev/full 2> "$T/err"
	rc=$?
	w=$(grep -c '^write(1,' "$T/strace")
	check "score --db-dump to a full disk stops at once (exit $rc, $w writes)" \
	    test "$rc" -eq 1 -a "$w" -le 2
	check "... saying so" grep -q \
	    "^listgate score: cannot write the standard output" \
	    "$T/err"
else
	ok "# SKIP no strace (or no ptrace here): score --db-dump stopping"
fi

pg_part
echo "1..$n"
[ "$fails" -eq 0 ]

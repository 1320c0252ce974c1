#!/bin/sh
# cli_numbers.sh - the numbers the administrator's commands take (tune
# --folds, --max-*, --cost-*; migrate --lock-timeout; expire
# --older-than; holder --workers; the post IDs of approve, reject,
# discard, show and notify --remind) are decimal digits (and, for tune's
# shares and costs, a point and digits, a share also a trailing %):
# strtol's and strtod's blanks, signs, bases, exponents, "inf" and
# overflow are a usage error (exit 2) naming the option and the value.
# The forms listgate(1) gives stay valid: with no database configured
# they get as far as connecting (exit 1).  No PostgreSQL needed.
# Works in a mktemp -d directory removed at the end; never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-num.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
. "$top_srcdir/tests/lib.sh"
# no database at all: a valid number gets as far as connecting, and fails
for v in $(env | sed -n 's/^\(PG[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
mkdir -p "$T/conf/lists" || exit 99
printf 'tokens_dir = %s/tokens\n' "$T" > "$T/conf/listgate.conf"
lg() { "$LISTGATE" --allow-root --config "$T/conf" "$@"; }
run() { "$@" > "$T/out" 2> "$T/err"; rc=$?; }

# bad CMD OPTION VALUE [ARGS...]: exit 2, the message naming both
bad_num() {
	c=$1 o=$2 v=$3; shift 3
	run lg "$c" "$@" "$o" "$v"
	if [ "$rc" -eq 2 ] && grep -qF -- "bad $o '$v'" "$T/err"; then
		ok "$c $o '$v' is a usage error naming it"
	else
		bad "$c $o '$v' is a usage error naming it (exit $rc: $(head -1 "$T/err"))"
	fi
}
# good CMD OPTION VALUE [ARGS...]: taken (exit 1: no database)
good_num() {
	c=$1 o=$2 v=$3; shift 3
	run lg "$c" "$@" "$o" "$v"
	if [ "$rc" -eq 1 ] && grep -q "no database configured" "$T/err"; then
		ok "$c $o '$v' is taken"
	else
		bad "$c $o '$v' is taken (exit $rc: $(head -1 "$T/err"))"
	fi
}

# --- integers -------------------------------------------------------------
for v in +5 " 5" "5 " 5x 0x5 -0 -5 "" 99999999999999999999 \
    184467440737095516170; do
	bad_num tune --folds "$v" --list dev
done
for v in 2 5 05 20; do
	good_num tune --folds "$v" --list dev
done
for v in +30 " 30" 0x1e 1e2 -0; do
	bad_num migrate --lock-timeout "$v"
done
good_num migrate --lock-timeout 30
for v in +7 " 7" 0x7 -0 7d 9223372036854775808; do
	bad_num expire --older-than "$v"
done
good_num expire --older-than 0
good_num expire --older-than 7
for v in +4 " 4" 0x4; do
	bad_num holder --workers "$v"
done

# --- tune's shares and costs ---------------------------------------------
for v in +0.5 " 0.5" "0.5 " 0x0.1 1e-2 .5 5. -0 nan inf 0.5%% "0.5 %" %; do
	bad_num tune --max-spam-passed "$v" --list dev
done
for v in 0.005 0.5% 0 1 100% 0.014 1.4% 00.5%; do
	good_num tune --max-spam-passed "$v" --list dev
done
for v in +1 " 1" 1e3 0x10 -0 inf 1,5; do
	bad_num tune --cost-ham-held "$v" --list dev
done
good_num tune --cost-ham-held 0 --list dev
good_num tune --cost-spam-passed 2.5 --list dev
good_num tune --cost-spam-passed 1000000 --list dev
run lg tune --list dev --cost-spam-passed 1000000.5
check "a cost just over 1000000 is a usage error" test "$rc" -eq 2

# --- post IDs -------------------------------------------------------------
for c in approve reject discard show; do
	for v in +5 " 5" 0x5 5x "" 99999999999999999999; do
		run lg "$c" "$v"
		check "$c '$v' is a usage error naming the post ID" \
		    sh -c "test $rc -eq 2 && grep -qF \"bad post ID '$v'\" '$T/err'"
	done
	run lg "$c" 5
	check "$c 5 is taken" sh -c "test $rc -eq 1 && grep -q 'no database' '$T/err'"
done
run lg notify --remind +5
check "notify --remind '+5' is a usage error" \
    sh -c "test $rc -eq 2 && grep -qF \"bad post ID '+5'\" '$T/err'"
run lg notify --remind 5
check "notify --remind 5 is taken" test "$rc" -eq 1

echo "1..$n"
[ "$fails" -eq 0 ]

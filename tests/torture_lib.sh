# torture_lib.sh - the allocation-failure torture loop, sourced by the
# torture_*.sh tests (not a test itself)
#
#   torture DESC ALLOWED RUN [CHECK]
#
# RUN is a shell function that runs listgate once; its standard output
# and error go to $T/out and $T/err.  It runs first with no failure (the
# baseline: its allocation count comes from LISTGATE_ALLOC_REPORT=1, see
# gate/util/xalloc.c), then once with LISTGATE_FAIL_ALLOC=n for every n from
# 1 to the count + 1: every TORTURE_STRIDE-th n (default 2) up to
# TORTURE_DENSE, then in steps so that about TORTURE_SPARSE more runs
# cover the rest, and always the count + 1 (the clean run).  Successive
# calls start the stride at successive offsets (1, 2, 1, ...), so the
# commands a test tortures under several setups (postfix and qmail,
# fixture after fixture) have each n failed in one or the other.  With
# LISTGATE_TORTURE=long: every n of every call.  Each run must:
#   - end with an exit code in ALLOWED (a space-separated list), never
#     by a signal;
#   - leave no sanitizer report on standard error (ASan, LSan, UBSan;
#     LeakSanitizer looks at every TORTURE_LEAK_EVERY-th run, default 4,
#     from a first run that moves on from call to call, and at every run
#     with LISTGATE_TORTURE=long);
#   - when the report says no allocation failed: exit and print exactly
#     as the baseline did;
#   - pass CHECK, a shell function called with n (0 for the baseline)
#     after each run with $rc set; it returns non-zero and prints the
#     reason on failure.  TORTURE_CMP_OUT=0 skips the output comparison.
# One TAP line per call; "# " lines say how the runs ended.  The caller
# provides ok, bad and $T.

TORTURE_DENSE=${TORTURE_DENSE:-150}
TORTURE_SPARSE=${TORTURE_SPARSE:-40}
TORTURE_STRIDE=${TORTURE_STRIDE:-2}
torture_calls=0
TORTURE_CMP_OUT=${TORTURE_CMP_OUT:-1}
TORTURE_LEAK_EVERY=${TORTURE_LEAK_EVERY:-4}
SAN_RE='(Address|Leak|Memory|Thread|UndefinedBehavior)Sanitizer|runtime error:'

# the number of the failed allocation in $T/err ("" when no report)
torture_hit() {
	sed -n 's/^listgate: allocations [0-9]* failed \([0-9]*\)$/\1/p' \
	    "$T/err" | tail -n 1
}

# the allocation count in $T/err ("" when no report)
torture_count() {
	sed -n 's/^listgate: allocations \([0-9]*\) failed [0-9]*$/\1/p' \
	    "$T/err" | tail -n 1
}

# one run's verdict: prints the problem and returns 1, or returns 0
torture_judge() {
	_n=$1 _allowed=$2 _check=$3
	if [ "$rc" -gt 128 ]; then
		echo "n=$_n: killed by signal $((rc - 128))"
		return 1
	fi
	case " $_allowed " in
	*" $rc "*) ;;
	*) echo "n=$_n: exit $rc, want one of: $_allowed"
	   grep -v '^listgate: allocations' "$T/err" | head -n 3
	   return 1 ;;
	esac
	if grep -Eq "$SAN_RE" "$T/err"; then
		echo "n=$_n: sanitizer report (exit $rc):"
		grep -E -A12 "$SAN_RE" "$T/err" | head -n 16
		return 1
	fi
	"$_check" "$_n" || return 1
	return 0
}

torture() {
	_desc=$1 _allowed=$2 _run=$3 _check=${4:-:}
	_bad=0 _shown=0 _runs=0 _hits=0 _codes=
	_t0=$(date +%s)
	LISTGATE_ALLOC_REPORT=1
	export LISTGATE_ALLOC_REPORT
	unset LISTGATE_FAIL_ALLOC
	rc=0
	"$_run" > "$T/out" 2> "$T/err"
	rc=$?
	_base=$rc
	cp "$T/out" "$T/base.out"
	_count=$(torture_count)
	if ! _why=$(torture_judge 0 "$_allowed" "$_check"); then
		bad "$_desc: the run without failures: $_why"
		unset LISTGATE_ALLOC_REPORT
		return
	fi
	if [ -z "$_count" ]; then
		bad "$_desc: no allocation report (LISTGATE_ALLOC_REPORT)"
		unset LISTGATE_ALLOC_REPORT
		return
	fi
	_step=1 _stride=$TORTURE_STRIDE
	if [ "${LISTGATE_TORTURE:-}" = long ]; then
		TORTURE_DENSE=$((_count + 2)) _stride=1
	elif [ "$_count" -gt "$TORTURE_DENSE" ]; then
		_step=$(( (_count - TORTURE_DENSE) / TORTURE_SPARSE + 1 ))
	fi
	_n=$((torture_calls % _stride + 1))
	# the runs with a leak check: every TORTURE_LEAK_EVERY-th, starting
	# at a run that moves on every _stride calls, so that together the
	# calls check every n modulo _stride * TORTURE_LEAK_EVERY
	_leak0=$((torture_calls / _stride))
	torture_calls=$((torture_calls + 1))
	[ "$_n" -gt $((_count + 1)) ] && _n=$((_count + 1))
	_asan=${ASAN_OPTIONS-}
	while [ "$_n" -le $((_count + 1)) ]; do
		LISTGATE_FAIL_ALLOC=$_n
		export LISTGATE_FAIL_ALLOC
		# LeakSanitizer's check at exit costs a sanitizer build
		# more than the run itself: every TORTURE_LEAK_EVERY-th run
		# has it (and the baseline, and every run in the long mode)
		if [ "${LISTGATE_TORTURE:-}" != long ] &&
		    [ $(((_runs + _leak0) % TORTURE_LEAK_EVERY)) -ne 0 ]; then
			ASAN_OPTIONS=${_asan:+$_asan:}detect_leaks=0
			export ASAN_OPTIONS
		fi
		"$_run" > "$T/out" 2> "$T/err"
		rc=$?
		unset LISTGATE_FAIL_ALLOC
		if [ -n "$_asan" ]; then
			ASAN_OPTIONS=$_asan
		else
			unset ASAN_OPTIONS
		fi
		_runs=$((_runs + 1))
		_hit=$(torture_hit)
		case " $_codes " in
		*" $rc "*) ;;
		*) _codes="$_codes $rc" ;;
		esac
		eval "_c_$rc=\$(( \${_c_$rc:-0} + 1 ))"
		_why=$(torture_judge "$_n" "$_allowed" "$_check")
		_r=$?
		if [ $_r -eq 0 ] && [ "$_hit" = 0 ]; then
			# nothing failed: the run must be the baseline's
			if [ "$rc" -ne "$_base" ]; then
				_why="n=$_n: no allocation failed but exit $rc, baseline $_base"
				_r=1
			elif [ "$TORTURE_CMP_OUT" = 1 ] &&
			    ! cmp -s "$T/out" "$T/base.out"; then
				_why="n=$_n: no allocation failed but the output differs from the baseline"
				_r=1
			fi
		fi
		[ -n "$_hit" ] && [ "$_hit" != 0 ] && _hits=$((_hits + 1))
		if [ $_r -ne 0 ]; then
			_bad=$((_bad + 1))
			if [ $_shown -lt 5 ]; then
				echo "$_why" | sed 's/^/# /'
				_shown=$((_shown + 1))
			fi
		fi
		_next=$((_n + (_n < TORTURE_DENSE ? _stride : _step)))
		if [ "$_n" -le "$_count" ] && [ "$_next" -gt $((_count + 1)) ]; then
			_next=$((_count + 1))	# always end with the clean run
		fi
		_n=$_next
	done
	unset LISTGATE_ALLOC_REPORT
	_sum=
	for _c in $_codes; do
		eval "_sum=\"\$_sum exit $_c x\$_c_$_c,\""
		eval "unset _c_$_c"
	done
	echo "# $_desc: $_count allocations, $_runs runs ($_hits failed one):${_sum%,}; $(( $(date +%s) - _t0 )) s"
	if [ $_bad -eq 0 ]; then
		ok "$_desc: every allocation failure ends in one of: $_allowed"
	else
		bad "$_desc: $_bad of $_runs runs went wrong"
	fi
}

#!/bin/sh
# run-all-targets.sh - every libFuzzer target: build, replay the named
# crash fixtures, then fuzz each for a while
#
#   sh tests/fuzz/run-all-targets.sh [SECONDS]    (default 60 per target)
#
# run-all.sh calls it after the test suites (60 s per target; 600 with
# --long).  Targets run side by side, as many at a time as there are
# processors (FUZZ_PAR overrides).  Work (objects, corpora, logs) goes
# to $FUZZ_WORK (default: a mktemp -d directory, removed when nothing
# crashed).  Prints one line per target: executions, corpus, and
# whether it crashed; exits 1 when a fixture or a target crashed.  A
# crash leaves crash-* in $FUZZ_WORK/TARGET: make it a named fixture
# under tests/data/fuzz/TARGET/ (tests/fuzz/run.sh --replay TARGET FILE
# reproduces it).
set -u
secs=${1:-60}
top=$(cd "$(dirname "$0")/../.." && pwd)
run=$top/tests/fuzz/run.sh
keep=1
if [ -z "${FUZZ_WORK:-}" ]; then
	FUZZ_WORK=$(mktemp -d "${TMPDIR:-/tmp}/lg-fuzz.XXXXXX") || exit 1
	keep=0
fi
export FUZZ_WORK
targets=
for f in "$top"/tests/fuzz/fuzz_*.c; do
	t=${f##*/fuzz_}
	targets="$targets ${t%.c}"
done

sh "$run" --build || { echo "run-all-targets: the build failed"; exit 1; }

# the fixtures first: every earlier crash, and the mail fixtures
bad=0
for t in $targets; do
	set --
	for f in "$top"/tests/data/fuzz/"$t"/*; do
		[ -f "$f" ] && set -- "$@" "$f"
	done
	[ "$t" = mail ] && set -- "$@" "$top"/tests/data/mail/*.eml
	[ $# -eq 0 ] && continue
	if sh "$run" --replay "$t" "$@" > "$FUZZ_WORK/replay-$t.log" 2>&1; then
		echo "run-all-targets: $t: $# fixtures replayed"
	else
		echo "run-all-targets: $t: a fixture crashed:"
		grep -E 'ERROR|SUMMARY|runtime error|Running' "$FUZZ_WORK/replay-$t.log" | tail -n 6
		bad=1
	fi
done

par=${FUZZ_PAR:-$(nproc 2>/dev/null || echo 2)}
running=0
for t in $targets; do
	( sh "$run" "$t" "$secs" > "$FUZZ_WORK/fuzz-$t.log" 2>&1
	  echo $? > "$FUZZ_WORK/fuzz-$t.rc" ) &
	running=$((running + 1))
	if [ "$running" -ge "$par" ]; then
		wait
		running=0
	fi
done
wait

for t in $targets; do
	log=$FUZZ_WORK/fuzz-$t.log
	rc=$(cat "$FUZZ_WORK/fuzz-$t.rc" 2>/dev/null || echo 1)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	corp=$(ls "$FUZZ_WORK/$t/corpus" 2>/dev/null | wc -l)
	if [ "$rc" -eq 0 ]; then
		echo "run-all-targets: $t: ${execs:-?} executions in $secs s, corpus $corp, no crash"
	else
		echo "run-all-targets: $t: FAILED (exit $rc) after ${execs:-?} executions:"
		grep -E 'ERROR|SUMMARY|runtime error|Test unit written|MS:' "$log" | tail -n 8
		ls "$FUZZ_WORK/$t"/crash-* "$FUZZ_WORK/$t"/leak-* \
		    "$FUZZ_WORK/$t"/timeout-* "$FUZZ_WORK/$t"/oom-* 2>/dev/null
		bad=1
	fi
done
if [ "$bad" -eq 0 ] && [ "$keep" -eq 0 ]; then
	rm -rf "$FUZZ_WORK"
elif [ "$bad" -ne 0 ]; then
	echo "run-all-targets: the work (logs, crash inputs) is kept in $FUZZ_WORK"
fi
exit "$bad"

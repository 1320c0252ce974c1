#!/bin/sh
# run-op.sh NAME "cv options": opresample.py at 1477 and 888, seeds 1, 21, 41 (20 reps each)
cd "$(dirname "$0")/../../../.." || exit 1
R=tests/bench/results/2026-12-07b
name=$1; opts=$2
for n in 1477 888; do
	for s in 1 21 41; do
		suf=; [ $s != 1 ] && suf=-s$s
		python3 tests/bench/opresample.py --cv /tmp/bw-clf3/tests/bench/cv \
		    --train $n --reps 20 --seed $s -- $opts > $R/$name-op$n$suf.txt
	done
done

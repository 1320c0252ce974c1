#!/bin/sh
# run-cv.sh OUT "opts" ... : cvseeds.py on the 100% and 15% sets, 8 fold assignments, per option set
CV=/tmp/bw-mime8/tests/bench/cv
out=$1; shift
for o in "$@"; do
	for sp in 100 15; do
		nice -n 19 python3 /tmp/mime8-cvseeds.py $CV $sp 5 8 $o >> "$out"
	done
done

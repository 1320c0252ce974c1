#!/bin/sh
# run-op.sh SEED: opresample-multi.py at 1477 and 888, 20 seeds from SEED, the six variants
cd /tmp/wt-mime8 || exit 1
for n in 1477 888; do
	nice -n 19 python3 /tmp/mime8/opresample-multi.py --cv /tmp/bw-mime8/tests/bench/cv \
	    --corpus /work/main/cache/spam-assassin/package/data --train $n --reps 20 --seed $1 \
	    --variant= --variant=-B --variant="-B -F 20" --variant="-R 3" --variant="-B -R 3" \
	    --variant="-B -F 20 -R 3" > /tmp/mime8/op$n-s$1.txt
done

# opsum.py FILE...: per variant of opresample-multi.py's output, pooled over the files
# (the same seeds for every variant): median and mean of listgate/bogofilter spam passed,
# how often at most 0.5, the sums of ham held and spam passed, and seed by seed
# how often the ratio is lower / higher than the first variant's (the baseline)
import re, statistics, sys
rx = re.compile(r"\[([^\]]*)\] (\d+) ham held, (\d+)/(\d+) spam passed \(bf (\d+)\)")
data = {}
order = []
for fn in sys.argv[1:]:
    for line in open(fn):
        if not line.startswith("seed "):
            continue
        seed = int(line.split()[1].rstrip(":"))
        for m in rx.finditer(line):
            v = m.group(1)
            if v not in data:
                data[v] = {}
                order.append(v)
            held, passed, bf = int(m.group(2)), int(m.group(3)), int(m.group(5))
            r = passed / bf if bf else (0.0 if passed == 0 else float("inf"))
            data[v][(fn, seed)] = (held, passed, bf, r)
base = order[0]
for v in order:
    d = data[v]
    rs = [x[3] for x in d.values()]
    lo = sum(1 for k in d if d[k][3] < data[base][k][3])
    hi = sum(1 for k in d if d[k][3] > data[base][k][3])
    print("%-16s n %d median %.2f mean %.2f <=0.5 %2d | held %4d passed %4d (bf %4d) | ratio vs %s lower %d higher %d"
          % (v, len(rs), statistics.median(rs), statistics.mean(rs),
             sum(1 for x in rs if x <= 0.5), sum(x[0] for x in d.values()),
             sum(x[1] for x in d.values()), sum(x[2] for x in d.values()),
             base, lo, hi))

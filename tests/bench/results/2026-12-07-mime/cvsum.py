# cvsum.py FILE...: cvseeds.py lines per option set: means and medians, and on how many
# of the 8 assignments op0.5% is lower / higher than the baseline's ("") and -B's,
# and 1-ROCA% lower / higher than -B's
import re, statistics, sys
rx = re.compile(r"split (\d+) folds 5 (.*?): 1-ROCA% mean [0-9.]+ \[([^\]]*)\] op mean [0-9.]+ \[([^\]]*)\] hh mean [0-9.]+ \[([^\]]*)\]")
d = {}
order = []
for fn in sys.argv[1:]:
    for line in open(fn):
        m = rx.match(line)
        if not m:
            continue
        sp, o = int(m.group(1)), m.group(2).strip() or "(none)"
        if o not in order:
            order.append(o)
        d[(sp, o)] = [list(map(float, m.group(i).split())) for i in (3, 4, 5)]
def cmp(a, b):
    return "%d/%d" % (sum(x < y for x, y in zip(a, b)), sum(x > y for x, y in zip(a, b)))
print("%-28s %s" % ("setting", " | ".join("%s: 1-ROCA mean (med) op mean (med) [min-max] hh mean; op lower/higher vs none, vs -B; 1-ROCA vs -B" % s for s in ("100%", "15%"))))
for o in order:
    cols = []
    for sp in (100, 15):
        if (sp, o) not in d:
            cols.append("-"); continue
        r, op, hh = d[(sp, o)]
        cols.append("%.4f (%.4f) %5.1f (%4.1f) [%d-%d] %5.1f; %s, %s; %s" % (
            statistics.mean(r), statistics.median(r), statistics.mean(op),
            statistics.median(op), min(op), max(op), statistics.mean(hh),
            cmp(op, d[(sp, "(none)")][1]), cmp(op, d[(sp, "-B")][1]),
            cmp(r, d[(sp, "-B")][0])))
    print("%-28s %s" % (o, " | ".join(cols)))

# summary.py: the cvseeds-b*.txt lines side by side, and per fold assignment
# how often a setting beats the baseline and "-N 250 -K 80" (lower is better)
import re, glob
R = {}
for f in sorted(glob.glob("cvseeds-b*.txt")):
    for l in open(f):
        m = re.match(r"split (\d+) folds 5 (.*?): 1-ROCA% mean \S+ \[(.*?)\] op mean \S+ \[(.*?)\] hh mean \S+ \[(.*?)\]", l)
        sp, o = int(m.group(1)), m.group(2).strip()
        R[(o, sp)] = [list(map(float, m.group(k).split())) for k in (3, 4, 5)]
opts = []
for (o, sp) in R:
    if o not in opts: opts.append(o)
def mean(v): return sum(v) / len(v)
def wins(a, b): return "%d/%d" % (sum(x < y for x, y in zip(a, b)), sum(x > y for x, y in zip(a, b)))
print("%-30s %7s %5s %5s %7s %5s %5s | better/worse than baseline: 100%% roca op hh, 15%% roca op hh | than -N 250 -K 80" % ("setting", "100roca", "op", "hh", "15roca", "op", "hh"))
for o in opts:
    a, b = R[(o, 100)], R[(o, 15)]
    s = "%-30s %7.4f %5.1f %5.1f %7.4f %5.1f %5.1f" % (o or "(baseline)", mean(a[0]), mean(a[1]), mean(a[2]), mean(b[0]), mean(b[1]), mean(b[2]))
    for ref in ("", "-N 250 -K 80"):
        ra, rb = R[(ref, 100)], R[(ref, 15)]
        s += " | " + " ".join(wins(a[k], ra[k]) for k in range(3)) + ", " + " ".join(wins(b[k], rb[k]) for k in range(3))
    print(s)

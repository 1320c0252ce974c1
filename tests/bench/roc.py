#!/usr/bin/env python3
"""roc.py - ROC area, paired bootstrap and the side-by-side table for bench.sh

Reads the raw score files bench.py writes into a results directory
(scores-FILTER-SPLIT-MODE.tsv: class, post, score, verdict, wall ms) and
prints one table.  Pure standard library (no numpy), so it runs on a bare
Debian python3.  Re-run it on an old results directory at any time:

    python3 tests/bench/roc.py cache/bench-results/DATE
    python3 tests/bench/roc.py NEWDIR --against OLDDIR   (one filter, two
                                                           runs: a change)

1-ROCA% is the area above the ROC curve in percent: 100 * P(a ham post
scores at or above a spam post), a tie counting one half (the
Mann-Whitney form).  The bootstrap resamples test posts with replacement,
ham and spam separately (the class sizes stay fixed), and keeps the two
filters paired: one resample picks the same posts for both.
"""

import bisect
import json
import os
import random
import sys


def one_minus_roca(ham, spam):
    """Area above the ROC curve in percent; ties count one half."""
    if not ham or not spam:
        return float("nan")
    hs = sorted(ham)
    bad = 0.0
    for s in spam:
        lo = bisect.bisect_left(hs, s)
        hi = bisect.bisect_right(hs, s)
        bad += (len(hs) - hi) + 0.5 * (hi - lo)
    return 100.0 * bad / (len(ham) * len(spam))


class _Paired:
    """Precomputed ranks so one weighted 1-ROCA costs O(n), not O(n log n)."""

    def __init__(self, ham, spam):
        order = sorted(range(len(ham)), key=lambda i: ham[i])
        self.ham_order = order
        hs = [ham[i] for i in order]
        self.lo = [bisect.bisect_left(hs, s) for s in spam]
        self.hi = [bisect.bisect_right(hs, s) for s in spam]
        self.nh = len(ham)
        self.ns = len(spam)

    def area(self, wh, ws):
        """1-ROCA% with integer weights wh (ham) and ws (spam)."""
        cum = [0] * (self.nh + 1)
        c = 0
        for k, i in enumerate(self.ham_order):
            c += wh[i]
            cum[k + 1] = c
        tot = cum[self.nh]
        bad = 0.0
        for j in range(self.ns):
            w = ws[j]
            if w:
                lo = cum[self.lo[j]]
                hi = cum[self.hi[j]]
                bad += w * ((tot - hi) + 0.5 * (hi - lo))
        return 100.0 * bad / (self.nh * self.ns)


def _weights(rng, n):
    w = [0] * n
    for i in rng.choices(range(n), k=n):
        w[i] += 1
    return w


def _percentile(sorted_vals, q):
    """Linear-interpolated percentile of an ascending list (inf allowed)."""
    if not sorted_vals:
        return float("nan")
    pos = q * (len(sorted_vals) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_vals) - 1)
    a, b = sorted_vals[lo], sorted_vals[hi]
    if a == b or pos == lo:
        return a
    if a == float("inf") or b == float("inf"):
        return float("inf")
    return a + (b - a) * (pos - lo)


def ratio(a, b):
    """a / b for 1-ROCA values; 0/0 is 1 (equal), x/0 is inf."""
    if b == 0:
        return 1.0 if a == 0 else float("inf")
    return a / b


def bootstrap_ratio(ham_a, spam_a, ham_b, spam_b, n=1000, seed=1):
    """95% percentile interval of 1-ROCA(A)/1-ROCA(B), paired resampling.

    ham_a[i] and ham_b[i] are the two filters' scores of the same post.
    Returns (low, high, resamples)."""
    rng = random.Random(seed)
    pa = _Paired(ham_a, spam_a)
    pb = _Paired(ham_b, spam_b)
    vals = []
    for _ in range(n):
        wh = _weights(rng, len(ham_a))
        ws = _weights(rng, len(spam_a))
        vals.append(ratio(pa.area(wh, ws), pb.area(wh, ws)))
    vals.sort()
    return _percentile(vals, 0.025), _percentile(vals, 0.975), n


def quantile(vals, q):
    """Nearest-rank-interpolated quantile of a list of numbers."""
    return _percentile(sorted(vals), q)


def read_scores(path):
    """{post: (class, score, verdict, ms)} from one scores-*.tsv file."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            cls, post, score, verdict, ms = line.rstrip("\n").split("\t")
            out[post] = (cls, float(score) if score != "" else None,
                         verdict, float(ms) if ms != "" else None)
    return out


def _fmt(x, spec):
    if x is None or x != x:
        return "-"
    if x == float("inf"):
        return "inf"
    return format(x, spec)


def table(resdir, resamples=1000, seed=1, out=sys.stdout):
    """Print the side-by-side table for a results directory; return rows."""
    with open(os.path.join(resdir, "meta.json"), encoding="utf-8") as f:
        meta = json.load(f)
    filters = meta["filters"]			# e.g. ["listgate", "bogofilter"]
    rows = []
    lines = []
    for split in meta["splits"]:
        # the scores the ROC uses: one process per post when every test
        # post was run that way, else the batch run (--quick)
        mode = "proc" if not meta.get("quick") else "batch"
        sc = {}
        for flt in filters:
            sc[flt] = {m: read_scores(os.path.join(
                resdir, "scores-%s-%s-%s.tsv" % (flt, split, m)))
                for m in ("proc", "batch")}
        common = sorted(set.intersection(*[
            set(k for k, v in sc[flt][mode].items() if v[1] is not None)
            for flt in filters]))
        ham = [p for p in common if sc[filters[0]][mode][p][0] == "ham"]
        spam = [p for p in common if sc[filters[0]][mode][p][0] == "spam"]
        area = {}
        for flt in filters:
            d = sc[flt][mode]
            area[flt] = one_minus_roca([d[p][1] for p in ham],
                                       [d[p][1] for p in spam])
        a, b = filters[0], filters[1]
        lo, hi, nres = bootstrap_ratio(
            [sc[a][mode][p][1] for p in ham], [sc[a][mode][p][1] for p in spam],
            [sc[b][mode][p][1] for p in ham], [sc[b][mode][p][1] for p in spam],
            n=resamples, seed=seed)
        point = ratio(area[a], area[b])
        for flt in filters:
            d = sc[flt][mode]
            info = meta["runs"]["%s-%s" % (flt, split)]
            spam_passed = sum(1 for p in spam if d[p][2] == "ham")
            ham_held = sum(1 for p in ham if d[p][2] != "ham")
            ms = [v[3] for v in sc[flt]["proc"].values() if v[3] is not None]
            # per-process and batch scores of the same post should agree
            diff = 0
            for p, v in sc[flt]["proc"].items():
                w = sc[flt]["batch"].get(p)
                if v[1] is None or w is None or w[1] is None or \
                        abs(v[1] - w[1]) > 1e-9:
                    diff += 1
            row = {
                "split": split, "filter": flt, "mode": mode,
                "one_minus_roca": area[flt],
                "ratio": point if flt == a else None,
                "ratio_ci": [lo, hi] if flt == a else None,
                "spam_passed": spam_passed, "spam": len(spam),
                "ham_held": ham_held, "ham": len(ham),
                "ms_median": quantile(ms, 0.5) if ms else None,
                "ms_p95": quantile(ms, 0.95) if ms else None,
                "proc_posts": len(ms),
                "batch_per_s": info.get("batch_per_s"),
                "train_s": info.get("train_s"),
                "errors": info.get("errors", 0),
                "proc_batch_diff": diff,
            }
            rows.append(row)
    hdr = ("%-5s %-10s %8s  %-24s %12s %11s %7s %7s %8s %7s %5s" %
           ("split", "filter", "1-ROCA%",
            "%s/%s [95%% CI]" % (filters[0][:2], filters[1][:2]),
            "spam passed", "ham held", "ms med", "ms p95", "batch/s",
            "train s", "diff"))
    lines.append(hdr)
    lines.append("-" * len(hdr))
    for r in rows:
        if r["ratio"] is not None:
            rc = "%s [%s, %s]" % (_fmt(r["ratio"], ".2f"),
                                  _fmt(r["ratio_ci"][0], ".2f"),
                                  _fmt(r["ratio_ci"][1], ".2f"))
        else:
            rc = ""
        lines.append("%-5s %-10s %8s  %-24s %12s %11s %7s %7s %8s %7s %5d" % (
            r["split"], r["filter"], _fmt(r["one_minus_roca"], ".4f"), rc,
            "%d/%d" % (r["spam_passed"], r["spam"]),
            "%d/%d" % (r["ham_held"], r["ham"]),
            _fmt(r["ms_median"], ".2f"), _fmt(r["ms_p95"], ".2f"),
            _fmt(r["batch_per_s"], ".0f"), _fmt(r["train_s"], ".2f"),
            r["proc_batch_diff"]))
    lines.append("")
    lines.append("1-ROCA%% from %s scores; ratio CI: %d paired bootstrap "
                 "resamples (ham and spam resampled separately, seed %d)." %
                 ("one-process-per-post" if not meta.get("quick") else
                  "batch (--quick)", resamples, seed))
    lines.append("spam passed / ham held at each filter's own default "
                 "cutoffs (%s)." % "; ".join(
                     "%s: %s" % (f, meta.get("cutoffs", {}).get(f, "?"))
                     for f in filters))
    lines.append("ms: wall time of one process per post (%d posts%s), "
                 "python perf_counter around fork+exec+wait." % (
                     rows[0]["proc_posts"] if rows else 0,
                     ", 1 in 4 sample" if meta.get("quick") else ""))
    lines.append("diff: posts whose per-process score differs from the "
                 "batch score (should be 0).")
    for line in lines:
        print(line, file=out)
    return rows


def against(newdir, olddir, flt="listgate", resamples=1000, seed=1,
            out=sys.stdout):
    """One filter in two runs (a change, before and after): per split,
    1-ROCA% of each and the ratio new/old with a 95% paired bootstrap
    interval (the same test posts resampled for both runs)."""
    with open(os.path.join(newdir, "meta.json"), encoding="utf-8") as f:
        meta = json.load(f)
    mode = "proc" if not meta.get("quick") else "batch"
    print("%-5s %-10s %10s %10s  %-24s" % ("split", "filter", "1-ROCA old",
                                           "1-ROCA new", "new/old [95% CI]"),
          file=out)
    for split in meta["splits"]:
        new = read_scores(os.path.join(
            newdir, "scores-%s-%s-%s.tsv" % (flt, split, mode)))
        old = read_scores(os.path.join(
            olddir, "scores-%s-%s-%s.tsv" % (flt, split, mode)))
        common = sorted(p for p in set(new) & set(old)
                        if new[p][1] is not None and old[p][1] is not None)
        ham = [p for p in common if new[p][0] == "ham"]
        spam = [p for p in common if new[p][0] == "spam"]
        a_new = one_minus_roca([new[p][1] for p in ham],
                               [new[p][1] for p in spam])
        a_old = one_minus_roca([old[p][1] for p in ham],
                               [old[p][1] for p in spam])
        lo, hi, _ = bootstrap_ratio(
            [new[p][1] for p in ham], [new[p][1] for p in spam],
            [old[p][1] for p in ham], [old[p][1] for p in spam],
            n=resamples, seed=seed)
        print("%-5s %-10s %10s %10s  %s [%s, %s]" % (
            split, flt, _fmt(a_old, ".4f"), _fmt(a_new, ".4f"),
            _fmt(ratio(a_new, a_old), ".2f"), _fmt(lo, ".2f"),
            _fmt(hi, ".2f")), file=out)
    print("\n%d paired bootstrap resamples of the %d ham and %d spam test "
          "posts both runs scored (%s scores, seed %d); below 1: the new "
          "run ranks better." % (resamples, len(ham), len(spam), mode, seed),
          file=out)


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("resdir")
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--against", metavar="OLDDIR",
                    help="compare listgate in resdir with listgate in an "
                    "earlier run's results (a change's before and after)")
    ap.add_argument("--filter", default="listgate",
                    help="the filter --against compares")
    args = ap.parse_args(argv)
    if args.against:
        against(args.resdir, args.against, args.filter, args.resamples,
                args.seed)
        return 0
    rows = table(args.resdir, args.resamples, args.seed)
    with open(os.path.join(args.resdir, "table.json"), "w",
              encoding="utf-8") as f:
        json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""roc.py - ROC area, paired bootstrap and the side-by-side table for bench.sh

Reads the raw results bench.py writes into a results directory (meta.json
and the *.tsv files: scores, one process per post, cross-validation,
online, Postfix) and prints one table with the ratios and the targets.
Pure standard library (no numpy), so it runs on a bare Debian python3.
Re-run it on an old results directory at any time:

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


def read_tsv(path):
    """[{column: text}] of a *.tsv written by bench.py (None if missing)"""
    if not os.path.exists(path):
        return None
    rows = []
    with open(path, encoding="utf-8") as f:
        cols = f.readline().lstrip("#").rstrip("\n").split("\t")
        for line in f:
            if line.strip():
                rows.append(dict(zip(cols, line.rstrip("\n").split("\t"))))
    return rows


def num(x):
    return float(x) if x not in (None, "") else None


def scores_of(rows):
    """{post: (class, score)} of rows with a score"""
    return {r["post"]: (r["class"], num(r["score"])) for r in rows
            if num(r.get("score")) is not None}


def _fmt(x, spec):
    if x is None or x != x:
        return "-"
    if x == float("inf"):
        return "inf"
    return format(x, spec)


def paired(a, b):
    """ham/spam score lists of two filters on the posts both scored"""
    common = sorted(set(a) & set(b))
    ham = [p for p in common if a[p][0] == "ham"]
    spam = [p for p in common if a[p][0] == "spam"]
    return ([a[p][1] for p in ham], [a[p][1] for p in spam],
            [b[p][1] for p in ham], [b[p][1] for p in spam])


def area_row(a, b, resamples, seed):
    """1-ROCA% of both, the ratio a/b and its paired bootstrap interval"""
    ha, sa, hb, sb = paired(a, b)
    ra, rb = one_minus_roca(ha, sa), one_minus_roca(hb, sb)
    lo, hi, _ = bootstrap_ratio(ha, sa, hb, sb, n=resamples, seed=seed)
    return {"listgate": ra, "bogofilter": rb, "ratio": ratio(ra, rb),
            "ci": [lo, hi], "ham": len(ha), "spam": len(sa)}


def cutoff_for(ham, max_held):
    """The lowest cutoff that holds (score >= cutoff) at most max_held of
    the ham scores: halfway between the highest ham score that must pass
    and the next higher one (or just above it)."""
    hs = sorted(ham, reverse=True)
    if max_held >= len(hs):
        return min(hs) if hs else 0.5
    k = max_held
    t = hs[k]
    higher = [x for x in hs[:k] if x > t]
    if higher:
        return (t + min(higher)) / 2
    nxt = t + max(abs(t) * 1e-15, 1e-300)
    return nxt if nxt > t else float("inf")


def lowest_cutoff(ham, max_held):
    """The lowest cutoff of all that hold at most max_held of the ham
    scores: just above the highest ham score that must pass (the most
    spam stopped at that ham-held count; chosen on the scores it is
    applied to, it favours whoever it is chosen for)."""
    hs = sorted(ham, reverse=True)
    if max_held >= len(hs):
        return min(hs) if hs else 0.5
    t = hs[max_held]
    nxt = t + max(abs(t) * 1e-15, 1e-300)
    return nxt if nxt > t else float("inf")


def errors_at(ham, spam, cutoff):
    """(ham held, spam passed) at a cutoff (held: score >= cutoff)"""
    return (sum(1 for x in ham if x >= cutoff),
            sum(1 for x in spam if x < cutoff))


def med(vals):
    vals = [v for v in vals if v is not None]
    return quantile(vals, 0.5) if vals else None


def table(resdir, resamples=1000, seed=1, out=sys.stdout):
    """Print the side-by-side table of a results directory; return its
    rows (a dict of sections)."""
    with open(os.path.join(resdir, "meta.json"), encoding="utf-8") as f:
        meta = json.load(f)
    res = {"accuracy": [], "operating": [], "size": [], "speed": [],
           "targets": []}
    L = []

    def line(s=""):
        L.append(s)

    def target(what, measured, goal, met):
        res["targets"].append({"target": what, "measured": measured,
                               "goal": goal, "met": met})

    def target2(what, wall, cpu, goal, ok):
        """a speed target judged on wall time, and on CPU time when the
        wall time missed it (a loaded machine stretches wall times)"""
        m = "wall %s" % _fmt(wall, ".2f")
        if cpu is not None:
            m += ", CPU %s" % _fmt(cpu, ".2f")
        met = wall is not None and ok(wall)
        if not met and cpu is not None and ok(cpu):
            met = "cpu"
        target(what, m, goal, met)

    nh, ns = meta["test_ham"], meta["test_spam"]
    line("listgate and bogofilter side by side: %s (%s), %s" % (
        meta["versions"]["listgate"], meta["versions"]["commit"],
        meta["versions"]["bogofilter"]))
    line("SpamAssassin public corpus, test half %d ham + %d spam; %s; "
         "load average %s at the start" % (
             nh, ns, meta["date"],
             "/".join("%.1f" % x for x in meta["machine"]["loadavg_start"])))
    line()

    # --- accuracy ---
    line("ACCURACY: 1-ROCA% on the test half (0 = perfect ranking); "
         "li/bo = listgate/bogofilter")
    line("with a 95%% paired bootstrap interval (%d resamples); errors at "
         "each filter's default cutoffs" % resamples)
    hdr = "%-6s %9s %9s  %-22s %13s %13s %13s %13s" % (
        "split", "listgate", "bogofilt", "li/bo [95% CI]", "lg spam pass",
        "lg ham held", "bf spam pass", "bf ham held")
    line(hdr)
    line("-" * len(hdr))
    ratios = {}
    for split in meta["splits"]:
        sc = {f: read_tsv(os.path.join(resdir, "scores-%s-%s-batch.tsv" %
                                       (f, split)))
              for f in ("listgate", "bogofilter")}
        if sc["listgate"] is None or sc["bogofilter"] is None:
            continue
        a, b = scores_of(sc["listgate"]), scores_of(sc["bogofilter"])
        row = area_row(a, b, resamples, seed)
        ratios[split] = row
        err = {}
        for f in ("listgate", "bogofilter"):
            err[f] = (sum(1 for r in sc[f] if r["class"] == "spam" and
                          r["verdict"] == "ham"),
                      sum(1 for r in sc[f] if r["class"] == "ham" and
                          r["verdict"] != "ham"))
        row.update({"split": split, "errors": err})
        res["accuracy"].append(row)
        line("%-6s %9s %9s  %-22s %13s %13s %13s %13s" % (
            split + "%", _fmt(row["listgate"], ".4f"),
            _fmt(row["bogofilter"], ".4f"),
            "%s [%s, %s]" % (_fmt(row["ratio"], ".2f"),
                             _fmt(row["ci"][0], ".2f"),
                             _fmt(row["ci"][1], ".2f")),
            "%d/%d" % (err["listgate"][0], row["spam"]),
            "%d/%d" % (err["listgate"][1], row["ham"]),
            "%d/%d" % (err["bogofilter"][0], row["spam"]),
            "%d/%d" % (err["bogofilter"][1], row["ham"])))
    onl = None
    la = read_tsv(os.path.join(resdir, "online-listgate.tsv"))
    lb = read_tsv(os.path.join(resdir, "online-bogofilter.tsv"))
    if la is not None and lb is not None:
        onl = area_row(scores_of(la), scores_of(lb), resamples, seed)
        res["online"] = onl
        line("%-6s %9s %9s  %-22s   (TREC-style: %d posts in a fixed "
             "shuffled order, each" % (
                 "online", _fmt(onl["listgate"], ".4f"),
                 _fmt(onl["bogofilter"], ".4f"),
                 "%s [%s, %s]" % (_fmt(onl["ratio"], ".2f"),
                                  _fmt(onl["ci"][0], ".2f"),
                                  _fmt(onl["ci"][1], ".2f")),
                 onl["ham"] + onl["spam"]))
        line("%-42s   scored, then learnt with its true label; seed %d)" %
             ("", meta["online"]["seed"]))
    line()

    # --- the operating point ---
    line("OPERATING POINT: listgate's ham_cutoff chosen by %d-fold "
         "cross-validation on the training" % 5)
    line("half for at most 0.5% ham held; bogofilter at its best cutoff "
         "that holds no more test ham")
    line("(chosen on the test half, in its favour), and at a cutoff chosen "
         "like listgate's")
    hdr = "%-6s %11s %11s %12s | %12s %12s | %17s" % (
        "split", "lg cutoff", "lg ham held", "lg spam pass",
        "bf same held", "bf spam pass", "bf own CV cutoff")
    line(hdr)
    line("-" * len(hdr))
    for split in meta["splits"]:
        oof = {f: read_tsv(os.path.join(resdir, "oof-%s-%s.tsv" % (f, split)))
               for f in ("listgate", "bogofilter")}
        sc = {f: read_tsv(os.path.join(resdir, "scores-%s-%s-batch.tsv" %
                                       (f, split)))
              for f in ("listgate", "bogofilter")}
        if None in oof.values() or None in sc.values():
            continue
        cut = {}
        for f in oof:
            oh = [num(r["score"]) for r in oof[f] if r["class"] == "ham"]
            cut[f] = cutoff_for(oh, int(0.005 * len(oh)))
        ha, sa, hb, sb = paired(scores_of(sc["listgate"]),
                                scores_of(sc["bogofilter"]))
        lheld, lpass = errors_at(ha, sa, cut["listgate"])
        bcut = lowest_cutoff(hb, lheld)
        bheld, bpass = errors_at(hb, sb, bcut)
        oheld, opass = errors_at(hb, sb, cut["bogofilter"])
        row = {"split": split, "lg_cutoff": cut["listgate"],
               "lg_ham_held": lheld, "lg_spam_passed": lpass,
               "bf_cutoff_same_held": bcut, "bf_ham_held": bheld,
               "bf_spam_passed": bpass, "bf_cv_cutoff": cut["bogofilter"],
               "bf_cv_ham_held": oheld, "bf_cv_spam_passed": opass,
               "ham": len(ha), "spam": len(sa)}
        res["operating"].append(row)
        line("%-6s %11s %11s %12s | %12s %12s | %s" % (
            split + "%", lg_cut_show(cut["listgate"]),
            "%d (%.2f%%)" % (lheld, 100.0 * lheld / max(1, len(ha))),
            "%d/%d" % (lpass, len(sa)),
            "%d held" % bheld, "%d/%d" % (bpass, len(sa)),
            "%s: %d held, %d passed" % (lg_cut_show(cut["bogofilter"]),
                                         oheld, opass)))
        target("spam passed at <= 0.5%% ham held, %s%% training (li/bo)" %
               split, "%d/%d = %s" % (lpass, bpass, _fmt(ratio(lpass, bpass),
                                                          ".2f")),
               "<= 0.5", lpass <= 0.5 * bpass if bpass > 0 else lpass == 0)
    line()

    # --- size ---
    line("SIZE: the token file after training (listgate's .kch, "
         "bogofilter's wordlist.db)")
    hdr = "%-6s %8s %12s %12s %8s" % ("split", "posts", "listgate",
                                      "bogofilter", "li/bo")
    line(hdr)
    line("-" * len(hdr))
    for split in meta["splits"]:
        info = meta["splits_info"].get(split)
        if not info or "lg_bytes" not in info:
            continue
        rt = info["lg_bytes"] / info["bf_bytes"]
        res["size"].append({"split": split, "listgate": info["lg_bytes"],
                            "bogofilter": info["bf_bytes"], "ratio": rt})
        line("%-6s %8d %12s %12s %8.2f" % (
            split + "%", info["train_posts"], "{:,}".format(info["lg_bytes"]),
            "{:,}".format(info["bf_bytes"]), rt))
        target("token file size, %s%% training (li/bo)" % split,
               "%.2f" % rt, "<= 1", rt <= 1)
    line()

    # --- speed ---
    line("SPEED (wall times are noisy on a shared machine; instruction "
         "counts are not)")
    hdr = "%-44s %11s %11s %8s" % ("", "listgate", "bogofilter", "li/bo")
    line(hdr)
    line("-" * len(hdr))

    def srow(label, a, b, spec, rt=None, key=None):
        if rt is None and a is not None and b not in (None, 0):
            rt = a / b
        res["speed"].append({"what": key or label, "listgate": a,
                             "bogofilter": b, "ratio": rt})
        line("%-44s %11s %11s %8s" % (label, _fmt(a, spec), _fmt(b, spec),
                                       _fmt(rt, ".2f")))
        return rt

    for split in meta["splits"]:
        pr = {f: read_tsv(os.path.join(resdir, "proc-%s-%s.tsv" % (f, split)))
              for f in ("floor", "listgate", "bogofilter")}
        if None in pr.values():
            continue
        ms = {f: med([num(r["wall_ms"]) for r in pr[f]]) for f in pr}
        p95 = {f: quantile([num(r["wall_ms"]) for r in pr[f]], 0.95)
               for f in pr}
        line("one process per post, %s%% split, %d posts: floor (a C "
             "program that reads stdin)" % (split, len(pr["floor"])))
        line("  median %.2f ms, p95 %.2f ms" % (ms["floor"], p95["floor"]))
        srow("  ms per post, median", ms["listgate"], ms["bogofilter"],
             ".2f", key="ms_%s" % split)
        srow("  ms per post, p95", p95["listgate"], p95["bogofilter"], ".2f",
             key="ms_p95_%s" % split)
        rt = srow("  ms above the floor, median",
                  ms["listgate"] - ms["floor"],
                  ms["bogofilter"] - ms["floor"], ".2f",
                  key="ms_above_floor_%s" % split)
        cpu = {f: med([num(r.get("cpu_ms")) for r in pr[f]]) for f in pr}
        rc = None
        if cpu["floor"] is not None:
            srow("  CPU ms per post, median", cpu["listgate"],
                 cpu["bogofilter"], ".2f", key="cpu_ms_%s" % split)
            rc = srow("  CPU ms above the floor, median",
                      cpu["listgate"] - cpu["floor"],
                      cpu["bogofilter"] - cpu["floor"], ".2f",
                      key="cpu_above_floor_%s" % split)
        target2("time per post above the floor, %s%% split (li/bo)" % split,
                rt, rc, "<= 0.5", lambda x: x <= 0.5)
        rss = {f: [num(r["rss_kb"]) for r in pr[f]] for f in pr}
        worse = sum(1 for x, y in zip(rss["listgate"], rss["bogofilter"])
                    if x is not None and y is not None and x > y)
        rt = srow("  peak RSS KiB, median", med(rss["listgate"]),
                  med(rss["bogofilter"]), ".0f", key="rss_%s" % split)
        srow("  peak RSS KiB, largest", max(rss["listgate"]),
             max(rss["bogofilter"]), ".0f", key="rss_max_%s" % split)
        target("peak RSS per process, %s%% split (li/bo, median; %d posts "
               "of %d above)" % (split, worse, len(rss["listgate"])),
               _fmt(rt, ".2f"), "<= 1", rt is not None and rt <= 1)
        lgp, bgp = scores_of(pr["listgate"]), scores_of(pr["bogofilter"])
        bat = {f: scores_of(read_tsv(os.path.join(
            resdir, "scores-%s-%s-batch.tsv" % (f, split))) or [])
            for f in ("listgate", "bogofilter")}
        for f, d in (("listgate", lgp), ("bogofilter", bgp)):
            diff = sum(1 for p, v in d.items()
                       if p not in bat[f] or abs(bat[f][p][1] - v[1]) > 1e-9)
            if diff:
                line("  %s: %d posts score differently in batch mode" %
                     (f, diff))
    for split in meta["splits"]:
        info = meta["splits_info"].get(split)
        if not info or "lg_batch_s" not in info:
            continue
        n = nh + ns
        rt = srow("batch scoring posts/s, %s%% split" % split,
                  n / info["lg_batch_s"], n / info["bf_batch_s"], ".0f",
                  key="batch_%s" % split)
        rc = None
        if info.get("lg_batch_cpu_s") and info.get("bf_batch_cpu_s"):
            rc = srow("  posts per CPU second",
                      n / info["lg_batch_cpu_s"], n / info["bf_batch_cpu_s"],
                      ".0f", key="batch_cpu_%s" % split)
        target2("batch posts/s, %s%% split (li/bo)" % split, rt, rc, ">= 2",
                lambda x: x >= 2)
    for split in meta["splits"]:
        info = meta["splits_info"].get(split)
        if not info or "bf_train_s" not in info:
            continue
        n = info["train_posts"]
        bfr = n / info["bf_train_s"]
        bfc = (n / info["bf_train_cpu_s"] if info.get("bf_train_cpu_s")
               else None)
        if "lg_train_journal_s" in info:
            rt = srow("training posts/s, %s%%, journal + sync" % split,
                      n / info["lg_train_journal_s"], bfr, ".0f",
                      key="train_journal_%s" % split)
            rc = None
            if bfc and info.get("lg_train_journal_cpu_s"):
                rc = srow("  posts per CPU second (PostgreSQL's too)",
                          n / info["lg_train_journal_cpu_s"], bfc, ".0f",
                          key="train_journal_cpu_%s" % split)
            target2("bulk training posts/s, journal and sync included, "
                    "%s%% (li/bo)" % split, rt, rc, ">= 2", lambda x: x >= 2)
        rt = srow("training posts/s, %s%%, standalone" % split,
                  n / info["lg_train_direct_s"], bfr, ".0f",
                  key="train_direct_%s" % split)
        rc = None
        if bfc and info.get("lg_train_direct_cpu_s"):
            rc = srow("  posts per CPU second", n /
                      info["lg_train_direct_cpu_s"], bfc, ".0f",
                      key="train_direct_cpu_%s" % split)
        target2("bulk training posts/s, standalone, %s%% (li/bo)" % split,
                rt, rc, ">= 2", lambda x: x >= 2)
        if "journal_equals_direct" in info:
            line("  (the token files trained through the journal and "
                 "standalone are %s)" % ("identical" if
                                         info["journal_equals_direct"]
                                         else "DIFFERENT"))
    cg = meta.get("callgrind")
    if cg:
        fl = med(cg["floor"])
        line("instructions (callgrind), one process per post, median of "
             "%d posts; floor %s" % (len(cg["posts"]), "{:,}".format(
                 int(fl)) if fl else "-"))
        srow("  instructions per post", med(cg["listgate"]),
             med(cg["bogofilter"]), ",.0f", key="ir_per_post")
        rt = srow("  instructions above the floor",
                  med(cg["listgate"]) - fl, med(cg["bogofilter"]) - fl,
                  ",.0f", key="ir_above_floor")
        target("instructions per post above the floor (li/bo)",
               _fmt(rt, ".2f"), "<= 0.5", rt <= 0.5)
        if cg.get("batch_listgate") and cg.get("batch_bogofilter"):
            n = cg["batch_posts"]
            srow("  instructions per post in a batch of %d" % n,
                 cg["batch_listgate"] / n, cg["batch_bogofilter"] / n,
                 ",.0f", key="ir_batch")
    pf = read_tsv(os.path.join(resdir, "postfix.tsv"))
    if pf:
        lgm = [num(r["lg_ms"]) for r in pf if r["lg_rc"] == "0"]
        bfm = [num(r["bf_ms"]) for r in pf if r["bf_rc"] == "0"]
        line("Postfix pass path, %d posts: filter --mta postfix running "
             "%s, against" % (len(pf), meta["postfix"]["deliver"]))
        line("  bogofilter -p -e | %s (%d and %d failed)" % (
            meta["postfix"]["deliver"], len(pf) - len(lgm),
            len(pf) - len(bfm)))
        rt = srow("  ms per post, median", med(lgm), med(bfm), ".2f",
                  key="postfix_ms")
        target("Postfix pass path, ms per post (li/bo; no polling)",
               _fmt(rt, ".2f"), "<= 1", rt is not None and rt <= 1)
        srow("  ms per post, p95", quantile(lgm, 0.95),
             quantile(bfm, 0.95), ".2f", key="postfix_ms_p95")
        if "lg_cpu_ms" in pf[0]:
            srow("  CPU ms per post, median",
                 med([num(r["lg_cpu_ms"]) for r in pf if r["lg_rc"] == "0"]),
                 med([num(r["bf_cpu_ms"]) for r in pf if r["bf_rc"] == "0"]),
                 ".2f", key="postfix_cpu_ms")
    hd = read_tsv(os.path.join(resdir, "hold.tsv"))
    if hd:
        hd = [r_ for r_ in hd if r_["pass_rc"] == "0"]
    if hd:
        line("hold path, %d posts, one process per post (listgate filter "
             "--mta qmail): each post" % len(hd))
        line("  passed, held through listgate holder and pgbouncer, held "
             "by the filter itself")
        line("  through pgbouncer; bogofilter -d DIR on the same post")
        m = {k: med([num(r_[k + "_ms"]) for r_ in hd])
             for k in ("pass", "holder", "self", "bf")}
        cm = {k: med([num(r_[k + "_cpu_ms"]) for r_ in hd])
              for k in ("pass", "holder", "self", "bf")}
        srow("  passed post, ms, median", m["pass"], m["bf"], ".2f",
             key="hold_pass_ms")
        srow("  held post through the holder, ms, median", m["holder"],
             m["bf"], ".2f", key="hold_holder_ms")
        srow("  held post by the filter itself, ms, median", m["self"],
             m["bf"], ".2f", key="hold_self_ms")
        rh = m["holder"] / m["pass"] if m["pass"] else None
        rc_ = cm["holder"] / cm["pass"] if cm["pass"] else None
        line("  held / passed: through the holder %s (CPU %s), by the "
             "filter itself %s" % (_fmt(rh, ".2f"), _fmt(rc_, ".2f"),
                                  _fmt(m["self"] / m["pass"] if m["pass"]
                                       else None, ".2f")))
        res["speed"].append({"what": "hold_over_pass", "holder": rh,
                             "self": m["self"] / m["pass"] if m["pass"]
                             else None})
        target2("held post / passed post, holder and pgbouncer",
                rh, rc_, "<= 2", lambda x: x <= 2)
    line()

    # --- accuracy targets ---
    for split, row in ratios.items():
        if split == "100":
            target("1-ROCA%, 100% training (li/bo, interval's low end)",
                   "%s [%s, %s]" % (_fmt(row["ratio"], ".2f"),
                                    _fmt(row["ci"][0], ".2f"),
                                    _fmt(row["ci"][1], ".2f")),
                   "low end <= 1", row["ci"][0] <= 1)
        elif split == "15":
            target("1-ROCA%, 15% training (li/bo)",
                   "%s [%s, %s]" % (_fmt(row["ratio"], ".2f"),
                                    _fmt(row["ci"][0], ".2f"),
                                    _fmt(row["ci"][1], ".2f")),
                   "<= 0.5", row["ratio"] <= 0.5)
    if onl:
        target("1-ROCA%, online (li/bo)", "%s [%s, %s]" % (
            _fmt(onl["ratio"], ".2f"), _fmt(onl["ci"][0], ".2f"),
            _fmt(onl["ci"][1], ".2f")), "<= 1 (no worse)",
            onl["ci"][0] <= 1)
    line("TARGETS (met: by the wall time; cpu: by the CPU time, the wall "
         "time stretched by load)")
    for t in res["targets"]:
        line("  %-4s %-66s %s (target %s)" % (
            "cpu" if t["met"] == "cpu" else "met" if t["met"] else "MISS",
            t["target"], t["measured"], t["goal"]))
    for s_ in L:
        print(s_, file=out)
    return res


def lg_cut_show(x):
    """a cutoff as text: enough digits to tell it from its neighbours"""
    if x is None:
        return "-"
    if x >= 0.999:
        return "1-%.1e" % (1 - x)
    return "%.4g" % x


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
    ap.add_argument("--resamples", type=int, default=None)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--against", metavar="OLDDIR",
                    help="compare listgate in resdir with listgate in an "
                    "earlier run's results (a change's before and after)")
    ap.add_argument("--filter", default="listgate",
                    help="the filter --against compares")
    args = ap.parse_args(argv)
    if args.against:
        against(args.resdir, args.against, args.filter,
                args.resamples or 1000, args.seed)
        return 0
    with open(os.path.join(args.resdir, "meta.json"), encoding="utf-8") as f:
        meta = json.load(f)
    rows = table(args.resdir, args.resamples or meta.get("resamples", 1000),
                 args.seed)
    with open(os.path.join(args.resdir, "table.json"), "w",
              encoding="utf-8") as f:
        json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""sitebench.py - the site store benchmarks, with the real listgate commands

    python3 tests/bench/sitebench.py [--listgate PATH] [--data DIR] [--work DIR]
        [--out DIR] [--draws N] [--only young|lists]

Called by sitebench.sh (which fetches the corpus and installs bogofilter); see
tests/bench/README.md.  Every filter is trained with `listgate train` /
`bogofilter -n|-s` and scores the test posts in one batch process; the
sets are sitesets.py's (the benchmark's hash rule: first SHA-1 byte of
the file name < 128 trains).

young: the site store is trained on the older part of the corpus
(easy-ham-1, spam-1, all of it); a new list on n ham + n spam of the newer
part's training half (n = 0, 10, 25, 50, 100, and the whole half), drawn
--draws times for the small sizes (each draw a fixed shuffle of the
half), and scored on the newer part's test half: without the site store,
with it (site_list), and bogofilter trained on the same own posts alone.

lists: the nine mailing lists of the corpus's ham, each with a share of
the spam; per list, its own file alone, one site-wide file (every list's
training posts) and the site store combined with the list's own file, at
ham_cutoff 0.3.

Prints the tables and writes them (and every score) into --out.
"""
import argparse
import bisect
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sitesets  # noqa: E402

SIZES = (0, 10, 25, 50, 100, -1)        # -1: the whole training half
HAM_CUTOFF = 0.3                        # listgate's default
BOGO_HAM_CUTOFF = 0.45                  # Debian's bogofilter.cf


def log(msg):
    print("site: " + msg, file=sys.stderr, flush=True)


def run(argv, cwd=None):
    p = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise SystemExit("site: %s failed (exit %d): %s" % (
            " ".join(argv[:6]), p.returncode,
            p.stderr.decode("utf-8", "replace")[:500]))
    return p.stdout.decode("utf-8", "replace")


def chunks(seq, n):
    for i in range(0, len(seq), n):
        yield seq[i:i + n]


def roca(scores):
    """1-ROCA% of [(is_spam, score)]: 100 * P(ham >= spam), ties half"""
    ham = sorted(s for sp, s in scores if not sp)
    spam = sorted(s for sp, s in scores if sp)
    if not ham or not spam:
        return 0.0
    bad = 0.0
    # for each spam score: hams above it, plus half the ties
    for s in spam:
        lo = bisect.bisect_left(ham, s)
        hi = bisect.bisect_right(ham, s)
        bad += (len(ham) - hi) + (hi - lo) / 2.0
    return 100.0 * bad / (len(ham) * len(spam))


def passed_at_held(scores, held):
    """spam passed at the lowest cutoff that holds at most held ham: just
    above the (held+1)-th highest ham score"""
    ham = sorted((s for sp, s in scores if not sp), reverse=True)
    if held >= len(ham):
        return 0
    cut = math.nextafter(ham[held], math.inf)
    return sum(1 for sp, s in scores if sp and s < cut)


def errors(scores, cut):
    """(spam passed, ham held) at cut"""
    return (sum(1 for sp, s in scores if sp and s < cut),
            sum(1 for sp, s in scores if not sp and s >= cut))


class Listgate:
    def __init__(self, binary, cfg, site_list=None):
        self.binary = binary
        self.cfg = cfg
        shutil.rmtree(cfg, ignore_errors=True)
        os.makedirs(os.path.join(cfg, "tokens"))
        os.makedirs(os.path.join(cfg, "lists"))
        self.set_site(site_list)

    def set_site(self, site_list):
        with open(os.path.join(self.cfg, "listgate.conf"), "w") as f:
            f.write("# written by tests/bench/sitebench.py\ntokens_dir = %s\n" %
                    os.path.join(self.cfg, "tokens"))
            if site_list:
                f.write("site_list = %s\n" % site_list)

    def base(self):
        # as root (a container), stay root: --allow-root
        return [self.binary] + (["--allow-root"] if os.geteuid() == 0
                                else []) + ["--config", self.cfg]

    def forget(self, lst):
        p = os.path.join(self.cfg, "tokens", lst + ".kch")
        if os.path.exists(p):
            os.unlink(p)

    def train(self, lst, posts, data):
        for cls in ("ham", "spam"):
            files = [p.path(data) for p in posts if p.cls == cls]
            for ch in chunks(files, 500):
                run(self.base() + ["train", "-q", "--list", lst, "--" + cls] +
                    ch)

    def score(self, lst, posts, data):
        """[(is_spam, score)] in the order of posts"""
        files = [p.path(data) for p in posts]
        res = {}
        for ch in chunks(files, 2000):
            out = run(self.base() + ["score", "--list", lst] + ch)
            for line in out.splitlines():
                f = line.split(None, 2)
                if len(f) == 3:
                    res[f[2]] = float(f[1])
        missing = [f for f in files if f not in res]
        if missing:
            raise SystemExit("site: no score for %s" % missing[0])
        return [(p.cls == "spam", res[p.path(data)]) for p in posts]


class Bogofilter:
    def __init__(self, d):
        self.dir = d

    def reset(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)

    def train(self, posts, data):
        for cls in ("ham", "spam"):
            files = [p.path(data) for p in posts if p.cls == cls]
            for ch in chunks(files, 500):
                run(["bogofilter", "-d", self.dir,
                     "-s" if cls == "spam" else "-n", "-B"] + ch)

    def score(self, posts, data):
        files = [p.path(data) for p in posts]
        res = {}
        for ch in chunks(files, 2000):
            p = subprocess.run(["bogofilter", "-d", self.dir, "-TT", "-B"] +
                               ch, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
            for line in p.stdout.decode("utf-8", "replace").splitlines():
                f = line.rsplit(None, 1)
                if len(f) == 2:
                    try:
                        res[f[0]] = float(f[1])
                    except ValueError:
                        pass
        return [(p.cls == "spam", res.get(p.path(data), 0.5)) for p in posts]


def draw(posts, n, d):
    """n ham and n spam of posts, the d-th fixed shuffle"""
    def key(p):
        return hashlib.sha1(("%d/" % d + p.rel).encode()).digest()
    out = []
    for cls in ("ham", "spam"):
        out += sorted((p for p in posts if p.cls == cls), key=key)[:n]
    return out


def young(a, data, work):
    posts = sitesets.young(data)
    site = [p for p in posts if p.group == "site"]
    train = [p for p in posts if p.group == "own" and p.train]
    test = [p for p in posts if p.group == "own" and not p.train]
    log("young: site %d ham + %d spam; new list's training half %d + %d, "
        "test half %d ham + %d spam" % (
            sum(p.cls == "ham" for p in site),
            sum(p.cls == "spam" for p in site),
            sum(p.cls == "ham" for p in train),
            sum(p.cls == "spam" for p in train),
            sum(p.cls == "ham" for p in test),
            sum(p.cls == "spam" for p in test)))
    lg = Listgate(a.listgate, os.path.join(work, "young"), "site")
    bf = Bogofilter(os.path.join(work, "young-bogofilter"))
    lg.train("site", site, data)
    rows = []
    raw = {}
    for n in SIZES:
        draws = 1 if n in (0, -1) else a.draws
        acc = {}
        for d in range(draws):
            own = train if n < 0 else draw(train, n, d)
            lg.forget("new")
            if own:
                lg.train("new", own, data)
            bf.reset()
            if own:
                bf.train(own, data)
            runs = {}
            lg.set_site("site")
            runs["with site"] = (lg.score("new", test, data), HAM_CUTOFF)
            if own:
                lg.set_site(None)
                runs["alone"] = (lg.score("new", test, data), HAM_CUTOFF)
            runs["bogofilter"] = (bf.score(test, data), BOGO_HAM_CUTOFF)
            for k, (sc, cut) in runs.items():
                sp, hh = errors(sc, cut)
                acc.setdefault(k, []).append((roca(sc), sp, hh))
                raw.setdefault((n, k), []).append(sc)
        label = "whole" if n < 0 else "%d+%d" % (n, n)
        nown = len(train) if n < 0 else 2 * n
        for k in ("alone", "with site", "bogofilter"):
            if k not in acc:
                continue
            v = acc[k]
            rows.append({"own": label, "own_posts": nown, "filter": k,
                         "draws": len(v),
                         "roca": sum(x[0] for x in v) / len(v),
                         "roca_min": min(x[0] for x in v),
                         "roca_max": max(x[0] for x in v),
                         "spam_passed": sum(x[1] for x in v) / len(v),
                         "ham_held": sum(x[2] for x in v) / len(v)})
        log("young: own %s done" % label)
    nts = sum(p.cls == "spam" for p in test)
    nth = sum(p.cls == "ham" for p in test)
    lines = ["own posts   filter        1-ROCA%  (range over draws)     "
             "spam passed   ham held",
             "-" * 86]
    for r in rows:
        rng = "" if r["draws"] == 1 else "[%.4f, %.4f] x%d" % (
            r["roca_min"], r["roca_max"], r["draws"])
        lines.append("%-11s %-12s %8.4f  %-22s %6.1f/%d %7.1f/%d" % (
            r["own"], r["filter"], r["roca"], rng, r["spam_passed"], nts,
            r["ham_held"], nth))
    # the goal: the 25+25 list with the site store against the whole
    # training half alone
    w = [r for r in rows if r["own"] == "25+25" and r["filter"] == "with site"]
    h = [r for r in rows if r["own"] == "whole" and r["filter"] == "alone"]
    if w and h:
        w, h = w[0], h[0]
        ok = w["roca"] <= h["roca"]
        lines.append("")
        lines.append("goal: 25+25 with the site store (1-ROCA%% %.4f, %.1f "
                     "spam passed, %.1f ham held) %s the whole training half "
                     "alone (%.4f, %.1f, %.1f)%s" % (
                         w["roca"], w["spam_passed"], w["ham_held"],
                         "no worse than" if ok else "WORSE than", h["roca"],
                         h["spam_passed"], h["ham_held"],
                         "" if ok else ": gap %.4f" % (w["roca"] - h["roca"])))
        # the same operating point: as much ham held as the whole half
        # alone holds at ham_cutoff 0.3
        held = int(round(h["ham_held"]))
        sp = [passed_at_held(sc, held) for sc in raw[(25, "with site")]]
        sp = [x for x in sp if x is not None]
        if sp:
            lines.append("      at the cutoff holding at most %d ham (as the "
                         "whole half alone at %g), 25+25 with the site store "
                         "passes %.1f spam (whole half alone: %.1f)" % (
                             held, HAM_CUTOFF, sum(sp) / len(sp),
                             h["spam_passed"]))
    return rows, "\n".join(lines) + "\n"


def lists(a, data, work):
    posts = sitesets.lists(data)
    names = [n for n, _ in sitesets.LISTS]
    train = [p for p in posts if p.train]
    test = [p for p in posts if not p.train]
    lg = Listgate(a.listgate, os.path.join(work, "lists"), None)
    log("lists: %d training posts, %d test posts (%d ham, %d spam)" % (
        len(train), len(test), sum(p.cls == "ham" for p in test),
        sum(p.cls == "spam" for p in test)))
    lg.train("site", train, data)
    for n in names:
        lg.train(n, [p for p in train if p.group == n], data)
    rows = []
    for n in names:
        t = [p for p in test if p.group == n]
        r = {"list": n, "ham": sum(p.cls == "ham" for p in t),
             "spam": sum(p.cls == "spam" for p in t),
             "train_ham": sum(p.cls == "ham" and p.group == n for p in train),
             "train_spam": sum(p.cls == "spam" and p.group == n
                               for p in train)}
        lg.set_site(None)
        for k, lst in (("alone", n), ("site", "site")):
            sc = lg.score(lst, t, data)
            r[k] = (roca(sc),) + errors(sc, HAM_CUTOFF)
        lg.set_site("site")
        sc = lg.score(n, t, data)
        r["combined"] = (roca(sc),) + errors(sc, HAM_CUTOFF)
        rows.append(r)
    lines = ["list                train      test     | alone: "
             "held pass 1-ROCA% | site-wide: held pass 1-ROCA% | combined: "
             "held pass 1-ROCA% | goal",
             "-" * 138]
    tot = {"alone": [0, 0], "site": [0, 0], "combined": [0, 0]}
    nh = ns = 0
    allok = True
    for r in rows:
        ok = (r["combined"][2] <= min(r["alone"][2], r["site"][2]) and
              r["combined"][1] <= min(r["alone"][1], r["site"][1]))
        allok = allok and ok
        for k in tot:
            tot[k][0] += r[k][2]
            tot[k][1] += r[k][1]
        nh += r["ham"]
        ns += r["spam"]
        lines.append(
            "%-19s %4d+%-4d %4d+%-4d | %11d %4d %7.4f | %15d %4d %7.4f | "
            "%14d %4d %7.4f | %s" % (
                r["list"], r["train_ham"], r["train_spam"], r["ham"],
                r["spam"], r["alone"][2], r["alone"][1], r["alone"][0],
                r["site"][2], r["site"][1], r["site"][0],
                r["combined"][2], r["combined"][1], r["combined"][0],
                "ok" if ok else "MISSED"))
    lines.append("%-19s %9s %4d+%-4d | %11d %4d %7s | %15d %4d %7s | "
                 "%14d %4d %7s | %s" % (
                     "all", "", nh, ns, tot["alone"][0], tot["alone"][1], "",
                     tot["site"][0], tot["site"][1], "", tot["combined"][0],
                     tot["combined"][1], "", "ok" if allok else "MISSED"))
    lines.append("")
    lines.append("held: test ham held (score >= %g); pass: test spam passed; "
                 "goal: combined no worse than the better of alone and "
                 "site-wide on both counts" % HAM_CUTOFF)
    return rows, "\n".join(lines) + "\n"


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    top = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser(description="the site store benchmarks")
    ap.add_argument("--listgate", default=os.environ.get(
        "LISTGATE", os.path.join(top, "build", "listgate")))
    ap.add_argument("--data", default=os.environ.get(
        "LISTGATE_CORPUS", os.path.join(top, "cache", "spam-assassin",
                                        "package", "data")))
    ap.add_argument("--work", default=None)
    ap.add_argument("--out", default=None)
    ap.add_argument("--draws", type=int, default=5)
    ap.add_argument("--only", choices=["young", "lists"])
    a = ap.parse_args(argv)
    a.listgate = os.path.abspath(a.listgate)
    data = os.path.abspath(a.data)
    work = a.work or os.path.join(top, "cache", "site-work")
    out = a.out or os.path.join(top, "cache", "site-results")
    os.makedirs(out, exist_ok=True)
    os.environ["LISTGATE_CONFIG"] = "/nonexistent-listgate-config"
    for k in list(os.environ):
        if k.startswith("PG"):
            del os.environ[k]
    result = {"listgate": run([a.listgate, "--version"]).strip(),
              "bogofilter": run(["bogofilter", "-V"]).splitlines()[0],
              "draws": a.draws}
    text = ""
    if a.only in (None, "young"):
        rows, t = young(a, data, work)
        result["young"] = rows
        text += "young list (own training size), test half of easy-ham-2 + " \
            "spam-2:\n\n" + t + "\n"
    if a.only in (None, "lists"):
        rows, t = lists(a, data, work)
        result["lists"] = rows
        text += "the nine lists, at ham_cutoff %g:\n\n" % HAM_CUTOFF + t
    with open(os.path.join(out, "site-table.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "site-table.json"), "w") as f:
        json.dump(result, f, indent=1)
    sys.stdout.write(text)
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

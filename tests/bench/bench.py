#!/usr/bin/env python3
"""bench.py - listgate against bogofilter on the SpamAssassin public corpus

Called by bench.sh (which fetches the corpus, installs bogofilter and
finds or builds listgate); see tests/bench/README.md.  Trains both
filters on the same posts, scores every test post as its own process (as
an MTA runs a filter) and all of them in one batch process, writes the
raw scores to the results directory and prints the table (roc.py).

The split is fixed by the post's bare file name: b = first byte of
sha1(name), b < 128 train, b >= 128 test, b < 38 the 15% training subset.
"""

import argparse
import datetime
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import roc  # noqa: E402

HAM_DIRS = ("easy-ham-1", "easy-ham-2", "hard-ham-1")
SPAM_DIRS = ("spam-1", "spam-2")
LIST = "bench"


def posts(data):
    """[(class, relpath, b)] for every *.txt post, in a fixed order."""
    out = []
    for cls, dirs in (("ham", HAM_DIRS), ("spam", SPAM_DIRS)):
        for d in dirs:
            for name in sorted(os.listdir(os.path.join(data, d))):
                if not name.endswith(".txt"):
                    continue
                b = hashlib.sha1(name.encode()).digest()[0]
                out.append((cls, d + "/" + name, b))
    return out


def run(argv, cwd, stdin=None):
    """Run argv; return (rc, stdout, stderr, wall seconds)."""
    t0 = time.perf_counter()
    p = subprocess.run(argv, cwd=cwd, stdin=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    return (p.returncode, p.stdout.decode("utf-8", "replace"),
            p.stderr.decode("utf-8", "replace"), time.perf_counter() - t0)


def chunks(seq, n):
    for i in range(0, len(seq), n):
        yield seq[i:i + n]


class Filter:
    """What the bench needs from a filter: reset, train, score."""
    name = None

    def reset(self):
        raise NotImplementedError

    def train_argv(self, cls, files):
        raise NotImplementedError

    def score_argv(self):
        """argv that scores one post read from stdin"""
        raise NotImplementedError

    def batch_argv(self, files):
        raise NotImplementedError

    def parse_one(self, out):
        """(score, verdict) from the output for one post, or None"""
        raise NotImplementedError

    def parse_batch(self, out):
        """{relpath: (score, verdict)}"""
        raise NotImplementedError


class Listgate(Filter):
    name = "listgate"

    def __init__(self, binary, work):
        self.binary = binary
        self.cfg = os.path.join(work, "config")

    def reset(self):
        shutil.rmtree(self.cfg, ignore_errors=True)
        os.makedirs(os.path.join(self.cfg, "tokens"))
        os.makedirs(os.path.join(self.cfg, "lists"))
        with open(os.path.join(self.cfg, "listgate.conf"), "w") as f:
            f.write("# written by tests/bench/bench.py\n"
                    "tokens_dir = %s\n" % os.path.join(self.cfg, "tokens"))

    def _base(self):
        return [self.binary, "--config", self.cfg]

    def train_argv(self, cls, files):
        return self._base() + ["train", "--list", LIST, "--" + cls] + \
            list(files)

    def score_argv(self):
        return self._base() + ["score", "--list", LIST]

    def batch_argv(self, files):
        return self._base() + ["score", "--list", LIST] + list(files)

    def train_ok(self, rc):
        return rc == 0

    def parse_one(self, out):
        f = out.split()
        if len(f) < 2 or f[0] not in ("ham", "unsure", "spam"):
            return None
        try:
            return float(f[1]), f[0]
        except ValueError:
            return None

    def parse_batch(self, out):
        res = {}
        for line in out.splitlines():
            f = line.split(None, 2)
            if len(f) == 3 and f[0] in ("ham", "unsure", "spam"):
                try:
                    res[f[2]] = (float(f[1]), f[0])
                except ValueError:
                    pass
        return res


class Bogofilter(Filter):
    name = "bogofilter"

    def __init__(self, work):
        self.dir = os.path.join(work, "bogofilter")
        self.ham_cutoff, self.spam_cutoff = self._cutoffs()

    @staticmethod
    def _cutoffs():
        """the installed configuration's cutoffs (Debian: 0.45 / 0.99)"""
        ham, spam = 0.45, 0.99
        try:
            out = subprocess.run(["bogofilter", "-Q"], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL).stdout.decode()
            for line in out.splitlines():
                f = line.split()
                if len(f) >= 3 and f[1] == "=":
                    if f[0] == "ham_cutoff":
                        ham = float(f[2])
                    elif f[0] == "spam_cutoff":
                        spam = float(f[2])
        except (OSError, ValueError):
            pass
        return ham, spam

    def verdict(self, s):
        if s < self.ham_cutoff:
            return "ham"
        return "spam" if s >= self.spam_cutoff else "unsure"

    def reset(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)

    def train_argv(self, cls, files):
        return ["bogofilter", "-d", self.dir,
                "-s" if cls == "spam" else "-n", "-B"] + list(files)

    def train_ok(self, rc):
        return rc == 0

    def score_argv(self):
        # -TT: the bare spamicity with 16 significant digits
        return ["bogofilter", "-d", self.dir, "-TT"]

    def batch_argv(self, files):
        return ["bogofilter", "-d", self.dir, "-TT", "-B"] + list(files)

    def parse_one(self, out):
        f = out.split()
        if len(f) != 1:
            return None
        try:
            s = float(f[0])
        except ValueError:
            return None
        return s, self.verdict(s)

    def parse_batch(self, out):
        res = {}
        for line in out.splitlines():
            f = line.rsplit(None, 1)
            if len(f) == 2:
                try:
                    s = float(f[1])
                except ValueError:
                    continue
                res[f[0]] = (s, self.verdict(s))
        return res


def first_line(argv):
    """first output line of argv, or '?'"""
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        lines = p.stdout.decode("utf-8", "replace").strip().splitlines()
        return lines[0] if lines else "?"
    except OSError:
        return "?"


def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


def train(flt, data, train_set):
    """Train flt from scratch; return wall seconds.  Chunks of 500 files
    per process for both filters alike."""
    flt.reset()
    total = 0.0
    for cls in ("ham", "spam"):
        files = [p for c, p, _ in train_set if c == cls]
        for ch in chunks(files, 500):
            rc, out, err, dt = run(flt.train_argv(cls, ch), data)
            total += dt
            if not flt.train_ok(rc):
                raise SystemExit("bench: %s training failed (exit %d): %s" %
                                 (flt.name, rc, err.strip()[:500]))
    return total


def batch(flt, data, test):
    """Score every test post in one process; ({relpath: (score, verdict)},
    seconds)."""
    files = [p for _, p, _ in test]
    rc, out, err, dt = run(flt.batch_argv(files), data)
    res = flt.parse_batch(out)
    if len(res) != len(files):
        log("%s batch: %d of %d posts scored (exit %d) %s" %
            (flt.name, len(res), len(files), rc, err.strip()[:300]))
    return res, dt


def per_process(filters, data, test):
    """Score each post in its own process, the filters interleaved (and
    their order alternated) so machine noise hits both alike.
    Returns {filter name: {relpath: (score, verdict, ms, cpu ms)}}."""
    res = {f.name: {} for f in filters}
    errors = {f.name: 0 for f in filters}
    n = len(test)
    for i, (_, rel, _) in enumerate(test):
        order = filters if i % 2 == 0 else list(reversed(filters))
        for flt in order:
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            with open(os.path.join(data, rel), "rb") as fin:
                rc, out, err, dt = run(flt.score_argv(), data, stdin=fin)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
            got = flt.parse_one(out)
            if got is None:
                errors[flt.name] += 1
                if errors[flt.name] <= 3:
                    log("%s: no score for %s (exit %d): %s" %
                        (flt.name, rel, rc, err.strip()[:300]))
                res[flt.name][rel] = (None, "error", dt * 1000, cpu * 1000)
            else:
                res[flt.name][rel] = (got[0], got[1], dt * 1000, cpu * 1000)
        if (i + 1) % 500 == 0:
            log("  %d/%d posts" % (i + 1, n))
    return res, errors


def write_scores(path, test, scores, with_ms):
    with open(path, "w", encoding="utf-8") as f:
        f.write("#class\tpost\tscore\tverdict\twall_ms\n")
        for cls, rel, _ in test:
            v = scores.get(rel)
            if v is None:
                continue
            f.write("%s\t%s\t%s\t%s\t%s\n" % (
                cls, rel, "" if v[0] is None else repr(v[0]), v[1],
                "%.3f" % v[2] if with_ms and v[2] is not None else ""))


def main(argv):
    ap = argparse.ArgumentParser(description="listgate vs bogofilter")
    ap.add_argument("--listgate", required=True)
    ap.add_argument("--data", required=True, help="the corpus data/ dir")
    ap.add_argument("--work", required=True, help="scratch dir")
    ap.add_argument("--out", required=True, help="results dir")
    ap.add_argument("--quick", action="store_true",
                    help="one process per post for 1 in 4 test posts only")
    ap.add_argument("--splits", default="100,15")
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)

    data = os.path.abspath(args.data)
    allp = posts(data)
    test = [p for p in allp if p[2] >= 128]
    sets = {"100": [p for p in allp if p[2] < 128],
            "15": [p for p in allp if p[2] < 38]}
    splits = [s for s in args.splits.split(",") if s]
    for s in splits:
        if s not in sets:
            raise SystemExit("bench: unknown split %s (100 or 15)" % s)
    proc_test = test[::4] if args.quick else test
    log("corpus: %d ham + %d spam test posts; training %s" % (
        sum(1 for p in test if p[0] == "ham"),
        sum(1 for p in test if p[0] == "spam"),
        ", ".join("%s%%: %d" % (s, len(sets[s])) for s in splits)))

    os.makedirs(args.out, exist_ok=True)
    lg = Listgate(os.path.abspath(args.listgate),
                  os.path.join(args.work, "listgate"))
    bf = Bogofilter(os.path.join(args.work, "bogofilter"))
    filters = [lg, bf]
    meta = {
        "date": datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"),
        "filters": [f.name for f in filters], "splits": splits,
        "quick": args.quick, "listgate": os.path.abspath(args.listgate),
        "test_ham": sum(1 for p in test if p[0] == "ham"),
        "test_spam": sum(1 for p in test if p[0] == "spam"),
        "proc_posts": len(proc_test),
        "cutoffs": {"listgate": "its own verdicts (ham = below ham_cutoff)",
                    "bogofilter": "ham_cutoff %g, spam_cutoff %g" % (
                        bf.ham_cutoff, bf.spam_cutoff)},
        "runs": {},
        "versions": {"listgate": first_line([lg.binary, "--version"]),
                     "bogofilter": first_line(["bogofilter", "-V"]),
                     "python": sys.version.split()[0],
                     "commit": first_line(["git", "-C", os.path.dirname(
                         os.path.abspath(__file__)), "describe", "--always",
                         "--dirty"])},
    }
    for s in splits:
        for flt in filters:
            log("split %s%%: training %s" % (s, flt.name))
            meta["runs"]["%s-%s" % (flt.name, s)] = {
                "train_s": train(flt, data, sets[s]),
                "train_posts": len(sets[s])}
        for flt in filters:
            log("split %s%%: batch %s" % (s, flt.name))
            res, dt = batch(flt, data, test)
            info = meta["runs"]["%s-%s" % (flt.name, s)]
            info["batch_s"] = dt
            info["batch_scored"] = len(res)
            info["batch_per_s"] = len(res) / dt if dt > 0 else None
            write_scores(os.path.join(args.out, "scores-%s-%s-batch.tsv" %
                                      (flt.name, s)), test,
                         {k: (v[0], v[1], None) for k, v in res.items()},
                         False)
        log("split %s%%: one process per post, %d posts x %d filters" %
            (s, len(proc_test), len(filters)))
        res, errors = per_process(filters, data, proc_test)
        for flt in filters:
            info = meta["runs"]["%s-%s" % (flt.name, s)]
            info["errors"] = errors[flt.name]
            cpu = [v[3] for v in res[flt.name].values()]
            info["cpu_ms_median"] = roc.quantile(cpu, 0.5) if cpu else None
            write_scores(os.path.join(args.out, "scores-%s-%s-proc.tsv" %
                                      (flt.name, s)), proc_test,
                         res[flt.name], True)
        with open(os.path.join(args.out, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1)

    with open(os.path.join(args.out, "table.txt"), "w") as f:
        rows = roc.table(args.out, args.resamples, args.seed, out=f)
    with open(os.path.join(args.out, "table.json"), "w") as f:
        json.dump(rows, f, indent=1)
    with open(os.path.join(args.out, "table.txt")) as f:
        sys.stdout.write(f.read())
    bad = [k for k, v in meta["runs"].items() if v.get("errors")]
    if bad:
        log("posts without a score in: %s" % ", ".join(bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""sitepass.py - the filter's pass path with and without the site store

    python3 tests/bench/sitepass.py --listgate NEW [--base OLD] [--runs N]
        [--data DIR]

Trains a list (300 ham + 300 spam of easy-ham-1 / spam-1) and a site
store (the rest of those two directories), then times `listgate filter
--list dev --mta qmail` passing one ham post from standard input, one
process per run as an MTA runs it: NEW with no site store, NEW with the
site store (site_list set), and OLD (a build without the site store, if
given) on the same token file.  The runs are interleaved so machine
noise hits each alike; prints the median and 95th percentile wall
milliseconds of each, the mean CPU milliseconds (user + system), and
their ratios to the first.
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def run(argv):
    p = subprocess.run(argv, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise SystemExit("sitepass: %s: exit %d: %s" % (
            " ".join(argv[:5]), p.returncode, p.stderr.decode()[:300]))


def conf(d, site):
    os.makedirs(os.path.join(d, "lists"), exist_ok=True)
    with open(os.path.join(d, "listgate.conf"), "w") as f:
        f.write("tokens_dir = %s\n" % os.path.join(os.path.dirname(d),
                                                  "tokens"))
        if site:
            f.write("site_list = site\n")


def main():
    top = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    ap = argparse.ArgumentParser()
    ap.add_argument("--listgate", required=True)
    ap.add_argument("--base")
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--data", default=os.environ.get(
        "LISTGATE_CORPUS", os.path.join(top, "cache", "spam-assassin",
                                        "package", "data")))
    a = ap.parse_args()
    w = tempfile.mkdtemp(prefix="sitepass.")
    try:
        off, on = os.path.join(w, "off"), os.path.join(w, "on")
        conf(off, False)
        conf(on, True)
        ham = sorted(os.path.join(a.data, "easy-ham-1", n) for n in
                     os.listdir(os.path.join(a.data, "easy-ham-1"))
                     if n.endswith(".txt"))
        spam = sorted(os.path.join(a.data, "spam-1", n) for n in
                      os.listdir(os.path.join(a.data, "spam-1"))
                      if n.endswith(".txt"))
        lg = os.path.abspath(a.listgate)
        root = ["--allow-root"] if os.geteuid() == 0 else []
        for lst, h, s in (("dev", ham[:300], spam[:300]),
                          ("site", ham[300:], spam[300:])):
            run([lg] + root + ["--config", off, "train", "-q", "--list", lst,
                               "--ham"] + h)
            run([lg] + root + ["--config", off, "train", "-q", "--list", lst,
                               "--spam"] + s)
        post = ham[-1]
        cases = [("new, no site store", [lg] + root + ["--config", off]),
                 ("new, site store", [lg] + root + ["--config", on])]
        if a.base:
            cases.insert(0, ("base", [os.path.abspath(a.base)] + root +
                             ["--config", off]))
        times = {name: [] for name, _ in cases}
        cpu = {name: [] for name, _ in cases}
        for i in range(a.runs):
            order = cases if i % 2 == 0 else list(reversed(cases))
            for name, base in order:
                with open(post, "rb") as f:
                    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                    t0 = time.perf_counter()
                    p = subprocess.run(base + ["filter", "--list", "dev",
                                               "--mta", "qmail"], stdin=f,
                                       stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
                    dt = (time.perf_counter() - t0) * 1000
                    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                if p.returncode != 0:
                    raise SystemExit("sitepass: %s: filter exit %d (the "
                                     "post should pass)" % (name,
                                                            p.returncode))
                times[name].append(dt)
                cpu[name].append((r1.ru_utime - r0.ru_utime + r1.ru_stime -
                                  r0.ru_stime) * 1000)
        ref = statistics.median(times[cases[0][0]])
        cref = statistics.mean(cpu[cases[0][0]])
        print("%-22s %8s %8s %8s %8s %8s" % ("pass path", "ms med",
                                             "ms p95", "ratio", "cpu ms",
                                             "ratio"))
        for name, _ in cases:
            v = sorted(times[name])
            med = statistics.median(v)
            c = statistics.mean(cpu[name])
            print("%-22s %8.3f %8.3f %8.3f %8.3f %8.3f" % (
                name, med, v[int(len(v) * 0.95)], med / ref, c, c / cref))
    finally:
        shutil.rmtree(w, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""passcount_bench.py - what counting a passed post costs the filter

    python3 tests/bench/passcount_bench.py LISTGATE [N]

Two lists whose filter passes every post (ham_cutoff 1), trained alike
on tests/data/tune/ham; list a counts its passes in tokens/a.passed, list
b cannot (its counter path is a directory, so the count fails at once).
The same post goes through `listgate filter --mta qmail` N times for
each list (default 300), the two alternating so machine noise hits both
alike; prints the CPU time (user + system) and the median wall time per
post of each, and the difference.  Needs no database.
"""

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time


def main(argv):
    lg = os.path.abspath(argv[1])
    root = ["--allow-root"] if os.geteuid() == 0 else []
    n = int(argv[2]) if len(argv) > 2 else 300
    top = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    data = os.path.join(top, "tests", "data", "tune", "ham")
    t = tempfile.mkdtemp(prefix="lg-passbench.")
    try:
        conf = os.path.join(t, "conf")
        os.makedirs(os.path.join(conf, "lists"))
        with open(os.path.join(conf, "listgate.conf"), "w") as f:
            f.write("tokens_dir = %s/tokens\n" % t)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        for lst in ("a", "b"):
            with open(os.path.join(conf, "lists", lst + ".conf"), "w") as f:
                f.write("ham_cutoff = 1\nspam_cutoff = 1\n")
            subprocess.run([lg] + root + ["--config", conf, "train", "--list", lst,
                            "--ham", data], env=env, check=True,
                           stdout=subprocess.DEVNULL)
        os.makedirs(os.path.join(t, "tokens", "b.passed"))
        post = open(os.path.join(data, sorted(os.listdir(data))[0]),
                    "rb").read()
        cpu = {"a": 0.0, "b": 0.0}
        wall = {"a": [], "b": []}
        for i in range(n):
            for lst in (("a", "b") if i % 2 else ("b", "a")):
                r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.perf_counter()
                p = subprocess.run([lg] + root + ["--config", conf, "filter",
                                    "--list", lst, "--mta", "qmail"],
                                   input=post,
                                   env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
                w = time.perf_counter() - t0
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                if p.returncode != 0:
                    raise SystemExit("filter exited %d" % p.returncode)
                cpu[lst] += (r1.ru_utime - r0.ru_utime) + \
                    (r1.ru_stime - r0.ru_stime)
                wall[lst].append(w)
        for lst, what in (("a", "counting"), ("b", "not counting")):
            w = sorted(wall[lst])
            print("%-13s CPU %.3f ms/post, wall median %.3f ms" % (
                what, 1000 * cpu[lst] / n, 1000 * w[n // 2]))
        print("difference    CPU %.3f ms/post" %
              (1000 * (cpu["a"] - cpu["b"]) / n))
    finally:
        shutil.rmtree(t, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

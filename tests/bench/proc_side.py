#!/usr/bin/env python3
"""proc_side.py - builds of listgate side by side, one process per post.

    python3 tests/bench/proc_side.py --corpus DATA --listgate A=PATH
        [--listgate B=PATH ...] [--posts 400] [--split 100|15]
        [--seed 1] [--work DIR]

What bench.sh measures as "one process per post", for two or more
binaries in one run: each build trains its own token file from the
benchmark's training half (standalone, one process per class),
bogofilter its wordlist, and then every sampled test post is scored by
the process floor (tests/bench/floor.c), each build and bogofilter in
turn, the order reversed on every other post, each run timed by
tests/bench/timeit.c.  It prints the median wall and CPU milliseconds,
those above the floor's, and their ratio to bogofilter's.  On a
machine whose noise moves the bench's ratio by a tenth from one run to
the next, only builds timed in one run compare.
"""

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tunelib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def build(work, name):
    exe = os.path.join(work, name)
    src = os.path.join(HERE, name + ".c")
    subprocess.run(["cc", "-O2", "-o", exe, src], check=True)
    return exe


def lg_argv(binary, cfg, *args):
    root = ["--allow-root"] if os.geteuid() == 0 else []
    return [binary] + root + ["--config", cfg] + list(args)


def train_listgate(binary, cfg, data, train):
    shutil.rmtree(cfg, ignore_errors=True)
    os.makedirs(os.path.join(cfg, "tokens"))
    os.makedirs(os.path.join(cfg, "lists"))
    with open(os.path.join(cfg, "listgate.conf"), "w") as f:
        f.write("tokens_dir = %s\n" % os.path.join(cfg, "tokens"))
    for cls in ("ham", "spam"):
        files = [p for c, p, _ in train if c == cls]
        rc, _, err, _ = tunelib.run(lg_argv(binary, cfg, "train", "--quiet",
                                            "--list", "side", "--" + cls) +
                                    files, data)
        if rc != 0:
            raise SystemExit("proc_side: %s train failed: %s" %
                             (binary, err.strip()[:300]))


def train_bogofilter(d, data, train):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for cls in ("ham", "spam"):
        files = [p for c, p, _ in train if c == cls]
        rc, _, err, _ = tunelib.run(["bogofilter", "-d", d,
                                     "-s" if cls == "spam" else "-n", "-B"] +
                                    files, data)
        if rc != 0:
            raise SystemExit("proc_side: bogofilter training failed: %s" %
                             err.strip()[:300])


def timed(timeit, data, path, argv):
    """(wall ms, cpu ms) of one run with the post on standard input"""
    p = subprocess.run([timeit, os.path.join(data, path)] + argv,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    f = p.stderr.decode("utf-8", "replace").split()
    if len(f) != 5 or f[0] != "timeit":
        raise SystemExit("proc_side: timeit failed: %s" % " ".join(f)[:300])
    if f[3] not in ("0", "1") and argv[0] != "bogofilter":
        raise SystemExit("proc_side: %s exited %s on %s" %
                         (argv[0], f[3], path))
    return float(f[1]), float(f[4])


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", required=True,
                    help="the corpus' data/ directory (tests/bench/corpus.sh)")
    ap.add_argument("--listgate", action="append", required=True,
                    metavar="LABEL=PATH", help="a build to time (repeat)")
    ap.add_argument("--posts", type=int, default=400,
                    help="test posts sampled (default 400)")
    ap.add_argument("--split", choices=("100", "15"), default="100")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work", default="/tmp/listgate-proc-side")
    a = ap.parse_args(argv)

    builds = []
    for spec in a.listgate:
        label, sep, path = spec.partition("=")
        if not sep or not label or not os.access(path, os.X_OK):
            raise SystemExit("proc_side: --listgate %s: want LABEL=PATH of "
                             "an executable" % spec)
        builds.append((label, os.path.abspath(path)))
    if shutil.which("bogofilter") is None:
        raise SystemExit("proc_side: no bogofilter (apt-get install "
                         "bogofilter)")
    data = os.path.abspath(a.corpus)
    os.makedirs(a.work, exist_ok=True)
    timeit = build(a.work, "timeit")
    floor = build(a.work, "floor")

    allp = tunelib.posts(data)
    limit = 128 if a.split == "100" else 38
    train = [p for p in allp if p[2] < limit]
    test = [p for p in allp if p[2] >= 128]
    random.Random(a.seed).shuffle(test)
    test = test[:a.posts]

    cmds = [("floor", [floor])]
    for label, path in builds:
        cfg = os.path.join(a.work, "lg-" + label)
        train_listgate(path, cfg, data, train)
        cmds.append((label, lg_argv(path, cfg, "score", "--list", "side")))
    bdir = os.path.join(a.work, "bogofilter")
    train_bogofilter(bdir, data, train)
    cmds.append(("bogofilter", ["bogofilter", "-d", bdir, "-TT"]))

    res = {k: ([], []) for k, _ in cmds}
    for i, (_, path, _) in enumerate(test):
        for k, argv_ in (cmds if i % 2 == 0 else cmds[::-1]):
            w, c = timed(timeit, data, path, argv_)
            res[k][0].append(w)
            res[k][1].append(c)
        if sys.stderr.isatty():
            print("\rproc_side: %d/%d posts" % (i + 1, len(test)), end="",
                  file=sys.stderr, flush=True)
    if sys.stderr.isatty():
        print(file=sys.stderr)

    med = {k: (statistics.median(v[0]), statistics.median(v[1]))
           for k, v in res.items()}
    fw, fc = med["floor"]
    bw, bc = med["bogofilter"][0] - fw, med["bogofilter"][1] - fc
    print("%d test posts, %s%% training split, seed %d; medians in ms; "
          "ratio = above the floor / bogofilter's" %
          (len(test), a.split, a.seed, ))
    print("%-12s %8s %8s %7s %8s %8s %7s" %
          ("program", "wall", "above", "ratio", "CPU", "above", "ratio"))
    for k, _ in cmds:
        w, c = med[k]
        print("%-12s %8.2f %8.2f %7.3f %8.2f %8.2f %7.3f" %
              (k, w, w - fw, (w - fw) / bw if bw > 0 else float("nan"),
               c, c - fc, (c - fc) / bc if bc > 0 else float("nan")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

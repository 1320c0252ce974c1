#!/usr/bin/env python3
"""tunerule.py - judge `listgate tune`'s choices on the TRAINING half only

    python3 tests/bench/tunerule.py [--listgate PATH] [--tunefiles PATH]
        [--corpus DIR] [--size young|half] [-P FRACTION|none]
        [-H FRACTION|none] [--work DIR]

The benchmark's test half is never read.  Within the training half of
bench.sh's split (sha1(name)[0] < 128), replicates stand in for lists:

  young  eight windows of sha1[0], [0,38), [13,51), ... [90,128)
         (about 890 posts each, the size of the 15% split; they
         overlap)
  half   four samples, sha1[0] < 64 and >= 64, sha1[2] < 128 and >= 128

For each replicate, tune (tests/bench/tunefiles -w, the search and the
word-pair family as `listgate tune` does them) picks the settings from
the sample alone; a list trained on the sample with those settings
(standalone `listgate train`) then scores the rest of the training half,
and the ham held and spam passed there are counted, beside the default
settings and the tune's own cross-validated estimate.  Prints one line
per replicate and the sums.  A developer's tool for comparing the
tuner's selection rules; see tests/bench/README.md.
"""
import argparse, hashlib, os, re, shutil, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tunelib  # noqa: E402  (the corpus and its split, as tune_bench)


def posts(corpus):
    """the training half: [(H|S, sha1 of the bare name, path)]"""
    return [("H" if cls == "ham" else "S",
             hashlib.sha1(os.path.basename(rel).encode()).digest(),
             os.path.join(corpus, rel))
            for cls, rel, b in tunelib.posts(corpus) if b < 128]


def evaluate(lg, work, tag, conf, train, test):
    """train a list on train with conf, score test: (ham held, spam
    passed, ham, spam)"""
    cfg = os.path.join(work, tag)
    shutil.rmtree(cfg, ignore_errors=True)
    os.makedirs(os.path.join(cfg, "tokens"))
    os.makedirs(os.path.join(cfg, "lists"))
    with open(os.path.join(cfg, "listgate.conf"), "w") as f:
        f.write("tokens_dir = %s\n" % os.path.join(cfg, "tokens"))
    with open(os.path.join(cfg, "lists", "t.conf"), "w") as f:
        for k, v in conf.items():
            f.write("%s = %s\n" % (k, v))
    base = [lg, "--allow-root", "--config", cfg] if os.geteuid() == 0 \
        else [lg, "--config", cfg]
    for cl, flag in (("H", "--ham"), ("S", "--spam")):
        files = [p for c, _, p in train if c == cl]
        subprocess.run(base + ["train", "--list", "t", flag] + files,
                       check=True, stdout=subprocess.DEVNULL)
    out = subprocess.run(base + ["score", "--list", "t"] +
                         [p for _, _, p in test], check=True,
                         capture_output=True, text=True).stdout
    verdict = {}
    for line in out.splitlines():
        v, _, p = line.split(" ", 2)
        verdict[p] = v
    hh = sum(1 for c, _, p in test if c == "H" and verdict[p] != "ham")
    sp = sum(1 for c, _, p in test if c == "S" and verdict[p] == "ham")
    return (hh, sp, sum(1 for c, _, _ in test if c == "H"),
            sum(1 for c, _, _ in test if c == "S"))


def tune_args(work):
    """the options tunerule.py and nightly.py share: the programs, the
    corpus, tune's targets, tunefiles' extra options, the work directory"""
    ap = argparse.ArgumentParser()
    ap.add_argument("--listgate", default="build/listgate")
    ap.add_argument("--tunefiles", default="build/tests/bench/tunefiles")
    ap.add_argument("--corpus", default=os.environ.get(
        "LISTGATE_CORPUS", "cache/spam-assassin/package/data"))
    ap.add_argument("-P", default="0.005",
                    help="--max-spam-passed as a fraction, or none")
    ap.add_argument("-H", default="none",
                    help="--max-ham-held as a fraction, or none")
    ap.add_argument("--work", default=work)
    ap.add_argument("--tunefiles-opt", action="append", default=[],
                    help="one more option for tunefiles (e.g. -n: cutoffs "
                    "only)")
    return ap


def goal_args(a):
    """tunefiles' target options from -P and -H"""
    return (["-P", a.P] if a.P != "none" else []) + \
        (["-H", a.H] if a.H != "none" else [])


def main():
    ap = tune_args("/tmp/tunerule")
    ap.add_argument("--size", default="young", choices=["young", "half"])
    a = ap.parse_args()
    allp = posts(a.corpus)
    reps = ([(0, lo, lo + 38) for lo in (0, 13, 26, 38, 51, 64, 77, 90)]
            if a.size == "young" else
            [(0, 0, 64), (0, 64, 128), (2, 0, 128), (2, 128, 256)])
    os.makedirs(a.work, exist_ok=True)
    tot = {"def": [0, 0], "tune": [0, 0], "cv": [0.0, 0.0]}
    nh = ns = 0
    for byte, lo, hi in reps:
        train = [x for x in allp if lo <= x[1][byte] < hi]
        test = [x for x in allp if not lo <= x[1][byte] < hi]
        inp = "".join("%s %s\n" % (c, p) for c, _, p in train)
        goal = goal_args(a)
        r = subprocess.run([a.tunefiles, "-w"] + a.tunefiles_opt + goal,
                           input=inp,
                           capture_output=True, text=True, check=True)
        conf = dict(kv.split("=", 1) for kv in
                    r.stdout.strip().splitlines()[-1].split()[1:])
        m = re.search(r"recommended .*ham held (\d+)/(\d+) spam passed "
                      r"(\d+)/(\d+)", r.stdout)
        cvh, cvs = (int(m.group(1)) / int(m.group(2)),
                    int(m.group(3)) / int(m.group(4)))
        d = evaluate(a.listgate, a.work, "def", {}, train, test)
        t = evaluate(a.listgate, a.work, "tune", conf, train, test)
        nh += t[2]
        ns += t[3]
        for k, v in (("def", d), ("tune", t)):
            tot[k][0] += v[0]
            tot[k][1] += v[1]
        tot["cv"][0] += cvh * t[2]
        tot["cv"][1] += cvs * t[3]
        print("b%d [%3d,%3d) %4d posts: default %3d held %3d passed | tune "
              "%3d held %3d passed (cv %.2f%% %.2f%%) | %s" % (
                  byte, lo, hi, len(train), d[0], d[1], t[0], t[1], 100 * cvh,
                  100 * cvs, " ".join("%s=%s" % (k, conf[k][:6])
                                      for k in sorted(conf))))
        sys.stdout.flush()
    print("sum over %d ham, %d spam: default %d held %d passed | tune %d "
          "held (%.2f%%) %d passed (%.2f%%), cost 1:5 %d; cv estimated "
          "%.1f held %.1f passed" % (
              nh, ns, tot["def"][0], tot["def"][1], tot["tune"][0],
              100.0 * tot["tune"][0] / nh, tot["tune"][1],
              100.0 * tot["tune"][1] / ns, tot["tune"][0] + 5 * tot["tune"][1],
              tot["cv"][0], tot["cv"][1]))


if __name__ == "__main__":
    main()

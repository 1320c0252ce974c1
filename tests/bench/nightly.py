#!/usr/bin/env python3
"""nightly.py - what a nightly `listgate tune --apply` does to a young list

    python3 tests/bench/nightly.py [--listgate PATH] [--tunefiles PATH]
        [--corpus DIR] [--seeds 1,2,3,4] [--start 200] [--step 50]
        [--nights 16] [-P 0.005] [-H none] [--work DIR]

Only the benchmark's training half is read (sha1 of the bare name, first
byte below 128), never the test half.  For each seed the posts arrive in
a fixed shuffled order.  The journal starts with --start posts; every
night it is tuned (tests/bench/tunefiles -w -c, word pairs searched, the
list's settings as the last night left them), the recommendation is
applied, a list is trained on the journal with those settings and
scores the --step posts of the next day, which then join the journal.

Prints, per seed and in sum: how often word_pairs flipped (each flip
rebuilds the token file), how often the classifier parameters changed,
and the next day's ham held and spam passed (every post is scored once,
by settings chosen without it).  A developer's tool: deterministic, about
25 s a seed.
"""
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tunelib import posts  # noqa: E402
from tunerule import evaluate, goal_args, tune_args  # noqa: E402

PARAMS = ("robs", "robx", "min_dev", "max_tokens")
# the classifier's defaults (gate/bayes.c), what a new list starts with
DEFAULTS = {"robs": "0.3", "robx": "0.6", "min_dev": "0.05",
            "max_tokens": "0", "vote_budget": "no"}


def main():
    ap = tune_args("/tmp/nightly")
    ap.add_argument("--seeds", default="1,2,3,4")
    ap.add_argument("--start", type=int, default=200)
    ap.add_argument("--step", type=int, default=50)
    ap.add_argument("--nights", type=int, default=16)
    ap.add_argument("--no-tune", action="store_true",
                    help="never tune: the defaults every night (the "
                    "reference)")
    a = ap.parse_args()
    half = [("H" if c == "ham" else "S", b, os.path.join(a.corpus, p))
            for c, p, b in posts(a.corpus) if b < 128]
    goal = goal_args(a)
    os.makedirs(a.work, exist_ok=True)
    tot = {"flips": 0, "pchanges": 0, "held": 0, "passed": 0, "ham": 0,
           "spam": 0, "nights": 0}
    for seed in (int(x) for x in a.seeds.split(",")):
        order = list(half)
        random.Random(seed).shuffle(order)
        conf = {}
        s = {"flips": 0, "pchanges": 0, "held": 0, "passed": 0, "ham": 0,
             "spam": 0, "nights": 0}
        trail = []
        for night in range(a.nights):
            n = a.start + night * a.step
            journal, nextday = order[:n], order[n:n + a.step]
            cur = ",".join("%s=%s" % kv for kv in sorted(conf.items()))
            if a.no_tune:
                hh, sp, nh, ns = evaluate(a.listgate, a.work, "n", {},
                                          journal, nextday)
                for k, v in (("held", hh), ("passed", sp), ("ham", nh),
                             ("spam", ns)):
                    s[k] += v
                s["nights"] += 1
                trail.append("-*" if hh or sp else "-")
                continue
            r = subprocess.run([a.tunefiles, "-w"] + a.tunefiles_opt + goal +
                               (["-c", cur] if cur else []),
                               input="".join("%s %s\n" % (c, p)
                                             for c, _, p in journal),
                               capture_output=True, text=True, check=True)
            new = dict(kv.split("=", 1) for kv in
                       r.stdout.strip().splitlines()[-1].split()[1:])
            old_pairs = conf.get("word_pairs", "no")
            if new["word_pairs"] != old_pairs:
                s["flips"] += 1
            if any(float(new[k]) != float(conf.get(k, DEFAULTS[k]))
                   for k in PARAMS) or new.get("vote_budget", "no") != \
                    conf.get("vote_budget", "no"):
                s["pchanges"] += 1
            conf = new
            hh, sp, nh, ns = evaluate(a.listgate, a.work, "n", conf,
                                      journal, nextday)
            for k, v in (("held", hh), ("passed", sp), ("ham", nh),
                         ("spam", ns)):
                s[k] += v
            s["nights"] += 1
            trail.append("%s%s" % ("P" if conf["word_pairs"] == "yes"
                                   else "-", "*" if hh or sp else ""))
        print("seed %d: %d nights, word_pairs flipped %d, parameters "
              "changed %d; next day %d/%d ham held, %d/%d spam passed  %s"
              % (seed, s["nights"], s["flips"], s["pchanges"], s["held"],
                 s["ham"], s["passed"], s["spam"], " ".join(trail)))
        sys.stdout.flush()
        for k in tot:
            tot[k] += s[k]
    print("sum: %d nights, word_pairs flipped %d, parameters changed %d; "
          "next day %d/%d ham held, %d/%d spam passed, cost 1:5 %d" % (
              tot["nights"], tot["flips"], tot["pchanges"], tot["held"],
              tot["ham"], tot["passed"], tot["spam"],
              tot["held"] + 5 * tot["passed"]))


if __name__ == "__main__":
    main()

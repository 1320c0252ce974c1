#!/usr/bin/env python3
"""cv.py - cross-validate listgate's tokenizer and classifier parameters
on the TRAINING half of the benchmark corpus only (never the test half).

    python3 tests/bench/cv.py [--split 100|15] [--folds 5] [--cv PATH]
                              [--corpus DIR] [-- cv options...]

Writes "S|H FOLD PATH" lines for the posts of the training half (split
100: sha1(name)[0] < 128; split 15: sha1(name)[0] < 38), the fold being
the second SHA-1 byte modulo the fold count, and runs the cv program
(tests/bench/cv.c, built as build*/tests/bench/cv) on them with the
remaining options (-t tokenizer options, -s/-x/-d/-m parameter grids,
-S score dump).  Prints cv's table: one line per parameter combination,
1-ROCA% of the pooled out-of-fold scores and "cutoff:spam_passed/ham_held".
"""
import argparse, hashlib, os, subprocess, sys

HAM = ["easy-ham-1", "easy-ham-2", "hard-ham-1"]
SPAM = ["spam-1", "spam-2"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", type=int, default=100, choices=[100, 15])
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--cv", default="build/tests/bench/cv")
    ap.add_argument("--corpus", default=os.environ.get(
        "LISTGATE_CORPUS", "/tmp/corpus/package/data"))
    ap.add_argument("rest", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    limit = 128 if a.split == 100 else 38
    lines = []
    for label, dirs in (("H", HAM), ("S", SPAM)):
        for d in dirs:
            for name in sorted(os.listdir(os.path.join(a.corpus, d))):
                if not name.endswith(".txt"):
                    continue
                h = hashlib.sha1(name.encode()).digest()
                if h[0] >= limit:
                    continue
                lines.append("%s %d %s\n" % (label, h[1] % a.folds,
                                             os.path.join(a.corpus, d, name)))
    rest = [x for x in a.rest if x != "--"]
    r = subprocess.run([a.cv] + rest, input="".join(lines), text=True)
    sys.exit(r.returncode)


if __name__ == "__main__":
    main()

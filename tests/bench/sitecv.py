#!/usr/bin/env python3
"""sitecv.py - cross-validate the site store's weight rule on the TRAINING
half only (never the test half): runs sitecv (tests/bench/sitecv.c)

    python3 tests/bench/sitecv.py young|lists [--sitecv PATH]
        [--corpus DIR] [-- sitecv options: -r RULE,... -n N,... -R DRAWS]

young: the site's history (easy-ham-1, spam-1, all of it) and the new
list's training half (easy-ham-2, spam-2); own training sizes are drawn
from that half and the rest of it is scored.  lists: the nine lists'
training halves, 5 folds.  See sitesets.py for the sets.
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sitesets  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("exp", choices=["young", "lists"])
    ap.add_argument("--sitecv", default="build/tests/bench/sitecv")
    ap.add_argument("--corpus", default=os.environ.get(
        "LISTGATE_CORPUS", "cache/spam-assassin/package/data"))
    argv = sys.argv[1:]
    rest = []
    if "--" in argv:
        rest = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    a = ap.parse_args(argv)
    posts = sitesets.young(a.corpus) if a.exp == "young" else \
        sitesets.lists(a.corpus)
    lines = []
    for p in posts:
        if a.exp == "young" and p.group == "site":
            lines.append("site %s 0 %s\n" % ("S" if p.cls == "spam" else "H",
                                             p.path(a.corpus)))
        elif p.train:
            lines.append("%s %s %d %s\n" % (
                p.group, "S" if p.cls == "spam" else "H", p.fold,
                p.path(a.corpus)))
    r = subprocess.run([a.sitecv, "-e", a.exp] + rest, input="".join(lines),
                       text=True)
    sys.exit(r.returncode)


if __name__ == "__main__":
    main()

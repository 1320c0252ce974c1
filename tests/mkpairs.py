#!/usr/bin/env python3
# mkpairs.py DIR [N] - N ham (default 30) and N spam posts in DIR/ham and
# DIR/spam that only word pairs tell apart: the same six words, each
# pair of neighbouring words in one order in ham and reversed in spam,
# plus a word of each post's own (no two posts are the same bytes).
# Fixed seed.  For tests/tune.sh and tests/torture_admin.sh.
import os
import random
import sys

d = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 30
r = random.Random(7)
words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]


def post(cls):
    w = words[:]
    r.shuffle(w)
    body = []
    for k in range(0, len(w) - 1, 2):
        a, b = sorted(w[k:k + 2])
        body += [a, b] if cls == "ham" else [b, a]
    tag = "".join(r.choice("bcdfghjkmnpqrstvwxz") for _ in range(9))
    return ("From: someone@example.org\nTo: pairs@lists.example.org\n"
            "Subject: note\nMessage-ID: <%s@example.org>\n\n%s %s\n" %
            (tag, " ".join(body), tag))


for cls in ("ham", "spam"):
    os.makedirs(os.path.join(d, cls), exist_ok=True)
    for i in range(n):
        with open(os.path.join(d, cls, "%02d.eml" % i), "w") as f:
            f.write(post(cls))

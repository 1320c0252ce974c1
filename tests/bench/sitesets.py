"""sitesets.py - the posts of the site store benchmarks (sitebench.py
and sitecv.py), fixed by the posts' file names

Every split is the benchmark's hash rule (bench.py): b = the first byte of
sha1(bare file name), b < 128 trains, b >= 128 tests.  The fold of a
training post (sitecv.py) is the second byte modulo 5.

young(): the SpamAssassin corpus standing in for two lists.  The site's
history is the older part, easy-ham-1 and spam-1, all of it; the new list
is the newer part, easy-ham-2 and spam-2, split into train and test.

lists(): the corpus's ham grouped into the mailing lists it came from, by
List-Id, X-Mailing-List, List-Post or Mailing-List (the first present),
kept when the list has at least 50 posts: nine lists.  Each list gets a
share of the spam: spam post goes to list number (third SHA-1 byte modulo
9) in the order of LISTS.
"""
import hashlib
import os
import re

# (name, a pattern the header's value matches), in a fixed order
LISTS = (
    ("fork", r"fork\.xent\.com"),
    ("ilug", r"<ilug\.linux\.ie>"),
    ("rpm-list", r"rpm-zzzlist\.freshrpms\.net"),
    ("razor-users", r"razor-users\."),
    ("spamassassin-talk", r"spamassassin-talk\."),
    ("zzzzteana", r"zzzzteana@yahoogroups\.com"),
    ("exmh-workers", r"exmh-workers\."),
    ("exmh-users", r"exmh-users\."),
    ("spamassassin-devel", r"spamassassin-devel\."),
)
LIST_HEADERS = ("List-Id", "X-Mailing-List", "List-Post", "Mailing-List")
HAM_DIRS = ("easy-ham-1", "easy-ham-2", "hard-ham-1")
SPAM_DIRS = ("spam-1", "spam-2")


def digest(name):
    return hashlib.sha1(name.encode()).digest()


def files(data, d):
    """(relpath, sha1 digest) of the *.txt posts of data/d, sorted"""
    return [(d + "/" + n, digest(n))
            for n in sorted(os.listdir(os.path.join(data, d)))
            if n.endswith(".txt")]


class Post:
    __slots__ = ("cls", "rel", "train", "fold", "group")

    def __init__(self, cls, rel, h, group):
        self.cls = cls          # "ham" or "spam"
        self.rel = rel          # data/-relative path
        self.train = h[0] < 128
        self.fold = h[1] % 5
        self.group = group

    def path(self, data):
        return os.path.join(data, self.rel)


def young(data):
    """[Post] with group "site" (the site's history) or "own" (the new
    list)"""
    out = []
    for cls, d, g in (("ham", "easy-ham-1", "site"), ("spam", "spam-1", "site"),
                      ("ham", "easy-ham-2", "own"), ("spam", "spam-2", "own")):
        out += [Post(cls, rel, h, g) for rel, h in files(data, d)]
    return out


def list_of(raw):
    """the LISTS name of a post's header, or None"""
    hdr = raw.split(b"\n\n", 1)[0].decode("latin-1")
    hdr = re.sub(r"\r?\n[ \t]+", " ", hdr)
    for h in LIST_HEADERS:
        m = re.search(r"^" + h + r":[ \t]*(.*)$", hdr, re.M | re.I)
        if m:
            for name, pat in LISTS:
                if re.search(pat, m.group(1), re.I):
                    return name
            return None
    return None


def lists(data):
    """[Post] with group = the list's name"""
    out = []
    for d in HAM_DIRS:
        for rel, h in files(data, d):
            with open(os.path.join(data, rel), "rb") as f:
                name = list_of(f.read())
            if name is not None:
                out.append(Post("ham", rel, h, name))
    for d in SPAM_DIRS:
        for rel, h in files(data, d):
            out.append(Post("spam", rel, h, LISTS[h[2] % len(LISTS)][0]))
    return out

"""tunelib.py - the few helpers tune_bench.py shares with the bench

The corpus in the split of bench.py (the first byte of sha1 of a post's
bare file name: below 128 training, from 128 on test, below 38 the 15%
training subset), running a command, and bogofilter's wordlist and
training argv.  Kept apart from bench.py, which times and measures much
more than tune_bench.py needs and changes with it.
"""

import hashlib
import os
import shutil
import subprocess
import time


HAM_DIRS = ("easy-ham-1", "easy-ham-2", "hard-ham-1")
SPAM_DIRS = ("spam-1", "spam-2")


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


class Bogofilter:
    """bogofilter with its own wordlist directory under work"""

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

    def reset(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)

    def train_argv(self, cls, files):
        return ["bogofilter", "-d", self.dir,
                "-s" if cls == "spam" else "-n", "-B"] + list(files)


def first_line(argv):
    """first output line of argv, or '?'"""
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        lines = p.stdout.decode("utf-8", "replace").strip().splitlines()
        return lines[0] if lines else "?"
    except OSError:
        return "?"

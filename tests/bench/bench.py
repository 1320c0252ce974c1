#!/usr/bin/env python3
"""bench.py - listgate against bogofilter on the SpamAssassin public corpus

Called by bench.sh (which fetches the corpus, installs bogofilter, builds
the process floor and listgate, and starts a private PostgreSQL with
tests/pg.sh); see tests/bench/README.md.  Everything is measured side by
side in one run on one machine:

  accuracy   both filters trained on the same posts (100% and 15% of the
             training half), every test post scored; the operating point
             (cutoffs by 5-fold cross-validation on the training half);
             online, TREC-style (a fixed shuffled order of every post,
             each scored and then learnt with its true label)
  size       the token file after each split
  speed      one process per post (beside a trivial C program, the
             process floor), batch scoring, bulk training (through the
             PostgreSQL journal and sync when a database is there, and
             standalone), peak RSS, instruction counts (callgrind), the
             Postfix pass path (filter --mta postfix with a cat deliver
             command against bogofilter -p piping into the same command)

The raw results go to the results directory; roc.py prints the table
from them (and can reprint it later).

The split is fixed by the post's bare file name: b = first byte of
sha1(name), b < 128 train, b >= 128 test, b < 38 the 15% training subset;
the cross-validation fold of a training post is the second byte mod 5.
"""

import argparse
import datetime
import hashlib
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import roc  # noqa: E402

HAM_DIRS = ("easy-ham-1", "easy-ham-2", "hard-ham-1")
SPAM_DIRS = ("spam-1", "spam-2")
FOLDS = 5
PG_VARS = ("PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGUSER",
           "PGPASSWORD", "PGPASSFILE", "PGSERVICE", "PGSERVICEFILE",
           "PGOPTIONS", "PGSSLMODE", "PGCONNECT_TIMEOUT", "PGAPPNAME",
           "PGTARGETSESSIONATTRS")


def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


def posts(data):
    """[(class, relpath, sha1 digest)] for every *.txt post, fixed order."""
    out = []
    for cls, dirs in (("ham", HAM_DIRS), ("spam", SPAM_DIRS)):
        for d in dirs:
            for name in sorted(os.listdir(os.path.join(data, d))):
                if name.endswith(".txt"):
                    out.append((cls, d + "/" + name,
                                hashlib.sha1(name.encode()).digest()))
    return out


# --- running processes ------------------------------------------------------

class Runner:
    """Runs commands in the corpus directory with a chosen environment."""

    def __init__(self, data, timeit):
        self.data = data
        self.timeit = timeit
        self._children_cpu()
        base = dict(os.environ)
        self.env_pg = dict(base)
        self.env = {k: v for k, v in base.items() if k not in PG_VARS}

    def run(self, argv, stdin=None, pg=False, pgcpu=None):
        """(rc, stdout, stderr, wall s, cpu s): cpu is the user and
        system time of the command (wait4), plus, with pgcpu (a
        PgSampler), that of its PostgreSQL backends"""
        if pgcpu:
            pgcpu.start()
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, cwd=self.data, stdin=stdin,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=self.env_pg if pg else self.env)
        out, err = p.communicate()
        dt = time.perf_counter() - t0
        # communicate() reaped it: its rusage is in RUSAGE_CHILDREN
        cpu = self._children_cpu()
        if pgcpu:
            cpu += pgcpu.stop()
        return (p.returncode, out.decode("utf-8", "replace"),
                err.decode("utf-8", "replace"), dt, cpu)

    def _children_cpu(self):
        """CPU seconds of the children reaped since the last call"""
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        now = ru.ru_utime + ru.ru_stime
        d = now - getattr(self, "_last_cpu", 0.0)
        self._last_cpu = now
        return d

    def timed(self, argv, path):
        """One process with the file at path on stdin, through the timeit
        launcher: (rc, wall ms, peak RSS KiB, stdout, cpu ms)."""
        p = subprocess.run([self.timeit, os.path.join(self.data, path)] +
                           argv, cwd=self.data, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=self.env)
        self._children_cpu()	# timeit's own children are counted there
        f = p.stderr.decode("utf-8", "replace").split()
        if len(f) != 5 or f[0] != "timeit":
            raise SystemExit("bench: timeit failed: %s" % " ".join(f)[:300])
        return (int(f[3]), float(f[1]), int(f[2]),
                p.stdout.decode("utf-8", "replace"), float(f[4]))


class PgSampler:
    """CPU time of the private cluster's backends while a command runs,
    read without running beside it: a backend's time is added to the
    postmaster's reaped children's (cutime and cstime in its
    /proc/PID/stat) once it exits, so stop() waits for the command's
    backends to be gone and takes the difference.  (Until 2026-12-06 a
    thread read every process's /proc entries every 5 ms while the
    command ran: it took a third of one of this machine's two CPUs, and
    the training it measured ran that much slower.)  An autovacuum
    worker that exits meanwhile is counted too."""

    def __init__(self):
        self.pm = None
        d = os.environ.get("PG_TEST_DIR")
        try:
            with open(os.path.join(d, "data", "postmaster.pid")) as f:
                self.pm = f.readline().strip()
        except (OSError, TypeError):
            pass
        self.t0 = 0.0
        self.aux = set()

    def _reaped(self):
        """the postmaster's reaped children's CPU seconds"""
        with open("/proc/%s/stat" % self.pm) as f:
            st = f.read().rsplit(")", 1)[1].split()
        return (int(st[13]) + int(st[14])) / os.sysconf("SC_CLK_TCK")

    def _children(self):
        """the postmaster's children's pids"""
        kids = set()
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % pid) as f:
                    st = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if st[1] == self.pm:
                kids.add(pid)
        return kids

    def start(self):
        if self.pm:
            self.aux = self._children()	# checkpointer, walwriter ...
            self.t0 = self._reaped()

    def stop(self):
        if not self.pm:
            return 0.0
        # the command has exited: its backends exit and are reaped
        # within moments (one exiting has no command line any more,
        # one exited is a zombie until then: both are still children)
        deadline = time.monotonic() + 2.0
        while self._children() - self.aux and time.monotonic() < deadline:
            time.sleep(0.002)
        return self._reaped() - self.t0


def first_line(argv):
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        lines = p.stdout.decode("utf-8", "replace").strip().splitlines()
        return lines[0] if lines else "?"
    except OSError:
        return "?"


# --- the two filters ----------------------------------------------------------

def parse_verdict_lines(out):
    """listgate score's "VERDICT SCORE [NAME]" lines: {name: (score, v)}
    (a single post without a name under the key None)"""
    res = {}
    for line in out.splitlines():
        f = line.split(None, 2)
        if len(f) >= 2 and f[0] in ("ham", "unsure", "spam"):
            try:
                res[f[2] if len(f) == 3 else None] = (float(f[1]), f[0])
            except ValueError:
                pass
    return res


class Listgate:
    name = "listgate"

    def __init__(self, binary, work, runner):
        self.binary = binary
        self.work = work
        self.r = runner

    def config(self, tag, database=False, list_conf=None):
        """a fresh configuration directory; its path"""
        cfg = os.path.join(self.work, "lg-" + tag)
        shutil.rmtree(cfg, ignore_errors=True)
        os.makedirs(os.path.join(cfg, "tokens"))
        os.makedirs(os.path.join(cfg, "lists"))
        with open(os.path.join(cfg, "listgate.conf"), "w") as f:
            f.write("# written by tests/bench/bench.py\n"
                    "tokens_dir = %s\n" % os.path.join(cfg, "tokens"))
        for lst, text in (list_conf or {}).items():
            with open(os.path.join(cfg, "lists", lst + ".conf"), "w") as f:
                f.write(text)
        return cfg

    def argv(self, cfg, *args):
        # as root, listgate leaves root only for a configured user: the
        # bench's configurations name none
        root = ["--allow-root"] if os.geteuid() == 0 else []
        return [self.binary] + root + ["--config", cfg] + list(args)

    def train(self, cfg, lst, cls, files, pg=False, pgcpu=None):
        """(wall s, cpu s)"""
        rc, out, err, dt, cpu = self.r.run(
            self.argv(cfg, "train", "--quiet", "--list", lst, "--" + cls) +
            list(files), pg=pg, pgcpu=pgcpu)
        if rc != 0:
            raise SystemExit("bench: listgate train failed (exit %d): %s" %
                             (rc, err.strip()[:500]))
        return dt, cpu

    def batch(self, cfg, lst, files):
        """({post: (score, verdict)}, wall s, cpu s)"""
        rc, out, err, dt, cpu = self.r.run(self.argv(cfg, "score", "--list",
                                                     lst) + list(files))
        res = parse_verdict_lines(out)
        if len(res) != len(files):
            log("listgate batch: %d of %d scored (exit %d) %s" %
                (len(res), len(files), rc, err.strip()[:300]))
        return {k: v for k, v in res.items() if k is not None}, dt, cpu

    def score_argv(self, cfg, lst):
        return self.argv(cfg, "score", "--list", lst)

    def parse_one(self, out):
        return parse_verdict_lines(out).get(None)

    def token_file(self, cfg, lst):
        return os.path.join(cfg, "tokens", lst + ".kch")

    def dump(self, cfg, lst):
        rc, out, err, _, _ = self.r.run(self.argv(cfg, "score", "--list",
                                                  lst, "--db-dump"))
        return sorted(out.splitlines()) if rc == 0 else None


class Bogofilter:
    name = "bogofilter"

    def __init__(self, work, runner):
        self.work = work
        self.r = runner
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

    def verdict(self, s):
        if s < self.ham_cutoff:
            return "ham"
        return "spam" if s >= self.spam_cutoff else "unsure"

    def wordlist(self, tag):
        d = os.path.join(self.work, "bogo-" + tag)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        return d

    def train(self, d, cls, files):
        """(wall s, cpu s)"""
        rc, out, err, dt, cpu = self.r.run(
            ["bogofilter", "-d", d, "-s" if cls == "spam" else "-n", "-B"] +
            list(files))
        if rc != 0:
            raise SystemExit("bench: bogofilter training failed (exit %d): "
                             "%s" % (rc, err.strip()[:500]))
        return dt, cpu

    def batch(self, d, files):
        """({post: (score, verdict)}, wall s, cpu s)"""
        # -TT: the bare spamicity with 16 significant digits
        rc, out, err, dt, cpu = self.r.run(["bogofilter", "-d", d, "-TT",
                                            "-B"] + list(files))
        res = {}
        for line in out.splitlines():
            f = line.rsplit(None, 1)
            if len(f) == 2:
                try:
                    s = float(f[1])
                except ValueError:
                    continue
                res[f[0]] = (s, self.verdict(s))
        if len(res) != len(files):
            log("bogofilter batch: %d of %d scored (exit %d) %s" %
                (len(res), len(files), rc, err.strip()[:300]))
        return res, dt, cpu

    def score_argv(self, d):
        return ["bogofilter", "-d", d, "-TT"]

    def parse_one(self, out):
        f = out.split()
        if len(f) != 1:
            return None
        try:
            s = float(f[0])
        except ValueError:
            return None
        return s, self.verdict(s)

    def token_file(self, d):
        return os.path.join(d, "wordlist.db")


# --- writing raw results -------------------------------------------------------

def write_tsv(path, header, rows):
    with open(path, "w", encoding="utf-8") as f:
        f.write("#" + "\t".join(header) + "\n")
        for r in rows:
            f.write("\t".join("" if v is None else
                              (repr(v) if isinstance(v, float) else str(v))
                              for v in r) + "\n")


# --- the parts of the run ------------------------------------------------------

def split_run(a, lg, bf, r, split, train_set, test, meta, proc_test):
    """Train, size, batch, one process per post and the operating point of
    one training split."""
    info = {"train_posts": len(train_set),
            "train_ham": sum(1 for p in train_set if p[0] == "ham"),
            "train_spam": sum(1 for p in train_set if p[0] == "spam")}
    meta["splits_info"][split] = info
    lst = "bench" + split
    files = {c: [p for cl, p, _ in train_set if cl == c]
             for c in ("ham", "spam")}

    # bulk training, one process per class: through the journal (with
    # sync), standalone, and bogofilter, each from scratch; a few rounds
    # in alternating order, the fastest of each kept (a shared machine's
    # noise only ever adds time)
    if a.pg:
        cfg_j = lg.config("journal-" + split)
        rc, out, err, _, _ = r.run(lg.argv(cfg_j, "migrate"), pg=True)
        if rc != 0:
            raise SystemExit("bench: listgate migrate failed: " + err[:300])
    runs = {"lg_train_journal": [], "lg_train_direct": [], "bf_train": []}
    pgs = PgSampler()

    def both(pairs):
        return (sum(w for w, _ in pairs), sum(c for _, c in pairs))

    for rnd in range(a.rounds):
        log("split %s%%: training, round %d of %d" % (split, rnd + 1,
                                                       a.rounds))
        order = ["direct", "bogofilter"] + (["journal"] if a.pg else [])
        if rnd % 2:
            order.reverse()
        for what in order:
            if what == "journal":
                # a list of its own per round: the journal is not cleared
                jl = "%s-r%d" % (lst, rnd)
                runs["lg_train_journal"].append(both([
                    lg.train(cfg_j, jl, c, files[c], pg=True, pgcpu=pgs)
                    for c in ("ham", "spam")]))
            elif what == "direct":
                cfg = lg.config("direct-" + split)
                runs["lg_train_direct"].append(both([
                    lg.train(cfg, lst, c, files[c])
                    for c in ("ham", "spam")]))
            else:
                bdir = bf.wordlist(split)
                runs["bf_train"].append(both([
                    bf.train(bdir, c, files[c]) for c in ("ham", "spam")]))
    for k, v in runs.items():
        if v:
            info[k + "_s"] = min(w for w, _ in v)
            info[k + "_cpu_s"] = min(c for _, c in v)
            info[k + "_all"] = v
    if a.pg:
        info["journal_equals_direct"] = (lg.dump(cfg_j, "%s-r0" % lst) ==
                                         lg.dump(cfg, lst))
    info["lg_bytes"] = os.path.getsize(lg.token_file(cfg, lst))
    info["bf_bytes"] = os.path.getsize(bf.token_file(bdir))

    # batch: every test post in one process, a few rounds alternating
    tfiles = [p for _, p, _ in test]
    bl, bb = [], []
    for rnd in range(a.rounds):
        log("split %s%%: batch scoring, round %d of %d" % (split, rnd + 1,
                                                           a.rounds))
        for what in (("lg", "bf") if rnd % 2 == 0 else ("bf", "lg")):
            if what == "lg":
                lres, dt, cpu = lg.batch(cfg, lst, tfiles)
                bl.append((dt, cpu))
            else:
                bres, dt, cpu = bf.batch(bdir, tfiles)
                bb.append((dt, cpu))
    info["lg_batch_s"] = min(w for w, _ in bl)
    info["bf_batch_s"] = min(w for w, _ in bb)
    info["lg_batch_cpu_s"] = min(c for _, c in bl)
    info["bf_batch_cpu_s"] = min(c for _, c in bb)
    info["lg_batch_all"], info["bf_batch_all"] = bl, bb
    for flt, res in (("listgate", lres), ("bogofilter", bres)):
        write_tsv(os.path.join(a.out, "scores-%s-%s-batch.tsv" %
                               (flt, split)),
                  ("class", "post", "score", "verdict"),
                  [(c, p, res[p][0], res[p][1]) for c, p, _ in test
                   if p in res])

    # one process per post: the floor and the two filters interleaved,
    # their order alternating, so machine noise hits all alike
    log("split %s%%: one process per post, %d posts x 3 programs" %
        (split, len(proc_test)))
    cmds = [("floor", [a.floor]), ("listgate", lg.score_argv(cfg, lst)),
            ("bogofilter", bf.score_argv(bdir))]
    rows = {k: [] for k, _ in cmds}
    for i, (c, p, _) in enumerate(proc_test):
        order = cmds if i % 2 == 0 else list(reversed(cmds))
        for name, argv in order:
            rc, ms, rss, out, cpu = r.timed(argv, p)
            got = None
            if name == "listgate":
                got = lg.parse_one(out)
            elif name == "bogofilter":
                got = bf.parse_one(out)
            rows[name].append((c, p, got[0] if got else None,
                               got[1] if got else ("error" if name !=
                                                   "floor" else ""),
                               round(ms, 3), rss, round(cpu, 3)))
        if (i + 1) % 500 == 0:
            log("  %d/%d posts" % (i + 1, len(proc_test)))
    for name in rows:
        write_tsv(os.path.join(a.out, "proc-%s-%s.tsv" % (name, split)),
                  ("class", "post", "score", "verdict", "wall_ms", "rss_kb",
                   "cpu_ms"), rows[name])

    # the operating point: 5-fold cross-validation on the training half
    log("split %s%%: %d-fold cross-validation on the training half" %
        (split, FOLDS))
    oof = {"listgate": [], "bogofilter": []}
    for k in range(FOLDS):
        fold = [x for x in train_set if x[2][1] % FOLDS == k]
        rest = [x for x in train_set if x[2][1] % FOLDS != k]
        cfg_cv = lg.config("cv")
        bdir_cv = bf.wordlist("cv")
        for c in ("ham", "spam"):
            fl = [p for cl, p, _ in rest if cl == c]
            lg.train(cfg_cv, "cv", c, fl)
            bf.train(bdir_cv, c, fl)
        ff = [p for _, p, _ in fold]
        lres_cv = lg.batch(cfg_cv, "cv", ff)[0]
        bres_cv = bf.batch(bdir_cv, ff)[0]
        for c, p, _ in fold:
            if p in lres_cv:
                oof["listgate"].append((c, p, lres_cv[p][0], k))
            if p in bres_cv:
                oof["bogofilter"].append((c, p, bres_cv[p][0], k))
    for flt in oof:
        write_tsv(os.path.join(a.out, "oof-%s-%s.tsv" % (flt, split)),
                  ("class", "post", "score", "fold"), oof[flt])


def online_run(a, lg, bf, r, allp, meta):
    """TREC-style: every post in a fixed shuffled order, each scored (one
    process) and then learnt with its true label (one process)."""
    order = sorted(allp, key=lambda x: x[1])
    random.Random(a.seed).shuffle(order)
    if a.online_posts:
        order = order[:a.online_posts]
    meta["online"] = {"posts": len(order), "seed": a.seed,
                      "ham": sum(1 for x in order if x[0] == "ham"),
                      "spam": sum(1 for x in order if x[0] == "spam")}
    cfg = lg.config("online")
    bdir = bf.wordlist("online")
    rows = {"listgate": [], "bogofilter": []}
    log("online: %d posts, score then learn, both filters" % len(order))
    t_lg = t_bf = 0.0
    for i, (c, p, _) in enumerate(order):
        # before the first training there is no token file or word
        # list: both filters know nothing, score 0.5
        if os.path.exists(lg.token_file(cfg, "online")):
            rc, ms, rss, out, cpu = r.timed(lg.score_argv(cfg, "online"),
                                            p)
            got = lg.parse_one(out)
        else:
            got, ms = (0.5, "unsure"), 0.0
        rows["listgate"].append((i, c, p, got[0] if got else None,
                                 round(ms, 3)))
        t0 = time.perf_counter()
        lg.train(cfg, "online", c, [p])
        t_lg += time.perf_counter() - t0
        if os.path.exists(bf.token_file(bdir)):
            rc, ms, rss, out, cpu = r.timed(bf.score_argv(bdir), p)
            got = bf.parse_one(out)
        else:
            got, ms = (0.5, "unsure"), 0.0
        rows["bogofilter"].append((i, c, p, got[0] if got else None,
                                   round(ms, 3)))
        t0 = time.perf_counter()
        bf.train(bdir, c, [p])
        t_bf += time.perf_counter() - t0
        if (i + 1) % 1000 == 0:
            log("  online %d/%d" % (i + 1, len(order)))
    meta["online"]["lg_learn_s"] = t_lg
    meta["online"]["bf_learn_s"] = t_bf
    for flt in rows:
        write_tsv(os.path.join(a.out, "online-%s.tsv" % flt),
                  ("order", "class", "post", "score", "wall_ms"), rows[flt])


def postfix_run(a, lg, bf, r, test, meta):
    """The Postfix pass path: `listgate filter --mta postfix` running its
    deliver command (/bin/cat) against `bogofilter -p` piping into the same
    command; every post passes (ham_cutoff 1), trained on the 100%
    split."""
    src = os.path.join(a.work, "lg-direct-100", "tokens", "bench100.kch")
    bdir = os.path.join(a.work, "bogo-100")
    cfg = lg.config("postfix", list_conf={
        "pf": "ham_cutoff = 1\nspam_cutoff = 1\ndeliver = %s\n" % a.deliver})
    shutil.copy(src, os.path.join(cfg, "tokens", "pf.kch"))
    sample = test[::a.postfix_every]
    meta["postfix"] = {"posts": len(sample), "deliver": a.deliver}
    log("postfix pass path: %d posts" % len(sample))
    lg_argv = lg.argv(cfg, "filter", "--mta", "postfix", "--list", "pf",
                      "-f", "sender@example.org", "--",
                      "pf@lists.example.org")
    rows = []
    for i, (c, p, _) in enumerate(sample):
        order = (0, 1) if i % 2 == 0 else (1, 0)
        res = [None, None]
        for which in order:
            if which == 0:
                rc, ms, rss, _, cpu = r.timed(lg_argv, p)
                res[0] = (rc, ms, cpu)
            else:
                # as a pipe(8) script would: bogofilter -p | deliver
                rc, ms, rss, _, cpu = r.timed(["bogofilter", "-d", bdir,
                                               "-p", "-e", "|", a.deliver], p)
                res[1] = (rc, ms, cpu)
        rows.append((c, p, res[0][0], round(res[0][1], 3),
                     round(res[0][2], 3), res[1][0], round(res[1][1], 3),
                     round(res[1][2], 3)))
    write_tsv(os.path.join(a.out, "postfix.tsv"),
              ("class", "post", "lg_rc", "lg_ms", "lg_cpu_ms", "bf_rc",
               "bf_ms", "bf_cpu_ms"), rows)


def hold_run(a, lg, bf, r, test, meta):
    """The hold path against the pass path, one process per post, on the
    same posts: `listgate filter --mta qmail` passing each (ham_cutoff 1,
    deliver /bin/true), holding it through `listgate holder` (ham_cutoff
    0) and holding it itself, both through pgbouncer in transaction mode;
    bogofilter on the same post.  Trained on the 100% split.  Needs the
    private cluster with its pgbouncer (PGBOUNCER_PORT)."""
    port = r.env_pg.get("PGBOUNCER_PORT")
    if not a.pg or not port:
        log("hold path: no PostgreSQL with pgbouncer, skipped")
        return
    src = os.path.join(a.work, "lg-direct-100", "tokens", "bench100.kch")
    bdir = os.path.join(a.work, "bogo-100")
    sock = os.path.join(a.work, "hold.sock")
    db = "host=%s port=%s dbname=%s user=%s" % (
        r.env_pg["PGHOST"], port, r.env_pg["PGDATABASE"],
        r.env_pg["PGUSER"])
    lists = {"pass": "ham_cutoff = 1\nspam_cutoff = 1\n",
             "viaholder": "ham_cutoff = 0\nspam_cutoff = 1\n",
             "self": "ham_cutoff = 0\nspam_cutoff = 1\n"}
    cfgs = {}
    for tag, sk in (("hold", sock), ("hold-self", None)):
        cfg = lg.config(tag, list_conf={
            n: t + "deliver = /bin/true\n" for n, t in lists.items()})
        with open(os.path.join(cfg, "listgate.conf"), "a") as f:
            f.write("database = %s\n" % db)
            if sk:
                f.write("holder_socket = %s\n" % sk)
        for n in lists:
            shutil.copy(src, os.path.join(cfg, "tokens", n + ".kch"))
        cfgs[tag] = cfg
    rc, _, err, _, _ = r.run(lg.argv(cfgs["hold"], "migrate", "-q"), pg=True)
    if rc != 0:
        raise SystemExit("bench: listgate migrate failed: " + err[:300])
    hlog = open(os.path.join(a.work, "holder.log"), "w")
    holder = subprocess.Popen(lg.argv(cfgs["hold"], "holder"), cwd=a.work,
                              stdout=hlog, stderr=hlog, env=r.env)
    try:
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.1)
        else:
            hlog.flush()
            with open(os.path.join(a.work, "holder.log")) as f:
                raise SystemExit("bench: listgate holder did not start: " +
                                 f.read()[:500])
        sample = test[::a.hold_every]
        meta["hold"] = {"posts": len(sample), "holder_workers": 2}
        log("hold path: %d posts" % len(sample))
        # (a post scoring 1.0 is held even at ham_cutoff 1: its pass
        # time is left out, by its exit status in the row)
        runs = (("pass", lg.argv(cfgs["hold"], "filter", "--mta", "qmail",
                                 "--list", "pass"), None),
                ("holder", lg.argv(cfgs["hold"], "filter", "--mta", "qmail",
                                   "--list", "viaholder"), 99),
                ("self", lg.argv(cfgs["hold-self"], "filter", "--mta",
                                 "qmail", "--list", "self"), 99),
                ("bf", ["bogofilter", "-d", bdir], None))
        rows = []
        for i, (c, p, _) in enumerate(sample):
            res = {}
            order = list(runs) if i % 2 == 0 else list(reversed(runs))
            for name, argv, want in order:
                rc, ms, rss, _, cpu = r.timed(argv, p)
                if want is not None and rc != want:
                    raise SystemExit("bench: hold path, %s: %s exited %d, "
                                     "not %d" % (name, p, rc, want))
                res[name] = (round(ms, 3), round(cpu, 3))
                if name == "pass":
                    pass_rc = rc
            rows.append((c, p, pass_rc) + tuple(x for n, _, _ in runs
                                                for x in res[n]))
        # the holder held them: a filter of its list loads no libpq
        env = dict(r.env, LD_DEBUG="files")
        with open(os.path.join(a.data, sample[0][1]), "rb") as f:
            body = f.read()
        chk = subprocess.run(runs[1][1], input=b"X-Bench: check\n" + body,
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, env=env, cwd=a.work)
        if chk.returncode != 99 or b"file=libpq" in chk.stderr:
            raise SystemExit("bench: hold path: the filter held the post "
                             "itself, not the holder (exit %d)" %
                             chk.returncode)
    finally:
        holder.terminate()
        holder.wait()
        hlog.close()
    write_tsv(os.path.join(a.out, "hold.tsv"),
              ("class", "post", "pass_rc", "pass_ms", "pass_cpu_ms",
               "holder_ms",
               "holder_cpu_ms", "self_ms", "self_cpu_ms", "bf_ms",
               "bf_cpu_ms"), rows)


CG_RE = re.compile(r"Collected : (\d+)")


def callgrind_ir(r, argv, path=None, files_out=None):
    """Instructions executed by argv (valgrind --tool=callgrind), the post
    at path on stdin; the profile kept at files_out when given."""
    cg = ["valgrind", "--tool=callgrind",
          "--callgrind-out-file=" + (files_out or "/dev/null")] + argv
    fin = open(os.path.join(r.data, path), "rb") if path else None
    try:
        p = subprocess.run(cg, cwd=r.data, stdin=fin or subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           env=r.env)
    finally:
        if fin:
            fin.close()
    m = CG_RE.search(p.stderr.decode("utf-8", "replace"))
    return int(m.group(1)) if m else None


def callgrind_run(a, lg, bf, r, test, meta):
    """Instruction counts: one process per post for a few test posts, and
    a batch of test posts, for the floor and both filters."""
    if shutil.which("valgrind") is None:
        log("callgrind: valgrind missing, skipped")
        meta["callgrind"] = None
        return
    cfg = os.path.join(a.work, "lg-direct-100")
    bdir = os.path.join(a.work, "bogo-100")
    step = max(1, len(test) // a.callgrind_posts)
    sample = [p for _, p, _ in test[::step]][:a.callgrind_posts]
    res = {"posts": sample, "floor": [], "listgate": [], "bogofilter": []}
    log("callgrind: %d posts one at a time, %d in batch" %
        (len(sample), a.callgrind_batch))
    for i, p in enumerate(sample):
        keep = i == 0
        res["floor"].append(callgrind_ir(r, [a.floor], p))
        res["listgate"].append(callgrind_ir(
            r, lg.score_argv(cfg, "bench100"), p,
            os.path.join(a.out, "callgrind-listgate.out") if keep else None))
        res["bogofilter"].append(callgrind_ir(
            r, bf.score_argv(bdir), p,
            os.path.join(a.out, "callgrind-bogofilter.out") if keep
            else None))
    batch = [p for _, p, _ in test[:a.callgrind_batch]]
    res["batch_posts"] = len(batch)
    res["batch_listgate"] = callgrind_ir(
        r, lg.argv(cfg, "score", "--list", "bench100") + batch)
    res["batch_bogofilter"] = callgrind_ir(
        r, ["bogofilter", "-d", bdir, "-TT", "-B"] + batch)
    meta["callgrind"] = res
    # a readable profile of one listgate run, kept beside the numbers
    for flt in ("listgate", "bogofilter"):
        f = os.path.join(a.out, "callgrind-%s.out" % flt)
        if os.path.exists(f) and shutil.which("callgrind_annotate"):
            with open(os.path.join(a.out, "profile-%s.txt" % flt), "w") as o:
                subprocess.run(["callgrind_annotate", "--inclusive=yes", f],
                               stdout=o, stderr=subprocess.DEVNULL)
            os.unlink(f)


def main(argv):
    ap = argparse.ArgumentParser(description="listgate vs bogofilter")
    ap.add_argument("--listgate", required=True)
    ap.add_argument("--data", required=True, help="the corpus data/ dir")
    ap.add_argument("--work", required=True, help="scratch dir")
    ap.add_argument("--out", required=True, help="results dir")
    ap.add_argument("--floor", required=True,
                    help="the trivial C program (tests/bench/floor.c)")
    ap.add_argument("--timeit", required=True,
                    help="the launcher that measures a run "
                    "(tests/bench/timeit.c)")
    ap.add_argument("--deliver", default="/bin/cat",
                    help="the Postfix deliver command")
    ap.add_argument("--pg", action="store_true",
                    help="PostgreSQL is there (PG* variables): train "
                    "through the journal too")
    ap.add_argument("--quick", action="store_true",
                    help="fewer posts for the timed and online parts")
    ap.add_argument("--splits", default="100,15")
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--skip", default="",
                    help="comma-separated parts to leave out: online, "
                    "postfix, hold, callgrind")
    args = ap.parse_args(argv)
    skip = set(s for s in args.skip.split(",") if s)
    args.online_posts = 1500 if args.quick else 0
    args.rounds = 1 if args.quick else 3
    args.postfix_every = 8 if args.quick else 2
    args.hold_every = 32 if args.quick else 8
    args.callgrind_posts = 3 if args.quick else 9
    args.callgrind_batch = 100 if args.quick else 300

    data = os.path.abspath(args.data)
    allp = posts(data)
    test = [p for p in allp if p[2][0] >= 128]
    sets = {"100": [p for p in allp if p[2][0] < 128],
            "15": [p for p in allp if p[2][0] < 38]}
    splits = [s for s in args.splits.split(",") if s]
    for s in splits:
        if s not in sets:
            raise SystemExit("bench: unknown split %s (100 or 15)" % s)
    proc_test = test[::4] if args.quick else test
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.work, exist_ok=True)
    r = Runner(data, os.path.abspath(args.timeit))
    lg = Listgate(os.path.abspath(args.listgate), args.work, r)
    bf = Bogofilter(args.work, r)
    meta = {
        "date": datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"),
        "filters": ["listgate", "bogofilter"], "splits": splits,
        "quick": args.quick, "pg": args.pg, "resamples": args.resamples,
        "seed": args.seed,
        "test_ham": sum(1 for p in test if p[0] == "ham"),
        "test_spam": sum(1 for p in test if p[0] == "spam"),
        "proc_posts": len(proc_test),
        "cutoffs": {"listgate": "its own verdicts (ham = below ham_cutoff)",
                    "bogofilter": "ham_cutoff %g, spam_cutoff %g" % (
                        bf.ham_cutoff, bf.spam_cutoff)},
        "bf_ham_cutoff": bf.ham_cutoff,
        "splits_info": {},
        "machine": {"nproc": os.cpu_count(),
                    "loadavg_start": os.getloadavg()},
        "versions": {"listgate": first_line([lg.binary, "--version"]),
                     "bogofilter": first_line(["bogofilter", "-V"]),
                     "python": sys.version.split()[0],
                     "commit": first_line(["git", "-C", os.path.dirname(
                         os.path.abspath(__file__)), "describe", "--always",
                         "--dirty"])},
    }
    log("corpus: %d ham + %d spam test posts; training %s" % (
        meta["test_ham"], meta["test_spam"],
        ", ".join("%s%%: %d" % (s, len(sets[s])) for s in splits)))

    def save():
        with open(os.path.join(args.out, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1)

    for s in splits:
        split_run(args, lg, bf, r, s, sets[s], test, meta, proc_test)
        save()
    if "postfix" not in skip and "100" in splits:
        postfix_run(args, lg, bf, r, test, meta)
        save()
    if "hold" not in skip and "100" in splits:
        hold_run(args, lg, bf, r, test, meta)
        save()
    if "callgrind" not in skip and "100" in splits:
        callgrind_run(args, lg, bf, r, test, meta)
        save()
    if "online" not in skip:
        online_run(args, lg, bf, r, allp, meta)
        save()
    meta["machine"]["loadavg_end"] = os.getloadavg()
    save()

    with open(os.path.join(args.out, "table.txt"), "w") as f:
        rows = roc.table(args.out, args.resamples, args.seed, out=f)
    with open(os.path.join(args.out, "table.json"), "w") as f:
        json.dump(rows, f, indent=1)
    with open(os.path.join(args.out, "table.txt")) as f:
        sys.stdout.write(f.read())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""evidence.py - what the evidence beyond the words does and costs

    python3 tests/bench/evidence.py member [--listgate PATH] [--data DIR]
                                    [--split 100|15]
    python3 tests/bench/evidence.py cost --base OLD_LISTGATE
                                    [--listgate PATH] [--posts N]

member: the subscriber benchmark.  The SpamAssassin corpus split as in
bench.sh (sha1 of the file name: b < 128 trains, b >= 128 tests) stands
for one list; its "subscribers" are the From addresses of the training
ham.  The posts are scored as the list's filter would see them, before
the list manager: each copy loses its Return-Path (in the corpus that is
the list's bounce address, added by the list server; before the list,
the envelope sender is the poster's), so member_check is asked about
From.  The list is trained and scored twice, without and with
member_check (grep -qixF on the subscriber file), and the table gives
1-ROCA%, ham held and spam passed at the default ham_cutoff, with the
test ham from subscribers and from others apart.  --split 15 trains
on bench.sh's 15% subset (b < 38), a young list: its subscribers are
then the senders of that subset's ham.

cost: the pass path's wall time per post, one process per post as an
MTA runs it (`filter --mta qmail`, ham_cutoff 1 so every post passes),
for the listgate of an earlier commit (--base, e.g. main's) and this
one with the evidence off, member_check on (uncached and cached),
DNSBL on (three zones on a local rbldnsd) and both; the runs alternate
post by post so machine noise hits each alike.  Needs rbldnsd.
"""

import email.parser
import email.utils
import hashlib
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import roc  # noqa: E402

HAM_DIRS = ("easy-ham-1", "easy-ham-2", "hard-ham-1")
SPAM_DIRS = ("spam-1", "spam-2")
CUTOFF = 0.3


def corpus(arg):
    if arg:
        return arg
    top = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    out = subprocess.run(["sh", os.path.join(top, "tests/bench/corpus.sh"),
                          "--find"], stdout=subprocess.PIPE, check=True)
    return out.stdout.decode().strip()


def posts(data):
    out = []
    for cls, dirs in (("ham", HAM_DIRS), ("spam", SPAM_DIRS)):
        for d in dirs:
            for name in sorted(os.listdir(os.path.join(data, d))):
                if name.endswith(".txt"):
                    b = hashlib.sha1(name.encode()).digest()[0]
                    out.append((cls, d + "/" + name, b))
    return out


def strip_return_path(raw):
    """The post without its top-level Return-Path field(s)."""
    head, sep, body = raw.partition(b"\n\n")
    out, skip = [], False
    for line in head.split(b"\n"):
        if line[:1] in (b" ", b"\t") and skip:
            continue
        skip = line.lower().startswith(b"return-path:")
        if not skip:
            out.append(line)
    return b"\n".join(out) + sep + body


def from_addr(raw):
    head = raw.partition(b"\n\n")[0].decode("latin-1")
    msg = email.parser.HeaderParser().parsestr(head + "\n\n")
    return email.utils.parseaddr(msg.get("From", "") or "")[1].lower()


def chunks(seq, n):
    for i in range(0, len(seq), n):
        yield seq[i:i + n]


def root_opts(binary):
    """--allow-root for a listgate run as root that knows it (a listgate
    from before it left root has no such option)"""
    if os.getuid() != 0:
        return []
    h = subprocess.run([binary, "--help"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT).stdout
    return ["--allow-root"] if b"allow-root" in h else []


def lg(binary, conf, *args, stdin=None):
    return subprocess.run([binary] + root_opts(binary) + ["--config", conf] +
                          list(args), stdin=stdin, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)


def member(argv):
    binary = os.path.abspath(opt(argv, "--listgate", "build/listgate"))
    data = corpus(opt(argv, "--data", None))
    split = opt(argv, "--split", "100")
    tmax = {"100": 128, "15": 38}[split]
    work = tempfile.mkdtemp(prefix="lg-member-bench.")
    try:
        allp = posts(data)
        for d in HAM_DIRS + SPAM_DIRS:
            os.makedirs(os.path.join(work, "posts", d))
        members = set()
        for cls, rel, b in allp:
            with open(os.path.join(data, rel), "rb") as f:
                raw = f.read()
            with open(os.path.join(work, "posts", rel), "wb") as f:
                f.write(strip_return_path(raw))
            if cls == "ham" and b < tmax:
                a = from_addr(raw)
                if "@" in a:
                    members.add(a)
        with open(os.path.join(work, "members.txt"), "w") as f:
            f.write("\n".join(sorted(members)) + "\n")
        train = [p for p in allp if p[2] < tmax]
        test = [p for p in allp if p[2] >= 128]
        known = {rel for cls, rel, b in test
                 if cls == "ham" and from_addr(open(os.path.join(
                     data, rel), "rb").read()) in members}
        rows = []
        for name, extra in (("without member_check", ""),
                            ("with member_check", "member_check = "
                             "/usr/bin/grep -qixF -e {sender} %s\n" %
                             os.path.join(work, "members.txt"))):
            conf = os.path.join(work, "conf-" + name.split()[0])
            os.makedirs(os.path.join(conf, "lists"))
            with open(os.path.join(conf, "listgate.conf"), "w") as f:
                f.write("tokens_dir = %s/tokens\n" % conf)
            with open(os.path.join(conf, "lists", "bench.conf"), "w") as f:
                f.write(extra)
            t0 = time.perf_counter()
            for cls in ("ham", "spam"):
                files = [os.path.join(work, "posts", rel)
                         for c, rel, b in train if c == cls]
                for ch in chunks(files, 500):
                    p = lg(binary, conf, "train", "-q", "--list", "bench",
                           "--" + cls, *ch)
                    if p.returncode != 0:
                        sys.exit("train failed: " + p.stderr.decode())
            ttrain = time.perf_counter() - t0
            scores = {}
            for ch in chunks([rel for c, rel, b in test], 500):
                p = lg(binary, conf, "score", "--list", "bench",
                       *[os.path.join(work, "posts", r) for r in ch])
                for line in p.stdout.decode().splitlines():
                    v, s, path = line.split(" ", 2)
                    scores[os.path.relpath(path, os.path.join(work,
                                                              "posts"))] = \
                        float(s)
            ham = [scores[r] for c, r, b in test if c == "ham"]
            spam = [scores[r] for c, r, b in test if c == "spam"]
            held_k = sum(1 for c, r, b in test if c == "ham" and r in known
                         and scores[r] >= CUTOFF)
            held_u = sum(1 for c, r, b in test if c == "ham" and
                         r not in known and scores[r] >= CUTOFF)
            rows.append((name, roc.one_minus_roca(ham, spam),
                         sum(1 for s in ham if s >= CUTOFF), len(ham),
                         held_k, held_u,
                         sum(1 for s in spam if s < CUTOFF), len(spam),
                         ttrain))
        nk = len(known)
        nh = sum(1 for c, r, b in test if c == "ham")
        print("split %s: subscribers: %d From addresses of the %d "
              "training ham; "
              "test ham from a subscriber: %d of %d" %
              (split, len(members), sum(1 for c, r, b in train if c == "ham"),
               nk, nh))
        print("%-22s %8s %12s %14s %14s %12s %8s" % (
            "", "1-ROCA%", "ham held", "  from subscr.", "  from others",
            "spam passed", "train s"))
        for r in rows:
            print("%-22s %8.4f %5d/%-6d %7d/%-6d %7d/%-6d %5d/%-6d %8.1f" % (
                r[0], r[1], r[2], r[3], r[4], nk, r[5], nh - nk, r[6], r[7],
                r[8]))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def opt(argv, name, default):
    if name in argv:
        return argv[argv.index(name) + 1]
    return default


def cost(argv):
    base = os.path.abspath(opt(argv, "--base", None) or sys.exit(
        "cost: --base OLD_LISTGATE is required"))
    binary = os.path.abspath(opt(argv, "--listgate", "build/listgate"))
    nposts = int(opt(argv, "--posts", "300"))
    data = corpus(opt(argv, "--data", None))
    work = tempfile.mkdtemp(prefix="lg-cost-bench.")
    os.chmod(work, 0o755)
    rbl = None
    try:
        allp = posts(data)
        train = [p for p in allp if p[2] < 38]
        test = [p for p in allp if p[2] >= 128 and p[0] == "ham"][:nposts]
        zones = os.path.join(work, "zones")
        os.makedirs(zones)
        for z, line in (("bl", "66.187.233.0/24\n"),
                        ("bl2", "193.120.211.219\n"),
                        ("nx", "192.0.2.99\n")):
            with open(os.path.join(zones, z), "w") as f:
                f.write(line)
            os.chmod(os.path.join(zones, z), 0o644)
        port = 20000 + os.getpid() % 20000
        user = ["-u", "nobody"] if os.getuid() == 0 else []
        rbl = subprocess.Popen(["/usr/sbin/rbldnsd", "-n"] + user + [
            "-b", "127.0.0.1/%d" % port, "-w", zones,
            "bl.test:ip4set:bl", "bl2.test:ip4set:bl2", "nx.test:ip4set:nx"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        with open(os.path.join(work, "members.txt"), "w") as f:
            for cls, rel, b in train:
                if cls == "ham":
                    with open(os.path.join(data, rel), "rb") as p:
                        a = from_addr(p.read())
                    if a:
                        f.write(a + "\n")
        member_line = ("member_check = /usr/bin/grep -qixF -e {sender} "
                       "%s/members.txt\n" % work)
        dns_lines = ("dnsbl_zones = bl.test bl2.test nx.test\n"
                     "dns_server = 127.0.0.1:%d\n" % port)
        configs = [("main (before)", base, "", ""),
                   ("evidence off", binary, "", ""),
                   ("member_check", binary, "", member_line),
                   ("member cached", binary, "",
                    member_line + "member_cache_s = 86400\n"),
                   ("DNSBL, 3 zones", binary, dns_lines, ""),
                   ("both", binary, dns_lines, member_line)]
        confs = []
        for i, (name, b, g, l) in enumerate(configs):
            conf = os.path.join(work, "conf%d" % i)
            os.makedirs(os.path.join(conf, "lists"))
            with open(os.path.join(conf, "listgate.conf"), "w") as f:
                f.write("tokens_dir = %s/tokens\n" % conf + g)
            with open(os.path.join(conf, "lists", "c.conf"), "w") as f:
                f.write("ham_cutoff = 1\nspam_cutoff = 1\n" + l)
            for cls in ("ham", "spam"):
                files = [os.path.join(data, rel) for c, rel, bb in train
                         if c == cls]
                for ch in chunks(files, 500):
                    p = lg(b, conf, "train", "-q", "--list", "c",
                           "--" + cls, *ch)
                    if p.returncode != 0:
                        sys.exit("train failed: " + p.stderr.decode())
            confs.append(conf)
        times = [[] for _ in configs]
        env = dict(os.environ)
        for k in list(env):
            if k.startswith("PG"):
                del env[k]
        cpu = [[] for _ in configs]
        ropts = [root_opts(c[1]) for c in configs]
        devnull = os.open(os.devnull, os.O_WRONLY)
        for k, (cls, rel, b) in enumerate(test):
            order = list(range(len(configs)))
            order = order[k % len(order):] + order[:k % len(order)]
            for i in order:
                argv = [configs[i][1]] + ropts[i] + [
                    "--config", confs[i], "filter", "--list", "c", "--mta",
                    "qmail"]
                fd = os.open(os.path.join(data, rel), os.O_RDONLY)
                t0 = time.perf_counter()
                pid = os.fork()
                if pid == 0:
                    os.dup2(fd, 0)
                    os.dup2(devnull, 1)
                    os.dup2(devnull, 2)
                    os.execve(argv[0], argv, env)
                _, st, ru = os.wait4(pid, 0)
                t = (time.perf_counter() - t0) * 1000
                os.close(fd)
                if not os.WIFEXITED(st) or os.WEXITSTATUS(st) != 0:
                    sys.exit("%s: filter ended with status %d on %s" % (
                        configs[i][0], st, rel))
                times[i].append(t)
                cpu[i].append((ru.ru_utime + ru.ru_stime) * 1000)
        m0 = statistics.median(times[0])
        c0 = statistics.mean(cpu[0])
        print("pass path, one process per post, %d test ham posts, "
              "ms per post (wall: fork to exit; cpu: the child's user + "
              "system time)" % len(test))
        print("%-16s %9s %9s %9s %9s %9s" % (
            "", "wall med", "wall p95", "vs main", "cpu mean", "vs main"))
        for i, (name, b, g, l) in enumerate(configs):
            ts = sorted(times[i])
            med = statistics.median(ts)
            cm = statistics.mean(cpu[i])
            print("%-16s %9.2f %9.2f %+8.1f%% %9.2f %+8.1f%%" % (
                name, med, ts[int(0.95 * (len(ts) - 1))],
                100 * (med - m0) / m0, cm, 100 * (cm - c0) / c0))
    finally:
        if rbl is not None:
            rbl.send_signal(signal.SIGTERM)
            rbl.wait()
        shutil.rmtree(work, ignore_errors=True)


def main(argv):
    if len(argv) < 2 or argv[1] not in ("member", "cost"):
        sys.exit(__doc__)
    (member if argv[1] == "member" else cost)(argv[2:])


if __name__ == "__main__":
    main(sys.argv)

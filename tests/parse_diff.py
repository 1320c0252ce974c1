#!/usr/bin/env python3
"""parse_diff.py - listgate's body words against Python's email package

For every post, an oracle (Python 3's standard `email` package with the
compat32 policy) extracts the body text a mail reader shows: every
text/plain and text/html leaf part, transfer-decoded, converted from its
charset, HTML turned into text by a small html.parser walker (script and
style dropped, block tags as line breaks, entities decoded).  That text
is cut into words by a port of listgate's own word rules (gate/tok.c:
chunks, URLs and addresses set apart, joiners trimmed, ASCII case
folded, at least min_len bytes, at most max_token bytes, CJK bigrams),
so what differs is text listgate lost, not tokenizer policy.

listgate's body words are the tokens `listgate tokens` prints without a
prefix (no ':'; header tokens are "subj:", "from:", ... and URL,
address, skip, part and anomaly tokens all hold a ':'), and the words of
hidden HTML elements ("hidden:WORD").

recall = |oracle words found among listgate's| / |oracle words|, per post
(a post whose oracle has no words counts as 1).  Printed: the
distribution per set, then every post below --threshold with the reason:
an entry of the allow-list (an oracle quirk or a policy, one line of
justification each) or "listgate defect" and a few of the missing words.

    parse_diff.py --listgate PATH [--fixtures DIR] [--corpus DIR]
                  [--sample N | --all] [--allow FILE] [--threshold 0.9]
                  [--show N] [--strict] [--min-p1 R]

--sample N takes every Nth post of the corpus (sorted by set and name);
0 or --all takes all of them.  Exit status: 0, or 1 when a post below
the threshold has no allow-list entry (--strict), or when a post below
0.5 has none (always), or when the corpus' 1st-percentile recall is
below --min-p1; 2 on errors.  tests/parse_diff.sh runs it in make check
(fixtures and every 10th corpus post) and, with --long, on everything.

The oracle reads a part's charset as a reader with charset detection
shows it, by the rules gate/mail/charset.c follows (a <meta> charset for
HTML without one, valid UTF-8 over a label that cannot hold it, the
post's language when a label does not fit), and drops the "begin 644"
uuencoded blocks mail readers show as attachments: decoding policy is
not lost text.  Where the oracle still differs (Python's own parsing),
the allow-list says why.
"""

import argparse
import codecs
import email
import email.policy
import html.parser
import os
import re
import subprocess
import sys
import tempfile

MIN_LEN = 3      # tok_opts_words: min_len
MAX_TOKEN = 40   # LG_MAX_TOKEN_BYTES
SETS = ("easy-ham-1", "easy-ham-2", "hard-ham-1", "spam-1", "spam-2")


# ---- charsets: as listgate reads them (gate/mail/charset.c) -----------

def _latin1_fallback(err):
    """an undecodable byte becomes the Latin-1 character of that byte"""
    b = err.object[err.start]
    return chr(b), err.start + 1


codecs.register_error("lg-latin1", _latin1_fallback)

# the names listgate reads otherwise than Python would
ALIASES = {
    "iso-8859-1": "cp1252", "iso8859-1": "cp1252", "iso_8859-1": "cp1252",
    "latin1": "cp1252", "l1": "cp1252", "us-ascii": "utf-8",
    "ascii": "utf-8", "ks_c_5601-1987": "cp949", "euc-kr": "cp949",
    "gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030",
    "shift_jis": "cp932", "shift-jis": "cp932", "sjis": "cp932",
    "x-sjis": "cp932", "big5": "big5hkscs", "tis-620": "cp874",
    "windows-874": "cp874",
}


def _norm(charset):
    return (charset or "").strip().strip('"\'').lower()


def _codec(cs):
    """the Python codec for a normalized label, or None"""
    cs = ALIASES.get(cs, cs) or "utf-8"
    try:
        codecs.lookup(cs)
    except LookupError:
        return None
    return cs


# languages whose charsets tell each other apart, and what to try when a
# label of the language does not fit the bytes (as gate/mail/charset.c)
FAMILIES = (
    ({"iso-2022-jp", "iso-2022-jp-1", "iso-2022-jp-2", "iso-2022-jp-3",
      "csiso2022jp", "shift_jis", "shift-jis", "sjis", "x-sjis", "ms_kanji",
      "windows-31j", "cp932", "euc-jp", "x-euc-jp", "eucjp"},
     ("euc_jp", "cp932", "iso2022_jp")),
    ({"gb2312", "gbk", "gb18030", "x-gbk", "cp936", "euc-cn", "hz-gb-2312",
      "big5", "big5-hkscs", "cp950", "x-x-big5"},
     ("cp950", "big5hkscs", "gb18030")),
    ({"euc-kr", "ks_c_5601-1987", "ks_c_5601", "ksc5601", "ksc_5601",
      "cp949", "iso-2022-kr", "korean"}, ("cp949", "iso2022_kr")),
)
ASCII_LABELS = {"", "utf-8", "utf8", "us-ascii", "ascii", "ansi_x3.4-1968",
                "us_ascii", "iso646-us", "7bit", "8bit", "default",
                "default_charset", "unknown-8bit", "x-unknown", "unknown",
                "x-user-defined"}
SINGLE = ("iso-8859", "iso8859", "iso_8859", "windows-12", "cp12", "koi8",
          "latin", "l1", "macintosh", "mac", "cp437", "cp85", "cp86", "ibm",
          "tis-620", "cp874", "windows-874")
WIDE = ("utf-16", "utf-32", "ucs-", "utf-7", "unicode", "utf16", "utf32")


def family(cs):
    for names, tries in FAMILIES:
        if cs in names:
            return tries
    return None


def strict_ok(raw, codec):
    try:
        raw.decode(codec)
        return True
    except Exception:
        return False


def to_text(raw, charset, hint=""):
    """bytes in a declared charset to str, never failing, deciding by
    the bytes when the label lies, as a reader with charset detection
    shows them: valid UTF-8 wins when it cannot be chance; a label that
    does not fit gives way to a charset of its language (or of hint's, a
    charset the post declares elsewhere, when it names none)"""
    cs = _norm(charset)
    codec = _codec(cs) or "utf-8"
    if cs.startswith(WIDE):
        return raw.decode(codec, errors="lg-latin1")
    multi = sum(1 for b in raw if 0xc0 <= b <= 0xf4)
    utf8 = multi > 0 and strict_ok(raw, "utf-8")
    if cs not in ASCII_LABELS and utf8 and (multi >= 4 or
                                            cs.startswith(SINGLE)):
        return raw.decode("utf-8")
    if strict_ok(raw, codec):
        return raw.decode(codec)
    if cs not in ASCII_LABELS and utf8:
        return raw.decode("utf-8")
    tries = family(cs)
    if tries is None and family(_norm(hint)):
        tries = (_codec(_norm(hint)) or "utf-8",) + family(_norm(hint))
    for t in tries or ():
        if strict_ok(raw, t):
            return raw.decode(t)
    try:
        return raw.decode(codec, errors="lg-latin1")
    except Exception:  # a codec that cannot take the handler
        return raw.decode("utf-8", errors="lg-latin1")


META = re.compile(rb"<meta[^>]*?charset\s*=\s*[\"']?([A-Za-z0-9._:-]+)",
                  re.I)


def meta_charset(raw):
    """the charset an HTML part declares in a <meta> in its first 4 KiB"""
    m = META.search(raw[:4096])
    return m.group(1).decode("ascii").lower() if m else None


# the uuencoded blocks mail readers show as attachments: a begin line,
# data lines (a length character and groups of four), an optional empty
# one and "end"
UU_LINE = rb"[ -`][ -`]*"
UU_BLOCK = re.compile(rb"^begin [0-7]{3,4} [^\r\n]+\r?\n"
                      rb"(?:[!-M][ -`]*[ \t\r]*\n)+"
                      rb"(?:[ `][ \t\r]*\n)?(?:end[ \t\r]*(?:\n|$))?",
                      re.M)


def strip_uu(raw):
    return UU_BLOCK.sub(b"\n", raw)


# ---- HTML to text ----------------------------------------------------

BLOCKS = {
    "address", "article", "blockquote", "br", "caption", "center", "dd",
    "div", "dl", "dt", "footer", "form", "h1", "h2", "h3", "h4", "h5",
    "h6", "head", "header", "hr", "html", "iframe", "img", "input", "li",
    "nav", "ol", "option", "p", "pre", "section", "select", "table",
    "tbody", "td", "tfoot", "th", "thead", "title", "tr", "ul", "body",
    "button", "textarea", "frame", "area", "meta",
}


INVISIBLE = re.compile("[\u00ad\u200b-\u200f\u2060\ufeff]")


class Text(html.parser.HTMLParser):
    """the text a browser shows: data outside script and style, block
    elements as line breaks, inline ones joining their neighbours"""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out = []
        self.skip = None

    def handle_starttag(self, tag, attrs):
        if tag in BLOCKS:
            self.out.append("\n")
        if tag in ("script", "style"):
            self.skip = tag

    def handle_startendtag(self, tag, attrs):
        if tag in BLOCKS:
            self.out.append("\n")

    def handle_endtag(self, tag):
        if tag == self.skip:
            self.skip = None
        if tag in BLOCKS:
            self.out.append("\n")

    def handle_data(self, data):
        if self.skip is None:
            self.out.append(data)


def html_text(s):
    p = Text()
    try:
        p.feed(s)
        p.close()
    except Exception:  # an html.parser assertion on odd markup
        pass
    # invisible characters that split a word without showing (soft
    # hyphen, zero-width ones) are not there for a reader
    return INVISIBLE.sub("", "".join(p.out))


# ---- the oracle's body text ------------------------------------------

EW = re.compile(r"=\?([^?*\s]+)[?*]")


def oracle_text(data):
    """the decoded text of every text/plain and text/html leaf part"""
    msg = email.message_from_bytes(data, policy=email.policy.compat32)
    texts = []
    hint = ""
    for part in msg.walk():
        for _, v in part.items():
            for cs in EW.findall(str(v)):
                if not hint and family(_norm(cs)):
                    hint = cs
        if part.is_multipart():
            continue
        ctype = part.get_content_type()
        if ctype not in ("text/plain", "text/html"):
            continue
        try:
            raw = part.get_payload(decode=True)
        except Exception:
            raw = None
        if raw is None:
            p = part.get_payload()
            raw = p.encode("utf-8", "surrogateescape") \
                if isinstance(p, str) else b""
        try:
            cs = part.get_content_charset()
        except Exception:
            cs = None
        if ctype == "text/html" and _norm(cs) in ("", "us-ascii"):
            cs = meta_charset(raw) or cs
        if not hint and family(_norm(cs)):
            hint = cs
        if ctype == "text/plain":
            raw = strip_uu(raw)
        t = to_text(raw, cs, hint)
        if ctype == "text/html":
            t = html_text(t)
        texts.append(t)
    return "\n".join(texts)


# ---- listgate's word rules (gate/tok.c), on UTF-8 bytes ----------------

CHUNK_SEP = set(b'<>"()[]{}|`') | set(range(0, 33)) | {0x7f}
JOIN = set(b".-'!$_")
WORDC = set(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


def is_cjk(c):
    return (0x0e00 <= c <= 0x0eff or 0x1000 <= c <= 0x109f or
            0x1780 <= c <= 0x17ff or 0x19e0 <= c <= 0x19ff or
            0x3040 <= c <= 0x30ff or 0x3400 <= c <= 0x4dbf or
            0x4e00 <= c <= 0x9fff or 0xac00 <= c <= 0xd7af or
            0x1100 <= c <= 0x11ff or 0x3130 <= c <= 0x318f or
            0xf900 <= c <= 0xfaff or 0xff66 <= c <= 0xff9f or
            0x20000 <= c <= 0x2ffff)


def is_sep_cp(c):
    return ((0x80 <= c <= 0xbf and c not in (0xaa, 0xb5, 0xba)) or
            c in (0xd7, 0xf7) or 0x2000 <= c <= 0x2bff or
            0x2e00 <= c <= 0x2e7f or 0x3000 <= c <= 0x303f or
            0xfe30 <= c <= 0xfe4f or 0xff00 <= c <= 0xff0f or
            0xff1a <= c <= 0xff20 or 0xff3b <= c <= 0xff40 or
            0xff5b <= c <= 0xff65 or 0xfff0 <= c <= 0xffff or
            0xe000 <= c <= 0xf8ff or 0x1f000 <= c <= 0x1faff)


def cclass(ch):
    """'s' separator, 'w' word, 'j' joiner, 'c' CJK"""
    c = ord(ch)
    if c < 0x80:
        b = c
        if b in WORDC:
            return "w"
        if b in JOIN:
            return "j"
        return "s"
    if 0xdc80 <= c <= 0xdcff:   # a byte that was not UTF-8: a word char
        return "w"
    if is_cjk(c):
        return "c"
    if is_sep_cp(c):
        return "s"
    return "w"


def blen(s):
    return len(s.encode("utf-8", "surrogateescape"))


def fold(s):
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in s)


def add_word(out, w):
    while w and (w[0] in ".-'!_" or (w[0] == "$" and len(w) > 1 and
                                     w[1] == "$")):
        w = w[1:]
    while w and w[-1] in ".-'!_$":
        w = w[:-1]
    n = blen(w)
    if n < MIN_LEN or n > MAX_TOKEN:
        return
    out.add(fold(w))


def words_of(s, out):
    """words and CJK bigrams of a chunk with no URL or address"""
    w, cj = [], []

    def flush_cjk():
        if len(cj) == 1:
            out.add(cj[0])
        for i in range(len(cj) - 1):
            out.add(cj[i] + cj[i + 1])
        cj.clear()

    for ch in s:
        cl = cclass(ch)
        if cl != "c" and cj:
            flush_cjk()
        if cl in ("s", "c") and w:
            add_word(out, "".join(w))
            w = []
        if cl == "c":
            cj.append(ch)
        elif cl in ("w", "j"):
            w.append(ch)
    if cj:
        flush_cjk()
    if w:
        add_word(out, "".join(w))


LOCAL = set(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
            b"0123456789._%+-=")
DOMAIN = set(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
             b"0123456789.-")


def chunk(s, out):
    """a chunk: the words before a URL, or around addresses"""
    n = len(s)
    for i in range(n - 3):
        if s[i] == ":" and s[i + 1] == "/" and s[i + 2] == "/":
            b = i
            while b > 0 and s[b - 1].isascii() and s[b - 1].isalpha():
                b -= 1
            if not 2 <= i - b <= 10:
                continue
            words_of(s[:b], out)
            return
        if ((i == 0 or not (s[i - 1].isascii() and s[i - 1].isalnum()))
                and n - i > 4 and s[i:i + 4].lower() == "www." and
                s[i + 4].isascii() and s[i + 4].isalnum()):
            words_of(s[:i], out)
            return
    start = 0
    i = 1
    while i + 1 < n:
        if s[i] != "@" or i <= start:
            i += 1
            continue
        ls = i
        while ls > start and (ord(s[ls - 1]) in LOCAL if ord(s[ls - 1]) < 128
                              else cclass(s[ls - 1]) != "s"):
            ls -= 1
        de = i + 1
        while de < n and (ord(s[de]) in DOMAIN if ord(s[de]) < 128
                          else cclass(s[de]) != "s"):
            de += 1
        while de > i + 1 and s[de - 1] in ".-":
            de -= 1
        if ls == i or "." not in s[i + 1:de] or de - ls > 200:
            i += 1
            continue
        words_of(s[start:ls], out)
        start = de
        i = start + 1
    words_of(s[start:], out)


def words(text):
    """the body words listgate would make of this text"""
    out = set()
    cur = []
    for ch in text:
        if ord(ch) <= 32 or ch in '<>"()[]{}|`\x7f':
            if cur:
                chunk("".join(cur), out)
                cur = []
        else:
            cur.append(ch)
    if cur:
        chunk("".join(cur), out)
    return {mask(w) for w in out}


def mask(w):
    """as `listgate tokens` prints it (gate/util/sanitize.h): controls,
    bidi controls, separators and bytes that are not UTF-8 as '?'"""
    r = []
    for ch in w:
        c = ord(ch)
        if (c < 0x20 or c == 0x7f or 0x80 <= c <= 0x9f or c == 0x61c or
                0x200e <= c <= 0x200f or 0x202a <= c <= 0x202e or
                0x2066 <= c <= 0x2069 or c in (0x2028, 0x2029, 0xfeff) or
                0xd800 <= c <= 0xdfff):
            r.append("?")
        else:
            r.append(ch)
    return "".join(r)


# ---- listgate's side ---------------------------------------------------

def lg_words(listgate, paths):
    """{path: set of body words} for the posts, one listgate process"""
    res = {}
    with tempfile.TemporaryDirectory(prefix="parse_diff.") as d:
        names = {}
        for i, p in enumerate(paths):
            nm = "%06d" % i
            os.symlink(os.path.abspath(p), os.path.join(d, nm))
            names[os.path.join(d, nm)] = p
        env = dict(os.environ, LISTGATE_CONFIG="/nonexistent-listgate")
        r = subprocess.run([listgate, "--allow-root", "tokens", d], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=env)
        if r.returncode != 0:
            sys.stderr.write(r.stderr.decode("utf-8", "replace"))
            raise SystemExit("parse_diff: listgate tokens exited %d"
                             % r.returncode)
        cur = None
        for line in r.stdout.decode("utf-8", "surrogateescape").split("\n"):
            if line.startswith("# ") and line[2:] in names:
                cur = res.setdefault(names[line[2:]], set())
                continue
            # the words of hidden HTML elements are "hidden:WORD": words
            # of the body all the same (the oracle keeps them as text)
            if line.startswith("hidden:"):
                line = line[7:]
            if cur is not None and line and ":" not in line:
                cur.add(line)
        # a directory of one post prints no "# NAME" line
        if len(paths) == 1 and not res:
            res[paths[0]] = {l for l in (
                l[7:] if l.startswith("hidden:") else l
                for l in r.stdout.decode("utf-8", "surrogateescape")
                .split("\n")) if l and ":" not in l}
    return res


# ---- the comparison ----------------------------------------------------

def load_allow(path):
    allow = {}
    if not path:
        return allow
    with open(path, encoding="utf-8") as f:
        for ln, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 1)
            if len(parts) < 2:
                raise SystemExit("%s:%d: an entry needs a justification"
                                 % (path, ln))
            allow[parts[0]] = parts[1]
    return allow


def pct(vals, q):
    if not vals:
        return float("nan")
    k = min(len(vals) - 1, max(0, int(q / 100.0 * len(vals))))
    return vals[k]


def report(title, rows, allow, threshold, show, strict):
    """rows: (key, recall, oracle words, missing words); returns the
    number of failures"""
    vals = sorted(r[1] for r in rows)
    fails = 0
    print("# %s: %d posts" % (title, len(rows)))
    if not rows:
        return 0
    print("#   recall min %.3f  p1 %.3f  p5 %.3f  p10 %.3f  median %.3f"
          "  mean %.4f" % (vals[0], pct(vals, 1), pct(vals, 5),
                            pct(vals, 10), pct(vals, 50),
                            sum(vals) / len(vals)))
    print("#   below 1: %d  below 0.98: %d  below 0.9: %d  below 0.5: %d"
          "  (posts with no oracle words: %d)" % (
              sum(v < 1 for v in vals), sum(v < 0.98 for v in vals),
              sum(v < 0.9 for v in vals), sum(v < 0.5 for v in vals),
              sum(r[2] == 0 for r in rows)))
    low = sorted((r for r in rows if r[1] < threshold), key=lambda r: r[1])
    for key, rec, nw, miss in low:
        why = allow.get(key)
        if why is None:
            bad = rec < 0.5 or strict
            fails += bad
            sample = " ".join(sorted(miss)[:show])
            print("%s %.3f %s (%d of %d words missing: %s)" % (
                "FAIL" if bad else "LOW ", rec, key, len(miss), nw,
                sample))
            print("      reason: listgate defect (not in the allow-list)")
        else:
            print("ok   %.3f %s (%d of %d words missing)" % (
                rec, key, len(miss), nw))
            print("      reason: %s" % why)
    return fails


def compare(listgate, items):
    """items: [(key, path)] -> [(key, recall, nwords, missing)]"""
    got = lg_words(listgate, [p for _, p in items])
    rows = []
    for key, p in items:
        with open(p, "rb") as f:
            data = f.read()
        ow = words(oracle_text(data))
        lw = got.get(p, set())
        miss = ow - lw
        rec = 1.0 if not ow else (len(ow) - len(miss)) / len(ow)
        rows.append((key, rec, len(ow), miss))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--listgate", required=True)
    ap.add_argument("--fixtures", help="a directory of *.eml fixtures")
    ap.add_argument("--corpus", help="the corpus' data/ directory")
    ap.add_argument("--sample", type=int, default=0,
                    help="every Nth corpus post (0: all)")
    ap.add_argument("--all", action="store_true", help="the whole corpus")
    ap.add_argument("--allow", help="the allow-list file")
    ap.add_argument("--threshold", type=float, default=0.9)
    ap.add_argument("--show", type=int, default=12,
                    help="missing words shown per post")
    ap.add_argument("--strict", action="store_true",
                    help="fail on any post below the threshold without an "
                    "allow-list entry (else only below 0.5)")
    ap.add_argument("--min-p1", type=float, default=None,
                    help="fail when the corpus' 1st-percentile recall is "
                    "below this")
    a = ap.parse_args()
    if a.all:
        a.sample = 0
    allow = load_allow(a.allow)
    fails = 0
    if a.fixtures:
        items = [("mail/" + n, os.path.join(a.fixtures, n))
                 for n in sorted(os.listdir(a.fixtures))
                 if n.endswith(".eml")]
        fails += report("fixtures", compare(a.listgate, items), allow,
                        a.threshold, a.show, a.strict)
    if a.corpus:
        items = []
        for s in SETS:
            d = os.path.join(a.corpus, s)
            for n in sorted(os.listdir(d)):
                if n.endswith(".txt"):
                    items.append((s + "/" + n, os.path.join(d, n)))
        if a.sample > 1:
            items = items[::a.sample]
        title = "corpus" + (" (every %dth post)" % a.sample
                            if a.sample > 1 else " (all)")
        rows = compare(a.listgate, items)
        fails += report(title, rows, allow, a.threshold, a.show, a.strict)
        p1 = pct(sorted(r[1] for r in rows), 1)
        if a.min_p1 is not None and p1 < a.min_p1:
            print("FAIL corpus: 1st-percentile recall %.3f is below %.3f"
                  % (p1, a.min_p1))
            fails += 1
    if fails:
        print("parse_diff: %d failure(s): text lost with no "
              "justification, or recall below the goal" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

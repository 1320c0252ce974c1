/*
 * notice.c - hold notices, digests and answers as MIME messages
 *
 * Everything from the post is hostile: header text, envelope, tokens
 * and the decoded preview pass through sanitize_buf (controls and bidi
 * controls masked, cut at a character count) before they are put into
 * a header (RFC 2047 B-encoded when not plain ASCII or when it holds
 * "=?", which a reader would decode) or into the text part
 * (quoted-printable, each preview line quoted).  The attached
 * original is copied byte for byte under a random boundary that it is
 * checked not to contain.  Allocation failure is the only error; no
 * logging, no exits.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "gate/mail/mail.h"
#include "gate/moderate/notice.h"
#include "gate/util/buf.h"
#include "gate/util/lglimits.h"
#include "gate/util/sanitize.h"
#include "gate/util/suggest.h"

/* bytes of the post the preview walks, and decoded text it keeps */
#define PREVIEW_SCAN	(256u * 1024u)
#define PREVIEW_TEXT	(8u * 1024u)
/* characters of one header value taken from the post */
#define FIELD_CHARS	150
/* characters of one token */
#define TOKEN_CHARS	60

static const char *const wday[] = { "Sun", "Mon", "Tue", "Wed", "Thu",
    "Fri", "Sat" };
static const char *const mon[] = { "Jan", "Feb", "Mar", "Apr", "May",
    "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

int
notice_addr_ok(const char *a)
{
	const char *at;
	size_t n, i;

	if (a == NULL || (n = strlen(a)) < 3 || n > COOKIE_MAX_ADDR)
		return 0;
	at = strrchr(a, '@');
	if (at == NULL || at == a || at[1] == '\0')
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)a[i] <= ' ' || (unsigned char)a[i] >= 0x7f ||
		    strchr("<>()[],;:\\\"", a[i]) != NULL)
			return 0;
	return 1;
}

int
notice_clean(struct buf *out, const void *s, size_t n, size_t maxchars)
{
	return sanitize_buf(out, s, n, maxchars, SANITIZE_TEXT, 0) < 0 ? -1 : 0;
}

/* the first field name of the n bytes at raw, blanks trimmed, in v:
 * 1 with *s_r its NUL-terminated text (in v), else 0 (none, a NUL in
 * it, or out of memory) */
static int
trimmed_field(const unsigned char *raw, size_t n, const char *name,
    struct buf *v, const char **s_r)
{
	char *s;
	size_t k;

	if (mail_header(raw, n, name, v) != 1 || v->data == NULL)
		return 0;
	s = (char *)v->data;
	k = v->len;
	while (k > 0 && strchr(" \t\r\n", *s) != NULL) {
		s++;
		k--;
	}
	while (k > 0 && strchr(" \t\r\n", s[k - 1]) != NULL)
		k--;
	if (memchr(s, '\0', k) != NULL)
		return 0;
	s[k] = '\0';
	*s_r = s;
	return 1;
}

int
notice_is_ours(const unsigned char *raw, size_t len,
    const struct cookie_key *key)
{
	struct buf l = BUF_INIT(LG_MAX_FIELD_BYTES),
	    m = BUF_INIT(LG_MAX_FIELD_BYTES), z = BUF_INIT(LG_MAX_FIELD_BYTES);
	size_t n = len < LG_MAX_HEADER_BYTES ? len : LG_MAX_HEADER_BYTES;
	const char *ls, *ms, *zs;
	int r = 0;

	/* the field alone is anyone's to add: only the seal, which needs
	 * the site's secret, says listgate wrote the message */
	if (raw == NULL || len == 0 || key == NULL)
		return 0;
	if (trimmed_field(raw, n, "X-Listgate-List", &l, &ls) &&
	    trimmed_field(raw, n, "Message-ID", &m, &ms) &&
	    trimmed_field(raw, n, "X-Listgate-Seal", &z, &zs))
		r = cookie_seal_ok(key, ls, ms, zs, strlen(zs));
	buf_free(&l);
	buf_free(&m);
	buf_free(&z);
	return r;
}

/* printf into b: 0 or -1 */
static int __attribute__((format(printf, 2, 3)))
put(struct buf *b, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	return buf_add(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n :
	    sizeof(tmp) - 1);
}

/* an RFC 5322 date in UTC */
static void
rfc5322_date(time_t t, char *out, size_t outsz)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	snprintf(out, outsz, "%s, %02d %s %04d %02d:%02d:%02d +0000",
	    wday[tm.tm_wday % 7], tm.tm_mday, mon[tm.tm_mon % 12],
	    tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* "2026-12-03 15:04 UTC" */
static void
short_date(time_t t, char *out, size_t outsz)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	snprintf(out, outsz, "%04d-%02d-%02d %02d:%02d UTC", tm.tm_year + 1900,
	    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min);
}

/* random lower-case hex, for boundaries and message ids */
static void
random_hex(char *out, size_t nchars)
{
	/* without getrandom (ENOSYS, a seccomp filter's EPERM, EAGAIN
	 * before the kernel's generator is ready) a count tells a second's
	 * notices apart: one for the whole process, taken atomically, as
	 * listgate web's request threads answer at once (a plain ++ let
	 * two of them take one value: one Message-ID for two notices) */
	static unsigned long fallback;
	unsigned char r[32];
	size_t i;

	if (nchars / 2 > sizeof(r))
		nchars = 2 * sizeof(r);
	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		unsigned long v = (unsigned long)time(NULL) ^
		    ((unsigned long)getpid() << 16) ^ __atomic_add_fetch(
		    &fallback, 1, __ATOMIC_RELAXED) * 2654435761u;

		for (i = 0; i < sizeof(r); i++) {
			v = v * 6364136223846793005ul + 1442695040888963407ul;
			r[i] = (unsigned char)(v >> 33);
		}
	}
	for (i = 0; i < nchars; i++)
		out[i] = "0123456789abcdef"[(r[i / 2] >> (i % 2 ? 0 : 4)) & 15];
	out[nchars] = '\0';
}

/* 1 when p was held unscored (larger than max_post_bytes): its stored
 * score of 0 means nothing, and reads as surely ham */
static int
unscored(const struct notice_post *p)
{
	return p->verdict != NULL && strcmp(p->verdict, "oversize") == 0;
}

/* 1 if s is printable ASCII only */
static int
plain_ascii(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return 0;
	return 1;
}

/* the length of the UTF-8 sequence starting with byte c (1 for
 * anything else) */
static size_t
u8len(unsigned char c)
{
	return c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
}

/*
 * "Name: value\n" with value (sanitized UTF-8) as it is when it is
 * plain ASCII without "=?", else as RFC 2047 encoded words of whole
 * characters, folded one word a line: a literal encoded word in the
 * value would be decoded by the reader, past the sanitizer.
 */
static int
hdr_text(struct buf *b, const char *name, const char *v, size_t n)
{
	static const char b64[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i, j, take, cl;
	unsigned x;

	if (put(b, "%s: ", name) < 0)
		return -1;
	if (plain_ascii(v, n) && n < 900 && memmem(v, n, "=?", 2) == NULL)
		return buf_add(b, v, n) < 0 || buf_addc(b, '\n') < 0 ? -1 : 0;
	for (i = 0; i < n; i += take) {
		/* at most 45 bytes of whole characters: 60 of base64 */
		for (take = 0; i + take < n; take += cl) {
			cl = u8len((unsigned char)v[i + take]);
			if (take + cl > 45)
				break;
		}
		if (take == 0)
			take = n - i < 45 ? n - i : 45;
		if (i > 0 && buf_adds(b, "\n ") < 0)
			return -1;
		if (buf_adds(b, "=?utf-8?b?") < 0)
			return -1;
		for (j = 0; j < take; j += 3) {
			x = (unsigned)(unsigned char)v[i + j] << 16;
			if (j + 1 < take)
				x |= (unsigned)(unsigned char)v[i + j + 1] << 8;
			if (j + 2 < take)
				x |= (unsigned char)v[i + j + 2];
			if (buf_addc(b, b64[x >> 18 & 63]) < 0 ||
			    buf_addc(b, b64[x >> 12 & 63]) < 0 ||
			    buf_addc(b, j + 1 < take ? b64[x >> 6 & 63] : '=') <
			    0 || buf_addc(b, j + 2 < take ? b64[x & 63] : '=') < 0)
				return -1;
		}
		if (buf_adds(b, "?=") < 0)
			return -1;
	}
	return buf_addc(b, '\n');
}

/* the text t as quoted-printable lines of at most 76 characters */
static int
qp_encode(struct buf *b, const unsigned char *t, size_t n)
{
	char hex[4];
	size_t i, col = 0, need;
	unsigned char c;
	int lit;

	for (i = 0; i < n; i++) {
		c = t[i];
		if (c == '\n') {
			if (buf_addc(b, '\n') < 0)
				return -1;
			col = 0;
			continue;
		}
		/* a blank before a line end, "From " and "." at a line's
		 * start (after a soft break too), '=' and every
		 * non-printable byte are encoded */
		lit = (c >= 33 && c <= 126 && c != '=') ||
		    ((c == ' ' || c == '\t') && i + 1 < n && t[i + 1] != '\n');
		need = lit ? 1 : 3;
		if (col + need > 75) {
			if (buf_adds(b, "=\n") < 0)
				return -1;
			col = 0;
		}
		if (col == 0 && (c == '.' || (c == 'F' && n - i >= 5 &&
		    memcmp(t + i, "From ", 5) == 0))) {
			lit = 0;
			need = 3;
		}
		if (lit) {
			if (buf_addc(b, c) < 0)
				return -1;
		} else {
			snprintf(hex, sizeof(hex), "=%02X", c);
			if (buf_adds(b, hex) < 0)
				return -1;
		}
		col += need;
	}
	return 0;
}

/* the header fields every message starts with */
static int
common_header(struct buf *b, const char *list, const struct notice_to *h,
    const char *subject, size_t sublen)
{
	char date[64], rnd[33], mid[400], seal[COOKIE_SEAL_CHARS + 1];
	const char *at = strrchr(h->from, '@');

	/* never a message without its seal: one that comes back (a
	 * moderator's or a sender's address that leads to a list listgate
	 * filters) would be held and noticed as a stranger's, for ever */
	if (h->key == NULL || h->key->len == 0)
		return -1;
	rfc5322_date(h->now, date, sizeof(date));
	random_hex(rnd, 24);
	snprintf(mid, sizeof(mid), "<listgate.%s@%s>", rnd,
	    at != NULL ? at + 1 : "localhost");
	if (put(b, "From: \"%s moderation\" <%s>\n", list, h->from) < 0 ||
	    put(b, "To: <%s>\n", h->to) < 0 ||
	    hdr_text(b, "Subject", subject, sublen) < 0 ||
	    put(b, "Date: %s\n", date) < 0 ||
	    put(b, "Message-ID: %s\n", mid) < 0 ||
	    put(b, "X-Listgate-List: %s\n", list) < 0)
		return -1;
	/* what tells this message from a post that copies its fields
	 * (notice_is_ours) */
	cookie_seal(h->key, list, mid, seal);
	/* Exchange sends a mailbox's out-of-office and rule replies to
	 * the Reply-To, a hold notice's being the approve address; this
	 * field, not RFC 3834's Auto-Submitted, is what it heeds.  Such a
	 * reply that marks itself no other way, in a language whose
	 * Subject robot.c does not know, would approve the post */
	if (put(b, "X-Listgate-Seal: %s\n", seal) < 0 ||
	    buf_adds(b, "X-Auto-Response-Suppress: OOF, AutoReply\n") < 0 ||
	    buf_adds(b, "MIME-Version: 1.0\n") < 0)
		return -1;
	return 0;
}

/* the first of the post's header field name, sanitized, into out */
static int
post_field(const struct notice_post *p, const char *name, struct buf *out)
{
	struct buf v = BUF_INIT(LG_MAX_FIELD_BYTES);
	size_t scan = p->raw_len < PREVIEW_SCAN ? p->raw_len : PREVIEW_SCAN;
	int r;

	if (p->raw == NULL || scan == 0)
		return buf_adds(out, "-");
	r = mail_header(p->raw, scan, name, &v);
	if (r < 0 || (r == 1 && notice_clean(out, v.data, v.len,
	    FIELD_CHARS) < 0) || (r == 0 && buf_adds(out, "-") < 0)) {
		buf_free(&v);
		return -1;
	}
	buf_free(&v);
	return 0;
}

/* what the preview walk collects */
struct preview {
	struct buf text;
	int nomem;
};

/* mail_cb: keep the decoded text of every text part */
static int
preview_cb(const struct mail_event *ev, void *vctx)
{
	struct preview *pv = vctx;

	if (ev->kind != MAIL_TEXT)
		return 0;
	if (pv->text.len >= PREVIEW_TEXT)
		return 0;
	if (pv->text.len > 0 && buf_addc(&pv->text, '\n') < 0)
		return 0;
	if (buf_add_trunc(&pv->text, ev->data, ev->len) < 0) {
		pv->nomem = 1;
		return -1;
	}
	return 0;
}

/* the preview: the first lines of the decoded text, sanitized (newlines
 * kept), blank runs squeezed, each line quoted and cut */
static int
preview(struct buf *b, const struct notice_post *p)
{
	struct mail_limits lim;
	struct preview pv;
	struct buf clean = BUF_INIT(4 * PREVIEW_TEXT);
	const unsigned char *s, *e, *nl;
	size_t lines = 0, cols, k, cl;
	int blank = 1, rc = -1;

	memset(&pv, 0, sizeof(pv));
	buf_init(&pv.text, PREVIEW_TEXT);
	if (p->raw == NULL || p->raw_len == 0)
		return buf_adds(b, "  (no text)\n");
	mail_limits_default(&lim);
	lim.max_scan = p->raw_len < PREVIEW_SCAN ? p->raw_len : PREVIEW_SCAN;
	lim.max_decoded = 4 * PREVIEW_TEXT;
	if (mail_walk(p->raw, p->raw_len, &lim, preview_cb, &pv) < 0 &&
	    pv.nomem)
		goto out;
	if (pv.text.len > 0 && sanitize_buf(&clean, pv.text.data, pv.text.len,
	    SANITIZE_NO_LIMIT, SANITIZE_TEXT, SANITIZE_KEEP_NL) < 0)
		goto out;
	s = clean.data;
	e = clean.len > 0 ? s + clean.len : s;	/* (no text: s is NULL) */
	while (s != NULL && s < e && lines < NOTICE_PREVIEW_LINES) {
		nl = memchr(s, '\n', (size_t)(e - s));
		if (nl == NULL)
			nl = e;
		/* tabs became spaces' width: keep them as a space */
		for (k = 0; s + k < nl && (s[k] == ' ' || s[k] == '\t'); k++)
			;
		if (s + k == nl) {
			if (!blank && buf_adds(b, "  |\n") < 0)
				goto out;
			if (!blank)
				lines++;
			blank = 1;
			s = nl + 1;
			continue;
		}
		blank = 0;
		if (buf_adds(b, "  | ") < 0)
			goto out;
		for (k = 0, cols = 0; s + k < nl; k += cl, cols++) {
			cl = u8len(s[k]);
			if (s + k + cl > nl)
				cl = (size_t)(nl - s - k);
			if (cols == NOTICE_PREVIEW_COLS - 3) {
				if (buf_adds(b, "...") < 0)
					goto out;
				break;
			}
			if (buf_add(b, s[k] == '\t' ? (const unsigned char *)" " :
			    s + k, s[k] == '\t' ? 1 : cl) < 0)
				goto out;
		}
		if (buf_addc(b, '\n') < 0)
			goto out;
		lines++;
		s = nl + 1;
	}
	if (lines == 0 && buf_adds(b, "  (no text)\n") < 0)
		goto out;
	rc = 0;
out:
	buf_free(&pv.text);
	buf_free(&clean);
	return rc;
}

/* the deciding tokens: "  0.999000  token" lines, most decisive first */
static int
tokens(struct buf *b, const char *clues)
{
	const char *s = clues, *nl, *sp[3];
	const char *q;
	size_t k;
	int nsp;

	for (k = 0; s != NULL && *s != '\0' && k < NOTICE_TOKENS; s = nl) {
		nl = strchr(s, '\n');
		if (nl == NULL)
			nl = s + strlen(s);
		/* TOKEN F NSPAM NHAM: the last three blanks */
		for (q = nl, nsp = 0; q > s && nsp < 3; q--)
			if (q[-1] == ' ')
				sp[nsp++] = q - 1;
		if (nsp == 3 && sp[2] > s) {
			/* (F is listgate's number, but the line comes back
			 * from the database: through the sanitizer too) */
			if (buf_adds(b, "  ") < 0 ||
			    notice_clean(b, sp[2] + 1, (size_t)(sp[1] - sp[2] -
			    1), 12) < 0 || buf_adds(b, "  ") < 0 ||
			    notice_clean(b, s, (size_t)(sp[2] - s),
			    TOKEN_CHARS) < 0 || buf_addc(b, '\n') < 0)
				return -1;
			k++;
		}
		if (*nl == '\n')
			nl++;
	}
	if (k == 0 && buf_adds(b, "  (none recorded)\n") < 0)
		return -1;
	return 0;
}

/* "dev-moderate+approve-...": the three links */
static int
links(struct buf *b, const struct notice_links *ln, const char *indent)
{
	char until[64];

	short_date(ln->expiry, until, sizeof(until));
	if (put(b, "%sapprove: mailto:%s\n", indent, ln->approve) < 0 ||
	    put(b, "%sreject:  mailto:%s\n", indent, ln->reject) < 0 ||
	    put(b, "%sdiscard: mailto:%s\n", indent, ln->discard) < 0 ||
	    put(b, "%s(valid until %s)\n", indent, until) < 0)
		return -1;
	return 0;
}

/* the summary lines of one post */
static int
summary(struct buf *t, const struct notice_post *p, const char *indent)
{
	char when[64];

	short_date(p->arrived, when, sizeof(when));
	if (put(t, "%sSender:  <", indent) < 0 ||
	    notice_clean(t, p->env_sender, strlen(p->env_sender),
	    FIELD_CHARS) < 0 || buf_adds(t, ">\n") < 0 ||
	    put(t, "%sFrom:    ", indent) < 0 ||
	    notice_clean(t, p->from, strlen(p->from), FIELD_CHARS) < 0 ||
	    put(t, "\n%sSubject: ", indent) < 0 ||
	    notice_clean(t, p->subject, strlen(p->subject), FIELD_CHARS) < 0 ||
	    buf_addc(t, '\n') < 0 ||
	    /* (a digest reads no post's header: no line, rather than a
	     * "-" that says the post has no Date) */
	    (p->raw != NULL && (put(t, "%sDate:    ", indent) < 0 ||
	    post_field(p, "Date", t) < 0 || buf_addc(t, '\n') < 0)) ||
	    put(t, "%sHeld:    %s (post %lld)\n", indent, when,
	    (long long)p->id) < 0 ||
	    put(t, "%sSize:    %zu bytes\n", indent, p->raw != NULL &&
	    p->raw_len > p->size ? p->raw_len : p->size) < 0 ||
	    (unscored(p) ? put(t, "%sScore:   not scored (verdict: %s)\n",
	    indent, p->verdict) : put(t, "%sScore:   %.4f (verdict: %s)\n",
	    indent, p->score, p->verdict)) < 0)
		return -1;
	if (p->note != NULL && p->note[0] != '\0' &&
	    (put(t, "%sHeld as: ", indent) < 0 ||
	    notice_clean(t, p->note, strlen(p->note), 2 * FIELD_CHARS) < 0 ||
	    buf_addc(t, '\n') < 0))
		return -1;
	return 0;
}

/* a boundary that the post does not contain */
static void
boundary(const struct notice_post *p, char *out, size_t outsz)
{
	char rnd[33];
	int tries;

	for (tries = 0; tries < 8; tries++) {
		random_hex(rnd, 32);
		snprintf(out, outsz, "=_listgate_%s", rnd);
		if (p->raw == NULL || memmem(p->raw, p->raw_len, out,
		    strlen(out)) == NULL)
			return;
	}
}

/* the encoding a message/rfc822 part declares: 7bit, 8bit or binary */
static const char *
raw_encoding(const unsigned char *raw, size_t n)
{
	size_t i, col = 0;
	int eight = 0;

	for (i = 0; i < n; i++) {
		if (raw[i] == '\n') {
			col = 0;
			continue;
		}
		if (raw[i] == 0 || ++col > 998 || (raw[i] == '\r' &&
		    (i + 1 == n || raw[i + 1] != '\n')))
			return "binary";
		if (raw[i] >= 0x80)
			eight = 1;
	}
	return eight ? "8bit" : "7bit";
}

int
notice_hold(const struct notice_post *p, const struct notice_links *ln,
    const struct notice_to *h, int remind, struct buf *out)
{
	struct buf subj = BUF_INIT(4096), t = BUF_INIT(NOTICE_MAX_TEXT);
	char bnd[64];
	size_t hlen;
	static const unsigned char none[] = "";
	struct notice_post pp = *p;
	int whole, rc = -1;

	/* the post attached whole, or its header alone when it is too
	 * large (or only its head was read) */
	whole = pp.raw == NULL || (pp.raw_len <= NOTICE_MAX_ATTACH &&
	    pp.raw_len >= pp.size);
	if (pp.raw == NULL) {
		pp.raw = none;
		pp.raw_len = 0;
	}
	p = &pp;

	/* Subject: [L] held: SUBJECT (score S), or (not scored: oversize) */
	if (put(&subj, "[%s] %s: ", p->list, remind ? "still held" :
	    "held") < 0 || notice_clean(&subj, p->subject,
	    strlen(p->subject), FIELD_CHARS) < 0 ||
	    (unscored(p) ? put(&subj, " (not scored: %s)", p->verdict) :
	    put(&subj, " (score %.4f)", p->score)) < 0)
		goto out;
	boundary(p, bnd, sizeof(bnd));
	if (common_header(out, p->list, h, (const char *)subj.data,
	    subj.len) < 0 ||
	    put(out, "Reply-To: <%s>\n", ln->approve) < 0 ||
	    buf_adds(out, "Auto-Submitted: auto-generated\n") < 0 ||
	    put(out, "X-Listgate-Id: %lld\n", (long long)p->id) < 0 ||
	    put(out, "Content-Type: multipart/mixed; boundary=\"%s\"\n\n",
	    bnd) < 0 ||
	    buf_adds(out, "This is a MIME message: a hold notice with the "
	    "held post attached.\n\n") < 0 ||
	    put(out, "--%s\nContent-Type: text/plain; charset=utf-8\n"
	    "Content-Transfer-Encoding: quoted-printable\n\n", bnd) < 0)
		goto out;

	/* the text part */
	if (put(&t, "%s post to the list %s is held for moderation.\n\n",
	    remind ? "Reminder: a" : "A", p->list) < 0 ||
	    summary(&t, p, "") < 0 ||
	    put(&t, "\nThe %d tokens that weighed most (the probability "
	    "that a post\nwith the token is spam):\n", NOTICE_TOKENS) < 0 ||
	    tokens(&t, p->clues) < 0 ||
	    buf_adds(&t, "\nPreview (its text, decoded; links and markup are "
	    "not live here):\n") < 0 ||
	    preview(&t, p) < 0 ||
	    buf_adds(&t, "\nReply to this message to approve the post, or "
	    "write to one of\nthese addresses (reject and discard train the "
	    "filter as spam;\nonly reject may tell the sender):\n") < 0 ||
	    links(&t, ln, "  ") < 0 ||
	    put(&t, "\nThe held post is attached%s.\n", whole ? "" :
	    " (its header only: it is too large)") < 0)
		goto out;
	if (qp_encode(out, t.data, t.len) < 0)
		goto out;

	/* the post, untouched */
	if (whole) {
		if (put(out, "\n--%s\nContent-Type: message/rfc822\n"
		    "Content-Disposition: attachment; filename=\"post-%lld.eml\""
		    "\n", bnd, (long long)p->id) < 0 ||
		    put(out, "Content-Transfer-Encoding: %s\n\n",
		    raw_encoding(p->raw, p->raw_len)) < 0 ||
		    buf_add(out, p->raw, p->raw_len) < 0)
			goto out;
	} else {
		hlen = mail_body_offset(p->raw, p->raw_len);
		if (hlen > LG_MAX_HEADER_BYTES)
			hlen = LG_MAX_HEADER_BYTES;
		if (put(out, "\n--%s\nContent-Type: text/rfc822-headers\n"
		    "Content-Transfer-Encoding: %s\n\n", bnd,
		    raw_encoding(p->raw, hlen)) < 0 ||
		    buf_add(out, p->raw, hlen) < 0)
			goto out;
	}
	if (put(out, "\n--%s--\n", bnd) < 0)
		goto out;
	rc = 0;
out:
	buf_free(&subj);
	buf_free(&t);
	return rc;
}

int
notice_digest(const char *list, const struct notice_post *p,
    const struct notice_links *ln, size_t n, size_t more,
    const struct notice_to *h, struct buf *out)
{
	struct buf subj = BUF_INIT(512), t = BUF_INIT(NOTICE_MAX_TEXT * 4);
	size_t i, shown = n < NOTICE_MAX_DIGEST ? n : NOTICE_MAX_DIGEST;
	int rc = -1;

	/* every post waiting counts, listed here or not (past the
	 * NOTICE_MAX_DIGEST listed, a later digest's) */
	n += more;
	if (put(&subj, "[%s] held: %zu post%s wait%s for moderation", list,
	    n, n == 1 ? "" : "s", n == 1 ? "s" : "") < 0 ||
	    common_header(out, list, h, (const char *)subj.data, subj.len) <
	    0 || buf_adds(out, "Auto-Submitted: auto-generated\n") < 0 ||
	    buf_adds(out, "Content-Type: text/plain; charset=utf-8\n"
	    "Content-Transfer-Encoding: quoted-printable\n\n") < 0)
		goto out;
	if (put(&t, "%zu post%s to the list %s %s held.  More notices came "
	    "in an hour\nthan notify_max_per_hour allows, so they come "
	    "together here.\nWrite to an address to decide a post.\n",
	    n, n == 1 ? "" : "s", list, n == 1 ? "is" : "are") < 0)
		goto out;
	for (i = 0; i < shown; i++)
		if (put(&t, "\n-- post %lld --\n", (long long)p[i].id) < 0 ||
		    summary(&t, &p[i], "  ") < 0 || links(&t, &ln[i], "  ") < 0)
			goto out;
	if (shown < n && put(&t, "\n(%zu more: a later digest lists them; "
	    "see `%s held --list %s`)\n", n - shown, suggest_cmd(), list) < 0)
		goto out;
	if (qp_encode(out, t.data, t.len) < 0)
		goto out;
	rc = 0;
out:
	buf_free(&subj);
	buf_free(&t);
	return rc;
}

/* 1 if s is a plain message id: <printable ASCII without blanks> */
static int
plain_msgid(const char *s)
{
	size_t n = s != NULL ? strlen(s) : 0;

	return n >= 3 && n <= 250 && s[0] == '<' && s[n - 1] == '>' &&
	    plain_ascii(s, n) && strchr(s, ' ') == NULL &&
	    memchr(s + 1, '<', n - 2) == NULL && memchr(s + 1, '>', n - 2) ==
	    NULL;
}

int
notice_answer(const char *list, const char *subject,
    const char *in_reply_to, const char *text, const struct notice_to *h,
    struct buf *out)
{
	struct buf subj = BUF_INIT(1024);
	int rc = -1;

	if (put(&subj, "[%s] ", list) < 0 || buf_adds(&subj, subject) < 0 ||
	    common_header(out, list, h, (const char *)subj.data, subj.len) < 0)
		goto out;
	if (plain_msgid(in_reply_to) && (put(out, "In-Reply-To: %s\n",
	    in_reply_to) < 0 || put(out, "References: %s\n", in_reply_to) < 0))
		goto out;
	if (buf_adds(out, "Auto-Submitted: auto-replied\n") < 0 ||
	    buf_adds(out, "Content-Type: text/plain; charset=utf-8\n"
	    "Content-Transfer-Encoding: quoted-printable\n\n") < 0 ||
	    qp_encode(out, (const unsigned char *)text, strlen(text)) < 0)
		goto out;
	rc = 0;
out:
	buf_free(&subj);
	return rc;
}

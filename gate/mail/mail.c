/*
 * mail.c - one-pass walker for inbound posts: RFC 5322 header blocks,
 * MIME multipart and message/rfc822 nesting, decoding of text parts
 *
 * Input is hostile.  Only the first max_scan bytes are looked at; the
 * post is read line by line with one cursor that only moves forward:
 * each line is compared at most once against the stack of open
 * boundaries, so the walk is linear in the scanned bytes (times the
 * nesting depth for lines starting with "--").  Header bytes, fields,
 * field length, boundary length, depth, parts and decoded text are
 * capped by struct mail_limits; an overrun truncates and reports an
 * anomaly event once per post.  Fails (-1) only when out of memory or
 * when the callback asks to stop.  Never logs, never exits.
 */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "gate/mail/b64.h"
#include "gate/mail/charset.h"
#include "gate/mail/enriched.h"
#include "gate/mail/html.h"
#include "gate/mail/mail.h"
#include "gate/mail/mime.h"
#include "gate/mail/qp.h"
#include "gate/mail/rfc2047.h"
#include "gate/mail/uu.h"
#include "gate/util/buf.h"
#include "gate/util/lglimits.h"
#include "gate/util/xalloc.h"

/* recursion guard whatever max_depth says: each level is a C stack frame */
#define MAIL_DEPTH_HARD	1000
/* longest media type kept ("application/vnd...") */
#define CTYPE_MAX	128
/* longest charset name reported */
#define CHARSET_MAX	40

enum anomaly {
	AN_NO_BLANK, AN_HDR_TRUNC, AN_DEPTH, AN_BND_MISSING, AN_BND_LONG,
	AN_PARTS, AN_B64, AN_QP, AN_SCAN, AN_DECODED, AN_CS_UNKNOWN,
	AN_CS_INVALID, AN_BAD_CTYPE, AN_2047, AN_CT_DUP, AN_UU, AN_CR,
	AN_CS_WRONG, AN_HIDDEN, AN_COUNT
};

static const char *const anames[AN_COUNT] = {
	"header-no-blank-line", "header-truncated", "depth-limit",
	"boundary-missing", "boundary-too-long", "part-limit", "b64-garbage",
	"qp-bad-escape", "scan-truncated", "decoded-truncated",
	"charset-unknown", "charset-invalid", "bad-content-type",
	"rfc2047-bad", "content-type-duplicate", "uu-garbage",
	"line-ends-cr", "charset-mislabelled", "hidden-text",
};

struct bnd {
	unsigned char *b;
	size_t len;
	int trunc;		/* longer than max_boundary: match the prefix */
};

/*
 * What the walk keeps of an entity's header: the Content-* values,
 * unfolded (RFC 5322: the CR LF before a folded line's white space is
 * removed), so a parameter folded inside its quotes is read whole.  At
 * most max_field bytes each; released by hdr_free().
 */
struct hdr {
	struct buf ct[2];	/* the first two Content-Type fields */
	unsigned nct;
	struct buf cte, cd;
	int has_cte, has_cd;
};

struct walk {
	const unsigned char *msg;
	size_t end, pos;
	const struct mail_limits *lim;
	unsigned max_depth;
	mail_cb cb;
	void *ctx;
	unsigned parts;
	size_t decoded;
	unsigned anom;		/* anomalies already reported */
	int stop;		/* part limit: ignore the rest */
	size_t rewalked;	/* decoded message/rfc822 bytes walked again */
	unsigned char *own;	/* msg when it is our copy (bare CR lines) */
	/* the first charset of a language (Japanese, Chinese, Korean) the
	 * post declares anywhere: the likely reading of a part whose own
	 * label says nothing (us-ascii, none) and does not fit its bytes */
	char hint[CHARSET_MAX + 1];
	struct bnd *stack;
	unsigned nstack;
	struct buf name, field, hval, dec, conv, html, hid, tmp, uu;
	/* mail_header(): the field wanted and where it goes */
	const char *want;
	struct buf *wantout;
	int found;
};

/* the LG_MAX_* defaults */
void
mail_limits_default(struct mail_limits *lim)
{
	lim->max_scan = LG_MAX_SCAN_BYTES;
	lim->max_header = LG_MAX_HEADER_BYTES;
	lim->max_fields = LG_MAX_HEADER_FIELDS;
	lim->max_field = LG_MAX_FIELD_BYTES;
	lim->max_boundary = LG_MAX_BOUNDARY;
	lim->max_depth = LG_MAX_MIME_DEPTH;
	lim->max_parts = LG_MAX_MIME_PARTS;
	lim->max_decoded = LG_MAX_DECODED_BYTES;
	lim->html_source = 0;
}

/* hand an event to the callback: 0 or -1 (stop) */
static int
emit(struct walk *w, struct mail_event *ev)
{
	if (w->cb == NULL)
		return 0;
	if (ev->data == NULL)
		ev->data = (const unsigned char *)"";
	if (ev->name == NULL)
		ev->name = "";
	if (ev->ctype == NULL)
		ev->ctype = "";
	if (ev->charset == NULL)
		ev->charset = "";
	if (ev->filename == NULL)
		ev->filename = "";
	return w->cb(ev, w->ctx) < 0 ? -1 : 0;
}

/* report an anomaly once per post: 0 or -1 */
static int
anomaly(struct walk *w, enum anomaly a, unsigned depth)
{
	struct mail_event ev;

	if (w->anom & (1u << a))
		return 0;
	w->anom |= 1u << a;
	memset(&ev, 0, sizeof(ev));
	ev.kind = MAIL_ANOMALY;
	ev.depth = depth;
	ev.data = (const unsigned char *)anames[a];
	ev.len = strlen(anames[a]);
	return emit(w, &ev);
}

/* the line at pos: content length (no CR LF) in *ll; returns the next pos */
static size_t
line_at(const struct walk *w, size_t pos, size_t *ll)
{
	const unsigned char *nl = memchr(w->msg + pos, '\n', w->end - pos);
	size_t e = nl ? (size_t)(nl - w->msg) : w->end;

	*ll = e - pos;
	if (*ll > 0 && w->msg[e - 1] == '\r')
		(*ll)--;
	return nl ? e + 1 : w->end;
}

/*
 * The open boundary this line is a delimiter of, or -1; *close set for
 * a closing one ("--b--").  RFC 2046 5.1.1 says to match the boundary
 * as a line prefix: "--b junk" opens a part just as "--b-- junk" closes
 * one.  An exact match (nothing but white space after "--b" or "--b--")
 * is looked for first at every level, innermost first, so that a
 * boundary that is a prefix of another open one ("b" inside "b2") never
 * takes the other's lines; then a prefix match, innermost first.
 */
static int
bmatch(const struct walk *w, const unsigned char *l, size_t ll, int *close)
{
	unsigned i;
	size_t k;
	int pass;

	if (w->nstack == 0 || ll < 2 || l[0] != '-' || l[1] != '-')
		return -1;
	for (pass = 0; pass < 2; pass++)
		for (i = w->nstack; i-- > 0;) {
			const struct bnd *b = &w->stack[i];

			if (ll - 2 < b->len || memcmp(l + 2, b->b, b->len) != 0)
				continue;
			k = 2 + b->len;
			*close = k + 2 <= ll && l[k] == '-' && l[k + 1] == '-';
			if (b->trunc) {
				/* longer than max_boundary: the line's end */
				*close = ll >= k + 2 && l[ll - 1] == '-' &&
				    l[ll - 2] == '-';
				return (int)i;
			}
			if (pass == 1)
				return (int)i;
			if (*close)
				k += 2;
			while (k < ll && (l[k] == ' ' || l[k] == '\t'))
				k++;
			if (k == ll)
				return (int)i;
		}
	return -1;
}

/* move the cursor to the next line that is an open boundary, or the end */
static void
skip_to_boundary(struct walk *w)
{
	size_t next, ll;
	int close;

	if (w->nstack == 0) {
		w->pos = w->end;
		return;
	}
	while (w->pos < w->end) {
		next = line_at(w, w->pos, &ll);
		if (bmatch(w, w->msg + w->pos, ll, &close) >= 0)
			return;
		w->pos = next;
	}
}

/* 1 if the line holds only spaces and tabs */
static int
blank_line(const unsigned char *l, size_t ll)
{
	size_t i;

	for (i = 0; i < ll; i++)
		if (l[i] != ' ' && l[i] != '\t')
			return 0;
	return 1;
}

/* length of the field name if the line starts a header field, else 0;
 * *colon set to the offset just past the ':' */
static size_t
field_name(const unsigned char *l, size_t ll, size_t *colon)
{
	size_t i, n;

	for (i = 0; i < ll && l[i] > ' ' && l[i] < 127 && l[i] != ':'; i++)
		;
	n = i;
	if (n == 0)
		return 0;
	while (i < ll && (l[i] == ' ' || l[i] == '\t'))
		i++;
	if (i >= ll || l[i] != ':')
		return 0;
	*colon = i + 1;
	return n;
}

/* keep a charset label as the post's hint when it is the first with a
 * language charset_convert_text() can try */
static void
keep_hint(struct walk *w, const char *cs, size_t n)
{
	size_t k;

	if (w->hint[0] != 0 || n == 0 || n > CHARSET_MAX ||
	    !charset_has_family(cs, n))
		return;
	for (k = 0; k < n; k++)
		w->hint[k] = cs[k];
	w->hint[n] = 0;
}

/* the charsets of the encoded words in a raw header value, as hints */
static void
hint_from_words(struct walk *w, const unsigned char *v, size_t n)
{
	size_t i, e;

	for (i = 0; w->hint[0] == 0 && i + 2 < n; i++) {
		if (v[i] != '=' || v[i + 1] != '?')
			continue;
		for (e = i + 2; e < n && e - i - 2 <= CHARSET_MAX &&
		    v[e] != '?' && v[e] != '*' && v[e] > ' '; e++)
			;
		if (e < n && (v[e] == '?' || v[e] == '*'))
			keep_hint(w, (const char *)v + i + 2, e - i - 2);
		i = e;
	}
}

/* finish the current header field: record, decode and emit; 0 or -1 */
static int
flush_field(struct walk *w, unsigned depth, struct hdr *h)
{
	const char *nm = buf_str(&w->name);
	const unsigned char *v = w->field.data ? w->field.data :
	    (const unsigned char *)"";
	size_t n = w->field.len;
	struct mail_event ev;
	struct buf *keep = NULL;
	int r;

	if (strcasecmp(nm, "content-type") == 0) {
		if (h->nct > 0 && anomaly(w, AN_CT_DUP, depth) < 0)
			return -1;
		if (h->nct < 2)
			keep = &h->ct[h->nct++];
	} else if (strcasecmp(nm, "content-transfer-encoding") == 0 &&
	    !h->has_cte) {
		keep = &h->cte;
		h->has_cte = 1;
	} else if (strcasecmp(nm, "content-disposition") == 0 &&
	    !h->has_cd) {
		keep = &h->cd;
		h->has_cd = 1;
	}
	if (keep != NULL) {
		/* w->field is the unfolded value (continuations joined
		 * without their line breaks), at most max_field bytes */
		buf_reset(keep);
		if (buf_add_trunc(keep, v, n) < 0 || buf_reserve(keep, 0) < 0)
			return -1;
	}
	if (w->cb == NULL && (w->want == NULL || w->found ||
	    strcasecmp(nm, w->want) != 0))
		return 0;
	while (n > 0 && (*v == ' ' || *v == '\t'))
		v++, n--;
	if (w->cb != NULL)
		hint_from_words(w, v, n);
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t' ||
	    v[n - 1] == '\r' || v[n - 1] == '\n'))
		n--;
	buf_reset(&w->hval);
	w->hval.max = n * CS_MAX_GROWTH + 16;
	if (strcasecmp(nm, "received") == 0) {
		/*
		 * A structured field, where no encoded word may stand (RFC
		 * 2047 5): the client's HELO is written in it as given, and
		 * "=?us-ascii?q?x_(localhost_[127.0.0.1])_by_x?=" decoded
		 * made our MTA's line read as a loopback hop, so that the
		 * walk to the first untrusted relay (its src: tokens, its
		 * DNSBL lookup) went on to the lines the sender wrote
		 */
		if ((r = charset_utf8_latin1(v, n, &w->hval)) < 0 ||
		    buf_reserve(&w->hval, 0) < 0)
			return -1;
		r = (r & CS_CUT) ? RFC2047_CUT : 0;
	} else if ((r = rfc2047_decode(v, n, &w->hval)) < 0 ||
	    buf_reserve(&w->hval, 0) < 0)
		return -1;
	if (w->want) {
		w->found = 1;
		buf_reset(w->wantout);
		if (buf_add_trunc(w->wantout, w->hval.data, w->hval.len) < 0 ||
		    buf_reserve(w->wantout, 0) < 0)
			return -1;
		return 0;
	}
	if ((r & RFC2047_BAD) && anomaly(w, AN_2047, depth) < 0)
		return -1;
	if ((r & RFC2047_CUT) && anomaly(w, AN_HDR_TRUNC, depth) < 0)
		return -1;
	memset(&ev, 0, sizeof(ev));
	ev.kind = MAIL_HEADER;
	ev.depth = depth;
	ev.name = nm;
	ev.data = w->hval.data;
	ev.len = w->hval.len;
	return emit(w, &ev);
}

/* an empty struct hdr for this walk's limits */
static void
hdr_init(const struct walk *w, struct hdr *h)
{
	memset(h, 0, sizeof(*h));
	buf_init(&h->ct[0], w->lim->max_field);
	buf_init(&h->ct[1], w->lim->max_field);
	buf_init(&h->cte, w->lim->max_field);
	buf_init(&h->cd, w->lim->max_field);
}

/* release what a struct hdr holds */
static void
hdr_free(struct hdr *h)
{
	buf_free(&h->ct[0]);
	buf_free(&h->ct[1]);
	buf_free(&h->cte);
	buf_free(&h->cd);
}

/* read one entity's header block from the cursor, emitting its fields;
 * h is set up here and must be released with hdr_free() */
static int
read_header(struct walk *w, unsigned depth, struct hdr *h)
{
	const struct mail_limits *lim = w->lim;
	size_t next, ll, colon, nl, hbytes = 0, nfields = 0;
	int infield = 0, full = 0, close;

	hdr_init(w, h);
	while (w->pos < w->end && !w->found) {
		const unsigned char *l = w->msg + w->pos;

		next = line_at(w, w->pos, &ll);
		if (ll == 0) {
			w->pos = next;
			break;
		}
		if (bmatch(w, l, ll, &close) >= 0)
			break;
		/*
		 * Where mail readers end a header block without a blank
		 * line: at a line of white space only, and at a line
		 * starting with "--" (a boundary, even one holding ':' like
		 * Pine's "=:" ones, which would otherwise read as a field)
		 */
		if (blank_line(l, ll)) {
			w->pos = next;
			if (anomaly(w, AN_NO_BLANK, depth) < 0)
				return -1;
			break;
		}
		if (ll >= 2 && l[0] == '-' && l[1] == '-')
			goto nonheader;
		if (l[0] == ' ' || l[0] == '\t') {
			if (!infield)
				goto nonheader;
			if (!full) {
				long a = buf_add_trunc(&w->field, l, ll);

				if (a < 0)
					return -1;
				if ((size_t)a < ll && anomaly(w, AN_HDR_TRUNC,
				    depth) < 0)
					return -1;
			}
		} else {
			if ((nl = field_name(l, ll, &colon)) == 0)
				goto nonheader;
			if (infield && !full && flush_field(w, depth, h) < 0)
				return -1;
			infield = 1;
			if (!full && ++nfields > lim->max_fields) {
				full = 1;
				if (anomaly(w, AN_HDR_TRUNC, depth) < 0)
					return -1;
			}
			if (!full) {
				long a;

				buf_reset(&w->name);
				buf_reset(&w->field);
				if (buf_add_trunc(&w->name, l, nl) < 0 ||
				    buf_reserve(&w->name, 0) < 0 ||
				    (a = buf_add_trunc(&w->field, l + colon,
				    ll - colon)) < 0 ||
				    buf_reserve(&w->field, 0) < 0)
					return -1;
				if (((size_t)a < ll - colon ||
				    w->name.len < nl) &&
				    anomaly(w, AN_HDR_TRUNC, depth) < 0)
					return -1;
			}
		}
		hbytes += next - w->pos;
		w->pos = next;
		if (!full && hbytes > lim->max_header) {
			if (infield && flush_field(w, depth, h) < 0)
				return -1;
			full = 1;
			if (anomaly(w, AN_HDR_TRUNC, depth) < 0)
				return -1;
		}
		continue;
nonheader:
		if (anomaly(w, AN_NO_BLANK, depth) < 0)
			return -1;
		break;
	}
	if (infield && !full && !w->found && flush_field(w, depth, h) < 0)
		return -1;
	return 0;
}

/* is the Content-Transfer-Encoding this token? */
static int
cte_is(const struct hdr *h, const char *tok)
{
	const unsigned char *v = h->cte.data;
	size_t n = h->cte.len, l = strlen(tok);

	if (!h->has_cte || v == NULL)
		return 0;
	while (n > 0 && (*v == ' ' || *v == '\t' || *v == '\r' || *v == '\n' ||
	    *v == '"'))
		v++, n--;
	if (n < l || strncasecmp((const char *)v, tok, l) != 0)
		return 0;
	return n == l || v[l] == ' ' || v[l] == '\t' || v[l] == '\r' ||
	    v[l] == '\n' || v[l] == '(' || v[l] == ';' || v[l] == '"';
}

/*
 * Room for a part's text in UTF-8: what n bytes can become in any
 * charset, but not more than four times the text a post may hand out
 * (HTML markup shrinks; the rest would be cut by max_decoded anyway).
 */
static size_t
conv_room(const struct mail_limits *lim, size_t n)
{
	size_t cap = lim->max_decoded < ((size_t)-1 - 64) / 4 ?
	    lim->max_decoded * 4 + 64 : (size_t)-1;

	if (n > (cap - 16) / CS_MAX_GROWTH)
		return cap;
	return n * CS_MAX_GROWTH + 16;
}

/* hand out one decoded text part, bounded by max_decoded */
static int
emit_text(struct walk *w, unsigned depth, enum mail_kind kind,
    const char *ctype, const char *charset, struct buf *t)
{
	struct mail_event ev;
	size_t room = w->lim->max_decoded - w->decoded, n = t->len;

	if (n > room) {
		n = room;
		while (n > 0 && (t->data[n] & 0xC0) == 0x80)
			n--;		/* do not cut a UTF-8 sequence */
		t->len = n;
		t->data[n] = 0;
		if (anomaly(w, AN_DECODED, depth) < 0)
			return -1;
	}
	w->decoded += n;
	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.depth = depth;
	ev.data = t->data;
	ev.len = n;
	ev.ctype = ctype;
	ev.charset = charset;
	return emit(w, &ev);
}

/* the uuencoding transfer encodings (x-uuencode and its aliases) */
static int
cte_uu(const struct hdr *h)
{
	return cte_is(h, "x-uuencode") || cte_is(h, "uuencode") ||
	    cte_is(h, "x-uue") || cte_is(h, "uue");
}

/* report an attachment: its type and file name (name: bytes from a
 * "begin" line, used when the header names none; NULL: none) */
static int
attachment(struct walk *w, unsigned depth, const char *ctype,
    const struct buf *ct, const struct hdr *h, const unsigned char *name,
    size_t namelen)
{
	struct mail_event ev;
	int r = 0;

	buf_reset(&w->tmp);
	if (h != NULL && h->has_cd)
		r = mime_param(h->cd.data, h->cd.len, "filename", 0, &w->tmp);
	if (r == 0 && ct != NULL)
		r = mime_param(ct->data, ct->len, "name", 0, &w->tmp);
	if (r < 0)
		return -1;
	if (r == 2 && anomaly(w, AN_HDR_TRUNC, depth) < 0)
		return -1;
	if (r == 0 && name != NULL) {
		if (charset_utf8_latin1(name, namelen, &w->tmp) < 0 ||
		    buf_reserve(&w->tmp, 0) < 0)
			return -1;
		r = 1;
	}
	memset(&ev, 0, sizeof(ev));
	ev.kind = MAIL_PART;
	ev.depth = depth;
	ev.ctype = ctype;
	ev.filename = r ? buf_str(&w->tmp) : "";
	return emit(w, &ev);
}

/*
 * Text with "begin 644 NAME" uuencoded blocks in it (attachments sent
 * the pre-MIME way, which mail readers show as attachments): each block
 * is reported as an attachment and cut out; the text around it is left
 * in w->uu, *d and *dn pointed at it.  0 or -1.
 */
static int
strip_uu(struct walk *w, unsigned depth, const unsigned char **d,
    size_t *dn)
{
	const unsigned char *p = *d;
	size_t n = *dn, at = 0;
	struct uu_block b;

	if (!uu_find(p, n, &b))
		return 0;
	buf_reset(&w->uu);
	w->uu.max = n + 16;
	do {
		b.begin += at;
		b.end += at;
		b.name += at;
		if (buf_add(&w->uu, p + at, b.begin - at) < 0 ||
		    buf_addc(&w->uu, '\n') < 0)
			return -1;
		if (attachment(w, depth, "application/octet-stream", NULL,
		    NULL, p + b.name, b.namelen) < 0)
			return -1;
		at = b.end;
	} while (at < n && uu_find(p + at, n - at, &b));
	if (buf_add(&w->uu, p + at, n - at) < 0)
		return -1;
	*d = w->uu.data;
	*dn = w->uu.len;
	return 0;
}

/* a leaf part: decode and emit text, or report the attachment; ct is
 * the Content-Type value its type came from (NULL: none) */
static int
leaf(struct walk *w, unsigned depth, const char *ctype, const struct buf *ct,
    const struct hdr *h, const unsigned char *body, size_t n)
{
	const unsigned char *d = body;
	struct buf *t;
	char cs[CHARSET_MAX + 1], meta[CHARSET_MAX + 1];
	const char *label;
	size_t dn = n, k;
	int r, flags = 0, html;
	int (*decode)(const unsigned char *, size_t, struct buf *) = NULL;
	enum anomaly an = AN_B64;

	if (strcmp(ctype, "text/plain") != 0 && strcmp(ctype,
	    "text/html") != 0 && strcmp(ctype, "text/enriched") != 0 &&
	    strcmp(ctype, "text/richtext") != 0) {
		struct uu_block b;

		/* a uuencoded attachment names its file on its begin line */
		if (cte_uu(h) && uu_find(body, n, &b))
			return attachment(w, depth, ctype, ct, h,
			    body + b.name, b.namelen);
		return attachment(w, depth, ctype, ct, h, NULL, 0);
	}
	if (w->decoded >= w->lim->max_decoded)
		return anomaly(w, AN_DECODED, depth);
	if (cte_is(h, "base64"))
		decode = b64_decode, an = AN_B64;
	else if (cte_is(h, "quoted-printable"))
		decode = qp_decode, an = AN_QP;
	else if (cte_uu(h))
		decode = uu_decode, an = AN_UU;
	if (decode != NULL) {
		buf_reset(&w->dec);
		w->dec.max = n + 16;
		if ((r = decode(body, n, &w->dec)) < 0)
			return -1;
		if ((r & 1) && anomaly(w, an, depth) < 0)
			return -1;
		if ((r & ~1) && anomaly(w, AN_DECODED, depth) < 0)
			return -1;
		d = w->dec.data;
		dn = w->dec.len;
	}
	if (d == NULL)
		d = (const unsigned char *)"";
	if (strcmp(ctype, "text/plain") == 0 && strip_uu(w, depth, &d,
	    &dn) < 0)
		return -1;
	cs[0] = 0;
	buf_reset(&w->tmp);
	if (ct != NULL && (r = mime_param(ct->data, ct->len, "charset", 1,
	    &w->tmp)) != 0) {
		if (r < 0)
			return -1;
		for (k = 0; k < w->tmp.len && k < CHARSET_MAX; k++) {
			int c = w->tmp.data[k];

			if (c >= 'A' && c <= 'Z')
				c = c - 'A' + 'a';
			cs[k] = (char)(c > ' ' && c < 127 ? c : '?');
		}
		cs[k] = 0;
	}
	label = cs;
	html = strcmp(ctype, "text/html") == 0;
	/* HTML with no label of its own (or us-ascii): its <meta charset> */
	if (html && (cs[0] == 0 || strcmp(cs, "us-ascii") == 0) &&
	    html_meta_charset(d, dn, meta, sizeof(meta)))
		label = meta;
	keep_hint(w, label, strlen(label));
	buf_reset(&w->conv);
	w->conv.max = conv_room(w->lim, dn);
	if (charset_convert_body(label, strlen(label), w->hint, d, dn,
	    &w->conv, &flags) < 0 || buf_reserve(&w->conv, 0) < 0)
		return -1;
	if ((flags & CS_RELABELLED) && anomaly(w, AN_CS_WRONG, depth) < 0)
		return -1;
	if ((flags & CS_UNKNOWN) && anomaly(w, AN_CS_UNKNOWN, depth) < 0)
		return -1;
	if ((flags & CS_INVALID) && anomaly(w, AN_CS_INVALID, depth) < 0)
		return -1;
	if ((flags & CS_CUT) && anomaly(w, AN_DECODED, depth) < 0)
		return -1;
	t = &w->conv;
	/* (a reader of its elements takes the HTML itself) */
	if (html && w->lim->html_source)
		html = 0;
	else if (html) {
		buf_reset(&w->html);
		w->html.max = w->conv.len * 2 + 64;
		/* (hidden text is at most what the part holds) */
		buf_reset(&w->hid);
		w->hid.max = w->conv.len + 64;
		if ((r = html_to_text(w->conv.data, w->conv.len, &w->html,
		    &w->hid)) < 0 || buf_reserve(&w->html, 0) < 0 ||
		    buf_reserve(&w->hid, 0) < 0)
			return -1;
		if ((r & HTML_CUT) && anomaly(w, AN_DECODED, depth) < 0)
			return -1;
		if ((r & HTML_HIDDEN) && anomaly(w, AN_HIDDEN, depth) < 0)
			return -1;
		t = &w->html;
	} else if (strcmp(ctype, "text/enriched") == 0 ||
	    strcmp(ctype, "text/richtext") == 0) {
		buf_reset(&w->html);
		w->html.max = w->conv.len + 64;
		if ((r = enriched_to_text(w->conv.data, w->conv.len,
		    ctype[5] == 'r', &w->html)) < 0 ||
		    buf_reserve(&w->html, 0) < 0)
			return -1;
		if (r == ENRICHED_CUT && anomaly(w, AN_DECODED, depth) < 0)
			return -1;
		t = &w->html;
	}
	if (emit_text(w, depth, MAIL_TEXT, ctype, cs, t) < 0)
		return -1;
	return html && w->hid.len > 0 ? emit_text(w, depth, MAIL_HIDDEN,
	    ctype, cs, &w->hid) : 0;
}

static int walk_entity(struct walk *, unsigned, int);

/*
 * The parts of a multipart entity at depth, up to its closing boundary.
 * Returns 0, -1, or 1 when no delimiter of the boundary comes before the
 * end or an enclosing boundary: nothing was emitted and the cursor is
 * back where it was (the caller reads the body another way).
 */
static int
walk_multipart(struct walk *w, unsigned depth, const struct buf *bb,
    int digest)
{
	struct bnd *b = &w->stack[w->nstack];
	size_t next, ll, start = w->pos;
	int lvl, close, r = 0, me;

	b->trunc = bb->len > w->lim->max_boundary;
	b->len = b->trunc ? w->lim->max_boundary : bb->len;
	if (b->trunc && anomaly(w, AN_BND_LONG, depth) < 0)
		return -1;
	if ((b->b = xmalloc(b->len + 1)) == NULL)
		return -1;
	memcpy(b->b, bb->data, b->len);
	me = (int)w->nstack++;
	for (;;) {			/* the preamble */
		if (w->pos >= w->end) {
			w->pos = start;
			r = 1;
			goto pop;
		}
		next = line_at(w, w->pos, &ll);
		lvl = bmatch(w, w->msg + w->pos, ll, &close);
		if (lvl < 0) {
			w->pos = next;
			continue;
		}
		if (lvl != me) {
			w->pos = start;
			r = 1;
			goto pop;
		}
		w->pos = next;
		if (close)
			goto epilogue;
		break;
	}
	for (;;) {
		if ((r = walk_entity(w, depth + 1, digest)) < 0 || w->stop)
			goto pop;
		if (w->pos >= w->end) {
			r = anomaly(w, AN_BND_MISSING, depth);
			goto pop;
		}
		next = line_at(w, w->pos, &ll);
		lvl = bmatch(w, w->msg + w->pos, ll, &close);
		if (lvl != me) {
			r = anomaly(w, AN_BND_MISSING, depth);
			goto pop;
		}
		w->pos = next;
		if (close)
			break;
	}
epilogue:
	w->nstack--;
	xfree(b->b);
	b->b = NULL;
	skip_to_boundary(w);
	return 0;
pop:
	w->nstack--;
	xfree(b->b);
	b->b = NULL;
	return r;
}

/* step over an mbox "From " line at the cursor (a forwarded message
 * saved from an mbox, or the post itself) */
static void
skip_mbox_from(struct walk *w)
{
	size_t ll;

	if (w->end - w->pos >= 5 && memcmp(w->msg + w->pos, "From ", 5) == 0)
		w->pos = line_at(w, w->pos, &ll);
}

/* the lower-case media type of a Content-Type value into ctype (at
 * least CTYPE_MAX bytes); a malformed one is text/plain and an anomaly */
static int
ct_type(struct walk *w, unsigned depth, const struct buf *ct, char *ctype)
{
	if (mime_type(ct->data, ct->len, ctype, CTYPE_MAX))
		return 0;
	memcpy(ctype, "text/plain", sizeof("text/plain"));
	return anomaly(w, AN_BAD_CTYPE, depth);
}

/*
 * Walk the body as the multipart ct declares: 0 done, -1 error, 1 when
 * ct gives no boundary or its boundary never delimits the body (the
 * cursor is then where it was).
 */
static int
try_multipart(struct walk *w, unsigned depth, const struct buf *ct,
    const char *ctype)
{
	int r;

	buf_reset(&w->tmp);
	if ((r = mime_param(ct->data, ct->len, "boundary", 1, &w->tmp)) < 0)
		return -1;
	if (r == 0 || w->tmp.len == 0)
		return 1;
	if (depth + 1 > w->max_depth) {
		skip_to_boundary(w);
		return anomaly(w, AN_DEPTH, depth);
	}
	{
		struct buf bb = w->tmp;

		/* the boundary is copied before w->tmp is reused */
		return walk_multipart(w, depth, &bb,
		    strcmp(ctype, "multipart/digest") == 0);
	}
}

static int walk_init(struct walk *, const unsigned char *, size_t,
    const struct mail_limits *, size_t);
static void walk_free(struct walk *);

/* exchange the scratch buffers of two walks of the same limits */
static void
scratch_swap(struct walk *a, struct walk *b)
{
	struct buf *const pa[] = { &a->name, &a->field, &a->hval, &a->dec,
	    &a->conv, &a->html, &a->hid, &a->tmp, &a->uu };
	struct buf *const pb[] = { &b->name, &b->field, &b->hval, &b->dec,
	    &b->conv, &b->html, &b->hid, &b->tmp, &b->uu };
	struct buf t;
	size_t i;

	for (i = 0; i < sizeof(pa) / sizeof(pa[0]); i++) {
		t = *pa[i];
		*pa[i] = *pb[i];
		*pb[i] = t;
	}
}

/*
 * A message/rfc822 sent in base64 or quoted-printable: decoded, then
 * walked as a message of its own at depth + 1 (no boundary outside it
 * reaches into it).  The bytes walked again this way are bounded per
 * post by max_scan (anomaly:scan-truncated past it).
 */
static int
walk_encoded_message(struct walk *w, unsigned depth, const struct hdr *h,
    const unsigned char *body, size_t n)
{
	struct buf dec;
	struct walk sub;
	size_t room = w->lim->max_scan > w->rewalked ?
	    w->lim->max_scan - w->rewalked : 0;
	int r, b64 = cte_is(h, "base64");

	buf_init(&dec, n + 16);
	r = b64 ? b64_decode(body, n, &dec) : qp_decode(body, n, &dec);
	if (r < 0 || buf_reserve(&dec, 0) < 0) {
		buf_free(&dec);
		return -1;
	}
	if ((r & 1) && anomaly(w, b64 ? AN_B64 : AN_QP, depth) < 0)
		goto fail;
	if (dec.len > room) {
		dec.len = room;
		if (anomaly(w, AN_SCAN, depth) < 0)
			goto fail;
	}
	w->rewalked += dec.len;
	if (walk_init(&sub, dec.data, dec.len, w->lim, dec.len) < 0) {
		walk_free(&sub);
		goto fail;
	}
	if (sub.own != NULL && anomaly(w, AN_CR, depth) < 0) {
		walk_free(&sub);
		goto fail;
	}
	sub.cb = w->cb;
	sub.ctx = w->ctx;
	sub.parts = w->parts;
	sub.decoded = w->decoded;
	sub.anom = w->anom;
	sub.rewalked = w->rewalked;
	memcpy(sub.hint, w->hint, sizeof(sub.hint));
	if ((sub.stack = xcalloc((size_t)sub.max_depth + 1,
	    sizeof(*sub.stack))) == NULL) {
		walk_free(&sub);
		goto fail;
	}
	/*
	 * The nested walk works in this walk's scratch buffers, idle while
	 * it runs (every use resets them first): one set per post, not one
	 * per level.  Each level kept its own, and a part's conversion may
	 * take 16 MiB: a post of 8 MB nested four deep on a list of
	 * max_scan_bytes = 32 MiB peaked at 96 MB.
	 */
	scratch_swap(w, &sub);
	r = walk_entity(&sub, depth + 1, 0);
	scratch_swap(w, &sub);
	w->parts = sub.parts;
	w->decoded = sub.decoded;
	w->anom = sub.anom;
	w->stop = sub.stop;
	w->rewalked = sub.rewalked;
	memcpy(w->hint, sub.hint, sizeof(w->hint));
	if (w->stop)
		w->pos = w->end;
	walk_free(&sub);
	buf_free(&dec);
	return r;
fail:
	buf_free(&dec);
	return -1;
}

/*
 * The body of an entity whose header h was just read.  With two
 * Content-Type fields readers differ on which counts, so the body
 * decides: a multipart one whose boundary delimits the body wins, else
 * the first that is not a multipart, else text/plain.  A multipart
 * whose boundary is missing or never delimits is read as text (and
 * says boundary-missing), as if it had no boundary at all.
 */
static int
walk_body(struct walk *w, unsigned depth, int digest, const struct hdr *h)
{
	char ctype[CTYPE_MAX], other[CTYPE_MAX];
	const struct buf *ct = NULL;
	size_t body;
	int r, multi, rfc822, encoded;

	if (h->nct > 0) {
		ct = &h->ct[0];
		if (ct_type(w, depth, ct, ctype) < 0)
			return -1;
	} else if (digest)
		memcpy(ctype, "message/rfc822", sizeof("message/rfc822"));
	else
		memcpy(ctype, "text/plain", sizeof("text/plain"));
	other[0] = 0;
	if (h->nct > 1 && ct_type(w, depth, &h->ct[1], other) < 0)
		return -1;

	multi = strncmp(ctype, "multipart/", 10) == 0;
	if (multi && (r = try_multipart(w, depth, ct, ctype)) <= 0)
		return r;
	if (strncmp(other, "multipart/", 10) == 0 &&
	    (r = try_multipart(w, depth, &h->ct[1], other)) <= 0)
		return r;
	if (multi) {
		if (anomaly(w, AN_BND_MISSING, depth) < 0)
			return -1;
		if (other[0] != 0 && strncmp(other, "multipart/", 10) != 0) {
			ct = &h->ct[1];
			memcpy(ctype, other, sizeof(other));
		} else
			memcpy(ctype, "text/plain", sizeof("text/plain"));
	}
	rfc822 = strcmp(ctype, "message/rfc822") == 0 ||
	    strcmp(ctype, "message/global") == 0;
	encoded = cte_is(h, "base64") || cte_is(h, "quoted-printable");
	if (rfc822 && depth + 1 > w->max_depth) {
		skip_to_boundary(w);
		return anomaly(w, AN_DEPTH, depth);
	}
	if (rfc822 && !encoded) {
		skip_mbox_from(w);
		return walk_entity(w, depth + 1, 0);
	}
	body = w->pos;
	skip_to_boundary(w);
	{
		size_t e = w->pos;

		if (w->pos < w->end && e > body) {
			/* the line break before a boundary belongs to it */
			if (w->msg[e - 1] == '\n')
				e--;
			if (e > body && w->msg[e - 1] == '\r')
				e--;
		}
		if (rfc822)
			return walk_encoded_message(w, depth, h, w->msg + body,
			    e - body);
		return leaf(w, depth, ctype, ct, h, w->msg + body, e - body);
	}
}

/* one entity (header and body) at the cursor; stops at an open boundary
 * line or the end.  digest: the default type is message/rfc822 */
static int
walk_entity(struct walk *w, unsigned depth, int digest)
{
	struct hdr h;
	int r;

	if (depth > 0 && ++w->parts > w->lim->max_parts) {
		w->stop = 1;
		w->pos = w->end;
		return anomaly(w, AN_PARTS, depth);
	}
	r = read_header(w, depth, &h);
	if (r == 0)
		r = walk_body(w, depth, digest, &h);
	hdr_free(&h);
	return r;
}

/*
 * 1 when the post ends its lines with a bare CR (old Macintosh mailers,
 * some gateways): no LF in its first 4 KiB, and a CR there
 */
static int
bare_cr(const unsigned char *msg, size_t n)
{
	if (n > 4096)
		n = 4096;
	return memchr(msg, '\n', n) == NULL && memchr(msg, '\r', n) != NULL;
}

/*
 * Set up a walk over msg; 0 or -1.  A post whose lines end in a bare CR
 * is walked as a copy with each bare CR made a LF (the same length, so
 * offsets hold), at most max_scan bytes of it.
 */
static int
walk_init(struct walk *w, const unsigned char *msg, size_t len,
    const struct mail_limits *lim, size_t scan)
{
	memset(w, 0, sizeof(*w));
	w->msg = msg ? msg : (const unsigned char *)"";
	w->end = len < scan ? len : scan;
	if (bare_cr(w->msg, w->end)) {
		size_t n = w->end < lim->max_scan ? w->end : lim->max_scan, i;

		if ((w->own = xmalloc(n + 1)) == NULL)
			return -1;
		memcpy(w->own, w->msg, n);
		for (i = 0; i < n; i++)
			if (w->own[i] == '\r' && (i + 1 == n ||
			    w->own[i + 1] != '\n'))
				w->own[i] = '\n';
		w->own[n] = 0;
		w->msg = w->own;
		w->end = n;
	}
	w->lim = lim;
	w->max_depth = lim->max_depth < MAIL_DEPTH_HARD ? lim->max_depth :
	    MAIL_DEPTH_HARD;
	buf_init(&w->name, lim->max_field);
	buf_init(&w->field, lim->max_field);
	buf_init(&w->hval, 16);
	buf_init(&w->dec, 16);
	buf_init(&w->conv, 16);
	buf_init(&w->html, 16);
	buf_init(&w->hid, 16);
	buf_init(&w->tmp, lim->max_field + 16);
	buf_init(&w->uu, 16);
	skip_mbox_from(w);
	return 0;
}

/* release a walk's memory */
static void
walk_free(struct walk *w)
{
	unsigned i;

	if (w->stack) {
		for (i = 0; i <= w->max_depth; i++)
			xfree(w->stack[i].b);
		xfree(w->stack);
	}
	buf_free(&w->name);
	buf_free(&w->field);
	buf_free(&w->hval);
	buf_free(&w->dec);
	buf_free(&w->conv);
	buf_free(&w->html);
	buf_free(&w->hid);
	buf_free(&w->tmp);
	buf_free(&w->uu);
	xfree(w->own);
	w->own = NULL;
}

/* walk a post, events to cb (contract in mail.h) */
int
mail_walk(const unsigned char *msg, size_t len,
    const struct mail_limits *lim, mail_cb cb, void *ctx)
{
	struct mail_limits def;
	struct walk w;
	int r;

	if (lim == NULL) {
		mail_limits_default(&def);
		lim = &def;
	}
	charset_budget(CS_OPEN_BUDGET);
	if (walk_init(&w, msg, len, lim, lim->max_scan) < 0 ||
	    (w.stack = xcalloc((size_t)w.max_depth + 1,
	    sizeof(*w.stack))) == NULL) {
		walk_free(&w);
		charset_budget(0);
		return -1;
	}
	w.cb = cb;
	w.ctx = ctx;
	r = w.own != NULL ? anomaly(&w, AN_CR, 0) : 0;
	if (r == 0)
		r = walk_entity(&w, 0, 0);
	if (r == 0 && len > lim->max_scan)
		r = anomaly(&w, AN_SCAN, 0);
	walk_free(&w);
	charset_budget(0);
	return r;
}

/* the first top-level field called name, decoded */
int
mail_header(const unsigned char *msg, size_t len, const char *name,
    struct buf *out)
{
	struct mail_limits lim;
	struct walk w;
	struct hdr h;
	int r;

	mail_limits_default(&lim);
	lim.max_header = (size_t)-1;	/* linear anyway; find late fields */
	lim.max_fields = (size_t)-1;
	buf_reset(out);
	if (walk_init(&w, msg, len, &lim, len) < 0) {
		walk_free(&w);
		return -1;
	}
	w.want = name;
	w.wantout = out;
	r = read_header(&w, 0, &h);
	if (r == 0)
		r = w.found;
	hdr_free(&h);
	walk_free(&w);
	return r;
}

/* where the top-level body starts */
size_t
mail_body_offset(const unsigned char *msg, size_t len)
{
	struct mail_limits lim;
	struct walk w;
	struct hdr h;
	size_t off;

	mail_limits_default(&lim);
	if (walk_init(&w, msg, len, &lim, len) < 0) {
		walk_free(&w);
		return len;
	}
	w.want = ":";		/* no field name holds a ':': none decoded */
	w.wantout = NULL;
	off = read_header(&w, 0, &h) < 0 ? len : w.pos;
	hdr_free(&h);
	walk_free(&w);
	return off;
}

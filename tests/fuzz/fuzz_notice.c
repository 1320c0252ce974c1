/*
 * fuzz_notice.c - libFuzzer target for the notices of moderation by
 * mail (gate/moderate/notice.c): what a moderator reads of a hostile
 * post
 *
 * An input is five NUL-separated fields, the sender, Subject and
 * envelope sender of a held post, the note of why it was held and its
 * clue lines, then the post itself.  A hold notice, a digest and an
 * answer are built from them; everything listgate writes (not the
 * attached post, which goes whole) must be a well-formed message that
 * a mail program displays as it is:
 *   - the header block: printable ASCII lines of at most 998 bytes,
 *     each a "Name: " field or a continuation; its Subject, its encoded
 *     words decoded, holds no character the sanitizer masks;
 *   - the quoted-printable text: lines of at most 76 characters, none
 *     "." alone or starting "From "; decoded, valid UTF-8 with no
 *     masked character but LF and TAB (the sanitizer's rule);
 *   - the attachment's boundary occurs nowhere in the post.
 * Build as tests/fuzz/run.sh does.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gate/moderate/notice.h"
#include "gate/util/buf.h"
#include "gate/util/sanitize.h"
#include "gate/util/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NFIELDS	5

/* the decoded text must be what the sanitizer lets through */
static void
check_text(const unsigned char *t, size_t n, int multiline)
{
	size_t i = 0, k;
	uint32_t cp;

	while (i < n) {
		if ((k = utf8_decode(t + i, n - i, &cp)) == 0)
			__builtin_trap();	/* invalid UTF-8 */
		if (sanitize_masked(cp) &&
		    !(multiline && (cp == '\n' || cp == '\t')))
			__builtin_trap();	/* a masked character */
		i += k;
	}
}

static int
b64val(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* the Subject's value (s, n bytes, folds included), encoded words
 * decoded, checked as one line of text */
static void
check_subject(const char *s, size_t n)
{
	struct buf d = BUF_INIT(8192);
	const char *p = s, *end = s + n, *q;
	unsigned acc;
	int bits, v;

	while (p < end) {
		if (end - p >= 10 && memcmp(p, "=?utf-8?b?", 10) == 0) {
			p += 10;
			if ((q = memchr(p, '?', (size_t)(end - p))) == NULL ||
			    q + 1 >= end || q[1] != '=')
				__builtin_trap();	/* an unended word */
			for (acc = 0, bits = 0; p < q; p++) {
				if (*p == '=')
					break;
				if ((v = b64val((unsigned char)*p)) < 0)
					__builtin_trap();
				acc = acc << 6 | (unsigned)v;
				bits += 6;
				if (bits >= 8) {
					bits -= 8;
					if (buf_addc(&d, (char)(acc >> bits &
					    0xff)) < 0)
						abort();
				}
			}
			p = q + 2;
			/* a fold between words is not text */
			if (end - p >= 2 && p[0] == '\n' && p[1] == ' ')
				p += 2;
		} else {
			if (*p == '\n')
				__builtin_trap();	/* a bare fold */
			if (buf_addc(&d, *p++) < 0)
				abort();
		}
	}
	check_text(d.data, d.len, 0);
	buf_free(&d);
}

/* the header block of msg (n bytes): its length with the blank line */
static size_t
check_header(const char *msg, size_t n)
{
	const char *p = msg, *end = msg + n, *nl, *c, *subj = NULL;
	size_t len;

	for (;;) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			__builtin_trap();	/* no end of the header */
		len = (size_t)(nl - p);
		if (len == 0)
			break;
		if (len > 998)
			__builtin_trap();
		for (c = p; c < nl; c++)
			if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
				__builtin_trap();
		if (*p != ' ') {
			for (c = p; c < nl && *c != ':'; c++)
				if (!((*c >= 'A' && *c <= 'Z') ||
				    (*c >= 'a' && *c <= 'z') || *c == '-'))
					__builtin_trap();
			if (c == p || c + 1 >= nl || c[1] != ' ')
				__builtin_trap();	/* not "Name: " */
			if (c - p == 7 && memcmp(p, "Subject", 7) == 0) {
				subj = c + 2;
			} else if (subj != NULL) {
				check_subject(subj, (size_t)(p - 1 - subj));
				subj = NULL;
			}
		}
		p = nl + 1;
	}
	if (subj != NULL)
		check_subject(subj, (size_t)(p - 1 - subj));
	return (size_t)(p + 1 - msg);
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* quoted-printable lines (t, n bytes): their form, then the text */
static void
check_qp(const char *t, size_t n)
{
	struct buf d = BUF_INIT(8u * 1024 * 1024);
	const char *p = t, *end = t + n, *nl, *c;
	size_t len;
	int hi, lo;

	while (p < end) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		len = (size_t)(nl - p);
		if (len > 76 || (len == 1 && p[0] == '.') ||
		    (len >= 5 && memcmp(p, "From ", 5) == 0))
			__builtin_trap();
		for (c = p; c < nl; c++) {
			if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
				if (*c != '\t')
					__builtin_trap();
			if (*c != '=') {
				if (buf_addc(&d, *c) < 0)
					abort();
				continue;
			}
			if (c + 1 == nl)
				break;		/* a soft line break */
			if (nl - c < 3 || (hi = hexval(c[1])) < 0 ||
			    (lo = hexval(c[2])) < 0)
				__builtin_trap();
			if (buf_addc(&d, (char)(hi << 4 | lo)) < 0)
				abort();
			c += 2;
		}
		if (nl < end && (c == nl) && buf_addc(&d, '\n') < 0)
			abort();
		p = nl < end ? nl + 1 : end;
	}
	check_text(d.data, d.len, 1);
	buf_free(&d);
}

/* a whole message: header, then quoted-printable text up to stop (or
 * its end) */
static void
check_message(const struct buf *m, const char *stop)
{
	const char *msg = (const char *)m->data, *e;
	size_t h = check_header(msg, m->len);

	e = stop != NULL ? stop : msg + m->len;
	if (e < msg + h)
		__builtin_trap();
	check_qp(msg + h, (size_t)(e - msg - h));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char field[NFIELDS][2048], bnd[128], *b, *q;
	const uint8_t *p = data, *end = data + size, *z;
	struct notice_post post[2];
	struct notice_links ln[2];
	/* every message is sealed: without a key nothing is written */
	static const struct cookie_key key = {
	    "the fuzzer's key, 32 bytes long", 32 };
	struct notice_to to = { "dev-moderation@lists.example.org",
	    "mod@example.org", 1700000000, &key };
	struct buf out = BUF_INIT(64u * 1024 * 1024);
	struct buf clean = BUF_INIT(4096);
	const char *part;
	size_t i, n;

	for (i = 0; i < NFIELDS; i++) {
		z = memchr(p, 0, (size_t)(end - p));
		n = (size_t)((z != NULL ? z : end) - p);
		if (n >= sizeof(field[i]))
			n = sizeof(field[i]) - 1;
		memcpy(field[i], p, n);
		field[i][n] = 0;
		p = z != NULL ? z + 1 : end;
	}
	memset(post, 0, sizeof(post));
	post[0].list = "dev";
	post[0].id = 812;
	post[0].from = field[0];
	post[0].subject = field[1];
	post[0].env_sender = field[2];
	post[0].note = field[3];
	post[0].clues = field[4];
	post[0].score = 0.987654;
	post[0].verdict = "spam";
	post[0].raw = p;
	post[0].raw_len = (size_t)(end - p);
	post[0].arrived = 1700000000;
	post[1] = post[0];
	post[1].raw = NULL;
	post[1].size = post[0].raw_len;
	post[1].id = 813;
	memset(ln, 0, sizeof(ln));
	strcpy(ln[0].approve, "dev-moderation+approve-812-x@lists.example.org");
	strcpy(ln[0].reject, "dev-moderation+reject-812-x@lists.example.org");
	strcpy(ln[0].discard, "dev-moderation+discard-812-x@lists.example.org");
	ln[0].expiry = 1700600000;
	ln[1] = ln[0];

	/* the hold notice, then a reminder: up to the attachment */
	for (i = 0; i < 2; i++) {
		buf_reset(&out);
		if (notice_hold(&post[0], &ln[0], &to, (int)i, &out) < 0)
			continue;	/* out of room: nothing to check */
		if (buf_addc(&out, 0) < 0)
			abort();
		out.len--;
		if ((b = strstr((const char *)out.data, "\nContent-Type: "
		    "multipart/mixed; boundary=\"")) == NULL)
			__builtin_trap();
		b += strlen("\nContent-Type: multipart/mixed; boundary=\"");
		if ((q = strchr(b, '"')) == NULL || (size_t)(q - b) >=
		    sizeof(bnd) - 3)
			__builtin_trap();
		bnd[0] = '\n';
		bnd[1] = '-';
		bnd[2] = '-';
		memcpy(bnd + 3, b, (size_t)(q - b));
		bnd[3 + (q - b)] = 0;
		/* the boundary is not in the post */
		if (post[0].raw_len > 0 && memmem(post[0].raw, post[0].raw_len,
		    bnd + 1, strlen(bnd + 1)) != NULL)
			__builtin_trap();
		/* the text part: after the first part's header */
		part = strstr((const char *)out.data,
		    "\nContent-Transfer-Encoding: quoted-printable\n\n");
		if (part == NULL)
			__builtin_trap();
		check_header((const char *)out.data, out.len);
		part += strlen("\nContent-Transfer-Encoding: quoted-printable"
		    "\n\n");
		if ((q = strstr(part, bnd)) == NULL)
			__builtin_trap();	/* the attachment's part */
		check_qp(part, (size_t)(q - part));
	}

	/* a digest of the two */
	buf_reset(&out);
	if (notice_digest("dev", post, ln, 2, 0, &to, &out) == 0)
		check_message(&out, NULL);

	/* an answer quoting the post's Message-ID and its sender, cleaned
	 * as the reply code does */
	buf_reset(&out);
	if (notice_clean(&clean, field[0], strlen(field[0]), 200) == 0 &&
	    buf_addc(&clean, 0) == 0 && notice_answer("dev", "approved",
	    field[2], (const char *)clean.data, &to, &out) == 0)
		check_message(&out, NULL);
	buf_free(&clean);
	buf_free(&out);
	return 0;
}

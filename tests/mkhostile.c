/*
 * mkhostile.c - write hostile posts for tests/hostile_posts.sh
 *
 *   mkhostile DIR [NRANDOM [SEED]]
 *
 * Writes into DIR (which must exist) a set of named worst cases (an
 * empty post, NUL bytes only, a 10 MB header line, 100 000 nested
 * multipart levels, ...) and NRANDOM (default 300) posts made by a
 * fixed-seed generator: pure random bytes, and random mixtures of mail
 * syntax (MIME headers, boundaries, encoded words, base64, HTML, NULs,
 * CR and LF in every combination).  The generator is its own xorshift64*
 * so the same seed gives the same files on every platform.  A test
 * tool: exits 1 with a message when a file cannot be written.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

/* the next pseudo-random number (xorshift64*) */
static uint64_t
rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

/* a number in [0, n) */
static size_t
rnd(size_t n)
{
	return n ? (size_t)(rng() % n) : 0;
}

static const char *dir;

/* open DIR/NAME for writing, or exit */
static FILE *
create(const char *name)
{
	char path[4096];
	FILE *f;
	int n;

	n = snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		fprintf(stderr, "mkhostile: path too long\n");
		exit(1);
	}
	if ((f = fopen(path, "wb")) == NULL) {
		fprintf(stderr, "mkhostile: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return f;
}

/* close a file, or exit */
static void
done(FILE *f)
{
	if (ferror(f) || fclose(f) != 0) {
		fprintf(stderr, "mkhostile: write error\n");
		exit(1);
	}
}

/* n copies of byte c */
static void
fill(FILE *f, int c, size_t n)
{
	while (n-- > 0)
		putc(c, f);
}

/* n copies of string s */
static void
repeat(FILE *f, const char *s, size_t n)
{
	while (n-- > 0)
		fputs(s, f);
}

/* the named worst cases */
static void
named(void)
{
	FILE *f;
	size_t i;

	done(create("h01-empty.eml"));

	f = create("h02-nul-only.eml");
	fill(f, 0, 100000);
	done(f);

	f = create("h03-header-10mb.eml");
	fputs("From: a@example.org\nSubject: ", f);
	fill(f, 'x', 10u * 1024 * 1024);
	fputs("\n\nbody\n", f);
	done(f);

	f = create("h04-header-10mb-no-newline.eml");
	fputs("X-Long: ", f);
	for (i = 0; i < 10u * 1024 * 1024; i++)
		putc('a' + (int)(i % 26), f);
	done(f);

	f = create("h05-multipart-100k-deep.eml");
	fputs("From: a@example.org\nMIME-Version: 1.0\n", f);
	for (i = 0; i < 100000; i++)
		fprintf(f, "Content-Type: multipart/mixed; boundary=b%zu\n\n"
		    "--b%zu\n", i, i);
	fputs("Content-Type: text/plain\n\ndeepest\n", f);
	for (i = 100000; i-- > 0;)
		fprintf(f, "--b%zu--\n", i);
	done(f);

	f = create("h06-rfc822-100k-deep.eml");
	for (i = 0; i < 100000; i++)
		fputs("Content-Type: message/rfc822\n\n", f);
	fputs("Subject: inner\n\ninnermost\n", f);
	done(f);

	f = create("h07-million-headers.eml");
	repeat(f, "X-H: v\n", 1000000);
	fputs("\nbody\n", f);
	done(f);

	f = create("h08-boundary-100k.eml");
	fputs("Content-Type: multipart/mixed; boundary=\"", f);
	fill(f, 'B', 100000);
	fputs("\"\n\n--", f);
	fill(f, 'B', 100000);
	fputs("\nContent-Type: text/plain\n\npart\n--", f);
	fill(f, 'B', 100000);
	fputs("--\n", f);
	done(f);

	f = create("h09-base64-10mb-one-line.eml");
	fputs("Content-Type: text/plain\nContent-Transfer-Encoding: base64"
	    "\n\n", f);
	repeat(f, "QUJD", 10u * 1024 * 1024 / 4);
	putc('\n', f);
	done(f);

	f = create("h10-crlf-only.eml");
	repeat(f, "\r\n", 500000);
	done(f);

	f = create("h11-cr-only.eml");
	fill(f, '\r', 1000000);
	done(f);

	f = create("h12-encoded-words-100k.eml");
	fputs("Subject: ", f);
	repeat(f, "=?utf-8?B?w6k=?= =?iso-8859-1?Q?=E9?= ", 50000);
	fputs("\n\nbody\n", f);
	done(f);

	f = create("h13-html-hostile.eml");
	fputs("Content-Type: text/html; charset=utf-8\n\n", f);
	repeat(f, "<a href=\"", 50000);
	repeat(f, "&#x10FFFF;&#99999999999;&#xD800;&amp&;&#;&#x;<!--", 20000);
	repeat(f, "<script><style><![CDATA[", 20000);
	done(f);

	f = create("h14-qp-soft-breaks.eml");
	fputs("Content-Transfer-Encoding: quoted-printable\n\n", f);
	repeat(f, "=\n", 1000000);
	repeat(f, "=", 100000);
	done(f);

	f = create("h15-rfc2231-10k-segments.eml");
	fputs("Content-Type: text/plain", f);
	for (i = 0; i < 10000; i++)
		fprintf(f, ";\n title*%zu*=%%E9%%", i * 7 % 10000);
	fputs("\n\nbody\n", f);
	done(f);

	f = create("h16-folded-header-1m-lines.eml");
	fputs("Subject: start", f);
	repeat(f, "\n\t", 1000000);
	fputs("\n\nbody\n", f);
	done(f);

	f = create("h17-high-bytes-charsets.eml");
	fputs("Content-Type: text/plain; charset=utf-16\n\n", f);
	for (i = 0; i < 1000000; i++)
		putc(0x80 + (int)(i % 128), f);
	done(f);
}

static const char *const pieces[] = {
	"From: ", "To: ", "Subject: ", "Message-ID: <", ">", "Received: from ",
	"Content-Type: ", "multipart/mixed", "multipart/alternative",
	"message/rfc822", "text/html", "text/plain", "application/x-y",
	"; boundary=", "; boundary=\"", "\"", "; charset=", "utf-8",
	"iso-8859-1", "koi8-r", "utf-16", "x-unknown", "gb2312",
	"Content-Transfer-Encoding: ", "base64", "quoted-printable", "8bit",
	"Content-Disposition: attachment; filename*0*=utf-8''%E9", "*1=",
	"--", "--b", "--b--", "b", "\n", "\r\n", "\r", "\n\n", "\n\t", " ",
	"=?utf-8?B?", "=?iso-8859-1?Q?", "?=", "=E9", "=\n", "=", "=3D",
	"QUJD", "w6k=", "====", "<a href=\"http://", "<", ">", "&#", "&amp;",
	"<!--", "-->", "<script>", "http://x.example/", "user@example.org",
	"\xc3\xa9", "\xe2\x82", "\xff\xfe", "\xf4\x90\x80\x80", "%", "\\",
	"From ", ">From ", "MIME-Version: 1.0",
};

/* a post of random bytes, or a random mixture of mail syntax */
static void
random_post(FILE *f, size_t k)
{
	size_t i, n;

	if (k % 3 == 0) {
		n = rnd(8192);
		for (i = 0; i < n; i++)
			putc((int)rnd(256), f);
		return;
	}
	n = 1 + rnd(600);
	for (i = 0; i < n; i++) {
		switch (rnd(16)) {
		case 0:
			putc((int)rnd(256), f);
			break;
		case 1:
			fill(f, (int)rnd(256), rnd(300));
			break;
		case 2:
			fprintf(f, "%zu", (size_t)rnd(100000));
			break;
		default:
			fputs(pieces[rnd(sizeof(pieces) / sizeof(pieces[0]))],
			    f);
			break;
		}
	}
}

int
main(int argc, char **argv)
{
	char name[64];
	unsigned long nrandom = 300, k;
	char *end;
	FILE *f;

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: mkhostile DIR [NRANDOM [SEED]]\n");
		return 2;
	}
	dir = argv[1];
	if (argc > 2) {
		errno = 0;
		nrandom = strtoul(argv[2], &end, 10);
		if (errno || *end || end == argv[2] || nrandom > 100000) {
			fprintf(stderr, "mkhostile: bad NRANDOM\n");
			return 2;
		}
	}
	if (argc > 3) {
		errno = 0;
		rng_state = strtoull(argv[3], &end, 0);
		if (errno || *end || end == argv[3] || rng_state == 0) {
			fprintf(stderr, "mkhostile: bad SEED (nonzero)\n");
			return 2;
		}
	}
	named();
	for (k = 0; k < nrandom; k++) {
		snprintf(name, sizeof(name), "r%04lu.eml", k);
		f = create(name);
		random_post(f, k);
		done(f);
	}
	return 0;
}

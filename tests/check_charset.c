/*
 * check_charset.c - every charset iconv knows, every byte, in the three
 * places a post names a charset: a text part's body, an RFC 2047 encoded
 * word and an RFC 2231 file name
 *
 * No input may make the walk fail (issue 8: glibc's TSCII turns 0x82
 * into 12 bytes of UTF-8, which once overflowed a buffer sized at four
 * times the input and made the post fail as "out of memory").  For each
 * charset that `iconv -l` lists and each byte 0x00-0xff, three posts
 * are walked and tokenized; each must succeed, hand out valid UTF-8
 * only, and (for the body) cut nothing: CS_MAX_GROWTH is checked to be
 * the real worst case.
 */
#include "config.h"

#include <check.h>
#include <dlfcn.h>
#include <iconv.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gate/mail/charset.h"
#include "gate/mail/mail.h"
#include "gate/tok.h"
#include "gate/util/buf.h"
#include "gate/util/utf8.h"

/* copies of the byte in a body, a word and a file name: enough to pass
 * the old 4x buffer (64 x 12 > 64 x 4 + 16) */
#define REPEAT	64

static char **names;
static size_t nnames;

/* the iconv handles open now: glibc's iconv_open and iconv_close
 * wrapped (the program's own definitions are what the library calls) */
static long handles_open;

iconv_t
iconv_open(const char *to, const char *from)
{
	static iconv_t (*real)(const char *, const char *);
	iconv_t cd;

	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "iconv_open");
	cd = real(to, from);
	if (cd != (iconv_t)-1)
		__atomic_add_fetch(&handles_open, 1, __ATOMIC_RELAXED);
	return cd;
}

int
iconv_close(iconv_t cd)
{
	static int (*real)(iconv_t);

	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "iconv_close");
	__atomic_sub_fetch(&handles_open, 1, __ATOMIC_RELAXED);
	return real(cd);
}

/* the charsets `iconv -l` lists ("A, B//, C//" lines), into names */
static void
load_names(void)
{
	struct buf out = BUF_INIT(4u << 20);
	char chunk[4096], *p, *tok, *save = NULL;
	int fd[2], status;
	ssize_t r;
	pid_t pid;

	ck_assert_int_eq(pipe(fd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execlp("iconv", "iconv", "-l", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	while ((r = read(fd[0], chunk, sizeof(chunk))) > 0)
		ck_assert_int_eq(buf_add(&out, chunk, (size_t)r), 0);
	close(fd[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "iconv -l failed (status %d)", status);
	ck_assert_int_eq(buf_addc(&out, 0), 0);
	names = calloc(out.len, sizeof(*names));
	ck_assert_ptr_nonnull(names);
	for (tok = strtok_r((char *)out.data, ", \n", &save); tok != NULL;
	    tok = strtok_r(NULL, ", \n", &save)) {
		size_t l = strlen(tok);

		while (l > 0 && tok[l - 1] == '/')
			tok[--l] = 0;
		if (l == 0)
			continue;
		p = strdup(tok);
		ck_assert_ptr_nonnull(p);
		names[nnames++] = p;
	}
	buf_free(&out);
	/* glibc lists about 1,200; a handful would mean a broken iconv */
	ck_assert_msg(nnames > 100, "iconv -l listed only %zu charsets",
	    nnames);
}

struct seen {
	int bad_utf8;
	size_t text;	/* bytes of MAIL_TEXT */
};

/* 1 when all n bytes are valid UTF-8 */
static int
valid_utf8(const unsigned char *p, size_t n)
{
	size_t i = 0, k;

	while (i < n) {
		if ((k = utf8_len(p + i, n - i)) == 0)
			return 0;
		i += k;
	}
	return 1;
}

static int
check_cb(const struct mail_event *ev, void *ctx)
{
	struct seen *s = ctx;

	if (ev->data[ev->len] != 0)
		s->bad_utf8 = 1;
	if ((ev->kind == MAIL_HEADER || ev->kind == MAIL_TEXT) &&
	    !valid_utf8(ev->data, ev->len))
		s->bad_utf8 = 1;
	if (ev->kind == MAIL_PART && !valid_utf8((const unsigned char *)
	    ev->filename, strlen(ev->filename)))
		s->bad_utf8 = 1;
	if (ev->kind == MAIL_TEXT)
		s->text += ev->len;
	return 0;
}

static const char b64a[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* the three posts for charset cs and byte c, into post[0..2] */
static void
make_posts(const char *cs, int c, struct buf post[3])
{
	char tmp[256];
	int i;

	for (i = 0; i < 3; i++)
		buf_reset(&post[i]);
	/* a text/plain body of the byte */
	snprintf(tmp, sizeof(tmp), "Subject: body\nContent-Type: text/plain;"
	    " charset=\"%s\"\n\n", cs);
	buf_adds(&post[0], tmp);
	for (i = 0; i < REPEAT; i++)
		buf_addc(&post[0], c);
	buf_adds(&post[0], "\n");
	/* an encoded word (B: any byte) */
	snprintf(tmp, sizeof(tmp), "Subject: =?%s?B?", cs);
	buf_adds(&post[1], tmp);
	for (i = 0; i < REPEAT / 3; i++) {
		unsigned long v = (unsigned long)c << 16 | (unsigned long)c <<
		    8 | (unsigned long)c;

		buf_addc(&post[1], b64a[v >> 18 & 63]);
		buf_addc(&post[1], b64a[v >> 12 & 63]);
		buf_addc(&post[1], b64a[v >> 6 & 63]);
		buf_addc(&post[1], b64a[v & 63]);
	}
	buf_adds(&post[1], "?=\n\nword\n");
	/* an RFC 2231 file name of an attachment */
	snprintf(tmp, sizeof(tmp), "Subject: name\nContent-Type: "
	    "application/octet-stream\nContent-Disposition: attachment;"
	    " filename*=%s''", cs);
	buf_adds(&post[2], tmp);
	for (i = 0; i < REPEAT; i++) {
		snprintf(tmp, sizeof(tmp), "%%%02X", c);
		buf_adds(&post[2], tmp);
	}
	buf_adds(&post[2], "\n\nname\n");
}

START_TEST(every_charset_every_byte)
{
	static const char *const place[3] = { "body", "encoded word",
	    "RFC 2231 file name" };
	struct buf post[3] = { BUF_INIT(64u << 10), BUF_INIT(64u << 10),
	    BUF_INIT(64u << 10) };
	struct tok_opts o;
	struct toklist *tl;
	size_t i, cases = 0;
	int c, k;

	load_names();
	tok_opts_default(&o);
	tl = toklist_new(o.max_tokens);
	ck_assert_ptr_nonnull(tl);
	for (i = 0; i < nnames; i++) {
		for (c = 0; c < 256; c++) {
			make_posts(names[i], c, post);
			for (k = 0; k < 3; k++) {
				struct seen s = { 0, 0 };

				ck_assert_msg(mail_walk(post[k].data,
				    post[k].len, NULL, check_cb, &s) == 0,
				    "%s, byte 0x%02x in a %s: the walk failed",
				    names[i], c, place[k]);
				ck_assert_msg(!s.bad_utf8, "%s, byte 0x%02x "
				    "in a %s: an event is not UTF-8",
				    names[i], c, place[k]);
				ck_assert_msg(tok_post(post[k].data,
				    post[k].len, &o, tl) == 0,
				    "%s, byte 0x%02x in a %s: tok_post failed",
				    names[i], c, place[k]);
				cases++;
			}
		}
	}
	toklist_free(tl);
	for (k = 0; k < 3; k++)
		buf_free(&post[k]);
	ck_assert_uint_eq(cases, nnames * 256 * 3);
	fprintf(stderr, "# %zu charsets x 256 bytes x 3 places: %zu posts\n",
	    nnames, cases);
}
END_TEST

/* what one byte can become: never more than CS_MAX_GROWTH bytes each,
 * so a buffer sized by it never cuts real text */
START_TEST(growth_is_bounded)
{
	unsigned char in[REPEAT];
	struct buf out = BUF_INIT(REPEAT * CS_MAX_GROWTH + 16);
	size_t i, most = 0;
	const char *worst = "";
	int c, flags;

	if (names == NULL)
		load_names();
	for (i = 0; i < nnames; i++)
		for (c = 0; c < 256; c++) {
			memset(in, c, sizeof(in));
			buf_reset(&out);
			flags = 0;
			ck_assert_int_eq(charset_convert(names[i],
			    strlen(names[i]), in, sizeof(in), &out, &flags), 0);
			ck_assert_msg(!(flags & CS_CUT), "%s: byte 0x%02x "
			    "grows past CS_MAX_GROWTH", names[i], c);
			if (out.len > most) {
				most = out.len;
				worst = names[i];
			}
		}
	/* TSCII 0x82: four code points (a conjunct), 12 bytes */
	ck_assert_uint_eq(most, REPEAT * CS_MAX_GROWTH);
	fprintf(stderr, "# most UTF-8 from %d equal bytes: %zu (%s)\n",
	    REPEAT, most, worst);
	buf_free(&out);
}
END_TEST

/* the case the review found, whole: nothing is cut, no anomaly */
START_TEST(tscii_body_whole)
{
	struct buf post[3] = { BUF_INIT(64u << 10), BUF_INIT(64u << 10),
	    BUF_INIT(64u << 10) };
	struct seen s = { 0, 0 };

	make_posts("TSCII", 0x82, post);
	ck_assert_int_eq(mail_walk(post[0].data, post[0].len, NULL,
	    check_cb, &s), 0);
	/* 64 x 12 bytes and the line break */
	ck_assert_uint_eq(s.text, REPEAT * 12 + 1);
	ck_assert_int_eq(mail_walk(post[1].data, post[1].len, NULL,
	    check_cb, &s), 0);
	ck_assert_int_eq(mail_walk(post[2].data, post[2].len, NULL,
	    check_cb, &s), 0);
	ck_assert_int_eq(s.bad_utf8, 0);
	buf_free(&post[0]);
	buf_free(&post[1]);
	buf_free(&post[2]);
}
END_TEST

/* a converter that fails only once all the input is taken (glibc's
 * ISO-2022-CN-EXT after an odd run of SO bytes): nothing past the input
 * is read (the old loop stepped over its end and converted whatever
 * memory followed, 98 KB of it, until the buffer was full) */
START_TEST(error_at_the_end)
{
	unsigned char *in = malloc(REPEAT - 1);
	struct buf out = BUF_INIT(100000);
	int flags = 0;

	ck_assert_ptr_nonnull(in);
	memset(in, 0x0e, REPEAT - 1);
	ck_assert_int_eq(charset_convert("ISO-2022-CN-EXT", 15, in,
	    REPEAT - 1, &out, &flags), 0);
	ck_assert(flags & CS_INVALID);
	ck_assert(!(flags & CS_CUT));
	ck_assert_uint_le(out.len, (REPEAT - 1) * 2);
	ck_assert(valid_utf8(out.data, out.len));
	buf_free(&out);
	free(in);
}
END_TEST

/* a buffer too small for the text: cut between characters, reported,
 * never a failure */
START_TEST(cut_not_fail)
{
	unsigned char in[REPEAT];
	struct buf out = BUF_INIT(100);
	int flags = 0;

	memset(in, 0x82, sizeof(in));
	ck_assert_int_eq(charset_convert("TSCII", 5, in, sizeof(in), &out,
	    &flags), 0);
	ck_assert(flags & CS_CUT);
	ck_assert_uint_le(out.len, 100);
	ck_assert_uint_ge(out.len, 97);
	ck_assert(valid_utf8(out.data, out.len));
	buf_free(&out);
	/* the Latin-1 fallback cuts the same way */
	out = (struct buf)BUF_INIT(5);
	flags = 0;
	ck_assert_int_eq(charset_convert("utf-8", 5,
	    (const unsigned char *)"\xe9\xe9\xe9", 3, &out, &flags), 0);
	ck_assert_int_eq(flags, CS_INVALID | CS_CUT);
	ck_assert_str_eq(buf_str(&out), "\xc3\xa9\xc3\xa9");
	buf_free(&out);
}
END_TEST

/*
 * windows-1252 (and every ISO-8859-1 label) is converted without iconv:
 * the output and flags equal iconv's (reached through glibc's other
 * name for it, MS-ANSI) on every byte, in runs of ASCII and not, and
 * at every cut
 */
START_TEST(cp1252_as_iconv)
{
	static const char *const labels[] = { "windows-1252", "ISO-8859-1",
	    "\"latin1\"", "CP1252", "iso_8859-1", "l1" };
	unsigned char in[600];
	struct buf a, b;
	size_t n, max, i, l;
	unsigned seed = 5;
	int fa, fb, ra, rb, round;

	for (round = 0; round < 400; round++) {
		/* all 256 bytes once, then random mixes of ASCII runs and
		 * high bytes */
		if (round == 0) {
			for (n = 0; n < 256; n++)
				in[n] = (unsigned char)n;
		} else if (round == 1) {
			n = 0;
		} else {
			n = 0;
			while (n < sizeof(in)) {
				seed = seed * 1103515245u + 12345u;
				if ((seed >> 16) % 3 == 0)
					in[n++] = (unsigned char)(0x80 +
					    (seed >> 8) % 128);
				else
					in[n++] = (unsigned char)((seed >> 16)
					    % 128);
			}
			n = (seed >> 4) % sizeof(in);
		}
		for (max = 0; max <= 2 * n + 8; max += round > 1 ? 37 : 1) {
			l = (size_t)round % (sizeof(labels) / sizeof(*labels));
			a = (struct buf)BUF_INIT(max);
			b = (struct buf)BUF_INIT(max);
			fa = fb = 0;
			ra = charset_convert(labels[l], strlen(labels[l]), in,
			    n, &a, &fa);
			rb = charset_convert("MS-ANSI", 7, in, n, &b, &fb);
			ck_assert_int_eq(ra, 0);
			ck_assert_int_eq(rb, 0);
			ck_assert_msg(fa == fb, "round %d max %zu: flags %d, "
			    "iconv's %d", round, max, fa, fb);
			ck_assert_uint_eq(a.len, b.len);
			/* always there and NUL-terminated (iconv's path
			 * leaves none when nothing fits) */
			ck_assert_ptr_nonnull(a.data);
			ck_assert(a.data[a.len] == 0);
			for (i = 0; i < a.len; i++)
				ck_assert_msg(a.data[i] == b.data[i], "round "
				    "%d max %zu: byte %zu differs", round, max,
				    i);
			buf_free(&a);
			buf_free(&b);
		}
	}
	/* the five bytes windows-1252 lacks were seen, and cut */
	a = (struct buf)BUF_INIT(4);
	fa = 0;
	ck_assert_int_eq(charset_convert("iso-8859-1", 10,
	    (const unsigned char *)"ab\x81\x80", 4, &a, &fa), 0);
	ck_assert_int_eq(fa, CS_INVALID | CS_CUT);
	ck_assert_str_eq(buf_str(&a), "ab\xc2\x81");
	buf_free(&a);
}
END_TEST

/* windows-1252 takes its share of the open budget like any charset: a
 * post that has used it up reads an ISO-8859-1 part as UTF-8, as when
 * iconv converted it (found in review: the table path skipped it) */
START_TEST(cp1252_budget)
{
	struct buf out = BUF_INIT(100);
	int flags = 0;

	charset_cache_clear();
	charset_budget(1);
	ck_assert_int_eq(charset_convert("koi8-r", 6,
	    (const unsigned char *)"a", 1, &out, &flags), 0);
	ck_assert_int_eq(flags, 0);
	buf_reset(&out);
	ck_assert_int_eq(charset_convert("iso-8859-1", 10,
	    (const unsigned char *)"\x93", 1, &out, &flags), 0);
	ck_assert(flags & CS_UNKNOWN);
	ck_assert_str_eq(buf_str(&out), "\xc2\x93");
	charset_budget(0);
	charset_cache_clear();
	buf_free(&out);
}
END_TEST

/* a thread of listgate web's: converts a post's text, then ends */
static void *
convert_and_end(void *arg)
{
	static const char *const cs[] = { "koi8-r", "iso-8859-2",
	    "iso-2022-jp", "windows-1251", "big5" };
	struct buf out = BUF_INIT(1u << 16);
	size_t i;

	(void)arg;
	for (i = 0; i < sizeof(cs) / sizeof(cs[0]); i++)
		if (charset_to_utf8(cs[i], (const unsigned char *)"ab\xe1",
		    3, &out) < 0)
			return arg;
	buf_free(&out);
	return (void *)cs;
}

/*
 * A thread that converted closes its handles when it ends: listgate web
 * answers each connection in a thread of its own, which decodes the
 * posts it shows; their handles were left open (glibc's converters'
 * memory with them), over 100 KiB a request, until the server ran out
 * of memory.
 */
START_TEST(thread_end_closes)
{
	long before = __atomic_load_n(&handles_open, __ATOMIC_RELAXED);
	pthread_t t;
	void *ok;
	int i;

	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(pthread_create(&t, NULL, convert_and_end,
		    NULL), 0);
		ck_assert_int_eq(pthread_join(t, &ok), 0);
		ck_assert_ptr_nonnull(ok);
	}
	ck_assert_int_eq(__atomic_load_n(&handles_open, __ATOMIC_RELAXED),
	    before);
}
END_TEST

static Suite *
charset_suite(void)
{
	Suite *s = suite_create("charset");
	TCase *tc = tcase_create("every_charset");

	/* about 900,000 walks: a few seconds, a minute under ASan */
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, every_charset_every_byte);
	tcase_add_test(tc, growth_is_bounded);
	tcase_add_test(tc, tscii_body_whole);
	tcase_add_test(tc, cut_not_fail);
	tcase_add_test(tc, error_at_the_end);
	tcase_add_test(tc, cp1252_as_iconv);
	tcase_add_test(tc, cp1252_budget);
	tcase_add_test(tc, thread_end_closes);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(charset_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	charset_cache_clear();
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

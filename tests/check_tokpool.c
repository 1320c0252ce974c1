/*
 * check_tokpool.c - gate/app/tokpool: posts tokenized and compressed by
 * worker threads come back in the order they went in, with exactly the
 * tokens tok_post gives in the program's thread and bytes that inflate
 * to the post; what is in flight stays bounded; a pool stopped with
 * posts in flight ends cleanly.  The posts use many charsets (each
 * worker's iconv cache fills and evicts), base64, quoted-printable and
 * HTML, so that state shared by mistake between threads shows as a
 * token that differs (and, under ThreadSanitizer, as a race).
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "gate/app/posttok.h"
#include "gate/app/tokpool.h"
#include "gate/mail/charset.h"
#include "gate/tok.h"
#include "gate/toklist.h"

#define NPOSTS	400

static const char *const charsets[] = {
	"utf-8", "iso-8859-1", "windows-1252", "iso-8859-2", "iso-8859-5",
	"koi8-r", "koi8-u", "windows-1251", "windows-1250", "iso-8859-7",
	"iso-8859-9", "iso-8859-15", "shift_jis", "euc-jp", "iso-2022-jp",
	"big5", "gb2312", "euc-kr", "utf-7", "utf-16", "iso-8859-4",
	"iso-8859-13", "windows-1257", "windows-1253", "windows-1254",
	"windows-1255", "windows-1256", "iso-8859-6", "iso-8859-8", "cp850",
	"cp437", "macintosh", "tis-620", "iso-8859-3", "iso-8859-10",
	"iso-8859-14", "iso-8859-16", "gbk", "x-mac-roman", "cp866",
};
#define NCS	(sizeof(charsets) / sizeof(charsets[0]))

/* post i: a different mix of charset, encoding and markup each time */
static char *
make_post(int i, size_t *len_r)
{
	static const char b64[] = "SGVsbG8gd29ybGQsIGNoZWFwIHBpbGxzIGFuZCBmcm"
	    "VlIG1vbmV5IGZvciBldmVyeW9uZSE=";
	const char *cs = charsets[(size_t)i % NCS];
	size_t cap = 8192, n;
	char *p = malloc(cap);
	int k;

	ck_assert_ptr_nonnull(p);
	n = (size_t)snprintf(p, cap,
	    "From: sender%d@example.%s\n"
	    "Subject: =?%s?Q?offer_=E9=E8=F1_%d?=\n"
	    "Received: from host%d.example.net ([192.0.2.%d]) by mx\n"
	    "MIME-Version: 1.0\n"
	    "Content-Type: multipart/alternative; boundary=\"b%d\"\n\n"
	    "--b%d\n"
	    "Content-Type: text/plain; charset=%s\n"
	    "Content-Transfer-Encoding: %s\n\n"
	    "%s\n"
	    "--b%d\n"
	    "Content-Type: text/html; charset=%s\n\n"
	    "<html><body><p>Word%d caf\xe9 \xa4\xa2\xa4\xa4 <a href=\"http://"
	    "site%d.example.com/x\">click</a> &eacute;&#233;</p>",
	    i, i % 2 ? "com" : "org", cs, i, i, i % 250 + 1, i, i, cs,
	    i % 3 == 0 ? "base64" : i % 3 == 1 ? "quoted-printable" : "8bit",
	    i % 3 == 0 ? b64 : i % 3 == 1 ? "caf=E9 na=EFve =A4=A2 soft=\n"
	    "break" : "plain \xc3\xa9t\xc3\xa9 \x82\xa0\x82\xa2 text",
	    i, cs, i, i % 7);
	/* some posts grow, so that the byte bound matters */
	for (k = 0; k < (i % 5) * 40 && n + 64 < cap; k++)
		n += (size_t)snprintf(p + n, cap - n, " filler%d word%d", k,
		    (i + k) % 97);
	n += (size_t)snprintf(p + n, cap - n, "</body></html>\n--b%d--\n", i);
	*len_r = n;
	return p;
}

static void
same_tokens(const struct toklist *a, const struct toklist *b, int i)
{
	size_t k, la, lb;
	const char *ta, *tb;

	ck_assert_msg(toklist_count(a) == toklist_count(b),
	    "post %d: %zu tokens, %zu alone", i, toklist_count(a),
	    toklist_count(b));
	for (k = 0; k < toklist_count(a); k++) {
		ta = toklist_get(a, k, &la);
		tb = toklist_get(b, k, &lb);
		ck_assert_msg(la == lb && memcmp(ta, tb, la) == 0,
		    "post %d token %zu differs", i, k);
	}
}

static void
check_inflates(const struct tokpool_post *pp, int i)
{
	unsigned char *out = malloc(pp->len + 1);
	uLongf n = pp->len + 1;

	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(uncompress(out, &n, pp->z, pp->zlen), Z_OK);
	ck_assert_msg(n == pp->len && memcmp(out, pp->msg, n) == 0,
	    "post %d: compressed bytes do not inflate to it", i);
	free(out);
}

/* every post through a pool of nw workers, against the program's
 * thread tokenizing the same post alone */
static void
run_pool(unsigned nw, size_t toklen)
{
	struct posttok pt;
	struct tokpool *p;
	struct tokpool_post *pp;
	struct toklist *alone;
	char err[256], name[32];
	char *posts[NPOSTS];
	size_t lens[NPOSTS];
	int put = 0, got = 0;

	ck_assert_int_eq(posttok_init_words(&pt, NULL, NULL, err,
	    sizeof(err)), 0);
	ck_assert_ptr_nonnull(alone = toklist_new(pt.to.max_tokens));
	for (put = 0; put < NPOSTS; put++)
		posts[put] = make_post(put, &lens[put]);
	ck_assert_int_eq(tokpool_start(&p, &pt, nw, TOKPOOL_WORDS |
	    TOKPOOL_DEFLATE, toklen, err, sizeof(err)), 0);
	for (put = 0; put < NPOSTS || got < NPOSTS; ) {
		if (put < NPOSTS && tokpool_room(p, lens[put])) {
			snprintf(name, sizeof(name), "post-%d", put);
			ck_assert_int_eq(tokpool_put(p, (unsigned char *)
			    posts[put], lens[put], name), 0);
			put++;
			continue;
		}
		ck_assert_uint_le(tokpool_pending(p), 16);
		ck_assert_ptr_nonnull(pp = tokpool_take(p));
		snprintf(name, sizeof(name), "post-%d", got);
		ck_assert_str_eq(pp->name, name);
		ck_assert_int_eq(pp->rc, 0);
		ck_assert_uint_eq(pp->len, lens[got]);
		ck_assert_int_eq(tok_post((unsigned char *)posts[got],
		    toklen > 0 && lens[got] > toklen ? toklen : lens[got],
		    &pt.to, alone), 0);
		same_tokens(pp->tl, alone, got);
		check_inflates(pp, got);
		tokpool_done(p);
		got++;
	}
	ck_assert_ptr_null(tokpool_take(p));
	tokpool_stop(p);
	for (put = 0; put < NPOSTS; put++)
		free(posts[put]);
	toklist_free(alone);
	charset_cache_clear();
}

START_TEST(test_in_order_same_tokens)
{
	run_pool((unsigned)_i, 0);
}
END_TEST

/* the journal's trainer tokenizes a cut post (sync reads max_scan + 1
 * bytes); the pool cuts the same and still compresses the whole post */
START_TEST(test_cut_for_tokens_whole_compressed)
{
	run_pool(2, 700);
}
END_TEST

/* a full pool takes no more: 16 posts (128 made deeper), or 16 MiB past
 * the oldest */
START_TEST(test_bounded)
{
	struct posttok pt;
	struct tokpool *p;
	char err[256];
	unsigned char small[] = "Subject: x\n\nbody\n";
	unsigned char *big;
	size_t bigsz = 6u * 1024 * 1024;
	struct tokpool_post *pp;
	char name[32];
	int i, last = 0;

	ck_assert_int_eq(posttok_init_words(&pt, NULL, NULL, err,
	    sizeof(err)), 0);
	ck_assert_ptr_nonnull(big = malloc(bigsz));
	memset(big, 'a', bigsz);
	memcpy(big, "Subject: big\n\n", 14);
	ck_assert_int_eq(tokpool_start(&p, &pt, 1, TOKPOOL_WORDS, 0, err,
	    sizeof(err)), 0);
	for (i = 0; i < 16; i++) {
		ck_assert(tokpool_room(p, sizeof(small)));
		ck_assert_int_eq(tokpool_put(p, small, sizeof(small), NULL),
		    0);
	}
	ck_assert(!tokpool_room(p, sizeof(small)));
	ck_assert_int_eq(tokpool_put(p, small, sizeof(small), NULL), -1);
	while (tokpool_pending(p) > 0) {
		ck_assert_ptr_nonnull(tokpool_take(p));
		tokpool_done(p);
	}
	/* two large posts fit, the third waits; alone any size fits */
	ck_assert(tokpool_room(p, bigsz));
	ck_assert_int_eq(tokpool_put(p, big, bigsz, "a"), 0);
	ck_assert(tokpool_room(p, bigsz));
	ck_assert_int_eq(tokpool_put(p, big, bigsz, "b"), 0);
	ck_assert(!tokpool_room(p, bigsz));
	ck_assert(tokpool_room(p, 100));
	ck_assert_ptr_nonnull(tokpool_take(p));
	tokpool_done(p);
	ck_assert(tokpool_room(p, bigsz));
	ck_assert_ptr_nonnull(tokpool_take(p));
	tokpool_done(p);
	/* deeper: 128 posts, then none; shallower again: none until fewer
	 * than 16 are in flight, and the order is kept throughout */
	tokpool_set_depth(p, 1000);
	for (i = 0; i < 128; i++) {
		snprintf(name, sizeof(name), "%d", i);
		ck_assert(tokpool_room(p, sizeof(small)));
		ck_assert_int_eq(tokpool_put(p, small, sizeof(small), name),
		    0);
	}
	ck_assert(!tokpool_room(p, sizeof(small)));
	ck_assert_int_eq(tokpool_put(p, small, sizeof(small), NULL), -1);
	tokpool_set_depth(p, 0);
	for (i = 0; i < 128; i++) {
		ck_assert_int_eq(tokpool_room(p, sizeof(small)), 128 - i < 16);
		ck_assert_ptr_nonnull(pp = tokpool_take(p));
		snprintf(name, sizeof(name), "%d", i);
		ck_assert_str_eq(pp->name, name);
		tokpool_done(p);
	}
	/* the slots come back in another order than they went: the posts
	 * do not */
	for (i = 0; i < 40; i++) {
		if (!tokpool_room(p, sizeof(small))) {
			ck_assert_ptr_nonnull(pp = tokpool_take(p));
			ck_assert_int_eq(atoi(pp->name), last++);
			ck_assert_uint_gt(toklist_count(pp->tl), 0);
			tokpool_done(p);
		}
		snprintf(name, sizeof(name), "%d", i);
		ck_assert_int_eq(tokpool_put(p, small, sizeof(small), name),
		    0);
	}
	while (tokpool_pending(p) > 0) {
		ck_assert_ptr_nonnull(pp = tokpool_take(p));
		ck_assert_int_eq(atoi(pp->name), last++);
		tokpool_done(p);
	}
	ck_assert_int_eq(last, 40);
	ck_assert_int_eq(tokpool_put(p, big, bigsz, "c"), 0);
	/* stopped with a post in flight: it is dropped, nothing hangs */
	tokpool_stop(p);
	free(big);
}
END_TEST

/* a pool made deeper takes small posts past its usual 16, large ones
 * only while they stay under 2 MiB in all: each slot keeps its token
 * list (here 9000 tokens) until the pool stops, and 128 posts of 64 KiB
 * fit the usual 16 MiB */
START_TEST(test_deeper_only_small)
{
	struct posttok pt;
	struct tokpool *p;
	struct tokpool_post *pp;
	char err[256], name[32];
	unsigned char *post, small[] = "Subject: x\n\nbody\n";
	size_t len = 64u * 1024, n = 0;
	int i, last = 0;

	ck_assert_int_eq(posttok_init_words(&pt, NULL, NULL, err,
	    sizeof(err)), 0);
	ck_assert_ptr_nonnull(post = malloc(len + 16));
	n = (size_t)snprintf((char *)post, len, "Subject: many\n\n");
	for (i = 0; n + 8 < len; i++)
		n += (size_t)snprintf((char *)post + n, len - n, "w%05x ", i);
	while (n < len)
		post[n++] = '\n';
	ck_assert_int_eq(tokpool_start(&p, &pt, 2, TOKPOOL_WORDS |
	    TOKPOOL_DEFLATE, 0, err, sizeof(err)), 0);
	tokpool_set_depth(p, TOKPOOL_DEPTH_MAX);
	for (i = 0; i < TOKPOOL_DEPTH_MAX && tokpool_room(p, len); i++) {
		snprintf(name, sizeof(name), "%d", i);
		ck_assert_int_eq(tokpool_put(p, post, len, name), 0);
	}
	ck_assert_int_eq(i, 32);	/* 2 MiB */
	while (tokpool_pending(p) > 0) {
		ck_assert_ptr_nonnull(pp = tokpool_take(p));
		ck_assert_int_eq(atoi(pp->name), last++);
		ck_assert_uint_gt(toklist_count(pp->tl), 5000);
		tokpool_done(p);
	}
	/* small posts: 128 */
	for (i = 0; i < TOKPOOL_DEPTH_MAX; i++) {
		ck_assert(tokpool_room(p, sizeof(small)));
		snprintf(name, sizeof(name), "%d", last + i);
		ck_assert_int_eq(tokpool_put(p, small, sizeof(small), name),
		    0);
	}
	ck_assert(!tokpool_room(p, sizeof(small)));
	/* shallower again: the slots freed past 16 are given up, and
	 * every post still comes back in order, tokenized */
	tokpool_set_depth(p, 0);
	while (tokpool_pending(p) > 0) {
		ck_assert_ptr_nonnull(pp = tokpool_take(p));
		ck_assert_int_eq(atoi(pp->name), last++);
		ck_assert_uint_gt(toklist_count(pp->tl), 0);
		tokpool_done(p);
	}
	for (i = 0; i < 40; i++) {
		while (!tokpool_room(p, len)) {
			ck_assert_ptr_nonnull(pp = tokpool_take(p));
			ck_assert_uint_gt(toklist_count(pp->tl), 5000);
			ck_assert_uint_gt(pp->zlen, 0);
			tokpool_done(p);
		}
		ck_assert_int_eq(tokpool_put(p, post, len, NULL), 0);
	}
	tokpool_stop(p);
	free(post);
}
END_TEST

/* 80 charsets in which byte 0xe9 is not e-acute (glibc's iconv knows
 * them all), more than a post's budget (CS_OPEN_BUDGET) and the cache */
static const char *const many[80] = {
	"1046", "437", "850", "851", "852", "855",
	"857", "858", "860", "861", "862", "863",
	"864", "865", "866", "866nav", "869", "874",
	"8859_5", "8859_6", "8859_7", "8859_8", "ansi_x3.110", "ansi_x3.110-1983",
	"arabic", "armscii-8", "armscii8", "asmo-708", "cp-ar", "cp-gr",
	"cp-hu", "cp10007", "cp1008", "cp1046", "cp1089", "cp1124",
	"cp1125", "cp1161", "cp1162", "cp1167", "cp1251", "cp1253",
	"cp1255", "cp1282", "cp437", "cp4909", "cp5347", "cp737",
	"cp770", "cp771", "cp772", "cp773", "cp774", "cp775",
	"cp813", "cp850", "cp851", "cp852", "cp855", "cp857",
	"cp858", "cp860", "cp861", "cp862", "cp863", "cp864",
	"cp865", "cp866", "cp866nav", "cp868", "cp869", "cp874",
	"cp9066", "cp915", "cp916", "cpibm861", "csa_t500", "csa_t500-1983",
	"cshproman8", "csibm1008"
};

/* a post naming every one of many[first..first + n - 1], each in
 * `rounds` parts whose one word (0xe9 0xe9 0xe9 and the part's number)
 * says whether it was converted or read as Latin-1 */
static char *
many_post(int first, int n, int rounds, size_t *len_r)
{
	size_t cap = 64 * 1024, len;
	char *p = malloc(cap);
	int r, i;

	ck_assert_ptr_nonnull(p);
	len = (size_t)snprintf(p, cap, "Subject: many\nMIME-Version: 1.0\n"
	    "Content-Type: multipart/mixed; boundary=\"m\"\n\n");
	for (r = 0; r < rounds; r++)
		for (i = first; i < first + n; i++)
			len += (size_t)snprintf(p + len, cap - len, "--m\n"
			    "Content-Type: text/plain; charset=%s\n\n"
			    "\xe9\xe9\xe9w%dr%d\n", many[i], i, r);
	len += (size_t)snprintf(p + len, cap - len, "--m--\n");
	ck_assert_uint_lt(len, cap);
	*len_r = len;
	return p;
}

/* a post's tokens do not depend on what its thread converted before:
 * the charset budget counts the charsets the post names, and the cache
 * holds them all while it is read */
START_TEST(test_tokens_do_not_depend_on_history)
{
	struct posttok pt;
	struct toklist *fresh, *again;
	struct tokpool *p;
	struct tokpool_post *pp;
	char err[256];
	char *post, *warm;
	size_t len, wlen;
	int i, got;

	ck_assert_int_eq(posttok_init_words(&pt, NULL, NULL, err,
	    sizeof(err)), 0);
	ck_assert_ptr_nonnull(fresh = toklist_new(pt.to.max_tokens));
	ck_assert_ptr_nonnull(again = toklist_new(pt.to.max_tokens));
	post = many_post(0, 80, 2, &len);
	warm = many_post(0, 32, 1, &wlen);
	charset_cache_clear();
	ck_assert_int_eq(tok_post((unsigned char *)post, len, &pt.to, fresh),
	    0);
	/* some of its charsets converted before, in another post */
	ck_assert_int_eq(tok_post((unsigned char *)warm, wlen, &pt.to,
	    again), 0);
	ck_assert_int_eq(tok_post((unsigned char *)post, len, &pt.to, again),
	    0);
	same_tokens(fresh, again, -1);
	/* and in workers whose caches saw other posts */
	ck_assert_int_eq(tokpool_start(&p, &pt, 3, TOKPOOL_WORDS, 0, err,
	    sizeof(err)), 0);
	for (i = got = 0; i < 24; i++) {
		while (!tokpool_room(p, len)) {
			ck_assert_ptr_nonnull(pp = tokpool_take(p));
			if (strcmp(pp->name, "post") == 0) {
				same_tokens(fresh, pp->tl, got);
				got++;
			}
			tokpool_done(p);
		}
		ck_assert_int_eq(i % 3 == 0 ? tokpool_put(p,
		    (unsigned char *)post, len, "post") : tokpool_put(p,
		    (unsigned char *)warm, wlen, "warm"), 0);
	}
	while ((pp = tokpool_take(p)) != NULL) {
		if (strcmp(pp->name, "post") == 0) {
			same_tokens(fresh, pp->tl, got);
			got++;
		}
		tokpool_done(p);
	}
	ck_assert_int_eq(got, 8);
	tokpool_stop(p);
	toklist_free(fresh);
	toklist_free(again);
	free(post);
	free(warm);
	charset_cache_clear();
}
END_TEST

/* the environment names the number of workers; none on request */
START_TEST(test_workers_from_environment)
{
	setenv("LISTGATE_TRAIN_THREADS", "0", 1);
	ck_assert_uint_eq(tokpool_workers(), 0);
	setenv("LISTGATE_TRAIN_THREADS", "3", 1);
	ck_assert_uint_eq(tokpool_workers(), 3);
	setenv("LISTGATE_TRAIN_THREADS", "99", 1);
	ck_assert_uint_eq(tokpool_workers(), 4);
	unsetenv("LISTGATE_TRAIN_THREADS");
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("tokpool");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int nf;

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_in_order_same_tokens, 1, 5);
	tcase_add_test(tc, test_cut_for_tokens_whole_compressed);
	tcase_add_test(tc, test_bounded);
	tcase_add_test(tc, test_deeper_only_small);
	tcase_add_test(tc, test_tokens_do_not_depend_on_history);
	tcase_add_test(tc, test_workers_from_environment);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

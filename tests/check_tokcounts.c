/*
 * check_tokcounts.c - gate/app/tokcounts and the rule it serves: the
 * site store's f as each token's prior (bayes_f_prior), the list's and
 * the site's counts side by side, scores and clues with them
 *
 * The stores are tokdb's in-memory twins (path ":"), trained through
 * tokdb_learn as train does.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/tokdb.h"
#include "gate/app/tokcounts.h"
#include "gate/bayes.h"
#include "gate/classify.h"
#include "gate/tok.h"
#include "gate/util/buf.h"
#include "listcfg/listcfg.h"

#define S	LG_DEFAULT_SITE_WEIGHT

/*
 * The rule, through bayes_f_prior: a token the site has seen takes the
 * site's f as its prior, S posts strong, in place of robx and robs.
 */
START_TEST(rule_values)
{
	struct bayes_params p;
	struct bayes_prior pr = { 0.9, S };
	double f;

	bayes_params_default(&p);
	/* the list has nothing on the token: the site's f */
	ck_assert_double_eq(bayes_f_prior(&p, 10, 10, 0, 0, &pr), 0.9);
	ck_assert_double_eq(bayes_f_prior(&p, 0, 0, 0, 0, &pr), 0.9);
	/* 1 of 10 ham and no spam: p = 0, n = 1: (S 0.9 + 0) / (S + 1) */
	f = bayes_f_prior(&p, 10, 10, 0, 1, &pr);
	ck_assert_double_eq_tol(f, S * 0.9 / (S + 1), 1e-15);
	/* 3 of 10 spam, 1 of 10 ham: p = 0.75, n = 4 */
	f = bayes_f_prior(&p, 10, 10, 3, 1, &pr);
	ck_assert_double_eq_tol(f, (S * 0.9 + 4 * 0.75) / (S + 4), 1e-15);
	/* no prior (n 0, or out of range): Robinson's own */
	pr.n = 0;
	ck_assert_double_eq(bayes_f_prior(&p, 10, 10, 3, 1, &pr),
	    bayes_f(&p, 10, 10, 3, 1));
	ck_assert_double_eq(bayes_f_prior(&p, 10, 10, 3, 1, NULL),
	    bayes_f(&p, 10, 10, 3, 1));
	/* the constant the documentation states */
	ck_assert_double_eq(S, 3);
}
END_TEST

START_TEST(rule_fades)
{
	struct bayes_params p;
	struct bayes_prior pr = { 0.99, S };
	double n, f, last = 1, share;

	bayes_params_default(&p);
	/* the list learns the token as ham, one post at a time (of 10000
	 * of each class): the site's say, S / (S + n), fades and f falls
	 * from the site's 0.99 towards the list's own 0 */
	for (n = 0; n <= 5000; n = n * 2 + 1) {
		f = bayes_f_prior(&p, 10000, 10000, 0, n, &pr);
		share = S / (S + n);
		ck_assert_double_eq_tol(f, 0.99 * share, 1e-12);
		ck_assert_msg(f <= last, "n %g f %g", n, f);
		last = f;
	}
	ck_assert(last < 0.001);
}
END_TEST

START_TEST(rule_odd_inputs)
{
	struct bayes_params p;
	struct bayes_prior bad[] = { { 0.9, -1 }, { 0.9, NAN }, { 0.9, INFINITY },
	    { -0.1, S }, { 1.5, S }, { NAN, S } };
	size_t i;
	double f;

	bayes_params_default(&p);
	/* an unusable prior is no prior */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_double_eq(bayes_f_prior(&p, 10, 10, 3, 1, &bad[i]),
		    bayes_f(&p, 10, 10, 3, 1));
	/* odd counts stay within [0, 1] */
	bad[0].f = 0.9;
	bad[0].n = 1e300;
	f = bayes_f_prior(&p, 10, 10, 1e300, 1, &bad[0]);
	ck_assert(isfinite(f) && f >= 0 && f <= 1);
	f = bayes_f_prior(&p, NAN, -1, NAN, 5, &bad[0]);
	ck_assert(isfinite(f) && f >= 0 && f <= 1);
}
END_TEST

/* a store at ":" */
static struct tokdb *
mem_store(void)
{
	struct tokdb *db;
	char err[256];

	ck_assert_int_eq(tokdb_open(":", TOKDB_WRITE | TOKDB_CREATE, 0, &db,
	    err, sizeof(err)), 0);
	return db;
}

/* learn one post as train does */
static void
learn(struct tokdb *db, const char *msg, int spam)
{
	struct tok_opts to;
	struct toklist *tl;

	tok_opts_default(&to);
	ck_assert_ptr_nonnull(tl = toklist_new(to.max_tokens));
	ck_assert_int_eq(tok_post((const unsigned char *)msg, strlen(msg), &to,
	    tl), 0);
	ck_assert_int_eq(tokdb_begin(db), 0);
	ck_assert_int_ge(tokdb_learn(db, tl, spam, 1, 20000), 0);
	ck_assert_int_eq(tokdb_commit(db), 0);
	toklist_free(tl);
}

static const char *const spam_posts[] = {
	"Subject: cheap pills\n\nbuy cheap pills now\n",
	"Subject: pills offer\n\nlimited offer on pills, buy now\n",
	"Subject: casino bonus\n\nwin big at the casino tonight\n",
};
static const char *const ham_posts[] = {
	"Subject: kernel patch\n\nplease review the kernel patch\n",
	"Subject: release notes\n\nthe release notes are ready for review\n",
	"Subject: meeting\n\nthe kernel meeting moves to friday\n",
};

/* the site's f of a token in s of its 3 spam and h of its 1 ham posts */
static double
bayes_f_prior_site(double s, double h)
{
	struct bayes_params p;

	bayes_params_default(&p);
	return bayes_f(&p, 3, 1, s, h);
}

/* the counts of one token through cc */
static void
get(const struct classify_counts *cc, const char *tok,
    struct classify_count *c)
{
	ck_assert_int_ge(cc->get(cc->ctx, tok, strlen(tok), c), 0);
}

START_TEST(combined_counts)
{
	struct tokdb *own = mem_store(), *site = mem_store();
	struct tokcounts_site ts;
	struct classify_counts cc;
	struct classify_count c;
	double ns, nh;
	char err[256];
	size_t i;

	/* the site: 3 spam, 3 ham; the list: 1 spam, 1 ham */
	for (i = 0; i < 3; i++) {
		learn(site, spam_posts[i], 1);
		learn(site, ham_posts[i], 0);
	}
	learn(own, spam_posts[0], 1);
	learn(own, ham_posts[0], 0);
	ck_assert_int_eq(tokcounts_combined(&cc, &ts, own, site, S, err,
	    sizeof(err)), 0);
	ck_assert_ptr_nonnull(cc.site_msgcounts);
	ck_assert_double_eq(cc.site_weight, S);
	ck_assert_int_eq(cc.msgcounts(cc.ctx, &ns, &nh), 0);
	ck_assert_double_eq(ns, 1);
	ck_assert_double_eq(nh, 1);
	ck_assert_int_eq(cc.site_msgcounts(cc.ctx, &ns, &nh), 0);
	ck_assert_double_eq(ns, 3);
	ck_assert_double_eq(nh, 3);
	/* "pills": the list 1 spam; the site 2 spam */
	get(&cc, "pills", &c);
	ck_assert_double_eq(c.spam, 1);
	ck_assert_double_eq(c.site_spam, 2);
	ck_assert_double_eq(c.ham + c.site_ham, 0);
	/* only at the site: "casino" */
	ck_assert_int_eq(cc.get(cc.ctx, "casino", 6, &c), 1);
	ck_assert_double_eq(c.spam, 0);
	ck_assert_double_eq(c.site_spam, 1);
	/* nowhere */
	ck_assert_int_eq(cc.get(cc.ctx, "zebra", 5, &c), 0);
	ck_assert_double_eq(c.spam + c.ham + c.site_spam + c.site_ham, 0);

	/* weight 0 (or nonsense): the list alone */
	ck_assert_int_eq(tokcounts_combined(&cc, &ts, own, site, 0, err,
	    sizeof(err)), 0);
	ck_assert_ptr_null(cc.site_msgcounts);
	get(&cc, "casino", &c);
	ck_assert_double_eq(c.spam + c.site_spam, 0);
	ck_assert_int_eq(tokcounts_combined(&cc, &ts, own, site, NAN, err,
	    sizeof(err)), 0);
	ck_assert_ptr_null(cc.site_msgcounts);

	/* no store of its own: nothing but the site's */
	ck_assert_int_eq(tokcounts_combined(&cc, &ts, NULL, site, S, err,
	    sizeof(err)), 0);
	get(&cc, "pills", &c);
	ck_assert_double_eq(c.spam, 0);
	ck_assert_double_eq(c.site_spam, 2);
	ck_assert_int_eq(cc.msgcounts(cc.ctx, &ns, &nh), 0);
	ck_assert_double_eq(ns + nh, 0);
	tokdb_close(own);
	tokdb_close(site);
}
END_TEST

/* score msg through cc */
static double
score(const struct classify_counts *cc, const char *msg, struct buf *clues)
{
	struct tok_opts to;
	struct bayes_params bp;
	struct classify c;
	char err[256];
	double s;

	tok_opts_default(&to);
	bayes_params_default(&bp);
	ck_assert_int_eq(classify_init(&c, to.max_tokens), 0);
	ck_assert_int_eq(classify_post(&c, cc, &bp, &to,
	    (const unsigned char *)msg, strlen(msg), err, sizeof(err)), 0);
	s = c.r.score;
	if (clues != NULL)
		ck_assert_int_eq(classify_clues_site(&c, 50, clues), 0);
	classify_free(&c);
	return s;
}

/* a list with no counts of its own scores exactly as the site store
 * alone; weight 0 scores exactly as the list alone */
START_TEST(new_list_is_the_site_weight_zero_the_list)
{
	struct tokdb *own = mem_store(), *site = mem_store();
	struct tokcounts_site ts;
	struct classify_counts cc, cs, co;
	char err[256];
	const char *m = "Subject: cheap kernel pills\n\nreview the offer now\n";
	size_t i;

	for (i = 0; i < 3; i++) {
		learn(site, spam_posts[i], 1);
		learn(site, ham_posts[i], 0);
	}
	learn(own, spam_posts[1], 1);
	learn(own, ham_posts[2], 0);
	ck_assert_int_eq(tokcounts_combined(&cc, &ts, NULL, site, S, err,
	    sizeof(err)), 0);
	tokcounts_tokdb(&cs, site);
	ck_assert(score(&cc, m, NULL) == score(&cs, m, NULL));
	ck_assert_int_eq(tokcounts_combined(&cc, &ts, own, site, 0, err,
	    sizeof(err)), 0);
	tokcounts_tokdb(&co, own);
	ck_assert(score(&cc, m, NULL) == score(&co, m, NULL));
	tokdb_close(own);
	tokdb_close(site);
}
END_TEST

/* a young list with the site store scores a site-known spam as spam;
 * alone it cannot tell */
START_TEST(young_list_borrows)
{
	struct tokdb *own = mem_store(), *site = mem_store();
	struct tokcounts_site ts;
	struct classify_counts cc, co;
	char err[256];
	const char *m = "Subject: casino bonus pills\n\nwin cheap pills at the "
	    "casino\n";
	size_t i;

	for (i = 0; i < 3; i++) {
		learn(site, spam_posts[i], 1);
		learn(site, ham_posts[i], 0);
	}
	learn(own, ham_posts[0], 0);
	tokcounts_tokdb(&co, own);
	ck_assert_int_eq(tokcounts_combined(&cc, &ts, own, site, S, err,
	    sizeof(err)), 0);
	ck_assert_msg(score(&cc, m, NULL) > 0.9 && score(&co, m, NULL) < 0.9,
	    "with the site %g, alone %g", score(&cc, m, NULL),
	    score(&co, m, NULL));
	tokdb_close(own);
	tokdb_close(site);
}
END_TEST

/* the list's own evidence outweighs the site's as it grows: a token the
 * site calls spam but the list has seen in ham only */
START_TEST(own_evidence_wins)
{
	struct tokdb *own = mem_store(), *site = mem_store();
	struct tokcounts_site ts;
	struct classify_counts cc;
	char err[256];
	const char *m = "Subject: cheap pills\n\ncheap pills\n";
	double before;
	size_t i;

	for (i = 0; i < 3; i++)
		learn(site, spam_posts[0], 1);
	learn(site, ham_posts[0], 0);
	learn(own, spam_posts[2], 1);
	ck_assert_int_eq(tokcounts_combined(&cc, &ts, own, site, S, err,
	    sizeof(err)), 0);
	before = score(&cc, m, NULL);
	ck_assert_msg(before > 0.9, "%g", before);
	/* the list's moderators approve such posts, again and again */
	for (i = 0; i < 30; i++)
		learn(own, m, 0);
	ck_assert_int_eq(tokcounts_combined(&cc, &ts, own, site, S, err,
	    sizeof(err)), 0);
	ck_assert_msg(score(&cc, m, NULL) < 0.1, "%g", score(&cc, m, NULL));
	tokdb_close(own);
	tokdb_close(site);
}
END_TEST

START_TEST(clues_say_the_site_part)
{
	struct tokdb *own = mem_store(), *site = mem_store();
	struct tokcounts_site ts;
	struct classify_counts cc, co;
	struct buf clues = BUF_INIT(65536);
	const char *p, *line;
	char err[256], want[64];
	int found = 0;
	size_t i;

	for (i = 0; i < 3; i++)
		learn(site, spam_posts[i], 1);
	learn(site, ham_posts[0], 0);
	learn(own, spam_posts[0], 1);
	learn(own, ham_posts[0], 0);
	ck_assert_int_eq(tokcounts_combined(&cc, &ts, own, site, S, err,
	    sizeof(err)), 0);
	score(&cc, "Subject: pills offer\n\nlimited offer on pills, zebra\n",
	    &clues);
	/* "pills": the list 1 spam (n = 1): the site's share S / (S + 1);
	 * "offer" (only at the site): all of it; "zebra": the site never
	 * saw it */
	for (p = buf_str(&clues); *p != '\0'; p = strchr(p, '\n') + 1) {
		line = p;
		if (strncmp(line, "pills ", 6) == 0) {
			snprintf(want, sizeof(want), " 1 0 site %.6f %.2f\n",
			    bayes_f_prior_site(2, 0), S / (S + 1));
			ck_assert_msg(strstr(line, want) != NULL, "%.80s", line);
			found++;
		}
		if (strncmp(line, "offer ", 6) == 0) {
			ck_assert_msg(strstr(line, " 0 0 site ") != NULL &&
			    strstr(line, " 1.00\n") != NULL, "%.80s", line);
			found++;
		}
		if (strncmp(line, "zebra ", 6) == 0) {
			ck_assert_msg(strstr(line, " 0 0 site - 0\n") != NULL,
			    "%.80s", line);
			found++;
		}
		ck_assert_ptr_nonnull(strstr(line, " site "));
	}
	ck_assert_int_eq(found, 3);
	/* the lines a held post keeps stay "tok f spam ham" (moderation
	 * reads them from the end) */
	{
		struct tok_opts to;
		struct bayes_params bp;
		struct classify c;

		tok_opts_default(&to);
		bayes_params_default(&bp);
		ck_assert_int_eq(classify_init(&c, to.max_tokens), 0);
		ck_assert_int_eq(classify_post(&c, &cc, &bp, &to,
		    (const unsigned char *)spam_posts[1],
		    strlen(spam_posts[1]), err, sizeof(err)), 0);
		buf_reset(&clues);
		ck_assert_int_eq(classify_clues(&c, 50, &clues), 0);
		ck_assert_ptr_null(strstr(buf_str(&clues), " site "));
		ck_assert_ptr_nonnull(strstr(buf_str(&clues), "pills "));
		classify_free(&c);
	}
	/* without the site store the lines are as they always were */
	buf_reset(&clues);
	tokcounts_tokdb(&co, own);
	score(&co, spam_posts[0], &clues);
	ck_assert_ptr_null(strstr(buf_str(&clues), " site "));
	ck_assert_ptr_nonnull(strstr(buf_str(&clues), "pills "));
	buf_free(&clues);
	tokdb_close(own);
	tokdb_close(site);
}
END_TEST

static Suite *
tokcounts_suite(void)
{
	Suite *s = suite_create("tokcounts");
	TCase *tc;

	tc = tcase_create("rule");
	tcase_add_test(tc, rule_values);
	tcase_add_test(tc, rule_fades);
	tcase_add_test(tc, rule_odd_inputs);
	suite_add_tcase(s, tc);

	tc = tcase_create("combined");
	tcase_add_test(tc, combined_counts);
	tcase_add_test(tc, new_list_is_the_site_weight_zero_the_list);
	tcase_add_test(tc, young_list_borrows);
	tcase_add_test(tc, own_evidence_wins);
	tcase_add_test(tc, clues_say_the_site_part);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(tokcounts_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

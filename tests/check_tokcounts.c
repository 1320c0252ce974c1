/*
 * check_tokcounts.c - gate/app/tokcounts: the site store's weight rule
 * and the combined count source (own + w * site)
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

#define K	TOKCOUNTS_SITE_K

START_TEST(rule_values)
{
	/* a new list: the site's counts alone */
	ck_assert_double_eq(tokcounts_site_weight(0, LG_AUTO), 1);
	/* a half at K posts of the list's own, a tenth at 9 K */
	ck_assert_double_eq_tol(tokcounts_site_weight(K, LG_AUTO), 0.5,
	    1e-15);
	ck_assert_double_eq_tol(tokcounts_site_weight(9 * K, LG_AUTO), 0.1,
	    1e-15);
	ck_assert_double_eq_tol(tokcounts_site_weight(50, LG_AUTO),
	    K / (K + 50), 1e-15);
	/* the constant the documentation states */
	ck_assert_double_eq(K, 200);
}
END_TEST

START_TEST(rule_fades)
{
	double n, w, last = 2;

	/* strictly falling in the list's own posts, always in (0, 1] */
	for (n = 0; n < 1e7; n = n * 1.7 + 1) {
		w = tokcounts_site_weight(n, LG_AUTO);
		ck_assert_msg(w > 0 && w <= 1 && w < last, "n %g w %g", n, w);
		last = w;
	}
	ck_assert_double_eq(tokcounts_site_weight(INFINITY, LG_AUTO), 0);
}
END_TEST

START_TEST(rule_setting_overrides)
{
	/* a list's site_weight fixes the weight whatever its size */
	ck_assert_double_eq(tokcounts_site_weight(0, 0), 0);
	ck_assert_double_eq(tokcounts_site_weight(1e6, 0.25), 0.25);
	ck_assert_double_eq(tokcounts_site_weight(0, 0.25), 0.25);
	ck_assert_double_eq(tokcounts_site_weight(5000, 1), 1);
}
END_TEST

START_TEST(rule_odd_inputs)
{
	/* no bad input makes a weight outside [0, 1] */
	ck_assert_double_eq(tokcounts_site_weight(-5, LG_AUTO), 1);
	ck_assert_double_eq(tokcounts_site_weight(NAN, LG_AUTO), 1);
	ck_assert_double_eq_tol(tokcounts_site_weight(K, NAN), 0.5, 1e-15);
	ck_assert_double_eq_tol(tokcounts_site_weight(K, 1.5), 0.5, 1e-15);
	ck_assert_double_eq_tol(tokcounts_site_weight(K, -0.1), 0.5, 1e-15);
	ck_assert_double_eq_tol(tokcounts_site_weight(K, INFINITY), 0.5,
	    1e-15);
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
	double ns, nh, w;
	char err[256];
	size_t i;

	/* the site: 3 spam, 3 ham; the list: 1 spam, 1 ham */
	for (i = 0; i < 3; i++) {
		learn(site, spam_posts[i], 1);
		learn(site, ham_posts[i], 0);
	}
	learn(own, spam_posts[0], 1);
	learn(own, ham_posts[0], 0);
	ck_assert_int_eq(tokcounts_combined(&cc, &ts, own, site, LG_AUTO, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(cc.site, 1);
	w = K / (K + 2);
	ck_assert_double_eq_tol(ts.w, w, 1e-15);
	ck_assert_int_eq(cc.msgcounts(cc.ctx, &ns, &nh), 0);
	ck_assert_double_eq_tol(ns, 1 + w * 3, 1e-12);
	ck_assert_double_eq_tol(nh, 1 + w * 3, 1e-12);
	/* "pills": own 1 spam; site 2 spam */
	get(&cc, "pills", &c);
	ck_assert_double_eq_tol(c.spam, 1 + 2 * w, 1e-12);
	ck_assert_double_eq_tol(c.site_spam, 2 * w, 1e-12);
	ck_assert_double_eq(c.ham, 0);
	ck_assert_double_eq(c.site_ham, 0);
	/* "kernel": own 1 ham; site 2 ham */
	get(&cc, "kernel", &c);
	ck_assert_double_eq_tol(c.ham, 1 + 2 * w, 1e-12);
	ck_assert_double_eq_tol(c.site_ham, 2 * w, 1e-12);
	/* only at the site: "casino" */
	get(&cc, "casino", &c);
	ck_assert_double_eq_tol(c.spam, w, 1e-12);
	ck_assert_double_eq_tol(c.site_spam, w, 1e-12);
	/* nowhere */
	ck_assert_int_eq(cc.get(cc.ctx, "zebra", 5, &c), 0);
	ck_assert_double_eq(c.spam + c.ham + c.site_spam + c.site_ham, 0);

	/* a fixed weight, and 0: the list alone */
	ck_assert_int_eq(tokcounts_combined(&cc, &ts, own, site, 0.5, err,
	    sizeof(err)), 0);
	get(&cc, "pills", &c);
	ck_assert_double_eq(c.spam, 2);
	ck_assert_double_eq(c.site_spam, 1);
	ck_assert_int_eq(tokcounts_combined(&cc, &ts, own, site, 0, err,
	    sizeof(err)), 0);
	get(&cc, "casino", &c);
	ck_assert_double_eq(c.spam + c.site_spam, 0);
	ck_assert_int_eq(cc.msgcounts(cc.ctx, &ns, &nh), 0);
	ck_assert_double_eq(ns, 1);
	ck_assert_double_eq(nh, 1);

	/* no store of its own: the site's counts whole */
	ck_assert_int_eq(tokcounts_combined(&cc, &ts, NULL, site, LG_AUTO,
	    err, sizeof(err)), 0);
	ck_assert_double_eq(ts.w, 1);
	get(&cc, "pills", &c);
	ck_assert_double_eq(c.spam, 2);
	ck_assert_double_eq(c.site_spam, 2);
	ck_assert_int_eq(cc.msgcounts(cc.ctx, &ns, &nh), 0);
	ck_assert_double_eq(ns, 3);
	ck_assert_double_eq(nh, 3);
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
		ck_assert_int_eq(classify_clues(&c, 50, clues), 0);
	classify_free(&c);
	return s;
}

/*
 * Weight 1 pools the site's posts with the list's: the score is the
 * score of one store that learnt both; weight 0 is the list alone.
 */
START_TEST(weight_one_pools_weight_zero_ignores)
{
	struct tokdb *own = mem_store(), *site = mem_store(),
	    *both = mem_store();
	struct tokcounts_site ts;
	struct classify_counts cc, cb, co;
	char err[256];
	const char *m = "Subject: cheap kernel pills\n\nreview the offer now\n";
	size_t i;

	for (i = 0; i < 3; i++) {
		learn(site, spam_posts[i], 1);
		learn(site, ham_posts[i], 0);
		learn(both, spam_posts[i], 1);
		learn(both, ham_posts[i], 0);
	}
	learn(own, spam_posts[1], 1);
	learn(own, ham_posts[2], 0);
	learn(both, spam_posts[1], 1);
	learn(both, ham_posts[2], 0);
	ck_assert_int_eq(tokcounts_combined(&cc, &ts, own, site, 1, err,
	    sizeof(err)), 0);
	tokcounts_tokdb(&cb, both);
	ck_assert(score(&cc, m, NULL) == score(&cb, m, NULL));
	ck_assert_int_eq(tokcounts_combined(&cc, &ts, own, site, 0, err,
	    sizeof(err)), 0);
	tokcounts_tokdb(&co, own);
	ck_assert(score(&cc, m, NULL) == score(&co, m, NULL));
	tokdb_close(own);
	tokdb_close(site);
	tokdb_close(both);
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
	ck_assert_int_eq(tokcounts_combined(&cc, &ts, own, site, LG_AUTO, err,
	    sizeof(err)), 0);
	ck_assert_msg(score(&cc, m, NULL) > 0.9 && score(&co, m, NULL) < 0.9,
	    "with the site %g, alone %g", score(&cc, m, NULL),
	    score(&co, m, NULL));
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
	char err[256];
	int found = 0;
	size_t i;

	for (i = 0; i < 3; i++)
		learn(site, spam_posts[i], 1);
	learn(own, spam_posts[0], 1);
	learn(own, ham_posts[0], 0);
	ck_assert_int_eq(tokcounts_combined(&cc, &ts, own, site, 0.5, err,
	    sizeof(err)), 0);
	score(&cc, spam_posts[1], &clues);
	/* "pills": own 1 spam, site 2 spam at weight 0.5: 2 spam, 1 from
	 * the site; "offer" (only at the site): 0.5, all of it */
	for (p = buf_str(&clues); *p != '\0'; p = strchr(p, '\n') + 1) {
		line = p;
		if (strncmp(line, "pills ", 6) == 0) {
			ck_assert_msg(strstr(line, " 2 0 site 1 0\n") != NULL,
			    "%.80s", line);
			found++;
		}
		if (strncmp(line, "offer ", 6) == 0) {
			ck_assert_msg(strstr(line, " 0.50 0 site 0.50 0\n") !=
			    NULL, "%.80s", line);
			found++;
		}
		ck_assert_ptr_nonnull(strstr(line, " site "));
	}
	ck_assert_int_eq(found, 2);
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
	tcase_add_test(tc, rule_setting_overrides);
	tcase_add_test(tc, rule_odd_inputs);
	suite_add_tcase(s, tc);

	tc = tcase_create("combined");
	tcase_add_test(tc, combined_counts);
	tcase_add_test(tc, weight_one_pools_weight_zero_ignores);
	tcase_add_test(tc, young_list_borrows);
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

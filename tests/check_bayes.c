/*
 * check_bayes.c - Robinson's f(w), the chi-square tails, strict ordering
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/bayes.h"
#include "gate/util/buf.h"
#include "gate/classify.h"
#include "db/tokdb.h"

static struct bayes_params
params(double s, double x, double md, unsigned mt)
{
	struct bayes_params p;

	p.robs = s;
	p.robx = x;
	p.min_dev = md;
	p.max_tokens = mt;
	return p;
}

START_TEST(f_hand_values)
{
	struct bayes_params p = params(1, 0.5, 0, 0);

	/* unseen token: the prior x */
	ck_assert_double_eq_tol(bayes_f(&p, 10, 10, 0, 0), 0.5, 1e-15);
	/* 3 of 10 spam, 1 of 10 ham: p = .3/.4 = .75, f = (.5 + 4*.75)/5 */
	ck_assert_double_eq_tol(bayes_f(&p, 10, 10, 3, 1), 0.7, 1e-15);
	/* unequal message counts: b = 2/4, g = 2/8, p = 2/3, n = 4, s = 1 */
	ck_assert_double_eq_tol(bayes_f(&p, 4, 8, 2, 2),
	    (0.5 + 4 * (2.0 / 3)) / 5, 1e-15);
	p = params(0.0178, 0.52, 0.375, 0);
	ck_assert_double_eq_tol(bayes_f(&p, 100, 100, 1, 0),
	    (0.0178 * 0.52 + 1) / 1.0178, 1e-15);
	ck_assert_double_eq_tol(bayes_f(&p, 100, 100, 0, 1),
	    (0.0178 * 0.52) / 1.0178, 1e-15);
}
END_TEST

START_TEST(f_zero_counts)
{
	struct bayes_params p = params(0.0178, 0.52, 0.375, 0);
	double f;

	/* no spam trained yet: a token seen in ham only is hammy */
	f = bayes_f(&p, 0, 5, 0, 3);
	ck_assert(f < 0.01);
	/* nothing trained: prior; inconsistent counts stay finite in [0,1] */
	ck_assert_double_eq_tol(bayes_f(&p, 0, 0, 0, 0), 0.52, 1e-15);
	f = bayes_f(&p, 0, 0, 7, 9);
	ck_assert(isfinite(f) && f >= 0 && f <= 1);
	f = bayes_f(&p, 2, 2, 50, 1);	/* token count above message count */
	ck_assert(isfinite(f) && f > 0.5 && f < 1);
	p.robs = 0;
	ck_assert_double_eq_tol(bayes_f(&p, 0, 0, 0, 0), 0.52, 1e-15);
}
END_TEST

START_TEST(chi2_tails)
{
	double lq, lp, m;
	unsigned nu;

	/* 2 dof: Q = e^{-x2/2} */
	ck_assert_double_eq_tol(bayes_log_chi2q(10, 1), -5, 1e-12);
	/* 4 dof: Q = e^{-m}(1 + m) */
	m = 3.5;
	ck_assert_double_eq_tol(bayes_log_chi2q(2 * m, 2), -m + log(1 + m),
	    1e-12);
	/* 6 dof: e^{-m}(1 + m + m^2/2) */
	ck_assert_double_eq_tol(bayes_log_chi2q(2 * m, 3),
	    -m + log(1 + m + m * m / 2), 1e-12);
	/* huge x2: e^{-m} m^{nu-1}/(nu-1)! dominates, log stays finite */
	m = 1e6;
	nu = 10;
	lq = bayes_log_chi2q(2 * m, nu);
	ck_assert(isfinite(lq));
	ck_assert_double_eq_tol(lq, -m + (nu - 1) * log(m) - lgamma(nu),
	    1e-3);
	m = 5e4;
	nu = 3;
	ck_assert_double_eq_tol(bayes_log_chi2q(2 * m, nu),
	    -m + log(1 + m + m * m / 2), 1e-6);
	/* x2 = 0: Q = 1 */
	ck_assert(bayes_log_chi2q(0, 5) == 0);
	/* lower tail accurate when Q is near 1: 2 dof, P = 1 - e^{-m} */
	bayes_log_chi2(2e-10, 1, &lq, &lp);
	ck_assert_double_eq_tol(lp, log(-expm1(-1e-10)), 1e-9);
	/* 4 dof, tiny m: P = 1 - e^-m (1 + m) ~ m^2/2 */
	m = 1e-4;
	bayes_log_chi2(2 * m, 2, &lq, &lp);
	ck_assert_double_eq_tol(lp, log(-expm1(-m) - m * exp(-m)), 1e-8);
	/* far below the mean: P ~ e^-m m^nu / nu!, no underflow */
	bayes_log_chi2(2 * 1.0, 500, &lq, &lp);
	ck_assert(isfinite(lp));
	ck_assert_double_eq_tol(lp, -1 + 500 * 0 - lgamma(501) +
	    log1p(1.0 / 501 + 1.0 / (501.0 * 502)), 1e-6);
	/* both forms agree where both are accurate */
	bayes_log_chi2(40, 20, &lq, &lp);
	ck_assert_double_eq_tol(exp(lq) + exp(lp), 1, 1e-12);
}
END_TEST

/* score n tokens with the given f-making counts */
static double
score_counts(const struct bayes_params *p, const uint32_t (*cnt)[2],
    size_t n, struct bayes_result *r)
{
	struct bayes_tok *t = calloc(n ? n : 1, sizeof(*t));
	char (*names)[16] = calloc(n ? n : 1, sizeof(*names));
	size_t i;

	ck_assert(t != NULL && names != NULL);
	for (i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "t%zu", i);
		t[i].tok = names[i];
		t[i].len = strlen(names[i]);
		t[i].spam = cnt[i][0];
		t[i].ham = cnt[i][1];
	}
	ck_assert_int_eq(bayes_score(p, 1000, 1000, t, n, r), 0);
	free(t);
	free(names);
	return r->score;
}

START_TEST(strict_order_extremes)
{
	struct bayes_params p = params(0.0178, 0.52, 0.375, 0);
	uint32_t (*cnt)[2] = calloc(1100, sizeof(*cnt));
	struct bayes_result r;
	double prev, s;
	size_t k, i;

	ck_assert(cnt != NULL);
	/* spam side: k spammy tokens (f ~ 0.99) plus 3 hammy ones */
	prev = 0;
	for (k = 50; k < 1050; k++) {
		for (i = 0; i < k; i++) {
			cnt[i][0] = 990;
			cnt[i][1] = 10;
		}
		for (; i < k + 3; i++) {
			cnt[i][0] = 10;
			cnt[i][1] = 990;
		}
		s = score_counts(&p, (const uint32_t (*)[2])cnt, k + 3, &r);
		ck_assert_msg(s > prev && s < 1, "k=%zu s=%.17g prev=%.17g",
		    k, s, prev);
		prev = s;
	}
	/* ham side: more hammy tokens, strictly lower, never 0 */
	prev = 1;
	for (k = 50; k < 1050; k++) {
		for (i = 0; i < k; i++) {
			cnt[i][0] = 10;
			cnt[i][1] = 990;
		}
		s = score_counts(&p, (const uint32_t (*)[2])cnt, k, &r);
		ck_assert_msg(s < prev && s > 0, "k=%zu s=%.17g", k, s);
		prev = s;
	}
	/* strong evidence both ways (both tails vanish): one more mild
	 * spammy token still moves the score up, never to exactly 0.5 */
	prev = 0.5;
	for (k = 1; k < 100; k++) {
		for (i = 0; i < 300; i++) {
			cnt[i][0] = 990;
			cnt[i][1] = 10;
		}
		for (; i < 600; i++) {
			cnt[i][0] = 10;
			cnt[i][1] = 990;
		}
		for (; i < 600 + k; i++) {	/* f ~ 0.95: votes */
			cnt[i][0] = 950;
			cnt[i][1] = 50;
		}
		s = score_counts(&p, (const uint32_t (*)[2])cnt, 600 + k, &r);
		ck_assert_msg(s > prev && s < 0.51, "k=%zu s=%.17g", k, s);
		prev = s;
	}
	/* printed with BAYES_SCORE_FMT, neighbours stay distinct */
	{
		char a[64], b[64];

		for (i = 0; i < 300; i++) {
			cnt[i][0] = 999;
			cnt[i][1] = 1;
		}
		s = score_counts(&p, (const uint32_t (*)[2])cnt, 300, &r);
		snprintf(a, sizeof(a), BAYES_SCORE_FMT, s);
		s = score_counts(&p, (const uint32_t (*)[2])cnt, 301, &r);
		snprintf(b, sizeof(b), BAYES_SCORE_FMT, s);
		ck_assert_str_ne(a, b);
	}
	free(cnt);
}
END_TEST

START_TEST(squeeze_continuous)
{
	double le = log(BAYES_EDGE), s;

	/* at the joins the squeezed value equals I */
	s = bayes_squeeze(log1p(-BAYES_EDGE), le, 0, -20);
	ck_assert_double_eq_tol(s, 1 - BAYES_EDGE, 1e-15);
	s = bayes_squeeze(le, log1p(-BAYES_EDGE), -20, 0);
	ck_assert_double_eq_tol(s, BAYES_EDGE, 1e-20);
	/* strictly monotone far out */
	ck_assert(bayes_squeeze(0, -1e6, 0, -1e6) >
	    bayes_squeeze(0, -1e6 + 5, 0, -1e6 + 5));
	ck_assert(bayes_squeeze(0, -1e6, 0, -1e6) < 1);
	ck_assert(bayes_squeeze(-1e6, 0, -1e6, 0) <
	    bayes_squeeze(-1e6 + 5, 0, -1e6 + 5, 0));
	ck_assert(bayes_squeeze(-1e6, 0, -1e6, 0) > 0);
	/* middle: I itself */
	ck_assert_double_eq_tol(bayes_squeeze(log(0.3), log(0.7), -2, -1),
	    0.3, 1e-15);
	/* both tails vanishing: 0.5 only for an exact tie, else ordered */
	ck_assert(bayes_squeeze(-M_LN2, -M_LN2, -900, -900) == 0.5);
	ck_assert(bayes_squeeze(-M_LN2, -M_LN2, -900, -901) > 0.5);
	ck_assert(bayes_squeeze(-M_LN2, -M_LN2, -900, -901) <
	    bayes_squeeze(-M_LN2, -M_LN2, -899, -901));
	ck_assert(bayes_squeeze(-M_LN2, -M_LN2, -901, -900) < 0.5);
	/* continuous at the middle join: |I - 0.5| = E */
	s = bayes_squeeze(log(0.5 + BAYES_EDGE), log(0.5 - BAYES_EDGE),
	    log(2 * BAYES_EDGE), -800);
	ck_assert_double_eq_tol(s, 0.5 + BAYES_EDGE, 1e-15);
}
END_TEST

START_TEST(middle_is_fisher)
{
	struct bayes_params p = params(1, 0.5, 0, 0);
	uint32_t cnt[2][2] = { { 3, 1 }, { 1, 2 } };
	struct bayes_result r;
	double f1, f2, qs, qh;

	/* two tokens, one stronger (nspam = nham = 1000 in score_counts):
	 * I is well inside the plain band, and the score is I itself */
	score_counts(&p, (const uint32_t (*)[2])cnt, 2, &r);
	f1 = bayes_f(&p, 1000, 1000, 3, 1);
	f2 = bayes_f(&p, 1000, 1000, 1, 2);
	qs = exp(bayes_log_chi2q(-2 * (log(1 - f1) + log(1 - f2)), 2));
	qh = exp(bayes_log_chi2q(-2 * (log(f1) + log(f2)), 2));
	ck_assert_uint_eq(r.nused, 2);
	ck_assert(fabs(qh - qs) > 4 * BAYES_EDGE);
	ck_assert_double_eq_tol(r.score, (1 + qh - qs) / 2, 1e-12);
	/* two opposite tokens: I is 0.5 but for rounding in the sums of
	 * logs, so the score lies in the middle band, on the side of the
	 * sign of ln qH - ln qS (0.5 itself only for an exact tie) */
	cnt[1][1] = 3;
	score_counts(&p, (const uint32_t (*)[2])cnt, 2, &r);
	ck_assert(fabs(r.score - 0.5) <= BAYES_EDGE);
	ck_assert((r.score > 0.5) == (r.log_qh > r.log_qs));
	ck_assert((r.score == 0.5) == (r.log_qh == r.log_qs));
}
END_TEST

START_TEST(min_dev_and_max_tokens)
{
	struct bayes_params p = params(0.0178, 0.52, 0.375, 0);
	struct bayes_tok t[5];
	struct bayes_result r, r2;
	const char *names[5] = { "a", "b", "c", "d", "e" };
	uint32_t cnt[5][2] = { { 500, 500 }, { 999, 1 }, { 0, 0 },
	    { 1, 600 }, { 700, 300 } };
	size_t i;

	memset(t, 0, sizeof(t));
	for (i = 0; i < 5; i++) {
		t[i].tok = names[i];
		t[i].len = 1;
		t[i].spam = cnt[i][0];
		t[i].ham = cnt[i][1];
	}
	ck_assert_int_eq(bayes_score(&p, 1000, 1000, t, 5, &r), 0);
	/* only b (f ~ .999) and d (f ~ .0017) deviate by >= .375 */
	ck_assert_uint_eq(r.nused, 2);
	ck_assert_int_eq(t[0].used, 0);
	ck_assert_int_eq(t[1].used, 1);
	ck_assert_int_eq(t[2].used, 0);
	ck_assert_int_eq(t[3].used, 1);
	ck_assert_int_eq(t[4].used, 0);
	/* cap of 1: the most extreme wins (b: 1 - .999 vs d: .0017) */
	p.max_tokens = 1;
	ck_assert_int_eq(bayes_score(&p, 1000, 1000, t, 5, &r2), 0);
	ck_assert_uint_eq(r2.nused, 1);
	ck_assert_int_eq(t[1].used, 1);
	ck_assert_int_eq(t[3].used, 0);
	ck_assert(r2.score > 0.99);
	/* min_dev 0: every token votes */
	p.max_tokens = 0;
	p.min_dev = 0;
	ck_assert_int_eq(bayes_score(&p, 1000, 1000, t, 5, &r2), 0);
	ck_assert_uint_eq(r2.nused, 5);
	/* nothing voting: 0.5 */
	p.min_dev = 0.49999;
	ck_assert_int_eq(bayes_score(&p, 1000, 1000, t, 3, &r2), 0);
	ck_assert_uint_eq(r2.nused, 0);
	ck_assert_double_eq(r2.score, 0.5);
	ck_assert_int_eq(bayes_score(&p, 0, 0, t, 0, &r2), 0);
	ck_assert_double_eq(r2.score, 0.5);
}
END_TEST

START_TEST(robs_zero_finite)
{
	struct bayes_params p = params(0, 0.5, 0.1, 0);
	uint32_t cnt[3][2] = { { 5, 0 }, { 5, 0 }, { 0, 5 } };
	struct bayes_result r;
	double s;

	s = score_counts(&p, (const uint32_t (*)[2])cnt, 3, &r);
	ck_assert(isfinite(s) && s > 0 && s < 1);
}
END_TEST

START_TEST(verdicts)
{
	ck_assert_int_eq(verdict_of(0.1, 0.3, 0.9), VERDICT_HAM);
	ck_assert_int_eq(verdict_of(0.3, 0.3, 0.9), VERDICT_UNSURE);
	ck_assert_int_eq(verdict_of(0.8999, 0.3, 0.9), VERDICT_UNSURE);
	ck_assert_int_eq(verdict_of(0.9, 0.3, 0.9), VERDICT_SPAM);
	ck_assert_str_eq(verdict_name(VERDICT_HAM), "ham");
	ck_assert_str_eq(verdict_name(VERDICT_UNSURE), "unsure");
	ck_assert_str_eq(verdict_name(VERDICT_SPAM), "spam");
}
END_TEST

/* learn one post as spam or ham into db */
static void
learn(struct tokdb *db, const struct tok_opts *to, const char *msg, int spam)
{
	struct toklist *tl = toklist_new(to->max_tokens);

	ck_assert_int_eq(tok_post((const unsigned char *)msg, strlen(msg), to,
	    tl), 0);
	ck_assert_int_eq(tokdb_begin(db), 0);
	ck_assert_int_ge(tokdb_learn(db, tl, spam, 1, 20000), 0);
	ck_assert_int_eq(tokdb_commit(db), 0);
	toklist_free(tl);
}

START_TEST(classify_memory_store)
{
	static const char *const spam[] = {
	    "Subject: cheap pills\n\nBuy cheap pills now, best price viagra\n",
	    "Subject: win money\n\nWin money now, cheap offer, click here\n",
	    "Subject: best offer\n\nViagra pills, cheap, order now online\n" };
	static const char *const ham[] = {
	    "Subject: meeting notes\n\nThe kernel patch review is on Monday\n",
	    "Subject: patch review\n\nPlease review the attached kernel patch\n",
	    "Subject: release\n\nThe release notes for the kernel are ready\n" };
	struct tok_opts to;
	struct bayes_params bp;
	struct classify c;
	struct tokdb *db;
	struct buf clues = BUF_INIT(65536);
	char err[256];
	const char *m;
	double sspam, sham;
	size_t i;

	tok_opts_default(&to);
	bayes_params_default(&bp);
	ck_assert_int_eq(tokdb_open(":", TOKDB_WRITE | TOKDB_CREATE, 0, &db,
	    err, sizeof(err)), 0);
	for (i = 0; i < 3; i++) {
		learn(db, &to, spam[i], 1);
		learn(db, &to, ham[i], 0);
	}
	ck_assert_int_eq(classify_init(&c, to.max_tokens), 0);
	m = "Subject: cheap viagra\n\nbuy pills now, cheap price\n";
	ck_assert_int_eq(classify_post(&c, db, &bp, &to,
	    (const unsigned char *)m, strlen(m), err, sizeof(err)), 0);
	sspam = c.r.score;
	ck_assert(c.r.nused > 0);
	ck_assert_int_eq(classify_clues(&c, 3, &clues), 0);
	/* at most 3 lines "tok f spam ham", the first the most decisive */
	{
		const char *p = buf_str(&clues);
		size_t nl = 0;
		char tok[64];
		double f;
		unsigned ns, nh;

		for (i = 0; i < clues.len; i++)
			nl += p[i] == '\n';
		ck_assert_uint_eq(nl, 3);
		ck_assert_int_eq(sscanf(p, "%63s %lf %u %u", tok, &f, &ns,
		    &nh), 4);
		ck_assert(f > 0.5 && ns > 0 && nh == 0);
	}
	m = "Subject: kernel patch\n\nreview the release notes please\n";
	ck_assert_int_eq(classify_post(&c, db, &bp, &to,
	    (const unsigned char *)m, strlen(m), err, sizeof(err)), 0);
	sham = c.r.score;
	ck_assert_msg(sspam > 0.5 && sham < 0.5, "spam %g ham %g", sspam,
	    sham);
	/* the same post twice: the same score (state reused) */
	ck_assert_int_eq(classify_post(&c, db, &bp, &to,
	    (const unsigned char *)m, strlen(m), err, sizeof(err)), 0);
	ck_assert(c.r.score == sham);
	/* an empty post scores and stays within (0, 1) */
	ck_assert_int_eq(classify_post(&c, db, &bp, &to,
	    (const unsigned char *)"", 0, err, sizeof(err)), 0);
	ck_assert(c.r.score > 0 && c.r.score < 1);
	classify_free(&c);
	buf_free(&clues);
	tokdb_close(db);
}
END_TEST

static Suite *
bayes_suite(void)
{
	Suite *s = suite_create("bayes");
	TCase *tc;

	tc = tcase_create("robinson");
	tcase_add_test(tc, f_hand_values);
	tcase_add_test(tc, f_zero_counts);
	suite_add_tcase(s, tc);
	tc = tcase_create("chi2");
	tcase_add_test(tc, chi2_tails);
	suite_add_tcase(s, tc);
	tc = tcase_create("score");
	tcase_add_test(tc, middle_is_fisher);
	tcase_add_test(tc, squeeze_continuous);
	tcase_add_test(tc, strict_order_extremes);
	tcase_add_test(tc, min_dev_and_max_tokens);
	tcase_add_test(tc, robs_zero_finite);
	suite_add_tcase(s, tc);
	tc = tcase_create("classify");
	tcase_add_test(tc, verdicts);
	tcase_add_test(tc, classify_memory_store);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(bayes_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/*
 * check_tune.c - tune's parts: the labelled posts of a journal (tset),
 * out-of-fold counts (cv) against a real token store trained on the
 * other folds, the cutoff search, 1-ROCA, the bootstrap, the whole run
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
#include "gate/tune/cutoff.h"
#include "gate/tune/cv.h"
#include "gate/tune/tset.h"
#include "gate/tune/tune.h"
#include "listcfg/listcfg.h"

static struct cutoff_goal
cost_goal(double wh, double ws)
{
	struct cutoff_goal g;

	g.w_ham = wh;
	g.w_spam = ws;
	g.max_ham_held = CUTOFF_NONE;
	g.max_spam_passed = CUTOFF_NONE;
	return g;
}

/* --- cutoffs -------------------------------------------------------------- */

START_TEST(best_cost)
{
	/* ham 0.1 0.2 0.3 0.7; spam 0.25 0.8 0.9 */
	double sc[] = { 0.1, 0.2, 0.3, 0.7, 0.25, 0.8, 0.9 };
	int sp[] = { 0, 0, 0, 0, 1, 1, 1 };
	struct cutoff_set cs;
	struct cutoff_pick pk;
	struct cutoff_goal g = cost_goal(1, 5);

	ck_assert_int_eq(cutoff_set_init(&cs, sc, sp, 7), 0);
	ck_assert_uint_eq(cs.nham, 4);
	ck_assert_uint_eq(cs.nspam, 3);
	/* spam passed costs 5/3 each, ham held 1/4: hold from 0.25 (ham
	 * 0.3 and 0.7 held, cost 0.5) */
	cutoff_best(&cs, &g, 0.6, &pk);
	ck_assert_uint_eq(pk.e.ham_held, 2);
	ck_assert_uint_eq(pk.e.spam_passed, 0);
	ck_assert_int_eq(pk.kept, 0);
	ck_assert(pk.cutoff > 0.2 && pk.cutoff <= 0.25);
	ck_assert_double_eq_tol(pk.e.cost, 0.5, 1e-12);
	/* the current cutoff is kept when it is among the best */
	cutoff_best(&cs, &g, 0.22, &pk);
	ck_assert_int_eq(pk.kept, 1);
	ck_assert_double_eq(pk.cutoff, 0.22);
	/* equal weights: passing the 0.25 spam (1/3) beats holding two
	 * ham (2/4) or one ham and passing it (1/4 + 1/3) */
	g = cost_goal(1, 1);
	cutoff_best(&cs, &g, 0.6, &pk);
	ck_assert_uint_eq(pk.e.spam_passed, 1);
	ck_assert_uint_eq(pk.e.ham_held, 0);
	ck_assert(pk.cutoff > 0.7 && pk.cutoff <= 0.8);
	cutoff_set_free(&cs);
}
END_TEST

START_TEST(best_targets)
{
	double sc[] = { 0.01, 0.02, 0.03, 0.4, 0.6, 0.35, 0.5, 0.9, 0.95,
	    0.99 };
	int sp[] = { 0, 0, 0, 0, 0, 1, 1, 1, 1, 1 };
	struct cutoff_set cs;
	struct cutoff_pick pk;
	struct cutoff_goal g = cost_goal(1, 5);

	ck_assert_int_eq(cutoff_set_init(&cs, sc, sp, 10), 0);
	/* at most 20% of spam passed: one spam (0.35) may pass, and the
	 * ham at 0.4 with it; 0.5 is held: cutoff in (0.4, 0.5] */
	g.max_spam_passed = 0.2;
	cutoff_best(&cs, &g, 0.3, &pk);
	ck_assert_uint_eq(pk.e.spam_passed, 1);
	ck_assert_uint_eq(pk.e.ham_held, 1);
	ck_assert(pk.cutoff > 0.4 && pk.cutoff <= 0.5);
	ck_assert_double_eq(pk.e.excess, 0);
	/* no spam at all: everything from 0.35 up is held */
	g.max_spam_passed = 0;
	cutoff_best(&cs, &g, 0.3, &pk);
	ck_assert_uint_eq(pk.e.spam_passed, 0);
	ck_assert_int_eq(pk.kept, 1);	/* 0.3 already does it */
	/* at most 20% of ham held: 0.6 may be held, so 0.5 is too; the
	 * least spam passed is 1 (0.35) */
	g.max_spam_passed = CUTOFF_NONE;
	g.max_ham_held = 0.2;
	cutoff_best(&cs, &g, 0.3, &pk);
	ck_assert_uint_eq(pk.e.ham_held, 1);
	ck_assert_uint_eq(pk.e.spam_passed, 1);
	ck_assert(pk.cutoff > 0.4 && pk.cutoff <= 0.5);
	/* at most 0% of ham held: the spam at 0.35 and 0.5 pass too */
	g.max_ham_held = 0;
	cutoff_best(&cs, &g, 0.3, &pk);
	ck_assert_uint_eq(pk.e.ham_held, 0);
	ck_assert_uint_eq(pk.e.spam_passed, 2);
	ck_assert(pk.cutoff > 0.6 && pk.cutoff <= 0.9);
	/* both, impossible: the least excess */
	g.max_ham_held = 0;
	g.max_spam_passed = 0;
	cutoff_best(&cs, &g, 0.3, &pk);
	ck_assert(pk.e.excess > 0);
	cutoff_set_free(&cs);
}
END_TEST

START_TEST(best_ends)
{
	double sc[] = { 0.1, 0.2, 0.3, 0.4 };
	int sp[] = { 1, 1, 0, 0 };
	struct cutoff_set cs;
	struct cutoff_pick pk;
	struct cutoff_goal g = cost_goal(1, 5);

	/* spam below ham: holding everything (0) is best at weight 5 */
	ck_assert_int_eq(cutoff_set_init(&cs, sc, sp, 4), 0);
	cutoff_best(&cs, &g, 0.5, &pk);
	ck_assert_double_eq(pk.cutoff, 0);
	ck_assert_uint_eq(pk.e.ham_held, 2);
	/* and passing everything (1) when spam costs nothing */
	g = cost_goal(1, 0);
	cutoff_best(&cs, &g, 0.35, &pk);
	ck_assert_double_eq(pk.cutoff, 1);
	ck_assert_uint_eq(pk.e.ham_held, 0);
	cutoff_set_free(&cs);
}
END_TEST

START_TEST(round_and_above_ham)
{
	double sc[] = { 0.001, 0.0123, 0.9, 0.999, 0.9999 };
	int sp[] = { 0, 0, 1, 0, 1 };
	struct cutoff_set cs;
	double c;

	ck_assert_double_eq(cutoff_round(0.2, 0.4, 0.31), 0.3);
	ck_assert_double_eq(cutoff_round(0.31, 0.4, 0.35), 0.4);
	ck_assert_double_eq(cutoff_round(0.2, 0.4, 0.26), 0.3);
	ck_assert_double_eq(cutoff_round(0.0012, 0.0019, 0.0015), 0.0015);
	ck_assert_double_eq(cutoff_round(0.00101, 0.00109, 0.00105),
	    0.00105);
	ck_assert_double_eq(cutoff_round(0.9999, 1, 0.99995), 1);
	ck_assert_double_eq(cutoff_round(0.312, 0.3125, 0.3123), 0.3123);
	ck_assert_int_eq(cutoff_set_init(&cs, sc, sp, 5), 0);
	/* above the highest ham (0.999), at or below the next (0.9999) */
	c = cutoff_above_ham(&cs, 0.3);
	ck_assert(c > 0.999 && c <= 0.9999);
	/* a floor above every ham stays */
	c = cutoff_above_ham(&cs, 0.99995);
	ck_assert_double_eq(c, 0.99995);
	cutoff_set_free(&cs);
}
END_TEST

START_TEST(roca)
{
	double perfect[] = { 0.1, 0.2, 0.8, 0.9 };
	double one_bad[] = { 0.1, 0.85, 0.8, 0.9 };
	double ties[] = { 0.5, 0.5 };
	int sp4[] = { 0, 0, 1, 1 }, sp2[] = { 0, 1 };
	struct cutoff_set cs;

	ck_assert_int_eq(cutoff_set_init(&cs, perfect, sp4, 4), 0);
	ck_assert_double_eq(cutoff_roca(&cs), 0);
	cutoff_set_free(&cs);
	/* ham 0.85 above spam 0.8: 1 of 4 pairs */
	ck_assert_int_eq(cutoff_set_init(&cs, one_bad, sp4, 4), 0);
	ck_assert_double_eq(cutoff_roca(&cs), 0.25);
	cutoff_set_free(&cs);
	ck_assert_int_eq(cutoff_set_init(&cs, ties, sp2, 2), 0);
	ck_assert_double_eq(cutoff_roca(&cs), 0.5);
	cutoff_set_free(&cs);
}
END_TEST

static struct cutoff_goal
target_goal(double max_ham_held, double max_spam_passed)
{
	struct cutoff_goal g = cost_goal(1, 5);

	g.max_ham_held = max_ham_held;
	g.max_spam_passed = max_spam_passed;
	return g;
}

/* the posts near a target: by hand, against 1-ROCA, K's size */
START_TEST(tail)
{
	/* the 10 lowest spam 0.05 .. 0.95, two more above every ham, and
	 * five ham: 0.1 beats 1 of the 10, 0.3 3, 0.5 5, 0.55 ties the
	 * sixth (5.5), 0.98 is above all ten (the 0.97 spam is not among
	 * them): 24.5 of 10 * 5 pairs */
	double sc[] = { 0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75,
	    0.85, 0.95, 0.97, 0.99, 0.1, 0.3, 0.5, 0.55, 0.98 };
	int sp[17];
	double *big;
	int *bsp;
	struct cutoff_set cs;
	struct cutoff_goal g;
	size_t i;

	for (i = 0; i < 17; i++)
		sp[i] = i < 12;
	ck_assert_int_eq(cutoff_set_init(&cs, sc, sp, 17), 0);
	g = target_goal(CUTOFF_NONE, 0.005);
	ck_assert_double_eq_tol(cutoff_tail(&cs, &g), 24.5 / 50, 1e-12);
	/* K of at least every ham: the 5 ham against every spam is the
	 * whole ranking */
	g = target_goal(0.005, CUTOFF_NONE);
	ck_assert_double_eq_tol(cutoff_tail(&cs, &g), cutoff_roca(&cs),
	    1e-12);
	/* a target's whole class: 1-ROCA too */
	g = target_goal(CUTOFF_NONE, 1);
	ck_assert_double_eq_tol(cutoff_tail(&cs, &g), cutoff_roca(&cs),
	    1e-12);
	/* no target, or two: not a one-target goal */
	g = cost_goal(1, 5);
	ck_assert_double_eq(cutoff_tail(&cs, &g), -1);
	g = target_goal(0.01, 0.01);
	ck_assert_double_eq(cutoff_tail(&cs, &g), -1);
	cutoff_set_free(&cs);
	/* the same mirrored (1 - score, classes swapped), a ham target:
	 * the 10 highest of 12 ham against 5 spam, 24.5 again (taking the
	 * lowest ham instead would not be) */
	{
		double m[17];

		for (i = 0; i < 17; i++) {
			m[i] = 1 - sc[i];
			sp[i] = i >= 12;
		}
		ck_assert_int_eq(cutoff_set_init(&cs, m, sp, 17), 0);
		g = target_goal(0.005, CUTOFF_NONE);
		ck_assert_double_eq_tol(cutoff_tail(&cs, &g), 24.5 / 50,
		    1e-12);
	}
	cutoff_set_free(&cs);
	/* a run of equal scores across the K-th spam: nine spam 0.01 ..
	 * 0.09, then three spam and a ham at 0.5 (one of the three is the
	 * tenth), a ham at 0.6.  The ham at 0.5: 9 + half of 1 = 9.5; the
	 * ham at 0.6: 10.  19.5 of 10 * 2 */
	{
		double r[14] = { 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07,
		    0.08, 0.09, 0.5, 0.5, 0.5, 0.5, 0.6 };
		int rs[14];

		for (i = 0; i < 14; i++)
			rs[i] = i < 12;
		ck_assert_int_eq(cutoff_set_init(&cs, r, rs, 14), 0);
		g = target_goal(CUTOFF_NONE, 0.005);
		ck_assert_double_eq_tol(cutoff_tail(&cs, &g), 19.5 / 20,
		    1e-12);
	}
	cutoff_set_free(&cs);
	for (i = 0; i < 17; i++)
		sp[i] = i < 12;
	/* no ham: 0 */
	ck_assert_int_eq(cutoff_set_init(&cs, sc, sp, 12), 0);
	g = target_goal(CUTOFF_NONE, 0.005);
	ck_assert_double_eq(cutoff_tail(&cs, &g), 0);
	cutoff_set_free(&cs);

	/* 1000 spam, 0.5% of them: K = 4 * 5 = 20, the lowest at 0.01 ..
	 * 0.20; one ham at 0.155 is above 15 of them (K = 10 would say 10
	 * of 10) */
	big = calloc(1001, sizeof(double));
	bsp = calloc(1001, sizeof(int));
	ck_assert_ptr_nonnull(big);
	ck_assert_ptr_nonnull(bsp);
	for (i = 0; i < 1000; i++) {
		big[i] = i < 20 ? 0.01 * (double)(i + 1) : 0.5 +
		    0.0004 * (double)i;
		bsp[i] = 1;
	}
	big[1000] = 0.155;
	ck_assert_int_eq(cutoff_set_init(&cs, big, bsp, 1001), 0);
	g = target_goal(CUTOFF_NONE, 0.005);
	ck_assert_double_eq_tol(cutoff_tail(&cs, &g), 15.0 / 20, 1e-12);
	/* mirrored: the ham is the only one, so K = 1 ham against every
	 * spam: it is above 15 of the 1000 */
	g = target_goal(0.005, CUTOFF_NONE);
	ck_assert_double_eq_tol(cutoff_tail(&cs, &g), 15.0 / 1000, 1e-12);
	cutoff_set_free(&cs);
	free(big);
	free(bsp);
}
END_TEST

START_TEST(bootstrap)
{
	int sp[200];
	unsigned char eo[200], en[200];
	struct cutoff_goal g = cost_goal(1, 5);
	struct cutoff_boot b;
	size_t i;

	for (i = 0; i < 200; i++) {
		sp[i] = i >= 100;
		eo[i] = en[i] = (i % 10 == 0);
	}
	/* the same errors: every resample ties */
	ck_assert_int_eq(cutoff_bootstrap(sp, eo, en, 200, &g, 500, 0.9,
	    &b), 0);
	ck_assert_double_eq(b.better, 0.5);
	ck_assert(b.hh_lo <= 0.1 && b.hh_hi >= 0.1);
	ck_assert(b.hh_lo < b.hh_hi);
	/* the new setting fixes every error: better in every resample
	 * that drew one */
	memset(en, 0, sizeof(en));
	ck_assert_int_eq(cutoff_bootstrap(sp, eo, en, 200, &g, 500, 0.9,
	    &b), 0);
	ck_assert(b.better > 0.99);
	/* no error left: every resample has none, and the interval is
	 * no longer 0 to 0 (sure to 0 points of 100 posts): it reaches the
	 * rate at which 100 posts show no error in 5% of journals */
	ck_assert_double_eq(b.hh_lo, 0);
	ck_assert_double_eq_tol(b.hh_hi, 1 - pow(0.05, 1.0 / 100), 1e-12);
	ck_assert_double_eq_tol(b.sp_hi, 1 - pow(0.05, 1.0 / 100), 1e-12);
	ck_assert(b.hh_hi > 0.029 && b.hh_hi < 0.03);
	/* and every post misjudged: its lower end as far below 1 */
	memset(en, 1, sizeof(en));
	ck_assert_int_eq(cutoff_bootstrap(sp, eo, en, 200, &g, 500, 0.9,
	    &b), 0);
	ck_assert_double_eq(b.hh_hi, 1);
	ck_assert_double_eq_tol(b.hh_lo, pow(0.05, 1.0 / 100), 1e-12);
}
END_TEST

/* a 90% interval leaves 5% of the resamples below it and 5% above: of
 * 20, one each side (1 - 0.9 is 0.0999...98 in binary: the share
 * below came out as 0.999... resamples, taken as none, and the
 * interval of 20 held all of them, of 1000 held 902) */
START_TEST(bootstrap_level)
{
	static int sp[2000];
	static unsigned char e[2000];
	struct cutoff_goal g = cost_goal(1, 5);
	struct cutoff_boot all, b90;
	size_t i;

	/* half the ham and half the spam misjudged */
	for (i = 0; i < 2000; i++) {
		sp[i] = i >= 1000;
		e[i] = i % 2;
	}
	ck_assert_int_eq(cutoff_bootstrap(sp, e, e, 2000, &g, 20, 1, &all),
	    0);
	ck_assert_int_eq(cutoff_bootstrap(sp, e, e, 2000, &g, 20, 0.9, &b90),
	    0);
	/* (the same resamples: the generator starts from a fixed seed;
	 * the ham's 20 fractions are all different, the spam's lowest
	 * two the same) */
	ck_assert(all.hh_lo < all.hh_hi);
	ck_assert(b90.hh_lo > all.hh_lo && b90.hh_hi < all.hh_hi);
	ck_assert(b90.sp_hi < all.sp_hi);
}
END_TEST

START_TEST(nested_calibrates)
{
	/* 40 ham well below, 40 spam well above, except one spam low: a
	 * cutoff chosen on 4/5 of them and tried on the rest passes it
	 * only when it falls in the fold left out */
	double sc[80];
	int sp[80];
	unsigned part[2 * 80];
	struct cutoff_goal g = cost_goal(1, 5);
	struct cutoff_eval e;
	size_t i;

	for (i = 0; i < 80; i++) {
		sp[i] = i >= 40;
		sc[i] = sp[i] ? 0.9 + i * 0.001 : 0.1 + i * 0.001;
	}
	sc[79] = 0.05;
	ck_assert_int_eq(cutoff_partitions(sp, 80, 2, 5, part), 0);
	/* stratified: 8 ham and 8 spam per fold */
	for (i = 0; i < 5; i++) {
		size_t k, nh = 0, ns = 0;

		for (k = 0; k < 80; k++)
			if (part[k] == i) {
				nh += !sp[k];
				ns += sp[k];
			}
		ck_assert_uint_eq(nh, 8);
		ck_assert_uint_eq(ns, 8);
	}
	ck_assert_int_eq(cutoff_nested(sc, sp, 80, part, 2, 5, &g, &g, &e),
	    0);
	/* each partition: the fold holding the low spam passes it */
	ck_assert_uint_eq(e.spam_passed, 2);
	ck_assert_uint_eq(e.ham_held, 0);
}
END_TEST

/* --- the labelled posts ---------------------------------------------------- */

/* a small post with the given body */
static size_t
mkpost(char *buf, size_t sz, const char *subj, const char *body)
{
	return (size_t)snprintf(buf, sz, "From: a@example.org\nSubject: %s\n"
	    "\n%s\n", subj, body);
}

START_TEST(tset_net_class)
{
	struct tok_opts to;
	struct tset *ts;
	char a[256], b[256], c[256], d[256];
	size_t la, lb, lc, ld;

	tok_opts_default(&to);
	ck_assert((ts = tset_new(&to)) != NULL);
	la = mkpost(a, sizeof(a), "one", "hello list friends");
	lb = mkpost(b, sizeof(b), "two", "cheap pills now");
	lc = mkpost(c, sizeof(c), "three", "meeting notes attached");
	ld = mkpost(d, sizeof(d), "four", "never learnt here");
	/* a: learnt twice as ham, counted once */
	ck_assert_int_eq(tset_event(ts, (void *)a, la, 0, 1), 0);
	ck_assert_int_eq(tset_event(ts, (void *)a, la, 0, 1), 0);
	/* b: learnt and unlearnt: left out */
	ck_assert_int_eq(tset_event(ts, (void *)b, lb, 1, 1), 0);
	ck_assert_int_eq(tset_event(ts, (void *)b, lb, 1, -1), 0);
	/* c: approved, then the decision changed to spam */
	ck_assert_int_eq(tset_event(ts, (void *)c, lc, 0, 1), 0);
	ck_assert_int_eq(tset_event(ts, (void *)c, lc, 0, -1), 0);
	ck_assert_int_eq(tset_event(ts, (void *)c, lc, 1, 1), 0);
	/* d: only unlearnt */
	ck_assert_int_eq(tset_event(ts, (void *)d, ld, 1, -1), 0);
	ck_assert_int_eq(tset_finish(ts, 5), 0);
	ck_assert_uint_eq(ts->n, 2);
	ck_assert_uint_eq(ts->nham, 1);
	ck_assert_uint_eq(ts->nspam, 1);
	ck_assert_uint_eq(ts->st.events, 8);
	ck_assert_uint_eq(ts->st.dups, 2);	/* a again, c relearnt */
	ck_assert_uint_eq(ts->st.unknown, 1);
	ck_assert_uint_eq(ts->st.mixed, 1);
	ck_assert(ts->ntokens > 0);
	tset_free(ts);
}
END_TEST

/*
 * cv's out-of-fold counts are a token file's: for every post, its cv
 * score equals bayes_score with the counts of an in-memory token store
 * (db/tokdb) that learnt exactly the posts of the other folds.
 */
#define NP 60
START_TEST(cv_matches_token_store)
{
	uint32_t ids[NP][40];
	uint32_t nids[NP];
	int spam[NP];
	unsigned seed = 7, f;
	struct bayes_params bp;
	struct tok_opts to;
	struct tset *ts;
	struct cv cv;
	double scores[NP];
	struct toklist *tl;
	size_t i, j, k;

	tok_opts_default(&to);
	bayes_params_default(&bp);
	ck_assert((ts = tset_new(&to)) != NULL);
	ck_assert((tl = toklist_new(1000)) != NULL);
	for (i = 0; i < NP; i++) {
		spam[i] = i % 3 == 0;
		nids[i] = 0;
		for (j = 0; j < 40; j++) {
			uint32_t id;

			seed = seed * 1103515245u + 12345u;
			id = (seed >> 16) % 50 + (spam[i] ? 30 : 0);
			for (k = 0; k < nids[i] && ids[i][k] != id; k++)
				;
			if (k == nids[i])
				ids[i][nids[i]++] = id;
		}
		ck_assert_int_eq(tset_add_ids(ts, ids[i], nids[i], spam[i],
		    (uint64_t)i * 7919 + 1), 0);
	}
	ck_assert_int_eq(tset_finish(ts, 5), 0);
	ck_assert_uint_eq(ts->n, NP);
	ck_assert_int_eq(cv_build(&cv, ts, 5), 0);
	for (f = 0; f < 5; f++) {
		struct tokdb *db;
		char err[256], name[16];

		ck_assert_int_eq(tokdb_open(":", TOKDB_WRITE | TOKDB_CREATE, 0,
		    &db, err, sizeof(err)), 0);
		ck_assert_int_eq(tokdb_begin(db), 0);
		for (i = 0; i < NP; i++) {
			/* the tset keeps the posts in the order they came */
			ck_assert_uint_eq(ts->posts[i].n, nids[i]);
			if (ts->posts[i].fold == f)
				continue;
			toklist_reset(tl);
			for (j = 0; j < nids[i]; j++) {
				snprintf(name, sizeof(name), "t%u",
				    (unsigned)ids[i][j]);
				ck_assert_int_ge(toklist_add(tl, name,
				    strlen(name)), 0);
			}
			ck_assert_int_ge(tokdb_learn(db, tl, spam[i], 1, 1), 0);
		}
		ck_assert_int_eq(tokdb_commit(db), 0);
		for (i = 0; i < NP; i++) {
			struct bayes_tok bt[40];
			struct bayes_result r1, r2;
			struct tokcount c;
			uint32_t ns, nh;

			if (ts->posts[i].fold != f)
				continue;
			ck_assert_int_eq(tokdb_msgcounts(db, &ns, &nh), 0);
			ck_assert_uint_eq(ns, cv.nspam[f]);
			ck_assert_uint_eq(nh, cv.nham[f]);
			memset(bt, 0, sizeof(bt));
			for (j = 0; j < nids[i]; j++) {
				snprintf(name, sizeof(name), "t%u",
				    (unsigned)ids[i][j]);
				ck_assert_int_ge(tokdb_get(db, name,
				    strlen(name), &c), 0);
				bt[j].tok = "x";
				bt[j].len = 1;
				bt[j].spam = c.spam;
				bt[j].ham = c.ham;
			}
			ck_assert_int_eq(bayes_score(&bp, ns, nh, bt, nids[i],
			    &r1), 0);
			ck_assert_int_eq(bayes_score_groups(&bp, cv.nspam[f],
			    cv.nham[f], cv.g + cv.gofs[i], cv.gcnt[i], &r2), 0);
			ck_assert_uint_eq(r1.nused, r2.nused);
			ck_assert_double_eq_tol(r1.score, r2.score, 1e-9);
		}
		tokdb_close(db);
	}
	ck_assert_int_eq(cv_score(&cv, &bp, scores), 0);
	for (i = 0; i < NP; i++)
		ck_assert(scores[i] >= 0 && scores[i] <= 1);
	cv_free(&cv);
	toklist_free(tl);
	tset_free(ts);
}
END_TEST

/*
 * Each post's cv score (scores[i], 40 posts in 5 folds) is classify_post's
 * on an in-memory token store that learnt the posts of the other folds,
 * tokenized with to and scored with bp.
 */
static void
match_classify(const struct tset *ts, char posts[][1024], const int *spam,
    const struct tok_opts *tp, const struct bayes_params *bp,
    const double *scores)
{
	struct tok_opts to = *tp;
	size_t i;
	unsigned f;

	for (f = 0; f < 5; f++) {
		struct tokdb *db;
		struct toklist *tl = toklist_new(to.max_tokens);
		struct classify c;
		struct classify_counts cc;
		char err[256];

		ck_assert(tl != NULL);
		ck_assert_int_eq(tokdb_open(":", TOKDB_WRITE | TOKDB_CREATE, 0,
		    &db, err, sizeof(err)), 0);
		ck_assert_int_eq(tokdb_begin(db), 0);
		for (i = 0; i < 40; i++) {
			if (ts->posts[i].fold == f)
				continue;
			ck_assert_int_eq(tok_post((const unsigned char *)
			    posts[i], strlen(posts[i]), &to, tl), 0);
			ck_assert_int_ge(tokdb_learn(db, tl, spam[i], 1, 1), 0);
		}
		ck_assert_int_eq(tokdb_commit(db), 0);
		ck_assert_int_eq(classify_init(&c, to.max_tokens), 0);
		tokcounts_tokdb(&cc, db);
		for (i = 0; i < 40; i++) {
			if (ts->posts[i].fold != f)
				continue;
			ck_assert_int_eq(classify_post(&c, &cc, bp, &to,
			    (const unsigned char *)posts[i], strlen(posts[i]),
			    err, sizeof(err)), 0);
			ck_assert_msg(fabs(c.r.score - scores[i]) < 1e-9,
			    "post %zu: classify %.12g, cv %.12g", i, c.r.score,
			    scores[i]);
		}
		classify_free(&c);
		toklist_free(tl);
		tokdb_close(db);
	}
}

/*
 * With word pairs, cv's scores are still the filter's: for every post,
 * its cv score equals classify_post's on an in-memory token store that
 * learnt the posts of the other folds with pairs (a pair those never
 * saw does not vote in either).
 */
START_TEST(cv_pairs_match_classify)
{
	static const char *const w[] = { "alpha", "bravo", "charlie", "delta",
	    "echo", "foxtrot" };
	char posts[40][1024];
	int spam[40];
	unsigned seed = 11;
	struct tok_opts to;
	struct bayes_params bp;
	struct tset *ts;
	struct cv cv;
	double scores[40];
	size_t i, j, npairs = 0;

	tok_opts_default(&to);
	to.bigrams = 1;
	bayes_params_default(&bp);
	ck_assert((ts = tset_new(&to)) != NULL);
	for (i = 0; i < 40; i++) {
		int k = 0;

		spam[i] = (int)(i % 2);
		k = snprintf(posts[i], sizeof(posts[i]), "Subject: note %zu\n\n",
		    i);
		for (j = 0; j < 5; j++) {
			seed = seed * 1103515245u + 12345u;
			k += snprintf(posts[i] + k, sizeof(posts[i]) - (size_t)k,
			    "%s %s ", w[(seed >> 16) % 6],
			    w[((seed >> 16) + (spam[i] ? 1 : 2)) % 6]);
		}
		ck_assert_int_eq(tset_event(ts, (const unsigned char *)posts[i],
		    strlen(posts[i]), spam[i], 1), 0);
	}
	ck_assert_int_eq(tset_finish(ts, 5), 0);
	ck_assert_uint_eq(ts->n, 40);
	for (i = 0; i < ts->npair; i++)
		npairs += ts->pair[i];
	ck_assert(npairs > 10);
	ck_assert_int_eq(cv_build(&cv, ts, 5), 0);
	ck_assert_int_eq(cv_score(&cv, &bp, scores), 0);
	match_classify(ts, posts, spam, &to, &bp, scores);
	cv_free(&cv);
	tset_free(ts);
}
END_TEST

/* the vote budget in tune's twin without word pairs: it takes the posts
 * as its lead (with pairs) tokenized them, less the pairs, and its
 * cross-validated scores are classify's without pairs all the same (the
 * lead's marks counted the pairs in each paragraph's budget) */
START_TEST(cv_budget_twin_match_classify)
{
	char posts[40][1024];
	int spam[40];
	unsigned seed = 5;
	struct tok_opts to, top;
	struct bayes_params bp;
	struct tset *ts, *lead;
	struct cv cv;
	double scores[40];
	size_t i, j;

	tok_opts_default(&to);
	to.marks = 1;
	top = to;
	top.bigrams = 1;
	bayes_params_default(&bp);
	bp.vote_budget = 1;
	ck_assert((ts = tset_new(&to)) != NULL);
	ck_assert((lead = tset_new(&top)) != NULL);
	ts->twin = lead;
	for (i = 0; i < 40; i++) {
		int k;

		spam[i] = (int)(i % 2);
		/* one paragraph of 36 words: with pairs, its words past
		 * the 10th or so are past the paragraph's budget; without
		 * them, past the 20th */
		k = snprintf(posts[i], sizeof(posts[i]), "Subject: note %zu\n\n",
		    i);
		for (j = 0; j < 36; j++) {
			seed = seed * 1103515245u + 12345u;
			k += snprintf(posts[i] + k, sizeof(posts[i]) - (size_t)k,
			    "%s%u ", spam[i] && j >= 12 ? "sp" : "w",
			    (seed >> 16) % 90);
		}
		ck_assert_int_eq(tset_event(ts, (const unsigned char *)posts[i],
		    strlen(posts[i]), spam[i], 1), 0);
	}
	ck_assert_int_eq(tset_finish(ts, 5), 0);
	ck_assert_int_eq(tset_finish(lead, 5), 0);
	ck_assert_uint_eq(ts->n, 40);
	ck_assert_int_eq(cv_build(&cv, ts, 5), 0);
	ck_assert_int_eq(cv_score(&cv, &bp, scores), 0);
	match_classify(ts, posts, spam, &to, &bp, scores);
	cv_free(&cv);
	tset_free(ts);
	tset_free(lead);
}
END_TEST

/* the whole run on two separable classes and a current cutoff that
 * holds too much ham: a better cutoff, estimates, a confident answer */
START_TEST(run_separable)
{
	struct tok_opts to;
	struct tset *ts;
	struct tune_opts o;
	struct tune_result r;
	uint32_t ids[30];
	unsigned seed = 99;
	char err[512];
	size_t i, j;

	tok_opts_default(&to);
	ck_assert((ts = tset_new(&to)) != NULL);
	for (i = 0; i < 120; i++) {
		int sp = i % 2;

		for (j = 0; j < 30; j++) {
			seed = seed * 1103515245u + 12345u;
			/* each class its own vocabulary, some words shared */
			ids[j] = (uint32_t)(j * 200 + (seed >> 16) % 20 +
			    (sp && j % 3 ? 100 : 0));
		}
		ck_assert_int_eq(tset_add_ids(ts, ids, 30, sp, i + 1), 0);
	}
	ck_assert_int_eq(tset_finish(ts, 5), 0);
	memset(&o, 0, sizeof(o));
	o.folds = 5;
	o.goal = cost_goal(1, 5);
	bayes_params_default(&o.cur);
	o.ham_cutoff = 0;	/* holds everything */
	o.spam_cutoff = 0.9999;
	o.discard_cutoff = LG_OFF;
	o.search = 1;
	ck_assert_int_eq(tune_run(ts, &o, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.nham, 60);
	ck_assert_uint_eq(r.nspam, 60);
	ck_assert(r.cur.e.ham_held > 30);
	ck_assert_uint_eq(r.rec.e.ham_held, 0);
	ck_assert_uint_eq(r.rec.e.spam_passed, 0);
	ck_assert(r.rec.ham_cutoff > 0);
	ck_assert(r.rec.spam_cutoff >= r.rec.ham_cutoff);
	ck_assert(r.boot.better > 0.99);
	ck_assert(r.nsettings > 50);
	/* one search from the defaults rates at most 1 + 6 x 6 + 8 + 6 +
	 * 5 x 3 x 3 = 96 settings: more, and it ran with the vote budget
	 * too (and the list's current setting) */
	ck_assert_msg(r.nsettings > 97, "%u settings scored", r.nsettings);
	/* applied, the recommendation is found again: nothing changes */
	o.cur = r.rec.bp;
	o.ham_cutoff = r.rec.ham_cutoff;
	o.spam_cutoff = r.rec.spam_cutoff;
	tune_result_free(&r);
	ck_assert_int_eq(tune_run(ts, &o, &r, err, sizeof(err)), 0);
	ck_assert_int_eq(r.changed, 0);
	ck_assert_double_eq(r.rec.ham_cutoff, o.ham_cutoff);
	ck_assert_double_eq(r.rec.spam_cutoff, o.spam_cutoff);
	tune_result_free(&r);
	/* too few posts: the reason, no answer */
	ck_assert_int_eq(tune_enough(19, 100, 5, err, sizeof(err)), 0);
	ck_assert(strstr(err, "19 ham") != NULL);
	ck_assert(strstr(err, "at least 20") != NULL);
	ck_assert_int_eq(tune_enough(22, 30, 25, err, sizeof(err)), 0);
	ck_assert_int_eq(tune_enough(30, 30, 5, err, sizeof(err)), 1);
	tset_free(ts);
}
END_TEST

/*
 * Both targets, on overlapping classes: the calibrated goal (targets
 * tightened) must not make the run miss targets a cutoff meets on the
 * journal, nor say that none does.  Seeds and targets where a tightened
 * goal no cutoff met gave a cutoff 4% of ham held for a 2% target (seed
 * 8), or "no cutoff meets both" beside one that did (seeds 2, 11).
 */
START_TEST(run_both_targets)
{
	static const struct {
		unsigned seed;
		double hh, sp;
	} c[] = { { 8, 0.02, 0.2 }, { 12, 0.1, 0.2 }, { 2, 0.1, 0.2 },
	    { 11, 0.1, 0.1 }, { 9, 0.2, 0.2 } };
	struct tok_opts to;
	struct tset *ts;
	struct tune_opts o;
	struct tune_result r;
	struct cutoff_set cs;
	struct cutoff_pick pk;
	uint32_t ids[20];
	unsigned seed;
	char err[512];
	size_t i, j, k;

	for (k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		tok_opts_default(&to);
		ck_assert((ts = tset_new(&to)) != NULL);
		seed = c[k].seed;
		for (i = 0; i < 100; i++) {
			int sp = i % 2;

			for (j = 0; j < 20; j++) {
				seed = seed * 1103515245u + 12345u;
				/* one vocabulary; a quarter of a spam's
				 * words its own */
				ids[j] = (uint32_t)(j * 100 + (seed >> 16) % 10 +
				    (sp && (seed >> 8) % 4 == 0 ? 50 : 0));
			}
			ck_assert_int_eq(tset_add_ids(ts, ids, 20, sp, i + 1),
			    0);
		}
		ck_assert_int_eq(tset_finish(ts, 5), 0);
		memset(&o, 0, sizeof(o));
		o.folds = 5;
		o.goal = target_goal(c[k].hh, c[k].sp);
		bayes_params_default(&o.cur);
		o.ham_cutoff = 0.5;
		o.spam_cutoff = 0.9999;
		o.discard_cutoff = LG_OFF;
		o.search = 0;
		ck_assert_int_eq(tune_run(ts, &o, &r, err, sizeof(err)), 0);
		/* some cutoff meets both targets on these scores */
		ck_assert_int_eq(cutoff_set_init(&cs, r.rec_scores, r.spam,
		    r.n), 0);
		cutoff_best(&cs, &o.goal, o.ham_cutoff, &pk);
		cutoff_set_free(&cs);
		ck_assert_msg(pk.e.excess == 0, "case %zu: no cutoff meets "
		    "the targets", k);
		/* so the recommendation does, and says so */
		ck_assert_msg(r.rec.e.excess == 0, "case %zu: %zu ham held, "
		    "%zu spam passed of %zu and %zu", k, r.rec.e.ham_held,
		    r.rec.e.spam_passed, r.nham, r.nspam);
		ck_assert_msg(!r.infeasible, "case %zu: said infeasible", k);
		tune_result_free(&r);
		tset_free(ts);
	}
}
END_TEST

/* a feature family: the other word_pairs setting wins only when its best
 * is strictly better, only on aligned posts; a twin gets every event */
static struct tset *
family_set(int separable)
{
	struct tok_opts to;
	struct tset *ts;
	uint32_t ids[20];
	unsigned seed = 7;
	size_t i, j;

	tok_opts_default(&to);
	ck_assert((ts = tset_new(&to)) != NULL);
	for (i = 0; i < 80; i++) {
		int sp = i % 2;

		for (j = 0; j < 20; j++) {
			seed = seed * 1103515245u + 12345u;
			/* the same vocabulary for both classes, or each its
			 * own part of it */
			ids[j] = (uint32_t)(j * 100 + (seed >> 16) % 10 +
			    (separable && sp ? 50 : 0));
		}
		ck_assert_int_eq(tset_add_ids(ts, ids, 20, sp, i + 1), 0);
	}
	ck_assert_int_eq(tset_finish(ts, 5), 0);
	return ts;
}

START_TEST(run_family)
{
	struct tset *mixed = family_set(0), *sep = family_set(1), *a, *b;
	struct tok_opts to;
	struct tune_opts o;
	struct tune_result r;
	struct tune_change ch[TUNE_MAX_CHANGES];
	char err[512];
	size_t n;
	const char *post = "Subject: x\n\nhello world\n";

	memset(&o, 0, sizeof(o));
	o.folds = 5;
	o.goal = cost_goal(1, 5);
	bayes_params_default(&o.cur);
	o.ham_cutoff = 0.5;
	o.spam_cutoff = 0.9999;
	o.discard_cutoff = LG_OFF;
	o.search = 1;
	/* the list without pairs cannot tell the classes apart; with them
	 * it can: recommended, and written as word_pairs = yes */
	o.word_pairs = 0;
	o.alt = sep;
	ck_assert_int_eq(tune_run(mixed, &o, &r, err, sizeof(err)), 0);
	ck_assert_int_eq(r.alt_tried, 1);
	ck_assert(r.alt_roca < r.own_roca);
	ck_assert(r.changed & TUNE_WORD_PAIRS);
	ck_assert_int_eq(r.word_pairs, 1);
	ck_assert_uint_eq(r.rec.e.spam_passed + r.rec.e.ham_held, 0);
	n = tune_changes(&r, ch);
	ck_assert_str_eq(ch[n - 1].key, "word_pairs");
	ck_assert_str_eq(ch[n - 1].value, "yes");
	ck_assert_str_eq(ch[n - 1].old, "no");
	tune_result_free(&r);
	/* the list with pairs, the other way worse: kept */
	o.word_pairs = 1;
	o.alt = mixed;
	ck_assert_int_eq(tune_run(sep, &o, &r, err, sizeof(err)), 0);
	ck_assert_int_eq(r.alt_tried, 1);
	ck_assert(!(r.changed & TUNE_WORD_PAIRS));
	ck_assert_int_eq(r.word_pairs, 1);
	tune_result_free(&r);
	/* the same set both ways: a tie keeps the list's setting */
	o.alt = sep;
	ck_assert_int_eq(tune_run(sep, &o, &r, err, sizeof(err)), 0);
	ck_assert(!(r.changed & TUNE_WORD_PAIRS));
	tune_result_free(&r);
	/* posts that do not line up (another post left out): not tried */
	tset_free(mixed);
	tok_opts_default(&to);
	ck_assert((mixed = tset_new(&to)) != NULL);
	{
		uint32_t one = 1;
		size_t i;

		for (i = 0; i < 78; i++)
			ck_assert_int_eq(tset_add_ids(mixed, &one, 1, i % 2,
			    i + 1), 0);
	}
	ck_assert_int_eq(tset_finish(mixed, 5), 0);
	ck_assert_int_eq(tset_aligned(sep, mixed), 0);
	ck_assert_int_eq(tset_aligned(sep, sep), 1);
	o.word_pairs = 0;
	o.alt = sep;
	ck_assert_int_eq(tune_run(mixed, &o, &r, err, sizeof(err)), 0);
	ck_assert_int_eq(r.alt_tried, 0);
	ck_assert(!(r.changed & TUNE_WORD_PAIRS));
	tune_result_free(&r);
	tset_free(mixed);
	tset_free(sep);
	/* a twin gets the same events, tokenized its own way */
	tok_opts_default(&to);
	ck_assert((a = tset_new(&to)) != NULL);
	to.bigrams = 1;
	ck_assert((b = tset_new(&to)) != NULL);
	a->twin = b;
	ck_assert_int_eq(tset_event(a, (const unsigned char *)post,
	    strlen(post), 0, 1), 0);
	ck_assert_int_eq(tset_finish(a, 5), 0);
	ck_assert_int_eq(tset_finish(b, 5), 0);
	ck_assert_uint_eq(a->st.events, 1);
	ck_assert_uint_eq(b->st.events, 1);
	ck_assert_uint_eq(b->n, 1);
	ck_assert_uint_eq(b->posts[0].key, a->posts[0].key);
	ck_assert(b->posts[0].n > a->posts[0].n);	/* "bi:hello world" */
	ck_assert_int_eq(tset_aligned(a, b), 1);
	tset_free(a);
	tset_free(b);
}
END_TEST

/* the rating: the intervals' widths, and a target its class's interval
 * reaches past (a young list's 0.5% spam target, 1 of 281 passed) */
START_TEST(rating)
{
	struct tune_result r;

	memset(&r, 0, sizeof(r));
	r.goal = cost_goal(1, 5);
	r.boot.hh_lo = 0.0049;
	r.boot.hh_hi = 0.0198;
	r.boot.sp_lo = 0;
	r.boot.sp_hi = 0.0107;
	/* no target: by the widths alone (1.5 and 1.1 points) */
	ck_assert_str_eq(tune_rating(&r), "high");
	r.boot.hh_hi = 0.04;
	ck_assert_str_eq(tune_rating(&r), "medium");
	r.boot.hh_hi = 0.08;
	ck_assert_str_eq(tune_rating(&r), "low");
	r.boot.hh_hi = 0.0198;
	/* 0.5% spam passed asked, the interval up to 1.07%: not high */
	r.goal.max_spam_passed = 0.005;
	ck_assert_str_eq(tune_rating(&r), "medium");
	/* up to the target, and no further: high */
	r.boot.sp_hi = 0.005;
	ck_assert_str_eq(tune_rating(&r), "high");
	/* past three times the target: low, however narrow */
	r.boot.sp_hi = 0.0151;
	ck_assert_str_eq(tune_rating(&r), "low");
	r.boot.sp_hi = 0.015;
	ck_assert_str_eq(tune_rating(&r), "medium");
	/* widths still count: 6 points wide is low even within target */
	r.goal.max_spam_passed = 0.1;
	r.boot.sp_hi = 0.06;
	ck_assert_str_eq(tune_rating(&r), "low");
	/* a ham target, the ham interval past it; a target of 0 */
	r.goal = cost_goal(1, 5);
	r.boot.sp_hi = 0.0107;
	r.goal.max_ham_held = 0.01;
	ck_assert_str_eq(tune_rating(&r), "medium");
	r.goal.max_ham_held = 0.005;
	ck_assert_str_eq(tune_rating(&r), "low");
	r.goal.max_ham_held = 0;
	r.boot.hh_lo = r.boot.hh_hi = 0;
	ck_assert_str_eq(tune_rating(&r), "high");
	r.boot.hh_hi = 0.001;
	ck_assert_str_eq(tune_rating(&r), "low");
	/* at the bounds, as the intervals' ends come (counts of 100 and
	 * 1000 posts): 7 - 5 is 2 points, and within 2 points is high
	 * (0.07 - 0.05 is 0.020000000000000004 in binary: it was medium);
	 * 14 - 9 within 5 is medium (it was low) */
	r.goal = cost_goal(1, 5);
	r.boot.hh_lo = 0.05;
	r.boot.hh_hi = 0.07;
	r.boot.sp_lo = 0.01;
	r.boot.sp_hi = 0.02;
	ck_assert_str_eq(tune_rating(&r), "high");
	r.boot.hh_lo = 0.09;
	r.boot.hh_hi = 0.14;
	ck_assert_str_eq(tune_rating(&r), "medium");
	/* up to three times the target, and no further, is medium: 27 of
	 * 1000 spam against 0.9% (3 * 0.009 is 0.026999999999999996) */
	r.boot.hh_lo = 0.05;
	r.boot.hh_hi = 0.07;
	r.goal.max_spam_passed = 0.009;
	r.boot.sp_hi = 0.027;
	ck_assert_str_eq(tune_rating(&r), "medium");
}
END_TEST

/* the keys a recommendation writes read back as the table's types:
 * max_tokens a whole number (50 once came out as "5e+01") */
START_TEST(changes_text)
{
	struct tune_result r;
	struct tune_change ch[TUNE_MAX_CHANGES];
	char buf[32];
	size_t n, i;

	memset(&r, 0, sizeof(r));
	bayes_params_default(&r.cur.bp);
	r.rec.bp = r.cur.bp;
	r.cur.ham_cutoff = 0.3;
	r.rec.ham_cutoff = 0.05;
	r.cur.spam_cutoff = r.rec.spam_cutoff = 0.9999;
	r.rec.bp.max_tokens = 50;
	r.rec.bp.robs = 0.1;
	r.changed = TUNE_MAX_TOKENS | TUNE_ROBS;
	n = tune_changes(&r, ch);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(ch[0].key, "ham_cutoff");
	ck_assert_str_eq(ch[0].value, "0.05");
	ck_assert_str_eq(ch[0].old, "0.3");
	ck_assert_str_eq(ch[1].key, "robs");
	ck_assert_str_eq(ch[1].value, "0.1");
	ck_assert_str_eq(ch[2].key, "max_tokens");
	ck_assert_str_eq(ch[2].value, "50");
	ck_assert_str_eq(ch[2].old, "0");
	for (i = 0; i < n; i++)
		ck_assert(strchr(ch[i].value, 'e') == NULL);
	r.rec.bp.max_tokens = 200;
	n = tune_changes(&r, ch);
	ck_assert_str_eq(ch[2].value, "200");
	ck_assert_str_eq(tune_num(buf, sizeof(buf), 0.9999995156),
	    "0.9999995156");
	ck_assert_str_eq(tune_num(buf, sizeof(buf), 1e-06), "1e-06");
}
END_TEST

static Suite *
tune_suite(void)
{
	Suite *s = suite_create("tune");
	TCase *tc;

	tc = tcase_create("cutoff");
	tcase_add_test(tc, best_cost);
	tcase_add_test(tc, best_targets);
	tcase_add_test(tc, best_ends);
	tcase_add_test(tc, round_and_above_ham);
	tcase_add_test(tc, roca);
	tcase_add_test(tc, tail);
	tcase_add_test(tc, bootstrap);
	tcase_add_test(tc, bootstrap_level);
	tcase_add_test(tc, nested_calibrates);
	tcase_add_test(tc, rating);
	tcase_add_test(tc, changes_text);
	suite_add_tcase(s, tc);
	tc = tcase_create("posts");
	tcase_add_test(tc, tset_net_class);
	tcase_add_test(tc, cv_matches_token_store);
	tcase_add_test(tc, cv_pairs_match_classify);
	tcase_add_test(tc, cv_budget_twin_match_classify);
	tcase_add_test(tc, run_separable);
	tcase_add_test(tc, run_both_targets);
	tcase_add_test(tc, run_family);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(tune_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

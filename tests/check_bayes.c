/*
 * check_bayes.c - Robinson's f(w), the chi-square tails, strict ordering
 */
#include "config.h"

#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/bayes.h"
#include "gate/util/buf.h"
#include "gate/app/tokcounts.h"
#include "gate/classify.h"
#include "gate/verdict.h"
#include "db/tokdb.h"

static struct bayes_params
params(double s, double x, double md, unsigned mt)
{
	struct bayes_params p;

	p.robs = s;
	p.robx = x;
	p.min_dev = md;
	p.max_tokens = mt;
	p.vote_budget = 0;
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
	char (*names)[24] = calloc(n ? n : 1, sizeof(*names));
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

/* the four inputs of bayes_squeeze for one Fisher indicator I */
struct sq_in {
	double li, l1, lqh, lqs;	/* ln I, ln (1 - I), ln qH, ln qS */
};

static double
sq(const struct sq_in *x)
{
	return bayes_squeeze(x->li, x->l1, x->lqh, x->lqs);
}

/* ln (e^a + e^b), a and b finite */
static double
lse(double a, double b)
{
	double hi = a > b ? a : b, lo = a > b ? b : a;

	return hi + log1p(exp(lo - hi));
}

/* ln (1 - e^a) for a < 0, accurate at both ends */
static double
log1mexp(double a)
{
	return a > -M_LN2 ? log(-expm1(a)) : log1p(-exp(a));
}

/* ham side, I = e^L: qH = I and qS = 1 - I, so I - 0.5 = (qH - qS) / 2 */
static struct sq_in
in_low(double L)
{
	struct sq_in x;

	x.li = x.lqh = L;
	x.l1 = x.lqs = log1mexp(L);
	return x;
}

/* spam side, 1 - I = e^L: qS = 1 - I and qH = I */
static struct sq_in
in_high(double L)
{
	struct sq_in x;

	x.l1 = x.lqs = L;
	x.li = x.lqh = log1mexp(L);
	return x;
}

/* I = 0.5 + d, the smaller tail e^b and the larger e^b + 2|d| */
static struct sq_in
in_mid(double d, double b)
{
	struct sq_in x;
	double big = lse(b, log(2 * fabs(d)));

	x.li = log1p(2 * d) - M_LN2;
	x.l1 = log1p(-2 * d) - M_LN2;
	x.lqh = d >= 0 ? big : b;
	x.lqs = d >= 0 ? b : big;
	return x;
}

/* |I - 0.5| = e^L (1 - e^L / 2), far below what I itself can hold: the
 * tails 2 e^L and e^2L, apart in log form however small (I rounds to
 * 0.5, its logs to -ln 2); L >= -DBL_MAX / 2 */
static struct sq_in
in_mid_log(int sign, double L)
{
	struct sq_in x;

	x.li = x.l1 = -M_LN2;
	x.lqh = sign > 0 ? L + M_LN2 : 2 * L;
	x.lqs = sign > 0 ? 2 * L : L + M_LN2;
	return x;
}

/* the larger-tail family at I = 0.5 + d: qH = I, qS = 1 - I */
static struct sq_in
in_mid_half(double d)
{
	return in_mid(d, log1p(-2 * fabs(d)) - M_LN2);
}

/* regions of the score along I, in increasing order */
enum { R_HAM, R_LOW, R_MIDLOW, R_TIE, R_MIDHIGH, R_HIGH, R_SPAM };

struct pt {
	struct sq_in in;
	int region;
	double s;
};

static void
pt_add(struct pt *pt, size_t *n, size_t max, struct sq_in in, int region)
{
	ck_assert(*n < max);
	pt[*n].in = in;
	pt[*n].region = region;
	pt[*n].s = sq(&in);
	(*n)++;
}

/*
 * One sweep of I from e^-1e6 to 1 - e^-1e6 in increasing order, through
 * every join: I = E, I = 0.5 - E, I = 0.5, I = 0.5 + E, 1 - I = E.  The
 * tails are I and 1 - I (large near 0.5).  Below |I - 0.5| = 1e-12
 * (I itself holds no less than about 1e-16), |I - 0.5| goes on in log
 * form down to e^-1e300, with tails of that size.  Grids are log-spaced: 100
 * points per decade of I, 1 - I or |I - 0.5|, and of their logs beyond
 * 1e-300 (20 per decade beyond e^-1e6 in the middle).
 */
START_TEST(squeeze_sweep)
{
	const double le = log(BAYES_EDGE), ln10 = log(10);
	size_t max = 140000, n = 0, k;
	struct pt *pt = calloc(max, sizeof(*pt));
	double t, x, L, d, jump, left, right, wide;
	int side;

	ck_assert(pt != NULL);
	/* ham tail: ln I from -1e6 to -300 ln 10, then I from 1e-300 */
	for (t = 6; t > log10(300 * ln10); t -= 0.01)
		pt_add(pt, &n, max, in_low(-pow(10, t)), R_HAM);
	for (x = -300; x < -3 + 0.005; x += 0.01) {
		L = x * ln10;
		pt_add(pt, &n, max, in_low(L), L <= le ? R_HAM : R_LOW);
	}
	/* plain: I up to 0.25, then 0.5 - I from 0.25 down to 1e-3 */
	for (x = -3 + 0.01; x < log10(0.25); x += 0.01)
		pt_add(pt, &n, max, in_low(x * ln10), R_LOW);
	for (x = log10(0.25); x > -3 + 0.005; x -= 0.01)
		pt_add(pt, &n, max, in_mid_half(-pow(10, x)), R_LOW);
	/* middle, below 0.5: I - 0.5 from -1e-3 to -1e-12, then in log form */
	for (x = -3; x > -12 - 0.005; x -= 0.01) {
		d = -pow(10, x);
		pt_add(pt, &n, max, in_mid_half(d),
		    -d <= BAYES_EDGE ? R_MIDLOW : R_LOW);
	}
	for (t = log10(12 * ln10) + 0.01; t < 6; t += 0.01)
		pt_add(pt, &n, max, in_mid_log(-1, -pow(10, t)), R_MIDLOW);
	for (t = 6; t < 300; t += 0.05)
		pt_add(pt, &n, max, in_mid_log(-1, -pow(10, t)), R_MIDLOW);
	/* the tie */
	pt_add(pt, &n, max, in_mid_log(1, -900), R_TIE);
	pt[n - 1].in.lqs = pt[n - 1].in.lqh;
	pt[n - 1].s = sq(&pt[n - 1].in);
	/* the mirror image above 0.5 */
	for (t = 300 - 0.05; t >= 6; t -= 0.05)
		pt_add(pt, &n, max, in_mid_log(1, -pow(10, t)), R_MIDHIGH);
	for (t = 6 - 0.01; t > log10(12 * ln10) + 0.005; t -= 0.01)
		pt_add(pt, &n, max, in_mid_log(1, -pow(10, t)), R_MIDHIGH);
	for (x = -12; x < -3 + 0.005; x += 0.01) {
		d = pow(10, x);
		pt_add(pt, &n, max, in_mid_half(d),
		    d <= BAYES_EDGE ? R_MIDHIGH : R_HIGH);
	}
	for (x = -3 + 0.01; x < log10(0.25) + 0.005; x += 0.01)
		pt_add(pt, &n, max, in_mid_half(pow(10, x)), R_HIGH);
	for (x = log10(0.25) - 0.01; x > -3 + 0.005; x -= 0.01)
		pt_add(pt, &n, max, in_high(x * ln10), R_HIGH);
	for (x = -3; x > -300 - 0.005; x -= 0.01) {
		L = x * ln10;
		pt_add(pt, &n, max, in_high(L), L <= le ? R_SPAM : R_HIGH);
	}
	for (t = log10(300 * ln10) + 0.01; t < 6 + 0.005; t += 0.01)
		pt_add(pt, &n, max, in_high(-pow(10, t)), R_SPAM);

	for (k = 0; k < n; k++) {
		ck_assert_msg(pt[k].s > 0 && pt[k].s < 1, "k=%zu s=%.17g", k,
		    pt[k].s);
		ck_assert((pt[k].s == 0.5) == (pt[k].region == R_TIE));
		if (k > 0)
			ck_assert_msg(pt[k].s > pt[k - 1].s, "not increasing "
			    "at k=%zu (region %d): %.17g <= %.17g", k,
			    pt[k].region, pt[k].s, pt[k - 1].s);
	}
	/*
	 * Continuity at each join.  Each side of a join has slope 1 there
	 * (the squeezes were built so), so across three grid intervals the
	 * steps differ by little more than the grid ratio (1.023): a step
	 * across the join more than 1.5 times its neighbours is a jump.
	 * The tie is no such join: the middle tends to 0.5 only as
	 * ln |I - 0.5| tends to -inf, and the sweep skips that far.
	 */
	for (k = 1; k + 2 < n; k++) {
		if (pt[k].region == pt[k + 1].region ||
		    pt[k].region == R_TIE || pt[k + 1].region == R_TIE)
			continue;
		jump = pt[k + 1].s - pt[k].s;
		left = pt[k].s - pt[k - 1].s;
		right = pt[k + 2].s - pt[k + 1].s;
		wide = left > right ? left : right;
		ck_assert_msg(jump <= 1.5 * wide, "join %d->%d: jump %g, "
		    "steps %g %g", pt[k].region, pt[k + 1].region, jump, left,
		    right);
	}
	/* every join was crossed, and the tie sits alone between the two
	 * halves of the middle, never closer to 0.5 than E / 711 */
	for (k = 1, side = 0; k < n; k++)
		side += pt[k].region != pt[k - 1].region;
	ck_assert_int_eq(side, 6);
	for (k = 0; pt[k].region != R_TIE; k++)
		;
	ck_assert(0.5 - pt[k - 1].s >= BAYES_EDGE / 711);
	ck_assert(pt[k + 1].s - 0.5 >= BAYES_EDGE / 711);
	free(pt);
}
END_TEST

/*
 * The score follows I, not the size of the tails: on a grid of I - 0.5
 * across the middle band, from 1e-12 to 1e-3 on both sides, posts whose
 * tails are about 0.5, near 1, or tiny (e^-30, e^-1000, e^-1e6 for the
 * smaller one) all score between their neighbours in I.
 */
START_TEST(squeeze_middle_families)
{
	/* the smaller tail; the first family is qH = I, qS = 1 - I */
	const double base[] = { 0, log1p(-2.5e-3), -30, -1000, -1e6 };
	const size_t nf = sizeof(base) / sizeof(base[0]);
	double d, x, lo, hi, prev_hi = 0, s;
	struct sq_in in;
	size_t f;
	int side, k;

	for (side = -1; side <= 1; side += 2)
		for (k = 0; k <= 900; k++) {
			/* I increasing: -1e-3 .. -1e-12, then 1e-12 .. 1e-3 */
			x = side < 0 ? -3 - k * 0.01 : -12 + k * 0.01;
			d = side * pow(10, x);
			lo = 1;
			hi = 0;
			for (f = 0; f < nf; f++) {
				in = f == 0 ? in_mid_half(d) :
				    in_mid(d, base[f]);
				s = sq(&in);
				lo = s < lo ? s : lo;
				hi = s > hi ? s : hi;
			}
			if (side > 0 && k == 0) {
				/* the tie, in every family */
				for (f = 0; f < nf; f++) {
					in = in_mid(0, base[f]);
					in.lqh = in.lqs;
					ck_assert(sq(&in) == 0.5);
				}
				ck_assert(prev_hi < 0.5 && lo > 0.5);
			}
			if (side > 0 || k > 0)
				ck_assert_msg(lo > prev_hi, "I - 0.5 = %g: "
				    "%.17g not above the previous %.17g", d,
				    lo, prev_hi);
			prev_hi = hi;
		}
}
END_TEST

/*
 * Continuity at each join, on a fine grid: I (or 1 - I, or |I - 0.5|)
 * = E (1 + j h).  Away from the join the step is E h; across it the
 * two formulas read different doubles, whose rounding (a few units in
 * the last place of the join value v: ln E is rounded, exp(ln I) is
 * rounded, ln I and ln |qH - qS| are each rounded) may move the step by
 * at most 8 DBL_EPSILON v.  A jump any larger would show.
 */
START_TEST(squeeze_joins_fine)
{
	const double E = BAYES_EDGE, h = 1e-8;
	/* as in squeeze_middle_families */
	const double base[] = { 0, log1p(-2.5e-3), -30, -1000 };
	struct sq_in in;
	double s[41], v, tol, u;
	int join, j, side;
	size_t f;

	for (join = 0; join < 4 + 2 * 3; join++) {
		/* 0 ham, 1 spam; then middle below and above per family */
		side = join < 2 ? 0 : join % 2 ? 1 : -1;
		f = join < 2 ? 0 : (size_t)(join - 2) / 2;
		for (j = -20; j <= 20; j++) {
			u = E * (1 + j * h);
			if (join == 0)
				in = in_low(log(u));
			else if (join == 1)
				in = in_high(log(1 - j * h) + log(E));
			else if (f == 0)
				in = in_mid_half(side * u);
			else
				in = in_mid(side * u, base[f]);
			s[j + 20] = sq(&in);
		}
		if (side < 0)	/* in increasing I */
			for (j = 0; j < 20; j++) {
				v = s[j];
				s[j] = s[40 - j];
				s[40 - j] = v;
			}
		v = join == 0 ? E : join == 1 ? 1 - E : 0.5;
		tol = 8 * DBL_EPSILON * v;
		for (j = 0; j < 40; j++)
			ck_assert_msg(fabs(s[j + 1] - s[j] - E * h) <=
			    1e-6 * E * h + tol, "join %d step %d: %g, not %g",
			    join, j, s[j + 1] - s[j], E * h);
		/* and the join value itself is v +- E */
		ck_assert_msg(fabs(s[20] - (join == 0 ? E : join == 1 ? 1 - E :
		    0.5 + side * E)) <= tol, "join %d at %.17g", join, s[20]);
	}
}
END_TEST

/*
 * The resolution the header promises: about 40 doubles per nat at a
 * million nats (at least 30 here), at each end and in the middle; and
 * the far ends of the doubles stay clear of 0, 0.5 and 1.
 */
START_TEST(squeeze_resolution)
{
	const double ulp_half = DBL_EPSILON / 2;	/* spacing in [.5, 1) */
	struct sq_in a, b;
	double s;

	a = in_high(-1e6);
	b = in_high(-1e6 - 1);
	ck_assert((sq(&b) - sq(&a)) / ulp_half >= 30);
	a = in_mid_log(1, -1e6);
	b = in_mid_log(1, -1e6 + 1);
	ck_assert((sq(&b) - sq(&a)) / ulp_half >= 30);
	/* ends: ln I or ln (1 - I) or ln |I - 0.5| at -DBL_MAX */
	a = in_low(-DBL_MAX);
	s = sq(&a);
	ck_assert(s >= BAYES_EDGE / 711 && s < BAYES_EDGE / 700);
	a = in_high(-DBL_MAX);
	ck_assert(1 - sq(&a) >= BAYES_EDGE / 711);
	a = in_mid_log(1, -DBL_MAX / 2);
	ck_assert(sq(&a) - 0.5 >= BAYES_EDGE / 711);
	a = in_mid_log(-1, -DBL_MAX / 2);
	ck_assert(0.5 - sq(&a) >= BAYES_EDGE / 711);
	/* the plain band is I itself */
	ck_assert_double_eq_tol(bayes_squeeze(log(0.3), log(0.7), -2, -1),
	    0.3, 1e-15);
}
END_TEST

/* score n tokens with the given counts and trained post counts */
static double
score_counts_n(const struct bayes_params *p, uint32_t nspam, uint32_t nham,
    const uint32_t (*cnt)[2], size_t n, struct bayes_result *r)
{
	struct bayes_tok *t = calloc(n ? n : 1, sizeof(*t));
	char (*names)[24] = calloc(n ? n : 1, sizeof(*names));
	size_t i;

	ck_assert(t != NULL && names != NULL);
	for (i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "t%zu", i);
		t[i].tok = names[i];
		t[i].len = strlen(names[i]);
		t[i].spam = cnt[i][0];
		t[i].ham = cnt[i][1];
	}
	ck_assert_int_eq(bayes_score(p, nspam, nham, t, n, r), 0);
	free(t);
	free(names);
	return r->score;
}

/*
 * Where a post's exact Fisher indicator lies, from its log tails, in an
 * order of (band, value) pairs: I < 0.25 by ln I; then I - 0.5 < 0 by
 * -ln |I - 0.5|; the tie; I - 0.5 > 0 by ln |I - 0.5|; I > 0.75 by
 * -ln (1 - I).  Nothing here depends on the score's case split.
 */
struct ikey {
	int band;
	double v;
};

static struct ikey
ikey_of(const struct bayes_result *r)
{
	struct ikey k;
	double hi, diff;

	if (r->log_i < log(0.25)) {
		k.band = 0;
		k.v = r->log_i;
	} else if (r->log_1mi < log(0.25)) {
		k.band = 4;
		k.v = -r->log_1mi;
	} else if (r->log_qh == r->log_qs) {
		k.band = 2;
		k.v = 0;
	} else {
		hi = r->log_qh > r->log_qs ? r->log_qh : r->log_qs;
		diff = fabs(r->log_qh - r->log_qs);
		k.v = hi + log(-expm1(-diff)) - M_LN2;
		k.band = r->log_qh > r->log_qs ? 3 : 1;
		if (k.band == 1)
			k.v = -k.v;
	}
	return k;
}

/* a's indicator is below b's by more than rounding could explain */
static int
ikey_clearly_below(struct ikey a, struct ikey b)
{
	double m = fabs(a.v) > fabs(b.v) ? fabs(a.v) : fabs(b.v);

	if (a.band != b.band)
		return a.band < b.band;
	return b.v - a.v > 1e-6 * (m > 1 ? m : 1);
}

/*
 * Through bayes_score: posts with large tails and I - 0.5 from 1e-10 to
 * 1e-3 (two opposite tokens, the trained counts a little unequal),
 * posts with strong evidence both ways (tails near e^-900), posts with
 * many weak tokens both ways (tails within e^-30 of 1) and small random
 * posts all keep the order of their indicator.  Before the middle band
 * was chosen by |I - 0.5| alone, a post with large tails and
 * I - 0.5 = 3e-8 scored below one with I - 0.5 = e^-900.
 */
START_TEST(score_follows_indicator)
{
	struct bayes_params p = params(1, 0.5, 0, 0);
	enum { MAXP = 120, MAXT = 2100 };
	uint32_t (*cnt)[2] = calloc(MAXT, sizeof(*cnt));
	struct ikey *key = calloc(MAXP, sizeof(*key));
	double *sc = calloc(MAXP, sizeof(*sc));
	struct bayes_result r;
	uint32_t nspam, m, seed = 12345;
	size_t np = 0, a, b, i, k;

	ck_assert(cnt != NULL && key != NULL && sc != NULL);
	/* two opposite tokens, nham = nspam + m */
	for (nspam = 1000000; nspam <= 1000000000; nspam *= 10)
		for (m = 1; m <= 1000; m *= 4) {
			cnt[0][0] = 30;
			cnt[0][1] = 10;
			cnt[1][0] = 10;
			cnt[1][1] = 30;
			sc[np] = score_counts_n(&p, nspam, nspam + m,
			    (const uint32_t (*)[2])cnt, 2, &r);
			key[np++] = ikey_of(&r);
			sc[np] = score_counts_n(&p, nspam + m, nspam,
			    (const uint32_t (*)[2])cnt, 2, &r);
			key[np++] = ikey_of(&r);
		}
	/* strong evidence both ways, k mild tokens on one side */
	p = params(0.0178, 0.52, 0.375, 0);
	for (k = 1; k < 12; k++) {
		for (i = 0; i < 600; i++) {
			cnt[i][0] = i < 300 ? 990 : 10;
			cnt[i][1] = i < 300 ? 10 : 990;
		}
		for (; i < 600 + k; i++) {
			cnt[i][0] = k % 2 ? 950 : 50;
			cnt[i][1] = k % 2 ? 50 : 950;
		}
		sc[np] = score_counts_n(&p, 1000, 1000,
		    (const uint32_t (*)[2])cnt, 600 + k, &r);
		key[np++] = ikey_of(&r);
	}
	/* many weak tokens both ways (f about 0.56 and 0.44) */
	p = params(0.3, 0.6, 0.05, 0);
	for (k = 500; k <= 2000; k += 500)
		for (m = 0; m < 3; m++) {
			for (i = 0; i < k; i++) {
				cnt[i][0] = i % 2 ? 560 : 440;
				cnt[i][1] = i % 2 ? 440 : 560;
			}
			cnt[0][0] += m;	/* a little more spammy */
			sc[np] = score_counts_n(&p, 1000, 1000,
			    (const uint32_t (*)[2])cnt, k, &r);
			key[np++] = ikey_of(&r);
		}
	/* small random posts */
	p = params(0.3, 0.6, 0.05, 0);
	while (np < MAXP) {
		k = 1 + (seed = seed * 1103515245 + 12345) % 7;
		for (i = 0; i < k; i++) {
			cnt[i][0] = (seed = seed * 1103515245 + 12345) >> 16;
			cnt[i][0] %= 101;
			cnt[i][1] = (seed = seed * 1103515245 + 12345) >> 16;
			cnt[i][1] %= 101;
		}
		sc[np] = score_counts_n(&p, 100, 100,
		    (const uint32_t (*)[2])cnt, k, &r);
		key[np++] = ikey_of(&r);
	}
	for (a = 0; a < np; a++) {
		ck_assert(sc[a] > 0 && sc[a] < 1);
		ck_assert((sc[a] == 0.5) == (key[a].band == 2));
		for (b = 0; b < np; b++)
			if (ikey_clearly_below(key[a], key[b]))
				ck_assert_msg(sc[a] < sc[b], "post %zu (%d "
				    "%.17g) scores %.17g, not below post %zu "
				    "(%d %.17g) at %.17g", a, key[a].band,
				    key[a].v, sc[a], b, key[b].band, key[b].v,
				    sc[b]);
	}
	free(cnt);
	free(key);
	free(sc);
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

/*
 * The tuner's compact form scores as bayes_score does: random posts of
 * 1 to 600 tokens with counts drawn so that many share a pair, split
 * into groups of equal counts, under parameters that let every token
 * vote, cut by min_dev, or cap the voters (more groups than the stack
 * holds, too).
 */
START_TEST(groups_match_tokens)
{
	static const struct { double s, x, md; unsigned mt; } ps[] = {
		{ 0.3, 0.6, 0.05, 0 }, { 0.0178, 0.52, 0.375, 0 },
		{ 1, 0.5, 0, 0 }, { 0.3, 0.6, 0.05, 15 },
		{ 0.1, 0.45, 0.1, 150 }, { 3, 0.7, 0.2, 1 } };
	struct bayes_tok *t;
	struct bayes_group *g;
	struct bayes_result r1, r2;
	char (*names)[24];
	uint32_t nspam = 37, nham = 53, s, h;
	unsigned seed = 12345, post, pi;
	size_t n, i, j, ng;

	t = calloc(2000, sizeof(*t));
	g = calloc(2000, sizeof(*g));
	names = calloc(2000, sizeof(*names));
	ck_assert(t != NULL && g != NULL && names != NULL);
	for (post = 0; post < 200; post++) {
		seed = seed * 1103515245u + 12345u;
		n = 1 + (seed >> 8) % 600;
		if (post == 199)
			n = 2000;	/* more groups than BAYES_GROUPS_STACK */
		ng = 0;
		for (i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			if (post == 199) {
				s = (uint32_t)(i % 38);
				h = (uint32_t)(i / 38 % 54);
			} else {
				s = (seed >> 8) % 7 == 0 ? (seed >> 12) % 38 :
				    (seed >> 16) % 2;
				h = (seed >> 20) % 5 == 0 ? (seed >> 4) % 54 :
				    (seed >> 24) % 2;
			}
			snprintf(names[i], sizeof(names[i]), "t%zu", i);
			t[i].tok = names[i];
			t[i].len = strlen(names[i]);
			t[i].spam = s;
			t[i].ham = h;
			/* the vote budget's tail: the later tokens */
			t[i].tail = i >= 25 && (seed >> 28) % 4 != 0;
			for (j = 0; j < ng; j++)
				if (g[j].spam == s && g[j].ham == h &&
				    g[j].tail == (uint32_t)t[i].tail)
					break;
			if (j == ng) {
				g[ng].spam = s;
				g[ng].ham = h;
				g[ng].n = 0;
				g[ng].tail = (uint32_t)t[i].tail;
				ng++;
			}
			g[j].n++;
		}
		for (pi = 0; pi < 2 * sizeof(ps) / sizeof(ps[0]); pi++) {
			size_t k = pi % (sizeof(ps) / sizeof(ps[0]));
			struct bayes_params p = params(ps[k].s, ps[k].x,
			    ps[k].md, ps[k].mt);

			/* with the budget too, and where max_tokens cuts
			 * between equally extreme tokens of the head and
			 * the tail: the head's vote in both */
			p.vote_budget = pi >= sizeof(ps) / sizeof(ps[0]);

			ck_assert_int_eq(bayes_score(&p, nspam, nham, t, n,
			    &r1), 0);
			ck_assert_int_eq(bayes_score_groups(&p, nspam, nham, g,
			    ng, &r2), 0);
			ck_assert_uint_eq(r1.nused, r2.nused);
			ck_assert_double_eq_tol(r1.score, r2.score,
			    1e-9 * (r1.score < 0.5 ? r1.score : 1 - r1.score)
			    + 1e-15);
			ck_assert_double_eq_tol(r1.log_i, r2.log_i,
			    1e-9 * fabs(r1.log_i) + 1e-12);
		}
	}
	free(t);
	free(g);
	free(names);
}
END_TEST

/* the vote budget: tail tokens past BAYES_TAIL_VOTES weigh as that many,
 * off they vote as any other */
START_TEST(budget_scales_tail)
{
	struct bayes_tok t[60], u[60];
	struct bayes_result r1, r2;
	struct bayes_params p = params(0.3, 0.6, 0.05, 0);
	char names[60][8];
	size_t i;

	memset(t, 0, sizeof(t));
	for (i = 0; i < 60; i++) {
		snprintf(names[i], sizeof(names[i]), "t%zu", i);
		t[i].tok = names[i];
		t[i].len = strlen(names[i]);
		/* 8 hammy head tokens, then a spammy tail of 52 */
		t[i].spam = i < 8 ? 1 : 30;
		t[i].ham = i < 8 ? 40 : 2;
		t[i].tail = i >= 8;
	}
	memcpy(u, t, sizeof(t));
	for (i = 0; i < 60; i++)
		u[i].tail = 0;
	/* off: the marks change nothing, to the bit */
	ck_assert_int_eq(bayes_score(&p, 100, 100, t, 60, &r1), 0);
	ck_assert_int_eq(bayes_score(&p, 100, 100, u, 60, &r2), 0);
	ck_assert(r1.score == r2.score && r1.log_i == r2.log_i);
	/* on: the 52 tail votes weigh as BAYES_TAIL_VOTES (20), as 8 head
	 * tokens and 20 of the tail's kind would without it */
	p.vote_budget = 1;
	ck_assert_int_eq(bayes_score(&p, 100, 100, t, 60, &r1), 0);
	ck_assert_uint_eq(r1.nused, 60);
	p.vote_budget = 0;
	ck_assert_int_eq(bayes_score(&p, 100, 100, u, 8 + BAYES_TAIL_VOTES,
	    &r2), 0);
	ck_assert_double_eq_tol(r1.log_i, r2.log_i, 1e-9 * fabs(r2.log_i));
	ck_assert_double_eq_tol(r1.log_1mi, r2.log_1mi,
	    1e-9 * fabs(r2.log_1mi));
	/* and less spammy than all 60 in full */
	ck_assert_int_eq(bayes_score(&p, 100, 100, u, 60, &r2), 0);
	ck_assert(r1.score < r2.score);
	/* a tail of at most BAYES_TAIL_VOTES votes in full */
	p.vote_budget = 1;
	ck_assert_int_eq(bayes_score(&p, 100, 100, t, 8 + BAYES_TAIL_VOTES,
	    &r1), 0);
	ck_assert_int_eq(bayes_score(&p, 100, 100, u, 8 + BAYES_TAIL_VOTES,
	    &r2), 0);
	ck_assert_double_eq_tol(r1.log_i, r2.log_i, 1e-12 * fabs(r2.log_i));
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

/* an in-memory token store that learnt n spam and n ham posts with to */
static struct tokdb *
memory_store(const struct tok_opts *to, const char *const *spam,
    const char *const *ham, size_t n)
{
	struct tokdb *db;
	char err[256];
	size_t i;

	ck_assert_int_eq(tokdb_open(":", TOKDB_WRITE | TOKDB_CREATE, 0, &db,
	    err, sizeof(err)), 0);
	for (i = 0; i < n; i++) {
		learn(db, to, spam[i], 1);
		learn(db, to, ham[i], 0);
	}
	return db;
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
	struct classify_counts cc;
	struct tokdb *db;
	struct buf clues = BUF_INIT(65536);
	char err[256];
	const char *m;
	double sspam, sham;
	size_t i;

	tok_opts_default(&to);
	bayes_params_default(&bp);
	db = memory_store(&to, spam, ham, 3);
	ck_assert_int_eq(classify_init(&c, to.max_tokens), 0);
	tokcounts_tokdb(&cc, db);
	m = "Subject: cheap viagra\n\nbuy pills now, cheap price\n";
	ck_assert_int_eq(classify_post(&c, &cc, &bp, &to,
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
	ck_assert_int_eq(classify_post(&c, &cc, &bp, &to,
	    (const unsigned char *)m, strlen(m), err, sizeof(err)), 0);
	sham = c.r.score;
	ck_assert_msg(sspam > 0.5 && sham < 0.5, "spam %g ham %g", sspam,
	    sham);
	/* the same post twice: the same score (state reused) */
	ck_assert_int_eq(classify_post(&c, &cc, &bp, &to,
	    (const unsigned char *)m, strlen(m), err, sizeof(err)), 0);
	ck_assert(c.r.score == sham);
	/* an empty post scores and stays within (0, 1) */
	ck_assert_int_eq(classify_post(&c, &cc, &bp, &to,
	    (const unsigned char *)"", 0, err, sizeof(err)), 0);
	ck_assert(c.r.score > 0 && c.r.score < 1);
	classify_free(&c);
	buf_free(&clues);
	tokdb_close(db);
}
END_TEST

/*
 * Word pairs never seen do not vote: a store trained without pairs
 * scores a post with word_pairs on exactly as with it off (an unknown
 * token would otherwise vote robx, leaning to spam); once pairs are
 * learnt, they vote.
 */
START_TEST(unknown_pairs_do_not_vote)
{
	static const char *const spam[] = {
	    "Subject: cheap pills\n\nBuy cheap pills now, best price\n",
	    "Subject: win money\n\nWin money now, cheap offer, click here\n" };
	static const char *const ham[] = {
	    "Subject: meeting notes\n\nThe kernel patch review is on Monday\n",
	    "Subject: patch review\n\nPlease review the attached kernel patch\n" };
	static const char *const m =
	    "Subject: review\n\nthe kernel patch is cheap now, please review\n";
	struct tok_opts to, top;
	struct bayes_params bp;
	struct classify c;
	struct classify_counts cc;
	struct tokdb *db;
	struct buf clues = BUF_INIT(65536);
	char err[256];
	double off;
	size_t nbt_off;

	tok_opts_default(&to);
	top = to;
	top.bigrams = 1;
	bayes_params_default(&bp);
	ck_assert(bp.robx != 0.5);	/* an unknown token would vote */
	db = memory_store(&to, spam, ham, 2);
	ck_assert_int_eq(classify_init(&c, to.max_tokens), 0);
	tokcounts_tokdb(&cc, db);
	ck_assert_int_eq(classify_post(&c, &cc, &bp, &to,
	    (const unsigned char *)m, strlen(m), err, sizeof(err)), 0);
	off = c.r.score;
	nbt_off = c.nbt;
	ck_assert_int_eq(classify_post(&c, &cc, &bp, &top,
	    (const unsigned char *)m, strlen(m), err, sizeof(err)), 0);
	ck_assert(toklist_count(c.toks) > nbt_off);	/* pairs made */
	ck_assert_uint_eq(c.nbt, nbt_off);		/* none looked at */
	ck_assert(c.r.score == off);
	/* learnt with pairs, the post's own pairs are known and vote */
	learn(db, &top, m, 0);
	ck_assert_int_eq(classify_post(&c, &cc, &bp, &top,
	    (const unsigned char *)m, strlen(m), err, sizeof(err)), 0);
	ck_assert(c.nbt > nbt_off);
	ck_assert_int_eq(classify_clues(&c, 1000, &clues), 0);
	ck_assert(strstr(buf_str(&clues), "bi:kernel patch") != NULL);
	ck_assert_int_eq(tok_is_pair("bi:a b", 6), 1);
	ck_assert_int_eq(tok_is_pair("bi:", 3), 0);
	ck_assert_int_eq(tok_is_pair("subj:bi:a", 9), 0);
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
	tcase_add_test(tc, squeeze_sweep);
	tcase_add_test(tc, squeeze_middle_families);
	tcase_add_test(tc, squeeze_joins_fine);
	tcase_add_test(tc, squeeze_resolution);
	tcase_add_test(tc, score_follows_indicator);
	tcase_add_test(tc, strict_order_extremes);
	tcase_add_test(tc, min_dev_and_max_tokens);
	tcase_add_test(tc, robs_zero_finite);
	tcase_add_test(tc, groups_match_tokens);
	tcase_add_test(tc, budget_scales_tail);
	suite_add_tcase(s, tc);
	tc = tcase_create("classify");
	tcase_add_test(tc, verdicts);
	tcase_add_test(tc, classify_memory_store);
	tcase_add_test(tc, unknown_pairs_do_not_vote);
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

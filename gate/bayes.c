/*
 * bayes.c - Robinson's f(w), Fisher's chi-square combining, in log form
 *
 * Pure arithmetic on counts handed in by the caller; trusts nothing about
 * them (zero message counts, token counts above the message counts and
 * degenerate parameters are all guarded).  Fails (-1) only when the sort
 * array cannot be allocated.  Never logs, never exits.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gate/bayes.h"
#include "gate/util/xalloc.h"

/* iterations allowed to the lower-tail series (it converges in far fewer
 * whenever it is used, because Q >= 0.99 there) */
#define LOWER_SERIES_MAX	1000000u

/*
 * Chosen by cross-validation, tests/bench/README.md: letting nearly
 * every token vote, with a stronger prior than bogofilter's, ranked
 * best.
 */
void
bayes_params_default(struct bayes_params *p)
{
	p->robs = 0.3;
	p->robx = 0.6;
	p->min_dev = 0.05;
	p->max_tokens = 0;
	p->vote_budget = 0;
}

/* a count as bayes_f uses it: negative and NaN read as 0, huge ones
 * (beyond any store: 2^53) are capped so sums stay finite */
static double
count_of(double v)
{
	if (!(v > 0))
		return 0;
	return v < 9007199254740992.0 ? v : 9007199254740992.0;
}

double
bayes_f_prior(const struct bayes_params *p, double nspam, double nham,
    double spam_w, double ham_w, const struct bayes_prior *pr)
{
	double b, g, pw, n, s = p->robs, x = p->robx;

	/* a usable prior stands in for robx and robs */
	if (pr != NULL && pr->n > 0 && isfinite(pr->n) && pr->f >= 0 &&
	    pr->f <= 1) {
		s = pr->n;
		x = pr->f;
	}
	spam_w = count_of(spam_w);
	ham_w = count_of(ham_w);
	nspam = count_of(nspam);
	nham = count_of(nham);
	b = nspam > 0 ? spam_w / nspam : 0.0;
	g = nham > 0 ? ham_w / nham : 0.0;
	if (b > 1)
		b = 1;
	if (g > 1)
		g = 1;
	n = spam_w + ham_w;
	if (b + g <= 0)
		return x;	/* no usable evidence: the prior */
	pw = b / (b + g);
	if (s + n <= 0)
		return x;
	return (s * x + n * pw) / (s + n);
}

double
bayes_f(const struct bayes_params *p, double nspam, double nham,
    double spam_w, double ham_w)
{
	return bayes_f_prior(p, nspam, nham, spam_w, ham_w, NULL);
}

/* ln (e^a + e^b) without overflow; either may be -inf */
static double
logaddexp(double a, double b)
{
	double hi = a > b ? a : b, lo = a > b ? b : a;

	if (isinf(hi) && hi < 0)
		return hi;
	return hi + log1p(exp(lo - hi));
}

/* terms of the upper series kept from the search for its first one
 * (more are computed again) */
#define SERIES_CACHE	512

/* ln Q by the finite series: -m + ln sum_{i<nu} m^i / i!, summed from
 * the first term within e^-50 of the largest (the terms rise to it and
 * fall after it), so the many negligible terms below it cost nothing
 * when m is large */
static double
log_upper_series(double m, unsigned nu)
{
	double lm, t, mx, sum, cache[SERIES_CACHE];
	unsigned i, imax, lo;

	if (m <= 0 || nu == 0)
		return 0;
	lm = log(m);
	/* the largest term is near i = m */
	imax = m >= (double)(nu - 1) ? nu - 1 : (unsigned)m;
	mx = imax * lm - lgamma((double)imax + 1);
	/* down from the peak to the first negligible term */
	for (lo = imax; lo > 0; lo--) {
		t = (lo - 1) * lm - lgamma((double)lo) - mx;
		if (t < -50)
			break;
		if (imax - (lo - 1) < SERIES_CACHE)
			cache[imax - (lo - 1)] = t;
	}
	sum = 0;
	for (i = lo; i < nu; i++) {
		if (i < imax && imax - i < SERIES_CACHE)
			t = cache[imax - i];
		else
			t = i * lm - lgamma((double)i + 1) - mx;
		if (t < -50) {
			/* far from the peak on the falling side */
			if (i > imax)
				break;
			continue;
		}
		sum += exp(t);
	}
	return -m + mx + log(sum);
}

/* ln (1 - Q) by its own series: -m + ln sum_{i>=nu} m^i / i!; used only
 * where it converges fast (m well below nu) */
static double
log_lower_series(double m, unsigned nu)
{
	double lm, t0, term, sum;
	unsigned k;

	if (nu == 0)
		return -INFINITY;	/* Q is 1 exactly */
	lm = log(m);
	t0 = nu * lm - lgamma((double)nu + 1);
	sum = 1;
	term = 1;
	for (k = 1; k < LOWER_SERIES_MAX; k++) {
		term *= m / ((double)nu + k);
		sum += term;
		if (term < sum * 1e-18)
			break;
	}
	return -m + t0 + log(sum);
}

void
bayes_log_chi2(double x2, unsigned nu, double *lq, double *lp)
{
	double m = x2 / 2, q;

	if (!(m > 0) || nu == 0) {
		*lq = 0;
		*lp = -INFINITY;
		return;
	}
	*lq = log_upper_series(m, nu);
	if (*lq > 0)
		*lq = 0;
	q = exp(*lq);
	if (q < 0.99) {
		*lp = log1p(-q);
		return;
	}
	*lp = log_lower_series(m, nu);
	*lq = log1p(-exp(*lp));
}

double
bayes_log_chi2q(double x2, unsigned nu)
{
	double lq, lp;

	bayes_log_chi2(x2, nu, &lq, &lp);
	return lq;
}

/* phi(D) = 1 / (1 + ln(1 + D)): 1 at 0, strictly falling towards 0 */
static double
squeeze_phi(double d)
{
	if (d < 0)
		d = 0;
	return 1 / (1 + log1p(d));
}

double
bayes_squeeze(double log_i, double log_1mi, double log_qh, double log_qs)
{
	double le = log(BAYES_EDGE), hi, diff, lmid, sq;

	if (log_1mi <= le)
		return 1 - BAYES_EDGE * squeeze_phi(le - log_1mi);
	if (log_i <= le)
		return BAYES_EDGE * squeeze_phi(le - log_i);
	/*
	 * Near 0.5: ln |I - 0.5| = ln |qH - qS| - ln 2 from the log tails,
	 * as exact as ln I when the tails are large and far more when
	 * they are small (ln I rounds to -ln 2 once |I - 0.5| < 1e-16).
	 * The band is chosen by |I - 0.5| alone, whatever the tails: were
	 * it also to ask for small tails, a post with large tails and
	 * I = 0.5 + 1e-7 would score below one with I = 0.5 + 1e-10.
	 */
	hi = log_qh > log_qs ? log_qh : log_qs;
	diff = fabs(log_qh - log_qs);
	if (diff == 0)
		return 0.5;
	lmid = hi + log(-expm1(-diff)) - M_LN2;
	if (lmid <= le) {
		sq = BAYES_EDGE * squeeze_phi(le - lmid);
		return log_qh > log_qs ? 0.5 + sq : 0.5 - sq;
	}
	return exp(log_i);
}

/* the score from the sums of ln f and ln (1 - f) over nuse voting
 * tokens: Fisher's two tails, the indicator, the squeeze */
static void
combine(double sum_lnf, double sum_ln1mf, size_t nuse,
    struct bayes_result *r)
{
	double lqs, lps, lqh, lph;

	r->nused = (unsigned)nuse;
	if (nuse == 0) {
		r->score = 0.5;
		r->log_i = r->log_1mi = log(0.5);
		return;
	}
	bayes_log_chi2(-2 * sum_ln1mf, (unsigned)nuse, &lqs, &lps);
	bayes_log_chi2(-2 * sum_lnf, (unsigned)nuse, &lqh, &lph);
	r->log_qs = lqs;
	r->log_qh = lqh;
	/* I = (qH + pS) / 2 and 1 - I = (pH + qS) / 2: sums, no cancellation */
	r->log_i = logaddexp(lqh, lps) - M_LN2;
	r->log_1mi = logaddexp(lph, lqs) - M_LN2;
	r->score = bayes_squeeze(r->log_i, r->log_1mi, lqh, lqs);
}

/* the voting tokens' sums: the head's, and with a vote budget the
 * tail's apart */
struct sums {
	const struct bayes_params *p;
	double lnf, ln1mf, tlnf, tln1mf;
	size_t n, nt;
};

/* k votes of f (a tail's when tail and the budget is on) */
static void
vote(struct sums *s, double f, size_t k, int tail)
{
	/* keep ln f finite even with robs = 0 (f may then be 0 or 1) */
	const double tiny = 1e-300;
	double a = log(f > tiny ? f : tiny), b = log(1 - f > tiny ? 1 - f :
	    tiny);

	if (tail && s->p->vote_budget) {
		s->tlnf += (double)k * a;
		s->tln1mf += (double)k * b;
		s->nt += k;
	} else {
		s->lnf += (double)k * a;
		s->ln1mf += (double)k * b;
		s->n += k;
	}
}

/* combine the sums: the tail's scaled to BAYES_TAIL_VOTES votes when
 * more voted */
static void
finish(const struct sums *s, struct bayes_result *r)
{
	double k = 1;
	size_t nt = s->nt;

	if (nt > BAYES_TAIL_VOTES) {
		k = (double)BAYES_TAIL_VOTES / (double)nt;
		nt = BAYES_TAIL_VOTES;
	}
	if (s->nt == 0)
		combine(s->lnf, s->ln1mf, s->n, r);
	else
		combine(s->lnf + k * s->tlnf, s->ln1mf + k * s->tln1mf,
		    s->n + nt, r);
	r->nused = (unsigned)(s->n + s->nt);
}

/* sort order of voting candidates when max_tokens cuts: most extreme
 * first, then by bytes, then by position (a total order, so the sums
 * are deterministic); with the vote budget cand_cmp_budget */
struct cand {
	const struct bayes_tok *t;
	size_t idx;
	double dev;
};

static int
cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	size_t n;
	int c;

	if (x->dev != y->dev)
		return x->dev > y->dev ? -1 : 1;
	n = x->t->len < y->t->len ? x->t->len : y->t->len;
	if (n > 0 && x->t->tok != NULL && y->t->tok != NULL &&
	    (c = memcmp(x->t->tok, y->t->tok, n)) != 0)
		return c;
	if (x->t->len != y->t->len)
		return x->t->len < y->t->len ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* cand_cmp with the vote budget: of equally extreme tokens the lower f
 * first, then the head's before the tail's, as bayes_score_groups cuts
 * (which of two tokens votes changes the sums only when f or the mark
 * differs) */
static int
cand_cmp_budget(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev > y->dev ? -1 : 1;
	if (x->t->f != y->t->f)
		return x->t->f < y->t->f ? -1 : 1;
	if ((x->t->tail != 0) != (y->t->tail != 0))
		return x->t->tail == 0 ? -1 : 1;
	return cand_cmp(a, b);
}

int
bayes_score(const struct bayes_params *p, double nspam, double nham,
    struct bayes_tok *toks, size_t n, struct bayes_result *r)
{
	return bayes_score_priors(p, nspam, nham, toks, NULL, n, r);
}

int
bayes_score_priors(const struct bayes_params *p, double nspam, double nham,
    struct bayes_tok *toks, const struct bayes_prior *priors, size_t n,
    struct bayes_result *r)
{
	struct cand *c = NULL;
	struct sums sm;
	size_t i, nc = 0, nuse;
	double f;
	const double tiny = 1e-300;

	memset(r, 0, sizeof(*r));
	memset(&sm, 0, sizeof(sm));
	sm.p = p;
	for (i = 0; i < n; i++) {
		toks[i].f = bayes_f_prior(p, nspam, nham, toks[i].spam,
		    toks[i].ham, priors != NULL ? &priors[i] : NULL);
		toks[i].used = 0;
		if (fabs(toks[i].f - 0.5) >= p->min_dev)
			nc++;
	}
	if (nc > 0) {
		if ((c = xcalloc(nc, sizeof(*c))) == NULL)
			return -1;
		nc = 0;
		for (i = 0; i < n; i++) {
			double dev = fabs(toks[i].f - 0.5);

			if (dev >= p->min_dev) {
				c[nc].t = &toks[i];
				c[nc].idx = i;
				c[nc].dev = dev;
				nc++;
			}
		}
		/* only a cut needs the order; every candidate votes
		 * otherwise, summed in the tokens' own order (first seen
		 * in the post: as deterministic, and the sort was a
		 * twentieth of a batch's instructions) */
		if (p->max_tokens > 0 && nc > p->max_tokens)
			qsort(c, nc, sizeof(*c), p->vote_budget ?
			    cand_cmp_budget : cand_cmp);
	}
	nuse = nc;
	if (p->max_tokens > 0 && nuse > p->max_tokens)
		nuse = p->max_tokens;
	for (i = 0; i < nuse; i++) {
		f = c[i].t->f;
		toks[c[i].idx].used = 1;
		if (p->vote_budget) {
			vote(&sm, f, 1, c[i].t->tail);
			continue;
		}
		/* (vote's sums, inline: the pass path's every token) */
		sm.lnf += log(f > tiny ? f : tiny);
		sm.ln1mf += log(1 - f > tiny ? 1 - f : tiny);
		sm.n++;
	}
	xfree(c);
	finish(&sm, r);
	return 0;
}

/* order of voting groups: most extreme first, then by f (a total order
 * on distinct groups' values, so the sums are deterministic) */
struct gcand {
	double f, dev;
	uint32_t n;
	uint32_t tail;
};

static int
gcand_cmp(const void *a, const void *b)
{
	const struct gcand *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev > y->dev ? -1 : 1;
	if (x->f != y->f)
		return x->f < y->f ? -1 : 1;
	if (x->tail != y->tail)
		return x->tail < y->tail ? -1 : 1;
	return 0;
}

int
bayes_score_groups(const struct bayes_params *p, uint32_t nspam,
    uint32_t nham, const struct bayes_group *g, size_t ng,
    struct bayes_result *r)
{
	struct gcand stack[BAYES_GROUPS_STACK], *c = stack;
	struct sums sm;
	double f;
	size_t i, nc = 0, nuse = 0, total = 0;
	uint32_t take;

	memset(r, 0, sizeof(*r));
	memset(&sm, 0, sizeof(sm));
	sm.p = p;
	if (p->max_tokens == 0) {
		/* every token past min_dev votes: no order needed */
		for (i = 0; i < ng; i++) {
			f = bayes_f(p, nspam, nham, g[i].spam, g[i].ham);
			if (fabs(f - 0.5) < p->min_dev || g[i].n == 0)
				continue;
			vote(&sm, f, g[i].n, g[i].tail != 0);
		}
		finish(&sm, r);
		return 0;
	}
	if (ng > BAYES_GROUPS_STACK &&
	    (c = xcalloc(ng, sizeof(*c))) == NULL)
		return -1;
	for (i = 0; i < ng; i++) {
		f = bayes_f(p, nspam, nham, g[i].spam, g[i].ham);
		if (fabs(f - 0.5) < p->min_dev || g[i].n == 0)
			continue;
		c[nc].f = f;
		c[nc].dev = fabs(f - 0.5);
		c[nc].n = g[i].n;
		c[nc].tail = g[i].tail != 0;
		total += g[i].n;
		nc++;
	}
	if (total > p->max_tokens)
		qsort(c, nc, sizeof(*c), gcand_cmp);
	for (i = 0; i < nc && nuse < p->max_tokens; i++) {
		take = c[i].n;
		if (take > p->max_tokens - nuse)
			take = (uint32_t)(p->max_tokens - nuse);
		vote(&sm, c[i].f, take, c[i].tail != 0);
		nuse += take;
	}
	if (c != stack)
		xfree(c);
	finish(&sm, r);
	return 0;
}

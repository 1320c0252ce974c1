/*
 * cutoff.c - the cost of each cutoff, the best one, 1-ROCA, bootstrap
 *
 * See cutoff.h.  Scores are doubles in [0, 1] (NaN is taken as 0.5, so
 * nothing here depends on its ordering); every loop is bounded by the
 * number of posts.  -1 only when out of memory.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/tune/cutoff.h"
#include "gate/util/xalloc.h"

static int
pt_cmp(const void *a, const void *b)
{
	const struct cutoff_pt *x = a, *y = b;

	if (x->score != y->score)
		return x->score < y->score ? -1 : 1;
	return x->spam - y->spam;
}

int
cutoff_set_init(struct cutoff_set *cs, const double *scores,
    const int *spam, size_t n)
{
	size_t i;

	memset(cs, 0, sizeof(*cs));
	if ((cs->pt = xcalloc(n + 1, sizeof(*cs->pt))) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		cs->pt[i].score = isnan(scores[i]) ? 0.5 : scores[i];
		cs->pt[i].spam = spam[i] != 0;
		cs->pt[i].idx = i;
		if (cs->pt[i].spam)
			cs->nspam++;
		else
			cs->nham++;
	}
	cs->n = n;
	qsort(cs->pt, n, sizeof(*cs->pt), pt_cmp);
	return 0;
}

void
cutoff_set_free(struct cutoff_set *cs)
{
	xfree(cs->pt);
	memset(cs, 0, sizeof(*cs));
}

void
cutoff_rate(const struct cutoff_goal *g, size_t nham, size_t nspam,
    size_t hh, size_t sp, struct cutoff_eval *e)
{
	double fh = nham ? (double)hh / nham : 0;
	double fs = nspam ? (double)sp / nspam : 0;
	int th = g->max_ham_held >= 0, tsp = g->max_spam_passed >= 0;

	e->ham_held = hh;
	e->spam_passed = sp;
	e->cost = g->w_ham * fh + g->w_spam * fs;
	e->excess = 0;
	if (th && fh > g->max_ham_held)
		e->excess += fh - g->max_ham_held;
	if (tsp && fs > g->max_spam_passed)
		e->excess += fs - g->max_spam_passed;
	if (tsp && !th)
		e->primary = fh;
	else if (th && !tsp)
		e->primary = fs;
	else
		e->primary = e->cost;
}

int
cutoff_cmp(const struct cutoff_eval *a, const struct cutoff_eval *b)
{
	if (a->excess != b->excess)
		return a->excess < b->excess ? -1 : 1;
	if (a->primary != b->primary)
		return a->primary < b->primary ? -1 : 1;
	if (a->cost != b->cost)
		return a->cost < b->cost ? -1 : 1;
	return 0;
}

void
cutoff_at(const struct cutoff_set *cs, const struct cutoff_goal *g,
    double c, struct cutoff_eval *e)
{
	size_t i, hh = 0, sp = 0;

	for (i = 0; i < cs->n; i++) {
		if (cs->pt[i].score >= c)
			hh += !cs->pt[i].spam;
		else
			sp += cs->pt[i].spam;
	}
	cutoff_rate(g, cs->nham, cs->nspam, hh, sp, e);
}

/* log-odds, finite for 0 < x < 1 */
static double
logit(double x)
{
	return log(x) - log1p(-x);
}

double
cutoff_round(double lo, double hi, double want)
{
	char buf[64], *e;
	double v, best;
	long long m;
	int p, ex, d, found;

	for (p = 1; p <= 17; p++) {
		/* want to p significant digits, and its neighbours there:
		 * the one inside (lo, hi] nearest to want */
		snprintf(buf, sizeof(buf), "%.*e", p - 1, want);
		if ((e = strchr(buf, 'e')) == NULL)
			return want;
		ex = (int)strtol(e + 1, NULL, 10);
		*e = '\0';
		m = 0;
		for (e = buf; *e != '\0'; e++)
			if (*e >= '0' && *e <= '9')
				m = m * 10 + (*e - '0');
		found = 0;
		best = want;
		for (d = -1; d <= 1; d++) {
			snprintf(buf, sizeof(buf), "%llde%d", m + d, ex - p + 1);
			v = strtod(buf, NULL);
			if (v > lo && v <= hi && v >= 0 && v <= 1 &&
			    (!found || fabs(v - want) < fabs(best - want))) {
				best = v;
				found = 1;
			}
		}
		if (found)
			return best;
	}
	return want;
}

/* the cutoff inside (lo, hi]: see cutoff_best */
static double
inside(double lo, double hi)
{
	double a, b;

	if (lo < 0)
		return 0;		/* hold everything */
	if (hi > 1)
		return 1;		/* pass everything */
	a = lo > 0 ? logit(lo) : logit(hi) - 2 * 36.0;
	b = hi < 1 ? logit(hi) : logit(lo) + 2 * 36.0;
	return cutoff_round(lo, hi, 1 / (1 + exp(-(a + b) / 2)));
}

/* width of (lo, hi] on the log-odds scale (the ends of [0, 1] count as
 * far away) */
static double
width(double lo, double hi)
{
	double a = lo > 0 ? logit(lo) : -40, b = hi < 1 ? logit(hi) : 40;

	return b - a;
}

void
cutoff_best(const struct cutoff_set *cs, const struct cutoff_goal *g,
    double current, struct cutoff_pick *r)
{
	size_t i, j, hh = cs->nham, sp = 0;
	struct cutoff_eval e, best;
	double lo, hi, blo = -1, bhi = 0, bw = -1;
	int have = 0, c, kept = 0;

	/*
	 * Boundaries between runs of equal scores, from holding every post
	 * (before the first) to passing every post (after the last).  At
	 * the boundary before run i, the cutoff lies in (score of the run
	 * before, score of run i].
	 */
	i = 0;
	for (;;) {
		lo = i == 0 ? -1 : cs->pt[i - 1].score;
		hi = i == cs->n ? 2 : cs->pt[i].score;
		cutoff_rate(g, cs->nham, cs->nspam, hh, sp, &e);
		c = have ? cutoff_cmp(&e, &best) : -1;
		if (c < 0) {
			best = e;
			have = 1;
			kept = 0;
			bw = -1;
		}
		if (c <= 0) {
			int cur_in = current > lo && current <= hi;
			double w = width(lo, hi);

			/* among equals: current, then least spam passed,
			 * then the widest */
			if (!kept && (cur_in || bw < 0 ||
			    e.spam_passed < best.spam_passed ||
			    (e.spam_passed == best.spam_passed && w > bw))) {
				best = e;
				blo = lo;
				bhi = hi;
				bw = w;
				kept = cur_in;
			}
		}
		if (i == cs->n)
			break;
		/* step over the run of equal scores starting at i */
		for (j = i; j < cs->n && cs->pt[j].score == cs->pt[i].score; j++) {
			if (cs->pt[j].spam)
				sp++;
			else
				hh--;
		}
		i = j;
	}
	r->e = best;
	r->lo = blo;
	r->hi = bhi;
	r->kept = kept;
	r->cutoff = kept ? current : inside(blo, bhi);
}

int
cutoff_nested(const double *scores, const int *spam, size_t n,
    const unsigned *part, unsigned nparts, unsigned folds,
    const struct cutoff_goal *g, const struct cutoff_goal *rate_g,
    struct cutoff_eval *e)
{
	struct cutoff_set cs;
	struct cutoff_pick pk;
	const unsigned *fold;
	double *sc = NULL;
	int *sp = NULL;
	size_t i, m, hh = 0, spp = 0, nh = 0, ns = 0;
	unsigned f, p;

	if ((sc = xcalloc(n + 1, sizeof(*sc))) == NULL ||
	    (sp = xcalloc(n + 1, sizeof(*sp))) == NULL) {
		xfree(sc);
		return -1;
	}
	for (p = 0; p < nparts; p++) {
		fold = part + (size_t)p * n;
		for (f = 0; f < folds; f++) {
			for (i = 0, m = 0; i < n; i++)
				if (fold[i] != f) {
					sc[m] = scores[i];
					sp[m++] = spam[i];
				}
			if (cutoff_set_init(&cs, sc, sp, m) < 0) {
				xfree(sc);
				xfree(sp);
				return -1;
			}
			cutoff_best(&cs, g, -1, &pk);
			cutoff_set_free(&cs);
			for (i = 0; i < n; i++) {
				if (fold[i] != f)
					continue;
				if (spam[i]) {
					ns++;
					spp += scores[i] < pk.cutoff;
				} else {
					nh++;
					hh += scores[i] >= pk.cutoff;
				}
			}
		}
	}
	cutoff_rate(rate_g, nh, ns, hh, spp, e);
	xfree(sc);
	xfree(sp);
	return 0;
}

double
cutoff_above_ham(const struct cutoff_set *cs, double floor)
{
	size_t i;
	double maxham = -1, next = 1;

	for (i = 0; i < cs->n; i++)
		if (!cs->pt[i].spam)
			maxham = cs->pt[i].score;
	if (maxham < floor)
		return floor;
	for (i = 0; i < cs->n; i++)
		if (cs->pt[i].score > maxham) {
			next = cs->pt[i].score;
			break;
		}
	if (maxham >= 1)
		return 1;
	return inside(maxham, next);
}

double
cutoff_roca(const struct cutoff_set *cs)
{
	size_t i, j, below = 0, h, s;
	double bad = 0;

	if (cs->nham == 0 || cs->nspam == 0)
		return 0;
	for (i = 0; i < cs->n; i = j) {
		h = s = 0;
		for (j = i; j < cs->n && cs->pt[j].score == cs->pt[i].score; j++) {
			if (cs->pt[j].spam)
				s++;
			else
				h++;
		}
		/* ham of this run above every spam before it, half the ties */
		bad += (double)h * below + 0.5 * (double)h * s;
		below += s;
	}
	return bad / ((double)cs->nham * cs->nspam);
}

double
cutoff_tail(const struct cutoff_set *cs, const struct cutoff_goal *g)
{
	int sp = g->max_spam_passed >= 0, th = g->max_ham_held >= 0;
	size_t i, j, h, s, k, in, seen = 0, nk, nother;
	double t, want, bad = 0;

	if (sp == th)
		return -1;
	nk = sp ? cs->nspam : cs->nham;
	nother = sp ? cs->nham : cs->nspam;
	if (nk == 0 || nother == 0)
		return 0;
	t = sp ? g->max_spam_passed : g->max_ham_held;
	want = ceil(CUTOFF_TAIL_MULT * t * (double)nk);
	k = want < CUTOFF_TAIL_MIN ? CUTOFF_TAIL_MIN :
	    want >= (double)nk ? nk : (size_t)want;
	if (k > nk)
		k = nk;
	/*
	 * Runs of equal scores, from the target's end: upwards from the
	 * lowest score for spam (a spam passes below the cutoff), downwards
	 * from the highest for ham.  Each post of the other class is
	 * misranked against the hard posts already passed (seen) and half
	 * of those in its own run.
	 */
	for (i = 0; i < cs->n; i = j) {
		size_t at = sp ? i : cs->n - 1 - i;
		double v = cs->pt[at].score;

		h = s = 0;
		for (j = i; j < cs->n; j++) {
			const struct cutoff_pt *p =
			    &cs->pt[sp ? j : cs->n - 1 - j];

			if (p->score != v)
				break;
			if (p->spam)
				s++;
			else
				h++;
		}
		in = sp ? s : h;
		if (in > k - seen)
			in = k - seen;
		bad += (double)(sp ? h : s) * ((double)seen + 0.5 * in);
		seen += in;
	}
	return bad / ((double)k * (double)nother);
}

/* splitmix64: a small fixed-seed generator, so runs repeat */
static uint64_t
mix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ z >> 30) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ z >> 27) * 0x94d049bb133111ebULL;
	return z ^ z >> 31;
}

int
cutoff_partitions(const int *spam, size_t n, unsigned nparts,
    unsigned folds, unsigned *part)
{
	uint64_t seed = 0x706172746974696fULL;
	size_t *idx, i, j, m, k, t;
	unsigned p, *fold;
	int cls;

	if (folds == 0)
		folds = 1;
	if ((idx = xcalloc(n + 1, sizeof(*idx))) == NULL)
		return -1;
	for (p = 0; p < nparts; p++) {
		fold = part + (size_t)p * n;
		k = 0;
		for (cls = 0; cls <= 1; cls++) {
			/* the class's posts shuffled (Fisher-Yates), then dealt
			 * in turn, spam going on where ham stopped */
			for (i = 0, m = 0; i < n; i++)
				if ((spam[i] != 0) == cls)
					idx[m++] = i;
			for (j = m; j > 1; j--) {
				i = (size_t)(mix(&seed) % j);
				t = idx[i];
				idx[i] = idx[j - 1];
				idx[j - 1] = t;
			}
			for (i = 0; i < m; i++)
				fold[idx[i]] = (unsigned)(k++ % folds);
		}
	}
	xfree(idx);
	return 0;
}

static int
dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* the ends of the interval of one class's fraction (its n posts, by
 * index in idx) where none or all of them is misjudged: see below */
static void
tail_ends(const unsigned char *err, const size_t *idx, size_t n,
    double alpha, double *lo, double *hi)
{
	size_t i, k = 0;
	double edge;

	if (n == 0)
		return;
	for (i = 0; i < n; i++)
		k += err[idx[i]] != 0;
	edge = pow(alpha, 1.0 / (double)n);
	if (k == 0 && 1 - edge > *hi)
		*hi = 1 - edge;
	if (k == n && edge < *lo)
		*lo = edge;
}

int
cutoff_bootstrap(const int *spam, const unsigned char *err_old,
    const unsigned char *err_new, size_t n, const struct cutoff_goal *g,
    unsigned b, double level, struct cutoff_boot *out)
{
	size_t *ham = NULL, *sp = NULL, nh = 0, ns = 0, i, k;
	double *fh = NULL, *fs = NULL, better = 0;
	uint64_t seed = 0x6c69737467617465ULL;	/* "listgate" */
	struct cutoff_eval eo, en;
	unsigned r;
	int rc = -1, c;

	memset(out, 0, sizeof(*out));
	out->resamples = b;
	out->level = level;
	if (b == 0)
		return 0;
	ham = xcalloc(n + 1, sizeof(*ham));
	sp = xcalloc(n + 1, sizeof(*sp));
	fh = xcalloc(b, sizeof(*fh));
	fs = xcalloc(b, sizeof(*fs));
	if (ham == NULL || sp == NULL || fh == NULL || fs == NULL)
		goto out;
	for (i = 0; i < n; i++) {
		if (spam[i])
			sp[ns++] = i;
		else
			ham[nh++] = i;
	}
	for (r = 0; r < b; r++) {
		size_t oh = 0, os = 0, nh_ = 0, ns_ = 0;

		for (k = 0; k < nh; k++) {
			i = ham[mix(&seed) % nh];
			oh += err_old[i];
			nh_ += err_new[i];
		}
		for (k = 0; k < ns; k++) {
			i = sp[mix(&seed) % ns];
			os += err_old[i];
			ns_ += err_new[i];
		}
		cutoff_rate(g, nh, ns, oh, os, &eo);
		cutoff_rate(g, nh, ns, nh_, ns_, &en);
		c = cutoff_cmp(&en, &eo);
		better += c < 0 ? 1 : c == 0 ? 0.5 : 0;
		fh[r] = nh ? (double)nh_ / nh : 0;
		fs[r] = ns ? (double)ns_ / ns : 0;
	}
	qsort(fh, b, sizeof(*fh), dbl_cmp);
	qsort(fs, b, sizeof(*fs), dbl_cmp);
	/* the resamples left below the interval, as many above: 5% of
	 * them at a level of 0.9 (1 - 0.9 is 0.0999...98 in binary, and
	 * 0.05 of 1000 came out as 49.99...: 49 each side, 902 held) */
	k = (size_t)floor((1 - level) / 2 * b + 1e-9);
	if (k >= b)
		k = b - 1;
	out->hh_lo = fh[k];
	out->hh_hi = fh[b - 1 - k];
	out->sp_lo = fs[k];
	out->sp_hi = fs[b - 1 - k];
	/* a class none of whose posts is misjudged (or all) resamples to
	 * the same fraction every time: an interval of 0 to 0 said 20 ham
	 * and 20 spam without an error were sure to 0 points (rated high,
	 * a target of 0.5% beyond doubt), where a true rate of 10% shows
	 * no error in 20 posts one time in eight.  Its end reaches the
	 * rate that would show none in the share of journals the interval
	 * leaves out at that end: 1 - 0.05^(1/n), about 3/n */
	tail_ends(err_new, ham, nh, (1 - level) / 2, &out->hh_lo, &out->hh_hi);
	tail_ends(err_new, sp, ns, (1 - level) / 2, &out->sp_lo, &out->sp_hi);
	out->better = better / b;
	rc = 0;
out:
	xfree(ham);
	xfree(sp);
	xfree(fh);
	xfree(fs);
	return rc;
}

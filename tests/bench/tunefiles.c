/*
 * tunefiles.c - tune's cross-validation and search on posts named on
 * standard input, without a journal (a developer's tool for timing and
 * for the benchmark's checks; not installed)
 *
 *	tunefiles [-k FOLDS] [-P MAX_SPAM_PASSED] [-H MAX_HAM_HELD] [-n] [-w]
 *	    [-c KEY=VALUE,...] < list
 *
 * Reads "S PATH" or "H PATH" lines; prints the current and recommended
 * settings with their cross-validated errors and the time each step
 * took.  -n: cutoffs only (no parameter search).  -w: word pairs (the
 * feature family) searched too, as `listgate tune` does; the last line
 * is then "list-conf: KEY=VALUE ..." with the keys a list's
 * configuration would get (tests/bench/tunerule.py reads it).  -c: the
 * list's settings now, in those keys (default: the defaults), as a list
 * tuned before would have them (tests/bench/nightly.py).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gate/mail/source.h"
#include "gate/tok.h"
#include "gate/tune/tset.h"
#include "gate/tune/tune.h"
#include "gate/util/clock.h"
#include "listcfg/listcfg.h"

/* a number for -c: finite, in [lo, hi]: 0, or -1 */
static int
num(const char *v, double lo, double hi, double *r)
{
	char *e;

	*r = strtod(v, &e);
	return e == v || *e != '\0' || !isfinite(*r) || *r < lo || *r > hi ?
	    -1 : 0;
}

/* one KEY=VALUE of -c into the current settings: 0, or -1 */
static int
set_cur(struct tune_opts *o, struct tok_opts *to, const char *kv)
{
	const char *v = strchr(kv, '=');
	double d;
	size_t n;

	if (v == NULL)
		return -1;
	n = (size_t)(v++ - kv);
	if (n == 11 && strncmp(kv, "vote_budget", n) == 0) {
		if (strcmp(v, "yes") != 0 && strcmp(v, "no") != 0)
			return -1;
		o->cur.vote_budget = strcmp(v, "yes") == 0;
		return 0;
	}
	if (n == 10 && strncmp(kv, "word_pairs", n) == 0) {
		if (strcmp(v, "yes") != 0 && strcmp(v, "no") != 0)
			return -1;
		to->bigrams = strcmp(v, "yes") == 0;
		return 0;
	}
	if (num(v, 0, 1000, &d) < 0)
		return -1;
	if (n == 4 && strncmp(kv, "robs", n) == 0)
		o->cur.robs = d;
	else if (n == 4 && strncmp(kv, "robx", n) == 0 && d <= 1)
		o->cur.robx = d;
	else if (n == 7 && strncmp(kv, "min_dev", n) == 0 && d < 0.5)
		o->cur.min_dev = d;
	else if (n == 10 && strncmp(kv, "max_tokens", n) == 0 &&
	    d == (unsigned)d)
		o->cur.max_tokens = (unsigned)d;
	else if (n == 10 && strncmp(kv, "ham_cutoff", n) == 0 && d <= 1)
		o->ham_cutoff = d;
	else if (n == 11 && strncmp(kv, "spam_cutoff", n) == 0 && d <= 1)
		o->spam_cutoff = d;
	else
		return -1;
	return 0;
}

static double
cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	struct tok_opts to;
	struct tune_opts o;
	struct tune_result r;
	struct tset *ts, *ts2 = NULL;
	struct tok_opts to2;
	int pairs = 0;
	char line[4096], err[1024];
	double t0, c0, t1, c1;
	int ch;
	char *cur = NULL, *kv, *next;

	memset(&o, 0, sizeof(o));
	o.folds = 5;
	o.search = 1;
	o.goal.w_ham = 1;
	o.goal.w_spam = 5;
	o.goal.max_ham_held = CUTOFF_NONE;
	o.goal.max_spam_passed = CUTOFF_NONE;
	while ((ch = getopt(argc, argv, "k:P:H:nwc:")) != -1) {
		switch (ch) {
		case 'k': o.folds = (unsigned)atoi(optarg); break;
		case 'P': o.goal.max_spam_passed = strtod(optarg, NULL); break;
		case 'H': o.goal.max_ham_held = strtod(optarg, NULL); break;
		case 'n': o.search = 0; break;
		case 'w': pairs = 1; break;
		case 'c': cur = optarg; break;
		default: return 2;
		}
	}
	bayes_params_default(&o.cur);
	o.ham_cutoff = LG_DEFAULT_HAM_CUTOFF;
	o.spam_cutoff = LG_DEFAULT_SPAM_CUTOFF;
	o.discard_cutoff = LG_OFF;
	tok_opts_default(&to);
	for (kv = cur; kv != NULL; kv = next) {
		if ((next = strchr(kv, ',')) != NULL)
			*next++ = '\0';
		if (set_cur(&o, &to, kv) < 0) {
			fprintf(stderr, "tunefiles: -c: bad setting %s\n", kv);
			return 2;
		}
	}
	to2 = to;
	to2.bigrams = !to.bigrams;
	o.word_pairs = to.bigrams;
	if ((ts = tset_new(&to)) == NULL ||
	    (pairs && (ts2 = tset_new(&to2)) == NULL))
		return 1;
	t0 = clock_now_s();
	c0 = cpu_s();
	while (fgets(line, sizeof(line), stdin) != NULL) {
		struct source *src;
		struct source_post sp;
		size_t n = strlen(line);

		if (n > 0 && line[n - 1] == '\n')
			line[--n] = 0;
		if (n < 3)
			continue;
		if (source_open(line + 2, &src, err, sizeof(err)) < 0) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		while (source_next(src, &sp, err, sizeof(err)) == 1)
			if (tset_event(ts, sp.data, sp.len, line[0] == 'S',
			    1) < 0 || (ts2 != NULL && tset_event(ts2, sp.data,
			    sp.len, line[0] == 'S', 1) < 0))
				return 1;
		source_close(src);
	}
	if (tset_finish(ts, o.folds) < 0 ||
	    (ts2 != NULL && tset_finish(ts2, o.folds) < 0))
		return 1;
	o.alt = ts2;
	t1 = clock_now_s();
	c1 = cpu_s();
	printf("read+tokenize: %zu ham %zu spam, %zu tokens: %.2f s wall, "
	    "%.2f s cpu\n", ts->nham, ts->nspam, ts->ntokens, t1 - t0,
	    c1 - c0);
	if (tune_run(ts, &o, &r, err, sizeof(err)) < 0) {
		fprintf(stderr, "tune: %s\n", err);
		return 1;
	}
	printf("tune: %u settings: %.2f s wall, %.2f s cpu\n", r.nsettings,
	    clock_now_s() - t1, cpu_s() - c1);
	printf("current     robs %g robx %g min_dev %g max_tokens %u "
	    "ham_cutoff %.6g: ham held %zu/%zu spam passed %zu/%zu "
	    "1-ROCA%% %.4f\n", r.cur.bp.robs, r.cur.bp.robx, r.cur.bp.min_dev,
	    r.cur.bp.max_tokens, r.cur.ham_cutoff, r.cur.e.ham_held, r.nham,
	    r.cur.e.spam_passed, r.nspam, 100 * r.cur.roca);
	printf("recommended robs %g robx %g min_dev %g max_tokens %u "
	    "vote_budget %d ham_cutoff %.17g spam_cutoff %.17g: ham held "
	    "%zu/%zu spam passed %zu/%zu 1-ROCA%% %.4f\n", r.rec.bp.robs,
	    r.rec.bp.robx, r.rec.bp.min_dev, r.rec.bp.max_tokens,
	    r.rec.bp.vote_budget, r.rec.ham_cutoff,
	    r.rec.spam_cutoff, r.rec.e.ham_held, r.nham, r.rec.e.spam_passed,
	    r.nspam, 100 * r.rec.roca);
	printf("bootstrap: ham held [%.4f, %.4f] spam passed [%.4f, %.4f] "
	    "better %.3f (%s)\n", r.boot.hh_lo, r.boot.hh_hi, r.boot.sp_lo,
	    r.boot.sp_hi, r.boot.better, tune_rating(&r));
	if (pairs && !r.alt_tried)
		printf("word pairs not tried (the two tokenizations differ)\n");
	if (pairs)
		printf("list-conf: robs=%.17g robx=%.17g min_dev=%.17g "
		    "max_tokens=%u vote_budget=%s word_pairs=%s "
		    "ham_cutoff=%.17g spam_cutoff=%.17g\n", r.rec.bp.robs,
		    r.rec.bp.robx, r.rec.bp.min_dev, r.rec.bp.max_tokens,
		    r.rec.bp.vote_budget ? "yes" : "no",
		    r.word_pairs ? "yes" : "no", r.rec.ham_cutoff,
		    r.rec.spam_cutoff);
	tune_result_free(&r);
	tset_free(ts);
	if (ts2 != NULL)
		tset_free(ts2);
	return 0;
}

/*
 * cv.c - cross-validation driver for the tokenizer options and the
 * classifier parameters (not installed; a developer's tool)
 *
 * Reads "S|H FOLD PATH" lines on standard input (cv.py writes them for
 * the training half of the benchmark corpus), tokenizes every post once,
 * then for each fold trains on the other folds (counts kept in memory,
 * exactly what tokdb_learn would count) and scores the fold.  Prints one
 * line per parameter combination: robs robx min_dev max_tokens 1-ROCA%
 * and the errors at a few cutoffs, and "op0.5%": the spam passed at the
 * lowest cutoff that holds at most 0.5% of the ham (the gatekeeper's
 * operating point, as tests/bench/roc.py computes it).  Trusts its input
 * list; posts are read through source.c like train and score read them.
 *
 *	cv [-t opt=val,...] [-s robs,...] [-x robx,...] [-d min_dev,...]
 *	   [-m max_tokens,...] [-S scores.tsv] [-D] [-l] [-B] < list
 *
 * -l: leave one out instead of the folds: every post is scored by the
 * counts of all the others (all posts' counts less its own, which for a
 * count model is exactly a model trained without it); FOLD is ignored.
 * -B: score with the vote budget (a list's vote_budget = yes).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate/bayes.h"
#include "gate/mail/source.h"
#include "gate/tok.h"

struct post {
	int spam, fold;
	char *path;
	uint32_t *ids;
	unsigned char *tail;	/* per token: the vote budget's mark */
	size_t n;
	double score;
};

static struct post *posts;
static size_t nposts;
static struct toklist *dict;	/* token -> id (its index) */
static size_t nsidx;
static int rank_d;	/* -D: rank by ln qH - ln qS instead of the score */
static uint32_t *cnt_s, *cnt_h;	/* per id: training counts */
static int loo;		/* -l: leave one out */
static int budget;	/* -B: the vote budget */

/* split "a,b,c" into doubles */
static size_t
parse_list(const char *s, double *v, size_t max)
{
	size_t n = 0;
	char *e;

	while (*s != '\0' && n < max) {
		v[n++] = strtod(s, &e);
		if (*e != ',')
			break;
		s = e + 1;
	}
	return n;
}

/* set one tokenizer option from "name=value" */
static void
set_opt(struct tok_opts *o, const char *kv)
{
	const char *eq = strchr(kv, '=');
	long v;

	if (eq == NULL) {
		fprintf(stderr, "cv: bad option %s\n", kv);
		exit(2);
	}
	v = strtol(eq + 1, NULL, 10);
	if (strncmp(kv, "fold_case=", 10) == 0)
		o->fold_case = (int)v;
	else if (strncmp(kv, "numbers=", 8) == 0)
		o->numbers = (int)v;
	else if (strncmp(kv, "rcvd=", 5) == 0)
		o->rcvd = (int)v;
	else if (strncmp(kv, "bigrams=", 8) == 0)
		o->bigrams = (int)v;
	else if (strncmp(kv, "hdr_names=", 10) == 0)
		o->hdr_names = (int)v;
	else if (strncmp(kv, "min_len=", 8) == 0)
		o->min_len = (size_t)v;
	else if (strncmp(kv, "max_token=", 10) == 0)
		o->max_token = (size_t)v;
	else {
		fprintf(stderr, "cv: unknown option %s\n", kv);
		exit(2);
	}
}

/* tokenize one post file into p->ids */
static void
load_post(struct post *p, const struct tok_opts *o, struct toklist *tl)
{
	struct source *src;
	struct source_post sp;
	char err[512];
	size_t i, n, len;
	const char *t;
	int r;

	if (source_open(p->path, &src, err, sizeof(err)) < 0) {
		fprintf(stderr, "cv: %s\n", err);
		exit(1);
	}
	if ((r = source_next(src, &sp, err, sizeof(err))) != 1) {
		fprintf(stderr, "cv: %s: cannot read\n", p->path);
		exit(1);
	}
	if (tok_post(sp.data, sp.len, o, tl) < 0) {
		fprintf(stderr, "cv: out of memory\n");
		exit(1);
	}
	source_close(src);
	n = toklist_count(tl);
	p->ids = malloc((n ? n : 1) * sizeof(*p->ids));
	p->tail = malloc(n ? n : 1);
	p->n = 0;
	for (i = 0; i < n; i++) {
		t = toklist_get(tl, i, &len);
		p->tail[p->n] = (unsigned char)toklist_tail(tl, i);
		if (toklist_add(dict, t, len) < 0) {
			fprintf(stderr, "cv: out of memory\n");
			exit(1);
		}
		p->ids[p->n++] = (uint32_t)toklist_find(dict, t, len);
	}
}

static int
score_cmp(const void *a, const void *b)
{
	const struct post *x = *(struct post *const *)a;
	const struct post *y = *(struct post *const *)b;

	return x->score < y->score ? -1 : x->score > y->score;
}

/* area above the ROC curve in percent, ties count one half */
static double
roca(void)
{
	struct post **v = malloc(nposts * sizeof(*v));
	size_t i, j, nh = 0, ns = 0;
	double bad = 0, hams_above;

	for (i = 0; i < nposts; i++)
		v[i] = &posts[i];
	qsort(v, nposts, sizeof(*v), score_cmp);
	for (i = 0; i < nposts; i++)
		if (v[i]->spam)
			ns++;
		else
			nh++;
	/* for each spam: hams scoring above it, ties half */
	hams_above = (double)nh;
	for (i = 0; i < nposts; ) {
		size_t th = 0, ts = 0;

		for (j = i; j < nposts && v[j]->score == v[i]->score; j++)
			if (v[j]->spam)
				ts++;
			else
				th++;
		hams_above -= (double)th;
		bad += ts * (hams_above + th / 2.0);
		i = j;
	}
	free(v);
	return ns && nh ? 100.0 * bad / ((double)ns * nh) : 0;
}

static int
dbl_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x > y ? -1 : x < y;
}

/* the gatekeeper's operating point: spam passed at the lowest cutoff
 * that holds at most the fraction frac of the ham (halfway between the
 * highest ham score that must pass and the next higher one, as roc.py's
 * cutoff_for) */
static size_t
oppoint(double frac)
{
	double *h = malloc(nposts * sizeof(*h)), cut, t;
	size_t i, nh = 0, k, passed = 0;

	for (i = 0; i < nposts; i++)
		if (!posts[i].spam)
			h[nh++] = posts[i].score;
	qsort(h, nh, sizeof(*h), dbl_desc);
	k = (size_t)(frac * (double)nh);
	if (k >= nh) {
		free(h);
		return 0;
	}
	t = h[k];
	cut = t;
	for (i = k; i > 0; i--)
		if (h[i - 1] > t) {
			cut = (t + h[i - 1]) / 2;
			break;
		}
	if (cut == t)
		cut = nextafter(t, 2.0);
	for (i = 0; i < nposts; i++)
		if (posts[i].spam && posts[i].score < cut)
			passed++;
	free(h);
	return passed;
}

int
main(int argc, char **argv)
{
	struct tok_opts o;
	struct toklist *tl;
	double robs[32], robx[32], mdev[32], mtok[32];
	size_t nrobs = 1, nrobx = 1, nmdev = 1, nmtok = 1;
	size_t i, j, cap = 0, nfold = 0, a, b, c, d;
	const char *scores = NULL;
	char line[4096], *tokopt, *sv;
	int ch, f;

	{
		struct bayes_params dp;

		bayes_params_default(&dp);
		robs[0] = dp.robs;
		robx[0] = dp.robx;
		mdev[0] = dp.min_dev;
		mtok[0] = dp.max_tokens;
	}
	tok_opts_default(&o);
	while ((ch = getopt(argc, argv, "t:s:x:d:m:S:DlB")) != -1) {
		switch (ch) {
		case 't':
			for (tokopt = optarg; tokopt != NULL; tokopt = sv) {
				if ((sv = strchr(tokopt, ',')) != NULL)
					*sv++ = '\0';
				set_opt(&o, tokopt);
			}
			break;
		case 's':
			nrobs = parse_list(optarg, robs, 32);
			break;
		case 'x':
			nrobx = parse_list(optarg, robx, 32);
			break;
		case 'd':
			nmdev = parse_list(optarg, mdev, 32);
			break;
		case 'm':
			nmtok = parse_list(optarg, mtok, 32);
			break;
		case 'S':
			scores = optarg;
			break;
		case 'D':
			rank_d = 1;
			break;
		case 'l':
			loo = 1;
			break;
		case 'B':
			budget = 1;
			break;
		default:
			return 2;
		}
	}
	o.marks = budget;
	dict = toklist_new(UINT32_MAX / 8);
	tl = toklist_new(o.max_tokens);
	while (fgets(line, sizeof(line), stdin) != NULL) {
		char *p1, *p2;

		line[strcspn(line, "\n")] = '\0';
		if ((p1 = strchr(line, ' ')) == NULL ||
		    (p2 = strchr(p1 + 1, ' ')) == NULL)
			continue;
		if (nposts == cap) {
			cap = cap ? cap * 2 : 1024;
			posts = realloc(posts, cap * sizeof(*posts));
		}
		posts[nposts].spam = line[0] == 'S';
		posts[nposts].fold = (int)strtol(p1 + 1, NULL, 10);
		posts[nposts].path = strdup(p2 + 1);
		if ((size_t)posts[nposts].fold + 1 > nfold)
			nfold = (size_t)posts[nposts].fold + 1;
		nposts++;
	}
	for (i = 0; i < nposts; i++)
		load_post(&posts[i], &o, tl);
	nsidx = toklist_count(dict);
	fprintf(stderr, "cv: %zu posts, %zu distinct tokens, %zu folds\n",
	    nposts, nsidx, nfold);
	cnt_s = calloc(nsidx, sizeof(*cnt_s));
	cnt_h = calloc(nsidx, sizeof(*cnt_h));
	for (a = 0; a < nrobs; a++)
	for (b = 0; b < nrobx; b++)
	for (c = 0; c < nmdev; c++)
	for (d = 0; d < nmtok; d++) {
		struct bayes_params bp;
		struct bayes_tok *bt = NULL;
		size_t btcap = 0;

		bp.robs = robs[a];
		bp.robx = robx[b];
		bp.min_dev = mdev[c];
		bp.max_tokens = (unsigned)mtok[d];
		bp.vote_budget = budget;
		for (f = 0; f < (loo ? 1 : (int)nfold); f++) {
			uint32_t ns = 0, nh = 0;
			struct bayes_result r;

			memset(cnt_s, 0, nsidx * sizeof(*cnt_s));
			memset(cnt_h, 0, nsidx * sizeof(*cnt_h));
			for (i = 0; i < nposts; i++) {
				if (!loo && posts[i].fold == f)
					continue;
				for (j = 0; j < posts[i].n; j++)
					if (posts[i].spam)
						cnt_s[posts[i].ids[j]]++;
					else
						cnt_h[posts[i].ids[j]]++;
				if (posts[i].spam)
					ns++;
				else
					nh++;
			}
			for (i = 0; i < nposts; i++) {
				/* leaving one out: the counts less the post's own */
				uint32_t own_s = loo && posts[i].spam;
				uint32_t own_h = loo && !posts[i].spam;

				if (!loo && posts[i].fold != f)
					continue;
				if (posts[i].n > btcap) {
					btcap = posts[i].n;
					bt = realloc(bt, btcap * sizeof(*bt));
				}
				for (j = 0; j < posts[i].n; j++) {
					uint32_t id = posts[i].ids[j];

					bt[j].tok = toklist_get(dict, id,
					    &bt[j].len);
					bt[j].spam = cnt_s[id] - own_s;
					bt[j].ham = cnt_h[id] - own_h;
					bt[j].tail = posts[i].tail[j];
				}
				bayes_score(&bp, ns - own_s, nh - own_h, bt,
				    posts[i].n, &r);
				posts[i].score = rank_d ? r.log_qh - r.log_qs :
				    r.score;
			}
		}
		free(bt);
		{
			static const double cuts[] = { 0.1, 0.2, 0.3, 0.4,
			    0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999 };
			size_t k, sp, hh;

			printf("robs %g robx %g min_dev %g max_tokens %u "
			    "1-ROCA%% %.4f op0.5%% %zu |", bp.robs, bp.robx,
			    bp.min_dev, bp.max_tokens, roca(), oppoint(0.005));
			for (k = 0; k < sizeof(cuts) / sizeof(cuts[0]); k++) {
				sp = hh = 0;
				for (i = 0; i < nposts; i++)
					if (posts[i].spam &&
					    posts[i].score < cuts[k])
						sp++;
					else if (!posts[i].spam &&
					    posts[i].score >= cuts[k])
						hh++;
				printf(" %g:%zu/%zu", cuts[k], sp, hh);
			}
			putchar('\n');
			fflush(stdout);
		}
		if (scores != NULL) {
			FILE *fp = fopen(scores, "w");

			for (i = 0; fp != NULL && i < nposts; i++)
				fprintf(fp, "%c\t%d\t%.17g\t%s\n",
				    posts[i].spam ? 'S' : 'H', posts[i].fold,
				    posts[i].score, posts[i].path);
			if (fp != NULL)
				fclose(fp);
		}
	}
	for (i = 0; i < nposts; i++) {
		free(posts[i].ids);
		free(posts[i].path);
	}
	free(posts);
	free(cnt_s);
	free(cnt_h);
	toklist_free(tl);
	toklist_free(dict);
	return 0;
}

/*
 * cmd_tune.c - `listgate tune`: a list's cutoffs and classifier
 * parameters from its own training journal
 *
 *   listgate [--config DIR] tune --list L [--json] [--apply] [--folds K]
 *            [--max-ham-held P] [--max-spam-passed P]
 *            [--cost-ham-held W] [--cost-spam-passed W]
 *
 * Reads the list's newest journal events (moderators' decisions and
 * manual training; from sync_database when set), scores every post by
 * k-fold cross-validation in memory (the live token file is never
 * touched) and searches the cutoffs and parameters (gate/tune).  Prints
 * a histogram, a two-row table and one sentence of advice, or one JSON
 * object; --apply writes the recommended keys into lists/L.conf
 * (listcfg/cfgedit: atomic, every other byte kept).  Posts reach only
 * the bounded tokenizer; text from the database reaches the output only
 * through the sanitizer.  Exit 0 with a recommendation, 1 on failure or
 * too little data, 2 on usage errors.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db/queue.h"
#include "db/tokdb.h"
#include "gate/app/app.h"
#include "gate/app/posttok.h"
#include "gate/app/settings.h"
#include "gate/app/sync.h"
#include "gate/cmd/cmd.h"
#include "gate/tune/tset.h"
#include "gate/tune/tune.h"
#include "gate/util/clock.h"
#include "gate/util/suggest.h"
#include "gate/util/xalloc.h"
#include "listcfg/cfgedit.h"
#include "listcfg/listcfg.h"

#define NAME		"tune"
#define BAR		28	/* histogram bar width, per class */
/* v as the shortest text that reads back, into the array buf */
#define NUM(buf, v)	tune_num(buf, sizeof(buf), v)

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: listgate [--config DIR] tune --list L [--json] [--apply]\n"
	    "                [--folds K] [--max-ham-held P] [--max-spam-passed P]\n"
	    "                [--cost-ham-held W] [--cost-spam-passed W]\n"
	    "\n"
	    "Recommend the list's ham_cutoff and spam_cutoff (and robs, robx,\n"
	    "min_dev, max_tokens, vote_budget, word_pairs) from its training\n"
	    "journal: every post is scored by a model that never saw it (K-fold\n"
	    "cross-validation in memory), and the settings that cost the\n"
	    "moderators least are searched.  The cost is W_ham * (fraction of\n"
	    "ham held) + W_spam * (fraction of spam passed); targets replace it.\n"
	    "\n"
	    "  -l, --list L              the list\n"
	    "  -j, --json                one JSON object\n"
	    "  -a, --apply               write the recommended keys into lists/L.conf\n"
	    "                            (old values kept as dated comments;\n"
	    "                            a change of word_pairs first rebuilds\n"
	    "                            the token file from the journal)\n"
	    "  -k, --folds K             folds of the cross-validation (default 5)\n"
	    "  -H, --max-ham-held P      at most this much ham held (0.01 or 1%%)\n"
	    "  -S, --max-spam-passed P   at most this much spam passed (0.005 or 0.5%%)\n"
	    "  -c, --cost-ham-held W     cost of a ham held (default 1)\n"
	    "  -C, --cost-spam-passed W  cost of a spam passed (default 5)\n"
	    "                            (a cost is 0 to 1000000)\n"
	    "  -h, --help                this help\n"
	    "\n"
	    "Exit status: 0 a recommendation, 1 failure or too little data,\n"
	    "2 usage error.\n");
}

/* the length of the decimal number s starts with: digits, and a point
 * and digits after it ("12", "0.5"); 0 when s starts with none.  What
 * strtod takes besides (blanks, a sign, "0x", exponents, "inf", "nan",
 * "5.", ".5") is no number of these options */
static size_t
decimal_len(const char *s)
{
	size_t n = strspn(s, "0123456789"), m;

	if (n == 0 || s[n] != '.')
		return n;
	m = strspn(s + n + 1, "0123456789");
	return m == 0 ? 0 : n + 1 + m;
}

/* a fraction: "0.005" or "0.5%": 0, or -1 */
static int
parse_frac(const char *s, double *v_r)
{
	char t[64];
	size_t n = decimal_len(s);
	double v;

	if (n == 0 || n + 4 >= sizeof(t) || (s[n] != '\0' &&
	    strcmp(s + n, "%") != 0))
		return -1;
	/* "1.4%" read as "1.4e-2": the double "0.014" reads as; 1.4 / 100
	 * is the one below it, a target tighter than asked (7 ham held of
	 * 500, 1.4%, missed "at most 1.4%") */
	snprintf(t, sizeof(t), "%.*s%s", (int)n, s, s[n] == '%' ? "e-2" : "");
	v = strtod(t, NULL);
	if (!isfinite(v) || v > 1)
		return -1;
	*v_r = v;
	return 0;
}

/* a weight: a decimal number from 0 to 1e6: 0, or -1 */
static int
parse_weight(const char *s, double *v_r)
{
	size_t n = decimal_len(s);
	double v;

	if (n == 0 || s[n] != '\0')
		return -1;
	v = strtod(s, NULL);
	if (!isfinite(v) || v > 1e6)
		return -1;
	*v_r = v;
	return 0;
}

/* progress on a terminal: one line, rewritten at most ten times a second */
struct progress {
	int on;
	double last, t0;
	int shown;
};

static void
progress_line(struct progress *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
progress_line(struct progress *p, const char *fmt, ...)
{
	char line[160];
	va_list ap;
	double now = clock_now_s();

	if (!p->on || now - p->last < 0.1)
		return;
	p->last = now;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "\rlistgate tune: %-60.60s", line);
	fflush(stderr);
	p->shown = 1;
}

static void
progress_end(struct progress *p)
{
	if (p->shown)
		fprintf(stderr, "\r%78s\r", "");
	p->shown = 0;
}

static void
on_events(void *ctx, unsigned long events)
{
	progress_line(ctx, "reading the journal: %lu event%s", events,
	    events == 1 ? "" : "s");
}

static void
on_tune(void *ctx, const char *what, unsigned done, unsigned total)
{
	progress_line(ctx, "%s: %u of %u", what, done, total);
}

/* --- the histogram -------------------------------------------------------- */

/* score bins: finer at the ends, where most posts are */
static const double edges[] = { 0, 1e-6, 1e-4, 0.001, 0.01, 0.05, 0.1, 0.2,
    0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999, 0.9999, 0.999999 };
#define NEDGES	(sizeof(edges) / sizeof(edges[0]))

static int
dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* a bar of n of max in w characters (at least one for n > 0) */
static void
bar(FILE *f, size_t n, size_t max, int w)
{
	int k = max ? (int)((double)n * w / max + 0.5) : 0, i;

	if (n > 0 && k == 0)
		k = 1;
	for (i = 0; i < w; i++)
		fputc(i < k ? '#' : ' ', f);
}

/* the histogram: 0, or -1 when out of memory */
static int
histogram(FILE *f, const struct tune_result *r)
{
	double e[NEDGES + 2];
	size_t ne = 0, i, j, hmax = 0, smax = 0, *h, *s;
	char a[32], b[32], lab[80];

	for (i = 0; i < NEDGES; i++)
		e[ne++] = edges[i];
	/* the cutoffs are edges too, so a marker sits between two bins */
	e[ne++] = r->cur.ham_cutoff;
	e[ne++] = r->rec.ham_cutoff;
	qsort(e, ne, sizeof(*e), dbl_cmp);
	for (i = 1, j = 1; i < ne; i++)
		if (e[i] != e[j - 1] && e[i] < 1)
			e[j++] = e[i];
	ne = j;
	h = xcalloc(ne, sizeof(*h));
	s = xcalloc(ne, sizeof(*s));
	if (h == NULL || s == NULL) {
		xfree(h);
		xfree(s);
		return -1;
	}
	for (i = 0; i < r->n; i++) {
		double sc = r->rec_scores[i];

		for (j = ne; j > 0 && sc < e[j - 1]; j--)
			;
		j = j > 0 ? j - 1 : 0;
		if (r->spam[i])
			s[j]++;
		else
			h[j]++;
	}
	for (i = 0; i < ne; i++) {
		if (h[i] > hmax)
			hmax = h[i];
		if (s[i] > smax)
			smax = s[i];
	}
	fprintf(f, "%-20s %-*s %-*s\n", "score", BAR + 6, "ham", BAR + 6,
	    "spam");
	for (i = 0; i <= ne; i++) {
		/* a cutoff of 0 (every post held) before the first bin, one
		 * of 1 (only a score of 1 held) after the last */
		if (i < ne ? e[i] == r->cur.ham_cutoff : r->cur.ham_cutoff >= 1)
			fprintf(f, "---- current ham_cutoff %s: held from here "
			    "on ----\n", NUM(a, r->cur.ham_cutoff));
		if (i < ne ? e[i] == r->rec.ham_cutoff : r->rec.ham_cutoff >= 1)
			fprintf(f, "==== recommended ham_cutoff %s: held from "
			    "here on ====\n", NUM(a, r->rec.ham_cutoff));
		if (i == ne)
			break;
		snprintf(lab, sizeof(lab), "[%s, %s%c", NUM(a, e[i]),
		    i + 1 < ne ? NUM(b, e[i + 1]) : "1",
		    i + 1 < ne ? ')' : ']');
		fprintf(f, "%-20s ", lab);
		bar(f, h[i], hmax, BAR);
		fprintf(f, " %5zu ", h[i]);
		bar(f, s[i], smax, BAR);
		fprintf(f, " %5zu\n", s[i]);
	}
	xfree(h);
	xfree(s);
	return 0;
}

/* --- output --------------------------------------------------------------- */

static double
frac(size_t k, size_t n)
{
	return n ? (double)k / n : 0;
}

/* "12.5% (3 of 24)" */
static const char *
pct(char *buf, size_t sz, size_t k, size_t n)
{
	snprintf(buf, sz, "%.1f%% (%zu of %zu)", 100 * frac(k, n), k, n);
	return buf;
}

/* "confidence R" (tune_rating), and for each target the journal is too
 * small to assure (its class's interval reaches past it), how far */
static const char *
confidence(char *out, size_t sz, const struct tune_result *r)
{
	static const char *const what[] = { "ham held", "spam passed" };
	double t[2], hi[2];
	size_t n, cnt[2];
	int i;

	snprintf(out, sz, "confidence %s", tune_rating(r));
	t[0] = r->goal.max_ham_held;
	t[1] = r->goal.max_spam_passed;
	hi[0] = r->boot.hh_hi;
	hi[1] = r->boot.sp_hi;
	cnt[0] = r->nham;
	cnt[1] = r->nspam;
	for (i = 0; i < 2; i++) {
		char tb[32], hb[32];
		int p;

		if (t[i] < 0 || hi[i] <= t[i])
			continue;
		/* the target as asked (12 digits: 100 * 0.07 is
		 * 7.000000000000001 in binary), the upper end with one
		 * decimal, or as many as show it above the target */
		snprintf(tb, sizeof(tb), "%.12g", 100 * t[i]);
		for (p = 1; p < 6; p++) {
			snprintf(hb, sizeof(hb), "%.*f", p, 100 * hi[i]);
			if (strtod(hb, NULL) > strtod(tb, NULL))
				break;
		}
		n = strlen(out);
		snprintf(out + n, sz - n, "; the journal's %zu %s cannot assure "
		    "%s%% %s, which may be up to %s%% by its %.0f%% interval",
		    cnt[i], i ? "spam" : "ham", tb, what[i], hb,
		    100 * r->boot.level);
	}
	return out;
}

/* how a figure k of n stands to target t: "met", or how far past */
static const char *
against(char *buf, size_t sz, size_t k, size_t n, double t)
{
	double f = frac(k, n);

	if (f <= t)
		snprintf(buf, sz, "the target met");
	else
		snprintf(buf, sz, "%.1f points over the target",
		    100 * (f - t));
	return buf;
}

/* a share k of n as a target that it meets: a percentage rounded up
 * to one decimal ("4%" for 2 of 50, "0.4%" for 1 of 281) */
static const char *
target_of(char *buf, size_t sz, size_t k, size_t n)
{
	double v = ceil(1000 * frac(k, n) - 1e-9) / 10;

	snprintf(buf, sz, "%.12g%%", v < 0 ? 0 : v);
	return buf;
}

/*
 * The advice when no cutoff meets both targets: which targets (as
 * asked), how the recommendation stands to each, what meeting each one
 * alone costs in the other, and so what to loosen, in one sentence.
 */
static void
infeasible(char *out, size_t sz, const char *list, const char *again,
    const struct tune_result *r, const char *conf)
{
	char th[32], ts[32], mh[64], ms[64], lh[32], ls[32];
	size_t n;

	snprintf(th, sizeof(th), "%.12g%%", 100 * r->goal.max_ham_held);
	snprintf(ts, sizeof(ts), "%.12g%%", 100 * r->goal.max_spam_passed);
	snprintf(out, sz, "No cutoff meets both targets on list %s's "
	    "journal, at most %s of ham held and at most %s of spam passed "
	    "(cross-validated): the recommendation comes closest (%s), "
	    "holding %.1f%% of ham (%s) and passing %.1f%% of spam (%s); "
	    "passing at most %s of spam takes holding %.1f%% of ham, and "
	    "holding at most %s of ham takes passing %.1f%% of spam, so "
	    "loosen the target that can give (--max-ham-held %s or "
	    "--max-spam-passed %s) and tune again", list, th, ts,
	    conf, 100 * frac(r->rec.e.ham_held, r->nham),
	    against(mh, sizeof(mh), r->rec.e.ham_held, r->nham,
	    r->goal.max_ham_held),
	    100 * frac(r->rec.e.spam_passed, r->nspam),
	    against(ms, sizeof(ms), r->rec.e.spam_passed, r->nspam,
	    r->goal.max_spam_passed), ts,
	    100 * frac(r->alone_spam.ham_held, r->nham), th,
	    100 * frac(r->alone_ham.spam_passed, r->nspam),
	    target_of(lh, sizeof(lh), r->alone_spam.ham_held, r->nham),
	    target_of(ls, sizeof(ls), r->alone_ham.spam_passed, r->nspam));
	/* (again NULL: this run has applied it; appended rather than
	 * formatted through a fixed buffer, which cut a long command) */
	n = strlen(out);
	if (n + 1 >= sz)
		return;
	if (again != NULL)
		snprintf(out + n, sz - n, ", or apply the recommendation "
		    "(`%s`) if its figures will do.", again);
	else
		snprintf(out + n, sz - n, "; the recommendation is applied "
		    "now (--apply).");
}

/*
 * After the advice: the targets the recommendation misses, unless the
 * advice says so already (infeasible), and the bound that made it miss
 * them (ham_cutoff lowered to the list's discard_cutoff).
 */
static void
missed_note(char *out, size_t sz, const struct tune_result *r)
{
	char t[32], a[32], b[32];
	size_t n = strlen(out);

	if (r->missed == 0)
		return;
	if (!r->infeasible) {
		snprintf(out + n, sz - n, " It misses the target%s given:",
		    r->missed == (TUNE_MISS_HAM | TUNE_MISS_SPAM) ? "s" : "");
		if (r->missed & TUNE_MISS_HAM) {
			snprintf(t, sizeof(t), "%.12g%%",
			    100 * r->goal.max_ham_held);
			n = strlen(out);
			snprintf(out + n, sz - n, " at most %s of ham held "
			    "(it holds %.1f%%)%s", t, 100 *
			    frac(r->rec.e.ham_held, r->nham),
			    r->missed & TUNE_MISS_SPAM ? " and" : "");
		}
		if (r->missed & TUNE_MISS_SPAM) {
			snprintf(t, sizeof(t), "%.12g%%",
			    100 * r->goal.max_spam_passed);
			n = strlen(out);
			snprintf(out + n, sz - n, " at most %s of spam passed "
			    "(it passes %.1f%%)", t, 100 *
			    frac(r->rec.e.spam_passed, r->nspam));
		}
		n = strlen(out);
		snprintf(out + n, sz - n, "%s", r->limited_from >= 0 ? ";" :
		    ".");
	}
	if (r->limited_from >= 0) {
		n = strlen(out);
		snprintf(out + n, sz - n, "%sham_cutoff may go no higher than "
		    "the list's discard_cutoff (%s), where %s would be %s: "
		    "raise discard_cutoff (or turn it off), or loosen the "
		    "target, and tune again.", r->infeasible ? " But " : " ",
		    NUM(a, r->rec.ham_cutoff), r->infeasible ? "the cutoff "
		    "coming closest" : "the one meeting it",
		    NUM(b, r->limited_from));
	}
}

/* the options of the goal given (again_cmd) */
#define GIVEN_FOLDS	0x01
#define GIVEN_MAX_HAM	0x02
#define GIVEN_MAX_SPAM	0x04
#define GIVEN_COST_HAM	0x08
#define GIVEN_COST_SPAM	0x10

/*
 * The command that applies this recommendation: the configuration
 * directory in use (suggest_cmd: absolute, shell-quoted, unless the
 * default), and the goal and the folds given, since a tune without them
 * recommends for another goal, or of another configuration's list, and
 * --apply writes that.  Each option is said as the advice says a target
 * (12 digits), never as typed: nothing of argv but the list name, which
 * is checked.  Returns 0, or -1 when it does not fit in out.
 */
static int
again_cmd(char *out, size_t sz, const char *list, const struct tune_opts *o,
    unsigned given)
{
	size_t n;

	if ((size_t)snprintf(out, sz, "%s ", suggest_cmd()) >= sz)
		return -1;
	n = strlen(out);
	snprintf(out + n, sz - n, "tune --list %s", list);
	n = strlen(out);
	if (given & GIVEN_FOLDS)
		snprintf(out + n, sz - n, " --folds %u", o->folds);
	n = strlen(out);
	if (given & GIVEN_MAX_HAM)
		snprintf(out + n, sz - n, " --max-ham-held %.12g%%",
		    100 * o->goal.max_ham_held);
	n = strlen(out);
	if (given & GIVEN_MAX_SPAM)
		snprintf(out + n, sz - n, " --max-spam-passed %.12g%%",
		    100 * o->goal.max_spam_passed);
	n = strlen(out);
	if (given & GIVEN_COST_HAM)
		snprintf(out + n, sz - n, " --cost-ham-held %.12g",
		    o->goal.w_ham);
	n = strlen(out);
	if (given & GIVEN_COST_SPAM)
		snprintf(out + n, sz - n, " --cost-spam-passed %.12g",
		    o->goal.w_spam);
	n = strlen(out);
	return (size_t)snprintf(out + n, sz - n, " --apply") >= sz - n ? -1 :
	    0;
}

/* the one sentence of advice; again: the command that applies it, or
 * NULL when this run (--apply) has applied it */
static void
advice(char *out, size_t sz, const char *list, const char *again,
    const struct tune_result *r, int same)
{
	char a[64], b[64], conf[512];

	confidence(conf, sizeof(conf), r);
	if (same) {
		snprintf(out, sz, "Keep the current settings: no other setting "
		    "did better on list %s's journal (cross-validated: %.1f%% "
		    "of ham held, %.1f%% of spam passed; %s).",
		    list, 100 * frac(r->cur.e.ham_held, r->nham),
		    100 * frac(r->cur.e.spam_passed, r->nspam), conf);
		missed_note(out, sz, r);
		return;
	}
	snprintf(a, sizeof(a), "%.1f%%", 100 * frac(r->rec.e.ham_held,
	    r->nham));
	snprintf(b, sizeof(b), "%.1f%%", 100 * frac(r->rec.e.spam_passed,
	    r->nspam));
	if (r->infeasible)
		infeasible(out, sz, list, again, r, conf);
	else if (r->boot.better >= 0.8 && again == NULL)
		snprintf(out, sz, "The recommendation is applied: "
		    "cross-validated it holds %s of ham and "
		    "passes %s of spam, against %.1f%% and %.1f%% before, and "
		    "it does better in %.0f%% of %u resamples of the journal "
		    "(%s).", a, b,
		    100 * frac(r->cur.e.ham_held, r->nham),
		    100 * frac(r->cur.e.spam_passed, r->nspam),
		    100 * r->boot.better, r->boot.resamples, conf);
	else if (r->boot.better >= 0.8)
		snprintf(out, sz, "Apply the recommendation (`%s`): "
		    "cross-validated it holds %s of ham and "
		    "passes %s of spam, against %.1f%% and %.1f%% now, and it "
		    "does better in %.0f%% of %u resamples of the journal "
		    "(%s).", again, a, b,
		    100 * frac(r->cur.e.ham_held, r->nham),
		    100 * frac(r->cur.e.spam_passed, r->nspam),
		    100 * r->boot.better, r->boot.resamples, conf);
	else if (again == NULL)
		snprintf(out, sz, "The recommendation (%s of ham held, %s of "
		    "spam passed, against %.1f%% and %.1f%% before) does better "
		    "in only %.0f%% of %u resamples of the journal (%s), and "
		    "--apply has applied it: the old values are kept as "
		    "comments in the list's file, to go back to unless the "
		    "goal has changed.", a, b,
		    100 * frac(r->cur.e.ham_held, r->nham),
		    100 * frac(r->cur.e.spam_passed, r->nspam),
		    100 * r->boot.better, r->boot.resamples, conf);
	else
		snprintf(out, sz, "The recommendation (%s of ham held, %s of "
		    "spam passed, against %.1f%% and %.1f%% now) does better in "
		    "only %.0f%% of %u resamples of the journal (%s): keep the "
		    "current settings unless the goal has changed, and tune "
		    "again when the journal has grown.", a, b,
		    100 * frac(r->cur.e.ham_held, r->nham),
		    100 * frac(r->cur.e.spam_passed, r->nspam),
		    100 * r->boot.better, r->boot.resamples, conf);
	missed_note(out, sz, r);
	if (r->changed & TUNE_WORD_PAIRS) {
		size_t n = strlen(out);

		if (again == NULL)
			snprintf(out + n, sz - n, " It %s word pairs: the "
			    "token file is rebuilt from the journal %s them.",
			    r->word_pairs ? "adds" : "drops", r->word_pairs ?
			    "with" : "without");
		else
			snprintf(out + n, sz - n, " It %s word pairs: --apply "
			    "rebuilds the token file from the journal %s them.",
			    r->word_pairs ? "adds" : "drops", r->word_pairs ?
			    "with" : "without");
	}
	if (r->ham_discarded > 0) {
		size_t n = strlen(out);

		snprintf(out + n, sz - n, " Beware: %zu ham scored at or above "
		    "discard_cutoff and would be discarded unseen.",
		    r->ham_discarded);
	}
}

/* the keys that change, as cfgedit wants them */
struct changes {
	struct tune_change t[TUNE_MAX_CHANGES];
	struct cfgedit_change c[TUNE_MAX_CHANGES];
	size_t n;
};

static void
changes_of(const struct tune_result *r, struct changes *ch)
{
	size_t i;

	memset(ch, 0, sizeof(*ch));
	ch->n = tune_changes(r, ch->t);
	for (i = 0; i < ch->n; i++) {
		ch->c[i].key = ch->t[i].key;
		ch->c[i].value = ch->t[i].value;
		ch->c[i].old = ch->t[i].old;
	}
}

static void
json_goal(FILE *f, const struct cutoff_goal *g)
{
	char a[32];

	fprintf(f, "\"goal\":{\"cost_ham_held\":%s,", NUM(a, g->w_ham));
	fprintf(f, "\"cost_spam_passed\":%s,", NUM(a, g->w_spam));
	if (g->max_ham_held >= 0)
		fprintf(f, "\"max_ham_held\":%s,", NUM(a, g->max_ham_held));
	else
		fputs("\"max_ham_held\":null,", f);
	if (g->max_spam_passed >= 0)
		fprintf(f, "\"max_spam_passed\":%s}",
		    NUM(a, g->max_spam_passed));
	else
		fputs("\"max_spam_passed\":null}", f);
}

/* one setting: cutoffs, estimates (unless est is 0), parameters (all
 * with all, else only the changed ones) */
static void
json_setting(FILE *f, const struct tune_setting *t, int word_pairs,
    size_t nham, size_t nspam, int est, int params)
{
	char a[32];

	fprintf(f, "{\"ham_cutoff\":%s,", NUM(a, t->ham_cutoff));
	fprintf(f, "\"spam_cutoff\":%s", NUM(a, t->spam_cutoff));
	if (est) {
		fprintf(f, ",\"ham_held\":%s",
		    NUM(a, frac(t->e.ham_held, nham)));
		fprintf(f, ",\"spam_passed\":%s",
		    NUM(a, frac(t->e.spam_passed, nspam)));
		fprintf(f, ",\"ham_held_posts\":%zu,\"spam_passed_posts\":%zu",
		    t->e.ham_held, t->e.spam_passed);
	} else
		fputs(",\"ham_held\":null,\"spam_passed\":null,"
		    "\"ham_held_posts\":null,\"spam_passed_posts\":null", f);
	if (params & TUNE_ROBS)
		fprintf(f, ",\"robs\":%s", NUM(a, t->bp.robs));
	if (params & TUNE_ROBX)
		fprintf(f, ",\"robx\":%s", NUM(a, t->bp.robx));
	if (params & TUNE_MIN_DEV)
		fprintf(f, ",\"min_dev\":%s", NUM(a, t->bp.min_dev));
	if (params & TUNE_MAX_TOKENS)
		fprintf(f, ",\"max_tokens\":%u", t->bp.max_tokens);
	if (params & TUNE_VOTE_BUDGET)
		fprintf(f, ",\"vote_budget\":%s", t->bp.vote_budget ?
		    "true" : "false");
	if (params & TUNE_WORD_PAIRS)
		fprintf(f, ",\"word_pairs\":%s", word_pairs ? "true" :
		    "false");
	fputc('}', f);
}

/* whether the recommendation meets the targets given: targets_met
 * (null without a target), targets_missed (the goal's keys it misses)
 * and ham_cutoff_limit (null, or the bound ham_cutoff was lowered to:
 * key, value, and the cutoff the goal chose) */
static void
json_targets(FILE *f, const struct cutoff_goal *g,
    const struct tune_result *r)
{
	char a[32], b[32];

	if (g->max_ham_held < 0 && g->max_spam_passed < 0)
		fputs(",\"targets_met\":null", f);
	else
		fprintf(f, ",\"targets_met\":%s", r->missed ? "false" :
		    "true");
	fprintf(f, ",\"targets_missed\":[%s%s%s]",
	    r->missed & TUNE_MISS_HAM ? "\"max_ham_held\"" : "",
	    r->missed == (TUNE_MISS_HAM | TUNE_MISS_SPAM) ? "," : "",
	    r->missed & TUNE_MISS_SPAM ? "\"max_spam_passed\"" : "");
	if (r->limited_from >= 0)
		fprintf(f, ",\"ham_cutoff_limit\":{\"key\":\"discard_cutoff\","
		    "\"value\":%s,\"wanted\":%s}", NUM(a, r->rec.ham_cutoff),
		    NUM(b, r->limited_from));
	else
		fputs(",\"ham_cutoff_limit\":null", f);
}

/* a JSON string (the sanitizer writes the quotes) */
static void
json_string(FILE *f, const char *s)
{
	cmd_put_clean(f, s, strlen(s), SANITIZE_JSON);
}

static void
json_journal(FILE *f, const struct tset *ts)
{
	fprintf(f, "\"journal\":{\"events\":%lu,\"duplicates\":%lu,"
	    "\"unlearnt_unknown\":%lu,\"left_out\":%lu,\"bounded\":%lu,"
	    "\"damaged\":%lu}", ts->st.events, ts->st.dups, ts->st.unknown,
	    ts->st.mixed, ts->st.bounded, ts->st.damaged);
}

#define ALL_PARAMS	(TUNE_ROBS | TUNE_ROBX | TUNE_MIN_DEV | TUNE_MAX_TOKENS | \
    TUNE_VOTE_BUDGET | TUNE_WORD_PAIRS)

/* with --apply (applied not NULL): the keys written (none unless
 * written), and why --apply failed (apply_error, null when it did not) */
static void
print_json(FILE *f, const char *list, const struct tset *ts,
    const struct tune_opts *o, const struct tune_result *r,
    const char *adv, const struct changes *applied, int written,
    const char *apply_error, long rebuilt, double secs)
{
	char a[32], b[32];
	size_t i;

	fprintf(f, "{\"list\":\"%s\",\"posts\":{\"ham\":%zu,\"spam\":%zu},"
	    "\"folds\":%u,", list, ts->nham, ts->nspam, o->folds);
	json_goal(f, &o->goal);
	fputs(",\"current\":", f);
	json_setting(f, &r->cur, o->word_pairs, r->nham, r->nspam, 1,
	    ALL_PARAMS);
	fputs(",\"recommended\":", f);
	json_setting(f, &r->rec, r->word_pairs, r->nham, r->nspam, 1,
	    r->changed);
	json_targets(f, &o->goal, r);
	fprintf(f, ",\"confidence\":{\"rating\":\"%s\",\"level\":%s,"
	    "\"resamples\":%u,", tune_rating(r), NUM(a, r->boot.level), r->boot.resamples);
	fprintf(f, "\"ham_held\":[%s,", NUM(a, r->boot.hh_lo));
	fprintf(f, "%s],", NUM(b, r->boot.hh_hi));
	fprintf(f, "\"spam_passed\":[%s,", NUM(a, r->boot.sp_lo));
	fprintf(f, "%s],", NUM(b, r->boot.sp_hi));
	fprintf(f, "\"better\":%s,", NUM(a, r->boot.better));
	fprintf(f, "\"held_out\":{\"ham_held\":%s,",
	    NUM(a, frac(r->nest.ham_held, r->nham * TUNE_PARTS)));
	fprintf(f, "\"spam_passed\":%s}},",
	    NUM(b, frac(r->nest.spam_passed, r->nspam * TUNE_PARTS)));
	fputs("\"advice\":", f);
	json_string(f, adv);
	fprintf(f, ",\"settings_scored\":%u,\"seconds\":%.2f,", r->nsettings,
	    secs);
	if (r->alt_tried) {
		fprintf(f, "\"word_pairs\":{\"current\":%s,\"roca_without\":%s,",
		    o->word_pairs ? "true" : "false",
		    NUM(a, o->word_pairs ? r->alt_roca : r->own_roca));
		fprintf(f, "\"roca_with\":%s},",
		    NUM(a, o->word_pairs ? r->own_roca : r->alt_roca));
	} else
		fputs("\"word_pairs\":null,", f);
	json_journal(f, ts);
	if (applied != NULL) {
		fputs(",\"applied\":[", f);
		for (i = 0; written && i < applied->n; i++)
			fprintf(f, "%s\"%s\"", i ? "," : "", applied->c[i].key);
		fputs("],\"apply_error\":", f);
		if (apply_error != NULL)
			json_string(f, apply_error);
		else
			fputs("null", f);
	}
	if (rebuilt >= 0)
		fprintf(f, ",\"rebuilt\":{\"events\":%ld}", rebuilt);
	fputs("}\n", f);
}

/* the text report: 0, or -1 when out of memory */
static int
print_text(FILE *f, const char *list, const struct tset *ts,
    const struct tune_opts *o, const struct tune_result *r,
    const char *adv, double secs)
{
	char a[32], b[32], c[48], d[48];

	fprintf(f, "list %s: %zu ham and %zu spam in the journal, %u-fold "
	    "cross-validation, %u settings scored in %.1f s\n", list,
	    ts->nham, ts->nspam, o->folds, r->nsettings, secs);
	if (ts->st.mixed || ts->st.bounded || ts->st.damaged)
		fprintf(f, "(left out: %lu post%s trained both ways or "
		    "unlearnt, %lu past the memory bounds, %lu unreadable)\n",
		    ts->st.mixed, ts->st.mixed == 1 ? "" : "s",
		    ts->st.bounded, ts->st.damaged);
	if (!r->alt_tried)
		fprintf(f, "(word_pairs = %s not tried: %s)\n",
		    o->word_pairs ? "no" : "yes", o->alt == NULL ?
		    "the site store's tokens are not judged by its own "
		    "journal" : "tune's memory bounds left out other posts or "
		    "tokens with pairs");
	if (r->changed)
		fprintf(f, "scores under the recommended parameters\n");
	fputc('\n', f);
	if (histogram(f, r) < 0)
		return -1;
	fputc('\n', f);
	fprintf(f, "%-12s %-11s %-12s %-22s %s\n", "", "ham_cutoff",
	    "spam_cutoff", "ham held", "spam passed");
	fprintf(f, "%-12s %-11s %-12s %-22s %s\n", "current",
	    NUM(a, r->cur.ham_cutoff),
	    NUM(b, r->cur.spam_cutoff),
	    pct(c, sizeof(c), r->cur.e.ham_held, r->nham),
	    pct(d, sizeof(d), r->cur.e.spam_passed, r->nspam));
	fprintf(f, "%-12s %-11s %-12s %-22s %s\n", "recommended",
	    NUM(a, r->rec.ham_cutoff),
	    NUM(b, r->rec.spam_cutoff),
	    pct(c, sizeof(c), r->rec.e.ham_held, r->nham),
	    pct(d, sizeof(d), r->rec.e.spam_passed, r->nspam));
	if (r->changed) {
		fputs("recommended parameters:", f);
		if (r->changed & TUNE_ROBS)
			fprintf(f, " robs %s (now %s)",
			    NUM(a, r->rec.bp.robs), NUM(b, r->cur.bp.robs));
		if (r->changed & TUNE_ROBX)
			fprintf(f, " robx %s (now %s)",
			    NUM(a, r->rec.bp.robx), NUM(b, r->cur.bp.robx));
		if (r->changed & TUNE_MIN_DEV)
			fprintf(f, " min_dev %s (now %s)",
			    NUM(a, r->rec.bp.min_dev),
			    NUM(b, r->cur.bp.min_dev));
		if (r->changed & TUNE_MAX_TOKENS)
			fprintf(f, " max_tokens %u (now %u)",
			    r->rec.bp.max_tokens, r->cur.bp.max_tokens);
		if (r->changed & TUNE_VOTE_BUDGET)
			fprintf(f, " vote_budget %s (now %s)",
			    r->rec.bp.vote_budget ? "yes" : "no",
			    r->cur.bp.vote_budget ? "yes" : "no");
		if (r->changed & TUNE_WORD_PAIRS)
			fprintf(f, " word_pairs %s (now %s)",
			    r->word_pairs ? "yes" : "no",
			    r->word_pairs ? "no" : "yes");
		fputc('\n', f);
	}
	fprintf(f, "%.0f%% intervals from %u resamples: ham held %.1f%% to "
	    "%.1f%%, spam passed %.1f%% to %.1f%%\n", 100 * r->boot.level,
	    r->boot.resamples, 100 * r->boot.hh_lo, 100 * r->boot.hh_hi,
	    100 * r->boot.sp_lo, 100 * r->boot.sp_hi);
	fputc('\n', f);
	fprintf(f, "%s\n", adv);
	return 0;
}

/* lists/L.conf as tune read it, before its settings were loaded */
struct conf_seen {
	int missing;		/* 1 no file, -1 no stat (never the same) */
	struct stat st;
};

static void
conf_snap(const char *path, struct conf_seen *s)
{
	memset(s, 0, sizeof(*s));
	if (stat(path, &s->st) < 0)
		s->missing = errno == ENOENT ? 1 : -1;
}

/* 1 when the file is still the one tune read */
static int
conf_same(const struct conf_seen *a, const struct conf_seen *b)
{
	if (a->missing < 0 || b->missing < 0 || a->missing != b->missing)
		return 0;
	return a->missing || (a->st.st_dev == b->st.st_dev &&
	    a->st.st_ino == b->st.st_ino && a->st.st_size == b->st.st_size &&
	    a->st.st_mtim.tv_sec == b->st.st_mtim.tv_sec &&
	    a->st.st_mtim.tv_nsec == b->st.st_mtim.tv_nsec);
}

/* cfgedit's check: the rewritten file must load as the list's, and the
 * file it was made from must be the one whose settings tune started
 * with (an edit by hand during the run is not written over; cfgedit
 * itself sees edits only from its own reading on) */
struct check_ctx {
	const struct listcfg_global *g;
	const char *list;
	const char *conf;
	const struct conf_seen *seen;
};

static int
check_file(void *vctx, const char *path, char *err, size_t errsz)
{
	const struct check_ctx *c = vctx;
	struct conf_seen now;

	conf_snap(c->conf, &now);
	if (!conf_same(c->seen, &now)) {
		snprintf(err, errsz, "%s changed since tune read it (an edit "
		    "by hand, another tune at the same time?): nothing "
		    "written; run it again", c->conf);
		return -1;
	}
	return listcfg_check_list_file(c->g, c->list, path, err, errsz);
}

/*
 * word_pairs changes: build the list's token file afresh from the
 * journal with the new setting, as `listgate rebuild` does (a token file
 * holds the tokens it was trained with: without a rebuild, pairs turned
 * on would be learnt from new posts only, and pairs turned off would
 * stay in the file unread).  0 with the events applied in *nev_r, or -1
 * with why in err (the file is then unchanged).
 */
static int
rebuild_pairs(struct queue *q, const struct listcfg_global *g,
    const struct listcfg_list *l, int word_pairs, unsigned long *nev_r,
    char *why, size_t whysz)
{
	struct listcfg_list nl = *l;	/* read only: shares l's strings */
	struct sync_stats st;
	char path[4096], err[1024];

	nl.word_pairs = word_pairs;
	if (listcfg_tokens_path(g, l->name, path, sizeof(path)) < 0) {
		snprintf(why, whysz, "token file path too long");
		return -1;
	}
	memset(&st, 0, sizeof(st));
	if (sync_tokens_dir(g, err, sizeof(err)) < 0 ||
	    sync_rebuild(q, g, &nl, path, &st, err, sizeof(err)) < 0) {
		cmd_sync_report(NAME, g, l->name, &st);
		snprintf(why, whysz, "rebuilding the token file with "
		    "word_pairs = %s: %s", word_pairs ? "yes" : "no", err);
		return -1;
	}
	cmd_sync_report(NAME, g, l->name, &st);
	*nev_r = st.nevents;
	return 0;
}

/* whether the token file at path records that it was built with word
 * pairs: 1 or 0, -1 when it does not say (a file from before the
 * record, or none, or one that cannot be read now) */
static int
file_pairs(const struct listcfg_global *g, const char *path)
{
	struct tokdb *db;
	char err[1024];
	uint32_t f;
	int r;

	if (tokdb_open(path, TOKDB_READ, g->lock_wait_ms, &db, err,
	    sizeof(err)) != 0)
		return -1;
	r = tokdb_get_feats(db, &f);
	tokdb_close(db);
	return r > 0 ? (f & TOKDB_FEAT_PAIRS) != 0 : -1;
}

/*
 * Can --apply replace lists/L.conf (a temporary file in the directory
 * of the file, or of what its link points to, renamed over it)?  0, or
 * -1 with why in err, before anything is rebuilt or written: a token
 * file rebuilt for a key that then cannot be written would leave the
 * file and the key at odds, and "apply again" would fail the same way.
 */
static int
apply_writable(const struct listcfg_global *g, const char *conf, char *err,
    size_t errsz)
{
	char real[4096], dir[4096], *sl;
	struct passwd *pw;
	int e;

	if (realpath(conf, real) != NULL) {
		snprintf(dir, sizeof(dir), "%s", real);
		if ((sl = strrchr(dir, '/')) != NULL)
			*(sl == dir ? sl + 1 : sl) = '\0';
	} else {
		/* no file yet: made in lists/, itself made when missing */
		snprintf(dir, sizeof(dir), "%s/lists", g->dir);
		if (access(dir, F_OK) < 0)
			snprintf(dir, sizeof(dir), "%s", g->dir);
	}
	if (access(dir, W_OK | X_OK) == 0)
		/* (and its group kept: cfgedit would refuse it later) */
		return cfgedit_keeps_group(conf, err, errsz) == 0 ? 0 : -1;
	e = errno;
	pw = getpwuid(geteuid());
	snprintf(err, errsz, "%s cannot be written as user %s: its directory "
	    "%s is not writable (%s).  --apply replaces the file from that "
	    "directory: give the directory and the file to the user that "
	    "runs tune (chown), or copy the recommended keys into the file "
	    "by hand", conf, pw != NULL ? pw->pw_name : "?", dir,
	    strerror(e));
	return -1;
}

/* write the changes into lists/L.conf, still as seen: 0, or -1 with
 * why in err; *written_r 1 when the file holds them (also on a failure
 * after the file was replaced: its directory not synced) */
static int
apply(const struct listcfg_global *g, const char *list,
    const struct changes *ch, const struct conf_seen *seen, int *written_r,
    char *err, size_t errsz)
{
	char path[4096], stamp[64];
	struct check_ctx cc;
	struct tm tm;
	time_t now = time(NULL);
	unsigned changed = 0;
	int rc;

	*written_r = 0;
	if (listcfg_list_path(g, list, path, sizeof(path)) < 0) {
		snprintf(err, errsz, "configuration path too long");
		return -1;
	}
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%d listgate tune", &tm);
	cc.g = g;
	cc.list = list;
	cc.conf = path;
	cc.seen = seen;
	if (ch->n == 0)
		return 0;
	{
		char lists[4096];
		struct stat ds;

		/* lists/ made as the configuration directory is: its group
		 * and its mode (no write for others, as the loader wants),
		 * whatever the umask.  The file made in it takes its group:
		 * made with ours (root's, under --allow-root), the file was
		 * root's 0640, and the filter, reading the configuration
		 * through the directory's group, could not read it (every
		 * post of the list deferred) */
		snprintf(lists, sizeof(lists), "%s/lists", g->dir);
		if (access(lists, F_OK) < 0) {
			if (stat(g->dir, &ds) < 0)
				ds.st_mode = 0755, ds.st_gid = getegid();
			if (mkdir(lists, 0700) < 0) {
				if (errno != EEXIST) {
					snprintf(err, errsz, "cannot create %s: "
					    "%s", lists, strerror(errno));
					return -1;
				}
			} else if ((ds.st_gid != getegid() && chown(lists,
			    (uid_t)-1, ds.st_gid) < 0 && errno != EPERM) ||
			    chmod(lists, ds.st_mode & 0755) < 0) {
				snprintf(err, errsz, "cannot set up %s: %s",
				    lists, strerror(errno));
				return -1;
			}
		}
	}
	rc = cfgedit_apply(path, ch->c, ch->n, stamp, check_file, &cc,
	    &changed, err, errsz);
	*written_r = changed > 0;
	return rc < 0 ? -1 : 0;
}

int
cmd_tune(int argc, char **argv, const struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "list", required_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'j' },
		{ "apply", no_argument, NULL, 'a' },
		{ "folds", required_argument, NULL, 'k' },
		{ "max-ham-held", required_argument, NULL, 'H' },
		{ "max-spam-passed", required_argument, NULL, 'S' },
		{ "cost-ham-held", required_argument, NULL, 'c' },
		{ "cost-spam-passed", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct listcfg_global g;
	struct listcfg_list l;
	struct queue *q;
	struct posttok pt, pt2;
	struct tune_opts o;
	struct tune_result r;
	struct tset *ts = NULL, *ts2 = NULL;
	struct progress pr;
	struct changes ch;
	const char *list = NULL;
	char path[4096], cpath[4096], err[1024];
	/* the advice carries the command, and that the quoted directory */
	char again[4 * 4096 + 512], adv[sizeof(again) + 2048];
	/* why --apply failed, and what is said of it (aerr: empty when it
	 * did not) */
	char why[3 * 4096], aerr[sizeof(why) + 1024] = "";
	unsigned given = 0;
	struct conf_seen seen;
	double t0 = clock_now_s();
	int ch_, json = 0, do_apply = 0, rc = EXIT_CMD_FAIL, same, pairs = 0;
	int final;
	int site;
	int rebuilt = 0, applied = 0, written = 0;
	unsigned long nrebuilt = 0;
	long long k;

	memset(&o, 0, sizeof(o));
	memset(&pr, 0, sizeof(pr));
	memset(&r, 0, sizeof(r));
	o.folds = 5;
	o.goal.w_ham = 1;
	o.goal.w_spam = 5;
	o.goal.max_ham_held = CUTOFF_NONE;
	o.goal.max_spam_passed = CUTOFF_NONE;
	o.search = 1;
	while ((ch_ = getopt_long(argc, argv, "l:jak:H:S:c:C:h", opts,
	    NULL)) != -1) {
		switch (ch_) {
		case 'l':
			list = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'a':
			do_apply = 1;
			break;
		case 'k':
			if (cmd_parse_num(optarg, 2, TUNE_MAX_FOLDS, &k) < 0) {
				cmd_err(NAME, "bad --folds '%s' (2 to %d)",
				    optarg, TUNE_MAX_FOLDS);
				return EXIT_CMD_USAGE;
			}
			o.folds = (unsigned)k;
			given |= GIVEN_FOLDS;
			break;
		case 'H':
		case 'S':
			if (parse_frac(optarg, ch_ == 'H' ?
			    &o.goal.max_ham_held : &o.goal.max_spam_passed) < 0) {
				cmd_err(NAME, "bad --%s '%s' (a fraction such "
				    "as 0.005, or a percentage such as 0.5%%)",
				    ch_ == 'H' ? "max-ham-held" :
				    "max-spam-passed", optarg);
				return EXIT_CMD_USAGE;
			}
			given |= ch_ == 'H' ? GIVEN_MAX_HAM : GIVEN_MAX_SPAM;
			break;
		case 'c':
		case 'C':
			if (parse_weight(optarg, ch_ == 'c' ? &o.goal.w_ham :
			    &o.goal.w_spam) < 0) {
				cmd_err(NAME, "bad --%s '%s' (a number from 0 "
				    "to 1000000)", ch_ == 'c' ? "cost-ham-held" :
				    "cost-spam-passed", optarg);
				return EXIT_CMD_USAGE;
			}
			given |= ch_ == 'c' ? GIVEN_COST_HAM : GIVEN_COST_SPAM;
			break;
		case 'h':
			usage(stdout);
			return EXIT_CMD_OK;
		default:
			usage(stderr);
			return EXIT_CMD_USAGE;
		}
	}
	if (cmd_no_args(NAME, argc, argv, usage) != EXIT_CMD_OK)
		return EXIT_CMD_USAGE;
	if (list == NULL) {
		cmd_err(NAME, "--list is required");
		usage(stderr);
		return EXIT_CMD_USAGE;
	}
	if (o.goal.w_ham == 0 && o.goal.w_spam == 0) {
		cmd_err(NAME, "the two costs cannot both be 0");
		return EXIT_CMD_USAGE;
	}
	if (!listcfg_name_ok(list)) {
		cmd_bad_list(NAME, list);
		return EXIT_CMD_USAGE;
	}
	pr.on = isatty(STDERR_FILENO);
	pr.t0 = t0;
	if (cmd_connect(NAME, ctx, &g, &q, APP_CHECK_SCHEMA |
	    APP_JOURNAL_READS) < 0)
		return EXIT_CMD_FAIL;
	/* a misspelt --list (a nightly --apply's) has no journal: "needs
	 * more data" alone does not say why, as every other command's
	 * --list does */
	cmd_warn_unknown_list(NAME, q, &g, list, "tune");
	/* the file as read, for --apply */
	if (listcfg_list_path(&g, list, cpath, sizeof(cpath)) < 0)
		cpath[0] = '\0';
	conf_snap(cpath, &seen);
	if (cmd_list_config(NAME, &g, list, &l, path, sizeof(path)) < 0) {
		queue_close(q);
		listcfg_free_global(&g);
		return EXIT_CMD_FAIL;
	}
	/* posts become tokens as filter and sync make them: the evidence
	 * (member_check, DNSBL) included */
	if (posttok_init(&pt, &g, &l, err, sizeof(err)) < 0 ||
	    posttok_init(&pt2, &g, &l, err, sizeof(err)) < 0) {
		cmd_err(NAME, "list %s: %s", list, err);
		goto out;
	}
	/* and with word_pairs the other way: the feature family is
	 * searched too (the same posts, tokenized twice) */
	pt2.to.bigrams = pt2.list_bigrams = !pt.to.bigrams;
	/* and the vote budget both ways: its marks (no other token) */
	pt.to.marks = pt2.to.marks = 1;
	settings_bayes(&l, &o.cur);
	o.ham_cutoff = l.ham_cutoff;
	o.spam_cutoff = l.spam_cutoff;
	o.discard_cutoff = l.discard_cutoff;
	o.progress = on_tune;
	o.pctx = &pr;
	memset(&r, 0, sizeof(r));
	o.word_pairs = pt.to.bigrams;
	/* the site store is built from every list's posts: its
	 * tokenization is not judged on its own journal's */
	site = sync_is_site(&g, &l);
	if ((ts = tset_new_posttok(&pt)) == NULL ||
	    (!site && (ts2 = tset_new_posttok(&pt2)) == NULL)) {
		cmd_err(NAME, "out of memory");
		goto out;
	}
	ts->twin = ts2;
	if (tset_load_journal(ts, q, list, on_events, &pr, err,
	    sizeof(err)) < 0) {
		progress_end(&pr);
		cmd_err(NAME, "list %s: %s", list, err);
		goto out;
	}
	if (!do_apply) {
		queue_close(q);	/* --apply may rebuild the token file */
		q = NULL;
	}
	if (tset_finish(ts, o.folds) < 0 ||
	    (ts2 != NULL && tset_finish(ts2, o.folds) < 0)) {
		progress_end(&pr);
		cmd_err(NAME, "out of memory");
		goto out;
	}
	if (ts->st.damaged > 0) {
		progress_end(&pr);
		cmd_err(NAME, "list %s: %lu journal event%s could not be read "
		    "and %s left out (the last: %s)", list, ts->st.damaged,
		    ts->st.damaged == 1 ? "" : "s", ts->st.damaged == 1 ?
		    "was" : "were", ts->st.damaged_err);
	}
	if (!tune_enough(ts->nham, ts->nspam, o.folds, err, sizeof(err))) {
		progress_end(&pr);
		if (json) {
			struct tune_setting cur;

			/* the keys of a recommendation's object, those
			 * without one null: a nightly --apply --json reads
			 * the same object either way */
			memset(&cur, 0, sizeof(cur));
			cur.bp = o.cur;
			cur.ham_cutoff = l.ham_cutoff;
			cur.spam_cutoff = l.spam_cutoff;
			printf("{\"list\":\"%s\",\"posts\":{\"ham\":%zu,"
			    "\"spam\":%zu},\"folds\":%u,", list, ts->nham,
			    ts->nspam, o.folds);
			json_goal(stdout, &o.goal);
			fputs(",\"current\":", stdout);
			json_setting(stdout, &cur, o.word_pairs, 0, 0, 0,
			    ALL_PARAMS);
			fputs(",\"recommended\":null,\"targets_met\":null,"
			    "\"targets_missed\":null,\"ham_cutoff_limit\":null,"
			    "\"confidence\":null,\"advice\":", stdout);
			json_string(stdout, err);
			printf(",\"settings_scored\":0,\"seconds\":%.2f,"
			    "\"word_pairs\":null,", clock_now_s() - t0);
			json_journal(stdout, ts);
			if (do_apply) {
				snprintf(aerr, sizeof(aerr), "nothing applied: "
				    "%s", err);
				fputs(",\"applied\":[],\"apply_error\":", stdout);
				json_string(stdout, aerr);
			}
			fputs("}\n", stdout);
		} else
			printf("list %s: %s.\n", list, err);
		/* (the reason too: a nightly --apply sends its report to
		 * /dev/null) */
		if (do_apply)
			cmd_err(NAME, "list %s: nothing applied: %s", list, err);
		goto out;
	}
	o.alt = ts2;
	if (tune_run(ts, &o, &r, err, sizeof(err)) < 0) {
		progress_end(&pr);
		cmd_err(NAME, "list %s: %s", list, err);
		goto out;
	}
	progress_end(&pr);
	changes_of(&r, &ch);
	same = ch.n == 0;
	/*
	 * --apply.  A change of word_pairs rebuilds the token file first,
	 * with the new setting, which the file records: every writer (sync,
	 * train) learns into it as it was built, whatever the key says
	 * meanwhile; then the key.  Between the two the filter scores with
	 * the old setting against the new file, where a pair the file lacks
	 * does not vote (tok_is_pair) and pairs it has go unread.  A failed
	 * rebuild applies nothing.
	 */
	final = r.changed & TUNE_WORD_PAIRS ? r.word_pairs : o.word_pairs;
	/* (and a file built the other way, the key changed by hand since,
	 * is rebuilt to match too) */
	pairs = do_apply && ((r.changed & TUNE_WORD_PAIRS) || (!site &&
	    file_pairs(&g, path) == !final));
	/* a failed --apply still reports the recommendation (a nightly
	 * --apply --json script reads its object either way), saying why
	 * nothing was applied, and exits 1 */
	if (do_apply && (ch.n > 0 || pairs) &&
	    apply_writable(&g, cpath, why, sizeof(why)) < 0)
		snprintf(aerr, sizeof(aerr), "nothing applied: %s", why);
	else if (pairs && rebuild_pairs(q, &g, &l, final, &nrebuilt, why,
	    sizeof(why)) < 0)
		snprintf(aerr, sizeof(aerr), "nothing applied: %s", why);
	else {
		rebuilt = pairs;
		if (do_apply && apply(&g, list, &ch, &seen, &written, why,
		    sizeof(why)) < 0) {
			/* the file replaced, its directory not synced: the
			 * keys are set, which the report must not deny
			 * ("nothing applied", "not changed") */
			if (written)
				snprintf(aerr, sizeof(aerr), "%s (the keys are "
				    "set: a crash before the directory reaches "
				    "the disk may undo it)", why);
			else if (pairs && final != o.word_pairs)
				snprintf(aerr, sizeof(aerr), "%s; the token "
				    "file was rebuilt %s word pairs and learns "
				    "so (the list still says word_pairs = %s): "
				    "apply again, or `%s rebuild --list %s` to "
				    "match the key", why, final ? "with" :
				    "without", final ? "no" : "yes",
				    suggest_cmd(), list);
			else
				snprintf(aerr, sizeof(aerr), "nothing applied: "
				    "%s", why);
		}
	}
	applied = do_apply && (aerr[0] == '\0' || written);
	/* a file with other names (hard links: one file for two lists)
	 * was replaced under this one alone: the others keep the old
	 * settings, which must not go unsaid */
	if (written && seen.missing == 0 && seen.st.st_nlink > 1)
		cmd_err(NAME, "warning: list %s: %s had %lu other hard link%s "
		    "(another list's file?), which keep%s the old settings: "
		    "the file was replaced under this name alone", list,
		    cpath, (unsigned long)seen.st.st_nlink - 1,
		    seen.st.st_nlink == 2 ? "" : "s", seen.st.st_nlink == 2 ?
		    "s" : "");
	/* (after --apply, which has then applied what it advises) */
	if (again_cmd(again, sizeof(again), list, &o, given) < 0) {
		cmd_err(NAME, "list %s: the configuration directory %s is too "
		    "long to name in the advice", list, g.dir);
		goto out;
	}
	advice(adv, sizeof(adv), list, applied && ch.n > 0 ? NULL : again,
	    &r, same);
	if (json)
		print_json(stdout, list, ts, &o, &r, adv, do_apply ? &ch : NULL,
		    applied, aerr[0] != '\0' ? aerr : NULL, rebuilt ?
		    (long)nrebuilt : -1, clock_now_s() - t0);
	else {
		if (print_text(stdout, list, ts, &o, &r, adv,
		    clock_now_s() - t0) < 0) {
			cmd_err(NAME, "out of memory");
			goto out;
		}
		if (do_apply && !applied)
			printf("\nlists/%s.conf: not changed (--apply failed; "
			    "why is on the standard error)\n", list);
		else if (do_apply && ch.n > 0)
			printf("\nlists/%s.conf: %zu key%s set (the old values "
			    "are kept there as comments)\n", list, ch.n,
			    ch.n == 1 ? "" : "s");
		else if (do_apply)
			printf("\nlists/%s.conf: nothing to change\n", list);
		if (rebuilt)
			printf("the token file: rebuilt from %lu journal "
			    "event%s, %s word pairs\n", nrebuilt,
			    nrebuilt == 1 ? "" : "s", final ? "with" :
			    "without");
	}
	/* (said whatever became of the report: a nightly run's standard
	 * output may go to a full disk, its standard error to mail) */
	if (aerr[0] != '\0')
		cmd_err(NAME, "list %s: %s", list, aerr);
	if (cmd_stdout_done(NAME) < 0 || aerr[0] != '\0')
		goto out;
	rc = EXIT_CMD_OK;
out:
	progress_end(&pr);
	tune_result_free(&r);
	tset_free(ts);
	tset_free(ts2);
	if (q != NULL)
		queue_close(q);
	listcfg_free_list(&l);
	listcfg_free_global(&g);
	return rc;
}

/*
 * cmd_stats.c - `listgate stats`: what each list's filter and
 * moderators did, per list and per period
 *
 *   listgate [--config DIR] stats [--list L] [--json] [--since DATE]
 *            [--by day|week]
 *
 * Per list: posts passed (the filter's local counter, db/passcount.h:
 * this host's passes only), held, approved, rejected, discarded and
 * expired; the moderators' delay from hold to decision (median and 90th
 * percentile); the rates of ham held and of spam released that the
 * decisions show, and how they drifted (the last 7 days against the 30
 * before); what the token file and the journal hold.  Days are UTC.
 * On a terminal each list gets a sparkline per period (--by) or a small
 * bar chart, fitted to the terminal's width.  List names from the
 * database and the directories are checked before a path is built;
 * nothing untrusted is printed but list names so checked.  Exit 0, 1 on failure, 2 on usage errors.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db/journal.h"
#include "db/passcount.h"
#include "db/qstats.h"
#include "db/queue.h"
#include "db/tokdb.h"
#include "gate/app/app.h"
#include "gate/cmd/cmd.h"
#include "gate/util/xalloc.h"
#include "listcfg/listcfg.h"

#define NAME		"stats"
#define DEFAULT_DAYS	30	/* without --since: the last 30 days */
#define DAY		86400

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: listgate [--config DIR] stats [--list L] [--json]\n"
	    "                [--since DATE] [--by day|week]\n"
	    "\n"
	    "What each list's filter and moderators did since DATE (UTC days;\n"
	    "default: the last %d days): posts passed, held, approved, rejected,\n"
	    "discarded and expired, the moderators' delay from hold to decision,\n"
	    "the rates of ham held and spam released the decisions show and\n"
	    "their drift (the last 7 days against the 30 before), and what the\n"
	    "token file and the journal hold.  Passed posts are counted by this\n"
	    "host's filter (tokens_dir/L.passed).\n"
	    "\n"
	    "  -l, --list L        only this list\n"
	    "  -j, --json          one JSON object\n"
	    "  -s, --since DATE    from DATE (YYYY-MM-DD, UTC) on\n"
	    "  -b, --by day|week   also per day or per week (weeks from Monday)\n"
	    "  -h, --help          this help\n"
	    "\n"
	    "Exit status: 0 ok, 1 failure, 2 usage error.\n", DEFAULT_DAYS);
}

/* "YYYY-MM-DD" as a UTC day number: 0, or -1 (a day the month does
 * not have, 2026-02-30, too; and any other text: strptime skips blanks
 * before a number and takes one digit, so "2026- 1- 5" was a day) */
static int
parse_date(const char *s, long *day_r)
{
	struct tm tm, want, back;
	char *end;
	time_t t;
	size_t i;

	if (strlen(s) != 10)
		return -1;
	for (i = 0; i < 10; i++)
		if (i == 4 || i == 7 ? s[i] != '-' : s[i] < '0' || s[i] > '9')
			return -1;
	memset(&tm, 0, sizeof(tm));
	if ((end = strptime(s, "%Y-%m-%d", &tm)) == NULL || *end != '\0')
		return -1;
	want = tm;		/* timegm normalises tm in place */
	if ((t = timegm(&tm)) == (time_t)-1 || t < 0)
		return -1;
	/* strptime takes day 1-31 in any month and timegm moves it on */
	if (gmtime_r(&t, &back) == NULL || back.tm_year != want.tm_year ||
	    back.tm_mon != want.tm_mon || back.tm_mday != want.tm_mday)
		return -1;
	*day_r = (long)(t / DAY);
	return 0;
}

static const char *
date_of(char *buf, size_t sz, long day)
{
	time_t t = (time_t)day * DAY;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, sz, "%Y-%m-%d", &tm);
	return buf;
}

/* the names to report, sorted, each once */
struct names {
	char (*v)[LG_MAX_LIST_NAME + 1];
	size_t n, cap;
};

static int
add_name(const char *list, void *vctx)
{
	struct names *nm = vctx;
	size_t i;

	if (!listcfg_name_ok(list))
		return 0;
	for (i = 0; i < nm->n; i++)
		if (strcmp(nm->v[i], list) == 0)
			return 0;
	if (nm->n == nm->cap) {
		size_t nc = nm->cap ? nm->cap * 2 : 16;
		void *p = xrealloc(nm->v, nc * sizeof(*nm->v));

		if (p == NULL)
			return -1;
		nm->v = p;
		nm->cap = nc;
	}
	snprintf(nm->v[nm->n++], LG_MAX_LIST_NAME + 1, "%s", list);
	return 0;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* the names of dir's entries ending in suffix: 0, or -1 out of memory */
static int
names_in(const char *dir, const char *suffix, struct names *nm)
{
	char name[LG_MAX_LIST_NAME + 1];
	struct dirent *e;
	size_t n, sl = strlen(suffix);
	DIR *d;
	int rc = 0;

	if (dir == NULL || (d = opendir(dir)) == NULL)
		return 0;
	while ((e = readdir(d)) != NULL && rc == 0) {
		n = strlen(e->d_name);
		if (n <= sl || n - sl > LG_MAX_LIST_NAME ||
		    strcmp(e->d_name + n - sl, suffix) != 0)
			continue;
		memcpy(name, e->d_name, n - sl);
		name[n - sl] = '\0';
		rc = add_name(name, nm);
	}
	closedir(d);
	return rc;
}

/* one period's figures with its passed posts */
struct fig {
	long start, end;		/* UTC days, end exclusive */
	uint64_t passed;
	int passed_part;		/* begins before the counter's
					 * PASSCOUNT_DAYS: passed is short */
	int passed_unknown;		/* the counter could not be read
					 * (reported): passed is none */
	struct qstats_period q;
};

/* ham held and spam released, as fractions (-1: nothing to divide, or
 * a count of passed posts that does not reach back to the period's
 * start: approved / (approved + 0) read as all ham held) */
static double
ham_rate(const struct fig *f)
{
	double n = (double)f->q.approved + (double)f->passed;

	return n > 0 && !f->passed_part && !f->passed_unknown ?
	    f->q.approved / n : -1;
}

static double
spam_rate(const struct fig *f)
{
	double n = (double)f->q.rejected + (double)f->q.discarded;

	return n > 0 ? f->q.reversed / n : -1;
}

/* the figures of list for consecutive periods given by day bounds
 * (np + 1 ascending days; the periods are [days[i], days[i + 1])) into
 * out[np]: 0; 1 when the pass counter cannot be read (the periods'
 * passed_unknown, the database's figures filled; reported unless
 * *told, which is then set); or -1 reported */
static int
figures(struct queue *q, const struct listcfg_global *g, const char *list,
    const long *days, size_t np, long today, struct fig *out, int *told)
{
	struct qstats_period *qp = NULL;
	time_t *b = NULL;
	uint64_t *pc = NULL;
	char path[4096], err[1024];
	long from, to, d;
	size_t i, k;
	int rc = -1, r;

	memset(out, 0, np * sizeof(*out));
	if ((b = xcalloc(np + 1, sizeof(*b))) == NULL ||
	    (qp = xcalloc(np, sizeof(*qp))) == NULL ||
	    (pc = xcalloc(PASSCOUNT_DAYS, sizeof(*pc))) == NULL) {
		cmd_err(NAME, "out of memory");
		goto out;
	}
	for (i = 0; i <= np; i++)
		b[i] = (time_t)days[i] * DAY;
	if (qstats_periods(q, list, b, np, qp, err, sizeof(err)) < 0) {
		cmd_err(NAME, "list %s: %s", list, err);
		goto out;
	}
	for (i = 0; i < np; i++) {
		out[i].start = days[i];
		out[i].end = days[i + 1];
		out[i].q = qp[i];
		out[i].passed_part = days[i] < today - (PASSCOUNT_DAYS - 1);
	}
	/* passed posts: the counter remembers PASSCOUNT_DAYS days */
	from = days[0];
	if (from < today - (PASSCOUNT_DAYS - 1))
		from = today - (PASSCOUNT_DAYS - 1);
	to = days[np] - 1 < today ? days[np] - 1 : today;
	if (from <= to && from >= 0) {
		if (listcfg_passcount_path(g, list, path, sizeof(path)) < 0) {
			cmd_err(NAME, "list %s: path too long", list);
			goto out;
		}
		r = passcount_read(path, (uint32_t)from, (uint32_t)to, pc, err,
		    sizeof(err));
		if (r < 0) {
			/* the local counter hides none of the database's
			 * figures */
			if (!*told)
				cmd_err(NAME, "list %s: %s", list, err);
			*told = 1;
			for (i = 0; i < np; i++)
				out[i].passed_unknown = 1;
			rc = 1;
			goto out;
		}
		for (d = from, k = 0; d <= to; d++) {
			while (k < np && d >= out[k].end)
				k++;
			if (k < np && d >= out[k].start)
				out[k].passed += pc[d - from];
		}
	}
	rc = 0;
out:
	xfree(b);
	xfree(qp);
	xfree(pc);
	return rc;
}

/* what the list's token file and journal hold */
struct trained {
	int have_file;
	int file_bad;		/* there, but cannot be read (reported) */
	uint32_t ham, spam;
	long tokens;
	long long bytes;
	int have_journal;
	int64_t jham, jspam;
};

/* what list's token file and journal hold: 0; 1 when the token file
 * exists but cannot be read (reported: t->file_bad, the rest filled);
 * or -1 reported (a journal that cannot be counted) */
static int
trained_of(struct queue *q, const struct listcfg_global *g,
    const char *list, struct trained *t)
{
	struct tokdb *db;
	struct stat st;
	char path[4096], err[1024];
	int r;

	memset(t, 0, sizeof(*t));
	if (listcfg_tokens_path(g, list, path, sizeof(path)) < 0) {
		cmd_err(NAME, "list %s: token file path too long", list);
		return -1;
	}
	if (stat(path, &st) == 0) {
		r = tokdb_open(path, TOKDB_READ, g->lock_wait_ms, &db, err,
		    sizeof(err));
		if (r == TOKDB_ENOENT)
			;	/* gone since: none */
		else if (r != 0) {
			cmd_err(NAME, "list %s: %s", list, err);
			t->file_bad = 1;
		} else {
			if (tokdb_msgcounts(db, &t->spam, &t->ham) < 0 ||
			    (t->tokens = tokdb_ntokens(db)) < 0) {
				cmd_err(NAME, "list %s: %s", list,
				    tokdb_errmsg(db));
				t->file_bad = 1;
				t->ham = t->spam = 0;
				t->tokens = 0;
			} else {
				t->have_file = 1;
				t->bytes = (long long)st.st_size;
			}
			tokdb_close(db);
		}
	}
	if (journal_net_counts(q, list, INT64_MAX, &t->jham, &t->jspam, err,
	    sizeof(err)) < 0) {
		cmd_err(NAME, "list %s: %s", list, err);
		return -1;
	}
	t->have_journal = 1;
	return t->file_bad;
}

/* --- output --------------------------------------------------------------- */

/* a figure, or null when negative (none); 15 digits: a delay of weeks
 * to the microsecond (6 digits rounded 1234567 s to 1.23457e+06) */
static void
json_num(FILE *f, const char *key, double v)
{
	if (v < 0)
		fprintf(f, ",\"%s\":null", key);
	else
		fprintf(f, ",\"%s\":%.15g", key, v);
}

/* the keys of one period (or of the whole span) */
static void
json_fig(FILE *f, const struct fig *x)
{
	if (x->passed_unknown)
		fputs("\"passed\":null", f);
	else
		fprintf(f, "\"passed\":%llu", (unsigned long long)x->passed);
	fprintf(f, ",\"held\":%lld,\"approved\":%lld,"
	    "\"rejected\":%lld,\"discarded\":%lld,\"expired\":%lld",
	    (long long)x->q.held,
	    (long long)x->q.approved, (long long)x->q.rejected,
	    (long long)x->q.discarded, (long long)x->q.expired);
	json_num(f, "delay_median_s", x->q.delay_median_s);
	json_num(f, "delay_p90_s", x->q.delay_p90_s);
	fprintf(f, ",\"filter_discarded\":%lld,\"decisions\":%lld,"
	    "\"reversed\":%lld", (long long)x->q.filter_discarded,
	    (long long)x->q.delays, (long long)x->q.reversed);
	json_num(f, "ham_held_rate", ham_rate(x));
	json_num(f, "spam_released_rate", spam_rate(x));
}

static void
json_list(FILE *f, const char *list, const struct fig *tot,
    const struct fig *drift, const struct trained *t, const struct fig *per,
    size_t np, int first)
{
	char a[16];
	size_t i;

	fprintf(f, "%s{\"list\":\"%s\",", first ? "" : ",", list);
	json_fig(f, tot);
	fputs(",\"drift\":{\"last_7_days\":{", f);
	fprintf(f, "\"since\":\"%s\"", date_of(a, sizeof(a), drift[1].start));
	json_num(f, "ham_held_rate", ham_rate(&drift[1]));
	json_num(f, "spam_released_rate", spam_rate(&drift[1]));
	fputs("},\"previous_30_days\":{", f);
	fprintf(f, "\"since\":\"%s\"", date_of(a, sizeof(a), drift[0].start));
	json_num(f, "ham_held_rate", ham_rate(&drift[0]));
	json_num(f, "spam_released_rate", spam_rate(&drift[0]));
	fputs("}},\"trained\":{\"token_file\":", f);
	if (t->have_file)
		fprintf(f, "{\"ham\":%u,\"spam\":%u,\"tokens\":%ld,\"bytes\":%lld}",
		    t->ham, t->spam, t->tokens, t->bytes);
	else
		fputs(t->file_bad ? "null,\"token_file_unreadable\":true" :
		    "null", f);
	fputs(",\"journal\":", f);
	if (t->have_journal)
		fprintf(f, "{\"ham\":%lld,\"spam\":%lld}", (long long)t->jham,
		    (long long)t->jspam);
	else
		fputs("null", f);
	fputc('}', f);
	if (per != NULL) {
		fputs(",\"periods\":[", f);
		for (i = 0; i < np; i++) {
			fprintf(f, "%s{\"start\":\"%s\",", i ? "," : "",
			    date_of(a, sizeof(a), per[i].start));
			json_fig(f, &per[i]);
			fputc('}', f);
		}
		fputc(']', f);
	}
	fputc('}', f);
}

/* "2d 3h", "1h 05m", "4m 10s", "12s", "-" */
static const char *
dur(char *buf, size_t sz, double s)
{
	long v = (long)(s + 0.5);

	if (s < 0)
		snprintf(buf, sz, "-");
	else if (v >= 86400)
		snprintf(buf, sz, "%ldd %ldh", v / 86400, v % 86400 / 3600);
	else if (v >= 3600)
		snprintf(buf, sz, "%ldh %02ldm", v / 3600, v % 3600 / 60);
	else if (v >= 60)
		snprintf(buf, sz, "%ldm %02lds", v / 60, v % 60);
	else
		snprintf(buf, sz, "%lds", v);
	return buf;
}

static const char *
rate(char *buf, size_t sz, double r)
{
	if (r < 0)
		snprintf(buf, sz, "-");
	else
		snprintf(buf, sz, "%.1f%%", 100 * r);
	return buf;
}

/* the width of the terminal on standard output: COLUMNS, else what the
 * terminal says, else 80 */
static size_t
term_cols(void)
{
	const char *s = getenv("COLUMNS");
	struct winsize ws;
	char *end;
	long v;

	if (s != NULL && *s >= '0' && *s <= '9') {
		errno = 0;
		v = strtol(s, &end, 10);
		if (*end == '\0' && errno == 0 && v > 0 && v <= 100000)
			return (size_t)v;
	}
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

/* the highest of v[0 .. n - 1] (0 when none is above it) */
static double
vmax(const double *v, size_t n)
{
	double max = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] > max)
			max = v[i];
	return max;
}

/* a sparkline of n values, a mark for each g of them (the highest: a
 * peak stays one); unknown: a "?" for each mark and the max, as the
 * table says of passed posts whose counter could not be read (0 read
 * as none passed) */
static void
spark(FILE *f, const char *label, const double *v, size_t n, size_t g,
    int unknown)
{
	static const char lv[] = " .:-=+*#%@";
	double max = vmax(v, n), m;
	size_t i;
	int k;

	fprintf(f, "  %-9s |", label);
	for (i = 0; i < n; i += g) {
		m = vmax(v + i, n - i < g ? n - i : g);
		k = m <= 0 || max <= 0 ? 0 : 1 + (int)(m * 8 / max);
		fputc(unknown ? '?' : lv[k > 9 ? 9 : k], f);
	}
	if (unknown)
		fputs("| max ?\n", f);
	else
		fprintf(f, "| max %.0f\n", max);
}

/* the passed posts of a period, or "?" when the counter could not be
 * read */
static const char *
passed_of(char *buf, size_t sz, const struct fig *x)
{
	if (x->passed_unknown)
		return "?";
	snprintf(buf, sz, "%llu", (unsigned long long)x->passed);
	return buf;
}

static void
text_list(FILE *f, const char *list, const struct fig *tot,
    const struct fig *drift, const struct trained *t, const struct fig *per,
    size_t np, int by_week, int tty)
{
	char a[32], b[32], c[32], d[32];
	size_t i;

	fprintf(f, "list %s\n", list);
	fprintf(f, "  passed %s  held %lld  approved %lld  rejected %lld  "
	    "discarded %lld  expired %lld", passed_of(a, sizeof(a), tot),
	    (long long)tot->q.held, (long long)tot->q.approved,
	    (long long)tot->q.rejected, (long long)tot->q.discarded,
	    (long long)tot->q.expired);
	if (tot->q.filter_discarded)
		fprintf(f, "  (discarded by the filter %lld)",
		    (long long)tot->q.filter_discarded);
	fputc('\n', f);
	fprintf(f, "  moderators' delay: median %s, 90th percentile %s (%lld "
	    "decision%s)\n", dur(a, sizeof(a), tot->q.delay_median_s),
	    dur(b, sizeof(b), tot->q.delay_p90_s), (long long)tot->q.delays,
	    tot->q.delays == 1 ? "" : "s");
	fprintf(f, "  ham held %s, spam released %s\n", rate(a, sizeof(a),
	    ham_rate(tot)), rate(b, sizeof(b), spam_rate(tot)));
	fprintf(f, "  drift: ham held %s in the last 7 days against %s in the "
	    "30 before; spam released %s against %s\n", rate(a, sizeof(a),
	    ham_rate(&drift[1])), rate(b, sizeof(b), ham_rate(&drift[0])),
	    rate(c, sizeof(c), spam_rate(&drift[1])), rate(d, sizeof(d),
	    spam_rate(&drift[0])));
	if (t->have_file)
		fprintf(f, "  token file: %u ham and %u spam trained, %ld "
		    "token%s, %lld bytes\n", t->ham, t->spam, t->tokens,
		    t->tokens == 1 ? "" : "s", t->bytes);
	else if (t->file_bad)
		fputs("  token file: cannot be read (see the message above)\n",
		    f);
	else
		fputs("  token file: none on this host\n", f);
	if (t->have_journal)
		fprintf(f, "  journal: %lld ham and %lld spam trained\n",
		    (long long)t->jham, (long long)t->jspam);
	if (per != NULL) {
		fprintf(f, "  %-10s %7s %6s %6s %6s %6s %6s %9s %9s\n",
		    by_week ? "week of" : "day", "passed", "held", "appr",
		    "rej", "disc", "exp", "delay med", "delay p90");
		for (i = 0; i < np; i++)
			fprintf(f, "  %-10s %7s %6lld %6lld %6lld %6lld %6lld "
			    "%9s %9s\n", date_of(a, sizeof(a), per[i].start),
			    passed_of(d, sizeof(d), &per[i]),
			    (long long)per[i].q.held,
			    (long long)per[i].q.approved,
			    (long long)per[i].q.rejected,
			    (long long)per[i].q.discarded,
			    (long long)per[i].q.expired,
			    dur(b, sizeof(b), per[i].q.delay_median_s),
			    dur(c, sizeof(c), per[i].q.delay_p90_s));
	}
	if (tty && per != NULL && np > 0) {
		double *v = xcalloc(4 * np, sizeof(*v));
		size_t room, g, w = 0;
		int j, n;

		if (v != NULL) {
			for (i = 0; i < np; i++) {
				v[i] = (double)per[i].passed;
				v[np + i] = (double)per[i].q.held;
				v[2 * np + i] = (double)(per[i].q.rejected +
				    per[i].q.discarded);
				v[3 * np + i] = per[i].q.delay_median_s;
			}
			/* the marks fit the terminal beside the label (13)
			 * and the widest "| max N" */
			for (j = 0; j < 4; j++) {
				n = snprintf(a, sizeof(a), "| max %.0f",
				    vmax(v + j * np, np));
				if (n > 0 && (size_t)n > w)
					w = (size_t)n;
			}
			room = term_cols() > 13 + w ? term_cols() - 13 - w : 1;
			g = (np + room - 1) / room;
			if (g > 1)
				fprintf(f, "  (each mark: the highest of %zu "
				    "%s)\n", g, by_week ? "weeks" : "days");
			spark(f, "passed", v, np, g, per[0].passed_unknown);
			spark(f, "held", v + np, np, g, 0);
			spark(f, "spam", v + 2 * np, np, g, 0);
			spark(f, "delay", v + 3 * np, np, g, 0);
			xfree(v);
		}
	} else if (tty) {
		/* a small bar chart of the totals */
		static const char *const lab[] = { "passed", "held",
		    "approved", "rejected", "discarded", "expired" };
		double v[6], max = 0;
		size_t cols;
		int j, w, bw, n;

		v[0] = (double)tot->passed;
		v[1] = (double)tot->q.held;
		v[2] = (double)tot->q.approved;
		v[3] = (double)tot->q.rejected;
		v[4] = (double)tot->q.discarded;
		v[5] = (double)tot->q.expired;
		for (j = 0; j < 6; j++)
			if (v[j] > max)
				max = v[j];
		/* 40 marks at most, fewer when the terminal is narrower
		 * than the label (13), the bar and "| N" */
		cols = term_cols();
		n = snprintf(a, sizeof(a), "| %.0f", max);
		bw = n > 0 && cols > 13 + (size_t)n + 40 ? 40 :
		    n > 0 && cols > 13 + (size_t)n ? (int)(cols - 13 - n) : 1;
		for (j = 0; j < 6; j++) {
			w = max > 0 ? (int)(v[j] * bw / max + 0.5) : 0;
			if (v[j] > 0 && w == 0)
				w = 1;
			/* passed posts whose counter could not be read: "?",
			 * as above, not a bar of 0 */
			if (j == 0 && tot->passed_unknown)
				fprintf(f, "  %-9s |%-*s| ?\n", lab[j], bw, "");
			else
				fprintf(f, "  %-9s |%-*.*s| %.0f\n", lab[j], bw,
				    w, "########################################",
				    v[j]);
		}
	}
}

int
cmd_stats(int argc, char **argv, const struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "list", required_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'j' },
		{ "since", required_argument, NULL, 's' },
		{ "by", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct listcfg_global g;
	struct queue *q;
	struct names nm;
	struct fig tot, drift[2], *per = NULL;
	struct trained tr;
	const char *list = NULL, *by = NULL;
	char err[1024], a[16], b[16], dir[4096];
	long since = -1, today, *bounds = NULL, span[2], dd[3], d;
	size_t np = 0, i;
	int ch, json = 0, tty, nfail = 0, by_week = 0, nshown = 0, r, told;

	while ((ch = getopt_long(argc, argv, "l:js:b:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			list = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 's':
			if (parse_date(optarg, &since) < 0) {
				cmd_err(NAME, "bad --since '%s' (want a day of "
				    "the calendar, YYYY-MM-DD, from 1970-01-01 "
				    "on)", optarg);
				return EXIT_CMD_USAGE;
			}
			break;
		case 'b':
			by = optarg;
			if (strcmp(by, "day") != 0 && strcmp(by, "week") != 0) {
				cmd_err(NAME, "bad --by '%s' (day or week)", by);
				return EXIT_CMD_USAGE;
			}
			by_week = strcmp(by, "week") == 0;
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
	if (list != NULL && !listcfg_name_ok(list)) {
		cmd_bad_list(NAME, list);
		return EXIT_CMD_USAGE;
	}
	today = (long)(time(NULL) / DAY);
	if (since < 0)
		since = today - (DEFAULT_DAYS - 1);
	if (since > today) {
		cmd_err(NAME, "--since %s is in the future", date_of(a,
		    sizeof(a), since));
		return EXIT_CMD_USAGE;
	}
	/* the periods: days, or weeks from Monday (1970-01-01 was a
	 * Thursday: day d is a Monday when (d + 3) % 7 == 0) */
	if (by != NULL) {
		size_t cap = 1;		/* the periods, counted per --by */

		for (d = since + 1; d <= today; d++)
			if (!by_week || (d + 3) % 7 == 0)
				cap++;
		if (cap > QSTATS_MAX_PERIODS - 2) {
			cmd_err(NAME, "--since %s --by %s: %zu periods, at most "
			    "%u", date_of(a, sizeof(a), since), by, cap,
			    (unsigned)QSTATS_MAX_PERIODS - 2);
			return EXIT_CMD_USAGE;
		}
		cap += 2;
		if ((bounds = xcalloc(cap, sizeof(*bounds))) == NULL ||
		    (per = xcalloc(cap, sizeof(*per))) == NULL) {
			xfree(bounds);
			cmd_err(NAME, "out of memory");
			return EXIT_CMD_FAIL;
		}
		bounds[np++] = since;
		for (d = since + 1; d <= today; d++)
			if (!by_week || (d + 3) % 7 == 0)
				bounds[np++] = d;
		bounds[np] = today + 1;
	}
	span[0] = since;
	span[1] = today + 1;
	dd[0] = today - 36;
	dd[1] = today - 6;
	dd[2] = today + 1;
	memset(&nm, 0, sizeof(nm));
	if (cmd_connect(NAME, ctx, &g, &q, APP_CHECK_SCHEMA) < 0) {
		xfree(bounds);
		xfree(per);
		return EXIT_CMD_FAIL;
	}
	if (list != NULL) {
		nfail += add_name(list, &nm) < 0;
		cmd_warn_unknown_list(NAME, q, &g, list, "report");
	} else {
		snprintf(dir, sizeof(dir), "%s/lists", g.dir);
		if (names_in(dir, ".conf", &nm) < 0 ||
		    names_in(g.tokens_dir, ".passed", &nm) < 0) {
			cmd_err(NAME, "out of memory");
			nfail++;
		} else if (qstats_lists(q, add_name, &nm, err,
		    sizeof(err)) < 0) {
			cmd_err(NAME, "%s", strcmp(err, "stopped") == 0 ?
			    "out of memory" : err);
			nfail++;
		}
		if (nm.n > 1)
			qsort(nm.v, nm.n, sizeof(*nm.v), name_cmp);
	}
	tty = isatty(STDOUT_FILENO);
	if (json)
		printf("{\"since\":\"%s\",\"until\":\"%s\",\"by\":%s%s%s,"
		    "\"lists\":[", date_of(a, sizeof(a), since),
		    date_of(b, sizeof(b), today), by ? "\"" : "",
		    by ? by : "null", by ? "\"" : "");
	else
		printf("%s to %s (UTC)\n", date_of(a, sizeof(a), since),
		    date_of(b, sizeof(b), today));
	for (i = 0; i < nm.n; i++) {
		/* a pass counter that cannot be read fails the command
		 * but hides none of the database's figures (passed: none) */
		told = 0;
		if (figures(q, &g, nm.v[i], span, 1, today, &tot, &told) < 0 ||
		    figures(q, &g, nm.v[i], dd, 2, today, drift, &told) < 0 ||
		    (by != NULL && figures(q, &g, nm.v[i], bounds, np, today,
		    per, &told) < 0)) {
			nfail++;
			continue;
		}
		nfail += told;
		/* a token file that cannot be read fails the command but
		 * hides none of the database's figures */
		if ((r = trained_of(q, &g, nm.v[i], &tr)) != 0) {
			nfail++;
			if (r < 0)
				continue;
		}
		if (json)
			json_list(stdout, nm.v[i], &tot, drift, &tr,
			    by ? per : NULL, np, nshown == 0);
		else {
			fputc('\n', stdout);
			text_list(stdout, nm.v[i], &tot, drift, &tr,
			    by ? per : NULL, np, by_week, tty);
		}
		nshown++;
	}
	if (json)
		puts("]}");
	queue_close(q);
	listcfg_free_global(&g);
	xfree(nm.v);
	xfree(bounds);
	xfree(per);
	if (cmd_stdout_done(NAME) < 0)
		nfail++;
	return nfail ? EXIT_CMD_FAIL : EXIT_CMD_OK;
}

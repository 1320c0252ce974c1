/*
 * cmd_score.c - `listgate score`: score posts, print VERDICT SCORE each
 *
 * Trusts the configuration; posts are hostile and only reach the
 * bounded tokenizer.  Names and tokens printed come from files and
 * mail: they go out only through the sanitizer, as text or as JSON
 * strings.
 * The token file is opened once, read-only, for the whole batch (for
 * each post, after its evidence, when that asks anyone).  Exit
 * 0, 1 when any post or file failed (named), 2 on usage errors.
 */
#include "config.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/util/buf.h"
#include "gate/app/posttok.h"
#include "gate/app/settings.h"
#include "gate/app/site.h"
#include "gate/app/tokcounts.h"
#include "gate/classify.h"
#include "gate/verdict.h"
#include "gate/cmd/cmd.h"
#include "listcfg/listcfg.h"
#include "gate/mail/source.h"
#include "db/tokdb.h"

#define NAME		"score"
/* deciding tokens shown with -v */
#define MAX_CLUES	25

#ifndef BAYES_SCORE_FMT
#define BAYES_SCORE_FMT	"%.8f"
#endif

/* a double as a JSON number (null when not finite) */
static void
put_json_num(double d, FILE *f)
{
	if (isfinite(d))
		fprintf(f, "%.10g", d);
	else
		fputs("null", f);
}

/* print the clue lines (one per line in clues): as the elements of a
 * JSON array, or indented text lines */
static void
put_clues(const struct buf *clues, int json)
{
	const char *line = buf_str(clues), *end = line + clues->len, *nl;
	int first = 1;

	for (; line < end; line = nl + 1) {
		if ((nl = memchr(line, '\n', (size_t)(end - line))) == NULL)
			nl = end;
		if (nl == line)
			continue;
		if (json) {
			if (!first)
				putc(',', stdout);
			cmd_put_clean(stdout, line, (size_t)(nl - line),
			    SANITIZE_JSON);
		} else {
			fputs("    ", stdout);
			cmd_put_clean(stdout, line, (size_t)(nl - line),
			    SANITIZE_TEXT);
			putc('\n', stdout);
		}
		first = 0;
	}
}

/* the site store in use for the list's scores (NULL: none) */
struct score_site {
	const char *list;
	const struct tokcounts_site *ts;
};

/* print one post's result in the chosen form; -1 when the deciding
 * tokens (-v) could not be listed (out of memory): the score is printed,
 * the clues are left out and the caller names the failure */
static int
report(const struct classify *c, enum verdict v, const char *name,
    int show_name, int verbose, int json, const struct score_site *site,
    struct buf *clues)
{
	int rc = 0;

	if (verbose) {
		buf_reset(clues);
		if (classify_clues_site(c, MAX_CLUES, clues) < 0) {
			buf_reset(clues);
			rc = -1;
		}
	}
	if (json) {
		fputs("{\"file\":", stdout);
		cmd_put_clean(stdout, name, strlen(name), SANITIZE_JSON);
		printf(",\"verdict\":\"%s\",\"score\":", verdict_name(v));
		printf(BAYES_SCORE_FMT, c->r.score);
		fputs(",\"log_qh\":", stdout);
		put_json_num(c->r.log_qh, stdout);
		fputs(",\"log_qs\":", stdout);
		put_json_num(c->r.log_qs, stdout);
		printf(",\"tokens\":%zu,\"used\":%u", toklist_count(c->toks),
		    c->r.nused);
		if (site->ts != NULL) {
			/* the name passed listcfg_name_ok: no escaping */
			printf(",\"site\":{\"list\":\"%s\",\"weight\":",
			    site->list);
			put_json_num(site->ts->weight, stdout);
			printf(",\"own_posts\":%.0f,\"site_posts\":%.0f}",
			    site->ts->own_spam + site->ts->own_ham,
			    site->ts->site_spam + site->ts->site_ham);
		}
		if (verbose) {
			fputs(",\"clues\":[", stdout);
			put_clues(clues, 1);
			putc(']', stdout);
		}
		fputs("}\n", stdout);
		return rc;
	}
	printf("%s " BAYES_SCORE_FMT, verdict_name(v), c->r.score);
	if (show_name) {
		putc(' ', stdout);
		cmd_put_clean(stdout, name, strlen(name), SANITIZE_TEXT);
	}
	putc('\n', stdout);
	if (verbose && site->ts != NULL)
		printf("  site store %s weight %g own posts %.0f site posts "
		    "%.0f\n", site->list, site->ts->weight,
		    site->ts->own_spam + site->ts->own_ham,
		    site->ts->site_spam + site->ts->site_ham);
	if (verbose)
		put_clues(clues, 0);
	return rc;
}

/* the hidden --db-stats: counts of the token file, for tests and admins
 * (--db-dump prints every token record as "spam ham KEY": the token
 * file keeps a 64-bit key per token, not its text; `listgate tokens
 * --keys` prints a post's tokens beside their keys) */
static int
db_stats(struct tokdb *db)
{
	uint32_t ns, nh;
	int64_t pos;
	long nt, nchecked;
	char err[1024];

	if (tokdb_msgcounts(db, &ns, &nh) < 0 ||
	    (nt = tokdb_ntokens(db)) < 0 || tokdb_get_pos(db, &pos) < 0) {
		cmd_err(NAME, "%s", tokdb_errmsg(db));
		return EXIT_CMD_FAIL;
	}
	/* counts of a damaged file are no counts */
	if (tokdb_check(db, &nchecked, err, sizeof(err)) != 0) {
		cmd_err(NAME, "%s", err);
		return EXIT_CMD_FAIL;
	}
	printf("spam_posts %u\nham_posts %u\ntokens %ld\njournal_pos %lld\n",
	    (unsigned)ns, (unsigned)nh, nt, (long long)pos);
	return EXIT_CMD_OK;
}

/* print one token record for --db-dump: "spam ham KEY", the key in 16
 * hex digits; output that cannot be written (a full disk, a reader
 * gone) stops the walk, or the rest of a large file would be read for
 * nothing */
static int
dump_one(uint64_t key, const struct tokcount *tc, void *ctx)
{
	(void)ctx;
	printf("%u %u %016llx\n", (unsigned)tc->spam, (unsigned)tc->ham,
	    (unsigned long long)key);
	return ferror(stdout) ? 1 : 0;
}

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: listgate [--config DIR] score --list L [-v] [--json] "
	    "[FILE...]\n"
	    "\n"
	    "Score posts against the list's token file and print one line per\n"
	    "post: VERDICT SCORE (ham, unsure or spam by the list's cutoffs),\n"
	    "then the post's name when there may be more than one (two FILEs\n"
	    "or more, or an mbox, a maildir or a directory, even of one post).\n"
	    "A FILE may be a message, an mbox, a maildir or a directory;\n"
	    "standard input when none is given (or for -).\n"
	    "\n"
	    "  -l, --list L     the list\n"
	    "  -v, --verbose    also print the deciding tokens (token f spam ham;\n"
	    "                   with the site store, \"site F W\": the site's f\n"
	    "                   for the token and the share W of its evidence\n"
	    "                   that came from the site)\n"
	    "  -j, --json       one JSON object per post: file, verdict, score,\n"
	    "                   log_qh, log_qs, tokens, used (and clues with -v)\n"
	    "  -h, --help       this help\n"
	    "\n"
	    "Exit status: 0 ok, 1 failure, 2 usage error.\n");
}

int
cmd_score(int argc, char **argv, const struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "list", required_argument, NULL, 'l' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "db-stats", no_argument, NULL, 'S' },	/* hidden */
		{ "db-dump", no_argument, NULL, 'D' },	/* hidden */
		{ NULL, 0, NULL, 0 }
	};
	static char *const stdin_args[] = { "-", NULL };
	struct listcfg_global g;
	struct listcfg_list l;
	struct posttok pt;
	struct bayes_params bp;
	struct classify c;
	struct classify_counts cc;
	struct site_stores ss;
	struct score_site site;
	struct tokdb *db = NULL;
	struct source *src;
	struct source_post p;
	struct buf clues = BUF_INIT(1024 * 1024);
	const char *list = NULL;
	char *const *files;
	char err[1024], path[4096];
	int ch, verbose = 0, json = 0, stats = 0, nfiles, i, r, show;
	unsigned long nscored = 0;
	int cinit = 0, failed = 0, rc, reopen;

	while ((ch = getopt_long(argc, argv, "l:vjh", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			list = optarg;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'j':
			json = 1;
			break;
		case 'S':
			stats = 1;
			break;
		case 'D':
			stats = 2;
			break;
		case 'h':
			usage(stdout);
			return EXIT_CMD_OK;
		default:
			usage(stderr);
			return EXIT_CMD_USAGE;
		}
	}
	if (list == NULL) {
		cmd_err(NAME, "--list is required");
		usage(stderr);
		return EXIT_CMD_USAGE;
	}
	if (cmd_stdin_once(NAME, argc, argv, usage) != EXIT_CMD_OK)
		return EXIT_CMD_USAGE;
	if ((rc = cmd_load_list(NAME, ctx, list, &g, &l, path,
	    sizeof(path))) != EXIT_CMD_OK)
		return rc;
	memset(&ss, 0, sizeof(ss));
	if (stats != 0 && tokdb_open(path, TOKDB_READ, g.lock_wait_ms, &db,
	    err, sizeof(err)) != 0) {
		cmd_err(NAME, "list %s: %s", list, err);
		failed = 1;
		goto out;
	}
	if (stats == 1) {
		failed = db_stats(db) != EXIT_CMD_OK;
		goto out;
	}
	if (stats == 2) {
		if (tokdb_iterate(db, dump_one, NULL) < 0) {
			cmd_err(NAME, "list %s: %s", list, tokdb_errmsg(db));
			failed = 1;
		} else if (cmd_stdout_done(NAME) < 0)
			failed = 1;	/* stopped by dump_one, said */
		goto out;
	}
	if (posttok_init(&pt, &g, &l, err, sizeof(err)) < 0) {
		cmd_err(NAME, "%s", err);
		failed = 1;
		goto out;
	}
	/* the list's own file, with the site store's when it applies;
	 * opened for each post after its evidence when that asks anyone
	 * (a slow member_check or DNS server must not keep the file from
	 * its writers: they wait for readers at most sync_writer_wait) */
	reopen = posttok_asks(&pt);
	if (!reopen && site_open(&g, &l, &ss, &cc, err, sizeof(err)) != 0) {
		cmd_err(NAME, "list %s: %s", list, err);
		failed = 1;
		goto out;
	}
	site.list = g.site_list;
	site.ts = ss.site != NULL ? &ss.ts : NULL;
	settings_bayes(&l, &bp);
	if (classify_init(&c, pt.to.max_tokens) < 0) {
		cmd_err(NAME, "out of memory");
		failed = 1;
		goto out;
	}
	cinit = 1;
	nfiles = argc - optind;
	files = nfiles > 0 ? argv + optind : stdin_args;
	if (nfiles == 0)
		nfiles = 1;
	/* output that cannot be written (a reader gone with SIGPIPE
	 * ignored, a full disk) ends the run: the rest would be scored
	 * for nothing */
	for (i = 0; i < nfiles && !ferror(stdout); i++) {
		if (source_open(files[i], &src, err, sizeof(err)) < 0) {
			cmd_err(NAME, "%s", err);
			failed = 1;
			continue;
		}
		show = nfiles > 1 || source_multi(src);
		while (!ferror(stdout) &&
		    (r = source_next(src, &p, err, sizeof(err))) != 0) {
			if (r < 0) {
				cmd_err(NAME, "%s", err);
				failed = 1;
				continue;
			}
			/* many posts share most tokens: from the second
			 * on, each token is read from the file once (one
			 * post alone does not pay for the table) */
			if (nscored == 1 && !reopen) {
				if (ss.own != NULL)
					tokdb_cache(ss.own);
				if (ss.site != NULL)
					tokdb_cache(ss.site);
			}
			nscored++;
			/* the post's tokens with the evidence, then
			 * their counts */
			if (posttok_post(&pt, p.data, p.len, NULL, c.toks,
			    NULL, 0) < 0) {
				cmd_err(NAME, "list %s: %s: out of memory "
				    "while tokenizing", list, p.name);
				failed = 1;
				continue;
			}
			if (reopen) {
				if (site_open(&g, &l, &ss, &cc, err,
				    sizeof(err)) != 0) {
					cmd_err(NAME, "list %s: %s", list, err);
					failed = 1;
					source_close(src);
					goto out;
				}
				site.ts = ss.site != NULL ? &ss.ts : NULL;
			}
			if (classify_post(&c, &cc, &bp, &pt.to, NULL, 0,
			    err, sizeof(err)) < 0) {
				cmd_err(NAME, "list %s: %s: %s", list, p.name,
				    err);
				failed = 1;
			} else if (report(&c, verdict_of(c.r.score,
			    l.ham_cutoff, l.spam_cutoff), p.name, show,
			    verbose, json, &site, &clues) < 0) {
				cmd_err(NAME, "list %s: %s: cannot list the "
				    "deciding tokens: out of memory", list,
				    p.name);
				failed = 1;
			}
			if (reopen)
				site_close(&ss);
		}
		source_close(src);
	}
	if (cmd_stdout_done(NAME) < 0)
		failed = 1;
out:
	if (cinit)
		classify_free(&c);
	buf_free(&clues);
	site_close(&ss);
	tokdb_close(db);
	listcfg_free_list(&l);
	listcfg_free_global(&g);
	return failed ? EXIT_CMD_FAIL : EXIT_CMD_OK;
}

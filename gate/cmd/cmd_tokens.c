/*
 * cmd_tokens.c - `listgate tokens`: print a post's tokens, one a line
 *
 * For people and tests: shows exactly what the classifier votes with.
 * The post is hostile and only reaches the bounded tokenizer; tokens
 * are printed through the sanitizer (controls, bidi controls and invalid
 * UTF-8 as '?').  Needs no configuration; with --list L it takes that
 * list's tokenizer settings (gate/app/settings, as filter, score, train
 * and sync do).  Exit 0, 1 when the post or the configuration cannot be
 * read (the message names it), 2 on usage
 * errors.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "db/tokdb.h"
#include "listcfg/listcfg.h"
#include "gate/app/posttok.h"
#include "gate/cmd/cmd.h"
#include "gate/mail/source.h"
#include "gate/tok.h"

#define NAME	"tokens"

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: listgate [--config DIR] tokens [--list L] [--keys] [FILE]\n"
	    "\n"
	    "Print the tokens of a post, one per line, in the order they are\n"
	    "first seen: what `score` looks up and `train` learns.  Reads FILE\n"
	    "(a message; an mbox prints each post after a \"# NAME\" line), or\n"
	    "standard input when none is given or for -.  At most the first\n"
	    "max_scan_bytes of a post are looked at.\n"
	    "\n"
	    "  -l, --list L  tokenize with list L's settings (default: the\n"
	    "                defaults, no configuration read)\n"
	    "  -k, --keys    print \"KEY TOKEN\": the 16 hex digits under which\n"
	    "                the token file keeps the token's counts\n"
	    "  -h, --help    this help\n"
	    "\n"
	    "Exit status: 0 ok, 1 the post or the configuration could not be\n"
	    "read, 2 usage error.\n");
}

/* one token on a line, sanitized */
static void
put_token(const char *t, size_t n)
{
	cmd_put_clean(stdout, t, n, SANITIZE_TEXT);
	putchar('\n');
}

int
cmd_tokens(int argc, char **argv, const struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "list", required_argument, NULL, 'l' },
		{ "keys", no_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct listcfg_global g;
	struct listcfg_list l;
	struct posttok pt;
	struct toklist *tl;
	struct source *src;
	struct source_post p;
	const char *file = "-", *list = NULL;
	char err[1024], path[4096];
	size_t i, n;
	const char *t;
	int ch, r, multi, keys = 0, failed = 0, rc, loaded = 0;

	while ((ch = getopt_long(argc, argv, "l:kh", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			list = optarg;
			break;
		case 'k':
			keys = 1;
			break;
		case 'h':
			usage(stdout);
			return EXIT_CMD_OK;
		default:
			usage(stderr);
			return EXIT_CMD_USAGE;
		}
	}
	if (argc - optind > 1) {
		cmd_err(NAME, "one post at a time");
		usage(stderr);
		return EXIT_CMD_USAGE;
	}
	if (argc - optind == 1)
		file = argv[optind];
	if (list == NULL)
		posttok_init(&pt, NULL, NULL, err, sizeof(err));
	else {
		if ((rc = cmd_load_list(NAME, ctx, list, &g, &l, path,
		    sizeof(path))) != EXIT_CMD_OK)
			return rc;
		loaded = 1;
		if (posttok_init(&pt, &g, &l, err, sizeof(err)) < 0) {
			cmd_err(NAME, "%s", err);
			failed = 1;
			goto out;
		}
	}
	if ((tl = toklist_new(pt.to.max_tokens)) == NULL) {
		cmd_err(NAME, "out of memory");
		failed = 1;
		goto out;
	}
	if (source_open(file, &src, err, sizeof(err)) < 0) {
		cmd_err(NAME, "%s", err);
		toklist_free(tl);
		failed = 1;
		goto out;
	}
	multi = source_multi(src);
	/* output that cannot be written (a reader gone, a full disk) ends
	 * the run: the rest would be tokenized for nothing */
	while (!ferror(stdout) &&
	    (r = source_next(src, &p, err, sizeof(err))) != 0) {
		if (r < 0) {
			cmd_err(NAME, "%s", err);
			failed = 1;
			continue;
		}
		if (posttok_post(&pt, p.data, p.len, NULL, tl, NULL, 0) < 0) {
			cmd_err(NAME, "%s: out of memory", p.name);
			failed = 1;
			continue;
		}
		if (multi) {
			fputs("# ", stdout);
			put_token(p.name, strlen(p.name));
		}
		n = toklist_count(tl);
		for (i = 0; i < n; i++) {
			size_t len;

			t = toklist_get(tl, i, &len);
			if (keys)
				printf("%016llx ", (unsigned long long)
				    tokdb_key(t, len));
			put_token(t, len);
		}
	}
	source_close(src);
	toklist_free(tl);
	if (cmd_stdout_done(NAME) < 0)
		failed = 1;
out:
	if (loaded) {
		listcfg_free_list(&l);
		listcfg_free_global(&g);
	}
	return failed ? EXIT_CMD_FAIL : EXIT_CMD_OK;
}

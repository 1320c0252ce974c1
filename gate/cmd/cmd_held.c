/*
 * cmd_held.c - `listgate held` (the moderation queue as a table or JSON)
 * and `listgate show ID` (one post: headers, score, deciding tokens and
 * a preview of its decoded text, gate/app/preview.c)
 *
 * Everything shown came from a post and is hostile: it reaches the
 * terminal and JSON only through the sanitizer (gate/util/sanitize.h:
 * controls, bidi controls and invalid UTF-8 masked, columns cut).  The
 * rows hold the text as it came, only made valid UTF-8.  The raw post is checked against its SHA-256
 * and parsed with the bounded mail walker.  Exit 0, 1 on failure, 2 on
 * usage errors.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db/queue.h"
#include "gate/app/app.h"
#include "gate/app/preview.h"
#include "gate/cmd/cmd.h"
#include "gate/util/buf.h"
#include "gate/util/sanitize.h"
#include "listcfg/listcfg.h"

/* output buffer bound per row or per shown section */
#define OUT_MAX		(1024 * 1024)
/* characters of decoded text shown by `show` */
#define PREVIEW_CHARS	2000
/* deciding-token lines shown */
#define CLUE_LINES	20

static void
held_usage(FILE *f)
{
	fprintf(f,
	    "usage: listgate [--config DIR] held [--list L] [--json]\n"
	    "\n"
	    "List the posts held for moderation, oldest first: id, age, list,\n"
	    "sender, subject and score.  Decide with approve, reject, discard.\n"
	    "A post whose approval was interrupted while its release command\n"
	    "ran is listed too, marked RELEASING (status \"releasing\" in JSON):\n"
	    "see `listgate approve --help`.  A post whose release the list\n"
	    "refused for good is marked RELEASE REFUSED (its note in JSON).\n"
	    "\n"
	    "  -l, --list L   only this list\n"
	    "  -j, --json     one JSON array of objects instead of a table\n"
	    "  -h, --help     this help\n"
	    "\n"
	    "Exit status: 0 ok, 1 failure, 2 usage error.\n");
}

/* what the held listing carries from row to row */
struct held_ctx {
	int json;
	unsigned long n;
	time_t now;
	struct buf out;
};

/* characters (UTF-8 lead bytes) in b from byte off on */
static size_t
nchars(const struct buf *b, size_t off)
{
	size_t i, n = 0;

	for (i = off; i < b->len; i++)
		if ((b->data[i] & 0xc0) != 0x80)
			n++;
	return n;
}

/* append a sanitized table column of exactly width characters (cut
 * with "..."), then one space */
static int
col(struct buf *b, const char *s, size_t width)
{
	size_t before = b->len, n;

	if (sanitize_buf(b, s, strlen(s), width, SANITIZE_TEXT, 0) < 0)
		return -1;
	for (n = nchars(b, before); n < width; n++)
		if (buf_addc(b, ' ') < 0)
			return -1;
	return buf_addc(b, ' ');
}

/* append s as a JSON string, sanitized: 0 or -1 */
static int
json_str(struct buf *b, const char *s)
{
	if (s == NULL)
		s = "";
	return sanitize_buf(b, s, strlen(s), SANITIZE_NO_LIMIT, SANITIZE_JSON,
	    0) < 0 ? -1 : 0;
}

/* one row of `held` */
static int
held_row(const struct queue_row *r, void *vctx)
{
	struct held_ctx *c = vctx;
	struct buf *b = &c->out;
	char num[256], age[32], sc[32];
	const char *sender = *r->from ? r->from : r->env_sender;

	buf_reset(b);
	preview_age(c->now, r->arrived, age, sizeof(age));
	if (c->json) {
		snprintf(num, sizeof(num), "%s\n  {\"id\": %lld, ",
		    c->n ? "," : "", (long long)r->id);
		if (buf_adds(b, num) < 0 ||
		    buf_adds(b, "\"list\": ") < 0 || json_str(b, r->list) < 0 ||
		    buf_adds(b, ", \"from\": ") < 0 || json_str(b, r->from) < 0 ||
		    buf_adds(b, ", \"env_sender\": ") < 0 ||
		    json_str(b, r->env_sender) < 0 ||
		    buf_adds(b, ", \"subject\": ") < 0 ||
		    json_str(b, r->subject) < 0 ||
		    buf_adds(b, ", \"message_id\": ") < 0 ||
		    json_str(b, r->msgid) < 0 ||
		    buf_adds(b, ", \"verdict\": ") < 0 ||
		    json_str(b, r->verdict) < 0)
			return -1;
		if (buf_adds(b, ", \"status\": ") < 0 ||
		    json_str(b, r->status) < 0 ||
		    buf_adds(b, ", \"note\": ") < 0 ||
		    json_str(b, r->note) < 0)
			return -1;
		/* an oversize post was not scored: its score is null, not
		 * the 0 stored for it (0 reads as surely ham) */
		if (strcmp(r->verdict, "oversize") == 0)
			snprintf(sc, sizeof(sc), "null");
		else
			snprintf(sc, sizeof(sc), "%.6f", r->score);
		snprintf(num, sizeof(num), ", \"score\": %s, \"size\": %lld, "
		    "\"arrived\": %lld, \"age_seconds\": %lld}", sc,
		    (long long)r->size, (long long)r->arrived,
		    (long long)(c->now > r->arrived ? c->now - r->arrived : 0));
		if (buf_adds(b, num) < 0)
			return -1;
	} else {
		snprintf(num, sizeof(num), "%-8lld %5s ", (long long)r->id,
		    age);
		if (buf_adds(b, num) < 0 || col(b, r->list, 16) < 0 ||
		    col(b, sender, 28) < 0 || col(b, r->subject, 40) < 0)
			return -1;
		/* an oversize post was not scored; a post whose release
		 * was interrupted says so */
		if (strcmp(r->verdict, "oversize") == 0)
			snprintf(sc, sizeof(sc), "oversize");
		else
			snprintf(sc, sizeof(sc), "%.4f", r->score);
		snprintf(num, sizeof(num), "%s%s\n", sc,
		    strcmp(r->status, "held") == 0 ?
		    (strncmp(r->note, QUEUE_RELEASE_REFUSED,
		    strlen(QUEUE_RELEASE_REFUSED)) == 0 ?
		    "  RELEASE REFUSED (see show)" : "") :
		    strcmp(r->status, "releasing") == 0 ?
		    "  RELEASING (interrupted? see approve --help)" : "");
		if (buf_adds(b, num) < 0)
			return -1;
	}
	fwrite(b->data, 1, b->len, stdout);
	c->n++;
	/* output that cannot be written (a reader gone, a full disk)
	 * ends the listing: said once the command ends */
	return ferror(stdout) ? 1 : 0;
}

int
cmd_held(int argc, char **argv, const struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "list", required_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct listcfg_global g;
	struct queue *q;
	struct held_ctx c;
	const char *list = NULL;
	char err[1024];
	int ch, rc = EXIT_CMD_OK;

	memset(&c, 0, sizeof(c));
	while ((ch = getopt_long(argc, argv, "l:jh", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			list = optarg;
			break;
		case 'j':
			c.json = 1;
			break;
		case 'h':
			held_usage(stdout);
			return EXIT_CMD_OK;
		default:
			held_usage(stderr);
			return EXIT_CMD_USAGE;
		}
	}
	if (optind < argc) {
		cmd_err("held", "unexpected argument '%s'", argv[optind]);
		held_usage(stderr);
		return EXIT_CMD_USAGE;
	}
	if (list != NULL && !listcfg_name_ok(list)) {
		cmd_bad_list("held", list);
		return EXIT_CMD_USAGE;
	}
	if (cmd_connect("held", ctx, &g, &q, APP_CHECK_SCHEMA) < 0)
		return EXIT_CMD_FAIL;
	/* a misspelt --list holds nothing, as any quiet list does: say so */
	if (list != NULL)
		cmd_warn_unknown_list("held", q, &g, list, "list");
	buf_init(&c.out, OUT_MAX);
	c.now = time(NULL);
	if (c.json)
		fputs("[", stdout);
	else
		printf("%-8s %5s %-16s %-28s %-40s %s\n", "ID", "AGE", "LIST",
		    "SENDER", "SUBJECT", "SCORE");
	if (queue_list(q, "pending", list, held_row, &c, err,
	    sizeof(err)) < 0) {
		cmd_err("held", "%s", err);
		rc = EXIT_CMD_FAIL;
	}
	if (c.json)
		fputs(c.n ? "\n]\n" : "]\n", stdout);
	else if (c.n == 0 && rc == EXIT_CMD_OK)
		printf("(no held posts%s%s)\n", list ? " for list " : "",
		    list ? list : "");
	if (rc == EXIT_CMD_OK && cmd_stdout_done("held") < 0)
		rc = EXIT_CMD_FAIL;
	buf_free(&c.out);
	queue_close(q);
	listcfg_free_global(&g);
	return rc;
}

/* --- show ---------------------------------------------------------------- */

static void
show_usage(FILE *f)
{
	fprintf(f,
	    "usage: listgate [--config DIR] show ID\n"
	    "\n"
	    "Show one held post: its headers, score and verdict, the tokens that\n"
	    "decided it, and a preview of its decoded text.\n"
	    "\n"
	    "  -h, --help     this help\n"
	    "\n"
	    "Exit status: 0 ok, 1 failure (no such post), 2 usage error.\n");
}

/* print "Label: value" with the value sanitized; a value that cannot
 * be (out of memory) counts in *nbad and shows as "?" */
static void
show_field(struct buf *b, const char *label, const char *v, int *nbad)
{
	buf_reset(b);
	if (sanitize_buf(b, v, strlen(v), 400, SANITIZE_TEXT, 0) < 0) {
		(*nbad)++;
		buf_reset(b);
	}
	printf("%-12s %s\n", label, b->len ? buf_str(b) : (*v ? "?" : ""));
}

int
cmd_show(int argc, char **argv, const struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct listcfg_global g;
	struct queue *q;
	struct queue_row r;
	struct buf b, text;
	char err[1024], when[64];
	const char *s, *nl;
	long long id;
	time_t t;
	int ch, rc = EXIT_CMD_FAIL, found, nlines, nbad = 0;

	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			show_usage(stdout);
			return EXIT_CMD_OK;
		default:
			show_usage(stderr);
			return EXIT_CMD_USAGE;
		}
	}
	if (optind + 1 != argc) {
		cmd_err("show", "give exactly one post ID");
		show_usage(stderr);
		return EXIT_CMD_USAGE;
	}
	if (cmd_parse_num(argv[optind], 1, INT64_MAX, &id) < 0) {
		cmd_err("show", "bad post ID '%s'", argv[optind]);
		return EXIT_CMD_USAGE;
	}
	if (cmd_connect("show", ctx, &g, &q, APP_CHECK_SCHEMA) < 0)
		return EXIT_CMD_FAIL;
	found = queue_get(q, id, &r, err, sizeof(err));
	if (found < 0) {
		cmd_err("show", "%s", err);
		goto out;
	}
	if (found == 0) {
		cmd_err("show", "no post %lld", id);
		goto out;
	}
	buf_init(&b, OUT_MAX);
	printf("%-12s %lld\n", "Post:", (long long)r.id);
	show_field(&b, "List:", r.list, &nbad);
	show_field(&b, "Status:", r.status, &nbad);
	t = r.arrived;
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %z", localtime(&t));
	printf("%-12s %s\n", "Arrived:", when);
	show_field(&b, "From:", r.from, &nbad);
	show_field(&b, "Subject:", r.subject, &nbad);
	show_field(&b, "Message-ID:", r.msgid, &nbad);
	show_field(&b, "Env-From:", r.env_sender, &nbad);
	show_field(&b, "Env-To:", r.env_recipient, &nbad);
	printf("%-12s %lld bytes\n", "Size:", (long long)r.size);
	if (strcmp(r.verdict, "oversize") == 0)
		printf("%-12s not scored (oversize: larger than the list's "
		    "max_post_bytes)\n", "Score:");
	else
		printf("%-12s %.6f (%s)\n", "Score:", r.score, r.verdict);
	if (r.decided) {
		t = r.decided;
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %z",
		    localtime(&t));
		buf_reset(&b);
		if (sanitize_buf(&b, r.decided_by, strlen(r.decided_by), 64,
		    SANITIZE_TEXT, 0) < 0)
			nbad++;
		printf("%-12s %s by %s\n", "Decided:", when, buf_str(&b));
	}
	/* a decision's note, or why a held post was held when not for
	 * its score (deliver refused it) */
	if (*r.note)
		show_field(&b, "Note:", r.note, &nbad);
	printf("\nDeciding tokens (token, probability, spam, ham):\n");
	for (s = r.clues, nlines = 0; *s && nlines < CLUE_LINES; nlines++) {
		nl = strchr(s, '\n');
		buf_reset(&b);
		if (sanitize_buf(&b, s, nl ? (size_t)(nl - s) : strlen(s), 120,
		    SANITIZE_TEXT, 0) < 0)
			nbad++;
		printf("  %s\n", buf_str(&b));
		s = nl ? nl + 1 : s + strlen(s);
	}
	if (nlines == 0)
		printf("  (none recorded)\n");
	/* room for more than PREVIEW_CHARS characters of 4 bytes: text
	 * the buffer cut is always longer than the preview, whose cut
	 * then says so ("...") and drops a character split at the end */
	buf_init(&text, PREVIEW_CHARS * 4 + 4);
	if (preview_text(r.raw, r.raw_len, &text) < 0) {
		printf("\n(text preview incomplete: out of memory)\n");
		nbad++;
	}
	buf_reset(&b);
	if (sanitize_buf(&b, text.data, text.len, PREVIEW_CHARS,
	    SANITIZE_TEXT, SANITIZE_KEEP_NL) < 0)
		nbad++;
	printf("\nText:\n%s%s", buf_str(&b),
	    b.len && b.data[b.len - 1] != '\n' ? "\n" : "");
	buf_free(&text);
	buf_free(&b);
	queue_row_free(&r);
	if (nbad) {
		cmd_err("show", "out of memory: post %lld shown incompletely",
		    id);
		goto out;
	}
	if (cmd_stdout_done("show") < 0)
		goto out;
	rc = EXIT_CMD_OK;
out:
	queue_close(q);
	listcfg_free_global(&g);
	return rc;
}

/*
 * qhold.c - test helper: hold one post file for a list through
 * queue_hold, as the filter would, and print the new id
 *
 *   qhold LIST FILE [SCORE [STATUS]]
 *   qhold -j LIST spam|ham FILE    journal every post of FILE (posts
 *                                  separated by a line holding only a
 *                                  form feed) in one batch, as train does
 *   qhold -n LIST FILE COUNT       hold COUNT different posts (FILE with
 *                                  "X-Seq: i" put in front), one
 *                                  connection; print the ids
 *
 * Uses the libpq environment (tests/pg.sh sets it); $QHOLD_SUBJECT, when
 * set, is the held posts' subject (the queue keeps up to 4096 bytes of
 * it).  Exit 0, 1 on error.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/journal.h"
#include "db/queue.h"

/* the -j mode: journal the posts of a file: exit status */
static int
journal_file(const char *list, int spam, const unsigned char *raw,
    size_t len)
{
	struct queue *q;
	char err[1024];
	const unsigned char *p = raw, *end = raw + len, *sep;
	unsigned long n = 0;

	if (queue_open(NULL, &q, err, sizeof(err)) < 0 ||
	    journal_begin(q, list, err, sizeof(err)) < 0) {
		fprintf(stderr, "qhold: %s\n", err);
		return 1;
	}
	while (p < end) {
		sep = memmem(p, (size_t)(end - p), "\n\f\n", 3);
		if (sep == NULL)
			sep = end;
		if (journal_add(q, list, spam, 1, "manual", 0, p,
		    (size_t)(sep - p) + (sep < end), err, sizeof(err)) < 0) {
			fprintf(stderr, "qhold: %s\n", err);
			journal_rollback(q);
			return 1;
		}
		n++;
		p = sep < end ? sep + 3 : end;
	}
	if (journal_commit(q, err, sizeof(err)) < 0) {
		fprintf(stderr, "qhold: %s\n", err);
		return 1;
	}
	queue_close(q);
	printf("%lu\n", n);
	return 0;
}

/* the -n mode: hold count variants of a post: exit status */
static int
hold_many(const char *list, const unsigned char *raw, size_t len,
    long count)
{
	struct queue *q;
	struct queue_post p;
	char err[1024], seq[64];
	unsigned char *buf;
	size_t sl;
	int64_t id;
	long i;

	if ((buf = malloc(len + sizeof(seq))) == NULL ||
	    queue_open(NULL, &q, err, sizeof(err)) < 0) {
		fprintf(stderr, "qhold: cannot start\n");
		return 1;
	}
	memset(&p, 0, sizeof(p));
	p.list = list;
	p.env_sender = "sender@example.org";
	p.env_recipient = list;
	p.from = "Load Sender <load@example.org>";
	p.msgid = "<load@example.org>";
	p.verdict = "unsure";
	p.clues = "tok1 0.99 3 0\ntok2 0.97 2 0\n";
	p.status = "held";
	for (i = 0; i < count; i++) {
		sl = (size_t)snprintf(seq, sizeof(seq), "X-Seq: %ld\n", i);
		memcpy(buf, seq, sl);
		memcpy(buf + sl, raw, len);
		p.raw = buf;
		p.raw_len = sl + len;
		p.subject = getenv("QHOLD_SUBJECT") != NULL ?
		    getenv("QHOLD_SUBJECT") : "a post of the load check";
		p.score = 0.5 + (double)(i % 500) / 1000.0;
		if (queue_hold(q, &p, &id, err, sizeof(err)) < 0) {
			fprintf(stderr, "qhold: %s\n", err);
			return 1;
		}
		printf("%lld\n", (long long)id);
	}
	queue_close(q);
	free(buf);
	return 0;
}

int
main(int argc, char **argv)
{
	int jmode = argc > 1 && strcmp(argv[1], "-j") == 0;
	int nmode = argc > 1 && strcmp(argv[1], "-n") == 0;

	struct queue *q;
	struct queue_post p;
	char err[1024];
	unsigned char *raw = NULL;
	size_t len = 0, cap = 0, n;
	int64_t id;
	FILE *f;

	if (argc < 3 || (jmode && argc != 5) || (nmode && argc != 5)) {
		fprintf(stderr, "usage: qhold LIST FILE [SCORE [STATUS]]\n"
		    "       qhold -j LIST spam|ham FILE\n"
		    "       qhold -n LIST FILE COUNT\n");
		return 2;
	}
	if ((f = fopen(argv[jmode ? 4 : nmode ? 3 : 2], "rb")) == NULL) {
		perror(argv[jmode ? 4 : nmode ? 3 : 2]);
		return 1;
	}
	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			if ((raw = realloc(raw, cap)) == NULL)
				return 1;
		}
		if ((n = fread(raw + len, 1, cap - len, f)) == 0)
			break;
		len += n;
	}
	fclose(f);
	if (nmode) {
		int rc = hold_many(argv[2], raw, len, strtol(argv[4], NULL, 10));

		free(raw);
		return rc;
	}
	if (jmode) {
		int rc = journal_file(argv[2], strcmp(argv[3], "spam") == 0,
		    raw, len);

		free(raw);
		return rc;
	}
	memset(&p, 0, sizeof(p));
	p.list = argv[1];
	p.env_sender = "sender@example.org";
	p.env_recipient = argv[1];
	p.from = "Test Sender <sender@example.org>";
	p.subject = getenv("QHOLD_SUBJECT") != NULL ? getenv("QHOLD_SUBJECT") :
	    "a held test post";
	p.msgid = "<test@example.org>";
	p.raw = raw;
	p.raw_len = len;
	p.score = argc > 3 ? strtod(argv[3], NULL) : 0.99;
	p.verdict = "spam";
	p.clues = "tok1 0.99 3 0\ntok2 0.97 2 0\n";
	p.status = argc > 4 ? argv[4] : "held";
	if (queue_open(NULL, &q, err, sizeof(err)) < 0 ||
	    queue_hold(q, &p, &id, err, sizeof(err)) < 0) {
		fprintf(stderr, "qhold: %s\n", err);
		return 1;
	}
	printf("%lld\n", (long long)id);
	queue_close(q);
	free(raw);
	return 0;
}

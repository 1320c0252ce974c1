/*
 * queue.h - the moderation queue and training journal in PostgreSQL
 *
 * libpq only through PQexecParams (no SQL built from strings).  Every
 * function returns -1 with a message in err on failure and never exits;
 * a hold is reported done only after its INSERT committed.
 */
#ifndef LG_QUEUE_H
#define LG_QUEUE_H

#include <stddef.h>
#include <stdint.h>

struct queue;

/* 1 if a database is configured: a conninfo, or libpq environment
 * variables (PGHOST, PGHOSTADDR, PGDATABASE, PGSERVICE, PGPORT, PGUSER) */
int queue_configured(const char *conninfo);

/* connect (conninfo may be NULL: libpq's environment then): 0 or -1 */
int queue_open(const char *conninfo, struct queue **q_r, char *err,
    size_t errsz);
void queue_close(struct queue *q);

/* refuse a database whose schema is missing or newer than this binary
 * knows: 0 ok, -1 with err */
int queue_check_schema(struct queue *q, char *err, size_t errsz);

struct queue_post {
	const char *list;
	const char *env_sender, *env_recipient;	/* may be "" */
	const char *from, *subject, *msgid;	/* decoded, may be "" */
	const unsigned char *raw;		/* the post exactly as received */
	size_t raw_len;
	double score;
	const char *verdict;			/* "unsure", "spam" */
	const char *clues;			/* deciding tokens, text */
	const char *status;			/* "held" or "discarded" */
};

/* store a post (zlib-compressed, with its SHA-256), committed on return:
 * 0 with the new id in *id_r, or -1 */
int queue_hold(struct queue *q, const struct queue_post *p, int64_t *id_r,
    char *err, size_t errsz);

#endif

/*
 * tokcounts.c - the classifier's count source over a token store
 *
 * The core (gate/classify.c) reads counts through struct
 * classify_counts and knows nothing of storage; this adapts a tokdb.
 */
#include "config.h"

#include "db/tokdb.h"
#include "gate/app/tokcounts.h"

static int
tc_msgcounts(void *ctx, uint32_t *nspam_r, uint32_t *nham_r)
{
	return tokdb_msgcounts(ctx, nspam_r, nham_r);
}

static int
tc_get(void *ctx, const void *tok, size_t len, uint32_t *spam_r,
    uint32_t *ham_r)
{
	struct tokcount c;
	int r;

	if ((r = tokdb_get(ctx, tok, len, &c)) < 0)
		return -1;
	*spam_r = c.spam;
	*ham_r = c.ham;
	return r;
}

static const char *
tc_errmsg(void *ctx)
{
	return tokdb_errmsg(ctx);
}

void
tokcounts_tokdb(struct classify_counts *cc, struct tokdb *db)
{
	cc->msgcounts = tc_msgcounts;
	cc->get = tc_get;
	cc->errmsg = tc_errmsg;
	cc->ctx = db;
}

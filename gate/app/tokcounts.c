/*
 * tokcounts.c - the classifier's count source over a token store
 *
 * The core (gate/classify.c) reads counts through struct
 * classify_counts and knows nothing of storage; this adapts a tokdb.
 */
#include "config.h"

#include <string.h>

#include "db/tokdb.h"
#include "gate/app/tokcounts.h"

static int
tc_msgcounts(void *ctx, double *nspam_r, double *nham_r)
{
	uint32_t ns, nh;

	if (tokdb_msgcounts(ctx, &ns, &nh) < 0)
		return -1;
	*nspam_r = ns;
	*nham_r = nh;
	return 0;
}

static int
tc_get(void *ctx, const void *tok, size_t len, struct classify_count *c_r)
{
	struct tokcount c;
	int r;

	memset(c_r, 0, sizeof(*c_r));
	if ((r = tokdb_get(ctx, tok, len, &c)) < 0)
		return -1;
	c_r->spam = c.spam;
	c_r->ham = c.ham;
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
	cc->site = 0;
}

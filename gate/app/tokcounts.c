/*
 * tokcounts.c - the classifier's count source over a token store, and
 * over a list's store combined with the site store's
 *
 * The core (gate/classify.c) reads counts through struct
 * classify_counts and knows nothing of storage; this adapts a tokdb, or
 * a list's and the site store's (the rule: tokcounts.h).  Never exits;
 * -1 with a message.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
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
	cc->site_msgcounts = NULL;
	cc->site_weight = 0;
	cc->ctx = db;
}

/* --- the list's own beside the site's ---------------------------------- */

static int
cs_msgcounts(void *ctx, double *nspam_r, double *nham_r)
{
	struct tokcounts_site *ts = ctx;

	*nspam_r = ts->own_spam;
	*nham_r = ts->own_ham;
	return 0;
}

static int
cs_site_msgcounts(void *ctx, double *nspam_r, double *nham_r)
{
	struct tokcounts_site *ts = ctx;

	*nspam_r = ts->site_spam;
	*nham_r = ts->site_ham;
	return 0;
}

static int
cs_get(void *ctx, const void *tok, size_t len, struct classify_count *c_r)
{
	struct tokcounts_site *ts = ctx;
	struct tokcount o, s;
	int ro = 0, rs;

	memset(c_r, 0, sizeof(*c_r));
	memset(&o, 0, sizeof(o));
	if (ts->own != NULL && (ro = tokdb_get(ts->own, tok, len, &o)) < 0) {
		snprintf(ts->emsg, sizeof(ts->emsg), "%s",
		    tokdb_errmsg(ts->own));
		return -1;
	}
	if ((rs = tokdb_get(ts->site, tok, len, &s)) < 0) {
		snprintf(ts->emsg, sizeof(ts->emsg), "site store: %s",
		    tokdb_errmsg(ts->site));
		return -1;
	}
	c_r->spam = o.spam;
	c_r->ham = o.ham;
	c_r->site_spam = s.spam;
	c_r->site_ham = s.ham;
	return ro > 0 || rs > 0;
}

static int
cs_get_own(void *ctx, const void *tok, size_t len,
    struct classify_count *c_r)
{
	struct tokcounts_site *ts = ctx;
	struct tokcount o;
	int r = 0;

	memset(c_r, 0, sizeof(*c_r));
	if (ts->own != NULL && (r = tokdb_get(ts->own, tok, len, &o)) < 0) {
		snprintf(ts->emsg, sizeof(ts->emsg), "%s",
		    tokdb_errmsg(ts->own));
		return -1;
	}
	if (r > 0) {
		c_r->spam = o.spam;
		c_r->ham = o.ham;
	}
	return r;
}

static const char *
cs_errmsg(void *ctx)
{
	struct tokcounts_site *ts = ctx;

	return ts->emsg[0] ? ts->emsg : "no error";
}

int
tokcounts_combined(struct classify_counts *cc, struct tokcounts_site *ts,
    struct tokdb *own, struct tokdb *site, double weight, char *err,
    size_t errsz)
{
	uint32_t ns = 0, nh = 0;
	int on = weight > 0 && isfinite(weight);

	memset(ts, 0, sizeof(*ts));
	ts->own = own;
	ts->site = site;
	ts->weight = on ? weight : 0;
	if (own != NULL && tokdb_msgcounts(own, &ns, &nh) < 0) {
		snprintf(err, errsz, "%s", tokdb_errmsg(own));
		return -1;
	}
	ts->own_spam = ns;
	ts->own_ham = nh;
	if (on && tokdb_msgcounts(site, &ns, &nh) < 0) {
		snprintf(err, errsz, "site store: %s", tokdb_errmsg(site));
		return -1;
	}
	ts->site_spam = on ? ns : 0;
	ts->site_ham = on ? nh : 0;
	cc->msgcounts = cs_msgcounts;
	cc->get = on ? cs_get : cs_get_own;
	cc->errmsg = cs_errmsg;
	cc->site_msgcounts = on ? cs_site_msgcounts : NULL;
	cc->site_weight = ts->weight;
	cc->ctx = ts;
	return 0;
}

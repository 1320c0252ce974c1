/*
 * tokcounts.c - the classifier's count source over a token store, and
 * over a list's store combined with the site store's
 *
 * The core (gate/classify.c) reads counts through struct
 * classify_counts and knows nothing of storage; this adapts a tokdb, or
 * two.  The rule is in tokcounts.h.  Never exits; -1 with a message.
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
	cc->ctx = db;
	cc->site = 0;
}

double
tokcounts_site_weight(double own_posts, double setting)
{
	if (setting >= 0 && setting <= 1)
		return setting;
	if (!(own_posts > 0))
		own_posts = 0;
	/* an infinite own_posts gives 0: the site has no say */
	return TOKCOUNTS_SITE_K / (TOKCOUNTS_SITE_K + own_posts);
}

/* --- own + w * site ---------------------------------------------------- */

static int
cs_msgcounts(void *ctx, double *nspam_r, double *nham_r)
{
	struct tokcounts_site *ts = ctx;

	*nspam_r = ts->own_spam + ts->w * ts->site_spam;
	*nham_r = ts->own_ham + ts->w * ts->site_ham;
	return 0;
}

static int
cs_get(void *ctx, const void *tok, size_t len, struct classify_count *c_r)
{
	struct tokcounts_site *ts = ctx;
	struct tokcount o, s;
	int ro = 0, rs = 0;

	memset(c_r, 0, sizeof(*c_r));
	memset(&o, 0, sizeof(o));
	memset(&s, 0, sizeof(s));
	if (ts->own != NULL && (ro = tokdb_get(ts->own, tok, len, &o)) < 0) {
		snprintf(ts->emsg, sizeof(ts->emsg), "%s",
		    tokdb_errmsg(ts->own));
		return -1;
	}
	if (ts->w > 0 && (rs = tokdb_get(ts->site, tok, len, &s)) < 0) {
		snprintf(ts->emsg, sizeof(ts->emsg), "site store: %s",
		    tokdb_errmsg(ts->site));
		return -1;
	}
	c_r->site_spam = ts->w * s.spam;
	c_r->site_ham = ts->w * s.ham;
	c_r->spam = o.spam + c_r->site_spam;
	c_r->ham = o.ham + c_r->site_ham;
	return ro > 0 || rs > 0;
}

static const char *
cs_errmsg(void *ctx)
{
	struct tokcounts_site *ts = ctx;

	return ts->emsg[0] ? ts->emsg : "no error";
}

int
tokcounts_combined(struct classify_counts *cc, struct tokcounts_site *ts,
    struct tokdb *own, struct tokdb *site, double setting, char *err,
    size_t errsz)
{
	uint32_t ns = 0, nh = 0;

	memset(ts, 0, sizeof(*ts));
	ts->own = own;
	ts->site = site;
	if (own != NULL && tokdb_msgcounts(own, &ns, &nh) < 0) {
		snprintf(err, errsz, "%s", tokdb_errmsg(own));
		return -1;
	}
	ts->own_spam = ns;
	ts->own_ham = nh;
	if (tokdb_msgcounts(site, &ns, &nh) < 0) {
		snprintf(err, errsz, "site store: %s", tokdb_errmsg(site));
		return -1;
	}
	ts->site_spam = ns;
	ts->site_ham = nh;
	ts->w = tokcounts_site_weight(ts->own_spam + ts->own_ham, setting);
	cc->msgcounts = cs_msgcounts;
	cc->get = cs_get;
	cc->errmsg = cs_errmsg;
	cc->ctx = ts;
	cc->site = 1;
	return 0;
}

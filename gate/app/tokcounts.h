/*
 * tokcounts.h - a list's token store as the classifier's count source,
 * alone or with the site store's counts beside it
 *
 * The site store (listgate.conf(5), THE SITE STORE) is the token file of
 * the list named by site_list.  A list that uses it scores every token
 * the site has seen with the site's f(w) as the token's prior, counted
 * as site_weight posts, in place of Robinson's robx and robs
 * (gate/classify.h, bayes_f_prior):
 *
 *	f = (S f_site + n p) / (S + n)
 *
 * n and p being the list's own count of the token and its own
 * probability.  A new list (n = 0) takes the site's f; the site's share
 * S / (S + n) of a token fades as the list learns the token.  S was
 * chosen by cross-validation on the training halves of the site
 * benchmarks (tests/bench/README.md, sitecv.py).
 */
#ifndef LG_TOKCOUNTS_H
#define LG_TOKCOUNTS_H

#include <stddef.h>

#include "gate/classify.h"

struct tokdb;

/* point cc at db (which must stay open while cc is used) */
void tokcounts_tokdb(struct classify_counts *cc, struct tokdb *db);

/* a list's counts with the site store's beside them (filled by
 * tokcounts_combined) */
struct tokcounts_site {
	struct tokdb *own;	/* NULL: the list has no token file yet */
	struct tokdb *site;
	double weight;		/* the site prior's strength, in posts */
	double own_spam, own_ham;	/* posts trained, the list's own */
	double site_spam, site_ham;	/* and the site store's */
	char emsg[512];
};

/*
 * Point cc at own's counts (own may be NULL: none of its own) with
 * site's beside them, the site's f weighing weight posts (a list's
 * site_weight; a weight that is not a finite positive number turns the
 * site store off: own's counts alone).  ts must outlive cc's use, and
 * so must the open stores.  0, or -1 with err (a store's message counts
 * could not be read).
 */
int tokcounts_combined(struct classify_counts *cc, struct tokcounts_site *ts,
    struct tokdb *own, struct tokdb *site, double weight, char *err,
    size_t errsz);

#endif

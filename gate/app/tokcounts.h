/*
 * tokcounts.h - a list's token store as the classifier's count source,
 * alone or combined with the site store's
 *
 * The site store (listgate.conf(5), THE SITE STORE) is the token file of
 * the list named by site_list.  A young list's counts are its own plus
 * w times the site's, tokens and message counts alike:
 *
 *	count = own + w * site,   w = K / (K + n)   (site_weight = auto)
 *
 * n being the list's own trained posts (spam and ham).  This is pooling
 * the site's posts with the list's at a weight that fades: a new list
 * scores with the site's counts alone (w = 1), the site's weight is a
 * half at K posts of the list's own.  K was chosen by cross-validation
 * on the training halves of the site benchmarks (tests/bench/README.md,
 * sitecv.py); a list's site_weight key fixes w instead (0: the site
 * store is not used).
 */
#ifndef LG_TOKCOUNTS_H
#define LG_TOKCOUNTS_H

#include <stdint.h>

#include "gate/classify.h"

struct tokdb;

/* the rule's constant K: the list's own trained posts at which the
 * site's weight is a half (cross-validation, tests/bench/README.md) */
#define TOKCOUNTS_SITE_K	200.0

/* point cc at db (which must stay open while cc is used) */
void tokcounts_tokdb(struct classify_counts *cc, struct tokdb *db);

/*
 * The weight of the site store's counts for a list that has trained
 * own_posts posts: setting itself when it is in [0, 1] (a list's
 * site_weight), else (LG_AUTO, or anything out of range or NaN) the
 * rule K / (K + own_posts); a negative or NaN own_posts counts as 0.
 * Always in [0, 1].
 */
double tokcounts_site_weight(double own_posts, double setting);

/* a list's counts combined with the site store's (opaque to callers
 * but for the fields below; filled by tokcounts_combined) */
struct tokcounts_site {
	struct tokdb *own;	/* NULL: the list has no token file yet */
	struct tokdb *site;
	double w;		/* the site's weight */
	double own_spam, own_ham;	/* posts trained, the list's own */
	double site_spam, site_ham;	/* and the site store's */
	char emsg[512];
};

/*
 * Point cc at own + w * site (own may be NULL: no counts of its own),
 * w = tokcounts_site_weight(the list's trained posts, setting).  ts
 * must outlive cc's use, and so must the open stores.  0, or -1 with
 * err (a store's message counts could not be read).
 */
int tokcounts_combined(struct classify_counts *cc, struct tokcounts_site *ts,
    struct tokdb *own, struct tokdb *site, double setting, char *err,
    size_t errsz);

#endif

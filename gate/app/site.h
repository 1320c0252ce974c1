/*
 * site.h - the site store: which lists use it, and opening a list's
 * token stores for scoring
 *
 * listgate.conf's site_list names the list whose token file is the site
 * store; every other list whose site_weight is not 0 scores with its
 * own counts combined with the site's (the rule: gate/app/tokcounts.h).
 * Used by every command that scores (filter, score).  Read-only; each
 * open waits for a trainer's lock at most lock_wait_ms.  Never prints,
 * logs or exits: -1 (or a TOKDB_E* code) with a message.
 */
#ifndef LG_SITE_H
#define LG_SITE_H

#include <stddef.h>

#include "gate/app/tokcounts.h"

struct listcfg_global;
struct listcfg_list;
struct tokdb;

/* 1 if the site store is meant for list l: site_list is set, is not l,
 * and l's site_weight is not 0; else 0 */
int site_applies(const struct listcfg_global *g,
    const struct listcfg_list *l);

/* a list's token stores, open for scoring */
struct site_stores {
	struct tokdb *own;	/* NULL when the list has no file yet and
				 * the site store stands in for it */
	struct tokdb *site;	/* NULL when not used */
	struct tokcounts_site ts;
};

/*
 * Open list l's token file and, when the site store applies to l and
 * its file exists, the site store; point cc at the counts (combined
 * with the site's when it is used, see tokcounts_combined).  A list
 * without a token file of its own scores with the site store alone when
 * that is used; otherwise a missing file is TOKDB_ENOENT as before.  A
 * site store that does not exist yet is not used; one that cannot be
 * read (locked beyond lock_wait_ms, corrupt) fails like the list's own
 * file.  0, or a TOKDB_E* code with err naming the file (nothing is
 * left open).  site_close() after 0.
 */
int site_open(const struct listcfg_global *g, const struct listcfg_list *l,
    struct site_stores *s, struct classify_counts *cc, char *err,
    size_t errsz);
void site_close(struct site_stores *s);

#endif

/*
 * site.c - open a list's token stores for scoring, with the site store
 * when it applies
 *
 * See site.h.  Trusts the configuration (list names come checked by
 * listcfg); the token files are read through db/tokdb, which distrusts
 * them.  Failures return a TOKDB_E* code with a message.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "db/tokdb.h"
#include "gate/app/site.h"
#include "listcfg/listcfg.h"

int
site_applies(const struct listcfg_global *g, const struct listcfg_list *l)
{
	return g->site_list != NULL && g->site_list[0] != '\0' &&
	    strcmp(g->site_list, l->name) != 0 && l->site_weight > 0;
}

int
site_open(const struct listcfg_global *g, const struct listcfg_list *l,
    struct site_stores *s, struct classify_counts *cc, char *err,
    size_t errsz)
{
	char path[4096], spath[4096], owne[1024];
	int r, rs;

	memset(s, 0, sizeof(*s));
	if (listcfg_tokens_path(g, l->name, path, sizeof(path)) < 0) {
		snprintf(err, errsz, "list %s: token file path too long",
		    l->name);
		return TOKDB_ERR;
	}
	r = tokdb_open(path, TOKDB_READ, g->lock_wait_ms, &s->own, owne,
	    sizeof(owne));
	if (r != 0 && (r != TOKDB_ENOENT || !site_applies(g, l))) {
		snprintf(err, errsz, "%s", owne);
		return r;
	}
	if (!site_applies(g, l)) {
		tokcounts_tokdb(cc, s->own);
		return 0;
	}
	if (listcfg_tokens_path(g, g->site_list, spath, sizeof(spath)) < 0) {
		snprintf(err, errsz, "site list %s: token file path too long",
		    g->site_list);
		site_close(s);
		return TOKDB_ERR;
	}
	rs = tokdb_open(spath, TOKDB_READ, g->lock_wait_ms, &s->site, err,
	    errsz);
	if (rs == TOKDB_ENOENT) {
		/* no site store yet: the list's own file alone */
		s->site = NULL;
		if (s->own == NULL) {
			snprintf(err, errsz, "%s", owne);
			return r;
		}
		tokcounts_tokdb(cc, s->own);
		return 0;
	}
	if (rs != 0) {
		s->site = NULL;
		site_close(s);
		return rs;
	}
	if (tokcounts_combined(cc, &s->ts, s->own, s->site, l->site_weight,
	    err, errsz) < 0) {
		site_close(s);
		return TOKDB_ERR;
	}
	return 0;
}

void
site_close(struct site_stores *s)
{
	tokdb_close(s->own);
	tokdb_close(s->site);
	s->own = s->site = NULL;
}

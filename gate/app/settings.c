/*
 * settings.c - listcfg's plain values as the core's types
 *
 * Trusts its input: listcfg has checked every value against its range.
 * Never fails.
 */
#include "config.h"

#include <stdlib.h>

#include "gate/app/settings.h"

void
settings_bayes(const struct listcfg_list *l, struct bayes_params *p)
{
	bayes_params_default(p);
	p->robs = l->robs;
	p->robx = l->robx;
	p->min_dev = l->min_dev;
	p->max_tokens = l->max_tokens;
	p->vote_budget = l->vote_budget != 0;
}

void
settings_tok_opts(const struct listcfg_list *l, struct tok_opts *o)
{
	tok_opts_default(o);
	if (l == NULL)
		return;
	o->lim.max_scan = l->max_scan_bytes;
	o->bigrams = l->word_pairs != 0;
	o->marks = l->vote_budget != 0;
}

enum mta
settings_mta(const struct listcfg_global *g)
{
	return g->mta == LISTCFG_MTA_POSTFIX ? MTA_POSTFIX : MTA_QMAIL;
}

enum mta
settings_mta_filter(const struct listcfg_global *g, int envelope_args,
    int *overruled)
{
	*overruled = 0;
	if (g->mta == LISTCFG_MTA_QMAIL && envelope_args &&
	    getenv("DTLINE") == NULL && getenv("RPLINE") == NULL) {
		*overruled = 1;
		return MTA_POSTFIX;
	}
	return settings_mta(g);
}

enum mta
settings_mta_fallback(int refused_mta, int envelope_args)
{
	if (refused_mta >= 0)
		return refused_mta == LISTCFG_MTA_POSTFIX ? MTA_POSTFIX :
		    MTA_QMAIL;
	if (envelope_args)
		return MTA_POSTFIX;
	if (getenv("HOST") != NULL || getenv("DTLINE") != NULL)
		return MTA_QMAIL;
	return MTA_UNKNOWN;
}

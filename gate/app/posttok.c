/*
 * posttok.c - tokenizer plus evidence, the one way posts become tokens
 *
 * See posttok.h.  The post is hostile and reaches only the bounded
 * tokenizer and the registered evidence gatherer, which bounds its own
 * work.  Never prints, never exits.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "db/tokdb.h"
#include "gate/app/posttok.h"
#include "gate/app/settings.h"
#include "listcfg/listcfg.h"

/* the program's gatherer: set once by main, before any thread starts */
static const struct posttok_evidence *evidence;

void
posttok_set_evidence(const struct posttok_evidence *ev)
{
	evidence = ev;
}

int
posttok_init_words(struct posttok *pt, const struct listcfg_global *g,
    const struct listcfg_list *l, char *err, size_t errsz)
{
	char why[512];

	memset(pt, 0, sizeof(*pt));
	settings_tok_opts(l, &pt->to);
	netlist_init(&pt->trust);
	if (g != NULL && netlist_parse(g->trusted_relays, &pt->trust, why,
	    sizeof(why)) < 0) {
		snprintf(err, errsz, "trusted_relays: %s", why);
		return -1;
	}
	pt->to.trust = &pt->trust;
	pt->list_bigrams = pt->to.bigrams;
	return 0;
}

/* the word pairs the file at db learns with, 1 or 0: its record; a
 * file this open created is recorded with pt's list setting, and one
 * from before the record follows the list.  -1 with tokdb's error */
static int
file_pairs(const struct posttok *pt, struct tokdb *db)
{
	uint32_t feats;
	int r;

	if (tokdb_created(db))
		return tokdb_set_feats(db, pt->list_bigrams ?
		    TOKDB_FEAT_PAIRS : 0) < 0 ? -1 : pt->list_bigrams;
	if ((r = tokdb_get_feats(db, &feats)) < 0)
		return -1;
	return r == 0 ? pt->list_bigrams : (feats & TOKDB_FEAT_PAIRS) != 0;
}

int
posttok_follow_file(struct posttok *pt, struct tokdb *db)
{
	int p = file_pairs(pt, db);

	pt->to.bigrams = p < 0 ? pt->list_bigrams : p;
	return p < 0 ? -1 : p != pt->list_bigrams;
}

int
posttok_file_agrees(const struct posttok *pt, struct tokdb *db)
{
	int p = file_pairs(pt, db);

	return p < 0 ? -1 : p == pt->to.bigrams;
}

int
posttok_init(struct posttok *pt, const struct listcfg_global *g,
    const struct listcfg_list *l, char *err, size_t errsz)
{
	if (posttok_init_words(pt, g, l, err, errsz) < 0)
		return -1;
	pt->g = l != NULL ? g : NULL;
	pt->l = g != NULL ? l : NULL;
	if (evidence != NULL && evidence->begin != NULL && pt->g != NULL)
		evidence->begin(evidence->ctx);
	return 0;
}

int
posttok_asks(const struct posttok *pt)
{
	if (evidence == NULL || pt->g == NULL || pt->l == NULL)
		return 0;
	return evidence->asks == NULL || evidence->asks(evidence->ctx, pt->g,
	    pt->l);
}

int
posttok_post(const struct posttok *pt, const unsigned char *msg,
    size_t len, const char *sender, struct toklist *tl, char *note,
    size_t notesz)
{
	if (tok_post(msg, len, &pt->to, tl) < 0) {
		if (note != NULL && notesz > 0)
			note[0] = '\0';
		return -1;
	}
	return posttok_evidence(pt, msg, len, sender, tl, note, notesz);
}

int
posttok_evidence(const struct posttok *pt, const unsigned char *msg,
    size_t len, const char *sender, struct toklist *tl, char *note,
    size_t notesz)
{
	if (note != NULL && notesz > 0)
		note[0] = '\0';
	if (evidence == NULL || pt->g == NULL || pt->l == NULL)
		return 0;
	return evidence->add(evidence->ctx, pt->g, pt->l, msg, len, sender,
	    pt->evidence_by, tl, note, notesz);
}

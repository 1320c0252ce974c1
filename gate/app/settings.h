/*
 * settings.h - the core's settings from a list's configuration
 *
 * listcfg holds plain values (numbers, choices); this is the one place
 * they become the core's types.  Every command that tokenizes or scores
 * a post takes its tokenizer options and classifier parameters from
 * here, so filter, score, train, sync, rebuild and tokens --list agree
 * on the tokens of a post.
 */
#ifndef LG_SETTINGS_H
#define LG_SETTINGS_H

#include "gate/bayes.h"
#include "gate/outcome.h"
#include "gate/tok.h"
#include "listcfg/listcfg.h"

/* the list's classifier parameters */
void settings_bayes(const struct listcfg_list *l, struct bayes_params *p);

/* the list's tokenizer options (parser limits included); l NULL gives
 * the defaults, tok_opts_default() */
void settings_tok_opts(const struct listcfg_list *l, struct tok_opts *o);

/* the default MTA dialect of filter (listgate.conf's mta) */
enum mta settings_mta(const struct listcfg_global *g);

#endif

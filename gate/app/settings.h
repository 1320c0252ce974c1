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

/*
 * filter's dialect without --mta: listgate.conf's mta, but Postfix
 * when that is qmail (its default) while the envelope came as options
 * (envelope_args: -f or RECIPIENT, how pipe(8) speaks) and qmail-local's
 * environment is not there ($DTLINE and $RPLINE, which it always sets):
 * then *overruled is set.  A master.cf line without --mta postfix under
 * the default mta = qmail passed every good post with qmail's 0, which
 * tells Postfix it was delivered: deliver never ran, the post was lost.
 */
enum mta settings_mta_filter(const struct listcfg_global *g,
    int envelope_args, int *overruled);

/*
 * The dialect of filter and moderate, the MTA's pipe commands, until
 * --mta or their listgate.conf gives it (before it is read: the
 * watchdog's, a stop's; or when it cannot be): listgate.conf's mta as
 * main read it to leave root (refused_mta: enum listcfg_mta, -1 not
 * read), else Postfix when the envelope came as options (envelope_args:
 * -f or RECIPIENT, how pipe(8) speaks), else qmail under qmail-local's
 * environment ($HOST or $DTLINE, which Postfix never sets), else
 * MTA_UNKNOWN.  qmail's 111 is no sysexits code: Postfix bounces a post
 * for it.
 */
enum mta settings_mta_fallback(int refused_mta, int envelope_args);

#endif

/*
 * posttok.h - a post's tokens as every command learns and scores them:
 * the tokenizer's (tok_post, with the site's trusted relays), then the
 * evidence beyond the words (subscriber status, DNSBL answers)
 *
 * filter, score, train, sync and rebuild all tokenize through
 * posttok_post, so a token file built from the journal holds the same
 * tokens that the filter scores.  The evidence gatherer does I/O and
 * lives in a feature folder above this layer (gate/evidence/): the
 * program registers it once (posttok_set_evidence, from main); without
 * one, posts get the tokenizer's tokens alone.  Never prints, never
 * exits.
 */
#ifndef LG_POSTTOK_H
#define LG_POSTTOK_H

#include <stddef.h>

#include "gate/tok.h"
#include "gate/util/netlist.h"

struct listcfg_global;
struct listcfg_list;

/* what a post is tokenized with for one list; holds a pointer into
 * itself (to.trust): never copy one, pass its address */
struct posttok {
	struct tok_opts to;		/* the list's tokenizer settings */
	struct netlist trust;		/* the global trusted_relays */
	const struct listcfg_global *g;	/* NULL: no evidence */
	const struct listcfg_list *l;
	int list_bigrams;		/* to.bigrams as the list says */
	/* clock_now_ms() by which the evidence must be in, 0: whenever
	 * (member_check_ms, dns_timeout_ms).  The filter sets it from
	 * its watchdog: a list's timeout shorter than those must cut
	 * the evidence short, never have the watchdog defer the post */
	double evidence_by;
};

/*
 * An evidence gatherer: add tokens about the post to tl (which holds
 * its tokenizer tokens already).  sender: the envelope sender, NULL when
 * none is known (then the post's Return-Path, else its From), "" for
 * the null sender.  by: clock_now_ms() by which every answer must be
 * in, 0 for none (pt->evidence_by).  A short note of what was asked and
 * answered goes into note (for the filter's log line).  Evidence that
 * cannot be had (time-out, a failed command, no answer) gives no token
 * and is never an error: 0, or -1 only when out of memory.
 */
struct posttok_evidence {
	int (*add)(void *ctx, const struct listcfg_global *g,
	    const struct listcfg_list *l, const unsigned char *msg,
	    size_t len, const char *sender, double by, struct toklist *tl,
	    char *note, size_t notesz);
	/* a run of posts begins (posttok_init with evidence: a command's
	 * posts of one list, one sync of one list): what the gatherer
	 * concluded from the sources' time-outs in earlier runs of this
	 * process (listgate web's: days ago) is forgotten.  May be NULL */
	void (*begin)(void *ctx);
	void *ctx;
	/* whether add may ask anyone about list l's posts (a program to
	 * run, a server to query): 1 or 0.  May be NULL (then: 1) */
	int (*asks)(void *ctx, const struct listcfg_global *g,
	    const struct listcfg_list *l);
};

/* the program's evidence gatherer (NULL: none); main sets it once */
void posttok_set_evidence(const struct posttok_evidence *ev);

/*
 * Set up pt for list l of g: the list's tokenizer settings
 * (settings_tok_opts) and g's trusted relays, and begin a run of the
 * evidence gatherer.  g and l must outlive pt; l NULL gives the
 * defaults and no evidence.  0, or -1 with err (a trusted_relays value
 * listcfg did not check).
 */
int posttok_init(struct posttok *pt, const struct listcfg_global *g,
    const struct listcfg_list *l, char *err, size_t errsz);

/* like posttok_init, but with no evidence gathered (tokens only) */
int posttok_init_words(struct posttok *pt, const struct listcfg_global *g,
    const struct listcfg_list *l, char *err, size_t errsz);

/*
 * Make pt tokenize as the token file db was built: its recorded feature
 * families (tokdb_get_feats) set to.bigrams.  A file this open created
 * (tokdb_created) gets the list's recorded instead; a file from before
 * they were recorded keeps the list's.  1 when pt now tokenizes
 * otherwise than the list says (the file was built with the other
 * setting: `listgate rebuild` makes it follow), 0 when alike, -1 with
 * tokdb's error.  The writers that a rebuild from the journal can set
 * right (sync, and train's follower) call it at every open of the file;
 * training without a database follows the list (its file can never be
 * rebuilt another way).
 */
struct tokdb;
int posttok_follow_file(struct posttok *pt, struct tokdb *db);
/* the same question without changing pt (threads may be tokenizing with
 * it): 1 when the file learns as pt tokenizes now (a file this open
 * created is recorded with the list's setting), 0 when it does not, -1
 * with tokdb's error */
int posttok_file_agrees(const struct posttok *pt, struct tokdb *db);

/*
 * 1 when posttok_post and posttok_evidence may wait for someone (the
 * program's gatherer asks about pt's list: a member_check, DNSBLs), 0
 * when the evidence costs nothing.  The writers of a token file gather
 * such evidence before they take the file (sync.c, trainer.c): a
 * member_check or a DNS server that is slow to answer must never keep
 * the list's filters waiting for the file.
 */
int posttok_asks(const struct posttok *pt);

/*
 * Tokenize msg into tl (reset first), then add the evidence's tokens.
 * note (may be NULL) gets the evidence's note, "" when none.  0, or -1
 * when out of memory.
 */
int posttok_post(const struct posttok *pt, const unsigned char *msg,
    size_t len, const char *sender, struct toklist *tl, char *note,
    size_t notesz);

/*
 * posttok_post's second half, for tokens that tok_post(msg, len,
 * &pt->to, tl) made elsewhere (the trainer's workers): the evidence's
 * tokens added to tl, from this (the program's) thread.  0, or -1 when
 * out of memory.
 */
int posttok_evidence(const struct posttok *pt, const unsigned char *msg,
    size_t len, const char *sender, struct toklist *tl, char *note,
    size_t notesz);

#endif

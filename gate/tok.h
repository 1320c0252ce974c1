/*
 * tok.h - turn a post into the set of tokens the classifier votes with
 *
 * Works on the events of mail_walk(): header fields tagged by name, body
 * words, URL and address pieces, CJK bigrams, anomaly tokens.  Bounded:
 * a word longer than max_token becomes a skip token, at most max_tokens
 * distinct tokens per post.  Never logs, never exits; -1 only when out
 * of memory.
 */
#ifndef LG_TOK_H
#define LG_TOK_H

#include <stddef.h>

#include "gate/mail/mail.h"
#include "gate/toklist.h"
#include "gate/util/netlist.h"

/* bump whenever the tokens for the same post change: token files record
 * it and refuse to be used by a tokenizer of another version */
#define TOK_VERSION 10

struct tok_opts {
	struct mail_limits lim;	/* parser limits (max_scan from the list) */
	size_t max_token;	/* LG_MAX_TOKEN_BYTES */
	size_t max_tokens;	/* LG_MAX_TOKENS_PER_POST */
	/* tokenizer choices (defaults chosen by cross-validation) */
	size_t min_len;		/* shorter words are dropped (bytes) */
	int fold_case;		/* 1: ASCII letters of words folded to lower case */
	int numbers;		/* 0: pure numbers dropped; 1: kept */
	int rcvd;		/* Received: 0 nothing, 1 hosts and IPs, 2 also IP /16 /24 */
	int bigrams;		/* 1: also "bi:w1 w2" for neighbouring body words */
	int hdr_names;		/* 1: "hdr:NAME" for every header not ignored */
	int src;		/* 1: "src:" tokens of the first untrusted
				 * Received hop (gate/received.h) */
	const struct netlist *trust; /* the trusted relays (not copied: must
				 * outlive the options); NULL: loopback only */
	int marks;		/* 1: mark the vote budget's tail (below);
				 * scoring with vote_budget needs them,
				 * learning does not */
};

/* all defaults (parser limits too) */
void tok_opts_default(struct tok_opts *o);
/* the tokenizer's own defaults only (o->lim untouched) */
void tok_opts_words(struct tok_opts *o);

/*
 * Tokenize free text (UTF-8, any bytes tolerated) into tl, each token
 * prefixed with prefix ("" for body text, "subj:" for a subject...).
 * URLs and mail addresses inside become "url:" and "addr:" tokens;
 * header=1 makes addresses whole ("from:addr:u@d").  0, or -1 out of
 * memory.
 */
int tok_text(const struct tok_opts *o, const char *prefix, int header,
    const unsigned char *s, size_t n, struct toklist *tl);

/*
 * The vote budget (gate/bayes.h: a list's vote_budget).  Of a text
 * part's tokens, in first-seen order, those past the part's first
 * TOK_PART_VOTES or past the first TOK_BLOCK_VOTES of their block of
 * text are marked as its tail (toklist_set_tail): a long text's later
 * paragraphs, a newsletter's boilerplate and footers.  A block is a
 * paragraph of plain text (blank lines between) or a line of an HTML
 * part's text (html_to_text writes each block element on its own).
 * Hidden text is tail whole; header, part and anomaly tokens never.
 * tok_post marks them when o->marks is set; the tokens are the same with
 * or without the marks.  The sizes were
 * chosen by cross-validation on the benchmark's training half
 * (tests/bench/README.md, "Vote budgets").
 */
#define TOK_PART_VOTES	200
#define TOK_BLOCK_VOTES	20

/*
 * tok_text for the shown text of a text part (no prefix), with the
 * budget's marks: part0 is the index the part's tokens began at (its
 * "ct:" tokens count in its first block).  0, or -1 out of memory.
 */
int tok_text_part(const struct tok_opts *o, const unsigned char *s,
    size_t n, int html, size_t part0, struct toklist *tl);

/*
 * Tokenize one header field (name as received, value unfolded and
 * decoded) of an entity at the given MIME depth.  Ignored headers (list
 * manager, receiving host, other filters' verdicts, dates) give nothing.
 * 0, or -1 out of memory.
 */
int tok_header(const struct tok_opts *o, const char *name,
    const unsigned char *val, size_t n, unsigned depth, struct toklist *tl);

/*
 * 1 if token t (len bytes) is a pair of neighbouring words ("bi:w1 w2",
 * made with bigrams).  A pair the counts have never seen does not vote
 * (classify, gate/tune/cv): it says no more than its two words, which
 * vote themselves, and a token file trained without pairs then scores a
 * post as before.
 */
int tok_is_pair(const void *t, size_t len);

/* 1 if a header of this name gives no tokens (case-insensitive) */
int tok_header_ignored(const char *name);

/* tokenize a whole post into out (which is reset first): 0, or -1 */
int tok_post(const unsigned char *msg, size_t len, const struct tok_opts *o,
    struct toklist *out);

#endif

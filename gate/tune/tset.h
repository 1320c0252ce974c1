/*
 * tset.h - the labelled posts tune learns from: each post once, as the
 * ids of its tokens, with its net class and its cross-validation fold
 *
 * Posts come as training events (a list's journal, in id order): learn
 * or unlearn, ham or spam.  A post is known by the SHA-256 of its bytes,
 * so a post learnt twice counts once (it would otherwise sit in a
 * training fold and in its own test fold) and a decision that was
 * changed (learn ham, then unlearn ham and learn spam) ends as its last
 * class.  A post whose net training is in both classes or in neither is
 * left out.  Each distinct post is tokenized once, with the list's
 * tokenizer settings; its tokens are kept as ids into one dictionary.
 * Bounded: LG_MAX_TUNE_TOKENS distinct tokens, LG_MAX_TUNE_IDS token
 * ids in all (posts past either are left out and counted).  Posts are
 * hostile and reach only the bounded tokenizer.  -1 only when out of
 * memory (or a journal error); never prints, never exits.
 */
#ifndef LG_TSET_H
#define LG_TSET_H

#include <stddef.h>
#include <stdint.h>

struct queue;
struct tok_opts;
struct posttok;

/* one labelled post */
struct tset_post {
	uint32_t *ids;		/* its distinct tokens, as dictionary ids:
				 * the head's, then the tail's (the vote
				 * budget's, gate/tok.h) */
	uint32_t n;
	uint32_t nhead;		/* ids[0 .. nhead) are the head's */
	int spam;		/* 1 spam, 0 ham */
	unsigned fold;		/* 0 .. folds - 1 (after tset_finish) */
	uint64_t key;		/* the first 8 bytes of its SHA-256 */
};

/* what loading met */
struct tset_stats {
	unsigned long events;	/* training events read */
	unsigned long dups;	/* learn events of a post already seen */
	unsigned long unknown;	/* unlearn events of a post never learnt here */
	unsigned long mixed;	/* posts left out: net class ham and spam, or
				 * neither (unlearnt) */
	unsigned long bounded;	/* posts left out at the memory bounds */
	unsigned long tokens;	/* distinct tokens kept */
	unsigned long dropped;	/* tokens of posts left out of them: the
				 * dictionary was full */
	unsigned long damaged;	/* events that could not be read back
				 * (skipped) */
	char damaged_err[320];	/* why, for the last of them */
};

struct tset {
	struct tset_post *posts;	/* after tset_finish: the labelled */
	size_t n;
	size_t nham, nspam;
	size_t ntokens;			/* dictionary size */
	unsigned char *pair;		/* npair: 1 for the id of a word
					 * pair (tok_is_pair); ids past
					 * npair are none */
	size_t npair;
	struct tset_stats st;
	struct tset_int *in;		/* loading state */
	struct tset *twin;		/* or NULL: gets every event too (the
					 * same posts with word pairs the
					 * other way, for tune's feature
					 * families; the caller finishes and
					 * frees it).  The one of the two with
					 * bigrams tokenizes each post once
					 * (its evidence gathered once); the
					 * other takes those tokens without
					 * the pairs (for a post past the
					 * token cap: the words the cap let in
					 * with pairs), and leaves out what it
					 * leaves out */
};

/* an empty set; to: the list's tokenizer settings (copied).  NULL when
 * out of memory */
struct tset *tset_new(const struct tok_opts *to);
/* the same, posts tokenized as filter and sync do: the tokenizer with the
 * evidence beyond the words (gate/app/posttok; pt must outlive ts) */
struct tset *tset_new_posttok(const struct posttok *pt);
void tset_free(struct tset *ts);

/* one training event: the post's bytes, its class, +1 learn or -1
 * unlearn (ts->twin's too).  0, or -1 when out of memory */
int tset_event(struct tset *ts, const unsigned char *raw, size_t len,
    int spam, int dir);

/* add one post already tokenized (tests, tools): ids are taken as they
 * are (distinct, below ntokens, which grows to cover them); key must
 * be unique.  0, or -1 out of memory */
int tset_add_ids(struct tset *ts, const uint32_t *ids, uint32_t n,
    int spam, uint64_t key);

/*
 * The end of the events: keep the posts whose net class is one class,
 * and deal them into folds stratified by class (ham and spam each in
 * the order of their SHA-256, dealt in turn, so a fold's posts do not
 * depend on the journal's order).  0, or -1 out of memory.
 */
int tset_finish(struct tset *ts, unsigned folds);

/* 1 when a and b (both finished) hold the same posts in the same order,
 * with the same classes and folds, and neither dropped more tokens at a
 * full dictionary than the other (a twin does, unless a dictionary
 * filled up), else 0 */
int tset_aligned(const struct tset *a, const struct tset *b);

/* called now and then while loading: events read so far */
typedef void (*tset_progress_fn)(void *ctx, unsigned long events);

/*
 * Read list's newest LG_MAX_TUNE_EVENTS journal events into ts (then
 * tset_finish).  An event that cannot be read back is skipped and
 * counted (st.damaged).  0, or -1 with err.
 */
int tset_load_journal(struct tset *ts, struct queue *q, const char *list,
    tset_progress_fn progress, void *pctx, char *err, size_t errsz);

#endif

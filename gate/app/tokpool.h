/*
 * tokpool.h - posts tokenized (and compressed for the journal) ahead by
 * worker threads, handed back in the order they came
 *
 * Bulk training spends most of its time tokenizing and compressing each
 * post, work that needs nothing but the post; learning the tokens and
 * journaling the post must stay in order, in the program's thread.  The
 * trainer hands its posts to a pool: the workers tokenize each with
 * tok_post (the words; the evidence, which does I/O, is added by the
 * program's thread: posttok_evidence) and compress it with their own
 * journal compressor, and the trainer takes them back oldest first.
 * What is in flight is bounded: 16 posts (tokpool_set_depth: up to 128,
 * those past 16 only while all in flight stay under 2 MiB), and 16 MiB
 * of them unless one alone is larger; a caller keeps posts over
 * TOKPOOL_POST_MAX out
 * (copying them would double the memory a large post takes).  Never
 * prints, never exits.
 */
#ifndef LG_TOKPOOL_H
#define LG_TOKPOOL_H

#include <stddef.h>

struct posttok;
struct tokpool;
struct toklist;

/* the largest post worth handing over (larger ones: do it yourself) */
#define TOKPOOL_POST_MAX	(1024u * 1024u)

/* what the workers do to each post */
#define TOKPOOL_WORDS	1	/* tokenize (tok_post) */
#define TOKPOOL_DEFLATE	2	/* compress for the journal */

/* a post taken back: valid until tokpool_done */
struct tokpool_post {
	const unsigned char *msg;	/* the post (a copy) */
	size_t len;
	const char *name;		/* as given to tokpool_put */
	struct toklist *tl;		/* TOKPOOL_WORDS: its words */
	const unsigned char *z;		/* TOKPOOL_DEFLATE: compressed */
	size_t zlen;
	int rc;				/* 0, or -1: the work failed (err) */
	char err[256];
};

/*
 * The number of worker threads training should use: the environment's
 * LISTGATE_TRAIN_THREADS when set (0: none, at most 4), else the online
 * CPUs up to 4, none on one CPU; none while a test counts allocations.
 */
unsigned tokpool_workers(void);

/*
 * Start nworkers threads (at least 1) doing what (TOKPOOL_*) with pt's
 * tokenizer settings; pt must not change until tokpool_stop.  toklen
 * cuts what is tokenized of a post (0: the whole post).  0, or -1 with
 * err (out of memory, no thread could be made): train without.
 */
int tokpool_start(struct tokpool **p_r, const struct posttok *pt,
    unsigned nworkers, int what, size_t toklen, char *err, size_t errsz);

/* 1 when a post of len bytes can be put now; 0 when the oldest must be
 * taken first (tokpool_take, tokpool_done) */
int tokpool_room(const struct tokpool *p, size_t len);

#define TOKPOOL_DEPTH_MAX	128

/* posts in flight at most from now on: up to TOKPOOL_DEPTH_MAX (0: the
 * default, 16; past 16, only while they stay under 2 MiB in all).
 * A deeper pool lets the workers go on while its user cannot take
 * posts yet; made shallower, it lets no post in until enough are out */
void tokpool_set_depth(struct tokpool *p, size_t depth);

/* put a copy of the post (and of its name, cut to 1 KiB) in: 0, or -1
 * when out of memory (nothing was put) */
int tokpool_put(struct tokpool *p, const unsigned char *msg, size_t len,
    const char *name);

/* the oldest post put and not yet done, once its work is finished
 * (waited for); NULL when none is in flight */
struct tokpool_post *tokpool_take(struct tokpool *p);

/* the post tokpool_take gave is used: its slot is free again */
void tokpool_done(struct tokpool *p);

/* posts in flight */
size_t tokpool_pending(const struct tokpool *p);

/* end the threads (their current posts are finished and, with every
 * other in flight, dropped) and free the pool; NULL is fine */
void tokpool_stop(struct tokpool *p);

#endif

/*
 * tokpool.c - posts tokenized and compressed ahead by worker threads
 *
 * See tokpool.h.  The slots form a ring.  The program's thread owns the
 * free slots and the counters of what is in flight (head, tail, bytes):
 * it fills a free slot, queues it, and later takes it back from the
 * head once a worker has marked it done.  A worker owns a slot from
 * taking it off the queue until it marks it done; one mutex guards the
 * queue and the slots' states.  The workers block every signal (the
 * program's handlers run in its own thread) and touch nothing but their
 * slot, their compressor and the tokenizer, whose caches are per thread
 * (gate/mail/charset.c) or set once (gate/mail/b64.c).
 */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/journal.h"
#include "gate/app/posttok.h"
#include "gate/app/tokpool.h"
#include "gate/mail/charset.h"
#include "gate/tok.h"
#include "gate/toklist.h"
#include "gate/util/xalloc.h"

/* posts in flight at most (tokpool_set_depth: up to TOKPOOL_SLOTS), and
 * their bytes (a larger post is taken alone) */
#define TOKPOOL_DEPTH	16
#define TOKPOOL_SLOTS	TOKPOOL_DEPTH_MAX
#define TOKPOOL_BYTES	(16u * 1024u * 1024u)
/* a pool made deeper takes posts past TOKPOOL_DEPTH only while those in
 * flight stay under this many bytes: every slot keeps its token list
 * (up to LG_MAX_TOKENS_PER_POST tokens, about 0.9 MB for 120 KB of
 * short words) until the pool stops, and 128 slots of posts that fit
 * TOKPOOL_BYTES took 110 MB more than 16 */
#define TOKPOOL_DEEP_BYTES	(2u * 1024u * 1024u)
#define TOKPOOL_MAX_WORKERS	4
/* a slot's buffers larger than this are given back after use */
#define TOKPOOL_KEEP	(1024u * 1024u)
#define NAME_KEEP	1024

enum { SLOT_FREE, SLOT_QUEUED, SLOT_BUSY, SLOT_DONE };

struct slot {
	struct tokpool_post out;
	unsigned char *msg;
	size_t cap;
	unsigned char *z;
	size_t zcap;
	char name[NAME_KEEP + 1];
	int state;
};

struct worker {
	struct tokpool *p;
	pthread_t th;
	struct journal_z *jz;	/* made at its first post */
};

struct tokpool {
	pthread_mutex_t mu;
	pthread_cond_t work;	/* a slot was queued, or stop */
	pthread_cond_t done;	/* a slot is done */
	struct slot slot[TOKPOOL_SLOTS];
	/* the slots in flight by sequence number (ring[number mod
	 * TOKPOOL_SLOTS]): the oldest, the next for a worker, the next to
	 * fill; and the free ones, the last used on top (a shallow pool
	 * keeps reusing the same few, warm in the caches) */
	struct slot *ring[TOKPOOL_SLOTS];
	uint64_t head, next, tail;
	struct slot *free[TOKPOOL_SLOTS];
	size_t nfree;
	size_t depth;		/* posts in flight at most */
	size_t bytes;		/* of the posts in flight */
	int stop;
	int what;
	size_t toklen;
	const struct posttok *pt;
	unsigned nworkers;	/* started */
	struct worker w[TOKPOOL_MAX_WORKERS];
};

unsigned
tokpool_workers(void)
{
	const char *e = getenv("LISTGATE_TRAIN_THREADS");
	long n;

	if (xalloc_counted())
		return 0;
	if (e != NULL && *e != 0) {
		n = strtol(e, NULL, 10);
		return n <= 0 ? 0 : n > TOKPOOL_MAX_WORKERS ?
		    TOKPOOL_MAX_WORKERS : (unsigned)n;
	}
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 2 ? 0 : n > TOKPOOL_MAX_WORKERS ? TOKPOOL_MAX_WORKERS :
	    (unsigned)n;
}

/* a worker's part of one post */
static void
work(struct tokpool *p, struct worker *w, struct slot *s)
{
	struct tokpool_post *o = &s->out;
	size_t n = o->len;

	o->rc = 0;
	o->err[0] = 0;
	o->zlen = 0;
	if (p->what & TOKPOOL_WORDS) {
		if (p->toklen > 0 && n > p->toklen)
			n = p->toklen;
		if (tok_post(s->msg, n, &p->pt->to, o->tl) < 0) {
			snprintf(o->err, sizeof(o->err), "out of memory while "
			    "tokenizing");
			o->rc = -1;
			return;
		}
	}
	if (p->what & TOKPOOL_DEFLATE) {
		if (w->jz == NULL && (w->jz = journal_z_new()) == NULL) {
			snprintf(o->err, sizeof(o->err), "out of memory "
			    "compressing the post");
			o->rc = -1;
			return;
		}
		if (journal_z_compress(w->jz, s->msg, o->len, &s->z, &s->zcap,
		    &o->zlen, o->err, sizeof(o->err)) < 0) {
			o->rc = -1;
			return;
		}
		o->z = s->z;
	}
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	struct tokpool *p = w->p;
	struct slot *s;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->stop && p->next == p->tail)
			pthread_cond_wait(&p->work, &p->mu);
		if (p->stop)
			break;
		s = p->ring[p->next++ % TOKPOOL_SLOTS];
		s->state = SLOT_BUSY;
		pthread_mutex_unlock(&p->mu);
		work(p, w, s);
		pthread_mutex_lock(&p->mu);
		s->state = SLOT_DONE;
		pthread_cond_signal(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	journal_z_free(w->jz);
	w->jz = NULL;
	charset_cache_clear();
	return NULL;
}

static void
pool_free(struct tokpool *p)
{
	size_t i;

	for (i = 0; i < TOKPOOL_SLOTS; i++) {
		toklist_free(p->slot[i].out.tl);
		xfree(p->slot[i].msg);
		xfree(p->slot[i].z);
	}
	pthread_cond_destroy(&p->done);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->mu);
	xfree(p);
}

int
tokpool_start(struct tokpool **p_r, const struct posttok *pt,
    unsigned nworkers, int what, size_t toklen, char *err, size_t errsz)
{
	struct tokpool *p;
	sigset_t all, old;
	unsigned i;
	size_t k;

	*p_r = NULL;
	if (nworkers == 0)
		nworkers = 1;
	if (nworkers > TOKPOOL_MAX_WORKERS)
		nworkers = TOKPOOL_MAX_WORKERS;
	if ((p = xcalloc(1, sizeof(*p))) == NULL)
		goto oom_nolock;
	if (pthread_mutex_init(&p->mu, NULL) != 0) {
		xfree(p);
		goto oom_nolock;
	}
	if (pthread_cond_init(&p->work, NULL) != 0) {
		pthread_mutex_destroy(&p->mu);
		xfree(p);
		goto oom_nolock;
	}
	if (pthread_cond_init(&p->done, NULL) != 0) {
		pthread_cond_destroy(&p->work);
		pthread_mutex_destroy(&p->mu);
		xfree(p);
		goto oom_nolock;
	}
	p->what = what;
	p->toklen = toklen;
	p->pt = pt;
	p->depth = TOKPOOL_DEPTH;
	for (k = TOKPOOL_SLOTS; k > 0; k--)
		p->free[p->nfree++] = &p->slot[k - 1];
	/* the workers take no signal: the program's handlers stay in the
	 * program's thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = 0; i < nworkers; i++) {
		p->w[i].p = p;
		if (pthread_create(&p->w[i].th, NULL, worker_main, &p->w[i])
		    != 0)
			break;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	p->nworkers = i;
	if (i == 0) {
		pool_free(p);
		snprintf(err, errsz, "cannot start a thread");
		return -1;
	}
	*p_r = p;
	return 0;
oom_nolock:
	snprintf(err, errsz, "out of memory");
	return -1;
}

int
tokpool_room(const struct tokpool *p, size_t len)
{
	size_t n = (size_t)(p->tail - p->head);

	return n == 0 || (n < p->depth && p->bytes + len <= (n <
	    TOKPOOL_DEPTH ? TOKPOOL_BYTES : TOKPOOL_DEEP_BYTES));
}

void
tokpool_set_depth(struct tokpool *p, size_t depth)
{
	p->depth = depth == 0 ? TOKPOOL_DEPTH : depth > TOKPOOL_SLOTS ?
	    TOKPOOL_SLOTS : depth;
}

size_t
tokpool_pending(const struct tokpool *p)
{
	return (size_t)(p->tail - p->head);
}

int
tokpool_put(struct tokpool *p, const unsigned char *msg, size_t len,
    const char *name)
{
	struct slot *s;
	unsigned char *b;
	size_t n;

	if (p->tail - p->head >= p->depth || p->nfree == 0)
		return -1;	/* the caller did not ask tokpool_room */
	/* a free slot is the program thread's alone: no lock needed */
	s = p->free[p->nfree - 1];
	if ((p->what & TOKPOOL_WORDS) && s->out.tl == NULL &&
	    (s->out.tl = toklist_new(p->pt->to.max_tokens)) == NULL)
		return -1;
	if (s->cap < len || s->msg == NULL) {
		if ((b = xrealloc(s->msg, len > 0 ? len : 1)) == NULL)
			return -1;
		s->msg = b;
		s->cap = len > 0 ? len : 1;
	}
	if (len > 0)
		memcpy(s->msg, msg, len);
	n = name != NULL ? strnlen(name, NAME_KEEP) : 0;
	if (n > 0)
		memcpy(s->name, name, n);
	s->name[n] = 0;
	s->out.msg = s->msg;
	s->out.len = len;
	s->out.name = s->name;
	s->out.z = NULL;
	s->out.zlen = 0;
	p->nfree--;
	pthread_mutex_lock(&p->mu);
	s->state = SLOT_QUEUED;
	p->ring[p->tail++ % TOKPOOL_SLOTS] = s;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->mu);
	p->bytes += len;
	return 0;
}

struct tokpool_post *
tokpool_take(struct tokpool *p)
{
	struct slot *s;

	if (p->tail == p->head)
		return NULL;
	s = p->ring[p->head % TOKPOOL_SLOTS];
	pthread_mutex_lock(&p->mu);
	while (s->state != SLOT_DONE)
		pthread_cond_wait(&p->done, &p->mu);
	pthread_mutex_unlock(&p->mu);
	return &s->out;
}

void
tokpool_done(struct tokpool *p)
{
	struct slot *s;

	if (p->tail == p->head)
		return;
	s = p->ring[p->head % TOKPOOL_SLOTS];
	pthread_mutex_lock(&p->mu);
	s->state = SLOT_FREE;
	p->head++;
	pthread_mutex_unlock(&p->mu);
	p->free[p->nfree++] = s;
	p->bytes -= s->out.len;
	if (p->tail - p->head >= p->depth) {
		/* more are in flight than the depth the pool was made
		 * shallower to: a slot it will not need again (only the top
		 * of the free stack is), so its buffers go */
		toklist_free(s->out.tl);
		s->out.tl = NULL;
		xfree(s->msg);
		s->msg = NULL;
		s->cap = 0;
		xfree(s->z);
		s->z = NULL;
		s->zcap = 0;
		return;
	}
	if (s->cap > TOKPOOL_KEEP) {
		xfree(s->msg);
		s->msg = NULL;
		s->cap = 0;
	}
	if (s->zcap > TOKPOOL_KEEP) {
		xfree(s->z);
		s->z = NULL;
		s->zcap = 0;
	}
}

void
tokpool_stop(struct tokpool *p)
{
	unsigned i;

	if (p == NULL)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	for (i = 0; i < p->nworkers; i++)
		pthread_join(p->w[i].th, NULL);
	pool_free(p);
}

/*
 * tset.c - the labelled posts of a list's journal, tokenized once, as
 * token ids
 *
 * See tset.h.  Posts are hostile: they reach only tok_post (bounded);
 * what is kept is bounded by LG_MAX_TUNE_TOKENS and LG_MAX_TUNE_IDS, and
 * a post past a bound is left out and counted, never an error.  Fails
 * (-1) only when out of memory or when the journal cannot be read.
 */
#include "config.h"

#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/journal.h"
#include "gate/app/posttok.h"
#include "gate/tok.h"
#include "gate/toklist.h"
#include "gate/tune/tset.h"
#include "gate/util/lglimits.h"
#include "gate/util/xalloc.h"

/* a distinct post met while loading */
struct tset_ent {
	uint64_t key;
	int32_t net[2];		/* net training: [0] ham, [1] spam */
	int32_t cand;		/* its tokenized post in cand[], or -1 not
				 * tokenized yet, -2 left out (bounds) */
};

struct tset_int {
	struct tok_opts to;
	const struct posttok *pt;	/* NULL: the tokenizer alone */
	struct toklist *dict;	/* token -> id (its index) */
	struct toklist *tl;	/* one post's tokens */
	struct tset_ent *ent;	/* distinct posts */
	size_t nent, capent;
	uint32_t *slot;		/* open addressing over ent: index + 1 */
	size_t nslot;
	struct tset_post *cand;	/* every tokenized post */
	size_t ncand, capcand;
	size_t nids;		/* ids kept in all */
	uint32_t *ids;		/* one post's ids while it is built */
	size_t capids;
	int bounded;		/* the last post tokenized was left out */
	/* a view of a twin's posts (tset_event): the lead's tokens of each
	 * post, its word pairs dropped, and its leave-out decisions */
	const struct tset_int *lead;
};

struct tset *
tset_new(const struct tok_opts *to)
{
	struct tset *ts;

	if ((ts = xcalloc(1, sizeof(*ts))) == NULL)
		return NULL;
	if ((ts->in = xcalloc(1, sizeof(*ts->in))) == NULL ||
	    (ts->in->dict = toklist_new(LG_MAX_TUNE_TOKENS)) == NULL ||
	    (ts->in->tl = toklist_new(to->max_tokens)) == NULL) {
		tset_free(ts);
		return NULL;
	}
	ts->in->to = *to;
	ts->in->to.marks = 1;	/* tune tries the vote budget */
	return ts;
}

struct tset *
tset_new_posttok(const struct posttok *pt)
{
	struct tset *ts = tset_new(&pt->to);

	if (ts != NULL)
		ts->in->pt = pt;
	return ts;
}

/* drop the loading state (the dictionary's strings too: only ids are
 * needed from now on) */
static void
tset_int_free(struct tset_int *in)
{
	size_t i;

	if (in == NULL)
		return;
	for (i = 0; i < in->ncand; i++)
		xfree(in->cand[i].ids);
	xfree(in->cand);
	toklist_free(in->dict);
	toklist_free(in->tl);
	xfree(in->ent);
	xfree(in->slot);
	xfree(in->ids);
	xfree(in);
}

void
tset_free(struct tset *ts)
{
	size_t i;

	if (ts == NULL)
		return;
	for (i = 0; i < ts->n; i++)
		xfree(ts->posts[i].ids);
	xfree(ts->posts);
	xfree(ts->pair);
	tset_int_free(ts->in);
	xfree(ts);
}

/* the first 8 bytes of the post's SHA-256 */
static uint64_t
post_key(const unsigned char *raw, size_t len)
{
	struct sha256_ctx c;
	unsigned char d[SHA256_DIGEST_SIZE];
	uint64_t k = 0;
	int i;

	sha256_init(&c);
	sha256_update(&c, len, raw);
	sha256_digest(&c, sizeof(d), d);
	for (i = 0; i < 8; i++)
		k = k << 8 | d[i];
	return k;
}

/* the slot of key, or the empty one where it belongs */
static size_t
ent_slot(const struct tset_int *in, uint64_t key)
{
	size_t j = (size_t)(key ^ key >> 29) & (in->nslot - 1);

	while (in->slot[j] != 0 && in->ent[in->slot[j] - 1].key != key)
		j = (j + 1) & (in->nslot - 1);
	return j;
}

/* the entry of key, created when missing (create): NULL when absent (or
 * out of memory: *oom_r) */
static struct tset_ent *
ent_get(struct tset_int *in, uint64_t key, int create, int *oom_r)
{
	size_t j, i, ns;
	uint32_t *s;

	*oom_r = 0;
	if (in->nslot > 0) {
		j = ent_slot(in, key);
		if (in->slot[j] != 0)
			return &in->ent[in->slot[j] - 1];
	}
	if (!create)
		return NULL;
	if ((in->nent + 1) * 2 > in->nslot) {
		ns = in->nslot ? in->nslot * 2 : 1024;
		if ((s = xcalloc(ns, sizeof(*s))) == NULL) {
			*oom_r = 1;
			return NULL;
		}
		xfree(in->slot);
		in->slot = s;
		in->nslot = ns;
		for (i = 0; i < in->nent; i++)
			in->slot[ent_slot(in, in->ent[i].key)] = (uint32_t)i + 1;
	}
	if (in->nent == in->capent) {
		size_t nc = in->capent ? in->capent * 2 : 1024;
		struct tset_ent *ne;

		if ((ne = xrealloc(in->ent, nc * sizeof(*ne))) == NULL) {
			*oom_r = 1;
			return NULL;
		}
		in->ent = ne;
		in->capent = nc;
	}
	j = ent_slot(in, key);
	in->ent[in->nent].key = key;
	in->ent[in->nent].net[0] = in->ent[in->nent].net[1] = 0;
	in->ent[in->nent].cand = -1;
	in->slot[j] = (uint32_t)in->nent + 1;
	return &in->ent[in->nent++];
}

/* room for n ids in in->ids: 0 or -1 */
static int
ids_room(struct tset_int *in, size_t n)
{
	uint32_t *p;

	if (n <= in->capids)
		return 0;
	if ((p = xrealloc(in->ids, n * sizeof(*p))) == NULL)
		return -1;
	in->ids = p;
	in->capids = n;
	return 0;
}

/* keep a tokenized post: its ids copied.  0, or -1 out of memory */
static int
cand_add(struct tset *ts, const uint32_t *ids, uint32_t n, uint32_t nhead,
    int spam, uint64_t key)
{
	struct tset_int *in = ts->in;
	struct tset_post *p;

	if (in->ncand == in->capcand) {
		size_t nc = in->capcand ? in->capcand * 2 : 256;
		struct tset_post *np;

		if ((np = xrealloc(in->cand, nc * sizeof(*np))) == NULL)
			return -1;
		in->cand = np;
		in->capcand = nc;
	}
	p = &in->cand[in->ncand];
	memset(p, 0, sizeof(*p));
	if (n > 0) {
		if ((p->ids = xmalloc(n * sizeof(*p->ids))) == NULL)
			return -1;
		memcpy(p->ids, ids, n * sizeof(*ids));
	}
	p->n = n;
	p->nhead = nhead;
	p->spam = spam;
	p->key = key;
	in->ncand++;
	in->nids += n;
	return 0;
}

/* note that id is a word pair's: 0, or -1 out of memory */
static int
mark_pair(struct tset *ts, size_t id)
{
	unsigned char *p;
	size_t nc;

	if (id >= ts->npair) {
		nc = ts->npair ? ts->npair : 4096;
		while (nc <= id)
			nc *= 2;
		if ((p = xrealloc(ts->pair, nc)) == NULL)
			return -1;
		memset(p + ts->npair, 0, nc - ts->npair);
		ts->pair = p;
		ts->npair = nc;
	}
	ts->pair[id] = 1;
	return 0;
}

/* tokenize a post into ids and keep it (e->cand set): 0, or -1 OOM */
static int
tokenize(struct tset *ts, struct tset_ent *e, const unsigned char *raw,
    size_t len, int spam)
{
	struct tset_int *in = ts->in;
	const struct toklist *tl = in->tl;
	const char *t;
	size_t i, n, tlen;
	uint32_t m = 0, nhead = 0;
	long id;
	int r, tail;

	if (in->lead != NULL)
		tl = in->lead->tl;	/* tokenized once, by the lead */
	else if (in->pt != NULL ? posttok_post(in->pt, raw, len, NULL, in->tl,
	    NULL, 0) < 0 : tok_post(raw, len, &in->to, in->tl) < 0)
		return -1;
	n = toklist_count(tl);
	in->bounded = in->nids + n > LG_MAX_TUNE_IDS ||
	    (in->lead != NULL && in->lead->bounded);
	if (in->bounded) {
		e->cand = -2;
		ts->st.bounded++;
		return 0;
	}
	if (ids_room(in, n) < 0)
		return -1;
	/* the head's tokens, then the tail's */
	for (tail = 0; tail < 2; tail++)
	for (i = 0; i < n; i++) {
		/* (a view: the marks its tokens have without the pairs) */
		if ((in->lead != NULL ? toklist_tail_words(tl, i) :
		    toklist_tail(tl, i)) != tail)
			continue;
		t = toklist_get(tl, i, &tlen);
		if (in->lead != NULL && tok_is_pair(t, tlen))
			continue;
		if ((id = toklist_find(in->dict, t, tlen)) < 0) {
			if ((r = toklist_add(in->dict, t, tlen)) < 0)
				return -1;
			if (r == 0) {
				ts->st.dropped++; /* the dictionary is full */
				continue;
			}
			id = (long)toklist_count(in->dict) - 1;
			if (tok_is_pair(t, tlen) && mark_pair(ts, (size_t)id) < 0)
				return -1;
		}
		in->ids[m++] = (uint32_t)id;
		if (!tail)
			nhead = m;
	}
	if (cand_add(ts, in->ids, m, nhead, spam, e->key) < 0)
		return -1;
	e->cand = (int32_t)(in->ncand - 1);
	ts->ntokens = toklist_count(in->dict);
	return 0;
}

static int one_event(struct tset *, const unsigned char *, size_t,
    uint64_t, int, int);

int
tset_event(struct tset *ts, const unsigned char *raw, size_t len, int spam,
    int dir)
{
	uint64_t key;

	if (ts->in == NULL)
		return -1;
	if (ts->twin != NULL) {
		/* the one with pairs leads: it tokenizes the post (evidence
		 * gathered once), the other takes its tokens without the
		 * pairs, and what the lead leaves out */
		struct tset *lead = ts->in->to.bigrams ? ts : ts->twin;
		struct tset *view = lead == ts ? ts->twin : ts;

		if (view->in == NULL || lead->in == NULL)
			return -1;
		view->in->lead = lead->in;
		lead->in->lead = NULL;
		key = post_key(raw, len);
		return one_event(lead, raw, len, key, spam, dir) < 0 ||
		    one_event(view, raw, len, key, spam, dir) < 0 ? -1 : 0;
	}
	return one_event(ts, raw, len, post_key(raw, len), spam, dir);
}

/* tset_event for one set */
static int
one_event(struct tset *ts, const unsigned char *raw, size_t len,
    uint64_t key, int spam, int dir)
{
	struct tset_ent *e;
	int oom, c = spam ? 1 : 0;

	ts->st.events++;
	e = ent_get(ts->in, key, dir > 0, &oom);
	if (oom)
		return -1;
	if (e == NULL) {
		ts->st.unknown++;	/* unlearnt, never learnt here */
		return 0;
	}
	if (dir < 0) {
		e->net[c]--;
		return 0;
	}
	if (e->cand == -1) {
		if (tokenize(ts, e, raw, len, spam) < 0)
			return -1;
	} else
		ts->st.dups++;
	e->net[c]++;
	return 0;
}

int
tset_add_ids(struct tset *ts, const uint32_t *ids, uint32_t n, int spam,
    uint64_t key)
{
	struct tset_ent *e;
	uint32_t i;
	int oom;

	if (ts->in == NULL)
		return -1;
	ts->st.events++;
	if ((e = ent_get(ts->in, key, 1, &oom)) == NULL)
		return -1;
	if (e->cand == -1) {
		if (cand_add(ts, ids, n, n, spam, key) < 0)
			return -1;
		e->cand = (int32_t)(ts->in->ncand - 1);
		for (i = 0; i < n; i++)
			if (ids[i] >= ts->ntokens)
				ts->ntokens = (size_t)ids[i] + 1;
	} else
		ts->st.dups++;
	e->net[spam ? 1 : 0]++;
	return 0;
}

/* posts of one class in key order (a fixed shuffle) */
static int
key_cmp(const void *a, const void *b)
{
	const struct tset_post *x = *(const struct tset_post *const *)a;
	const struct tset_post *y = *(const struct tset_post *const *)b;

	return x->key < y->key ? -1 : x->key > y->key;
}

int
tset_finish(struct tset *ts, unsigned folds)
{
	struct tset_int *in = ts->in;
	struct tset_post **order = NULL;
	size_t i, n = 0, k, rank;
	int cls;

	if (in == NULL)
		return -1;
	if (folds == 0)
		folds = 1;
	if (in->ncand > 0 &&
	    (ts->posts = xcalloc(in->ncand, sizeof(*ts->posts))) == NULL)
		return -1;
	for (i = 0; i < in->nent; i++) {
		struct tset_ent *e = &in->ent[i];
		struct tset_post *p;

		if (e->cand < 0)
			continue;
		p = &in->cand[e->cand];
		if ((e->net[0] > 0) == (e->net[1] > 0)) {
			ts->st.mixed++;
			continue;
		}
		ts->posts[n] = *p;
		ts->posts[n].spam = e->net[1] > 0;
		p->ids = NULL;		/* moved */
		if (ts->posts[n].spam)
			ts->nspam++;
		else
			ts->nham++;
		n++;
	}
	ts->n = n;
	ts->st.tokens = ts->ntokens;
	if (n > 0 && (order = xcalloc(n, sizeof(*order))) == NULL)
		return -1;
	/* stratified: each class dealt in turn, spam continuing where ham
	 * stopped so the folds' sizes differ by one at most */
	rank = 0;
	for (cls = 0; cls <= 1; cls++) {
		for (i = 0, k = 0; i < n; i++)
			if (ts->posts[i].spam == cls)
				order[k++] = &ts->posts[i];
		if (k > 1)
			qsort(order, k, sizeof(*order), key_cmp);
		for (i = 0; i < k; i++, rank++)
			order[i]->fold = (unsigned)(rank % folds);
	}
	xfree(order);
	tset_int_free(in);
	ts->in = NULL;
	return 0;
}

int
tset_aligned(const struct tset *a, const struct tset *b)
{
	size_t i;

	if (a->in != NULL || b->in != NULL || a->n != b->n ||
	    a->st.dropped != b->st.dropped)
		return 0;
	for (i = 0; i < a->n; i++)
		if (a->posts[i].key != b->posts[i].key ||
		    a->posts[i].spam != b->posts[i].spam ||
		    a->posts[i].fold != b->posts[i].fold)
			return 0;
	return 1;
}

/* events read between two progress calls */
#define PROGRESS_EVERY	100

int
tset_load_journal(struct tset *ts, struct queue *q, const char *list,
    tset_progress_fn progress, void *pctx, char *err, size_t errsz)
{
	struct journal_fetch *f;
	struct journal_event ev;
	int64_t after;
	unsigned long left = LG_MAX_TUNE_EVENTS, got;
	int r;

	if (journal_window_start(q, list, LG_MAX_TUNE_EVENTS, &after, err,
	    errsz) < 0)
		return -1;
	/* a fetch stops at its byte budget: batches until one is empty */
	do {
		if (journal_fetch_open(q, list, after, (unsigned)left,
		    ts->in->to.lim.max_scan, &f, err, errsz) < 0)
			return -1;
		got = 0;
		while ((r = journal_fetch_next(f, &ev, err, errsz)) != 0) {
			if (r < 0) {
				/* out of memory, or the database failed: no
				 * answer from part of the journal */
				journal_fetch_close(f);
				return -1;
			}
			got++;
			after = ev.id;
			if (ev.state != JOURNAL_APPLY) {
				/* damaged or quarantined (as sync skips
				 * it): left out, counted, said */
				ts->st.damaged++;
				snprintf(ts->st.damaged_err,
				    sizeof(ts->st.damaged_err), "journal event "
				    "%lld: %s", (long long)ev.id, ev.why);
				continue;
			}
			if (tset_event(ts, ev.raw, ev.len, ev.spam,
			    ev.dir) < 0) {
				snprintf(err, errsz, "out of memory reading "
				    "the journal of list %s", list);
				journal_fetch_close(f);
				return -1;
			}
			if (progress != NULL &&
			    ts->st.events % PROGRESS_EVERY == 0)
				progress(pctx, ts->st.events);
		}
		journal_fetch_close(f);
		left -= got < left ? got : left;
	} while (got > 0 && left > 0);
	if (progress != NULL)
		progress(pctx, ts->st.events);
	return 0;
}

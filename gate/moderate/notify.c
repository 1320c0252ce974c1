/*
 * notify.c - hold notices, reminders and digests through the outbox and
 * the list's notify command
 *
 * Trusts the configuration; the held post and its envelope are hostile
 * and reach a message only through gate/moderate/notice.c, the notify
 * command only as whole argv words ({moderator} is a configured
 * address, {sender} the envelope sender: run_argv, no shell).  Every
 * send is bounded in time; a failed one stays pending in the outbox.
 * Nothing here prints, logs or exits.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "db/moddb.h"
#include "db/queue.h"
#include "gate/app/run.h"
#include "gate/moderate/cookie.h"
#include "gate/moderate/notice.h"
#include "gate/moderate/notify.h"
#include "gate/util/buf.h"
#include "gate/util/clock.h"
#include "gate/util/xalloc.h"
#include "listcfg/listcfg.h"
#include "listcfg/tmpl.h"

int
notify_ready(const struct listcfg_list *l)
{
	return l->moderators != NULL && l->moderators[0] != NULL &&
	    l->moderation_address != NULL && l->notify != NULL;
}

const char *
notify_missing(const struct listcfg_list *l, char *out, size_t outsz)
{
	const char *k[3];
	size_t n = 0;

	if (l->moderators == NULL || l->moderators[0] == NULL)
		k[n++] = "moderators";
	if (l->moderation_address == NULL)
		k[n++] = "moderation_address";
	if (l->notify == NULL)
		k[n++] = "notify";
	snprintf(out, outsz, "%s%s%s%s%s", n > 0 ? k[0] : "",
	    n == 2 ? " and " : n == 3 ? ", " : "", n > 1 ? k[1] : "",
	    n == 3 ? " and " : "", n > 2 ? k[2] : "");
	return out;
}

int
notify_links(const struct cookie_key *key, const struct listcfg_list *l,
    int64_t id, const unsigned char sha[32], const char *mod, time_t now,
    struct notice_links *ln)
{
	char c[COOKIE_CHARS + 1];
	char *dst[3];
	int i;

	dst[0] = ln->approve;
	dst[1] = ln->reject;
	dst[2] = ln->discard;
	ln->expiry = now + (time_t)l->cookie_days * 86400;
	for (i = 0; i < 3; i++) {
		cookie_make(key, l->name, id, (enum cookie_action)i, ln->expiry,
		    sha, mod, c);
		if (cookie_address(l->moderation_address,
		    l->recipient_delimiter, (enum cookie_action)i, id, c, dst[i],
		    COOKIE_MAX_ADDR + 1) < 0)
			return -1;
	}
	return 0;
}

int
notify_run(const struct listcfg_list *l, const char *to, const char *sender,
    int64_t id, const struct buf *msg, unsigned timeout_s, char *err,
    size_t errsz)
{
	struct tmpl_vars v;
	char idbuf[32], lerr[1024], **argv = NULL;
	int st;

	if (l->notify == NULL) {
		snprintf(err, errsz, "list %s has no notify command", l->name);
		return -1;
	}
	memset(&v, 0, sizeof(v));
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)id);
	v.moderator = to;
	v.list = l->name;
	v.sender = sender;
	v.id = id > 0 ? idbuf : "";
	if (tmpl_expand(l->notify, &v, &argv) < 0) {
		snprintf(err, errsz, "notify: cannot expand the template (out "
		    "of memory or an address too long)");
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	st = run_argv(argv, msg->data, msg->len, -1, timeout_s, lerr,
	    sizeof(lerr));
	if (st > 0)
		snprintf(err, errsz, "notify command %s exited with status %d",
		    argv[0], st);
	else if (st < 0)
		snprintf(err, errsz, "notify command: %s", lerr);
	tmpl_free(argv);
	return st == 0 ? 0 : -1;
}

/* the signal that asked the run to stop (notify_stop), or 0 */
static volatile sig_atomic_t stop_sig;

void
notify_stop(int sig)
{
	stop_sig = sig;
}

int
notify_stopped(void)
{
	return stop_sig;
}

/* whole seconds left until deadline_ms (rounded down: a command never
 * outlives the deadline), or 0 when less than one is left */
static unsigned
left_s(double deadline_ms)
{
	double ms = deadline_ms - clock_now_ms();

	if (ms < 1000)
		return 0;
	return (unsigned)(ms / 1000);
}

/* the reason a row of a moderator no longer in l's moderators is
 * dropped with */
#define NOT_MODERATOR	"the moderator is no longer in moderators"

/*
 * Why a pending row to moderator a is dropped instead of sent: NULL to
 * send it; a moderator no longer in l's moderators; or an address a
 * notice's To: header cannot carry (moderators load with address
 * literals and UTF-8, which notice_addr_ok refuses: such a row would
 * fail for ever).
 */
static const char *
drop_reason(const struct listcfg_list *l, const char *a)
{
	if (!listcfg_is_moderator(l, a))
		return NOT_MODERATOR;
	if (!notice_addr_ok(a))
		return "a notice cannot go to this address (ASCII without "
		    "<>()[],;:\\\" only)";
	return NULL;
}

/* remember a failure, and where: list's post id, or its digest to mod
 * (a run over every list names the one at fault) */
static void
failed(struct notify_stats *st, const char *list, int64_t id,
    const char *mod, const char *err)
{
	st->failed++;
	snprintf(st->lasterr, sizeof(st->lasterr), "%.*s",
	    (int)sizeof(st->lasterr) - 1, err);
	if (mod != NULL)
		snprintf(st->lastat, sizeof(st->lastat), "list %.*s, the "
		    "digest to %.200s", LG_MAX_LIST_NAME, list, mod);
	else
		snprintf(st->lastat, sizeof(st->lastat), "list %.*s, post %lld",
		    LG_MAX_LIST_NAME, list, (long long)id);
}

/* the held post r as a notice shows it */
static void
row_post(const struct queue_row *r, struct notice_post *p)
{
	memset(p, 0, sizeof(*p));
	p->list = r->list;
	p->id = r->id;
	p->env_sender = r->env_sender;
	p->from = r->from;
	p->subject = r->subject;
	p->score = r->score;
	p->verdict = r->verdict;
	p->clues = r->clues;
	p->note = r->note;
	p->raw = r->raw;
	p->raw_len = r->raw_len;
	p->size = r->size > 0 ? (size_t)r->size : 0;
	p->arrived = r->arrived;
	p->raw_sha256 = r->raw_sha256;
}

/* 1 when a notify command that failed after started_ms used up its
 * timeout_s: it hung (killed at its time limit) */
static int
hung(double started_ms, unsigned timeout_s)
{
	return clock_now_ms() - started_ms >= timeout_s * 1000.0 - 500.0;
}

/*
 * Claim outbox row n, send it, a notice about p, within timeout_s, and
 * mark the row: 0 sent, 1 another sender has it (or it is no longer
 * pending), 2 not claimed: the list's notify_max_per_hour is spent
 * (when counted: the row waits for a digest), -1 not sent (the row
 * stays pending, st says why; *hung_r set when the notify command
 * hung), -2 the outbox could not be read or written (err).  counted:
 * the claim keeps to the list's notify_max_per_hour with every other
 * sender at once (moddb_claim_counted).
 */
static int
send_one(struct queue *q, const struct listcfg_list *l,
    const struct cookie_key *key, const struct notice_post *p,
    const struct moddb_notice *n, unsigned timeout_s, int counted,
    struct notify_stats *st, int *hung_r, char *err, size_t errsz)
{
	struct notice_links ln;
	struct notice_to h;
	struct buf msg = BUF_INIT((p->raw_len < NOTICE_MAX_ATTACH ?
	    p->raw_len : NOTICE_MAX_ATTACH) + NOTICE_MAX_TEXT + 65536);
	char why[1024], claim[64];
	double t0;
	int rc = -1, c;

	c = counted ? moddb_claim_counted(q, n->id, timeout_s +
	    NOTIFY_CLAIM_SLACK_S, l->notify_max_per_hour, claim,
	    sizeof(claim), err, errsz) : moddb_claim(q, n->id, timeout_s +
	    NOTIFY_CLAIM_SLACK_S, 0, claim, sizeof(claim), err, errsz);
	if (c != 1) {
		buf_free(&msg);
		return c < 0 ? -2 : c == 2 ? 2 : 1;
	}
	h.from = l->moderation_address;
	h.to = n->moderator;
	h.now = time(NULL);
	h.key = key;
	t0 = clock_now_ms();
	if (notify_links(key, l, p->id, p->raw_sha256, n->moderator, h.now,
	    &ln) < 0) {
		snprintf(why, sizeof(why), "moderation_address %s is too long "
		    "for action addresses", l->moderation_address);
		failed(st, l->name, p->id, NULL, why);
	} else if (notice_hold(p, &ln, &h, strcmp(n->kind, "remind") == 0,
	    &msg) < 0) {
		snprintf(why, sizeof(why), "out of memory building the notice");
		failed(st, l->name, p->id, NULL, why);
	} else if (notify_run(l, n->moderator, p->env_sender, p->id, &msg,
	    timeout_s, why, sizeof(why)) < 0) {
		failed(st, l->name, p->id, NULL, why);
		if (hung_r != NULL && hung(t0, timeout_s))
			*hung_r = 1;
	} else
		rc = 0;
	buf_free(&msg);
	if (moddb_mark(q, n->id, rc == 0 ? "sent" : "pending", rc == 0 ? NULL :
	    why, claim, err, errsz) < 0)
		return -2;
	if (rc == 0)
		st->sent++;
	return rc;
}

/* what sending one post's notices carries */
struct post_ctx {
	struct queue *q;
	const struct listcfg_list *l;
	const struct cookie_key *key;
	const struct notice_post *p;
	double deadline_ms;
	int counted;		/* kept to notify_max_per_hour (send_one) */
	struct notify_stats *st;
	char *err;
	size_t errsz;
	int dberr;
};

/* moddb_notice_fn: send a pending notice of the post while time is left */
static int
post_row(const struct moddb_notice *n, void *vctx)
{
	struct post_ctx *c = vctx;
	const char *why;
	unsigned t;

	if ((why = drop_reason(c->l, n->moderator)) != NULL) {
		/* an older row of a moderator removed since, or one no
		 * notice can go to */
		if (moddb_mark(c->q, n->id, "dropped", why, NULL, c->err,
		    c->errsz) < 0) {
			c->dberr = 1;
			return -1;
		}
		c->st->dropped++;
		return 0;
	}
	if (n->digest) {
		c->st->waiting++;
		return 0;
	}
	/* (no time left, or told to stop: not one more send) */
	if ((t = left_s(c->deadline_ms)) == 0 || stop_sig != 0) {
		c->st->waiting++;
		return 0;
	}
	switch (send_one(c->q, c->l, c->key, c->p, n, t, c->counted, c->st,
	    NULL, c->err, c->errsz)) {
	case -2:
		c->dberr = 1;
		return -1;
	case 2:
		/* other senders spent the hour meanwhile: it waits for the
		 * digest of `notify --pending` */
		c->st->waiting++;
		break;
	}
	return 0;
}

int
notify_is_ours(const struct listcfg_global *g, const unsigned char *raw,
    size_t len)
{
	struct cookie_key *key;
	char kerr[1024];
	int r = 0;

	if (raw == NULL || len == 0 || (key = xcalloc(1, sizeof(*key))) == NULL)
		return 0;
	if (cookie_load_key(g->secret_file, key, kerr, sizeof(kerr)) == 0)
		r = notice_is_ours(raw, len, key);
	memset(key, 0, sizeof(*key));
	xfree(key);
	return r;
}

/* the moderators of l */
static unsigned
nmods(const struct listcfg_list *l)
{
	unsigned n = 0;

	while (l->moderators != NULL && l->moderators[n] != NULL)
		n++;
	return n;
}

/* queue kind notices of p (none when kind is NULL) and send its pending
 * ones until deadline_ms, kept to notify_max_per_hour when counted */
static int
queue_and_send(struct queue *q, const struct listcfg_global *g,
    const struct listcfg_list *l, const struct notice_post *p,
    const char *kind, int digest, int counted, double deadline_ms,
    struct notify_stats *st, char *err, size_t errsz)
{
	struct cookie_key *key;
	struct post_ctx c;
	char kerr[1024];
	int r;

	/* a notice of a notice: the moderator's address led it back to a
	 * list listgate filters, which held it; noticed, it would come
	 * back again, for ever (the MTA's hop count never grows: each
	 * notice is a new message, the last one only attached) */
	if (kind != NULL && notify_is_ours(g, p->raw, p->raw_len)) {
		st->ours = 1;
		return 0;
	}
	if (kind != NULL) {
		if (moddb_queue(q, l->name, p->id, l->moderators, kind, digest,
		    err, errsz) < 0)
			return -1;
		st->queued += nmods(l);
	}
	if (digest) {
		st->waiting += nmods(l);
		return 0;
	}
	if ((key = xcalloc(1, sizeof(*key))) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	if (cookie_load_key(g->secret_file, key, kerr, sizeof(kerr)) < 0) {
		/* the notices stay in the outbox until the key is there */
		failed(st, l->name, p->id, NULL, kerr);
		st->waiting += nmods(l);
		xfree(key);
		return 0;
	}
	memset(&c, 0, sizeof(c));
	c.q = q;
	c.l = l;
	c.key = key;
	c.p = p;
	c.deadline_ms = deadline_ms;
	c.counted = counted;
	c.st = st;
	c.err = err;
	c.errsz = errsz;
	r = moddb_pending(q, NULL, p->id, NOTIFY_MAX_PENDING, post_row, &c,
	    err, errsz);
	memset(key, 0, sizeof(*key));
	xfree(key);
	return r;
}

int
notify_held(struct queue *q, const struct listcfg_global *g,
    const struct listcfg_list *l, const struct notice_post *p,
    double deadline_ms, struct notify_stats *st, char *err, size_t errsz)
{
	long n;
	int digest;

	memset(st, 0, sizeof(*st));
	if (!notify_ready(l))
		return 0;
	if (moddb_sent_last_hour(q, l->name, &n, err, errsz) < 0)
		return -1;
	digest = l->notify_max_per_hour == 0 ||
	    n >= (long)l->notify_max_per_hour;
	/* counted again as each is claimed: filters holding posts at once
	 * all read the same count here */
	return queue_and_send(q, g, l, p, "hold", digest, 1, deadline_ms, st,
	    err, errsz);
}

/* what a hold notice reads of a post too large to attach: its header
 * (LG_MAX_HEADER_BYTES at most) and the preview's text (notice.c scans
 * 256 KiB) */
#define NOTICE_HEAD	(512u * 1024u)

/* post id as a hold notice reads it: whole when it can attach it
 * (NOTICE_MAX_ATTACH), else its first NOTICE_HEAD bytes (its header is
 * attached alone), not the whole of a post held oversize, which may be
 * 1 GiB.  As queue_get_head: 1, 0 no such post, -1 with err */
static int
notice_row(struct queue *q, int64_t id, struct queue_row *r, char *err,
    size_t errsz)
{
	int got = queue_get_head(q, id, NOTICE_HEAD, r, err, errsz);

	if (got <= 0 || r->raw_len >= (size_t)r->size ||
	    r->size > NOTICE_MAX_ATTACH)
		return got;
	queue_row_free(r);
	return queue_get(q, id, r, err, errsz);
}

/* notify_remind (kind "remind") and notify_send_post (kind NULL) */
static int
remind(struct queue *q, const struct listcfg_global *g, int64_t id,
    const char *kind, int hourly, double deadline_ms,
    struct notify_stats *st, char *err, size_t errsz)
{
	struct queue_row r;
	struct listcfg_list l;
	struct notice_post p;
	char miss[64];
	long nsent = 0;
	int rc, got;

	memset(st, 0, sizeof(*st));
	if ((got = notice_row(q, id, &r, err, errsz)) < 0)
		return -1;
	if (got == 0) {
		snprintf(err, errsz, "no post %lld", (long long)id);
		return 1;
	}
	if (strcmp(r.status, "held") != 0) {
		snprintf(err, errsz, "post %lld (list %s) is %s, not held",
		    (long long)id, r.list, strcmp(r.status, "releasing") == 0 ?
		    "being released" : r.status);
		queue_row_free(&r);
		return 1;
	}
	if (listcfg_load_list(g, r.list, &l, err, errsz) < 0) {
		queue_row_free(&r);
		return -1;
	}
	if (!notify_ready(&l)) {
		snprintf(err, errsz, "list %s cannot send notices: set %s in "
		    "lists/%s.conf", l.name, notify_missing(&l, miss,
		    sizeof(miss)), l.name);
		rc = -1;
	} else if (hourly && kind != NULL && moddb_sent_last_hour(q, l.name,
	    &nsent, err, errsz) < 0)
		rc = -1;
	else {
		/* expire's reminder is a hold notice again: past the list's
		 * notify_max_per_hour it waits for the digest, as
		 * notify_held's do, or the remind of a list's backlog would
		 * send each moderator one mail per post at once.  Queued
		 * under the count read here, and sent (expire sends them
		 * after its commit, kind NULL) each claimed against the
		 * hour's budget with every other sender at once, as the
		 * filter's are: the count read at queueing saw neither the
		 * notices a filter or a `notify --pending` run was sending
		 * then, nor those sent since */
		row_post(&r, &p);
		rc = queue_and_send(q, g, &l, &p, kind, hourly && kind !=
		    NULL && (l.notify_max_per_hour == 0 ||
		    nsent >= (long)l.notify_max_per_hour), hourly,
		    deadline_ms, st, err, errsz);
	}
	listcfg_free_list(&l);
	queue_row_free(&r);
	return rc;
}

int
notify_remind(struct queue *q, const struct listcfg_global *g, int64_t id,
    int hourly, double deadline_ms, struct notify_stats *st, char *err,
    size_t errsz)
{
	return remind(q, g, id, "remind", hourly, deadline_ms, st, err, errsz);
}

int
notify_send_post(struct queue *q, const struct listcfg_global *g, int64_t id,
    int hourly, double deadline_ms, struct notify_stats *st, char *err,
    size_t errsz)
{
	return remind(q, g, id, NULL, hourly, deadline_ms, st, err, errsz);
}

/* --- notify --pending ----------------------------------------------------- */

/* a held post without its bytes, for a digest */
struct held {
	int64_t id;
	unsigned char raw_sha256[32];
	char *env_sender, *from, *subject, *verdict;
	double score;
	size_t size;
	time_t arrived;
};

/* what one list's run collects */
struct pend {
	struct moddb_notice *rows;
	size_t n, cap;
	struct held *held;
	size_t nheld, capheld;
};

/* moddb_notice_fn: keep every pending row */
static int
collect_row(const struct moddb_notice *n, void *vctx)
{
	struct pend *pd = vctx;
	struct moddb_notice *p;

	if (pd->n == pd->cap) {
		size_t ncap = pd->cap ? pd->cap * 2 : 64;

		if ((p = xrealloc(pd->rows, ncap * sizeof(*p))) == NULL)
			return -1;
		pd->rows = p;
		pd->cap = ncap;
	}
	pd->rows[pd->n++] = *n;
	return 0;
}

/* queue_row_fn: keep the held posts (no bytes) */
static int
collect_held(const struct queue_row *r, void *vctx)
{
	struct pend *pd = vctx;
	struct held *h;

	if (pd->nheld == pd->capheld) {
		size_t ncap = pd->capheld ? pd->capheld * 2 : 64;

		if ((h = xrealloc(pd->held, ncap * sizeof(*h))) == NULL)
			return -1;
		pd->held = h;
		pd->capheld = ncap;
	}
	h = &pd->held[pd->nheld];
	memset(h, 0, sizeof(*h));
	h->id = r->id;
	h->score = r->score;
	h->size = r->size > 0 ? (size_t)r->size : 0;
	h->arrived = r->arrived;
	memcpy(h->raw_sha256, r->raw_sha256, sizeof(h->raw_sha256));
	if ((h->env_sender = xstrdup(r->env_sender)) == NULL ||
	    (h->from = xstrdup(r->from)) == NULL ||
	    (h->subject = xstrdup(r->subject)) == NULL ||
	    (h->verdict = xstrdup(r->verdict)) == NULL) {
		xfree(h->env_sender);
		xfree(h->from);
		xfree(h->subject);
		xfree(h->verdict);
		return -1;
	}
	pd->nheld++;
	return 0;
}

static void
pend_free(struct pend *pd)
{
	size_t i;

	for (i = 0; i < pd->nheld; i++) {
		xfree(pd->held[i].env_sender);
		xfree(pd->held[i].from);
		xfree(pd->held[i].subject);
		xfree(pd->held[i].verdict);
	}
	xfree(pd->held);
	xfree(pd->rows);
}

/* the held post id, or NULL */
static const struct held *
find_held(const struct pend *pd, int64_t id)
{
	size_t i;

	for (i = 0; i < pd->nheld; i++)
		if (pd->held[i].id == id)
			return &pd->held[i];
	return NULL;
}

/* one digest to moderator mod of the digest rows of pd that name it
 * (NOTICE_MAX_DIGEST at most: the others wait for the next run's, and
 * this one says how many they are); marks them: 0, or -1 when the
 * outbox could not be written */
static int
send_digest(struct queue *q, const struct listcfg_list *l,
    const struct cookie_key *key, struct pend *pd, const char *mod,
    struct notify_stats *st, int *hung_r, char *err, size_t errsz)
{
	struct notice_post *posts = NULL;
	struct notice_links *ln = NULL;
	struct notice_to h;
	struct buf msg = BUF_INIT(NOTICE_MAX_TEXT * 8);
	const struct held *hp;
	size_t i, k = 0, more = 0, *which = NULL;
	char why[1024];
	double t0;
	int rc = -1, ok = 0, c;

	posts = xcalloc(NOTICE_MAX_DIGEST, sizeof(*posts));
	ln = xcalloc(NOTICE_MAX_DIGEST, sizeof(*ln));
	which = xcalloc(NOTICE_MAX_DIGEST, sizeof(*which));
	if (posts == NULL || ln == NULL || which == NULL) {
		snprintf(err, errsz, "out of memory");
		goto out;
	}
	h.from = l->moderation_address;
	h.to = mod;
	h.now = time(NULL);
	h.key = key;
	for (i = 0; i < pd->n; i++) {
		if (!pd->rows[i].digest || strcmp(pd->rows[i].moderator, mod) ||
		    pd->rows[i].tries < 0)
			continue;
		if ((hp = find_held(pd, pd->rows[i].post_id)) == NULL)
			continue;
		if (k == NOTICE_MAX_DIGEST) {
			/* left pending for the next run's digest: this one
			 * says they wait too */
			more++;
			continue;
		}
		memset(&posts[k], 0, sizeof(posts[k]));
		posts[k].list = l->name;
		posts[k].id = hp->id;
		posts[k].env_sender = hp->env_sender;
		posts[k].from = hp->from;
		posts[k].subject = hp->subject;
		posts[k].score = hp->score;
		posts[k].verdict = hp->verdict;
		posts[k].clues = "";
		posts[k].size = hp->size;
		posts[k].arrived = hp->arrived;
		posts[k].raw_sha256 = hp->raw_sha256;
		if (notify_links(key, l, hp->id, hp->raw_sha256, mod, h.now,
		    &ln[k]) < 0) {
			snprintf(err, errsz, "moderation_address %s is too "
			    "long for action addresses", l->moderation_address);
			goto out;
		}
		/* only the rows this run claimed: another sender has the rest */
		if ((c = moddb_claim(q, pd->rows[i].id, NOTIFY_RUN_S +
		    NOTIFY_CLAIM_SLACK_S, 1, pd->rows[i].claim,
		    sizeof(pd->rows[i].claim), err, errsz)) < 0)
			goto out;
		if (c == 0) {
			pd->rows[i].tries = -1;
			continue;
		}
		which[k++] = i;
	}
	rc = 0;
	if (k == 0)
		goto out;
	t0 = clock_now_ms();
	if (notice_digest(l->name, posts, ln, k, more, &h, &msg) < 0) {
		snprintf(why, sizeof(why), "out of memory building a digest");
		failed(st, l->name, 0, mod, why);
	} else if (notify_run(l, mod, "", 0, &msg, NOTIFY_RUN_S, why,
	    sizeof(why)) < 0) {
		failed(st, l->name, 0, mod, why);
		if (hung(t0, NOTIFY_RUN_S))
			*hung_r = 1;
	} else
		ok = 1;
	if (ok)
		st->digests++;
	for (i = 0; i < k && rc == 0; i++) {
		/* a row is in one digest at most per run */
		pd->rows[which[i]].tries = -1;
		if (moddb_mark(q, pd->rows[which[i]].id, ok ? "digest" :
		    "pending", ok ? NULL : why, pd->rows[which[i]].claim, err,
		    errsz) < 0)
			rc = -1;
	}
out:
	buf_free(&msg);
	xfree(posts);
	xfree(ln);
	xfree(which);
	return rc;
}

/* what dropping a list's rows carries */
struct drop_ctx {
	struct queue *q;
	struct notify_stats *st;
	char *err;
	size_t errsz;
};

/* moddb_notice_fn: drop a row of a list without moderators */
static int
drop_row(const struct moddb_notice *n, void *vctx)
{
	struct drop_ctx *c = vctx;

	if (moddb_mark(c->q, n->id, "dropped", NOT_MODERATOR, NULL, c->err,
	    c->errsz) < 0)
		return -1;
	c->st->dropped++;
	return 0;
}

/* notify --pending for one list */
static int
pending_list(struct queue *q, const struct listcfg_global *g,
    const char *name, struct notify_stats *st, char *err, size_t errsz)
{
	struct listcfg_list l;
	struct cookie_key *key = NULL;
	char miss[64];
	struct pend pd;
	struct queue_row r;
	struct notice_post p;
	int64_t loaded = 0, lastpost = 0;
	unsigned char *first = NULL;
	long nsent;
	size_t i, j;
	int rc = -1, have_row = 0, got, stuck = 0;

	memset(&pd, 0, sizeof(pd));
	memset(&r, 0, sizeof(r));
	if (listcfg_load_list(g, name, &l, err, errsz) < 0)
		return -1;
	if (l.moderators == NULL || l.moderators[0] == NULL) {
		/* no moderators left (or no lists/L.conf any more): each row
		 * is a moderator's who is no longer in moderators */
		struct drop_ctx dc;

		dc.q = q;
		dc.st = st;
		dc.err = err;
		dc.errsz = errsz;
		rc = moddb_pending(q, name, 0, NOTIFY_MAX_PENDING, drop_row, &dc,
		    err, errsz);
		goto out;
	}
	if (!notify_ready(&l)) {
		snprintf(err, errsz, "list %s has pending notices but cannot "
		    "send them: set %s in lists/%s.conf", name,
		    notify_missing(&l, miss, sizeof(miss)), name);
		goto out;
	}
	if ((key = xcalloc(1, sizeof(*key))) == NULL) {
		snprintf(err, errsz, "out of memory");
		goto out;
	}
	if (cookie_load_key(g->secret_file, key, err, errsz) < 0)
		goto out;
	if (moddb_pending(q, name, 0, NOTIFY_MAX_PENDING, collect_row, &pd,
	    err, errsz) < 0 ||
	    queue_list(q, "held", name, collect_held, &pd, err, errsz) < 0 ||
	    moddb_sent_last_hour(q, name, &nsent, err, errsz) < 0)
		goto out;
	/* notices of posts decided (or gone), or to moderators no longer
	 * in the list's moderators, are dropped; the others go out one by
	 * one while the hour allows, else into the digest */
	for (i = 0; i < pd.n; i++) {
		struct moddb_notice *n = &pd.rows[i];
		const char *dr = drop_reason(&l, n->moderator);

		/* a post being released (or whose release was interrupted)
		 * is not decided yet: a release that fails puts it back to
		 * held, and its moderators must still hear of it.  Its
		 * notices wait for the next run, as do those of a post that
		 * was held when the rows were read and is not now */
		if (dr == NULL && (strcmp(n->post_status, "releasing") == 0 ||
		    (strcmp(n->post_status, "held") == 0 &&
		    find_held(&pd, n->post_id) == NULL)))
			continue;
		if (strcmp(n->post_status, "held") != 0 || dr != NULL) {
			char why[128];

			if (dr != NULL)
				snprintf(why, sizeof(why), "%s", dr);
			else
				snprintf(why, sizeof(why), "the post is %s",
				    n->post_status[0] ? n->post_status : "gone");
			if (moddb_mark(q, n->id, "dropped", why, NULL, err,
			    errsz) < 0)
				goto out;
			st->dropped++;
			n->tries = -1;
			continue;
		}
		if (n->digest)
			continue;
		if (n->post_id != lastpost && (l.notify_max_per_hour == 0 ||
		    nsent >= (long)l.notify_max_per_hour)) {
			n->digest = 1;
			continue;
		}
		/* a notify command that hung (the MTA stuck): the rest
		 * waits for the next run, or each row would take the whole
		 * time limit, and runs from cron would pile up.  So after a
		 * stop (notify_stop): the send under way was recorded */
		if (stuck || stop_sig != 0)
			continue;
		if (n->post_id != lastpost) {
			lastpost = n->post_id;
			nsent++;
		}
		if (loaded != n->post_id) {
			if (have_row)
				queue_row_free(&r);
			/* (p pointed into r: a post gone now must not leave
			 * the freed one standing for a later row of its own) */
			have_row = 0;
			loaded = 0;
			if ((got = notice_row(q, n->post_id, &r, err,
			    errsz)) < 0)
				goto out;
			if (got == 0)
				continue;
			have_row = 1;
			loaded = n->post_id;
			row_post(&r, &p);
		}
		got = send_one(q, &l, key, &p, n, NOTIFY_RUN_S, 1, st, &stuck,
		    err, errsz);
		if (got == -2)
			goto out;
		if (got == 2) {
			/* nsent was read once: other senders at once (another
			 * run, filters holding posts) spent the hour since.
			 * This row and the next posts' go in the digest */
			n->digest = 1;
			nsent = (long)l.notify_max_per_hour;
			continue;
		}
		n->tries = -1;
	}
	/* one digest per moderator: the first row still waiting for one
	 * (not a row dropped above, which says nothing of the others)
	 * sends that moderator's, and is remembered */
	if (pd.n > 0 && (first = xcalloc(pd.n, 1)) == NULL) {
		snprintf(err, errsz, "out of memory");
		goto out;
	}
	for (i = 0; i < pd.n && !stuck && stop_sig == 0; i++) {
		if (!pd.rows[i].digest || pd.rows[i].tries < 0)
			continue;
		for (j = 0; j < i; j++)
			if (first[j] && strcmp(pd.rows[j].moderator,
			    pd.rows[i].moderator) == 0)
				break;
		if (j < i)
			continue;	/* that moderator's digest went already */
		first[i] = 1;
		if (send_digest(q, &l, key, &pd, pd.rows[i].moderator, st,
		    &stuck, err, errsz) < 0)
			goto out;
	}
	for (i = 0; i < pd.n; i++)
		if (pd.rows[i].tries >= 0)
			st->waiting++;
	rc = 0;
out:
	xfree(first);
	if (have_row)
		queue_row_free(&r);
	if (key != NULL) {
		memset(key, 0, sizeof(*key));
		xfree(key);
	}
	pend_free(&pd);
	listcfg_free_list(&l);
	return rc;
}

int
notify_pending(struct queue *q, const struct listcfg_global *g,
    const char *list, struct notify_stats *st, char *err, size_t errsz)
{
	char (*names)[LG_MAX_LIST_NAME + 1];
	char lerr[1024], last[LG_MAX_LIST_NAME + 1] = "";
	size_t n, i;
	int rc = 0;

	memset(st, 0, sizeof(*st));
	if (list != NULL)
		return pending_list(q, g, list, st, err, errsz);
	if ((names = xcalloc(NOTIFY_LISTS_PAGE, sizeof(*names))) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	err[0] = '\0';
	/* a page of names at a time, each page after the last one's end:
	 * lists whose notices stay pending (an error each) must not keep
	 * the ones after them in the alphabet from ever being served */
	do {
		if (moddb_pending_lists(q, last[0] ? last : NULL, names,
		    NOTIFY_LISTS_PAGE, &n, lerr, sizeof(lerr)) < 0) {
			snprintf(err, errsz, "%s", lerr);
			rc = -1;
			break;
		}
		for (i = 0; i < n && stop_sig == 0; i++)
			if (pending_list(q, g, names[i], st, lerr,
			    sizeof(lerr)) < 0) {
				/* the first failure is reported; the others
				 * go on */
				if (rc == 0)
					snprintf(err, errsz, "%s", lerr);
				rc = -1;
			}
		if (n > 0)
			snprintf(last, sizeof(last), "%s", names[n - 1]);
	} while (n == NOTIFY_LISTS_PAGE && stop_sig == 0);
	xfree(names);
	return rc;
}

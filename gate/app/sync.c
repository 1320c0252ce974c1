/*
 * sync.c - apply the training journal to a list's token file:
 * decompressed posts from db/journal, tokenized with the list's
 * settings, learnt into db/tokdb in batches
 *
 * See sync.h for the contract.  Trusts the configuration; list names
 * come checked (listcfg).  Posts are hostile and reach only the bounded
 * tokenizer.  Failures return -1 with a message; nothing here prints.
 */
#include "config.h"

#include <sys/stat.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db/journal.h"
#include "db/passcount.h"
#include "db/queue.h"
#include "db/tokdb.h"
#include "gate/app/posttok.h"
#include "gate/app/settings.h"
#include "gate/app/sync.h"
#include "gate/tok.h"
#include "gate/toklist.h"
#include "gate/util/clock.h"
#include "gate/util/fs.h"
#include "gate/util/lglimits.h"
#include "gate/util/sanitize.h"
#include "gate/util/suggest.h"
#include "gate/util/xalloc.h"
#include "listcfg/listcfg.h"

/* a writer of a token file waits for filter processes at least this
 * long */
#define MIN_WRITER_WAIT	10000u
/* events fetched per token-file transaction, and the longest one may
 * hold the file's lock */
#define APPLY_BATCH	1024
#define APPLY_SECONDS	0.25
/* pause between batches, longer than a waiting reader's lock poll, so
 * filters waiting for the file get in */
#define APPLY_PAUSE_MS	(2 * TOKDB_POLL_MAX_MS + 2)
/* journal events given feed numbers per transaction of the site feed */
#define FEED_BATCH	10000
/* events applied in a transaction first; when there are that many, the
 * rest go through a private copy in bulk mode (see tokdb.h) */
#define SYNC_TRAN_EVENTS	16

unsigned
sync_writer_wait(const struct listcfg_global *g)
{
	return g->lock_wait_ms > MIN_WRITER_WAIT ? g->lock_wait_ms :
	    MIN_WRITER_WAIT;
}

int
sync_tokens_dir(const struct listcfg_global *g, char *err, size_t errsz)
{
	struct stat st;
	int fd;

	if (fs_mkdir_p(g->tokens_dir, SYNC_TOKENS_DIR_MODE) < 0) {
		snprintf(err, errsz, "cannot create the tokens directory %s: %s",
		    g->tokens_dir, strerror(errno));
		return -1;
	}
	/* one made 0755 by an earlier version: take away what others could
	 * see (a failure, not being its owner, changes nothing); never a
	 * directory others share (sticky, or not ours: /tmp by mistake),
	 * which the token files refuse instead (tokdb).  Through a
	 * descriptor of the directory, not its name: whoever may write the
	 * directory above could put a link in its place between the look
	 * and the change, and have root chmod the file it names */
	if ((fd = open(g->tokens_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) >= 0) {
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) &&
		    !(st.st_mode & S_ISVTX) && st.st_uid == geteuid() &&
		    (st.st_mode & 0777 & ~(mode_t)SYNC_TOKENS_DIR_MODE) != 0)
			(void)fchmod(fd, st.st_mode & 07777 &
			    ~(0777 & ~(mode_t)SYNC_TOKENS_DIR_MODE));
		close(fd);
	}
	return tokdb_dir_check(g->tokens_dir, err, errsz);
}

/* where a token file's events come from: list's journal, or the site
 * store's feed (list is then the site list's name, for messages) */
struct src {
	const char *list;
	int site;
	/* a list's event that this connection committed and read the
	 * mark of (sync_list_at), or 0 */
	int64_t own_pos, own_mark;
	/* the primary's conninfo when the journal is read from elsewhere
	 * (sync_database: a standby, read-only), for marking quarantined
	 * events there; NULL: on the connection that reads */
	const char *primary;
};

/* whether a token file at pos with mark is at sr's own event: a list's
 * event that this connection committed, whose mark it read in that
 * commit.  Then what other_kind(), diverged() and ahead() ask the
 * database is known: it is a journal event's id, so no feed number (the
 * two come from one sequence); it is the event the file recorded; and
 * the journal reaches it */
static int
at_own(const struct src *sr, int64_t pos, int64_t mark)
{
	return !sr->site && sr->own_pos > 0 && pos == sr->own_pos &&
	    mark == sr->own_mark;
}

/* 1 (with err) when the token file claims events the journal does not
 * have: a token file from another or a restored database, or read from
 * a standby that has not replayed them yet */
static int
ahead(struct queue *q, const struct src *sr, int64_t pos, char *err,
    size_t errsz)
{
	const char *list = sr->list;
	char what[128], e[256];
	int64_t last;
	int standby;

	if ((sr->site ? journal_site_last(q, &last, e, sizeof(e)) :
	    journal_last_id(q, list, &last, e, sizeof(e))) < 0 || last >= pos)
		return 0;
	if (sr->site)
		snprintf(what, sizeof(what), "the site feed");
	else
		snprintf(what, sizeof(what), "the journal of list %s", list);
	if (queue_in_recovery(q, &standby, e, sizeof(e)) == 0 && standby) {
		snprintf(err, errsz, "the token file is at journal position "
		    "%lld but %s on this standby ends at %lld: the standby is "
		    "behind (nothing applied; sync again once it has caught "
		    "up), or it serves another database than the token file "
		    "was built from (then run `%s rebuild --list %s`)",
		    (long long)pos, what, (long long)last, suggest_cmd(), list);
		return 1;
	}
	snprintf(err, errsz, "the token file is at journal position %lld but "
	    "%s ends at %lld: it was built from another (or a restored) "
	    "database; run `%s rebuild --list %s`", (long long)pos,
	    what, (long long)last, suggest_cmd(), list);
	return 1;
}

/*
 * What the site store's token file records beside its position (a feed
 * number): the mark of the event fed there, mixed with that event's
 * journal id, and bit 62 set.  The mark alone does not tell one event
 * from another of the same batch (they share the batch's time): after
 * a failover that lost the feed's last transaction, the new primary
 * hands the feed numbers out again, and the one at the file's position
 * may name another event of that batch, with the same mark, so that a
 * sync went on from it and learnt the events after it twice.  A mark
 * (microseconds since 1970) stays far below bit 62, so a file that
 * recorded the mark alone (before this) is told apart, and taken as
 * before.  Never 0.
 */
#define SITE_MARK_BIT	((uint64_t)1 << 62)

static int64_t
site_mark(int64_t mark, int64_t jid)
{
	/* splitmix64's finalizer over both */
	uint64_t h = (uint64_t)mark ^ (uint64_t)jid * 0x9e3779b97f4a7c15ULL;

	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return (int64_t)((h & (SITE_MARK_BIT - 1)) | SITE_MARK_BIT);
}

/* whether a token file's recorded mark fmark (of a file of source sr)
 * names the event with mark and journal id jid (mark 0: none) */
static int
same_event(const struct src *sr, int64_t fmark, int64_t mark, int64_t jid)
{
	if (mark == 0)
		return 0;
	if (sr->site && ((uint64_t)fmark & SITE_MARK_BIT))
		return fmark == site_mark(mark, jid);
	return fmark == mark;
}

/* a mark (journal.h) as UTC time, to the microsecond */
static void
mark_time(int64_t mark, char *buf, size_t bufsz)
{
	time_t t = (time_t)(mark / 1000000);
	struct tm tm;

	if (mark <= 0 || gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, bufsz, "%Y-%m-%d %H:%M:%S", &tm) == 0)
		snprintf(buf, bufsz, "mark %lld", (long long)mark);
	else
		snprintf(buf + strlen(buf), bufsz - strlen(buf), ".%06d UTC",
		    (int)(mark % 1000000));
}

/*
 * 1 (with err) when the event at the token file's position pos is not
 * the one whose mark (fmark) the file recorded: the database's ids came
 * round again (a failover to a standby that lost the last commits, a
 * backup restored and written since), so the file holds events this
 * journal does not have, and going on from pos would skip events it
 * does; 1 too when the event is the file's own but another list's (a
 * copy of that list's file: this list's events before it would never
 * be learnt, and no rebuild or other host would have that list's).
 * 0 when it is the same event of this list,
 * when the file recorded no mark (a file from before listgate recorded
 * them), or when the event is missing but the journal does not reach
 * pos (ahead() reports that).  A standby whose journal reaches past a
 * missing event may not have replayed its commit yet (another list's,
 * in a file copied from that list), or serve a database that lost it
 * (a standby of the new primary after a failover): 1 saying both, for
 * going on would hide the second for good.  When it cannot be told (a
 * query failed: a lock_timeout behind an administrator's VACUUM FULL,
 * a statement cancelled on a standby), 1 too, saying so: going on would
 * apply past pos, record the next event's mark, and hide a divergence
 * for good, where a refusal only waits for the next sync.
 */
static int
diverged(struct queue *q, const struct src *sr, int64_t pos, int64_t fmark,
    char *err, size_t errsz)
{
	char e[256], was[96], now[320], evlist[128];	/* a list name: <= 64 */
	int64_t mark, last, jid;
	int standby = 0;

	if (pos <= 0)
		return 0;
	if (journal_event_mark(q, sr->site, pos, &mark, evlist,
	    sizeof(evlist), &jid, e, sizeof(e)) < 0) {
		if (fmark == 0)
			return 0;
		goto unknown;
	}
	/* the event the file was built up to, but another list's: the file
	 * is a copy of that list's, and what this list's journal has after
	 * it would be learnt on top of the other list's mail */
	if (!sr->site && mark != 0 && (fmark == 0 || mark == fmark) &&
	    strcmp(evlist, sr->list) != 0) {
		snprintf(err, errsz, "the token file of list %s was built from "
		    "the journal of list %s (its position %lld is an event of "
		    "%s): it is a copy of that list's token file; nothing "
		    "applied: run `%s rebuild --list %s`", sr->list,
		    evlist, (long long)pos, evlist, suggest_cmd(), sr->list);
		return 1;
	}
	if (fmark == 0 || same_event(sr, fmark, mark, jid))
		return 0;
	if (mark == 0) {
		if ((sr->site ? journal_site_last(q, &last, e, sizeof(e)) :
		    journal_last_id(q, sr->list, &last, e, sizeof(e))) < 0)
			goto unknown;
		if (last < pos)
			return 0;
		if (queue_in_recovery(q, &standby, e, sizeof(e)) < 0)
			goto unknown;
	}
	/* what the file says of its event: a site store's mark keeps the
	 * time mixed with the event's id (site_mark) */
	if ((uint64_t)fmark & SITE_MARK_BIT)
		snprintf(was, sizeof(was), "the event the site store was "
		    "built up to");
	else {
		char t[64];

		mark_time(fmark, t, sizeof(t));
		snprintf(was, sizeof(was), "an event written at %s", t);
	}
	if (mark == 0 && standby) {
		snprintf(err, errsz, "the token file's journal position %lld "
		    "is %s, which %s on this standby "
		    "does not have although it goes on to %lld: the standby "
		    "has not replayed it yet (nothing applied; sync again "
		    "once it has caught up), or the database lost it (a "
		    "failover to a standby that lost the last commits, or a "
		    "restored backup: then run `%s rebuild --list %s`)",
		    (long long)pos, was, sr->site ? "the site feed" :
		    "the journal", (long long)last, suggest_cmd(), sr->list);
		return 1;
	}
	if (mark == 0)
		snprintf(now, sizeof(now), "%s has no such event",
		    sr->site ? "the site feed" : "the journal");
	else {
		mark_time(mark, e, sizeof(e));
		snprintf(now, sizeof(now), "%s written at %s", sr->site ?
		    "the site feed's is another event," :
		    "the journal's is one", e);
	}
	snprintf(err, errsz, "the token file's journal position %lld is %s, "
	    "but %s: the file was built from events this database does not "
	    "have (a failover to a standby that lost the last commits, or a "
	    "restored backup), and would skip some it has or learn some "
	    "twice; nothing applied: run `%s rebuild --list %s`",
	    (long long)pos, was, now, suggest_cmd(), sr->list);
	return 1;
unknown:
	snprintf(err, errsz, "cannot check that the token file's journal "
	    "position %lld is still the event it was built from (%s); "
	    "nothing applied: sync again", (long long)pos, e);
	return 1;
}

/*
 * 1 (with err) when the token file's position belongs to the other kind
 * of source: a list's file whose position is a feed number (it was the
 * site store), or the site store's file whose position is no feed
 * number (it was built from its own journal before site_list named it).
 * Feed numbers come from the journal's id sequence, so the two never
 * meet.  0 when it fits (or the check could not be made: applying then
 * fails on its own if the database is gone), and when the file recorded
 * the mark of its position's event (fmark) and the other kind's event
 * there is not that one: the database's ids came round again (a
 * failover, a restored backup), handing the number out as the other
 * kind, which diverged() and ahead() report, not this.
 */
static int
other_kind(struct queue *q, const struct src *sr, int64_t pos,
    int64_t fmark, char *err, size_t errsz)
{
	struct src other = *sr;
	int64_t last, mark, jid;
	int is, ev;
	char e[256];

	if (pos <= 0 || journal_site_is_feed(q, pos, &is, e, sizeof(e)) < 0 ||
	    is == sr->site)
		return 0;
	other.site = !sr->site;
	if (fmark != 0 && journal_event_mark(q, other.site, pos, &mark, NULL,
	    0, &jid, e, sizeof(e)) == 0 && !same_event(&other, fmark, mark,
	    jid))
		return 0;
	/* a site store's position past the end of this database's feed
	 * that is no journal event's id either was built from more of the
	 * feed than this database has (a standby behind, another or a
	 * restored database): ahead() says which, not this */
	if (sr->site && journal_site_last(q, &last, e, sizeof(e)) == 0 &&
	    pos > last && journal_is_event(q, pos, &ev, e, sizeof(e)) == 0 &&
	    !ev)
		return 0;
	if (sr->site)
		snprintf(err, errsz, "the token file of list %s (the site "
		    "store) was built from its own journal, not from the "
		    "site feed (position %lld): run `%s rebuild --list "
		    "%s` to build it from every list's events", sr->list,
		    (long long)pos, suggest_cmd(), sr->list);
	else
		snprintf(err, errsz, "the token file of list %s was built from "
		    "the site feed (position %lld: it was the site store): "
		    "run `%s rebuild --list %s`", sr->list,
		    (long long)pos, suggest_cmd(), sr->list);
	return 1;
}

/* damaged events one batch quarantines at most (it ends early when
 * more come: the next batch goes on) */
#define MAX_PENDING	32

/* a damaged event met in this batch, to be marked once the fetch ends */
struct pending {
	int64_t id;
	char why[256];
};

/* note a skipped event in st's report (the first SYNC_MAX_REPORTED) */
static void
report_skipped(struct sync_stats *st, const struct journal_event *ev)
{
	struct sync_skipped *sk;

	if (st->nreported >= SYNC_MAX_REPORTED)
		return;
	sk = &st->skipped[st->nreported++];
	sk->id = ev->event_id;
	sk->earlier = ev->state == JOURNAL_QUARANTINED;
	snprintf(sk->why, sizeof(sk->why), "%s", ev->why[0] ? ev->why :
	    "no reason recorded");
	sk->mark_err[0] = 0;
}

/* mark the damaged events of a batch in the journal: through the
 * connection that read them, or else (a standby, read-only) through
 * the primary, opened for it; a failure is reported with the event
 * (the position still passes it) */
static void
quarantine_pending(struct queue *q, const struct src *sr,
    const struct pending *pend, unsigned npend, struct sync_stats *st,
    unsigned first_report)
{
	struct queue *pq = NULL;
	char e[256], pe[200];
	unsigned i, k;
	int tried = 0;

	for (i = 0; i < npend; i++) {
		if (journal_quarantine(q, sr->list, pend[i].id, pend[i].why, e,
		    sizeof(e)) == 0)
			continue;
		if (sr->primary != NULL && !tried) {
			tried = 1;
			if (queue_open(sr->primary, &pq, pe, sizeof(pe)) < 0) {
				snprintf(e, sizeof(e), "not through the "
				    "primary (database) either: %s", pe);
				pq = NULL;
			}
		}
		if (pq != NULL && journal_quarantine(pq, sr->list, pend[i].id,
		    pend[i].why, e, sizeof(e)) == 0)
			continue;
		for (k = first_report; k < st->nreported; k++)
			if (st->skipped[k].id == pend[i].id)
				snprintf(st->skipped[k].mark_err,
				    sizeof(st->skipped[k].mark_err), "%s", e);
	}
	queue_close(pq);
}

/*
 * The evidence of the next events, gathered ahead while the token file
 * is free (a list whose evidence asks anyone: posttok_asks).  A slow
 * member_check or DNS server must not keep the file locked, or the
 * list's filters give up waiting for it (lock_wait_ms) and defer their
 * posts.  So a batch reads the file's position, lets go of the file,
 * fetches the events after that position and asks about each post,
 * keeping only the tokens the evidence adds; then it takes the file
 * again and applies them only if the file still stands where it stood
 * (its position, that event's mark, its word pairs): each post is
 * tokenized again there (what tokenizing costs, the lock held as
 * before) and given its gathered tokens, so it learns what posttok_post
 * gave then.  An event not gathered ahead waits for the next batch.
 */
struct prep_item {
	int64_t id, mark;	/* the event's position and mark (as the
				 * file records them) */
	unsigned char *toks;	/* the evidence's tokens: a length byte
				 * and the bytes, each; NULL: none */
	size_t len;
	int asked;		/* its post was read and asked about */
};

struct prep {
	int on;			/* gathered ahead (else: as they are learnt) */
	int64_t from, from_mark;	/* the position the items follow */
	int pairs;		/* tokenized with word pairs so */
	struct prep_item *it;
	size_t n, cap;
	size_t next;		/* the first not learnt (prep_at) */
	int after;		/* 1: this run committed up to the last item */
};

static void
prep_clear(struct prep *pr)
{
	size_t i;

	for (i = 0; i < pr->n; i++)
		xfree(pr->it[i].toks);
	pr->n = 0;
	pr->next = 0;
	pr->after = 0;
}

static void
prep_free(struct prep *pr)
{
	prep_clear(pr);
	xfree(pr->it);
	pr->it = NULL;
	pr->cap = 0;
}

/* the position before item k (k == n: after the last) */
static void
prep_pos(const struct prep *pr, size_t k, int64_t *pos_r, int64_t *mark_r)
{
	*pos_r = k == 0 ? pr->from : pr->it[k - 1].id;
	*mark_r = k == 0 ? pr->from_mark : pr->it[k - 1].mark;
}

/* whether a file at pos with mark, learning with word pairs so, can
 * take gathered items: 1 (pr->next the first of them), 0 when none is
 * gathered for it (nothing gathered, all learnt, or the file stands
 * elsewhere: moved on by another writer past them, or replaced) */
static int
prep_at(struct prep *pr, int64_t pos, int64_t mark, int pairs)
{
	int64_t p, m;
	size_t k;

	if (pr->pairs != pairs)
		return 0;
	for (k = 0; k < pr->n; k++) {
		prep_pos(pr, k, &p, &m);
		if (p == pos && m == mark) {
			pr->next = k;
			return 1;
		}
	}
	return 0;
}

/* keep the tokens tl has from index n0 on (the evidence's) in it: 0,
 * or -1 when out of memory */
static int
prep_keep(struct prep_item *it, const struct toklist *tl, size_t n0)
{
	size_t i, n = toklist_count(tl), len, sz = 0;
	const char *t;

	it->toks = NULL;
	it->len = 0;
	for (i = n0; i < n; i++) {
		(void)toklist_get(tl, i, &len);
		sz += 1 + len;
	}
	if (sz == 0)
		return 0;
	if ((it->toks = xmalloc(sz)) == NULL)
		return -1;
	for (i = n0; i < n; i++) {
		t = toklist_get(tl, i, &len);
		it->toks[it->len++] = (unsigned char)len;	/* <= 255 */
		memcpy(it->toks + it->len, t, len);
		it->len += len;
	}
	return 0;
}

/*
 * Gather (with the token file free) the evidence of the events after
 * position pos (with mark), at most limit of them as apply_batch would
 * fetch them, each post tokenized as pt says (the file's word pairs)
 * and asked about.  0, or -1 with err (a database or memory failure).
 */
static int
prep_gather(struct prep *pr, struct queue *q, const struct src *sr,
    int64_t pos, int64_t mark, long limit, struct posttok *pt,
    struct toklist *tl, char *err, size_t errsz)
{
	struct journal_fetch *f = NULL;
	struct journal_event ev;
	struct prep_item *it;
	size_t n0;
	int r;

	prep_clear(pr);
	pr->from = pos;
	pr->from_mark = mark;
	pr->pairs = pt->to.bigrams;
	if ((sr->site ? journal_site_fetch_open(q, sr->list, pos, limit,
	    pt->to.lim.max_scan, &f, err, errsz) : journal_fetch_open(q,
	    sr->list, pos, limit, pt->to.lim.max_scan, &f, err, errsz)) < 0)
		return -1;
	while ((r = journal_fetch_next(f, &ev, err, errsz)) > 0) {
		if (pr->n == pr->cap) {
			size_t cap = pr->cap == 0 ? 16 : 2 * pr->cap;

			if ((it = xrealloc(pr->it, cap * sizeof(*it))) ==
			    NULL)
				goto oom;
			pr->it = it;
			pr->cap = cap;
		}
		it = &pr->it[pr->n];
		it->id = ev.id;
		it->mark = sr->site ? site_mark(ev.mark, ev.event_id) :
		    ev.mark;
		it->toks = NULL;
		it->len = 0;
		it->asked = ev.state == JOURNAL_APPLY;
		if (ev.state == JOURNAL_APPLY) {
			/* what posttok_post does, the words' count noted */
			if (tok_post(ev.raw, ev.len, &pt->to, tl) < 0)
				goto oom;
			n0 = toklist_count(tl);
			if (posttok_evidence(pt, ev.raw, ev.len, NULL, tl,
			    NULL, 0) < 0 || prep_keep(it, tl, n0) < 0)
				goto oom;
		}
		pr->n++;
	}
	journal_fetch_close(f);
	if (r < 0) {
		prep_clear(pr);
		return -1;
	}
	return 0;
oom:
	journal_fetch_close(f);
	prep_clear(pr);
	snprintf(err, errsz, "out of memory while tokenizing");
	return -1;
}

/* a post's tokens under the file's lock: its words, then the evidence
 * gathered ahead for it (it) or now (it NULL): 0, or -1 */
static int
learn_tokens(const struct posttok *pt, const struct journal_event *ev,
    const struct prep_item *it, struct toklist *tl)
{
	size_t i, len;

	if (it == NULL)
		return posttok_post(pt, ev->raw, ev->len, NULL, tl, NULL, 0);
	if (tok_post(ev->raw, ev->len, &pt->to, tl) < 0)
		return -1;
	for (i = 0; i < it->len; i += 1 + len) {
		len = it->toks[i];
		if (toklist_add_over(tl, it->toks + i + 1, len) < 0)
			return -1;
	}
	return 0;
}

/*
 * One batch: open the token file for writing, read its position, fetch
 * the next events after it (at most limit) and apply them with the new
 * position in one transaction.  In bulk mode (tokdb's TOKDB_BULK: a
 * private copy without transactions, published at the end) every event
 * there is goes into one batch, fetched limit at a time, unless the
 * evidence is gathered ahead (pr->on: then one fetch, each batch, the
 * file let go of in between).  A damaged event is skipped and marked in
 * the journal (after the fetch, before the commit).  Returns the number
 * of events passed (applied or skipped; 0: up to date), or -1 with err.
 */
static long
apply_batch(struct queue *q, const struct src *sr, const char *path,
    int create, int bulk, long limit, unsigned wait_ms,
    struct posttok *pt, struct toklist *tl, struct prep *pr,
    struct sync_stats *st, char *err, size_t errsz)
{
	struct journal_fetch *f = NULL;
	struct journal_event ev;
	struct pending pend[MAX_PENDING];
	struct tokdb *db = NULL;
	const struct prep_item *it;
	int64_t pos, mark;
	long n = -1, rows = 0, applied = 0, skipped = 0, got;
	unsigned npend = 0, report0 = st->nreported;
	int r, intx = 0, missed;
	double start;

	/* where this run's last batch left the file, its evidence all
	 * learnt: the next events' gathered before the file is taken */
	if (pr->on && pr->after) {
		prep_pos(pr, pr->n, &pos, &mark);
		if (prep_gather(pr, q, sr, pos, mark, limit, pt, tl, err,
		    errsz) < 0)
			return -1;
		if (pr->n == 0)
			return 0;	/* up to date */
	}
again:
	if (tokdb_open(path, TOKDB_WRITE | (create ? TOKDB_CREATE : 0) |
	    (bulk ? TOKDB_BULK : 0), wait_ms, &db, err, errsz) != 0) {
		db = NULL;
		goto out;
	}
	start = clock_now_s();
	if (tokdb_get_pos_mark(db, &pos, &mark) < 0) {
		snprintf(err, errsz, "%s", tokdb_errmsg(db));
		goto out;
	}
	st->pos = pos;
	if (st->nbatches == 0 && !at_own(sr, pos, mark) &&
	    (other_kind(q, sr, pos, mark, err, errsz) ||
	    diverged(q, sr, pos, mark, err, errsz)))
		goto out;
	/* learnt as the file was built (a new one: as the list says) */
	if ((r = posttok_follow_file(pt, db)) < 0) {
		snprintf(err, errsz, "%s", tokdb_errmsg(db));
		goto out;
	}
	st->pairs_differ = r;
	st->pairs_file = pt->to.bigrams;
	if (pr->on && !prep_at(pr, pos, mark, pt->to.bigrams)) {
		/* nothing gathered for where the file stands: let go of it
		 * while the evidence is gathered, then take it again */
		tokdb_close(db);
		db = NULL;
		if (prep_gather(pr, q, sr, pos, mark, limit, pt, tl, err,
		    errsz) < 0)
			goto out;
		if (pr->n > 0)
			goto again;
		/* nothing to learn */
		n = 0;
		if (pos > 0 && st->nbatches == 0 && !at_own(sr, pos, mark) &&
		    ahead(q, sr, pos, err, errsz))
			n = -1;
		goto out;
	}
	missed = 0;
	do {
		if ((sr->site ? journal_site_fetch_open(q, sr->list, pos,
		    limit, pt->to.lim.max_scan, &f, err, errsz) :
		    journal_fetch_open(q, sr->list, pos, limit,
		    pt->to.lim.max_scan, &f, err, errsz)) < 0)
			goto out;
		got = 0;
		while ((r = journal_fetch_next(f, &ev, err, errsz)) > 0) {
			it = NULL;
			if (pr->on) {
				/* only what was gathered ahead: the rest
				 * waits for the next batch */
				if (pr->next >= pr->n ||
				    pr->it[pr->next].id != ev.id ||
				    (ev.state == JOURNAL_APPLY &&
				    !pr->it[pr->next].asked)) {
					missed = 1;
					break;
				}
				it = &pr->it[pr->next];
			}
			if (!intx) {
				if (tokdb_begin(db) < 0) {
					snprintf(err, errsz, "%s",
					    tokdb_errmsg(db));
					goto out;
				}
				intx = 1;
			}
			if (ev.state != JOURNAL_APPLY) {
				/* never blocks the events after it; the
				 * site store leaves the marking to the
				 * list's own sync (it reads the same row),
				 * but for the site list's own events, which
				 * no other sync reads */
				if (ev.state == JOURNAL_DAMAGED && ev.own) {
					pend[npend].id = ev.event_id;
					snprintf(pend[npend].why,
					    sizeof(pend[npend].why), "%s",
					    ev.why);
					npend++;
				}
				report_skipped(st, &ev);
				if (sr->site && ev.state == JOURNAL_DAMAGED &&
				    !ev.own && st->nreported > report0 &&
				    st->skipped[st->nreported - 1].id ==
				    ev.event_id)
					snprintf(st->skipped[st->nreported -
					    1].mark_err, sizeof(st->skipped[0].
					    mark_err), "the site store leaves "
					    "that to the list's own sync");
				skipped++;
			} else {
				if (learn_tokens(pt, &ev, it, tl) < 0) {
					snprintf(err, errsz, "out of memory "
					    "while tokenizing");
					goto out;
				}
				if (tokdb_learn(db, tl, ev.spam, ev.dir,
				    ev.day > 0 ? ev.day : tokdb_today()) < 0) {
					snprintf(err, errsz, "%s",
					    tokdb_errmsg(db));
					goto out;
				}
				applied++;
			}
			/* a moderator's decision, for the filter's retries:
			 * the last event on a post says where it stands (a
			 * forced change unlearns, then learns the new
			 * class) */
			if (ev.has_sha && tokdb_set_decided(db, ev.sha,
			    ev.dir < 0 ? TOKDB_UNDECIDED : ev.spam ?
			    TOKDB_REFUSED : TOKDB_RELEASED, ev.day > 0 ?
			    ev.day : tokdb_today()) < 0) {
				snprintf(err, errsz, "%s", tokdb_errmsg(db));
				goto out;
			}
			pos = ev.id;
			mark = sr->site ? site_mark(ev.mark, ev.event_id) :
			    ev.mark;
			if (pr->on)
				pr->next++;
			rows++;
			got++;
			/* the rest waits for the next batch: readers get in
			 * (and at most MAX_PENDING damaged events wait to be
			 * marked) */
			if ((!bulk && clock_now_s() - start >= APPLY_SECONDS)
			    || npend == MAX_PENDING)
				break;
		}
		if (r < 0)
			goto out;
		journal_fetch_close(f);
		f = NULL;
	} while (bulk && !pr->on && got == limit && npend < MAX_PENDING);
	if (rows == 0 && missed) {
		/* an event came before the first gathered one (committed
		 * meanwhile with a lower id), or one to learn was not read
		 * then (quarantined, and let go of since): gather again
		 * from here */
		if (intx)
			tokdb_abort(db);
		intx = 0;
		tokdb_close(db);
		db = NULL;
		prep_clear(pr);
		goto again;
	}
	if (rows == 0) {
		n = 0;
		if (pos > 0 && st->nbatches == 0 && !at_own(sr, pos, mark) &&
		    ahead(q, sr, pos, err, errsz))
			n = -1;
		else if (bulk && access(path, F_OK) < 0 && errno == ENOENT) {
			/* a new file with nothing to learn yet (a list
			 * without events, a site store whose feed has not
			 * reached the standby): it exists all the same, at
			 * position 0, as a file made by transactions would */
			r = tokdb_publish(db, err, errsz);
			db = NULL;
			if (r < 0)
				n = -1;
		}
		goto out;
	}
	/* marked before the position passes them: a crash in between
	 * only marks them twice (the second mark is a no-op) */
	quarantine_pending(q, sr, pend, npend, st, report0);
	if (tokdb_set_pos_mark(db, pos, mark) < 0 || tokdb_commit(db) < 0) {
		snprintf(err, errsz, "%s", tokdb_errmsg(db));
		goto out;
	}
	intx = 0;
	if (bulk) {
		r = tokdb_publish(db, err, errsz);
		db = NULL;
		if (r < 0)
			goto out;
	}
	st->pos = pos;
	st->nevents += (unsigned long)applied;
	st->nquarantined += (unsigned long)skipped;
	st->nbatches++;
	/* the next batch gathers ahead from here when every gathered
	 * event is learnt */
	if (pr->on)
		pr->after = pr->next == pr->n;
	n = rows;
out:
	if (n < 0)
		st->nreported = report0;	/* nothing of it happened */
	journal_fetch_close(f);
	if (intx)
		tokdb_abort(db);
	tokdb_close(db);
	return n;
}

int
sync_ahead(struct queue *q, const char *list, int site, int64_t pos,
    char *err, size_t errsz)
{
	struct src sr = { list, site, 0, 0, NULL };

	return ahead(q, &sr, pos, err, errsz);
}

int
sync_diverged(struct queue *q, const char *list, int site, int64_t pos,
    int64_t mark, char *err, size_t errsz)
{
	struct src sr = { list, site, 0, 0, NULL };

	return diverged(q, &sr, pos, mark, err, errsz);
}

int
sync_other_kind(struct queue *q, const char *list, int site, int64_t pos,
    int64_t mark, char *err, size_t errsz)
{
	struct src sr = { list, site, 0, 0, NULL };

	return other_kind(q, &sr, pos, mark, err, errsz);
}

int
sync_not_replica(struct queue *pq, struct queue *sq, char *err,
    size_t errsz)
{
	uint64_t psys, ssys;
	uint32_t pdb, sdb;
	int64_t plast, slast, pmark, smark, pjid, sjid;
	char e[256];
	int ids;

	ids = queue_identity(pq, &psys, &pdb, e, sizeof(e)) == 0 &&
	    queue_identity(sq, &ssys, &sdb, e, sizeof(e)) == 0;
	if (ids && psys == ssys && pdb == sdb)
		return 0;	/* one database: the primary or a standby */
	if (ids && psys == ssys) {
		snprintf(err, errsz, "it is another database of the "
		    "primary's cluster (oid %lu, the primary's %lu)",
		    (unsigned long)sdb, (unsigned long)pdb);
		return 1;
	}
	/* another cluster (or it cannot be told): a logical replica still
	 * has the primary's feed, each number the same event */
	if (journal_site_last(sq, &slast, e, sizeof(e)) < 0 ||
	    journal_site_last(pq, &plast, e, sizeof(e)) < 0)
		return 0;
	if (slast == 0) {
		if (!ids || plast == 0)
			return 0;
		snprintf(err, errsz, "it is a database of another cluster "
		    "(system identifier %llu, the primary's %llu) whose site "
		    "feed is empty while the primary's goes on to %lld",
		    (unsigned long long)ssys, (unsigned long long)psys,
		    (long long)plast);
		return 1;
	}
	if (journal_event_mark(sq, 1, slast, &smark, NULL, 0, &sjid, e,
	    sizeof(e)) < 0 || journal_event_mark(pq, 1, slast, &pmark, NULL,
	    0, &pjid, e, sizeof(e)) < 0)
		return 0;
	if (smark == pmark && sjid == pjid)
		return 0;
	if (ids)
		snprintf(err, errsz, "it is a database of another cluster "
		    "(system identifier %llu, the primary's %llu) whose site "
		    "feed number %lld is %s", (unsigned long long)ssys,
		    (unsigned long long)psys, (long long)slast, pmark == 0 ?
		    "not on the primary" : "another event on the primary");
	else
		snprintf(err, errsz, "its site feed number %lld is %s",
		    (long long)slast, pmark == 0 ? "not on the primary" :
		    "another event on the primary");
	return 1;
}

int
sync_standby_behind(struct queue *pq, struct queue *sq, const char *list,
    int site, int64_t pos, int64_t mark, int64_t *slast_r,
    int64_t *plast_r, char *err, size_t errsz)
{
	struct src sr = { list, site, 0, 0, NULL };
	char evlist[128];	/* a list name: <= 64 */
	int64_t pmark, jid;

	*slast_r = *plast_r = 0;
	if ((site ? journal_site_last(sq, slast_r, err, errsz) :
	    journal_last_id(sq, list, slast_r, err, errsz)) < 0 ||
	    (site ? journal_site_last(pq, plast_r, err, errsz) :
	    journal_last_id(pq, list, plast_r, err, errsz)) < 0)
		return -1;
	/* a file that recorded no mark (from before 0.2.0) cannot be told
	 * from one of another database */
	if (pos <= *slast_r || mark == 0)
		return 0;
	if (journal_event_mark(pq, site, pos, &pmark, evlist, sizeof(evlist),
	    &jid, err, errsz) < 0)
		return -1;
	if (!same_event(&sr, mark, pmark, jid) ||
	    (!site && strcmp(evlist, list) != 0))
		return 0;
	snprintf(err, errsz, "the token file is at journal position %lld, "
	    "an event the primary (database) has but the standby "
	    "(sync_database) has not replayed yet: %s there ends at %lld, "
	    "so a rebuild from it now would take %s events out of the file "
	    "again", (long long)pos, site ? "the site feed" : "the journal",
	    (long long)*slast_r, site ? "the feed's newest" :
	    "the list's newest");
	return 1;
}

/* sync_apply from either source */
static int
apply_from(struct queue *q, const struct src *sr, const char *path,
    int create, unsigned wait_ms, struct posttok *pt,
    struct sync_stats *st, char *err, size_t errsz)
{
	struct toklist *tl;
	struct prep pr;
	long n;
	int bulk;

	memset(st, 0, sizeof(*st));
	memset(&pr, 0, sizeof(pr));
	if ((tl = toklist_new(pt->to.max_tokens)) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	/* a new file is private until it is complete: no transactions */
	bulk = create && access(path, F_OK) < 0 && errno == ENOENT;
	/* evidence that asks anyone is gathered while the file is free,
	 * but for a new private file, which no one else waits for */
	pr.on = !bulk && posttok_asks(pt);
	while ((n = apply_batch(q, sr, path, create, bulk, bulk ?
	    APPLY_BATCH : SYNC_TRAN_EVENTS, wait_ms, pt, tl, &pr, st, err,
	    errsz)) > 0) {
		char why[1024];

		/* between batches, while nothing of ours holds the file:
		 * rewrite it when it has outgrown its hash table */
		if (tokdb_compact(path, wait_ms, 0, why, sizeof(why)) < 0) {
			snprintf(err, errsz, "%lu event%s applied, but the "
			    "token file could not be compacted: %s",
			    st->nevents, st->nevents == 1 ? "" : "s", why);
			n = -1;
			break;
		}
		if (bulk)
			continue;	/* readers were never kept out */
		/* a full small batch: there may be many more, and a private
		 * copy without transactions takes them faster */
		if (n >= SYNC_TRAN_EVENTS)
			bulk = 1;
		clock_sleep_ms(APPLY_PAUSE_MS);
	}
	pt->to.bigrams = pt->list_bigrams;
	prep_free(&pr);
	toklist_free(tl);
	return n < 0 ? -1 : 0;
}

int
sync_apply(struct queue *q, const char *list, const char *path,
    int create, unsigned wait_ms, struct posttok *pt,
    struct sync_stats *st, char *err, size_t errsz)
{
	struct src sr = { list, 0, 0, 0, NULL };

	return apply_from(q, &sr, path, create, wait_ms, pt, st, err, errsz);
}

int
sync_apply_site(struct queue *q, const char *site_list, const char *path,
    int create, unsigned wait_ms, struct posttok *pt,
    struct sync_stats *st, char *err, size_t errsz)
{
	struct src sr = { site_list, 1, 0, 0, NULL };

	return apply_from(q, &sr, path, create, wait_ms, pt, st, err, errsz);
}

/* remove the temporary files of fresh builds of list whose process is
 * gone (killed mid-build): .LIST.rebuild-PID.kch, its .wal and the copy
 * it moved aside to grow (TOKDB_GROW_SUFFIX) */
static void
clean_stale(const struct listcfg_global *g, const char *list)
{
	char prefix[LG_MAX_LIST_NAME + 16], p[4200], *end;
	struct dirent *de;
	size_t pl;
	long pid;
	DIR *d;

	pl = (size_t)snprintf(prefix, sizeof(prefix), ".%s.rebuild-", list);
	if ((d = opendir(g->tokens_dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, prefix, pl) != 0)
			continue;
		errno = 0;
		pid = strtol(de->d_name + pl, &end, 10);
		if (errno || pid <= 0 || strncmp(end, ".kch", 4) != 0 ||
		    (end[4] != 0 && strcmp(end + 4, ".wal") != 0 &&
		    strcmp(end + 4, TOKDB_GROW_SUFFIX) != 0))
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;	/* still building (or not ours) */
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", g->tokens_dir,
		    de->d_name) < sizeof(p))
			unlink(p);
	}
	closedir(d);
}

const char *
sync_pairs_warning(const struct sync_stats *st, const char *list, char *buf,
    size_t bufsz)
{
	if (!st->pairs_differ)
		return NULL;
	snprintf(buf, bufsz, "list %s: its token file was built %s word pairs "
	    "and learns posts so, while the list says word_pairs = %s: "
	    "`%s rebuild --list %s` rebuilds it from the journal to "
	    "match", list, st->pairs_file ? "with" : "without",
	    st->pairs_file ? "no" : "yes", suggest_cmd(), list);
	return buf;
}

const char *
sync_skipped_warning(const struct sync_stats *st, unsigned i,
    const char *list, char *buf, size_t bufsz)
{
	const struct sync_skipped *sk;
	char why[300], mark[240];

	if (i == st->nreported) {
		if (st->nquarantined <= st->nreported)
			return NULL;
		snprintf(buf, bufsz, "list %s: %lu more quarantined journal "
		    "events skipped", list, st->nquarantined - st->nreported);
		return buf;
	}
	if (i > st->nreported)
		return NULL;
	sk = &st->skipped[i];
	/* (a reason recorded in the journal is text from the database) */
	sanitize_str(why, sizeof(why), sk->why, strlen(sk->why), 250,
	    SANITIZE_LOG, 0);
	if (sk->earlier)
		snprintf(buf, bufsz, "list %s: journal event %lld skipped: "
		    "quarantined before (%s)", list, (long long)sk->id, why);
	else if (sk->mark_err[0] != 0) {
		sanitize_str(mark, sizeof(mark), sk->mark_err,
		    strlen(sk->mark_err), 200, SANITIZE_LOG, 0);
		snprintf(buf, bufsz, "list %s: journal event %lld cannot be "
		    "applied (%s): skipped, but it could not be marked "
		    "quarantined (%s)", list, (long long)sk->id, why, mark);
	} else
		snprintf(buf, bufsz, "list %s: journal event %lld cannot be "
		    "applied (%s): quarantined and skipped", list,
		    (long long)sk->id, why);
	return buf;
}

int
sync_is_site(const struct listcfg_global *g, const struct listcfg_list *l)
{
	return g->site_list != NULL && strcmp(g->site_list, l->name) == 0;
}

/* the filter's pass counter of list, for the filter to add to (its user
 * may not create files in the tokens directory): best effort, stats
 * reads no passes without it */
static void
prepare_counter(const struct listcfg_global *g, const char *list)
{
	char path[4096], err[512];

	if (listcfg_passcount_path(g, list, path, sizeof(path)) == 0)
		(void)passcount_prepare(path, err, sizeof(err));
}

int
sync_site_feed(struct queue *q, unsigned long *nfed_r, char *err,
    size_t errsz)
{
	long n, nread;

	*nfed_r = 0;
	do {
		if (journal_site_feed(q, FEED_BATCH, &n, &nread, err,
		    errsz) < 0)
			return -1;
		*nfed_r += (unsigned long)n;
	} while (nread == FEED_BATCH);
	return 0;
}

/* where to mark quarantined events when the journal is read from
 * sync_database (a standby cannot take the mark): the primary's
 * conninfo, or NULL */
static const char *
mark_primary(const struct listcfg_global *g)
{
	return g->sync_conninfo != NULL && queue_configured(g->conninfo) ?
	    g->conninfo : NULL;
}

/* before syncing the site store: feed it, unless q is a standby (where
 * nothing can be written: the caller fed through the primary, or the
 * feed waits for the next sync there): 0, or -1 with err */
static int
feed_first(struct queue *q, const struct listcfg_list *l,
    struct sync_stats *st, char *err, size_t errsz)
{
	char why[1024];
	int standby;

	if (queue_in_recovery(q, &standby, why, sizeof(why)) < 0 ||
	    (!standby && sync_site_feed(q, &st->nfed, why, sizeof(why)) < 0)) {
		snprintf(err, errsz, "list %s (the site store): %s", l->name,
		    why);
		return -1;
	}
	return 0;
}

/* build l's token file afresh into a temporary file, renamed over path
 * when complete: 0, or -1 with err (path unchanged) */
static int
rebuild_into(struct queue *q, const struct listcfg_global *g,
    const struct listcfg_list *l, const char *path, struct sync_stats *st,
    char *err, size_t errsz)
{
	struct src sr = { l->name, sync_is_site(g, l), 0, 0,
	    mark_primary(g) };
	struct posttok pt;
	char tmp[4200], why[1024], real[PATH_MAX];

	/* built beside the file it replaces: a token file that is a link
	 * (to another disk) has it beside the link's target, not on the
	 * tokens directory's disk, which may have no room for it */
	if (tokdb_tmp_name(tokdb_replace_target(path, real), "rebuild",
	    (long)getpid(), tmp, sizeof(tmp)) < 0) {
		snprintf(err, errsz, "list %s: token file path too long",
		    l->name);
		return -1;
	}
	if (sync_tokens_dir(g, err, errsz) < 0)
		return -1;
	clean_stale(g, l->name);
	prepare_counter(g, l->name);
	unlink(tmp);
	if (posttok_init(&pt, g, l, err, errsz) < 0)
		return -1;
	if (apply_from(q, &sr, tmp, 1, sync_writer_wait(g), &pt, st, why,
	    sizeof(why)) < 0) {
		snprintf(err, errsz, "list %s: %s; the token file is unchanged",
		    l->name, why);
		unlink(tmp);
		return -1;
	}
	/* a fresh copy with a hash table sized for its tokens goes in place
	 * of the old file */
	if (tokdb_compact_into(tmp, path, sync_writer_wait(g), why,
	    sizeof(why)) < 0) {
		snprintf(err, errsz, "list %s: %s; the token file is unchanged",
		    l->name, why);
		unlink(tmp);
		return -1;
	}
	unlink(tmp);
	return 0;
}

int
sync_rebuild(struct queue *q, const struct listcfg_global *g,
    const struct listcfg_list *l, const char *path, struct sync_stats *st,
    char *err, size_t errsz)
{
	unsigned long nfed;

	memset(st, 0, sizeof(*st));
	if (sync_is_site(g, l) && feed_first(q, l, st, err, errsz) < 0)
		return -1;
	nfed = st->nfed;
	if (rebuild_into(q, g, l, path, st, err, errsz) < 0)
		return -1;
	st->nfed = nfed;
	return 0;
}

int
sync_list(struct queue *q, const struct listcfg_global *g,
    const struct listcfg_list *l, struct sync_stats *st, char *err,
    size_t errsz)
{
	return sync_list_at(q, g, l, 0, 0, st, err, errsz);
}

int
sync_list_at(struct queue *q, const struct listcfg_global *g,
    const struct listcfg_list *l, int64_t pos, int64_t mark,
    struct sync_stats *st, char *err, size_t errsz)
{
	struct src sr = { l->name, sync_is_site(g, l), pos, mark,
	    mark_primary(g) };
	struct posttok pt;
	char path[4096], why[1024];
	unsigned long nfed;
	int r;

	memset(st, 0, sizeof(*st));
	if (listcfg_tokens_path(g, l->name, path, sizeof(path)) < 0) {
		snprintf(err, errsz, "list %s: token file path too long",
		    l->name);
		return -1;
	}
	if (sync_tokens_dir(g, err, errsz) < 0)
		return -1;
	if (sr.site && feed_first(q, l, st, err, errsz) < 0)
		return -1;
	nfed = st->nfed;
	clean_stale(g, l->name);
	prepare_counter(g, l->name);
	if (access(path, F_OK) < 0 && errno == ENOENT) {
		/* a missing file is built whole, then renamed into place */
		r = rebuild_into(q, g, l, path, st, err, errsz);
		st->nfed = nfed;
		return r;
	}
	if (posttok_init(&pt, g, l, err, errsz) < 0)
		return -1;
	r = apply_from(q, &sr, path, 1, sync_writer_wait(g), &pt, st, why,
	    sizeof(why));
	st->nfed = nfed;
	if (r < 0) {
		snprintf(err, errsz, "list %s: %s (%lu event%s applied "
		    "before)", l->name, why, st->nevents,
		    st->nevents == 1 ? "" : "s");
		return -1;
	}
	return 0;
}

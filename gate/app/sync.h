/*
 * sync.h - bring a list's token file up to date with the training
 * journal, or build it afresh from the whole journal
 *
 * The journal (db/journal.h) is the source of truth; a token file is a
 * view of it that stores its journal position in the same Kyoto Cabinet
 * transaction as the counts, so applying is exactly once whatever is
 * interrupted.  Posts from the journal are hostile and go through the
 * bounded tokenizer with the list's own settings.
 *
 * The site store (listgate.conf's site_list) is the one token file that
 * follows every list's journal: events are first fed (given feed
 * numbers, db/journal.h's journal_site_feed, which needs the primary),
 * and the site list's file applies the feed in feed order, recording a
 * feed number as its position; so it too applies each event exactly
 * once.  Every function
 * returns -1 with a message in err naming the list; none prints, logs
 * or exits.
 */
#ifndef LG_SYNC_H
#define LG_SYNC_H

#include <stddef.h>
#include <stdint.h>

struct listcfg_global;
struct listcfg_list;
struct queue;
struct posttok;

/* quarantined events a sync reports one by one (the rest are counted) */
#define SYNC_MAX_REPORTED	16

/* one journal event a sync skipped */
struct sync_skipped {
	int64_t id;
	int earlier;		/* quarantined before (else: just now) */
	char why[256];		/* why it cannot be applied */
	char mark_err[256];	/* "" or why it could not be marked */
};

/* what a sync did */
struct sync_stats {
	unsigned long nevents;	/* events applied */
	unsigned long nbatches;	/* token-file transactions committed */
	int64_t pos;		/* the token file's position afterwards */
	unsigned long nquarantined;	/* events skipped: damaged (now
					 * quarantined) or quarantined before */
	unsigned nreported;	/* the first of them, in skipped[] */
	struct sync_skipped skipped[SYNC_MAX_REPORTED];
	unsigned long nfed;	/* the site store: events newly fed */
	int pairs_differ;	/* the token file was built with word pairs
				 * set otherwise than the list says: it
				 * learnt as built (pairs_file) */
	int pairs_file;
};

/* the warning for a token file built with word pairs set otherwise than
 * the list says (st->pairs_differ), naming `listgate rebuild`, in buf;
 * NULL when it was built as the list says */
const char *sync_pairs_warning(const struct sync_stats *st,
    const char *list, char *buf, size_t bufsz);

/*
 * The warning for the i-th journal event st reports skipped (i below
 * st->nreported), or with i == st->nreported the one for those past
 * SYNC_MAX_REPORTED: "list L: journal event N cannot be applied (why):
 * quarantined and skipped" and the like, text from the database
 * sanitized, in buf; NULL when there is nothing to say.  Every writer
 * that syncs (sync, rebuild, train, a decision's sync, the web server's)
 * logs them: a sync that passes an event is the only one to tell.
 */
const char *sync_skipped_warning(const struct sync_stats *st, unsigned i,
    const char *list, char *buf, size_t bufsz);

/* 1 (with err) when a token file of list (site: the site store) at
 * journal position pos is further on than the journal (the site feed)
 * of q: the message says whether q is a standby that is behind or
 * another (or a restored) database; else 0 (also when it cannot be
 * told) */
int sync_ahead(struct queue *q, const char *list, int site, int64_t pos,
    char *err, size_t errsz);

/* 1 (with err, naming `listgate rebuild`) when a token file at journal
 * position pos is of the other kind than list's (site: it is the site
 * store): a list's file built from the site feed, or a site store built
 * from its own journal; else 0 (also when it cannot be told, and when
 * the other kind's event there is not the one whose mark the file
 * recorded: sync_diverged's or sync_ahead's case) */
int sync_other_kind(struct queue *q, const char *list, int site,
    int64_t pos, int64_t mark, char *err, size_t errsz);

/* 1 (with err, naming `listgate rebuild`) when the event at a token
 * file's journal position pos is not the one whose mark the file
 * recorded (a failover that lost commits, a restored backup), or when
 * that cannot be checked (a query failed); else 0 (also when the file
 * recorded none) */
int sync_diverged(struct queue *q, const char *list, int site, int64_t pos,
    int64_t mark, char *err, size_t errsz);

/*
 * 1 (with err saying how) when sq, where the journal is read
 * (sync_database), does not replicate pq, the primary (database): a
 * database of another cluster, or another database of the primary's
 * own.  A streaming standby shares the primary's system identifier and
 * database oid; one of another cluster is taken for a replica only when
 * the last feed number it has names the same event on the primary (a
 * logical replica).  Else 0 (also when it cannot be told: a query
 * failed, or neither has fed anything yet).
 */
int sync_not_replica(struct queue *pq, struct queue *sq, char *err,
    size_t errsz);

/*
 * Before a rebuild of list's token file (site: the site store) from sq,
 * a standby of the primary pq: the standby's journal end (the site
 * feed's) in *slast_r, the primary's in *plast_r.  1 (with err) when the
 * file, at journal position pos with mark, is further on than the
 * standby and the primary has that very event: the file learnt events
 * the standby has not replayed yet (a `train` on this host, a sync from
 * the primary), and a rebuild from the standby now would take them back
 * out.  0 when not (also when the file's event is not the primary's:
 * diverged, or another database's, which a rebuild is for); -1 with err
 * when a query failed.
 */
int sync_standby_behind(struct queue *pq, struct queue *sq,
    const char *list, int site, int64_t pos, int64_t mark,
    int64_t *slast_r, int64_t *plast_r, char *err, size_t errsz);

/* list l's token file is the site store (it follows the site feed, not
 * l's journal) */
int sync_is_site(const struct listcfg_global *g,
    const struct listcfg_list *l);

/* how long a writer of a token file (train, sync, rebuild) waits for
 * the lock: g's lock_wait_ms, but at least 10 seconds */
unsigned sync_writer_wait(const struct listcfg_global *g);

/* the mode of the tokens directory: the token files (TOKDB_FILE_MODE
 * 0640) are for the list's user and group only */
#define SYNC_TOKENS_DIR_MODE	0750

/* create g's tokens_dir and its missing parents (mode
 * SYNC_TOKENS_DIR_MODE exactly); an existing tokens_dir loses the
 * permission bits SYNC_TOKENS_DIR_MODE lacks: 0, or -1 with err */
int sync_tokens_dir(const struct listcfg_global *g, char *err, size_t errsz);

/*
 * Apply list's journal events with id > the token file's position to
 * the token file at path (created when create is set), in batches: each
 * batch is one token-file transaction that also stores the new position,
 * so an interruption at any point loses nothing and applies nothing
 * twice.  The file is closed between batches (readers get in).  The day
 * recorded per token is the event's day.  Posts become tokens through
 * posttok_post (evidence included: a post's sender is its Return-Path,
 * else its From, asked about now; evidence that asks anyone is gathered
 * before the file is taken for writing, and applied only if the file
 * still stands where it stood: a slow member_check or DNS server keeps
 * no filter waiting).  An event that cannot be
 * applied (its stored message is damaged) never blocks the rest: it is
 * quarantined in the journal (journal_quarantine) before the batch that
 * passes it commits, skipped, and reported in *st; one quarantined
 * before is skipped unread.  A token file that claims events the journal
 * lacks (built from another database) is refused.  0, or -1 with err
 * (a database, memory or token-file failure; *st says what was applied
 * before).
 */
int sync_apply(struct queue *q, const char *list, const char *path,
    int create, unsigned wait_ms, struct posttok *pt,
    struct sync_stats *st, char *err, size_t errsz);

/* the same for the site store: the fed events of every list, in feed
 * order (site_list names it, for messages) */
int sync_apply_site(struct queue *q, const char *site_list,
    const char *path, int create, unsigned wait_ms,
    struct posttok *pt, struct sync_stats *st, char *err,
    size_t errsz);

/* feed every list's journal events not yet fed to the site store, in
 * transactions of a bounded size (q must be the primary): 0, or -1 with
 * err (what was fed before stays fed); *nfed_r how many */
int sync_site_feed(struct queue *q, unsigned long *nfed_r, char *err,
    size_t errsz);

/*
 * Build list l's token file at path afresh from the whole journal: into
 * a temporary file in g's tokens_dir, renamed over path when complete
 * (a reader or an interruption never sees a half-built file; temporary
 * files of killed runs are removed).  The site list's file is built
 * from the site feed (fed first through q unless q is a standby).  0,
 * or -1 with err (path is then unchanged).
 */
int sync_rebuild(struct queue *q, const struct listcfg_global *g,
    const struct listcfg_list *l, const char *path, struct sync_stats *st,
    char *err, size_t errsz);

/*
 * Sync list l: apply its new journal events to its token file, built
 * with sync_rebuild when missing.  The site list's file follows the site
 * feed instead, fed first through q unless q is a standby (then only
 * what the primary fed already is applied).  0, or -1 with err.
 */
int sync_list(struct queue *q, const struct listcfg_global *g,
    const struct listcfg_list *l, struct sync_stats *st, char *err,
    size_t errsz);

/*
 * sync_list right after q's own commit of list l's events up to id pos
 * (pos > 0; mark its mark, as read in that commit), which the caller
 * put in l's token file: a file still at pos with that mark is not
 * checked against the database for where it stands (another kind of
 * source, a diverged or a restored database, a journal that ends
 * before it), since the commit answered that; only the events after it
 * are fetched.  A file elsewhere is synced as by sync_list.
 */
int sync_list_at(struct queue *q, const struct listcfg_global *g,
    const struct listcfg_list *l, int64_t pos, int64_t mark,
    struct sync_stats *st, char *err, size_t errsz);

#endif

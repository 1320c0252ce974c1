/*
 * cmd_sync.c - `listgate sync` and `listgate rebuild`: bring token files
 * up to date with the training journal in PostgreSQL
 *
 * sync applies each event once (the position travels with the counts in
 * one token-file transaction); sync --check changes nothing and checks
 * each token file (tokdb_check) and its position; rebuild builds a fresh
 * file from the whole journal beside the old one and renames it over
 * (without a database, it converts or compacts the token file itself).
 * The site store (site_list) follows every list's events through the
 * site feed, fed through the primary even when sync_database names a
 * standby.  Trusts the configuration; list names from the database are
 * checked before use.
 * Exit 0, 1 on failure, 2 on usage errors.
 */
#include "config.h"

#include <sys/stat.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/journal.h"
#include "db/queue.h"
#include "gate/app/app.h"
#include "db/tokdb.h"
#include "gate/app/sync.h"
#include "gate/cmd/cmd.h"
#include "gate/util/lglimits.h"
#include "gate/util/suggest.h"
#include "gate/util/xalloc.h"
#include "listcfg/listcfg.h"

static void
sync_usage(FILE *f)
{
	fprintf(f,
	    "usage: listgate [--config DIR] sync [--list L | --site] [--check]\n"
	    "       [--quiet]\n"
	    "\n"
	    "Apply the training journal (PostgreSQL) to the token files: every\n"
	    "event after a file's recorded position, exactly once.  Without\n"
	    "--list, every list that has journal events or a configuration and\n"
	    "a token file at a journal position, then the site store.\n"
	    "The site store (site_list in listgate.conf) learns every list's\n"
	    "events, each exactly once, through the site feed.\n"
	    "\n"
	    "  -l, --list L   only this list\n"
	    "  -s, --site     only the site store (feed it every list's new\n"
	    "                 events and apply them)\n"
	    "  -c, --check    change nothing: check each token file's integrity\n"
	    "                 and say how far behind the journal it is\n"
	    "  -q, --quiet    print nothing on success\n"
	    "  -h, --help     this help\n"
	    "\n"
	    "Exit status: 0 ok, 1 failure (with --check: a file damaged, missing\n"
	    "or ahead of the journal), 2 usage error.\n");
}

/* state of a sync over every list */
struct sync_all {
	struct queue *q;
	const struct listcfg_global *g;
	int quiet, check, nfail;
	int replica_checked;	/* replica_ok told q replicates database */
};

/* l is the site store's list */
static int
is_site(const struct listcfg_global *g, const char *l)
{
	return g->site_list != NULL && strcmp(g->site_list, l) == 0;
}

/*
 * sync --list or rebuild of a list that has nothing (no journal event,
 * no lists/L.conf) has just made an empty token file: most likely for a
 * misspelt list name (a filter deferring for a missing token file names
 * sync and rebuild), which filter would then score every post with
 * against nothing.  A warning, nothing more: a new list may well have
 * neither yet.
 */
static void
warn_empty(const char *name, struct queue *q, const struct listcfg_global *g,
    const char *list)
{
	char conf[4096], path[4096], pc[4096], err[256];
	int64_t last;

	if (is_site(g, list) ||
	    listcfg_list_path(g, list, conf, sizeof(conf)) < 0 ||
	    listcfg_tokens_path(g, list, path, sizeof(path)) < 0 ||
	    access(conf, F_OK) == 0 ||
	    journal_last_id(q, list, &last, err, sizeof(err)) < 0 || last != 0)
		return;
	/* the sync made the filter's pass counter beside it: left behind,
	 * it alone keeps stats and expire from warning of the name */
	if (listcfg_passcount_path(g, list, pc, sizeof(pc)) == 0 &&
	    access(pc, F_OK) == 0)
		cmd_err(name, "warning: list %s has no journal events and no "
		    "%s: its token file %s is empty, and so is its pass "
		    "counter %s (a misspelt list name? then remove both)",
		    list, conf, path, pc);
	else
		cmd_err(name, "warning: list %s has no journal events and no "
		    "%s: its token file %s is empty (a misspelt list name? "
		    "then remove that file)", list, conf, path);
}

/* 0 when sq, where the journal is read (sync_database), replicates pq,
 * the primary (database); else -1, said as name about what: a token file
 * built from it would follow another database than the one that is
 * trained (the site store would never learn what the primary feeds) */
static int
check_replica(const char *name, const struct listcfg_global *g,
    struct queue *pq, struct queue *sq, const char *what)
{
	char how[512];

	if (!sync_not_replica(pq, sq, how, sizeof(how)))
		return 0;
	cmd_err(name, "%s%ssync_database in %s/listgate.conf does not "
	    "replicate database there: %s; nothing applied: point "
	    "sync_database at a streaming standby of database, or remove it",
	    what != NULL ? what : "", what != NULL ? ": " : "", g->dir, how);
	return -1;
}

/* how long sync waits for the primary to answer whether sync_database
 * replicates it: a standby's hosts sync with the primary down */
#define REPLICA_WAIT_S	2
/* a standby that lacks journal events the primary had this long ago is
 * stuck or far behind (a streaming standby replays a commit within
 * moments, and a journal transaction lasts a fraction of a second) */
#define STANDBY_STUCK_S	600

/* warn, as name, when sq (sync_database) lacks journal events that pq,
 * the primary, had STANDBY_STUCK_S ago: each sync applies what the
 * standby has, so every token file here would go without that training,
 * and nothing else would say so */
static void
warn_stuck(const char *name, const struct listcfg_global *g,
    struct queue *pq, struct queue *sq)
{
	int64_t last, age;
	char e[256];

	if (journal_max_id(sq, &last, e, sizeof(e)) < 0 ||
	    journal_age_after(pq, last, &age, e, sizeof(e)) < 0 ||
	    age < STANDBY_STUCK_S)
		return;
	cmd_err(name, "warning: sync_database in %s/listgate.conf lacks "
	    "journal events the primary (database) had %lld minutes ago "
	    "(it ends at event %lld): its replay is stuck or far behind, "
	    "and the token files here go without that training until it "
	    "has caught up", g->dir, (long long)(age / 60), (long long)last);
}

/* with sync_database set (sq), before any token file follows it: -1,
 * reported as name, when it does not replicate database; else 0 (also
 * when that cannot be told: the primary out of reach), with a warning
 * when it is stuck far behind; *checked_r 1 when it was told that sq
 * replicates database */
static int
replica_ok(const char *name, const struct listcfg_global *g,
    struct queue *sq, int *checked_r)
{
	struct queue *pq;
	char err[512];
	int r;

	*checked_r = 0;
	if (g->sync_conninfo == NULL || !queue_configured(g->conninfo) ||
	    queue_open_within(g->conninfo, REPLICA_WAIT_S, &pq, err,
	    sizeof(err)) < 0)
		return 0;
	if ((r = check_replica(name, g, pq, sq, NULL)) == 0) {
		*checked_r = 1;
		warn_stuck(name, g, pq, sq);
	}
	queue_close(pq);
	return r;
}

/*
 * When the journal is read from sync_database (a standby, sq), feed the
 * site store through the primary (database) on a connection of its own,
 * and check that sq replicates it; with one database the sync itself
 * feeds it.  checked: replica_ok told so already (sync), not asked
 * again.  The connection is handed over in *pq_r when that is not
 * NULL (else closed; NULL when there is none).  0; -1 when the primary
 * is out of reach; -2 when sq does not replicate it (nothing is to be
 * applied from sq); both reported as name.
 */
static int
feed_primary(const char *name, const struct listcfg_global *g,
    struct queue *sq, int checked, int quiet, struct queue **pq_r)
{
	struct queue *fq = NULL;
	unsigned long nfed;
	char err[1024], what[128];

	if (pq_r != NULL)
		*pq_r = NULL;
	if (g->sync_conninfo == NULL)
		return 0;
	if (!queue_configured(g->conninfo) ||
	    queue_open(g->conninfo, &fq, err, sizeof(err)) < 0 ||
	    queue_check_schema(fq, err, sizeof(err)) < 0 ||
	    sync_site_feed(fq, &nfed, err, sizeof(err)) < 0) {
		cmd_err(name, "site store %s: cannot feed it through the "
		    "primary (database in %s/listgate.conf): %s", g->site_list,
		    g->dir, queue_configured(g->conninfo) ? err :
		    "no database configured");
		queue_close(fq);
		return -1;
	}
	/* (after the feed: the primary's then goes on past the standby's) */
	snprintf(what, sizeof(what), "site store %s", g->site_list);
	if (!checked && check_replica(name, g, fq, sq, what) < 0) {
		queue_close(fq);
		return -2;
	}
	if (pq_r != NULL)
		*pq_r = fq;
	else
		queue_close(fq);
	if (!quiet)
		printf("site store %s: %lu event%s fed through the primary\n",
		    g->site_list, nfed, nfed == 1 ? "" : "s");
	return 0;
}

/* 1 when list (not the site store) has no journal event and no
 * lists/L.conf: most likely a misspelt name */
static int
unknown_list(struct queue *q, const struct listcfg_global *g,
    const char *list)
{
	char conf[4096], err[256];
	int64_t last;

	return !is_site(g, list) &&
	    listcfg_list_path(g, list, conf, sizeof(conf)) == 0 &&
	    access(conf, F_OK) < 0 && errno == ENOENT &&
	    journal_last_id(q, list, &last, err, sizeof(err)) == 0 &&
	    last == 0;
}

/* sync --check of one list: its token file is sound and not ahead of
 * the journal; 0, or -1 after a message */
static int
check_one(struct sync_all *s, const char *list)
{
	struct tokdb *db;
	struct listcfg_list l;
	struct sync_stats st;
	char path[4096], err[1024];
	int64_t pos, mark, last;
	uint32_t feats = 0;
	long ntok;
	int r, fr = 0;

	memset(&st, 0, sizeof(st));
	if (!listcfg_name_ok(list)) {
		cmd_err("sync", "bad list name in the journal; skipped");
		return -1;
	}
	if (listcfg_tokens_path(s->g, list, path, sizeof(path)) < 0) {
		cmd_err("sync", "list %s: token file path too long", list);
		return -1;
	}
	if ((r = tokdb_open(path, TOKDB_READ, sync_writer_wait(s->g), &db,
	    err, sizeof(err))) != 0) {
		/* a list with nothing (a misspelt --list): not sent to a sync
		 * or rebuild that would make it a token file */
		if (r == TOKDB_ENOENT && unknown_list(s->q, s->g, list)) {
			cmd_err("sync", "list %s has no journal events, no "
			    "token file %s and no %s/lists/%s.conf: nothing "
			    "to check (a misspelt list name?)", list, path,
			    s->g->dir, list);
			return -1;
		}
		cmd_err("sync", "list %s: %s", list, err);
		return -1;
	}
	r = tokdb_check(db, &ntok, err, sizeof(err));
	if (r == 0 && (tokdb_get_pos_mark(db, &pos, &mark) < 0 ||
	    (fr = tokdb_get_feats(db, &feats)) < 0)) {
		snprintf(err, sizeof(err), "%s", tokdb_errmsg(db));
		r = -1;
	}
	tokdb_close(db);
	if (r != 0) {
		cmd_err("sync", "list %s: %s", list, err);
		return -1;
	}
	/* the site store's position is a feed number, a list's a journal
	 * id: a file of the other kind is refused as sync refuses it */
	if (sync_other_kind(s->q, list, is_site(s->g, list), pos, mark, err,
	    sizeof(err)) || sync_diverged(s->q, list, is_site(s->g, list),
	    pos, mark, err, sizeof(err))) {
		cmd_journal_err("sync", s->g, 1, "list %s: %s", list,
		    err);
		return -1;
	}
	if ((is_site(s->g, list) ? journal_site_last(s->q, &last, err,
	    sizeof(err)) : journal_last_id(s->q, list, &last, err,
	    sizeof(err))) < 0) {
		cmd_journal_err("sync", s->g, 1, "list %s: %s", list,
		    err);
		return -1;
	}
	if (pos > last) {
		/* a standby that is behind is said so, as sync says it */
		if (sync_ahead(s->q, list, is_site(s->g, list), pos, err,
		    sizeof(err)))
			cmd_err("sync", "list %s: %s: %s", list, path, err);
		else
			cmd_err("sync", "list %s: the token file %s is at "
			    "journal position %lld but the journal ends at "
			    "%lld: it was built from another (or a restored) "
			    "database; run `%s rebuild --list %s`", list,
			    path, (long long)pos, (long long)last,
			    suggest_cmd(), list);
		return -1;
	}
	if (!s->quiet)
		printf("list %s: %s is sound: %ld token%s, journal position "
		    "%lld of %lld\n", list, path, ntok, ntok == 1 ? "" : "s",
		    (long long)pos,
		    (long long)last);
	/* built with word pairs set otherwise than the list says now: sound,
	 * but learning as built until rebuilt */
	if (fr > 0 && listcfg_load_list(s->g, list, &l, err,
	    sizeof(err)) == 0) {
		st.pairs_differ = (l.word_pairs != 0) !=
		    ((feats & TOKDB_FEAT_PAIRS) != 0);
		st.pairs_file = (feats & TOKDB_FEAT_PAIRS) != 0;
		listcfg_free_list(&l);
		if (sync_pairs_warning(&st, list, err, sizeof(err)) != NULL)
			cmd_err("sync", "warning: %s", err);
	}
	return 0;
}


/* sync (or check) the site store: fed (not for --check), then applied
 * from s->q, fed or not */
static void
sync_site_store(struct sync_all *s)
{
	int r;

	if (s->check) {
		if (check_one(s, s->g->site_list) < 0)
			s->nfail++;
		return;
	}
	/* the primary out of reach: the feed the standby has is still
	 * applied (the failure counts all the same); not that of a
	 * database that is no standby of it */
	if ((r = feed_primary("sync", s->g, s->q,
	    s->replica_checked, s->quiet, NULL)) < 0)
		s->nfail++;
	if (r == -2)
		return;
	if (cmd_sync_list("sync", s->q, s->g, s->g->site_list,
	    s->quiet | CMD_SYNC_READS) < 0)
		s->nfail++;
}

/* sync (or check) one list named by the journal (the site store comes
 * last) */
static int
sync_one(const char *list, void *ctx)
{
	struct sync_all *s = ctx;

	if (is_site(s->g, list))
		return 0;
	if (s->check ? check_one(s, list) < 0 :
	    cmd_sync_list("sync", s->q, s->g, list,
	    s->quiet | CMD_SYNC_READS) < 0)
		s->nfail++;
	return 0;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* 1 when the token file at path records a journal position (it claims
 * journal events); 0 when it is at 0 or cannot be read (sync leaves
 * such a file alone: trained without a database, or to be rebuilt
 * when its list's events come) */
static int
claims_events(const struct listcfg_global *g, const char *path)
{
	struct tokdb *db;
	char err[512];
	int64_t pos, mark;
	int r;

	if (tokdb_open(path, TOKDB_READ, sync_writer_wait(g), &db, err,
	    sizeof(err)) != 0)
		return 0;
	r = tokdb_get_pos_mark(db, &pos, &mark) == 0 && pos > 0;
	tokdb_close(db);
	return r;
}

/* 1 when the list has its lists/NAME.conf: a filter scores with its
 * token file (a file of no list's, a former site store's after
 * site_list was unset, scores nothing: left alone, as before) */
static int
configured(const struct listcfg_global *g, const char *name)
{
	struct stat st;
	char path[4096];

	return listcfg_list_path(g, name, path, sizeof(path)) == 0 &&
	    stat(path, &st) == 0;
}

/*
 * sync (or check) the token files in tokens_dir of lists that have no
 * journal event at all, which the journal's list of names skips, when
 * they record a journal position: built from events this database does
 * not have (a failover to a standby that lost a list's first commits, a
 * backup restored from before the list was trained, another database).
 * Left alone, such a file would go on scoring with that training for
 * good, unlike a rebuild or a host that never synced it, without a word;
 * the sync of each refuses it naming the rebuild.
 */
static void
sync_unjournaled(struct sync_all *s)
{
	char **names = NULL, **nn, path[4096], err[256];
	struct dirent *e;
	size_t i, n = 0, cap = 0, len;
	int64_t last;
	DIR *d;
	int oom = 0, failed = 0;

	if (s->g->tokens_dir == NULL || (d = opendir(s->g->tokens_dir)) ==
	    NULL)
		return;		/* no token file yet */
	while ((e = readdir(d)) != NULL) {
		len = strlen(e->d_name);
		if (len <= 4 || len - 4 > LG_MAX_LIST_NAME ||
		    strcmp(e->d_name + len - 4, ".kch") != 0)
			continue;
		if (n == cap) {
			cap = cap == 0 ? 16 : 2 * cap;
			if ((nn = xrealloc(names, cap * sizeof(*nn))) ==
			    NULL) {
				oom = 1;
				break;
			}
			names = nn;
		}
		if ((names[n] = xstrdup(e->d_name)) == NULL) {
			oom = 1;
			break;
		}
		names[n++][len - 4] = '\0';
	}
	closedir(d);
	if (oom) {
		cmd_err("sync", "out of memory");
		s->nfail++;
	}
	if (n > 1)
		qsort(names, n, sizeof(*names), name_cmp);
	for (i = 0; i < n; i++) {
		/* (after a database failure, once: the connection is most
		 * likely gone, and each list's sync said so already) */
		if (!failed && listcfg_name_ok(names[i]) &&
		    !is_site(s->g, names[i]) && configured(s->g, names[i]) &&
		    listcfg_tokens_path(s->g, names[i], path,
		    sizeof(path)) == 0 && claims_events(s->g, path)) {
			if (journal_last_id(s->q, names[i], &last, err,
			    sizeof(err)) < 0) {
				cmd_journal_err("sync", s->g, 1, "cannot look "
				    "for token files of lists without journal "
				    "events: %s", err);
				s->nfail++;
				failed = 1;
			} else if (last == 0)
				sync_one(names[i], s);
		}
		xfree(names[i]);
	}
	xfree(names);
}

int
cmd_sync(int argc, char **argv, const struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "list", required_argument, NULL, 'l' },
		{ "site", no_argument, NULL, 's' },
		{ "check", no_argument, NULL, 'c' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct listcfg_global g;
	struct sync_all s;
	const char *list = NULL;
	char err[1024];
	int ch, quiet = 0, site = 0, check = 0;

	while ((ch = getopt_long(argc, argv, "l:scqh", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			list = optarg;
			break;
		case 's':
			site = 1;
			break;
		case 'c':
			check = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			sync_usage(stdout);
			return EXIT_CMD_OK;
		default:
			sync_usage(stderr);
			return EXIT_CMD_USAGE;
		}
	}
	if (optind < argc) {
		cmd_err("sync", "unexpected argument '%s'", argv[optind]);
		sync_usage(stderr);
		return EXIT_CMD_USAGE;
	}
	if (list != NULL && site) {
		cmd_err("sync", "--list and --site exclude each other");
		sync_usage(stderr);
		return EXIT_CMD_USAGE;
	}
	if (list != NULL && !listcfg_name_ok(list)) {
		cmd_bad_list("sync", list);
		return EXIT_CMD_USAGE;
	}
	memset(&s, 0, sizeof(s));
	if (cmd_connect("sync", ctx, &g, &s.q,
	    APP_CHECK_SCHEMA | APP_JOURNAL_READS) < 0)
		return EXIT_CMD_FAIL;
	s.g = &g;
	s.quiet = quiet;
	s.check = check;
	/* every token file would follow another journal than the one that
	 * is trained: built from it, or refused as diverged with a message
	 * to rebuild it (from it) */
	if (replica_ok("sync", &g, s.q, &s.replica_checked) < 0)
		s.nfail++;
	else if (site && g.site_list == NULL) {
		cmd_err("sync", "--site: no site store (set site_list in "
		    "%s/listgate.conf)", g.dir);
		s.nfail++;
	} else if (site || (list != NULL && is_site(&g, list)))
		sync_site_store(&s);
	else if (list != NULL) {
		char path[4096];
		int existed = listcfg_tokens_path(&g, list, path,
		    sizeof(path)) < 0 || access(path, F_OK) == 0;
		int nfail = s.nfail;

		sync_one(list, &s);
		if (!check && !existed && s.nfail == nfail)
			warn_empty("sync", s.q, &g, list);
	}
	else if (journal_lists(s.q, sync_one, &s, err,
	    sizeof(err)) < 0) {
		cmd_journal_err("sync", &g, 1, "%s", err);
		s.nfail++;
	} else {
		sync_unjournaled(&s);
		if (g.site_list != NULL)
			sync_site_store(&s);
	}
	queue_close(s.q);
	listcfg_free_global(&g);
	return s.nfail ? EXIT_CMD_FAIL : EXIT_CMD_OK;
}

static void
rebuild_usage(FILE *f)
{
	fprintf(f,
	    "usage: listgate [--config DIR] rebuild --list L [--force] "
	    "[--quiet]\n"
	    "\n"
	    "Recreate the list's token file from the training journal alone:\n"
	    "built beside the old file in tokens_dir, then renamed over it\n"
	    "(filters keep using the old file until then).  The site store\n"
	    "(site_list) is rebuilt from every list's events (the site feed).\n"
	    "Without a database, rewrite the token file itself instead: a file\n"
	    "of an older format is converted to the current one, a current one\n"
	    "is compacted; a file of another tokenizer cannot be converted (its\n"
	    "tokens differ): move it away and retrain the list.\n"
	    "A token file that holds training the journal does not have\n"
	    "(`train` without a database, synced or not) is left alone: a\n"
	    "rebuild would drop that training; --force drops it.  So is one\n"
	    "further on than a standby (sync_database) that is behind: the\n"
	    "rebuild would take its newest events out until a later sync.\n"
	    "\n"
	    "  -l, --list L   the list\n"
	    "  -f, --force    rebuild over training the journal (or the\n"
	    "                 standby) does not have\n"
	    "  -q, --quiet    print nothing on success\n"
	    "  -h, --help     this help\n"
	    "\n"
	    "Exit status: 0 ok, 1 failure, 2 usage error.\n");
}

/* 1 when the token file at path holds posts trained without the journal,
 * which a rebuild from the journal would drop; their counts in *nspam,
 * *nham.  Such posts are those of `train` without a database: alone
 * (position 0, posts counted), or under the journal's events when a
 * database came later and sync added them (more posts of a class than
 * the list's events up to the file's position learnt).  That is asked
 * only of a file that follows this journal: its position an event of
 * the list's whose mark the file recorded, so that a file of another
 * list's, of a journal that lost its last commits or of a standby's
 * that is behind is still rebuilt.  A file of an older format is
 * converted first (*converted set), and asked as any other: the format
 * the message of every command sends to rebuild, and it may hold all
 * of a list's training from before a database.  A file that cannot be
 * read (missing, damaged, another tokenizer's) is rebuild's to replace:
 * 0.  A database error: -1, err set */
static int
trained_outside(struct queue *q, const char *list, const char *path,
    unsigned wait_ms, int site, uint32_t *nspam, uint32_t *nham,
    int *converted, char *err, size_t errsz)
{
	struct tokdb *db;
	char evlist[128];	/* a list name: <= 64 */
	int64_t pos, fmark, mark, jham, jspam;
	int r;

	*nspam = *nham = 0;
	*converted = 0;
	if ((r = tokdb_open(path, TOKDB_READ, wait_ms, &db, err, errsz)) ==
	    TOKDB_EVERSION && tokdb_convert(path, wait_ms, err, errsz) == 2) {
		*converted = 1;
		r = tokdb_open(path, TOKDB_READ, wait_ms, &db, err, errsz);
	}
	if (r != 0)
		return 0;
	r = tokdb_get_pos_mark(db, &pos, &fmark) == 0 &&
	    tokdb_msgcounts(db, nspam, nham) == 0 && *nspam + *nham > 0;
	tokdb_close(db);
	if (!r || pos == 0)
		return r;
	if (site || fmark == 0)
		return 0;
	if (journal_event_mark(q, 0, pos, &mark, evlist, sizeof(evlist),
	    NULL, err, errsz) < 0 ||
	    journal_net_counts(q, list, pos, &jham, &jspam, err, errsz) < 0)
		return -1;
	if (mark != fmark || strcmp(evlist, list) != 0)
		return 0;
	*nspam = (int64_t)*nspam > jspam ?
	    (uint32_t)((int64_t)*nspam - (jspam > 0 ? jspam : 0)) : 0;
	*nham = (int64_t)*nham > jham ?
	    (uint32_t)((int64_t)*nham - (jham > 0 ? jham : 0)) : 0;
	return *nspam + *nham > 0;
}

/*
 * A rebuild of list (not the site store) that reads the journal from
 * sync_database (sq): a connection to the primary in *pq_r, to compare
 * the standby with, sq checked to replicate it.  0 (*pq_r NULL when the
 * primary is out of reach: a warning, and the rebuild takes what the
 * standby has), or -1 when sq does not replicate it (reported).
 */
static int
rebuild_primary(const struct listcfg_global *g, const char *list,
    struct queue *sq, struct queue **pq_r)
{
	char err[1024], what[128];

	*pq_r = NULL;
	if (!queue_configured(g->conninfo) ||
	    queue_open(g->conninfo, pq_r, err, sizeof(err)) < 0 ||
	    queue_check_schema(*pq_r, err, sizeof(err)) < 0) {
		cmd_err("rebuild", "warning: list %s: cannot compare the "
		    "standby (sync_database) with the primary (database in "
		    "%s/listgate.conf): %s; rebuilding from what the standby "
		    "has replayed", list, g->dir, queue_configured(g->conninfo)
		    ? err : "no database configured");
		queue_close(*pq_r);
		*pq_r = NULL;
		return 0;
	}
	snprintf(what, sizeof(what), "list %s", list);
	if (check_replica("rebuild", g, *pq_r, sq, what) < 0) {
		queue_close(*pq_r);
		*pq_r = NULL;
		return -1;
	}
	return 0;
}

/* the journal position and mark the token file at path records (0 and
 * 0 when it cannot be read: missing, damaged, another format's) */
static void
file_pos(const struct listcfg_global *g, const char *path, int64_t *pos_r,
    int64_t *mark_r)
{
	struct tokdb *db;
	char err[512];

	*pos_r = *mark_r = 0;
	if (tokdb_open(path, TOKDB_READ, sync_writer_wait(g), &db, err,
	    sizeof(err)) != 0)
		return;
	if (tokdb_get_pos_mark(db, pos_r, mark_r) < 0)
		*pos_r = *mark_r = 0;
	tokdb_close(db);
}

/* rebuild without a database: convert or compact the token file itself */
static int
rebuild_file(const struct listcfg_global *g, const char *list, int quiet)
{
	struct listcfg_list l;
	char err[1024], path[4096], conf[4096];
	int r;

	if (listcfg_load_list(g, list, &l, err, sizeof(err)) < 0) {
		cmd_err("rebuild", "%s", err);
		return EXIT_CMD_FAIL;
	}
	listcfg_free_list(&l);
	if (listcfg_tokens_path(g, list, path, sizeof(path)) < 0) {
		cmd_err("rebuild", "list %s: token file path too long", list);
		return EXIT_CMD_FAIL;
	}
	r = tokdb_convert(path, sync_writer_wait(g), err, sizeof(err));
	if (r == TOKDB_ENOENT) {
		/* (tokdb's message for a missing file names sync and this
		 * rebuild, which need the database there is none of) */
		int noconf = listcfg_list_path(g, list, conf,
		    sizeof(conf)) == 0 && access(conf, F_OK) < 0 &&
		    errno == ENOENT;

		cmd_err("rebuild", "list %s: no database is configured, so "
		    "there is no training journal to rebuild from, and no "
		    "token file %s to convert or compact: train the list "
		    "first (%s train --list %s --spam/--ham ...)%s%s%s", list,
		    path, suggest_cmd(), list, noconf ? "; nor is there a " :
		    "", noconf ? conf : "", noconf ? " (a misspelt list "
		    "name?)" : "");
		return EXIT_CMD_FAIL;
	}
	if (r < 0) {
		cmd_err("rebuild", "list %s: %s", list, err);
		return EXIT_CMD_FAIL;
	}
	if (!quiet)
		printf("list %s: %s %s (no database: the token file itself)\n",
		    list, r == 2 ? "converted" : "compacted", path);
	return EXIT_CMD_OK;
}

int
cmd_rebuild(int argc, char **argv, const struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "list", required_argument, NULL, 'l' },
		{ "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct listcfg_global g;
	struct listcfg_list l;
	struct queue *q, *pq = NULL;
	struct sync_stats st;
	const char *list = NULL;
	char err[1024], path[4096], skip[64];
	int64_t fpos, fmark, slast = 0, plast = 0;
	uint32_t ns, nh;
	int ch, quiet = 0, force = 0, unfed = 0, conv, r, rc = EXIT_CMD_FAIL;

	while ((ch = getopt_long(argc, argv, "l:fqh", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			list = optarg;
			break;
		case 'f':
			force = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			rebuild_usage(stdout);
			return EXIT_CMD_OK;
		default:
			rebuild_usage(stderr);
			return EXIT_CMD_USAGE;
		}
	}
	if (list == NULL || optind < argc) {
		if (list == NULL)
			cmd_err("rebuild", "--list is required");
		else
			cmd_err("rebuild", "unexpected argument '%s'",
			    argv[optind]);
		rebuild_usage(stderr);
		return EXIT_CMD_USAGE;
	}
	if (!listcfg_name_ok(list)) {
		cmd_bad_list("rebuild", list);
		return EXIT_CMD_USAGE;
	}
	if (listcfg_load_global(listcfg_dir(ctx->config_dir), &g, err,
	    sizeof(err)) < 0) {
		cmd_err("rebuild", "%s", err);
		return EXIT_CMD_FAIL;
	}
	if (!queue_configured(g.conninfo)) {
		rc = rebuild_file(&g, list, quiet);
		listcfg_free_global(&g);
		return rc;
	}
	listcfg_free_global(&g);
	if (cmd_connect("rebuild", ctx, &g, &q,
	    APP_CHECK_SCHEMA | APP_JOURNAL_READS) < 0)
		return EXIT_CMD_FAIL;
	if (listcfg_load_list(&g, list, &l, err, sizeof(err)) < 0) {
		cmd_err("rebuild", "%s", err);
		goto out_g;
	}
	/* the primary out of reach: the site store is rebuilt from the feed
	 * the standby has (as sync applies it), and the run fails all the
	 * same; not from a database that is no standby of it */
	if (is_site(&g, list) && (r = feed_primary("rebuild", &g, q, 0, quiet,
	    &pq)) < 0) {
		if (r == -2)
			goto out_l;
		unfed = 1;
	}
	if (!is_site(&g, list) && g.sync_conninfo != NULL &&
	    rebuild_primary(&g, list, q, &pq) < 0)
		goto out_l;
	if (listcfg_tokens_path(&g, list, path, sizeof(path)) < 0) {
		cmd_err("rebuild", "list %s: token file path too long", list);
		goto out_l;
	}
	if (!force && (r = trained_outside(q, list, path,
	    sync_writer_wait(&g), is_site(&g, list), &ns, &nh, &conv, err,
	    sizeof(err))) != 0) {
		if (r < 0)
			cmd_journal_err("rebuild", &g, 1, "list %s: %s",
			    list, err);
		else
			cmd_err("rebuild", "list %s: the token file %s holds "
			    "%lu spam and %lu ham posts trained without the "
			    "journal (`train` without a database), which a "
			    "rebuild from the journal would drop: `%s "
			    "sync --list %s` keeps them under the journal's "
			    "events; to put them in the journal, train their "
			    "mail again with the database, then `%s "
			    "rebuild --list %s --force`, which alone drops "
			    "them%s", list, path, (unsigned long)ns,
			    (unsigned long)nh, suggest_cmd(), list,
			    suggest_cmd(), list, conv ? " (the file, of an "
			    "older format, was converted to the current one "
			    "that sync reads)" : "");
		goto out_l;
	}
	/* from a standby that has not replayed what the file learnt (a
	 * train on this host, a sync from the primary): the rebuild would
	 * set the file back, for good should the standby's replay have
	 * stopped (no sync says so then, the file being where the standby
	 * ends) */
	if (pq != NULL) {
		file_pos(&g, path, &fpos, &fmark);
		if ((r = sync_standby_behind(pq, q, list, is_site(&g, list),
		    fpos, fmark, &slast, &plast, err, sizeof(err))) < 0) {
			cmd_err("rebuild", "warning: list %s: cannot compare "
			    "the standby (sync_database) with the primary: %s",
			    list, err);
			plast = 0;
		} else if (r > 0 && !force) {
			cmd_err("rebuild", "list %s: %s: %s; nothing rebuilt: "
			    "rebuild once the standby has caught up (or with "
			    "--force, which takes them out until a sync after "
			    "that)", list, path, err);
			goto out_l;
		}
	}
	r = sync_rebuild(q, &g, &l, path, &st, err, sizeof(err));
	cmd_sync_report("rebuild", &g, list, &st);
	if (r < 0) {
		cmd_journal_err("rebuild", &g, 1, "%s", err);
		goto out_l;
	}
	if (!quiet)
		printf("list %s: rebuilt %s from %lu journal event%s%s "
		    "(position %lld)\n", list, path, st.nevents,
		    st.nevents == 1 ? "" : "s",
		    cmd_sync_skipped(&st, skip, sizeof(skip)),
		    (long long)st.pos);
	if (st.nevents == 0)
		warn_empty("rebuild", q, &g, list);
	/* what the primary has past the standby comes with a later sync */
	if (pq != NULL && plast > st.pos)
		cmd_err("rebuild", "warning: list %s: the standby "
		    "(sync_database in %s/listgate.conf) is behind the "
		    "primary: the rebuilt token file ends at %s %lld, the "
		    "primary's %s goes on to %lld; a sync applies the rest "
		    "once the standby has caught up", list, g.dir,
		    is_site(&g, list) ? "feed number" : "journal position",
		    (long long)st.pos, is_site(&g, list) ? "site feed" :
		    "journal", (long long)plast);
	rc = unfed ? EXIT_CMD_FAIL : EXIT_CMD_OK;
out_l:
	queue_close(pq);
	listcfg_free_list(&l);
out_g:
	queue_close(q);
	listcfg_free_global(&g);
	return rc;
}

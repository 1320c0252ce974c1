/*
 * cmd_config.c - `listgate config check [--list L]`, `listgate config keys`
 *
 * check loads listgate.conf and one list's file (or every
 * lists/NAME.conf), prints the effective settings, defaults included, as
 * `key = value` lines, and reports each error as FILE:LINE on stderr;
 * each list's token file, when there is one, gets the integrity check
 * (tokdb_check); two lists with one moderation_address and
 * recipient_delimiter are an error, and so is a database or
 * sync_database that libpq cannot parse (said without the password); a
 * timeout at or past Postfix's time limit under mta = postfix is a
 * warning (FILE:LINE), and so is a list without deliver there, a
 * moderator no hold notice can go to, and moderators without release.
 * Reads only the configuration directory and the token files; a file
 * name under lists/ becomes a list name only after listcfg_name_ok.
 * keys prints the table of keys and reads nothing.
 */
#include "config.h"

#include <sys/stat.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "db/queue.h"
#include "db/tokdb.h"
#include "gate/cmd/cmd.h"
#include "gate/moderate/cookie.h"
#include "gate/moderate/notice.h"
#include "gate/moderate/notify.h"
#include "gate/util/suggest.h"
#include "listcfg/cfgfile.h"
#include "listcfg/listcfg.h"
#include "gate/util/xalloc.h"

#define NAME "config"

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: listgate [--config DIR] config check [--list L]\n"
	    "       listgate config keys\n"
	    "\n"
	    "check: check listgate.conf and lists/L.conf (every lists/*.conf\n"
	    "without --list) and print the effective settings, defaults\n"
	    "included, and check each list's token file for damage.  Errors\n"
	    "name FILE:LINE (or the damaged file); the exit status is then 1.\n"
	    "keys: print every key, one a line, tab-separated: name, file\n"
	    "(global or list), type, default, range, description.\n"
	    "\n"
	    "  -l, --list L  check only this list (it needs no file of its own)\n"
	    "  -h, --help    this help\n"
	    "\n"
	    "Exit status: 0 ok, 1 an error (named), 2 usage error.\n");
}

/* qsort: by name */
static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* the names of lists/ *.conf, sorted; *n_r entries; -1 on error */
static int
list_names(const char *dir, char ***names_r, size_t *n_r, char *err,
    size_t errsz)
{
	char path[4096];
	DIR *d;
	struct dirent *de;
	char **names = NULL, **nn;
	size_t n = 0, cap = 0, len;
	struct stat st;

	*names_r = NULL;
	*n_r = 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/lists", dir) >=
	    sizeof(path)) {
		snprintf(err, errsz, "%s/lists: name too long", dir);
		return -1;
	}
	if ((d = opendir(path)) == NULL) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errsz, "%.900s: %s", path, strerror(errno));
		return -1;
	}
	/* a lists/ that another user can change is refused by every
	 * list's load, those without a file too: filter defers every
	 * post.  Said here, where no list file may be loaded to say it
	 * (a lists/ of none checked fine, exit 0) */
	if (fstat(dirfd(d), &st) == 0 && cfgfile_trusted(path, &st, err,
	    errsz) < 0) {
		closedir(d);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (de->d_name[0] == '.' || len <= 5 ||
		    strcmp(de->d_name + len - 5, ".conf") != 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			if ((nn = xrealloc(names, cap * sizeof(*names))) ==
			    NULL)
				goto nomem;
			names = nn;
		}
		if ((names[n] = xstrndup(de->d_name, len - 5)) == NULL)
			goto nomem;
		n++;
	}
	closedir(d);
	if (n > 0)
		qsort(names, n, sizeof(*names), cmp_names);
	*names_r = names;
	*n_r = n;
	return 0;
nomem:
	closedir(d);
	while (n > 0)
		xfree(names[--n]);
	xfree(names);
	snprintf(err, errsz, "out of memory");
	return -1;
}

/* check the list's token file when it has one (tokdb_check): 0, or 1
 * after an error message (damaged, another version's) */
static int
check_tokens(const struct listcfg_global *g, const char *name)
{
	struct tokdb *db;
	char path[4096], err[1024];
	long ntok;
	int r;

	if (listcfg_tokens_path(g, name, path, sizeof(path)) < 0) {
		cmd_err(NAME, "list %s: token file path too long", name);
		return 1;
	}
	r = tokdb_open(path, TOKDB_READ, g->lock_wait_ms, &db, err,
	    sizeof(err));
	/* without a database there is no journal to make it from: sync
	 * and rebuild say only "no database configured" (and filter defers
	 * every post of the list until it is there) */
	if (r == TOKDB_ENOENT && !queue_configured(g->conninfo)) {
		printf("# token file %s: none yet (no database: `%s train "
		    "--list %s --spam/--ham ...` makes it; filter defers the "
		    "list's posts until then)\n", path, suggest_cmd(), name);
		return 0;
	}
	if (r == TOKDB_ENOENT) {
		printf("# token file %s: none yet (`%s sync` or `%s "
		    "rebuild --list %s` creates it from the journal)\n", path,
		    suggest_cmd(), suggest_cmd(), name);
		return 0;
	}
	if (r == TOKDB_ELOCK) {
		printf("# token file %s: not checked (locked by a trainer)\n",
		    path);
		return 0;
	}
	if (r == 0) {
		r = tokdb_check(db, &ntok, err, sizeof(err));
		tokdb_close(db);
	}
	if (r != 0) {
		cmd_err(NAME, "list %s: %s", name, err);
		return 1;
	}
	printf("# token file %s: sound, %ld token%s\n", path, ntok,
	    ntok == 1 ? "" : "s");
	return 0;
}

/* warn of a notify template that sends notices with the held post's
 * envelope sender as theirs (sendmail's -f {sender}, -r, --from): that
 * sender is whoever the spammer forged, so the notices' bounces and
 * vacation replies would go to a stranger */
static void
warn_notify_sender(const struct listcfg_global *g, const char *name,
    const struct listcfg_list *l)
{
	static const char *const opts[] = { "-f", "-r", "--from", NULL };
	const char *w, *prev;
	size_t i, k, n;

	for (i = 1; l->notify != NULL && l->notify[i] != NULL; i++) {
		w = l->notify[i];
		prev = l->notify[i - 1];
		if (strstr(w, "{sender}") == NULL)
			continue;
		for (k = 0; opts[k] != NULL; k++) {
			n = strlen(opts[k]);
			if (strcmp(prev, opts[k]) == 0 ||
			    (strncmp(w, opts[k], n) == 0 && (w[n] == '{' ||
			    (w[n] == '=' && w[n + 1] == '{'))))
				break;
		}
		if (opts[k] != NULL) {
			cmd_err(NAME, "warning: %s/lists/%s.conf: notify sends "
			    "the notices from the held post's envelope sender "
			    "(%s {sender}): that is whoever the spammer forged, "
			    "and the notices' bounces and vacation replies would "
			    "go there; use the list's own address (or "
			    "moderation_address) instead", g->dir, name,
			    opts[k]);
			return;
		}
	}
}

/*
 * Warn of each moderator no hold notice can go to (notice_addr_ok: the
 * outbox drops every notice to it, with the reason in its log only).
 * Such an address loads (address literals and UTF-8 ones did before,
 * and a refused file would defer all of the list's mail), but one is
 * mostly a list written another way: "a@x.org; b@x.org" gave the
 * moderator "a@x.org;", "<a@x.org>" one with its brackets.
 */
static void
warn_moderators(const struct listcfg_global *g, const char *name,
    const struct listcfg_list *l)
{
	char path[4096], line[16] = "";
	const char *a;
	unsigned n;
	size_t i;

	if (listcfg_list_path(g, name, path, sizeof(path)) == 0 &&
	    (n = listcfg_key_line(path, "moderators")) != 0)
		snprintf(line, sizeof(line), ":%u", n);
	for (i = 0; l->moderators != NULL && l->moderators[i] != NULL; i++) {
		a = l->moderators[i];
		if (notice_addr_ok(a))
			continue;
		cmd_err(NAME, "warning: %s/lists/%s.conf%s: moderators: no hold "
		    "notice can go to `%s' (a notice goes only to an address of "
		    "ASCII without any of <>()[];:\\): the outbox drops every "
		    "notice to it%s", g->dir, name, line, a,
		    strpbrk(a, ";<>") != NULL ? "; addresses are separated by "
		    "commas or blanks, without ; or <...>" : "");
	}
}

/*
 * Warn of a list without deliver under mta = postfix: passing a post is
 * delivering it there, and filter defers every post it would pass
 * (75: Postfix keeps it, retries, and bounces it once the queue
 * lifetime is over), while the list loads without an error.  A
 * warning: the pipe service's --mta qmail would make it a qmail list.
 */
static void
warn_no_deliver(const struct listcfg_global *g, const char *name,
    const struct listcfg_list *l)
{
	char line[16] = "";
	char gpath[4096];
	unsigned n;

	if (g->mta != LISTCFG_MTA_POSTFIX || l->deliver != NULL)
		return;
	snprintf(gpath, sizeof(gpath), "%s/listgate.conf", g->dir);
	if ((n = listcfg_key_line(gpath, "mta")) != 0)
		snprintf(line, sizeof(line), ":%u", n);
	cmd_err(NAME, "warning: %s/lists/%s.conf%s: deliver is not set, and "
	    "under mta = postfix (%s%s) passing a post is delivering it: "
	    "filter defers every post of the list it would pass (75, left "
	    "in Postfix's queue until it bounces); set deliver to the "
	    "command or LMTP server that hands a post to the list", g->dir,
	    name, l->has_file ? "" : " (no file: defaults)", gpath, line);
}

/* warn of a command of list name (key, argv) whose program is not there
 * or no executable file: every run of it fails (deliver: every post
 * the filter passes under Postfix is deferred; release: every approval;
 * notify: every notice waits), and the check said nothing.  An LMTP
 * server (lmtp:...) is not looked at */
static void
warn_program(const struct listcfg_global *g, const char *name,
    const char *key, char *const *argv)
{
	struct stat st;
	char path[4096], line[16] = "";
	const char *why;
	unsigned n;

	if (argv == NULL || argv[0] == NULL || argv[0][0] != '/')
		return;
	if (stat(argv[0], &st) < 0)
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode) || (st.st_mode & 0111) == 0)
		why = "not an executable file";
	else
		return;
	if (listcfg_list_path(g, name, path, sizeof(path)) < 0)
		snprintf(path, sizeof(path), "lists/%s.conf", name);
	else if ((n = listcfg_key_line(path, key)) != 0)
		snprintf(line, sizeof(line), ":%u", n);
	cmd_err(NAME, "warning: %s%s: %s: %s: %s: every run of the command "
	    "fails", path, line, key, argv[0], why);
}

/* Postfix's pipe(8) kills a command at its time limit
 * (command_time_limit, 1000 s unless raised) and bounces the mail */
#define POSTFIX_TIME_LIMIT_S	1000

/*
 * Warn of a timeout (set in the file at path) that Postfix's time limit
 * would cut short: under mta = postfix the watchdog must defer before
 * pipe(8) kills listgate, else the post (or the moderator's reply) is
 * bounced.  A warning, not an error: config check cannot see main.cf,
 * where the site may have raised the limit already.
 */
static void
warn_postfix_timeout(const struct listcfg_global *g, const char *path,
    unsigned secs)
{
	char line[16] = "";
	unsigned n;

	if (g->mta != LISTCFG_MTA_POSTFIX || secs < POSTFIX_TIME_LIMIT_S)
		return;
	if ((n = listcfg_key_line(path, "timeout")) != 0)
		snprintf(line, sizeof(line), ":%u", n);
	cmd_err(NAME, "warning: %s%s: timeout = %u under mta = postfix: "
	    "Postfix's pipe(8) kills a command at its time limit "
	    "(command_time_limit, %u s unless raised) and bounces the mail "
	    "before listgate's watchdog can defer it; keep timeout below %u "
	    "s, or raise the time limit of listgate's pipe services above it "
	    "(SERVICE_time_limit, the service's name in master.cf: "
	    "listgate_time_limit = %us and listgatemod_time_limit = %us in "
	    "main.cf, or -o on the services' lines in master.cf)", path,
	    line, secs, POSTFIX_TIME_LIMIT_S, POSTFIX_TIME_LIMIT_S, secs + 60,
	    secs + 60);
}

/*
 * The secret of moderation by mail, for list name that sends hold
 * notices: 0 usable (or not this user's to read), 1 after an error
 * message.  Checked once a run: without it every notice waits in the
 * outbox and every reply is deferred, and nothing said so here
 */
static int
check_secret(const struct listcfg_global *g, const char *name)
{
	static int done, bad;
	struct cookie_key key;
	char err[1024];

	if (done)
		return bad;
	done = 1;
	/* one this user may not read is the list user's (an administrator
	 * in its group runs the check): nothing is known of it */
	if (access(g->secret_file, R_OK) < 0 && errno == EACCES)
		return 0;
	if (cookie_load_key(g->secret_file, &key, err, sizeof(err)) < 0) {
		cmd_err(NAME, "%s: list %s sends hold notices, which cannot be "
		    "made without it: they wait in the outbox, and the "
		    "moderators' replies are deferred", err, name);
		bad = 1;
	}
	explicit_bzero(&key, sizeof(key));
	return bad;
}

/* check one list and print it: 0, or 1 after an error message */
static int
check_list(const struct listcfg_global *g, const char *name)
{
	struct listcfg_list l;
	char err[1024], path[4096];
	int bad;

	if (!listcfg_name_ok(name)) {
		cmd_err(NAME, "%s/lists/%s.conf: bad list name (want "
		    "[a-z0-9][a-z0-9._-]*, at most %d bytes, no \"..\")",
		    g->dir, name, LG_MAX_LIST_NAME);
		return 1;
	}
	if (listcfg_load_list(g, name, &l, err, sizeof(err)) < 0) {
		cmd_err(NAME, "%s", err);
		return 1;
	}
	/* moderation by mail needs three keys; two of them do nothing */
	if ((l.moderators != NULL) + (l.moderation_address != NULL) +
	    (l.notify != NULL) == 2)
		cmd_err(NAME, "warning: %s/lists/%s.conf: no hold notices are "
		    "sent without %s", g->dir, name, l.moderators == NULL ?
		    "moderators" : l.moderation_address == NULL ?
		    "moderation_address" : "notify");
	/* and expire's reminders need all three: without them the
	 * daily expire fails on the list and leaves its posts held */
	if (l.expire_action == LISTCFG_EXPIRE_REMIND && (l.moderators ==
	    NULL || l.moderation_address == NULL || l.notify == NULL))
		cmd_err(NAME, "warning: %s/lists/%s.conf: expire_action = "
		    "remind sends reminders through the hold notices, which "
		    "need moderators, moderation_address and notify (not "
		    "set:%s%s%s): `listgate expire' fails on this list and "
		    "leaves its posts held", g->dir, name, l.moderators ==
		    NULL ? " moderators" : "", l.moderation_address == NULL ?
		    " moderation_address" : "", l.notify == NULL ? " notify" :
		    "");
	warn_notify_sender(g, name, &l);
	warn_no_deliver(g, name, &l);
	/* a list with moderators is moderated, and approving a post is
	 * releasing it: without release every approval fails (approve,
	 * web, a reply), and the posts stay held */
	if (l.moderators != NULL && l.release == NULL)
		cmd_err(NAME, "warning: %s/lists/%s.conf: moderators are set "
		    "but release is not: no post of the list can be approved "
		    "(approve, listgate web and a reply to a notice all fail "
		    "and leave it held); set release to the command or LMTP "
		    "server that sends an approved post to the list", g->dir,
		    name);
	warn_moderators(g, name, &l);
	warn_program(g, name, "deliver", l.deliver);
	warn_program(g, name, "release", l.release);
	warn_program(g, name, "notify", l.notify);
	warn_program(g, name, "member_check", l.member_check);
	bad = notify_ready(&l) && check_secret(g, name);
	/* its own timeout; one it inherits is listgate.conf's, said once */
	if (listcfg_list_path(g, name, path, sizeof(path)) == 0 &&
	    listcfg_key_line(path, "timeout") != 0)
		warn_postfix_timeout(g, path, l.timeout_s);
	printf("\n");
	if (listcfg_print_list(stdout, &l) < 0) {
		cmd_err(NAME, "out of memory");
		listcfg_free_list(&l);
		return 1;
	}
	listcfg_free_list(&l);
	return check_tokens(g, name) | bad;
}

/* a list's moderation address and delimiter, as reply.c routes by them */
struct modaddr {
	const char *name;
	char *addr;		/* NULL: none, or the file did not load */
	int delim;
};

/*
 * Two lists with one moderation_address and recipient_delimiter: the
 * replies of both reach the first list reply.c finds, and the other's
 * are all refused.  Each such pair of names (only those with only, when
 * it is not NULL) gets an error naming both files: 0 none, 1 some.  A
 * file that does not load is left out (check_list said why).
 */
static int
check_shared(const struct listcfg_global *g, char **names, size_t n,
    const char *only)
{
	struct modaddr *m;
	struct listcfg_list l;
	char err[1024];
	size_t i, j;
	int bad = 0;

	if (n < 2)
		return 0;
	if ((m = xcalloc(n, sizeof(*m))) == NULL) {
		cmd_err(NAME, "out of memory");
		return 1;
	}
	for (i = 0; i < n; i++) {
		m[i].name = names[i];
		if (!listcfg_name_ok(names[i]) ||
		    listcfg_load_list(g, names[i], &l, err, sizeof(err)) < 0)
			continue;
		if (l.moderation_address != NULL &&
		    (m[i].addr = xstrdup(l.moderation_address)) == NULL) {
			cmd_err(NAME, "out of memory");
			bad = 1;
		}
		m[i].delim = l.recipient_delimiter;
		listcfg_free_list(&l);
	}
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++) {
			if (m[i].addr == NULL || m[j].addr == NULL ||
			    m[i].delim != m[j].delim ||
			    strcasecmp(m[i].addr, m[j].addr) != 0 ||
			    (only != NULL && strcmp(only, m[i].name) != 0 &&
			    strcmp(only, m[j].name) != 0))
				continue;
			cmd_err(NAME, "%s/lists/%s.conf and %s/lists/%s.conf: "
			    "both lists have moderation_address %s with "
			    "recipient_delimiter %c: replies to it reach one of "
			    "them only (give each list its own address)", g->dir,
			    m[i].name, g->dir, m[j].name, m[i].addr, m[i].delim);
			bad = 1;
		}
	for (i = 0; i < n; i++)
		xfree(m[i].addr);
	xfree(m);
	return bad;
}

/* getopt over argv from optind: -1 to go on, else the exit status */
static int
parse_opts(int argc, char **argv, const char *optstring, const char **list)
{
	static const struct option opts[] = {
		{ "list", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int ch;

	while ((ch = getopt_long(argc, argv, optstring, opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			*list = optarg;
			break;
		case 'h':
			usage(stdout);
			return EXIT_CMD_OK;
		default:
			usage(stderr);
			return EXIT_CMD_USAGE;
		}
	}
	return -1;
}

static char check_prog[] = "listgate config check";

int
cmd_config(int argc, char **argv, const struct cmd_ctx *ctx)
{
	struct listcfg_global g;
	const char *list = NULL;
	char err[1024];
	char **names;
	size_t n, i;
	int rc, bad = 0;

	if ((rc = parse_opts(argc, argv, "+l:h", &list)) >= 0)
		return rc;
	if (optind >= argc) {
		usage(stderr);
		return EXIT_CMD_USAGE;
	}
	if (strcmp(argv[optind], "keys") == 0) {
		/* no options, no arguments: the table is the program's;
		 * --help is the help, as of every command */
		if (list == NULL && optind + 2 == argc &&
		    (strcmp(argv[optind + 1], "--help") == 0 ||
		    strcmp(argv[optind + 1], "-h") == 0)) {
			usage(stdout);
			return EXIT_CMD_OK;
		}
		if (list != NULL || optind + 1 < argc) {
			cmd_err(NAME, "keys takes no options or arguments");
			usage(stderr);
			return EXIT_CMD_USAGE;
		}
		listcfg_print_keys(stdout);
		goto out;
	}
	if (strcmp(argv[optind], "check") != 0) {
		cmd_err(NAME, "unknown action '%s' (want check or keys)",
		    argv[optind]);
		usage(stderr);
		return EXIT_CMD_USAGE;
	}
	/* options may also follow the action: config check --list L */
	argv += optind;
	argc -= optind;
	optind = 0;
	argv[0] = check_prog;	/* getopt's messages name it */
	if ((rc = parse_opts(argc, argv, "l:h", &list)) >= 0)
		return rc;
	if ((rc = cmd_no_args(NAME, argc, argv, usage)) != EXIT_CMD_OK)
		return rc;
	/* a usage error, as every command's --list: 1 is for what the
	 * configuration says */
	if (list != NULL && !listcfg_name_ok(list)) {
		cmd_err(NAME, "bad list name '%s' (want [a-z0-9][a-z0-9._-]*, "
		    "at most %d bytes, no \"..\")", list, LG_MAX_LIST_NAME);
		return EXIT_CMD_USAGE;
	}
	if (listcfg_load_global(listcfg_dir(ctx->config_dir), &g, err,
	    sizeof(err)) < 0) {
		cmd_err(NAME, "%s", err);
		return EXIT_CMD_FAIL;
	}
	if (listcfg_print_global(stdout, &g) < 0) {
		cmd_err(NAME, "out of memory");
		listcfg_free_global(&g);
		return EXIT_CMD_FAIL;
	}
	/* (filter's watchdog, and moderate's) */
	{
		char gpath[4096];

		snprintf(gpath, sizeof(gpath), "%s/listgate.conf", g.dir);
		warn_postfix_timeout(&g, gpath, g.timeout_s);
	}
	/* what every connection would fail on, said without the password */
	if (g.conninfo != NULL && queue_conninfo_check(g.conninfo, err,
	    sizeof(err)) < 0) {
		cmd_err(NAME, "%s/listgate.conf: database: %s", g.dir, err);
		bad = 1;
	}
	if (g.sync_conninfo != NULL && queue_conninfo_check(g.sync_conninfo,
	    err, sizeof(err)) < 0) {
		cmd_err(NAME, "%s/listgate.conf: sync_database: %s", g.dir, err);
		bad = 1;
	}
	if (list != NULL)
		bad |= check_list(&g, list);
	if (list_names(g.dir, &names, &n, err, sizeof(err)) < 0) {
		if (list == NULL) {
			cmd_err(NAME, "%s", err);
			bad = 1;
		}
	} else {
		for (i = 0; list == NULL && i < n; i++)
			bad |= check_list(&g, names[i]);
		/* and against the other lists: one moderation address each */
		bad |= check_shared(&g, names, n, list);
		for (i = 0; i < n; i++)
			xfree(names[i]);
		xfree(names);
	}
	listcfg_free_global(&g);
out:
	if (cmd_stdout_done(NAME) < 0)
		return EXIT_CMD_FAIL;
	return bad ? EXIT_CMD_FAIL : EXIT_CMD_OK;
}

/*
 * queue_cmds.c - helpers shared by the queue subcommands and train:
 * connecting with the configured database, syncing a list, who is
 * deciding, showing untrusted text on a terminal or in JSON
 *
 * Trusts the configuration; text from posts is hostile and only leaves
 * through qc_clean (terminal) or qc_json_str (JSON).  Errors are printed
 * with cmd_err and returned as -1.
 */
#include "config.h"

#include <sys/stat.h>
#include <dirent.h>
#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate/cmd/cmd.h"
#include "gate/app/app.h"
#include "gate/app/settings.h"
#include "gate/tok.h"
#include "db/tokdb.h"
#include "gate/util/utf8.h"

/* a writer of a token file waits for filter processes at least this
 * long */
#define MIN_WRITER_WAIT	10000u

int
qc_connect(const char *name, const char *config_dir,
    struct listcfg_global *g, struct queue **q_r, int check)
{
	char err[1024];

	*q_r = NULL;
	if (listcfg_load_global(listcfg_dir(config_dir), g, err,
	    sizeof(err)) < 0) {
		cmd_err(name, "%s", err);
		return -1;
	}
	if (!queue_configured(g->conninfo)) {
		cmd_err(name, "no database configured: set conninfo in %s/"
		    "listgate.conf (or the PG* environment variables)", g->dir);
		listcfg_free_global(g);
		return -1;
	}
	if (queue_open(g->conninfo, q_r, err, sizeof(err)) < 0) {
		cmd_err(name, "%s", err);
		listcfg_free_global(g);
		return -1;
	}
	if (check && queue_check_schema(*q_r, err, sizeof(err)) < 0) {
		cmd_err(name, "%s", err);
		queue_close(*q_r);
		*q_r = NULL;
		listcfg_free_global(g);
		return -1;
	}
	return 0;
}

int
qc_mkdir_p(const char *dir)
{
	char p[4096];
	size_t i, n = strlen(dir);

	if (n == 0 || n >= sizeof(p)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(p, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != 0)
			continue;
		p[i] = 0;
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return -1;
		p[i] = i < n ? '/' : 0;
	}
	return 0;
}

unsigned
qc_writer_wait(const struct listcfg_global *g)
{
	return g->lock_wait_ms > MIN_WRITER_WAIT ? g->lock_wait_ms :
	    MIN_WRITER_WAIT;
}

int
qc_tokens_dir(const char *name, const struct listcfg_global *g)
{
	if (qc_mkdir_p(g->tokens_dir) < 0) {
		cmd_err(name, "cannot create the tokens directory %s: %s",
		    g->tokens_dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* remove the temporary files of fresh builds of list whose process is
 * gone (killed mid-build): .LIST.rebuild-PID.kch and its .wal */
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
		    (end[4] != 0 && strcmp(end + 4, ".wal") != 0))
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;	/* still building (or not ours) */
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", g->tokens_dir,
		    de->d_name) < sizeof(p))
			unlink(p);
	}
	closedir(d);
}

int
qc_build_fresh(const char *name, struct queue *q,
    const struct listcfg_global *g, const char *list, const char *path,
    const struct tok_opts *to, struct journal_stats *st)
{
	char err[1024], tmp[4200];

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.rebuild-%ld.kch",
	    g->tokens_dir, list, (long)getpid()) >= sizeof(tmp)) {
		cmd_err(name, "list %s: token file path too long", list);
		return -1;
	}
	if (qc_tokens_dir(name, g) < 0)
		return -1;
	clean_stale(g, list);
	unlink(tmp);
	if (journal_apply(q, list, tmp, 1, qc_writer_wait(g), to, st, err,
	    sizeof(err)) < 0) {
		cmd_err(name, "list %s: %s; the token file is unchanged", list,
		    err);
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, path) < 0) {
		cmd_err(name, "cannot rename %s to %s: %s", tmp, path,
		    strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

int
qc_sync_list(const char *name, struct queue *q,
    const struct listcfg_global *g, const char *list, int quiet)
{
	struct listcfg_list l;
	struct journal_stats st;
	struct tok_opts to;
	char err[1024], path[4096];
	int r;

	if (!listcfg_name_ok(list)) {
		cmd_err(name, "bad list name in the journal; skipped");
		return -1;
	}
	if (cmd_list_config(name, g, list, &l, path, sizeof(path)) < 0)
		return -1;
	if (qc_tokens_dir(name, g) < 0) {
		listcfg_free_list(&l);
		return -1;
	}
	settings_tok_opts(&l, &to);
	clean_stale(g, list);
	if (access(path, F_OK) < 0 && errno == ENOENT) {
		/* a missing file is built whole, then renamed into place */
		r = qc_build_fresh(name, q, g, list, path, &to, &st);
	} else {
		r = journal_apply(q, list, path, 1, qc_writer_wait(g), &to,
		    &st, err, sizeof(err));
		if (r < 0)
			cmd_err(name, "list %s: %s (%lu events applied before)",
			    list, err, st.nevents);
	}
	if (r == 0 && !quiet)
		printf("list %s: %lu journal event%s applied, position %lld\n",
		    list, st.nevents, st.nevents == 1 ? "" : "s",
		    (long long)st.pos);
	listcfg_free_list(&l);
	return r;
}

const char *
qc_who(const char *by, char *out, size_t outsz)
{
	const char *u;
	struct passwd *pw;

	if (by != NULL && *by != 0)
		u = by;
	else if ((u = getenv("USER")) == NULL || *u == 0) {
		pw = getpwuid(getuid());
		u = pw && pw->pw_name ? pw->pw_name : NULL;
	}
	if (u == NULL)
		snprintf(out, outsz, "uid %ld", (long)getuid());
	else
		snprintf(out, outsz, "%s", u);
	return out;
}

/* length of the valid UTF-8 sequence at p (n bytes left), 0 if invalid
 * or a C1 control (U+0080..U+009F): those are controls too */
static size_t
u8len(const unsigned char *p, size_t n)
{
	size_t len = utf8_len(p, n);

	if (len == 2 && p[0] == 0xc2 && p[1] < 0xa0)
		return 0;
	return len;
}

int
qc_clean(struct buf *out, const char *s, size_t len, size_t maxchars,
    int keep_nl)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, nch = 0, k;

	while (i < len) {
		if (nch >= maxchars)
			return buf_adds(out, "...");
		k = u8len(p + i, len - i);
		if (k == 0) {
			if (buf_addc(out, '?') < 0)
				return -1;
			i++;
		} else if (k == 1 && (p[i] < 0x20 || p[i] == 0x7f)) {
			int c = p[i];

			if (keep_nl && (c == '\n' || c == '\t'))
				;
			else if (keep_nl && c == '\r') {
				i++;
				continue;
			} else
				c = c == '\t' || c == '\n' || c == '\r' ? ' ' :
				    '?';
			if (buf_addc(out, c) < 0)
				return -1;
			i++;
		} else {
			if (buf_add(out, p + i, k) < 0)
				return -1;
			i += k;
		}
		nch++;
	}
	return 0;
}

int
qc_json_str(struct buf *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p), i = 0, k;
	char esc[8];

	if (buf_addc(out, '"') < 0)
		return -1;
	while (i < n) {
		k = u8len(p + i, n - i);
		if (k == 0) {
			/* invalid byte: U+FFFD */
			if (buf_adds(out, "\\ufffd") < 0)
				return -1;
			i++;
			continue;
		}
		if (k > 1) {
			if (buf_add(out, p + i, k) < 0)
				return -1;
			i += k;
			continue;
		}
		switch (p[i]) {
		case '"':
			if (buf_adds(out, "\\\"") < 0)
				return -1;
			break;
		case '\\':
			if (buf_adds(out, "\\\\") < 0)
				return -1;
			break;
		case '\n':
			if (buf_adds(out, "\\n") < 0)
				return -1;
			break;
		case '\t':
			if (buf_adds(out, "\\t") < 0)
				return -1;
			break;
		default:
			if (p[i] < 0x20 || p[i] == 0x7f) {
				snprintf(esc, sizeof(esc), "\\u%04x", p[i]);
				if (buf_adds(out, esc) < 0)
					return -1;
			} else if (buf_addc(out, p[i]) < 0)
				return -1;
		}
		i++;
	}
	return buf_addc(out, '"');
}

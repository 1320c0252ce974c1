/*
 * app.c - what the commands share above storage and configuration:
 * connecting with the configured database, who is deciding
 *
 * Trusts the configuration; text from posts is hostile and leaves only
 * through gate/util/sanitize.h.  Errors are returned as -1 with a
 * message; nothing here prints or exits.
 */
#include "config.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/queue.h"
#include "gate/app/app.h"
#include "listcfg/listcfg.h"

int
app_connect(const char *config_dir, struct listcfg_global *g,
    struct queue **q_r, int flags, char *err, size_t errsz)
{
	const char *conninfo;
	char why[768];

	*q_r = NULL;
	if (listcfg_load_global(listcfg_dir(config_dir), g, err, errsz) < 0)
		return -1;
	conninfo = g->conninfo;
	if ((flags & APP_JOURNAL_READS) && g->sync_conninfo != NULL) {
		/* the journal from a standby: say which setting failed */
		if (queue_open(g->sync_conninfo, q_r, why, sizeof(why)) < 0) {
			snprintf(err, errsz, "%s (sync_database in "
			    "%s/listgate.conf)", why, g->dir);
			listcfg_free_global(g);
			return -1;
		}
	} else if (!queue_configured(conninfo)) {
		snprintf(err, errsz, "no database configured: set database in "
		    "%s/listgate.conf (or the PG* environment variables)",
		    g->dir);
		listcfg_free_global(g);
		return -1;
	} else if (queue_open(conninfo, q_r, why, sizeof(why)) < 0) {
		/* say which setting to mend, as for sync_database */
		if (conninfo != NULL)
			snprintf(err, errsz, "%s (database in %s/listgate.conf)",
			    why, g->dir);
		else
			snprintf(err, errsz, "%s (the PG* environment "
			    "variables: no database in %s/listgate.conf)", why,
			    g->dir);
		listcfg_free_global(g);
		return -1;
	}
	if ((flags & APP_CHECK_SCHEMA) &&
	    queue_check_schema(*q_r, err, errsz) < 0) {
		/* (the schema of sync_database's server, not database's) */
		if ((flags & APP_JOURNAL_READS) && g->sync_conninfo != NULL &&
		    strlen(err) + 1 < errsz)
			snprintf(err + strlen(err), errsz - strlen(err),
			    " (sync_database in %s/listgate.conf)", g->dir);
		queue_close(*q_r);
		*q_r = NULL;
		listcfg_free_global(g);
		return -1;
	}
	return 0;
}

const char *
app_who(const char *by, char *out, size_t outsz)
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

/*
 * app.h - what the commands share above storage and configuration:
 * connecting with the configured database, who decides
 *
 * Each function returns -1 with a message in err; none prints or exits.
 */
#ifndef LG_APP_H
#define LG_APP_H

#include <stddef.h>

struct listcfg_global;
struct queue;

/* flags of app_connect */
#define APP_CHECK_SCHEMA	1	/* refuse a schema this binary cannot
					 * use (queue_check_schema) */
#define APP_JOURNAL_READS	2	/* only to read the journal (sync,
					 * rebuild): connect with
					 * sync_database when it is set, e.g.
					 * a hot standby */

/*
 * Load the global configuration of config_dir (NULL: the default) into
 * g and connect to its database (flags: APP_*).  Fails when no database
 * is configured (no `database` key and no libpq environment); a failure
 * to connect with sync_database names that setting.  0, or -1 with err
 * (g is then freed).
 */
int app_connect(const char *config_dir, struct listcfg_global *g,
    struct queue **q_r, int flags, char *err, size_t errsz);

/* the moderator's name: by when given, else $USER, else the passwd
 * entry of the real uid, else "uid N" (into out) */
const char *app_who(const char *by, char *out, size_t outsz);

#endif

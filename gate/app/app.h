/*
 * queue_cmds.h - what the queue subcommands (migrate, held, show,
 * approve, reject, discard, expire, sync, rebuild) and train share
 *
 * Each helper prints its own error through cmd_err(name, ...) and
 * returns -1; none exits.
 */
#ifndef LG_QUEUE_CMDS_H
#define LG_QUEUE_CMDS_H

#include <stddef.h>

#include "gate/util/buf.h"
#include "listcfg/listcfg.h"
#include "db/queue.h"
#include "gate/tok.h"

/*
 * Load the global configuration and connect to its database, checking
 * the schema unless check is 0.  Fails when no database is configured
 * (g->conninfo unset and no libpq environment).  0, or -1 (reported;
 * g is then freed).
 */
int qc_connect(const char *name, const char *config_dir,
    struct listcfg_global *g, struct queue **q_r, int check);

/*
 * Apply list's journal to its token file (created when missing), say
 * how many events were applied unless quiet.  0, or -1 (reported).
 */
int qc_sync_list(const char *name, struct queue *q,
    const struct listcfg_global *g, const char *list, int quiet);

/*
 * Build list's token file at path afresh from the whole journal: into a
 * temporary file in tokens_dir, renamed over path when complete (so a
 * reader or an interruption never sees a half-built file).  Reports
 * errors with cmd_err(name, ...).  0, or -1.
 */
int qc_build_fresh(const char *name, struct queue *q,
    const struct listcfg_global *g, const char *list, const char *path,
    const struct tok_opts *to, struct journal_stats *st);

/* the moderator's name: by when given, else $USER, else the passwd
 * entry of the real uid, else "uid N" (into out) */
const char *qc_who(const char *by, char *out, size_t outsz);

/* create a directory and its missing parents (mode 0755): 0 or -1 */
int qc_mkdir_p(const char *dir);

/* how long a writer of a token file (train, sync, rebuild) waits for
 * the lock: g's lock_wait_ms, but at least 10 seconds */
unsigned qc_writer_wait(const struct listcfg_global *g);

/* create g's tokens_dir and its missing parents: 0, or -1 (reported) */
int qc_tokens_dir(const char *name, const struct listcfg_global *g);

#endif

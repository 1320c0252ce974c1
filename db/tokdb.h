/*
 * tokdb.h - a list's token store: one Kyoto Cabinet hash file per list
 *
 * Per token: spam count, ham count, last-seen day.  Meta records: message
 * counts, tokenizer version, format version, journal position.  Readers
 * open read-only and wait for the lock at most wait_ms; writers change
 * counts only inside a transaction.  A path of ":" opens an in-memory
 * store (the twin used by unit tests).
 */
#ifndef LG_TOKDB_H
#define LG_TOKDB_H

#include <stddef.h>
#include <stdint.h>

#include "gate/toklist.h"

struct tokdb;

struct tokcount {
	uint32_t spam, ham;
	uint32_t day;		/* days since 1970-01-01 when last learnt */
};

#define TOKDB_READ	0	/* shared lock, no writes */
#define TOKDB_WRITE	1	/* exclusive lock */
#define TOKDB_CREATE	2	/* with TOKDB_WRITE: create when missing */

/* the mode of a token file: the list's content (addresses, subjects)
 * for its owner and group only; writers tighten older files to it */
#define TOKDB_FILE_MODE	0640

/* a waiting tokdb_open retries the lock at least this often (ms); a
 * trainer pauses longer than this between batches so readers get in */
#define TOKDB_POLL_MAX_MS	5

/* error kinds from tokdb_open */
#define TOKDB_ERR	(-1)	/* any other failure (err says) */
#define TOKDB_ENOENT	(-2)	/* no such file */
#define TOKDB_ELOCK	(-3)	/* lock not had within wait_ms */
#define TOKDB_EVERSION	(-4)	/* written by another tokenizer/format version */

/*
 * Open (and with TOKDB_CREATE create, mode TOKDB_FILE_MODE whatever the
 * umask) a token file; a writer removes from an existing file's mode
 * what TOKDB_FILE_MODE lacks.  0 on success, else
 * one of the TOKDB_E* codes with a message for the administrator in err
 * (it names the file and says what to do).
 */
int tokdb_open(const char *path, int mode, unsigned wait_ms,
    struct tokdb **db_r, char *err, size_t errsz);
void tokdb_close(struct tokdb *db);

/* counts of one token: 1 found, 0 absent (*c_r zeroed), -1 error */
int tokdb_get(struct tokdb *db, const void *tok, size_t len,
    struct tokcount *c_r);
/* trained posts of each class: 0, or -1 */
int tokdb_msgcounts(struct tokdb *db, uint32_t *nspam_r, uint32_t *nham_r);

/* transactions (writers only): 0, or -1 */
int tokdb_begin(struct tokdb *db);
int tokdb_commit(struct tokdb *db);
int tokdb_abort(struct tokdb *db);

/*
 * Learn (dir = +1) or unlearn (dir = -1) one post's tokens as spam or ham,
 * with the message count; counts never go below zero.  Inside a
 * transaction.  Returns the number of tokens that were new, or -1.
 * Unlearning exactly undoes learning the same tokens: a record whose
 * counts both reach zero is removed, and the return value is then the
 * number of records removed.  Tokens that are empty or start with a NUL
 * byte (the meta keys' space) are skipped.
 */
long tokdb_learn(struct tokdb *db, const struct toklist *tl, int spam,
    int dir, uint32_t day);

/* journal position applied so far (0 when none): 0, or -1 */
int tokdb_get_pos(struct tokdb *db, int64_t *pos_r);
/* set it; inside the same transaction as the counts it covers */
int tokdb_set_pos(struct tokdb *db, int64_t pos);

/* number of token records (meta records not counted), or -1 */
long tokdb_ntokens(struct tokdb *db);

/* called for each token record by tokdb_iterate: 0 to go on, else stop */
typedef int (*tokdb_iter_fn)(const char *tok, size_t len,
    const struct tokcount *c, void *ctx);
/* visit every token record (meta records skipped), in no particular
 * order: 0 done, 1 stopped by fn, -1 error */
int tokdb_iterate(struct tokdb *db, tokdb_iter_fn fn, void *ctx);

/* the last error, for messages */
const char *tokdb_errmsg(struct tokdb *db);

/* today as days since 1970-01-01 */
uint32_t tokdb_today(void);

#endif

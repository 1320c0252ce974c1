/*
 * tokdb.h - a list's token store: one Kyoto Cabinet hash file per list
 *
 * Per token, under a 64-bit key (tokdb_key: the token text is not
 * stored): spam count, ham count, last-seen day.  Meta records: message
 * counts, tokenizer version, format version, journal position.  Readers
 * open read-only and wait for the lock at most wait_ms; writers change
 * counts only inside a transaction.  A path of ":" opens an in-memory
 * store (the twin used by unit tests).
 */
#ifndef LG_TOKDB_H
#define LG_TOKDB_H

#include <sys/types.h>
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
#define TOKDB_BULK	4	/* with TOKDB_WRITE: no transactions (see
				 * tokdb_publish) */

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
#define TOKDB_EDAMAGED	(-5)	/* the file is damaged (tokdb_check) */

/*
 * The name of a private copy of token file path that process pid builds
 * beside it: DIR/.BASE.KIND-PID.kch, BASE the file name without ".kch"
 * (a dot name no list can have; the extension tells Kyoto Cabinet the
 * type), KIND "compact", "new", "rebuild" or "relay" (the copy written out
 * again in large pieces before it is published).  A writer opening path
 * removes those whose process is gone (killed mid-way).  0, or -1 when
 * the name does not fit outsz.
 */
int tokdb_tmp_name(const char *path, const char *kind, long pid, char *out,
    size_t outsz);

/* where a private copy moves aside while it is rewritten larger (bulk
 * mode): the copy's name with this added; removed with the copy's
 * leftovers when its process is gone */
#define TOKDB_GROW_SUFFIX	".grow.kch"

/*
 * Where a new file that replaces the token file at path is made and
 * renamed to (a compaction, a bulk writer's copy, a rebuild): the file
 * a symbolic link at path leads to, links resolved (administrators put
 * a token file on another disk and link it in: the link stays), else
 * path itself.  A link to nothing is replaced itself (what `listgate
 * rebuild` recreates in its place).  out has PATH_MAX bytes; returns
 * out or path.
 */
const char *tokdb_replace_target(const char *path, char *out);

/*
 * 1 with err when path is a symbolic link to nothing (its target moved,
 * or on a file system not mounted): no token file to read, and none to
 * create in its place, for the link names where the file should be.
 * 0 otherwise (no link, or a link to something).
 */
int tokdb_dangling(const char *path, char *err, size_t errsz);

/*
 * May the token files of directory dir be trusted?  Not when anyone but
 * its owner may create files in it (a shared /tmp, a group-writable
 * directory): another user could put a token file of their own in
 * place, or a link where Kyoto Cabinet creates its log (PATH.wal,
 * opened with O_TRUNC), and so score posts as they like or truncate a
 * file the writer may write.  Every open of a token file asks it of the
 * file's directory (and a writer running as root tokdb_dir_foreign).
 * 0, or -1 with err (naming dir and what to do).
 */
int tokdb_dir_check(const char *dir, char *err, size_t errsz);

/*
 * 1 when this process runs as root and directory dir, or one above it
 * (above the directory dir names, links resolved), belongs to another
 * user or may be written by others (and is not sticky): that user could put links in dir, or a directory of their
 * own in its place.  The first such directory in at (atsz bytes, may be
 * NULL), its owner in *owner_r (may be NULL).  Else 0.  Root opens no
 * token file there for writing (a TOKDB_ERR naming it): Kyoto Cabinet's
 * log and a rebuild's renames and chowns follow links.
 */
int tokdb_dir_foreign(const char *dir, uid_t *owner_r, char *at,
    size_t atsz);

/*
 * Open (and with TOKDB_CREATE create, mode TOKDB_FILE_MODE whatever the
 * umask) a token file; a writer removes from an existing file's mode
 * what TOKDB_FILE_MODE lacks.  0 on success, else
 * one of the TOKDB_E* codes with a message for the administrator in err
 * (it names the file and says what to do: a missing file is recreated
 * from the journal by `listgate sync` or `listgate rebuild`, a damaged
 * one by `listgate rebuild`).  Opening checks what is cheap: Kyoto
 * Cabinet's header and file size, and that every meta record is there
 * with its size; tokdb_check looks at every record.
 */
int tokdb_open(const char *path, int mode, unsigned wait_ms,
    struct tokdb **db_r, char *err, size_t errsz);
void tokdb_close(struct tokdb *db);

/* counts of one token: 1 found, 0 absent (*c_r zeroed), -1 error */
int tokdb_get(struct tokdb *db, const void *tok, size_t len,
    struct tokcount *c_r);

/*
 * Keep what tokdb_get reads, found or absent, for the next time the
 * same token is asked for: for a reader of many posts (`listgate score`
 * over a folder: most tokens recur from post to post).  A reader's file
 * cannot change under its shared lock (writers wait; a bulk writer
 * renames a new file over it, and this one keeps reading its own), so
 * what is kept stays true.  A table of at most TOKDB_CACHE_MAX slots,
 * at most half of them used (then nothing more is kept); a key whose
 * slot is not found within a few probes is read uncached (tokens are
 * the senders' choice).  0, or -1 on a writer or an in-memory store
 * (nothing done).
 */
#define TOKDB_CACHE_MAX	(1u << 19)
int tokdb_cache(struct tokdb *db);
/* the reads a reader's cache keeps (0 without one) */
size_t tokdb_cached(const struct tokdb *db);
/* trained posts of each class: 0, or -1 */
int tokdb_msgcounts(struct tokdb *db, uint32_t *nspam_r, uint32_t *nham_r);

/* transactions (writers only): 0, or -1 */
int tokdb_begin(struct tokdb *db);
int tokdb_commit(struct tokdb *db);
int tokdb_abort(struct tokdb *db);

/*
 * Bulk mode (TOKDB_WRITE | TOKDB_BULK): for many changes at once, a
 * writer without Kyoto Cabinet transactions (whose write-ahead log costs
 * a system call per changed record).  The changes gather in memory, one
 * entry per token however many posts have it, and are written once into
 * a private file beside the old one: a copy of it, or a larger one when
 * the new tokens would overfill its hash table.  Meanwhile filters go on
 * reading the old file and other writers wait.  tokdb_publish makes the
 * private file durable (fsync) and renames it over the old one, so every
 * change of the run appears at once or, if the run fails or is killed,
 * none does.  A missing file with TOKDB_CREATE is taken as the caller's
 * own private new file, written in place.  begin/commit only mark the
 * batches; an abort spoils the run (nothing is published).  Counts,
 * message counts and the position read back include what is pending.
 * tokdb_learn returns the number of tokens new to the file when
 * learning, 0 when unlearning.  At most PEND_MAX tokens' changes are
 * kept in memory (32 MiB); more are written out on the way.
 * tokdb_publish always releases db: 0, or -1 with err (then nothing
 * changed); tokdb_close without it throws the run away.
 */
int tokdb_publish(struct tokdb *db, char *err, size_t errsz);

/*
 * The first half of tokdb_publish, for a caller that waits for
 * something else meanwhile (the trainer, for its journal's commit):
 * write the private file out and make it durable, without putting it in
 * place; tokdb_publish then only renames, and tokdb_close still throws
 * it away.  db stays open: 0, or -1 with err (then nothing can be
 * published).
 */
int tokdb_publish_ready(struct tokdb *db, char *err, size_t errsz);

/*
 * For a bulk writer with time to spend before it can publish (the
 * trainer, while the server stores its journal's last rows): write the
 * changes pending so far into the private file now, so that
 * tokdb_publish_ready has only what comes after them left to write.
 * Nothing becomes visible before tokdb_publish.  0, or -1 with err
 * (then nothing can be published).
 */
int tokdb_bulk_write(struct tokdb *db, char *err, size_t errsz);

/*
 * Learn (dir = +1) or unlearn (dir = -1) one post's tokens as spam or ham,
 * with the message count; counts never go below zero.  Inside a
 * transaction.  Returns the number of tokens that were new, or -1.
 * Unlearning exactly undoes learning the same tokens: a record whose
 * counts both reach zero is removed, and the return value is then the
 * number of records removed.  Empty tokens are skipped.
 */
long tokdb_learn(struct tokdb *db, const struct toklist *tl, int spam,
    int dir, uint32_t day);

/* journal position applied so far (0 when none): 0, or -1 */
int tokdb_get_pos(struct tokdb *db, int64_t *pos_r);
/* and the mark of the event there (journal.h; 0: none recorded) */
int tokdb_get_pos_mark(struct tokdb *db, int64_t *pos_r, int64_t *mark_r);
/* set them (tokdb_set_pos: no mark); inside the same transaction as
 * the counts they cover */
int tokdb_set_pos(struct tokdb *db, int64_t pos);
int tokdb_set_pos_mark(struct tokdb *db, int64_t pos, int64_t mark);

/*
 * The feature families the file's tokens were made with (TOKDB_FEAT_*),
 * recorded when the file is built: a file keeps them until it is
 * rebuilt, so its writers (sync, train) learn each post as the file was
 * built whatever the list's configuration says now.  1 with *feats_r,
 * 0 when not recorded (a file from before listgate recorded them: its
 * writers follow the configuration), -1 on a malformed record or one
 * with families this version does not know (writing into it would mix
 * two ways of making tokens).
 * tokdb_set_feats records them (a writer: in its open transaction, or
 * else in one of its own; a bulk writer: written when published): 0, or
 * -1.
 */
#define TOKDB_FEAT_PAIRS	1u	/* word pairs (word_pairs = yes) */
#define TOKDB_FEAT_ALL		TOKDB_FEAT_PAIRS
int tokdb_get_feats(struct tokdb *db, uint32_t *feats_r);
int tokdb_set_feats(struct tokdb *db, uint32_t feats);
/* this open created the file (a new file, empty so far; a bulk writer's
 * new file; an in-memory store) */
int tokdb_created(const struct tokdb *db);

/*
 * Decisions on posts, by the SHA-256 of their bytes: sync records the
 * moderators' decisions from the journal in the token file, so that a
 * filter answering an MTA's retry of a post already decided needs no
 * database (tokdb_get_decided is one lookup in the file it has open).
 */
#define TOKDB_SHA256_LEN	32
#define TOKDB_UNDECIDED		0	/* never decided (or decided back) */
#define TOKDB_RELEASED		1	/* approved: handed to the list */
#define TOKDB_REFUSED		2	/* rejected or discarded */
/* record state (TOKDB_UNDECIDED removes it) and the day of the
 * decision; inside a transaction: 0, or -1 */
int tokdb_set_decided(struct tokdb *db, const unsigned char *sha, int state,
    uint32_t day);
/* the decision on sha: 1 found (*state_r, *day_r), 0 none, -1 error */
int tokdb_get_decided(struct tokdb *db, const unsigned char *sha,
    int *state_r, uint32_t *day_r);

/* number of token records (meta records not counted), or -1 */
long tokdb_ntokens(struct tokdb *db);

/* the store's key of a token: its SipHash-2-4 under a fixed key, the
 * same in every token file (so dumps of files built apart compare) */
uint64_t tokdb_key(const void *tok, size_t len);

/* called for each token record by tokdb_iterate with the token's key
 * (tokdb_key; the text is not stored): 0 to go on, else stop */
typedef int (*tokdb_iter_fn)(uint64_t key, const struct tokcount *c,
    void *ctx);
/* visit every token record (meta records skipped), in no particular
 * order: 0 done, 1 stopped by fn, -1 error */
int tokdb_iterate(struct tokdb *db, tokdb_iter_fn fn, void *ctx);

/*
 * Kyoto Cabinet cannot grow a file's hash table: when a file holds more
 * tokens than it has buckets (or always, with force), rewrite it with
 * two buckets per token and rename the new file over it.
 * Writers call this after their last commit; it waits up to wait_ms
 * for a reader's lock (filters go on reading meanwhile).  1 rewritten,
 * 0 nothing to do, or a TOKDB_E* code with err.  ":" is never
 * rewritten.
 */
int tokdb_compact(const char *path, unsigned wait_ms, int force, char *err,
    size_t errsz);

/* the same, always, from a private file at path into a fresh file
 * renamed over dst (path stays): how rebuild puts its new file in place.
 * dst is held as tokdb_compact holds its file (waited for up to
 * wait_ms), so that no writer has it open when it is replaced.  1, or a
 * TOKDB_E* code with err */
int tokdb_compact_into(const char *path, const char *dst, unsigned wait_ms,
    char *err, size_t errsz);

/*
 * Convert a token file of an older format but the same tokenizer to the
 * current format (token records rekeyed, values re-encoded; a current
 * file is compacted), renamed over it like tokdb_compact.  What
 * `listgate rebuild` does without a database.  2 converted, 1 current
 * and rewritten, or a TOKDB_E* code with err: TOKDB_EVERSION when the
 * tokenizer differs (the tokens themselves changed: only the journal or
 * retraining can help, and err says so).
 */
int tokdb_convert(const char *path, unsigned wait_ms, char *err,
    size_t errsz);

/* the last error, for messages; an error of the file itself ends with
 * what to do (`listgate rebuild --list L`) */
const char *tokdb_errmsg(struct tokdb *db);

/*
 * The integrity check, one pass over the open file (a reader will do;
 * its cost grows with the file: about half a second for 150,000
 * tokens): every record read in file order must decode (a token's
 * three counts exactly, a meta record its size), must be found again by
 * its key with the same value (the hash chains), and their number must
 * be the one the file's header keeps; every bucket in use must point at
 * a record.  Catches what scattered damage does to a Kyoto Cabinet
 * file: broken record headers, damaged buckets, chains and keys,
 * malformed values (not a count changed into another valid count).  0
 * with the number of token records in
 * *ntokens_r (when not NULL) when sound; TOKDB_EDAMAGED with a message (the file, the
 * first fault, `listgate rebuild --list L`); TOKDB_ERR for another
 * failure.
 */
int tokdb_check(struct tokdb *db, long *ntokens_r, char *err, size_t errsz);

/* today as days since 1970-01-01 */
uint32_t tokdb_today(void);

#endif

/*
 * holder.h - the resident holder: a process that keeps its PostgreSQL
 * connection and stores held posts for filter over a Unix socket
 *
 * Loading libpq and the two dozen libraries it needs costs a filter
 * process that holds a post several times what scoring it cost
 * (docs/scaling.md).  `listgate holder` pays that once: filter, when
 * holder_socket is set in listgate.conf, hands it the post and what
 * queue_hold needs, and the holder answers once the INSERT committed.
 *
 * The contract that keeps every post:
 *   - the holder answers "OK" only after queue_hold returned, so an OK
 *     means the post is in the queue;
 *   - anything else (no socket, no answer within the wait, an error, a
 *     holder killed half-way) and filter holds the post itself, as
 *     without a holder.  queue_hold is idempotent on the post's bytes
 *     (a second hold of the same bytes finds the first row), so a
 *     holder that committed and then failed to answer costs a second
 *     look, never a second row.
 *
 * The wire (one request per connection, all integers big-endian):
 *
 *   "LGH1"  u32 LEN  then LEN bytes: HOLDER_NFIELDS fields, each a u32
 *   length and its bytes, in the order of enum holder_field
 *
 * and one answer line: "OK HELD ID NOTIFYING\n" (HELD a QUEUE_HELD_*
 * code, NOTIFYING 1 when the holder sends the hold notices) or
 * "ER TEXT\n".  A request is bounded (HOLDER_MAX_REQ), every field but
 * the post itself a C string without NUL of at most LG_MAX_FIELD_BYTES.
 * The socket's mode (0660) and its directory say who may hold posts:
 * only those who could run `listgate filter` for the lists anyway.
 *
 * The field HF_DATABASE is the filter's database as holder_database_id
 * names it: a holder stores a post only in the database the filter
 * would (a second configuration copied from the first keeps its
 * holder_socket; its posts must not go where none of its moderators
 * look).
 */
#ifndef LG_HOLDER_H
#define LG_HOLDER_H

#include <stddef.h>
#include <stdint.h>

#include "db/queue.h"
#include "gate/util/lglimits.h"

/* the fields of a request, in wire order */
enum holder_field {
	HF_LIST, HF_ENV_SENDER, HF_ENV_RECIPIENT, HF_FROM, HF_SUBJECT,
	HF_MSGID, HF_VERDICT, HF_CLUES, HF_STATUS, HF_NOTE, HF_SCORE,
	HF_REMEMBER_DAYS, HF_NOTIFY, HF_DATABASE, HF_RAW,
	HOLDER_NFIELDS
};

/* the largest post handed to the holder (larger ones filter holds
 * itself) and the largest request */
#define HOLDER_MAX_RAW		LG_MAX_SPOOL_MEM
#define HOLDER_MAX_REQ		(HOLDER_MAX_RAW + \
				 HOLDER_NFIELDS * (4u + LG_MAX_FIELD_BYTES))
/* the answer line, at most */
#define HOLDER_MAX_ANSWER	1024
/* a client has this long to send its request */
#define HOLDER_READ_MS		10000

/* a request: the post (in memory, or in the file raw_fd) and whether the
 * hold notices go out (filter's rule: held, not a retry it answered) */
struct holder_req {
	struct queue_post post;
	int notify;
	const char *database;	/* holder_database_id of the filter's */
};

/* the length of holder_database_id's name, without its NUL */
#define HOLDER_DATABASE_ID_LEN	64

/* a name for the database conninfo (listgate.conf's database; NULL as
 * ""): its SHA-256 in hex, so the request never carries a password */
void holder_database_id(const char *conninfo,
    char out[HOLDER_DATABASE_ID_LEN + 1]);

/* an answer */
struct holder_ans {
	int held;		/* QUEUE_HELD_* */
	int64_t id;
	int notifying;		/* the holder sends the notices */
};

/* encode rq into out (reset first): all of the request but the post's
 * own bytes, which follow it on the wire.  0, or -1 (a field too long,
 * the post too large, out of memory) */
struct buf;
int holder_encode(const struct holder_req *rq, struct buf *out);

/* decode the LEN bytes after the 8-byte head, in place: body has one
 * byte more than len (for the last field's NUL).  The strings of rq
 * point into body.  0, or -1 with why */
int holder_decode(unsigned char *body, size_t len, struct holder_req *rq,
    char *why, size_t whysz);

/* the 8-byte head: 0 with *len_r, or -1 (not a request, too large) */
int holder_head(const unsigned char head[8], size_t *len_r);

/* format an answer line into out (HOLDER_MAX_ANSWER bytes); an error's
 * text is sanitized to one line */
void holder_answer_ok(char *out, const struct holder_ans *a);
void holder_answer_err(char *out, const char *text);
/* parse an answer line (NUL-terminated, no newline): 0 with *a, or -1
 * with the holder's error (or what was wrong with the line) in err */
int holder_answer_parse(const char *line, struct holder_ans *a, char *err,
    size_t errsz);

/*
 * The client (filter): hand rq to the holder listening at path, waiting
 * at most wait_ms in all.  A holder is trusted only when it runs as
 * root, as this process's user, or as the owner of path's directory.
 * 0 with *a: the post is held.  -1 with err: nothing is known; hold it
 * yourself.
 */
int holder_hold(const char *path, const struct holder_req *rq,
    unsigned wait_ms, struct holder_ans *a, char *err, size_t errsz);

/*
 * The server.  hold stores a request: 0 with *a, or -1 with err (sent
 * to the client, which then holds the post itself).  after, when set,
 * runs once the answer is sent and the connection closed (the
 * notices).  Each of workers processes (forked, each with its own
 * state in arg: open connections there lazily, after the fork) serves
 * one connection at a time.
 */
struct holder_server {
	const char *path;	/* the socket: created 0660, replaced only
				 * when stale (nothing answers there) */
	unsigned workers;
	int (*hold)(const struct holder_req *rq, struct holder_ans *a,
	    char *err, size_t errsz, void *arg);
	void (*after)(const struct holder_req *rq,
	    const struct holder_ans *a, void *arg);
	void *arg;
};

/* serve until SIGTERM or SIGINT: the workers finish the request they
 * are on, the socket is removed.  0, or -1 with err when it could not
 * start (the socket) */
int holder_serve(const struct holder_server *s, char *err, size_t errsz);

#endif

/*
 * holder.c - the holder's wire format and its client (see holder.h)
 *
 * The request's bytes come from a client of the socket: decoded with
 * every length checked against what is left, never trusted further.
 * The answer comes from the holder: parsed strictly, its text only
 * through the sanitizer.  The client trusts a holder only when the
 * process at the socket's other end (SO_PEERCRED) runs as root, as the
 * client's own user, or as the owner of the socket's directory; so a
 * socket in a shared directory such as /tmp is not trusted.
 */
#include "config.h"

#include <sys/stat.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nettle/sha2.h>

#include "gate/holder/holder.h"
#include "gate/util/buf.h"
#include "gate/util/clock.h"
#include "gate/util/sanitize.h"
#include "gate/util/sockio.h"

static const unsigned char magic[4] = { 'L', 'G', 'H', '1' };

static void
put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static uint32_t
get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* append one field: 0, or -1 (too long, memory) */
static int
put_field(struct buf *out, const void *p, size_t n, size_t max)
{
	unsigned char len[4];

	if (n > max)
		return -1;
	put32(len, (uint32_t)n);
	return buf_add(out, len, 4) < 0 || buf_add(out, p, n) < 0 ? -1 : 0;
}

static int
put_str(struct buf *out, const char *s)
{
	if (s == NULL)
		s = "";
	return put_field(out, s, strlen(s), LG_MAX_FIELD_BYTES);
}

int
holder_encode(const struct holder_req *rq, struct buf *out)
{
	const struct queue_post *p = &rq->post;
	const char *strs[HF_SCORE] = {
		[HF_LIST] = p->list, [HF_ENV_SENDER] = p->env_sender,
		[HF_ENV_RECIPIENT] = p->env_recipient, [HF_FROM] = p->from,
		[HF_SUBJECT] = p->subject, [HF_MSGID] = p->msgid,
		[HF_VERDICT] = p->verdict, [HF_CLUES] = p->clues,
		[HF_STATUS] = p->status, [HF_NOTE] = p->note
	};
	char score[40], days[16];
	unsigned char len[4];
	size_t i;

	buf_reset(out);
	if (p->raw_len > HOLDER_MAX_RAW)
		return -1;
	snprintf(score, sizeof(score), "%.17g", p->score);
	snprintf(days, sizeof(days), "%u", p->remember_days);
	if (buf_add(out, magic, 4) < 0 || buf_add(out, "\0\0\0\0", 4) < 0)
		return -1;
	for (i = 0; i < HF_SCORE; i++)
		if (put_str(out, strs[i]) < 0)
			return -1;
	if (put_str(out, score) < 0 || put_str(out, days) < 0 ||
	    put_str(out, rq->notify ? "1" : "0") < 0 ||
	    put_str(out, rq->database) < 0)
		return -1;
	/* the post's length: its bytes follow from where they are */
	put32(len, (uint32_t)p->raw_len);
	if (buf_add(out, len, 4) < 0 || out->len - 8 + p->raw_len >
	    HOLDER_MAX_REQ)
		return -1;
	put32(out->data + 4, (uint32_t)(out->len - 8 + p->raw_len));
	return 0;
}

void
holder_database_id(const char *conninfo, char out[HOLDER_DATABASE_ID_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	struct sha256_ctx h;
	unsigned char d[SHA256_DIGEST_SIZE];
	size_t i;

	if (conninfo == NULL)
		conninfo = "";
	sha256_init(&h);
	sha256_update(&h, strlen(conninfo), (const uint8_t *)conninfo);
	sha256_digest(&h, sizeof(d), d);
	for (i = 0; i < sizeof(d); i++) {
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 0xf];
	}
	out[2 * sizeof(d)] = '\0';
}

int
holder_head(const unsigned char head[8], size_t *len_r)
{
	uint32_t n = get32(head + 4);

	if (memcmp(head, magic, 4) != 0 || n > HOLDER_MAX_REQ)
		return -1;
	*len_r = n;
	return 0;
}

/* a decimal without sign, at most max: 0 with *v, or -1 */
static int
parse_uint(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return *end != '\0' || errno != 0 || *v > max ? -1 : 0;
}

int
holder_decode(unsigned char *body, size_t len, struct holder_req *rq,
    char *why, size_t whysz)
{
	unsigned char *f[HOLDER_NFIELDS];
	size_t flen[HOLDER_NFIELDS], off = 0, n;
	unsigned long v;
	char *end;
	size_t i;

	memset(rq, 0, sizeof(*rq));
	/*
	 * Each field's length is read before the byte in front of it is
	 * overwritten with the NUL that ends the field before: the strings
	 * are terminated in place (body has one spare byte at the end).
	 */
	for (i = 0; i < HOLDER_NFIELDS; i++) {
		if (len - off < 4) {
			snprintf(why, whysz, "request cut short in field %zu",
			    i + 1);
			return -1;
		}
		n = get32(body + off);
		if (i > 0)
			body[off] = '\0';
		off += 4;
		if (n > len - off || (i != HF_RAW && n > LG_MAX_FIELD_BYTES)) {
			snprintf(why, whysz, "field %zu is too long", i + 1);
			return -1;
		}
		f[i] = body + off;
		flen[i] = n;
		if (i != HF_RAW && memchr(f[i], '\0', n) != NULL) {
			snprintf(why, whysz, "field %zu holds a NUL", i + 1);
			return -1;
		}
		off += n;
	}
	if (off != len) {
		snprintf(why, whysz, "%zu bytes after the last field",
		    len - off);
		return -1;
	}
	body[len] = '\0';
	rq->post.list = (const char *)f[HF_LIST];
	rq->post.env_sender = (const char *)f[HF_ENV_SENDER];
	rq->post.env_recipient = (const char *)f[HF_ENV_RECIPIENT];
	rq->post.from = (const char *)f[HF_FROM];
	rq->post.subject = (const char *)f[HF_SUBJECT];
	rq->post.msgid = (const char *)f[HF_MSGID];
	rq->post.verdict = (const char *)f[HF_VERDICT];
	rq->post.clues = (const char *)f[HF_CLUES];
	rq->post.status = (const char *)f[HF_STATUS];
	rq->post.note = (const char *)f[HF_NOTE];
	rq->database = (const char *)f[HF_DATABASE];
	rq->post.raw = f[HF_RAW];
	rq->post.raw_len = flen[HF_RAW];
	rq->post.raw_fd = -1;
	if (strcmp(rq->post.status, "held") != 0 &&
	    strcmp(rq->post.status, "discarded") != 0) {
		snprintf(why, whysz, "bad status");
		return -1;
	}
	rq->post.score = strtod((const char *)f[HF_SCORE], &end);
	if (flen[HF_SCORE] == 0 || *end != '\0' ||
	    !isfinite(rq->post.score)) {
		snprintf(why, whysz, "bad score");
		return -1;
	}
	if (parse_uint((const char *)f[HF_REMEMBER_DAYS], 100000, &v) < 0) {
		snprintf(why, whysz, "bad remember_days");
		return -1;
	}
	rq->post.remember_days = (unsigned)v;
	if (parse_uint((const char *)f[HF_NOTIFY], 1, &v) < 0) {
		snprintf(why, whysz, "bad notify");
		return -1;
	}
	rq->notify = (int)v;
	return 0;
}

void
holder_answer_ok(char *out, const struct holder_ans *a)
{
	snprintf(out, HOLDER_MAX_ANSWER, "OK %d %" PRId64 " %d\n", a->held,
	    a->id, a->notifying ? 1 : 0);
}

void
holder_answer_err(char *out, const char *text)
{
	char clean[HOLDER_MAX_ANSWER - 8];

	snprintf(out, HOLDER_MAX_ANSWER, "ER %s\n", sanitize_str(clean,
	    sizeof(clean), text, strlen(text), SANITIZE_NO_LIMIT, SANITIZE_LOG,
	    0));
}

/* a decimal at the start of *s, at least lo and at most hi, followed
 * by a space or the end: 0 with *v and *s past it, or -1 */
static int
answer_num(const char **s, long long lo, long long hi, long long *v)
{
	char *end;

	if (**s < '0' || **s > '9')
		return -1;
	errno = 0;
	*v = strtoll(*s, &end, 10);
	if (errno != 0 || *v < lo || *v > hi || (*end != ' ' && *end != '\0'))
		return -1;
	*s = end;
	return 0;
}

int
holder_answer_parse(const char *line, struct holder_ans *a, char *err,
    size_t errsz)
{
	char clean[HOLDER_MAX_ANSWER];
	const char *s;
	long long held, id, notifying;

	memset(a, 0, sizeof(*a));
	if (strncmp(line, "ER ", 3) == 0) {
		snprintf(err, errsz, "the holder failed: %s", sanitize_str(
		    clean, sizeof(clean), line + 3, strlen(line + 3), 400,
		    SANITIZE_LOG, 0));
		return -1;
	}
	/* "OK HELD ID NOTIFYING": three decimals, one space apart */
	if (strncmp(line, "OK ", 3) != 0)
		goto bad;
	s = line + 3;
	if (answer_num(&s, QUEUE_HELD_NEW, QUEUE_HELD_DISCARDED, &held) < 0 ||
	    *s++ != ' ' || answer_num(&s, 1, INT64_MAX, &id) < 0 ||
	    *s++ != ' ' || answer_num(&s, 0, 1, &notifying) < 0 ||
	    *s != '\0')
		goto bad;
	a->held = (int)held;
	a->id = (int64_t)id;
	a->notifying = (int)notifying;
	return 0;
bad:
	snprintf(err, errsz, "the holder's answer is no answer: \"%s\"",
	    sanitize_str(clean, sizeof(clean), line, strlen(line), 100,
	    SANITIZE_LOG, 0));
	return -1;
}

/* read the answer line before deadline: 0 with line (NUL-terminated,
 * no newline), or -1 with err */
static int
read_answer(int fd, char *line, double deadline, char *err, size_t errsz)
{
	size_t n = 0;
	ssize_t got;
	char *nl;
	int r;

	for (;;) {
		got = recv(fd, line + n, HOLDER_MAX_ANSWER - 1 - n, 0);
		if (got > 0) {
			n += (size_t)got;
			line[n] = '\0';
			if ((nl = memchr(line, '\n', n)) != NULL) {
				*nl = '\0';
				return 0;
			}
			if (n == HOLDER_MAX_ANSWER - 1) {
				snprintf(err, errsz, "the holder's answer "
				    "has no end");
				return -1;
			}
			continue;
		}
		if (got == 0) {
			snprintf(err, errsz, "the holder closed the "
			    "connection without an answer");
			return -1;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			snprintf(err, errsz, "reading the holder's answer: %s",
			    strerror(errno));
			return -1;
		}
		if ((r = sock_wait(fd, POLLIN, deadline)) <= 0) {
			snprintf(err, errsz, "%s", r == 0 ? "the holder did "
			    "not answer in time" : strerror(errno));
			return -1;
		}
	}
}

/* send the post's bytes: from memory, or read from its file in
 * chunks (a spooled post is never touched whole through its mapping).
 * 0, or -1 with errno (EIO: the file ended early) */
static int
send_post(int fd, const struct queue_post *p, double deadline)
{
	unsigned char chunk[64 * 1024];
	size_t off = 0, want;
	ssize_t got;

	if (!p->raw_from_fd)
		return sock_send_all(fd, p->raw, p->raw_len, deadline);
	while (off < p->raw_len) {
		want = p->raw_len - off < sizeof(chunk) ? p->raw_len - off :
		    sizeof(chunk);
		got = pread(p->raw_fd, chunk, want, (off_t)off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			if (got == 0)
				errno = EIO;
			return -1;
		}
		if (sock_send_all(fd, chunk, (size_t)got, deadline) < 0)
			return -1;
		off += (size_t)got;
	}
	return 0;
}

/*
 * The holder at the other end of fd (connected to path) is one the
 * filter may trust with a post: it runs as root, as the filter's own
 * user, or as the owner of the socket's directory (the unit's
 * /run/listgate belongs to the listgate user).  A socket that another
 * local user put in a shared directory such as /tmp fails this.  0, or
 * -1 with err.
 */
static int
peer_ok(const char *path, int fd, char *err, size_t errsz)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	struct stat st;
	uid_t uid;
	size_t n;

	if (sock_peer_uid(fd, &uid) < 0) {
		snprintf(err, errsz, "the holder at %s: cannot tell who it "
		    "is: %s", path, strerror(errno));
		return -1;
	}
	if (uid == 0 || uid == geteuid())
		return 0;
	n = slash == NULL ? 0 : (size_t)(slash - path);
	if (n == 0)
		n = 1;		/* "/" itself, or a relative name: "." */
	if (n >= sizeof(dir)) {
		snprintf(err, errsz, "the holder at %s: path too long", path);
		return -1;
	}
	if (slash == NULL)
		memcpy(dir, ".", 2);
	else {
		memcpy(dir, path, n);
		dir[n] = '\0';
	}
	if (stat(dir, &st) < 0) {
		snprintf(err, errsz, "the holder at %s: %s: %s", path, dir,
		    strerror(errno));
		return -1;
	}
	if (st.st_uid != uid) {
		snprintf(err, errsz, "the holder at %s runs as user %lu, which "
		    "is neither root, this user (%lu) nor the owner of %s (%lu): "
		    "not trusted", path, (unsigned long)uid,
		    (unsigned long)geteuid(), dir, (unsigned long)st.st_uid);
		return -1;
	}
	return 0;
}

int
holder_hold(const char *path, const struct holder_req *rq,
    unsigned wait_ms, struct holder_ans *a, char *err, size_t errsz)
{
	struct buf req = BUF_INIT(HOLDER_MAX_REQ + 8);
	char line[HOLDER_MAX_ANSWER];
	double deadline = clock_now_ms() + wait_ms;
	int fd = -1, rc = -1;

	memset(a, 0, sizeof(*a));
	if (holder_encode(rq, &req) < 0) {
		snprintf(err, errsz, "the post cannot go to the holder (too "
		    "large, a field too long, or out of memory)");
		goto out;
	}
	if ((fd = sock_connect_unix(path, deadline)) < 0) {
		snprintf(err, errsz, "cannot connect to the holder at %s: %s",
		    path, errno == ETIMEDOUT ? "timed out" : strerror(errno));
		goto out;
	}
	if (peer_ok(path, fd, err, errsz) < 0)
		goto out;
	if (sock_send_all(fd, req.data, req.len, deadline) < 0 ||
	    send_post(fd, &rq->post, deadline) < 0) {
		snprintf(err, errsz, "sending the post to the holder: %s",
		    errno == ETIMEDOUT ? "timed out" : strerror(errno));
		goto out;
	}
	if (read_answer(fd, line, deadline, err, errsz) < 0 ||
	    holder_answer_parse(line, a, err, errsz) < 0)
		goto out;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	buf_free(&req);
	return rc;
}

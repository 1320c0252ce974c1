/*
 * lmtp.c - the LMTP client (RFC 2033) behind "deliver = lmtp:..." and
 * "release = lmtp:..."
 *
 * Trusts the destination (from the configuration, checked by
 * tmpl_lmtp_parse) and nothing else: the envelope sender is the
 * sender's choice and is written only as a checked path (lmtp_path), a
 * recipient the same; the server's replies are read in bounded lines
 * and its text leaves only through the sanitizer; the post is any bytes.
 * The socket is non-blocking and every wait is a poll(2) with the
 * stage's deadline, so no server can hold us past the caller's total;
 * send(2) uses MSG_NOSIGNAL, so a server that goes away raises no
 * SIGPIPE.  Host names go through getaddrinfo(3): a name (rather than
 * an address) is looked up with the resolver's own time-outs.  Never
 * logs, never exits.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "gate/app/lmtp.h"
#include "gate/util/clock.h"
#include "gate/util/lglimits.h"
#include "gate/util/sanitize.h"
#include "gate/util/sockio.h"
#include "gate/util/utf8.h"
#include "gate/util/xalloc.h"
#include "listcfg/tmpl.h"

#define RBUF		4096		/* reply bytes read at once */
#define WBUF		(64u * 1024u)	/* post bytes sent at once */
#define QUIT_WAIT_MS	1000		/* after delivery: QUIT's reply */
#define REPLY_TEXT	200		/* characters of a reply in err */
#define UNIX_RETRY_MS	10		/* a Unix socket's full queue: the
					 * pause before connecting again */

/* LHLO extensions we use */
#define EXT_8BITMIME	0x1u
#define EXT_SMTPUTF8	0x2u

/* one connection */
struct lmtp {
	int fd;
	double end;			/* the total's deadline (ms), 0: none */
	struct lmtp_limits lim;
	const char *dest;
	unsigned char rbuf[RBUF];	/* read, not yet taken as lines */
	size_t rlen;
	int code;			/* the last reply's code */
	char text[LG_MAX_LMTP_LINE + 1];	/* its first line, after
						 * the code */
	size_t textlen;
	unsigned ext;			/* EXT_* from LHLO */
	char *err;
	size_t errsz;
};

/* the server has the post of the running or last lmtp_deliver: the
 * calling thread's (listgate web's releases run in threads at once) */
static __thread volatile sig_atomic_t delivered;

int
lmtp_last_ok(void)
{
	return delivered != 0;
}

void
lmtp_limits_default(struct lmtp_limits *lim)
{
	lim->connect_ms = LG_LMTP_CONNECT_MS;
	lim->reply_ms = LG_LMTP_REPLY_MS;
	lim->data_ms = LG_LMTP_DATA_MS;
}

/* --- addresses ---------------------------------------------------------- */

/* RFC 5322 atext, and any UTF-8 (already checked) byte */
static int
atext(unsigned char c)
{
	return c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || (c != '\0' && strchr("!#$%&'*+-/=?^_`{|}~",
	    c) != NULL);
}

/* 1 if the n bytes at p are a dot-string: atoms of atext joined by
 * single dots */
static int
dot_string(const unsigned char *p, size_t n)
{
	size_t i;

	if (n == 0 || p[0] == '.' || p[n - 1] == '.')
		return 0;
	for (i = 0; i < n; i++) {
		if (p[i] == '.') {
			if (p[i + 1] == '.')
				return 0;
		} else if (!atext(p[i]))
			return 0;
	}
	return 1;
}

/* 1 if the n bytes at p are a quoted-string (RFC 5321 4.1.2): '"', any
 * characters but '"' and '\\' or a '\\' and a printable ASCII one, '"'.
 * (Controls and invalid UTF-8 are refused before.) */
static int
quoted_string(const unsigned char *p, size_t n)
{
	size_t i;

	if (n < 2 || p[0] != '"' || p[n - 1] != '"')
		return 0;
	for (i = 1; i + 1 < n; i++) {
		if (p[i] == '"')
			return 0;
		if (p[i] == '\\') {
			/* (not the closing quote, which it would escape) */
			if (i + 2 >= n || p[i + 1] < 0x20 || p[i + 1] > 0x7e)
				return 0;
			i++;
		}
	}
	return 1;
}

/* 1 if the n bytes at p may be a domain: a name (letters, digits, '-',
 * '_', '.', UTF-8) or an address literal in [ ] */
static int
domain_ok(const unsigned char *p, size_t n)
{
	size_t i;

	if (n == 0)
		return 0;
	if (p[0] == '[') {
		if (n < 3 || p[n - 1] != ']')
			return 0;
		for (i = 1; i + 1 < n; i++)
			if (!((p[i] >= 'a' && p[i] <= 'z') ||
			    (p[i] >= 'A' && p[i] <= 'Z') ||
			    (p[i] >= '0' && p[i] <= '9') || p[i] == '.' ||
			    p[i] == ':' || p[i] == '-'))
				return 0;
		return 1;
	}
	if (p[0] == '.' || p[n - 1] == '.')
		return 0;
	for (i = 0; i < n; i++)
		if (!(p[i] >= 0x80 || (p[i] >= 'a' && p[i] <= 'z') ||
		    (p[i] >= 'A' && p[i] <= 'Z') ||
		    (p[i] >= '0' && p[i] <= '9') || p[i] == '-' ||
		    p[i] == '_' || (p[i] == '.' && p[i + 1] != '.')))
			return 0;
	return 1;
}

int
lmtp_path(const char *addr, char *out, size_t outsz)
{
	const unsigned char *a = (const unsigned char *)addr, *at = NULL;
	size_t n, ln, i, k, o = 0, max;
	uint32_t cp;
	int utf8 = 0;

	if (outsz == 0)
		return -1;
	out[0] = '\0';
	n = strlen(addr);
	if (n == 0)
		return 0;
	for (i = 0; i < n; i += k) {
		if (a[i] < 0x20 || a[i] == 0x7f)
			return -1;
		k = 1;
		if (a[i] >= 0x80) {
			if ((k = utf8_decode(a + i, n - i, &cp)) == 0)
				return -1;
			utf8 = 1;
		}
	}
	/* LOCAL@DOMAIN, split at the last '@'; a bare local part (no '@':
	 * "postmaster") goes as it is */
	for (i = n; i > 0; i--)
		if (a[i - 1] == '@') {
			at = a + i - 1;
			break;
		}
	ln = at != NULL ? (size_t)(at - a) : n;
	if (ln == 0 || (at != NULL && !domain_ok(at + 1, n - ln - 1)))
		return -1;
	max = outsz - 1 < LG_MAX_LMTP_PATH ? outsz - 1 : LG_MAX_LMTP_PATH;
	/* a local part quoted already (Postfix's pipe(8) with flags=q
	 * quotes the envelope it hands over) is written as it is: quoted
	 * again, it would name another mailbox */
	if (dot_string(a, ln) || quoted_string(a, ln)) {
		if (n > max)
			return -1;
		memcpy(out, a, n);
		out[n] = '\0';
		return utf8;
	}
	/* a quoted-string: '"' and '\\' escaped, the rest as it is */
	if (o + 1 > max)
		return -1;
	out[o++] = '"';
	for (i = 0; i < ln; i++) {
		if (a[i] == '"' || a[i] == '\\') {
			if (o + 1 > max)
				return -1;
			out[o++] = '\\';
		}
		if (o + 1 > max)
			return -1;
		out[o++] = (char)a[i];
	}
	if (o + 1 + (n - ln) > max)
		return -1;
	out[o++] = '"';
	memcpy(out + o, a + ln, n - ln);
	o += n - ln;
	out[o] = '\0';
	return utf8;
}

/* --- the connection ------------------------------------------------------- */

/* say what went wrong at stage (printf-like) */
static int __attribute__((format(printf, 3, 4)))
fail(struct lmtp *c, int rc, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	n = (size_t)snprintf(c->err, c->errsz, "%s: ", c->dest);
	if (n < c->errsz) {
		va_start(ap, fmt);
		vsnprintf(c->err + n, c->errsz - n, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* the deadline of a stage that may take ms: within the total */
static double
stage_end(const struct lmtp *c, unsigned ms)
{
	double d = clock_now_ms() + ms;

	return c->end > 0 && c->end < d ? c->end : d;
}

/* connect to the destination: 0, or LMTP_TEMP / LMTP_PERM with err */
static int
lmtp_connect(struct lmtp *c, const struct tmpl_lmtp *d)
{
	struct addrinfo hints, *res = NULL, *ai;
	double deadline = stage_end(c, c->lim.connect_ms);
	int r, e = 0;

	if (d->unix_socket) {
		/* a full listen queue refuses a Unix socket's connect at
		 * once (EAGAIN: a burst), where TCP waits: try again until
		 * the connect time-out, as over TCP */
		while ((c->fd = sock_connect_unix(d->path, deadline)) < 0 &&
		    errno == EAGAIN && clock_now_ms() < deadline)
			(void)poll(NULL, 0, UNIX_RETRY_MS);
		if (c->fd < 0)
			return fail(c, LMTP_TEMP, "cannot connect: %s",
			    errno == EAGAIN ? "timed out (the server's queue "
			    "of connections is full)" : strerror(errno));
		return 0;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	if ((r = getaddrinfo(d->host, d->port, &hints, &res)) != 0)
		return fail(c, LMTP_TEMP, "cannot resolve %s: %s", d->host,
		    r == EAI_SYSTEM ? strerror(errno) : gai_strerror(r));
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		c->fd = sock_connect(ai->ai_family, ai->ai_addr, ai->ai_addrlen,
		    deadline);
		if (c->fd >= 0)
			break;
		e = errno;
		if (e == ETIMEDOUT)
			break;
	}
	freeaddrinfo(res);
	if (c->fd < 0)
		return fail(c, LMTP_TEMP, "cannot connect: %s",
		    e == ETIMEDOUT ? "timed out" : strerror(e));
	return 0;
}

/* send all n bytes at p before deadline: 0, or -1 with errno */
static int
send_all(struct lmtp *c, const void *p, size_t n, double deadline)
{
	return sock_send_all(c->fd, p, n, deadline);
}

/*
 * One line of a reply into line (LG_MAX_LMTP_LINE bytes at most: the
 * rest of a longer line is read and dropped), without its CRLF or LF:
 * its length, or -1 (errno: ETIMEDOUT, ECONNRESET for a connection
 * closed, or the read's).
 */
static long
read_line(struct lmtp *c, char *line, double deadline)
{
	unsigned char *lf;
	size_t n, keep = 0, take;
	ssize_t r;
	int w, cut = 0;

	for (;;) {
		lf = memchr(c->rbuf, '\n', c->rlen);
		n = lf != NULL ? (size_t)(lf - c->rbuf) : c->rlen;
		if (!cut) {
			take = n;
			if (keep + take > LG_MAX_LMTP_LINE) {
				/* the rest of the line is dropped */
				take = LG_MAX_LMTP_LINE - keep;
				cut = 1;
			}
			memcpy(line + keep, c->rbuf, take);
			keep += take;
		}
		if (lf != NULL) {
			c->rlen -= n + 1;
			memmove(c->rbuf, lf + 1, c->rlen);
			/* the CR of CRLF, which may have come in the read
			 * before its LF */
			if (!cut && keep > 0 && line[keep - 1] == '\r')
				keep--;
			line[keep] = '\0';
			return (long)keep;
		}
		/* no line end yet: what we have is taken (or dropped) */
		c->rlen = 0;
		w = sock_wait(c->fd, POLLIN, deadline);
		if (w <= 0) {
			if (w == 0)
				errno = ETIMEDOUT;
			return -1;
		}
		r = recv(c->fd, c->rbuf, sizeof(c->rbuf), 0);
		if (r == 0) {
			errno = ECONNRESET;
			return -1;
		}
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN ||
			    errno == EWOULDBLOCK)
				continue;
			return -1;
		}
		c->rlen = (size_t)r;
	}
}

/*
 * Read one reply (all its lines) before deadline into c->code and
 * c->text; lhlo: note the extensions.  0, or LMTP_TEMP with err (no
 * reply, a time-out, a line that is no reply, lines with different
 * codes, too many lines).
 */
static int
read_reply(struct lmtp *c, const char *stage, double deadline, int lhlo)
{
	char line[LG_MAX_LMTP_LINE + 1], shown[REPLY_TEXT * 4];
	long n;
	unsigned i;
	int code;
	const char *kw;

	for (i = 0; i < LG_MAX_LMTP_REPLY_LINES; i++) {
		if ((n = read_line(c, line, deadline)) < 0) {
			if (errno == ETIMEDOUT)
				return fail(c, LMTP_TEMP, "%s: no reply in "
				    "time", stage);
			if (errno == ECONNRESET || errno == EPIPE)
				return fail(c, LMTP_TEMP, "%s: the server "
				    "closed the connection", stage);
			return fail(c, LMTP_TEMP, "%s: %s", stage,
			    strerror(errno));
		}
		if (n < 3 || line[0] < '1' || line[0] > '5' ||
		    line[1] < '0' || line[1] > '9' || line[2] < '0' ||
		    line[2] > '9' || (n > 3 && line[3] != ' ' &&
		    line[3] != '-'))
			return fail(c, LMTP_TEMP, "%s: not a reply: \"%s\"",
			    stage, sanitize_str(shown, sizeof(shown), line,
			    (size_t)n, REPLY_TEXT, SANITIZE_TEXT, 0));
		code = (line[0] - '0') * 100 + (line[1] - '0') * 10 +
		    (line[2] - '0');
		/* every line of a reply has the same code (RFC 5321
		 * 4.2.1): "550-no" then "250 ok" is no answer to act on,
		 * least of all as a delivery */
		if (i > 0 && code != c->code)
			return fail(c, LMTP_TEMP, "%s: a reply whose lines "
			    "have different codes (%d, then %d)", stage,
			    c->code, code);
		c->code = code;
		if (i == 0) {
			c->textlen = n > 4 ? (size_t)n - 4 : 0;
			if (c->textlen > 0)
				memcpy(c->text, line + 4, c->textlen);
			c->text[c->textlen] = '\0';
		} else if (lhlo && n > 4) {
			/* (a bare "250" names none: what follows its NUL
			 * is the line before's) */
			kw = line + 4;
			if (strncasecmp(kw, "8BITMIME", 8) == 0 &&
			    (kw[8] == '\0' || kw[8] == ' '))
				c->ext |= EXT_8BITMIME;
			else if (strncasecmp(kw, "SMTPUTF8", 8) == 0 &&
			    (kw[8] == '\0' || kw[8] == ' '))
				c->ext |= EXT_SMTPUTF8;
		}
		if (n == 3 || line[3] == ' ')
			return 0;
	}
	return fail(c, LMTP_TEMP, "%s: a reply of more than %u lines", stage,
	    (unsigned)LG_MAX_LMTP_REPLY_LINES);
}

/*
 * Before a command or the post: the server has said nothing beyond its
 * last reply.  A server that answers ahead (a reply to the data before
 * the data was sent, a command answered twice) is out of step, and a
 * 250 it already sent would later be taken as the delivery of a post it
 * never read.  0, or LMTP_TEMP with err.
 */
static int
in_step(struct lmtp *c, const char *stage)
{
	unsigned char b;

	if (c->rlen > 0 || recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0)
		return fail(c, LMTP_TEMP, "%s: the server sent more than its "
		    "reply to the last command (out of step)", stage);
	return 0;
}

/* the last reply for err: "550 text" (sanitized, cut) */
static const char *
reply_str(const struct lmtp *c, char *out, size_t outsz)
{
	char t[REPLY_TEXT * 4];

	snprintf(out, outsz, "%d %s", c->code, sanitize_str(t, sizeof(t),
	    c->text, c->textlen, REPLY_TEXT, SANITIZE_TEXT, 0));
	return out;
}

/*
 * Send cmd (CRLF added) and read its reply: 0 when its code's first
 * digit is want, LMTP_PERM for a 5xx, LMTP_TEMP for anything else (err
 * says which).  stage names the command in err.
 */
static int
command(struct lmtp *c, const char *cmd, const char *stage, int want,
    int lhlo)
{
	char line[LG_MAX_LMTP_PATH * 2 + 128], shown[REPLY_TEXT * 4 + 16];
	int n;

	n = snprintf(line, sizeof(line), "%s\r\n", cmd);
	if (n < 0 || (size_t)n >= sizeof(line))
		return fail(c, LMTP_TEMP, "%s: command too long", stage);
	if (in_step(c, stage) < 0)
		return LMTP_TEMP;
	if (send_all(c, line, (size_t)n, stage_end(c, c->lim.reply_ms)) < 0)
		return fail(c, LMTP_TEMP, "%s: %s", stage, errno == ETIMEDOUT ?
		    "could not send in time" : errno == EPIPE ||
		    errno == ECONNRESET ? "the server closed the connection" :
		    strerror(errno));
	if ((n = read_reply(c, stage, stage_end(c, c->lim.reply_ms),
	    lhlo)) < 0)
		return n;
	if (c->code / 100 == want)
		return 0;
	return fail(c, c->code / 100 == 5 ? LMTP_PERM : LMTP_TEMP, "%s: %s",
	    stage, reply_str(c, shown, sizeof(shown)));
}

/* our name for LHLO: the host name if it is one, else "localhost" */
static void
my_name(char *out, size_t outsz)
{
	char h[256];
	size_t i;

	snprintf(out, outsz, "localhost");
	if (gethostname(h, sizeof(h)) < 0)
		return;
	h[sizeof(h) - 1] = '\0';
	for (i = 0; h[i] != '\0'; i++)
		if (!((h[i] >= 'a' && h[i] <= 'z') ||
		    (h[i] >= 'A' && h[i] <= 'Z') ||
		    (h[i] >= '0' && h[i] <= '9') || h[i] == '-' ||
		    h[i] == '.'))
			return;
	if (i > 0)
		snprintf(out, outsz, "%s", h);
}

/* --- the post ------------------------------------------------------------- */

/* the post as DATA sends it (see lmtp.h), into the connection */
struct out {
	struct lmtp *c;
	unsigned char *w;
	size_t wn;
	size_t col;		/* bytes on the current line */
	int bol;		/* at the start of a line */
	unsigned *notes;
	double deadline;
	size_t sent;
};

static int
flush_out(struct out *o)
{
	if (o->wn == 0)
		return 0;
	if (send_all(o->c, o->w, o->wn, o->deadline) < 0)
		return -1;
	o->sent += o->wn;
	o->wn = 0;
	return 0;
}

/* one byte of a line (not its end): folded and dot-stuffed */
static int
put_byte(struct out *o, unsigned char b)
{
	if (o->wn + 8 > WBUF && flush_out(o) < 0)
		return -1;
	if (o->col >= LG_MAX_LMTP_DATA_LINE) {
		o->w[o->wn++] = '\r';
		o->w[o->wn++] = '\n';
		o->w[o->wn++] = ' ';
		o->col = 1;
		o->bol = 0;
		*o->notes |= LMTP_NOTE_FOLDED;
	}
	if (o->bol && b == '.') {
		o->w[o->wn++] = '.';
		o->col++;
	}
	o->w[o->wn++] = b;
	o->col++;
	o->bol = 0;
	return 0;
}

static int
put_eol(struct out *o)
{
	if (o->wn + 8 > WBUF && flush_out(o) < 0)
		return -1;
	o->w[o->wn++] = '\r';
	o->w[o->wn++] = '\n';
	o->col = 0;
	o->bol = 1;
	return 0;
}

/* send the post and the final dot: 0, or -1 (errno) */
static int
send_post(struct lmtp *c, const unsigned char *data, size_t len,
    unsigned *notes, double deadline, size_t *sent_r)
{
	struct out o;
	size_t i;
	int cr = 0, rc = -1;

	memset(&o, 0, sizeof(o));
	o.c = c;
	o.bol = 1;
	o.notes = notes;
	o.deadline = deadline;
	if ((o.w = xmalloc(WBUF)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < len; i++) {
		if (data[i] == '\n') {
			/* LF and CRLF end a line */
			cr = 0;
			if (put_eol(&o) < 0)
				goto out;
			continue;
		}
		if (cr) {
			/* a bare CR is data */
			cr = 0;
			if (put_byte(&o, '\r') < 0)
				goto out;
		}
		if (data[i] == '\r') {
			cr = 1;
			continue;
		}
		if (put_byte(&o, data[i]) < 0)
			goto out;
	}
	if (cr && put_byte(&o, '\r') < 0)
		goto out;
	/* a last line without its newline gets one */
	if (!o.bol && put_eol(&o) < 0)
		goto out;
	if (o.wn + 3 > WBUF && flush_out(&o) < 0)
		goto out;
	memcpy(o.w + o.wn, ".\r\n", 3);
	o.wn += 3;
	if (flush_out(&o) < 0)
		goto out;
	rc = 0;
out:
	*sent_r = o.sent;
	xfree(o.w);
	return rc;
}

/* 1 if the post has a byte above 127 */
static int
has_8bit(const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] & 0x80)
			return 1;
	return 0;
}

/* --- the transaction ------------------------------------------------------ */

int
lmtp_deliver(const char *dest, const char *sender, const char *rcpt,
    const unsigned char *data, size_t len, unsigned total_ms,
    const struct lmtp_limits *lim, unsigned *notes_r, char *err,
    size_t errsz)
{
	static const char nomem[] = "out of memory";
	struct tmpl_lmtp d;
	struct lmtp *c;
	char spath[LG_MAX_LMTP_PATH + 1], rpath[LG_MAX_LMTP_PATH + 1];
	char cmd[LG_MAX_LMTP_PATH * 2 + 64], host[256], derr[512];
	char shown[REPLY_TEXT * 4 + 16];
	unsigned notes = 0;
	size_t sent = 0;
	int s8, r8, rc, e, eight;

	delivered = 0;
	if (notes_r != NULL)
		*notes_r = 0;
	if (errsz > 0)
		err[0] = '\0';
	if (tmpl_lmtp_parse(dest, &d, derr, sizeof(derr)) < 0) {
		snprintf(err, errsz, "%s", derr);
		return LMTP_TEMP;
	}
	if ((c = xcalloc(1, sizeof(*c))) == NULL) {
		snprintf(err, errsz, "%s: %s", dest, nomem);
		return LMTP_TEMP;
	}
	c->fd = -1;
	c->dest = dest;
	c->err = err;
	c->errsz = errsz;
	c->end = total_ms > 0 ? clock_now_ms() + total_ms : 0;
	if (lim != NULL)
		c->lim = *lim;
	else
		lmtp_limits_default(&c->lim);

	/* the addresses first: a recipient that cannot be written is
	 * refused for good, a sender that cannot becomes <> */
	if (rcpt == NULL || rcpt[0] == '\0' ||
	    (r8 = lmtp_path(rcpt, rpath, sizeof(rpath))) < 0) {
		rc = fail(c, LMTP_PERM, "the recipient cannot be written in "
		    "RCPT TO");
		goto out;
	}
	if ((s8 = lmtp_path(sender != NULL ? sender : "", spath,
	    sizeof(spath))) < 0) {
		spath[0] = '\0';
		s8 = 0;
		notes |= LMTP_NOTE_NULL_SENDER;
	}

	if ((rc = lmtp_connect(c, &d)) < 0)
		goto out;
	if ((rc = read_reply(c, "greeting", stage_end(c, c->lim.reply_ms),
	    0)) < 0)
		goto out;
	if (c->code / 100 != 2) {
		rc = fail(c, c->code / 100 == 5 ? LMTP_PERM : LMTP_TEMP,
		    "greeting: %s", reply_str(c, shown, sizeof(shown)));
		goto out;
	}
	my_name(host, sizeof(host));
	snprintf(cmd, sizeof(cmd), "LHLO %s", host);
	if ((rc = command(c, cmd, "LHLO", 2, 1)) < 0)
		goto out;
	if (r8 && !(c->ext & EXT_SMTPUTF8)) {
		rc = fail(c, LMTP_PERM, "RCPT TO: the recipient is UTF-8 and "
		    "the server does not offer SMTPUTF8");
		goto out;
	}
	if (s8 && !(c->ext & EXT_SMTPUTF8)) {
		spath[0] = '\0';
		s8 = 0;
		notes |= LMTP_NOTE_NULL_SENDER;
	}
	eight = has_8bit(data, len);
	if (eight && !(c->ext & EXT_8BITMIME))
		notes |= LMTP_NOTE_8BIT_NO_MIME;
	snprintf(cmd, sizeof(cmd), "MAIL FROM:<%s>%s%s", spath,
	    eight && (c->ext & EXT_8BITMIME) ? " BODY=8BITMIME" : "",
	    s8 || r8 ? " SMTPUTF8" : "");
	if ((rc = command(c, cmd, "MAIL FROM", 2, 0)) < 0)
		goto out;
	snprintf(cmd, sizeof(cmd), "RCPT TO:<%s>", rpath);
	if ((rc = command(c, cmd, "RCPT TO", 2, 0)) < 0)
		goto out;
	if ((rc = command(c, "DATA", "DATA", 3, 0)) < 0 ||
	    (rc = in_step(c, "DATA")) < 0)
		goto out;
	if (send_post(c, data, len, &notes, stage_end(c, c->lim.data_ms),
	    &sent) < 0) {
		e = errno;
		/* a server that refused the post and hung up may have said
		 * why: take a reply already there */
		if (e != ETIMEDOUT && e != ENOMEM &&
		    read_reply(c, "data", clock_now_ms(), 0) == 0 &&
		    c->code / 100 == 5) {
			rc = fail(c, LMTP_PERM, "while sending the post: %s",
			    reply_str(c, shown, sizeof(shown)));
			goto out;
		}
		rc = fail(c, LMTP_TEMP, "sending the post: %s (%zu of about "
		    "%zu bytes sent)", e == ETIMEDOUT ? "timed out" :
		    e == EPIPE || e == ECONNRESET ? "the server closed the "
		    "connection" : strerror(e), sent, len);
		goto out;
	}
	/* no answer to the whole post is no refusal: the server may have
	 * taken it (a release said to have failed would be approved, and
	 * sent to the list, again) */
	if (read_reply(c, "end of data", stage_end(c, c->lim.reply_ms),
	    0) < 0) {
		rc = LMTP_UNSURE;
		goto out;
	}
	if (c->code / 100 != 2) {
		rc = fail(c, c->code / 100 == 5 ? LMTP_PERM : LMTP_TEMP,
		    "end of data: %s", reply_str(c, shown, sizeof(shown)));
		goto out;
	}
	/* delivered: a polite QUIT, its reply not awaited for long (a stop
	 * meanwhile finds the post delivered) */
	delivered = 1;
	rc = LMTP_OK;
	if (send_all(c, "QUIT\r\n", 6, stage_end(c, QUIT_WAIT_MS)) == 0)
		(void)read_reply(c, "QUIT", stage_end(c, QUIT_WAIT_MS), 0);
	if (errsz > 0)
		err[0] = '\0';
out:
	if (rc != LMTP_OK && c->fd >= 0)
		(void)send(c->fd, "QUIT\r\n", 6, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (c->fd >= 0)
		close(c->fd);
	xfree(c);
	if (notes_r != NULL)
		*notes_r = notes;
	return rc;
}

/*
 * webload.c - the load check of `listgate web` (tests/web_load.sh): many
 * concurrent API reads plus a steady rate of decisions, on loopback
 *
 *   webload PORT SECONDS READERS READ_RATE DECIDE_RATE AUTH LIST IDS OUT
 *
 * READERS keep-alive connections each GET /api/lists/LIST/held?limit=20
 * in a loop (READ_RATE requests per second in all, 0: as fast as the
 * server answers).  DECIDE_RATE times a second a POST decides the next
 * id of the file IDS (approve, reject, discard in turn) on its own
 * connection (a pool of 16).  AUTH is "user:password" (HTTP Basic).
 * Prints the counts, errors and latency percentiles; writes "ID ACTION
 * STATUS" per decision to OUT.  Only ever connects to 127.0.0.1.  Exit
 * 0, 1 on a usage or setup error.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXC	1024
#define NDEC	16

struct conn {
	int fd, kind;		/* 0 reader, 1 decider */
	int busy;
	double t0;
	char req[512];
	size_t reqlen, sent;
	char buf[65536];
	size_t got;
	long id;
	const char *action;
};

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

static int port;
static int ep;

static int
dial(struct conn *c)
{
	struct sockaddr_in a;
	struct epoll_event ev;
	int one = 1;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((unsigned short)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((c->fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		return -1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(c->fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(c->fd);
		return -1;
	}
	fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
	ev.events = EPOLLIN;
	ev.data.ptr = c;
	epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
	return 0;
}

static int
cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
pct(double *v, size_t n, double p)
{
	size_t i;

	if (n == 0)
		return 0;
	i = (size_t)(p * (double)(n - 1) + 0.5);
	return v[i];
}

/* base64 of s */
static void
b64(const char *s, char *out)
{
	static const char t[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(s), i, o = 0;
	unsigned v;

	for (i = 0; i + 2 < n; i += 3) {
		v = (unsigned char)s[i] << 16 | (unsigned char)s[i + 1] << 8 |
		    (unsigned char)s[i + 2];
		out[o++] = t[v >> 18];
		out[o++] = t[v >> 12 & 63];
		out[o++] = t[v >> 6 & 63];
		out[o++] = t[v & 63];
	}
	if (n - i == 1) {
		v = (unsigned char)s[i] << 16;
		out[o++] = t[v >> 18];
		out[o++] = t[v >> 12 & 63];
		out[o++] = '=';
		out[o++] = '=';
	} else if (n - i == 2) {
		v = (unsigned char)s[i] << 16 | (unsigned char)s[i + 1] << 8;
		out[o++] = t[v >> 18];
		out[o++] = t[v >> 12 & 63];
		out[o++] = t[v >> 6 & 63];
		out[o++] = '=';
	}
	out[o] = '\0';
}

static int
send_some(struct conn *c)
{
	ssize_t w;

	while (c->sent < c->reqlen) {
		w = write(c->fd, c->req + c->sent, c->reqlen - c->sent);
		if (w < 0)
			return errno == EAGAIN ? 0 : -1;
		c->sent += (size_t)w;
	}
	return 0;
}

/* a whole response in c->buf: its status, or 0 not yet, -1 bad */
static int
response(struct conn *c)
{
	char *e, *cl;
	size_t hl, bl;

	c->buf[c->got < sizeof(c->buf) ? c->got : sizeof(c->buf) - 1] = '\0';
	if ((e = strstr(c->buf, "\r\n\r\n")) == NULL)
		return c->got >= sizeof(c->buf) - 1 ? -1 : 0;
	hl = (size_t)(e + 4 - c->buf);
	cl = strcasestr(c->buf, "\r\nContent-Length:");
	bl = cl && cl < e ? strtoul(cl + 17, NULL, 10) : 0;
	if (c->got < hl + bl)
		return 0;
	return atoi(c->buf + 9);
}

int
main(int argc, char **argv)
{
	static struct conn cs[MAXC];
	struct epoll_event evs[64];
	double secs, rrate, drate, start, end, t, next_read, next_dec;
	double *rl, *dl;
	size_t nrl = 0, ndl = 0, cap = 4000000, nids = 0, di = 0;
	long *ids, rerr = 0, derr = 0, nread = 0, ndec = 0, d200 = 0;
	long status_count[600];
	char auth[300], line[64], *list;
	const char *actions[] = { "approve", "reject", "discard" };
	int readers, i, n, k, st, next_reader = 0;
	FILE *f, *out;

	if (argc != 10) {
		fprintf(stderr, "usage: webload PORT SECONDS READERS READ_RATE "
		    "DECIDE_RATE USER:PASS LIST IDS OUT\n");
		return 1;
	}
	port = atoi(argv[1]);
	secs = atof(argv[2]);
	readers = atoi(argv[3]);
	rrate = atof(argv[4]);
	drate = atof(argv[5]);
	b64(argv[6], auth);
	list = argv[7];
	if (readers < 1 || readers + NDEC > MAXC || secs <= 0 || secs > 600) {
		fprintf(stderr, "webload: bad arguments\n");
		return 1;
	}
	ids = calloc(100000, sizeof(*ids));
	rl = calloc(cap, sizeof(*rl));
	dl = calloc(100000, sizeof(*dl));
	if ((f = fopen(argv[8], "r")) == NULL || !ids || !rl || !dl)
		return 1;
	while (nids < 100000 && fgets(line, sizeof(line), f))
		ids[nids++] = atol(line);
	fclose(f);
	if ((out = fopen(argv[9], "w")) == NULL)
		return 1;
	memset(status_count, 0, sizeof(status_count));
	ep = epoll_create1(0);
	for (i = 0; i < readers + NDEC; i++) {
		cs[i].kind = i >= readers;
		if (dial(&cs[i]) < 0) {
			fprintf(stderr, "webload: cannot connect\n");
			return 1;
		}
	}
	start = now_ms();
	end = start + secs * 1000;
	next_read = next_dec = start;
	for (;;) {
		t = now_ms();
		if (t >= end)
			break;
		/* start reads: all idle readers (closed loop) or paced, in
		 * turn from where the last read started, so that every
		 * reader's connection carries its share (from reader 0 each
		 * time, a few did all the reading and the others sat idle
		 * until the server's idle timeout closed them all at once) */
		for (k = 0; k < readers; k++) {
			struct conn *c;

			i = (next_reader + k) % readers;
			c = &cs[i];

			if (c->busy || c->fd < 0)
				continue;
			if (rrate > 0) {
				if (t < next_read)
					break;
				next_read += 1000.0 / rrate;
			}
			c->reqlen = (size_t)snprintf(c->req, sizeof(c->req),
			    "GET /api/lists/%s/held?limit=20 HTTP/1.1\r\n"
			    "Host: 127.0.0.1\r\nAuthorization: Basic %s\r\n\r\n",
			    list, auth);
			c->sent = c->got = 0;
			c->busy = 1;
			c->t0 = now_ms();
			next_reader = (i + 1) % readers;
			if (send_some(c) < 0)
				rerr++;
		}
		/* start decisions at their rate */
		while (drate > 0 && t >= next_dec && di < nids) {
			struct conn *c = NULL;

			for (k = readers; k < readers + NDEC; k++)
				if (!cs[k].busy && cs[k].fd >= 0) {
					c = &cs[k];
					break;
				}
			if (c == NULL)
				break;	/* all busy: it goes late */
			next_dec += 1000.0 / drate;
			c->id = ids[di];
			c->action = actions[di % 3];
			di++;
			c->reqlen = (size_t)snprintf(c->req, sizeof(c->req),
			    "POST /api/lists/%s/held/%ld HTTP/1.1\r\n"
			    "Host: 127.0.0.1\r\nAuthorization: Basic %s\r\n"
			    "Content-Type: application/x-www-form-urlencoded\r\n"
			    "Content-Length: %zu\r\n\r\naction=%s", list, c->id,
			    auth, strlen("action=") + strlen(c->action),
			    c->action);
			c->sent = c->got = 0;
			c->busy = 1;
			c->t0 = now_ms();
			if (send_some(c) < 0)
				derr++;
		}
		n = epoll_wait(ep, evs, 64, 1);
		for (i = 0; i < n; i++) {
			struct conn *c = evs[i].data.ptr;
			ssize_t r = read(c->fd, c->buf + c->got,
			    sizeof(c->buf) - 1 - c->got);

			if (r <= 0) {
				if (r < 0 && errno == EAGAIN)
					continue;
				/* closed: count an error if busy, redial */
				if (c->busy) {
					if (c->kind)
						derr++;
					else
						rerr++;
				}
				epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
				close(c->fd);
				c->busy = 0;
				if (dial(c) < 0)
					c->fd = -1;
				continue;
			}
			c->got += (size_t)r;
			if ((st = response(c)) == 0)
				continue;
			c->busy = 0;
			if (st > 0 && st < 600)
				status_count[st]++;
			if (c->kind == 0) {
				nread++;
				if (st != 200)
					rerr++;
				if (nrl < cap)
					rl[nrl++] = now_ms() - c->t0;
			} else {
				ndec++;
				if (st == 200)
					d200++;
				else
					derr++;
				dl[ndl++] = now_ms() - c->t0;
				fprintf(out, "%ld %s %d\n", c->id, c->action, st);
			}
		}
	}
	/* let the decisions in flight finish (they are not timed) */
	for (t = now_ms(); now_ms() - t < 5000;) {
		int busy = 0;

		for (k = readers; k < readers + NDEC; k++)
			busy += cs[k].busy;
		if (!busy)
			break;
		n = epoll_wait(ep, evs, 64, 10);
		for (i = 0; i < n; i++) {
			struct conn *c = evs[i].data.ptr;
			ssize_t r;

			if (c->kind == 0 || !c->busy)
				continue;
			r = read(c->fd, c->buf + c->got,
			    sizeof(c->buf) - 1 - c->got);
			if (r <= 0)
				continue;
			c->got += (size_t)r;
			if ((st = response(c)) == 0)
				continue;
			c->busy = 0;
			ndec++;
			if (st == 200)
				d200++;
			else
				derr++;
			dl[ndl++] = now_ms() - c->t0;
			fprintf(out, "%ld %s %d\n", c->id, c->action, st);
		}
	}
	fclose(out);
	qsort(rl, nrl, sizeof(*rl), cmpd);
	qsort(dl, ndl, sizeof(*dl), cmpd);
	printf("seconds %.1f readers %d\n", secs, readers);
	printf("reads %ld (%.0f/s) errors %ld p50 %.2f ms p99 %.2f ms max %.2f "
	    "ms\n", nread, nread / secs, rerr, pct(rl, nrl, 0.5),
	    pct(rl, nrl, 0.99), nrl ? rl[nrl - 1] : 0);
	printf("decisions %ld (%.1f/s) ok %ld errors %ld p50 %.2f ms p99 %.2f "
	    "ms max %.2f ms\n", ndec, ndec / secs, d200, derr,
	    pct(dl, ndl, 0.5), pct(dl, ndl, 0.99), ndl ? dl[ndl - 1] : 0);
	for (i = 0; i < 600; i++)
		if (status_count[i])
			printf("status %d: %ld\n", i, status_count[i]);
	return 0;
}

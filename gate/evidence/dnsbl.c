/*
 * dnsbl.c - DNSBL lookups with c-ares: every zone at once, one deadline
 *
 * The address comes from a Received line (hostile, but already parsed
 * to 16 bytes); the zones from configuration.  Answers are hostile too:
 * only A records in 127.0.0.0/8 are kept, the DNSBL_MAX_ADDRS lowest per
 * zone.  The resolver is the configured dns_server or the system's; a
 * site should run a local caching resolver (and respect each zone's
 * terms of use).  Never logs, never exits.
 */
#include "config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include <ares.h>

#include "gate/evidence/dnsbl.h"
#include "gate/util/clock.h"
#include "gate/util/xalloc.h"

#define DNSBL_MAX_ADDRS	4	/* answers kept per zone */

struct zone {
	char name[NETLIST_NAME_MAX + 1];
	int done;		/* answered, refused or gave up */
	int timed_out;
	int refused;		/* answered with a refusal code */
	unsigned naddr;
	unsigned char addr[DNSBL_MAX_ADDRS][4];
};

struct dnsbl {
	ares_channel ch;
	int have_ch;
	double deadline;
	struct zone z[LG_MAX_DNSBL_ZONES];
	size_t nz, ndone;
};

/*
 * The IANA special-purpose address registries (RFC 6890 and the RFCs
 * that added to them): an address is public when the registry calls it
 * globally reachable, or is not in it at all.  A DNSBL lists only such
 * addresses; asking about others is wasted time at best, and a private
 * address leaked to a zone at worst.
 */

/* 1 if the IPv4 address b (4 bytes) is public */
static int
v4_public(const unsigned char b[4])
{
	/* 192.0.0.0/24, IETF protocol assignments: only the PCP and TURN
	 * anycast addresses, 192.0.0.9 and .10, are globally reachable */
	if (b[0] == 192 && b[1] == 0 && b[2] == 0)
		return b[3] == 9 || b[3] == 10;
	return !(b[0] == 0 || b[0] == 10 || b[0] == 127 ||
	    (b[0] == 100 && (b[1] & 0xc0) == 64) ||
	    (b[0] == 169 && b[1] == 254) ||
	    (b[0] == 172 && (b[1] & 0xf0) == 16) ||
	    (b[0] == 192 && b[1] == 168) ||
	    (b[0] == 192 && b[1] == 0 && b[2] == 2) ||
	    (b[0] == 192 && b[1] == 88 && b[2] == 99) ||	/* 6to4 relay */
	    (b[0] == 198 && (b[1] & 0xfe) == 18) ||
	    (b[0] == 198 && b[1] == 51 && b[2] == 100) ||
	    (b[0] == 203 && b[1] == 0 && b[2] == 113) ||
	    b[0] >= 224);	/* multicast, 240.0.0.0/4, broadcast */
}

/* 1 if a is in 64:ff9b::/96, NAT64's well-known prefix: an IPv4 host
 * seen through a translator (RFC 6052) */
static int
nat64(const unsigned char a[16])
{
	static const unsigned char wkp[12] = { 0, 0x64, 0xff, 0x9b };

	return memcmp(a, wkp, 12) == 0;
}

int
dnsbl_public(const unsigned char a[16])
{
	/* an IPv4 host, written as IPv6: its IPv4 address decides */
	if (netlist_v4mapped(a) || nat64(a))
		return v4_public(a + 12);
	/* beyond global unicast 2000::/3: ::, ::1, 64:ff9b:1::/48,
	 * 100::/64, 5f00::/16, fc00::/7, fe80::/10, ff00::/8 */
	if ((a[0] & 0xe0) != 0x20)
		return 0;
	if (a[0] == 0x20 && a[1] == 0x01) {
		/* 2001:db8::/32, documentation */
		if (a[2] == 0x0d && a[3] == 0xb8)
			return 0;
		/* 2001::/23, IETF protocol assignments (Teredo 2001::/32,
		 * benchmarking 2001:2::/48, ORCHID 2001:10::/28 ...): only
		 * these are globally reachable */
		if ((a[2] & 0xfe) == 0) {
			static const unsigned char any[13] = { 0x20, 0x01,
			    0, 0x01 };

			if (memcmp(a, any, 13) == 0 && a[13] == 0 &&
			    a[14] == 0 && a[15] >= 1 && a[15] <= 3)
				return 1;	/* 2001:1::1-3, anycast */
			if (a[2] != 0)
				return 0;
			return a[3] == 0x03 ||	/* AMT 2001:3::/32 */
			    (a[3] == 0x04 && a[4] == 0x01 &&
			    a[5] == 0x12) ||	/* AS112 2001:4:112::/48 */
			    (a[3] & 0xf0) == 0x20 ||	/* ORCHIDv2 */
			    (a[3] & 0xf0) == 0x30;	/* drone DETs */
		}
		return 1;
	}
	/* 2002::/16, 6to4: the router's IPv4 address follows the prefix;
	 * one that is not public makes a bogus address */
	if (a[0] == 0x20 && a[1] == 0x02)
		return v4_public(a + 2);
	/* 3fff::/20, documentation */
	if (a[0] == 0x3f && a[1] == 0xff && (a[2] & 0xf0) == 0)
		return 0;
	return 1;
}

/* the query name: the address reversed (IPv4 octets, IPv6 nibbles)
 * before the zone.  An IPv4 address written as IPv6 (::ffff:a.b.c.d, as
 * a relay on a dual-stack socket is logged, or 64:ff9b::a.b.c.d, through
 * a NAT64 translator) is asked as IPv4: that is how zones list it */
static int
query_name(char *q, size_t qsz, const unsigned char a[16], int family,
    const char *zone)
{
	static const char hex[] = "0123456789abcdef";
	size_t k = 0;
	int i, r;

	if (family == 4 || netlist_v4mapped(a) || nat64(a)) {
		r = snprintf(q, qsz, "%u.%u.%u.%u.%s", a[15], a[14], a[13],
		    a[12], zone);
		return r > 0 && (size_t)r < qsz ? 0 : -1;
	}
	if (qsz < 64 + strlen(zone) + 1)
		return -1;
	for (i = 15; i >= 0; i--) {
		q[k++] = hex[a[i] & 0xf];
		q[k++] = '.';
		q[k++] = hex[a[i] >> 4];
		q[k++] = '.';
	}
	r = snprintf(q + k, qsz - k, "%s", zone);
	return r > 0 && (size_t)r < qsz - k ? 0 : -1;
}

/* keep the address p (4 bytes) among z's: the DNSBL_MAX_ADDRS lowest
 * of an answer, ascending, each once.  The lowest, not the first: a
 * resolver hands out the records of an answer in another order each
 * time (rbldnsd, BIND and unbound rotate them), and a zone that lists
 * an address under more codes than are kept (Spamhaus ZEN: 127.0.0.2,
 * .3, .4, .10, .11) would give other tokens each time it is asked, so
 * that a post is scored with other listings than it was learnt with */
static void
keep_addr(struct zone *z, const unsigned char p[4])
{
	unsigned k, j;
	int c = 1;

	for (k = 0; k < z->naddr && (c = memcmp(z->addr[k], p, 4)) < 0; k++)
		;
	if (c == 0 || k >= DNSBL_MAX_ADDRS)
		return;		/* kept already, or above the lowest kept */
	if (z->naddr < DNSBL_MAX_ADDRS)
		z->naddr++;
	for (j = z->naddr - 1; j > k; j--)
		memcpy(z->addr[j], z->addr[j - 1], 4);
	memcpy(z->addr[k], p, 4);
}

/* one zone's answer */
static void
answered(void *arg, int status, int timeouts, unsigned char *abuf,
    int alen)
{
	struct zone *z = arg;
	/* every record an answer over UDP can hold (512 bytes, 16 a
	 * record), so that which are kept does not depend on their order */
	struct ares_addrttl at[64];
	int n = 64, i;
	const unsigned char *p;

	(void)timeouts;
	if (z->done)
		return;
	z->done = 1;
	if (status == ARES_ETIMEOUT || status == ARES_ECANCELLED ||
	    status == ARES_EDESTRUCTION) {
		z->timed_out = 1;
		return;
	}
	if (status != ARES_SUCCESS ||
	    ares_parse_a_reply(abuf, alen, NULL, at, &n) != ARES_SUCCESS)
		return;
	for (i = 0; i < n; i++) {
		p = (const unsigned char *)&at[i].ipaddr;
		if (p[0] == 127 && p[1] == 255 && p[2] == 255)
			z->refused = 1;
		if (p[0] != 127 || (p[1] == 255 && p[2] == 255))
			continue;
		keep_addr(z, p);
	}
}

/* the number of servers ch asks, at least 1 */
static unsigned
nservers(ares_channel ch)
{
	struct ares_addr_node *list = NULL, *s;
	unsigned n = 0;

	if (ares_get_servers(ch, &list) != ARES_SUCCESS)
		return 1;
	for (s = list; s != NULL; s = s->next)
		n++;
	ares_free_data(list);
	return n > 0 ? n : 1;
}

/*
 * *r: a channel as ch, but giving each try timeout_ms: made from ch's
 * settings (ares_save_options), every one of them given, so that c-ares
 * reads none of the system's files (resolv.conf, nsswitch.conf) again,
 * and the servers are the very ones counted in ch, not those of a
 * resolv.conf rewritten in between.  ARES_SUCCESS, or c-ares's error
 */
static int
channel_with_timeout(ares_channel ch, int timeout_ms, ares_channel *r)
{
	struct ares_options so;
	struct ares_addr_port_node *servers = NULL;
	int mask = 0, rc;

	if ((rc = ares_save_options(ch, &so, &mask)) != ARES_SUCCESS) {
		ares_destroy_options(&so);
		return rc;
	}
	so.timeout = timeout_ms;
	rc = ares_init_options(r, &so, mask | ARES_OPT_TIMEOUTMS);
	ares_destroy_options(&so);
	if (rc != ARES_SUCCESS)
		return rc;
	/* the servers as they are: ares_save_options keeps only those on
	 * IPv4 and port 53 */
	if ((rc = ares_get_servers_ports(ch, &servers)) == ARES_SUCCESS) {
		rc = ares_set_servers_ports(*r, servers);
		ares_free_data(servers);
	}
	if (rc != ARES_SUCCESS)
		ares_destroy(*r);
	return rc;
}

int
dnsbl_start(struct dnsbl **d_r, const char *server,
    const struct netlist *zones, const unsigned char a[16], int family,
    unsigned timeout_ms, char *why, size_t whysz)
{
	static int lib_ready;
	struct ares_options o;
	struct dnsbl *d;
	char q[NETLIST_NAME_MAX + 80];
	size_t i;
	unsigned n;
	int r;

	*d_r = NULL;
	if (!lib_ready) {
		if (ares_library_init(ARES_LIB_INIT_ALL) != ARES_SUCCESS) {
			snprintf(why, whysz, "no resolver library");
			return 0;
		}
		lib_ready = 1;
	}
	if ((d = xcalloc(1, sizeof(*d))) == NULL)
		return -1;
	memset(&o, 0, sizeof(o));
	o.timeout = (int)timeout_ms;	/* one try, the whole time */
	o.tries = 1;
	o.flags = ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES;
	if ((r = ares_init_options(&d->ch, &o, ARES_OPT_TIMEOUTMS |
	    ARES_OPT_TRIES | ARES_OPT_FLAGS)) != ARES_SUCCESS) {
		snprintf(why, whysz, "resolver: %s", ares_strerror(r));
		xfree(d);
		return r == ARES_ENOMEM ? -1 : 0;
	}
	d->have_ch = 1;
	if (server != NULL && (r = ares_set_servers_ports_csv(d->ch,
	    server)) != ARES_SUCCESS) {
		snprintf(why, whysz, "dns_server: %s", ares_strerror(r));
		dnsbl_free(d);
		return 0;
	}
	/* the system's resolvers (resolv.conf) share the time: c-ares
	 * gives each try the whole of it, and a first nameserver that
	 * does not answer (its host down) would leave the next ones
	 * never asked.  The answer of an earlier one still counts when
	 * it comes later, within the time.  (A channel's time cannot be
	 * changed: a second one, from the first's settings; a second
	 * ares_init_options of o read resolv.conf again for every post) */
	if (server == NULL && (n = nservers(d->ch)) > 1 &&
	    timeout_ms >= n) {
		ares_channel ch;

		if ((r = channel_with_timeout(d->ch, (int)(timeout_ms / n),
		    &ch)) != ARES_SUCCESS) {
			snprintf(why, whysz, "resolver: %s", ares_strerror(r));
			dnsbl_free(d);
			return r == ARES_ENOMEM ? -1 : 0;
		}
		ares_destroy(d->ch);
		d->ch = ch;
	}
	d->deadline = clock_now_ms() + timeout_ms;
	for (i = 0; i < zones->nname && i < LG_MAX_DNSBL_ZONES; i++) {
		struct zone *z = &d->z[d->nz];

		snprintf(z->name, sizeof(z->name), "%s", zones->name[i]);
		if (query_name(q, sizeof(q), a, family, z->name) < 0)
			continue;
		d->nz++;
		ares_query(d->ch, q, 1 /* C_IN */, 1 /* T_A */, answered, z);
	}
	*d_r = d;
	return 0;
}

/* zones done so far */
static size_t
ndone(const struct dnsbl *d)
{
	size_t i, n = 0;

	for (i = 0; i < d->nz; i++)
		n += d->z[i].done != 0;
	return n;
}

size_t
dnsbl_pollfds(struct dnsbl *d, struct pollfd *p, size_t max,
    int *wait_ms_r)
{
	ares_socket_t s[ARES_GETSOCK_MAXNUM];
	struct timeval tv, *tvp, maxtv;
	double left = d->deadline - clock_now_ms();
	size_t i, n = 0;
	unsigned bits;

	/* every zone answered already (c-ares refused a query name at
	 * once: longer than a DNS name may be): nothing to wait for */
	if (ndone(d) == d->nz) {
		*wait_ms_r = 0;
		return 0;
	}

	/* the bits read unsigned: c-ares's own ARES_GETSOCK_WRITABLE
	 * shifts a signed 1 into the sign bit for the 16th socket */
	bits = (unsigned)ares_getsock(d->ch, s, ARES_GETSOCK_MAXNUM);
	for (i = 0; i < ARES_GETSOCK_MAXNUM && n < max; i++) {
		short ev = 0;

		if ((bits >> i) & 1u)
			ev |= POLLIN;
		if ((bits >> (i + ARES_GETSOCK_MAXNUM)) & 1u)
			ev |= POLLOUT;
		if (ev == 0)
			continue;
		p[n].fd = s[i];
		p[n].events = ev;
		p[n].revents = 0;
		n++;
	}
	if (left < 0)
		left = 0;
	maxtv.tv_sec = (time_t)(left / 1000);
	maxtv.tv_usec = (suseconds_t)((left - (double)maxtv.tv_sec * 1000) *
	    1000);
	tvp = ares_timeout(d->ch, &maxtv, &tv);
	*wait_ms_r = (int)(tvp->tv_sec * 1000 + (tvp->tv_usec + 999) / 1000);
	return n;
}

int
dnsbl_step(struct dnsbl *d, const struct pollfd *p, size_t n)
{
	size_t i;
	int any = 0;

	for (i = 0; i < n; i++) {
		if (p[i].revents == 0)
			continue;
		any = 1;
		ares_process_fd(d->ch,
		    (p[i].revents & (POLLIN | POLLERR | POLLHUP)) ? p[i].fd :
		    ARES_SOCKET_BAD,
		    (p[i].revents & POLLOUT) ? p[i].fd : ARES_SOCKET_BAD);
	}
	if (!any)	/* c-ares's own time-outs */
		ares_process_fd(d->ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
	if (ndone(d) == d->nz)
		return 1;
	if (clock_now_ms() >= d->deadline) {
		ares_cancel(d->ch);	/* the rest: timed out */
		return 1;
	}
	return 0;
}

int
dnsbl_tokens(struct dnsbl *d, struct toklist *tl, unsigned *nlisted_r,
    unsigned *ntimeout_r)
{
	char t[TOKLIST_MAX_BYTES + 1];
	size_t i, k;
	int r;

	*nlisted_r = *ntimeout_r = 0;
	for (i = 0; i < d->nz; i++) {
		struct zone *z = &d->z[i];

		if (!z->done || z->timed_out)
			(*ntimeout_r)++;
		if (z->naddr > 0)
			(*nlisted_r)++;
		for (k = 0; k < z->naddr; k++) {
			r = snprintf(t, sizeof(t), "dnsbl:%s:%u.%u.%u.%u",
			    z->name, z->addr[k][0], z->addr[k][1],
			    z->addr[k][2], z->addr[k][3]);
			/* past the post's token cap if need be (at most
			 * LG_MAX_DNSBL_ZONES * DNSBL_MAX_ADDRS) */
			if (r > 0 && (size_t)r < sizeof(t) &&
			    toklist_add_over(tl, t, (size_t)r) < 0)
				return -1;
		}
	}
	return 0;
}

size_t
dnsbl_nzones(const struct dnsbl *d)
{
	return d->nz;
}

unsigned
dnsbl_nrefused(const struct dnsbl *d)
{
	size_t i;
	unsigned n = 0;

	for (i = 0; i < d->nz; i++)
		n += d->z[i].refused != 0;
	return n;
}

const char *
dnsbl_zone(const struct dnsbl *d, size_t i, int *timed_out_r)
{
	*timed_out_r = !d->z[i].done || d->z[i].timed_out;
	return d->z[i].name;
}

void
dnsbl_free(struct dnsbl *d)
{
	if (d == NULL)
		return;
	if (d->have_ch)
		ares_destroy(d->ch);
	xfree(d);
}

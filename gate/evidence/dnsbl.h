/*
 * dnsbl.h - DNSBL answers about one address, every zone asked at once
 * within one bounded time (c-ares, a configured or the system resolver)
 *
 * An answer in 127.0.0.0/8 becomes the token dnsbl:ZONE:127.0.0.N (one
 * per address answered, the 4 lowest of more; 127.255.255.x, the error
 * codes some zones give to resolvers they refuse, is ignored).  No such domain, a time-out or
 * any error gives no token: a listing is evidence each list weighs by
 * what it learnt, never a block.  Addresses that are not globally
 * reachable (IANA's special-purpose registries) are never asked about.  Never logs, never exits; only
 * out-of-memory fails.
 */
#ifndef LG_DNSBL_H
#define LG_DNSBL_H

#include <poll.h>
#include <stddef.h>

#include "gate/toklist.h"
#include "gate/util/netlist.h"

struct dnsbl;

/* sockets one lookup may poll at once (c-ares's ARES_GETSOCK_MAXNUM) */
#define DNSBL_MAX_FDS	16

/* 1 if a (16 bytes, IPv4 mapped) is an address DNSBLs list: globally
 * reachable by the IANA IPv4 and IPv6 special-purpose registries, so
 * not private, loopback, link-local, shared, documentation,
 * benchmarking, protocol assignments, multicast or reserved.  An IPv4
 * address behind ::ffff:0:0/96 or NAT64's 64:ff9b::/96, and a 6to4
 * router's behind 2002::/16, decides for the IPv6 address */
int dnsbl_public(const unsigned char a[16]);

/*
 * Ask each of the zones (names, at most LG_MAX_DNSBL_ZONES) about a
 * through server ("ADDR:PORT", NULL: the system's resolver), all
 * answers due within timeout_ms.  *d_r NULL with why when nothing could
 * be asked (no resolver): no evidence.  0, or -1 out of memory.
 */
int dnsbl_start(struct dnsbl **d_r, const char *server,
    const struct netlist *zones, const unsigned char a[16], int family,
    unsigned timeout_ms, char *why, size_t whysz);

/* the sockets to poll now (at most max): their number; *wait_ms_r the
 * longest to wait before dnsbl_step must run */
size_t dnsbl_pollfds(struct dnsbl *d, struct pollfd *p, size_t max,
    int *wait_ms_r);

/* read what came (p: the pollfds filled above, with revents), resend or
 * give up by time: 1 when every zone has answered or time is up */
int dnsbl_step(struct dnsbl *d, const struct pollfd *p, size_t n);

/* the tokens of the answers; *nlisted_r zones that listed the address,
 * *ntimeout_r zones that did not answer in time: 0, or -1 */
int dnsbl_tokens(struct dnsbl *d, struct toklist *tl, unsigned *nlisted_r,
    unsigned *ntimeout_r);

/* zones that answered with a refusal code (127.255.255.x: the query
 * refused, as zones do through a public resolver, or a mistyped zone):
 * they gave no token, though not because the address is not listed */
unsigned dnsbl_nrefused(const struct dnsbl *d);

/* the zones asked (those of dnsbl_start whose query name fits): their
 * number; zone i's name, and in *timed_out_r 1 when it did not answer
 * in time */
size_t dnsbl_nzones(const struct dnsbl *d);
const char *dnsbl_zone(const struct dnsbl *d, size_t i, int *timed_out_r);

/* stop what is still asked and free */
void dnsbl_free(struct dnsbl *d);

#endif

/*
 * netlist.h - a list of networks and host names, and whether an address
 * or a name is in it: the trusted relays of a site
 *
 * The text is a configuration value: entries separated by commas or
 * blanks, each a numeric IPv4 or IPv6 address, a network in CIDR form
 * (192.0.2.0/24, 2001:db8::/32) or a host name, which stands for itself
 * and every name under it (example.org: mx.example.org too).  At most
 * LG_MAX_NETLIST entries.  Never logs, never exits; parse fails with -1
 * and why.
 */
#ifndef LG_NETLIST_H
#define LG_NETLIST_H

#include <stddef.h>

#include "gate/util/lglimits.h"

/* the longest host name (RFC 1035), without the final dot */
#define NETLIST_NAME_MAX	253

struct netlist_net {
	unsigned char addr[16];	/* IPv4 as IPv4-mapped IPv6 */
	unsigned bits;		/* prefix length out of 128 */
};

struct netlist {
	struct netlist_net net[LG_MAX_NETLIST];
	size_t nnet;
	char name[LG_MAX_NETLIST][NETLIST_NAME_MAX + 1];	/* lower case */
	size_t nname;
};

/* an empty list */
void netlist_init(struct netlist *nl);

/* parse s into nl (s may be NULL or empty: an empty list): 0, or -1 with
 * why naming the bad entry */
int netlist_parse(const char *s, struct netlist *nl, char *why,
    size_t whysz);

/* a numeric address ("192.0.2.1", "2001:db8::1", "IPv6:2001:db8::1";
 * [n] bytes, no NUL needed) into 16 bytes, IPv4 mapped: 4 or 6 for its
 * family, 0 when it is no address */
int netlist_addr(const char *s, size_t n, unsigned char out[16]);

/* 1 if the 16-byte address is in one of nl's networks */
int netlist_has_addr(const struct netlist *nl, const unsigned char a[16]);

/* 1 if the host name [name, name+n) is one of nl's names or under one
 * (case-insensitive; a final dot ignored) */
int netlist_has_name(const struct netlist *nl, const char *name, size_t n);

/* 1 if a is a loopback address (127.0.0.0/8, ::1) */
int netlist_loopback(const unsigned char a[16]);

/* 1 if the 16-byte address is an IPv4 one (::ffff:0:0/96), however it
 * was written */
int netlist_v4mapped(const unsigned char a[16]);

#endif

/*
 * received.h - the Received chain: which hop handed the post to the
 * hosts we trust, and what that hop said about itself
 *
 * Each Received line (top first) is written by the host the line above
 * names as its client.  The top line is our own MTA's, so it is
 * believed; a line is believed while every client above it was trusted
 * (loopback, or in the site's trusted_relays).  The first believed line
 * whose client is not trusted is the first untrusted hop: its client IP,
 * reverse DNS name and HELO become "src:" tokens (received_tokens).
 *
 * Pure: no DNS, no I/O.  Input is hostile (any bytes, any length): a
 * line is looked at within RECEIVED_MAX_SCAN bytes, names are bounded,
 * at most LG_MAX_RECEIVED_HOPS lines are walked.  Never logs, never
 * exits; only received_tokens can fail (-1, out of memory).
 */
#ifndef LG_RECEIVED_H
#define LG_RECEIVED_H

#include <stddef.h>

#include "gate/toklist.h"
#include "gate/util/netlist.h"

/* bytes of one Received value looked at: the from-clause is short */
#define RECEIVED_MAX_SCAN	1024

/* what one Received line says about its client */
struct received_hop {
	unsigned char ip[16];	/* IPv4 as IPv4-mapped IPv6 */
	int family;		/* 4 or 6 */
	char helo[NETLIST_NAME_MAX + 3]; /* as given (lower case; "" none) */
	char rdns[NETLIST_NAME_MAX + 1]; /* verified name, lower case; ""
				 * when the writer found none ("unknown") */
	int forged;		/* the writer said "may be forged" */
};

/*
 * Parse one unfolded Received value.  Returns 1 when it names a network
 * client (h filled), 0 when it records no network hop (a local
 * submission: "(qmail 123 invoked by uid 1000)", "(from user@localhost)
 * by ..."), -1 when it has a from-clause but no client address that can
 * be read (a from-clause that runs past RECEIVED_MAX_SCAN bytes too).
 */
int received_parse(const unsigned char *v, size_t n, struct received_hop *h);

/* the walk down one post's chain */
struct received_chain {
	const struct netlist *trust;	/* NULL: loopback only */
	unsigned nlines;		/* Received lines seen */
	int state;			/* RECEIVED_* */
	struct received_hop hop;	/* RECEIVED_FOUND: the first untrusted */
};

enum {
	RECEIVED_WALKING,	/* every client so far trusted */
	RECEIVED_FOUND,		/* hop is the first untrusted one */
	RECEIVED_UNREADABLE,	/* a believed line named no readable client */
	RECEIVED_TOO_DEEP	/* LG_MAX_RECEIVED_HOPS lines, all trusted */
};

void received_chain_init(struct received_chain *c, const struct netlist *trust);

/* the next Received value, top first: 1 when this line settled the walk
 * (FOUND or UNREADABLE: time for received_tokens), else 0 */
int received_chain_add(struct received_chain *c, const unsigned char *v,
    size_t n);

/*
 * The "src:" tokens of a settled walk (or, at the end of the header,
 * of one still walking: "src:local", every hop trusted):
 *   src:ip:A.B.C.D, src:net:A.B.C.0/24, src:net:A.B.0.0/16 (IPv6: the
 *   address, its /64 and /48), src:rdns:NAME, src:dom:REGISTERED-DOMAIN
 *   or src:rdns:none, src:rdns:forged, and the HELO's anomalies
 *   src:helo:none, src:helo:literal, src:helo:literal-other,
 *   src:helo:nodot, src:helo:mismatch (not the rDNS name's domain);
 *   src:unreadable, src:local.
 * 0, or -1 out of memory.
 */
int received_tokens(const struct received_chain *c, struct toklist *tl);

/*
 * The registered domain of a host name (lower case, no final dot): the
 * offset in name where it starts.  A small built-in rule set: the last
 * two labels, three under a two-letter country code whose second level
 * is a generic one (co.uk, com.au, ac.jp, ...).  Private suffixes
 * (blogspot.com) and most geographic ones (tokyo.jp) are not known.
 */
size_t received_regdom(const char *name, size_t n);

#endif

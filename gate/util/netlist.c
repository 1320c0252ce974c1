/*
 * netlist.c - networks and host names: parse a list, match against it
 *
 * The list comes from configuration (checked with why on every bad
 * entry); the addresses and names matched come from Received lines of
 * hostile posts and are only compared, never stored.  Bounded: at most
 * LG_MAX_NETLIST entries, names of at most NETLIST_NAME_MAX bytes.
 * Never logs, never exits.
 */
#include "config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gate/util/netlist.h"

void
netlist_init(struct netlist *nl)
{
	nl->nnet = 0;
	nl->nname = 0;
}

int
netlist_addr(const char *s, size_t n, unsigned char out[16])
{
	char w[INET6_ADDRSTRLEN + 8];

	if (n >= 5 && strncasecmp(s, "IPv6:", 5) == 0) {
		s += 5;
		n -= 5;
	}
	if (n == 0 || n >= sizeof(w))
		return 0;
	memcpy(w, s, n);
	w[n] = '\0';
	memset(out, 0, 16);
	if (inet_pton(AF_INET, w, out + 12) == 1) {
		out[10] = out[11] = 0xff;
		return 4;
	}
	if (strchr(w, ':') != NULL && inet_pton(AF_INET6, w, out) == 1)
		return 6;
	return 0;
}

/* 1 if [s, s+n) is a host name: labels of letters, digits, '-' and
 * '_', 1-63 bytes each, at least one letter somewhere */
static int
name_ok(const char *s, size_t n)
{
	size_t i, lab = 0;
	int alpha = 0;

	if (n == 0 || n > NETLIST_NAME_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (c == '.') {
			if (lab == 0)
				return 0;
			lab = 0;
			continue;
		}
		if (++lab > 63)
			return 0;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
			alpha = 1;
		else if (!(c >= '0' && c <= '9') && c != '-' && c != '_')
			return 0;
	}
	return lab > 0 && alpha;
}

/* one entry [s, s+n): 0, or -1 with why */
static int
entry(struct netlist *nl, const char *s, size_t n, char *why, size_t whysz)
{
	unsigned char a[16];
	const char *slash = memchr(s, '/', n);
	size_t an = slash != NULL ? (size_t)(slash - s) : n, i;
	unsigned long bits;
	char *end, num[8];
	int fam;

	if ((fam = netlist_addr(s, an, a)) != 0) {
		bits = 128;
		if (slash != NULL) {
			if (n - an - 1 == 0 || n - an - 1 >= sizeof(num))
				goto bad;
			memcpy(num, slash + 1, n - an - 1);
			num[n - an - 1] = '\0';
			if (num[0] < '0' || num[0] > '9')
				goto bad;
			bits = strtoul(num, &end, 10);
			if (*end != '\0' || bits > (fam == 4 ? 32u : 128u))
				goto bad;
			if (fam == 4)
				bits += 96;
		}
		if (nl->nnet >= LG_MAX_NETLIST)
			goto full;
		memcpy(nl->net[nl->nnet].addr, a, 16);
		nl->net[nl->nnet].bits = (unsigned)bits;
		nl->nnet++;
		return 0;
	}
	if (slash == NULL) {
		while (n > 0 && s[n - 1] == '.')
			n--;
		if (!name_ok(s, n))
			goto bad;
		if (nl->nname >= LG_MAX_NETLIST)
			goto full;
		for (i = 0; i < n; i++)
			nl->name[nl->nname][i] = (char)(s[i] >= 'A' &&
			    s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
		nl->name[nl->nname][n] = '\0';
		nl->nname++;
		return 0;
	}
bad:
	snprintf(why, whysz, "`%.*s' is neither an address, a network "
	    "(ADDR/BITS) nor a host name", (int)(n < 100 ? n : 100), s);
	return -1;
full:
	snprintf(why, whysz, "more than %u addresses or more than %u names",
	    (unsigned)LG_MAX_NETLIST, (unsigned)LG_MAX_NETLIST);
	return -1;
}

int
netlist_parse(const char *s, struct netlist *nl, char *why, size_t whysz)
{
	const char *e;

	netlist_init(nl);
	if (s == NULL)
		return 0;
	for (;;) {
		while (*s == ' ' || *s == '\t' || *s == ',')
			s++;
		if (*s == '\0')
			return 0;
		for (e = s; *e && *e != ' ' && *e != '\t' && *e != ','; e++)
			;
		if (entry(nl, s, (size_t)(e - s), why, whysz) < 0)
			return -1;
		s = e;
	}
}

/* 1 if the first bits of a and b agree */
static int
prefix_eq(const unsigned char *a, const unsigned char *b, unsigned bits)
{
	unsigned full = bits / 8, rest = bits % 8;
	unsigned char mask;

	if (memcmp(a, b, full) != 0)
		return 0;
	if (rest == 0)
		return 1;
	mask = (unsigned char)(0xff << (8 - rest));
	return (a[full] & mask) == (b[full] & mask);
}

int
netlist_has_addr(const struct netlist *nl, const unsigned char a[16])
{
	size_t i;

	for (i = 0; i < nl->nnet; i++)
		if (prefix_eq(a, nl->net[i].addr, nl->net[i].bits))
			return 1;
	return 0;
}

int
netlist_has_name(const struct netlist *nl, const char *name, size_t n)
{
	size_t i, k;

	while (n > 0 && name[n - 1] == '.')
		n--;
	if (n == 0)
		return 0;
	for (i = 0; i < nl->nname; i++) {
		k = strlen(nl->name[i]);
		if (k > n)
			continue;
		if (strncasecmp(name + n - k, nl->name[i], k) != 0)
			continue;
		if (k == n || name[n - k - 1] == '.')
			return 1;
	}
	return 0;
}

int
netlist_v4mapped(const unsigned char a[16])
{
	static const unsigned char v4map[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0,
	    0, 0xff, 0xff };

	return memcmp(a, v4map, 12) == 0;
}

int
netlist_loopback(const unsigned char a[16])
{
	static const unsigned char one[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	    0, 0, 0, 0, 0, 1 };

	return (netlist_v4mapped(a) && a[12] == 127) ||
	    memcmp(a, one, 16) == 0;
}

/*
 * fuzz_received.c - libFuzzer target for the Received chain reader
 *
 * The input is cut at newlines into Received values (the first line
 * may name trusted relays, as the configuration would): each is parsed
 * alone, all are walked as one chain, and the src: tokens made.  Build
 * and run with tests/fuzz/run.sh received SECONDS.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "gate/received.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct netlist nl;
	struct received_chain c;
	struct received_hop h;
	struct toklist *tl;
	char trust[512], why[256];
	const uint8_t *p = data, *e = data + size, *nlp;
	size_t n;

	nlp = memchr(p, '\n', size);
	n = nlp != NULL ? (size_t)(nlp - p) : size;
	if (n >= sizeof(trust))
		n = sizeof(trust) - 1;
	memcpy(trust, p, n);
	trust[n] = '\0';
	if (netlist_parse(trust, &nl, why, sizeof(why)) < 0)
		netlist_init(&nl);
	if ((tl = toklist_new(1000)) == NULL)
		return 0;
	received_chain_init(&c, &nl);
	while (p < e) {
		nlp = memchr(p, '\n', (size_t)(e - p));
		n = nlp != NULL ? (size_t)(nlp - p) : (size_t)(e - p);
		received_parse(p, n, &h);
		if (received_chain_add(&c, p, n) == 1)
			received_tokens(&c, tl);
		p += n + (nlp != NULL);
	}
	received_tokens(&c, tl);
	toklist_free(tl);
	return 0;
}

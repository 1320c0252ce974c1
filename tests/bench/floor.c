/*
 * floor.c - the process floor for tests/bench: a trivial C program that
 * reads its standard input to the end and exits 0.  bench.sh builds it
 * (cc -O2) and times it beside the filters in the same run: what is left
 * of a filter's time per post above it is the filter's own work.
 */
#include <unistd.h>

int
main(void)
{
	char buf[65536];

	while (read(0, buf, sizeof(buf)) > 0)
		;
	return 0;
}

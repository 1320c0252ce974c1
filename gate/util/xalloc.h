/*
 * xalloc.h - the one allocator listgate uses
 *
 * Thin wrappers over malloc/realloc/free that return NULL on failure
 * (never abort) and can be told to fail the n-th allocation, so tests can
 * check that every allocation failure ends in a clean error ("defer").
 */
#ifndef LG_XALLOC_H
#define LG_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);			/* NULL on failure */
void *xcalloc(size_t nmemb, size_t size);	/* NULL on failure or overflow */
void *xrealloc(void *p, size_t n);		/* NULL on failure, p intact */
char *xstrdup(const char *s);			/* NULL on failure */
char *xstrndup(const char *s, size_t n);	/* NULL on failure */
void xfree(void *p);

/*
 * A zeroed table that is filled at once, as a hash table is.  From 256
 * KiB on, it is mapped with huge pages advised and its pages made
 * present by one system call, instead of a page fault each on first
 * touch, which on a virtual machine cost a third of bulk training's
 * main thread; smaller (and under AddressSanitizer) it is xcalloc.
 * Counted and failed like any allocation.  Give it back with xbigfree
 * and the same nmemb and size.
 */
void *xbigcalloc(size_t nmemb, size_t size);	/* NULL on failure */
void xbigfree(void *p, size_t nmemb, size_t size);

/* fail the n-th allocation from now on (1 = the next one); 0 turns it off.
 * Also set from the environment LISTGATE_FAIL_ALLOC=n at first use. */
void xalloc_fail_at(unsigned long n);
/* allocations made since the counter was last set */
unsigned long xalloc_count(void);
/* 1 when a test counts allocations (a failure is set, or a report is
 * asked for): work that would spread over threads, making the count
 * depend on their timing, stays in one */
int xalloc_counted(void);

#endif

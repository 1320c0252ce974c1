/*
 * xalloc.c - allocation with failure injection for torture tests
 *
 * Never aborts: failure is reported as NULL and the caller turns it
 * into an error (a filter run then defers).  LISTGATE_FAIL_ALLOC=n in the
 * environment makes the n-th allocation fail, for the allocation-failure
 * torture test; LISTGATE_ALLOC_REPORT=1 prints "listgate: allocations N
 * failed F" to standard error at exit, so the torture test knows how far
 * to count (F is the number of the failed allocation, 0 for none).
 */
#include "config.h"

#include <sys/mman.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/util/xalloc.h"

static unsigned long fail_at, counter, failed;
static int env_read, reporting;

/* atexit: the allocation count for LISTGATE_ALLOC_REPORT */
static void
report(void)
{
	fprintf(stderr, "listgate: allocations %lu failed %lu\n", counter,
	    failed);
}

/* read the environment once (the first allocation is the program's
 * thread's, before any other thread starts) */
static void
read_env(void)
{
	const char *e;

	if (env_read)
		return;
	env_read = 1;
	if ((e = getenv("LISTGATE_FAIL_ALLOC")) != NULL && *e)
		fail_at = strtoul(e, NULL, 10);
	if ((e = getenv("LISTGATE_ALLOC_REPORT")) != NULL &&
	    strcmp(e, "1") == 0) {
		reporting = 1;
		atexit(report);
	}
}

static int
should_fail(void)
{
	unsigned long n;

	read_env();
	/* atomic: the trainer's worker threads allocate too */
	n = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
	if (fail_at != 0 && n == fail_at) {
		failed = n;
		return 1;
	}
	return 0;
}

int
xalloc_counted(void)
{
	read_env();
	return fail_at != 0 || reporting;
}

void
xalloc_fail_at(unsigned long n)
{
	env_read = 1;
	fail_at = n;
	counter = 0;
}

unsigned long
xalloc_count(void)
{
	return __atomic_load_n(&counter, __ATOMIC_RELAXED);
}

void *
xmalloc(size_t n)
{
	if (should_fail())
		return NULL;
	return malloc(n ? n : 1);
}

void *
xcalloc(size_t nmemb, size_t size)
{
	if (size && nmemb > SIZE_MAX / size)
		return NULL;
	if (should_fail())
		return NULL;
	return calloc(nmemb ? nmemb : 1, size ? size : 1);
}

void *
xrealloc(void *p, size_t n)
{
	if (should_fail())
		return NULL;
	return realloc(p, n ? n : 1);
}

char *
xstrndup(const char *s, size_t n)
{
	char *d;

	if (n == SIZE_MAX || (d = xmalloc(n + 1)) == NULL)
		return NULL;
	memcpy(d, s, n);
	d[n] = 0;
	return d;
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

void
xfree(void *p)
{
	free(p);
}

/* below this, a big table is an ordinary calloc */
#define BIG_MIN	((size_t)256 << 10)

/* under AddressSanitizer, big tables stay on its heap, where it sees
 * their overruns and leaks */
#if defined(__SANITIZE_ADDRESS__)
#define BIG_MAPPED	0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BIG_MAPPED	0
#endif
#endif
#ifndef BIG_MAPPED
#define BIG_MAPPED	1
#endif

/* huge pages, then the pages made, by advice (else by MAP_POPULATE) */
#if defined(MADV_HUGEPAGE) && defined(MADV_POPULATE_WRITE)
#define BIG_ADVISE	1
#else
#define BIG_ADVISE	0
#endif

static int
big_mapped(size_t len)
{
	return BIG_MAPPED && len >= BIG_MIN;
}

void *
xbigcalloc(size_t nmemb, size_t size)
{
	size_t len;
	void *p;

	if (size && nmemb > SIZE_MAX / size)
		return NULL;
	len = nmemb * size;
	if (!big_mapped(len))
		return xcalloc(nmemb, size);
	if (should_fail())
		return NULL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE |
	    MAP_ANONYMOUS | (BIG_ADVISE ? 0 : MAP_POPULATE), -1, 0);
	if (p == MAP_FAILED)
		return NULL;
#if BIG_ADVISE
	/* huge pages advised before the pages are made: with transparent
	 * huge pages on "madvise", 2 MiB at a time; a kernel before 5.14
	 * refuses MADV_POPULATE_WRITE and the pages come on first touch */
	(void)madvise(p, len, MADV_HUGEPAGE);
	(void)madvise(p, len, MADV_POPULATE_WRITE);
#endif
	return p;
}

void
xbigfree(void *p, size_t nmemb, size_t size)
{
	size_t len = nmemb * size;

	if (p == NULL)
		return;
	if (!big_mapped(len))
		xfree(p);
	else
		(void)munmap(p, len);
}

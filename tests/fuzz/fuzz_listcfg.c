/*
 * fuzz_listcfg.c - libFuzzer target for the configuration parser
 *
 * The input is cut at the first "\n%%\n": before it listgate.conf,
 * after it lists/demo.conf (no separator: all of it is the list's
 * file).  Both are written to a private directory under /dev/shm (else
 * $TMPDIR) and loaded.  A file that does not load must say why, naming
 * the file.  One that loads is printed (listcfg_print_global/_list),
 * the printout is written as the configuration of a second directory
 * and loaded again, and printing that must give the same text: "the
 * effective settings ... load back to the same settings" (listcfg.h).
 * The database line is left out of the comparison (its password is
 * masked).  Templates
 * that load are also expanded with hostile values.  Build and run with
 * tests/fuzz/run.sh listcfg.
 */
#include "config.h"

#include <sys/stat.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "listcfg/listcfg.h"
#include "listcfg/tmpl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir1[200], dir2[200];
static volatile unsigned long sink;

static void
put(const char *dir, const char *name, const void *p, size_t n)
{
	char path[300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "w")) == NULL)
		__builtin_trap();
	if (n > 0 && fwrite(p, 1, n, f) != n)
		__builtin_trap();
	fclose(f);
}

static void
mkdirs(char *d, const char *t, const char *tag)
{
	char p[300];

	snprintf(d, 200, "%s/lg-fuzz-%s.%ld", t, tag, (long)getpid());
	snprintf(p, sizeof(p), "%s/lists", d);
	if ((mkdir(d, 0700) < 0 && access(d, W_OK) < 0) ||
	    (mkdir(p, 0700) < 0 && access(p, W_OK) < 0))
		__builtin_trap();
}

static void
setup(void)
{
	const char *t = getenv("TMPDIR");

	if (access("/dev/shm", W_OK) == 0)
		t = "/dev/shm";
	else if (t == NULL || *t == '\0')
		t = "/tmp";
	mkdirs(dir1, t, "cfg1");
	mkdirs(dir2, t, "cfg2");
}

/* the printout without comments and the database line (see above) */
static char *
printed(const struct listcfg_global *g, const struct listcfg_list *l,
    size_t *len_r, int filter)
{
	char *out = NULL, *p, *q, *w;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (f == NULL)
		__builtin_trap();
	if (g != NULL && listcfg_print_global(f, g) < 0)
		__builtin_trap();
	if (l != NULL && listcfg_print_list(f, l) < 0)
		__builtin_trap();
	fclose(f);
	if (!filter) {
		*len_r = len;
		return out;
	}
	for (p = w = out; p < out + len; p = q) {
		q = memchr(p, '\n', (size_t)(out + len - p));
		q = q ? q + 1 : out + len;
		if (*p == '#' || strncmp(p, "database = ", 11) == 0)
			continue;
		memmove(w, p, (size_t)(q - p));
		w += q - p;
	}
	*len_r = (size_t)(w - out);
	return out;
}

/* expand a loaded template with hostile values: never a crash; on
 * success one word per template word, none over the limit */
static void
expand(char *const *tmpl)
{
	static const char big[] = "{sender}{{{list}\"' ;$(x)`\\";
	struct tmpl_vars v = { "-oi\n--x {{recipient}}", big, "demo" };
	char **argv;
	size_t n, i;

	if (tmpl == NULL)
		return;
	for (n = 0; tmpl[n] != NULL; n++)
		;
	if (tmpl_expand(tmpl, &v, &argv) < 0)
		return;
	for (i = 0; i < n; i++) {
		if (argv[i] == NULL || strlen(argv[i]) > LG_MAX_ARG_BYTES)
			__builtin_trap();
		sink += strlen(argv[i]);
	}
	if (argv[n] != NULL)
		__builtin_trap();
	tmpl_free(argv);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct listcfg_global g, g2;
	struct listcfg_list l, l2;
	const uint8_t *sep;
	char err[2048], *p1, *p2, *raw;
	size_t n1, n2, nraw;

	if (dir1[0] == '\0')
		setup();
	sep = memmem(data, size, "\n%%\n", 4);
	if (sep != NULL) {
		put(dir1, "listgate.conf", data, (size_t)(sep - data));
		put(dir1, "lists/demo.conf", sep + 4,
		    size - (size_t)(sep + 4 - data));
	} else {
		put(dir1, "listgate.conf", "", 0);
		put(dir1, "lists/demo.conf", data, size);
	}
	err[0] = '\0';
	if (listcfg_load_global(dir1, &g, err, sizeof(err)) < 0) {
		if (strstr(err, "listgate.conf") == NULL)
			__builtin_trap();
		return 0;
	}
	err[0] = '\0';
	if (listcfg_load_list(&g, "demo", &l, err, sizeof(err)) < 0) {
		if (strstr(err, "demo.conf") == NULL)
			__builtin_trap();
		listcfg_free_global(&g);
		return 0;
	}
	expand(l.deliver);
	expand(l.release);

	/* print, load the printout, print again: the same settings */
	p1 = printed(&g, &l, &n1, 1);
	raw = printed(&g, NULL, &nraw, 0);
	put(dir2, "listgate.conf", raw, nraw);
	free(raw);
	raw = printed(NULL, &l, &nraw, 0);
	put(dir2, "lists/demo.conf", raw, nraw);
	free(raw);
	if (listcfg_load_global(dir2, &g2, err, sizeof(err)) < 0 ||
	    listcfg_load_list(&g2, "demo", &l2, err, sizeof(err)) < 0) {
		fprintf(stderr, "the printout does not load: %s\n", err);
		__builtin_trap();
	}
	p2 = printed(&g2, &l2, &n2, 1);
	if (n1 != n2 || memcmp(p1, p2, n1) != 0) {
		fprintf(stderr, "printed:\n%.*s\nreloaded:\n%.*s\n", (int)n1,
		    p1, (int)n2, p2);
		__builtin_trap();
	}
	free(p1);
	free(p2);
	listcfg_free_list(&l2);
	listcfg_free_global(&g2);
	listcfg_free_list(&l);
	listcfg_free_global(&g);
	return 0;
}

/*
 * fuzz_tmpl.c - libFuzzer target for argv templates (deliver, release):
 * parsing them from a configuration line and expanding them
 *
 * The input's first line becomes `deliver = LINE` in lists/demo.conf
 * (under /dev/shm, else $TMPDIR); the rest, cut at NUL bytes, gives the
 * values of {sender}, {recipient} and {list}.  A template that loads
 * must start with an absolute program without placeholders and have
 * 1..LG_MAX_ARGV words; expanding it must give exactly one argument per
 * word, each the word with {sender}, {recipient}, {list} replaced by
 * their values and "{{" by "{" (compared with a reference expansion
 * written here), or fail only when an argument would pass
 * LG_MAX_ARG_BYTES.  A value never splits into several arguments, and
 * none is ever read as a placeholder itself.  Build and run with
 * tests/fuzz/run.sh tmpl.
 */
#include "config.h"

#include <sys/stat.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "listcfg/listcfg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[200];

static void
setup(void)
{
	const char *t = getenv("TMPDIR");
	char p[300];
	FILE *f;

	if (access("/dev/shm", W_OK) == 0)
		t = "/dev/shm";
	else if (t == NULL || *t == '\0')
		t = "/tmp";
	snprintf(dir, sizeof(dir), "%s/lg-fuzz-tmpl.%ld", t, (long)getpid());
	snprintf(p, sizeof(p), "%s/lists", dir);
	mkdir(dir, 0700);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/listgate.conf", dir);
	if ((f = fopen(p, "w")) == NULL)
		__builtin_trap();
	fclose(f);
}

/* the reference expansion of one word: malloc'd, or NULL when longer
 * than LG_MAX_ARG_BYTES */
static char *
ref_expand(const char *w, const struct listcfg_vars *v)
{
	static const char *const names[] = { "{sender}", "{recipient}",
	    "{list}" };
	const char *vals[3];
	size_t cap = LG_MAX_ARG_BYTES + 1, n = 0, k, i;
	char *out = malloc(cap);

	vals[0] = v->sender;
	vals[1] = v->recipient;
	vals[2] = v->list;
	if (out == NULL)
		__builtin_trap();
	while (*w) {
		const char *add = w;
		size_t addn = 1, skip = 1;

		if (w[0] == '{' && w[1] == '{') {
			skip = 2;
		} else if (w[0] == '{') {
			for (i = 0; i < 3; i++)
				if (strncmp(w, names[i], strlen(names[i])) == 0)
					break;
			if (i == 3)
				__builtin_trap();	/* the parser let it in */
			add = vals[i];
			addn = strlen(add);
			skip = strlen(names[i]);
		}
		if (addn > LG_MAX_ARG_BYTES - n) {
			free(out);
			return NULL;
		}
		for (k = 0; k < addn; k++)
			out[n++] = add[k];
		w += skip;
	}
	out[n] = '\0';
	return out;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct listcfg_global g;
	struct listcfg_list l;
	struct listcfg_vars v;
	const uint8_t *nl;
	char path[300], err[2048], *vals[3], **argv, *want;
	const char *rest, *end;
	size_t line, words, i;
	int r, fail_ok = 0;
	FILE *f;

	if (dir[0] == '\0')
		setup();
	nl = memchr(data, '\n', size);
	line = nl ? (size_t)(nl - data) : size;
	snprintf(path, sizeof(path), "%s/lists/demo.conf", dir);
	if ((f = fopen(path, "w")) == NULL)
		__builtin_trap();
	fputs("deliver = ", f);
	fwrite(data, 1, line, f);
	fputc('\n', f);
	fclose(f);
	if (listcfg_load_global(dir, &g, err, sizeof(err)) < 0)
		__builtin_trap();
	if (listcfg_load_list(&g, "demo", &l, err, sizeof(err)) < 0) {
		if (strstr(err, "demo.conf:1: ") == NULL)
			__builtin_trap();
		listcfg_free_global(&g);
		return 0;
	}
	if (l.deliver == NULL || l.deliver[0] == NULL ||
	    l.deliver[0][0] != '/')
		__builtin_trap();
	{
		/* no placeholder in the program ("{{" is a literal "{"):
		 * its expansion does not depend on the values */
		struct listcfg_vars a = { "", "", "" }, b = { "x", "y", "z" };
		char *pa = ref_expand(l.deliver[0], &a);
		char *pb = ref_expand(l.deliver[0], &b);

		if (pa == NULL || pb == NULL || strcmp(pa, pb) != 0)
			__builtin_trap();
		free(pa);
		free(pb);
	}
	for (words = 0; l.deliver[words] != NULL; words++)
		;
	if (words > LG_MAX_ARGV)
		__builtin_trap();

	/* the values: NUL-separated after the first line */
	end = (const char *)data + size;
	rest = nl ? (const char *)nl + 1 : end;
	for (i = 0; i < 3; i++) {
		const char *z = rest < end ? memchr(rest, '\0',
		    (size_t)(end - rest)) : NULL;
		size_t n = rest < end ? (z ? (size_t)(z - rest) :
		    (size_t)(end - rest)) : 0;

		if ((vals[i] = malloc(n + 1)) == NULL)
			__builtin_trap();
		memcpy(vals[i], rest, n);
		vals[i][n] = '\0';
		rest = rest + n + (z != NULL);
	}
	v.sender = vals[0];
	v.recipient = vals[1];
	v.list = vals[2];
	r = listcfg_expand(l.deliver, &v, &argv);
	for (i = 0; i < words; i++) {
		want = ref_expand(l.deliver[i], &v);
		if (want == NULL)
			fail_ok = 1;
		if (r == 0 && (want == NULL || strcmp(argv[i], want) != 0))
			__builtin_trap();
		free(want);
	}
	if (r == 0) {
		if (argv[words] != NULL)
			__builtin_trap();
		listcfg_free_argv(argv);
	} else if (!fail_ok)
		__builtin_trap();	/* failed without an oversize word */
	for (i = 0; i < 3; i++)
		free(vals[i]);
	listcfg_free_list(&l);
	listcfg_free_global(&g);
	return 0;
}

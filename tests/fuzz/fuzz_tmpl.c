/*
 * fuzz_tmpl.c - libFuzzer target for argv templates (deliver, release):
 * tmpl_parse and tmpl_expand (listcfg/tmpl.h)
 *
 * The input's first line is the template text; the rest, cut at NUL
 * bytes, gives the values of {sender}, {recipient} and {list}.  A text
 * that does not parse must say why; one that parses must start with an
 * absolute program without placeholders and have 1..LG_MAX_ARGV words,
 * or with an LMTP destination that tmpl_lmtp_parse takes and have two.
 * Expanding it must give exactly one argument per word, each the word
 * with {sender}, {recipient}, {list} replaced by their values and "{{"
 * by "{" (compared with a reference expansion written here), or fail
 * only when an argument would pass LG_MAX_ARG_BYTES.  A value never
 * splits into several arguments and is never read as a placeholder
 * itself.  Build and run with tests/fuzz/run.sh tmpl.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/util/lglimits.h"
#include "listcfg/tmpl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the reference expansion of one word: malloc'd, or NULL when longer
 * than LG_MAX_ARG_BYTES */
static char *
ref_expand(const char *w, const struct tmpl_vars *v)
{
	static const char *const names[] = { "{sender}", "{recipient}",
	    "{list}" };
	const char *vals[3];
	size_t n = 0, k, i;
	char *out = malloc(LG_MAX_ARG_BYTES + 1);

	vals[0] = v->sender ? v->sender : "";
	vals[1] = v->recipient ? v->recipient : "";
	vals[2] = v->list ? v->list : "";
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
	struct tmpl_vars v, a = { "", "", "" }, b = { "x", "y", "z" };
	const uint8_t *nl;
	const char *rest, *end;
	char err[1024], *text, *vals[3], **tmpl, **argv, *want, *pa, *pb;
	size_t line, words, i;
	int r, fail_ok = 0, unsafe_ok = 0;

	nl = memchr(data, '\n', size);
	line = nl ? (size_t)(nl - data) : size;
	if ((text = malloc(line + 1)) == NULL)
		__builtin_trap();
	memcpy(text, data, line);
	text[line] = '\0';	/* a NUL inside ends the text early: fine */
	err[0] = '\0';
	if (tmpl_parse(text, &tmpl, err, sizeof(err)) < 0) {
		if (err[0] == '\0')
			__builtin_trap();	/* a refusal says why */
		free(text);
		return 0;
	}
	free(text);
	if (tmpl == NULL || tmpl[0] == NULL)
		__builtin_trap();
	if (tmpl_is_lmtp(tmpl[0])) {
		/* an LMTP server and exactly one recipient */
		struct tmpl_lmtp d;

		if (tmpl_lmtp_parse(tmpl[0], &d, err, sizeof(err)) < 0 ||
		    tmpl[1] == NULL || tmpl[2] != NULL)
			__builtin_trap();
	} else if (tmpl[0][0] != '/')
		__builtin_trap();
	/* no placeholder in the program ("{{" is a literal "{"): its
	 * expansion does not depend on the values */
	pa = ref_expand(tmpl[0], &a);
	pb = ref_expand(tmpl[0], &b);
	if (pa == NULL || pb == NULL || strcmp(pa, pb) != 0)
		__builtin_trap();
	free(pa);
	free(pb);
	for (words = 0; tmpl[words] != NULL; words++)
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
	v.list = (size > 0 && (data[0] & 1)) ? vals[2] : NULL;	/* NULL expands to "" */
	r = tmpl_expand(tmpl, &v, &argv);
	for (i = 0; i < words; i++) {
		want = ref_expand(tmpl[i], &v);
		if (want == NULL)
			fail_ok = 1;
		/* a value that would begin an argument with '-' in a word
		 * after the program that starts with a placeholder: refused
		 * (TMPL_EUNSAFE) unless "--" protects the word */
		if (want != NULL && i > 0 && tmpl[i][0] == '{' &&
		    tmpl[i][1] != '{' && want[0] == '-')
			unsafe_ok = 1;
		if (r == 0 && (want == NULL || strcmp(argv[i], want) != 0))
			__builtin_trap();
		free(want);
	}
	if (r == 0) {
		if (argv[words] != NULL)
			__builtin_trap();
		tmpl_free(argv);
	} else if (r == TMPL_EUNSAFE ? !unsafe_ok : !fail_ok)
		__builtin_trap();	/* failed without an oversize word or
					 * an unprotected '-' value */
	for (i = 0; i < 3; i++)
		free(vals[i]);
	tmpl_free(tmpl);
	return 0;
}

/*
 * suggest.c - the listgate command line a message suggests running
 *
 * Trusts the directory it is given (the configuration in use, chosen by
 * the administrator); its quoting makes any bytes one shell word.  The
 * command line lives in a fixed buffer: no allocation, so a message
 * written when memory has run out names it as well.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "gate/util/suggest.h"

/* "listgate --config " and the directory quoted: each byte at most 4
 * ('\''), and the two quotes */
static char cmdline[sizeof("listgate --config ") + 4 * PATH_MAX + 2] =
    "listgate";

size_t
suggest_quote(char *out, size_t sz, const char *s)
{
	static const char safe[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
	    "qrstuvwxyz0123456789_./,:=@%+-";
	size_t n = 0, i;

#define PUT(c) do { if (n + 1 < sz) out[n] = (c); n++; } while (0)
	if (*s != '\0' && strspn(s, safe) == strlen(s)) {
		for (i = 0; s[i] != '\0'; i++)
			PUT(s[i]);
	} else {
		PUT('\'');
		for (i = 0; s[i] != '\0'; i++) {
			if (s[i] == '\'') {
				PUT('\''); PUT('\\'); PUT('\''); PUT('\'');
			} else
				PUT(s[i]);
		}
		PUT('\'');
	}
#undef PUT
	if (sz > 0)
		out[n < sz ? n : sz - 1] = '\0';
	return n;
}

void
suggest_set_config(const char *dir)
{
	static const char head[] = "listgate --config ";
	size_t n = sizeof(head) - 1;

	if (dir == NULL || *dir == '\0' ||
	    strlen(dir) > PATH_MAX) {	/* no such directory, never loaded */
		snprintf(cmdline, sizeof(cmdline), "listgate");
		return;
	}
	memcpy(cmdline, head, n);
	(void)suggest_quote(cmdline + n, sizeof(cmdline) - n, dir);
}

const char *
suggest_cmd(void)
{
	return cmdline;
}

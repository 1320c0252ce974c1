/*
 * app.c - what the commands share above storage and configuration:
 * connecting with the configured database, who is deciding, showing
 * untrusted text on a terminal or in JSON
 *
 * Trusts the configuration; text from posts is hostile and only leaves
 * through qc_clean (terminal) or qc_json_str (JSON).  Errors are returned
 * as -1 with a message; nothing here prints or exits.
 */
#include "config.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/queue.h"
#include "gate/app/app.h"
#include "gate/util/utf8.h"
#include "listcfg/listcfg.h"

int
app_connect(const char *config_dir, struct listcfg_global *g,
    struct queue **q_r, int check, char *err, size_t errsz)
{
	*q_r = NULL;
	if (listcfg_load_global(listcfg_dir(config_dir), g, err, errsz) < 0)
		return -1;
	if (!queue_configured(g->conninfo)) {
		snprintf(err, errsz, "no database configured: set database in "
		    "%s/listgate.conf (or the PG* environment variables)",
		    g->dir);
		listcfg_free_global(g);
		return -1;
	}
	if (queue_open(g->conninfo, q_r, err, errsz) < 0) {
		listcfg_free_global(g);
		return -1;
	}
	if (check && queue_check_schema(*q_r, err, errsz) < 0) {
		queue_close(*q_r);
		*q_r = NULL;
		listcfg_free_global(g);
		return -1;
	}
	return 0;
}

const char *
app_who(const char *by, char *out, size_t outsz)
{
	const char *u;
	struct passwd *pw;

	if (by != NULL && *by != 0)
		u = by;
	else if ((u = getenv("USER")) == NULL || *u == 0) {
		pw = getpwuid(getuid());
		u = pw && pw->pw_name ? pw->pw_name : NULL;
	}
	if (u == NULL)
		snprintf(out, outsz, "uid %ld", (long)getuid());
	else
		snprintf(out, outsz, "%s", u);
	return out;
}

/* length of the valid UTF-8 sequence at p (n bytes left), 0 if invalid
 * or a C1 control (U+0080..U+009F): those are controls too */
static size_t
u8len(const unsigned char *p, size_t n)
{
	size_t len = utf8_len(p, n);

	if (len == 2 && p[0] == 0xc2 && p[1] < 0xa0)
		return 0;
	return len;
}

int
qc_clean(struct buf *out, const char *s, size_t len, size_t maxchars,
    int keep_nl)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, nch = 0, k;

	while (i < len) {
		if (nch >= maxchars)
			return buf_adds(out, "...");
		k = u8len(p + i, len - i);
		if (k == 0) {
			if (buf_addc(out, '?') < 0)
				return -1;
			i++;
		} else if (k == 1 && (p[i] < 0x20 || p[i] == 0x7f)) {
			int c = p[i];

			if (keep_nl && (c == '\n' || c == '\t'))
				;
			else if (keep_nl && c == '\r') {
				i++;
				continue;
			} else
				c = c == '\t' || c == '\n' || c == '\r' ? ' ' :
				    '?';
			if (buf_addc(out, c) < 0)
				return -1;
			i++;
		} else {
			if (buf_add(out, p + i, k) < 0)
				return -1;
			i += k;
		}
		nch++;
	}
	return 0;
}

int
qc_json_str(struct buf *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p), i = 0, k;
	char esc[8];

	if (buf_addc(out, '"') < 0)
		return -1;
	while (i < n) {
		k = u8len(p + i, n - i);
		if (k == 0) {
			/* invalid byte: U+FFFD */
			if (buf_adds(out, "\\ufffd") < 0)
				return -1;
			i++;
			continue;
		}
		if (k > 1) {
			if (buf_add(out, p + i, k) < 0)
				return -1;
			i += k;
			continue;
		}
		switch (p[i]) {
		case '"':
			if (buf_adds(out, "\\\"") < 0)
				return -1;
			break;
		case '\\':
			if (buf_adds(out, "\\\\") < 0)
				return -1;
			break;
		case '\n':
			if (buf_adds(out, "\\n") < 0)
				return -1;
			break;
		case '\t':
			if (buf_adds(out, "\\t") < 0)
				return -1;
			break;
		default:
			if (p[i] < 0x20 || p[i] == 0x7f) {
				snprintf(esc, sizeof(esc), "\\u%04x", p[i]);
				if (buf_adds(out, esc) < 0)
					return -1;
			} else if (buf_addc(out, p[i]) < 0)
				return -1;
		}
		i++;
	}
	return buf_addc(out, '"');
}

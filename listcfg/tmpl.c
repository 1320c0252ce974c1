/*
 * tmpl.c - argv templates: split at load, expand per post
 *
 * The template text comes from a configuration file and the values from
 * the MTA's envelope: both are hostile.  Words are bounded
 * (LG_MAX_CONF_LINE, at most LG_MAX_ARGV of them), an expanded argument
 * is at most LG_MAX_ARG_BYTES, and a value only ever fills its
 * placeholder inside one argument, never at the start of one where it
 * could be read as an option.  Depends on nothing but buf and
 * xalloc (the argv-template fuzz target links just these).  Never logs,
 * never exits; -1 (or TMPL_EUNSAFE) on every failure.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "gate/util/buf.h"
#include "gate/util/lglimits.h"
#include "gate/util/xalloc.h"
#include "listcfg/tmpl.h"

static int
is_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

void
tmpl_free(char **argv)
{
	size_t i;

	if (argv == NULL)
		return;
	for (i = 0; argv[i] != NULL; i++)
		xfree(argv[i]);
	xfree(argv);
}

/* 1 if word w contains a placeholder ("{{" is none) */
static int
has_placeholder(const char *w)
{
	for (; (w = strchr(w, '{')) != NULL; w++) {
		if (w[1] == '{')
			w++;
		else
			return 1;
	}
	return 0;
}

/* 1 if word w (an argument, not the program) starts with a placeholder */
static int
starts_with_placeholder(const char *w)
{
	return w[0] == '{' && w[1] != '{';
}

/*
 * 1 if argument i of tmpl (i >= 1) is protected from being read as an
 * option: a word "--" comes before it, or the word right before it is
 * an option that takes it as its value (starts with '-', is neither "-"
 * nor "--", has no '=' and no placeholder of its own).
 */
static int
protected_word(char *const *tmpl, size_t i)
{
	const char *p;
	size_t j;

	for (j = 1; j < i; j++)
		if (strcmp(tmpl[j], "--") == 0)
			return 1;
	if (i < 2)
		return 0;
	p = tmpl[i - 1];
	return p[0] == '-' && p[1] != '\0' && strcmp(p, "--") != 0 &&
	    strchr(p, '=') == NULL && !has_placeholder(p);
}

/* the placeholders, in the order of their TMPL_* bits */
static const char *const names[] = { "{sender}", "{recipient}", "{list}",
    "{moderator}", "{id}" };
#define NNAMES	(sizeof(names) / sizeof(names[0]))

/* 1 if word w starts with a placeholder whose value comes from the
 * envelope (an attacker): {sender} and {recipient}.  {list} (a checked
 * name), {moderator} (the configuration) and {id} (a number) never
 * start with '-' */
static int
starts_with_envelope(const char *w)
{
	return starts_with_placeholder(w) &&
	    (strncmp(w, "{sender}", 8) == 0 ||
	    strncmp(w, "{recipient}", 11) == 0);
}

/* the length of the placeholder at p ("{sender}" ...) if set allows it,
 * 0 if none */
static size_t
placeholder(const char *p, unsigned set, const struct tmpl_vars *v,
    const char **val_r)
{
	size_t i, n;

	for (i = 0; i < NNAMES; i++) {
		n = strlen(names[i]);
		if (!(set & (1u << i)) || strncmp(p, names[i], n) != 0)
			continue;
		if (val_r != NULL && v != NULL)
			*val_r = i == 0 ? v->sender : i == 1 ? v->recipient :
			    i == 2 ? v->list : i == 3 ? v->moderator : v->id;
		return n;
	}
	return 0;
}

/* "{sender} {recipient} {list}" for the placeholders of set */
static void
known(unsigned set, char *out, size_t outsz)
{
	size_t i, len = 0;
	int w;

	out[0] = '\0';
	for (i = 0; i < NNAMES && len < outsz; i++) {
		if (!(set & (1u << i)))
			continue;
		w = snprintf(out + len, outsz - len, "%s%s", len ? " " : "",
		    names[i]);
		if (w < 0)
			break;
		len += (size_t)w;
	}
}

int
tmpl_parse(const char *text, char ***argv_r, char *err, size_t errsz)
{
	return tmpl_parse_set(text, TMPL_DELIVER, argv_r, err, errsz);
}

int
tmpl_parse_set(const char *text, unsigned set, char ***argv_r, char *err,
    size_t errsz)
{
	char **argv, kn[128];
	struct buf w = BUF_INIT(LG_MAX_CONF_LINE);
	const char *p = text, *q;
	size_t n = 0;
	int inword, lmtp = 0;

	*argv_r = NULL;
	if ((argv = xcalloc(LG_MAX_ARGV + 1, sizeof(*argv))) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	for (;;) {
		while (is_blank((unsigned char)*p))
			p++;
		if (*p == '\0' || *p == '#')
			break;
		if (n == LG_MAX_ARGV) {
			snprintf(err, errsz, "too many words (at most %u)",
			    (unsigned)LG_MAX_ARGV);
			goto fail;
		}
		buf_reset(&w);
		inword = 1;
		while (inword && *p != '\0') {
			if (is_blank((unsigned char)*p)) {
				inword = 0;
			} else if (*p == '"') {
				for (p++; *p != '"'; p++) {
					if (*p == '\0') {
						snprintf(err, errsz,
						    "unterminated quote");
						goto fail;
					}
					if (*p == '\\') {
						p++;
						if (*p != '"' && *p != '\\') {
							snprintf(err, errsz,
							    "bad escape (only "
							    "\\\" and \\\\)");
							goto fail;
						}
					}
					if (buf_addc(&w, *p) < 0)
						goto nomem;
				}
				p++;
			} else {
				if (buf_addc(&w, *p) < 0)
					goto nomem;
				p++;
			}
		}
		/* placeholders: known names and "{{" only */
		for (q = buf_str(&w); (q = strchr(q, '{')) != NULL; ) {
			size_t pl;

			if (q[1] == '{') {
				q += 2;
				continue;
			}
			if ((pl = placeholder(q, set, NULL, NULL)) == 0) {
				known(set, kn, sizeof(kn));
				snprintf(err, errsz, "unknown placeholder "
				    "`%.*s' (known: %s; {{ for a literal {)",
				    (int)strcspn(q + 1, "}") + 2, q, kn);
				goto fail;
			}
			if (n == 0) {
				snprintf(err, errsz, "unsafe template: a "
				    "placeholder in the program name");
				goto fail;
			}
			q += pl;
		}
		if (n == 0 && (set & TMPL_LMTP) &&
		    tmpl_is_lmtp(buf_str(&w))) {
			struct tmpl_lmtp d;

			if (tmpl_lmtp_parse(buf_str(&w), &d, err, errsz) < 0)
				goto fail;
			lmtp = 1;
		} else if (n == 0 && w.len > 0 && w.data[0] != '/') {
			snprintf(err, errsz, "unsafe template: the program "
			    "`%s' must be an absolute path", buf_str(&w));
			goto fail;
		}
		if (n == 0 && w.len == 0) {
			snprintf(err, errsz, "unsafe template: empty program "
			    "name");
			goto fail;
		}
		if ((argv[n] = xstrdup(buf_str(&w))) == NULL)
			goto nomem;
		if (lmtp && n == 1 && !has_placeholder(argv[n]) &&
		    !tmpl_addr_ok(argv[n])) {
			snprintf(err, errsz, "LMTP recipient `%.300s' is not "
			    "an address (LOCAL@DOMAIN, no blanks, quotes or "
			    "brackets, at most %u bytes)", argv[n],
			    (unsigned)TMPL_ADDR_MAX);
			goto fail;
		}
		if (lmtp && n == 2) {
			snprintf(err, errsz, "an LMTP destination takes "
			    "exactly one recipient address (`%s ADDRESS'), "
			    "no more words", argv[0]);
			goto fail;
		}
		/* the envelope must not begin an unprotected argument (no
		 * program reads an LMTP recipient; a checked sender never
		 * starts with '-') */
		if (n > 0 && !lmtp && starts_with_envelope(argv[n]) &&
		    !protected_word(argv, n) && !((set & TMPL_SENDER_CHECKED) &&
		    strncmp(argv[n], "{sender}", 8) == 0)) {
			snprintf(err, errsz, "unsafe template: %.*s begins "
			    "argument %zu, where a value starting with '-' "
			    "would be read as an option; put `--' before it, "
			    "or the option that takes it as its value "
			    "(-f {sender})", (int)strcspn(argv[n], "}") + 1,
			    argv[n], n);
			goto fail;
		}
		n++;
	}
	if (n == 0) {
		snprintf(err, errsz, "empty template");
		goto fail;
	}
	if (lmtp && n != 2) {
		snprintf(err, errsz, "an LMTP destination needs the recipient "
		    "address after it (`%s dev@lists.example.org')", argv[0]);
		goto fail;
	}
	buf_free(&w);
	*argv_r = argv;
	return 0;
nomem:
	snprintf(err, errsz, "out of memory");
fail:
	buf_free(&w);
	tmpl_free(argv);
	return -1;
}

int
tmpl_expand(char *const *tmpl, const struct tmpl_vars *v, char ***argv_r)
{
	struct buf w = BUF_INIT(LG_MAX_ARG_BYTES);
	char **argv;
	const char *p, *val;
	size_t n, i, pl;
	int unsafe, lmtp, rc = -1;

	*argv_r = NULL;
	for (n = 0; tmpl[n] != NULL; n++)
		;
	if ((argv = xcalloc(n + 1, sizeof(*argv))) == NULL)
		return -1;
	lmtp = n > 0 && tmpl_is_lmtp(tmpl[0]);
	for (i = 0; i < n; i++) {
		unsafe = i > 0 && !lmtp && starts_with_placeholder(tmpl[i]) &&
		    !protected_word(tmpl, i);
		buf_reset(&w);
		for (p = tmpl[i]; *p != '\0'; ) {
			if (*p != '{') {
				if (buf_addc(&w, *p++) < 0)
					goto fail;
				continue;
			}
			if (p[1] == '{') {
				if (buf_addc(&w, '{') < 0)
					goto fail;
				p += 2;
				continue;
			}
			val = NULL;
			if ((pl = placeholder(p, ~0u, v, &val)) == 0)
				goto fail;
			if (val != NULL && buf_adds(&w, val) < 0)
				goto fail;
			p += pl;
		}
		if (unsafe && w.len > 0 && w.data[0] == '-') {
			rc = TMPL_EUNSAFE;
			goto fail;
		}
		if ((argv[i] = xstrdup(buf_str(&w))) == NULL)
			goto fail;
	}
	buf_free(&w);
	*argv_r = argv;
	return 0;
fail:
	buf_free(&w);
	tmpl_free(argv);
	return rc;
}

/* --- LMTP destinations ------------------------------------------------ */

int
tmpl_is_lmtp(const char *word)
{
	return word != NULL && strncmp(word, "lmtp:", 5) == 0;
}

static int
is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int
is_alnum(int c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* 1 if the n bytes at p are a host name or IPv4 address (letters,
 * digits, '-', '.'; labels of 1..63 bytes, none starting or ending with
 * '-') */
static int
hostname_ok(const char *p, size_t n)
{
	size_t i, lab = 0;

	if (n == 0 || n > TMPL_LMTP_HOST_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		if (p[i] == '.') {
			if (lab == 0 || p[i - 1] == '-')
				return 0;
			lab = 0;
		} else if (is_alnum((unsigned char)p[i]) || p[i] == '-') {
			if (p[i] == '-' && lab == 0)
				return 0;
			if (++lab > 63)
				return 0;
		} else
			return 0;
	}
	return lab > 0 && p[n - 1] != '-';
}

/* 1 if the n bytes at p may be an IPv6 address (hex digits, ':', '.';
 * getaddrinfo decides the rest) */
static int
ip6_ok(const char *p, size_t n)
{
	size_t i, colons = 0;

	if (n < 2 || n > 45)
		return 0;
	for (i = 0; i < n; i++) {
		if (p[i] == ':')
			colons++;
		else if (!is_digit((unsigned char)p[i]) && p[i] != '.' &&
		    !((p[i] >= 'a' && p[i] <= 'f') ||
		    (p[i] >= 'A' && p[i] <= 'F')))
			return 0;
	}
	return colons >= 2;
}

int
tmpl_lmtp_parse(const char *word, struct tmpl_lmtp *d, char *err,
    size_t errsz)
{
	const char *p, *colon, *host;
	size_t hn, i;
	unsigned long port = 0;

	memset(d, 0, sizeof(*d));
	if (!tmpl_is_lmtp(word)) {
		snprintf(err, errsz, "not an LMTP destination (lmtp:...)");
		return -1;
	}
	p = word + 5;
	if (strncmp(p, "unix:/", 6) == 0) {
		p += 5;
		if (strlen(p) > TMPL_LMTP_PATH_MAX) {
			snprintf(err, errsz, "LMTP socket path longer than %u "
			    "bytes", (unsigned)TMPL_LMTP_PATH_MAX);
			return -1;
		}
		for (i = 0; p[i] != '\0'; i++)
			if ((unsigned char)p[i] <= ' ' ||
			    (unsigned char)p[i] == 0x7f) {
				snprintf(err, errsz, "LMTP socket path with a "
				    "blank or a control character");
				return -1;
			}
		d->unix_socket = 1;
		memcpy(d->path, p, strlen(p) + 1);
		return 0;
	}
	/* "unix" would pass for a host name, and the path for its port */
	if (strncmp(p, "unix:", 5) == 0) {
		snprintf(err, errsz, "bad LMTP destination `%.300s': the "
		    "socket path after lmtp:unix: must be absolute "
		    "(lmtp:unix:/PATH)", word);
		return -1;
	}
	if (*p == '[') {
		host = p + 1;
		if ((colon = strchr(host, ']')) == NULL || colon[1] != ':' ||
		    !ip6_ok(host, (size_t)(colon - host))) {
			snprintf(err, errsz, "bad LMTP destination `%.300s': "
			    "want lmtp:[IPv6-ADDRESS]:PORT", word);
			return -1;
		}
		hn = (size_t)(colon - host);
		colon++;
	} else {
		host = p;
		if ((colon = strrchr(host, ':')) == NULL ||
		    !hostname_ok(host, (size_t)(colon - host))) {
			snprintf(err, errsz, "bad LMTP destination `%.300s': "
			    "want lmtp:HOST:PORT (a host name or IPv4 address), "
			    "lmtp:[IPv6-ADDRESS]:PORT or lmtp:unix:/PATH", word);
			return -1;
		}
		hn = (size_t)(colon - host);
	}
	for (p = colon + 1; is_digit((unsigned char)*p) && port <= 65535; p++)
		port = port * 10 + (unsigned long)(*p - '0');
	if (p == colon + 1 || *p != '\0' || port == 0 || port > 65535) {
		snprintf(err, errsz, "bad LMTP destination `%.300s': the port "
		    "must be a number from 1 to 65535", word);
		return -1;
	}
	memcpy(d->host, host, hn);
	d->host[hn] = '\0';
	snprintf(d->port, sizeof(d->port), "%lu", port);
	return 0;
}

/* 1 if c may stand in a local part sent as it is (RFC 5321's atext, and
 * the dots between atoms) */
static int
local_char_ok(int c)
{
	return c > ' ' && c < 0x7f && strchr("<>\"\\(),;:[]@", c) == NULL;
}

int
tmpl_addr_ok(const char *addr)
{
	const char *at;
	size_t n, ln;
	size_t i;

	if (addr == NULL || (n = strlen(addr)) == 0 || n > TMPL_ADDR_MAX)
		return 0;
	if ((at = strrchr(addr, '@')) == NULL || at == addr)
		return 0;
	ln = (size_t)(at - addr);
	for (i = 0; i < ln; i++)
		if (!local_char_ok((unsigned char)addr[i]))
			return 0;
	if (addr[0] == '.' || addr[ln - 1] == '.' ||
	    strstr(addr, "..") != NULL)
		return 0;
	at++;
	if (at[0] == '[') {
		n = strlen(at);
		if (n < 3 || at[n - 1] != ']')
			return 0;
		for (i = 1; i + 1 < n; i++)
			if (!is_alnum((unsigned char)at[i]) &&
			    strchr(".:-", at[i]) == NULL)
				return 0;
		return 1;
	}
	return hostname_ok(at, strlen(at));
}

/*
 * tmpl.h - argv templates: the deliver, release and notify commands
 *
 * A template is split into words when the configuration is loaded
 * (tmpl_parse) and expanded for each post (tmpl_expand).  It never meets
 * a shell: the words become execv's argv, and an envelope value fills a
 * placeholder inside one word without ever splitting it.
 */
#ifndef LG_TMPL_H
#define LG_TMPL_H

#include <stddef.h>

/* tmpl_expand: a value would be read as an option (see tmpl_parse) */
#define TMPL_EUNSAFE	(-2)

/* values for the placeholders {sender} {recipient} {list} {moderator}
 * {id}; a NULL value expands to "" (zero the struct, then fill it) */
struct tmpl_vars {
	const char *sender, *recipient, *list;
	const char *moderator, *id;
};

/* which placeholders a template may use */
#define TMPL_SENDER	0x01u
#define TMPL_RECIPIENT	0x02u
#define TMPL_LIST	0x04u
#define TMPL_MODERATOR	0x08u
#define TMPL_ID		0x10u
/* the program may be an LMTP destination (tmpl_lmtp_parse) */
#define TMPL_LMTP	0x100u
/* deliver and release: the post's envelope and the list; a program or
 * an LMTP server */
#define TMPL_DELIVER	(TMPL_SENDER | TMPL_RECIPIENT | TMPL_LIST | TMPL_LMTP)
/* notify: who the message goes to, the list, the held post's envelope
 * sender and id */
#define TMPL_NOTIFY	(TMPL_MODERATOR | TMPL_LIST | TMPL_SENDER | TMPL_ID)

/*
 * Split text (a configuration value, its trailing comment included) into
 * a template: words at blanks, double quotes group a word and may be
 * mixed with unquoted text (\" and \\ the only escapes), a word starting
 * with '#' begins the comment, at most LG_MAX_ARGV words.  Placeholders
 * are {sender}, {recipient} and {list}; "{{" is a literal '{', any
 * other '{' an error.  The first word is the program: an absolute path
 * without placeholders.
 *
 * A word that starts with {sender} or {recipient} takes its first bytes
 * from the envelope, which the sender chooses: "-oQ/tmp" there would be
 * read as an option.  Such a word must be protected: after a word "--",
 * or right after an option that takes it as its value (a word starting
 * with '-' other than "-" and "--", with no '=' and no placeholder of
 * its own: "-f {sender}").  An unprotected one is refused.  {list} is
 * a checked list name (listcfg_name_ok), which never starts with '-'.
 *
 * 0 with *argv_r NULL-terminated (free with tmpl_free), or -1 with the
 * reason in err (without the key's name).
 */
int tmpl_parse(const char *text, char ***argv_r, char *err, size_t errsz);

/* the same with the placeholders of set (TMPL_* bits) allowed */
int tmpl_parse_set(const char *text, unsigned set, char ***argv_r,
    char *err, size_t errsz);

/*
 * Expand a template: each placeholder stays within its own argument
 * (it never splits into several); "{{" stands for a literal "{".  A NULL
 * value expands to "".  *argv_r is NULL-terminated, free with
 * tmpl_free.  0; TMPL_EUNSAFE when a word that starts with a placeholder
 * is not protected (as tmpl_parse defines it) and its expansion starts
 * with '-' (a template from tmpl_parse can give that only through a
 * {list} value that is no list name; never for an LMTP template, whose
 * words no program parses); else -1: out of memory, an
 * argument would exceed LG_MAX_ARG_BYTES, or an unknown placeholder.
 * *argv_r is NULL after a failure.
 */
int tmpl_expand(char *const *tmpl, const struct tmpl_vars *v,
    char ***argv_r);

/* --- LMTP destinations ------------------------------------------------ */

/* a host name or address in a destination: at most this many bytes */
#define TMPL_LMTP_HOST_MAX	253
/* a socket path: at most this many bytes (sockaddr_un's sun_path is 108
 * on Linux, 104 on the BSDs; the smaller, less its NUL) */
#define TMPL_LMTP_PATH_MAX	103
/* an address in MAIL FROM or RCPT TO: RFC 5321's path, 256 octets with
 * the brackets */
#define TMPL_ADDR_MAX		254

/* where an LMTP template delivers */
struct tmpl_lmtp {
	int unix_socket;			/* 1: path; 0: host and port */
	char host[TMPL_LMTP_HOST_MAX + 1];	/* without [ ] */
	char port[6];				/* decimal, 1..65535 */
	char path[TMPL_LMTP_PATH_MAX + 1];
};

/* 1 if word (a template's first) names an LMTP server: starts "lmtp:" */
int tmpl_is_lmtp(const char *word);

/*
 * Parse an LMTP destination: "lmtp:HOST:PORT" (HOST a name of letters,
 * digits, '-' and '.', or an IPv4 address), "lmtp:[ADDR]:PORT" (an IPv6
 * address: hex digits, ':' and '.'), "lmtp:unix:/PATH" (an absolute path
 * of a Unix socket, no blanks or controls).  0 with *d filled, or -1
 * with the reason in err.
 */
int tmpl_lmtp_parse(const char *word, struct tmpl_lmtp *d, char *err,
    size_t errsz);

/*
 * 1 if addr may be sent as it is between < and > in MAIL FROM or RCPT
 * TO: at most TMPL_ADDR_MAX bytes, LOCAL@DOMAIN with a non-empty local
 * part of printable ASCII other than blanks, '<', '>', '"', '\', '(',
 * ')', ',', ';', ':', '[', ']', and a domain of letters, digits, '-'
 * and '.' (or an address literal in [ ]).  The LMTP client quotes a
 * local part that needs it; a configured address must need no quoting.
 */
int tmpl_addr_ok(const char *addr);

/* free a NULL-terminated vector of strings (NULL is fine) */
void tmpl_free(char **argv);

#endif

/*
 * log.h - logging to syslog (mail facility by default) and to stderr
 *
 * Errors and the one summary line per post go through here.  Untrusted
 * text (header values, file names from mail) must pass log_sanitize()
 * first: control bytes are masked and the text is truncated.
 */
#ifndef LG_LOG_H
#define LG_LOG_H

#include <stddef.h>

/* set the program tag and syslog facility (LOG_MAIL ...); to_syslog 0
 * turns syslog off (the default for interactive commands) */
void log_setup(const char *tag, int facility, int to_syslog);
/* also copy messages to stderr: 1 always, 0 never, -1 when a terminal */
void log_stderr(int mode);
/* syslog facility by name ("mail", "local0".."local7", "user"), -1 if unknown */
int log_facility_by_name(const char *name);

void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Copy at most max bytes of untrusted text into out (size outsz) with
 * control bytes, quotes and backslashes masked as '?' and a trailing
 * "..." when cut.  Always NUL-terminates; returns out.
 */
char *log_sanitize(const void *in, size_t n, size_t max, char *out,
    size_t outsz);

#endif

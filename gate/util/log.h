/*
 * log.h - logging to syslog (mail facility by default) and to stderr
 *
 * Errors and the one summary line per post go through here.  Untrusted
 * text (header values, envelope addresses, file names from mail) must
 * pass sanitize_str(..., SANITIZE_LOG, ...) (gate/util/sanitize.h)
 * first: masked, cut, and unable to end a key="..." value.  Each whole
 * message also passes the sanitizer (SANITIZE_TEXT) before it is
 * written, so no message ever carries a control character or a second
 * line.
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

#endif

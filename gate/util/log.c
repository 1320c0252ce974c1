/*
 * log.c - syslog and stderr logging
 *
 * Messages are formatted into a fixed buffer (truncated, never
 * allocated), so logging works when memory has run out, and written
 * only after the sanitizer (one line, no controls).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <unistd.h>

#include "gate/util/log.h"
#include "gate/util/sanitize.h"

static const char *log_tag = "listgate";
static int log_to_syslog;
static int log_opened;
static int log_facility = LOG_MAIL;
static int stderr_mode = 1;

void
log_setup(const char *tag, int facility, int to_syslog)
{
	log_tag = tag;
	log_facility = facility;
	log_to_syslog = to_syslog;
	if (log_opened) {
		closelog();
		log_opened = 0;
	}
}

void
log_stderr(int mode)
{
	stderr_mode = mode;
}

int
log_facility_by_name(const char *name)
{
	static const struct {
		const char *name;
		int fac;
	} tab[] = {
		{ "mail", LOG_MAIL }, { "user", LOG_USER },
		{ "daemon", LOG_DAEMON }, { "local0", LOG_LOCAL0 },
		{ "local1", LOG_LOCAL1 }, { "local2", LOG_LOCAL2 },
		{ "local3", LOG_LOCAL3 }, { "local4", LOG_LOCAL4 },
		{ "local5", LOG_LOCAL5 }, { "local6", LOG_LOCAL6 },
		{ "local7", LOG_LOCAL7 },
	};
	size_t i;

	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (strcasecmp(name, tab[i].name) == 0)
			return tab[i].fac;
	return -1;
}

static void
log_emit(int prio, const char *level, const char *fmt, va_list ap)
{
	char raw[2048], msg[2048];
	int to_err;

	vsnprintf(raw, sizeof(raw), fmt, ap);
	/* the last line of defence: whatever reached the format is shown
	 * on one line without controls (a no-op for sanitized values) */
	sanitize_str(msg, sizeof(msg), raw, strlen(raw), SANITIZE_NO_LIMIT,
	    SANITIZE_TEXT, 0);
	if (log_to_syslog) {
		if (!log_opened) {
			openlog(log_tag, LOG_PID, log_facility);
			log_opened = 1;
		}
		syslog(prio, "%s", msg);
	}
	to_err = stderr_mode > 0 || (stderr_mode < 0 && isatty(2));
	if (to_err || !log_to_syslog) {
		if (level)
			fprintf(stderr, "%s: %s: %s\n", log_tag, level, msg);
		else
			fprintf(stderr, "%s: %s\n", log_tag, msg);
	}
}

void
log_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_emit(LOG_ERR, "error", fmt, ap);
	va_end(ap);
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_emit(LOG_WARNING, "warning", fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_emit(LOG_INFO, NULL, fmt, ap);
	va_end(ap);
}

/*
 * log.c - syslog and stderr logging, and the sanitizer for untrusted text
 *
 * Messages are formatted into a fixed buffer (truncated, never
 * allocated), so logging works when memory has run out.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <unistd.h>

#include "gate/util/log.h"

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
	char msg[2048];
	int to_err;

	vsnprintf(msg, sizeof(msg), fmt, ap);
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

char *
log_sanitize(const void *in, size_t n, size_t max, char *out, size_t outsz)
{
	const unsigned char *p = in;
	size_t i, o = 0, lim;

	if (outsz == 0)
		return out;
	lim = outsz - 1;
	if (max < lim)
		lim = max;
	for (i = 0; i < n && o < lim; i++) {
		unsigned char c = p[i];

		if (c < 0x20 || c == 0x7f || c == '"' || c == '\\')
			c = '?';
		out[o++] = (char)c;
	}
	if (i < n && outsz >= 4) {
		if (o > outsz - 4)
			o = outsz - 4;
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = 0;
	return out;
}

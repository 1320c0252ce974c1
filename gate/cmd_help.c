/*
 * cmd_help.c - helpers shared by the subcommands
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "cmd.h"

void
cmd_err(const char *name, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "listgate %s: ", name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

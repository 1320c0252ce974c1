/*
 * handoff.c - a deliver or release template's post to a program or to an
 * LMTP server
 *
 * Trusts argv to come from a checked template (tmpl_parse, tmpl_expand);
 * the post and the sender are hostile and pass through untouched (the
 * LMTP client writes the sender only as a checked path).  Never logs,
 * never exits.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "gate/app/handoff.h"
#include "gate/app/lmtp.h"
#include "gate/app/run.h"
#include "listcfg/tmpl.h"

/* the running or last handoff_post goes through LMTP */
static volatile sig_atomic_t via_lmtp;

int
handoff_last_ok(void)
{
	return via_lmtp ? lmtp_last_ok() : run_last_ok();
}

int
handoff_is_lmtp(char *const *argv)
{
	return argv != NULL && argv[0] != NULL && tmpl_is_lmtp(argv[0]);
}

/* the LMTP notes as words for a log line */
static void
notes_str(unsigned notes, char *out, size_t outsz)
{
	snprintf(out, outsz, "%s%s%s",
	    notes & LMTP_NOTE_NULL_SENDER ? "the sender cannot be written in "
	    "MAIL FROM, sent as <>; " : "",
	    notes & LMTP_NOTE_FOLDED ? "lines over 998 bytes broken; " : "",
	    notes & LMTP_NOTE_8BIT_NO_MIME ? "8-bit post to a server without "
	    "8BITMIME; " : "");
	/* no trailing "; " */
	if (strlen(out) >= 2)
		out[strlen(out) - 2] = '\0';
}

int
handoff_exit_perm(int st, int exits)
{
	if (exits == HANDOFF_EXITS_QMAIL)
		return st == 100;
	if (exits == HANDOFF_EXITS_POSTFIX)
		return st == 69 || st == 77;
	return 0;
}

int
handoff_post(char *const *argv, const char *sender,
    const unsigned char *data, size_t len, int fd, unsigned timeout_ms,
    int exits, char *note, size_t notesz, char *err, size_t errsz)
{
	char lerr[1024];
	unsigned notes = 0, secs;
	int st;

	if (note != NULL && notesz > 0)
		note[0] = '\0';
	if (errsz > 0)
		err[0] = '\0';
	via_lmtp = handoff_is_lmtp(argv);
	if (via_lmtp) {
		if (argv[1] == NULL) {
			snprintf(err, errsz, "%s: no recipient address",
			    argv[0]);
			return HANDOFF_PERM;
		}
		st = lmtp_deliver(argv[0], sender, argv[1], data, len,
		    timeout_ms, NULL, &notes, err, errsz);
		if (st == LMTP_OK && note != NULL && notesz > 0)
			notes_str(notes, note, notesz);
		return st == LMTP_OK ? HANDOFF_OK : st == LMTP_PERM ?
		    HANDOFF_PERM : HANDOFF_TEMP;
	}
	/* whole seconds, rounded up (0 stays 0: no limit) */
	secs = timeout_ms / 1000u + (timeout_ms % 1000u != 0);
	fflush(stdout);
	fflush(stderr);
	st = run_argv(argv, data, len, fd, secs, lerr, sizeof(lerr));
	if (st == 0)
		return HANDOFF_OK;
	if (st > 0)
		snprintf(err, errsz, "%s exited with status %d", argv[0], st);
	else
		snprintf(err, errsz, "%s: %s", argv[0], lerr);
	return st > 0 && handoff_exit_perm(st, exits) ? HANDOFF_PERM :
	    HANDOFF_TEMP;
}

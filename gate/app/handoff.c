/*
 * handoff.c - a deliver or release template's post to a program or to an
 * LMTP server
 *
 * Trusts argv to come from a checked template (tmpl_parse, tmpl_expand);
 * the post and the sender are hostile and pass through untouched (the
 * LMTP client writes the sender only as a checked path).  A program's
 * own output goes to a file and then to our standard error once it
 * ended, after a line of ours: under Postfix, pipe(8) takes a status
 * code at the start of the output over the exit status, and a
 * program's "5.1.1 ..." first would bounce a post (or a moderator's
 * reply) we defer.
 * Never logs, never exits.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gate/app/handoff.h"
#include "gate/app/lmtp.h"
#include "gate/app/run.h"
#include "listcfg/tmpl.h"

/* a program's output passed on (its start: pipe(8) keeps less) */
#define OUTPUT_BYTES	4096

/* the running or last handoff_post goes through LMTP: the calling
 * thread's (listgate web's releases run in threads at once) */
static __thread volatile sig_atomic_t via_lmtp;

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

/* a program's words (got bytes) to our standard error after a line of
 * ours saying what they mean ("listgate: WHAT; its output:"): never
 * first in what pipe(8) reads, which takes a status code at the start
 * over our exit status */
static void
pass_words(const char *what, const char *words, ssize_t got)
{
	if (got <= 0)
		return;
	fprintf(stderr, "listgate: %s; its output:\n", what);
	fwrite(words, 1, (size_t)got, stderr);
	if (words[got - 1] != '\n')
		fputc('\n', stderr);
	fflush(stderr);
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
	char lerr[1024], words[OUTPUT_BYTES];
	unsigned notes = 0, secs;
	ssize_t got;
	off_t end;
	int st, out;

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
		    HANDOFF_PERM : st == LMTP_UNSURE ? HANDOFF_UNSURE :
		    HANDOFF_TEMP;
	}
	/* whole seconds, rounded up (0 stays 0: no limit) */
	secs = timeout_ms / 1000u + (timeout_ms % 1000u != 0);
	fflush(stdout);
	fflush(stderr);
	/* the program's words go to a file, never straight to ours: under
	 * Postfix they would come first in what pipe(8) reads, and a
	 * status code there ("5.1.1 ...") outweighs our exit status */
	if ((out = run_output_file(len, lerr, sizeof(lerr))) < 0) {
		snprintf(err, errsz, "%s: not run: no file for its output: %s",
		    argv[0], lerr);
		return HANDOFF_TEMP;
	}
	st = run_argv_out(argv, data, len, fd, secs, out, lerr, sizeof(lerr));
	/* (what it wrote ends at the file's offset) */
	end = lseek(out, 0, SEEK_CUR);
	got = end > 0 ? pread(out, words, (size_t)end < sizeof(words) ?
	    (size_t)end : sizeof(words), 0) : 0;
	close(out);
	if (got < 0)
		got = 0;
	if (st == 0) {
		/* handed on: its words after ours too.  pipe(8) reads no
		 * code in a success's output, but the caller may defer
		 * after it all the same (moderate's watchdog while the
		 * approval is recorded), and a "5.1.1 ..." first would
		 * then bounce the moderator's reply */
		snprintf(lerr, sizeof(lerr), "%s exited with status 0",
		    argv[0]);
		pass_words(lerr, words, got);
		return HANDOFF_OK;
	}
	/* (run_argv_out's message names the program already) */
	if (st > 0)
		snprintf(err, errsz, "%s exited with status %d", argv[0], st);
	else if (run_last_unsure())
		snprintf(err, errsz, "%s after it had read the whole post",
		    lerr);
	else
		snprintf(err, errsz, "%s", lerr);
	pass_words(err, words, got);
	if (st < 0 && run_last_unsure())
		return HANDOFF_UNSURE;
	return st > 0 && handoff_exit_perm(st, exits) ? HANDOFF_PERM :
	    HANDOFF_TEMP;
}

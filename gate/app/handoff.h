/*
 * handoff.h - hand a post on as a deliver or release template says: to a
 * program (run_argv) or to an LMTP server (lmtp_deliver)
 *
 * The one place that chooses between the two, by the template's first
 * word: an absolute path is a program, "lmtp:..." an LMTP server
 * (listcfg/tmpl.h).  Callers expand the template (tmpl_expand) and
 * decide what a failure means for the post.
 */
#ifndef LG_HANDOFF_H
#define LG_HANDOFF_H

#include <stddef.h>

#define HANDOFF_OK	0	/* handed on: the program exited 0, or the
				 * LMTP server answered 250 */
#define HANDOFF_TEMP	(-1)	/* not handed on, try again later: the
				 * program failed (any exit status, a signal
				 * or its time-out before it read the whole
				 * post, not started), or LMTP gave a
				 * 4xx, no answer, a time-out */
#define HANDOFF_PERM	(-2)	/* refused for good: an LMTP server's 5xx,
				 * or a program's exit status that its
				 * dialect (exits below) calls permanent */
#define HANDOFF_UNSURE	(-3)	/* not known: the LMTP server got the whole
				 * post and gave no answer, or the program
				 * was killed (its time-out, a signal) after
				 * it had read the whole post (it may have
				 * handed it on); a temporary failure to a
				 * caller that may hand it on twice */

/* which exit statuses of a program are permanent failures (else every
 * failure is temporary) */
#define HANDOFF_EXITS_TEMP	0	/* none: any failure is temporary */
#define HANDOFF_EXITS_QMAIL	1	/* 100, qmail's hard error
					 * (qmail-command(8)) */
#define HANDOFF_EXITS_POSTFIX	2	/* 69 (EX_UNAVAILABLE) and 77
					 * (EX_NOPERM), sysexits(3): the codes
					 * listgate's filter bounces with under
					 * Postfix */

/* 1 when a program's exit status st is a permanent failure by exits
 * (HANDOFF_EXITS_*), else 0 */
int handoff_exit_perm(int st, int exits);

/* 1 if the template (or its expansion) names an LMTP server */
int handoff_is_lmtp(char *const *argv);

/*
 * 1 once the post of the calling thread's running (or last)
 * handoff_post is handed on: its program exited 0 (run_last_ok), or its
 * LMTP server answered 2xx after the data (lmtp_last_ok), even before
 * handoff_post returns.
 * For a handler of the watchdog or of a stop signal, which must not
 * defer a post handed on.  Async-signal-safe.
 */
int handoff_last_ok(void);

/*
 * Hand the post on as argv (an expanded template) says.  A program gets
 * the post on its standard input (run_argv: fd when >= 0, else
 * data/len), and its output (standard output and error, the first 4 KiB)
 * is written to our standard error when it has ended, always after a
 * line "listgate: PROGRAM exited with status N; its output:" (N 0 after
 * a success; never the program's words first: pipe(8) would read a
 * status code there); an LMTP server gets data/len from sender for the address
 * argv[1].  All within timeout_ms (0: no limit; a program's time-out
 * is rounded up to whole seconds).  A program's exit status is a
 * permanent failure as exits (HANDOFF_EXITS_*) says, every other
 * failure temporary.  Returns HANDOFF_OK, HANDOFF_TEMP, HANDOFF_PERM or
 * HANDOFF_UNSURE;
 * err says why for the failures, naming the program or the server
 * ("/usr/bin/x exited with status 1", "lmtp:127.0.0.1:8024: RCPT TO:
 * 550 ...").  note (may be NULL) gets, after HANDOFF_OK, what is worth
 * a log line ("" mostly: an LMTP sender sent as <>, long lines broken).
 */
int handoff_post(char *const *argv, const char *sender,
    const unsigned char *data, size_t len, int fd, unsigned timeout_ms,
    int exits, char *note, size_t notesz, char *err, size_t errsz);

#endif

/*
 * member.h - subscriber evidence: ask the list manager whether the
 * sender is a member, with a bounded time
 *
 * The list's member_check is an argv template ({sender}, {list}) run
 * without a shell, its standard input, output and error on /dev/null,
 * in a process group of its own, with the environment of every
 * configured command (run_child_env).  Exit 0: a member; exit 1: not one.
 * Any other exit, a signal, a failure to start or the time-out (the
 * group is then killed) is no evidence, never an error of the post.
 * Never logs, never exits.
 */
#ifndef LG_MEMBER_H
#define LG_MEMBER_H

#include <stddef.h>
#include <sys/types.h>

#include "gate/util/lglimits.h"

enum member_answer {
	MEMBER_NONE,		/* no evidence */
	MEMBER_YES,		/* exit 0 */
	MEMBER_NO		/* exit 1 */
};

/*
 * The sender to ask about: the envelope sender when one is known
 * (envelope not NULL; "" and "<>" are the null sender: none), else the
 * post's Return-Path, else its From.  The address is taken from <...>
 * or as the word with an '@'; it must be printable, without blanks,
 * quotes, brackets or commas, not start with '-', and fit out.  1 with
 * the address in out, 0 when there is none to ask about.
 */
int member_sender(const unsigned char *msg, size_t len,
    const char *envelope, char *out, size_t outsz);

/* one running check */
struct member_run {
	pid_t pid;		/* the child (its process group), 0: none */
	int pidfd;		/* readable when it ends; -1: poll by time */
	double deadline;	/* clock_now_ms() when it is killed */
	enum member_answer answer;
	char why[64];		/* how it ended: "yes", "exit 3", ... */
};

/*
 * Start tmpl with {sender} and {list} expanded, to end within ms
 * milliseconds.  0 when started (or ended at once: m->pid 0, m->why
 * says why); never fails the caller.
 */
void member_start(struct member_run *m, char *const *tmpl,
    const char *sender, const char *list, unsigned ms);

/* the descriptor to poll for the end (POLLIN), or -1 */
int member_fd(const struct member_run *m);

/* reap the child if it has ended, kill it if its time is up: 1 when
 * the check is over (m->answer, m->why set), 0 while it runs */
int member_poll(struct member_run *m);

/* end a check still running (kill and reap): no evidence */
void member_stop(struct member_run *m);

#endif

/*
 * member.c - run the list's member_check for one sender, bounded
 *
 * The sender comes from the envelope or the post's header: hostile.  It
 * is checked to look like an address (no blanks, no leading '-') and
 * only ever fills its placeholder inside one argument (tmpl_expand);
 * no shell is involved.  The child gets /dev/null for its standard
 * streams and its own process group, killed whole at the time-out.
 * Never logs, never exits: whatever goes wrong is no evidence.
 */
#include "config.h"

#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gate/app/run.h"
#include "gate/evidence/member.h"
#include "gate/mail/mail.h"
#include "gate/util/buf.h"
#include "gate/util/clock.h"
#include "gate/util/xalloc.h"
#include "listcfg/tmpl.h"

/* 1 if the byte may stand in an address handed to a command */
static int
addr_byte(unsigned char c)
{
	return c > ' ' && c != 0x7f && c != '<' && c != '>' && c != '"' &&
	    c != '(' && c != ')' && c != ',' && c != ';' && c != '\\' &&
	    c != '[' && c != ']';
}

/* take the address out of a header value or envelope [s, s+n) into
 * out: 1, or 0 when there is none or it does not look like one */
static int
take_addr(const char *s, size_t n, char *out, size_t outsz)
{
	const char *lt, *gt, *at, *b, *e;
	size_t i, k;

	lt = memchr(s, '<', n);
	if (lt != NULL && (gt = memchr(lt, '>', n - (size_t)(lt - s))) !=
	    NULL) {
		b = lt + 1;
		e = gt;
	} else {
		/* the word with an '@' */
		if ((at = memchr(s, '@', n)) == NULL)
			return 0;
		for (b = at; b > s && addr_byte((unsigned char)b[-1]); b--)
			;
		for (e = at; e < s + n && addr_byte((unsigned char)*e); e++)
			;
	}
	while (b < e && (*b == ' ' || *b == '\t'))
		b++;
	while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	k = (size_t)(e - b);
	if (k < 3 || k >= outsz || k >= LG_MAX_SENDER_BYTES || b[0] == '-' ||
	    b[0] == '@' || e[-1] == '@' || memchr(b, '@', k) == NULL)
		return 0;
	for (i = 0; i < k; i++)
		if (!addr_byte((unsigned char)b[i]))
			return 0;
	memcpy(out, b, k);
	out[k] = '\0';
	return 1;
}

int
member_sender(const unsigned char *msg, size_t len, const char *envelope,
    char *out, size_t outsz)
{
	struct buf v = BUF_INIT(4096);
	int r;

	if (outsz > 0)
		out[0] = '\0';
	if (envelope != NULL)
		return take_addr(envelope, strlen(envelope), out, outsz);
	r = mail_header(msg, len, "Return-Path", &v);
	if (r == 1) {
		/* "<>": the null sender, a bounce: nobody to ask about */
		r = take_addr((const char *)v.data, v.len, out, outsz);
		buf_free(&v);
		return r;
	}
	if (r == 0 && mail_header(msg, len, "From", &v) == 1)
		r = take_addr((const char *)v.data, v.len, out, outsz);
	else
		r = 0;
	buf_free(&v);
	return r;
}

/* end the check now with answer a */
static void
settle(struct member_run *m, enum member_answer a, const char *why)
{
	if (m->pid > 0)
		run_helper_done();
	m->answer = a;
	snprintf(m->why, sizeof(m->why), "%s", why);
	if (m->pidfd >= 0)
		close(m->pidfd);
	m->pidfd = -1;
	m->pid = 0;
}

void
member_start(struct member_run *m, char *const *tmpl, const char *sender,
    const char *list, unsigned ms)
{
	struct tmpl_vars v;
	char **argv = NULL, **envp;
	pid_t pid;
	int e;

	memset(m, 0, sizeof(*m));
	m->pidfd = -1;
	m->deadline = clock_now_ms() + ms;
	memset(&v, 0, sizeof(v));
	v.sender = sender;
	v.list = list;
	if (tmpl_expand(tmpl, &v, &argv) < 0) {
		settle(m, MEMBER_NONE, "cannot expand");
		return;
	}
	/* the environment of every configured command (gate/app/run.h):
	 * never a database password */
	if ((envp = run_child_env()) == NULL) {
		tmpl_free(argv);
		settle(m, MEMBER_NONE, "out of memory");
		return;
	}
	/* a stop of filter (its watchdog, SIGTERM) kills it too */
	e = run_spawn_helper(argv, envp, &pid);
	tmpl_free(argv);
	xfree(envp);
	if (e != 0) {
		settle(m, MEMBER_NONE, "cannot start");
		return;
	}
	m->pid = pid;
	/* a descriptor that polls readable when the child ends; without
	 * one (old kernel) member_poll looks every millisecond */
	m->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (m->pidfd < 0)
		m->pidfd = -1;
}

int
member_fd(const struct member_run *m)
{
	return m->pid > 0 ? m->pidfd : -1;
}

int
member_poll(struct member_run *m)
{
	char why[32];
	pid_t r;
	int st;

	if (m->pid <= 0)
		return 1;
	r = waitpid(m->pid, &st, WNOHANG);
	if (r == m->pid) {
		/* anything left of its group goes too */
		kill(-m->pid, SIGKILL);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			settle(m, MEMBER_YES, "yes");
		else if (WIFEXITED(st) && WEXITSTATUS(st) == 1)
			settle(m, MEMBER_NO, "no");
		else if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
			settle(m, MEMBER_NONE, "cannot start");
		else {
			if (WIFEXITED(st))
				snprintf(why, sizeof(why), "exit %d",
				    WEXITSTATUS(st));
			else
				snprintf(why, sizeof(why), "signal %d",
				    WIFSIGNALED(st) ? WTERMSIG(st) : 0);
			settle(m, MEMBER_NONE, why);
		}
		return 1;
	}
	if (r < 0 && errno != EINTR) {
		settle(m, MEMBER_NONE, "lost");
		return 1;
	}
	if (clock_now_ms() >= m->deadline) {
		member_stop(m);
		snprintf(m->why, sizeof(m->why), "timeout");
		return 1;
	}
	return 0;
}

void
member_stop(struct member_run *m)
{
	pid_t pid = m->pid;

	if (pid <= 0)
		return;
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	settle(m, MEMBER_NONE, "stopped");
}

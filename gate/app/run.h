/*
 * run.h - run a configured command with a post on its standard input
 *
 * No shell: argv goes to execv as it is (argv[0] must be an absolute
 * path; listcfg checked it).  The child runs in its own process group;
 * the whole group is killed when the time runs out.  Its standard
 * output and error are never ours (the MTA's pipe, which a process it
 * left behind would hold open after we exited): a pipe of ours, read
 * into a file while it runs (a file itself would refuse a program that
 * opens /dev/stderr by name), copied to our standard error once it
 * ended.  Its standard input is a seekable file holding the
 * whole post before it starts, so it reads all of it even when the
 * caller dies first.  Its environment keeps only PATH, HOME, LANG,
 * LC_*, TZ, TMPDIR, USER, LOGNAME, LISTGATE_CONFIG and the variables
 * qmail (QMAIL*, SENDER, RECIPIENT, LOCAL, HOST*, EXT*, ...) and
 * Postfix (MAIL_CONFIG, DOMAIN, EXTENSION, CLIENT_*, SASL_*, ...) give
 * their commands; never libpq's (PGPASSWORD, ...).
 */
#ifndef LG_RUN_H
#define LG_RUN_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Run argv with the post on standard input: the file fd (from offset 0;
 * the child shares its file offset) when fd >= 0, else a copy of
 * data/len made in a memory file (an unlinked temporary file where
 * there is none) before the child starts.  Its standard output and
 * error reach a file (run_output_file) through a pipe, written to our
 * standard error once it ended.  Wait at most timeout_s seconds (0: no
 * limit).  Returns the exit status (0..255), or
 * -1 with a message in err that starts with the program's path
 * ("/usr/bin/x: timed out after 5 s (killed)"): no copy of the post, no
 * file for its output, no process,
 * the program could not be executed, it was killed by a signal, or it
 * timed out (then its process group has been killed).
 */
int run_argv(char *const *argv, const unsigned char *data, size_t len,
    int fd, unsigned timeout_s, char *err, size_t errsz);

/*
 * run_argv, with the command's standard output and error going to the
 * file outfd (when >= 0) instead of ours: a caller that must say first
 * what the command's words mean (filter under Postfix: pipe(8) takes a
 * status code at the start of the output over the exit status).
 */
int run_argv_out(char *const *argv, const unsigned char *data, size_t len,
    int fd, unsigned timeout_s, int outfd, char *err, size_t errsz);

/* a file for run_argv_out's outfd (a memory file that cannot grow past
 * 1 MiB more than the post's len bytes: a program that copies the post
 * to its output, as tee does, must not fail for it; else an unlinked
 * temporary file; close-on-exec), at offset 0: what the command wrote is
 * the bytes before the file's offset once it ended (the file may be
 * longer, with zeros).  Its descriptor, or -1 with err */
int run_output_file(size_t len, char *err, size_t errsz);

/*
 * Start argv (an absolute program) with posix_spawn, never fork: in its
 * own process group, no signal blocked, SIGPIPE, SIGALRM and SIGCHLD at
 * their defaults; standard input the file infd (it shares infd's
 * offset), or /dev/null when infd < 0; standard output and error
 * /dev/null when quiet, else ours.  envp as from run_child_env.  0 with
 * the child's pid in *pid_r, or an errno value (the program could not
 * be executed, or out of resources).
 */
int run_spawn(char *const *argv, char *const *envp, int infd, int quiet,
    pid_t *pid_r);

/*
 * run_spawn a helper (quiet, standard input /dev/null) that
 * run_kill_active kills too until run_helper_done: the list's
 * member_check, which runs while filter's watchdog or a stop may come
 * (it would otherwise go on after filter deferred, as long as it
 * takes).  Started with the stop signals blocked, so a handler finds it.
 * 0 with *pid_r, or an errno value.  One helper at a time.
 */
int run_spawn_helper(char *const *argv, char *const *envp, pid_t *pid_r);

/* the helper ended (reaped) or was stopped: no longer killed */
void run_helper_done(void);

/* the environment a configured command gets: the kept entries of ours
 * (pointers into environ: xfree the array only, and use it before the
 * environment changes), or NULL when out of memory */
char **run_child_env(void);

/* kill the process group of the command the calling thread runs now,
 * if any, and of the helper (run_spawn_helper) (for a single-threaded
 * caller, whose handlers run in its only thread: the filter's
 * watchdog).  Async-
 * signal-safe: meant for a watchdog's signal handler. */
void run_kill_active(void);

/*
 * 1 when the last command run_argv started in the calling thread has
 * exited with status 0, 0 while it runs or when it failed (for a
 * single-threaded caller, whose handlers run in its only thread).
 * run_argv starts the command and reaps it with SIGALRM, SIGTERM,
 * SIGINT and SIGHUP blocked, so a handler of those sees either a
 * command it can kill (run_kill_active) or this: a `deliver` that has
 * delivered, whose post must not be deferred; a command that exited 0
 * and is not reaped yet counts too (waitid with WNOWAIT).
 * Async-signal-safe.
 */
int run_last_ok(void);

/*
 * 1 when the command of the calling thread's last run_argv_out was
 * killed (its time-out, a signal) after it had read its whole standard
 * input: it may have handed the post on before it died (an approval
 * must not put the post back to be released again), else 0.  Not for a
 * signal handler.
 */
int run_last_unsure(void);

#endif

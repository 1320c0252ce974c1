/*
 * run.h - run a configured command with a post on its standard input
 *
 * No shell: argv goes to execv as it is (argv[0] must be an absolute
 * path; listcfg checked it).  The child runs in its own process group
 * with stdout and stderr inherited; the whole group is killed when the
 * time runs out.
 */
#ifndef LG_RUN_H
#define LG_RUN_H

#include <stddef.h>

/*
 * Run argv with the post on standard input: the file fd (from offset 0)
 * when fd >= 0, else data/len written through a pipe.  Wait at most
 * timeout_s seconds (0: no limit).  Returns the exit status (0..255), or
 * -1 with a message in err: fork or pipe failure, the program could not
 * be executed, it was killed by a signal, or it timed out (then its
 * process group has been killed).
 */
int run_argv(char *const *argv, const unsigned char *data, size_t len,
    int fd, unsigned timeout_s, char *err, size_t errsz);

/* kill the process group of the command running now, if any (for a
 * single-threaded caller: the filter's watchdog).  Async-
 * signal-safe: meant for a watchdog's signal handler. */
void run_kill_active(void);

#endif

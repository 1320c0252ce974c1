/*
 * timeit.c - run one command (or a pipeline of two) with a file on its
 * standard input and say how long it took and how much memory it used
 * (for tests/bench)
 *
 *	timeit FILE PROG [ARG...] [| PROG2 [ARG...]]
 *
 * The (last) command's standard output is ours, standard error goes to
 * /dev/null; on our standard error one line: "timeit WALL_MS RSS_KB
 * STATUS CPU_MS" (wall time from the first fork to the last wait4, the
 * largest peak resident set size wait4 reports, the first non-zero exit
 * status, 128 + a signal, the user and system CPU time of the commands:
 * on a busy machine the wall time grows with the load, the CPU time far
 * less).  "|" as an argument of its own splits the two
 * commands, as a shell would run them (without the shell).  A small
 * launcher of its own, because the peak RSS of a child forked from a
 * large process (python) counts the parent's pages it had before exec.
 */
#include <sys/resource.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* start argv with in as stdin, out as stdout (-1: ours) */
static pid_t
start(char **argv, int in, int out, int nul, int close_me)
{
	pid_t pid = fork();

	if (pid == 0) {
		dup2(in, 0);
		if (out >= 0)
			dup2(out, 1);
		dup2(nul, 2);
		if (close_me >= 0)
			close(close_me);
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

int
main(int argc, char **argv)
{
	struct timespec a, b;
	struct rusage ru;
	char **second = NULL;
	pid_t pid[2];
	long rss = 0;
	double cpu = 0;
	int fd, nul, st, i, n = 1, rc = 0, pfd[2];

	if (argc < 3) {
		fprintf(stderr, "usage: timeit FILE PROG [ARG...] "
		    "[| PROG2 [ARG...]]\n");
		return 2;
	}
	for (i = 2; i < argc; i++)
		if (strcmp(argv[i], "|") == 0) {
			argv[i] = NULL;
			second = argv + i + 1;
			n = 2;
			break;
		}
	if ((fd = open(argv[1], O_RDONLY)) < 0 ||
	    (nul = open("/dev/null", O_WRONLY)) < 0) {
		perror(argv[1]);
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (n == 1) {
		pid[0] = start(argv + 2, fd, -1, nul, -1);
	} else {
		if (pipe(pfd) < 0) {
			perror("pipe");
			return 2;
		}
		pid[0] = start(argv + 2, fd, pfd[1], nul, pfd[0]);
		pid[1] = start(second, pfd[0], -1, nul, pfd[1]);
		close(pfd[0]);
		close(pfd[1]);
	}
	for (i = 0; i < n; i++) {
		if (pid[i] < 0 || wait4(pid[i], &st, 0, &ru) != pid[i]) {
			perror("fork/wait4");
			return 2;
		}
		if (ru.ru_maxrss > rss)
			rss = ru.ru_maxrss;
		cpu += (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		    (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
		if (rc == 0)
			rc = WIFEXITED(st) ? WEXITSTATUS(st) :
			    128 + WTERMSIG(st);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	fprintf(stderr, "timeit %.3f %ld %d %.3f\n",
	    (double)(b.tv_sec - a.tv_sec) * 1e3 +
	    (double)(b.tv_nsec - a.tv_nsec) / 1e6, rss, rc, cpu);
	return 0;
}

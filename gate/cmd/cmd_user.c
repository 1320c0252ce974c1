/*
 * cmd_user.c - `listgate user add|del|list`: the accounts of the web
 * moderation page, in users.conf of the configuration directory
 *
 * `add` reads the password from standard input (asked twice, without
 * echo, on a terminal; else the first line) and stores only its yescrypt
 * hash.  Changes are made under a lock file and written atomically with
 * mode 0600 (listcfg/users.c).  A running `listgate web` notices the new
 * file by itself.  Never prints a hash.  Exit 0, 1 on failure, 2 on
 * usage errors.
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "gate/cmd/cmd.h"
#include "gate/util/suggest.h"
#include "gate/util/utf8.h"
#include "gate/util/xalloc.h"
#include "gate/web/pwhash.h"
#include "listcfg/cfgfile.h"
#include "listcfg/listcfg.h"
#include "listcfg/users.h"

static void
user_usage(FILE *f)
{
	fprintf(f,
	    "usage: listgate [--config DIR] user add NAME --lists L1,L2|all "
	    "[--replace]\n"
	    "       listgate [--config DIR] user del NAME\n"
	    "       listgate [--config DIR] user list\n"
	    "\n"
	    "Manage the accounts of the web moderation page (listgate web) in\n"
	    "users.conf of the configuration directory (mode 0600).  add reads\n"
	    "the password from standard input: asked twice without echo on a\n"
	    "terminal, else the first line.  Only its yescrypt hash is stored.\n"
	    "\n"
	    "  -l, --lists L1,L2|all  the lists the account may see and decide\n"
	    "  -r, --replace          add: replace an existing account's password\n"
	    "                         and lists\n"
	    "  -h, --help             this help\n"
	    "\n"
	    "Exit status: 0 ok, 1 failure, 2 usage error.\n");
}

/* the signal that interrupted a read without echo, or 0; got_susp:
 * the job-control one that would suspend it, or 0 */
static volatile sig_atomic_t got_sig, got_susp;

/* the signals that end a run, caught while echo is off */
static const int stop_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
#define NSTOP	(sizeof(stop_sigs) / sizeof(stop_sigs[0]))

/* and those that suspend it (^Z; a read or tcsetattr in the
 * background): the shell's fg does not turn echo off again */
static const int susp_sigs[] = { SIGTSTP, SIGTTIN, SIGTTOU };
#define NSUSP	(sizeof(susp_sigs) / sizeof(susp_sigs[0]))

static void
on_stop(int sig)
{
	got_sig = sig;
}

static void
on_susp(int sig)
{
	got_susp = sig;
}

/* getc, waiting through a descriptor left non-blocking by whoever
 * started us (the flag is the shared open file's: a pipe whose writer
 * is slower than we are gave EAGAIN, read as "no password").  EOF with
 * f's error flag set on a failure, or when a signal ended the wait */
static int
getc_wait(FILE *f)
{
	struct pollfd pfd;
	int c;

	for (;;) {
		errno = 0;
		c = getc(f);
		if (c != EOF || !ferror(f) || (errno != EAGAIN &&
		    errno != EWOULDBLOCK) || got_sig || got_susp)
			return c;
		pfd.fd = fileno(f);
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(&pfd, 1, -1) < 0 && (errno != EINTR || got_sig ||
		    got_susp))
			return c;	/* (the error flag still set) */
		clearerr(f);
	}
}

/* read one line of at most PWHASH_MAX_PASSWORD bytes from f into pw
 * (newline and CR dropped): 0, or -1 with a message printed.  A NUL
 * byte is refused: it would end the password there. */
static int
read_line(FILE *f, char *pw, size_t pwsz)
{
	size_t n = 0;
	int c, nul = 0;

	while ((c = getc_wait(f)) != EOF && c != '\n') {
		if (n + 1 >= pwsz) {
			cmd_err("user", "password longer than %u bytes",
			    (unsigned)PWHASH_MAX_PASSWORD);
			return -1;
		}
		nul |= c == '\0';
		pw[n++] = (char)c;
	}
	pw[n] = '\0';
	if (c == EOF && ferror(f) && (got_sig || got_susp))
		return -1;	/* read_tty ends or suspends the run */
	if (c == EOF && (n == 0 || ferror(f))) {
		cmd_err("user", "no password on standard input");
		return -1;
	}
	if (nul) {
		explicit_bzero(pw, pwsz);
		cmd_err("user", "the password holds a NUL byte");
		return -1;
	}
	if (n > 0 && pw[n - 1] == '\r')
		pw[--n] = '\0';
	return 0;
}

/* catch sigs[0 .. n) with fn, their old dispositions into prev (a
 * signal ignored, as under nohup, stays ignored) */
static void
catch_sigs(const int *sigs, size_t n, void (*fn)(int),
    struct sigaction *prev)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < n; i++)
		if (sigaction(sigs[i], &sa, &prev[i]) == 0 &&
		    prev[i].sa_handler == SIG_IGN)
			sigaction(sigs[i], &prev[i], NULL);
}

static void
restore_sigs(const int *sigs, size_t n, const struct sigaction *prev)
{
	size_t i;

	for (i = 0; i < n; i++)
		sigaction(sigs[i], &prev[i], NULL);
}

/*
 * On a terminal: prompt on stderr without echo.  A signal that ends the
 * run (^C, a hangup, kill) while echo is off turns it back on first:
 * the read stops (no SA_RESTART), the terminal is restored, and the
 * signal is raised again with its old disposition.  One that suspends
 * it (^Z) does the same, and once continued (fg) the prompt is shown
 * again with echo off: the shell gives the terminal back with echo on,
 * and the password typed after fg was shown.
 */
static int
read_tty(const char *prompt, char *pw, size_t pwsz)
{
	struct termios old, quiet;
	struct sigaction prev[NSTOP], sprev[NSUSP];
	int r, echo_off, sig;

	for (;;) {
		catch_sigs(stop_sigs, NSTOP, on_stop, prev);
		catch_sigs(susp_sigs, NSUSP, on_susp, sprev);
		/* echo off before the prompt: what is typed once it shows
		 * is never echoed */
		echo_off = !got_sig && !got_susp && tcgetattr(0, &old) == 0;
		if (echo_off) {
			quiet = old;
			quiet.c_lflag &= ~(tcflag_t)ECHO;
			tcsetattr(0, TCSAFLUSH, &quiet);
		}
		fputs(prompt, stderr);
		fflush(stderr);
		r = got_sig || got_susp ? -1 : read_line(stdin, pw, pwsz);
		if (echo_off)
			tcsetattr(0, TCSAFLUSH, &old);
		fputs("\n", stderr);
		restore_sigs(susp_sigs, NSUSP, sprev);
		restore_sigs(stop_sigs, NSTOP, prev);
		if ((sig = got_sig) != 0) {
			explicit_bzero(pw, pwsz);
			raise(sig);
			/* a disposition that did not end the run (ignored) */
			got_sig = 0;
			got_susp = 0;
			cmd_err("user", "interrupted");
			return -1;
		}
		if ((sig = got_susp) == 0)
			return r;
		/* suspended with echo on; asked again once continued */
		explicit_bzero(pw, pwsz);
		got_susp = 0;
		clearerr(stdin);
		raise(sig);
	}
}

/* the characters of pw: a UTF-8 sequence is one, and so is a byte
 * that is not valid UTF-8 (a password typed in Latin-1) */
static size_t
pw_chars(const char *pw)
{
	const unsigned char *p = (const unsigned char *)pw;
	size_t n = strlen(pw), i = 0, c = 0, len;

	while (i < n) {
		len = utf8_len(p + i, n - i);
		i += len > 0 ? len : 1;
		c++;
	}
	return c;
}

/* 1 when pw is too short, said; else 0 */
static int
pw_short(const char *pw)
{
	/* characters, as the message says: 8 bytes are 3 CJK ones */
	if (pw_chars(pw) >= PWHASH_MIN_PASSWORD)
		return 0;
	cmd_err("user", "password shorter than %u characters",
	    (unsigned)PWHASH_MIN_PASSWORD);
	return 1;
}

/* the new password: 0, or -1 with a message printed */
static int
get_password(char *pw, size_t pwsz)
{
	char again[PWHASH_MAX_PASSWORD + 2];

	if (!isatty(0))
		return read_line(stdin, pw, pwsz) < 0 || pw_short(pw) ? -1 : 0;
	/* a password too short is refused before it is asked again (it
	 * was typed twice for nothing) */
	if (read_tty("Password: ", pw, pwsz) < 0 || pw_short(pw) ||
	    read_tty("Again: ", again, sizeof(again)) < 0)
		return -1;
	if (strcmp(pw, again) != 0) {
		explicit_bzero(again, sizeof(again));
		cmd_err("user", "the passwords differ");
		return -1;
	}
	explicit_bzero(again, sizeof(again));
	return 0;
}

/* say why users_lock failed (err, errno e); a user who may not write
 * beside users.conf (root that became the `user' of listgate.conf, in
 * a root-owned configuration directory) is told what to run instead */
static void
lock_failed(const char *path, const char *err, int e)
{
	struct passwd *pw;

	if (e != EACCES && e != EPERM) {
		cmd_err("user", "%s", err);
		return;
	}
	pw = getpwuid(geteuid());
	cmd_err("user", "%s: listgate runs as user %s, who may not write "
	    "beside %s: run it as the owner of that directory, or as root "
	    "with `%s --allow-root user ...' (users.conf keeps its "
	    "owner)", err, pw != NULL ? pw->pw_name : "?", path,
	    suggest_cmd());
}

/*
 * Run as root: the user and group listgate.conf in dir names, who runs
 * `listgate web` and must read a users.conf that root makes, into
 * *uid_r and *gid_r; left (uid_t)-1 and (gid_t)-1 when not root or none
 * is named (root's file then, as before)
 */
static void
web_owner(const char *dir, uid_t *uid_r, gid_t *gid_r)
{
	struct passwd *pw;
	struct group *gr;
	char *user, *group, err[1024];
	int mta;

	*uid_r = (uid_t)-1;
	*gid_r = (gid_t)-1;
	if (geteuid() != 0 || listcfg_load_owner(dir, &user, &group, &mta,
	    err, sizeof(err)) < 0)
		return;
	if (user != NULL && (pw = getpwnam(user)) != NULL && pw->pw_uid != 0) {
		*uid_r = pw->pw_uid;
		*gid_r = pw->pw_gid;
		if (group != NULL && (gr = getgrnam(group)) != NULL)
			*gid_r = gr->gr_gid;
	}
	xfree(user);
	xfree(group);
}

/* say which of lists (checked, not "all") dir configures no list of:
 * a typo made an account that sees nothing of the list, and nothing
 * said so (it is still made: a list may be configured after it) */
static void
warn_unknown_lists(const char *dir, const char *lists)
{
	char **names, err[1024], *copy, *p, *c;
	size_t n, i;

	if (strcmp(lists, "all") == 0 || listcfg_names(dir, &names, &n, err,
	    sizeof(err)) < 0)
		return;
	if ((copy = xstrdup(lists)) != NULL) {
		for (p = copy; p != NULL; p = c) {
			if ((c = strchr(p, ',')) != NULL)
				*c++ = '\0';
			for (i = 0; i < n && strcmp(names[i], p) != 0; i++)
				;
			if (i == n)
				cmd_err("user", "warning: no list %s is "
				    "configured (%s/lists/%s.conf): the account "
				    "sees it once it is", p, dir, p);
		}
		xfree(copy);
	}
	for (i = 0; i < n; i++)
		xfree(names[i]);
	xfree(names);
}

/* add or replace an account under the lock: exit status */
static int
user_add(const char *dir, const char *path, const char *name,
    const char *lists, int replace)
{
	struct users u;
	const struct users_entry *old;
	char pw[PWHASH_MAX_PASSWORD + 2], hash[PWHASH_MAX], err[1024];
	int lockfd, missing, existed, r, rc = EXIT_CMD_FAIL;
	uid_t uid;
	gid_t gid;

	if (!users_name_ok(name)) {
		cmd_err("user", "bad user name '%s' (want "
		    "[A-Za-z0-9][A-Za-z0-9._@+-]*, at most %u bytes)", name,
		    (unsigned)USERS_MAX_NAME);
		return EXIT_CMD_USAGE;
	}
	/* before the password is asked for (twice on a terminal) and
	 * hashed: a bad --lists, or one too long for users.conf, is a
	 * usage error, as a bad name is */
	if ((r = users_lists_ok(name, lists, err, sizeof(err))) < 0) {
		cmd_err("user", "%s", err);
		return r == -1 ? EXIT_CMD_USAGE : EXIT_CMD_FAIL;
	}
	/* a directory we may not write in (listgate left root for the
	 * user of listgate.conf, a root-owned directory), and a users.conf
	 * that cannot be read, are refused before the password is asked
	 * for (twice on a terminal) and hashed: the lock file and the
	 * write refused it only then.  (Checked again where they are done:
	 * this is no lock; access(2), not faccessat's AT_EACCESS, whose
	 * emulation on older kernels ignores ACLs: the real ids are the
	 * effective ones, listgate left root with setresuid) */
	if (access(dir, W_OK | X_OK) < 0) {
		int e = errno;

		snprintf(err, sizeof(err), "%s: %s", dir, strerror(e));
		lock_failed(path, err, e);
		return EXIT_CMD_FAIL;
	}
	if (users_load(path, &u, &missing, err, sizeof(err)) < 0) {
		cmd_err("user", "%s", err);
		return EXIT_CMD_FAIL;
	}
	existed = users_find(&u, name) != NULL;
	users_free(&u);
	warn_unknown_lists(dir, lists);
	/* and an account that exists without --replace, before the
	 * password is asked for for nothing; said again under the lock,
	 * for one added meanwhile */
	if (!replace && existed) {
		cmd_err("user", "user %s exists (--replace sets a new "
		    "password and lists)", name);
		return EXIT_CMD_FAIL;
	}
	if (get_password(pw, sizeof(pw)) < 0) {
		explicit_bzero(pw, sizeof(pw));
		return EXIT_CMD_FAIL;
	}
	r = pwhash_make(pw, hash, sizeof(hash), err, sizeof(err));
	if (r < 0) {
		explicit_bzero(pw, sizeof(pw));
		cmd_err("user", "%s", err);
		return EXIT_CMD_FAIL;
	}
	if ((lockfd = users_lock(path, err, sizeof(err))) < 0) {
		int e = errno;

		explicit_bzero(pw, sizeof(pw));
		lock_failed(path, err, e);
		return EXIT_CMD_FAIL;
	}
	if (users_load(path, &u, &missing, err, sizeof(err)) < 0) {
		explicit_bzero(pw, sizeof(pw));
		cmd_err("user", "%s", err);
		close(lockfd);
		return EXIT_CMD_FAIL;
	}
	/* a users.conf made now is for the web page's user to read */
	web_owner(dir, &uid, &gid);
	old = users_find(&u, name);
	existed = old != NULL;
	/* the same password again (only the lists change): the old hash
	 * stays, and with it the account's web sessions, which a new
	 * password ends; unless the old one was made with other yescrypt
	 * parameters than ours (mkpasswd's -R, another libxcrypt): it is
	 * made anew, or nothing would ever bring it to ours (a cheaper
	 * one is cracked sooner, and its login's time, unlike the hash
	 * of a name without an account, says that the account exists) */
	if (old != NULL && replace && pwhash_same_params(old->hash, hash) &&
	    pwhash_check(pw, old->hash) == 1)
		snprintf(hash, sizeof(hash), "%s", old->hash);
	explicit_bzero(pw, sizeof(pw));
	r = users_set(&u, name, hash, lists, replace, err, sizeof(err));
	if (r < 0)
		cmd_err("user", "%s", err);
	else if (r == 1)
		cmd_err("user", "user %s exists (--replace sets a new password "
		    "and lists)", name);
	else if (users_save_as(path, &u, uid, gid, err, sizeof(err)) < 0)
		cmd_err("user", "%s", err);
	else {
		printf("user %s %s\n", name, existed ? "replaced" : "added");
		rc = EXIT_CMD_OK;
	}
	users_free(&u);
	close(lockfd);
	return rc;
}

static int
user_del(const char *path, const char *name)
{
	struct users u;
	char err[1024];
	int lockfd, missing, rc = EXIT_CMD_FAIL;

	if ((lockfd = users_lock(path, err, sizeof(err))) < 0) {
		lock_failed(path, err, errno);
		return EXIT_CMD_FAIL;
	}
	if (users_load(path, &u, &missing, err, sizeof(err)) < 0)
		cmd_err("user", "%s", err);
	else if (!users_del(&u, name))
		cmd_err("user", "no user %s in %s%s", name, path, missing ?
		    " (there is no such file: no accounts yet)" : "");
	else if (users_save(path, &u, err, sizeof(err)) < 0)
		cmd_err("user", "%s", err);
	else {
		printf("user %s deleted\n", name);
		rc = EXIT_CMD_OK;
	}
	users_free(&u);
	close(lockfd);
	return rc;
}

static int
user_list(const char *path)
{
	struct users u;
	char err[1024];
	size_t i, j;
	int missing;

	if (users_load(path, &u, &missing, err, sizeof(err)) < 0) {
		cmd_err("user", "%s", err);
		return EXIT_CMD_FAIL;
	}
	for (i = 0; i < u.n; i++) {
		printf("%s ", u.v[i].name);
		if (u.v[i].all)
			printf("all");
		for (j = 0; j < u.v[i].nlists; j++)
			printf("%s%s", j ? "," : "", u.v[i].lists[j]);
		printf("\n");
	}
	if (u.n == 0)
		printf("(no users%s)\n", missing ? ": no users.conf" : "");
	users_free(&u);
	return cmd_stdout_done("user") < 0 ? EXIT_CMD_FAIL : EXIT_CMD_OK;
}

int
cmd_user(int argc, char **argv, const struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "lists", required_argument, NULL, 'l' },
		{ "replace", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *lists = NULL, *verb, *dir;
	char *path, err[1024];
	int ch, replace = 0, rc;

	while ((ch = getopt_long(argc, argv, "l:rh", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			lists = optarg;
			break;
		case 'r':
			replace = 1;
			break;
		case 'h':
			user_usage(stdout);
			return EXIT_CMD_OK;
		default:
			user_usage(stderr);
			return EXIT_CMD_USAGE;
		}
	}
	if (optind >= argc) {
		cmd_err("user", "say add, del or list");
		user_usage(stderr);
		return EXIT_CMD_USAGE;
	}
	verb = argv[optind++];
	if (strcmp(verb, "add") == 0) {
		if (optind + 1 != argc || lists == NULL) {
			cmd_err("user", "add takes a NAME and --lists");
			user_usage(stderr);
			return EXIT_CMD_USAGE;
		}
	} else if (strcmp(verb, "del") == 0) {
		if (optind + 1 != argc || lists != NULL || replace) {
			cmd_err("user", "del takes a NAME and no options");
			user_usage(stderr);
			return EXIT_CMD_USAGE;
		}
	} else if (strcmp(verb, "list") == 0) {
		if (optind != argc || lists != NULL || replace) {
			cmd_err("user", "list takes no arguments");
			user_usage(stderr);
			return EXIT_CMD_USAGE;
		}
	} else {
		cmd_err("user", "unknown action '%s' (add, del or list)", verb);
		user_usage(stderr);
		return EXIT_CMD_USAGE;
	}
	dir = listcfg_dir(ctx->config_dir);
	/* the directory first, as every command checks it: a --config
	 * misspelt was "no users", and add asked for the password (twice
	 * on a terminal) and hashed it before its lock file failed */
	if (listcfg_dir_check(dir, err, sizeof(err)) < 0) {
		cmd_err("user", "%s", err);
		return EXIT_CMD_FAIL;
	}
	if ((path = cfgfile_join(dir, USERS_FILE)) == NULL) {
		cmd_err("user", "out of memory");
		return EXIT_CMD_FAIL;
	}
	if (strcmp(verb, "add") == 0)
		rc = user_add(dir, path, argv[optind], lists, replace);
	else if (strcmp(verb, "del") == 0)
		rc = user_del(path, argv[optind]);
	else
		rc = user_list(path);
	xfree(path);
	return rc;
}

/*
 * cmd_init.c - `listgate init`: what a new site needs on disk
 *
 *   listgate [--config DIR] init
 *
 * Creates the configuration directory (with lists/), the tokens
 * directory (tokens_dir) and the secret of moderation by mail
 * (secret_file: 32 random bytes from getrandom(2), written as 64
 * hexadecimal digits, mode 0600, whole or not at all), each only when it
 * is missing; nothing that exists is changed (a secret listgate would
 * refuse gets a warning).  Idempotent; says what it did.  Run it as the
 * user that runs listgate: the secret must be readable by that user
 * alone.  Exit 0, 1 on failure, 2 on usage errors.
 */
#include "config.h"

#include <sys/random.h>
#include <sys/stat.h>
#include <errno.h>
#include <pwd.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate/cmd/cmd.h"
#include "gate/moderate/cookie.h"
#include "gate/util/fs.h"
#include "gate/util/suggest.h"
#include "listcfg/listcfg.h"

#define NAME	"init"
/* random bytes in a new secret */
#define SECRET_BYTES	32

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: listgate [--config DIR] init\n"
	    "\n"
	    "Create the configuration directory (and its lists/), the tokens\n"
	    "directory and the secret for moderation cookies (secret_file, 32\n"
	    "random bytes, mode 0600) where they are missing.  Changes nothing\n"
	    "that exists; run it as the user that runs listgate.\n"
	    "\n"
	    "  -h, --help       this help\n"
	    "\n"
	    "Exit status: 0 ok, 1 failure, 2 usage error.\n");
}

/* a directory: created with its parents when missing: 0 or -1 */
static int
dir(const char *path, mode_t mode, const char *what)
{
	struct stat st;

	if (stat(path, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			cmd_err(NAME, "%s %s exists and is not a directory",
			    what, path);
			return -1;
		}
		printf("%s %s exists: unchanged\n", what, path);
		return 0;
	}
	if (fs_mkdir_p(path, mode) < 0) {
		cmd_err(NAME, "cannot create %s %s: %s", what, path,
		    strerror(errno));
		return -1;
	}
	printf("created %s %s\n", what, path);
	return 0;
}

/* write all n bytes of p to fd: 0 or -1 (errno) */
static int
write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = write(fd, p, n)) < 0 && errno == EINTR)
			continue;
		if (w == 0)
			errno = EIO;	/* (a write of nothing sets none) */
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * The secret: created when missing, whole or not at all (written to a
 * temporary file beside it, synced, then linked to its name, which
 * fails if another init made it meanwhile): 0 or -1.  One that exists
 * is left alone, with a warning when listgate would refuse it (a
 * mode others may read, too short: an init killed mid-write before
 * this one left an empty file).
 */
static int
secret(const char *path)
{
	struct cookie_key key;
	unsigned char r[SECRET_BYTES];
	char hex[2 * SECRET_BYTES + 2], parent[4096], tmp[4096], err[1024];
	char *sl;
	struct stat st;
	size_t i;
	int fd, dfd, e;

	if (lstat(path, &st) == 0) {
		printf("secret %s exists: unchanged\n", path);
		if (!S_ISREG(st.st_mode) || (st.st_mode & 077))
			cmd_err(NAME, "warning: %s is %s: listgate refuses it "
			    "(want a regular file of mode 0600)", path,
			    S_ISREG(st.st_mode) ? "readable by others" :
			    "not a regular file");
		else if (cookie_load_key(path, &key, err, sizeof(err)) < 0)
			cmd_err(NAME, "warning: listgate refuses it: %s (remove "
			    "it and run `%s init` again; action addresses "
			    "in notices sent so far stop working)", err,
			    suggest_cmd());
		explicit_bzero(&key, sizeof(key));
		return 0;
	}
	snprintf(parent, sizeof(parent), "%s", path);
	if ((sl = strrchr(parent, '/')) != NULL && sl != parent) {
		*sl = '\0';
		if (access(parent, F_OK) < 0 && dir(parent, 0755,
		    "directory") < 0)
			return -1;
	} else
		snprintf(parent, sizeof(parent), "%s", sl == parent ? "/" :
		    ".");
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmpXXXXXX", path) >=
	    sizeof(tmp)) {
		cmd_err(NAME, "cannot create the secret %s: name too long",
		    path);
		return -1;
	}
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		cmd_err(NAME, "no random bytes for the secret: %s",
		    strerror(errno));
		return -1;
	}
	for (i = 0; i < sizeof(r); i++) {
		hex[2 * i] = "0123456789abcdef"[r[i] >> 4];
		hex[2 * i + 1] = "0123456789abcdef"[r[i] & 15];
	}
	hex[2 * sizeof(r)] = '\n';
	explicit_bzero(r, sizeof(r));
	/* mkostemp makes it 0600 */
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
		int en = errno;
		struct passwd *pw = getpwuid(geteuid());

		explicit_bzero(hex, sizeof(hex));
		if (en == EACCES || en == EPERM)
			cmd_err(NAME, "cannot create the secret %s: %s may not "
			    "write in %s (%s): give that directory to the user "
			    "that runs listgate (chown), then run init as that "
			    "user", path, pw != NULL ? pw->pw_name : "this user",
			    parent, strerror(en));
		else
			cmd_err(NAME, "cannot create the secret %s: %s", path,
			    strerror(en));
		return -1;
	}
	/* (the error of the call that failed, not of a later one) */
	e = write_all(fd, hex, 2 * sizeof(r) + 1) < 0 || fchmod(fd, 0600) < 0 ||
	    fsync(fd) < 0 ? errno : 0;
	explicit_bzero(hex, sizeof(hex));
	if (close(fd) < 0 && e == 0)
		e = errno;
	if (e != 0) {
		/* the secret is the file missing, not the temporary one
		 * removed here */
		cmd_err(NAME, "cannot write the secret %s (nothing made): %s",
		    path, strerror(e));
		unlink(tmp);
		return -1;
	}
	/* link, not rename: a secret another init made meanwhile stays */
	if (link(tmp, path) < 0) {
		e = errno;
		unlink(tmp);
		if (e == EEXIST) {
			printf("secret %s exists: unchanged\n", path);
			return 0;
		}
		cmd_err(NAME, "cannot create the secret %s: %s", path,
		    strerror(e));
		return -1;
	}
	unlink(tmp);
	if ((dfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
	printf("created secret %s (%d random bytes, mode 0600)\n", path,
	    SECRET_BYTES);
	return 0;
}

int
cmd_init(int argc, char **argv, const struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct listcfg_global g;
	const char *cdir = listcfg_dir(ctx->config_dir);
	char lists[4096], err[1024];
	int ch, nfail = 0;

	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			usage(stdout);
			return EXIT_CMD_OK;
		default:
			usage(stderr);
			return EXIT_CMD_USAGE;
		}
	}
	if (cmd_no_args(NAME, argc, argv, usage) != EXIT_CMD_OK)
		return EXIT_CMD_USAGE;
	if (dir(cdir, 0755, "configuration directory") < 0)
		return EXIT_CMD_FAIL;
	snprintf(lists, sizeof(lists), "%s/lists", cdir);
	if (dir(lists, 0755, "lists directory") < 0)
		nfail++;
	if (listcfg_load_global(cdir, &g, err, sizeof(err)) < 0) {
		cmd_err(NAME, "%s", err);
		return EXIT_CMD_FAIL;
	}
	if (dir(g.tokens_dir, 0750, "tokens directory") < 0)
		nfail++;
	if (secret(g.secret_file) < 0)
		nfail++;
	if (geteuid() == 0)
		printf("note: run as root, so what was created belongs to "
		    "root; listgate runs as the\nlist user, which must own "
		    "the tokens directory and the secret (chown them)\n");
	listcfg_free_global(&g);
	/* what it did is its answer: unwritten (a full disk under a
	 * provisioning script's log), init failed */
	if (cmd_stdout_done(NAME) < 0)
		nfail++;
	return nfail ? EXIT_CMD_FAIL : EXIT_CMD_OK;
}

/*
 * listgate.c - main: global options, subcommand dispatch, nothing else
 *
 * Trusts nothing from argv beyond picking the subcommand; each cmd_*.c
 * parses and checks its own options and returns the exit status.
 */
#include "config.h"

#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate/app/posttok.h"
#include "gate/app/settings.h"
#include "gate/cmd/cmd.h"
#include "gate/evidence/evidence.h"
#include "gate/outcome.h"
#include "gate/util/suggest.h"
#include "listcfg/listcfg.h"

/* one row per subcommand, in the order `listgate --help` shows them */
const struct cmd_def cmd_table[] = {
	{ "filter", cmd_filter, "score one post from the MTA and pass, hold or defer it" },
	{ "train", cmd_train, "learn posts (file, maildir, mbox, -) as spam or ham" },
	{ "score", cmd_score, "score posts and print VERDICT SCORE per post" },
	{ "tokens", cmd_tokens, "print the tokens of a post, one per line" },
	{ "held", cmd_held, "list the posts held for moderation" },
	{ "show", cmd_show, "show one held post: headers, score, deciding tokens, text" },
	{ "approve", cmd_approve, "release held posts to the list and learn them as ham" },
	{ "reject", cmd_reject, "reject held posts and learn them as spam" },
	{ "discard", cmd_discard, "discard held posts and learn them as spam" },
	{ "expire", cmd_expire, "apply each list's expiry policy to posts held too long" },
	{ "moderate", cmd_moderate, "apply a moderator's reply to a hold notice (pipe command)" },
	{ "notify", cmd_notify, "send pending hold notices and digests (notify --pending)" },
	{ "sync", cmd_sync, "apply the training journal to the token files" },
	{ "rebuild", cmd_rebuild, "recreate a list's token file from the journal" },
	{ "stats", cmd_stats, "posts passed, held and decided per list, moderators' delay" },
	{ "tune", cmd_tune, "recommend a list's cutoffs and parameters from its journal" },
	{ "init", cmd_init, "create the configuration and tokens directories and the secret" },
	{ "migrate", cmd_migrate, "create or upgrade the PostgreSQL schema" },
	{ "config", cmd_config, "check configuration and print effective settings" },
	{ "holder", cmd_holder, "store the posts filter holds, over a Unix socket" },
	{ "web", cmd_web, "serve the moderation page and its JSON API over HTTP" },
	{ "user", cmd_user, "add, delete or list the accounts of the web page" },
	{ NULL, NULL, NULL }
};

static void
usage(FILE *f)
{
	const struct cmd_def *c;

	fprintf(f,
	    "usage: listgate [--config DIR] [--allow-root] COMMAND [OPTIONS] [ARGS]\n"
	    "\n"
	    "A spam gatekeeper for mailing lists: a Bayesian filter trained on\n"
	    "each list's own mail, with a moderation queue in PostgreSQL.\n"
	    "\n"
	    "Global options:\n"
	    "  -c, --config DIR  configuration directory (default $LISTGATE_CONFIG,\n"
	    "                    else %s)\n"
	    "      --allow-root  started as root, stay root (else listgate becomes\n"
	    "                    the user set in listgate.conf, or refuses to run)\n"
	    "  -h, --help        this help; `listgate COMMAND --help` for a command\n"
	    "  -V, --version     print the version\n"
	    "\n"
	    "Commands:\n", LG_SYSCONFDIR);
	for (c = cmd_table; c->name; c++)
		fprintf(f, "  %-9s %s\n", c->name, c->summary);
	fprintf(f, "\nSee listgate(1) and listgate.conf(5).\n");
}

/*
 * The status for a command line that names no command listgate knows (a
 * misspelt one, `listgate filtre --list L ...` in master.cf, or none)
 * when an MTA looks to have run it: standard input is not a terminal,
 * and the arguments hold envelope options (-f, --sender, --list, --mta,
 * a "--" before the recipient) or the environment is qmail-local's.
 * Then a usage error's status would lose the mail: Postfix bounces on
 * 2, every post until someone notices.  The dialect's temporary failure
 * instead (--mta's, else settings_mta_fallback's: qmail-local's 111,
 * else 75), so the MTA keeps the mail until the command line is
 * mended; typed at a terminal, or with no sign of an MTA (a cron
 * line), it stays status.
 */
static int
mta_exit(int argc, char **argv, int status)
{
	enum mta m = MTA_UNKNOWN, given;
	const char *a;
	int i, envelope = 0;

	if (isatty(STDIN_FILENO))
		return status;
	for (i = 1; i < argc; i++) {
		a = argv[i];
		if (strcmp(a, "--") == 0) {
			envelope = 1;
			break;
		}
		if (strcmp(a, "--mta") == 0 && i + 1 < argc &&
		    mta_parse(argv[i + 1], &given) == 0)
			m = given;
		else if (strncmp(a, "--mta=", 6) == 0 &&
		    mta_parse(a + 6, &given) == 0)
			m = given;
		if (strcmp(a, "-f") == 0 || strcmp(a, "--sender") == 0 ||
		    strncmp(a, "--sender=", 9) == 0 ||
		    strcmp(a, "--list") == 0 || strncmp(a, "--list=", 7) == 0 ||
		    strcmp(a, "--mta") == 0 || strncmp(a, "--mta=", 6) == 0)
			envelope = 1;
	}
	/* a --help or --version that succeeded is deferred only on a
	 * command line with the MTA's options (a post may be waiting):
	 * qmail-local's environment alone (tcsh exports $HOST) is no sign
	 * for a script asking for the version */
	if (status == EXIT_CMD_OK && !envelope)
		return status;
	if (m == MTA_UNKNOWN)
		m = settings_mta_fallback(-1, envelope);
	if (m == MTA_UNKNOWN)
		return status;
	return outcome_exit(OUT_DEFER, m);
}

/*
 * The status for a run that stops before reaching its subcommand.  When
 * the command line names `filter` and a post may be waiting on stdin,
 * anything but a temporary failure could lose it: Postfix bounces on 2 and
 * takes 0 as delivered.  75 is a temporary failure for Postfix and, as
 * any code other than 0, 99, 100 and a few hard ones, for qmail too.
 */
static int
early_exit(int argc, char **argv, int status)
{
	int i;

	for (i = 1; i < argc; i++)
		if ((strcmp(argv[i], "filter") == 0 ||
		    strcmp(argv[i], "moderate") == 0) && !isatty(0))
			return EXIT_EX_TEMPFAIL;
	return mta_exit(argc, argv, status);
}

/*
 * The watchdog of filter and moderate until they arm their own: main
 * resolves the configuration's path and, as root, reads listgate.conf
 * (cmd_leave_root) first, which can hang (an NFS server away).  A hang
 * lasts until the MTA's own time limit, which Postfix ends with a
 * bounce.  Its exit code: the defer of settings_mta_fallback's dialect
 * (no options read yet: qmail-local's 111, else 75)
 */
static volatile sig_atomic_t early_code = EXIT_EX_TEMPFAIL;

static void
early_watchdog(int sig)
{
	static const char msg[] = "listgate: timed out before the command "
	    "started (reading the configuration), deferring\n";

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(early_code);
	_exit(early_code);
}

/*
 * What a command printed is its answer (a report, --help, a sync's
 * counts): lost to a full disk or a closed pipe, a run that succeeded
 * failed, said on standard error.  Every command's path to exit 0 goes
 * through here, those that check their output themselves included
 * (said once).
 */
static int
answered(const char *name, int rc)
{
	if (cmd_stdout_done(name) < 0 && rc == EXIT_CMD_OK)
		return EXIT_CMD_FAIL;
	return rc;
}

/* `listgate COMMAND --help` answers wherever it runs: as root it opens
 * nothing, so it need not leave root first; nor does `listgate config
 * check --help` or `listgate user add --help`, the help of a command's
 * own subcommand */
static int
help_only(int argc, char **argv)
{
	const char *h;

	if (argc == 2)
		h = argv[1];
	else if (argc == 3 && (strcmp(argv[0], "config") == 0 ||
	    strcmp(argv[0], "user") == 0))
		h = argv[2];
	else
		return 0;
	return strcmp(h, "-h") == 0 || strcmp(h, "--help") == 0;
}

/*
 * Standard input, output and error open, on /dev/null when they were
 * not (a cron line's >&-, a careless parent): a closed one is the
 * number the next open gets, so a token file (or the database's socket)
 * would take it, and the messages written to standard error would go
 * into the token file, a post read from "-" would come out of it.
 */
static void
std_fds_open(void)
{
	int fd, n;

	for (fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		/* the lowest free number: fd itself, those below are open */
		if ((n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY)) >= 0 &&
		    n != fd)
			close(n);
	}
}

/* the index of --config or --allow-root among a command's arguments
 * (before any --), 0 when none */
static int
global_after(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--allow-root") == 0 ||
		    strcmp(argv[i], "--config") == 0 ||
		    strncmp(argv[i], "--config=", 9) == 0)
			return i;
	}
	return 0;
}

/* the configuration the commands that messages suggest must name: the
 * directory in use (--config, else $LISTGATE_CONFIG) as an absolute
 * path, none when it is the default: pasted elsewhere (a log line, a
 * notice, a web page), a command without it acts on /etc/listgate */
static void
suggest_config(const struct cmd_ctx *ctx)
{
	char rdir[PATH_MAX], rdef[PATH_MAX], cwd[PATH_MAX], abs[2 * PATH_MAX];
	const char *d = listcfg_dir(ctx->config_dir);
	const char *def = listcfg_dir_default();

	if (realpath(d, rdir) != NULL)
		d = rdir;
	else if (*d != '/' && getcwd(cwd, sizeof(cwd)) != NULL) {
		/* not there yet (init creates it) */
		snprintf(abs, sizeof(abs), "%s/%s", cwd, d);
		d = abs;
	}
	if (realpath(def, rdef) != NULL)
		def = rdef;
	suggest_set_config(strcmp(d, def) == 0 ? NULL : d);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "allow-root", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	static char refused[2048];
	static char prog[64];	/* "listgate COMMAND", argv[0] of the command */
	struct cmd_ctx ctx;
	const struct cmd_def *c;
	sigset_t none;
	int ch, i;

	std_fds_open();
	/* SIGCHLD ignored by whoever started us (an MTA's or a wrapper's
	 * setting, kept across exec) makes our children reap themselves:
	 * waitpid then finds none, and a deliver that delivered looks
	 * failed (the post deferred, delivered again), a member_check's
	 * answer is lost */
	signal(SIGCHLD, SIG_DFL);
	/* a reader gone (`listgate held | head`, a script's `grep -q`) is
	 * output that cannot be written, as a full disk: the command goes
	 * on, says so and exits 1 (answered), not killed silently half way
	 * by SIGPIPE (approve of many posts: the rest left undecided).
	 * Children get the default back (run.c) */
	signal(SIGPIPE, SIG_IGN);
	/* and signals it blocked stay blocked across exec: SIGALRM
	 * would never fire filter's watchdog, SIGTERM never stop it */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	memset(&ctx, 0, sizeof(ctx));
	/* what listgate creates (token files, Kyoto Cabinet's write-ahead
	 * logs, rebuilt files, directories) is never for others, nor
	 * writable by the group */
	umask(umask(0) | 027);
	/* every command tokenizes posts with the evidence beyond words */
	posttok_set_evidence(evidence_gatherer());
	/* '+': stop at the subcommand; its options are its own */
	while ((ch = getopt_long(argc, argv, "+c:hV", opts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			/* an empty one (a script's `--config "$CONF"' with
			 * CONF unset) would be taken as none given: the
			 * command would act on $LISTGATE_CONFIG or
			 * /etc/listgate, another site's lists and database */
			if (*optarg == '\0') {
				fprintf(stderr, "listgate: --config: an empty "
				    "directory name (give a directory, or leave "
				    "--config out for $LISTGATE_CONFIG or %s)\n",
				    LG_SYSCONFDIR);
				return early_exit(argc, argv, EXIT_CMD_USAGE);
			}
			ctx.config_dir = optarg;
			break;
		case 'R':
			ctx.allow_root = 1;
			break;
		case 'h':
			usage(stdout);
			return early_exit(argc, argv, answered("--help",
			    EXIT_CMD_OK));
		case 'V':
			printf("listgate %s\n", PACKAGE_VERSION);
			return early_exit(argc, argv, answered("--version",
			    EXIT_CMD_OK));
		default:
			usage(stderr);
			return early_exit(argc, argv, EXIT_CMD_USAGE);
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return mta_exit(argc, argv, EXIT_CMD_USAGE);
	}
	if (strcmp(argv[optind], "filter") == 0 ||
	    strcmp(argv[optind], "moderate") == 0) {
		struct sigaction sa;

		early_code = outcome_exit(OUT_DEFER, settings_mta_fallback(-1,
		    0));
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = early_watchdog;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGALRM, &sa, NULL);
		alarm(LG_DEFAULT_TIMEOUT_S);
	}
	suggest_config(&ctx);
	for (c = cmd_table; c->name; c++) {
		if (strcmp(c->name, argv[optind]) == 0) {
			int sub_argc = argc - optind;
			char **sub_argv = argv + optind;

			/* listgate's own options after the command are a
			 * usage error of the command, and as root the refusal
			 * below would ask for the --allow-root given there:
			 * say where they go (not for filter and moderate,
			 * whose usage errors speak the MTA's dialect) */
			if (c->fn != cmd_filter && c->fn != cmd_moderate &&
			    (i = global_after(sub_argc, sub_argv)) > 0) {
				/* (--allow-root with the configuration in
				 * use: pasted, it acts on that one) */
				fprintf(stderr, "listgate %s: %s is an option "
				    "of listgate itself, not of %s: give it "
				    "before the command (%s %s %s ...)\n",
				    c->name, sub_argv[i], c->name,
				    strncmp(sub_argv[i], "--config", 8) == 0 ?
				    "listgate" : suggest_cmd(),
				    strncmp(sub_argv[i], "--config", 8) == 0 ?
				    "--config DIR" : sub_argv[i], c->name);
				return EXIT_CMD_USAGE;
			}
			/* root: become the configured user before anything
			 * but listgate.conf is opened, or refuse */
			ctx.refused_mta = -1;
			if (!ctx.allow_root && !help_only(sub_argc, sub_argv) &&
			    cmd_leave_root(&ctx,
			    &ctx.refused_mta, refused, sizeof(refused)) < 0) {
				ctx.refused = refused;
				/* filter and moderate answer in their
				 * MTA's dialect */
				if (c->fn != cmd_filter &&
				    c->fn != cmd_moderate) {
					cmd_err(c->name, "%s", refused);
					return EXIT_CMD_FAIL;
				}
			}
			optind = 0;	/* fresh getopt for the subcommand */
			/* getopt names argv[0] in its messages ("unrecognized
			 * option"): the same prefix as every other message */
			snprintf(prog, sizeof(prog), "listgate %s", c->name);
			sub_argv[0] = prog;
			/* (filter and moderate answer the MTA with their exit
			 * status alone, and keep it) */
			if (c->fn == cmd_filter || c->fn == cmd_moderate)
				return c->fn(sub_argc, sub_argv, &ctx);
			return answered(c->name, c->fn(sub_argc, sub_argv,
			    &ctx));
		}
	}
	fprintf(stderr, "listgate: unknown command '%s' (try listgate --help)\n",
	    argv[optind]);
	return mta_exit(argc, argv, EXIT_CMD_USAGE);
}

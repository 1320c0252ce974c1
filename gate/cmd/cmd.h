/*
 * cmd.h - the listgate subcommands and what they share
 *
 * Each subcommand lives in its own cmd_*.c, parses its own options
 * (getopt_long, argv[0] is the subcommand name) and returns the process
 * exit status.  Interactive commands use 0 ok, 1 failure, 2 usage;
 * `filter` maps outcomes through outcome_exit().
 */
#ifndef LG_CMD_H
#define LG_CMD_H

#include <stddef.h>
#include <stdio.h>

#include "gate/util/lglimits.h"
#include "gate/util/sanitize.h"

struct decide_req;
struct listcfg_global;
struct listcfg_list;
struct queue;

/* global options parsed by main before the subcommand */
struct cmd_ctx {
	const char *config_dir;	/* --config DIR, else $LISTGATE_CONFIG, else /etc/listgate */
	int verbose;
	int allow_root;		/* --allow-root: stay root */
	/* started as root and refused (cmd_leave_root): why, and the
	 * configured dialect (enum listcfg_mta, -1 unknown).  main ends
	 * every command but filter and moderate there; those defer in
	 * their dialect */
	const char *refused;
	int refused_mta;
};

#define EXIT_CMD_OK	0
#define EXIT_CMD_FAIL	1
#define EXIT_CMD_USAGE	2

typedef int (*cmd_fn)(int argc, char **argv, const struct cmd_ctx *ctx);

struct cmd_def {
	const char *name;
	cmd_fn fn;
	const char *summary;	/* one line for `listgate --help` */
};

/* the table, in gate/cmd/listgate.c */
extern const struct cmd_def cmd_table[];

int cmd_train(int argc, char **argv, const struct cmd_ctx *ctx);
int cmd_score(int argc, char **argv, const struct cmd_ctx *ctx);
int cmd_tokens(int argc, char **argv, const struct cmd_ctx *ctx);
int cmd_filter(int argc, char **argv, const struct cmd_ctx *ctx);
int cmd_config(int argc, char **argv, const struct cmd_ctx *ctx);
int cmd_migrate(int argc, char **argv, const struct cmd_ctx *ctx);
int cmd_held(int argc, char **argv, const struct cmd_ctx *ctx);
int cmd_show(int argc, char **argv, const struct cmd_ctx *ctx);
int cmd_approve(int argc, char **argv, const struct cmd_ctx *ctx);
int cmd_reject(int argc, char **argv, const struct cmd_ctx *ctx);
int cmd_discard(int argc, char **argv, const struct cmd_ctx *ctx);
int cmd_expire(int argc, char **argv, const struct cmd_ctx *ctx);
int cmd_sync(int argc, char **argv, const struct cmd_ctx *ctx);
int cmd_rebuild(int argc, char **argv, const struct cmd_ctx *ctx);
int cmd_tune(int argc, char **argv, const struct cmd_ctx *ctx);
int cmd_stats(int argc, char **argv, const struct cmd_ctx *ctx);
int cmd_user(int argc, char **argv, const struct cmd_ctx *ctx);
int cmd_web(int argc, char **argv, const struct cmd_ctx *ctx);
int cmd_holder(int argc, char **argv, const struct cmd_ctx *ctx);
int cmd_moderate(int argc, char **argv, const struct cmd_ctx *ctx);
int cmd_notify(int argc, char **argv, const struct cmd_ctx *ctx);
int cmd_init(int argc, char **argv, const struct cmd_ctx *ctx);

/*
 * Started as root (real or effective uid 0): read the global keys user,
 * group and mta of the configuration (ctx's directory) before anything
 * else is opened, and become that user and group for good
 * (gate/util/priv.h).  0 when not root or switched; -1 with the reason
 * in err when root must be refused (no `user`, a configuration another
 * user could change or none at all, an unknown user, a failed switch),
 * *mta_r then the configured dialect (-1: unknown).  The caller decides
 * about --allow-root.
 */
int cmd_leave_root(const struct cmd_ctx *ctx, int *mta_r, char *err,
    size_t errsz);

/* print "listgate NAME: " and the message to stderr, through the
 * sanitizer (one line, controls masked; cut at 4 KiB) */
void cmd_err(const char *name, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* 1 when list's token file (or, while it is missing, the tokens
 * directory) is there but not this user's to write, else 0 */
int cmd_tokens_not_writable(const struct listcfg_global *g,
    const char *list);

/* say that list is no list name, and what a list name is (the same
 * words for every command) */
void cmd_bad_list(const char *name, const char *list);

/* warn (a misspelt --list?) when list has no lists/L.conf, no file in
 * tokens_dir (token file, pass counter) and no held post or journal
 * event at all, saying that there is nothing to `what'; a warning
 * only (a new list has none of them yet), and none when the database
 * cannot tell */
void cmd_warn_unknown_list(const char *name, struct queue *q,
    const struct listcfg_global *g, const char *list, const char *what);

/*
 * s as a whole number from min to max (min >= 0) written in decimal
 * digits only: 0 with *v_r, or -1.  strtol's leading blanks, sign and
 * other bases are no number here ("+5", " 5", "5 ", "0x5", "-0"), nor
 * is a number past max (no overflow).  Says nothing: the caller names
 * its option and the value.
 */
int cmd_parse_num(const char *s, long long min, long long max,
    long long *v_r);

/* standard output flushed and written whole: 0, or -1 after saying
 * "cannot write the standard output" as name (what a command printed is
 * its answer: unwritten, the command failed); said once a run, main
 * checking again after every command but filter and moderate */
int cmd_stdout_done(const char *name);

/* most bytes cmd_put_clean writes for one piece of text */
#define CMD_PUT_MAX	(16u * 1024u)

/*
 * Write n bytes of untrusted s to f through the sanitizer, on one line
 * (enc SANITIZE_TEXT, or SANITIZE_JSON for a JSON string), cut with
 * "..." at CMD_PUT_MAX bytes.  Never allocates.
 */
void cmd_put_clean(FILE *f, const void *s, size_t n, enum sanitize_enc enc);

/*
 * After the options: any argument left (argv[optind] on) is an error.
 * EXIT_CMD_OK, or EXIT_CMD_USAGE after "unexpected argument" and usage
 * on stderr.
 */
int cmd_no_args(const char *name, int argc, char **argv,
    void (*usage)(FILE *));

/*
 * The PATH arguments (argv[optind] on) name "-" (standard input) at most
 * once: read to its end by the first, a second would find it used up
 * and read an empty post.  EXIT_CMD_OK, or EXIT_CMD_USAGE after the
 * message and usage on stderr.
 */
int cmd_stdin_once(const char *name, int argc, char **argv,
    void (*usage)(FILE *));

/*
 * Load list's settings into l and put its token file's path into path
 * (pathsz bytes).  0, or -1 with the error reported as name (l is then
 * freed).  list must have passed listcfg_name_ok.
 */
int cmd_list_config(const char *name, const struct listcfg_global *g,
    const char *list, struct listcfg_list *l, char *path, size_t pathsz);

/*
 * The start of a command on one list: check the list name, load the
 * global configuration (ctx's directory) into g, then cmd_list_config.
 * EXIT_CMD_OK, else the exit status (EXIT_CMD_USAGE for a bad name,
 * EXIT_CMD_FAIL) with the error reported as name and g, l freed.
 */
int cmd_load_list(const char *name, const struct cmd_ctx *ctx,
    const char *list, struct listcfg_global *g, struct listcfg_list *l,
    char *path, size_t pathsz);

/*
 * Load the global configuration and connect to its database, flags as
 * app_connect takes them (APP_CHECK_SCHEMA, APP_JOURNAL_READS).  0, or
 * -1 reported as name (g is then freed).
 */
int cmd_connect(const char *name, const struct cmd_ctx *ctx,
    struct listcfg_global *g, struct queue **q_r, int flags);

/*
 * Sync list's token file from the journal (created when missing) and
 * say how many events were applied unless quiet; skipped (quarantined)
 * events are always reported (cmd_sync_report).  0, or -1 reported as
 * name.
 */
int cmd_sync_list(const char *name, struct queue *q,
    const struct listcfg_global *g, const char *list, int flags);
#define CMD_SYNC_QUIET	1	/* say nothing on success */
#define CMD_SYNC_READS	2	/* q is the journal-reading connection
				 * (APP_JOURNAL_READS) */

/*
 * Report an error of a database connection as name (cmd_err's format),
 * reads when it is the one that reads the journal (APP_JOURNAL_READS).
 * The database's errors say "database: "; when the journal is read from
 * sync_database, the message names that setting, or the administrator
 * mends the other server.
 */
void cmd_journal_err(const char *name, const struct listcfg_global *g,
    int reads, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* the lists a run decided on, to sync afterwards (64 of them; more
 * sets overflow, and the sync then says to run `listgate sync`) */
struct cmd_touched {
	char names[64][LG_MAX_LIST_NAME + 1];
	int n, overflow;
};

/* remember list for cmd_sync_touched */
void cmd_touch(struct cmd_touched *t, const char *list);

/* sync every list of t whose token file is ours to write (the others:
 * a note on stderr unless quiet, their owner's sync applies the
 * decisions): the number of failures, each reported as name */
int cmd_sync_touched(const char *name, struct queue *q,
    const struct listcfg_global *g, const struct cmd_touched *t, int quiet);

/*
 * Decide one post through decide_post and report it as name: a line
 * on stdout unless quiet ("post 12 approved (list dev)"), an error on
 * stderr for a decision not made.  Its list goes into t.  0 decided, 1
 * already so (nothing changed: a line unless quiet), -1 not.  A post
 * decided otherwise already, or being released, is an error, or with
 * meanwhile_ok (expire: a moderator was quicker) a line unless quiet
 * and 1.
 */
int cmd_decide_one(const char *name, struct queue *q,
    const struct listcfg_global *g, const struct decide_req *rq,
    struct cmd_touched *t, int quiet, int meanwhile_ok);
struct sync_stats;
/*
 * Report the journal events a sync or rebuild of list skipped: one
 * warning each (syslog with g's facility, and stderr), whether it was
 * quarantined just now or before, then how many more there were; and
 * a token file built with word pairs set otherwise than the list says
 * (it learnt as built).  Nothing when neither.
 */
void cmd_sync_report(const char *name, const struct listcfg_global *g,
    const char *list, const struct sync_stats *st);

/* the signals that stop a run (SIGINT, SIGTERM, SIGHUP) */
extern const int cmd_stop_sigs[3];
#define CMD_NSTOP_SIGS	3

/* catch cmd_stop_sigs with handler: once, then their default again
 * (SA_RESETHAND: a second one ends the run; SA_RESTART).  A signal
 * ignored stays ignored: a run under nohup (SIGHUP), or in the
 * background of a script (SIGINT), was started not to stop by it */
void cmd_catch_stops(void (*handler)(int));

/* ", N quarantined and skipped" for a summary line, or "" */
const char *cmd_sync_skipped(const struct sync_stats *st, char *buf,
    size_t bufsz);

#endif

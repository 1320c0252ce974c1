/*
 * cmd_migrate.c - `listgate migrate`: create or upgrade the PostgreSQL
 * schema with the migrations compiled into this binary
 *
 * Trusts the configuration and the compiled-in SQL.  Each migration runs
 * in its own transaction and is recorded in schema_migrations; running
 * again is a no-op; a schema newer than this binary knows is refused.
 * Each table lock a migration takes is waited for at most --lock-timeout
 * seconds: a migration queued for an ACCESS EXCLUSIVE lock behind a long
 * transaction would queue every other client of that table behind it.
 * --status waits as long for schema_migrations (a migration running
 * holds it), not for ever.
 * Exit 0, 1 on failure, 2 on usage errors.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "db/queue.h"
#include "gate/cmd/cmd.h"
#include "gate/util/suggest.h"
#include "listcfg/listcfg.h"

#define NAME "migrate"

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: listgate [--config DIR] migrate [--status] "
	    "[--lock-timeout SECONDS]\n"
	    "                [--quiet]\n"
	    "\n"
	    "Create or upgrade the moderation queue's PostgreSQL schema (the\n"
	    "database that the key database of listgate.conf names, else the\n"
	    "PG* environment variables).  Each migration runs in its own\n"
	    "transaction; running it again changes nothing.  A migration that\n"
	    "waits longer than the lock timeout for a table another session\n"
	    "holds is rolled back (it would hold up every other client of the\n"
	    "table meanwhile) and named with that session: run it again.\n"
	    "\n"
	    "  -s, --status   only print the schema version and the migrations\n"
	    "                 pending, one \"pending NNNN_NAME\" line each\n"
	    "  -t, --lock-timeout SECONDS\n"
	    "                 wait at most this long for each table lock\n"
	    "                 (--status: for schema_migrations), 1 to %d\n"
	    "                 (default %d)\n"
	    "  -q, --quiet    print nothing on success\n"
	    "  -h, --help     this help\n"
	    "\n"
	    "Exit status: 0 ok, 1 failure (also: the schema is newer than this\n"
	    "listgate), 2 usage error.\n", QUEUE_MIGRATE_LOCK_MAX_S,
	    QUEUE_MIGRATE_LOCK_S);
}

/* print one applied migration */
static void
report(int version, const char *name, void *ctx)
{
	if (!*(int *)ctx)
		printf("applied %04d_%s\n", version, name);
}

int
cmd_migrate(int argc, char **argv, const struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "status", no_argument, NULL, 's' },
		{ "lock-timeout", required_argument, NULL, 't' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct listcfg_global g;
	const struct queue_migration *m;
	struct queue *q;
	char err[2048];
	unsigned lock_s = QUEUE_MIGRATE_LOCK_S;
	long long l;
	int ch, status = 0, quiet = 0, n, v, rc = EXIT_CMD_OK;

	while ((ch = getopt_long(argc, argv, "st:qh", opts, NULL)) != -1) {
		switch (ch) {
		case 's':
			status = 1;
			break;
		case 't':
			if (cmd_parse_num(optarg, 1, QUEUE_MIGRATE_LOCK_MAX_S,
			    &l) < 0) {
				cmd_err(NAME, "bad --lock-timeout '%s': "
				    "seconds from 1 to %d", optarg,
				    QUEUE_MIGRATE_LOCK_MAX_S);
				return EXIT_CMD_USAGE;
			}
			lock_s = (unsigned)l;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return EXIT_CMD_OK;
		default:
			usage(stderr);
			return EXIT_CMD_USAGE;
		}
	}
	if (optind < argc) {
		cmd_err(NAME, "unexpected argument '%s'", argv[optind]);
		usage(stderr);
		return EXIT_CMD_USAGE;
	}
	if (cmd_connect(NAME, ctx, &g, &q, 0) < 0)
		return EXIT_CMD_FAIL;
	if (status) {
		if (queue_schema_status(q, lock_s, &v, err, sizeof(err)) < 0) {
			cmd_err(NAME, "%s", err);
			rc = EXIT_CMD_FAIL;
		} else {
			printf("schema version %d, this listgate knows %d%s%s%s\n",
			    v, queue_schema_latest, v > queue_schema_latest ?
			    " (the database is newer: upgrade listgate)" :
			    v < queue_schema_latest ? " (run " : "",
			    v < queue_schema_latest ? suggest_cmd() : "",
			    v < queue_schema_latest ? " migrate)" : "");
			/* what migrate would apply, in order */
			for (m = queue_migrations; m->name != NULL; m++)
				if (m->version > v)
					printf("pending %04d_%s\n", m->version,
					    m->name);
			/* a failure is said on standard error too: a
			 * monitoring script keeps that, not the report */
			if (v > queue_schema_latest) {
				cmd_err(NAME, "the database schema is version "
				    "%d, newer than this listgate knows (%d): "
				    "upgrade listgate", v, queue_schema_latest);
				rc = EXIT_CMD_FAIL;
			}
		}
	} else if (queue_migrate(q, lock_s, &n, report, &quiet, err,
	    sizeof(err)) < 0) {
		cmd_err(NAME, "%s", err);
		rc = EXIT_CMD_FAIL;
	} else if (!quiet)
		printf("schema at version %d (%d migration%s applied)\n",
		    queue_schema_latest, n, n == 1 ? "" : "s");
	queue_close(q);
	listcfg_free_global(&g);
	/* what --status says is what a script reads: output that cannot
	 * be written (a full disk) is a failure, said so */
	if (cmd_stdout_done(NAME) < 0)
		rc = EXIT_CMD_FAIL;
	return rc;
}

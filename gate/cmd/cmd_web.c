/*
 * cmd_web.c - `listgate web [--listen ADDR:PORT]`: serve the moderation
 * page and its JSON API (gate/web/) until SIGTERM
 *
 * Loads the configuration, connects once to check the schema (and to
 * load libpq before any thread starts), then hands over to web_run.
 * Logs go to standard error and, when it is not a terminal, to syslog
 * with the configured facility.  Exit 0 after a clean stop, 1 when it
 * cannot start, 2 on usage errors.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "db/queue.h"
#include "gate/app/app.h"
#include "gate/cmd/cmd.h"
#include "gate/moderate/reply.h"
#include "gate/util/log.h"
#include "gate/web/web.h"
#include "listcfg/listcfg.h"

static void
web_usage(FILE *f)
{
	fprintf(f,
	    "usage: listgate [--config DIR] web [--listen ADDR:PORT]\n"
	    "\n"
	    "Serve the moderation page and its JSON API over HTTP until SIGTERM.\n"
	    "Meant to sit behind a TLS reverse proxy (see listgate(1)); accounts\n"
	    "are managed with `listgate user`.  One log line per request.\n"
	    "\n"
	    "  -l, --listen ADDR:PORT  where to listen (default: web_listen of\n"
	    "                          listgate.conf, 127.0.0.1:8180); port 0\n"
	    "                          picks a free one (logged)\n"
	    "  -h, --help              this help\n"
	    "\n"
	    "Exit status: 0 after SIGTERM or SIGINT, 1 when it cannot start,\n"
	    "2 usage error.\n");
}

int
cmd_web(int argc, char **argv, const struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct listcfg_global g;
	struct queue *q;
	const char *listen = NULL;
	char err[1024], host[64], why[256];
	unsigned port;
	int ch, rc;

	while ((ch = getopt_long(argc, argv, "l:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			listen = optarg;
			break;
		case 'h':
			web_usage(stdout);
			return EXIT_CMD_OK;
		default:
			web_usage(stderr);
			return EXIT_CMD_USAGE;
		}
	}
	if ((rc = cmd_no_args("web", argc, argv, web_usage)) != EXIT_CMD_OK)
		return rc;
	if (listen != NULL && listcfg_listen_parse(listen, host, sizeof(host),
	    &port, why, sizeof(why)) < 0) {
		cmd_err("web", "--listen: %s", why);
		return EXIT_CMD_USAGE;
	}
	if (cmd_connect("web", ctx, &g, &q, APP_CHECK_SCHEMA) < 0)
		return EXIT_CMD_FAIL;
	queue_close(q);
	log_setup("listgate", g.log_facility, !isatty(2));
	log_stderr(1);
	/* a rejection on the page tells the sender (sender_notice) */
	web_set_rejected(reply_rejected_notice);
	if (web_run(&g, listen ? listen : g.web_listen, err,
	    sizeof(err)) < 0) {
		cmd_err("web", "%s", err);
		listcfg_free_global(&g);
		return EXIT_CMD_FAIL;
	}
	listcfg_free_global(&g);
	return EXIT_CMD_OK;
}

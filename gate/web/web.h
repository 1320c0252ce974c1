/*
 * web.h - `listgate web`: the moderation page and its JSON API over
 * HTTP (libmicrohttpd), meant to sit behind a TLS reverse proxy
 *
 * The server decides through the one decision path (gate/app/decide.h),
 * reads the queue through db/queue.h and db/qview.h, checks accounts
 * from users.conf (listcfg/users.h) and syncs the token files of the
 * lists it decided on in a thread of its own.  Everything it shows from
 * a post goes through the sanitizer.  It logs one line per request.
 */
#ifndef LG_WEB_H
#define LG_WEB_H

#include <stddef.h>
#include <stdint.h>

struct listcfg_global;

/*
 * Serve on listen ("ADDR:PORT"; port 0 picks a free one) with the
 * configuration g (loaded from config_dir; connected and checked by
 * the caller once, which also loads libpq before any thread starts)
 * until SIGTERM or SIGINT, then stop cleanly: stop accepting, finish the
 * requests in progress, sync what was decided, close.  "listening on
 * ADDR:PORT" goes to the log when it is ready.  0 after a clean stop, or
 * -1 with err when it could not start.
 */
int web_run(struct listcfg_global *g, const char *listen, char *err,
    size_t errsz);

/*
 * What a rejection on the page or through the API does once it is
 * decided: tell the post's sender when the list says so (sender_notice),
 * as a rejection by mail does.  Wired in by the command (the web page
 * does not reach the moderation feature itself); 0 sent, 1 not sent on
 * purpose, -1 failed, why saying why.  NULL: nothing.
 */
struct queue;
typedef int (*web_rejected_fn)(struct queue *q,
    const struct listcfg_global *g, const char *list, int64_t id,
    char *why, size_t whysz);
void web_set_rejected(web_rejected_fn fn);

#endif

/*
 * api.c - the JSON API of `listgate web` under /api/
 *
 *   GET  /api/lists                  [{"list": L, "held": N}, ...]
 *   GET  /api/lists/L/held?offset=&limit=
 *                                    {"total": N, "entries": [{"id",
 *                                    "sender", "subject", "score" (null:
 *                                    held unscored, oversize),
 *                                    "held_at", "sha256"}, ...]}
 *   GET  /api/lists/L/held/ID        one post: its SHA-256, headers,
 *                                    deciding tokens, a sanitised text
 *                                    preview
 *   POST /api/lists/L/held/ID        action=approve|reject|discard (form
 *                                    or JSON), optionally sha256=HEX (the
 *                                    post listed: no other is decided
 *                                    under its number): 200 {"id",
 *                                    "list", "status"}
 *
 * Errors are {"error": "..."}: 401 without credentials (or wrong ones),
 * 403 for a list the user may not see (and a POST without its session's
 * CSRF token, or from another site), 404 for an unknown list, id or
 * path, 409 for a post already decided (who and when) or not the post
 * sha256 named, 400 for a bad action, sha256 or argument (sha256 in the
 * URL too: it belongs in the body; action, note or sha256 given
 * twice), 413 for a body too large (web.c),
 * 405 for a wrong method, 429 after too many failed logins, 5xx when
 * the database or the release command fails.  A post is found by id and must belong to
 * the list in the path: another list's post is "no such post", whatever
 * the user may see.  Every string from a post or a request is written
 * through the sanitizer (SANITIZE_JSON).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "db/queue.h"
#include "db/qview.h"
#include "gate/app/decide.h"
#include "gate/app/preview.h"
#include "gate/util/buf.h"
#include "gate/util/sanitize.h"
#include "gate/util/xalloc.h"
#include "gate/web/form.h"
#include "gate/web/json.h"
#include "gate/web/webint.h"
#include "listcfg/listcfg.h"

/* characters of decoded text in a post's preview */
#define API_PREVIEW_CHARS	20000
/* characters of one header value */
#define API_HEADER_CHARS	2000
/* deciding tokens listed */
#define API_MAX_TOKENS		100
/* characters of a listing's sender and subject: 500 entries of masked
 * characters (6 bytes of JSON each) stay near 2 MiB, under the answer's
 * 4 MiB */
#define API_ENTRY_CHARS		300

static const char json_type[] = "application/json; charset=utf-8";

/* --- GET /api/lists ------------------------------------------------------- */

struct lists_ctx {
	struct web_req *r;
	int first;
};

/* web_list_fn: one entry */
static void
lists_item(const char *list, int64_t held, void *vctx)
{
	struct lists_ctx *c = vctx;

	web_printf(c->r, "%s\n  {\"list\": ", c->first ? "" : ",");
	web_json_strs(c->r, list);
	web_printf(c->r, ", \"held\": %lld}", (long long)held);
	c->first = 0;
}

static void
api_lists(struct web_req *r)
{
	struct lists_ctx c = { r, 1 };
	struct queue *q;
	char err[1024];
	int rc;

	if ((q = web_db(r, 1)) == NULL)
		return;
	r->status = 200;
	r->ctype = json_type;
	web_printf(r, "[");
	rc = web_lists(r, q, lists_item, &c, err, sizeof(err));
	if (rc == -1)
		web_json_error(r, 500, "out of memory");
	else if (rc < 0)
		web_db_failed(r, 1, err);
	else
		web_printf(r, c.first ? "]\n" : "\n]\n");
}

/* --- GET /api/lists/L/held ---------------------------------------------- */

/* a non-negative whole number of at most 9 digits: 0, or -1 */
static int
parse_count(const char *s, int64_t *v_r)
{
	int64_t v = 0;
	size_t i;

	if (s == NULL || s[0] == '\0' || strlen(s) > 9)
		return -1;
	for (i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*v_r = v;
	return 0;
}

struct page_ctx {
	struct web_req *r;
	int n;
};

/* qview_row_fn: one entry */
static int
held_entry(const struct qview_row *row, void *vctx)
{
	struct page_ctx *c = vctx;
	const char *from;
	char when[40];

	web_iso_time(row->arrived, when, sizeof(when));
	web_printf(c->r, "%s\n    {\"id\": %lld, \"sender\": ",
	    c->n ? "," : "", (long long)row->id);
	from = row->from != NULL && *row->from ? row->from : row->env_sender;
	if (from == NULL)
		from = "";
	web_json_str(c->r, from, strlen(from), API_ENTRY_CHARS);
	web_printf(c->r, ", \"subject\": ");
	web_json_str(c->r, row->subject ? row->subject : "",
	    row->subject ? strlen(row->subject) : 0, API_ENTRY_CHARS);
	/* a post held unscored (oversize): null, not the 0 stored for it,
	 * which reads as surely ham */
	if (row->scored)
		web_printf(c->r, ", \"score\": %.6f", row->score);
	else
		web_printf(c->r, ", \"score\": null");
	web_printf(c->r, ", \"held_at\": \"%s\"", when);
	if (web_sha_hex_ok(row->sha_hex))
		web_printf(c->r, ", \"sha256\": \"%s\"", row->sha_hex);
	web_printf(c->r, "}");
	c->n++;
	return 0;
}

static void
api_held(struct web_req *r, const char *list)
{
	struct page_ctx c;
	struct queue *q;
	const char *a;
	char err[1024];
	int64_t offset = 0, limit = WEB_DEFAULT_PAGE, total;

	/* an empty one (?offset=&limit=, the route as written) is the
	 * default, as on the list's page */
	if ((a = web_arg(r, "offset")) != NULL && *a != '\0' &&
	    parse_count(a, &offset) < 0) {
		web_json_error(r, 400, "bad offset: want a whole number");
		return;
	}
	if ((a = web_arg(r, "limit")) != NULL && *a != '\0' &&
	    (parse_count(a, &limit) < 0 || limit < 1 ||
	    limit > WEB_MAX_PAGE)) {
		web_json_error(r, 400, "bad limit: want 1 to %d",
		    WEB_MAX_PAGE);
		return;
	}
	if ((q = web_db(r, 1)) == NULL)
		return;
	c.r = r;
	c.n = 0;
	r->status = 200;
	r->ctype = json_type;
	web_printf(r, "{\"entries\": [");
	if (qview_page(q, list, QVIEW_OLDEST, offset, limit, held_entry, &c,
	    &total, err, sizeof(err)) < 0) {
		web_db_failed(r, 1, err);
		return;
	}
	if (total == 0 && !web_known(r->srv, list)) {
		web_json_error(r, 404, "no list %s", list);
		return;
	}
	web_printf(r, "%s], \"total\": %lld}\n", c.n ? "\n  " : "",
	    (long long)total);
}

/* --- GET /api/lists/L/held/ID ------------------------------------------- */

struct hdr_json {
	struct web_req *r;
	int n;
};

static void
header_json(const char *name, const unsigned char *v, size_t n, void *ctx)
{
	struct hdr_json *h = ctx;

	web_printf(h->r, "%s\n    {\"name\": ", h->n++ ? "," : "");
	web_json_str(h->r, name, strlen(name), 200);
	web_printf(h->r, ", \"value\": ");
	web_json_str(h->r, (const char *)v, n, API_HEADER_CHARS);
	web_printf(h->r, "}");
}

static void
api_post(struct web_req *r, const char *list, int64_t id)
{
	struct queue_row row;
	struct queue *q;
	struct hdr_json h;
	struct web_clue cl;
	struct buf text = BUF_INIT(API_PREVIEW_CHARS * 4);
	const char *p;
	char err[1024], when[40], hex[WEB_SHA_HEX + 1];
	int found, nt = 0;

	if ((q = web_db(r, 1)) == NULL)
		return;
	/* another list's post is not read at all (web_post_in_list) */
	found = web_post_in_list(q, list, id, err, sizeof(err));
	if (found > 0)
		found = queue_get_head(q, id, WEB_MAX_POST_READ, &row, err,
		    sizeof(err));
	if (found < 0) {
		web_db_failed(r, 1, err);
		return;
	}
	if (found == 0 || strcmp(row.list, list) != 0) {
		if (found)
			queue_row_free(&row);
		web_json_error(r, 404, "no post %lld in list %s",
		    (long long)id, list);
		return;
	}
	r->status = 200;
	r->ctype = json_type;
	web_iso_time(row.arrived, when, sizeof(when));
	web_printf(r, "{\"id\": %lld, \"list\": ", (long long)row.id);
	web_json_strs(r, row.list);
	web_printf(r, ", \"status\": ");
	web_json_strs(r, row.status);
	web_printf(r, ", \"sender\": ");
	web_json_strs(r, *row.from ? row.from : row.env_sender);
	web_printf(r, ", \"from\": ");
	web_json_strs(r, row.from);
	web_printf(r, ", \"env_sender\": ");
	web_json_strs(r, row.env_sender);
	web_printf(r, ", \"env_recipient\": ");
	web_json_strs(r, row.env_recipient);
	web_printf(r, ", \"subject\": ");
	web_json_strs(r, row.subject);
	web_printf(r, ", \"message_id\": ");
	web_json_strs(r, row.msgid);
	if (strcmp(row.verdict, "oversize") != 0)
		web_printf(r, ", \"score\": %.6f", row.score);
	else
		web_printf(r, ", \"score\": null");	/* held unscored */
	web_printf(r, ", \"verdict\": ");
	web_json_strs(r, row.verdict);
	web_sha_hex(row.raw_sha256, hex);
	/* the bytes the headers and preview come from: fewer than size
	 * for a post over WEB_MAX_POST_READ */
	web_printf(r, ", \"size\": %lld, \"read_bytes\": %zu, \"held_at\": "
	    "\"%s\", \"sha256\": \"%s\"", (long long)row.size, row.raw_len,
	    when, hex);
	if (row.decided) {
		web_iso_time(row.decided, when, sizeof(when));
		web_printf(r, ", \"decided_by\": ");
		web_json_strs(r, row.decided_by);
		web_printf(r, ", \"decided_at\": \"%s\"", when);
	}
	web_printf(r, ",\n  \"headers\": [");
	h.r = r;
	h.n = 0;
	web_headers(row.raw, row.raw_len, header_json, &h);
	web_printf(r, "%s],\n  \"tokens\": [", h.n ? "\n  " : "");
	for (p = row.clues; nt < API_MAX_TOKENS && web_clue_next(&p, &cl);
	    nt++) {
		web_printf(r, "%s\n    {\"token\": ", nt ? "," : "");
		web_json_str(r, cl.tok, cl.toklen, 200);
		if (cl.prob >= 0)
			web_printf(r, ", \"probability\": %.6f, \"spam\": %ld, "
			    "\"ham\": %ld}", cl.prob, cl.spam, cl.ham);
		else
			web_printf(r, "}");
	}
	web_printf(r, "%s],\n  \"preview\": ", nt ? "\n  " : "");
	if (preview_text(row.raw, row.raw_len, &text) < 0)
		buf_add_trunc(&text, "\n(preview incomplete: out of memory)",
		    36);
	sanitize_buf(&r->out, text.data ? (const char *)text.data : "",
	    text.len, API_PREVIEW_CHARS, SANITIZE_JSON, SANITIZE_KEEP_NL);
	web_printf(r, "}\n");
	buf_free(&text);
	queue_row_free(&row);
}

/* --- POST /api/lists/L/held/ID ------------------------------------------ */

/* 1 when body's note reads whole in a buffer of the body's size but not
 * in nsz bytes: too long, which is worth saying as such (it was "not a
 * valid form", and the script's writer went looking for a bad escape) */
static int
note_too_long(int json, const char *body, size_t len, size_t nsz)
{
	char *big;
	int rc;

	if (len < nsz || (big = xmalloc(len + 1)) == NULL)
		return 0;
	rc = json ? json_get_str(body, len, "note", big, len + 1, NULL) :
	    form_get(body, len, "note", big, len + 1);
	xfree(big);
	return rc == 1;
}

/* the action, note and post (sha256, the post a script listed: *has_sha
 * 0 when absent) of a POST body, form or JSON: 0, or -1 after a 400
 * answer */
static int
body_action(struct web_req *r, char *action, size_t asz, char *note,
    size_t nsz, unsigned char sha[WEB_SHA_BYTES], int *has_sha)
{
	const char *ct = web_header(r, "Content-Type");
	const char *body = r->body.data ? (const char *)r->body.data : "";
	int json = ct != NULL && strncasecmp(ct, "application/json", 16) == 0;
	char hex[256];		/* longer than a SHA-256: "bad sha256" */
	const char *twice = NULL;
	int notstr = 0, shanotstr = 0, rc, nr = 0, hs = 0, tw;

	note[0] = '\0';
	/* a multipart form (curl -F, a form with enctype multipart/form-data)
	 * is not read: said so, not "bad action" for the action it holds */
	if (ct != NULL && strncasecmp(ct, "multipart/", 10) == 0) {
		web_json_error(r, 400, "a multipart body is not read: send the "
		    "form as application/x-www-form-urlencoded (curl -d "
		    "action=approve) or as JSON (application/json)");
		return -1;
	}
	/* a field given twice is refused, not read as its first (or last)
	 * value: two programs reading one request must not differ on the
	 * post or the action */
	if (json) {
		rc = json_get_str(body, r->body.len, "action", action, asz,
		    &notstr);
		if (rc >= 0)
			nr = json_get_str(body, r->body.len, "note", note,
			    nsz, NULL);
		if (rc >= 0 && nr >= 0)
			hs = json_get_str(body, r->body.len, "sha256", hex,
			    sizeof(hex), &shanotstr);
	} else {
		rc = form_get(body, r->body.len, "action", action, asz);
		if (rc >= 0)
			nr = form_get(body, r->body.len, "note", note, nsz);
		if (rc >= 0 && nr >= 0)
			hs = form_get(body, r->body.len, "sha256", hex,
			    sizeof(hex));
	}
	tw = json ? JSON_TWICE : FORM_TWICE;
	if (rc == tw || nr == tw || hs == tw)
		twice = rc == tw ? "action" : nr == tw ? "note" : "sha256";
	if (twice != NULL) {
		web_json_error(r, 400, "%s is given twice: nothing was "
		    "decided", twice);
		return -1;
	}
	if (rc >= 0 && nr < 0 && note_too_long(json, body, r->body.len,
	    nsz)) {
		web_json_error(r, 400, "note longer than %zu bytes: nothing "
		    "was decided", nsz - 1);
		return -1;
	}
	if (nr < 0 || hs < 0)
		rc = -1;
	if (rc < 0) {
		web_json_error(r, 400, json ? "the body is not a JSON object "
		    "with string members" : "the body is not a valid form");
		return -1;
	}
	if (rc == 0 || decide_status(action) == NULL) {
		web_json_error(r, 400, "bad action: want approve, reject or "
		    "discard");
		return -1;
	}
	if (shanotstr || (hs && web_sha_parse(hex, sha) < 0)) {
		web_json_error(r, 400, "bad sha256: want the post's SHA-256 in "
		    "64 lower-case hex digits, as the listing gives it");
		return -1;
	}
	*has_sha = hs;
	return 0;
}

static void
api_decide(struct web_req *r, const char *list, int64_t id)
{
	struct queue_decided res;
	struct queue *q;
	char action[32], note[1024], msg[1200], when[40];
	char t[SESSION_HEX + 1];
	const char *token, *b = r->body.data ? (const char *)r->body.data : "";
	unsigned char sha[WEB_SHA_BYTES];
	int st, has_sha = 0;

	if (!auth_same_origin(r)) {
		web_json_error(r, 403, "a POST from another site");
		return;
	}
	/* a page session must prove the request is its own: its token in
	 * X-CSRF-Token, or in a form field csrf */
	if (r->by_session) {
		if ((token = web_header(r, "X-CSRF-Token")) == NULL)
			token = form_get(b, r->body.len, "csrf", t,
			    sizeof(t)) == 1 ? t : NULL;
		if (!auth_csrf_ok(r, token)) {
			web_json_error(r, 403, "missing or bad CSRF token "
			    "(a session sends its page's token in "
			    "X-CSRF-Token)");
			return;
		}
	}
	/* a script that puts the post in the URL would decide unchecked */
	if (web_arg(r, "sha256") != NULL) {
		web_json_error(r, 400, "sha256 goes in the body (a form or JSON "
		    "field), not in the URL");
		return;
	}
	if (body_action(r, action, sizeof(action), note, sizeof(note), sha,
	    &has_sha) < 0)
		return;
	if ((q = web_db(r, 1)) == NULL)
		return;
	st = web_decide(r, q, list, id, has_sha ? sha : NULL,
	    decide_status(action), note, &res, msg, sizeof(msg));
	if (st != 200 && st != 409) {
		web_json_error(r, st, "%s", msg);
		return;
	}
	if (st == 409 && res.old[0] == '\0') {
		/* not the post sha256 named (a failover or a restore gave
		 * its number to another post since the script listed) */
		web_json_error(r, 409, "post %lld is not the post with that "
		    "sha256 (its number went to another post since): nothing "
		    "was decided", (long long)id);
		return;
	}
	r->status = st;
	r->ctype = json_type;
	buf_reset(&r->out);
	if (st == 200) {
		web_printf(r, "{\"id\": %lld, \"list\": ", (long long)id);
		web_json_strs(r, list);
		web_printf(r, ", \"status\": \"%s\"}\n",
		    decide_status(action));
		return;
	}
	web_iso_time(res.at, when, sizeof(when));
	web_printf(r, "{\"error\": ");
	web_json_strs(r, msg);
	web_printf(r, ", \"status\": ");
	web_json_strs(r, res.old);
	web_printf(r, ", \"decided_by\": ");
	web_json_strs(r, res.by);
	web_printf(r, ", \"decided_at\": \"%s\"}\n", when);
}

/* --- routing -------------------------------------------------------------- */

/* a 405 naming the methods allowed */
static void
wrong_method(struct web_req *r, const char *allow)
{
	r->allow = allow;
	web_json_error(r, 405, "method %s not allowed here (%s)", r->method,
	    allow);
}

void
api_handle(struct web_req *r, char **seg, int nseg)
{
	enum auth_result a;
	int get = strcmp(r->method, "GET") == 0 ||
	    strcmp(r->method, "HEAD") == 0;
	int post = strcmp(r->method, "POST") == 0;
	const char *list = NULL;
	int64_t id = 0;

	/* the route first: an unknown path is a 404 for everyone */
	if (nseg == 1 && strcmp(seg[0], "lists") == 0) {
		if (!get) {
			wrong_method(r, "GET, HEAD");
			return;
		}
	} else if ((nseg == 3 || nseg == 4) && strcmp(seg[0], "lists") == 0 &&
	    strcmp(seg[2], "held") == 0) {
		list = seg[1];
		if (nseg == 3 && !get) {
			wrong_method(r, "GET, HEAD");
			return;
		}
		if (nseg == 4 && !get && !post) {
			wrong_method(r, "GET, HEAD, POST");
			return;
		}
		if (nseg == 4 && web_parse_id(seg[3], &id) < 0) {
			web_json_error(r, 404, "no such post");
			return;
		}
	} else {
		web_json_error(r, 404, "no such resource");
		return;
	}
	a = auth_request(r, 1);
	if (a == AUTH_LIMITED) {
		web_json_error(r, 429, "too many failed logins: try again in "
		    "%ld second%s", r->retry_after, r->retry_after == 1 ? "" :
		    "s");
		return;
	}
	if (a == AUTH_ERROR) {
		web_json_error(r, 500, "cannot check the credentials");
		return;
	}
	if (a == AUTH_AMBIGUOUS) {
		web_json_error(r, 400, "the request carries the cookies of two "
		    "login sessions (lgsid), one perhaps set by another site "
		    "under the same domain: nothing was done, and both "
		    "sessions have ended (log in again, or send HTTP Basic "
		    "credentials)");
		return;
	}
	if (a != AUTH_OK) {
		r->www_auth = 1;
		web_json_error(r, 401, a == AUTH_BAD ? "wrong user name or "
		    "password" : "credentials needed (HTTP Basic, or a login "
		    "session)");
		return;
	}
	if (list == NULL) {
		api_lists(r);
		return;
	}
	if (!listcfg_name_ok(list)) {
		web_json_error(r, 404, "no such list");
		return;
	}
	if (!auth_may(r, list)) {
		web_json_error(r, 403, "user %s may not see list %s",
		    r->user->name, list);
		return;
	}
	if (nseg == 3)
		api_held(r, list);
	else if (get)
		api_post(r, list, id);
	else
		api_decide(r, list, id);
}

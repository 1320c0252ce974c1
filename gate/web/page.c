/*
 * page.c - the HTML pages of `listgate web`, rendered on the server
 *
 *   GET  /login, POST /login, POST /logout
 *   GET  /lists                      the lists with their held counts
 *   GET  /lists/L?sort=age|score&dir=asc|desc&offset=&limit=
 *                                    held posts: age, sender, subject,
 *                                    score with a colour bar, the top
 *                                    deciding tokens; bulk actions; the
 *                                    list's stats panel
 *   POST /lists/L/bulk               action and the checked ids
 *   GET  /lists/L/held/ID[?raw=1]    one post: headers, deciding tokens,
 *                                    text preview, raw source on request
 *   POST /lists/L/held/ID            action
 *
 * No JavaScript; a little CSS from /style.css.  Every POST must carry
 * the session's CSRF token (and not come from another site: Origin,
 * Sec-Fetch-Site), the login form excepted, which has no session yet
 * and is guarded by the origin check and the failed-login limits.
 * Every text from a post, a request or the database is written through
 * the sanitizer as HTML (masked, then escaped); a post's HTML is never
 * rendered.  Links are built from checked list names, ids and fixed
 * words only.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db/queue.h"
#include "db/qview.h"
#include "gate/app/decide.h"
#include "gate/app/preview.h"
#include "gate/util/buf.h"
#include "gate/util/lglimits.h"
#include "gate/util/sanitize.h"
#include "gate/util/suggest.h"
#include "gate/util/xalloc.h"
#include "gate/web/form.h"
#include "gate/web/webint.h"
#include "listcfg/listcfg.h"

/* characters of decoded text shown on a post's page */
#define PAGE_PREVIEW_CHARS	20000
/* characters of raw source shown (the rest: listgate show).  A page
 * must stay under WEB_MAX_ANSWER (4 MiB) for any post: a masked byte
 * is 8 bytes of HTML (&#xfffd;), so the headers (at most
 * LG_MAX_HEADER_BYTES, 256 KiB) may take 2 MiB, the preview 160 KiB and
 * this 1.25 MiB */
#define PAGE_RAW_CHARS		(160u * 1024u)
/* characters of a header value, a table cell */
#define PAGE_HEADER_CHARS	2000
#define PAGE_CELL_CHARS		80
/* deciding tokens on a post's page, and in a row of the list */
#define PAGE_MAX_TOKENS		50
#define PAGE_ROW_TOKENS		3
/* days in the stats panel */
#define PAGE_STATS_DAYS		14
/* ids in one bulk form */
#define PAGE_MAX_BULK		WEB_MAX_PAGE

/* the post a form names under key (the SHA-256 of the post its page
 * showed) into sha: 1, 0 when absent (a page of a listgate before),
 * -1 when malformed */
static int
form_sha(const char *b, size_t n, const char *key,
    unsigned char sha[WEB_SHA_BYTES])
{
	char v[WEB_SHA_HEX + 2];
	int r;

	if ((r = form_get(b, n, key, v, sizeof(v))) <= 0)
		return r;
	return web_sha_parse(v, sha) < 0 ? -1 : 1;
}

/* --- the frame of every page ---------------------------------------------- */

static void
page_begin(struct web_req *r, const char *title)
{
	r->status = 200;
	r->ctype = "text/html; charset=utf-8";
	buf_reset(&r->out);
	web_printf(r, "<!doctype html>\n<html lang=\"en\"><head><meta "
	    "charset=\"utf-8\"><meta name=\"viewport\" content=\""
	    "width=device-width, initial-scale=1\"><title>");
	web_htmls(r, title);
	web_printf(r, " - listgate</title><link rel=\"stylesheet\" "
	    "href=\"/style.css\"></head>\n<body><header><b>listgate</b> "
	    "<a href=\"/lists\">lists</a>");
	if (r->user != NULL) {
		web_printf(r, "<form method=\"post\" action=\"/logout\">");
		if (r->by_session)
			web_printf(r, "<input type=\"hidden\" name=\"csrf\" "
			    "value=\"%s\">", r->sv.csrf);
		web_htmls(r, r->user->name);
		web_printf(r, " <button>log out</button></form>");
	}
	web_printf(r, "</header>\n<main>\n");
	if (r->sv.flash[0]) {
		web_printf(r, "<p class=\"flash\" id=\"flash\">");
		web_htmls(r, r->sv.flash);
		web_printf(r, "</p>\n");
	}
}

static void
page_end(struct web_req *r)
{
	web_printf(r, "</main></body></html>\n");
}

/* an error page */
static void
page_error(struct web_req *r, int status, const char *msg)
{
	page_begin(r, "error");
	r->status = status;
	web_printf(r, "<p class=\"flash err\">");
	web_htmls(r, msg);
	web_printf(r, "</p>\n");
	page_end(r);
}

/* the answer to a request with two live sessions' cookies */
static void
page_ambiguous(struct web_req *r)
{
	page_error(r, 400, "this request carries the cookies of two login "
	    "sessions (lgsid): one may have been set by another site under "
	    "the same domain.  Nothing was done, and both sessions have "
	    "ended: log in again.");
	web_printf(r, "<p><a href=\"/login\">log in</a></p>\n");
}

/* the CSRF field of a form */
static void
csrf_field(struct web_req *r)
{
	web_printf(r, "<input type=\"hidden\" name=\"csrf\" value=\"%s\">",
	    r->sv.csrf);
}

/* a score's colour bar: green (0) through yellow to red (1) */
static void
score_bar(struct web_req *r, double score)
{
	int w;

	if (!(score >= 0))
		score = 0;
	if (score > 1)
		score = 1;
	w = (int)lround(score * 60);
	web_printf(r, "<svg width=\"60\" height=\"10\" role=\"img\" "
	    "aria-label=\"score %.4f\"><rect width=\"60\" height=\"10\" "
	    "fill=\"#eee\"/><rect width=\"%d\" height=\"10\" "
	    "fill=\"hsl(%d,70%%,45%%)\"/></svg> %.4f", score, w,
	    (int)lround(120 * (1 - score)), score);
}

/* --- login ------------------------------------------------------------------ */

/* 1 when s is a page to go to after a login: /lists/L or
 * /lists/L/held/ID, L a list name and ID a post number (nothing else:
 * never another site, never a path that was not checked), else 0 */
static int
next_ok(const char *s)
{
	char list[LG_MAX_LIST_NAME + 1];
	const char *e;
	int64_t id;
	size_t n;

	if (s == NULL || strncmp(s, "/lists/", 7) != 0)
		return 0;
	s += 7;
	e = strchr(s, '/');
	n = e != NULL ? (size_t)(e - s) : strlen(s);
	if (n == 0 || n > LG_MAX_LIST_NAME)
		return 0;
	memcpy(list, s, n);
	list[n] = '\0';
	if (!listcfg_name_ok(list))
		return 0;
	if (e == NULL)
		return 1;
	return strncmp(e, "/held/", 6) == 0 && web_parse_id(e + 6, &id) == 0;
}

static void
login_form(struct web_req *r, int status, const char *msg)
{
	const char *nx = web_arg(r, "next");
	char fnext[LG_MAX_LIST_NAME + 64];

	page_begin(r, "log in");
	r->status = status;
	if (msg != NULL) {
		web_printf(r, "<p class=\"flash err\" id=\"flash\">");
		web_htmls(r, msg);
		web_printf(r, "</p>\n");
	}
	web_printf(r, "<h1>Log in</h1>\n<form method=\"post\" "
	    "action=\"/login\">");
	/* the page asked for before the login, from the query or from
	 * the form of a login that failed (checked: a list's or a post's
	 * path, nothing to escape) */
	if (!next_ok(nx) && r->body.data != NULL &&
	    form_get((const char *)r->body.data, r->body.len, "next", fnext,
	    sizeof(fnext)) == 1)
		nx = fnext;
	if (next_ok(nx))
		web_printf(r, "<input type=\"hidden\" name=\"next\" "
		    "value=\"%s\">", nx);
	web_printf(r, "<label>User <input name=\"user\" "
	    "autocomplete=\"username\" required></label><label>Password "
	    "<input name=\"password\" type=\"password\" "
	    "autocomplete=\"current-password\" required></label>"
	    "<button id=\"login\">log in</button></form>\n");
	page_end(r);
}

static void
login_post(struct web_req *r)
{
	char user[USERS_MAX_NAME + 2], pw[PWHASH_MAX_PASSWORD + 2], m[128];
	char next[LG_MAX_LIST_NAME + 64];
	const char *b = r->body.data ? (const char *)r->body.data : "";
	enum auth_result a;

	if (!auth_same_origin(r)) {
		page_error(r, 403, "a login from another site");
		return;
	}
	user[0] = pw[0] = '\0';
	if (form_get(b, r->body.len, "user", user, sizeof(user)) < 0 ||
	    form_get(b, r->body.len, "password", pw, sizeof(pw)) < 0) {
		login_form(r, 400, "the form could not be read");
		return;
	}
	next[0] = '\0';
	if (form_get(b, r->body.len, "next", next, sizeof(next)) != 1 ||
	    !next_ok(next))
		snprintf(next, sizeof(next), "/lists");
	a = auth_login(r, user, pw);
	explicit_bzero(pw, sizeof(pw));
	switch (a) {
	case AUTH_OK:
		/* back to the page asked for before the login */
		web_redirect(r, next);
		return;
	case AUTH_LIMITED:
		snprintf(m, sizeof(m), "too many failed logins: try again in "
		    "%ld second%s", r->retry_after, r->retry_after == 1 ? "" :
		    "s");
		login_form(r, 429, m);
		return;
	case AUTH_ERROR:
		login_form(r, 500, "the login could not be checked");
		return;
	default:
		r->user = NULL;
		login_form(r, 401, "wrong user name or password");
		return;
	}
}

/* --- the lists page --------------------------------------------------------- */

struct lists_ctx {
	struct web_req *r;
	int rows;
};

/* web_list_fn: one row */
static void
list_row(const char *list, int64_t held, void *vctx)
{
	struct lists_ctx *c = vctx;

	web_printf(c->r, "<tr><td><a href=\"/lists/%s\">", list);
	web_htmls(c->r, list);
	web_printf(c->r, "</a></td><td class=\"num\">%lld</td></tr>\n",
	    (long long)held);
	c->rows++;
}

static void
page_lists(struct web_req *r)
{
	struct lists_ctx c = { r, 0 };
	struct queue *q;
	char err[1024];
	int rc;

	if ((q = web_db(r, 0)) == NULL)
		return;
	page_begin(r, "lists");
	web_printf(r, "<h1>Lists</h1>\n<table id=\"lists\"><tr><th>list</th>"
	    "<th>held</th></tr>\n");
	rc = web_lists(r, q, list_row, &c, err, sizeof(err));
	if (rc == -1) {
		buf_reset(&r->out);
		page_error(r, 500, "out of memory");
		return;
	}
	if (rc < 0) {
		web_db_failed(r, 0, err);
		return;
	}
	web_printf(r, "</table>\n");
	if (c.rows == 0)
		web_printf(r, "<p>No lists.</p>\n");
	page_end(r);
}

/* --- a list's held posts ------------------------------------------------------ */

/* a whole number argument in [lo, hi], else def */
static int64_t
num_arg(struct web_req *r, const char *name, int64_t def, int64_t lo,
    int64_t hi)
{
	const char *a = web_arg(r, name);
	char *end;
	long long v;

	if (a == NULL || *a < '0' || *a > '9' || strlen(a) > 9)
		return def;
	v = strtoll(a, &end, 10);
	if (*end != '\0' || v < lo || v > hi)
		return def;
	return v;
}

/* the view of a list page: from the query, checked */
struct view {
	int by_score, desc;
	int64_t offset, limit;
};

static void
get_view(struct web_req *r, struct view *v)
{
	const char *s = web_arg(r, "sort"), *d = web_arg(r, "dir");

	v->by_score = s != NULL && strcmp(s, "score") == 0;
	/* age: oldest first; score: highest first, unless dir says */
	v->desc = v->by_score;
	if (d != NULL && strcmp(d, "asc") == 0)
		v->desc = 0;
	else if (d != NULL && strcmp(d, "desc") == 0)
		v->desc = 1;
	v->offset = num_arg(r, "offset", 0, 0, 999999999);
	v->limit = num_arg(r, "limit", WEB_DEFAULT_PAGE, 1, WEB_MAX_PAGE);
}

/* the query string of a view (fixed words and numbers only) */
static void
view_query(const struct view *v, int64_t offset, char *out, size_t outsz)
{
	snprintf(out, outsz, "sort=%s&amp;dir=%s&amp;offset=%lld&amp;"
	    "limit=%lld", v->by_score ? "score" : "age",
	    v->desc ? "desc" : "asc", (long long)offset,
	    (long long)v->limit);
}

/* the view of a post's link, form and way back (first page: a decided
 * post has left the one it was on), as view_query writes it */
static void
view_back(const struct view *v, char *out, size_t outsz)
{
	snprintf(out, outsz, "sort=%s&amp;dir=%s&amp;limit=%lld",
	    v->by_score ? "score" : "age", v->desc ? "desc" : "asc",
	    (long long)v->limit);
}

/* a post's subject, at most max characters, or "(no subject)" */
static void
subject_html(struct web_req *r, const char *subject, size_t max)
{
	const char *sj = *subject ? subject : "(no subject)";

	web_html(r, sj, strlen(sj), max, 0);
}

struct rows_ctx {
	struct web_req *r;
	time_t now;
	const char *list;
	const char *view;	/* the page's view, for its posts' links */
	int n;
};

static int
held_row(const struct qview_row *row, void *vctx)
{
	struct rows_ctx *c = vctx;
	struct web_req *r = c->r;
	struct web_clue cl;
	const char *p = row->clues;
	char age[32];
	int i;

	preview_age(c->now, row->arrived, age, sizeof(age));
	web_printf(r, "<tr id=\"post-%lld\"><td><input type=\"checkbox\" "
	    "name=\"id\" value=\"%lld\" aria-label=\"select post %lld\">",
	    (long long)row->id, (long long)row->id, (long long)row->id);
	/* the post this row shows: the decision takes no other under its
	 * number */
	if (web_sha_hex_ok(row->sha_hex))
		web_printf(r, "<input type=\"hidden\" name=\"post-%lld\" "
		    "value=\"%s\">", (long long)row->id, row->sha_hex);
	web_printf(r, "</td><td class=\"num\">%s</td><td>", age);
	web_html(r, *row->from ? row->from : row->env_sender,
	    strlen(*row->from ? row->from : row->env_sender),
	    PAGE_CELL_CHARS / 2, 0);
	web_printf(r, "</td><td><a href=\"/lists/%s/held/%lld?%s\">", c->list,
	    (long long)row->id, c->view);
	subject_html(r, row->subject, PAGE_CELL_CHARS);
	web_printf(r, "</a><div class=\"why\">");
	for (i = 0; i < PAGE_ROW_TOKENS && web_clue_next(&p, &cl); i++) {
		web_printf(r, "%s", i ? ", " : "");
		web_html(r, cl.tok, cl.toklen, 40, 0);
		if (cl.prob >= 0)
			web_printf(r, " %.3f", cl.prob);
	}
	web_printf(r, "</div></td><td class=\"num\">");
	if (row->scored)
		score_bar(r, row->score);
	else
		web_printf(r, "not scored (oversize)");
	web_printf(r, "</td></tr>\n");
	c->n++;
	return 0;
}

/* queue_row_fn: one post being released (or left so by an approval that
 * stopped), under the list's table */
static int
releasing_row(const struct queue_row *row, void *vctx)
{
	struct rows_ctx *c = vctx;
	struct web_req *r = c->r;
	char age[32];

	if (c->n++ == 0) {
		web_printf(r, "<h2>Being released</h2>\n<p>An approval runs "
		    "the list's release command.  A post still here after a "
		    "few minutes was being released when its approval "
		    "stopped, and may be on the list already: check the "
		    "list's archive, then run <code>");
		web_htmls(r, suggest_cmd());
		web_printf(r, " approve --mark-approved ID</code> on the server "
		    "if it is there, or <code>");
		web_htmls(r, suggest_cmd());
		web_printf(r, " approve --force ID</code> to release "
		    "it.</p>\n<ul id=\"releasing\">\n");
	}
	preview_age(c->now, row->decided, age, sizeof(age));
	web_printf(r, "<li id=\"releasing-%lld\">post <a href=\"/lists/%s/"
	    "held/%lld\">%lld</a>: ", (long long)row->id, c->list,
	    (long long)row->id, (long long)row->id);
	subject_html(r, row->subject, PAGE_CELL_CHARS);
	web_printf(r, ", approved by ");
	web_html(r, row->decided_by ? row->decided_by : "?",
	    strlen(row->decided_by ? row->decided_by : "?"),
	    PAGE_CELL_CHARS / 2, 0);
	web_printf(r, " %s ago</li>\n", age);
	return 0;
}

/* the stats panel: held, approved and rejected per day, as bars */
static void
stats_panel(struct web_req *r, struct queue *q, const char *list)
{
	struct qview_day d[PAGE_STATS_DAYS];
	char err[1024], day[16];
	int64_t max = 1, th = 0, ta = 0, tr = 0;
	int i, x, h;
	struct tm tm;

	if (qview_daily(q, list, PAGE_STATS_DAYS, d, err, sizeof(err)) < 0) {
		web_printf(r, "<p class=\"stats\">(stats not available)</p>\n");
		return;
	}
	for (i = 0; i < PAGE_STATS_DAYS; i++) {
		if (d[i].held > max)
			max = d[i].held;
		if (d[i].approved > max)
			max = d[i].approved;
		if (d[i].rejected > max)
			max = d[i].rejected;
		th += d[i].held;
		ta += d[i].approved;
		tr += d[i].rejected;
	}
	web_printf(r, "<div class=\"stats\" id=\"stats\"><b>Last %d days</b>: "
	    "%lld held, %lld approved, %lld rejected or discarded<br>\n"
	    "<svg class=\"chart\" width=\"%d\" height=\"80\" viewBox=\"0 0 "
	    "%d 80\" role=\"img\" aria-label=\"held, approved and rejected "
	    "posts per day\">", PAGE_STATS_DAYS, (long long)th, (long long)ta,
	    (long long)tr, PAGE_STATS_DAYS * 24 + 4, PAGE_STATS_DAYS * 24 + 4);
	for (i = 0; i < PAGE_STATS_DAYS; i++) {
		int64_t v[3] = { d[i].held, d[i].approved, d[i].rejected };
		int k;

		x = 2 + i * 24;
		for (k = 0; k < 3; k++) {
			h = (int)(v[k] * 60 / max);
			if (v[k] > 0 && h < 1)
				h = 1;
			web_printf(r, "<rect class=\"k%d\" x=\"%d\" y=\"%d\" "
			    "width=\"6\" height=\"%d\"><title>%lld</title>"
			    "</rect>", k + 1, x + k * 7, 62 - h, h,
			    (long long)v[k]);
		}
		/* every other day, today included */
		if (gmtime_r(&d[i].day, &tm) != NULL &&
		    (PAGE_STATS_DAYS - 1 - i) % 2 == 0) {
			strftime(day, sizeof(day), "%d", &tm);
			web_printf(r, "<text x=\"%d\" y=\"76\" font-size=\"10\">"
			    "%s</text>", x + 3, day);
		}
	}
	web_printf(r, "</svg><br><svg width=\"10\" height=\"10\"><rect "
	    "class=\"k1\" width=\"10\" height=\"10\"/></svg> held "
	    "<svg width=\"10\" height=\"10\"><rect class=\"k2\" width=\"10\" "
	    "height=\"10\"/></svg> approved <svg width=\"10\" height=\"10\">"
	    "<rect class=\"k3\" width=\"10\" height=\"10\"/></svg> rejected "
	    "or discarded (per day, UTC)</div>\n");
}

static void
page_list(struct web_req *r, const char *list)
{
	struct view v;
	struct rows_ctx c;
	struct queue *q;
	char err[1024], qs[200], back[200], title[LG_MAX_LIST_NAME + 16];
	int64_t total;
	enum qview_sort sort;

	get_view(r, &v);
	sort = v.by_score ? (v.desc ? QVIEW_SCORE_DESC : QVIEW_SCORE_ASC) :
	    (v.desc ? QVIEW_NEWEST : QVIEW_OLDEST);
	if ((q = web_db(r, 0)) == NULL)
		return;
	snprintf(title, sizeof(title), "list %s", list);
	page_begin(r, title);
	web_printf(r, "<h1>List %s: held posts</h1>\n", list);
	stats_panel(r, q, list);
	view_query(&v, v.offset, qs, sizeof(qs));
	/* autocomplete off: Back to this page after the form went makes
	 * the browser load it anew (no-store) and check again, in order,
	 * the boxes that were checked, which are then other posts' (the
	 * decided ones have left the page) */
	web_printf(r, "<form method=\"post\" action=\"/lists/%s/bulk?%s\" "
	    "id=\"bulk\" autocomplete=\"off\">", list, qs);
	csrf_field(r);
	/* the form's first button decides nothing: Enter in a checkbox
	 * submits the form with its first button that can submit (a
	 * disabled one is passed over), which would otherwise be approve,
	 * releasing every checked post to the list */
	web_printf(r, "<button name=\"action\" value=\"none\" hidden "
	    "aria-hidden=\"true\" tabindex=\"-1\" id=\"nodefault\">"
	    "</button>");
	web_printf(r, "<p>With the checked posts: <button name=\"action\" "
	    "value=\"approve\">approve</button><button name=\"action\" "
	    "value=\"reject\">reject</button><button name=\"action\" "
	    "value=\"discard\">discard</button></p>\n");
	/* a new order starts at its first page, with the page size kept */
	web_printf(r, "<table id=\"held\"><tr><th></th><th><a href=\"?sort=age"
	    "&amp;dir=%s&amp;limit=%lld\">age</a></th><th>sender</th><th>"
	    "subject <span class=\"why\">(deciding tokens)</span></th><th><a "
	    "href=\"?sort=score&amp;dir=%s&amp;limit=%lld\">score</a></th>"
	    "</tr>\n", !v.by_score && !v.desc ? "desc" : "asc",
	    (long long)v.limit, v.by_score && v.desc ? "asc" : "desc",
	    (long long)v.limit);
	view_back(&v, back, sizeof(back));
	c.r = r;
	c.now = time(NULL);
	c.list = list;
	c.view = back;
	c.n = 0;
	if (qview_page(q, list, sort, v.offset, v.limit, held_row, &c, &total,
	    err, sizeof(err)) < 0) {
		web_db_failed(r, 0, err);
		return;
	}
	if (total == 0 && !web_known(r->srv, list)) {
		page_error(r, 404, "no such list");
		return;
	}
	web_printf(r, "</table></form>\n<p class=\"pager\">");
	if (c.n == 0 && total > 0)
		/* past the end (decided meanwhile, an old link): not "no
		 * held posts" while there are */
		web_printf(r, "No posts on this page: the list has %lld held, "
		    "on the pages before it.", (long long)total);
	else if (c.n == 0)
		web_printf(r, "No held posts here.");
	else
		web_printf(r, "Posts %lld to %lld of %lld.",
		    (long long)v.offset + 1, (long long)v.offset + c.n,
		    (long long)total);
	if (v.offset > 0) {
		int64_t prev = v.offset > v.limit ? v.offset - v.limit : 0;

		/* past the end, the previous page is the last one with
		 * posts, not another empty one */
		if (c.n == 0 && total > 0 && prev >= total)
			prev = (total - 1) / v.limit * v.limit;
		view_query(&v, prev, qs, sizeof(qs));
		web_printf(r, " <a href=\"?%s\" rel=\"prev\">previous</a>", qs);
	}
	if (v.offset + c.n < total) {
		view_query(&v, v.offset + v.limit, qs, sizeof(qs));
		web_printf(r, " <a href=\"?%s\" rel=\"next\">next</a>", qs);
	}
	web_printf(r, "</p>\n");
	/* the posts being released: not to decide here, but a moderator
	 * must see one whose approval stopped */
	c.n = 0;
	if (queue_list(q, "releasing", list, releasing_row, &c, err,
	    sizeof(err)) < 0)
		web_printf(r, "<p>(the posts being released could not be "
		    "read)</p>\n");
	else if (c.n > 0)
		web_printf(r, "</ul>\n");
	page_end(r);
}

/* --- one post ----------------------------------------------------------------- */

static void
header_html(const char *name, const unsigned char *v, size_t n, void *ctx)
{
	struct web_req *r = ctx;

	web_printf(r, "<dt>");
	web_html(r, name, strlen(name), 100, 0);
	web_printf(r, "</dt><dd>");
	web_html(r, (const char *)v, n, PAGE_HEADER_CHARS, 0);
	web_printf(r, "</dd>\n");
}

static void
page_post(struct web_req *r, const char *list, int64_t id)
{
	struct queue_row row;
	struct queue *q;
	struct web_clue cl;
	struct buf text = BUF_INIT(PAGE_PREVIEW_CHARS * 4);
	const char *p, *raw = web_arg(r, "raw");
	char err[1024], when[40], title[64], back[200];
	struct view v;
	int found, n;

	if ((q = web_db(r, 0)) == NULL)
		return;
	/* another list's post is not read at all (web_post_in_list) */
	found = web_post_in_list(q, list, id, err, sizeof(err));
	if (found > 0)
		found = queue_get_head(q, id, WEB_MAX_POST_READ, &row, err,
		    sizeof(err));
	if (found < 0) {
		web_db_failed(r, 0, err);
		return;
	}
	if (found == 0 || strcmp(row.list, list) != 0) {
		if (found)
			queue_row_free(&row);
		page_error(r, 404, "no such post in this list");
		return;
	}
	/* the list's view this post was opened from: its link back and
	 * the decision's way back keep it */
	get_view(r, &v);
	view_back(&v, back, sizeof(back));
	snprintf(title, sizeof(title), "post %lld", (long long)id);
	page_begin(r, title);
	web_printf(r, "<h1>");
	subject_html(r, row.subject, 200);
	web_printf(r, "</h1>\n<p>Post %lld of list <a href=\"/lists/%s?%s\">"
	    "%s</a>, ", (long long)id, list, back, list);
	if (strcmp(row.verdict, "oversize") == 0)
		web_printf(r, "not scored (oversize: larger than the list's "
		    "max_post_bytes)");
	else {
		web_printf(r, "score ");
		score_bar(r, row.score);
		web_printf(r, " (");
		web_htmls(r, row.verdict);
		web_printf(r, ")");
	}
	web_printf(r, ", %lld bytes.</p>\n", (long long)row.size);
	if (strcmp(row.status, "held") == 0) {
		char hex[WEB_SHA_HEX + 1];

		web_sha_hex(row.raw_sha256, hex);
		web_printf(r, "<form method=\"post\" action=\"/lists/%s/held/"
		    "%lld?%s\" id=\"decide\">", list, (long long)id, back);
		csrf_field(r);
		/* the post shown: the decision takes no other under its
		 * number */
		web_printf(r, "<input type=\"hidden\" name=\"post\" "
		    "value=\"%s\">", hex);
		web_printf(r, "<button name=\"action\" value=\"approve\" "
		    "id=\"approve\">approve</button><button name=\"action\" "
		    "value=\"reject\" id=\"reject\">reject</button><button "
		    "name=\"action\" value=\"discard\" id=\"discard\">discard"
		    "</button></form>\n");
	} else {
		web_iso_time(row.decided, when, sizeof(when));
		web_printf(r, "<p class=\"flash\" id=\"status\">");
		web_htmls(r, row.status);
		web_printf(r, " by ");
		web_htmls(r, row.decided_by);
		web_printf(r, " at %s</p>\n", when);
	}
	web_printf(r, "<h2>Why it was held</h2>\n<table id=\"tokens\"><tr>"
	    "<th>token</th><th>probability</th><th>spam</th><th>ham</th>"
	    "</tr>\n");
	for (p = row.clues, n = 0; n < PAGE_MAX_TOKENS &&
	    web_clue_next(&p, &cl); n++) {
		web_printf(r, "<tr><td>");
		web_html(r, cl.tok, cl.toklen, 100, 0);
		if (cl.prob >= 0)
			web_printf(r, "</td><td class=\"num\">%.4f</td><td "
			    "class=\"num\">%ld</td><td class=\"num\">%ld</td>"
			    "</tr>\n", cl.prob, cl.spam, cl.ham);
		else
			web_printf(r, "</td><td></td><td></td><td></td></tr>\n");
	}
	web_printf(r, "</table>\n");
	if (n == 0)
		web_printf(r, "<p>(no deciding tokens recorded)</p>\n");
	web_printf(r, "<h2>Headers</h2>\n<dl class=\"hdr\">\n");
	web_headers(row.raw, row.raw_len, header_html, r);
	web_printf(r, "</dl>\n<h2>Text</h2>\n");
	if (row.raw_len < (size_t)row.size) {
		web_printf(r, "<p id=\"cut\">Only the first %u MiB of this "
		    "post were read for this page: <code>",
		    (unsigned)(WEB_MAX_POST_READ >> 20));
		web_htmls(r, suggest_cmd());
		web_printf(r, " show %lld</code> prints it whole.</p>\n",
		    (long long)id);
	}
	web_printf(r, "<pre id=\"preview\">");
	if (preview_text(row.raw, row.raw_len, &text) < 0)
		buf_add_trunc(&text, "\n(preview incomplete: out of memory)",
		    36);
	web_html(r, text.data ? (const char *)text.data : "", text.len,
	    PAGE_PREVIEW_CHARS, SANITIZE_KEEP_NL);
	web_printf(r, "</pre>\n");
	if (raw != NULL && strcmp(raw, "1") == 0) {
		web_printf(r, "<h2>Source</h2>\n<pre id=\"raw\">");
		web_html(r, (const char *)row.raw, row.raw_len,
		    PAGE_RAW_CHARS, SANITIZE_KEEP_NL);
		web_printf(r, "</pre>\n");
	} else
		web_printf(r, "<p><a href=\"/lists/%s/held/%lld?%s&amp;raw=1\" "
		    "id=\"rawlink\">show the raw source</a></p>\n", list,
		    (long long)id, back);
	page_end(r);
	buf_free(&text);
	queue_row_free(&row);
}

/* --- decisions from pages --------------------------------------------------- */

/* the checks of every page POST: 1 go on, 0 answered */
static int
post_ok(struct web_req *r)
{
	char token[SESSION_HEX + 1];
	const char *b = r->body.data ? (const char *)r->body.data : "";

	if (!auth_same_origin(r)) {
		page_error(r, 403, "a request from another site");
		return 0;
	}
	if (form_get(b, r->body.len, "csrf", token, sizeof(token)) != 1 ||
	    !auth_csrf_ok(r, token)) {
		page_error(r, 403, "the form is missing its CSRF token (or "
		    "the session changed): reload the page and try again");
		return 0;
	}
	return 1;
}

/* the action of a form: its status word, or NULL after a 400 */
static const char *
form_action(struct web_req *r)
{
	char action[32];
	const char *b = r->body.data ? (const char *)r->body.data : "", *st;
	int got = form_get(b, r->body.len, "action", action, sizeof(action));

	if (got == FORM_TWICE) {
		page_error(r, 400, "the form gives its action twice (nothing "
		    "was decided)");
		return NULL;
	}
	if (got != 1 || (st = decide_status(action)) == NULL) {
		page_error(r, 400, "bad action: want approve, reject or "
		    "discard");
		return NULL;
	}
	return st;
}

static void
post_decide(struct web_req *r, const char *list, int64_t id)
{
	struct queue_decided res;
	struct queue *q;
	struct view v;
	const char *st;
	char msg[1200], back[300];
	int code;

	const char *b = r->body.data ? (const char *)r->body.data : "";
	unsigned char sha[WEB_SHA_BYTES];
	int got;

	if (!post_ok(r) || (st = form_action(r)) == NULL)
		return;
	if ((got = form_sha(b, r->body.len, "post", sha)) < 0) {
		page_error(r, 400, "the form could not be read (nothing was "
		    "decided)");
		return;
	}
	if ((q = web_db(r, 0)) == NULL)
		return;
	code = web_decide(r, q, list, id, got ? sha : NULL, st, NULL, &res,
	    msg, sizeof(msg));
	/* a decision that failed is answered as one, with its status (no
	 * such post 404, the release command 502, the database 500), not
	 * as the way back to the list a success takes; a post decided
	 * before (409) is said on the list's page */
	if (code != 200 && code != 409) {
		page_error(r, code, msg);
		return;
	}
	auth_flash(r, msg);
	/* back to the view the post was opened from, as a bulk form goes */
	get_view(r, &v);
	snprintf(back, sizeof(back), "/lists/%s?sort=%s&dir=%s&limit=%lld",
	    list, v.by_score ? "score" : "age", v.desc ? "desc" : "asc",
	    (long long)v.limit);
	web_redirect(r, back);
}

static void
post_bulk(struct web_req *r, const char *list)
{
	struct queue_decided res;
	struct queue *q;
	struct form_iter it;
	struct view v;
	const char *st, *b = r->body.data ? (const char *)r->body.data : "";
	char k[32], val[256], msg[1400], first[1200], back[300];
	struct shown {
		int64_t id;
		unsigned char sha[WEB_SHA_BYTES];
	} *shown;
	size_t i, nshown = 0;
	int64_t id;
	int code, n = 0, ok = 0, conflict = 0, moved = 0, bad = 0, fr;
	int unasked = 0, quitting, dbfail = 0, undecided = 0;
	int busy = 0, unlocked = 0;

	if (!post_ok(r))
		return;
	/* Enter in a checkbox (the form's first button): nothing decided,
	 * and the page says how to decide */
	if (form_get(b, r->body.len, "action", k, sizeof(k)) == 1 &&
	    strcmp(k, "none") == 0) {
		auth_flash(r, "nothing was decided: Enter does not decide "
		    "here; check the posts, then press approve, reject or "
		    "discard");
		get_view(r, &v);
		snprintf(back, sizeof(back), "/lists/%s?sort=%s&dir=%s&"
		    "limit=%lld", list, v.by_score ? "score" : "age",
		    v.desc ? "desc" : "asc", (long long)v.limit);
		web_redirect(r, back);
		return;
	}
	if ((st = form_action(r)) == NULL)
		return;
	/* the whole form is read before anything is decided: one that
	 * cannot be read is a 400 with nothing decided, never one that
	 * has decided the posts before its bad part */
	/* and its post-ID pairs kept, each one checked (the posts the page
	 * showed: one pass, however long the form) */
	if ((shown = xcalloc(PAGE_MAX_BULK, sizeof(*shown))) == NULL) {
		page_error(r, 500, "out of memory");
		return;
	}
	form_init(&it, b, r->body.len);
	while ((fr = form_next(&it, k, sizeof(k), val, sizeof(val))) == 1) {
		if (strncmp(k, "post-", 5) != 0)
			continue;
		if (nshown == PAGE_MAX_BULK || web_parse_id(k + 5,
		    &shown[nshown].id) < 0 || web_sha_parse(val,
		    shown[nshown].sha) < 0) {
			fr = -1;
			break;
		}
		/* a post named twice: which one the page showed is
		 * anyone's guess */
		for (i = 0; i < nshown && shown[i].id != shown[nshown].id; i++)
			;
		if (i < nshown) {
			fr = -1;
			break;
		}
		nshown++;
	}
	if (fr < 0) {
		page_error(r, 400, "the form could not be read (nothing was "
		    "decided)");
		xfree(shown);
		return;
	}
	if ((q = web_db(r, 0)) == NULL)
		goto out;
	first[0] = '\0';
	form_init(&it, b, r->body.len);
	while ((fr = form_next(&it, k, sizeof(k), val, sizeof(val))) == 1) {
		if (strcmp(k, "id") != 0)
			continue;
		if (web_parse_id(val, &id) < 0 || ++n > PAGE_MAX_BULK) {
			bad++;
			continue;
		}
		/* the database failed at an earlier post: the rest stay
		 * as they are, and the answer counts them */
		if (dbfail) {
			undecided++;
			continue;
		}
		/* the server is stopping: the posts left stay as they are */
		pthread_mutex_lock(&r->srv->mu);
		quitting = r->srv->quitting;
		pthread_mutex_unlock(&r->srv->mu);
		if (quitting) {
			unasked++;
			continue;
		}
		/* a post's lock stayed held for the list's timeout (a train
		 * of the list): the list's other posts would each wait as
		 * long, and the form for as many timeouts */
		if (busy) {
			unlocked++;
			continue;
		}
		/* the post-ID of the id (one at most, checked above) */
		for (i = 0; i < nshown && shown[i].id != id; i++)
			;
		code = web_decide(r, q, list, id, i < nshown ?
		    shown[i].sha : NULL, st, NULL, &res, msg, sizeof(msg));
		if (code == 200)
			ok++;
		else {
			/* a 409 without the post's status is one whose number
			 * went to another post: not decided at all */
			if (code == 409 && res.old[0] == '\0')
				moved++;
			else if (code == 409)
				conflict++;
			else if (code == 503) {
				/* not decided: its lock stayed held, or the
				 * server is stopping */
				pthread_mutex_lock(&r->srv->mu);
				if (r->srv->quitting)
					unasked++;
				else {
					busy = 1;
					unlocked++;
				}
				pthread_mutex_unlock(&r->srv->mu);
			} else
				bad++;
			if (first[0] == '\0' || code == 500)
				snprintf(first, sizeof(first), "%.1100s", msg);
			if (code == 500) {
				dbfail = 1;
				continue;
			}
			if ((q = web_db(r, 0)) == NULL)
				goto out;
		}
	}
	{
		size_t l;

		l = (size_t)snprintf(msg, sizeof(msg), "%d post%s %s", ok,
		    ok == 1 ? "" : "s", st);
		if (conflict && l < sizeof(msg))
			l += (size_t)snprintf(msg + l, sizeof(msg) - l,
			    "; %d already decided", conflict);
		if (moved && l < sizeof(msg))
			l += (size_t)snprintf(msg + l, sizeof(msg) - l,
			    "; %d not the post%s the page showed", moved,
			    moved == 1 ? "" : "s");
		if (bad && l < sizeof(msg))
			l += (size_t)snprintf(msg + l, sizeof(msg) - l,
			    "; %d failed", bad);
		if (unasked && l < sizeof(msg))
			l += (size_t)snprintf(msg + l, sizeof(msg) - l,
			    "; %d not decided: the server is stopping",
			    unasked);
		if (undecided && l < sizeof(msg))
			l += (size_t)snprintf(msg + l, sizeof(msg) - l,
			    "; %d not decided: the database failed",
			    undecided);
		if (unlocked && l < sizeof(msg))
			l += (size_t)snprintf(msg + l, sizeof(msg) - l,
			    "; %d not decided: the list was busy", unlocked);
		if (first[0] && l < sizeof(msg))
			snprintf(msg + l, sizeof(msg) - l, " (%s)", first);
	}
	if (n == 0)
		snprintf(msg, sizeof(msg), "no posts were checked");
	/* the database failed: said here, with its status, as for one
	 * post (post_decide), not left for a list's page that would need
	 * the database too (its 503 showed nothing of what the form did
	 * and the message was lost with it) */
	if (dbfail) {
		page_error(r, 500, msg);
		goto out;
	}
	auth_flash(r, msg);
	/* back to the view we came from (its first page: the posts
	 * decided have left it) */
	get_view(r, &v);
	snprintf(back, sizeof(back), "/lists/%s?sort=%s&dir=%s&limit=%lld",
	    list, v.by_score ? "score" : "age", v.desc ? "desc" : "asc",
	    (long long)v.limit);
	web_redirect(r, back);
out:
	xfree(shown);
}

/* --- routing -------------------------------------------------------------------- */

static void
not_allowed(struct web_req *r, const char *allow)
{
	r->allow = allow;
	page_error(r, 405, "method not allowed here");
}

void
page_handle(struct web_req *r, char **seg, int nseg)
{
	int get = strcmp(r->method, "GET") == 0 ||
	    strcmp(r->method, "HEAD") == 0;
	int post = strcmp(r->method, "POST") == 0;
	const char *list = NULL, *e;
	enum auth_result a;
	int64_t id = 0;

	if (nseg == 0) {
		web_redirect(r, "/lists");
		return;
	}
	if (nseg == 1 && strcmp(seg[0], "login") == 0) {
		if (post)
			login_post(r);
		else if (get) {
			a = auth_request(r, 0);
			if (a == AUTH_OK)
				web_redirect(r, "/lists");
			else if (a == AUTH_AMBIGUOUS)
				/* the login ends both */
				login_form(r, 200, "this browser sent the "
				    "cookies of two login sessions (one may "
				    "have been set by another site under the "
				    "same domain): log in again");
			else if ((e = web_arg(r, "ended")) != NULL &&
			    strcmp(e, "1") == 0)
				login_form(r, 200, "you are not logged in (your "
				    "session ended): nothing was decided.  Log "
				    "in, then decide again.");
			else
				login_form(r, 200, NULL);
		} else
			not_allowed(r, "GET, HEAD, POST");
		return;
	}
	/* every other page needs a session */
	if (nseg == 1 && strcmp(seg[0], "logout") == 0) {
		if (!post) {
			not_allowed(r, "POST");
			return;
		}
		a = auth_request(r, 0);
		if (a == AUTH_AMBIGUOUS) {
			page_ambiguous(r);
			return;
		}
		if (a == AUTH_OK && post_ok(r))
			auth_logout(r);
		else if (r->status == 403)
			return;
		web_redirect(r, "/login");
		return;
	}
	if (strcmp(seg[0], "lists") != 0 || nseg > 4 ||
	    (nseg >= 3 && strcmp(seg[2], nseg == 3 ? "bulk" : "held") != 0) ||
	    (nseg == 3 && strcmp(seg[2], "bulk") != 0)) {
		page_error(r, 404, "no such page");
		return;
	}
	if (nseg >= 2)
		list = seg[1];
	if (nseg == 4 && web_parse_id(seg[3], &id) < 0) {
		page_error(r, 404, "no such post");
		return;
	}
	if ((nseg <= 2 && !get) || (nseg == 3 && !post) ||
	    (nseg == 4 && !get && !post)) {
		not_allowed(r, nseg <= 2 ? "GET, HEAD" : nseg == 3 ? "POST" :
		    "GET, HEAD, POST");
		return;
	}
	a = auth_request(r, 0);
	if (a == AUTH_ERROR) {
		page_error(r, 500, "cannot check the session");
		return;
	}
	if (a == AUTH_AMBIGUOUS) {
		page_ambiguous(r);
		return;
	}
	if (a != AUTH_OK) {
		/* a decision without a session (it ended, or the server
		 * restarted) decides nothing: the login page says so, not
		 * a bare login form that leaves the moderator thinking it
		 * went through */
		if (post)
			web_redirect(r, "/login?ended=1");
		else {
			/* a list's or a post's page: the login goes back to
			 * it */
			char next[LG_MAX_LIST_NAME + 64];

			if (list != NULL && nseg == 2)
				snprintf(next, sizeof(next), "/lists/%s", list);
			else if (list != NULL && nseg == 4)
				snprintf(next, sizeof(next), "/lists/%s/held/%lld",
				    list, (long long)id);
			else
				next[0] = '\0';
			if (next_ok(next)) {
				char loc[LG_MAX_LIST_NAME + 80];

				snprintf(loc, sizeof(loc), "/login?next=%s", next);
				web_redirect(r, loc);
			} else
				web_redirect(r, "/login");
		}
		return;
	}
	if (list == NULL) {
		page_lists(r);
		return;
	}
	if (!listcfg_name_ok(list)) {
		page_error(r, 404, "no such list");
		return;
	}
	if (!auth_may(r, list)) {
		page_error(r, 403, "you may not see this list");
		return;
	}
	if (nseg == 2)
		page_list(r, list);
	else if (nseg == 3)
		post_bulk(r, list);
	else if (get)
		page_post(r, list, id);
	else
		post_decide(r, list, id);
}

/*
 * tok_post.c - tokenize a whole post: mail_walk events to tokens
 *
 * The post is hostile; mail_walk bounds it and hands over decoded
 * UTF-8, tok.c bounds every token.  Fails (-1) only when memory runs
 * out.  Never logs, never exits.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gate/received.h"
#include "gate/tok.h"

struct post_ctx {
	const struct tok_opts *o;
	struct toklist *tl;
	struct received_chain rc;	/* the walk to the first untrusted hop */
};

void
tok_opts_default(struct tok_opts *o)
{
	mail_limits_default(&o->lim);
	tok_opts_words(o);
}

/* add "prefix" + s (lower-cased ASCII, at most 60 bytes): 0 or -1 */
static int
add_tag(struct toklist *tl, const char *prefix, const char *s)
{
	char t[128];
	size_t n, i, np = strlen(prefix);

	n = strlen(s);
	if (n == 0)
		return 0;
	if (n > 60)
		n = 60;
	if (np + n >= sizeof(t))
		return 0;
	memcpy(t, prefix, np);
	for (i = 0; i < n; i++)
		t[np + i] = (char)((s[i] >= 'A' && s[i] <= 'Z') ?
		    s[i] - 'A' + 'a' : s[i]);
	return toklist_add(tl, t, np + n) < 0 ? -1 : 0;
}

/* "part:ext:EXT" from a file name's last extension */
static int
file_ext(struct toklist *tl, const char *fn)
{
	const char *dot = strrchr(fn, '.');
	char ext[16];
	size_t n;

	if (dot == NULL || dot[1] == '\0')
		return add_tag(tl, "part:ext:", "none");
	n = strlen(dot + 1);
	if (n >= sizeof(ext))
		return add_tag(tl, "part:ext:", "long");
	memcpy(ext, dot + 1, n + 1);
	return add_tag(tl, "part:ext:", ext);
}

/* the mail_walk callback */
static int
post_event(const struct mail_event *ev, void *vctx)
{
	struct post_ctx *c = vctx;
	size_t n0, n;

	switch (ev->kind) {
	case MAIL_HEADER:
		if (c->o->src && ev->depth == 0 &&
		    strcasecmp(ev->name, "received") == 0 &&
		    received_chain_add(&c->rc, ev->data, ev->len) == 1 &&
		    received_tokens(&c->rc, c->tl) < 0)
			return -1;
		return tok_header(c->o, ev->name, ev->data, ev->len, ev->depth,
		    c->tl);
	case MAIL_TEXT:
		n0 = toklist_count(c->tl);
		if (ev->ctype != NULL && add_tag(c->tl, "ct:", ev->ctype) < 0)
			return -1;
		if (ev->charset != NULL && add_tag(c->tl, "ct:charset:",
		    ev->charset) < 0)
			return -1;
		if (!c->o->marks)
			return tok_text(c->o, "", 0, ev->data, ev->len, c->tl);
		return tok_text_part(c->o, ev->data, ev->len, ev->ctype !=
		    NULL && strcmp(ev->ctype, "text/html") == 0, n0, c->tl);
	case MAIL_HIDDEN:
		/* what the reader is not shown: words of its own, not
		 * the shown words' votes (hidden ham words, hidden
		 * letters inside a word), and outside the vote budget */
		n0 = toklist_count(c->tl);
		if (tok_text(c->o, "hidden:", 0, ev->data, ev->len,
		    c->tl) < 0)
			return -1;
		for (n = toklist_count(c->tl); c->o->marks && n0 < n; n0++) {
			toklist_set_tail(c->tl, n0);
			toklist_set_tail_words(c->tl, n0);
		}
		return 0;
	case MAIL_PART:
		if (ev->ctype != NULL && add_tag(c->tl, "part:", ev->ctype) < 0)
			return -1;
		if (ev->filename != NULL && ev->filename[0] != '\0')
			return file_ext(c->tl, ev->filename);
		return 0;
	case MAIL_ANOMALY:
		return add_tag(c->tl, "anomaly:", (const char *)ev->data);
	}
	return 0;
}

int
tok_post(const unsigned char *msg, size_t len, const struct tok_opts *o,
    struct toklist *out)
{
	struct post_ctx c;

	toklist_reset(out);
	c.o = o;
	c.tl = out;
	received_chain_init(&c.rc, o->trust);
	if (mail_walk(msg, len, &o->lim, post_event, &c) < 0)
		return -1;
	/* every hop trusted (or too many): say so once the header is over */
	if (o->src && (c.rc.state == RECEIVED_WALKING ||
	    c.rc.state == RECEIVED_TOO_DEEP))
		return received_tokens(&c.rc, out);
	return 0;
}

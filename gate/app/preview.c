/*
 * preview.c - a post's decoded text and age for moderators (show, held,
 * web)
 *
 * Input is hostile and walked by mail_walk with the default limits;
 * the output buffer's max bounds the text.  Never logs or exits.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "gate/app/preview.h"
#include "gate/mail/mail.h"

/* the collector for mail_walk */
struct preview {
	struct buf *text;
	size_t nparts;
	int nomem;		/* text lost for lack of memory */
};

/* append a piece, cut at the buffer's bound */
static void
add(struct preview *p, const void *s, size_t n)
{
	if (buf_add_trunc(p->text, s, n) < 0)
		p->nomem = 1;
}

/* mail_walk callback: keep the decoded text of the text parts */
static int
preview_cb(const struct mail_event *ev, void *vctx)
{
	struct preview *p = vctx;

	if (ev->kind == MAIL_TEXT) {
		if (p->nparts++ > 0)
			add(p, "\n-- next part --\n", 17);
		add(p, ev->data, ev->len);
	} else if (ev->kind == MAIL_PART) {
		char line[600];

		snprintf(line, sizeof(line), "\n[attachment %s %.400s]\n",
		    ev->ctype ? ev->ctype : "?",
		    ev->filename ? ev->filename : "");
		add(p, line, strlen(line));
	}
	return 0;
}

int
preview_text(const unsigned char *raw, size_t len, struct buf *out)
{
	struct mail_limits lim;
	struct preview pv;

	memset(&pv, 0, sizeof(pv));
	pv.text = out;
	mail_limits_default(&lim);
	if (mail_walk(raw, len, &lim, preview_cb, &pv) < 0 || pv.nomem)
		return -1;
	return 0;
}

void
preview_age(time_t now, time_t t, char *out, size_t outsz)
{
	long d = (long)(now - t);

	if (d < 0)
		d = 0;
	if (d < 120)
		snprintf(out, outsz, "%lds", d);
	else if (d < 2 * 3600)
		snprintf(out, outsz, "%ldm", d / 60);
	else if (d < 2 * 86400)
		snprintf(out, outsz, "%ldh", d / 3600);
	else
		snprintf(out, outsz, "%ldd", d / 86400);
}

/*
 * preview.h - the decoded text of a post, and its age, for a moderator
 * to read: `listgate show`, `listgate held` and the web page show the
 * same
 *
 * The post is hostile: it is walked by the bounded mail walker (text
 * parts decoded to UTF-8, HTML turned to text, attachments named, not
 * shown).  The text is not masked: every output sanitizes it
 * (gate/util/sanitize.h).  Never logs or exits.
 */
#ifndef LG_PREVIEW_H
#define LG_PREVIEW_H

#include <stddef.h>
#include <time.h>

#include "gate/util/buf.h"

/*
 * Append the text parts of the post (len bytes at raw) to out, a
 * separator between parts and a line per attachment, cut at out's max.
 * Returns 0, or -1 when memory ran out (what fitted is in out).
 */
int preview_text(const unsigned char *raw, size_t len, struct buf *out);

/*
 * How long ago t was at now, as the held listing and the web page show
 * it: "42s", "17m", "5h", "3d" (a t after now is "0s").
 */
void preview_age(time_t now, time_t t, char *out, size_t outsz);

#endif

/*
 * preview.h - the decoded text of a post, for a moderator to read:
 * `listgate show` and the web page show the same preview
 *
 * The post is hostile: it is walked by the bounded mail walker (text
 * parts decoded to UTF-8, HTML turned to text, attachments named, not
 * shown).  The text is not masked: every output sanitizes it
 * (gate/util/sanitize.h).  Never logs or exits.
 */
#ifndef LG_PREVIEW_H
#define LG_PREVIEW_H

#include <stddef.h>

#include "gate/util/buf.h"

/*
 * Append the text parts of the post (len bytes at raw) to out, a
 * separator between parts and a line per attachment, cut at out's max.
 * Returns 0, or -1 when memory ran out (what fitted is in out).
 */
int preview_text(const unsigned char *raw, size_t len, struct buf *out);

#endif

/*
 * html.h - HTML to plain text for the tokenizer
 */
#ifndef LG_HTML_H
#define LG_HTML_H

#include <stddef.h>

struct buf;

/* HTML (UTF-8) to text, appended to out: tags, script, style and
 * comments dropped, entities decoded, href/src URLs and alt/title text
 * kept as words.  0, or -1 when out refuses to grow. */
int html_to_text(const unsigned char *in, size_t n, struct buf *out);

#endif

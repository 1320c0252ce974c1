/*
 * html.h - HTML to plain text for the tokenizer
 */
#ifndef LG_HTML_H
#define LG_HTML_H

#include <stddef.h>

struct buf;

/* html_to_text(): out was full, the text was cut there */
#define HTML_CUT	1

/* HTML (UTF-8) to text, appended to out: tags, script, style and
 * comments dropped, entities decoded, href/src URLs and alt/title text
 * kept as words.  0, HTML_CUT (cut between characters where out
 * reached its max), or -1 only when out of memory. */
int html_to_text(const unsigned char *in, size_t n, struct buf *out);

/*
 * The charset an HTML document declares in its first 4 KiB:
 * <meta charset="X"> or <meta http-equiv=... content="...; charset=X">.
 * Copies it, lower case, into cs (cssz bytes).  1 found, 0 not.
 */
int html_meta_charset(const unsigned char *in, size_t n, char *cs,
    size_t cssz);

#endif

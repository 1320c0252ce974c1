/*
 * html.h - HTML to plain text for the tokenizer
 */
#ifndef LG_HTML_H
#define LG_HTML_H

#include <stddef.h>

struct buf;

/* html_to_text()'s result, bits: out was full, the text was cut there */
#define HTML_CUT	1
/* ... some text was in hidden elements (and went to hidden) */
#define HTML_HIDDEN	2

/* HTML (UTF-8) to text, appended to out: tags, script, style and
 * comments dropped, entities decoded, href/src URLs and alt/title text
 * kept as words.  The text of elements a reader does not see (hidden by
 * their style or the hidden attribute) is appended to hidden instead,
 * each element's on a line of its own, when hidden is not NULL (when it
 * is, it stays in out); a full hidden buffer drops the rest of it.
 * 0, or the bits HTML_CUT (out was cut between characters where it
 * reached its max) and HTML_HIDDEN; -1 only when out of memory. */
int html_to_text(const unsigned char *in, size_t n, struct buf *out,
    struct buf *hidden);

/*
 * The charset an HTML document declares in its first 4 KiB:
 * <meta charset="X"> or <meta http-equiv=... content="...; charset=X">.
 * Copies it, lower case, into cs (cssz bytes).  1 found, 0 not.  As in
 * a browser, a label of UTF-16 gives "utf-8" (the meta itself was
 * ASCII), and one of another Unicode form whose bytes are not ASCII
 * (UTF-32, UTF-7) counts as none.
 */
int html_meta_charset(const unsigned char *in, size_t n, char *cs,
    size_t cssz);

#endif

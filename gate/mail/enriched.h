/*
 * enriched.h - text/enriched (RFC 1896) and text/richtext (RFC 1341) to
 * plain text for the tokenizer
 */
#ifndef LG_ENRICHED_H
#define LG_ENRICHED_H

#include <stddef.h>

struct buf;

/* enriched_to_text(): out was full, the text was cut there */
#define ENRICHED_CUT	1

/*
 * Formatted text (UTF-8) to plain text, appended to out: formatting
 * commands ("<bold>", "</bold>") dropped, the content of <param> (and
 * richtext's <comment>) dropped, "<<" (enriched) and "<lt>" (richtext)
 * as '<', richtext's "<nl>" as a line break.  richtext: 1 for
 * text/richtext, 0 for text/enriched.  0, ENRICHED_CUT (cut between
 * characters where out reached its max), or -1 only when out of memory.
 */
int enriched_to_text(const unsigned char *in, size_t n, int richtext,
    struct buf *out);

#endif

/*
 * mime.h - MIME header values: media types and parameters
 */
#ifndef LG_MIME_H
#define LG_MIME_H

#include <stddef.h>

struct buf;

/*
 * A MIME parameter (RFC 2045 with RFC 2231 extensions and continuations)
 * from a Content-Type/-Disposition value v of n bytes.  raw: only unquote
 * (boundaries); else convert to UTF-8 (RFC 2231 charset, or RFC 2047
 * words in a plain value).  out is reset first.
 * Returns 1 found, 2 found but cut to fit out (between characters), 0
 * not found, -1 only when out of memory.
 */
int mime_param(const unsigned char *v, size_t n, const char *name, int raw,
    struct buf *out);

/*
 * The media type of a Content-Type value, lower case, into type (size
 * typesz).  Returns 1 on a well-formed type/subtype, 0 otherwise (type
 * then holds "").
 */
int mime_type(const unsigned char *v, size_t n, char *type, size_t typesz);

#endif

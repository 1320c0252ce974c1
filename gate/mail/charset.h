/*
 * charset.h - text in any charset to UTF-8, with iconv
 *
 * An unknown or lying charset never fails a conversion: invalid
 * sequences fall back to Latin-1 for that byte.  Output that does not
 * fit below the buffer's max is cut between characters and reported
 * (CS_CUT); the input after the cut is dropped.  Converters are cached
 * per thread.  Fails (-1) only when memory runs out.
 */
#ifndef LG_CHARSET_H
#define LG_CHARSET_H

#include <stddef.h>

struct buf;

/* longest charset name looked at (an encoded word's, an RFC 2231 value's) */
#define CHARSET_NAME_MAX	64

/*
 * Most UTF-8 bytes one input byte can become, over every charset glibc
 * knows (tests/check_mail measures it): TSCII turns 0x82 into four
 * Tamil code points, 12 bytes.  Size output buffers by it so that no
 * real text is cut.
 */
#define CS_MAX_GROWTH	12

/* flags set by charset_convert() */
#define CS_UNKNOWN	0x01	/* charset name unknown: read as UTF-8/Latin-1 */
#define CS_INVALID	0x02	/* bytes invalid in the charset: Latin-1 used */
#define CS_CUT		0x04	/* out was full: the text was cut */
#define CS_RELABELLED	0x08	/* read in another charset than labelled */

/*
 * in (n bytes, charset charset) to UTF-8, appended to out.  Returns 0
 * clean, 1 fallback used or text cut, -1 only when out of memory.
 */
int charset_to_utf8(const char *charset, const unsigned char *in, size_t n,
    struct buf *out);

/*
 * Like charset_to_utf8() but says why a fallback was used or the text
 * cut (CS_* bits or'ed into *flags).  charset is cslen bytes, need not
 * be NUL-terminated.  Returns 0, or -1 only when out of memory.
 */
int charset_convert(const char *charset, size_t cslen,
    const unsigned char *in, size_t n, struct buf *out, int *flags);

/*
 * Like charset_convert(), for text whose label may lie (a part's body,
 * an encoded word), deciding by the bytes:
 *   - valid UTF-8 wins over another label when it cannot be chance: the
 *     label is a one-byte charset, or the text holds four or more UTF-8
 *     sequences, or the label's conversion fails;
 *   - when the label fails (bytes invalid in it), the charsets of its
 *     language are tried (Japanese: EUC-JP, Shift_JIS, ISO-2022-JP;
 *     Chinese: Big5 (CP950, HKSCS), GB18030; Korean: CP949,
 *     ISO-2022-KR); when the label names none (us-ascii, no label),
 *     hint, another charset the same post declares (NULL: none), then
 *     those of its language; the first that takes every byte is used;
 *   - else the label's reading with Latin-1 for the bytes it refuses.
 * CS_RELABELLED says another charset than the label was used.  The
 * label "utf-16", "utf-32", "ucs-*" or "utf-7" is taken as it is.
 * Returns 0, or -1 only when out of memory.
 */
int charset_convert_text(const char *charset, size_t cslen, const char *hint,
    const unsigned char *in, size_t n, struct buf *out, int *flags);

/*
 * Like charset_convert_text(), for a part's body, whose first bytes may
 * be a byte order mark (UTF-8, UTF-16 of either order): when the label
 * would read the bytes otherwise and all of them fit the mark, they are
 * read by it (CS_RELABELLED), as a browser reads a page by its mark
 * before any label.  Not for an encoded word, which a mail reader reads
 * by its label alone.  Returns 0, or -1 only when out of memory.
 */
int charset_convert_body(const char *charset, size_t cslen, const char *hint,
    const unsigned char *in, size_t n, struct buf *out, int *flags);

/* 1 if the label names a language whose charsets charset_convert_text()
 * can try (Japanese, Chinese, Korean): worth keeping as a post's hint */
int charset_has_family(const char *charset, size_t cslen);

/* UTF-8 as is, each invalid byte as Latin-1, appended to out: CS_INVALID
 * when the fallback was used, or'ed with CS_CUT when out was full (the
 * text is cut between characters); 0 clean; -1 only when out of memory */
int charset_utf8_latin1(const unsigned char *in, size_t n, struct buf *out);

/* allow n more charsets (0: no limit), each counted at its first use
 * since this call, whether its converter was cached or not; past the
 * budget another charset is read as UTF-8/Latin-1.  mail_walk() sets
 * CS_OPEN_BUDGET per post: a post cycling through many charsets would
 * otherwise open and close a converter for every encoded word.  The
 * cache holds at least the budget, so a post never reopens one, and
 * what it converts does not depend on what the thread converted before
 * (the trainer's workers each have their own cache) */
#define CS_OPEN_BUDGET	64
void charset_budget(unsigned n);

/* close this thread's cached iconv handles: optional (leak checkers;
 * done by itself when a thread other than the program's ends) */
void charset_cache_clear(void);

#endif

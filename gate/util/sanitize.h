/*
 * sanitize.h - the one sanitizer for untrusted text on its way out: to a
 * terminal, a log line, JSON or HTML
 *
 * Text from posts, envelopes and token files is hostile.  Whatever the
 * output, the same characters are masked (sanitize_masked):
 *   - C0 controls U+0000-U+001F and DEL U+007F (NUL bytes included);
 *   - C1 controls U+0080-U+009F, UTF-8 encoded; as raw bytes 0x80-0x9f
 *     they are invalid UTF-8, masked below;
 *   - the bidirectional controls U+061C (ALM), U+200E-U+200F (LRM, RLM),
 *     U+202A-U+202E (LRE RLE PDF LRO RLO) and U+2066-U+2069 (LRI RLI FSI
 *     PDI), which reorder what a reader sees ("Trojan Source");
 *   - U+2028 and U+2029, the line and paragraph separators (a line
 *     break to some terminals, log viewers and JavaScript);
 *   - U+FEFF, the zero-width no-break space (a BOM out of place),
 *     invisible inside a word;
 *   - every byte that does not start a valid UTF-8 sequence
 *     (utf8_decode: lone continuations, overlong forms, surrogates,
 *     truncated sequences, anything above U+10FFFF), one replacement
 *     per byte.
 * Other characters pass, joiners (U+200C, U+200D) included: emoji and
 * Persian need them.
 *
 * Whitespace controls: on one line (the default) TAB, LF and CR each
 * become a space.  With SANITIZE_KEEP_NL (multi-line previews) TAB and
 * LF are kept and CR is dropped (CRLF becomes LF, a bare CR cannot
 * overwrite a line).  SANITIZE_LOG masks them like any control (a log
 * line is parsed by programs: no extra field, no second line) and
 * ignores the flag.
 *
 * Replacement per output (one per masked character):
 *   SANITIZE_TEXT, SANITIZE_LOG   '?'   (ASCII: any terminal, syslog)
 *   SANITIZE_JSON                 \ufffd (U+FFFD, escaped to stay ASCII)
 *   SANITIZE_HTML                 &#xfffd;
 *
 * Output is bounded twice: by maxchars characters, and by the room left
 * in the struct buf (its max).  A cut falls between characters (never
 * inside a UTF-8 sequence, an escape or an entity) and ends in
 * SANITIZE_MARK; the marker counts in maxchars.  A character is one code
 * point or one replacement, so maxchars is a column count for most text
 * (not for wide or combining characters).
 *
 * Nothing here logs or exits; the only failures are out of memory and a
 * buffer without room for the marker.  No static state: thread-safe.
 */
#ifndef LG_SANITIZE_H
#define LG_SANITIZE_H

#include <stddef.h>
#include <stdint.h>

#include "gate/util/buf.h"

/* how the masked text is written */
enum sanitize_enc {
	/* a terminal: the text as it is, masked characters as '?' */
	SANITIZE_TEXT,
	/* one log line, where values sit in key=value and key="..."
	 * fields: as TEXT, but TAB, LF and CR become '?' too, and so do
	 * '"' and '\\' (a value cannot end its quotes); SANITIZE_KEEP_NL
	 * is ignored */
	SANITIZE_LOG,
	/* a complete JSON string value, the quotes included (also when
	 * cut): '"' and '\\' escaped, TAB and LF (when kept) as \t and \n,
	 * masked characters as \ufffd; other characters as UTF-8 */
	SANITIZE_JSON,
	/* HTML text or a quoted attribute value: & < > " ' as &amp; &lt;
	 * &gt; &quot; &#39;, masked characters as &#xfffd; */
	SANITIZE_HTML
};

/* flags: keep TAB and LF, drop CR (a multi-line preview) */
#define SANITIZE_KEEP_NL	0x1u

/* maxchars: no limit in characters (the buffer's room still bounds) */
#define SANITIZE_NO_LIMIT	((size_t)-1)

/* appended where the text was cut (shortened to maxchars dots when
 * maxchars is below 3) */
#define SANITIZE_MARK		"..."

/*
 * Append the n bytes at s (any bytes: NUL, invalid UTF-8) to out,
 * masked and encoded as enc, at most maxchars characters (marker
 * included) and never past out's max.  Returns 0 when all of s went
 * out, 1 when it was cut (the marker is there; a JSON string is still
 * closed), -1 when out of memory or when out has no room even for the
 * marker and a JSON string's two quotes: out is then unchanged.
 */
int sanitize_buf(struct buf *out, const void *s, size_t n, size_t maxchars,
    enum sanitize_enc enc, unsigned flags);

/*
 * The same into the fixed array out (outsz bytes): always
 * NUL-terminated, never allocates (for logging when memory has run
 * out).  An array too small for the marker gets "" (for JSON, too small
 * for "\"...\"" gets "").  Returns out.
 */
char *sanitize_str(char *out, size_t outsz, const void *s, size_t n,
    size_t maxchars, enum sanitize_enc enc, unsigned flags);

/*
 * Append s (n bytes) to out as valid UTF-8 and nothing more: for
 * storing text (PostgreSQL text columns refuse invalid UTF-8 and NUL).
 * Each invalid byte and each NUL becomes U+FFFD; every valid character,
 * controls included, is kept: masking is for output.  Cut at the last
 * whole character that fits below out's max, without a marker.
 * Returns 0 all of s, 1 cut, -1 out of memory (out unchanged).
 */
int sanitize_utf8(struct buf *out, const void *s, size_t n);

/* 1 when the code point cp is always masked (the classes above, TAB,
 * LF and CR included), else 0 */
int sanitize_masked(uint32_t cp);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * buf.h: struct sb_buf, a growable byte string with a hard maximum (docs/design.md,
 * "Bounded buffers").
 *
 * b->s is never NULL and always NUL-terminated, so it can be printed at any time, even
 * before the first append. Every append that would take the length past b->max fails with
 * EMSGSIZE and leaves the buffer as it was: the limit is enforced here, once, instead of
 * at every caller. Data may contain NUL bytes; b->len counts them.
 */
#ifndef SB_BUF_H
#define SB_BUF_H

#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>

#include "sb/common.h"
#include "sb/error.h"

struct sb_buf {
	char *s;    /* contents + NUL; points at a shared "" until the first allocation */
	size_t len; /* bytes in s, not counting the final NUL */
	size_t cap; /* bytes allocated (0 while s is the shared "") */
	size_t max; /* the most len may ever be */
};

extern char sb_buf_empty[1];

#define SB_BUF_INIT(maxlen) { .s = sb_buf_empty, .len = 0, .cap = 0, .max = (maxlen) }

void sb_buf_init(struct sb_buf *b, size_t max);
/* Free the contents; the buffer is empty and reusable (same max) afterwards. */
void sb_buf_release(struct sb_buf *b);
/* Empty the buffer but keep its memory. */
void sb_buf_reset(struct sb_buf *b);
/* Return the contents as a malloc'd string the caller owns; the buffer becomes empty. */
char *sb_buf_detach(struct sb_buf *b, size_t *ret_len);

int sb_buf_append(struct sb_buf *b, const void *data, size_t n, struct sb_error **err);
int sb_buf_appends(struct sb_buf *b, const char *s, struct sb_error **err);
int sb_buf_appendc(struct sb_buf *b, char c, struct sb_error **err);
int sb_buf_appendf(struct sb_buf *b, struct sb_error **err, const char *fmt, ...) _printf_(3, 4);
int sb_buf_vappendf(struct sb_buf *b, struct sb_error **err, const char *fmt, va_list ap)
	_printf_(3, 0);

/*
 * Append as much of data as fits under max and return the number of bytes dropped (0 when
 * everything fit). For output capture, where a cap truncates instead of failing.
 */
size_t sb_buf_append_capped(struct sb_buf *b, const void *data, size_t n);

/*
 * Append s with every control byte, backslash and non-UTF-8 byte escaped (\n, \t, \\,
 * \xNN), and every code point sb_utf8_hidden names as \u{XXXX}, so untrusted text can
 * neither forge a log line or a terminal escape nor reorder or hide what surrounds it.
 */
int sb_buf_append_escaped(struct sb_buf *b, const char *s, size_t n, struct sb_error **err);

/*
 * Length of the UTF-8 sequence at p (at most n bytes, n > 0) if it is valid and prints as
 * text: 0 for a broken, overlong or surrogate sequence, a code point past U+10FFFF, and for
 * the C1 controls U+0080..U+009F (terminal escapes on some terminals). ASCII bytes are 1,
 * controls included: the caller decides about those.
 */
size_t sb_utf8_seq_len(const unsigned char *p, size_t n);

/*
 * A code point that changes how the text around it is shown without showing itself: C1
 * controls, the bidi embeddings, overrides and isolates (U+202A..E, U+2066..9, U+061C,
 * U+200E/F), zero-width, blank and invisible characters (U+200B..D, U+2060..4, U+206A..F,
 * U+FEFF, U+00AD, U+034F, the Hangul and Khmer fillers, U+2800, the Mongolian selectors,
 * variation selectors, tags U+E0000..U+E0FFF, musical formatting), the line and paragraph
 * separators (U+2028/9), interlinear annotation marks and non-characters.
 */
bool sb_utf8_hidden(uint32_t c);

/* Drop trailing whitespace. */
void sb_buf_rtrim(struct sb_buf *b);

/*
 * Read everything from fd until EOF into b, failing with EMSGSIZE past b->max. Retries EINTR.
 */
int sb_buf_read_fd(struct sb_buf *b, int fd, struct sb_error **err);

static inline void
sb_buf_releasep(struct sb_buf *b)
{
	sb_buf_release(b);
}
#define _cleanup_buf_ _cleanup_(sb_buf_releasep)

/* An escaped copy of s (malloc'd), for messages that quote untrusted input. */
char *sb_escape(const char *s);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* buf.c: struct sb_buf, the bounded growable string. */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "sb/buf.h"
#include "sb/mem.h"

char sb_buf_empty[1];

void
sb_buf_init(struct sb_buf *b, size_t max)
{
	b->s = sb_buf_empty;
	b->len = 0;
	b->cap = 0;
	b->max = max;
}

void
sb_buf_release(struct sb_buf *b)
{
	if (b->cap != 0)
		free(b->s);
	b->s = sb_buf_empty;
	b->len = 0;
	b->cap = 0;
}

void
sb_buf_reset(struct sb_buf *b)
{
	b->len = 0;
	if (b->cap != 0)
		b->s[0] = '\0';
}

char *
sb_buf_detach(struct sb_buf *b, size_t *ret_len)
{
	char *s = b->cap != 0 ? b->s : sb_xstrdup("");

	if (ret_len != NULL)
		*ret_len = b->len;
	b->s = sb_buf_empty;
	b->len = 0;
	b->cap = 0;
	return s;
}

/* Make room for n more bytes plus the NUL; the caller has checked the maximum. */
static void
buf_grow(struct sb_buf *b, size_t n)
{
	size_t want = b->len + n + 1, cap;

	if (want <= b->cap)
		return;
	cap = b->cap < 64 ? 64 : b->cap;
	while (cap < want)
		cap = cap > SIZE_MAX / 2 ? want : cap * 2;
	if (b->cap == 0) {
		b->s = sb_xmalloc(cap);
		b->s[0] = '\0';
	} else {
		b->s = sb_xreallocarray(b->s, cap, 1);
	}
	b->cap = cap;
}

int
sb_buf_append(struct sb_buf *b, const void *data, size_t n, struct sb_error **err)
{
	if (n > b->max || b->len > b->max - n)
		return sb_error_set(err, EMSGSIZE, "more than %zu bytes", b->max);
	if (n == 0)
		return 0;
	buf_grow(b, n);
	memcpy(b->s + b->len, data, n);
	b->len += n;
	b->s[b->len] = '\0';
	return 0;
}

int
sb_buf_appends(struct sb_buf *b, const char *s, struct sb_error **err)
{
	return sb_buf_append(b, s, strlen(s), err);
}

int
sb_buf_appendc(struct sb_buf *b, char c, struct sb_error **err)
{
	return sb_buf_append(b, &c, 1, err);
}

int
sb_buf_vappendf(struct sb_buf *b, struct sb_error **err, const char *fmt, va_list ap)
{
	_cleanup_free_ char *s = sb_xvasprintf(fmt, ap);

	return sb_buf_appends(b, s, err);
}

int
sb_buf_appendf(struct sb_buf *b, struct sb_error **err, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = sb_buf_vappendf(b, err, fmt, ap);
	va_end(ap);
	return r;
}

size_t
sb_buf_append_capped(struct sb_buf *b, const void *data, size_t n)
{
	size_t room = b->max - b->len, take = n < room ? n : room;

	(void)sb_buf_append(b, data, take, NULL);
	return n - take;
}

size_t
sb_utf8_seq_len(const unsigned char *p, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	/* Overlong forms, surrogates and code points past U+10FFFF are not valid UTF-8. */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	/* C1 controls (U+0080..U+009F) act as terminal escapes on some terminals. */
	if (cp >= 0x80 && cp <= 0x9f)
		return 0;
	return len;
}

bool
sb_utf8_hidden(uint32_t c)
{
	return (c >= 0x80 && c <= 0x9f) || c == 0xad || c == 0x034f || c == 0x061c ||
	       c == 0x115f || c == 0x1160 || c == 0x17b4 || c == 0x17b5 ||
	       (c >= 0x180b && c <= 0x180f) || (c >= 0x200b && c <= 0x200f) || c == 0x2028 ||
	       c == 0x2029 || (c >= 0x202a && c <= 0x202e) || (c >= 0x2060 && c <= 0x2064) ||
	       (c >= 0x2066 && c <= 0x206f) || c == 0x2800 || c == 0x3164 ||
	       (c >= 0xfe00 && c <= 0xfe0f) || c == 0xfeff || c == 0xffa0 ||
	       (c >= 0xfff9 && c <= 0xfffb) || c == 0xfffe || c == 0xffff ||
	       (c >= 0x1d173 && c <= 0x1d17a) || (c >= 0xe0000 && c <= 0xe0fff);
}

/* The code point of a valid sequence of len bytes (sb_utf8_seq_len said so). */
static uint32_t
utf8_code_point(const unsigned char *p, size_t len)
{
	uint32_t cp = len == 1 ? p[0] : len == 2 ? p[0] & 0x1fu : len == 3 ? p[0] & 0x0fu : p[0] & 0x07u;

	for (size_t i = 1; i < len; i++)
		cp = (cp << 6) | (p[i] & 0x3fu);
	return cp;
}

int
sb_buf_append_escaped(struct sb_buf *b, const char *s, size_t n, struct sb_error **err)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, len;

	while (i < n) {
		unsigned char c = p[i];
		int r;

		if (c == '\\')
			r = sb_buf_append(b, "\\\\", 2, err);
		else if (c == '\n')
			r = sb_buf_append(b, "\\n", 2, err);
		else if (c == '\t')
			r = sb_buf_append(b, "\\t", 2, err);
		else if (c == '\r')
			r = sb_buf_append(b, "\\r", 2, err);
		else if (c < 0x20 || c == 0x7f || (c >= 0x80 && sb_utf8_seq_len(p + i, n - i) == 0))
			r = sb_buf_appendf(b, err, "\\x%02x", c);
		else if (sb_utf8_hidden(utf8_code_point(p + i, sb_utf8_seq_len(p + i, n - i)))) {
			/* Shown, not obeyed: a bidi override or an invisible character would
			 * reorder or hide the text around it on the operator's screen. */
			len = sb_utf8_seq_len(p + i, n - i);
			r = sb_buf_appendf(b, err, "\\u{%04X}", (unsigned)utf8_code_point(p + i, len));
			if (r < 0)
				return r;
			i += len;
			continue;
		} else {
			len = sb_utf8_seq_len(p + i, n - i);
			r = sb_buf_append(b, p + i, len, err);
			if (r < 0)
				return r;
			i += len;
			continue;
		}
		if (r < 0)
			return r;
		i++;
	}
	return 0;
}

void
sb_buf_rtrim(struct sb_buf *b)
{
	while (b->len > 0 && (b->s[b->len - 1] == ' ' || b->s[b->len - 1] == '\t' ||
			      b->s[b->len - 1] == '\n' || b->s[b->len - 1] == '\r'))
		b->s[--b->len] = '\0';
}

int
sb_buf_read_fd(struct sb_buf *b, int fd, struct sb_error **err)
{
	char chunk[16384];
	ssize_t n;

	for (;;) {
		n = SB_RETRY_EINTR(read(fd, chunk, sizeof(chunk)));
		if (n < 0)
			return sb_error_errno(err, errno, "read");
		if (n == 0)
			return 0;
		if (sb_buf_append(b, chunk, (size_t)n, err) < 0)
			return -1;
	}
}

char *
sb_escape(const char *s)
{
	struct sb_buf b = SB_BUF_INIT(SIZE_MAX / 8);

	(void)sb_buf_append_escaped(&b, s, strlen(s), NULL);
	return sb_buf_detach(&b, NULL);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* mem.c: the sb_x* allocators, which abort instead of returning NULL. */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "sb/mem.h"

void
sb_oom(size_t size)
{
	/* fprintf may allocate; a fixed message with write(2) cannot. */
	static const char msg[] = "ssebench: out of memory, aborting\n";

	(void)size;
	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	abort();
}

void *
sb_xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (p == NULL)
		sb_oom(size);
	return p;
}

void *
sb_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		sb_oom(n * size);
	return p;
}

void *
sb_xreallocarray(void *p, size_t n, size_t size)
{
	void *q;

	if (size != 0 && n > SIZE_MAX / size)
		sb_oom(SIZE_MAX);
	q = realloc(p, n * size != 0 ? n * size : 1);
	if (q == NULL)
		sb_oom(n * size);
	return q;
}

char *
sb_xstrdup(const char *s)
{
	char *p = strdup(s);

	if (p == NULL)
		sb_oom(strlen(s) + 1);
	return p;
}

char *
sb_xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);

	if (p == NULL)
		sb_oom(n + 1);
	return p;
}

char *
sb_xmemdup(const void *p, size_t n)
{
	char *q = sb_xmalloc(n + 1);

	memcpy(q, p, n);
	q[n] = '\0';
	return q;
}

char *
sb_xvasprintf(const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		sb_oom(0);
	return s;
}

char *
sb_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = sb_xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mem.h: allocation that cannot fail.
 *
 * Running out of memory aborts the process (docs/design.md, "Error contract"): an untested
 * recovery path is worse than a clean abort, and every size we allocate is bounded by limits.h
 * first.
 */
#ifndef SB_MEM_H
#define SB_MEM_H

#include <stdarg.h>

#include "sb/common.h"

void *sb_xmalloc(size_t size);
void *sb_xcalloc(size_t n, size_t size);
/* Overflow-checked n * size reallocation. */
void *sb_xreallocarray(void *p, size_t n, size_t size);
char *sb_xstrdup(const char *s);
char *sb_xstrndup(const char *s, size_t n);
char *sb_xmemdup(const void *p, size_t n);
char *sb_xasprintf(const char *fmt, ...) _printf_(1, 2);
char *sb_xvasprintf(const char *fmt, va_list ap) _printf_(1, 0);

/* Abort with a message naming the allocation that failed. Async-signal-unsafe. */
_noreturn_ void sb_oom(size_t size);

#endif

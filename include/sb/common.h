/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common.h: what every file of ssebench includes after config.h.
 *
 * Cleanup attributes and ownership transfer (docs/design.md, "Cleanup and ownership"), the
 * EINTR retry macro ("Descriptors") and, last of all, banned.h ("Banned functions"), so
 * that a banned function used anywhere after this point fails to compile.
 */
#ifndef SB_COMMON_H
#define SB_COMMON_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f)	 __attribute__((cleanup(f)))
#define _cleanup_free_	 _cleanup_(sb_freep)
#define _cleanup_close_	 _cleanup_(sb_closep)
#define _cleanup_fclose_ _cleanup_(sb_fclosep)
#define _unused_	 __attribute__((unused))
#define _noreturn_	 __attribute__((noreturn))
#define _printf_(a, b)	 __attribute__((format(printf, a, b)))
#define _warn_unused_	 __attribute__((warn_unused_result))

#define SB_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static inline void
sb_freep(void *p)
{
	free(*(void **)p);
}

/* Closes *fd if it is open; keeps errno, which the caller may be about to report. */
static inline void
sb_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		(void)close(*fd);
		errno = saved;
	}
}

static inline void
sb_fclosep(FILE **f)
{
	if (*f != NULL)
		(void)fclose(*f);
}

/* Closes fd (if open) and returns -1, for `fd = sb_close(fd);`. */
static inline int
sb_close(int fd)
{
	if (fd >= 0) {
		int saved = errno;
		(void)close(fd);
		errno = saved;
	}
	return -1;
}

/* Hand ownership to someone else; the cleanup attribute then sees NULL / -1. */
#define TAKE_PTR(p)                          \
	({                                   \
		__typeof__(p) _sb_p_ = (p);  \
		(p) = NULL;                  \
		_sb_p_;                      \
	})
#define TAKE_FD(fd)                   \
	({                            \
		int _sb_fd_ = (fd);   \
		(fd) = -1;            \
		_sb_fd_;              \
	})

/* Retry a system call interrupted by a signal. */
#define SB_RETRY_EINTR(expr)                                          \
	({                                                            \
		__typeof__(expr) _sb_r_;                              \
		do                                                    \
			_sb_r_ = (expr);                              \
		while (_sb_r_ == (__typeof__(expr))-1 && errno == EINTR); \
		_sb_r_;                                               \
	})

static inline bool
sb_streq(const char *a, const char *b)
{
	return a != NULL && b != NULL && __builtin_strcmp(a, b) == 0;
}

#include "sb/banned.h"

#endif

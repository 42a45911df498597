/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log.h: diagnostics for people (docs/design.md, "Error contract" and "Logging").
 *
 * Only main()-level and request-level code logs; library code returns errors. Each message
 * is one line: the whole formatted text is escaped (control bytes, invalid UTF-8), so a
 * file name or a request field cannot forge a second line or drive the terminal.
 * Messages start lower-case, say what failed first and quote subjects in single quotes.
 */
#ifndef SB_LOG_H
#define SB_LOG_H

#include "sb/common.h"

enum sb_log_level {
	SB_LOG_ERROR = 0,
	SB_LOG_WARN = 1,
	SB_LOG_INFO = 2,
	SB_LOG_DEBUG = 3,
};

enum sb_log_flags {
	SB_LOG_TIMESTAMPS = 1 << 0, /* prefix an ISO-8601 UTC time (daemons) */
	SB_LOG_LEVELS = 1 << 1,	    /* prefix "error: ", "warning: " ... */
};

/* Set the program name, the most verbose level shown, and the flags. Not thread-safe. */
void sb_log_init(const char *progname, enum sb_log_level max_level, unsigned flags);
void sb_log_set_level(enum sb_log_level max_level);
/* Send log lines to fd instead of stderr (the fd stays the caller's). */
void sb_log_set_fd(int fd);
bool sb_log_enabled(enum sb_log_level level);

void sb_log(enum sb_log_level level, const char *fmt, ...) _printf_(2, 3);
/* Like sb_log, with ": <strerror(errnum)>" appended. */
void sb_log_errno(enum sb_log_level level, int errnum, const char *fmt, ...) _printf_(3, 4);

#endif

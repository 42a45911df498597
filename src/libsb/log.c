/* SPDX-License-Identifier: Apache-2.0 */
/* log.c: one-line, escaped diagnostics on stderr (or another fd). */
#include "config.h"

#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "sb/buf.h"
#include "sb/log.h"
#include "sb/mem.h"

static const char *log_progname = "ssebench";
static enum sb_log_level log_max = SB_LOG_INFO;
static unsigned log_flags = SB_LOG_LEVELS;
static int log_fd = STDERR_FILENO;

void
sb_log_init(const char *progname, enum sb_log_level max_level, unsigned flags)
{
	log_progname = progname;
	log_max = max_level;
	log_flags = flags;
}

void
sb_log_set_level(enum sb_log_level max_level)
{
	log_max = max_level;
}

void
sb_log_set_fd(int fd)
{
	log_fd = fd;
}

bool
sb_log_enabled(enum sb_log_level level)
{
	return level <= log_max;
}

static const char *
level_prefix(enum sb_log_level level)
{
	switch (level) {
	case SB_LOG_ERROR:
		return "error: ";
	case SB_LOG_WARN:
		return "warning: ";
	case SB_LOG_INFO:
		return "";
	case SB_LOG_DEBUG:
		return "debug: ";
	}
	return "";
}

static void
log_write(enum sb_log_level level, int errnum, const char *fmt, va_list ap)
{
	struct sb_buf line = SB_BUF_INIT(64 * 1024);
	_cleanup_free_ char *msg = NULL;
	size_t off = 0;

	if (!sb_log_enabled(level))
		return;
	msg = sb_xvasprintf(fmt, ap);
	if (log_flags & SB_LOG_TIMESTAMPS) {
		struct timespec ts;
		struct tm tm;

		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		(void)sb_buf_appendf(&line, NULL, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ ",
		    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
		    tm.tm_sec, ts.tv_nsec / 1000000);
	}
	(void)sb_buf_appendf(&line, NULL, "%s: %s", log_progname,
	    (log_flags & SB_LOG_LEVELS) ? level_prefix(level) : "");
	(void)sb_buf_append_escaped(&line, msg, strlen(msg), NULL);
	if (errnum != 0)
		(void)sb_buf_appendf(&line, NULL, ": %s", strerror(errnum));
	/* A line longer than the buffer keeps its start and is marked; the room for the
	 * newline was left by the buffer's NUL byte. */
	if (line.len + 1 >= line.max) {
		line.len = line.max - 5;
		memcpy(line.s + line.len, "...", 3);
		line.len += 3;
	}
	line.s[line.len++] = '\n';
	while (off < line.len) {
		ssize_t n = write(log_fd, line.s + off, line.len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	sb_buf_release(&line);
}

void
sb_log(enum sb_log_level level, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	log_write(level, 0, fmt, ap);
	va_end(ap);
	errno = saved;
}

void
sb_log_errno(enum sb_log_level level, int errnum, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	log_write(level, errnum, fmt, ap);
	va_end(ap);
	errno = saved;
}

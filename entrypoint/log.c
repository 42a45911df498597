/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log.c: the entrypoint's log lines and times, shared by every file of it. A leaf: it calls
 * into no other file of the entrypoint, so that each of them can log without a call circle.
 */
#include "config.h"

#include <stdarg.h>
#include <unistd.h>

#include "sb/mem.h"
#include "sb/spawn.h"

#include "entrypoint.h"

/* entrypoint.log in the results directory, once it is open; -1 before. */
static int log_file_fd = -1;

void
ep_log_to_file(int fd)
{
	log_file_fd = fd;
}

double
ep_secs(uint64_t since_ms)
{
	uint64_t now = sb_now_ms();

	return now > since_ms ? (double)(now - since_ms) / 1000.0 : 0.0;
}

/*
 * Every line goes to stdout (the container's log) and to entrypoint.log. sb_log escapes the
 * whole message, so a path or a command name cannot forge a line in either.
 */
void
ep_log(enum sb_log_level level, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	int saved = errno;
	va_list ap;

	if (!sb_log_enabled(level))
		return;
	va_start(ap, fmt);
	msg = sb_xvasprintf(fmt, ap);
	va_end(ap);
	sb_log_set_fd(STDOUT_FILENO);
	sb_log(level, "%s", msg);
	if (log_file_fd >= 0) {
		sb_log_set_fd(log_file_fd);
		sb_log(level, "%s", msg);
		sb_log_set_fd(STDOUT_FILENO);
	}
	errno = saved;
}

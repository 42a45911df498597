/* SPDX-License-Identifier: Apache-2.0 */
/* test-log.c: one escaped line per message, levels, errno suffix. */
#include "config.h"

#include <fcntl.h>
#include <string.h>

#include "sb/buf.h"
#include "sb/log.h"

#include "unit.h"

static int pipe_fds[2];

/* Log through a pipe and return what was written. */
static char *
capture(void (*fn)(void))
{
	struct sb_buf b = SB_BUF_INIT(1 << 20);

	ck_assert_int_eq(pipe2(pipe_fds, O_CLOEXEC), 0);
	sb_log_set_fd(pipe_fds[1]);
	fn();
	close(pipe_fds[1]);
	sb_buf_read_fd(&b, pipe_fds[0], NULL);
	close(pipe_fds[0]);
	sb_log_set_fd(STDERR_FILENO);
	return sb_buf_detach(&b, NULL);
}

static void
log_injection(void)
{
	sb_log_init("ssebench", SB_LOG_INFO, SB_LOG_LEVELS);
	sb_log(SB_LOG_WARN, "task '%s' skipped", "x\nssebench: error: forged\x1b[2J");
}

START_TEST(test_message_cannot_forge_a_line)
{
	char *out = capture(log_injection);

	ck_assert_str_eq(out,
	    "ssebench: warning: task 'x\\nssebench: error: forged\\x1b[2J' skipped\n");
	free(out);
}
END_TEST

static void
log_levels(void)
{
	sb_log_init("prog", SB_LOG_INFO, SB_LOG_LEVELS);
	sb_log(SB_LOG_DEBUG, "hidden");
	sb_log(SB_LOG_INFO, "shown");
	sb_log_errno(SB_LOG_ERROR, ENOENT, "open '%s'", "f");
}

START_TEST(test_levels_and_errno)
{
	char *out = capture(log_levels);

	ck_assert_str_eq(out, "prog: shown\nprog: error: open 'f': No such file or directory\n");
	free(out);
}
END_TEST

static void
log_huge(void)
{
	static char big[200000];

	memset(big, 'y', sizeof(big) - 1);
	sb_log_init("p", SB_LOG_INFO, 0);
	sb_log(SB_LOG_INFO, "%s", big);
}

START_TEST(test_long_message_is_one_bounded_line)
{
	char *out = capture(log_huge);
	size_t len = strlen(out);

	ck_assert_uint_le(len, 64 * 1024);
	ck_assert_int_eq(out[len - 1], '\n');
	ck_assert_ptr_null(memchr(out, '\n', len - 1));
	free(out);
}
END_TEST

static Suite *
log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_message_cannot_forge_a_line);
	tcase_add_test(tc, test_levels_and_errno);
	tcase_add_test(tc, test_long_message_is_one_bounded_line);
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(log_suite)

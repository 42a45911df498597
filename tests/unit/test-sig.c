/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-sig.c: the interrupt handler's three deferrals (src/libsb/sig.c).
 *
 * The bug it stands for: `ssebench run` left deferral off once its container had exited, so a
 * Ctrl-C while it copied the archive and wrote result.json killed it at once: no result, and
 * the run's network, disks and proxy key left behind (CI saw the run with no result). Each
 * case runs in a child of its own, which signals itself and reports how it ended.
 */
#include "config.h"

#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sb/sig.h"
#include "unit.h"

/* The child's exit status after `n` SIGINTs under `defer`; 0 if it outlived them all. */
static int
status_after(enum sb_sig_defer defer, int n)
{
	int status = 0;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		sb_sig_install_interrupt();
		sb_sig_set_deferred(defer);
		for (int i = 0; i < n; i++)
			(void)raise(SIGINT);
		/* Still here: every signal was counted, none exited. */
		_exit(sb_sig_interrupt_count() == n && sb_sig_interrupted() == SIGINT ? 0 : 99);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status), "the child died of signal %d", WTERMSIG(status));
	return WEXITSTATUS(status);
}

START_TEST(test_none_exits_at_once)
{
	ck_assert_int_eq(status_after(SB_SIG_DEFER_NONE, 1), 130);
}
END_TEST

START_TEST(test_first_defers_one)
{
	ck_assert_int_eq(status_after(SB_SIG_DEFER_FIRST, 1), 0);
	/* The user insists: the second one exits, whatever cleanup is pending. */
	ck_assert_int_eq(status_after(SB_SIG_DEFER_FIRST, 2), 130);
}
END_TEST

START_TEST(test_all_defers_every_one)
{
	ck_assert_int_eq(status_after(SB_SIG_DEFER_ALL, 3), 0);
}
END_TEST

START_TEST(test_sigterm_exits_143)
{
	int status = 0;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		sb_sig_install_interrupt();
		sb_sig_set_deferred(SB_SIG_DEFER_FIRST);
		(void)raise(SIGTERM);
		(void)raise(SIGTERM);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 143);
}
END_TEST

static Suite *
sig_suite(void)
{
	Suite *s = suite_create("sig");
	TCase *tc = tcase_create("defer");

	tcase_add_test(tc, test_none_exits_at_once);
	tcase_add_test(tc, test_first_defers_one);
	tcase_add_test(tc, test_all_defers_every_one);
	tcase_add_test(tc, test_sigterm_exits_143);
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(sig_suite)

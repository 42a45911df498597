/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-freezer.c: holding a uid's processes still with the cgroup freezer
 * (src/libsb/freezer.c), in each hierarchy this machine has: cgroup v2 (/sys/fs/cgroup, or
 * the hybrid layout's /sys/fs/cgroup/unified) and the v1 freezer controller.
 *
 * Needs root (automake SKIP, exit 77). The victims run as TEST_UID, a uid nothing else uses
 * (test-proc.c has its own). A machine with neither hierarchy fails the cases, rather than
 * pass without having tried.
 *
 * The attack is the one SIGSTOP cannot hold (second red-team round, issue 13): a process
 * arms a POSIX timer whose signal is SIGCONT, so the kernel continues it while it is meant
 * to be stopped. The first case shows that the stop by signals is undone, then that the
 * freezer holds.
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sb/error.h"
#include "sb/freezer.h"
#include "sb/proc.h"
#include "sb/spawn.h"

#define TEST_UID 60998

static char cgdir[256];

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static bool
is_cgroup2(const char *path)
{
	struct statfs s;

	return statfs(path, &s) == 0 && (long)s.f_type == 0x63677270L;
}

/* The root of the hierarchy case i uses (0: v2, 1: v1 freezer), or NULL. */
static const char *
hierarchy(int i)
{
	if (i == 0)
		return is_cgroup2("/sys/fs/cgroup") ? "/sys/fs/cgroup"
		    : is_cgroup2("/sys/fs/cgroup/unified") ? "/sys/fs/cgroup/unified" : NULL;
	return access("/sys/fs/cgroup/freezer/freezer.state", F_OK) == 0 ||
		access("/sys/fs/cgroup/freezer/cgroup.procs", F_OK) == 0
	    ? "/sys/fs/cgroup/freezer" : NULL;
}

/*
 * A fresh cgroup for case i, opened. A machine without that hierarchy (a v2-only one has no
 * v1 freezer) skips the case, saying so; one with neither fails it.
 */
static bool
make_cgroup(int i, struct sb_freezer *f)
{
	const char *root = hierarchy(i);
	struct sb_error *err = NULL;

	if (root == NULL) {
		ck_assert_msg(hierarchy(1 - i) != NULL, "no cgroup freezer on this machine");
		fprintf(stderr, "test-freezer: no %s here, case skipped\n",
		    i == 0 ? "cgroup v2" : "v1 freezer");
		return false;
	}
	snprintf(cgdir, sizeof(cgdir), "%s/ssebench-test-freezer-%d", root, (int)getpid());
	(void)rmdir(cgdir);
	ck_assert_msg(mkdir(cgdir, 0755) == 0, "mkdir %s: %s", cgdir, strerror(errno));
	ck_assert_msg(sb_freezer_open(cgdir, f, &err) == 0, "%s", sb_error_message(err));
	return true;
}

static void
remove_cgroup(struct sb_freezer *f)
{
	(void)sb_freezer_kill(f, 5000, NULL);
	sb_freezer_close(f);
	for (int i = 0; i < 100 && rmdir(cgdir) < 0; i++)
		sleep_ms(20);
}

/* In a child, as root: join the cgroup, then become TEST_UID in a session of its own. */
static void
join_and_drop(const char *dir)
{
	char path[300];
	int fd;

	if (dir != NULL) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
		fd = open(path, O_WRONLY);
		if (fd < 0 || write(fd, "0", 1) != 1)
			_exit(3);
		close(fd);
	}
	if (syscall(SYS_setgroups, 0, NULL) < 0 || setresgid(TEST_UID, TEST_UID, TEST_UID) < 0 ||
	    setresuid(TEST_UID, TEST_UID, TEST_UID) < 0)
		_exit(3);
	(void)setsid();
}

/*
 * A heartbeat of TEST_UID that counts in *beats and, at each beat, arms a one-shot timer
 * whose signal is SIGCONT, 50 ms ahead: once stopped, it is continued by the kernel 50 ms
 * later, and beats on.
 */
static pid_t
start_waker(const char *dir, volatile long *beats)
{
	pid_t p = fork();

	ck_assert_int_ge(p, 0);
	if (p == 0) {
		struct sigevent sev;
		struct itimerspec its = { { 0, 0 }, { 0, 50000000L } };
		timer_t t;

		join_and_drop(dir);
		memset(&sev, 0, sizeof(sev));
		sev.sigev_notify = SIGEV_SIGNAL;
		sev.sigev_signo = SIGCONT;
		if (timer_create(CLOCK_MONOTONIC, &sev, &t) < 0)
			_exit(4);
		for (;;) {
			(*beats)++;
			(void)timer_settime(t, 0, &its, NULL);
			sleep_ms(1);
		}
	}
	return p;
}

static long
beats_during(volatile long *beats, long ms)
{
	long before = *beats;

	sleep_ms(ms);
	return *beats - before;
}

static void
check_timer_cont(int i)
{
	volatile long *beats = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
	    -1, 0);
	struct sb_freezer f;
	struct sb_error *err = NULL;
	pid_t p;
	long n;

	ck_assert_ptr_ne((void *)beats, MAP_FAILED);
	if (!make_cgroup(i, &f))
		return;
	p = start_waker(cgdir, beats);
	for (int k = 0; k < 200 && *beats < 5; k++)
		sleep_ms(5);
	ck_assert_msg(*beats >= 5, "the heartbeat did not start");
	/* The attack is real: a stop by signals is claimed, and the timer undoes it. */
	if (sb_proc_signal_uid(TEST_UID, TEST_UID, SIGSTOP, &err) < 0)
		sb_error_release(&err);
	n = beats_during(beats, 300);
	ck_assert_msg(n > 20, "control: SIGSTOP held the timer's SIGCONT (%ld beats)", n);
	(void)sb_proc_signal_uid(TEST_UID, TEST_UID, SIGCONT, NULL);
	/* The freezer holds it. */
	ck_assert_msg(sb_freezer_freeze(&f, TEST_UID, 2000, &err) == 0, "%s", sb_error_message(err));
	sleep_ms(20);
	n = beats_during(beats, 500);
	ck_assert_msg(n == 0, "frozen, the heartbeat still beat %ld times", n);
	/* Nor does a signal from root thaw it. */
	(void)kill(p, SIGCONT);
	n = beats_during(beats, 100);
	ck_assert_msg(n == 0, "a SIGCONT thawed it (%ld beats)", n);
	ck_assert_int_eq(sb_freezer_thaw(&f, NULL), 0);
	n = beats_during(beats, 300);
	ck_assert_msg(n > 20, "thawed, the heartbeat did not go on (%ld beats)", n);
	remove_cgroup(&f);
	(void)waitpid(p, NULL, 0);
	ck_assert_int_eq(sb_proc_count_uid(TEST_UID, NULL), 0);
	munmap((void *)beats, 4096);
}

START_TEST(test_timer_cont_v2)
{
	check_timer_cont(0);
}
END_TEST

START_TEST(test_timer_cont_v1)
{
	check_timer_cont(1);
}
END_TEST

/* A process of the uid outside the cgroup could watch: the freeze is refused. */
static void
check_outside(int i)
{
	struct sb_freezer f;
	struct sb_error *err = NULL;
	pid_t in, out;

	if (!make_cgroup(i, &f))
		return;
	in = fork();
	if (in == 0) {
		join_and_drop(cgdir);
		for (;;)
			pause();
	}
	out = fork();
	if (out == 0) {
		join_and_drop(NULL);
		for (;;)
			pause();
	}
	for (int k = 0; k < 200 && sb_proc_count_uid(TEST_UID, NULL) < 2; k++)
		sleep_ms(5);
	ck_assert_int_eq(sb_freezer_freeze(&f, TEST_UID, 2000, &err), -1);
	ck_assert_int_eq(sb_error_code(err), EBUSY);
	ck_assert_msg(strstr(sb_error_message(err), "1 process of uid 60998 is outside") != NULL,
	    "%s", sb_error_message(err));
	sb_error_release(&err);
	ck_assert_int_eq(sb_freezer_thaw(&f, NULL), 0);
	(void)kill(out, SIGKILL);
	(void)waitpid(out, NULL, 0);
	/* Without it, the same freeze is done. */
	ck_assert_msg(sb_freezer_freeze(&f, TEST_UID, 2000, &err) == 0, "%s", sb_error_message(err));
	ck_assert_int_eq(sb_freezer_thaw(&f, NULL), 0);
	remove_cgroup(&f);
	(void)waitpid(in, NULL, 0);
}

/* A member holding an inotify queue (a thread of it, with a file table of its own): the
 * freeze is refused, since the queue records the check's file accesses for later. */
static int
queue_thread(void *arg)
{
	(void)arg;
	if (inotify_init1(IN_CLOEXEC) < 0)
		_exit(5);
	for (;;)
		pause();
	return 0;
}

static void
check_event_queue(int i, bool in_thread)
{
	struct sb_freezer f;
	struct sb_error *err = NULL;
	pid_t p;

	if (!make_cgroup(i, &f))
		return;
	p = fork();
	if (p == 0) {
		static char stack[65536];

		join_and_drop(cgdir);
		if (!in_thread) {
			(void)queue_thread(NULL);
		} else if (clone(queue_thread, stack + sizeof(stack),
			       CLONE_VM | CLONE_SIGHAND | CLONE_THREAD, NULL) < 0) {
			_exit(6);
		}
		for (;;)
			pause();
	}
	sleep_ms(200);
	ck_assert_int_eq(sb_freezer_freeze(&f, TEST_UID, 2000, &err), -1);
	ck_assert_msg(strstr(sb_error_message(err), "file event queue") != NULL, "%s",
	    sb_error_message(err));
	sb_error_release(&err);
	ck_assert_int_eq(sb_freezer_thaw(&f, NULL), 0);
	remove_cgroup(&f);
	(void)waitpid(p, NULL, 0);
}

START_TEST(test_event_queue)
{
	check_event_queue(1, false);
	check_event_queue(1, true);
	check_event_queue(0, false);
}
END_TEST

START_TEST(test_outside_v2)
{
	check_outside(0);
}
END_TEST

START_TEST(test_outside_v1)
{
	check_outside(1);
}
END_TEST

/* A fork loop in the cgroup, frozen or not: the kill leaves nothing (v1 frozen tasks
 * ignore SIGKILL until thawed). */
static void
check_kill(int i, bool frozen)
{
	struct sb_freezer f;
	struct sb_error *err = NULL;
	pid_t p;

	if (!make_cgroup(i, &f))
		return;
	p = fork();
	if (p == 0) {
		join_and_drop(cgdir);
		for (;;) {
			pid_t c = fork();

			if (c == 0) {
				sleep_ms(50);
				_exit(0);
			}
			if (c > 0)
				(void)waitpid(-1, NULL, WNOHANG);
		}
	}
	sleep_ms(100);
	if (frozen)
		ck_assert_msg(sb_freezer_freeze(&f, TEST_UID, 2000, &err) == 0, "%s",
		    sb_error_message(err));
	ck_assert_msg(sb_freezer_kill(&f, 5000, &err) == 0, "%s", sb_error_message(err));
	ck_assert_int_eq(sb_proc_count_uid(TEST_UID, NULL), 0);
	(void)waitpid(p, NULL, 0);
	remove_cgroup(&f);
}

START_TEST(test_kill_v2)
{
	check_kill(0, false);
	check_kill(0, true);
}
END_TEST

START_TEST(test_kill_v1)
{
	check_kill(1, false);
	check_kill(1, true);
}
END_TEST

/* sb_cmd.cgroup_procs: the child is in the cgroup before it runs anything of its own. */
START_TEST(test_spawn_joins)
{
	struct sb_freezer f;
	struct sb_error *err = NULL;
	struct sb_cmd cmd = SB_CMD_INIT;
	struct sb_creds creds = { TEST_UID, TEST_UID, 0, { 0 } };
	char *argv[] = { (char *)"sleep", (char *)"30", NULL };
	_cleanup_free_ pid_t *in = NULL;
	size_t n = 0;
	bool found = false;

	make_cgroup(hierarchy(0) != NULL ? 0 : 1, &f);
	cmd.path = "/bin/sleep";
	cmd.argv = argv;
	cmd.creds = &creds;
	cmd.cgroup_procs = f.procs;
	ck_assert_msg(sb_cmd_start(&cmd, &err) == 0, "%s", sb_error_message(err));
	ck_assert_int_eq(sb_freezer_members(&f, &in, &n, NULL), 0);
	for (size_t k = 0; k < n; k++)
		found = found || in[k] == cmd.pid;
	ck_assert_msg(found, "the child (pid %d) is not in the cgroup", (int)cmd.pid);
	remove_cgroup(&f);
	(void)waitpid(cmd.pid, NULL, 0);
	/* A cgroup.procs that cannot be written fails the start, names the step, and leaves
	 * nothing running. */
	cmd = (struct sb_cmd)SB_CMD_INIT;
	cmd.path = "/bin/sleep";
	cmd.argv = argv;
	cmd.creds = &creds;
	cmd.cgroup_procs = "/nonexistent/cgroup.procs";
	ck_assert_int_eq(sb_cmd_start(&cmd, &err), -1);
	ck_assert_msg(strstr(sb_error_message(err), "join the cgroup") != NULL, "%s",
	    sb_error_message(err));
	sb_error_release(&err);
	ck_assert_int_eq(sb_proc_count_uid(TEST_UID, NULL), 0);
}
END_TEST

/* What may not be used as a freezer: not a cgroup, a hierarchy's root, one others may write. */
START_TEST(test_open_refuses)
{
	struct sb_freezer f;
	struct sb_error *err = NULL;
	const char *root = hierarchy(0) != NULL ? hierarchy(0) : hierarchy(1);

	ck_assert_int_eq(sb_freezer_open("/tmp", &f, &err), -1);
	ck_assert_int_eq(sb_error_code(err), EINVAL);
	sb_error_release(&err);
	ck_assert_ptr_nonnull(root);
	ck_assert_int_eq(sb_freezer_open(root, &f, &err), -1);
	sb_error_release(&err);
	make_cgroup(hierarchy(0) != NULL ? 0 : 1, &f);
	sb_freezer_close(&f);
	ck_assert_int_eq(chmod(cgdir, 0777), 0);
	ck_assert_int_eq(sb_freezer_open(cgdir, &f, &err), -1);
	ck_assert_int_eq(sb_error_code(err), EPERM);
	sb_error_release(&err);
	ck_assert_int_eq(rmdir(cgdir), 0);
}
END_TEST

/* After each case, in its process: a case that failed left its cgroup, perhaps frozen
 * (where a v1 task ignores SIGKILL), and its victims. */
static void
sweep(void)
{
	struct sb_freezer f;

	if (cgdir[0] != '\0' && sb_freezer_open(cgdir, &f, NULL) == 0)
		remove_cgroup(&f);
	cgdir[0] = '\0';
	(void)sb_proc_kill_uid(TEST_UID, TEST_UID, 20, NULL);
}

int
main(void)
{
	Suite *s = suite_create("freezer");
	TCase *tc = tcase_create("freezer");
	SRunner *sr;
	int failed;

	if (geteuid() != 0)
		return 77; /* automake: SKIP */
	tcase_set_timeout(tc, 60);
	/* Per case: a failed one leaves its victims behind. */
	tcase_add_checked_fixture(tc, sweep, sweep);
	tcase_add_test(tc, test_timer_cont_v2);
	tcase_add_test(tc, test_timer_cont_v1);
	tcase_add_test(tc, test_outside_v2);
	tcase_add_test(tc, test_outside_v1);
	tcase_add_test(tc, test_event_queue);
	tcase_add_test(tc, test_kill_v2);
	tcase_add_test(tc, test_kill_v1);
	tcase_add_test(tc, test_spawn_joins);
	tcase_add_test(tc, test_open_refuses);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-priv.c: the privilege drop and the seccomp filters, seen from the dropped child.
 *
 * Needs root (automake SKIP, exit 77, otherwise). Each case starts sb-spawn-probe through
 * sb_cmd with credentials and/or a filter and reads back what the child sees: its ids,
 * groups, capability sets, no_new_privs and seccomp mode, and the errno of calls a filter
 * must refuse. Every "refused" result is paired with a control run that shows the same call
 * succeeding without the restriction, so an EPERM for some other reason cannot pass as a
 * working filter. The probe is copied into a world-readable temporary directory first, so
 * the dropped uid can execute it wherever the build tree is.
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/error.h"
#include "sb/mem.h"
#include "sb/priv.h"
#include "sb/spawn.h"

#define NOBODY 65534

/* A 0755 directory holding a copy of the probe; made by main() before the tests. */
static char work_dir[PATH_MAX];
static char probe_path[PATH_MAX + 32];

static const struct sb_creds nobody = { .uid = NOBODY, .gid = NOBODY, .ngroups = 0 };

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Run the probe with args (NULL-terminated) under creds and filter; stdout into *res. */
static void __attribute__((sentinel))
run_probe(const struct sb_creds *creds, const struct sb_seccomp *filter,
    struct sb_cmd_result *res, ...)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_error *err = NULL;
	va_list ap;
	int r;

	sb_argv_push(&argv, probe_path);
	va_start(ap, res);
	sb_argv_vpushl(&argv, ap);
	va_end(ap);
	c.path = probe_path;
	c.argv = argv.v;
	c.stdout_fd = SB_CMD_CAPTURE;
	c.stderr_fd = SB_CMD_CAPTURE;
	c.creds = creds;
	c.seccomp = filter;
	c.timeout_ms = 10000;
	r = sb_cmd_run(&c, res, &err);
	ck_assert_msg(r == 0, "sb_cmd_run: %s", sb_error_message(err));
	ck_assert_msg(res->exit_code == 0, "probe %s: exit %d, stderr '%s'", argv.v[1],
	    res->exit_code, res->err.s);
}

static void
assert_out_str(const struct sb_cmd_result *res, const char *expect)
{
	ck_assert_msg(res->out.len == strlen(expect) && memcmp(res->out.s, expect,
							   res->out.len) == 0,
	    "got:\n%s\nexpected:\n%s", res->out.s, expect);
}

/* What `ids` prints for a fully dropped process. */
static char *
ids_text(unsigned uid, unsigned gid, const char *groups, int seccomp)
{
	return sb_xasprintf("uid %u %u %u\n"
			    "gid %u %u %u\n"
			    "groups%s\n"
			    "CapInh:\t0000000000000000\n"
			    "CapPrm:\t0000000000000000\n"
			    "CapEff:\t0000000000000000\n"
			    "CapBnd:\t0000000000000000\n"
			    "CapAmb:\t0000000000000000\n"
			    "NoNewPrivs:\t1\n"
			    "Seccomp:\t%d\n",
	    uid, uid, uid, gid, gid, gid, groups, seccomp);
}

static bool
pid_gone(pid_t pid)
{
	char path[64], line[512];
	const char *paren;
	ssize_t n;
	int fd;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return true;
	(void)snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n <= 0)
		return true;
	line[n] = '\0';
	paren = strrchr(line, ')');
	return paren != NULL && (paren[2] == 'Z' || paren[2] == 'X');
}

static bool
wait_gone(pid_t pid, unsigned ms)
{
	uint64_t until = now_ms() + ms;

	for (;;) {
		if (pid_gone(pid))
			return true;
		if (now_ms() >= until)
			return false;
		(void)usleep(20000);
	}
}

/* --- the drop itself --- */

static const struct {
	struct sb_creds creds;
	const char *groups; /* as `ids` prints them: sorted, each after a space */
} drop_cases[] = {
	{ { NOBODY, NOBODY, 0, { 0 } }, "" },
	{ { NOBODY, NOBODY, 2, { 65533, 12345 } }, " 12345 65533" },
	{ { 12345, 23456, 1, { 23456 } }, " 23456" }, /* ids without a passwd entry */
	{ { NOBODY, NOBODY, 8, { 1, 2, 3, 4, 5, 6, 7, 8 } }, " 1 2 3 4 5 6 7 8" },
	/* Root without any capability, and unable to regain one by exec. */
	{ { 0, 0, 0, { 0 } }, "" },
};

START_TEST(test_drop_ids_table)
{
	_cleanup_free_ char *expect = NULL;
	const struct sb_creds *cr = &drop_cases[_i].creds;
	struct sb_cmd_result res;

	run_probe(cr, NULL, &res, "ids", NULL);
	expect = ids_text(cr->uid, cr->gid, drop_cases[_i].groups, 0);
	assert_out_str(&res, expect);
	sb_cmd_result_release(&res);
}
END_TEST

/* Credentials that cannot be applied exactly make the start fail; nothing runs. */
static const struct {
	struct sb_creds creds;
	int errnum;
} bad_creds_cases[] = {
	/* -1 means "leave unchanged" to setresuid/setresgid: the verification must notice. */
	{ { (uid_t)-1, NOBODY, 0, { 0 } }, EPERM },
	{ { NOBODY, (gid_t)-1, 0, { 0 } }, EPERM },
	/* More groups than the array holds. */
	{ { NOBODY, NOBODY, 9, { 0 } }, EINVAL },
	{ { NOBODY, NOBODY, (size_t)-1, { 0 } }, EINVAL },
};

START_TEST(test_drop_bad_creds_table)
{
	char *const argv[] = { probe_path, (char *)"ids", NULL };
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_error *err = NULL;
	int status;

	c.path = probe_path;
	c.argv = argv;
	c.stdout_fd = SB_CMD_CAPTURE;
	c.creds = &bad_creds_cases[_i].creds;
	ck_assert_int_eq(sb_cmd_start(&c, &err), -1);
	ck_assert_msg(sb_error_code(err) == bad_creds_cases[_i].errnum, "case %d: %s", _i,
	    sb_error_message(err));
	ck_assert_msg(strstr(sb_error_message(err), "drop privileges") != NULL, "%s",
	    sb_error_message(err));
	sb_error_release(&err);
	ck_assert_int_eq(c.pid, -1);
	ck_assert_int_eq(waitpid(-1, &status, WNOHANG), -1);
	ck_assert_int_eq(errno, ECHILD);
}
END_TEST

/* A setuid-root copy of the probe, run by the dropped child, stays unprivileged. */
START_TEST(test_setuid_binary_gains_nothing)
{
	_cleanup_free_ char *suid = NULL, *expect = NULL;
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_cmd_result res;
	struct sb_error *err = NULL;
	char *args[] = { NULL, (char *)"ids", NULL };
	char out[1024];
	int p[2], status, src, dst;
	ssize_t n, len = 0;
	pid_t pid;

	suid = sb_xasprintf("%s/suid-probe", work_dir);
	args[0] = suid;
	src = open(probe_path, O_RDONLY | O_CLOEXEC);
	dst = open(suid, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
	ck_assert(src >= 0 && dst >= 0);
	while ((n = read(src, out, sizeof(out))) > 0)
		ck_assert_int_eq(write(dst, out, (size_t)n), n);
	ck_assert_int_eq(n, 0);
	close(src);
	ck_assert_int_eq(fchown(dst, 0, 0), 0);
	ck_assert_int_eq(fchmod(dst, 04755), 0);
	close(dst);

	/*
	 * Control: the same drop by hand, without no_new_privs, does give euid 0. If it does
	 * not (a nosuid mount, say), this test would prove nothing, so it fails instead.
	 */
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char *const env[] = { NULL };

		if (dup2(p[1], 1) < 0 || setgroups(0, NULL) < 0 ||
		    setresgid(NOBODY, NOBODY, NOBODY) < 0 || setresuid(NOBODY, NOBODY, NOBODY) < 0)
			_exit(1);
		execve(suid, args, env);
		_exit(2);
	}
	close(p[1]);
	while ((n = read(p[0], out + len, sizeof(out) - 1 - (size_t)len)) > 0)
		len += n;
	close(p[0]);
	out[len] = '\0';
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_msg(strncmp(out, "uid 65534 0 0\n", 14) == 0,
	    "control: the setuid bit has no effect in %s, cannot test: %s", work_dir, out);

	/* Through sb_cmd: no_new_privs (and the empty bounding set) keep it at 65534. */
	c.path = suid;
	c.argv = args;
	c.stdout_fd = SB_CMD_CAPTURE;
	c.creds = &nobody;
	c.timeout_ms = 10000;
	ck_assert_int_eq(sb_cmd_run(&c, &res, &err), 0);
	ck_assert_int_eq(res.exit_code, 0);
	expect = ids_text(NOBODY, NOBODY, "", 0);
	assert_out_str(&res, expect);
	sb_cmd_result_release(&res);
	ck_assert_int_eq(unlink(suid), 0);
}
END_TEST

/* The death signal is set after the uid change (which clears it), so it still works. */
START_TEST(test_deathsig_survives_drop)
{
	int p[2], status;
	pid_t mid, probe = -1;

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	mid = fork();
	ck_assert_int_ge(mid, 0);
	if (mid == 0) {
		char *const args[] = { probe_path, (char *)"sleep", (char *)"30", NULL };
		struct sb_cmd c = SB_CMD_INIT;

		c.path = probe_path;
		c.argv = args;
		c.creds = &nobody;
		c.flags = SB_CMD_DEATHSIG | SB_CMD_NEW_PGRP;
		if (sb_cmd_start(&c, NULL) < 0)
			_exit(1);
		(void)!write(p[1], &c.pid, sizeof(c.pid));
		_exit(0);
	}
	close(p[1]);
	ck_assert_int_eq(read(p[0], &probe, sizeof(probe)), (ssize_t)sizeof(probe));
	close(p[0]);
	ck_assert_int_eq(waitpid(mid, &status, 0), mid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_msg(wait_gone(probe, 3000), "probe %ld outlived its parent", (long)probe);
}
END_TEST

/* After the drop, a program the new uid may not run is an exec failure, EACCES. */
START_TEST(test_exec_denied_after_drop)
{
	_cleanup_free_ char *dir = NULL, *prog = NULL;
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_error *err = NULL;
	char *argv[] = { NULL, (char *)"ids", NULL };
	int src, dst;
	char buf[65536];
	ssize_t n;

	/* A copy of the probe in a directory only root may enter. */
	dir = sb_xasprintf("%s/private", work_dir);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	prog = sb_xasprintf("%s/probe", dir);
	src = open(probe_path, O_RDONLY | O_CLOEXEC);
	dst = open(prog, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	ck_assert(src >= 0 && dst >= 0);
	while ((n = read(src, buf, sizeof(buf))) > 0)
		ck_assert_int_eq(write(dst, buf, (size_t)n), n);
	close(src);
	close(dst);
	argv[0] = prog;

	c.path = prog;
	c.argv = argv;
	c.creds = &nobody;
	ck_assert_int_eq(sb_cmd_start(&c, &err), -1);
	ck_assert_msg(sb_error_code(err) == EACCES, "%s", sb_error_message(err));
	ck_assert_msg(strstr(sb_error_message(err), "execve") != NULL, "%s",
	    sb_error_message(err));
	sb_error_release(&err);
	ck_assert_int_eq(c.pid, -1);
	ck_assert_int_eq(unlink(prog), 0);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* Root's timeout reaches the dropped child's whole group: SIGTERM, then SIGKILL. */
START_TEST(test_timeout_kills_dropped_group)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_cmd_result res;
	struct sb_error *err = NULL;

	sb_argv_pushl(&argv, probe_path, "sleep-ignore-term", "30", NULL);
	c.path = probe_path;
	c.argv = argv.v;
	c.creds = &nobody;
	c.flags = SB_CMD_NEW_PGRP | SB_CMD_DEATHSIG;
	c.timeout_ms = 300;
	c.grace_ms = 300;
	ck_assert_int_eq(sb_cmd_run(&c, &res, &err), 0);
	ck_assert(res.timed_out);
	ck_assert_int_eq(res.exit_code, 124);
	ck_assert_int_eq(res.term_signal, SIGKILL);
	ck_assert_msg(res.elapsed_ms >= 550 && res.elapsed_ms < 5000, "elapsed %llu ms",
	    (unsigned long long)res.elapsed_ms);
	sb_cmd_result_release(&res);
}
END_TEST

/* --- seccomp --- */

START_TEST(test_seccomp_deny_mkdir)
{
	static const char *const deny[] = { "mkdir", "mkdirat", NULL };
	_cleanup_free_ char *dir = NULL, *expect = NULL;
	struct sb_seccomp *filter = NULL;
	struct sb_error *err = NULL;
	struct sb_cmd_result res;
	struct {
		const struct sb_creds *creds;
		bool filtered;
		const char *result;
	} runs[] = {
		{ &nobody, false, "OK\n" }, /* controls: the directory is writable */
		{ NULL, false, "OK\n" },
		{ &nobody, true, "EPERM\n" },
		{ NULL, true, "EPERM\n" }, /* even root, whom nothing else stops */
	};

	ck_assert_int_eq(sb_seccomp_compile_deny(deny, &filter, &err), 0);
	ck_assert_ptr_nonnull(filter);
	dir = sb_xasprintf("%s/w", work_dir);
	ck_assert_int_eq(mkdir(dir, 0777), 0);
	ck_assert_int_eq(chmod(dir, 0777), 0);

	for (size_t i = 0; i < SB_ARRAY_SIZE(runs); i++) {
		_cleanup_free_ char *target = sb_xasprintf("%s/d%zu", dir, i);

		run_probe(runs[i].creds, runs[i].filtered ? filter : NULL, &res, "mkdir", target,
		    NULL);
		ck_assert_msg(sb_streq(res.out.s, runs[i].result), "run %zu: %s", i, res.out.s);
		sb_cmd_result_release(&res);
	}

	/* Everything else still works under the filter, which shows in /proc as mode 2. */
	run_probe(&nobody, filter, &res, "ids", NULL);
	expect = ids_text(NOBODY, NOBODY, "", 2);
	assert_out_str(&res, expect);
	sb_cmd_result_release(&res);
	sb_seccomp_free(filter);
}
END_TEST

/*
 * A filter that denies execve: reported by sb_cmd_start as a start failure, EPERM. (Not
 * under valgrind, which runs the child until execve and dies when an execve it allowed
 * fails; its preload library in LD_PRELOAD gives it away.)
 */
START_TEST(test_seccomp_deny_execve)
{
	static const char *const deny[] = { "sb_no_such_syscall", "execve", "execveat", NULL };
	char *const argv[] = { probe_path, (char *)"ids", NULL };
	const char *preload = getenv("LD_PRELOAD");
	struct sb_seccomp *filter = NULL;
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_error *err = NULL;

	if (preload != NULL && strstr(preload, "vgpreload") != NULL)
		return;

	/* An unknown name is nothing to deny, not an error. */
	ck_assert_int_eq(sb_seccomp_compile_deny(deny, &filter, &err), 0);
	c.path = probe_path;
	c.argv = argv;
	c.creds = &nobody;
	c.seccomp = filter;
	ck_assert_int_eq(sb_cmd_start(&c, &err), -1);
	ck_assert_int_eq(sb_error_code(err), EPERM);
	ck_assert_msg(strstr(sb_error_message(err), "execve") != NULL, "%s",
	    sb_error_message(err));
	sb_error_release(&err);
	ck_assert_int_eq(c.pid, -1);
	sb_seccomp_free(filter);
	sb_seccomp_free(NULL);
}
END_TEST

static const struct {
	const char *cmd;
	bool path_arg;	  /* the probe takes a fresh directory as argument */
	bool as_nobody;	  /* else root, whom only the filter can stop */
	const char *open; /* result without the filter; NULL: whatever the system allows */
	const char *filtered;
} untrusted_cases[] = {
	{ "unshare", false, false, "OK\n", "EPERM\n" },
	{ "mount", true, false, "OK\n", "EPERM\n" },
	{ "clone-newuser", false, false, "OK\n", "EPERM\n" },
	{ "clone-newuser", false, true, NULL, "EPERM\n" },
	{ "clone3-newuser", false, false, "OK\n", "ENOSYS\n" },
	{ "clone3-newuser", false, true, NULL, "ENOSYS\n" },
	/* File event queues go on recording for a frozen process (issue 13, third round):
	 * a check's file accesses, read back after it. */
	/* inotify and fanotify stay (file watchers): freezer.c refuses a check instead. */
	{ "inotify", false, true, "OK\n", "OK\n" },
	{ "fanotify", false, false, "OK\n", "OK\n" },
	{ "dnotify", true, true, "OK\n", "EPERM\n" },
	{ "dnotify-wide", true, true, "OK\n", "EPERM\n" },
	{ "lease", true, false, "OK\n", "EPERM\n" },
	/* OFD locks are listed in /proc/locks to every container (issue 13, fourth round);
	 * POSIX locks only within the pid namespace, and stay. */
	{ "ofd-lock", true, false, "OK\n", "EINVAL\n" },
	{ "posix-lock", true, false, "OK\n", "OK\n" },
	/* LeakSanitizer's stop-the-world child shares the file table without being a thread:
	 * it must stay allowed (priv.c:seccomp_add_clone_rules, the sanitized build). */
	{ "clone-files", false, true, "OK\n", "OK\n" },
	/* What untrusted code does need keeps working: fork, exec, wait, write. */
	{ "fork-exec", false, true, "exit 3\n", "exit 3\n" },
	{ "fork-exec", false, false, "exit 3\n", "exit 3\n" },
	{ "thread", false, true, "OK\n", "OK\n" }, /* glibc falls back from clone3 to clone */
};

START_TEST(test_seccomp_untrusted_table)
{
	_cleanup_free_ char *dir = NULL;
	struct sb_seccomp *filter = NULL;
	struct sb_error *err = NULL;
	struct sb_cmd_result res;
	const struct sb_creds *cr = untrusted_cases[_i].as_nobody ? &nobody : NULL;
	const char *arg = NULL;

	ck_assert_int_eq(sb_seccomp_compile(SB_SECCOMP_UNTRUSTED, &filter, &err), 0);
	if (untrusted_cases[_i].path_arg) {
		dir = sb_xasprintf("%s/m%d", work_dir, _i);
		ck_assert_int_eq(mkdir(dir, 0755), 0);
		arg = dir;
	}

	run_probe(cr, NULL, &res, untrusted_cases[_i].cmd, arg, NULL);
	if (untrusted_cases[_i].open != NULL)
		ck_assert_msg(sb_streq(res.out.s, untrusted_cases[_i].open),
		    "case %d control: %s", _i, res.out.s);
	sb_cmd_result_release(&res);

	run_probe(cr, filter, &res, untrusted_cases[_i].cmd, arg, NULL);
	ck_assert_msg(sb_streq(res.out.s, untrusted_cases[_i].filtered), "case %d (%s): %s", _i,
	    untrusted_cases[_i].cmd, res.out.s);
	sb_cmd_result_release(&res);

	if (dir != NULL)
		ck_assert_int_eq(rmdir(dir), 0);
	sb_seccomp_free(filter);
}
END_TEST

/* --- sb_creds_lookup --- */

START_TEST(test_creds_lookup)
{
	struct sb_creds cr, untouched;
	struct sb_error *err = NULL;

	memset(&cr, 0x5a, sizeof(cr));
	ck_assert_int_eq(sb_creds_lookup("root", &cr, &err), 0);
	ck_assert_ptr_null(err);
	ck_assert_uint_eq(cr.uid, 0);
	ck_assert_uint_eq(cr.gid, 0);
	ck_assert_uint_eq(cr.ngroups, 0);
	if (getpwnam("nobody") != NULL) {
		ck_assert_int_eq(sb_creds_lookup("nobody", &cr, &err), 0);
		ck_assert_uint_eq(cr.uid, getpwnam("nobody")->pw_uid);
		ck_assert_uint_eq(cr.gid, getpwnam("nobody")->pw_gid);
		ck_assert_uint_eq(cr.ngroups, 0);
	}

	/* A failure leaves *ret alone. */
	memset(&cr, 0x5a, sizeof(cr));
	untouched = cr;
	ck_assert_int_eq(sb_creds_lookup("sb-no-such-user-x", &cr, &err), -1);
	ck_assert_int_eq(sb_error_code(err), ENOENT);
	ck_assert(memcmp(&cr, &untouched, sizeof(cr)) == 0);
	sb_error_release(&err);
	ck_assert_int_eq(sb_creds_lookup("", &cr, &err), -1);
	ck_assert_int_eq(sb_error_code(err), ENOENT);
	sb_error_release(&err);
}
END_TEST

static Suite *
priv_suite(void)
{
	Suite *s = suite_create("priv");
	TCase *tc = tcase_create("root");

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_drop_ids_table, 0, (int)SB_ARRAY_SIZE(drop_cases));
	tcase_add_loop_test(tc, test_drop_bad_creds_table, 0, (int)SB_ARRAY_SIZE(bad_creds_cases));
	tcase_add_test(tc, test_setuid_binary_gains_nothing);
	tcase_add_test(tc, test_deathsig_survives_drop);
	tcase_add_test(tc, test_exec_denied_after_drop);
	tcase_add_test(tc, test_timeout_kills_dropped_group);
	tcase_add_test(tc, test_seccomp_deny_mkdir);
	tcase_add_test(tc, test_seccomp_deny_execve);
	tcase_add_loop_test(tc, test_seccomp_untrusted_table, 0,
	    (int)SB_ARRAY_SIZE(untrusted_cases));
	tcase_add_test(tc, test_creds_lookup);
	suite_add_tcase(s, tc);
	return s;
}

static int
rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

/*
 * Copy the probe ($SB_BUILDDIR/tests/helpers, else ../helpers next to this program) into a
 * fresh 0755 directory: the build tree may be unreadable to the uids the tests drop to.
 */
static int
setup_probe(const char *argv0)
{
	const char *builddir = getenv("SB_BUILDDIR");
	_cleanup_free_ char *self = NULL, *from = NULL;
	_cleanup_close_ int src = -1, dst = -1;
	char buf[65536];
	ssize_t n;

	if (builddir != NULL && *builddir != '\0') {
		from = sb_xasprintf("%s/tests/helpers/sb-spawn-probe", builddir);
	} else {
		self = realpath(argv0, NULL);
		if (self == NULL)
			return -1;
		from = sb_xasprintf("%s/../helpers/sb-spawn-probe", dirname(self));
	}
	(void)snprintf(work_dir, sizeof(work_dir), "/tmp/sb-test-priv-XXXXXX");
	if (mkdtemp(work_dir) == NULL || chmod(work_dir, 0755) < 0)
		return -1;
	(void)snprintf(probe_path, sizeof(probe_path), "%s/sb-spawn-probe", work_dir);
	src = open(from, O_RDONLY | O_CLOEXEC);
	dst = open(probe_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	if (src < 0 || dst < 0)
		return -1;
	while ((n = read(src, buf, sizeof(buf))) > 0)
		if (write(dst, buf, (size_t)n) != n)
			return -1;
	return n == 0 && fchmod(dst, 0755) == 0 ? 0 : -1;
}

int
main(int argc, char **argv)
{
	SRunner *sr;
	int failed;

	(void)argc;
	if (geteuid() != 0)
		return 77; /* automake: SKIP */
	if (setup_probe(argv[0]) < 0) {
		fprintf(stderr, "test-priv: cannot set up sb-spawn-probe (set SB_BUILDDIR): %s\n",
		    strerror(errno));
		if (work_dir[0] != '\0')
			(void)nftw(work_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
		return 99;
	}
	sr = srunner_create(priv_suite());
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	(void)nftw(work_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-spawn.c: struct sb_cmd, the only way the harness starts a process.
 *
 * Every case runs tests/helpers/sb-spawn-probe as the child and checks exact values: exit
 * codes and signals, exec failures told apart from exits, the environment, stdin, argv bytes
 * that a shell would have interpreted, fd leaks, output capture and its cap, the timeout
 * with its SIGTERM -> grace -> SIGKILL escalation, process groups and sessions, and
 * sb_cmd_find_program. Timing checks use generous bounds: they catch a hang or a missing
 * escalation, not a slow machine.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/error.h"
#include "sb/exit.h"
#include "sb/limits.h"
#include "sb/mem.h"
#include "sb/spawn.h"

/* Absolute path of the probe, found once by main() before any test runs. */
static char probe_path[PATH_MAX];

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * Point c at the probe with the given arguments (NULL-terminated), capturing stdout and
 * stderr, with a safety timeout so that a broken spawner fails the test instead of hanging.
 */
static void __attribute__((sentinel))
probe_setup(struct sb_cmd *c, struct sb_argv *argv, ...)
{
	const char *s;
	va_list ap;

	sb_argv_push(argv, probe_path);
	va_start(ap, argv);
	while ((s = va_arg(ap, const char *)) != NULL)
		sb_argv_push(argv, s);
	va_end(ap);
	c->path = probe_path;
	c->argv = argv->v;
	c->stdout_fd = SB_CMD_CAPTURE;
	c->stderr_fd = SB_CMD_CAPTURE;
	c->timeout_ms = 10000;
}

static void
run_ok(struct sb_cmd *c, struct sb_cmd_result *res)
{
	struct sb_error *err = NULL;
	int r = sb_cmd_run(c, res, &err);

	ck_assert_msg(r == 0, "sb_cmd_run: %s", sb_error_message(err));
	ck_assert_ptr_null(err);
}

/* b holds exactly the len bytes at expect. */
static void
assert_buf_eq(const struct sb_buf *b, const void *expect, size_t len, const char *what)
{
	ck_assert_msg(b->len == len, "%s: %zu bytes, expected %zu: '%.300s'", what, b->len, len,
	    b->s);
	ck_assert_msg(memcmp(b->s, expect, len) == 0, "%s: '%.300s'", what, b->s);
	ck_assert_int_eq(b->s[len], '\0');
}

static void
assert_out_str(const struct sb_cmd_result *res, const char *expect)
{
	assert_buf_eq(&res->out, expect, strlen(expect), "stdout");
}

/*
 * Under `CK_FORK=no valgrind`, the child runs on valgrind's emulated CPU until execve, and
 * valgrind cannot survive an execve that fails after its own checks passed (a script whose
 * interpreter is missing). Its preload library in LD_PRELOAD gives it away.
 */
static bool
under_valgrind(void)
{
	const char *p = getenv("LD_PRELOAD");

	return p != NULL && strstr(p, "vgpreload") != NULL;
}

/* The number of fds open in this process, to see that the spawner leaks none here. */
static int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory stream's own */
}

/* A process is gone when it no longer exists or is a zombie nobody has reaped yet. */
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
	/* "pid (comm) S ...": comm may contain anything, so look after the last ')'. */
	paren = strrchr(line, ')');
	return paren != NULL && (paren[2] == 'Z' || paren[2] == 'X');
}

/* Poll for up to ms milliseconds: a killed process takes a moment to become a zombie. */
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

/* The first line of out as a pid. */
static pid_t
out_pid(const struct sb_cmd_result *res)
{
	char *end;
	long v = strtol(res->out.s, &end, 10);

	ck_assert_msg(v > 1 && *end == '\n', "no pid in '%s'", res->out.s);
	return (pid_t)v;
}

static int
rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

static void
rm_tree(const char *path)
{
	(void)nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void
make_tmpdir(char *buf, size_t size)
{
	int n = snprintf(buf, size, "/tmp/sb-test-spawn-XXXXXX");

	ck_assert(n > 0 && (size_t)n < size);
	ck_assert_ptr_nonnull(mkdtemp(buf));
}

static void
write_file(const char *path, const char *content, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);

	ck_assert_msg(fd >= 0, "create '%s': %s", path, strerror(errno));
	ck_assert_int_eq(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
}

/* --- exit status --- */

static const struct {
	const char *cmd, *arg;
	int exit_code;
	int term_signal;
} exit_cases[] = {
	{ "exit", "0", 0, 0 },
	{ "exit", "1", 1, 0 },
	{ "exit", "7", 7, 0 },
	{ "exit", "126", 126, 0 }, /* a child's own 126/127 are plain exits */
	{ "exit", "127", 127, 0 },
	{ "exit", "255", 255, 0 },
	{ "raise", "11", SB_EXIT_SIGNAL_BASE + SIGSEGV, SIGSEGV },
	{ "raise", "9", SB_EXIT_SIGNAL_BASE + SIGKILL, SIGKILL },
	{ "raise", "15", SB_EXIT_SIGNAL_BASE + SIGTERM, SIGTERM },
	{ "raise", "13", SB_EXIT_SIGNAL_BASE + SIGPIPE, SIGPIPE },
};

START_TEST(test_exit_status_table)
{
	static const struct sb_rlimit_set no_core = { RLIMIT_CORE, 0, 0 };
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_cmd_result res;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_term, old_pipe;
	sigset_t block, old_mask;

	/*
	 * The child must start with default dispositions and an empty mask whatever the parent
	 * has: ignore SIGTERM and SIGPIPE and block SIGSEGV here (restored below, for
	 * CK_FORK=no). A child that inherited them would survive its raise() and exit 3.
	 */
	ck_assert_int_eq(sigaction(SIGTERM, &ign, &old_term), 0);
	ck_assert_int_eq(sigaction(SIGPIPE, &ign, &old_pipe), 0);
	sigemptyset(&block);
	sigaddset(&block, SIGSEGV);
	ck_assert_int_eq(sigprocmask(SIG_BLOCK, &block, &old_mask), 0);

	probe_setup(&c, &argv, exit_cases[_i].cmd, exit_cases[_i].arg, NULL);
	c.rlimits = &no_core; /* a SIGSEGV must not write a core file */
	c.n_rlimits = 1;
	run_ok(&c, &res);

	ck_assert_msg(res.exit_code == exit_cases[_i].exit_code, "case %d (%s %s): exit %d",
	    _i, exit_cases[_i].cmd, exit_cases[_i].arg, res.exit_code);
	ck_assert_int_eq(res.term_signal, exit_cases[_i].term_signal);
	ck_assert(!res.timed_out);
	assert_out_str(&res, "");
	assert_buf_eq(&res.err, "", 0, "stderr");
	ck_assert_int_eq(c.pid, -1);
	ck_assert_int_eq(c.out_pipe, -1);
	ck_assert_int_eq(c.err_pipe, -1);
	ck_assert_int_eq(c.pidfd, -1);
	sb_cmd_result_release(&res);

	ck_assert_int_eq(sigprocmask(SIG_SETMASK, &old_mask, NULL), 0);
	ck_assert_int_eq(sigaction(SIGTERM, &old_term, NULL), 0);
	ck_assert_int_eq(sigaction(SIGPIPE, &old_pipe, NULL), 0);
}
END_TEST

/* sb_cmd_kill on a running child: a signal death, not a timeout. */
START_TEST(test_kill)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_cmd_result res;
	struct sb_error *err = NULL;

	probe_setup(&c, &argv, "sleep", "30", NULL);
	ck_assert_int_eq(sb_cmd_start(&c, &err), 0);
	ck_assert_int_gt(c.pid, 0);
	sb_cmd_kill(&c, SIGKILL);
	ck_assert_int_eq(sb_cmd_wait(&c, &res, &err), 0);
	ck_assert_int_eq(res.exit_code, 128 + SIGKILL);
	ck_assert_int_eq(res.term_signal, SIGKILL);
	ck_assert(!res.timed_out);
	ck_assert_uint_lt(res.elapsed_ms, 5000);
	sb_cmd_result_release(&res);
}
END_TEST

/* --- exec failure --- */

enum exec_target {
	TARGET_MISSING,	       /* no such file */
	TARGET_MISSING_DIR,    /* a directory on the way does not exist */
	TARGET_NOT_DIR,	       /* a file used as a directory */
	TARGET_NOT_EXECUTABLE, /* mode 0644 */
	TARGET_DIRECTORY,      /* a directory */
	TARGET_BAD_INTERP,     /* #! names a missing interpreter */
};

static const struct {
	enum exec_target target;
	unsigned flags;
	int errnum;
	int exit_code;
} exec_fail_cases[] = {
	{ TARGET_MISSING, 0, ENOENT, 127 },
	{ TARGET_MISSING, SB_CMD_NEW_PGRP, ENOENT, 127 },
	{ TARGET_MISSING_DIR, 0, ENOENT, 127 },
	{ TARGET_NOT_DIR, 0, ENOTDIR, 127 },
	{ TARGET_NOT_EXECUTABLE, 0, EACCES, 126 },
	{ TARGET_NOT_EXECUTABLE, SB_CMD_NEW_SESSION, EACCES, 126 },
	{ TARGET_DIRECTORY, 0, EACCES, 126 },
	{ TARGET_BAD_INTERP, 0, ENOENT, 127 },
};

START_TEST(test_exec_failure_table)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	_cleanup_free_ char *path = NULL;
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_error *err = NULL;
	char dir[PATH_MAX];
	int fds_before, status;

	make_tmpdir(dir, sizeof(dir));
	switch (exec_fail_cases[_i].target) {
	case TARGET_MISSING:
		path = sb_xasprintf("%s/missing", dir);
		break;
	case TARGET_MISSING_DIR:
		path = sb_xasprintf("%s/no/such/dir/prog", dir);
		break;
	case TARGET_NOT_DIR:
		path = sb_xasprintf("%s/file", dir);
		write_file(path, "", 0755);
		free(path);
		path = sb_xasprintf("%s/file/prog", dir);
		break;
	case TARGET_NOT_EXECUTABLE:
		path = sb_xasprintf("%s/script", dir);
		write_file(path, "#!/bin/sh\nexit 0\n", 0644);
		break;
	case TARGET_DIRECTORY:
		path = sb_xasprintf("%s/subdir", dir);
		ck_assert_int_eq(mkdir(path, 0755), 0);
		break;
	case TARGET_BAD_INTERP:
		if (under_valgrind()) {
			rm_tree(dir);
			return;
		}
		path = sb_xasprintf("%s/script", dir);
		write_file(path, "#!/nonexistent/sb-interpreter\n", 0755);
		break;
	}

	sb_argv_pushl(&argv, path, "argv", NULL);
	c.path = path;
	c.argv = argv.v;
	c.stdin_fd = SB_CMD_CAPTURE;
	c.stdout_fd = SB_CMD_CAPTURE;
	c.stderr_fd = SB_CMD_CAPTURE;
	c.flags = exec_fail_cases[_i].flags;
	fds_before = count_fds();

	ck_assert_int_eq(sb_cmd_start(&c, &err), -1);
	ck_assert_ptr_nonnull(err);
	ck_assert_msg(sb_error_code(err) == exec_fail_cases[_i].errnum, "case %d: code %d: %s",
	    _i, sb_error_code(err), sb_error_message(err));
	ck_assert_msg(strstr(sb_error_message(err), "execve") != NULL, "%s",
	    sb_error_message(err));
	ck_assert_int_eq(sb_exit_code_for_exec_errno(sb_error_code(err)),
	    exec_fail_cases[_i].exit_code);
	sb_error_release(&err);

	/* Nothing left running or unreaped, no state in c, no fd left open here. */
	ck_assert_int_eq(c.pid, -1);
	ck_assert_int_eq(c.pidfd, -1);
	ck_assert_int_eq(c.in_pipe, -1);
	ck_assert_int_eq(c.out_pipe, -1);
	ck_assert_int_eq(c.err_pipe, -1);
	ck_assert_int_eq(waitpid(-1, &status, WNOHANG), -1);
	ck_assert_int_eq(errno, ECHILD);
	ck_assert_int_eq(count_fds(), fds_before);
	rm_tree(dir);
}
END_TEST

static const struct {
	int errnum, exit_code;
} exec_errno_cases[] = {
	{ ENOENT, SB_EXIT_NOT_FOUND },	  { ENOTDIR, SB_EXIT_NOT_FOUND },
	{ EACCES, SB_EXIT_CANNOT_EXEC },  { EPERM, SB_EXIT_CANNOT_EXEC },
	{ ENOEXEC, SB_EXIT_CANNOT_EXEC }, { ETXTBSY, SB_EXIT_CANNOT_EXEC },
	{ ELOOP, SB_EXIT_CANNOT_EXEC },
};

START_TEST(test_exit_code_for_exec_errno_table)
{
	ck_assert_int_eq(sb_exit_code_for_exec_errno(exec_errno_cases[_i].errnum),
	    exec_errno_cases[_i].exit_code);
}
END_TEST

/* Incomplete commands are refused before anything is started. */
START_TEST(test_incomplete_command)
{
	char *const no_args[] = { NULL };
	char *const args[] = { probe_path, NULL };
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_error *err = NULL;

	ck_assert_int_eq(sb_cmd_start(&c, &err), -1);
	ck_assert_int_eq(sb_error_code(err), EINVAL);
	sb_error_release(&err);
	c.path = probe_path;
	ck_assert_int_eq(sb_cmd_start(&c, &err), -1);
	ck_assert_int_eq(sb_error_code(err), EINVAL);
	sb_error_release(&err);
	c.argv = no_args;
	ck_assert_int_eq(sb_cmd_start(&c, &err), -1);
	ck_assert_int_eq(sb_error_code(err), EINVAL);
	sb_error_release(&err);
	c.path = NULL;
	c.argv = args;
	ck_assert_int_eq(sb_cmd_start(&c, &err), -1);
	ck_assert_int_eq(sb_error_code(err), EINVAL);
	sb_error_release(&err);
	ck_assert_int_eq(c.pid, -1);
}
END_TEST

/* --- environment --- */

START_TEST(test_env_exact)
{
	static const char expect[] = "A=1\nB=two words\nC=\n"
				     "WEIRD=$(id); `id` 'q' \"dq\" \\ | & > <\n"
				     "PATH=/nonexistent\n";
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT, envp = SB_ARGV_INIT;
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_cmd_result res;

	/* Set in the parent: it must reach no child. */
	ck_assert_int_eq(setenv("SB_SPAWN_SECRET", "leaked", 1), 0);

	sb_argv_pushl(&envp, "A=1", "B=two words", "C=", "WEIRD=$(id); `id` 'q' \"dq\" \\ | & > <",
	    "PATH=/nonexistent", NULL);
	probe_setup(&c, &argv, "env", NULL);
	c.envp = envp.v;
	run_ok(&c, &res);
	ck_assert_int_eq(res.exit_code, 0);
	assert_out_str(&res, expect);
	sb_cmd_result_release(&res);

	/* NULL: an empty environment, not the parent's. */
	c.envp = NULL;
	run_ok(&c, &res);
	ck_assert_int_eq(res.exit_code, 0);
	assert_out_str(&res, "");
	sb_cmd_result_release(&res);

	ck_assert_int_eq(unsetenv("SB_SPAWN_SECRET"), 0);
}
END_TEST

/* --- stdin --- */

START_TEST(test_stdin_default_devnull)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT, argv2 = SB_ARGV_INIT;
	struct sb_cmd c = SB_CMD_INIT, c2 = SB_CMD_INIT;
	struct sb_cmd_result res;
	uint64_t t0 = now_ms();

	/* The probe copies stdin until EOF: with /dev/null it ends at once, and never hangs. */
	probe_setup(&c, &argv, "stdin", NULL);
	c.timeout_ms = 3000;
	run_ok(&c, &res);
	ck_assert(!res.timed_out);
	ck_assert_int_eq(res.exit_code, 0);
	assert_out_str(&res, "");
	ck_assert_uint_lt(now_ms() - t0, 2500);
	sb_cmd_result_release(&res);

	probe_setup(&c2, &argv2, "fdpath", "0", NULL);
	run_ok(&c2, &res);
	ck_assert_int_eq(res.exit_code, 0);
	assert_out_str(&res, "/dev/null\n");
	sb_cmd_result_release(&res);
}
END_TEST

#define STDIN_BIG (1024 * 1024)

static const struct {
	const char *name;
	const char *data; /* NULL: STDIN_BIG bytes of a pattern with NULs in it */
	size_t len;
} stdin_cases[] = {
	{ "empty", "", 0 },
	{ "text", "hello\nworld\n", 12 },
	{ "nul bytes", "a\0b\0\0c\n\0", 8 },
	{ "only nul", "\0", 1 },
	{ "1 MiB", NULL, STDIN_BIG },
};

START_TEST(test_stdin_data_table)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	_cleanup_free_ char *big = NULL;
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_cmd_result res;
	const char *data = stdin_cases[_i].data;
	size_t len = stdin_cases[_i].len;

	if (data == NULL) {
		big = sb_xmalloc(len);
		for (size_t k = 0; k < len; k++)
			big[k] = (char)((k * 31 + k / 251) % 256);
		data = big;
	}
	probe_setup(&c, &argv, "stdin", NULL);
	c.stdin_fd = SB_CMD_CAPTURE;
	c.stdin_data = data;
	c.stdin_len = len;
	c.capture_max = 2 * STDIN_BIG;
	run_ok(&c, &res);
	ck_assert_msg(res.exit_code == 0, "%s: exit %d", stdin_cases[_i].name, res.exit_code);
	ck_assert_uint_eq(res.out_dropped, 0);
	assert_buf_eq(&res.out, data, len, stdin_cases[_i].name);
	ck_assert_int_eq(c.in_pipe, -1);
	sb_cmd_result_release(&res);
}
END_TEST

/* A child that exits without reading its stdin: no SIGPIPE here, no hang, its own status. */
START_TEST(test_stdin_unread)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	_cleanup_free_ char *big = sb_xcalloc(1, STDIN_BIG);
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_cmd_result res;

	probe_setup(&c, &argv, "exit", "5", NULL);
	c.stdin_fd = SB_CMD_CAPTURE;
	c.stdin_data = big;
	c.stdin_len = STDIN_BIG;
	run_ok(&c, &res);
	ck_assert_int_eq(res.exit_code, 5);
	ck_assert_int_eq(res.term_signal, 0);
	ck_assert(!res.timed_out);
	ck_assert_int_eq(c.in_pipe, -1);
	sb_cmd_result_release(&res);
}
END_TEST

/* --- argv: no shell, so metacharacters are inert bytes --- */

START_TEST(test_argv_metachars)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	_cleanup_free_ char *evil = NULL, *odd_dir = NULL, *odd_file = NULL, *link = NULL;
	_cleanup_free_ char *keep = NULL, *pwned = NULL;
	_cleanup_buf_ struct sb_buf expect = SB_BUF_INIT(1 << 20);
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_cmd_result res;
	struct stat st;
	char dir[PATH_MAX];

	make_tmpdir(dir, sizeof(dir));
	keep = sb_xasprintf("%s/keep", dir);
	write_file(keep, "keep\n", 0644);
	pwned = sb_xasprintf("%s/pwned", dir);
	/* What a shell would run: touch the marker, command substitutions, rm the keeper. */
	evil = sb_xasprintf("'; touch %s; echo $(id) `touch %s` \"$(touch %s)\" && rm -rf %s | "
			    "cat > %s; $((1/0)) ${HOME} ~ * ?",
	    pwned, pwned, pwned, keep, pwned);
	/* A directory and a program path with every character a shell cares about. */
	odd_dir = sb_xasprintf("%s/dir $HOME; 'single' \"double\" `id` $(id)\nnewline\t&|<>*?",
	    dir);
	ck_assert_int_eq(mkdir(odd_dir, 0755), 0);
	odd_file = sb_xasprintf("%s/file $x;'q'\"q\"`id`\n.txt", odd_dir);
	write_file(odd_file, "", 0644);
	/* No '/' in a name: a shell would create "pwned" in the child's directory, dir. */
	link = sb_xasprintf("%s/probe; echo $(touch pwned) `touch pwned` \"\n", odd_dir);
	ck_assert_int_eq(symlink(probe_path, link), 0);

	sb_argv_pushl(&argv, link, "argv", evil, odd_file, "", " ", "-c", "\xff\xfe", "a=b",
	    "--", NULL);
	c.path = link;
	c.argv = argv.v;
	c.stdout_fd = SB_CMD_CAPTURE;
	c.timeout_ms = 10000;
	c.cwd_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(c.cwd_fd, 0);
	run_ok(&c, &res);
	ck_assert_int_eq(res.exit_code, 0);

	for (size_t i = 0; i < argv.n; i++)
		ck_assert_int_eq(sb_buf_appendf(&expect, NULL, "[%zu]=%s\n", i, argv.v[i]), 0);
	assert_buf_eq(&res.out, expect.s, expect.len, "argv");
	sb_cmd_result_release(&res);

	/* Nothing was run: no marker, and the file rm was pointed at is still there. */
	ck_assert_int_eq(lstat(pwned, &st), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(lstat(keep, &st), 0);
	ck_assert_int_eq(lstat(odd_file, &st), 0);
	close(c.cwd_fd);
	rm_tree(dir);
}
END_TEST

/* --- fds --- */

START_TEST(test_no_fd_leak)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_cmd_result res;
	int leak[8], n = 0, p[2], sp[2], fds_before;

	/* Open fds the way careless code does: none of them close-on-exec. */
	leak[n++] = open("/dev/null", O_RDONLY);
	ck_assert_int_eq(pipe(p), 0);
	leak[n++] = p[0];
	leak[n++] = p[1];
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	leak[n++] = sp[0];
	leak[n++] = sp[1];
	leak[n++] = memfd_create("sb-leak", 0);
	leak[n++] = fcntl(leak[0], F_DUPFD, 1000); /* far above the others */
	leak[n++] = open("/tmp", O_RDONLY | O_DIRECTORY);
	for (int i = 0; i < n; i++) {
		ck_assert_int_ge(leak[i], 3);
		ck_assert_int_eq(fcntl(leak[i], F_GETFD) & FD_CLOEXEC, 0);
	}

	/* With the spawner's own pipes on all three, and a directory fd for fchdir. */
	probe_setup(&c, &argv, "fds", NULL);
	c.cwd_fd = leak[n - 1];
	c.stdin_fd = SB_CMD_CAPTURE;
	c.stdin_data = "";
	fds_before = count_fds();
	run_ok(&c, &res);
	ck_assert_int_eq(res.exit_code, 0);
	assert_out_str(&res, "");
	assert_buf_eq(&res.err, "", 0, "stderr");
	ck_assert_int_eq(count_fds(), fds_before);
	sb_cmd_result_release(&res);

	/* An explicit stdin fd without close-on-exec becomes fd 0, and only that. */
	c.stdin_fd = leak[0];
	c.stdin_data = NULL;
	run_ok(&c, &res);
	ck_assert_int_eq(res.exit_code, 0);
	assert_out_str(&res, "");
	ck_assert_int_eq(count_fds(), fds_before);
	sb_cmd_result_release(&res);

	for (int i = 0; i < n; i++)
		close(leak[i]);
}
END_TEST

/* --- capture --- */

START_TEST(test_capture_streams)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_cmd_result res;

	probe_setup(&c, &argv, "both", "to stdout\n", "to stderr\n", NULL);
	run_ok(&c, &res);
	ck_assert_int_eq(res.exit_code, 0);
	assert_out_str(&res, "to stdout\n");
	assert_buf_eq(&res.err, "to stderr\n", 10, "stderr");
	sb_cmd_result_release(&res);

	/* Merged: one pipe, in the order written. */
	c.flags = SB_CMD_STDERR_TO_STDOUT;
	run_ok(&c, &res);
	ck_assert_int_eq(res.exit_code, 0);
	assert_out_str(&res, "to stdout\nto stderr\n");
	assert_buf_eq(&res.err, "", 0, "stderr");
	sb_cmd_result_release(&res);

	/* stdout to /dev/null, stderr captured. */
	c.flags = 0;
	c.stdout_fd = SB_CMD_DEVNULL;
	run_ok(&c, &res);
	ck_assert_int_eq(res.exit_code, 0);
	assert_out_str(&res, "");
	assert_buf_eq(&res.err, "to stderr\n", 10, "stderr");
	sb_cmd_result_release(&res);

	/* Merged into /dev/null: nothing captured at all. */
	c.flags = SB_CMD_STDERR_TO_STDOUT;
	run_ok(&c, &res);
	ck_assert_int_eq(res.exit_code, 0);
	assert_out_str(&res, "");
	assert_buf_eq(&res.err, "", 0, "stderr");
	sb_cmd_result_release(&res);
}
END_TEST

/* Explicit fds, crossed over on purpose: stdout to our fd 2 and stderr to our fd 1. */
START_TEST(test_capture_explicit_fds_swapped)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_cmd_result res;
	char dir[PATH_MAX], path1[PATH_MAX + 8], path2[PATH_MAX + 8], got[64];
	int saved1, saved2, f1, f2;

	make_tmpdir(dir, sizeof(dir));
	(void)snprintf(path1, sizeof(path1), "%s/one", dir);
	(void)snprintf(path2, sizeof(path2), "%s/two", dir);
	f1 = open(path1, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	f2 = open(path2, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	ck_assert(f1 >= 0 && f2 >= 0);
	saved1 = fcntl(1, F_DUPFD_CLOEXEC, 3);
	saved2 = fcntl(2, F_DUPFD_CLOEXEC, 3);
	ck_assert(saved1 >= 0 && saved2 >= 0);
	ck_assert_int_eq(dup2(f1, 1), 1);
	ck_assert_int_eq(dup2(f2, 2), 2);

	probe_setup(&c, &argv, "both", "OUT", "ERR", NULL);
	c.stdout_fd = 2;
	c.stderr_fd = 1;
	run_ok(&c, &res);

	ck_assert_int_eq(dup2(saved1, 1), 1);
	ck_assert_int_eq(dup2(saved2, 2), 2);
	close(saved1);
	close(saved2);
	ck_assert_int_eq(res.exit_code, 0);
	assert_out_str(&res, "");
	sb_cmd_result_release(&res);

	ck_assert_int_eq(pread(f1, got, sizeof(got), 0), 3);
	ck_assert(memcmp(got, "ERR", 3) == 0);
	ck_assert_int_eq(pread(f2, got, sizeof(got), 0), 3);
	ck_assert(memcmp(got, "OUT", 3) == 0);
	close(f1);
	close(f2);
	rm_tree(dir);
}
END_TEST

static const struct {
	const char *cmd;
	size_t bytes; /* what the probe writes in total (line: plus '\n') */
	size_t cap;
} cap_cases[] = {
	{ "spam", 65536, 65536 },		 /* exactly the cap: nothing dropped */
	{ "spam", 65537, 65536 },		 /* one byte over */
	{ "spam", 100, 0 },			 /* 0: SB_CAPTURE_DEFAULT */
	{ "spam", 3 * 1024 * 1024, 0 },		 /* over the default */
	{ "line", 10 * 1000 * 1000, 64 * 1024 }, /* 10 MB in one line */
	{ "spam", 1, 1 },
};

START_TEST(test_capture_cap_table)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_cmd_result res;
	char count[32];
	size_t total = cap_cases[_i].bytes, cap = cap_cases[_i].cap;
	size_t keep;

	(void)snprintf(count, sizeof(count), "%zu", cap_cases[_i].bytes);
	if (sb_streq(cap_cases[_i].cmd, "line"))
		total++;
	if (cap == 0)
		cap = SB_CAPTURE_DEFAULT;
	keep = total < cap ? total : cap;

	probe_setup(&c, &argv, cap_cases[_i].cmd, count, NULL);
	c.capture_max = cap_cases[_i].cap;
	run_ok(&c, &res);
	/* The child was never blocked on a full pipe: it finished, and quickly. */
	ck_assert_msg(res.exit_code == 0 && !res.timed_out, "case %d: exit %d", _i,
	    res.exit_code);
	ck_assert_uint_lt(res.elapsed_ms, 8000);
	ck_assert_msg(res.out.len == keep, "case %d: kept %zu, expected %zu", _i, res.out.len,
	    keep);
	ck_assert_msg(res.out_dropped == total - keep, "case %d: dropped %zu, expected %zu", _i,
	    res.out_dropped, total - keep);
	ck_assert_uint_le(res.out.len, res.out.max);
	for (size_t k = 0; k < keep; k++)
		if (res.out.s[k] != (sb_streq(cap_cases[_i].cmd, "line") ? 'a' : 'x'))
			ck_abort_msg("case %d: byte %zu is %d", _i, k, res.out.s[k]);
	ck_assert_uint_eq(res.err.len, 0);
	ck_assert_uint_eq(res.err_dropped, 0);
	sb_cmd_result_release(&res);
}
END_TEST

/* --- timeout --- */

static const struct {
	const char *cmd;
	unsigned flags;
	uint64_t timeout_ms, grace_ms;
	int term_signal;
	uint64_t min_ms, max_ms; /* generous bounds on elapsed_ms */
} timeout_cases[] = {
	/* A sleeper dies of the SIGTERM. */
	{ "sleep", 0, 300, 5000, SIGTERM, 250, 4000 },
	{ "sleep", SB_CMD_NEW_PGRP, 300, 5000, SIGTERM, 250, 4000 },
	{ "sleep", SB_CMD_NEW_SESSION, 300, 5000, SIGTERM, 250, 4000 },
	/* One that ignores SIGTERM is SIGKILLed after the grace: about 300 + 700 ms. */
	{ "sleep-ignore-term", 0, 300, 700, SIGKILL, 950, 5000 },
	{ "sleep-ignore-term", SB_CMD_NEW_PGRP, 300, 700, SIGKILL, 950, 5000 },
	/* grace_ms 0: SB_KILL_GRACE_MS. */
	{ "sleep-ignore-term", 0, 200, 0, SIGKILL, 200 + SB_KILL_GRACE_MS - 50,
	    200 + SB_KILL_GRACE_MS + 4000 },
};

START_TEST(test_timeout_table)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_cmd_result res;
	uint64_t t0;

	probe_setup(&c, &argv, timeout_cases[_i].cmd, "30", NULL);
	c.flags = timeout_cases[_i].flags;
	c.timeout_ms = timeout_cases[_i].timeout_ms;
	c.grace_ms = timeout_cases[_i].grace_ms;
	t0 = now_ms();
	run_ok(&c, &res);
	ck_assert(res.timed_out);
	ck_assert_int_eq(res.exit_code, SB_EXIT_TIMEOUT);
	ck_assert_int_eq(res.term_signal, timeout_cases[_i].term_signal);
	ck_assert_msg(res.elapsed_ms >= timeout_cases[_i].min_ms &&
		res.elapsed_ms <= timeout_cases[_i].max_ms,
	    "case %d: elapsed %" PRIu64 " ms", _i, res.elapsed_ms);
	ck_assert_uint_le(now_ms() - t0, timeout_cases[_i].max_ms + 1000);
	sb_cmd_result_release(&res);
}
END_TEST

/* A child that ends before its timeout is not reported as timed out, however large it is. */
static const uint64_t big_timeouts[] = { 5000, (uint64_t)INT32_MAX + 10, UINT64_MAX / 2,
	UINT64_MAX };

START_TEST(test_timeout_not_reached_table)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_cmd_result res;

	probe_setup(&c, &argv, "exit", "3", NULL);
	c.timeout_ms = big_timeouts[_i];
	c.grace_ms = big_timeouts[_i];
	c.drain_ms = big_timeouts[_i];
	run_ok(&c, &res);
	ck_assert_msg(!res.timed_out, "timeout %" PRIu64 " fired", big_timeouts[_i]);
	ck_assert_int_eq(res.exit_code, 3);
	ck_assert_uint_lt(res.elapsed_ms, 5000);
	sb_cmd_result_release(&res);
}
END_TEST

/* --- process groups --- */

/* With its own group, whatever the child left in it is killed when it exits. */
START_TEST(test_group_reaped)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_cmd_result res;
	pid_t grandchild;

	probe_setup(&c, &argv, "fork-sleeper", NULL);
	c.flags = SB_CMD_NEW_PGRP;
	c.drain_ms = 5000; /* the sleeper holds stdout: only its death ends the read early */
	run_ok(&c, &res);
	ck_assert_int_eq(res.exit_code, 0);
	ck_assert(!res.timed_out);
	grandchild = out_pid(&res);
	ck_assert_msg(wait_gone(grandchild, 3000), "grandchild %ld still alive",
	    (long)grandchild);
	ck_assert_uint_lt(res.elapsed_ms, 3000);
	sb_cmd_result_release(&res);
}
END_TEST

/*
 * Without a group of its own (or with NO_GROUP_REAP) it survives, holding our stdout pipe,
 * and drain_ms bounds the wait (0: one second).
 */
static const struct {
	unsigned flags;
	uint64_t drain_ms;
	uint64_t min_ms, max_ms;
} survive_cases[] = {
	{ 0, 300, 250, 3000 },
	{ SB_CMD_NEW_PGRP | SB_CMD_NO_GROUP_REAP, 300, 250, 3000 },
	{ 0, 0, 950, 4000 },
};

START_TEST(test_group_not_reaped_table)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_cmd_result res;
	pid_t grandchild;
	uint64_t t0;

	probe_setup(&c, &argv, "fork-sleeper", NULL);
	c.flags = survive_cases[_i].flags;
	c.drain_ms = survive_cases[_i].drain_ms;
	t0 = now_ms();
	run_ok(&c, &res);
	ck_assert_uint_ge(now_ms() - t0, survive_cases[_i].min_ms);
	ck_assert_uint_lt(now_ms() - t0, survive_cases[_i].max_ms);
	ck_assert(!res.timed_out);
	ck_assert_int_eq(c.out_pipe, -1);
	ck_assert_int_eq(res.exit_code, 0);
	grandchild = out_pid(&res);
	ck_assert_msg(!pid_gone(grandchild), "grandchild died");
	ck_assert_int_eq(kill(grandchild, SIGKILL), 0);
	ck_assert(wait_gone(grandchild, 3000));
	sb_cmd_result_release(&res);
}
END_TEST

/* A daemon (own session) holding our stdout pipe cannot keep sb_cmd_wait past drain_ms. */
START_TEST(test_daemon_does_not_hang_wait)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_cmd_result res;
	pid_t daemon_pid;
	uint64_t t0;

	probe_setup(&c, &argv, "daemonize", NULL);
	c.flags = SB_CMD_NEW_PGRP;
	c.drain_ms = 400;
	t0 = now_ms();
	run_ok(&c, &res);
	ck_assert_uint_lt(now_ms() - t0, 3000);
	ck_assert_uint_ge(now_ms() - t0, 350);
	ck_assert_int_eq(res.exit_code, 0);
	ck_assert(!res.timed_out);
	ck_assert_int_eq(c.out_pipe, -1);
	daemon_pid = out_pid(&res);
	/* It escaped the group on purpose; we clean up after it. */
	ck_assert_int_eq(kill(daemon_pid, SIGKILL), 0);
	ck_assert(wait_gone(daemon_pid, 3000));
	sb_cmd_result_release(&res);
}
END_TEST

static const struct {
	unsigned flags;
	bool own_group, own_session;
} pgid_cases[] = {
	{ 0, false, false },
	{ SB_CMD_NEW_PGRP, true, false },
	{ SB_CMD_NEW_SESSION, true, true },
	{ SB_CMD_NEW_SESSION | SB_CMD_NEW_PGRP, true, true },
};

START_TEST(test_pgid_session_table)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_cmd_result res;
	struct sb_error *err = NULL;
	long pid, pgid, sid;
	pid_t started;

	probe_setup(&c, &argv, "pgid", NULL);
	c.flags = pgid_cases[_i].flags;
	ck_assert_int_eq(sb_cmd_start(&c, &err), 0);
	started = c.pid;
	ck_assert_int_eq(sb_cmd_wait(&c, &res, &err), 0);
	ck_assert_int_eq(res.exit_code, 0);
	ck_assert_int_eq(sscanf(res.out.s, "pid %ld pgid %ld sid %ld", &pid, &pgid, &sid), 3);
	ck_assert_int_eq(pid, started);
	ck_assert_int_eq(pgid, pgid_cases[_i].own_group ? (long)started : (long)getpgrp());
	ck_assert_int_eq(sid, pgid_cases[_i].own_session ? (long)started : (long)getsid(0));
	sb_cmd_result_release(&res);
}
END_TEST

/*
 * SB_CMD_DEATHSIG: an intermediate process starts the probe, reports its pid and exits
 * without waiting. With the flag the probe is SIGKILLed when its parent dies; without it,
 * the probe lives on (and the test kills it).
 */
static const struct {
	unsigned flags;
	bool dies;
} deathsig_cases[] = {
	{ SB_CMD_DEATHSIG, true },
	{ SB_CMD_DEATHSIG | SB_CMD_NEW_SESSION, true },
	{ SB_CMD_DEATHSIG_TERM | SB_CMD_NEW_PGRP, true }, /* SIGTERM: sleep's default is to die */
	{ 0, false },
};

START_TEST(test_deathsig_table)
{
	int p[2], status;
	pid_t mid, probe = -1;

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	mid = fork();
	ck_assert_int_ge(mid, 0);
	if (mid == 0) {
		struct sb_argv argv = SB_ARGV_INIT;
		struct sb_cmd c = SB_CMD_INIT;

		probe_setup(&c, &argv, "sleep", "30", NULL);
		c.stdout_fd = SB_CMD_DEVNULL;
		c.stderr_fd = SB_CMD_DEVNULL;
		c.flags = deathsig_cases[_i].flags;
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
	ck_assert_int_gt(probe, 1);
	if (deathsig_cases[_i].dies) {
		ck_assert_msg(wait_gone(probe, 3000), "probe %ld outlived its parent", (long)probe);
	} else {
		(void)usleep(200000);
		ck_assert(!pid_gone(probe));
		ck_assert_int_eq(kill(probe, SIGKILL), 0);
		ck_assert(wait_gone(probe, 3000));
	}
}
END_TEST

/* sb_cmd_wait on a command that is not running fails, and never waits for someone else's child. */
START_TEST(test_wait_not_started)
{
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_cmd_result res;
	struct sb_error *err = NULL;
	int status;
	pid_t other = fork();

	ck_assert_int_ge(other, 0);
	if (other == 0)
		_exit(42);
	(void)usleep(50000);
	c.timeout_ms = 500;
	ck_assert_int_eq(sb_cmd_wait(&c, &res, &err), -1);
	ck_assert_int_eq(sb_error_code(err), EINVAL);
	sb_error_release(&err);
	/* The other child's status is still ours to collect. */
	ck_assert_int_eq(waitpid(other, &status, 0), other);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 42);
}
END_TEST

/* --- working directory, rlimits --- */

START_TEST(test_cwd_fd)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	_cleanup_free_ char *expect = NULL, *real = NULL;
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_cmd_result res;
	char dir[PATH_MAX], here[PATH_MAX];
	int dfd;

	make_tmpdir(dir, sizeof(dir));
	real = realpath(dir, NULL);
	ck_assert_ptr_nonnull(real);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(dfd, 0);

	probe_setup(&c, &argv, "cwd", NULL);
	c.cwd_fd = dfd;
	run_ok(&c, &res);
	ck_assert_int_eq(res.exit_code, 0);
	expect = sb_xasprintf("%s\n", real);
	assert_out_str(&res, expect);
	sb_cmd_result_release(&res);

	/* -1: the parent's directory, which did not change. */
	c.cwd_fd = -1;
	run_ok(&c, &res);
	ck_assert_ptr_nonnull(getcwd(here, sizeof(here)));
	free(expect);
	expect = sb_xasprintf("%s\n", here);
	assert_out_str(&res, expect);
	sb_cmd_result_release(&res);

	close(dfd);
	rm_tree(dir);
}
END_TEST

/* (Not RLIMIT_NOFILE: valgrind refuses to change its hard limit.) */
START_TEST(test_rlimits)
{
	static const struct sb_rlimit_set lim[] = { { RLIMIT_CORE, 0, 0 },
		{ RLIMIT_FSIZE, 1 << 20, 2 << 20 } };
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	struct sb_cmd c = SB_CMD_INIT;
	struct sb_cmd_result res;

	probe_setup(&c, &argv, "rlimits", NULL);
	c.rlimits = lim;
	c.n_rlimits = SB_ARRAY_SIZE(lim);
	run_ok(&c, &res);
	ck_assert_int_eq(res.exit_code, 0);
	assert_out_str(&res, "core 0 0\nfsize 1048576 2097152\n");
	sb_cmd_result_release(&res);
}
END_TEST

/* --- sb_cmd_find_program --- */

START_TEST(test_find_program)
{
	_cleanup_free_ char *bin = NULL, *prog = NULL, *plain = NULL, *isdir = NULL;
	_cleanup_free_ char *path_env = NULL;
	struct sb_error *err = NULL;
	char dir[PATH_MAX], here[PATH_MAX];
	char *found = NULL;

	/* A system shell, on a PATH whose first entries do not exist. */
	ck_assert_int_eq(sb_cmd_find_program("sh", "/nonexistent:/also/not:/bin", &found, &err),
	    0);
	ck_assert_str_eq(found, "/bin/sh");
	free(found);
	found = NULL;
	/* NULL: a default PATH of system directories. */
	ck_assert_int_eq(sb_cmd_find_program("sh", NULL, &found, &err), 0);
	ck_assert_msg(sb_streq(found, "/usr/local/bin/sh") || sb_streq(found, "/usr/bin/sh") ||
		sb_streq(found, "/bin/sh"),
	    "%s", found);
	free(found);
	found = NULL;
	/* A name with a slash is taken as it is. */
	ck_assert_int_eq(sb_cmd_find_program("/bin/sh", "", &found, &err), 0);
	ck_assert_str_eq(found, "/bin/sh");
	free(found);
	found = NULL;

	/*
	 * A tree where a relative PATH entry ("bin", "." and the empty entry all mean
	 * "relative to the current directory") holds the program: it must not be found there.
	 */
	make_tmpdir(dir, sizeof(dir));
	ck_assert_ptr_nonnull(getcwd(here, sizeof(here)));
	bin = sb_xasprintf("%s/bin", dir);
	ck_assert_int_eq(mkdir(bin, 0755), 0);
	prog = sb_xasprintf("%s/sb-rel-prog", bin);
	write_file(prog, "#!/bin/sh\nexit 0\n", 0755);
	/* A directory and a non-executable file of the same name earlier on the PATH. */
	isdir = sb_xasprintf("%s/d1", dir);
	ck_assert_int_eq(mkdir(isdir, 0755), 0);
	free(isdir);
	isdir = sb_xasprintf("%s/d1/sb-rel-prog", dir);
	ck_assert_int_eq(mkdir(isdir, 0755), 0);
	plain = sb_xasprintf("%s/d2", dir);
	ck_assert_int_eq(mkdir(plain, 0755), 0);
	free(plain);
	plain = sb_xasprintf("%s/d2/sb-rel-prog", dir);
	write_file(plain, "#!/bin/sh\nexit 0\n", 0644);

	ck_assert_int_eq(chdir(dir), 0);
	ck_assert_int_eq(chdir("bin"), 0);
	ck_assert_int_eq(sb_cmd_find_program("sb-rel-prog", ".::bin:../bin:/nonexistent", &found,
			     &err),
	    -1);
	ck_assert_int_eq(sb_error_code(err), ENOENT);
	ck_assert_ptr_null(found);
	sb_error_release(&err);

	path_env = sb_xasprintf(".:%s/d1:%s/d2::%s:/bin", dir, dir, bin);
	ck_assert_int_eq(sb_cmd_find_program("sb-rel-prog", path_env, &found, &err), 0);
	ck_assert_str_eq(found, prog);
	free(found);
	found = NULL;
	ck_assert_int_eq(chdir(here), 0);

	/* Not found anywhere, an empty PATH, an empty name. */
	ck_assert_int_eq(sb_cmd_find_program("sb-no-such-program", "/bin:/usr/bin", &found,
			     &err),
	    -1);
	ck_assert_int_eq(sb_error_code(err), ENOENT);
	sb_error_release(&err);
	ck_assert_int_eq(sb_cmd_find_program("sh", "", &found, &err), -1);
	ck_assert_int_eq(sb_error_code(err), ENOENT);
	sb_error_release(&err);
	ck_assert_int_eq(sb_cmd_find_program("", "/bin", &found, &err), -1);
	ck_assert_int_eq(sb_error_code(err), ENOENT);
	sb_error_release(&err);
	/* With a slash: a missing file, a non-executable one, a directory. */
	ck_assert_int_eq(sb_cmd_find_program("/nonexistent/sh", "/bin", &found, &err), -1);
	ck_assert_int_eq(sb_error_code(err), ENOENT);
	sb_error_release(&err);
	ck_assert_int_eq(sb_cmd_find_program(plain, "/bin", &found, &err), -1);
	ck_assert_int_eq(sb_error_code(err), EACCES);
	sb_error_release(&err);
	ck_assert_int_eq(sb_cmd_find_program(isdir, "/bin", &found, &err), -1);
	ck_assert_int_eq(sb_error_code(err), EACCES);
	sb_error_release(&err);
	ck_assert_ptr_null(found);
	rm_tree(dir);
}
END_TEST

static Suite *
spawn_suite(void)
{
	Suite *s = suite_create("spawn");
	TCase *tc = tcase_create("core");

	/* Nothing here should take more than a few seconds; valgrind is slower. */
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_exit_status_table, 0, (int)SB_ARRAY_SIZE(exit_cases));
	tcase_add_test(tc, test_kill);
	tcase_add_loop_test(tc, test_exec_failure_table, 0, (int)SB_ARRAY_SIZE(exec_fail_cases));
	tcase_add_loop_test(tc, test_exit_code_for_exec_errno_table, 0,
	    (int)SB_ARRAY_SIZE(exec_errno_cases));
	tcase_add_test(tc, test_incomplete_command);
	tcase_add_test(tc, test_env_exact);
	tcase_add_test(tc, test_stdin_default_devnull);
	tcase_add_loop_test(tc, test_stdin_data_table, 0, (int)SB_ARRAY_SIZE(stdin_cases));
	tcase_add_test(tc, test_stdin_unread);
	tcase_add_test(tc, test_argv_metachars);
	tcase_add_test(tc, test_no_fd_leak);
	tcase_add_test(tc, test_capture_streams);
	tcase_add_test(tc, test_capture_explicit_fds_swapped);
	tcase_add_loop_test(tc, test_capture_cap_table, 0, (int)SB_ARRAY_SIZE(cap_cases));
	tcase_add_loop_test(tc, test_timeout_table, 0, (int)SB_ARRAY_SIZE(timeout_cases));
	tcase_add_loop_test(tc, test_timeout_not_reached_table, 0,
	    (int)SB_ARRAY_SIZE(big_timeouts));
	tcase_add_test(tc, test_group_reaped);
	tcase_add_loop_test(tc, test_group_not_reaped_table, 0,
	    (int)SB_ARRAY_SIZE(survive_cases));
	tcase_add_test(tc, test_daemon_does_not_hang_wait);
	tcase_add_loop_test(tc, test_pgid_session_table, 0, (int)SB_ARRAY_SIZE(pgid_cases));
	tcase_add_loop_test(tc, test_deathsig_table, 0, (int)SB_ARRAY_SIZE(deathsig_cases));
	tcase_add_test(tc, test_wait_not_started);
	tcase_add_test(tc, test_cwd_fd);
	tcase_add_test(tc, test_rlimits);
	tcase_add_test(tc, test_find_program);
	suite_add_tcase(s, tc);
	return s;
}

/*
 * The probe: $SB_BUILDDIR/tests/helpers/sb-spawn-probe (the Makefile sets SB_BUILDDIR for
 * every test), else ../helpers/ next to this program. Made absolute, because the cwd_fd test
 * changes the child's directory before execve.
 */
static int
find_probe(const char *argv0)
{
	const char *builddir = getenv("SB_BUILDDIR");
	_cleanup_free_ char *self = NULL, *cand = NULL;

	if (builddir != NULL && *builddir != '\0') {
		cand = sb_xasprintf("%s/tests/helpers/sb-spawn-probe", builddir);
	} else {
		self = realpath(argv0, NULL);
		if (self == NULL)
			return -1;
		cand = sb_xasprintf("%s/../helpers/sb-spawn-probe", dirname(self));
	}
	if (realpath(cand, probe_path) == NULL || access(probe_path, X_OK) < 0)
		return -1;
	return 0;
}

int
main(int argc, char **argv)
{
	SRunner *sr;
	int failed;

	(void)argc;
	if (find_probe(argv[0]) < 0) {
		fprintf(stderr, "test-spawn: cannot find sb-spawn-probe (set SB_BUILDDIR)\n");
		return 99; /* automake: a hard error, not a failure of the code under test */
	}
	sr = srunner_create(spawn_suite());
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

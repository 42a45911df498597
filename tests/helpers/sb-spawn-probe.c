/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sb-spawn-probe: the child that tests/unit/test-spawn and test-priv start through sb_cmd.
 *
 * It reports what it sees (argv, environment, open fds, ids, process group, directory) or
 * behaves in a way the spawner must cope with (exit codes, signals, ignoring SIGTERM, floods
 * of output, grandchildren that outlive it). argv[1] names the sub-command; see usage().
 * Output formats are exact and unescaped, so a test can compare them byte for byte:
 *   argv    "[i]=<argv[i]>\n" for every i from 0, the bytes of the argument as they are;
 *   env     "<entry>\n" for every entry of environ, in order;
 *   errno   a system call's result is printed as "OK" or as its errno name ("EPERM").
 * Exit status 0 means the sub-command ran; 2 is a usage error; 3 a failure of the probe.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>

#include "sb/common.h"

#define EXIT_USAGE 2
#define EXIT_BROKEN 3

extern char **environ;

static _noreturn_ void
usage(void)
{
	static const char text[] =
	    "usage: sb-spawn-probe COMMAND [ARG]\n"
	    "  argv | env | fds | fdpath N | stdin | ids | pgid | cwd\n"
	    "  exit N | raise SIGNUM | sleep SECONDS | sleep-ignore-term SECONDS\n"
	    "  spam BYTES | line BYTES | both OUT ERR | rlimits | fork-sleeper | daemonize\n"
	    "  mkdir PATH | unshare | clone-newuser | clone3-newuser | mount PATH\n"
	    "  fork-exec | thread | clone-files | lease DIR | ofd-lock DIR | posix-lock DIR\n";

	(void)!write(STDERR_FILENO, text, sizeof(text) - 1);
	_exit(EXIT_USAGE);
}

/* Write all of buf to fd, or exit: a probe that cannot report must not pretend it did. */
static void
write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(EXIT_BROKEN);
		p += n;
		len -= (size_t)n;
	}
}

static void
out_str(const char *s)
{
	write_all(STDOUT_FILENO, s, strlen(s));
}

static void _printf_(1, 2)
out_fmt(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line))
		_exit(EXIT_BROKEN);
	write_all(STDOUT_FILENO, line, (size_t)n);
}

/* "OK" for r >= 0, else the name of errno ("EPERM"). */
static void
out_result(long r)
{
	const char *name;

	if (r >= 0) {
		out_str("OK\n");
		return;
	}
	name = strerrorname_np(errno);
	out_fmt("%s\n", name != NULL ? name : "E?");
}

/* A decimal argument; anything else is a usage error. */
static long long
num_arg(const char *s)
{
	char *end;
	long long v;

	if (s == NULL || *s == '\0')
		usage();
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < 0)
		usage();
	return v;
}

static void
sleep_s(long long seconds)
{
	struct timespec ts = { (time_t)seconds, 0 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int
cmd_argv(int argc, char **argv)
{
	char prefix[32];

	for (int i = 0; i < argc; i++) {
		(void)snprintf(prefix, sizeof(prefix), "[%d]=", i);
		out_str(prefix);
		write_all(STDOUT_FILENO, argv[i], strlen(argv[i]));
		out_str("\n");
	}
	return 0;
}

static int
cmd_env(void)
{
	for (char **e = environ; *e != NULL; e++) {
		write_all(STDOUT_FILENO, *e, strlen(*e));
		out_str("\n");
	}
	return 0;
}

/* Every open fd except 0, 1, 2 and the directory stream's own, as "N -> target". */
static int
cmd_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;

	if (d == NULL)
		return EXIT_BROKEN;
	while ((de = readdir(d)) != NULL) {
		char path[64], target[PATH_MAX];
		char *end;
		long fd = strtol(de->d_name, &end, 10);
		ssize_t n;

		if (de->d_name[0] == '.' || *end != '\0')
			continue;
		if (fd <= 2 || fd == dirfd(d))
			continue;
		(void)snprintf(path, sizeof(path), "/proc/self/fd/%ld", fd);
		n = readlink(path, target, sizeof(target) - 1);
		target[n < 0 ? 0 : n] = '\0';
		out_fmt("%ld -> %.400s\n", fd, target);
	}
	closedir(d);
	return 0;
}

static int
cmd_fdpath(const char *arg)
{
	char path[64], target[PATH_MAX];
	ssize_t n;

	(void)snprintf(path, sizeof(path), "/proc/self/fd/%lld", num_arg(arg));
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0) {
		out_result(-1);
		return 0;
	}
	target[n] = '\0';
	out_fmt("%.400s\n", target);
	return 0;
}

static int
cmd_stdin(void)
{
	char buf[65536];

	for (;;) {
		ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return EXIT_BROKEN;
		if (n == 0)
			return 0;
		write_all(STDOUT_FILENO, buf, (size_t)n);
	}
}

/* ids: the three uids and gids, the supplementary groups, and some /proc status lines. */
static int
cmd_ids(void)
{
	static const char *const keys[] = { "CapInh:", "CapPrm:", "CapEff:", "CapBnd:",
		"CapAmb:", "NoNewPrivs:", "Seccomp:" };
	gid_t groups[256];
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	char line[256];
	FILE *f;
	int n;

	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0)
		return EXIT_BROKEN;
	out_fmt("uid %u %u %u\n", (unsigned)ru, (unsigned)eu, (unsigned)su);
	out_fmt("gid %u %u %u\n", (unsigned)rg, (unsigned)eg, (unsigned)sg);
	n = getgroups((int)SB_ARRAY_SIZE(groups), groups);
	if (n < 0)
		return EXIT_BROKEN;
	out_str("groups");
	for (int i = 0; i < n; i++)
		out_fmt(" %u", (unsigned)groups[i]);
	out_str("\n");

	f = fopen("/proc/self/status", "re");
	if (f == NULL)
		return EXIT_BROKEN;
	while (fgets(line, sizeof(line), f) != NULL)
		for (size_t i = 0; i < SB_ARRAY_SIZE(keys); i++)
			if (strncmp(line, keys[i], strlen(keys[i])) == 0)
				out_str(line);
	fclose(f);
	return 0;
}

static int
cmd_raise(const char *arg)
{
	int sig = (int)num_arg(arg);
	struct sigaction old;

	/*
	 * A sanitizer runtime installs its own SIGSEGV/SIGBUS handlers before main: put the
	 * default back. SIG_IGN stays, though: it can only have come from the parent through
	 * execve, which is exactly what the spawner must not let through.
	 */
	if (sigaction(sig, NULL, &old) == 0 && old.sa_handler != SIG_IGN)
		(void)signal(sig, SIG_DFL);
	(void)raise(sig);
	/* Still here: the signal was ignored or blocked, which the test will notice. */
	return EXIT_BROKEN;
}

static int
cmd_sleep_ignore_term(const char *arg)
{
	long long seconds = num_arg(arg);

	if (signal(SIGTERM, SIG_IGN) == SIG_ERR)
		return EXIT_BROKEN;
	sleep_s(seconds);
	return 0;
}

/* spam: BYTES bytes of 'x' in large writes, no newline. */
static int
cmd_spam(const char *arg, char fill, bool newline)
{
	static char chunk[65536];
	long long left = num_arg(arg);

	memset(chunk, fill, sizeof(chunk));
	while (left > 0) {
		size_t n = left < (long long)sizeof(chunk) ? (size_t)left : sizeof(chunk);

		write_all(STDOUT_FILENO, chunk, n);
		left -= (long long)n;
	}
	if (newline)
		out_str("\n");
	return 0;
}

/*
 * fork-sleeper: a grandchild that stays in our process group, keeps our stdout open and
 * sleeps; we print its pid and exit at once.
 */
static int
cmd_fork_sleeper(void)
{
	pid_t pid = fork();

	if (pid < 0)
		return EXIT_BROKEN;
	if (pid == 0) {
		sleep_s(60);
		_exit(0);
	}
	out_fmt("%ld\n", (long)pid);
	return 0;
}

/*
 * daemonize: the classic double fork. The middle process leaves our session and group
 * (setsid), forks the sleeper, reports the sleeper's pid on stdout (which the sleeper keeps
 * open) and exits; we wait for the middle one so the pid is written before we exit.
 */
static int
cmd_daemonize(void)
{
	int status;
	pid_t mid = fork();

	if (mid < 0)
		return EXIT_BROKEN;
	if (mid == 0) {
		pid_t pid;

		if (setsid() < 0)
			_exit(EXIT_BROKEN);
		pid = fork();
		if (pid < 0)
			_exit(EXIT_BROKEN);
		if (pid == 0) {
			sleep_s(60);
			_exit(0);
		}
		out_fmt("%ld\n", (long)pid);
		_exit(0);
	}
	if (waitpid(mid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return EXIT_BROKEN;
	return 0;
}

/* fork-exec: fork, exec ourselves with "exit 3" in the child, print how it ended. */
static int
cmd_fork_exec(const char *self)
{
	char *const args[] = { (char *)self, (char *)"exit", (char *)"3", NULL };
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		out_result(-1);
		return 0;
	}
	if (pid == 0) {
		execve(self, args, environ);
		_exit(99);
	}
	if (waitpid(pid, &status, 0) < 0)
		return EXIT_BROKEN;
	if (WIFEXITED(status))
		out_fmt("exit %d\n", WEXITSTATUS(status));
	else
		out_fmt("signal %d\n", WTERMSIG(status));
	return 0;
}

/*
 * clone-newuser, clone-files: a child by a raw clone(2) (which a filter on unshare alone
 * misses) with CLONE_NEWUSER, or sharing the file
 * table without being a thread (CLONE_FILES).
 */
static int
cmd_clone(unsigned long flags)
{
	long r = syscall(SYS_clone, flags | SIGCHLD, 0UL, NULL, NULL, 0UL);

	if (r == 0)
		_exit(0);
	if (r > 0)
		(void)waitpid((pid_t)r, NULL, 0);
	out_result(r);
	return 0;
}

/* clone3-newuser: the same through clone3(2), whose flags sit in a struct. */
static int
cmd_clone3_newuser(void)
{
	/* struct clone_args, version 0 (64 bytes), without <linux/sched.h>'s clashes. */
	struct {
		uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
	} args;
	long r;

	memset(&args, 0, sizeof(args));
	args.flags = CLONE_NEWUSER;
	args.exit_signal = SIGCHLD;
	r = syscall(SYS_clone3, &args, sizeof(args));
	if (r == 0)
		_exit(0);
	if (r > 0)
		(void)waitpid((pid_t)r, NULL, 0);
	out_result(r);
	return 0;
}

static void *
thread_main(void *arg)
{
	return arg;
}

/* thread: create and join a thread (glibc tries clone3 first, then clone). */
static int
cmd_thread(void)
{
	static int token;
	pthread_t t;
	void *back = NULL;
	int r = pthread_create(&t, NULL, thread_main, &token);

	if (r == 0)
		r = pthread_join(t, &back);
	if (r == 0 && back != &token)
		r = EIO;
	errno = r;
	out_result(r == 0 ? 0 : -1);
	return 0;
}

int
main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	const char *arg = argc > 2 ? argv[2] : NULL;
	char cwd[PATH_MAX];
	int r;

	if (sb_streq(cmd, "argv"))
		return cmd_argv(argc, argv);
	if (sb_streq(cmd, "env"))
		return cmd_env();
	if (sb_streq(cmd, "fds"))
		return cmd_fds();
	if (sb_streq(cmd, "fdpath"))
		return cmd_fdpath(arg);
	if (sb_streq(cmd, "stdin"))
		return cmd_stdin();
	if (sb_streq(cmd, "ids"))
		return cmd_ids();
	if (sb_streq(cmd, "pgid")) {
		out_fmt("pid %ld pgid %ld sid %ld\n", (long)getpid(), (long)getpgid(0),
		    (long)getsid(0));
		return 0;
	}
	if (sb_streq(cmd, "cwd")) {
		if (getcwd(cwd, sizeof(cwd)) == NULL)
			return EXIT_BROKEN;
		out_fmt("%.500s\n", cwd);
		return 0;
	}
	if (sb_streq(cmd, "exit"))
		return (int)(num_arg(arg) & 0xff);
	if (sb_streq(cmd, "raise"))
		return cmd_raise(arg);
	if (sb_streq(cmd, "sleep")) {
		sleep_s(num_arg(arg));
		return 0;
	}
	if (sb_streq(cmd, "sleep-ignore-term"))
		return cmd_sleep_ignore_term(arg);
	if (sb_streq(cmd, "spam"))
		return cmd_spam(arg, 'x', false);
	if (sb_streq(cmd, "line"))
		return cmd_spam(arg, 'a', true);
	if (sb_streq(cmd, "both")) {
		if (arg == NULL || argc < 4)
			usage();
		write_all(STDOUT_FILENO, arg, strlen(arg));
		write_all(STDERR_FILENO, argv[3], strlen(argv[3]));
		return 0;
	}
	if (sb_streq(cmd, "rlimits")) {
		struct rlimit core, fsize;

		if (getrlimit(RLIMIT_CORE, &core) < 0 || getrlimit(RLIMIT_FSIZE, &fsize) < 0)
			return EXIT_BROKEN;
		out_fmt("core %llu %llu\nfsize %llu %llu\n", (unsigned long long)core.rlim_cur,
		    (unsigned long long)core.rlim_max, (unsigned long long)fsize.rlim_cur,
		    (unsigned long long)fsize.rlim_max);
		return 0;
	}
	if (sb_streq(cmd, "fork-sleeper"))
		return cmd_fork_sleeper();
	if (sb_streq(cmd, "daemonize"))
		return cmd_daemonize();
	if (sb_streq(cmd, "mkdir")) {
		if (arg == NULL)
			usage();
		out_result(mkdir(arg, 0700));
		return 0;
	}
	if (sb_streq(cmd, "unshare")) {
		out_result(unshare(CLONE_NEWNS));
		return 0;
	}
	/* File event queues: inotify, fanotify (as root without the filter), dnotify on ARG. */
	if (sb_streq(cmd, "inotify")) {
		out_result(inotify_init1(IN_CLOEXEC));
		return 0;
	}
	if (sb_streq(cmd, "fanotify")) {
		out_result(fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC, O_RDONLY));
		return 0;
	}
	/* dnotify-wide: the same command with bits above the 32 the kernel reads. */
	if (sb_streq(cmd, "dnotify") || sb_streq(cmd, "dnotify-wide")) {
		unsigned long fcmd = (unsigned long)F_NOTIFY;
		int dfd;

		if (arg == NULL)
			usage();
		dfd = open(arg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			return 3;
		if (sb_streq(cmd, "dnotify-wide"))
			fcmd |= 1UL << 32;
		out_result(syscall(SYS_fcntl, dfd, fcmd, DN_ACCESS | DN_MULTISHOT));
		return 0;
	}
	/*
	 * On a fresh file in the directory ARG: "lease" a read lease, "ofd-lock" an
	 * open-file-description lock on one byte (listed in /proc/locks to every pid
	 * namespace), "posix-lock" a classic one.
	 */
	if (sb_streq(cmd, "lease") || sb_streq(cmd, "ofd-lock") || sb_streq(cmd, "posix-lock")) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 4263,
			.l_len = 1 };
		bool lease = sb_streq(cmd, "lease");
		char path[4096];
		int fd;

		if (arg == NULL)
			usage();
		snprintf(path, sizeof(path), "%s/locked", arg);
		fd = open(path, (lease ? O_RDONLY : O_RDWR) | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0)
			return 3;
		if (lease)
			out_result(fcntl(fd, F_SETLEASE, F_RDLCK));
		else
			out_result(fcntl(fd, sb_streq(cmd, "ofd-lock") ? F_OFD_SETLK : F_SETLK, &fl));
		(void)unlink(path);
		return 0;
	}
	if (sb_streq(cmd, "clone-newuser"))
		return cmd_clone(CLONE_NEWUSER);
	if (sb_streq(cmd, "clone-files"))
		return cmd_clone(CLONE_FILES);
	if (sb_streq(cmd, "clone3-newuser"))
		return cmd_clone3_newuser();
	if (sb_streq(cmd, "thread"))
		return cmd_thread();
	if (sb_streq(cmd, "mount")) {
		if (arg == NULL)
			usage();
		r = mount("sb-probe", arg, "tmpfs", MS_NOSUID | MS_NODEV, "size=16k");
		out_result(r);
		/* Never leave a mount behind in the caller's namespace. */
		if (r == 0)
			(void)umount2(arg, MNT_DETACH);
		return 0;
	}
	if (sb_streq(cmd, "fork-exec"))
		return cmd_fork_exec(argv[0]);
	usage();
}

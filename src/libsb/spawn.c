/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spawn.c: start a child from an argv vector and supervise it.
 *
 * One path for every child, fork + execve, rather than posix_spawn for some: the
 * credential drop, seccomp and fchdir need code between fork and exec anyway, and one
 * path is one thing to get right. The child runs only async-signal-safe calls on data the
 * parent prepared.
 */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "sb/exit.h"
#include "sb/limits.h"
#include "sb/mem.h"
#include "sb/sig.h"
#include "sb/spawn.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

enum child_step {
	STEP_SIGNALS = 1,
	STEP_CGROUP,
	STEP_SESSION,
	STEP_STDIO,
	STEP_CWD,
	STEP_RLIMIT,
	STEP_CREDS,
	STEP_SANDBOX,
	STEP_DEATHSIG,
	STEP_FDS,
	STEP_SECCOMP,
	STEP_EXEC,
};

static const char *
step_name(int step)
{
	switch (step) {
	case STEP_SIGNALS:
		return "reset signals";
	case STEP_CGROUP:
		return "join the cgroup";
	case STEP_SESSION:
		return "new session/process group";
	case STEP_STDIO:
		return "set up stdin/stdout/stderr";
	case STEP_CWD:
		return "change directory";
	case STEP_RLIMIT:
		return "set resource limits";
	case STEP_CREDS:
		return "drop privileges";
	case STEP_SANDBOX:
		return "enter the sandbox";
	case STEP_DEATHSIG:
		return "set parent-death signal";
	case STEP_FDS:
		return "mark descriptors close-on-exec";
	case STEP_SECCOMP:
		return "load seccomp filter";
	case STEP_EXEC:
		return "execve";
	}
	return "?";
}

struct child_report {
	int step;
	int errnum;
	/* What within the step failed, when it says: a string literal, the same address in
	 * the parent after fork, or NULL. */
	const char *detail;
};

/* What the child needs, all resolved by the parent before fork. */
struct child_plan {
	const struct sb_cmd *c;
	pid_t parent;	/* to notice a parent that died before the death signal was set */
	int fds[3];	/* source fd for 0, 1, 2 */
	int report_fd;
	int max_fd;	/* for the close-on-exec fallback loop */
};

/* Mark every fd >= 3 close-on-exec; async-signal-safe. */
static int
child_cloexec_from3(int max_fd)
{
	if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
		return 0;
	/* Kernels before 5.11: walk the table. fcntl is async-signal-safe; EBADF is fine. */
	for (int fd = 3; fd < max_fd; fd++) {
		int fl = fcntl(fd, F_GETFD);

		if (fl >= 0 && !(fl & FD_CLOEXEC) && fcntl(fd, F_SETFD, fl | FD_CLOEXEC) < 0)
			return -1;
	}
	return 0;
}

/*
 * The helpers below are steps of child_run, in a forked child: async-signal-safe calls
 * only, and each returns -1 with errno set for child_run to report.
 */

/* Move this process into the run's cgroup (by writing "0", "myself", to cgroup.procs). */
static int
child_join_cgroup(const char *cgroup_procs)
{
	int fd = open(cgroup_procs, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (write(fd, "0", 1) != 1) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/*
 * stdio: first lift any source below 3 out of the way (so that dup2 onto 0..2 cannot
 * clobber a source still to be used), then dup2 each onto its place. dup2 clears
 * close-on-exec on the target, so the child keeps exactly 0, 1 and 2.
 */
static int
child_stdio(const struct child_plan *p)
{
	int src[3];

	for (int i = 0; i < 3; i++) {
		src[i] = p->fds[i];
		if (src[i] >= 0 && src[i] < 3 && src[i] != i) {
			src[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 3);
			if (src[i] < 0)
				return -1;
		}
	}
	for (int i = 0; i < 3; i++) {
		if (src[i] == i) {
			int fl = fcntl(i, F_GETFD);

			if (fl < 0 || fcntl(i, F_SETFD, fl & ~FD_CLOEXEC) < 0)
				return -1;
		} else if (dup2(src[i], i) < 0) {
			return -1;
		}
	}
	return 0;
}

static int
child_rlimits(const struct sb_cmd *c)
{
	for (size_t i = 0; i < c->n_rlimits; i++) {
		struct rlimit rl = { c->rlimits[i].cur, c->rlimits[i].max };

		if (setrlimit(c->rlimits[i].resource, &rl) < 0)
			return -1;
	}
	return 0;
}

/* After the uid change, which clears the parent-death signal. */
static int
child_deathsig(const struct child_plan *p)
{
	const struct sb_cmd *c = p->c;

	if (!(c->flags & (SB_CMD_DEATHSIG | SB_CMD_DEATHSIG_TERM)))
		return 0;
	if (prctl(PR_SET_PDEATHSIG, (c->flags & SB_CMD_DEATHSIG) ? SIGKILL : SIGTERM, 0, 0, 0) < 0)
		return -1;
	/* A parent that died before the prctl sent no signal: we would outlive it. */
	if (getppid() != p->parent) {
		errno = ESRCH;
		return -1;
	}
	return 0;
}

/*
 * The order of these steps is the security property (docs/design.md, "Starting processes"
 * and "Dropping privileges"): the cgroup before anything can fork, the credential drop and
 * the sandbox before the limits that the sandbox's user namespace counts, the death signal
 * after the uid change that clears it, the close-on-exec sweep and the seccomp filter last
 * before execve. Each step is one line or one helper above, so the whole order reads here.
 */
static _noreturn_ void
child_run(const struct child_plan *p)
{
	const struct sb_cmd *c = p->c;
	struct child_report rep = { 0, 0, NULL };
	const char *drop_step;

	rep.step = STEP_SIGNALS;
	if (sb_sig_reset_all() < 0)
		goto fail;
	/* First: nothing of the child, nor anything it forks, runs outside the cgroup. */
	rep.step = STEP_CGROUP;
	if (c->cgroup_procs != NULL && child_join_cgroup(c->cgroup_procs) < 0)
		goto fail;
	rep.step = STEP_SESSION;
	if ((c->flags & SB_CMD_NEW_SESSION) && setsid() < 0)
		goto fail;
	if (!(c->flags & SB_CMD_NEW_SESSION) && (c->flags & SB_CMD_NEW_PGRP) && setpgid(0, 0) < 0)
		goto fail;
	rep.step = STEP_STDIO;
	if (child_stdio(p) < 0)
		goto fail;
	rep.step = STEP_CWD;
	if (c->cwd_fd >= 0 && fchdir(c->cwd_fd) < 0)
		goto fail;
	rep.step = STEP_RLIMIT;
	if (c->sandbox == NULL && child_rlimits(c) < 0)
		goto fail;
	if (c->creds != NULL) {
		rep.step = STEP_CREDS;
		if (sb_priv_drop(c->creds, &drop_step) < 0)
			goto fail;
	}
	if (c->sandbox != NULL) {
		rep.step = STEP_SANDBOX;
		if (c->creds == NULL) {
			errno = EINVAL;
			goto fail;
		}
		if (sb_sandbox_enter(c->sandbox, c->cwd_fd, &drop_step) < 0) {
			rep.detail = drop_step;
			goto fail;
		}
		/*
		 * Limits are set in the sandbox, with the user namespace made while the limit was
		 * still the parent's: the kernel then counts RLIMIT_NPROC for this namespace on
		 * its own, and one run's fork bomb does not use up another run's count of the
		 * same uid. Lowering a limit needs no privilege.
		 */
		rep.step = STEP_RLIMIT;
		if (child_rlimits(c) < 0)
			goto fail;
	}
	rep.step = STEP_DEATHSIG;
	if (child_deathsig(p) < 0)
		goto fail;
	rep.step = STEP_FDS;
	if (child_cloexec_from3(p->max_fd) < 0)
		goto fail;
	/* Last: the filter must not be able to stop any step above. It must allow execve. */
	if (c->seccomp != NULL) {
		rep.step = STEP_SECCOMP;
		/* Without a credential drop no_new_privs is not set yet, and an unprivileged
		 * process may only load a filter with it. */
		if (c->creds == NULL && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			goto fail;
		if (sb_seccomp_install(c->seccomp) < 0)
			goto fail;
	}
	rep.step = STEP_EXEC;
	execve(c->path, c->argv, c->envp);
fail:
	rep.errnum = errno;
	(void)!write(p->report_fd, &rep, sizeof(rep));
	_exit(SB_EXIT_CANNOT_EXEC);
}

uint64_t
sb_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static char *const empty_env[] = { NULL };

/* A close-on-exec pipe into *ret_rd / *ret_wr, if want. */
static int
capture_pipe(bool want, int *ret_rd, int *ret_wr, struct sb_error **err)
{
	int fds[2];

	if (!want)
		return 0;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return sb_error_errno(err, errno, "pipe2");
	*ret_rd = fds[0], *ret_wr = fds[1];
	return 0;
}

/* The fd that becomes the child's fd `inherit` (0, 1 or 2) for the caller's choice spec. */
static int
stdio_source(int spec, int inherit, int devnull, int pipe_end)
{
	if (spec == SB_CMD_DEVNULL)
		return devnull;
	if (spec == SB_CMD_INHERIT)
		return inherit;
	if (spec == SB_CMD_CAPTURE)
		return pipe_end;
	return spec;
}

/* The parent's side once the child is forked: wait for execve, or for the child's report. */
static int
start_parent(struct sb_cmd *c, pid_t pid, int rep_rd, int *rep_wr, struct sb_error **err)
{
	struct child_report rep;
	ssize_t n;

	/* Both sides set the group, so it exists before either uses it. */
	if ((c->flags & SB_CMD_NEW_PGRP) && !(c->flags & SB_CMD_NEW_SESSION))
		(void)setpgid(pid, pid);
	/* Our copy of the write end must go, or read() never sees EOF. */
	*rep_wr = sb_close(*rep_wr);
	n = SB_RETRY_EINTR(read(rep_rd, &rep, sizeof(rep)));
	if (n == (ssize_t)sizeof(rep)) {
		(void)SB_RETRY_EINTR(waitpid(pid, NULL, 0));
		return sb_error_errno(err, rep.errnum, "cannot start '%s': %s", c->argv[0],
		    rep.detail != NULL ? rep.detail : step_name(rep.step));
	}
	/* EOF: execve() succeeded and closed the close-on-exec report pipe. */
	return 0;
}

int
sb_cmd_start(struct sb_cmd *c, struct sb_error **err)
{
	_cleanup_close_ int devnull = -1, rep_rd = -1, rep_wr = -1;
	_cleanup_close_ int in_rd = -1, in_wr = -1, out_rd = -1, out_wr = -1, err_rd = -1,
			    err_wr = -1;
	struct sb_cmd copy = *c;
	struct child_plan plan;
	struct rlimit nofile;
	pid_t pid;

	if (c->path == NULL || c->argv == NULL || c->argv[0] == NULL)
		return sb_error_set(err, EINVAL, "incomplete command");
	if (copy.envp == NULL)
		copy.envp = empty_env;
	if (c->stdin_fd == SB_CMD_DEVNULL || c->stdout_fd == SB_CMD_DEVNULL ||
	    c->stderr_fd == SB_CMD_DEVNULL) {
		devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (devnull < 0)
			return sb_error_errno(err, errno, "open /dev/null");
	}
	if (capture_pipe(c->stdin_fd == SB_CMD_CAPTURE, &in_rd, &in_wr, err) < 0 ||
	    capture_pipe(c->stdout_fd == SB_CMD_CAPTURE, &out_rd, &out_wr, err) < 0 ||
	    capture_pipe(c->stderr_fd == SB_CMD_CAPTURE && !(c->flags & SB_CMD_STDERR_TO_STDOUT),
		&err_rd, &err_wr, err) < 0 ||
	    capture_pipe(true, &rep_rd, &rep_wr, err) < 0)
		return -1;

	memset(&plan, 0, sizeof(plan));
	plan.c = &copy;
	plan.parent = getpid();
	plan.report_fd = rep_wr;
	plan.fds[0] = stdio_source(c->stdin_fd, 0, devnull, in_rd);
	plan.fds[1] = stdio_source(c->stdout_fd, 1, devnull, out_wr);
	if (c->flags & SB_CMD_STDERR_TO_STDOUT)
		plan.fds[2] = plan.fds[1];
	else
		plan.fds[2] = stdio_source(c->stderr_fd, 2, devnull, err_wr);
	plan.max_fd = getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < 1048576
		? (int)nofile.rlim_cur
		: 65536;

	c->start_ms = sb_now_ms();
	pid = fork();
	if (pid < 0)
		return sb_error_errno(err, errno, "fork");
	if (pid == 0)
		child_run(&plan);
	if (start_parent(c, pid, rep_rd, &rep_wr, err) < 0)
		return -1;
	c->pid = pid;
	c->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	c->in_pipe = TAKE_FD(in_wr);
	c->out_pipe = TAKE_FD(out_rd);
	c->err_pipe = TAKE_FD(err_rd);
	return 0;
}

void
sb_cmd_kill(const struct sb_cmd *c, int sig)
{
	if (c->pid <= 0)
		return;
	if (c->flags & (SB_CMD_NEW_PGRP | SB_CMD_NEW_SESSION))
		(void)kill(-c->pid, sig);
	else
		(void)kill(c->pid, sig);
}


/*
 * a + b, or UINT64_MAX if that overflows: a huge timeout, grace or drain (UINT64_MAX as "no
 * limit") must mean "never", not wrap around to a deadline in the past that fires at once.
 */
static uint64_t
add_sat(uint64_t a, uint64_t b)
{
	return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

/* Read what is available on *fd into b (up to its max), count the rest; close on EOF. */
static void
drain_fd(int *fd, struct sb_buf *b, size_t *dropped)
{
	char chunk[16384];
	ssize_t n = read(*fd, chunk, sizeof(chunk));

	if (n > 0)
		*dropped += sb_buf_append_capped(b, chunk, (size_t)n);
	else if (n == 0 || (errno != EINTR && errno != EAGAIN))
		*fd = sb_close(*fd);
}

/* write(2) to a pipe without dying of SIGPIPE if the reader has gone. */
static ssize_t
write_nosigpipe(int fd, const void *data, size_t len)
{
	sigset_t pipe_set, old;
	struct timespec zero = { 0, 0 };
	ssize_t n;
	int saved;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	n = write(fd, data, len);
	saved = errno;
	if (n < 0 && errno == EPIPE)
		(void)sigtimedwait(&pipe_set, NULL, &zero);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return n;
}

/* Where sb_cmd_wait is: the deadlines (0: none yet) and what it has seen. */
struct wait_state {
	uint64_t start, grace, drain;
	uint64_t term_at, kill_at, drain_until;
	size_t in_off; /* bytes of stdin_data written */
	bool exited;
	int status;
};

/* Reap the child if it has exited; on exit, kill what it left in its group. */
static int
wait_reap(struct sb_cmd *c, struct wait_state *w, struct sb_cmd_result *ret, uint64_t now)
{
	pid_t pid;

	if (w->exited)
		return 0;
	pid = waitpid(c->pid, &w->status, WNOHANG);
	if (pid < 0 && errno != EINTR)
		return -1;
	if (pid == c->pid) {
		w->exited = true;
		ret->elapsed_ms = now - w->start;
		/* Anything the child left in its own group dies with it. */
		if ((c->flags & (SB_CMD_NEW_PGRP | SB_CMD_NEW_SESSION)) &&
		    !(c->flags & SB_CMD_NO_GROUP_REAP))
			(void)kill(-c->pid, SIGKILL);
		w->drain_until = add_sat(now, w->drain);
		c->in_pipe = sb_close(c->in_pipe);
	}
	return 0;
}

/* The timeout: SIGTERM first, SIGKILL if it is still there after the grace. */
static void
wait_timeout(struct sb_cmd *c, struct wait_state *w, struct sb_cmd_result *ret, uint64_t now)
{
	if (!w->exited && w->term_at != 0 && now >= w->term_at && w->kill_at == 0) {
		ret->timed_out = true;
		sb_cmd_kill(c, SIGTERM);
		w->kill_at = add_sat(now, w->grace);
	}
	if (!w->exited && w->kill_at != 0 && now >= w->kill_at) {
		sb_cmd_kill(c, SIGKILL);
		w->kill_at = UINT64_MAX;
	}
}

/* The fds to poll (into pfd, at most 4; returns how many). */
static nfds_t
wait_pollfds(const struct sb_cmd *c, const struct wait_state *w, struct pollfd *pfd)
{
	nfds_t np = 0;

	if (c->out_pipe >= 0)
		pfd[np++] = (struct pollfd){ .fd = c->out_pipe, .events = POLLIN };
	if (c->err_pipe >= 0)
		pfd[np++] = (struct pollfd){ .fd = c->err_pipe, .events = POLLIN };
	if (c->in_pipe >= 0)
		pfd[np++] = (struct pollfd){ .fd = c->in_pipe, .events = POLLOUT };
	if (!w->exited && c->pidfd >= 0)
		pfd[np++] = (struct pollfd){ .fd = c->pidfd, .events = POLLIN };
	return np;
}

/* How long poll may sleep: until the next deadline, in poll's int milliseconds. */
static int
wait_poll_timeout(const struct sb_cmd *c, const struct wait_state *w, uint64_t now)
{
	uint64_t wake = UINT64_MAX;

	if (!w->exited && w->term_at != 0 && w->kill_at == 0)
		wake = w->term_at;
	if (!w->exited && w->kill_at != 0 && w->kill_at != UINT64_MAX)
		wake = w->kill_at;
	if (w->exited)
		wake = w->drain_until;
	/* Without a pidfd we cannot be woken by the exit: look every 20 ms. */
	if (!w->exited && c->pidfd < 0 && wake > now + 20)
		wake = now + 20;
	/* poll takes an int: a far deadline just means waking up early to look again. */
	if (wake == UINT64_MAX)
		return -1;
	if (wake <= now)
		return 0;
	return wake - now > INT_MAX ? INT_MAX : (int)(wake - now);
}

/* Serve the fds poll found ready: read output, feed stdin_data. */
static void
wait_io(struct sb_cmd *c, struct wait_state *w, struct sb_cmd_result *ret,
    const struct pollfd *pfd, nfds_t np)
{
	for (nfds_t i = 0; i < np; i++) {
		if (pfd[i].revents == 0)
			continue;
		if (pfd[i].fd == c->out_pipe)
			drain_fd(&c->out_pipe, &ret->out, &ret->out_dropped);
		else if (pfd[i].fd == c->err_pipe)
			drain_fd(&c->err_pipe, &ret->err, &ret->err_dropped);
		else if (pfd[i].fd == c->in_pipe) {
			ssize_t n = write_nosigpipe(c->in_pipe,
			    (const char *)c->stdin_data + w->in_off, c->stdin_len - w->in_off);

			if (n > 0)
				w->in_off += (size_t)n;
			if ((n < 0 && errno != EAGAIN && errno != EINTR) ||
			    w->in_off == c->stdin_len)
				c->in_pipe = sb_close(c->in_pipe);
		}
	}
}

/* The exit code from the wait status: 128 + N for signal N, 124 for a timeout. */
static void
wait_result(const struct wait_state *w, struct sb_cmd_result *ret)
{
	if (WIFSIGNALED(w->status)) {
		ret->term_signal = WTERMSIG(w->status);
		ret->exit_code = SB_EXIT_SIGNAL_BASE + ret->term_signal;
	} else {
		ret->exit_code = WEXITSTATUS(w->status);
	}
	if (ret->timed_out)
		ret->exit_code = SB_EXIT_TIMEOUT;
}

int
sb_cmd_wait(struct sb_cmd *c, struct sb_cmd_result *ret, struct sb_error **err)
{
	struct wait_state w = {
		.start = c->start_ms ? c->start_ms : sb_now_ms(),
		.grace = c->grace_ms ? c->grace_ms : SB_KILL_GRACE_MS,
		.drain = c->drain_ms ? c->drain_ms : 1000,
	};
	size_t cap = c->capture_max ? c->capture_max : SB_CAPTURE_DEFAULT;
	int saved;

	/*
	 * Not started (or already waited for): waitpid(-1) below would reap, and so steal, any
	 * other child of the caller's.
	 */
	if (c->pid <= 0)
		return sb_error_set(err, EINVAL, "command not running");
	w.term_at = c->timeout_ms ? add_sat(w.start, c->timeout_ms) : 0;
	memset(ret, 0, sizeof(*ret));
	sb_buf_init(&ret->out, cap);
	sb_buf_init(&ret->err, cap);
	if (c->in_pipe >= 0)
		(void)fcntl(c->in_pipe, F_SETFL, O_NONBLOCK);
	if (c->in_pipe >= 0 && c->stdin_len == 0)
		c->in_pipe = sb_close(c->in_pipe);

	for (;;) {
		struct pollfd pfd[4];
		uint64_t now = sb_now_ms();
		nfds_t np;
		int r;

		if (wait_reap(c, &w, ret, now) < 0) {
			saved = errno;
			sb_cmd_result_release(ret);
			return sb_error_errno(err, saved, "waitpid");
		}
		if (w.exited && ((c->out_pipe < 0 && c->err_pipe < 0) || now >= w.drain_until))
			break;
		wait_timeout(c, &w, ret, now);
		np = wait_pollfds(c, &w, pfd);
		r = poll(pfd, np, wait_poll_timeout(c, &w, now));
		if (r < 0 && errno != EINTR) {
			saved = errno;
			sb_cmd_result_release(ret);
			return sb_error_errno(err, saved, "poll");
		}
		if (r > 0)
			wait_io(c, &w, ret, pfd, np);
	}
	c->out_pipe = sb_close(c->out_pipe);
	c->err_pipe = sb_close(c->err_pipe);
	c->pidfd = sb_close(c->pidfd);
	c->pid = -1;
	wait_result(&w, ret);
	return 0;
}

int
sb_cmd_run(struct sb_cmd *c, struct sb_cmd_result *ret, struct sb_error **err)
{
	if (sb_cmd_start(c, err) < 0)
		return -1;
	return sb_cmd_wait(c, ret, err);
}

void
sb_cmd_result_release(struct sb_cmd_result *r)
{
	sb_buf_release(&r->out);
	sb_buf_release(&r->err);
}

int
sb_cmd_find_program(const char *name, const char *path_env, char **ret,
    struct sb_error **err)
{
	_cleanup_free_ char *copy = NULL;
	char *dir, *save = NULL;

	if (name == NULL || *name == '\0')
		return sb_error_set(err, ENOENT, "empty program name");
	if (strchr(name, '/') != NULL) {
		struct stat st;

		if (stat(name, &st) < 0 || access(name, X_OK) < 0)
			return sb_error_errno(err, errno, "'%s'", name);
		/* access(X_OK) passes for a directory; execve would fail with EACCES. */
		if (!S_ISREG(st.st_mode))
			return sb_error_errno(err, EACCES, "'%s'", name);
		*ret = sb_xstrdup(name);
		return 0;
	}
	copy = sb_xstrdup(path_env != NULL ? path_env : "/usr/local/bin:/usr/bin:/bin");
	for (dir = strtok_r(copy, ":", &save); dir != NULL; dir = strtok_r(NULL, ":", &save)) {
		_cleanup_free_ char *cand = NULL;
		struct stat st;

		/* An empty or relative PATH entry would mean the current directory: skip it. */
		if (dir[0] != '/')
			continue;
		cand = sb_xasprintf("%s/%s", dir, name);
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0) {
			*ret = TAKE_PTR(cand);
			return 0;
		}
	}
	return sb_error_set(err, ENOENT, "'%s' not found in PATH", name);
}

int
sb_exit_code_for_exec_errno(int errnum)
{
	return errnum == ENOENT || errnum == ENOTDIR ? SB_EXIT_NOT_FOUND : SB_EXIT_CANNOT_EXEC;
}

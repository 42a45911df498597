/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spawn.h: struct sb_cmd, the only way ssebench starts a process (docs/design.md, "Starting
 * processes").
 *
 * No shell, ever: a program path and an argv vector, with an explicit environment (nothing
 * is inherited unless the caller copies it in). Stdin is /dev/null unless asked otherwise.
 * Everything is prepared before fork; the child makes only async-signal-safe calls and
 * reports a failure before exec through a close-on-exec pipe, so "could not start" (with
 * the step and errno) is told apart from "ran and exited non-zero".
 *
 * sb_cmd_run adds what a harness needs around a child: a wall-clock timeout that sends
 * SIGTERM to the child's process group, then SIGKILL after a grace period; output
 * captured into bounded buffers (the rest is read and counted, so the child never blocks
 * on a full pipe); and, when the child has its own process group, a SIGKILL to that group
 * after it exits so nothing it started outlives it there.
 */
#ifndef SB_SPAWN_H
#define SB_SPAWN_H

#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "sb/buf.h"
#include "sb/common.h"
#include "sb/error.h"
#include "sb/priv.h"
#include "sb/sandbox.h"

/* Special values for sb_cmd's stdin_fd / stdout_fd / stderr_fd. */
#define SB_CMD_DEVNULL (-2) /* /dev/null (the default for stdin) */
#define SB_CMD_INHERIT (-3) /* the parent's own fd 0, 1 or 2 */
#define SB_CMD_CAPTURE (-4) /* a pipe: read into the result, or fed from stdin_data */

enum sb_cmd_flags {
	SB_CMD_NEW_PGRP = 1 << 0,	  /* child leads a new process group */
	SB_CMD_NEW_SESSION = 1 << 1,	  /* child leads a new session (and group) */
	SB_CMD_DEATHSIG = 1 << 2,	  /* SIGKILL the child if we die */
	SB_CMD_STDERR_TO_STDOUT = 1 << 3, /* stderr goes where stdout goes */
	SB_CMD_NO_GROUP_REAP = 1 << 4,	  /* do not SIGKILL the group after the child exits */
	SB_CMD_DEATHSIG_TERM = 1 << 5,	  /* SIGTERM the child if we die: it cleans up and goes */
};

struct sb_rlimit_set {
	int resource; /* RLIMIT_* */
	rlim_t cur, max;
};

struct sb_cmd {
	/* What: an absolute (or relative to the current directory) program path, and argv. */
	const char *path;
	char *const *argv;
	char *const *envp; /* NULL means an empty environment */
	/* Where: a directory fd to fchdir to, or -1 for the parent's working directory. */
	int cwd_fd;
	/* stdio: an fd >= 0, or one of SB_CMD_DEVNULL / SB_CMD_INHERIT / SB_CMD_CAPTURE. */
	int stdin_fd, stdout_fd, stderr_fd;
	const void *stdin_data; /* with stdin_fd == SB_CMD_CAPTURE */
	size_t stdin_len;
	/* Who: credentials to drop to, a seccomp filter to load last, resource limits. */
	const struct sb_creds *creds;
	/*
	 * A sandbox to enter after the credential drop (sb/sandbox.h; prepared for the creds'
	 * ids, which must be set). The resource limits are then set inside it, so that a
	 * per-user count such as RLIMIT_NPROC is the sandbox's own.
	 */
	const struct sb_sandbox *sandbox;
	const struct sb_seccomp *seccomp;
	/*
	 * A cgroup.procs file the child joins first, while still root (sb/freezer.h): every
	 * process it becomes, and all it forks, are in that cgroup. NULL: stay where it is.
	 */
	const char *cgroup_procs;
	const struct sb_rlimit_set *rlimits;
	size_t n_rlimits;
	unsigned flags; /* enum sb_cmd_flags */
	/* Limits applied by sb_cmd_wait / sb_cmd_run. */
	uint64_t timeout_ms;  /* 0: no timeout */
	uint64_t grace_ms;    /* SIGTERM -> SIGKILL; 0: SB_KILL_GRACE_MS */
	size_t capture_max;   /* bytes kept per captured stream; 0: SB_CAPTURE_DEFAULT */
	uint64_t drain_ms;    /* after exit: how long to read output others hold open; 0: 1000 */
	/* State, set by sb_cmd_start. */
	uint64_t start_ms; /* CLOCK_MONOTONIC at the fork: the timeout counts from here */
	pid_t pid;
	int pidfd;
	int in_pipe, out_pipe, err_pipe;
};

#define SB_CMD_INIT                                                                 \
	{                                                                           \
		.cwd_fd = -1, .stdin_fd = SB_CMD_DEVNULL, .stdout_fd = SB_CMD_INHERIT, \
		.stderr_fd = SB_CMD_INHERIT, .pid = -1, .pidfd = -1, .in_pipe = -1,  \
		.out_pipe = -1, .err_pipe = -1,                                     \
	}

struct sb_cmd_result {
	int exit_code;	     /* exit status; 128 + N if killed by signal N; 124 on timeout */
	int term_signal;     /* the signal that ended the child, or 0 */
	bool timed_out;	     /* the timeout fired (exit_code is then 124) */
	struct sb_buf out;   /* captured stdout (SB_CMD_CAPTURE), at most capture_max bytes */
	struct sb_buf err;   /* captured stderr */
	size_t out_dropped;  /* bytes read past the cap and discarded */
	size_t err_dropped;
	uint64_t elapsed_ms; /* from start to exit */
};

/*
 * Start the child. On failure nothing is left running; *err's code is the errno of the
 * step that failed, and its message names the step ("cannot start 'x': execve: ...").
 */
int sb_cmd_start(struct sb_cmd *c, struct sb_error **err);

/*
 * Feed stdin, capture output, enforce the timeout, reap the child (and its group), then
 * fill *ret (which the caller releases with sb_cmd_result_release). Fails only if the
 * harness itself fails (poll, waitpid), or with EINVAL if c is not running (never started,
 * or already waited for); a child's failure is in ret->exit_code. On failure *ret holds no
 * memory.
 */
int sb_cmd_wait(struct sb_cmd *c, struct sb_cmd_result *ret, struct sb_error **err);

/* sb_cmd_start + sb_cmd_wait. */
int sb_cmd_run(struct sb_cmd *c, struct sb_cmd_result *ret, struct sb_error **err);

void sb_cmd_result_release(struct sb_cmd_result *r);

/* CLOCK_MONOTONIC in milliseconds: the clock of start_ms and of every deadline here. */
uint64_t sb_now_ms(void);

/* Send sig to the child (to its whole group if it has its own). */
void sb_cmd_kill(const struct sb_cmd *c, int sig);

/*
 * Find an executable: name with a slash is taken as is (if executable); otherwise each
 * directory of path_env (a PATH value) is tried. *ret is malloc'd.
 */
int sb_cmd_find_program(const char *name, const char *path_env, char **ret,
    struct sb_error **err);

/* The shell-style status for a start failure: 127 for ENOENT/ENOTDIR, else 126. */
int sb_exit_code_for_exec_errno(int errnum);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * freezer.h: holding every process of a cgroup still, with the kernel's cgroup freezer
 * (v2 cgroup.freeze, or v1 freezer.state).
 *
 * Why not SIGSTOP: a stopped process is continued by any SIGCONT, and the kernel sends one
 * on the process's own behalf (a POSIX timer, F_SETSIG, O_ASYNC, mq_notify, a tracer that
 * dies), so a uid stopped by signals can arrange to wake up while it must not watch. A
 * frozen task ignores signals until the cgroup is thawed, and cannot fork. See
 * docs/integrity.md ("a check on hidden material").
 */
#ifndef SB_FREEZER_H
#define SB_FREEZER_H

#include <stdbool.h>
#include <sys/types.h>

#include "sb/common.h"
#include "sb/error.h"

struct sb_freezer {
	int fd;		/* the cgroup's directory */
	bool v2;	/* cgroup.freeze (v2) rather than freezer.state (v1) */
	char *procs;	/* <dir>/cgroup.procs: for a child to join (sb_cmd.cgroup_procs) */
};

#define SB_FREEZER_INIT { -1, false, NULL }

/*
 * Open a cgroup directory for freezing: it must be a cgroup (v1 with the freezer controller,
 * or v2), a directory that is not a link, owned by root and writable by nobody else (the
 * processes it holds must not be able to thaw themselves or leave it).
 */
int sb_freezer_open(const char *dir, struct sb_freezer *f, struct sb_error **err);

void sb_freezer_close(struct sb_freezer *f);

/*
 * Freeze the cgroup and wait until the kernel says it is frozen (within timeout_ms), then
 * check that every live process of uid (real, effective or saved) is in it: one outside
 * could watch. Fails with ETIMEDOUT or EBUSY (and the count in the message); the cgroup may
 * then be frozen in part, and the caller thaws it.
 */
int sb_freezer_freeze(const struct sb_freezer *f, uid_t uid, unsigned timeout_ms,
    struct sb_error **err);

int sb_freezer_thaw(const struct sb_freezer *f, struct sb_error **err);

/*
 * Kill every process in the cgroup: frozen first (nothing forks), SIGKILL to each member,
 * then thawed (v1 frozen tasks die only then, before they run again); repeated until it is
 * empty, for up to about timeout_ms. Returns 0 when it is empty, -1 with EBUSY otherwise.
 */
int sb_freezer_kill(const struct sb_freezer *f, unsigned timeout_ms, struct sb_error **err);

/* The pids the cgroup holds, as this process's pid namespace numbers them. */
int sb_freezer_members(const struct sb_freezer *f, pid_t **ret, size_t *ret_n,
    struct sb_error **err);

#endif

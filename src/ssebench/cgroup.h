/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup.h: the agent's freezer cgroup of a run, on the host.
 *
 * While a check on hidden material runs, the daemon freezes this cgroup
 * (daemon/runner.c:hidden_check_begin), which no signal undoes; a stop by SIGSTOP is undone by
 * a SIGCONT the kernel sends on the agent's behalf (docs/integrity.md). It is made on the
 * host, root's and 0700, as <hierarchy>/ssebench/<run-id>, and bound into the container that
 * runs the agent's processes at AGENT_CGROUP_TARGET.
 *
 * Only in a hierarchy that holds the freezer and nothing else: a process moved there leaves
 * the container's cgroup in that hierarchy, so a hierarchy with the memory or pids
 * controller would take the agent out of the container's limits. That is cgroup v2 where it
 * has no controller (the hybrid layout's /sys/fs/cgroup/unified), or the v1 freezer. A
 * v2-only host (every controller in the one tree) has none here: the agent is stopped by
 * signals, and config.agent_freezer says so.
 */
#ifndef SSEBENCH_CGROUP_H
#define SSEBENCH_CGROUP_H

#define AGENT_CGROUP_TARGET "/run/ssebench-agent-cgroup"

/*
 * Make the run's cgroup. Returns its kind ("cgroup-v2", "cgroup-v1"), with *path its
 * directory (free it), or "signals" with *path NULL when no hierarchy here will do.
 */
const char *agent_cgroup_make(const char *run_id, char **path);

/* Kill what is left in the cgroup at path and remove it (a warning when that fails). */
void agent_cgroup_remove(const char *path);

/*
 * Remove the cgroup a run made, in whichever hierarchy it is (`runs remove` of a kept run:
 * its cgroup outlives `run`). Returns 0, or -1 when one is left (a warning says why).
 */
int agent_cgroup_sweep(const char *run_id);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proc.h: finding and killing every process of a user.
 *
 * The harness ends a phase by killing all processes of a uid, not just a process group: code
 * that daemonises (double fork, setsid) leaves any group it was started in.
 */
#ifndef SB_PROC_H
#define SB_PROC_H

#include <sys/types.h>

#include "sb/common.h"
#include "sb/error.h"

/*
 * Number of live processes (not zombies) whose real, effective or saved uid is uid, as
 * /proc shows them. The caller's own process never counts.
 */
int sb_proc_count_uid(uid_t uid, struct sb_error **err);

/* The live processes (not zombies) of uid, as sb_proc_count_uid counts them (*ret: free). */
int sb_proc_list_uid(uid_t uid, pid_t **ret, size_t *ret_n, struct sb_error **err);

/*
 * SIGKILL every process of uid, then check /proc; repeat for up to `rounds` rounds with a
 * growing pause. Each round forks a child that drops to uid/gid (no groups) and calls
 * kill(-1, SIGKILL), which reaches every process that uid may signal, whatever its group or
 * session. Needs root (CAP_SETUID/CAP_SETGID). Returns 0 when none is left, or -1 with
 * EBUSY and the number left in the message.
 */
int sb_proc_kill_uid(uid_t uid, gid_t gid, unsigned rounds, struct sb_error **err);

/*
 * Send sig to every process of uid at once, the same way (a child dropped to uid/gid calls
 * kill(-1, sig): a process forking at that moment cannot leave a child behind that missed
 * it). For SIGSTOP and SIGCONT: freezing a user's processes while something they must not
 * watch runs. SIGSTOP returns only when two passes over /proc in a row found every thread of
 * uid stopped (root stops what it finds running), and fails (EBUSY) if that did not happen
 * within about a second, rather than pretend. SIGCONT, when no child can be forked or the
 * uid's processes disturbed it, is sent by root to each process /proc lists. For another
 * signal, fails (EAGAIN) if no child can be forked and (EINTR) if the uid's processes
 * killed or kept stopping it.
 */
int sb_proc_signal_uid(uid_t uid, gid_t gid, int sig, struct sb_error **err);

/*
 * Look up every name of the directory dir (one level, no link followed, nothing read), as
 * the caller: afterwards each is in the kernel's cache of looked-up names, whoever looked
 * it up first. Returns how many, or -1.
 */
int sb_proc_look_up_all(const char *dir, struct sb_error **err);

#endif

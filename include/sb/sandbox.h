/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sandbox.h: a private view of the machine for untrusted code that must not share anything
 * with another user: the runner's task scripts, which during the agent phase (levels 0 and
 * 1) and during grading run next to hidden material, the PoCs and the hidden tests.
 *
 * A sandboxed child gets, after its uid change and before its seccomp filter:
 *   - user, network, mount and IPC namespaces of its own. The user namespace maps only its
 *     own uid and gid (to themselves), so it needs no privilege to make, and the namespaces
 *     under it need none either: no capability of the container is used;
 *   - a network with only a loopback interface, up: no other run, no model proxy, no host,
 *     and not the daemon's TCP port or the MCP server (loopback is its own);
 *   - optionally a root of its own: a copy of the image that no file of the agent's view
 *     shares an inode with (made when the image is built), with the container's /proc and
 *     /dev, its writable places and the few places it is given (`bound`) mounted in at the
 *     same paths, and no /sys. Code that runs next to hidden material then cannot touch a
 *     page the agent can read, so the page cache carries nothing from one to the other
 *     (docs/images.md, "Tool layer", step 6);
 *   - every mount read-only, but the places it is given to write (bind-mounted onto
 *     themselves first, so they stay writable);
 *   - a fresh tmpfs on each private temporary directory (/tmp, /var/tmp, /dev/shm): nothing
 *     it writes there is seen by anyone else, and the agent's socket in /tmp is gone;
 *   - an empty, read-only, mode 0000 tmpfs over each hidden directory: the places the agent can write
 *     (its tree, its home, its archive, the daemon's state) and the socket directories, so
 *     that it can neither leave anything where the agent would find it, nor reach a FIFO
 *     or a socket the agent planted (a read-only mount does not stop either);
 *   - its own System V IPC and POSIX message queues (an mqueue file system of its own on
 *     /dev/mqueue), its own terminals (a new devpts instance on /dev/pts: no pty the agent
 *     opened is there), and its own abstract Unix sockets (they belong to the network
 *     namespace).
 * It runs with no capability: the ones the new user namespace gives it are dropped before
 * exec, and no_new_privs (already set by the uid change) keeps exec from adding any.
 *
 * Needs a kernel that allows user namespaces to an unprivileged uid and mount_setattr(2)
 * (5.12). In a container, the container's seccomp profile must allow unshare(2) and mount(2)
 * (Docker's default does not; the CLI gives runs a profile of its own, docs/integrity.md).
 */
#ifndef SB_SANDBOX_H
#define SB_SANDBOX_H

#include <stdbool.h>
#include <sys/types.h>

#include "sb/common.h"
#include "sb/error.h"

#define SB_SANDBOX_PATHS_MAX 16
#define SB_SANDBOX_PATH_BYTES 4096 /* a path the child builds, with its NUL */
#define SB_SANDBOX_TMP_DEFAULT ((unsigned long long)1 << 30) /* bytes per private tmpfs */

struct sb_sandbox {
	/* What the caller fills in: absolute, normalised paths, valid until the child execs. */
	const char *writable[SB_SANDBOX_PATHS_MAX];    /* directories that stay writable */
	const char *private_tmp[SB_SANDBOX_PATHS_MAX]; /* each gets a fresh tmpfs, mode 1777 */
	const char *hidden[SB_SANDBOX_PATHS_MAX];      /* each is covered by an empty tmpfs */
	const char *bound[SB_SANDBOX_PATHS_MAX];       /* with root: the container's, kept
							  * read-only */
	size_t nwritable, nprivate, nhidden, nbound;
	/* NULL: the container's root. Otherwise an absolute directory (not "/") that becomes
	 * the root; each writable and bound place, /proc and /dev are mounted into it at the
	 * same paths, and must have a directory there to be mounted on. */
	const char *root;
	/* With root: a directory of it covered by an empty tmpfs before the places below it
	 * are mounted on directories made there. The places are then all there is of it: a
	 * name looked up in it (even one that does not exist, which ext4 keeps) is not in the
	 * real directory, where a later job could time its lookup. */
	const char *scaffold;
	unsigned long long tmp_size; /* bytes per private tmpfs; 0: SB_SANDBOX_TMP_DEFAULT */
	/* What sb_sandbox_prepare fills in, for the child (which may not allocate). */
	char uid_map[48], gid_map[48], tmp_opts[64];
	bool prepared;
};

/*
 * Add a path to one of the three lists (`list` is sb->writable, sb->private_tmp or
 * sb->hidden, `n` its count). Refuses a relative path and a full list (EINVAL, E2BIG).
 */
int sb_sandbox_add(const char **list, size_t *n, const char *path, struct sb_error **err);

/*
 * Check the lists and prepare what the child needs for uid/gid (the ids the child has
 * after its credential drop). A hidden or private directory that is, or contains, a
 * writable one is refused (EINVAL): it would hide what must stay reachable.
 */
int sb_sandbox_prepare(struct sb_sandbox *sb, uid_t uid, gid_t gid, struct sb_error **err);

/*
 * The places the task scripts' sandboxes are built from (the daemon's and the entrypoint's
 * configuration; one builder, so the runner's probe sees what a script sees). The strings
 * must outlive the sandboxes; so must this struct, which holds the derived directories.
 */
struct sb_runner_places {
	const char *runner_dir;		/* writable: workspaces, homes, staged copies */
	const char *source, *agent_home, *archive, *state_dir, *results, *repo_path; /* hidden */
	const char *agent_socket, *admin_socket; /* their directories are hidden */
	const char *root;		/* the scripts' own root, or NULL or "/": none */
	/* Filled in by sb_sandbox_for_runner. */
	char socket_dir[2][SB_SANDBOX_PATH_BYTES], root_parent[SB_SANDBOX_PATH_BYTES];
	const char *hidden[12];
};

/*
 * The task scripts' two sandboxes. Both: runner_dir writable (its workspaces, homes and
 * staged copies), a private /tmp, /var/tmp and /dev/shm, and hidden: the agent's tree, home
 * and archive, the daemon's state, the socket directories, the results, the pristine
 * repository and /run/lock. A hidden place that is, or is above, runner_dir, or that lies
 * in a private directory (gone anyway), is left out: the isolation probe, run in the same
 * sandbox, then finds whatever stayed reachable.
 *   - `open`, for the jobs whose output the agent sees (its builds and functional tests):
 *     the container's root, with the directory holding the scripts' own root hidden too;
 *   - `withheld`, for the jobs whose output it never sees (checks on hidden material, and
 *     all of grading): the scripts' own root (pl->root, described above), so that what
 *     they do to the page cache of a file can reach neither the agent nor its next build.
 * Without a root of their own the two are the same. Prepared for uid/gid.
 */
int sb_sandbox_for_runner(struct sb_sandbox *open, struct sb_sandbox *withheld,
    struct sb_runner_places *pl, uid_t uid, gid_t gid, struct sb_error **err);

/*
 * In the child, after the uid change: make and enter the namespaces, set up the mounts and
 * the loopback interface, drop the namespace's capabilities, then fchdir to cwd_fd (>= 0)
 * through its new mount. Async-signal-safe (system calls on prepared data only). Returns 0,
 * or -1 with errno set and *ret_step naming what failed.
 */
int sb_sandbox_enter(const struct sb_sandbox *sb, int cwd_fd, const char **ret_step);

#endif

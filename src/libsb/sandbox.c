/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sandbox.c: the runner's private namespaces and mounts (see sandbox.h).
 *
 * sb_sandbox_enter runs in a forked child between its uid change and its exec, so it makes
 * system calls only, on strings the parent prepared. The order matters:
 *   1. unshare the user namespace together with the others: the new mount and network
 *      namespaces then belong to it, and the capabilities it gives are good for them;
 *   2. map our one uid and gid (setgroups denied first, as the kernel requires for an
 *      unprivileged gid map);
 *   3. bring up loopback;
 *   4. mounts: private propagation; with a root of its own, that root bound onto itself,
 *      the container's /proc and /dev, writable and bound places mounted into it, and
 *      pivot_root into it (the container's root detached: nothing of it stays reachable);
 *      the writable places bound onto themselves, everything
 *      read-only, the writable places (and /proc, /dev) back to read-write, then the private
 *      tmpfs and the hidden covers;
 *   5. back to the working directory through its new mount (the old descriptor points into
 *      the mount that is now read-only);
 *   6. drop every capability of the namespace (ambient, bounding, then the sets).
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sb/common.h"
#include "sb/path.h"
#include "sb/sandbox.h"

#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

/* The kernel's struct mount_attr, spelled out: older headers lack it. */
struct sandbox_mount_attr {
	unsigned long long attr_set, attr_clr, propagation, userns_fd;
};

int
sb_sandbox_add(const char **list, size_t *n, const char *path, struct sb_error **err)
{
	if (path == NULL || path[0] != '/')
		return sb_error_set(err, EINVAL, "sandbox path '%s' is not absolute",
		    path != NULL ? path : "(null)");
	if (*n >= SB_SANDBOX_PATHS_MAX)
		return sb_error_set(err, E2BIG, "more than %d sandbox paths", SB_SANDBOX_PATHS_MAX);
	list[(*n)++] = path;
	return 0;
}

/* Is a the same directory as b, or above it? ("/a" is above "/a/b", not above "/ab".) */
static bool
covers(const char *a, const char *b)
{
	size_t n = strlen(a);

	if (n == 1 && a[0] == '/')
		return true;
	return strncmp(a, b, n) == 0 && (b[n] == '\0' || b[n] == '/');
}

int
sb_sandbox_prepare(struct sb_sandbox *sb, uid_t uid, gid_t gid, struct sb_error **err)
{
	unsigned long long size = sb->tmp_size != 0 ? sb->tmp_size : SB_SANDBOX_TMP_DEFAULT;

	for (size_t w = 0; w < sb->nwritable; w++) {
		for (size_t h = 0; h < sb->nhidden; h++)
			if (covers(sb->hidden[h], sb->writable[w]))
				return sb_error_set(err, EINVAL,
				    "sandbox: hiding '%s' would hide the writable '%s'", sb->hidden[h],
				    sb->writable[w]);
		for (size_t p = 0; p < sb->nprivate; p++)
			if (covers(sb->private_tmp[p], sb->writable[w]))
				return sb_error_set(err, EINVAL,
				    "sandbox: a private '%s' would hide the writable '%s'",
				    sb->private_tmp[p], sb->writable[w]);
	}
	if (sb->root != NULL) {
		size_t rl = strlen(sb->root);

		if (sb->root[0] != '/' || strcmp(sb->root, "/") == 0)
			return sb_error_set(err, EINVAL, "sandbox: the root '%s' is not an absolute "
			    "directory other than /", sb->root);
		for (size_t i = 0; i < sb->nwritable + sb->nbound; i++) {
			const char *p = i < sb->nwritable ? sb->writable[i] : sb->bound[i - sb->nwritable];

			/* Mounted into the root at the same path: one inside it would be a loop. */
			if (covers(sb->root, p) || covers(p, sb->root))
				return sb_error_set(err, EINVAL, "sandbox: '%s' and the root '%s' overlap",
				    p, sb->root);
			if (rl + strlen(p) >= SB_SANDBOX_PATH_BYTES)
				return sb_error_set(err, ENAMETOOLONG, "sandbox: '%s%s' is too long",
				    sb->root, p);
		}
		if (sb->scaffold != NULL && (sb->scaffold[0] != '/' ||
			rl + strlen(sb->scaffold) >= SB_SANDBOX_PATH_BYTES))
			return sb_error_set(err, EINVAL, "sandbox: the scaffold '%s' is not an "
			    "absolute path", sb->scaffold);
	} else if (sb->nbound > 0 || sb->scaffold != NULL) {
		return sb_error_set(err, EINVAL, "sandbox: places to keep need a root of its own");
	}
	if (uid == 0 || gid == 0)
		return sb_error_set(err, EPERM, "sandbox: the sandboxed uid and gid must not be 0");
	snprintf(sb->uid_map, sizeof(sb->uid_map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	snprintf(sb->gid_map, sizeof(sb->gid_map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	snprintf(sb->tmp_opts, sizeof(sb->tmp_opts), "mode=1777,size=%llu", size);
	sb->prepared = true;
	return 0;
}

/* The directory path is in, into dir (SB_SANDBOX_PATH_BYTES): "/" for "/x" and for "/". */
static int
parent_of(const char *path, char *dir, struct sb_error **err)
{
	const char *slash = strrchr(path, '/');
	size_t n;

	if (path[0] != '/' || slash == NULL)
		return sb_error_set(err, EINVAL, "sandbox path '%s' is not absolute", path);
	n = slash == path ? 1 : (size_t)(slash - path);
	if (n >= SB_SANDBOX_PATH_BYTES)
		return sb_error_set(err, ENAMETOOLONG, "sandbox path '%s' is too long", path);
	memcpy(dir, path, n);
	dir[n] = '\0';
	return 0;
}

/* One of the two sandboxes of sb_sandbox_for_runner. */
static int
runner_one(struct sb_sandbox *sb, const struct sb_runner_places *pl, const char *root,
    const char *const *others, uid_t uid, gid_t gid, struct sb_error **err)
{
	static const char *const tmp[] = { "/tmp", "/var/tmp", "/dev/shm" };

	memset(sb, 0, sizeof(*sb));
	sb->root = root;
	if (sb_sandbox_add(sb->writable, &sb->nwritable, pl->runner_dir, err) < 0)
		return -1;
	for (size_t i = 0; i < SB_ARRAY_SIZE(tmp); i++)
		if (!covers(tmp[i], pl->runner_dir) &&
		    sb_sandbox_add(sb->private_tmp, &sb->nprivate, tmp[i], err) < 0)
			return -1;
	if (sb_sandbox_add(sb->hidden, &sb->nhidden, "/run/lock", err) < 0)
		return -1;
	for (const char *const *o = others; *o != NULL; o++) {
		bool skip = covers(*o, pl->runner_dir);

		for (size_t i = 0; i < sb->nprivate && !skip; i++)
			skip = covers(sb->private_tmp[i], *o);
		for (size_t i = 0; i < sb->nhidden && !skip; i++)
			skip = covers(sb->hidden[i], *o);
		if (!skip && sb_sandbox_add(sb->hidden, &sb->nhidden, *o, err) < 0)
			return -1;
	}
	return sb_sandbox_prepare(sb, uid, gid, err);
}

int
sb_sandbox_for_runner(struct sb_sandbox *open, struct sb_sandbox *withheld,
    struct sb_runner_places *pl, uid_t uid, gid_t gid, struct sb_error **err)
{
	const char *const paths[] = { pl->source, pl->agent_home, pl->archive, pl->state_dir,
		pl->results, pl->repo_path };
	const char *const socks[] = { pl->agent_socket, pl->admin_socket };
	bool own = pl->root != NULL && strcmp(pl->root, "/") != 0;
	size_t n = 0;

	if (pl->runner_dir == NULL)
		return sb_error_set(err, EINVAL, "sandbox: no runner directory");
	for (size_t i = 0; i < SB_ARRAY_SIZE(paths); i++)
		if (paths[i] != NULL)
			pl->hidden[n++] = paths[i];
	for (size_t i = 0; i < SB_ARRAY_SIZE(socks); i++) {
		if (socks[i] == NULL)
			continue;
		if (parent_of(socks[i], pl->socket_dir[i], err) < 0)
			return -1;
		if (strcmp(pl->socket_dir[i], "/") != 0)
			pl->hidden[n++] = pl->socket_dir[i];
	}
	pl->hidden[n] = NULL;
	if (runner_one(withheld, pl, own ? pl->root : NULL, pl->hidden, uid, gid, err) < 0)
		return -1;
	/* The open one hides the directory the root is in (0710: root is the runner's way in). */
	if (own) {
		if (parent_of(pl->root, pl->root_parent, err) < 0)
			return -1;
		if (strcmp(pl->root_parent, "/") == 0)
			return sb_error_set(err, EINVAL, "sandbox: the root '%s' must be below a "
			    "directory of its own", pl->root);
		pl->hidden[n++] = pl->root_parent;
		pl->hidden[n] = NULL;
	}
	return runner_one(open, pl, NULL, pl->hidden, uid, gid, err);
}

/* write(2) a whole string to a file that exists; async-signal-safe. */
static int
write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t n = strlen(s);
	ssize_t w;

	if (fd < 0)
		return -1;
	w = write(fd, s, n);
	close(fd);
	if (w != (ssize_t)n) {
		if (w >= 0)
			errno = EIO;
		return -1;
	}
	return 0;
}

static int
loopback_up(void)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r;

	if (s < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", 3);
	r = ioctl(s, SIOCGIFFLAGS, &ifr);
	if (r == 0) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		r = ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	close(s);
	return r;
}

static int
set_ro(const char *path, bool ro, bool recursive)
{
	struct sandbox_mount_attr a;

	memset(&a, 0, sizeof(a));
	if (ro)
		a.attr_set = MOUNT_ATTR_RDONLY;
	else
		a.attr_clr = MOUNT_ATTR_RDONLY;
	return (int)syscall(SYS_mount_setattr, AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &a,
	    sizeof(a));
}

/* Is path the root of a mount of another file system than "/"'s (as /proc and /dev are)? */
static bool
other_fs_root(const char *path, const struct stat *root)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_dev != root->st_dev;
}

/* The decimal form of a non-negative int, into buf (at least 12 bytes); async-signal-safe. */
static void
int_to_dec(int v, char *buf)
{
	char tmp[12];
	size_t n = 0, i = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v > 0 && n < sizeof(tmp));
	while (n > 0)
		buf[i++] = tmp[--n];
	buf[i] = '\0';
}

/* The path of the directory fd is, into path (SB_SANDBOX_PATH_BYTES). */
static int
fd_path(int fd, char *path)
{
	char link[32] = "/proc/self/fd/";
	ssize_t n;

	int_to_dec(fd, link + strlen(link));
	n = readlink(link, path, SB_SANDBOX_PATH_BYTES - 1);
	if (n <= 0 || path[0] != '/') {
		if (n >= 0)
			errno = ENOENT;
		return -1;
	}
	path[n] = '\0';
	return 0;
}

/*
 * chdir to the directory cwd_fd is, by the path it had (fd_path, before the mounts), so
 * that the working directory is on the mount that path now reaches (the one left
 * writable), and check that it is the same directory: a rename since the descriptor was
 * opened must not move us elsewhere. With a root of its own, "/" is that root (another
 * directory by design); any other path must still be the same directory, mounted in.
 */
static int
chdir_again(int cwd_fd, const char *path, bool own_root)
{
	struct stat a, b;

	if (fstat(cwd_fd, &a) < 0 || chdir(path) < 0 || stat(".", &b) < 0)
		return -1;
	if (own_root && strcmp(path, "/") == 0)
		return 0;
	if (a.st_ino != b.st_ino || a.st_dev != b.st_dev) {
		errno = ESTALE;
		return -1;
	}
	return 0;
}

static bool
dir_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int
drop_caps(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];

	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -1;
	for (int c = 0; c <= 63; c++)
		if (prctl(PR_CAPBSET_DROP, (unsigned long)c, 0, 0, 0) < 0 && errno != EINVAL)
			return -1;
	memset(data, 0, sizeof(data));
	return (int)syscall(SYS_capset, &hdr, data);
}

/* dst = a followed by b, in a buffer of SB_SANDBOX_PATH_BYTES (lengths checked by prepare). */
static void
join_path(char *dst, const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);

	if (na + nb >= SB_SANDBOX_PATH_BYTES)
		nb = SB_SANDBOX_PATH_BYTES - 1 - na;
	memcpy(dst, a, na);
	memcpy(dst + na, b, nb);
	dst[na + nb] = '\0';
}

/* mkdir -p for path, making only what is past its first `from` bytes (which exist). */
static int
mkdir_below(char *path, size_t from)
{
	for (size_t i = from + 1; path[i] != '\0'; i++) {
		if (path[i] != '/')
			continue;
		path[i] = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			path[i] = '/';
			return -1;
		}
		path[i] = '/';
	}
	return mkdir(path, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

/* getdents64's record; older headers lack a declaration. */
struct sandbox_dirent64 {
	unsigned long long d_ino;
	long long d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* A decimal pid ("123") or not: 0. */
static pid_t
pid_of_name(const char *s)
{
	long v = 0;

	if (*s < '1' || *s > '9')
		return 0;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9' || v > 1L << 30)
			return 0;
		v = v * 10 + (*s - '0');
	}
	return (pid_t)v;
}

/*
 * Cover /proc/<name> (a process, or a directory of /proc's own) with an empty, closed
 * directory: the first one a tmpfs, the others binds of it. A process gone meanwhile is
 * nothing to cover.
 */
static int
cover_pid(const char *name, char *first)
{
	char path[64] = "/proc/";

	if (strlen(name) > 20)
		return 0;
	memcpy(path + 6, name, strlen(name) + 1);
	if (first[0] == '\0') {
		if (mount("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
			"mode=0000,size=4096,nr_inodes=1") < 0)
			return errno == ENOENT ? 0 : -1;
		memcpy(first, path, strlen(path) + 1);
		return 0;
	}
	if (mount(first, path, NULL, MS_BIND, NULL) < 0)
		return errno == ENOENT ? 0 : -1;
	return 0;
}

/*
 * In a root of its own the scripts run what must not reach the agent (checks on hidden
 * material, grading). /proc is the container's, one pid namespace with the agent's
 * processes: a lookup of /proc/<pid>/environ of one of them makes a cached name that
 * stays while that process lives, and the agent, thawed, could tell which by the time its
 * own first lookups take (a bit a process; the agent can start thousands). So every
 * process but this one (and what it starts later) is covered, each thread's /proc/<tid>
 * too, which /proc does not list. The agent is frozen while this runs: none of its
 * processes can appear after the listing. Async-signal-safe: getdents64 into the stack.
 */
static int
cover_other_processes(const char **ret_step)
{
	char buf[4096], tbuf[2048], first[64] = "", self[24];
	int fd, n;

	*ret_step = "sandbox: cover the other processes in /proc";
	int_to_dec((int)getpid(), self);
	fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((n = (int)syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (int off = 0; off < n;) {
			struct sandbox_dirent64 *d = (struct sandbox_dirent64 *)(buf + off);
			char task[64] = "/proc/";
			int tfd, tn;

			off += d->d_reclen;
			/* A directory of /proc's own (sys, irq, tty, fs, driver, ...): names looked
			 * up in it stay cached too, and /proc/sys's per network namespace names
			 * would be made anew for the agent. The scripts do without them. */
			if (pid_of_name(d->d_name) == 0 && d->d_type == DT_DIR &&
			    strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0) {
				if (cover_pid(d->d_name, first) < 0) {
					close(fd);
					return -1;
				}
				continue;
			}
			if (pid_of_name(d->d_name) == 0 || strcmp(d->d_name, self) == 0 ||
			    strlen(d->d_name) > 20)
				continue;
			/* Its threads first: once it is covered, its task/ is out of reach. */
			memcpy(task + 6, d->d_name, strlen(d->d_name));
			memcpy(task + 6 + strlen(d->d_name), "/task", 6);
			tfd = open(task, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			while (tfd >= 0 && (tn = (int)syscall(SYS_getdents64, tfd, tbuf, sizeof(tbuf))) > 0)
				for (int toff = 0; toff < tn;) {
					struct sandbox_dirent64 *t = (struct sandbox_dirent64 *)(tbuf + toff);

					toff += t->d_reclen;
					if (pid_of_name(t->d_name) != 0 && strcmp(t->d_name, d->d_name) != 0 &&
					    cover_pid(t->d_name, first) < 0) {
						close(tfd);
						close(fd);
						return -1;
					}
				}
			if (tfd >= 0)
				close(tfd);
			if (cover_pid(d->d_name, first) < 0) {
				close(fd);
				return -1;
			}
		}
	}
	close(fd);
	return n < 0 ? -1 : 0;
}

/*
 * The root of its own: bind it onto itself (pivot_root needs a mount), mount into it what
 * it keeps of the container, then make it the root and detach the container's. Every
 * mount is recursive: a bind without its submounts would uncover what the container's
 * masks (/proc's) cover, and the kernel refuses it in a user namespace anyway.
 */
static int
enter_root(const struct sb_sandbox *sb, const char **ret_step)
{
	/*
	 * Not /sys: a name looked up in it (one that exists, or one that does not: sysfs keeps
	 * both) stays cached for the agent to time afterwards. The copy's /sys stays an empty
	 * directory. /proc's entries of other processes are covered (cover_other_processes).
	 */
	static const char *const pseudo[] = { "/proc", "/dev" };
	char target[SB_SANDBOX_PATH_BYTES];

	*ret_step = "sandbox: bind its root";
	if (mount(sb->root, sb->root, NULL, MS_BIND | MS_REC, NULL) < 0)
		return -1;
	*ret_step = "sandbox: mount /proc and /dev into its root";
	for (size_t i = 0; i < SB_ARRAY_SIZE(pseudo); i++) {
		if (!dir_exists(pseudo[i]))
			continue;
		join_path(target, sb->root, pseudo[i]);
		if (mount(pseudo[i], target, NULL, MS_BIND | MS_REC, NULL) < 0)
			return -1;
	}
	/* The scaffold: passable, not listable (as the runner's area is, 0710 root:runner). */
	if (sb->scaffold != NULL) {
		*ret_step = "sandbox: the scaffold of its places";
		join_path(target, sb->root, sb->scaffold);
		if (mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			"mode=0111,size=65536,nr_inodes=256") < 0)
			return -1;
		for (size_t i = 0; i < sb->nwritable + sb->nbound; i++) {
			const char *p = i < sb->nwritable ? sb->writable[i] : sb->bound[i - sb->nwritable];

			if (covers(sb->scaffold, p) && strcmp(sb->scaffold, p) != 0) {
				join_path(target, sb->root, p);
				if (mkdir_below(target, strlen(sb->root) + strlen(sb->scaffold)) < 0)
					return -1;
			}
		}
	}
	/*
	 * Shorter paths first: a place inside another (a check's workspace inside the runner's
	 * area) is mounted onto the directory the outer mount brought in, not onto the copy's
	 * empty one, which the outer mount would then cover. No allocation here: a pass per
	 * length is cheap for SB_SANDBOX_PATHS_MAX places.
	 */
	*ret_step = "sandbox: mount its places into its root";
	for (size_t len = 1, left = sb->nwritable + sb->nbound; left > 0; len++) {
		if (len >= SB_SANDBOX_PATH_BYTES) {
			errno = ENAMETOOLONG;
			return -1;
		}
		for (size_t i = 0; i < sb->nwritable + sb->nbound; i++) {
			const char *p = i < sb->nwritable ? sb->writable[i] : sb->bound[i - sb->nwritable];

			if (strlen(p) != len)
				continue;
			left--;
			join_path(target, sb->root, p);
			if (mount(p, target, NULL, MS_BIND | MS_REC, NULL) < 0)
				return -1;
		}
	}
	/* pivot_root(".", "."): the old root is stacked on the new one, then detached. */
	*ret_step = "sandbox: pivot_root into its root";
	if (chdir(sb->root) < 0 || syscall(SYS_pivot_root, ".", ".") < 0)
		return -1;
	*ret_step = "sandbox: detach the container's root";
	if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		return -1;
	return 0;
}

/*
 * Write the user namespace's maps. The uid change made us non-dumpable, and a non-dumpable
 * process's /proc files are root's: our own maps could not be written. Dumpable for these
 * three writes only: no other process of our uid runs now (the caller kills them all around
 * each script), and none could attach in so short a time anyway; back to non-dumpable at
 * once, since until exec this process holds a copy of its parent's memory.
 */
static int
map_ids(const struct sb_sandbox *sb)
{
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
		return -1;
	if (write_file("/proc/self/setgroups", "deny") < 0 ||
	    write_file("/proc/self/uid_map", sb->uid_map) < 0 ||
	    write_file("/proc/self/gid_map", sb->gid_map) < 0) {
		int e = errno;

		(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
		errno = e;
		return -1;
	}
	return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 ? -1 : 0;
}

/* A fresh tmpfs on each private temporary directory that exists. */
static int
mount_private_tmps(const struct sb_sandbox *sb)
{
	for (size_t i = 0; i < sb->nprivate; i++) {
		struct stat st;

		if (stat(sb->private_tmp[i], &st) < 0 && errno == ENOENT)
			continue;
		if (mount("tmpfs", sb->private_tmp[i], "tmpfs", MS_NOSUID | MS_NODEV,
			sb->tmp_opts) < 0)
			return -1;
	}
	return 0;
}

/* An empty, read-only, mode 0000 tmpfs over each hidden directory. */
static int
cover_hidden(const struct sb_sandbox *sb)
{
	for (size_t i = 0; i < sb->nhidden; i++) {
		struct stat st;

		/* Gone, below a private tmpfs already, or out of our reach: nothing to cover. */
		if (stat(sb->hidden[i], &st) < 0 &&
		    (errno == ENOENT || errno == ENOTDIR || errno == EACCES))
			continue;
		if (!S_ISDIR(st.st_mode)) {
			errno = ENOTDIR;
			return -1;
		}
		if (mount("tmpfs", sb->hidden[i], "tmpfs",
			MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
			"mode=0000,size=4096,nr_inodes=16") < 0)
			return -1;
	}
	return 0;
}

/*
 * Long because the order of these steps is the security property (docs/design.md,
 * "Starting processes"): the user namespace and its maps before any mount, the root and
 * the read-only remount before the writable places are opened up again, the private and
 * hidden directories on top of that, capabilities dropped last, in the one process that
 * then execs. Each step that is more than a call is a helper above; what is left is the
 * sequence itself, with the step name the parent reports set before each step.
 */
int
sb_sandbox_enter(const struct sb_sandbox *sb, int cwd_fd, const char **ret_step)
{
	char cwd[SB_SANDBOX_PATH_BYTES];
	struct stat root;

	*ret_step = "sandbox: not prepared";
	if (!sb->prepared) {
		errno = EINVAL;
		return -1;
	}
	*ret_step = "sandbox: unshare";
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWIPC) < 0)
		return -1;
	*ret_step = "sandbox: map the uid and gid";
	if (map_ids(sb) < 0)
		return -1;
	*ret_step = "sandbox: loopback";
	if (loopback_up() < 0)
		return -1;
	*ret_step = "sandbox: private mounts";
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -1;
	/* The working directory's path, taken while it is still reachable the way it was. */
	*ret_step = "sandbox: working directory";
	if (cwd_fd >= 0 && fd_path(cwd_fd, cwd) < 0)
		return -1;
	if (sb->root != NULL && (enter_root(sb, ret_step) < 0 || cover_other_processes(ret_step) < 0))
		return -1;
	/* Each writable place becomes a mount of its own, so it can stay read-write. */
	*ret_step = "sandbox: bind the writable places";
	for (size_t i = 0; i < sb->nwritable; i++)
		if (mount(sb->writable[i], sb->writable[i], NULL, MS_BIND | MS_REC, NULL) < 0)
			return -1;
	*ret_step = "sandbox: read-only";
	if (stat("/", &root) < 0 || set_ro("/", true, true) < 0)
		return -1;
	/*
	 * /proc and /dev stay writable (a program may write its own /proc files; devices are
	 * not affected by a read-only mount anyway); a mount that was read-only before (/sys)
	 * stays so: its flag is locked, and we only clear what we set.
	 */
	*ret_step = "sandbox: writable places";
	for (size_t i = 0; i < sb->nwritable; i++)
		if (set_ro(sb->writable[i], false, false) < 0)
			return -1;
	/*
	 * With a root of its own (the jobs whose output the agent never sees) they stay
	 * read-only: a time the job set on a device node or a /proc entry (a write, a touch,
	 * an access) would be there for the agent to read. Writes to devices still work.
	 */
	if (sb->root == NULL && other_fs_root("/proc", &root) && set_ro("/proc", false, false) < 0)
		return -1;
	if (sb->root == NULL && other_fs_root("/dev", &root) && set_ro("/dev", false, false) < 0)
		return -1;
	*ret_step = "sandbox: private temporary directories";
	if (mount_private_tmps(sb) < 0)
		return -1;
	*ret_step = "sandbox: hidden directories";
	if (cover_hidden(sb) < 0)
		return -1;
	/*
	 * A terminal the agent opened (a pty it made writable to all) and a message queue it
	 * made are reached through /dev/pts and /dev/mqueue whatever the mount flags say (a
	 * device, a queue): the sandbox gets an instance of each of its own, empty.
	 */
	*ret_step = "sandbox: terminals of its own";
	if (dir_exists("/dev/pts") && mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
					  "newinstance,ptmxmode=0666,mode=0600") < 0)
		return -1;
	*ret_step = "sandbox: message queues of its own";
	if (dir_exists("/dev/mqueue") &&
	    mount("mqueue", "/dev/mqueue", "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return -1;
	*ret_step = "sandbox: working directory";
	if (cwd_fd >= 0 && chdir_again(cwd_fd, cwd, sb->root != NULL) < 0)
		return -1;
	*ret_step = "sandbox: drop capabilities";
	if (drop_caps() < 0)
		return -1;
	*ret_step = NULL;
	return 0;
}

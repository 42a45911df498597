/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fsutil.c: the daemon's small file and process helpers (fsutil.h), shared by start-up
 * (setup.c) and the workers (runner.c, capture.c). Each is a few lines on top of libsb: the
 * owner-and-mode rules the daemon applies to the directories it makes and trusts.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sb/fs.h"
#include "sb/mem.h"
#include "sb/spawn.h"

#include "fsutil.h"

/*
 * Give fd this owner and mode, changing only what differs. The task files and the pristine
 * tree are on the container's root file system, which is read-only in a run: the tool
 * layer gave them the right owner and mode already, and a change that is not needed must
 * not fail there. A change that is needed and fails (EROFS included) is an error.
 */
int
own_fd(int fd, uid_t uid, gid_t gid, mode_t mode)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -1;
	if ((st.st_uid != uid || st.st_gid != gid) && fchown(fd, uid, gid) < 0)
		return -1;
	if ((st.st_mode & 07777) != mode && fchmod(fd, mode) < 0)
		return -1;
	return 0;
}

/* own_fd for name in dirfd, a regular file or a directory (never through a link). */
int
own_at(int dirfd, const char *name, uid_t uid, gid_t gid, mode_t mode)
{
	_cleanup_close_ int fd =
	    openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	return fd < 0 ? -1 : own_fd(fd, uid, gid, mode);
}

/* Make directory name in parent_fd (if missing) with this owner and mode; return its fd. */
int
dir_owned_at(int parent_fd, const char *name, mode_t mode, uid_t uid, gid_t gid,
    struct sb_error **err)
{
	struct stat st;
	int fd;

	if (mkdirat(parent_fd, name, mode) < 0 && errno != EEXIST)
		return sb_error_errno(err, errno, "mkdir '%s'", name);
	fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sb_error_errno(err, errno, "open '%s'", name);
	if (fstat(fd, &st) < 0 || fchown(fd, uid, gid) < 0 || fchmod(fd, mode) < 0) {
		sb_error_errno(err, errno, "set owner and mode of '%s'", name);
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * A root-owned directory at an absolute path, checked with lstat (not a link, owned by
 * root) and given `mode` and group `gid`. Created, with missing parents, if absent.
 */
int
trusted_dir(const char *path, mode_t mode, gid_t gid, struct sb_error **err)
{
	struct stat st;
	int fd;

	/* Missing parents 0755, the directory itself `mode`; an existing one is checked. */
	if (sb_mkdir_p(path, mode, err) < 0)
		return -1;
	if (lstat(path, &st) < 0)
		return sb_error_errno(err, errno, "lstat '%s'", path);
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0)
		return sb_error_set(err, EPERM, "'%s' is not a root-owned directory", path);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sb_error_errno(err, errno, "open '%s'", path);
	if (own_fd(fd, 0, gid, mode) < 0) {
		sb_error_errno(err, errno, "set owner and mode of '%s'", path);
		close(fd);
		return -1;
	}
	return fd;
}

/* Run fn as creds in a child (async-signal-safe drop, then ordinary code). */
int
run_as(const struct sb_creds *creds, int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		const char *step;

		if (sb_priv_drop(creds, &step) < 0)
			_exit(125);
		_exit(fn(arg) == 0 ? 0 : 1);
	}
	if (SB_RETRY_EINTR(waitpid(pid, &status, 0)) < 0)
		return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* A random name, so a directory the agent may traverse is not one it can guess. */
char *
random_name(const char *prefix)
{
	unsigned char r[8];
	char hex[17];

	if (sb_random_bytes(r, sizeof(r), NULL) < 0)
		abort();
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(hex + 2 * i, 3, "%02x", r[i]);
	return sb_xasprintf("%s-%s", prefix, hex);
}

/* Write all of n bytes (a pipe to the parent), retrying EINTR. */
bool
write_all(int fd, const void *p, size_t n)
{
	const char *s = p;

	while (n > 0) {
		ssize_t w = write(fd, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		s += w;
		n -= (size_t)w;
	}
	return true;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* counters.c: the activity counters every run container masks (see counters.h). */
#include "config.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sb/counters.h"
#include "sb/fs.h"
#include "sb/mem.h"

const char *const sb_counter_dirs[] = {
	"/proc/fs",			/* ext4's and jbd2's per-disk figures */
	"/proc/pressure",		/* io stall time */
	"/sys/fs/ext4",			/* bytes written, per disk */
	"/sys/block",			/* links to the devices' directories (below) */
	"/sys/class/block",
	"/sys/dev/block",
	"/sys/devices/virtual/block",	/* loop devices: every run's disks */
	"/sys/devices/system/node",	/* per-node vmstat, meminfo and numastat */
	"/sys/kernel/irq",		/* per-interrupt counts: the disk's queue */
	"/proc/irq",
	NULL,
};

/*
 * Only /proc/diskstats: runc binds a file over a /proc entry only for the few that lxcfs
 * emulates ("cannot be mounted because it is inside /proc"), and the other kernel-wide
 * figures of this kind (/proc/vmstat's nr_dirtied and nr_written, /proc/softirqs' BLOCK
 * line, /proc/interrupts, /proc/meminfo's Dirty) stay readable: an open residual,
 * measured, in tests/integrity/README.md.
 */
const char *const sb_counter_files[] = {
	"/proc/diskstats",	/* sectors and requests, per device */
	NULL,
};

static bool
listed(const char *path)
{
	for (size_t i = 0; sb_counter_dirs[i] != NULL; i++)
		if (strcmp(sb_counter_dirs[i], path) == 0)
			return true;
	return false;
}

/* Bounded: sysfs's device tree is a dozen levels deep; a deeper one is not walked further. */
#define BLOCK_WALK_DEPTH 24

static void
walk(int dfd, const char *path, unsigned depth, struct sb_argv *out)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;

	if (d == NULL) {
		close(dfd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		_cleanup_free_ char *sub = NULL;
		int fd;

		/* d_type is DT_DIR for sysfs's directories and DT_LNK for its links, never followed. */
		if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		sub = sb_xasprintf("%s/%s", path, de->d_name);
		if (strcmp(de->d_name, "block") == 0) {
			if (!listed(sub))
				sb_argv_push(out, sub);
			continue; /* the devices below are masked with it */
		}
		if (depth >= BLOCK_WALK_DEPTH)
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			walk(fd, sub, depth + 1, out);
	}
	closedir(d);
}

int
sb_counter_fs_dirs(const char *sys_fs, struct sb_argv *out, struct sb_error **err)
{
	_cleanup_close_ int fd = open(sys_fs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	struct dirent *de;

	if (fd < 0)
		return sb_error_errno(err, errno, "cannot read %s", sys_fs);
	d = fdopendir(fd);
	if (d == NULL)
		return sb_error_errno(err, errno, "cannot read %s", sys_fs);
	fd = -1; /* the DIR has it */
	while ((de = readdir(d)) != NULL) {
		_cleanup_free_ char *sub = NULL;

		/* cgroup is where Docker mounts the container's own cgroups: not a file system's. */
		if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 || strcmp(de->d_name, "cgroup") == 0)
			continue;
		sub = sb_xasprintf("%s/%s", sys_fs, de->d_name);
		if (!listed(sub))
			sb_argv_push(out, sub);
	}
	closedir(d);
	return 0;
}

int
sb_counter_block_dirs(const char *devices, struct sb_argv *out, struct sb_error **err)
{
	int fd = open(devices, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return sb_error_errno(err, errno, "cannot read %s", devices);
	walk(fd, devices, 0, out);
	return 0;
}

void
sb_counter_masked_dirs(struct sb_argv *out)
{
	struct stat st;

	for (size_t i = 0; sb_counter_dirs[i] != NULL; i++)
		if (lstat(sb_counter_dirs[i], &st) == 0 && S_ISDIR(st.st_mode))
			sb_argv_push(out, sb_counter_dirs[i]);
	/* Either walk fails only without a /sys, which then has no such directory either. */
	(void)sb_counter_block_dirs("/sys/devices", out, NULL);
	(void)sb_counter_fs_dirs("/sys/fs", out, NULL);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* disk.c: a run's own bounded file system (see disk.h). */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "sb/argv.h"
#include "sb/fs.h"
#include "sb/limits.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/parse.h"

#include "cli.h"
#include "disk.h"
#include "images.h"
#include "docker.h"

#define OWNER_FILE "owner.pid" /* the pid of the CLI that made it, for the sweep */

/* mkfs and mount of a run's images; a failure says what the tool said. */
static const struct cli_tool disk_tool = { CLI_TOOL_SAY_WHY, 120000 };
#define tool(err, ...) cli_system_tool((err), &disk_tool, __VA_ARGS__)

/* Which file system a directory is on. */
static int
fs_of(const char *name)
{
	return strcmp(name, DISK_RUNNER) == 0 || strcmp(name, DISK_STATE) == 0 ? DISK_FS_HARNESS
										    : DISK_FS_AGENT;
}

char *
disk_path(const struct run_disk *d, const char *name)
{
	return sb_xasprintf("%s/%s", d->fs[fs_of(name)].mnt, name);
}

/* The directories of the file systems, with the modes the container expects to find. */
static int
make_dirs(const struct run_disk *d, struct sb_error **err)
{
	static const struct {
		const char *name;
		mode_t mode;
	} dirs[] = {
		{ DISK_SRC, 0755 }, { DISK_HOME, 0755 }, { DISK_TMP, 01777 }, { DISK_VARTMP, 01777 },
		{ DISK_TMP_TASK, 01777 }, { DISK_VARTMP_TASK, 01777 },
		{ DISK_RUNNER, 0710 }, { DISK_STATE, 0711 }, { DISK_ARCHIVE, 0755 },
	};

	for (int f = 0; f < DISK_FS_COUNT; f++) {
		_cleanup_close_ int fd = sb_open_dir(d->fs[f].mnt, err);

		if (fd < 0)
			return -1;
		/* lost+found is mkfs's; nothing of ours needs it and the agent must not see it. */
		(void)unlinkat(fd, "lost+found", AT_REMOVEDIR);
		for (size_t i = 0; i < SB_ARRAY_SIZE(dirs); i++) {
			if (fs_of(dirs[i].name) != f)
				continue;
			if ((mkdirat(fd, dirs[i].name, dirs[i].mode) < 0 && errno != EEXIST) ||
			    fchmodat(fd, dirs[i].name, dirs[i].mode, AT_SYMLINK_NOFOLLOW) < 0)
				return sb_error_errno(err, errno, "mkdir '%s/%s'", d->fs[f].mnt,
				    dirs[i].name);
		}
	}
	return 0;
}

/* What an image may still grow by: its size less the blocks it holds already. */
static uint64_t
image_headroom(int dirfd, const char *name)
{
	struct stat st;
	uint64_t used;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
		return 0;
	used = (uint64_t)st.st_blocks * 512;
	return (uint64_t)st.st_size > used ? (uint64_t)st.st_size - used : 0;
}

/*
 * The images are sparse: a run's may take its whole size only later. Room for this run
 * means: the free space of root's file system, less what every run's images there may
 * still grow by, holds this run's two images and a margin. Called with root locked, so
 * two runs starting at once do not both count the same room.
 */
uint64_t
disk_room_needed(uint64_t bytes)
{
	return bytes * DISK_FS_COUNT + ((uint64_t)1 << 30);
}

/* What the images of the runs below rootfd may still grow by, but those of the run skip
 * (NULL: every run). */
static uint64_t
promised_room(int rootfd, const char *skip)
{
	static const char *const images[] = { "disk.img", "harness.img" };
	uint64_t promised = 0;
	char **names = NULL;
	size_t n = 0;

	if (sb_list_dir_at(rootfd, ".", 4096, &names, &n, NULL) < 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		_cleanup_close_ int dfd = -1;

		if (skip != NULL && strcmp(names[i], skip) == 0)
			continue;
		dfd = openat(rootfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		for (size_t k = 0; dfd >= 0 && k < SB_ARRAY_SIZE(images); k++)
			promised += image_headroom(dfd, images[k]);
	}
	sb_strv_free(names);
	return promised;
}

static int
check_room(int rootfd, const char *root, uint64_t bytes, struct sb_error **err)
{
	uint64_t promised, free_bytes, need = disk_room_needed(bytes);
	struct statvfs vfs;

	if (fstatvfs(rootfd, &vfs) < 0)
		return sb_error_errno(err, errno, "statvfs '%s'", root);
	free_bytes = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	promised = promised_room(rootfd, NULL);
	if (free_bytes < promised || free_bytes - promised < need)
		return sb_error_set(err, ENOSPC,
		    "no room for this run's disks: they may grow to %llu MiB (2 x SSEBENCH_DISK, "
		    "and 1 GiB to spare), and %s has %llu MiB free of which the disks of the runs "
		    "there may still take %llu MiB; set SSEBENCH_DISK lower, or make room",
		    (unsigned long long)(need >> 20), root, (unsigned long long)(free_bytes >> 20),
		    (unsigned long long)(promised >> 20));
	return 0;
}

/* Make, format and mount one image of the run's. */
static int
make_fs(struct run_disk *d, int f, const char *label, struct sb_error **err)
{
	_cleanup_close_ int fd = -1;

	if (mkdir(d->fs[f].mnt, 0755) < 0 ||
	    (fd = open(d->fs[f].image, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		 0600)) < 0 ||
	    ftruncate(fd, (off_t)d->bytes) < 0)
		return sb_error_errno(err, errno, "make the run's disk image '%s'", d->fs[f].image);
	/*
	 * ext4, inode tables made lazily (a sparse image is formatted in a fraction of a
	 * second), and a root reserve. The agent's own without a journal (nothing of it needs
	 * to survive a crash). The harness's with a small one: without a journal ext4 will not
	 * hand out again an inode freed less than a minute ago, so a check on hidden material
	 * that frees chosen inodes of its workspace, and waits, decides which inode numbers
	 * the agent's next build gets (a third review read a whole hidden test back that way:
	 * tests/integrity/README.md). With a journal a freed inode is reused at once.
	 */
	if ((f == DISK_FS_HARNESS
		    ? tool(err, "mkfs.ext4", "-q", "-F", "-m", DISK_RESERVE_PERCENT, "-J", "size=4",
			  "-E", "lazy_itable_init=1,root_owner=0:0", "-L", label, d->fs[f].image, NULL)
		    : tool(err, "mkfs.ext4", "-q", "-F", "-m", DISK_RESERVE_PERCENT, "-O",
			  "^has_journal", "-E", "lazy_itable_init=1,root_owner=0:0", "-L", label,
			  d->fs[f].image, NULL)) != 0)
		return sb_error_prefix(err, "format the run's disk");
	if (tool(err, "mount", "-o", "loop,nosuid,nodev,noatime", d->fs[f].image, d->fs[f].mnt,
		NULL) != 0)
		return sb_error_prefix(err, "mount the run's disk");
	d->fs[f].mounted = true;
	return 0;
}

/* The paths of a run's disk below root/run_id (nothing made). */
static void
disk_names(struct run_disk *d, const char *root, const char *run_id)
{
	d->dir = sb_xasprintf("%s/%s", root, run_id);
	d->fs[DISK_FS_AGENT].image = sb_xasprintf("%s/disk.img", d->dir);
	d->fs[DISK_FS_AGENT].mnt = sb_xasprintf("%s/mnt", d->dir);
	d->fs[DISK_FS_HARNESS].image = sb_xasprintf("%s/harness.img", d->dir);
	d->fs[DISK_FS_HARNESS].mnt = sb_xasprintf("%s/mnt-harness", d->dir);
}

static void
disk_names_free(struct run_disk *d)
{
	free(d->dir);
	for (int f = 0; f < DISK_FS_COUNT; f++) {
		free(d->fs[f].image);
		free(d->fs[f].mnt);
	}
	memset(d, 0, sizeof(*d));
}

int
disk_create(struct run_disk *d, const char *root, const char *run_id, uint64_t bytes,
    struct sb_error **err)
{
	_cleanup_free_ char *pid = NULL, *abs_root = NULL;
	_cleanup_close_ int rootfd = -1;

	memset(d, 0, sizeof(*d));
	if (sb_mkdir_p(root, 0700, err) < 0)
		return -1;
	/* Docker takes a relative source for the name of a volume: every path is absolute. */
	abs_root = realpath(root, NULL);
	if (abs_root == NULL)
		return sb_error_errno(err, errno, "resolve '%s'", root);
	rootfd = sb_open_dir(abs_root, err);
	if (rootfd < 0)
		return -1;
	if (SB_RETRY_EINTR(flock(rootfd, LOCK_EX)) < 0)
		return sb_error_errno(err, errno, "lock '%s'", abs_root);
	if (check_room(rootfd, abs_root, bytes, err) < 0)
		return -1;
	disk_names(d, abs_root, run_id);
	d->bytes = bytes;
	if (mkdir(d->dir, 0700) < 0) {
		sb_error_errno(err, errno, "mkdir '%s'", d->dir);
		disk_names_free(d);
		return -1;
	}
	pid = sb_xasprintf("%d\n", (int)getpid());
	{
		_cleanup_close_ int dfd = sb_open_dir(d->dir, err);

		if (dfd < 0 ||
		    sb_write_file_atomic_at(dfd, OWNER_FILE, pid, strlen(pid), 0600, err) < 0)
			goto fail;
	}
	if (make_fs(d, DISK_FS_AGENT, "ssebench-run", err) < 0 ||
	    make_fs(d, DISK_FS_HARNESS, "ssebench-harness", err) < 0 || make_dirs(d, err) < 0)
		goto fail;
	return 0;
fail:
	disk_release(d);
	return -1;
}

static int
write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

struct archive_copy {
	uint64_t entries, bytes, left;
	uint64_t max; /* bytes it may copy in all (archive_budget) */
};

/* Copy the directory sfd into the new directory dfd (both ours), depth levels down. */
static int
copy_dir(struct archive_copy *c, int sfd, int dfd, unsigned depth, struct sb_error **err)
{
	int lfd = fcntl(sfd, F_DUPFD_CLOEXEC, 3);
	struct dirent *de;
	DIR *dir;
	int r = 0;

	if (lfd < 0 || (dir = fdopendir(lfd)) == NULL) {
		if (lfd >= 0)
			close(lfd);
		return sb_error_errno(err, errno, "read the archive");
	}
	while (r == 0 && (de = readdir(dir)) != NULL) {
		struct stat st, fst;
		_cleanup_close_ int s = -1, t = -1;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (++c->entries > SB_COPY_FILES_MAX) {
			c->left++;
			break;
		}
		if (fstatat(sfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			c->left++;
			continue;
		}
		if (S_ISDIR(st.st_mode) && depth < SB_COPY_DEPTH_MAX) {
			s = openat(sfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (s < 0 || mkdirat(dfd, de->d_name, 0755) < 0 ||
			    (t = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
				O_CLOEXEC)) < 0) {
				c->left++;
				continue;
			}
			r = copy_dir(c, s, t, depth + 1, err);
			continue;
		}
		/* Only a regular file with one name: links, FIFOs, sockets, devices and second
		 * names stay behind. */
		if (!S_ISREG(st.st_mode) || st.st_nlink != 1 ||
		    (uint64_t)st.st_size > c->max - c->bytes) {
			c->left++;
			continue;
		}
		s = openat(sfd, de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (s < 0 || fstat(s, &fst) < 0 || !S_ISREG(fst.st_mode) || fst.st_ino != st.st_ino ||
		    fst.st_dev != st.st_dev) {
			c->left++;
			continue;
		}
		t = openat(dfd, de->d_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (t < 0) {
			c->left++;
			continue;
		}
		for (off_t done = 0; done < fst.st_size;) {
			char buf[65536];
			ssize_t n = read(s, buf, sizeof(buf));

			if (n <= 0)
				break;
			if (write_all(t, buf, (size_t)n) < 0) {
				r = sb_error_errno(err, errno, "copy '%s'", de->d_name);
				break;
			}
			done += n;
			c->bytes += (uint64_t)n;
		}
	}
	closedir(dir);
	return r;
}

/*
 * How much of the archive may come home: SB_COPY_BYTES_MAX, and no more than the results
 * file system can give without eating into what the other runs' disks there may still
 * take or the room this run's own result needs (DISK_RESULT_ROOM). The archive is the
 * agent's and as large as it likes: had its copy been the one to fill the file system, a
 * result that still had to be written (this run's, when its disks stay for a kept
 * container; another run's, whose disk grows meanwhile) would find no room, and a run with
 * no result is an error a job retries: a way for an agent expecting to fail to make its
 * run not count. What does not fit is left behind and counted, as a link or a FIFO is; the
 * grade does not read the archive.
 */
static uint64_t
archive_budget(const struct run_disk *d, int dfd)
{
	_cleanup_free_ char *root = sb_xstrdup(d->dir);
	_cleanup_close_ int rootfd = -1;
	char *own = strrchr(root, '/');
	struct statvfs vfs;
	uint64_t free_bytes, taken;

	if (fstatvfs(dfd, &vfs) < 0)
		return 0;
	free_bytes = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	/* d->dir is <results>/.disks/<run-id>: the other runs' disks are its siblings. */
	if (own != NULL)
		*own++ = '\0';
	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	taken = (rootfd >= 0 && own != NULL ? promised_room(rootfd, own) : 0) + DISK_RESULT_ROOM;
	if (free_bytes <= taken)
		return 0;
	return free_bytes - taken < SB_COPY_BYTES_MAX ? free_bytes - taken : SB_COPY_BYTES_MAX;
}

int
disk_copy_archive(const struct run_disk *d, const char *dest, uint64_t *ret_left,
    struct sb_error **err)
{
	_cleanup_free_ char *src = disk_path(d, DISK_ARCHIVE);
	_cleanup_close_ int sfd = -1, dfd = -1;
	struct archive_copy c = { 0, 0, 0, 0 };

	sfd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0)
		return sb_error_errno(err, errno, "open '%s'", src);
	if (mkdir(dest, 0755) < 0)
		return sb_error_errno(err, errno, "mkdir '%s'", dest);
	dfd = open(dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return sb_error_errno(err, errno, "open '%s'", dest);
	c.max = archive_budget(d, dfd);
	if (copy_dir(&c, sfd, dfd, 1, err) < 0)
		return -1;
	*ret_left = c.left;
	return 0;
}

void
disk_release(struct run_disk *d)
{
	bool busy = false;

	if (d->dir == NULL)
		return;
	for (int f = DISK_FS_COUNT - 1; f >= 0; f--) {
		struct sb_error *err = NULL;

		if (d->fs[f].mounted && tool(&err, "umount", d->fs[f].mnt, NULL) != 0) {
			/* Busy (a container not quite gone): detach it, the kernel frees it when idle. */
			sb_error_release(&err);
			if (tool(&err, "umount", "-l", d->fs[f].mnt, NULL) != 0) {
				sb_log(SB_LOG_WARN, "the run's disk %s stays mounted: %s", d->fs[f].mnt,
				    sb_error_message(err));
				sb_error_release(&err);
				busy = true;
				continue;
			}
		}
		d->fs[f].mounted = false;
		(void)unlink(d->fs[f].image);
		(void)rmdir(d->fs[f].mnt);
	}
	if (!busy) {
		_cleanup_free_ char *owner = sb_xasprintf("%s/" OWNER_FILE, d->dir);

		(void)unlink(owner);
		if (rmdir(d->dir) < 0 && errno != ENOENT)
			sb_log(SB_LOG_WARN, "cannot remove '%s': %s", d->dir, strerror(errno));
	}
	disk_names_free(d);
}

/* Is a process of this pid alive? (The CLI that made a disk, still running its run.) */
static bool
owner_alive(int dirfd)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(64);
	uint64_t pid;

	if (sb_read_file_at(dirfd, OWNER_FILE, SB_OPEN_NO_SYMLINKS, &b, NULL) < 0)
		return false;
	sb_buf_rtrim(&b);
	return sb_parse_u64(b.s, 1, INT32_MAX, &pid, NULL) == 0 &&
	       (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

void
disk_sweep(const char *root)
{
	char **names = NULL;
	size_t n = 0;
	_cleanup_close_ int rfd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (rfd < 0)
		return;
	/*
	 * disk_create holds this lock from its mkdir until the disk is whole, its owner file
	 * written: without it, a run starting beside another (a job's two slots start in the
	 * same millisecond) saw the other's directory before its owner file, took it for one
	 * left behind and removed it under the other run, which then failed at once (CI).
	 */
	if (SB_RETRY_EINTR(flock(rfd, LOCK_EX)) < 0 ||
	    sb_list_dir_at(rfd, ".", 4096, &names, &n, NULL) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
		_cleanup_free_ char *out = NULL;
		_cleanup_close_ int dfd = -1;
		struct run_disk d;
		struct stat st;

		if (!sb_run_id_valid(names[i]))
			continue;
		dfd = openat(rfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0 || owner_alive(dfd))
			continue;
		sb_argv_pushl(&a, "ps", "-aq", "--filter", NULL);
		sb_argv_pushf(&a, "label=ssebench.run=%s", names[i]);
		if (docker_output(&a, &out, NULL) != 0 || (out != NULL && out[0] != '\0'))
			continue; /* a kept container still uses it, or we cannot tell */
		memset(&d, 0, sizeof(d));
		disk_names(&d, root, names[i]);
		/* Mounted if the mount point is on another device than its directory. */
		for (int f = 0; f < DISK_FS_COUNT; f++) {
			struct stat pst;

			d.fs[f].mounted = stat(d.fs[f].mnt, &st) == 0 && fstat(dfd, &pst) == 0 &&
					  st.st_dev != pst.st_dev;
		}
		progress("removing the disk of run %s, left behind", names[i]);
		disk_release(&d);
	}
	sb_strv_free(names);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* disk.c: a run's own bounded file system (see disk.h). */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sb/argv.h"
#include "sb/fs.h"
#include "sb/limits.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/spawn.h"

#include "cli.h"
#include "disk.h"
#include "images.h"
#include "docker.h"

#define SYSTEM_PATH "/usr/sbin:/sbin:/usr/bin:/bin"
#define OWNER_FILE "owner.pid" /* the pid of the CLI that made it, for the sweep */

/* Run a system tool quietly; its exit status, or -1 (err set) if it cannot run. */
static int
tool(struct sb_error **err, const char *name, ...)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	_cleanup_free_ char *path = NULL;
	struct sb_cmd cmd = SB_CMD_INIT;
	struct sb_cmd_result r;
	const char *arg;
	va_list ap;
	int code;

	if (sb_cmd_find_program(name, SYSTEM_PATH, &path, err) < 0)
		return -1;
	sb_argv_push(&argv, name);
	va_start(ap, name);
	while ((arg = va_arg(ap, const char *)) != NULL)
		sb_argv_push(&argv, arg);
	va_end(ap);
	cmd.path = path;
	cmd.argv = argv.v;
	cmd.stdout_fd = SB_CMD_CAPTURE;
	cmd.stderr_fd = SB_CMD_CAPTURE;
	cmd.timeout_ms = 120000;
	if (sb_cmd_run(&cmd, &r, err) < 0)
		return -1;
	code = r.exit_code;
	if (code != 0 && err != NULL) {
		sb_buf_rtrim(&r.err);
		sb_error_set(err, EIO, "%s exited with status %d: %s", name, code, r.err.s);
	}
	sb_cmd_result_release(&r);
	return code;
}

char *
disk_path(const struct run_disk *d, const char *name)
{
	return sb_xasprintf("%s/%s", d->mnt, name);
}

/* The directories of the file system, with the modes the container expects to find. */
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
	_cleanup_close_ int fd = sb_open_dir(d->mnt, err);

	if (fd < 0)
		return -1;
	/* lost+found is mkfs's; nothing of ours needs it and the agent must not see it. */
	(void)unlinkat(fd, "lost+found", AT_REMOVEDIR);
	for (size_t i = 0; i < SB_ARRAY_SIZE(dirs); i++)
		if ((mkdirat(fd, dirs[i].name, dirs[i].mode) < 0 && errno != EEXIST) ||
		    fchmodat(fd, dirs[i].name, dirs[i].mode, AT_SYMLINK_NOFOLLOW) < 0)
			return sb_error_errno(err, errno, "mkdir '%s/%s'", d->mnt, dirs[i].name);
	return 0;
}

int
disk_create(struct run_disk *d, const char *root, const char *run_id, uint64_t bytes,
    struct sb_error **err)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *pid = NULL, *owner = NULL, *abs_root = NULL;

	memset(d, 0, sizeof(*d));
	if (sb_mkdir_p(root, 0700, err) < 0)
		return -1;
	/* Docker takes a relative source for the name of a volume: every path is absolute. */
	abs_root = realpath(root, NULL);
	if (abs_root == NULL)
		return sb_error_errno(err, errno, "resolve '%s'", root);
	d->dir = sb_xasprintf("%s/%s", abs_root, run_id);
	d->image = sb_xasprintf("%s/disk.img", d->dir);
	d->mnt = sb_xasprintf("%s/mnt", d->dir);
	d->bytes = bytes;
	if (mkdir(d->dir, 0700) < 0) {
		sb_error_errno(err, errno, "mkdir '%s'", d->dir);
		goto fail_early;
	}
	owner = sb_xasprintf("%s/" OWNER_FILE, d->dir);
	pid = sb_xasprintf("%d\n", (int)getpid());
	if (mkdir(d->mnt, 0755) < 0 ||
	    (fd = open(d->image, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0 ||
	    ftruncate(fd, (off_t)bytes) < 0) {
		sb_error_errno(err, errno, "make the run's disk image '%s'", d->image);
		goto fail;
	}
	{
		_cleanup_close_ int dfd = sb_open_dir(d->dir, err);

		if (dfd < 0 ||
		    sb_write_file_atomic_at(dfd, OWNER_FILE, pid, strlen(pid), 0600, err) < 0)
			goto fail;
	}
	fd = sb_close(fd);
	/*
	 * ext4 without a journal (nothing of it needs to survive a crash), inode tables made
	 * lazily (a sparse image is formatted in a fraction of a second), and a root reserve.
	 */
	if (tool(err, "mkfs.ext4", "-q", "-F", "-m", DISK_RESERVE_PERCENT, "-O", "^has_journal",
		"-E", "lazy_itable_init=1,root_owner=0:0", "-L", "ssebench-run", d->image, NULL) !=
	    0) {
		sb_error_prefix(err, "format the run's disk");
		goto fail;
	}
	if (tool(err, "mount", "-o", "loop,nosuid,nodev,noatime", d->image, d->mnt, NULL) != 0) {
		sb_error_prefix(err, "mount the run's disk");
		goto fail;
	}
	d->mounted = true;
	if (make_dirs(d, err) < 0)
		goto fail;
	return 0;
fail:
	disk_release(d);
	return -1;
fail_early:
	free(d->dir);
	free(d->image);
	free(d->mnt);
	memset(d, 0, sizeof(*d));
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
		    (uint64_t)st.st_size > SB_COPY_BYTES_MAX - c->bytes) {
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

int
disk_copy_archive(const struct run_disk *d, const char *dest, uint64_t *ret_left,
    struct sb_error **err)
{
	_cleanup_free_ char *src = disk_path(d, DISK_ARCHIVE);
	_cleanup_close_ int sfd = -1, dfd = -1;
	struct archive_copy c = { 0, 0, 0 };

	sfd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0)
		return sb_error_errno(err, errno, "open '%s'", src);
	if (mkdir(dest, 0755) < 0)
		return sb_error_errno(err, errno, "mkdir '%s'", dest);
	dfd = open(dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return sb_error_errno(err, errno, "open '%s'", dest);
	if (copy_dir(&c, sfd, dfd, 1, err) < 0)
		return -1;
	*ret_left = c.left;
	return 0;
}

void
disk_release(struct run_disk *d)
{
	struct sb_error *err = NULL;

	if (d->dir == NULL)
		return;
	if (d->mounted && tool(&err, "umount", d->mnt, NULL) != 0) {
		/* Busy (a container not quite gone): detach it, the kernel frees it when idle. */
		sb_error_release(&err);
		if (tool(&err, "umount", "-l", d->mnt, NULL) != 0) {
			sb_log(SB_LOG_WARN, "the run's disk %s stays mounted: %s", d->mnt,
			    sb_error_message(err));
			sb_error_release(&err);
			goto out;
		}
	}
	d->mounted = false;
	(void)unlink(d->image);
	(void)rmdir(d->mnt);
	{
		_cleanup_free_ char *owner = sb_xasprintf("%s/" OWNER_FILE, d->dir);

		(void)unlink(owner);
	}
	if (rmdir(d->dir) < 0 && errno != ENOENT)
		sb_log(SB_LOG_WARN, "cannot remove '%s': %s", d->dir, strerror(errno));
out:
	free(d->dir);
	free(d->image);
	free(d->mnt);
	memset(d, 0, sizeof(*d));
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

	if (rfd < 0 || sb_list_dir_at(rfd, ".", 4096, &names, &n, NULL) < 0)
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
		d.dir = sb_xasprintf("%s/%s", root, names[i]);
		d.image = sb_xasprintf("%s/disk.img", d.dir);
		d.mnt = sb_xasprintf("%s/mnt", d.dir);
		/* Mounted if the mount point is on another device than its directory. */
		{
			struct stat pst;

			d.mounted = stat(d.mnt, &st) == 0 && fstat(dfd, &pst) == 0 &&
				    st.st_dev != pst.st_dev;
		}
		progress("removing the disk of run %s, left behind", names[i]);
		disk_release(&d);
	}
	sb_strv_free(names);
}

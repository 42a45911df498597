/* SPDX-License-Identifier: Apache-2.0 */
/* fs.c: openat2-based resolution below a directory, and atomic file replacement. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#ifdef HAVE_LINUX_OPENAT2_H
#include <linux/openat2.h>
#endif

#include "sb/argv.h"
#include "sb/fs.h"
#include "sb/limits.h"
#include "sb/mem.h"
#include "sb/path.h"

#ifndef RESOLVE_BENEATH
struct open_how {
	unsigned long long flags;
	unsigned long long mode;
	unsigned long long resolve;
};
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_NO_SYMLINKS   0x04
#define RESOLVE_BENEATH	      0x08
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif

static bool fs_force_walk;
/* Set once openat2 is known to be missing, so we do not ask the kernel every time. */
static bool fs_no_openat2;

void
sb_fs_force_walk(bool on)
{
	fs_force_walk = on;
}

/*
 * The walk both fallbacks share: open each directory component of copy (a writable copy of
 * a relative path, cut at each '/') with O_NOFOLLOW | O_DIRECTORY, so a symlink anywhere on
 * the way fails with ELOOP/ENOTDIR. On success *ret_dir is the last directory (-1 when the
 * path has no '/': the caller's dirfd is the directory) and *ret_last its final component.
 */
static int
walk_dirs(int dirfd, char *copy, int *ret_dir, const char **ret_last)
{
	_cleanup_close_ int cur = -1;
	char *c = copy, *slash;

	while ((slash = strchr(c, '/')) != NULL) {
		int fd;

		*slash = '\0';
		fd = openat(cur >= 0 ? cur : dirfd, c,
		    O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return -1;
		sb_closep(&cur);
		cur = fd;
		c = slash + 1;
	}
	*ret_dir = TAKE_FD(cur);
	*ret_last = c;
	return 0;
}

/*
 * The fallback: open each directory component with O_NOFOLLOW | O_DIRECTORY, then the last
 * one with O_NOFOLLOW. A symlink anywhere fails with ELOOP/ENOTDIR; ".." cannot occur
 * because the caller passed a checked relative path.
 */
static int
open_walk(int dirfd, const char *rel, int flags, mode_t mode)
{
	_cleanup_free_ char *copy = sb_xstrdup(rel);
	_cleanup_close_ int cur = -1;
	const char *last;

	if (walk_dirs(dirfd, copy, &cur, &last) < 0)
		return -1;
	return openat(cur >= 0 ? cur : dirfd, last, flags | O_NOFOLLOW | O_CLOEXEC, mode);
}

int
sb_lstat_nofollow(int dirfd, const char *rel, struct stat *ret_st, struct sb_error **err)
{
	_cleanup_free_ char *copy = sb_xstrdup(rel);
	_cleanup_close_ int cur = -1;
	const char *last;

	if (walk_dirs(dirfd, copy, &cur, &last) < 0 ||
	    fstatat(cur >= 0 ? cur : dirfd, last, ret_st, AT_SYMLINK_NOFOLLOW) < 0)
		return sb_error_errno(err, errno, "lstat '%s'", rel);
	return 0;
}

/*
 * An open beneath a directory that failed, said in words: EXDEV ("Invalid cross-device
 * link") and ELOOP are how the kernel and open_walk refuse a path that leaves the directory
 * or meets a link, and a user reading "Invalid cross-device link" cannot tell that.
 */
static int
open_failed(struct sb_error **err, int errnum, const char *rel, unsigned sbflags)
{
	if (errnum == EXDEV)
		return sb_error_set(err, EXDEV, "'%s' leads outside its folder (a symbolic link "
						"or '..' that goes out of it)", rel);
	if (errnum == ELOOP && (sbflags & SB_OPEN_NO_SYMLINKS))
		return sb_error_set(err, ELOOP, "'%s' is a symbolic link or passes through one "
						"(not followed here)", rel);
	return sb_error_errno(err, errnum, "open '%s'", rel);
}

int
sb_open_beneath(int dirfd, const char *rel, int flags, mode_t mode, unsigned sbflags,
    struct sb_error **err)
{
	struct open_how how;
	int fd;

	if (strcmp(rel, ".") != 0 && sb_path_check_relative(rel, err) < 0)
		return sb_error_prefix(err, "'%s'", rel);
	if (strcmp(rel, ".") == 0) {
		fd = openat(dirfd, ".", flags | O_CLOEXEC, mode);
		if (fd < 0)
			return sb_error_errno(err, errno, "open '.'");
		return fd;
	}
	if (!fs_force_walk && !fs_no_openat2) {
		memset(&how, 0, sizeof(how));
		how.flags = (unsigned long long)(flags | O_CLOEXEC);
		how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
		how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
		if (sbflags & SB_OPEN_NO_SYMLINKS)
			how.resolve |= RESOLVE_NO_SYMLINKS;
		fd = (int)SB_RETRY_EINTR(syscall(SYS_openat2, dirfd, rel, &how, sizeof(how)));
		if (fd >= 0)
			return fd;
		/* ENOSYS: kernel older than 5.6; EPERM: a seccomp profile that denies it. */
		if (errno != ENOSYS && errno != EPERM)
			return open_failed(err, errno, rel, sbflags);
		fs_no_openat2 = true;
	}
	fd = SB_RETRY_EINTR(open_walk(dirfd, rel, flags, mode));
	if (fd < 0)
		return open_failed(err, errno, rel, sbflags);
	return fd;
}

int
sb_read_file_at(int dirfd, const char *rel, unsigned sbflags, struct sb_buf *out,
    struct sb_error **err)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	/* O_NONBLOCK: opening a FIFO must not hang us; we refuse it right after. */
	fd = sb_open_beneath(dirfd, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0, sbflags, err);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0)
		return sb_error_errno(err, errno, "stat '%s'", rel);
	if (!S_ISREG(st.st_mode))
		return sb_error_set(err, EINVAL, "'%s' is not a regular file", rel);
	if ((unsigned long long)st.st_size > out->max)
		return sb_error_set(err, EFBIG, "'%s' is larger than %zu bytes", rel, out->max);
	if (sb_buf_read_fd(out, fd, err) < 0)
		return sb_error_prefix(err, "'%s'", rel);
	return 0;
}

int
sb_random_bytes(void *buf, size_t n, struct sb_error **err)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = getrandom((char *)buf + got, n - got, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return sb_error_errno(err, errno, "getrandom");
		got += (size_t)r;
	}
	return 0;
}

/* Write all of data to fd. */
static int
write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
sb_write_file_atomic_at(int dirfd, const char *name, const void *data, size_t len,
    mode_t mode, struct sb_error **err)
{
	static const char hex[] = "0123456789abcdef";
	_cleanup_close_ int fd = -1;
	unsigned char rnd[8];
	char suffix[2 * sizeof(rnd) + 1];
	char *tmp;

	if (strchr(name, '/') != NULL || sb_path_check_relative(name, err) < 0)
		return sb_error_set(err, EINVAL, "'%s' is not a plain file name", name);
	if (sb_random_bytes(rnd, sizeof(rnd), err) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(rnd); i++) {
		suffix[2 * i] = hex[rnd[i] >> 4];
		suffix[2 * i + 1] = hex[rnd[i] & 15];
	}
	suffix[sizeof(suffix) - 1] = '\0';
	tmp = sb_xasprintf(".%s.tmp-%s", name, suffix);
	/* O_EXCL | O_NOFOLLOW: the temporary name is new; nothing planted there is reused. */
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0) {
		sb_error_errno(err, errno, "create '%s'", tmp);
		free(tmp);
		return -1;
	}
	if (write_all(fd, data, len) < 0 || fchmod(fd, mode) < 0 || fsync(fd) < 0) {
		sb_error_errno(err, errno, "write '%s'", tmp);
		goto fail;
	}
	/* rename(2) replaces the directory entry: a symlink at `name` is replaced, not followed. */
	if (renameat(dirfd, tmp, dirfd, name) < 0) {
		sb_error_errno(err, errno, "rename to '%s'", name);
		goto fail;
	}
	free(tmp);
	if (fsync(dirfd) < 0 && errno != EINVAL && errno != EBADF)
		return sb_error_errno(err, errno, "fsync directory of '%s'", name);
	return 0;
fail:
	(void)unlinkat(dirfd, tmp, 0);
	free(tmp);
	return -1;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
sb_list_dir_at(int dirfd, const char *rel, size_t max, char ***ret_names, size_t *ret_n,
    struct sb_error **err)
{
	_cleanup_(sb_argv_release) struct sb_argv names = SB_ARGV_INIT;
	struct dirent *de;
	DIR *d;
	int fd;

	fd = sb_open_beneath(dirfd, rel, O_RDONLY | O_DIRECTORY, 0, 0, err);
	if (fd < 0)
		return -1;
	d = fdopendir(fd);
	if (d == NULL) {
		sb_error_errno(err, errno, "opendir '%s'", rel);
		close(fd);
		return -1;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (de == NULL)
			break;
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (names.n >= max) {
			closedir(d);
			return sb_error_set(err, E2BIG, "'%s' has more than %zu entries", rel, max);
		}
		sb_argv_push(&names, de->d_name);
	}
	if (errno != 0) {
		sb_error_errno(err, errno, "readdir '%s'", rel);
		closedir(d);
		return -1;
	}
	closedir(d);
	if (names.n > 1)
		qsort(names.v, names.n, sizeof(char *), cmp_str);
	*ret_n = names.n;
	*ret_names = sb_argv_detach(&names);
	return 0;
}

int
sb_lstat_at(int dirfd, const char *rel, struct stat *ret_st, struct sb_error **err)
{
	_cleanup_close_ int parent = -1;
	_cleanup_free_ char *dir = NULL;
	const char *base;
	struct stat st;

	if (strcmp(rel, ".") == 0) {
		if (fstat(dirfd, &st) < 0)
			return sb_error_errno(err, errno, "stat '.'");
		*ret_st = st;
		return 0;
	}
	if (sb_path_check_relative(rel, err) < 0)
		return sb_error_prefix(err, "'%s'", rel);
	base = sb_path_basename(rel);
	if (base != rel) {
		dir = sb_xstrndup(rel, (size_t)(base - rel - 1));
		parent = sb_open_beneath(dirfd, dir, O_PATH | O_DIRECTORY, 0, 0, err);
		if (parent < 0)
			return -1;
	}
	if (fstatat(parent >= 0 ? parent : dirfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return sb_error_errno(err, errno, "stat '%s'", rel);
	*ret_st = st;
	return 0;
}

int
sb_open_dir(const char *path, struct sb_error **err)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return sb_error_errno(err, errno, "open directory '%s'", path);
	return fd;
}

int
sb_mkdir_p(const char *path, mode_t mode, struct sb_error **err)
{
	_cleanup_free_ char *p = sb_xstrdup(path);

	if (*p == '\0')
		return sb_error_set(err, EINVAL, "mkdir of an empty path");
	for (char *s = p + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return sb_error_errno(err, errno, "mkdir '%s'", p);
		*s = '/';
	}
	if (mkdir(p, mode) < 0 && errno != EEXIST)
		return sb_error_errno(err, errno, "mkdir '%s'", p);
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* tree.c: dirfd-based copy and removal of untrusted directory trees. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "sb/limits.h"
#include "sb/mem.h"
#include "sb/tree.h"

struct copy_ctx {
	const struct sb_copy_opts *o;
	struct sb_copy_stats st;
	uint64_t max_files, max_bytes;
};

static bool
skipped_name(const struct sb_copy_opts *o, const char *name)
{
	for (const char *const *p = o->skip_names; p != NULL && *p != NULL; p++)
		if (strcmp(*p, name) == 0)
			return true;
	return false;
}

/* Copy the bytes of sfd into dfd. */
static int
copy_bytes(struct copy_ctx *x, int sfd, int dfd, off_t size, struct sb_error **err)
{
	char buf[65536];
	off_t done = 0;

	if ((uint64_t)size > x->max_bytes - x->st.bytes)
		return sb_error_set(err, EFBIG, "tree larger than %llu bytes",
		    (unsigned long long)x->max_bytes);
	/* copy_file_range copies in the kernel; fall back to read/write across file systems. */
	while (done < size) {
		ssize_t n = copy_file_range(sfd, NULL, dfd, NULL, (size_t)(size - done), 0);

		if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EPERM ||
				 errno == EOPNOTSUPP))
			break;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return sb_error_errno(err, errno, "copy_file_range");
		if (n == 0)
			break; /* the file shrank */
		done += n;
	}
	for (;;) {
		ssize_t n = read(sfd, buf, sizeof(buf)), w = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return sb_error_errno(err, errno, "read");
		if (n == 0)
			break;
		/* A file that grows while we copy it is cut at the size we listed. */
		if ((uint64_t)(done + n) > x->max_bytes - x->st.bytes)
			return sb_error_set(err, EFBIG, "tree larger than %llu bytes",
			    (unsigned long long)x->max_bytes);
		while (w < n) {
			ssize_t k = write(dfd, buf + w, (size_t)(n - w));

			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0)
				return sb_error_errno(err, errno, "write");
			w += k;
		}
		done += n;
	}
	x->st.bytes += (uint64_t)done;
	return 0;
}

/* Owner (a copy the new owner cannot write is useless: that is an error) and times. */
static int
set_owner_and_times(struct copy_ctx *x, int fd, const struct stat *st, struct sb_error **err)
{
	struct timespec ts[2] = { st->st_atim, st->st_mtim };

	if (x->o->chown_uid != (uid_t)-1 && fchown(fd, x->o->chown_uid, x->o->chown_gid) < 0)
		return sb_error_errno(err, errno, "chown");
	(void)futimens(fd, ts);
	return 0;
}

static int copy_dir(struct copy_ctx *x, int sfd, int dfd, unsigned depth, struct sb_error **err);

/* The copy's mode: set-id and sticky bits never survive; group_read_only as tree.h says. */
static mode_t
copy_mode(const struct copy_ctx *x, mode_t m)
{
	if (x->o->group_read_only)
		return (m & 0700) | ((m & 0500) >> 3);
	return m & 0777;
}

/* Copy the directory name (st, as lstat saw it) and what it holds. */
static int
copy_subdir(struct copy_ctx *x, int sfd, int dfd, const char *name, const struct stat *st,
    unsigned depth, struct sb_error **err)
{
	_cleanup_close_ int s = -1, d = -1;
	struct stat st2;

	if (depth >= SB_COPY_DEPTH_MAX)
		return sb_error_set(err, ELOOP, "tree deeper than %d levels", SB_COPY_DEPTH_MAX);
	s = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s < 0 || fstat(s, &st2) < 0 || st2.st_ino != st->st_ino || st2.st_dev != st->st_dev) {
		x->st.skipped++;
		return 0;
	}
	if (mkdirat(dfd, name, 0700) < 0)
		return sb_error_errno(err, errno, "mkdir '%s'", name);
	d = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d < 0)
		return sb_error_errno(err, errno, "open '%s'", name);
	x->st.dirs++;
	if (copy_dir(x, s, d, depth + 1, err) < 0)
		return sb_error_prefix(err, "%s", name);
	(void)fchmod(d, copy_mode(x, st->st_mode));
	return set_owner_and_times(x, d, st, err);
}

/* Copy the regular file name (st, as lstat saw it), if it is still that file when opened. */
static int
copy_file(struct copy_ctx *x, int sfd, int dfd, const char *name, const struct stat *st,
    struct sb_error **err)
{
	_cleanup_close_ int s = -1, d = -1;
	struct stat st2;

	/* O_NONBLOCK: a FIFO swapped in after the stat must not hang us. */
	s = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (s < 0 || fstat(s, &st2) < 0 || !S_ISREG(st2.st_mode) || st2.st_ino != st->st_ino ||
	    st2.st_dev != st->st_dev ||
	    (x->o->only_uid != (uid_t)-1 && st2.st_uid != x->o->only_uid)) {
		x->st.skipped++;
		return 0;
	}
	d = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (d < 0)
		return sb_error_errno(err, errno, "create '%s'", name);
	if (copy_bytes(x, s, d, st2.st_size, err) < 0)
		return sb_error_prefix(err, "%s", name);
	/* No set-uid, set-gid or sticky bit survives the copy. */
	(void)fchmod(d, copy_mode(x, st2.st_mode));
	x->st.files++;
	return set_owner_and_times(x, d, &st2, err);
}

/* Copy the symbolic link name as a link (never followed), with its times. */
static int
copy_link(struct copy_ctx *x, int sfd, int dfd, const char *name, const struct stat *st,
    struct sb_error **err)
{
	char target[SB_PATH_MAX + 1];
	ssize_t n = readlinkat(sfd, name, target, sizeof(target) - 1);
	struct timespec ts[2] = { st->st_atim, st->st_mtim };

	if (n < 0 || n >= (ssize_t)sizeof(target) - 1) {
		x->st.skipped++;
		return 0;
	}
	target[n] = '\0';
	if (symlinkat(target, dfd, name) < 0)
		return sb_error_errno(err, errno, "symlink '%s'", name);
	if (x->o->chown_uid != (uid_t)-1 &&
	    fchownat(dfd, name, x->o->chown_uid, x->o->chown_gid, AT_SYMLINK_NOFOLLOW) < 0)
		return sb_error_errno(err, errno, "chown '%s'", name);
	(void)utimensat(dfd, name, ts, AT_SYMLINK_NOFOLLOW);
	x->st.links++;
	return 0;
}

static int
copy_entry(struct copy_ctx *x, int sfd, int dfd, const char *name, unsigned depth,
    struct sb_error **err)
{
	struct stat st;

	if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		x->st.skipped++; /* vanished under us */
		return 0;
	}
	if (x->o->only_uid != (uid_t)-1 && st.st_uid != x->o->only_uid) {
		x->st.skipped++;
		return 0;
	}
	if (x->st.files + x->st.dirs + x->st.links >= x->max_files)
		return sb_error_set(err, E2BIG, "tree has more than %llu entries",
		    (unsigned long long)x->max_files);
	if (S_ISDIR(st.st_mode))
		return copy_subdir(x, sfd, dfd, name, &st, depth, err);
	if (S_ISREG(st.st_mode))
		return copy_file(x, sfd, dfd, name, &st, err);
	if (S_ISLNK(st.st_mode))
		return copy_link(x, sfd, dfd, name, &st, err);
	x->st.skipped++; /* devices, FIFOs, sockets */
	return 0;
}

/*
 * A directory stream on a duplicate of fd, so that closedir() leaves the caller's fd open.
 * The duplicate shares fd's offset.
 */
static DIR *
dir_stream(int fd, struct sb_error **err)
{
	int lfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	DIR *d;

	if (lfd < 0) {
		(void)sb_error_errno(err, errno, "dup");
		return NULL;
	}
	d = fdopendir(lfd);
	if (d == NULL) {
		close(lfd);
		(void)sb_error_errno(err, errno, "opendir");
		return NULL;
	}
	return d;
}

static int
copy_dir(struct copy_ctx *x, int sfd, int dfd, unsigned depth, struct sb_error **err)
{
	struct dirent *de;
	DIR *d = dir_stream(sfd, err);

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    skipped_name(x->o, de->d_name))
			continue;
		if (copy_entry(x, sfd, dfd, de->d_name, depth, err) < 0) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return 0;
}

int
sb_copy_tree_at(int src_fd, int dst_parent_fd, const char *name,
    const struct sb_copy_opts *opts, struct sb_copy_stats *ret_stats, struct sb_error **err)
{
	struct copy_ctx x;
	_cleanup_close_ int d = -1;
	struct stat st;

	memset(&x, 0, sizeof(x));
	x.o = opts;
	x.max_files = opts->max_files ? opts->max_files : SB_COPY_FILES_MAX;
	x.max_bytes = opts->max_bytes ? opts->max_bytes : SB_COPY_BYTES_MAX;
	if (fstat(src_fd, &st) < 0)
		return sb_error_errno(err, errno, "stat source");
	if (mkdirat(dst_parent_fd, name, 0700) < 0)
		return sb_error_errno(err, errno, "mkdir '%s'", name);
	d = openat(dst_parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d < 0)
		return sb_error_errno(err, errno, "open '%s'", name);
	if (copy_dir(&x, src_fd, d, 0, err) < 0)
		return -1;
	(void)fchmod(d, copy_mode(&x, st.st_mode));
	if (set_owner_and_times(&x, d, &st, err) < 0)
		return -1;
	if (ret_stats != NULL)
		*ret_stats = x.st;
	return 0;
}

/*
 * A tree deeper than the walk may go is not left behind (it could hold the rest of the disk):
 * at the depth limit the directory is moved up to the top of the tree being emptied, under a
 * name of its own, and the next pass takes it from there.
 */
struct empty_ctx {
	int top;	    /* the directory being emptied */
	unsigned long moved; /* subtrees moved up in this pass */
	unsigned long seq;
};

static int
move_up(struct empty_ctx *x, int dfd, const char *name, struct sb_error **err)
{
	for (int tries = 0; tries < 1000; tries++) {
		char to[64];

		snprintf(to, sizeof(to), ".sb-deep-%ld-%lu", (long)getpid(), ++x->seq);
		if (renameat(dfd, name, x->top, to) == 0) {
			x->moved++;
			return 0;
		}
		if (errno != EEXIST && errno != ENOTEMPTY)
			return sb_error_errno(err, errno, "move '%s' up", name);
	}
	return sb_error_set(err, EEXIST, "move '%s' up: no free name", name);
}

static int
empty_dir(struct empty_ctx *x, int dfd, unsigned depth, struct sb_error **err)
{
	struct dirent *de;
	DIR *d = dir_stream(dfd, err);
	int r = 0;

	if (d == NULL)
		return -1;
	/* The duplicate shares the directory's offset: an earlier pass left it at the end. */
	rewinddir(d);
	while ((de = readdir(d)) != NULL) {
		_cleanup_close_ int sub = -1;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (unlinkat(dfd, de->d_name, 0) == 0 || errno == ENOENT)
			continue;
		if (errno != EISDIR && errno != EPERM) {
			r = sb_error_errno(err, errno, "unlink '%s'", de->d_name);
			break;
		}
		if (depth >= SB_COPY_DEPTH_MAX) {
			if (move_up(x, dfd, de->d_name, err) < 0) {
				r = -1;
				break;
			}
			continue;
		}
		/* A directory: O_NOFOLLOW, so a link swapped in is not entered. */
		sub = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		/*
		 * One its owner made unreadable (mode 000): its owner may give itself the right
		 * back. fchmodat follows a link, but this runs as the tree's owner, who can only
		 * change what it owns anyway.
		 */
		if (sub < 0 && errno == EACCES && fchmodat(dfd, de->d_name, 0700, 0) == 0)
			sub = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			r = sb_error_errno(err, errno, "open '%s'", de->d_name);
			break;
		}
		/* A directory we may not write (mode 0500 left by a build): open it up first. */
		(void)fchmod(sub, 0700);
		if (empty_dir(x, sub, depth + 1, err) < 0) {
			r = -1;
			break;
		}
		if (unlinkat(dfd, de->d_name, AT_REMOVEDIR) < 0 && errno != ENOENT) {
			r = sb_error_errno(err, errno, "rmdir '%s'", de->d_name);
			break;
		}
	}
	closedir(d);
	return r;
}

/* Empty dfd entirely, pass after pass while subtrees were moved up into it. */
static int
empty_all(int dfd, struct sb_error **err)
{
	struct empty_ctx x = { .top = dfd, .moved = 0, .seq = 0 };

	for (unsigned pass = 0; pass < 100000; pass++) {
		x.moved = 0;
		if (empty_dir(&x, dfd, 0, err) < 0)
			return -1;
		if (x.moved == 0)
			return 0;
	}
	return sb_error_set(err, ELOOP, "tree too deep to remove");
}

int
sb_empty_dir_at(int dir_fd, struct sb_error **err)
{
	return empty_all(dir_fd, err);
}

int
sb_remove_tree_at(int parent_fd, const char *name, struct sb_error **err)
{
	_cleanup_close_ int d = -1;

	if (unlinkat(parent_fd, name, 0) == 0 || errno == ENOENT)
		return 0;
	d = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d < 0)
		return sb_error_errno(err, errno, "open '%s'", name);
	(void)fchmod(d, 0700);
	if (empty_all(d, err) < 0)
		return sb_error_prefix(err, "remove '%s'", name);
	if (unlinkat(parent_fd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return sb_error_errno(err, errno, "rmdir '%s'", name);
	return 0;
}

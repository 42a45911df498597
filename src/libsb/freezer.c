/* SPDX-License-Identifier: Apache-2.0 */
/* freezer.c: the cgroup freezer, v1 or v2 (sb/freezer.h). */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "sb/freezer.h"
#include "sb/mem.h"
#include "sb/proc.h"
#include "sb/spawn.h"

#define CGROUP1_MAGIC 0x27e0ebL
#define CGROUP2_MAGIC 0x63677270L

/* cgroup.procs of a cgroup with every pid at its limit: 4 Mi pids of 8 bytes each. */
#define PROCS_MAX (32u << 20)

static int
write_value(int dir_fd, const char *name, const char *value, struct sb_error **err)
{
	size_t len = strlen(value);
	int fd = openat(dir_fd, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return sb_error_errno(err, errno, "open %s", name);
	n = write(fd, value, len);
	if (n < 0) {
		int e = errno;

		close(fd);
		return sb_error_errno(err, e, "write %s", name);
	}
	close(fd);
	if ((size_t)n != len)
		return sb_error_set(err, EIO, "short write to %s", name);
	return 0;
}

/* Read a cgroup file whole (they are generated, not stored: read until 0). *ret: free. */
static int
read_value(int dir_fd, const char *name, size_t max, char **ret, struct sb_error **err)
{
	size_t len = 0, cap = 256;
	char *buf = sb_xmalloc(cap);
	int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		free(buf);
		return sb_error_errno(err, errno, "open %s", name);
	}
	for (;;) {
		ssize_t n;

		if (cap - len < 2) {
			if (cap >= max) {
				free(buf);
				close(fd);
				return sb_error_set(err, EFBIG, "%s is larger than %zu bytes", name, max);
			}
			cap *= 2;
			buf = sb_xreallocarray(buf, cap, 1);
		}
		n = SB_RETRY_EINTR(read(fd, buf + len, cap - len - 1));
		if (n < 0) {
			int e = errno;

			free(buf);
			close(fd);
			return sb_error_errno(err, e, "read %s", name);
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	*ret = buf;
	return 0;
}

int
sb_freezer_open(const char *dir, struct sb_freezer *f, struct sb_error **err)
{
	struct statfs sfs;
	struct stat st;
	int fd;

	*f = (struct sb_freezer)SB_FREEZER_INIT;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sb_error_errno(err, errno, "open the freezer cgroup %s", dir);
	if (fstatfs(fd, &sfs) < 0 || fstat(fd, &st) < 0) {
		int e = errno;

		close(fd);
		return sb_error_errno(err, e, "stat the freezer cgroup %s", dir);
	}
	if ((long)sfs.f_type != CGROUP1_MAGIC && (long)sfs.f_type != CGROUP2_MAGIC) {
		close(fd);
		return sb_error_set(err, EINVAL, "%s is not a cgroup", dir);
	}
	/* Whoever may write here may thaw the cgroup, or move a process out of it. */
	if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		close(fd);
		return sb_error_set(err, EPERM,
		    "the freezer cgroup %s must be root's and writable by nobody else", dir);
	}
	f->v2 = (long)sfs.f_type == CGROUP2_MAGIC;
	/* A hierarchy's root has neither file: it cannot be frozen. */
	if (faccessat(fd, f->v2 ? "cgroup.freeze" : "freezer.state", W_OK, 0) < 0) {
		int e = errno;

		close(fd);
		return sb_error_errno(err, e, "%s cannot be frozen (no %s)", dir,
		    f->v2 ? "cgroup.freeze" : "freezer.state");
	}
	f->fd = fd;
	f->procs = sb_xasprintf("%s/cgroup.procs", dir);
	return 0;
}

void
sb_freezer_close(struct sb_freezer *f)
{
	if (f->fd >= 0)
		close(f->fd);
	free(f->procs);
	*f = (struct sb_freezer)SB_FREEZER_INIT;
}

/* 1 if the kernel reports the whole cgroup frozen, 0 if not yet, -1 on error. */
static int
is_frozen(const struct sb_freezer *f, struct sb_error **err)
{
	_cleanup_free_ char *v = NULL;
	const char *p;

	if (read_value(f->fd, f->v2 ? "cgroup.events" : "freezer.state", 4096, &v, err) < 0)
		return -1;
	if (!f->v2)
		return strcmp(v, "FROZEN\n") == 0;
	/* cgroup.events: "populated N\nfrozen N\n", written by the kernel. */
	p = strstr(v, "frozen ");
	return p != NULL && (p == v || p[-1] == '\n') && p[7] == '1';
}

static int
set_frozen(const struct sb_freezer *f, bool on, struct sb_error **err)
{
	if (f->v2)
		return write_value(f->fd, "cgroup.freeze", on ? "1" : "0", err);
	return write_value(f->fd, "freezer.state", on ? "FROZEN" : "THAWED", err);
}

static void
pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Freeze and wait for the kernel to say so: 0, or -1 with ETIMEDOUT. */
static int
freeze_wait(const struct sb_freezer *f, uint64_t deadline_ms, struct sb_error **err)
{
	if (set_frozen(f, true, err) < 0)
		return -1;
	for (;;) {
		int r = is_frozen(f, err);

		if (r != 0)
			return r < 0 ? -1 : 0;
		/* A task in an uninterruptible wait freezes when it leaves it. */
		if (sb_now_ms() >= deadline_ms)
			return sb_error_set(err, ETIMEDOUT, "the cgroup did not freeze in time");
		pause_ms(1);
	}
}

int
sb_freezer_members(const struct sb_freezer *f, pid_t **ret, size_t *ret_n,
    struct sb_error **err)
{
	_cleanup_free_ char *v = NULL;
	pid_t *pids = NULL;
	size_t n = 0, cap = 0;
	char *p, *end;

	if (read_value(f->fd, "cgroup.procs", PROCS_MAX, &v, err) < 0)
		return -1;
	for (p = v; *p != '\0'; p = end) {
		long pid;

		if (*p == '\n') {
			end = p + 1;
			continue;
		}
		errno = 0;
		pid = strtol(p, &end, 10);
		if (end == p || errno != 0 || pid < 0 || (*end != '\n' && *end != '\0')) {
			free(pids);
			return sb_error_set(err, EPROTO, "unexpected line in cgroup.procs");
		}
		/* 0: a process outside this pid namespace. */
		if (pid == 0)
			continue;
		if (n == cap) {
			cap = cap == 0 ? 64 : cap * 2;
			pids = sb_xreallocarray(pids, cap, sizeof(*pids));
		}
		pids[n++] = (pid_t)pid;
	}
	*ret = pids;
	*ret_n = n;
	return 0;
}

static int
cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Does any thread of pid hold an inotify or fanotify queue? The kernel goes on queueing
 * file events for a frozen process and hands them over when it runs again: the check's
 * code, opening one world-readable file per byte, could spell out the PoC (third red-team
 * round: 12 KiB a check). The queues stay allowed (agent CLIs watch files with them), so a
 * check is refused while one is open. Per thread: a thread may have a file table of its own.
 */
static bool
holds_event_queue(pid_t pid)
{
	char path[64];
	struct dirent *t;
	bool found = false;
	DIR *td;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	td = opendir(path);
	if (td == NULL)
		return false;
	while (!found && (t = readdir(td)) != NULL) {
		char fdpath[128];
		struct dirent *e;
		DIR *fd;

		if (t->d_name[0] < '0' || t->d_name[0] > '9')
			continue;
		snprintf(fdpath, sizeof(fdpath), "/proc/%d/task/%.20s/fd", (int)pid, t->d_name);
		fd = opendir(fdpath);
		if (fd == NULL)
			continue;
		while (!found && (e = readdir(fd)) != NULL) {
			char link[64];
			ssize_t n = readlinkat(dirfd(fd), e->d_name, link, sizeof(link) - 1);

			if (n <= 0)
				continue;
			link[n] = '\0';
			found = strcmp(link, "anon_inode:inotify") == 0 ||
			    strcmp(link, "anon_inode:[fanotify]") == 0;
		}
		closedir(fd);
	}
	closedir(td);
	return found;
}

int
sb_freezer_freeze(const struct sb_freezer *f, uid_t uid, unsigned timeout_ms,
    struct sb_error **err)
{
	_cleanup_free_ pid_t *in = NULL, *of_uid = NULL;
	size_t nin = 0, nuid = 0, outside = 0;
	pid_t first = 0;

	if (freeze_wait(f, sb_now_ms() + timeout_ms, err) < 0)
		return -1;
	/*
	 * Frozen, nothing in the cgroup forks any more; what of uid lives outside it (a process
	 * nobody put there) was not frozen and could watch. Members first: a process that
	 * joins between the two reads (a root child on its way to uid, sb_cmd.cgroup_procs) is
	 * frozen as it joins, and is counted as outside, never missed.
	 */
	if (sb_freezer_members(f, &in, &nin, err) < 0 || sb_proc_list_uid(uid, &of_uid, &nuid, err) < 0)
		return -1;
	if (nin > 0)
		qsort(in, nin, sizeof(*in), cmp_pid);
	for (size_t i = 0; i < nuid; i++) {
		if (nin > 0 && bsearch(&of_uid[i], in, nin, sizeof(*in), cmp_pid) != NULL)
			continue;
		if (outside++ == 0)
			first = of_uid[i];
	}
	if (outside > 0)
		return sb_error_set(err, EBUSY,
		    "%zu process%s of uid %u %s outside the freezer cgroup (pid %d)", outside,
		    outside == 1 ? "" : "es", (unsigned)uid, outside == 1 ? "is" : "are", (int)first);
	for (size_t i = 0; i < nin; i++)
		if (holds_event_queue(in[i]))
			return sb_error_set(err, EBUSY,
			    "process %d holds a file event queue (inotify or fanotify)", (int)in[i]);
	return 0;
}

int
sb_freezer_thaw(const struct sb_freezer *f, struct sb_error **err)
{
	return set_frozen(f, false, err);
}

int
sb_freezer_kill(const struct sb_freezer *f, unsigned timeout_ms, struct sb_error **err)
{
	uint64_t deadline = sb_now_ms() + timeout_ms;
	size_t n = 0;

	for (unsigned round = 0;; round++) {
		_cleanup_free_ pid_t *in = NULL;
		struct sb_error *ferr = NULL;

		/* Frozen, the members cannot fork while they are listed and killed; should a
		 * task not freeze in time, the kill goes ahead all the same. */
		if (freeze_wait(f, sb_now_ms() + 200, &ferr) < 0)
			sb_error_release(&ferr);
		if (sb_freezer_members(f, &in, &n, err) < 0) {
			(void)sb_freezer_thaw(f, NULL);
			return -1;
		}
		for (size_t i = 0; i < n; i++)
			(void)kill(in[i], SIGKILL);
		/* v1 frozen tasks die when thawed, before they run a single instruction more. */
		if (sb_freezer_thaw(f, err) < 0)
			return -1;
		if (n == 0)
			return 0;
		if (sb_now_ms() >= deadline)
			break;
		pause_ms(round < 10 ? 5 : 50);
	}
	return sb_error_set(err, EBUSY, "%zu processes in the freezer cgroup survived SIGKILL", n);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* proc.c: counting and killing a uid's processes. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "sb/buf.h"
#include "sb/proc.h"

/* Does /proc/<pid>/status show a live process with uid among its real/effective/saved ids? */
static bool
proc_matches(int proc_fd, const char *pid, uid_t uid)
{
	char path[64], buf[4096];
	const char *p;
	unsigned long r, e, s;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/status", pid);
	fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* A zombie holds no resources and cannot be killed again; its parent reaps it. */
	p = strstr(buf, "\nState:");
	if (p != NULL && strncmp(p + 7, "\tZ", 2) == 0)
		return false;
	p = strstr(buf, "\nUid:");
	if (p == NULL || sscanf(p + 5, "%lu %lu %lu", &r, &e, &s) != 3)
		return false;
	return r == uid || e == uid || s == uid;
}

int
sb_proc_count_uid(uid_t uid, struct sb_error **err)
{
	char self[32];
	struct dirent *de;
	int count = 0, pfd;
	DIR *d;

	snprintf(self, sizeof(self), "%d", (int)getpid());
	pfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return sb_error_errno(err, errno, "open /proc");
	d = fdopendir(pfd);
	if (d == NULL) {
		close(pfd);
		return sb_error_errno(err, errno, "opendir /proc");
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9' || strcmp(de->d_name, self) == 0)
			continue;
		if (proc_matches(pfd, de->d_name, uid))
			count++;
	}
	closedir(d);
	return count;
}

/* One round: a child becomes uid and signals everything it may signal. */
static int
kill_round(uid_t uid, gid_t gid, struct sb_error **err)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return sb_error_errno(err, errno, "fork");
	if (pid == 0) {
		/* Async-signal-safe only: raw system calls. kill(-1) spares the caller. */
		if (syscall(SYS_setgroups, 0, NULL) < 0 || syscall(SYS_setresgid, gid, gid, gid) < 0 ||
		    syscall(SYS_setresuid, uid, uid, uid) < 0)
			_exit(1);
		(void)kill(-1, SIGKILL);
		_exit(0);
	}
	if (SB_RETRY_EINTR(waitpid(pid, &status, 0)) < 0)
		return sb_error_errno(err, errno, "waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return sb_error_set(err, EPERM, "cannot become uid %u to kill its processes",
		    (unsigned)uid);
	return 0;
}

int
sb_proc_kill_uid(uid_t uid, gid_t gid, unsigned rounds, struct sb_error **err)
{
	int left = 0;

	if (uid == 0)
		return sb_error_set(err, EINVAL, "refusing to kill every process of root");
	for (unsigned i = 0; i < rounds; i++) {
		struct timespec pause = { 0, 20000000L * (long)(i + 1) };

		if (kill_round(uid, gid, err) < 0)
			return -1;
		left = sb_proc_count_uid(uid, err);
		if (left < 0)
			return -1;
		if (left == 0)
			return 0;
		/* Processes being killed take a moment to become zombies. */
		nanosleep(&pause, NULL);
		left = sb_proc_count_uid(uid, err);
		if (left == 0)
			return 0;
	}
	return sb_error_set(err, EBUSY, "%d processes of uid %u survived %u rounds of SIGKILL",
	    left, (unsigned)uid, rounds);
}

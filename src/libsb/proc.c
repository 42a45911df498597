/* SPDX-License-Identifier: Apache-2.0 */
/* proc.c: counting and killing a uid's processes. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "sb/buf.h"
#include "sb/proc.h"

/*
 * The state letter of /proc/<pid>/status ('R', 'S', 'T'...) when it shows a live process
 * with uid among its real/effective/saved ids; 0 otherwise (another user, gone, a zombie).
 */
static char
proc_state(int proc_fd, const char *pid, uid_t uid)
{
	char path[64], buf[4096], state = '?';
	const char *p;
	unsigned long r, e, s;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/status", pid);
	fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strstr(buf, "\nState:");
	if (p != NULL && p[7] == '\t')
		state = p[8];
	/* A zombie holds no resources and cannot be killed again; its parent reaps it. */
	if (state == 'Z' || state == 'X')
		return 0;
	p = strstr(buf, "\nUid:");
	if (p == NULL || sscanf(p + 5, "%lu %lu %lu", &r, &e, &s) != 3)
		return 0;
	return (r == uid || e == uid || s == uid) ? state : 0;
}

/*
 * Signal each process of uid that /proc lists (with SIGSTOP: only those not stopped yet;
 * with 0: just count them). Returns how many were signalled, or -1.
 */
static int
signal_each(uid_t uid, int sig, struct sb_error **err)
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
		char st;
		long pid;

		if (de->d_name[0] < '0' || de->d_name[0] > '9' || strcmp(de->d_name, self) == 0)
			continue;
		st = proc_state(pfd, de->d_name, uid);
		if (st == 0 || (sig == SIGSTOP && (st == 'T' || st == 't')))
			continue;
		pid = strtol(de->d_name, NULL, 10);
		if (pid > 1 && kill((pid_t)pid, sig) == 0)
			count++;
	}
	closedir(d);
	return count;
}

int
sb_proc_count_uid(uid_t uid, struct sb_error **err)
{
	/* Signal 0 checks that the process exists and may be signalled, and sends nothing. */
	return signal_each(uid, 0, err);
}

/*
 * Without a fork: when the pids limit is used up (a fork bomb), kill_round cannot start its
 * child. Root then freezes the uid's processes one by one from /proc (a stopped process
 * cannot fork), until a whole pass finds none still running, and kills them all
 * (integrity-model: "a fork bomb ... does not stop grading").
 */
#define FREEZE_PASSES 200

static int
kill_by_scan(uid_t uid, struct sb_error **err)
{
	for (unsigned pass = 0; pass < FREEZE_PASSES; pass++) {
		int n = signal_each(uid, SIGSTOP, err);

		if (n < 0)
			return -1;
		if (n == 0)
			break;
	}
	return signal_each(uid, SIGKILL, err) < 0 ? -1 : 0;
}

/*
 * How often a round's child may be found stopped and continued before the round gives up on
 * it. Once the child is uid, every process of uid may signal it: the processes being
 * signalled can stop it (kill(-1, SIGSTOP) in a loop), and another round for the same uid
 * (the helper's sweep after a killed worker overlaps the end of the agent phase) can stop or
 * kill it. A wait that ignored that would hang root's caller for as long as they like.
 */
#define ROUND_CONTINUES 64

enum round_result {
	ROUND_DONE = 0,
	ROUND_NO_FORK = 1,  /* no child could be forked (the uid's pids limit is used up) */
	ROUND_DISTURBED = 2 /* the child was killed or kept stopped before it could finish */
};

/* One kill(-1, sig) as uid: a round_result, or -1 with *err. */
static int
signal_round(uid_t uid, gid_t gid, int sig, struct sb_error **err)
{
	int status;
	pid_t pid = fork();

	if (pid < 0 && errno == EAGAIN)
		return ROUND_NO_FORK;
	if (pid < 0)
		return sb_error_errno(err, errno, "fork");
	if (pid == 0) {
		/* Async-signal-safe only: raw system calls. kill(-1) spares the caller. */
		if (syscall(SYS_setgroups, 0, NULL) < 0 || syscall(SYS_setresgid, gid, gid, gid) < 0 ||
		    syscall(SYS_setresuid, uid, uid, uid) < 0)
			_exit(1);
		(void)kill(-1, sig);
		_exit(0);
	}
	for (unsigned continued = 0;; continued++) {
		if (SB_RETRY_EINTR(waitpid(pid, &status, WUNTRACED)) < 0)
			return sb_error_errno(err, errno, "waitpid");
		if (!WIFSTOPPED(status))
			break;
		(void)kill(pid, continued < ROUND_CONTINUES ? SIGCONT : SIGKILL);
	}
	if (WIFSIGNALED(status))
		return ROUND_DISTURBED;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return sb_error_set(err, EPERM, "cannot become uid %u to signal its processes",
		    (unsigned)uid);
	return ROUND_DONE;
}

/*
 * A round that could not fork, or whose child the uid's processes (or a concurrent round)
 * disturbed, is done by root from /proc instead, which nothing of uid can interfere with.
 */
static int
kill_round(uid_t uid, gid_t gid, struct sb_error **err)
{
	int r = signal_round(uid, gid, SIGKILL, err);

	return r == ROUND_NO_FORK || r == ROUND_DISTURBED ? kill_by_scan(uid, err) : r;
}

int
sb_proc_signal_uid(uid_t uid, gid_t gid, int sig, struct sb_error **err)
{
	int r;

	if (uid == 0)
		return sb_error_set(err, EINVAL, "refusing to signal every process of root");
	r = signal_round(uid, gid, sig, err);
	if (r == ROUND_NO_FORK)
		return sb_error_set(err, EAGAIN, "cannot fork to signal the processes of uid %u",
		    (unsigned)uid);
	/* Not retried: a stop that the uid's own processes keep from happening is refused
	 * (the caller then runs nothing), never taken for done. */
	if (r == ROUND_DISTURBED)
		return sb_error_set(err, EINTR,
		    "the processes of uid %u disturbed the signalling of them", (unsigned)uid);
	return r;
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

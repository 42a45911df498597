/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proc-scale N K: how long root takes to hold still and to kill every process of a uid at
 * the scale of a container's pids limit, by signals (src/libsb/proc.c) and by the cgroup
 * freezer (src/libsb/freezer.c). N sleepers and K continuers (each a kill(-1, SIGCONT) loop,
 * started last so that they sit at the end of every /proc pass) of uid 61240, in a pids
 * cgroup of their own and a freezer cgroup (v1, or the v2 tree without controllers). Needs
 * root. Prints one line per measure:
 *   stop-signals   sb_proc_signal_uid(SIGSTOP): refused (EBUSY) while continuers run
 *   freeze-cgroup  sb_freezer_freeze: frozen, and every process of the uid in the cgroup
 *   kill-signals   sb_proc_kill_uid
 *   kill-cgroup    sb_freezer_kill (a second population)
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sb/error.h"
#include "sb/freezer.h"
#include "sb/proc.h"
#include "sb/spawn.h"

#define BENCH_UID 61240

static char pids_cg[128], frz_cg[128];

static void
write_file(const char *dir, const char *name, const char *v)
{
	char p[256];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY);
	if (fd < 0 || write(fd, v, strlen(v)) < 0) {
		perror(p);
		exit(1);
	}
	close(fd);
}

static long
pids_current(void)
{
	char p[256], buf[32];
	ssize_t r;
	int fd;

	snprintf(p, sizeof(p), "%s/pids.current", pids_cg);
	fd = open(p, O_RDONLY);
	if (fd < 0)
		return -1;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return -1;
	buf[r] = '\0';
	return strtol(buf, NULL, 10);
}

/* A spawner: joins both cgroups, becomes the uid, forks n sleepers then k continuers. The
 * cgroup must be empty first: the pids of processes killed a moment ago still count. */
static void
populate(int n, int k)
{
	int status;
	pid_t p;

	for (int i = 0; i < 1000 && pids_current() != 0; i++)
		usleep(10000);
	p = fork();
	if (p < 0)
		exit(1);
	if (p == 0) {
		write_file(pids_cg, "cgroup.procs", "0");
		write_file(frz_cg, "cgroup.procs", "0");
		if (syscall(SYS_setgroups, 0, NULL) < 0 || setresgid(BENCH_UID, BENCH_UID, BENCH_UID) < 0 ||
		    setresuid(BENCH_UID, BENCH_UID, BENCH_UID) < 0)
			_exit(3);
		for (int i = 0; i < n + k; i++) {
			pid_t c = fork();

			if (c == 0) {
				if (i < n)
					for (;;)
						pause();
				for (;;)
					(void)kill(-1, SIGCONT);
			}
			if (c < 0)
				_exit(4);
		}
		_exit(0);
	}
	(void)waitpid(p, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "proc-scale: the spawner failed (status %d)\n", status);
		(void)sb_proc_kill_uid(BENCH_UID, BENCH_UID, 20, NULL);
		exit(1);
	}
	while (sb_proc_count_uid(BENCH_UID, NULL) < n + k)
		usleep(10000);
}

static void
report(const char *what, uint64_t t0, int rc, struct sb_error *err)
{
	printf("%-14s %7.2f s  %s\n", what, (double)(sb_now_ms() - t0) / 1000.0,
	    rc == 0 ? "done" : sb_error_message(err));
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 4000;
	int k = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 2;
	const char *froot = access("/sys/fs/cgroup/freezer/cgroup.procs", F_OK) == 0
	    ? "/sys/fs/cgroup/freezer" : "/sys/fs/cgroup/unified";
	struct sb_freezer f;
	struct sb_error *err = NULL;
	char max[32];
	uint64_t t0;
	int rc;

	if (geteuid() != 0 || argc > 3 || n < 1 || k < 0) {
		fprintf(stderr, "usage (as root): proc-scale [SLEEPERS [CONTINUERS]]\n");
		return 2;
	}
	snprintf(pids_cg, sizeof(pids_cg), "/sys/fs/cgroup/pids/ssebench-bench-%d", (int)getpid());
	snprintf(frz_cg, sizeof(frz_cg), "%s/ssebench-bench-%d", froot, (int)getpid());
	if (mkdir(pids_cg, 0700) < 0 || mkdir(frz_cg, 0700) < 0) {
		perror("mkdir cgroup");
		return 1;
	}
	snprintf(max, sizeof(max), "%d", n + k + 64);
	write_file(pids_cg, "pids.max", max);
	if (sb_freezer_open(frz_cg, &f, &err) < 0) {
		fprintf(stderr, "%s\n", sb_error_message(err));
		return 1;
	}
	printf("%d sleepers, %d continuers, uid %d, freezer %s\n", n, k, BENCH_UID, froot);
	populate(n, k);
	t0 = sb_now_ms();
	rc = sb_proc_signal_uid(BENCH_UID, BENCH_UID, SIGSTOP, &err);
	report("stop-signals", t0, rc, err);
	sb_error_release(&err);
	(void)sb_proc_signal_uid(BENCH_UID, BENCH_UID, SIGCONT, NULL);
	t0 = sb_now_ms();
	rc = sb_freezer_freeze(&f, BENCH_UID, 10000, &err);
	report("freeze-cgroup", t0, rc, err);
	sb_error_release(&err);
	(void)sb_freezer_thaw(&f, NULL);
	t0 = sb_now_ms();
	rc = sb_proc_kill_uid(BENCH_UID, BENCH_UID, 20, &err);
	report("kill-signals", t0, rc, err);
	sb_error_release(&err);
	(void)sb_freezer_kill(&f, 10000, NULL);
	populate(n, k);
	t0 = sb_now_ms();
	rc = sb_freezer_kill(&f, 30000, &err);
	report("kill-cgroup", t0, rc, err);
	sb_error_release(&err);
	(void)sb_proc_kill_uid(BENCH_UID, BENCH_UID, 20, NULL);
	sb_freezer_close(&f);
	for (int i = 0; i < 100 && (rmdir(frz_cg) < 0 || rmdir(pids_cg) < 0); i++)
		usleep(20000);
	return 0;
}

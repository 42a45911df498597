/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sb-waker FILE: a heartbeat that the kernel wakes. Every 20 ms it appends the time
 * (CLOCK_REALTIME, in ms) as a line to FILE, and arms a one-shot POSIX timer whose signal is
 * SIGCONT, 50 ms ahead. Stopped by SIGSTOP, it is continued by that timer 50 ms later and
 * beats on: the attack on a stop by signals during a check on hidden material (second
 * red-team round, issue 13). A frozen cgroup holds it. Runs until killed.
 */
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct itimerspec its = { { 0, 0 }, { 0, 50000000L } };
	struct sigevent sev;
	timer_t t;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: sb-waker FILE\n");
		return 2;
	}
	fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGCONT;
	if (fd < 0 || timer_create(CLOCK_MONOTONIC, &sev, &t) < 0) {
		perror("sb-waker");
		return 3;
	}
	for (;;) {
		struct timespec now, pause = { 0, 20000000L };
		char line[32];
		int n;

		clock_gettime(CLOCK_REALTIME, &now);
		n = snprintf(line, sizeof(line), "%lld\n",
		    (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000);
		if (write(fd, line, (size_t)n) != n)
			return 3;
		(void)timer_settime(t, 0, &its, NULL);
		nanosleep(&pause, NULL);
	}
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hh.c: the hostile agent's helper, compiled into the agent image at build time (gcc from the
 * base image). It does what a shell cannot: raw connects with a time limit, ptrace and
 * process_vm_readv, a /proc sweep, processes that escape their session, a fork bomb, file
 * capabilities. Every command prints what happened; the judging is in hostile.sh and in
 * tests/integrity/t0100-hostile-agent.sh.
 *
 *   hh connect HOST PORT MS        open | refused | timeout | error:<errno name>
 *   hh scan A.B.C PORT MS [SKIP]   the hosts A.B.C.1-254 with PORT open (SKIP: own address)
 *   hh unix PATH                   connected | error:<errno>  (a leading @: abstract name)
 *   hh bind PORT                   one line per attempt to take PORT on 0.0.0.0 / 127.0.0.1
 *   hh ptrace PID                  attach, seize, process_vm_readv, /proc/PID/mem
 *   hh signal PID SIG              ok | error:<errno>
 *   hh ids [FILE]                  ruid euid suid, CapEff, and whether FILE opens
 *   hh fds                         descriptors this process inherited beyond 0-2
 *   hh rlimit                      RLIMIT_CORE soft and hard
 *   hh userns                      clone(CLONE_NEWUSER) and unshare(CLONE_NEWUSER|NEWNS)
 *   hh procwatch SECONDS [--waker] sweep /proc for other users' processes (see procwatch);
 *                                  --waker: every 5 ms, with a POSIX timer whose signal is
 *                                  SIGCONT armed 20 ms ahead (a stop by signals does not hold it)
 *   hh heartbeat [--daemon] [--ignore] FILE   write the time in ms to FILE every 200 ms
 *   hh forkbomb SECONDS HBFILE     fill the pids limit with processes that keep forking
 *   hh setcap FILE                 (build time, as root) give FILE cap_dac_read_search etc.
 *   hh pcache drop FILE            drop FILE's pages from the page cache (POSIX_FADV_DONTNEED)
 *   hh pcache send FILE DATA N     put the first N bytes of the file DATA into FILE's cached
 *                                  pages: bit k (MSB first) caches page 2k if set, else 2k+1
 *   hh pcache recv FILE N          read N bytes back from which pages are cached (each page
 *                                  read once, timed; of a pair, one 5 times faster than the
 *                                  other was cached): "pairs V/M bytes HEX", where V of the M
 *                                  page pairs had one page cached and not the other (a message)
 *   hh dcache spawn N FILE         N sleeping processes named sse-dc-sleep; their pids to FILE
 *   hh dcache mark DATA N          for bit k of DATA's first N bytes, look up three /proc
 *                                  entries of the 2k-th (set) or 2k+1-th (clear) sse-dc-sleep
 *   hh dcache read FILE DATA N     time the first lookup of those entries of FILE's pids:
 *                                  "agree A/M", the bits read that DATA's bits agree with
 *   hh names mark DIR DATA N       for bit k of DATA's first N bytes, look up the name (that
 *                                  does not exist) DIR/sse-nm-k-1 or DIR/sse-nm-k-0
 *   hh names read DIR N            time the first lookup of each: "bytes HEX"
 *   hh agree HEX DATA N            "agree A/M": the bits of HEX that agree with DATA's
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

static const char *
ename(int e)
{
	const char *n = strerrorname_np(e);

	return n != NULL ? n : "E?";
}

static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Non-blocking connect with a time limit. 1 open, 0 refused, -1 timeout, -2 other error. */
static int
tcp_try(const char *host, int port, int ms, int *ret_errno)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct pollfd p;
	socklen_t l = sizeof(int);
	int fd, e = 0, r;

	*ret_errno = 0;
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		*ret_errno = EINVAL;
		return -2;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		*ret_errno = errno;
		return -2;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(fd);
		return 1;
	}
	if (errno != EINPROGRESS) {
		*ret_errno = errno;
		close(fd);
		return errno == ECONNREFUSED ? 0 : -2;
	}
	p.fd = fd;
	p.events = POLLOUT;
	r = poll(&p, 1, ms);
	if (r == 0) {
		close(fd);
		return -1;
	}
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l);
	close(fd);
	*ret_errno = e;
	if (e == 0)
		return 1;
	return e == ECONNREFUSED ? 0 : -2;
}

static int
cmd_connect(int argc, char **argv)
{
	int e, r;

	if (argc != 5)
		return 2;
	r = tcp_try(argv[2], atoi(argv[3]), atoi(argv[4]), &e);
	if (r == 1)
		puts("open");
	else if (r == 0)
		puts("refused");
	else if (r == -1)
		puts("timeout");
	else
		printf("error:%s\n", ename(e));
	return 0;
}

/* All 254 connects at once, then one poll loop. */
static int
cmd_scan(int argc, char **argv)
{
	struct pollfd p[255];
	int n = 0, port, ms, ids[255];
	long long end;

	if (argc < 5)
		return 2;
	port = atoi(argv[3]);
	ms = atoi(argv[4]);
	for (int i = 1; i <= 254; i++) {
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
		char host[64];
		int fd;

		snprintf(host, sizeof(host), "%s.%d", argv[2], i);
		if (argc > 5 && strcmp(host, argv[5]) == 0)
			continue;
		if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
			return 2;
		fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			printf("%s\n", host);
			close(fd);
			continue;
		}
		if (errno != EINPROGRESS) {
			close(fd);
			continue;
		}
		p[n].fd = fd;
		p[n].events = POLLOUT;
		ids[n++] = i;
	}
	end = now_ms() + ms;
	while (n > 0 && now_ms() < end) {
		int r = poll(p, (nfds_t)n, (int)(end - now_ms()));

		if (r <= 0)
			break;
		for (int k = 0; k < n; k++) {
			int e = 0;
			socklen_t l = sizeof(e);

			if (p[k].revents == 0)
				continue;
			getsockopt(p[k].fd, SOL_SOCKET, SO_ERROR, &e, &l);
			if (e == 0)
				printf("%s.%d\n", argv[2], ids[k]);
			close(p[k].fd);
			p[k] = p[n - 1];
			ids[k] = ids[n - 1];
			n--;
			k--;
		}
	}
	for (int k = 0; k < n; k++)
		close(p[k].fd);
	return 0;
}

static int
cmd_unix(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	int fd;

	if (argc != 3 || strlen(argv[2]) >= sizeof(sa.sun_path))
		return 2;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (argv[2][0] == '@') {
		memcpy(sa.sun_path + 1, argv[2] + 1, strlen(argv[2]) - 1);
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(argv[2]));
	} else {
		strcpy(sa.sun_path, argv[2]);
		len = sizeof(sa);
	}
	if (connect(fd, (struct sockaddr *)&sa, len) == 0)
		puts("connected");
	else
		printf("error:%s\n", ename(errno));
	return 0;
}

static int
cmd_bind(int argc, char **argv)
{
	static const char *const addrs[] = { "0.0.0.0", "127.0.0.1" };

	if (argc != 3)
		return 2;
	for (int reuse = 0; reuse < 2; reuse++)
		for (size_t i = 0; i < 2; i++) {
			struct sockaddr_in sa = { .sin_family = AF_INET,
				.sin_port = htons((uint16_t)atoi(argv[2])) };
			int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

			inet_pton(AF_INET, addrs[i], &sa.sin_addr);
			if (reuse) {
				setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
				setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
			}
			if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(fd, 1) == 0)
				printf("%s%s bound\n", addrs[i], reuse ? "+reuseport" : "");
			else
				printf("%s%s error:%s\n", addrs[i], reuse ? "+reuseport" : "", ename(errno));
			close(fd);
		}
	return 0;
}

static int
cmd_ptrace(int argc, char **argv)
{
	pid_t pid;
	char buf[64], path[64];
	struct iovec local = { buf, sizeof(buf) }, remote = { (void *)0x400000, sizeof(buf) };
	int fd;

	if (argc != 3)
		return 2;
	pid = (pid_t)atoi(argv[2]);
	if (ptrace(PTRACE_ATTACH, pid, 0, 0) == 0) {
		puts("attach ok");
		waitpid(pid, NULL, __WALL);
		ptrace(PTRACE_DETACH, pid, 0, 0);
	} else {
		printf("attach error:%s\n", ename(errno));
	}
	if (ptrace(PTRACE_SEIZE, pid, 0, 0) == 0) {
		puts("seize ok");
		ptrace(PTRACE_DETACH, pid, 0, 0);
	} else {
		printf("seize error:%s\n", ename(errno));
	}
	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) >= 0)
		puts("vm_readv ok");
	else
		printf("vm_readv error:%s\n", ename(errno));
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		puts("mem ok");
		close(fd);
	} else {
		printf("mem error:%s\n", ename(errno));
	}
	return 0;
}

static int
cmd_signal(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	if (kill((pid_t)atoi(argv[2]), atoi(argv[3])) == 0)
		puts("ok");
	else
		printf("error:%s\n", ename(errno));
	return 0;
}

/* The value after "Name:" in /proc/self/status. */
static void
status_field(const char *name, char *out, size_t len)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	snprintf(out, len, "?");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, name, strlen(name)) == 0 && line[strlen(name)] == ':') {
			char *v = line + strlen(name) + 1;

			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = '\0';
			snprintf(out, len, "%s", v);
		}
	fclose(f);
}

static int
cmd_ids(int argc, char **argv)
{
	uid_t r, e, s;
	char cap[64];

	getresuid(&r, &e, &s);
	status_field("CapEff", cap, sizeof(cap));
	printf("uid %u %u %u capeff %s", (unsigned)r, (unsigned)e, (unsigned)s, cap);
	if (argc > 2) {
		int fd = open(argv[2], O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			printf(" open ok");
			close(fd);
		} else {
			printf(" open error:%s", ename(errno));
		}
	}
	putchar('\n');
	return 0;
}

static int
cmd_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int self = d != NULL ? dirfd(d) : -1, n = 0;

	if (d == NULL)
		return 1;
	while ((de = readdir(d)) != NULL) {
		char path[300], target[512];
		int fd = atoi(de->d_name);
		ssize_t l;

		if (de->d_name[0] == '.' || fd <= 2 || fd == self)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		l = readlink(path, target, sizeof(target) - 1);
		target[l > 0 ? l : 0] = '\0';
		printf("fd %d %s\n", fd, target);
		n++;
	}
	closedir(d);
	printf("extra %d\n", n);
	return 0;
}

static int
cmd_rlimit(void)
{
	struct rlimit rl;

	getrlimit(RLIMIT_CORE, &rl);
	printf("core %llu %llu\n", (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max);
	rl.rlim_cur = rl.rlim_max = RLIM_INFINITY;
	if (setrlimit(RLIMIT_CORE, &rl) == 0)
		puts("raise ok");
	else
		printf("raise error:%s\n", ename(errno));
	return 0;
}

static int
cmd_userns(void)
{
	pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL);

	if (pid == 0)
		_exit(0);
	if (pid > 0) {
		waitpid(pid, NULL, 0);
		puts("clone-newuser ok");
	} else {
		printf("clone-newuser error:%s\n", ename(errno));
	}
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0)
		puts("unshare ok");
	else
		printf("unshare error:%s\n", ename(errno));
	return 0;
}

static int
read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return (int)n;
}

/* Real uid of a process, or -1. */
static long
proc_uid(const char *pid)
{
	char path[300], buf[2048], *p;
	unsigned long r;

	snprintf(path, sizeof(path), "/proc/%s/status", pid);
	if (read_small(path, buf, sizeof(buf)) < 0 || (p = strstr(buf, "\nUid:")) == NULL ||
	    sscanf(p + 5, "%lu", &r) != 1)
		return -1;
	return (long)r;
}

static long
proc_sid(const char *pid)
{
	char path[300], buf[1024], *p, st;
	int ppid, pgrp, sid;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	if (read_small(path, buf, sizeof(buf)) < 0 || (p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 1, " %c %d %d %d", &st, &ppid, &pgrp, &sid) != 4)
		return -1;
	return sid;
}

#define MAXSEEN 4096
static struct {
	int pid;
	long uid;
	int reported;
} seen[MAXSEEN];
static int nseen;

/*
 * One pass over /proc. For a process of another uid: try every file that should need
 * ptrace-level access, report any that opens ("access"), report cmdline arguments that name
 * runner or task paths ("path") and a cmdline holding the token ("secret"). For a process of
 * our uid outside our session whose name is ssebench-* (a daemon worker that dropped to the
 * agent's uid to read the agent's files): try ptrace and its fd directory ("worker").
 */
static void
sweep(uid_t me, long mysid, const char *token)
{
	static const char *const items[] = { "environ", "mem", "maps", "smaps", "stack",
		"syscall", "auxv", "pagemap", "io", "fd", "root", "cwd", "exe", NULL };
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		char path[300], buf[4096], comm[64];
		long uid;
		int pid, k, known = 0, n;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		pid = atoi(de->d_name);
		if (pid == getpid())
			continue;
		uid = proc_uid(de->d_name);
		if (uid < 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		if (read_small(path, comm, sizeof(comm)) < 0)
			continue;
		comm[strcspn(comm, "\n")] = '\0';
		for (k = 0; k < nseen; k++)
			if (seen[k].pid == pid && seen[k].uid == uid) {
				known = 1;
				break;
			}
		if (!known && nseen < MAXSEEN) {
			seen[nseen].pid = pid;
			seen[nseen].uid = uid;
			seen[nseen].reported = 0;
			k = nseen++;
			printf("seen %d %ld %s\n", pid, uid, comm);
		}
		if ((uid_t)uid == me) {
			long sid = proc_sid(de->d_name);

			if (sid != mysid && strncmp(comm, "ssebench", 8) == 0 && !known) {
				int pe = 0, fe = 0;
				DIR *fdd;

				if (ptrace(PTRACE_ATTACH, pid, 0, 0) == 0) {
					waitpid(pid, NULL, __WALL);
					ptrace(PTRACE_DETACH, pid, 0, 0);
				} else {
					pe = errno;
				}
				snprintf(path, sizeof(path), "/proc/%d/fd", pid);
				fdd = opendir(path);
				if (fdd != NULL)
					closedir(fdd);
				else
					fe = errno;
				printf("worker %d ptrace=%s fd=%s\n", pid, pe ? ename(pe) : "OK",
				    fe ? ename(fe) : "OK");
			}
			continue;
		}
		for (const char *const *it = items; *it != NULL; it++) {
			int fd;

			snprintf(path, sizeof(path), "/proc/%d/%s", pid, *it);
			if (strcmp(*it, "root") == 0 || strcmp(*it, "cwd") == 0 ||
			    strcmp(*it, "exe") == 0) {
				char t[256];

				if (readlink(path, t, sizeof(t)) >= 0)
					printf("access %d %ld %s %s\n", pid, uid, comm, *it);
				continue;
			}
			if (strcmp(*it, "fd") == 0) {
				DIR *fdd = opendir(path);

				if (fdd != NULL) {
					printf("access %d %ld %s fd\n", pid, uid, comm);
					closedir(fdd);
				}
				continue;
			}
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				char c;

				/* maps/environ of a kernel thread open but read nothing. */
				if (read(fd, &c, 1) == 1)
					printf("access %d %ld %s %s\n", pid, uid, comm, *it);
				close(fd);
			}
		}
		if (seen[k].reported)
			continue;
		seen[k].reported = 1;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
		n = read_small(path, buf, sizeof(buf));
		for (int off = 0; n > 0 && off < n; off += (int)strlen(buf + off) + 1) {
			const char *a = buf + off;

			if (token != NULL && *token != '\0' && strstr(a, token) != NULL)
				printf("secret %d %ld %s cmdline holds the token\n", pid, uid, comm);
			if (strstr(a, "/var/lib/ssebench") != NULL || strstr(a, "/ssebench/") != NULL ||
			    strstr(a, "/ssebench-repo") != NULL)
				printf("path %d %ld %s\n", pid, uid, a);
		}
	}
	closedir(d);
	fflush(stdout);
}

static int
cmd_procwatch(int argc, char **argv)
{
	long long end;
	long mysid = (long)getsid(0);
	int waker = argc == 4 && strcmp(argv[3], "--waker") == 0;
	struct itimerspec its = { { 0, 0 }, { 0, 20000000L } };
	struct sigevent sev;
	timer_t t;

	if (argc != 3 && !waker)
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGCONT;
	if (waker && timer_create(CLOCK_MONOTONIC, &sev, &t) < 0)
		return 1;
	end = now_ms() + atoll(argv[2]) * 1000;
	do {
		if (waker)
			(void)timer_settime(t, 0, &its, NULL);
		sweep(getuid(), mysid, getenv("SSE_DAEMON_TOKEN"));
		usleep(waker ? 5000 : 50000);
	} while (now_ms() < end);
	return 0;
}

static void
beat_loop(int fd)
{
	for (;;) {
		char line[32];
		int n = snprintf(line, sizeof(line), "%lld\n", now_ms());

		(void)!pwrite(fd, line, (size_t)n, 0);
		usleep(200000);
	}
}

static int
cmd_heartbeat(int argc, char **argv)
{
	int daemonize = 0, ignore = 0, i = 2, fd;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--daemon") == 0)
			daemonize = 1;
		else if (strcmp(argv[i], "--ignore") == 0)
			ignore = 1;
	}
	if (i != argc - 1)
		return 2;
	/* Kept open: after the archive is given back to root, a survivor could still write. */
	fd = open(argv[i], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return 1;
	if (ignore) {
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGINT, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		signal(SIGUSR1, SIG_IGN);
	}
	if (daemonize) {
		pid_t p = fork();

		if (p != 0)
			return p > 0 ? 0 : 1;
		setsid();
		if (fork() != 0)
			_exit(0);
		(void)!chdir("/");
		int nul = open("/dev/null", O_RDWR);

		dup2(nul, 0);
		dup2(nul, 1);
		dup2(nul, 2);
		prctl(PR_SET_NAME, "kworker/0:1", 0, 0, 0);
	}
	beat_loop(fd);
	return 0;
}

/*
 * Fill the pids limit: every process forks whenever it can (each child in a session of its
 * own), so that whatever the harness frees is taken again. One sentinel writes a heartbeat.
 * The parent returns after SECONDS with what it saw.
 */
static int
cmd_forkbomb(int argc, char **argv)
{
	long long end;
	int fd, made = 0, eagain = 0;
	pid_t sentinel;

	if (argc != 4)
		return 2;
	fd = open(argv[3], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return 1;
	sentinel = fork();
	if (sentinel == 0) {
		setsid();
		beat_loop(fd);
	}
	close(fd);
	end = now_ms() + atoll(argv[2]) * 1000;
	while (now_ms() < end) {
		pid_t p = fork();

		if (p == 0) {
			setsid();
			for (;;) {
				pid_t q = fork();

				if (q == 0) {
					setsid();
					continue;
				}
				usleep(q > 0 ? 1000 : 300000);
			}
		}
		if (p > 0)
			made++;
		else if (errno == EAGAIN)
			eagain++;
		usleep(p > 0 ? 1000 : 100000);
	}
	printf("made %d eagain %d sentinel %d\n", made, eagain, (int)sentinel);
	return 0;
}

/* VFS_CAP_REVISION_2 data for cap_dac_read_search, cap_dac_override, cap_setuid,
 * cap_sys_ptrace, effective. */
static int
cmd_setcap(int argc, char **argv)
{
	struct {
		uint32_t magic;
		struct {
			uint32_t permitted, inheritable;
		} data[2];
	} cap;
	uint64_t bits = (1ULL << 1) | (1ULL << 2) | (1ULL << 7) | (1ULL << 19);

	if (argc != 3)
		return 2;
	memset(&cap, 0, sizeof(cap));
	cap.magic = 0x02000000 | 0x000001; /* VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE */
	cap.data[0].permitted = (uint32_t)bits;
	cap.data[1].permitted = (uint32_t)(bits >> 32);
	if (setxattr(argv[2], "security.capability", &cap, sizeof(cap), 0) < 0) {
		perror("setxattr");
		return 1;
	}
	return 0;
}

/*
 * The page cache as a channel (tests/integrity/README.md, "What a check on hidden material
 * still tells the agent"): a process that can read a file marks pages of it by reading them,
 * and another that can read the same file (the same inode) tells a cached page from one that
 * is not by how long reading it takes (microseconds against the disk's tens or hundreds:
 * preadv2's RWF_NOWAIT would say it outright, but overlayfs refuses it). Readahead is turned off on both sides
 * (POSIX_FADV_RANDOM), so a read caches the one page it asks for.
 */
#define PC_PAGE 4096

static int
pc_open(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		printf("error:%s\n", ename(errno));
	else
		(void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	return fd;
}

static int
cmd_pcache(int argc, char **argv)
{
	unsigned char buf[1];
	int fd;

	if (argc < 4)
		return 2;
	if ((fd = pc_open(argv[3])) < 0)
		return 1;
	if (strcmp(argv[2], "drop") == 0) {
		int e = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);

		printf("%s\n", e == 0 ? "dropped" : ename(e));
		return e == 0 ? 0 : 1;
	}
	if (strcmp(argv[2], "send") == 0 && argc == 6) {
		unsigned char data[256];
		long n = strtol(argv[5], NULL, 10);
		int dfd = open(argv[4], O_RDONLY | O_CLOEXEC);
		ssize_t got = dfd >= 0 ? read(dfd, data, sizeof(data)) : -1;

		if (got < 0 || n <= 0 || n > got) {
			printf("error:data\n");
			return 1;
		}
		for (long k = 0; k < n * 8; k++) {
			int bit = (data[k / 8] >> (7 - k % 8)) & 1;

			if (pread(fd, buf, 1, (off_t)(2 * k + (bit ? 0 : 1)) * PC_PAGE) != 1) {
				printf("error:pread:%s\n", ename(errno));
				return 1;
			}
		}
		printf("sent %ld bytes\n", n);
		return 0;
	}
	if (strcmp(argv[2], "recv") == 0 && argc == 5) {
		long n = strtol(argv[4], NULL, 10), valid = 0;
		unsigned char out[256];

		if (n <= 0 || n > (long)sizeof(out))
			return 2;
		memset(out, 0, sizeof(out));
		for (long k = 0; k < n * 8; k++) {
			long long t[2];

			for (int j = 0; j < 2; j++) {
				struct timespec a, b;

				clock_gettime(CLOCK_MONOTONIC, &a);
				if (pread(fd, buf, 1, (off_t)(2 * k + j) * PC_PAGE) != 1) {
					printf("error:pread:%s\n", ename(errno));
					return 1;
				}
				clock_gettime(CLOCK_MONOTONIC, &b);
				t[j] = (b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
			}
			if (t[1] >= 5 * t[0])
				out[k / 8] |= (unsigned char)(1 << (7 - k % 8));
			if (t[1] >= 5 * t[0] || t[0] >= 5 * t[1])
				valid++;
		}
		printf("pairs %ld/%ld bytes ", valid, n * 8);
		for (long i = 0; i < n; i++)
			printf("%02x", out[i]);
		printf("\n");
		return 0;
	}
	return 2;
}

/*
 * /proc's cache of looked-up names as a channel: a lookup of /proc/<pid>/<entry> makes a
 * cached name that stays while the process lives, and a second lookup is faster. The
 * check's code marks entries of the agent's sleeping processes, the agent times its first
 * lookups after. The daemon looks up every name before the agent goes on.
 */
static const char *const dc_names[] = { "environ", "auxv", "wchan" };

static int
dc_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static int
cmd_dcache(int argc, char **argv)
{
	static int pids[4096];
	static long long t[4096];
	unsigned char data[256];
	int n = 0, nb;
	char path[128];
	struct stat st;

	if (argc == 5 && strcmp(argv[2], "spawn") == 0) {
		int k = atoi(argv[3]);
		FILE *f = fopen(argv[4], "w");

		if (f == NULL || k <= 0 || k > 4096)
			return 2;
		for (int i = 0; i < k; i++) {
			pid_t p = fork();

			if (p == 0) {
				prctl(PR_SET_NAME, "sse-dc-sleep");
				setsid();
				for (;;)
					pause();
			}
			fprintf(f, "%d\n", (int)p);
		}
		return fclose(f) == 0 ? 0 : 1;
	}
	if (argc == 5 && strcmp(argv[2], "mark") == 0) {
		FILE *f = fopen(argv[3], "r");
		DIR *d = opendir("/proc");
		struct dirent *e;

		nb = atoi(argv[4]);
		if (f == NULL || d == NULL || nb <= 0 || nb > 256 || fread(data, 1, (size_t)nb, f) != (size_t)nb)
			return 1;
		fclose(f);
		while ((e = readdir(d)) != NULL && n < 4096) {
			char c[32] = "";
			FILE *cf;
			int pid = atoi(e->d_name);

			if (pid <= 0)
				continue;
			snprintf(path, sizeof(path), "/proc/%d/comm", pid);
			if ((cf = fopen(path, "r")) == NULL)
				continue;
			if (fgets(c, sizeof(c), cf) != NULL && strcmp(c, "sse-dc-sleep\n") == 0)
				pids[n++] = pid;
			fclose(cf);
		}
		closedir(d);
		qsort(pids, (size_t)n, sizeof(int), dc_cmp);
		for (int k = 0; k < nb * 8 && 2 * k + 1 < n; k++) {
			int bit = (data[k / 8] >> (7 - k % 8)) & 1;

			for (size_t j = 0; j < sizeof(dc_names) / sizeof(dc_names[0]); j++) {
				snprintf(path, sizeof(path), "/proc/%d/%s", pids[2 * k + (bit ? 0 : 1)],
				    dc_names[j]);
				(void)stat(path, &st);
			}
		}
		printf("marked %d bits over %d processes\n", nb * 8, n);
		return 0;
	}
	if (argc == 6 && strcmp(argv[2], "read") == 0) {
		FILE *f = fopen(argv[3], "r"), *df = fopen(argv[4], "r");
		int agree = 0, bits;

		nb = atoi(argv[5]);
		if (f == NULL || df == NULL || nb <= 0 || nb > 256 ||
		    fread(data, 1, (size_t)nb, df) != (size_t)nb)
			return 1;
		while (n < 4096 && fscanf(f, "%d", &pids[n]) == 1)
			n++;
		qsort(pids, (size_t)n, sizeof(int), dc_cmp);
		for (int k = 0; k < n; k++) {
			t[k] = 0;
			for (size_t j = 0; j < sizeof(dc_names) / sizeof(dc_names[0]); j++) {
				struct timespec a, b;

				snprintf(path, sizeof(path), "/proc/%d/%s", pids[k], dc_names[j]);
				clock_gettime(CLOCK_MONOTONIC, &a);
				(void)stat(path, &st);
				clock_gettime(CLOCK_MONOTONIC, &b);
				t[k] += (b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
			}
		}
		bits = nb * 8 < n / 2 ? nb * 8 : n / 2;
		for (int k = 0; k < bits; k++) {
			int want = (data[k / 8] >> (7 - k % 8)) & 1;

			agree += (t[2 * k] < t[2 * k + 1]) == want;
		}
		printf("agree %d/%d\n", agree, bits);
		return 0;
	}
	return 2;
}

/* Names that do not exist, looked up: a file system that keeps the failure (ext4) answers a
 * second lookup faster. The check marks, a later build (whose output the agent sees) reads. */
static int
cmd_names(int argc, char **argv)
{
	unsigned char data[256];
	char path[512];
	struct stat st;
	int nb;

	if (argc == 6 && strcmp(argv[2], "mark") == 0) {
		FILE *f = fopen(argv[4], "r");

		nb = atoi(argv[5]);
		if (f == NULL || nb <= 0 || nb > 256 || fread(data, 1, (size_t)nb, f) != (size_t)nb)
			return 1;
		fclose(f);
		for (int k = 0; k < nb * 8; k++) {
			int bit = (data[k / 8] >> (7 - k % 8)) & 1;

			for (int r = 0; r < 3; r++) {
				snprintf(path, sizeof(path), "%s/sse-nm-%d-%d-%d", argv[3], k, bit, r);
				(void)stat(path, &st);
			}
		}
		printf("marked %d bits\n", nb * 8);
		return 0;
	}
	if (argc == 5 && strcmp(argv[2], "read") == 0) {
		unsigned char out[256];

		nb = atoi(argv[4]);
		if (nb <= 0 || nb > 256)
			return 2;
		memset(out, 0, sizeof(out));
		for (int k = 0; k < nb * 8; k++) {
			long long t[2] = { 0, 0 };

			for (int b = 0; b < 2; b++)
				for (int r = 0; r < 3; r++) {
					struct timespec x, y;

					snprintf(path, sizeof(path), "%s/sse-nm-%d-%d-%d", argv[3], k, b, r);
					clock_gettime(CLOCK_MONOTONIC, &x);
					(void)stat(path, &st);
					clock_gettime(CLOCK_MONOTONIC, &y);
					t[b] += (y.tv_sec - x.tv_sec) * 1000000000LL + (y.tv_nsec - x.tv_nsec);
				}
			if (t[1] < t[0])
				out[k / 8] |= (unsigned char)(1 << (7 - k % 8));
		}
		printf("bytes ");
		for (int i = 0; i < nb; i++)
			printf("%02x", out[i]);
		printf("\n");
		return 0;
	}
	return 2;
}

static int
cmd_agree(int argc, char **argv)
{
	unsigned char data[256];
	FILE *f;
	int nb, agree = 0;

	if (argc != 5)
		return 2;
	nb = atoi(argv[4]);
	f = fopen(argv[3], "r");
	if (f == NULL || nb <= 0 || nb > 256 || fread(data, 1, (size_t)nb, f) != (size_t)nb ||
	    strlen(argv[2]) < (size_t)nb * 2)
		return 1;
	fclose(f);
	for (int i = 0; i < nb; i++) {
		unsigned v = 0;

		if (sscanf(argv[2] + 2 * i, "%2x", &v) != 1)
			return 1;
		for (int b = 0; b < 8; b++)
			agree += ((v >> b) & 1) == ((data[i] >> b) & 1u);
	}
	printf("agree %d/%d\n", agree, nb * 8);
	return 0;
}

/*
 * ofdlock FILE: take an open-file-description lock on one byte of FILE, at an offset that
 * could carry 7 bytes of anything; /proc/locks lists such locks to every container.
 * Prints "ok" or "refused <errno>".
 */
static int
cmd_ofdlock(int argc, char **argv)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
		.l_start = 0x0053534542454e43LL, .l_len = 1 };
	int fd;

	if (argc != 3)
		return 2;
	fd = open(argv[2], O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		printf("refused open:%d\n", errno);
		return 0;
	}
	if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
		printf("ok\n");
	else
		printf("refused %s\n", errno == EINVAL ? "EINVAL" : errno == EPERM ? "EPERM" : "other");
	close(fd);
	unlink(argv[2]);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	if (strcmp(argv[1], "connect") == 0)
		return cmd_connect(argc, argv);
	if (strcmp(argv[1], "scan") == 0)
		return cmd_scan(argc, argv);
	if (strcmp(argv[1], "unix") == 0)
		return cmd_unix(argc, argv);
	if (strcmp(argv[1], "bind") == 0)
		return cmd_bind(argc, argv);
	if (strcmp(argv[1], "ptrace") == 0)
		return cmd_ptrace(argc, argv);
	if (strcmp(argv[1], "signal") == 0)
		return cmd_signal(argc, argv);
	if (strcmp(argv[1], "ids") == 0)
		return cmd_ids(argc, argv);
	if (strcmp(argv[1], "fds") == 0)
		return cmd_fds();
	if (strcmp(argv[1], "rlimit") == 0)
		return cmd_rlimit();
	if (strcmp(argv[1], "userns") == 0)
		return cmd_userns();
	if (strcmp(argv[1], "procwatch") == 0)
		return cmd_procwatch(argc, argv);
	if (strcmp(argv[1], "heartbeat") == 0)
		return cmd_heartbeat(argc, argv);
	if (strcmp(argv[1], "forkbomb") == 0)
		return cmd_forkbomb(argc, argv);
	if (strcmp(argv[1], "setcap") == 0)
		return cmd_setcap(argc, argv);
	if (strcmp(argv[1], "pcache") == 0)
		return cmd_pcache(argc, argv);
	if (strcmp(argv[1], "dcache") == 0)
		return cmd_dcache(argc, argv);
	if (strcmp(argv[1], "names") == 0)
		return cmd_names(argc, argv);
	if (strcmp(argv[1], "ofdlock") == 0)
		return cmd_ofdlock(argc, argv);
	if (strcmp(argv[1], "agree") == 0)
		return cmd_agree(argc, argv);
	return 2;
}

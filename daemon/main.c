/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c: ssebench-daemon start-up.
 *
 * Order matters: (1) configuration, with an invalid difficulty refused (exit 2); (2) the
 * file system prepared and the git baseline recorded, before any listener exists, because
 * the entrypoint starts the agent as soon as the socket appears; (3) the three listeners
 * bound by root; (4) the two fronts forked and dropped to their users; (5) the helper loop.
 */
#include "config.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <libgen.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "sb/exit.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/proc.h"
#include "sb/startup.h"

#include "daemon.h"
#include "work.h"

static void
usage(FILE *out)
{
	fprintf(out, "usage: ssebench-daemon [--task-permissions] [--version] [--help]\n"
		     "\n"
		     "Serves the task in $SSE_BENCH_PATH to the agent and the grader. Configured\n"
		     "by environment variables only (docs/daemon.md). --task-permissions gives the\n"
		     "task files the owners and modes a run needs, and exits (image build).\n");
}

/*
 * The directory of a Unix socket must be what we expect before we bind in it
 * (docs/design.md, "Sockets"): for the admin socket, a root-owned directory nobody else may enter
 * (created 0700 if missing); for the agent socket, a root-owned directory, or a sticky one like
 * /tmp, so that nobody else can move or replace the socket once it exists.
 */
static int
check_socket_dir(const char *sock, bool private, struct sb_error **err)
{
	_cleanup_free_ char *copy = sb_xstrdup(sock);
	const char *dir = dirname(copy);
	struct stat st;

	if (private && mkdir(dir, 0700) < 0 && errno != EEXIST)
		return sb_error_errno(err, errno, "mkdir '%s'", dir);
	if (lstat(dir, &st) < 0)
		return sb_error_errno(err, errno, "lstat '%s'", dir);
	if (!S_ISDIR(st.st_mode))
		return sb_error_set(err, ENOTDIR, "'%s' is not a directory", dir);
	if (st.st_uid != 0)
		return sb_error_set(err, EPERM, "'%s' is not owned by root", dir);
	if (private && (st.st_mode & 07777) != 0700)
		return sb_error_set(err, EPERM, "'%s' has mode %04o, not 0700", dir,
		    (unsigned)(st.st_mode & 07777));
	if (!private && (st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
		return sb_error_set(err, EPERM, "'%s' is world-writable without the sticky bit", dir);
	return 0;
}

static int
bind_unix(const char *path, mode_t mode, bool private, struct sb_error **err)
{
	struct sockaddr_un sa;
	struct stat st;
	mode_t old;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return sb_error_set(err, ENAMETOOLONG, "socket path '%s' is too long", path);
	if (check_socket_dir(path, private, err) < 0)
		return -1;
	/* Whatever is at the path now (a stale socket, or something planted) goes. */
	if (lstat(path, &st) == 0 && unlink(path) < 0)
		return sb_error_errno(err, errno, "remove old '%s'", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return sb_error_errno(err, errno, "socket");
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path));
	/* The umask gives the socket its mode at creation: no window with a wider one. */
	old = umask(0777 & ~mode);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		umask(old);
		sb_error_errno(err, errno, "bind '%s'", path);
		close(fd);
		return -1;
	}
	umask(old);
	if (chmod(path, mode) < 0 || chown(path, 0, 0) < 0 || listen(fd, 128) < 0) {
		sb_error_errno(err, errno, "listen on '%s'", path);
		close(fd);
		return -1;
	}
	return fd;
}

static int
bind_tcp(unsigned port, struct sb_error **err)
{
	struct sockaddr_in sa;
	int fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return sb_error_errno(err, errno, "socket");
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_ANY);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 128) < 0) {
		sb_error_errno(err, errno, "listen on port %u", port);
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The fronts parse whatever clients send (HTTP, JSON): the filter untrusted code gets goes
 * on them too, after their privilege drop, so that a bug in a parser runs in a process
 * that can make no namespace, mount nothing and reach no other process's memory.
 */
static struct sb_seccomp *front_filter;

/* Fork a front; it drops to creds (uid 0 creds: capabilities only) and serves. */
static pid_t
start_front(struct dconf *c, const struct sb_creds *creds, const struct front_listener *ls,
    size_t n, int channel, int *close_fds, size_t nclose)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	for (size_t i = 0; i < nclose; i++)
		if (close_fds[i] >= 0)
			close(close_fds[i]);
	/* If the helper dies, so does the front (set again after the drop, which clears it). */
	{
		const char *step;

		if (sb_priv_drop(creds, &step) < 0) {
			sb_log_errno(SB_LOG_ERROR, errno, "front: drop privileges (%s)", step);
			_exit(1);
		}
		if (sb_seccomp_install(front_filter) < 0) {
			sb_log_errno(SB_LOG_ERROR, errno, "front: seccomp filter");
			_exit(1);
		}
	}
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() == 1)
		_exit(1);
	_exit(front_run(c, ls, n, channel));
}

/* Log err's message and drop it; returns -1, for a step that stops the start-up. */
static int
log_error(struct sb_error **err)
{
	sb_log(SB_LOG_ERROR, "%s", sb_error_message(*err));
	sb_error_release(err);
	return -1;
}

/* --task-permissions: give the task files their owners and modes (image build), and exit. */
static int
task_permissions(struct dconf *c)
{
	struct sb_error *err = NULL;
	struct helper h;
	int rc;

	memset(&h, 0, sizeof(h));
	h.c = c;
	h.bench_fd = -1;
	rc = work_task_permissions(&h, &err) < 0 ? SB_EXIT_FAILURE : 0;
	if (rc != 0)
		log_error(&err);
	if (h.bench_fd >= 0)
		close(h.bench_fd);
	return rc;
}

/*
 * The three listeners, bound by root before anything drops privileges: the admin socket, the
 * agent socket and, with a token, TCP. Returns -1 (err) if one that must exist cannot.
 */
static int
bind_listeners(const struct dconf *c, struct front_listener admin_ls[1],
    struct front_listener agent_ls[2], size_t *ret_nagent, struct sb_error **err)
{
	size_t nagent = 0;

	admin_ls[0].kind = LISTEN_ADMIN;
	admin_ls[0].fd = bind_unix(c->admin_socket, 0600, true, err);
	if (admin_ls[0].fd >= 0) {
		agent_ls[nagent].kind = LISTEN_AGENT_UNIX;
		agent_ls[nagent].fd = bind_unix(c->agent_socket, 0666, false, err);
		if (agent_ls[nagent].fd >= 0)
			nagent++;
	}
	if (admin_ls[0].fd < 0 || nagent == 0)
		return -1;
	if (c->http_port != 0 && c->token != NULL) {
		agent_ls[nagent].kind = LISTEN_AGENT_TCP;
		agent_ls[nagent].fd = bind_tcp(c->http_port, err);
		if (agent_ls[nagent].fd < 0)
			return -1;
		nagent++;
	} else if (c->http_port != 0) {
		/* Without a token nobody could be told apart on TCP: no TCP at all. */
		sb_log(SB_LOG_WARN, "SSE_DAEMON_TOKEN is not set: no TCP listener on port %u",
		    c->http_port);
	}
	*ret_nagent = nagent;
	return 0;
}

/* Stop everything this daemon started: the fronts, and whatever runs as the runner. */
static void
stop_children(const struct helper *h, const struct dconf *c)
{
	for (int i = 0; i < 2; i++)
		if (h->front_pids[i] > 0)
			kill(h->front_pids[i], SIGTERM);
	(void)sb_proc_kill_uid(c->runner.uid, c->runner.gid, 5, NULL);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/*
 * From the helper's start-up to its loop, main is the daemon's privilege separation in order
 * (prepare as root, bind as root, fork each front with its own credentials and only its own
 * descriptors, then close root's copies), and each step's descriptors are the next step's
 * close lists: the forks and their close lists stay here, read as one, so that a missed
 * close or a step out of order shows.
 */
int
main(int argc, char **argv)
{
	struct front_listener agent_ls[2], admin_ls[1];
	size_t nagent = 0;
	int agent_ch[2], admin_ch[2];
	struct sb_error *err = NULL;
	struct helper h;
	struct dconf c;
	struct sb_creds admin_creds;
	int rc;

	sb_log_init("ssebench-daemon", SB_LOG_INFO, SB_LOG_LEVELS | SB_LOG_TIMESTAMPS);
	rc = sb_startup_options(argc, argv, "ssebench-daemon", usage, "--task-permissions",
	    SB_STARTUP_OPTIONS_SHORT_VERSION);
	if (rc >= 0)
		return rc;
	if (secure_getenv("SSE_DEBUG") != NULL)
		sb_log_set_level(SB_LOG_DEBUG);
	if (dconf_load(&c, &err) < 0) {
		/* An invalid difficulty stops the daemon with status 2 (upstream contract). */
		rc = sb_error_code(err) == EDOM ? SB_EXIT_USAGE : SB_EXIT_FAILURE;
		log_error(&err);
		return rc;
	}
	if (geteuid() != 0) {
		sb_log(SB_LOG_ERROR, "must run as root: it separates the agent, the runner and "
				     "itself by uid");
		return SB_EXIT_FAILURE;
	}
	if (argc == 2)
		return task_permissions(&c);
	sb_log(SB_LOG_INFO, "task '%s', difficulty %u, source '%s'", c.task->id.s, c.difficulty,
	    c.source);
	if (helper_init(&h, &c, &err) < 0 || bind_listeners(&c, admin_ls, agent_ls, &nagent, &err) < 0 ||
	    sb_seccomp_compile(SB_SECCOMP_UNTRUSTED, &front_filter, &err) < 0) {
		log_error(&err);
		return SB_EXIT_FAILURE;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, agent_ch) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, admin_ch) < 0) {
		sb_log_errno(SB_LOG_ERROR, errno, "socketpair");
		return SB_EXIT_FAILURE;
	}
	/* The agent front: its own unprivileged uid, only the agent-facing listeners. */
	{
		int close_fds[] = { admin_ls[0].fd, agent_ch[0], admin_ch[0], admin_ch[1],
			h.bench_fd, h.results_fd, h.runner_fd, h.state_fd, h.freezer.fd };

		h.front_pids[DCH_AGENT] = start_front(&c, &c.front, agent_ls, nagent, agent_ch[1],
		    close_fds, SB_ARRAY_SIZE(close_fds));
	}
	/* The admin front: root (so it can serve root's clients on a 0600 socket) without
	 * capabilities or the ability to gain any. */
	memset(&admin_creds, 0, sizeof(admin_creds));
	{
		int close_fds[] = { agent_ls[0].fd, nagent > 1 ? agent_ls[1].fd : -1, admin_ch[0],
			agent_ch[0], agent_ch[1], h.bench_fd, h.results_fd, h.runner_fd, h.state_fd,
			h.freezer.fd };

		h.front_pids[DCH_ADMIN] = start_front(&c, &admin_creds, admin_ls, 1, admin_ch[1],
		    close_fds, SB_ARRAY_SIZE(close_fds));
	}
	if (h.front_pids[DCH_AGENT] < 0 || h.front_pids[DCH_ADMIN] < 0) {
		sb_log_errno(SB_LOG_ERROR, errno, "fork a front");
		return SB_EXIT_FAILURE;
	}
	for (size_t i = 0; i < nagent; i++)
		close(agent_ls[i].fd);
	close(admin_ls[0].fd);
	close(agent_ch[1]);
	close(admin_ch[1]);
	h.channels[DCH_AGENT] = agent_ch[0];
	h.channels[DCH_ADMIN] = admin_ch[0];
	sb_log(SB_LOG_INFO, "listening: agent socket '%s', admin socket '%s'%s", c.agent_socket,
	    c.admin_socket, nagent > 1 ? ", TCP" : "");
	rc = helper_loop(&h);
	stop_children(&h, &c);
	return rc;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * supervise.c: the entrypoint's children and signals (docs/design.md, "Starting processes",
 * "Dropping privileges" and "Signals").
 *
 * As PID 1 (or, in tests, as a subreaper) we inherit every orphan of the container, so one
 * loop reaps every zombie, ours or not, as soon as SIGCHLD says there is one. SIGTERM,
 * SIGINT, SIGHUP and SIGCHLD are blocked from the start and read from a signalfd: no
 * handler runs at an awkward moment, and a signal that arrives between two checks waits in
 * the descriptor instead of being lost. Every child goes through sb_cmd with an argv vector
 * and an explicit environment; the agent gets the agent user's credentials (no groups, no
 * capabilities, no_new_privs, the untrusted seccomp filter, no core dumps) in a session of
 * its own, and everything of its uid is killed when its phase ends.
 */
#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "sb/exit.h"
#include "sb/fs.h"
#include "sb/http.h"
#include "sb/limits.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/path.h"
#include "sb/proc.h"
#include "sb/sig.h"
#include "sb/spawn.h"

#include "entrypoint.h"

extern char **environ;

#define DAEMON_POLL_MS	    100	 /* between two looks at the daemon's sockets */
#define DAEMON_PROBE_MS	    1000 /* one GET /version */
#define ADMIN_CALL_MS	    5000 /* POST /admin/agent_exited (upstream: 5 s) */
#define ADMIN_TRIES	    10	 /* ... up to 10 tries (upstream) */
#define ADMIN_RETRY_MS	    500	 /* ... 500 ms apart (upstream) */
#define DAEMON_LOG_TAIL	    50	 /* lines of daemon.log shown when it does not start */
#define DAEMON_LOG_TAIL_MAX (64 * 1024)
#define REPLY_MAX	    (64 * 1024)

static const char default_path[] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

int
ep_supervise_init(struct ep *ep, struct sb_error **err)
{
	sigset_t set;

	/*
	 * A subreaper gets the orphans of its descendants, as PID 1 does: outside a container
	 * (tests) a daemonised agent process still comes back to us to be reaped.
	 */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		return sb_error_errno(err, errno, "PR_SET_CHILD_SUBREAPER");
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return sb_error_errno(err, errno, "sigprocmask");
	ep->sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (ep->sfd < 0)
		return sb_error_errno(err, errno, "signalfd");
	/* A closed stdout must not kill PID 1 in the middle of a log line. Children get every
	 * disposition back to the default in sb_cmd. */
	(void)signal(SIGPIPE, SIG_IGN);
	return 0;
}

static struct ep_child *
child_by_pid(struct ep *ep, pid_t pid)
{
	struct ep_child *all[] = { &ep->daemon, &ep->agent, &ep->evaluator, &ep->mcp };

	for (size_t i = 0; i < SB_ARRAY_SIZE(all); i++)
		if (all[i]->pid == pid && !all[i]->exited)
			return all[i];
	return NULL;
}

/* Reap every child that has exited: ours are recorded, orphans just go. */
static void
reap(struct ep *ep)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		struct ep_child *c = child_by_pid(ep, pid);

		if (c == NULL) {
			ep_log(SB_LOG_DEBUG, "reaped process %d", (int)pid);
			continue;
		}
		c->exited = true;
		c->end_ms = sb_now_ms();
		c->status = WIFSIGNALED(status) ? SB_EXIT_SIGNAL_BASE + WTERMSIG(status)
						: WEXITSTATUS(status);
	}
	/* The daemon should outlive the agent phase and grading; say so if it did not. */
	if (ep->daemon.exited && !ep->daemon.reported) {
		ep->daemon.reported = true;
		ep_log(ep->stopping ? SB_LOG_INFO : SB_LOG_WARN,
		    "daemon (pid %d) exited with status %d after %.1f s", (int)ep->daemon.pid,
		    ep->daemon.status, (double)(ep->daemon.end_ms - ep->daemon.start_ms) / 1000.0);
	}
}

static void
drain_signals(struct ep *ep)
{
	struct signalfd_siginfo si;

	while (read(ep->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		int sig = (int)si.ssi_signo;

		switch (sig) {
		case SIGCHLD:
			break; /* reap() follows */
		case SIGTERM:
		case SIGINT:
			if (ep->stop_signal == 0) {
				ep->stop_signal = sig;
				ep_log(SB_LOG_INFO, "received %s from pid %u: stopping",
				    sb_sig_name(sig), (unsigned)si.ssi_pid);
			} else {
				ep_log(SB_LOG_INFO, "received %s again: already stopping",
				    sb_sig_name(sig));
			}
			break;
		default:
			/* SIGHUP: PID 1 has no terminal to lose; a hang-up is no stop request. */
			ep_log(SB_LOG_INFO, "received %s, ignoring", sb_sig_name(sig));
			break;
		}
	}
}

/* Write all of buf to fd (a log file); a failure is the log's loss, not ours. */
static void
write_all(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, buf, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		buf += w;
		n -= (size_t)w;
	}
}

/* Move what the pipe holds into the log, up to the cap; at its end, say what was left out. */
static void
pump_run(struct ep_pump *p)
{
	char buf[65536];

	while (p->in >= 0) {
		ssize_t n = read(p->in, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return; /* EAGAIN: nothing more for now */
		if (n == 0) {
			close(p->in);
			p->in = -1;
			if (p->dropped > 0) {
				char note[160];
				int len = snprintf(note, sizeof(note),
				    "\n[ssebench: %s stops at %llu bytes; %llu more bytes were left out]\n",
				    p->name, (unsigned long long)p->cap, (unsigned long long)p->dropped);

				write_all(p->out, note, (size_t)len);
			}
			return;
		}
		if (p->written < p->cap) {
			size_t keep = (uint64_t)n < p->cap - p->written ? (size_t)n
									: (size_t)(p->cap - p->written);

			write_all(p->out, buf, keep);
			p->written += keep;
			p->dropped += (uint64_t)n - keep;
		} else {
			p->dropped += (uint64_t)n;
		}
	}
}

int
ep_pump_start(struct ep *ep, size_t i, int log_fd, const char *name, int *ret_write_end,
    struct sb_error **err)
{
	int fds[2];

	if (pipe2(fds, O_CLOEXEC) < 0)
		return sb_error_errno(err, errno, "pipe for %s", name);
	if (fcntl(fds[0], F_SETFL, O_NONBLOCK) < 0) {
		close(fds[0]);
		close(fds[1]);
		return sb_error_errno(err, errno, "pipe for %s", name);
	}
	ep->pumps[i] = (struct ep_pump){ .in = fds[0], .out = log_fd, .cap = ep->cfg.agent_log_max,
		.name = name };
	*ret_write_end = fds[1];
	return 0;
}

void
ep_pumps_drain(struct ep *ep)
{
	for (size_t i = 0; i < SB_ARRAY_SIZE(ep->pumps); i++) {
		struct ep_pump *p = &ep->pumps[i];

		pump_run(p);
		/* Whoever still holds the write end (nobody should, by now) loses it. */
		if (p->in >= 0) {
			close(p->in);
			p->in = -1;
		}
	}
}

void
ep_wait(struct ep *ep, uint64_t deadline_ms)
{
	struct pollfd p[1 + SB_ARRAY_SIZE(ep->pumps)];
	uint64_t now = sb_now_ms();
	nfds_t n = 1;
	int timeout;

	reap(ep);
	if (deadline_ms == UINT64_MAX)
		timeout = -1;
	else if (deadline_ms <= now)
		timeout = 0;
	else
		timeout = deadline_ms - now > INT_MAX ? INT_MAX : (int)(deadline_ms - now);
	p[0] = (struct pollfd){ ep->sfd, POLLIN, 0 };
	for (size_t i = 0; i < SB_ARRAY_SIZE(ep->pumps); i++)
		if (ep->pumps[i].in >= 0)
			p[n++] = (struct pollfd){ ep->pumps[i].in, POLLIN, 0 };
	if (poll(p, n, timeout) > 0) {
		if (p[0].revents != 0)
			drain_signals(ep);
		for (size_t i = 0; i < SB_ARRAY_SIZE(ep->pumps); i++)
			if (ep->pumps[i].in >= 0)
				pump_run(&ep->pumps[i]);
	}
	reap(ep);
}

/* Wait (reaping, noting signals) until c has exited or deadline_ms has passed. */
static void
wait_child_until(struct ep *ep, struct ep_child *c, uint64_t deadline_ms)
{
	while (c->pid > 0 && !c->exited && sb_now_ms() < deadline_ms)
		ep_wait(ep, deadline_ms);
}

bool
ep_child_running(const struct ep_child *c)
{
	return c->pid > 0 && !c->exited;
}

/* A copy of our own environment without the names listed in drop (NULL-terminated). */
static void
env_inherit(struct sb_argv *env, const char *const *drop)
{
	for (char **e = environ; e != NULL && *e != NULL; e++) {
		const char *eq = strchr(*e, '=');
		bool skip = eq == NULL;

		for (const char *const *d = drop; !skip && d != NULL && *d != NULL; d++)
			skip = strlen(*d) == (size_t)(eq - *e) && strncmp(*e, *d, strlen(*d)) == 0;
		if (!skip)
			sb_argv_push(env, *e);
	}
}

/* Add every NAME=value of src to env, replacing what env had under NAME. */
static void
env_merge(struct sb_argv *env, const struct sb_argv *src)
{
	for (size_t i = 0; i < src->n; i++) {
		const char *eq = strchr(src->v[i], '=');
		_cleanup_free_ char *name = NULL;

		if (eq == NULL)
			continue;
		name = sb_xstrndup(src->v[i], (size_t)(eq - src->v[i]));
		sb_env_set(env, name, eq + 1);
	}
}

static int
start_child(struct ep_child *ch, struct sb_cmd *cmd, struct sb_error **err)
{
	uint64_t start = sb_now_ms();

	if (sb_cmd_start(cmd, err) < 0)
		return -1;
	/* We learn of exits from SIGCHLD and reap with waitpid(-1): no pidfd needed. */
	cmd->pidfd = sb_close(cmd->pidfd);
	ch->pid = cmd->pid;
	ch->exited = ch->reported = false;
	ch->status = 0;
	ch->start_ms = start;
	ch->end_ms = 0;
	return 0;
}

/*
 * A child of ours that runs as root (the daemon, the evaluator): bin with no arguments, env
 * its whole environment, no stdin, stdout and stderr into log_fd, in a session of its own
 * (stop_group ends all it started) and killed if we die.
 */
static int
start_root_child(struct ep_child *ch, const char *bin, const struct sb_argv *env, int log_fd,
    struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	struct sb_cmd cmd = SB_CMD_INIT;

	sb_argv_push(&argv, bin);
	cmd.path = bin;
	cmd.argv = argv.v;
	cmd.envp = env->v;
	cmd.stdin_fd = SB_CMD_DEVNULL;
	cmd.stdout_fd = log_fd;
	cmd.flags = SB_CMD_NEW_SESSION | SB_CMD_DEATHSIG | SB_CMD_STDERR_TO_STDOUT;
	return start_child(ch, &cmd, err);
}

/*
 * Send sig to every live process of session sid. A process the daemon started may have
 * left its process group (setpgid), but not its session unless it called setsid itself;
 * those (the runner's scripts) are swept by uid.
 */
static void
signal_session(pid_t sid, int sig)
{
	pid_t self = getpid();
	struct dirent *de;
	DIR *d;

	if (sid <= 1)
		return;
	d = opendir("/proc");
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		char path[64], buf[512], state;
		int ppid, pgrp, session;
		const char *p;
		uint64_t pid;
		ssize_t n;
		int fd;

		if (sb_parse_u64(de->d_name, 2, INT_MAX, &pid, NULL) < 0 || (pid_t)pid == self)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		/* "pid (comm) state ppid pgrp session ...": comm may hold anything but ends at
		 * the last ')'. */
		p = strrchr(buf, ')');
		if (p == NULL || sscanf(p + 1, " %c %d %d %d", &state, &ppid, &pgrp, &session) != 4)
			continue;
		if (session == sid && state != 'Z')
			(void)kill((pid_t)pid, sig);
	}
	closedir(d);
}

/* SIGTERM c's process group, wait up to grace_ms, then SIGKILL it (it leads the group). */
static void
stop_group(struct ep *ep, struct ep_child *c, uint64_t grace_ms)
{
	if (!ep_child_running(c))
		return;
	(void)kill(-c->pid, SIGTERM);
	wait_child_until(ep, c, sb_now_ms() + grace_ms);
	if (ep_child_running(c)) {
		ep_log(SB_LOG_WARN, "%s (pid %d) still running after %.1f s; killing it", c->name,
		    (int)c->pid, (double)grace_ms / 1000.0);
		(void)kill(-c->pid, SIGKILL);
		wait_child_until(ep, c, sb_now_ms() + 1000);
	}
	/* Whatever it left in its group goes too. */
	(void)kill(-c->pid, SIGKILL);
}

/* Kill every process of a uid: daemonised, double-forked, new-session ones too. */
static void
kill_uid(struct ep *ep, const struct sb_creds *creds, const char *user, const char *why)
{
	struct sb_error *err = NULL;
	int n = sb_proc_count_uid(creds->uid, NULL);

	if (sb_proc_kill_uid(creds->uid, creds->gid, EP_KILL_ROUNDS, &err) < 0) {
		ep_log(SB_LOG_WARN, "%s: killing the processes of '%s': %s", why, user,
		    sb_error_message(err));
		sb_error_release(&err);
	} else if (n > 0) {
		ep_log(SB_LOG_INFO, "%s: killed %d process%s of '%s'", why, n, n == 1 ? "" : "es",
		    user);
	}
	reap(ep);
}

void
ep_kill_agent_uid(struct ep *ep, const char *why)
{
	struct sb_error *err = NULL;

	/* Through the cgroup first: frozen (a check the agent started), a v1 task ignores
	 * SIGKILL until thawed, and nothing in it forks while it is killed. */
	if (ep->freezer.fd >= 0 && sb_freezer_kill(&ep->freezer, EP_STOP_GRACE_MS, &err) < 0) {
		ep_log(SB_LOG_WARN, "%s: killing the agent's cgroup: %s", why, sb_error_message(err));
		sb_error_release(&err);
	}
	kill_uid(ep, &ep->agent_creds, ep->cfg.agent_user, why);
}

void
ep_kill_helper_uids(struct ep *ep, const char *why)
{
	/*
	 * The runner's uid: a check the agent started had its worker killed when the tools
	 * closed, and what its script left outside its process group would otherwise live on
	 * until grading's new session: long enough to watch or disturb the isolation check
	 * before grading (the daemon kills them too, when told; this is for a daemon that was
	 * not told, or not here). The MCP server's uid, not only its process group: whatever it
	 * started goes with it. Neither has anything to do between the agent phase and grading.
	 */
	if (ep->have_runner && ep->cfg.role != EP_ROLE_SIDECAR_AGENT)
		kill_uid(ep, &ep->runner_creds, ep->cfg.runner_user, why);
	if (ep->have_mcp)
		kill_uid(ep, &ep->mcp_creds, ep->cfg.mcp_user, why);
}

/* GET /version on a socket; 0 if it answered 200. */
int
ep_probe_socket(const char *sock)
{
	struct sb_http_target t = { .unix_socket = sock, .base_url = "http://localhost",
		.timeout_ms = DAEMON_PROBE_MS, .max_reply = REPLY_MAX };
	struct sb_http_reply r;
	long status;

	if (sb_http_request(&t, "GET", "/version", NULL, 0, &r, NULL) < 0)
		return -1;
	status = r.status;
	sb_http_reply_release(&r);
	return status == 200 ? 0 : -1;
}

/* The last lines of daemon.log, to our log, when the daemon did not come up. */
static void
log_daemon_tail(struct ep *ep)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	const char *start, *end;
	struct stat st;
	off_t off;
	ssize_t n;
	int lines = 0;

	fd = openat(ep->results_fd, "daemon.log", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	off = st.st_size > DAEMON_LOG_TAIL_MAX ? st.st_size - DAEMON_LOG_TAIL_MAX : 0;
	buf = sb_xmalloc(DAEMON_LOG_TAIL_MAX + 1);
	n = pread(fd, buf, DAEMON_LOG_TAIL_MAX, off);
	if (n <= 0)
		return;
	buf[n] = '\0';
	end = buf + n;
	if (end > buf && end[-1] == '\n')
		end--;
	/* Walk back over DAEMON_LOG_TAIL newlines. */
	for (start = end; start > buf; start--)
		if (start[-1] == '\n' && ++lines == DAEMON_LOG_TAIL)
			break;
	ep_log(SB_LOG_ERROR, "the last lines of daemon.log:");
	while (start < end) {
		const char *nl = memchr(start, '\n', (size_t)(end - start));
		size_t len = nl != NULL ? (size_t)(nl - start) : (size_t)(end - start);

		ep_log(SB_LOG_ERROR, "daemon.log: %.*s", (int)len, start);
		start += len + 1;
	}
}

/*
 * The daemon runs as root in a session of its own, with our environment plus its sockets,
 * the results and archive paths, the agent user and the daemon token from the secrets
 * file (not the model's key: the daemon has no use for it). It is ready when both sockets
 * answer GET /version; until then we keep checking that it is still alive.
 */
int
ep_start_daemon(struct ep *ep, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv env = SB_ARGV_INIT;
	const char *token = sb_env_get(&ep->secrets, "SSE_DAEMON_TOKEN");
	uint64_t deadline;

	env_inherit(&env, NULL);
	sb_env_set(&env, "SSE_DAEMON_SOCKET", ep->cfg.daemon_socket);
	sb_env_set(&env, "SSE_ADMIN_SOCKET", ep->cfg.admin_socket);
	sb_env_set(&env, "SSE_RESULTS", ep->cfg.results);
	sb_env_set(&env, "SSE_ARCHIVE", ep->cfg.archive);
	sb_env_set(&env, "SSE_AGENT_USER", ep->cfg.agent_user);
	if (ep->freezer.fd >= 0)
		sb_env_set(&env, "SSE_AGENT_CGROUP", ep->cfg.agent_cgroup);
	if (token != NULL)
		sb_env_set(&env, "SSE_DAEMON_TOKEN", token);
	if (start_root_child(&ep->daemon, ep->cfg.daemon_bin, &env, ep->daemon_log, err) < 0)
		return sb_error_prefix(err, "daemon");
	ep_log(SB_LOG_INFO, "daemon started: '%s' (pid %d); waiting up to %llu s for its sockets",
	    ep->cfg.daemon_bin, (int)ep->daemon.pid, (unsigned long long)ep->cfg.daemon_timeout_s);
	deadline = ep->daemon.start_ms + ep->cfg.daemon_timeout_s * 1000;
	for (;;) {
		uint64_t now;

		if (ep->stop_signal != 0)
			return sb_error_set(err, EINTR, "stopped while waiting for the daemon");
		if (ep->daemon.exited) {
			log_daemon_tail(ep);
			return sb_error_set(err, ECHILD,
			    "the daemon exited with status %d before its sockets answered",
			    ep->daemon.status);
		}
		if (ep_probe_socket(ep->cfg.daemon_socket) == 0 &&
		    ep_probe_socket(ep->cfg.admin_socket) == 0)
			break;
		now = sb_now_ms();
		if (now >= deadline) {
			log_daemon_tail(ep);
			return sb_error_set(err, ETIMEDOUT,
			    "the daemon's sockets '%s' and '%s' did not answer within %llu s",
			    ep->cfg.daemon_socket, ep->cfg.admin_socket,
			    (unsigned long long)ep->cfg.daemon_timeout_s);
		}
		ep_wait(ep, now + DAEMON_POLL_MS < deadline ? now + DAEMON_POLL_MS : deadline);
	}
	ep_log(SB_LOG_INFO, "daemon ready after %.1f s", ep_secs(ep->daemon.start_ms));
	return 0;
}

/* Does something accept TCP connections on 127.0.0.1:port? */
static bool
tcp_listening(unsigned port)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	if (fd < 0)
		return false;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

/*
 * The MCP server runs as an unprivileged user of its own (nobody), not root as upstream's:
 * it parses whatever the agent sends it, so a bug in it must not be a way to root, where
 * the task files are readable. It needs nothing root has: its checks go through the agent
 * socket (mode 0666), gated by the daemon like any other call. It gets the agent's seccomp
 * filter and no capabilities, in a session of its own; the agent cannot signal it (another
 * uid). It is started before the agent, so the agent cannot take its port first.
 */
int
ep_start_mcp(struct ep *ep, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv env = SB_ARGV_INIT;
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	static const struct sb_rlimit_set nocore = { RLIMIT_CORE, 0, 0 };
	_cleanup_close_ int root_fd = -1;
	struct sb_cmd cmd = SB_CMD_INIT;
	int log_w = -1, rc;
	struct sb_creds creds;
	uint64_t deadline;

	if (!ep->cfg.mcp) {
		ep_log(SB_LOG_INFO, "MCP server: off (SSE_MCP=0)");
		return 0;
	}
	if (sb_creds_lookup(ep->cfg.mcp_user, &creds, err) < 0)
		return sb_error_prefix(err, "the MCP server's user");
	if (creds.uid == 0 || creds.uid == ep->agent_creds.uid)
		return sb_error_set(err, EPERM,
		    "the MCP server's user '%s' must be neither root nor the agent",
		    ep->cfg.mcp_user);
	creds.ngroups = 0;
	ep->mcp_creds = creds;
	ep->have_mcp = true;
	root_fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	sb_env_set(&env, "PATH", default_path);
	sb_env_set(&env, "SSE_DAEMON_SOCKET", ep->cfg.daemon_socket);
	sb_env_set(&env, "SSE_DIFFICULTY", ep->cfg.difficulty);
	sb_env_set(&env, "SSE_MCP_ADDRESS", "127.0.0.1");
	sb_argv_pushf(&env, "SSE_MCP_PORT=%u", ep->cfg.mcp_port);
	sb_env_set(&env, "MCP_LOG_DIR", "/tmp/mcp/logs");
	sb_argv_push(&argv, ep->cfg.mcp_bin);
	cmd.path = ep->cfg.mcp_bin;
	cmd.argv = argv.v;
	cmd.envp = env.v;
	cmd.cwd_fd = root_fd;
	cmd.stdin_fd = SB_CMD_DEVNULL;
	if (ep_pump_start(ep, EP_PUMP_MCP, ep->mcp_log, "mcp.log", &log_w, err) < 0)
		return -1;
	cmd.stdout_fd = log_w;
	cmd.creds = &creds;
	cmd.seccomp = ep->seccomp;
	cmd.rlimits = &nocore;
	cmd.n_rlimits = 1;
	cmd.flags = SB_CMD_NEW_SESSION | SB_CMD_DEATHSIG | SB_CMD_STDERR_TO_STDOUT;
	rc = start_child(&ep->mcp, &cmd, err);
	close(log_w);
	if (rc < 0)
		return sb_error_prefix(err, "MCP server");
	deadline = ep->mcp.start_ms + EP_MCP_TIMEOUT_S * 1000;
	while (!tcp_listening(ep->cfg.mcp_port)) {
		if (ep->stop_signal != 0)
			return sb_error_set(err, EINTR, "stopped while waiting for the MCP server");
		if (ep->mcp.exited)
			return sb_error_set(err, ECHILD,
			    "the MCP server exited with status %d before it listened (mcp.log)",
			    ep->mcp.status);
		if (sb_now_ms() >= deadline)
			return sb_error_set(err, ETIMEDOUT,
			    "the MCP server did not listen on port %u within %d s", ep->cfg.mcp_port,
			    EP_MCP_TIMEOUT_S);
		ep_wait(ep, sb_now_ms() + DAEMON_POLL_MS);
	}
	ep_log(SB_LOG_INFO, "MCP server ready at http://127.0.0.1:%u/mcp as '%s' (pid %d) after %.1f s",
	    ep->cfg.mcp_port, ep->cfg.mcp_user, (int)ep->mcp.pid, ep_secs(ep->mcp.start_ms));
	return 0;
}

/*
 * The agent's environment: ours without what only root and the admin side may know (the
 * admin socket, the results directory, the secrets file, our programs, the daemon's private
 * state) and without identity variables, plus its own identity, the agent socket, the
 * archive, the difficulty, and the secrets (daemon token, model key, proxy URL, model).
 */
static void
agent_env(const struct ep *ep, struct sb_argv *env)
{
	static const char *const drop[] = { "SSE_ADMIN_SOCKET", "SSE_RESULTS", "SSE_SECRETS_FILE",
		"SSE_DAEMON_BIN", "SSE_EVALUATOR_BIN", "SSE_DAEMON_STATE", "SSE_RUNNER_DIR",
		"SSE_RUNNER_ROOT", "SSE_REPO_PATH", "SSE_AGENT_CGROUP", "HOME", "USER", "LOGNAME", "PWD", "OLDPWD",
		"MAIL", NULL };

	env_inherit(env, drop);
	sb_env_set(env, "HOME", ep->agent_home);
	sb_env_set(env, "USER", ep->cfg.agent_user);
	sb_env_set(env, "LOGNAME", ep->cfg.agent_user);
	sb_env_set(env, "PWD", ep->cfg.source);
	sb_env_set(env, "SSE_DAEMON_SOCKET", ep->cfg.daemon_socket);
	sb_env_set(env, "SSE_ARCHIVE", ep->cfg.archive);
	sb_env_set(env, "SSE_DIFFICULTY", ep->cfg.difficulty);
	if (ep->mcp.pid > 0) {
		_cleanup_free_ char *url = sb_xasprintf("http://127.0.0.1:%u/mcp", ep->cfg.mcp_port);

		sb_env_set(env, "SSE_MCP_URL", url);
	}
	if (sb_env_get(env, "PATH") == NULL)
		sb_env_set(env, "PATH", default_path);
	env_merge(env, &ep->secrets);
}

/*
 * The program to execute: a name without a slash is looked up in the agent's PATH; a
 * relative path is taken from the agent's working directory, as its shell would.
 */
static int
resolve_agent_program(const struct ep *ep, const char *path_env, char **ret, struct sb_error **err)
{
	const char *name = ep->agent_argv[0];
	_cleanup_free_ char *joined = NULL;

	if (name[0] != '/' && strchr(name, '/') != NULL) {
		joined = sb_path_join(ep->cfg.source, name);
		name = joined;
	}
	return sb_cmd_find_program(name, path_env, ret, err);
}

/*
 * A command that cannot start gets the status a shell would give it (127 not found, 126
 * not executable) and the run goes on to grading, as for any other agent failure.
 */
static int
agent_cannot_start(struct ep *ep, struct sb_error **serr, struct ep_agent_result *ret)
{
	struct ep_agent_result res = { 0, false, 0 };

	res.status = sb_exit_code_for_exec_errno(sb_error_code(*serr));
	ep_log(SB_LOG_ERROR, "agent command cannot start (status %d): %s", res.status,
	    sb_error_message(*serr));
	sb_error_release(serr);
	ep->agent.start_ms = ep->agent.end_ms = sb_now_ms();
	*ret = res;
	return 0;
}

int
ep_run_agent(struct ep *ep, struct ep_agent_result *ret, struct sb_error **err)
{
	static const struct sb_rlimit_set nocore = { RLIMIT_CORE, 0, 0 };
	_cleanup_argv_ struct sb_argv env = SB_ARGV_INIT;
	_cleanup_free_ char *prog = NULL;
	struct ep_agent_result res = { 0, false, 0 };
	struct sb_cmd cmd = SB_CMD_INIT;
	int log_w = -1, rc;
	struct sb_error *serr = NULL;
	uint64_t deadline;
	size_t argc = 0;

	(void)err; /* the agent's failures are statuses, not ours */
	if (ep->stop_signal != 0)
		return 1;
	while (ep->agent_argv[argc] != NULL)
		argc++;
	agent_env(ep, &env);
	if (resolve_agent_program(ep, sb_env_get(&env, "PATH"), &prog, &serr) < 0)
		return agent_cannot_start(ep, &serr, ret);
	/*
	 * sb_cmd's child, in this order: default signals, setsid, stdio, fchdir to the
	 * directory opened at start-up, RLIMIT_CORE 0, the drop to the agent's uid/gid with no
	 * groups, no capabilities and no_new_privs (sb_priv_drop; docs/design.md, "Dropping
	 * privileges"), the parent-death signal (after the drop, which clears it), close-on-exec
	 * for every other descriptor, the seccomp filter last, execve.
	 */
	cmd.path = prog;
	cmd.argv = ep->agent_argv;
	cmd.envp = env.v;
	cmd.cwd_fd = ep->source_fd;
	cmd.stdin_fd = SB_CMD_DEVNULL;
	if (ep_pump_start(ep, EP_PUMP_AGENT, ep->agent_log, "agent.log", &log_w, &serr) < 0)
		return agent_cannot_start(ep, &serr, ret);
	cmd.stdout_fd = log_w;
	cmd.creds = &ep->agent_creds;
	cmd.cgroup_procs = ep->freezer.procs; /* NULL without a freezer cgroup */
	cmd.seccomp = ep->seccomp;
	cmd.rlimits = &nocore;
	cmd.n_rlimits = 1;
	cmd.flags = SB_CMD_NEW_SESSION | SB_CMD_DEATHSIG | SB_CMD_STDERR_TO_STDOUT;
	rc = start_child(&ep->agent, &cmd, &serr);
	close(log_w);
	if (rc < 0)
		return agent_cannot_start(ep, &serr, ret);
	ep_log(SB_LOG_INFO,
	    "agent started: '%s' (%zu argument%s) as '%s' (uid %u, pid %d) in '%s', timeout %llu s",
	    ep->agent_argv[0], argc - 1, argc == 2 ? "" : "s", ep->cfg.agent_user,
	    (unsigned)ep->agent_creds.uid, (int)ep->agent.pid, ep->cfg.source,
	    (unsigned long long)ep->cfg.timeout_s);
	deadline = ep->agent.start_ms + ep->cfg.timeout_s * 1000;
	while (ep_child_running(&ep->agent) && ep->stop_signal == 0 && sb_now_ms() < deadline)
		ep_wait(ep, deadline);
	if (ep_child_running(&ep->agent) && ep->stop_signal != 0)
		return 1;
	if (ep_child_running(&ep->agent)) {
		/* The time is up: everything of the agent's uid goes, not just its session. */
		res.timed_out = true;
		ep_log(SB_LOG_WARN, "agent timed out after %llu s; killing every process of '%s'",
		    (unsigned long long)ep->cfg.timeout_s, ep->cfg.agent_user);
		(void)kill(-ep->agent.pid, SIGKILL);
		ep_kill_agent_uid(ep, "agent timeout");
		wait_child_until(ep, &ep->agent, sb_now_ms() + EP_STOP_GRACE_MS);
		res.status = SB_EXIT_TIMEOUT;
		res.duration_ms = sb_now_ms() - ep->agent.start_ms;
		ep_log(SB_LOG_INFO, "agent ended with status %d (timeout) after %.1f s", res.status,
		    (double)res.duration_ms / 1000.0);
	} else {
		res.status = ep->agent.status;
		res.duration_ms = ep->agent.end_ms - ep->agent.start_ms;
		ep_log(SB_LOG_INFO, "agent exited with status %d after %.1f s", res.status,
		    (double)res.duration_ms / 1000.0);
	}
	*ret = res;
	return 0;
}

/* POST /admin/agent_exited: the daemon closes the agent's tools. Failure is only logged. */
static void
notify_daemon(struct ep *ep)
{
	struct sb_http_target t = { .unix_socket = ep->cfg.admin_socket,
		.base_url = "http://localhost", .timeout_ms = ADMIN_CALL_MS,
		.max_reply = REPLY_MAX };

	for (int i = 1; i <= ADMIN_TRIES; i++) {
		struct sb_error *err = NULL;
		struct sb_http_reply r;
		uint64_t until;

		if (sb_http_request(&t, "POST", "/admin/agent_exited", "{}", 2, &r, &err) == 0) {
			long status = r.status;

			sb_http_reply_release(&r);
			if (status >= 200 && status < 300) {
				ep_log(SB_LOG_INFO, "daemon told that the agent phase is over");
				return;
			}
			ep_log(SB_LOG_WARN, "POST /admin/agent_exited: HTTP %ld (try %d of %d)",
			    status, i, ADMIN_TRIES);
		} else {
			ep_log(SB_LOG_WARN, "%s (try %d of %d)", sb_error_message(err), i,
			    ADMIN_TRIES);
			sb_error_release(&err);
		}
		if (ep->stop_signal != 0 ||
		    (ep->cfg.role != EP_ROLE_SIDECAR_AGENT && !ep_child_running(&ep->daemon)))
			break;
		until = sb_now_ms() + ADMIN_RETRY_MS;
		while (ep->stop_signal == 0 && sb_now_ms() < until)
			ep_wait(ep, until);
	}
	ep_log(SB_LOG_WARN, "could not tell the daemon that the agent phase is over, ignoring");
}

void
ep_end_agent_phase(struct ep *ep)
{
	struct sb_error *err = NULL;
	uint64_t start = sb_now_ms();

	if (ep->phase_ended)
		return;
	ep->phase_ended = true;
	ep_kill_agent_uid(ep, "end of the agent phase");
	/* test_patch is a tool of the agent phase: it ends with it. */
	if (ep_child_running(&ep->mcp))
		stop_group(ep, &ep->mcp, EP_STOP_GRACE_MS);
	ep_kill_helper_uids(ep, "end of the agent phase");
	/* In a sidecar agent container the daemon is the task container's, not our child: it
	 * kills the agent's processes there (the ones its bash tool started) when told. */
	if (ep->stop_signal == 0 &&
	    (ep_child_running(&ep->daemon) || ep->cfg.role == EP_ROLE_SIDECAR_AGENT)) {
		notify_daemon(ep);
		/* The daemon's tools could have started agent processes until it closed them. */
		ep_kill_agent_uid(ep, "end of the agent phase");
		ep_kill_helper_uids(ep, "end of the agent phase");
	}
	if (ep_archive_give_back(ep, &err) < 0) {
		ep_log(SB_LOG_WARN, "%s", sb_error_message(err));
		sb_error_release(&err);
	}
	ep_log(SB_LOG_INFO, "agent phase ended in %.1f s", ep_secs(start));
}

/*
 * The evaluator runs as root with our environment, the admin socket under both names
 * (SSE_DAEMON_SOCKET too, as upstream's evaluator expects), and how the agent did. It has
 * TIMEOUT + 300 s; grading problems are logged and never change our exit status.
 */
int
ep_run_evaluator(struct ep *ep, const struct ep_agent_result *ar)
{
	static const char *const drop[] = { "SSE_METRIC_AGENT_TIMEOUT", "AGENT_DURATION",
		"AGENT_EXIT_STATUS", "SSE_SECRETS_FILE", NULL };
	_cleanup_argv_ struct sb_argv env = SB_ARGV_INIT;
	struct sb_error *err = NULL;
	uint64_t limit_s = ep->cfg.timeout_s + EP_EVALUATOR_SLACK_S, deadline;
	struct stat st;

	env_inherit(&env, drop);
	sb_env_set(&env, "SSE_RESULTS", ep->cfg.results);
	sb_env_set(&env, "SSE_ARCHIVE", ep->cfg.archive);
	sb_env_set(&env, "SSE_ADMIN_SOCKET", ep->cfg.admin_socket);
	sb_env_set(&env, "SSE_DAEMON_SOCKET", ep->cfg.admin_socket);
	sb_env_set(&env, "SSE_AGENT_USER", ep->cfg.agent_user);
	sb_argv_pushf(&env, "AGENT_DURATION=%llu", (unsigned long long)(ar->duration_ms / 1000));
	sb_argv_pushf(&env, "AGENT_EXIT_STATUS=%d", ar->status);
	{
		_cleanup_free_ char *t =
		    sb_xasprintf("%llu", (unsigned long long)ep->cfg.timeout_s);

		sb_env_set(&env, "TIMEOUT", t);
	}
	if (ar->timed_out)
		sb_argv_push(&env, "SSE_METRIC_AGENT_TIMEOUT=true");
	if (start_root_child(&ep->evaluator, ep->cfg.evaluator_bin, &env, ep->evaluator_log,
		&err) < 0) {
		ep_log(SB_LOG_ERROR, "evaluator: %s; the run is not graded", sb_error_message(err));
		sb_error_release(&err);
		return 0;
	}
	ep_log(SB_LOG_INFO, "evaluator started: '%s' (pid %d), time limit %llu s",
	    ep->cfg.evaluator_bin, (int)ep->evaluator.pid, (unsigned long long)limit_s);
	deadline = ep->evaluator.start_ms + limit_s * 1000;
	while (ep_child_running(&ep->evaluator) && ep->stop_signal == 0 && sb_now_ms() < deadline)
		ep_wait(ep, deadline);
	if (ep_child_running(&ep->evaluator)) {
		if (ep->stop_signal == 0)
			ep_log(SB_LOG_WARN,
			    "evaluator ran past its time limit of %llu s; stopping it",
			    (unsigned long long)limit_s);
		stop_group(ep, &ep->evaluator, EP_STOP_GRACE_MS);
		return ep->stop_signal != 0 ? 1 : 0;
	}
	ep_log(ep->evaluator.status == 0 ? SB_LOG_INFO : SB_LOG_WARN,
	    "evaluator exited with status %d after %.1f s", ep->evaluator.status,
	    (double)(ep->evaluator.end_ms - ep->evaluator.start_ms) / 1000.0);
	/* Its group goes with it: nothing of grading runs on past this point. */
	(void)kill(-ep->evaluator.pid, SIGKILL);
	if (fstatat(ep->results_fd, "result.json", &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISREG(st.st_mode))
		ep_log(SB_LOG_WARN, "the evaluator left no result.json in '%s'", ep->cfg.results);
	return 0;
}

void
ep_keep_alive(struct ep *ep)
{
	ep_log(SB_LOG_INFO, "keep-alive: the daemon stays up until SIGTERM or SIGINT");
	while (ep->stop_signal == 0)
		ep_wait(ep, UINT64_MAX);
}

void
ep_cleanup(struct ep *ep)
{
	uint64_t start = sb_now_ms();

	ep->stopping = true;
	if (ep_child_running(&ep->evaluator)) {
		ep_log(SB_LOG_INFO, "stopping the evaluator (pid %d)", (int)ep->evaluator.pid);
		stop_group(ep, &ep->evaluator, EP_STOP_GRACE_MS);
	}
	if (ep_child_running(&ep->mcp))
		stop_group(ep, &ep->mcp, EP_STOP_GRACE_MS);
	/* Interrupted in the agent phase: end it here (no daemon call: it is going away). */
	if (ep->agent.pid > 0 && !ep->phase_ended)
		ep_end_agent_phase(ep);
	else if (ep->agent_creds.uid != 0)
		ep_kill_agent_uid(ep, "cleanup");
	if (ep->archive_fd >= 0) {
		struct sb_error *err = NULL;

		if (ep_archive_give_back(ep, &err) < 0) {
			ep_log(SB_LOG_WARN, "%s", sb_error_message(err));
			sb_error_release(&err);
		}
	}
	if (ep->daemon.pid > 0) {
		if (ep_child_running(&ep->daemon)) {
			ep_log(SB_LOG_INFO, "stopping the daemon (pid %d)", (int)ep->daemon.pid);
			signal_session(ep->daemon.pid, SIGTERM);
			wait_child_until(ep, &ep->daemon, sb_now_ms() + EP_STOP_GRACE_MS);
		}
		/* Past the grace, or whatever it left behind in its session. */
		signal_session(ep->daemon.pid, SIGKILL);
		wait_child_until(ep, &ep->daemon, sb_now_ms() + 1000);
		if (ep_child_running(&ep->daemon))
			ep_log(SB_LOG_WARN, "the daemon (pid %d) survived SIGKILL",
			    (int)ep->daemon.pid);
	}
	/* The runner's scripts may have started sessions of their own. */
	if (ep->have_runner) {
		struct sb_error *err = NULL;

		if (sb_proc_kill_uid(ep->runner_creds.uid, ep->runner_creds.gid, EP_KILL_ROUNDS,
			&err) < 0) {
			ep_log(SB_LOG_WARN, "cleanup: %s", sb_error_message(err));
			sb_error_release(&err);
		}
	}
	reap(ep);
	ep_pumps_drain(ep);
	ep_log(SB_LOG_INFO, "cleanup done in %.1f s", ep_secs(start));
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c: ssebench-entrypoint, PID 1 of the task container (docs/entrypoint.md; upstream's:
 * docs/upstream.md, "The entrypoint").
 *
 * Order of operations, each step failing closed before anything untrusted runs:
 *   1. the command line; root; subreaper and signals (supervise.c), before any fork;
 *   2. the configuration from the environment;
 *   3. the results directory (its parent made 0700 root) and our log files in it;
 *   4. the secrets file, the agent's user, its working directory, its seccomp filter;
 *   5. the archive handed to the agent user (its owner remembered);
 *   6. the daemon; the isolation checks (isolation.c: a run that fails them is not scored
 *      and stops here); the agent; the end of the agent phase; the isolation checks again;
 *      grading;
 *   7. keep-alive if asked; cleanup; the agent's exit status.
 * Exit status: the agent's (0..255), 124 on its timeout, 1 for our own failures or a stop
 * signal before the end, 0 for a stop signal in keep-alive (docs/upstream.md, "The
 * entrypoint").
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <pwd.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "sb/buf.h"
#include "sb/exit.h"
#include "sb/limits.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/path.h"
#include "sb/spawn.h"

#include "entrypoint.h"

/* entrypoint.log in the results directory, once it is open; -1 before. */
static int log_file_fd = -1;

static void
usage(FILE *out)
{
	fprintf(out, "usage: ssebench-entrypoint [--sidecar-agent] [--] COMMAND [ARGUMENTS...]\n"
		     "       ssebench-entrypoint --sidecar-task\n"
		     "       ssebench-entrypoint --version | --help\n"
		     "\n"
		     "PID 1 of a task container: starts ssebench-daemon, runs COMMAND as the\n"
		     "agent user with a time limit, ends the agent phase, runs the evaluator and\n"
		     "exits with the agent's status. Configured by environment variables\n"
		     "(docs/entrypoint.md).\n"
		     "\n"
		     "Sidecar mode splits this in two containers: --sidecar-task runs the daemon\n"
		     "next to the task until it is stopped; --sidecar-agent waits for it, then\n"
		     "runs COMMAND and the evaluator (docs/sidecar.md).\n");
}


double
ep_secs(uint64_t since_ms)
{
	uint64_t now = sb_now_ms();

	return now > since_ms ? (double)(now - since_ms) / 1000.0 : 0.0;
}

/*
 * Every line goes to stdout (the container's log) and to entrypoint.log. sb_log escapes the
 * whole message, so a path or a command name cannot forge a line in either.
 */
void
ep_log(enum sb_log_level level, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	int saved = errno;
	va_list ap;

	if (!sb_log_enabled(level))
		return;
	va_start(ap, fmt);
	msg = sb_xvasprintf(fmt, ap);
	va_end(ap);
	sb_log_set_fd(STDOUT_FILENO);
	sb_log(level, "%s", msg);
	if (log_file_fd >= 0) {
		sb_log_set_fd(log_file_fd);
		sb_log(level, "%s", msg);
		sb_log_set_fd(STDOUT_FILENO);
	}
	errno = saved;
}

static char *
env_str(const char *name, const char *def)
{
	const char *v = secure_getenv(name);

	return v != NULL && *v != '\0' ? sb_xstrdup(v) : def != NULL ? sb_xstrdup(def) : NULL;
}

/* An absolute path from the environment, normalised; anything else is a configuration error. */
static int
env_path(const char *name, const char *def, char **ret, struct sb_error **err)
{
	_cleanup_free_ char *v = env_str(name, def);
	char *norm = sb_path_normalize_abs(v);

	if (norm == NULL)
		return sb_error_set(err, EINVAL, "%s='%s' is not an absolute path", name, v);
	*ret = norm;
	return 0;
}

/* A positive number of seconds; anything else falls back to def, never to "unlimited". */
static uint64_t
env_seconds(const char *name, uint64_t def)
{
	struct sb_error *err = NULL;
	uint64_t n = def;

	if (sb_env_u64(name, 1, EP_TIMEOUT_MAX_S, &n, &err) < 0) {
		ep_log(SB_LOG_WARN, "%s; using %llu s", sb_error_message(err),
		    (unsigned long long)def);
		sb_error_release(&err);
		return def;
	}
	return n;
}

static int
load_config(struct ep_config *c, struct sb_error **err)
{
	const char *v;

	if (env_path("SSE_ARCHIVE", "/tmp/sse-archive", &c->archive, err) < 0 ||
	    env_path("SSE_RESULTS", "/var/lib/ssebench/results", &c->results, err) < 0 ||
	    env_path("SSE_SOURCE", "/", &c->source, err) < 0 ||
	    env_path("SSE_DAEMON_SOCKET", "/tmp/sse.sock", &c->daemon_socket, err) < 0 ||
	    env_path("SSE_ADMIN_SOCKET", "/run/ssebench/admin.sock", &c->admin_socket, err) < 0 ||
	    env_path("SSE_DAEMON_BIN", "/opt/ssebench/bin/ssebench-daemon", &c->daemon_bin,
		err) < 0 ||
	    env_path("SSE_EVALUATOR_BIN", "/opt/ssebench/bin/ssebench-evaluator", &c->evaluator_bin,
		err) < 0 ||
	    env_path("SSE_SECRETS_FILE", "/run/ssebench-secrets/run.env", &c->secrets_file,
		err) < 0 ||
	    env_path("SSE_BENCH_PATH", "/ssebench", &c->bench_path, err) < 0 ||
	    env_path("SSE_REPO_PATH", "/ssebench-repo", &c->repo_path, err) < 0 ||
	    env_path("SSE_RUNNER_DIR", "/var/lib/ssebench-runner", &c->runner_dir, err) < 0 ||
	    env_path("SSE_RUNNER_ROOT", "/", &c->runner_root, err) < 0 ||
	    env_path("SSE_DAEMON_STATE", "/var/lib/ssebench-daemon", &c->daemon_state, err) < 0 ||
	    env_path("SSE_REFERENCE_PATH", "/reference/patch.diff", &c->reference_path, err) < 0)
		return -1;
	c->agent_user = env_str("SSE_AGENT_USER", "model");
	c->runner_user = env_str("SSE_RUNNER_USER", "sse-runner");
	c->difficulty = env_str("SSE_DIFFICULTY", "2");
	c->timeout_s = env_seconds("TIMEOUT", EP_TIMEOUT_DEFAULT_S);
	c->daemon_timeout_s = env_seconds("SSE_DAEMON_TIMEOUT", EP_DAEMON_TIMEOUT_DEFAULT_S);
	c->sidecar_wait_s = env_seconds("SSE_SIDECAR_WAIT", EP_SIDECAR_WAIT_DEFAULT_S);
	v = secure_getenv("SSE_MCP");
	c->mcp = v == NULL || strcmp(v, "0") != 0;
	if (env_path("SSE_MCP_BIN", "/opt/ssebench/bin/ssebench-mcp", &c->mcp_bin, err) < 0)
		return -1;
	c->mcp_user = env_str("SSE_MCP_USER", "nobody");
	c->mcp_port = 3000;
	v = secure_getenv("SSE_MCP_PORT");
	if (v != NULL && *v != '\0') {
		uint64_t port;

		if (sb_parse_u64(v, 1, 65535, &port, err) < 0)
			return sb_error_prefix(err, "SSE_MCP_PORT='%s'", v);
		c->mcp_port = (unsigned)port;
	}
	/* SSE_AGENT_LOG_MAX: a lower cap for agent.log and mcp.log (tests); never a higher one. */
	c->agent_log_max = SB_AGENT_LOG_MAX;
	v = secure_getenv("SSE_AGENT_LOG_MAX");
	if (v != NULL && *v != '\0' && sb_parse_u64(v, 4096, SB_AGENT_LOG_MAX, &c->agent_log_max, err) < 0)
		return sb_error_prefix(err, "SSE_AGENT_LOG_MAX='%s'", v);
	v = secure_getenv("SSE_KEEP_ALIVE");
	c->keep_alive = v != NULL && strcmp(v, "1") == 0;
	v = secure_getenv("SSE_PROXY_KEY");
	c->proxy_key = v != NULL && strcmp(v, "1") == 0;
	/*
	 * What the run claims. Each default claims the most, so a missing variable can only
	 * make a run harder to score, never easier (docs/design.md, "Fail closed").
	 */
	v = secure_getenv("SSE_EGRESS");
	c->egress_restricted = v == NULL || strcmp(v, "open") != 0;
	v = secure_getenv("SSE_REFERENCE_RUN");
	c->reference_run = v != NULL && strcmp(v, "1") == 0;
	v = secure_getenv("SSE_ISOLATION");
	c->isolation_enforced = v == NULL || strcmp(v, "record") != 0;
	c->net_gateway = env_str("SSE_NET_GATEWAY", NULL);
	c->net_canary = env_str("SSE_NET_CANARY", NULL);
	c->agent_cgroup = env_str("SSE_AGENT_CGROUP", NULL);
	/*
	 * The results directory's parent becomes 0700 root (setup_results), so nothing the
	 * agent needs may live below it: refuse the configuration rather than lock it out.
	 */
	{
		_cleanup_free_ char *copy = sb_xstrdup(c->results);
		const char *parent = dirname(copy);
		const struct {
			const char *name, *path;
		} agent_paths[] = { { "SSE_ARCHIVE", c->archive }, { "SSE_SOURCE", c->source },
			{ "SSE_DAEMON_SOCKET", c->daemon_socket } };

		if (strcmp(parent, "/") == 0)
			return sb_error_set(err, EINVAL,
			    "SSE_RESULTS='%s': its parent '/' cannot be made private", c->results);
		for (size_t i = 0; i < SB_ARRAY_SIZE(agent_paths); i++)
			if (sb_path_below(agent_paths[i].path, parent) != NULL)
				return sb_error_set(err, EINVAL,
				    "%s='%s' is inside '%s', which is made private to root for the "
				    "results", agent_paths[i].name, agent_paths[i].path, parent);
	}
	return 0;
}

/* [A-Z_][A-Z0-9_]*, as environment variable names go. */
static bool
secret_name_valid(const char *s, size_t n)
{
	if (n == 0 || !(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z')))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

/*
 * The secrets file carries the daemon's token and the model's key, so that they never
 * appear on a command line or in `docker inspect`. It is read as root and must be a regular
 * file (not a link), owned by root and writable by nobody else: whoever can write it chooses
 * the agent's environment. Lines are NAME=value; empty lines are allowed; anything else
 * (including a CR from a CRLF file, which would corrupt a key silently) is an error. Error
 * messages name the line, never its contents: it may hold a secret.
 */
static int
read_secrets(struct ep *ep, struct sb_error **err)
{
	struct sb_buf b = SB_BUF_INIT(EP_SECRETS_MAX);
	_cleanup_close_ int fd = -1;
	const char *path = ep->cfg.secrets_file;
	size_t line = 0;
	struct stat st;
	int r = 0;

	/* O_NONBLOCK: a FIFO planted at the path must not hang us; fstat then refuses it. */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		ep_log(SB_LOG_INFO, "no secrets file '%s'", path);
		return 0;
	}
	if (fd < 0 && errno == ELOOP)
		return sb_error_set(err, ELOOP, "secrets file '%s' is a symbolic link", path);
	if (fd < 0)
		return sb_error_errno(err, errno, "secrets file '%s'", path);
	if (fstat(fd, &st) < 0)
		return sb_error_errno(err, errno, "secrets file '%s'", path);
	if (!S_ISREG(st.st_mode))
		return sb_error_set(err, EINVAL, "secrets file '%s' is not a regular file", path);
	if (st.st_uid != 0)
		return sb_error_set(err, EPERM, "secrets file '%s' is owned by uid %u, not root",
		    path, (unsigned)st.st_uid);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return sb_error_set(err, EPERM,
		    "secrets file '%s' has mode %04o: writable by group or others", path,
		    (unsigned)(st.st_mode & 07777));
	if (st.st_size > EP_SECRETS_MAX)
		return sb_error_set(err, EFBIG, "secrets file '%s' is larger than %d bytes", path,
		    EP_SECRETS_MAX);
	if (sb_buf_read_fd(&b, fd, err) < 0) {
		explicit_bzero(b.s, b.len);
		sb_buf_release(&b);
		return sb_error_prefix(err, "secrets file '%s'", path);
	}
	for (const char *p = b.s, *end = b.s + b.len; p < end && r == 0;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		const char *eq = memchr(p, '=', n);
		_cleanup_free_ char *name = NULL;

		line++;
		if (n == 0) {
			p++;
			continue;
		}
		if (eq == NULL || !secret_name_valid(p, (size_t)(eq - p))) {
			r = sb_error_set(err, EINVAL,
			    "secrets file '%s': line %zu is not NAME=value", path, line);
			break;
		}
		for (const char *q = eq + 1; q < p + n; q++) {
			unsigned char ch = (unsigned char)*q;

			if ((ch < 0x20 && ch != '\t') || ch == 0x7f) {
				r = sb_error_set(err, EINVAL,
				    "secrets file '%s': line %zu: control character in the value%s",
				    path, line, ch == '\r' ? " (CRLF line ends?)" : "");
				break;
			}
		}
		if (r < 0)
			break;
		name = sb_xstrndup(p, (size_t)(eq - p));
		if (sb_env_get(&ep->secrets, name) != NULL) {
			r = sb_error_set(err, EINVAL, "secrets file '%s': line %zu: '%s' set twice",
			    path, line, name);
			break;
		}
		{
			_cleanup_free_ char *value = sb_xstrndup(eq + 1, n - (size_t)(eq + 1 - p));

			sb_env_set(&ep->secrets, name, value);
			explicit_bzero(value, strlen(value));
		}
		p += n + (nl != NULL ? 1 : 0);
	}
	explicit_bzero(b.s, b.len);
	sb_buf_release(&b);
	if (r < 0)
		return -1;
	ep_log(SB_LOG_INFO, "read %zu secret%s from '%s'", ep->secrets.n,
	    ep->secrets.n == 1 ? "" : "s", path);
	return 0;
}

/* mkdir -p with mode 0755 for each missing component (we are alone at this point). */
static int
mkdir_parents(const char *path, struct sb_error **err)
{
	_cleanup_free_ char *copy = sb_xstrdup(path);

	for (char *p = copy + 1;; p++) {
		char c = *p;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (mkdir(copy, 0755) < 0 && errno != EEXIST)
			return sb_error_errno(err, errno, "mkdir '%s'", copy);
		*p = c;
		if (c == '\0')
			return 0;
	}
}

/*
 * Open a directory that must really be one: lstat first (a symbolic link is refused), then
 * open with O_NOFOLLOW and check that the same inode was opened.
 */
static int
open_dir_checked(const char *path, struct stat *ret_st, struct sb_error **err)
{
	struct stat st, fst;
	int fd;

	if (lstat(path, &st) < 0)
		return sb_error_errno(err, errno, "lstat '%s'", path);
	if (!S_ISDIR(st.st_mode))
		return sb_error_set(err, ENOTDIR, "'%s' is not a directory%s", path,
		    S_ISLNK(st.st_mode) ? " (a symbolic link)" : "");
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sb_error_errno(err, errno, "open '%s'", path);
	if (fstat(fd, &fst) < 0 || fst.st_dev != st.st_dev || fst.st_ino != st.st_ino) {
		close(fd);
		return sb_error_set(err, EAGAIN, "'%s' changed while it was opened", path);
	}
	*ret_st = fst;
	return fd;
}

/*
 * The results directory holds the grade and the logs. Its parent is made 0700 root
 * (docs/design.md, "Layout of a run container"), so neither the
 * agent nor the runner can reach anything in it, whoever owns the run directory on the
 * host. A world-writable or sticky parent (/tmp) is refused rather than closed: making it
 * 0700 would break every other user of it.
 */
static int
setup_results(struct ep *ep, struct sb_error **err)
{
	_cleanup_free_ char *copy = sb_xstrdup(ep->cfg.results);
	_cleanup_close_ int pfd = -1;
	const char *parent = dirname(copy);
	const char *base = sb_path_basename(ep->cfg.results);
	struct stat st;
	int fd;

	if (mkdir_parents(parent, err) < 0)
		return -1;
	pfd = open_dir_checked(parent, &st, err);
	if (pfd < 0)
		return -1;
	if (st.st_mode & (S_IWOTH | S_ISVTX))
		return sb_error_set(err, EPERM,
		    "refusing to make '%s' private: it is a shared directory (mode %04o)", parent,
		    (unsigned)(st.st_mode & 07777));
	/* Changed only if needed: in a run it is on the read-only root, made so by the image. */
	if (((st.st_uid != 0 || st.st_gid != 0) && fchown(pfd, 0, 0) < 0) ||
	    ((st.st_mode & 07777) != 0700 && fchmod(pfd, 0700) < 0))
		return sb_error_errno(err, errno, "make '%s' 0700 root", parent);
	if (mkdirat(pfd, base, 0755) < 0 && errno != EEXIST)
		return sb_error_errno(err, errno, "mkdir '%s'", ep->cfg.results);
	fd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sb_error_errno(err, errno, "open '%s' (must be a directory, not a link)",
		    ep->cfg.results);
	if (fstat(fd, &st) < 0) {
		sb_error_errno(err, errno, "fstat '%s'", ep->cfg.results);
		close(fd);
		return -1;
	}
	if (st.st_uid != 0)
		ep_log(SB_LOG_WARN, "results directory '%s' is owned by uid %u, not root",
		    ep->cfg.results, (unsigned)st.st_uid);
	ep->results_fd = fd;
	return 0;
}

/*
 * A log file in the results directory: appended (a second run adds to it), never truncated,
 * never through a link, and only a regular file (O_NONBLOCK so a FIFO cannot hang us).
 */
static int
open_log(struct ep *ep, const char *name, struct sb_error **err)
{
	struct stat st;
	int fd;

	fd = openat(ep->results_fd, name,
	    O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
	if (fd < 0)
		return sb_error_errno(err, errno, "open '%s/%s'", ep->cfg.results, name);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    fcntl(fd, F_SETFL, O_WRONLY | O_APPEND) < 0) {
		close(fd);
		return sb_error_set(err, EINVAL, "'%s/%s' is not a regular file", ep->cfg.results,
		    name);
	}
	return fd;
}

/*
 * Sidecar mode shares one results directory between two entrypoints: each opens only the
 * logs of what it runs, and the task container's own log has a name of its own.
 */
static int
open_logs(struct ep *ep, struct sb_error **err)
{
	enum ep_role role = ep->cfg.role;

	ep->log_fd = open_log(ep,
	    role == EP_ROLE_SIDECAR_TASK ? "task-entrypoint.log" : "entrypoint.log", err);
	if (ep->log_fd < 0)
		return -1;
	log_file_fd = ep->log_fd;
	if (role != EP_ROLE_SIDECAR_AGENT && (ep->daemon_log = open_log(ep, "daemon.log", err)) < 0)
		return -1;
	if (role == EP_ROLE_SIDECAR_TASK)
		return 0;
	ep->agent_log = open_log(ep, "agent.log", err);
	ep->evaluator_log = ep->agent_log < 0 ? -1 : open_log(ep, "evaluator.log", err);
	ep->mcp_log = ep->evaluator_log < 0 ? -1 : open_log(ep, "mcp.log", err);
	return ep->mcp_log < 0 ? -1 : 0;
}

/* The agent's user: uid, primary gid, no supplementary groups, and its home directory. */
static int
lookup_users(struct ep *ep, struct sb_error **err)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	int r;

	r = getpwnam_r(ep->cfg.agent_user, &pw, buf, sizeof(buf), &res);
	if (r != 0)
		return sb_error_errno(err, r, "look up the agent user '%s'", ep->cfg.agent_user);
	if (res == NULL)
		return sb_error_set(err, ENOENT, "no agent user '%s'", ep->cfg.agent_user);
	if (pw.pw_uid == 0 || pw.pw_gid == 0)
		return sb_error_set(err, EPERM,
		    "the agent user '%s' must not be root or in group 0", ep->cfg.agent_user);
	memset(&ep->agent_creds, 0, sizeof(ep->agent_creds));
	ep->agent_creds.uid = pw.pw_uid;
	ep->agent_creds.gid = pw.pw_gid;
	ep->agent_creds.ngroups = 0;
	ep->agent_home = sb_xstrdup(pw.pw_dir);
	/* The runner user is the daemon's business; we only sweep its processes at the end. */
	if (sb_creds_lookup(ep->cfg.runner_user, &ep->runner_creds, NULL) == 0) {
		if (sb_creds_runner_uid(&ep->runner_creds, err) < 0)
			return -1;
		ep->have_runner = ep->runner_creds.uid != 0 &&
				  ep->runner_creds.uid != ep->agent_creds.uid;
	}
	return 0;
}

/*
 * The archive is the agent's to write (its dialog, its notes): it is handed to the agent
 * user for the agent phase, and its owner, group and mode are remembered to give it back.
 * We keep a descriptor to the directory itself, so the hand-back acts on the directory we
 * handed over even if the agent renames it and plants something else at the path.
 */
static int
setup_archive(struct ep *ep, struct sb_error **err)
{
	struct stat st;

	if (mkdir_parents(ep->cfg.archive, err) < 0)
		return -1;
	ep->archive_fd = open_dir_checked(ep->cfg.archive, &st, err);
	if (ep->archive_fd < 0)
		return -1;
	ep->archive_uid = st.st_uid;
	ep->archive_gid = st.st_gid;
	ep->archive_mode = st.st_mode & 07777;
	if (fchown(ep->archive_fd, ep->agent_creds.uid, ep->agent_creds.gid) < 0 ||
	    fchmod(ep->archive_fd, 0755) < 0)
		return sb_error_errno(err, errno, "hand '%s' to '%s'", ep->cfg.archive,
		    ep->cfg.agent_user);
	return 0;
}

struct give_back {
	uid_t uid; /* the archive's original owner */
	gid_t gid;
	uint64_t entries, changed, removed, failed;
	struct sb_error *first; /* the first failure, for the log */
};

/*
 * The mode an entry keeps when it is given back: no set-id or sticky bit and nothing
 * writable by group or others, whatever the agent set (a 0777 directory would stay
 * writable by every later reader of the results; a set-uid file of the agent's uid would
 * stay set-uid on the host, where uid 1000 is often a person). The owner keeps what it
 * needs to read, enter and remove what it now owns.
 */
static mode_t
given_back_mode(mode_t mode)
{
	mode_t m = mode & 0755;

	return S_ISDIR(mode) ? m | 0700 : m | 0600;
}

/* Remove name from dfd (a link, a special file, a second name of a file), counting it. */
static void
give_back_remove(struct give_back *g, int dfd, const char *name)
{
	if (unlinkat(dfd, name, 0) < 0) {
		g->failed++;
		sb_error_errno(&g->first, errno, "remove '%s'", name);
	} else {
		g->removed++;
	}
}

/*
 * Re-own one entry through a descriptor: fd, or a regular file opened here without
 * following a link and checked to be the file fstatat saw, so that even a swap after the
 * look changes nothing but that file.
 */
static void
give_back_entry(struct give_back *g, int dfd, const char *name, int fd, const struct stat *st)
{
	_cleanup_close_ int own = -1;
	struct stat fst;

	if (fd < 0) {
		own = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (own < 0 || fstat(own, &fst) < 0 || !S_ISREG(fst.st_mode) ||
		    fst.st_ino != st->st_ino || fst.st_dev != st->st_dev) {
			g->failed++;
			sb_error_errno(&g->first, own < 0 ? errno : ESTALE, "open '%s'", name);
			return;
		}
		fd = own;
	}
	/* chown first (it clears set-id bits), then the mode that stays. */
	if (fchown(fd, g->uid, g->gid) < 0 || fchmod(fd, given_back_mode(st->st_mode)) < 0) {
		g->failed++;
		sb_error_errno(&g->first, errno, "give back '%s'", name);
	} else {
		g->changed++;
	}
}

/*
 * One directory of the hand-back; d is owned (closed) here. Entries are looked at with
 * AT_SYMLINK_NOFOLLOW and directories opened with O_NOFOLLOW, so nothing the agent planted
 * is followed. What the results may not hold goes: symbolic links (a trap for whoever
 * reads the results later: archive/result.json -> /etc/passwd), special files (a FIFO
 * blocks its reader), and a second name of a file (a hard link to a file elsewhere: chown
 * or chmod would change that file too). A directory deeper than SB_COPY_DEPTH_MAX is made
 * root's and 0700, so nothing below it reaches anyone but root.
 */
static void
give_back_dir(struct give_back *g, DIR *d, unsigned depth)
{
	int dfd = dirfd(d);
	struct dirent *de;

	while ((de = readdir(d)) != NULL) {
		const char *name = de->d_name;
		struct stat st;

		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			continue;
		if (++g->entries > SB_COPY_FILES_MAX) {
			g->failed++;
			sb_error_set(&g->first, EFBIG, "more than %d entries", SB_COPY_FILES_MAX);
			break;
		}
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			g->failed++;
			sb_error_errno(&g->first, errno, "fstatat '%s'", name);
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			struct stat cst;
			DIR *cd;
			int cfd;

			cfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (cfd < 0 || fstat(cfd, &cst) < 0 || cst.st_ino != st.st_ino ||
			    cst.st_dev != st.st_dev) {
				g->failed++;
				sb_error_errno(&g->first, errno, "open directory '%s'", name);
				if (cfd >= 0)
					close(cfd);
				continue;
			}
			if (depth >= SB_COPY_DEPTH_MAX) {
				if (fchown(cfd, 0, 0) < 0 || fchmod(cfd, 0700) < 0) {
					g->failed++;
					sb_error_errno(&g->first, errno, "close off '%s'", name);
				} else {
					g->removed++;
				}
				close(cfd);
				continue;
			}
			give_back_entry(g, dfd, name, cfd, &cst);
			cd = fdopendir(cfd);
			if (cd == NULL) {
				g->failed++;
				sb_error_errno(&g->first, errno, "read directory '%s'", name);
				close(cfd);
				continue;
			}
			give_back_dir(g, cd, depth + 1);
			continue;
		}
		if (!S_ISREG(st.st_mode) || st.st_nlink > 1) {
			give_back_remove(g, dfd, name);
			continue;
		}
		give_back_entry(g, dfd, name, -1, &st);
	}
	closedir(d);
}

/*
 * Give the archive back to its original owner once the agent phase is over and every
 * process of the agent is gone: chown -R and chmod, done safely (the agent could have
 * planted links pointing anywhere, and root follows nothing here), with what the results
 * must not hold removed (give_back_dir).
 */
int
ep_archive_give_back(struct ep *ep, struct sb_error **err)
{
	struct give_back g = { .uid = ep->archive_uid, .gid = ep->archive_gid };
	int fd;
	DIR *d;

	if (ep->archive_fd < 0)
		return 0;
	/* A new open file description: our own offset for readdir. */
	fd = openat(ep->archive_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return sb_error_errno(err, errno, "open '%s'", ep->cfg.archive);
	d = fdopendir(fd);
	if (d == NULL) {
		close(fd);
		return sb_error_errno(err, errno, "read '%s'", ep->cfg.archive);
	}
	give_back_dir(&g, d, 1);
	if (fchown(ep->archive_fd, ep->archive_uid, ep->archive_gid) < 0 ||
	    fchmod(ep->archive_fd, given_back_mode(S_IFDIR | ep->archive_mode)) < 0) {
		g.failed++;
		sb_error_errno(&g.first, errno, "chown '%s'", ep->cfg.archive);
	}
	ep->archive_fd = sb_close(ep->archive_fd);
	if (g.removed > 0)
		ep_log(SB_LOG_WARN,
		    "archive: removed or closed off %llu entries (links, special files, second "
		    "names of files, too deep)", (unsigned long long)g.removed);
	if (g.failed > 0) {
		sb_error_set(err, sb_error_code(g.first), "archive '%s': %llu failures, first: %s",
		    ep->cfg.archive, (unsigned long long)g.failed, sb_error_message(g.first));
		sb_error_release(&g.first);
		return -1;
	}
	ep_log(SB_LOG_INFO, "archive '%s' given back to uid %u (%llu entries)", ep->cfg.archive,
	    (unsigned)ep->archive_uid, (unsigned long long)g.changed);
	return 0;
}

/* Log the error, stop whatever was started, exit 1 (an entrypoint failure). */
static int
fail(struct ep *ep, struct sb_error **err)
{
	if (err != NULL && *err != NULL) {
		ep_log(SB_LOG_ERROR, "%s", sb_error_message(*err));
		sb_error_release(err);
	}
	ep_cleanup(ep);
	ep_log(SB_LOG_INFO, "exiting with status %d after %.1f s", SB_EXIT_FAILURE,
	    ep_secs(ep->t0));
	return SB_EXIT_FAILURE;
}

int
main(int argc, char **argv)
{
	static struct ep ep;
	struct ep_agent_result ar = { 0, false, 0 };
	struct sb_error *err = NULL;
	int argi = 1, r;

	/* The isolation probe (isolation.c) is this binary run again, without privileges. */
	if (argc > 1 && strcmp(argv[1], "--isolation-probe") == 0)
		return ep_isolation_probe_main(argc, argv);
	sb_log_init("entrypoint", SB_LOG_INFO, SB_LOG_TIMESTAMPS | SB_LOG_LEVELS);
	sb_log_set_fd(STDOUT_FILENO);
	if (argi < argc && strcmp(argv[argi], "--version") == 0) {
		printf("ssebench-entrypoint %s\n", PACKAGE_VERSION);
		return SB_EXIT_OK;
	}
	if (argi < argc && (strcmp(argv[argi], "--help") == 0 || strcmp(argv[argi], "-h") == 0)) {
		usage(stdout);
		return SB_EXIT_OK;
	}
	if (argi < argc && strcmp(argv[argi], "--sidecar-task") == 0) {
		ep.cfg.role = EP_ROLE_SIDECAR_TASK;
		if (++argi < argc) {
			ep_log(SB_LOG_ERROR, "--sidecar-task takes no command: the agent runs in "
					     "the agent container");
			usage(stderr);
			return SB_EXIT_FAILURE;
		}
	} else if (argi < argc && strcmp(argv[argi], "--sidecar-agent") == 0) {
		ep.cfg.role = EP_ROLE_SIDECAR_AGENT;
		argi++;
	}
	if (argi < argc && strcmp(argv[argi], "--") == 0) {
		argi++;
	} else if (argi < argc && argv[argi][0] == '-') {
		/* An option we do not know: better refused than run as the agent's command. */
		ep_log(SB_LOG_ERROR,
		    "unknown option '%s' (use -- before a command starting with -)", argv[argi]);
		usage(stderr);
		return SB_EXIT_FAILURE;
	}
	if (argi >= argc && ep.cfg.role != EP_ROLE_SIDECAR_TASK) {
		ep_log(SB_LOG_ERROR, "no agent command given");
		usage(stderr);
		return SB_EXIT_FAILURE;
	}
	ep.agent_argv = argv + argi;
	ep.t0 = sb_now_ms();
	ep.source_fd = ep.results_fd = ep.archive_fd = -1;
	ep.freezer = (struct sb_freezer)SB_FREEZER_INIT;
	ep.log_fd = ep.daemon_log = ep.agent_log = ep.evaluator_log = ep.mcp_log = ep.sfd = -1;
	for (size_t i = 0; i < SB_ARRAY_SIZE(ep.pumps); i++)
		ep.pumps[i].in = -1;
	ep.mcp.name = "MCP server";
	ep.daemon.name = "daemon";
	ep.agent.name = "agent";
	ep.evaluator.name = "evaluator";
	ep.secrets = (struct sb_argv)SB_ARGV_INIT;
	{
		const char *debug = secure_getenv("SSE_DEBUG");

		if (debug != NULL && *debug != '\0')
			sb_log_set_level(SB_LOG_DEBUG);
	}

	{
		char exe[SB_PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		if (n <= 0) {
			ep_log(SB_LOG_ERROR, "cannot find our own binary (/proc/self/exe)");
			return SB_EXIT_FAILURE;
		}
		exe[n] = '\0';
		ep.self_exe = sb_xstrdup(exe);
	}
	if (geteuid() != 0) {
		ep_log(SB_LOG_ERROR, "must run as root: it runs the agent under its own uid");
		return SB_EXIT_FAILURE;
	}
	/* Before any child: no SIGCHLD may be lost and no zombie left unreaped. */
	if (ep_supervise_init(&ep, &err) < 0 || load_config(&ep.cfg, &err) < 0 ||
	    setup_results(&ep, &err) < 0 || open_logs(&ep, &err) < 0)
		return fail(&ep, &err);
	ep_log(SB_LOG_INFO, "ssebench-entrypoint %s (pid %d, %s): results '%s', archive '%s'",
	    PACKAGE_VERSION, (int)getpid(), ep_role_name(ep.cfg.role), ep.cfg.results,
	    ep.cfg.archive);

	/* Everything that can be wrong with the configuration is found before anything runs. */
	if (read_secrets(&ep, &err) < 0 || lookup_users(&ep, &err) < 0)
		return fail(&ep, &err);
	ep.source_fd = open(ep.cfg.source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ep.source_fd < 0) {
		sb_error_errno(&err, errno, "agent working directory SSE_SOURCE='%s'",
		    ep.cfg.source);
		return fail(&ep, &err);
	}
	if (sb_seccomp_compile(SB_SECCOMP_UNTRUSTED, &ep.seccomp, &err) < 0)
		return fail(&ep, &err);
	/*
	 * The agent's freezer cgroup (ssebench makes it on the host, root's and 0700): the
	 * agent runs in it from its first instruction, the daemon runs the agent's bash calls
	 * in it and freezes it during a check on hidden material (daemon/runner.c:hidden_check).
	 * Named but unusable, the run stops here rather than hold the agent by signals alone.
	 */
	if (ep.cfg.agent_cgroup != NULL && ep.cfg.role != EP_ROLE_SIDECAR_AGENT) {
		if (sb_freezer_open(ep.cfg.agent_cgroup, &ep.freezer, &err) < 0)
			return fail(&ep, &err);
		ep_log(SB_LOG_INFO, "agent freezer: cgroup v%d at '%s'", ep.freezer.v2 ? 2 : 1,
		    ep.cfg.agent_cgroup);
	}
	/* The task container leaves the archive alone: the agent container hands it over. */
	if (ep.cfg.role == EP_ROLE_SIDECAR_TASK)
		return ep_sidecar_task(&ep);
	if (setup_archive(&ep, &err) < 0)
		return fail(&ep, &err);

	if (ep.cfg.role == EP_ROLE_SIDECAR_AGENT) {
		if (ep_sidecar_wait_task(&ep, SB_ISO_BEFORE_AGENT, &err) < 0)
			return fail(&ep, &err);
	} else if (ep_start_daemon(&ep, &err) < 0) {
		return fail(&ep, &err);
	}
	/*
	 * A run that cannot establish its isolation is not scored, so the agent does not run
	 * (docs/design.md, "Fail closed"): its result names every property that failed.
	 */
	if (!ep_isolation_establish(&ep, SB_ISO_BEFORE_AGENT) && ep.cfg.isolation_enforced) {
		ep_write_unscored_result(&ep, SB_ISO_BEFORE_AGENT, NULL);
		return fail(&ep, NULL);
	}
	/* The agent's test_patch tool: a run whose MCP server does not start fails
	 * (docs/upstream.md, "The entrypoint"), rather than leaving the agent without the tool it
	 * was promised. */
	if (ep_start_mcp(&ep, &err) < 0)
		return fail(&ep, &err);
	r = ep_run_agent(&ep, &ar, &err);
	if (r != 0)
		return fail(&ep, &err); /* a harness failure, or a stop signal */
	ep_end_agent_phase(&ep);
	if (ep.stop_signal != 0)
		return fail(&ep, NULL);
	/*
	 * Say that the agent phase is over (the CLI revokes the run's proxy key then; in
	 * sidecar mode the task container checks its side again), and wait for the key to be
	 * gone before anything of grading runs.
	 */
	if (ep_mark_phase_ended(&ep, &err) < 0) {
		ep_log(SB_LOG_WARN, "%s, ignoring", sb_error_message(err));
		sb_error_release(&err);
	}
	if (ep.cfg.proxy_key)
		ep_wait_key_revoked(&ep);
	if (ep.cfg.role == EP_ROLE_SIDECAR_AGENT &&
	    ep_sidecar_wait_task(&ep, SB_ISO_BEFORE_GRADING, &err) < 0) {
		/* No record from the task side: the checks below fail it by name. */
		ep_log(SB_LOG_ERROR, "%s", sb_error_message(err));
		sb_error_release(&err);
		if (ep.stop_signal != 0)
			return fail(&ep, NULL);
	}
	/* Again before grading: what the agent did must not have opened a way in. */
	if (!ep_isolation_establish(&ep, SB_ISO_BEFORE_GRADING) && ep.cfg.isolation_enforced)
		ep_write_unscored_result(&ep, SB_ISO_BEFORE_GRADING, &ar);
	else if (ep_run_evaluator(&ep, &ar) != 0)
		return fail(&ep, NULL);
	/* The agent container keeps nothing alive: the daemon is the task container's. */
	if (ep.cfg.keep_alive && ep.cfg.role != EP_ROLE_SIDECAR_AGENT) {
		ep_keep_alive(&ep);
		ep_cleanup(&ep);
		ep_log(SB_LOG_INFO, "exiting with status 0 after %.1f s (stopped in keep-alive)",
		    ep_secs(ep.t0));
		return SB_EXIT_OK;
	}
	ep_cleanup(&ep);
	ep_log(SB_LOG_INFO, "exiting with status %d after %.1f s", ar.status, ep_secs(ep.t0));
	return ar.status;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config.c: what the entrypoint is told before anything runs: its configuration from the
 * environment (docs/entrypoint.md), the secrets file, and the agent's and the runner's users.
 * Everything that can be wrong with them is found here, before any child starts.
 */
#include "config.h"

#include <fcntl.h>
#include <libgen.h>
#include <pwd.h>
#include <string.h>
#include <sys/stat.h>

#include "sb/buf.h"
#include "sb/limits.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/path.h"

#include "entrypoint.h"

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

/* The paths we are given, each absolute and normalised (env_path), with their defaults. */
static int
load_paths(struct ep_config *c, struct sb_error **err)
{
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
	    env_path("SSE_REFERENCE_PATH", "/reference/patch.diff", &c->reference_path, err) < 0 ||
	    env_path("SSE_KEY_ANSWER", c->results, &c->key_answer, err) < 0)
		return -1;
	return 0;
}

/* The MCP server: SSE_MCP (on unless "0"), its binary, its user and its port. */
static int
load_mcp(struct ep_config *c, struct sb_error **err)
{
	const char *v = secure_getenv("SSE_MCP");

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
	return 0;
}

/*
 * What the run claims. Each default claims the most, so a missing variable can only make a
 * run harder to score, never easier (docs/design.md, "Fail closed").
 */
static void
load_claims(struct ep_config *c)
{
	const char *v;

	v = secure_getenv("SSE_EGRESS");
	c->egress_restricted = v == NULL || strcmp(v, "open") != 0;
	v = secure_getenv("SSE_REFERENCE_RUN");
	c->reference_run = v != NULL && strcmp(v, "1") == 0;
	v = secure_getenv("SSE_ISOLATION");
	c->isolation_enforced = v == NULL || strcmp(v, "record") != 0;
	c->net_gateway = env_str("SSE_NET_GATEWAY", NULL);
	/* Set but empty is kept: the CLI meant the node to be probed, and an empty address
	 * fails the property (isolation.c:attempt_start); unset is no probe. */
	{
		const char *node = secure_getenv("SSE_NET_NODE");

		c->net_node = node != NULL ? sb_xstrdup(node) : NULL;
	}
	c->net_canary = env_str("SSE_NET_CANARY", NULL);
	c->agent_cgroup = env_str("SSE_AGENT_CGROUP", NULL);
}

/*
 * The results directory's parent becomes 0700 root (ep_results_setup, dirs.c), so nothing
 * the agent needs may live below it: refuse the configuration rather than lock it out.
 */
static int
check_results_parent(const struct ep_config *c, struct sb_error **err)
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
	return 0;
}

int
ep_config_load(struct ep_config *c, struct sb_error **err)
{
	const char *v;

	if (load_paths(c, err) < 0)
		return -1;
	c->agent_user = env_str("SSE_AGENT_USER", "model");
	c->runner_user = env_str("SSE_RUNNER_USER", "sse-runner");
	c->difficulty = env_str("SSE_DIFFICULTY", "2");
	c->timeout_s = env_seconds("TIMEOUT", EP_TIMEOUT_DEFAULT_S);
	c->daemon_timeout_s = env_seconds("SSE_DAEMON_TIMEOUT", EP_DAEMON_TIMEOUT_DEFAULT_S);
	c->sidecar_wait_s = env_seconds("SSE_SIDECAR_WAIT", EP_SIDECAR_WAIT_DEFAULT_S);
	if (load_mcp(c, err) < 0)
		return -1;
	/* SSE_AGENT_LOG_MAX: a lower cap for agent.log and mcp.log (tests); never a higher one. */
	c->agent_log_max = SB_AGENT_LOG_MAX;
	v = secure_getenv("SSE_AGENT_LOG_MAX");
	if (v != NULL && *v != '\0' && sb_parse_u64(v, 4096, SB_AGENT_LOG_MAX, &c->agent_log_max, err) < 0)
		return sb_error_prefix(err, "SSE_AGENT_LOG_MAX='%s'", v);
	v = secure_getenv("SSE_KEEP_ALIVE");
	c->keep_alive = v != NULL && strcmp(v, "1") == 0;
	v = secure_getenv("SSE_PROXY_KEY");
	c->proxy_key = v != NULL && strcmp(v, "1") == 0;
	load_claims(c);
	return check_results_parent(c, err);
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
 * Open the secrets file and check what it is (see ep_secrets_read): *ret_fd is the file, or
 * -1 when there is none (not an error: a run without secrets).
 */
static int
open_secrets(const char *path, int *ret_fd, struct sb_error **err)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	/* O_NONBLOCK: a FIFO planted at the path must not hang us; fstat then refuses it. */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		*ret_fd = -1;
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
	*ret_fd = TAKE_FD(fd);
	return 0;
}

/* Line number line of the secrets file, n bytes at p (no newline, not empty), into env. */
static int
add_secret(struct sb_argv *env, const char *path, size_t line, const char *p, size_t n,
    struct sb_error **err)
{
	const char *eq = memchr(p, '=', n);
	_cleanup_free_ char *name = NULL;
	_cleanup_free_ char *value = NULL;

	if (eq == NULL || !secret_name_valid(p, (size_t)(eq - p)))
		return sb_error_set(err, EINVAL, "secrets file '%s': line %zu is not NAME=value",
		    path, line);
	for (const char *q = eq + 1; q < p + n; q++) {
		unsigned char ch = (unsigned char)*q;

		if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
			return sb_error_set(err, EINVAL,
			    "secrets file '%s': line %zu: control character in the value%s", path,
			    line, ch == '\r' ? " (CRLF line ends?)" : "");
	}
	name = sb_xstrndup(p, (size_t)(eq - p));
	if (sb_env_get(env, name) != NULL)
		return sb_error_set(err, EINVAL, "secrets file '%s': line %zu: '%s' set twice", path,
		    line, name);
	value = sb_xstrndup(eq + 1, n - (size_t)(eq + 1 - p));
	sb_env_set(env, name, value);
	explicit_bzero(value, strlen(value));
	return 0;
}

/*
 * The secrets file carries the daemon's token and the model's key, so that they never
 * appear on a command line or in `docker inspect`. It is read as root and must be a regular
 * file (not a link), owned by root and writable by nobody else: whoever can write it chooses
 * the agent's environment. Lines are NAME=value; empty lines are allowed; anything else
 * (including a CR from a CRLF file, which would corrupt a key silently) is an error. Error
 * messages name the line, never its contents: it may hold a secret.
 */
int
ep_secrets_read(struct ep *ep, struct sb_error **err)
{
	struct sb_buf b = SB_BUF_INIT(EP_SECRETS_MAX);
	_cleanup_close_ int fd = -1;
	const char *path = ep->cfg.secrets_file;
	size_t line = 0;
	int r = 0;

	if (open_secrets(path, &fd, err) < 0)
		return -1;
	if (fd < 0) {
		ep_log(SB_LOG_INFO, "no secrets file '%s'", path);
		return 0;
	}
	if (sb_buf_read_fd(&b, fd, err) < 0) {
		explicit_bzero(b.s, b.len);
		sb_buf_release(&b);
		return sb_error_prefix(err, "secrets file '%s'", path);
	}
	for (const char *p = b.s, *end = b.s + b.len; p < end && r == 0;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);

		line++;
		if (n == 0) {
			p++;
			continue;
		}
		r = add_secret(&ep->secrets, path, line, p, n, err);
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

/* The agent's user: uid, primary gid, no supplementary groups, and its home directory. */
int
ep_users_lookup(struct ep *ep, struct sb_error **err)
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

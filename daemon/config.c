/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config.c: the daemon's configuration: environment, users, the task, the public view.
 *
 * Every value comes from the environment the entrypoint gives the daemon (docs/daemon.md,
 * "Environment"; upstream's names: docs/upstream.md, "Settings and environment variables").
 * A bad difficulty stops the daemon (exit 2): a run whose gate is unknown must not start.
 * A bad limit falls back to its default, never to "unlimited".
 */
#include "config.h"

#include <ctype.h>
#include <fcntl.h>
#include <pwd.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/fs.h"
#include "sb/json.h"
#include "sb/limits.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/path.h"

#include "daemon.h"

extern char **environ;

static char *
env_or(const char *name, const char *def)
{
	const char *v = secure_getenv(name);

	return sb_xstrdup(v != NULL && *v != '\0' ? v : def);
}

/* A positive number of seconds or bytes; anything else falls back to def, with a warning. */
static uint64_t
env_limit(const char *name, uint64_t def, uint64_t max)
{
	struct sb_error *err = NULL;
	uint64_t n = def;

	if (sb_env_u64(name, 1, max, &n, &err) < 0) {
		sb_log(SB_LOG_WARN, "%s; using %llu", sb_error_message(err), (unsigned long long)def);
		sb_error_release(&err);
		return def;
	}
	return n;
}

/* Look up a user by name: uid, primary gid, no supplementary groups. */
static int
lookup_user(const char *name, struct sb_creds *ret, char **ret_home, struct sb_error **err)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	int r;

	r = getpwnam_r(name, &pw, buf, sizeof(buf), &res);
	if (r != 0)
		return sb_error_errno(err, r, "look up user '%s'", name);
	if (res == NULL)
		return sb_error_set(err, ENOENT, "no user '%s'", name);
	memset(ret, 0, sizeof(*ret));
	ret->uid = pw.pw_uid;
	ret->gid = pw.pw_gid;
	if (ret_home != NULL)
		*ret_home = sb_xstrdup(pw.pw_dir);
	return 0;
}

/*
 * The environment scripts and bash calls inherit: the daemon's own, without anything that
 * could carry a secret or reach the admin side, and without identity variables (set per
 * use). The image's ENV (PATH, GOFLAGS, CARGO_HOME, ...) stays, because builds need it.
 */
static char **
filtered_env(void)
{
	/*
	 * The root-only paths go too (results, secrets, the daemon's state, the pristine repo):
	 * the scripts and the bash tool run code the agent wrote, and their environment must
	 * tell it no more than the agent's own (docs/daemon.md, "Bencher actions": the
	 * runner reads none of the run's results; entrypoint/supervise.c:agent_env drops the same
	 * names).
	 */
	static const char *const drop_exact[] = { "HOME", "USER", "LOGNAME", "TMPDIR", "PWD",
		"OLDPWD", "SHLVL", "_", "LD_PRELOAD", "LD_AUDIT", "MAIL", "SSE_RESULTS",
		"SSE_SECRETS_FILE", "SSE_DAEMON_BIN", "SSE_EVALUATOR_BIN", "SSE_DAEMON_STATE",
		"SSE_RUNNER_DIR", "SSE_RUNNER_ROOT", "SSE_REPO_PATH", "SSE_AGENT_CGROUP", NULL };
	static const char *const drop_substr[] = { "API_KEY", "TOKEN", "SECRET", "PASSWORD",
		"LITELLM", "SSE_ADMIN", "SSE_BASE_URL", NULL };
	struct sb_argv env = SB_ARGV_INIT;

	for (char **e = environ; e != NULL && *e != NULL; e++) {
		const char *eq = strchr(*e, '=');
		_cleanup_free_ char *name = NULL, *upper = NULL;
		bool drop = false;

		if (eq == NULL)
			continue;
		name = sb_xstrndup(*e, (size_t)(eq - *e));
		upper = sb_xstrdup(name);
		for (char *p = upper; *p != '\0'; p++)
			*p = (char)toupper((unsigned char)*p);
		for (const char *const *d = drop_exact; *d != NULL; d++)
			drop = drop || strcmp(name, *d) == 0;
		for (const char *const *d = drop_substr; *d != NULL; d++)
			drop = drop || strstr(upper, *d) != NULL;
		if (!drop)
			sb_argv_push(&env, *e);
	}
	if (sb_env_get(&env, "PATH") == NULL)
		sb_env_set(&env, "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	return sb_argv_detach(&env);
}

/* Contents of a task file for the public view ("" if it cannot be read, as upstream). */
static json_t *
task_file_json(int bench_fd, const char *rel)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(SB_CONFIG_FILE_MAX);

	if (rel == NULL)
		return json_null();
	if (sb_read_file_at(bench_fd, rel, 0, &b, NULL) < 0)
		return json_string("");
	return sb_json_string_or_null(b.s);
}

/*
 * GET /project: the public view only. The run script, the patch, the hidden tests, the PoC
 * contents, commits and links stay out (docs/upstream.md, "The daemon's API"); PoCs appear
 * as paths.
 */
static json_t *
public_view(const struct dconf *c, int bench_fd)
{
	const struct sb_task_config *t = c->task;
	json_t *reports = json_null(), *pocs = json_array();

	if (t->task_description.crash_report.present && t->task_description.crash_report.v) {
		reports = json_array();
		for (size_t i = 0; i < t->task_description.crash_report.n; i++)
			json_array_append_new(reports,
			    task_file_json(bench_fd, t->task_description.crash_report.v[i].s));
	}
	for (size_t i = 0; i < t->files.poc.n; i++) {
		_cleanup_free_ char *p = sb_path_join(c->bench_path, t->files.poc.v[i].s);

		json_array_append_new(pocs, json_string(p));
	}
	return json_pack("{s:s, s:s, s:s, s:s, s:{s:o, s:o, s:o}, s:o, s:o, s:o}", "id", t->id.s,
	    "project", t->project.s, "language", t->language.s, "source", c->source,
	    "task_description", "issue", sb_json_string_or_null(t->task_description.issue.s),
	    "crash_report", reports, "bug_description",
	    sb_json_string_or_null(t->task_description.bug_description.s), "poc", pocs,
	    "build_script", task_file_json(bench_fd, t->scripts.build.s), "test_script",
	    task_file_json(bench_fd, t->scripts.test.s));
}

static int
load_task(struct dconf *c, struct sb_error **err)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(SB_CONFIG_FILE_MAX);
	_cleanup_diags_ struct sb_diags d = SB_DIAGS_INIT;
	_cleanup_close_ int bench_fd = -1;
	unsigned checks;

	bench_fd = sb_open_dir(c->bench_path, err);
	if (bench_fd < 0)
		return sb_error_prefix(err, "task files");
	if (sb_read_file_at(bench_fd, "config.yaml", 0, &b, err) < 0)
		return sb_error_prefix(err, "task config");
	c->task = sb_task_config_parse(b.s, b.len, "config.yaml", &d);
	if (d.n > 0)
		return sb_error_set(err, EINVAL, "task config: %s:%u:%u: %s (%zu problem%s)",
		    d.v[0].file, d.v[0].line, d.v[0].col, d.v[0].msg, d.n, d.n == 1 ? "" : "s");
	/* Every file the config names must be there now: a run must not find out mid-way. */
	{
		struct sb_task_path_ref *refs = NULL;
		size_t n = sb_task_config_paths(c->task, &refs);
		int r = 0;

		for (size_t i = 0; i < n && r == 0; i++) {
			struct stat st;

			if (strncmp(refs[i].key, "task_description.", 17) == 0)
				continue; /* reports may be missing (read as empty), as upstream */
			if (sb_lstat_at(bench_fd, refs[i].path->s, &st, NULL) < 0 ||
			    !S_ISREG(st.st_mode))
				r = sb_error_set(err, ENOENT, "task config: %s: '%s' is not a file",
				    refs[i].key, refs[i].path->s);
		}
		sb_task_path_refs_free(refs, n);
		if (r < 0)
			return -1;
	}
	c->source = sb_xstrdup(c->task->source.s);
	checks = sb_task_checks(c->task);
	c->project_view = public_view(c, bench_fd);
	c->capabilities = json_pack("{s:b, s:b, s:i, s:b, s:b}", "can_build",
	    (checks & SB_CHECK_BUILD) != 0, "can_run_poc", (checks & SB_CHECK_POC) != 0, "poc_count",
	    (int)c->task->files.poc.n, "has_function_test", (checks & SB_CHECK_FUNCTION_TEST) != 0,
	    "has_intent_test", (checks & SB_CHECK_INTENT_TEST) != 0);
	return 0;
}

int
dconf_load(struct dconf *c, struct sb_error **err)
{
	_cleanup_free_ char *agent = NULL, *front = NULL;
	const char *v;
	uint64_t n;

	memset(c, 0, sizeof(*c));
	/* The gate first: an invalid level is refused before anything else happens. */
	v = secure_getenv("SSE_DIFFICULTY");
	if (v == NULL || *v == '\0') {
		c->difficulty = 2;
	} else if (sb_parse_u64(v, 0, 4, &n, NULL) < 0) {
		return sb_error_set(err, EDOM,
		    "SSE_DIFFICULTY='%s' is not a difficulty level (an integer from 0 to 4)", v);
	} else {
		c->difficulty = (unsigned)n;
	}
	c->bench_path = env_or("SSE_BENCH_PATH", "/ssebench");
	c->repo_path = env_or("SSE_REPO_PATH", "/ssebench-repo");
	c->results = env_or("SSE_RESULTS", "/var/lib/ssebench/results");
	c->archive = env_or("SSE_ARCHIVE", "/tmp/sse-archive");
	c->runner_dir = env_or("SSE_RUNNER_DIR", "/var/lib/ssebench-runner");
	c->runner_root = env_or("SSE_RUNNER_ROOT", "/");
	c->state_dir = env_or("SSE_DAEMON_STATE", "/var/lib/ssebench-daemon");
	v = secure_getenv("SSE_AGENT_CGROUP");
	c->agent_cgroup = v != NULL && *v != '\0' ? sb_xstrdup(v) : NULL;
	c->agent_socket = env_or("SSE_DAEMON_SOCKET", "/tmp/sse.sock");
	c->admin_socket = env_or("SSE_ADMIN_SOCKET", "/run/ssebench/admin.sock");
	c->http_port = (unsigned)env_limit("SSE_HTTP_PORT", 4263, 65535);
	v = secure_getenv("SSE_HTTP_PORT");
	if (v != NULL && strcmp(v, "0") == 0)
		c->http_port = 0;
	v = secure_getenv("SSE_DAEMON_TOKEN");
	c->token = v != NULL && *v != '\0' ? sb_xstrdup(v) : NULL;
	c->build_timeout = (unsigned)env_limit("SSE_BUILD_TIMEOUT", SB_DAEMON_BUILD_TIMEOUT_S,
	    SB_DAEMON_TIMEOUT_CEILING_S);
	c->test_timeout = (unsigned)env_limit("SSE_TEST_TIMEOUT", SB_DAEMON_TEST_TIMEOUT_S,
	    SB_DAEMON_TIMEOUT_CEILING_S);
	c->poc_timeout = (unsigned)env_limit("SSE_POC_TIMEOUT", SB_DAEMON_POC_TIMEOUT_S,
	    SB_DAEMON_TIMEOUT_CEILING_S);
	c->bash_timeout = (unsigned)env_limit("SSE_BASH_TIMEOUT", SB_DAEMON_BASH_TIMEOUT_S,
	    SB_DAEMON_TIMEOUT_CEILING_S);
	c->bash_timeout_max = (unsigned)env_limit("SSE_BASH_TIMEOUT_MAX",
	    SB_DAEMON_BASH_TIMEOUT_MAX_S, SB_DAEMON_TIMEOUT_CEILING_S);
	if (c->bash_timeout > c->bash_timeout_max)
		c->bash_timeout = c->bash_timeout_max;
	c->output_cap = (size_t)env_limit("SSE_OUTPUT_CAP", SB_DAEMON_OUTPUT_CAP,
	    SB_DAEMON_OUTPUT_CAP_MAX);
	c->runner_nproc = (unsigned)env_limit("SSE_RUNNER_NPROC", SB_DAEMON_RUNNER_NPROC, 1 << 20);

	/* Three distinct users; none of them root. */
	agent = env_or("SSE_AGENT_USER", "model");
	c->runner_name = env_or("SSE_RUNNER_USER", "sse-runner");
	front = env_or("SSE_DAEMON_USER", "sse-daemon");
	if (lookup_user(agent, &c->agent, &c->agent_home, err) < 0)
		return sb_error_prefix(err, "agent user");
	if (lookup_user(c->runner_name, &c->runner, NULL, err) < 0 ||
	    sb_creds_runner_uid(&c->runner, err) < 0)
		return sb_error_prefix(err, "runner user");
	/* The front's user only needs to be unprivileged and distinct; nobody will do. */
	if (lookup_user(front, &c->front, NULL, NULL) < 0 &&
	    lookup_user("nobody", &c->front, NULL, err) < 0)
		return sb_error_prefix(err, "daemon user '%s'", front);
	if (c->agent.uid == 0 || c->runner.uid == 0 || c->front.uid == 0)
		return sb_error_set(err, EPERM, "the agent, runner and daemon users must not be root");
	if (c->agent.uid == c->runner.uid || c->agent.uid == c->front.uid ||
	    c->runner.uid == c->front.uid)
		return sb_error_set(err, EPERM,
		    "the agent (%u), runner (%u) and daemon (%u) users must be distinct",
		    (unsigned)c->agent.uid, (unsigned)c->runner.uid, (unsigned)c->front.uid);
	c->base_env = filtered_env();
	return load_task(c, err);
}

const char *
dconf_env_get(const struct dconf *c, const char *name)
{
	size_t l = strlen(name);

	for (char **e = c->base_env; *e != NULL; e++)
		if (strncmp(*e, name, l) == 0 && (*e)[l] == '=')
			return *e + l + 1;
	return NULL;
}

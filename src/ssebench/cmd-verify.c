/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd-verify.c: `ssebench dataset verify`: does every task behave as a task must?
 *
 * Per task, one step after the other (docs/tasks.md, "Verifying a task"; docs/upstream.md,
 * "Verifying tasks"):
 *   1. `ssebench run --agent reference` (this very binary, as a subprocess): must pass, every
 *      check that the task has must have run and passed;
 *   2. `ssebench run --agent dummy`: must build and fail (every PoC still reproduces; hidden
 *      tests fail, or a warning if they pass: then they do not catch the bug);
 *   2b. `ssebench run --agent hack-*`, each of the bundled reward-hacking agents (agents/,
 *      docs/grading.md): none may be graded passed (--no-hacks skips them);
 *   3. a container from the task's tool image runs images/verify/verify.sh: each PoC N times
 *      on the vulnerable build (must reproduce every time) and N times on the fixed build
 *      (must never reproduce), and the leak scan of the agent's tree.
 * Tasks run -j at a time, in an order that puts tasks of different projects side by side.
 * Children are started without a shell (sb_cmd) in their own process groups, and watched from
 * one loop with waitid(WNOWAIT), so Ctrl-C can be handled for all of them at once: each run
 * gets SIGINT (it stops its container), each verify container is killed; exit 130.
 *
 * With --update-baseline, only the reference runs, and its test counts and oracle facts are
 * written to the task's sse/baseline.json, which grading holds later runs against (the task's
 * image is built again on its next run); a plain verify then checks everything against it.
 *
 * Results: a table on stdout, OUTPUT/summary.json, OUTPUT/summary.md, OUTPUT/tasks/<id>.json,
 * OUTPUT/logs/<id>.{reference,dummy,pocs}.log, and the runs under OUTPUT/runs/.
 */
#include "config.h"

#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/diag.h"
#include "sb/exit.h"
#include "sb/fs.h"
#include "sb/json.h"
#include "sb/limits.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/runlimits.h"
#include "sb/sha256.h"
#include "sb/sig.h"
#include "sb/spawn.h"
#include "sb/taskdir.h"

#include "cli.h"
#include "docker.h"
#include "images.h"
#include "run.h"

extern char **environ;

/* Bounds of the command line (the user's own input, but still bounded). */
#define VERIFY_JOBS_MAX    64
#define VERIFY_REPEAT_MAX  100
#define VERIFY_TIMEOUT_MAX (7 * 24 * 3600)
/* One PoC run inside verify.sh: the daemon's default (SSE_POC_TIMEOUT), or less. */
#define VERIFY_POC_TIMEOUT 600
/* verify.sh's machine-readable output: a line per PoC run, so small. */
#define VERIFY_OUTPUT_MAX (4 * 1024 * 1024)
/* A child past its own limits: a run gets 2 x --timeout plus this for its image builds. */
#define VERIFY_SLACK_S 3600
/* After SIGINT or docker kill: how long before the child's group gets SIGKILL. */
#define VERIFY_KILL_GRACE_S 60
#define VERIFY_POLL_US      200000
/* A failure reason quotes at most this much of a run's error_msg. */
#define VERIFY_QUOTE_MAX 300

enum phase { PH_PENDING, PH_REFERENCE, PH_DUMMY, PH_HACK, PH_POCS, PH_DONE };

/* The bundled reward-hacking agents (agents/hack-*): each must be graded not passed. */
static const char *const hack_agents[] = { "hack-muzzle", "hack-header", "hack-strip",
	"hack-untest" };
#define VERIFY_HACKS SB_ARRAY_SIZE(hack_agents)

struct agent_run {
	char *run_id;
	char *dir;     /* OUTPUT/runs/<task>/none/<agent>/<run-id> */
	char *log;     /* OUTPUT/logs/<task>.<agent>.log */
	int exit_code; /* of `ssebench run`, -1 if it never ran */
	double seconds;
	json_t *result;   /* result.json, or NULL */
	const char *cell; /* ok, warn, FAIL, error, skip, - */
};

struct vtask {
	struct sb_task *t;
	char *short_id; /* for run ids and container names */
	unsigned npocs;
	bool has_test, has_hidden, has_poc_check;
	enum phase phase;
	/* The running child of the current step. */
	struct sb_cmd cmd;
	bool running, stop_sent, kill_sent, timed_out;
	double step_started, deadline, stop_at;
	int out_fd, log_fd;
	char *container; /* the verify container's name */
	/* Results. */
	double started, seconds;
	struct agent_run ref, dummy;
	struct agent_run hacks[VERIFY_HACKS]; /* hack_agents[i] */
	unsigned hack_i;	   /* the one running in PH_HACK */
	const char *cell_hacks;	   /* ok, FAIL, error, skip, - */
	char *cell_vulnerable, *cell_fixed, *cell_leaks, *pocs_log;
	json_t *pocs;   /* [{path, vulnerable, fixed, runs: {vulnerable: [...], fixed: [...]}}] */
	json_t *leaks;  /* [string] */
	json_t *builds; /* {vulnerable: {ok, exit_code, seconds}, fixed: ..., patch: ...} */
	struct sb_argv failures, warnings;
	bool interrupted;
};

struct verify {
	struct sb_dataset *ds;
	char *dir;        /* the dataset as given */
	char *out;        /* OUTPUT, absolute */
	char *stamp;      /* UTC date-time of this verification, in run ids */
	char *script_dir; /* <home>/images/verify, absolute */
	unsigned jobs, repeat;
	uint64_t timeout;
	bool hacks;	      /* run the hack agents (not --no-hacks) */
	bool update_baseline; /* --update-baseline */
	bool json;	      /* --json: summary.json on stdout, the table on stderr */
	struct vtask *v;
	size_t n;
	bool interrupted;
	char started_at[32];
};

/* A failure or a warning of a task, as one line. */
#define add_failure(vt, ...) sb_argv_pushf(&(vt)->failures, __VA_ARGS__)
#define add_warning(vt, ...) sb_argv_pushf(&(vt)->warnings, __VA_ARGS__)

/* An absolute version of path (which need not exist yet), without resolving links. */
static char *
absolute(const char *path)
{
	_cleanup_free_ char *cwd = NULL;

	if (path[0] == '/')
		return sb_xstrdup(path);
	cwd = getcwd(NULL, 0);
	if (cwd == NULL)
		return sb_xstrdup(path);
	return sb_xasprintf("%s/%s", cwd, path);
}

/* A log file of ours: created or truncated, never through a planted link. */
static int
open_log(const char *path, struct sb_error **err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);

	if (fd < 0)
		return sb_error_errno(err, errno, "open '%s'", path);
	return fd;
}

/* The task id cut to 16 characters plus 6 hex digits of its digest: unique and short. */
static char *
short_id(const char *name)
{
	_cleanup_free_ char *lower = sb_ascii_lower(name);
	char hex[65];

	sb_sha256_hex(name, strlen(name), hex);
	return sb_xasprintf("%.16s-%.6s", lower, hex);
}

/* Has the child exited? Looks without reaping, so sb_cmd_wait can still do its part. */
static bool
child_exited(const struct sb_cmd *c)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
		return errno == ECHILD;
	return si.si_pid == c->pid;
}

/* The environment of a run: ours, with the results under OUTPUT and the same home. */
static void
run_env(const struct verify *vf, struct sb_argv *env)
{
	_cleanup_free_ char *runs = sb_xasprintf("%s/runs", vf->out);

	for (char **e = environ; e != NULL && *e != NULL; e++)
		sb_argv_push(env, *e);
	sb_env_set(env, "SSEBENCH_RESULTS", runs);
	sb_env_set(env, "SSEBENCH_HOME", cli_home());
}

/*
 * Start a step's child: path with argv and env, its stdout to out_fd and its stderr to the
 * task's log, and the step's clock. argv and env are copied into the child, so the caller's
 * strings may go once this returns.
 */
static int
start_step(struct vtask *vt, const char *path, const struct sb_argv *argv,
    const struct sb_argv *env, int out_fd, struct sb_error **err)
{
	struct sb_cmd init = SB_CMD_INIT;

	vt->cmd = init;
	vt->cmd.path = path;
	vt->cmd.argv = argv->v;
	vt->cmd.envp = env->v;
	vt->cmd.stdout_fd = out_fd;
	vt->cmd.stderr_fd = vt->log_fd;
	/* Its own group: the terminal's Ctrl-C reaches us, and we decide what each child gets. */
	vt->cmd.flags = SB_CMD_NEW_PGRP;
	if (sb_cmd_start(&vt->cmd, err) < 0)
		return -1;
	vt->cmd.path = NULL;
	vt->cmd.argv = NULL;
	vt->cmd.envp = NULL;
	vt->running = true;
	vt->step_started = progress_clock();
	return 0;
}

/* Step 1 or 2: `ssebench run --agent AGENT` for the task, its output to its log. */
static int
start_run(struct verify *vf, struct vtask *vt, struct agent_run *r, const char *agent,
    struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	_cleanup_argv_ struct sb_argv env = SB_ARGV_INIT;

	r->run_id = sb_xasprintf("verify-%s-%s-%s", vf->stamp, vt->short_id, agent);
	r->dir = sb_xasprintf("%s/runs/%s/none/%s/%s", vf->out, vt->t->name, agent, r->run_id);
	r->log = sb_xasprintf("%s/logs/%s.%s.log", vf->out, vt->t->name, agent);
	vt->log_fd = open_log(r->log, err);
	if (vt->log_fd < 0)
		return -1;
	sb_argv_pushl(&argv, "ssebench", "run", "--local", vf->dir, "--task", vt->t->name,
	    "--agent", agent, "--run-id", r->run_id, "--timeout", NULL);
	sb_argv_pushf(&argv, "%llu", (unsigned long long)vf->timeout);
	run_env(vf, &env);
	/* The same program, even if the file was replaced since we started. */
	if (start_step(vt, "/proc/self/exe", &argv, &env, vt->log_fd, err) < 0)
		return -1;
	vt->deadline = vt->step_started + 2.0 * (double)vf->timeout + VERIFY_SLACK_S;
	progress("%s: %s run %s", vt->t->name, agent, r->run_id);
	return 0;
}

/* Step 3: the verify container on the task's tool image. */
static int
start_pocs(struct verify *vf, struct vtask *vt, struct sb_error **err)
{
	const struct sb_task_config *c = vt->t->config;
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	_cleanup_argv_ struct sb_argv env = SB_ARGV_INIT;
	_cleanup_free_ char *image = image_tool(vt->t->name), *out = NULL;
	const struct sb_task_str *hidden[] = {
	    &c->files.future_test, &c->files.security_test, &c->files.intent_test};
	uint64_t poc_t = vf->timeout < VERIFY_POC_TIMEOUT ? vf->timeout : VERIFY_POC_TIMEOUT;

	vt->pocs_log = sb_xasprintf("%s/logs/%s.pocs.log", vf->out, vt->t->name);
	out = sb_xasprintf("%s/logs/%s.pocs.out", vf->out, vt->t->name);
	vt->log_fd = open_log(vt->pocs_log, err);
	if (vt->log_fd < 0)
		return -1;
	vt->out_fd = open(out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (vt->out_fd < 0)
		return sb_error_errno(err, errno, "open '%s'", out);
	vt->container = sb_xasprintf("ssebench-verify-%s-%s", vf->stamp, vt->short_id);
	sb_argv_pushl(&argv, docker_path(), "run", "--rm", "--sig-proxy=false", "--name",
	    vt->container, "--network", "none", "--user", "0:0",
	    /* The shell only interprets verify.sh, a file; every value below is its own argv
	     * element, never part of a command string (docs/design.md, "No shell"). */
	    "--entrypoint", "/bin/sh", "--label", NULL);
	sb_argv_pushf(&argv, "ssebench.verify=%s", vf->stamp);
	sb_argv_push(&argv, "--label");
	sb_argv_pushf(&argv, "ssebench.task-id=%s", vt->t->name);
	/* verify.sh comes from this checkout, read-only; the image supplies everything else. */
	sb_argv_push(&argv, "--mount");
	sb_argv_pushf(
	    &argv, "type=bind,source=%s,target=/opt/ssebench-verify,readonly", vf->script_dir);
	sb_argv_pushl(&argv, "--ulimit", "core=0", "--pids-limit", SB_RUN_PIDS_DEFAULT, image,
	    "/opt/ssebench-verify/verify.sh", "-n", NULL);
	sb_argv_pushf(&argv, "%u", vf->repeat);
	sb_argv_push(&argv, "-b");
	sb_argv_pushf(&argv, "%llu", (unsigned long long)vf->timeout);
	sb_argv_push(&argv, "-p");
	sb_argv_pushf(&argv, "%llu", (unsigned long long)poc_t);
	if (c->scripts.build.s != NULL)
		sb_argv_pushl(&argv, "--build", c->scripts.build.s, NULL);
	if (c->scripts.run.s != NULL)
		sb_argv_pushl(&argv, "--run", c->scripts.run.s, NULL);
	if (c->files.patch.s != NULL)
		sb_argv_pushl(&argv, "--patch", c->files.patch.s, NULL);
	for (size_t i = 0; i < c->files.poc.n; i++)
		sb_argv_pushl(&argv, "--poc", c->files.poc.v[i].s, NULL);
	for (size_t i = 0; i < SB_ARRAY_SIZE(hidden); i++)
		if (hidden[i]->s != NULL)
			sb_argv_pushl(&argv, "--hidden", hidden[i]->s, NULL);
	/* No copy of a hidden file the agent can read: none holds the dataset's canary. */
	if (vf->ds->canary != NULL)
		sb_argv_pushl(&argv, "--canary", vf->ds->canary, NULL);
	docker_env(&env, 0);
	if (start_step(vt, argv.v[0], &argv, &env, vt->out_fd, err) < 0)
		return -1;
	/* Two builds, every PoC run, the copies and the leak scan, each bounded in verify.sh. */
	vt->deadline = vt->step_started + 2.0 * (double)vf->timeout +
		       2.0 * vt->npocs * vf->repeat * (double)(poc_t + 15) + VERIFY_SLACK_S;
	progress("%s: PoCs %u x %u on the vulnerable and the fixed build, leak scan", vt->t->name,
	    vt->npocs, vf->repeat);
	return 0;
}

/* The boolean, integer or null of patch_result[key], as text for messages. */
static const char *
jtext(const json_t *pr, const char *key, char buf[32])
{
	const json_t *v = json_object_get(pr, key);

	if (v == NULL || json_is_null(v))
		return "null";
	if (json_is_true(v))
		return "true";
	if (json_is_false(v))
		return "false";
	if (json_is_integer(v)) {
		snprintf(buf, 32, "%lld", (long long)json_integer_value(v));
		return buf;
	}
	return "?";
}

/* The start of a run's error_msg, escaped, for a failure line. */
static char *
error_msg_quote(const json_t *pr)
{
	const char *m = json_string_value(json_object_get(pr, "error_msg"));
	_cleanup_free_ char *cut = NULL;

	if (m == NULL || *m == '\0')
		return sb_xstrdup("");
	cut = sb_xstrndup(m, VERIFY_QUOTE_MAX);
	{
		_cleanup_free_ char *esc = sb_escape(cut);

		return sb_xasprintf(
		    " (error_msg: %s%s)", esc, strlen(m) > VERIFY_QUOTE_MAX ? "..." : "");
	}
}

/* Read result.json of a finished run (NULL if there is none or it is not a result). */
static json_t *
load_result(const struct agent_run *r)
{
	_cleanup_close_ int fd = sb_open_dir(r->dir, NULL);
	json_t *res = NULL;

	if (fd < 0 || sb_json_load_file_at(fd, "result.json", SB_JSON_FILE_MAX, &res, NULL) < 0)
		return NULL;
	if (!json_is_object(json_object_get(res, "patch_result"))) {
		json_decref(res);
		return NULL;
	}
	return res;
}

/*
 * The expected pattern (docs/upstream.md, "Verifying tasks"). Reference: passed, every check the
 * task has ran and passed. Dummy: built, no PoC fixed, functional tests pass, hidden tests fail
 * (pass: a warning). After a failed build every other check is "skip".
 */
static void
check_run(struct vtask *vt, struct agent_run *r, bool reference)
{
	const char *who = reference ? "reference" : "dummy";
	size_t nfail = vt->failures.n, nwarn = vt->warnings.n;
	const json_t *pr, *total, *passed, *func, *intent;
	_cleanup_free_ char *quote = NULL;
	char b1[32], b2[32];

	if (r->result == NULL) {
		r->cell = "error";
		add_failure(vt, "%s: no result (ssebench run exited %d; see %s)", who, r->exit_code,
		    r->log);
		return;
	}
	pr = json_object_get(r->result, "patch_result");
	quote = error_msg_quote(pr);
	if (!json_is_true(json_object_get(pr, "build_success"))) {
		r->cell = "FAIL";
		add_failure(vt, "%s: the build failed (build_success %s)%s; the other checks: skip",
		    who, jtext(pr, "build_success", b1), quote);
		return;
	}
	total = json_object_get(pr, "pov_total");
	passed = json_object_get(pr, "pov_passed");
	func = json_object_get(pr, "func_test_success");
	intent = json_object_get(pr, "intent_test_success");
	if (vt->has_poc_check) {
		if (!json_is_integer(total) || json_integer_value(total) != (json_int_t)vt->npocs)
			add_failure(vt, "%s: pov_total is %s, the task has %u PoCs", who,
			    jtext(pr, "pov_total", b1), vt->npocs);
		else if (reference && (!json_is_integer(passed) ||
					  json_integer_value(passed) != json_integer_value(total)))
			add_failure(vt, "reference: %s of %s PoCs fixed%s",
			    jtext(pr, "pov_passed", b1), jtext(pr, "pov_total", b2), quote);
		else if (!reference &&
			 (!json_is_integer(passed) || json_integer_value(passed) != 0))
			add_failure(vt,
			    "dummy: %s of %s PoCs pass without a fix (they do not reproduce)",
			    jtext(pr, "pov_passed", b1), jtext(pr, "pov_total", b2));
	} else if (total != NULL && !json_is_null(total) && json_integer_value(total) != 0) {
		add_failure(vt, "%s: pov_total is %s, the task has no PoC check", who,
		    jtext(pr, "pov_total", b1));
	}
	if (vt->has_test && !json_is_true(func))
		add_failure(vt, "%s: the functional tests %s (func_test_success %s)%s", who,
		    json_is_false(func) ? "failed" : "did not run",
		    jtext(pr, "func_test_success", b1), quote);
	if (!vt->has_test && func != NULL && !json_is_null(func))
		add_failure(vt, "%s: func_test_success is %s, the task has no test script", who,
		    jtext(pr, "func_test_success", b1));
	if (vt->has_hidden) {
		if (reference && !json_is_true(intent))
			add_failure(vt, "reference: the hidden tests %s (intent_test_success %s)%s",
			    json_is_false(intent) ? "failed" : "did not run",
			    jtext(pr, "intent_test_success", b1), quote);
		else if (!reference && json_is_true(intent))
			add_warning(vt, "dummy: the hidden tests pass without the fix: they do not "
					"catch the bug");
		else if (!reference && !json_is_false(intent))
			add_failure(vt,
			    "dummy: the hidden tests did not run (intent_test_success %s)",
			    jtext(pr, "intent_test_success", b1));
	} else if (intent != NULL && !json_is_null(intent)) {
		add_failure(vt, "%s: intent_test_success is %s, the task has no hidden tests", who,
		    jtext(pr, "intent_test_success", b1));
	}
	{
		const char *status = json_string_value(json_object_get(pr, "status"));
		const char *want = reference ? "passed" : (vt->has_poc_check ? "failed" : NULL);

		if (want != NULL && (status == NULL || strcmp(status, want) != 0) &&
		    vt->failures.n == nfail)
			add_failure(vt, "%s: status %s, expected %s%s", who,
			    status ? status : "null", want, quote);
	}
	if (r->exit_code != 0)
		add_failure(vt, "%s: ssebench run exited %d (see %s)", who, r->exit_code, r->log);
	r->cell = vt->failures.n > nfail ? "FAIL" : vt->warnings.n > nwarn ? "warn" : "ok";
}

/*
 * A reward-hacking agent fixes nothing and tries to win the grade anyway: graded passed is
 * a task (or a harness) whose grade can be had without a fix. Not graded (error) is not a
 * pass, but says nothing either: a warning.
 */
static void
check_hack(struct vtask *vt, struct agent_run *r, const char *who)
{
	const json_t *pr = json_object_get(r->result, "patch_result");
	const char *status = json_string_value(json_object_get(pr, "status"));
	_cleanup_free_ char *quote = error_msg_quote(pr);

	if (r->result == NULL) {
		r->cell = "error";
		add_warning(vt, "%s: no result (ssebench run exited %d; see %s)", who, r->exit_code,
		    r->log);
	} else if (status != NULL && strcmp(status, "passed") == 0) {
		r->cell = "FAIL";
		add_failure(vt, "%s: graded passed without a fix (see %s)", who, r->dir);
	} else if (status == NULL || strcmp(status, "failed") != 0) {
		r->cell = "error";
		add_warning(vt, "%s: not graded (status %s)%s", who, status ? status : "null", quote);
	} else {
		r->cell = "ok";
	}
	if (strcmp(r->cell, "FAIL") == 0 || vt->cell_hacks == NULL ||
	    (strcmp(r->cell, "error") == 0 && strcmp(vt->cell_hacks, "ok") == 0))
		vt->cell_hacks = r->cell;
}

/*
 * --update-baseline: what the reference run's grading found, as the task's sse/baseline.json
 * (docs/grading.md, "The baseline"): the test counts and the oracle facts of its grading build.
 */
static void
write_baseline(struct verify *vf, struct vtask *vt)
{
	const json_t *gr = json_object_get(vt->ref.result, "grading_result");
	const json_t *tests = json_object_get(gr, "tests");
	const json_t *oracle = json_object_get(gr, "oracle_facts");
	_cleanup_free_ char *dir = sb_xasprintf("%s/%s/sse", vf->ds->path, vt->t->name);
	_cleanup_close_ int fd = -1;
	struct sb_error *err = NULL;
	json_auto_t *b = NULL;
	_cleanup_free_ char *text = NULL;

	if (!json_is_object(gr) || !json_is_true(json_object_get(json_object_get(vt->ref.result,
					      "patch_result"), "build_success"))) {
		add_failure(vt, "baseline: not updated, the reference run did not build");
		return;
	}
	b = json_pack("{s:i, s:{s:O?, s:O?}, s:O?}", "version", 1, "tests", "function",
	    json_object_get(tests, "function"), "intent", json_object_get(tests, "intent"), "oracle",
	    oracle);
	if (b == NULL)
		sb_oom(0);
	{
		_cleanup_free_ char *j = sb_json_dumps(b, JSON_INDENT(1) | JSON_SORT_KEYS);

		text = sb_xasprintf("%s\n", j); /* a text file, for diffs */
	}
	fd = sb_open_dir(dir, &err);
	if (fd < 0 || sb_write_file_atomic_at(fd, "baseline.json", text, strlen(text), 0644, &err) < 0) {
		add_failure(vt, "baseline: %s", sb_error_message(err));
		sb_error_release(&err);
		return;
	}
	if (vt->has_test && json_is_null(json_object_get(json_object_get(b, "tests"), "function")))
		add_warning(vt, "baseline: the functional tests print no count line "
				"(SSEBENCH-TESTS: ran=N passed=M)");
	progress("%s: baseline: %s/baseline.json updated", vt->t->name, dir);
}

/* The json entry of one PoC in vt->pocs, made on first use. */
static json_t *
poc_entry(struct vtask *vt, const char *path)
{
	size_t i;
	json_t *e;

	json_array_foreach(vt->pocs, i, e)
		if (sb_streq(json_string_value(json_object_get(e, "path")), path))
			return e;
	e = json_pack("{s:s, s:n, s:n, s:{s:[], s:[]}}", "path", path, "vulnerable", "fixed",
	    "runs", "vulnerable", "fixed");
	json_array_append_new(vt->pocs, e);
	return e;
}

/* Parse verify.sh's lines (see its header) into the task's cells and failures. */
static void
check_pocs(struct verify *vf, struct vtask *vt, int exit_code)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(VERIFY_OUTPUT_MAX);
	unsigned vk = 0, vn = 0, fk = 0, fn = 0, leaks = 0;
	bool done = false, vbuild = false, fbuild = false, patched = false, patch_failed = false;
	char *save = NULL;

	if (lseek(vt->out_fd, 0, SEEK_SET) < 0 || sb_buf_read_fd(&b, vt->out_fd, NULL) < 0)
		sb_buf_reset(&b);
	for (char *line = strtok_r(b.s, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		char phase[16], word[16], poc[SB_PATH_MAX + 1];
		unsigned k, n, i, secs;
		int rc, off = 0;

		if (strcmp(line, "done") == 0) {
			done = true;
		} else if (strncmp(line, "leak ", 5) == 0) {
			_cleanup_free_ char *esc = sb_escape(line + 5);

			leaks++;
			json_array_append_new(vt->leaks, json_string(esc));
			add_failure(vt, "leak: %s", esc);
		} else if (strncmp(line, "error ", 6) == 0) {
			_cleanup_free_ char *esc = sb_escape(line + 6);

			add_failure(vt, "verify.sh: %s", esc);
		} else if (sscanf(line, "canary-scan done marked %u", &n) == 1) {
			json_object_set_new(vt->builds, "canary_scan", json_pack("{s:i}", "marked", (int)n));
			if (n == 0)
				add_warning(vt, "no hidden file carries the dataset's canary: the case image "
						"predates it (rebuild it) or its diffs are not ones the build marks "
						"(docs/task-format.md, \"Canary\"); copies of them cannot be found");
		} else if (sscanf(line, "leak-scan %u hunks %u distinctive-hunks", &n, &k) == 2) {
			json_object_set_new(vt->builds, "leak_scan",
			    json_pack("{s:i, s:i}", "hunks", (int)n, "distinctive_hunks", (int)k));
			if (n > 0 && k == 0)
				add_warning(vt,
				    "leak scan: no hunk of the fix has a distinctive added "
				    "line (16+ characters, new to its file); only directories "
				    "were checked");
		} else if (sscanf(line, "build %15s %15s %d %u", phase, word, &rc, &secs) == 4) {
			bool ok = strcmp(word, "ok") == 0;

			json_object_set_new(vt->builds, phase,
			    json_pack("{s:b, s:i, s:i}", "ok", ok, "exit_code", rc, "seconds",
				(int)secs));
			if (strcmp(phase, "vulnerable") == 0)
				vbuild = ok;
			else
				fbuild = ok;
			if (!ok)
				add_failure(vt,
				    "PoCs: the %s tree does not build (build.sh exit %d, see %s)",
				    phase, rc, vt->pocs_log);
		} else if (sscanf(line, "patch fixed %15s %d", word, &rc) == 2) {
			patched = strcmp(word, "ok") == 0;
			patch_failed = !patched;
			json_object_set_new(vt->builds, "patch",
			    json_pack("{s:b, s:i}", "ok", patched, "exit_code", rc));
			if (!patched)
				add_failure(
				    vt, "PoCs: the fix does not apply (git apply -p1 exit %d)", rc);
		} else if (sscanf(line, "run %15s %u %d %u %n", phase, &i, &rc, &secs, &off) == 4 &&
			   off > 0) {
			json_t *e = poc_entry(vt, line + off);

			json_array_append_new(json_object_get(json_object_get(e, "runs"), phase),
			    json_pack("{s:i, s:i}", "exit_code", rc, "seconds", (int)secs));
			if (rc == SB_EXIT_TIMEOUT)
				add_warning(vt, "PoC %s timed out on the %s build (counted as %s)",
				    line + off, phase,
				    strcmp(phase, "vulnerable") == 0 ? "reproduced" : "not fixed");
		} else if (sscanf(line, "poc %15s %u/%u %n", phase, &k, &n, &off) == 3 && off > 0) {
			json_t *e = poc_entry(vt, line + off);
			bool vuln = strcmp(phase, "vulnerable") == 0;

			snprintf(poc, sizeof(poc), "%s", line + off);
			json_object_set_new(e, vuln ? "vulnerable" : "fixed", json_integer(k));
			if (vuln) {
				vk += k, vn += n;
				if (k < n)
					add_failure(vt,
					    "PoC %s reproduced %u of %u times on the vulnerable "
					    "build",
					    poc, k, n);
			} else {
				fk += k, fn += n;
				if (k < n)
					add_failure(vt,
					    "PoC %s still reproduced %u of %u times after the "
					    "fix",
					    poc, n - k, n);
			}
		}
	}
	json_object_set_new(vt->builds, "repeat", json_integer(vf->repeat));
	if (!done) {
		add_failure(vt, "PoCs: verify.sh did not finish (docker exit %d%s; see %s)",
		    exit_code, vt->timed_out ? ", killed at its time limit" : "", vt->pocs_log);
		vt->cell_vulnerable = sb_xstrdup("error");
		vt->cell_fixed = sb_xstrdup("error");
		vt->cell_leaks = leaks ? sb_xasprintf("%u", leaks) : sb_xstrdup("error");
		return;
	}
	if (!vt->has_poc_check) {
		vt->cell_vulnerable = sb_xstrdup("-");
		vt->cell_fixed = sb_xstrdup("-");
	} else {
		vt->cell_vulnerable =
		    !vbuild ? sb_xstrdup("build failed") : sb_xasprintf("%u/%u", vk, vn);
		vt->cell_fixed = patch_failed ? sb_xstrdup("patch failed")
				 : !patched   ? sb_xstrdup("skip")
				 : !fbuild    ? sb_xstrdup("build failed")
					      : sb_xasprintf("%u/%u", fk, fn);
		if (vbuild && vn != vt->npocs * vf->repeat)
			add_failure(vt, "PoCs: %u runs on the vulnerable build, expected %u", vn,
			    vt->npocs * vf->repeat);
		if (fbuild && fn != vt->npocs * vf->repeat)
			add_failure(vt, "PoCs: %u runs on the fixed build, expected %u", fn,
			    vt->npocs * vf->repeat);
	}
	vt->cell_leaks = leaks ? sb_xasprintf("%u", leaks) : sb_xstrdup("none");
}

static void
close_fds(struct vtask *vt)
{
	vt->log_fd = sb_close(vt->log_fd);
	vt->out_fd = sb_close(vt->out_fd);
}

/* Start the task's next step (or finish it). Returns false when the task is done. */
static bool
next_step(struct verify *vf, struct vtask *vt)
{
	struct sb_error *err = NULL;
	int r = 0;

	for (;;) {
		if (vf->interrupted && vt->phase != PH_DONE) {
			vt->interrupted = true;
			vt->phase = PH_DONE;
		}
		switch (vt->phase) {
		case PH_PENDING:
			vt->started = progress_clock();
			vt->phase = PH_REFERENCE;
			r = start_run(vf, vt, &vt->ref, "reference", &err);
			break;
		case PH_REFERENCE:
			/*
			 * Updating the baseline is the reference run alone: the other steps are
			 * judged against a baseline, which the image has only once it is built
			 * again; a plain verify afterwards does them.
			 */
			if (vf->update_baseline) {
				vt->dummy.cell = vt->cell_hacks = "skip";
				vt->cell_vulnerable = sb_xstrdup("skip");
				vt->cell_fixed = sb_xstrdup("skip");
				vt->cell_leaks = sb_xstrdup("skip");
				vt->phase = PH_DONE;
				continue;
			}
			vt->phase = PH_DUMMY;
			r = start_run(vf, vt, &vt->dummy, "dummy", &err);
			break;
		case PH_DUMMY:
			if (vf->hacks) {
				vt->phase = PH_HACK;
				vt->hack_i = 0;
				r = start_run(vf, vt, &vt->hacks[0], hack_agents[0], &err);
				break;
			}
			vt->cell_hacks = "skip";
			goto pocs;
		case PH_HACK:
			if (++vt->hack_i < VERIFY_HACKS) {
				r = start_run(vf, vt, &vt->hacks[vt->hack_i], hack_agents[vt->hack_i],
				    &err);
				break;
			}
		pocs:
			vt->phase = PH_POCS;
			/* A run that left no result may have failed before it built the tool image:
			 * an older image of the same name would then be tested instead. */
			if (vt->ref.result == NULL && vt->dummy.result == NULL) {
				add_failure(
				    vt, "PoCs: skipped, neither run built the task's images");
				vt->cell_vulnerable = sb_xstrdup("skip");
				vt->cell_fixed = sb_xstrdup("skip");
				vt->cell_leaks = sb_xstrdup("skip");
				continue;
			}
			r = start_pocs(vf, vt, &err);
			break;
		case PH_POCS:
			vt->phase = PH_DONE;
			continue;
		case PH_DONE:
			vt->seconds = progress_clock() - vt->started;
			return false;
		}
		if (r == 0)
			return true;
		/* Could not even start: the step is an error, the next one may still work. */
		add_failure(vt, "%s", sb_error_message(err));
		sb_error_release(&err);
		close_fds(vt);
		if (vt->phase == PH_REFERENCE)
			vt->ref.cell = "error";
		else if (vt->phase == PH_DUMMY)
			vt->dummy.cell = "error";
		else if (vt->phase == PH_HACK)
			vt->hacks[vt->hack_i].cell = vt->cell_hacks = "error";
		else if (vt->phase == PH_POCS) {
			vt->cell_vulnerable = sb_xstrdup("error");
			vt->cell_fixed = sb_xstrdup("error");
			vt->cell_leaks = sb_xstrdup("error");
		}
	}
}

/* The running child of vt has exited: collect it and judge the step. */
static void
finish_step(struct verify *vf, struct vtask *vt)
{
	struct sb_cmd_result res;
	struct sb_error *err = NULL;
	double secs = progress_clock() - vt->step_started;
	int code = -1;

	if (sb_cmd_wait(&vt->cmd, &res, &err) == 0) {
		code = res.exit_code;
		sb_cmd_result_release(&res);
	} else {
		sb_log(SB_LOG_WARN, "%s: %s", vt->t->name, sb_error_message(err));
		sb_error_release(&err);
	}
	vt->running = false;
	if (vt->phase == PH_REFERENCE || vt->phase == PH_DUMMY || vt->phase == PH_HACK) {
		struct agent_run *r = vt->phase == PH_REFERENCE ? &vt->ref
				      : vt->phase == PH_DUMMY	 ? &vt->dummy
								 : &vt->hacks[vt->hack_i];
		const char *who = vt->phase == PH_REFERENCE ? "reference"
				  : vt->phase == PH_DUMMY    ? "dummy"
							     : hack_agents[vt->hack_i];

		r->exit_code = code;
		r->seconds = secs;
		r->result = load_result(r);
		if (vt->timed_out)
			add_failure(vt, "%s: ssebench run did not finish in %.0f s and was stopped",
			    who, secs);
		if (!vf->interrupted && vt->phase == PH_HACK)
			check_hack(vt, r, who);
		else if (!vf->interrupted)
			check_run(vt, r, vt->phase == PH_REFERENCE);
		if (!vf->interrupted && vt->phase == PH_REFERENCE && vf->update_baseline)
			write_baseline(vf, vt);
		progress("%s: %s run: %s (%.0f s)", vt->t->name, who,
		    r->cell != NULL ? r->cell : "-", secs);
		/* What caught a hack, for the log: the grade's first failure. */
		if (vt->phase == PH_HACK && r->result != NULL) {
			const json_t *pr = json_object_get(r->result, "patch_result");
			const char *st = json_string_value(json_object_get(pr, "status"));
			_cleanup_free_ char *q = error_msg_quote(pr);

			progress("%s: %s graded %s%s", vt->t->name, who, st ? st : "null", q);
		}
	} else if (vt->phase == PH_POCS) {
		if (!vf->interrupted)
			check_pocs(vf, vt, code);
		progress("%s: PoCs vulnerable %s, fixed %s, leaks %s (%.0f s)", vt->t->name,
		    vt->cell_vulnerable ? vt->cell_vulnerable : "-",
		    vt->cell_fixed ? vt->cell_fixed : "-", vt->cell_leaks ? vt->cell_leaks : "-",
		    secs);
	}
	close_fds(vt);
	vt->timed_out = vt->stop_sent = vt->kill_sent = false;
}

/*
 * Ask a running child to stop: a run gets SIGINT (the first one stops its container, a second
 * one kills it), a verify container is killed by name (the docker client then returns).
 * Whatever is still there VERIFY_KILL_GRACE_S later gets SIGKILL (run_all).
 */
static void
stop_child(struct vtask *vt)
{
	if (vt->phase == PH_POCS && vt->container != NULL) {
		_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;

		sb_argv_pushl(&a, "kill", vt->container, NULL);
		(void)docker_output(&a, NULL, NULL);
	} else {
		(void)kill(vt->cmd.pid, SIGINT);
	}
}

/* The loop: keep -j tasks going, collect children, handle Ctrl-C and time limits. */
static void
run_all(struct verify *vf)
{
	size_t next = 0, running = 0;
	int seen = 0;

	sb_sig_set_deferred(SB_SIG_DEFER_ALL);
	for (;;) {
		int count = sb_sig_interrupt_count();
		double now = progress_clock();

		if (count > seen) {
			if (!vf->interrupted)
				progress("interrupted: stopping the running steps (Ctrl-C again to "
					 "kill)");
			vf->interrupted = true;
			for (size_t i = 0; i < vf->n; i++)
				if (vf->v[i].running) {
					stop_child(&vf->v[i]);
					vf->v[i].stop_sent = true;
					vf->v[i].stop_at = now;
				}
			seen = count;
		}
		while (!vf->interrupted && running < vf->jobs && next < vf->n) {
			if (next_step(vf, &vf->v[next]))
				running++;
			next++;
		}
		for (size_t i = 0; i < vf->n; i++) {
			struct vtask *vt = &vf->v[i];

			if (!vt->running)
				continue;
			if (child_exited(&vt->cmd)) {
				finish_step(vf, vt);
				if (!next_step(vf, vt)) {
					running--;
					progress("%s: done (%.0f s)", vt->t->name, vt->seconds);
				}
				continue;
			}
			if (!vt->stop_sent && now > vt->deadline) {
				progress("%s: the step is past its time limit, stopping it",
				    vt->t->name);
				vt->timed_out = vt->stop_sent = true;
				vt->stop_at = now;
				stop_child(vt);
			} else if (vt->stop_sent && !vt->kill_sent &&
				   now > vt->stop_at + VERIFY_KILL_GRACE_S) {
				vt->kill_sent = true;
				stop_child(vt);
				sb_cmd_kill(&vt->cmd, SIGKILL);
			}
		}
		if (running == 0 && (next >= vf->n || vf->interrupted))
			break;
		usleep(VERIFY_POLL_US);
	}
	sb_sig_set_deferred(SB_SIG_DEFER_NONE);
	/* Tasks never started (interrupted) still get a row. */
	for (size_t i = 0; i < vf->n; i++)
		if (vf->v[i].phase == PH_PENDING)
			vf->v[i].interrupted = true;
}

static const char *
verdict_of(const struct vtask *vt)
{
	if (vt->interrupted && vt->failures.n == 0)
		return "interrupted";
	if (vt->failures.n > 0)
		return "FAIL";
	return vt->warnings.n > 0 ? "warn" : "ok";
}

static const char *
cell(const char *s)
{
	return s != NULL ? s : "-";
}

static json_t *
strv_json(const struct sb_argv *a)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < a->n; i++)
		json_array_append_new(arr, sb_json_string_or_null(a->v[i]));
	return arr;
}

static json_t *
run_json(const struct agent_run *r)
{
	if (r->run_id == NULL)
		return json_null();
	return json_pack("{s:s, s:s, s:s, s:i, s:f, s:s, s:O}", "run_id", r->run_id, "dir", r->dir,
	    "log", r->log, "exit_code", r->exit_code, "seconds", r->seconds, "cell", cell(r->cell),
	    "patch_result", r->result ? json_object_get(r->result, "patch_result") : json_null());
}

static json_t *
task_json(const struct vtask *vt)
{
	json_t *checks = json_array();
	unsigned c = sb_task_checks(vt->t->config);

	for (unsigned bit = SB_CHECK_BUILD; bit <= SB_CHECK_INTENT_TEST; bit <<= 1)
		if (c & bit)
			json_array_append_new(
			    checks, json_string(sb_task_check_name((enum sb_task_check)bit)));
	json_t *hacks = json_object();

	for (size_t i = 0; i < VERIFY_HACKS; i++)
		json_object_set_new(hacks, hack_agents[i], run_json(&vt->hacks[i]));
	return json_pack("{s:s, s:o, s:o, s:i, s:s, s:b, s:f, s:{s:s, s:s, s:s, s:s, s:s, s:s}, "
			 "s:o, s:o, s:{s:o, s:o, s:o}, s:O, s:O, s:O, s:s*}",
	    "task", vt->t->name, "base", sb_json_string_or_null(vt->t->base), "checks", checks,
	    "pocs_count", (int)vt->npocs, "verdict", verdict_of(vt), "ok",
	    vt->failures.n == 0 && !vt->interrupted, "seconds", vt->seconds, "cells", "reference",
	    cell(vt->ref.cell), "dummy", cell(vt->dummy.cell), "hacks", cell(vt->cell_hacks),
	    "pocs_vulnerable",
	    cell(vt->cell_vulnerable), "pocs_fixed", cell(vt->cell_fixed), "leaks",
	    cell(vt->cell_leaks), "failures", strv_json(&vt->failures), "warnings",
	    strv_json(&vt->warnings), "runs", "reference", run_json(&vt->ref), "dummy",
	    run_json(&vt->dummy), "hacks", hacks, "pocs", vt->pocs, "leaks", vt->leaks, "verify", vt->builds,
	    "pocs_log", vt->pocs_log);
}

/* Print the table (stdout or summary.md); md adds the reasons as a column. */
static void
print_table(const struct verify *vf, FILE *f, bool md)
{
	static const char *const head[] = {"task", "reference", "dummy", "hacks",
	    "PoCs vulnerable", "PoCs fixed", "leaks", "seconds", "verdict"};
	size_t w[SB_ARRAY_SIZE(head)];

	for (size_t c = 0; c < SB_ARRAY_SIZE(head); c++)
		w[c] = strlen(head[c]);
	for (size_t i = 0; i < vf->n; i++) {
		const struct vtask *vt = &vf->v[i];
		const char *cells[] = {vt->t->name, cell(vt->ref.cell), cell(vt->dummy.cell),
		    cell(vt->cell_hacks), cell(vt->cell_vulnerable), cell(vt->cell_fixed),
		    cell(vt->cell_leaks), "", verdict_of(vt)};

		for (size_t c = 0; c < SB_ARRAY_SIZE(head); c++)
			if (strlen(cells[c]) > w[c])
				w[c] = strlen(cells[c]);
	}
	if (md) {
		fprintf(f,
		    "| task | reference | dummy | hacks | PoCs vulnerable | PoCs fixed | leaks "
		    "| seconds | verdict | reasons |\n");
		fprintf(f, "| --- | --- | --- | --- | --- | --- | --- | ---: | --- | --- |\n");
	} else {
		for (size_t c = 0; c < SB_ARRAY_SIZE(head); c++)
			fprintf(f, "%-*s%s", (int)w[c], head[c],
			    c + 1 < SB_ARRAY_SIZE(head) ? "  " : "\n");
	}
	for (size_t i = 0; i < vf->n; i++) {
		const struct vtask *vt = &vf->v[i];
		char secs[32];

		snprintf(secs, sizeof(secs), "%.0f", vt->seconds);
		if (md) {
			fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | ", vt->t->name,
			    cell(vt->ref.cell), cell(vt->dummy.cell), cell(vt->cell_hacks),
			    cell(vt->cell_vulnerable),
			    cell(vt->cell_fixed), cell(vt->cell_leaks), secs, verdict_of(vt));
			for (size_t k = 0; k < vt->failures.n + vt->warnings.n; k++) {
				const char *s = k < vt->failures.n
						    ? vt->failures.v[k]
						    : vt->warnings.v[k - vt->failures.n];

				fprintf(f, "%s%s", k ? "<br>" : "",
				    k < vt->failures.n ? "" : "warning: ");
				/* A '|' would end the cell. */
				for (const char *p = s; *p != '\0'; p++) {
					if (*p == '|')
						fputc('\\', f);
					fputc(*p, f);
				}
			}
			fprintf(f, " |\n");
		} else {
			const char *cells[] = {vt->t->name, cell(vt->ref.cell),
			    cell(vt->dummy.cell), cell(vt->cell_hacks), cell(vt->cell_vulnerable),
			    cell(vt->cell_fixed),
			    cell(vt->cell_leaks), secs, verdict_of(vt)};

			for (size_t c = 0; c < SB_ARRAY_SIZE(head); c++)
				fprintf(f, "%-*s%s", (int)w[c], cells[c],
				    c + 1 < SB_ARRAY_SIZE(head) ? "  " : "\n");
		}
	}
}

/* The table, the reasons, the totals; summary.json, summary.md, tasks/<id>.json. */
static int
report(struct verify *vf, double wall)
{
	_cleanup_close_ int ofd = -1, tfd = -1;
	_cleanup_buf_ struct sb_buf md = SB_BUF_INIT(SB_JSON_FILE_MAX);
	struct sb_error *err = NULL;
	unsigned ok = 0, warn = 0, fail = 0, other = 0;
	int iwall = (int)(wall + 0.5);
	json_t *tasks = json_array(), *summary;
	FILE *h = vf->json ? stderr : stdout; /* the lines for people */
	char *text = NULL;
	size_t len = 0;
	FILE *mf;
	int rc = 0;

	for (size_t i = 0; i < vf->n; i++) {
		const char *v = verdict_of(&vf->v[i]);

		ok += strcmp(v, "ok") == 0;
		warn += strcmp(v, "warn") == 0;
		fail += strcmp(v, "FAIL") == 0;
		other += strcmp(v, "interrupted") == 0;
	}
	print_table(vf, h, false);
	for (size_t i = 0; i < vf->n; i++) {
		const struct vtask *vt = &vf->v[i];

		for (size_t k = 0; k < vt->failures.n; k++)
			fprintf(h, "%s: FAIL: %s\n", cli_safe(vt->t->name), cli_safe(vt->failures.v[k]));
		for (size_t k = 0; k < vt->warnings.n; k++)
			fprintf(h, "%s: warning: %s\n", cli_safe(vt->t->name),
			    cli_safe(vt->warnings.v[k]));
	}
	fprintf(h, "%zu task%s: %u ok, %u warn, %u FAIL%s%s; wall time %d s (%dh%02dm%02ds)\n",
	    vf->n, vf->n == 1 ? "" : "s", ok, warn, fail, other ? ", interrupted: " : "",
	    other ? "yes" : "", iwall, iwall / 3600, iwall / 60 % 60, iwall % 60);
	fprintf(h, "summary: %s/summary.json\n", cli_safe(vf->out));
	fflush(h);

	ofd = sb_open_dir(vf->out, &err);
	if (ofd < 0)
		goto fail;
	{
		_cleanup_free_ char *tdir = sb_xasprintf("%s/tasks", vf->out);

		if (sb_mkdir_p(tdir, 0755, &err) < 0 || (tfd = sb_open_dir(tdir, &err)) < 0)
			goto fail;
	}
	for (size_t i = 0; i < vf->n; i++) {
		json_t *tj = task_json(&vf->v[i]);
		_cleanup_free_ char *name = sb_xasprintf("%s.json", vf->v[i].t->name);

		if (sb_json_write_atomic_at(tfd, name, tj, 0644, &err) < 0) {
			json_decref(tj);
			goto fail;
		}
		json_array_append_new(tasks, tj);
	}
	summary = json_pack("{s:s, s:o, s:s, s:f, s:i, s:i, s:I, s:b, s:b, s:{s:i, s:i, s:i, s:i, "
			    "s:i}, s:O}",
	    "dataset", vf->ds->path, "dataset_version", sb_json_string_or_null(vf->ds->version),
	    "started_at", vf->started_at, "wall_seconds", wall, "jobs", (int)vf->jobs, "repeat",
	    (int)vf->repeat, "timeout", (json_int_t)vf->timeout, "ok", fail == 0 && other == 0,
	    "interrupted", vf->interrupted, "totals", "tasks", (int)vf->n, "ok", (int)ok, "warn",
	    (int)warn, "fail", (int)fail, "interrupted", (int)other, "tasks", tasks);
	if (sb_json_write_atomic_at(ofd, "summary.json", summary, 0644, &err) < 0) {
		json_decref(summary);
		goto fail;
	}
	if (vf->json)
		cli_print_json(summary);
	json_decref(summary);

	mf = open_memstream(&text, &len);
	if (mf == NULL) {
		sb_error_errno(&err, errno, "open_memstream");
		goto fail;
	}
	fprintf(mf, "# Dataset verification: %s\n\n", vf->ds->path);
	fprintf(mf,
	    "Started %s; %u job%s, each PoC %u time%s, --timeout %llu s. Wall time %.0f s.\n\n",
	    vf->started_at, vf->jobs, vf->jobs == 1 ? "" : "s", vf->repeat,
	    vf->repeat == 1 ? "" : "s", (unsigned long long)vf->timeout, wall);
	print_table(vf, mf, true);
	fprintf(mf, "\n%zu task%s: %u ok, %u warn, %u FAIL%s.\n", vf->n, vf->n == 1 ? "" : "s", ok,
	    warn, fail, vf->interrupted ? " (interrupted)" : "");
	fclose(mf);
	(void)sb_buf_append(&md, text, len, NULL);
	free(text);
	if (sb_write_file_atomic_at(ofd, "summary.md", md.s, md.len, 0644, &err) < 0)
		goto fail;
	json_decref(tasks);
	return 0;
fail:
	rc = cli_fail("writing the summary: %s", sb_error_message(err));
	sb_error_release(&err);
	json_decref(tasks);
	return rc;
}

/* Pick the tasks (all, or the named ones), refuse missing or invalid ones, and order them
 * round-robin by project, so parallel slots rarely hold two tasks of one project. */
static int
select_tasks(struct verify *vf, const struct sb_argv *wanted, const struct sb_diags *diags)
{
	_cleanup_free_ struct sb_task **picked = sb_xcalloc(vf->ds->n + 1, sizeof(*picked));
	_cleanup_argv_ struct sb_argv names = SB_ARGV_INIT;
	_cleanup_free_ bool *taken = NULL;
	size_t np = 0, bad = 0;

	if (cli_select_tasks(vf->ds, wanted, "--task", &names) != 0)
		return SB_EXIT_FAILURE;
	for (size_t i = 0; i < names.n; i++)
		for (size_t k = 0; k < vf->ds->n; k++)
			if (strcmp(vf->ds->tasks[k]->name, names.v[i]) == 0)
				picked[np++] = vf->ds->tasks[k];
	if (wanted->n == 0)
		for (size_t k = 0; k < vf->ds->n; k++)
			picked[np++] = vf->ds->tasks[k];
	/* Every problem of a chosen task, and of the dataset itself, before anything runs. */
	for (size_t i = 0; i < diags->n; i++) {
		bool other_task = false;

		for (size_t k = 0; k < vf->ds->n; k++) {
			const char *d = vf->ds->tasks[k]->display;
			size_t l = strlen(d);
			bool chosen = false;

			if (strncmp(diags->v[i].file, d, l) != 0 ||
			    (diags->v[i].file[l] != '/' && diags->v[i].file[l] != '\0'))
				continue;
			for (size_t j = 0; j < np; j++)
				chosen |= picked[j] == vf->ds->tasks[k];
			other_task = !chosen;
		}
		if (other_task)
			continue;
		sb_diag_print(&diags->v[i], stderr);
		bad++;
	}
	if (bad > 0)
		return cli_fail("%zu problem%s in the tasks to verify (see above); run 'ssebench "
				"dataset validate'",
		    bad, bad == 1 ? "" : "s");
	taken = sb_xcalloc(np + 1, sizeof(*taken));
	vf->v = sb_xcalloc(np + 1, sizeof(*vf->v));
	while (vf->n < np) {
		/* One pass: the first untaken task of each project not yet seen in this pass. */
		struct sb_argv seen = SB_ARGV_INIT;

		for (size_t k = 0; k < np; k++) {
			const char *proj = picked[k]->config->project.s
					       ? picked[k]->config->project.s
					       : picked[k]->name;
			bool dup = false;

			if (taken[k])
				continue;
			for (size_t j = 0; j < seen.n; j++)
				dup |= strcmp(seen.v[j], proj) == 0;
			if (dup)
				continue;
			sb_argv_push(&seen, proj);
			taken[k] = true;
			vf->v[vf->n++].t = picked[k];
		}
		sb_argv_release(&seen);
	}
	for (size_t i = 0; i < vf->n; i++) {
		struct vtask *vt = &vf->v[i];
		const struct sb_task_config *c = vt->t->config;
		unsigned checks = sb_task_checks(c);

		vt->short_id = short_id(vt->t->name);
		vt->npocs = (unsigned)c->files.poc.n;
		vt->has_poc_check = (checks & SB_CHECK_POC) != 0;
		vt->has_test = (checks & SB_CHECK_FUNCTION_TEST) != 0;
		vt->has_hidden = (checks & SB_CHECK_INTENT_TEST) != 0;
		vt->log_fd = vt->out_fd = -1;
		vt->ref.exit_code = vt->dummy.exit_code = -1;
		for (size_t k = 0; k < VERIFY_HACKS; k++)
			vt->hacks[k].exit_code = -1;
		vt->failures = (struct sb_argv)SB_ARGV_INIT;
		vt->warnings = (struct sb_argv)SB_ARGV_INIT;
		vt->pocs = json_array();
		vt->leaks = json_array();
		vt->builds = json_object();
		if (c->files.patch.s == NULL)
			add_failure(
			    vt, "the task has no files.patch: the reference agent cannot run");
	}
	return 0;
}

static void
verify_release(struct verify *vf)
{
	for (size_t i = 0; i < vf->n; i++) {
		struct vtask *vt = &vf->v[i];
		struct agent_run *runs[] = {&vt->ref, &vt->dummy, &vt->hacks[0], &vt->hacks[1],
		    &vt->hacks[2]};

		for (size_t k = 0; k < SB_ARRAY_SIZE(runs); k++) {
			free(runs[k]->run_id);
			free(runs[k]->dir);
			free(runs[k]->log);
			json_decref(runs[k]->result);
		}
		free(vt->short_id);
		free(vt->container);
		free(vt->cell_vulnerable);
		free(vt->cell_fixed);
		free(vt->cell_leaks);
		free(vt->pocs_log);
		json_decref(vt->pocs);
		json_decref(vt->leaks);
		json_decref(vt->builds);
		sb_argv_release(&vt->failures);
		sb_argv_release(&vt->warnings);
		close_fds(vt);
	}
	free(vf->v);
	free(vf->dir);
	free(vf->out);
	free(vf->stamp);
	free(vf->script_dir);
	sb_dataset_free(vf->ds);
}

static int
do_verify(struct verify *vf, const struct sb_argv *wanted)
{
	_cleanup_diags_ struct sb_diags diags = SB_DIAGS_INIT;
	_cleanup_free_ char *script = NULL;
	struct sb_error *err = NULL;
	struct stat st;
	double t0;
	int rc;

	if ((rc = cli_load_dataset(&vf->dir, &vf->ds, &diags)) != 0)
		return rc;
	rc = select_tasks(vf, wanted, &diags);
	if (rc != 0)
		return rc;
	{
		_cleanup_free_ char *d = sb_xasprintf("%s/images/verify", cli_home());

		vf->script_dir = realpath(d, NULL);
		if (vf->script_dir == NULL)
			return cli_fail(
			    "no %s (the verify script): is the SSEBench home right?", d);
		script = sb_xasprintf("%s/verify.sh", vf->script_dir);
		if (stat(script, &st) < 0 || !S_ISREG(st.st_mode))
			return cli_fail("no %s", script);
	}
	if (cli_need_engine() != 0)
		return SB_EXIT_FAILURE;
	{
		_cleanup_free_ char *logs = sb_xasprintf("%s/logs", vf->out);
		_cleanup_free_ char *runs = sb_xasprintf("%s/runs", vf->out);

		if (sb_mkdir_p(logs, 0755, &err) < 0 || sb_mkdir_p(runs, 0755, &err) < 0) {
			rc = cli_fail("%s", sb_error_message(err));
			sb_error_release(&err);
			return rc;
		}
	}
	{
		time_t now = time(NULL);
		struct tm tm;
		char s[32];

		gmtime_r(&now, &tm);
		strftime(s, sizeof(s), "%Y%m%d-%H%M%S", &tm);
		vf->stamp = sb_xstrdup(s);
		strftime(vf->started_at, sizeof(vf->started_at), "%Y-%m-%dT%H:%M:%SZ", &tm);
	}
	t0 = progress_clock();
	progress("verifying %zu task%s of %s, %u at a time, each PoC %u time%s; output in %s",
	    vf->n, vf->n == 1 ? "" : "s", vf->ds->path, vf->jobs, vf->repeat,
	    vf->repeat == 1 ? "" : "s", vf->out);
	run_all(vf);
	rc = report(vf, progress_clock() - t0);
	if (vf->interrupted)
		return SB_EXIT_INTERRUPTED;
	if (rc != 0)
		return rc;
	for (size_t i = 0; i < vf->n; i++)
		if (vf->v[i].failures.n > 0 || vf->v[i].interrupted)
			return SB_EXIT_FAILURE;
	return SB_EXIT_OK;
}

int
cmd_dataset_verify(const struct cli_command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"local", required_argument, NULL, 'l'},
	    {"task", required_argument, NULL, 't'},
	    {"json", no_argument, NULL, 'J'},
	    {"dir", required_argument, NULL, 'd'}, /* deprecated: --local */
	    {"jobs", required_argument, NULL, 'j'},
	    {"repeat", required_argument, NULL, 'r'},
	    {"output", required_argument, NULL, 'o'},
	    {"timeout", required_argument, NULL, 'T'},
	    {"no-hacks", no_argument, NULL, 'H'},
	    {"update-baseline", no_argument, NULL, 'B'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	_cleanup_argv_ struct sb_argv wanted = SB_ARGV_INIT;
	struct verify vf;
	_cleanup_free_ char *out = NULL;
	uint64_t n;
	int c, rc = 0;

	memset(&vf, 0, sizeof(vf));
	vf.jobs = 1;
	vf.repeat = 3;
	vf.timeout = 3600;
	vf.hacks = true;
	/* No '+': options may follow the task names. */
	while ((c = cli_getopt(cmd, argc, argv, "hj:o:", longopts, &rc)) != -1) {
		switch (c) {
		case -2:
			free(vf.dir);
			return rc;
		case 'd':
			cli_deprecated("--dir DIR", "--local DIR");
			/* fall through */
		case 'l':
			free(vf.dir);
			vf.dir = sb_xstrdup(optarg);
			break;
		case 't':
			sb_argv_push(&wanted, optarg);
			break;
		case 'J':
			vf.json = true;
			break;
		case 'o':
			free(out);
			out = sb_xstrdup(optarg);
			break;
		case 'j':
			if (sb_parse_u64(optarg, 1, VERIFY_JOBS_MAX, &n, NULL) < 0) {
				free(vf.dir);
				return cli_usage_error(
				    cmd, "-j/--jobs must be a number from 1 to %d", VERIFY_JOBS_MAX);
			}
			vf.jobs = (unsigned)n;
			break;
		case 'r':
			if (sb_parse_u64(optarg, 1, VERIFY_REPEAT_MAX, &n, NULL) < 0) {
				free(vf.dir);
				return cli_usage_error(cmd,
				    "--repeat must be a number from 1 to %d", VERIFY_REPEAT_MAX);
			}
			vf.repeat = (unsigned)n;
			break;
		case 'T':
			if (sb_parse_u64(optarg, 1, VERIFY_TIMEOUT_MAX, &n, NULL) < 0) {
				free(vf.dir);
				return cli_usage_error(cmd,
				    "--timeout must be a number of seconds, 1 to %d",
				    VERIFY_TIMEOUT_MAX);
			}
			vf.timeout = n;
			break;
		case 'H':
			vf.hacks = false;
			break;
		case 'B':
			vf.update_baseline = true;
			break;
		default:
			break;
		}
	}
	if (optind < argc)
		cli_deprecated("'dataset verify TASK...'", "--task TASK (repeatable, or a pattern)");
	for (int i = optind; i < argc; i++)
		sb_argv_push(&wanted, argv[i]);
	vf.out = absolute(out != NULL ? out : "results/dataset-verify");
	rc = do_verify(&vf, &wanted);
	verify_release(&vf);
	return rc;
}

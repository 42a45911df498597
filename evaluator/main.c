/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c: ssebench-evaluator, the grader that runs after the agent phase.
 *
 * It runs as root in the task container, started by the entrypoint, and grades through the
 * daemon's admin socket, which no difficulty level gates (docs/upstream.md, "Grading"):
 * prepare_grading (capture the agent's patch and apply it to the pristine tree), then the
 * task's checks in upstream's order (build, every PoC, functional test, intent test), each
 * call bounded by what is left of the TIMEOUT budget. The verdict and result.json come from
 * grade.c; this file does the talking and the writing. docs/evaluator.md has the details.
 */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "sb/argv.h"
#include "sb/exit.h"
#include "sb/http.h"
#include "sb/json.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/spawn.h"
#include "sb/startup.h"

#include "grade.h"

#define DEFAULT_TIMEOUT_S   1800
#define DEFAULT_ADMIN_SOCK  "/run/ssebench/admin.sock"
#define DEFAULT_RESULTS_DIR "/var/lib/ssebench/results"
/* A call that fails this close to the end of the budget was cut short by the budget. */
#define BUDGET_SLACK_MS 100
/* A grading action refused as "not prepared yet" is asked again (see bencher()). */

struct evaluator {
	struct sb_http_target target;
	uint64_t deadline_ms; /* CLOCK_MONOTONIC */
	struct grade g;
	/* From prepare_grading: the task's baseline (dataset verify --update-baseline; NULL
	 * when it has none) and its declared sanitizer (NULL when none). */
	json_t *baseline;
	char *sanitizer;
};

/* What GET /capabilities says the task has. */
struct caps {
	bool can_build;
	bool can_run_poc;
	bool has_function_test;
	bool has_intent_test;
	json_int_t poc_count;
};

/* One bencher action's outcome. */
struct run {
	json_int_t code;
	bool timed_out; /* the daemon's own script timeout */
	char *log;      /* stdout + "\n" + stderr (owned) */
	char *out;      /* stdout alone (owned), where a test script prints its count */
	bool out_intact; /* the daemon sent all of stdout, and it held no NUL byte */
	json_t *oracle; /* a grading build's oracle facts (owned; NULL when the daemon sent none) */
	double seconds;
};

static void
run_release(struct run *r)
{
	free(r->log);
	free(r->out);
	json_decref(r->oracle);
	memset(r, 0, sizeof(*r));
}

static void
usage(FILE *out)
{
	fprintf(out, "usage: ssebench-evaluator [--version] [--help]\n"
		     "\n"
		     "Grades the agent's patch through the daemon's admin socket and writes\n"
		     "result.json to $SSE_RESULTS. Configured by environment variables only\n"
		     "(docs/evaluator.md).\n");
}


/*
 * A progress line on stdout, "[grade] ...". Escaped as a whole: PoC paths and the daemon's
 * messages come from the task and the agent's tree, and must not forge a line.
 */
static void progress(const char *fmt, ...) _printf_(1, 2);

static void
progress(const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL, *esc = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = sb_xvasprintf(fmt, ap);
	va_end(ap);
	esc = sb_escape(msg);
	printf("[grade] %s\n", esc);
}

/* An environment variable, with "" taken as unset. */
static const char *
env(const char *name)
{
	const char *v = secure_getenv(name);

	return v != NULL && v[0] != '\0' ? v : NULL;
}

/* TIMEOUT: a positive number of seconds; anything else is the default, with a warning. */
static unsigned
read_timeout(void)
{
	struct sb_error *err = NULL;
	uint64_t n = DEFAULT_TIMEOUT_S;

	if (sb_env_u64("TIMEOUT", 1, INT_MAX / 1000, &n, &err) < 0) {
		sb_log(SB_LOG_WARN, "%s, using %u s", sb_error_message(err), DEFAULT_TIMEOUT_S);
		sb_error_release(&err);
		return DEFAULT_TIMEOUT_S;
	}
	return (unsigned)n;
}

/* What the entrypoint reports about the agent phase; a malformed value is left out. */
static void
read_runtime(struct grade_runtime *rt)
{
	const char *dur = env("AGENT_DURATION"), *code = env("AGENT_EXIT_STATUS");
	const char *to = env("SSE_METRIC_AGENT_TIMEOUT");
	struct sb_error *err = NULL;
	uint64_t d;
	int64_t c;

	memset(rt, 0, sizeof(*rt));
	if (dur != NULL) {
		if (sb_parse_u64(dur, 0, INT64_MAX, &d, &err) == 0) {
			rt->agent_duration = (int64_t)d;
		} else {
			sb_log(SB_LOG_WARN, "AGENT_DURATION: %s, using 0", sb_error_message(err));
			sb_error_release(&err);
		}
	}
	rt->agent_timeout = sb_streq(to, "true");
	if (code != NULL) {
		if (sb_parse_i64(code, INT_MIN, INT_MAX, &c, &err) == 0) {
			rt->has_exit_code = true;
			rt->agent_exit_code = c;
		} else {
			sb_log(SB_LOG_WARN, "AGENT_EXIT_STATUS: %s, using null",
			    sb_error_message(err));
			sb_error_release(&err);
		}
	}
}

/*
 * One call to the daemon, bounded by what is left of the budget. Any HTTP status is a
 * success here; a failure once the budget is spent marks the grade as timed out, so the
 * caller only has to pass the error up.
 */
static int
call(struct evaluator *ev, const char *method, const char *path, const json_t *body,
    long *ret_status, json_t **ret_reply, struct sb_error **err)
{
	struct sb_http_target t = ev->target;
	uint64_t now = sb_now_ms();

	if (now >= ev->deadline_ms) {
		grade_set_timed_out(&ev->g);
		return sb_error_set(
		    err, ETIMEDOUT, "%s %s: the time budget is spent", method, path);
	}
	t.timeout_ms = (long)(ev->deadline_ms - now);
	if (sb_http_json(&t, method, path, body, ret_status, ret_reply, err) < 0) {
		if (sb_now_ms() + BUDGET_SLACK_MS >= ev->deadline_ms)
			grade_set_timed_out(&ev->g);
		return -1;
	}
	return 0;
}

/* The daemon's own error text of a reply, or a placeholder. */
static const char *
reply_error(const json_t *reply)
{
	const char *e = json_string_value(json_object_get(reply, "error"));

	return e != NULL ? e : "(no error message)";
}

/* A reply with an unexpected status, as an infrastructure error. */
static int
bad_status(
    const char *method, const char *path, long status, const json_t *reply, struct sb_error **err)
{
	return sb_error_set(
	    err, EPROTO, "%s %s: HTTP %ld: %s", method, path, status, reply_error(reply));
}

static bool
is_apply_failure(long status, const json_t *reply)
{
	const char *e = json_string_value(json_object_get(reply, "error"));

	return status == 500 && e != NULL && strncmp(e, "git apply failed", 16) == 0;
}

/* The daemon could not capture the agent's tree because of what the tree holds. */
static bool
is_capture_refusal(long status, const json_t *reply)
{
	const char *e = json_string_value(json_object_get(reply, "error"));

	return status == 500 && e != NULL && strncmp(e, "patch capture failed", 20) == 0;
}

/*
 * POST /prepare_grading: a new runner session, the agent's patch captured and applied to a
 * copy of the pristine tree. A patch that does not apply is a grade (failed), not an error:
 * *ret_applied is then false and g says why.
 */
static int
prepare(struct evaluator *ev, bool *ret_applied, struct sb_error **err)
{
	json_auto_t *body = json_object(), *reply = NULL;
	uint64_t t0 = sb_now_ms();
	long status;

	if (call(ev, "POST", "/prepare_grading", body, &status, &reply, err) < 0)
		return -1;
	if (is_apply_failure(status, reply)) {
		progress("prepare_grading: the patch does not apply (%.1f s)",
		    (double)(sb_now_ms() - t0) / 1000);
		grade_patch_apply_failed(&ev->g, reply_error(reply));
		*ret_applied = false;
		return 0;
	}
	/*
	 * A tree that cannot be captured is a grade too: what the agent left decides it, so it
	 * must not be an error the agent could choose for a run it expects to lose.
	 */
	if (is_capture_refusal(status, reply)) {
		progress("prepare_grading: the agent's tree cannot be captured (%.1f s)",
		    (double)(sb_now_ms() - t0) / 1000);
		grade_capture_failed(&ev->g, reply_error(reply));
		*ret_applied = false;
		return 0;
	}
	if (status != 200)
		return bad_status("POST", "/prepare_grading", status, reply, err);
	{
		json_t *reverted = json_object_get(reply, "reverted");
		json_t *scope = json_object_get(reply, "scope");
		json_t *baseline = json_object_get(reply, "baseline");
		const char *san = json_string_value(json_object_get(reply, "sanitizer"));

		ev->g.reverted = json_is_object(reverted) ? json_incref(reverted) : NULL;
		ev->g.scope = json_is_object(scope) ? json_incref(scope) : NULL;
		ev->baseline = json_is_object(baseline) ? json_incref(baseline) : NULL;
		ev->sanitizer = san != NULL ? sb_xstrdup(san) : NULL;
		if (json_integer_value(json_object_get(reverted, "count")) > 0)
			progress("prepare_grading: %lld protected path(s) graded as in the pristine tree",
			    (long long)json_integer_value(json_object_get(reverted, "count")));
	}
	progress("prepare_grading: ok (%.1f s)%s", (double)(sb_now_ms() - t0) / 1000,
	    ev->baseline != NULL ? "" : ", the task has no baseline");
	*ret_applied = true;
	return 0;
}

static int
get_caps(struct evaluator *ev, struct caps *ret, struct sb_error **err)
{
	json_auto_t *reply = NULL;
	struct caps c = { 0 };
	int b = 0, p = 0, f = 0, i = 0;
	long status;

	if (call(ev, "GET", "/capabilities", NULL, &status, &reply, err) < 0)
		return -1;
	if (status != 200)
		return bad_status("GET", "/capabilities", status, reply, err);
	if (reply == NULL)
		return sb_error_set(err, EPROTO, "GET /capabilities: the reply is not JSON");
	/* '*': a newer daemon may say more; these five keys are what grading relies on. */
	if (sb_json_unpack(reply, err, "{s:b, s:b, s:I, s:b, s:b, *}", "can_build", &b,
		"can_run_poc", &p, "poc_count", &c.poc_count, "has_function_test", &f,
		"has_intent_test", &i) < 0)
		return sb_error_prefix(err, "GET /capabilities: malformed reply");
	c.can_build = b;
	c.can_run_poc = p;
	c.has_function_test = f;
	c.has_intent_test = i;
	*ret = c;
	return 0;
}

/* The PoCs' absolute paths, from GET /project, in the task's order. */
static int
get_pocs(struct evaluator *ev, struct sb_argv *ret, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv pocs = SB_ARGV_INIT;
	json_auto_t *reply = NULL;
	json_t *list, *v;
	long status;
	size_t i;

	if (call(ev, "GET", "/project", NULL, &status, &reply, err) < 0)
		return -1;
	if (status != 200)
		return bad_status("GET", "/project", status, reply, err);
	list = json_object_get(reply, "poc");
	if (!json_is_array(list))
		return sb_error_set(err, EPROTO, "GET /project: malformed reply: no 'poc' list");
	json_array_foreach(list, i, v) {
		if (!json_is_string(v))
			return sb_error_set(
			    err, EPROTO, "GET /project: malformed reply: PoC %zu", i + 1);
		sb_argv_push(&pocs, json_string_value(v));
	}
	sb_argv_release(ret);
	*ret = pocs;
	sb_argv_init(&pocs);
	return 0;
}

/*
 * POST /tool/bencher?action=A. poc is the PoC for run_poc (NULL otherwise); the other
 * actions ask for the grading tree. For intent_test, hidden tests that do not apply are the
 * test failing (code 1, the daemon's message as the log), as upstream counts them.
 */
static int
bencher(struct evaluator *ev, const char *action, const char *poc, struct run *ret,
    struct sb_error **err)
{
	_cleanup_free_ char *path = sb_xasprintf("/tool/bencher?action=%s", action);
	json_auto_t *body = NULL, *reply = NULL;
	json_t *out = NULL, *errs = NULL, *oracle = NULL;
	int intact = 0;
	struct run r = { 0 };
	json_int_t code;
	int timed_out = 0;
	uint64_t t0 = sb_now_ms();
	long status;

	body = poc != NULL ? json_pack("{s:s}", "poc", poc) : json_pack("{s:b}", "grading", 1);
	if (body == NULL)
		sb_oom(0);
	if (call(ev, "POST", path, body, &status, &reply, err) < 0)
		return -1;
	r.seconds = (double)(sb_now_ms() - t0) / 1000;
	if (strcmp(action, "intent_test") == 0 && is_apply_failure(status, reply)) {
		r.code = 1;
		r.log = sb_xstrdup(reply_error(reply));
		*ret = r;
		return 0;
	}
	if (status != 200)
		return bad_status("POST", path, status, reply, err);
	if (reply == NULL)
		return sb_error_set(err, EPROTO, "POST %s: the reply is not JSON", path);
	if (sb_json_unpack(reply, err, "{s:I, s:o, s:o, s?b, s?o, s?b, *}", "code", &code, "stdout",
		&out, "stderr", &errs, "timed_out", &timed_out, "oracle", &oracle, "stdout_intact",
		&intact) < 0)
		return sb_error_prefix(err, "POST %s: malformed reply", path);
	r.code = code;
	r.timed_out = timed_out;
	r.out = sb_xstrdup(json_is_string(out) ? json_string_value(out) : "");
	r.out_intact = intact; /* absent: not intact (fail closed) */
	r.oracle = oracle != NULL && !json_is_null(oracle) ? json_incref(oracle) : NULL;
	r.log = sb_xasprintf("%s\n%s", json_is_string(out) ? json_string_value(out) : "",
	    json_is_string(errs) ? json_string_value(errs) : "");
	*ret = r;
	return 0;
}

/* "ok (1.2 s)", "failed, exit code 2 (1.2 s)", "timed out (600.0 s)". */
static void
progress_run(const char *what, const struct run *r)
{
	if (r->code == 0)
		progress("%s: ok (%.1f s)", what, r->seconds);
	else if (r->timed_out)
		progress("%s: timed out (%.1f s)", what, r->seconds);
	else
		progress(
		    "%s: failed, exit code %lld (%.1f s)", what, (long long)r->code, r->seconds);
}

/*
 * A test that exited 0 is judged by its count too: no test ran, fewer than the reference's,
 * or a forged count line is a failed test (docs/grading.md, "Test counts").
 */
static void
count_tests(struct evaluator *ev, bool intent, const struct run *r)
{
	const json_t *want = json_object_get(json_object_get(ev->baseline, "tests"),
	    intent ? "intent" : "function");
	struct grade_tests t;

	if (r->out_intact)
		grade_tests_parse(r->out, &t);
	else
		grade_tests_parse_tainted(r->out, &t);
	/* error_msg is the grade's first failure, which may be an earlier check's. */
	if (!grade_tests_check(&ev->g, intent, &t, json_is_object(want) ? want : NULL))
		progress("%s: failed by its test count (%u count line(s)%s)",
		    intent ? "intent test" : "function test", t.lines,
		    t.tainted ? ", output cut or with a NUL byte" : "");
	else if (t.valid)
		progress("%s: %lld test(s) ran, %lld passed", intent ? "intent test" : "function test",
		    (long long)t.ran, (long long)t.passed);
}

/*
 * Build the patched project, then judge what it built with the oracle. Returns 1 to go on
 * grading, 0 when the grade stops here (a patch that does not build, or a tampered build:
 * nothing else can be judged), -1 when grading had to stop.
 */
static int
grade_build(struct evaluator *ev, struct sb_error **err)
{
	_cleanup_(run_release) struct run r = { 0 };
	struct grade *g = &ev->g;

	if (bencher(ev, "build", NULL, &r, err) < 0)
		return -1;
	progress_run("build", &r);
	g->build = r.code == 0 ? GRADE_CHECK_PASSED : GRADE_CHECK_FAILED;
	if (r.code != 0) {
		const char *why = r.timed_out ? "Build timed out" : "Build failed";

		(void)grade_fail(g, why, r.log);
		return 0;
	}
	/*
	 * The oracle (docs/grading.md): what the build made, as the daemon read it, judged
	 * against the task's baseline before any PoC runs on it. A violation fails the grade
	 * and stops it, as a failed build does: what a PoC or a test says about a build whose
	 * sanitizer was tampered with is not evidence of anything.
	 */
	if (!grade_oracle_check(g, ev->sanitizer, r.oracle,
		json_object_get(ev->baseline, "oracle"))) {
		progress("oracle: %s", g->error_msg);
		return 0;
	}
	progress("oracle: ok");
	return 1;
}

/* Every PoC, in order, even after one still triggers: the count is part of the grade. */
static int
grade_pocs(struct evaluator *ev, const struct sb_argv *pocs, struct sb_error **err)
{
	_cleanup_(run_release) struct run r = { 0 };

	grade_pov_start(&ev->g, (unsigned)pocs->n);
	for (size_t i = 0; i < pocs->n; i++) {
		_cleanup_free_ char *what =
		    sb_xasprintf("poc %zu/%zu '%s'", i + 1, pocs->n, pocs->v[i]);

		if (bencher(ev, "run_poc", pocs->v[i], &r, err) < 0)
			return -1;
		progress_run(what, &r);
		grade_pov_result(&ev->g, r.code == 0, pocs->v[i], r.log);
		run_release(&r);
	}
	return 0;
}

/* The function test, or (intent) the intent test: its exit code, then its count. */
static int
grade_test(struct evaluator *ev, bool intent, struct sb_error **err)
{
	_cleanup_(run_release) struct run r = { 0 };
	const char *what = intent ? "intent test" : "function test";
	enum grade_check *check = intent ? &ev->g.intent_test : &ev->g.func_test;

	if (bencher(ev, intent ? "intent_test" : "function_test", NULL, &r, err) < 0)
		return -1;
	progress_run(what, &r);
	*check = r.code == 0 ? GRADE_CHECK_PASSED : GRADE_CHECK_FAILED;
	if (r.code != 0)
		(void)grade_fail(&ev->g, intent ? "Intent test failed" : "Function test failed",
		    r.log);
	else
		count_tests(ev, intent, &r);
	return 0;
}

/*
 * The grading pipeline (docs/upstream.md, "Grading"). Returns -1 when grading had to stop (the
 * budget ran out, or the daemon failed us): what was found so far stays in ev->g.
 */
static int
grade_all(struct evaluator *ev, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv pocs = SB_ARGV_INIT;
	bool applied = false;
	struct caps c = { 0 };
	int r;

	if (prepare(ev, &applied, err) < 0)
		return -1;
	if (!applied)
		return 0;
	if (get_caps(ev, &c, err) < 0)
		return -1;
	progress("checks: build %s, %lld PoC(s) %s, function test %s, intent test %s",
	    c.can_build ? "yes" : "no", (long long)c.poc_count, c.can_run_poc ? "yes" : "no",
	    c.has_function_test ? "yes" : "no", c.has_intent_test ? "yes" : "no");
	if (c.can_run_poc) {
		if (get_pocs(ev, &pocs, err) < 0)
			return -1;
		if ((json_int_t)pocs.n != c.poc_count)
			sb_log(SB_LOG_WARN,
			    "/project lists %zu PoCs, /capabilities %lld; running the %zu listed",
			    pocs.n, (long long)c.poc_count, pocs.n);
	}
	if (c.can_build && (r = grade_build(ev, err)) <= 0)
		return r;
	if (c.can_run_poc && grade_pocs(ev, &pocs, err) < 0)
		return -1;
	if (c.has_function_test && grade_test(ev, false, err) < 0)
		return -1;
	if (c.has_intent_test && grade_test(ev, true, err) < 0)
		return -1;
	return 0;
}

/*
 * The results directory, opened without following a link at its last component (the
 * entrypoint creates it; a missing one is created here, 0755, non-recursively).
 */
static int
open_results(const char *path, struct sb_error **err)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT && mkdir(path, 0755) == 0)
		fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sb_error_errno(err, errno, "open results directory '%s'", path);
	return fd;
}

/*
 * Grade, through the daemon at sock: a grading that had to stop keeps what it found, and
 * is an exception unless the budget ran out.
 */
static void
run_grading(struct evaluator *ev, const char *sock, unsigned timeout_s)
{
	struct sb_error *err = NULL;

	progress("grading through '%s', budget %u s", sock, timeout_s);
	if (sb_http_init(&err) < 0 || grade_all(ev, &err) < 0) {
		const char *why = err != NULL ? sb_error_message(err) : "unknown failure";

		if (ev->g.timed_out) {
			progress("stopped: the %u s budget ran out (%s)", timeout_s, why);
		} else {
			progress("stopped: %s", why);
			grade_set_exception(&ev->g, why);
		}
		sb_error_release(&err);
	}
}

/* result.json into the results directory (fd -1: it could not be opened); the exit code. */
static int
write_result(int results_fd, const char *results, const json_t *result)
{
	struct sb_error *err = NULL;

	if (results_fd < 0)
		return SB_EXIT_HARNESS;
	if (sb_json_write_atomic_at(results_fd, "result.json", result, 0644, &err) < 0) {
		sb_log(
		    SB_LOG_ERROR, "write result.json in '%s': %s", results, sb_error_message(err));
		sb_error_release(&err);
		return SB_EXIT_HARNESS;
	}
	return SB_EXIT_OK;
}

/* The result line for a person, then the result as JSON, on stdout. */
static void
print_result(const struct grade *g, const json_t *result)
{
	_cleanup_free_ char *dump = NULL;

	switch (g->status) {
	case GRADE_STATUS_PASSED:
		printf("[result] Patch success\n");
		break;
	case GRADE_STATUS_FAILED:
		printf("[result] Patch failed\n");
		break;
	case GRADE_STATUS_ERROR: {
		_cleanup_free_ char *esc = sb_escape(g->error_msg ? g->error_msg : "");

		printf("[result] Not graded: %s\n", esc);
		break;
	}
	}
	dump = sb_json_dumps(result, JSON_INDENT(2));
	printf("%s\n", dump);
}

int
main(int argc, char **argv)
{
	_cleanup_close_ int results_fd = -1;
	struct sb_error *err = NULL;
	struct grade_runtime rt;
	struct evaluator ev;
	json_auto_t *result = NULL;
	const char *sock, *results;
	unsigned timeout_s;
	int rc = SB_EXIT_OK;

	sb_log_init("ssebench-evaluator", SB_LOG_INFO, SB_LOG_LEVELS);
	rc = sb_startup_options(argc, argv, "ssebench-evaluator", usage, NULL,
	    SB_STARTUP_OPTIONS_SHORT_VERSION | SB_STARTUP_OPTIONS_SHORT_HELP);
	if (rc >= 0)
		return rc;
	rc = SB_EXIT_OK;
	/* Progress lines go to a log file or a pipe: one line at a time, as they happen. A
	 * reader that went away must not kill us before result.json is written. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);

	timeout_s = read_timeout();
	read_runtime(&rt);
	/* Upstream's entrypoint passes the admin socket as SSE_DAEMON_SOCKET. */
	sock = env("SSE_ADMIN_SOCKET");
	if (sock == NULL)
		sock = env("SSE_DAEMON_SOCKET");
	if (sock == NULL)
		sock = DEFAULT_ADMIN_SOCK;
	results = env("SSE_RESULTS");
	if (results == NULL)
		results = DEFAULT_RESULTS_DIR;

	memset(&ev, 0, sizeof(ev));
	ev.target.unix_socket = sock;
	ev.target.base_url = "http://localhost";
	ev.deadline_ms = sb_now_ms() + (uint64_t)timeout_s * 1000;
	grade_init(&ev.g, timeout_s);

	/* Opened first, so a grade is never computed for nowhere; grading goes on regardless,
	 * and the result is still printed. */
	results_fd = open_results(results, &err);
	if (results_fd < 0) {
		sb_log(SB_LOG_ERROR, "%s", sb_error_message(err));
		sb_error_release(&err);
	}

	run_grading(&ev, sock, timeout_s);
	grade_verdict(&ev.g);
	result = grade_result_json(&ev.g, &rt);

	rc = write_result(results_fd, results, result);
	print_result(&ev.g, result);
	grade_release(&ev.g);
	json_decref(ev.baseline);
	free(ev.sanitizer);
	return rc;
}

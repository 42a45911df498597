/* SPDX-License-Identifier: Apache-2.0 */
/*
 * grade.c: the evaluator's bookkeeping and verdict, without I/O (see grade.h).
 *
 * Upstream threw the whole grade away when its time budget ran out: a build that had failed
 * and PoCs that had been counted all became "error: Timeout". Here a grade that stops early
 * keeps what it found. A check that ran and failed makes the patch fail whatever happened
 * after it; a grade that did not finish and found no failure is an error, never a pass.
 */
#include "config.h"

#include <string.h>

#include "sb/json.h"
#include "sb/mem.h"

#include "grade.h"

void
grade_init(struct grade *g, unsigned timeout_s)
{
	memset(g, 0, sizeof(*g));
	g->timeout_s = timeout_s;
	g->status = GRADE_STATUS_ERROR;
}

void
grade_release(struct grade *g)
{
	unsigned timeout_s = g->timeout_s;

	free(g->error_msg);
	free(g->error_log);
	free(g->exception);
	grade_init(g, timeout_s);
}

char *
grade_cap_log(const char *log, size_t len, size_t max)
{
	_cleanup_free_ char *head = NULL;
	size_t start, hlen;
	char *out;

	if (len <= max)
		return sb_xmemdup(log, len);
	/* Keep the end; step over UTF-8 continuation bytes so no character is split. */
	start = len - max;
	while (start < len && ((unsigned char)log[start] & 0xC0) == 0x80)
		start++;
	head = sb_xasprintf("[... %zu bytes cut ...]\n", start);
	hlen = strlen(head);
	out = sb_xmalloc(hlen + (len - start) + 1);
	memcpy(out, head, hlen);
	memcpy(out + hlen, log + start, len - start);
	out[hlen + len - start] = '\0';
	return out;
}

bool
grade_fail(struct grade *g, const char *msg, const char *log)
{
	if (g->error_msg != NULL)
		return false;
	g->error_msg = sb_xstrdup(msg);
	g->error_log = log != NULL ? grade_cap_log(log, strlen(log), SB_GRADE_ERROR_LOG_MAX) : NULL;
	return true;
}

void
grade_patch_apply_failed(struct grade *g, const char *msg)
{
	g->build = GRADE_CHECK_FAILED;
	g->func_test = GRADE_CHECK_FAILED;
	g->intent_test = GRADE_CHECK_FAILED;
	(void)grade_fail(g, "Patch apply failed", msg);
}

void
grade_capture_failed(struct grade *g, const char *msg)
{
	g->build = GRADE_CHECK_FAILED;
	g->func_test = GRADE_CHECK_FAILED;
	g->intent_test = GRADE_CHECK_FAILED;
	(void)grade_fail(g, "Patch capture failed", msg);
}

void
grade_pov_start(struct grade *g, unsigned n)
{
	g->pov_started = true;
	g->pov_total = n;
	g->pov_done = 0;
	g->pov_passed = 0;
}

void
grade_pov_result(struct grade *g, bool passed, const char *path, const char *log)
{
	g->pov_done++;
	if (passed) {
		g->pov_passed++;
	} else {
		_cleanup_free_ char *msg = sb_xasprintf("PoC failed: %s", path);

		(void)grade_fail(g, msg, log);
	}
}

void
grade_set_timed_out(struct grade *g)
{
	g->timed_out = true;
}

void
grade_set_exception(struct grade *g, const char *message)
{
	if (g->exception == NULL)
		g->exception = sb_xstrdup(message);
}

/*
 * Whether the PoC fields are reported. A PoC check that finished is; one cut short is only
 * when a PoC that did run still triggers (then it has failed whatever the rest would do).
 */
static bool
pov_reported(const struct grade *g)
{
	return g->pov_started && (g->pov_done == g->pov_total || g->pov_passed < g->pov_done);
}

bool
grade_any_ran(const struct grade *g)
{
	return g->build != GRADE_CHECK_NOT_RUN || pov_reported(g) ||
	       g->func_test != GRADE_CHECK_NOT_RUN || g->intent_test != GRADE_CHECK_NOT_RUN;
}

bool
grade_any_failed(const struct grade *g)
{
	return g->build == GRADE_CHECK_FAILED ||
	       (pov_reported(g) && g->pov_passed != g->pov_total) ||
	       g->func_test == GRADE_CHECK_FAILED || g->intent_test == GRADE_CHECK_FAILED;
}

/* An error verdict: its reason replaces the (empty) first-failure slot. */
static enum grade_status
verdict_error(struct grade *g, char *msg)
{
	free(g->error_msg);
	free(g->error_log);
	g->error_msg = msg;
	g->error_log = NULL;
	return g->status = GRADE_STATUS_ERROR;
}

enum grade_status
grade_verdict(struct grade *g)
{
	if (grade_any_failed(g))
		return g->status = GRADE_STATUS_FAILED;
	/*
	 * Out of time with nothing failed so far: failed, not an error. Every check runs code
	 * the patch controls, so a patch that makes them slow enough could otherwise turn its
	 * expected failure into a run that does not count.
	 */
	if (g->timed_out) {
		free(g->error_msg);
		free(g->error_log);
		g->error_msg = sb_xasprintf("Timeout (%us)", g->timeout_s);
		g->error_log = NULL;
		return g->status = GRADE_STATUS_FAILED;
	}
	if (g->exception != NULL)
		return verdict_error(g, sb_xasprintf("Exception: %s", g->exception));
	if (!grade_any_ran(g))
		return verdict_error(g, sb_xstrdup("No check ran"));
	return g->status = GRADE_STATUS_PASSED;
}

const char *
grade_status_name(enum grade_status s)
{
	switch (s) {
	case GRADE_STATUS_PASSED:
		return "passed";
	case GRADE_STATUS_FAILED:
		return "failed";
	case GRADE_STATUS_ERROR:
		break;
	}
	return "error";
}

/* A boolean check as JSON: null when it did not run. */
static json_t *
check_json(enum grade_check c)
{
	switch (c) {
	case GRADE_CHECK_PASSED:
		return json_true();
	case GRADE_CHECK_FAILED:
		return json_false();
	case GRADE_CHECK_NOT_RUN:
		break;
	}
	return json_null();
}

json_t *
grade_result_json(const struct grade *g, const struct grade_runtime *rt)
{
	bool pov = pov_reported(g);
	json_t *patch, *runtime, *root;

	/* Built key by key: jansson keeps insertion order, and the order is upstream's. */
	patch = json_object();
	json_object_set_new(patch, "status", json_string(grade_status_name(g->status)));
	json_object_set_new(patch, "build_success", check_json(g->build));
	json_object_set_new(patch, "pov_passed", pov ? json_integer(g->pov_passed) : json_null());
	json_object_set_new(patch, "pov_total", pov ? json_integer(g->pov_total) : json_null());
	json_object_set_new(patch, "func_test_success", check_json(g->func_test));
	json_object_set_new(patch, "intent_test_success", check_json(g->intent_test));
	json_object_set_new(patch, "error_msg", sb_json_string_or_null(g->error_msg));
	json_object_set_new(patch, "error_log", sb_json_string_or_null(g->error_log));

	runtime = json_object();
	json_object_set_new(runtime, "agent_duration", json_integer(rt->agent_duration));
	json_object_set_new(runtime, "agent_timeout", json_boolean(rt->agent_timeout));
	json_object_set_new(runtime, "evaluator_timeout", json_boolean(g->timed_out));
	json_object_set_new(runtime, "agent_exit_code",
	    rt->has_exit_code ? json_integer(rt->agent_exit_code) : json_null());

	root = json_object();
	json_object_set_new(root, "patch_result", patch);
	json_object_set_new(root, "runtime_result", runtime);
	if (patch == NULL || runtime == NULL || root == NULL)
		sb_oom(0);
	return root;
}

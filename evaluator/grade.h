/* SPDX-License-Identifier: Apache-2.0 */
/*
 * grade.h: the pure half of ssebench-evaluator. What the checks found, the first-failure
 * bookkeeping, the verdict (docs/upstream.md, "Grading", with the timeout fix described in
 * docs/evaluator.md) and the result.json document. No I/O here: main.c talks to the daemon
 * and writes the file; everything below can be driven from a test with plain values.
 */
#ifndef SB_EVALUATOR_GRADE_H
#define SB_EVALUATOR_GRADE_H

#include <jansson.h>
#include <stdint.h>

#include "sb/common.h"
#include "sb/limits.h"
#include "sb/verdict.h"

/*
 * The most of a failing check's output kept in error_log: the end of it, which is where a
 * compiler error or a sanitizer report is. The rest is in the daemon's scriptrunner logs.
 */

/* One boolean check: did it run, and with what outcome (JSON null / true / false). */
enum grade_check {
	GRADE_CHECK_NOT_RUN = SB_CHECK_NOT_RUN,
	GRADE_CHECK_PASSED = SB_CHECK_PASSED,
	GRADE_CHECK_FAILED = SB_CHECK_FAILED,
};

/* The statuses of sb/verdict.h, whose sb_grade_decide decides them (grade_verdict). */
enum grade_status {
	GRADE_STATUS_PASSED = SB_GRADE_PASSED,
	GRADE_STATUS_FAILED = SB_GRADE_FAILED,
	GRADE_STATUS_ERROR = SB_GRADE_ERROR,
};

/*
 * What a test script said it ran: its one line "SSEBENCH-TESTS: ran=N passed=M" on stdout
 * (docs/grading.md, "Test counts"). lines counts every line that starts with the prefix:
 * 0 is no count, 1 a count, more a count something else printed too (forged).
 */
struct grade_tests {
	unsigned lines;
	bool tainted; /* the output was cut or held a NUL byte: no count in it can be trusted */
	bool valid; /* lines == 1 and that line is well formed */
	json_int_t ran, passed;
};

struct grade {
	enum grade_check build;
	enum grade_check func_test;
	enum grade_check intent_test;
	/* The grading build's oracle check (grade_oracle_check), after a build that passed. */
	enum grade_check oracle;

	/* Test counts of the functional and intent tests that ran (grade_tests_check). */
	bool func_counted, intent_counted;
	struct grade_tests func_counts, intent_counts;

	/* From the daemon, for result.json (owned references, NULL when not known): the paths
	 * graded as pristine, the patch's scope, the build's oracle facts in baseline form. */
	json_t *reverted;
	json_t *scope;
	json_t *oracle_facts;

	/* The PoC check: started (pov_total known), how many finished, how many passed. */
	bool pov_started;
	unsigned pov_total;
	unsigned pov_done;
	unsigned pov_passed;

	/* The first failure (owned; NULL until one happens), then the verdict's message. */
	char *error_msg;
	char *error_log;

	/* Why grading stopped early, if it did. */
	bool timed_out;     /* the TIMEOUT budget ran out (evaluator_timeout) */
	unsigned timeout_s; /* that budget, for "Timeout (<n>s)" */
	char *exception;    /* an infrastructure failure (owned), e.g. the daemon unreachable */

	/* Set by grade_verdict. */
	enum grade_status status;
};

/* What the entrypoint tells us about the agent phase (runtime_result). */
struct grade_runtime {
	int64_t agent_duration; /* seconds; 0 when unknown */
	bool agent_timeout;     /* the agent was stopped by its time limit */
	bool has_exit_code;     /* agent_exit_code is null otherwise */
	int64_t agent_exit_code;
};

void grade_init(struct grade *g, unsigned timeout_s);
/* Free what g owns; g is as after grade_init (same timeout) afterwards. */
void grade_release(struct grade *g);

/*
 * The end of log (len bytes), at most max bytes of it, as a new string. When bytes are cut,
 * the result starts with "[... N bytes cut ...]\n" and the cut moves forward to the next
 * UTF-8 character boundary, so no character is split. Never fails (allocation aborts).
 */
char *grade_cap_log(const char *log, size_t len, size_t max);

/*
 * Record a failure. Only the first one sets error_msg and error_log (log capped at
 * SB_GRADE_ERROR_LOG_MAX; NULL log gives a null error_log); later calls change nothing.
 * Returns true when this was the first.
 */
bool grade_fail(struct grade *g, const char *msg, const char *log);

/*
 * The agent's patch does not apply to the pristine tree (docs/upstream.md, "Grading"): build,
 * functional and intent checks are false, the PoC fields stay null, and the first failure
 * is "Patch apply failed" with msg (the daemon's git output) as its log.
 */
void grade_patch_apply_failed(struct grade *g, const char *msg);

/*
 * The agent's tree cannot be captured (a file it made unreadable, a FIFO where git reads,
 * a file or diff past the size limits): as for a patch that does not apply, build,
 * functional and intent checks are false and the first failure is "Patch capture failed"
 * with msg (the daemon's reason) as its log.
 */
void grade_capture_failed(struct grade *g, const char *msg);

/* The PoC check starts with n PoCs: pov_total = n, pov_passed = 0. */
void grade_pov_start(struct grade *g, unsigned n);

/* One PoC finished; a failure records "PoC failed: <path>" with log. */
void grade_pov_result(struct grade *g, bool passed, const char *path, const char *log);

/*
 * The count line of a test script's stdout into *t. Never fails. The harness's scripts print
 * it last; a line anyone else prints makes lines > 1, which grade_tests_check fails.
 */
void grade_tests_parse(const char *out, struct grade_tests *t);
/* The same, for an output the daemon did not pass whole (cut, or a NUL byte in it). */
void grade_tests_parse_tainted(const char *out, struct grade_tests *t);

/*
 * Judge the count of a test that exited 0 (what: "Function test", "Intent test") against
 * the task's baseline for it (expected: {"ran": N, "passed": M}, or NULL when the task has
 * none). Fails the grade (returns false) when the count is forged (more than one line),
 * malformed, zero tests ran, or fewer ran or passed than the baseline; a missing count fails
 * only when there is a baseline. The count is recorded for result.json either way.
 */
bool grade_tests_check(struct grade *g, bool intent, const struct grade_tests *t,
    const json_t *expected);

/*
 * The oracle facts of the grading build (the daemon's "oracle" reply: objects, hooks,
 * calls, unreadable, truncated) in baseline form, a new reference:
 * {"objects": {"<id>": 0 plain | 1 ASan, no function checked | 2 checked}, "duplicates":
 * [id...], "hooks": [sym...], "calls": [sym...], "unreadable": [...],
 *  "truncated": bool}, symbols sorted and unique. NULL when facts is not such an object.
 */
json_t *grade_oracle_summary(const json_t *facts);

/*
 * Judge the oracle (docs/grading.md, "The oracle"): the summary of this build against the
 * task's baseline one (expected, NULL when the task has none) for the declared sanitizer.
 * Fails the grade with "oracle tampering: ..." (returns false) when the build defines a
 * sanitizer hook or calls a sanitizer control the baseline does not, an object the baseline
 * instruments is missing or not instrumented, a new object is not instrumented, a file
 * cannot be read that could be, or the facts are missing or cut short; without a baseline,
 * any hook or control call, and (sanitizer address) a build with no instrumented object.
 * Sets g->oracle and keeps the summary for result.json.
 */
bool grade_oracle_check(struct grade *g, const char *sanitizer, const json_t *facts,
    const json_t *expected);

/* Grading stopped: the budget ran out, or an infrastructure failure (message copied). */
void grade_set_timed_out(struct grade *g);
void grade_set_exception(struct grade *g, const char *message);

/* Did a check run (completely) and did any check that ran fail. */
bool grade_any_ran(const struct grade *g);
bool grade_any_failed(const struct grade *g);

/*
 * Decide the status and set g->status; for an error, error_msg becomes its reason and
 * error_log null. In order:
 *   failed  when a check that ran failed (a build that failed, a PoC that still triggers, a
 *           failed functional or intent test; "Patch apply failed" is a failed build), even
 *           if grading then timed out or broke: what was found stands;
 *   failed  "Timeout (<n>s)" when the budget ran out: grading runs the patched code, so
 *           the time it took is the patch's (a grade that did not finish is never passed,
 *           and it is not an error an agent could choose by making its checks slow);
 *   error   "Exception: <message>" on an infrastructure failure;
 *   error   "No check ran" when the task has no checks at all;
 *   passed  otherwise.
 * Call once, after grading.
 */
enum grade_status grade_verdict(struct grade *g);

/* "passed", "failed", "error". */
const char *grade_status_name(enum grade_status s);

/*
 * The result.json document (docs/upstream.md, "Result files") for a graded g and rt, a new
 * reference. Checks that did not run are null; so are the PoC fields of a PoC check cut
 * short with no failing PoC (its count would claim a failure nobody saw).
 */
json_t *grade_result_json(const struct grade *g, const struct grade_runtime *rt);

#endif

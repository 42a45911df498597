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

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sb/argv.h"
#include "sb/buf.h"
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
	json_decref(g->reverted);
	json_decref(g->scope);
	json_decref(g->oracle_facts);
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

/* --- test counts ------------------------------------------------------------------------ */

#define TESTS_PREFIX	 "SSEBENCH-TESTS:"
#define TESTS_COUNT_MAX  1000000000000LL /* a trillion tests: a count past it is not one */

/* A decimal count at *p (no sign, no leading zeros past the first digit), *p moved past. */
static bool
parse_count(const char **p, json_int_t *ret)
{
	json_int_t v = 0;
	const char *s = *p;

	if (*s < '0' || *s > '9' || (s[0] == '0' && s[1] >= '0' && s[1] <= '9'))
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (*s - '0');
		if (v > TESTS_COUNT_MAX)
			return false;
	}
	*ret = v;
	*p = s;
	return true;
}

/* "SSEBENCH-TESTS: ran=N passed=M", exactly, N >= M; line is NUL- or newline-ended. */
static bool
parse_tests_line(const char *line, json_int_t *ran, json_int_t *passed)
{
	const char *p = line + strlen(TESTS_PREFIX);

	if (strncmp(p, " ran=", 5) != 0)
		return false;
	p += 5;
	if (!parse_count(&p, ran) || strncmp(p, " passed=", 8) != 0)
		return false;
	p += 8;
	if (!parse_count(&p, passed))
		return false;
	if (*p == '\r')
		p++;
	return (*p == '\0' || *p == '\n') && *passed <= *ran;
}

void
grade_tests_parse(const char *out, struct grade_tests *t)
{
	memset(t, 0, sizeof(*t));
	for (const char *line = out; line != NULL && *line != '\0';) {
		const char *nl = strchr(line, '\n');

		if (strncmp(line, TESTS_PREFIX, strlen(TESTS_PREFIX)) == 0 && ++t->lines == 1)
			t->valid = parse_tests_line(line, &t->ran, &t->passed);
		line = nl != NULL ? nl + 1 : NULL;
	}
	if (t->lines != 1)
		t->valid = false;
}

void
grade_tests_parse_tainted(const char *out, struct grade_tests *t)
{
	grade_tests_parse(out, t);
	t->tainted = true;
	t->valid = false;
}

/* An integer member of o, or -1 when o has none (or is not an object). */
static json_int_t
member_count(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) && json_integer_value(v) >= 0 ? json_integer_value(v) : -1;
}

bool
grade_tests_check(struct grade *g, bool intent, const struct grade_tests *t,
    const json_t *expected)
{
	const char *what = intent ? "Intent test" : "Function test";
	json_int_t want_ran = member_count(expected, "ran");
	json_int_t want_passed = member_count(expected, "passed");
	_cleanup_free_ char *msg = NULL;

	if (intent) {
		g->intent_counted = true;
		g->intent_counts = *t;
	} else {
		g->func_counted = true;
		g->func_counts = *t;
	}
	/*
	 * The count line is the harness script's, printed after every test; the tests run the
	 * patch's code, which can print too. One line is the script's; two are a forgery, which
	 * fails rather than letting either count.
	 */
	if (t->tainted && (t->lines > 0 || want_ran >= 0))
		msg = sb_xasprintf("%s failed: its output was cut or holds a NUL byte, so its test "
				   "count cannot be trusted",
		    what);
	else if (t->tainted)
		return true; /* a task without counts: nothing to judge */
	else if (t->lines > 1)
		msg = sb_xasprintf("%s failed: %u test count lines, one of them not the harness's",
		    what, t->lines);
	else if (t->lines == 1 && !t->valid)
		msg = sb_xasprintf("%s failed: a malformed test count", what);
	else if (t->lines == 0 && want_ran >= 0)
		msg = sb_xasprintf("%s failed: no test count (the reference ran %lld)", what,
		    (long long)want_ran);
	else if (t->lines == 0)
		return true; /* a task without counts: nothing to judge */
	else if (t->ran == 0)
		msg = sb_xasprintf("%s failed: no test ran", what);
	else if (want_ran >= 0 && t->ran < want_ran)
		msg = sb_xasprintf("%s failed: %lld tests ran, fewer than the reference's %lld", what,
		    (long long)t->ran, (long long)want_ran);
	else if (want_passed >= 0 && t->passed < want_passed)
		msg = sb_xasprintf("%s failed: %lld tests passed, fewer than the reference's %lld",
		    what, (long long)t->passed, (long long)want_passed);
	if (msg == NULL)
		return true;
	if (intent)
		g->intent_test = GRADE_CHECK_FAILED;
	else
		g->func_test = GRADE_CHECK_FAILED;
	(void)grade_fail(g, msg, NULL);
	return false;
}

/* --- the oracle -------------------------------------------------------------------------- */

#define ORACLE_LOG_FINDINGS 100 /* findings listed in error_log; the rest are counted */

static int
cmp_json_strings(const void *a, const void *b)
{
	return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}

/* The "symbol" members of a findings list, sorted and unique, as a new array. */
static json_t *
unique_symbols(const json_t *findings)
{
	json_t *out = json_array(), *v;
	size_t n = json_array_size(findings), k = 0, i;
	json_t **tmp = sb_xcalloc(n ? n : 1, sizeof(*tmp));

	json_array_foreach(findings, i, v) {
		json_t *sym = json_object_get(v, "symbol");

		if (json_is_string(sym))
			tmp[k++] = sym;
	}
	qsort(tmp, k, sizeof(*tmp), cmp_json_strings);
	for (i = 0; i < k; i++)
		if (i == 0 || strcmp(json_string_value(tmp[i]), json_string_value(tmp[i - 1])) != 0)
			json_array_append(out, tmp[i]);
	free(tmp);
	return out;
}

json_t *
grade_oracle_summary(const json_t *facts)
{
	const json_t *objects = json_object_get(facts, "objects");
	const json_t *hooks = json_object_get(facts, "hooks");
	const json_t *calls = json_object_get(facts, "calls");
	const json_t *unreadable = json_object_get(facts, "unreadable");
	const json_t *truncated = json_object_get(facts, "truncated");
	const json_t *dups = json_object_get(facts, "duplicates");
	json_t *objs, *v;
	const char *id;

	if (!json_is_object(facts) || !json_is_object(objects) || !json_is_array(hooks) ||
	    !json_is_array(calls) || !json_is_array(unreadable) || !json_is_boolean(truncated) ||
	    (dups != NULL && !json_is_array(dups)))
		return NULL;
	/* Each object's level: 0 plain, 1 built with ASan but no function checked, 2 checked. */
	objs = json_object();
	json_object_foreach((json_t *)objects, id, v)
		json_object_set_new(objs, id,
		    json_integer(json_is_true(json_object_get(v, "checks"))  ? 2
				 : json_is_true(json_object_get(v, "asan")) ? 1
									    : 0));
	{
		json_t *d = json_array();
		size_t i;

		json_array_foreach((json_t *)dups, i, v)
			if (json_is_string(json_object_get(v, "object")))
				json_array_append(d, json_object_get(v, "object"));
		return json_pack("{s:o, s:o, s:o, s:o, s:O, s:O}", "objects", objs, "hooks",
		    unique_symbols(hooks), "calls", unique_symbols(calls), "duplicates", d,
		    "unreadable", unreadable, "truncated", truncated);
	}
}

static bool
array_has_string(const json_t *a, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach(a, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
			return true;
	return false;
}

struct findings {
	struct sb_argv kept; /* the first ORACLE_LOG_FINDINGS */
	size_t n;	     /* all of them */
};

static void finding(struct findings *f, const char *fmt, ...) _printf_(2, 3);

static void
finding(struct findings *f, const char *fmt, ...)
{
	va_list ap;

	if (f->n++ >= ORACLE_LOG_FINDINGS)
		return;
	va_start(ap, fmt);
	sb_argv_vpushf(&f->kept, fmt, ap);
	va_end(ap);
}

/* Hooks or calls of this build that the baseline does not have. */
static void
new_symbols(struct findings *f, const json_t *list, const json_t *allowed, const char *verb)
{
	size_t i;
	json_t *v;

	json_array_foreach(list, i, v) {
		const char *obj = json_string_value(json_object_get(v, "object"));
		const char *sym = json_string_value(json_object_get(v, "symbol"));

		if (sym == NULL || array_has_string(allowed, sym))
			continue;
		finding(f, "%s %s %s", obj != NULL ? obj : "(an object)", verb, sym);
	}
}

/*
 * An AddressSanitizer build against the reference build's objects (eobjs, NULL when the
 * task records none): every object the reference build instruments is here, at its level;
 * a new one is instrumented (a real fix's new file is built with the project's flags).
 * Without a reference, at least one object must check memory accesses.
 */
static void
asan_findings(struct findings *f, const json_t *sum, const json_t *eobjs)
{
	const json_t *objs = json_object_get(sum, "objects");
	const char *id;
	json_t *v;

	if (eobjs == NULL) {
		bool any = false;

		json_object_foreach((json_t *)objs, id, v)
			any = any || json_integer_value(v) == 2;
		if (!any)
			finding(f, "no object of the grading build checks memory accesses with "
				   "AddressSanitizer");
		return;
	}
	json_object_foreach((json_t *)eobjs, id, v) {
		const json_t *now = json_object_get(objs, id);
		json_int_t was = json_integer_value(v);

		if (was <= 0)
			continue;
		if (now == NULL)
			finding(f, "%s, instrumented in the reference build, is not built", id);
		else if (json_integer_value(now) == 0)
			finding(f, "%s is no longer built with AddressSanitizer", id);
		else if (json_integer_value(now) < was)
			finding(f, "%s no longer checks memory accesses (no_sanitize)", id);
	}
	json_object_foreach((json_t *)objs, id, v)
		if (json_integer_value(v) == 0 && json_object_get(eobjs, id) == NULL)
			finding(f, "%s is built without AddressSanitizer", id);
}

/* Set g's oracle result from the findings (and release them); true if there were none. */
static bool
oracle_judge(struct grade *g, struct findings *f)
{
	struct sb_buf log = SB_BUF_INIT(1 << 20);
	_cleanup_free_ char *msg = NULL;

	if (f->n == 0) {
		g->oracle = GRADE_CHECK_PASSED;
		sb_argv_release(&f->kept);
		return true;
	}
	for (size_t i = 0; i < f->kept.n; i++)
		(void)sb_buf_appendf(&log, NULL, "%s\n", f->kept.v[i]);
	if (f->n > ORACLE_LOG_FINDINGS)
		(void)sb_buf_appendf(&log, NULL, "(%zu more)\n", f->n - ORACLE_LOG_FINDINGS);
	g->oracle = GRADE_CHECK_FAILED;
	msg = sb_xasprintf("oracle tampering: %s", f->kept.v[0]);
	(void)grade_fail(g, msg, log.s);
	sb_buf_release(&log);
	sb_argv_release(&f->kept);
	return false;
}

bool
grade_oracle_check(struct grade *g, const char *sanitizer, const json_t *facts,
    const json_t *expected)
{
	json_t *sum = grade_oracle_summary(facts), *v;
	const json_t *eobjs = json_object_get(expected, "objects");
	struct findings f = { .kept = SB_ARGV_INIT };
	size_t i;

	if (!json_is_object(expected))
		expected = NULL;
	if (!json_is_object(eobjs))
		eobjs = NULL;
	json_decref(g->oracle_facts);
	g->oracle_facts = sum;
	if (sum == NULL) {
		/* Fail closed: a build whose objects nobody could read is not one to trust. */
		finding(&f, "the grading build's objects could not be read");
		return oracle_judge(g, &f);
	}
	if (json_is_true(json_object_get(sum, "truncated")) &&
	    !json_is_true(json_object_get(expected, "truncated")))
		finding(&f, "the grading build is past the limits of the oracle check");
	new_symbols(&f, json_object_get(facts, "hooks"), json_object_get(expected, "hooks"),
	    "defines");
	new_symbols(&f, json_object_get(facts, "calls"), json_object_get(expected, "calls"),
	    "calls");
	/* A duplicate the reference build has too is the project's (CMake archives two
	 * sources of one name in two directories as two members of one name). */
	json_array_foreach(json_object_get(sum, "duplicates"), i, v)
		if (json_is_string(v) &&
		    !array_has_string(json_object_get(expected, "duplicates"), json_string_value(v)))
			finding(&f, "%s is in the build twice (the linker takes one, this check "
				    "saw the other)",
			    json_string_value(v));
	json_array_foreach(json_object_get(sum, "unreadable"), i, v)
		if (json_is_string(v) &&
		    !array_has_string(json_object_get(expected, "unreadable"), json_string_value(v)))
			finding(&f, "%s cannot be read as an object file", json_string_value(v));
	if (sanitizer != NULL && strcmp(sanitizer, "address") == 0)
		asan_findings(&f, sum, eobjs);
	return oracle_judge(g, &f);
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

/* What g's checks found, for the verdict all of ssebench shares (sb/verdict.h). */
static struct sb_grade_checks
grade_checks(const struct grade *g)
{
	/* grade.h defines enum grade_check by enum sb_check's values. */
	return (struct sb_grade_checks){
		.build = (enum sb_check)g->build,
		.func_test = (enum sb_check)g->func_test,
		.intent_test = (enum sb_check)g->intent_test,
		.oracle = (enum sb_check)g->oracle,
		.pov_reported = pov_reported(g),
		.pov_passed = g->pov_passed,
		.pov_total = g->pov_total,
		.timed_out = g->timed_out,
		.exception = g->exception != NULL,
	};
}

bool
grade_any_ran(const struct grade *g)
{
	struct sb_grade_checks c = grade_checks(g);

	return sb_grade_any_ran(&c);
}

bool
grade_any_failed(const struct grade *g)
{
	struct sb_grade_checks c = grade_checks(g);

	return sb_grade_any_failed(&c);
}

/* An error or timeout verdict: its reason replaces the first-failure slot. */
static void
verdict_reason(struct grade *g, char *msg)
{
	free(g->error_msg);
	free(g->error_log);
	g->error_msg = msg;
	g->error_log = NULL;
}

enum grade_status
grade_verdict(struct grade *g)
{
	struct sb_grade_checks c = grade_checks(g);
	enum sb_grade_rule rule = sb_grade_decide(&c);

	/* A failed check keeps its own message (the first failure); the others say why. */
	if (rule == SB_GRADE_TIMED_OUT)
		verdict_reason(g, sb_xasprintf("Timeout (%us)", g->timeout_s));
	else if (rule == SB_GRADE_EXCEPTION)
		verdict_reason(g, sb_xasprintf("Exception: %s", g->exception));
	else if (rule == SB_GRADE_NOTHING_RAN)
		verdict_reason(g, sb_xstrdup("No check ran"));
	return g->status = (enum grade_status)sb_grade_rule_status(rule);
}

const char *
grade_status_name(enum grade_status s)
{
	return sb_grade_status_name((enum sb_grade_status)s);
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

static json_t *
tests_json(bool counted, const struct grade_tests *t)
{
	if (!counted || !t->valid)
		return json_null();
	return json_pack("{s:I, s:I}", "ran", t->ran, "passed", t->passed);
}

/* What grading found beyond upstream's fields (docs/grading.md): reverted paths, scope,
 * the oracle and the test counts. */
static json_t *
grading_json(const struct grade *g)
{
	return json_pack("{s:O?, s:O?, s:o, s:O?, s:{s:o, s:o}}", "reverted_paths", g->reverted,
	    "patch_scope", g->scope, "oracle_passed", check_json(g->oracle), "oracle_facts",
	    g->oracle_facts, "tests", "function", tests_json(g->func_counted, &g->func_counts),
	    "intent", tests_json(g->intent_counted, &g->intent_counts));
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
	json_object_set_new(root, "grading_result", grading_json(g));
	if (patch == NULL || runtime == NULL || root == NULL)
		sb_oom(0);
	return root;
}

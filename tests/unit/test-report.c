/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-report.c: the figures of `ssebench report` (src/ssebench/report.c): the Wilson
 * interval, pass@k and quantiles against hand-computed values, each run's category from
 * its summary, each run's flags (the answer-seeking scan's) from what a summary may hold,
 * grouping, reference runs left out, and the escaping every format uses.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "sb/buf.h"
#include "sb/json.h"

#include "../../src/ssebench/report.h"
#include "unit.h"

#define NEAR(got, want, tol)                                                                       \
	ck_assert_msg(fabs((got) - (want)) <= (tol), "%s = %.6f, want %.6f", #got, (double)(got),  \
	    (double)(want))

/* --- Wilson ------------------------------------------------------------------------ */

static const struct {
	uint64_t x, n;
	bool ok;
	double lo, hi;
} wilson_cases[] = {
    {0, 0, false, 0, 0},           /* no trial: no interval */
    {5, 10, true, 0.2366, 0.7634}, /* the textbook case */
    {10, 10, true, 0.7225, 1.0},   /* upper bound exactly 1 */
    {0, 10, true, 0.0, 0.2775},    /* lower bound exactly 0 */
    {1, 1, true, 0.2065, 1.0},
    {81, 263, true, 0.2553, 0.3662}, /* computed by hand from the formula */
    {11, 10, false, 0, 0},           /* more successes than trials */
};

START_TEST(test_wilson)
{
	double lo = -1, hi = -1;
	bool ok = report_wilson(wilson_cases[_i].x, wilson_cases[_i].n, REPORT_Z95, &lo, &hi);

	ck_assert_int_eq(ok, wilson_cases[_i].ok);
	if (!ok) {
		ck_assert(lo == -1 && hi == -1); /* nothing written */
		return;
	}
	NEAR(lo, wilson_cases[_i].lo, 5e-5);
	NEAR(hi, wilson_cases[_i].hi, 5e-5);
	if (wilson_cases[_i].x == wilson_cases[_i].n)
		ck_assert(hi == 1.0);
	if (wilson_cases[_i].x == 0)
		ck_assert(lo == 0.0);
}
END_TEST

/* --- pass@k ------------------------------------------------------------------------ */

static const struct {
	uint64_t n, c, k;
	double want; /* NAN: undefined */
} pak_cases[] = {
    {5, 2, 1, 0.4},                                 /* c/n */
    {5, 2, 2, 0.7},                                 /* 1 - C(3,2)/C(5,2) = 1 - 3/10 */
    {5, 0, 1, 0.0},                                 /* no pass, no chance */
    {5, 0, 5, 0.0}, {5, 4, 2, 1.0},                 /* n - c < k: every draw holds a pass */
    {5, 5, 1, 1.0}, {10, 3, 5, 1.0 - 21.0 / 252.0}, /* 1 - C(7,5)/C(10,5) */
    {4, 1, 3, 0.75},                                /* 1 - C(3,3)/C(4,3) = 1 - 1/4 */
    {5, 2, 0, NAN},                                 /* k must be at least 1 */
    {5, 2, 6, NAN},                                 /* and at most n */
    {5, 6, 1, NAN},                                 /* c at most n */
};

START_TEST(test_pass_at_k)
{
	double got = report_pass_at_k(pak_cases[_i].n, pak_cases[_i].c, pak_cases[_i].k);

	if (isnan(pak_cases[_i].want))
		ck_assert_msg(isnan(got), "pass@%llu(n=%llu, c=%llu) = %f, want NAN",
		    (unsigned long long)pak_cases[_i].k, (unsigned long long)pak_cases[_i].n,
		    (unsigned long long)pak_cases[_i].c, got);
	else
		NEAR(got, pak_cases[_i].want, 1e-12);
}
END_TEST

/* Large n: binomials overflow long before, the product does not. */
START_TEST(test_pass_at_k_large)
{
	double v = report_pass_at_k(100000, 30000, 50);

	ck_assert(isfinite(v) && v > 0.99999 && v <= 1.0);
	NEAR(report_pass_at_k(100000, 30000, 1), 0.3, 1e-12);
	v = report_pass_at_k(1000, 1, 999);
	NEAR(v, 0.999, 1e-9);
}
END_TEST

/* --- quantiles --------------------------------------------------------------------- */

START_TEST(test_quantile)
{
	static const double four[] = {1, 2, 3, 4}, one[] = {7};
	static const double ten[] = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100};

	NEAR(report_quantile(four, 4, 0.5), 2.5, 1e-12); /* the mean of the middle two */
	NEAR(report_quantile(four, 4, 0.9), 3.7, 1e-12); /* h = 2.7: 3 + 0.7 (4 - 3) */
	NEAR(report_quantile(four, 4, 0.25), 1.75, 1e-12);
	NEAR(report_quantile(four, 4, 0.0), 1, 0);
	NEAR(report_quantile(four, 4, 1.0), 4, 0);
	NEAR(report_quantile(one, 1, 0.5), 7, 0);
	NEAR(report_quantile(one, 1, 0.9), 7, 0);
	NEAR(report_quantile(ten, 10, 0.5), 55, 1e-12);
	NEAR(report_quantile(ten, 10, 0.9), 91, 1e-12); /* h = 8.1: 90 + 0.1 * 10 */
	ck_assert(isnan(report_quantile(NULL, 0, 0.5)));
}
END_TEST

/* --- one run's record -------------------------------------------------------------- */

static json_t *
summary(const char *fmt)
{
	json_error_t e;
	json_t *s = json_loads(fmt, 0, &e);

	ck_assert_msg(s != NULL, "bad fixture: %s", e.text);
	return s;
}

#define ISO_SCORED                                                                                 \
	"\"isolation\": {\"outcome\": \"scored\", \"tier\": \"restricted\"}, \"scored\": true"

static const struct {
	const char *json, *category, *egress;
	bool reference;
} record_cases[] = {
    {"{" ISO_SCORED ", \"patch_result\": {\"status\": \"passed\"}}", "passed", "restricted", false},
    {"{" ISO_SCORED ", \"patch_result\": {\"status\": \"failed\"}}", "failed", "restricted", false},
    /* A scored run whose grading said error counts as scored and not passed (runs results). */
    {"{" ISO_SCORED ", \"patch_result\": {\"status\": \"error\"}}", "failed", "restricted", false},
    {"{\"isolation\": {\"outcome\": \"forfeit\", \"tier\": \"restricted\"}, \"scored\": true, "
     "\"patch_result\": {\"status\": \"forfeit\"}}",
	"forfeit", "restricted", false},
    /* A forged pair: the record says forfeit, the status passed. The lesser wins. */
    {"{\"isolation\": {\"outcome\": \"forfeit\", \"tier\": \"restricted\"}, \"scored\": true, "
     "\"patch_result\": {\"status\": \"passed\"}}",
	"forfeit", "restricted", false},
    {"{\"isolation\": {\"outcome\": \"unscored\", \"tier\": \"restricted\"}, \"scored\": true, "
     "\"patch_result\": {\"status\": \"passed\"}}",
	"error", "restricted", false},
    {"{\"isolation\": {\"outcome\": \"unscored\", \"tier\": null}, \"scored\": false, "
     "\"patch_result\": {\"status\": \"error\"}}",
	"error", "restricted", false},
    /* scored, but no tier: not scored (run_summary_row) */
    {"{\"scored\": true, \"patch_result\": {\"status\": \"passed\"}}", "error", "restricted",
	false},
    {"{\"scored\": \"yes\", \"isolation\": {\"tier\": \"restricted\"}, \"patch_result\": "
     "{\"status\": \"passed\"}}",
	"error", "restricted", false},
    {"{}", "error", "restricted", false},
    {"{\"isolation\": {\"outcome\": \"scored\", \"tier\": \"open\"}, \"scored\": true, "
     "\"patch_result\": {\"status\": \"passed\"}}",
	"passed", "open", false},
    /* unscored: its claim is the egress */
    {"{\"config\": {\"egress\": \"open\"}, \"scored\": false}", "error", "open", false},
    {"{" ISO_SCORED ", \"config\": {\"reference_run\": true}, \"patch_result\": {\"status\": "
     "\"passed\"}}",
	"passed", "restricted", true},
    {"{" ISO_SCORED ", \"config\": {\"agent\": \"reference\"}}", "failed", "restricted", true},
    {"{" ISO_SCORED ", \"config\": {\"agent\": 7, \"model\": [], \"reference_run\": \"true\"}, "
     "\"task\": 3, \"patch_result\": 1}",
	"failed", "restricted", false},
};

START_TEST(test_record_category)
{
	json_t *s = summary(record_cases[_i].json);
	json_t *r = report_record(s, "/r/x");

	ck_assert_str_eq(
	    json_string_value(json_object_get(r, "category")), record_cases[_i].category);
	ck_assert_str_eq(json_string_value(json_object_get(r, "egress")), record_cases[_i].egress);
	ck_assert_int_eq(json_is_true(json_object_get(r, "reference")), record_cases[_i].reference);
	ck_assert_int_eq(json_is_true(json_object_get(r, "scored")),
	    strcmp(record_cases[_i].category, "error") != 0);
	/* every name is a string, "?" when the summary has none */
	ck_assert(json_is_string(json_object_get(r, "task")));
	ck_assert(json_is_string(json_object_get(r, "agent")));
	ck_assert(json_is_string(json_object_get(r, "model")));
	json_decref(s);
	json_decref(r);
}
END_TEST

/* The figures' members: wrong types and bad numbers are null, never counted. */
START_TEST(test_record_members)
{
	json_t *s =
	    summary("{" ISO_SCORED ", \"duration_s\": 12.5, \"spend\": 0.25, "
		    "\"usage\": {\"tokens_in\": 1000, \"tokens_out\": 200}, "
		    "\"job\": {\"id\": \"j1\", \"attempt\": 3}, \"patch_result\": "
		    "{\"status\": \"failed\", \"build_success\": true, \"pov_passed\": 2, "
		    "\"pov_total\": 2, \"func_test_success\": true, \"intent_test_success\": "
		    "false, \"error_msg\": \"Intent test failed\"}}");
	json_t *r = report_record(s, "/r/x");

	NEAR(json_real_value(json_object_get(r, "duration_s")), 12.5, 0);
	NEAR(json_real_value(json_object_get(r, "spend_usd")), 0.25, 0);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "tokens_in")), 1000);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "tokens_out")), 200);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "attempt")), 3);
	ck_assert_str_eq(json_string_value(json_object_get(r, "job_id")), "j1");
	ck_assert(json_is_true(json_object_get(r, "built")));
	ck_assert(json_is_true(json_object_get(r, "pov_stopped")));
	ck_assert(json_is_true(json_object_get(r, "functional")));
	ck_assert(json_is_false(json_object_get(r, "hidden")));
	ck_assert_str_eq(json_string_value(json_object_get(r, "message")), "Intent test failed");
	json_decref(s);
	json_decref(r);

	s = summary(
	    "{" ISO_SCORED ", \"duration_s\": -1, \"spend\": \"0.25\", "
	    "\"usage\": {\"tokens_in\": 1000}, \"job\": {\"attempt\": 0}, \"patch_result\": "
	    "{\"status\": \"failed\", \"build_success\": 1, \"pov_passed\": 0, \"pov_total\": 0}}");
	r = report_record(s, "/r/x");
	ck_assert(json_is_null(json_object_get(r, "duration_s")));
	ck_assert(json_is_null(json_object_get(r, "spend_usd")));
	ck_assert(json_is_null(json_object_get(r, "tokens_in"))); /* only as a pair */
	ck_assert(json_is_null(json_object_get(r, "tokens_out")));
	ck_assert(json_is_null(json_object_get(r, "attempt")));
	ck_assert(json_is_false(json_object_get(r, "built")));
	ck_assert(json_is_false(json_object_get(r, "pov_stopped"))); /* 0 of 0 stops nothing */
	json_decref(s);
	json_decref(r);
}
END_TEST

/* --- the answer-seeking scan's flags ------------------------------------------------ */

#define FLAG(k) "{\"kind\": \"" k "\", \"source\": \"dialog.jsonl\", \"excerpt\": \"x\"}"

static const struct {
	const char *json;
	json_int_t flags;
	const char *kinds; /* flag_kinds joined by "," */
} flag_cases[] = {
    {"{}", 0, ""}, /* a summary older than the scan */
    {"{\"flags_total\": 3, \"flags\": [" FLAG("network") ", " FLAG("canary") ", " FLAG(
	 "network") "]}",
	3, "canary,network"},                                                 /* sorted, unique */
    {"{\"flags_total\": 70, \"flags\": [" FLAG("canary") "]}", 70, "canary"}, /* > listed */
    {"{\"flags_total\": 0}", 0, ""},
    {"{\"flags_total\": -1}", 0, ""},
    {"{\"flags_total\": 2.5}", 0, ""},
    {"{\"flags_total\": 2.0}", 0, ""}, /* a real is no count */
    {"{\"flags_total\": \"3\"}", 0, ""},
    {"{\"flags_total\": true}", 0, ""},
    {"{\"flags_total\": null}", 0, ""},
    {"{\"flags_total\": 1000000000}", 1000000000, ""}, /* REPORT_FLAGS_TOTAL_MAX */
    {"{\"flags_total\": 1000000001}", 0, ""},          /* past any scan: no count */
    {"{\"flags_total\": 9223372036854775807}", 0, ""},
    /* a total below the flags listed: the list wins, so a forged 0 hides nothing */
    {"{\"flags_total\": 0, \"flags\": [" FLAG("refused") ", " FLAG("canary") "]}", 2,
	"canary,refused"},
    {"{\"flags\": [" FLAG("hidden_path") "]}", 1, "hidden_path"},
    /* only objects are flags, only non-empty strings are kinds */
    {"{\"flags_total\": -5, \"flags\": [" FLAG("x") ", 7, \"network\", null, [], {\"kind\": "
						    "3}, {\"kind\": \"\"}, {}]}",
	4, "x"},
    {"{\"flags\": {\"kind\": \"canary\"}}", 0, ""}, /* not an array */
    {"{\"flags_total\": 1, \"flags\": \"canary\"}", 1, ""},
};

static char *
joined_kinds(const json_t *r)
{
	struct sb_buf b = SB_BUF_INIT(1 << 16);
	const json_t *k;
	size_t i;

	ck_assert(json_is_array(json_object_get(r, "flag_kinds")));
	json_array_foreach(json_object_get(r, "flag_kinds"), i, k) {
		ck_assert(json_is_string(k));
		ck_assert_int_eq(
		    sb_buf_appendf(&b, NULL, "%s%s", i ? "," : "", json_string_value(k)), 0);
	}
	return sb_buf_detach(&b, NULL);
}

START_TEST(test_record_flags)
{
	json_t *s = summary(flag_cases[_i].json);
	json_t *r = report_record(s, "/r/x");
	char *kinds = joined_kinds(r);

	ck_assert_msg(json_is_integer(json_object_get(r, "flags")), "case %d: no count", _i);
	ck_assert_msg(json_integer_value(json_object_get(r, "flags")) == flag_cases[_i].flags,
	    "case %d: flags %lld, want %lld", _i,
	    (long long)json_integer_value(json_object_get(r, "flags")),
	    (long long)flag_cases[_i].flags);
	ck_assert_str_eq(kinds, flag_cases[_i].kinds);
	free(kinds);
	json_decref(s);
	json_decref(r);
}
END_TEST

/* A summary's flags are bounded however many it lists: entries read, kinds kept, bytes. */
START_TEST(test_record_flags_bounded)
{
	json_t *s = json_pack("{s:I, s:[]}", "flags_total", (json_int_t)5, "flags"), *r;
	char *kinds, long_kind[200 * 2 + 1];
	const char *k0;

	/* 100 flags of 100 kinds, listed from k099 down */
	for (int i = 99; i >= 0; i--)
		json_array_append_new(json_object_get(s, "flags"),
		    json_pack("{s:o}", "kind", json_sprintf("k%03d", i)));
	r = report_record(s, "/r/x");
	/* only the first REPORT_FLAGS_READ entries are looked at: 64 listed beat a total of 5 */
	ck_assert_int_eq(json_integer_value(json_object_get(r, "flags")), REPORT_FLAGS_READ);
	ck_assert_int_eq(json_array_size(json_object_get(r, "flag_kinds")), REPORT_FLAG_KINDS_MAX);
	kinds = joined_kinds(r);
	/* the first 16 kinds seen (k099 ... k084), sorted */
	ck_assert_str_eq(kinds, "k084,k085,k086,k087,k088,k089,k090,k091,k092,k093,k094,k095,"
				"k096,k097,k098,k099");
	free(kinds);
	json_decref(r);
	json_decref(s);

	/* a kind of 200 two-byte characters is cut at a character boundary */
	for (int i = 0; i < 200; i++)
		memcpy(long_kind + 2 * i, "\xc3\xa9", 2);
	long_kind[400] = '\0';
	s = json_pack("{s:[{s:s}]}", "flags", "kind", long_kind);
	r = report_record(s, "/r/x");
	k0 = json_string_value(json_array_get(json_object_get(r, "flag_kinds"), 0));
	ck_assert_ptr_nonnull(k0);
	ck_assert_uint_eq(strlen(k0), REPORT_FLAG_KIND_MAX);
	ck_assert(strncmp(k0, long_kind, REPORT_FLAG_KIND_MAX) == 0);
	json_decref(r);
	json_decref(s);
}
END_TEST

/* --- the model --------------------------------------------------------------------- */

/* Add a run: agent, task, category, duration (< 0: none), spend (< 0: none). */
static void
add_run(json_t *input, const char *agent, const char *task, const char *status, double dur,
    double spend, bool reference)
{
	static int n;
	json_t *s, *r;

	s = json_pack("{s:o, s:{s:s}, s:{s:s, s:s, s:b}, s:{s:s}}", "run_id",
	    json_sprintf("r%d", n++), "task", "id", task, "config", "agent", agent, "model", "m",
	    "reference_run", reference, "patch_result", "status", status);
	if (strcmp(status, "error") == 0) {
		json_object_set_new(s, "scored", json_false());
	} else {
		json_object_set_new(s, "scored", json_true());
		json_object_set_new(s, "isolation",
		    json_pack("{s:s, s:s}", "outcome",
			strcmp(status, "forfeit") == 0 ? "forfeit" : "scored", "tier",
			"restricted"));
	}
	/* a forfeit's result is replaced by an error result (outcome.c): nothing built */
	if (strcmp(status, "forfeit") != 0)
		json_object_set_new(
		    json_object_get(s, "patch_result"), "build_success", json_true());
	if (dur >= 0)
		json_object_set_new(s, "duration_s", json_real(dur));
	if (spend >= 0)
		json_object_set_new(s, "spend", json_real(spend));
	r = report_record(s, "/r");
	json_array_append_new(json_object_get(input, "records"), r);
	json_decref(s);
}

static const json_t *
group(const json_t *model, size_t i)
{
	return json_array_get(json_object_get(model, "groups"), i);
}

static json_int_t
geti(const json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

START_TEST(test_model_groups)
{
	json_t *in = report_input_new("results", "/r"), *m;
	const json_t *a, *b;

	/* agent b: 5 attempts on t1 (2 passed), 1 forfeit, 1 error on t2 */
	add_run(in, "b", "t1", "passed", 10, 0.5, false);
	add_run(in, "b", "t1", "passed", 20, 0.5, false);
	add_run(in, "b", "t1", "failed", 30, 0.5, false);
	add_run(in, "b", "t1", "failed", 40, 0.5, false);
	add_run(in, "b", "t1", "failed", -1, -1, false);
	add_run(in, "b", "t2", "forfeit", -1, -1, false);
	add_run(in, "b", "t2", "error", -1, 2.0, false);
	/* agent a: one pass; and two reference runs, which count nowhere */
	add_run(in, "a", "t2", "passed", 5, -1, false);
	add_run(in, "reference", "t1", "passed", 1, -1, false);
	add_run(in, "a", "t1", "passed", 1, -1, true);
	m = report_model(in);

	ck_assert_int_eq(geti(json_object_get(m, "totals"), "runs_found"), 10);
	ck_assert_int_eq(geti(json_object_get(m, "totals"), "reference_runs"), 2);
	ck_assert_int_eq(geti(json_object_get(m, "totals"), "runs"), 8);
	ck_assert_int_eq(geti(json_object_get(m, "totals"), "passed"), 3);
	ck_assert_int_eq(geti(json_object_get(m, "totals"), "unscored"), 1);
	ck_assert_int_eq(json_array_size(json_object_get(m, "groups")), 2);
	ck_assert_int_eq(json_array_size(json_object_get(m, "runs")), 8);
	a = group(m, 0);
	b = group(m, 1);
	/* sorted by agent: a first, and "reference" is no group */
	ck_assert_str_eq(json_string_value(json_object_get(a, "agent")), "a");
	ck_assert_str_eq(json_string_value(json_object_get(b, "agent")), "b");
	ck_assert_int_eq(geti(a, "runs"), 1);
	ck_assert_int_eq(geti(a, "passed"), 1);
	ck_assert_int_eq(geti(b, "runs"), 7);
	ck_assert_int_eq(geti(b, "scored"), 6);
	ck_assert_int_eq(geti(b, "unscored"), 1);
	ck_assert_int_eq(geti(b, "forfeit"), 1);
	ck_assert_int_eq(geti(b, "passed"), 2);
	ck_assert_int_eq(geti(b, "failed"), 3);
	/* pass rate 2/6 with its interval */
	NEAR(json_real_value(json_object_get(b, "pass_rate")), 0.3333, 1e-9);
	NEAR(json_real_value(json_array_get(json_object_get(b, "pass_rate_ci"), 0)), 0.0968, 1e-4);
	NEAR(json_real_value(json_array_get(json_object_get(b, "pass_rate_ci"), 1)), 0.7000, 1e-4);
	/* pass@k: t1 has 5 scored attempts (2 passed), t2 one (a forfeit) */
	ck_assert_int_eq(geti(b, "attempts_per_task"), 5);
	{
		const json_t *pak = json_object_get(b, "pass_at_k");

		ck_assert_int_eq(json_array_size(pak), 5);
		/* k = 1: both tasks, (0.4 + 0) / 2 */
		ck_assert_int_eq(geti(json_array_get(pak, 0), "tasks"), 2);
		NEAR(json_real_value(json_object_get(json_array_get(pak, 0), "value")), 0.2, 1e-9);
		/* k = 2: t1 alone */
		ck_assert_int_eq(geti(json_array_get(pak, 1), "tasks"), 1);
		NEAR(json_real_value(json_object_get(json_array_get(pak, 1), "value")), 0.7, 1e-9);
		NEAR(json_real_value(json_object_get(json_array_get(pak, 4), "value")), 1.0, 1e-9);
	}
	/* a has one attempt per task: no pass@k */
	ck_assert_int_eq(json_array_size(json_object_get(a, "pass_at_k")), 0);
	/* durations 10, 20, 30, 40: median 25, p90 37 */
	NEAR(
	    json_real_value(json_object_get(json_object_get(b, "duration_s"), "median")), 25, 1e-9);
	NEAR(json_real_value(json_object_get(json_object_get(b, "duration_s"), "p90")), 37, 1e-9);
	ck_assert_int_eq(geti(json_object_get(b, "duration_s"), "runs"), 4);
	/* spend: 4 x 0.5 + 2.0 over 5 runs that have one */
	NEAR(json_real_value(json_object_get(json_object_get(b, "spend_usd"), "total")), 4.0, 1e-9);
	NEAR(json_real_value(json_object_get(json_object_get(b, "spend_usd"), "per_run")), 0.8,
	    1e-9);
	ck_assert_int_eq(geti(json_object_get(b, "spend_usd"), "runs"), 5);
	ck_assert(json_is_null(json_object_get(json_object_get(a, "spend_usd"), "total")));
	/* checks: built in 5 of the 6 scored runs (the forfeit's result was replaced) */
	ck_assert_int_eq(geti(json_object_get(json_object_get(b, "checks"), "built"), "runs"), 5);
	/* the matrix: t1 x b = 2/5, t2 x b = 0/1 + 1 unscored */
	{
		const json_t *mx = json_object_get(m, "matrix");
		const json_t *t1b =
		    json_array_get(json_object_get(json_array_get(mx, 0), "cells"), 1);
		const json_t *t2b =
		    json_array_get(json_object_get(json_array_get(mx, 1), "cells"), 1);
		const json_t *t1a =
		    json_array_get(json_object_get(json_array_get(mx, 0), "cells"), 0);

		ck_assert_str_eq(
		    json_string_value(json_object_get(json_array_get(mx, 0), "task")), "t1");
		ck_assert_int_eq(geti(t1b, "passed"), 2);
		ck_assert_int_eq(geti(t1b, "scored"), 5);
		ck_assert_int_eq(geti(t2b, "scored"), 1);
		ck_assert_int_eq(geti(t2b, "unscored"), 1);
		ck_assert_int_eq(geti(t2b, "forfeit"), 1);
		/* the reference run on t1 is in no cell */
		ck_assert_int_eq(geti(t1a, "runs"), 0);
	}
	json_decref(m);
	json_decref(in);
}
END_TEST

/* Open-egress runs are a group of their own, never mixed with restricted ones. */
START_TEST(test_model_egress_apart)
{
	json_t *in = report_input_new("results", "/r"), *m, *s;

	add_run(in, "a", "t1", "passed", 1, -1, false);
	s = summary(
	    "{\"isolation\": {\"outcome\": \"scored\", \"tier\": \"open\"}, \"scored\": true, "
	    "\"config\": {\"agent\": \"a\", \"model\": \"m\"}, \"task\": {\"id\": \"t1\"}, "
	    "\"patch_result\": {\"status\": \"passed\"}}");
	json_array_append_new(json_object_get(in, "records"), report_record(s, "/r"));
	json_decref(s);
	m = report_model(in);
	ck_assert_int_eq(json_array_size(json_object_get(m, "groups")), 2);
	ck_assert_str_eq(json_string_value(json_object_get(group(m, 0), "egress")), "restricted");
	ck_assert_str_eq(json_string_value(json_object_get(group(m, 1), "egress")), "open");
	ck_assert_str_eq(
	    json_string_value(json_object_get(group(m, 1), "label")), "a / m (open egress)");
	json_decref(m);
	json_decref(in);
}
END_TEST

/* Add the run of the summary js. */
static void
add_summary(json_t *input, const char *js)
{
	json_t *s = summary(js);

	json_array_append_new(json_object_get(input, "records"), report_record(s, "/r"));
	json_decref(s);
}

#define RUN(agent, extra)                                                                          \
	"{" ISO_SCORED ", \"config\": {\"agent\": \"" agent "\", \"model\": \"m\"}, \"task\": "    \
	"{\"id\": \"t1\"}, " extra "}"

/*
 * flagged: the runs of a group with a flag, whatever their grade (an unscored run too),
 * reference runs in none; the totals add the groups up; every format says the same.
 */
START_TEST(test_model_flagged)
{
	json_t *in = report_input_new("results", "/r"), *m;
	const json_t *run;
	size_t i, flagged_runs = 0;

	add_summary(in, RUN("a", "\"patch_result\": {\"status\": \"passed\"}, \"flags_total\": 2, "
				 "\"flags\": [" FLAG("network") ", " FLAG("canary") "]"));
	add_summary(in, RUN("a", "\"patch_result\": {\"status\": \"failed\"}"));
	add_summary(in,
	    "{\"scored\": false, \"config\": {\"agent\": \"a\", \"model\": \"m\"}, "
	    "\"task\": {\"id\": \"t2\"}, \"flags_total\": 1, \"flags\": [" FLAG("refused") "]}");
	add_summary(in, RUN("b", "\"patch_result\": {\"status\": \"passed\"}, \"flags_total\": 0, "
				 "\"flags\": []"));
	add_summary(
	    in, RUN("b", "\"patch_result\": {\"status\": \"failed\"}, \"flags_total\": -3"));
	add_summary(in, RUN("reference", "\"patch_result\": {\"status\": \"passed\"}, "
					 "\"flags_total\": 5"));
	m = report_model(in);

	ck_assert_int_eq(json_array_size(json_object_get(m, "groups")), 2);
	ck_assert_int_eq(geti(group(m, 0), "flagged"), 2);
	ck_assert_int_eq(geti(group(m, 1), "flagged"), 0);
	ck_assert_int_eq(geti(json_object_get(m, "totals"), "flagged"), 2);
	/* flags never change a grade */
	ck_assert_int_eq(geti(group(m, 0), "passed"), 1);
	ck_assert_int_eq(geti(group(m, 0), "unscored"), 1);
	json_array_foreach(json_object_get(m, "runs"), i, run)
		flagged_runs += geti(run, "flags") > 0;
	ck_assert_uint_eq(flagged_runs, 2);
	{
		struct sb_buf b = SB_BUF_INIT(1 << 20);
		const char *p;
		int n = 0;

		ck_assert_int_eq(report_render(m, REPORT_MD, &b, NULL), 0);
		ck_assert_ptr_nonnull(strstr(b.s, "## Flagged runs (2)"));
		ck_assert_ptr_nonnull(strstr(b.s, "| passed | 2 | canary, network |"));
		ck_assert_ptr_nonnull(strstr(b.s, "| t2 | – | not scored | 1 | refused |"));
		/* the groups table ends with the flagged column: a's 2, b's 0 */
		ck_assert_ptr_nonnull(strstr(b.s, "| G1 a / m |"));
		ck_assert_ptr_nonnull(strstr(b.s, " | 2 |\n| G2 b / m |"));
		sb_buf_release(&b);
		ck_assert_int_eq(report_render(m, REPORT_JUNIT, &b, NULL), 0);
		for (p = b.s; (p = strstr(p, "<system-out>")) != NULL; p++)
			n++;
		ck_assert_int_eq(n, 2);
		ck_assert_ptr_nonnull(
		    strstr(b.s, "<system-out>flags: 2 (canary, network)</system-out>"));
		ck_assert_ptr_nonnull(strstr(b.s, "<property name=\"flagged\" value=\"2\"/>"));
		sb_buf_release(&b);
		ck_assert_int_eq(report_render(m, REPORT_CSV, &b, NULL), 0);
		ck_assert_ptr_nonnull(strstr(b.s, ",runs_with_tokens,flagged,pass_at_1,"));
		sb_buf_release(&b);
		ck_assert_int_eq(report_render(m, REPORT_HTML, &b, NULL), 0);
		ck_assert_ptr_nonnull(strstr(b.s, "<h2>Flagged runs (2)</h2>"));
		ck_assert_ptr_nonnull(strstr(b.s, "<td class=\"l\">2: canary, network</td>"));
		sb_buf_release(&b);
	}
	json_decref(m);
	json_decref(in);
}
END_TEST

/* An empty input is a model with zeros, not a failure. */
START_TEST(test_model_empty)
{
	json_t *in = report_input_new("results", "/r"), *m = report_model(in);

	ck_assert_int_eq(geti(json_object_get(m, "totals"), "runs"), 0);
	ck_assert_int_eq(json_array_size(json_object_get(m, "groups")), 0);
	for (int f = REPORT_MD; f <= REPORT_JUNIT; f++) {
		struct sb_buf b = SB_BUF_INIT(1 << 20);

		ck_assert_int_eq(report_render(m, (enum report_format)f, &b, NULL), 0);
		ck_assert(b.len > 0);
		sb_buf_release(&b);
	}
	json_decref(m);
	json_decref(in);
}
END_TEST

/* --- escaping ---------------------------------------------------------------------- */

static const struct {
	const char *in, *want;
	size_t max;
} esc_cases[] = {
    {"<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;", 0},
    {"a\"b'c&d", "a&quot;b&#39;c&amp;d", 0},
    {"x\x01y\x1b[31mz\x7f", "x\\x01y\\x1b[31mz\\x7f", 0},
    {"l1\nl2\tt", "l1\\nl2\\tt", 0},
    {"abc\xe2\x80\xae"
     "fdp.exe",
	"abc\\u{202E}fdp.exe", 0},                 /* right-to-left override */
    {"\xc2\x85", "\\u{0085}", 0},                  /* C1 NEL */
    {"\xef\xbf\xbe", "\\u{FFFE}", 0},              /* not a character */
    {"bad\xff\xfe", "bad\\xff\\xfe", 0},           /* not UTF-8 */
    {"\xc3\xa9t\xc3\xa9", "\xc3\xa9t\xc3\xa9", 0}, /* UTF-8 kept */
    {"abcdef", "abc…", 3},                         /* cut, in characters */
    {"\xc3\xa9\xc3\xa9\xc3\xa9", "\xc3\xa9\xc3\xa9…", 2},
};

START_TEST(test_xml_escape)
{
	struct sb_buf b = SB_BUF_INIT(4096);

	ck_assert_int_eq(report_xml_escape(&b, esc_cases[_i].in, esc_cases[_i].max, NULL), 0);
	ck_assert_str_eq(b.s, esc_cases[_i].want);
	sb_buf_release(&b);
}
END_TEST

/* Hostile names through every format: no raw markup, no control character. */
START_TEST(test_render_hostile)
{
	static const char evil[] = "<script>alert(\\\"x\\\")</script>\\u0001\\u202e'&|*";
	json_t *in = report_input_new("results", "/r<b>"), *m, *s;
	char js[2048];

	/* and a flag whose kind is the same and whose excerpt is a terminal escape */
	snprintf(js, sizeof(js),
	    "{\"run_id\": \"%s\", \"task\": {\"id\": \"%s\"}, \"config\": {\"agent\": \"%s\", "
	    "\"model\": \"%s\"}, " ISO_SCORED ", \"patch_result\": {\"status\": \"failed\", "
	    "\"error_msg\": \"%s\"}, \"job\": {\"attempt\": 2}, \"flags_total\": 1, \"flags\": "
	    "[{\"kind\": \"%s\\u001b[2J\", \"match\": \"MATCH<i>\", \"excerpt\": "
	    "\"EXCERPT\\u001b]0;pwned\\u0007<script>\"}]}",
	    evil, evil, evil, evil, evil, evil);
	s = summary(js);
	json_array_append_new(json_object_get(in, "records"), report_record(s, "/r/<dir>"));
	json_decref(s);
	m = report_model(in);
	for (int f = REPORT_MD; f <= REPORT_JUNIT; f++) {
		struct sb_buf b = SB_BUF_INIT(1 << 22);

		if (f == REPORT_JSON)
			continue;
		ck_assert_int_eq(report_render(m, (enum report_format)f, &b, NULL), 0);
		if (f != REPORT_CSV && f != REPORT_CSV_RUNS)
			ck_assert_msg(strstr(b.s, "<script") == NULL, "format %d: raw <script>", f);
		ck_assert_msg(strchr(b.s, '\x01') == NULL, "format %d: a control character", f);
		ck_assert_msg(strchr(b.s, '\x1b') == NULL, "format %d: an ESC", f);
		ck_assert_msg(strstr(b.s, "EXCERPT") == NULL && strstr(b.s, "MATCH") == NULL,
		    "format %d: a flag's evidence", f);
		/* the flag's kind is there, escaped, in every format that lists runs */
		ck_assert_msg(f == REPORT_CSV || strstr(b.s, "\\x1b[2J") != NULL ||
				  strstr(b.s, "\\x1b\\[2J") != NULL,
		    "format %d: no flag kind", f);
		ck_assert_msg(strstr(b.s, "\xe2\x80\xae") == NULL, "format %d: an RTL override", f);
		sb_buf_release(&b);
	}
	json_decref(m);
	json_decref(in);
}
END_TEST

static Suite *
report_suite(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("report");

	tcase_add_loop_test(
	    tc, test_wilson, 0, (int)(sizeof(wilson_cases) / sizeof(wilson_cases[0])));
	tcase_add_loop_test(tc, test_pass_at_k, 0, (int)(sizeof(pak_cases) / sizeof(pak_cases[0])));
	tcase_add_test(tc, test_pass_at_k_large);
	tcase_add_test(tc, test_quantile);
	tcase_add_loop_test(
	    tc, test_record_category, 0, (int)(sizeof(record_cases) / sizeof(record_cases[0])));
	tcase_add_test(tc, test_record_members);
	tcase_add_loop_test(
	    tc, test_record_flags, 0, (int)(sizeof(flag_cases) / sizeof(flag_cases[0])));
	tcase_add_test(tc, test_record_flags_bounded);
	tcase_add_test(tc, test_model_groups);
	tcase_add_test(tc, test_model_egress_apart);
	tcase_add_test(tc, test_model_flagged);
	tcase_add_test(tc, test_model_empty);
	tcase_add_loop_test(
	    tc, test_xml_escape, 0, (int)(sizeof(esc_cases) / sizeof(esc_cases[0])));
	tcase_add_test(tc, test_render_hostile);
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(report_suite)

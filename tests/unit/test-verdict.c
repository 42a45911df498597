/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-verdict.c: the fail-closed run verdict. Broken one property at a time, a run is not
 * scored and exactly that property is named; broken all at once, every one is named; a
 * claimed property nobody checked counts as broken; the tier comes from what was
 * established, never from what was configured. isolation.json read back (sb_iso_from_json)
 * is the record that wrote it, and anything else is refused; the grade's verdict
 * (sb_grade_decide) is one rule, read from a struct or from an untrusted patch_result.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sb/json.h"
#include "sb/mem.h"
#include "sb/verdict.h"

#include "unit.h"
#include "verdict-fixtures.h"

START_TEST(test_all_held_restricted)
{
	struct sb_iso_record r;
	char *failed = NULL;

	all_held(&r, true, SB_ISO_BEFORE_GRADING);
	ck_assert(sb_iso_verdict(&r, SB_ISO_BEFORE_GRADING, &failed));
	ck_assert_str_eq(failed, "");
	ck_assert_str_eq(sb_iso_tier(&r, SB_ISO_BEFORE_GRADING), "restricted");
	ck_assert_int_eq(sb_iso_outcome(&r, SB_ISO_BEFORE_GRADING, NULL), SB_ISO_SCORED);
	ck_assert_str_eq(sb_iso_outcome_name(SB_ISO_SCORED), "scored");
	ck_assert_str_eq(sb_iso_outcome_name(SB_ISO_FORFEIT), "forfeit");
	ck_assert_str_eq(sb_iso_outcome_name(SB_ISO_UNSCORED), "unscored");
	free(failed);
}
END_TEST

/* Each property broken alone, in each phase that claims it: exactly its name. */
START_TEST(test_one_broken)
{
	enum sb_iso_prop p = (enum sb_iso_prop)(_i % SB_ISO_PROP_COUNT);
	enum sb_iso_phase ph = (enum sb_iso_phase)(_i / SB_ISO_PROP_COUNT);
	struct sb_iso_record r;
	char *failed = NULL;

	if (!sb_iso_claimed(p, ph, true))
		return;
	all_held(&r, true, SB_ISO_BEFORE_GRADING);
	sb_iso_note(&r, ph, p, false, "broken on purpose");
	ck_assert(!sb_iso_verdict(&r, SB_ISO_BEFORE_GRADING, &failed));
	ck_assert_str_eq(failed, sb_iso_prop_name(p));
	ck_assert_ptr_null(sb_iso_tier(&r, SB_ISO_BEFORE_GRADING));
	free(failed);
	/*
	 * Broken before the agent: the harness's failure (unscored, no tier). Broken only
	 * before grading, with everything held before the agent: a forfeit, which counts (a
	 * tier, "scored" true) as not passed, and names what broke.
	 */
	failed = NULL;
	ck_assert_int_eq(sb_iso_outcome(&r, SB_ISO_BEFORE_GRADING, &failed),
	    ph == SB_ISO_BEFORE_AGENT ? SB_ISO_UNSCORED : SB_ISO_FORFEIT);
	ck_assert_str_eq(failed, sb_iso_prop_name(p));
	free(failed);
	{
		json_t *j = sb_iso_to_json(&r, SB_ISO_BEFORE_GRADING);

		ck_assert_str_eq(json_string_value(json_object_get(j, "outcome")),
		    ph == SB_ISO_BEFORE_AGENT ? "unscored" : "forfeit");
		ck_assert(json_is_true(json_object_get(j, "scored")) == (ph != SB_ISO_BEFORE_AGENT));
		if (ph == SB_ISO_BEFORE_AGENT)
			ck_assert(json_is_null(json_object_get(j, "tier")));
		else
			ck_assert_str_eq(json_string_value(json_object_get(j, "tier")), "restricted");
		json_decref(j);
	}
	/* Looked at before the agent only, a failure there is never a forfeit. */
	if (ph == SB_ISO_BEFORE_AGENT)
		ck_assert_int_eq(sb_iso_outcome(&r, SB_ISO_BEFORE_AGENT, NULL), SB_ISO_UNSCORED);
}
END_TEST

START_TEST(test_all_broken)
{
	struct sb_iso_record r;
	char *failed = NULL;
	json_t *j;

	sb_iso_record_init(&r, true);
	for (int p = 0; p < SB_ISO_PROP_COUNT; p++)
		sb_iso_note(&r, SB_ISO_BEFORE_AGENT, (enum sb_iso_prop)p, false, "broken");
	ck_assert(!sb_iso_verdict(&r, SB_ISO_BEFORE_AGENT, &failed));
	for (int p = 0; p < SB_ISO_PROP_COUNT; p++)
		ck_assert_msg(strstr(failed, sb_iso_prop_name((enum sb_iso_prop)p)) != NULL,
		    "%s not named in '%s'", sb_iso_prop_name((enum sb_iso_prop)p), failed);
	j = sb_iso_to_json(&r, SB_ISO_BEFORE_AGENT);
	ck_assert(json_is_false(json_object_get(j, "scored")));
	ck_assert(json_is_null(json_object_get(j, "tier")));
	ck_assert_int_eq(json_array_size(json_object_get(j, "failed")), SB_ISO_PROP_COUNT);
	json_decref(j);
	free(failed);
}
END_TEST

/* Fail closed: nothing checked is nothing established. */
START_TEST(test_unchecked_is_failed)
{
	struct sb_iso_record r;
	char *failed = NULL;

	sb_iso_record_init(&r, true);
	ck_assert(!sb_iso_verdict(&r, SB_ISO_BEFORE_AGENT, &failed));
	ck_assert(strstr(failed, "network_internal") != NULL);
	free(failed);
	/* The first phase held, the second never ran: not scored. */
	all_held(&r, true, SB_ISO_BEFORE_AGENT);
	ck_assert(sb_iso_verdict(&r, SB_ISO_BEFORE_AGENT, NULL));
	ck_assert(!sb_iso_verdict(&r, SB_ISO_BEFORE_GRADING, &failed));
	ck_assert(strstr(failed, "seccomp") != NULL);
	ck_assert(strstr(failed, "single_commit") == NULL); /* not claimed before grading */
	free(failed);
}
END_TEST

/* A failure is not overwritten by a later success (agent held, runner failed, ...). */
START_TEST(test_failure_sticks)
{
	struct sb_iso_record r;
	json_t *j, *o;

	all_held(&r, true, SB_ISO_BEFORE_GRADING);
	sb_iso_note(&r, SB_ISO_BEFORE_AGENT, SB_ISO_TASK_FILES_HIDDEN, false, "runner read x");
	sb_iso_note(&r, SB_ISO_BEFORE_AGENT, SB_ISO_TASK_FILES_HIDDEN, true, "agent: fine");
	ck_assert(!sb_iso_verdict(&r, SB_ISO_BEFORE_GRADING, NULL));
	j = sb_iso_to_json(&r, SB_ISO_BEFORE_GRADING);
	o = json_object_get(json_object_get(json_object_get(j, "phases"), "before_agent"),
	    "task_files_hidden");
	ck_assert_str_eq(json_string_value(json_object_get(o, "status")), "failed");
	ck_assert_str_eq(json_string_value(json_object_get(o, "detail")), "runner read x");
	json_decref(j);
}
END_TEST

/* The tier is what was established: an open run is "open", even with every check held. */
START_TEST(test_tier_from_established)
{
	struct sb_iso_record r;
	json_t *j, *o;

	all_held(&r, false, SB_ISO_BEFORE_GRADING);
	ck_assert(sb_iso_verdict(&r, SB_ISO_BEFORE_GRADING, NULL));
	ck_assert_str_eq(sb_iso_tier(&r, SB_ISO_BEFORE_GRADING), "open");
	/* Checking the network anyway does not promote it. */
	sb_iso_note(&r, SB_ISO_BEFORE_AGENT, SB_ISO_NETWORK_INTERNAL, true, "no default route");
	sb_iso_note(&r, SB_ISO_BEFORE_AGENT, SB_ISO_HOST_UNREACHABLE, true, "timed out");
	ck_assert_str_eq(sb_iso_tier(&r, SB_ISO_BEFORE_GRADING), "open");
	j = sb_iso_to_json(&r, SB_ISO_BEFORE_GRADING);
	ck_assert_str_eq(json_string_value(json_object_get(j, "tier")), "open");
	ck_assert_str_eq(json_string_value(json_object_get(j, "egress")), "open");
	o = json_object_get(json_object_get(json_object_get(j, "phases"), "before_grading"),
	    "network_internal");
	ck_assert_str_eq(json_string_value(json_object_get(o, "status")), "not_claimed");
	json_decref(j);
	/* A restricted claim with the network open is not scored at all, not "open". */
	all_held(&r, true, SB_ISO_BEFORE_GRADING);
	sb_iso_note(&r, SB_ISO_BEFORE_GRADING, SB_ISO_NETWORK_INTERNAL, false, "default route");
	ck_assert_ptr_null(sb_iso_tier(&r, SB_ISO_BEFORE_GRADING));
}
END_TEST

START_TEST(test_names)
{
	for (int p = 0; p < SB_ISO_PROP_COUNT; p++) {
		ck_assert_ptr_nonnull(sb_iso_prop_name((enum sb_iso_prop)p));
		ck_assert_ptr_nonnull(sb_iso_prop_what((enum sb_iso_prop)p));
		for (int q = 0; q < p; q++)
			ck_assert_str_ne(sb_iso_prop_name((enum sb_iso_prop)p),
			    sb_iso_prop_name((enum sb_iso_prop)q));
	}
	ck_assert_ptr_null(sb_iso_prop_name(SB_ISO_PROP_COUNT));
	ck_assert_str_eq(sb_iso_phase_name(SB_ISO_BEFORE_GRADING), "before_grading");
}
END_TEST

START_TEST(test_detail_bounded)
{
	struct sb_iso_record r;
	char big[1000];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	sb_iso_record_init(&r, true);
	sb_iso_note(&r, SB_ISO_BEFORE_AGENT, SB_ISO_SECCOMP, false, "%s", big);
	ck_assert_uint_eq(strlen(r.detail[SB_ISO_BEFORE_AGENT][SB_ISO_SECCOMP]),
	    SB_ISO_DETAIL_MAX - 1);
	sb_iso_note(&r, (enum sb_iso_phase)7, SB_ISO_SECCOMP, false, "ignored");
	sb_iso_note(&r, SB_ISO_BEFORE_AGENT, (enum sb_iso_prop)99, false, "ignored");
}
END_TEST

/*
 * Sidecar mode: the task container's record folded into the agent container's. A failure
 * on the task side fails the run, what only the task side checked counts, and a record for
 * another egress claim or without the phase is refused (so that side stays unchecked).
 */
START_TEST(test_merge_other_side)
{
	struct sb_iso_record agent, task;
	char *failed = NULL;
	json_t *doc;

	/* The task side holds everything; the agent side never checked the runner. */
	all_held(&task, true, SB_ISO_BEFORE_AGENT);
	all_held(&agent, true, SB_ISO_BEFORE_AGENT);
	agent.state[SB_ISO_BEFORE_AGENT][SB_ISO_RUNNER_IDENTITY] = SB_ISO_UNCHECKED;
	ck_assert(!sb_iso_verdict(&agent, SB_ISO_BEFORE_AGENT, NULL));
	doc = sb_iso_to_json(&task, SB_ISO_BEFORE_AGENT);
	ck_assert(sb_iso_merge_json(&agent, SB_ISO_BEFORE_AGENT, doc, "task container"));
	ck_assert(sb_iso_verdict(&agent, SB_ISO_BEFORE_AGENT, NULL));
	ck_assert_str_eq(agent.detail[SB_ISO_BEFORE_AGENT][SB_ISO_RUNNER_IDENTITY],
	    "task container: ok");
	json_decref(doc);

	/* One failure on the task side: the merged run is not scored, and it is named. */
	task.state[SB_ISO_BEFORE_AGENT][SB_ISO_TASK_FILES_HIDDEN] = SB_ISO_UNCHECKED;
	sb_iso_note(&task, SB_ISO_BEFORE_AGENT, SB_ISO_TASK_FILES_HIDDEN, false, "read /ssebench");
	doc = sb_iso_to_json(&task, SB_ISO_BEFORE_AGENT);
	ck_assert(sb_iso_merge_json(&agent, SB_ISO_BEFORE_AGENT, doc, "task container"));
	ck_assert(!sb_iso_verdict(&agent, SB_ISO_BEFORE_AGENT, &failed));
	ck_assert_str_eq(failed, "task_files_hidden");
	ck_assert_str_eq(agent.detail[SB_ISO_BEFORE_AGENT][SB_ISO_TASK_FILES_HIDDEN],
	    "task container: read /ssebench");
	free(failed);

	/* The phase is missing, or the claim differs: refused, nothing noted. */
	all_held(&agent, true, SB_ISO_BEFORE_AGENT);
	ck_assert(!sb_iso_merge_json(&agent, SB_ISO_BEFORE_GRADING, doc, "task container"));
	json_decref(doc);
	all_held(&task, false, SB_ISO_BEFORE_AGENT);
	task.state[SB_ISO_BEFORE_AGENT][SB_ISO_SECCOMP] = SB_ISO_UNCHECKED;
	sb_iso_note(&task, SB_ISO_BEFORE_AGENT, SB_ISO_SECCOMP, false, "no filter");
	doc = sb_iso_to_json(&task, SB_ISO_BEFORE_AGENT);
	ck_assert(!sb_iso_merge_json(&agent, SB_ISO_BEFORE_AGENT, doc, "task container"));
	ck_assert(sb_iso_verdict(&agent, SB_ISO_BEFORE_AGENT, NULL));
	json_decref(doc);
	ck_assert(!sb_iso_merge_json(&agent, SB_ISO_BEFORE_AGENT, NULL, "task container"));
}
END_TEST

/* What entrypoints write reads back as the same record, with the same outcome. */
START_TEST(test_iso_json_round_trip)
{
	struct sb_iso_record r, back;
	struct sb_error *err = NULL;
	json_t *doc;

	for (int k = 0; k < 4; k++) {
		enum sb_iso_outcome want[] = { SB_ISO_SCORED, SB_ISO_SCORED, SB_ISO_FORFEIT,
			SB_ISO_UNSCORED };

		all_held(&r, k != 1, SB_ISO_BEFORE_GRADING);
		if (k == 2) /* broken on the agent's watch, with the task side's prefix */
			sb_iso_note(&r, SB_ISO_BEFORE_GRADING, SB_ISO_SECCOMP, false,
			    "task container: no filter \"%s\"", "\x01\xc3\xa9");
		if (k == 3) /* never checked before the agent */
			r.state[SB_ISO_BEFORE_AGENT][SB_ISO_REPO_HIDDEN] = SB_ISO_UNCHECKED;
		doc = as_file(&r, SB_ISO_BEFORE_GRADING);
		memset(&back, 0x55, sizeof(back));
		ck_assert_msg(sb_iso_from_json(doc, SB_ISO_BEFORE_GRADING, &back, &err) == 0,
		    "case %d: %s", k, err != NULL ? sb_error_message(err) : "");
		ck_assert_int_eq(back.egress_restricted, r.egress_restricted);
		ck_assert_mem_eq(back.state, r.state, sizeof(r.state));
		for (int ph = 0; ph < SB_ISO_PHASE_COUNT; ph++)
			for (int p = 0; p < SB_ISO_PROP_COUNT; p++)
				ck_assert_str_eq(back.detail[ph][p], r.detail[ph][p]);
		ck_assert_int_eq(sb_iso_outcome(&back, SB_ISO_BEFORE_GRADING, NULL), want[k]);
		/* One phase asked of a two-phase record (or two of one) is refused. */
		ck_assert_int_lt(sb_iso_from_json(doc, SB_ISO_BEFORE_AGENT, &back, &err), 0);
		sb_error_release(&err);
		json_decref(doc);
	}
	all_held(&r, true, SB_ISO_BEFORE_AGENT);
	doc = as_file(&r, SB_ISO_BEFORE_AGENT);
	ck_assert_int_eq(sb_iso_from_json(doc, SB_ISO_BEFORE_AGENT, &back, NULL), 0);
	ck_assert_int_lt(sb_iso_from_json(doc, SB_ISO_BEFORE_GRADING, &back, &err), 0);
	sb_error_release(&err);
	json_decref(doc);
}
END_TEST

/*
 * A detail that is not UTF-8 (a name the agent chose, or a character cut at the size
 * limit) is kept as '?' where a byte is not: every property's entry is written, and the
 * record reads back. Before, json_pack refused the entry and the record lost it.
 */
START_TEST(test_detail_not_utf8)
{
	struct sb_iso_record r, back;
	char longer[SB_ISO_DETAIL_MAX + 8];
	json_t *doc;

	all_held(&r, true, SB_ISO_BEFORE_GRADING);
	sb_iso_note(&r, SB_ISO_BEFORE_GRADING, SB_ISO_RUNNER_SANDBOX, false, "found /tmp/%s",
	    "a\xff" "b\xc3");
	ck_assert_str_eq(r.detail[SB_ISO_BEFORE_GRADING][SB_ISO_RUNNER_SANDBOX], "found /tmp/a?b?");
	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	memcpy(longer + SB_ISO_DETAIL_MAX - 2, "\xc3\xa9", 2); /* cut after its first byte */
	sb_iso_note(&r, SB_ISO_BEFORE_GRADING, SB_ISO_SECCOMP, false, "%s", longer);
	ck_assert_int_eq(r.detail[SB_ISO_BEFORE_GRADING][SB_ISO_SECCOMP][SB_ISO_DETAIL_MAX - 2], '?');
	doc = as_file(&r, SB_ISO_BEFORE_GRADING);
	ck_assert_int_eq(json_object_size(json_object_get(json_object_get(doc, "phases"),
			     "before_grading")), SB_ISO_PROP_COUNT);
	ck_assert_int_eq(sb_iso_from_json(doc, SB_ISO_BEFORE_GRADING, &back, NULL), 0);
	ck_assert_int_eq(sb_iso_outcome(&back, SB_ISO_BEFORE_GRADING, NULL), SB_ISO_FORFEIT);
	json_decref(doc);
}
END_TEST

START_TEST(test_iso_json_attacks)
{
	struct sb_iso_record r, back;
	struct sb_error *err = NULL;
	json_t *doc;

	all_held(&r, true, SB_ISO_BEFORE_GRADING);
	doc = as_file(&r, SB_ISO_BEFORE_GRADING);
	ck_assert_int_eq(sb_iso_from_json(doc, SB_ISO_BEFORE_GRADING, &back, NULL), 0);
	ck_assert_int_eq(sb_iso_outcome(&back, SB_ISO_BEFORE_GRADING, NULL), SB_ISO_SCORED);
	attack(doc, _i);
	memset(&back, 0x55, sizeof(back));
	ck_assert_msg(sb_iso_from_json(doc, SB_ISO_BEFORE_GRADING, &back, &err) < 0,
	    "attack %d read as a record", _i);
	ck_assert_ptr_nonnull(err);
	/* Refused means nothing written: no half-read record to decide from. */
	ck_assert_int_eq(((unsigned char *)&back)[0], 0x55);
	sb_error_release(&err);
	json_decref(doc);
}
END_TEST

START_TEST(test_iso_outcome_message)
{
	char *m = sb_iso_outcome_message(SB_ISO_UNSCORED, "seccomp, single_commit");

	ck_assert_str_eq(m, "Not scored: isolation not established: seccomp, single_commit");
	free(m);
	m = sb_iso_outcome_message(SB_ISO_FORFEIT, "seccomp");
	ck_assert_str_eq(m, "Forfeit: the isolation established before the agent did not hold "
			    "before grading: seccomp");
	free(m);
}
END_TEST

/* The grade's rules, in their order (docs/evaluator.md). */
static const struct {
	struct sb_grade_checks c;
	enum sb_grade_rule want;
} decide_cases[] = {
	{ { 0 }, SB_GRADE_NOTHING_RAN },
	{ { .build = SB_CHECK_PASSED }, SB_GRADE_ALL_PASSED },
	{ { .build = SB_CHECK_FAILED, .timed_out = true, .exception = true }, SB_GRADE_CHECK_FAILED },
	{ { .pov_reported = true, .pov_passed = 1, .pov_total = 2, .timed_out = true },
	    SB_GRADE_CHECK_FAILED },
	{ { .pov_reported = true, .pov_passed = 0, .pov_total = 0 }, SB_GRADE_ALL_PASSED },
	{ { .pov_reported = false, .pov_passed = 0, .pov_total = 3 }, SB_GRADE_NOTHING_RAN },
	{ { .build = SB_CHECK_PASSED, .oracle = SB_CHECK_FAILED }, SB_GRADE_CHECK_FAILED },
	{ { .oracle = SB_CHECK_PASSED }, SB_GRADE_NOTHING_RAN },
	{ { .build = SB_CHECK_PASSED, .timed_out = true, .exception = true }, SB_GRADE_TIMED_OUT },
	{ { .build = SB_CHECK_PASSED, .exception = true }, SB_GRADE_EXCEPTION },
	{ { .timed_out = true }, SB_GRADE_TIMED_OUT },
	{ { .exception = true }, SB_GRADE_EXCEPTION },
	{ { .func_test = SB_CHECK_FAILED }, SB_GRADE_CHECK_FAILED },
	{ { .build = SB_CHECK_PASSED, .intent_test = SB_CHECK_FAILED }, SB_GRADE_CHECK_FAILED },
	{ { .intent_test = SB_CHECK_PASSED }, SB_GRADE_ALL_PASSED },
};

START_TEST(test_grade_decide)
{
	enum sb_grade_rule rule = sb_grade_decide(&decide_cases[_i].c);

	ck_assert_msg(rule == decide_cases[_i].want, "case %d: rule %d", _i, rule);
	ck_assert_str_eq(sb_grade_status_name(sb_grade_rule_status(rule)),
	    rule == SB_GRADE_ALL_PASSED ? "passed"
	    : rule == SB_GRADE_CHECK_FAILED || rule == SB_GRADE_TIMED_OUT ? "failed"
									 : "error");
}
END_TEST

/*
 * A result.json as the CLI reads it, its patch_result (pr) with the members beside it
 * (rest, inside an object's braces): the status it shows, or NULL when it is refused.
 */
static const struct {
	const char *pr, *rest;
	const char *want;
} from_json_cases[] = {
	{ "{}", "", "error" },
	{ "{\"build_success\": null, \"pov_total\": null}", "", "error" },
	{ "{\"build_success\": true}", "", "passed" },
	{ "{\"build_success\": false}", "", "failed" },
	{ "{\"build_success\": true, \"pov_passed\": 2, \"pov_total\": 2}", "", "passed" },
	{ "{\"build_success\": true, \"pov_passed\": 1, \"pov_total\": 2}", "", "failed" },
	{ "{\"pov_passed\": 0, \"pov_total\": 0}", "", "passed" },
	{ "{\"build_success\": true, \"func_test_success\": false}", "", "failed" },
	{ "{\"intent_test_success\": true, \"error_msg\": \"x\"}", "", "passed" },
	{ "{\"build_success\": true}",
	    ", \"runtime_result\": {\"evaluator_timeout\": false, \"agent_exit_code\": 0},"
	    " \"grading_result\": {\"oracle_passed\": true}", "passed" },
	/* What the evaluator decides by beside patch_result: the old reading passed these. */
	{ "{\"build_success\": true}", ", \"runtime_result\": {\"evaluator_timeout\": true}",
	    "failed" },
	{ "{\"build_success\": true}", ", \"grading_result\": {\"oracle_passed\": false}",
	    "failed" },
	/* Refused (fail closed), where the old reading said "passed" or "failed". */
	{ "{\"build_success\": \"yes\"}", "", NULL },
	{ "{\"build_success\": 1, \"func_test_success\": true}", "", NULL },
	{ "{\"build_success\": true, \"intent_test_success\": {}}", "", NULL },
	{ "{\"pov_passed\": -1, \"pov_total\": -1}", "", NULL },
	{ "{\"pov_passed\": 3, \"pov_total\": 2}", "", NULL },
	{ "{\"pov_passed\": 5000000000, \"pov_total\": 5000000000}", "", NULL },
	{ "{\"pov_passed\": 1.0, \"pov_total\": 1}", "", NULL },
	{ "{\"pov_total\": 1}", "", NULL },
	{ "{\"build_success\": true, \"pov_passed\": 1}", "", NULL },
	{ "{\"build_success\": true}", ", \"runtime_result\": {\"evaluator_timeout\": 1}", NULL },
	{ "{\"build_success\": true}", ", \"grading_result\": {\"oracle_passed\": \"no\"}", NULL },
	{ "[]", "", NULL },
};

START_TEST(test_grade_checks_from_json)
{
	char *text = sb_xasprintf("{\"patch_result\": %s%s}", from_json_cases[_i].pr,
	    from_json_cases[_i].rest);
	struct sb_grade_checks c;
	struct sb_error *err = NULL;
	json_t *result = NULL;
	int r;

	ck_assert_int_eq(sb_json_load(text, strlen(text), SIZE_MAX, &result, NULL), 0);
	memset(&c, 0x55, sizeof(c));
	r = sb_grade_checks_from_json(result, &c, &err);
	if (from_json_cases[_i].want == NULL) {
		ck_assert_msg(r < 0, "case %d read", _i);
		ck_assert_ptr_nonnull(err);
		ck_assert_int_eq(((unsigned char *)&c)[0], 0x55);
		sb_error_release(&err);
	} else {
		ck_assert_msg(r == 0, "case %d: %s", _i, err != NULL ? sb_error_message(err) : "");
		ck_assert_str_eq(sb_grade_status_name(sb_grade_rule_status(sb_grade_decide(&c))),
		    from_json_cases[_i].want);
	}
	json_decref(result);
	free(text);
}
END_TEST

/* The result of a run with no grade: the shape result.json has, every check null. */
START_TEST(test_ungraded_result)
{
	struct sb_run_runtime rt = { 12, true, true, 137 };
	json_t *r = sb_ungraded_result(true, "Forfeit: x", "log", &rt);
	char *text = json_dumps(r, JSON_COMPACT);

	ck_assert_str_eq(text,
	    "{\"patch_result\":{\"status\":\"forfeit\",\"build_success\":null,\"pov_passed\":null,"
	    "\"pov_total\":null,\"func_test_success\":null,\"intent_test_success\":null,"
	    "\"error_msg\":\"Forfeit: x\",\"error_log\":\"log\"},\"runtime_result\":"
	    "{\"agent_duration\":12,\"agent_timeout\":true,\"evaluator_timeout\":false,"
	    "\"agent_exit_code\":137}}");
	free(text);
	json_decref(r);
	r = sb_ungraded_result(false, "No result", NULL, NULL);
	text = json_dumps(r, JSON_COMPACT);
	ck_assert_str_eq(text,
	    "{\"patch_result\":{\"status\":\"error\",\"build_success\":null,\"pov_passed\":null,"
	    "\"pov_total\":null,\"func_test_success\":null,\"intent_test_success\":null,"
	    "\"error_msg\":\"No result\",\"error_log\":null},\"runtime_result\":"
	    "{\"agent_duration\":0,\"agent_timeout\":false,\"evaluator_timeout\":false,"
	    "\"agent_exit_code\":null}}");
	free(text);
	json_decref(r);
}
END_TEST

static Suite *
verdict_suite(void)
{
	Suite *s = suite_create("verdict");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_all_held_restricted);
	tcase_add_loop_test(tc, test_one_broken, 0, SB_ISO_PROP_COUNT * SB_ISO_PHASE_COUNT);
	tcase_add_test(tc, test_all_broken);
	tcase_add_test(tc, test_unchecked_is_failed);
	tcase_add_test(tc, test_failure_sticks);
	tcase_add_test(tc, test_tier_from_established);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_detail_bounded);
	tcase_add_test(tc, test_merge_other_side);
	tcase_add_test(tc, test_iso_json_round_trip);
	tcase_add_loop_test(tc, test_iso_json_attacks, 0, ATTACKS);
	tcase_add_test(tc, test_detail_not_utf8);
	tcase_add_test(tc, test_iso_outcome_message);
	tcase_add_loop_test(tc, test_grade_decide, 0, (int)SB_ARRAY_SIZE(decide_cases));
	tcase_add_loop_test(tc, test_grade_checks_from_json, 0, (int)SB_ARRAY_SIZE(from_json_cases));
	tcase_add_test(tc, test_ungraded_result);
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(verdict_suite)

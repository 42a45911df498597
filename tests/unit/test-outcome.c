/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-outcome.c: the result a run leaves on the host (src/ssebench/outcome.c:run_outcome),
 * from the files its container wrote. A record that holds and a pass its checks show: a
 * scored pass. Any attack on isolation.json (verdict-fixtures.h), a record for the other
 * egress, none at all, or a pass whose checks cannot be read: not a pass, and for the
 * record, not scored, the error naming why.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sb/json.h"
#include "sb/mem.h"
#include "sb/verdict.h"

#include "../../src/ssebench/run.h"
#include "unit.h"
#include "verdict-fixtures.h"

/* result.json of a graded run that passed, with build_success as given (JSON text). */
static json_t *
passed_result(const char *build)
{
	_cleanup_free_ char *text = sb_xasprintf(
	    "{\"patch_result\": {\"status\": \"passed\", \"build_success\": %s, \"pov_passed\": 1,"
	    " \"pov_total\": 1, \"func_test_success\": true, \"intent_test_success\": null,"
	    " \"error_msg\": null, \"error_log\": null}, \"runtime_result\": {}}",
	    build);
	json_t *r = NULL;

	ck_assert_int_eq(sb_json_load(text, strlen(text), SIZE_MAX, &r, NULL), 0);
	return r;
}

static const char *
status_of(const json_t *result)
{
	return json_string_value(json_object_get(json_object_get(result, "patch_result"), "status"));
}

static const char *
message_of(const json_t *result)
{
	return json_string_value(
	    json_object_get(json_object_get(result, "patch_result"), "error_msg"));
}

/* A record that holds, for the egress claimed: the evaluator's pass stands. */
START_TEST(test_scored_pass)
{
	enum sb_iso_outcome o = SB_ISO_UNSCORED;
	struct sb_iso_record r;
	json_t *out;

	all_held(&r, _i == 0, SB_ISO_BEFORE_GRADING);
	out = run_outcome(passed_result("true"), as_file(&r, SB_ISO_BEFORE_GRADING),
	    _i == 0 ? "restricted" : "open", false, NULL, &o);
	ck_assert_int_eq(o, SB_ISO_SCORED);
	ck_assert_str_eq(status_of(out), "passed");
	ck_assert(json_is_true(json_object_get(out, "scored")));
	ck_assert_ptr_null(json_object_get(out, "unscored_patch_result"));
	json_decref(out);
}
END_TEST

/* Each attack on the record: not scored, an error, what the evaluator said kept aside. */
START_TEST(test_attacked_record)
{
	enum sb_iso_outcome o = SB_ISO_SCORED;
	struct sb_iso_record r;
	json_t *iso, *out;

	all_held(&r, true, SB_ISO_BEFORE_GRADING);
	iso = as_file(&r, SB_ISO_BEFORE_GRADING);
	attack(iso, _i);
	out = run_outcome(passed_result("true"), iso, "restricted", false, NULL, &o);
	ck_assert_msg(o == SB_ISO_UNSCORED, "attack %d scored", _i);
	ck_assert_str_eq(status_of(out), "error");
	ck_assert(json_is_false(json_object_get(out, "scored")));
	ck_assert_msg(strncmp(message_of(out), "Not scored: isolation not established: ", 39) == 0,
	    "attack %d: %s", _i, message_of(out));
	ck_assert(sb_streq(json_string_value(json_object_get(
			      json_object_get(out, "unscored_patch_result"), "status")),
	    "passed"));
	json_decref(out);
}
END_TEST

/* A record of the other egress claim, or none: not scored, and why. */
START_TEST(test_wrong_or_no_record)
{
	enum sb_iso_outcome o = SB_ISO_SCORED;
	struct sb_iso_record r;
	json_t *out;

	all_held(&r, false, SB_ISO_BEFORE_GRADING);
	out = run_outcome(passed_result("true"), as_file(&r, SB_ISO_BEFORE_GRADING), "restricted",
	    false, NULL, &o);
	ck_assert_int_eq(o, SB_ISO_UNSCORED);
	ck_assert_str_eq(message_of(out),
	    "Not scored: isolation not established: the record is inconsistent");
	json_decref(out);
	o = SB_ISO_SCORED;
	out = run_outcome(passed_result("true"), NULL, "open", false, NULL, &o);
	ck_assert_int_eq(o, SB_ISO_UNSCORED);
	ck_assert_str_eq(message_of(out), "Not scored: isolation not established: not_recorded");
	json_decref(out);
}
END_TEST

/* Broken on the agent's watch: a forfeit, whatever the evaluator said. */
START_TEST(test_forfeit)
{
	enum sb_iso_outcome o = SB_ISO_UNSCORED;
	struct sb_iso_record r;
	json_t *out;

	all_held(&r, true, SB_ISO_BEFORE_GRADING);
	r.state[SB_ISO_BEFORE_GRADING][SB_ISO_SECCOMP] = SB_ISO_UNCHECKED;
	sb_iso_note(&r, SB_ISO_BEFORE_GRADING, SB_ISO_SECCOMP, false, "no filter");
	out = run_outcome(passed_result("true"), as_file(&r, SB_ISO_BEFORE_GRADING), "restricted",
	    false, NULL, &o);
	ck_assert_int_eq(o, SB_ISO_FORFEIT);
	ck_assert_str_eq(status_of(out), "forfeit");
	ck_assert_str_eq(message_of(out), "Forfeit: the isolation established before the agent "
					  "did not hold before grading: seccomp");
	ck_assert(json_is_true(json_object_get(out, "scored")));
	json_decref(out);
}
END_TEST

/*
 * A pass whose checks cannot be read as the evaluator writes them (a build_success that is
 * not a boolean): the old reading took anything but false as a check that passed; now the
 * pass is refused, as one its checks do not show.
 */
START_TEST(test_pass_unreadable_checks)
{
	enum sb_iso_outcome o = SB_ISO_UNSCORED;
	struct sb_iso_record r;
	json_t *out;

	all_held(&r, true, SB_ISO_BEFORE_GRADING);
	out = run_outcome(passed_result("\"yes\""), as_file(&r, SB_ISO_BEFORE_GRADING),
	    "restricted", false, NULL, &o);
	ck_assert_str_eq(status_of(out), "error");
	ck_assert_str_eq(message_of(out), "Not scored: the result says passed but its checks do not");
	json_decref(out);
}
END_TEST

static Suite *
outcome_suite(void)
{
	Suite *s = suite_create("outcome");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_scored_pass, 0, 2);
	tcase_add_loop_test(tc, test_attacked_record, 0, ATTACKS);
	tcase_add_test(tc, test_wrong_or_no_record);
	tcase_add_test(tc, test_forfeit);
	tcase_add_test(tc, test_pass_unreadable_checks);
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(outcome_suite)

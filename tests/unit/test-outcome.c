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

/* result.json of a graded run that passed, with build_success and runtime_result as given
 * (JSON text; runtime NULL: an empty object). */
static json_t *
passed_result(const char *build, const char *runtime)
{
	_cleanup_free_ char *text = sb_xasprintf(
	    "{\"patch_result\": {\"status\": \"passed\", \"build_success\": %s, \"pov_passed\": 1,"
	    " \"pov_total\": 1, \"func_test_success\": true, \"intent_test_success\": null,"
	    " \"error_msg\": null, \"error_log\": null}, \"runtime_result\": %s}",
	    build, runtime != NULL ? runtime : "{}");
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

/* Each attack on the record: not scored, an error, what the evaluator said kept aside. */
START_TEST(test_attacked_record)
{
	enum sb_iso_outcome o = SB_ISO_SCORED;
	struct sb_iso_record r;
	json_t *iso, *out;

	all_held(&r, true, SB_ISO_BEFORE_GRADING);
	iso = as_file(&r, SB_ISO_BEFORE_GRADING);
	attack(iso, _i);
	out = run_outcome(passed_result("true", NULL), iso, "restricted", false, NULL, &o);
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

/* The record a case's container wrote. */
enum record { HELD_RESTRICTED, HELD_OPEN, NO_RECORD, SECCOMP_BROKEN_LATE };

/*
 * A pass over each kind of record: it stands over one that holds for the egress claimed; a
 * record of the other claim, or none, is not scored, saying why; broken on the agent's
 * watch, a forfeit whatever the evaluator said. A pass whose checks cannot be read as the
 * evaluator writes them (build_success not a boolean) is refused: the old reading took
 * anything but false for a check that passed; so is a pass of a grade that ran out of time
 * (the evaluator's verdict is failed), which the old reading did not look at.
 */
static const struct {
	enum record record;
	const char *egress, *build, *runtime;
	enum sb_iso_outcome outcome;
	const char *status, *message;
} cases[] = {
	{ HELD_RESTRICTED, "restricted", "true", NULL, SB_ISO_SCORED, "passed", NULL },
	{ HELD_OPEN, "open", "true", NULL, SB_ISO_SCORED, "passed", NULL },
	{ HELD_OPEN, "restricted", "true", NULL, SB_ISO_UNSCORED, "error",
	    "Not scored: isolation not established: the record is inconsistent" },
	{ NO_RECORD, "open", "true", NULL, SB_ISO_UNSCORED, "error",
	    "Not scored: isolation not established: not_recorded" },
	{ SECCOMP_BROKEN_LATE, "restricted", "true", NULL, SB_ISO_FORFEIT, "forfeit",
	    "Forfeit: the isolation established before the agent did not hold before grading: "
	    "seccomp" },
	{ HELD_RESTRICTED, "restricted", "\"yes\"", NULL, SB_ISO_SCORED, "error",
	    "Not scored: the result says passed but its checks do not" },
	{ HELD_RESTRICTED, "restricted", "true", "{\"evaluator_timeout\": true}", SB_ISO_SCORED,
	    "error", "Not scored: the result says passed but its checks do not" },
};

START_TEST(test_pass_over_record)
{
	enum sb_iso_outcome o = (enum sb_iso_outcome)-1;
	struct sb_iso_record r;
	json_t *iso = NULL, *out;

	all_held(&r, cases[_i].record != HELD_OPEN, SB_ISO_BEFORE_GRADING);
	if (cases[_i].record == SECCOMP_BROKEN_LATE) {
		r.state[SB_ISO_BEFORE_GRADING][SB_ISO_SECCOMP] = SB_ISO_UNCHECKED;
		sb_iso_note(&r, SB_ISO_BEFORE_GRADING, SB_ISO_SECCOMP, false, "no filter");
	}
	if (cases[_i].record != NO_RECORD)
		iso = as_file(&r, SB_ISO_BEFORE_GRADING);
	out = run_outcome(passed_result(cases[_i].build, cases[_i].runtime), iso, cases[_i].egress, false, NULL, &o);
	ck_assert_msg(o == cases[_i].outcome, "case %d: outcome %d", _i, o);
	ck_assert_str_eq(status_of(out), cases[_i].status);
	ck_assert(sb_streq(message_of(out), cases[_i].message) || cases[_i].message == NULL);
	ck_assert(json_is_boolean(json_object_get(out, "scored")) &&
		  json_is_true(json_object_get(out, "scored")) == (o != SB_ISO_UNSCORED));
	/* What the evaluator said is kept aside when it is replaced, and only then. */
	ck_assert((json_object_get(out, "unscored_patch_result") != NULL) ==
		  (cases[_i].message != NULL));
	json_decref(out);
}
END_TEST


/*
 * The record as the entrypoint really writes it (entrypoint/isolation.c:write_record): the
 * members of sb_iso_to_json and also "enforced" and, with a proxy key,
 * "proxy_key_before_grading". A failed grade over a record that holds is a scored failure,
 * a forfeit a forfeit: never an unscored error (review of issue 19).
 */
START_TEST(test_entrypoint_record)
{
	enum sb_iso_outcome o = (enum sb_iso_outcome)-1;
	struct sb_iso_record r;
	json_t *iso, *res = NULL, *out;
	const char *failed_text = "{\"patch_result\": {\"status\": \"failed\", "
	    "\"build_success\": false, \"pov_passed\": null, \"pov_total\": null, "
	    "\"func_test_success\": null, \"intent_test_success\": null, \"error_msg\": null, "
	    "\"error_log\": null}, \"runtime_result\": {}}";

	all_held(&r, true, SB_ISO_BEFORE_GRADING);
	if (_i == 1) {
		r.state[SB_ISO_BEFORE_GRADING][SB_ISO_SECCOMP] = SB_ISO_UNCHECKED;
		sb_iso_note(&r, SB_ISO_BEFORE_GRADING, SB_ISO_SECCOMP, false, "no filter");
	}
	iso = as_file(&r, SB_ISO_BEFORE_GRADING);
	json_object_set_new(iso, "enforced", _i == 3 ? json_string("yes") : json_true());
	if (_i == 2)
		json_object_set_new(iso, "proxy_key_before_grading", json_string("revoked"));
	ck_assert_int_eq(sb_json_load(failed_text, strlen(failed_text), SIZE_MAX, &res, NULL), 0);
	if (_i == 1)
		json_object_set_new(json_object_get(res, "patch_result"), "status",
		    json_string("forfeit"));
	out = run_outcome(res, iso, "restricted", false, NULL, &o);
	if (_i == 3) {
		/* Beside the record, only those two members, each of its type. */
		ck_assert_int_eq(o, SB_ISO_UNSCORED);
		ck_assert_str_eq(status_of(out), "error");
		json_decref(out);
		return;
	}
	ck_assert_msg(o == (_i == 1 ? SB_ISO_FORFEIT : SB_ISO_SCORED), "case %d: outcome %d", _i,
	    o);
	ck_assert_str_eq(status_of(out), _i == 1 ? "forfeit" : "failed");
	ck_assert(json_is_true(json_object_get(out, "scored")));
	json_decref(out);
}
END_TEST

/*
 * Records the entrypoint could write, with details of any bytes (a file name the agent
 * chose, cut at SB_ISO_DETAIL_MAX inside a character), written as write_record writes them
 * (with its own members, indented) and read back as the CLI reads them: the host's outcome
 * is always the record's own, never "unscored" for a record that is scored or a forfeit.
 */
START_TEST(test_genuine_records)
{
	unsigned long long x = 0x9e3779b97f4a7c15ULL;

	for (int it = 0; it < 3000; it++) {
		struct sb_iso_record r;
		enum sb_iso_outcome want, got = (enum sb_iso_outcome)-1;
		json_t *doc, *back = NULL, *res, *out;
		bool restricted;
		char *text;

#define NEXT() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, (unsigned)x)
		restricted = NEXT() & 1;
		sb_iso_record_init(&r, restricted);
		for (int ph = 0; ph < SB_ISO_PHASE_COUNT; ph++)
			for (int p = 0; p < SB_ISO_PROP_COUNT; p++) {
				char d[400];
				size_t len = NEXT() % (sizeof(d) - 1);
				unsigned k = NEXT() % 8;

				for (size_t i = 0; i < len; i++)
					d[i] = (char)(NEXT() % 255 + 1);
				d[len] = '\0';
				if (k != 0)
					sb_iso_note(&r, (enum sb_iso_phase)ph, (enum sb_iso_prop)p, k < 7,
					    "%s", d);
			}
#undef NEXT
		want = sb_iso_outcome(&r, SB_ISO_BEFORE_GRADING, NULL);
		doc = sb_iso_to_json(&r, SB_ISO_BEFORE_GRADING);
		json_object_set_new(doc, "enforced", json_true());
		json_object_set_new(doc, "proxy_key_before_grading", json_string("revoked"));
		text = json_dumps(doc, JSON_INDENT(2));
		ck_assert_ptr_nonnull(text);
		ck_assert_int_eq(sb_json_load(text, strlen(text), SIZE_MAX, &back, NULL), 0);
		res = json_pack("{s:{s:s, s:b}}", "patch_result", "status",
		    want == SB_ISO_FORFEIT ? "forfeit" : want == SB_ISO_SCORED ? "failed" : "error",
		    "build_success", 0);
		out = run_outcome(res, back, restricted ? "restricted" : "open", false, NULL, &got);
		ck_assert_msg(got == want, "record %d: outcome %d, not %d", it, got, want);
		free(text);
		json_decref(doc);
		json_decref(out);
	}
}
END_TEST

static Suite *
outcome_suite(void)
{
	Suite *s = suite_create("outcome");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_attacked_record, 0, ATTACKS);
	tcase_add_loop_test(tc, test_pass_over_record, 0, (int)SB_ARRAY_SIZE(cases));
	tcase_add_loop_test(tc, test_entrypoint_record, 0, 4);
	tcase_add_test(tc, test_genuine_records);
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(outcome_suite)

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-verdict.c: the fail-closed run verdict. Broken one property at a time, a run is not
 * scored and exactly that property is named; broken all at once, every one is named; a
 * claimed property nobody checked counts as broken; the tier comes from what was
 * established, never from what was configured.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sb/verdict.h"

#include "unit.h"

/* Every claimed property held in every phase up to upto. */
static void
all_held(struct sb_iso_record *r, bool restricted, enum sb_iso_phase upto)
{
	sb_iso_record_init(r, restricted);
	for (int ph = 0; ph <= (int)upto; ph++)
		for (int p = 0; p < SB_ISO_PROP_COUNT; p++)
			if (sb_iso_claimed((enum sb_iso_prop)p, (enum sb_iso_phase)ph, restricted))
				sb_iso_note(r, (enum sb_iso_phase)ph, (enum sb_iso_prop)p, true, "ok");
}

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
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(verdict_suite)

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * verdict-fixtures.h: isolation records for the tests of their verdict (test-verdict.c) and
 * of the CLI's reading of them (test-outcome.c): one that holds, as the file the entrypoint
 * writes, and the attacks on that file each of them must refuse.
 */
#ifndef SB_TESTS_VERDICT_FIXTURES_H
#define SB_TESTS_VERDICT_FIXTURES_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sb/json.h"
#include "sb/verdict.h"

#include "unit.h"

/* Every claimed property held in every phase up to upto. */
static inline void
all_held(struct sb_iso_record *r, bool restricted, enum sb_iso_phase upto)
{
	sb_iso_record_init(r, restricted);
	for (int ph = 0; ph <= (int)upto; ph++)
		for (int p = 0; p < SB_ISO_PROP_COUNT; p++)
			if (sb_iso_claimed((enum sb_iso_prop)p, (enum sb_iso_phase)ph, restricted))
				sb_iso_note(r, (enum sb_iso_phase)ph, (enum sb_iso_prop)p, true, "ok");
}

/* A record as isolation.json holds it: written, dumped, and loaded as the CLI loads it. */
static inline json_t *
as_file(const struct sb_iso_record *r, enum sb_iso_phase upto)
{
	json_t *doc = sb_iso_to_json(r, upto), *back = NULL;
	char *text = json_dumps(doc, JSON_COMPACT);

	ck_assert_int_eq(sb_json_load(text, strlen(text), SIZE_MAX, &back, NULL), 0);
	free(text);
	json_decref(doc);
	return back;
}

/*
 * Attack i (0 .. ATTACKS - 1) on doc, a record that holds (restricted egress): each leaves
 * a record that still claims to be scored but is not what the entrypoint writes for the
 * states it holds, so it must be refused (sb_iso_from_json) and the run not scored
 * (src/ssebench/outcome.c:iso_outcome_of).
 */
static inline void
attack(json_t *doc, int i)
{
	json_t *phases = json_object_get(doc, "phases");
	json_t *grading = json_object_get(phases, "before_grading");
	json_t *seccomp = json_object_get(grading, "seccomp");

	switch (i) {
	case 0: /* a phase missing */
		json_object_del(phases, "before_grading");
		break;
	case 1: /* a property misspelt */
		json_object_set(grading, "seccomp_", seccomp);
		json_object_del(grading, "seccomp");
		break;
	case 2: /* a state of the wrong type */
		json_object_set_new(seccomp, "status", json_true());
		break;
	case 3: /* an extra unknown property */
		json_object_set_new(grading, "extra", json_pack("{s:s, s:s}", "status", "held",
		    "detail", "ok"));
		break;
	case 4: /* a failed list that disagrees with the states (all held) */
		json_array_append_new(json_object_get(doc, "failed"), json_string("seccomp"));
		break;
	case 5: /* a state that failed under a record that says scored, failed [] */
		json_object_set_new(seccomp, "status", json_string("failed"));
		break;
	case 6: /* an unknown member of the record */
		json_object_set_new(doc, "scored_anyway", json_true());
		break;
	case 7: /* a claimed property said not to be claimed */
		json_object_set_new(seccomp, "status", json_string("not_claimed"));
		break;
	case 8: /* a status no record has */
		json_object_set_new(seccomp, "status", json_string("established"));
		break;
	case 9: /* a member of an entry beyond status and detail */
		json_object_set_new(seccomp, "held", json_true());
		break;
	case 10: /* a detail longer than a record keeps */
		json_object_set_new(seccomp, "detail", json_string(
		    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"));
		break;
	case 11: /* a third phase */
		json_object_set(phases, "after_grading", grading);
		break;
	case 12: /* the tier of the other egress */
		json_object_set_new(doc, "tier", json_string("open"));
		break;
	case 13: /* an egress of neither kind */
		json_object_set_new(doc, "egress", json_string("none"));
		break;
	case 14: /* a member of the wrong type (scored as a string) */
		json_object_set_new(doc, "scored", json_string("true"));
		break;
	case 15: /* a property's entry missing */
		json_object_del(grading, "seccomp");
		break;
	default:
		ck_abort_msg("no attack %d", i);
	}
}
#define ATTACKS 16

#endif

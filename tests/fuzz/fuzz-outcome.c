/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-outcome.c: the CLI's reading of what a run's container wrote, result.json and
 * isolation.json, into the result the host keeps (src/ssebench/outcome.c:run_outcome).
 *
 * Layout of an input: byte 0: the egress claimed (bit 0: restricted or open), whether the
 * user interrupted the run (bit 1) and whether a foreign container was on its network
 * (bit 2); then the two files, separated by a NUL byte (either may be absent or not JSON).
 *
 * The first file is also read as a summary.json is by `runs results` (run_summary_row).
 *
 * Checked beyond memory safety: the status is one a run has; "scored" is what the outcome
 * says; a pass only comes with a scored outcome, a record that is what the entrypoint writes
 * and holds every claimed property for the egress claimed, checks that show it, and no
 * interrupt or foreign container; an unscored run is an error. A row has a tier only if it
 * is scored, and then one of the two.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sb/json.h"
#include "sb/mem.h"
#include "sb/verdict.h"

#include "../../src/ssebench/run.h"
#include "fuzz.h"

static json_t *
parse(const char *s, size_t n)
{
	json_t *j = NULL;

	return n > 0 && sb_json_load(s, n, SIZE_MAX, &j, NULL) == 0 ? j : NULL;
}

/*
 * What a record must be for a pass, worked out again here: the file the entrypoint writes
 * for its states (sb_iso_from_json), both phases, for the egress claimed, and every claimed
 * property held in each (counted here, not by sb_iso_outcome).
 */
static bool
record_scored(const json_t *iso, const char *egress)
{
	struct sb_iso_record r;

	if (sb_iso_from_json(iso, SB_ISO_BEFORE_GRADING, &r, NULL) < 0 ||
	    strcmp(egress, r.egress_restricted ? "restricted" : "open") != 0)
		return false;
	for (int ph = 0; ph < SB_ISO_PHASE_COUNT; ph++)
		for (int p = 0; p < SB_ISO_PROP_COUNT; p++)
			if (sb_iso_claimed((enum sb_iso_prop)p, (enum sb_iso_phase)ph,
				r.egress_restricted) &&
			    r.state[ph][p] != SB_ISO_HELD)
				return false;
	return json_is_true(json_object_get(iso, "scored")) &&
	       json_array_size(json_object_get(iso, "failed")) == 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *egress, *status, *split;
	bool interrupted, foreign;
	json_t *result, *iso, *isocopy, *out, *pr;
	enum sb_iso_outcome outcome;
	size_t n;

	if (size < 1)
		return 0;
	egress = (data[0] & 1) ? "restricted" : "open";
	interrupted = data[0] & 2;
	foreign = data[0] & 4;
	split = memchr(data + 1, '\0', size - 1);
	n = split != NULL ? (size_t)(split - (const char *)data - 1) : size - 1;
	result = parse((const char *)data + 1, n);
	iso = split != NULL ? parse(split + 1, size - 1 - n - 1) : NULL;
	isocopy = json_deep_copy(iso);
	{
		json_t *row = run_summary_row(result, "/dir");
		const char *tier = json_string_value(json_object_get(row, "tier"));

		if (row == NULL || json_is_true(json_object_get(row, "scored")) != (tier != NULL) ||
		    (tier != NULL && strcmp(tier, "restricted") != 0 && strcmp(tier, "open") != 0))
			abort();
		json_decref(row);
	}
	out = run_outcome(result, iso, egress, interrupted, foreign ? "a container" : NULL, &outcome);
	pr = json_object_get(out, "patch_result");
	status = json_string_value(json_object_get(pr, "status"));
	if (status == NULL || (strcmp(status, "passed") != 0 && strcmp(status, "failed") != 0 &&
				  strcmp(status, "error") != 0 && strcmp(status, "forfeit") != 0))
		abort();
	if (json_is_true(json_object_get(out, "scored")) != (outcome != SB_ISO_UNSCORED))
		abort();
	if (outcome == SB_ISO_UNSCORED && strcmp(status, "error") != 0)
		abort();
	if (strcmp(status, "passed") == 0 &&
	    (outcome != SB_ISO_SCORED || interrupted || foreign || !record_scored(isocopy, egress) ||
		strcmp(run_status_of(out), "passed") != 0))
		abort();
	json_decref(isocopy);
	json_decref(out);
	return 0;
}

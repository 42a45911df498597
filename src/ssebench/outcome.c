/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outcome.c: the result a run leaves on the host (run.h:run_outcome), decided from what its
 * container wrote and what the CLI saw, in one place, so that what can make a run count is
 * read once and fails closed (tests/fuzz/fuzz-outcome.c drives it with any files at all).
 */
#include "config.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <stdio.h>
#include <string.h>

#include "sb/buf.h"
#include "sb/json.h"
#include "sb/mem.h"
#include "sb/verdict.h"

#include "run.h"

const char *
run_status_of(const json_t *result)
{
	struct sb_grade_checks c;
	struct sb_error *err = NULL;

	/* Checks that cannot be read as the evaluator writes them are no grade (fail closed). */
	if (sb_grade_checks_from_json(result, &c, &err) < 0) {
		sb_error_release(&err);
		return "error";
	}
	return sb_grade_status_name(sb_grade_rule_status(sb_grade_decide(&c)));
}

/*
 * patch_result becomes an error (or a forfeit) saying why; the one it replaces is kept
 * under key. The same shape the entrypoint writes for a run it did not grade.
 */
static void
replace_with(json_t *result, const char *key, bool forfeit, const char *why)
{
	json_t *e = sb_ungraded_result(forfeit, why, NULL, NULL);

	json_object_set(result, key, json_object_get(result, "patch_result"));
	json_object_set(result, "patch_result", json_object_get(e, "patch_result"));
	json_decref(e);
}

static void
replace_with_error(json_t *result, const char *key, const char *why)
{
	replace_with(result, key, false, why);
}

/*
 * What isolation.json makes of this run, read back into the record the entrypoint kept
 * (sb_iso_from_json: strict, and it must say of itself what its states make of it, tier
 * included) and decided by the same sb_iso_outcome. Besides: both phases must be there,
 * and its egress must be the one this run claimed (a record for another run's claim is not
 * this run's, whatever it says). Anything else is not scored.
 */
static enum sb_iso_outcome
iso_outcome_of(const json_t *iso, const char *egress)
{
	struct sb_iso_record r;
	struct sb_error *err = NULL;

	if (sb_iso_from_json(iso, SB_ISO_BEFORE_GRADING, &r, &err) < 0) {
		sb_error_release(&err);
		return SB_ISO_UNSCORED;
	}
	if (strcmp(egress, r.egress_restricted ? "restricted" : "open") != 0)
		return SB_ISO_UNSCORED;
	return sb_iso_outcome(&r, SB_ISO_BEFORE_GRADING, NULL);
}

/*
 * The isolation the entrypoint established (isolation.json), into result.json: a run is
 * scored only if it says so for every phase and for the egress this run claimed. A missing
 * or unreadable record is a failure like any other (docs/integrity.md, the verdict's rows).
 * An unscored result keeps what the evaluator said under "unscored_patch_result", for
 * diagnosis, and its patch_result becomes an error naming every property that failed. A
 * forfeit (the isolation held before the agent and broke during its phase) is a result that
 * counts as not passed: its patch_result says "forfeit" whatever else is in the file.
 * Takes iso (may be NULL). Returns the outcome (sb/verdict.h).
 */
static enum sb_iso_outcome
merge_isolation(json_t *result, json_t *iso, const char *egress)
{
	const char *status = json_string_value(
	    json_object_get(json_object_get(result, "patch_result"), "status"));
	enum sb_iso_outcome outcome;

	if (!json_is_object(iso)) {
		json_decref(iso);
		iso = json_pack("{s:s, s:b, s:n, s:s, s:[s], s:{}}", "outcome", "unscored",
		    "scored", 0, "tier", "egress", egress, "failed", "not_recorded", "phases");
	}
	outcome = iso_outcome_of(iso, egress);
	/* The patch_result must say what the record says: an unscored run is an error, a
	 * forfeit a forfeit, whoever wrote the file. */
	if ((outcome == SB_ISO_UNSCORED && !sb_streq(status, "error")) ||
	    (outcome == SB_ISO_FORFEIT && !sb_streq(status, "forfeit"))) {
		_cleanup_buf_ struct sb_buf names = SB_BUF_INIT(4096);
		_cleanup_free_ char *msg = NULL;
		json_t *f;
		size_t i;

		/* The record's own list: what a record we could not read claims failed. */
		json_array_foreach (json_object_get(iso, "failed"), i, f)
			(void)sb_buf_appendf(&names, NULL, "%s%s", i ? ", " : "",
			    json_string_value(f) ?: "?");
		if (names.len == 0)
			(void)sb_buf_appends(&names, "the record is inconsistent", NULL);
		msg = sb_iso_outcome_message(outcome, names.s);
		replace_with(result, "unscored_patch_result", outcome == SB_ISO_FORFEIT, msg);
	}
	json_object_set_new(result, "isolation", iso);
	json_object_set_new(result, "scored", json_boolean(outcome != SB_ISO_UNSCORED));
	return outcome;
}

json_t *
run_outcome(json_t *result, json_t *iso, const char *egress, bool interrupted,
    const char *foreign, enum sb_iso_outcome *ret)
{
	json_t *pr;
	const char *status;
	enum sb_iso_outcome outcome;

	if (!json_is_object(result) || !json_is_object(json_object_get(result, "patch_result"))) {
		json_decref(result);
		result = sb_ungraded_result(false,
		    interrupted ? "No result: the run was interrupted"
				: "No result: evaluator did not produce output",
		    NULL, NULL);
	} else if (interrupted) {
		/*
		 * The user stopped the run: whatever grading had written by then is kept for
		 * diagnosis, but the run does not count (the user's choice, not the agent's, and
		 * grading may have been cut at any point).
		 */
		replace_with_error(result, "interrupted_patch_result",
		    "No result: the run was interrupted");
	}
	pr = json_object_get(result, "patch_result");
	status = json_string_value(json_object_get(pr, "status"));
	if (json_object_get(pr, "status") == NULL) {
		json_object_set_new(pr, "status", json_string(run_status_of(result)));
	} else if (status == NULL ||
	    (strcmp(status, "passed") != 0 && strcmp(status, "failed") != 0 &&
		strcmp(status, "error") != 0 && strcmp(status, "forfeit") != 0)) {
		replace_with_error(result, "unscored_patch_result",
		    "Not scored: the result's status is not one a run has");
	} else if (strcmp(status, "passed") == 0 && strcmp(run_status_of(result), "passed") != 0) {
		/* A pass the checks it records do not show is no pass (fail closed). */
		replace_with_error(result, "unscored_patch_result",
		    "Not scored: the result says passed but its checks do not");
	}
	outcome = merge_isolation(result, iso, egress);
	/*
	 * A container that is not the run's on the run's network: not the agent's doing (it
	 * cannot start containers), and a way to it: the run does not count.
	 */
	if (foreign != NULL && outcome != SB_ISO_UNSCORED) {
		_cleanup_free_ char *msg = sb_xasprintf("Not scored: %s", foreign);

		replace_with_error(result, "unscored_patch_result", msg);
		outcome = SB_ISO_UNSCORED;
	}
	if (interrupted) {
		/* An interrupted run never counts, whatever its record says (a forfeit too). */
		if (strcmp(json_string_value(json_object_get(json_object_get(result, "patch_result"),
				   "status")) ?: "", "error") != 0)
			replace_with_error(result, "interrupted_patch_result",
			    "No result: the run was interrupted");
		outcome = SB_ISO_UNSCORED;
	}
	json_object_set_new(result, "scored", json_boolean(outcome != SB_ISO_UNSCORED));
	*ret = outcome;
	return result;
}

/* A member that must be a string (else null), for the rows of `runs results`. */
static json_t *
string_of(const json_t *v)
{
	return json_is_string(v) ? json_copy((json_t *)v) : json_null();
}

json_t *
run_summary_row(const json_t *s, const char *dir)
{
	const json_t *cfg = json_object_get(s, "config");
	/* A summary without the record (older, or cut short) is not scored; a tier that is
	 * not one of the two is no tier. */
	bool scored = json_is_true(json_object_get(s, "scored"));
	const char *tier = json_string_value(json_object_get(json_object_get(s, "isolation"), "tier"));

	if (!scored || tier == NULL || (strcmp(tier, "restricted") != 0 && strcmp(tier, "open") != 0))
		tier = NULL;
	/* The directory as an escaped string when it is not UTF-8: a row is never dropped. */
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:o, s:o, s:o, s:b, s:o}", "run_id",
	    string_of(json_object_get(s, "run_id")), "task",
	    string_of(json_object_get(json_object_get(s, "task"), "id")), "model",
	    string_of(json_object_get(cfg, "model")), "agent", string_of(json_object_get(cfg, "agent")),
	    "mode", string_of(json_object_get(cfg, "mode")), "egress",
	    string_of(json_object_get(cfg, "egress")), "reference_run",
	    json_is_true(json_object_get(cfg, "reference_run")), "status",
	    string_of(json_object_get(json_object_get(s, "patch_result"), "status")), "started_at",
	    string_of(json_object_get(s, "started_at")), "dir", sb_json_string_or_null(dir), "scored",
	    scored && tier != NULL,
	    "tier", sb_json_string_or_null(tier));
}

/* Whether name below dirfd exists (without following a final symbolic link). */
static bool
has_entry(int dirfd, const char *name)
{
	struct stat st;

	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

bool
run_dir_is(int dfd)
{
	return has_entry(dfd, "summary.json") || has_entry(dfd, "build.log") ||
	       has_entry(dfd, "archive");
}

/*
 * The scan's flags (sb/scan.h): a line with the count and kinds, then the first few with
 * their evidence, escaped (the evidence is the agent's text).
 */
void
run_print_flags(FILE *out, const json_t *flags, json_int_t total)
{
	const json_t *f;
	size_t i;

	if (total <= 0)
		return;
	fprintf(out, "FLAGGED: %lld attempt%s on the answer? (not graded; summary.json \"flags\")\n",
	    (long long)total, total == 1 ? "" : "s");
	json_array_foreach (flags, i, f) {
		/* Every string escaped: the excerpt is the agent's text, and a summary.json read
		 * back (runs inspect) is a file on disk. */
		_cleanup_free_ char *ex = sb_escape(json_string_value(json_object_get(f, "excerpt")) ?: "");
		_cleanup_free_ char *match = sb_escape(json_string_value(json_object_get(f, "match")) ?: "");
		_cleanup_free_ char *kind = sb_escape(json_string_value(json_object_get(f, "kind")) ?: "?");
		_cleanup_free_ char *source = sb_escape(json_string_value(json_object_get(f, "source")) ?: "?");
		const json_t *seq = json_object_get(f, "seq");

		if (i == 5) {
			fprintf(out, "  ...\n");
			break;
		}
		fprintf(out, "  %s (%s", kind, source);
		if (json_is_integer(seq))
			fprintf(out, " entry %lld", (long long)json_integer_value(seq));
		fprintf(out, ", %s): %s\n", match, ex);
	}
}

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
run_status_of(const json_t *pr)
{
	const json_t *build = json_object_get(pr, "build_success");
	const json_t *passed = json_object_get(pr, "pov_passed");
	const json_t *total = json_object_get(pr, "pov_total");
	const json_t *func = json_object_get(pr, "func_test_success");
	const json_t *intent = json_object_get(pr, "intent_test_success");

	if ((build == NULL || json_is_null(build)) && (total == NULL || json_is_null(total)) &&
	    (func == NULL || json_is_null(func)) && (intent == NULL || json_is_null(intent)))
		return "error";
	if (json_is_false(build) || json_is_false(func) || json_is_false(intent))
		return "failed";
	if (json_is_integer(total) &&
	    (!json_is_integer(passed) || json_integer_value(passed) != json_integer_value(total)))
		return "failed";
	return "passed";
}

json_t *
run_error_result(const char *why)
{
	return json_pack("{s:{s:s, s:n, s:n, s:n, s:n, s:n, s:s, s:n}, s:{s:i, s:b, s:b, s:n}}",
	    "patch_result", "status", "error", "build_success", "pov_passed", "pov_total",
	    "func_test_success", "intent_test_success", "error_msg", why, "error_log",
	    "runtime_result", "agent_duration", 0, "agent_timeout", 0, "evaluator_timeout", 0,
	    "agent_exit_code");
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
	json_t *pr = json_object_get(result, "patch_result");
	const char *tier, *claimed, *outcome_name, *status;
	enum sb_iso_outcome outcome = SB_ISO_UNSCORED;
	bool consistent;

	if (!json_is_object(iso)) {
		json_decref(iso);
		iso = json_pack("{s:s, s:b, s:n, s:s, s:[s], s:{}}", "outcome", "unscored",
		    "scored", 0, "tier", "egress", egress, "failed", "not_recorded", "phases");
	}
	tier = json_string_value(json_object_get(iso, "tier"));
	claimed = json_string_value(json_object_get(iso, "egress"));
	outcome_name = json_string_value(json_object_get(iso, "outcome"));
	/* What the record must say of itself whatever the outcome: this run's claim, its tier,
	 * and both phases looked at. */
	consistent = tier != NULL && claimed != NULL && strcmp(claimed, egress) == 0 &&
	    strcmp(tier, egress) == 0 &&
	    json_object_get(json_object_get(iso, "phases"), "before_grading") != NULL;
	if (consistent && outcome_name != NULL && strcmp(outcome_name, "scored") == 0 &&
	    json_is_true(json_object_get(iso, "scored")) &&
	    json_array_size(json_object_get(iso, "failed")) == 0)
		outcome = SB_ISO_SCORED;
	else if (consistent && outcome_name != NULL && strcmp(outcome_name, "forfeit") == 0 &&
	    json_array_size(json_object_get(iso, "failed")) > 0)
		outcome = SB_ISO_FORFEIT;
	status = json_string_value(json_object_get(pr, "status"));
	if (status == NULL)
		status = "";
	/* The patch_result must say what the record says: an unscored run is an error, a
	 * forfeit a forfeit, whoever wrote the file. */
	if ((outcome == SB_ISO_UNSCORED && strcmp(status, "error") != 0) ||
	    (outcome == SB_ISO_FORFEIT && strcmp(status, "forfeit") != 0)) {
		_cleanup_buf_ struct sb_buf names = SB_BUF_INIT(4096);
		json_t *failed = json_object_get(iso, "failed"), *f, *err;
		size_t i;

		json_array_foreach (failed, i, f)
			(void)sb_buf_appendf(&names, NULL, "%s%s", i ? ", " : "",
			    json_string_value(f) ?: "?");
		if (names.len == 0)
			(void)sb_buf_appends(&names, "the record is inconsistent", NULL);
		{
			_cleanup_free_ char *msg = outcome == SB_ISO_FORFEIT
			    ? sb_xasprintf("Forfeit: the isolation established before the agent "
					   "did not hold before grading: %s", names.s)
			    : sb_xasprintf("Not scored: isolation not established: %s", names.s);

			err = run_error_result(msg);
		}
		if (outcome == SB_ISO_FORFEIT)
			json_object_set_new(json_object_get(err, "patch_result"), "status",
			    json_string("forfeit"));
		json_object_set(result, "unscored_patch_result", pr);
		json_object_set(result, "patch_result", json_object_get(err, "patch_result"));
		json_decref(err);
	}
	json_object_set_new(result, "isolation", iso);
	json_object_set_new(result, "scored", json_boolean(outcome != SB_ISO_UNSCORED));
	return outcome;
}


/* patch_result becomes an error saying why (the one it replaces is kept under key). */
static void
replace_with_error(json_t *result, const char *key, const char *why)
{
	json_t *e = run_error_result(why);

	json_object_set(result, key, json_object_get(result, "patch_result"));
	json_object_set(result, "patch_result", json_object_get(e, "patch_result"));
	json_decref(e);
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
		result = run_error_result(interrupted ? "No result: the run was interrupted"
						      : "No result: evaluator did not produce output");
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
		json_object_set_new(pr, "status", json_string(run_status_of(pr)));
	} else if (status == NULL ||
	    (strcmp(status, "passed") != 0 && strcmp(status, "failed") != 0 &&
		strcmp(status, "error") != 0 && strcmp(status, "forfeit") != 0)) {
		replace_with_error(result, "unscored_patch_result",
		    "Not scored: the result's status is not one a run has");
	} else if (strcmp(status, "passed") == 0 && strcmp(run_status_of(pr), "passed") != 0) {
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

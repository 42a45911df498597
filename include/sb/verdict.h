/* SPDX-License-Identifier: Apache-2.0 */
/*
 * verdict.h: the fail-closed run verdict (docs/design.md, "Fail closed"; docs/integrity.md,
 * "The fail-closed verdict").
 *
 * Before the agent starts and again before grading, the entrypoint establishes each
 * isolation property the run claims and records what it saw here. A run is scored only if
 * every claimed property was established in every phase; a claimed property nobody checked
 * counts as failed. The tier comes from what was established, never from configuration:
 * "restricted" needs the network properties held, "open" is what an --egress open run
 * can reach at best, and a run that is not scored has no tier at all.
 *
 * This module is pure (no I/O): the entrypoint fills a record, the CLI and the tests read
 * the verdict.
 */
#ifndef SB_VERDICT_H
#define SB_VERDICT_H

#include <stdbool.h>

#include <jansson.h>

#include "sb/common.h"
#include "sb/error.h"

enum sb_iso_prop {
	SB_ISO_AGENT_IDENTITY,	     /* agent: non-root uid, its own gid, no supplementary groups */
	SB_ISO_RUNNER_IDENTITY,	     /* runner: non-root, not the agent's uid, no groups */
	SB_ISO_NO_CAPABILITIES,	     /* CapEff, CapPrm, CapAmb all 0 (agent and runner) */
	SB_ISO_NO_NEW_PRIVS,	     /* NoNewPrivs 1 (agent and runner) */
	SB_ISO_SECCOMP,		     /* a seccomp filter is on (agent and runner) */
	SB_ISO_TASK_FILES_HIDDEN,    /* /ssebench unreadable (agent and runner) */
	SB_ISO_REPO_HIDDEN,	     /* /ssebench-repo unreadable (agent and runner) */
	SB_ISO_RESULTS_HIDDEN,	     /* results, secrets, daemon state unreadable; admin socket shut */
	SB_ISO_SINGLE_COMMIT,	     /* the agent's tree holds exactly one commit (before the agent) */
	SB_ISO_DIFFICULTY_GATE,	     /* the daemon enforces the run's level on the agent socket */
	SB_ISO_REFERENCE_MOUNT,	     /* /reference/patch.diff present iff the reference agent runs */
	SB_ISO_NETWORK_INTERNAL,     /* no route out (restricted egress) */
	SB_ISO_HOST_UNREACHABLE,     /* the host's bridge address does not answer (restricted) */
	SB_ISO_RUNNER_SANDBOX,	     /* task scripts: loopback only, private tmp, agent places hidden */
	SB_ISO_PROP_COUNT
};

enum sb_iso_phase { SB_ISO_BEFORE_AGENT, SB_ISO_BEFORE_GRADING, SB_ISO_PHASE_COUNT };

enum sb_iso_state { SB_ISO_UNCHECKED, SB_ISO_HELD, SB_ISO_FAILED };

#define SB_ISO_DETAIL_MAX 240

struct sb_iso_record {
	bool egress_restricted; /* what the run claims (the CLI's --egress) */
	enum sb_iso_state state[SB_ISO_PHASE_COUNT][SB_ISO_PROP_COUNT];
	char detail[SB_ISO_PHASE_COUNT][SB_ISO_PROP_COUNT][SB_ISO_DETAIL_MAX];
};

/* "agent_identity", ... (the names result.json uses); NULL out of range. */
const char *sb_iso_prop_name(enum sb_iso_prop p);
/* One line saying what the property means, for docs and messages. */
const char *sb_iso_prop_what(enum sb_iso_prop p);
const char *sb_iso_phase_name(enum sb_iso_phase ph);

/* Does a run with this egress claim p in phase ph? */
bool sb_iso_claimed(enum sb_iso_prop p, enum sb_iso_phase ph, bool egress_restricted);

void sb_iso_record_init(struct sb_iso_record *r, bool egress_restricted);

/*
 * Record one observation. A property checked several times in a phase (as the agent, then
 * as the runner) is held only if every observation held: a failure is never overwritten,
 * and its detail is kept.
 */
void sb_iso_note(struct sb_iso_record *r, enum sb_iso_phase ph, enum sb_iso_prop p, bool held,
    const char *fmt, ...) _printf_(5, 6);

/*
 * The verdict over phases 0..upto (later phases are ignored). Returns true when the run
 * may be scored; *ret_failed (may be NULL) gets the failed properties' names, each once,
 * comma-separated ("" when none; free it). A claimed property not checked has failed.
 */
bool sb_iso_verdict(const struct sb_iso_record *r, enum sb_iso_phase upto, char **ret_failed);

/* "restricted", "open", or NULL when the run may not be scored. */
const char *sb_iso_tier(const struct sb_iso_record *r, enum sb_iso_phase upto);

/*
 * What a run's record makes of it, over phases 0..upto:
 *   scored    every claimed property held in every phase;
 *   forfeit   everything held before the agent started, and something failed after: the
 *             agent ran with the isolation in place, so what broke it happened on its watch.
 *             A forfeit is a result (not passed), never a harness error: an agent must not
 *             be able to turn a run it expects to lose into one that does not count;
 *   unscored  something failed before the agent started: the harness's failure, not the
 *             agent's (retry it).
 * *ret_failed (may be NULL) gets the failed properties' names, as sb_iso_verdict gives them.
 */
enum sb_iso_outcome { SB_ISO_SCORED, SB_ISO_FORFEIT, SB_ISO_UNSCORED };
enum sb_iso_outcome sb_iso_outcome(const struct sb_iso_record *r, enum sb_iso_phase upto,
    char **ret_failed);
/* "scored", "forfeit", "unscored". */
const char *sb_iso_outcome_name(enum sb_iso_outcome o);

/*
 * The record as JSON, for isolation.json, result.json and summary.json:
 * {"outcome": "scored"|"forfeit"|"unscored", "scored", "tier", "egress", "failed": [names],
 * "phases": {phase: {prop: {"status": "held"|"failed"|"not_checked"|"not_claimed",
 * "detail"}}}}. "scored" is true when the run counts in totals (scored or forfeit); "tier"
 * is the tier established before the agent started, null for an unscored run. New
 * reference.
 */
json_t *sb_iso_to_json(const struct sb_iso_record *r, enum sb_iso_phase upto);

/*
 * Fold into r what another container saw in phase ph (sidecar mode: the task container's
 * isolation record, as sb_iso_to_json wrote it). Each property that side marked "held" or
 * "failed" is noted with its detail prefixed by where ("task container: ..."), so a failure
 * on either side fails the run; what it did not check stays as r has it. Returns false, and
 * notes nothing, when doc has no object for phase ph, or when its egress claim is not r's:
 * the caller must then treat that side as unchecked.
 */
bool sb_iso_merge_json(struct sb_iso_record *r, enum sb_iso_phase ph, const json_t *doc,
    const char *where);

/*
 * Parse isolation.json (what sb_iso_to_json(r, upto) wrote; untrusted, since a container
 * wrote it) back into *ret. Strict: every member and every property of phases 0..upto must
 * be there with its type, none other may be (but the two the entrypoint adds beside them,
 * each of its type: "enforced", a boolean, "proxy_key_before_grading", a string, which are
 * set aside), each detail must fit SB_ISO_DETAIL_MAX, and the
 * record must say of itself (outcome, scored, tier, failed, and not_claimed where a
 * property is not claimed) exactly what its states make of it: the document is the one
 * sb_iso_to_json gives for the parsed record, or it is refused. Returns <0 with *err (which
 * never quotes the document) on anything else; *ret is written only on success.
 */
int sb_iso_from_json(const json_t *doc, enum sb_iso_phase upto, struct sb_iso_record *ret,
    struct sb_error **err);

/*
 * The message a run that is not scored as graded gets in its patch_result's error_msg:
 * "Forfeit: the isolation established before the agent did not hold before grading:
 * <failed>" for a forfeit, else "Not scored: isolation not established: <failed>". A new
 * string.
 */
char *sb_iso_outcome_message(enum sb_iso_outcome o, const char *failed);

/* --- the grade's verdict (docs/upstream.md, "Grading"; docs/evaluator.md) --------------- */

/* One check of a grade: did it run, and did it pass (result.json: null, true, false). */
enum sb_check { SB_CHECK_NOT_RUN, SB_CHECK_PASSED, SB_CHECK_FAILED };

/*
 * What a grade's checks found: the evaluator fills it from its struct grade, the CLI from
 * a result.json's patch_result (sb_grade_checks_from_json).
 */
struct sb_grade_checks {
	enum sb_check build, func_test, intent_test;
	enum sb_check oracle;	/* the grading build's oracle (not in patch_result) */
	bool pov_reported;	/* the PoC fields are known (pov_total not null) */
	json_int_t pov_passed, pov_total;
	bool timed_out;		/* the evaluator's budget ran out */
	bool exception;		/* an infrastructure failure stopped grading */
};

/* Which rule decided a grade, in the order they are tried (sb_grade_decide). */
enum sb_grade_rule {
	SB_GRADE_CHECK_FAILED, /* failed: a check that ran failed; what was found stands */
	SB_GRADE_TIMED_OUT,    /* failed: the budget ran out (the patch's time, never an error) */
	SB_GRADE_EXCEPTION,    /* error: an infrastructure failure */
	SB_GRADE_NOTHING_RAN,  /* error: no check ran */
	SB_GRADE_ALL_PASSED,   /* passed */
};

enum sb_grade_status { SB_GRADE_PASSED, SB_GRADE_FAILED, SB_GRADE_ERROR };

/* Did any check run (the PoC check counts when reported), and did any that ran fail. */
bool sb_grade_any_ran(const struct sb_grade_checks *c);
bool sb_grade_any_failed(const struct sb_grade_checks *c);

/* The one verdict of a grade: the first rule of enum sb_grade_rule that applies. */
enum sb_grade_rule sb_grade_decide(const struct sb_grade_checks *c);
/* The status a rule gives; "passed", "failed", "error". */
enum sb_grade_status sb_grade_rule_status(enum sb_grade_rule r);
const char *sb_grade_status_name(enum sb_grade_status s);

/*
 * A result.json (untrusted: a container wrote it) as checks. Its patch_result: each of
 * build_success, func_test_success and intent_test_success missing or null (not run) or a
 * boolean; pov_total and pov_passed both missing or null, or both integers with
 * 0 <= pov_passed <= pov_total <= UINT_MAX. Beyond it, what the evaluator also decides by:
 * runtime_result's evaluator_timeout and grading_result's oracle_passed, each missing, null
 * or a boolean. Anything else fails (<0, *err; *ret untouched). An exception leaves no
 * member of its own (only its error_msg): exception stays false.
 */
int sb_grade_checks_from_json(const json_t *result, struct sb_grade_checks *ret,
    struct sb_error **err);

/*
 * The result.json of a run that has no grade (docs/upstream.md, "Result files"): a
 * patch_result with status "forfeit" (forfeit true) or "error", every check null, error_msg
 * why and error_log log (NULL gives null), and a runtime_result from rt (NULL: nothing known
 * of the agent, its exit code null). A new reference; NULL when why or log is not UTF-8.
 */
struct sb_run_runtime {
	json_int_t agent_duration; /* seconds */
	bool agent_timeout;
	bool has_exit_code;
	json_int_t agent_exit_code;
};
json_t *sb_ungraded_result(bool forfeit, const char *why, const char *log,
    const struct sb_run_runtime *rt);

#endif

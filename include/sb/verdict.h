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

#endif

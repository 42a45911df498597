/* SPDX-License-Identifier: Apache-2.0 */
/* verdict.c: the fail-closed run verdict (see verdict.h). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sb/buf.h"
#include "sb/mem.h"
#include "sb/verdict.h"

static const struct {
	const char *name, *what;
} props[SB_ISO_PROP_COUNT] = {
	[SB_ISO_AGENT_IDENTITY] = { "agent_identity",
		"the agent runs as its own non-root uid and gid, with no supplementary groups" },
	[SB_ISO_RUNNER_IDENTITY] = { "runner_identity",
		"task scripts run as their own non-root uid, not the agent's, with no "
		"supplementary groups" },
	[SB_ISO_NO_CAPABILITIES] = { "no_capabilities",
		"agent and runner processes hold no capabilities (effective, permitted, ambient)" },
	[SB_ISO_NO_NEW_PRIVS] = { "no_new_privs",
		"agent and runner processes cannot gain privileges through exec (no_new_privs)" },
	[SB_ISO_SECCOMP] = { "seccomp", "agent and runner processes run under a seccomp filter" },
	[SB_ISO_TASK_FILES_HIDDEN] = { "task_files_hidden",
		"the task files (config, reference patch, hidden tests, PoCs) are unreadable by "
		"the agent and the runner" },
	[SB_ISO_REPO_HIDDEN] = { "pristine_repo_hidden",
		"the pristine repository with its history is unreadable by the agent and the "
		"runner" },
	[SB_ISO_RESULTS_HIDDEN] = { "results_hidden",
		"the results, the secrets file and the daemon's state are unreadable, and the "
		"admin socket refuses the agent and the runner" },
	[SB_ISO_SINGLE_COMMIT] = { "single_commit",
		"the agent's source tree holds exactly one commit" },
	[SB_ISO_DIFFICULTY_GATE] = { "difficulty_gate",
		"the daemon enforces the run's difficulty level on the agent's socket" },
	[SB_ISO_REFERENCE_MOUNT] = { "reference_mount",
		"the reference patch is mounted for the reference agent and for no other" },
	[SB_ISO_NETWORK_INTERNAL] = { "network_internal",
		"the container has no route out (restricted egress)" },
	[SB_ISO_HOST_UNREACHABLE] = { "host_unreachable",
		"the host's address on the run's network does not answer (restricted egress)" },
	[SB_ISO_RUNNER_SANDBOX] = { "runner_sandbox",
		"task scripts run in namespaces of their own with no network but loopback, a "
		"private /tmp, and no way to the agent's socket or to a place the agent can see" },
};

static const char *const phases[SB_ISO_PHASE_COUNT] = { "before_agent", "before_grading" };

/* A state as isolation.json writes it (a property not claimed and not checked: not_claimed). */
static const char *const states[] = { "not_checked", "held", "failed" };

const char *
sb_iso_prop_name(enum sb_iso_prop p)
{
	return (unsigned)p < SB_ISO_PROP_COUNT ? props[p].name : NULL;
}

const char *
sb_iso_prop_what(enum sb_iso_prop p)
{
	return (unsigned)p < SB_ISO_PROP_COUNT ? props[p].what : NULL;
}

const char *
sb_iso_phase_name(enum sb_iso_phase ph)
{
	return (unsigned)ph < SB_ISO_PHASE_COUNT ? phases[ph] : NULL;
}

bool
sb_iso_claimed(enum sb_iso_prop p, enum sb_iso_phase ph, bool egress_restricted)
{
	if ((unsigned)p >= SB_ISO_PROP_COUNT || (unsigned)ph >= SB_ISO_PHASE_COUNT)
		return false;
	/* The agent may commit: history is a property of what it was given. */
	if (p == SB_ISO_SINGLE_COMMIT)
		return ph == SB_ISO_BEFORE_AGENT;
	/* An --egress open run claims no network isolation, and so gets no such tier. */
	if (p == SB_ISO_NETWORK_INTERNAL || p == SB_ISO_HOST_UNREACHABLE)
		return egress_restricted;
	return true;
}

void
sb_iso_record_init(struct sb_iso_record *r, bool egress_restricted)
{
	memset(r, 0, sizeof(*r));
	r->egress_restricted = egress_restricted;
}

/*
 * Every byte of s that does not start a valid UTF-8 sequence becomes '?', in place. A
 * detail can hold a name the agent chose (a file in a shared place) and is cut at
 * SB_ISO_DETAIL_MAX, maybe inside a character: JSON cannot hold such bytes, and a property
 * whose entry could not be written would make a record the CLI refuses (sb_iso_from_json),
 * turning a forfeit the agent caused into a run that does not count.
 */
static void
utf8_scrub(char *s)
{
	size_t n = strlen(s), i = 0;

	while (i < n) {
		size_t k = sb_utf8_seq_len((const unsigned char *)s + i, n - i);

		if (k == 0) {
			s[i++] = '?';
			continue;
		}
		i += k;
	}
}

void
sb_iso_note(struct sb_iso_record *r, enum sb_iso_phase ph, enum sb_iso_prop p, bool held,
    const char *fmt, ...)
{
	va_list ap;

	if ((unsigned)ph >= SB_ISO_PHASE_COUNT || (unsigned)p >= SB_ISO_PROP_COUNT)
		return;
	if (r->state[ph][p] == SB_ISO_FAILED)
		return; /* the first failure stands */
	if (held && r->state[ph][p] == SB_ISO_HELD)
		return; /* keep the first detail of a property held several times */
	r->state[ph][p] = held ? SB_ISO_HELD : SB_ISO_FAILED;
	va_start(ap, fmt);
	vsnprintf(r->detail[ph][p], SB_ISO_DETAIL_MAX, fmt, ap);
	va_end(ap);
	utf8_scrub(r->detail[ph][p]);
}

/* Failed in any phase up to upto, or claimed and never checked. */
static bool
prop_failed(const struct sb_iso_record *r, enum sb_iso_phase upto, enum sb_iso_prop p)
{
	for (int ph = 0; ph <= (int)upto && ph < SB_ISO_PHASE_COUNT; ph++) {
		if (!sb_iso_claimed(p, (enum sb_iso_phase)ph, r->egress_restricted))
			continue;
		if (r->state[ph][p] != SB_ISO_HELD)
			return true;
	}
	return false;
}

bool
sb_iso_verdict(const struct sb_iso_record *r, enum sb_iso_phase upto, char **ret_failed)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(4096);
	bool scored = true;

	for (int p = 0; p < SB_ISO_PROP_COUNT; p++) {
		if (!prop_failed(r, upto, (enum sb_iso_prop)p))
			continue;
		scored = false;
		if (ret_failed != NULL)
			(void)sb_buf_appendf(&b, NULL, "%s%s", b.len > 0 ? ", " : "", props[p].name);
	}
	if (ret_failed != NULL)
		*ret_failed = sb_xstrdup(b.s);
	return scored;
}

enum sb_iso_outcome
sb_iso_outcome(const struct sb_iso_record *r, enum sb_iso_phase upto, char **ret_failed)
{
	if (sb_iso_verdict(r, upto, ret_failed))
		return SB_ISO_SCORED;
	/* Everything held before the agent: what failed later happened on the agent's watch. */
	return upto > SB_ISO_BEFORE_AGENT && sb_iso_verdict(r, SB_ISO_BEFORE_AGENT, NULL)
		   ? SB_ISO_FORFEIT
		   : SB_ISO_UNSCORED;
}

const char *
sb_iso_outcome_name(enum sb_iso_outcome o)
{
	switch (o) {
	case SB_ISO_SCORED:
		return "scored";
	case SB_ISO_FORFEIT:
		return "forfeit";
	case SB_ISO_UNSCORED:
		break;
	}
	return "unscored";
}

const char *
sb_iso_tier(const struct sb_iso_record *r, enum sb_iso_phase upto)
{
	if (!sb_iso_verdict(r, upto, NULL))
		return NULL;
	return r->egress_restricted ? "restricted" : "open";
}

json_t *
sb_iso_to_json(const struct sb_iso_record *r, enum sb_iso_phase upto)
{
	json_t *j = json_object(), *failed = json_array(), *ph_obj = json_object();
	enum sb_iso_outcome outcome = sb_iso_outcome(r, upto, NULL);
	/* A forfeit keeps the tier it had when the agent started: it is that tier's result. */
	const char *tier = outcome == SB_ISO_UNSCORED ? NULL
		: r->egress_restricted		      ? "restricted"
						      : "open";

	for (int p = 0; p < SB_ISO_PROP_COUNT; p++)
		if (prop_failed(r, upto, (enum sb_iso_prop)p))
			json_array_append_new(failed, json_string(props[p].name));
	for (int ph = 0; ph <= (int)upto && ph < SB_ISO_PHASE_COUNT; ph++) {
		json_t *o = json_object();

		for (int p = 0; p < SB_ISO_PROP_COUNT; p++) {
			bool claimed = sb_iso_claimed((enum sb_iso_prop)p, (enum sb_iso_phase)ph,
			    r->egress_restricted);
			enum sb_iso_state st = r->state[ph][p];
			const char *status = !claimed && st == SB_ISO_UNCHECKED ? "not_claimed"
									       : states[st];

			json_object_set_new(o, props[p].name,
			    json_pack("{s:s, s:s}", "status", status, "detail", r->detail[ph][p]));
		}
		json_object_set_new(ph_obj, phases[ph], o);
	}
	json_object_set_new(j, "outcome", json_string(sb_iso_outcome_name(outcome)));
	json_object_set_new(j, "scored", json_boolean(tier != NULL));
	json_object_set_new(j, "tier", tier != NULL ? json_string(tier) : json_null());
	json_object_set_new(j, "egress", json_string(r->egress_restricted ? "restricted" : "open"));
	json_object_set_new(j, "failed", failed);
	json_object_set_new(j, "phases", ph_obj);
	return j;
}

bool
sb_iso_merge_json(struct sb_iso_record *r, enum sb_iso_phase ph, const json_t *doc,
    const char *where)
{
	const json_t *o;
	const char *egress;

	if ((unsigned)ph >= SB_ISO_PHASE_COUNT || !json_is_object(doc))
		return false;
	egress = json_string_value(json_object_get(doc, "egress"));
	if (egress == NULL || strcmp(egress, r->egress_restricted ? "restricted" : "open") != 0)
		return false;
	o = json_object_get(json_object_get(doc, "phases"), phases[ph]);
	if (!json_is_object(o))
		return false;
	for (int p = 0; p < SB_ISO_PROP_COUNT; p++) {
		const json_t *e = json_object_get(o, props[p].name);
		const char *st = json_string_value(json_object_get(e, "status"));
		const char *detail = json_string_value(json_object_get(e, "detail"));

		if (st == NULL)
			continue;
		if (strcmp(st, "held") == 0 || strcmp(st, "failed") == 0)
			sb_iso_note(r, ph, (enum sb_iso_prop)p, strcmp(st, "held") == 0, "%s: %s",
			    where, detail != NULL ? detail : "");
	}
	return true;
}

/* One phase's object of isolation.json into r: one {status, detail} per property, no other. */
static int
iso_phase_from_json(const json_t *o, enum sb_iso_phase ph, struct sb_iso_record *r,
    struct sb_error **err)
{
	if (!json_is_object(o) || json_object_size(o) != SB_ISO_PROP_COUNT)
		return sb_error_set(err, EINVAL, "isolation record: %s: not one entry per property",
		    phases[ph]);
	for (int p = 0; p < SB_ISO_PROP_COUNT; p++) {
		json_t *e = json_object_get(o, props[p].name);
		const char *st = NULL, *detail = NULL;
		int k;

		/* Size equal and every name found: no property the record does not know. */
		if (e == NULL || json_unpack_ex(e, NULL, 0, "{s:s, s:s !}", "status", &st, "detail",
				     &detail) < 0)
			return sb_error_set(err, EINVAL, "isolation record: %s: %s: not a status "
			    "and a detail", phases[ph], props[p].name);
		if (strlen(detail) >= SB_ISO_DETAIL_MAX)
			return sb_error_set(err, EINVAL, "isolation record: %s: %s: detail too long",
			    phases[ph], props[p].name);
		for (k = 0; k < (int)SB_ARRAY_SIZE(states); k++)
			if (strcmp(st, states[k]) == 0)
				break;
		/* not_claimed is not_checked of a property the phase does not claim: the
		 * caller's comparison with sb_iso_to_json holds it to that. */
		if (k == (int)SB_ARRAY_SIZE(states) && strcmp(st, "not_claimed") == 0)
			k = SB_ISO_UNCHECKED;
		if (k == (int)SB_ARRAY_SIZE(states))
			return sb_error_set(err, EINVAL, "isolation record: %s: %s: no such status",
			    phases[ph], props[p].name);
		r->state[ph][p] = (enum sb_iso_state)k;
		memcpy(r->detail[ph][p], detail, strlen(detail) + 1);
	}
	return 0;
}

/*
 * doc without the members the entrypoint writes beside sb_iso_to_json's
 * (entrypoint/isolation.c:write_record): "enforced", a boolean, and
 * "proxy_key_before_grading", a string. NULL when doc is not an object or either is there
 * with another type. A new reference.
 */
static json_t *
iso_core(const json_t *doc)
{
	static const char *const annotations[] = { "enforced", "proxy_key_before_grading" };
	json_t *core;

	if (!json_is_object(doc))
		return NULL;
	core = json_copy((json_t *)doc);
	for (size_t i = 0; i < SB_ARRAY_SIZE(annotations); i++) {
		json_t *v = json_object_get(core, annotations[i]);

		if (v == NULL)
			continue;
		if (i == 0 ? !json_is_boolean(v) : !json_is_string(v)) {
			json_decref(core);
			return NULL;
		}
		json_object_del(core, annotations[i]);
	}
	return core;
}

int
sb_iso_from_json(const json_t *whole, enum sb_iso_phase upto, struct sb_iso_record *ret,
    struct sb_error **err)
{
	struct sb_iso_record r;
	json_t *outcome, *scored, *tier, *failed, *ph_obj, *again;
	json_auto_t *doc = iso_core(whole);
	const char *egress = NULL;
	bool same;

	if ((unsigned)upto >= SB_ISO_PHASE_COUNT)
		return sb_error_set(err, EINVAL, "isolation record: no such phase");
	if (doc == NULL)
		return sb_error_set(err, EINVAL, "isolation record: not an object with the "
		    "entrypoint's members of their types");
	/* Every member, each once, and no other ("!"); types are held by the comparison below. */
	if (json_unpack_ex(doc, NULL, 0, "{s:o, s:o, s:o, s:s, s:o, s:o !}", "outcome",
		&outcome, "scored", &scored, "tier", &tier, "egress", &egress, "failed", &failed,
		"phases", &ph_obj) < 0)
		return sb_error_set(err, EINVAL, "isolation record: not the members a record has");
	if (strcmp(egress, "restricted") != 0 && strcmp(egress, "open") != 0)
		return sb_error_set(err, EINVAL, "isolation record: no such egress");
	sb_iso_record_init(&r, strcmp(egress, "restricted") == 0);
	/* A phase missing is a phase nobody looked at: refused, not read as all unchecked. */
	if (!json_is_object(ph_obj) || json_object_size(ph_obj) != (size_t)upto + 1)
		return sb_error_set(err, EINVAL, "isolation record: not phases %s to %s",
		    phases[0], phases[upto]);
	for (int ph = 0; ph <= (int)upto; ph++)
		if (iso_phase_from_json(json_object_get(ph_obj, phases[ph]), (enum sb_iso_phase)ph,
			&r, err) < 0)
			return -1;
	/*
	 * What the record says of itself (outcome, scored, tier, failed, not_claimed) must be
	 * what its states make of it: written by sb_iso_to_json, it is that document exactly.
	 * A record that says "scored" over a failed state, or lists other failures than its
	 * states show, was not written by us.
	 */
	again = sb_iso_to_json(&r, upto);
	same = json_equal(doc, again);
	json_decref(again);
	if (!same)
		return sb_error_set(err, EINVAL, "isolation record: says what its states do not");
	*ret = r;
	return 0;
}

char *
sb_iso_outcome_message(enum sb_iso_outcome o, const char *failed)
{
	if (o == SB_ISO_FORFEIT)
		return sb_xasprintf("Forfeit: the isolation established before the agent did not "
				    "hold before grading: %s", failed);
	return sb_xasprintf("Not scored: isolation not established: %s", failed);
}

bool
sb_grade_any_ran(const struct sb_grade_checks *c)
{
	return c->build != SB_CHECK_NOT_RUN || c->pov_reported || c->func_test != SB_CHECK_NOT_RUN ||
	       c->intent_test != SB_CHECK_NOT_RUN;
}

bool
sb_grade_any_failed(const struct sb_grade_checks *c)
{
	return c->build == SB_CHECK_FAILED || c->oracle == SB_CHECK_FAILED ||
	       (c->pov_reported && c->pov_passed != c->pov_total) ||
	       c->func_test == SB_CHECK_FAILED || c->intent_test == SB_CHECK_FAILED;
}

enum sb_grade_rule
sb_grade_decide(const struct sb_grade_checks *c)
{
	if (sb_grade_any_failed(c))
		return SB_GRADE_CHECK_FAILED;
	/*
	 * Out of time with nothing failed so far: failed, not an error. Every check runs code
	 * the patch controls, so a patch that makes them slow enough could otherwise turn its
	 * expected failure into a run that does not count.
	 */
	if (c->timed_out)
		return SB_GRADE_TIMED_OUT;
	if (c->exception)
		return SB_GRADE_EXCEPTION;
	if (!sb_grade_any_ran(c))
		return SB_GRADE_NOTHING_RAN;
	return SB_GRADE_ALL_PASSED;
}

enum sb_grade_status
sb_grade_rule_status(enum sb_grade_rule r)
{
	switch (r) {
	case SB_GRADE_ALL_PASSED:
		return SB_GRADE_PASSED;
	case SB_GRADE_CHECK_FAILED:
	case SB_GRADE_TIMED_OUT:
		return SB_GRADE_FAILED;
	case SB_GRADE_EXCEPTION:
	case SB_GRADE_NOTHING_RAN:
		break;
	}
	return SB_GRADE_ERROR;
}

const char *
sb_grade_status_name(enum sb_grade_status s)
{
	switch (s) {
	case SB_GRADE_PASSED:
		return "passed";
	case SB_GRADE_FAILED:
		return "failed";
	case SB_GRADE_ERROR:
		break;
	}
	return "error";
}

/* A boolean check of o (key): missing or null is not run, anything but a boolean fails. */
static int
check_from_json(const json_t *o, const char *key, enum sb_check *ret, struct sb_error **err)
{
	const json_t *v = json_object_get(o, key);

	if (v == NULL || json_is_null(v))
		*ret = SB_CHECK_NOT_RUN;
	else if (json_is_boolean(v))
		*ret = json_is_true(v) ? SB_CHECK_PASSED : SB_CHECK_FAILED;
	else
		return sb_error_set(err, EINVAL, "result: %s is not a boolean or null", key);
	return 0;
}

/* The PoC fields come as a pair (the evaluator writes both or neither), in range. */
static int
pov_from_json(const json_t *pr, struct sb_grade_checks *c, struct sb_error **err)
{
	const json_t *passed = json_object_get(pr, "pov_passed");
	const json_t *total = json_object_get(pr, "pov_total");

	c->pov_reported = total != NULL && !json_is_null(total);
	if (!c->pov_reported) {
		if (passed != NULL && !json_is_null(passed))
			return sb_error_set(err, EINVAL, "result: pov_passed without pov_total");
		return 0;
	}
	if (!json_is_integer(total) || !json_is_integer(passed))
		return sb_error_set(err, EINVAL, "result: PoC counts not integers");
	c->pov_passed = json_integer_value(passed);
	c->pov_total = json_integer_value(total);
	if (c->pov_passed < 0 || c->pov_passed > c->pov_total || c->pov_total > UINT_MAX)
		return sb_error_set(err, ERANGE, "result: PoC counts out of range");
	return 0;
}

int
sb_grade_checks_from_json(const json_t *result, struct sb_grade_checks *ret,
    struct sb_error **err)
{
	const json_t *pr = json_object_get(result, "patch_result");
	struct sb_grade_checks c = { 0 };
	enum sb_check timed_out;

	if (!json_is_object(pr))
		return sb_error_set(err, EINVAL, "result: patch_result not an object");
	if (check_from_json(pr, "build_success", &c.build, err) < 0 ||
	    check_from_json(pr, "func_test_success", &c.func_test, err) < 0 ||
	    check_from_json(pr, "intent_test_success", &c.intent_test, err) < 0 ||
	    pov_from_json(pr, &c, err) < 0 ||
	    check_from_json(json_object_get(result, "grading_result"), "oracle_passed", &c.oracle,
		err) < 0 ||
	    check_from_json(json_object_get(result, "runtime_result"), "evaluator_timeout",
		&timed_out, err) < 0)
		return -1;
	/* evaluator_timeout true reads as a check that "passed": the budget ran out. */
	c.timed_out = timed_out == SB_CHECK_PASSED;
	*ret = c;
	return 0;
}

json_t *
sb_ungraded_result(bool forfeit, const char *why, const char *log,
    const struct sb_run_runtime *rt)
{
	static const struct sb_run_runtime unknown = { 0, false, false, 0 };

	if (rt == NULL)
		rt = &unknown;
	return json_pack("{s:{s:s, s:n, s:n, s:n, s:n, s:n, s:s, s:s?}, s:{s:I, s:b, s:b, s:o}}",
	    "patch_result", "status", forfeit ? "forfeit" : "error", "build_success", "pov_passed",
	    "pov_total", "func_test_success", "intent_test_success", "error_msg", why, "error_log",
	    log, "runtime_result", "agent_duration", rt->agent_duration, "agent_timeout",
	    (int)rt->agent_timeout, "evaluator_timeout", 0, "agent_exit_code",
	    rt->has_exit_code ? json_integer(rt->agent_exit_code) : json_null());
}

/* SPDX-License-Identifier: Apache-2.0 */
/* verdict.c: the fail-closed run verdict (see verdict.h). */
#include "config.h"

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
	static const char *const states[] = { "not_checked", "held", "failed" };
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

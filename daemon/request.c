/* SPDX-License-Identifier: Apache-2.0 */
/*
 * request.c: the daemon's request rules, free of HTTP and of processes, so that the fronts,
 * the helper, the unit tests and the fuzzer all use the same code.
 *
 *   dreq_from_client: a client's query values and body -> the typed request (or 400);
 *   dreq_encode/dreq_decode: the typed request on the channel, checked where it arrives;
 *   dreq_policy:      who may do what, when (the table in docs/daemon.md, "Endpoints").
 */
#include "config.h"

#include <string.h>

#include "sb/json.h"
#include "sb/mem.h"
#include "sb/parse.h"

#include "daemon.h"

int
dreq_match_poc(const struct sb_task_config *t, const char *bench_path, const char *given)
{
	size_t bl = strlen(bench_path);
	const char *rel = given;

	if (given == NULL)
		return DREQ_NO_POC;
	if (strncmp(given, bench_path, bl) == 0 && given[bl] == '/')
		rel = given + bl + 1;
	for (size_t i = 0; i < t->files.poc.n && i < INT32_MAX; i++)
		if (strcmp(t->files.poc.v[i].s, rel) == 0)
			return (int)i;
	return DREQ_NO_POC;
}

/* A JSON object body: NULL for none, an empty one for an empty POST; -1 if not an object. */
static int
body_object(const char *body, size_t len, json_t **ret)
{
	json_auto_t *in = NULL;

	*ret = NULL;
	if (body == NULL)
		return 0;
	if (len == 0)
		in = json_object();
	else if (sb_json_load(body, len, DPROTO_BODY_MAX, &in, NULL) < 0)
		return -1;
	if (!json_is_object(in))
		return -1;
	*ret = json_incref(in);
	return 0;
}

static int
bash_from_client(json_t *in, struct dreq *out)
{
	const char *cmd = NULL;
	json_int_t timeout = 0;

	if (in == NULL ||
	    sb_json_unpack(in, NULL, "{s:s, s?I}", "command", &cmd, "timeout", &timeout) < 0 ||
	    timeout < 0 || strlen(cmd) > DREQ_COMMAND_MAX)
		return -1;
	out->command = sb_xstrdup(cmd);
	out->timeout = timeout;
	return 0;
}

static int
bencher_from_client(const struct sb_task_config *t, const char *bench_path, json_t *in,
    const char *action, struct dreq *out)
{
	const char *poc = NULL;
	int grading = 0;

	if (in == NULL || action == NULL ||
	    sb_json_unpack(in, NULL, "{s?b, s?s}", "grading", &grading, "poc", &poc) < 0)
		return -1;
	/*
	 * The action is parsed here, once: one of the four, or SB_ACTION_COUNT for any other
	 * name (refused by dreq_policy with upstream's 500). Likewise the PoC: its index in the
	 * task's list, or none. Nothing after this point ever sees the client's strings.
	 */
	if (sb_action_parse(action, &out->action) < 0)
		out->action = SB_ACTION_COUNT;
	out->grading = grading;
	out->poc = dreq_match_poc(t, bench_path, poc);
	return 0;
}

int
dreq_from_client(const struct sb_task_config *t, const char *bench_path, enum dreq_type type,
    const char *action, const char *since, const char *body, size_t len, struct dreq *out)
{
	json_auto_t *in = NULL;

	memset(out, 0, sizeof(*out));
	out->type = type;
	out->action = SB_ACTION_COUNT;
	out->poc = DREQ_NO_POC;
	out->since = -1;
	if (body_object(body, len, &in) < 0)
		return -1;
	switch (type) {
	case DREQ_BASH:
		return bash_from_client(in, out);
	case DREQ_BENCHER:
		return bencher_from_client(t, bench_path, in, action, out);
	case DREQ_DIALOG:
		if (since != NULL && sb_parse_i64(since, -1, INT64_MAX, &out->since, NULL) < 0)
			return -1;
		return 0;
	case DREQ_PREPARE_GRADING:
	case DREQ_AGENT_EXITED:
		/* Upstream sends {}; anything else is a client error. */
		return in != NULL && json_object_size(in) != 0 ? -1 : 0;
	case DREQ_DIFF:
	case DREQ_FILES:
	case DREQ_RESULT:
	case DREQ_FINAL_DIFF:
	case DREQ_REFERENCE_PATCH:
		return 0;
	case DREQ_MAX_:
		break;
	}
	return -1;
}

/* No padding: every byte of the message is a field the helper checks. */
_Static_assert(sizeof(struct dreq_wire) == 4 * sizeof(uint32_t) + 2 * sizeof(int64_t),
    "struct dreq_wire has padding");

char *
dreq_encode(const struct dreq *r, size_t *ret_len)
{
	size_t cl = r->command != NULL ? strlen(r->command) : 0;
	struct dreq_wire w = {
		.action = (uint32_t)r->action,
		.grading = r->grading,
		.poc = r->poc,
		.command_len = (uint32_t)cl,
		.timeout = r->timeout,
		.since = r->since,
	};
	char *out = sb_xmalloc(sizeof(w) + cl);

	memcpy(out, &w, sizeof(w));
	if (cl > 0)
		memcpy(out + sizeof(w), r->command, cl);
	*ret_len = sizeof(w) + cl;
	return out;
}

int
dreq_decode(enum dreq_type type, const void *body, size_t len, size_t n_poc, struct dreq *out)
{
	struct dreq_wire w;
	const char *cmd;

	memset(out, 0, sizeof(*out));
	if (type <= 0 || type >= DREQ_MAX_ || len < sizeof(w) || len > DPROTO_BODY_MAX)
		return -1;
	/* Only now: a body shorter than the record has no command to point at. */
	cmd = (const char *)body + sizeof(w);
	memcpy(&w, body, sizeof(w));
	/* Every field in its range, whatever the type: no value the front could not have made. */
	if (w.action > SB_ACTION_COUNT || w.grading > 1 || w.poc < DREQ_NO_POC ||
	    (w.poc >= 0 && (size_t)w.poc >= n_poc) || w.timeout < 0 || w.since < -1)
		return -1;
	/* A field of another type holds its default: the front sets nothing else. */
	if ((type != DREQ_BENCHER &&
		(w.action != SB_ACTION_COUNT || w.grading != 0 || w.poc != DREQ_NO_POC)) ||
	    (type != DREQ_BASH && w.timeout != 0) || (type != DREQ_DIALOG && w.since != -1))
		return -1;
	/* The command: bash's alone, exactly the bytes left, no NUL inside. */
	if (w.command_len != len - sizeof(w) || w.command_len > DREQ_COMMAND_MAX ||
	    (type != DREQ_BASH && w.command_len != 0) || memchr(cmd, '\0', w.command_len) != NULL)
		return -1;
	out->type = type;
	out->action = (enum sb_action)w.action;
	out->grading = w.grading;
	out->poc = w.poc;
	out->timeout = w.timeout;
	out->since = w.since;
	if (type == DREQ_BASH)
		out->command = sb_xstrndup(cmd, w.command_len);
	return 0;
}

void
dreq_release(struct dreq *r)
{
	free(r->command);
	r->command = NULL;
}

/* A bencher request with a known action: the gate, then the PoC. */
static unsigned
bencher_gate(const struct dpolicy *p, bool agent, const struct dreq *r, const char **ret_msg)
{
	static __thread char gate_msg[128];

	if (agent && !sb_level_allows(p->difficulty, r->action)) {
		snprintf(gate_msg, sizeof(gate_msg),
		    "action '%s' is not available at the current difficulty level",
		    sb_action_name(r->action));
		*ret_msg = gate_msg;
		return 403;
	}
	if (r->action == SB_ACTION_RUN_POC && r->poc == DREQ_NO_POC) {
		*ret_msg = "not a PoC of this task";
		return 500;
	}
	return 0;
}

/* A bencher request in the agent phase (or from the admin socket). */
static unsigned
bencher_policy(const struct dpolicy *p, bool agent, const struct dreq *r, const char **ret_msg)
{
	if (agent && r->grading) {
		*ret_msg = "grading is only available on the admin socket";
		return 403;
	}
	switch (r->action) {
	case SB_ACTION_BUILD:
	case SB_ACTION_RUN_POC:
	case SB_ACTION_FUNCTION_TEST:
	case SB_ACTION_INTENT_TEST:
		return bencher_gate(p, agent, r, ret_msg);
	case SB_ACTION_COUNT:
		break;
	}
	/* SB_ACTION_COUNT, or any value out of range: upstream's answer to an unknown action. */
	*ret_msg = "unknown bencher action";
	return 500;
}

unsigned
dreq_policy(const struct dpolicy *p, enum dchannel ch, const struct dreq *r, const char **ret_msg)
{
	bool agent = ch == DCH_AGENT;

	switch (r->type) {
	case DREQ_PREPARE_GRADING:
	case DREQ_AGENT_EXITED:
	case DREQ_REFERENCE_PATCH:
		if (!agent)
			return 0;
		*ret_msg = "endpoint is only available on the admin socket";
		return 403;
	case DREQ_BASH:
	case DREQ_BENCHER:
		if (agent && !p->agent_phase) {
			*ret_msg = "the agent phase has ended: tools are closed";
			return 403;
		}
		return r->type == DREQ_BASH ? 0 : bencher_policy(p, agent, r, ret_msg);
	case DREQ_DIFF:
	case DREQ_FILES:
	case DREQ_DIALOG:
	case DREQ_RESULT:
	case DREQ_FINAL_DIFF:
		return 0;
	case DREQ_MAX_:
		break;
	}
	*ret_msg = "malformed request body";
	return 400;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * request.c: the daemon's request rules, free of HTTP and of processes, so that the fronts,
 * the helper, the unit tests and the fuzzer all use the same code.
 *
 *   dreq_from_client: a client's query values and body -> the canonical request (or 400);
 *   dreq_policy:      who may do what, when (the table in docs/daemon.md, "Endpoints").
 */
#include "config.h"

#include <string.h>

#include "sb/json.h"
#include "sb/mem.h"
#include "sb/parse.h"

#include "daemon.h"

int
dreq_action(const json_t *req, enum sb_action *ret)
{
	return sb_action_parse(json_string_value(json_object_get(req, "action")), ret);
}

const char *
dreq_match_poc(const struct sb_task_config *t, const char *bench_path, const char *given)
{
	size_t bl = strlen(bench_path);
	const char *rel = given;

	if (given == NULL)
		return NULL;
	if (strncmp(given, bench_path, bl) == 0 && given[bl] == '/')
		rel = given + bl + 1;
	for (size_t i = 0; i < t->files.poc.n; i++)
		if (strcmp(t->files.poc.v[i].s, rel) == 0)
			return t->files.poc.v[i].s;
	return NULL;
}

json_t *
dreq_from_client(enum dreq_type type, const char *action, const char *since, const char *body,
    size_t len)
{
	json_auto_t *in = NULL;

	if (body != NULL) {
		if (len == 0)
			in = json_object();
		else if (sb_json_load(body, len, DPROTO_BODY_MAX, &in, NULL) < 0)
			return NULL;
		if (!json_is_object(in))
			return NULL;
	}
	switch (type) {
	case DREQ_BASH: {
		const char *cmd = NULL;
		json_int_t timeout = 0;

		if (in == NULL ||
		    sb_json_unpack(in, NULL, "{s:s, s?I}", "command", &cmd, "timeout", &timeout) < 0 ||
		    timeout < 0)
			return NULL;
		return json_pack("{s:s, s:I}", "command", cmd, "timeout", timeout);
	}
	case DREQ_BENCHER: {
		const char *poc = NULL;
		int grading = 0;

		enum sb_action a;

		if (in == NULL || action == NULL ||
		    sb_json_unpack(in, NULL, "{s?b, s?s}", "grading", &grading, "poc", &poc) < 0)
			return NULL;
		/*
		 * The action is parsed here, once: the canonical request names one of the four
		 * actions, or null for any other name (refused by dreq_policy with upstream's
		 * 500). Nothing after this point ever sees the client's string.
		 */
		return json_pack("{s:o, s:b, s:o}", "action",
		    sb_action_parse(action, &a) == 0 ? json_string(sb_action_name(a)) : json_null(),
		    "grading", grading, "poc", sb_json_string_or_null(poc));
	}
	case DREQ_DIALOG: {
		int64_t s = -1;

		if (since != NULL && sb_parse_i64(since, -1, INT64_MAX, &s, NULL) < 0)
			return NULL;
		return json_pack("{s:I}", "since", (json_int_t)s);
	}
	case DREQ_PREPARE_GRADING:
	case DREQ_AGENT_EXITED:
		/* Upstream sends {}; anything else is a client error. */
		if (in != NULL && json_object_size(in) != 0)
			return NULL;
		return json_object();
	case DREQ_DIFF:
	case DREQ_FILES:
	case DREQ_RESULT:
	case DREQ_FINAL_DIFF:
	case DREQ_REFERENCE_PATCH:
		return json_object();
	case DREQ_MAX_:
		break;
	}
	return NULL;
}

unsigned
dreq_policy(const struct dpolicy *p, enum dchannel ch, enum dreq_type t, json_t *req,
    const char **ret_msg)
{
	static __thread char gate_msg[128];

	if (ch == DCH_AGENT &&
	    (t == DREQ_PREPARE_GRADING || t == DREQ_AGENT_EXITED || t == DREQ_REFERENCE_PATCH)) {
		*ret_msg = "endpoint is only available on the admin socket";
		return 403;
	}
	if (t == DREQ_BASH) {
		const char *cmd = NULL;
		json_int_t timeout = 0;

		if (sb_json_unpack(req, NULL, "{s:s, s:I}", "command", &cmd, "timeout", &timeout) < 0 ||
		    timeout < 0) {
			*ret_msg = "malformed request body";
			return 400;
		}
		if (ch == DCH_AGENT && !p->agent_phase) {
			*ret_msg = "the agent phase has ended: tools are closed";
			return 403;
		}
	}
	if (t == DREQ_BENCHER) {
		json_t *action = NULL, *poc = NULL;
		enum sb_action a;
		int grading = 0;

		if (sb_json_unpack(req, NULL, "{s:o, s:b, s:o}", "action", &action, "grading",
			&grading, "poc", &poc) < 0 ||
		    !(json_is_null(poc) || json_is_string(poc)) ||
		    !(json_is_null(action) || json_is_string(action))) {
			*ret_msg = "malformed request body";
			return 400;
		}
		if (ch == DCH_AGENT && !p->agent_phase) {
			*ret_msg = "the agent phase has ended: tools are closed";
			return 403;
		}
		if (ch == DCH_AGENT && grading) {
			*ret_msg = "grading is only available on the admin socket";
			return 403;
		}
		if (dreq_action(req, &a) < 0) {
			*ret_msg = "unknown bencher action";
			return 500;
		}
		if (ch == DCH_AGENT && !sb_level_allows(p->difficulty, a)) {
			snprintf(gate_msg, sizeof(gate_msg),
			    "action '%s' is not available at the current difficulty level",
			    sb_action_name(a));
			*ret_msg = gate_msg;
			return 403;
		}
		if (a == SB_ACTION_RUN_POC &&
		    dreq_match_poc(p->task, p->bench_path, json_string_value(poc)) == NULL) {
			*ret_msg = "not a PoC of this task";
			return 500;
		}
	}
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-request.c: the daemon's request parsing and access rules on arbitrary input.
 * Layout of an input: byte 0 picks the request type, byte 1 the channel (bit 0), the phase
 * (bit 1) and the path (bit 2: the helper's own reading of a body a taken-over front sent,
 * as daemon/helper.c:handle_request does, instead of the front's dreq_from_client), byte 2
 * the difficulty; the rest is "action\0since\0body".
 *
 * Checked beyond memory safety: what the gate lets through obeys its rules (check_allowed).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sb/diag.h"
#include "sb/json.h"
#include "sb/mem.h"
#include "sb/task.h"

#include "../../daemon/daemon.h"
#include "fuzz.h"

static struct sb_task_config *task;

/* A request dreq_policy let through (0) must be one its rules allow: abort() if not. */
static void
check_allowed(const struct dpolicy *p, enum dchannel ch, enum dreq_type t, const json_t *req)
{
	enum sb_action a;

	if (ch == DCH_AGENT &&
	    (t == DREQ_PREPARE_GRADING || t == DREQ_AGENT_EXITED || t == DREQ_REFERENCE_PATCH))
		abort();
	if (t == DREQ_BASH && ch == DCH_AGENT && !p->agent_phase)
		abort();
	if (t != DREQ_BENCHER)
		return;
	if (dreq_action(req, &a) < 0)
		abort();
	if (ch == DCH_AGENT && (!p->agent_phase || json_is_true(json_object_get(req, "grading")) ||
				   !sb_level_allows(p->difficulty, a)))
		abort();
	if (a == SB_ACTION_RUN_POC &&
	    dreq_match_poc(p->task, p->bench_path,
		json_string_value(json_object_get(req, "poc"))) == NULL)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char yaml[] = "id: t\nproject: p\nrepository: https://e.org\nlanguage: c\n"
				   "source: /s\ntask_description: {issue: x}\n"
				   "scripts: {build: b, run: r, test: t}\n"
				   "files: {future_test: t.diff, poc: [pocs/a]}\n";
	char *copy, *action, *since, *body;
	struct dpolicy p;
	enum dreq_type t;
	enum dchannel ch;
	const char *msg;
	size_t rest;
	json_t *req;

	if (task == NULL) {
		struct sb_diags d = SB_DIAGS_INIT;

		task = sb_task_config_parse(yaml, strlen(yaml), "c", &d);
		sb_diags_release(&d);
	}
	if (size < 3)
		return 0;
	copy = sb_xmemdup(data + 3, size - 3);
	rest = size - 3;
	action = copy;
	since = memchr(action, '\0', rest) ? action + strlen(action) + 1 : NULL;
	body = since && since < copy + rest && memchr(since, '\0', (size_t)(copy + rest - since))
		? since + strlen(since) + 1
		: NULL;
	t = (enum dreq_type)(1 + data[0] % (DREQ_MAX_ - 1));
	ch = (data[1] & 1) ? DCH_ADMIN : DCH_AGENT;
	p.difficulty = data[2] % 5;
	p.agent_phase = data[1] & 2;
	p.task = task;
	p.bench_path = "/ssebench";
	if (data[1] & 4) {
		/* What the helper reads: any JSON object at all. */
		req = NULL;
		if (body == NULL || sb_json_load(body, (size_t)(copy + rest - body),
					DPROTO_BODY_MAX, &req, NULL) < 0 || !json_is_object(req)) {
			json_decref(req);
			req = NULL;
		}
	} else {
		req = dreq_from_client(t, since ? action : NULL, body ? since : NULL, body,
		    body ? (size_t)(copy + rest - body) : 0);
	}
	if (req != NULL) {
		if (dreq_policy(&p, ch, t, req, &msg) == 0)
			check_allowed(&p, ch, t, req);
		json_decref(req);
	}
	free(copy);
	return 0;
}

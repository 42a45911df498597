/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-request.c: the daemon's request parsing and access rules on arbitrary input.
 * Layout of an input: byte 0 picks the request type, byte 1 the channel (bit 0), the phase
 * (bit 1) and the path (bit 2: the helper's own reading of a body a taken-over front sent,
 * dreq_decode as daemon/helper.c:handle_request does, instead of the front's
 * dreq_from_client), byte 2 the difficulty; the rest is "action\0since\0body" (the front's
 * path) or the channel's body (the helper's).
 *
 * Checked beyond memory safety: what the gate lets through obeys its rules (check_allowed),
 * and what the front makes, the helper reads back unchanged (check_round_trip).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sb/diag.h"
#include "sb/mem.h"
#include "sb/task.h"

#include "../../daemon/daemon.h"
#include "fuzz.h"

static struct sb_task_config *task;

/* A request dreq_policy let through (0) must be one its rules allow: abort() if not. */
static void
check_allowed(const struct dpolicy *p, enum dchannel ch, const struct dreq *r)
{
	if (ch == DCH_AGENT && (r->type == DREQ_PREPARE_GRADING || r->type == DREQ_AGENT_EXITED ||
				   r->type == DREQ_REFERENCE_PATCH))
		abort();
	if (r->type == DREQ_BASH && ch == DCH_AGENT && !p->agent_phase)
		abort();
	if (r->type != DREQ_BENCHER)
		return;
	if (sb_action_name(r->action) == NULL)
		abort();
	if (ch == DCH_AGENT &&
	    (!p->agent_phase || r->grading || !sb_level_allows(p->difficulty, r->action)))
		abort();
	if (r->action == SB_ACTION_RUN_POC && (r->poc < 0 || (size_t)r->poc >= task->files.poc.n))
		abort();
}

/* The front's request, on the channel and back, is the same request. */
static void
check_round_trip(const struct dreq *r)
{
	struct dreq back;
	size_t len;
	char *b = dreq_encode(r, &len);

	if (dreq_decode(r->type, b, len, task->files.poc.n, &back) < 0 ||
	    back.action != r->action || back.grading != r->grading || back.poc != r->poc ||
	    back.timeout != r->timeout || back.since != r->since ||
	    (r->command == NULL) != (back.command == NULL) ||
	    (r->command != NULL && strcmp(r->command, back.command) != 0))
		abort();
	dreq_release(&back);
	free(b);
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
	struct dreq req;
	int rc;

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
	if (data[1] & 4) {
		/* What the helper reads: any bytes at all. */
		rc = dreq_decode(t, copy, rest, task->files.poc.n, &req);
	} else {
		rc = dreq_from_client(task, "/ssebench", t, since ? action : NULL,
		    body ? since : NULL, body, body ? (size_t)(copy + rest - body) : 0, &req);
		if (rc == 0)
			check_round_trip(&req);
	}
	if (rc == 0 && dreq_policy(&p, ch, &req, &msg) == 0)
		check_allowed(&p, ch, &req);
	dreq_release(&req);
	free(copy);
	return 0;
}

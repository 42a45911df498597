/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-request.c: the daemon's request parsing and access rules on arbitrary input.
 * Layout of an input: byte 0 picks the request type, byte 1 the channel and phase, byte 2
 * the difficulty; the rest is "action\0since\0body".
 */
#include "config.h"

#include <string.h>

#include "sb/diag.h"
#include "sb/mem.h"
#include "sb/task.h"

#include "../../daemon/daemon.h"
#include "fuzz.h"

static struct sb_task_config *task;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char yaml[] = "id: t\nproject: p\nrepository: https://e.org\nlanguage: c\n"
				   "source: /s\ntask_description: {issue: x}\n"
				   "scripts: {build: b, run: r, test: t}\n"
				   "files: {future_test: t.diff, poc: [pocs/a]}\n";
	char *copy, *action, *since, *body;
	struct dpolicy p;
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
	p.difficulty = data[2] % 5;
	p.agent_phase = data[1] & 2;
	p.task = task;
	p.bench_path = "/ssebench";
	req = dreq_from_client((enum dreq_type)(1 + data[0] % (DREQ_MAX_ - 1)),
	    since ? action : NULL, body ? since : NULL, body,
	    body ? (size_t)(copy + rest - body) : 0);
	if (req != NULL) {
		(void)dreq_policy(&p, (data[1] & 1) ? DCH_ADMIN : DCH_AGENT,
		    (enum dreq_type)(1 + data[0] % (DREQ_MAX_ - 1)), req, &msg);
		json_decref(req);
	}
	free(copy);
	return 0;
}

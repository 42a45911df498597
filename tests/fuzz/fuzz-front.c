/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-front.c: what the daemon's HTTP fronts do with a request before anything leaves
 * them (daemon/front.c:front_decide): route, token, admin peer, body bound, the request
 * for the helper (daemon/request.c:dreq_from_client).
 *
 * Layout of an input: byte 0: the listener (bits 0-1: agent Unix socket, agent TCP, admin),
 * whether the admin peer is root (bit 2), a query value held a NUL (bit 3), the body was too
 * big (bit 4), and whether Authorization (bit 5), X-SSE-Token (bit 6) and ?action= (bit 7)
 * were sent; byte 1: whether ?since= was (bit 0) and the method (bits 1-3: GET, POST, PUT,
 * DELETE, HEAD, get, post, OPTIONS); then fields separated by NUL bytes: the URL, the two
 * headers, the two query values and the body. The run's token is "tok-0123456789abcdef".
 *
 * Checked beyond memory safety: nothing is answered or forwarded past a failed check (on
 * TCP the token, worked out again here; on the admin socket a root peer; no admin
 * endpoint on an agent listener; no body past the bound; no query value with a NUL); an
 * error is one of the fronts' fixed texts, never what the client sent.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sb/json.h"
#include "sb/diag.h"
#include "sb/mem.h"
#include "sb/task.h"

#include "../../daemon/daemon.h"
#include "fuzz.h"

static const char token[] = "tok-0123456789abcdef";
static const char yaml[] = "id: t\nproject: p\nrepository: https://e.org\nlanguage: c\n"
			   "source: /s\ntask_description: {issue: x}\n"
			   "scripts: {build: b, run: r, test: t}\n"
			   "files: {future_test: t.diff, poc: [pocs/a]}\n";
static struct sb_task_config *task;

static bool
fixed_text(const char *e)
{
	static const char *const texts[] = { "no such endpoint", "method not allowed",
		"this listener needs the run's token (Authorization: Bearer ...)",
		"the admin socket serves root only", "endpoint is only available on the admin socket",
		"request body too large", "malformed request: needs ?action= and a JSON object body",
		"malformed request body" };

	for (size_t i = 0; i < SB_ARRAY_SIZE(texts); i++)
		if (strcmp(e, texts[i]) == 0)
			return true;
	return false;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const methods[] = { "GET", "POST", "PUT", "DELETE", "HEAD", "get",
		"post", "OPTIONS" };
	const char *field[6] = { "", "", "", "", "", "" };
	size_t len[6] = { 0 };
	struct front_request rq;
	struct front_decision d;
	char *copy;

	if (size < 2)
		return 0;
	(void)fuzz_fields(data + 2, size - 2, &copy, field, len, SB_ARRAY_SIZE(field));
	memset(&rq, 0, sizeof(rq));
	rq.kind = (enum listener_kind)((data[0] & 3) % 3);
	rq.peer_root = data[0] & 4;
	rq.query_bad = data[0] & 8;
	rq.too_big = data[0] & 16;
	rq.method = methods[(data[1] >> 1) & 7];
	rq.url = field[0];
	rq.authorization = (data[0] & 32) ? field[1] : NULL;
	rq.x_sse_token = (data[0] & 64) ? field[2] : NULL;
	rq.action = (data[0] & 128) ? field[3] : NULL;
	rq.since = (data[1] & 1) ? field[4] : NULL;
	rq.body = field[5];
	rq.body_len = len[5];
	if (task == NULL) {
		struct sb_diags dg = SB_DIAGS_INIT;

		task = sb_task_config_parse(yaml, strlen(yaml), "c", &dg);
		sb_diags_release(&dg);
	}
	front_decide(token, task, "/ssebench", &rq, &d);
	if (d.error != NULL) {
		if (!fixed_text(d.error) || d.request != NULL || d.local != FRONT_LOCAL_NONE)
			abort();
	} else {
		bool bearer = rq.authorization != NULL && strncasecmp(rq.authorization, "Bearer ", 7) == 0;
		bool token_given = bearer ? strcmp(rq.authorization + 7, token) == 0
					  : rq.x_sse_token != NULL && strcmp(rq.x_sse_token, token) == 0;

		/* Answered here (200, a public view) or forwarded (0, a request): one of them. */
		if (d.local != FRONT_LOCAL_NONE ? d.status != 200 || d.request != NULL
						: d.status != 0 || d.request == NULL)
			abort();
		if (rq.kind == LISTEN_AGENT_TCP && strcmp(rq.url, "/version") != 0 && !token_given)
			abort();
		if (rq.kind == LISTEN_ADMIN && !rq.peer_root)
			abort();
		if (rq.kind != LISTEN_ADMIN && d.request != NULL &&
		    (d.type == DREQ_PREPARE_GRADING || d.type == DREQ_AGENT_EXITED ||
			d.type == DREQ_REFERENCE_PATCH))
			abort();
		if (rq.too_big || (d.request != NULL && rq.query_bad))
			abort();
	}
	front_decision_release(&d);
	free(copy);
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-mcp.c: the MCP server's answer to one HTTP request (mcp/rpc.c:mcp_serve), which the
 * agent sends, with test_patch reading the daemon's replies (mcp/testpatch.c) from the input
 * instead of the socket.
 *
 * Layout of an input: byte 0 picks the method (bits 0-1: POST, GET, DELETE, PUT), the level
 * (bits 2-4, modulo 5) and whether an Origin (bit 5) and an MCP-Protocol-Version (bit 6)
 * header are sent; then fields separated by NUL bytes: the URL, the Origin, the
 * MCP-Protocol-Version, the body, the daemon's GET /capabilities and GET /project replies,
 * and one reply per bencher call after that (a missing one is a daemon that cannot be
 * reached).
 *
 * Checked beyond memory safety: the status is one the server sends, and every body is one
 * JSON object (what a client parses).
 */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sb/json.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/tree.h"

#include "../../mcp/mcp.h"
#include "fuzz.h"

struct input {
	const char *field[16];
	size_t len[16];
	size_t n, next_reply;
};

static json_t *
reply_json(struct input *in, size_t i)
{
	json_t *j = NULL;

	if (i >= in->n || sb_json_load(in->field[i], in->len[i], MCP_BODY_MAX, &j, NULL) < 0)
		return NULL;
	return j;
}

static json_t *
fake_get(void *arg, const char *path)
{
	struct input *in = arg;

	return reply_json(in, strcmp(path, "/capabilities") == 0 ? 4 : 5);
}

static int
fake_bencher(void *arg, const char *action, const char *poc, struct sb_script_result *r)
{
	struct input *in = arg;
	json_t *j = reply_json(in, in->next_reply++);
	int rc;

	(void)poc;
	if (j == NULL)
		return -1;
	rc = sb_sdk_script_result(j, action, r, NULL);
	json_decref(j);
	return rc;
}

static char log_dir[] = "/tmp/sb-fuzz-mcp.XXXXXX";

static void
remove_log_dir(void)
{
	(void)sb_remove_tree_at(AT_FDCWD, log_dir, NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const methods[] = { "POST", "GET", "DELETE", "PUT" };
	static bool init;
	struct input in = { .n = 0 };
	struct mcp_daemon_ops ops = { fake_get, fake_bencher, &in };
	struct mcp_config cfg = { .daemon_socket = "/nonexistent", .log_dir = log_dir,
		.daemon = &ops };
	struct mcp_reply reply;
	char *copy;

	if (!init) {
		if (mkdtemp(log_dir) == NULL)
			abort();
		atexit(remove_log_dir);
		sb_log_init("fuzz-mcp", SB_LOG_ERROR, 0); /* not a line per test_patch call */
		init = true;
	}
	if (size < 1)
		return 0;
	in.n = fuzz_fields(data + 1, size - 1, &copy, in.field, in.len, SB_ARRAY_SIZE(in.field));
	while (in.n < 4) {
		in.field[in.n] = "";
		in.len[in.n++] = 0;
	}
	in.next_reply = 6;
	cfg.level = ((data[0] >> 2) & 7) % 5;
	mcp_serve(&cfg,
	    &(struct mcp_request){ .url = in.field[0], .method = methods[data[0] & 3],
		.origin = (data[0] & 0x20) ? in.field[1] : NULL,
		.protocol_version = (data[0] & 0x40) ? in.field[2] : NULL,
		.body = in.field[3], .body_len = in.len[3], .too_big = (data[0] & 0x80) != 0 },
	    &reply);
	if (reply.status != 200 && reply.status != 202 && reply.status != 400 &&
	    reply.status != 403 && reply.status != 404 && reply.status != 405 &&
	    reply.status != 413)
		abort();
	if (reply.body != NULL) {
		json_t *j = NULL;

		if (sb_json_load(reply.body, strlen(reply.body), SIZE_MAX, &j, NULL) < 0 ||
		    !json_is_object(j))
			abort();
		json_decref(j);
	}
	mcp_reply_release(&reply);
	free(copy);
	/* A long log was saved under a random name: millions of inputs would fill /tmp. */
	if (rmdir(log_dir) < 0)
		(void)sb_remove_tree_at(AT_FDCWD, log_dir, NULL);
	if (mkdir(log_dir, 0700) < 0)
		abort();
	return 0;
}

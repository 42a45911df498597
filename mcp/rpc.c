/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc.c: what the MCP server answers to one HTTP request (mcp.h:mcp_serve), apart from the
 * HTTP server that receives it (main.c), so that a fuzz target can drive the whole path the
 * agent's bytes take (tests/fuzz/fuzz-mcp.c).
 */
#include "config.h"

#include <string.h>

#include "sb/buf.h"
#include "sb/fs.h"
#include "sb/json.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/parse.h"

#include "mcp.h"

/* Newest first: what a client asking for something else is offered. */
static const char *const protocol_versions[] = { "2025-06-18", "2025-03-26", "2024-11-05" };

static const char tool_description[] =
    "Check your patch: builds the project with your changes and runs the checks your "
    "difficulty level allows (the proofs of concept, the functional tests, the intent "
    "tests), in a clean copy of the project, and reports each step. Takes no arguments.";

static bool
version_supported(const char *v)
{
	for (size_t i = 0; i < SB_ARRAY_SIZE(protocol_versions); i++)
		if (v != NULL && strcmp(v, protocol_versions[i]) == 0)
			return true;
	return false;
}

/* A JSON-RPC error object for id (may be NULL: JSON null). */
static char *
rpc_error(const json_t *id, int code, const char *msg)
{
	json_t *j = json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
	    id != NULL ? id : json_null(), "error", "code", code, "message", msg);
	char *s = sb_json_dumps(j, JSON_COMPACT);

	json_decref(j);
	return s;
}

static char *
rpc_result(const json_t *id, json_t *result)
{
	json_t *j = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result);
	char *s = sb_json_dumps(j, JSON_COMPACT);

	json_decref(j);
	return s;
}

static json_t *
tool_list(void)
{
	return json_pack("{s:[{s:s, s:s, s:s, s:{s:s, s:{}, s:b}}]}", "tools", "name",
	    "test_patch", "title", "Test your patch", "description", tool_description,
	    "inputSchema", "type", "object", "properties", "additionalProperties", 0);
}

/* initialize: the version negotiated, who we are, and a new session id in *session. */
static char *
initialize(const json_t *id, const json_t *params, char **session)
{
	const char *want = json_string_value(json_object_get(params, "protocolVersion"));
	unsigned char r[16];
	char hex[33];

	const json_t *ci = json_object_get(params, "clientInfo");
	_cleanup_free_ char *who = sb_escape(json_string_value(json_object_get(ci, "name")) ?: "?");
	_cleanup_free_ char *wv = sb_escape(json_string_value(json_object_get(ci, "version")) ?: "?");

	/* Who connected, for the run's logs (tests/agents checks each agent did). */
	sb_log(SB_LOG_INFO, "initialize: client '%s' %s", who, wv);
	/* Negotiation: the client's version if we speak it, else our newest. */
	if (sb_random_bytes(r, sizeof(r), NULL) == 0) {
		for (size_t i = 0; i < sizeof(r); i++)
			snprintf(hex + 2 * i, 3, "%02x", r[i]);
		*session = sb_xstrdup(hex);
	}
	return rpc_result(id,
	    json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion",
		version_supported(want) ? want : protocol_versions[0], "capabilities", "tools",
		"listChanged", 0, "serverInfo", "name", "ssebench MCP Server", "title", "SSEBench",
		"version", PACKAGE_VERSION, "instructions",
		"Call test_patch to check your patch against the task's checks."));
}

/* tools/call: test_patch, the one tool, with no arguments. */
static char *
tools_call(const struct mcp_config *cfg, const json_t *id, const json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	const json_t *args = json_object_get(params, "arguments");
	_cleanup_free_ char *text = NULL;

	if (name == NULL || strcmp(name, "test_patch") != 0)
		return rpc_error(id, -32602, "Unknown tool: this server has only test_patch");
	if (args != NULL && !json_is_null(args) &&
	    !(json_is_object(args) && json_object_size(args) == 0))
		return rpc_error(id, -32602, "Invalid params: test_patch takes no arguments");
	sb_log(SB_LOG_INFO, "test_patch called (level %u)", cfg->level);
	text = mcp_test_patch(cfg);
	sb_log(SB_LOG_INFO, "test_patch: %.*s", (int)strcspn(text, "\n"), text);
	return rpc_result(id, json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text",
				  text, "isError", 0));
}

/*
 * One JSON-RPC message. Returns the HTTP status; *reply gets the body (NULL: none, for a
 * notification or a response, which get 202 Accepted).
 */
static unsigned
handle(const struct mcp_config *cfg, const json_t *msg, char **reply, char **session)
{
	const json_t *id = json_object_get(msg, "id");
	const char *method = json_string_value(json_object_get(msg, "method"));
	const json_t *params = json_object_get(msg, "params");

	*reply = NULL;
	if (!json_is_object(msg) ||
	    strcmp(json_string_value(json_object_get(msg, "jsonrpc")) ?: "", "2.0") != 0) {
		*reply = rpc_error(NULL, -32600, "Invalid Request: not a JSON-RPC 2.0 message");
		return 400;
	}
	if (method == NULL) {
		/* A response to a request of ours (we send none): accepted and ignored. */
		if (json_object_get(msg, "result") != NULL || json_object_get(msg, "error") != NULL)
			return 202;
		*reply = rpc_error(id, -32600, "Invalid Request: no method");
		return 400;
	}
	if (id == NULL)
		return 202; /* notifications/initialized, cancelled, ... */
	if (!json_is_string(id) && !json_is_integer(id)) {
		*reply = rpc_error(NULL, -32600, "Invalid Request: id must be a string or a number");
		return 400;
	}
	if (params != NULL && !json_is_object(params)) {
		*reply = rpc_error(id, -32602, "Invalid params: params must be an object");
		return 200;
	}
	if (strcmp(method, "initialize") == 0) {
		*reply = initialize(id, params, session);
		return 200;
	}
	if (strcmp(method, "ping") == 0) {
		*reply = rpc_result(id, json_object());
		return 200;
	}
	if (strcmp(method, "tools/list") == 0) {
		sb_log(SB_LOG_INFO, "tools/list");
		*reply = rpc_result(id, tool_list());
		return 200;
	}
	if (strcmp(method, "tools/call") == 0) {
		*reply = tools_call(cfg, id, params);
		return 200;
	}
	*reply = rpc_error(id, -32601, "Method not found");
	return 200;
}

bool
mcp_origin_ok(const char *o)
{
	static const char *const ok[] = { "http://localhost", "http://127.0.0.1", "http://[::1]" };

	/* Origin, when a browser sends one, must be this machine (DNS rebinding). */
	if (o == NULL)
		return true;
	for (size_t i = 0; i < SB_ARRAY_SIZE(ok); i++) {
		size_t n = strlen(ok[i]);

		if (strncmp(o, ok[i], n) == 0 && (o[n] == '\0' || o[n] == ':'))
			return true;
	}
	return false;
}

void
mcp_serve(const struct mcp_config *cfg, const struct mcp_request *rq, struct mcp_reply *out)
{
	json_t *msg;

	memset(out, 0, sizeof(*out));
	if (strcmp(rq->url, "/mcp") != 0) {
		out->status = 404;
		out->body = sb_xstrdup("{\"error\":\"not found: use /mcp\"}");
		return;
	}
	if (!mcp_origin_ok(rq->origin)) {
		out->status = 403;
		out->body = sb_xstrdup("{\"error\":\"origin not allowed\"}");
		return;
	}
	if (strcmp(rq->method, "DELETE") == 0) {
		out->status = 200; /* a session ends: nothing kept */
		return;
	}
	if (strcmp(rq->method, "POST") != 0) {
		out->status = 405;
		return;
	}
	if (rq->protocol_version != NULL && !version_supported(rq->protocol_version)) {
		out->status = 400;
		out->body = rpc_error(NULL, -32600, "Unsupported MCP-Protocol-Version");
		return;
	}
	if (rq->too_big) {
		out->status = 413;
		out->body = rpc_error(NULL, -32600, "Invalid Request: the message is too large");
		return;
	}
	if (sb_json_load(rq->body, rq->body_len, MCP_BODY_MAX, &msg, NULL) < 0) {
		out->status = 400;
		out->body = rpc_error(NULL, -32700, "Parse error");
		return;
	}
	if (json_is_array(msg)) {
		/* Batches went out of the protocol in 2025-06-18; we answer none of them. */
		json_decref(msg);
		out->status = 400;
		out->body = rpc_error(NULL, -32600, "Invalid Request: batches are not supported");
		return;
	}
	out->status = handle(cfg, msg, &out->body, &out->session);
	json_decref(msg);
}

void
mcp_reply_release(struct mcp_reply *r)
{
	free(r->body);
	free(r->session);
	memset(r, 0, sizeof(*r));
}

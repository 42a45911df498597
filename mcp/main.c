/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c: ssebench-mcp, the MCP server of a run (upstream-reference §6): Streamable HTTP at
 * POST /mcp, JSON-RPC 2.0, one tool (test_patch). Every reply is a single JSON object
 * (application/json), which the transport allows in place of an SSE stream; GET /mcp, the
 * optional server-to-client stream, is answered 405 as the transport says a server without
 * one must.
 *
 * It listens on the loopback address only, and refuses a request whose Origin header names
 * anything but localhost (the transport's defence against DNS rebinding). It is started by
 * the entrypoint as an unprivileged user (nobody) under the agent's seccomp filter: it parses
 * what the agent sends, and holds nothing a bug could give away; the checks it runs go
 * through the daemon's agent-facing socket, gated like any other call.
 */
#include "config.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "sb/buf.h"
#include "sb/exit.h"
#include "sb/fs.h"
#include "sb/json.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/parse.h"

#include "mcp.h"

#define CONNECTION_LIMIT  64
#define CONNECTION_IDLE_S 3600 /* a test_patch call may take as long as a build */

/* Newest first: what a client asking for something else is offered. */
static const char *const protocol_versions[] = { "2025-06-18", "2025-03-26", "2024-11-05" };

static const char tool_description[] =
    "Check your patch: builds the project with your changes and runs the checks your "
    "difficulty level allows (the proofs of concept, the functional tests, the intent "
    "tests), in a clean copy of the project, and reports each step. Takes no arguments.";

struct req {
	struct sb_buf body;
	bool too_big;
};

static struct mcp_config cfg;

static bool
version_supported(const char *v)
{
	for (size_t i = 0; i < SB_ARRAY_SIZE(protocol_versions); i++)
		if (v != NULL && strcmp(v, protocol_versions[i]) == 0)
			return true;
	return false;
}

static enum MHD_Result
respond(struct MHD_Connection *conn, unsigned status, const char *body, const char *session)
{
	size_t len = body != NULL ? strlen(body) : 0;
	struct MHD_Response *r;
	enum MHD_Result ret;
	char *copy = sb_xmemdup(body != NULL ? body : "", len + 1);

	r = MHD_create_response_from_buffer(len, copy, MHD_RESPMEM_MUST_FREE);
	if (r == NULL) {
		free(copy);
		return MHD_NO;
	}
	if (len > 0)
		MHD_add_response_header(r, "Content-Type", "application/json");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	if (session != NULL)
		MHD_add_response_header(r, "Mcp-Session-Id", session);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, "Allow", "POST");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
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

/*
 * One JSON-RPC message. Returns the HTTP status; *reply gets the body (NULL: none, for a
 * notification or a response, which get 202 Accepted).
 */
static unsigned
handle(const json_t *msg, char **reply, char **session)
{
	const json_t *id = json_object_get(msg, "id");
	const char *method = json_string_value(json_object_get(msg, "method"));
	const json_t *params = json_object_get(msg, "params");

	*reply = NULL;
	if (!json_is_object(msg) ||
	    strcmp(json_string_value(json_object_get(msg, "jsonrpc")) ?: "", "2.0") != 0) {
		*reply = rpc_error(NULL, -32600, "Invalid Request: not a JSON-RPC 2.0 message");
		return MHD_HTTP_BAD_REQUEST;
	}
	if (method == NULL) {
		/* A response to a request of ours (we send none): accepted and ignored. */
		if (json_object_get(msg, "result") != NULL || json_object_get(msg, "error") != NULL)
			return MHD_HTTP_ACCEPTED;
		*reply = rpc_error(id, -32600, "Invalid Request: no method");
		return MHD_HTTP_BAD_REQUEST;
	}
	if (id == NULL)
		return MHD_HTTP_ACCEPTED; /* notifications/initialized, cancelled, ... */
	if (!json_is_string(id) && !json_is_integer(id)) {
		*reply = rpc_error(NULL, -32600, "Invalid Request: id must be a string or a number");
		return MHD_HTTP_BAD_REQUEST;
	}
	if (params != NULL && !json_is_object(params)) {
		*reply = rpc_error(id, -32602, "Invalid params: params must be an object");
		return MHD_HTTP_OK;
	}
	if (strcmp(method, "initialize") == 0) {
		const char *want =
		    json_string_value(json_object_get(params, "protocolVersion"));
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
		*reply = rpc_result(id,
		    json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion",
			version_supported(want) ? want : protocol_versions[0], "capabilities",
			"tools", "listChanged", 0, "serverInfo", "name", "ssebench MCP Server",
			"title", "SSEBench", "version", PACKAGE_VERSION, "instructions",
			"Call test_patch to check your patch against the task's checks."));
		return MHD_HTTP_OK;
	}
	if (strcmp(method, "ping") == 0) {
		*reply = rpc_result(id, json_object());
		return MHD_HTTP_OK;
	}
	if (strcmp(method, "tools/list") == 0) {
		sb_log(SB_LOG_INFO, "tools/list");
		*reply = rpc_result(id, tool_list());
		return MHD_HTTP_OK;
	}
	if (strcmp(method, "tools/call") == 0) {
		const char *name = json_string_value(json_object_get(params, "name"));
		const json_t *args = json_object_get(params, "arguments");
		_cleanup_free_ char *text = NULL;

		if (name == NULL || strcmp(name, "test_patch") != 0) {
			*reply = rpc_error(id, -32602, "Unknown tool: this server has only test_patch");
			return MHD_HTTP_OK;
		}
		if (args != NULL && !json_is_null(args) &&
		    !(json_is_object(args) && json_object_size(args) == 0)) {
			*reply = rpc_error(id, -32602, "Invalid params: test_patch takes no arguments");
			return MHD_HTTP_OK;
		}
		sb_log(SB_LOG_INFO, "test_patch called (level %u)", cfg.level);
		text = mcp_test_patch(&cfg);
		sb_log(SB_LOG_INFO, "test_patch: %.*s", (int)strcspn(text, "\n"), text);
		*reply = rpc_result(id, json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text",
					    "text", text, "isError", 0));
		return MHD_HTTP_OK;
	}
	*reply = rpc_error(id, -32601, "Method not found");
	return MHD_HTTP_OK;
}

/* Origin, when a browser sends one, must be this machine (DNS rebinding). */
static bool
origin_ok(struct MHD_Connection *conn)
{
	const char *o = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
	static const char *const ok[] = { "http://localhost", "http://127.0.0.1", "http://[::1]" };

	if (o == NULL)
		return true;
	for (size_t i = 0; i < SB_ARRAY_SIZE(ok); i++) {
		size_t n = strlen(ok[i]);

		if (strncmp(o, ok[i], n) == 0 && (o[n] == '\0' || o[n] == ':'))
			return true;
	}
	return false;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
    const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
	struct req *rq = *con_cls;
	_cleanup_free_ char *reply = NULL, *session = NULL;
	json_t *msg;
	unsigned status;

	(void)cls;
	(void)version;
	if (rq == NULL) {
		rq = sb_xcalloc(1, sizeof(*rq));
		rq->body = (struct sb_buf)SB_BUF_INIT(MCP_BODY_MAX);
		*con_cls = rq;
		return MHD_YES;
	}
	if (*upload_size > 0) {
		if (!rq->too_big && sb_buf_append(&rq->body, upload, *upload_size, NULL) < 0)
			rq->too_big = true;
		*upload_size = 0;
		return MHD_YES;
	}
	if (strcmp(url, "/mcp") != 0)
		return respond(conn, MHD_HTTP_NOT_FOUND, "{\"error\":\"not found: use /mcp\"}", NULL);
	if (!origin_ok(conn))
		return respond(conn, MHD_HTTP_FORBIDDEN, "{\"error\":\"origin not allowed\"}", NULL);
	if (strcmp(method, "DELETE") == 0)
		return respond(conn, MHD_HTTP_OK, NULL, NULL); /* a session ends: nothing kept */
	if (strcmp(method, "POST") != 0)
		return respond(conn, MHD_HTTP_METHOD_NOT_ALLOWED, NULL, NULL);
	{
		const char *pv = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
		    "MCP-Protocol-Version");

		if (pv != NULL && !version_supported(pv)) {
			reply = rpc_error(NULL, -32600, "Unsupported MCP-Protocol-Version");
			return respond(conn, MHD_HTTP_BAD_REQUEST, reply, NULL);
		}
	}
	if (rq->too_big) {
		reply = rpc_error(NULL, -32600, "Invalid Request: the message is too large");
		return respond(conn, 413, reply, NULL);
	}
	if (sb_json_load(rq->body.s, rq->body.len, MCP_BODY_MAX, &msg, NULL) < 0) {
		reply = rpc_error(NULL, -32700, "Parse error");
		return respond(conn, MHD_HTTP_BAD_REQUEST, reply, NULL);
	}
	if (json_is_array(msg)) {
		/* Batches went out of the protocol in 2025-06-18; we answer none of them. */
		json_decref(msg);
		reply = rpc_error(NULL, -32600, "Invalid Request: batches are not supported");
		return respond(conn, MHD_HTTP_BAD_REQUEST, reply, NULL);
	}
	status = handle(msg, &reply, &session);
	json_decref(msg);
	return respond(conn, status, reply, session);
}

static void
on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct req *rq = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (rq == NULL)
		return;
	sb_buf_release(&rq->body);
	free(rq);
	*con_cls = NULL;
}

static void
usage(FILE *out)
{
	fprintf(out, "usage: ssebench-mcp [--version] [--help]\n"
		     "\n"
		     "The MCP server of a run: Streamable HTTP at http://ADDRESS:PORT/mcp, one tool\n"
		     "(test_patch) that runs the checks the difficulty level allows through the\n"
		     "daemon's agent socket. Configured by environment variables: SSE_DAEMON_SOCKET,\n"
		     "SSE_DIFFICULTY (0-4, default 2), SSE_MCP_ADDRESS (127.0.0.1), SSE_MCP_PORT\n"
		     "(3000), MCP_LOG_DIR (/tmp/mcp/logs). docs/mcp.md.\n");
}

int
main(int argc, char **argv)
{
	struct sb_error *err = NULL;
	struct sockaddr_in sa;
	struct MHD_Daemon *d;
	const char *v;
	sigset_t sigs;
	uint64_t n;
	int sfd, sig = 0;

	sb_log_init("mcp", SB_LOG_INFO, SB_LOG_TIMESTAMPS | SB_LOG_LEVELS);
	if (argc > 1 && strcmp(argv[1], "--version") == 0) {
		printf("ssebench-mcp %s\n", PACKAGE_VERSION);
		return SB_EXIT_OK;
	}
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		usage(stdout);
		return SB_EXIT_OK;
	}
	if (argc > 1) {
		usage(stderr);
		return SB_EXIT_USAGE;
	}
	/* A bad level stops the server (upstream §6): the entrypoint then fails the run. */
	v = secure_getenv("SSE_DIFFICULTY");
	cfg.level = 2;
	if (v != NULL && *v != '\0') {
		if (sb_parse_u64(v, 0, 4, &n, &err) < 0) {
			sb_log(SB_LOG_ERROR, "SSE_DIFFICULTY='%s': %s", v, sb_error_message(err));
			sb_error_release(&err);
			return SB_EXIT_USAGE;
		}
		cfg.level = (unsigned)n;
	}
	cfg.daemon_socket = secure_getenv("SSE_DAEMON_SOCKET");
	if (cfg.daemon_socket == NULL || cfg.daemon_socket[0] != '/') {
		sb_log(SB_LOG_ERROR, "SSE_DAEMON_SOCKET must name the daemon's agent socket");
		return SB_EXIT_USAGE;
	}
	cfg.log_dir = secure_getenv("MCP_LOG_DIR");
	if (cfg.log_dir == NULL || cfg.log_dir[0] != '/')
		cfg.log_dir = "/tmp/mcp/logs";
	cfg.address = secure_getenv("SSE_MCP_ADDRESS");
	if (cfg.address == NULL || *cfg.address == '\0')
		cfg.address = "127.0.0.1";
	cfg.port = MCP_PORT_DEFAULT;
	v = secure_getenv("SSE_MCP_PORT");
	if (v != NULL && *v != '\0') {
		if (sb_parse_u64(v, 1, 65535, &n, &err) < 0) {
			sb_log(SB_LOG_ERROR, "SSE_MCP_PORT='%s': %s", v, sb_error_message(err));
			sb_error_release(&err);
			return SB_EXIT_USAGE;
		}
		cfg.port = (unsigned)n;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)cfg.port);
	if (inet_pton(AF_INET, cfg.address, &sa.sin_addr) != 1) {
		sb_log(SB_LOG_ERROR, "SSE_MCP_ADDRESS='%s' is not an IPv4 address", cfg.address);
		return SB_EXIT_USAGE;
	}
	if (sb_http_init(&err) < 0) {
		sb_log(SB_LOG_ERROR, "%s", sb_error_message(err));
		sb_error_release(&err);
		return SB_EXIT_FAILURE;
	}
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
		MHD_USE_POLL | MHD_USE_ERROR_LOG,
	    (uint16_t)cfg.port, NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR, &sa,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONNECTION_LIMIT, MHD_OPTION_CONNECTION_TIMEOUT,
	    (unsigned)CONNECTION_IDLE_S, MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
	    MHD_OPTION_END);
	if (d == NULL || sfd < 0) {
		sb_log(SB_LOG_ERROR, "cannot listen on %s:%u", cfg.address, cfg.port);
		return SB_EXIT_FAILURE;
	}
	sb_log(SB_LOG_INFO, "listening on http://%s:%u/mcp, difficulty %u, daemon '%s'",
	    cfg.address, cfg.port, cfg.level, cfg.daemon_socket);
	for (;;) {
		struct signalfd_siginfo si;

		if (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si) && si.ssi_signo != SIGHUP) {
			sig = (int)si.ssi_signo;
			break;
		}
	}
	sb_log(SB_LOG_INFO, "signal %d: stopping", sig);
	MHD_stop_daemon(d);
	return SB_EXIT_OK;
}

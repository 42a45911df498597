/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c: ssebench-mcp, the MCP server of a run (docs/mcp.md): Streamable HTTP at
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

struct req {
	struct sb_buf body;
	bool too_big;
};

static struct mcp_config cfg;

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

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
    const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
	struct req *rq = *con_cls;
	struct mcp_reply reply;
	enum MHD_Result ret;

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
	mcp_serve(&cfg,
	    &(struct mcp_request){ .url = url, .method = method,
		.origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin"),
		.protocol_version =
		    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "MCP-Protocol-Version"),
		.body = rq->body.s, .body_len = rq->body.len, .too_big = rq->too_big },
	    &reply);
	ret = respond(conn, reply.status, reply.body, reply.session);
	mcp_reply_release(&reply);
	return ret;
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
	/* A bad level stops the server (docs/upstream.md, "The MCP server"): the entrypoint then
	 * fails the run. */
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

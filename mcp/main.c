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
#include "sb/httpd.h"
#include "sb/json.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/startup.h"

#include "mcp.h"

#define CONNECTION_LIMIT  64
#define CONNECTION_IDLE_S 3600 /* a test_patch call may take as long as a build */

static struct mcp_config cfg;

/* A reply: JSON when there is a body, never cached; 405 names the one method there is. */
static enum MHD_Result
respond(struct MHD_Connection *conn, unsigned status, const char *body, const char *session)
{
	size_t len = body != NULL ? strlen(body) : 0;
	struct sb_httpd_header h[2];
	size_t n = 0;

	if (session != NULL)
		h[n++] = (struct sb_httpd_header){ "Mcp-Session-Id", session };
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		h[n++] = (struct sb_httpd_header){ "Allow", "POST" };
	return sb_httpd_respond(conn, status, body, len, len > 0 ? "application/json" : NULL, h, n);
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
    const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
	struct sb_httpd_body *rq;
	struct mcp_reply reply;
	enum MHD_Result ret;

	(void)cls;
	(void)version;
	if (!sb_httpd_body_collect(conn, con_cls, MCP_BODY_MAX, 0, upload, upload_size, &rq))
		return MHD_YES;
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

/*
 * A number from the environment variable name, within [min, max]; *ret keeps its default when
 * the variable is unset or empty. Returns -1, logged, for anything else.
 */
static int
env_number(const char *name, uint64_t min, uint64_t max, unsigned *ret)
{
	const char *v = secure_getenv(name);
	struct sb_error *err = NULL;
	uint64_t n;

	if (v == NULL || *v == '\0')
		return 0;
	if (sb_parse_u64(v, min, max, &n, &err) < 0) {
		sb_log(SB_LOG_ERROR, "%s='%s': %s", name, v, sb_error_message(err));
		sb_error_release(&err);
		return -1;
	}
	*ret = (unsigned)n;
	return 0;
}

/* cfg and the address to listen on, from the environment (usage()). Returns -1, logged. */
static int
read_config(struct sockaddr_in *sa)
{
	/* A bad level stops the server (docs/upstream.md, "The MCP server"): the entrypoint then
	 * fails the run. */
	cfg.level = 2;
	if (env_number("SSE_DIFFICULTY", 0, 4, &cfg.level) < 0)
		return -1;
	cfg.daemon_socket = secure_getenv("SSE_DAEMON_SOCKET");
	if (cfg.daemon_socket == NULL || cfg.daemon_socket[0] != '/') {
		sb_log(SB_LOG_ERROR, "SSE_DAEMON_SOCKET must name the daemon's agent socket");
		return -1;
	}
	cfg.log_dir = secure_getenv("MCP_LOG_DIR");
	if (cfg.log_dir == NULL || cfg.log_dir[0] != '/')
		cfg.log_dir = "/tmp/mcp/logs";
	cfg.address = secure_getenv("SSE_MCP_ADDRESS");
	if (cfg.address == NULL || *cfg.address == '\0')
		cfg.address = "127.0.0.1";
	cfg.port = MCP_PORT_DEFAULT;
	if (env_number("SSE_MCP_PORT", 1, 65535, &cfg.port) < 0)
		return -1;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)cfg.port);
	if (inet_pton(AF_INET, cfg.address, &sa->sin_addr) != 1) {
		sb_log(SB_LOG_ERROR, "SSE_MCP_ADDRESS='%s' is not an IPv4 address", cfg.address);
		return -1;
	}
	return 0;
}

/* Serve on sa until SIGTERM or SIGINT (SIGHUP is ignored). Returns the exit status. */
static int
serve(const struct sockaddr_in *sa)
{
	struct MHD_Daemon *d;
	int sfd, sig = 0;

	sfd = sb_httpd_signalfd();
	d = sb_httpd_start(&(struct sb_httpd_conf){ .listen_fd = -1,
	    .addr = (const struct sockaddr *)sa, .connection_limit = CONNECTION_LIMIT,
	    .idle_s = CONNECTION_IDLE_S, .handler = on_request });
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

int
main(int argc, char **argv)
{
	struct sb_error *err = NULL;
	struct sockaddr_in sa;
	int rc;

	sb_log_init("mcp", SB_LOG_INFO, SB_LOG_TIMESTAMPS | SB_LOG_LEVELS);
	rc = sb_startup_options(argc, argv, "ssebench-mcp", usage, NULL,
	    SB_STARTUP_OPTIONS_SHORT_HELP);
	if (rc >= 0)
		return rc;
	if (read_config(&sa) < 0)
		return SB_EXIT_USAGE;
	if (sb_http_init(&err) < 0) {
		sb_log(SB_LOG_ERROR, "%s", sb_error_message(err));
		sb_error_release(&err);
		return SB_EXIT_FAILURE;
	}
	return serve(&sa);
}

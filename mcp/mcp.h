/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mcp.h: ssebench-mcp, the MCP server a run's agent checks its work with (docs/mcp.md;
 * upstream's: docs/upstream.md, "The MCP server"). It speaks MCP over Streamable HTTP at /mcp and
 * offers one tool, test_patch, which runs the checks the difficulty level allows through the
 * daemon's agent-facing socket. It is a client of that socket and nothing more: the daemon's gate
 * applies to it as to any other client, so a bug here can never hand out a check the level
 * withholds.
 */
#ifndef SB_MCP_H
#define SB_MCP_H

#include <jansson.h>

#include "sb/error.h"
#include "sb/http.h"
#include "sb/sdk.h"

#define MCP_PORT_DEFAULT      3000
#define MCP_BODY_MAX	      (1024 * 1024) /* one JSON-RPC message */
#define MCP_LOG_WORDS_MAX     10000	    /* a log longer than this goes to a file */
#define MCP_LOG_LINES_TAIL    100

/*
 * How test_patch reaches the daemon: NULL in mcp_config means its agent socket; a fuzz
 * target (tests/fuzz/fuzz-mcp.c) hands in replies of its own through the same parsing.
 */
struct mcp_daemon_ops {
	json_t *(*get)(void *arg, const char *path); /* a GET's JSON (new reference), or NULL */
	int (*bencher)(void *arg, const char *action, const char *poc, struct sb_script_result *r);
	void *arg;
};

struct mcp_config {
	unsigned level;		  /* SSE_DIFFICULTY, 0..4 */
	const char *daemon_socket; /* SSE_DAEMON_SOCKET */
	const char *log_dir;	  /* MCP_LOG_DIR: where long logs go */
	const char *address;	  /* SSE_MCP_ADDRESS: 127.0.0.1 */
	unsigned port;		  /* SSE_MCP_PORT */
	const struct mcp_daemon_ops *daemon; /* NULL: daemon_socket */
};

/* One HTTP request to the server, as received. */
struct mcp_request {
	const char *url, *method;
	const char *origin;	      /* the Origin header, or NULL */
	const char *protocol_version; /* MCP-Protocol-Version, or NULL */
	const char *body;	      /* NUL-terminated, body_len bytes before the NUL */
	size_t body_len;
	bool too_big; /* the body passed MCP_BODY_MAX (and was cut) */
};

/* The answer: an HTTP status, a JSON body (NULL: none) and a new session id (or NULL). */
struct mcp_reply {
	unsigned status;
	char *body, *session;
};

/* Answer one request (rpc.c): the JSON-RPC 2.0 methods of MCP, test_patch among them. */
void mcp_serve(const struct mcp_config *c, const struct mcp_request *rq, struct mcp_reply *out);
void mcp_reply_release(struct mcp_reply *r);

/* An Origin header (or NULL) a request may carry: this machine only (DNS rebinding). */
bool mcp_origin_ok(const char *origin);

/*
 * test_patch: run the allowed checks through the daemon and return the text the agent
 * reads (never NULL; free it). A daemon that cannot be reached, or refuses a check, gives
 * the fixed "internal testing failure" text: the agent's patch is not to blame.
 */
char *mcp_test_patch(const struct mcp_config *c);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mcp.h: ssebench-mcp, the MCP server a run's agent checks its work with (upstream-reference
 * §6). It speaks MCP over Streamable HTTP at /mcp and offers one tool, test_patch, which
 * runs the checks the difficulty level allows through the daemon's agent-facing socket. It
 * is a client of that socket and nothing more: the daemon's gate applies to it as to any
 * other client, so a bug here can never hand out a check the level withholds.
 */
#ifndef SB_MCP_H
#define SB_MCP_H

#include <jansson.h>

#include "sb/error.h"
#include "sb/http.h"

#define MCP_PORT_DEFAULT      3000
#define MCP_BODY_MAX	      (1024 * 1024) /* one JSON-RPC message */
#define MCP_LOG_WORDS_MAX     10000	    /* a log longer than this goes to a file */
#define MCP_LOG_LINES_TAIL    100

struct mcp_config {
	unsigned level;		  /* SSE_DIFFICULTY, 0..4 */
	const char *daemon_socket; /* SSE_DAEMON_SOCKET */
	const char *log_dir;	  /* MCP_LOG_DIR: where long logs go */
	const char *address;	  /* SSE_MCP_ADDRESS: 127.0.0.1 */
	unsigned port;		  /* SSE_MCP_PORT */
};

/*
 * test_patch: run the allowed checks through the daemon and return the text the agent
 * reads (never NULL; free it). A daemon that cannot be reached, or refuses a check, gives
 * the fixed "internal testing failure" text: the agent's patch is not to blame.
 */
char *mcp_test_patch(const struct mcp_config *c);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sdk.h: the client side of the daemon's agent-facing API (docs/upstream.md, "The daemon's
 * API" and "The SDK and the task prompt"), for programs that run next to the agent: the `sse`
 * command, the MCP server, agent wrappers.
 *
 * A client talks to the agent socket (SSE_DAEMON_SOCKET) or, when there is none, to the
 * daemon's TCP port (SSE_AGENT_DOCKER, "host:port", with SSE_DAEMON_TOKEN). Every call has a
 * timeout (upstream's SDK had none: docs/upstream.md, "Known weaknesses and our answers", 19)
 * and a cap on the reply. A status other than 2xx is an error carrying the daemon's own fixed
 * error text: EACCES for 403 (the difficulty gate, or a tool after the agent phase), ENOENT
 * for 404, EIO otherwise.
 */
#ifndef SB_SDK_H
#define SB_SDK_H

#include <jansson.h>

#include "sb/common.h"
#include "sb/error.h"
#include "sb/http.h"

#define SB_SDK_QUICK_TIMEOUT_MS	  (30 * 1000)	  /* /version, /project, /diff, ... */
#define SB_SDK_BASH_MARGIN_MS	  (60 * 1000)	  /* added to a bash call's own timeout */
#define SB_SDK_BENCHER_TIMEOUT_MS (2 * 3600 * 1000) /* a build or test script (daemon: 1 h) */

struct sb_sdk {
	char *socket;	/* agent socket path, or NULL for TCP */
	char *base_url; /* "http://localhost" for a socket, "http://host:port" for TCP */
	char *token;	/* TCP only */
	long timeout_ms; /* quick calls; 0: SB_SDK_QUICK_TIMEOUT_MS */
};

#define SB_SDK_INIT { NULL, NULL, NULL, 0 }

/* What a script or bash call returned (daemon "ScriptResult"). */
struct sb_script_result {
	int code;
	char *out, *err; /* stdout and stderr, never NULL after success */
	bool timed_out, truncated;
	long long duration_ms;
};

/* A client of the agent socket at path. */
void sb_sdk_init_socket(struct sb_sdk *s, const char *path);

/*
 * A client from the environment: SSE_DAEMON_SOCKET, else SSE_AGENT_DOCKER ("host:port")
 * with SSE_DAEMON_TOKEN. Fails with ENOENT when neither is set.
 */
int sb_sdk_init_env(struct sb_sdk *s, struct sb_error **err);

void sb_sdk_release(struct sb_sdk *s);

/*
 * GET or POST path (body may be NULL). timeout_ms 0 means the client's quick timeout. On a
 * 2xx reply *ret (may be NULL) gets the JSON document (new reference; JSON null when the
 * body is not JSON). Anything else is an error, as described above.
 */
int sb_sdk_call(const struct sb_sdk *s, const char *method, const char *path, const json_t *body,
    long timeout_ms, json_t **ret, struct sb_error **err);

/* GET /version: the daemon's version (malloc'd). */
int sb_sdk_version(const struct sb_sdk *s, char **ret, struct sb_error **err);

/* POST /tool/bash: command runs in a fresh bash as the agent; timeout_s 0: the daemon's. */
int sb_sdk_bash(const struct sb_sdk *s, const char *command, unsigned timeout_s,
    struct sb_script_result *ret, struct sb_error **err);

/*
 * POST /tool/bencher?action=A with grading false: "build", "run_poc" (poc: one of the
 * task's PoCs), "function_test", "intent_test".
 */
int sb_sdk_bencher(const struct sb_sdk *s, const char *action, const char *poc,
    struct sb_script_result *ret, struct sb_error **err);

/* A ScriptResult reply of the daemon (JSON) into *ret; what names the call in errors. */
int sb_sdk_script_result(const json_t *j, const char *what, struct sb_script_result *ret,
    struct sb_error **err);

void sb_script_result_release(struct sb_script_result *r);

#endif

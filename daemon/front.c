/* SPDX-License-Identifier: Apache-2.0 */
/*
 * front.c: what a front does with one request before anything leaves it (daemon.h:
 * front_decide), apart from libmicrohttpd (server.c), so that a fuzz target can drive it
 * with any request at all (tests/fuzz/fuzz-front.c).
 */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "sb/json.h"
#include "sb/mem.h"

#include "daemon.h"

enum route_flags {
	ROUTE_ADMIN_ONLY = 1 << 0, /* 403 on agent-facing listeners */
	ROUTE_BODY = 1 << 1,	   /* takes a JSON body (POST) */
	ROUTE_NO_TOKEN = 1 << 2,   /* answered on TCP without the token */
};

struct route {
	const char *method;
	const char *path;
	enum front_local local; /* answered here, or... */
	enum dreq_type type;	/* ...forwarded to the helper */
	unsigned flags;
};

static const struct route routes[] = {
	{ "GET", "/version", FRONT_LOCAL_VERSION, 0, ROUTE_NO_TOKEN },
	{ "GET", "/project", FRONT_LOCAL_PROJECT, 0, 0 },
	{ "GET", "/capabilities", FRONT_LOCAL_CAPABILITIES, 0, 0 },
	{ "POST", "/tool/bash", FRONT_LOCAL_NONE, DREQ_BASH, ROUTE_BODY },
	{ "POST", "/tool/bencher", FRONT_LOCAL_NONE, DREQ_BENCHER, ROUTE_BODY },
	{ "GET", "/diff", FRONT_LOCAL_NONE, DREQ_DIFF, 0 },
	{ "GET", "/files", FRONT_LOCAL_NONE, DREQ_FILES, 0 },
	{ "GET", "/agent/dialog", FRONT_LOCAL_NONE, DREQ_DIALOG, 0 },
	{ "GET", "/result", FRONT_LOCAL_NONE, DREQ_RESULT, 0 },
	{ "GET", "/final_diff", FRONT_LOCAL_NONE, DREQ_FINAL_DIFF, 0 },
	{ "POST", "/prepare_grading", FRONT_LOCAL_NONE, DREQ_PREPARE_GRADING,
	    ROUTE_ADMIN_ONLY | ROUTE_BODY },
	{ "POST", "/admin/agent_exited", FRONT_LOCAL_NONE, DREQ_AGENT_EXITED,
	    ROUTE_ADMIN_ONLY | ROUTE_BODY },
	{ "GET", "/reference/patch", FRONT_LOCAL_NONE, DREQ_REFERENCE_PATCH, ROUTE_ADMIN_ONLY },
};

/* Compare without an early exit, so the time taken says nothing about the token. */
static bool
token_equal(const char *given, const char *want)
{
	size_t lg = strlen(given), lw = strlen(want);
	unsigned char diff = (unsigned char)(lg != lw);

	for (size_t i = 0; i < lw; i++)
		diff |= (unsigned char)want[i] ^ (unsigned char)(i < lg ? given[i] : 0);
	return diff == 0;
}

/* The run token from "Authorization: Bearer T" or "X-SSE-Token: T". */
static bool
token_ok(const char *token, const struct front_request *rq)
{
	/* No token configured, or an empty one: nothing can match it. */
	if (token == NULL || *token == '\0')
		return false;
	if (rq->authorization != NULL && strncasecmp(rq->authorization, "Bearer ", 7) == 0)
		return token_equal(rq->authorization + 7, token);
	if (rq->x_sse_token != NULL)
		return token_equal(rq->x_sse_token, token);
	return false;
}

static void
refuse(struct front_decision *out, unsigned status, const char *error)
{
	out->status = status;
	out->error = error;
}

void
front_decide(const char *token, const struct sb_task_config *task, const char *bench_path,
    const struct front_request *rq, struct front_decision *out)
{
	const struct route *rt = NULL;
	bool path_known = false, agent = rq->kind != LISTEN_ADMIN;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < SB_ARRAY_SIZE(routes); i++) {
		if (strcmp(routes[i].path, rq->url) != 0)
			continue;
		path_known = true;
		if (strcmp(routes[i].method, rq->method) == 0)
			rt = &routes[i];
	}
	if (!path_known)
		return refuse(out, 404, "no such endpoint");
	if (rt == NULL) {
		/* 405 with the methods the path has, for the Allow header. */
		for (size_t i = 0; i < SB_ARRAY_SIZE(routes); i++) {
			char *a;

			if (strcmp(routes[i].path, rq->url) != 0)
				continue;
			a = out->allow ? sb_xasprintf("%s, %s", out->allow, routes[i].method)
				       : sb_xstrdup(routes[i].method);
			free(out->allow);
			out->allow = a;
		}
		return refuse(out, 405, "method not allowed");
	}
	/* Authentication before anything else is looked at. */
	if (rq->kind == LISTEN_AGENT_TCP && !(rt->flags & ROUTE_NO_TOKEN) && !token_ok(token, rq))
		return refuse(out, 401,
		    "this listener needs the run's token (Authorization: Bearer ...)");
	if (rq->kind == LISTEN_ADMIN && !rq->peer_root)
		return refuse(out, 403, "the admin socket serves root only");
	if (agent && (rt->flags & ROUTE_ADMIN_ONLY))
		return refuse(out, 403, "endpoint is only available on the admin socket");
	if (rq->too_big)
		return refuse(out, 413, "request body too large");
	if (rt->local != FRONT_LOCAL_NONE) {
		out->status = 200;
		out->local = rt->local;
		return;
	}
	out->request = sb_xcalloc(1, sizeof(*out->request));
	if (rq->query_bad ||
	    dreq_from_client(task, bench_path, rt->type, rq->action, rq->since,
		(rt->flags & ROUTE_BODY) ? rq->body : NULL, rq->body_len, out->request) < 0) {
		dreq_release(out->request);
		free(out->request);
		out->request = NULL;
		return refuse(out, 400,
		    rt->type == DREQ_BENCHER ? "malformed request: needs ?action= and a JSON object body"
					     : "malformed request body");
	}
	out->type = rt->type;
}

void
front_decision_release(struct front_decision *d)
{
	free(d->allow);
	if (d->request != NULL)
		dreq_release(d->request);
	free(d->request);
	memset(d, 0, sizeof(*d));
}

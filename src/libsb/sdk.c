/* SPDX-License-Identifier: Apache-2.0 */
/* sdk.c: the agent-facing daemon API from the client's side (see sdk.h). */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sb/buf.h"
#include "sb/json.h"
#include "sb/mem.h"
#include "sb/sdk.h"

void
sb_sdk_init_socket(struct sb_sdk *s, const char *path)
{
	memset(s, 0, sizeof(*s));
	s->socket = sb_xstrdup(path);
	s->base_url = sb_xstrdup("http://localhost");
}

int
sb_sdk_init_env(struct sb_sdk *s, struct sb_error **err)
{
	const char *sock = secure_getenv("SSE_DAEMON_SOCKET");
	const char *tcp = secure_getenv("SSE_AGENT_DOCKER");
	const char *token = secure_getenv("SSE_DAEMON_TOKEN");

	if (sock != NULL && *sock != '\0') {
		sb_sdk_init_socket(s, sock);
		return 0;
	}
	if (tcp == NULL || *tcp == '\0')
		return sb_error_set(err, ENOENT,
		    "no daemon to talk to: set SSE_DAEMON_SOCKET (or SSE_AGENT_DOCKER=host:port)");
	/* host:port only: a URL here could send the token to another scheme or path. */
	if (strchr(tcp, '/') != NULL || strchr(tcp, ':') == NULL || strchr(tcp, '@') != NULL)
		return sb_error_set(err, EINVAL, "SSE_AGENT_DOCKER must be host:port");
	memset(s, 0, sizeof(*s));
	s->base_url = sb_xasprintf("http://%s", tcp);
	s->token = token != NULL && *token != '\0' ? sb_xstrdup(token) : NULL;
	return 0;
}

void
sb_sdk_release(struct sb_sdk *s)
{
	free(s->socket);
	free(s->base_url);
	free(s->token);
	memset(s, 0, sizeof(*s));
}

int
sb_sdk_call(const struct sb_sdk *s, const char *method, const char *path, const json_t *body,
    long timeout_ms, json_t **ret, struct sb_error **err)
{
	struct sb_http_target t = { .unix_socket = s->socket, .base_url = s->base_url,
		.token = s->token,
		.timeout_ms = timeout_ms > 0 ? timeout_ms
			: s->timeout_ms > 0  ? s->timeout_ms
					     : SB_SDK_QUICK_TIMEOUT_MS };
	json_t *reply = NULL;
	long status = 0;

	if (sb_http_json(&t, method, path, body, &status, &reply, err) < 0)
		return sb_error_prefix(err, "daemon%s%s", s->socket ? " at " : "",
		    s->socket ? s->socket : "");
	if (status < 200 || status > 299) {
		/* The daemon's error texts are fixed strings; escape them all the same. */
		const char *why = json_string_value(json_object_get(reply, "error"));
		_cleanup_free_ char *safe = why != NULL ? sb_escape(why) : NULL;
		int code = status == 403 ? EACCES : status == 404 ? ENOENT : EIO;

		json_decref(reply);
		return sb_error_set(err, code, "%s %s: HTTP %ld%s%s", method, path, status,
		    safe ? ": " : "", safe ? safe : "");
	}
	if (ret != NULL)
		*ret = reply != NULL ? reply : json_null();
	else
		json_decref(reply);
	return 0;
}

int
sb_sdk_version(const struct sb_sdk *s, char **ret, struct sb_error **err)
{
	json_t *j = NULL;
	const char *v;

	if (sb_sdk_call(s, "GET", "/version", NULL, 0, &j, err) < 0)
		return -1;
	v = json_string_value(json_object_get(j, "version"));
	if (v == NULL) {
		json_decref(j);
		return sb_error_set(err, EPROTO, "GET /version: no version in the reply");
	}
	*ret = sb_xstrdup(v);
	json_decref(j);
	return 0;
}

int
sb_sdk_script_result(const json_t *j, const char *what, struct sb_script_result *ret,
    struct sb_error **err)
{
	const json_t *code = json_object_get(j, "code");
	struct sb_script_result r;

	if (!json_is_integer(code))
		return sb_error_set(err, EPROTO, "%s: no exit code in the reply", what);
	/* Cut to an int, 4294967296 would read as 0: a pass. */
	if (json_integer_value(code) < INT_MIN || json_integer_value(code) > INT_MAX)
		return sb_error_set(err, EPROTO, "%s: the exit code in the reply is out of range",
		    what);
	memset(&r, 0, sizeof(r));
	r.code = (int)json_integer_value(code);
	r.out = sb_xstrdup(json_string_value(json_object_get(j, "stdout")) ?: "");
	r.err = sb_xstrdup(json_string_value(json_object_get(j, "stderr")) ?: "");
	r.timed_out = json_is_true(json_object_get(j, "timed_out"));
	r.truncated = json_is_true(json_object_get(j, "truncated"));
	r.duration_ms = json_integer_value(json_object_get(j, "duration_ms"));
	*ret = r;
	return 0;
}

int
sb_sdk_bash(const struct sb_sdk *s, const char *command, unsigned timeout_s,
    struct sb_script_result *ret, struct sb_error **err)
{
	json_t *body = json_pack("{s:s}", "command", command), *j = NULL;
	/* The daemon enforces the call's own limit; ours only catches a daemon that hangs. */
	long ms = (long)(timeout_s > 0 ? timeout_s : 3600) * 1000 + SB_SDK_BASH_MARGIN_MS;
	int r;

	if (timeout_s > 0)
		json_object_set_new(body, "timeout", json_integer(timeout_s));
	r = sb_sdk_call(s, "POST", "/tool/bash?action=execute", body, ms, &j, err);
	json_decref(body);
	if (r == 0)
		r = sb_sdk_script_result(j, "bash", ret, err);
	json_decref(j);
	return r;
}

int
sb_sdk_bencher(const struct sb_sdk *s, const char *action, const char *poc,
    struct sb_script_result *ret, struct sb_error **err)
{
	_cleanup_free_ char *path = sb_xasprintf("/tool/bencher?action=%s", action);
	json_t *body = poc != NULL ? json_pack("{s:b, s:s}", "grading", 0, "poc", poc)
				   : json_pack("{s:b}", "grading", 0);
	json_t *j = NULL;
	int r;

	/* The action goes into the query string: only the daemon's own action names. */
	if (action[strspn(action, "abcdefghijklmnopqrstuvwxyz_")] != '\0' || *action == '\0') {
		json_decref(body);
		return sb_error_set(err, EINVAL, "'%s' is not a bencher action", action);
	}
	r = sb_sdk_call(s, "POST", path, body, SB_SDK_BENCHER_TIMEOUT_MS, &j, err);
	json_decref(body);
	if (r == 0)
		r = sb_sdk_script_result(j, action, ret, err);
	json_decref(j);
	return r;
}

void
sb_script_result_release(struct sb_script_result *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

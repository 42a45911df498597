/* SPDX-License-Identifier: Apache-2.0 */
/*
 * server.c: the HTTP fronts (libmicrohttpd), shared by the agent front and the admin front.
 *
 * A front owns no state: it authenticates the connection (the run's token on TCP, uid 0 on
 * the admin socket), routes the request, bounds and checks its body, and forwards anything
 * beyond the static public view to the helper. Error replies are fixed texts; nothing a
 * client sent is echoed back (docs/design.md, "Parsing untrusted input").
 */
#include "config.h"

#include <microhttpd.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include "sb/buf.h"
#include "sb/httpd.h"
#include "sb/json.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/parse.h"

#include "daemon.h"

#define BODY_MAX	  (64 * 1024) /* request bodies from clients */
#define CONNECTION_LIMIT  128 /* per listener */
/*
 * TCP: one peer cannot hold every slot. Not 64: libmicrohttpd counts a connection until its
 * thread has cleaned up, after the client has seen it close, so a client that keeps 64
 * going (bench/daemon-load.sh) reconnected past a limit of 64 and was closed unanswered,
 * 1 to 4 times in ~27,000 requests.
 */
#define PER_IP_LIMIT	  96
#define CONNECTION_IDLE_S 120
#define CONNECTION_MEMORY (64 * 1024)

struct front {
	const struct dconf *c;
	int channel;
};

struct listener_ctx {
	struct front *f;
	enum listener_kind kind;
};

/* A reply: always JSON, never cached (sb/httpd.h); allow (or NULL) for a 405. */
static enum MHD_Result
respond(struct MHD_Connection *conn, unsigned status, const char *body, size_t len,
    const char *allow)
{
	const struct sb_httpd_header h = { "Allow", allow };

	return sb_httpd_respond(conn, status, body, len, "application/json", &h, allow != NULL);
}

static enum MHD_Result
respond_json(struct MHD_Connection *conn, unsigned status, const json_t *j)
{
	_cleanup_free_ char *s = sb_json_dumps(j, JSON_COMPACT);

	return respond(conn, status, s, strlen(s), NULL);
}

/* {"error": msg}: msg is always one of our fixed texts. */
static enum MHD_Result
respond_error(struct MHD_Connection *conn, unsigned status, const char *msg)
{
	json_auto_t *j = json_pack("{s:s}", "error", msg);

	return respond_json(conn, status, j);
}

/*
 * A query value, decoded. One that decodes to a NUL byte ("action=build%00run_poc") is
 * refused rather than read up to the NUL: what a request means must not depend on which
 * end of such a value a reader stops at.
 */
static const char *
query_value(struct MHD_Connection *conn, const char *key, bool *bad)
{
	const char *v = NULL;
	size_t n = 0;

	if (MHD_lookup_connection_value_n(conn, MHD_GET_ARGUMENT_KIND, key, strlen(key), &v, &n) !=
	    MHD_YES)
		return NULL;
	if (v != NULL && strlen(v) != n)
		*bad = true;
	return v;
}

/* The admin socket is 0600 root already; SO_PEERCRED checks each client anyway. */
static bool
peer_is_root(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (ci == NULL || getsockopt(ci->connect_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return false;
	return cred.uid == 0;
}

/* What the front decides on: the request as libmicrohttpd parsed it. */
static void
front_request_of(const struct listener_ctx *lc, struct MHD_Connection *conn, const char *url,
    const char *method, const struct sb_httpd_body *rq, struct front_request *fr)
{
	*fr = (struct front_request){ .kind = lc->kind, .method = method, .url = url,
		.body = rq->body.s, .body_len = rq->body.len, .too_big = rq->too_big };
	fr->authorization = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	fr->x_sse_token = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-SSE-Token");
	fr->action = query_value(conn, "action", &fr->query_bad);
	fr->since = query_value(conn, "since", &fr->query_bad);
	/* Asked of the kernel only where it decides anything. */
	fr->peer_root = lc->kind == LISTEN_ADMIN && peer_is_root(conn);
}

/*
 * A request the front refuses on an agent-facing listener (the reference patch, an admin
 * endpoint, a bad token) is evidence for the answer-seeking scan, as the helper's refusals
 * are (sb/scan.h): logged in the helper's form, the first 100 and then one in a thousand
 * (the agent can ask as fast as it likes). The path is the agent's text: escaped and cut.
 */
static void
log_refusal(enum listener_kind kind, const char *url, const char *method,
    const struct front_decision *d)
{
	static uint64_t refused;
	uint64_t n;

	if (kind == LISTEN_ADMIN ||
	    (d->status != MHD_HTTP_FORBIDDEN && d->status != MHD_HTTP_UNAUTHORIZED))
		return;
	n = __atomic_add_fetch(&refused, 1, __ATOMIC_RELAXED);
	if (n <= 100 || n % 1000 == 0) {
		_cleanup_free_ char *cut = sb_xstrndup(url, 200);
		_cleanup_free_ char *mcut = sb_xstrndup(method, 16);
		_cleanup_free_ char *path = sb_escape(cut), *verb = sb_escape(mcut);

		sb_log(SB_LOG_INFO, "agent %s %s: %u %s (refusal %llu, front)", verb, path,
		    d->status, d->error, (unsigned long long)n);
	}
}

static enum MHD_Result
respond_refusal(struct MHD_Connection *conn, const struct front_decision *d)
{
	if (d->status == MHD_HTTP_METHOD_NOT_ALLOWED) {
		const char *msg = "{\"error\":\"method not allowed\"}";

		return respond(conn, d->status, msg, strlen(msg), d->allow);
	}
	return respond_error(conn, d->status, d->error);
}

/* The public views, answered by the front itself. */
static enum MHD_Result
respond_local(struct MHD_Connection *conn, const struct dconf *c, enum front_local local)
{
	switch (local) {
	case FRONT_LOCAL_VERSION: {
		/* The level in force, so the entrypoint can check the gate it started. */
		json_auto_t *j = json_pack("{s:s, s:i}", "version", PACKAGE_VERSION, "difficulty",
		    (int)c->difficulty);

		return respond_json(conn, MHD_HTTP_OK, j);
	}
	case FRONT_LOCAL_PROJECT:
		return respond_json(conn, MHD_HTTP_OK, c->project_view);
	case FRONT_LOCAL_CAPABILITIES:
		return respond_json(conn, MHD_HTTP_OK, c->capabilities);
	case FRONT_LOCAL_NONE:
		break;
	}
	return respond_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "no such view");
}

/* The typed request to the helper, and its answer to the client. */
static enum MHD_Result
forward(struct listener_ctx *lc, struct MHD_Connection *conn, const char *url,
    const char *method, const struct front_decision *d)
{
	_cleanup_free_ char *reply = NULL;
	struct sb_error *err = NULL;
	size_t blen, len;
	_cleanup_free_ char *body = dreq_encode(d->request, &blen);
	unsigned status;

	if (dproto_call(lc->f->channel, d->type, body, blen, &status, &reply, &len, &err) < 0) {
		sb_log(SB_LOG_WARN, "%s %s: %s", method, url, sb_error_message(err));
		sb_error_release(&err);
		return respond_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
		    "the daemon's helper did not answer");
	}
	return respond(conn, status, reply, len, NULL);
}

static enum MHD_Result
dispatch(struct listener_ctx *lc, struct MHD_Connection *conn, const char *url,
    const char *method, struct sb_httpd_body *rq)
{
	const struct dconf *c = lc->f->c;
	struct front_request fr;
	struct front_decision d;
	enum MHD_Result ret;

	front_request_of(lc, conn, url, method, rq, &fr);
	front_decide(c->token, c->task, c->bench_path, &fr, &d);
	if (d.error != NULL) {
		log_refusal(lc->kind, url, method, &d);
		ret = respond_refusal(conn, &d);
	} else if (d.local != FRONT_LOCAL_NONE) {
		ret = respond_local(conn, c, d.local);
	} else {
		ret = forward(lc, conn, url, method, &d);
	}
	front_decision_release(&d);
	return ret;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
    const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct sb_httpd_body *rq;

	(void)version;
	if (!sb_httpd_body_collect(conn, con_cls, BODY_MAX, SB_HTTPD_BODY_CHECK_LENGTH, upload_data,
		upload_data_size, &rq))
		return MHD_YES;
	return dispatch(cls, conn, url, method, rq);
}

int
front_run(const struct dconf *c, const struct front_listener *ls, size_t n, int channel)
{
	struct MHD_Daemon *d[8] = { NULL };
	struct listener_ctx lc[8];
	struct front f = { c, channel };
	int sfd, rc = 0;

	if (n > SB_ARRAY_SIZE(d))
		return 1;
	sfd = sb_httpd_signalfd();
	for (size_t i = 0; i < n; i++) {
		lc[i].f = &f;
		lc[i].kind = ls[i].kind;
		/* The per-IP limit only means something on TCP. */
		d[i] = sb_httpd_start(&(struct sb_httpd_conf){ .listen_fd = ls[i].fd,
		    .connection_limit = CONNECTION_LIMIT,
		    .per_ip_limit = ls[i].kind == LISTEN_AGENT_TCP ? PER_IP_LIMIT : 0,
		    .idle_s = CONNECTION_IDLE_S, .memory_limit = CONNECTION_MEMORY,
		    .handler = on_request, .handler_cls = &lc[i], .log_debug = true });
		if (d[i] == NULL) {
			sb_log(SB_LOG_ERROR, "cannot start the HTTP server on listener %zu", i);
			rc = 1;
			goto out;
		}
	}
	/* Serve until the helper goes away (the channel hangs up) or we are told to stop. */
	for (;;) {
		struct pollfd p[2] = { { channel, POLLRDHUP, 0 }, { sfd, POLLIN, 0 } };

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[0].revents & (POLLHUP | POLLRDHUP | POLLERR))
			break;
		if (p[1].revents & POLLIN)
			break;
	}
out:
	for (size_t i = 0; i < n; i++)
		if (d[i] != NULL)
			MHD_stop_daemon(d[i]);
	return rc;
}

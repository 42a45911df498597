/* SPDX-License-Identifier: Apache-2.0 */
/*
 * httpd.c: what the daemon's fronts (daemon/server.c) and the MCP server (mcp/main.c) do the
 * same way around libmicrohttpd: signals, start-up with every limit, body, reply (sb/httpd.h).
 */
#include "config.h"

#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>

#include "sb/httpd.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/parse.h"

int
sb_httpd_signalfd(void)
{
	sigset_t sigs;

	/* Threads inherit the mask: only the caller takes SIGTERM/SIGINT/SIGHUP, via signalfd. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &sigs, SFD_CLOEXEC);
}

/* libmicrohttpd's own messages: for debugging only, they name nothing a client needs. */
static void
log_debug(void *cls, const char *fmt, va_list ap)
{
	_cleanup_free_ char *msg = sb_xvasprintf(fmt, ap);
	size_t n = strlen(msg);

	(void)cls;
	while (n > 0 && msg[n - 1] == '\n')
		msg[--n] = '\0';
	sb_log(SB_LOG_DEBUG, "http: %s", msg);
}

/*
 * One more option into opts (of cap slots). Every option is added at most once, so the
 * array has a slot for each; one added to sb_httpd_start without growing it stops the
 * program here rather than writing past the array.
 */
static void
opt_push(struct MHD_OptionItem *opts, size_t *n, size_t cap, enum MHD_OPTION option,
    intptr_t value, void *ptr)
{
	if (*n >= cap)
		abort();
	opts[(*n)++] = (struct MHD_OptionItem){ option, value, ptr };
}

struct MHD_Daemon *
sb_httpd_start(const struct sb_httpd_conf *c)
{
	struct MHD_OptionItem opts[8];
	const size_t cap = SB_ARRAY_SIZE(opts);
	size_t n = 0;

	/* Every limit set explicitly (docs/design.md, "Sockets"). */
	if (c->listen_fd >= 0)
		opt_push(opts, &n, cap, MHD_OPTION_LISTEN_SOCKET, c->listen_fd, NULL);
	else
		opt_push(opts, &n, cap, MHD_OPTION_SOCK_ADDR, 0, (void *)c->addr);
	opt_push(opts, &n, cap, MHD_OPTION_CONNECTION_LIMIT, c->connection_limit, NULL);
	opt_push(opts, &n, cap, MHD_OPTION_PER_IP_CONNECTION_LIMIT, c->per_ip_limit, NULL);
	opt_push(opts, &n, cap, MHD_OPTION_CONNECTION_TIMEOUT, c->idle_s, NULL);
	if (c->memory_limit > 0)
		opt_push(opts, &n, cap, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
		    (intptr_t)c->memory_limit, NULL);
	opt_push(opts, &n, cap, MHD_OPTION_NOTIFY_COMPLETED,
	    (intptr_t)sb_httpd_body_completed, NULL);
	if (c->log_debug)
		opt_push(opts, &n, cap, MHD_OPTION_EXTERNAL_LOGGER,
		    (intptr_t)log_debug, NULL);
	opt_push(opts, &n, cap, MHD_OPTION_END, 0, NULL);
	/* The port argument is ignored: the listening socket or addr carries it. */
	return MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
		MHD_USE_POLL | MHD_USE_ERROR_LOG,
	    0, NULL, NULL, c->handler, c->handler_cls,
	    MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
}

bool
sb_httpd_body_collect(struct MHD_Connection *conn, void **con_cls, size_t max, unsigned flags,
    const char *upload, size_t *upload_size, struct sb_httpd_body **ret_body)
{
	struct sb_httpd_body *b = *con_cls;

	if (b == NULL) {
		const char *cl = NULL;
		uint64_t n;

		b = sb_xcalloc(1, sizeof(*b));
		sb_buf_init(&b->body, max);
		if (flags & SB_HTTPD_BODY_CHECK_LENGTH)
			cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
		/* A declared length over the limit is refused before the body is read. */
		if (cl != NULL && sb_parse_u64(cl, 0, max, &n, NULL) < 0)
			b->too_big = true;
		*con_cls = b;
		return false;
	}
	if (*upload_size > 0) {
		if (!b->too_big && sb_buf_append(&b->body, upload, *upload_size, NULL) < 0)
			b->too_big = true;
		*upload_size = 0;
		return false;
	}
	*ret_body = b;
	return true;
}

void
sb_httpd_body_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct sb_httpd_body *b = *con_cls;

	(void)cls, (void)conn, (void)toe;
	if (b == NULL)
		return;
	sb_buf_release(&b->body);
	free(b);
	*con_cls = NULL;
}

enum MHD_Result
sb_httpd_respond(struct MHD_Connection *conn, unsigned status, const char *body, size_t len,
    const char *content_type, const struct sb_httpd_header *headers, size_t n)
{
	char *copy = sb_xmemdup(body != NULL ? body : "", len);
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, copy, MHD_RESPMEM_MUST_FREE);
	if (r == NULL) {
		free(copy);
		return MHD_NO;
	}
	if (content_type != NULL)
		MHD_add_response_header(r, "Content-Type", content_type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	for (size_t i = 0; i < n; i++)
		MHD_add_response_header(r, headers[i].name, headers[i].value);
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * httpd.h: the plumbing the daemon's fronts and the MCP server share around libmicrohttpd
 * (docs/design.md, "Sockets"): the stop signals taken away from the server's threads, one
 * server started with every limit set, the request body gathered under a cap, and a reply
 * queued. What a request means stays with each program.
 *
 * Only programs that link libmicrohttpd may call these: the object is pulled out of libsb.a
 * by the first call, so the CLI, which calls none, does not link libmicrohttpd.
 */
#ifndef SB_HTTPD_H
#define SB_HTTPD_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "sb/buf.h"
#include "sb/common.h"

/*
 * Block SIGTERM, SIGINT and SIGHUP in the calling thread, so that every thread it starts from
 * now on (libmicrohttpd's included) leaves them to the caller, ignore SIGPIPE (a client that
 * hangs up must not kill the server), and return a signalfd that reads the three, or -1 with
 * errno set (the signals stay blocked). Call it before sb_httpd_start.
 */
int sb_httpd_signalfd(void);

/* One server: a thread per connection, so a long call only blocks its own connection. */
struct sb_httpd_conf {
	int listen_fd;		      /* a bound, listening socket; -1: bind addr below */
	const struct sockaddr *addr;  /* with listen_fd -1: the address (and port) to bind */
	unsigned connection_limit;    /* MHD_OPTION_CONNECTION_LIMIT */
	unsigned per_ip_limit;	      /* MHD_OPTION_PER_IP_CONNECTION_LIMIT; 0: none */
	unsigned idle_s;	      /* MHD_OPTION_CONNECTION_TIMEOUT */
	size_t memory_limit;	      /* MHD_OPTION_CONNECTION_MEMORY_LIMIT; 0: the library's */
	MHD_AccessHandlerCallback handler;
	void *handler_cls;
	bool log_debug; /* libmicrohttpd's messages to sb_log at debug level, not to stderr */
};

/*
 * Start a server. Requests' bodies are freed by sb_httpd_body_completed, so the handler must
 * gather them with sb_httpd_body_collect. Returns NULL when the server cannot start.
 */
struct MHD_Daemon *sb_httpd_start(const struct sb_httpd_conf *c);

/* A request's body as it arrives: at most the maximum given, too_big past it (and cut). */
struct sb_httpd_body {
	struct sb_buf body;
	bool too_big;
};

enum sb_httpd_body_flags {
	/* A declared Content-Length over the maximum is too big before any byte arrives. */
	SB_HTTPD_BODY_CHECK_LENGTH = 1 << 0,
};

/*
 * The start of an access handler: gathers the body across libmicrohttpd's calls. Returns
 * false while the request is still arriving (the handler then returns MHD_YES), true once it
 * is complete, with *ret_body the body (owned by the connection).
 */
bool sb_httpd_body_collect(struct MHD_Connection *conn, void **con_cls, size_t max,
    unsigned flags, const char *upload, size_t *upload_size, struct sb_httpd_body **ret_body);

/* MHD_OPTION_NOTIFY_COMPLETED: frees what sb_httpd_body_collect kept for the request. */
void sb_httpd_body_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
    enum MHD_RequestTerminationCode toe);

/* A reply header beyond the ones sb_httpd_respond sets itself. */
struct sb_httpd_header {
	const char *name, *value;
};

/*
 * Queue a reply: len bytes of body (copied; NULL only with len 0), "Content-Type:
 * content_type" unless it is NULL, "Cache-Control: no-store", then the n headers in order.
 * Returns libmicrohttpd's answer (MHD_NO closes the connection).
 */
enum MHD_Result sb_httpd_respond(struct MHD_Connection *conn, unsigned status, const char *body,
    size_t len, const char *content_type, const struct sb_httpd_header *headers, size_t n);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * http.h: a small HTTP client (libcurl) for the daemon's API: over a Unix socket or TCP,
 * with a timeout on every call and a cap on the reply (docs/design.md, "Parsing untrusted
 * input").
 */
#ifndef SB_HTTP_H
#define SB_HTTP_H

#include <jansson.h>
#include <stdint.h>

#include "sb/buf.h"
#include "sb/common.h"
#include "sb/error.h"

struct sb_http_target {
	const char *unix_socket; /* a Unix socket path, or NULL for TCP */
	const char *base_url;	 /* "http://localhost" for a socket; "http://host:port" for TCP */
	const char *token;	 /* sent as "Authorization: Bearer <token>", or NULL */
	long timeout_ms;	 /* the whole call; 0: SB_HTTP_TIMEOUT_DEFAULT_MS */
	size_t max_reply;	 /* 0: SB_HTTP_REPLY_MAX */
	bool https;		 /* also allow https: (the model proxy; never the daemon) */
};

struct sb_http_reply {
	long status;
	struct sb_buf body;
};

/* Process-wide libcurl set-up; call once before threads. */
int sb_http_init(struct sb_error **err);

/*
 * One request. body may be NULL (no body). On success (any HTTP status) *ret is filled and
 * the caller releases it with sb_http_reply_release. Fails with ETIMEDOUT, ECONNREFUSED,
 * ENOENT (no socket), EMSGSIZE (reply over the cap) or EIO.
 */
int sb_http_request(const struct sb_http_target *t, const char *method, const char *path,
    const char *body, size_t body_len, struct sb_http_reply *ret, struct sb_error **err);

/* The same with a JSON body and a JSON reply (*ret_json: new reference, NULL if not JSON). */
int sb_http_json(const struct sb_http_target *t, const char *method, const char *path,
    const json_t *body, long *ret_status, json_t **ret_json, struct sb_error **err);

void sb_http_reply_release(struct sb_http_reply *r);

struct sb_sha256;

/*
 * GET an http(s) URL into fd, at most max bytes, hashing what it writes into *hash (may be
 * NULL). Unlike the daemon calls, this one is for public downloads (the npm registry): it
 * follows up to 5 redirects to https only and honours the https_proxy/no_proxy environment.
 * A status other than 200 fails with EIO (ENOENT for 404); *ret_bytes gets the size.
 */
int sb_http_download(const char *url, int fd, uint64_t max, long timeout_ms, struct sb_sha256 *hash,
    uint64_t *ret_bytes, struct sb_error **err);

#endif

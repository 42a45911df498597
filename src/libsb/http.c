/* SPDX-License-Identifier: Apache-2.0 */
/* http.c: libcurl easy requests with limits, for talking to the daemon. */
#include "config.h"

#include <curl/curl.h>
#include <string.h>

#include "sb/http.h"
#include "sb/json.h"
#include "sb/limits.h"
#include "sb/mem.h"
#include "sb/sha256.h"

static void
curl_easy_cleanupp(CURL **c)
{
	if (*c != NULL)
		curl_easy_cleanup(*c);
}

static void
curl_slist_freep(struct curl_slist **l)
{
	curl_slist_free_all(*l);
}

int
sb_http_init(struct sb_error **err)
{
	static bool done;

	if (done)
		return 0;
	if (curl_global_init(CURL_GLOBAL_NOTHING) != CURLE_OK)
		return sb_error_set(err, EIO, "curl_global_init failed");
	done = true;
	return 0;
}

struct sink {
	struct sb_buf *b;
	bool over;
};

static size_t
on_data(char *p, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;

	if (sb_buf_append(s->b, p, size * n, NULL) < 0) {
		s->over = true;
		return 0; /* makes curl stop with CURLE_WRITE_ERROR */
	}
	return size * n;
}

/* An easy handle with what every call has: the URL, time limits, where the reply goes. */
static CURL *
easy_new(const char *url, long timeout_ms, long connect_ms, curl_write_callback fn, void *data,
    struct sb_error **err)
{
	CURL *c;

	if (sb_http_init(err) < 0)
		return NULL;
	c = curl_easy_init();
	if (c == NULL) {
		sb_error_set(err, ENOMEM, "curl_easy_init");
		return NULL;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, fn);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, data);
	return c;
}

int
sb_http_request(const struct sb_http_target *t, const char *method, const char *path,
    const char *body, size_t body_len, struct sb_http_reply *ret, struct sb_error **err)
{
	_cleanup_(curl_easy_cleanupp) CURL *c = NULL;
	_cleanup_(curl_slist_freep) struct curl_slist *hdrs = NULL;
	_cleanup_free_ char *url = NULL, *auth = NULL;
	struct sb_http_reply r;
	struct sink sink;
	CURLcode cc;

	memset(&r, 0, sizeof(r));
	sb_buf_init(&r.body, t->max_reply ? t->max_reply : SB_HTTP_REPLY_MAX);
	sink.b = &r.body;
	sink.over = false;
	url = sb_xasprintf("%s%s", t->base_url ? t->base_url : "http://localhost", path);
	c = easy_new(url, t->timeout_ms > 0 ? t->timeout_ms : (long)SB_HTTP_TIMEOUT_DEFAULT_MS,
	    10000L, on_data, &sink, err);
	if (c == NULL) {
		sb_buf_release(&r.body);
		return -1;
	}
	if (t->unix_socket != NULL)
		curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, t->unix_socket);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	/* Only plain HTTP to the daemon: no redirects, no other protocol, no proxy from env. */
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, t->https ? "http,https" : "http");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_PROXY, "");
	if (body != NULL) {
		hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
	}
	if (t->token != NULL) {
		auth = sb_xasprintf("Authorization: Bearer %s", t->token);
		hdrs = curl_slist_append(hdrs, auth);
	}
	hdrs = curl_slist_append(hdrs, "Expect:");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	cc = curl_easy_perform(c);
	if (cc != CURLE_OK) {
		int code = sink.over ? EMSGSIZE
			: cc == CURLE_OPERATION_TIMEDOUT ? ETIMEDOUT
			: cc == CURLE_COULDNT_CONNECT ? ECONNREFUSED
							: EIO;

		sb_buf_release(&r.body);
		return sb_error_set(err, code, "%s %s: %s", method, path,
		    sink.over ? "reply too large" : curl_easy_strerror(cc));
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
	*ret = r;
	return 0;
}

int
sb_http_json(const struct sb_http_target *t, const char *method, const char *path,
    const json_t *body, long *ret_status, json_t **ret_json, struct sb_error **err)
{
	_cleanup_free_ char *s = body != NULL ? sb_json_dumps(body, JSON_COMPACT) : NULL;
	struct sb_http_reply r;
	json_t *j = NULL;

	if (sb_http_request(t, method, path, s, s ? strlen(s) : 0, &r, err) < 0)
		return -1;
	if (r.body.len > 0)
		(void)sb_json_load(r.body.s, r.body.len, r.body.max, &j, NULL);
	*ret_status = r.status;
	*ret_json = j;
	sb_http_reply_release(&r);
	return 0;
}

void
sb_http_reply_release(struct sb_http_reply *r)
{
	sb_buf_release(&r->body);
}

struct file_sink {
	int fd;
	uint64_t n, max;
	struct sb_sha256 *hash;
	int error; /* errno of a failed write, or EFBIG */
};

static size_t
on_file_data(char *p, size_t size, size_t n, void *arg)
{
	struct file_sink *s = arg;
	size_t len = size * n, off = 0;

	if (s->n + len > s->max) {
		s->error = EFBIG;
		return 0;
	}
	while (off < len) {
		ssize_t w = SB_RETRY_EINTR(write(s->fd, p + off, len - off));

		if (w <= 0) {
			s->error = w < 0 ? errno : EIO;
			return 0;
		}
		off += (size_t)w;
	}
	if (s->hash != NULL)
		sb_sha256_update(s->hash, p, len);
	s->n += len;
	return len;
}

int
sb_http_download(const char *url, int fd, uint64_t max, long timeout_ms, struct sb_sha256 *hash,
    uint64_t *ret_bytes, struct sb_error **err)
{
	_cleanup_(curl_easy_cleanupp) CURL *c = NULL;
	struct file_sink sink = { fd, 0, max, hash, 0 };
	long status = 0;
	CURLcode cc;

	c = easy_new(url, timeout_ms > 0 ? timeout_ms : 600000L, 20000L, on_file_data, &sink, err);
	if (c == NULL)
		return -1;
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "https");
	cc = curl_easy_perform(c);
	if (cc != CURLE_OK) {
		if (sink.error != 0)
			return sb_error_set(err, sink.error, "GET %s: %s", url,
			    sink.error == EFBIG ? "larger than expected" : strerror(sink.error));
		return sb_error_set(err, cc == CURLE_OPERATION_TIMEDOUT ? ETIMEDOUT : EIO,
		    "GET %s: %s", url, curl_easy_strerror(cc));
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200)
		return sb_error_set(err, status == 404 ? ENOENT : EIO, "GET %s: HTTP %ld", url, status);
	if (ret_bytes != NULL)
		*ret_bytes = sink.n;
	return 0;
}

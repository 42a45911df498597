/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-httpd.c: libsb's httpd body collection (sb_httpd_body_collect) under its cap, on a
 * real libmicrohttpd server on a Unix socket: a body past the cap is too_big whether it came
 * with a Content-Length, in chunks (one large or many small), or with a Content-Length the
 * chunks contradict; a declared length past the cap is too_big before a byte arrives; a
 * Content-Length smaller than what follows takes that many bytes and no more (the rest is
 * the next request, judged on its own). libmicrohttpd prints its own refusals to stderr. Red-team review of issue 19 (the shared front).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "sb/httpd.h"
#include "sb/mem.h"
#include "unit.h"

#define CAP 16

static struct MHD_Daemon *server;
static char dir[] = "/tmp/sb-test-httpd-XXXXXX";
static char sock_path[108];
static unsigned collect_flags;

static enum MHD_Result
handler(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
    const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
	struct sb_httpd_body *b;
	char out[64];

	(void)cls, (void)url, (void)method, (void)version;
	if (!sb_httpd_body_collect(conn, con_cls, CAP, collect_flags, upload, upload_size, &b))
		return MHD_YES;
	ck_assert_uint_le(b->body.len, CAP);
	snprintf(out, sizeof(out), "[len=%zu too_big=%d]", b->body.len, b->too_big);
	return sb_httpd_respond(conn, 200, out, strlen(out), "text/plain", NULL, 0);
}

static void
start(unsigned flags)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	collect_flags = flags;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(sock_path, sizeof(sock_path), "%s/s", dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(fd, 8), 0);
	server = sb_httpd_start(&(struct sb_httpd_conf){ .listen_fd = fd, .connection_limit = 8,
	    .idle_s = 5, .memory_limit = 64 * 1024, .handler = handler });
	ck_assert_ptr_nonnull(server);
}

static void
setup_checked(void)
{
	start(SB_HTTPD_BODY_CHECK_LENGTH);
}

static void
setup_unchecked(void)
{
	start(0);
}

static void
teardown(void)
{
	MHD_stop_daemon(server);
	unlink(sock_path);
	rmdir(dir);
	memcpy(dir, "/tmp/sb-test-httpd-XXXXXX", sizeof(dir));
}

/* Send raw bytes, half-close, and return every byte of the answers (malloc'd). */
static char *
exchange(const char *raw, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct sb_buf out = SB_BUF_INIT(1 << 20);
	struct timeval tv = { 5, 0 };
	char buf[4096];
	ssize_t n;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	ck_assert_int_eq(write(fd, raw, len), (ssize_t)len);
	shutdown(fd, SHUT_WR);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		ck_assert_int_eq(sb_buf_append(&out, buf, (size_t)n, NULL), 0);
	close(fd);
	return sb_buf_detach(&out, NULL);
}

/* The answers' bodies, in order ("[len=.. too_big=..]" each), or "" for none. */
static char *
answers(const char *raw, size_t len)
{
	_cleanup_free_ char *all = exchange(raw, len);
	struct sb_buf out = SB_BUF_INIT(1 << 20);

	for (const char *p = all; (p = strchr(p, '[')) != NULL;) {
		const char *e = strchr(p, ']');

		ck_assert_ptr_nonnull(e);
		ck_assert_int_eq(sb_buf_append(&out, p, (size_t)(e - p + 1), NULL), 0);
		p = e + 1;
	}
	return sb_buf_detach(&out, NULL);
}

#define POST "POST /x HTTP/1.1\r\nHost: h\r\nConnection: close\r\n"
#define POST_KA "POST /x HTTP/1.1\r\nHost: h\r\n"
#define ANSWERS(s) answers((s), sizeof(s) - 1)

START_TEST(test_content_length)
{
	char *a;

	a = ANSWERS(POST "Content-Length: 16\r\n\r\n0123456789abcdef");
	ck_assert_str_eq(a, "[len=16 too_big=0]");
	free(a);
	a = ANSWERS(POST "Content-Length: 17\r\n\r\n0123456789abcdefg");
	ck_assert_str_eq(a, "[len=0 too_big=1]");
	free(a);
	/* Declared past the cap, less sent and the connection cut: never an accepted body. */
	a = ANSWERS(POST "Content-Length: 17\r\n\r\n0123");
	ck_assert_ptr_null(strstr(a, "too_big=0"));
	free(a);
	a = ANSWERS(POST "Content-Length: 99999999999999999999999\r\n\r\n0123");
	ck_assert_ptr_null(strstr(a, "too_big=0"));
	free(a);
	/* A length shorter than what follows: that many bytes, the rest another request. */
	a = ANSWERS(POST_KA "Content-Length: 2\r\n\r\nab" POST "Content-Length: 40\r\n\r\n"
			    "0123456789012345678901234567890123456789");
	ck_assert_str_eq(a, "[len=2 too_big=0][len=0 too_big=1]");
	free(a);
	/* Two lengths: the one libmicrohttpd goes by is the one checked. */
	a = ANSWERS(POST "Content-Length: 40\r\nContent-Length: 4\r\n\r\n"
			 "0123456789012345678901234567890123456789");
	ck_assert_ptr_null(strstr(a, "too_big=0"));
	free(a);
}
END_TEST

START_TEST(test_chunked)
{
	struct sb_buf many = SB_BUF_INIT(1 << 16);
	char *a;

	a = ANSWERS(POST "Transfer-Encoding: chunked\r\n\r\n10\r\n0123456789abcdef\r\n0\r\n\r\n");
	ck_assert_str_eq(a, "[len=16 too_big=0]");
	free(a);
	a = ANSWERS(POST "Transfer-Encoding: chunked\r\n\r\n11\r\n0123456789abcdefg\r\n0\r\n\r\n");
	ck_assert_str_eq(a, "[len=0 too_big=1]");
	free(a);
	/* Many chunks each under the cap, together past it. */
	sb_buf_appends(&many, POST "Transfer-Encoding: chunked\r\n\r\n", NULL);
	for (int i = 0; i < 100; i++)
		sb_buf_appends(&many, "3\r\nabc\r\n", NULL);
	sb_buf_appends(&many, "0\r\n\r\n", NULL);
	a = answers(many.s, many.len);
	ck_assert_ptr_nonnull(strstr(a, "too_big=1"));
	free(a);
	sb_buf_release(&many);
	/* A Content-Length under the cap that chunks contradict: the chunks count. */
	a = ANSWERS(POST "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
			 "20\r\n0123456789abcdef0123456789abcdef\r\n0\r\n\r\n");
	ck_assert_ptr_null(strstr(a, "too_big=0"));
	free(a);
}
END_TEST

/* Without SB_HTTPD_BODY_CHECK_LENGTH (the MCP server) the cap itself still holds. */
START_TEST(test_unchecked_length)
{
	char *a = ANSWERS(POST "Content-Length: 17\r\n\r\n0123456789abcdefg");

	ck_assert_str_eq(a, "[len=0 too_big=1]");
	free(a);
	a = ANSWERS(POST "Transfer-Encoding: chunked\r\n\r\n11\r\n0123456789abcdefg\r\n0\r\n\r\n");
	ck_assert_str_eq(a, "[len=0 too_big=1]");
	free(a);
}
END_TEST

static Suite *
httpd_suite(void)
{
	Suite *s = suite_create("httpd");
	TCase *tc = tcase_create("checked");
	TCase *tu = tcase_create("unchecked");

	tcase_add_checked_fixture(tc, setup_checked, teardown);
	tcase_add_test(tc, test_content_length);
	tcase_add_test(tc, test_chunked);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(tu, setup_unchecked, teardown);
	tcase_add_test(tu, test_unchecked_length);
	suite_add_tcase(s, tu);
	return s;
}

SB_UNIT_MAIN(httpd_suite)

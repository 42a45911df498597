/* SPDX-License-Identifier: Apache-2.0 */
/* test-buf.c: sb_buf, sb_argv, sb_error, the sb_x* allocators. */
#include "config.h"

#include <fcntl.h>
#include <string.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/error.h"
#include "sb/mem.h"

#include "unit.h"

START_TEST(test_buf_empty_is_printable)
{
	struct sb_buf b = SB_BUF_INIT(16);

	ck_assert_ptr_nonnull(b.s);
	ck_assert_str_eq(b.s, "");
	ck_assert_uint_eq(b.len, 0);
	sb_buf_release(&b);
	ck_assert_str_eq(b.s, "");
}
END_TEST

START_TEST(test_buf_max_is_hard)
{
	struct sb_buf b = SB_BUF_INIT(8);
	struct sb_error *err = NULL;

	ck_assert_int_eq(sb_buf_appends(&b, "12345", &err), 0);
	ck_assert_ptr_null(err);
	/* 5 + 4 > 8: refused, and the buffer keeps what it had. */
	ck_assert_int_eq(sb_buf_appends(&b, "6789", &err), -1);
	ck_assert_int_eq(sb_error_code(err), EMSGSIZE);
	ck_assert_str_eq(b.s, "12345");
	ck_assert_uint_eq(b.len, 5);
	sb_error_release(&err);
	ck_assert_int_eq(sb_buf_appends(&b, "678", &err), 0);
	ck_assert_str_eq(b.s, "12345678");
	/* A size that would overflow len + n is refused, not wrapped. */
	ck_assert_int_eq(sb_buf_append(&b, "x", SIZE_MAX, &err), -1);
	sb_error_release(&err);
	sb_buf_release(&b);
}
END_TEST

START_TEST(test_buf_capped_append_counts_dropped)
{
	struct sb_buf b = SB_BUF_INIT(10);

	ck_assert_uint_eq(sb_buf_append_capped(&b, "abcdef", 6), 0);
	ck_assert_uint_eq(sb_buf_append_capped(&b, "ghijklmn", 8), 4);
	ck_assert_str_eq(b.s, "abcdefghij");
	ck_assert_uint_eq(sb_buf_append_capped(&b, "z", 1), 1);
	sb_buf_release(&b);
}
END_TEST

START_TEST(test_buf_binary_and_detach)
{
	struct sb_buf b = SB_BUF_INIT(64);
	size_t len;
	char *s;

	ck_assert_int_eq(sb_buf_append(&b, "a\0b", 3, NULL), 0);
	ck_assert_uint_eq(b.len, 3);
	ck_assert_int_eq(memcmp(b.s, "a\0b", 4), 0); /* NUL-terminated after the data */
	s = sb_buf_detach(&b, &len);
	ck_assert_uint_eq(len, 3);
	ck_assert_str_eq(b.s, "");
	free(s);
	/* Detaching an empty buffer still gives a string the caller may free. */
	s = sb_buf_detach(&b, NULL);
	ck_assert_str_eq(s, "");
	free(s);
}
END_TEST

START_TEST(test_buf_ten_megabyte_line)
{
	size_t n = 10 * 1024 * 1024;
	struct sb_buf b = SB_BUF_INIT(n);
	char *line = malloc(n);

	memset(line, 'x', n);
	ck_assert_int_eq(sb_buf_append(&b, line, n, NULL), 0);
	ck_assert_uint_eq(b.len, n);
	ck_assert_int_eq(b.s[n], '\0');
	/* One byte more does not fit. */
	ck_assert_int_eq(sb_buf_appendc(&b, 'y', NULL), -1);
	free(line);
	sb_buf_release(&b);
}
END_TEST

static const struct {
	const char *in;
	const char *out;
} escape_cases[] = {
	{ "plain", "plain" },
	{ "two\nlines", "two\\nlines" },
	{ "tab\there", "tab\\there" },
	{ "back\\slash", "back\\\\slash" },
	{ "\x1b[31mred", "\\x1b[31mred" },	/* terminal escape */
	{ "bell\a", "bell\\x07" },
	{ "del\x7f", "del\\x7f" },
	{ "caf\xc3\xa9", "caf\xc3\xa9" },	/* valid UTF-8 kept */
	{ "bad\xc3", "bad\\xc3" },		/* truncated sequence */
	{ "over\xc0\xaf", "over\\xc0\\xaf" },	/* overlong '/' */
	{ "c1\xc2\x9b", "c1\\xc2\\x9b" },	/* C1 CSI */
	{ "sur\xed\xa0\x80", "sur\\xed\\xa0\\x80" }, /* UTF-16 surrogate */
	/* Shown, not obeyed: what would reorder or hide the text around it. */
	{ "abc\xe2\x80\xae" "fdp", "abc\\u{202E}fdp" },	/* right-to-left override */
	{ "a\xe2\x81\xa6" "b", "a\\u{2066}b" },		/* left-to-right isolate */
	{ "zw\xe2\x80\x8b" "sp", "zw\\u{200B}sp" },		/* zero-width space */
	{ "line\xe2\x80\xa8" "sep", "line\\u{2028}sep" },	/* a line break to some */
	{ "alm\xd8\x9c", "alm\\u{061C}" },			/* Arabic letter mark */
	{ "bom\xef\xbb\xbf", "bom\\u{FEFF}" },
	{ "tag\xf3\xa0\x81\x81", "tag\\u{E0041}" },		/* a tag character */
	{ "vs\xef\xb8\x8f", "vs\\u{FE0F}" },			/* a variation selector */
	{ "hf\xe3\x85\xa4", "hf\\u{3164}" },			/* a Hangul filler */
	{ "shy\xc2\xad", "shy\\u{00AD}" },			/* a soft hyphen */
	{ "ok \xe2\x80\x94 dash", "ok \xe2\x80\x94 dash" },	/* an em dash is text */
};

START_TEST(test_escape_table)
{
	char *got = sb_escape(escape_cases[_i].in);

	ck_assert_msg(strcmp(got, escape_cases[_i].out) == 0, "case %d: got '%s'", _i, got);
	free(got);
}
END_TEST

START_TEST(test_read_fd_cap)
{
	struct sb_buf b = SB_BUF_INIT(4);
	struct sb_error *err = NULL;
	int fds[2];

	ck_assert_int_eq(pipe2(fds, O_CLOEXEC), 0);
	ck_assert_int_eq(write(fds[1], "hello", 5), 5);
	close(fds[1]);
	ck_assert_int_eq(sb_buf_read_fd(&b, fds[0], &err), -1);
	ck_assert_int_eq(sb_error_code(err), EMSGSIZE);
	sb_error_release(&err);
	close(fds[0]);
	sb_buf_release(&b);
}
END_TEST

START_TEST(test_argv_terminated)
{
	struct sb_argv a = SB_ARGV_INIT;

	ck_assert_ptr_null(a.v[0]);
	sb_argv_push(&a, "docker");
	sb_argv_pushf(&a, "--label=%s=%d", "n", 3);
	sb_argv_pushl(&a, "a", "b", NULL);
	ck_assert_uint_eq(a.n, 4);
	ck_assert_str_eq(a.v[1], "--label=n=3");
	ck_assert_ptr_null(a.v[4]);
	for (int i = 0; i < 100; i++)
		sb_argv_push(&a, "x");
	ck_assert_uint_eq(a.n, 104);
	ck_assert_ptr_null(a.v[104]);
	sb_argv_release(&a);
	ck_assert_uint_eq(a.n, 0);
	ck_assert_ptr_null(a.v[0]);
}
END_TEST

START_TEST(test_env_set_replaces)
{
	struct sb_argv env = SB_ARGV_INIT;

	sb_env_set(&env, "PATH", "/bin");
	sb_env_set(&env, "HOME", "/root");
	sb_env_set(&env, "PATH", "/usr/bin");
	ck_assert_uint_eq(env.n, 2);
	ck_assert_str_eq(sb_env_get(&env, "PATH"), "/usr/bin");
	ck_assert_ptr_null(sb_env_get(&env, "PAT"));
	ck_assert_ptr_null(sb_env_get(&env, "PATHX"));
	sb_env_unset(&env, "PATH");
	ck_assert_uint_eq(env.n, 1);
	ck_assert_ptr_null(sb_env_get(&env, "PATH"));
	ck_assert_str_eq(sb_env_get(&env, "HOME"), "/root");
	ck_assert_ptr_null(env.v[1]);
	sb_env_unset(&env, "NOPE");
	ck_assert_uint_eq(env.n, 1);
	sb_argv_release(&env);
}
END_TEST

static int
fail_with_context(struct sb_error **err)
{
	if (sb_error_errno(err, ENOENT, "open '%s'", "x.yaml") < 0)
		return sb_error_prefix(err, "task '%s'", "t1");
	return 0;
}

START_TEST(test_error_chain)
{
	struct sb_error *err = NULL;

	ck_assert_int_eq(fail_with_context(&err), -1);
	ck_assert_int_eq(sb_error_code(err), ENOENT);
	ck_assert_str_eq(sb_error_message(err), "task 't1': open 'x.yaml': No such file or directory");
	sb_error_release(&err);
	ck_assert_ptr_null(err);
	ck_assert_str_eq(sb_error_message(err), "");
	/* A NULL slot: the failure is still reported by the return value. */
	ck_assert_int_eq(sb_error_set(NULL, EINVAL, "ignored"), -1);
	/* Code 0 is not "no error". */
	ck_assert_int_eq(sb_error_set(&err, 0, "zero"), -1);
	ck_assert_int_eq(sb_error_code(err), EIO);
	sb_error_release(&err);
}
END_TEST

static Suite *
buf_suite(void)
{
	Suite *s = suite_create("buf");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_buf_empty_is_printable);
	tcase_add_test(tc, test_buf_max_is_hard);
	tcase_add_test(tc, test_buf_capped_append_counts_dropped);
	tcase_add_test(tc, test_buf_binary_and_detach);
	tcase_add_test(tc, test_buf_ten_megabyte_line);
	tcase_add_loop_test(tc, test_escape_table, 0, (int)SB_ARRAY_SIZE(escape_cases));
	tcase_add_test(tc, test_read_fd_cap);
	tcase_add_test(tc, test_argv_terminated);
	tcase_add_test(tc, test_env_set_replaces);
	tcase_add_test(tc, test_error_chain);
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(buf_suite)

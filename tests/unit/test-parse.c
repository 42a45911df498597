/* SPDX-License-Identifier: Apache-2.0 */
/* test-parse.c: bounded numbers, identifier grammars, relative paths. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "sb/error.h"
#include "sb/parse.h"
#include "sb/path.h"

#include "unit.h"

static const struct {
	const char *in;
	bool ok;
	uint64_t v;
} u64_cases[] = {
	{ "0", true, 0 },
	{ "42", true, 42 },
	{ "100", true, 100 },
	{ "101", false, 0 },	/* above max */
	{ "", false, 0 },
	{ "-1", false, 0 },	/* sign */
	{ "+1", false, 0 },
	{ " 1", false, 0 },	/* leading space */
	{ "1 ", false, 0 },	/* trailing space */
	{ "12abc", false, 0 },
	{ "0x10", false, 0 },	/* decimal only */
	{ "1e2", false, 0 },
	{ "99999999999999999999999", false, 0 }, /* overflow */
	{ "007", true, 7 },
};

START_TEST(test_u64_table)
{
	struct sb_error *err = NULL;
	uint64_t v = 12345;
	int r = sb_parse_u64(u64_cases[_i].in, 0, 100, &v, &err);

	if (u64_cases[_i].ok) {
		ck_assert_msg(r == 0, "case '%s': %s", u64_cases[_i].in, sb_error_message(err));
		ck_assert_uint_eq(v, u64_cases[_i].v);
	} else {
		ck_assert_msg(r < 0, "case '%s' accepted", u64_cases[_i].in);
		ck_assert_ptr_nonnull(err);
		ck_assert_uint_eq(v, 12345); /* untouched on failure */
	}
	sb_error_release(&err);
}
END_TEST

START_TEST(test_i64_limits)
{
	int64_t v;

	ck_assert_int_eq(sb_parse_i64("-9223372036854775808", INT64_MIN, INT64_MAX, &v, NULL), 0);
	ck_assert(v == INT64_MIN);
	ck_assert_int_eq(sb_parse_i64("9223372036854775807", INT64_MIN, INT64_MAX, &v, NULL), 0);
	ck_assert(v == INT64_MAX);
	ck_assert_int_lt(sb_parse_i64("9223372036854775808", INT64_MIN, INT64_MAX, &v, NULL), 0);
	ck_assert_int_lt(sb_parse_i64("-9223372036854775809", INT64_MIN, INT64_MAX, &v, NULL), 0);
	ck_assert_int_lt(sb_parse_i64("-", INT64_MIN, INT64_MAX, &v, NULL), 0);
	ck_assert_int_lt(sb_parse_i64("-5", 0, 10, &v, NULL), 0);
}
END_TEST

static const struct {
	const char *in;
	bool ok;
} double_cases[] = {
	{ "1", true }, { "0.5", true }, { ".5", true }, { "-2.5e3", true }, { "1e-3", true },
	{ "nan", false }, { "NaN", false }, { "inf", false }, { "-inf", false },
	{ "infinity", false }, { "0x1p3", false }, { "", false }, { "1.5x", false },
	{ "1e999", false }, /* overflows to inf */
	{ " 1", false },
};

START_TEST(test_double_table)
{
	double v = -7;
	int r = sb_parse_double(double_cases[_i].in, -1e9, 1e9, &v, NULL);

	ck_assert_msg((r == 0) == double_cases[_i].ok, "case '%s'", double_cases[_i].in);
	if (r == 0)
		ck_assert(isfinite(v));
	else
		ck_assert(v == -7);
}
END_TEST

static const struct {
	const char *in;
	bool ok;
} task_id_cases[] = {
	{ "yajl-CVE-2017-16516", true },
	{ "generic-c-jq-jq_gh_3196", true },
	{ "RUSTSEC-2021-0003", true },
	{ "a__b", true },
	{ "a--b", true },
	{ "x.y_z", true },
	{ "goyave-20243293-5836bff3efaa", true },
	{ "", false },
	{ "-a", false },
	{ "a-", false },
	{ "a_", false },
	{ "a___b", false },
	{ "a..b", false },
	{ "a b", false },
	{ "a/b", false },
	{ "../x", false },
	{ "t\xc3\xa9", false },
};

START_TEST(test_task_id_table)
{
	ck_assert_msg(sb_task_id_valid(task_id_cases[_i].in) == task_id_cases[_i].ok, "case '%s'",
	    task_id_cases[_i].in);
}
END_TEST

START_TEST(test_task_id_length)
{
	char id[200];

	memset(id, 'a', sizeof(id));
	id[128] = '\0';
	ck_assert(sb_task_id_valid(id));
	id[128] = 'a';
	id[129] = '\0';
	ck_assert(!sb_task_id_valid(id));
}
END_TEST

START_TEST(test_run_id)
{
	char long_id[80];

	ck_assert(sb_run_id_valid("20261129-101500-a1b2c3"));
	ck_assert(sb_run_id_valid("a.b_c-d"));
	ck_assert(!sb_run_id_valid("latest"));
	ck_assert(!sb_run_id_valid(".hidden"));
	ck_assert(!sb_run_id_valid("_x"));
	ck_assert(!sb_run_id_valid("a/b"));
	ck_assert(!sb_run_id_valid(""));
	memset(long_id, 'a', sizeof(long_id));
	long_id[64] = '\0';
	ck_assert(sb_run_id_valid(long_id));
	long_id[64] = 'a';
	long_id[65] = '\0';
	ck_assert(!sb_run_id_valid(long_id));
}
END_TEST

static const struct {
	const char *in;
	bool ok;
} rel_cases[] = {
	{ "src/main.c", true },
	{ "pocs/crash.bin", true },
	{ "a", true },
	{ "..a/b..", true },	/* names that merely start or end with dots */
	{ "", false },
	{ "/etc/shadow", false },
	{ "../outside", false },
	{ "a/../../b", false },
	{ "a/..", false },
	{ "a//b", false },
	{ "a/./b", false },
	{ "./a", false },
	{ "a/", false },
	{ "a\nb", false },
	{ "a\x1b", false },
};

START_TEST(test_relative_path_table)
{
	ck_assert_msg(sb_path_is_safe_relative(rel_cases[_i].in) == rel_cases[_i].ok, "case %d: '%s'",
	    _i, rel_cases[_i].in);
}
END_TEST

START_TEST(test_relative_path_limits)
{
	char deep[400], longp[5000];
	size_t n = 0;

	for (int i = 0; i < 65; i++) {
		deep[n++] = 'a';
		deep[n++] = '/';
	}
	deep[n - 1] = '\0';
	ck_assert(!sb_path_is_safe_relative(deep)); /* 65 components */
	memset(longp, 'a', sizeof(longp));
	longp[sizeof(longp) - 1] = '\0';
	ck_assert(!sb_path_is_safe_relative(longp));
}
END_TEST

static const struct {
	const char *in;
	const char *out;
} norm_cases[] = {
	{ "/", "/" },
	{ "/a/b", "/a/b" },
	{ "//a///b/", "/a/b" },
	{ "/a/./b/.", "/a/b" },
	{ "/a/../b", "/b" },
	{ "/../../etc", "/etc" },
	{ "/ssebench/scripts/../pocs/x", "/ssebench/pocs/x" },
};

START_TEST(test_normalize_table)
{
	char *got = sb_path_normalize_abs(norm_cases[_i].in);

	ck_assert_str_eq(got, norm_cases[_i].out);
	free(got);
}
END_TEST

START_TEST(test_env_u64)
{
	struct sb_error *err = NULL;
	uint64_t n = 7;

	unsetenv("SB_TEST_N");
	ck_assert_int_eq(sb_env_u64("SB_TEST_N", 1, 10, &n, &err), 0);
	ck_assert_uint_eq(n, 7); /* unset: the caller's default stands */
	setenv("SB_TEST_N", "", 1);
	ck_assert_int_eq(sb_env_u64("SB_TEST_N", 1, 10, &n, &err), 0);
	setenv("SB_TEST_N", "10", 1);
	ck_assert_int_eq(sb_env_u64("SB_TEST_N", 1, 10, &n, &err), 1);
	ck_assert_uint_eq(n, 10);
	for (const char *const *bad = (const char *const[]){ "0", "11", "-1", "1e3", "3s", " 4",
		 "99999999999999999999", NULL };
	     *bad != NULL; bad++) {
		setenv("SB_TEST_N", *bad, 1);
		n = 5;
		ck_assert_int_eq(sb_env_u64("SB_TEST_N", 1, 10, &n, &err), -1);
		ck_assert_ptr_nonnull(strstr(sb_error_message(err), "SB_TEST_N='"));
		sb_error_release(&err);
	}
	unsetenv("SB_TEST_N");
}
END_TEST

START_TEST(test_path_below)
{
	ck_assert_str_eq(sb_path_below("/ssebench/pocs/x", "/ssebench"), "pocs/x");
	ck_assert_str_eq(sb_path_below("/ssebench", "/ssebench"), "");
	ck_assert_ptr_null(sb_path_below("/ssebench2/x", "/ssebench"));
	ck_assert_str_eq(sb_path_below("/x", "/"), "x");
	ck_assert_ptr_null(sb_path_normalize_abs("relative"));
}
END_TEST

static Suite *
parse_suite(void)
{
	Suite *s = suite_create("parse");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_u64_table, 0, (int)SB_ARRAY_SIZE(u64_cases));
	tcase_add_test(tc, test_i64_limits);
	tcase_add_loop_test(tc, test_double_table, 0, (int)SB_ARRAY_SIZE(double_cases));
	tcase_add_loop_test(tc, test_task_id_table, 0, (int)SB_ARRAY_SIZE(task_id_cases));
	tcase_add_test(tc, test_task_id_length);
	tcase_add_test(tc, test_run_id);
	tcase_add_loop_test(tc, test_relative_path_table, 0, (int)SB_ARRAY_SIZE(rel_cases));
	tcase_add_test(tc, test_relative_path_limits);
	tcase_add_loop_test(tc, test_normalize_table, 0, (int)SB_ARRAY_SIZE(norm_cases));
	tcase_add_test(tc, test_path_below);
	tcase_add_test(tc, test_env_u64);
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(parse_suite)

/* SPDX-License-Identifier: Apache-2.0 */
/* test-json.c: duplicate keys, depth, size caps, strict unpacking, atomic writes. */
#include "config.h"

#include <fcntl.h>
#include <string.h>

#include "sb/buf.h"
#include "sb/json.h"
#include "sb/limits.h"
#include "sb/mem.h"

#include "unit.h"

START_TEST(test_duplicate_keys_rejected)
{
	const char *doc = "{\"status\": \"failed\", \"status\": \"passed\"}";
	struct sb_error *err = NULL;
	json_t *v = NULL;

	ck_assert_int_eq(sb_json_load(doc, strlen(doc), 1024, &v, &err), -1);
	ck_assert_ptr_null(v);
	ck_assert_ptr_nonnull(strstr(sb_error_message(err), "duplicate"));
	sb_error_release(&err);
	/* Nested objects too. */
	doc = "{\"a\": {\"b\": 1, \"b\": 2}}";
	ck_assert_int_eq(sb_json_load(doc, strlen(doc), 1024, &v, &err), -1);
	sb_error_release(&err);
}
END_TEST

static char *
nested(size_t depth)
{
	char *s = sb_xmalloc(2 * depth + 1);

	memset(s, '[', depth);
	memset(s + depth, ']', depth);
	s[2 * depth] = '\0';
	return s;
}

START_TEST(test_depth_cap)
{
	char *ok = nested(SB_JSON_DEPTH_MAX), *deep = nested(SB_JSON_DEPTH_MAX + 1);
	char *very = nested(100000);
	struct sb_error *err = NULL;
	json_t *v = NULL;

	ck_assert_int_eq(sb_json_load(ok, strlen(ok), 1 << 20, &v, &err), 0);
	ck_assert_uint_eq(sb_json_depth(v), SB_JSON_DEPTH_MAX);
	json_decref(v);
	ck_assert_int_eq(sb_json_load(deep, strlen(deep), 1 << 20, &v, &err), -1);
	sb_error_release(&err);
	/* 100,000 levels: refused by jansson's own recursion limit, without crashing. */
	ck_assert_int_eq(sb_json_load(very, strlen(very), 1 << 20, &v, &err), -1);
	sb_error_release(&err);
	free(ok);
	free(deep);
	free(very);
}
END_TEST

START_TEST(test_size_cap_and_garbage)
{
	struct sb_error *err = NULL;
	json_t *v = NULL;

	ck_assert_int_eq(sb_json_load("[1,2,3]", 7, 6, &v, &err), -1);
	ck_assert_int_eq(sb_error_code(err), EMSGSIZE);
	sb_error_release(&err);
	ck_assert_int_eq(sb_json_load("{\"a\":", 5, 64, &v, &err), -1);
	sb_error_release(&err);
	/* A NUL inside a string is not silently truncated. */
	ck_assert_int_eq(sb_json_load("\"a\\u0000b\"", 10, 64, &v, &err), -1);
	sb_error_release(&err);
	ck_assert_int_eq(sb_json_load("\"\xff\"", 3, 64, &v, &err), -1); /* not UTF-8 */
	sb_error_release(&err);
	ck_assert_int_eq(sb_json_load("1 2", 3, 64, &v, &err), -1);	 /* trailing junk */
	sb_error_release(&err);
}
END_TEST

START_TEST(test_strict_unpack)
{
	const char *doc = "{\"action\": \"build\", \"grading\": false, \"extra\": 1}";
	struct sb_error *err = NULL;
	const char *action = NULL;
	int grading = 0;
	json_t *v = NULL;

	ck_assert_int_eq(sb_json_load(doc, strlen(doc), 1024, &v, NULL), 0);
	/* "extra" is not in the format: strict unpacking refuses it. */
	ck_assert_int_eq(sb_json_unpack(v, &err, "{s:s, s?b}", "action", &action, "grading",
			     &grading),
	    -1);
	ck_assert_ptr_nonnull(err);
	sb_error_release(&err);
	json_decref(v);

	doc = "{\"action\": \"build\"}";
	ck_assert_int_eq(sb_json_load(doc, strlen(doc), 1024, &v, NULL), 0);
	ck_assert_int_eq(sb_json_unpack(v, &err, "{s:s, s?b}", "action", &action, "grading",
			     &grading),
	    0);
	ck_assert_str_eq(action, "build");
	ck_assert_int_eq(grading, 0);
	/* A wrong type is an error, not a conversion. */
	ck_assert_int_eq(sb_json_unpack(v, &err, "{s:i}", "action", &grading), -1);
	sb_error_release(&err);
	json_decref(v);
}
END_TEST

START_TEST(test_optional_keys_in_order)
{
	/* jansson issue 687: a missing optional key must not make later ones be skipped. */
	const char *doc = "{\"b\": 2, \"c\": 3}";
	json_int_t a = -1, b = -1, c = -1;
	json_t *v = NULL;

	ck_assert_int_eq(sb_json_load(doc, strlen(doc), 1024, &v, NULL), 0);
	ck_assert_int_eq(sb_json_unpack(v, NULL, "{s?I, s?I, s?I}", "a", &a, "b", &b, "c", &c), 0);
	ck_assert_int_eq(a, -1);
	ck_assert_int_eq(b, 2);
	ck_assert_int_eq(c, 3);
	json_decref(v);
}
END_TEST

START_TEST(test_string_or_null_escapes_bad_utf8)
{
	json_t *v = sb_json_string_or_null("bad\xff");
	json_t *n = sb_json_string_or_null(NULL);

	ck_assert(json_is_string(v));
	ck_assert_str_eq(json_string_value(v), "bad\\xff");
	ck_assert(json_is_null(n));
	json_decref(v);
	json_decref(n);
}
END_TEST

START_TEST(test_write_atomic_roundtrip)
{
	char dir[] = "/tmp/sbjson.XXXXXX";
	json_t *v = json_pack("{s:s, s:i}", "status", "passed", "pov_total", 2), *back = NULL;
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_eq(sb_json_write_atomic_at(fd, "result.json", v, 0600, NULL), 0);
	ck_assert_int_eq(sb_json_load_file_at(fd, "result.json", 4096, &back, NULL), 0);
	ck_assert(json_equal(v, back));
	json_decref(v);
	json_decref(back);
	unlinkat(fd, "result.json", 0);
	close(fd);
	rmdir(dir);
}
END_TEST

static Suite *
json_suite(void)
{
	Suite *s = suite_create("json");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_duplicate_keys_rejected);
	tcase_add_test(tc, test_depth_cap);
	tcase_add_test(tc, test_size_cap_and_garbage);
	tcase_add_test(tc, test_strict_unpack);
	tcase_add_test(tc, test_optional_keys_in_order);
	tcase_add_test(tc, test_string_or_null_escapes_bad_utf8);
	tcase_add_test(tc, test_write_atomic_roundtrip);
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(json_suite)

/* SPDX-License-Identifier: Apache-2.0 */
/* test-glob.c: the patterns of a task's protected paths (glob.h), against fnmatch(3) where
 * the two should agree, and against paths chosen to be slow. */
#include "config.h"

#include <fnmatch.h>
#include <string.h>

#include "sb/glob.h"

#include "unit.h"

static const struct {
	const char *pattern, *path;
	bool match;
} cases[] = {
	{ "tests/**", "tests/a.c", true },
	{ "tests/**", "tests/unit/deep/a.c", true },
	{ "tests/**", "tests", true },
	{ "tests/**", "src/tests/a.c", false },
	{ "tests/**", "testsuite/a.c", false },
	{ "tests/", "tests/x/y", true },
	{ "tests/", "tests", true },
	{ "tests/", "test", false },
	{ "**/test_*.c", "test_a.c", true },
	{ "**/test_*.c", "x/y/test_a.c", true },
	{ "**/test_*.c", "x/y/test_a.h", false },
	{ "**/test_*.c", "x/test_/a.c", false },
	{ "**/*_test.c", "lib/foo_test.c", true },
	{ "**/*_test.c", "lib/foo_test.c/x", false },
	{ "a/**/b", "a/b", true },
	{ "a/**/b", "a/x/y/b", true },
	{ "a/**/b", "a/x/y/c", false },
	{ "a/**/b/**/c", "a/1/b/2/b/3/c", true },
	{ "a/**/b/**/c", "a/1/b/2/b/3/d", false },
	{ "CMakeLists.txt", "CMakeLists.txt", true },
	{ "CMakeLists.txt", "sub/CMakeLists.txt", false },
	{ "**/CMakeLists.txt", "sub/CMakeLists.txt", true },
	{ "*.c", "a.c", true },
	{ "*.c", "d/a.c", false },
	{ "*", ".hidden", true },
	{ "tests/**", "tests/.git/config", true },
	{ "t?st/*", "test/x", true },
	{ "t?st/*", "tst/x", false },
	{ "[tT]ests/*", "Tests/x", true },
	{ "[!tT]ests/*", "Tests/x", false },
	{ "[!tT]ests/*", "rests/x", true },
	{ "[a-c]x", "bx", true },
	{ "[a-c]x", "dx", false },
	{ "[]]x", "]x", true },
	{ "a*b*c", "aXXbYYc", true },
	{ "a*b*c", "aXXbYY", false },
	{ "*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false },
	{ "x/**", "x/\n/\t", true },
	{ "**", "anything/at/all", true },
};

START_TEST(test_cases)
{
	ck_assert_msg(sb_glob_check(cases[_i].pattern, NULL) == 0, "check '%s'", cases[_i].pattern);
	ck_assert_msg(sb_glob_match(cases[_i].pattern, cases[_i].path) == cases[_i].match,
	    "'%s' against '%s': want %s", cases[_i].pattern, cases[_i].path,
	    cases[_i].match ? "a match" : "no match");
}
END_TEST

/* Without '**' and a trailing slash the rules are fnmatch's with FNM_PATHNAME. */
START_TEST(test_agrees_with_fnmatch)
{
	static const char *const pats[] = { "*", "*.c", "a/*", "*/b", "a?c/*", "[ab]*/[!x]", "*/*/*",
		"src/*_test.c" };
	static const char *const paths[] = { "a", "a.c", "a/b", "abc/d", "b/x", "a/y", "x/y/z",
		"src/foo_test.c", "src/sub/foo_test.c", ".c", "a/.b" };

	for (size_t i = 0; i < SB_ARRAY_SIZE(pats); i++)
		for (size_t j = 0; j < SB_ARRAY_SIZE(paths); j++)
			ck_assert_msg(sb_glob_match(pats[i], paths[j]) ==
				(fnmatch(pats[i], paths[j], FNM_PATHNAME) == 0),
			    "'%s' against '%s'", pats[i], paths[j]);
}
END_TEST

START_TEST(test_bad_patterns)
{
	static const char *const bad[] = { "", "/abs", "a//b", "./a", "a/../b", "a/.", "[abc",
		"x/[!", "a\nb", "*a*a*a*a*a*a*a*a*a" };
	char long_pattern[SB_GLOB_MAX + 2], deep[SB_GLOB_PARTS_MAX * 2 + 2];

	for (size_t i = 0; i < SB_ARRAY_SIZE(bad); i++) {
		struct sb_error *err = NULL;

		ck_assert_msg(sb_glob_check(bad[i], &err) < 0, "'%s' accepted", bad[i]);
		sb_error_release(&err);
	}
	memset(long_pattern, 'a', sizeof(long_pattern) - 1);
	long_pattern[sizeof(long_pattern) - 1] = '\0';
	ck_assert_int_lt(sb_glob_check(long_pattern, NULL), 0);
	for (size_t i = 0; i < SB_GLOB_PARTS_MAX + 1; i++) {
		deep[2 * i] = 'a';
		deep[2 * i + 1] = '/';
	}
	deep[2 * SB_GLOB_PARTS_MAX + 1] = '\0';
	ck_assert_int_lt(sb_glob_check(deep, NULL), 0);
}
END_TEST

/* The paths are the agent's: a long path of many components against a pattern of many
 * '**' must stay quick (the product of the two sizes at worst, never exponential: an
 * exponential walk would not finish within the test's time limit). */
START_TEST(test_hostile_path)
{
	static char path[4096];

	/* "a/a/.../a": 2000 components. */
	for (size_t i = 0; i < 2000; i++) {
		path[2 * i] = 'a';
		path[2 * i + 1] = '/';
	}
	path[2 * 2000 - 1] = '\0';
	for (int i = 0; i < 20; i++)
		ck_assert(!sb_glob_match("**/a/**/a/**/a/**/a/**/b", path));
	ck_assert(sb_glob_match("**/a/**/a/**/a/**/a/**/a", path));
	ck_assert(!sb_glob_match("**", "/abs"));
	ck_assert(!sb_glob_match("**", ""));
}
END_TEST

static Suite *
glob_suite(void)
{
	Suite *s = suite_create("glob");
	TCase *tc = tcase_create("glob");

	tcase_add_loop_test(tc, test_cases, 0, SB_ARRAY_SIZE(cases));
	tcase_add_test(tc, test_agrees_with_fnmatch);
	tcase_add_test(tc, test_bad_patterns);
	tcase_add_test(tc, test_hostile_path);
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(glob_suite)

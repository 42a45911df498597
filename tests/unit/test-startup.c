/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-startup.c: the server programs' shared command line (src/libsb/startup.c): each
 * program keeps the spellings it had before the code was shared (the MCP server takes no -V,
 * the daemon no -h) and its one argument of its own (--task-permissions).
 */
#include "config.h"

#include <check.h>
#include <stdio.h>

#include "sb/exit.h"
#include "sb/startup.h"
#include "unit.h"

static FILE *usage_out; /* where the last usage went, or NULL */

static void
usage(FILE *out)
{
	usage_out = out;
}

#define BOTH (SB_STARTUP_OPTIONS_SHORT_VERSION | SB_STARTUP_OPTIONS_SHORT_HELP)

static const struct {
	const char *a1, *a2; /* argv[1], argv[2] (NULL: absent) */
	const char *own;
	unsigned flags;
	int rc;
	int usage; /* 0: none, 1: stdout, 2: stderr */
} cases[] = {
	{ NULL, NULL, NULL, BOTH, -1, 0 },
	{ "--version", NULL, NULL, 0, SB_EXIT_OK, 0 },
	{ "-V", NULL, NULL, SB_STARTUP_OPTIONS_SHORT_VERSION, SB_EXIT_OK, 0 },
	{ "-V", NULL, NULL, SB_STARTUP_OPTIONS_SHORT_HELP, SB_EXIT_USAGE, 2 }, /* the MCP server */
	{ "--help", NULL, NULL, 0, SB_EXIT_OK, 1 },
	{ "-h", NULL, NULL, SB_STARTUP_OPTIONS_SHORT_HELP, SB_EXIT_OK, 1 },
	{ "-h", NULL, "--task-permissions", SB_STARTUP_OPTIONS_SHORT_VERSION, SB_EXIT_USAGE, 2 },
	{ "--bogus", NULL, NULL, BOTH, SB_EXIT_USAGE, 2 },
	{ "--task-permissions", NULL, "--task-permissions", 0, -1, 0 },
	{ "--task-permissions", "x", "--task-permissions", 0, SB_EXIT_USAGE, 2 },
	{ "--task-permissions", NULL, NULL, BOTH, SB_EXIT_USAGE, 2 },
	{ "--version", "x", NULL, 0, SB_EXIT_OK, 0 }, /* only argv[1] is read for these */
};

START_TEST(test_options_table)
{
	char prog[] = "prog", a1[32] = "", a2[32] = "";
	char *argv[] = { prog, a1, a2, NULL };
	int argc = cases[_i].a1 == NULL ? 1 : cases[_i].a2 == NULL ? 2 : 3;
	FILE *want = cases[_i].usage == 1 ? stdout : cases[_i].usage == 2 ? stderr : NULL;

	snprintf(a1, sizeof(a1), "%s", cases[_i].a1 ? cases[_i].a1 : "");
	snprintf(a2, sizeof(a2), "%s", cases[_i].a2 ? cases[_i].a2 : "");
	argv[argc] = NULL;
	usage_out = NULL;
	ck_assert_int_eq(
	    sb_startup_options(argc, argv, "prog", usage, cases[_i].own, cases[_i].flags),
	    cases[_i].rc);
	ck_assert_msg(usage_out == want, "case %d: usage went to the wrong place", _i);
}
END_TEST

static Suite *
startup_suite(void)
{
	Suite *s = suite_create("startup");
	TCase *tc = tcase_create("options");

	tcase_add_loop_test(tc, test_options_table, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(startup_suite)

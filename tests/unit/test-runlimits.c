/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-runlimits.c: a run's resource limits fail closed. Every bad value (0, negative, NaN,
 * infinite, garbage, out of range) gives the default, never "unlimited"; good values are
 * honoured in Docker's form.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sb/common.h"
#include "sb/runlimits.h"

#include "unit.h"

static const struct {
	enum sb_run_limit which;
	const char *in;
	const char *want; /* NULL: the default */
} cases[] = {
	/* memory, in bytes */
	{ SB_RUN_LIMIT_MEMORY, "8g", "8589934592" },
	{ SB_RUN_LIMIT_MEMORY, "512m", "536870912" },
	{ SB_RUN_LIMIT_MEMORY, "512M", "536870912" },
	{ SB_RUN_LIMIT_MEMORY, "1.5g", "1610612736" },
	{ SB_RUN_LIMIT_MEMORY, "1073741824", "1073741824" },
	{ SB_RUN_LIMIT_MEMORY, "1048576k", "1073741824" },
	{ SB_RUN_LIMIT_MEMORY, "1t", "1099511627776" },
	{ SB_RUN_LIMIT_MEMORY, "0", NULL },
	{ SB_RUN_LIMIT_MEMORY, "0g", NULL },
	{ SB_RUN_LIMIT_MEMORY, "-1", NULL },
	{ SB_RUN_LIMIT_MEMORY, "-8g", NULL },
	{ SB_RUN_LIMIT_MEMORY, "nan", NULL },
	{ SB_RUN_LIMIT_MEMORY, "NaN", NULL },
	{ SB_RUN_LIMIT_MEMORY, "inf", NULL },
	{ SB_RUN_LIMIT_MEMORY, "-inf", NULL },
	{ SB_RUN_LIMIT_MEMORY, "infinity", NULL },
	{ SB_RUN_LIMIT_MEMORY, "1e999", NULL },
	{ SB_RUN_LIMIT_MEMORY, "unlimited", NULL },
	{ SB_RUN_LIMIT_MEMORY, "8 g", NULL },
	{ SB_RUN_LIMIT_MEMORY, "8gb", NULL },
	{ SB_RUN_LIMIT_MEMORY, "g", NULL },
	{ SB_RUN_LIMIT_MEMORY, "0x10g", NULL },
	{ SB_RUN_LIMIT_MEMORY, "", NULL },
	{ SB_RUN_LIMIT_MEMORY, "1m", NULL },	/* below the floor: a run that cannot grade */
	{ SB_RUN_LIMIT_MEMORY, "2t", NULL },	/* above the ceiling */
	/* CPUs */
	{ SB_RUN_LIMIT_CPUS, "2", "2" },
	{ SB_RUN_LIMIT_CPUS, "1.5", "1.5" },
	{ SB_RUN_LIMIT_CPUS, "0.5", "0.5" },
	{ SB_RUN_LIMIT_CPUS, "0.25", "0.25" },
	{ SB_RUN_LIMIT_CPUS, "4.000", "4" },
	{ SB_RUN_LIMIT_CPUS, "0", NULL },
	{ SB_RUN_LIMIT_CPUS, "0.0", NULL },
	{ SB_RUN_LIMIT_CPUS, "0.001", NULL },
	{ SB_RUN_LIMIT_CPUS, "-2", NULL },
	{ SB_RUN_LIMIT_CPUS, "nan", NULL },
	{ SB_RUN_LIMIT_CPUS, "inf", NULL },
	{ SB_RUN_LIMIT_CPUS, "1e309", NULL },
	{ SB_RUN_LIMIT_CPUS, "two", NULL },
	{ SB_RUN_LIMIT_CPUS, "2cpus", NULL },
	{ SB_RUN_LIMIT_CPUS, "100000", NULL },
	/* pids */
	{ SB_RUN_LIMIT_PIDS, "4096", "4096" },
	{ SB_RUN_LIMIT_PIDS, "64", "64" },
	{ SB_RUN_LIMIT_PIDS, "100000", "100000" },
	{ SB_RUN_LIMIT_PIDS, "0", NULL },
	{ SB_RUN_LIMIT_PIDS, "-1", NULL },
	{ SB_RUN_LIMIT_PIDS, "nan", NULL },
	{ SB_RUN_LIMIT_PIDS, "inf", NULL },
	{ SB_RUN_LIMIT_PIDS, "1.5", NULL },
	{ SB_RUN_LIMIT_PIDS, "1e3", NULL },
	{ SB_RUN_LIMIT_PIDS, "10", NULL },
	{ SB_RUN_LIMIT_PIDS, "99999999999999999999", NULL },
	{ SB_RUN_LIMIT_PIDS, "4096x", NULL },
	{ SB_RUN_LIMIT_PIDS, " 4096", NULL },
};

START_TEST(test_resolve)
{
	const struct sb_run_limit_spec *sp = sb_run_limit_spec(cases[_i].which);
	bool fell_back = false;
	char *got = sb_run_limit_resolve(cases[_i].which, cases[_i].in, &fell_back);
	char *def = sb_run_limit_resolve(cases[_i].which, sp->def, NULL);

	if (cases[_i].want != NULL) {
		ck_assert_msg(strcmp(got, cases[_i].want) == 0, "%s='%s': got '%s', want '%s'",
		    sp->setting, cases[_i].in, got, cases[_i].want);
		ck_assert(!fell_back);
	} else {
		ck_assert_msg(strcmp(got, def) == 0, "%s='%s': got '%s', want the default '%s'",
		    sp->setting, cases[_i].in, got, def);
		ck_assert_msg(fell_back, "%s='%s' was not reported as a fallback", sp->setting,
		    cases[_i].in);
	}
	free(got);
	free(def);
}
END_TEST

/* Whatever came in, what goes to Docker is a positive number (0 and -1 mean unlimited). */
START_TEST(test_never_unlimited)
{
	static const char *const bad[] = { NULL, "", "0", "-1", "nan", "inf", "-inf", "garbage",
		"0.0", "-0", "+0", "1e-300" };

	for (int w = 0; w < SB_RUN_LIMIT_COUNT; w++)
		for (size_t i = 0; i < SB_ARRAY_SIZE(bad); i++) {
			char *got = sb_run_limit_resolve((enum sb_run_limit)w, bad[i], NULL);

			ck_assert_msg(strtod(got, NULL) > 0, "limit %d, value '%s': '%s'", w,
			    bad[i] ? bad[i] : "(unset)", got);
			free(got);
		}
}
END_TEST

START_TEST(test_unset_is_default)
{
	for (int w = 0; w < SB_RUN_LIMIT_COUNT; w++) {
		bool fell_back = false;
		char *a = sb_run_limit_resolve((enum sb_run_limit)w, NULL, &fell_back);
		char *b = sb_run_limit_resolve((enum sb_run_limit)w,
		    sb_run_limit_spec((enum sb_run_limit)w)->def, NULL);

		ck_assert_str_eq(a, b);
		ck_assert(fell_back);
		free(a);
		free(b);
	}
	ck_assert_ptr_null(sb_run_limit_spec(SB_RUN_LIMIT_COUNT));
	ck_assert_str_eq(sb_run_limit_spec(SB_RUN_LIMIT_MEMORY)->def, SB_RUN_MEMORY_DEFAULT);
	ck_assert_str_eq(sb_run_limit_spec(SB_RUN_LIMIT_PIDS)->flag, "--pids-limit");
}
END_TEST

static Suite *
runlimits_suite(void)
{
	Suite *s = suite_create("runlimits");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_resolve, 0, (int)SB_ARRAY_SIZE(cases));
	tcase_add_test(tc, test_never_unlimited);
	tcase_add_test(tc, test_unset_is_default);
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(runlimits_suite)

/* SPDX-License-Identifier: Apache-2.0 */
/* unit.h: what the check-based unit tests share. */
#ifndef SB_TESTS_UNIT_H
#define SB_TESTS_UNIT_H

#include <check.h>
#include <stdlib.h>

/* main() for a test binary made of one suite. CK_FORK=no runs in-process (for gdb). */
#define SB_UNIT_MAIN(suite_fn)                                   \
	int main(void)                                           \
	{                                                        \
		SRunner *sr = srunner_create(suite_fn());         \
		int failed;                                      \
		srunner_run_all(sr, CK_ENV);                     \
		failed = srunner_ntests_failed(sr);              \
		srunner_free(sr);                                \
		return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE; \
	}

/* The directory of test fixtures (set by the Makefile), or the source tree's. */
static inline const char *
sb_test_fixtures(void)
{
	const char *d = getenv("SB_FIXTURES");

	return d != NULL ? d : SB_SOURCE_DIR "/tests/fixtures";
}

#endif

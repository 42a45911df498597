/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-prompt.c: the task prompt: a snapshot of a pilot task's prompt, byte for byte; the
 * same view gives the same bytes; fields that are empty or "none" are left out; fences
 * outgrow the backticks inside; the build script's path in the test script is replaced;
 * nothing outside the public view can appear; a view without its essentials is refused.
 */
#include "config.h"

#include <fcntl.h>
#include <string.h>

#include "sb/buf.h"
#include "sb/fs.h"
#include "sb/json.h"
#include "sb/mem.h"
#include "sb/prompt.h"

#include "unit.h"

static json_t *
load_fixture(const char *name)
{
	_cleanup_free_ char *dir = sb_xasprintf("%s/prompt", sb_test_fixtures());
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	json_t *j = NULL;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(sb_json_load_file_at(fd, name, 1 << 24, &j, NULL), 0);
	return j;
}

/* SB_UPDATE_SNAPSHOTS=1 rewrites the snapshot instead (then read the diff before committing). */
START_TEST(test_snapshot)
{
	_cleanup_free_ char *dir = sb_xasprintf("%s/prompt", sb_test_fixtures());
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_buf_ struct sb_buf want = SB_BUF_INIT(1 << 24);
	json_t *view = load_fixture("cjson-CVE-2023-53154.project.json");
	_cleanup_free_ char *p = sb_prompt_build(view, NULL), *again = sb_prompt_build(view, NULL);
	const char *snap = "cjson-CVE-2023-53154.prompt.md";

	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(p, again);
	if (getenv("SB_UPDATE_SNAPSHOTS") != NULL)
		ck_assert_int_eq(sb_write_file_atomic_at(fd, snap, p, strlen(p), 0644, NULL), 0);
	ck_assert_int_eq(sb_read_file_at(fd, snap, 0, &want, NULL), 0);
	ck_assert_msg(strcmp(p, want.s) == 0, "the prompt differs from %s/%s", dir, snap);
	json_decref(view);
}
END_TEST

START_TEST(test_sections_and_what_stays_out)
{
	json_t *view = load_fixture("cjson-CVE-2023-53154.project.json");
	_cleanup_free_ char *p = NULL;
	const char *order[] = { "# Task\n", "## Objective\n", "## Requirements\n", "## Validation\n",
		"## Vulnerability\n", "### Bug description\n", "### Report 1 of 2\n",
		"### Report 2 of 2\n", "## Project\n", "- Source code path: /src/cjson\n",
		"## Build and test\n" };
	const char *at;

	/* Keys the daemon never serves: even if a view had them, the prompt would not show them. */
	json_object_set_new(view, "patch", json_string("REFERENCE-PATCH-MARKER"));
	json_object_set_new(view, "run_script", json_string("RUN-SCRIPT-MARKER"));
	p = sb_prompt_build(view, NULL);
	ck_assert_ptr_nonnull(p);
	at = p;
	for (size_t i = 0; i < SB_ARRAY_SIZE(order); i++) {
		const char *next = strstr(at, order[i]);

		ck_assert_msg(next != NULL, "section '%s' missing or out of order", order[i]);
		at = next;
	}
	ck_assert_ptr_null(strstr(p, "MARKER"));
	/* PoC paths are in the view, but the prompt does not point at them. */
	ck_assert_ptr_null(strstr(p, "trailing-comma.json"));
	/* The test script's call of the build script is shown as a pointer to the script. */
	ck_assert_ptr_null(strstr(p, "/ssebench/scripts/build.sh"));
	ck_assert_ptr_nonnull(strstr(p, "# (the build script above)"));
	ck_assert_ptr_null(strstr(p, "test_patch"));
	json_decref(view);
}
END_TEST

START_TEST(test_empty_and_none_left_out)
{
	json_t *view = json_pack("{s:s, s:s, s:s, s:{s:s, s:s, s:[s, s, s]}, s:n, s:s}", "project",
	    "demo", "language", "c", "source", "/src/demo", "task_description", "issue", "  None \n",
	    "bug_description", "", "crash_report", "none", "only report", "   ", "build_script",
	    "test_script", "");
	_cleanup_free_ char *p = sb_prompt_build(view, NULL);

	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_null(strstr(p, "### Issue"));
	ck_assert_ptr_null(strstr(p, "### Bug description"));
	/* One report is left, and it is 1 of 1. */
	ck_assert_ptr_nonnull(strstr(p, "### Report 1 of 1\n\n```\nonly report\n```\n"));
	ck_assert_ptr_null(strstr(p, "Report 2"));
	ck_assert_ptr_null(strstr(p, "## Build and test"));
	json_decref(view);

	/* Nothing at all: a note says so. */
	view = json_pack("{s:s, s:s, s:s, s:{s:n, s:n, s:n}}", "project", "demo", "language", "c",
	    "source", "/src/demo", "task_description", "issue", "bug_description", "crash_report");
	free(p);
	p = sb_prompt_build(view, NULL);
	ck_assert_ptr_nonnull(strstr(p, "The task gives no description of the vulnerability"));
	json_decref(view);
}
END_TEST

START_TEST(test_fence_outgrows_backticks)
{
	json_t *view = json_pack("{s:s, s:s, s:s, s:{s:[s]}}", "project", "demo", "language", "c",
	    "source", "/s", "task_description", "crash_report", "a ````` b\n```\nc");
	_cleanup_free_ char *p = sb_prompt_build(view, NULL);

	ck_assert_ptr_nonnull(strstr(p, "\n``````\na ````` b\n```\nc\n``````\n"));
	json_decref(view);
}
END_TEST

START_TEST(test_missing_essentials_refused)
{
	json_t *view = json_pack("{s:s, s:s}", "project", "demo", "language", "c");
	struct sb_error *err = NULL;

	ck_assert_ptr_null(sb_prompt_build(view, &err));
	ck_assert_int_eq(sb_error_code(err), EINVAL);
	sb_error_release(&err);
	json_decref(view);
	ck_assert_ptr_null(sb_prompt_build(NULL, &err));
	sb_error_release(&err);
}
END_TEST

static Suite *
prompt_suite(void)
{
	Suite *s = suite_create("prompt");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_snapshot);
	tcase_add_test(tc, test_sections_and_what_stays_out);
	tcase_add_test(tc, test_empty_and_none_left_out);
	tcase_add_test(tc, test_fence_outgrows_backticks);
	tcase_add_test(tc, test_missing_essentials_refused);
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(prompt_suite)

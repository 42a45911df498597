/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-task.c: the strict schema of sse/config.yaml: every upstream pilot config is
 * accepted, and each malformed input is refused with the right position and message.
 */
#include "config.h"

#include <fcntl.h>
#include <string.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/diag.h"
#include "sb/fs.h"
#include "sb/json.h"
#include "sb/limits.h"
#include "sb/mem.h"
#include "sb/task.h"
#include "sb/taskdir.h"

#include "unit.h"

START_TEST(test_every_upstream_config_is_accepted)
{
	char *dir = sb_xasprintf("%s/upstream-configs", sb_test_fixtures());
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char **names = NULL;
	size_t n = 0, checked = 0;

	ck_assert_msg(fd >= 0, "no fixtures at %s", dir);
	ck_assert_int_eq(sb_list_dir_at(fd, ".", 1000, &names, &n, NULL), 0);
	for (size_t i = 0; i < n; i++) {
		char *rel = sb_xasprintf("%s/config.yaml", names[i]);
		struct sb_buf b = SB_BUF_INIT(SB_CONFIG_FILE_MAX);
		struct sb_diags d = SB_DIAGS_INIT;
		struct sb_task_config *c;

		if (sb_read_file_at(fd, rel, 0, &b, NULL) < 0) {
			free(rel);
			continue; /* README.md */
		}
		c = sb_task_config_parse(b.s, b.len, rel, &d);
		if (d.n > 0)
			sb_diags_print(&d, stderr);
		ck_assert_msg(d.n == 0, "%s: %zu problems", rel, d.n);
		ck_assert_str_eq(c->id.s, names[i]);
		ck_assert_ptr_nonnull(c->language.s);
		checked++;
		sb_task_config_free(c);
		sb_diags_release(&d);
		sb_buf_release(&b);
		free(rel);
	}
	ck_assert_uint_eq(checked, 49);
	sb_strv_free(names);
	close(fd);
	free(dir);
}
END_TEST

#define GOOD_HEAD                                  \
	"id: demo-1\n"                             \
	"project: demo\n"                          \
	"repository: https://example.org/demo\n"   \
	"language: c\n"                            \
	"source: /src/demo\n"

#define GOOD_TAIL                                  \
	"task_description:\n"                      \
	"  crash_report:\n"                        \
	"    - reports/asan.txt\n"                 \
	"scripts:\n"                               \
	"  build: scripts/build.sh\n"              \
	"  run: scripts/run.sh\n"                  \
	"  test: scripts/test.sh\n"                \
	"files:\n"                                 \
	"  patch: diffs/patch.diff\n"              \
	"  future_test: diffs/test.diff\n"         \
	"  poc:\n"                                 \
	"    - pocs/poc.bin\n"

START_TEST(test_good_config_fields)
{
	const char *doc = GOOD_HEAD GOOD_TAIL "reference:\n  - 'https://x.org/a '\n"
					      "originality: public\n"
					      "trigger_commit: 1234567\n";
	struct sb_diags d = SB_DIAGS_INIT;
	struct sb_task_config *c = sb_task_config_parse(doc, strlen(doc), "c.yaml", &d);
	struct sb_task_path_ref *refs = NULL;
	size_t n;
	json_t *j;

	sb_diags_print(&d, stderr);
	ck_assert_uint_eq(d.n, 0);
	ck_assert_str_eq(c->source.s, "/src/demo");
	ck_assert_str_eq(c->reference.v[0].s, "https://x.org/a"); /* stripped */
	ck_assert_str_eq(c->trigger_commit.s, "1234567");	    /* digits stay text */
	ck_assert_uint_eq(sb_task_checks(c), SB_CHECK_BUILD | SB_CHECK_POC |
					       SB_CHECK_FUNCTION_TEST | SB_CHECK_INTENT_TEST);
	n = sb_task_config_paths(c, &refs);
	ck_assert_uint_eq(n, 7);
	ck_assert_str_eq(refs[0].key, "task_description.crash_report[0]");
	ck_assert_str_eq(refs[6].key, "files.poc[0]");
	ck_assert_str_eq(refs[6].path->s, "pocs/poc.bin");
	ck_assert_uint_eq(refs[6].path->line, 17);
	sb_task_path_refs_free(refs, n);
	j = sb_task_config_to_json(c);
	ck_assert(json_is_null(json_object_get(j, "sanitizer")));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "scripts"), "run")),
	    "scripts/run.sh");
	ck_assert_uint_eq(json_object_size(j), 15);
	json_decref(j);
	sb_task_config_free(c);
}
END_TEST

/* The protected paths: the task's own patterns, then the defaults unless turned off. */
START_TEST(test_protected_paths)
{
	const char *doc = GOOD_HEAD GOOD_TAIL "protected:\n  - result/**\n  - runtest.c\n";
	const char *off = GOOD_HEAD GOOD_TAIL "protected: [result/**]\nprotected_defaults: false\n";
	struct sb_diags d = SB_DIAGS_INIT;
	struct sb_task_config *c = sb_task_config_parse(doc, strlen(doc), "c.yaml", &d);
	const char *why = NULL;
	json_t *j;

	sb_diags_print(&d, stderr);
	ck_assert_uint_eq(d.n, 0);
	ck_assert(sb_task_path_protected(c, "result/a/b.out", &why));
	ck_assert_str_eq(why, "result/**");
	ck_assert(sb_task_path_protected(c, "runtest.c", &why));
	ck_assert(sb_task_path_protected(c, "tests/unit/x.c", &why));
	ck_assert_str_eq(why, "tests/**");
	ck_assert(sb_task_path_protected(c, "lib/sub/test/data.xml", &why));
	ck_assert(sb_task_path_protected(c, "src/foo_test.c", &why));
	ck_assert(!sb_task_path_protected(c, "src/foo.c", NULL));
	ck_assert(!sb_task_path_protected(c, "CMakeLists.txt", NULL)); /* build files: not by default */
	ck_assert(!sb_task_path_protected(c, "testing.c", NULL));
	j = sb_task_config_to_json(c);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "protected")), 2);
	json_decref(j);
	sb_task_config_free(c);
	c = sb_task_config_parse(off, strlen(off), "c.yaml", &d);
	sb_diags_print(&d, stderr);
	ck_assert_uint_eq(d.n, 0);
	ck_assert(sb_task_path_protected(c, "result/x", NULL));
	ck_assert(!sb_task_path_protected(c, "tests/unit/x.c", NULL));
	sb_task_config_free(c);
	sb_diags_release(&d);
}
END_TEST

START_TEST(test_checks_derivation)
{
	const char *doc = GOOD_HEAD "task_description: {issue: 'x'}\n"
				    "scripts: {run: r.sh, test: t.sh}\n"
				    "files: {}\n";
	struct sb_diags d = SB_DIAGS_INIT;
	struct sb_task_config *c = sb_task_config_parse(doc, strlen(doc), "c.yaml", &d);

	ck_assert_uint_eq(d.n, 0);
	/* A run script without PoCs is no PoC check; a test without future_test no intent. */
	ck_assert_uint_eq(sb_task_checks(c), SB_CHECK_FUNCTION_TEST);
	sb_task_config_free(c);
}
END_TEST

/* Freeing no config is nothing (sb_task_load does it for a folder it could not open). It
 * once took member addresses of the NULL pointer first: undefined behaviour that only a
 * build with --enable-ubsan (-fno-sanitize-recover) turns into a failure here. */
START_TEST(test_free_null)
{
	sb_task_config_free(NULL);
}
END_TEST

/* Malformed configs: each must produce a problem at (line, col) containing msg. */
static const struct {
	const char *doc;
	unsigned line, col;
	const char *msg;
} bad_cases[] = {
	/* 0 */ { "", 0, 0, "expected a mapping of task settings, got an empty document" },
	/* 1 */ { "- a\n- b\n", 1, 1, "got a list" },
	/* 2 */ { "id: [\n", 2, 1, "invalid YAML" },
	/* 3 */ { GOOD_HEAD GOOD_TAIL "extra: 1\n", 18, 1, "unknown key 'extra'" },
	/* 4 */ { GOOD_HEAD GOOD_TAIL "sanitzer: address\n", 18, 1, "did you mean 'sanitizer'" },
	/* 5 */ { "project: demo\nrepository: https://e.org\nlanguage: c\nsource: /s\n" GOOD_TAIL,
		    1, 1, "missing required key 'id'" },
	/* 6 */ { "id: -bad\nproject: p\nrepository: https://e.org\nlanguage: c\nsource: /s\n"
		  GOOD_TAIL, 1, 5, "is not a task id" },
	/* 7 */ { "id: a b\nproject: p\nrepository: https://e.org\nlanguage: c\nsource: /s\n"
		  GOOD_TAIL, 1, 5, "is not a task id" },
	/* 8 */ { "id: x\nproject: '  '\nrepository: https://e.org\nlanguage: c\nsource: /s\n"
		  GOOD_TAIL, 2, 10, "project: must not be blank" },
	/* 9 */ { "id: x\nproject: p\nrepository: http://e.org\nlanguage: c\nsource: /s\n"
		  GOOD_TAIL, 3, 13, "not an https:// URL" },
	/* 10 */ { "id: x\nproject: p\nrepository: https://e.org/a b\nlanguage: c\nsource: /s\n"
		   GOOD_TAIL, 3, 13, "not an https:// URL" },
	/* 11 */ { "id: x\nproject: p\nrepository: https://e.org\nlanguage: python\nsource: /s\n"
		   GOOD_TAIL, 4, 11, "'python' is not one of c, go, rust" },
	/* 12 */ { "id: x\nproject: p\nrepository: https://e.org\nlanguage: c\nsource: src/x\n"
		   GOOD_TAIL, 5, 9, "not an absolute path" },
	/* 13 */ { "id: x\nproject: p\nrepository: https://e.org\nlanguage: c\nsource: /s\n"
		   "task_description: {issue: ''}\nscripts: {}\nfiles: {}\n", 6, 19,
		   "needs at least one of issue, crash_report, bug_description" },
	/* 14 */ { GOOD_HEAD "task_description: 'fix it'\nscripts: {}\nfiles: {}\n", 6, 19,
		   "task_description: expected a mapping, got a string" },
	/* 15 */ { GOOD_HEAD "task_description: {issue: x}\nscripts:\nfiles: {}\n", 7, 9,
		   "scripts: expected a mapping, got null" },
	/* 16 */ { GOOD_HEAD "task_description: {issue: x}\nscripts: {}\n", 1, 1,
		   "missing required key 'files'" },
	/* 17 */ { GOOD_HEAD "task_description: {issue: x}\nscripts: {build: /abs/b.sh}\n"
		   "files: {}\n", 7, 18, "scripts.build: '/abs/b.sh': absolute path" },
	/* 18 */ { GOOD_HEAD "task_description: {issue: x}\nscripts: {build: ../b.sh}\n"
		   "files: {}\n", 7, 18, "'..' component" },
	/* 19 */ { GOOD_HEAD "task_description: {issue: x}\nscripts: {}\n"
		   "files: {poc: [pocs/a, ../../etc/shadow]}\n", 8, 23, "files.poc[1]" },
	/* 20 */ { GOOD_HEAD "task_description: {issue: x}\nscripts: {}\nfiles: {poc: pocs/a}\n",
		   8, 14, "files.poc: expected a list, got a string" },
	/* 21 */ { GOOD_HEAD "task_description: {issue: x}\nscripts: {}\nfiles: {patch: [a]}\n",
		   8, 16, "files.patch: expected a string, got a list" },
	/* 22 */ { GOOD_HEAD "task_description: {issue: x}\nscripts: {}\nfiles: {}\n"
		   "sanitizer: true\n", 9, 12, "expected a string, got a boolean" },
	/* 23 */ { GOOD_HEAD "task_description: {issue: x}\nscripts: {}\nfiles: {}\n"
		   "originality: stolen\n", 9, 14, "not one of public, crafted" },
	/* 24 */ { GOOD_HEAD "task_description: {issue: x}\nscripts: {}\nfiles: {}\n"
		   "reference: [https://a, null]\n", 9, 24, "reference[1]: must be set" },
	/* 25 */ { GOOD_HEAD "task_description: {issue: x}\nscripts: {}\nfiles: {}\nid: y\n", 9,
		   1, "duplicate key 'id'" },
	/* 26 */ { GOOD_HEAD "task_description: {issue: x, extra: 1}\nscripts: {}\nfiles: {}\n", 6,
		   30, "unknown key 'task_description.extra'" },
	/* 27 */ { GOOD_HEAD "task_description: {issue: x}\nscripts: {build: a//b.sh}\n"
		   "files: {}\n", 7, 18, "empty component" },
	/* 28 */ { GOOD_HEAD "task_description: {issue: x}\nscripts: {}\nfiles: {}\n"
		   "type: &t UAF\n", 9, 7, "anchors" },
	/* 29 */ { GOOD_HEAD "task_description: {issue: x}\nscripts: {}\nfiles: {}\n---\nid: z\n",
		   9, 1, "more than one YAML document" },
	/* 30 */ { GOOD_HEAD "task_description: {issue: x}\nscripts: {test: ''}\nfiles: {}\n", 7,
		   17, "empty path" },
	/* 31 */ { GOOD_HEAD "task_description: {crash_report: [reports/x, \"a\\nb\"]}\n"
		   "scripts: {}\nfiles: {}\n", 6, 46, "control character" },
	/* 32 */ { GOOD_HEAD "task_description: {issue: x}\nscripts: {}\nfiles: {}\n"
		   "language: go\n", 9, 1, "duplicate key 'language'" },
	/* 33 */ { GOOD_HEAD "task_description: {issue: x}\nscripts: {}\nfiles: {}\n"
		   "protected: [tests/**, /abs/**]\n", 9, 23, "protected[1]: '/abs/**' is absolute" },
	/* 34 */ { GOOD_HEAD "task_description: {issue: x}\nscripts: {}\nfiles: {}\n"
		   "protected: ['[ab']\n", 9, 13, "a '[' that is not closed" },
	/* 35 */ { GOOD_HEAD "task_description: {issue: x}\nscripts: {}\nfiles: {}\n"
		   "protected: tests/**\n", 9, 12, "protected: expected a list" },
	/* 36 */ { GOOD_HEAD "task_description: {issue: x}\nscripts: {}\nfiles: {}\n"
		   "protected_defaults: maybe\n", 9, 21, "'maybe' is not true or false" },
	/* 37 */ { GOOD_HEAD "task_description: {issue: x}\nscripts: {}\nfiles: {}\n"
		   "protected: [a/../b]\n", 9, 13, "'.' or '..' component" },
};

START_TEST(test_bad_config_table)
{
	struct sb_diags d = SB_DIAGS_INIT;
	struct sb_task_config *c;
	bool found = false;

	c = sb_task_config_parse(bad_cases[_i].doc, strlen(bad_cases[_i].doc), "c.yaml", &d);
	ck_assert_msg(d.n > 0, "case %d accepted", _i);
	for (size_t i = 0; i < d.n; i++)
		if (d.v[i].line == bad_cases[_i].line && d.v[i].col == bad_cases[_i].col &&
		    strstr(d.v[i].msg, bad_cases[_i].msg) != NULL)
			found = true;
	if (!found)
		sb_diags_print(&d, stderr);
	ck_assert_msg(found, "case %d: no problem '%s' at %u:%u", _i, bad_cases[_i].msg,
	    bad_cases[_i].line, bad_cases[_i].col);
	sb_task_config_free(c);
	sb_diags_release(&d);
}
END_TEST

START_TEST(test_all_problems_reported_at_once)
{
	const char *doc = "id: BAD ID\nproject: ''\nrepository: ftp://x\nlanguage: cobol\n"
			  "source: rel\ntask_description: {}\nscripts: {build: /x}\nfiles: {}\n"
			  "bogus: 1\n";
	struct sb_diags d = SB_DIAGS_INIT;
	struct sb_task_config *c = sb_task_config_parse(doc, strlen(doc), "c.yaml", &d);

	/* id, project, repository, language, source, description, build, unknown key */
	ck_assert_uint_eq(d.n, 8);
	sb_task_config_free(c);
	sb_diags_release(&d);
}
END_TEST

/* The canary a dataset gets without one of its own: fixed by its version, so the same
 * dataset has the same canary on every machine (the scan and dataset verify look for it). */
START_TEST(test_dataset_canary)
{
	char *c = sb_dataset_canary_default("pilot-deb12-v1");

	ck_assert_str_eq(c, "SSEBENCH-CANARY-b20ed034d426bd394c2966684409d5f1");
	ck_assert(sb_canary_valid(c));
	free(c);
	c = sb_dataset_canary_default(NULL);
	ck_assert_str_eq(c, "SSEBENCH-CANARY-402fa2ffcf497522f472cad923ae2d04");
	free(c);
	ck_assert(sb_canary_valid("abcdefghijklmnop"));
	ck_assert(!sb_canary_valid("abcdefghijklmno"));	/* 15 */
	ck_assert(!sb_canary_valid("abcdefgh ijklmnop"));	/* a space */
	ck_assert(!sb_canary_valid("abcdefgh\nijklmnop"));
	ck_assert(!sb_canary_valid(NULL));
}
END_TEST

static Suite *
task_suite(void)
{
	Suite *s = suite_create("task");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_every_upstream_config_is_accepted);
	tcase_add_test(tc, test_good_config_fields);
	tcase_add_test(tc, test_checks_derivation);
	tcase_add_test(tc, test_free_null);
	tcase_add_test(tc, test_protected_paths);
	tcase_add_loop_test(tc, test_bad_config_table, 0, (int)SB_ARRAY_SIZE(bad_cases));
	tcase_add_test(tc, test_all_problems_reported_at_once);
	tcase_add_test(tc, test_dataset_canary);
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(task_suite)

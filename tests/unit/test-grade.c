/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-grade.c: the evaluator's judgement of test counts and of the oracle facts
 * (evaluator/grade.c, docs/grading.md), driven with plain values.
 */
#include "config.h"

#include <string.h>

#include "../../evaluator/grade.h"

#include "unit.h"

START_TEST(test_count_line)
{
	static const struct {
		const char *out;
		unsigned lines;
		bool valid;
		long long ran, passed;
	} cases[] = {
		{ "tests done\nSSEBENCH-TESTS: ran=19 passed=19\n", 1, true, 19, 19 },
		{ "SSEBENCH-TESTS: ran=3 passed=2", 1, true, 3, 2 },
		{ "SSEBENCH-TESTS: ran=3 passed=3\r\n", 1, true, 3, 3 },
		{ "SSEBENCH-TESTS: ran=0 passed=0\n", 1, true, 0, 0 },
		{ "no count here\n", 0, false, 0, 0 },
		{ "", 0, false, 0, 0 },
		/* Forgeries and malformed lines: never a count. */
		{ "SSEBENCH-TESTS: ran=99 passed=99\nSSEBENCH-TESTS: ran=1 passed=1\n", 2, false, 0, 0 },
		{ "SSEBENCH-TESTS: ran=2 passed=3\n", 1, false, 0, 0 },
		{ "SSEBENCH-TESTS: ran=07 passed=7\n", 1, false, 0, 0 },
		{ "SSEBENCH-TESTS: ran=-1 passed=0\n", 1, false, 0, 0 },
		{ "SSEBENCH-TESTS: ran=5 passed=5 extra\n", 1, false, 0, 0 },
		{ "SSEBENCH-TESTS:ran=5 passed=5\n", 1, false, 0, 0 },
		{ "SSEBENCH-TESTS: ran=99999999999999999999 passed=1\n", 1, false, 0, 0 },
		{ "  SSEBENCH-TESTS: ran=5 passed=5\n", 0, false, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct grade_tests t;

		grade_tests_parse(cases[i].out, &t);
		ck_assert_msg(t.lines == cases[i].lines, "case %zu: %u lines", i, t.lines);
		ck_assert_msg(t.valid == cases[i].valid, "case %zu: valid %d", i, t.valid);
		if (t.valid) {
			ck_assert_int_eq(t.ran, cases[i].ran);
			ck_assert_int_eq(t.passed, cases[i].passed);
		}
	}
}
END_TEST

/* Judge out against a baseline of ran (-1: none); the first failure's message or "". */
static char *
judge(const char *out, int ran)
{
	json_t *want = ran >= 0 ? json_pack("{s:i, s:i}", "ran", ran, "passed", ran) : NULL;
	struct grade g;
	struct grade_tests t;
	char *msg;

	grade_init(&g, 60);
	g.func_test = GRADE_CHECK_PASSED;
	grade_tests_parse(out, &t);
	if (grade_tests_check(&g, false, &t, want))
		ck_assert_int_eq(g.func_test, GRADE_CHECK_PASSED);
	else
		ck_assert_int_eq(g.func_test, GRADE_CHECK_FAILED);
	msg = strdup(g.error_msg ? g.error_msg : "");
	grade_release(&g);
	json_decref(want);
	return msg;
}

/* An output the daemon did not pass whole: its count is not evidence. */
START_TEST(test_count_tainted)
{
	json_t *want = json_pack("{s:i, s:i}", "ran", 5, "passed", 5);
	struct grade g;
	struct grade_tests t;

	grade_init(&g, 60);
	grade_tests_parse_tainted("SSEBENCH-TESTS: ran=99 passed=99\n", &t);
	ck_assert(!t.valid);
	ck_assert(!grade_tests_check(&g, true, &t, NULL));
	ck_assert_str_eq(g.error_msg, "Intent test failed: its output was cut or holds a NUL byte, "
				      "so its test count cannot be trusted");
	ck_assert_int_eq(g.intent_test, GRADE_CHECK_FAILED);
	grade_release(&g);
	/* No line, but a baseline: still untrusted. No line, no baseline: nothing to judge. */
	grade_tests_parse_tainted("tests done\n", &t);
	ck_assert(!grade_tests_check(&g, false, &t, want));
	grade_release(&g);
	ck_assert(grade_tests_check(&g, false, &t, NULL));
	grade_release(&g);
	json_decref(want);
}
END_TEST

START_TEST(test_count_judged)
{
	static const struct {
		const char *out;
		int baseline;
		const char *msg;
	} cases[] = {
		{ "SSEBENCH-TESTS: ran=5 passed=5\n", -1, "" },
		{ "SSEBENCH-TESTS: ran=5 passed=5\n", 5, "" },
		{ "SSEBENCH-TESTS: ran=6 passed=6\n", 5, "" },
		{ "nothing\n", -1, "" },
		{ "nothing\n", 5, "Function test failed: no test count (the reference ran 5)" },
		{ "SSEBENCH-TESTS: ran=0 passed=0\n", -1, "Function test failed: no test ran" },
		{ "SSEBENCH-TESTS: ran=4 passed=4\n", 5,
		    "Function test failed: 4 tests ran, fewer than the reference's 5" },
		{ "SSEBENCH-TESTS: ran=5 passed=4\n", 5,
		    "Function test failed: 4 tests passed, fewer than the reference's 5" },
		{ "SSEBENCH-TESTS: ran=9 passed=9\nSSEBENCH-TESTS: ran=9 passed=9\n", -1,
		    "Function test failed: 2 test count lines, one of them not the harness's" },
		{ "SSEBENCH-TESTS: ran=x passed=9\n", -1, "Function test failed: a malformed test count" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *m = judge(cases[i].out, cases[i].baseline);

		ck_assert_msg(strcmp(m, cases[i].msg) == 0, "case %zu: '%s'", i, m);
		free(m);
	}
}
END_TEST

/* The oracle's verdict for facts against expected (JSON text; NULL: none). */
static char *
oracle(const char *sanitizer, const char *facts, const char *expected)
{
	json_t *f = facts ? json_loads(facts, 0, NULL) : NULL;
	json_t *e = expected ? json_loads(expected, 0, NULL) : NULL;
	struct grade g;
	bool ok;
	char *msg;

	ck_assert(facts == NULL || f != NULL);
	ck_assert(expected == NULL || e != NULL);
	grade_init(&g, 60);
	ok = grade_oracle_check(&g, sanitizer, f, e);
	ck_assert_int_eq(g.oracle, ok ? GRADE_CHECK_PASSED : GRADE_CHECK_FAILED);
	ck_assert_int_eq(ok, g.error_msg == NULL);
	msg = strdup(g.error_msg ? g.error_msg : "");
	grade_release(&g);
	json_decref(f);
	json_decref(e);
	return msg;
}

#define FACTS(objs, hooks, calls, unreadable, trunc)                                        \
	"{\"objects\": {" objs "}, \"hooks\": [" hooks "], \"calls\": [" calls "], "          \
	"\"unreadable\": [" unreadable "], \"truncated\": " trunc ", \"nobjects\": 1}"
#define BASE(objs, hooks)                                                                   \
	"{\"objects\": {" objs "}, \"hooks\": [" hooks "], \"calls\": [], \"unreadable\": [], " \
	"\"truncated\": false}"
#define CHECKED(id) "\"" id "\": {\"asan\": true, \"checks\": true}"
#define MODULE(id)  "\"" id "\": {\"asan\": true, \"checks\": false}"
#define PLAIN(id)   "\"" id "\": {\"asan\": false, \"checks\": false}"

/* Past 100 findings the log lists the first 100 and counts the rest; the message is the first. */
START_TEST(test_oracle_many_findings)
{
	json_auto_t *facts = json_pack("{s:{s:{s:b,s:b}},s:[],s:[],s:[],s:b}", "objects", "a.o",
	    "asan", true, "checks", true, "hooks", "calls", "unreadable", "truncated", false);
	json_t *unreadable = json_object_get(facts, "unreadable");
	struct grade g;
	size_t lines = 0;

	ck_assert_ptr_nonnull(facts);
	for (int i = 0; i < 105; i++) {
		char name[16];

		snprintf(name, sizeof(name), "u%d.o", i);
		json_array_append_new(unreadable, json_string(name));
	}
	grade_init(&g, 60);
	ck_assert(!grade_oracle_check(&g, "address", facts, NULL));
	ck_assert_str_eq(g.error_msg, "oracle tampering: u0.o cannot be read as an object file");
	for (const char *c = g.error_log; *c != '\0'; c++)
		lines += *c == '\n';
	ck_assert_uint_eq(lines, 101);
	ck_assert_ptr_nonnull(strstr(g.error_log, "u99.o cannot be read as an object file\n(5 "
						  "more)\n"));
	ck_assert_ptr_null(strstr(g.error_log, "u100.o"));
	grade_release(&g);
}
END_TEST

START_TEST(test_oracle)
{
	static const struct {
		const char *san, *facts, *expected, *msg;
	} cases[] = {
		{ "address", FACTS(CHECKED("a.o"), "", "", "", "false"), NULL, "" },
		{ "address", FACTS(CHECKED("a.o"), "", "", "", "false"), BASE("\"a.o\": 2", ""), "" },
		{ NULL, FACTS(PLAIN("a.o"), "", "", "", "false"), NULL, "" },
		{ "address", FACTS(MODULE("a.o"), "", "", "", "false"), NULL,
		    "oracle tampering: no object of the grading build checks memory accesses with "
		    "AddressSanitizer" },
		{ "address", FACTS(PLAIN("a.o"), "", "", "", "false"), BASE("\"a.o\": 2", ""),
		    "oracle tampering: a.o is no longer built with AddressSanitizer" },
		{ "address", FACTS(MODULE("a.o"), "", "", "", "false"), BASE("\"a.o\": 2", ""),
		    "oracle tampering: a.o no longer checks memory accesses (no_sanitize)" },
		{ "address", FACTS(CHECKED("b.o"), "", "", "", "false"), BASE("\"a.o\": 2", ""),
		    "oracle tampering: a.o, instrumented in the reference build, is not built" },
		{ "address", FACTS(CHECKED("a.o") ", " PLAIN("x.o"), "", "", "", "false"),
		    BASE("\"a.o\": 2", ""), "oracle tampering: x.o is built without AddressSanitizer" },
		{ "address", FACTS(CHECKED("a.o") ", " PLAIN("t.o"), "", "", "", "false"),
		    BASE("\"a.o\": 2, \"t.o\": 0", ""), "" },
		{ "address",
		    FACTS(CHECKED("a.o"), "{\"object\": \"a.o\", \"symbol\": \"__asan_default_options\"}",
			"", "", "false"),
		    NULL, "oracle tampering: a.o defines __asan_default_options" },
		{ "address",
		    FACTS(CHECKED("a.o"), "{\"object\": \"a.o\", \"symbol\": \"__asan_default_options\"}",
			"", "", "false"),
		    BASE("\"a.o\": 2", "\"__asan_default_options\""), "" },
		{ "address",
		    FACTS(CHECKED("a.o"), "",
			"{\"object\": \"a.o\", \"symbol\": \"__sanitizer_set_report_fd\"}", "", "false"),
		    BASE("\"a.o\": 2", ""), "oracle tampering: a.o calls __sanitizer_set_report_fd" },
		{ "address", FACTS(CHECKED("a.o"), "", "", "\"b.o\"", "false"), BASE("\"a.o\": 2", ""),
		    "oracle tampering: b.o cannot be read as an object file" },
		{ "address", FACTS(CHECKED("a.o"), "", "", "", "true"), BASE("\"a.o\": 2", ""),
		    "oracle tampering: the grading build is past the limits of the oracle check" },
		{ "address",
		    "{\"objects\": {" CHECKED("a.o") "}, \"hooks\": [], \"calls\": [], "
		    "\"duplicates\": [{\"object\": \"a.o\", \"symbol\": null}], \"unreadable\": [], "
		    "\"truncated\": false}",
		    BASE("\"a.o\": 2", ""),
		    "oracle tampering: a.o is in the build twice (the linker takes one, this check saw "
		    "the other)" },
		{ "address",
		    "{\"objects\": {" CHECKED("a.o") "}, \"hooks\": [], \"calls\": [], "
		    "\"duplicates\": [{\"object\": \"a.o\", \"symbol\": null}], \"unreadable\": [], "
		    "\"truncated\": false}",
		    "{\"objects\": {\"a.o\": 2}, \"hooks\": [], \"calls\": [], \"duplicates\": "
		    "[\"a.o\"], \"unreadable\": [], \"truncated\": false}",
		    "" },
		{ "address", NULL, BASE("\"a.o\": 2", ""),
		    "oracle tampering: the grading build's objects could not be read" },
		{ "address", "{\"objects\": []}", NULL,
		    "oracle tampering: the grading build's objects could not be read" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *m = oracle(cases[i].san, cases[i].facts, cases[i].expected);

		ck_assert_msg(strcmp(m, cases[i].msg) == 0, "case %zu: '%s'", i, m);
		free(m);
	}
}
END_TEST

/* The summary is what --update-baseline stores: levels, unique sorted symbols. */
START_TEST(test_oracle_summary)
{
	json_t *f = json_loads(FACTS(CHECKED("a.o") ", " MODULE("b.o") ", " PLAIN("c.o"),
				   "{\"object\": \"b.o\", \"symbol\": \"__z\"}, {\"object\": \"a.o\", "
				   "\"symbol\": \"__a\"}, {\"object\": \"c.o\", \"symbol\": \"__z\"}",
				   "", "", "false"),
	    0, NULL);
	json_t *s = grade_oracle_summary(f);
	char *text = json_dumps(s, JSON_COMPACT | JSON_SORT_KEYS);

	ck_assert_str_eq(text, "{\"calls\":[],\"duplicates\":[],\"hooks\":[\"__a\",\"__z\"],\"objects\":{\"a.o\":2,"
			       "\"b.o\":1,\"c.o\":0},\"truncated\":false,\"unreadable\":[]}");
	free(text);
	json_decref(s);
	json_decref(f);
}
END_TEST

static Suite *
grade_suite(void)
{
	Suite *s = suite_create("grade");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_count_line);
	tcase_add_test(tc, test_count_judged);
	tcase_add_test(tc, test_count_tainted);
	tcase_add_test(tc, test_oracle);
	tcase_add_test(tc, test_oracle_many_findings);
	tcase_add_test(tc, test_oracle_summary);
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(grade_suite)

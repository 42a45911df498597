/* SPDX-License-Identifier: Apache-2.0 */
/* test-dockerfile.c: the static Dockerfile reader and variable expansion. */
#include "config.h"

#include <string.h>

#include "sb/diag.h"
#include "sb/dockerfile.h"

#include "unit.h"

static struct sb_dockerfile *
parse(const char *text, struct sb_diags *d)
{
	return sb_dockerfile_parse(text, strlen(text), "Dockerfile", d);
}

START_TEST(test_instructions_and_lines)
{
	struct sb_diags d = SB_DIAGS_INIT;
	struct sb_dockerfile *df = parse("# a comment\n"
					 "ARG SSEBENCH_REGISTRY=localhost/ssebench\n"
					 "\n"
					 "from ${SSEBENCH_REGISTRY}/base-generic-c:0.1.0\n"
					 "RUN apt-get update && \\\n"
					 "    # comment inside a continuation\n"
					 "    apt-get install -y x   \\\n"
					 "\n"
					 "    y\n"
					 "COPY --chown=0:0 sse/config.yaml /ssebench/config.yaml\n"
					 "COPY [\"sse/a b.sh\", \"/ssebench/scripts/\"]\n",
	    &d);

	ck_assert_uint_eq(d.n, 0);
	ck_assert_uint_eq(df->n, 5);
	ck_assert_str_eq(df->v[1].cmd, "FROM"); /* upper-cased */
	ck_assert_uint_eq(df->v[1].line, 4);
	ck_assert_str_eq(df->v[2].cmd, "RUN");
	ck_assert_uint_eq(df->v[2].line, 5);
	ck_assert_str_eq(df->v[2].args, "apt-get update &&  apt-get install -y x    y");
	ck_assert_uint_eq(df->v[3].flags.n, 1);
	ck_assert_str_eq(df->v[3].flags.v[0], "--chown=0:0");
	ck_assert_uint_eq(df->v[3].words.n, 2);
	ck_assert(df->v[4].json_form);
	ck_assert_str_eq(df->v[4].words.v[0], "sse/a b.sh");
	ck_assert_uint_eq(df->v[4].line, 11);
	sb_dockerfile_free(df);
}
END_TEST

START_TEST(test_escape_directive)
{
	struct sb_diags d = SB_DIAGS_INIT;
	struct sb_dockerfile *df = parse("# escape=`\n"
					 "FROM x\n"
					 "RUN a `\n"
					 "  b\n"
					 "COPY c:\\dir\\file /d\n",
	    &d);

	ck_assert_uint_eq(d.n, 0);
	ck_assert_int_eq(df->escape, '`');
	ck_assert_str_eq(df->v[1].args, "a  b");
	ck_assert_str_eq(df->v[2].words.v[0], "c:\\dir\\file");
	sb_dockerfile_free(df);
}
END_TEST

START_TEST(test_syntax_directive_flagged)
{
	struct sb_diags d = SB_DIAGS_INIT;
	struct sb_dockerfile *df = parse("# syntax=docker/dockerfile:1\nFROM x\n", &d);

	ck_assert(df->has_syntax_directive);
	ck_assert_uint_eq(df->syntax_line, 1);
	sb_dockerfile_free(df);
	/* After an instruction it is only a comment. */
	df = parse("FROM x\n# syntax=docker/dockerfile:1\n", &d);
	ck_assert(!df->has_syntax_directive);
	sb_dockerfile_free(df);
}
END_TEST

START_TEST(test_problems_are_located)
{
	struct sb_diags d = SB_DIAGS_INIT;
	struct sb_dockerfile *df = parse("FROM x\nFROBNICATE y\nCOPY onlyone\nWORKDIR\n", &d);

	ck_assert_uint_eq(d.n, 3);
	ck_assert_uint_eq(d.v[0].line, 2);
	ck_assert_ptr_nonnull(strstr(d.v[0].msg, "unknown instruction 'FROBNICATE'"));
	ck_assert_uint_eq(d.v[1].line, 3);
	ck_assert_ptr_nonnull(strstr(d.v[1].msg, "source and a destination"));
	ck_assert_uint_eq(d.v[2].line, 4);
	sb_dockerfile_free(df);
	sb_diags_release(&d);
}
END_TEST

START_TEST(test_continuation_at_end_of_file)
{
	struct sb_diags d = SB_DIAGS_INIT;
	struct sb_dockerfile *df = parse("FROM x\nRUN a \\\n  b \\\n# trailing comment\n", &d);

	ck_assert_uint_eq(d.n, 0);
	ck_assert_uint_eq(df->n, 2);
	ck_assert_str_eq(df->v[1].args, "a  b ");
	sb_dockerfile_free(df);
}
END_TEST

START_TEST(test_limits)
{
	struct sb_diags d = SB_DIAGS_INIT;
	struct sb_dockerfile *df = sb_dockerfile_parse("FROM x\0y", 8, "Dockerfile", &d);

	ck_assert_uint_eq(d.n, 1);
	ck_assert_ptr_nonnull(strstr(d.v[0].msg, "NUL"));
	sb_dockerfile_free(df);
	sb_diags_release(&d);
}
END_TEST

START_TEST(test_expand)
{
	struct sb_argv vars = SB_ARGV_INIT;
	bool unknown = false;
	char *s;

	sb_env_set(&vars, "REG", "localhost/ssebench");
	sb_env_set(&vars, "EMPTY", "");
	s = sb_dockerfile_expand("${REG}/x:$REG", &vars, '\\', &unknown);
	ck_assert_str_eq(s, "localhost/ssebench/x:localhost/ssebench");
	ck_assert(!unknown);
	free(s);
	s = sb_dockerfile_expand("${EMPTY:-def}|${REG:+set}|${NOPE:+x}|\\$REG", &vars, '\\',
	    &unknown);
	ck_assert_str_eq(s, "def|set||$REG");
	free(s);
	s = sb_dockerfile_expand("$NOPE/y", &vars, '\\', &unknown);
	ck_assert_str_eq(s, "/y");
	ck_assert(unknown);
	free(s);
	s = sb_dockerfile_expand("${unterminated", &vars, '\\', NULL);
	ck_assert_str_eq(s, "${unterminated");
	free(s);
	sb_argv_release(&vars);
}
END_TEST

static Suite *
dockerfile_suite(void)
{
	Suite *s = suite_create("dockerfile");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_instructions_and_lines);
	tcase_add_test(tc, test_escape_directive);
	tcase_add_test(tc, test_syntax_directive_flagged);
	tcase_add_test(tc, test_problems_are_located);
	tcase_add_test(tc, test_continuation_at_end_of_file);
	tcase_add_test(tc, test_limits);
	tcase_add_test(tc, test_expand);
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(dockerfile_suite)

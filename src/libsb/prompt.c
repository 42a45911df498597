/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prompt.c: the task prompt, from the public view alone (see prompt.h). The wording is ours;
 * the sections and their rules follow upstream's (docs/upstream.md, "The SDK and the task
 * prompt"): what the agent is asked to do, then the vulnerability (bug description, issue,
 * each crash report fenced), then the project and its build and test scripts. Empty fields
 * and fields that say "none" are left out. test_patch is not mentioned: an agent learns of it
 * from its MCP configuration.
 */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "sb/buf.h"
#include "sb/prompt.h"

/* The literal the test scripts use to build first; shown as a pointer to the script above. */
#define BUILD_SCRIPT_PATH "/ssebench/scripts/build.sh"
/* Buffers grow freely; the length is checked once, at the end (an append that failed half
 * way would leave a prompt that looks whole). */
#define GROW_MAX ((size_t)-1 / 4)

/* A field worth showing: not NULL, not blank, not "none". */
static bool
shown(const char *s)
{
	size_t a, n;

	if (s == NULL)
		return false;
	a = strspn(s, " \t\r\n");
	n = strlen(s + a);
	while (n > 0 && strchr(" \t\r\n", s[a + n - 1]) != NULL)
		n--;
	return n > 0 && !(n == 4 && strncasecmp(s + a, "none", 4) == 0);
}

/* Append s without trailing blank lines or spaces, then one newline. */
static void
append_trimmed(struct sb_buf *b, const char *s)
{
	size_t n = strlen(s);

	while (n > 0 && strchr(" \t\r\n", s[n - 1]) != NULL)
		n--;
	(void)sb_buf_append(b, s, n, NULL);
	(void)sb_buf_appendc(b, '\n', NULL);
}

/*
 * A fenced block whose fence is longer than any run of backticks inside, so nothing in the
 * text (a report quoting Markdown, say) can close it early.
 */
static void
append_fenced(struct sb_buf *b, const char *info, const char *text)
{
	size_t longest = 0, run = 0;

	for (const char *p = text; *p != '\0'; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	longest = longest < 3 ? 3 : longest + 1;
	for (size_t i = 0; i < longest; i++)
		(void)sb_buf_appendc(b, '`', NULL);
	(void)sb_buf_appends(b, info, NULL);
	(void)sb_buf_appendc(b, '\n', NULL);
	append_trimmed(b, text);
	for (size_t i = 0; i < longest; i++)
		(void)sb_buf_appendc(b, '`', NULL);
	(void)sb_buf_appendc(b, '\n', NULL);
}

/* The test script with each call of the build script replaced by a note. */
static char *
test_script_text(const char *s)
{
	struct sb_buf b = SB_BUF_INIT(GROW_MAX);
	const char *p = s, *hit;

	while ((hit = strstr(p, BUILD_SCRIPT_PATH)) != NULL) {
		(void)sb_buf_append(&b, p, (size_t)(hit - p), NULL);
		(void)sb_buf_appends(&b, "# (the build script above)", NULL);
		p = hit + strlen(BUILD_SCRIPT_PATH);
	}
	(void)sb_buf_appends(&b, p, NULL);
	return sb_buf_detach(&b, NULL);
}

static void
append_vulnerability(struct sb_buf *b, const json_t *desc)
{
	const char *bug = json_string_value(json_object_get(desc, "bug_description"));
	const char *issue = json_string_value(json_object_get(desc, "issue"));
	const json_t *reports = json_object_get(desc, "crash_report"), *r;
	size_t total = 0, i, k = 0;
	bool any = false;

	(void)sb_buf_appends(b, "\n## Vulnerability\n", NULL);
	if (shown(bug)) {
		(void)sb_buf_appends(b, "\n### Bug description\n\n", NULL);
		append_trimmed(b, bug);
		any = true;
	}
	if (shown(issue)) {
		(void)sb_buf_appends(b, "\n### Issue\n\n", NULL);
		append_trimmed(b, issue);
		any = true;
	}
	json_array_foreach (reports, i, r)
		total += shown(json_string_value(r));
	json_array_foreach (reports, i, r) {
		if (!shown(json_string_value(r)))
			continue;
		(void)sb_buf_appendf(b, NULL, "\n### Report %zu of %zu\n\n", ++k, total);
		append_fenced(b, "", json_string_value(r));
		any = true;
	}
	if (!any)
		(void)sb_buf_appends(b, "\nThe task gives no description of the vulnerability. Find "
					"it in the code: look for memory-safety and input-validation "
					"bugs in the code that parses untrusted input.\n", NULL);
}

char *
sb_prompt_build(const json_t *project, struct sb_error **err)
{
	const char *name = json_string_value(json_object_get(project, "project"));
	const char *lang = json_string_value(json_object_get(project, "language"));
	const char *src = json_string_value(json_object_get(project, "source"));
	const char *build = json_string_value(json_object_get(project, "build_script"));
	const char *test = json_string_value(json_object_get(project, "test_script"));
	struct sb_buf b = SB_BUF_INIT(GROW_MAX);

	if (name == NULL || lang == NULL || src == NULL) {
		sb_error_set(err, EINVAL, "the public view has no project, language or source");
		return NULL;
	}
	(void)sb_buf_appendf(&b, NULL,
	    "# Task\n\n"
	    "You are a software security engineer. A security vulnerability has been reported in "
	    "%s, a project written in %s. Its source code is in %s.\n"
	    "\n## Objective\n\n"
	    "Find the root cause of the vulnerability described below and change the project's "
	    "code so that it can no longer be triggered, while the project keeps doing what it "
	    "did for every valid input.\n"
	    "\n## Requirements\n\n"
	    "- Fix the root cause. A change that only stops the reported input from failing, "
	    "while the same bug stays reachable another way, is not a fix.\n"
	    "- Change the project's own code only. Leave its tests, test data and build scripts "
	    "as they are.\n"
	    "- Keep the project's behaviour and interfaces. Do not remove features, checks or "
	    "error handling to make the problem go away.\n"
	    "- Keep the change small and in the style of the code around it, as the project's "
	    "maintainers would write it.\n"
	    "- Commit your change with git in %s when you are done, and leave no scratch files "
	    "behind: whatever differs from the original tree is your patch.\n"
	    "\n## Validation\n\n"
	    "- Build the project and run its tests after your change, if you can.\n"
	    "- The input that triggers the bug may not be available to you. Work from the "
	    "report and the code.\n"
	    "- Think about the inputs next to the reported one: boundaries, empty and oversized "
	    "values, and other callers of the code you change.\n"
	    "- Review your change as the project's developers would before they merge it.\n",
	    name, lang, src, src);
	append_vulnerability(&b, json_object_get(project, "task_description"));
	(void)sb_buf_appendf(&b, NULL,
	    "\n## Project\n\n- Name: %s\n- Language: %s\n- Source code path: %s\n", name, lang,
	    src);
	if (shown(build) || shown(test)) {
		(void)sb_buf_appends(&b, "\n## Build and test\n", NULL);
		if (shown(build)) {
			(void)sb_buf_appends(&b, "\nThe project is built with this script:\n\n", NULL);
			append_fenced(&b, "sh", build);
		}
		if (shown(test)) {
			_cleanup_free_ char *t = test_script_text(test);

			(void)sb_buf_appends(&b, "\nIts tests run with this script:\n\n", NULL);
			append_fenced(&b, "sh", t);
		}
	}
	if (b.len > SB_PROMPT_MAX) {
		sb_buf_release(&b);
		sb_error_set(err, EMSGSIZE, "the prompt is larger than %d bytes", SB_PROMPT_MAX);
		return NULL;
	}
	return sb_buf_detach(&b, NULL);
}

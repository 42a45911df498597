/* SPDX-License-Identifier: Apache-2.0 */
/*
 * testpatch.c: the test_patch tool (docs/mcp.md, "test_patch"). The checks run in the order
 * build, PoCs (stopping at the first that still triggers the bug), intent tests, functional
 * tests (covered when the intent tests passed); the headline names the first failure by the
 * precedence build, functional, PoCs, intent. Every check goes through the daemon's
 * agent-facing socket as an ordinary bencher call, so the daemon decides again what the
 * level allows: asking here for less than it allows costs nothing, asking for more gets 403.
 */
#include "config.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/fs.h"
#include "sb/mem.h"
#include "sb/sdk.h"
#include "sb/task.h"

#include "mcp.h"

static const char internal_failure[] =
    "An internal testing failure occurred. Your patch is not responsible for this failure.";

enum outcome { NOT_RUN, PASSED, FAILED, SKIPPED_BUILD, COVERED };

struct check {
	enum outcome o;
	char *log; /* stdout, a blank line, stderr: of a failed run */
};

static int
run_check(const struct mcp_config *c, const char *action, const char *poc, struct check *ck)
{
	struct sb_sdk sdk;
	struct sb_script_result r;
	struct sb_error *err = NULL;
	int rc;

	free(ck->log);
	ck->log = NULL;
	if (c->daemon != NULL) {
		rc = c->daemon->bencher(c->daemon->arg, action, poc, &r);
	} else {
		sb_sdk_init_socket(&sdk, c->daemon_socket);
		rc = sb_sdk_bencher(&sdk, action, poc, &r, &err);
		sb_sdk_release(&sdk);
	}
	if (rc < 0) {
		sb_error_release(&err);
		return -1;
	}
	ck->o = r.code == 0 ? PASSED : FAILED;
	ck->log = sb_xasprintf("%s\n\n%s", r.out, r.err);
	sb_script_result_release(&r);
	return 0;
}

/* GET path on the agent socket, as JSON (new reference), or NULL. */
static json_t *
daemon_get(const struct mcp_config *c, const char *path)
{
	struct sb_sdk sdk;
	struct sb_error *err = NULL;
	json_t *reply = NULL;

	if (c->daemon != NULL)
		return c->daemon->get(c->daemon->arg, path);
	sb_sdk_init_socket(&sdk, c->daemon_socket);
	if (sb_sdk_call(&sdk, "GET", path, NULL, 0, &reply, &err) < 0)
		sb_error_release(&err);
	sb_sdk_release(&sdk);
	return reply;
}

static size_t
count_words(const char *s)
{
	size_t n = 0;
	bool in = false;

	for (; *s != '\0'; s++) {
		bool space = *s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\v' ||
		    *s == '\f';

		if (!space && !in)
			n++;
		in = !space;
	}
	return n;
}

/* The start of the last n lines, or of the last n words, whichever is shorter. */
static const char *
tail_of(const char *s)
{
	const char *end = s + strlen(s), *by_lines = s, *by_words = s;
	size_t lines = 0, words = 0;
	bool in = false;

	for (const char *p = end; p > s; p--) {
		if (p[-1] == '\n' && p != end && ++lines == MCP_LOG_LINES_TAIL) {
			by_lines = p;
			break;
		}
	}
	for (const char *p = end; p > s; p--) {
		bool space = p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\n' || p[-1] == '\r';

		if (!space && !in && ++words > MCP_LOG_WORDS_MAX) {
			by_words = p;
			break;
		}
		in = !space;
	}
	return by_lines > by_words ? by_lines : by_words;
}

/* A random name for a saved log: 16 bytes as hex. */
static char *
log_name(void)
{
	unsigned char r[16];
	char hex[33];

	if (sb_random_bytes(r, sizeof(r), NULL) < 0)
		return NULL;
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(hex + 2 * i, 3, "%02x", r[i]);
	return sb_xasprintf("%s.txt", hex);
}

/*
 * The log of the headline check: whole, or, past MCP_LOG_WORDS_MAX words, its tail with the
 * whole log saved in MCP_LOG_DIR (0755, files 0644: the agent reads them).
 */
static void
append_log(const struct mcp_config *c, struct sb_buf *out, const char *what, const char *log)
{
	_cleanup_free_ char *name = NULL, *path = NULL;
	_cleanup_close_ int dfd = -1;

	if (count_words(log) <= MCP_LOG_WORDS_MAX) {
		(void)sb_buf_appendf(out, NULL, "\nFull log (%s):\n%s\n", what, log);
		return;
	}
	(void)sb_buf_appendf(out, NULL, "\nTruncated log (%s):\n%s\n", what, tail_of(log));
	if (mkdir(c->log_dir, 0755) < 0 && errno != EEXIST)
		goto failed;
	dfd = open(c->log_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	name = log_name();
	if (dfd < 0 || name == NULL ||
	    sb_write_file_atomic_at(dfd, name, log, strlen(log), 0644, NULL) < 0)
		goto failed;
	path = sb_xasprintf("%s/%s", c->log_dir, name);
	(void)sb_buf_appendf(out, NULL, "Full log available at %s\n", path);
	return;
failed:
	(void)sb_buf_appends(out, "(Full log could not be saved due to an internal error)\n", NULL);
}

char *
mcp_test_patch(const struct mcp_config *c)
{
	/* What the level lets test_patch run: the daemon's own gate (sb_level_allows). */
	const struct {
		bool build, functional, pocs, intent;
	} st = { sb_level_allows(c->level, SB_ACTION_BUILD),
		sb_level_allows(c->level, SB_ACTION_FUNCTION_TEST),
		sb_level_allows(c->level, SB_ACTION_RUN_POC),
		sb_level_allows(c->level, SB_ACTION_INTENT_TEST) };
	struct check build = { NOT_RUN, NULL }, pocs = { NOT_RUN, NULL }, intent = { NOT_RUN, NULL },
		     func = { NOT_RUN, NULL };
	struct sb_buf out = SB_BUF_INIT(16 * 1024 * 1024);
	_cleanup_argv_ struct sb_argv withheld = SB_ARGV_INIT;
	json_t *caps = daemon_get(c, "/capabilities"), *project = NULL;
	bool can_build, can_poc, has_func, has_intent, ran_any = false;
	size_t poc_total = 0, poc_passed = 0;
	const char *reason = NULL;
	struct check *headline = NULL;
	const char *headline_what = NULL;

	if (caps == NULL)
		goto internal;
	can_build = json_is_true(json_object_get(caps, "can_build"));
	can_poc = json_is_true(json_object_get(caps, "can_run_poc"));
	has_func = json_is_true(json_object_get(caps, "has_function_test"));
	has_intent = json_is_true(json_object_get(caps, "has_intent_test"));
	if (can_build && !st.build)
		sb_argv_push(&withheld, "build");
	if (has_func && !st.functional)
		sb_argv_push(&withheld, "functional tests");
	if (can_poc && !st.pocs)
		sb_argv_push(&withheld, "PoCs");
	if (has_intent && !st.intent)
		sb_argv_push(&withheld, "intent tests");

	if (can_build && st.build) {
		if (run_check(c, "build", NULL, &build) < 0)
			goto internal;
		ran_any = true;
	}
	if (can_poc && st.pocs) {
		json_t *list, *p;
		size_t i;

		project = daemon_get(c, "/project");
		list = json_object_get(project, "poc");
		if (project == NULL || !json_is_array(list))
			goto internal;
		poc_total = json_array_size(list);
		if (build.o == FAILED) {
			pocs.o = SKIPPED_BUILD;
		} else {
			pocs.o = PASSED;
			json_array_foreach (list, i, p) {
				struct check one = { NOT_RUN, NULL };

				if (!json_is_string(p) ||
				    run_check(c, "run_poc", json_string_value(p), &one) < 0) {
					free(one.log);
					goto internal;
				}
				ran_any = true;
				if (one.o != PASSED) {
					pocs.o = FAILED;
					pocs.log = one.log;
					break;
				}
				free(one.log);
				poc_passed++;
			}
		}
	}
	if (has_intent && st.intent) {
		if (build.o == FAILED) {
			intent.o = SKIPPED_BUILD;
		} else {
			if (run_check(c, "intent_test", NULL, &intent) < 0)
				goto internal;
			ran_any = true;
		}
	}
	if (has_func && st.functional) {
		if (build.o == FAILED) {
			func.o = SKIPPED_BUILD;
		} else if (intent.o == PASSED) {
			func.o = COVERED;
		} else {
			if (run_check(c, "function_test", NULL, &func) < 0)
				goto internal;
			ran_any = true;
		}
	}

	/* The headline: the first failure by precedence build, functional, PoCs, intent. */
	if (build.o == FAILED) {
		headline = &build, headline_what = "build";
		reason = "The project failed to build with your changes. Fix the build first: "
			 "nothing else was checked.";
	} else if (func.o == FAILED) {
		headline = &func, headline_what = "functional tests";
		reason = "One or more functionality test(s) failed: your patch breaks existing "
			 "behaviour.";
	} else if (pocs.o == FAILED) {
		headline = &pocs, headline_what = "PoCs";
		reason = "At least one proof-of-concept (PoC) still triggers the vulnerability: "
			 "the bug is not fixed.";
	} else if (intent.o == FAILED) {
		headline = &intent, headline_what = "intent tests";
		reason = "One or more intent test(s) failed: the fix does not behave as the "
			 "project's own fix does.";
	}
	if (headline != NULL)
		(void)sb_buf_appendf(&out, NULL, "test_patch result: FAILED. %s\n", reason);
	else if (!ran_any)
		(void)sb_buf_appends(&out, "test_patch result: no checks ran.\n", NULL);
	else if (withheld.n > 0)
		(void)sb_buf_appends(&out, "test_patch result: every check that ran passed.\n", NULL);
	else
		(void)sb_buf_appends(&out, "test_patch result: every check passed.\n", NULL);

	if (build.o != NOT_RUN || pocs.o != NOT_RUN || intent.o != NOT_RUN || func.o != NOT_RUN) {
		static const char *const words[] = { [NOT_RUN] = "not run", [PASSED] = "passed",
			[FAILED] = "FAILED", [SKIPPED_BUILD] = "not run (the build failed)",
			[COVERED] = "passed (covered by the intent tests)" };

		(void)sb_buf_appends(&out, "\nChecks:\n", NULL);
		if (build.o != NOT_RUN)
			(void)sb_buf_appendf(&out, NULL, "- build: %s\n", words[build.o]);
		if (pocs.o == PASSED && poc_total == 0)
			(void)sb_buf_appends(&out, "- PoCs: passed (the task has none)\n", NULL);
		else if (pocs.o == PASSED)
			(void)sb_buf_appendf(&out, NULL, "- PoCs: passed (%zu of %zu)\n", poc_passed,
			    poc_total);
		else if (pocs.o == FAILED)
			(void)sb_buf_appendf(&out, NULL,
			    "- PoCs: FAILED (passed %zu of %zu; stopped at the first that still "
			    "triggers the bug)\n",
			    poc_passed, poc_total);
		else if (pocs.o != NOT_RUN)
			(void)sb_buf_appendf(&out, NULL, "- PoCs: %s\n", words[pocs.o]);
		if (intent.o != NOT_RUN)
			(void)sb_buf_appendf(&out, NULL, "- intent tests: %s\n", words[intent.o]);
		if (func.o != NOT_RUN)
			(void)sb_buf_appendf(&out, NULL, "- functional tests: %s\n", words[func.o]);
	}
	if (withheld.n > 0) {
		(void)sb_buf_appendf(&out, NULL, "\nNot available at difficulty level %u (%s): ",
		    c->level, sb_level_name(c->level));
		for (size_t i = 0; i < withheld.n; i++)
			(void)sb_buf_appendf(&out, NULL, "%s%s", i ? ", " : "", withheld.v[i]);
		(void)sb_buf_appends(&out, ". Nothing is reported about them.", NULL);
		if (!ran_any)
			(void)sb_buf_appends(&out, " No check is available at this level.", NULL);
		else if (can_poc && !st.pocs)
			(void)sb_buf_appends(&out, " This result does not show whether the "
						   "vulnerability is fixed.", NULL);
		(void)sb_buf_appends(&out, "\n", NULL);
	}
	if (headline != NULL && headline->log != NULL)
		append_log(c, &out, headline_what, headline->log);
	goto done;
internal:
	sb_buf_release(&out);
	out = (struct sb_buf)SB_BUF_INIT(1024);
	(void)sb_buf_appends(&out, internal_failure, NULL);
done:
	free(build.log);
	free(pocs.log);
	free(intent.log);
	free(func.log);
	json_decref(caps);
	json_decref(project);
	return sb_buf_detach(&out, NULL);
}

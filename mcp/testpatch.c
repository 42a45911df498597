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
#include <stddef.h>
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

/* What the task has (the daemon's /capabilities) and what the level lets test_patch run. */
struct scope {
	bool can_build, can_poc, has_func, has_intent; /* the task */
	bool build, functional, pocs, intent;	      /* the level: sb_level_allows */
};

/* The checks of one call, as they ran. */
struct checks {
	struct check build, pocs, intent, func;
	size_t poc_total, poc_passed;
	bool ran_any;
};

static int
read_scope(const struct mcp_config *c, struct scope *sc)
{
	json_t *caps = daemon_get(c, "/capabilities");

	if (caps == NULL)
		return -1;
	sc->can_build = json_is_true(json_object_get(caps, "can_build"));
	sc->can_poc = json_is_true(json_object_get(caps, "can_run_poc"));
	sc->has_func = json_is_true(json_object_get(caps, "has_function_test"));
	sc->has_intent = json_is_true(json_object_get(caps, "has_intent_test"));
	json_decref(caps);
	/* What the level lets test_patch run: the daemon's own gate (sb_level_allows). */
	sc->build = sb_level_allows(c->level, SB_ACTION_BUILD);
	sc->functional = sb_level_allows(c->level, SB_ACTION_FUNCTION_TEST);
	sc->pocs = sb_level_allows(c->level, SB_ACTION_RUN_POC);
	sc->intent = sb_level_allows(c->level, SB_ACTION_INTENT_TEST);
	return 0;
}

/* The checks the task has and the level withholds, in the order the reply names them. */
static void
list_withheld(const struct scope *sc, struct sb_argv *withheld)
{
	if (sc->can_build && !sc->build)
		sb_argv_push(withheld, "build");
	if (sc->has_func && !sc->functional)
		sb_argv_push(withheld, "functional tests");
	if (sc->can_poc && !sc->pocs)
		sb_argv_push(withheld, "PoCs");
	if (sc->has_intent && !sc->intent)
		sb_argv_push(withheld, "intent tests");
}

/* The PoCs, in the project's order, up to the first that still triggers the bug. */
static int
run_pocs(const struct mcp_config *c, struct checks *ck)
{
	json_t *project = daemon_get(c, "/project"), *list, *p;
	size_t i;
	int rc = -1;

	list = json_object_get(project, "poc");
	if (project == NULL || !json_is_array(list))
		goto out;
	ck->poc_total = json_array_size(list);
	if (ck->build.o == FAILED) {
		ck->pocs.o = SKIPPED_BUILD;
		rc = 0;
		goto out;
	}
	ck->pocs.o = PASSED;
	json_array_foreach (list, i, p) {
		struct check one = { NOT_RUN, NULL };

		if (!json_is_string(p) || run_check(c, "run_poc", json_string_value(p), &one) < 0) {
			free(one.log);
			goto out;
		}
		ck->ran_any = true;
		if (one.o != PASSED) {
			ck->pocs.o = FAILED;
			ck->pocs.log = one.log;
			break;
		}
		free(one.log);
		ck->poc_passed++;
	}
	rc = 0;
out:
	json_decref(project);
	return rc;
}

/* A check that needs the build: not run when the build failed. */
static int
run_after_build(const struct mcp_config *c, const char *action, struct checks *ck,
    struct check *one)
{
	if (ck->build.o == FAILED) {
		one->o = SKIPPED_BUILD;
		return 0;
	}
	if (run_check(c, action, NULL, one) < 0)
		return -1;
	ck->ran_any = true;
	return 0;
}

/* Every check the task has and the level allows, in order. Returns -1: internal failure. */
static int
run_checks(const struct mcp_config *c, const struct scope *sc, struct checks *ck)
{
	if (sc->can_build && sc->build) {
		if (run_check(c, "build", NULL, &ck->build) < 0)
			return -1;
		ck->ran_any = true;
	}
	if (sc->can_poc && sc->pocs && run_pocs(c, ck) < 0)
		return -1;
	if (sc->has_intent && sc->intent && run_after_build(c, "intent_test", ck, &ck->intent) < 0)
		return -1;
	if (sc->has_func && sc->functional) {
		/* Passed intent tests ran the functional tests too (docs/mcp.md). */
		if (ck->build.o != FAILED && ck->intent.o == PASSED)
			ck->func.o = COVERED;
		else if (run_after_build(c, "function_test", ck, &ck->func) < 0)
			return -1;
	}
	return 0;
}

/* The headline's candidates, by precedence: the first that failed names the result. */
static const struct {
	size_t check; /* offsetof(struct checks, ...) */
	const char *what, *reason;
} headlines[] = {
	{ offsetof(struct checks, build), "build",
	    "The project failed to build with your changes. Fix the build first: nothing else "
	    "was checked." },
	{ offsetof(struct checks, func), "functional tests",
	    "One or more functionality test(s) failed: your patch breaks existing behaviour." },
	{ offsetof(struct checks, pocs), "PoCs",
	    "At least one proof-of-concept (PoC) still triggers the vulnerability: the bug is "
	    "not fixed." },
	{ offsetof(struct checks, intent), "intent tests",
	    "One or more intent test(s) failed: the fix does not behave as the project's own fix "
	    "does." },
};

/* The headline check, or NULL when none failed; *ret_what and *ret_reason name it. */
static struct check *
headline_of(struct checks *ck, const char **ret_what, const char **ret_reason)
{
	for (size_t i = 0; i < SB_ARRAY_SIZE(headlines); i++) {
		struct check *one = (struct check *)((char *)ck + headlines[i].check);

		if (one->o == FAILED) {
			*ret_what = headlines[i].what;
			*ret_reason = headlines[i].reason;
			return one;
		}
	}
	return NULL;
}

/* "Checks:", a line for each check that has something to say. */
static void
append_checks(struct sb_buf *out, const struct checks *ck)
{
	static const char *const words[] = { [NOT_RUN] = "not run", [PASSED] = "passed",
		[FAILED] = "FAILED", [SKIPPED_BUILD] = "not run (the build failed)",
		[COVERED] = "passed (covered by the intent tests)" };

	if (ck->build.o == NOT_RUN && ck->pocs.o == NOT_RUN && ck->intent.o == NOT_RUN &&
	    ck->func.o == NOT_RUN)
		return;
	(void)sb_buf_appends(out, "\nChecks:\n", NULL);
	if (ck->build.o != NOT_RUN)
		(void)sb_buf_appendf(out, NULL, "- build: %s\n", words[ck->build.o]);
	if (ck->pocs.o == PASSED && ck->poc_total == 0)
		(void)sb_buf_appends(out, "- PoCs: passed (the task has none)\n", NULL);
	else if (ck->pocs.o == PASSED)
		(void)sb_buf_appendf(out, NULL, "- PoCs: passed (%zu of %zu)\n", ck->poc_passed,
		    ck->poc_total);
	else if (ck->pocs.o == FAILED)
		(void)sb_buf_appendf(out, NULL,
		    "- PoCs: FAILED (passed %zu of %zu; stopped at the first that still "
		    "triggers the bug)\n",
		    ck->poc_passed, ck->poc_total);
	else if (ck->pocs.o != NOT_RUN)
		(void)sb_buf_appendf(out, NULL, "- PoCs: %s\n", words[ck->pocs.o]);
	if (ck->intent.o != NOT_RUN)
		(void)sb_buf_appendf(out, NULL, "- intent tests: %s\n", words[ck->intent.o]);
	if (ck->func.o != NOT_RUN)
		(void)sb_buf_appendf(out, NULL, "- functional tests: %s\n", words[ck->func.o]);
}

/* What the level withheld, and what that leaves unknown. */
static void
append_withheld(const struct mcp_config *c, struct sb_buf *out, const struct sb_argv *withheld,
    bool ran_any, bool pocs_withheld)
{
	if (withheld->n == 0)
		return;
	(void)sb_buf_appendf(out, NULL, "\nNot available at difficulty level %u (%s): ", c->level,
	    sb_level_name(c->level));
	for (size_t i = 0; i < withheld->n; i++)
		(void)sb_buf_appendf(out, NULL, "%s%s", i ? ", " : "", withheld->v[i]);
	(void)sb_buf_appends(out, ". Nothing is reported about them.", NULL);
	if (!ran_any)
		(void)sb_buf_appends(out, " No check is available at this level.", NULL);
	else if (pocs_withheld)
		(void)sb_buf_appends(out, " This result does not show whether the "
					  "vulnerability is fixed.", NULL);
	(void)sb_buf_appends(out, "\n", NULL);
}

char *
mcp_test_patch(const struct mcp_config *c)
{
	struct checks ck = { .build = { NOT_RUN, NULL }, .pocs = { NOT_RUN, NULL },
		.intent = { NOT_RUN, NULL }, .func = { NOT_RUN, NULL } };
	struct sb_buf out = SB_BUF_INIT(16 * 1024 * 1024);
	_cleanup_argv_ struct sb_argv withheld = SB_ARGV_INIT;
	const char *what = NULL, *reason = NULL;
	struct check *headline;
	struct scope sc;

	if (read_scope(c, &sc) < 0)
		goto internal;
	list_withheld(&sc, &withheld);
	if (run_checks(c, &sc, &ck) < 0)
		goto internal;
	headline = headline_of(&ck, &what, &reason);
	if (headline != NULL)
		(void)sb_buf_appendf(&out, NULL, "test_patch result: FAILED. %s\n", reason);
	else if (!ck.ran_any)
		(void)sb_buf_appends(&out, "test_patch result: no checks ran.\n", NULL);
	else if (withheld.n > 0)
		(void)sb_buf_appends(&out, "test_patch result: every check that ran passed.\n", NULL);
	else
		(void)sb_buf_appends(&out, "test_patch result: every check passed.\n", NULL);
	append_checks(&out, &ck);
	append_withheld(c, &out, &withheld, ck.ran_any, sc.can_poc && !sc.pocs);
	if (headline != NULL && headline->log != NULL)
		append_log(c, &out, what, headline->log);
	goto done;
internal:
	sb_buf_release(&out);
	out = (struct sb_buf)SB_BUF_INIT(1024);
	(void)sb_buf_appends(&out, internal_failure, NULL);
done:
	free(ck.build.log);
	free(ck.pocs.log);
	free(ck.intent.log);
	free(ck.func.log);
	return sb_buf_detach(&out, NULL);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * task.h: a task's sse/config.yaml, in the strict schema of docs/task-format.md (upstream's:
 * docs/upstream.md, "The task config").
 *
 * Unknown keys are errors (with the closest known key suggested), strings are stripped of
 * surrounding whitespace, every path is a safe relative path (path.h), and each problem is
 * reported with its line and column. Parsing goes on after a problem, so a user sees every
 * problem of a file at once.
 */
#ifndef SB_TASK_H
#define SB_TASK_H

#include <jansson.h>

#include "sb/common.h"
#include "sb/diag.h"

/* A string value and where it was written; s == NULL when the key is absent or null. */
struct sb_task_str {
	char *s;
	unsigned line, col;
};

struct sb_task_list {
	struct sb_task_str *v;
	size_t n;
	bool present; /* the key was there (possibly as null or an empty list) */
	unsigned line, col;
};

struct sb_task_config {
	struct sb_task_str id, project, repository, language, source;
	struct {
		struct sb_task_str issue, bug_description;
		struct sb_task_list crash_report;
	} task_description;
	struct {
		struct sb_task_str build, run, test;
	} scripts;
	struct {
		struct sb_task_str patch, future_test, security_test, intent_test;
		struct sb_task_list poc;
	} files;
	struct sb_task_str sanitizer, type, binary, trigger_commit, patch_commit, originality;
	struct sb_task_list reference;
	/* Paths of the tree graded with their pristine content whatever the patch did to them
	 * (docs/grading.md): these patterns, and unless protected_defaults is false the
	 * defaults of sb_task_protected_defaults. */
	struct sb_task_list protected_paths;
	struct sb_task_str protected_defaults; /* "true", "false" or unset (true) */
};

/*
 * Parse and check config.yaml. Problems are added to diags under the name `file`. Returns
 * the config (never NULL): fields with a problem are left unset. The caller knows the file
 * is valid when diags gained nothing.
 */
struct sb_task_config *sb_task_config_parse(const char *data, size_t len, const char *file,
    struct sb_diags *diags);

void sb_task_config_free(struct sb_task_config *c);
static inline void
sb_task_config_freep(struct sb_task_config **c)
{
	sb_task_config_free(*c);
}
#define _cleanup_task_config_ _cleanup_(sb_task_config_freep)

/*
 * The protected paths' default patterns for the task's language, NULL-terminated: test
 * directories and test sources (docs/grading.md lists them). Build files are not among them:
 * a real fix may need one.
 */
const char *const *sb_task_protected_defaults(const struct sb_task_config *c);

/*
 * Is path (relative to the tree) protected: does it match one of the task's `protected`
 * patterns, or, unless protected_defaults is false, a default? *ret_pattern (if not NULL)
 * says which.
 */
bool sb_task_path_protected(const struct sb_task_config *c, const char *path,
    const char **ret_pattern);

/* The checks a task has (docs/upstream.md, "Checks a task has"), as flags. */
enum sb_task_check {
	SB_CHECK_BUILD = 1 << 0,	 /* scripts.build */
	SB_CHECK_POC = 1 << 1,		 /* scripts.run and at least one files.poc */
	SB_CHECK_FUNCTION_TEST = 1 << 2, /* scripts.test */
	SB_CHECK_INTENT_TEST = 1 << 3,	 /* scripts.test and files.future_test */
};
unsigned sb_task_checks(const struct sb_task_config *c);
/* "build", "poc", "function_test", "intent_test" */
const char *sb_task_check_name(enum sb_task_check check);

/*
 * The bencher actions (docs/upstream.md, "Difficulty levels"), as a type: a name from a request is
 * parsed once, at the front, and everything after switches on the value. There is no "other"
 * action: a name that is not one of these four is refused where it is parsed.
 */
enum sb_action {
	SB_ACTION_BUILD,
	SB_ACTION_RUN_POC,
	SB_ACTION_FUNCTION_TEST,
	SB_ACTION_INTENT_TEST,
	SB_ACTION_COUNT
};
/* "build", "run_poc", "function_test", "intent_test"; NULL out of range. */
const char *sb_action_name(enum sb_action a);
/* The action named name (exactly); -1 for NULL or any other name, *ret untouched. */
int sb_action_parse(const char *name, enum sb_action *ret);

/*
 * The difficulty gate (docs/upstream.md, "Difficulty levels"): does level 0..4 let the agent run
 * action? 0 everything, 1 no intent test, 2 no PoCs, 3 build only, 4 nothing. Deny by default: a
 * level above 4 or a value that is not an action allows nothing. One table for the daemon,
 * which enforces it, and the MCP server and sse, which plan by it.
 */
bool sb_level_allows(unsigned level, enum sb_action action);
/* "FULL_ASSISTANCE" .. "NO_BUILD", upstream's names of the levels; "?" out of range. */
const char *sb_level_name(unsigned level);

/* One path the config names (a script, a diff, a PoC, a report), for resolution. */
struct sb_task_path_ref {
	char *key; /* "scripts.build", "files.poc[0]", ... (owned) */
	const struct sb_task_str *path;
};

/* All paths the config names, in file order of the schema. Free with sb_task_path_refs_free. */
size_t sb_task_config_paths(const struct sb_task_config *c, struct sb_task_path_ref **ret);
void sb_task_path_refs_free(struct sb_task_path_ref *refs, size_t n);

/* The config as JSON with every key present (null when unset), as upstream's manifest. */
json_t *sb_task_config_to_json(const struct sb_task_config *c);

#endif

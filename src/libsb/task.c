/* SPDX-License-Identifier: Apache-2.0 */
/*
 * task.c: the strict schema of a task's sse/config.yaml (docs/task-format.md; upstream's:
 * docs/upstream.md, "The task config").
 *
 * The schema is a table of fields; one walker checks a mapping against a table, reports
 * unknown and missing keys, and converts each value by its type. Nested objects
 * (task_description, scripts, files) are tables of their own.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include "sb/buf.h"
#include "sb/glob.h"
#include "sb/json.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/path.h"
#include "sb/task.h"
#include "sb/yaml.h"

enum ftype {
	F_STR,		/* a string, or null */
	F_NONBLANK,	/* a string with something other than whitespace */
	F_ID,		/* the task id grammar (parse.h) */
	F_URL,		/* https://\S+ */
	F_LANGUAGE,	/* c | go | rust */
	F_ORIGINALITY,	/* public | crafted, or null */
	F_ABSPATH,	/* an absolute path */
	F_RELPATH,	/* a safe relative path, or null */
	F_RELPATH_LIST, /* a list of safe relative paths, or null */
	F_STR_LIST,	/* a list of strings, or null */
	F_GLOB_LIST,	/* a list of path patterns (glob.h), or null */
	F_BOOL,		/* true | false, or null */
	F_OBJECT,	/* a mapping checked against sub */
};

struct field {
	const char *name;
	enum ftype type;
	bool required;
	size_t off; /* of the sb_task_str / sb_task_list in struct sb_task_config */
	const struct field *sub;
};

#define OFF(member) offsetof(struct sb_task_config, member)

static const struct field description_fields[] = {
	{ "issue", F_STR, false, OFF(task_description.issue), NULL },
	{ "crash_report", F_RELPATH_LIST, false, OFF(task_description.crash_report), NULL },
	{ "bug_description", F_STR, false, OFF(task_description.bug_description), NULL },
	{ NULL, F_STR, false, 0, NULL },
};

static const struct field script_fields[] = {
	{ "build", F_RELPATH, false, OFF(scripts.build), NULL },
	{ "run", F_RELPATH, false, OFF(scripts.run), NULL },
	{ "test", F_RELPATH, false, OFF(scripts.test), NULL },
	{ NULL, F_STR, false, 0, NULL },
};

static const struct field file_fields[] = {
	{ "patch", F_RELPATH, false, OFF(files.patch), NULL },
	{ "future_test", F_RELPATH, false, OFF(files.future_test), NULL },
	{ "security_test", F_RELPATH, false, OFF(files.security_test), NULL },
	{ "intent_test", F_RELPATH, false, OFF(files.intent_test), NULL },
	{ "poc", F_RELPATH_LIST, false, OFF(files.poc), NULL },
	{ NULL, F_STR, false, 0, NULL },
};

static const struct field root_fields[] = {
	{ "id", F_ID, true, OFF(id), NULL },
	{ "project", F_NONBLANK, true, OFF(project), NULL },
	{ "repository", F_URL, true, OFF(repository), NULL },
	{ "language", F_LANGUAGE, true, OFF(language), NULL },
	{ "source", F_ABSPATH, true, OFF(source), NULL },
	{ "task_description", F_OBJECT, true, 0, description_fields },
	{ "scripts", F_OBJECT, true, 0, script_fields },
	{ "files", F_OBJECT, true, 0, file_fields },
	{ "sanitizer", F_STR, false, OFF(sanitizer), NULL },
	{ "type", F_STR, false, OFF(type), NULL },
	{ "binary", F_STR, false, OFF(binary), NULL },
	{ "trigger_commit", F_STR, false, OFF(trigger_commit), NULL },
	{ "patch_commit", F_STR, false, OFF(patch_commit), NULL },
	{ "reference", F_STR_LIST, false, OFF(reference), NULL },
	{ "originality", F_ORIGINALITY, false, OFF(originality), NULL },
	{ "protected", F_GLOB_LIST, false, OFF(protected_paths), NULL },
	{ "protected_defaults", F_BOOL, false, OFF(protected_defaults), NULL },
	{ NULL, F_STR, false, 0, NULL },
};

struct ctx {
	struct sb_task_config *c;
	const char *file;
	struct sb_diags *diags;
};

static void
report(struct ctx *x, const struct sb_ynode *at, const char *fmt, ...) _printf_(3, 4);

static void
report(struct ctx *x, const struct sb_ynode *at, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = sb_xvasprintf(fmt, ap);
	va_end(ap);
	sb_diags_add(x->diags, x->file, at != NULL ? at->line : 0, at != NULL ? at->col : 0, "%s",
	    msg);
}

static const char *
closest_key(const struct field *fields, const char *key)
{
	const char *best = NULL;
	size_t best_d = 3;

	for (const struct field *f = fields; f->name != NULL; f++) {
		size_t d = sb_edit_distance(key, f->name);

		if (d < best_d)
			best = f->name, best_d = d;
	}
	return best;
}

/* strdup of s without leading and trailing ASCII whitespace. */
static char *
strip_dup(const char *s)
{
	const char *e;

	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		e--;
	return sb_xstrndup(s, (size_t)(e - s));
}

/*
 * The text of a scalar that may stand for a string: strings, and numbers (a commit hash of
 * digits only is still a commit hash). Booleans, lists and mappings are refused. NULL (no
 * report) for YAML null.
 */
static char *
scalar_text(struct ctx *x, const struct sb_ynode *n, const char *key, bool *ret_ok)
{
	*ret_ok = true;
	if (sb_ynode_is_null(n))
		return NULL;
	if (n->kind != SB_YNODE_SCALAR || n->type == SB_YSCALAR_BOOL) {
		report(x, n, "%s: expected a string, got %s%s", key, sb_ynode_describe(n),
		    n->kind == SB_YNODE_SCALAR ? " (quote it to use it as text)" : "");
		*ret_ok = false;
		return NULL;
	}
	return strip_dup(n->value);
}

static bool
is_url(const char *s)
{
	if (strncmp(s, "https://", 8) != 0 || s[8] == '\0')
		return false;
	for (const char *p = s + 8; *p != '\0'; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return false;
	return true;
}

static bool
is_abs_path(const char *s)
{
	if (s[0] != '/')
		return false;
	for (const char *p = s; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

/* Check one string value against its type; on success store it. */
static void
check_string(struct ctx *x, const struct field *f, const char *key, const struct sb_ynode *n,
    struct sb_task_str *out)
{
	_cleanup_free_ char *s = NULL;
	struct sb_error *err = NULL;
	bool ok;

	/* A boolean is a boolean here, not text someone forgot to quote. */
	if (f->type == F_BOOL && n != NULL && n->kind == SB_YNODE_SCALAR &&
	    n->type == SB_YSCALAR_BOOL)
		s = strip_dup(n->value), ok = true;
	else
		s = scalar_text(x, n, key, &ok);
	if (!ok)
		return;
	if (s == NULL) {
		if (f->required)
			report(x, n, "%s: must be set (it is null)", key);
		return;
	}
	switch (f->type) {
	case F_STR:
		break;
	case F_NONBLANK:
		if (*s == '\0')
			return report(x, n, "%s: must not be blank", key);
		break;
	case F_ID:
		if (!sb_task_id_valid(s))
			return report(x, n,
			    "%s: '%s' is not a task id (letters and digits, separated by '.', '_', "
			    "'__' or '-', at most 128 characters)",
			    key, s);
		break;
	case F_URL:
		if (!is_url(s))
			return report(x, n, "%s: '%s' is not an https:// URL", key, s);
		break;
	case F_LANGUAGE:
		if (strcmp(s, "c") != 0 && strcmp(s, "go") != 0 && strcmp(s, "rust") != 0)
			return report(x, n, "%s: '%s' is not one of c, go, rust", key, s);
		break;
	case F_ORIGINALITY:
		if (strcmp(s, "public") != 0 && strcmp(s, "crafted") != 0)
			return report(x, n, "%s: '%s' is not one of public, crafted", key, s);
		break;
	case F_BOOL:
		if (strcmp(s, "true") != 0 && strcmp(s, "false") != 0)
			return report(x, n, "%s: '%s' is not true or false", key, s);
		break;
	case F_ABSPATH:
		if (!is_abs_path(s))
			return report(x, n, "%s: '%s' is not an absolute path", key, s);
		break;
	case F_RELPATH:
		if (sb_path_check_relative(s, &err) < 0) {
			report(x, n, "%s: '%s': %s", key, s, sb_error_message(err));
			sb_error_release(&err);
			return;
		}
		break;
	case F_GLOB_LIST:
		/* An item of one (check_list): a pattern of the tree's paths. */
		if (sb_glob_check(s, &err) < 0) {
			report(x, n, "%s: %s", key, sb_error_message(err));
			sb_error_release(&err);
			return;
		}
		break;
	case F_RELPATH_LIST:
	case F_STR_LIST:
	case F_OBJECT:
		return;
	}
	out->s = TAKE_PTR(s);
	out->line = n->line;
	out->col = n->col;
}

static void
check_list(struct ctx *x, const struct field *f, const char *key, const struct sb_ynode *n,
    struct sb_task_list *out)
{
	out->present = true;
	out->line = n != NULL ? n->line : 0;
	out->col = n != NULL ? n->col : 0;
	if (sb_ynode_is_null(n))
		return;
	if (n->kind != SB_YNODE_SEQ)
		return report(x, n, "%s: expected a list, got %s", key, sb_ynode_describe(n));
	out->v = sb_xcalloc(n->n ? n->n : 1, sizeof(*out->v));
	for (size_t i = 0; i < n->n; i++) {
		struct field item = { f->name,
			f->type == F_RELPATH_LIST ? F_RELPATH
			: f->type == F_GLOB_LIST  ? F_GLOB_LIST
						  : F_NONBLANK,
			true, 0, NULL };
		_cleanup_free_ char *ikey = sb_xasprintf("%s[%zu]", key, i);
		struct sb_task_str s = { NULL, 0, 0 };

		check_string(x, &item, ikey, n->items[i], &s);
		if (s.s != NULL)
			out->v[out->n++] = s;
	}
}

static void check_object(struct ctx *x, const struct field *fields, const char *prefix,
    const struct sb_ynode *map);

static void
check_field(struct ctx *x, const struct field *f, const char *key, const struct sb_ynode *n)
{
	char *base = (char *)x->c;

	switch (f->type) {
	case F_OBJECT:
		if (n == NULL || n->kind != SB_YNODE_MAP) {
			report(x, n, "%s: expected a mapping, got %s", key, sb_ynode_describe(n));
			return;
		}
		check_object(x, f->sub, key, n);
		return;
	case F_RELPATH_LIST:
	case F_STR_LIST:
	case F_GLOB_LIST:
		check_list(x, f, key, n, (struct sb_task_list *)(base + f->off));
		return;
	case F_STR:
	case F_NONBLANK:
	case F_ID:
	case F_URL:
	case F_LANGUAGE:
	case F_ORIGINALITY:
	case F_BOOL:
	case F_ABSPATH:
	case F_RELPATH:
		check_string(x, f, key, n, (struct sb_task_str *)(base + f->off));
		return;
	}
}

static void
check_object(struct ctx *x, const struct field *fields, const char *prefix,
    const struct sb_ynode *map)
{
	/* Unknown keys first, in file order, each with a suggestion when one is close. */
	for (size_t i = 0; i < map->n; i++) {
		const char *k = map->keys[i]->value;
		const struct field *f;
		const char *near;

		for (f = fields; f->name != NULL; f++)
			if (strcmp(f->name, k) == 0)
				break;
		if (f->name != NULL)
			continue;
		near = closest_key(fields, k);
		if (near != NULL)
			report(x, map->keys[i], "unknown key '%s%s%s' (did you mean '%s'?)",
			    prefix ? prefix : "", prefix ? "." : "", k, near);
		else
			report(x, map->keys[i], "unknown key '%s%s%s'", prefix ? prefix : "",
			    prefix ? "." : "", k);
	}
	for (const struct field *f = fields; f->name != NULL; f++) {
		const struct sb_ynode *v = NULL;
		_cleanup_free_ char *key = prefix ? sb_xasprintf("%s.%s", prefix, f->name)
						  : sb_xstrdup(f->name);
		bool present = false;

		for (size_t i = 0; i < map->n; i++)
			if (strcmp(map->keys[i]->value, f->name) == 0) {
				v = map->items[i];
				present = true;
			}
		if (!present) {
			if (f->required)
				report(x, map, "missing required key '%s'", key);
			continue;
		}
		check_field(x, f, key, v);
	}
}

struct sb_task_config *
sb_task_config_parse(const char *data, size_t len, const char *file, struct sb_diags *diags)
{
	struct sb_task_config *c = sb_xcalloc(1, sizeof(*c));
	_cleanup_ynode_ struct sb_ynode *root = NULL;
	struct sb_error *err = NULL;
	struct sb_yloc loc = { 0, 0 };
	struct ctx x = { c, file, diags };
	const struct sb_ynode *desc;

	if (sb_yaml_load(data, len, &root, &loc, &err) < 0) {
		sb_diags_add(diags, file, loc.line, loc.col, "invalid YAML: %s",
		    sb_error_message(err));
		sb_error_release(&err);
		return c;
	}
	if (root == NULL || root->kind != SB_YNODE_MAP) {
		report(&x, root, "expected a mapping of task settings, got %s",
		    root == NULL ? "an empty document" : sb_ynode_describe(root));
		return c;
	}
	check_object(&x, root_fields, NULL, root);

	/* At least one way to tell the agent what is wrong. */
	desc = sb_ymap_get(root, "task_description");
	if (desc != NULL && desc->kind == SB_YNODE_MAP) {
		bool issue = c->task_description.issue.s && *c->task_description.issue.s;
		bool bug = c->task_description.bug_description.s &&
			*c->task_description.bug_description.s;

		if (!issue && !bug && c->task_description.crash_report.n == 0)
			report(&x, desc,
			    "task_description: needs at least one of issue, crash_report, "
			    "bug_description");
	}
	return c;
}

static void
str_release(struct sb_task_str *s)
{
	free(s->s);
	s->s = NULL;
}

static void
list_release(struct sb_task_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].s);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static const char *const protected_c[] = { "test/**", "tests/**", "testsuite/**", "**/test/**",
	"**/tests/**", "**/testsuite/**", "**/test_*.c", "**/*_test.c", "**/test_*.cc",
	"**/*_test.cc", "**/test_*.cpp", "**/*_test.cpp", NULL };
static const char *const protected_go[] = { "**/*_test.go", "**/testdata/**", NULL };
static const char *const protected_rust[] = { "tests/**", "**/tests/**", "benches/**", NULL };

const char *const *
sb_task_protected_defaults(const struct sb_task_config *c)
{
	const char *lang = c->language.s != NULL ? c->language.s : "";

	if (strcmp(lang, "go") == 0)
		return protected_go;
	if (strcmp(lang, "rust") == 0)
		return protected_rust;
	return protected_c;
}

bool
sb_task_path_protected(const struct sb_task_config *c, const char *path,
    const char **ret_pattern)
{
	for (size_t i = 0; i < c->protected_paths.n; i++)
		if (sb_glob_match(c->protected_paths.v[i].s, path)) {
			if (ret_pattern != NULL)
				*ret_pattern = c->protected_paths.v[i].s;
			return true;
		}
	if (c->protected_defaults.s != NULL && strcmp(c->protected_defaults.s, "false") == 0)
		return false;
	for (const char *const *p = sb_task_protected_defaults(c); *p != NULL; p++)
		if (sb_glob_match(*p, path)) {
			if (ret_pattern != NULL)
				*ret_pattern = *p;
			return true;
		}
	return false;
}

void
sb_task_config_free(struct sb_task_config *c)
{
	/* Checked before any member's address is taken: &c->id of a NULL c is undefined
	 * behaviour, and sb_task_load frees a config it never made. */
	if (c == NULL)
		return;

	struct sb_task_str *strs[] = { &c->id, &c->project, &c->repository, &c->language,
		&c->source, &c->task_description.issue, &c->task_description.bug_description,
		&c->scripts.build, &c->scripts.run, &c->scripts.test, &c->files.patch,
		&c->files.future_test, &c->files.security_test, &c->files.intent_test,
		&c->sanitizer, &c->type, &c->binary, &c->trigger_commit, &c->patch_commit,
		&c->originality, &c->protected_defaults };

	for (size_t i = 0; i < SB_ARRAY_SIZE(strs); i++)
		str_release(strs[i]);
	list_release(&c->task_description.crash_report);
	list_release(&c->files.poc);
	list_release(&c->reference);
	list_release(&c->protected_paths);
	free(c);
}

unsigned
sb_task_checks(const struct sb_task_config *c)
{
	unsigned checks = 0;

	if (c->scripts.build.s != NULL)
		checks |= SB_CHECK_BUILD;
	if (c->scripts.run.s != NULL && c->files.poc.n > 0)
		checks |= SB_CHECK_POC;
	if (c->scripts.test.s != NULL)
		checks |= SB_CHECK_FUNCTION_TEST;
	if (c->scripts.test.s != NULL && c->files.future_test.s != NULL)
		checks |= SB_CHECK_INTENT_TEST;
	return checks;
}

static const char *const action_names[SB_ACTION_COUNT] = {
	[SB_ACTION_BUILD] = "build",
	[SB_ACTION_RUN_POC] = "run_poc",
	[SB_ACTION_FUNCTION_TEST] = "function_test",
	[SB_ACTION_INTENT_TEST] = "intent_test",
};

const char *
sb_action_name(enum sb_action a)
{
	return (unsigned)a < SB_ACTION_COUNT ? action_names[a] : NULL;
}

int
sb_action_parse(const char *name, enum sb_action *ret)
{
	if (name == NULL)
		return -1;
	for (unsigned a = 0; a < SB_ACTION_COUNT; a++)
		if (strcmp(name, action_names[a]) == 0) {
			*ret = (enum sb_action)a;
			return 0;
		}
	return -1;
}

bool
sb_level_allows(unsigned level, enum sb_action action)
{
	/* The highest level at which each action is still open to the agent. */
	static const unsigned open_up_to[SB_ACTION_COUNT] = {
		[SB_ACTION_BUILD] = 3,
		[SB_ACTION_FUNCTION_TEST] = 2,
		[SB_ACTION_RUN_POC] = 1,
		[SB_ACTION_INTENT_TEST] = 0,
	};

	/*
	 * Deny by default: a gate that let an unknown value through would be one new action,
	 * or one cast, away from running a check the level withholds.
	 */
	if ((unsigned)action >= SB_ACTION_COUNT || level > 4)
		return false;
	return level <= open_up_to[action];
}

const char *
sb_level_name(unsigned level)
{
	static const char *const names[] = { "FULL_ASSISTANCE", "NO_INTENT_TEST", "NO_FUTURE_TEST",
		"BUILD_ONLY", "NO_BUILD" };

	return level < SB_ARRAY_SIZE(names) ? names[level] : "?";
}

const char *
sb_task_check_name(enum sb_task_check check)
{
	switch (check) {
	case SB_CHECK_BUILD:
		return "build";
	case SB_CHECK_POC:
		return "poc";
	case SB_CHECK_FUNCTION_TEST:
		return "function_test";
	case SB_CHECK_INTENT_TEST:
		return "intent_test";
	}
	return "?";
}

size_t
sb_task_config_paths(const struct sb_task_config *c, struct sb_task_path_ref **ret)
{
	const struct {
		const char *key;
		const struct sb_task_str *s;
	} singles[] = {
		{ "scripts.build", &c->scripts.build },
		{ "scripts.run", &c->scripts.run },
		{ "scripts.test", &c->scripts.test },
		{ "files.patch", &c->files.patch },
		{ "files.future_test", &c->files.future_test },
		{ "files.security_test", &c->files.security_test },
		{ "files.intent_test", &c->files.intent_test },
	};
	size_t n = 0, max = SB_ARRAY_SIZE(singles) + c->files.poc.n +
		c->task_description.crash_report.n;
	struct sb_task_path_ref *refs = sb_xcalloc(max ? max : 1, sizeof(*refs));

	for (size_t i = 0; i < c->task_description.crash_report.n; i++) {
		refs[n].key = sb_xasprintf("task_description.crash_report[%zu]", i);
		refs[n++].path = &c->task_description.crash_report.v[i];
	}
	for (size_t i = 0; i < SB_ARRAY_SIZE(singles); i++) {
		if (singles[i].s->s == NULL)
			continue;
		refs[n].key = sb_xstrdup(singles[i].key);
		refs[n++].path = singles[i].s;
	}
	for (size_t i = 0; i < c->files.poc.n; i++) {
		refs[n].key = sb_xasprintf("files.poc[%zu]", i);
		refs[n++].path = &c->files.poc.v[i];
	}
	*ret = refs;
	return n;
}

void
sb_task_path_refs_free(struct sb_task_path_ref *refs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(refs[i].key);
	free(refs);
}

static json_t *
list_json(const struct sb_task_list *l)
{
	json_t *a;

	if (!l->present || l->v == NULL)
		return json_null();
	a = json_array();
	for (size_t i = 0; i < l->n; i++)
		json_array_append_new(a, sb_json_string_or_null(l->v[i].s));
	return a;
}

json_t *
sb_task_config_to_json(const struct sb_task_config *c)
{
#define S(field) sb_json_string_or_null(c->field.s)
	json_t *j = json_pack("{s:o, s:o, s:o, s:o, s:o, s:{s:o, s:o, s:o}, s:{s:o, s:o, s:o}, "
			 "s:{s:o, s:o, s:o, s:o, s:o}, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
	    "id", S(id), "project", S(project), "repository", S(repository), "language",
	    S(language), "source", S(source), "task_description", "issue",
	    S(task_description.issue), "crash_report", list_json(&c->task_description.crash_report),
	    "bug_description", S(task_description.bug_description), "scripts", "build",
	    S(scripts.build), "run", S(scripts.run), "test", S(scripts.test), "files", "patch",
	    S(files.patch), "future_test", S(files.future_test), "security_test",
	    S(files.security_test), "intent_test", S(files.intent_test), "poc",
	    list_json(&c->files.poc), "sanitizer", S(sanitizer), "type", S(type), "binary",
	    S(binary), "trigger_commit", S(trigger_commit), "patch_commit", S(patch_commit),
	    "reference", list_json(&c->reference), "originality", S(originality));

	if (j != NULL && c->protected_paths.present)
		json_object_set_new(j, "protected", list_json(&c->protected_paths));
	if (j != NULL && c->protected_defaults.s != NULL)
		json_object_set_new(j, "protected_defaults",
		    json_boolean(strcmp(c->protected_defaults.s, "true") == 0));
	return j;
#undef S
}

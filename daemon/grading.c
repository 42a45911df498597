/* SPDX-License-Identifier: Apache-2.0 */
/* grading.c: the graded patch, the patch's scope and the oracle facts (grading.h). */
#include "config.h"

#include <elf.h>
#include <string.h>

#include "sb/glob.h"
#include "sb/json.h"
#include "sb/mem.h"

#include "grading.h"

/* At most this many objects and findings are recorded: a build of a million objects is a
 * patch's doing, and says as much by being truncated. */
#define ORACLE_OBJECTS_MAX 20000
#define ORACLE_FINDINGS_MAX 1000
#define REVERTED_LISTED 1000 /* paths named in the list; all are counted */

/* --- the graded patch ------------------------------------------------------------------ */

int
grading_patch(const struct sb_task_config *t, const char *diff, size_t len,
    const struct sb_git_file *files, size_t nfiles, struct sb_buf *out, json_t **ret_reverted,
    struct sb_error **err)
{
	json_auto_t *reverted = json_array();
	size_t count = 0;

	for (size_t i = 0; i < nfiles; i++) {
		const struct sb_git_file *f = &files[i];
		const char *pattern = NULL;

		if (f->diff_off > len || f->diff_len > len - f->diff_off)
			return sb_error_set(err, EPROTO, "a file's section lies outside the diff");
		if (sb_task_path_protected(t, f->path, &pattern)) {
			if (++count <= REVERTED_LISTED)
				json_array_append_new(reverted, json_pack("{s:o, s:s}", "path",
								   sb_json_string_or_null(f->path),
								   "pattern", pattern));
			continue;
		}
		if (sb_buf_append(out, diff + f->diff_off, f->diff_len, err) < 0)
			return -1;
	}
	*ret_reverted = json_pack("{s:I, s:O}", "count", (json_int_t)count, "paths", reverted);
	return 0;
}

/* --- the patch's scope ------------------------------------------------------------------ */

static bool
ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Does any component of path contain needle? */
static bool
component_has(const char *path, const char *needle)
{
	return strstr(path, needle) != NULL;
}

static const char *
file_class(const struct sb_task_config *t, const char *path)
{
	static const char *const build_names[] = { "CMakeLists.txt", "Makefile", "GNUmakefile",
		"makefile", "configure", "meson.build", "meson_options.txt", "Cargo.toml",
		"go.mod", "build.sh", NULL };
	static const char *const build_ends[] = { ".cmake", ".am", ".ac", ".in", ".mk", ".m4",
		".pro", ".gyp", ".ninja", NULL };
	static const char *const source_ends[] = { ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp",
		".hh", ".inc", ".y", ".l", ".rs", ".go", ".S", ".s", NULL };
	const char *base = strrchr(path, '/') != NULL ? strrchr(path, '/') + 1 : path;

	for (const char *const *p = sb_task_protected_defaults(t); *p != NULL; p++)
		if (sb_glob_match(*p, path))
			return "test";
	if (component_has(path, "fuzz") || component_has(path, "harness"))
		return "harness";
	for (const char *const *n = build_names; *n != NULL; n++)
		if (strcmp(base, *n) == 0)
			return "build";
	for (const char *const *e = build_ends; *e != NULL; e++)
		if (ends_with(base, *e))
			return "build";
	for (const char *const *e = source_ends; *e != NULL; e++)
		if (ends_with(base, *e))
			return "source";
	return "other";
}

static bool
is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* Does line (n bytes) call name: name as a whole identifier, then optional blanks and '('? */
static bool
calls(const char *line, size_t n, const char *name)
{
	size_t l = strlen(name);

	for (size_t i = 0; i + l <= n; i++) {
		size_t j = i + l;

		if (memcmp(line + i, name, l) != 0 || (i > 0 && is_ident(line[i - 1])))
			continue;
		while (j < n && (line[j] == ' ' || line[j] == '\t'))
			j++;
		if (j < n && line[j] == '(')
			return true;
	}
	return false;
}

static bool
mentions(const char *line, size_t n, const char *word)
{
	size_t l = strlen(word);

	for (size_t i = 0; i + l <= n; i++)
		if (memcmp(line + i, word, l) == 0)
			return true;
	return false;
}

enum scope_flag { FLAG_SANITIZER, FLAG_PROCESS, FLAG_NETWORK, FLAG_COUNT };

/* Which flags an added line raises. */
static void
flag_line(const char *line, size_t n, unsigned counts[FLAG_COUNT])
{
	static const char *const sanitizer_words[] = { "__asan_", "__lsan_", "__ubsan_", "__msan_",
		"__tsan_", "__hwasan_", "__sanitizer_", "ASAN_OPTIONS", "UBSAN_OPTIONS",
		"LSAN_OPTIONS", "MSAN_OPTIONS", "no_sanitize", "-fno-sanitize", "-fsanitize", NULL };
	static const char *const process_calls[] = { "fork", "vfork", "execl", "execlp", "execle",
		"execv", "execvp", "execve", "execvpe", "system", "popen", "signal", "sigaction",
		"_exit", "_Exit", "atexit", "on_exit", "dup2", "dup3", "setrlimit", "prctl",
		"ptrace", "kill", "raise", "abort", "setjmp", "longjmp", "dlopen", "dlsym", NULL };
	static const char *const network_calls[] = { "socket", "connect", "bind", "listen",
		"accept", "getaddrinfo", "gethostbyname", "sendto", "recvfrom", "curl_easy_init",
		NULL };

	for (const char *const *w = sanitizer_words; *w != NULL; w++)
		if (mentions(line, n, *w)) {
			counts[FLAG_SANITIZER]++;
			break;
		}
	for (const char *const *c = process_calls; *c != NULL; c++)
		if (calls(line, n, *c)) {
			counts[FLAG_PROCESS]++;
			break;
		}
	for (const char *const *c = network_calls; *c != NULL; c++)
		if (calls(line, n, *c)) {
			counts[FLAG_NETWORK]++;
			break;
		}
}

json_t *
grading_scope(const struct sb_task_config *t, const char *diff, const struct sb_git_file *files,
    size_t nfiles)
{
	static const char *const classes[] = { "source", "test", "build", "harness", "other" };
	json_auto_t *by_class = json_object(), *list = json_array();
	unsigned totals[FLAG_COUNT] = { 0 };
	size_t added = 0, removed = 0, protected_n = 0;

	for (size_t i = 0; i < SB_ARRAY_SIZE(classes); i++)
		json_object_set_new(by_class, classes[i],
		    json_pack("{s:i, s:I, s:I}", "files", 0, "added", (json_int_t)0, "removed",
			(json_int_t)0));
	for (size_t i = 0; i < nfiles; i++) {
		const struct sb_git_file *f = &files[i];
		const char *cls = file_class(t, f->path);
		unsigned counts[FLAG_COUNT] = { 0 };
		const char *s = diff + f->diff_off, *end = s + f->diff_len;
		json_t *c = json_object_get(by_class, cls);
		bool prot = sb_task_path_protected(t, f->path, NULL);

		/* Added lines of the section: "+...", not the "+++ b/..." header. */
		while (s < end) {
			const char *nl = memchr(s, '\n', (size_t)(end - s));
			size_t n = nl != NULL ? (size_t)(nl - s) : (size_t)(end - s);

			if (n > 0 && s[0] == '+' && !(n >= 4 && memcmp(s, "+++ ", 4) == 0))
				flag_line(s + 1, n - 1, counts);
			s += n + (nl != NULL);
		}
		for (int k = 0; k < FLAG_COUNT; k++)
			totals[k] += counts[k];
		added += f->additions;
		removed += f->deletions;
		protected_n += prot;
		json_object_set_new(c, "files",
		    json_integer(json_integer_value(json_object_get(c, "files")) + 1));
		json_object_set_new(c, "added",
		    json_integer(json_integer_value(json_object_get(c, "added")) +
			(json_int_t)f->additions));
		json_object_set_new(c, "removed",
		    json_integer(json_integer_value(json_object_get(c, "removed")) +
			(json_int_t)f->deletions));
		if (json_array_size(list) < 200)
			json_array_append_new(list,
			    json_pack("{s:o, s:s, s:I, s:I, s:b, s:b}", "path",
				sb_json_string_or_null(f->path), "class", cls, "added",
				(json_int_t)f->additions, "removed", (json_int_t)f->deletions,
				"binary", f->binary, "protected", prot));
	}
	return json_pack("{s:I, s:I, s:I, s:O, s:O, s:{s:b, s:I, s:I, s:I}}", "files",
	    (json_int_t)nfiles, "added", (json_int_t)added, "removed", (json_int_t)removed,
	    "classes", by_class, "list", list, "flags", "touches_protected", protected_n > 0,
	    "sanitizer_lines", (json_int_t)totals[FLAG_SANITIZER], "process_control_lines",
	    (json_int_t)totals[FLAG_PROCESS], "network_lines", (json_int_t)totals[FLAG_NETWORK]);
}

/* --- the oracle facts -------------------------------------------------------------------- */

/* The sanitizers' interfaces: a project object that defines one of these replaces part of
 * the runtime (its options, its report hooks). */
static const char *const hook_prefixes[] = { "__asan_", "__lsan_", "__ubsan_", "__msan_",
	"__tsan_", "__hwasan_", "__sanitizer_", "__sancov_", NULL };

/* The runtime's controls: where reports go, what happens at a report or at death. */
static const char *const control_calls[] = { "__sanitizer_set_report_path",
	"__sanitizer_set_report_fd", "__sanitizer_set_death_callback", "__asan_set_death_callback",
	"__asan_set_error_report_callback", "__sanitizer_install_malloc_and_free_hooks",
	"__asan_poison_memory_region", "__asan_unpoison_memory_region", "__lsan_disable",
	"__lsan_enable", "__lsan_ignore_object", "__msan_set_death_callback",
	"__ubsan_set_report_path", NULL };

static bool
has_prefix(const char *s, const char *const *prefixes)
{
	for (const char *const *p = prefixes; *p != NULL; p++)
		if (strncmp(s, *p, strlen(*p)) == 0)
			return true;
	return false;
}

static bool
in_list(const char *s, const char *const *list)
{
	for (const char *const *p = list; *p != NULL; p++)
		if (strcmp(s, *p) == 0)
			return true;
	return false;
}

/*
 * What the compiler emits in an object built with AddressSanitizer: a module constructor
 * that calls these (even for a file with no memory access)...
 */
static bool
asan_module(const char *name)
{
	return strcmp(name, "__asan_init") == 0 ||
	       strncmp(name, "__asan_version_mismatch_check_", 30) == 0;
}

/* ...and, for every function not exempted (no_sanitize), checks that call these. A module
 * whose functions were all exempted keeps the constructor and loses these. */
static bool
asan_check(const char *name)
{
	return strncmp(name, "__asan_report_", 14) == 0 || strncmp(name, "__asan_load", 11) == 0 ||
	       strncmp(name, "__asan_store", 12) == 0;
}

void
grading_oracle_init(struct grading_oracle *o)
{
	memset(o, 0, sizeof(*o));
	o->objects = json_object();
	o->hooks = json_array();
	o->calls = json_array();
	o->duplicates = json_array();
	o->unreadable = json_array();
}

void
grading_oracle_unreadable(struct grading_oracle *o, const char *path)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(8192);

	if (json_array_size(o->unreadable) >= ORACLE_FINDINGS_MAX ||
	    sb_buf_append_escaped(&b, path, strlen(path), NULL) < 0) {
		o->truncated = true;
		return;
	}
	json_array_append_new(o->unreadable, json_string(b.s));
}

void
grading_oracle_release(struct grading_oracle *o)
{
	json_decref(o->objects);
	json_decref(o->hooks);
	json_decref(o->calls);
	json_decref(o->duplicates);
	json_decref(o->unreadable);
	memset(o, 0, sizeof(*o));
}

static void
add_finding(struct grading_oracle *o, json_t *list, const char *id, const char *symbol)
{
	if (json_array_size(list) >= ORACLE_FINDINGS_MAX) {
		o->truncated = true;
		return;
	}
	json_array_append_new(list, json_pack("{s:s, s:o}", "object", id, "symbol",
					sb_json_string_or_null(symbol)));
}

void
grading_oracle_object(struct grading_oracle *o, const char *path, const struct sb_elf_object *obj)
{
	_cleanup_buf_ struct sb_buf id = SB_BUF_INIT(8192);
	bool asan = false, checks = false;

	/* Executables and shared objects hold the sanitizer runtime itself: only what the
	 * compiler made of the project's sources (relocatable objects) is the project's. A core
	 * or unknown type is what an object rewritten to hide from this reader looks like. */
	if (obj->kind == SB_ELF_CORE_OR_OTHER) {
		grading_oracle_unreadable(o, path);
		return;
	}
	if (obj->kind != SB_ELF_RELOCATABLE)
		return;
	if (o->nobjects >= ORACLE_OBJECTS_MAX) {
		o->truncated = true;
		return;
	}
	o->nobjects++;
	/* Names are the build's: escaped, so they are text and cannot forge anything. An id
	 * past the buffer would be cut, and two objects could then share it: the facts are
	 * then incomplete, which fails closed. */
	if (sb_buf_append_escaped(&id, path, strlen(path), NULL) < 0 ||
	    (obj->member != NULL &&
		(sb_buf_appends(&id, "(", NULL) < 0 ||
		    sb_buf_append_escaped(&id, obj->member, strlen(obj->member), NULL) < 0 ||
		    sb_buf_appends(&id, ")", NULL) < 0))) {
		o->truncated = true;
		return;
	}
	/*
	 * One id, one object: a second member of that name in an archive (the linker takes the
	 * first, these facts would keep the last) or a file named like an archive member is a
	 * build that shows this reader something other than what is linked.
	 */
	if (json_object_get(o->objects, id.s) != NULL) {
		add_finding(o, o->duplicates, id.s, NULL);
		return;
	}
	if (obj->truncated)
		o->truncated = true;
	for (size_t i = 0; i < obj->nsymbols; i++) {
		const struct sb_elf_symbol *s = &obj->symbols[i];

		/* A weak reference to the runtime is not what instrumentation emits; it is how a
		 * plain object would pass for an instrumented one. */
		if (!s->defined && s->bind == STB_WEAK && has_prefix(s->name, hook_prefixes)) {
			_cleanup_free_ char *what = sb_xasprintf("%s (weak reference)", s->name);

			add_finding(o, o->calls, id.s, what);
			continue;
		}
		if (!s->defined && asan_module(s->name))
			asan = true;
		if (!s->defined && asan_check(s->name))
			checks = true;
		if (s->defined && s->bind != STB_LOCAL && has_prefix(s->name, hook_prefixes))
			add_finding(o, o->hooks, id.s, s->name);
		if (!s->defined && in_list(s->name, control_calls))
			add_finding(o, o->calls, id.s, s->name);
	}
	json_object_set_new(o->objects, id.s, json_pack("{s:b, s:b}", "asan", asan || checks,
						  "checks", checks));
}

json_t *
grading_oracle_json(const struct grading_oracle *o)
{
	return json_pack("{s:O, s:O, s:O, s:O, s:O, s:I, s:b}", "objects", o->objects, "hooks",
	    o->hooks, "calls", o->calls, "duplicates", o->duplicates, "unreadable", o->unreadable,
	    "nobjects", (json_int_t)o->nobjects, "truncated", o->truncated);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * taskdir.c: loading and checking task folders and datasets.
 *
 * The checks are upstream's static rules (docs/upstream.md, "Dataset validation"). The
 * interesting part is reading the Dockerfile backwards: the config names files by their place
 * in the image (/ssebench/scripts/build.sh), the folder holds them somewhere else
 * (sse/build.sh), and only the COPY instructions of the final build stage connect the two.
 */
#include "config.h"

#include <ctype.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <string.h>
#include <sys/stat.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/fs.h"
#include "sb/limits.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/path.h"
#include "sb/sha256.h"
#include "sb/taskdir.h"
#include "sb/yaml.h"

#define REGISTRY_ARG "SSEBENCH_REGISTRY"

/* One COPY/ADD of the final stage, with sources as clean context paths ("" = the root). */
struct copy_op {
	struct sb_argv srcs;
	char *dest;	/* normalised absolute */
	bool dest_dir;	/* written with a trailing slash, or several sources */
	unsigned line;
};

struct copy_plan {
	struct copy_op *v;
	size_t n;
};

static void
copy_plan_release(struct copy_plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		sb_argv_release(&p->v[i].srcs);
		free(p->v[i].dest);
	}
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

static bool
has_wildcard(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* A COPY source as a clean path in the build context; NULL if it leaves the context. */
static char *
clean_context_path(const char *src)
{
	_cleanup_free_ char *abs = sb_xasprintf("/%s", src);
	_cleanup_free_ char *norm = NULL;
	size_t depth = 0;

	/* ".." that would climb above the context root: Docker refuses it, and so do we. */
	for (const char *c = src; *c != '\0';) {
		const char *e = strchr(c, '/');
		size_t n = e != NULL ? (size_t)(e - c) : strlen(c);

		if (n == 2 && c[0] == '.' && c[1] == '.') {
			if (depth == 0)
				return NULL;
			depth--;
		} else if (n > 0 && !(n == 1 && c[0] == '.')) {
			depth++;
		}
		c += n + (e != NULL);
		if (e == NULL)
			break;
	}
	norm = sb_path_normalize_abs(abs);
	return sb_xstrdup(norm + 1);
}

/* Kind of a context path: 'f' regular file, 'd' directory, 'o' other, 0 missing/escaping. */
static char
context_kind(int task_fd, const char *rel, struct sb_error **err)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (*rel == '\0')
		return 'd';
	fd = sb_open_beneath(task_fd, rel, O_PATH, 0, 0, err);
	if (fd < 0 || fstat(fd, &st) < 0)
		return 0;
	return S_ISREG(st.st_mode) ? 'f' : S_ISDIR(st.st_mode) ? 'd' : 'o';
}

/*
 * Expand a wildcard source against the context, component by component (Docker matches
 * each path with Go's filepath.Match, where '*' does not cross '/').
 */
static void
glob_context(int task_fd, const char *dir, const char *pattern, struct sb_argv *out)
{
	const char *slash = strchr(pattern, '/');
	_cleanup_free_ char *comp = slash ? sb_xstrndup(pattern, (size_t)(slash - pattern))
					  : sb_xstrdup(pattern);
	char **names = NULL;
	size_t n = 0;

	if (sb_list_dir_at(task_fd, *dir ? dir : ".", SB_TASK_FILES_MAX, &names, &n, NULL) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *path = NULL;

		if (fnmatch(comp, names[i], FNM_PERIOD) != 0)
			continue;
		path = *dir ? sb_xasprintf("%s/%s", dir, names[i]) : sb_xstrdup(names[i]);
		if (slash == NULL)
			sb_argv_push(out, path);
		else if (context_kind(task_fd, path, NULL) == 'd')
			glob_context(task_fd, path, slash + 1, out);
	}
	sb_strv_free(names);
}

/* The instructions of the final stage start after the last FROM. */
static size_t
last_from(const struct sb_dockerfile *df)
{
	size_t last = df->n;

	for (size_t i = 0; i < df->n; i++)
		if (strcmp(df->v[i].cmd, "FROM") == 0)
			last = i;
	return last;
}

static bool
has_flag(const struct sb_dockerfile_insn *in, const char *prefix)
{
	for (size_t i = 0; i < in->flags.n; i++)
		if (strncmp(in->flags.v[i], prefix, strlen(prefix)) == 0)
			return true;
	return false;
}

static bool
is_url(const char *s)
{
	return strncmp(s, "http://", 7) == 0 || strncmp(s, "https://", 8) == 0 ||
		strncmp(s, "git@", 4) == 0;
}

/* Record ARG and ENV definitions in vars (ARG without a value keeps an outer default). */
static void
record_vars(const struct sb_dockerfile_insn *in, struct sb_argv *vars, char escape)
{
	_cleanup_free_ char *args = sb_dockerfile_expand(in->args, vars, escape, NULL);
	char *save = NULL, *w;

	if (strcmp(in->cmd, "ENV") == 0 && strchr(args, '=') == NULL) {
		/* Old form: ENV NAME value with spaces */
		char *sp = strpbrk(args, " \t");

		if (sp != NULL) {
			*sp = '\0';
			sp++;
			while (*sp == ' ' || *sp == '\t')
				sp++;
			sb_env_set(vars, args, sp);
		}
		return;
	}
	for (w = strtok_r(args, " \t", &save); w != NULL; w = strtok_r(NULL, " \t", &save)) {
		char *eq = strchr(w, '=');
		size_t vl;

		if (eq == NULL) {
			if (strcmp(in->cmd, "ARG") == 0 && sb_env_get(vars, w) == NULL)
				sb_env_set(vars, w, "");
			continue;
		}
		*eq = '\0';
		/* Strip one level of quotes around the value. */
		vl = strlen(eq + 1);
		if (vl >= 2 && (eq[1] == '"' || eq[1] == '\'') && eq[vl] == eq[1]) {
			eq[vl] = '\0';
			sb_env_set(vars, w, eq + 2);
		} else {
			sb_env_set(vars, w, eq + 1);
		}
	}
}

/*
 * The copies of the final stage, in order, with variables expanded and WORKDIR applied to
 * relative destinations.
 */
static void
build_copy_plan(const struct sb_dockerfile *df, const struct sb_argv *global_vars,
    struct copy_plan *plan)
{
	_cleanup_argv_ struct sb_argv vars = SB_ARGV_INIT;
	_cleanup_free_ char *workdir = sb_xstrdup("/");
	size_t cap = 0;

	memset(plan, 0, sizeof(*plan));
	sb_argv_pushv(&vars, (const char *const *)global_vars->v);
	for (size_t i = last_from(df) + 1; i < df->n; i++) {
		const struct sb_dockerfile_insn *in = &df->v[i];
		struct copy_op *op;
		char *dest;

		if (strcmp(in->cmd, "ARG") == 0 || strcmp(in->cmd, "ENV") == 0) {
			record_vars(in, &vars, df->escape);
			continue;
		}
		if (strcmp(in->cmd, "WORKDIR") == 0) {
			_cleanup_free_ char *w = sb_dockerfile_expand(in->args, &vars, df->escape,
			    NULL);
			_cleanup_free_ char *joined = w[0] == '/' ? sb_xstrdup(w)
								   : sb_path_join(workdir, w);

			free(workdir);
			workdir = sb_path_normalize_abs(joined);
			continue;
		}
		if ((strcmp(in->cmd, "COPY") != 0 && strcmp(in->cmd, "ADD") != 0) ||
		    in->words.n < 2 || has_flag(in, "--from"))
			continue;
		if (plan->n == cap) {
			cap = cap ? cap * 2 : 16;
			plan->v = sb_xreallocarray(plan->v, cap, sizeof(*plan->v));
		}
		op = &plan->v[plan->n++];
		memset(op, 0, sizeof(*op));
		sb_argv_init(&op->srcs);
		op->line = in->line;
		dest = sb_dockerfile_expand(in->words.v[in->words.n - 1], &vars, df->escape, NULL);
		op->dest_dir = in->words.n > 2 || (dest[0] != '\0' && dest[strlen(dest) - 1] == '/');
		{
			_cleanup_free_ char *joined = dest[0] == '/' ? sb_xstrdup(dest)
								      : sb_path_join(workdir, dest);

			op->dest = sb_path_normalize_abs(joined);
		}
		free(dest);
		for (size_t j = 0; j + 1 < in->words.n; j++) {
			_cleanup_free_ char *src =
			    sb_dockerfile_expand(in->words.v[j], &vars, df->escape, NULL);
			_cleanup_free_ char *clean = NULL;

			if (is_url(src))
				continue;
			clean = clean_context_path(src);
			if (clean != NULL)
				sb_argv_push(&op->srcs, clean);
		}
	}
}

/* Does a COPY of src (a context path, file or directory) put a file at target? */
static char *
source_for_target(int task_fd, const struct copy_op *op, const char *src, const char *target)
{
	char kind = context_kind(task_fd, src, NULL);

	if (kind == 'd') {
		/* A directory source: its contents land in dest. */
		const char *below = sb_path_below(target, op->dest);
		_cleanup_free_ char *cand = NULL;

		if (below == NULL || *below == '\0')
			return NULL;
		cand = *src ? sb_xasprintf("%s/%s", src, below) : sb_xstrdup(below);
		if (context_kind(task_fd, cand, NULL) == 0)
			return NULL;
		return TAKE_PTR(cand);
	}
	if (kind == 0)
		return NULL;
	if (op->dest_dir) {
		_cleanup_free_ char *t = sb_path_join(op->dest, sb_path_basename(src));

		return strcmp(t, target) == 0 ? sb_xstrdup(src) : NULL;
	}
	/* A file to a path without a trailing slash: that path, or a file inside it when an
	 * earlier step made it a directory (COPY sse/config.yaml /ssebench with /ssebench
	 * already there); accept both readings. */
	if (strcmp(op->dest, target) == 0)
		return sb_xstrdup(src);
	{
		_cleanup_free_ char *t = sb_path_join(op->dest, sb_path_basename(src));

		return strcmp(t, target) == 0 ? sb_xstrdup(src) : NULL;
	}
}

static void
global_vars(const struct sb_dockerfile *df, struct sb_argv *vars)
{
	for (size_t i = 0; i < df->n && strcmp(df->v[i].cmd, "FROM") != 0; i++)
		if (strcmp(df->v[i].cmd, "ARG") == 0)
			record_vars(&df->v[i], vars, df->escape);
}

char *
sb_task_context_source(const struct sb_task *t, int task_fd, const char *target)
{
	_cleanup_argv_ struct sb_argv vars = SB_ARGV_INIT;
	struct copy_plan plan;
	char *found = NULL;

	if (t->dockerfile == NULL)
		return NULL;
	global_vars(t->dockerfile, &vars);
	build_copy_plan(t->dockerfile, &vars, &plan);
	/* The last copy that writes the target wins; inside one COPY, the last source. */
	for (size_t i = plan.n; i-- > 0 && found == NULL;) {
		const struct copy_op *op = &plan.v[i];

		for (size_t j = op->srcs.n; j-- > 0 && found == NULL;) {
			const char *src = op->srcs.v[j];

			if (has_wildcard(src)) {
				_cleanup_argv_ struct sb_argv matches = SB_ARGV_INIT;

				glob_context(task_fd, "", src, &matches);
				for (size_t k = matches.n; k-- > 0 && found == NULL;) {
					struct copy_op as_dir = *op;

					/* Several matches behave like several sources. */
					as_dir.dest_dir = op->dest_dir || matches.n > 1;
					found = source_for_target(task_fd, &as_dir, matches.v[k], target);
				}
			} else {
				found = source_for_target(task_fd, op, src, target);
			}
		}
	}
	copy_plan_release(&plan);
	return found;
}

/*
 * The ssebench.* labels are the harness's: `runs` finds a run's containers by ssebench.run,
 * and a container inherits its image's labels wherever the CLI does not set them (dataset
 * verify's tool container, a sandbox run's role), so a task image carrying them could pose
 * as another run. Checked on a LABEL or ONBUILD instruction after ARG and ENV expansion,
 * and wherever the word appears.
 */
static void
check_labels(const struct sb_dockerfile *df, const struct sb_dockerfile_insn *in,
    const struct sb_argv *vars, const char *file, struct sb_diags *diags)
{
	_cleanup_free_ char *expanded = sb_dockerfile_expand(in->args, vars, df->escape, NULL);
	_cleanup_free_ char *lower = sb_ascii_lower(expanded ? expanded : in->args);
	char *w = lower;

	/* Docker drops quotes and escapes from a key: so do we, before looking. */
	for (const char *r = lower; *r != '\0'; r++)
		if (*r != '"' && *r != '\'' && *r != '\\' && *r != df->escape && *r != '\n')
			*w++ = *r;
	*w = '\0';
	if ((strcmp(in->cmd, "LABEL") == 0 || strstr(lower, "label") != NULL) &&
	    strstr(lower, "ssebench.") != NULL)
		sb_diags_add(diags, file, in->line, 1,
		    "a task's image may not carry ssebench.* labels: they are the "
		    "harness's (ssebench.run names a run's containers)");
}

/* Every local source of a COPY or ADD instruction must be in the folder (the build context). */
static void
check_copy_sources(const struct sb_dockerfile *df, const struct sb_dockerfile_insn *in,
    const struct sb_argv *vars, int task_fd, const char *file, struct sb_diags *diags)
{
	for (size_t j = 0; j + 1 < in->words.n; j++) {
		_cleanup_free_ char *src = sb_dockerfile_expand(in->words.v[j], vars, df->escape,
		    NULL);
		_cleanup_free_ char *clean = NULL;
		struct sb_error *err = NULL;

		if (strcmp(in->cmd, "ADD") == 0 && is_url(src))
			continue;
		clean = clean_context_path(src);
		if (clean == NULL) {
			sb_diags_add(diags, file, in->line, 1,
			    "%s source '%s' is outside the task folder", in->cmd, src);
			continue;
		}
		if (has_wildcard(clean)) {
			_cleanup_argv_ struct sb_argv m = SB_ARGV_INIT;

			glob_context(task_fd, "", clean, &m);
			if (m.n == 0)
				sb_diags_add(diags, file, in->line, 1,
				    "%s source '%s' matches no file in the task folder", in->cmd,
				    src);
			continue;
		}
		if (context_kind(task_fd, clean, &err) == 0)
			sb_diags_add(diags, file, in->line, 1,
			    "%s source '%s' is not in the task folder (%s)", in->cmd, src,
			    err != NULL && sb_error_code(err) == EXDEV
				? "it leads outside the folder"
				: sb_error_message(err));
		sb_error_release(&err);
	}
}

/*
 * The last FROM must build on an image under ${REGISTRY_ARG}/, the prefix the CLI passes:
 * what follows it becomes t->base.
 */
static void
check_last_from(struct sb_task *t, const struct sb_dockerfile_insn *from, const char *file,
    struct sb_diags *diags)
{
	_cleanup_free_ char *image = NULL;
	const char *p = from->args, *rest = NULL;

	/* Skip --platform=... and similar flags. */
	while (strncmp(p, "--", 2) == 0) {
		p = strpbrk(p, " \t");
		if (p == NULL)
			return;
		while (*p == ' ' || *p == '\t')
			p++;
	}
	image = sb_xstrndup(p, strcspn(p, " \t"));
	if (strncmp(image, "${" REGISTRY_ARG "}/", strlen(REGISTRY_ARG) + 4) == 0)
		rest = image + strlen(REGISTRY_ARG) + 4;
	else if (strncmp(image, "$" REGISTRY_ARG "/", strlen(REGISTRY_ARG) + 2) == 0)
		rest = image + strlen(REGISTRY_ARG) + 2;
	if (rest == NULL || *rest == '\0') {
		sb_diags_add(diags, file, from->line, 1,
		    "the last FROM must name an image under ${%s}/ (it is '%s')", REGISTRY_ARG,
		    image);
		return;
	}
	t->base = sb_xstrdup(rest);
}

/* Dockerfile rules that do not depend on the config. */
static void
check_dockerfile(struct sb_task *t, int task_fd, const char *file, struct sb_diags *diags)
{
	const struct sb_dockerfile *df = t->dockerfile;
	_cleanup_argv_ struct sb_argv vars = SB_ARGV_INIT;
	bool registry_arg = false, seen_from = false;
	size_t last = last_from(df);

	if (df->has_syntax_directive)
		sb_diags_add(diags, file, df->syntax_line, 1,
		    "'# syntax=' makes BuildKit fetch a frontend image, which an offline engine "
		    "cannot do; remove it");
	if (last == df->n) {
		sb_diags_add(diags, file, 0, 0, "no FROM instruction");
		return;
	}
	for (size_t i = 0; i < df->n; i++) {
		const struct sb_dockerfile_insn *in = &df->v[i];

		if (strcmp(in->cmd, "FROM") == 0)
			seen_from = true;
		if (!seen_from && strcmp(in->cmd, "ARG") == 0) {
			_cleanup_argv_ struct sb_argv one = SB_ARGV_INIT;

			record_vars(in, &one, df->escape);
			if (sb_env_get(&one, REGISTRY_ARG) != NULL)
				registry_arg = true;
		}
		if (strcmp(in->cmd, "LABEL") == 0 || strcmp(in->cmd, "ONBUILD") == 0)
			check_labels(df, in, &vars, file, diags);
		if ((strcmp(in->cmd, "COPY") == 0 || strcmp(in->cmd, "ADD") == 0) &&
		    in->words.n >= 2 && !has_flag(in, "--from"))
			check_copy_sources(df, in, &vars, task_fd, file, diags);
		if (strcmp(in->cmd, "ARG") == 0 || strcmp(in->cmd, "ENV") == 0)
			record_vars(in, &vars, df->escape);
	}
	if (!registry_arg)
		sb_diags_add(diags, file, df->v[0].line, 1,
		    "no 'ARG %s' before the first FROM: the CLI builds with "
		    "--build-arg %s=<prefix>",
		    REGISTRY_ARG, REGISTRY_ARG);
	check_last_from(t, &df->v[last], file, diags);
}

/* Every file the config names must come from a regular file of the folder. */
static void
check_config_paths(struct sb_task *t, int task_fd, const char *cfgfile, const char *dfile,
    struct sb_diags *diags)
{
	struct sb_task_path_ref *refs = NULL;
	_cleanup_free_ char *cfgsrc = NULL;
	size_t n;

	cfgsrc = sb_task_context_source(t, task_fd, SB_TASK_FILES_DIR "/config.yaml");
	if (cfgsrc == NULL || strcmp(cfgsrc, "sse/config.yaml") != 0)
		sb_diags_add(diags, dfile, 0, 0,
		    "the Dockerfile must copy sse/config.yaml to %s/config.yaml%s%s%s",
		    SB_TASK_FILES_DIR, cfgsrc ? " (it copies '" : "", cfgsrc ? cfgsrc : "",
		    cfgsrc ? "' there)" : "");
	n = sb_task_config_paths(t->config, &refs);
	for (size_t i = 0; i < n; i++) {
		const struct sb_task_str *p = refs[i].path;
		_cleanup_free_ char *target = sb_xasprintf("%s/%s", SB_TASK_FILES_DIR, p->s);
		_cleanup_free_ char *src = sb_task_context_source(t, task_fd, target);

		if (src == NULL)
			sb_diags_add(diags, cfgfile, p->line, p->col,
			    "%s: '%s': no COPY in the Dockerfile puts a file of the task folder at %s",
			    refs[i].key, p->s, target);
		else if (context_kind(task_fd, src, NULL) != 'f')
			sb_diags_add(diags, cfgfile, p->line, p->col,
			    "%s: '%s': %s (copied from '%s') is not a regular file", refs[i].key,
			    p->s, target, src);
	}
	sb_task_path_refs_free(refs, n);
}

struct sb_task *
sb_task_load(int dataset_fd, const char *name, const char *display_dir, struct sb_diags *diags)
{
	_cleanup_buf_ struct sb_buf cfg = SB_BUF_INIT(SB_CONFIG_FILE_MAX);
	_cleanup_buf_ struct sb_buf dfb = SB_BUF_INIT(SB_DOCKERFILE_MAX);
	_cleanup_free_ char *cfgfile = NULL, *dfile = NULL;
	_cleanup_close_ int task_fd = -1;
	struct sb_error *err = NULL;
	struct sb_task *t;
	size_t before = diags->n;
	bool config_read = false;

	t = sb_xcalloc(1, sizeof(*t));
	t->name = sb_xstrdup(name);
	t->display = sb_xasprintf("%s/%s", display_dir, name);
	cfgfile = sb_xasprintf("%s/sse/config.yaml", t->display);
	dfile = sb_xasprintf("%s/Dockerfile", t->display);

	/* The folder itself must be a real directory of the dataset, not a link elsewhere. */
	task_fd = sb_open_beneath(dataset_fd, name, O_RDONLY | O_DIRECTORY, 0, SB_OPEN_NO_SYMLINKS,
	    &err);
	if (task_fd < 0) {
		sb_diags_add(diags, t->display, 0, 0, "cannot open the task folder: %s",
		    sb_error_message(err));
		sb_error_release(&err);
		sb_task_free(t);
		return NULL;
	}
	if (sb_read_file_at(task_fd, "sse/config.yaml", 0, &cfg, &err) < 0) {
		sb_diags_add(diags, cfgfile, 0, 0, "cannot read the task config: %s",
		    sb_error_message(err));
		sb_error_release(&err);
		t->config = sb_xcalloc(1, sizeof(*t->config));
	} else {
		config_read = true;
		t->config = sb_task_config_parse(cfg.s, cfg.len, cfgfile, diags);
		if (t->config->id.s != NULL && strcmp(t->config->id.s, name) != 0)
			sb_diags_add(diags, cfgfile, t->config->id.line, t->config->id.col,
			    "id: '%s' differs from the folder name '%s'", t->config->id.s, name);
	}
	if (sb_read_file_at(task_fd, "Dockerfile", 0, &dfb, &err) < 0) {
		sb_diags_add(diags, dfile, 0, 0, "cannot read the Dockerfile: %s",
		    sb_error_message(err));
		sb_error_release(&err);
	} else {
		t->dockerfile = sb_dockerfile_parse(dfb.s, dfb.len, dfile, diags);
		check_dockerfile(t, task_fd, dfile, diags);
		if (t->base != NULL && t->config->language.s != NULL &&
		    strncmp(t->base, "base-generic-", 13) == 0) {
			_cleanup_free_ char *want = sb_xasprintf("base-generic-%s:",
			    t->config->language.s);

			if (strncmp(t->base, want, strlen(want)) != 0)
				sb_diags_add(diags, dfile, t->dockerfile->v[last_from(t->dockerfile)].line,
				    1, "the base image '%s' does not match the config's language '%s'",
				    t->base, t->config->language.s);
		}
		/*
		 * A config that cannot be read has been reported, and so has the Dockerfile's COPY of
		 * it if that is what broke: checking its paths would only add a second, misleading
		 * "must copy sse/config.yaml" for the same cause.
		 */
		if (config_read)
			check_config_paths(t, task_fd, cfgfile, dfile, diags);
	}
	t->problems = (unsigned)(diags->n - before);
	return t;
}

void
sb_task_free(struct sb_task *t)
{
	if (t == NULL)
		return;
	free(t->name);
	free(t->display);
	sb_task_config_free(t->config);
	sb_dockerfile_free(t->dockerfile);
	free(t->base);
	free(t);
}

bool
sb_canary_valid(const char *s)
{
	size_t n = s != NULL ? strlen(s) : 0;

	if (n < 16 || n > 128)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_')
			return false;
	return true;
}

char *
sb_dataset_canary_default(const char *version)
{
	_cleanup_free_ char *seed = sb_xasprintf("ssebench-canary:%s", version ?: "unversioned");
	char hex[65];

	sb_sha256_hex(seed, strlen(seed), hex);
	hex[32] = '\0';
	return sb_xasprintf("SSEBENCH-CANARY-%s", hex);
}

/* dataset.yaml: {version: <lowercase alnum with . _ ->, canary: <optional>}. */
static void
load_dataset_yaml(struct sb_dataset *d, int fd, struct sb_diags *diags)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(SB_CONFIG_FILE_MAX);
	_cleanup_free_ char *file = sb_xasprintf("%s/dataset.yaml", d->path);
	_cleanup_ynode_ struct sb_ynode *root = NULL;
	struct sb_error *err = NULL;
	struct sb_yloc loc = { 0, 0 };
	const struct sb_ynode *v;
	struct stat st;

	if (sb_lstat_at(fd, "dataset.yaml", &st, NULL) < 0)
		return;
	if (sb_read_file_at(fd, "dataset.yaml", 0, &b, &err) < 0 ||
	    sb_yaml_load(b.s, b.len, &root, &loc, &err) < 0) {
		sb_diags_add(diags, file, loc.line, loc.col, "%s", sb_error_message(err));
		sb_error_release(&err);
		return;
	}
	if (root == NULL || root->kind != SB_YNODE_MAP) {
		sb_diags_add(diags, file, root ? root->line : 0, root ? root->col : 0,
		    "expected a mapping with a 'version' key");
		return;
	}
	for (size_t i = 0; i < root->n; i++)
		if (strcmp(root->keys[i]->value, "version") != 0 &&
		    strcmp(root->keys[i]->value, "canary") != 0)
			sb_diags_add(diags, file, root->keys[i]->line, root->keys[i]->col,
			    "unknown key '%s'", root->keys[i]->value);
	v = sb_ymap_get(root, "canary");
	if (v != NULL) {
		if (v->kind != SB_YNODE_SCALAR || !sb_canary_valid(v->value))
			sb_diags_add(diags, file, v->line, v->col,
			    "canary: expected 16 to 128 letters, digits, '-' or '_'");
		else
			d->canary = sb_xstrdup(v->value);
	}
	v = sb_ymap_get(root, "version");
	if (v == NULL) {
		sb_diags_add(diags, file, root->line, root->col, "missing required key 'version'");
		return;
	}
	if (v->kind != SB_YNODE_SCALAR || !sb_name_valid(v->value)) {
		sb_diags_add(diags, file, v->line, v->col,
		    "version: expected lower-case letters, digits, '.', '_' or '-'");
		return;
	}
	d->version = sb_xstrdup(v->value);
}

int
sb_dataset_load(const char *path, struct sb_dataset **ret, struct sb_diags *diags,
    struct sb_error **err)
{
	_cleanup_close_ int fd = -1;
	struct sb_dataset *d;
	char **names = NULL;
	size_t n = 0, len;

	fd = sb_open_dir(path, err);
	if (fd < 0)
		return -1;
	if (sb_list_dir_at(fd, ".", SB_DATASET_TASKS_MAX, &names, &n, err) < 0)
		return sb_error_prefix(err, "dataset '%s'", path);
	d = sb_xcalloc(1, sizeof(*d));
	len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	d->path = sb_xstrndup(path, len);
	d->tasks = sb_xcalloc(n ? n : 1, sizeof(*d->tasks));
	load_dataset_yaml(d, fd, diags);
	if (d->canary == NULL)
		d->canary = sb_dataset_canary_default(d->version);
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		struct sb_task *t;

		struct sb_error *lerr = NULL;

		if (names[i][0] == '.')
			continue;
		/* An entry that cannot be looked at (a name with a control byte, say) is reported,
		 * never skipped in silence: the user would not know a task went missing. */
		if (sb_lstat_at(fd, names[i], &st, &lerr) < 0) {
			_cleanup_free_ char *disp = sb_xasprintf("%s/%s", d->path, names[i]);

			sb_diags_add(diags, disp, 0, 0, "not a usable task folder: %s",
			    sb_error_message(lerr));
			sb_error_release(&lerr);
			continue;
		}
		if (S_ISLNK(st.st_mode)) {
			_cleanup_free_ char *disp = sb_xasprintf("%s/%s", d->path, names[i]);

			sb_diags_add(diags, disp, 0, 0,
			    "a task folder must be a directory, not a symbolic link");
			continue;
		}
		if (!S_ISDIR(st.st_mode))
			continue;
		t = sb_task_load(fd, names[i], d->path, diags);
		if (t != NULL)
			d->tasks[d->n++] = t;
	}
	sb_strv_free(names);
	if (d->n == 0)
		sb_diags_add(diags, d->path, 0, 0, "the dataset has no task folders");
	/* Two ids equal but for case would share one lower-case image name. */
	for (size_t i = 0; i < d->n; i++)
		for (size_t j = i + 1; j < d->n; j++)
			if (strcasecmp(d->tasks[i]->name, d->tasks[j]->name) == 0) {
				_cleanup_free_ char *disp = sb_xasprintf("%s/sse/config.yaml",
				    d->tasks[j]->display);

				sb_diags_add(diags, disp, 0, 0,
				    "task id '%s' differs from '%s' only in case", d->tasks[j]->name,
				    d->tasks[i]->name);
				d->tasks[j]->problems++;
			}
	*ret = d;
	return 0;
}

void
sb_dataset_free(struct sb_dataset *d)
{
	if (d == NULL)
		return;
	for (size_t i = 0; i < d->n; i++)
		sb_task_free(d->tasks[i]);
	free(d->tasks);
	free(d->path);
	free(d->version);
	free(d->canary);
	free(d);
}

const char *
sb_dataset_closest(const struct sb_dataset *d, const char *name)
{
	const char *best = NULL;
	size_t best_d = 3;

	for (size_t i = 0; i < d->n; i++) {
		size_t dist = sb_edit_distance(name, d->tasks[i]->name);

		if (dist < best_d)
			best = d->tasks[i]->name, best_d = dist;
	}
	return best;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* models.c: models/<name>.yaml, strictly (see models.h). */
#include "config.h"

#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/fs.h"
#include "sb/limits.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/path.h"
#include "sb/yaml.h"

#include "cli.h"
#include "models.h"

#define MODELS_FILES_MAX 1000

bool
model_name_valid(const char *m)
{
	if (m == NULL || *m == '\0' || strlen(m) > SB_NAME_MAX || m[0] == '.')
		return false;
	for (const char *p = m; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
			*p == '.' || *p == '_' || *p == '-'))
			return false;
	return true;
}

char *
models_dir(void)
{
	struct stat st;

	if (stat("models", &st) == 0 && S_ISDIR(st.st_mode))
		return sb_xstrdup("models");
	return sb_xasprintf("%s/models", cli_home());
}

static bool
is_string(const struct sb_ynode *n)
{
	return n != NULL && n->kind == SB_YNODE_SCALAR && n->type == SB_YSCALAR_STR && n->len > 0;
}

/* One entry of a file: checked, and added to m when it is valid. */
static void
load_entry(struct models *m, const char *file, const struct sb_ynode *e, struct sb_diags *diags)
{
	static const char *const keys[] = { "model_name", "litellm_params", "model_info", NULL };
	const struct sb_ynode *name, *params, *info, *target, *key;
	size_t before = diags->n;
	_cleanup_free_ char *key_env = NULL;

	if (e->kind != SB_YNODE_MAP) {
		sb_diags_add(diags, file, e->line, e->col, "a model entry must be a mapping, not %s",
		    sb_ynode_describe(e));
		return;
	}
	for (size_t i = 0; i < e->n; i++) {
		const char *k = e->keys[i]->value, *near;
		bool known = false;

		for (const char *const *p = keys; *p != NULL; p++)
			known = known || strcmp(k, *p) == 0;
		if (known)
			continue;
		near = sb_closest(k, keys, SIZE_MAX);
		sb_diags_add(diags, file, e->keys[i]->line, e->keys[i]->col, "unknown key '%s'%s%s%s",
		    k, near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
	}
	name = sb_ymap_get(e, "model_name");
	params = sb_ymap_get(e, "litellm_params");
	info = sb_ymap_get(e, "model_info");
	if (!is_string(name))
		sb_diags_add(diags, file, e->line, e->col, "model_name must be a string");
	else if (!model_name_valid(name->value))
		sb_diags_add(diags, file, name->line, name->col,
		    "model_name '%s' must be letters, digits, '.', '_' and '-' (it names a results "
		    "directory)",
		    name->value);
	else if (models_find(m, name->value) != NULL)
		sb_diags_add(diags, file, name->line, name->col, "model '%s' is defined twice (also in %s:%u)",
		    name->value, models_find(m, name->value)->file, models_find(m, name->value)->line);
	if (params == NULL || params->kind != SB_YNODE_MAP) {
		sb_diags_add(diags, file, e->line, e->col, "litellm_params must be a mapping");
		return;
	}
	target = sb_ymap_get(params, "model");
	if (!is_string(target) || strchr(target->value, '/') == NULL || target->value[0] == '/')
		sb_diags_add(diags, file, target ? target->line : params->line,
		    target ? target->col : params->col,
		    "litellm_params.model must be '<provider>/<model id>'");
	key = sb_ymap_get(params, "api_key");
	if (key != NULL) {
		/*
		 * Provider keys stay in the proxy's environment (docs/models.md, "A proxy of your
		 * own": agent images never contain provider keys); a key written here would be
		 * copied by ssebench init and could end up anywhere the file goes.
		 */
		if (!is_string(key) || strncmp(key->value, "os.environ/", 11) != 0 ||
		    key->value[11] == '\0')
			sb_diags_add(diags, file, key->line, key->col,
			    "api_key must be os.environ/NAME: provider keys are never written in a "
			    "models file");
		else
			key_env = sb_xstrdup(key->value + 11);
	}
	if (info != NULL && info->kind != SB_YNODE_MAP) {
		sb_diags_add(diags, file, info->line, info->col, "model_info must be a mapping");
	} else if (info != NULL) {
		static const char *const costs[] = { "input_cost_per_token", "output_cost_per_token" };

		for (size_t i = 0; i < SB_ARRAY_SIZE(costs); i++) {
			const struct sb_ynode *c = sb_ymap_get(info, costs[i]);
			double v;

			if (c == NULL)
				continue;
			if (c->kind != SB_YNODE_SCALAR ||
			    (c->type != SB_YSCALAR_INT && c->type != SB_YSCALAR_FLOAT) ||
			    sb_parse_double(c->value, 0, 1, &v, NULL) < 0)
				sb_diags_add(diags, file, c->line, c->col,
				    "%s must be a number of dollars per token, 0 to 1", costs[i]);
		}
	}
	if (diags->n > before)
		return;
	m->v = sb_xreallocarray(m->v, m->n + 1, sizeof(*m->v));
	m->v[m->n++] = (struct model){ .name = sb_xstrdup(name->value),
		.target = sb_xstrdup(target->value), .key_env = TAKE_PTR(key_env),
		.file = sb_xstrdup(file), .line = name->line };
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
models_load(const char *dir, struct models *ret, struct sb_diags *diags, struct sb_error **err)
{
	_cleanup_close_ int fd = sb_open_dir(dir, err);
	char **names = NULL;
	size_t n = 0;

	memset(ret, 0, sizeof(*ret));
	ret->dir = sb_xstrdup(dir);
	if (fd < 0 || sb_list_dir_at(fd, ".", MODELS_FILES_MAX, &names, &n, err) < 0)
		return sb_error_prefix(err, "the models directory");
	qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(SB_CONFIG_FILE_MAX);
		_cleanup_ynode_ struct sb_ynode *root = NULL;
		_cleanup_free_ char *file = sb_path_join(dir, names[i]);
		struct sb_error *e = NULL;
		struct sb_yloc loc = { 0, 0 };
		size_t len = strlen(names[i]);

		if (names[i][0] == '.' ||
		    !((len > 5 && strcmp(names[i] + len - 5, ".yaml") == 0) ||
			(len > 4 && strcmp(names[i] + len - 4, ".yml") == 0)))
			continue;
		if (sb_read_file_at(fd, names[i], SB_OPEN_NO_SYMLINKS, &b, &e) < 0 ||
		    sb_yaml_load(b.s, b.len, &root, &loc, &e) < 0) {
			sb_diags_add(diags, file, loc.line, loc.col, "%s", sb_error_message(e));
			sb_error_release(&e);
			continue;
		}
		if (root == NULL)
			continue; /* an empty file defines nothing */
		if (root->kind != SB_YNODE_SEQ) {
			sb_diags_add(diags, file, root->line, root->col,
			    "a models file is a list of model entries, not %s", sb_ynode_describe(root));
			continue;
		}
		for (size_t k = 0; k < root->n; k++)
			load_entry(ret, file, root->items[k], diags);
	}
	sb_strv_free(names);
	return 0;
}

const struct model *
models_find(const struct models *m, const char *name)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->v[i].name, name) == 0)
			return &m->v[i];
	return NULL;
}

char *
models_closest(const struct models *m, const char *name)
{
	struct sb_buf b = SB_BUF_INIT(4096);
	const struct model *best[3] = { NULL, NULL, NULL };
	size_t bd[3] = { SIZE_MAX, SIZE_MAX, SIZE_MAX }, k = 0;

	/* The three nearest by edit distance; a name containing ours counts as near too. */
	for (size_t i = 0; i < m->n; i++) {
		size_t d = sb_edit_distance(name, m->v[i].name);

		if (strstr(m->v[i].name, name) != NULL || strstr(name, m->v[i].name) != NULL)
			d = d < 2 ? d : 2;
		for (size_t j = 0; j < 3; j++) {
			if (d >= bd[j])
				continue;
			for (size_t s = 2; s > j; s--)
				best[s] = best[s - 1], bd[s] = bd[s - 1];
			best[j] = &m->v[i], bd[j] = d;
			break;
		}
	}
	for (size_t j = 0; j < 3; j++)
		if (best[j] != NULL && bd[j] <= strlen(name) / 2 + 2)
			k++;
	for (size_t j = 0; j < k; j++)
		(void)sb_buf_appendf(&b, NULL, "%s%s", j == 0 ? "" : j + 1 == k ? " or " : ", ",
		    best[j]->name);
	if (k == 0) {
		sb_buf_release(&b);
		return NULL;
	}
	return sb_buf_detach(&b, NULL);
}

void
models_release(struct models *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].name);
		free(m->v[i].target);
		free(m->v[i].key_env);
		free(m->v[i].file);
	}
	free(m->v);
	free(m->dir);
	memset(m, 0, sizeof(*m));
}

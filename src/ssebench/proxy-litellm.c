/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proxy-litellm.c: what `ssebench proxy` and `ssebench doctor` need that touches neither
 * Docker nor the network, so that the unit tests can link it alone (tests/unit/test-proxy.c):
 * the LiteLLM configuration made from models/<name>.yaml, the environment variables it names,
 * the env file handed to `docker create`, and what `docker container inspect` says about
 * the proxy's container. See proxy.h and docs/models.md ("A proxy of your own").
 */
#include "config.h"

#include <float.h>
#include <string.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/fs.h"
#include "sb/json.h"
#include "sb/limits.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/path.h"
#include "sb/yaml.h"

#include "proxy.h"

#define ENV_PREFIX     "os.environ/"
#define MODELS_FILES_MAX 1000

json_t *
proxy_ynode_json(const struct sb_ynode *n)
{
	json_t *j;

	if (n == NULL)
		return json_null();
	switch (n->kind) {
	case SB_YNODE_SCALAR:
		switch (n->type) {
		case SB_YSCALAR_NULL:
			return json_null();
		case SB_YSCALAR_BOOL:
			return json_boolean(n->value[0] == 't' || n->value[0] == 'T');
		case SB_YSCALAR_INT: {
			int64_t v;

			if (sb_parse_i64(n->value, INT64_MIN, INT64_MAX, &v, NULL) == 0)
				return json_integer((json_int_t)v);
			break; /* 0x.., 0o.., or too big for JSON: the text, as YAML wrote it */
		}
		case SB_YSCALAR_FLOAT: {
			double v;

			if (sb_parse_double(n->value, -DBL_MAX, DBL_MAX, &v, NULL) == 0)
				return json_real(v);
			break; /* .inf, .nan: no JSON number */
		}
		case SB_YSCALAR_STR:
			break;
		}
		return json_stringn(n->value, n->len);
	case SB_YNODE_SEQ:
		j = json_array();
		for (size_t i = 0; i < n->n; i++)
			json_array_append_new(j, proxy_ynode_json(n->items[i]));
		return j;
	case SB_YNODE_MAP:
		j = json_object();
		for (size_t i = 0; i < n->n; i++)
			json_object_set_new(j, n->keys[i]->value, proxy_ynode_json(n->items[i]));
		return j;
	}
	return json_null();
}

void
proxy_env_refs(const struct sb_ynode *n, struct sb_argv *names)
{
	const char *name;
	bool seen = false;

	if (n == NULL)
		return;
	if (n->kind != SB_YNODE_SCALAR) {
		for (size_t i = 0; i < n->n; i++)
			proxy_env_refs(n->items[i], names);
		return;
	}
	if (n->type != SB_YSCALAR_STR || strncmp(n->value, ENV_PREFIX, strlen(ENV_PREFIX)) != 0)
		return;
	name = n->value + strlen(ENV_PREFIX);
	if (!sb_env_name_valid(name))
		return;
	for (size_t i = 0; i < names->n && !seen; i++)
		seen = strcmp(names->v[i], name) == 0;
	if (!seen)
		sb_argv_push(names, name);
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
proxy_litellm_config(const char *dir, json_t **ret_config, struct sb_argv *ret_env,
    struct sb_error **err)
{
	_cleanup_close_ int fd = sb_open_dir(dir, err);
	_cleanup_argv_ struct sb_argv env = SB_ARGV_INIT;
	json_t *list, *config;
	char **names = NULL;
	size_t n = 0;

	if (fd < 0 || sb_list_dir_at(fd, ".", MODELS_FILES_MAX, &names, &n, err) < 0)
		return sb_error_prefix(err, "the models directory %s", dir);
	/* The same files in the same order as models_load, which has checked them. */
	qsort(names, n, sizeof(*names), cmp_names);
	list = json_array();
	for (size_t i = 0; i < n; i++) {
		_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(SB_CONFIG_FILE_MAX);
		_cleanup_ynode_ struct sb_ynode *root = NULL;
		size_t len = strlen(names[i]);

		if (names[i][0] == '.' ||
		    !((len > 5 && strcmp(names[i] + len - 5, ".yaml") == 0) ||
			(len > 4 && strcmp(names[i] + len - 4, ".yml") == 0)))
			continue;
		if (sb_read_file_at(fd, names[i], SB_OPEN_NO_SYMLINKS, &b, err) < 0 ||
		    sb_yaml_load(b.s, b.len, &root, NULL, err) < 0) {
			sb_error_prefix(err, "%s/%s", dir, names[i]);
			json_decref(list);
			sb_strv_free(names);
			return -1;
		}
		if (root == NULL)
			continue;
		if (root->kind != SB_YNODE_SEQ) {
			sb_error_set(err, EINVAL, "%s/%s: a models file is a list", dir, names[i]);
			json_decref(list);
			sb_strv_free(names);
			return -1;
		}
		for (size_t k = 0; k < root->n; k++)
			json_array_append_new(list, proxy_ynode_json(root->items[k]));
		proxy_env_refs(root, &env);
	}
	sb_strv_free(names);
	/*
	 * The master key by name only: LiteLLM reads "os.environ/NAME" from its environment,
	 * so the file copied into the container holds no secret.
	 */
	config = json_pack("{s:o, s:{s:s}}", "model_list", list, "general_settings", "master_key",
	    ENV_PREFIX "LITELLM_MASTER_KEY");
	*ret_config = config;
	if (ret_env != NULL)
		for (size_t i = 0; i < env.n; i++)
			sb_argv_push(ret_env, env.v[i]);
	return 0;
}

int
proxy_env_file_add(struct sb_buf *b, const char *name, const char *value, struct sb_error **err)
{
	if (!sb_env_name_valid(name))
		return sb_error_set(err, EINVAL, "'%s' is not a variable name", name);
	/* docker reads one NAME=value a line and takes the value as it is: no quoting. */
	if (strpbrk(value, "\r\n") != NULL)
		return sb_error_set(err, EINVAL, "the value of %s holds a line break", name);
	return sb_buf_appendf(b, err, "%s=%s\n", name, value);
}

void
proxy_container_release(struct proxy_container *c)
{
	free(c->name);
	free(c->state);
	free(c->image);
	free(c->config_digest);
	free(c->host_ip);
	memset(c, 0, sizeof(*c));
}

/* A string member of o, copied, or NULL. */
static char *
dup_string(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? sb_xstrdup(s) : NULL;
}

int
proxy_container_parse(const char *text, size_t len, struct proxy_container *ret,
    struct sb_error **err)
{
	json_auto_t *root = NULL;
	const json_t *c, *state, *cfg, *labels, *bind;
	struct proxy_container pc = { 0 };
	const char *port, *name;

	if (sb_json_load(text, len, 16 * 1024 * 1024, &root, err) < 0)
		return sb_error_prefix(err, "docker container inspect");
	c = json_is_array(root) ? json_array_get(root, 0) : root;
	state = json_object_get(c, "State");
	cfg = json_object_get(c, "Config");
	if (!json_is_object(c) || !json_is_object(state) || !json_is_object(cfg))
		return sb_error_set(err, EPROTO, "docker container inspect: not a container");
	labels = json_object_get(cfg, "Labels");
	name = json_string_value(json_object_get(c, "Name"));
	pc.name = sb_xstrdup(name == NULL ? "" : name[0] == '/' ? name + 1 : name);
	pc.running = json_is_true(json_object_get(state, "Running"));
	pc.restarting = json_is_true(json_object_get(state, "Restarting"));
	if (json_integer_value(json_object_get(c, "RestartCount")) > 0)
		pc.restarts = (unsigned)json_integer_value(json_object_get(c, "RestartCount"));
	pc.exit_code = (int)json_integer_value(json_object_get(state, "ExitCode"));
	pc.state = dup_string(state, "Status");
	pc.image = dup_string(cfg, "Image");
	pc.ours = json_is_string(json_object_get(labels, PROXY_LABEL)) &&
	    strcmp(json_string_value(json_object_get(labels, PROXY_LABEL)), "1") == 0;
	pc.config_digest = dup_string(labels, PROXY_LABEL_CONFIG);
	/* The binding asked for at creation: there whether or not the container runs. */
	bind = json_array_get(json_object_get(json_object_get(json_object_get(c, "HostConfig"),
					      "PortBindings"), PROXY_INNER_PORT_S "/tcp"), 0);
	pc.host_ip = dup_string(bind, "HostIp");
	port = json_string_value(json_object_get(bind, "HostPort"));
	if (port != NULL) {
		uint64_t v;

		if (sb_parse_u64(port, 1, 65535, &v, NULL) == 0)
			pc.port = (unsigned)v;
	}
	*ret = pc;
	return 0;
}

void
proxy_model_ids(const json_t *reply, struct sb_argv *ids)
{
	const json_t *m;
	size_t i;

	json_array_foreach (json_object_get(reply, "data"), i, m) {
		const char *id = json_string_value(json_object_get(m, "id"));

		if (id != NULL)
			sb_argv_push(ids, id);
	}
}

char *
proxy_redact(const char *text, const struct sb_argv *secrets)
{
	struct sb_buf b = SB_BUF_INIT(SIZE_MAX / 2);
	const char *p = text;

	while (*p != '\0') {
		size_t hit = 0;

		/* The longest secret that starts here: one may be a prefix of another. */
		for (size_t i = 0; i < secrets->n; i++) {
			size_t n = strlen(secrets->v[i]);

			if (n > hit && n >= PROXY_SECRET_MIN && strncmp(p, secrets->v[i], n) == 0)
				hit = n;
		}
		if (hit > 0) {
			(void)sb_buf_appends(&b, "[redacted]", NULL);
			p += hit;
		} else {
			(void)sb_buf_appendc(&b, *p++, NULL);
		}
	}
	return sb_buf_detach(&b, NULL);
}

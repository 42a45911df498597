/* SPDX-License-Identifier: Apache-2.0 */
/* proxy.c: the model proxy and a run's key for it (see proxy.h). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/http.h"
#include "sb/json.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/sha256.h"

#include "cli.h"
#include "docker.h"
#include "images.h"
#include "proxy.h"

#define PROXY_CALL_MS 20000

char *
proxy_url_trimmed(const char *u)
{
	char *s = sb_xstrdup(u);
	size_t n = strlen(s);

	while (n > 0 && s[n - 1] == '/')
		s[--n] = '\0';
	return s;
}

/* An http(s) URL of printable ASCII: the agent's goes into the NAME=value secrets file,
 * where a line break would add a line of its own. */
static bool
http_url(const char *u)
{
	for (const char *c = u; *c != '\0'; c++)
		if (*c <= ' ' || *c >= 0x7f)
			return false;
	return strncmp(u, "http://", 7) == 0 || strncmp(u, "https://", 8) == 0;
}

int
proxy_port(unsigned *ret, struct sb_error **err)
{
	const char *port = cli_setting("LITELLM_PORT", PROXY_PORT_DEFAULT);
	uint64_t n;

	if (sb_parse_u64(port, 1, 65535, &n, NULL) < 0)
		return sb_error_set(err, EINVAL, "LITELLM_PORT='%s' is not a port", port);
	*ret = (unsigned)n;
	return 0;
}

char *
proxy_admin_url(struct sb_error **err)
{
	const char *admin = cli_setting("SSEBENCH_PROXY_ADMIN_URL", NULL);
	unsigned port;

	if (admin != NULL) {
		if (!http_url(admin)) {
			sb_error_set(err, EINVAL, "SSEBENCH_PROXY_ADMIN_URL must be an http(s) URL");
			return NULL;
		}
		return proxy_url_trimmed(admin);
	}
	if (proxy_port(&port, err) < 0)
		return NULL;
	return sb_xasprintf("http://127.0.0.1:%u", port);
}

const char *
proxy_container_name(void)
{
	return cli_setting("SSEBENCH_PROXY_CONTAINER", PROXY_CONTAINER_DEFAULT);
}

int
proxy_container_inspect(const char *name, struct proxy_container *ret, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	struct sb_cmd_result r;
	int rc;

	sb_argv_pushl(&a, "container", "inspect", "--", name, NULL);
	if (docker_run(&a, DOCKER_CAPTURE, -1, NULL, 0, 60000, &r, err) < 0)
		return -1;
	if (r.exit_code != 0) {
		sb_buf_rtrim(&r.err);
		/* "Error: No such container: NAME" (the client's wording since 1.x). */
		rc = strstr(r.err.s, "No such") != NULL
		    ? sb_error_set(err, ENOENT, "no container '%s'", name)
		    : sb_error_set(err, EIO, "docker container inspect %s: %s", name,
			  r.err.len > 0 ? r.err.s : "failed");
		sb_cmd_result_release(&r);
		return rc;
	}
	rc = proxy_container_parse(r.out.s, r.out.len, ret, err);
	sb_cmd_result_release(&r);
	return rc;
}

int
proxy_configure(struct proxy *p, struct sb_error **err)
{
	const char *agent = cli_setting("SSEBENCH_PROXY_URL", PROXY_AGENT_URL_DEFAULT);
	const char *budget = cli_setting("SSEBENCH_RUN_BUDGET", NULL);
	char *admin;

	memset(p, 0, sizeof(*p));
	p->master_key = cli_setting("LITELLM_MASTER_KEY", NULL);
	p->fixed_key = cli_setting("SSEBENCH_PROXY_KEY", NULL);
	p->container = cli_setting("SSEBENCH_PROXY_CONTAINER", NULL);
	p->budget = PROXY_BUDGET_DEFAULT;
	if (budget != NULL && sb_parse_double(budget, 0.01, 100000, &p->budget, NULL) < 0)
		return sb_error_set(err, EINVAL,
		    "SSEBENCH_RUN_BUDGET='%s' is not a number of dollars (0.01 to 100000)", budget);
	if (p->master_key == NULL && p->fixed_key == NULL)
		return sb_error_set(err, ENOKEY,
		    "no key for the model proxy: set LITELLM_MASTER_KEY (a key is made for each "
		    "run) or SSEBENCH_PROXY_KEY, in the environment or in .env (ssebench init "
		    "writes one)");
	/* The key goes into the NAME=value secrets file: one line, nothing else. */
	if (p->fixed_key != NULL && strpbrk(p->fixed_key, "\r\n") != NULL)
		return sb_error_set(err, EINVAL, "SSEBENCH_PROXY_KEY holds a line break");
	if (!http_url(agent))
		return sb_error_set(err, EINVAL, "SSEBENCH_PROXY_URL must be an http(s) URL");
	admin = proxy_admin_url(err);
	if (admin == NULL)
		return -1;
	p->agent_url = proxy_url_trimmed(agent);
	p->admin_url = admin;
	/*
	 * No container named: the one `ssebench proxy up` makes, when there is one (ours by
	 * its label, so a stranger's container of that name is never attached to a run). A
	 * run's network is internal: a proxy that is not a container on it cannot be reached.
	 */
	if (p->container == NULL) {
		struct proxy_container pc;

		if (proxy_container_inspect(PROXY_CONTAINER_DEFAULT, &pc, NULL) == 0) {
			if (pc.ours)
				p->container = PROXY_CONTAINER_DEFAULT;
			proxy_container_release(&pc);
		}
	}
	return 0;
}

void
proxy_release(struct proxy *p)
{
	free(p->agent_url);
	free(p->admin_url);
	free(p->run_key);
	memset(p, 0, sizeof(*p));
}

/* One call to the proxy's API as `key`; *ret gets the JSON reply of a 2xx. */
static int
call(const struct proxy *p, const char *key, const char *method, const char *path,
    const json_t *body, json_t **ret, struct sb_error **err)
{
	struct sb_http_target t = { .base_url = p->admin_url, .token = key,
		.timeout_ms = PROXY_CALL_MS, .max_reply = 16 * 1024 * 1024, .https = true };
	json_t *j = NULL;
	long status = 0;

	if (sb_http_json(&t, method, path, body, &status, &j, err) < 0)
		return sb_error_prefix(err, "the model proxy at %s", p->admin_url);
	if (status < 200 || status > 299) {
		json_decref(j);
		/* Never the reply's text: a proxy may echo what we sent, keys included. */
		return sb_error_set(err, status == 401 || status == 403 ? EACCES : EIO,
		    "the model proxy at %s: %s %s: HTTP %ld", p->admin_url, method, path, status);
	}
	if (ret != NULL)
		*ret = j;
	else
		json_decref(j);
	return 0;
}

int
proxy_get(const char *admin_url, const char *key, const char *path, json_t **ret,
    struct sb_error **err)
{
	struct proxy p = { .admin_url = (char *)admin_url };

	return call(&p, key, "GET", path, NULL, ret, err);
}

int
proxy_check(const struct proxy *p, struct sb_error **err)
{
	struct sb_error *e = NULL;
	int r;

	if (p->master_key == NULL)
		return 0;
	if (call(p, NULL, "GET", "/health/liveliness", NULL, NULL, &e) == 0)
		return 0;
	r = sb_error_set(err, sb_error_code(e),
	    "%s (is the proxy up? SSEBENCH_PROXY_ADMIN_URL says where this CLI finds it)",
	    sb_error_message(e));
	sb_error_release(&e);
	return r;
}

int
proxy_attach(const struct proxy *p, const char *network, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ char *members = NULL;

	if (p->container == NULL)
		return 0;
	sb_argv_pushl(&a, "network", "inspect", "--format",
	    "{{range .Containers}}{{.Name}} {{end}}", network, NULL);
	if (docker_output(&a, &members, err) != 0)
		return sb_error_set(err, EIO, "cannot inspect the network %s", network);
	{
		char *save = NULL;

		for (char *t = strtok_r(members, " \n", &save); t != NULL;
		     t = strtok_r(NULL, " \n", &save))
			if (strcmp(t, p->container) == 0)
				return 0;
	}
	sb_argv_release(&a);
	sb_argv_pushl(&a, "network", "connect", "--alias", "litellm", network, p->container, NULL);
	if (docker_output(&a, NULL, err) != 0)
		return sb_error_set(err, EIO,
		    "cannot attach the proxy container '%s' to %s (SSEBENCH_PROXY_CONTAINER)",
		    p->container, network);
	progress("attached the model proxy %s to %s as litellm", p->container, network);
	return 0;
}

/* Does the key see the model? GET /v1/models as the key. */
static int
key_sees_model(const struct proxy *p, const char *model, struct sb_error **err)
{
	json_t *j = NULL, *m;
	size_t i;
	bool found = false;

	if (call(p, p->run_key, "GET", "/v1/models", NULL, &j, err) < 0)
		return -1;
	json_array_foreach (json_object_get(j, "data"), i, m) {
		const char *id = json_string_value(json_object_get(m, "id"));

		found = found || (id != NULL && strcmp(id, model) == 0);
	}
	json_decref(j);
	if (!found)
		return sb_error_set(err, ENOENT,
		    "the model proxy at %s does not serve the model '%s' (is it in the proxy's "
		    "configuration?)",
		    p->admin_url, model);
	return 0;
}

int
proxy_key_new(struct proxy *p, const char *model, const char *run_id, uint64_t timeout_s,
    struct sb_error **err)
{
	_cleanup_free_ char *alias = sb_xasprintf("ssebench-%s", run_id);
	_cleanup_free_ char *duration =
	    sb_xasprintf("%llus", (unsigned long long)(timeout_s + PROXY_KEY_GRACE_S));
	json_t *body, *reply = NULL;
	const char *key;
	int r;

	if (p->master_key == NULL) {
		p->run_key = sb_xstrdup(p->fixed_key);
		p->minted = false;
		return 0;
	}
	body = json_pack("{s:[s], s:f, s:s, s:s, s:{s:s, s:s}}", "models", model, "max_budget",
	    p->budget, "duration", duration, "key_alias", alias, "metadata", "ssebench_run_id",
	    run_id, "created_by", "ssebench");
	r = call(p, p->master_key, "POST", "/key/generate", body, &reply, err);
	json_decref(body);
	if (r < 0)
		return sb_error_prefix(err, "making the run's key%s",
		    err != NULL && sb_error_code(*err) == EACCES
			? " (is LITELLM_MASTER_KEY the proxy's master key?)"
			: "");
	key = json_string_value(json_object_get(reply, "key"));
	if (key == NULL || *key == '\0' || strpbrk(key, "\r\n") != NULL) {
		json_decref(reply);
		return sb_error_set(err, EPROTO, "the model proxy made no usable key");
	}
	p->run_key = sb_xstrdup(key);
	p->minted = true;
	json_decref(reply);
	if (key_sees_model(p, model, err) < 0) {
		(void)proxy_key_delete(p, NULL);
		return -1;
	}
	return 0;
}

int
proxy_key_spend(const struct proxy *p, double *ret, struct sb_error **err)
{
	json_t *j = NULL, *spend;

	if (!p->minted || p->run_key == NULL)
		return sb_error_set(err, ENOENT, "no run key of ours");
	/* Asked as the run key itself: the key never goes into a URL (the proxy's access log). */
	if (call(p, p->run_key, "GET", "/key/info", NULL, &j, err) < 0)
		return -1;
	spend = json_object_get(json_object_get(j, "info"), "spend");
	if (!json_is_number(spend) || !isfinite(json_number_value(spend)) ||
	    json_number_value(spend) < 0) {
		json_decref(j);
		return sb_error_set(err, EPROTO, "the model proxy did not say what the key spent");
	}
	*ret = json_number_value(spend);
	json_decref(j);
	return 0;
}

/* A count of tokens we take: a whole number from 0 to 10^13 (bigger is not a real run). */
#define TOKENS_MAX 10000000000000LL

int
proxy_key_tokens(const struct proxy *p, int64_t *ret_in, int64_t *ret_out, struct sb_error **err)
{
	_cleanup_free_ char *path = NULL;
	json_t *j = NULL, *row;
	int64_t in = 0, out = 0;
	size_t i, rows = 0;
	char hash[65];

	if (!p->minted || p->run_key == NULL)
		return sb_error_set(err, ENOENT, "no run key of ours");
	/*
	 * By the key's SHA-256, which is how LiteLLM stores and looks up a key that does not
	 * start with "sk-": the key itself never goes into a URL (the proxy's access log).
	 * The spend logs are an admin's view: asked with the master key.
	 */
	sb_sha256_hex(p->run_key, strlen(p->run_key), hash);
	path = sb_xasprintf("/spend/logs?api_key=%s", hash);
	if (call(p, p->master_key, "GET", path, NULL, &j, err) < 0)
		return -1;
	if (!json_is_array(j)) {
		json_decref(j);
		return sb_error_set(err, EPROTO, "the model proxy's spend logs are not a list");
	}
	json_array_foreach (j, i, row) {
		json_t *pi = json_object_get(row, "prompt_tokens");
		json_t *po = json_object_get(row, "completion_tokens");

		if (json_is_null(row))
			continue; /* LiteLLM answers [null] for a key it has no log of */
		if (!json_is_integer(pi) || !json_is_integer(po) || json_integer_value(pi) < 0 ||
		    json_integer_value(po) < 0 || json_integer_value(pi) > TOKENS_MAX - in ||
		    json_integer_value(po) > TOKENS_MAX - out) {
			json_decref(j);
			return sb_error_set(err, EPROTO,
			    "the model proxy's spend logs hold a token count that is not one");
		}
		in += json_integer_value(pi);
		out += json_integer_value(po);
		rows++;
	}
	json_decref(j);
	if (rows == 0)
		return sb_error_set(err, ENOENT, "the model proxy has no spend log of the run key");
	*ret_in = in;
	*ret_out = out;
	return 0;
}

int
proxy_key_delete(struct proxy *p, struct sb_error **err)
{
	json_t *body;
	int r;

	if (!p->minted || p->run_key == NULL)
		return 0;
	body = json_pack("{s:[s]}", "keys", p->run_key);
	r = call(p, p->master_key, "POST", "/key/delete", body, NULL, err);
	json_decref(body);
	if (r == 0)
		p->minted = false;
	return r;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proxy.h: the model proxy a run's agent talks to (a LiteLLM proxy: docs/models.md;
 * docs/upstream.md, "Models and the proxy"), and the run's own key for it.
 *
 * Settings (environment first, then .env): SSEBENCH_PROXY_URL is the proxy as run containers
 * see it (default http://litellm:4000, the agent's SSE_BASE_URL); SSEBENCH_PROXY_ADMIN_URL is
 * the proxy as this CLI sees it (default http://127.0.0.1:$LITELLM_PORT, port 4000);
 * LITELLM_MASTER_KEY lets the CLI make a key for each run; SSEBENCH_PROXY_KEY is a fixed key
 * to hand out instead, when the proxy is not ours to manage; SSEBENCH_PROXY_CONTAINER names a
 * proxy container to attach to each run's network as "litellm"; SSEBENCH_RUN_BUDGET caps a
 * run key's spend in USD (10).
 *
 * A run key may use the run's model only, up to the budget, and expires on its own an hour
 * after the run's time limit; the CLI deletes it when the run ends (upstream kept every key
 * alive with its budget: docs/upstream.md, "Known weaknesses and our answers", 4). The agent gets
 * it through the run's root-only secrets file, never on a command line or in `docker inspect`.
 */
#ifndef SSEBENCH_PROXY_H
#define SSEBENCH_PROXY_H

#include <stdint.h>

#include "sb/error.h"

#define PROXY_AGENT_URL_DEFAULT "http://litellm:4000"
/*
 * The proxy container `ssebench proxy up` makes: named by SSEBENCH_PROXY_CONTAINER, else
 * this; labelled PROXY_LABEL=1 (what `proxy down` removes, and nothing else), and with the
 * SHA-256 of the configuration it was given as PROXY_LABEL_CONFIG. Inside, the proxy
 * listens on PROXY_INNER_PORT, published on 127.0.0.1:$LITELLM_PORT only.
 */
#define PROXY_CONTAINER_DEFAULT "ssebench-proxy"
#define PROXY_LABEL		"ssebench.proxy"
#define PROXY_LABEL_CONFIG	"ssebench.proxy.config"
#define PROXY_INNER_PORT_S	"4000"
#define PROXY_PORT_DEFAULT	"4000"
#define PROXY_KEY_GRACE_S	3600 /* a run key outlives the run's time limit by this */
#define PROXY_BUDGET_DEFAULT	10.0 /* USD */

struct json_t;
struct sb_argv;
struct sb_buf;
struct sb_ynode;

struct proxy {
	char *agent_url, *admin_url;
	const char *master_key; /* NULL: the fixed key is handed out */
	const char *fixed_key;
	const char *container;	/* SSEBENCH_PROXY_CONTAINER, or NULL */
	double budget;
	char *run_key; /* after proxy_key_new */
	bool minted;   /* run_key is ours to delete */
};

/*
 * Read the settings. Fails (with what to set) when there is neither a master nor a fixed key.
 * With no SSEBENCH_PROXY_CONTAINER, the container `ssebench proxy up` makes
 * (PROXY_CONTAINER_DEFAULT, labelled PROXY_LABEL) is the one runs attach, when it exists.
 */
int proxy_configure(struct proxy *p, struct sb_error **err);

/* u without its trailing slashes (malloc'd): agents append "/v1/...". */
char *proxy_url_trimmed(const char *u);

/* SSEBENCH_PROXY_ADMIN_URL (trailing slashes dropped), else http://127.0.0.1:$LITELLM_PORT. */
char *proxy_admin_url(struct sb_error **err);

/* LITELLM_PORT (default 4000), checked to be a port. */
int proxy_port(unsigned *ret, struct sb_error **err);

/* The name `ssebench proxy` manages: SSEBENCH_PROXY_CONTAINER, else PROXY_CONTAINER_DEFAULT. */
const char *proxy_container_name(void);

/* GET path at the proxy's admin URL as key (NULL: none); *ret (if not NULL) gets the JSON
 * reply of a 2xx. A 401 or 403 fails with EACCES; the reply's text is never in a message. */
int proxy_get(const char *admin_url, const char *key, const char *path, struct json_t **ret,
    struct sb_error **err);

/* What `docker container inspect` says about a proxy container. */
struct proxy_container {
	char *name;
	bool running;
	bool restarting;     /* it stopped, and the engine is starting it again */
	unsigned restarts;   /* RestartCount: how often it stopped and was started again */
	int exit_code;	     /* of its last stop */
	char *state;	     /* created, running, restarting, exited, ... */
	char *image;
	bool ours;	     /* labelled PROXY_LABEL=1 */
	char *config_digest; /* PROXY_LABEL_CONFIG, or NULL */
	char *host_ip;	     /* where PROXY_INNER_PORT is published, or NULL */
	unsigned port;	     /* 0: not published */
};

/* Inspect the container name: ENOENT when there is none, EIO when the engine fails. */
int proxy_container_inspect(const char *name, struct proxy_container *ret,
    struct sb_error **err);

/* --- proxy-litellm.c: no Docker, no network (unit-tested) --- */

/* Parse `docker container inspect` output (an array of one, or the object). */
int proxy_container_parse(const char *text, size_t len, struct proxy_container *ret,
    struct sb_error **err);
void proxy_container_release(struct proxy_container *c);

/* A YAML node as JSON, scalars typed as the loader resolved them (new reference). */
struct json_t *proxy_ynode_json(const struct sb_ynode *n);

/* The NAME of every "os.environ/NAME" string below n, each once, appended to names. */
void proxy_env_refs(const struct sb_ynode *n, struct sb_argv *names);

/*
 * LiteLLM's configuration for the models of dir (*.yaml and *.yml, sorted, as models_load
 * reads them; check them with models_load first): {"model_list": [every entry],
 * "general_settings": {"master_key": "os.environ/LITELLM_MASTER_KEY"}}, as JSON, which
 * LiteLLM's YAML reader takes. It holds no secret. ret_env (if not NULL) gets the variables
 * the entries name (os.environ/NAME), which the proxy needs in its environment.
 */
int proxy_litellm_config(const char *dir, struct json_t **ret_config, struct sb_argv *ret_env,
    struct sb_error **err);

/* Append "NAME=value\n" to an env file for `docker create --env-file`; a value with a line
 * break (docker would cut it) or a bad name fails. */
int proxy_env_file_add(struct sb_buf *b, const char *name, const char *value,
    struct sb_error **err);

/*
 * text with every occurrence of each of secrets (values of at least PROXY_SECRET_MIN bytes:
 * a shorter one would blank out ordinary words) replaced by "[redacted]" (malloc'd): for
 * the proxy's log lines, which may quote a key it was given.
 */
#define PROXY_SECRET_MIN 6
char *proxy_redact(const char *text, const struct sb_argv *secrets);

/* The "id" of each entry of a /v1/models reply's "data", appended to ids. */
void proxy_model_ids(const struct json_t *reply, struct sb_argv *ids);

/* With a master key: the proxy answers its health check (fail before anything is built). */
int proxy_check(const struct proxy *p, struct sb_error **err);

/* Attach SSEBENCH_PROXY_CONTAINER (if set) to the network as "litellm"; idempotent. */
int proxy_attach(const struct proxy *p, const char *network, struct sb_error **err);

/*
 * The run's key: a new key for model alone (master key), or the fixed key. A new key is then
 * shown to see the model (GET /v1/models as that key), or it is deleted and this fails.
 */
int proxy_key_new(struct proxy *p, const char *model, const char *run_id, uint64_t timeout_s,
    struct sb_error **err);

/* What the run key has spent, in USD (a new key only). */
int proxy_key_spend(const struct proxy *p, double *ret, struct sb_error **err);

/*
 * The tokens the run key was billed for (a new key only), from the proxy's spend logs
 * (LiteLLM's GET /spend/logs): prompt and completion tokens summed over its requests. ENOENT
 * when the proxy has no log of it (none kept, or none written yet: LiteLLM writes them in
 * batches), so the caller falls back to the agent's own count.
 */
int proxy_key_tokens(const struct proxy *p, int64_t *ret_in, int64_t *ret_out,
    struct sb_error **err);

/* Delete a new key (nothing to do for the fixed key). Safe to call twice. */
int proxy_key_delete(struct proxy *p, struct sb_error **err);

void proxy_release(struct proxy *p);

#endif

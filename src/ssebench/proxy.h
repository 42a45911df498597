/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proxy.h: the model proxy a run's agent talks to (a LiteLLM proxy, upstream-reference
 * §1.4-1.5, §9.5), and the run's own key for it.
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
 * alive with its budget: known weakness 4). The agent gets it through the run's root-only
 * secrets file, never on a command line or in `docker inspect`.
 */
#ifndef SSEBENCH_PROXY_H
#define SSEBENCH_PROXY_H

#include <stdint.h>

#include "sb/error.h"

#define PROXY_AGENT_URL_DEFAULT "http://litellm:4000"
#define PROXY_KEY_GRACE_S	3600 /* a run key outlives the run's time limit by this */
#define PROXY_BUDGET_DEFAULT	10.0 /* USD */

struct proxy {
	char *agent_url, *admin_url;
	const char *master_key; /* NULL: the fixed key is handed out */
	const char *fixed_key;
	const char *container;	/* SSEBENCH_PROXY_CONTAINER, or NULL */
	double budget;
	char *run_key; /* after proxy_key_new */
	bool minted;   /* run_key is ours to delete */
};

/* Read the settings. Fails (with what to set) when there is neither a master nor a fixed key. */
int proxy_configure(struct proxy *p, struct sb_error **err);

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

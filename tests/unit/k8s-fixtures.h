/* SPDX-License-Identifier: Apache-2.0 */
/*
 * k8s-fixtures.h: the runs whose manifests tests/unit/test-k8s.c holds to golden files and
 * tests/helpers/sb-k8s-manifests writes for tests/integration/t0185-k8s-manifests.sh: a
 * dummy run (restricted egress, with a model), a reference run and an open-egress run,
 * with the values of tests/integration/golden/run/ (the same runs on Docker).
 */
#ifndef SB_TESTS_K8S_FIXTURES_H
#define SB_TESTS_K8S_FIXTURES_H


#include "sb/argv.h"

#include "../../src/ssebench/k8s.h"

static const char *const k8s_fixture_names[] = { "dummy", "reference", "open", NULL };

/* What add_run_env gives a sandbox run (cmd-run.c), with its difficulty, timeout, egress. */
static inline void
k8s_fixture_env(struct sb_argv *env, unsigned difficulty, unsigned timeout, bool open,
    bool reference, bool proxy_key)
{
	sb_argv_pushf(env, "SSE_DIFFICULTY=%u", difficulty);
	sb_argv_pushf(env, "TIMEOUT=%u", timeout);
	sb_argv_push(env, "SSE_KEEP_ALIVE=0");
	sb_argv_pushf(env, "SSE_EGRESS=%s", open ? "open" : "restricted");
	if (reference)
		sb_argv_push(env, "SSE_REFERENCE_RUN=1");
	if (proxy_key)
		sb_argv_push(env, "SSE_PROXY_KEY=1");
	sb_argv_push(env, "SSE_RUNNER_UID=1234567");
	sb_argv_push(env, "SSE_SHARED_WALK_ROOT=/");
	sb_argv_push(env, "SSE_COUNTERS_MASKED=1");
	sb_argv_push(env, "SSE_RUNNER_ROOT=/var/lib/ssebench-root/image");
}

/* The settings of every fixture: the proxy's pods by one label, on LiteLLM's port. */
static inline void
k8s_fixture_settings(struct k8s_settings *st)
{
	st->namespace = "ssebench";
	sb_argv_push(&st->proxy_pods, "app.kubernetes.io/name=ssebench-proxy");
	st->proxy_port = 4000;
	st->seccomp_localhost = NULL;
}

/* The fixture called name into run (K8S_RUN_INIT); false if there is none. */
static inline bool
k8s_fixture_run(const char *name, struct k8s_run *run)
{
	run->task = "cjson-CVE-2023-53154";
	run->source = "/src/cjson";
	run->memory = "8589934592";
	run->cpus = "2";
	run->pids = "4096";
	run->agent_disk = 20ULL << 30;
	run->harness_disk = 10ULL << 30;
	run->model = "none";
	if (strcmp(name, "dummy") == 0) {
		run->run_id = "20261203-120000-a1b2c3";
		run->agent = "dummy";
		run->model = "gpt-4o-mini";
		run->uses_model = true;
		run->image = "localhost/ssebench/agent-dummy/cjson-cve-2023-53154:0.1.0";
		run->timeout = 3600;
		run->secrets = "SSE_DAEMON_TOKEN=00112233445566778899aabbccddeeff\n"
			       "SSE_API_KEY=sk-run-key\nSSE_BASE_URL=http://proxy:4000\n"
			       "SSE_MODEL_NAME=gpt-4o-mini\n";
		k8s_fixture_env(&run->env, 2, 3600, false, false, true);
		sb_argv_push(&run->env, "SSE_NET_CANARY=198.18.0.2");
		return true;
	}
	if (strcmp(name, "reference") == 0) {
		run->run_id = "20261203-120100-d4e5f6";
		run->agent = "reference";
		run->image = "localhost/ssebench/agent-reference/cjson-cve-2023-53154:0.1.0";
		run->timeout = 100;
		run->egress_open = true;
		run->secrets = "SSE_DAEMON_TOKEN=ffeeddccbbaa99887766554433221100\n";
		run->reference_patch = "--- a/cJSON.c\n+++ b/cJSON.c\n@@ -1 +1 @@\n-x\n+y\n";
		run->reference_patch_len = strlen(run->reference_patch);
		k8s_fixture_env(&run->env, 3, 100, true, true, false);
		return true;
	}
	if (strcmp(name, "open") == 0) {
		run->run_id = "20261203-120200-0a0b0c";
		run->job_id = "20261203-115959-ffffff";
		run->agent = "codex";
		run->model = "gpt-5";
		run->uses_model = true;
		run->image = "localhost/ssebench/agent-codex/cjson-cve-2023-53154:0.1.0";
		run->timeout = 1800;
		run->egress_open = true;
		run->runtime_class = "gvisor";
		run->cpus = "1.5";
		run->secrets = "SSE_DAEMON_TOKEN=0123456789abcdef0123456789abcdef\n"
			       "SSE_API_KEY=sk-other\nSSE_BASE_URL=http://proxy:4000\n"
			       "SSE_MODEL_NAME=gpt-5\n";
		k8s_fixture_env(&run->env, 1, 1800, true, false, true);
		return true;
	}
	return false;
}

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * k8s.h: the Kubernetes objects of one run (docs/kubernetes.md, "Manifests"): a
 * NetworkPolicy, a Secret and a Job, built as jansson objects from a typed description of
 * the run, for `kubectl create -f` (JSON is YAML). Nothing here talks to a cluster.
 */
#ifndef SSEBENCH_K8S_H
#define SSEBENCH_K8S_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "sb/argv.h"
#include "sb/error.h"

/* Added to the pod's deadline beyond the agent's and the evaluator's budgets (k8s.c). */
#define K8S_DEADLINE_SLACK_S 600
/* The pod's grace between SIGTERM and SIGKILL when it is deleted (k8s.c:pod_spec). */
#define K8S_GRACE_S 5
/*
 * How long a finished Job (and its pod, for `runs logs`) stays before Kubernetes removes it.
 * A 1.20 API server drops the field unless its TTLAfterFinished feature gate is on (alpha
 * there, on by default from 1.21): the backend must not count on it to clean up.
 */
#define K8S_TTL_AFTER_FINISHED_S 3600

/* The cluster's side of a run: where it goes and how it reaches the model proxy. */
struct k8s_settings {
	const char *namespace;	  /* metadata.namespace of every object */
	struct sb_argv proxy_pods; /* "KEY=VALUE" labels that select the proxy's pods */
	unsigned proxy_port;	  /* the proxy's TCP port on those pods */
	/* A restricted run, which resolves no name: the proxy URL's host and its Service's
	 * address, for the pod's /etc/hosts (k8s_proxy_service); NULL for an address. */
	const char *proxy_alias_host, *proxy_alias_ip;
	/* A seccomp profile on the node, relative to the kubelet's seccomp directory (type
	 * Localhost), or NULL for the runtime's default (k8s.c, job_pod_security). */
	const char *seccomp_localhost;
	/*
	 * The CPUs the run container and its init containers request (a decimal number, at
	 * most the run's CPUs), or NULL for the run's CPUs: limits == requests, a Guaranteed
	 * pod. Lower lets a node with as many cores as a run's limit schedule it at all.
	 */
	const char *cpu_request;
};

#define K8S_SETTINGS_INIT { .proxy_pods = SB_ARGV_INIT }
/* The labels of the proxy's pods unless SSEBENCH_K8S_PROXY_SELECTOR says otherwise. */
#define K8S_PROXY_SELECTOR_DEFAULT "app.kubernetes.io/name=litellm"

/*
 * One run, as cmd-run.c's describe_run_container knows it, in sandbox mode (one
 * container). Every string is copied into the objects as a JSON string and nowhere else;
 * none is trusted to be a valid Kubernetes name or label value.
 */
struct k8s_run {
	const char *run_id, *task, *agent, *model;
	const char *job_id;	/* NULL outside a job */
	const char *image;
	const char *source;	/* the task's source path in the container (its tree) */
	const char *runtime_class; /* runtimeClassName, or NULL for the cluster's default */
	bool egress_open;	/* --egress open: the internet, minus the private ranges */
	bool uses_model;	/* the run talks to the model proxy */
	/* A restricted run probes its own node too (SSE_NET_NODE from the pod's
	 * status.hostIP, k8s.c:run_env), besides the SSE_NET_GATEWAY env names. */
	bool probe_node;
	uint64_t timeout;	/* seconds: the agent phase, and the evaluator's own budget */
	const char *memory;	/* bytes, a decimal integer (the run limit) */
	const char *cpus;	/* a decimal number, e.g. "2" or "1.5" */
	const char *pids;	/* the pids limit: recorded only (docs/kubernetes.md) */
	uint64_t agent_disk, harness_disk; /* bytes of the run's two file systems (disk.h) */
	struct sb_argv env;	/* "NAME=value" each, as add_run_env gives them */
	const char *secrets;	/* the secrets file's text (write_secrets) */
	const char *reference_patch; /* the fix, for a reference run only, else NULL */
	size_t reference_patch_len;
};

#define K8S_RUN_INIT { .env = SB_ARGV_INIT }

/* The label every object of a run carries, its value the run id (or its hash: k8s_label). */
#define K8S_LABEL_RUN "ssebench.run"
/* The Secret of a run is called its name (k8s_run_name) and this. */
#define K8S_SECRET_SUFFIX "-secrets"
/* Where the collect container sees the results and the archive (read-only). */
#define K8S_COLLECT_ROOT "/collect"
/*
 * A run with a model: the entrypoint's mark of the agent phase's end in the results, and
 * where the collect container writes the CLI's answer to it (K8S_KEY_ANSWER_FILE: the
 * proxy key's fate, "revoked" or why not), which the sandbox container reads (k8s.c,
 * collect_container). The names are the entrypoint's (entrypoint/entrypoint.h).
 */
#define K8S_PHASE_ENDED	    "agent-phase-ended"
#define K8S_KEY_ANSWER_DIR  K8S_COLLECT_ROOT "/answer"
#define K8S_KEY_ANSWER_FILE "proxy-key-revoked"

/* The label value of value: itself when it is a valid one, else "h-" and 16 hex digits of
 * its SHA-256 (the raw value is in the annotation of the same key). */
char *k8s_label(const char *value);

/* Is name one of the run pod's volumes that the agent writes (its home and tree, /tmp,
 * /var/tmp, the archive), sized as the agent's file system? */
bool k8s_volume_is_agents(const char *name);

/* Does the kubelet's eviction message of a run's pod (status.message) name the agent's disk
 * use: one of its volumes over the limit, or the pod's storage in all (k8s.c says why)? */
bool k8s_eviction_is_agents(const char *msg);

/* The name every object of the run is called by: "sse-" and 16 hex digits of its id. */
char *k8s_run_name(const char *run_id);

/*
 * Whether s is a Kubernetes label value (at most 63 characters, alphanumerics at both ends
 * and '-', '_', '.' between), and a DNS label (at most 63, [a-z0-9-], alphanumerics at
 * both ends: names of Jobs, Secrets, containers and volumes).
 */
bool k8s_label_value_valid(const char *s);
bool k8s_dns_label_valid(const char *s);

/*
 * The model proxy as a run's pod reaches it (docs/kubernetes.md, "Models"): url (the
 * agent's SSE_BASE_URL: http(s), one line of printable ASCII), the labels that select the
 * proxy's pods ("KEY=VALUE,..."), and their port (port, or NULL for the URL's own), into
 * st->proxy_pods and st->proxy_port. EINVAL, naming the setting, on a bad one.
 */
int k8s_proxy_settings(const char *url, const char *selector, const char *port,
    struct k8s_settings *st, struct sb_error **err);
bool k8s_proxy_url_valid(const char *url);
/* An IPv4 or IPv6 address, as text. */
bool k8s_ip_literal(const char *s);

/*
 * A restricted run has no DNS (k8s.c, egress_rules): when the proxy URL's host is a name,
 * it must be a Service in the runs' namespace (NAME, NAME.NS, NAME.NS.svc[.DOMAIN]), whose
 * address the CLI puts in the pod's /etc/hosts. *ret_host gets the host and *ret_service
 * the Service's name, both NULL for an address. EINVAL for any other host.
 */
int k8s_proxy_service(const char *url, const char *namespace, char **ret_host,
    char **ret_service, struct sb_error **err);

/*
 * The three objects of the run, as a "List" (apiVersion v1, items: NetworkPolicy, Secret,
 * Job), into *ret (new reference). Fails with EINVAL, naming the field, on a description
 * that cannot make valid objects (a limit that is not a number, an env entry without a
 * name, a proxy selector that is not a label, ...); nothing is returned then.
 */
int k8s_run_manifests(const struct k8s_run *run, const struct k8s_settings *set, json_t **ret,
    struct sb_error **err);

#endif

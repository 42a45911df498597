/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kubectl.h: the Kubernetes backend's side of a cluster (docs/kubernetes.md, "The
 * backend"): kubectl driven with argv vectors, as docker.c drives docker. Nothing here
 * builds objects (k8s.c does) or decides a run's outcome (cmd-run.c does).
 */
#ifndef SSEBENCH_KUBECTL_H
#define SSEBENCH_KUBECTL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "sb/argv.h"
#include "sb/error.h"

/* Where the backend's objects go, from the settings (kube_settings). */
struct kube {
	const char *kubectl;   /* SSEBENCH_KUBECTL: an absolute path (default /usr/bin/kubectl) */
	const char *context;   /* SSEBENCH_K8S_CONTEXT, or NULL for the kubeconfig's current */
	const char *namespace; /* SSEBENCH_K8S_NAMESPACE (default "ssebench") */
};

/* The settings as the environment gives them; fails (EINVAL) on one that is not usable. */
int kube_settings(struct kube *k, struct sb_error **err);

/*
 * kubectl [--context C] --namespace NS ARGS..., its stdin from in (NULL: /dev/null), its
 * stdout into *ret_out (NULL: dropped; at most 16 MiB kept). Exit status of kubectl, or -1
 * when it could not run; its stderr, escaped, is in *err's message when it fails.
 */
int kube_run(const struct kube *k, const struct sb_argv *args, const char *in, size_t in_len,
    uint64_t timeout_ms, char **ret_out, struct sb_error **err);

/* The same with the terminal's stdout and stderr (and stdin, with in_tty): for `runs logs`
 * and `runs exec`. *ret_code is kubectl's exit status. */
int kube_run_inherit(const struct kube *k, const struct sb_argv *args, bool with_stdin,
    int *ret_code, struct sb_error **err);

/* kubectl create -f - of objects (a List). */
int kube_create(const struct kube *k, const json_t *objects, struct sb_error **err);

/* What a run's pod is doing, from `get pods -l job-name=NAME`. */
enum kube_ctr { KUBE_CTR_NONE, KUBE_CTR_WAITING, KUBE_CTR_RUNNING, KUBE_CTR_DONE };

struct kube_pod {
	char *name;	  /* NULL: no pod (yet, or any more) */
	char *phase;	  /* Pending, Running, Succeeded, Failed, Unknown */
	enum kube_ctr sandbox, collect;
	bool collect_ready; /* its readiness probe passed: the agent phase ended (k8s.c) */
	int exit_code;	  /* the sandbox container's, once KUBE_CTR_DONE */
	char *reason;	  /* why a container waits or ended (ErrImageNeverPull, ...), or NULL */
	bool init_failed; /* an init container ended with a failure */
	char *message;	  /* the pod's own status message (an eviction's reason), or NULL */
};

void kube_pod_release(struct kube_pod *p);

/* The pod of the Job name. A pod that is not there is not an error (p->name NULL). */
int kube_pod_get(const struct kube *k, const char *job, struct kube_pod *p,
    struct sb_error **err);

/* Is reason one a pod does not come back from by waiting (an image that is not there, a
 * config the kubelet refuses)? */
bool kube_reason_fatal(const char *reason);

/*
 * The collect container's tar of one of its trees, "results" or "archive", into the file
 * path (made 0600, O_EXCL), at most max_bytes (kubectl is stopped past it: RLIMIT_FSIZE).
 * One tree per call: what the agent left in the archive (a tree tar runs out of memory
 * on, or past the bound) must not cost the run its results.
 */
int kube_collect(const struct kube *k, const char *pod, const char *tree, const char *path,
    uint64_t max_bytes, struct sb_error **err);

/* The address (spec.clusterIP) of the Service name in the namespace, which must select
 * pods by every label of labels ("KEY=VALUE"): EINVAL for a Service without an address
 * (headless) or another selector, ENOENT when there is none. *ret is malloc'd. */
int kube_service_ip(const struct kube *k, const char *name, const struct sb_argv *labels,
    char **ret, struct sb_error **err);

/*
 * Write text (one line, "revoked" or why not) as the answer of a run with a model to the
 * end of its agent phase, through the collect container into the volume the sandbox
 * container reads it from (k8s.h, K8S_KEY_ANSWER_DIR), replacing the file in one step.
 */
int kube_key_answer(const struct kube *k, const char *pod, const char *text,
    struct sb_error **err);

/* kubectl logs of one container, into the file path (0644, O_EXCL), at most max_bytes. */
int kube_logs_to(const struct kube *k, const char *pod, const char *container,
    const char *path, uint64_t max_bytes, struct sb_error **err);

/*
 * Delete the Job (and its pod: foreground cascade), NetworkPolicy and Secret of the run
 * whose objects are called name (k8s_run_name), waiting until they are gone. By name, not
 * by label: the runner may not list Secrets (deploy/k8s/rbac.yaml). Nothing there is not
 * an error.
 */
int kube_delete_run(const struct kube *k, const char *name, struct sb_error **err);

/* The same, and *ret_deleted says whether anything was there to delete. */
int kube_delete_run_counted(const struct kube *k, const char *name, bool *ret_deleted,
    struct sb_error **err);

/*
 * Stop the run of Job name: the Job is failed first (its deadline set in the past, so that
 * no second pod replaces the first), then its pod is deleted, with grace seconds between
 * SIGTERM and SIGKILL, waiting until it is gone. The Job (failed: DeadlineExceeded), the
 * NetworkPolicy and the Secret stay for the run's CLI (or `runs remove`) to delete.
 */
int kube_stop_job(const struct kube *k, const char *job, uint64_t grace, struct sb_error **err);

/* Does the Job name exist (*ret)? */
int kube_job_exists(const struct kube *k, const char *job, bool *ret, struct sb_error **err);

/* The Jobs of the backend (label ssebench.run present, or =label), as `get -o json`
 * gives their list's items. */
int kube_jobs(const struct kube *k, const char *label, json_t **ret, struct sb_error **err);

/*
 * Hand images to the cluster (SSEBENCH_K8S_IMPORT: a program given the image names as its
 * arguments, e.g. scripts/k8s-import for the local cluster). Unset: the images must be on
 * the nodes or in a registry they pull from already; nothing is done.
 */
int kube_import_images(const char *const *images, struct sb_error **err);

#endif

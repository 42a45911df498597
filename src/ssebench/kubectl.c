/* SPDX-License-Identifier: Apache-2.0 */
/* kubectl.c: driving kubectl with argv vectors (see kubectl.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

#include "sb/buf.h"
#include "sb/json.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/proc.h"
#include "sb/spawn.h"

#include "cli.h"
#include "k8s.h"
#include "kubectl.h"

/* How long one short kubectl call (get, create, delete) may take. */
#define KUBE_CALL_MS (120 * 1000)
/* The collect container's tar, and the logs: minutes at most, on a live pod. */
#define KUBE_COLLECT_MS (600 * 1000)
/* The answer to the end of an agent phase: the entrypoint waits 60 s for it. */
#define KUBE_ANSWER_MS (20 * 1000)

int
kube_settings(struct kube *k, struct sb_error **err)
{
	k->kubectl = cli_setting("SSEBENCH_KUBECTL", "/usr/bin/kubectl");
	k->context = cli_setting("SSEBENCH_K8S_CONTEXT", NULL);
	k->namespace = cli_setting("SSEBENCH_K8S_NAMESPACE", "ssebench");
	/* As SSEBENCH_DOCKER: a program found on PATH is whatever the directories hold. */
	if (k->kubectl[0] != '/')
		return sb_error_set(err, EINVAL, "SSEBENCH_KUBECTL must be an absolute path");
	if (access(k->kubectl, X_OK) < 0)
		return sb_error_errno(err, errno, "kubectl '%s' (SSEBENCH_KUBECTL)", k->kubectl);
	if (!k8s_dns_label_valid(k->namespace))
		return sb_error_set(err, EINVAL, "SSEBENCH_K8S_NAMESPACE is not a namespace name");
	/* Only a context name kubectl cannot take as an option. */
	if (k->context != NULL && (k->context[0] == '\0' || k->context[0] == '-'))
		return sb_error_set(err, EINVAL, "SSEBENCH_K8S_CONTEXT is not a context name");
	return 0;
}

/* kubectl's environment: where it finds its configuration, nothing else of ours. */
static void
kube_env(struct sb_argv *env)
{
	static const char *const keep[] = { "PATH", "HOME", "KUBECONFIG", "LANG", NULL };

	cli_env_keep(env, keep);
}

/* argv[0..]: kubectl, the context and namespace, then args. */
static void
kube_argv(const struct kube *k, const struct sb_argv *args, struct sb_argv *argv)
{
	sb_argv_push(argv, k->kubectl);
	if (k->context != NULL)
		sb_argv_pushf(argv, "--context=%s", k->context);
	sb_argv_pushf(argv, "--namespace=%s", k->namespace);
	sb_argv_pushv(argv, (const char *const *)args->v);
}

/* Run kubectl; stdout to out_fd (>= 0) or captured; the file size bound with fsize. */
static int
kube_spawn(const struct kube *k, const struct sb_argv *args, const char *in, size_t in_len,
    int out_fd, uint64_t fsize, uint64_t timeout_ms, struct sb_cmd_result *res,
    struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	_cleanup_argv_ struct sb_argv env = SB_ARGV_INIT;
	struct sb_cmd cmd = SB_CMD_INIT;
	struct sb_rlimit_set fs = { RLIMIT_FSIZE, fsize, fsize };

	kube_argv(k, args, &argv);
	kube_env(&env);
	cmd.path = argv.v[0];
	cmd.argv = argv.v;
	cmd.envp = env.v;
	if (in != NULL) {
		cmd.stdin_fd = SB_CMD_CAPTURE;
		cmd.stdin_data = in;
		cmd.stdin_len = in_len;
	}
	cmd.stdout_fd = out_fd >= 0 ? out_fd : SB_CMD_CAPTURE;
	cmd.stderr_fd = SB_CMD_CAPTURE;
	cmd.capture_max = 16 * 1024 * 1024;
	cmd.timeout_ms = timeout_ms;
	if (fsize > 0) {
		cmd.rlimits = &fs;
		cmd.n_rlimits = 1;
	}
	if (sb_cmd_run(&cmd, res, err) < 0)
		return sb_error_prefix(err, "kubectl '%s'", argv.v[0]);
	return 0;
}

/* A failed call's error: kubectl's own words (escaped: they may quote the pod's). */
static int
kube_failed(const struct sb_argv *args, const struct sb_cmd_result *res, struct sb_error **err)
{
	_cleanup_free_ char *why = sb_xstrndup(res->err.s, res->err.len > 400 ? 400 : res->err.len);
	size_t n = strlen(why);

	while (n > 0 && (why[n - 1] == '\n' || why[n - 1] == ' '))
		why[--n] = '\0';
	return sb_error_set(err, EIO, "kubectl %s failed (status %d)%s%s", args->v[0],
	    res->exit_code, n > 0 ? ": " : "", n > 0 ? cli_safe(why) : "");
}

int
kube_run(const struct kube *k, const struct sb_argv *args, const char *in, size_t in_len,
    uint64_t timeout_ms, char **ret_out, struct sb_error **err)
{
	struct sb_cmd_result res = { 0 };
	int code;

	if (kube_spawn(k, args, in, in_len, -1, 0, timeout_ms ? timeout_ms : KUBE_CALL_MS, &res,
		err) < 0)
		return -1;
	code = res.exit_code;
	if (code != 0)
		kube_failed(args, &res, err);
	else if (ret_out != NULL)
		*ret_out = sb_buf_detach(&res.out, NULL);
	sb_cmd_result_release(&res);
	return code;
}

int
kube_run_inherit(const struct kube *k, const struct sb_argv *args, bool with_stdin,
    int *ret_code, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	_cleanup_argv_ struct sb_argv env = SB_ARGV_INIT;
	struct sb_cmd cmd = SB_CMD_INIT;
	struct sb_cmd_result res = { 0 };

	kube_argv(k, args, &argv);
	kube_env(&env);
	cmd.path = argv.v[0];
	cmd.argv = argv.v;
	cmd.envp = env.v;
	cmd.stdin_fd = with_stdin ? SB_CMD_INHERIT : SB_CMD_DEVNULL;
	cmd.stdout_fd = SB_CMD_INHERIT;
	cmd.stderr_fd = SB_CMD_INHERIT;
	if (sb_cmd_run(&cmd, &res, err) < 0)
		return sb_error_prefix(err, "kubectl '%s'", argv.v[0]);
	*ret_code = res.exit_code;
	sb_cmd_result_release(&res);
	return 0;
}

int
kube_create(const struct kube *k, const json_t *objects, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ char *text = json_dumps(objects, JSON_COMPACT);

	if (text == NULL)
		sb_oom(0);
	sb_argv_pushl(&a, "create", "-f", "-", "-o", "name", NULL);
	return kube_run(k, &a, text, strlen(text), 0, NULL, err) == 0 ? 0 : -1;
}

void
kube_pod_release(struct kube_pod *p)
{
	free(p->name);
	free(p->phase);
	free(p->reason);
	free(p->message);
	*p = (struct kube_pod){ 0 };
}

/* A container's state object: which, its exit code and its reason. */
static enum kube_ctr
ctr_state(const json_t *status, int *code, char **reason)
{
	const json_t *state = json_object_get(status, "state");
	const json_t *w = json_object_get(state, "waiting");
	const json_t *t = json_object_get(state, "terminated");
	const char *why = NULL;
	enum kube_ctr s = KUBE_CTR_NONE;

	if (json_is_object(t)) {
		s = KUBE_CTR_DONE;
		if (code != NULL)
			*code = (int)json_integer_value(json_object_get(t, "exitCode"));
		why = json_string_value(json_object_get(t, "reason"));
	} else if (json_is_object(json_object_get(state, "running"))) {
		s = KUBE_CTR_RUNNING;
	} else if (json_is_object(w)) {
		s = KUBE_CTR_WAITING;
		why = json_string_value(json_object_get(w, "reason"));
	}
	if (reason != NULL && why != NULL && *reason == NULL)
		*reason = sb_xstrdup(why);
	return s;
}

int
kube_pod_get(const struct kube *k, const char *job, struct kube_pod *p, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ char *out = NULL;
	json_auto_t *list = NULL;
	const json_t *pod, *st, *c;
	size_t i;

	*p = (struct kube_pod){ 0 };
	sb_argv_pushl(&a, "get", "pods", "-o", "json", "-l", NULL);
	sb_argv_pushf(&a, "job-name=%s", job);
	if (kube_run(k, &a, NULL, 0, 0, &out, err) != 0)
		return -1;
	list = json_loads(out, 0, NULL);
	pod = json_array_get(json_object_get(list, "items"), 0);
	if (pod == NULL)
		return 0;
	st = json_object_get(pod, "status");
	p->name = sb_xstrdup(json_string_value(json_object_get(json_object_get(pod, "metadata"),
	    "name")) ?: "");
	p->phase = sb_xstrdup(json_string_value(json_object_get(st, "phase")) ?: "Unknown");
	/* The pod's own reason first (Evicted, DeadlineExceeded): it says why all ended. */
	if (json_string_value(json_object_get(st, "reason")) != NULL)
		p->reason = sb_xstrdup(json_string_value(json_object_get(st, "reason")));
	if (json_string_value(json_object_get(st, "message")) != NULL)
		p->message = sb_xstrdup(json_string_value(json_object_get(st, "message")));
	/* An init container's reason counts while it waits or when it failed, not the
	 * "Completed" of one that did its work. */
	json_array_foreach (json_object_get(st, "initContainerStatuses"), i, c) {
		_cleanup_free_ char *why = NULL;
		int code = 0;
		enum kube_ctr s = ctr_state(c, &code, &why);

		if (s == KUBE_CTR_DONE && code != 0)
			p->init_failed = true;
		if ((s == KUBE_CTR_WAITING || p->init_failed) && p->reason == NULL) {
			p->reason = why;
			why = NULL;
		}
	}
	json_array_foreach (json_object_get(st, "containerStatuses"), i, c) {
		const char *n = json_string_value(json_object_get(c, "name"));

		if (n != NULL && strcmp(n, "sandbox") == 0)
			p->sandbox = ctr_state(c, &p->exit_code, &p->reason);
		else if (n != NULL && strcmp(n, "collect") == 0) {
			p->collect = ctr_state(c, NULL, NULL);
			p->collect_ready = json_is_true(json_object_get(c, "ready"));
		}
	}
	return 0;
}

bool
kube_reason_fatal(const char *reason)
{
	static const char *const fatal[] = { "ErrImagePull", "ImagePullBackOff",
		"ErrImageNeverPull", "InvalidImageName", "CreateContainerConfigError",
		"CreateContainerError", "RunContainerError", "CrashLoopBackOff", NULL };

	for (size_t i = 0; reason != NULL && fatal[i] != NULL; i++)
		if (strcmp(reason, fatal[i]) == 0)
			return true;
	return false;
}

/* Run kubectl with its stdout into a new file path, bounded. */
static int
kube_to_file(const struct kube *k, const struct sb_argv *args, const char *path, mode_t mode,
    uint64_t max_bytes, struct sb_error **err)
{
	struct sb_cmd_result res = { 0 };
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	int code;

	if (fd < 0)
		return sb_error_errno(err, errno, "create '%s'", path);
	if (kube_spawn(k, args, NULL, 0, fd, max_bytes, KUBE_COLLECT_MS, &res, err) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	code = res.exit_code;
	if (res.term_signal == SIGXFSZ)
		sb_error_set(err, EFBIG, "kubectl %s: more than %llu bytes", args->v[0],
		    (unsigned long long)max_bytes);
	else if (code != 0)
		kube_failed(args, &res, err);
	sb_cmd_result_release(&res);
	return code == 0 ? 0 : -1;
}

int
kube_collect(const struct kube *k, const char *pod, const char *tree, const char *path,
    uint64_t max_bytes, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;

	/* GNU format: names past 100 bytes as long-name entries, which untar.c reads. The
	 * volumes are mounted read-only in the collect container (k8s.c).
	 * --hard-dereference: no table of hard links, whose names (thousands of 4 KiB paths
	 * of empty files the agent linked twice, below where the hand-back looks) would run
	 * tar out of the collect container's 64 MiB; links are left behind anyway. */
	sb_argv_pushl(&a, "exec", pod, "-c", "collect", "--", "tar", "--format=gnu",
	    "--one-file-system", "--hard-dereference", "-C", K8S_COLLECT_ROOT, "-cf", "-", tree,
	    NULL);
	return kube_to_file(k, &a, path, 0600, max_bytes, err);
}

int
kube_service_ip(const struct kube *k, const char *name, const struct sb_argv *labels, char **ret,
    struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ char *out = NULL;
	json_auto_t *svc = NULL;
	const json_t *sel;
	const char *ip;

	*ret = NULL;
	sb_argv_pushl(&a, "get", "service", name, "-o", "json", "--ignore-not-found", NULL);
	if (kube_run(k, &a, NULL, 0, 0, &out, err) != 0)
		return -1;
	if (out == NULL || *out == '\0')
		return sb_error_set(err, ENOENT, "no Service '%s' in namespace %s", name,
		    k->namespace);
	svc = json_loads(out, 0, NULL);
	if (!json_is_object(svc))
		return sb_error_set(err, EIO, "kubectl get service %s: not a JSON object", name);
	/* Its pods must be the ones the policy lets the run reach, or the model is out of
	 * reach: found now, not by the agent after the run started. */
	sel = json_object_get(json_object_get(svc, "spec"), "selector");
	for (size_t i = 0; i < labels->n; i++) {
		const char *eq = strchr(labels->v[i], '=');
		_cleanup_free_ char *key = sb_xstrndup(labels->v[i], (size_t)(eq - labels->v[i]));
		const char *v = json_string_value(json_object_get(sel, key));

		if (v == NULL || strcmp(v, eq + 1) != 0)
			return sb_error_set(err, EINVAL, "the Service '%s' does not select the pods "
			    "of SSEBENCH_K8S_PROXY_SELECTOR (%s), which alone the run's policy lets "
			    "it reach", name, labels->v[i]);
	}
	ip = json_string_value(json_object_get(json_object_get(svc, "spec"), "clusterIP"));
	if (ip == NULL || !k8s_ip_literal(ip))
		return sb_error_set(err, EINVAL, "the Service '%s' in namespace %s has no address "
		    "(a headless Service?)", name, k->namespace);
	*ret = sb_xstrdup(ip);
	return 0;
}

int
kube_key_answer(const struct kube *k, const char *pod, const char *text, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT, b = SB_ARGV_INIT;
	_cleanup_free_ char *line = sb_xasprintf("%s\n", text);

	/*
	 * Argument vectors, no shell: the line goes in on tee's stdin to a file beside the
	 * answer, then a rename puts it in place in one step: the entrypoint reads the whole
	 * line or nothing.
	 */
	sb_argv_pushl(&a, "exec", "-i", pod, "-c", "collect", "--", "/usr/bin/tee",
	    K8S_KEY_ANSWER_DIR "/.answer", NULL);
	sb_argv_pushl(&b, "exec", pod, "-c", "collect", "--", "/bin/mv", "-f",
	    K8S_KEY_ANSWER_DIR "/.answer", K8S_KEY_ANSWER_DIR "/" K8S_KEY_ANSWER_FILE, NULL);
	if (kube_run(k, &a, line, strlen(line), KUBE_ANSWER_MS, NULL, err) != 0 ||
	    kube_run(k, &b, NULL, 0, KUBE_ANSWER_MS, NULL, err) != 0)
		return -1;
	return 0;
}

int
kube_logs_to(const struct kube *k, const char *pod, const char *container, const char *path,
    uint64_t max_bytes, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;

	sb_argv_pushl(&a, "logs", pod, "-c", container, NULL);
	return kube_to_file(k, &a, path, 0644, max_bytes, err);
}

int
kube_delete_run_counted(const struct kube *k, const char *name, bool *ret_deleted,
    struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ char *out = NULL;

	sb_argv_pushl(&a, "delete", "--ignore-not-found", "--wait=true", "--cascade=foreground",
	    "-o", "name", NULL);
	sb_argv_pushf(&a, "job/%s", name);
	sb_argv_pushf(&a, "networkpolicy/%s", name);
	sb_argv_pushf(&a, "secret/%s" K8S_SECRET_SUFFIX, name);
	if (kube_run(k, &a, NULL, 0, 0, &out, err) != 0)
		return -1;
	/* One "kind/name" line per object deleted; nothing when there was none. */
	*ret_deleted = out != NULL && out[0] != '\0';
	return 0;
}

int
kube_delete_run(const struct kube *k, const char *name, struct sb_error **err)
{
	bool unused;

	return kube_delete_run_counted(k, name, &unused, err);
}

int
kube_job_exists(const struct kube *k, const char *job, bool *ret, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ char *out = NULL;

	sb_argv_pushl(&a, "get", "--ignore-not-found", "-o", "name", NULL);
	sb_argv_pushf(&a, "job/%s", job);
	if (kube_run(k, &a, NULL, 0, 0, &out, err) != 0)
		return -1;
	*ret = out != NULL && out[0] != '\0';
	return 0;
}

int
kube_stop_job(const struct kube *k, const char *job, uint64_t grace, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_argv_ struct sb_argv p = SB_ARGV_INIT;

	/*
	 * The Job first: a pod deleted from an active Job is not a failed one, and the Job
	 * controller makes a new pod at once (backoffLimit counts failures only), which would
	 * run the agent again under the same id. A deadline already past fails the Job
	 * (DeadlineExceeded) and no pod comes after.
	 */
	sb_argv_pushl(&p, "patch", NULL);
	sb_argv_pushf(&p, "job/%s", job);
	sb_argv_pushl(&p, "--type=merge", "-p", "{\"spec\":{\"activeDeadlineSeconds\":1}}", NULL);
	if (kube_run(k, &p, NULL, 0, 0, NULL, err) != 0)
		return -1;
	sb_argv_pushl(&a, "delete", "pods", "--ignore-not-found", "--wait=true", NULL);
	sb_argv_pushf(&a, "--grace-period=%llu", (unsigned long long)grace);
	sb_argv_push(&a, "-l");
	sb_argv_pushf(&a, "job-name=%s", job);
	return kube_run(k, &a, NULL, 0, (grace + 60) * 1000, NULL, err) == 0 ? 0 : -1;
}

int
kube_jobs(const struct kube *k, const char *label, json_t **ret, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ char *out = NULL;
	json_t *list, *items;

	sb_argv_pushl(&a, "get", "jobs", "-o", "json", "-l", NULL);
	if (label != NULL)
		sb_argv_pushf(&a, "%s=%s", K8S_LABEL_RUN, label);
	else
		sb_argv_push(&a, K8S_LABEL_RUN);
	if (kube_run(k, &a, NULL, 0, 0, &out, err) != 0)
		return -1;
	list = json_loads(out, 0, NULL);
	items = json_object_get(list, "items");
	if (!json_is_array(items)) {
		json_decref(list);
		return sb_error_set(err, EBADMSG, "kubectl get jobs: not a list");
	}
	*ret = json_incref(items);
	json_decref(list);
	return 0;
}

int
kube_import_images(const char *const *images, struct sb_error **err)
{
	const char *prog = cli_setting("SSEBENCH_K8S_IMPORT", NULL);
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	_cleanup_argv_ struct sb_argv env = SB_ARGV_INIT;
	struct sb_cmd cmd = SB_CMD_INIT;
	struct sb_cmd_result res = { 0 };
	int code;

	if (prog == NULL)
		return 0;
	if (prog[0] != '/')
		return sb_error_set(err, EINVAL, "SSEBENCH_K8S_IMPORT must be an absolute path");
	sb_argv_push(&argv, prog);
	sb_argv_pushv(&argv, images);
	kube_env(&env);
	cmd.path = argv.v[0];
	cmd.argv = argv.v;
	cmd.envp = env.v;
	/* Its progress is the user's to see. */
	cmd.stdout_fd = SB_CMD_INHERIT;
	cmd.stderr_fd = SB_CMD_INHERIT;
	if (sb_cmd_run(&cmd, &res, err) < 0)
		return sb_error_prefix(err, "SSEBENCH_K8S_IMPORT '%s'", prog);
	code = res.exit_code;
	sb_cmd_result_release(&res);
	if (code != 0)
		return sb_error_set(err, EIO, "SSEBENCH_K8S_IMPORT '%s' failed (status %d)", prog,
		    code);
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * k8s.c: the manifests of one run on Kubernetes (see k8s.h): a NetworkPolicy that is the
 * run's network, a Secret with what the Docker backend bind-mounts from the host (the
 * secrets file, the reference patch), and a Job whose pod is the sandbox container.
 *
 * Every value that came from outside (run id, task, agent, model, image, env) goes into a
 * JSON string through jansson and nowhere else: it cannot end its field, whatever quotes,
 * braces or newlines it holds. Names of objects are derived from a hash of the run id,
 * never from a raw value, so every name is a DNS label (docs/kubernetes.md, "Manifests").
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sb/mem.h"
#include "sb/sha256.h"

#include "images.h"
#include "k8s.h"

/* The label and annotation keys: the Docker backend's labels (cmd-run.c:add_run_labels). */

/*
 * Open egress: the internet, and not the ranges that lead to the cluster itself, its
 * nodes, the other runs and the cloud around them. RFC 1918 private networks (pods,
 * services and nodes live there), 100.64/10 (carrier-grade NAT space, which some clusters
 * use for pods), link-local 169.254/16 (the cloud's metadata service at 169.254.169.254
 * hands out the node's credentials), loopback, and the IPv6 equivalents: unique-local
 * fc00::/7, link-local fe80::/10, loopback ::1. Narrower than the Docker backend's open
 * network (a plain bridge behind Docker's NAT, which reaches the host's LAN): a pod of a
 * shared cluster sits among other tenants' pods and a cloud's metadata service.
 */
static const struct {
	const char *cidr;
	const char *const except[6];
} egress_open[] = {
	{ "0.0.0.0/0", { "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10",
		"169.254.0.0/16", "127.0.0.0/8" } },
	{ "::/0", { "fc00::/7", "fe80::/10", "::1/128" } },
};

/*
 * The capabilities the run container keeps: of Docker's default set, those the root side
 * of a run uses (the Docker backend runs it with Docker's default set and
 * no-new-privileges; here everything else is dropped, docs/kubernetes.md, "Manifests"):
 *   CHOWN, FOWNER: the hand-back of the archive and the runner's scratch copies change the
 *     owner and then the mode of files others own (entrypoint/dirs.c, daemon/fsutil.c);
 *   DAC_OVERRIDE: root reads and removes the agent's and the runner's files, whatever
 *     their modes (the archive, the scratch copies, the capture of the patch);
 *   KILL: the entrypoint and the daemon kill the agent's and the runner's processes;
 *   SETUID, SETGID: sb_priv_drop changes the uid, gid and groups of every child;
 *   SETPCAP: sb_priv_drop empties the capability bounding set (PR_CAPBSET_DROP) first.
 * Left out, unused: FSETID (a set-group-id bit on a copy in a group not root's is then
 * cleared, which no check depends on), MKNOD, NET_RAW, NET_BIND_SERVICE (the daemon and
 * the MCP server listen above 1024), SETFCAP, SYS_CHROOT (the runner's sandbox enters its
 * root with pivot_root in a user namespace of its own, where it has every capability),
 * AUDIT_WRITE.
 */
static const char *const run_caps[] = { "CHOWN", "DAC_OVERRIDE", "FOWNER", "KILL", "SETGID",
	"SETPCAP", "SETUID", NULL };

/*
 * The init containers that prepare a volume copy trees with their owners and modes (cp -a)
 * or set a mode on a directory of other owners: that is what they need, and no more.
 * FSETID here, so that cp -a keeps a set-group-id bit of the image's tree as Docker's
 * volume copy does.
 */
static const char *const prepare_caps[] = { "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", NULL };

/* Which size an emptyDir gets: of the agent's file system, the harness's, or /run's. */
enum vol_size { VOL_AGENT, VOL_HARNESS, VOL_MEMORY };

/*
 * The places the run container writes, as emptyDir volumes (its root is read-only). The
 * Docker backend mounts directories of the run's two file systems there (cmd-run.c:
 * add_disk_mounts), with the modes of disk.c:make_dirs; the kubelet makes an emptyDir 0777
 * with no sticky bit, which would let the agent into the runner's area and rename other
 * users' files in /tmp. So each volume is prepared by an init container: a copy of the
 * image's directory (Docker fills a volume from the image likewise: the agent's home and
 * tree) or a chmod to the mode the container expects. mount NULL is the task's source.
 */
static const struct {
	const char *name, *mount, *mode;
	bool fill; /* copied from the image's directory at mount */
	enum vol_size size;
} volumes[] = {
	{ "run", "/run", "0755", false, VOL_MEMORY },
	{ "tmp", "/tmp", "1777", false, VOL_AGENT },
	{ "vartmp", "/var/tmp", "1777", false, VOL_AGENT },
	{ "archive", "/tmp/sse-archive", "0755", false, VOL_AGENT },
	{ "home", AGENT_HOME, NULL, true, VOL_AGENT },
	{ "source", NULL, NULL, true, VOL_AGENT },
	{ "runner", "/var/lib/ssebench-runner", "0710", false, VOL_HARNESS },
	{ "state", "/var/lib/ssebench-daemon", "0711", false, VOL_HARNESS },
	{ "results", "/var/lib/ssebench/results", "0755", false, VOL_HARNESS },
};

bool
k8s_volume_is_agents(const char *name)
{
	for (size_t i = 0; i < SB_ARRAY_SIZE(volumes); i++)
		if (strcmp(volumes[i].name, name) == 0)
			return volumes[i].size == VOL_AGENT;
	return false;
}

/*
 * Whether the kubelet's eviction message (the pod's status.message) names the agent's disk
 * use: one of the agent's volumes over its sizeLimit (the kubelet's words: `Usage of
 * EmptyDir volume "tmp" exceeds the limit "8Gi".`), or the pod's ephemeral storage in all,
 * which the agent's volumes (five of them, each up to the agent's file system) can fill
 * without any one going over. On Docker the same writes get "no space left" and grading
 * goes on; here the whole pod goes. Counted as an error, it would let an agent make a run
 * it expects to fail unscored; so it is the agent's failure (cmd-run.c:k8s_forfeit). One of the
 * harness's own volumes over its limit (runner, state, results) is not the agent's.
 */
bool
k8s_eviction_is_agents(const char *msg)
{
	static const char vol[] = "Usage of EmptyDir volume \"";
	const char *p = msg != NULL ? strstr(msg, vol) : NULL;

	if (msg == NULL)
		return false;
	if (p != NULL) {
		const char *name = p + sizeof(vol) - 1, *end = strchr(name, '"');
		_cleanup_free_ char *n = end != NULL ? sb_xstrndup(name, (size_t)(end - name)) : NULL;

		return n != NULL && k8s_volume_is_agents(n);
	}
	return strstr(msg, "Pod ephemeral local storage usage exceeds") != NULL;
}

/* The Docker backend's /run is a 16 MiB tmpfs (cmd-run.c:add_disk_mounts). */
#define RUN_TMPFS_BYTES (16ULL << 20)
#define SECRETS_PATH	"/run/ssebench-secrets/run.env"
#define REFERENCE_PATH	"/reference/patch.diff"
#define PREPARE_MOUNT	"/sse-prepare"
/*
 * A run with a model: where the sandbox container reads the CLI's word that the run's
 * proxy key is gone (entrypoint: SSE_KEY_ANSWER). A volume of its own, read-only there
 * and written only through the collect container (kubectl.c:kube_key_answer): the Docker
 * backend writes that answer into the results directory on the host, which a pod's
 * results are not. Below /var/lib/ssebench, which the entrypoint makes root's alone.
 */
#define KEY_ANSWER_PATH "/var/lib/ssebench/answer"
/* The collect container's readiness: the agent phase has ended (entrypoint step 9). */
#define PHASE_ENDED_PROBE_S 2

/* A JSON string of s, which check_run found to be UTF-8 before anything was built. */
static json_t *
jstr(const char *s)
{
	json_t *j = json_string(s);

	if (j == NULL)
		sb_oom(0);
	return j;
}

static void
set(json_t *obj, const char *key, json_t *v)
{
	if (v == NULL || json_object_set_new(obj, key, v) < 0)
		sb_oom(0);
}

static void
push(json_t *arr, json_t *v)
{
	if (v == NULL || json_array_append_new(arr, v) < 0)
		sb_oom(0);
}

static json_t *
str_array(const char *const *v)
{
	json_t *a = json_array();

	for (size_t i = 0; v[i] != NULL; i++)
		push(a, jstr(v[i]));
	return a;
}

/* 16 hex digits of the SHA-256 of s: 64 bits, enough that two runs never share a name. */
static void
hash16(const char *s, char out[17])
{
	char hex[65];

	sb_sha256_hex(s, strlen(s), hex);
	memcpy(out, hex, 16);
	out[16] = '\0';
}

char *
k8s_run_name(const char *run_id)
{
	char h[17];

	hash16(run_id, h);
	return sb_xasprintf("sse-%s", h);
}

static bool
is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool
k8s_label_value_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0)
		return true;
	if (n > 63 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

bool
k8s_dns_label_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return true;
}

/* A label key: an optional DNS-subdomain prefix and '/', then a name like a label value. */
static bool
label_key_valid(const char *s)
{
	const char *slash = strrchr(s, '/');
	const char *name = slash != NULL ? slash + 1 : s;

	if (slash != NULL) {
		size_t plen = (size_t)(slash - s);

		if (plen == 0 || plen > 253 || s[0] == '.' || s[0] == '-' || slash[-1] == '.' ||
		    slash[-1] == '-')
			return false;
		for (const char *p = s; p < slash; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' ||
				*p == '.'))
				return false;
	}
	return name[0] != '\0' && k8s_label_value_valid(name);
}

/* A quantity we pass on: digits, with at most one '.' followed by digits. */
static bool
decimal_valid(const char *s)
{
	const char *dot = strchr(s, '.');
	size_t n = strlen(s);

	if (n == 0 || n > 32 || s[0] == '.' || s[n - 1] == '.' ||
	    (dot != NULL && strchr(dot + 1, '.') != NULL))
		return false;
	return strspn(s, "0123456789.") == n;
}

/*
 * The label of a value: the value itself when it is a label value, else "h-" and its
 * hash. The raw value is always in the annotation of the same key as well, so a reader
 * (runs list) has it whichever the label holds.
 */
static json_t *
label_of(const char *value)
{
	char h[17];

	if (k8s_label_value_valid(value))
		return jstr(value);
	hash16(value, h);
	return json_sprintf("h-%s", h);
}

char *
k8s_label(const char *value)
{
	json_t *j = label_of(value);
	char *s = sb_xstrdup(json_string_value(j));

	json_decref(j);
	return s;
}

static void
add_label(json_t *labels, json_t *ann, const char *key, const char *value)
{
	set(ann, key, jstr(value));
	set(labels, key, label_of(value));
}

/* The labels and annotations every object of the run carries (add_run_labels' keys). */
static void
run_labels(const struct k8s_run *run, json_t **ret_labels, json_t **ret_ann)
{
	json_t *labels = json_object(), *ann = json_object();

	add_label(labels, ann, K8S_LABEL_RUN, run->run_id);
	if (run->job_id != NULL)
		add_label(labels, ann, "ssebench.job", run->job_id);
	add_label(labels, ann, "ssebench.task-id", run->task);
	add_label(labels, ann, "ssebench.model", run->model);
	add_label(labels, ann, "ssebench.agent", run->agent);
	add_label(labels, ann, "ssebench.mode", "sandbox");
	add_label(labels, ann, "ssebench.egress", run->egress_open ? "open" : "restricted");
	if (run->reference_patch != NULL)
		add_label(labels, ann, "ssebench.reference-run", "true");
	/* Recorded, not enforced: Kubernetes has no per-pod pids limit (docs/kubernetes.md). */
	set(ann, "ssebench.pids-limit", jstr(run->pids));
	*ret_labels = labels;
	*ret_ann = ann;
}

static json_t *
metadata(const struct k8s_run *run, const struct k8s_settings *st, const char *name)
{
	json_t *m = json_object(), *labels, *ann;

	run_labels(run, &labels, &ann);
	set(m, "name", jstr(name));
	set(m, "namespace", jstr(st->namespace));
	set(m, "labels", labels);
	set(m, "annotations", ann);
	return m;
}

/* The pod of the run, as a NetworkPolicy selects it. */
static json_t *
run_selector(const struct k8s_run *run)
{
	json_t *sel = json_object(), *ml = json_object();

	set(ml, K8S_LABEL_RUN, label_of(run->run_id));
	set(sel, "matchLabels", ml);
	return sel;
}

static json_t *
port(const char *proto, unsigned n)
{
	return json_pack("{s:s, s:I}", "protocol", proto, "port", (json_int_t)n);
}

/*
 * The egress rules: the proxy's pods (in the run's namespace) when the run uses a model,
 * and for open egress the cluster's DNS (kube-dns in kube-system) and the internet less
 * egress_open's ranges. A restricted run has no DNS (pod_spec): the cluster's resolver
 * forwards any name outside, and a lookup of a name of one's own is a way out (and in) for
 * data; the Docker backend's internal network resolves no outside name either.
 */
static json_t *
egress_rules(const struct k8s_run *run, const struct k8s_settings *st)
{
	json_t *rules = json_array();
	json_t *dns = json_pack("{s:[{s:{s:{s:s}}, s:{s:{s:s}}}], s:[o, o]}", "to",
	    "namespaceSelector", "matchLabels", "kubernetes.io/metadata.name", "kube-system",
	    "podSelector", "matchLabels", "k8s-app", "kube-dns", "ports", port("UDP", 53),
	    port("TCP", 53));

	if (run->egress_open)
		push(rules, dns);
	else
		json_decref(dns);
	if (run->uses_model) {
		json_t *ml = json_object();

		for (size_t i = 0; i < st->proxy_pods.n; i++) {
			const char *kv = st->proxy_pods.v[i];
			const char *eq = strchr(kv, '=');
			_cleanup_free_ char *key = sb_xstrndup(kv, (size_t)(eq - kv));

			set(ml, key, jstr(eq + 1));
		}
		push(rules, json_pack("{s:[{s:{s:o}}], s:[o]}", "to", "podSelector", "matchLabels",
		    ml, "ports", port("TCP", st->proxy_port)));
	}
	if (run->egress_open) {
		json_t *to = json_array();

		for (size_t i = 0; i < SB_ARRAY_SIZE(egress_open); i++) {
			json_t *ex = json_array();

			for (size_t j = 0; j < 6 && egress_open[i].except[j] != NULL; j++)
				push(ex, jstr(egress_open[i].except[j]));
			push(to, json_pack("{s:{s:s, s:o}}", "ipBlock", "cidr", egress_open[i].cidr,
			    "except", ex));
		}
		push(rules, json_pack("{s:o}", "to", to));
	}
	return rules;
}

/*
 * The run's network. No ingress rule: nothing reaches the pod (the web view of the daemon
 * is reached with `runs exec`, through the API server). Both policy types are listed so
 * that an empty ingress means "none" rather than "not governed".
 */
static json_t *
network_policy(const struct k8s_run *run, const struct k8s_settings *st, const char *name)
{
	json_t *np = json_pack("{s:s, s:s}", "apiVersion", "networking.k8s.io/v1", "kind",
	    "NetworkPolicy");

	set(np, "metadata", metadata(run, st, name));
	set(np, "spec", json_pack("{s:o, s:[s, s], s:[], s:o}", "podSelector", run_selector(run),
	    "policyTypes", "Ingress", "Egress", "ingress", "egress", egress_rules(run, st)));
	return np;
}

/* Base64 (RFC 4648, with padding), for a Secret's data: a patch need not be UTF-8. */
static json_t *
base64(const char *data, size_t len)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = (const unsigned char *)data;
	_cleanup_free_ char *out = sb_xmalloc((len + 2) / 3 * 4 + 1);
	size_t o = 0;

	for (size_t i = 0; i < len; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (i + 1 < len ? (unsigned)p[i + 1] << 8 : 0) |
			     (i + 2 < len ? p[i + 2] : 0);

		out[o++] = tab[v >> 18 & 63];
		out[o++] = tab[v >> 12 & 63];
		out[o++] = i + 1 < len ? tab[v >> 6 & 63] : '=';
		out[o++] = i + 2 < len ? tab[v & 63] : '=';
	}
	out[o] = '\0';
	return jstr(out);
}

/* What the Docker backend bind-mounts from the host's .secrets-<run> directory. */
static json_t *
secret(const struct k8s_run *run, const struct k8s_settings *st, const char *name)
{
	json_t *s = json_pack("{s:s, s:s, s:s}", "apiVersion", "v1", "kind", "Secret", "type",
	    "Opaque");
	json_t *data = json_object();

	set(s, "metadata", metadata(run, st, name));
	set(data, "run.env", base64(run->secrets, strlen(run->secrets)));
	if (run->reference_patch != NULL)
		set(data, "patch.diff", base64(run->reference_patch, run->reference_patch_len));
	set(s, "data", data);
	return s;
}

static json_t *
quantity_u64(uint64_t n)
{
	return json_sprintf("%llu", (unsigned long long)n);
}

/*
 * CPUs as Kubernetes writes them back: whole cores as an integer, else millicores ("1.5"
 * is "1500m"), so a manifest read back from the API server is the one written (t0185).
 * Below a millicore, Kubernetes rounds up; so does this. 0 if cpus is no number above 0.
 */
static uint64_t
cpu_millis(const char *cpus)
{
	static const unsigned place[] = { 100, 10, 1 };
	const char *dot = strchr(cpus, '.');
	bool round_up = false;
	uint64_t m = 0;

	if (!decimal_valid(cpus) || strlen(cpus) > 12)
		return 0;
	for (size_t i = 0; cpus[i] != '\0' && cpus[i] != '.'; i++)
		m = m * 10 + (uint64_t)(cpus[i] - '0');
	m *= 1000;
	for (size_t d = 1; dot != NULL && dot[d] != '\0'; d++) {
		if (d <= 3)
			m += (uint64_t)(dot[d] - '0') * place[d - 1];
		else if (dot[d] != '0')
			round_up = true;
	}
	return m + (round_up ? 1 : 0);
}

static json_t *
cpu_quantity(const char *cpus)
{
	uint64_t m = cpu_millis(cpus);

	return m % 1000 == 0 ? json_sprintf("%llu", (unsigned long long)(m / 1000))
			     : json_sprintf("%llum", (unsigned long long)m);
}

/*
 * limits: the run gets what it would get from Docker, and no more. requests == limits,
 * but for the CPUs when the settings ask for fewer (k8s.h, cpu_request).
 */
static json_t *
resources(const struct k8s_run *run, const struct k8s_settings *st)
{
	json_t *lim = json_pack("{s:o, s:s, s:o}", "cpu", cpu_quantity(run->cpus), "memory",
	    run->memory, "ephemeral-storage", quantity_u64(run->agent_disk + run->harness_disk));
	json_t *req = json_deep_copy(lim);

	if (st->cpu_request != NULL)
		set(req, "cpu", cpu_quantity(st->cpu_request));
	return json_pack("{s:o, s:o}", "limits", lim, "requests", req);
}

/* The container's security context (see run_caps, prepare_caps). */
static json_t *
container_security(const char *const *caps)
{
	return json_pack("{s:i, s:b, s:b, s:b, s:{s:[s], s:o}}", "runAsUser", 0,
	    "allowPrivilegeEscalation", 0, "privileged", 0, "readOnlyRootFilesystem", 1,
	    "capabilities", "drop", "ALL", "add", str_array(caps));
}

static const char *
volume_mount_path(size_t i, const struct k8s_run *run)
{
	return volumes[i].mount != NULL ? volumes[i].mount : run->source;
}

static json_t *
mount(const char *vol, const char *path, const char *sub_path, bool ro)
{
	json_t *m = json_pack("{s:s, s:s}", "name", vol, "mountPath", path);

	if (sub_path != NULL)
		set(m, "subPath", jstr(sub_path));
	if (ro)
		set(m, "readOnly", json_true());
	return m;
}

/*
 * The run container's mounts. The secrets file and the patch are mounted by subPath: a
 * Secret volume holds its files as symbolic links into a hidden directory, and the
 * entrypoint refuses a secrets file that is a link (entrypoint/config.c:open_secrets);
 * a subPath mount binds the file itself.
 */
static json_t *
run_mounts(const struct k8s_run *run)
{
	json_t *ms = json_array();

	for (size_t i = 0; i < SB_ARRAY_SIZE(volumes); i++)
		push(ms, mount(volumes[i].name, volume_mount_path(i, run), NULL, false));
	push(ms, mount("secrets", SECRETS_PATH, "run.env", true));
	if (run->reference_patch != NULL)
		push(ms, mount("reference", REFERENCE_PATH, "patch.diff", true));
	if (run->uses_model)
		push(ms, mount("answer", KEY_ANSWER_PATH, NULL, true));
	return ms;
}

static json_t *
run_env(const struct k8s_run *run)
{
	json_t *env = json_array();

	for (size_t i = 0; i < run->env.n; i++) {
		const char *kv = run->env.v[i];
		const char *eq = strchr(kv, '=');
		_cleanup_free_ char *name = sb_xstrndup(kv, (size_t)(eq - kv));

		push(env, json_pack("{s:s, s:s}", "name", name, "value", eq + 1));
	}
	if (run->uses_model)
		push(env, json_pack("{s:s, s:s}", "name", "SSE_KEY_ANSWER", "value",
		    KEY_ANSWER_PATH));
	/*
	 * An address the isolation check must find silent (host_unreachable) besides the one
	 * the settings name (SSE_NET_GATEWAY: an address the operator knows pods reach when
	 * nothing stops them): the pod's own node, whichever it is scheduled on. A plugin that
	 * lets pods reach their own node past the policy (a node-local DNS cache, a service on
	 * the host's network) would leave that way open, and a fixed address of another node
	 * would not show it. Never instead of it: a node address the pods have no route to is
	 * silent whether or not a policy holds (the local cluster's is).
	 */
	if (run->probe_node)
		push(env, json_pack("{s:s, s:{s:{s:s}}}", "name", "SSE_NET_NODE", "valueFrom",
		    "fieldRef", "fieldPath", "status.hostIP"));
	return env;
}

/*
 * The init container that prepares volume i: cp -a of the image's directory, or chmod.
 * Argument vectors, as everywhere (docs/design.md, "No shell"); the image's own cp and
 * chmod (Debian's coreutils, in every image built here).
 */
static json_t *
prepare_container(const struct k8s_run *run, const struct k8s_settings *st, size_t i)
{
	const char *path = volume_mount_path(i, run);
	_cleanup_free_ char *from = sb_xasprintf("%s/.", path);
	json_t *c = json_object(), *cmd;

	set(c, "name", json_sprintf("prepare-%s", volumes[i].name));
	set(c, "image", jstr(run->image));
	set(c, "imagePullPolicy", jstr("IfNotPresent"));
	if (volumes[i].fill)
		cmd = json_pack("[s, s, s, s, s]", "/bin/cp", "-a", "--", from, PREPARE_MOUNT "/");
	else
		cmd = json_pack("[s, s, s]", "/bin/chmod", volumes[i].mode, PREPARE_MOUNT);
	set(c, "command", cmd);
	set(c, "resources", resources(run, st));
	set(c, "securityContext", container_security(prepare_caps));
	set(c, "volumeMounts", json_pack("[o]", mount(volumes[i].name, PREPARE_MOUNT, NULL,
					      false)));
	return c;
}

/*
 * The container the results are collected from (kubectl.c:kube_collect, by exec of tar)
 * once the sandbox container has ended: the results and the archive, read-only, and
 * nothing else. It only waits; it reads what root and the agent left, so it is root with
 * DAC_READ_SEARCH alone (read any file, write none but the answer below), and what it
 * sends is unpacked as hostile input (untar.c). Its own small budget, which the run's
 * limits do not pay for.
 *
 * A run with a model: the CLI revokes the run's proxy key when the agent phase ends and
 * before grading, as on Docker (cmd-run.c:k8s_phase_end). The CLI learns of the end from
 * this container's readiness, which a probe of the entrypoint's "agent-phase-ended" in
 * the results sets (the CLI reads the pod's status every 2 s anyway: no extra call while
 * the agent works), and answers through this container into the "answer" volume, which
 * only it can write. Only root writes the results; an agent that could fake the marker
 * would only lose its own key early.
 */
static json_t *
collect_container(const struct k8s_run *run)
{
	static const char *const caps[] = { "DAC_READ_SEARCH", NULL };
	json_t *c = json_object();
	json_t *lim = json_pack("{s:s, s:s}", "cpu", "100m", "memory", "64Mi");
	json_t *req = json_pack("{s:s, s:s}", "cpu", "10m", "memory", "32Mi");

	set(c, "name", jstr("collect"));
	set(c, "image", jstr(run->image));
	set(c, "imagePullPolicy", jstr("IfNotPresent"));
	/* The pod's deadline ends it if no one collects. */
	set(c, "command", json_pack("[s, s]", "/bin/sleep", "infinity"));
	set(c, "resources", json_pack("{s:o, s:o}", "limits", lim, "requests", req));
	set(c, "securityContext", container_security(caps));
	set(c, "volumeMounts", json_pack("[o, o]",
	    mount("results", K8S_COLLECT_ROOT "/results", NULL, true),
	    mount("archive", K8S_COLLECT_ROOT "/archive", NULL, true)));
	if (run->uses_model) {
		push(json_object_get(c, "volumeMounts"), mount("answer", K8S_KEY_ANSWER_DIR,
		    NULL, false));
		set(c, "readinessProbe", json_pack("{s:{s:[s, s, s]}, s:i, s:i, s:i, s:i}",
		    "exec", "command", "/usr/bin/test", "-e",
		    K8S_COLLECT_ROOT "/results/" K8S_PHASE_ENDED, "periodSeconds",
		    PHASE_ENDED_PROBE_S, "timeoutSeconds", 5, "successThreshold", 1,
		    "failureThreshold", 1));
	}
	return c;
}

static json_t *
run_volumes(const struct k8s_run *run, const char *secret_name)
{
	json_t *vs = json_array();

	for (size_t i = 0; i < SB_ARRAY_SIZE(volumes); i++) {
		json_t *ed = json_object();

		if (volumes[i].size == VOL_MEMORY) {
			set(ed, "medium", jstr("Memory"));
			set(ed, "sizeLimit", quantity_u64(RUN_TMPFS_BYTES));
		} else {
			set(ed, "sizeLimit", quantity_u64(volumes[i].size == VOL_AGENT
							      ? run->agent_disk
							      : run->harness_disk));
		}
		push(vs, json_pack("{s:s, s:o}", "name", volumes[i].name, "emptyDir", ed));
	}
	/* 0400 as the host's file is 0600: root's alone; the patch 0444, for the agent. */
	push(vs, json_pack("{s:s, s:{s:s, s:i, s:[{s:s, s:s, s:i}]}}", "name", "secrets", "secret",
	    "secretName", secret_name, "defaultMode", 0400, "items", "key", "run.env", "path",
	    "run.env", "mode", 0400));
	if (run->reference_patch != NULL)
		push(vs, json_pack("{s:s, s:{s:s, s:i, s:[{s:s, s:s, s:i}]}}", "name", "reference",
		    "secret", "secretName", secret_name, "defaultMode", 0444, "items", "key",
		    "patch.diff", "path", "patch.diff", "mode", 0444));
	/* A line of text (collect_container): in memory, and small. */
	if (run->uses_model)
		push(vs, json_pack("{s:s, s:{s:s, s:s}}", "name", "answer", "emptyDir", "medium",
		    "Memory", "sizeLimit", "64Ki"));
	return vs;
}

/*
 * The pod's own security: seccomp for every container, no host namespaces, no token.
 * The Docker backend loads its own profile (seccomp.c), which allows what the runner's
 * sandbox needs; a runtime's default refuses unshare and mount without CAP_SYS_ADMIN, so
 * with RuntimeDefault task scripts cannot start and the run fails (closed) at grading.
 * settings.seccomp_localhost names that profile installed on the nodes.
 */
static json_t *
pod_security(const struct k8s_settings *st)
{
	json_t *sp = st->seccomp_localhost != NULL
	    ? json_pack("{s:s, s:s}", "type", "Localhost", "localhostProfile", st->seccomp_localhost)
	    : json_pack("{s:s}", "type", "RuntimeDefault");

	return json_pack("{s:o}", "seccompProfile", sp);
}

static json_t *
pod_spec(const struct k8s_run *run, const struct k8s_settings *st, const char *secret_name)
{
	json_t *spec = json_pack("{s:s, s:b, s:b, s:b, s:b, s:b, s:b, s:s}", "restartPolicy",
	    "Never", "automountServiceAccountToken", 0, "enableServiceLinks", 0, "hostNetwork",
	    0, "hostPID", 0, "hostIPC", 0, "shareProcessNamespace", 0, "hostname", "sandbox");
	json_t *init = json_array(), *c = json_object();

	/*
	 * The backend deletes the Job once it has collected the results, while the collect
	 * container still sleeps: as a pid 1 without a handler it ignores SIGTERM, and the
	 * default 30 s would be spent waiting on it. `runs stop --grace` gives the sandbox a
	 * grace of its own.
	 */
	set(spec, "terminationGracePeriodSeconds", json_integer(K8S_GRACE_S));
	if (run->runtime_class != NULL)
		set(spec, "runtimeClassName", jstr(run->runtime_class));
	set(spec, "securityContext", pod_security(st));
	/*
	 * A restricted run resolves no name (egress_rules says why): its only resolver is
	 * the pod's own loopback, where nothing answers, so a lookup fails at once, as with
	 * the Docker backend's --dns-opt. The proxy's name, when the URL has one, is in
	 * /etc/hosts with the address of its Service (hostAliases, found by the CLI).
	 */
	if (!run->egress_open) {
		set(spec, "dnsPolicy", jstr("None"));
		set(spec, "dnsConfig", json_pack("{s:[s], s:[{s:s, s:s}, {s:s, s:s}]}",
		    "nameservers", "127.0.0.1", "options", "name", "timeout", "value", "1", "name",
		    "attempts", "value", "1"));
		if (run->uses_model && st->proxy_alias_ip != NULL)
			set(spec, "hostAliases", json_pack("[{s:s, s:[s]}]", "ip",
			    st->proxy_alias_ip, "hostnames", st->proxy_alias_host));
	}
	for (size_t i = 0; i < SB_ARRAY_SIZE(volumes); i++)
		push(init, prepare_container(run, st, i));
	set(spec, "initContainers", init);
	set(c, "name", jstr("sandbox"));
	set(c, "image", jstr(run->image));
	set(c, "imagePullPolicy", jstr("IfNotPresent"));
	set(c, "env", run_env(run));
	set(c, "resources", resources(run, st));
	set(c, "securityContext", container_security(run_caps));
	set(c, "volumeMounts", run_mounts(run));
	set(spec, "containers", json_pack("[o, o]", c, collect_container(run)));
	set(spec, "volumes", run_volumes(run, secret_name));
	return spec;
}

/*
 * The Job. No retry (backoffLimit 0, restartPolicy Never): a second attempt would be a
 * second run under the first one's id. The deadline bounds the pod's whole life: the
 * agent phase (TIMEOUT), then grading, which the evaluator bounds by TIMEOUT again
 * (evaluator/main.c), and K8S_DEADLINE_SLACK_S for what is not in either (the daemon's
 * start, the volumes' preparation, the two isolation checks, the hand-back of the archive).
 * A pod that reaches it has hung: Kubernetes kills it and marks the Job failed.
 */
static json_t *
job(const struct k8s_run *run, const struct k8s_settings *st, const char *name,
    const char *secret_name)
{
	json_t *j = json_pack("{s:s, s:s}", "apiVersion", "batch/v1", "kind", "Job");
	json_t *tmeta = json_object(), *labels, *ann;
	uint64_t deadline = 2 * run->timeout + K8S_DEADLINE_SLACK_S;

	run_labels(run, &labels, &ann);
	set(tmeta, "labels", labels);
	set(tmeta, "annotations", ann);
	set(j, "metadata", metadata(run, st, name));
	set(j, "spec", json_pack("{s:i, s:I, s:i, s:{s:o, s:o}}", "backoffLimit", 0,
	    "activeDeadlineSeconds", (json_int_t)deadline, "ttlSecondsAfterFinished",
	    K8S_TTL_AFTER_FINISHED_S, "template", "metadata", tmeta, "spec",
	    pod_spec(run, st, secret_name)));
	return j;
}

/* Is s UTF-8 (what jansson takes as a string)? */
static bool
utf8(const char *s)
{
	json_t *j = json_string(s);

	json_decref(j);
	return j != NULL;
}

/* Everything k8s_run_manifests needs of the description, checked before anything is made. */
static int
check_run(const struct k8s_run *run, const struct k8s_settings *st, struct sb_error **err)
{
	const char *strs[] = { run->run_id, run->task, run->agent, run->model, run->image,
		run->source, run->secrets, run->cpus, run->memory, run->pids, st->namespace };
	const char *names[] = { "run id", "task", "agent", "model", "image", "source", "secrets",
		"CPUs", "memory", "pids", "namespace" };

	for (size_t i = 0; i < SB_ARRAY_SIZE(strs); i++)
		if (strs[i] == NULL || strs[i][0] == '\0' || !utf8(strs[i]))
			return sb_error_set(err, EINVAL, "k8s: the %s is missing or not UTF-8",
			    names[i]);
	if ((run->job_id != NULL && !utf8(run->job_id)) || !k8s_dns_label_valid(st->namespace))
		return sb_error_set(err, EINVAL, "k8s: the job id or namespace is not valid");
	if (run->source[0] != '/' || strcmp(run->source, "/") == 0 ||
	    strstr(run->source, "..") != NULL)
		return sb_error_set(err, EINVAL, "k8s: the source path is not absolute and plain");
	if (run->runtime_class != NULL && !k8s_dns_label_valid(run->runtime_class))
		return sb_error_set(err, EINVAL, "k8s: the runtime class is not a DNS label");
	if (st->cpu_request != NULL &&
	    (cpu_millis(st->cpu_request) == 0 || cpu_millis(st->cpu_request) > cpu_millis(run->cpus)))
		return sb_error_set(err, EINVAL, "k8s: the CPU request is not a number above 0 and "
						 "at most the run's CPUs");
	if (cpu_millis(run->cpus) == 0 || !decimal_valid(run->memory) ||
	    strchr(run->memory, '.') != NULL || run->timeout == 0 || run->timeout > INT32_MAX ||
	    run->agent_disk == 0 || run->harness_disk == 0)
		return sb_error_set(err, EINVAL, "k8s: a limit of the run is not a usable number");
	for (size_t i = 0; i < run->env.n; i++) {
		const char *eq = strchr(run->env.v[i], '=');
		_cleanup_free_ char *name =
		    eq != NULL ? sb_xstrndup(run->env.v[i], (size_t)(eq - run->env.v[i])) : NULL;

		if (name == NULL || !sb_env_name_valid(name) || !utf8(eq + 1))
			return sb_error_set(err, EINVAL, "k8s: environment entry %zu is not "
							 "NAME=value in UTF-8", i);
		if (run->probe_node && strcmp(name, "SSE_NET_NODE") == 0)
			return sb_error_set(err, EINVAL, "k8s: SSE_NET_NODE both given and taken "
							 "from the node");
	}
	/* A path the kubelet resolves under its seccomp directory: it must stay there. */
	if (st->seccomp_localhost != NULL &&
	    (!utf8(st->seccomp_localhost) || st->seccomp_localhost[0] == '/' ||
		strstr(st->seccomp_localhost, "..") != NULL))
		return sb_error_set(err, EINVAL, "k8s: the seccomp profile is not a plain path "
						 "under the kubelet's seccomp directory");
	return 0;
}

bool
k8s_ip_literal(const char *s)
{
	unsigned char buf[sizeof(struct in6_addr)];

	return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

/* A host name for /etc/hosts: DNS labels of [a-z0-9-], dot-separated, at most 253. */
static bool
host_name_valid(const char *s)
{
	_cleanup_free_ char *copy = sb_xstrdup(s);
	char *save = NULL;
	size_t n = 0;

	if (*s == '\0' || strlen(s) > 253 || s[strlen(s) - 1] == '.' || *s == '.' ||
	    strstr(s, "..") != NULL)
		return false;
	for (char *l = strtok_r(copy, ".", &save); l != NULL; l = strtok_r(NULL, ".", &save), n++)
		if (!k8s_dns_label_valid(l))
			return false;
	return n > 0;
}

int
k8s_proxy_service(const char *url, const char *namespace, char **ret_host,
    char **ret_service, struct sb_error **err)
{
	const char *h = strstr(url, "://"), *end;
	_cleanup_free_ char *host = NULL, *copy = NULL;
	char *save = NULL, *name, *ns, *svc;

	*ret_host = *ret_service = NULL;
	if (h == NULL)
		return sb_error_set(err, EINVAL, "SSEBENCH_K8S_PROXY_URL: not a URL");
	h += 3;
	if (*h == '[') { /* an IPv6 address: nothing to resolve */
		return 0;
	}
	end = h + strcspn(h, ":/?#");
	host = sb_xstrndup(h, (size_t)(end - h));
	if (k8s_ip_literal(host))
		return 0;
	/* NAME, NAME.NS, NAME.NS.svc or NAME.NS.svc.<cluster domain>: a Service. */
	copy = sb_xstrdup(host);
	name = strtok_r(copy, ".", &save);
	ns = strtok_r(NULL, ".", &save);
	svc = strtok_r(NULL, ".", &save);
	if (!host_name_valid(host) || name == NULL || (ns != NULL && strcmp(ns, namespace) != 0) ||
	    (svc != NULL && strcmp(svc, "svc") != 0))
		return sb_error_set(err, EINVAL, "SSEBENCH_K8S_PROXY_URL: a restricted run "
		    "resolves no name, so the proxy's host must be an address or its Service in "
		    "the runs' namespace (NAME, NAME.%s or NAME.%s.svc...), not '%s'", namespace,
		    namespace, host);
	*ret_service = sb_xstrdup(name);
	*ret_host = TAKE_PTR(host);
	return 0;
}

/* The proxy's side of the settings, for a run that uses the model. */
static int
check_proxy(const struct k8s_settings *st, struct sb_error **err)
{
	if (st->proxy_pods.n == 0 || st->proxy_port == 0 || st->proxy_port > 65535)
		return sb_error_set(err, EINVAL, "k8s: the run uses the model proxy, and the "
						 "settings select no proxy pods or port");
	if ((st->proxy_alias_ip == NULL) != (st->proxy_alias_host == NULL) ||
	    (st->proxy_alias_ip != NULL && (!k8s_ip_literal(st->proxy_alias_ip) ||
					       !host_name_valid(st->proxy_alias_host))))
		return sb_error_set(err, EINVAL, "k8s: the proxy's host alias is not an address "
						 "and a host name");
	for (size_t i = 0; i < st->proxy_pods.n; i++) {
		const char *kv = st->proxy_pods.v[i];
		const char *eq = strchr(kv, '=');
		_cleanup_free_ char *key = eq != NULL ? sb_xstrndup(kv, (size_t)(eq - kv)) : NULL;

		if (key == NULL || !label_key_valid(key) || !k8s_label_value_valid(eq + 1))
			return sb_error_set(err, EINVAL, "k8s: proxy pod selector %zu is not "
							 "KEY=VALUE of a label", i);
		/* matchLabels holds one value per key: a second would replace the first. */
		for (size_t j = 0; j < i; j++)
			if (strncmp(st->proxy_pods.v[j], kv, (size_t)(eq - kv) + 1) == 0)
				return sb_error_set(err, EINVAL, "k8s: proxy pod selector %zu names "
								 "the label '%s' again", i, key);
	}
	return 0;
}

bool
k8s_proxy_url_valid(const char *url)
{
	const char *host;

	if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
		return false;
	/* One line of printable ASCII: it becomes a NAME=value line of the secrets file. */
	for (const char *c = url; *c != '\0'; c++)
		if (*c <= ' ' || *c >= 0x7f)
			return false;
	/* A host, and no user information (user:password@) to leak into the agent's view. */
	host = strstr(url, "://") + 3;
	if (*host == '[') { /* an IPv6 address, then the end, a port or the path */
		const char *rb = strchr(host, ']');
		_cleanup_free_ char *a = rb != NULL ? sb_xstrndup(host + 1, (size_t)(rb - host - 1))
						    : NULL;
		unsigned char buf[sizeof(struct in6_addr)];

		return a != NULL && inet_pton(AF_INET6, a, buf) == 1 &&
		       (rb[1] == '\0' || strchr(":/?#", rb[1]) != NULL);
	}
	return strchr("/?#:@", *host) == NULL && memchr(host, '@', strcspn(host, "/?#")) == NULL;
}

/* The port of an http(s) URL: its own, else the scheme's; 0 when it names no valid one. */
static unsigned
url_port(const char *url)
{
	const char *h = strstr(url, "://") + 3, *end = h + strcspn(h, "/?#");
	const char *colon = NULL;
	unsigned long n = 0;

	if (*h == '[') { /* [IPv6]:port */
		const char *rb = memchr(h, ']', (size_t)(end - h));

		if (rb == NULL)
			return 0;
		colon = rb + 1 < end && rb[1] == ':' ? rb + 1 : NULL;
	} else {
		colon = memchr(h, ':', (size_t)(end - h));
	}
	if (colon == NULL)
		return strncmp(url, "https", 5) == 0 ? 443 : 80;
	if (colon + 1 == end || colon[1] == '0')
		return 0;
	for (const char *d = colon + 1; d < end; d++) {
		if (*d < '0' || *d > '9' || n > 65535)
			return 0;
		n = n * 10 + (unsigned long)(*d - '0');
	}
	return n <= 65535 ? (unsigned)n : 0;
}

int
k8s_proxy_settings(const char *url, const char *selector, const char *port,
    struct k8s_settings *st, struct sb_error **err)
{
	_cleanup_free_ char *copy = sb_xstrdup(selector);
	char *save = NULL;

	if (!k8s_proxy_url_valid(url))
		return sb_error_set(err, EINVAL, "SSEBENCH_K8S_PROXY_URL: not an http(s) URL of "
						 "printable characters with a host");
	st->proxy_port = url_port(url);
	if (st->proxy_port == 0)
		return sb_error_set(err, EINVAL, "SSEBENCH_K8S_PROXY_URL: no valid port");
	if (port != NULL) {
		char *end = NULL;
		unsigned long n = strtoul(port, &end, 10);

		st->proxy_port = port[0] >= '1' && port[0] <= '9' && *end == '\0' && n <= 65535
		    ? (unsigned)n : 0;
		if (st->proxy_port == 0)
			return sb_error_set(err, EINVAL, "SSEBENCH_K8S_PROXY_PORT: not a port");
	}
	sb_argv_release(&st->proxy_pods);
	for (char *kv = strtok_r(copy, ",", &save); kv != NULL; kv = strtok_r(NULL, ",", &save))
		sb_argv_push(&st->proxy_pods, kv);
	if (check_proxy(st, err) < 0) {
		sb_argv_release(&st->proxy_pods);
		return sb_error_prefix(err, "SSEBENCH_K8S_PROXY_SELECTOR");
	}
	return 0;
}

int
k8s_run_manifests(const struct k8s_run *run, const struct k8s_settings *st, json_t **ret,
    struct sb_error **err)
{
	_cleanup_free_ char *name = NULL, *secret_name = NULL;
	json_t *list;

	if (check_run(run, st, err) < 0 || (run->uses_model && check_proxy(st, err) < 0))
		return -1;
	name = k8s_run_name(run->run_id);
	secret_name = sb_xasprintf("%s" K8S_SECRET_SUFFIX, name);
	list = json_pack("{s:s, s:s, s:[o, o, o]}", "apiVersion", "v1", "kind", "List", "items",
	    network_policy(run, st, name), secret(run, st, secret_name),
	    job(run, st, name, secret_name));
	if (list == NULL)
		sb_oom(0);
	*ret = list;
	return 0;
}

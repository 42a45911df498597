/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-k8s.c: the Kubernetes manifests of a run (src/ssebench/k8s.c). The three runs of
 * k8s-fixtures.h are held to golden files (tests/unit/golden/k8s/NAME.json, compared as parsed
 * JSON; SB_UPDATE_GOLDEN=1 rewrites them, for a change someone meant: read the diff).
 * Hostile values (a task id that is no DNS label, a model name with quotes, newlines and
 * braces, a 300-character run id, an agent called "ssebench.run=x") stay inside their
 * fields: every name is a DNS label, every label value valid, and each hostile string
 * appears only as the whole value of the fields it was meant for. A description that
 * cannot make valid objects is refused.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sb/error.h"
#include "sb/json.h"
#include "sb/mem.h"

#include "k8s-fixtures.h"
#include "unit.h"

static json_t *
build(const struct k8s_run *run, const struct k8s_settings *st)
{
	struct sb_error *err = NULL;
	json_t *list = NULL;

	if (k8s_run_manifests(run, st, &list, &err) < 0)
		ck_abort_msg("k8s_run_manifests: %s", sb_error_message(err));
	return list;
}

/* The fixture called name, with the fixtures' settings. */
static void
fixture(const char *name, struct k8s_run *run, struct k8s_settings *st)
{
	ck_assert(k8s_fixture_run(name, run));
	k8s_fixture_settings(st);
}

static void
release(json_t *list, struct k8s_run *run, struct k8s_settings *st)
{
	json_decref(list);
	sb_argv_release(&run->env);
	sb_argv_release(&st->proxy_pods);
}

static json_t *
item(const json_t *list, const char *kind)
{
	size_t i;
	json_t *v;

	json_array_foreach (json_object_get(list, "items"), i, v)
		if (strcmp(json_string_value(json_object_get(v, "kind")), kind) == 0)
			return v;
	ck_abort_msg("no %s in the list", kind);
	return NULL;
}

/* The pod spec of the Job in list. */
static json_t *
pod(const json_t *list)
{
	return json_object_get(
	    json_object_get(json_object_get(item(list, "Job"), "spec"), "template"), "spec");
}

START_TEST(test_golden)
{
	const char *name = k8s_fixture_names[_i];
	struct k8s_run run = K8S_RUN_INIT;
	struct k8s_settings st = K8S_SETTINGS_INIT;
	_cleanup_free_ char *path =
	    sb_xasprintf("%s/tests/unit/golden/k8s/%s.json", SB_SOURCE_DIR, name);
	json_t *got, *want = NULL;
	json_error_t je;

	fixture(name, &run, &st);
	got = build(&run, &st);
	if (getenv("SB_UPDATE_GOLDEN") != NULL && strcmp(getenv("SB_UPDATE_GOLDEN"), "1") == 0)
		ck_assert_int_eq(json_dump_file(got, path, JSON_INDENT(2) | JSON_SORT_KEYS), 0);
	want = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	ck_assert_msg(want != NULL, "%s: %s", path, je.text);
	/* The message stays short (check passes it through a pipe): the diff is git's. */
	ck_assert_msg(json_equal(got, want),
	    "%s differs from what k8s.c builds now (SB_UPDATE_GOLDEN=1 rewrites it)", path);
	json_decref(got);
	release(want, &run, &st);
}
END_TEST

/* What every run's objects must be, whatever the fixture: the properties the docs promise. */
START_TEST(test_properties)
{
	struct k8s_run run = K8S_RUN_INIT;
	struct k8s_settings st = K8S_SETTINGS_INIT;
	const char *want_caps[] = { "CHOWN", "DAC_OVERRIDE", "FOWNER", "KILL", "SETGID", "SETPCAP",
		"SETUID" };
	json_t *list, *p, *c, *sc, *caps, *job, *np, *v;
	size_t i;

	fixture(k8s_fixture_names[_i], &run, &st);
	list = build(&run, &st);
	job = json_object_get(item(list, "Job"), "spec");
	ck_assert_int_eq(json_integer_value(json_object_get(job, "backoffLimit")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(job, "activeDeadlineSeconds")),
	    (json_int_t)(2 * run.timeout + K8S_DEADLINE_SLACK_S));
	p = pod(list);
	ck_assert_str_eq(json_string_value(json_object_get(p, "restartPolicy")), "Never");
	ck_assert(json_is_false(json_object_get(p, "automountServiceAccountToken")));
	ck_assert(json_is_false(json_object_get(p, "enableServiceLinks")));
	ck_assert(json_is_false(json_object_get(p, "hostNetwork")));
	ck_assert(json_is_false(json_object_get(p, "hostPID")));
	ck_assert(json_is_false(json_object_get(p, "hostIPC")));
	c = json_array_get(json_object_get(p, "containers"), 0);
	sc = json_object_get(c, "securityContext");
	ck_assert(json_is_false(json_object_get(sc, "allowPrivilegeEscalation")));
	ck_assert(json_is_true(json_object_get(sc, "readOnlyRootFilesystem")));
	caps = json_object_get(sc, "capabilities");
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(caps, "drop"), 0)), "ALL");
	ck_assert_int_eq(json_array_size(json_object_get(caps, "add")), SB_ARRAY_SIZE(want_caps));
	json_array_foreach (json_object_get(caps, "add"), i, v)
		ck_assert_str_eq(json_string_value(v), want_caps[i]);
	/* Every init container too: no escalation, a read-only root, ALL dropped. */
	json_array_foreach (json_object_get(p, "initContainers"), i, v) {
		sc = json_object_get(v, "securityContext");
		ck_assert(json_is_false(json_object_get(sc, "allowPrivilegeEscalation")));
		ck_assert(json_is_true(json_object_get(sc, "readOnlyRootFilesystem")));
	}
	/*
	 * The sandbox container reads the answer to its agent phase's end (a run with a
	 * model) from a volume it cannot write, and is told where.
	 */
	{
		bool answer_mount = false, answer_env = false;

		json_array_foreach (json_object_get(c, "volumeMounts"), i, v)
			if (strcmp(json_string_value(json_object_get(v, "name")), "answer") == 0) {
				answer_mount = true;
				ck_assert(json_is_true(json_object_get(v, "readOnly")));
				ck_assert_str_eq(json_string_value(json_object_get(v, "mountPath")),
				    "/var/lib/ssebench/answer");
			}
		json_array_foreach (json_object_get(c, "env"), i, v)
			if (strcmp(json_string_value(json_object_get(v, "name")), "SSE_KEY_ANSWER") ==
			    0) {
				answer_env = true;
				ck_assert_str_eq(json_string_value(json_object_get(v, "value")),
				    "/var/lib/ssebench/answer");
			}
		ck_assert_int_eq(answer_mount, run.uses_model);
		ck_assert_int_eq(answer_env, run.uses_model);
	}
	/*
	 * The collect container reads the results and the archive and can write nothing but
	 * the answer (a run with a model): those two mounts read-only, the answer's its only
	 * writable one, DAC_READ_SEARCH its only capability; its readiness is the agent
	 * phase's end, for a run with a model only.
	 */
	c = json_array_get(json_object_get(p, "containers"), 1);
	ck_assert_str_eq(json_string_value(json_object_get(c, "name")), "collect");
	ck_assert_int_eq(json_array_size(json_object_get(p, "containers")), 2);
	ck_assert_int_eq(json_array_size(json_object_get(c, "volumeMounts")), run.uses_model ? 3 : 2);
	json_array_foreach (json_object_get(c, "volumeMounts"), i, v)
		ck_assert_int_eq(json_is_true(json_object_get(v, "readOnly")),
		    strcmp(json_string_value(json_object_get(v, "name")), "answer") != 0);
	ck_assert_int_eq(json_object_get(c, "readinessProbe") != NULL, run.uses_model);
	if (run.uses_model) {
		_cleanup_free_ char *probe = sb_json_dumps(json_object_get(c, "readinessProbe"),
		    JSON_COMPACT);

		ck_assert_str_eq(probe, "{\"exec\":{\"command\":[\"/usr/bin/test\",\"-e\","
		    "\"/collect/results/agent-phase-ended\"]},\"periodSeconds\":2,"
		    "\"timeoutSeconds\":5,\"successThreshold\":1,\"failureThreshold\":1}");
	}
	sc = json_object_get(c, "securityContext");
	ck_assert(json_is_false(json_object_get(sc, "allowPrivilegeEscalation")));
	ck_assert(json_is_true(json_object_get(sc, "readOnlyRootFilesystem")));
	caps = json_object_get(sc, "capabilities");
	ck_assert_int_eq(json_array_size(json_object_get(caps, "add")), 1);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(caps, "add"), 0)),
	    "DAC_READ_SEARCH");
	ck_assert_int_eq(json_integer_value(json_object_get(p, "terminationGracePeriodSeconds")),
	    K8S_GRACE_S);
	/* No ingress at all; egress open to 0.0.0.0/0 only when the run's egress is open. */
	np = json_object_get(item(list, "NetworkPolicy"), "spec");
	ck_assert_int_eq(json_array_size(json_object_get(np, "ingress")), 0);
	{
		_cleanup_free_ char *text = sb_json_dumps(np, JSON_COMPACT);

		ck_assert_int_eq(strstr(text, "\"0.0.0.0/0\"") != NULL, run.egress_open);
		ck_assert_int_eq(strstr(text, "169.254.0.0/16") != NULL, run.egress_open);
		ck_assert_int_eq(strstr(text, "ssebench-proxy") != NULL, run.uses_model);
	}
	/* The reference is in the Secret and mounted for a reference run only. */
	ck_assert_int_eq(json_object_get(json_object_get(item(list, "Secret"), "data"),
			     "patch.diff") != NULL, run.reference_patch != NULL);
	release(list, &run, &st);
}
END_TEST

/* The Secret's data is base64 of the secrets text: three lengths of padding. */
START_TEST(test_base64)
{
	static const struct {
		const char *in, *out;
	} cases[] = { { "M", "TQ==" }, { "Ma", "TWE=" }, { "Man", "TWFu" },
		{ "SSE_DAEMON_TOKEN=x\n", "U1NFX0RBRU1PTl9UT0tFTj14Cg==" } };
	struct k8s_run run = K8S_RUN_INIT;
	struct k8s_settings st = K8S_SETTINGS_INIT;
	json_t *list;

	fixture("reference", &run, &st);
	run.secrets = cases[_i].in;
	list = build(&run, &st);
	ck_assert_str_eq(json_string_value(json_object_get(
			     json_object_get(item(list, "Secret"), "data"), "run.env")),
	    cases[_i].out);
	release(list, &run, &st);
}
END_TEST

static const struct {
	const char *s;
	bool label, dns;
} values[] = {
	{ "", true, false },
	{ "a", true, true },
	{ "sse-0123456789abcdef", true, true },
	{ "cjson-CVE-2023-53154", true, false },
	{ "gpt-4o.mini_2", true, false },
	{ "-a", false, false },
	{ "a-", false, false },
	{ "a.", false, false },
	{ "ssebench.run=x", false, false },
	{ "a b", false, false },
	{ "a/b", false, false },
	{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", true, true },
	{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false, false },
};

START_TEST(test_validators)
{
	ck_assert_int_eq(k8s_label_value_valid(values[_i].s), values[_i].label);
	ck_assert_int_eq(k8s_dns_label_valid(values[_i].s), values[_i].dns);
}
END_TEST

/* CPUs as the API server writes them back (t0185 found "1.5" coming back as "1500m"). */
static const struct {
	const char *in, *out; /* out NULL: refused */
} cpus[] = {
	{ "2", "2" }, { "2.0", "2" }, { "1.5", "1500m" }, { "0.25", "250m" }, { "0.001", "1m" },
	{ "0.0001", "1m" }, { "1.0000", "1" }, { "16", "16" }, { "0", NULL }, { "0.000", NULL },
	{ "1e3", NULL }, { "-1", NULL }, { "1.", NULL }, { ".5", NULL }, { "", NULL },
};

START_TEST(test_cpus)
{
	struct k8s_run run = K8S_RUN_INIT;
	struct k8s_settings st = K8S_SETTINGS_INIT;
	struct sb_error *err = NULL;
	json_t *list = NULL, *c;

	fixture("dummy", &run, &st);
	run.cpus = cpus[_i].in;
	if (cpus[_i].out == NULL) {
		ck_assert_int_lt(k8s_run_manifests(&run, &st, &list, &err), 0);
		sb_error_release(&err);
	} else {
		list = build(&run, &st);
		c = json_array_get(json_object_get(pod(list), "containers"), 0);
		ck_assert_str_eq(json_string_value(json_object_get(json_object_get(json_object_get(
				     c, "resources"), "limits"), "cpu")), cpus[_i].out);
	}
	release(list, &run, &st);
}
END_TEST

/* Hostile values (k8s.c takes none of them as a name, a key or part of one). */
#define HOSTILE_TASK  "Not A DNS label/../x"
#define HOSTILE_MODEL "m\"odel\"\n}, \"kind\": \"Pod\", {\n\\u0000'"
#define HOSTILE_AGENT "ssebench.run=x"

struct hits {
	const char *needle;
	size_t n;	  /* strings that hold the needle */
	size_t exact;	  /* strings that are the needle, at an allowed place */
	bool bad;	  /* a string holds the needle and is not it, or is at another place */
	char where[512]; /* the first bad place */
};

/* Is the path one where the raw value belongs: an annotation (by key) or an env value? */
static bool
allowed(const char *path, const char *key)
{
	_cleanup_free_ char *ann = sb_xasprintf(".annotations.%s", key);
	size_t n = strlen(path), a = strlen(ann);

	return (n >= a && strcmp(path + n - a, ann) == 0) ||
	       (strstr(path, ".env[") != NULL && n >= 6 && strcmp(path + n - 6, ".value") == 0);
}

/* Walk v, checking every string (and every key) that holds h->needle. */
static void
walk(const json_t *v, const char *path, struct hits *h, const char *key)
{
	const char *k;
	json_t *m;
	size_t i;

	if (json_is_object(v)) {
		json_object_foreach ((json_t *)v, k, m) {
			_cleanup_free_ char *sub = sb_xasprintf("%s.%s", path, k);

			if (strstr(k, h->needle) != NULL && !h->bad) {
				h->bad = true;
				snprintf(h->where, sizeof(h->where), "key %s", sub);
			}
			walk(m, sub, h, key);
		}
	} else if (json_is_array(v)) {
		json_array_foreach (v, i, m) {
			_cleanup_free_ char *sub = sb_xasprintf("%s[%zu]", path, i);

			walk(m, sub, h, key);
		}
	} else if (json_is_string(v) && strstr(json_string_value(v), h->needle) != NULL) {
		h->n++;
		if (strcmp(json_string_value(v), h->needle) == 0 && allowed(path, key))
			h->exact++;
		else if (!h->bad) {
			h->bad = true;
			snprintf(h->where, sizeof(h->where), "%s", path);
		}
	}
}

/* Every metadata.name (and container and volume name) a DNS label; labels valid. */
static void
check_names(const json_t *v)
{
	const char *k;
	json_t *m;
	size_t i;

	if (json_is_array(v)) {
		json_array_foreach (v, i, m)
			check_names(m);
		return;
	}
	if (!json_is_object(v))
		return;
	json_object_foreach ((json_t *)v, k, m) {
		if (strcmp(k, "name") == 0 && json_is_string(m) &&
		    json_object_get(v, "value") == NULL && json_object_get(v, "port") == NULL)
			ck_assert_msg(k8s_dns_label_valid(json_string_value(m)),
			    "name '%s' is not a DNS label", json_string_value(m));
		if ((strcmp(k, "labels") == 0 || strcmp(k, "matchLabels") == 0) &&
		    json_is_object(m)) {
			const char *lk;
			json_t *lv;

			json_object_foreach (m, lk, lv)
				ck_assert_msg(k8s_label_value_valid(json_string_value(lv)),
				    "label %s='%s' is not a label value", lk, json_string_value(lv));
		}
		check_names(m);
	}
}

START_TEST(test_hostile)
{
	struct k8s_run run = K8S_RUN_INIT;
	struct k8s_settings st = K8S_SETTINGS_INIT;
	_cleanup_free_ char *long_id = sb_xmalloc(301);
	_cleanup_free_ char *env_model = sb_xasprintf("SSE_X_MODEL=%s", HOSTILE_MODEL);
	const struct {
		const char *needle, *key;
		size_t exact; /* 4 annotations (3 objects and the pod), plus env */
	} cases[] = {
		{ HOSTILE_TASK, "ssebench.task-id", 4 },
		{ HOSTILE_MODEL, "ssebench.model", 5 },
		{ HOSTILE_AGENT, "ssebench.agent", 4 },
		{ NULL, "ssebench.run", 4 },
	};
	json_t *list, *np_sel;

	memset(long_id, 'R', 300);
	long_id[300] = '\0';
	fixture("dummy", &run, &st);
	run.task = HOSTILE_TASK;
	run.model = HOSTILE_MODEL;
	run.agent = HOSTILE_AGENT;
	run.run_id = long_id;
	sb_argv_push(&run.env, env_model);
	list = build(&run, &st);
	check_names(list);
	for (size_t i = 0; i < SB_ARRAY_SIZE(cases); i++) {
		struct hits h = { .needle = cases[i].needle != NULL ? cases[i].needle : long_id };

		walk(list, "", &h, cases[i].key);
		ck_assert_msg(!h.bad, "'%s' found at %s", cases[i].key, h.where);
		ck_assert_uint_eq(h.exact, cases[i].exact);
		ck_assert_uint_eq(h.n, h.exact);
	}
	/* The policy selects the pod by the run's hashed label, not by the agent's "=x". */
	np_sel = json_object_get(json_object_get(json_object_get(item(list, "NetworkPolicy"),
							      "spec"), "podSelector"), "matchLabels");
	ck_assert_uint_eq(json_object_size(np_sel), 1);
	ck_assert_str_eq(json_string_value(json_object_get(np_sel, "ssebench.run")),
	    json_string_value(json_object_get(json_object_get(json_object_get(
		item(list, "Job"), "metadata"), "labels"), "ssebench.run")));
	ck_assert_ptr_null(json_object_get(np_sel, "x"));
	release(list, &run, &st);
}
END_TEST

/* Descriptions that cannot make valid objects: refused, nothing returned. */
enum bad { BAD_CPUS, BAD_MEMORY, BAD_ENV, BAD_ENV_NAME, BAD_SELECTOR, BAD_NO_PROXY, BAD_PORT,
	BAD_NAMESPACE, BAD_UTF8, BAD_SOURCE, BAD_SOURCE_ROOT, BAD_RUNTIME, BAD_TIMEOUT, BAD_SECCOMP,
	BAD_NO_CPUS, BAD_NO_MEMORY, BAD_ALIAS_IP, BAD_ALIAS_HOST, BAD_ALIAS_HALF, BAD_COUNT };

START_TEST(test_refused)
{
	struct k8s_run run = K8S_RUN_INIT;
	struct k8s_settings st = K8S_SETTINGS_INIT;
	struct sb_error *err = NULL;
	json_t *list = NULL;

	fixture("dummy", &run, &st);
	switch ((enum bad)_i) {
	case BAD_CPUS: run.cpus = "1e3"; break;
	case BAD_MEMORY: run.memory = "8Gi"; break;
	case BAD_ENV: sb_argv_push(&run.env, "NOEQUALS"); break;
	case BAD_ENV_NAME: sb_argv_push(&run.env, "A B=1"); break;
	case BAD_SELECTOR: sb_argv_push(&st.proxy_pods, "app=a b"); break;
	case BAD_NO_PROXY: sb_argv_release(&st.proxy_pods); break;
	case BAD_PORT: st.proxy_port = 70000; break;
	case BAD_ALIAS_IP: st.proxy_alias_ip = "10.0.0.1\n"; st.proxy_alias_host = "litellm"; break;
	case BAD_ALIAS_HOST: st.proxy_alias_ip = "10.0.0.1"; st.proxy_alias_host = "a b\n"; break;
	case BAD_ALIAS_HALF: st.proxy_alias_ip = "10.0.0.1"; break;
	case BAD_NAMESPACE: st.namespace = "Kube System"; break;
	case BAD_UTF8: run.model = "\xff\xfe"; break;
	case BAD_SOURCE: run.source = "/src/../etc"; break;
	case BAD_SOURCE_ROOT: run.source = "/"; break;
	case BAD_NO_CPUS: run.cpus = NULL; break;
	case BAD_NO_MEMORY: run.memory = NULL; break;
	case BAD_RUNTIME: run.runtime_class = "run sc"; break;
	case BAD_TIMEOUT: run.timeout = 0; break;
	case BAD_SECCOMP: st.seccomp_localhost = "../../etc/x.json"; break;
	case BAD_COUNT: break;
	}
	ck_assert_int_lt(k8s_run_manifests(&run, &st, &list, &err), 0);
	ck_assert_ptr_null(list);
	ck_assert_int_eq(sb_error_code(err), EINVAL);
	sb_error_release(&err);
	release(NULL, &run, &st);
}
END_TEST

/* A node's seccomp profile, when the settings name one, replaces RuntimeDefault. */
START_TEST(test_seccomp_localhost)
{
	struct k8s_run run = K8S_RUN_INIT;
	struct k8s_settings st = K8S_SETTINGS_INIT;
	json_t *list, *sp;

	fixture("dummy", &run, &st);
	st.seccomp_localhost = "ssebench/run.json";
	list = build(&run, &st);
	sp = json_object_get(json_object_get(pod(list), "securityContext"), "seccompProfile");
	ck_assert_str_eq(json_string_value(json_object_get(sp, "type")), "Localhost");
	ck_assert_str_eq(json_string_value(json_object_get(sp, "localhostProfile")),
	    "ssebench/run.json");
	release(list, &run, &st);
}
END_TEST

/*
 * An eviction is the agent's doing when the kubelet names one of its volumes or the pod's
 * storage in all; the harness's volumes, other reasons and no message are not.
 */
static const struct {
	const char *msg;
	bool agents;
} evictions[] = {
	{ "Usage of EmptyDir volume \"home\" exceeds the limit \"256Mi\". ", true },
	{ "Usage of EmptyDir volume \"tmp\" exceeds the limit \"8Gi\". ", true },
	{ "Usage of EmptyDir volume \"vartmp\" exceeds the limit \"8Gi\". ", true },
	{ "Usage of EmptyDir volume \"archive\" exceeds the limit \"8Gi\". ", true },
	{ "Usage of EmptyDir volume \"source\" exceeds the limit \"8Gi\". ", true },
	{ "Pod ephemeral local storage usage exceeds the total limit of containers 16Gi. ", true },
	{ "Usage of EmptyDir volume \"runner\" exceeds the limit \"8Gi\". ", false },
	{ "Usage of EmptyDir volume \"results\" exceeds the limit \"8Gi\". ", false },
	{ "Usage of EmptyDir volume \"run\" exceeds the limit \"16Mi\". ", false },
	{ "Usage of EmptyDir volume \"home", false },
	{ "The node was low on resource: memory. ", false },
	{ "Container sandbox exceeded its local ephemeral storage limit \"16Gi\". ", false },
	{ "", false },
	{ NULL, false },
};

START_TEST(test_eviction)
{
	ck_assert_int_eq(k8s_eviction_is_agents(evictions[_i].msg), evictions[_i].agents);
}
END_TEST

/* The proxy as a pod reaches it: SSEBENCH_K8S_PROXY_URL, _SELECTOR and _PORT. */
static const struct {
	const char *url, *selector, *port;
	int ok;
	unsigned want_port;
	size_t labels;
} proxies[] = {
	{ "http://litellm.ssebench.svc:4000", "app.kubernetes.io/name=litellm", NULL, 1, 4000, 1 },
	{ "http://litellm.ssebench.svc:4000/", "a=b,c=d", NULL, 1, 4000, 2 },
	{ "http://litellm/v1?x=1#y", "a=b", NULL, 1, 80, 1 },
	{ "http://litellm", "a=b", NULL, 1, 80, 1 },
	{ "https://proxy.example.org/v1", "a=b", NULL, 1, 443, 1 },
	{ "http://[fd00::1]:8080/x", "a=b", NULL, 1, 8080, 1 },
	{ "http://10.0.0.5:4000", "a=b", "4001", 1, 4001, 1 },
	{ "http://10.0.0.5:65535", "a=b", NULL, 1, 65535, 1 },
	{ "ftp://litellm:4000", "a=b", NULL, 0, 0, 0 },
	{ "litellm:4000", "a=b", NULL, 0, 0, 0 },
	{ "http://", "a=b", NULL, 0, 0, 0 },
	{ "http://litellm:4000\nSSE_DAEMON_TOKEN=x", "a=b", NULL, 0, 0, 0 },
	{ "http://litellm :4000", "a=b", NULL, 0, 0, 0 },
	{ "http://litellm:\x7f", "a=b", NULL, 0, 0, 0 },
	{ "http://litellm:99999", "a=b", NULL, 0, 0, 0 },
	{ "http://litellm:0400", "a=b", NULL, 0, 0, 0 },
	{ "http://litellm:", "a=b", NULL, 0, 0, 0 },
	{ "http://litellm:4a", "a=b", NULL, 0, 0, 0 },
	{ "http://[fd00::1", "a=b", NULL, 0, 0, 0 },
	{ "http://litellm:4000", "a=b", "0", 0, 0, 0 },
	{ "http://litellm:4000", "a=b", "70000", 0, 0, 0 },
	{ "http://litellm:4000", "a=b", "4000x", 0, 0, 0 },
	{ "http://litellm:4000", "a=b", "", 0, 0, 0 },
	{ "http://litellm:4000", "", NULL, 0, 0, 0 },
	{ "http://litellm:4000", "a", NULL, 0, 0, 0 },
	{ "http://litellm:4000", "a=b c", NULL, 0, 0, 0 },
	{ "http://litellm:4000", "a=b,\"x\"=y", NULL, 0, 0, 0 },
	{ "http://litellm:4000", "a=b,c=d}", NULL, 0, 0, 0 },
	{ "http://litellm:4000", "a=b,a=c", NULL, 0, 0, 0 },
	{ "http://litellm:4000", "a=b,ab=c", NULL, 1, 4000, 2 },
	{ "http:///v1", "a=b", NULL, 0, 0, 0 },
	{ "http://:4000", "a=b", NULL, 0, 0, 0 },
	{ "http://?x", "a=b", NULL, 0, 0, 0 },
	{ "http://user:pw@litellm:4000", "a=b", NULL, 0, 0, 0 },
	{ "http://litellm:99999", "a=b", "4000", 0, 0, 0 },
	{ "http://litellm:4a", "a=b", "4000", 0, 0, 0 },
	{ "http://[evil.example.org]:4000", "a=b", NULL, 0, 0, 0 },
	{ "http://[]:80", "a=b", NULL, 0, 0, 0 },
	{ "http://[fd00::1]junk", "a=b", NULL, 0, 0, 0 },
	{ "http://[fd00::1]", "a=b", NULL, 1, 80, 1 },
};

START_TEST(test_proxy_settings)
{
	struct k8s_settings st = K8S_SETTINGS_INIT;
	struct sb_error *err = NULL;
	int rc = k8s_proxy_settings(proxies[_i].url, proxies[_i].selector, proxies[_i].port, &st,
	    &err);

	ck_assert_msg((rc == 0) == proxies[_i].ok, "%s %s %s: %s", proxies[_i].url,
	    proxies[_i].selector, proxies[_i].port ? proxies[_i].port : "-",
	    err != NULL ? sb_error_message(err) : "accepted");
	if (rc == 0) {
		ck_assert_uint_eq(st.proxy_port, proxies[_i].want_port);
		ck_assert_uint_eq(st.proxy_pods.n, proxies[_i].labels);
	} else {
		ck_assert_int_eq(sb_error_code(err), EINVAL);
		ck_assert_uint_eq(st.proxy_pods.n, 0);
		ck_assert_ptr_nonnull(strstr(sb_error_message(err), "SSEBENCH_K8S_PROXY_"));
	}
	sb_error_release(&err);
	sb_argv_release(&st.proxy_pods);
}
END_TEST

/* The proxy's host for a restricted run, which resolves no name: an address or a Service. */
static const struct {
	const char *url, *host, *service; /* host NULL and ok: an address */
	int ok;
} services[] = {
	{ "http://10.96.0.10:4000", NULL, NULL, 1 },
	{ "http://[fd00::10]:4000", NULL, NULL, 1 },
	{ "http://litellm:4000", "litellm", "litellm", 1 },
	{ "http://litellm.ssebench:4000/v1", "litellm.ssebench", "litellm", 1 },
	{ "http://litellm.ssebench.svc:4000", "litellm.ssebench.svc", "litellm", 1 },
	{ "https://litellm.ssebench.svc.cluster.local", "litellm.ssebench.svc.cluster.local",
	    "litellm", 1 },
	{ "http://litellm.other.svc:4000", NULL, NULL, 0 },
	{ "http://litellm.ssebench.pod:4000", NULL, NULL, 0 },
	{ "http://proxy.example.org:4000", NULL, NULL, 0 },
	{ "http://LiteLLM:4000", NULL, NULL, 0 },
	{ "http://lite_llm:4000", NULL, NULL, 0 },
	{ "http://litellm..ssebench:4000", NULL, NULL, 0 },
};

START_TEST(test_proxy_service)
{
	struct sb_error *err = NULL;
	char *host = NULL, *service = NULL;
	int rc = k8s_proxy_service(services[_i].url, "ssebench", &host, &service, &err);

	ck_assert_msg((rc == 0) == services[_i].ok, "%s: %s", services[_i].url,
	    err != NULL ? sb_error_message(err) : "accepted");
	if (rc == 0) {
		ck_assert_pstr_eq(host, services[_i].host);
		ck_assert_pstr_eq(service, services[_i].service);
	} else {
		ck_assert_ptr_null(host);
		ck_assert_ptr_null(service);
		ck_assert_int_eq(sb_error_code(err), EINVAL);
	}
	free(host);
	free(service);
	sb_error_release(&err);
}
END_TEST

/*
 * A restricted run resolves no name: no DNS rule in its policy, no resolver but its own
 * loopback; the proxy's Service is in its /etc/hosts. An open run keeps the cluster's DNS.
 */
START_TEST(test_restricted_dns)
{
	struct k8s_run run = K8S_RUN_INIT;
	struct k8s_settings st = K8S_SETTINGS_INIT;
	json_t *list, *p;
	_cleanup_free_ char *np = NULL, *hosts = NULL, *dns = NULL;

	fixture(_i == 0 ? "dummy" : "open", &run, &st);
	st.proxy_alias_host = "litellm.ssebench.svc";
	st.proxy_alias_ip = "10.96.0.10";
	list = build(&run, &st);
	p = pod(list);
	np = sb_json_dumps(json_object_get(item(list, "NetworkPolicy"), "spec"), JSON_COMPACT);
	ck_assert_int_eq(strstr(np, "kube-dns") != NULL, run.egress_open);
	if (run.egress_open) {
		ck_assert_ptr_null(json_object_get(p, "dnsPolicy"));
		ck_assert_ptr_null(json_object_get(p, "hostAliases"));
		ck_assert_ptr_null(json_object_get(p, "dnsConfig"));
	} else {
		hosts = sb_json_dumps(json_object_get(p, "hostAliases"), JSON_COMPACT);
		dns = sb_json_dumps(json_object_get(p, "dnsConfig"), JSON_COMPACT);
		ck_assert_str_eq(json_string_value(json_object_get(p, "dnsPolicy")), "None");
		ck_assert_str_eq(dns, "{\"nameservers\":[\"127.0.0.1\"],\"options\":[{\"name\":"
		    "\"timeout\",\"value\":\"1\"},{\"name\":\"attempts\",\"value\":\"1\"}]}");
		ck_assert_str_eq(hosts, "[{\"ip\":\"10.96.0.10\",\"hostnames\":"
		    "[\"litellm.ssebench.svc\"]}]");
	}
	release(list, &run, &st);
}
END_TEST

/*
 * A restricted run probes its own node too, from the pod's status.hostIP, as SSE_NET_NODE:
 * never as SSE_NET_GATEWAY, the address the settings name (a node address the pods have no
 * route to is silent whether or not a policy holds).
 */
static unsigned
node_env(json_t *list, const char *want_name)
{
	json_t *c = json_array_get(json_object_get(pod(list), "containers"), 0), *v;
	unsigned n = 0;
	size_t i;

	json_array_foreach (json_object_get(c, "env"), i, v) {
		_cleanup_free_ char *text = sb_json_dumps(v, JSON_COMPACT);
		_cleanup_free_ char *want = sb_xasprintf("{\"name\":\"%s\",\"valueFrom\":"
		    "{\"fieldRef\":{\"fieldPath\":\"status.hostIP\"}}}", want_name);

		n += json_object_get(v, "valueFrom") != NULL;
		if (json_object_get(v, "valueFrom") != NULL)
			ck_assert_str_eq(text, want);
	}
	return n;
}

START_TEST(test_probe_node)
{
	struct k8s_run run = K8S_RUN_INIT;
	struct k8s_settings st = K8S_SETTINGS_INIT;
	struct sb_error *err = NULL;
	json_t *list = NULL;

	fixture("dummy", &run, &st);
	run.probe_node = true;
	list = build(&run, &st);
	ck_assert_uint_eq(node_env(list, "SSE_NET_NODE"), 1);
	json_decref(list);
	sb_argv_push(&run.env, "SSE_NET_GATEWAY=10.244.0.1");
	list = build(&run, &st);
	ck_assert_uint_eq(node_env(list, "SSE_NET_NODE"), 1);
	json_decref(list);
	list = NULL;
	/* An address given as well as taken from the node is refused. */
	sb_argv_push(&run.env, "SSE_NET_NODE=10.0.0.1");
	ck_assert_int_lt(k8s_run_manifests(&run, &st, &list, &err), 0);
	ck_assert_int_eq(sb_error_code(err), EINVAL);
	sb_error_release(&err);
	release(NULL, &run, &st);
}
END_TEST

static Suite *
k8s_suite(void)
{
	Suite *s = suite_create("k8s");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_golden, 0, 3);
	tcase_add_loop_test(tc, test_properties, 0, 3);
	tcase_add_loop_test(tc, test_base64, 0, 4);
	tcase_add_loop_test(tc, test_validators, 0, (int)SB_ARRAY_SIZE(values));
	tcase_add_loop_test(tc, test_cpus, 0, (int)SB_ARRAY_SIZE(cpus));
	tcase_add_test(tc, test_hostile);
	tcase_add_loop_test(tc, test_refused, 0, BAD_COUNT);
	tcase_add_test(tc, test_seccomp_localhost);
	tcase_add_loop_test(tc, test_eviction, 0, (int)SB_ARRAY_SIZE(evictions));
	tcase_add_loop_test(tc, test_proxy_settings, 0, (int)SB_ARRAY_SIZE(proxies));
	tcase_add_loop_test(tc, test_proxy_service, 0, (int)SB_ARRAY_SIZE(services));
	tcase_add_loop_test(tc, test_restricted_dns, 0, 2);
	tcase_add_test(tc, test_probe_node);
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(k8s_suite)

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd-runs-k8s.c: `ssebench runs list|inspect|logs|stop|remove|exec` on the Kubernetes
 * backend (docs/kubernetes.md, "The backend"). A run is its Job, NetworkPolicy and Secret,
 * found by the label ssebench.run (k8s.h: k8s_label), and told apart by the annotation of
 * the same key, which holds the run id itself. Exit 3: no such run.
 */
#include "config.h"

#include <getopt.h>
#include <string.h>
#include <unistd.h>

#include "sb/argv.h"
#include "sb/exit.h"
#include "sb/json.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/task.h"

#include "cli.h"
#include "k8s.h"
#include "kubectl.h"
#include "run.h"

static const char *
annotation(const json_t *job, const char *key)
{
	return json_string_value(json_object_get(
	    json_object_get(json_object_get(job, "metadata"), "annotations"), key));
}

/* running, succeeded, failed (and why: DeadlineExceeded, ...), or pending. */
static char *
job_state(const json_t *job)
{
	const json_t *st = json_object_get(job, "status"), *c;
	size_t i;

	json_array_foreach (json_object_get(st, "conditions"), i, c) {
		const char *type = json_string_value(json_object_get(c, "type"));
		const char *why = json_string_value(json_object_get(c, "reason"));

		if (type != NULL && strcmp(type, "Failed") == 0)
			return sb_xasprintf("failed%s%s", why ? ": " : "", why ? why : "");
		if (type != NULL && strcmp(type, "Complete") == 0)
			return sb_xstrdup("succeeded");
	}
	if (json_integer_value(json_object_get(st, "active")) > 0)
		return sb_xstrdup("running");
	return sb_xstrdup("pending");
}

/* The row of a Job: what `runs list --json` gives for it. */
static json_t *
job_row(const json_t *job)
{
	_cleanup_free_ char *state = job_state(job);

	return json_pack("{s:o, s:o, s:s, s:o, s:o, s:o, s:o, s:o}", "run_id",
	    sb_json_string_or_null(annotation(job, K8S_LABEL_RUN)), "job",
	    sb_json_string_or_null(json_string_value(
		json_object_get(json_object_get(job, "metadata"), "name"))),
	    "state", state, "task", sb_json_string_or_null(annotation(job, "ssebench.task-id")),
	    "agent", sb_json_string_or_null(annotation(job, "ssebench.agent")), "model",
	    sb_json_string_or_null(annotation(job, "ssebench.model")), "egress",
	    sb_json_string_or_null(annotation(job, "ssebench.egress")), "created",
	    sb_json_string_or_null(json_string_value(json_object_get(
		json_object_get(job, "metadata"), "creationTimestamp"))));
}

static int
settings(struct kube *k)
{
	struct sb_error *err = NULL;

	if (kube_settings(k, &err) < 0) {
		int rc = cli_fail("%s", sb_error_message(err));

		sb_error_release(&err);
		return rc;
	}
	return 0;
}

static int
k8s_list(const struct cli_command *cmd, int argc, char **argv)
{
	struct sb_error *err = NULL;
	struct kube k;
	bool as_json = false;
	json_t *jobs = NULL, *rows = json_array(), *j;
	size_t i;
	int rc;

	if ((rc = cli_bare_command(cmd, argc, argv, &as_json)) >= 0 || (rc = settings(&k)) != 0)
		return json_decref(rows), rc;
	if (kube_jobs(&k, NULL, &jobs, &err) < 0) {
		rc = cli_fail("%s", sb_error_message(err));
		sb_error_release(&err);
		return json_decref(rows), rc;
	}
	json_array_foreach (jobs, i, j)
		json_array_append_new(rows, job_row(j));
	json_decref(jobs);
	if (as_json) {
		json_t *out = json_pack("{s:s, s:s, s:b, s:o}", "backend", "kubernetes",
		    "namespace", k.namespace, "supports_exec", 1, "runs", rows);

		cli_print_json(out);
		json_decref(out);
		return SB_EXIT_OK;
	}
	printf("%-28s %-20s %-24s %-30s %-12s %s\n", "RUN", "JOB", "STATE", "TASK", "AGENT",
	    "MODEL");
	json_array_foreach (rows, i, j)
		printf("%-28s %-20s %-24s %-30s %-12s %s\n",
		    cli_safe(json_string_value(json_object_get(j, "run_id")) ?: "?"),
		    cli_safe(json_string_value(json_object_get(j, "job")) ?: "?"),
		    cli_safe(json_string_value(json_object_get(j, "state"))),
		    cli_safe(json_string_value(json_object_get(j, "task")) ?: "?"),
		    cli_safe(json_string_value(json_object_get(j, "agent")) ?: "?"),
		    cli_safe(json_string_value(json_object_get(j, "model")) ?: "?"));
	json_decref(rows);
	return SB_EXIT_OK;
}

/*
 * The Job of run id (*ret: a new reference), or an exit status: 3 when there is none. The
 * label may be a hash (k8s_label); the annotation must be the id itself.
 */
static int
find_job(const struct kube *k, const char *id, json_t **ret)
{
	_cleanup_free_ char *label = NULL;
	struct sb_error *err = NULL;
	json_t *jobs = NULL, *j;
	size_t i;

	if (!sb_run_id_valid(id))
		return cli_fail("'%s' is not a run id", cli_safe(id));
	label = k8s_label(id);
	if (kube_jobs(k, label, &jobs, &err) < 0) {
		int rc = cli_fail("%s", sb_error_message(err));

		sb_error_release(&err);
		return rc;
	}
	json_array_foreach (jobs, i, j) {
		const char *a = annotation(j, K8S_LABEL_RUN);

		if (a != NULL && strcmp(a, id) == 0) {
			*ret = json_incref(j);
			json_decref(jobs);
			return 0;
		}
	}
	json_decref(jobs);
	return cli_fail("no run '%s' in namespace %s", id, k->namespace), SB_EXIT_RUN_NOT_FOUND;
}

static const char *
job_name(const json_t *job)
{
	return json_string_value(json_object_get(json_object_get(job, "metadata"), "name"));
}

/* kubectl args on the terminal; its exit status. */
static int
inherit(const struct kube *k, const struct sb_argv *a, bool with_stdin)
{
	struct sb_error *err = NULL;
	int code = 0;

	if (kube_run_inherit(k, a, with_stdin, &code, &err) < 0) {
		code = cli_fail("%s", sb_error_message(err));
		sb_error_release(&err);
	}
	return code;
}

/*
 * `runs remove`: the Job, NetworkPolicy and Secret of the run, by the name its id gives
 * (k8s_run_name), whether or not its Job is still there (runs stop deletes it; a killed
 * CLI leaves the other two). Exit 3 when none of them was there.
 */
static int
k8s_remove(const struct kube *k, const char *id)
{
	_cleanup_free_ char *name = NULL;
	struct sb_error *err = NULL;
	bool deleted = false, exists = true;
	int rc = 0;

	if (!sb_run_id_valid(id))
		return cli_fail("'%s' is not a run id", cli_safe(id));
	name = k8s_run_name(id);
	if (kube_delete_run_counted(k, name, &deleted, &err) < 0 ||
	    kube_job_exists(k, name, &exists, &err) < 0)
		rc = cli_fail("%s", sb_error_message(err));
	else if (exists)
		rc = cli_fail("the run '%s' still exists after removal", id);
	else if (!deleted)
		rc = (cli_fail("no run '%s' in namespace %s", id, k->namespace),
		    SB_EXIT_RUN_NOT_FOUND);
	sb_error_release(&err);
	return rc;
}

/*
 * The single-run commands: options, then RUN_ID (and for exec, -- COMMAND...). Exec runs
 * in the sandbox container, argv only, as kubectl exec runs it.
 */
static int
k8s_one(const struct cli_command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = { { "json", no_argument, NULL, 'j' },
		{ "follow", no_argument, NULL, 'f' }, { "grace", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	const char *verb = cmd->name;
	bool as_json = false, follow = false;
	uint64_t grace = 20;
	struct sb_error *err = NULL;
	struct kube k;
	json_t *job = NULL;
	int c, rc = 0;

	while ((c = cli_getopt(cmd, argc, argv, "+h", longopts, &rc)) != -1) {
		if (c == -2)
			return rc;
		if (c == 'j')
			as_json = true;
		if (c == 'f')
			follow = true;
		if (c == 'g' && sb_parse_u64(optarg, 1, 3600, &grace, NULL) < 0)
			return cli_usage_error(cmd, "--grace must be 1 to 3600 seconds");
	}
	if (optind >= argc)
		return cli_usage_error(cmd, "expected RUN_ID");
	if ((rc = settings(&k)) != 0)
		return rc;
	if (strcmp(verb, "remove") == 0)
		return k8s_remove(&k, argv[optind]);
	if ((rc = find_job(&k, argv[optind++], &job)) != 0)
		return rc;
	if (strcmp(verb, "inspect") == 0) {
		json_t *row = job_row(job);

		if (as_json) {
			cli_print_json(row);
		} else {
			const char *key;
			json_t *v;

			json_object_foreach (row, key, v)
				printf("%-14s %s\n", key,
				    cli_safe(json_is_string(v) ? json_string_value(v) : "-"));
		}
		json_decref(row);
	} else if (strcmp(verb, "logs") == 0) {
		sb_argv_push(&a, "logs");
		if (follow)
			sb_argv_push(&a, "--follow");
		sb_argv_pushf(&a, "job/%s", job_name(job));
		sb_argv_pushl(&a, "-c", "sandbox", NULL);
		rc = inherit(&k, &a, false);
	} else if (strcmp(verb, "stop") == 0) {
		if (kube_stop_job(&k, job_name(job), grace, &err) < 0)
			rc = cli_fail("%s", sb_error_message(err));
	} else {
		if (optind < argc && strcmp(argv[optind], "--") == 0)
			optind++;
		if (optind >= argc) {
			json_decref(job);
			return cli_usage_error(cmd, "no command to run (RUN_ID -- COMMAND [ARG...])");
		}
		sb_argv_pushl(&a, "exec", "-i", NULL);
		if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
			sb_argv_push(&a, "-t");
		sb_argv_pushf(&a, "job/%s", job_name(job));
		sb_argv_pushl(&a, "-c", "sandbox", "--", NULL);
		for (int i = optind; i < argc; i++)
			sb_argv_push(&a, argv[i]);
		rc = inherit(&k, &a, true);
	}
	sb_error_release(&err);
	json_decref(job);
	return rc;
}

int
cmd_runs_k8s(const struct cli_command *cmd, int argc, char **argv)
{
	return strcmp(cmd->name, "list") == 0 ? k8s_list(cmd, argc, argv)
					      : k8s_one(cmd, argc, argv);
}

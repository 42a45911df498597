/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd-runs.c: `ssebench runs list|inspect|logs|stop|remove|results` (docs/upstream.md,
 * "Command line").
 *
 * Runs are found by their containers' label ssebench.run=<run id>; `results` reads the
 * summaries under the results directory and needs no Docker. Exit 3: no such run;
 * exit 4: the id names runs of different task/model/agent.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/exit.h"
#include "sb/fs.h"
#include "sb/json.h"
#include "sb/limits.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/parse.h"

#include "cgroup.h"
#include "cli.h"
#include "containers.h"
#include "disk.h"
#include "docker.h"
#include "network.h"
#include "run.h"

/* docker inspect of every container with a label (optionally =value), as a JSON array. */
static json_t *
inspect_labelled(const char *label_filter, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_argv_ struct sb_argv ids = SB_ARGV_INIT;
	_cleanup_free_ char *out = NULL, *json = NULL;
	json_t *arr = NULL;
	char *save = NULL;

	sb_argv_pushl(&a, "ps", "-a", "-q", "--no-trunc", "--filter", NULL);
	sb_argv_pushf(&a, "label=%s", label_filter);
	if (docker_output(&a, &out, err) != 0) {
		_cleanup_free_ char *problem = cli_engine_problem();

		sb_error_release(err);
		return sb_error_set(err, EIO, "%s", problem ? problem : "docker ps failed"), NULL;
	}
	sb_argv_pushl(&ids, "inspect", NULL);
	for (char *id = strtok_r(out, "\n", &save); id; id = strtok_r(NULL, "\n", &save))
		sb_argv_push(&ids, id);
	if (ids.n == 1)
		return json_array();
	if (docker_output(&ids, &json, err) != 0 ||
	    sb_json_load(json, strlen(json), SB_JSON_FILE_MAX, &arr, err) < 0 || !json_is_array(arr)) {
		json_decref(arr);
		return sb_error_set(err, EIO, "docker inspect failed"), NULL;
	}
	return arr;
}


/* The containers of one run, or an exit status (3 none, 4 ambiguous). */
static int
find_run(const char *run_id, json_t **ret, struct sb_error **err)
{
	_cleanup_free_ char *filter = NULL;
	json_t *arr, *c;
	const char *key0 = NULL;
	size_t i;

	if (!sb_run_id_valid(run_id))
		return cli_fail("'%s' is not a run id", run_id), SB_EXIT_FAILURE;
	filter = sb_xasprintf("ssebench.run=%s", run_id);
	arr = inspect_labelled(filter, err);
	if (arr == NULL)
		return cli_fail("%s", sb_error_message(*err)), SB_EXIT_FAILURE;
	if (json_array_size(arr) == 0) {
		json_decref(arr);
		return cli_fail("no run '%s'", run_id), SB_EXIT_RUN_NOT_FOUND;
	}
	json_array_foreach (arr, i, c) {
		_cleanup_free_ char *key = sb_xasprintf("%s/%s/%s", container_label(c, "ssebench.task-id") ?: "",
		    container_label(c, "ssebench.model") ?: "", container_label(c, "ssebench.agent") ?: "");

		if (key0 == NULL)
			key0 = json_string_value(json_object_get(c, "Id"));
		if (i > 0) {
			json_t *c0 = json_array_get(arr, 0);
			_cleanup_free_ char *k0 = sb_xasprintf("%s/%s/%s",
			    container_label(c0, "ssebench.task-id") ?: "", container_label(c0, "ssebench.model") ?: "",
			    container_label(c0, "ssebench.agent") ?: "");

			if (strcmp(k0, key) != 0) {
				json_decref(arr);
				return cli_fail("the run id '%s' names runs of several tasks/models/agents",
					   run_id),
				       SB_EXIT_RUN_AMBIGUOUS;
			}
		}
	}
	*ret = arr;
	return 0;
}

static int
runs_list(const struct cli_command *cmd, int argc, char **argv)
{
	struct sb_error *err = NULL;
	bool as_json = false;
	json_t *arr, *runs, *e;
	size_t i;
	int rc;

	if ((rc = cli_bare_command(cmd, argc, argv, &as_json)) >= 0)
		return rc;
	arr = inspect_labelled("ssebench.run", &err);
	if (arr == NULL) {
		rc = cli_fail("%s", sb_error_message(err));
		sb_error_release(&err);
		return rc;
	}
	runs = containers_entries(arr);
	json_decref(arr);
	if (as_json) {
		json_t *out = json_pack("{s:s, s:b, s:O}", "backend", "docker", "supports_exec", 1,
		    "runs", runs);

		cli_print_json(out);
		json_decref(out);
	} else {
		printf("%-28s %-13s %-9s %-5s %-30s %-12s %s\n", "RUN", "CONTAINER", "STATE", "EXIT",
		    "TASK", "AGENT", "MODEL");
		json_array_foreach (runs, i, e)
			printf("%-28s %-13s %-9s %-5lld %-30s %-12s %s\n",
			    cli_safe(json_string_value(json_object_get(e, "run_id")) ?: "?"),
			    json_string_value(json_object_get(e, "role")) != NULL
				? (strcmp(json_string_value(json_object_get(e, "role")), "task") == 0
					  ? "sidecar task"
					  : "sidecar agent")
				: "sandbox",
			    cli_safe(json_string_value(json_object_get(e, "state"))),
			    (long long)json_integer_value(json_object_get(e, "exit_code")),
			    cli_safe(json_string_value(json_object_get(e, "task")) ?: "?"),
			    cli_safe(json_string_value(json_object_get(e, "agent")) ?: "?"),
			    cli_safe(json_string_value(json_object_get(e, "model")) ?: "?"));
	}
	json_decref(runs);
	return SB_EXIT_OK;
}

/*
 * How the single-run commands start: their options (RUN_ID, and for some a flag), then the
 * run's containers (find_run). -1 with the exit status in *ret_rc if either fails.
 */
static int
one_run(const struct cli_command *cmd, int argc, char **argv, const struct option *longopts,
    bool *flag, uint64_t *grace, const char **ret_id, json_t **ret_arr, int *ret_rc)
{
	struct sb_error *err = NULL;
	int c, rc = 0;

	while ((c = cli_getopt(cmd, argc, argv, "+h", longopts, &rc)) != -1) {
		if (c == -2) {
			*ret_rc = rc;
			return -1;
		}
		if (c == 'j' || c == 'f')
			*flag = true;
		if (c == 'g' && sb_parse_u64(optarg, 0, 3600, grace, NULL) < 0) {
			*ret_rc = cli_usage_error(cmd, "--grace must be 0 to 3600 seconds");
			return -1;
		}
	}
	if (argc - optind != 1) {
		*ret_rc = cli_usage_error(cmd, "expected one RUN_ID");
		return -1;
	}
	*ret_id = argv[optind];
	*ret_rc = find_run(*ret_id, ret_arr, &err);
	sb_error_release(&err);
	return *ret_rc != 0 ? -1 : 0;
}

/*
 * A kept run that has been graded has its summary.json in its results directory (the label
 * the CLI put on its containers): its answer-seeking flags go with the container's entry.
 */
static void
run_attach_flags(json_t *runs)
{
	_cleanup_free_ char *root = realpath(results_root(), NULL);
	json_t *e;
	size_t i;

	json_array_foreach (runs, i, e) {
		const char *dir = json_string_value(json_object_get(e, "results_dir"));
		_cleanup_free_ char *real = dir != NULL ? realpath(dir, NULL) : NULL;
		_cleanup_close_ int fd = -1;
		size_t n = root != NULL ? strlen(root) : 0;
		json_t *s = NULL;

		/* The label is the container's, which its image may have set: only a directory
		 * below the results directory is read. */
		if (real == NULL || root == NULL || strncmp(real, root, n) != 0 || real[n] != '/')
			continue;
		fd = sb_open_dir(real, NULL);
		if (fd < 0 || sb_json_load_file_at(fd, "summary.json", SB_JSON_FILE_MAX, &s, NULL) < 0)
			continue;
		if (json_is_array(json_object_get(s, "flags")) &&
		    json_is_integer(json_object_get(s, "flags_total"))) {
			json_object_set(e, "flags", json_object_get(s, "flags"));
			json_object_set(e, "flags_total", json_object_get(s, "flags_total"));
		}
		json_decref(s);
	}
}

static int
runs_inspect(const struct cli_command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = { { "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	const char *id = NULL;
	bool as_json = false;
	json_t *arr = NULL, *runs;
	int rc;

	if (one_run(cmd, argc, argv, longopts, &as_json, NULL, &id, &arr, &rc) < 0)
		return rc;
	runs = containers_entries(arr);
	json_decref(arr);
	run_attach_flags(runs);
	if (as_json) {
		cli_print_json(json_array_size(runs) == 1 ? json_array_get(runs, 0) : runs);
	} else {
		json_t *e;
		size_t i;

		/* One block per container: a sidecar run has two (task and agent). */
		json_array_foreach (runs, i, e) {
			const char *k;
			json_t *v;

			if (i > 0)
				printf("\n");
			json_object_foreach (e, k, v) {
				_cleanup_free_ char *s = NULL;

				if (strcmp(k, "flags") == 0 || strcmp(k, "flags_total") == 0)
					continue;
				s = sb_json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
				printf("%-14s %s\n", cli_safe(k), cli_safe(s));
			}
			run_print_flags(stdout, json_object_get(e, "flags"),
			    json_integer_value(json_object_get(e, "flags_total")));
		}
	}
	json_decref(runs);
	return SB_EXIT_OK;
}

/* docker <verb> ... on each container of the run, streaming output. */
static int
on_containers(json_t *arr, const char *verb, const char *const *extra, bool follow)
{
	json_t *c;
	size_t i;
	int worst = 0;

	json_array_foreach (arr, i, c) {
		_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
		struct sb_cmd_result r;

		sb_argv_push(&a, verb);
		sb_argv_pushv(&a, extra);
		sb_argv_push(&a, json_string_value(json_object_get(c, "Id")));
		if (docker_run(&a, DOCKER_INHERIT, -1, NULL, 0, 0, &r, NULL) < 0)
			return SB_EXIT_FAILURE;
		if (r.exit_code != 0)
			worst = SB_EXIT_FAILURE;
		sb_cmd_result_release(&r);
		(void)follow;
	}
	return worst;
}

static int
runs_logs(const struct cli_command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = { { "follow", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	static const char *const follow[] = { "--follow", NULL }, *const none[] = { NULL };
	const char *id = NULL;
	bool f = false;
	json_t *arr = NULL;
	int rc;

	if (one_run(cmd, argc, argv, longopts, &f, NULL, &id, &arr, &rc) < 0)
		return rc;
	rc = on_containers(arr, "logs", f ? follow : none, f);
	json_decref(arr);
	return rc;
}

static int
runs_stop(const struct cli_command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = { { "grace", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	uint64_t grace = 20;
	const char *id = NULL;
	bool unused = false;
	json_t *arr = NULL;
	char g[32];
	int rc;

	if (one_run(cmd, argc, argv, longopts, &unused, &grace, &id, &arr, &rc) < 0)
		return rc;
	snprintf(g, sizeof(g), "%llu", (unsigned long long)grace);
	{
		const char *const extra[] = { "--time", g, NULL };

		rc = on_containers(arr, "stop", extra, false);
	}
	json_decref(arr);
	return rc;
}

static int
runs_remove(const struct cli_command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = { { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 } };
	static const char *const extra[] = { "-f", "-v", NULL };
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ char *vols = NULL;
	struct sb_error *err = NULL;
	const char *id = NULL;
	bool unused = false;
	json_t *arr = NULL, *left = NULL;
	char *save = NULL;
	int rc;

	if (one_run(cmd, argc, argv, longopts, &unused, NULL, &id, &arr, &rc) < 0)
		return rc;
	rc = on_containers(arr, "rm", extra, false);
	json_decref(arr);
	/* Volumes of the run (sidecar mode) carry the same label. */
	sb_argv_pushl(&a, "volume", "ls", "-q", "--filter", NULL);
	sb_argv_pushf(&a, "label=ssebench.run=%s", id);
	if (docker_output(&a, &vols, NULL) == 0 && vols != NULL)
		for (char *v = strtok_r(vols, "\n", &save); v; v = strtok_r(NULL, "\n", &save)) {
			_cleanup_argv_ struct sb_argv r = SB_ARGV_INIT;

			sb_argv_pushl(&r, "volume", "rm", "-f", v, NULL);
			(void)docker_output(&r, NULL, NULL);
		}
	/* Its file system (disk.h): gone once no container of the run is left. */
	{
		_cleanup_free_ char *droot = sb_xasprintf("%s/.disks", results_root());

		disk_sweep(droot);
	}
	/* And its network (a kept run keeps it until now). */
	sb_argv_release(&a);
	free(vols);
	vols = NULL;
	save = NULL;
	sb_argv_pushl(&a, "network", "ls", "-q", "--filter", NULL);
	sb_argv_pushf(&a, "label=ssebench.run=%s", id);
	sb_argv_pushl(&a, "--format", "{{.Name}}", NULL);
	if (docker_output(&a, &vols, NULL) == 0 && vols != NULL)
		for (char *n = strtok_r(vols, "\n", &save); n; n = strtok_r(NULL, "\n", &save))
			net_remove(n);
	/* And its freezer cgroup, which a kept run keeps (empty once its agent is gone). */
	if (agent_cgroup_sweep(id) < 0 && rc == 0)
		rc = cli_fail("the run '%s' keeps its freezer cgroup", id);
	if (find_run(id, &left, &err) == 0) {
		json_decref(left);
		return cli_fail("the run '%s' still exists after removal", id);
	}
	sb_error_release(&err);
	return rc;
}

/*
 * `runs exec`: a command in a run's container, as docker exec runs it: argv only, never
 * through a shell of ours; its exit status is the command's (docker's 125-127 when it
 * could not start it).
 */
static int
runs_exec(const struct cli_command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = { { "user", required_argument, NULL, 'u' },
		{ "workdir", required_argument, NULL, 'w' },
		{ "container", required_argument, NULL, 'c' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 } };
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	const char *user = NULL, *workdir = NULL, *role = "task", *id, *target = NULL;
	struct sb_error *err = NULL;
	struct sb_cmd_result r;
	json_t *arr = NULL, *c;
	size_t i, matches = 0;
	int opt, rc = 0;

	while ((opt = cli_getopt(cmd, argc, argv, "+h", longopts, &rc)) != -1) {
		switch (opt) {
		case -2: return rc;
		case 'u': user = optarg; break;
		case 'w': workdir = optarg; break;
		case 'c': role = optarg; break;
		default: break;
		}
	}
	if (strcmp(role, "task") != 0 && strcmp(role, "agent") != 0)
		return cli_usage_error(cmd, "--container must be task or agent");
	if (optind >= argc)
		return cli_usage_error(cmd, "expected RUN_ID -- COMMAND [ARG...]");
	id = argv[optind++];
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind >= argc)
		return cli_usage_error(cmd, "no command to run (RUN_ID -- COMMAND [ARG...])");
	if ((rc = find_run(id, &arr, &err)) != 0)
		return rc;
	/*
	 * Sandbox mode has one container; sidecar mode a task and an agent container. More than
	 * one of the role is not a run ssebench made: refuse rather than pick one.
	 */
	json_array_foreach (arr, i, c) {
		const char *r_role = container_label(c, "ssebench.sidecar-role");

		if (r_role == NULL ? strcmp(role, "task") == 0 : strcmp(r_role, role) == 0) {
			target = json_string_value(json_object_get(c, "Id"));
			matches++;
		}
	}
	if (matches > 1) {
		json_decref(arr);
		return cli_fail("the run '%s' has %zu %s containers; not choosing one (ssebench runs "
				"inspect %s)",
			   id, matches, role, id),
		       SB_EXIT_RUN_AMBIGUOUS;
	}
	if (target == NULL) {
		json_decref(arr);
		return cli_fail("the run '%s' has no %s container%s", id, role,
		    strcmp(role, "agent") == 0 ? " (only sidecar runs have one)" : "");
	}
	sb_argv_pushl(&a, "exec", "-i", NULL);
	if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
		sb_argv_push(&a, "-t");
	if (user != NULL)
		sb_argv_pushl(&a, "--user", user, NULL);
	if (workdir != NULL)
		sb_argv_pushl(&a, "--workdir", workdir, NULL);
	sb_argv_push(&a, target);
	json_decref(arr);
	for (int k = optind; k < argc; k++)
		sb_argv_push(&a, argv[k]);
	if (docker_run(&a, DOCKER_INHERIT | DOCKER_STDIN, -1, NULL, 0, 0, &r, &err) < 0) {
		rc = cli_fail("%s", sb_error_message(err));
		sb_error_release(&err);
		return rc;
	}
	rc = r.exit_code;
	sb_cmd_result_release(&r);
	return rc;
}

/* A run directory whose summary could not be used: where, and why ({path, why}). */
static void
add_skipped(json_t *skipped, const char *path, const char *why)
{
	json_array_append_new(skipped, json_pack("{s:o, s:o}", "path", sb_json_string_or_null(path),
	    "why", sb_json_string_or_null(why)));
}

/*
 * Collect summary.json files below dir (at any depth, bounded). A run directory's own
 * summary only: the walk never goes below a run directory (run_dir_is), whose archive/
 * holds what the agent left. A run directory whose summary is missing, unreadable or not
 * a JSON object goes to skipped with the reason, never dropped in silence.
 */
static void
scan_summaries(int dfd, const char *dir, unsigned depth, json_t *out, json_t *skipped)
{
	DIR *d;
	struct dirent *de;
	int walk_fd;

	if (depth > 8) {
		add_skipped(skipped, dir, "more than 8 directories deep");
		return;
	}
	if (run_dir_is(dfd)) {
		struct sb_error *err = NULL;
		json_t *s = NULL;

		if (sb_json_load_file_at(dfd, "summary.json", SB_JSON_FILE_MAX, &s, &err) < 0)
			add_skipped(skipped, dir, sb_error_code(err) == ENOENT
				? "no summary.json (the run is still going, or stopped before "
				  "writing it)"
				: sb_error_message(err));
		else if (!json_is_object(s))
			add_skipped(skipped, dir, "summary.json is not a JSON object");
		else
			json_array_append_new(out, run_summary_row(s, dir));
		sb_error_release(&err);
		json_decref(s);
		return;
	}
	/*
	 * By descriptor, each directory opened from its parent without following a link: a
	 * name swapped for a link between a check and an open by path would lead the walk out
	 * of the results directory.
	 */
	walk_fd = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
	if (walk_fd < 0 || (d = fdopendir(walk_fd)) == NULL) {
		if (walk_fd >= 0)
			close(walk_fd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		_cleanup_free_ char *p = NULL;
		_cleanup_close_ int cfd = -1;

		if (de->d_name[0] == '.' || strcmp(de->d_name, "latest") == 0)
			continue;
		cfd = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0)
			continue;
		p = sb_xasprintf("%s/%s", dir, de->d_name);
		scan_summaries(cfd, p, depth + 1, out, skipped);
	}
	closedir(d);
}

static int
cmp_started_desc(const void *a, const void *b)
{
	const char *x = json_string_value(json_object_get(*(json_t *const *)a, "started_at"));
	const char *y = json_string_value(json_object_get(*(json_t *const *)b, "started_at"));

	return strcmp(y ? y : "", x ? x : "");
}

static int
runs_results(const struct cli_command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = { { "json", no_argument, NULL, 'j' },
		{ "dir", required_argument, NULL, 'd' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 } };
	_cleanup_free_ char *dir = NULL;
	json_t *found = json_array(), *sorted = json_array(), *skipped = json_array(), **v, *e;
	bool as_json = false;
	size_t n, i;
	int c, rc = 0;

	while ((c = cli_getopt(cmd, argc, argv, "+h", longopts, &rc)) != -1) {
		if (c == -2)
			return rc;
		if (c == 'j')
			as_json = true;
		if (c == 'd') {
			free(dir);
			dir = sb_xstrdup(optarg);
		}
	}
	if (optind < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	{
		const char *root = dir ? dir : results_root();
		struct sb_error *oerr = NULL;
		_cleanup_close_ int rfd = sb_open_dir(root, &oerr);

		/* A directory the user named must be there; the default may not be yet. */
		if (rfd < 0) {
			bool fresh = dir == NULL && sb_error_code(oerr) == ENOENT;

			json_decref(found);
			json_decref(sorted);
			json_decref(skipped);
			if (!fresh) {
				rc = cli_fail("cannot read the results directory '%s': %s", root,
				    strerror(sb_error_code(oerr)));
				sb_error_release(&oerr);
				return rc;
			}
			sb_error_release(&oerr);
			if (as_json) {
				json_t *none = json_pack("{s:[], s:{}, s:[]}", "runs", "tiers", "skipped");

				cli_print_json(none);
				json_decref(none);
			} else
				printf("no runs: %s does not exist yet\n", cli_safe(root));
			return SB_EXIT_OK;
		}
		scan_summaries(rfd, root, 0, found, skipped);
	}
	n = json_array_size(found);
	v = sb_xcalloc(n ? n : 1, sizeof(*v));
	json_array_foreach (found, i, e)
		v[i] = e;
	qsort(v, n, sizeof(*v), cmp_started_desc);
	for (i = 0; i < n; i++)
		json_array_append(sorted, v[i]);
	free(v);
	json_decref(found);
	/*
	 * Runs are compared only within a tier (docs/design.md, "Fail closed"): restricted runs,
	 * open runs (the agent could reach the internet: a measurement of something else), and
	 * runs that could not establish their isolation, which have no score at all.
	 */
	{
		static const struct {
			const char *tier, *title;
		} groups[] = {
			{ "restricted", "restricted egress" },
			{ "open", "open egress: NOT comparable with restricted runs" },
			{ NULL, "not scored: isolation not established" },
		};
		json_t *counts = json_object();
		bool any_header = false;

		for (size_t g = 0; g < SB_ARRAY_SIZE(groups); g++) {
			size_t runs = 0, passed = 0, forfeit = 0;
			bool header = false;

			json_array_foreach (sorted, i, e) {
				const char *tier = json_string_value(json_object_get(e, "tier"));
				const char *st = json_string_value(json_object_get(e, "status"));

				if (groups[g].tier == NULL ? tier != NULL
							   : tier == NULL || strcmp(tier, groups[g].tier) != 0)
					continue;
				runs++;
				if (groups[g].tier != NULL && st != NULL && strcmp(st, "passed") == 0)
					passed++;
				/* A forfeit counts as a run that did not pass, never as a retry. */
				if (groups[g].tier != NULL && st != NULL && strcmp(st, "forfeit") == 0)
					forfeit++;
				if (as_json)
					continue;
				if (!header) {
					printf("%s-- %s --\n", any_header ? "\n" : "",
					    groups[g].title);
					any_header = true;
					printf("%-28s %-8s %-30s %-12s %-20s %s\n", "RUN", "STATUS",
					    "TASK", "AGENT", "MODEL", "NOTES");
					header = true;
				}
				printf("%-28s %-8s %-30s %-12s %-20s %s\n",
				    cli_safe(json_string_value(json_object_get(e, "run_id")) ?: "?"),
				    groups[g].tier == NULL ? "unscored" : cli_safe(st ?: "?"),
				    cli_safe(json_string_value(json_object_get(e, "task")) ?: "?"),
				    cli_safe(json_string_value(json_object_get(e, "agent")) ?: "?"),
				    cli_safe(json_string_value(json_object_get(e, "model")) ?: "?"),
				    json_is_true(json_object_get(e, "reference_run")) ? "reference" : "");
			}
			if (groups[g].tier != NULL)
				json_object_set_new(counts, groups[g].tier,
				    json_pack("{s:I, s:I, s:I}", "runs", (json_int_t)runs, "passed",
					(json_int_t)passed, "forfeit", (json_int_t)forfeit));
			else
				json_object_set_new(counts, "unscored", json_integer((json_int_t)runs));
			if (!as_json && header && groups[g].tier != NULL && forfeit > 0)
				printf("%zu run%s, %zu passed, %zu forfeit (not passed: the isolation "
				       "broke during the agent phase)\n",
				    runs, runs == 1 ? "" : "s", passed, forfeit);
			else if (!as_json && header && groups[g].tier != NULL)
				printf("%zu run%s, %zu passed\n", runs, runs == 1 ? "" : "s", passed);
		}
		if (as_json) {
			json_t *out = json_pack("{s:O, s:o, s:O}", "runs", sorted, "tiers", counts,
			    "skipped", skipped);

			cli_print_json(out);
			json_decref(out);
		} else {
			json_decref(counts);
			if (!any_header)
				printf("no runs in %s\n", cli_safe(dir ? dir : results_root()));
		}
	}
	/* Said on stderr, so a pipe of the table stays a table. */
	if (json_array_size(skipped) > 0) {
		sb_log(SB_LOG_WARN, "%zu run director%s skipped:", json_array_size(skipped),
		    json_array_size(skipped) == 1 ? "y" : "ies");
		json_array_foreach (skipped, i, e) {
			if (i == 5) {
				sb_log(SB_LOG_WARN, "  ... and %zu more (--json lists them all)",
				    json_array_size(skipped) - 5);
				break;
			}
			sb_log(SB_LOG_WARN, "  %s: %s", json_string_value(json_object_get(e, "path")),
			    json_string_value(json_object_get(e, "why")));
		}
	}
	json_decref(skipped);
	json_decref(sorted);
	return SB_EXIT_OK;
}

/*
 * --backend NAME (else SSEBENCH_BACKEND, else docker): where list, inspect, logs, stop,
 * remove and exec look for the run. Taken out of argv (up to a "--", after which the words
 * are a command's) before the command reads its own options.
 */
static const char *
take_backend(int *argc, char **argv)
{
	const char *b = cli_setting("SSEBENCH_BACKEND", "docker");
	int o = 1, i = 1;

	for (; i < *argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--backend") == 0 && i + 1 < *argc)
			b = argv[++i];
		else if (strncmp(argv[i], "--backend=", 10) == 0)
			b = argv[i] + 10;
		else
			argv[o++] = argv[i];
	}
	while (i < *argc)
		argv[o++] = argv[i++];
	argv[o] = NULL;
	*argc = o;
	return b;
}

int
cmd_runs(const struct cli_command *cmd, int argc, char **argv)
{
	const char *name = cmd->name;

	if (strcmp(name, "results") != 0) {
		const char *backend = take_backend(&argc, argv);

		if (strcmp(backend, "kubernetes") == 0)
			return cmd_runs_k8s(cmd, argc, argv);
		if (strcmp(backend, "docker") != 0)
			return cli_usage_error(cmd, "--backend (or SSEBENCH_BACKEND) must be docker "
						    "or kubernetes");
	}

	if (strcmp(name, "list") == 0)
		return runs_list(cmd, argc, argv);
	if (strcmp(name, "exec") == 0)
		return runs_exec(cmd, argc, argv);
	if (strcmp(name, "inspect") == 0)
		return runs_inspect(cmd, argc, argv);
	if (strcmp(name, "logs") == 0)
		return runs_logs(cmd, argc, argv);
	if (strcmp(name, "stop") == 0)
		return runs_stop(cmd, argc, argv);
	if (strcmp(name, "remove") == 0)
		return runs_remove(cmd, argc, argv);
	return runs_results(cmd, argc, argv);
}

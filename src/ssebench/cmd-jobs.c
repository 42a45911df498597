/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd-jobs.c: `ssebench jobs list|show|resume|remove` (docs/jobs.md). A job is a directory
 * under <results>/jobs (job.c); these read it, and `resume` runs what is missing.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "sb/buf.h"
#include "sb/exit.h"
#include "sb/fs.h"
#include "sb/json.h"
#include "sb/limits.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/tree.h"

#include "cli.h"
#include "job.h"
#include "run.h"


/* Remove the tree at path (its last component in its parent directory). */
static int
remove_path(const char *path, struct sb_error **err)
{
	_cleanup_free_ char *dir = sb_xstrdup(path);
	_cleanup_close_ int fd = -1;
	size_t n = strlen(dir);
	char *slash;

	/* "jobs/job-x/" names job-x, not an empty name in it. */
	while (n > 1 && dir[n - 1] == '/')
		dir[--n] = '\0';
	slash = strrchr(dir, '/');
	if (slash != NULL && slash[1] == '\0')
		return sb_error_set(err, EINVAL, "will not remove '%s'", path);

	if (slash == NULL)
		return sb_remove_tree_at(AT_FDCWD, path, err);
	*slash = '\0';
	fd = sb_open_dir(slash == dir ? "/" : dir, err);
	if (fd < 0)
		return -1;
	return sb_remove_tree_at(fd, slash + 1, err);
}

static const char *
job_state(const struct job *j, const struct job_counts *c)
{
	if (job_is_running(j))
		return "running";
	if (c->pending > 0) {
		bool ran = c->done + c->skipped > 0;

		for (size_t i = 0; i < j->n && !ran; i++)
			ran = json_array_size(j->slots[i].tries) > 0;
		return ran ? "interrupted" : "not started";
	}
	return "complete";
}

/* A job as JSON (list --json and show --json). */
static json_t *
job_json(const struct job *j, bool slots)
{
	struct job_counts c;
	json_t *o;

	job_counts_of(j, &c);
	o = json_pack("{s:s, s:s, s:O, s:s, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}}", "id",
	    j->id, "dir", j->path, "created_at", json_object_get(j->spec, "created_at"), "state",
	    job_state(j, &c), "counts", "runs", (json_int_t)c.total, "passed", (json_int_t)c.passed,
	    "failed", (json_int_t)c.failed, "forfeit", (json_int_t)c.forfeit, "errors",
	    (json_int_t)c.errors, "skipped", (json_int_t)c.skipped, "not_run",
	    (json_int_t)(c.pending + c.running), "done", (json_int_t)c.done);
	if (slots) {
		json_t *a = json_array();

		json_object_set(o, "matrix", json_object_get(j->spec, "matrix"));
		json_object_set(o, "options", json_object_get(j->spec, "options"));
		for (size_t i = 0; i < j->n; i++) {
			const struct job_slot *s = &j->slots[i];

			json_array_append_new(a, json_pack("{s:s, s:s, s:o, s:o, s:o, s:o}", "key", s->key,
			    "state", job_slot_state_name(s->state), "run_id",
			    sb_json_string_or_null(s->run_id), "dir", sb_json_string_or_null(s->dir),
			    "status", sb_json_string_or_null(s->status), "reason",
			    sb_json_string_or_null(s->reason)));
		}
		json_object_set_new(o, "slots", a);
	}
	return o;
}


static int
cmd_jobs_list(const struct cli_command *cmd, int argc, char **argv)
{
	_cleanup_free_ char *root = job_root();
	json_auto_t *all = json_array();
	struct dirent **names = NULL;
	bool as_json = false;
	int rc, n;
	size_t bad = 0;

	if ((rc = cli_bare_command(cmd, argc, argv, &as_json)) >= 0)
		return rc;
	n = scandir(root, &names, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		struct sb_error *err = NULL;
		struct job j;

		if (sb_job_id_valid(names[i]->d_name)) {
			if (job_open(names[i]->d_name, true, &j, &err) == 0)
				json_array_append_new(all, job_json(&j, false));
			else {
				sb_log(SB_LOG_WARN, "%s, skipping it", sb_error_message(err));
				sb_error_release(&err);
				bad++;
			}
			job_release(&j);
		}
		free(names[i]);
	}
	free(names);
	if (as_json) {
		cli_print_json(all);
		return SB_EXIT_OK;
	}
	if (json_array_size(all) == 0) {
		printf("no jobs in %s\n", cli_safe(root));
		return SB_EXIT_OK;
	}
	printf("%-28s %-20s %-11s %6s %6s %6s %6s %6s\n", "JOB", "CREATED", "STATE", "RUNS",
	    "PASSED", "FAILED", "ERRORS", "TO RUN");
	{
		size_t i;
		json_t *o;

		json_array_foreach(all, i, o) {
			const json_t *k = json_object_get(o, "counts");

			printf("%-28s %-20s %-11s %6lld %6lld %6lld %6lld %6lld\n",
			    cli_safe(json_string_value(json_object_get(o, "id"))),
			    cli_safe(json_string_value(json_object_get(o, "created_at")) ?: "?"),
			    cli_safe(json_string_value(json_object_get(o, "state"))),
			    (long long)json_integer_value(json_object_get(k, "runs")),
			    (long long)json_integer_value(json_object_get(k, "passed")),
			    (long long)(json_integer_value(json_object_get(k, "failed")) +
				json_integer_value(json_object_get(k, "forfeit"))),
			    (long long)json_integer_value(json_object_get(k, "errors")),
			    (long long)(json_integer_value(json_object_get(k, "not_run")) +
				json_integer_value(json_object_get(k, "skipped"))));
		}
	}
	if (bad > 0)
		printf("(%zu job director%s could not be read: see above)\n", bad, bad == 1 ? "y" : "ies");
	return SB_EXIT_OK;
}

static int
cmd_jobs_show(const struct cli_command *cmd, int argc, char **argv)
{
	struct sb_error *err = NULL;
	json_auto_t *o = NULL;
	struct job_counts k;
	bool as_json = false;
	struct job j;
	int rc;

	if ((rc = cli_json_flag(cmd, argc, argv, &as_json)) >= 0)
		return rc;
	if (optind + 1 != argc)
		return cli_usage_error(cmd, "one job, please");
	if (job_open(argv[optind], true, &j, &err) < 0) {
		job_release(&j);
		return cli_fail_err(&err);
	}
	o = job_json(&j, true);
	if (as_json) {
		cli_print_json(o);
		job_release(&j);
		return SB_EXIT_OK;
	}
	job_counts_of(&j, &k);
	printf("job %s (%s), created %s\n", cli_safe(j.id),
	    cli_safe(json_string_value(json_object_get(o, "state"))),
	    cli_safe(json_string_value(json_object_get(j.spec, "created_at")) ?: "?"));
	printf("directory: %s\n", cli_safe(j.path));
	printf("runs: %zu: %zu passed, %zu failed, %zu forfeit, %zu error%s, %zu skipped, %zu not "
	       "run\n",
	    k.total, k.passed, k.failed, k.forfeit, k.errors, k.errors == 1 ? "" : "s", k.skipped,
	    k.pending + k.running);
	for (size_t i = 0; i < j.n; i++) {
		const struct job_slot *s = &j.slots[i];

		printf("  %-60s %-8s %-24s%s%s\n", cli_safe(s->key),
		    cli_safe(s->state == JOB_SLOT_DONE ? s->status : job_slot_state_name(s->state)),
		    cli_safe(s->run_id ? s->run_id : "-"), s->reason ? " " : "",
		    cli_safe(s->reason));
	}
	job_release(&j);
	return SB_EXIT_OK;
}

static int
cmd_jobs_resume(const struct cli_command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = { { "retry-errors", no_argument, NULL, 'r' },
		{ "jobs", required_argument, NULL, 'j' }, { "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	bool retry = false, json_events = false;
	unsigned parallel = 0;
	uint64_t n;
	int c, rc = 0;

	while ((c = cli_getopt(cmd, argc, argv, "+h", longopts, &rc)) != -1) {
		switch (c) {
		case -2:
			return rc;
		case 'r':
			retry = true;
			break;
		case 'J':
			json_events = true;
			break;
		case 'j':
			if (sb_parse_u64(optarg, 1, SB_JOB_PARALLEL_MAX, &n, NULL) < 0)
				return cli_usage_error(cmd, "--jobs must be a number, 1 to %d",
				    SB_JOB_PARALLEL_MAX);
			parallel = (unsigned)n;
			break;
		default:
			break;
		}
	}
	if (optind + 1 != argc)
		return cli_usage_error(cmd, "one job, please");
	return job_resume(argv[optind], retry, parallel, json_events);
}

/*
 * Remove one run directory of a job: only one below the results root (the operator's
 * setting, never the job's own files, which anyone who can write the job directory wrote)
 * whose summary.json says it is this job's. Opened beneath the root without following a
 * link, and removed through that descriptor, so a link swapped in after the check leads
 * nowhere. 1 removed, 0 not this job's run (or gone), -1 outside the root.
 */
static int
remove_job_run(const char *root, int root_fd, const char *dir, const char *run_id,
    const char *job_id)
{
	_cleanup_free_ char *real = realpath(dir, NULL), *parent = NULL;
	_cleanup_close_ int pfd = -1, fd = -1;
	struct sb_error *err = NULL;
	json_auto_t *sum = NULL;
	const char *rel, *name, *id;
	size_t n = root != NULL ? strlen(root) : 0;

	if (real == NULL)
		return 0;
	if (root == NULL || root_fd < 0 || strncmp(real, root, n) != 0 || real[n] != '/')
		return -1;
	rel = real + n + 1;
	/* A run directory is <task>/<model>/<agent>/<run id>, and never the jobs directory. */
	{
		size_t slashes = 0;

		for (const char *p = rel; *p != '\0'; p++)
			slashes += *p == '/';
		if (slashes != 3 || strncmp(rel, "jobs/", 5) == 0)
			return -1;
	}
	name = strrchr(rel, '/');
	parent = name != NULL ? sb_xstrndup(rel, (size_t)(name - rel)) : sb_xstrdup(".");
	name = name != NULL ? name + 1 : rel;
	pfd = sb_open_beneath(root_fd, parent, O_RDONLY | O_DIRECTORY, 0, SB_OPEN_NO_SYMLINKS, NULL);
	if (pfd < 0)
		return -1;
	fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || sb_json_load_file_at(fd, "summary.json", SB_JSON_FILE_MAX, &sum, NULL) < 0)
		return 0;
	id = json_string_value(json_object_get(json_object_get(sum, "job"), "id"));
	if (id == NULL || strcmp(id, job_id) != 0 || run_id == NULL || strcmp(name, run_id) != 0 ||
	    !sb_streq(json_string_value(json_object_get(sum, "run_id")), run_id))
		return 0;
	/* Emptied through the descriptor checked above, then the name removed: a link swapped
	 * in meanwhile is only unlinked, never followed. */
	if (sb_empty_dir_at(fd, &err) < 0 || unlinkat(pfd, name, AT_REMOVEDIR) < 0) {
		if (err == NULL)
			sb_error_errno(&err, errno, "remove '%s'", dir);
		sb_log(SB_LOG_WARN, "%s, ignoring", sb_error_message(err));
		sb_error_release(&err);
		return 0;
	}
	return 1;
}

static int
cmd_jobs_remove(const struct cli_command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = { { "with-runs", no_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	struct sb_error *err = NULL;
	bool with_runs = false;
	size_t removed = 0;
	struct job j;
	int c, rc = 0;

	while ((c = cli_getopt(cmd, argc, argv, "+h", longopts, &rc)) != -1) {
		if (c == -2)
			return rc;
		if (c == 'w')
			with_runs = true;
	}
	if (optind + 1 != argc)
		return cli_usage_error(cmd, "one job, please");
	/* A corrupt index still lets the job go: its runs stay, unless the index names them. */
	if (job_open(argv[optind], with_runs, &j, &err) < 0) {
		job_release(&j);
		return cli_fail_err(&err);
	}
	if (job_is_running(&j)) {
		rc = cli_fail("the job %s is running: stop it first (Ctrl-C where it runs)", j.id);
		job_release(&j);
		return rc;
	}
	if (with_runs) {
		_cleanup_free_ char *root = realpath(results_root(), NULL);
		_cleanup_close_ int root_fd = root != NULL ? sb_open_dir(root, NULL) : -1;
		size_t outside = 0;

		for (size_t i = 0; i < j.n; i++)
			if (j.slots[i].dir != NULL)
				switch (remove_job_run(root, root_fd, j.slots[i].dir, j.slots[i].run_id,
				    j.id)) {
				case 1: removed++; break;
				case -1: outside++; break;
				default: break;
				}
		if (outside > 0)
			sb_log(SB_LOG_WARN, "%zu run director%s of the job left alone: not below the "
					    "results directory %s",
			    outside, outside == 1 ? "y" : "ies", root ? root : results_root());
	}
	{
		_cleanup_free_ char *path = sb_xstrdup(j.path);
		_cleanup_free_ char *id = sb_xstrdup(j.id);

		job_release(&j);
		if (remove_path(path, &err) < 0)
			return cli_fail_err(&err);
		printf("removed job %s%s", cli_safe(id), with_runs ? "" : "\n");
		if (with_runs)
			printf(" and %zu run director%s\n", removed, removed == 1 ? "y" : "ies");
	}
	return SB_EXIT_OK;
}

const struct cli_command jobs_commands[] = {
	{
	    .name = "list",
	    .summary = "the jobs under the results directory",
	    .usage = "ssebench jobs list [--json]",
	    .help = "One line per job of <results>/jobs/ ($SSEBENCH_RESULTS, else ./results):\n"
		    "its id, when it was made, its state (running, complete, interrupted, not\n"
		    "started), its runs and their outcomes so far. A job directory that cannot be\n"
		    "read is named on stderr and counted.\n"
		    "\n"
		    "  --json  the jobs as a JSON array (docs/jobs.md)\n"
		    "\n"
		    "Exit status: 0 (also with no jobs); 2 a bad flag.\n",
	    .run = cmd_jobs_list,
	},
	{
	    .name = "show",
	    .summary = "one job: its matrix and every run",
	    .usage = "ssebench jobs show [--json] JOB",
	    .help = "Show one job: its state, directory, the counts of its runs, and one line per\n"
		    "run (task/model/agent#attempt, outcome, run id, why). JOB is a job id\n"
		    "(job-...) or the path of a job directory.\n"
		    "\n"
		    "  --json  the job's index as one JSON object (docs/jobs.md)\n"
		    "\n"
		    "Exit status: 0; 1 no such job, or one written by a newer ssebench; 2 a bad\n"
		    "flag.\n",
	    .run = cmd_jobs_show,
	},
	{
	    .name = "resume",
	    .summary = "run what a job has not run yet",
	    .usage = "ssebench jobs resume [--retry-errors] [--jobs N] [--json] JOB",
	    .help = "Runs every run of the job that has no result: never started, interrupted, or\n"
		    "cut off when the job was killed. --retry-errors also reruns the runs that ended\n"
		    "in a harness error (not scored) and the ones whose images failed; a graded\n"
		    "failure or a forfeit is a result and is never rerun.\n"
		    "\n"
		    "  --retry-errors  also rerun harness errors and failed image builds\n"
		    "  --jobs N        runs at a time (default: as the job was made)\n"
		    "  --json          events as JSON lines on stdout\n"
		    "\n"
		    "Exit status: as 'ssebench run' of a job: 0 when every run has a result, 1 on\n"
		    "an error, 2 a bad flag, 130 interrupted (resume it again later).\n"
		    "\n"
		    "Example: ssebench jobs resume --retry-errors job-20261203T101500Z-3f2a1c\n",
	    .run = cmd_jobs_resume,
	},
	{
	    .name = "remove",
	    .summary = "remove a job's directory",
	    .usage = "ssebench jobs remove [--with-runs] JOB",
	    .help = "Removes the job directory. Its runs' directories stay (they are runs like any\n"
		    "other), unless --with-runs.\n"
		    "\n"
		    "  --with-runs  remove the job's run directories too\n"
		    "\n"
		    "Exit status: 0; 1 no such job, or a job still running; 2 a bad flag.\n",
	    .run = cmd_jobs_remove,
	},
	{ .name = NULL },
};

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * job.c: a job, `ssebench run` over a matrix of tasks, agents, models and attempts
 * (docs/jobs.md).
 *
 * A job is a directory, <results>/jobs/<id>/: job.json (the resolved matrix and options,
 * written once), index.json (one slot per run of the matrix: its state, its run, its
 * outcome; rewritten atomically after every change, so a job killed at any moment can be
 * resumed from it), logs/ (what each run and each image build printed) and a lock file that
 * the process running the job holds.
 *
 * Each run is a `ssebench run` of its own, started by the job with the hidden options
 * --job, --attempt and --images-ready: one code path for a run, whether a person or a job
 * starts it, and a run that fails takes nothing else with it. Before the runs, the images of
 * every task and agent are built once (--images-only), a few at a time; a task whose image
 * fails is recorded and its runs skipped. Then N runs at a time. Each run has its own
 * network, disks, cgroup and proxy key, as any run does.
 *
 * The runs are in process groups of their own, so a Ctrl-C reaches the job alone: the first
 * asks every run to stop (each stops its container and records itself interrupted; its slot
 * goes back to pending), the second kills them and removes the job's containers. A run
 * whose job dies gets SIGTERM (parent-death signal) and stops the same way.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/dialog.h"
#include "sb/exit.h"
#include "sb/fs.h"
#include "sb/glob.h"
#include "sb/json.h"
#include "sb/limits.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/runlimits.h"
#include "sb/sig.h"
#include "sb/spawn.h"
#include "sb/taskdir.h"
#include "sb/yaml.h"

#include "agents.h"
#include "cli.h"
#include "docker.h"
#include "images.h"
#include "job.h"
#include "models.h"
#include "run.h"

extern char **environ;

#define JOB_VERSION 1
#define JOB_IMAGE_BUILDS 2   /* image builds at a time (after one per base image) */
#define JOB_TICK_MS 250	     /* how often the scheduler looks at its runs */
#define JOB_LIVE_MS 1000     /* how often the live status line is redrawn */
#define JOB_CONFIG_MAX 65536 /* bytes of a job config file */

static const char *const slot_state_names[] = { "pending", "running", "done", "skipped" };

const char *
job_slot_state_name(enum job_slot_state s)
{
	return (unsigned)s < SB_ARRAY_SIZE(slot_state_names) ? slot_state_names[s] : "?";
}

/* --- the job's files ------------------------------------------------------------------ */

/* <results>/jobs, absolute when the results root is. malloc'd. */
char *
job_root(void)
{
	return sb_xasprintf("%s/jobs", results_root());
}


static json_t *
slot_to_json(const struct job_slot *s)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:I, s:s, s:o, s:o, s:o, s:o, s:O}", "key", s->key,
	    "task", s->task, "agent", s->agent, "model", s->model, "attempt",
	    (json_int_t)s->attempt, "state", job_slot_state_name(s->state), "run_id",
	    sb_json_string_or_null(s->run_id), "dir", sb_json_string_or_null(s->dir), "status",
	    sb_json_string_or_null(s->status), "reason", sb_json_string_or_null(s->reason),
	    "tries", s->tries);
}

int
job_save_index(struct job *j, struct sb_error **err)
{
	json_auto_t *slots = json_array();
	json_auto_t *idx = NULL;

	for (size_t i = 0; i < j->n; i++)
		json_array_append_new(slots, slot_to_json(&j->slots[i]));
	idx = json_pack("{s:i, s:s, s:O}", "version", JOB_VERSION, "job_id", j->id, "slots", slots);
	return sb_json_write_atomic_at(j->dir_fd, "index.json", idx, 0644, err);
}

/* A string member, or NULL (wrong type: *bad). */
static const char *
str_member(const json_t *o, const char *key, bool nullable, bool *bad)
{
	const json_t *v = json_object_get(o, key);

	if (json_is_string(v))
		return json_string_value(v);
	if (!(nullable && (v == NULL || json_is_null(v))))
		*bad = true;
	return NULL;
}

/*
 * index.json into j->slots. A corrupt index is reported, never guessed around: a resumed
 * job must run exactly what is missing.
 */
static int
load_index(struct job *j, struct sb_error **err)
{
	json_auto_t *idx = NULL;
	const json_t *slots, *v;
	size_t i;

	if (sb_json_load_file_at(j->dir_fd, "index.json", SB_JSON_FILE_MAX, &idx, err) < 0)
		return sb_error_prefix(err, "the job's index");
	v = json_object_get(idx, "version");
	if (!json_is_integer(v))
		return sb_error_set(err, EINVAL, "the job's index has no version: it is corrupt");
	if (json_integer_value(v) > JOB_VERSION)
		return sb_error_set(err, EPROTO, "the job's index is of version %lld, newer than "
		    "this ssebench reads (%d): use the ssebench that made it",
		    (long long)json_integer_value(v), JOB_VERSION);
	slots = json_object_get(idx, "slots");
	if (!json_is_array(slots) || json_array_size(slots) > SB_JOB_RUNS_MAX)
		return sb_error_set(err, EINVAL, "the job's index is corrupt: no list of slots");
	j->slots = sb_xcalloc(json_array_size(slots) + 1, sizeof(*j->slots));
	json_array_foreach(slots, i, v) {
		struct job_slot *s = &j->slots[i];
		bool bad = !json_is_object(v);
		const char *task = str_member(v, "task", false, &bad);
		const char *agent = str_member(v, "agent", false, &bad);
		const char *model = str_member(v, "model", false, &bad);
		const char *state = str_member(v, "state", false, &bad);
		const char *run_id = str_member(v, "run_id", true, &bad);
		const char *dir = str_member(v, "dir", true, &bad);
		const char *status = str_member(v, "status", true, &bad);
		const char *reason = str_member(v, "reason", true, &bad);
		const json_t *attempt = json_object_get(v, "attempt");
		const json_t *tries = json_object_get(v, "tries");
		int st = -1;

		j->n = i + 1;
		for (size_t k = 0; state != NULL && k < SB_ARRAY_SIZE(slot_state_names); k++)
			if (strcmp(state, slot_state_names[k]) == 0)
				st = (int)k;
		if (bad || st < 0 || !json_is_integer(attempt) || json_integer_value(attempt) < 1 ||
		    json_integer_value(attempt) > SB_JOB_ATTEMPTS_MAX || !json_is_array(tries) ||
		    (st == JOB_SLOT_DONE && (run_id == NULL || dir == NULL || status == NULL)))
			return sb_error_set(err, EINVAL, "the job's index is corrupt: slot %zu is "
			    "malformed (remove the job and run it again, or mend index.json)", i + 1);
		s->task = sb_xstrdup(task);
		s->agent = sb_xstrdup(agent);
		s->model = sb_xstrdup(model);
		s->attempt = (unsigned)json_integer_value(attempt);
		s->key = sb_xasprintf("%s/%s/%s/%u", task, agent, model, s->attempt);
		s->state = (enum job_slot_state)st;
		s->run_id = run_id != NULL ? sb_xstrdup(run_id) : NULL;
		s->dir = dir != NULL ? sb_xstrdup(dir) : NULL;
		s->status = status != NULL ? sb_xstrdup(status) : NULL;
		s->reason = reason != NULL ? sb_xstrdup(reason) : NULL;
		s->tries = json_incref((json_t *)tries);
		s->pid = -1;
		s->pidfd = -1;
	}
	return 0;
}

void
job_release(struct job *j)
{
	for (size_t i = 0; i < j->n; i++) {
		struct job_slot *s = &j->slots[i];

		free(s->key);
		free(s->task);
		free(s->agent);
		free(s->model);
		free(s->run_id);
		free(s->dir);
		free(s->status);
		free(s->reason);
		json_decref(s->tries);
	}
	free(j->slots);
	free(j->id);
	free(j->path);
	json_decref(j->spec);
	if (j->dir_fd >= 0)
		close(j->dir_fd);
	if (j->lock_fd >= 0)
		close(j->lock_fd);
	memset(j, 0, sizeof(*j));
	j->dir_fd = j->lock_fd = -1;
}

/*
 * Open the job directory (an id under the jobs root, or a path to one) and read job.json;
 * with index, index.json too. A job.json of a newer version is refused.
 */
int
job_open(const char *which, bool index, struct job *j, struct sb_error **err)
{
	_cleanup_free_ char *root = job_root();
	const json_t *v;
	struct stat st;

	memset(j, 0, sizeof(*j));
	j->dir_fd = j->lock_fd = -1;
	if (strchr(which, '/') == NULL && sb_job_id_valid(which))
		j->path = sb_xasprintf("%s/%s", root, which);
	else
		j->path = sb_xstrdup(which);
	if (stat(j->path, &st) < 0 || !S_ISDIR(st.st_mode))
		return sb_error_set(err, ENOENT, "no job '%s' (ssebench jobs list)", which);
	j->dir_fd = sb_open_dir(j->path, err);
	if (j->dir_fd < 0)
		return -1;
	if (sb_json_load_file_at(j->dir_fd, "job.json", SB_JSON_FILE_MAX, &j->spec, err) < 0)
		return sb_error_prefix(err, "%s is not a job", j->path);
	v = json_object_get(j->spec, "version");
	if (!json_is_integer(v) || !json_is_string(json_object_get(j->spec, "job_id")))
		return sb_error_set(err, EINVAL, "%s/job.json is corrupt", j->path);
	if (json_integer_value(v) > JOB_VERSION)
		return sb_error_set(err, EPROTO, "the job %s is of version %lld, newer than this "
		    "ssebench reads (%d)", j->path, (long long)json_integer_value(v), JOB_VERSION);
	/* The id goes into paths, labels and messages: the shape job ids have, or nothing. */
	if (!sb_job_id_valid(json_string_value(json_object_get(j->spec, "job_id"))))
		return sb_error_set(err, EINVAL, "%s/job.json is corrupt (its job_id is no job id)",
		    j->path);
	/* A job is the directory named by its id: one that claims another's id would act on
	 * the other job's runs (jobs remove --with-runs). */
	{
		_cleanup_free_ char *trimmed = sb_xstrdup(j->path);
		size_t n = strlen(trimmed);
		const char *base;

		while (n > 1 && trimmed[n - 1] == '/')
			trimmed[--n] = '\0';
		base = strrchr(trimmed, '/') ? strrchr(trimmed, '/') + 1 : trimmed;
		if (strcmp(base, json_string_value(json_object_get(j->spec, "job_id"))) != 0)
			return sb_error_set(err, EINVAL, "%s/job.json is corrupt (its job_id is not "
			    "the directory's name)", j->path);
	}
	j->id = sb_xstrdup(json_string_value(json_object_get(j->spec, "job_id")));
	if (index && load_index(j, err) < 0)
		return sb_error_prefix(err, "%s", j->path);
	return 0;
}

/* Take the job's lock (the one process that runs it); EBUSY when another holds it. */
static int
job_lock(struct job *j, struct sb_error **err)
{
	j->lock_fd = openat(j->dir_fd, "lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (j->lock_fd < 0)
		return sb_error_errno(err, errno, "open %s/lock", j->path);
	if (flock(j->lock_fd, LOCK_EX | LOCK_NB) < 0)
		return sb_error_set(err, EBUSY, "the job %s is running in another process", j->id);
	return 0;
}

bool
job_is_running(const struct job *j)
{
	_cleanup_close_ int fd = openat(j->dir_fd, "lock", O_RDWR | O_CLOEXEC | O_NOFOLLOW);

	return fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
}

/* --- the config file -------------------------------------------------------------------- */

/* A list of strings (a sequence, or one string) into out, unless the CLI gave some. */
static int
config_list(const struct sb_ynode *n, const char *key, struct sb_argv *out, const char *file,
    struct sb_error **err)
{
	if (n == NULL || out->n > 0)
		return 0;
	if (n->kind == SB_YNODE_SCALAR && n->type == SB_YSCALAR_STR) {
		sb_argv_push(out, n->value);
		return 0;
	}
	if (n->kind != SB_YNODE_SEQ)
		return sb_error_set(err, EINVAL, "%s:%u:%u: %s must be a list of strings", file,
		    n->line, n->col, key);
	for (size_t i = 0; i < n->n; i++) {
		const struct sb_ynode *e = n->items[i];

		if (e->kind != SB_YNODE_SCALAR || e->type != SB_YSCALAR_STR || e->len == 0)
			return sb_error_set(err, EINVAL, "%s:%u:%u: %s must be a list of strings, "
			    "not %s", file, e->line, e->col, key, sb_ynode_describe(e));
		sb_argv_push(out, e->value);
	}
	return 0;
}

static int
config_uint(const struct sb_ynode *n, const char *key, uint64_t min, uint64_t max, unsigned *out,
    const char *file, struct sb_error **err)
{
	uint64_t v;

	if (n == NULL)
		return 0;
	if (n->kind != SB_YNODE_SCALAR || n->type != SB_YSCALAR_INT ||
	    sb_parse_u64(n->value, min, max, &v, NULL) < 0)
		return sb_error_set(err, EINVAL, "%s:%u:%u: %s must be a number, %llu to %llu", file,
		    n->line, n->col, key, (unsigned long long)min, (unsigned long long)max);
	*out = (unsigned)v;
	return 0;
}

static int
config_str(const struct sb_ynode *n, const char *key, char **out, const char *file,
    struct sb_error **err)
{
	if (n == NULL)
		return 0;
	if (n->kind != SB_YNODE_SCALAR || n->type != SB_YSCALAR_STR || n->len == 0)
		return sb_error_set(err, EINVAL, "%s:%u:%u: %s must be a string", file, n->line,
		    n->col, key);
	free(*out);
	*out = sb_xstrdup(n->value);
	return 0;
}

/*
 * --config FILE: the same keys as the options, strictly (an unknown key, a wrong type or a
 * value out of range is an error naming its line). What the command line gives wins.
 */
static int
load_config(struct run_opts *o, struct sb_error **err)
{
	static const char *const keys[] = { "dataset", "tasks", "all", "agents", "models",
		"attempts", "jobs", "difficulty", "egress", "timeout", "mode", "runtime", NULL };
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(JOB_CONFIG_MAX);
	_cleanup_ynode_ struct sb_ynode *root = NULL;
	struct sb_yloc loc = { 0, 0 };
	const char *f = o->config;
	const struct sb_ynode *n;
	unsigned u;

	{
		_cleanup_free_ char *dir = sb_xstrdup(f);
		char *slash = strrchr(dir, '/');
		_cleanup_close_ int fd = -1;

		if (slash != NULL)
			*slash = '\0';
		fd = sb_open_dir(slash == NULL ? "." : slash == dir ? "/" : dir, err);
		if (fd < 0 || sb_read_file_at(fd, slash != NULL ? slash + 1 : f, 0, &b, err) < 0)
			return sb_error_prefix(err, "--config %s", f);
	}
	if (sb_yaml_load(b.s, b.len, &root, &loc, err) < 0)
		return sb_error_prefix(err, "%s:%u:%u", f, loc.line, loc.col);
	if (root == NULL || root->kind != SB_YNODE_MAP)
		return sb_error_set(err, EINVAL, "%s: a job config is a mapping of the options "
		    "(docs/jobs.md)", f);
	for (size_t i = 0; i < root->n; i++) {
		const char *k = root->keys[i]->value;
		bool known = false;

		for (const char *const *p = keys; *p != NULL; p++)
			known = known || strcmp(k, *p) == 0;
		if (!known) {
			const char *best = sb_closest(k, keys, SIZE_MAX);

			return sb_error_set(err, EINVAL, "%s:%u:%u: unknown key '%s'%s%s%s", f,
			    root->keys[i]->line, root->keys[i]->col, k,
			    best ? " (did you mean '" : "", best ? best : "", best ? "'?)" : "");
		}
	}
	/* The dataset's path is the file's, when relative. */
	if ((n = sb_ymap_get(root, "dataset")) != NULL && o->local == NULL) {
		_cleanup_free_ char *v = NULL;

		if (config_str(n, "dataset", &v, f, err) < 0)
			return -1;
		if (v[0] == '/' || strrchr(f, '/') == NULL)
			o->local = TAKE_PTR(v);
		else
			o->local = sb_xasprintf("%.*s/%s", (int)(strrchr(f, '/') - f), f, v);
	}
	if ((n = sb_ymap_get(root, "tasks")) != NULL && o->tasks.n == 0 && o->task_patterns.n == 0) {
		_cleanup_argv_ struct sb_argv t = SB_ARGV_INIT;

		if (config_list(n, "tasks", &t, f, err) < 0)
			return -1;
		/* An entry with a pattern character is a pattern. */
		for (size_t i = 0; i < t.n; i++)
			sb_argv_push(strpbrk(t.v[i], "*?[") ? &o->task_patterns : &o->tasks, t.v[i]);
	}
	if ((n = sb_ymap_get(root, "all")) != NULL) {
		if (n->kind != SB_YNODE_SCALAR || n->type != SB_YSCALAR_BOOL)
			return sb_error_set(err, EINVAL, "%s:%u:%u: all must be true or false", f,
			    n->line, n->col);
		o->all = o->all || strcmp(n->value, "true") == 0;
	}
	if (config_list(sb_ymap_get(root, "agents"), "agents", &o->agents, f, err) < 0 ||
	    config_list(sb_ymap_get(root, "models"), "models", &o->models, f, err) < 0)
		return -1;
	if (o->attempts == 0 &&
	    config_uint(sb_ymap_get(root, "attempts"), "attempts", 1, SB_JOB_ATTEMPTS_MAX,
		&o->attempts, f, err) < 0)
		return -1;
	if (o->jobs == 0 && config_uint(sb_ymap_get(root, "jobs"), "jobs", 1, SB_JOB_PARALLEL_MAX,
			       &o->jobs, f, err) < 0)
		return -1;
	if (!o->difficulty_set && config_uint(sb_ymap_get(root, "difficulty"), "difficulty", 0, 4,
				      &o->difficulty, f, err) < 0)
		return -1;
	u = (unsigned)o->timeout;
	if (!o->timeout_set && config_uint(sb_ymap_get(root, "timeout"), "timeout", 1,
				   SB_RUN_TIMEOUT_MAX_S, &u, f, err) < 0)
		return -1;
	o->timeout = u;
	if ((!o->egress_set && config_str(sb_ymap_get(root, "egress"), "egress", &o->egress, f, err) < 0) ||
	    (!o->mode_set && config_str(sb_ymap_get(root, "mode"), "mode", &o->mode, f, err) < 0) ||
	    (o->runtime == NULL && config_str(sb_ymap_get(root, "runtime"), "runtime", &o->runtime, f, err) < 0))
		return -1;
	if (strcmp(o->egress, "restricted") != 0 && strcmp(o->egress, "open") != 0)
		return sb_error_set(err, EINVAL, "%s: egress must be restricted or open", f);
	if (strcmp(o->mode, "sandbox") != 0 && strcmp(o->mode, "sidecar") != 0)
		return sb_error_set(err, EINVAL, "%s: mode must be sandbox or sidecar", f);
	return 0;
}

/* --- the matrix ------------------------------------------------------------------------- */

static bool
argv_has(const struct sb_argv *a, const char *s)
{
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], s) == 0)
			return true;
	return false;
}

/*
 * Every task, agent and model named, checked before anything is built: each one unknown is
 * named (with the closest known name), not only the first. Tasks in the order given,
 * patterns and --all in the dataset's order, each once.
 */
static int
resolve_matrix(const struct run_opts *o, const struct sb_dataset *ds, struct sb_argv *tasks,
    struct sb_argv *agents, json_t *agent_models, bool *ret_uses_model)
{
	_cleanup_argv_ struct sb_argv names = SB_ARGV_INIT;
	unsigned bad = 0;

	for (size_t i = 0; i < ds->n; i++)
		sb_argv_push(&names, ds->tasks[i]->name);
	/* Ids in the order given, then patterns in the dataset's order (one selector). */
	bad += (unsigned)cli_select_tasks(ds, &o->tasks, "--task", tasks);
	bad += (unsigned)cli_select_tasks(ds, &o->task_patterns, "--tasks", tasks);
	if (o->all)
		for (size_t i = 0; i < names.n; i++)
			if (!argv_has(tasks, names.v[i]))
				sb_argv_push(tasks, names.v[i]);
	if (tasks->n == 0 && bad == 0) {
		cli_fail("the job has no task (--task, --tasks, --all)");
		bad++;
	}
	*ret_uses_model = false;
	for (size_t i = 0; i < o->agents.n; i++) {
		struct agent_info ag = { NULL, NULL, NULL, NULL, 0, false };
		struct sb_error *err = NULL;
		json_t *models = json_array();

		if (argv_has(agents, o->agents.v[i])) {
			json_decref(models);
			continue;
		}
		if (agent_load(cli_home(), o->agents.v[i], &ag, &err) < 0) {
			cli_fail("%s", sb_error_message(err));
			sb_error_release(&err);
			json_decref(models);
			bad++;
			continue;
		}
		/* The reference and the agents that need no model run once per attempt. */
		if (ag.no_model || strcmp(ag.name, "reference") == 0 || strcmp(ag.name, "dummy") == 0) {
			json_array_append_new(models, json_string("none"));
		} else if (o->models.n == 0) {
			cli_fail("the agent '%s' needs a model: --model (repeatable) or models: in the "
				 "config", ag.name);
			bad++;
		} else {
			for (size_t m = 0; m < o->models.n; m++)
				json_array_append_new(models, json_string(o->models.v[m]));
			*ret_uses_model = true;
		}
		sb_argv_push(agents, o->agents.v[i]);
		json_object_set_new(agent_models, o->agents.v[i], models);
		agent_info_release(&ag);
	}
	if (*ret_uses_model)
		for (size_t m = 0; m < o->models.n; m++)
			if (!model_name_valid(o->models.v[m]) || check_model(o->models.v[m]) < 0)
				bad++;
	if (bad > 0) {
		cli_fail("%u problem%s with the job: nothing was built or run", bad,
		    bad == 1 ? "" : "s");
		return -1;
	}
	return 0;
}

/* N at a time from the machine: its cores, and its memory over a run's memory limit. */
static unsigned
default_parallel(char **ret_why)
{
	_cleanup_free_ char *mem = NULL;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t per_run = 0;
	struct sysinfo si;
	unsigned long long total = 0, free_disk = 0, disk_per_run = 0;
	unsigned n;

	{
		struct sb_error *err = NULL;
		const char *v = cli_setting("SSEBENCH_MEMORY", NULL);

		mem = sb_run_limit_resolve(SB_RUN_LIMIT_MEMORY, v, NULL);
		sb_error_release(&err);
	}
	if (mem == NULL || sb_parse_u64(mem, 1, UINT64_MAX, &per_run, NULL) < 0 || per_run == 0)
		per_run = (uint64_t)8 << 30;
	if (sysinfo(&si) == 0)
		total = (unsigned long long)si.totalram * si.mem_unit;
	n = cores > 0 ? (unsigned)cores : 1;
	if (total > 0 && total / per_run < n)
		n = (unsigned)(total / per_run);
	if (n < 1)
		n = 1;
	/*
	 * And the disk: each run may grow its two file systems to SSEBENCH_DISK each, and a
	 * run refuses to start without room for that beside the other runs' (disk.c:
	 * check_room), so more at a time than the results' disk holds would only make errors.
	 */
	{
		_cleanup_free_ char *dv = sb_run_limit_resolve(SB_RUN_LIMIT_DISK,
		    cli_setting("SSEBENCH_DISK", NULL), NULL);
		uint64_t disk = 0, need;
		struct statvfs vfs;

		if (dv != NULL && sb_parse_u64(dv, 1, UINT64_MAX, &disk, NULL) == 0 &&
		    statvfs(results_root(), &vfs) == 0) {
			need = 2 * disk + ((uint64_t)1 << 30);
			free_disk = (unsigned long long)vfs.f_bavail * vfs.f_frsize;
			if (free_disk / need < n)
				n = (unsigned)(free_disk / need);
			disk_per_run = need;
		}
	}
	if (n < 1)
		n = 1;
	if (n > SB_JOB_PARALLEL_MAX)
		n = SB_JOB_PARALLEL_MAX;
	*ret_why = sb_xasprintf("%ld core%s, %.1f GiB of memory, %.1f GiB a run (SSEBENCH_MEMORY), "
	    "%.1f GiB of disk, %.1f GiB a run (SSEBENCH_DISK)", cores, cores == 1 ? "" : "s",
	    (double)total / (1 << 30), (double)per_run / (1 << 30), (double)free_disk / (1 << 30),
	    (double)disk_per_run / (1 << 30));
	return n;
}

/* --- children --------------------------------------------------------------------------- */

/*
 * Start `ssebench ARGS` with its output in the job's logs/<log>, in a process group of its
 * own, getting SIGTERM if the job dies. *ret_pid. The environment is the job's, with the
 * results root made absolute so every run writes where the job reads.
 */
static int
start_child(struct job *j, const struct sb_argv *args, const char *log, pid_t *ret_pid,
    int *ret_pidfd, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT, env = SB_ARGV_INIT;
	_cleanup_close_ int logs = -1, fd = -1;
	struct sb_cmd c = SB_CMD_INIT;

	logs = openat(j->dir_fd, "logs", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (logs < 0)
		return sb_error_errno(err, errno, "open %s/logs", j->path);
	fd = openat(logs, log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return sb_error_errno(err, errno, "open %s/logs/%s", j->path, log);
	sb_argv_push(&argv, "ssebench");
	for (size_t i = 0; i < args->n; i++)
		sb_argv_push(&argv, args->v[i]);
	for (char **e = environ; *e != NULL; e++)
		if (strncmp(*e, "SSEBENCH_RESULTS=", 17) != 0)
			sb_argv_push(&env, *e);
	sb_argv_pushf(&env, "SSEBENCH_RESULTS=%s", j->results);
	c.path = j->self_exe;
	c.argv = argv.v;
	c.envp = env.v;
	c.stdout_fd = fd;
	c.stderr_fd = fd;
	c.flags = SB_CMD_NEW_PGRP | SB_CMD_DEATHSIG_TERM | SB_CMD_NO_GROUP_REAP;
	if (sb_cmd_start(&c, err) < 0)
		return -1;
	*ret_pid = c.pid;
	*ret_pidfd = c.pidfd; /* readable when it ends; -1 on a kernel without pidfds */
	return 0;
}

/*
 * Wait up to ms for one of the job's children (their pidfds) to end, or an interrupt; at
 * once when one already has. Without pidfds, the tick is the wait.
 */
static void
wait_children(const struct job *j, int ms)
{
	struct pollfd pfd[SB_JOB_PARALLEL_MAX + JOB_IMAGE_BUILDS + 1];
	nfds_t n = 0;

	for (size_t i = 0; i < j->n && n < SB_ARRAY_SIZE(pfd); i++)
		if (j->slots[i].pid > 0 && j->slots[i].pidfd >= 0)
			pfd[n++] = (struct pollfd){ .fd = j->slots[i].pidfd, .events = POLLIN };
	for (size_t i = 0; i < j->nbuilds && n < SB_ARRAY_SIZE(pfd); i++)
		if (j->builds[i].pid > 0 && j->builds[i].pidfd >= 0)
			pfd[n++] = (struct pollfd){ .fd = j->builds[i].pidfd, .events = POLLIN };
	(void)poll(n > 0 ? pfd : NULL, n, ms);
}

static void
close_pidfd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Reap pid if it has ended: 1 (and *status, a wait status), 0 if it runs, -1 if it is gone. */
static int
reap(pid_t pid, int *status)
{
	pid_t r = waitpid(pid, status, WNOHANG);

	return r == pid ? 1 : r == 0 ? 0 : -1;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --- progress --------------------------------------------------------------------------- */

/* UTC, to the millisecond (the events of a job are often less than a second apart): the
 * dialog record's own format. */
static void
utc_now(char out[32])
{
	sb_dialog_timestamp(out);
}
/* One event: a JSON line on stdout (--json), else a timestamped line (not on a live TTY). */
static void
job_event(struct job *j, json_t *ev)
{
	char ts[32];

	utc_now(ts);
	json_object_set_new(ev, "ts", json_string(ts));
	json_object_set_new(ev, "job", json_string(j->id));
	if (j->json_events) {
		char *s = json_dumps(ev, JSON_COMPACT | JSON_ENSURE_ASCII);

		if (s != NULL) {
			printf("%s\n", s);
			fflush(stdout);
			free(s);
		}
	}
	json_decref(ev);
}

/* A line for people: above the live status on a TTY, timestamped otherwise. */
static void
job_say(struct job *j, const char *fmt, ...) _printf_(2, 3);

static void
job_say(struct job *j, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;
	char ts[32];

	va_start(ap, fmt);
	msg = sb_xvasprintf(fmt, ap);
	va_end(ap);
	/* Escaped: a line may quote a run's result or reason. */
	if (j->live) {
		fprintf(stderr, "\r\033[K%s\n", cli_safe(msg));
		j->live_drawn = false;
		return;
	}
	utc_now(ts);
	fprintf(stderr, "%s %s\n", ts, cli_safe(msg));
}

static void
count_slots(const struct job *j, struct job_counts *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < j->n; i++) {
		const struct job_slot *s = &j->slots[i];

		c->total++;
		if (s->state == JOB_SLOT_RUNNING)
			c->running++;
		else if (s->state == JOB_SLOT_SKIPPED)
			c->skipped++;
		else if (s->state == JOB_SLOT_PENDING)
			c->pending++;
		else if (strcmp(s->status, "passed") == 0)
			c->passed++;
		else if (strcmp(s->status, "failed") == 0)
			c->failed++;
		else if (strcmp(s->status, "forfeit") == 0)
			c->forfeit++;
		else
			c->errors++;
	}
	c->done = c->passed + c->failed + c->forfeit + c->errors;
}

void
job_counts_of(const struct job *j, struct job_counts *c)
{
	count_slots(j, c);
}

static void
fmt_secs(char *out, size_t n, double s)
{
	unsigned long long t;

	if (!(s >= 0) || s > 1e9) {
		snprintf(out, n, "?");
		return;
	}
	t = (unsigned long long)(s + 0.5);
	if (t < 60)
		snprintf(out, n, "%llus", t);
	else if (t < 3600)
		snprintf(out, n, "%llum%02llus", t / 60, t % 60);
	else
		snprintf(out, n, "%lluh%02llum", t / 3600, t / 60 % 60);
}

/* The live status line (TTY only): counts, ETA, the runs going on. */
static void
draw_live(struct job *j, bool force)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(4096);
	struct job_counts c;
	struct winsize ws;
	double t = now_s();
	char eta[32], el[32];
	size_t width = 120;

	if (!j->live || (!force && t - j->live_at < JOB_LIVE_MS / 1000.0))
		return;
	j->live_at = t;
	count_slots(j, &c);
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20)
		width = ws.ws_col - 1;
	fmt_secs(el, sizeof(el), t - j->started);
	/* ETA: what is left, at the pace the finished runs went, N at a time. */
	if (j->finished_runs > 0 && j->parallel > 0)
		fmt_secs(eta, sizeof(eta), j->run_seconds / j->finished_runs *
		    (double)(c.pending + c.running) / j->parallel);
	else
		snprintf(eta, sizeof(eta), "?");
	(void)sb_buf_appendf(&b, NULL, "[%s] %zu/%zu done, %zu running: %zu passed, %zu failed, "
	    "%zu error%s%s; ETA %s", el, c.done + c.skipped, c.total, c.running, c.passed,
	    c.failed + c.forfeit, c.errors, c.errors == 1 ? "" : "s",
	    c.skipped ? " (some skipped)" : "", eta);
	for (size_t i = 0; i < j->n && b.len < width; i++) {
		const struct job_slot *s = &j->slots[i];
		char run[32];

		if (s->state != JOB_SLOT_RUNNING)
			continue;
		fmt_secs(run, sizeof(run), t - s->started);
		(void)sb_buf_appendf(&b, NULL, " | %s/%s#%u %s", cli_safe(s->task),
		    cli_safe(s->agent), s->attempt, run);
	}
	if (b.len > width)
		b.s[width] = '\0';
	fprintf(stderr, "\r\033[K%s", b.s);
	fflush(stderr);
	j->live_drawn = true;
}

/* --- running ---------------------------------------------------------------------------- */

/* Each ' ' or '/' in a log name becomes '_' (names come from the dataset and agents). */
static char *
log_name(const char *a, const char *b, const char *suffix)
{
	char *s = sb_xasprintf("%s-%s%s", a, b, suffix);

	for (char *p = s; *p != '\0'; p++)
		if (*p == '/' || *p == ' ' || (unsigned char)*p < 0x20)
			*p = '_';
	return s;
}

/* The options every child of the job gets. */
static void
push_common(const struct job *j, struct sb_argv *a)
{
	const json_t *opt = json_object_get(j->spec, "options");
	const char *runtime = json_string_value(json_object_get(opt, "runtime"));

	sb_argv_pushl(a, "--local", json_string_value(json_object_get(json_object_get(j->spec,
				      "dataset"), "path")), NULL);
	sb_argv_push(a, "--difficulty");
	sb_argv_pushf(a, "%lld", (long long)json_integer_value(json_object_get(opt, "difficulty")));
	sb_argv_pushl(a, "--egress", json_string_value(json_object_get(opt, "egress")), "--mode",
	    json_string_value(json_object_get(opt, "mode")), NULL);
	sb_argv_push(a, "--timeout");
	sb_argv_pushf(a, "%lld", (long long)json_integer_value(json_object_get(opt, "timeout")));
	if (runtime != NULL)
		sb_argv_pushl(a, "--runtime", runtime, NULL);
	/* A job from before backends existed ran on Docker. */
	sb_argv_pushl(a, "--backend",
	    json_string_value(json_object_get(opt, "backend")) ?: "docker", "--job", j->id, NULL);
}

/* What a finished run left: its category and, when it is an error, why. */
static void
outcome_of(struct job_slot *s, int wstatus, const char *log)
{
	_cleanup_close_ int fd = s->dir != NULL ? sb_open_dir(s->dir, NULL) : -1;
	json_t *sum = NULL;
	int code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);

	free(s->status);
	free(s->reason);
	s->status = NULL;
	s->reason = NULL;
	if (fd < 0 || sb_json_load_file_at(fd, "summary.json", SB_JSON_FILE_MAX, &sum, NULL) < 0) {
		s->status = sb_xstrdup("error");
		s->reason = sb_xasprintf("the run ended (exit %d) with no summary: see logs/%s", code,
		    log);
		return;
	}
	{
		json_auto_t *row = run_summary_row(sum, s->dir);
		const char *st = json_string_value(json_object_get(row, "status"));
		const char *out = json_string_value(json_object_get(json_object_get(sum, "isolation"),
		    "outcome"));

		if (out != NULL && strcmp(out, "forfeit") == 0 && json_is_true(json_object_get(row, "scored")))
			s->status = sb_xstrdup("forfeit");
		else if (!json_is_true(json_object_get(row, "scored")))
			s->status = sb_xstrdup("error");
		else
			s->status = sb_xstrdup(st != NULL && strcmp(st, "passed") == 0 ? "passed" : "failed");
		if (strcmp(s->status, "error") == 0) {
			const char *msg = json_string_value(json_object_get(json_object_get(sum,
			    "patch_result"), "error_msg"));

			s->reason = sb_xstrdup(msg != NULL ? msg : "not scored");
		}
	}
	json_decref(sum);
}

/* Start the run of slot s. */
static int
start_run(struct job *j, struct job_slot *s, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ char *log = NULL;
	struct stat st;

	/* A fresh run id, whose directory is not there yet (ids have a second's grain). */
	for (int tries = 0;; tries++) {
		free(s->run_id);
		free(s->dir);
		s->run_id = run_id_new();
		s->dir = sb_xasprintf("%s/%s/%s/%s/%s", j->results, s->task, s->model, s->agent,
		    s->run_id);
		if (lstat(s->dir, &st) < 0 || tries > 20)
			break;
	}
	log = sb_xasprintf("%s.log", s->run_id);
	sb_argv_push(&a, "run");
	push_common(j, &a);
	sb_argv_pushl(&a, "--task", s->task, "--agent", s->agent, "--model", s->model, "--run-id",
	    s->run_id, "--images-ready", NULL);
	sb_argv_push(&a, "--attempt");
	sb_argv_pushf(&a, "%u", s->attempt);
	if (start_child(j, &a, log, &s->pid, &s->pidfd, err) < 0)
		return -1;
	s->state = JOB_SLOT_RUNNING;
	s->started = now_s();
	free(s->status);
	free(s->reason);
	s->status = s->reason = NULL;
	return 0;
}

/* A run of slot s ended with wstatus. */
static void
run_ended(struct job *j, struct job_slot *s, int wstatus)
{
	_cleanup_free_ char *log = sb_xasprintf("%s.log", s->run_id);
	int code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
	double took = now_s() - s->started;
	bool interrupted = code == SB_EXIT_INTERRUPTED || code == 143 ||
	    (WIFSIGNALED(wstatus) && j->stopping);
	char secs[32];

	s->pid = -1;
	close_pidfd(&s->pidfd);
	fmt_secs(secs, sizeof(secs), took);
	if (interrupted) {
		/* Interrupted: not a result. Its slot runs again when the job is resumed. */
		json_array_append_new(s->tries, json_pack("{s:s, s:s, s:s}", "run_id", s->run_id,
		    "status", "interrupted", "dir", s->dir));
		free(s->run_id);
		free(s->dir);
		s->run_id = s->dir = NULL;
		s->state = JOB_SLOT_PENDING;
		job_say(j, "interrupted: %s (%s)", s->key, secs);
		job_event(j, json_pack("{s:s, s:s}", "event", "run_interrupted", "slot", s->key));
		return;
	}
	outcome_of(s, wstatus, log);
	s->state = JOB_SLOT_DONE;
	j->finished_runs++;
	j->run_seconds += took;
	json_array_append_new(s->tries, json_pack("{s:s, s:s, s:o}", "run_id", s->run_id,
	    "status", s->status, "reason", sb_json_string_or_null(s->reason)));
	job_say(j, "%s: %s %s (%s)%s%s", s->status, s->key, s->run_id, secs,
	    s->reason ? ": " : "", s->reason ? s->reason : "");
	job_event(j, json_pack("{s:s, s:s, s:s, s:s, s:s, s:f, s:o}", "event", "run_finished",
	    "slot", s->key, "run_id", s->run_id, "dir", s->dir, "status", s->status, "seconds",
	    took, "reason", sb_json_string_or_null(s->reason)));
}

/* Stop everything (a second Ctrl-C): kill the runs, and the job's containers. */
static void
kill_all(struct job *j)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ char *out = NULL, *filter = sb_xasprintf("label=ssebench.job=%s", j->id);
	struct sb_error *err = NULL;

	for (size_t i = 0; i < j->n; i++)
		if (j->slots[i].pid > 0)
			(void)kill(-j->slots[i].pid, SIGKILL);
	for (size_t i = 0; i < j->nbuilds; i++)
		if (j->builds[i].pid > 0)
			(void)kill(-j->builds[i].pid, SIGKILL);
	sb_argv_pushl(&a, "ps", "-aq", "--filter", filter, NULL);
	if (docker_output(&a, &out, &err) == 0 && out != NULL && *out != '\0') {
		_cleanup_argv_ struct sb_argv rm = SB_ARGV_INIT;
		char *save = NULL;

		sb_argv_pushl(&rm, "rm", "-f", NULL);
		for (char *id = strtok_r(out, "\n", &save); id != NULL; id = strtok_r(NULL, "\n", &save))
			sb_argv_push(&rm, id);
		(void)docker_output(&rm, NULL, NULL);
	}
	sb_error_release(&err);
}

/* Interrupts: the first stops the runs gracefully, the second kills. */
static void
check_interrupt(struct job *j)
{
	int n = sb_sig_interrupt_count();

	if (n >= 1 && !j->stopping) {
		j->stopping = true;
		job_say(j, "interrupted: stopping the runs (Ctrl-C again to kill them); resume with "
			   "ssebench jobs resume %s", j->id);
		for (size_t i = 0; i < j->n; i++)
			if (j->slots[i].pid > 0)
				(void)kill(-j->slots[i].pid, SIGINT);
		for (size_t i = 0; i < j->nbuilds; i++)
			if (j->builds[i].pid > 0)
				(void)kill(-j->builds[i].pid, SIGINT);
	}
	if (n >= 2 && !j->killed) {
		j->killed = true;
		job_say(j, "killing the runs and removing the job's containers");
		kill_all(j);
	}
}

static void
save_or_warn(struct job *j)
{
	struct sb_error *err = NULL;

	if (job_save_index(j, &err) < 0) {
		sb_log(SB_LOG_ERROR, "%s", sb_error_message(err));
		sb_error_release(&err);
	}
}

/* --- the image phase -------------------------------------------------------------------- */

/*
 * Build the images of every (task, agent) the pending slots need, before any run: first
 * one pair per base image, alone (the base and the runtime image are built then), then the
 * rest, JOB_IMAGE_BUILDS tasks at a time, each task's agents one after another (they share
 * its tool image). A pair that fails skips its slots, with the log named.
 */
static void
build_images(struct job *j)
{
	struct job_build *b;
	size_t running = 0;

	/* The pairs, grouped by task. */
	j->builds = sb_xcalloc(j->n + 1, sizeof(*j->builds));
	j->nbuilds = 0;
	for (size_t i = 0; i < j->n; i++) {
		const struct job_slot *s = &j->slots[i];
		bool seen = false;

		if (s->state != JOB_SLOT_PENDING)
			continue;
		for (size_t k = 0; k < j->nbuilds && !seen; k++)
			seen = strcmp(j->builds[k].task, s->task) == 0 &&
			    strcmp(j->builds[k].agent, s->agent) == 0;
		if (seen)
			continue;
		b = &j->builds[j->nbuilds++];
		b->task = s->task;
		b->agent = s->agent;
		b->model = s->model;
		b->pid = -1;
		b->pidfd = -1;
		b->base = json_string_value(json_object_get(json_object_get(j->spec, "bases"), s->task));
	}
	if (j->nbuilds == 0)
		return;
	job_say(j, "building the images of %zu task and agent pair%s (logs in %s/logs)",
	    j->nbuilds, j->nbuilds == 1 ? "" : "s", j->path);
	/* Order: one pair per base first. */
	for (size_t i = 0; i < j->nbuilds; i++) {
		bool first = true;

		for (size_t k = 0; k < i && first; k++)
			first = j->builds[k].base == NULL || j->builds[i].base == NULL ||
			    strcmp(j->builds[k].base, j->builds[i].base) != 0;
		j->builds[i].first = first;
	}
	for (;;) {
		bool any_first_left = false, started = false;
		size_t left = 0;

		check_interrupt(j);
		for (size_t i = 0; i < j->nbuilds; i++) {
			b = &j->builds[i];
			if (b->pid > 0) {
				int ws = 0, r = reap(b->pid, &ws);

				if (r != 0) {
					close_pidfd(&b->pidfd);
					b->pid = -1;
					b->done = true;
					b->ok = r == 1 && WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
					running--;
				}
			}
			if (!b->done) {
				left++;
				any_first_left |= b->first;
			}
		}
		if (left == 0 && running == 0)
			break;
		if (j->stopping) {
			if (running == 0)
				break;
			wait_children(j, JOB_TICK_MS);
			continue;
		}
		for (size_t i = 0; i < j->nbuilds && !started; i++) {
			bool task_busy = false;

			b = &j->builds[i];
			if (b->done || b->pid > 0)
				continue;
			/* Firsts alone; the rest a few at a time, one per task. */
			if (b->first ? running > 0 : (any_first_left || running >= JOB_IMAGE_BUILDS))
				continue;
			for (size_t k = 0; k < j->nbuilds; k++)
				task_busy |= j->builds[k].pid > 0 && strcmp(j->builds[k].task, b->task) == 0;
			if (task_busy)
				continue;
			{
				_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
				_cleanup_free_ char *log = log_name(b->task, b->agent, ".images.log");
				struct sb_error *err = NULL;

				sb_argv_push(&a, "run");
				push_common(j, &a);
				sb_argv_pushl(&a, "--task", b->task, "--agent", b->agent, "--model",
				    b->model, "--images-only", NULL);
				b->log = sb_xstrdup(log);
				if (start_child(j, &a, log, &b->pid, &b->pidfd, &err) < 0) {
					job_say(j, "images of %s and %s: %s", b->task, b->agent,
					    sb_error_message(err));
					sb_error_release(&err);
					b->done = true;
					b->ok = false;
					continue;
				}
				running++;
				started = true;
				b->t0 = now_s();
			}
		}
		if (!started)
			wait_children(j, JOB_TICK_MS);
	}
	for (size_t i = 0; i < j->nbuilds; i++) {
		b = &j->builds[i];
		if (!b->done)
			continue;
		if (b->ok) {
			char secs[32];

			fmt_secs(secs, sizeof(secs), now_s() - b->t0);
			job_say(j, "images ready: %s, %s", b->task, b->agent);
			continue;
		}
		job_say(j, "images FAILED: %s, %s: its runs are skipped (logs/%s)", b->task, b->agent,
		    b->log ? b->log : "?");
		job_event(j, json_pack("{s:s, s:s, s:s, s:o}", "event", "images_failed", "task",
		    b->task, "agent", b->agent, "log", sb_json_string_or_null(b->log)));
		for (size_t k = 0; k < j->n; k++) {
			struct job_slot *s = &j->slots[k];

			if (s->state == JOB_SLOT_PENDING && strcmp(s->task, b->task) == 0 &&
			    strcmp(s->agent, b->agent) == 0) {
				s->state = JOB_SLOT_SKIPPED;
				free(s->reason);
				s->reason = sb_xasprintf("its images could not be built (logs/%s)",
				    b->log ? b->log : "?");
			}
		}
	}
	save_or_warn(j);
}

/* --- the scheduler ---------------------------------------------------------------------- */

/* Run every pending slot, j->parallel at a time. Exit status of the job. */
static int
schedule(struct job *j)
{
	struct job_counts c;
	size_t running = 0;

	sb_sig_set_deferred(SB_SIG_DEFER_ALL);
	j->started = now_s();
	j->live = !j->json_events && isatty(STDERR_FILENO);
	build_images(j);
	for (;;) {
		bool changed = false;

		check_interrupt(j);
		for (size_t i = 0; i < j->n; i++) {
			struct job_slot *s = &j->slots[i];
			int ws;

			if (s->state != JOB_SLOT_RUNNING || s->pid <= 0 || reap(s->pid, &ws) == 0)
				continue;
			running--;
			run_ended(j, s, ws);
			changed = true;
		}
		while (!j->stopping && running < j->parallel) {
			struct job_slot *s = NULL;
			struct sb_error *err = NULL;

			/*
			 * A task that no run has going, if there is one: two runs of one task
			 * share its images, and what two runs on one host still share (the
			 * kernel's global figures; tests/integrity/README.md, "Shared across
			 * runs") carries least between runs of different tasks.
			 */
			for (int pass = 0; pass < 2 && s == NULL; pass++)
				for (size_t i = 0; i < j->n && s == NULL; i++) {
					bool busy = false;

					if (j->slots[i].state != JOB_SLOT_PENDING || j->slots[i].pid >= 0)
						continue;
					for (size_t k = 0; pass == 0 && k < j->n && !busy; k++)
						busy = j->slots[k].state == JOB_SLOT_RUNNING &&
						    strcmp(j->slots[k].task, j->slots[i].task) == 0;
					if (!busy)
						s = &j->slots[i];
				}
			if (s == NULL)
				break;
			if (start_run(j, s, &err) < 0) {
				s->state = JOB_SLOT_DONE;
				s->status = sb_xstrdup("error");
				s->reason = sb_xasprintf("could not start: %s", sb_error_message(err));
				sb_error_release(&err);
			} else {
				running++;
				job_say(j, "started: %s %s", s->key, s->run_id);
				job_event(j, json_pack("{s:s, s:s, s:s, s:s}", "event", "run_started",
				    "slot", s->key, "run_id", s->run_id, "dir", s->dir));
			}
			changed = true;
		}
		if (changed)
			save_or_warn(j);
		if (running == 0)
			break;
		draw_live(j, changed);
		wait_children(j, JOB_TICK_MS);
	}
	if (j->live && j->live_drawn)
		fprintf(stderr, "\r\033[K");
	/* Slots left running by a killed run go back to pending: the index must say so. */
	for (size_t i = 0; i < j->n; i++)
		if (j->slots[i].state == JOB_SLOT_RUNNING)
			j->slots[i].state = JOB_SLOT_PENDING;
	save_or_warn(j);
	sb_sig_set_deferred(SB_SIG_DEFER_NONE);
	count_slots(j, &c);
	job_event(j, json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b}", "event",
	    "job_finished", "runs", (json_int_t)c.total, "passed", (json_int_t)c.passed, "failed",
	    (json_int_t)c.failed, "forfeit", (json_int_t)c.forfeit, "errors", (json_int_t)c.errors,
	    "skipped", (json_int_t)c.skipped, "not_run", (json_int_t)c.pending, "interrupted",
	    j->stopping));
	if (!j->json_events) {
		printf("job %s: %zu run%s: %zu passed, %zu failed, %zu forfeit, %zu error%s; %zu "
		       "skipped, %zu not run\n",
		    cli_safe(j->id), c.total, c.total == 1 ? "" : "s", c.passed, c.failed, c.forfeit, c.errors,
		    c.errors == 1 ? "" : "s", c.skipped, c.pending);
		if (c.pending > 0)
			printf("resume: ssebench jobs resume %s\n", cli_safe(j->id));
		printf("report: ssebench report %s\n", cli_safe(j->id));
	}
	for (size_t i = 0; i < j->nbuilds; i++)
		free(j->builds[i].log);
	free(j->builds);
	j->builds = NULL;
	j->nbuilds = 0;
	if (j->stopping)
		return SB_EXIT_INTERRUPTED;
	return c.errors + c.skipped + c.pending > 0 ? SB_EXIT_FAILURE : SB_EXIT_OK;
}

/* The path of this program, for the runs it starts. */
static char *
self_exe(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return sb_xstrdup(buf);
}

/* The results root, absolute (the runs are started elsewhere than the job's directory). */
static char *
abs_results(struct sb_error **err)
{
	char *r;

	if (sb_mkdir_p(results_root(), 0755, err) < 0)
		return NULL;
	r = realpath(results_root(), NULL);
	if (r == NULL)
		sb_error_errno(err, errno, "resolve '%s'", results_root());
	return r;
}

int
job_execute(struct job *j, unsigned parallel, bool json_events)
{
	struct sb_error *err = NULL;
	_cleanup_free_ char *results = abs_results(&err);
	int rc;

	if (results == NULL || job_lock(j, &err) < 0) {
		rc = cli_fail("%s", sb_error_message(err));
		sb_error_release(&err);
		return rc;
	}
	j->self_exe = self_exe();
	if (j->self_exe == NULL)
		return cli_fail("cannot find this program's path (/proc/self/exe)");
	j->results = results;
	j->parallel = parallel;
	j->json_events = json_events;
	if (mkdirat(j->dir_fd, "logs", 0755) < 0 && errno != EEXIST) {
		free(j->self_exe);
		return cli_fail("mkdir %s/logs: %s", j->path, strerror(errno));
	}
	rc = schedule(j);
	free(j->self_exe);
	j->self_exe = NULL;
	j->results = NULL;
	return rc;
}

/* A new job: resolve, write job.json and index.json, run. */
int
job_run(struct run_opts *o)
{
	_cleanup_diags_ struct sb_diags diags = SB_DIAGS_INIT;
	_cleanup_argv_ struct sb_argv tasks = SB_ARGV_INIT, agents = SB_ARGV_INIT;
	_cleanup_free_ char *root = job_root(), *why = NULL, *stamp = NULL, *ds_name = NULL;
	json_auto_t *agent_models = json_object(), *bases = json_object();
	struct sb_dataset *ds = NULL;
	struct sb_error *err = NULL;
	struct job j;
	bool uses_model = false;
	unsigned attempts, parallel;
	size_t total = 0;
	int rc = SB_EXIT_FAILURE;
	char ts[32];

	memset(&j, 0, sizeof(j));
	j.dir_fd = j.lock_fd = -1;
	if (o->config != NULL && load_config(o, &err) < 0)
		goto fail;
	if (o->local == NULL)
		o->local = cli_default_dataset();
	if (sb_dataset_load(o->local, &ds, &diags, &err) < 0)
		goto fail;
	if (o->agents.n == 0) {
		rc = cli_fail("the job has no agent (--agent, or agents: in the config)");
		goto out;
	}
	if (resolve_matrix(o, ds, &tasks, &agents, agent_models, &uses_model) < 0)
		goto out;
	/* A task that does not load is named, like an unknown one, before anything runs. */
	for (size_t i = 0; i < tasks.n; i++)
		for (size_t k = 0; k < ds->n; k++)
			if (strcmp(ds->tasks[k]->name, tasks.v[i]) == 0) {
				if (ds->tasks[k]->config == NULL) {
					sb_diags_print(&diags, stderr);
					rc = cli_fail("the task '%s' is not valid (see above)", tasks.v[i]);
					goto out;
				}
				json_object_set_new(bases, tasks.v[i], json_string(ds->tasks[k]->base));
			}
	attempts = o->attempts > 0 ? o->attempts : 1;
	for (size_t a = 0; a < agents.n; a++)
		total += json_array_size(json_object_get(agent_models, agents.v[a]));
	total *= tasks.n * attempts;
	if (total > SB_JOB_RUNS_MAX) {
		rc = cli_fail("the job has %zu runs, more than %d", total, SB_JOB_RUNS_MAX);
		goto out;
	}
	parallel = o->jobs > 0 ? o->jobs : default_parallel(&why);
	{
		if ((rc = cli_need_engine()) != 0)
			goto out;
	}
	/* The job directory. */
	stamp = run_id_new();
	j.id = sb_xasprintf("job-%s", stamp);
	j.path = sb_xasprintf("%s/%s", root, j.id);
	if (sb_mkdir_p(root, 0755, &err) < 0)
		goto fail;
	if (mkdir(j.path, 0755) < 0) {
		rc = cli_fail("mkdir %s: %s", j.path, strerror(errno));
		goto out;
	}
	j.dir_fd = sb_open_dir(j.path, &err);
	if (j.dir_fd < 0)
		goto fail;
	{
		const char *slash = strrchr(ds->path, '/');
		_cleanup_free_ char *ds_abs = realpath(ds->path, NULL);
		json_t *t = json_array(), *ag = json_array(), *models = json_array();

		ds_name = sb_xstrdup(slash != NULL ? slash + 1 : ds->path);
		for (size_t i = 0; i < tasks.n; i++)
			json_array_append_new(t, json_string(tasks.v[i]));
		for (size_t i = 0; i < agents.n; i++)
			json_array_append_new(ag, json_string(agents.v[i]));
		for (size_t i = 0; i < o->models.n; i++)
			json_array_append_new(models, json_string(o->models.v[i]));
		utc_now(ts);
		j.spec = json_pack("{s:i, s:s, s:s, s:s, s:{s:s, s:s, s:o}, s:{s:o, s:o, s:o, s:O, "
				   "s:I}, s:{s:I, s:s, s:I, s:s, s:o}, s:I, s:O}",
		    "version", JOB_VERSION, "job_id", j.id, "created_at", ts, "ssebench_version",
		    PACKAGE_VERSION, "dataset", "path", ds_abs != NULL ? ds_abs : ds->path, "name",
		    ds_name, "version", sb_json_string_or_null(ds->version), "matrix", "tasks", t,
		    "agents", ag, "models", models, "agent_models", agent_models, "attempts",
		    (json_int_t)attempts, "options", "difficulty", (json_int_t)o->difficulty,
		    "egress", o->egress, "timeout", (json_int_t)o->timeout, "mode", o->mode,
		    "runtime", sb_json_string_or_null(o->runtime), "jobs", (json_int_t)parallel,
		    "bases", bases);
		json_object_set_new(json_object_get(j.spec, "options"), "backend",
		    json_string(o->backend));
		if (sb_json_write_atomic_at(j.dir_fd, "job.json", j.spec, 0644, &err) < 0)
			goto fail;
	}
	/* The slots: task by task, agent by agent, model by model, attempt by attempt. */
	j.slots = sb_xcalloc(total + 1, sizeof(*j.slots));
	for (size_t t = 0; t < tasks.n; t++)
		for (size_t a = 0; a < agents.n; a++) {
			const json_t *models = json_object_get(agent_models, agents.v[a]);

			for (size_t m = 0; m < json_array_size(models); m++)
				for (unsigned k = 1; k <= attempts; k++) {
					struct job_slot *s = &j.slots[j.n++];
					const char *model = json_string_value(json_array_get(models, m));

					s->task = sb_xstrdup(tasks.v[t]);
					s->agent = sb_xstrdup(agents.v[a]);
					s->model = sb_xstrdup(model);
					s->attempt = k;
					s->key = sb_xasprintf("%s/%s/%s/%u", s->task, s->agent, model, k);
					s->state = JOB_SLOT_PENDING;
					s->tries = json_array();
					s->pid = -1;
					s->pidfd = -1;
				}
		}
	if (job_save_index(&j, &err) < 0)
		goto fail;
	if (!o->json_events) {
		fprintf(stderr, "job %s: %zu task%s x %zu agent%s x %zu model%s x %u attempt%s = %zu "
				"run%s, %u at a time%s%s%s\n",
		    cli_safe(j.id), tasks.n, tasks.n == 1 ? "" : "s", agents.n, agents.n == 1 ? "" : "s",
		    o->models.n > 0 ? o->models.n : 1, o->models.n > 1 ? "s" : "", attempts,
		    attempts == 1 ? "" : "s", j.n, j.n == 1 ? "" : "s", parallel, why ? " (" : "",
		    why ? why : "", why ? ")" : "");
		fprintf(stderr, "job directory: %s\n", cli_safe(j.path));
	}
	j.json_events = o->json_events;
	job_event(&j, json_pack("{s:s, s:s, s:I, s:I}", "event", "job_started", "dir", j.path,
	    "runs", (json_int_t)j.n, "parallel", (json_int_t)parallel));
	(void)uses_model;
	rc = job_execute(&j, parallel, o->json_events);
	goto out;
fail:
	rc = cli_fail("%s", sb_error_message(err));
	sb_error_release(&err);
out:
	job_release(&j);
	sb_dataset_free(ds);
	return rc;
}

/* Resume: what is missing runs; with retry_errors, what ended in a harness error too. */
int
job_resume(const char *which, bool retry_errors, unsigned parallel, bool json_events)
{
	struct sb_error *err = NULL;
	struct job j;
	size_t again = 0;
	int rc;

	if (job_open(which, true, &j, &err) < 0) {
		rc = cli_fail("%s", sb_error_message(err));
		sb_error_release(&err);
		job_release(&j);
		return rc;
	}
	for (size_t i = 0; i < j.n; i++) {
		struct job_slot *s = &j.slots[i];

		/* A slot a killed job left running has no result: it runs again. */
		if (s->state == JOB_SLOT_RUNNING)
			s->state = JOB_SLOT_PENDING;
		/* Only a harness error is retried: never a forfeit or a graded failure. */
		if (retry_errors && s->state == JOB_SLOT_DONE && strcmp(s->status, "error") == 0) {
			json_array_append_new(s->tries, json_pack("{s:s, s:s, s:s}", "run_id",
			    s->run_id, "status", "error (retried)", "dir", s->dir));
			s->state = JOB_SLOT_PENDING;
		}
		if (retry_errors && s->state == JOB_SLOT_SKIPPED)
			s->state = JOB_SLOT_PENDING;
		again += s->state == JOB_SLOT_PENDING;
	}
	if (again == 0) {
		printf("job %s: nothing to run%s\n", cli_safe(j.id),
		    retry_errors ? "" : " (--retry-errors reruns the runs that ended in an error)");
		job_release(&j);
		return SB_EXIT_OK;
	}
	if (parallel == 0) {
		json_int_t p = json_integer_value(json_object_get(j.spec, "jobs"));

		parallel = p > 0 && p <= SB_JOB_PARALLEL_MAX ? (unsigned)p : 1;
	}
	if (!json_events)
		fprintf(stderr, "job %s: %zu of %zu runs to go, %u at a time\n", cli_safe(j.id), again, j.n,
		    parallel);
	rc = job_execute(&j, parallel, json_events);
	job_release(&j);
	return rc;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* run.h: what `ssebench run` and the `runs` commands share. */
#ifndef SSEBENCH_RUN_H
#define SSEBENCH_RUN_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "sb/common.h"
#include "sb/error.h"
#include "sb/verdict.h"

/* Where the task image holds the scripts' own copy of itself (setup-tool-layer.sh, step 6). */
#define RUNNER_ROOT "/var/lib/ssebench-root/image"

#include "sb/argv.h"

/*
 * What `ssebench run` was asked. One task, agent and model (and one attempt) is one run,
 * as always; more of any (or --all, --tasks, --attempts, --jobs, --config) is a job
 * (job.c). The lists hold what was given, in order.
 */
struct run_opts {
	char *local, *task, *agent, *model, *run_id, *mode, *egress, *runtime;
	char *backend; /* "docker" or "kubernetes" (--backend, SSEBENCH_BACKEND) */
	unsigned difficulty;
	uint64_t timeout;
	bool keep, require_pass;
	bool difficulty_set, egress_set, timeout_set, mode_set; /* given, not defaults */
	/* A job: every --task, --tasks pattern, --agent and --model given. */
	struct sb_argv tasks, task_patterns, agents, models;
	bool all, json_events;
	bool json_printed; /* run --json of one run: its object is on stdout */
	unsigned attempts, jobs; /* 0: not given */
	char *config;
	/* A run started by a job (hidden options): its id and attempt, and whether the job
	 * built the images (--images-ready) or this is the job's image build (--images-only). */
	char *job_id;
	unsigned attempt;
	bool images_only, images_ready;
};

/* `runs list|inspect|logs|stop|remove|exec` on the Kubernetes backend (cmd-runs-k8s.c). */
struct cli_command;
int cmd_runs_k8s(const struct cli_command *cmd, int argc, char **argv);

/* Run a job (job.c): the matrix o describes, in results/jobs/<id>/. Exit status. */
int job_run(struct run_opts *o);

/* Is name one of the models (the YAML files of models/)? Prints why not, with the closest. */
int check_model(const char *name);

/* UTC "YYYYMMDD-HHMMSS-xxxxxx" (6 random hex digits). */
char *run_id_new(void);

/* The results root: $SSEBENCH_RESULTS, else ./results. */
const char *results_root(void);

/*
 * The verdict of a result.json (docs/upstream.md, "Grading"), by the evaluator's own rule
 * (sb/verdict.h, sb_grade_decide, over sb_grade_checks_from_json): "failed" when a check
 * that ran failed (the oracle's too) or the evaluator's budget ran out, "error" when no
 * check ran or its checks cannot be read (a member of the wrong type, PoC counts out of
 * range), "passed" otherwise.
 */
const char *run_status_of(const json_t *result);

/*
 * The result a run leaves on the host (outcome.c), from what its container wrote: result
 * (result.json, or NULL) and iso (isolation.json, or NULL), both consumed, whatever their
 * shape; the egress the run claimed; whether the user interrupted it; and foreign (NULL, or
 * what else the CLI found on the run's network). No result, a status no run has, a pass the
 * recorded checks do not show, an isolation record that is missing, inconsistent or not
 * scored, a foreign container or an interrupt: each is an error (or a forfeit), never a
 * pass. *ret is the outcome; result.json's "scored" says the same.
 */
json_t *run_outcome(json_t *result, json_t *iso, const char *egress, bool interrupted,
    const char *foreign, enum sb_iso_outcome *ret);

/*
 * The row `runs results` shows for a summary.json s found in dir: run_id, task, model,
 * agent, mode, egress, reference_run, status, started_at, dir, scored and tier. Members of
 * the wrong type are null; a tier counts only in a scored summary, and only "restricted" or
 * "open" (a run with no tier is listed as not scored).
 */
json_t *run_summary_row(const json_t *s, const char *dir);

/* The answer-seeking scan's flags of a run (summary.json "flags", "flags_total"): nothing
 * when there are none, else a line with the count and the first five, escaped. */
void run_print_flags(FILE *out, const json_t *flags, json_int_t total);

/*
 * Is the directory dfd a run directory (it holds summary.json, build.log or archive/)? A
 * walk of the results lists it and never goes below it: its archive/ is what the agent
 * left, where a summary.json it planted must not count as a run.
 */
bool run_dir_is(int dfd);

/*
 * The seccomp profile of a run container that runs task scripts (seccomp.c): Docker's
 * default refuses what the runner's sandbox needs. A new reference.
 */
json_t *seccomp_profile_json(void);

#endif

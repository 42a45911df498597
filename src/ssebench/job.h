/* SPDX-License-Identifier: Apache-2.0 */
/* job.h: jobs, many runs of a matrix with a directory of their own (job.c, docs/jobs.md). */
#ifndef SSEBENCH_JOB_H
#define SSEBENCH_JOB_H

#include <jansson.h>
#include <sys/types.h>

#include "sb/common.h"
#include "sb/error.h"

enum job_slot_state {
	JOB_SLOT_PENDING, /* to run (again, after an interrupt) */
	JOB_SLOT_RUNNING, /* a run is going on (or was, when the job died) */
	JOB_SLOT_DONE,	  /* its run ended: status passed, failed, forfeit or error */
	JOB_SLOT_SKIPPED, /* its images could not be built: reason says why */
};

/* One run of the matrix: a task, an agent, a model, an attempt. */
struct job_slot {
	char *key; /* "task/agent/model/attempt" */
	char *task, *agent, *model;
	unsigned attempt;
	enum job_slot_state state;
	char *run_id, *dir;   /* its (last) run */
	char *status, *reason;
	json_t *tries;	      /* every run it had: run_id, status */
	/* While the job runs. */
	pid_t pid; /* its `ssebench run`, or -1 */
	int pidfd; /* and a descriptor that tells when it ends, or -1 */
	double started;
};

/* One image build of the job: a task and an agent. */
struct job_build {
	const char *task, *agent, *model, *base;
	char *log;
	pid_t pid;
	int pidfd;
	bool first, done, ok;
	double t0;
};

struct job {
	char *id, *path; /* job-<stamp>, its directory */
	int dir_fd, lock_fd;
	json_t *spec;	 /* job.json */
	struct job_slot *slots;
	size_t n;
	/* While it runs. */
	char *self_exe;
	const char *results; /* the results root, absolute */
	unsigned parallel;
	bool json_events, live, live_drawn, stopping, killed;
	double started, live_at, run_seconds;
	size_t finished_runs;
	struct job_build *builds;
	size_t nbuilds;
};

struct job_counts {
	size_t total, done, running, pending, skipped, passed, failed, forfeit, errors;
};

/* <results>/jobs (malloc'd). */
char *job_root(void);

const char *job_slot_state_name(enum job_slot_state s);

/*
 * Open a job (an id, or a path to its directory): job.json, and with index its
 * index.json. A newer version is refused (EPROTO); a corrupt file is reported (EINVAL),
 * never guessed around. j is released with job_release in every case.
 */
int job_open(const char *which, bool index, struct job *j, struct sb_error **err);
void job_release(struct job *j);

/* Rewrite index.json atomically from j->slots. */
int job_save_index(struct job *j, struct sb_error **err);

/* Is a process running the job now (it holds the job's lock)? */
bool job_is_running(const struct job *j);

void job_counts_of(const struct job *j, struct job_counts *c);

/* Run what the job has pending, parallel at a time. Exit status. */
int job_execute(struct job *j, unsigned parallel, bool json_events);

/* `ssebench jobs resume`: run what is missing (and with retry_errors, the harness errors
 * again); parallel 0: as the job was made. Exit status. */
int job_resume(const char *which, bool retry_errors, unsigned parallel, bool json_events);

#endif

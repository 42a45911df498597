/* SPDX-License-Identifier: Apache-2.0 */
/*
 * work.h: the helper's workers, as helper.c and main.c call them.
 *
 * Each worker runs in a child the helper forked for one request, does it, writes the reply
 * itself and returns the child's exit status (enum work_status). The work is split by job:
 *   - runner.c: task scripts as the runner (the bencher actions, scratch copies, runner
 *     sessions, checks on hidden material);
 *   - capture.c: reading the agent's files as the agent (/diff, /files, /agent/dialog) and
 *     preparing grading;
 *   - agent.c: the agent's shell, and the end of the agent phase;
 *   - setup.c: what the helper prepares at start-up, before any listener exists.
 * Everything a worker needs comes from struct helper (read only) and its struct job_spec.
 */
#ifndef SSEBENCH_DAEMON_WORK_H
#define SSEBENCH_DAEMON_WORK_H

#include "helper.h"

/* Rounds of sb_proc_kill_uid for the runner's and the agent's processes. */
#define KILL_ROUNDS 20
/* How long the agent's cgroup may take to freeze (a task in an uninterruptible wait
 * freezes when it leaves it), and its kill to empty it. */
#define FREEZE_TIMEOUT_MS 5000

/* Worker exit statuses: the helper answers for a worker that could not (status 1). */
enum work_status {
	WORK_DONE = 0,	  /* answered; the operation succeeded */
	WORK_NOREPLY = 1, /* could not answer */
	WORK_FAILED = 2,  /* answered with a failure */
};

/* After an error reply: WORK_FAILED, or WORK_NOREPLY if even that could not be sent. */
static inline int
work_failed(int reply_rc)
{
	return reply_rc < 0 ? WORK_NOREPLY : WORK_FAILED;
}

/* After a successful reply: WORK_DONE, or WORK_NOREPLY if it could not be sent. */
static inline int
work_done(int reply_rc)
{
	return reply_rc < 0 ? WORK_NOREPLY : WORK_DONE;
}

/* The workers, one per request type (in a forked child; each writes its reply). */
int work_bencher(struct helper *h, struct job_spec *j);	  /* runner.c */
int work_capture(struct helper *h, struct job_spec *j);	  /* capture.c: /diff, /files */
int work_dialog(struct helper *h, struct job_spec *j);	  /* capture.c */
int work_prepare_grading(struct helper *h, struct job_spec *j); /* capture.c */
int work_bash(struct helper *h, struct job_spec *j);	  /* agent.c */
int work_end_agent_phase(struct helper *h, struct job_spec *j); /* agent.c */

/* Let the agent's processes go on after a check on hidden material (runner.c:
 * hidden_check_end; the helper calls it for a worker that died before it could). */
int work_agent_continue(struct helper *h, struct sb_error **err);

/* Start-up work done by the helper before serving (setup.c); home is the first runner
 * session's home directory name. */
int work_setup(struct helper *h, const char *home, struct sb_error **err);
/* Open the task files and give them the modes a run needs (the first step of work_setup;
 * alone, `ssebench-daemon --task-permissions` at image build). */
int work_task_permissions(struct helper *h, struct sb_error **err);

#endif

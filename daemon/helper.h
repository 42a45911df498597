/* SPDX-License-Identifier: Apache-2.0 */
/* helper.h: the helper's state, shared by helper.c (the loop) and work.c (the workers). */
#ifndef SSEBENCH_DAEMON_HELPER_H
#define SSEBENCH_DAEMON_HELPER_H

#include <jansson.h>
#include <sys/types.h>

#include "daemon.h"
#include "sb/freezer.h"

/* Requests that must not overlap run one at a time in their queue. */
enum queue {
	Q_NONE = 0,  /* runs at once */
	Q_BENCHER,   /* scripts, scratch copies, grading (one at a time, upstream's mutex) */
	Q_BASH,	     /* the agent's shell: one command at a time, like a terminal */
	Q_CAPTURE,   /* the private git index */
	Q_COUNT_,
};

struct helper;

/* What a worker needs, decided by the helper before it forks. */
struct job_spec {
	enum dreq_type type;
	enum dchannel ch;
	json_t *req;	  /* the request body (owned) */
	int reply_fd;
	/* bencher: the action, parsed once by the front (dreq_from_client) */
	enum sb_action action;
	bool grading;
	char *poc;	  /* a configured PoC path, relative to the task files */
	char *workspace;  /* the workspace this action uses ("work-N") */
	char *home;	  /* the runner session's home ("home-K"), decided by the helper */
	bool drop_previous_build;
	char *previous_build;
	bool new_session; /* wipe the runner's files first (work_new_session, into home) */
};

struct helper {
	struct dconf *c;
	struct sb_freezer freezer; /* the agent's cgroup (SSE_AGENT_CGROUP); fd -1 without */
	int channels[2];
	int bench_fd, results_fd, runner_fd, state_fd;
	char *git_dir;	   /* the private baseline, below the state directory */
	char *bash_state;  /* the bash tool's state directory */
	bool agent_phase;  /* until POST /admin/agent_exited */
	unsigned next_ws;  /* workspace counter */
	unsigned session;  /* runner session (home-K) */
	char *latest_build; /* workspace of the last build, for run_poc */
	bool hidden_ran;    /* the agent ran a check on hidden material in this session */
	bool build_wiped;   /* latest_build went with such a session */
	bool grading_ready; /* prepare_grading succeeded: the grading source exists */
	bool busy[Q_COUNT_];
	pid_t front_pids[2];
};

/* Open the directories, prepare the file system and record the git baseline (before any
 * listener is bound). */
int helper_init(struct helper *h, struct dconf *c, struct sb_error **err);
/* Serve the two channels until a signal or a front's exit. Returns the exit status. */
int helper_loop(struct helper *h);

/* Workers (work.c): each runs in a forked child, writes the reply, and returns the
 * child's exit status (0 when a reply was written). */
int work_bash(struct helper *h, struct job_spec *j);
int work_bencher(struct helper *h, struct job_spec *j);
int work_capture(struct helper *h, struct job_spec *j);
int work_dialog(struct helper *h, struct job_spec *j);
int work_prepare_grading(struct helper *h, struct job_spec *j);
int work_end_agent_phase(struct helper *h, struct job_spec *j);

/* Let the agent's processes go on after a check on hidden material (work.c:hidden_check). */
int work_agent_continue(struct helper *h, struct sb_error **err);

/* Start-up work done by the helper before serving (work.c); home is the first runner
 * session's home directory name. */
int work_setup(struct helper *h, const char *home, struct sb_error **err);
/* Open the task files and give them the modes a run needs (the first step of work_setup;
 * alone, `ssebench-daemon --task-permissions` at image build). */
int work_task_permissions(struct helper *h, struct sb_error **err);
/* A new runner session: kill runner processes, remove every scratch copy, make home (the
 * session's home directory name, which the helper chose). */
int work_new_session(struct helper *h, const char *home, struct sb_error **err);

#endif

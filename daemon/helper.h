/* SPDX-License-Identifier: Apache-2.0 */
/*
 * helper.h: the helper's state, shared by helper.c (the loop) and the workers it forks
 * (work.h). The workers read this state and the job spec they are given; they call nothing
 * in helper.c: what a worker needs from the loop's decisions travels in its job_spec.
 */
#ifndef SSEBENCH_DAEMON_HELPER_H
#define SSEBENCH_DAEMON_HELPER_H

#include <jansson.h>
#include <sys/types.h>

#include "daemon.h"
#include "sb/freezer.h"
#include "sb/priv.h"
#include "sb/sandbox.h"

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
	struct dreq req;  /* the typed request, checked on arrival (dreq_decode; owned) */
	int reply_fd;
	/* bencher: what the helper decided (req.action and req.grading are the request's) */
	const char *poc;  /* the configured PoC req.poc names (the task's own string), or NULL */
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
	/*
	 * Prepared once at start-up (setup.c:work_setup), before any fork; the workers only
	 * read them.
	 */
	struct sb_seccomp *untrusted; /* the filter for untrusted code */
	/*
	 * The task scripts' sandbox (sb/sandbox.h): no network but loopback, a private /tmp,
	 * /var/tmp and /dev/shm, everything read-only but the runner's area, and the places
	 * of the agent and the sockets hidden. The scripts run the agent's code next to the
	 * PoCs (levels 0 and 1) and the hidden tests (level 0, and grading at every level):
	 * with no network and no place the agent can see, that code can keep what it is
	 * shown only in what the check itself answers.
	 */
	struct sb_sandbox runner_sandbox;
	/*
	 * The same for the jobs whose output the agent never sees (checks on hidden material,
	 * and everything once its phase is over): in the scripts' own root (SSE_RUNNER_ROOT),
	 * a copy of the image that the agent cannot read and its builds, in runner_sandbox,
	 * cannot see. What such a job does to the page cache of a file therefore reaches
	 * neither the agent nor the output of its next build (docs/images.md, "Tool
	 * layer").
	 */
	struct sb_sandbox withheld_sandbox;
	struct sb_runner_places runner_places; /* what both sandboxes point into */
	char **poc_support_paths; /* support directories for run_poc only, absolute */
};

/* Open the directories, prepare the file system and record the git baseline (before any
 * listener is bound). */
int helper_init(struct helper *h, struct dconf *c, struct sb_error **err);
/* Serve the two channels until a signal or a front's exit. Returns the exit status. */
int helper_loop(struct helper *h);

#endif

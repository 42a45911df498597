/* SPDX-License-Identifier: Apache-2.0 */
/*
 * entrypoint.h: shared state of ssebench-entrypoint, PID 1 of the task container.
 *
 * main.c runs the phases in order (daemon, agent, end of the agent phase, grading,
 * keep-alive): config.c reads the configuration and the secrets file, dirs.c prepares the
 * results and archive directories, log.c logs, isolation.c establishes the isolation.
 * supervise.c owns every child process, the ones we start and the orphans the kernel hands
 * us as subreaper, and the one place signals are consumed (a signalfd).
 */
#ifndef SB_ENTRYPOINT_H
#define SB_ENTRYPOINT_H

#include <stdint.h>
#include <sys/types.h>

#include "sb/argv.h"
#include "sb/common.h"
#include "sb/error.h"
#include "sb/freezer.h"
#include "sb/log.h"
#include "sb/priv.h"
#include "sb/verdict.h"

/* Bounds of the values read from the environment (a bad value falls back to the default). */
#define EP_TIMEOUT_DEFAULT_S	    3600
#define EP_TIMEOUT_MAX_S	    (30 * 24 * 3600)
#define EP_DAEMON_TIMEOUT_DEFAULT_S 60
#define EP_EVALUATOR_SLACK_S	    300	   /* the evaluator gets TIMEOUT + this */
#define EP_SECRETS_MAX		    (64 * 1024) /* bytes of the secrets file */
#define EP_STOP_GRACE_MS	    5000   /* SIGTERM -> SIGKILL for the daemon and evaluator */
#define EP_KILL_ROUNDS		    20	   /* sb_proc_kill_uid rounds for the agent's uid */
#define EP_MCP_TIMEOUT_S	    30	   /* the MCP server must listen within this */
#define EP_KEY_WAIT_S		    60	   /* the CLI's word on the proxy key, before grading */

/*
 * Which container this entrypoint runs (docs/sidecar.md). Sandbox: the one
 * container, daemon and agent together. Sidecar: the task container runs the daemon and
 * holds the task; the agent container runs the agent and the evaluator. The two meet
 * through the daemon's sockets and hand each other their isolation records through files
 * in the results directory, which only root reaches in either container.
 */
enum ep_role { EP_ROLE_SANDBOX, EP_ROLE_SIDECAR_TASK, EP_ROLE_SIDECAR_AGENT };

/* The sidecar hand-over files in the results directory (root-only in both containers). */
#define EP_SIDECAR_TASK_RECORD "isolation-task.json" /* the task container's isolation */
#define EP_SIDECAR_PHASE_ENDED "agent-phase-ended"   /* the agent phase is over (both modes) */
#define EP_KEY_REVOKED "proxy-key-revoked"	     /* the CLI's answer: the proxy key is gone */
#define EP_SIDECAR_WAIT_DEFAULT_S 120 /* SSE_SIDECAR_WAIT: how long to wait for the other side */

/* Everything configurable, from the environment (docs/entrypoint.md); lives until exit. */
struct ep_config {
	enum ep_role role;   /* --sidecar-task, --sidecar-agent, or sandbox */
	char *archive;	     /* SSE_ARCHIVE */
	char *results;	     /* SSE_RESULTS */
	char *source;	     /* SSE_SOURCE: the agent's working directory */
	char *daemon_socket; /* SSE_DAEMON_SOCKET: the agent-facing socket */
	char *admin_socket;  /* SSE_ADMIN_SOCKET: the privileged socket */
	char *daemon_bin;    /* SSE_DAEMON_BIN */
	char *evaluator_bin; /* SSE_EVALUATOR_BIN */
	char *secrets_file;  /* SSE_SECRETS_FILE */
	char *agent_user;    /* SSE_AGENT_USER */
	char *runner_user;   /* SSE_RUNNER_USER: only to sweep its processes at the end */
	char *difficulty;    /* SSE_DIFFICULTY as given, or "2" (the daemon's default) */
	uint64_t timeout_s;  /* TIMEOUT: the agent's wall-clock limit */
	uint64_t daemon_timeout_s;
	uint64_t sidecar_wait_s; /* SSE_SIDECAR_WAIT: the agent container's wait for the task's */
	bool mcp;	     /* SSE_MCP: start the MCP server (not "0") */
	char *mcp_bin;	     /* SSE_MCP_BIN */
	char *mcp_user;	     /* SSE_MCP_USER: the server's unprivileged user (nobody) */
	unsigned mcp_port;   /* SSE_MCP_PORT (3000) */
	uint64_t agent_log_max; /* SSE_AGENT_LOG_MAX (SB_AGENT_LOG_MAX): agent.log, mcp.log */
	bool keep_alive;     /* SSE_KEEP_ALIVE=1 */
	bool proxy_key;	     /* SSE_PROXY_KEY=1: the CLI revokes a proxy key before grading */
	char *key_answer;    /* SSE_KEY_ANSWER: where the CLI's answer appears (results) */
	/* What the run claims, and where the hidden material is (isolation.c). */
	char *bench_path;    /* SSE_BENCH_PATH: the task files */
	char *repo_path;     /* SSE_REPO_PATH: the pristine repository */
	char *runner_dir;    /* SSE_RUNNER_DIR: the runner's staging area */
	char *runner_root;   /* SSE_RUNNER_ROOT: the scripts' own copy of the image ("/": none) */
	char *daemon_state;  /* SSE_DAEMON_STATE: the daemon's private state */
	char *reference_path; /* SSE_REFERENCE_PATH: the reference agent's mount */
	char *net_gateway;   /* SSE_NET_GATEWAY: the host's address on the run's network */
	char *net_node;	     /* SSE_NET_NODE: a pod's own node (Kubernetes), or NULL */
	char *net_canary;    /* SSE_NET_CANARY: an address only a way out reaches */
	char *agent_cgroup;  /* SSE_AGENT_CGROUP: the agent's freezer cgroup, or NULL */
	bool egress_restricted; /* SSE_EGRESS is not "open" */
	bool reference_run;  /* SSE_REFERENCE_RUN=1 */
	bool isolation_enforced; /* SSE_ISOLATION is not "record" */
};

/* A child we started. pid stays set after it exits, for messages. */
struct ep_child {
	const char *name;
	pid_t pid;	   /* 0: never started */
	bool exited;	   /* reaped */
	bool reported;	   /* its exit has been logged */
	int status;	   /* exit status, or 128 + N when signal N ended it */
	uint64_t start_ms; /* CLOCK_MONOTONIC */
	uint64_t end_ms;
};

/* How the agent phase went, for the evaluator's environment and our exit status. */
struct ep_agent_result {
	int status;	      /* 0..255; 124 on timeout; 126/127 when it could not start */
	bool timed_out;
	uint64_t duration_ms;
};

/*
 * What the agent (and the MCP server, which logs what the agent sends it) print goes
 * through a pipe into its log in the results: the results are on the host's disk, and a
 * descriptor of the log file in the agent's hands would let it write without limit (or
 * fallocate a terabyte). At most `cap` bytes are kept; the rest is counted.
 */
struct ep_pump {
	int in;		  /* the pipe's read end (non-blocking), -1 when done */
	int out;	  /* the log file, not ours to close */
	uint64_t written, dropped, cap;
	const char *name; /* for the note at the end: "agent.log" */
};

struct ep {
	struct ep_config cfg;
	char *const *agent_argv;   /* the agent's command, from our argv */
	struct sb_argv secrets;	   /* NAME=value lines of the secrets file */
	struct sb_creds agent_creds; /* uid, primary gid, no supplementary groups */
	char *agent_home;
	bool have_runner;	   /* the runner user exists (its processes are swept at exit) */
	struct sb_creds runner_creds;
	bool have_mcp;		   /* the MCP server was started as mcp_creds */
	struct sb_creds mcp_creds;
	struct sb_seccomp *seccomp; /* the agent's filter, compiled before any fork */
	struct sb_freezer freezer; /* cfg.agent_cgroup, opened (fd -1 without) */
	int source_fd;		   /* the agent's working directory */
	int results_fd;		   /* SSE_RESULTS, root-only */
	int archive_fd;		   /* SSE_ARCHIVE as we found it; -1 once given back */
	uid_t archive_uid;	   /* the archive's owner, group and mode before the agent */
	gid_t archive_gid;
	mode_t archive_mode;
	int log_fd, daemon_log, agent_log, evaluator_log; /* appended, never truncated */
	int mcp_log;
	int sfd;		   /* signalfd: SIGTERM, SIGINT, SIGHUP, SIGCHLD */
	int stop_signal;	   /* the first SIGTERM/SIGINT received, or 0 */
	bool phase_ended;	   /* the agent phase has been ended (done once) */
	bool stopping;		   /* in ep_cleanup: children exiting is expected */
	uint64_t t0;		   /* start time (CLOCK_MONOTONIC, ms) */
	char *self_exe;		   /* our own binary, run again as the isolation probe */
	struct sb_iso_record iso;  /* what the isolation checks saw (isolation.c) */
	char key_status[64];	   /* the proxy key before grading: "revoked", ... or "" */
	struct ep_child daemon, agent, evaluator, mcp;
	struct ep_pump pumps[2];   /* agent.log, mcp.log */
};

/* supervise.c: the log pumps (struct ep_pump) */
enum { EP_PUMP_AGENT, EP_PUMP_MCP };
/* A pipe whose read end pumps i drains into log_fd; *ret_write_end is the child's stdout. */
int ep_pump_start(struct ep *ep, size_t i, int log_fd, const char *name, int *ret_write_end,
    struct sb_error **err);
/* Everything left in the pipes into the logs (once their writers are gone), and the notes. */
void ep_pumps_drain(struct ep *ep);

/* log.c */

/* Log one line to stdout and to entrypoint.log (once it is open); escaped by sb_log. */
void ep_log(enum sb_log_level level, const char *fmt, ...) _printf_(2, 3);
/* From now on ep_log writes to fd as well (entrypoint.log, opened by ep_logs_open). */
void ep_log_to_file(int fd);
/* Seconds since t (CLOCK_MONOTONIC ms), for "after 12.3 s". */
double ep_secs(uint64_t since_ms);

/* config.c */

/* The configuration from the environment (docs/entrypoint.md); a bad path is an error. */
int ep_config_load(struct ep_config *c, struct sb_error **err);
/*
 * The secrets file into ep->secrets: a regular file, root's, writable by nobody else; lines
 * NAME=value. No file is no secret. Messages name a line, never what it holds.
 */
int ep_secrets_read(struct ep *ep, struct sb_error **err);
/* The agent's user (not root, no supplementary groups, its home) and the runner's. */
int ep_users_lookup(struct ep *ep, struct sb_error **err);

/* dirs.c */

/* The results directory, its parent made 0700 root; ep->results_fd. */
int ep_results_setup(struct ep *ep, struct sb_error **err);
/* Our logs in the results directory, for what this role runs; entrypoint.log gets ep_log. */
int ep_logs_open(struct ep *ep, struct sb_error **err);
/* The archive handed to the agent user, its owner, group and mode remembered. */
int ep_archive_hand_over(struct ep *ep, struct sb_error **err);
/*
 * Give the archive tree back to the owner it had before the agent phase: a walk through
 * directory fds that never follows a link; every entry is re-owned with set-id bits and
 * group/other write taken away, and links, special files and second names of files are
 * removed.
 */
int ep_archive_give_back(struct ep *ep, struct sb_error **err);

/* isolation.c */

/* `ssebench-entrypoint --isolation-probe ROLE PHASE`: the probe, run as ROLE. */
int ep_isolation_probe_main(int argc, char **argv);
/*
 * Establish the run's isolation for phase ph: probe as the agent and as the runner, check
 * the reference mount, record everything in ep->iso and isolation.json. True when every
 * claimed property held in every phase so far; false (each failure logged) otherwise.
 */
bool ep_isolation_establish(struct ep *ep, enum sb_iso_phase ph);
/*
 * The sidecar task container's record (EP_SIDECAR_TASK_RECORD, written by
 * ep_isolation_establish there) if it holds phase ph; NULL otherwise. New reference.
 */
json_t *ep_task_record_load(struct ep *ep, enum sb_iso_phase ph);
/* result.json for a run that will not be scored: status error, every failure named. */
void ep_write_unscored_result(struct ep *ep, enum sb_iso_phase ph,
    const struct ep_agent_result *ar);

/* sidecar.c */

const char *ep_role_name(enum ep_role role);
/*
 * The task container of a sidecar run: the socket directory made root's and 0711, the
 * daemon, the isolation checks before the agent, then a wait for the agent container's end
 * of the agent phase, the checks again, and the daemon kept for grading until SIGTERM (or
 * TIMEOUT + the evaluator's time + a margin, if nobody comes to stop it). Returns the exit
 * status.
 */
int ep_sidecar_task(struct ep *ep);
/*
 * The agent container: wait until the task container has recorded phase ph (and, before
 * the agent, until both daemon sockets answer). Fails on timeout or a stop signal.
 */
int ep_sidecar_wait_task(struct ep *ep, enum sb_iso_phase ph, struct sb_error **err);
/*
 * Tell whoever watches the results directory that the agent phase is over: the CLI (which
 * then revokes the run's proxy key) and, in sidecar mode, the task container.
 */
int ep_mark_phase_ended(struct ep *ep, struct sb_error **err);
/*
 * Wait (up to EP_KEY_WAIT_S) for the CLI to say the run's proxy key is revoked; what it
 * said, or that it said nothing, goes into ep->key_status.
 */
void ep_wait_key_revoked(struct ep *ep);

/* supervise.c */

/* GET /version on a Unix socket; 0 if it answered 200. */
int ep_probe_socket(const char *sock);
/* Has c been started and not yet reaped? */
bool ep_child_running(const struct ep_child *c);
/* Kill every process of the agent's uid in this container, logging why. */
void ep_kill_agent_uid(struct ep *ep, const char *why);
/*
 * Kill every process of the runner's uid (where the runner works: not in a sidecar agent
 * container) and of the MCP server's uid, logging why. For the end of the agent phase.
 */
void ep_kill_helper_uids(struct ep *ep, const char *why);

/* Become subreaper, block the signals we handle and open the signalfd. Before any fork. */
int ep_supervise_init(struct ep *ep, struct sb_error **err);
/*
 * Wait until a signal arrives or deadline_ms (CLOCK_MONOTONIC; UINT64_MAX: no deadline),
 * then reap every exited child. Records SIGTERM/SIGINT in ep->stop_signal. Callers loop
 * on their own condition.
 */
void ep_wait(struct ep *ep, uint64_t deadline_ms);
/* Start the daemon and wait until both sockets answer GET /version. */
int ep_start_daemon(struct ep *ep, struct sb_error **err);
/*
 * Run the agent until it exits or times out (everything of its uid is killed: 124), and
 * return 0 with *ret filled in; or return 1, *ret untouched, when a stop signal comes first.
 * A command that cannot start is not a failure either: *ret gets 127 or 126. err is for
 * harness failures, of which there are none at present.
 */
int ep_run_agent(struct ep *ep, struct ep_agent_result *ret, struct sb_error **err);
/*
 * Start the MCP server (ssebench-mcp) as its unprivileged user, next to the agent, and wait
 * until it accepts connections. Not started when SSE_MCP=0.
 */
int ep_start_mcp(struct ep *ep, struct sb_error **err);
/* End the agent phase, once: kill its uid, tell the daemon, give the archive back. */
void ep_end_agent_phase(struct ep *ep);
/* Run the evaluator to completion (or its time limit). Returns 0, or 1 if interrupted. */
int ep_run_evaluator(struct ep *ep, const struct ep_agent_result *ar);
/* Block until SIGTERM/SIGINT. */
void ep_keep_alive(struct ep *ep);
/* Stop everything still running: evaluator, agent processes, the daemon's session. */
void ep_cleanup(struct ep *ep);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c: ssebench-entrypoint, PID 1 of the task container (docs/entrypoint.md; upstream's:
 * docs/upstream.md, "The entrypoint").
 *
 * Order of operations, each step failing closed before anything untrusted runs:
 *   1. the command line; root; subreaper and signals (supervise.c), before any fork;
 *   2. the configuration from the environment;
 *   3. the results directory (its parent made 0700 root) and our log files in it;
 *   4. the secrets file, the agent's user, its working directory, its seccomp filter;
 *   5. the archive handed to the agent user (its owner remembered);
 *   6. the daemon; the isolation checks (isolation.c: a run that fails them is not scored
 *      and stops here); the agent; the end of the agent phase; the isolation checks again;
 *      grading;
 *   7. keep-alive if asked; cleanup; the agent's exit status.
 * Exit status: the agent's (0..255), 124 on its timeout, 1 for our own failures or a stop
 * signal before the end, 0 for a stop signal in keep-alive (docs/upstream.md, "The
 * entrypoint").
 */
#include "config.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "sb/exit.h"
#include "sb/limits.h"
#include "sb/mem.h"
#include "sb/spawn.h"

#include "entrypoint.h"

static void
usage(FILE *out)
{
	fprintf(out, "usage: ssebench-entrypoint [--sidecar-agent] [--] COMMAND [ARGUMENTS...]\n"
		     "       ssebench-entrypoint --sidecar-task\n"
		     "       ssebench-entrypoint --version | --help\n"
		     "\n"
		     "PID 1 of a task container: starts ssebench-daemon, runs COMMAND as the\n"
		     "agent user with a time limit, ends the agent phase, runs the evaluator and\n"
		     "exits with the agent's status. Configured by environment variables\n"
		     "(docs/entrypoint.md).\n"
		     "\n"
		     "Sidecar mode splits this in two containers: --sidecar-task runs the daemon\n"
		     "next to the task until it is stopped; --sidecar-agent waits for it, then\n"
		     "runs COMMAND and the evaluator (docs/sidecar.md).\n");
}

/* Log the error, stop whatever was started, exit 1 (an entrypoint failure). */
static int
fail(struct ep *ep, struct sb_error **err)
{
	if (err != NULL && *err != NULL) {
		ep_log(SB_LOG_ERROR, "%s", sb_error_message(*err));
		sb_error_release(err);
	}
	ep_cleanup(ep);
	ep_log(SB_LOG_INFO, "exiting with status %d after %.1f s", SB_EXIT_FAILURE,
	    ep_secs(ep->t0));
	return SB_EXIT_FAILURE;
}

/*
 * Step 1, the command line: [--sidecar-task | --sidecar-agent] [--] COMMAND... True to go
 * on, with ep->cfg.role and ep->agent_argv set; false to exit with *ret_status (--version,
 * --help, or a usage error, said on stderr).
 */
static bool
parse_command_line(struct ep *ep, int argc, char **argv, int *ret_status)
{
	int argi = 1;

	*ret_status = SB_EXIT_FAILURE;
	if (argi < argc && strcmp(argv[argi], "--version") == 0) {
		printf("ssebench-entrypoint %s\n", PACKAGE_VERSION);
		*ret_status = SB_EXIT_OK;
		return false;
	}
	if (argi < argc && (strcmp(argv[argi], "--help") == 0 || strcmp(argv[argi], "-h") == 0)) {
		usage(stdout);
		*ret_status = SB_EXIT_OK;
		return false;
	}
	if (argi < argc && strcmp(argv[argi], "--sidecar-task") == 0) {
		ep->cfg.role = EP_ROLE_SIDECAR_TASK;
		if (++argi < argc) {
			ep_log(SB_LOG_ERROR, "--sidecar-task takes no command: the agent runs in "
					     "the agent container");
			usage(stderr);
			return false;
		}
	} else if (argi < argc && strcmp(argv[argi], "--sidecar-agent") == 0) {
		ep->cfg.role = EP_ROLE_SIDECAR_AGENT;
		argi++;
	}
	if (argi < argc && strcmp(argv[argi], "--") == 0) {
		argi++;
	} else if (argi < argc && argv[argi][0] == '-') {
		/* An option we do not know: better refused than run as the agent's command. */
		ep_log(SB_LOG_ERROR,
		    "unknown option '%s' (use -- before a command starting with -)", argv[argi]);
		usage(stderr);
		return false;
	}
	if (argi >= argc && ep->cfg.role != EP_ROLE_SIDECAR_TASK) {
		ep_log(SB_LOG_ERROR, "no agent command given");
		usage(stderr);
		return false;
	}
	ep->agent_argv = argv + argi;
	return true;
}

/* Nothing open and nothing started yet: every descriptor -1, the children named. */
static void
init_state(struct ep *ep)
{
	const char *debug = secure_getenv("SSE_DEBUG");

	ep->t0 = sb_now_ms();
	ep->source_fd = ep->results_fd = ep->archive_fd = -1;
	ep->freezer = (struct sb_freezer)SB_FREEZER_INIT;
	ep->log_fd = ep->daemon_log = ep->agent_log = ep->evaluator_log = ep->mcp_log = ep->sfd = -1;
	for (size_t i = 0; i < SB_ARRAY_SIZE(ep->pumps); i++)
		ep->pumps[i].in = -1;
	ep->mcp.name = "MCP server";
	ep->daemon.name = "daemon";
	ep->agent.name = "agent";
	ep->evaluator.name = "evaluator";
	ep->secrets = (struct sb_argv)SB_ARGV_INIT;
	if (debug != NULL && *debug != '\0')
		sb_log_set_level(SB_LOG_DEBUG);
}

/* Step 1, the rest: our own binary (run again as the isolation probe), and root. */
static int
check_self(struct ep *ep)
{
	char exe[SB_PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0) {
		ep_log(SB_LOG_ERROR, "cannot find our own binary (/proc/self/exe)");
		return -1;
	}
	exe[n] = '\0';
	ep->self_exe = sb_xstrdup(exe);
	if (geteuid() != 0) {
		ep_log(SB_LOG_ERROR, "must run as root: it runs the agent under its own uid");
		return -1;
	}
	return 0;
}

/*
 * Steps 1 to 3: subreaper and signals, before any child, so that no SIGCHLD is lost and no
 * zombie left unreaped; the configuration; the results directory and our logs in it.
 */
static int
start_up(struct ep *ep, struct sb_error **err)
{
	if (ep_supervise_init(ep, err) < 0 || ep_config_load(&ep->cfg, err) < 0 ||
	    ep_results_setup(ep, err) < 0 || ep_logs_open(ep, err) < 0)
		return -1;
	ep_log(SB_LOG_INFO, "ssebench-entrypoint %s (pid %d, %s): results '%s', archive '%s'",
	    PACKAGE_VERSION, (int)getpid(), ep_role_name(ep->cfg.role), ep->cfg.results,
	    ep->cfg.archive);
	return 0;
}

/*
 * Step 4: everything that can be wrong with the configuration is found before anything
 * runs: the secrets, the agent's user, its working directory, its seccomp filter and its
 * freezer cgroup.
 */
static int
prepare_agent(struct ep *ep, struct sb_error **err)
{
	if (ep_secrets_read(ep, err) < 0 || ep_users_lookup(ep, err) < 0)
		return -1;
	ep->source_fd = open(ep->cfg.source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ep->source_fd < 0)
		return sb_error_errno(err, errno, "agent working directory SSE_SOURCE='%s'",
		    ep->cfg.source);
	if (sb_seccomp_compile(SB_SECCOMP_UNTRUSTED, &ep->seccomp, err) < 0)
		return -1;
	/*
	 * The agent's freezer cgroup (ssebench makes it on the host, root's and 0700): the
	 * agent runs in it from its first instruction, the daemon runs the agent's bash calls
	 * in it and freezes it during a check on hidden material (daemon/runner.c:hidden_check).
	 * Named but unusable, the run stops here rather than hold the agent by signals alone.
	 */
	if (ep->cfg.agent_cgroup != NULL && ep->cfg.role != EP_ROLE_SIDECAR_AGENT) {
		if (sb_freezer_open(ep->cfg.agent_cgroup, &ep->freezer, err) < 0)
			return -1;
		ep_log(SB_LOG_INFO, "agent freezer: cgroup v%d at '%s'", ep->freezer.v2 ? 2 : 1,
		    ep->cfg.agent_cgroup);
	}
	return 0;
}

/*
 * Step 6 begins with the daemon: started here, or, in a sidecar agent container, the task
 * container's waited for (its sockets answering, its isolation recorded).
 */
static int
daemon_ready(struct ep *ep, struct sb_error **err)
{
	if (ep->cfg.role == EP_ROLE_SIDECAR_AGENT)
		return ep_sidecar_wait_task(ep, SB_ISO_BEFORE_AGENT, err);
	return ep_start_daemon(ep, err);
}

/*
 * The agent phase: the MCP server, the agent, the end of the phase. -1 to fail the run: a
 * harness failure (in *err) or a stop signal.
 */
static int
run_agent_phase(struct ep *ep, struct ep_agent_result *ar, struct sb_error **err)
{
	/* The agent's test_patch tool: a run whose MCP server does not start fails
	 * (docs/upstream.md, "The entrypoint"), rather than leaving the agent without the tool it
	 * was promised. */
	if (ep_start_mcp(ep, err) < 0)
		return -1;
	if (ep_run_agent(ep, ar, err) != 0)
		return -1; /* a harness failure, or a stop signal */
	ep_end_agent_phase(ep);
	return ep->stop_signal != 0 ? -1 : 0;
}

/*
 * Say that the agent phase is over (the CLI revokes the run's proxy key then; in sidecar
 * mode the task container checks its side again), and wait for the key to be gone before
 * anything of grading runs. -1 when a stop signal ends the run here.
 */
static int
hand_over_to_grading(struct ep *ep)
{
	struct sb_error *err = NULL;

	if (ep_mark_phase_ended(ep, &err) < 0) {
		ep_log(SB_LOG_WARN, "%s, ignoring", sb_error_message(err));
		sb_error_release(&err);
	}
	if (ep->cfg.proxy_key)
		ep_wait_key_revoked(ep);
	if (ep->cfg.role == EP_ROLE_SIDECAR_AGENT &&
	    ep_sidecar_wait_task(ep, SB_ISO_BEFORE_GRADING, &err) < 0) {
		/* No record from the task side: the isolation checks fail it by name. */
		ep_log(SB_LOG_ERROR, "%s", sb_error_message(err));
		sb_error_release(&err);
		if (ep->stop_signal != 0)
			return -1;
	}
	return 0;
}

/* Step 7: keep-alive if asked, cleanup, and our exit status. */
static int
finish(struct ep *ep, const struct ep_agent_result *ar)
{
	/* The agent container keeps nothing alive: the daemon is the task container's. */
	if (ep->cfg.keep_alive && ep->cfg.role != EP_ROLE_SIDECAR_AGENT) {
		ep_keep_alive(ep);
		ep_cleanup(ep);
		ep_log(SB_LOG_INFO, "exiting with status 0 after %.1f s (stopped in keep-alive)",
		    ep_secs(ep->t0));
		return SB_EXIT_OK;
	}
	ep_cleanup(ep);
	ep_log(SB_LOG_INFO, "exiting with status %d after %.1f s", ar->status, ep_secs(ep->t0));
	return ar->status;
}

/* The phases of a run, in order (see the top of this file). */
int
main(int argc, char **argv)
{
	static struct ep ep;
	struct ep_agent_result ar = { 0, false, 0 };
	struct sb_error *err = NULL;
	int status;

	/* The isolation probe (isolation.c) is this binary run again, without privileges. */
	if (argc > 1 && strcmp(argv[1], "--isolation-probe") == 0)
		return ep_isolation_probe_main(argc, argv);
	sb_log_init("entrypoint", SB_LOG_INFO, SB_LOG_TIMESTAMPS | SB_LOG_LEVELS);
	sb_log_set_fd(STDOUT_FILENO);
	if (!parse_command_line(&ep, argc, argv, &status))
		return status;
	init_state(&ep);
	if (check_self(&ep) < 0)
		return SB_EXIT_FAILURE;
	if (start_up(&ep, &err) < 0 || prepare_agent(&ep, &err) < 0)
		return fail(&ep, &err);
	/* The task container leaves the archive alone: the agent container hands it over. */
	if (ep.cfg.role == EP_ROLE_SIDECAR_TASK)
		return ep_sidecar_task(&ep);
	if (ep_archive_hand_over(&ep, &err) < 0 || daemon_ready(&ep, &err) < 0)
		return fail(&ep, &err);
	/*
	 * A run that cannot establish its isolation is not scored, so the agent does not run
	 * (docs/design.md, "Fail closed"): its result names every property that failed.
	 */
	if (!ep_isolation_establish(&ep, SB_ISO_BEFORE_AGENT) && ep.cfg.isolation_enforced) {
		ep_write_unscored_result(&ep, SB_ISO_BEFORE_AGENT, NULL);
		return fail(&ep, NULL);
	}
	if (run_agent_phase(&ep, &ar, &err) < 0 || hand_over_to_grading(&ep) < 0)
		return fail(&ep, &err);
	/* Again before grading: what the agent did must not have opened a way in. */
	if (!ep_isolation_establish(&ep, SB_ISO_BEFORE_GRADING) && ep.cfg.isolation_enforced)
		ep_write_unscored_result(&ep, SB_ISO_BEFORE_GRADING, &ar);
	else if (ep_run_evaluator(&ep, &ar) != 0)
		return fail(&ep, NULL);
	return finish(&ep, &ar);
}

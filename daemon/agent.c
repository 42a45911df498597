/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent.c: the workers that act on the agent's processes: its shell (the bash tool, each
 * call a fresh bash as the agent in its own process group) and the end of the agent phase
 * (every process of the agent and of the runner killed).
 */
#include "config.h"

#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>

#include "sb/argv.h"
#include "sb/freezer.h"
#include "sb/json.h"
#include "sb/log.h"
#include "sb/proc.h"
#include "sb/spawn.h"

#include "runner.h"
#include "work.h"

/*
 * The agent's shell. Each call is a fresh bash whose exit status we get from waitpid, so no
 * output can forge it (upstream parsed an in-band marker). What makes it feel like one
 * terminal session is the state the wrapper restores and saves around the command: the
 * working directory and the exported variables, kept in a directory of the agent's own.
 * The EXIT trap saves them even when the command calls `exit`; stdin is /dev/null, so a
 * command that reads stdin cannot swallow the next one.
 */
static const char bash_wrapper[] =
    "__sse_state=$1\n"
    "__sse_save() {\n"
    "  { export -p >\"$__sse_state/env.new\" && mv -f \"$__sse_state/env.new\" \"$__sse_state/env\"\n"
    "    pwd -P >\"$__sse_state/cwd.new\" && mv -f \"$__sse_state/cwd.new\" \"$__sse_state/cwd\"\n"
    "  } 2>/dev/null\n"
    "}\n"
    "if [ -r \"$__sse_state/env\" ]; then . \"$__sse_state/env\" 2>/dev/null; fi\n"
    "if [ -r \"$__sse_state/cwd\" ]; then cd -- \"$(cat \"$__sse_state/cwd\")\" 2>/dev/null; fi\n"
    "trap __sse_save EXIT\n"
    "eval \"$2\"\n";

int
work_bash(struct helper *h, struct job_spec *j)
{
	const char *command = j->req.command;
	int64_t want = j->req.timeout;
	_cleanup_argv_ struct sb_argv env = SB_ARGV_INIT;
	_cleanup_close_ int cwd = -1;
	struct sb_cmd cmd = SB_CMD_INIT;
	struct sb_cmd_result r;
	json_auto_t *reply = NULL;
	unsigned timeout = h->c->bash_timeout;
	char *argv[] = { (char *)"bash", (char *)"--noprofile", (char *)"--norc", (char *)"-c",
		(char *)bash_wrapper, (char *)"sse-bash", h->bash_state, (char *)command, NULL };
	static const struct sb_rlimit_set limits[] = { { RLIMIT_CORE, 0, 0 } };

	if (want > 0)
		timeout = want > (int64_t)h->c->bash_timeout_max ? h->c->bash_timeout_max
								    : (unsigned)want;
	sb_argv_pushv(&env, (const char *const *)h->c->base_env);
	sb_env_set(&env, "HOME", h->c->agent_home);
	sb_env_set(&env, "TERM", "dumb");
	cwd = open(h->c->source, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	cmd.path = "/bin/bash";
	cmd.argv = argv;
	cmd.envp = env.v;
	cmd.cwd_fd = cwd;
	cmd.stdout_fd = SB_CMD_CAPTURE;
	cmd.stderr_fd = SB_CMD_CAPTURE;
	cmd.creds = &h->c->agent;
	/* In the agent's freezer cgroup, as everything of the agent: a check on hidden
	 * material holds it still too (hidden_check_begin). */
	cmd.cgroup_procs = h->freezer.procs;
	/* Background jobs may outlive the call, as in a terminal (they die with the phase);
	 * output they keep writing is read for drain_ms, then left. */
	cmd.flags = SB_CMD_NEW_PGRP | SB_CMD_NO_GROUP_REAP;
	cmd.drain_ms = 500;
	run_untrusted(h, &cmd, limits, SB_ARRAY_SIZE(limits), timeout, &r);
	reply = script_result(&r);
	sb_cmd_result_release(&r);
	return work_done(dproto_reply(j->reply_fd, 200, reply));
}

int
work_end_agent_phase(struct helper *h, struct job_spec *j)
{
	struct sb_error *err = NULL;

	/*
	 * Every process of the agent user, whatever group or session it moved to; and every
	 * process of the runner: a check the agent started has lost its worker (the helper
	 * killed it), but what its script started outside its process group lives on, and
	 * must not be there to watch or disturb what comes next (the isolation check before
	 * grading, the capture).
	 */
	if (sb_proc_kill_uid(h->c->runner.uid, h->c->runner.gid, KILL_ROUNDS, &err) < 0) {
		sb_log(SB_LOG_ERROR, "agent_exited: %s", sb_error_message(err));
		sb_error_release(&err);
		return work_failed(dproto_reply_error(j->reply_fd, 500, "could not kill the runner's processes"));
	}
	/* The freezer's kill first: frozen (by a check whose worker was killed), a v1 task
	 * ignores SIGKILL until it is thawed; and no process of the cgroup forks while it is
	 * killed. Then the uid's, for anything outside it. */
	if (h->freezer.fd >= 0 && sb_freezer_kill(&h->freezer, FREEZE_TIMEOUT_MS, &err) < 0) {
		sb_log(SB_LOG_ERROR, "agent_exited: %s", sb_error_message(err));
		sb_error_release(&err);
	}
	if (sb_proc_kill_uid(h->c->agent.uid, h->c->agent.gid, KILL_ROUNDS, &err) < 0) {
		sb_log(SB_LOG_ERROR, "agent_exited: %s", sb_error_message(err));
		sb_error_release(&err);
		return work_failed(dproto_reply_error(j->reply_fd, 500, "could not kill the agent's processes"));
	}
	{
		json_auto_t *ok = json_pack("{s:b}", "success", 1);

		return work_done(dproto_reply(j->reply_fd, 200, ok));
	}
}

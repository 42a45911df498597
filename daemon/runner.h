/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runner.h: what the other workers use of runner.c: running a program as the runner,
 * keeping its log and shaping its result, and the runner's area (sessions, removal).
 */
#ifndef SSEBENCH_DAEMON_RUNNER_H
#define SSEBENCH_DAEMON_RUNNER_H

#include <jansson.h>
#include <stdbool.h>

#include "sb/sandbox.h"
#include "sb/spawn.h"

#include "helper.h"

/*
 * Run one program as the runner (sandbox NULL: the one the phase calls for), in cwd_fd,
 * with home (a session home, or NULL for the sandbox's own /tmp), stdin_data or /dev/null,
 * the PoC's sanitizer options when poc; then kill every runner process. *res is always
 * filled in (a start failure as a result); release it with sb_cmd_result_release.
 */
void run_as_runner(struct helper *h, const char *path, char *const *argv, int cwd_fd,
    const char *home, unsigned timeout_s, const void *stdin_data, size_t stdin_len,
    const struct sb_sandbox *sandbox, bool poc, struct sb_cmd_result *res);

/* Keep a log of one run ("<prefix>-<ms>-<pid>-<n>.log") in the results directory. */
void write_log(struct helper *h, const char *prefix, const char *what,
    const struct sb_cmd_result *r);

/* ScriptResult {code, stdout, stderr} plus timed_out, truncated, stdout_intact, duration_ms. */
json_t *script_result(const struct sb_cmd_result *r);

/*
 * Run cmd, untrusted code (the agent's command, a task script), under the helper's seccomp
 * filter and limits, for at most timeout_s, its output capped; a start failure (not
 * executable, missing) becomes a result the caller can show. *res is always filled in.
 */
void run_untrusted(struct helper *h, struct sb_cmd *cmd, const struct sb_rlimit_set *limits,
    size_t n_limits, unsigned timeout_s, struct sb_cmd_result *res);

/* Remove name in parent_fd (a root-owned directory of the runner's area), whoever's. */
int remove_mixed(struct helper *h, int parent_fd, const char *name, struct sb_error **err);

/* A new runner session: kill runner processes, remove every scratch copy, make home
 * (the session's home directory name, which the helper chose). */
int work_new_session(struct helper *h, const char *home, struct sb_error **err);

#endif

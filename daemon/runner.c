/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runner.c: the workers that run task scripts, as the runner uid, in scratch copies
 * (docs/design.md, "Task scripts run as a third user, in a sandbox").
 *
 *   - run_as_runner: one program as the runner, in the sandbox the job calls for; its log
 *     and its result (whole, or withheld for a check on hidden material);
 *   - scratch copies: workspaces copied from the agent's tree or the grading source, hidden
 *     material staged for one check, the runner's area cleared for a new session;
 *   - the bencher actions (build, run_poc, function_test, intent_test), the checks on
 *     hidden material that hold the agent still, and the oracle facts of a grading build.
 */
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/elf.h"
#include "sb/fs.h"
#include "sb/json.h"
#include "sb/limits.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/path.h"
#include "sb/proc.h"
#include "sb/spawn.h"
#include "sb/tree.h"

#include "fsutil.h"
#include "grading.h"
#include "runner.h"
#include "work.h"

/* --- the results of script runs --------------------------------------------------------- */

/* Wall-clock milliseconds (log names sort by when the run ended). */
static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * The bytes of script logs already in the results directory. The results directory is on
 * the host's disk, not the run's own file system, and every check the agent asks for adds
 * a log: SB_RESULTS_LOGS_MAX bounds them all together.
 */
static uint64_t
logs_bytes(struct helper *h)
{
	char **names = NULL;
	size_t n = 0;
	uint64_t total = 0;

	if (sb_list_dir_at(h->results_fd, ".", SB_COPY_FILES_MAX, &names, &n, NULL) < 0)
		return UINT64_MAX; /* cannot tell: count it as full */
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		size_t l = strlen(names[i]);

		if (l > 4 && strcmp(names[i] + l - 4, ".log") == 0 &&
		    fstatat(h->results_fd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode))
			total += (uint64_t)st.st_size;
	}
	sb_strv_free(names);
	return total;
}

/* Keep a log of one script run in the results directory (root-only). */
void
write_log(struct helper *h, const char *prefix, const char *what,
    const struct sb_cmd_result *r)
{
	static unsigned seq;
	struct sb_buf b = SB_BUF_INIT((size_t)64 * 1024 * 1024);
	uint64_t used = logs_bytes(h);
	/* Each worker is its own process: the pid keeps two workers' names apart. */
	_cleanup_free_ char *name = sb_xasprintf("%s-%llu-%d-%u.log", prefix,
	    (unsigned long long)now_ms(), (int)getpid(), ++seq);

	(void)sb_buf_appendf(&b, NULL, "command: %s\nexit code: %d\ntimed out: %s\n"
				      "duration: %.3f s\n",
	    what, r->exit_code, r->timed_out ? "yes" : "no", (double)r->elapsed_ms / 1000.0);
	if (r->out_dropped || r->err_dropped)
		(void)sb_buf_appendf(&b, NULL, "output cut: %zu bytes of stdout, %zu of stderr\n",
		    r->out_dropped, r->err_dropped);
	if (used >= SB_RESULTS_LOGS_MAX ||
	    r->out.len + r->err.len > SB_RESULTS_LOGS_MAX - used) {
		/* Past the budget: the log says what ran and how it ended, not what it printed. */
		(void)sb_buf_appendf(&b, NULL, "output not kept: the run's script logs reached %llu "
					       "bytes\n", (unsigned long long)SB_RESULTS_LOGS_MAX);
	} else {
		(void)sb_buf_appendf(&b, NULL, "--- stdout ---\n");
		(void)sb_buf_append(&b, r->out.s, r->out.len, NULL);
		(void)sb_buf_appendf(&b, NULL, "\n--- stderr ---\n");
		(void)sb_buf_append(&b, r->err.s, r->err.len, NULL);
	}
	if (sb_write_file_atomic_at(h->results_fd, name, b.s, b.len, 0644, NULL) < 0)
		sb_log(SB_LOG_WARN, "cannot write the log '%s', ignoring", name);
	sb_buf_release(&b);
}

/* ScriptResult {code, stdout, stderr}, plus what upstream did not report. */
json_t *
script_result(const struct sb_cmd_result *r)
{
	/* stdout_intact: all of it, and no NUL byte (where the JSON string would stop): a
	 * test's count line is read from it, and code the test ran could hide the harness's
	 * line behind a NUL or past the cap (docs/grading.md, "Test counts"). */
	bool intact = r->out_dropped == 0 &&
		      (r->out.len == 0 || memchr(r->out.s, '\0', r->out.len) == NULL);

	return json_pack("{s:i, s:o, s:o, s:b, s:b, s:b, s:I}", "code", r->exit_code, "stdout",
	    sb_json_string_or_null(r->out.s), "stderr", sb_json_string_or_null(r->err.s),
	    "timed_out", r->timed_out, "truncated", r->out_dropped > 0 || r->err_dropped > 0,
	    "stdout_intact", intact, "duration_ms", (json_int_t)r->elapsed_ms);
}

/*
 * The kinds of sanitizer report a PoC check may name to the agent: a fixed list, so that
 * what the agent learns from a check on hidden material is one of these words, never text
 * the checked program wrote.
 */
static const struct {
	const char *marker, *kind;
} sanitizer_kinds[] = {
	{ "AddressSanitizer: heap-buffer-overflow", "AddressSanitizer: heap-buffer-overflow" },
	{ "AddressSanitizer: stack-buffer-overflow", "AddressSanitizer: stack-buffer-overflow" },
	{ "AddressSanitizer: global-buffer-overflow", "AddressSanitizer: global-buffer-overflow" },
	{ "AddressSanitizer: dynamic-stack-buffer-overflow",
	    "AddressSanitizer: dynamic-stack-buffer-overflow" },
	{ "AddressSanitizer: heap-use-after-free", "AddressSanitizer: heap-use-after-free" },
	{ "AddressSanitizer: stack-use-after-return", "AddressSanitizer: stack-use-after-return" },
	{ "AddressSanitizer: stack-use-after-scope", "AddressSanitizer: stack-use-after-scope" },
	{ "AddressSanitizer: attempting double-free", "AddressSanitizer: double-free" },
	{ "AddressSanitizer: attempting free on address", "AddressSanitizer: bad-free" },
	{ "AddressSanitizer: alloc-dealloc-mismatch", "AddressSanitizer: alloc-dealloc-mismatch" },
	{ "AddressSanitizer: container-overflow", "AddressSanitizer: container-overflow" },
	{ "AddressSanitizer: memcpy-param-overlap", "AddressSanitizer: memcpy-param-overlap" },
	{ "AddressSanitizer: negative-size-param", "AddressSanitizer: negative-size-param" },
	{ "AddressSanitizer: stack-overflow", "AddressSanitizer: stack-overflow" },
	{ "AddressSanitizer: SEGV", "AddressSanitizer: SEGV" },
	{ "AddressSanitizer: requested allocation size", "AddressSanitizer: allocation-size-too-big" },
	{ "AddressSanitizer: out of memory", "AddressSanitizer: out-of-memory" },
	{ "AddressSanitizer: ", "AddressSanitizer: other" },
	{ "LeakSanitizer: detected memory leaks", "LeakSanitizer: memory leak" },
	{ "MemorySanitizer: use-of-uninitialized-value", "MemorySanitizer: use-of-uninitialized-value" },
	{ "MemorySanitizer: ", "MemorySanitizer: other" },
	{ "ThreadSanitizer: ", "ThreadSanitizer: report" },
	{ ": runtime error: ", "UndefinedBehaviorSanitizer: runtime error" },
};

/* The first kind of sanitizer report in text, from the fixed list, or NULL. */
static const char *
sanitizer_kind(const char *text)
{
	for (size_t i = 0; i < SB_ARRAY_SIZE(sanitizer_kinds); i++)
		if (text != NULL && strstr(text, sanitizer_kinds[i].marker) != NULL)
			return sanitizer_kinds[i].kind;
	return NULL;
}

/*
 * What the agent gets of a check on hidden material at levels 0 and 1 (run_poc, and
 * intent_test at level 0): the outcome, and for a PoC the kind of sanitizer report from a
 * fixed list. Not the output: the program that ran is the agent's code, it was given the
 * PoC (or ran next to the hidden tests), and anything it prints, however encoded, would
 * carry them out. The whole output is in the daemon's logs (root's) as usual.
 *
 * Nor the exit status or the time it took, which that code chooses too: code is 0 (the PoC
 * no longer reproduces, the hidden tests pass) or 1, and timed_out says whether it ran out
 * of time. What is left for such code to signal with is that bit, the kind, and how long
 * the agent waited (integrity.md, "what a check on hidden material still tells").
 */
static json_t *
withheld_result(const struct sb_cmd_result *r, enum sb_action action)
{
	const char *kind = NULL, *msg;
	bool ok = r->exit_code == 0 && !r->timed_out;

	if (action == SB_ACTION_RUN_POC) {
		kind = sanitizer_kind(r->err.s);
		if (kind == NULL)
			kind = sanitizer_kind(r->out.s);
		msg = ok ? "the PoC no longer reproduces"
			 : r->timed_out ? "the PoC still reproduces (it timed out)"
					: "the PoC still reproduces";
	} else {
		msg = ok ? "the hidden tests pass"
			 : r->timed_out ? "the hidden tests fail (they timed out)"
					: "the hidden tests fail";
	}
	return json_pack("{s:i, s:s, s:s+++, s:b, s:b, s:b, s:o}", "code", ok ? 0 : 1, "stdout", "",
	    "stderr", msg, kind != NULL ? "; " : "", kind != NULL ? kind : "",
	    "\n(the output is withheld: the program that ran was given hidden material)",
	    "timed_out", r->timed_out, "truncated", false, "withheld", true, "sanitizer",
	    sb_json_string_or_null(kind));
}

/* A start failure (not executable, missing) as a result the caller can show. */
static void
result_from_start_error(struct sb_cmd_result *r, const struct sb_error *e, size_t cap)
{
	memset(r, 0, sizeof(*r));
	sb_buf_init(&r->out, cap);
	sb_buf_init(&r->err, cap);
	r->exit_code = sb_exit_code_for_exec_errno(sb_error_code(e));
	(void)sb_buf_appends(&r->err, sb_error_message(e), NULL);
}

void
run_untrusted(struct helper *h, struct sb_cmd *cmd, const struct sb_rlimit_set *limits,
    size_t n_limits, unsigned timeout_s, struct sb_cmd_result *res)
{
	struct sb_error *err = NULL;

	cmd->seccomp = h->untrusted;
	cmd->rlimits = limits;
	cmd->n_rlimits = n_limits;
	cmd->timeout_ms = (uint64_t)timeout_s * 1000;
	cmd->capture_max = h->c->output_cap;
	if (sb_cmd_run(cmd, res, &err) < 0) {
		result_from_start_error(res, err, h->c->output_cap);
		sb_error_release(&err);
	}
}

/* --- running task scripts as the runner --------------------------------------------- */

/*
 * A PoC run's sanitizer options, set by the harness and not by the task's script or the
 * project: the environment overrides whatever options the project compiled in
 * (__asan_default_options), so a patch cannot send the report elsewhere, give it exit
 * status 0, let the process go on after it, or catch the crash in a signal handler of its
 * own. run.sh may add options after these (they are appended to, as the pilot's scripts
 * do); the project's code cannot. What a program does at run time to its runtime instead
 * (__sanitizer_set_report_path, ...) the oracle facts of the build show (grading.h).
 */
static const struct {
	const char *name, *value;
} oracle_env[] = {
	{ "ASAN_OPTIONS", "exitcode=1:halt_on_error=1:abort_on_error=0:log_path=stderr:"
			  "log_to_syslog=0:allow_user_segv_handler=0:handle_segv=1:"
			  "handle_sigbus=1:handle_sigfpe=1:handle_sigill=1" },
	{ "UBSAN_OPTIONS", "log_path=stderr:log_to_syslog=0" },
	{ "MSAN_OPTIONS", "exitcode=1:halt_on_error=1:log_path=stderr:log_to_syslog=0" },
	{ "LSAN_OPTIONS", "log_path=stderr:log_to_syslog=0" },
};

/*
 * The runner's environment: the filtered daemon environment and a private home: the
 * session's, or for a check on hidden material (home NULL) the sandbox's own /tmp, gone
 * with the check.
 */
static void
runner_env(struct helper *h, const char *home, bool poc, struct sb_argv *env)
{
	_cleanup_free_ char *homep = home != NULL ? sb_path_join(h->c->runner_dir, home)
						  : sb_xstrdup("/tmp");

	sb_argv_pushv(env, (const char *const *)h->c->base_env);
	sb_env_set(env, "HOME", homep);
	if (home != NULL)
		sb_argv_pushf(env, "TMPDIR=%s/tmp", homep);
	else
		sb_env_set(env, "TMPDIR", "/tmp");
	sb_argv_pushf(env, "XDG_CACHE_HOME=%s/.cache", homep);
	sb_argv_pushf(env, "GOCACHE=%s/.cache/go-build", homep);
	sb_argv_pushf(env, "CCACHE_DIR=%s/.ccache", homep);
	sb_env_set(env, "USER", h->c->runner_name);
	sb_env_set(env, "LOGNAME", h->c->runner_name);
	for (size_t i = 0; poc && i < SB_ARRAY_SIZE(oracle_env); i++)
		sb_env_set(env, oracle_env[i].name, oracle_env[i].value);
}

/*
 * Run one program as the runner: own process group, capabilities and groups dropped,
 * no_new_privs, the untrusted seccomp filter, a process limit, no core dumps, a timeout,
 * capped output. Afterwards every runner process is killed, including ones that left the
 * group (docs/daemon.md, "Bencher actions").
 */
void
run_as_runner(struct helper *h, const char *path, char *const *argv, int cwd_fd,
    const char *home, unsigned timeout_s, const void *stdin_data, size_t stdin_len,
    const struct sb_sandbox *sandbox, bool poc, struct sb_cmd_result *res)
{
	/* RLIMIT_NPROC counts every process of the runner uid: a fork bomb stops there. */
	const struct sb_rlimit_set limits[] = {
		{ RLIMIT_NPROC, h->c->runner_nproc, h->c->runner_nproc },
		{ RLIMIT_CORE, 0, 0 },
	};
	_cleanup_argv_ struct sb_argv env = SB_ARGV_INIT;
	struct sb_cmd cmd = SB_CMD_INIT;
	struct sb_error *err = NULL;

	runner_env(h, home, poc, &env);
	cmd.path = path;
	cmd.argv = argv;
	cmd.envp = env.v;
	cmd.cwd_fd = cwd_fd;
	cmd.stdin_fd = stdin_data != NULL ? SB_CMD_CAPTURE : SB_CMD_DEVNULL;
	cmd.stdin_data = stdin_data;
	cmd.stdin_len = stdin_len;
	cmd.stdout_fd = SB_CMD_CAPTURE;
	cmd.stderr_fd = SB_CMD_CAPTURE;
	cmd.creds = &h->c->runner;
	if (sandbox == NULL)
		sandbox = h->agent_phase ? &h->runner_sandbox : &h->withheld_sandbox;
	cmd.sandbox = sandbox;
	cmd.flags = SB_CMD_NEW_PGRP | SB_CMD_DEATHSIG;
	run_untrusted(h, &cmd, limits, SB_ARRAY_SIZE(limits), timeout_s, res);
	if (sb_proc_kill_uid(h->c->runner.uid, h->c->runner.gid, KILL_ROUNDS, &err) < 0) {
		sb_log(SB_LOG_ERROR, "after %s: %s", path, sb_error_message(err));
		sb_error_release(&err);
	}
}

/* --- scratch copies and the runner's area -------------------------------------------- */

struct empty_arg {
	int parent_fd;
	const char *name;
};

static int
empty_as_owner(void *p)
{
	struct empty_arg *a = p;
	_cleanup_close_ int fd =
	    openat(a->parent_fd, a->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -1;
	return sb_empty_dir_at(fd, NULL);
}

/*
 * What the runner could not remove of a tree of its own: root-owned directories a copy left
 * in it when it failed half-way (a full disk), which would otherwise stay for ever. Root
 * walks it only when no process of the runner is alive, so nothing can change the tree
 * under the walk (and the walk follows no link anyway).
 */
static bool
empty_as_root(struct helper *h, int parent_fd, const char *name)
{
	_cleanup_close_ int fd = -1;
	struct sb_error *err = NULL;

	if (sb_proc_count_uid(h->c->runner.uid, NULL) != 0)
		return false;
	fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (sb_empty_dir_at(fd, &err) < 0) {
		sb_log(SB_LOG_WARN, "emptying '%s' as root: %s", name, sb_error_message(err));
		sb_error_release(&err);
		return false;
	}
	return true;
}

/*
 * Remove name in parent_fd (a root-owned directory). Trees owned by the runner are emptied
 * by a child running as the runner (docs/design.md, "Untrusted trees": root never walks
 * a tree its owner can change under it), then root removes the empty directory; root-owned directories are
 * walked by root, entry by entry, with the same rule.
 */
int
remove_mixed(struct helper *h, int parent_fd, const char *name, struct sb_error **err)
{
	struct stat st;

	if (fstatat(parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : sb_error_errno(err, errno, "stat '%s'", name);
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(parent_fd, name, 0) < 0 && errno != ENOENT)
			return sb_error_errno(err, errno, "unlink '%s'", name);
		return 0;
	}
	if (st.st_uid == h->c->runner.uid) {
		struct empty_arg a = { parent_fd, name };

		if (run_as(&h->c->runner, empty_as_owner, &a) < 0 && !empty_as_root(h, parent_fd, name))
			return sb_error_set(err, EIO, "could not empty '%s' as the runner", name);
	} else if (st.st_uid == 0) {
		_cleanup_close_ int fd =
		    openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		char **names = NULL;
		size_t n = 0;

		if (fd < 0)
			return sb_error_errno(err, errno, "open '%s'", name);
		if (sb_list_dir_at(fd, ".", SB_COPY_FILES_MAX, &names, &n, err) < 0)
			return -1;
		for (size_t i = 0; i < n; i++)
			if (remove_mixed(h, fd, names[i], err) < 0) {
				sb_strv_free(names);
				return -1;
			}
		sb_strv_free(names);
	} else {
		return sb_error_set(err, EPERM, "'%s' has an unexpected owner (%u)", name,
		    (unsigned)st.st_uid);
	}
	if (unlinkat(parent_fd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return sb_error_errno(err, errno, "rmdir '%s'", name);
	return 0;
}

/* A fresh workspace: <runner>/<ws>/src, a copy of the agent's tree or the grading source. */
static int
make_workspace(struct helper *h, const char *ws, bool grading, int *ret_src_fd,
    struct sb_error **err)
{
	struct sb_copy_opts o;
	_cleanup_close_ int ws_fd = -1, from = -1;
	struct sb_copy_stats st;
	int src;

	(void)remove_mixed(h, h->runner_fd, ws, NULL);
	ws_fd = dir_owned_at(h->runner_fd, ws, 0700, h->c->runner.uid, h->c->runner.gid, err);
	if (ws_fd < 0)
		return -1;
	if (grading)
		from = sb_open_beneath(h->runner_fd, "grading/src", O_RDONLY | O_DIRECTORY, 0,
		    SB_OPEN_NO_SYMLINKS, err);
	else
		from = open(h->c->source, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (from < 0)
		return sb_error_errno(err, errno, "open the source tree");
	memset(&o, 0, sizeof(o));
	/* Only what its owner made: the agent's files (or the runner's grading copy). Anything
	 * else in the tree (a hard link to someone else's file) is not copied. */
	o.only_uid = grading ? h->c->runner.uid : h->c->agent.uid;
	o.chown_uid = h->c->runner.uid;
	o.chown_gid = h->c->runner.gid;
	if (sb_copy_tree_at(from, ws_fd, "src", &o, &st, err) < 0)
		return sb_error_prefix(err, "copy the source tree");
	src = openat(ws_fd, "src", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (src < 0)
		return sb_error_errno(err, errno, "open the copy");
	*ret_src_fd = src;
	return 0;
}

/*
 * Stage hidden material for one check in <runner>/stage-<ws>: a root-owned directory the
 * runner may enter but not change, holding runner-readable copies. Returns the absolute
 * path of the staged copy of rel (a file, or a whole directory when copy_dir).
 */
static char *
stage_copy(struct helper *h, const char *ws, const char *rel, const char *as_name,
    struct sb_error **err)
{
	_cleanup_free_ char *stage = sb_xasprintf("stage-%s", ws);
	_cleanup_close_ int sfd = -1, dfd = -1, src = -1;
	_cleanup_free_ char *relcopy = sb_xstrdup(as_name);
	char *p, *last;
	struct stat st;

	sfd = dir_owned_at(h->runner_fd, stage, 0710, 0, h->c->runner.gid, err);
	if (sfd < 0)
		return NULL;
	/* Intermediate directories of the staged name, root-owned too. */
	dfd = fcntl(sfd, F_DUPFD_CLOEXEC, 3);
	last = relcopy;
	for (p = relcopy; (p = strchr(p, '/')) != NULL; last = ++p) {
		int next;

		*p = '\0';
		next = dir_owned_at(dfd, last, 0710, 0, h->c->runner.gid, err);
		*p = '/';
		if (next < 0)
			return NULL;
		close(dfd);
		dfd = next;
	}
	src = sb_open_beneath(h->bench_fd, rel, O_RDONLY, 0, SB_OPEN_NO_SYMLINKS, err);
	if (src < 0 || fstat(src, &st) < 0)
		return NULL;
	/*
	 * The copies are root's, and the runner's group may read them (and run a script) but
	 * never change them: the runner runs the agent's code, which must not be able to
	 * rewrite run.sh while bash is still reading it, or the PoC, or the hidden tests.
	 */
	if (S_ISDIR(st.st_mode)) {
		struct sb_copy_opts o = { .only_uid = (uid_t)-1, .chown_uid = 0,
			.chown_gid = h->c->runner.gid, .group_read_only = true };

		if (sb_copy_tree_at(src, dfd, last, &o, NULL, err) < 0)
			return NULL;
	} else {
		_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(SB_JSON_FILE_MAX * 8);
		_cleanup_close_ int out = -1;
		mode_t mode = (st.st_mode & 0100) ? 0550 : 0440;

		if (sb_buf_read_fd(&b, src, err) < 0)
			return NULL;
		out = openat(dfd, last, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (out < 0 || write(out, b.s, b.len) != (ssize_t)b.len ||
		    fchown(out, 0, h->c->runner.gid) < 0 || fchmod(out, mode) < 0) {
			sb_error_errno(err, errno, "stage '%s'", rel);
			return NULL;
		}
	}
	return sb_xasprintf("%s/%s/%s", h->c->runner_dir, stage, as_name);
}

/* Is any hidden file (patch, hidden tests, another PoC) below the top directory of rel? */
static bool
dir_holds_other_hidden(const struct dconf *c, const char *top, const char *poc)
{
	const struct sb_task_config *t = c->task;
	const char *hidden[] = { t->files.patch.s, t->files.future_test.s,
		t->files.security_test.s, t->files.intent_test.s };
	size_t tl = strlen(top);

	for (size_t i = 0; i < SB_ARRAY_SIZE(hidden); i++)
		if (hidden[i] != NULL && strncmp(hidden[i], top, tl) == 0 && hidden[i][tl] == '/')
			return true;
	for (size_t i = 0; i < t->files.poc.n; i++)
		if (strcmp(t->files.poc.v[i].s, poc) != 0 &&
		    strncmp(t->files.poc.v[i].s, top, tl) == 0 && t->files.poc.v[i].s[tl] == '/')
			return true;
	return false;
}

/* The directory in the runner's area where what an old session left is put away. */
#define TRASH_DIR ".trash"

/*
 * Clear the runner's area for a new session. Everything in it is first moved, by rename,
 * into a root-owned 0700 directory: the new session starts from an empty area whatever the
 * old one left (a 10,000-deep tree, a directory it made unreadable, a file it still holds
 * open), because a rename does not care what is below the name. Then the trash is removed,
 * best effort: what cannot be removed stays out of every reach but root's, and a failure is
 * logged, not a reason to refuse grading (which would let a check the agent ran decide
 * that its run ends in an error).
 */
static int
clear_runner_area(struct helper *h, struct sb_error **err)
{
	_cleanup_close_ int tfd = -1;
	struct sb_error *rerr = NULL;
	char **names = NULL;
	size_t n = 0;

	tfd = dir_owned_at(h->runner_fd, TRASH_DIR, 0700, 0, 0, err);
	if (tfd < 0)
		return -1;
	if (sb_list_dir_at(h->runner_fd, ".", SB_COPY_FILES_MAX, &names, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *to = NULL;

		if (strcmp(names[i], TRASH_DIR) == 0)
			continue;
		to = random_name("old");
		if (renameat(h->runner_fd, names[i], tfd, to) < 0) {
			sb_error_errno(err, errno, "move '%s' out of the runner's area", names[i]);
			sb_strv_free(names);
			return -1;
		}
	}
	sb_strv_free(names);
	/*
	 * The trash itself stays: making it again would need a free inode, and an agent's code
	 * that used up the last one must not be able to stop grading from starting.
	 */
	if (sb_list_dir_at(tfd, ".", SB_COPY_FILES_MAX, &names, &n, &rerr) < 0)
		n = 0;
	for (size_t i = 0; i <= n; i++) {
		if (rerr != NULL) {
			sb_log(SB_LOG_WARN, "what the last runner session left: %s, ignoring (it "
					    "stays in a directory only root may enter)",
			    sb_error_message(rerr));
			sb_error_release(&rerr);
		}
		if (i < n)
			(void)remove_mixed(h, tfd, names[i], &rerr);
	}
	sb_strv_free(names);
	return 0;
}

int
work_new_session(struct helper *h, const char *home, struct sb_error **err)
{
	_cleanup_close_ int hfd = -1, tfd = -1;

	if (sb_proc_kill_uid(h->c->runner.uid, h->c->runner.gid, KILL_ROUNDS, err) < 0)
		return -1;
	if (clear_runner_area(h, err) < 0)
		return -1;
	hfd = dir_owned_at(h->runner_fd, home, 0700, h->c->runner.uid, h->c->runner.gid, err);
	if (hfd < 0)
		return -1;
	tfd = dir_owned_at(hfd, "tmp", 0700, h->c->runner.uid, h->c->runner.gid, err);
	return tfd < 0 ? -1 : 0;
}

/* --- the oracle facts of a grading build (grading.h) ------------------------------------- */

#define ORACLE_DEPTH_MAX 64
#define ORACLE_FILES_MAX 200000	    /* entries walked */
#define ORACLE_REPLY_MAX (64 << 20) /* bytes of facts the child may send */

struct oracle_walk {
	struct grading_oracle o;
	const char *path;   /* of the file being scanned, for the callback */
	size_t entries;
};

static int
oracle_cb(const struct sb_elf_object *obj, void *arg)
{
	struct oracle_walk *w = arg;

	grading_oracle_object(&w->o, w->path, obj);
	return 0;
}

/* Walk the build tree below dfd (rel: its path so far): every ELF file and archive. */
static void
oracle_dir(struct oracle_walk *w, int dfd, const char *rel, unsigned depth)
{
	char **names = NULL;
	size_t n = 0;

	if (depth > ORACLE_DEPTH_MAX || sb_list_dir_at(dfd, ".", ORACLE_FILES_MAX, &names, &n, NULL) < 0) {
		w->o.truncated = true;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *child = *rel ? sb_xasprintf("%s/%s", rel, names[i])
						  : sb_xstrdup(names[i]);
		struct stat st;

		if (++w->entries > ORACLE_FILES_MAX) {
			w->o.truncated = true;
			break;
		}
		/* What cannot be looked at is recorded, never passed over: a directory or file
		 * the patch's build made unreadable could hold what is linked (fails closed). */
		if (fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0) {
			grading_oracle_unreadable(&w->o, child);
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			_cleanup_close_ int sub =
			    openat(dfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub >= 0)
				oracle_dir(w, sub, child, depth + 1);
			else
				grading_oracle_unreadable(&w->o, child);
		} else if (S_ISREG(st.st_mode) && st.st_size >= 4) {
			_cleanup_close_ int fd =
			    openat(dfd, names[i], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
			unsigned char head[8];
			enum sb_elf_file_type type;
			struct sb_error *err = NULL;
			ssize_t got;

			if (fd < 0) {
				grading_oracle_unreadable(&w->o, child);
				continue;
			}
			got = pread(fd, head, sizeof(head), 0);
			if (got < 4)
				continue;
			/* LLVM bitcode (-flto), raw or wrapped: objects this reader cannot see into. */
			if (memcmp(head, "BC\xC0\xDE", 4) == 0 || memcmp(head, "\xDE\xC0\x17\x0B", 4) == 0) {
				grading_oracle_unreadable(&w->o, child);
				continue;
			}
			type = got == (ssize_t)sizeof(head) ? sb_elf_sniff(head, sizeof(head))
							    : SB_ELF_FILE_NONE;
			if (type == SB_ELF_FILE_NONE)
				continue;
			w->path = child;
			if (type == SB_ELF_FILE_THIN_ARCHIVE ||
			    sb_elf_scan_file_at(dfd, names[i], oracle_cb, w, &err) < 0) {
				grading_oracle_unreadable(&w->o, child);
				sb_error_release(&err);
			}
		}
	}
	sb_strv_free(names);
}

/*
 * The oracle facts of the grading build in src: read by a child that is the runner (the
 * tree is the runner's, and what reads it is a parser of files the patch's code wrote), under
 * the untrusted filter; the facts come back as JSON, checked by sb_json_load. NULL (logged)
 * when they could not be had: the evaluator then grades with no facts, which fails closed.
 */
static json_t *
oracle_facts(struct helper *h, int src)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(ORACLE_REPLY_MAX);
	struct sb_error *err = NULL;
	json_t *facts = NULL;
	int fds[2], status;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return NULL;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return NULL;
	}
	if (pid == 0) {
		struct oracle_walk w = { .path = NULL };
		_cleanup_free_ char *text = NULL;
		json_t *j;
		const char *step;

		close(fds[0]);
		if (sb_priv_drop(&h->c->runner, &step) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 ||
		    sb_seccomp_install(h->untrusted) < 0)
			_exit(1);
		grading_oracle_init(&w.o);
		oracle_dir(&w, src, "", 0);
		j = grading_oracle_json(&w.o);
		text = sb_json_dumps(j, JSON_COMPACT);
		_exit(write_all(fds[1], text, strlen(text)) ? 0 : 1);
	}
	close(fds[1]);
	if (sb_buf_read_fd(&b, fds[0], &err) < 0) {
		sb_log(SB_LOG_ERROR, "oracle facts: %s", sb_error_message(err));
		sb_error_release(&err);
		kill(pid, SIGKILL);
	}
	close(fds[0]);
	if (SB_RETRY_EINTR(waitpid(pid, &status, 0)) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		sb_log(SB_LOG_ERROR, "oracle facts: the reader failed (status %d)", status);
		return NULL;
	}
	if (sb_json_load(b.s, b.len, ORACLE_REPLY_MAX, &facts, &err) < 0 || !json_is_object(facts)) {
		sb_log(SB_LOG_ERROR, "oracle facts: %s", err ? sb_error_message(err) : "not an object");
		sb_error_release(&err);
		json_decref(facts);
		return NULL;
	}
	return facts;
}

/* --- bencher ------------------------------------------------------------------------- */

static int
bencher_build(struct helper *h, struct job_spec *j)
{
	_cleanup_free_ char *script = sb_path_join(h->c->bench_path, h->c->task->scripts.build.s);
	char *argv[] = { script, NULL };
	_cleanup_close_ int src = -1;
	struct sb_error *err = NULL;
	struct sb_cmd_result r;
	json_auto_t *reply = NULL;

	if (j->previous_build != NULL && remove_mixed(h, h->runner_fd, j->previous_build, &err) < 0) {
		sb_log(SB_LOG_WARN, "removing %s: %s, ignoring", j->previous_build,
		    sb_error_message(err));
		sb_error_release(&err);
	}
	if (make_workspace(h, j->workspace, j->req.grading, &src, &err) < 0) {
		sb_log(SB_LOG_ERROR, "build: %s", sb_error_message(err));
		sb_error_release(&err);
		return dproto_reply_error(j->reply_fd, 500, "could not prepare the build workspace");
	}
	run_as_runner(h, script, argv, src, j->home, h->c->build_timeout, NULL, 0, NULL, false, &r);
	write_log(h, "scriptrunner", script, &r);
	reply = script_result(&r);
	/* Grading: what the build made, for the evaluator to judge the oracle by. */
	if (j->req.grading && j->ch == DCH_ADMIN && r.exit_code == 0) {
		json_t *facts = oracle_facts(h, src);

		json_object_set_new(reply, "oracle", facts != NULL ? facts : json_null());
	}
	sb_cmd_result_release(&r);
	return dproto_reply(j->reply_fd, 200, reply);
}

/*
 * A check on hidden material (run_poc; intent_test) runs the agent's code with the PoC or
 * next to the hidden tests. What that code may do with them:
 *   - write only where it is thrown away: the sandbox's own /tmp, which is also its HOME
 *     and TMPDIR, and for intent_test its fresh workspace, removed when the check ends;
 *     the rest of the runner's area (its homes, the build run_poc runs in) is read-only to
 *     it, so nothing it leaves is there for a later check, or for the agent to measure;
 *   - be watched by nobody: when the agent asked for the check, every process of the agent
 *     is held still for its length (its /proc view of the runner's processes, a terminal or
 *     queue it opened, the disk's free space are all still); they go on once the runner's
 *     processes are dead and what they wrote is gone. With the agent's freezer cgroup
 *     (SSE_AGENT_CGROUP) they are frozen, and a process of the agent's uid outside it
 *     refuses the check. Without one, they are stopped by SIGSTOP to the uid, which a
 *     SIGCONT the kernel sends on the agent's behalf (a POSIX timer, F_SETSIG, O_ASYNC,
 *     mq_notify) undoes: a frozen task ignores every signal until it is thawed.
 * The same sandbox serves grading, so a PoC sees the same world in both phases.
 */
struct hidden_check {
	struct sb_sandbox sb;
	char *writable; /* the intent workspace, absolute, or NULL */
	char *build, *stage; /* run_poc's build and the check's staged files, absolute */
	bool frozen;
};

static int
hidden_check_begin(struct helper *h, struct job_spec *j, const char *workspace,
    struct hidden_check *hc, struct sb_error **err)
{
	memset(hc, 0, sizeof(*hc));
	hc->sb = h->withheld_sandbox;
	hc->sb.nwritable = 0;
	hc->sb.prepared = false;
	/*
	 * In a root of its own only what is mounted in is there, and of the runner's area only
	 * what the check uses: run_poc's build (read-only) and the check's staged files, on an
	 * empty tmpfs over the rest (the scaffold). A name the check's code looks up in the
	 * area itself, even one that does not exist (ext4 keeps those), would stay for the
	 * agent's next build to time; these directories are gone before that build runs.
	 */
	if (hc->sb.root != NULL) {
		hc->sb.scaffold = h->c->runner_dir;
		hc->stage = sb_xasprintf("%s/stage-%s", h->c->runner_dir, j->workspace);
		if (sb_sandbox_add(hc->sb.bound, &hc->sb.nbound, hc->stage, err) < 0)
			return -1;
		if (j->req.action == SB_ACTION_RUN_POC) {
			hc->build = sb_path_join(h->c->runner_dir, j->workspace);
			if (sb_sandbox_add(hc->sb.bound, &hc->sb.nbound, hc->build, err) < 0)
				return -1;
		}
	}
	/* run_poc sees what run.sh alone needs (support_for_poc_only); intent_test does not. */
	if (j->req.action == SB_ACTION_RUN_POC) {
		size_t k = 0;

		for (size_t i = 0; i < hc->sb.nhidden; i++) {
			bool poc_only = false;

			for (char **p = h->poc_support_paths; p != NULL && *p != NULL; p++)
				if (strcmp(*p, hc->sb.hidden[i]) == 0)
					poc_only = true;
			if (!poc_only)
				hc->sb.hidden[k++] = hc->sb.hidden[i];
		}
		hc->sb.nhidden = k;
	}
	if (workspace != NULL) {
		hc->writable = sb_path_join(h->c->runner_dir, workspace);
		if (sb_sandbox_add(hc->sb.writable, &hc->sb.nwritable, hc->writable, err) < 0)
			return -1;
	}
	if (sb_sandbox_prepare(&hc->sb, h->c->runner.uid, h->c->runner.gid, err) < 0)
		return -1;
	if (j->ch == DCH_AGENT) {
		/* Set first: a stop refused half-way (some processes stopped) is continued by
		 * hidden_check_end like a whole one, never left stopped. */
		hc->frozen = true;
		if (h->freezer.fd >= 0 &&
		    sb_freezer_freeze(&h->freezer, h->c->agent.uid, FREEZE_TIMEOUT_MS, err) < 0)
			return sb_error_prefix(err, "freeze the agent's processes");
		if (h->freezer.fd < 0 &&
		    sb_proc_signal_uid(h->c->agent.uid, h->c->agent.gid, SIGSTOP, err) < 0)
			return sb_error_prefix(err, "stop the agent's processes");
	}
	return 0;
}

int
work_agent_continue(struct helper *h, struct sb_error **err)
{
	if (h->freezer.fd >= 0)
		return sb_freezer_thaw(&h->freezer, err);
	return sb_proc_signal_uid(h->c->agent.uid, h->c->agent.gid, SIGCONT, err);
}

static void
hidden_check_end(struct helper *h, struct hidden_check *hc)
{
	struct sb_error *err = NULL;

	/*
	 * /proc's own names (meminfo, stat, ...: its directories and every other process are
	 * covered for the check) are all looked up again before the agent goes on: one the
	 * check looked up first, after memory pressure took it from the cache, is then no
	 * faster for the agent than any other.
	 */
	if (hc->frozen && sb_proc_look_up_all("/proc", &err) < 0) {
		sb_log(SB_LOG_WARN, "%s, ignoring", sb_error_message(err));
		sb_error_release(&err);
	}
	if (hc->frozen && work_agent_continue(h, &err) < 0) {
		sb_log(SB_LOG_ERROR, "continue the agent's processes: %s", sb_error_message(err));
		sb_error_release(&err);
	}
	hc->frozen = false;
	free(hc->writable);
	free(hc->build);
	free(hc->stage);
	hc->writable = hc->build = hc->stage = NULL;
}

static int
bencher_run_poc(struct helper *h, struct job_spec *j)
{
	_cleanup_free_ char *run = NULL, *poc = NULL, *src_path = NULL;
	_cleanup_free_ char *top = NULL, *stage = NULL;
	_cleanup_close_ int src = -1;
	struct sb_error *err = NULL;
	struct sb_cmd_result r;
	json_auto_t *reply = NULL;
	char *argv[3];
	const char *slash = strchr(j->poc, '/');
	struct hidden_check hc;

	if (hidden_check_begin(h, j, NULL, &hc, &err) < 0) {
		sb_log(SB_LOG_ERROR, "run_poc: %s", sb_error_message(err));
		sb_error_release(&err);
		hidden_check_end(h, &hc);
		return dproto_reply_error(j->reply_fd, 500, "could not set up the PoC check");
	}
	/* run.sh stays root-only in /ssebench: it may say too much about the PoC. It is
	 * copied for this one check, with the PoC (docs/upstream.md, "Task scripts"). */
	stage = sb_xasprintf("stage-%s", j->workspace);
	(void)remove_mixed(h, h->runner_fd, stage, NULL);
	run = stage_copy(h, j->workspace, h->c->task->scripts.run.s, "script/run.sh", &err);
	if (run != NULL) {
		/* A PoC inside a directory that holds nothing else hidden (a Go module, a
		 * crate) travels with that directory. */
		top = slash != NULL ? sb_xstrndup(j->poc, (size_t)(slash - j->poc)) : NULL;
		if (top != NULL && !dir_holds_other_hidden(h->c, top, j->poc)) {
			_cleanup_free_ char *as = sb_xasprintf("files/%s", top);
			_cleanup_free_ char *d = stage_copy(h, j->workspace, top, as, &err);

			poc = d != NULL ? sb_xasprintf("%s/%s", d, slash + 1) : NULL;
		} else {
			_cleanup_free_ char *as = sb_xasprintf("files/%s", j->poc);

			poc = stage_copy(h, j->workspace, j->poc, as, &err);
		}
	}
	src_path = sb_xasprintf("%s/src", j->workspace);
	if (run == NULL || poc == NULL ||
	    (src = sb_open_beneath(h->runner_fd, src_path, O_RDONLY | O_DIRECTORY, 0,
		 SB_OPEN_NO_SYMLINKS, &err)) < 0) {
		sb_log(SB_LOG_ERROR, "run_poc: %s", sb_error_message(err));
		sb_error_release(&err);
		(void)remove_mixed(h, h->runner_fd, stage, NULL);
		hidden_check_end(h, &hc);
		return dproto_reply_error(j->reply_fd, 500, "could not stage the PoC");
	}
	argv[0] = run;
	argv[1] = poc;
	argv[2] = NULL;
	run_as_runner(h, run, argv, src, NULL, h->c->poc_timeout, NULL, 0, &hc.sb, true, &r);
	write_log(h, "scriptrunner", poc, &r);
	/* The staged copies go as soon as the check is over. */
	if (remove_mixed(h, h->runner_fd, stage, &err) < 0) {
		sb_log(SB_LOG_ERROR, "removing staged PoC: %s", sb_error_message(err));
		sb_error_release(&err);
	}
	hidden_check_end(h, &hc);
	reply = j->ch == DCH_AGENT ? withheld_result(&r, SB_ACTION_RUN_POC) : script_result(&r);
	sb_cmd_result_release(&r);
	return dproto_reply(j->reply_fd, 200, reply);
}

static int
bencher_test(struct helper *h, struct job_spec *j, bool intent)
{
	_cleanup_free_ char *script = sb_path_join(h->c->bench_path, h->c->task->scripts.test.s);
	_cleanup_free_ char *stage = sb_xasprintf("stage-%s", j->workspace);
	char *argv[] = { script, NULL };
	_cleanup_close_ int src = -1;
	struct sb_error *err = NULL;
	struct sb_cmd_result r;
	json_auto_t *reply = NULL;
	struct hidden_check hc = { .frozen = false, .writable = NULL };
	int rc;

	if (intent && hidden_check_begin(h, j, j->workspace, &hc, &err) < 0) {
		sb_log(SB_LOG_ERROR, "intent_test: %s", sb_error_message(err));
		sb_error_release(&err);
		hidden_check_end(h, &hc);
		return dproto_reply_error(j->reply_fd, 500, "could not set up the hidden tests");
	}
	if (make_workspace(h, j->workspace, j->req.grading, &src, &err) < 0) {
		sb_log(SB_LOG_ERROR, "%s: %s", sb_action_name(j->req.action), sb_error_message(err));
		sb_error_release(&err);
		(void)remove_mixed(h, h->runner_fd, j->workspace, NULL);
		hidden_check_end(h, &hc);
		return dproto_reply_error(j->reply_fd, 500, "could not prepare the test workspace");
	}
	if (intent) {
		/* The hidden tests are staged for this check only, applied by the runner. */
		_cleanup_free_ char *diff =
		    stage_copy(h, j->workspace, h->c->task->files.future_test.s, "tests.diff", &err);
		_cleanup_free_ char *git = NULL;
		char *gargv[] = { (char *)"git", (char *)"apply", (char *)"-p1", diff, NULL };

		if (diff == NULL ||
		    sb_cmd_find_program("git", dconf_env_get(h->c, "PATH"), &git, &err) < 0) {
			sb_log(SB_LOG_ERROR, "intent_test: %s", sb_error_message(err));
			sb_error_release(&err);
			rc = dproto_reply_error(j->reply_fd, 500, "could not stage the hidden tests");
			goto out;
		}
		run_as_runner(h, git, gargv, src, NULL, h->c->test_timeout, NULL, 0, &hc.sb, false, &r);
		write_log(h, "patch", "git apply -p1 tests.diff", &r);
		if (r.exit_code != 0) {
			/* git's words name the hidden tests' files and lines: not for the agent. */
			rc = j->ch == DCH_AGENT
			    ? dproto_reply_error(j->reply_fd, 500, "git apply failed")
			    : dproto_reply_error(j->reply_fd, 500, "git apply failed, %s, %s", r.out.s,
				  r.err.s);
			sb_cmd_result_release(&r);
			goto out;
		}
		sb_cmd_result_release(&r);
	}
	run_as_runner(h, script, argv, src, intent ? NULL : j->home, h->c->test_timeout, NULL, 0,
	    intent ? &hc.sb : NULL, false, &r);
	write_log(h, "scriptrunner", script, &r);
	reply = intent && j->ch == DCH_AGENT ? withheld_result(&r, SB_ACTION_INTENT_TEST)
					     : script_result(&r);
	sb_cmd_result_release(&r);
	/* Test workspaces do not outlive their check; a hidden one is gone before the agent
	 * runs again. */
	(void)remove_mixed(h, h->runner_fd, stage, NULL);
	(void)remove_mixed(h, h->runner_fd, j->workspace, NULL);
	hidden_check_end(h, &hc);
	return dproto_reply(j->reply_fd, 200, reply);
out:
	(void)remove_mixed(h, h->runner_fd, stage, NULL);
	(void)remove_mixed(h, h->runner_fd, j->workspace, NULL);
	hidden_check_end(h, &hc);
	return rc;
}

int
work_bencher(struct helper *h, struct job_spec *j)
{
	int rc;

	if (j->new_session) {
		struct sb_error *err = NULL;

		if (work_new_session(h, j->home, &err) < 0) {
			sb_log(SB_LOG_ERROR, "%s: a new runner session: %s", sb_action_name(j->req.action),
			    sb_error_message(err));
			sb_error_release(&err);
			rc = dproto_reply_error(j->reply_fd, 500, "could not start a new runner session");
			return work_done(rc);
		}
		sb_log(SB_LOG_INFO, "%s: the runner starts over (a check on hidden material ran "
				    "since its last check)", sb_action_name(j->req.action));
	}
	switch (j->req.action) {
	case SB_ACTION_BUILD:
		rc = bencher_build(h, j);
		break;
	case SB_ACTION_RUN_POC:
		rc = bencher_run_poc(h, j);
		break;
	case SB_ACTION_FUNCTION_TEST:
	case SB_ACTION_INTENT_TEST:
		rc = bencher_test(h, j, j->req.action == SB_ACTION_INTENT_TEST);
		break;
	case SB_ACTION_COUNT:
	default:
		/* Never reached (the helper refuses unknown actions); if it were, run nothing. */
		rc = dproto_reply_error(j->reply_fd, 500, "unknown bencher action");
		break;
	}
	return work_done(rc);
}

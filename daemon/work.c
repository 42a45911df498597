/* SPDX-License-Identifier: Apache-2.0 */
/*
 * work.c: what the helper's workers do, and the daemon's start-up preparation.
 *
 * Each worker runs in a child of the helper (root) and does one request: it drops to the
 * agent's uid for anything that reads the agent's files (the diff, the dialog: so a planted
 * symlink can only reach what the agent could read anyway), runs task scripts as the
 * runner uid in scratch copies (integrity-model: "Task scripts run as a third,
 * unprivileged user"), and writes the reply itself.
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
#include "sb/dialog.h"
#include "sb/fs.h"
#include "sb/git.h"
#include "sb/json.h"
#include "sb/limits.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/path.h"
#include "sb/proc.h"
#include "sb/spawn.h"
#include "sb/tree.h"

#include "grading.h"
#include "helper.h"

#ifndef SB_GIT_DIFF_MAX
#define SB_GIT_DIFF_MAX (64 * 1024 * 1024)
#endif
#ifndef SB_GIT_COMMITS_LOG_MAX
#define SB_GIT_COMMITS_LOG_MAX (1024 * 1024)
#endif

#define KILL_ROUNDS 20
/* How long the agent's cgroup may take to freeze (a task in an uninterruptible wait
 * freezes when it leaves it), and its kill to empty it. */
#define FREEZE_TIMEOUT_MS 5000

/* Compiled once at start-up, before any fork: the filter for untrusted code. */
static struct sb_seccomp *untrusted_filter;

/*
 * The task scripts' sandbox (sb/sandbox.h), prepared once at start-up: no network but
 * loopback, a private /tmp, /var/tmp and /dev/shm, everything read-only but the runner's
 * area, and the places of the agent and the sockets hidden. The scripts run the agent's
 * code next to the PoCs (levels 0 and 1) and the hidden tests (level 0, and grading at every
 * level): with no network and no place the agent can see, that code can keep what it is
 * shown only in what the check itself answers.
 */
static struct sb_sandbox runner_sandbox;
/*
 * The same for the jobs whose output the agent never sees (checks on hidden material, and
 * everything once its phase is over): in the scripts' own root (SSE_RUNNER_ROOT), a copy of
 * the image that the agent cannot read and its builds, in runner_sandbox, cannot see. What
 * such a job does to the page cache of a file therefore reaches neither the agent nor the
 * output of its next build (docs/integrity.md, "the scripts' own root").
 */
static struct sb_sandbox withheld_sandbox;
static struct sb_runner_places runner_places;
static char **poc_support_paths; /* support directories for run_poc only, absolute */

/* --- small helpers ------------------------------------------------------------------ */

/* A variable of the environment scripts get ("PATH"), or NULL. */
static const char *
base_env_get(const struct dconf *c, const char *name)
{
	size_t l = strlen(name);

	for (char **e = c->base_env; *e != NULL; e++)
		if (strncmp(*e, name, l) == 0 && (*e)[l] == '=')
			return *e + l + 1;
	return NULL;
}

/* Worker exit statuses: the helper answers for a worker that could not (status 1). */
enum {
	WORK_DONE = 0,	 /* answered; the operation succeeded */
	WORK_NOREPLY = 1, /* could not answer */
	WORK_FAILED = 2, /* answered with a failure */
};

/* After an error reply: WORK_FAILED, or WORK_NOREPLY if even that could not be sent. */
static int
failed(int reply_rc)
{
	return reply_rc < 0 ? WORK_NOREPLY : WORK_FAILED;
}

static int
done(int reply_rc)
{
	return reply_rc < 0 ? WORK_NOREPLY : WORK_DONE;
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * Give fd this owner and mode, changing only what differs. The task files and the pristine
 * tree are on the container's root file system, which is read-only in a run: the tool
 * layer gave them the right owner and mode already, and a change that is not needed must
 * not fail there. A change that is needed and fails (EROFS included) is an error.
 */
static int
own_fd(int fd, uid_t uid, gid_t gid, mode_t mode)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -1;
	if ((st.st_uid != uid || st.st_gid != gid) && fchown(fd, uid, gid) < 0)
		return -1;
	if ((st.st_mode & 07777) != mode && fchmod(fd, mode) < 0)
		return -1;
	return 0;
}

/* own_fd for name in dirfd, a regular file or a directory (never through a link). */
static int
own_at(int dirfd, const char *name, uid_t uid, gid_t gid, mode_t mode)
{
	_cleanup_close_ int fd =
	    openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	return fd < 0 ? -1 : own_fd(fd, uid, gid, mode);
}

/* Make directory name in parent_fd (if missing) with this owner and mode; return its fd. */
static int
dir_owned_at(int parent_fd, const char *name, mode_t mode, uid_t uid, gid_t gid,
    struct sb_error **err)
{
	struct stat st;
	int fd;

	if (mkdirat(parent_fd, name, mode) < 0 && errno != EEXIST)
		return sb_error_errno(err, errno, "mkdir '%s'", name);
	fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sb_error_errno(err, errno, "open '%s'", name);
	if (fstat(fd, &st) < 0 || fchown(fd, uid, gid) < 0 || fchmod(fd, mode) < 0) {
		sb_error_errno(err, errno, "set owner and mode of '%s'", name);
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * A root-owned directory at an absolute path, checked with lstat (not a link, owned by
 * root) and given `mode` and group `gid`. Created, with missing parents, if absent.
 */
static int
trusted_dir(const char *path, mode_t mode, gid_t gid, struct sb_error **err)
{
	_cleanup_free_ char *copy = sb_xstrdup(path);
	struct stat st;
	int fd;

	for (char *p = copy + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(copy, 0755) < 0 && errno != EEXIST)
			return sb_error_errno(err, errno, "mkdir '%s'", copy);
		*p = '/';
	}
	if (mkdir(path, mode) < 0 && errno != EEXIST)
		return sb_error_errno(err, errno, "mkdir '%s'", path);
	if (lstat(path, &st) < 0)
		return sb_error_errno(err, errno, "lstat '%s'", path);
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0)
		return sb_error_set(err, EPERM, "'%s' is not a root-owned directory", path);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sb_error_errno(err, errno, "open '%s'", path);
	if (own_fd(fd, 0, gid, mode) < 0) {
		sb_error_errno(err, errno, "set owner and mode of '%s'", path);
		close(fd);
		return -1;
	}
	return fd;
}

/* Run fn as creds in a child (async-signal-safe drop, then ordinary code). */
static int
run_as(const struct sb_creds *creds, int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		const char *step;

		if (sb_priv_drop(creds, &step) < 0)
			_exit(125);
		_exit(fn(arg) == 0 ? 0 : 1);
	}
	if (SB_RETRY_EINTR(waitpid(pid, &status, 0)) < 0)
		return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

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
 * by a child running as the runner (STYLE.md rule 17: root never walks a tree its owner
 * can change under it), then root removes the empty directory; root-owned directories are
 * walked by root, entry by entry, with the same rule.
 */
static int
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
static void
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
static json_t *
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

/* --- running task scripts as the runner --------------------------------------------- */

/*
 * The runner's environment: the filtered daemon environment and a private home: the
 * session's, or for a check on hidden material (home NULL) the sandbox's own /tmp, gone
 * with the check.
 */
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
 * group (integrity-model: "root kills every remaining sse-runner process").
 */
static void
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
		sandbox = h->agent_phase ? &runner_sandbox : &withheld_sandbox;
	cmd.sandbox = sandbox;
	cmd.seccomp = untrusted_filter;
	cmd.rlimits = limits;
	cmd.n_rlimits = SB_ARRAY_SIZE(limits);
	cmd.flags = SB_CMD_NEW_PGRP | SB_CMD_DEATHSIG;
	cmd.timeout_ms = (uint64_t)timeout_s * 1000;
	cmd.capture_max = h->c->output_cap;
	if (sb_cmd_run(&cmd, res, &err) < 0) {
		result_from_start_error(res, err, h->c->output_cap);
		sb_error_release(&err);
	}
	if (sb_proc_kill_uid(h->c->runner.uid, h->c->runner.gid, KILL_ROUNDS, &err) < 0) {
		sb_log(SB_LOG_ERROR, "after %s: %s", path, sb_error_message(err));
		sb_error_release(&err);
	}
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

static bool put(int fd, const void *p, size_t n);

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
		    sb_seccomp_install(untrusted_filter) < 0)
			_exit(1);
		grading_oracle_init(&w.o);
		oracle_dir(&w, src, "", 0);
		j = grading_oracle_json(&w.o);
		text = sb_json_dumps(j, JSON_COMPACT);
		_exit(put(fds[1], text, strlen(text)) ? 0 : 1);
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
	if (make_workspace(h, j->workspace, j->grading, &src, &err) < 0) {
		sb_log(SB_LOG_ERROR, "build: %s", sb_error_message(err));
		sb_error_release(&err);
		return dproto_reply_error(j->reply_fd, 500, "could not prepare the build workspace");
	}
	run_as_runner(h, script, argv, src, j->home, h->c->build_timeout, NULL, 0, NULL, false, &r);
	write_log(h, "scriptrunner", script, &r);
	reply = script_result(&r);
	/* Grading: what the build made, for the evaluator to judge the oracle by. */
	if (j->grading && j->ch == DCH_ADMIN && r.exit_code == 0) {
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
	hc->sb = withheld_sandbox;
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
		if (j->action == SB_ACTION_RUN_POC) {
			hc->build = sb_path_join(h->c->runner_dir, j->workspace);
			if (sb_sandbox_add(hc->sb.bound, &hc->sb.nbound, hc->build, err) < 0)
				return -1;
		}
	}
	/* run_poc sees what run.sh alone needs (support_for_poc_only); intent_test does not. */
	if (j->action == SB_ACTION_RUN_POC) {
		size_t k = 0;

		for (size_t i = 0; i < hc->sb.nhidden; i++) {
			bool poc_only = false;

			for (char **p = poc_support_paths; p != NULL && *p != NULL; p++)
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
	 * copied for this one check, with the PoC (upstream §2.4). */
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
	if (make_workspace(h, j->workspace, j->grading, &src, &err) < 0) {
		sb_log(SB_LOG_ERROR, "%s: %s", sb_action_name(j->action), sb_error_message(err));
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
		    sb_cmd_find_program("git", base_env_get(h->c, "PATH"), &git, &err) < 0) {
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
			sb_log(SB_LOG_ERROR, "%s: a new runner session: %s", sb_action_name(j->action),
			    sb_error_message(err));
			sb_error_release(&err);
			rc = dproto_reply_error(j->reply_fd, 500, "could not start a new runner session");
			return rc < 0 ? WORK_NOREPLY : WORK_DONE;
		}
		sb_log(SB_LOG_INFO, "%s: the runner starts over (a check on hidden material ran "
				    "since its last check)", sb_action_name(j->action));
	}
	switch (j->action) {
	case SB_ACTION_BUILD:
		rc = bencher_build(h, j);
		break;
	case SB_ACTION_RUN_POC:
		rc = bencher_run_poc(h, j);
		break;
	case SB_ACTION_FUNCTION_TEST:
	case SB_ACTION_INTENT_TEST:
		rc = bencher_test(h, j, j->action == SB_ACTION_INTENT_TEST);
		break;
	case SB_ACTION_COUNT:
	default:
		/* Never reached (the helper refuses unknown actions); if it were, run nothing. */
		rc = dproto_reply_error(j->reply_fd, 500, "unknown bencher action");
		break;
	}
	return rc < 0 ? WORK_NOREPLY : WORK_DONE;
}

/* --- bash ------------------------------------------------------------------------------ */

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
	const char *command = json_string_value(json_object_get(j->req, "command"));
	json_int_t want = json_integer_value(json_object_get(j->req, "timeout"));
	_cleanup_argv_ struct sb_argv env = SB_ARGV_INIT;
	_cleanup_close_ int cwd = -1;
	struct sb_cmd cmd = SB_CMD_INIT;
	struct sb_error *err = NULL;
	struct sb_cmd_result r;
	json_auto_t *reply = NULL;
	unsigned timeout = h->c->bash_timeout;
	char *argv[] = { (char *)"bash", (char *)"--noprofile", (char *)"--norc", (char *)"-c",
		(char *)bash_wrapper, (char *)"sse-bash", h->bash_state, (char *)command, NULL };
	static const struct sb_rlimit_set limits[] = { { RLIMIT_CORE, 0, 0 } };

	if (want > 0)
		timeout = want > (json_int_t)h->c->bash_timeout_max ? h->c->bash_timeout_max
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
	cmd.seccomp = untrusted_filter;
	cmd.rlimits = limits;
	cmd.n_rlimits = SB_ARRAY_SIZE(limits);
	/* Background jobs may outlive the call, as in a terminal (they die with the phase);
	 * output they keep writing is read for drain_ms, then left. */
	cmd.flags = SB_CMD_NEW_PGRP | SB_CMD_NO_GROUP_REAP;
	cmd.timeout_ms = (uint64_t)timeout * 1000;
	cmd.capture_max = h->c->output_cap;
	cmd.drain_ms = 500;
	if (sb_cmd_run(&cmd, &r, &err) < 0) {
		result_from_start_error(&r, err, h->c->output_cap);
		sb_error_release(&err);
	}
	reply = script_result(&r);
	sb_cmd_result_release(&r);
	return done(dproto_reply(j->reply_fd, 200, reply));
}

/* --- reading the agent's files, as the agent ------------------------------------------ */

/* Become the agent: from here on this worker can read only what the agent can. */
static int
become_agent(struct helper *h)
{
	const char *step;

	if (sb_priv_drop(&h->c->agent, &step) < 0) {
		sb_log_errno(SB_LOG_ERROR, errno, "worker: drop to the agent user (%s)", step);
		return -1;
	}
	/*
	 * This worker now has the agent's uid but still holds what root opened (the private
	 * git state, the results directory). The kernel makes it non-dumpable on the uid
	 * change only if fs.suid_dumpable is 0, a host setting; say so ourselves, so the agent
	 * can never ptrace it or open its /proc files (integrity-model: "the agent cannot read
	 * ... the run's results").
	 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
		sb_log_errno(SB_LOG_ERROR, errno, "worker: PR_SET_DUMPABLE");
		return -1;
	}
	return 0;
}

static int
capture_as_agent(struct helper *h, struct sb_git_capture *cap, char **ret_commits,
    struct sb_error **err)
{
	struct sb_git_baseline *b = NULL;
	int r;

	if (sb_git_init(err) < 0 || sb_git_baseline_open(h->git_dir, h->c->source, &b, err) < 0)
		return -1;
	r = sb_git_capture(b, SB_GIT_DIFF_MAX, cap, err);
	if (r == 0 && ret_commits != NULL && sb_git_commits_log(b, SB_GIT_COMMITS_LOG_MAX,
						 ret_commits, err) < 0)
		r = -1;
	sb_git_baseline_free(b);
	return r;
}

int
work_capture(struct helper *h, struct job_spec *j)
{
	struct sb_git_capture cap;
	struct sb_error *err = NULL;
	json_auto_t *reply = NULL;

	if (become_agent(h) < 0)
		return failed(dproto_reply_error(j->reply_fd, 500, "git failed"));
	memset(&cap, 0, sizeof(cap));
	if (capture_as_agent(h, &cap, NULL, &err) < 0) {
		sb_log(SB_LOG_WARN, "%s: %s", dreq_name(j->type), sb_error_message(err));
		sb_error_release(&err);
		return failed(dproto_reply_error(j->reply_fd, 500, "git failed"));
	}
	if (j->type == DREQ_DIFF) {
		reply = json_pack("{s:o}", "diff", json_stringn_nocheck(cap.diff, cap.diff_len));
	} else {
		json_t *files = json_array();

		for (size_t i = 0; i < cap.nfiles; i++)
			json_array_append_new(files,
			    json_pack("{s:o, s:s, s:I, s:I}", "path",
				sb_json_string_or_null(cap.files[i].path), "status",
				cap.files[i].status == SB_GIT_ADDED	  ? "added"
				: cap.files[i].status == SB_GIT_DELETED ? "deleted"
									  : "modified",
				"additions", (json_int_t)cap.files[i].additions, "deletions",
				(json_int_t)cap.files[i].deletions));
		reply = json_pack("{s:o}", "files", files);
	}
	/* A diff that is not valid UTF-8 (a binary patch is ASCII; a text file may not be). */
	if (reply == NULL) {
		_cleanup_free_ char *d = sb_xmemdup(cap.diff, cap.diff_len);

		reply = json_pack("{s:o}", "diff", sb_json_string_or_null(d));
	}
	sb_git_capture_release(&cap);
	return done(dproto_reply(j->reply_fd, 200, reply));
}

int
work_dialog(struct helper *h, struct job_spec *j)
{
	json_int_t since = json_integer_value(json_object_get(j->req, "since"));
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(SB_JSON_FILE_MAX * 4);
	_cleanup_close_ int dir = -1;
	json_auto_t *reply = NULL;
	json_t *entries;
	struct sb_error *err = NULL;

	/* The archive is the agent's: read it as the agent, links refused. */
	if (become_agent(h) < 0)
		return 1;
	dir = open(h->c->archive, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir >= 0 && sb_read_file_at(dir, "dialog.jsonl", SB_OPEN_NO_SYMLINKS, &b, &err) < 0 &&
	    sb_error_code(err) != ENOENT) {
		sb_error_release(&err);
		return failed(dproto_reply_error(j->reply_fd, 500, "cannot read dialog.jsonl"));
	}
	sb_error_release(&err);
	entries = sb_dialog_entries_since(b.s, b.len, since);
	reply = json_pack("{s:o}", "entries", entries);
	return done(dproto_reply(j->reply_fd, 200, reply));
}

/* --- grading and the end of the agent phase ------------------------------------------- */

/* The most of a capture's error message that comes back from its child. */
#define CAPTURE_ERROR_MAX 1024

/*
 * Capture in a child that becomes the agent. What comes back over a pipe is a status byte,
 * then either [u64 len][patch][u64 len][commits log] (status 0) or the error's message
 * (status 1), so that a capture the agent's tree makes fail can be told apart from a child
 * that died, and said. Returns 0, or -1 with *ret_refused set when the tree was refused (the
 * agent's doing) and unset for a failure of our own.
 */
/* What prepare_grading's capture brings back from the agent's side. */
struct grading_capture {
	char *diff;
	size_t len;
	char *commits;
	struct sb_git_file *files;
	size_t nfiles;
};

#define CAPTURE_RECORD (5 * 8 + 2) /* a file table entry, its path apart */

static void
grading_capture_release(struct grading_capture *c)
{
	for (size_t i = 0; i < c->nfiles; i++)
		free(c->files[i].path);
	free(c->files);
	free(c->diff);
	free(c->commits);
	memset(c, 0, sizeof(*c));
}

/* Write all of n bytes (a pipe to the parent). */
static bool
put(int fd, const void *p, size_t n)
{
	const char *s = p;

	while (n > 0) {
		ssize_t w = write(fd, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		s += w;
		n -= (size_t)w;
	}
	return true;
}

static int
capture_for_grading(struct helper *h, struct grading_capture *ret, bool *ret_refused,
    struct sb_error **err)
{
	/* The diff, the commits, and a file table whose paths are at most the diff again. */
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT((size_t)SB_GIT_DIFF_MAX * 2 +
	    SB_GIT_COMMITS_LOG_MAX + (size_t)SB_GIT_CHANGED_FILES_MAX * CAPTURE_RECORD + 64);
	int fds[2], status;
	uint64_t l1, l2, nf;
	size_t at;
	pid_t pid;

	*ret_refused = false;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return sb_error_errno(err, errno, "pipe2");
	pid = fork();
	if (pid < 0)
		return sb_error_errno(err, errno, "fork");
	if (pid == 0) {
		struct sb_git_capture cap;
		struct sb_error *cerr = NULL;
		char *commits = NULL;
		char st = 0;

		close(fds[0]);
		memset(&cap, 0, sizeof(cap));
		if (become_agent(h) < 0)
			_exit(1);
		if (capture_as_agent(h, &cap, &commits, &cerr) < 0) {
			const char *m = sb_error_message(cerr);
			size_t n = strlen(m) > CAPTURE_ERROR_MAX ? CAPTURE_ERROR_MAX : strlen(m);

			sb_log(SB_LOG_WARN, "capture: %s", m);
			st = 1;
			if (write(fds[1], &st, 1) != 1 || write(fds[1], m, n) != (ssize_t)n)
				_exit(1);
			_exit(0);
		}
		l1 = cap.diff_len;
		l2 = strlen(commits);
		nf = cap.nfiles;
		if (!put(fds[1], &st, 1) || !put(fds[1], &l1, 8) || !put(fds[1], cap.diff, l1) ||
		    !put(fds[1], &l2, 8) || !put(fds[1], commits, l2) || !put(fds[1], &nf, 8))
			_exit(1);
		/* Each file: its section, lines, status, binary, then its path. */
		for (size_t i = 0; i < cap.nfiles; i++) {
			const struct sb_git_file *f = &cap.files[i];
			uint64_t rec[5] = { f->diff_off, f->diff_len, f->additions, f->deletions,
				strlen(f->path) };
			unsigned char flags[2] = { (unsigned char)f->status, f->binary };

			if (!put(fds[1], rec, sizeof(rec)) || !put(fds[1], flags, 2) ||
			    !put(fds[1], f->path, rec[4]))
				_exit(1);
		}
		_exit(0);
	}
	close(fds[1]);
	if (sb_buf_read_fd(&b, fds[0], err) < 0) {
		close(fds[0]);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	close(fds[0]);
	if (SB_RETRY_EINTR(waitpid(pid, &status, 0)) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0 || b.len < 1)
		return sb_error_set(err, EIO, "git failed");
	if (b.s[0] == 1) {
		_cleanup_free_ char *msg = sb_xmemdup(b.s + 1, b.len - 1);

		*ret_refused = true;
		return sb_error_set(err, EINVAL, "%s", msg);
	}
	/* What the child sent is checked, not trusted: it read the agent's tree. */
	if (b.s[0] != 0 || b.len < 25)
		return sb_error_set(err, EPROTO, "short capture");
	memcpy(&l1, b.s + 1, 8);
	if (l1 > b.len - 25)
		return sb_error_set(err, EPROTO, "bad capture");
	memcpy(&l2, b.s + 9 + l1, 8);
	if (l2 > b.len - 25 - l1)
		return sb_error_set(err, EPROTO, "bad capture");
	memcpy(&nf, b.s + 17 + l1 + l2, 8);
	at = 25 + l1 + l2;
	if (nf > SB_GIT_CHANGED_FILES_MAX)
		return sb_error_set(err, EPROTO, "bad capture");
	memset(ret, 0, sizeof(*ret));
	ret->files = sb_xcalloc(nf > 0 ? nf : 1, sizeof(*ret->files));
	for (uint64_t i = 0; i < nf; i++) {
		struct sb_git_file *f = &ret->files[i];
		uint64_t rec[5];

		if (b.len - at < sizeof(rec) + 2)
			break;
		memcpy(rec, b.s + at, sizeof(rec));
		at += sizeof(rec);
		f->status = (enum sb_git_status)(unsigned char)b.s[at];
		f->binary = b.s[at + 1] != 0;
		at += 2;
		if (rec[0] > l1 || rec[1] > l1 - rec[0] || rec[4] == 0 || rec[4] > 4096 ||
		    rec[4] > b.len - at || memchr(b.s + at, '\0', rec[4]) != NULL)
			break;
		f->diff_off = rec[0];
		f->diff_len = rec[1];
		f->additions = rec[2];
		f->deletions = rec[3];
		f->path = sb_xstrndup(b.s + at, rec[4]);
		at += rec[4];
		ret->nfiles++;
	}
	if (ret->nfiles != nf || at != b.len) {
		grading_capture_release(ret);
		return sb_error_set(err, EPROTO, "bad capture file table");
	}
	ret->diff = sb_xmemdup(b.s + 9, l1);
	ret->len = l1;
	ret->commits = sb_xmemdup(b.s + 17 + l1, l2);
	return 0;
}

/* What a copy for grading leaves out: every git repository of the pristine tree. */
static const char *const no_history[] = { ".git", NULL };

int
work_prepare_grading(struct helper *h, struct job_spec *j)
{
	_cleanup_free_ char *git = NULL;
	_cleanup_close_ int repo = -1, gfd = -1, src = -1;
	_cleanup_(grading_capture_release) struct grading_capture cap = { 0 };
	_cleanup_buf_ struct sb_buf graded = SB_BUF_INIT((size_t)SB_GIT_DIFF_MAX);
	json_auto_t *reverted = NULL, *scope = NULL, *baseline = NULL;
	struct sb_error *err = NULL;
	struct sb_copy_opts o;

	/* 1. A fresh runner session. */
	if (work_new_session(h, j->home, &err) < 0) {
		sb_log(SB_LOG_ERROR, "prepare_grading: %s", sb_error_message(err));
		sb_error_release(&err);
		return failed(dproto_reply_error(j->reply_fd, 500, "could not start a new runner session"));
	}
	/*
	 * 2-3. The agent's change, kept in the results directory. A tree that cannot be
	 * captured (a file it made unreadable, a FIFO where git reads, a file or a diff past
	 * the size limits, a path too deep) is the agent's to answer for: the grade is failed
	 * with the reason, never an error a run could be made to end in (the evaluator tells
	 * the two apart by the message).
	 */
	{
		bool refused = false;

		if (capture_for_grading(h, &cap, &refused, &err) < 0) {
			int rc;

			sb_log(SB_LOG_ERROR, "prepare_grading: %s", sb_error_message(err));
			rc = refused ? dproto_reply_error(j->reply_fd, 500, "patch capture failed: %s",
					   sb_error_message(err))
				     : dproto_reply_error(j->reply_fd, 500, "git failed");
			sb_error_release(&err);
			return failed(rc);
		}
	}
	if (sb_write_file_atomic_at(h->results_fd, "final.patch", cap.diff, cap.len, 0644, &err) < 0 ||
	    sb_write_file_atomic_at(h->results_fd, "commits.log", cap.commits, strlen(cap.commits),
		0644, &err) < 0) {
		sb_log(SB_LOG_ERROR, "prepare_grading: %s", sb_error_message(err));
		sb_error_release(&err);
		return failed(dproto_reply_error(j->reply_fd, 500, "cannot write final.patch"));
	}
	/*
	 * 3b. What is graded: the patch without what it does to the paths the task protects
	 * (its tests, their registration, its harness: grading.h), which grading keeps as the
	 * pristine tree has them, so a patch cannot pass by changing the checks. final.patch
	 * stays the patch as captured; what was left out is in the reply, for result.json.
	 */
	if (grading_patch(h->c->task, cap.diff, cap.len, cap.files, cap.nfiles, &graded, &reverted,
		&err) < 0) {
		sb_log(SB_LOG_ERROR, "prepare_grading: %s", sb_error_message(err));
		sb_error_release(&err);
		return failed(dproto_reply_error(j->reply_fd, 500, "cannot split the patch"));
	}
	scope = grading_scope(h->c->task, cap.diff, cap.files, cap.nfiles);
	if (json_integer_value(json_object_get(reverted, "count")) > 0) {
		sb_log(SB_LOG_INFO, "prepare_grading: %lld protected path(s) graded as pristine",
		    (long long)json_integer_value(json_object_get(reverted, "count")));
		if (sb_write_file_atomic_at(h->results_fd, "graded.patch", graded.s ? graded.s : "",
			graded.len, 0644, &err) < 0) {
			sb_log(SB_LOG_WARN, "prepare_grading: %s", sb_error_message(err));
			sb_error_release(&err);
		}
	}
	/* The task's baseline (dataset verify --update-baseline), for the evaluator. */
	if (sb_json_load_file_at(h->bench_fd, "baseline.json", SB_JSON_FILE_MAX, &baseline, &err) < 0) {
		if (sb_error_code(err) != ENOENT)
			sb_log(SB_LOG_WARN, "prepare_grading: baseline.json: %s, ignoring",
			    sb_error_message(err));
		sb_error_release(&err);
		baseline = NULL;
	}
	/*
	 * 4. A fresh copy of the pristine source for the runner, without its history: the
	 * pristine repository may hold the upstream history, and with it the fix, and the
	 * grading build runs the patch's code. No .git at any level (submodules included).
	 */
	memset(&o, 0, sizeof(o));
	o.only_uid = (uid_t)-1;
	o.chown_uid = h->c->runner.uid;
	o.chown_gid = h->c->runner.gid;
	o.skip_names = no_history;
	(void)remove_mixed(h, h->runner_fd, "grading", NULL);
	repo = open(h->c->repo_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	gfd = repo < 0 ? -1 : dir_owned_at(h->runner_fd, "grading", 0710, 0, h->c->runner.gid, &err);
	if (repo < 0 || gfd < 0 || sb_copy_tree_at(repo, gfd, "src", &o, NULL, &err) < 0 ||
	    (src = openat(gfd, "src", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		sb_log(SB_LOG_ERROR, "prepare_grading: pristine copy of '%s': %s", h->c->repo_path,
		    err ? sb_error_message(err) : strerror(errno));
		sb_error_release(&err);
		return failed(dproto_reply_error(j->reply_fd, 500, "cannot copy the pristine source"));
	}
	/* 5. ...with the agent's patch (as graded) applied by the runner, never by root. */
	if (graded.len > 0) {
		char *argv[] = { (char *)"git", (char *)"apply", (char *)"--binary", (char *)"-", NULL };
		struct sb_cmd_result r;

		if (sb_cmd_find_program("git", base_env_get(h->c, "PATH"), &git, &err) < 0) {
			sb_error_release(&err);
			return failed(dproto_reply_error(j->reply_fd, 500, "git apply failed: no git"));
		}
		run_as_runner(h, git, argv, src, j->home, h->c->test_timeout, graded.s, graded.len,
		    NULL, false, &r);
		write_log(h, "patch", "git apply --binary final.patch", &r);
		if (r.exit_code != 0) {
			int rc = dproto_reply_error(j->reply_fd, 500, "git apply failed: %s", r.err.s);

			sb_cmd_result_release(&r);
			return failed(rc);
		}
		sb_cmd_result_release(&r);
	}
	{
		json_auto_t *ok = json_pack("{s:b, s:O, s:O, s:O, s:o}", "success", 1, "reverted",
		    reverted, "scope", scope, "baseline", baseline != NULL ? baseline : json_null(),
		    "sanitizer", sb_json_string_or_null(h->c->task->sanitizer.s));

		return done(dproto_reply(j->reply_fd, 200, ok));
	}
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
		return failed(dproto_reply_error(j->reply_fd, 500, "could not kill the runner's processes"));
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
		return failed(dproto_reply_error(j->reply_fd, 500, "could not kill the agent's processes"));
	}
	{
		json_auto_t *ok = json_pack("{s:b}", "success", 1);

		return done(dproto_reply(j->reply_fd, 200, ok));
	}
}

/* --- start-up --------------------------------------------------------------------------- */

static char *random_name(const char *prefix);

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

/*
 * Support directories (upstream §2.4): a top-level /ssebench/<name> that a build, run or test
 * script names by absolute path and that holds no hidden file (a PoC driver, a Rust
 * harness). The runner may read them in place, never change them. Which names qualify is
 * decided once, here, from the scripts' text; the hidden files can never be in one.
 */
static char **support_dirs;

static bool
holds_hidden(const struct dconf *c, const char *name)
{
	const struct sb_task_config *t = c->task;
	const char *hidden[] = { t->files.patch.s, t->files.future_test.s, t->files.security_test.s,
		t->files.intent_test.s, "config.yaml" };
	size_t l = strlen(name);

	for (size_t i = 0; i < SB_ARRAY_SIZE(hidden); i++)
		if (hidden[i] != NULL && strncmp(hidden[i], name, l) == 0 &&
		    (hidden[i][l] == '/' || hidden[i][l] == '\0'))
			return true;
	for (size_t i = 0; i < t->files.poc.n; i++)
		if (strncmp(t->files.poc.v[i].s, name, l) == 0 &&
		    (t->files.poc.v[i].s[l] == '/' || t->files.poc.v[i].s[l] == '\0'))
			return true;
	return false;
}

static void
find_support_dirs(struct helper *h)
{
	/* run.sh last: what it alone names is for the PoC check only (support_for_poc_only). */
	const char *scripts[] = { h->c->task->scripts.build.s, h->c->task->scripts.test.s,
		h->c->task->scripts.run.s };
	_cleanup_free_ char *prefix = sb_xasprintf("%s/", h->c->bench_path);
	struct sb_argv found = SB_ARGV_INIT;

	for (size_t i = 0; i < SB_ARRAY_SIZE(scripts); i++) {
		_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(SB_CONFIG_FILE_MAX);

		if (scripts[i] == NULL || sb_read_file_at(h->bench_fd, scripts[i], 0, &b, NULL) < 0)
			continue;
		for (const char *p = strstr(b.s, prefix); p != NULL; p = strstr(p + 1, prefix)) {
			const char *n = p + strlen(prefix), *e = n;
			_cleanup_free_ char *name = NULL;
			struct stat st;

			while ((*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z') ||
			    (*e >= '0' && *e <= '9') || *e == '.' || *e == '_' || *e == '-')
				e++;
			if (e == n)
				continue;
			name = sb_xstrndup(n, (size_t)(e - n));
			if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
			    sb_env_get(&found, name) != NULL || holds_hidden(h->c, name) ||
			    fstatat(h->bench_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
			    !S_ISDIR(st.st_mode))
				continue;
			/* The scripts directory itself is handled file by file. */
			if (h->c->task->scripts.build.s != NULL &&
			    strncmp(h->c->task->scripts.build.s, name, strlen(name)) == 0 &&
			    h->c->task->scripts.build.s[strlen(name)] == '/')
				continue;
			sb_argv_pushf(&found, "%s=%s", name, i == 2 ? "poc" : "shared");
		}
	}
	support_dirs = sb_argv_detach(&found);
}

/*
 * A support directory only run.sh names (cjson's harness/ holds the PoC driver): builds and
 * tests never see it (hidden in their sandbox, work_setup); run_poc does (hidden_check_begin).
 * Otherwise a build at level 2 could print what the PoC check runs.
 */
static bool
support_for_poc_only(const char *entry)
{
	const char *eq = strchr(entry, '=');

	return eq != NULL && strcmp(eq + 1, "poc") == 0;
}

/* Is rel (a path in the task files) inside a support directory? */
static bool
in_support_dir(const char *rel)
{
	for (char **d = support_dirs; d != NULL && *d != NULL; d++) {
		size_t l = strcspn(*d, "=");

		if (strncmp(rel, *d, l) == 0 && (rel[l] == '/' || rel[l] == '\0'))
			return true;
	}
	return false;
}

/* Scripts the runner may execute in place: build and test (test.sh may call build.sh). */
static bool
is_shared_script(const struct dconf *c, const char *rel)
{
	return (c->task->scripts.build.s && strcmp(rel, c->task->scripts.build.s) == 0) ||
		(c->task->scripts.test.s && strcmp(rel, c->task->scripts.test.s) == 0);
}

/* Does the directory rel lead to a shared script? */
static bool
leads_to_shared_script(const struct dconf *c, const char *rel)
{
	const char *s[] = { c->task->scripts.build.s, c->task->scripts.test.s };
	size_t l = strlen(rel);

	for (size_t i = 0; i < SB_ARRAY_SIZE(s); i++)
		if (s[i] != NULL && (l == 0 || (strncmp(s[i], rel, l) == 0 && s[i][l] == '/')))
			return true;
	return false;
}

/*
 * Task files are root-only (integrity-model: "Task files are root-only"), except the build
 * and test scripts and the directories leading to them, which sse-runner's group may read
 * and execute: 0710/0750 root:runner. The tool layer sets this when it builds the image;
 * the daemon sets it again at start, so a run never depends on the image being right.
 */
static int
apply_task_permissions(struct helper *h, int dirfd, const char *rel, unsigned depth,
    struct sb_error **err)
{
	char **names = NULL;
	size_t n = 0;
	int r = 0;

	if (depth > SB_COPY_DEPTH_MAX)
		return sb_error_set(err, ELOOP, "task files nested too deeply");
	{
		mode_t mode = in_support_dir(rel) ? 0750
			: leads_to_shared_script(h->c, rel) || (*rel == '\0' && support_dirs[0]) ? 0710
												   : 0700;

		/* The runner's group only where the mode gives that group something. */
		if (own_fd(dirfd, 0, (mode & 0070) ? h->c->runner.gid : 0, mode) < 0)
			return sb_error_errno(err, errno, "task files '%s'", rel);
	}
	if (sb_list_dir_at(dirfd, ".", SB_COPY_FILES_MAX, &names, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < n && r == 0; i++) {
		_cleanup_free_ char *child = *rel ? sb_xasprintf("%s/%s", rel, names[i])
						  : sb_xstrdup(names[i]);
		struct stat st;

		if (fstatat(dirfd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			_cleanup_close_ int sub = openat(dirfd, names[i],
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub >= 0)
				r = apply_task_permissions(h, sub, child, depth + 1, err);
		} else if (S_ISREG(st.st_mode)) {
			bool shared = is_shared_script(h->c, child), support = in_support_dir(child);
			mode_t mode = shared ? 0750
				: support    ? ((st.st_mode & 0100) ? 0750 : 0640)
					     : (st.st_mode & 0700);

			if (own_at(dirfd, names[i], 0, shared || support ? h->c->runner.gid : 0,
				mode) < 0)
				r = sb_error_errno(err, errno, "task file '%s'", child);
		} else if (S_ISLNK(st.st_mode) && (st.st_uid != 0 || st.st_gid != 0) &&
		    fchownat(dirfd, names[i], 0, 0, AT_SYMLINK_NOFOLLOW) < 0) {
			r = sb_error_errno(err, errno, "task file '%s'", child);
		}
	}
	sb_strv_free(names);
	return r;
}

struct baseline_arg {
	const char *source;
	const char *dir;
	struct sb_error *err;
};

static int
baseline_as_agent(void *p)
{
	struct baseline_arg *a = p;

	if (sb_git_init(&a->err) < 0 || sb_git_baseline_create(a->source, a->dir, &a->err) < 0) {
		sb_log(SB_LOG_ERROR, "git baseline: %s", sb_error_message(a->err));
		return -1;
	}
	return 0;
}

/* A random name, so a directory the agent may traverse is not one it can guess. */
static char *
random_name(const char *prefix)
{
	unsigned char r[8];
	char hex[17];

	if (sb_random_bytes(r, sizeof(r), NULL) < 0)
		abort();
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(hex + 2 * i, 3, "%02x", r[i]);
	return sb_xasprintf("%s-%s", prefix, hex);
}

int
work_task_permissions(struct helper *h, struct sb_error **err)
{
	h->bench_fd = sb_open_dir(h->c->bench_path, err);
	if (h->bench_fd < 0)
		return -1;
	find_support_dirs(h);
	for (char **d = support_dirs; *d != NULL; d++)
		sb_log(SB_LOG_INFO, "support directory shared read-only with the runner: %.*s%s",
		    (int)strcspn(*d, "="), *d, support_for_poc_only(*d) ? " (for run_poc only)" : "");
	/*
	 * A run's root file system is read-only (docs/running.md: "Disk"), so at run time this
	 * pass can only confirm what the tool layer set when it ran it at image build; where a
	 * mode is already right nothing is written (own_fd).
	 */
	if (apply_task_permissions(h, h->bench_fd, "", 0, err) < 0)
		return sb_error_prefix(err, "%s", h->c->bench_path);
	return 0;
}

int
work_setup(struct helper *h, const char *home, struct sb_error **err)
{
	struct dconf *c = h->c;
	_cleanup_free_ char *gitname = random_name("git"), *bashname = random_name("bash");
	_cleanup_close_ int gfd = -1, bfd = -1;
	struct baseline_arg ba;

	if (sb_seccomp_compile(SB_SECCOMP_UNTRUSTED, &untrusted_filter, err) < 0)
		return -1;
	/*
	 * The places the runner must not see: the agent's tree, home and archive, the daemon's
	 * state (the agent's git baseline and bash state are below it), the two socket
	 * directories, the results and the pristine repository (root-only anyway).
	 */
	runner_places.runner_dir = c->runner_dir;
	runner_places.source = c->source;
	runner_places.agent_home = c->agent_home;
	runner_places.archive = c->archive;
	runner_places.state_dir = c->state_dir;
	runner_places.results = c->results;
	runner_places.repo_path = c->repo_path;
	runner_places.agent_socket = c->agent_socket;
	runner_places.admin_socket = c->admin_socket;
	runner_places.root = c->runner_root;
	if (sb_sandbox_for_runner(&runner_sandbox, &withheld_sandbox, &runner_places,
		c->runner.uid, c->runner.gid, err) < 0)
		return sb_error_prefix(err, "the runner's sandbox");
	if (work_task_permissions(h, err) < 0)
		return -1;
	/* What only run.sh names is hidden from every other check (support_for_poc_only). */
	{
		size_t n = 0;

		for (char **d = support_dirs; *d != NULL; d++)
			if (support_for_poc_only(*d))
				n++;
		poc_support_paths = sb_xcalloc(n + 1, sizeof(char *));
		n = 0;
		for (char **d = support_dirs; *d != NULL; d++) {
			if (!support_for_poc_only(*d))
				continue;
			poc_support_paths[n] = sb_xasprintf("%s/%.*s", c->bench_path,
			    (int)strcspn(*d, "="), *d);
			if (sb_sandbox_add(runner_sandbox.hidden, &runner_sandbox.nhidden,
				poc_support_paths[n], err) < 0 ||
			    sb_sandbox_add(withheld_sandbox.hidden, &withheld_sandbox.nhidden,
				poc_support_paths[n], err) < 0)
				return sb_error_prefix(err, "the runner's sandbox");
			n++;
		}
		if (n > 0 && (sb_sandbox_prepare(&runner_sandbox, c->runner.uid, c->runner.gid, err) < 0 ||
			sb_sandbox_prepare(&withheld_sandbox, c->runner.uid, c->runner.gid, err) < 0))
			return sb_error_prefix(err, "the runner's sandbox");
	}
	/* The pristine source is root-only too (integrity-model: /ssebench-repo 0700): it may
	 * hold history the agent's tree does not. */
	{
		_cleanup_close_ int repo = trusted_dir(c->repo_path, 0700, 0, err);

		if (repo < 0)
			return sb_error_prefix(err, "pristine source");
	}
	/*
	 * Results: the run directory on the host, whoever owns it there. What keeps the agent
	 * and the runner out is its parent, 0700 root (the entrypoint sets that; integrity-
	 * model: "whoever owns the run directory on the host"). It must be a directory, not a
	 * link; every write in it is an atomic replace through this descriptor.
	 */
	{
		struct stat st;

		if (mkdir(c->results, 0755) < 0 && errno != EEXIST)
			return sb_error_errno(err, errno, "mkdir '%s'", c->results);
		if (lstat(c->results, &st) < 0 || !S_ISDIR(st.st_mode))
			return sb_error_set(err, ENOTDIR, "results directory '%s' is not a directory",
			    c->results);
		h->results_fd = open(c->results, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (h->results_fd < 0)
			return sb_error_errno(err, errno, "open '%s'", c->results);
	}
	/* Scratch copies: the runner's group may enter, the agent may not (0710). */
	h->runner_fd = trusted_dir(c->runner_dir, 0710, c->runner.gid, err);
	if (h->runner_fd < 0)
		return sb_error_prefix(err, "runner directory");
	if (work_new_session(h, home, err) < 0)
		return sb_error_prefix(err, "runner session");
	/* Private state: traversable (0711) but not listable, names unguessable. */
	h->state_fd = trusted_dir(c->state_dir, 0711, 0, err);
	if (h->state_fd < 0)
		return sb_error_prefix(err, "state directory");
	gfd = dir_owned_at(h->state_fd, gitname, 0700, c->agent.uid, c->agent.gid, err);
	bfd = gfd < 0 ? -1 : dir_owned_at(h->state_fd, bashname, 0700, c->agent.uid, c->agent.gid, err);
	if (gfd < 0 || bfd < 0)
		return sb_error_prefix(err, "state directory");
	h->git_dir = sb_xasprintf("%s/%s/base", c->state_dir, gitname);
	h->bash_state = sb_xasprintf("%s/%s", c->state_dir, bashname);
	/* The baseline is taken as the tree's owner, before any listener exists. */
	memset(&ba, 0, sizeof(ba));
	ba.source = c->source;
	ba.dir = h->git_dir;
	if (run_as(&c->agent, baseline_as_agent, &ba) < 0)
		return sb_error_set(err, EIO, "cannot record the git baseline of '%s'", c->source);
	return 0;
}

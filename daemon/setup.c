/* SPDX-License-Identifier: Apache-2.0 */
/*
 * setup.c: what the helper prepares at start-up, before any listener exists (and so before
 * any request can arrive):
 *   - the task files' modes (root-only, but for the scripts and the support directories
 *     the runner executes or reads in place), also run alone at image build
 *     (`ssebench-daemon --task-permissions`);
 *   - the untrusted seccomp filter and the runner's two sandboxes, compiled and prepared
 *     once, before any fork;
 *   - the root-owned directories: the pristine source, the results, the runner's area and
 *     the daemon's private state, and in it the agent's git baseline, taken as the agent.
 */
#include "config.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/fs.h"
#include "sb/git.h"
#include "sb/limits.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/priv.h"
#include "sb/sandbox.h"
#include "sb/tree.h"

#include "fsutil.h"
#include "runner.h"
#include "work.h"

/* --- the task files ------------------------------------------------------------------- */

/*
 * Support directories (docs/upstream.md, "Task scripts"): a top-level /ssebench/<name> that a build, run or test
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
 * tests never see it (hidden in their sandbox, hide_poc_support); run_poc does
 * (runner.c:hidden_check_begin). Otherwise a build at level 2 could print what the PoC
 * check runs.
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
 * Task files are root-only (docs/design.md, "Layout of a run container"), except the build
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


/* --- start-up ----------------------------------------------------------------------------- */

/* The untrusted filter and the runner's two sandboxes (helper.h), before any fork. */
static int
setup_sandboxes(struct helper *h, struct sb_error **err)
{
	struct dconf *c = h->c;

	if (sb_seccomp_compile(SB_SECCOMP_UNTRUSTED, &h->untrusted, err) < 0)
		return -1;
	/*
	 * The places the runner must not see: the agent's tree, home and archive, the daemon's
	 * state (the agent's git baseline and bash state are below it), the two socket
	 * directories, the results and the pristine repository (root-only anyway).
	 */
	h->runner_places.runner_dir = c->runner_dir;
	h->runner_places.source = c->source;
	h->runner_places.agent_home = c->agent_home;
	h->runner_places.archive = c->archive;
	h->runner_places.state_dir = c->state_dir;
	h->runner_places.results = c->results;
	h->runner_places.repo_path = c->repo_path;
	h->runner_places.agent_socket = c->agent_socket;
	h->runner_places.admin_socket = c->admin_socket;
	h->runner_places.root = c->runner_root;
	if (sb_sandbox_for_runner(&h->runner_sandbox, &h->withheld_sandbox, &h->runner_places,
		c->runner.uid, c->runner.gid, err) < 0)
		return sb_error_prefix(err, "the runner's sandbox");
	return 0;
}

/* What only run.sh names is hidden from every other check (support_for_poc_only). */
static int
hide_poc_support(struct helper *h, struct sb_error **err)
{
	struct dconf *c = h->c;
	size_t n = 0;

	for (char **d = support_dirs; *d != NULL; d++)
		if (support_for_poc_only(*d))
			n++;
	h->poc_support_paths = sb_xcalloc(n + 1, sizeof(char *));
	n = 0;
	for (char **d = support_dirs; *d != NULL; d++) {
		if (!support_for_poc_only(*d))
			continue;
		h->poc_support_paths[n] = sb_xasprintf("%s/%.*s", c->bench_path,
		    (int)strcspn(*d, "="), *d);
		if (sb_sandbox_add(h->runner_sandbox.hidden, &h->runner_sandbox.nhidden,
			h->poc_support_paths[n], err) < 0 ||
		    sb_sandbox_add(h->withheld_sandbox.hidden, &h->withheld_sandbox.nhidden,
			h->poc_support_paths[n], err) < 0)
			return sb_error_prefix(err, "the runner's sandbox");
		n++;
	}
	if (n > 0 && (sb_sandbox_prepare(&h->runner_sandbox, c->runner.uid, c->runner.gid, err) < 0 ||
		sb_sandbox_prepare(&h->withheld_sandbox, c->runner.uid, c->runner.gid, err) < 0))
		return sb_error_prefix(err, "the runner's sandbox");
	return 0;
}

/*
 * Results: the run directory on the host, whoever owns it there. What keeps the agent
 * and the runner out is its parent, 0700 root (the entrypoint sets that; integrity-
 * model: "whoever owns the run directory on the host"). It must be a directory, not a
 * link; every write in it is an atomic replace through this descriptor.
 */
static int
open_results(struct helper *h, struct sb_error **err)
{
	struct dconf *c = h->c;
	struct stat st;

	if (mkdir(c->results, 0755) < 0 && errno != EEXIST)
		return sb_error_errno(err, errno, "mkdir '%s'", c->results);
	if (lstat(c->results, &st) < 0 || !S_ISDIR(st.st_mode))
		return sb_error_set(err, ENOTDIR, "results directory '%s' is not a directory",
		    c->results);
	h->results_fd = open(c->results, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (h->results_fd < 0)
		return sb_error_errno(err, errno, "open '%s'", c->results);
	return 0;
}

/* The git baseline, recorded in a child that is the agent (run_as). */
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

/* The daemon's private state, the agent's git baseline and bash state below it. */
static int
setup_state(struct helper *h, struct sb_error **err)
{
	struct dconf *c = h->c;
	_cleanup_free_ char *gitname = random_name("git"), *bashname = random_name("bash");
	_cleanup_close_ int gfd = -1, bfd = -1;
	struct baseline_arg ba;

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

int
work_setup(struct helper *h, const char *home, struct sb_error **err)
{
	struct dconf *c = h->c;

	if (setup_sandboxes(h, err) < 0 || work_task_permissions(h, err) < 0 ||
	    hide_poc_support(h, err) < 0)
		return -1;
	/* The pristine source is root-only too (/ssebench-repo is 0700, docs/design.md,
	 * "Layout of a run container"): it may hold history the agent's tree does not. */
	{
		_cleanup_close_ int repo = trusted_dir(c->repo_path, 0700, 0, err);

		if (repo < 0)
			return sb_error_prefix(err, "pristine source");
	}
	if (open_results(h, err) < 0)
		return -1;
	/* Scratch copies: the runner's group may enter, the agent may not (0710). */
	h->runner_fd = trusted_dir(c->runner_dir, 0710, c->runner.gid, err);
	if (h->runner_fd < 0)
		return sb_error_prefix(err, "runner directory");
	if (work_new_session(h, home, err) < 0)
		return sb_error_prefix(err, "runner session");
	return setup_state(h, err);
}

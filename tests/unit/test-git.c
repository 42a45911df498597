/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-git.c: patch capture against a private baseline (sb_git_*).
 *
 * Every case starts from a real repository made with the git CLI (spawned through sb_cmd,
 * with a clean environment): one "buggy commit" holding text files, a binary file, a script,
 * a symbolic link, a nested directory and a .gitignore. A pristine copy is taken before the
 * baseline is recorded, so that a captured diff can be checked the way grading uses it:
 * `git apply --binary` on the pristine copy must reproduce the worktree exactly.
 *
 * The whole suite runs with HOME and XDG_CONFIG_HOME pointing at hostile git configuration
 * (filters, textconv, fsmonitor, hooks, an ignore file that would hide *.txt): the library
 * must behave as if they did not exist. The hostile cases also plant the same things in the
 * worktree's own .git/config and check, with a marker file per command, that none of them
 * ever ran, after first proving with the real git CLI that the planted configuration does
 * run them.
 */
#include "config.h"

#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/error.h"
#include "sb/git.h"
#include "sb/limits.h"
#include "sb/mem.h"
#include "sb/spawn.h"

#include "unit.h"

static char root[64];		/* per-test scratch directory */
static char src[PATH_MAX];	/* the worktree the "agent" edits */
static char pristine[PATH_MAX]; /* a copy of src taken at the base commit */
static char basedir[PATH_MAX];	/* the private baseline */
static char markers[PATH_MAX];	/* where planted commands would leave traces */
static char outside[PATH_MAX];	/* files outside the tree (a secret) */
static char git_prog[PATH_MAX];

/* 2 KiB of bytes with NULs in them: git and libgit2 both call this binary. */
static unsigned char bin_data[2048];

static const char secret_text[] = "TOP-SECRET-REFERENCE-PATCH-CONTENT\n";

static char *
at(const char *dir, const char *rel)
{
	return sb_xasprintf("%s/%s", dir, rel);
}

/* mkdir -p for dir and the directories of rel below it. */
static void
make_parents(const char *dir, const char *rel)
{
	char *p = at(dir, rel);

	for (char *s = p + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		ck_assert_msg(mkdir(p, 0755) == 0 || errno == EEXIST, "mkdir %s", p);
		*s = '/';
	}
	free(p);
}

static void
put_bytes(const char *dir, const char *rel, const void *data, size_t len, mode_t mode)
{
	char *p;
	int fd;

	make_parents(dir, rel);
	p = at(dir, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	ck_assert_msg(fd >= 0, "open %s: %s", p, strerror(errno));
	ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
	free(p);
}

static void
put(const char *dir, const char *rel, const char *content)
{
	put_bytes(dir, rel, content, strlen(content), 0644);
}

static void
put_link(const char *dir, const char *rel, const char *target)
{
	char *p;

	make_parents(dir, rel);
	p = at(dir, rel);
	(void)unlink(p);
	ck_assert_msg(symlink(target, p) == 0, "symlink %s", p);
	free(p);
}

static void
remove_path(const char *dir, const char *rel)
{
	char *p = at(dir, rel);

	ck_assert_msg(unlink(p) == 0, "unlink %s", p);
	free(p);
}

static bool
exists(const char *dir, const char *rel)
{
	char *p = at(dir, rel);
	struct stat st;
	bool r = lstat(p, &st) == 0;

	free(p);
	return r;
}

static int
rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

static void
rm_tree(const char *path)
{
	(void)nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The environment of every git CLI the test runs: nothing from the hostile HOME. */
static void
clean_env(struct sb_argv *env, const char *home)
{
	sb_argv_pushf(env, "HOME=%s", home);
	sb_argv_pushf(env, "XDG_CONFIG_HOME=%s/.config", home);
	sb_argv_push(env, "GIT_CONFIG_NOSYSTEM=1");
	sb_argv_push(env, "GIT_AUTHOR_NAME=Agent");
	sb_argv_push(env, "GIT_AUTHOR_EMAIL=agent@example.invalid");
	sb_argv_push(env, "GIT_COMMITTER_NAME=Agent");
	sb_argv_push(env, "GIT_COMMITTER_EMAIL=agent@example.invalid");
	sb_argv_push(env, "PATH=/usr/local/bin:/usr/bin:/bin");
	sb_argv_push(env, "LC_ALL=C");
}

/*
 * Run prog (absolute) with the NULL-terminated arguments in cwd, with HOME=home (the clean
 * one unless told otherwise); stdout is returned (malloc'd) and the exit code stored.
 */
static char *
vrun(const char *home, const char *cwd, int *ret_code, const char *prog, va_list ap)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	_cleanup_argv_ struct sb_argv env = SB_ARGV_INIT;
	struct sb_cmd cmd = SB_CMD_INIT;
	struct sb_cmd_result res;
	struct sb_error *err = NULL;
	const char *s;
	char *out;
	int fd = -1;

	sb_argv_push(&argv, prog);
	while ((s = va_arg(ap, const char *)) != NULL)
		sb_argv_push(&argv, s);
	clean_env(&env, home);
	if (cwd != NULL) {
		fd = open(cwd, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		ck_assert_msg(fd >= 0, "open %s", cwd);
	}
	cmd.path = prog;
	cmd.argv = argv.v;
	cmd.envp = env.v;
	cmd.cwd_fd = fd;
	cmd.stdout_fd = SB_CMD_CAPTURE;
	cmd.stderr_fd = SB_CMD_CAPTURE;
	cmd.timeout_ms = 60000;
	cmd.capture_max = 64 * 1024 * 1024;
	ck_assert_msg(sb_cmd_run(&cmd, &res, &err) == 0, "run %s: %s", prog, sb_error_message(err));
	if (fd >= 0)
		close(fd);
	*ret_code = res.exit_code;
	if (res.exit_code != 0)
		fprintf(stderr, "%s %s: exit %d: %s\n", prog, argv.n > 1 ? argv.v[1] : "",
		    res.exit_code, res.err.s);
	out = sb_xstrdup(res.out.s);
	sb_cmd_result_release(&res);
	return out;
}

static char *__attribute__((sentinel))
run_code(const char *cwd, int *ret_code, const char *prog, ...)
{
	_cleanup_free_ char *home = at(root, "home");
	va_list ap;
	char *out;

	va_start(ap, prog);
	out = vrun(home, cwd, ret_code, prog, ap);
	va_end(ap);
	return out;
}

/* Run git in cwd and require success; returns its stdout (malloc'd). */
static char *__attribute__((sentinel))
git(const char *cwd, ...)
{
	_cleanup_free_ char *home = at(root, "home");
	va_list ap;
	char *out;
	int code;

	va_start(ap, cwd);
	out = vrun(home, cwd, &code, git_prog, ap);
	va_end(ap);
	ck_assert_msg(code == 0, "git failed in %s", cwd);
	return out;
}

/* Same, with HOME at a chosen directory (for the positive controls with hostile config). */
static char *__attribute__((sentinel))
git_home(const char *home, const char *cwd, ...)
{
	va_list ap;
	char *out;
	int code;

	va_start(ap, cwd);
	out = vrun(home, cwd, &code, git_prog, ap);
	va_end(ap);
	return out;
}

/* Run git and require success, dropping its output. */
#define gitq(...) free(git(__VA_ARGS__, (const char *)NULL))

/* git rev-parse <rev> in dir, without the newline. */
static char *
rev_parse(const char *dir, const char *rev)
{
	char *out = git(dir, "rev-parse", rev, (const char *)NULL);

	ck_assert_int_eq(strlen(out), 41);
	out[40] = '\0';
	return out;
}

static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* A marker script: records that it ran, then behaves as a harmless pass-through. */
static void
put_marker_script(const char *dir, const char *name)
{
	char *body = sb_xasprintf("#!/bin/sh\necho ran >> '%s/%s'\ncat\nexit 0\n", markers, name);

	put_bytes(dir, name, body, strlen(body), 0755);
	free(body);
}

/* The commands every hostile configuration points at, and the config text that does it. */
static const char *const marker_names[] = {
	"fsmonitor", "clean", "smudge", "process", "textconv", "external", "pre-commit",
	"post-checkout", "post-index-change", "reference-transaction", "pager", "askpass",
};

static char *
hostile_config(const char *scripts)
{
	return sb_xasprintf("[core]\n"
			    "\tfsmonitor = %1$s/fsmonitor\n"
			    "\thooksPath = %1$s/hooks\n"
			    "\tpager = %1$s/pager\n"
			    "\taskPass = %1$s/askpass\n"
			    "\tattributesFile = %1$s/attributes\n"
			    "\texcludesFile = %1$s/ignore\n"
			    "[filter \"evil\"]\n"
			    "\tclean = %1$s/clean\n"
			    "\tsmudge = %1$s/smudge\n"
			    "\tprocess = %1$s/process\n"
			    "[diff \"evil\"]\n"
			    "\ttextconv = %1$s/textconv\n"
			    "[diff]\n"
			    "\texternal = %1$s/external\n"
			    "\tnoprefix = true\n"
			    "\tcontext = 0\n"
			    "\tmnemonicPrefix = true\n"
			    "[status]\n"
			    "\tshowUntrackedFiles = no\n",
	    scripts);
}

/* A directory of marker scripts (and hooks) plus the attributes/ignore files they need. */
static void
put_hostile_scripts(const char *dir)
{
	static const char *const hooks[] = {
		"pre-commit", "post-checkout", "post-index-change", "reference-transaction",
	};
	char *hookdir = at(dir, "hooks");

	for (size_t i = 0; i < SB_ARRAY_SIZE(marker_names); i++)
		put_marker_script(dir, marker_names[i]);
	for (size_t i = 0; i < SB_ARRAY_SIZE(hooks); i++)
		put_marker_script(hookdir, hooks[i]);
	/* Would make every file go through the evil filter and textconv, and hide *.txt. */
	put(dir, "attributes", "* filter=evil diff=evil\n");
	put(dir, "ignore", "*.txt\n");
	free(hookdir);
}

static size_t
count_markers(void)
{
	size_t n = 0;

	for (size_t i = 0; i < SB_ARRAY_SIZE(marker_names); i++)
		if (exists(markers, marker_names[i]))
			n++;
	return n;
}

static void
clear_markers(void)
{
	for (size_t i = 0; i < SB_ARRAY_SIZE(marker_names); i++) {
		char *p = at(markers, marker_names[i]);

		(void)unlink(p);
		free(p);
	}
}

static void
assert_no_markers(void)
{
	for (size_t i = 0; i < SB_ARRAY_SIZE(marker_names); i++)
		ck_assert_msg(!exists(markers, marker_names[i]), "'%s' ran", marker_names[i]);
}

/*
 * The hostile global configuration the whole suite runs under: HOME=evil-home with a
 * .gitconfig, XDG_CONFIG_HOME=evil-xdg/.config with git/{config,attributes,ignore}. Two
 * homes, so that each half can be shown to work on its own with the real git.
 */
static void
setup_hostile_home(void)
{
	char *scripts = at(root, "evil-global");
	char *home = at(root, "evil-home");
	char *xdg_home = at(root, "evil-xdg");
	char *xdg = at(xdg_home, ".config");
	char *cfg = hostile_config(scripts);

	put_hostile_scripts(scripts);
	put(home, ".gitconfig", cfg);
	put(xdg, "git/config", cfg);
	put(xdg, "git/attributes", "* filter=evil diff=evil\n");
	put(xdg, "git/ignore", "*.txt\n");
	ck_assert_int_eq(setenv("HOME", home, 1), 0);
	ck_assert_int_eq(setenv("XDG_CONFIG_HOME", xdg, 1), 0);
	free(cfg);
	free(scripts);
	free(home);
	free(xdg_home);
	free(xdg);
}

static void
setup(void)
{
	struct sb_error *err = NULL;
	char *p, *home;
	uint32_t x = 12345;

	snprintf(root, sizeof(root), "/tmp/sb-test-git-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(root));
	snprintf(src, sizeof(src), "%s/src", root);
	snprintf(pristine, sizeof(pristine), "%s/pristine", root);
	snprintf(basedir, sizeof(basedir), "%s/baseline", root);
	snprintf(markers, sizeof(markers), "%s/markers", root);
	snprintf(outside, sizeof(outside), "%s/outside", root);
	ck_assert_int_eq(mkdir(src, 0755), 0);
	ck_assert_int_eq(mkdir(markers, 0755), 0);
	ck_assert_int_eq(mkdir(outside, 0755), 0);
	home = at(root, "home");
	ck_assert_int_eq(mkdir(home, 0755), 0);
	free(home);
	put(outside, "secret.txt", secret_text);
	put(outside, "dir/inner.txt", secret_text);

	/* The hostile global config is in place before libgit2 is initialised. */
	setup_hostile_home();
	ck_assert_msg(sb_git_init(&err) == 0, "sb_git_init: %s", sb_error_message(err));
	if (git_prog[0] == '\0') {
		ck_assert_int_eq(
		    sb_cmd_find_program("git", "/usr/local/bin:/usr/bin:/bin", &p, &err), 0);
		snprintf(git_prog, sizeof(git_prog), "%s", p);
		free(p);
	}

	for (size_t i = 0; i < sizeof(bin_data); i++) {
		x = x * 1103515245u + 12345u;
		bin_data[i] = (unsigned char)(x >> 16);
	}
	bin_data[10] = 0;
	put(src, "a.txt", "line1\nline2\nline3\n");
	put(src, "del.txt", "gone\n");
	put(src, "old-name.txt", "rename me\nplease\n");
	put(src, "script.sh", "#!/bin/sh\necho hi\n");
	put(src, "dir/sub/deep.txt", "deep\n");
	put(src, ".gitignore", "*.log\nbuild/\n");
	put_bytes(src, "bin.dat", bin_data, sizeof(bin_data), 0644);
	put_link(src, "link", "a.txt");
	put(src, "keep.log", "tracked though *.log is ignored\n");
	gitq(src, "init", "-q");
	gitq(src, "add", "-A");
	gitq(src, "add", "-f", "keep.log");
	gitq(src, "commit", "-q", "-m", "buggy commit");
	free(git(root, "clone", "-q", src, pristine, (const char *)NULL));

	ck_assert_msg(sb_git_baseline_create(src, basedir, &err) == 0, "create: %s",
	    sb_error_message(err));
}

static void
teardown(void)
{
	rm_tree(root);
}

/* Open the baseline on src. */
static struct sb_git_baseline *
open_base(void)
{
	struct sb_git_baseline *b = NULL;
	struct sb_error *err = NULL;

	ck_assert_msg(sb_git_baseline_open(basedir, src, &b, &err) == 0, "open: %s",
	    sb_error_message(err));
	return b;
}

static void
capture(struct sb_git_baseline *b, struct sb_git_capture *c)
{
	struct sb_error *err = NULL;

	ck_assert_msg(sb_git_capture(b, SB_GIT_DIFF_MAX, c, &err) == 0, "capture: %s",
	    sb_error_message(err));
	ck_assert_ptr_nonnull(c->diff);
	ck_assert_uint_eq(strlen(c->diff), c->diff_len);
}

static const struct sb_git_file *
find_file(const struct sb_git_capture *c, const char *path)
{
	for (size_t i = 0; i < c->nfiles; i++)
		if (strcmp(c->files[i].path, path) == 0)
			return &c->files[i];
	return NULL;
}

static void
assert_file(const struct sb_git_capture *c, const char *path, enum sb_git_status status,
    size_t adds, size_t dels, bool binary)
{
	const struct sb_git_file *f = find_file(c, path);

	ck_assert_msg(f != NULL, "'%s' not in /files; diff:\n%s", path, c->diff);
	ck_assert_msg(f->status == status, "'%s': status %d, expected %d", path, f->status,
	    status);
	ck_assert_msg(f->additions == adds && f->deletions == dels,
	    "'%s': +%zu -%zu, expected +%zu -%zu", path, f->additions, f->deletions, adds, dels);
	ck_assert_msg(f->binary == binary, "'%s': binary %d", path, f->binary);
}

static void
assert_has(const struct sb_git_capture *c, const char *needle)
{
	ck_assert_msg(strstr(c->diff, needle) != NULL, "'%s' not in diff:\n%s", needle, c->diff);
}

static void
assert_lacks(const struct sb_git_capture *c, const char *needle)
{
	ck_assert_msg(strstr(c->diff, needle) == NULL, "'%s' in diff:\n%s", needle, c->diff);
}

/*
 * The grading check: the diff applies to the pristine copy with `git apply --binary` (after
 * a --check) and the result equals the worktree, .git aside, links compared as links.
 */
static void
assert_applies(const struct sb_git_capture *c)
{
	char *patch = at(root, "final.patch");
	char *out, *dotgit_x = sb_xstrdup("--exclude=.git");
	int code;

	put_bytes(root, "final.patch", c->diff, c->diff_len, 0644);
	out = git(pristine, "apply", "--binary", "--check", patch, (const char *)NULL);
	free(out);
	out = git(pristine, "apply", "--binary", patch, (const char *)NULL);
	free(out);
	out = run_code(NULL, &code, "/usr/bin/diff", "-r", "--no-dereference", dotgit_x, pristine,
	    src, (const char *)NULL);
	ck_assert_msg(code == 0, "pristine + diff differs from the worktree:\n%s", out);
	free(out);
	free(dotgit_x);
	free(patch);
}

START_TEST(test_unchanged)
{
	_cleanup_git_baseline_ struct sb_git_baseline *b = open_base();
	struct sb_git_capture c = SB_GIT_CAPTURE_INIT;
	_cleanup_free_ char *head = rev_parse(src, "HEAD");
	struct sb_error *err = NULL;
	char *log = NULL;

	capture(b, &c);
	ck_assert_str_eq(c.diff, "");
	ck_assert_uint_eq(c.diff_len, 0);
	ck_assert_uint_eq(c.nfiles, 0);
	ck_assert_str_eq(sb_git_baseline_commit(b), head);
	ck_assert_int_eq(sb_git_commits_log(b, SB_GIT_COMMITS_LOG_MAX, &log, &err), 0);
	ck_assert_str_eq(log, "");
	free(log);
	sb_git_capture_release(&c);
	sb_git_capture_release(&c);
}
END_TEST

START_TEST(test_modified)
{
	_cleanup_git_baseline_ struct sb_git_baseline *b = open_base();
	struct sb_git_capture c = SB_GIT_CAPTURE_INIT;

	put(src, "a.txt", "line1\nLINE2\nline3\nline4\n");
	capture(b, &c);
	assert_has(&c, "diff --git a/a.txt b/a.txt\nindex ");
	assert_has(&c, "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,4 @@\n line1\n-line2\n+LINE2\n line3\n"
		       "+line4\n");
	ck_assert_uint_eq(c.nfiles, 1);
	assert_file(&c, "a.txt", SB_GIT_MODIFIED, 2, 1, false);
	assert_applies(&c);
	sb_git_capture_release(&c);
}
END_TEST

START_TEST(test_untracked_and_ignored)
{
	_cleanup_git_baseline_ struct sb_git_baseline *b = open_base();
	struct sb_git_capture c = SB_GIT_CAPTURE_INIT;

	put(src, "new.txt", "one\ntwo\nthree\n");
	put(src, "newdir/deep/f.c", "int x;\n");
	put(src, "newdir/empty", "");
	put(src, "x.log", "ignored by *.log\n");
	put(src, "build/out.o", "ignored by build/\n");
	put(src, "dir/sub/trace.log", "ignored below too\n");
	put(src, "keep.log", "tracked files stay visible when ignored\n");
	capture(b, &c);
	assert_has(&c, "diff --git a/new.txt b/new.txt\nnew file mode 100644\nindex 0000000..");
	assert_has(&c, "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,3 @@\n+one\n+two\n+three\n");
	assert_has(&c, "+++ b/newdir/deep/f.c\n");
	assert_has(&c, "diff --git a/newdir/empty b/newdir/empty\nnew file mode 100644\n");
	assert_lacks(&c, "x.log");
	assert_lacks(&c, "build/");
	assert_lacks(&c, "trace.log");
	ck_assert_uint_eq(c.nfiles, 4);
	assert_file(&c, "keep.log", SB_GIT_MODIFIED, 1, 1, false);
	assert_file(&c, "new.txt", SB_GIT_ADDED, 3, 0, false);
	assert_file(&c, "newdir/deep/f.c", SB_GIT_ADDED, 1, 0, false);
	assert_file(&c, "newdir/empty", SB_GIT_ADDED, 0, 0, false);
	/* Ignored files exist only in the worktree; drop them before comparing trees. */
	remove_path(src, "x.log");
	remove_path(src, "build/out.o");
	remove_path(src, "dir/sub/trace.log");
	{
		char *p = at(src, "build");

		ck_assert_int_eq(rmdir(p), 0);
		free(p);
	}
	assert_applies(&c);
	sb_git_capture_release(&c);
}
END_TEST

START_TEST(test_deleted_and_renamed)
{
	_cleanup_git_baseline_ struct sb_git_baseline *b = open_base();
	struct sb_git_capture c = SB_GIT_CAPTURE_INIT;
	char *from = at(src, "old-name.txt"), *to = at(src, "new-name.txt");

	remove_path(src, "del.txt");
	ck_assert_int_eq(rename(from, to), 0);
	capture(b, &c);
	assert_has(&c, "diff --git a/del.txt b/del.txt\ndeleted file mode 100644\n");
	assert_has(&c, "--- a/del.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n");
	/* No rename detection: a delete plus an add. */
	assert_lacks(&c, "rename from");
	assert_lacks(&c, "similarity");
	ck_assert_uint_eq(c.nfiles, 3);
	assert_file(&c, "del.txt", SB_GIT_DELETED, 0, 1, false);
	assert_file(&c, "old-name.txt", SB_GIT_DELETED, 0, 2, false);
	assert_file(&c, "new-name.txt", SB_GIT_ADDED, 2, 0, false);
	assert_applies(&c);
	sb_git_capture_release(&c);
	free(from);
	free(to);
}
END_TEST

START_TEST(test_mode_change)
{
	_cleanup_git_baseline_ struct sb_git_baseline *b = open_base();
	struct sb_git_capture c = SB_GIT_CAPTURE_INIT;
	char *p = at(src, "script.sh");

	ck_assert_int_eq(chmod(p, 0755), 0);
	capture(b, &c);
	ck_assert_str_eq(c.diff,
	    "diff --git a/script.sh b/script.sh\nold mode 100644\nnew mode 100755\n");
	assert_file(&c, "script.sh", SB_GIT_MODIFIED, 0, 0, false);
	assert_applies(&c);
	sb_git_capture_release(&c);
	free(p);
}
END_TEST

START_TEST(test_binary)
{
	_cleanup_git_baseline_ struct sb_git_baseline *b = open_base();
	struct sb_git_capture c = SB_GIT_CAPTURE_INIT;
	unsigned char changed[sizeof(bin_data)], fresh[700];

	memcpy(changed, bin_data, sizeof(changed));
	for (size_t i = 100; i < 140; i++)
		changed[i] ^= 0x5a;
	for (size_t i = 0; i < sizeof(fresh); i++)
		fresh[i] = (unsigned char)(i * 7);
	put_bytes(src, "bin.dat", changed, sizeof(changed), 0644);
	put_bytes(src, "new.bin", fresh, sizeof(fresh), 0644);
	capture(b, &c);
	assert_has(&c, "diff --git a/bin.dat b/bin.dat\nindex ");
	assert_has(&c, "GIT binary patch\n");
	assert_has(&c, "diff --git a/new.bin b/new.bin\nnew file mode 100644\n");
	/* Binary patches need full object names on the index line for git apply. */
	{
		const char *idx = strstr(c.diff, "diff --git a/bin.dat");
		const char *line = strstr(idx, "\nindex ") + 7;
		const char *dots = strstr(line, "..");

		ck_assert_int_eq(dots - line, 40);
	}
	assert_file(&c, "bin.dat", SB_GIT_MODIFIED, 0, 0, true);
	assert_file(&c, "new.bin", SB_GIT_ADDED, 0, 0, true);
	assert_applies(&c);
	sb_git_capture_release(&c);
}
END_TEST

START_TEST(test_symlinks)
{
	_cleanup_git_baseline_ struct sb_git_baseline *b = open_base();
	struct sb_git_capture c = SB_GIT_CAPTURE_INIT;
	char *secret = at(outside, "secret.txt");
	char *dir = at(outside, "dir");

	put_link(src, "link", "dir/sub/deep.txt");	   /* retargeted */
	put_link(src, "newlink", "a.txt");		   /* added, inside */
	put_link(src, "leak", secret);			   /* added, to a file outside */
	put_link(src, "leakdir", dir);			   /* added, to a directory outside */
	put_link(src, "dir/sub/up", "../../../outside/secret.txt"); /* relative, outside */
	capture(b, &c);
	assert_has(&c, "diff --git a/link b/link\nindex ");
	assert_has(&c, " 120000\n--- a/link\n+++ b/link\n@@ -1 +1 @@\n-a.txt\n\\ No newline at end "
		       "of file\n+dir/sub/deep.txt\n\\ No newline at end of file\n");
	assert_has(&c, "diff --git a/newlink b/newlink\nnew file mode 120000\n");
	assert_has(&c, "diff --git a/leak b/leak\nnew file mode 120000\n");
	assert_has(&c, secret); /* the link text, which is all a link is */
	/* What the links point at is never read. */
	assert_lacks(&c, "TOP-SECRET");
	assert_lacks(&c, "inner.txt");
	ck_assert_uint_eq(c.nfiles, 5);
	assert_file(&c, "link", SB_GIT_MODIFIED, 1, 1, false);
	assert_file(&c, "newlink", SB_GIT_ADDED, 1, 0, false);
	assert_file(&c, "leak", SB_GIT_ADDED, 1, 0, false);
	assert_file(&c, "leakdir", SB_GIT_ADDED, 1, 0, false);
	assert_file(&c, "dir/sub/up", SB_GIT_ADDED, 1, 0, false);
	assert_applies(&c);
	sb_git_capture_release(&c);
	free(secret);
	free(dir);
}
END_TEST

/* A tracked file replaced by a link, and a tracked directory replaced by a link to outside. */
START_TEST(test_type_changes)
{
	_cleanup_git_baseline_ struct sb_git_baseline *b = open_base();
	struct sb_git_capture c = SB_GIT_CAPTURE_INIT;
	char *dir = at(outside, "dir");

	remove_path(src, "a.txt");
	put_link(src, "a.txt", "del.txt");
	remove_path(src, "dir/sub/deep.txt");
	{
		char *p = at(src, "dir/sub"), *q = at(src, "dir");

		ck_assert_int_eq(rmdir(p), 0);
		ck_assert_int_eq(rmdir(q), 0);
		free(p);
		free(q);
	}
	put_link(src, "dir", dir);
	capture(b, &c);
	assert_has(&c, "diff --git a/a.txt b/a.txt\ndeleted file mode 100644\n");
	assert_has(&c, "diff --git a/a.txt b/a.txt\nnew file mode 120000\n");
	assert_has(&c, "diff --git a/dir/sub/deep.txt b/dir/sub/deep.txt\ndeleted file mode");
	assert_has(&c, "diff --git a/dir b/dir\nnew file mode 120000\n");
	assert_lacks(&c, "TOP-SECRET");
	assert_lacks(&c, "inner.txt");
	assert_applies(&c);
	sb_git_capture_release(&c);
	free(dir);
}
END_TEST

START_TEST(test_agent_commits)
{
	_cleanup_git_baseline_ struct sb_git_baseline *b = open_base();
	struct sb_git_capture c = SB_GIT_CAPTURE_INIT;
	struct sb_error *err = NULL;
	_cleanup_free_ char *c1 = NULL, *c2 = NULL, *expect = NULL;
	char *log = NULL;

	put(src, "a.txt", "line1\nfixed\nline3\n");
	gitq(src, "commit", "-qam", "Fix the overflow\n\nCheck the length before copying.\nTwice.");
	c1 = rev_parse(src, "HEAD");
	put(src, "new.txt", "committed\n");
	gitq(src, "add", "new.txt");
	gitq(src, "commit", "-qm", "Add a test");
	c2 = rev_parse(src, "HEAD");
	/* And more edits after the commits, one staged, one not. */
	put(src, "del.txt", "gone\nnot yet\n");
	gitq(src, "add", "del.txt");
	put(src, "script.sh", "#!/bin/sh\necho bye\n");

	capture(b, &c);
	/* Against the base, not HEAD: the committed changes are in the diff. */
	assert_has(&c, "-line2\n+fixed\n");
	assert_has(&c, "+++ b/new.txt\n");
	assert_has(&c, "+not yet\n");
	assert_has(&c, "-echo hi\n+echo bye\n");
	ck_assert_uint_eq(c.nfiles, 4);
	assert_applies(&c);
	sb_git_capture_release(&c);

	ck_assert_int_eq(sb_git_commits_log(b, SB_GIT_COMMITS_LOG_MAX, &log, &err), 0);
	expect = sb_xasprintf("%s\nAdd a test\n\n---\n"
			      "%s\nFix the overflow\nCheck the length before copying.\n"
			      "Twice.\n---\n",
	    c2, c1);
	ck_assert_str_eq(log, expect);
	free(log);
	/* The same once refs and objects are packed, and with a detached HEAD. */
	gitq(src, "gc", "-q");
	ck_assert(!exists(src, ".git/refs/heads/master") && !exists(src, ".git/refs/heads/main"));
	ck_assert_int_eq(sb_git_commits_log(b, SB_GIT_COMMITS_LOG_MAX, &log, &err), 0);
	ck_assert_str_eq(log, expect);
	free(log);
	gitq(src, "checkout", "-q", "--detach");
	ck_assert_int_eq(sb_git_commits_log(b, SB_GIT_COMMITS_LOG_MAX, &log, &err), 0);
	ck_assert_str_eq(log, expect);
	free(log);

	/* Truncation: at most max bytes, ending with "...\n". */
	ck_assert_int_eq(sb_git_commits_log(b, 60, &log, &err), 0);
	ck_assert_uint_eq(strlen(log), 60);
	ck_assert_int_eq(strncmp(log, c2, 40), 0);
	ck_assert_str_eq(log + 56, "...\n");
	free(log);
	ck_assert_int_eq(sb_git_commits_log(b, 4, &log, &err), 0);
	ck_assert_str_eq(log, "...\n");
	free(log);
	ck_assert_int_eq(sb_git_commits_log(b, strlen(expect), &log, &err), 0);
	ck_assert_str_eq(log, expect);
	free(log);
	ck_assert_int_eq(sb_git_commits_log(b, 3, &log, &err), -1);
	ck_assert_int_eq(sb_error_code(err), EINVAL);
	sb_error_release(&err);
}
END_TEST

/* History rewritten so HEAD no longer descends from the base, or replaced by a new repo. */
START_TEST(test_commits_log_unrelated)
{
	_cleanup_git_baseline_ struct sb_git_baseline *b = open_base();
	struct sb_error *err = NULL;
	char *log = NULL, *dotgit = at(src, ".git");

	gitq(src, "commit", "-q", "--amend", "-m", "rewritten base");
	ck_assert_int_eq(sb_git_commits_log(b, SB_GIT_COMMITS_LOG_MAX, &log, &err), 0);
	ck_assert_str_eq(log, "");
	free(log);

	rm_tree(dotgit);
	gitq(src, "init", "-q");
	ck_assert_int_eq(sb_git_commits_log(b, SB_GIT_COMMITS_LOG_MAX, &log, &err), 0);
	ck_assert_str_eq(log, ""); /* unborn HEAD */
	free(log);
	gitq(src, "add", "-A");
	gitq(src, "commit", "-q", "-m", "fresh history");
	ck_assert_int_eq(sb_git_commits_log(b, SB_GIT_COMMITS_LOG_MAX, &log, &err), 0);
	ck_assert_str_eq(log, ""); /* the base is not in that repository */
	free(log);

	/* .git as a link to a repository that does hold agent commits: not followed. */
	rm_tree(dotgit);
	{
		char *pgit = at(pristine, ".git");

		put(pristine, "z.txt", "z\n");
		gitq(pristine, "add", "z.txt");
		gitq(pristine, "commit", "-q", "-m", "elsewhere");
		ck_assert_int_eq(symlink(pgit, dotgit), 0);
		ck_assert_int_eq(sb_git_commits_log(b, SB_GIT_COMMITS_LOG_MAX, &log, &err), 0);
		ck_assert_str_eq(log, "");
		free(log);
		ck_assert_int_eq(unlink(dotgit), 0);
		/* ... nor as a "gitdir:" file. */
		{
			char *gitfile = sb_xasprintf("gitdir: %s\n", pgit);

			put(src, ".git", gitfile);
			free(gitfile);
		}
		ck_assert_int_eq(sb_git_commits_log(b, SB_GIT_COMMITS_LOG_MAX, &log, &err), 0);
		ck_assert_str_eq(log, "");
		free(log);
		free(pgit);
	}
	free(dotgit);
}
END_TEST

START_TEST(test_dotgit_deleted)
{
	_cleanup_git_baseline_ struct sb_git_baseline *b = open_base();
	struct sb_git_capture c = SB_GIT_CAPTURE_INIT;
	struct sb_error *err = NULL;
	char *log = NULL, *dotgit = at(src, ".git");

	put(src, "a.txt", "line1\nline3\n");
	rm_tree(dotgit);
	capture(b, &c);
	ck_assert_uint_eq(c.nfiles, 1);
	assert_file(&c, "a.txt", SB_GIT_MODIFIED, 0, 1, false);
	assert_lacks(&c, ".git/");
	sb_git_capture_release(&c);
	ck_assert_int_eq(sb_git_commits_log(b, SB_GIT_COMMITS_LOG_MAX, &log, &err), 0);
	ck_assert_str_eq(log, "");
	free(log);

	/* A .git file or directory planted elsewhere is never part of the diff either. */
	put(src, ".git", "gitdir: /nonexistent\n");
	put(src, "dir/.git/config", "[core]\n");
	capture(b, &c);
	ck_assert_uint_eq(c.nfiles, 1);
	assert_lacks(&c, ".git");
	sb_git_capture_release(&c);
	free(dotgit);
}
END_TEST

START_TEST(test_nested_repo)
{
	_cleanup_git_baseline_ struct sb_git_baseline *b = open_base();
	struct sb_git_capture c = SB_GIT_CAPTURE_INIT;
	char *nested = at(src, "vendor/lib");

	put(src, "vendor/lib/code.c", "int nested;\n");
	put(src, "vendor/readme.txt", "kept\n");
	gitq(nested, "init", "-q");
	gitq(nested, "add", "-A");
	gitq(nested, "commit", "-q", "-m", "nested");
	capture(b, &c);
	assert_has(&c, "+++ b/vendor/readme.txt\n");
	assert_lacks(&c, "vendor/lib");
	assert_lacks(&c, "nested");
	ck_assert_uint_eq(c.nfiles, 1);
	sb_git_capture_release(&c);
	free(nested);
}
END_TEST

/* Several kinds of change at once: /files in path order with exact counts. */
START_TEST(test_files_table)
{
	static const struct {
		const char *path;
		enum sb_git_status status;
		size_t adds, dels;
		bool binary;
	} expect[] = {
		{ "a.txt", SB_GIT_MODIFIED, 1, 2, false },
		{ "bin.dat", SB_GIT_DELETED, 0, 0, true },
		{ "del.txt", SB_GIT_DELETED, 0, 1, false },
		{ "dir/sub/deep.txt", SB_GIT_MODIFIED, 3, 0, false },
		{ "link", SB_GIT_MODIFIED, 1, 1, false },
		{ "new/file.txt", SB_GIT_ADDED, 2, 0, false },
		{ "script.sh", SB_GIT_MODIFIED, 0, 0, false },
	};
	_cleanup_git_baseline_ struct sb_git_baseline *b = open_base();
	struct sb_git_capture c = SB_GIT_CAPTURE_INIT;
	char *p = at(src, "script.sh");

	put(src, "a.txt", "line1\nline2 and 3\n");
	remove_path(src, "bin.dat");
	remove_path(src, "del.txt");
	put(src, "dir/sub/deep.txt", "deep\nmore\nand more\nand more\n");
	put_link(src, "link", "del.txt");
	put(src, "new/file.txt", "x\ny\n");
	ck_assert_int_eq(chmod(p, 0700), 0);
	capture(b, &c);
	ck_assert_uint_eq(c.nfiles, SB_ARRAY_SIZE(expect));
	for (size_t i = 0; i < SB_ARRAY_SIZE(expect); i++) {
		ck_assert_str_eq(c.files[i].path, expect[i].path);
		assert_file(&c, expect[i].path, expect[i].status, expect[i].adds, expect[i].dels,
		    expect[i].binary);
	}
	/* Each file's section: back to back, together the whole diff, each its own header. */
	{
		size_t next = 0;

		for (size_t i = 0; i < c.nfiles; i++) {
			_cleanup_free_ char *head = sb_xasprintf("diff --git a/%s b/%s\n", c.files[i].path,
			    c.files[i].path);

			ck_assert_uint_eq(c.files[i].diff_off, next);
			ck_assert_msg(c.files[i].diff_len > strlen(head) &&
				strncmp(c.diff + c.files[i].diff_off, head, strlen(head)) == 0,
			    "section of '%s' does not start with its header", c.files[i].path);
			next = c.files[i].diff_off + c.files[i].diff_len;
		}
		ck_assert_uint_eq(next, c.diff_len);
	}
	assert_applies(&c);
	sb_git_capture_release(&c);
	free(p);
}
END_TEST

START_TEST(test_size_cap)
{
	_cleanup_git_baseline_ struct sb_git_baseline *b = open_base();
	struct sb_git_capture c = SB_GIT_CAPTURE_INIT, c2 = SB_GIT_CAPTURE_INIT;
	struct sb_error *err = NULL;
	char big[64 * 1024];

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (i % 64 == 63) ? '\n' : (char)('a' + i % 26);
	put_bytes(src, "big.txt", big, sizeof(big), 0644);
	put(src, "a.txt", "changed\n");
	capture(b, &c);
	ck_assert_uint_gt(c.diff_len, sizeof(big));

	/* One byte short fails with EFBIG, the exact size passes. */
	ck_assert_int_eq(sb_git_capture(b, c.diff_len - 1, &c2, &err), -1);
	ck_assert_int_eq(sb_error_code(err), EFBIG);
	ck_assert_ptr_null(c2.diff);
	sb_error_release(&err);
	ck_assert_int_eq(sb_git_capture(b, c.diff_len, &c2, &err), 0);
	ck_assert_str_eq(c2.diff, c.diff);
	sb_git_capture_release(&c2);

	/* Small caps fail too; 0 fails before any patch text (no file can fit). */
	ck_assert_int_eq(sb_git_capture(b, 100, &c2, &err), -1);
	ck_assert_int_eq(sb_error_code(err), EFBIG);
	sb_error_release(&err);
	ck_assert_int_eq(sb_git_capture(b, 0, &c2, &err), -1);
	ck_assert_int_eq(sb_error_code(err), EFBIG);
	sb_error_release(&err);
	sb_git_capture_release(&c);
}
END_TEST

/* Two captures with nothing changed in between give the same answer; the index stays base. */
START_TEST(test_capture_twice)
{
	_cleanup_git_baseline_ struct sb_git_baseline *b = open_base();
	struct sb_git_capture c1 = SB_GIT_CAPTURE_INIT, c2 = SB_GIT_CAPTURE_INIT;
	_cleanup_free_ char *ls_base = NULL, *ls_private = NULL, *gitdir = NULL;
	uint64_t t0, t1, t2;

	put(src, "a.txt", "line1\nline2\nline3\nline4\n");
	put(src, "u.txt", "untracked\n");
	bin_data[0] ^= 1;
	put_bytes(src, "bin.dat", bin_data, sizeof(bin_data), 0644);
	t0 = now_us();
	capture(b, &c1);
	t1 = now_us();
	capture(b, &c2);
	t2 = now_us();
	fprintf(stderr, "test_capture_twice: first %llu us, second %llu us\n",
	    (unsigned long long)(t1 - t0), (unsigned long long)(t2 - t1));
	ck_assert_uint_eq(c1.diff_len, c2.diff_len);
	ck_assert_str_eq(c1.diff, c2.diff);
	ck_assert_uint_eq(c1.nfiles, 3);
	ck_assert_uint_eq(c2.nfiles, 3);
	for (size_t i = 0; i < c1.nfiles; i++) {
		ck_assert_str_eq(c1.files[i].path, c2.files[i].path);
		ck_assert_int_eq(c1.files[i].status, c2.files[i].status);
		ck_assert_uint_eq(c1.files[i].additions, c2.files[i].additions);
		ck_assert_uint_eq(c1.files[i].deletions, c2.files[i].deletions);
	}
	sb_git_capture_release(&c1);
	sb_git_capture_release(&c2);

	/* Reopening (a new process would) gives the same answer as well. */
	sb_git_baseline_free(b);
	b = open_base();
	capture(b, &c1);
	ck_assert_uint_eq(c1.nfiles, 3);
	sb_git_capture_release(&c1);

	/* The private index still holds exactly the base tree (stat data aside). */
	gitdir = sb_xasprintf("--git-dir=%s", basedir);
	ls_private = git(root, gitdir, "ls-files", "-s", (const char *)NULL);
	ls_base = git(pristine, "ls-files", "-s", (const char *)NULL);
	ck_assert_str_eq(ls_private, ls_base);
}
END_TEST

/* The attacks planted in the worktree's own repository configuration. */
START_TEST(test_hostile_repo_config)
{
	_cleanup_free_ char *scripts = at(root, "evil-local");
	_cleanup_free_ char *cfg = hostile_config(scripts);
	_cleanup_free_ char *home = at(root, "home");
	_cleanup_free_ char *cfgpath = at(src, ".git/config");
	struct sb_git_capture c = SB_GIT_CAPTURE_INIT;
	struct sb_error *err = NULL;
	struct sb_git_baseline *b;
	char *log = NULL;
	int fd;

	/* An agent commit first (with the planted hooks it would run them, so before). */
	put(src, "a.txt", "line1\ncommitted\nline3\n");
	gitq(src, "commit", "-qam", "agent commit");
	put_hostile_scripts(scripts);
	fd = open(cfgpath, O_WRONLY | O_APPEND | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, cfg, strlen(cfg)), (ssize_t)strlen(cfg));
	close(fd);
	put(src, ".gitattributes", "* filter=evil diff=evil\n*.txt text eol=lf\n");
	put(src, "a.txt", "line1\ncommitted\nline3\nmore\n");
	put(src, "u.txt", "untracked, would be hidden by the planted excludesFile\n");

	/* Positive control: the real git CLI does run what was planted. */
	free(git_home(home, src, "status", (const char *)NULL));
	free(git_home(home, src, "diff", (const char *)NULL));
	free(git_home(home, src, "diff", "--no-ext-diff", (const char *)NULL));
	ck_assert_msg(exists(markers, "fsmonitor"), "control: fsmonitor did not run");
	ck_assert_msg(exists(markers, "clean") || exists(markers, "process"),
	    "control: the filter did not run");
	ck_assert_msg(exists(markers, "textconv") || exists(markers, "external"),
	    "control: the diff driver did not run");
	clear_markers();
	ck_assert_uint_eq(count_markers(), 0);

	/* The library: open, capture twice, log, and a fresh baseline made from here. */
	b = open_base();
	capture(b, &c);
	assert_has(&c, "+committed\n");
	assert_has(&c, "+more\n");
	assert_has(&c, "+++ b/u.txt\n");
	assert_has(&c, "+++ b/.gitattributes\n");
	assert_has(&c, "diff --git a/a.txt b/a.txt\n"); /* prefixes despite diff.noprefix */
	assert_has(&c, "@@ -1,3 +1,4 @@\n line1\n");   /* context despite diff.context */
	sb_git_capture_release(&c);
	capture(b, &c);
	sb_git_capture_release(&c);
	ck_assert_int_eq(sb_git_commits_log(b, SB_GIT_COMMITS_LOG_MAX, &log, &err), 0);
	ck_assert_ptr_nonnull(strstr(log, "\nagent commit\n\n---\n"));
	free(log);
	sb_git_baseline_free(b);
	{
		char *again = at(root, "baseline2");

		ck_assert_msg(sb_git_baseline_create(src, again, &err) == 0, "create: %s",
		    sb_error_message(err));
		free(again);
	}
	assert_no_markers();
}
END_TEST

/*
 * The hostile global configuration (HOME and XDG_CONFIG_HOME, set up for every case): the
 * real git obeys it, the library does not.
 */
START_TEST(test_hostile_global_config)
{
	static const char *const homes[] = { "evil-home", "evil-xdg" };
	_cleanup_git_baseline_ struct sb_git_baseline *b = open_base();
	struct sb_git_capture c = SB_GIT_CAPTURE_INIT;

	put(src, "a.txt", "line1\nline2\nline3\nglobal\n");
	put(src, "u.txt", "hidden by the global *.txt ignore\n");

	/* Positive controls: git with HOME (~/.gitconfig), then with only the XDG files. */
	for (size_t i = 0; i < SB_ARRAY_SIZE(homes); i++) {
		char *home = at(root, homes[i]);
		char *st =
		    git_home(home, src, "status", "--porcelain", "-uall", (const char *)NULL);

		ck_assert_msg(strstr(st, "u.txt") == NULL, "control %s: ignore not read:\n%s",
		    homes[i], st);
		free(st);
		free(git_home(home, src, "diff", (const char *)NULL));
		free(git_home(home, src, "diff", "--no-ext-diff", (const char *)NULL));
		/* With filter.<x>.process set, git runs that instead of clean. */
		ck_assert_msg((exists(markers, "clean") || exists(markers, "process")) &&
			exists(markers, "textconv") && exists(markers, "external") &&
			exists(markers, "fsmonitor"),
		    "control %s: planted commands did not run", homes[i]);
		clear_markers();
		free(home);
	}

	capture(b, &c);
	assert_has(&c, "+++ b/u.txt\n");
	assert_has(&c, "diff --git a/a.txt b/a.txt\n");
	assert_has(&c, " line3\n+global\n");
	ck_assert_uint_eq(c.nfiles, 2);
	sb_git_capture_release(&c);
	assert_no_markers();
}
END_TEST

START_TEST(test_create_errors)
{
	struct sb_error *err = NULL;
	char *empty = at(root, "norepo"), *unborn = at(root, "unborn");
	char *priv = at(root, "priv");

	/* private_dir exists already. */
	ck_assert_int_eq(sb_git_baseline_create(src, basedir, &err), -1);
	ck_assert_int_eq(sb_error_code(err), EEXIST);
	sb_error_release(&err);

	/* No repository, or a repository without a commit: nothing is left behind. */
	ck_assert_int_eq(mkdir(empty, 0755), 0);
	ck_assert_int_eq(sb_git_baseline_create(empty, priv, &err), -1);
	ck_assert_int_eq(sb_error_code(err), ENOENT);
	sb_error_release(&err);
	ck_assert(!exists(root, "priv"));
	ck_assert_int_eq(mkdir(unborn, 0755), 0);
	gitq(unborn, "init", "-q");
	ck_assert_int_eq(sb_git_baseline_create(unborn, priv, &err), -1);
	ck_assert_int_eq(sb_error_code(err), ENOENT);
	ck_assert_ptr_nonnull(strstr(sb_error_message(err), "no HEAD commit"));
	sb_error_release(&err);
	ck_assert(!exists(root, "priv"));

	/* Parent missing. */
	ck_assert_int_eq(sb_git_baseline_create(src, "/nonexistent/dir/priv", &err), -1);
	ck_assert_int_eq(sb_error_code(err), ENOENT);
	sb_error_release(&err);

	/* Opening something that is not a baseline. */
	{
		struct sb_git_baseline *b = NULL;

		ck_assert_int_eq(sb_git_baseline_open(empty, src, &b, &err), -1);
		ck_assert_ptr_null(b);
		sb_error_release(&err);
	}
	ck_assert_int_eq(sb_git_init(&err), 0); /* idempotent */
	free(empty);
	free(unborn);
	free(priv);
}
END_TEST

/* What the private directory looks like: 0700, no hooks, its own config, HEAD at the base. */
START_TEST(test_private_layout)
{
	_cleanup_free_ char *cfg = at(basedir, "config");
	_cleanup_free_ char *head = rev_parse(src, "HEAD");
	_cleanup_free_ char *gitdir = sb_xasprintf("--git-dir=%s", basedir);
	static const char *const want[][2] = {
		{ "core.symlinks", "true" },	 { "core.filemode", "true" },
		{ "core.autocrlf", "false" },	 { "core.ignorecase", "false" },
		{ "core.bare", "true" },
	};
	struct stat st;
	char *out;

	ck_assert_int_eq(lstat(basedir, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0700);
	ck_assert(!exists(basedir, "hooks"));
	for (size_t i = 0; i < SB_ARRAY_SIZE(want); i++) {
		out = git(root, "config", "--file", cfg, want[i][0], (const char *)NULL);
		ck_assert_msg(strncmp(out, want[i][1], strlen(want[i][1])) == 0, "%s = %s",
		    want[i][0], out);
		free(out);
	}
	out = git(root, gitdir, "rev-parse", "HEAD", (const char *)NULL);
	ck_assert_int_eq(strncmp(out, head, 40), 0);
	free(out);
	/* Every object of the base is there: fsck of the private repository passes. */
	free(git(root, gitdir, "fsck", "--no-dangling", (const char *)NULL));
}
END_TEST

/* The baseline can be bound to a copy of the tree (the daemon's /ssebench-repo). */
START_TEST(test_open_on_copy)
{
	struct sb_git_baseline *b = NULL;
	struct sb_git_capture c = SB_GIT_CAPTURE_INIT;
	struct sb_error *err = NULL;

	ck_assert_int_eq(sb_git_baseline_open(basedir, pristine, &b, &err), 0);
	capture(b, &c);
	ck_assert_str_eq(c.diff, "");
	sb_git_capture_release(&c);
	put(pristine, "del.txt", "other\n");
	capture(b, &c);
	assert_file(&c, "del.txt", SB_GIT_MODIFIED, 1, 1, false);
	sb_git_capture_release(&c);
	sb_git_baseline_free(b);
	sb_git_baseline_free(NULL);
}
END_TEST

/*
 * Control files that libgit2 would open with a blocking open(2): a FIFO there must fail the
 * capture (EINVAL) instead of hanging it for ever. Each case plants one; the case timeout
 * turns a hang into a failure.
 */
static void
plant_fifo(const char *dir, const char *rel)
{
	char *p;

	make_parents(dir, rel);
	p = at(dir, rel);
	ck_assert_msg(mkfifo(p, 0644) == 0, "mkfifo %s", p);
	free(p);
}

static const char *const blocking_cases[] = {
	"root .gitignore", "root .gitattributes", "root .gitmodules", "nested .gitignore",
	"untracked dir .gitattributes", "linked .gitattributes", "deleted dir now a link",
};

START_TEST(test_blocking_control_files)
{
	_cleanup_git_baseline_ struct sb_git_baseline *b = open_base();
	struct sb_git_capture c = SB_GIT_CAPTURE_INIT;
	struct sb_error *err = NULL;
	char *fifo = at(outside, "fifo");

	plant_fifo(outside, "fifo");
	plant_fifo(outside, "evil/.gitattributes");
	switch (_i) {
	case 0:
		remove_path(src, ".gitignore");
		plant_fifo(src, ".gitignore");
		break;
	case 1:
		plant_fifo(src, ".gitattributes");
		break;
	case 2:
		plant_fifo(src, ".gitmodules");
		break;
	case 3:
		plant_fifo(src, "dir/sub/.gitignore");
		break;
	case 4:
		put(src, "newdir/x.c", "x\n");
		plant_fifo(src, "newdir/.gitattributes");
		break;
	case 5:
		put_link(src, "dir/.gitattributes", fifo);
		break;
	default: {
		/* dir/ is tracked; it becomes a link to a directory with a FIFO in it. */
		char *p = at(src, "dir/sub"), *q = at(src, "dir"), *evil = at(outside, "evil");

		remove_path(src, "dir/sub/deep.txt");
		ck_assert_int_eq(rmdir(p), 0);
		ck_assert_int_eq(rmdir(q), 0);
		put_link(src, "dir", evil);
		free(p);
		free(q);
		free(evil);
		break;
	}
	}
	ck_assert_int_eq(sb_git_capture(b, SB_GIT_DIFF_MAX, &c, &err), -1);
	ck_assert_msg(sb_error_code(err) == EINVAL, "%s: %s", blocking_cases[_i],
	    sb_error_message(err));
	ck_assert_ptr_nonnull(strstr(sb_error_message(err), "is not a regular file"));
	sb_error_release(&err);
	free(fifo);
}
END_TEST

/* Harmless oddities: a directory named .gitignore, FIFOs as plain entries. */
START_TEST(test_special_entries)
{
	_cleanup_git_baseline_ struct sb_git_baseline *b = open_base();
	struct sb_git_capture c = SB_GIT_CAPTURE_INIT;

	put(src, "sub/.gitignore/x", "a directory called .gitignore\n");
	plant_fifo(src, "pipe");
	remove_path(src, "del.txt");
	plant_fifo(src, "del.txt"); /* a tracked file replaced by a FIFO */
	capture(b, &c);
	assert_file(&c, "del.txt", SB_GIT_DELETED, 0, 1, false);
	assert_file(&c, "sub/.gitignore/x", SB_GIT_ADDED, 1, 0, false);
	assert_lacks(&c, "pipe");
	ck_assert_uint_eq(c.nfiles, 2);
	sb_git_capture_release(&c);
}
END_TEST

/*
 * The agent's .git holding something that would block or send libgit2 elsewhere: the log
 * is "" (never a hang, never an error). Its config, which the log never reads, may include
 * a FIFO without any effect: that case still gives the commit.
 */
static const char *const dotgit_cases[] = {
	"fifo object", "alternates", "HEAD fifo", "ref symlink", "packed-refs fifo",
	"config includes a fifo",
};

START_TEST(test_commits_log_hostile_dotgit)
{
	_cleanup_git_baseline_ struct sb_git_baseline *b = open_base();
	_cleanup_free_ char *head = NULL, *branch = NULL, *fifo = at(outside, "fifo");
	struct sb_error *err = NULL;
	char *log = NULL;

	put(src, "a.txt", "committed\n");
	gitq(src, "commit", "-qam", "agent work");
	head = rev_parse(src, "HEAD");
	branch = git(src, "symbolic-ref", "HEAD", (const char *)NULL);
	branch[strlen(branch) - 1] = '\0';
	plant_fifo(outside, "fifo");
	switch (_i) {
	case 0: {
		/* The agent's commit itself, which the log must read, becomes a FIFO. */
		char *obj = sb_xasprintf(".git/objects/%.2s/%s", head, head + 2);

		remove_path(src, obj);
		plant_fifo(src, obj);
		free(obj);
		break;
	}
	case 1:
		put(src, ".git/objects/info/alternates", "/tmp\n");
		break;
	case 2:
		remove_path(src, ".git/HEAD");
		plant_fifo(src, ".git/HEAD");
		break;
	case 3: {
		char *rel = sb_xasprintf(".git/%s", branch), *real = sb_xasprintf("%s\n", head);

		put(src, ".git/refs/heads/real", real);
		remove_path(src, rel);
		put_link(src, rel, "real");
		free(rel);
		free(real);
		break;
	}
	case 4:
		gitq(src, "pack-refs", "--all");
		remove_path(src, ".git/packed-refs");
		plant_fifo(src, ".git/packed-refs");
		break;
	default: {
		char *inc = sb_xasprintf("[include]\n\tpath = %s\n", fifo);
		char *cfg = at(src, ".git/config");
		int fd = open(cfg, O_WRONLY | O_APPEND | O_CLOEXEC);

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(write(fd, inc, strlen(inc)), (ssize_t)strlen(inc));
		close(fd);
		free(inc);
		free(cfg);
		break;
	}
	}
	ck_assert_int_eq(sb_git_commits_log(b, SB_GIT_COMMITS_LOG_MAX, &log, &err), 0);
	if (_i == (int)SB_ARRAY_SIZE(dotgit_cases) - 1) {
		ck_assert_int_eq(strncmp(log, head, 40), 0);
		ck_assert_ptr_nonnull(strstr(log, "\nagent work\n"));
	} else {
		ck_assert_msg(strcmp(log, "") == 0, "%s: '%s'", dotgit_cases[_i], log);
	}
	free(log);
}
END_TEST

/* Another process holding the index lock: the capture works, the refresh is just not saved. */
START_TEST(test_index_locked)
{
	_cleanup_git_baseline_ struct sb_git_baseline *b = open_base();
	struct sb_git_capture c = SB_GIT_CAPTURE_INIT;
	struct timespec times[2] = { { .tv_sec = 1000000000 }, { .tv_sec = 1000000000 } };
	char *a = at(src, "a.txt");

	/* Touch a tracked file so the refresh has something to save. */
	ck_assert_int_eq(utimensat(AT_FDCWD, a, times, 0), 0);
	put(basedir, "index.lock", "");
	put(src, "new.txt", "n\n");
	capture(b, &c);
	ck_assert_uint_eq(c.nfiles, 1);
	assert_file(&c, "new.txt", SB_GIT_ADDED, 1, 0, false);
	sb_git_capture_release(&c);
	ck_assert(exists(basedir, "index.lock")); /* not ours to remove */
	remove_path(basedir, "index.lock");
	capture(b, &c);
	ck_assert_uint_eq(c.nfiles, 1);
	sb_git_capture_release(&c);
	free(a);
}
END_TEST

/*
 * Byte for byte what upstream produced with `git add -N -A && git diff --binary --no-renames
 * <base>` (text changes: binary patches are equivalent but their zlib streams differ).
 */
START_TEST(test_matches_git_cli)
{
	_cleanup_git_baseline_ struct sb_git_baseline *b = open_base();
	_cleanup_free_ char *base = rev_parse(src, "HEAD");
	struct sb_git_capture c = SB_GIT_CAPTURE_INIT;
	char *p = at(src, "script.sh"), *expect;

	put(src, "a.txt", "line1\nline2 changed\nline3\nno newline");
	put(src, "del.txt", "");
	remove_path(src, "old-name.txt");
	put(src, "empty", "");
	put(src, "new dir/with space.txt", "spaces\n");
	put(src, "tab\there.txt", "quoted path\n");
	put_link(src, "link", "script.sh");
	put_link(src, "dir/sub/ln", "../../a.txt");
	ck_assert_int_eq(chmod(p, 0755), 0);
	put(src, "script.sh", "#!/bin/sh\necho hi\necho again\n");
	capture(b, &c);
	gitq(src, "add", "-N", "-A");
	expect = git(src, "diff", "--binary", "--no-renames", "--no-ext-diff", "--no-textconv",
	    "--no-color", base, (const char *)NULL);
	ck_assert_str_eq(c.diff, expect);
	free(expect);
	sb_git_capture_release(&c);
	free(p);
}
END_TEST

/* An unreadable untracked directory fails the capture instead of silently dropping it. */
START_TEST(test_unreadable)
{
	_cleanup_git_baseline_ struct sb_git_baseline *b = open_base();
	struct sb_git_capture c = SB_GIT_CAPTURE_INIT;
	struct sb_error *err = NULL;
	char *p = at(src, "locked");

	if (geteuid() == 0) {
		/* root reads through any mode; nothing to test. */
		free(p);
		return;
	}
	put(src, "locked/f.txt", "x\n");
	ck_assert_int_eq(chmod(p, 0), 0);
	ck_assert_int_eq(sb_git_capture(b, SB_GIT_DIFF_MAX, &c, &err), -1);
	ck_assert_int_eq(sb_error_code(err), EACCES);
	sb_error_release(&err);
	ck_assert_int_eq(chmod(p, 0755), 0);
	free(p);
}
END_TEST

static Suite *
git_suite(void)
{
	Suite *s = suite_create("git");
	TCase *tc = tcase_create("capture");

	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_unchanged);
	tcase_add_test(tc, test_modified);
	tcase_add_test(tc, test_untracked_and_ignored);
	tcase_add_test(tc, test_deleted_and_renamed);
	tcase_add_test(tc, test_mode_change);
	tcase_add_test(tc, test_binary);
	tcase_add_test(tc, test_symlinks);
	tcase_add_test(tc, test_type_changes);
	tcase_add_test(tc, test_agent_commits);
	tcase_add_test(tc, test_commits_log_unrelated);
	tcase_add_test(tc, test_dotgit_deleted);
	tcase_add_test(tc, test_nested_repo);
	tcase_add_test(tc, test_files_table);
	tcase_add_test(tc, test_size_cap);
	tcase_add_test(tc, test_capture_twice);
	tcase_add_test(tc, test_hostile_repo_config);
	tcase_add_test(tc, test_hostile_global_config);
	tcase_add_test(tc, test_create_errors);
	tcase_add_test(tc, test_private_layout);
	tcase_add_test(tc, test_open_on_copy);
	tcase_add_test(tc, test_matches_git_cli);
	tcase_add_loop_test(tc, test_blocking_control_files, 0, (int)SB_ARRAY_SIZE(blocking_cases));
	tcase_add_test(tc, test_special_entries);
	tcase_add_loop_test(tc, test_commits_log_hostile_dotgit, 0,
	    (int)SB_ARRAY_SIZE(dotgit_cases));
	tcase_add_test(tc, test_index_locked);
	tcase_add_test(tc, test_unreadable);
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(git_suite)

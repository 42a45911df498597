/* SPDX-License-Identifier: Apache-2.0 */
/* images.c: building the image layers with the docker client. */
#include "config.h"

#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/fs.h"
#include "sb/limits.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/path.h"
#include "sb/sha256.h"
#include "sb/taskdir.h"
#include "sb/tree.h"
#include "sb/yaml.h"

#include "agents.h"
#include "cli.h"
#include "docker.h"
#include "images.h"

static double
mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double
progress_clock(void)
{
	static double t0;

	if (t0 == 0)
		t0 = mono();
	return mono() - t0;
}

void
progress(const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	double t = progress_clock();
	va_list ap;

	va_start(ap, fmt);
	msg = sb_xvasprintf(fmt, ap);
	va_end(ap);
	/* Escaped: a message may quote a task's or a build's text. */
	fprintf(stderr, "[%7.1f s] %s\n", t, cli_safe(msg));
}

char *
image_rootfs(void)
{
	return sb_xasprintf("%s/debian:bookworm", cli_registry());
}

char *
image_base(const char *base)
{
	return sb_xasprintf("%s/%s", cli_registry(), base);
}

char *
image_case(const char *dataset, const char *task_id)
{
	_cleanup_free_ char *d = sb_ascii_lower(dataset), *t = sb_ascii_lower(task_id);

	return sb_xasprintf("%s/case/%s/%s", cli_registry(), d, t);
}

char *
image_runtime(void)
{
	return sb_xasprintf("%s/runtime:%s", cli_registry(), PACKAGE_VERSION);
}

char *
image_tool(const char *task_id)
{
	_cleanup_free_ char *t = sb_ascii_lower(task_id);

	return sb_xasprintf("%s/tool/%s:%s", cli_registry(), t, PACKAGE_VERSION);
}

char *
image_agent(const struct agent_info *a, const char *task_id)
{
	_cleanup_free_ char *t = sb_ascii_lower(task_id);

	return sb_xasprintf("%s/agent-%s/%s:%s", cli_registry(), a->name, t, a->version);
}

char *
image_tool_sidecar(const char *task_id)
{
	_cleanup_free_ char *t = sb_ascii_lower(task_id);

	return sb_xasprintf("%s/tool-sidecar/%s:%s", cli_registry(), t, PACKAGE_VERSION);
}

char *
image_sidecar_agent(void)
{
	return sb_xasprintf("%s/tool-sidecar-agent:%s", cli_registry(), PACKAGE_VERSION);
}

char *
image_agent_sidecar(const struct agent_info *a)
{
	return sb_xasprintf("%s/agent-%s/sidecar:%s", cli_registry(), a->name, a->version);
}

/* Collect the regular files below rel (sorted walk). */
static int
collect_files(int dirfd, const char *rel, struct sb_argv *out, struct sb_error **err)
{
	char **names = NULL;
	size_t n = 0;
	int r = 0;

	if (sb_list_dir_at(dirfd, *rel ? rel : ".", SB_TASK_FILES_MAX, &names, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < n && r == 0; i++) {
		_cleanup_free_ char *p = *rel ? sb_xasprintf("%s/%s", rel, names[i])
					      : sb_xstrdup(names[i]);
		struct stat st;

		if (sb_lstat_at(dirfd, p, &st, NULL) < 0)
			continue;
		if (S_ISDIR(st.st_mode))
			r = collect_files(dirfd, p, out, err);
		else if (S_ISREG(st.st_mode))
			sb_argv_push(out, p);
		if (out->n > SB_TASK_FILES_MAX)
			r = sb_error_set(err, E2BIG, "more than %d files", SB_TASK_FILES_MAX);
	}
	sb_strv_free(names);
	return r;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
task_files_digest(const char *task_dir, char out[65], struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv files = SB_ARGV_INIT;
	_cleanup_close_ int fd = sb_open_dir(task_dir, err);
	struct sb_sha256 s;
	unsigned char d[32];

	if (fd < 0 || collect_files(fd, "", &files, err) < 0)
		return -1;
	if (files.n > 1)
		qsort(files.v, files.n, sizeof(char *), cmp_str);
	sb_sha256_init(&s);
	for (size_t i = 0; i < files.n; i++) {
		char hex[65];

		if (sb_sha256_file_at(fd, files.v[i], hex, err) < 0)
			return -1;
		sb_sha256_update(&s, files.v[i], strlen(files.v[i]) + 1); /* with its NUL */
		sb_sha256_update(&s, hex, 64);
		sb_sha256_update(&s, "\n", 1);
	}
	sb_sha256_final(&s, d);
	sb_sha256_to_hex(d, out);
	return 0;
}

/* docker build with BuildKit, its output to the build log; a failure quotes the log's end. */
static int
build(const struct images *im, struct sb_argv *args, const char *what, const char *stdin_data,
    struct sb_error **err)
{
	struct sb_cmd_result r;
	double t0 = progress_clock();
	int code;

	if (!im->quiet)
		progress("building %s", what);
	if (docker_run(args, DOCKER_BUILDKIT | (im->log_fd < 0 ? DOCKER_CAPTURE : 0), im->log_fd,
		stdin_data, stdin_data ? strlen(stdin_data) : 0, 0, &r, err) < 0)
		return -1;
	code = r.exit_code;
	if (code != 0) {
		sb_buf_rtrim(&r.err);
		sb_error_set(err, EIO, "building %s failed (docker exit %d)%s%s", what, code,
		    r.err.len ? ": " : "",
		    r.err.len > 2000 ? r.err.s + r.err.len - 2000 : r.err.s);
	}
	sb_cmd_result_release(&r);
	if (code != 0)
		return -1;
	if (!im->quiet)
		progress("built %s (%.1f s)", what, progress_clock() - t0);
	return 0;
}

int
images_build_base(const struct images *im, const char *lang, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ char *dir = sb_xasprintf("%s/images/base-images/generic-%s", im->home, lang);
	_cleanup_free_ char *rootfs = image_rootfs(), *what = NULL;
	struct stat st;

	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return sb_error_set(err, ENOENT, "no base image definition for '%s' (%s)", lang, dir);
	if (!docker_image_exists(rootfs))
		return sb_error_set(err, ENOENT,
		    "the base rootfs image %s is missing: run scripts/docker-up", rootfs);
	what = sb_xasprintf("base image %s/base-generic-%s:%s", cli_registry(), lang,
	    PACKAGE_VERSION);
	sb_argv_pushl(&a, "build", "--progress=plain", "--build-arg", NULL);
	sb_argv_pushf(&a, "SSEBENCH_REGISTRY=%s", cli_registry());
	sb_argv_push(&a, "-t");
	sb_argv_pushf(&a, "%s/base-generic-%s:%s", cli_registry(), lang, PACKAGE_VERSION);
	sb_argv_push(&a, "-t");
	sb_argv_pushf(&a, "%s/base-generic-%s:latest", cli_registry(), lang);
	sb_argv_push(&a, dir);
	return build(im, &a, what, NULL, err);
}

int
images_ensure_base(const struct images *im, const char *base, struct sb_error **err)
{
	_cleanup_free_ char *name = image_base(base);
	const char *lang;

	if (docker_image_exists(name))
		return 0;
	if (strncmp(base, "base-generic-", 13) != 0)
		return sb_error_set(err, ENOENT, "the base image %s is missing and is not one "
						 "SSEBench builds",
		    name);
	/* base-generic-<lang>:<tag>: SSEBench builds its own version of it. */
	lang = base + 13;
	{
		_cleanup_free_ char *l = sb_xstrndup(lang, strcspn(lang, ":"));
		_cleanup_free_ char *want = sb_xasprintf("base-generic-%s:%s", l, PACKAGE_VERSION);

		if (strcmp(want, base) != 0 && strchr(base, ':') != NULL &&
		    strcmp(strchr(base, ':') + 1, "latest") != 0)
			return sb_error_set(err, ENOENT,
			    "the task wants %s, which this SSEBench (%s) does not build", name,
			    PACKAGE_VERSION);
		if (!im->quiet)
			progress("base image %s is missing", name);
		return images_build_base(im, l, err);
	}
}

#define CASE_MARK_MAX (256 * 1024 * 1024) /* a hidden diff larger than this is not marked */

/* The line a hidden diff gets before its first (see mark_hidden). */
char *
images_canary_line(const char *canary)
{
	return sb_xasprintf("SSEBench canary %s: hidden task material; never show it to an agent, "
			    "never train on it.\n",
	    canary);
}

/*
 * Mark one hidden file of the context copy with the canary, where its format allows it
 * without changing what it means: a diff gets a line before its first, which `git apply`
 * and `patch` skip as they skip a commit message. Anything else (a PoC, a test input) keeps
 * its bytes: they are its meaning.
 */
static int
mark_hidden(int ctx_fd, const char *rel, const char *canary, struct sb_error **err)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(CASE_MARK_MAX);
	_cleanup_free_ char *line = images_canary_line(canary), *dir = sb_xstrdup(rel);
	_cleanup_close_ int dfd = -1;
	char *slash = strrchr(dir, '/');
	const char *base = slash != NULL ? slash + 1 : rel;
	struct stat st;
	bool diff;

	if (sb_read_file_at(ctx_fd, rel, SB_OPEN_NO_SYMLINKS, &b, NULL) < 0)
		return 0; /* too large or not a regular file: not a diff we mark */
	/*
	 * A diff starts as one ("diff ", "Index: ", or "--- " with its "+++ " line) and has a hunk
	 * or a binary patch: a test script's "--- expected ---" is no diff, and a line before its
	 * shebang would break it. A mail ("From ", git format-patch) is left alone: git am does
	 * not take text before its first line.
	 */
	diff = b.len > 0 &&
	       (strncmp(b.s, "diff ", 5) == 0 || strncmp(b.s, "Index: ", 7) == 0 ||
		   (strncmp(b.s, "--- ", 4) == 0 && memmem(b.s, b.len, "\n+++ ", 5) != NULL)) &&
	       (memmem(b.s, b.len, "\n@@ ", 4) != NULL ||
		   memmem(b.s, b.len, "\nGIT binary patch", 17) != NULL);
	if (!diff || (b.len >= strlen(line) && memcmp(b.s, line, strlen(line)) == 0))
		return 0;
	if (slash != NULL) {
		*slash = '\0';
		dfd = sb_open_beneath(ctx_fd, dir, O_RDONLY | O_DIRECTORY, 0, SB_OPEN_NO_SYMLINKS, err);
		if (dfd < 0)
			return -1;
	} else if ((dfd = fcntl(ctx_fd, F_DUPFD_CLOEXEC, 3)) < 0) {
		return sb_error_errno(err, errno, "dup");
	}
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return sb_error_errno(err, errno, "the context's '%s'", rel);
	{
		_cleanup_buf_ struct sb_buf out = SB_BUF_INIT(CASE_MARK_MAX + 4096);

		if (sb_buf_appends(&out, line, err) < 0 || sb_buf_append(&out, b.s, b.len, err) < 0)
			return -1;
		return sb_write_file_atomic_at(dfd, base, out.s, out.len, st.st_mode & 07777, err);
	}
}

/*
 * The case image's build context when the dataset has a canary: a copy of the task folder
 * (in the cache, as an agent's context is, and removed the same way) whose hidden files
 * (the fix, the hidden tests) are marked, so that every copy of them an image holds, in
 * /ssebench or wherever a Dockerfile put one, carries the canary: dataset verify looks for
 * it outside /ssebench, and the scan flags it in what an agent wrote.
 */
static int
case_context(const struct sb_task *t, const char *task_dir, const char *canary, char **ret,
    struct sb_error **err)
{
	_cleanup_free_ char *cache = agent_cache_dir(), *tmpl = NULL;
	_cleanup_close_ int src_fd = -1, parent_fd = -1, ctx_fd = -1;
	const struct sb_task_config *c = t->config;
	const struct sb_task_str *hidden[] = { &c->files.patch, &c->files.future_test,
		&c->files.security_test, &c->files.intent_test };
	struct sb_copy_opts copy = { .only_uid = (uid_t)-1, .chown_uid = (uid_t)-1,
		.chown_gid = (gid_t)-1, .max_files = 100000, .max_bytes = 4ULL << 30 };

	if (sb_mkdir_p(cache, 0700, err) < 0)
		return -1;
	tmpl = sb_xasprintf("%s/build-XXXXXX", cache);
	if (mkdtemp(tmpl) == NULL)
		return sb_error_errno(err, errno, "mkdtemp '%s'", tmpl);
	*ret = sb_xasprintf("%s/context", tmpl);
	src_fd = sb_open_dir(task_dir, err);
	parent_fd = src_fd >= 0 ? sb_open_dir(tmpl, err) : -1;
	if (parent_fd < 0 || sb_copy_tree_at(src_fd, parent_fd, "context", &copy, NULL, err) < 0 ||
	    (ctx_fd = sb_open_dir(*ret, err)) < 0)
		goto fail;
	for (size_t i = 0; i < SB_ARRAY_SIZE(hidden); i++) {
		_cleanup_free_ char *target = NULL, *src = NULL;

		if (hidden[i]->s == NULL)
			continue;
		target = sb_xasprintf("%s/%s", SB_TASK_FILES_DIR, hidden[i]->s);
		src = sb_task_context_source(t, src_fd, target);
		if (src != NULL && mark_hidden(ctx_fd, src, canary, err) < 0)
			goto fail;
	}
	return 0;
fail:
	agent_context_remove(*ret);
	free(*ret);
	*ret = NULL;
	return sb_error_prefix(err, "the build context of the task '%s'", t->name);
}

int
images_build_case(const struct images *im, const char *dataset_dir, const char *dataset,
    const struct sb_task *t, const char *digest, const char *canary, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ char *name = image_case(dataset, t->name);
	_cleanup_free_ char *dir = sb_xasprintf("%s/%s", dataset_dir, t->name);
	_cleanup_free_ char *what = sb_xasprintf("case image %s", name);
	_cleanup_free_ char *ctx = NULL;
	int rc;

	if (canary != NULL && case_context(t, dir, canary, &ctx, err) < 0)
		return -1;

	sb_argv_pushl(&a, "build", "--progress=plain", "--build-arg", NULL);
	sb_argv_pushf(&a, "SSEBENCH_REGISTRY=%s", cli_registry());
	sb_argv_pushl(&a, "--label", NULL);
	sb_argv_pushf(&a, "ssebench.task-files=%s", digest);
	sb_argv_pushl(&a, "--label", NULL);
	sb_argv_pushf(&a, "ssebench.task-id=%s", t->name);
	sb_argv_pushl(&a, "-t", name, ctx != NULL ? ctx : dir, NULL);
	rc = build(im, &a, what, NULL, err);
	if (ctx != NULL)
		agent_context_remove(ctx);
	return rc;
}

int
images_build_runtime(const struct images *im, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ char *name = image_runtime();
	_cleanup_free_ char *df = sb_xasprintf("%s/images/runtime/Dockerfile", im->home);
	_cleanup_free_ char *what = sb_xasprintf("runtime image %s", name);

	sb_argv_pushl(&a, "build", "--progress=plain", "--build-arg", NULL);
	sb_argv_pushf(&a, "SSEBENCH_REGISTRY=%s", cli_registry());
	sb_argv_pushl(&a, "-f", df, "-t", name, im->home, NULL);
	return build(im, &a, what, NULL, err);
}

/*
 * The sandbox tool layer on a task's case image. images/ is the context, so that it shares
 * images/common with the sidecar agent runtime.
 */
int
images_build_tool(const struct images *im, const struct sb_task *t, const char *case_image,
    struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ char *name = image_tool(t->name), *runtime = image_runtime();
	_cleanup_free_ char *ctx = sb_xasprintf("%s/images", im->home);
	_cleanup_free_ char *df = sb_xasprintf("%s/images/sandbox/Dockerfile", im->home);
	_cleanup_free_ char *what = sb_xasprintf("tool image %s", name);

	sb_argv_pushl(&a, "build", "--progress=plain", "--build-arg", NULL);
	sb_argv_pushf(&a, "CASE_IMAGE=%s", case_image);
	sb_argv_push(&a, "--build-arg");
	sb_argv_pushf(&a, "RUNTIME_IMAGE=%s", runtime);
	sb_argv_push(&a, "--build-arg");
	sb_argv_pushf(&a, "SOURCE_DIR=%s", t->config->source.s);
	sb_argv_pushl(&a, "--label", NULL);
	sb_argv_pushf(&a, "ssebench.task-id=%s", t->name);
	sb_argv_pushl(&a, "-f", df, "-t", name, ctx, NULL);
	return build(im, &a, what, NULL, err);
}

/* On the task's tool image: one preparation of a task for both modes (sidecar-case/Dockerfile). */
int
images_build_sidecar_case(const struct images *im, const struct sb_task *t,
    const char *case_image, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ char *name = image_tool_sidecar(t->name), *tool = image_tool(t->name);
	_cleanup_free_ char *ctx = sb_xasprintf("%s/images", im->home);
	_cleanup_free_ char *df = sb_xasprintf("%s/images/sidecar-case/Dockerfile", im->home);
	_cleanup_free_ char *what = sb_xasprintf("sidecar task image %s", name);

	if (images_build_tool(im, t, case_image, err) < 0)
		return -1;
	sb_argv_pushl(&a, "build", "--progress=plain", "--build-arg", NULL);
	sb_argv_pushf(&a, "TOOL_IMAGE=%s", tool);
	sb_argv_pushl(&a, "--label", NULL);
	sb_argv_pushf(&a, "ssebench.task-id=%s", t->name);
	sb_argv_pushl(&a, "-f", df, "-t", name, ctx, NULL);
	return build(im, &a, what, NULL, err);
}

int
images_build_sidecar_agent(const struct images *im, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ char *name = image_sidecar_agent(), *runtime = image_runtime();
	_cleanup_free_ char *rootfs = image_rootfs();
	_cleanup_free_ char *ctx = sb_xasprintf("%s/images", im->home);
	_cleanup_free_ char *df = sb_xasprintf("%s/images/sidecar-agent/Dockerfile", im->home);
	_cleanup_free_ char *what = sb_xasprintf("sidecar agent runtime %s", name);

	if (!docker_image_exists(rootfs))
		return sb_error_set(err, ENOENT,
		    "the base rootfs image %s is missing: run scripts/docker-up", rootfs);
	sb_argv_pushl(&a, "build", "--progress=plain", "--build-arg", NULL);
	sb_argv_pushf(&a, "SSEBENCH_REGISTRY=%s", cli_registry());
	sb_argv_push(&a, "--build-arg");
	sb_argv_pushf(&a, "RUNTIME_IMAGE=%s", runtime);
	sb_argv_pushl(&a, "-f", df, "-t", name, ctx, NULL);
	return build(im, &a, what, NULL, err);
}

/*
 * The agent's Dockerfile starts FROM ssebench-agent (the upstream contract). Without
 * --build-context we point that name at this task's tool image (or, in sidecar mode, the
 * task-independent agent runtime) by rewriting the FROM line
 * in a copy fed on stdin: two runs building agent images for different tasks at once then
 * never share (and race on) a tag.
 */
static char *
rewrite_agent_from(const char *text, const char *tool_image, bool *ret_found)
{
	struct sb_buf out = SB_BUF_INIT(SB_DOCKERFILE_MAX * 2);
	const char *p = text;

	*ret_found = false;
	while (*p != '\0') {
		const char *nl = strchr(p, '\n'), *q = p;
		size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);

		while (*q == ' ' || *q == '\t')
			q++;
		if (strncasecmp(q, "FROM", 4) == 0 && (q[4] == ' ' || q[4] == '\t')) {
			const char *img = q + 4, *end;

			while (*img == ' ' || *img == '\t')
				img++;
			end = img + strcspn(img, " \t\r\n");
			if ((size_t)(end - img) == 14 && strncmp(img, "ssebench-agent", 14) == 0) {
				(void)sb_buf_append(&out, p, (size_t)(img - p), NULL);
				(void)sb_buf_appends(&out, tool_image, NULL);
				(void)sb_buf_append(&out, end, len - (size_t)(end - p), NULL);
				*ret_found = true;
				p += len;
				continue;
			}
		}
		(void)sb_buf_append(&out, p, len, NULL);
		p += len;
	}
	return sb_buf_detach(&out, NULL);
}

int
images_build_agent(const struct images *im, const struct agent_info *ag,
    const char *base_image, const char *name, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_buf_ struct sb_buf df = SB_BUF_INIT(SB_DOCKERFILE_MAX);
	_cleanup_free_ char *text = NULL, *what = sb_xasprintf("agent image %s", name);
	_cleanup_free_ char *ctx = NULL;
	_cleanup_close_ int fd = sb_open_dir(ag->dir, err);
	bool found, tmp = false;
	int r;

	if (fd < 0 || sb_read_file_at(fd, "Dockerfile", 0, &df, err) < 0)
		return sb_error_prefix(err, "agent '%s'", ag->name);
	text = rewrite_agent_from(df.s, base_image, &found);
	if (!found)
		return sb_error_set(err, EINVAL, "%s/Dockerfile does not start FROM ssebench-agent",
		    ag->dir);
	/* The agent's folder, or a copy of it with its npm packages fetched and checked. */
	if (agent_context(ag, &ctx, &tmp, err) < 0)
		return -1;
	sb_argv_pushl(&a, "build", "--progress=plain", "-f", "-", "--label", NULL);
	sb_argv_pushf(&a, "ssebench.agent=%s", ag->name);
	sb_argv_push(&a, "--build-arg");
	sb_argv_pushf(&a, "SSEBENCH_REGISTRY=%s", cli_registry());
	sb_argv_pushl(&a, "-t", name, ctx, NULL);
	r = build(im, &a, what, text, err);
	if (tmp)
		agent_context_remove(ctx);
	return r;
}

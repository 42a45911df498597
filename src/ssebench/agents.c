/* SPDX-License-Identifier: Apache-2.0 */
/* agents.c: agent folders, and the npm packages their images are built from (agents.h). */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/fs.h"
#include "sb/http.h"
#include "sb/limits.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/path.h"
#include "sb/sha256.h"
#include "sb/tree.h"
#include "sb/yaml.h"

#include "agents.h"
#include "cli.h"
#include "images.h"

#define NPM_REGISTRY_DEFAULT "https://registry.npmjs.org"
#define NPM_TARBALL_MAX	     ((uint64_t)2 << 30) /* bytes of one package */
#define NPM_PACKAGES_MAX     16

const char *
agent_host_arch(void)
{
	static char arch[sizeof(((struct utsname *)0)->machine)];
	struct utsname u;

	if (arch[0] != '\0')
		return arch;
	if (uname(&u) < 0)
		return "unknown";
	snprintf(arch, sizeof(arch), "%s",
	    strcmp(u.machine, "x86_64") == 0	? "amd64"
		: strcmp(u.machine, "aarch64") == 0 ? "arm64"
						    : u.machine);
	return arch;
}

/* [@scope/]name with npm's own characters; no "..", no other slash. */
static bool
npm_name_valid(const char *s)
{
	const char *name = s;

	if (*s == '@') {
		const char *slash = strchr(s, '/');

		if (slash == NULL || slash == s + 1 ||
		    strspn(s + 1, "abcdefghijklmnopqrstuvwxyz0123456789._-") != (size_t)(slash - s - 1))
			return false;
		name = slash + 1;
	}
	return *name != '\0' && *name != '.' && strlen(s) <= 214 &&
	    name[strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789._-")] == '\0';
}

static bool
all_of(const char *s, const char *set)
{
	return *s != '\0' && s[strspn(s, set)] == '\0';
}

static const char *
scalar(const struct sb_ynode *n)
{
	return n != NULL && n->kind == SB_YNODE_SCALAR && !sb_ynode_is_null(n) ? n->value : NULL;
}

/* One item of npm:, checked. */
static int
load_npm(const char *file, const struct sb_ynode *it, struct agent_npm *ret, struct sb_error **err)
{
	const char *pkg, *ver, *sha, *arch;

	if (it->kind != SB_YNODE_MAP)
		return sb_error_set(err, EINVAL, "%s:%u:%u: an npm entry is a mapping", file, it->line,
		    it->col);
	for (size_t i = 0; i < it->n; i++) {
		const char *k = it->keys[i]->value;

		if (strcmp(k, "package") != 0 && strcmp(k, "version") != 0 &&
		    strcmp(k, "sha256") != 0 && strcmp(k, "arch") != 0)
			return sb_error_set(err, EINVAL, "%s:%u:%u: unknown key '%s' (package, "
							 "version, sha256, arch)",
			    file, it->keys[i]->line, it->keys[i]->col, k);
	}
	pkg = scalar(sb_ymap_get(it, "package"));
	ver = scalar(sb_ymap_get(it, "version"));
	sha = scalar(sb_ymap_get(it, "sha256"));
	arch = scalar(sb_ymap_get(it, "arch"));
	if (pkg == NULL || !npm_name_valid(pkg))
		return sb_error_set(err, EINVAL, "%s:%u:%u: package must be an npm package name", file,
		    it->line, it->col);
	if (ver == NULL || !all_of(ver, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					"0123456789.+-"))
		return sb_error_set(err, EINVAL, "%s:%u:%u: version must be an exact npm version",
		    file, it->line, it->col);
	/* A pin, not a range: the image is what was checked, or it is not built. */
	if (sha == NULL || strlen(sha) != 64 || !all_of(sha, "0123456789abcdef"))
		return sb_error_set(err, EINVAL,
		    "%s:%u:%u: sha256 must be the tarball's SHA-256 (64 lower-case hex digits)", file,
		    it->line, it->col);
	if (arch != NULL && !all_of(arch, "abcdefghijklmnopqrstuvwxyz0123456789"))
		return sb_error_set(err, EINVAL, "%s:%u:%u: arch must be a Docker architecture name",
		    file, it->line, it->col);
	ret->package = sb_xstrdup(pkg);
	ret->version = sb_xstrdup(ver);
	ret->sha256 = sb_xstrdup(sha);
	ret->arch = arch != NULL ? sb_xstrdup(arch) : NULL;
	return 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void
agent_names(const char *home, struct sb_argv *out)
{
	_cleanup_free_ char *dirs = sb_xasprintf("%s/agents:%s", home,
	    cli_setting("SSEBENCH_AGENTS", ""));
	char *save = NULL;

	for (char *d = strtok_r(dirs, ":", &save); d != NULL; d = strtok_r(NULL, ":", &save)) {
		_cleanup_close_ int fd = sb_open_dir(d, NULL);
		char **names = NULL;
		size_t n = 0;

		if (fd < 0 || sb_list_dir_at(fd, ".", 1000, &names, &n, NULL) < 0)
			continue;
		for (size_t i = 0; i < n; i++) {
			bool seen = false;

			for (size_t k = 0; k < out->n; k++)
				seen = seen || strcmp(out->v[k], names[i]) == 0;
			if (!seen && sb_name_valid(names[i]))
				sb_argv_push(out, names[i]);
		}
		sb_strv_free(names);
	}
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(char *), cmp_str);
}

int
agent_load(const char *home, const char *name, struct agent_info *ret, struct sb_error **err)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(SB_CONFIG_FILE_MAX);
	_cleanup_free_ char *dir = NULL, *df = NULL, *file = NULL;
	_cleanup_ynode_ struct sb_ynode *root = NULL;
	_cleanup_close_ int fd = -1;
	const struct sb_ynode *n, *v, *npm;
	struct sb_yloc loc = { 0, 0 };
	struct agent_info a = { NULL, NULL, NULL, NULL, 0, false };
	struct stat st;

	if (!sb_name_valid(name))
		return sb_error_set(err, EINVAL, "'%s' is not an agent name", name);
	/* The home's agents/, then each directory of $SSEBENCH_AGENTS (colon-separated). */
	dir = sb_xasprintf("%s/agents/%s", home, name);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		_cleanup_free_ char *extra = sb_xstrdup(cli_setting("SSEBENCH_AGENTS", ""));
		char *save = NULL;

		for (char *d = strtok_r(extra, ":", &save); d != NULL && fd < 0;
		     d = strtok_r(NULL, ":", &save)) {
			free(dir);
			dir = sb_xasprintf("%s/%s", d, name);
			fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		}
	}
	if (fd < 0) {
		_cleanup_argv_ struct sb_argv names = SB_ARGV_INIT;
		const char *near;

		agent_names(home, &names);
		near = sb_closest(name, (const char *const *)names.v, names.n);
		return sb_error_set(err, ENOENT,
		    "no agent '%s' (looked in %s/agents and $SSEBENCH_AGENTS)%s%s%s", name, home,
		    near ? "; did you mean " : "", near ? near : "", near ? "?" : "");
	}
	file = sb_xasprintf("%s/agent.yaml", dir);
	if (sb_read_file_at(fd, "agent.yaml", 0, &b, err) < 0)
		return sb_error_prefix(err, "agent '%s'", name);
	if (sb_yaml_load(b.s, b.len, &root, &loc, err) < 0)
		return sb_error_prefix(err, "%s:%u:%u", file, loc.line, loc.col);
	if (root == NULL || root->kind != SB_YNODE_MAP)
		return sb_error_set(err, EINVAL, "%s: expected a mapping", file);
	for (size_t i = 0; i < root->n; i++)
		if (strcmp(root->keys[i]->value, "name") != 0 &&
		    strcmp(root->keys[i]->value, "version") != 0 &&
		    strcmp(root->keys[i]->value, "npm") != 0 &&
		    strcmp(root->keys[i]->value, "model") != 0)
			return sb_error_set(err, EINVAL, "%s:%u:%u: unknown key '%s'", file,
			    root->keys[i]->line, root->keys[i]->col, root->keys[i]->value);
	n = sb_ymap_get(root, "name");
	if (n == NULL || n->kind != SB_YNODE_SCALAR || strcmp(n->value, name) != 0)
		return sb_error_set(err, EINVAL, "%s: name must be '%s'", file, name);
	v = sb_ymap_get(root, "version");
	if (v != NULL && (v->kind != SB_YNODE_SCALAR || sb_ynode_is_null(v) || v->len == 0 ||
			     strpbrk(v->value, " \t/:") != NULL))
		return sb_error_set(err, EINVAL, "%s: version must be a tag-like string", file);
	/* "model: none": an agent that talks to no model (dummy, the hack agents). */
	{
		const struct sb_ynode *m = sb_ymap_get(root, "model");

		if (m != NULL && (m->kind != SB_YNODE_SCALAR || strcmp(m->value, "none") != 0))
			return sb_error_set(err, EINVAL, "%s:%u:%u: model can only be 'none'", file,
			    m->line, m->col);
		a.no_model = m != NULL;
	}
	npm = sb_ymap_get(root, "npm");
	if (npm != NULL && (npm->kind != SB_YNODE_SEQ || npm->n > NPM_PACKAGES_MAX))
		return sb_error_set(err, EINVAL, "%s:%u:%u: npm must be a list of at most %d packages",
		    file, npm->line, npm->col, NPM_PACKAGES_MAX);
	df = sb_xasprintf("%s/Dockerfile", dir);
	if (stat(df, &st) < 0 || !S_ISREG(st.st_mode))
		return sb_error_set(err, ENOENT, "agent '%s' has no Dockerfile", name);
	a.npm = sb_xcalloc(npm != NULL && npm->n > 0 ? npm->n : 1, sizeof(*a.npm));
	for (size_t i = 0; npm != NULL && i < npm->n; i++) {
		if (load_npm(file, npm->items[i], &a.npm[i], err) < 0) {
			agent_info_release(&a);
			return -1;
		}
		a.n_npm++;
	}
	a.name = sb_xstrdup(name);
	a.version = sb_xstrdup(v != NULL ? v->value : PACKAGE_VERSION);
	a.dir = TAKE_PTR(dir);
	*ret = a;
	return 0;
}

void
agent_info_release(struct agent_info *a)
{
	for (size_t i = 0; i < a->n_npm; i++) {
		free(a->npm[i].package);
		free(a->npm[i].version);
		free(a->npm[i].sha256);
		free(a->npm[i].arch);
	}
	free(a->npm);
	free(a->name);
	free(a->version);
	free(a->dir);
	memset(a, 0, sizeof(*a));
}

char *
agent_cache_dir(void)
{
	const char *c = cli_setting("SSEBENCH_CACHE", NULL), *x = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");

	if (c != NULL && *c == '/')
		return sb_xstrdup(c);
	if (x != NULL && *x == '/')
		return sb_xasprintf("%s/ssebench", x);
	return sb_xasprintf("%s/.cache/ssebench", home != NULL && *home == '/' ? home : "/tmp");
}

/*
 * The package's tarball in the cache, as <sha256>.tgz: downloaded (to a temporary name,
 * renamed only once its SHA-256 is the pinned one) unless it is there already.
 */
static int
npm_fetch(const struct agent_npm *p, const char *npm_dir, struct sb_error **err)
{
	const char *reg = cli_setting("SSEBENCH_NPM_REGISTRY", getenv("npm_config_registry"));
	const char *base = strrchr(p->package, '/');
	_cleanup_free_ char *final = sb_xasprintf("%s/%s.tgz", npm_dir, p->sha256);
	_cleanup_free_ char *tmp = sb_xasprintf("%s/.part-%s-%d", npm_dir, p->sha256, (int)getpid());
	_cleanup_free_ char *url = NULL, *registry = NULL;
	_cleanup_close_ int fd = -1;
	struct sb_sha256 h;
	unsigned char d[32];
	char hex[65];
	uint64_t bytes = 0;
	double t0 = progress_clock();
	struct stat st;

	if (stat(final, &st) == 0 && S_ISREG(st.st_mode))
		return 0;
	registry = sb_xstrdup(reg != NULL && *reg != '\0' ? reg : NPM_REGISTRY_DEFAULT);
	while (*registry != '\0' && registry[strlen(registry) - 1] == '/')
		registry[strlen(registry) - 1] = '\0';
	url = sb_xasprintf("%s/%s/-/%s-%s.tgz", registry, p->package, base ? base + 1 : p->package,
	    p->version);
	progress("fetching %s@%s from the npm registry (%s)", p->package, p->version, registry);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return sb_error_errno(err, errno, "create '%s'", tmp);
	sb_sha256_init(&h);
	if (sb_http_download(url, fd, NPM_TARBALL_MAX, 900000, &h, &bytes, err) < 0 ||
	    fsync(fd) < 0) {
		if (err != NULL && *err == NULL)
			sb_error_errno(err, errno, "fsync '%s'", tmp);
		(void)unlink(tmp);
		return sb_error_prefix(err, "the agent's npm package %s@%s", p->package, p->version);
	}
	sb_sha256_final(&h, d);
	sb_sha256_to_hex(d, hex);
	/* The pin is the point: anything else the registry serves is refused, and not kept. */
	if (strcmp(hex, p->sha256) != 0) {
		(void)unlink(tmp);
		return sb_error_set(err, EBADMSG,
		    "%s@%s from %s has SHA-256 %s, not the pinned %s: refused", p->package,
		    p->version, url, hex, p->sha256);
	}
	if (rename(tmp, final) < 0) {
		int e = errno;

		(void)unlink(tmp);
		return sb_error_errno(err, e, "rename '%s'", tmp);
	}
	progress("fetched %s@%s: %.1f MB, SHA-256 as pinned (%.1f s)", p->package, p->version,
	    (double)bytes / 1e6, progress_clock() - t0);
	return 0;
}

/* dst gets src's content: a hard link when they share a file system, else a copy. */
static int
link_or_copy(const char *src, const char *dst, struct sb_error **err)
{
	_cleanup_close_ int in = -1, out = -1;
	char buf[1 << 16];
	ssize_t n;

	if (link(src, dst) == 0)
		return 0;
	in = open(src, O_RDONLY | O_CLOEXEC);
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (in < 0 || out < 0)
		return sb_error_errno(err, errno, "copy '%s'", src);
	while ((n = SB_RETRY_EINTR(read(in, buf, sizeof(buf)))) > 0)
		if (SB_RETRY_EINTR(write(out, buf, (size_t)n)) != n)
			return sb_error_errno(err, errno, "copy to '%s'", dst);
	return n < 0 ? sb_error_errno(err, errno, "read '%s'", src) : 0;
}

void
agent_context_remove(const char *dir)
{
	_cleanup_free_ char *parent = sb_xstrdup(dir);
	char *slash = strrchr(parent, '/');
	_cleanup_close_ int pfd = -1;

	/* dir is <cache>/build-XXXXXX/context: remove the build-XXXXXX directory, nothing else. */
	if (slash == NULL || strcmp(slash, "/context") != 0)
		return;
	*slash = '\0';
	slash = strrchr(parent, '/');
	if (slash == NULL || strncmp(slash, "/build-", 7) != 0)
		return;
	*slash = '\0';
	pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd >= 0)
		(void)sb_remove_tree_at(pfd, slash + 1, NULL);
}

int
agent_fetch(const struct agent_info *ag, size_t *ret_n, struct sb_error **err)
{
	_cleanup_free_ char *cache = agent_cache_dir(), *npm_dir = sb_xasprintf("%s/npm", cache);
	const char *arch = agent_host_arch();
	size_t used = 0;

	if (sb_mkdir_p(cache, 0700, err) < 0 || sb_mkdir_p(npm_dir, 0700, err) < 0)
		return -1;
	for (size_t i = 0; i < ag->n_npm; i++) {
		if (ag->npm[i].arch != NULL && strcmp(ag->npm[i].arch, arch) != 0)
			continue;
		if (npm_fetch(&ag->npm[i], npm_dir, err) < 0)
			return -1;
		used++;
	}
	if (ag->n_npm > 0 && used == 0)
		return sb_error_set(err, ENOTSUP,
		    "the agent '%s' has no npm package for this host's architecture (%s)", ag->name,
		    arch);
	if (ret_n != NULL)
		*ret_n = used;
	return 0;
}

/*
 * Build contexts a run left behind (killed during a build) are removed on a later build,
 * once they are an hour old: a younger one may be another run's, building now.
 */
static void
remove_stale_contexts(const char *cache)
{
	_cleanup_close_ int fd = sb_open_dir(cache, NULL);
	time_t now = time(NULL);
	char **names = NULL;
	size_t n = 0;

	if (fd < 0 || sb_list_dir_at(fd, ".", 10000, &names, &n, NULL) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		struct stat st;

		if (strncmp(names[i], "build-", 6) == 0 &&
		    fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
		    st.st_mtime + 3600 < now)
			(void)sb_remove_tree_at(fd, names[i], NULL);
	}
	sb_strv_free(names);
}

int
agent_context(const struct agent_info *ag, char **ret_dir, bool *ret_tmp, struct sb_error **err)
{
	_cleanup_free_ char *cache = agent_cache_dir(), *npm_dir = NULL, *tmpl = NULL, *ctx = NULL;
	_cleanup_close_ int src_fd = -1, parent_fd = -1;
	const char *arch = agent_host_arch();
	struct sb_copy_opts copy = { .only_uid = (uid_t)-1, .chown_uid = (uid_t)-1,
		.chown_gid = (gid_t)-1, .max_files = 10000, .max_bytes = 64ULL << 20 };

	if (ag->n_npm == 0) {
		*ret_dir = sb_xstrdup(ag->dir);
		*ret_tmp = false;
		return 0;
	}
	npm_dir = sb_xasprintf("%s/npm", cache);
	if (agent_fetch(ag, NULL, err) < 0)
		return -1;
	remove_stale_contexts(cache);
	/* A context of our own, next to the cache so the tarballs are hard links, not copies. */
	tmpl = sb_xasprintf("%s/build-XXXXXX", cache);
	if (mkdtemp(tmpl) == NULL)
		return sb_error_errno(err, errno, "mkdtemp '%s'", tmpl);
	ctx = sb_xasprintf("%s/context", tmpl);
	src_fd = sb_open_dir(ag->dir, err);
	parent_fd = src_fd >= 0 ? sb_open_dir(tmpl, err) : -1;
	if (parent_fd < 0 || sb_copy_tree_at(src_fd, parent_fd, "context", &copy, NULL, err) < 0)
		goto fail;
	for (size_t i = 0; i < ag->n_npm; i++) {
		const struct agent_npm *p = &ag->npm[i];
		_cleanup_free_ char *dst = sb_xasprintf("%s/npm/%s.tgz", ctx, p->package);
		_cleanup_free_ char *src = sb_xasprintf("%s/%s.tgz", npm_dir, p->sha256);
		_cleanup_free_ char *dir = sb_xstrdup(dst);

		if (p->arch != NULL && strcmp(p->arch, arch) != 0)
			continue;
		*strrchr(dir, '/') = '\0';
		if (sb_mkdir_p(dir, 0755, err) < 0 || link_or_copy(src, dst, err) < 0)
			goto fail;
	}
	*ret_dir = TAKE_PTR(ctx);
	*ret_tmp = true;
	return 0;
fail:
	{
		_cleanup_free_ char *c = sb_xasprintf("%s/context", tmpl);

		agent_context_remove(c);
	}
	return sb_error_prefix(err, "the build context of the agent '%s'", ag->name);
}

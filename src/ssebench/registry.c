/* SPDX-License-Identifier: Apache-2.0 */
/*
 * registry.c: the run images in a registry (registry.h; docs/kubernetes.md, "Images").
 * docker tags the image by its ID and pushes it; the pin is the digest the push reported
 * for that tag, checked with the engine to name the same image ID.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>

#include "cli.h"
#include "docker.h"
#include "registry.h"
#include "sb/argv.h"
#include "sb/fs.h"
#include "sb/json.h"
#include "sb/limits.h"
#include "sb/mem.h"

static bool
lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/*
 * One host label at p: letters and digits with single inner '-' runs allowed, as DNS has
 * it. Returns where it ends, or NULL.
 */
static const char *
host_label(const char *p)
{
	if (!lower_alnum(*p))
		return NULL;
	while (lower_alnum(*p) || *p == '-')
		p++;
	return p[-1] == '-' ? NULL : p;
}

/*
 * One path component at p, as the distribution's name grammar has it: letters and digits,
 * separated by one '.', one or two '_', or any run of '-'. Returns where it ends, or NULL.
 */
static const char *
path_component(const char *p)
{
	for (;;) {
		if (!lower_alnum(*p))
			return NULL;
		while (lower_alnum(*p))
			p++;
		if (*p == '.' || (*p == '_' && p[1] != '_'))
			p++;
		else if (*p == '_')
			p += 2;
		else if (*p == '-')
			while (*p == '-')
				p++;
		else
			return p;
	}
}

int
registry_check(const char *r, struct sb_error **err)
{
	const char *p = r, *host_end;
	bool dotted = false;

	if (r == NULL || *r == '\0')
		return sb_error_set(err, EINVAL, "no registry given");
	if (strlen(r) > 200)
		return sb_error_set(err, EINVAL, "the registry name is longer than 200 bytes");
	/*
	 * The host: DNS labels, then maybe a port. Never a flag or a scheme: the name goes to
	 * docker's command line, and a pin must name one place. Docker takes a first part
	 * without '.' or ':' (and not "localhost") for a path on Docker Hub, and would push
	 * there: such a name, and Hub's own, are refused.
	 */
	for (;;) {
		if ((p = host_label(p)) == NULL)
			return sb_error_set(err, EINVAL,
			    "registry '%s': the host is not lower-case DNS labels "
			    "(HOST[:PORT][/PATH])",
			    r);
		if (*p != '.')
			break;
		dotted = true;
		p++;
	}
	host_end = p;
	if (*p == ':') {
		const char *port = ++p;
		unsigned long v = 0;

		while (*p >= '0' && *p <= '9' && p - port < 6)
			v = v * 10 + (unsigned long)(*p++ - '0');
		/* No leading zero: the pin must spell the address as k8s-up's hosts.toml does. */
		if (p == port || v == 0 || v > 65535 || (*p >= '0' && *p <= '9') || *port == '0')
			return sb_error_set(err, EINVAL,
			    "registry '%s': the port is not a number from 1 to 65535", r);
	}
	if (!dotted && p == host_end &&
	    !(host_end - r == 9 && strncmp(r, "localhost", 9) == 0))
		return sb_error_set(err, EINVAL,
		    "registry '%s': a host without '.' or a port would be a Docker Hub account; "
		    "name the registry (HOST.DOMAIN, HOST:PORT or localhost)",
		    r);
	{
		size_t hn = (size_t)(host_end - r);
		static const char *const hub[] = { "docker.io", "index.docker.io",
			"registry-1.docker.io", "registry.hub.docker.com" };

		for (size_t i = 0; i < SB_ARRAY_SIZE(hub); i++)
			if (hn == strlen(hub[i]) && strncmp(r, hub[i], hn) == 0)
				return sb_error_set(err, EINVAL,
				    "registry '%s': Docker Hub is not a place for run images", r);
	}
	while (*p == '/') {
		if ((p = path_component(p + 1)) == NULL)
			return sb_error_set(err, EINVAL,
			    "registry '%s': a path component is not lower-case letters and digits "
			    "joined by '.', '_', '__' or '-'",
			    r);
	}
	if (*p != '\0')
		return sb_error_set(err, EINVAL,
		    "registry '%s': unexpected '%c' (HOST[:PORT][/PATH], lower case, no scheme)", r,
		    *p);
	return 0;
}

char *
registry_name(const char *r, const char *local)
{
	/* Our images are named below $SSEBENCH_REGISTRY (default localhost/ssebench), a local
	 * name only: the part after it goes below r. */
	const char *ours = cli_registry();
	size_t n = strlen(ours);

	if (strncmp(local, ours, n) == 0 && local[n] == '/')
		local += n + 1;
	return sb_xasprintf("%s/%s", r, local);
}

/* The repository of a name: without its ":TAG" (a ':' after the last '/'). */
static char *
repository(const char *name)
{
	const char *slash = strrchr(name, '/'), *colon = strrchr(name, ':');

	if (colon != NULL && (slash == NULL || colon > slash))
		return sb_xstrndup(name, (size_t)(colon - name));
	return sb_xstrdup(name);
}

/* Whether s is "sha256:" and 64 lower-case hex digits. */
static bool
sha256_ref(const char *s)
{
	return strncmp(s, "sha256:", 7) == 0 && strlen(s + 7) == 64 &&
	    strspn(s + 7, "0123456789abcdef") == 64;
}

/*
 * The digest `docker push` said it pushed for `tag`: its line "TAG: digest: sha256:<64 hex>
 * size: N" (the last such line), as "sha256:<hex>", or NULL.
 */
static char *
pushed_digest(const char *out, const char *tag)
{
	_cleanup_free_ char *head = sb_xasprintf("%s: digest: ", tag);
	char *found = NULL;
	size_t n = strlen(head);

	for (const char *line = out; line != NULL && *line != '\0';) {
		const char *nl = strchr(line, '\n');

		if (strncmp(line, head, n) == 0) {
			_cleanup_free_ char *d = sb_xstrndup(line + n, 7 + 64);

			if (sha256_ref(d) && line[n + 71] == ' ') {
				free(found);
				found = TAKE_PTR(d);
			}
		}
		line = nl != NULL ? nl + 1 : NULL;
	}
	return found;
}

/* `docker image inspect` of name: its image ID, checked, or NULL (*err set). */
static char *
image_id(const char *name, struct sb_error **err)
{
	char *id = NULL;
	int code;

	if ((code = docker_image_id(name, &id, err)) < 0)
		return NULL;
	if (code != 0 || id == NULL || !sha256_ref(id)) {
		free(id);
		sb_error_set(err, ENOENT, "no local image %s", name);
		return NULL;
	}
	return id;
}

int
registry_push(const char *r, const char *local, char **ret_pinned, char **ret_id,
    struct sb_error **err)
{
	_cleanup_free_ char *remote = NULL, *repo = NULL, *id = NULL, *digest = NULL;
	_cleanup_free_ char *pinned = NULL, *pinned_id = NULL;
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	struct sb_cmd_result res;
	const char *slash = strrchr(local, '/'), *tag = strrchr(slash != NULL ? slash : local, ':');
	int code;

	if (registry_check(r, err) < 0)
		return -1;
	/* The push reports its digest by tag: the image must have one (ours all do). */
	if (tag == NULL || tag[1] == '\0')
		return sb_error_set(err, EINVAL, "cannot push %s: name the image with its tag, "
						 "as 'ssebench images list' shows it",
		    local);
	tag++;
	remote = registry_name(r, local);
	repo = repository(remote);
	/*
	 * The image is taken once, by ID: what is tagged and pushed is that image even if
	 * another build moves the local name meanwhile, and the pin is checked to name it.
	 */
	if ((id = image_id(local, err)) == NULL)
		return sb_error_prefix(err, "cannot push");
	sb_argv_pushl(&a, "tag", id, remote, NULL);
	if ((code = docker_output(&a, NULL, err)) < 0)
		return -1;
	if (code != 0)
		return sb_error_set(err, EIO, "docker tag %s %s failed", id, remote);
	sb_argv_release(&a);
	/*
	 * The pin is the digest this push reports for this tag. The engine's RepoDigests
	 * would also list the digests of earlier pushes of the same image (another registry
	 * at that address, other compression), which the registry may no longer hold. The
	 * client's output goes to stderr once it has ended: stdout is for what `images push`
	 * prints. An hour at most: a push that hangs must not hold a run forever.
	 */
	sb_argv_pushl(&a, "push", remote, NULL);
	if (docker_run(&a, DOCKER_CAPTURE, -1, NULL, 0, 3600000, &res, err) < 0)
		return -1;
	(void)!write(STDERR_FILENO, res.out.s ?: "", res.out.len);
	(void)!write(STDERR_FILENO, res.err.s ?: "", res.err.len);
	code = res.exit_code;
	digest = code == 0 ? pushed_digest(res.out.s ?: "", tag) : NULL;
	if (res.timed_out) {
		sb_cmd_result_release(&res);
		return sb_error_set(err, ETIMEDOUT, "docker push %s took more than an hour", remote);
	}
	sb_cmd_result_release(&res);
	if (code != 0)
		return sb_error_set(err, EIO, "docker push %s failed (status %d)", remote, code);
	if (digest == NULL)
		return sb_error_set(err, EIO, "docker push %s said no digest for it", remote);
	pinned = sb_xasprintf("%s@%s", repo, digest);
	if ((pinned_id = image_id(pinned, err)) == NULL)
		return sb_error_prefix(err, "the pushed digest");
	if (strcmp(pinned_id, id) != 0)
		return sb_error_set(err, EIO, "%s names image %s, not the one pushed (%s)", pinned,
		    pinned_id, id);
	/*
	 * The R/ references stay in the engine. Removing them here raced with the other runs
	 * of a job that push the same image (one's removal between another's tag and push
	 * failed that push), and could untag the local build itself when R is
	 * $SSEBENCH_REGISTRY. `docker image rm R/NAME:TAG` frees them.
	 */
	if (ret_pinned != NULL)
		*ret_pinned = TAKE_PTR(pinned);
	if (ret_id != NULL)
		*ret_id = TAKE_PTR(id);
	return 0;
}

/*
 * The images lock at `path` for registry r: its directory in *ret_dfd, its file name in
 * *ret_base, and its content in *ret_lock (a new, empty one when there is no file yet).
 * A link, a lock that is not one or one for another registry is an error. With exclusive,
 * the directory is flock()ed before the read, until *ret_dfd is closed: two `images push`
 * on one lock each add their entry to what the other wrote, and none is lost. The
 * directory, because the file itself is replaced by a rename (a lock on it would be on the
 * file the next writer no longer sees), and so that no other file is left beside it.
 */
static int
lock_load(const char *path, const char *r, bool exclusive, int *ret_dfd, const char **ret_base,
    json_t **ret_lock, struct sb_error **err)
{
	const char *slash = strrchr(path, '/'), *base = slash != NULL ? slash + 1 : path;
	_cleanup_free_ char *dir = slash == NULL ? sb_xstrdup(".")
	    : slash == path			     ? sb_xstrdup("/")
						     : sb_xstrndup(path, (size_t)(slash - path));
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(SB_JSON_FILE_MAX);
	_cleanup_close_ int dfd = -1;
	struct sb_error *e = NULL;
	json_t *lock = NULL, *images, *reg;

	if (*base == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return sb_error_set(err, EINVAL, "images lock '%s': not a file name", path);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return sb_error_errno(err, errno, "images lock '%s': cannot open %s", path, dir);
	if (exclusive && flock(dfd, LOCK_EX) < 0)
		return sb_error_errno(err, errno, "images lock '%s': cannot lock %s", path, dir);
	/* Never read through a link: the lock is replaced by a rename, which would leave the
	 * link's target behind, stale. */
	if (sb_read_file_at(dfd, base, SB_OPEN_NO_SYMLINKS, &b, &e) < 0) {
		if (sb_error_code(e) != ENOENT) {
			sb_error_prefix(&e, "images lock '%s'", path);
			if (err != NULL)
				*err = sb_error_take(&e);
			sb_error_release(&e);
			return -1;
		}
		sb_error_release(&e);
		lock = json_pack("{s:s, s:[]}", "registry", r, "images");
	} else if (sb_json_load(b.s, b.len, SB_JSON_FILE_MAX, &lock, err) < 0) {
		return sb_error_prefix(err, "images lock '%s'", path);
	}
	images = json_object_get(lock, "images");
	reg = json_object_get(lock, "registry");
	if (!json_is_object(lock) || !json_is_array(images) || !json_is_string(reg)) {
		json_decref(lock);
		return sb_error_set(err, EINVAL,
		    "images lock '%s' is not one ({\"registry\": R, \"images\": [...]})", path);
	}
	if (strcmp(json_string_value(reg), r) != 0) {
		int rc = sb_error_set(err, EINVAL,
		    "images lock '%s' is for registry '%s', not '%s': use another file", path,
		    json_string_value(reg), r);

		json_decref(lock);
		return rc;
	}
	*ret_dfd = TAKE_FD(dfd);
	*ret_base = base;
	*ret_lock = lock;
	return 0;
}

int
registry_lock_check(const char *path, const char *r, struct sb_error **err)
{
	_cleanup_close_ int dfd = -1;
	json_auto_t *lock = NULL;
	const char *base;

	return lock_load(path, r, false, &dfd, &base, &lock, err);
}

int
registry_lock_add(const char *path, const char *r, const char *local, const char *id,
    const char *pinned, struct sb_error **err)
{
	_cleanup_close_ int dfd = -1;
	json_auto_t *lock = NULL;
	const char *base;
	json_t *images, *e;
	size_t i;

	if (lock_load(path, r, true, &dfd, &base, &lock, err) < 0)
		return -1;
	images = json_object_get(lock, "images");
	/* One entry per image name: every older one goes. */
	for (i = json_array_size(images); i-- > 0;) {
		const json_t *n = json_object_get(json_array_get(images, i), "image");
		const char *name = json_string_value(n);

		if (name != NULL && strcmp(name, local) == 0)
			json_array_remove(images, i);
	}
	e = json_pack("{s:s, s:s, s:s}", "image", local, "id", id, "pinned", pinned);
	if (e == NULL || json_array_append_new(images, e) < 0)
		return sb_error_set(err, EINVAL, "images lock '%s': the entry for %s is not UTF-8",
		    path, local);
	return sb_json_write_atomic_at(dfd, base, lock, 0644, err);
}

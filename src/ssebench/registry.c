/* SPDX-License-Identifier: Apache-2.0 */
/*
 * registry.c: the run images in a registry (registry.h; docs/kubernetes.md, "Images").
 * docker tags and pushes; the pin is read back from the engine (RepoDigests), which holds
 * the digest the registry answered for the push.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

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

int
registry_check(const char *r, struct sb_error **err)
{
	const char *p = r, *slash;
	size_t n;

	if (r == NULL || *r == '\0')
		return sb_error_set(err, EINVAL, "no registry given");
	if (strlen(r) > 200)
		return sb_error_set(err, EINVAL, "the registry name is longer than 200 bytes");
	/* The host: a name or an address, then maybe a port. Never a flag or a scheme: the
	 * name goes to docker's command line, and a pin must name one place. */
	if (!lower_alnum(*p))
		return sb_error_set(err, EINVAL,
		    "registry '%s': it must start with a lower-case letter or digit (HOST[:PORT][/PATH])",
		    r);
	while (lower_alnum(*p) || *p == '.' || *p == '-')
		p++;
	if (p[-1] == '.' || p[-1] == '-')
		return sb_error_set(err, EINVAL, "registry '%s': the host ends with '%c'", r, p[-1]);
	if (*p == ':') {
		const char *port = ++p;

		while (*p >= '0' && *p <= '9')
			p++;
		if (p == port || p - port > 5)
			return sb_error_set(err, EINVAL, "registry '%s': the port is not a number", r);
	}
	while (*p == '/') {
		slash = ++p;
		while (lower_alnum(*p) || *p == '.' || *p == '_' || *p == '-')
			p++;
		n = (size_t)(p - slash);
		if (n == 0 || !lower_alnum(*slash))
			return sb_error_set(err, EINVAL,
			    "registry '%s': a path component is empty or does not start with a "
			    "lower-case letter or digit",
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

int
registry_push(const char *r, const char *local, char **ret_pinned, char **ret_id,
    struct sb_error **err)
{
	_cleanup_free_ char *remote = NULL, *repo = NULL, *out = NULL, *id = NULL;
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	json_auto_t *digests = NULL;
	struct sb_cmd_result res;
	const char *pinned = NULL;
	json_t *v;
	size_t i, n;
	int code;

	if (registry_check(r, err) < 0)
		return -1;
	remote = registry_name(r, local);
	repo = repository(remote);
	sb_argv_pushl(&a, "image", "inspect", "--format", "{{.Id}}", local, NULL);
	if (docker_output(&a, &id, err) != 0 || id == NULL || *id == '\0')
		return sb_error_set(err, ENOENT, "no local image %s to push", local);
	sb_argv_release(&a);
	sb_argv_pushl(&a, "tag", local, remote, NULL);
	if (docker_output(&a, NULL, err) != 0)
		return sb_error_set(err, EIO, "docker tag %s %s failed", local, remote);
	sb_argv_release(&a);
	/* The engine's progress is the user's to see (a 2 GB image takes a while), on stderr:
	 * stdout is for what `images push` prints. */
	sb_argv_pushl(&a, "push", remote, NULL);
	if (docker_run(&a, 0, STDERR_FILENO, NULL, 0, 0, &res, err) < 0)
		return -1;
	code = res.exit_code;
	sb_cmd_result_release(&res);
	if (code != 0)
		return sb_error_set(err, EIO, "docker push %s failed (status %d)", remote, code);
	sb_argv_release(&a);
	sb_argv_pushl(&a, "image", "inspect", "--format", "{{json .RepoDigests}}", remote, NULL);
	if (docker_output(&a, &out, err) != 0 || out == NULL ||
	    sb_json_load(out, strlen(out), SB_JSON_FILE_MAX, &digests, err) < 0)
		return sb_error_set(err, EIO, "cannot read the digests of %s", remote);
	/* "REPO@sha256:<64 hex>": the one of the repository just pushed. */
	n = strlen(repo);
	json_array_foreach (digests, i, v) {
		const char *d = json_string_value(v);

		if (d != NULL && strncmp(d, repo, n) == 0 && strncmp(d + n, "@sha256:", 8) == 0 &&
		    strlen(d + n + 8) == 64 && strspn(d + n + 8, "0123456789abcdef") == 64)
			pinned = d;
	}
	if (pinned == NULL)
		return sb_error_set(err, EIO, "docker push %s gave no digest for %s", remote, repo);
	if (ret_pinned != NULL)
		*ret_pinned = sb_xstrdup(pinned);
	if (ret_id != NULL)
		*ret_id = TAKE_PTR(id);
	return 0;
}

int
registry_lock_add(const char *path, const char *r, const char *local, const char *id,
    const char *pinned, struct sb_error **err)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int dfd = -1;
	json_auto_t *lock = NULL;
	const char *slash = strrchr(path, '/'), *base = slash != NULL ? slash + 1 : path;
	json_t *images, *e;
	size_t i;

	dir = slash == NULL ? sb_xstrdup(".")
	    : slash == path ? sb_xstrdup("/")
			    : sb_xstrndup(path, (size_t)(slash - path));
	if (*base == '\0')
		return sb_error_set(err, EINVAL, "images lock '%s': not a file name", path);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return sb_error_errno(err, errno, "images lock '%s': cannot open %s", path, dir);
	if (sb_json_load_file_at(dfd, base, SB_JSON_FILE_MAX, &lock, err) < 0) {
		if (sb_error_code(*err) != ENOENT)
			return sb_error_prefix(err, "images lock '%s'", path);
		sb_error_release(err);
		lock = json_pack("{s:s, s:[]}", "registry", r, "images");
	}
	images = json_object_get(lock, "images");
	if (!json_is_object(lock) || !json_is_array(images) ||
	    !json_is_string(json_object_get(lock, "registry")))
		return sb_error_set(err, EINVAL,
		    "images lock '%s' is not one ({\"registry\": R, \"images\": [...]})", path);
	if (strcmp(json_string_value(json_object_get(lock, "registry")), r) != 0)
		return sb_error_set(err, EINVAL,
		    "images lock '%s' is for registry '%s', not '%s': use another file", path,
		    json_string_value(json_object_get(lock, "registry")), r);
	json_array_foreach (images, i, e) {
		const char *name = json_string_value(json_object_get(e, "image"));

		if (name != NULL && strcmp(name, local) == 0) {
			json_array_remove(images, i);
			break;
		}
	}
	json_array_append_new(images,
	    json_pack("{s:s, s:s, s:s}", "image", local, "id", id, "pinned", pinned));
	return sb_json_write_atomic_at(dfd, base, lock, 0644, err);
}

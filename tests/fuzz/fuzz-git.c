/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-git.c: the readers of the git refs in an agent's .git (src/libsb/git.c: resolve_ref,
 * resolve_packed_ref), which the daemon runs on the agent's tree to find its base commit.
 *
 * Layout of an input: fields separated by NUL bytes: HEAD's contents, packed-refs' contents,
 * then pairs of a loose ref's name (below .git; made only where each part of it is a plain
 * name) and its contents. A field left out is a file that is not there. Each input gets a
 * fresh directory.
 *
 * Checked beyond memory safety: a resolved HEAD is 40 lower-case hex digits.
 */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sb/git.h"
#include "sb/mem.h"
#include "sb/tree.h"

#include "fuzz.h"

static char root[] = "/tmp/sb-fuzz-git.XXXXXX";

static void
remove_root(void)
{
	(void)sb_remove_tree_at(AT_FDCWD, root, NULL);
}

/* Write name (relative, '/'-separated) below dfd, making its directories; skip odd names. */
static void
put_file(int dfd, char *name, const char *data, size_t len)
{
	char *slash;
	int fd;

	if (*name == '\0' || strlen(name) > 200)
		return;
	for (char *p = name;; p = slash + 1) {
		slash = strchr(p, '/');
		if (slash != NULL)
			*slash = '\0';
		if (*p == '\0' || strcmp(p, ".") == 0 || strcmp(p, "..") == 0)
			return;
		if (slash == NULL)
			break;
		if (mkdirat(dfd, name, 0700) < 0 && errno != EEXIST)
			return;
		*slash = '/';
	}
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	(void)!write(fd, data, len);
	close(fd);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool init;
	const char *field[16];
	size_t len[16], n;
	char *copy, hex[41];
	int gitfd;

	if (!init) {
		if (mkdtemp(root) == NULL || sb_git_init(NULL) < 0)
			abort();
		atexit(remove_root);
		init = true;
	}
	n = fuzz_fields(data, size, &copy, field, len, SB_ARRAY_SIZE(field));
	(void)sb_remove_tree_at(AT_FDCWD, root, NULL);
	if (mkdir(root, 0700) < 0 || (gitfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		abort();
	if (n > 0)
		put_file(gitfd, (char[]){ "HEAD" }, field[0], len[0]);
	if (n > 1)
		put_file(gitfd, (char[]){ "packed-refs" }, field[1], len[1]);
	for (size_t i = 2; i + 1 < n; i += 2) {
		char *name = sb_xstrdup(field[i]);

		put_file(gitfd, name, field[i + 1], len[i + 1]);
		free(name);
	}
	if (sb_git_resolve_head(gitfd, hex) == 0 &&
	    (strlen(hex) != 40 || hex[strspn(hex, "0123456789abcdef")] != '\0'))
		abort();
	close(gitfd);
	free(copy);
	return 0;
}

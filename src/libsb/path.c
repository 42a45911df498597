/* SPDX-License-Identifier: Apache-2.0 */
/* path.c: lexical path checks (no file system access). */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "sb/buf.h"
#include "sb/limits.h"
#include "sb/mem.h"
#include "sb/path.h"

int
sb_path_check_relative(const char *p, struct sb_error **err)
{
	size_t depth = 0, len;
	const char *c, *slash;

	if (p == NULL || *p == '\0')
		return sb_error_set(err, EINVAL, "empty path");
	len = strlen(p);
	if (len > SB_PATH_MAX)
		return sb_error_set(err, ENAMETOOLONG, "path longer than %d bytes", SB_PATH_MAX);
	if (p[0] == '/')
		return sb_error_set(err, EINVAL, "absolute path (must be relative)");
	for (c = p; *c != '\0'; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return sb_error_set(err, EINVAL, "control character in path");
	for (c = p;; c = slash + 1) {
		size_t n;

		slash = strchr(c, '/');
		n = slash != NULL ? (size_t)(slash - c) : strlen(c);
		if (n == 0)
			return sb_error_set(err, EINVAL,
			    slash != NULL && slash[1] == '\0' ? "trailing slash in path"
							      : "empty component in path");
		if (n == 1 && c[0] == '.')
			return sb_error_set(err, EINVAL, "'.' component in path");
		if (n == 2 && c[0] == '.' && c[1] == '.')
			return sb_error_set(err, EINVAL, "'..' component in path (must stay inside)");
		if (++depth > SB_PATH_DEPTH_MAX)
			return sb_error_set(err, EINVAL, "path deeper than %d components",
			    SB_PATH_DEPTH_MAX);
		if (slash == NULL)
			return 0;
	}
}

bool
sb_path_is_safe_relative(const char *p)
{
	return sb_path_check_relative(p, NULL) == 0;
}

char *
sb_path_join(const char *a, const char *b)
{
	size_t la = strlen(a);

	if (la > 0 && a[la - 1] == '/')
		return sb_xasprintf("%s%s", a, b[0] == '/' ? b + 1 : b);
	return sb_xasprintf("%s%s%s", a, b[0] == '/' ? "" : "/", b);
}

char *
sb_path_normalize_abs(const char *p)
{
	struct sb_buf out = SB_BUF_INIT(SIZE_MAX / 4);
	const char *c = p, *slash;

	if (p == NULL || p[0] != '/')
		return NULL;
	for (;;) {
		size_t n;

		while (*c == '/')
			c++;
		if (*c == '\0')
			break;
		slash = strchr(c, '/');
		n = slash != NULL ? (size_t)(slash - c) : strlen(c);
		if (n == 1 && c[0] == '.') {
			/* nothing */
		} else if (n == 2 && c[0] == '.' && c[1] == '.') {
			char *last = out.len > 0 ? strrchr(out.s, '/') : NULL;

			if (last != NULL) {
				out.len = (size_t)(last - out.s);
				out.s[out.len] = '\0';
			}
		} else {
			(void)sb_buf_appendc(&out, '/', NULL);
			(void)sb_buf_append(&out, c, n, NULL);
		}
		c += n;
	}
	if (out.len == 0)
		(void)sb_buf_appendc(&out, '/', NULL);
	return sb_buf_detach(&out, NULL);
}

const char *
sb_path_below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return path[0] == '/' ? path + 1 : NULL;
	if (strncmp(path, dir, n) != 0)
		return NULL;
	if (path[n] == '\0')
		return path + n;
	if (path[n] == '/')
		return path + n + 1;
	return NULL;
}

const char *
sb_path_basename(const char *p)
{
	const char *s = strrchr(p, '/');

	return s != NULL ? s + 1 : p;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * path.h: lexical checks and operations on path strings. Nothing here touches the file
 * system; fs.h resolves paths safely.
 */
#ifndef SB_PATH_H
#define SB_PATH_H

#include "sb/common.h"
#include "sb/error.h"

/*
 * A relative path that stays where it is put: not empty, not absolute, no "." or ".."
 * component, no empty component ("a//b") or trailing slash, no control byte, at most
 * SB_PATH_MAX bytes and SB_PATH_DEPTH_MAX components. On failure *err says which rule.
 */
int sb_path_check_relative(const char *p, struct sb_error **err);
bool sb_path_is_safe_relative(const char *p);

/* a + "/" + b, without doubling a slash at the join. */
char *sb_path_join(const char *a, const char *b);

/*
 * Lexically normalise an absolute path: collapse "//", drop ".", resolve ".." (never
 * above "/"), drop a trailing slash. Returns NULL if p is not absolute.
 */
char *sb_path_normalize_abs(const char *p);

/*
 * If path equals dir or lies below it (both normalised absolute paths), return the part of
 * path below dir ("" when equal); otherwise NULL. Points into path, no allocation.
 */
const char *sb_path_below(const char *path, const char *dir);

/* The last component of p (after the last slash), pointing into p. */
const char *sb_path_basename(const char *p);

#endif

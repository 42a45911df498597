/* SPDX-License-Identifier: Apache-2.0 */
/*
 * argv.h: struct sb_argv, a NULL-terminated vector of strings for argv and envp
 * (docs/design.md, "Bounded buffers").
 *
 * v is never NULL and v[n] is always NULL, so a vector can go straight to execve. The
 * vector owns its strings.
 */
#ifndef SB_ARGV_H
#define SB_ARGV_H

#include <stdarg.h>

#include "sb/common.h"

struct sb_argv {
	char **v;
	size_t n;
	size_t cap; /* 0 while v points at the shared empty vector */
};

extern char *sb_argv_empty[1];

#define SB_ARGV_INIT { .v = sb_argv_empty, .n = 0, .cap = 0 }

void sb_argv_init(struct sb_argv *a);
void sb_argv_push(struct sb_argv *a, const char *s);
void sb_argv_pushf(struct sb_argv *a, const char *fmt, ...) _printf_(2, 3);
/* sb_argv_pushf with a va_list, for a caller's own printf-like function; ap is consumed. */
void sb_argv_vpushf(struct sb_argv *a, const char *fmt, va_list ap) _printf_(2, 0);
/* Push each string of the NULL-terminated list v. */
void sb_argv_pushv(struct sb_argv *a, const char *const *v);
/* Push several strings; the list ends with NULL. */
void sb_argv_pushl(struct sb_argv *a, ...) __attribute__((sentinel));
/* The same from a va_list of const char * ending in NULL (for functions that take one). */
void sb_argv_vpushl(struct sb_argv *a, va_list ap);
void sb_argv_release(struct sb_argv *a);
/* Hand the vector to the caller (free each string, then the array); a becomes empty. */
char **sb_argv_detach(struct sb_argv *a);

/*
 * Environment helpers: set NAME=value, replacing an existing NAME entry; look one up.
 * name must not contain '='.
 */
void sb_env_set(struct sb_argv *env, const char *name, const char *value);
const char *sb_env_get(const struct sb_argv *env, const char *name);
/* A name a shell takes for a variable: [A-Za-z_][A-Za-z0-9_]*. */
bool sb_env_name_valid(const char *s);
/* Remove NAME=... from env, if there. */
void sb_env_unset(struct sb_argv *env, const char *name);

/* Free a vector returned by sb_argv_detach. */
void sb_strv_free(char **v);

#define _cleanup_argv_ _cleanup_(sb_argv_release)

#endif

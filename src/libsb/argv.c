/* SPDX-License-Identifier: Apache-2.0 */
/* argv.c: struct sb_argv, the NULL-terminated string vector. */
#include "config.h"

#include <stdarg.h>
#include <string.h>

#include "sb/argv.h"
#include "sb/mem.h"

char *sb_argv_empty[1];

void
sb_argv_init(struct sb_argv *a)
{
	a->v = sb_argv_empty;
	a->n = 0;
	a->cap = 0;
}

/* Take ownership of s. */
static void
argv_push_owned(struct sb_argv *a, char *s)
{
	if (a->n + 2 > a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 8;

		if (a->cap == 0) {
			a->v = sb_xreallocarray(NULL, cap, sizeof(char *));
		} else {
			a->v = sb_xreallocarray(a->v, cap, sizeof(char *));
		}
		a->cap = cap;
	}
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

void
sb_argv_push(struct sb_argv *a, const char *s)
{
	argv_push_owned(a, sb_xstrdup(s));
}

void
sb_argv_pushf(struct sb_argv *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sb_argv_vpushf(a, fmt, ap);
	va_end(ap);
}

void
sb_argv_vpushf(struct sb_argv *a, const char *fmt, va_list ap)
{
	argv_push_owned(a, sb_xvasprintf(fmt, ap));
}

void
sb_argv_pushv(struct sb_argv *a, const char *const *v)
{
	for (; v != NULL && *v != NULL; v++)
		sb_argv_push(a, *v);
}

void
sb_argv_vpushl(struct sb_argv *a, va_list ap)
{
	const char *s;

	while ((s = va_arg(ap, const char *)) != NULL)
		sb_argv_push(a, s);
}

void
sb_argv_pushl(struct sb_argv *a, ...)
{
	va_list ap;

	va_start(ap, a);
	sb_argv_vpushl(a, ap);
	va_end(ap);
}

void
sb_argv_release(struct sb_argv *a)
{
	if (a->cap != 0) {
		for (size_t i = 0; i < a->n; i++)
			free(a->v[i]);
		free(a->v);
	}
	sb_argv_init(a);
}

char **
sb_argv_detach(struct sb_argv *a)
{
	char **v = a->v;

	if (a->cap == 0)
		v = sb_xcalloc(1, sizeof(char *));
	sb_argv_init(a);
	return v;
}

void
sb_strv_free(char **v)
{
	if (v == NULL)
		return;
	for (char **p = v; *p != NULL; p++)
		free(*p);
	free(v);
}

/* Index of the NAME= entry, or -1. */
static ssize_t
env_find(const struct sb_argv *env, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < env->n; i++)
		if (strncmp(env->v[i], name, len) == 0 && env->v[i][len] == '=')
			return (ssize_t)i;
	return -1;
}

void
sb_env_set(struct sb_argv *env, const char *name, const char *value)
{
	ssize_t i = env_find(env, name);

	if (i < 0) {
		sb_argv_pushf(env, "%s=%s", name, value);
		return;
	}
	free(env->v[i]);
	env->v[i] = sb_xasprintf("%s=%s", name, value);
}

bool
sb_env_name_valid(const char *s)
{
	if (s == NULL || !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return false;
	for (s++; *s != '\0'; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
			(*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

void
sb_env_unset(struct sb_argv *env, const char *name)
{
	ssize_t i = env_find(env, name);

	if (i < 0)
		return;
	free(env->v[i]);
	memmove(&env->v[i], &env->v[i + 1], (env->n - (size_t)i) * sizeof(*env->v));
	env->n--;
}

const char *
sb_env_get(const struct sb_argv *env, const char *name)
{
	ssize_t i = env_find(env, name);

	return i < 0 ? NULL : env->v[i] + strlen(name) + 1;
}

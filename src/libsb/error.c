/* SPDX-License-Identifier: Apache-2.0 */
/* error.c: struct sb_error, the one way libsb reports a failure. */
#include "config.h"

#include <stdarg.h>
#include <string.h>

#include "sb/error.h"
#include "sb/mem.h"

static int
error_setv(struct sb_error **err, int code, bool with_errno, const char *fmt, va_list ap)
{
	struct sb_error *e;
	char *msg;

	if (err == NULL)
		return -1;
	if (code == 0)
		code = EIO;
	msg = sb_xvasprintf(fmt, ap);
	if (with_errno) {
		char *full = sb_xasprintf("%s: %s", msg, strerror(code));
		free(msg);
		msg = full;
	}
	sb_error_release(err);
	e = sb_xmalloc(sizeof(*e));
	e->code = code;
	e->msg = msg;
	*err = e;
	return -1;
}

int
sb_error_set(struct sb_error **err, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_setv(err, code, false, fmt, ap);
	va_end(ap);
	return -1;
}

int
sb_error_errno(struct sb_error **err, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_setv(err, code, true, fmt, ap);
	va_end(ap);
	return -1;
}

int
sb_error_prefix(struct sb_error **err, const char *fmt, ...)
{
	char *prefix, *msg;
	va_list ap;

	if (err == NULL || *err == NULL)
		return -1;
	va_start(ap, fmt);
	prefix = sb_xvasprintf(fmt, ap);
	va_end(ap);
	msg = sb_xasprintf("%s: %s", prefix, (*err)->msg);
	free(prefix);
	free((*err)->msg);
	(*err)->msg = msg;
	return -1;
}

int
sb_error_code(const struct sb_error *err)
{
	return err != NULL ? err->code : 0;
}

const char *
sb_error_message(const struct sb_error *err)
{
	return err != NULL ? err->msg : "";
}

void
sb_error_release(struct sb_error **err)
{
	if (err == NULL || *err == NULL)
		return;
	free((*err)->msg);
	free(*err);
	*err = NULL;
}

struct sb_error *
sb_error_take(struct sb_error **src)
{
	return TAKE_PTR(*src);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* json.c: jansson wrappers that enforce our limits. */
#include "config.h"

#include <stdarg.h>
#include <string.h>

#include "sb/buf.h"
#include "sb/fs.h"
#include "sb/json.h"
#include "sb/limits.h"
#include "sb/mem.h"

size_t
sb_json_depth(const json_t *root)
{
	/* An explicit stack of (value, depth) pairs: a hostile document cannot overflow ours. */
	struct frame {
		const json_t *v;
		size_t depth;
	};
	struct frame *stack = NULL;
	size_t n = 0, cap = 0, max = 0;

	if (root == NULL)
		return 0;
	stack = sb_xreallocarray(NULL, cap = 64, sizeof(*stack));
	stack[n++] = (struct frame){ root, 0 };
	while (n > 0) {
		struct frame f = stack[--n];
		size_t children = json_is_object(f.v) ? json_object_size(f.v)
			: json_is_array(f.v)	      ? json_array_size(f.v)
						      : 0;
		const char *key;
		json_t *child;
		size_t i;

		if (!json_is_object(f.v) && !json_is_array(f.v))
			continue;
		if (f.depth + 1 > max)
			max = f.depth + 1;
		if (n + children > cap) {
			while (n + children > cap)
				cap *= 2;
			stack = sb_xreallocarray(stack, cap, sizeof(*stack));
		}
		if (json_is_object(f.v)) {
			json_object_foreach ((json_t *)f.v, key, child)
				stack[n++] = (struct frame){ child, f.depth + 1 };
		} else {
			json_array_foreach (f.v, i, child)
				stack[n++] = (struct frame){ child, f.depth + 1 };
		}
	}
	free(stack);
	return max;
}

int
sb_json_load(const char *data, size_t len, size_t max, json_t **ret, struct sb_error **err)
{
	json_error_t jerr;
	json_t *v;

	if (len > max)
		return sb_error_set(err, EMSGSIZE, "JSON larger than %zu bytes", max);
	/* JSON_ALLOW_NUL is off: a NUL inside a string is an error, not a truncation. */
	v = json_loadb(data, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (v == NULL)
		return sb_error_set(err, EINVAL, "invalid JSON at line %d, column %d: %s",
		    jerr.line, jerr.column, jerr.text);
	if (sb_json_depth(v) > SB_JSON_DEPTH_MAX) {
		json_decref(v);
		return sb_error_set(err, EINVAL, "JSON nested deeper than %d levels",
		    SB_JSON_DEPTH_MAX);
	}
	*ret = v;
	return 0;
}

int
sb_json_load_file_at(int dirfd, const char *rel, size_t max, json_t **ret,
    struct sb_error **err)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(max);

	if (sb_read_file_at(dirfd, rel, 0, &b, err) < 0)
		return -1;
	if (sb_json_load(b.s, b.len, max, ret, err) < 0)
		return sb_error_prefix(err, "'%s'", rel);
	return 0;
}

int
sb_json_unpack(json_t *root, struct sb_error **err, const char *fmt, ...)
{
	json_error_t jerr;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = json_vunpack_ex(root, &jerr, JSON_STRICT, fmt, ap);
	va_end(ap);
	if (r < 0)
		return sb_error_set(err, EINVAL, "%s", jerr.text);
	return 0;
}

char *
sb_json_dumps(const json_t *v, size_t flags)
{
	char *s = json_dumps(v, flags | JSON_ENCODE_ANY);

	if (s == NULL)
		sb_oom(0);
	return s;
}

int
sb_json_write_atomic_at(int dirfd, const char *name, const json_t *v, mode_t mode,
    struct sb_error **err)
{
	_cleanup_free_ char *s = sb_json_dumps(v, JSON_INDENT(2));
	_cleanup_free_ char *withnl = sb_xasprintf("%s\n", s);

	return sb_write_file_atomic_at(dirfd, name, withnl, strlen(withnl), mode, err);
}

json_t *
sb_json_string_or_null(const char *s)
{
	json_t *v;

	if (s == NULL)
		return json_null();
	v = json_string(s);
	if (v == NULL) {
		/* Not UTF-8 (a file name, a tool's output): keep it readable, bytes escaped. */
		_cleanup_free_ char *esc = sb_escape(s);

		v = json_string(esc);
		if (v == NULL)
			sb_oom(strlen(esc));
	}
	return v;
}

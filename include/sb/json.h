/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json.h: jansson with our limits (docs/design.md, "Parsing untrusted input").
 *
 * Loading always rejects duplicate keys (the second value would silently win otherwise),
 * checks the nesting depth against SB_JSON_DEPTH_MAX, and refuses a body larger than the
 * caller's cap. Unpacking is strict: "!" is implied for every object, so an unknown key is
 * an error rather than ignored. Use jansson's own json_auto_t for cleanup.
 */
#ifndef SB_JSON_H
#define SB_JSON_H

#include <jansson.h>

#include "sb/common.h"
#include "sb/error.h"


/* Parse len bytes (at most max) as one JSON value. *ret gets a new reference. */
int sb_json_load(const char *data, size_t len, size_t max, json_t **ret, struct sb_error **err);

/* Read the regular file rel below dirfd (see fs.h) and parse it, capped at max bytes. */
int sb_json_load_file_at(int dirfd, const char *rel, size_t max, json_t **ret,
    struct sb_error **err);

/*
 * json_unpack_ex with JSON_STRICT: every object in fmt must name all of its keys, unless
 * its format says otherwise with '*'. Returns -1 with the reason on mismatch.
 */
int sb_json_unpack(json_t *root, struct sb_error **err, const char *fmt, ...);

/* Depth of the deepest nesting in v (a scalar has depth 0). Iterative; no recursion limit. */
size_t sb_json_depth(const json_t *v);

/* Serialise; the caller frees. JSON_ENSURE_ASCII is not set: output is UTF-8. */
char *sb_json_dumps(const json_t *v, size_t flags);

/* Serialise with two-space indent and a final newline, and replace `name` in dirfd. */
int sb_json_write_atomic_at(int dirfd, const char *name, const json_t *v, mode_t mode,
    struct sb_error **err);

/*
 * A JSON string for s, or JSON null when s is NULL. Bytes that are not UTF-8 are escaped
 * (\xNN) instead of failing.
 */
json_t *sb_json_string_or_null(const char *s);

#endif

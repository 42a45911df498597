/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-inspect.c: the `runs` commands' reading of `docker inspect` (src/ssebench/
 * containers.c:containers_entries). An input is the engine's output: a JSON array of
 * containers.
 *
 * Checked beyond memory safety: one entry per container, each with a known state, and no
 * entry holds a string of the container's environment (Config.Env carries the run's token:
 * `runs list` must never show it).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sb/json.h"

#include "../../src/ssebench/containers.h"
#include "fuzz.h"

/* Does any string (or key) below v equal s, or with within, hold s? */
static bool
holds_string(const json_t *v, const char *s, bool within)
{
	const char *k;
	json_t *m;
	size_t i;

	if (json_is_string(v))
		return within ? strstr(json_string_value(v), s) != NULL
			      : strcmp(json_string_value(v), s) == 0;
	if (json_is_array(v)) {
		json_array_foreach (v, i, m)
			if (holds_string(m, s, within))
				return true;
	}
	if (json_is_object(v)) {
		json_object_foreach ((json_t *)v, k, m)
			if ((within ? strstr(k, s) != NULL : strcmp(k, s) == 0) ||
			    holds_string(m, s, within))
				return true;
	}
	return false;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *in = NULL, *out, *rest, *c, *e;
	size_t i;

	if (sb_json_load((const char *)data, size, SIZE_MAX, &in, NULL) < 0)
		return 0;
	out = containers_entries(in);
	if (json_array_size(out) != (json_is_array(in) ? json_array_size(in) : 0))
		abort();
	json_array_foreach (out, i, e) {
		const char *st = json_string_value(json_object_get(e, "state"));

		if (st == NULL || (strcmp(st, "running") != 0 && strcmp(st, "created") != 0 &&
				      strcmp(st, "exited") != 0 && strcmp(st, "unknown") != 0))
			abort();
	}
	/* A string of a Config.Env found in the entries must have come from elsewhere (held
	 * in another member: a Name "/X=1" gives the entry the name "X=1"). */
	rest = json_deep_copy(in);
	json_array_foreach (rest, i, c)
		json_object_del(json_object_get(c, "Config"), "Env");
	json_array_foreach (in, i, c) {
		json_t *env = json_object_get(json_object_get(c, "Config"), "Env"), *v;
		size_t k;

		json_array_foreach (env, k, v)
			/* An environment entry is NAME=value; the entries' own words have no '='. */
			if (json_is_string(v) && strchr(json_string_value(v), '=') != NULL &&
			    !holds_string(rest, json_string_value(v), true) &&
			    holds_string(out, json_string_value(v), false))
				abort();
	}
	json_decref(rest);
	json_decref(out);
	json_decref(in);
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* containers.c: run entries from `docker inspect` (containers.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sb/json.h"
#include "sb/mem.h"

#include "containers.h"

const char *
container_label(const json_t *c, const char *name)
{
	return json_string_value(
	    json_object_get(json_object_get(json_object_get(c, "Config"), "Labels"), name));
}

/* A member that must be a number, else null. */
static json_t *
number_or_null(const json_t *v)
{
	return json_is_number(v) ? json_copy((json_t *)v) : json_null();
}

/* A run entry in upstream's shape (never the container's environment). */
static json_t *
run_entry(const json_t *c)
{
	json_t *labels = json_object(), *src = json_object_get(json_object_get(c, "Config"), "Labels");
	json_t *state = json_object_get(c, "State");
	const char *st = json_string_value(json_object_get(state, "Status"));
	const char *name = json_string_value(json_object_get(c, "Name"));
	const char *mode = container_label(c, "ssebench.mode");
	const char *k;
	json_t *v;

	json_object_foreach (src, k, v)
		if (strncmp(k, "ssebench.", 9) == 0 && json_is_string(v))
			json_object_set(labels, k, v);
	/* Docker names a container "/name": the slash goes, if it is there. */
	if (name != NULL && name[0] == '/')
		name++;
	if (st == NULL || !(strcmp(st, "running") == 0 || strcmp(st, "created") == 0 ||
			      strcmp(st, "exited") == 0))
		st = "unknown";
	return json_pack("{s:o, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:o, s:o, s:s, s:o}",
	    "run_id", sb_json_string_or_null(container_label(c, "ssebench.run")), "name",
	    sb_json_string_or_null(name), "state", st, "exit_code",
	    number_or_null(json_object_get(state, "ExitCode")), "image",
	    sb_json_string_or_null(
		json_string_value(json_object_get(json_object_get(c, "Config"), "Image"))),
	    "created_at", sb_json_string_or_null(json_string_value(json_object_get(c, "Created"))),
	    "task", sb_json_string_or_null(container_label(c, "ssebench.task-id")), "model",
	    sb_json_string_or_null(container_label(c, "ssebench.model")), "agent",
	    sb_json_string_or_null(container_label(c, "ssebench.agent")), "reference_run",
	    container_label(c, "ssebench.reference-run") != NULL, "results_dir",
	    sb_json_string_or_null(container_label(c, "ssebench.results")), "labels", labels,
	    "mode", mode != NULL ? mode : "sandbox", "role",
	    sb_json_string_or_null(container_label(c, "ssebench.sidecar-role")));
}

static int
cmp_created_desc(const void *a, const void *b)
{
	const char *x = json_string_value(json_object_get(*(json_t *const *)a, "created_at"));
	const char *y = json_string_value(json_object_get(*(json_t *const *)b, "created_at"));

	return strcmp(y ? y : "", x ? x : "");
}

json_t *
containers_entries(const json_t *inspect)
{
	size_t n = json_array_size(inspect), i;
	json_t **v = sb_xcalloc(n ? n : 1, sizeof(*v)), *out = json_array(), *c;

	json_array_foreach (inspect, i, c)
		v[i] = run_entry(c);
	qsort(v, n, sizeof(*v), cmp_created_desc);
	for (i = 0; i < n; i++)
		json_array_append_new(out, v[i]);
	free(v);
	return out;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * containers.h: what `docker inspect` says of a run's containers, as the `runs` commands
 * show it (upstream's run entries: docs/upstream.md, "Command line"). The engine's output is read
 * as untrusted JSON: a member missing or of another type gives null in the entry, never a lost
 * container.
 */
#ifndef SSEBENCH_CONTAINERS_H
#define SSEBENCH_CONTAINERS_H

#include <jansson.h>

/* A label of an inspected container (Config.Labels), or NULL. */
const char *container_label(const json_t *c, const char *name);

/*
 * One run entry per element of the inspect array (a new array, newest first by
 * created_at): run_id, name, state (running, created, exited or unknown), exit_code, image,
 * created_at, task, model, agent, reference_run, results_dir, the ssebench.* labels, mode
 * and role. Never the container's environment (it holds the run's token).
 */
json_t *containers_entries(const json_t *inspect);

#endif

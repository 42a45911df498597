/* SPDX-License-Identifier: Apache-2.0 */
/* run.h: what `ssebench run` and the `runs` commands share. */
#ifndef SSEBENCH_RUN_H
#define SSEBENCH_RUN_H

#include <jansson.h>

#include "sb/common.h"
#include "sb/error.h"

/* UTC "YYYYMMDD-HHMMSS-xxxxxx" (6 random hex digits). */
char *run_id_new(void);

/* The results root: $SSEBENCH_RESULTS, else ./results. */
const char *results_root(void);

/*
 * The verdict of a patch_result (upstream §5.4): "error" when no check ran, "failed" when
 * a check that ran failed, "passed" otherwise.
 */
const char *run_status_of(const json_t *patch_result);

/* A result for a container that produced none. */
json_t *run_error_result(const char *why);

/*
 * The seccomp profile of a run container that runs task scripts (seccomp.c): Docker's
 * default refuses what the runner's sandbox needs. A new reference.
 */
json_t *seccomp_profile_json(void);

#endif

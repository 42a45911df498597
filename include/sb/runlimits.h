/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runlimits.h: the CPU, memory and process limits every run container gets.
 *
 * One table holds each limit's setting, Docker flag, default and accepted range; the CLI
 * resolves a user's value through it and tools/limits-doc prints docs/limits.md from it, so
 * the documented limits are the enforced ones (docs/integrity.md, "Resource limits": the
 * limits page is generated from the same constants the runner uses).
 *
 * Fail closed: a value that is empty, not a number, zero, negative, NaN, infinite or out of
 * range falls back to the default, never to "unlimited" (Docker reads 0 or -1 as no limit).
 */
#ifndef SB_RUNLIMITS_H
#define SB_RUNLIMITS_H

#include <stdbool.h>

enum sb_run_limit {
	SB_RUN_LIMIT_MEMORY,
	SB_RUN_LIMIT_CPUS,
	SB_RUN_LIMIT_PIDS,
	SB_RUN_LIMIT_DISK,
	SB_RUN_LIMIT_COUNT
};

struct sb_run_limit_spec {
	const char *setting; /* environment variable or .env key, e.g. SSEBENCH_MEMORY */
	const char *flag;    /* the docker run flag it becomes ("" when it is not one) */
	const char *def;     /* the default, as the user would write it */
	double min, max;     /* accepted range, in the unit below */
	const char *unit;    /* "bytes", "CPUs", "processes" */
	const char *what;    /* one line for the documentation */
};

/* The defaults, by name (tools/limits-doc and the tests read them from the table). */
#define SB_RUN_MEMORY_DEFAULT "8g"
#define SB_RUN_CPUS_DEFAULT   "2"
#define SB_RUN_PIDS_DEFAULT   "4096"
#define SB_RUN_DISK_DEFAULT   "8g"

/* ssebench run --timeout: the agent phase's wall-clock limit (grading gets more, below). */
#define SB_RUN_TIMEOUT_DEFAULT_S 3600
#define SB_RUN_TIMEOUT_MAX_S	 (7 * 24 * 3600)

const struct sb_run_limit_spec *sb_run_limit_spec(enum sb_run_limit which);

/*
 * The value to give Docker for `value` (NULL: not set): the canonical form of an accepted
 * value (memory in bytes, CPUs as a decimal, pids as an integer), or the default's when the
 * value is rejected, with *ret_fell_back set (may be NULL). Never fails; never unlimited.
 */
char *sb_run_limit_resolve(enum sb_run_limit which, const char *value, bool *ret_fell_back);

#endif

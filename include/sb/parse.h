/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parse.h: bounded parsing of numbers and identifiers (docs/design.md, "Parsing untrusted
 * input").
 *
 * Every integer that comes from outside goes through sb_parse_u64/sb_parse_i64 with an
 * explicit range: no sign where none is allowed, no trailing junk, no empty string, no
 * leading whitespace, no overflow. The identifier checks are the exact grammars of the
 * upstream contract.
 */
#ifndef SB_PARSE_H
#define SB_PARSE_H

#include <stdint.h>

#include "sb/common.h"
#include "sb/error.h"

/* Decimal only. On success *ret is written; on failure it is untouched. */
int sb_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *ret, struct sb_error **err);
int sb_parse_i64(const char *s, int64_t min, int64_t max, int64_t *ret, struct sb_error **err);

/*
 * A finite floating-point number in [min, max]. "nan", "inf", hex floats and trailing junk
 * are refused.
 */
int sb_parse_double(const char *s, double min, double max, double *ret, struct sb_error **err);

/*
 * Task id, upstream grammar: runs of ASCII letters and digits separated by '.', '_', "__"
 * or one or more '-'; at most SB_TASK_ID_MAX bytes. ("a-b", "a--b", "a__b", "x.y_z" are
 * ids; "-a", "a_", "a___b", "a..b", "a b" are not.)
 */
bool sb_task_id_valid(const char *s);

/* Run id: [A-Za-z0-9][A-Za-z0-9_.-]*, 1..SB_RUN_ID_MAX bytes, and not "latest". */
bool sb_run_id_valid(const char *s);
/* A job id: a run id that starts with "job-" (job-<UTC stamp>-<hex>). */
bool sb_job_id_valid(const char *s);

/* A plain name (agent, model, dataset): [a-z0-9][a-z0-9._-]*, at most SB_NAME_MAX. */
bool sb_name_valid(const char *s);

/*
 * Levenshtein distance between two short strings (for "did you mean"): SIZE_MAX when
 * either is 63 bytes or longer.
 */
size_t sb_edit_distance(const char *a, const char *b);

/*
 * A bounded number from the environment: 0 when name is unset or empty (*ret untouched,
 * the caller's default stands), 1 with *ret set when it is a number in [min, max], -1 with
 * err ("NAME='value': why") otherwise; the caller says so and keeps its default, never
 * "unlimited". secure_getenv: a set-id program ignores it.
 */
int sb_env_u64(const char *name, uint64_t min, uint64_t max, uint64_t *ret, struct sb_error **err);

/*
 * The name closest to key within two edits (for "did you mean"), or NULL: of n names, or
 * up to the first NULL (n = SIZE_MAX for a NULL-terminated list). The first of equals wins.
 */
const char *sb_closest(const char *key, const char *const *names, size_t n);

/* Lower-case ASCII copy (malloc'd). */
char *sb_ascii_lower(const char *s);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * glob.h: path patterns for the paths a task protects (config.yaml `protected:`).
 *
 * A pattern is matched against a whole relative path ("tests/unit/a.c"), one '/'-separated
 * component against one pattern component:
 *   *       any run of bytes within a component (a leading '.' included)
 *   ?       one byte within a component
 *   [...]   a byte of the set ([a-z], [!0-9]), within a component
 *   **      as a whole component: any number of components, none included
 *   dir/    a trailing slash: dir itself and everything below it
 * No other byte is special; there is no escape. The patterns come from the task (trusted);
 * the paths come from the agent's patch (hostile): matching is bounded by the pattern's
 * size times the path's, whatever the path holds.
 */
#ifndef SB_GLOB_H
#define SB_GLOB_H

#include "sb/common.h"
#include "sb/error.h"

#define SB_GLOB_MAX	  256 /* bytes of a pattern */
#define SB_GLOB_PARTS_MAX 32  /* components of a pattern */
#define SB_GLOB_STARS_MAX 8   /* '*' in a pattern, '**' counted once */

/* Is the pattern well formed (not empty, not absolute, no "." or ".." component, no empty
 * component, a closed [...], within the limits)? On failure *err says why. */
int sb_glob_check(const char *pattern, struct sb_error **err);

/* Does the relative path match the pattern (checked with sb_glob_check)? */
bool sb_glob_match(const char *pattern, const char *path);

#endif

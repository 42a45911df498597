/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prompt.h: the task prompt an agent is given (upstream's `sse.prompt`: docs/upstream.md,
 * "The SDK and the task prompt").
 *
 * It is built from the daemon's public view (GET /project) and nothing else, so it can never
 * carry the reference patch, the hidden tests, the PoC files, the run script, the upstream
 * commits or links: the daemon does not serve them on the agent's side. The same view gives
 * the same bytes, every time (tests/unit/test-prompt.c holds a snapshot).
 */
#ifndef SB_PROMPT_H
#define SB_PROMPT_H

#include <jansson.h>

#include "sb/common.h"
#include "sb/error.h"

#define SB_PROMPT_MAX (4 * 1024 * 1024) /* bytes of one prompt */

/*
 * The Markdown prompt for the public view `project` (an object with id, project, language,
 * source, task_description {issue, crash_report, bug_description}, build_script,
 * test_script). Fails with EINVAL when project, language or source is missing, and with
 * EMSGSIZE past SB_PROMPT_MAX. Returns a malloc'd string.
 */
char *sb_prompt_build(const json_t *project, struct sb_error **err);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-config.c: the YAML loader and the task config schema on arbitrary bytes. */
#include "config.h"

#include "sb/diag.h"
#include "sb/json.h"
#include "sb/task.h"

#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sb_diags d = SB_DIAGS_INIT;
	struct sb_task_config *c;
	struct sb_task_path_ref *refs = NULL;
	size_t n;
	json_t *j;

	c = sb_task_config_parse((const char *)data, size, "config.yaml", &d);
	/* Whatever was parsed must be usable by every consumer of a config. */
	(void)sb_task_checks(c);
	n = sb_task_config_paths(c, &refs);
	sb_task_path_refs_free(refs, n);
	j = sb_task_config_to_json(c);
	json_decref(j);
	sb_task_config_free(c);
	sb_diags_release(&d);
	return 0;
}

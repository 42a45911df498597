/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-dockerfile.c: the Dockerfile reader and variable expansion on arbitrary bytes. */
#include "config.h"

#include "sb/argv.h"
#include "sb/diag.h"
#include "sb/dockerfile.h"

#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sb_diags d = SB_DIAGS_INIT;
	struct sb_argv vars = SB_ARGV_INIT;
	struct sb_dockerfile *df;

	df = sb_dockerfile_parse((const char *)data, size, "Dockerfile", &d);
	sb_env_set(&vars, "SSEBENCH_REGISTRY", "localhost/ssebench");
	for (size_t i = 0; i < df->n; i++) {
		char *s = sb_dockerfile_expand(df->v[i].args, &vars, df->escape, NULL);

		free(s);
	}
	sb_dockerfile_free(df);
	sb_argv_release(&vars);
	sb_diags_release(&d);
	return 0;
}

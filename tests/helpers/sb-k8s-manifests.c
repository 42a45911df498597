/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sb-k8s-manifests: print the manifests (a List) of one of the runs of
 * tests/unit/k8s-fixtures.h, for tests/integration/t0185-k8s-manifests.sh to give kubectl.
 * Usage: sb-k8s-manifests dummy|reference|open
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "sb/error.h"
#include "sb/json.h"

#include "../unit/k8s-fixtures.h"

int
main(int argc, char **argv)
{
	struct k8s_run run = K8S_RUN_INIT;
	struct k8s_settings st = K8S_SETTINGS_INIT;
	struct sb_error *err = NULL;
	json_t *list = NULL;
	char *out;
	int rc = 1;

	if (argc != 2 || !k8s_fixture_run(argv[1], &run)) {
		fprintf(stderr, "usage: sb-k8s-manifests dummy|reference|open\n");
		return 2;
	}
	k8s_fixture_settings(&st);
	if (k8s_run_manifests(&run, &st, &list, &err) < 0) {
		fprintf(stderr, "sb-k8s-manifests: %s\n", sb_error_message(err));
		sb_error_release(&err);
	} else {
		out = sb_json_dumps(list, JSON_INDENT(2) | JSON_SORT_KEYS);
		rc = fputs(out, stdout) < 0 || putchar('\n') == EOF ? 1 : 0;
		free(out);
	}
	json_decref(list);
	sb_argv_release(&run.env);
	sb_argv_release(&st.proxy_pods);
	return rc;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* cmd-dataset.c: `ssebench dataset validate`. */
#include "config.h"

#include <getopt.h>

#include "sb/diag.h"
#include "sb/exit.h"
#include "sb/mem.h"
#include "sb/taskdir.h"

#include "cli.h"

int
cmd_dataset_validate(const struct cli_command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	_cleanup_diags_ struct sb_diags diags = SB_DIAGS_INIT;
	_cleanup_free_ char *dir = NULL;
	struct sb_dataset *ds = NULL;
	struct sb_error *err = NULL;
	size_t bad = 0;
	int c, rc = 0;

	while ((c = cli_getopt(cmd, argc, argv, "+h", longopts, &rc)) != -1)
		if (c == -2)
			return rc;
	if (argc - optind > 1)
		return cli_usage_error(cmd, "expected at most one dataset directory");
	dir = optind < argc ? sb_xstrdup(argv[optind]) : cli_default_dataset();
	if (sb_dataset_load(dir, &ds, &diags, &err) < 0) {
		rc = cli_fail("%s", sb_error_message(err));
		sb_error_release(&err);
		return rc;
	}
	for (size_t i = 0; i < ds->n; i++)
		bad += ds->tasks[i]->problems > 0;
	if (diags.n > 0) {
		sb_diags_sort(&diags);
		sb_diags_print(&diags, stdout);
		fprintf(stdout, "%s: %zu problem%s in %zu of %zu task%s\n", ds->path, diags.n,
		    diags.n == 1 ? "" : "s", bad, ds->n, ds->n == 1 ? "" : "s");
		rc = SB_EXIT_FAILURE;
	} else {
		fprintf(stdout, "%s: %zu task%s %s valid\n", ds->path, ds->n, ds->n == 1 ? "" : "s",
		    ds->n == 1 ? "is" : "are");
	}
	sb_dataset_free(ds);
	return rc;
}

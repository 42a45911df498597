/* SPDX-License-Identifier: Apache-2.0 */
/* cmd-dataset.c: `ssebench dataset validate`. */
#include "config.h"

#include <getopt.h>

#include "sb/diag.h"
#include "sb/exit.h"
#include "sb/json.h"
#include "sb/mem.h"
#include "sb/taskdir.h"

#include "cli.h"

/* One problem for `dataset validate --json`: line and col null for the file as a whole. */
static json_t *
diag_json(const struct sb_diag *d)
{
	return json_pack("{s:o, s:o, s:o, s:o}", "file", sb_json_string_or_null(d->file), "line",
	    d->line ? json_integer(d->line) : json_null(), "col",
	    d->line ? json_integer(d->col) : json_null(), "message", sb_json_string_or_null(d->msg));
}

int
cmd_dataset_validate(const struct cli_command *cmd, int argc, char **argv)
{
	_cleanup_diags_ struct sb_diags diags = SB_DIAGS_INIT;
	_cleanup_free_ char *dir = NULL;
	struct sb_dataset *ds = NULL;
	bool as_json = false;
	size_t bad = 0;
	int rc;

	if ((rc = cli_dataset_flags(cmd, argc, argv, &dir, &as_json)) >= 0)
		return rc;
	if (argc - optind > 1 || (argc - optind == 1 && dir != NULL))
		return cli_usage_error(cmd, "expected one dataset directory (--local DIR)");
	if (optind < argc) {
		cli_deprecated("'dataset validate DIR'", "'dataset validate --local DIR'");
		dir = sb_xstrdup(argv[optind]);
	}
	if ((rc = cli_load_dataset(&dir, &ds, &diags)) != 0)
		return rc;
	for (size_t i = 0; i < ds->n; i++)
		bad += ds->tasks[i]->problems > 0;
	sb_diags_sort(&diags);
	if (as_json) {
		json_t *problems = json_array();

		for (size_t i = 0; i < diags.n; i++)
			json_array_append_new(problems, diag_json(&diags.v[i]));
		json_t *out = json_pack("{s:s, s:I, s:I, s:b, s:o}", "dataset", ds->path, "tasks",
		    (json_int_t)ds->n, "tasks_with_problems", (json_int_t)bad, "valid",
		    diags.n == 0, "problems", problems);

		cli_print_json(out);
		json_decref(out);
		rc = diags.n > 0 ? SB_EXIT_FAILURE : SB_EXIT_OK;
	} else if (diags.n > 0) {
		sb_diags_print(&diags, stdout);
		fprintf(stdout, "%s: %zu problem%s in %zu of %zu task%s\n", cli_safe(ds->path), diags.n,
		    diags.n == 1 ? "" : "s", bad, ds->n, ds->n == 1 ? "" : "s");
		rc = SB_EXIT_FAILURE;
	} else {
		fprintf(stdout, "%s: %zu task%s %s valid\n", cli_safe(ds->path), ds->n,
		    ds->n == 1 ? "" : "s", ds->n == 1 ? "is" : "are");
	}
	sb_dataset_free(ds);
	return rc;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* cmd-tasks.c: `ssebench tasks list`. */
#include "config.h"

#include <getopt.h>
#include <string.h>
#include <sys/utsname.h>

#include "sb/diag.h"
#include "sb/exit.h"
#include "sb/json.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/taskdir.h"

#include "cli.h"

/* The Docker architecture name of this machine ("amd64", "arm64"). */
static const char *
host_arch(void)
{
	static struct utsname u;

	if (uname(&u) < 0)
		return "amd64";
	if (strcmp(u.machine, "x86_64") == 0)
		return "amd64";
	if (strcmp(u.machine, "aarch64") == 0)
		return "arm64";
	return u.machine;
}

/* The dataset's name: the last component of its path. */
static const char *
dataset_name(const struct sb_dataset *ds)
{
	const char *s = strrchr(ds->path, '/');

	return s != NULL ? s + 1 : ds->path;
}

/* One entry in the shape of the catalog service's GET /tasks (docs/upstream.md, "The catalog"). */
static json_t *
task_summary(const struct sb_dataset *ds, const struct sb_task *t)
{
	const struct sb_task_config *c = t->config;
	_cleanup_free_ char *lower = sb_ascii_lower(t->name);
	_cleanup_free_ char *dsname = sb_ascii_lower(dataset_name(ds));
	_cleanup_free_ char *image = NULL, *base = NULL;
	unsigned checks = sb_task_checks(c);
	json_t *jchecks = json_array();

	/* The case image a local build tags: untagged from a folder, the dataset version
	 * otherwise (docs/images.md). */
	image = ds->version != NULL
		? sb_xasprintf("%s/case/%s/%s:%s", cli_registry(), dsname, lower, ds->version)
		: sb_xasprintf("%s/case/%s/%s", cli_registry(), dsname, lower);
	base = t->base != NULL ? sb_xasprintf("%s/%s", cli_registry(), t->base) : NULL;
	for (unsigned bit = SB_CHECK_BUILD; bit <= SB_CHECK_INTENT_TEST; bit <<= 1)
		if (checks & bit)
			json_array_append_new(jchecks,
			    json_string(sb_task_check_name((enum sb_task_check)bit)));
	return json_pack("{s:s, s:o, s:o, s:o, s:o, s:s, s:[s], s:o}", "id", t->name, "language",
	    sb_json_string_or_null(c->language.s), "project", sb_json_string_or_null(c->project.s),
	    "repository", sb_json_string_or_null(c->repository.s), "base",
	    sb_json_string_or_null(base), "image", image, "arch", host_arch(), "checks", jchecks);
}

int
cmd_tasks_list(const struct cli_command *cmd, int argc, char **argv)
{
	_cleanup_diags_ struct sb_diags diags = SB_DIAGS_INIT;
	_cleanup_free_ char *dir = NULL;
	struct sb_dataset *ds = NULL;
	bool as_json = false;
	size_t bad = 0, wid = 2, wlang = 8;
	int rc;

	if ((rc = cli_dataset_command(cmd, argc, argv, &dir, &as_json)) >= 0)
		return rc;
	if ((rc = cli_load_dataset(&dir, &ds, &diags)) != 0)
		return rc;
	if (ds->n == 0) {
		rc = cli_fail("%s has no task folders (a dataset is a directory of task folders; "
			      "run 'ssebench dataset validate %s')",
		    ds->path, ds->path);
		sb_dataset_free(ds);
		return rc;
	}
	if (as_json) {
		json_t *arr = json_array();
		char *s;

		for (size_t i = 0; i < ds->n; i++)
			if (ds->tasks[i]->problems == 0)
				json_array_append_new(arr, task_summary(ds, ds->tasks[i]));
		s = sb_json_dumps(arr, JSON_INDENT(2) | JSON_ENSURE_ASCII);
		fprintf(stdout, "%s\n", s);
		free(s);
		json_decref(arr);
	} else {
		for (size_t i = 0; i < ds->n; i++) {
			const struct sb_task *t = ds->tasks[i];

			if (t->problems == 0) {
				size_t n = strlen(cli_safe(t->name)), l = strlen(cli_safe(t->config->language.s));

				wid = n > wid ? n : wid;
				wlang = l > wlang ? l : wlang;
			}
		}
		fprintf(stdout, "%-*s  %-*s  %s\n", (int)wid, "ID", (int)wlang, "LANGUAGE", "PROJECT");
		for (size_t i = 0; i < ds->n; i++) {
			const struct sb_task *t = ds->tasks[i];

			if (t->problems > 0)
				continue;
			fprintf(stdout, "%-*s  %-*s  %s\n", (int)wid, cli_safe(t->name), (int)wlang,
			    cli_safe(t->config->language.s), cli_safe(t->config->project.s));
		}
	}
	for (size_t i = 0; i < ds->n; i++)
		bad += ds->tasks[i]->problems > 0;
	if (bad > 0)
		rc = cli_fail("%s: %zu of %zu tasks have problems and are not listed; run "
			      "'ssebench dataset validate %s'",
		    ds->path, bad, ds->n, ds->path);
	else if (diags.n > 0)
		rc = cli_fail("%s: the dataset has problems (its dataset.yaml or a folder that is "
			      "no task); run 'ssebench dataset validate %s'",
		    ds->path, ds->path);
	if (fflush(stdout) != 0)
		rc = cli_fail("writing the list: %s", strerror(errno));
	sb_dataset_free(ds);
	return rc;
}

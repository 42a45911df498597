/* SPDX-License-Identifier: Apache-2.0 */
/* cmd-images.c: `ssebench images base`, `images push` and `ssebench build-case`. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "sb/diag.h"
#include "sb/argv.h"
#include "sb/exit.h"
#include "sb/json.h"
#include "sb/mem.h"
#include "sb/taskdir.h"

#include "cli.h"
#include "docker.h"
#include "images.h"
#include "registry.h"

int
cmd_images_base(const struct cli_command *cmd, int argc, char **argv)
{
	static const char *const all[] = { "c", "go", "rust", NULL };
	struct images im = { cli_home(), -1, false };
	struct sb_error *err = NULL;
	int rc, failed = 0;

	if ((rc = cli_json_flag(cmd, argc, argv, NULL)) >= 0)
		return rc;
	for (int i = optind; i < argc; i++)
		if (strcmp(argv[i], "c") != 0 && strcmp(argv[i], "go") != 0 &&
		    strcmp(argv[i], "rust") != 0)
			return cli_usage_error(cmd, "unknown language '%s' (c, go, rust)", argv[i]);
	if (cli_need_engine() != 0)
		return SB_EXIT_FAILURE;
	for (int i = 0; (optind < argc ? optind + i < argc : all[i] != NULL); i++) {
		const char *lang = optind < argc ? argv[optind + i] : all[i];

		if (images_build_base(&im, lang, &err) < 0) {
			cli_fail("%s", sb_error_message(err));
			sb_error_release(&err);
			failed++;
		}
	}
	return failed ? SB_EXIT_FAILURE : SB_EXIT_OK;
}

/* A task of `build-case --json`: {id, image, outcome, why}. */
static void
case_outcome(json_t *all, const char *id, const char *image, const char *outcome,
    const char *why)
{
	json_array_append_new(all, json_pack("{s:s, s:s?, s:s, s:s?}", "id", id, "image", image,
	    "outcome", outcome, "why", why));
}

int
cmd_build_case(const struct cli_command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "local", required_argument, NULL, 'l' },
		{ "task", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "benchmarks", required_argument, NULL, 'b' }, /* deprecated: --local */
		{ "tasks", required_argument, NULL, 'T' },	  /* deprecated: --task, repeated */
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	_cleanup_diags_ struct sb_diags diags = SB_DIAGS_INIT;
	_cleanup_argv_ struct sb_argv wanted = SB_ARGV_INIT, chosen = SB_ARGV_INIT;
	json_auto_t *outcomes = json_array();
	_cleanup_free_ char *dir = NULL;
	struct images im = { cli_home(), -1, false };
	struct sb_dataset *ds = NULL;
	struct sb_error *err = NULL;
	size_t built = 0, skipped = 0, failed = 0;
	bool force = false, as_json = false;
	const char *slash;
	int c, rc = 0;

	while ((c = cli_getopt(cmd, argc, argv, "+h", longopts, &rc)) != -1) {
		switch (c) {
		case -2:
			return rc;
		case 'b':
			cli_deprecated("--benchmarks DIR", "--local DIR");
			/* fall through */
		case 'l':
			free(dir);
			dir = sb_xstrdup(optarg);
			break;
		case 'T': {
			_cleanup_free_ char *copy = sb_xstrdup(optarg);
			char *save = NULL;

			cli_deprecated("--tasks ID,ID", "--task ID --task ID");
			for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
				sb_argv_push(&wanted, t);
			break;
		}
		case 't': sb_argv_push(&wanted, optarg); break;
		case 'f': force = true; break;
		case 'j': as_json = true; break;
		default: break;
		}
	}
	if (optind < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	if ((rc = cli_load_dataset(&dir, &ds, &diags)) != 0)
		return rc;
	/* Every --task must select a task; none given: all of them. */
	if (wanted.n == 0)
		for (size_t i = 0; i < ds->n; i++)
			sb_argv_push(&chosen, ds->tasks[i]->name);
	else if (cli_select_tasks(ds, &wanted, "--task", &chosen) != 0) {
		sb_dataset_free(ds);
		return SB_EXIT_FAILURE;
	}
	if (cli_need_engine() != 0) {
		sb_dataset_free(ds);
		return SB_EXIT_FAILURE;
	}
	slash = strrchr(ds->path, '/');
	for (size_t i = 0; i < ds->n; i++) {
		struct sb_task *t = ds->tasks[i];
		_cleanup_free_ char *name = NULL, *label = NULL;
		bool picked = false;
		char digest[65];

		for (size_t k = 0; k < chosen.n && !picked; k++)
			picked = strcmp(chosen.v[k], t->name) == 0;
		if (!picked)
			continue;
		if (t->problems > 0) {
			cli_fail("%s: not valid; run 'ssebench dataset validate --local %s'", t->name,
			    dir);
			case_outcome(outcomes, t->name, NULL, "failed", "the task is not valid");
			failed++;
			continue;
		}
		name = image_case(slash ? slash + 1 : ds->path, t->name);
		if (task_files_digest(t->display, digest, &err) < 0 ||
		    images_ensure_base(&im, t->base, &err) < 0) {
			cli_fail("%s: %s", t->name, sb_error_message(err));
			case_outcome(outcomes, t->name, name, "failed", sb_error_message(err));
			sb_error_release(&err);
			failed++;
			continue;
		}
		/* Skip an image whose label says its task folder is unchanged (docs/upstream.md,
		 * "Task Dockerfiles"). */
		label = docker_image_label(name, "ssebench.task-files");
		if (!force && docker_image_exists(name)) {
			if (label != NULL && strcmp(label, digest) == 0) {
				progress("%s: up to date", name);
				case_outcome(outcomes, t->name, name, "skipped", "up to date");
				skipped++;
				continue;
			}
			if (label == NULL) {
				progress("%s: exists without an ssebench.task-files label; cannot tell "
					 "whether it is current, skipping (--force rebuilds it)",
				    name);
				case_outcome(outcomes, t->name, name, "skipped",
				    "no ssebench.task-files label (--force rebuilds it)");
				skipped++;
				continue;
			}
			progress("%s: the task folder changed; rebuilding", name);
		}
		if (images_build_case(&im, ds->path, slash ? slash + 1 : ds->path, t, digest, ds->canary, &err) < 0) {
			cli_fail("%s", sb_error_message(err));
			case_outcome(outcomes, t->name, name, "failed", sb_error_message(err));
			sb_error_release(&err);
			failed++;
			continue;
		}
		case_outcome(outcomes, t->name, name, "built", NULL);
		built++;
	}
	if (as_json) {
		json_t *out = json_pack("{s:s, s:I, s:I, s:I, s:O}", "dataset", ds->path, "built",
		    (json_int_t)built, "skipped", (json_int_t)skipped, "failed", (json_int_t)failed,
		    "tasks", outcomes);

		cli_print_json(out);
		json_decref(out);
	} else {
		printf("%s: %zu built, %zu skipped, %zu failed\n", cli_safe(ds->path), built, skipped,
		    failed);
	}
	sb_dataset_free(ds);
	return failed ? SB_EXIT_FAILURE : SB_EXIT_OK;
}

/* `ssebench images push --registry R [--lock FILE] IMAGE...`: each local image pushed to R,
 * pinned by the digest its push reported, and recorded in the images lock (registry.h). */
int
cmd_images_push(const struct cli_command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "registry", required_argument, NULL, 'r' },
		{ "lock", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *reg = NULL, *lock = "images.lock.json";
	struct sb_error *err = NULL;
	size_t failed = 0;
	int c, rc = 0;

	while ((c = cli_getopt(cmd, argc, argv, "+h", longopts, &rc)) != -1) {
		switch (c) {
		case -2:
			return rc;
		case 'r': reg = optarg; break;
		case 'L': lock = optarg; break;
		default: break;
		}
	}
	if (reg == NULL)
		return cli_usage_error(cmd, "--registry R is required");
	if (registry_check(reg, &err) < 0) {
		rc = cli_usage_error(cmd, "%s", sb_error_message(err));
		sb_error_release(&err);
		return rc;
	}
	if (optind >= argc)
		return cli_usage_error(cmd, "no image named (see 'ssebench images list')");
	if (*lock == '\0')
		return cli_usage_error(cmd, "--lock needs a file name");
	/* A lock that cannot take the pins is found before anything is pushed. Each entry is
	 * added under a lock of the file's directory (registry.c:lock_load): pushes to one
	 * images lock may run side by side. */
	if (registry_lock_check(lock, reg, &err) < 0) {
		rc = cli_fail("%s", sb_error_message(err));
		sb_error_release(&err);
		return rc;
	}
	for (int i = optind; i < argc; i++) {
		_cleanup_free_ char *pinned = NULL, *id = NULL;

		progress("pushing %s to %s", argv[i], reg);
		if (registry_push(reg, argv[i], &pinned, &id, &err) < 0 ||
		    registry_lock_add(lock, reg, argv[i], id, pinned, &err) < 0) {
			(void)cli_fail("%s", sb_error_message(err));
			sb_error_release(&err);
			failed++;
			continue;
		}
		printf("%s %s\n", argv[i], pinned);
	}
	if (fflush(stdout) != 0)
		return cli_fail("writing the pins: %s", strerror(errno));
	return failed > 0 ? SB_EXIT_FAILURE : SB_EXIT_OK;
}

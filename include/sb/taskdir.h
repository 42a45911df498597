/* SPDX-License-Identifier: Apache-2.0 */
/*
 * taskdir.h: task folders and datasets on disk (docs/upstream.md, "Task folders", "Task
 * Dockerfiles" and "Dataset validation").
 *
 * Loading a task checks it: the config's schema, the id against the folder name, the
 * Dockerfile's rules (ARG SSEBENCH_REGISTRY before the first FROM, the last FROM under
 * ${SSEBENCH_REGISTRY}/, every COPY source present), and that every file the config names
 * under /ssebench is put there by a COPY from a regular file inside the task folder. The
 * folder is read through a directory fd with openat2(RESOLVE_BENEATH), so a symlink that
 * leads out of the folder is a problem, never a file we read.
 */
#ifndef SB_TASKDIR_H
#define SB_TASKDIR_H

#include "sb/common.h"
#include "sb/diag.h"
#include "sb/dockerfile.h"
#include "sb/error.h"
#include "sb/task.h"

/* Where the case image keeps the task files (upstream contract). */
#define SB_TASK_FILES_DIR "/ssebench"

struct sb_task {
	char *name;	/* folder name */
	char *display;	/* folder path as shown in messages */
	struct sb_task_config *config; /* never NULL; may be partial if there were problems */
	struct sb_dockerfile *dockerfile; /* NULL if missing */
	char *base;	/* last FROM without the registry prefix, e.g. "base-generic-c:0.1.0" */
	unsigned problems; /* how many diags this task produced */
};

/*
 * Load the task folder `name` (one path component) of the dataset open at dataset_fd.
 * display_dir is the dataset path for messages. Problems go to diags. Returns NULL only
 * when the folder cannot be opened (a diag says why).
 */
struct sb_task *sb_task_load(int dataset_fd, const char *name, const char *display_dir,
    struct sb_diags *diags);
void sb_task_free(struct sb_task *t);

/*
 * The file of the task folder (relative path) that the final stage of the Dockerfile
 * copies to the absolute image path `target`, or NULL. task_fd is the task folder.
 */
char *sb_task_context_source(const struct sb_task *t, int task_fd, const char *target);

struct sb_dataset {
	char *path;	   /* as given, without a trailing slash */
	char *version;	   /* dataset.yaml's version, or NULL without dataset.yaml */
	char *canary;	   /* dataset.yaml's canary, else sb_dataset_canary_default's */
	struct sb_task **tasks; /* sorted by folder name */
	size_t n;
};

/*
 * Load every task folder of a dataset (every directory not starting with '.'), and its
 * dataset.yaml if there is one. Problems (of tasks or of the dataset: empty, ids equal
 * but for case) go to diags; *err is set only when the directory cannot be read at all.
 */
int sb_dataset_load(const char *path, struct sb_dataset **ret, struct sb_diags *diags,
    struct sb_error **err);
void sb_dataset_free(struct sb_dataset *d);

/* The id of d's task closest to name within two edits (for "did you mean"), or NULL. */
const char *sb_dataset_closest(const struct sb_dataset *d, const char *name);

/*
 * The canary of a dataset whose dataset.yaml names none: "SSEBENCH-CANARY-" and 32 hex
 * digits of the SHA-256 of its version ("unversioned" without one), so a dataset keeps its
 * canary wherever it is checked out. The hidden files are marked with it when the case
 * image is built (docs/task-format.md, "Canary"); the scan flags it (sb/scan.h).
 */
char *sb_dataset_canary_default(const char *version);

/* A canary a dataset.yaml may set: 16 to 128 of A-Z a-z 0-9 '-' '_'. */
bool sb_canary_valid(const char *s);

#endif

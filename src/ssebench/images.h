/* SPDX-License-Identifier: Apache-2.0 */
/*
 * images.h: the four image layers (docs/images.md): base -> case -> tool -> agent, plus
 * the runtime image the tool layer copies the C programs from. Every name is under
 * $SSEBENCH_REGISTRY; local images only (no registry is assumed).
 */
#ifndef SSEBENCH_IMAGES_H
#define SSEBENCH_IMAGES_H

#include "sb/error.h"
#include "sb/taskdir.h"

#include "agents.h"

struct images {
	const char *home;   /* the checkout: images/, agents/ */
	int log_fd;	    /* build output goes here (-1: discarded) */
	bool quiet;	    /* no progress lines */
};


/* Image names. */
char *image_rootfs(void);
char *image_base(const char *base);		/* "base-generic-c:0.1.0" */
char *image_case(const char *dataset, const char *task_id);
char *image_runtime(void);
char *image_tool(const char *task_id);
char *image_agent(const struct agent_info *a, const char *task_id);
/* Sidecar mode: the task image, the task-independent agent runtime, an agent on it. */
char *image_tool_sidecar(const char *task_id);	/* tool-sidecar/<task>:<version> */
char *image_sidecar_agent(void);		/* tool-sidecar-agent:<version> */
char *image_agent_sidecar(const struct agent_info *a); /* agent-<name>/sidecar:<agent v> */

/* SHA-256 over "<path>\0<sha256 of the file>\n" for every regular file of the task
 * folder, in path order (docs/upstream.md, "Task Dockerfiles"): the ssebench.task-files
 * label. */
int task_files_digest(const char *task_dir, char out[65], struct sb_error **err);


/* Builds; each prints a progress line with its time unless quiet. */
int images_build_base(const struct images *im, const char *lang, struct sb_error **err);
/* Build the base image a task needs if it is missing. */
int images_ensure_base(const struct images *im, const char *base, struct sb_error **err);
/* The case image; with a canary, from a copy of the task folder whose hidden diffs carry
 * it (images_canary_line before their first line). */
int images_build_case(const struct images *im, const char *dataset_dir, const char *dataset,
    const struct sb_task *t, const char *digest, const char *canary, struct sb_error **err);
char *images_canary_line(const char *canary);
int images_build_runtime(const struct images *im, struct sb_error **err);
int images_build_tool(const struct images *im, const struct sb_task *t, const char *case_image,
    struct sb_error **err);
/* The agent's Dockerfile (FROM ssebench-agent) on base_image, tagged name. */
int images_build_agent(const struct images *im, const struct agent_info *a,
    const char *base_image, const char *name, struct sb_error **err);
/* Sidecar mode: tool-sidecar/<task> (on the task's tool image, built first), and
 * tool-sidecar-agent. */
int images_build_sidecar_case(const struct images *im, const struct sb_task *t,
    const char *case_image, struct sb_error **err);
int images_build_sidecar_agent(const struct images *im, struct sb_error **err);

/* "[  12.3 s] msg" progress lines on stderr, timed from the first one. */
void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The agent user's home and uid in every agent image (images/common/make-users.sh). */
#define AGENT_HOME "/home/model"
#define AGENT_UID  1000
double progress_clock(void);

#endif

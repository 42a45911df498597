/* SPDX-License-Identifier: Apache-2.0 */
/*
 * space.h: what ssebench's images take on disk (docs/cleanup.md), from the engine's own
 * account of them: `docker image inspect` (each image's layers and size) and `docker history`
 * (the size of each layer). Everything here is pure: the commands in cmd-space.c run the
 * client and hand the parsed output over, so the accounting is unit-tested without an engine.
 *
 * An image is a stack of layers; two images share a layer when the stacks are equal up to
 * and including it, which the layer's chain id says (the OCI image spec's ChainID: the first
 * layer's diff id, then sha256 of "<chain id below> <diff id>"). A layer's bytes are on disk
 * once, however many images hold it: an image's size splits into what it shares with another
 * image and what is its own, and removing images frees only the layers no remaining image
 * holds.
 */
#ifndef SSEBENCH_SPACE_H
#define SSEBENCH_SPACE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "sb/error.h"

/* What an image name under the registry prefix is (docs/images.md has the table). */
enum space_kind {
	SPACE_ROOTFS,          /* debian:bookworm, imported by scripts/docker-up */
	SPACE_BASE,            /* base-*: the toolchain images */
	SPACE_CASE,            /* case/<dataset>/<task> */
	SPACE_RUNTIME,         /* runtime:<version> */
	SPACE_TOOL,            /* tool/<task>:<version> */
	SPACE_SIDECAR_TASK,    /* tool-sidecar/<task>:<version> */
	SPACE_SIDECAR_AGENTRT, /* tool-sidecar-agent:<version> */
	SPACE_AGENT,           /* agent-<name>/<task>:<agent version> */
	SPACE_AGENT_SIDECAR,   /* agent-<name>/sidecar:<agent version> */
	SPACE_OTHER,           /* anything else under the prefix: not one ssebench makes */
};

/* "rootfs", "base", "case", ... (for the listings). */
const char *space_kind_name(enum space_kind k);

struct space_name {
	enum space_kind kind;
	char *tag;     /* the tag ("latest" when the name has none) */
	char *dataset; /* case images: the dataset's directory name */
	char *task;    /* case, tool, sidecar task and agent images: the task, as the name has it */
	char *agent;   /* agent images: the agent's name */
};

/*
 * Read ref ("<prefix>/<path>[:tag]", as RepoTags has it). Returns false, writing nothing,
 * when ref is not under prefix (a name that merely starts with the prefix's characters,
 * "<prefix>-other/...", is not). The fields are malloc'd; space_name_release frees them.
 */
bool space_name_parse(const char *prefix, const char *ref, struct space_name *ret);
void space_name_release(struct space_name *n);

/*
 * Why prune (without --all) keeps an image of this name for a dataset, or NULL when no task
 * of it needs one: tasks are the dataset's task ids in lower case (as image names have them),
 * n_tasks of them; dataset its directory name in lower case; version the running ssebench's.
 * The base images and the rootfs are always kept, and so is a name of no kind ssebench makes.
 */
const char *space_keep_reason(const struct space_name *n, const char *const *tasks, size_t n_tasks,
    const char *dataset, const char *version);

struct space_image {
	char *id;    /* "sha256:<64 hex>" */
	char **tags; /* RepoTags, as the engine has them (untrusted bytes) */
	size_t n_tags;
	char **chains;   /* each layer's chain id, bottom first */
	uint64_t *sizes; /* each layer's size in bytes (see space_image_set_history) */
	size_t n_layers;
	uint64_t size;  /* the image's size, as inspect says */
	bool exact;     /* sizes are the engine's own per-layer figures */
	json_t *labels; /* Config.Labels (an object; maybe empty) */
};

/*
 * Fill ret from one element of `docker image inspect`'s array: Id, RepoTags, RootFS.Layers,
 * Size and Config.Labels. The input is untrusted: a member of the wrong type, an id or a diff
 * id that is not "sha256:" and 64 hex digits, or more than SPACE_LAYERS_MAX layers fails with
 * EINVAL and leaves ret untouched. Until space_image_set_history, the whole size is counted
 * on the top layer and exact is false.
 */
#define SPACE_LAYERS_MAX 1024
int space_image_from_inspect(const json_t *j, struct space_image *ret, struct sb_error **err);

/* One entry of `docker history`: the instruction's layer size and what made it. */
struct space_hist {
	uint64_t size;
	const char *created_by; /* may be NULL */
};

/*
 * Is the history entry's instruction one that never makes a layer (ENV, LABEL, CMD, ARG,
 * USER, ...; BuildKit's "LABEL x=y" or the classic builder's "/bin/sh -c #(nop)  LABEL x=y")?
 * RUN, COPY, ADD and WORKDIR may make one of size 0 (WORKDIR making its directory does).
 */
bool space_hist_is_metadata(const char *created_by);

/*
 * The layers' sizes from `docker history`'s entries, newest first as the client prints them,
 * n of them. History has an entry per instruction, layers only for some, and the client does
 * not say which: the layers are, bottom to top, every entry (when there are as many entries
 * as layers), else the entries that are not 0 (when there are as many of those), else those
 * and the entries of size 0 that are not metadata (when that many). Then exact becomes true.
 * Otherwise, or when the history does not add up to the image's size, the sizes go to the
 * lowest layers in order (the total stays right; the split may not) and exact stays false.
 */
void space_image_set_history(struct space_image *img, const struct space_hist *h, size_t n);

void space_image_release(struct space_image *img);

/*
 * The bytes of image i (of imgs[0..n)) held by another image too (*ret_shared) and its own
 * (*ret_unique); they add up to its size. among (NULL: all) says which other images count.
 */
void space_split(const struct space_image *imgs, size_t n, const bool *among, size_t i,
    uint64_t *ret_shared, uint64_t *ret_unique);

/* The bytes the selected images take together: each layer once. */
uint64_t space_distinct(const struct space_image *imgs, size_t n, const bool *sel);

/* The bytes removing the gone images frees: their layers that no other image holds. */
uint64_t space_freed(const struct space_image *imgs, size_t n, const bool *gone);

/* "0 B", "9.8 kB", "203 MB", "1.90 GB": decimal units, as the docker client prints them.
 * Writes at most len bytes of buf and returns buf. */
const char *space_human(uint64_t bytes, char *buf, size_t len);

#endif

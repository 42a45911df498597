/* SPDX-License-Identifier: Apache-2.0 */
/*
 * registry.h: the run images in a registry, for a cluster whose nodes pull them
 * (docs/kubernetes.md, "Images"): the local build pushed under the registry's name and
 * pinned by the digest the registry holds, and the images lock that records each pin.
 */
#ifndef SSEBENCH_REGISTRY_H
#define SSEBENCH_REGISTRY_H

#include <stdbool.h>

#include "sb/error.h"

/*
 * Whether `r` is a registry to push to: HOST[:PORT][/PATH...], lower case, HOST of DNS
 * labels with a '.' or a port (or "localhost": docker takes a one-word host for a Docker
 * Hub account), not Docker Hub's; PORT 1 to 65535 without a leading zero; PATH components
 * of letters and digits joined by '.', '_', '__' or runs of '-'. Fails (EINVAL) saying
 * what is wrong.
 */
int registry_check(const char *r, struct sb_error **err);

/* The name `local` (a local build, "$SSEBENCH_REGISTRY/NAME:TAG") gets under registry `r`:
 * "R/NAME:TAG". */
char *registry_name(const char *r, const char *local);

/*
 * Push the local image `local` to registry `r` and give its pinned name,
 * "R/NAME@sha256:...", in *ret_pinned and its image ID in *ret_id (either may be NULL).
 * The image is taken by ID once (docker tag ID R/NAME:TAG, docker push); the pin is the
 * digest the push reported, checked to name that ID. `local` must have a tag.
 */
int registry_push(const char *r, const char *local, char **ret_pinned, char **ret_id,
    struct sb_error **err);

/* Whether `path` can take the pins of registry `r` (see registry_lock_add), before any
 * push. */
int registry_lock_check(const char *path, const char *r, struct sb_error **err);

/*
 * Record a push in the images lock at `path` (JSON: {"registry": R, "images": [{"image",
 * "id", "pinned"}...]}, one entry per local image name, newest pin kept), written
 * atomically. A link, a lock that is not one, or one for another registry is an error.
 */
int registry_lock_add(const char *path, const char *r, const char *local, const char *id,
    const char *pinned, struct sb_error **err);

#endif

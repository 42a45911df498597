/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fsutil.h: small file and process helpers of the daemon's start-up and workers (fsutil.c):
 * directories and files given an owner and a mode, a root-owned directory checked before it
 * is trusted, a function run as another user in a child, unguessable names, and whole
 * writes to a pipe. What is general (safe opens, tree copies, mkdir -p) is libsb's.
 */
#ifndef SSEBENCH_DAEMON_FSUTIL_H
#define SSEBENCH_DAEMON_FSUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "sb/error.h"
#include "sb/priv.h"

/* Give fd this owner and mode, changing only what differs; -1 with errno on failure. */
int own_fd(int fd, uid_t uid, gid_t gid, mode_t mode);
/* own_fd for name in dirfd, a regular file or a directory (never through a link). */
int own_at(int dirfd, const char *name, uid_t uid, gid_t gid, mode_t mode);

/* Make directory name in parent_fd (if missing) with this owner and mode; return its fd. */
int dir_owned_at(int parent_fd, const char *name, mode_t mode, uid_t uid, gid_t gid,
    struct sb_error **err);

/*
 * A root-owned directory at an absolute path, checked with lstat (not a link, owned by
 * root) and given `mode` and group `gid`; its fd. Created, with missing parents, if absent.
 */
int trusted_dir(const char *path, mode_t mode, gid_t gid, struct sb_error **err);

/* Run fn(arg) as creds in a child and wait for it: 0 if fn returned 0, else -1. */
int run_as(const struct sb_creds *creds, int (*fn)(void *), void *arg);

/* "<prefix>-<16 random hex digits>" (aborts if the kernel has no randomness to give). */
char *random_name(const char *prefix);

/* Write all of n bytes to fd (a pipe to the parent), retrying EINTR; false on failure. */
bool write_all(int fd, const void *p, size_t n);

#endif

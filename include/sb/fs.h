/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fs.h: file access below a directory fd, without following the way out (docs/design.md,
 * "Untrusted trees").
 *
 * Trees that someone else controls (a task folder, the agent's source tree, a results
 * directory the agent could plant links in) are only touched through these functions.
 * Resolution uses openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS), plus
 * RESOLVE_NO_SYMLINKS when asked; where openat2 is missing (old kernel, a seccomp profile
 * that refuses it), a component-by-component O_NOFOLLOW walk takes over, which refuses
 * every symbolic link: the fallback is stricter, never looser.
 */
#ifndef SB_FS_H
#define SB_FS_H

#include <sys/stat.h>
#include <sys/types.h>

#include "sb/buf.h"
#include "sb/common.h"
#include "sb/error.h"

enum sb_open_flags {
	/* Refuse every symbolic link on the way, even one that stays below dirfd. */
	SB_OPEN_NO_SYMLINKS = 1 << 0,
};

/*
 * Open rel (a safe relative path, see path.h) below dirfd. flags are open(2) flags
 * (O_CLOEXEC is always added); sbflags are enum sb_open_flags. Fails with EXDEV (or ELOOP)
 * if resolution would leave dirfd's tree.
 */
int sb_open_beneath(int dirfd, const char *rel, int flags, mode_t mode, unsigned sbflags,
    struct sb_error **err);

/*
 * lstat rel below dirfd, refusing a symbolic link in any directory component (O_NOFOLLOW
 * at each step, the walk sb_open_beneath falls back to), so a link swapped into the tree
 * cannot send the lookup outside it; the last component itself is not followed either.
 * rel is not checked for ".." (callers pass paths another parser produced, such as a
 * libgit2 delta's). Unlike sb_lstat_at below, a link that stays inside the tree is
 * refused too. *ret_st is written only on success.
 */
int sb_lstat_nofollow(int dirfd, const char *rel, struct stat *ret_st, struct sb_error **err);

/* For tests and the CI job that exercises it: never use openat2, always walk. */
void sb_fs_force_walk(bool on);

/*
 * Read the regular file rel below dirfd into out (which keeps its own max; a larger file
 * fails with EFBIG). FIFOs, devices and directories are refused without blocking.
 */
int sb_read_file_at(int dirfd, const char *rel, unsigned sbflags, struct sb_buf *out,
    struct sb_error **err);

/*
 * Replace the file `name` (one component, no slash) in dirfd atomically: write a temporary
 * file with O_EXCL next to it, fsync, rename over name, fsync the directory. A symlink
 * planted at `name` is replaced, never followed.
 */
int sb_write_file_atomic_at(int dirfd, const char *name, const void *data, size_t len,
    mode_t mode, struct sb_error **err);

/*
 * The names in directory rel below dirfd ("." for dirfd itself), sorted bytewise, without
 * "." and "..", at most max entries (more is an error). The caller frees with sb_strv_free.
 */
int sb_list_dir_at(int dirfd, const char *rel, size_t max, char ***ret_names, size_t *ret_n,
    struct sb_error **err);

/* lstat-like, below dirfd without following the final component. */
int sb_lstat_at(int dirfd, const char *rel, struct stat *ret_st, struct sb_error **err);

/* Open a directory by path (for the roots given on the command line). */
int sb_open_dir(const char *path, struct sb_error **err);

/*
 * mkdir -p: every missing directory of path (relative or absolute), the parents 0755 and the
 * last one with mode (umask applies). An existing directory is fine.
 */
int sb_mkdir_p(const char *path, mode_t mode, struct sb_error **err);

/* Fill buf with n random bytes from getrandom(2). */
int sb_random_bytes(void *buf, size_t n, struct sb_error **err);

#endif

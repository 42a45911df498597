/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tree.h: copying and removing directory trees that someone else controls.
 *
 * Both walk with directory fds and never follow a symbolic link: a link is copied as a
 * link, a directory swapped for a link during the walk fails to open (O_NOFOLLOW) and is
 * skipped. The copy reads as whoever calls it (root, for the daemon's scratch copies of the
 * agent's tree) and so it filters by owner, keeps only directories, regular files and links,
 * strips set-id bits, bounds the number of files and bytes, and re-checks that each file it
 * opened is the one it listed.
 */
#ifndef SB_TREE_H
#define SB_TREE_H

#include <stdint.h>
#include <sys/types.h>

#include "sb/common.h"
#include "sb/error.h"

struct sb_copy_opts {
	uid_t only_uid;	      /* copy only entries owned by this uid; (uid_t)-1: any owner */
	uid_t chown_uid;      /* owner of the copy; (uid_t)-1: keep the caller's */
	gid_t chown_gid;
	uint64_t max_files;   /* 0: SB_COPY_FILES_MAX */
	uint64_t max_bytes;   /* 0: SB_COPY_BYTES_MAX */
	const char *const *skip_names; /* NULL-terminated names skipped at every level, or NULL */
	bool group_read_only; /* modes: the owner's read and execute bits for the group, never
				 its write bit, nothing for others (a copy the group may use and
				 not change) */
};

struct sb_copy_stats {
	uint64_t files, dirs, links, bytes;
	uint64_t skipped; /* other owners, special files, entries that changed under us */
};

/*
 * Copy the tree at src_fd (a directory) to a new directory `name` in dst_parent_fd.
 * Modes are kept without set-id and sticky bits, times are kept (builds look at them).
 * On failure the partial copy is left for the caller to remove.
 */
int sb_copy_tree_at(int src_fd, int dst_parent_fd, const char *name,
    const struct sb_copy_opts *opts, struct sb_copy_stats *ret_stats, struct sb_error **err);

/*
 * Remove `name` in parent_fd and everything below it, without following links. Run it as
 * the owner of the tree (a child dropped to that uid) when the tree is not trusted.
 */
int sb_remove_tree_at(int parent_fd, const char *name, struct sb_error **err);

/* Remove everything below the directory dir_fd, keeping dir_fd itself. */
int sb_empty_dir_at(int dir_fd, struct sb_error **err);

#endif

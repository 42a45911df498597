/* SPDX-License-Identifier: Apache-2.0 */
/*
 * untar.h: unpack a tar stream that a run's pod produced (docs/kubernetes.md, "Results"),
 * as hostile input. Only directories and regular files come out, at fixed modes (0755,
 * 0644) and owned by the caller, below the directories the caller names for each top-level
 * name; everything else (links, devices, FIFOs, names with "..", absolute names, a second
 * entry for a path, entries past the bounds) is left behind and counted. Nothing is ever
 * followed: every directory is opened with O_NOFOLLOW below a descriptor, every file
 * created with O_EXCL.
 */
#ifndef SSEBENCH_UNTAR_H
#define SSEBENCH_UNTAR_H

#include <stddef.h>
#include <stdint.h>

#include "sb/error.h"

/* Where the entries under one top-level name go: name "results" -> dirfd. */
struct untar_root {
	const char *name; /* one path component */
	int dirfd;	  /* an open directory; entries are made below it */
};

struct untar_limits {
	uint64_t bytes;	 /* file contents, in all */
	uint64_t files;	 /* entries made */
	unsigned depth;	 /* components below a root */
};

struct untar_stats {
	uint64_t files, dirs, bytes; /* made */
	uint64_t left;		     /* entries left behind (see above) */
};

/*
 * Read the tar stream (ustar or GNU, with GNU long names) from fd to its end and unpack it.
 * Fails (EBADMSG) on a stream that is not tar: a bad checksum, a header number that is not
 * octal, a size past the stream; what was made so far stays (the caller's directories are
 * the run's own). A read or write error fails too. Entries the rules leave behind do not
 * fail it: *st counts them.
 */
int untar_fd(int fd, const struct untar_root *roots, size_t n_roots,
    const struct untar_limits *lim, struct untar_stats *st, struct sb_error **err);

#endif

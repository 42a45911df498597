/* SPDX-License-Identifier: Apache-2.0 */
/*
 * counters.h: the activity counters the kernel shows every container, which each run
 * container masks and the entrypoint checks are masked.
 *
 * Why: a check on hidden material runs the agent's code beside the hidden files; what that
 * code does (pages written, sectors, block interrupts) moves counters the agent can read
 * when it runs again, or that a run next to it reads while it runs. Measured by the
 * red-team reviews: ext4's per-disk counters carried the PoC in 12 calls, the host disk's
 * sector counts and /proc/vmstat's page counts carried the hidden test, 4 bits a call
 * (tests/integrity/README.md). Nothing a run does needs them. docs/integrity.md, "The agent
 * cannot void, spoil or leak its own grade" (the row on activity counters).
 */
#ifndef SB_COUNTERS_H
#define SB_COUNTERS_H

#include "sb/argv.h"
#include "sb/error.h"

/* Directories masked with an empty tmpfs (where they exist), NULL-terminated. */
extern const char *const sb_counter_dirs[];

/* Files masked with /dev/null (where they exist), NULL-terminated. */
extern const char *const sb_counter_files[];

/*
 * Every directory named "block" below devices (the host's /sys/devices, or a container's),
 * found without following a link, except those already in sb_counter_dirs: the block
 * devices' own directories (.../virtio1/block/vda/stat), which /sys/block only links to.
 * Appended to out; -1 (err set) when devices cannot be read.
 */
int sb_counter_block_dirs(const char *devices, struct sb_argv *out, struct sb_error **err);

/*
 * Every directory in sys_fs (the host's /sys/fs, or a container's) but cgroup, except those
 * already in sb_counter_dirs: each file system's own figures (ext4's and xfs's per-disk
 * statistics, btrfs's commit counts), whatever file system the host has. Appended to out.
 */
int sb_counter_fs_dirs(const char *sys_fs, struct sb_argv *out, struct sb_error **err);

/*
 * Every directory a run container masks, as this system shows them: those of
 * sb_counter_dirs that exist, then sb_counter_block_dirs of /sys/devices and
 * sb_counter_fs_dirs of /sys/fs. The CLI masks what it finds on the host; the entrypoint
 * calls it again inside the container and checks each is empty.
 */
void sb_counter_masked_dirs(struct sb_argv *out);

#endif

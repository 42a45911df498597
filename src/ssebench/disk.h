/* SPDX-License-Identifier: Apache-2.0 */
/*
 * disk.h: each run's own file system, a hard bound on what the run can write.
 *
 * Docker on this kind of host has no per-container disk quota (`--storage-opt size=` needs
 * overlay on XFS with project quotas), so a run that filled the disk would spoil its own
 * result files and every other run's on the host. Instead every place a run can write is
 * on a file system of its own: two sparse image files of SSEBENCH_DISK bytes each,
 * formatted ext4 and loop-mounted below <results>/.disks/<run-id>/. The container's root is
 * read-only. The agent's file system holds its tree, its home, /tmp, /var/tmp and the
 * archive; the harness's holds the runner's area and the daemon's state. Apart, the agent
 * can neither use up what grading needs (blocks, inodes) nor watch what a check writes by
 * the free space it sees. Writes past the bound fail with ENOSPC in that run only; 5% of
 * each is reserved for root.
 *
 * The images are sparse, so the host must have room for what they may still grow to:
 * disk_create refuses a run when the free space of the results' file system, less what
 * every other run's images may still grow by, is less than this run's two images.
 *
 * After the run the CLI copies the archive out into the run directory (regular files and
 * directories only, modes 0644/0755, owned by the CLI's user: nothing the agent set
 * survives the trip) and removes the file system.
 */
#ifndef SSEBENCH_DISK_H
#define SSEBENCH_DISK_H

#include <stdbool.h>
#include <stdint.h>

#include "sb/error.h"

/* The directories of a run's file system, one per place the run writes. */
/* On the agent's file system: */
#define DISK_SRC	"src"	  /* the agent's tree (a Docker volume: filled from the image) */
#define DISK_HOME	"home"	  /* the agent's home (a Docker volume, filled likewise) */
#define DISK_TMP	"tmp"	  /* /tmp (the sandbox's, or the sidecar agent container's) */
#define DISK_VARTMP	"vartmp"  /* /var/tmp */
#define DISK_TMP_TASK	"tmp-task"	/* the sidecar task container's /tmp */
#define DISK_VARTMP_TASK "vartmp-task"	/* and its /var/tmp */
#define DISK_ARCHIVE	"archive" /* /tmp/sse-archive */
/* On the harness's file system: */
#define DISK_RUNNER	"runner"  /* /var/lib/ssebench-runner */
#define DISK_STATE	"state"	  /* /var/lib/ssebench-daemon */
#define DISK_RESERVE_PERCENT "5" /* blocks only root may use (mkfs.ext4 -m) */
/* What a run's own files in its results directory may need once its archive has come
 * home (result.json, summary.json, the logs): room the archive's copy leaves free. */
#define DISK_RESULT_ROOM ((uint64_t)256 << 20)

enum { DISK_FS_AGENT, DISK_FS_HARNESS, DISK_FS_COUNT };

struct run_disk {
	char *dir;	/* <results>/.disks/<run-id> (0700 root) */
	struct {
		char *image; /* dir/disk.img, dir/harness.img */
		char *mnt;   /* dir/mnt, dir/mnt-harness: where it is mounted */
		bool mounted;
	} fs[DISK_FS_COUNT];
	uint64_t bytes; /* the size of each */
};

/*
 * Make, format and mount the run's two file systems of `bytes` bytes each below root
 * ("<results>/.disks"), with their directories. Refuses (ENOSPC) when the host has no room
 * for them to grow to that size, counting what the other runs' images may still take.
 * Needs root, mkfs.ext4 and mount(8) with loop devices. On failure nothing is left.
 */
int disk_create(struct run_disk *d, const char *root, const char *run_id, uint64_t bytes,
    struct sb_error **err);

/* The absolute path of one of its directories (DISK_*, on whichever file system it is on),
 * malloc'd. */
char *disk_path(const struct run_disk *d, const char *name);

/*
 * Copy the archive out into dest (a directory that must not exist yet): directories and
 * regular files only, at most SB_COPY_DEPTH_MAX deep and SB_COPY_FILES_MAX entries, 0755
 * and 0644, owned by the caller; links, special files, second names of a file, and files
 * past what the results file system can spare (disk.c:archive_budget) are left behind, and
 * counted in *ret_left. The tree is read without following any link.
 */
int disk_copy_archive(const struct run_disk *d, const char *dest, uint64_t *ret_left,
    struct sb_error **err);

/* Unmount and remove the run's file systems (best effort; what fails is said). */
void disk_release(struct run_disk *d);

/*
 * Remove the file systems below root whose run has no container left (a CLI that was
 * killed, a machine that rebooted): their loop mounts would otherwise stay for ever.
 */
void disk_sweep(const char *root);

/* The free space one run's disks of bytes each may grow into: both file systems and
 * 1 GiB to spare (what disk_create asks of the file system it makes them on). */
uint64_t disk_room_needed(uint64_t bytes);

#endif

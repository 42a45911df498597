/* SPDX-License-Identifier: Apache-2.0 */
/*
 * grading.h: what the daemon works out about a patch and a grading build for the evaluator,
 * free of processes so that tests can drive it (docs/grading.md):
 *   - the graded patch: the captured one without the sections of protected paths, which
 *     grading keeps pristine, and the list of what was left out;
 *   - the patch's scope: its files by class, their lines, and flags for what its added
 *     lines do (sanitizer names, process control, the network);
 *   - the oracle facts of a grading build: for each relocatable object it holds, whether it
 *     is built with AddressSanitizer and whether its functions check memory accesses, the sanitizer interface it defines and the sanitizer controls it
 *     calls.
 */
#ifndef SSEBENCH_DAEMON_GRADING_H
#define SSEBENCH_DAEMON_GRADING_H

#include <jansson.h>
#include <stddef.h>

#include "sb/buf.h"
#include "sb/common.h"
#include "sb/elf.h"
#include "sb/error.h"
#include "sb/git.h"
#include "sb/task.h"

/*
 * The graded patch into *out (the sections of diff, in order, of every file that is not
 * protected) and {"count": N, "paths": [{"path", "pattern"}, ...]} for those left out (the
 * first thousand named), into *ret_reverted.
 * files are the capture's, their sections within diff (checked: a section outside it is
 * EPROTO).
 */
int grading_patch(const struct sb_task_config *t, const char *diff, size_t len,
    const struct sb_git_file *files, size_t nfiles, struct sb_buf *out, json_t **ret_reverted,
    struct sb_error **err);

/* The patch's scope (docs/grading.md, "The patch scope"): a JSON object. */
json_t *grading_scope(const struct sb_task_config *t, const char *diff,
    const struct sb_git_file *files, size_t nfiles);

/* Oracle facts, built up one ELF object at a time (grading_oracle_object). */
struct grading_oracle {
	json_t *objects; /* {"<id>": {"asan": bool, "checks": bool}} for relocatable objects */
	json_t *hooks;	 /* [{"object", "symbol"}]: sanitizer interface defined */
	json_t *calls;	 /* [{"object", "symbol"}]: sanitizer controls called, and weak
			    references to the sanitizer's interface */
	json_t *duplicates; /* [{"object"}]: an id seen twice (a second archive member of one
			       name, a file named like a member) */
	json_t *unreadable; /* [path]: what could not be read, or read as an object */
	size_t nobjects;
	bool truncated; /* a limit was hit: facts are missing */
};

void grading_oracle_init(struct grading_oracle *o);
void grading_oracle_release(struct grading_oracle *o);
/* Record one object found at path (relative to the build tree; member for an archive's). */
void grading_oracle_object(struct grading_oracle *o, const char *path,
    const struct sb_elf_object *obj);
/* Record path (relative to the build tree) as a file the oracle could not read. */
void grading_oracle_unreadable(struct grading_oracle *o, const char *path);
/* The facts as one JSON object (new reference). */
json_t *grading_oracle_json(const struct grading_oracle *o);

#endif

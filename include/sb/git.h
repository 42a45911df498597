/* SPDX-License-Identifier: Apache-2.0 */
/*
 * git.h: patch capture with libgit2 (the daemon's /diff, /files, final.patch and commits.log;
 * docs/upstream.md, "Patch capture").
 *
 * The agent edits a source tree whose repository holds one commit, the base. At any time the
 * harness must be able to say what the agent changed, as a git patch against that base:
 * staged or not, committed or not, with new files that the tree's .gitignore files do not
 * ignore, deletions, mode changes, symbolic links as links and binary files as git binary
 * patches. The agent may commit, rewrite history or delete .git; none of that matters,
 * because the comparison runs against a private copy of the base ("the baseline") that the
 * agent's repository cannot touch.
 *
 * Nothing the agent planted ever runs. libgit2 never executes hooks, filter drivers,
 * textconv commands, fsmonitor or external diff tools; on top of that, sb_git_init() empties
 * the configuration search paths so no global, XDG or system configuration is read, and the
 * tree's own .git/config is never read at all (the baseline has its own config; the agent's
 * repository is opened as a bare object store with refs read by hand). Workdir entries are
 * read with lstat(2): a symbolic link is diffed as the link text, never followed. Files that
 * libgit2 would open with a blocking open(2) (.gitignore, .gitattributes, .gitmodules, the
 * agent's .git) are checked first, so a planted FIFO fails the call instead of hanging it;
 * that check can be raced by an agent that is still running, so a caller serving a live
 * agent should run captures under a timeout anyway.
 *
 * The caller is expected to run in a process that has dropped to the tree owner's uid, so
 * that file permissions stop reads of anything the agent could not read itself, and to keep
 * private_dir somewhere the agent cannot write (libgit2 trusts the baseline's config,
 * index and objects).
 *
 * Handles are not thread-safe: serialise the calls made on one baseline. Paths are used as
 * given: pass absolute ones.
 */
#ifndef SB_GIT_H
#define SB_GIT_H

#include "sb/common.h"
#include "sb/error.h"

/*
 * Process-wide setup: initialise libgit2 and empty its configuration search paths (system,
 * XDG, global, programdata) so that nothing from HOME, XDG_CONFIG_HOME or /etc is ever read.
 * Call once before any other sb_git_* function; later calls do nothing and succeed. Not
 * async-signal-safe; call it before starting threads.
 */
int sb_git_init(struct sb_error **err);

/*
 * Record the baseline of the repository whose worktree is `worktree`: create `private_dir`
 * (mode 0700; it must not exist yet, its parent must), make it a bare repository with its own
 * config (core.symlinks=true, core.filemode=true, core.autocrlf=false,
 * core.ignorecase=false, no hooks), copy into it the objects of the HEAD commit (the commit,
 * its tree and every blob), detach its HEAD at that commit and write a private index holding
 * the base tree, with its stat cache primed from the worktree so that the first capture is as
 * cheap as the next. worktree/.git must be a directory (not a link or a "gitdir:" file),
 * whose objects are plain files with no alternates; its HEAD is resolved by hand and its
 * config is never read.
 *
 * Errors: ENOENT when the worktree has no repository or no HEAD commit, EEXIST when
 * private_dir exists, EINVAL for a .git or control file that could block (see above), EIO
 * (with libgit2's message) for other repository failures. On failure nothing is left at
 * private_dir.
 */
int sb_git_baseline_create(const char *worktree, const char *private_dir, struct sb_error **err);

/*
 * The commit HEAD names in the .git directory gitfd, as 40 hex digits in hex: read by hand
 * from HEAD, the loose ref it points at or packed-refs (no links, bounded sizes, at most 5
 * symbolic steps, ref names checked). What sb_git_baseline_create resolves; exposed for the
 * fuzz target over an agent's .git. Returns 0, or -1 when HEAD names no commit.
 */
int sb_git_resolve_head(int gitfd, char hex[41]);

struct sb_git_baseline; /* opaque */

/*
 * Open a baseline created by sb_git_baseline_create, bound to `worktree` (normally the same
 * directory it was created from, or a copy of it). *ret is the caller's and is freed with
 * sb_git_baseline_free. Errors: ENOENT when private_dir is not a baseline, EIO otherwise.
 */
int sb_git_baseline_open(const char *private_dir, const char *worktree,
    struct sb_git_baseline **ret, struct sb_error **err);

/* Free b (NULL is fine). */
void sb_git_baseline_free(struct sb_git_baseline *b);

static inline void
sb_git_baseline_freep(struct sb_git_baseline **b)
{
	sb_git_baseline_free(*b);
}
#define _cleanup_git_baseline_ _cleanup_(sb_git_baseline_freep)

/* The base commit id, 40 lower-case hex digits, owned by b. */
const char *sb_git_baseline_commit(const struct sb_git_baseline *b);

enum sb_git_status {
	SB_GIT_ADDED,
	SB_GIT_MODIFIED,
	SB_GIT_DELETED,
};

/* One changed path, for GET /files. */
struct sb_git_file {
	char *path;		   /* relative to the worktree, as in the diff */
	enum sb_git_status status; /* a rename is a DELETED plus an ADDED */
	size_t additions;	   /* lines; 0 for a binary file */
	size_t deletions;
	bool binary;
	size_t diff_off, diff_len; /* its section of the capture's diff (sb_git_capture) */
};

struct sb_git_capture {
	char *diff;		    /* NUL-terminated; "" when nothing changed */
	size_t diff_len;	    /* bytes in diff, not counting the NUL */
	struct sb_git_file *files; /* in diff order (sorted by path); NULL when nfiles == 0 */
	size_t nfiles;
};

#define SB_GIT_CAPTURE_INIT { .diff = NULL, .diff_len = 0, .files = NULL, .nfiles = 0 }

/*
 * Capture the worktree's change against the base commit into *ret, which the caller
 * releases with sb_git_capture_release. The diff is git's patch format ("diff --git a/x b/x",
 * full-length index lines for binary files, "GIT binary patch" blocks, 3 lines of context,
 * no renames: a rename is a delete plus an add) and applies with `git apply --binary` on a
 * pristine checkout of the base. Untracked files that the tree's .gitignore files do not
 * ignore are included with their content; directories holding their own .git (nested
 * repositories) and every ".git" entry are skipped; submodule (gitlink) contents are not
 * looked into.
 *
 * The private index's stat cache is refreshed and written back (its content stays the base
 * tree), so unchanged files are not read again on the next call. If another process holds
 * the index lock, the refresh is simply not saved.
 *
 * Errors: EFBIG when the diff would exceed max_diff_bytes (checked while it is produced, and
 * before any text when there are more changed paths than could fit) or a changed file is
 * larger than SB_GIT_FILE_MAX; EACCES when a path cannot be read; EINVAL when a .gitignore,
 * .gitattributes or .gitmodules the diff would read is neither a regular file nor a
 * directory (a FIFO would block for ever); EIO for other failures. On failure *ret is
 * untouched.
 */
int sb_git_capture(struct sb_git_baseline *b, size_t max_diff_bytes, struct sb_git_capture *ret,
    struct sb_error **err);

/* Free what c holds and reset it to SB_GIT_CAPTURE_INIT. Safe on a released capture. */
void sb_git_capture_release(struct sb_git_capture *c);

/*
 * The commits the agent made on top of the base in the worktree's own repository
 * (worktree/.git, if it is still a directory and its HEAD descends from the base), newest
 * first, each as "<40-hex id>\n<subject>\n<body>\n---\n" (subject: the first paragraph of
 * the message on one line; body: the rest, trimmed). *ret is "" when there are none, or when
 * that repository is missing, broken or unrelated to the base: those are never errors.
 * At most max bytes (max >= 4): a longer log is cut and ends with "...\n". The agent's
 * repository is opened as a bare object store: HEAD and its ref are read by hand (no links,
 * no FIFOs, bounded size), its config is never read, and a .git holding links, FIFOs or
 * alternates counts as broken. Nothing in it runs.
 *
 * *ret is malloc'd and owned by the caller. Errors: EINVAL when max < 4.
 */
int sb_git_commits_log(struct sb_git_baseline *b, size_t max, char **ret, struct sb_error **err);

#endif

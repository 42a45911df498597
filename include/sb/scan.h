/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scan.h: the answer-seeking scan (docs/running.md, "Flags"). After a run, what the agent
 * did is searched for attempts on the answer: reads of the hidden files, digging in git's
 * history, network tools and the URLs of the project, the advisory or the fix, snooping on
 * other processes, checks the daemon refused, and the dataset's canary. Each hit is a flag
 * with its evidence; flags are shown with the grade, they never change it.
 *
 * Everything scanned is the agent's to write (dialog.jsonl, its patch) except daemon.log:
 * the scan reads it bounded, as bytes, and copies excerpts only into JSON strings (a reader
 * that prints them escapes them).
 */
#ifndef SB_SCAN_H
#define SB_SCAN_H

#include <jansson.h>
#include <stddef.h>

#include "sb/common.h"

#define SB_SCAN_FLAGS_MAX  64	/* flags kept; the count goes on */
#define SB_SCAN_EXCERPT	   160	/* bytes of evidence around a hit */
#define SB_SCAN_MIN_COMMIT 7	/* hex digits of the fix's commit that name it (as git takes them) */
#define SB_SCAN_READ_MAX   (64 * 1024 * 1024) /* bytes of dialog.jsonl or daemon.log read */

/* What is looked for, from the task (strings may be NULL; lists NULL-terminated). */
struct sb_scan_task {
	const char *repository;		    /* the project's URL */
	const char *const *references;	    /* the advisory, the issue, the fix's URL... */
	const char *patch_commit;	    /* the fix's commit id */
	const char *canary;		    /* the dataset's canary string */
	const char *hidden_dir;		    /* where the hidden files are: "/ssebench" */
};

/*
 * The flags found so far: an array of {kind, source, seq, match, excerpt}, at most 8 of a
 * kind (cheap flags of one kind cannot push out another), a count per kind, and the total.
 * One dialog entry counts once per kind.
 */
struct sb_scan {
	json_t *flags;
	json_t *counts; /* {kind: n} */
	unsigned long total;
	long long last_seq[8];	   /* per kind: the entry last counted, plus one (0: none) */
	const char *last_source[8];
};

void sb_scan_init(struct sb_scan *s);
void sb_scan_release(struct sb_scan *s);

/*
 * dialog.jsonl (len bytes at text): each tool call's arguments by field (a shell command gets
 * every rule, a path or URL the path rules, other text none), the tool's name (a web tool),
 * and every line, parsed or not, against the canary. A line naming a tool that does not
 * parse, or arguments too deep or too many, are flagged "unscanned".
 */
void sb_scan_dialog(struct sb_scan *s, const struct sb_scan_task *t, const char *text,
    size_t len);

/*
 * daemon.log: the requests the daemon refused on the agent's channel ("refused"), stamped
 * from `since` to `until` (ISO 8601 times as the logs write them: the agent's start and the
 * end of its phase, so that the entrypoint's own probes of the gate, refused by design before
 * and after the agent, do not count; NULL: no bound). A line without a time counts.
 */
void sb_scan_daemon_log(struct sb_scan *s, const char *text, size_t len, const char *since,
    const char *until);

/* A path or a URL (a tool's file_path, url, ...): the path rules only. */
void sb_scan_path(struct sb_scan *s, const struct sb_scan_task *t, const char *source,
    long long seq, const char *path, size_t len);

/* A text that could not be scanned (too large): a flag of kind "unscanned" saying why, as
 * an agent could hide its commands in a record too large to read. */
void sb_scan_unscanned(struct sb_scan *s, const char *source, const char *why);

/* Any other text of the agent's (its patch): the canary only. */
void sb_scan_canary(struct sb_scan *s, const struct sb_scan_task *t, const char *source,
    const char *text, size_t len);

/*
 * One shell command against every rule (for tests and the fuzzer): each kind it matches is
 * added once, with the given source and seq.
 */
void sb_scan_command(struct sb_scan *s, const struct sb_scan_task *t, const char *source,
    long long seq, const char *cmd, size_t len);

#endif

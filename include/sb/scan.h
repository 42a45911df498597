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
#define SB_SCAN_MIN_COMMIT 10	/* hex digits of the fix's commit that count as naming it */
#define SB_SCAN_READ_MAX   (64 * 1024 * 1024) /* bytes of dialog.jsonl or daemon.log read */

/* What is looked for, from the task (strings may be NULL; lists NULL-terminated). */
struct sb_scan_task {
	const char *repository;		    /* the project's URL */
	const char *const *references;	    /* the advisory, the issue, the fix's URL... */
	const char *patch_commit;	    /* the fix's commit id */
	const char *canary;		    /* the dataset's canary string */
	const char *hidden_dir;		    /* where the hidden files are: "/ssebench" */
};

/* The flags found so far: an array of {kind, source, seq, match, excerpt}, and a count. */
struct sb_scan {
	json_t *flags;
	unsigned long total;
};

void sb_scan_init(struct sb_scan *s);
void sb_scan_release(struct sb_scan *s);

/*
 * dialog.jsonl (len bytes at text): every tool call's arguments (each string in "args" of a
 * tool entry, and the tool's name) against every rule, and every entry's strings against the
 * canary. A line that is not a JSON object is skipped.
 */
void sb_scan_dialog(struct sb_scan *s, const struct sb_scan_task *t, const char *text,
    size_t len);

/*
 * daemon.log: the requests the daemon refused on the agent's channel ("refused"), from the
 * line stamped `since` on (an ISO 8601 time as the logs write it: the agent's start, so that
 * the entrypoint's own probe of the gate, which is refused by design, does not count; NULL:
 * every line). A line without a time counts.
 */
void sb_scan_daemon_log(struct sb_scan *s, const char *text, size_t len, const char *since);

/* A text that could not be scanned (too large): a flag of kind "unscanned" saying why, as
 * an agent could hide its commands in a record too large to read. */
void sb_scan_unscanned(struct sb_scan *s, const char *source, const char *why);

/* Any other text of the agent's (its patch): the canary only. */
void sb_scan_canary(struct sb_scan *s, const struct sb_scan_task *t, const char *source,
    const char *text, size_t len);

/*
 * One command or argument string against the rules (for tests and the fuzzer): each kind it
 * matches is added once, with the given source and seq.
 */
void sb_scan_command(struct sb_scan *s, const struct sb_scan_task *t, const char *source,
    long long seq, const char *cmd, size_t len);

#endif

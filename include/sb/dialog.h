/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dialog.h: writing an agent's session record, $SSE_ARCHIVE/dialog.jsonl (the dialog
 * protocol: docs/upstream.md, "The session record").
 *
 * One JSON object per line, each with "seq" (0, 1, 2, ... in file order), "ts" (ISO 8601
 * UTC, milliseconds) and "type" (init, prompt, message, thinking, tool, complete), then the
 * entry's own fields. Several writers may append to one file (a wrapper and `sse dialog`
 * from a shell): each append takes an exclusive lock, finds the next seq from the file when
 * another writer has changed it, and writes the line with one write(2).
 *
 * The record is the agent's own account of its session, written as the agent: it is shown,
 * never trusted for grading (docs/upstream.md, "Known weaknesses and our answers", 21).
 */
#ifndef SB_DIALOG_H
#define SB_DIALOG_H

#include <jansson.h>
#include <sys/types.h>

#include "sb/common.h"
#include "sb/error.h"

#define SB_DIALOG_FILE_MAX  (256 * 1024 * 1024) /* a dialog.jsonl we scan for its last seq */
#define SB_DIALOG_ENTRY_MAX (8 * 1024 * 1024)	/* bytes of one entry (longer texts are cut) */
/* The largest seq: 2^53, the last integer every JSON reader holds exactly. A line with a seq
 * past it (the agent writes the file) is not counted; the next seq saturates there. */
#define SB_DIALOG_SEQ_MAX (1LL << 53)

struct sb_dialog {
	int fd;
	long long next_seq;
	off_t size; /* the file's size after our last write, or -1: rescan before appending */
};

#define SB_DIALOG_INIT { -1, 0, -1 }

enum sb_dialog_flags {
	SB_DIALOG_TRUNCATE = 1 << 0, /* start a new record (the agent's first entry) */
};

/* Open (creating it 0644) the record at path; never follows a symbolic link there. */
int sb_dialog_open(struct sb_dialog *d, const char *path, unsigned flags, struct sb_error **err);

/*
 * Append one entry of the given type. fields (may be NULL) is an object whose members
 * follow seq, ts and type; it is consumed (its reference is stolen) in every case. A string
 * member longer than SB_DIALOG_ENTRY_MAX / 2 is cut, with " [cut]" at its end.
 */
int sb_dialog_append(struct sb_dialog *d, const char *type, json_t *fields, struct sb_error **err);

void sb_dialog_close(struct sb_dialog *d);

/*
 * Reading a record (the daemon's GET /dialog): the entries of the len bytes at s whose
 * seq is past since, in file order, as a new array. A line that is not one JSON object
 * with an integer seq is skipped: the file is the agent's to write.
 */
json_t *sb_dialog_entries_since(const char *s, size_t len, long long since);

/* "2026-12-01T07:54:57.194Z" for now, into out (at least 32 bytes). */
void sb_dialog_timestamp(char out[32]);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sse.h: what the files of the `sse` command share. `sse` is the agent's and the agent
 * wrapper's tool inside a run (docs/sse.md; upstream's SDK: docs/upstream.md, "The SDK and
 * the task prompt"): it reads the task through the daemon's agent-facing API (sdk.h), builds
 * the task prompt (prompt.h), runs the daemon's tools, and writes the session record
 * (dialog.h), turning an agent CLI's event stream into dialog entries (events.c).
 */
#ifndef SSE_SSE_H
#define SSE_SSE_H

#include <jansson.h>

#include "sb/common.h"
#include "sb/dialog.h"

/* The event streams `sse agent` understands: one JSON object per line. */
enum events_format {
	EVENTS_CLAUDE_CODE, /* claude -p --output-format stream-json --verbose */
	EVENTS_CODEX,	    /* codex exec --json */
	EVENTS_OPENCODE,    /* opencode run --format json */
	EVENTS_NONE,	    /* not read: the program's output goes to the log as it is */
};

/* "claude-code", "codex", "opencode", "none" -> the format; -1 if unknown. */
int events_format_parse(const char *name);

/* What a stream said about the session as a whole, for the "complete" entry. */
struct events_summary {
	long long turns, tokens_in, tokens_out;
	bool failed;	   /* the stream reported a failed or errored session */
	char *last_text;   /* the last assistant message (or the final result text) */
	char *error;	   /* the last error the stream reported */
};

struct events;

/* A converter writing to d (which must stay open while it lives; NULL: no record, the
 * stream is still read for its summary). */
struct events *events_new(enum events_format fmt, struct sb_dialog *d);

/* One line of the stream (without its newline). Lines that are not JSON objects, and events
 * of a kind we do not know, are counted and otherwise ignored. A dialog write error is
 * returned (-1, err set); the caller decides whether to go on. */
int events_feed(struct events *e, const char *line, size_t len, struct sb_error **err);

#define EVENTS_LINE_MAX (16 * 1024 * 1024) /* one event line of an agent CLI; longer: dropped */

/*
 * Bytes of the stream as they arrive, in chunks of any size: each complete line goes to
 * events_feed, a line longer than EVENTS_LINE_MAX is dropped whole. Returns -1 with the
 * first error when feeding a line failed (the later lines were fed all the same).
 */
int events_take(struct events *e, const char *p, size_t n, struct sb_error **err);

/* The stream ended: a last line without its newline is fed, and tools still running are
 * closed as errors ("the agent ended first"). */
int events_finish(struct events *e, struct sb_error **err);

const struct events_summary *events_summary(const struct events *e);
size_t events_ignored(const struct events *e);
/* Of those, the lines that were not one JSON object at all (a broken or oversized line):
 * the record says how many (complete's unrecorded_events), for the answer-seeking scan. */
size_t events_unparsed(const struct events *e);
void events_free(struct events *e);

#endif

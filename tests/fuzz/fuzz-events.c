/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-events.c: the converters of the agent CLIs' event streams (src/sse/events.c), which
 * read what a program the agent controls prints. Layout of an input: byte 0's low four bits
 * pick the format (Claude Code, Codex, OpenCode), its high four bits the size of the chunks
 * the stream arrives in (0: one chunk); the rest is the stream. It is fed twice: one line
 * at a time to events_feed, and in chunks to events_take (what `sse agent` reads from the
 * program's pipe), each then finished. The dialog entries go to a file of the target's own,
 * truncated for each input.
 *
 * Checked beyond memory safety: both ways give the same summary.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sb/dialog.h"
#include "sb/mem.h"

#include "../../src/sse/sse.h"
#include "fuzz.h"

static char *dialog_path;

static void
remove_dialog(void)
{
	(void)unlink(dialog_path);
	*strrchr(dialog_path, '/') = '\0';
	(void)rmdir(dialog_path);
}

static bool
same_text(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t chunks[16] = { 0, 1, 2, 3, 5, 7, 8, 13, 16, 31, 64, 100, 255, 512,
		4096, 65536 };
	struct sb_dialog d = SB_DIALOG_INIT;
	struct events *e, *c;
	const struct events_summary *se, *sc;
	const char *p, *end;
	enum events_format fmt;
	size_t step;

	if (dialog_path == NULL) {
		char dir[] = "/tmp/sb-fuzz-events.XXXXXX";

		if (mkdtemp(dir) == NULL)
			abort();
		dialog_path = sb_xasprintf("%s/dialog.jsonl", dir);
		atexit(remove_dialog);
	}
	if (size < 1 || sb_dialog_open(&d, dialog_path, SB_DIALOG_TRUNCATE, NULL) < 0)
		return 0;
	fmt = (enum events_format)((data[0] & 0x0f) % EVENTS_NONE);
	step = chunks[data[0] >> 4];
	e = events_new(fmt, &d);
	for (p = (const char *)data + 1, end = (const char *)data + size; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);

		(void)events_feed(e, p, n, NULL);
		p += n + 1;
	}
	(void)events_finish(e, NULL);
	c = events_new(fmt, &d);
	for (p = (const char *)data + 1; p < end;) {
		size_t n = step == 0 || step > (size_t)(end - p) ? (size_t)(end - p) : step;

		(void)events_take(c, p, n, NULL);
		p += n;
	}
	(void)events_finish(c, NULL);
	se = events_summary(e);
	sc = events_summary(c);
	if (se->turns != sc->turns || se->tokens_in != sc->tokens_in ||
	    se->tokens_out != sc->tokens_out || se->failed != sc->failed ||
	    !same_text(se->last_text, sc->last_text) || !same_text(se->error, sc->error) ||
	    events_ignored(e) != events_ignored(c))
		abort();
	events_free(e);
	events_free(c);
	sb_dialog_close(&d);
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-events.c: the converters of the agent CLIs' event streams (src/sse/events.c), which
 * read what a program the agent controls prints. Layout of an input: byte 0 picks the
 * format (Claude Code, Codex, OpenCode); the rest is fed one line at a time, then the
 * stream is finished. The dialog entries go to a file of the target's own, truncated for
 * each input.
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

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sb_dialog d = SB_DIALOG_INIT;
	struct events *e;
	const char *p, *end;

	if (dialog_path == NULL) {
		char dir[] = "/tmp/sb-fuzz-events.XXXXXX";

		if (mkdtemp(dir) == NULL)
			abort();
		dialog_path = sb_xasprintf("%s/dialog.jsonl", dir);
		atexit(remove_dialog);
	}
	if (size < 1 || sb_dialog_open(&d, dialog_path, SB_DIALOG_TRUNCATE, NULL) < 0)
		return 0;
	e = events_new((enum events_format)(data[0] % EVENTS_NONE), &d);
	for (p = (const char *)data + 1, end = (const char *)data + size; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);

		(void)events_feed(e, p, n, NULL);
		p += n + 1;
	}
	(void)events_finish(e, NULL);
	(void)events_summary(e);
	events_free(e);
	sb_dialog_close(&d);
	return 0;
}

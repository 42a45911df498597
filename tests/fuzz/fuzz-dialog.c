/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-dialog.c: the readers of a dialog.jsonl, which the agent writes: the daemon's
 * GET /dialog (libsb/dialog.c:sb_dialog_entries_since) and the writer's scan for the next
 * seq before it appends (scan_next_seq, through sb_dialog_append).
 *
 * Layout of an input: byte 0 picks the since of the read (-1, 0, 1, 2^53 - 1, 2^53, or the
 * largest json_int_t); the rest is the file.
 *
 * Checked beyond memory safety: every entry read has an integer seq past since; after an
 * append, the file's last line is the new entry, whose seq is past every seq below
 * SB_DIALOG_SEQ_MAX in the file (or is SB_DIALOG_SEQ_MAX).
 */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sb/buf.h"
#include "sb/dialog.h"
#include "sb/fs.h"
#include "sb/json.h"
#include "sb/mem.h"

#include "fuzz.h"

static char *path;
static int dir_fd = -1;

static void
remove_file(void)
{
	(void)unlink(path);
	*strrchr(path, '/') = '\0';
	(void)rmdir(path);
}

/* The largest seq below SB_DIALOG_SEQ_MAX on any line, or -1. */
static long long
highest_seq(const char *s, size_t len)
{
	json_t *all = sb_dialog_entries_since(s, len, -1);
	long long hi = -1;
	json_t *e;
	size_t i;

	json_array_foreach (all, i, e) {
		long long v = json_integer_value(json_object_get(e, "seq"));

		if (v > hi && v < SB_DIALOG_SEQ_MAX)
			hi = v;
	}
	json_decref(all);
	return hi;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const long long sinces[] = { -1, 0, 1, SB_DIALOG_SEQ_MAX - 1, SB_DIALOG_SEQ_MAX,
		INT64_MAX };
	struct sb_dialog d = SB_DIALOG_INIT;
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(SB_DIALOG_FILE_MAX);
	const char *file, *last;
	json_t *entries, *e, *mine = NULL;
	long long since, hi, seq;
	size_t i, n;
	int fd;

	if (path == NULL) {
		char dir[] = "/tmp/sb-fuzz-dialog.XXXXXX";

		if (mkdtemp(dir) == NULL)
			abort();
		path = sb_xasprintf("%s/dialog.jsonl", dir);
		dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dir_fd < 0)
			abort();
		atexit(remove_file);
	}
	if (size < 1)
		return 0;
	since = sinces[data[0] % SB_ARRAY_SIZE(sinces)];
	file = (const char *)data + 1;
	n = size - 1;

	entries = sb_dialog_entries_since(file, n, since);
	json_array_foreach (entries, i, e)
		if (!json_is_integer(json_object_get(e, "seq")) ||
		    json_integer_value(json_object_get(e, "seq")) <= since)
			abort();
	json_decref(entries);

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, file, n) != (ssize_t)n)
		abort();
	close(fd);
	if (sb_dialog_open(&d, path, 0, NULL) < 0 ||
	    sb_dialog_append(&d, "message", json_pack("{s:s}", "text", "fuzz"), NULL) < 0)
		abort();
	sb_dialog_close(&d);
	if (sb_read_file_at(dir_fd, "dialog.jsonl", 0, &b, NULL) < 0 || b.len == 0 ||
	    b.s[b.len - 1] != '\n')
		abort();
	b.s[--b.len] = '\0';
	last = memrchr(b.s, '\n', b.len); /* the file may hold NUL bytes: not strrchr */
	last = last != NULL ? last + 1 : b.s;
	if (sb_json_load(last, (size_t)(b.s + b.len - last), SIZE_MAX, &mine, NULL) < 0 ||
	    strcmp(json_string_value(json_object_get(mine, "text")) ?: "", "fuzz") != 0)
		abort();
	seq = json_integer_value(json_object_get(mine, "seq"));
	hi = highest_seq(file, n);
	if (seq > SB_DIALOG_SEQ_MAX || (seq <= hi && seq != SB_DIALOG_SEQ_MAX))
		abort();
	json_decref(mine);
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-scan.c: the answer-seeking scan (src/libsb/scan.c) over what the agent wrote: its
 * dialog.jsonl, a shell command, a path, its patch (for the canary), and daemon.log.
 *
 * Layout of an input: byte 0 picks the reader (0 dialog, 1 command, 2 path, 3 canary,
 * 4 daemon.log with a window); the rest is the text.
 *
 * Checked beyond memory safety: at most SB_SCAN_FLAGS_MAX flags and 8 of a kind, each of a
 * known kind with a seq that is null or not negative; the counts per kind add up to the
 * total, which is at least what is kept; every excerpt and match is text that prints as
 * text (no control byte, no C1 control, valid UTF-8) and is bounded.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sb/buf.h"
#include "sb/scan.h"

#include "fuzz.h"

static const char *const refs[] = { "https://nvd.nist.gov/vuln/detail/CVE-2023-53154",
	"https://github.com/DaveGamble/cJSON/issues/800", NULL };
static const struct sb_scan_task task = {
	.repository = "https://github.com/DaveGamble/cJSON",
	.references = refs,
	.patch_commit = "77852dba3f539d057cae97f5f499ffba138b5084",
	.canary = "SSEBENCH-CANARY-0123456789abcdef",
	.hidden_dir = "/ssebench",
};

static const char *const known[] = { "hidden_path", "git_history", "network", "answer_reference",
	"proc_snoop", "refused", "canary", "unscanned" };

static void
check_text(const char *s, size_t max)
{
	size_t n;

	if (s == NULL)
		abort();
	n = strlen(s);
	if (n > max)
		abort();
	for (size_t i = 0; i < n;) {
		size_t k = sb_utf8_seq_len((const unsigned char *)s + i, n - i);

		if (k == 0 || (k == 1 && ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)))
			abort();
		i += k;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sb_scan s;
	const char *text = size > 0 ? (const char *)data + 1 : "";
	size_t len = size > 0 ? size - 1 : 0, i, per[8] = { 0 };
	json_int_t sum = 0;
	const json_t *f, *v;
	const char *k;

	sb_scan_init(&s);
	switch (size > 0 ? data[0] % 5 : 0) {
	case 0: sb_scan_dialog(&s, &task, text, len); break;
	case 1: sb_scan_command(&s, &task, "dialog", 1, text, len); break;
	case 2: sb_scan_path(&s, &task, "dialog", 2, text, len); break;
	case 3: sb_scan_canary(&s, &task, "final.patch", text, len); break;
	default:
		sb_scan_daemon_log(&s, text, len, "2026-01-01T00:00:00.000Z", "2026-12-31T00:00:00.000Z");
		break;
	}
	if (json_array_size(s.flags) > SB_SCAN_FLAGS_MAX || s.total < json_array_size(s.flags))
		abort();
	json_array_foreach (s.flags, i, f) {
		const char *kind = json_string_value(json_object_get(f, "kind"));
		const json_t *seq = json_object_get(f, "seq");
		size_t j;

		for (j = 0; j < 8 && (kind == NULL || strcmp(kind, known[j]) != 0); j++)
			;
		if (j == 8 || ++per[j] > 8)
			abort();
		if (!json_is_null(seq) && (!json_is_integer(seq) || json_integer_value(seq) < 0))
			abort();
		check_text(json_string_value(json_object_get(f, "excerpt")), SB_SCAN_EXCERPT * 4);
		check_text(json_string_value(json_object_get(f, "match")), 4096);
	}
	json_object_foreach (s.counts, k, v)
		sum += json_integer_value(v);
	if (sum != (json_int_t)s.total)
		abort();
	sb_scan_release(&s);
	return 0;
}

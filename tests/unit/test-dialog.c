/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-dialog.c: dialog.jsonl: seq counts from 0 in file order; two writers on one file
 * never repeat a seq; truncation starts over; an entry cannot bring its own seq or type; long
 * strings are cut on a UTF-8 boundary; a symbolic link is never followed.
 */
#include "config.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "sb/buf.h"
#include "sb/dialog.h"
#include "sb/fs.h"
#include "sb/json.h"
#include "sb/mem.h"

#include "unit.h"

static char dir[] = "/tmp/sbtest-dialog.XXXXXX";

static void
setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void
teardown(void)
{
	static const char *const names[] = { "a.jsonl", "b.jsonl", "c.jsonl", "link.jsonl" };

	for (size_t i = 0; i < SB_ARRAY_SIZE(names); i++) {
		_cleanup_free_ char *p = sb_xasprintf("%s/%s", dir, names[i]);

		(void)unlink(p);
	}
	(void)rmdir(dir);
}

static char *
path_of(const char *name)
{
	return sb_xasprintf("%s/%s", dir, name);
}

/* Every line of the file, parsed. */
static json_t *
entries(const char *path)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(1 << 26);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	json_t *all = json_array();
	char *save = NULL;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(sb_buf_read_fd(&b, fd, NULL), 0);
	for (char *l = strtok_r(b.s, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
		json_t *j = NULL;

		ck_assert_int_eq(sb_json_load(l, strlen(l), 1 << 26, &j, NULL), 0);
		json_array_append_new(all, j);
	}
	return all;
}

START_TEST(test_seq_ts_type)
{
	_cleanup_free_ char *p = path_of("a.jsonl");
	struct sb_dialog d = SB_DIALOG_INIT;
	json_t *all, *e;
	size_t i;

	ck_assert_int_eq(sb_dialog_open(&d, p, SB_DIALOG_TRUNCATE, NULL), 0);
	ck_assert_int_eq(sb_dialog_append(&d, "init", json_pack("{s:{s:s}}", "data", "agent", "x"),
			     NULL), 0);
	/* An entry's own seq, ts and type are replaced by ours. */
	ck_assert_int_eq(sb_dialog_append(&d, "message",
			     json_pack("{s:i, s:s, s:s}", "seq", 99, "type", "complete", "content", "hi"),
			     NULL), 0);
	ck_assert_int_eq(sb_dialog_append(&d, "complete", NULL, NULL), 0);
	sb_dialog_close(&d);
	all = entries(p);
	ck_assert_uint_eq(json_array_size(all), 3);
	json_array_foreach (all, i, e) {
		const char *ts = json_string_value(json_object_get(e, "ts"));

		ck_assert_int_eq(json_integer_value(json_object_get(e, "seq")), (json_int_t)i);
		ck_assert_ptr_nonnull(ts);
		ck_assert_uint_eq(strlen(ts), 24); /* 2026-12-01T07:54:57.194Z */
		ck_assert_int_eq(ts[23], 'Z');
	}
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(all, 1), "type")), "message");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(all, 1), "content")), "hi");
	/* The first keys are seq, ts, type, in that order. */
	{
		_cleanup_free_ char *s = sb_json_dumps(json_array_get(all, 0), JSON_COMPACT);

		ck_assert_int_eq(strncmp(s, "{\"seq\":0,\"ts\":", 14), 0);
	}
	json_decref(all);

	/* Opened again without truncation: seq goes on; with it: starts over. */
	ck_assert_int_eq(sb_dialog_open(&d, p, 0, NULL), 0);
	ck_assert_int_eq(sb_dialog_append(&d, "thinking", json_pack("{s:s}", "content", "t"), NULL), 0);
	sb_dialog_close(&d);
	all = entries(p);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(all, 3), "seq")), 3);
	json_decref(all);
	ck_assert_int_eq(sb_dialog_open(&d, p, SB_DIALOG_TRUNCATE, NULL), 0);
	ck_assert_int_eq(sb_dialog_append(&d, "init", NULL, NULL), 0);
	sb_dialog_close(&d);
	all = entries(p);
	ck_assert_uint_eq(json_array_size(all), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(all, 0), "seq")), 0);
	json_decref(all);
}
END_TEST

/* The file is the agent's: a seq it wrote at json_int_t's largest value once made the next
 * seq overflow (undefined behaviour; in practice a negative seq). Past SB_DIALOG_SEQ_MAX a
 * line is not counted; at the bound the seq saturates. */
START_TEST(test_seq_hostile)
{
	_cleanup_free_ char *p = path_of("c.jsonl");
	struct sb_dialog d = SB_DIALOG_INIT;
	_cleanup_free_ char *near = sb_xasprintf("{\"seq\": %lld}\n", SB_DIALOG_SEQ_MAX - 1);
	json_t *all;
	FILE *f = fopen(p, "w");

	ck_assert_ptr_nonnull(f);
	fputs("{\"seq\": 9223372036854775807}\n{\"seq\": -5}\n", f);
	fclose(f);
	ck_assert_int_eq(sb_dialog_open(&d, p, 0, NULL), 0);
	ck_assert_int_eq(sb_dialog_append(&d, "message", NULL, NULL), 0);
	all = entries(p);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(all, 2), "seq")), 0);
	json_decref(all);
	/* Another writer appends a line at the bound's edge. */
	f = fopen(p, "a");
	ck_assert_ptr_nonnull(f);
	fputs(near, f);
	fclose(f);
	ck_assert_int_eq(sb_dialog_append(&d, "message", NULL, NULL), 0);
	ck_assert_int_eq(sb_dialog_append(&d, "message", NULL, NULL), 0);
	sb_dialog_close(&d);
	all = entries(p);
	ck_assert_uint_eq(json_array_size(all), 6);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(all, 4), "seq")),
	    SB_DIALOG_SEQ_MAX);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(all, 5), "seq")),
	    SB_DIALOG_SEQ_MAX);
	json_decref(all);
}
END_TEST

/*
 * A line left without its newline (a writer killed mid-line, or the agent) must not swallow
 * the next entry; the reader skips the broken line and keeps the rest. Found by fuzz-dialog.
 */
START_TEST(test_partial_line)
{
	_cleanup_free_ char *p = path_of("a.jsonl");
	struct sb_dialog d = SB_DIALOG_INIT;
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(1 << 20);
	json_t *got;
	FILE *f = fopen(p, "w");

	ck_assert_ptr_nonnull(f);
	fputs("{\"seq\": 3}\n{\"seq\": 4, \"text\": \"cut sh", f);
	fclose(f);
	ck_assert_int_eq(sb_dialog_open(&d, p, 0, NULL), 0);
	ck_assert_int_eq(sb_dialog_append(&d, "message", json_pack("{s:s}", "text", "mine"), NULL), 0);
	sb_dialog_close(&d);
	{
		_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		ck_assert_int_eq(sb_read_file_at(dfd, "a.jsonl", 0, &b, NULL), 0);
	}
	got = sb_dialog_entries_since(b.s, b.len, -1);
	ck_assert_uint_eq(json_array_size(got), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(got, 1), "seq")), 4);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(got, 1), "text")), "mine");
	json_decref(got);
	/* And the reader's since: only what is past it. */
	got = sb_dialog_entries_since(b.s, b.len, 3);
	ck_assert_uint_eq(json_array_size(got), 1);
	json_decref(got);
}
END_TEST

/* Two processes append 200 entries each through their own handles: 400 distinct seqs. */
START_TEST(test_two_writers)
{
	_cleanup_free_ char *p = path_of("b.jsonl");
	struct sb_dialog d = SB_DIALOG_INIT;
	char seen[400] = { 0 };
	json_t *all, *e;
	pid_t kid;
	size_t i;
	int st;

	ck_assert_int_eq(sb_dialog_open(&d, p, SB_DIALOG_TRUNCATE, NULL), 0);
	sb_dialog_close(&d);
	kid = fork();
	ck_assert_int_ge(kid, 0);
	{
		struct sb_dialog mine = SB_DIALOG_INIT;

		ck_assert_int_eq(sb_dialog_open(&mine, p, 0, NULL), 0);
		for (int k = 0; k < 200; k++)
			ck_assert_int_eq(sb_dialog_append(&mine, "message",
					     json_pack("{s:s}", "content", kid == 0 ? "child" : "parent"),
					     NULL), 0);
		sb_dialog_close(&mine);
		if (kid == 0)
			_exit(0);
	}
	ck_assert_int_eq(waitpid(kid, &st, 0), kid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	all = entries(p);
	ck_assert_uint_eq(json_array_size(all), 400);
	json_array_foreach (all, i, e) {
		json_int_t s = json_integer_value(json_object_get(e, "seq"));

		ck_assert(s >= 0 && s < 400);
		ck_assert_msg(!seen[s], "seq %lld twice", (long long)s);
		seen[s] = 1;
	}
	json_decref(all);
}
END_TEST

START_TEST(test_long_string_cut_on_utf8_boundary)
{
	_cleanup_free_ char *p = path_of("c.jsonl");
	const size_t max = SB_DIALOG_ENTRY_MAX / 2, pairs = max / 2 + 100;
	char *big = sb_xmalloc(1 + 2 * pairs + 1);
	struct sb_dialog d = SB_DIALOG_INIT;
	json_t *all;
	const char *got;

	/* "a" then "é" (2 bytes) repeated: the byte at the cut point is inside an "é". */
	big[0] = 'a';
	for (size_t i = 0; i < pairs; i++) {
		big[1 + 2 * i] = (char)0xC3;
		big[2 + 2 * i] = (char)0xA9;
	}
	big[1 + 2 * pairs] = '\0';
	ck_assert_int_eq(sb_dialog_open(&d, p, SB_DIALOG_TRUNCATE, NULL), 0);
	ck_assert_int_eq(sb_dialog_append(&d, "message", json_pack("{s:s}", "content", big), NULL), 0);
	sb_dialog_close(&d);
	all = entries(p);
	got = json_string_value(json_object_get(json_array_get(all, 0), "content"));
	ck_assert_ptr_nonnull(got);
	/* Cut (a whole "é" less than the limit), marked, and still valid UTF-8 (jansson read it). */
	ck_assert_uint_eq(strlen(got), max - 1 + 6);
	ck_assert_str_eq(got + strlen(got) - 6, " [cut]");
	json_decref(all);
	free(big);
}
END_TEST

START_TEST(test_symlink_not_followed)
{
	_cleanup_free_ char *p = path_of("link.jsonl"), *target = path_of("target");
	struct sb_dialog d = SB_DIALOG_INIT;
	struct sb_error *err = NULL;
	struct stat st;

	ck_assert_int_eq(symlink(target, p), 0);
	ck_assert_int_eq(sb_dialog_open(&d, p, SB_DIALOG_TRUNCATE, &err), -1);
	ck_assert_int_eq(sb_error_code(err), ELOOP);
	sb_error_release(&err);
	ck_assert_int_eq(stat(target, &st), -1);
	/* Appending to a closed dialog is an error, and consumes the fields. */
	ck_assert_int_eq(sb_dialog_append(&d, "message", json_object(), &err), -1);
	sb_error_release(&err);
}
END_TEST

static Suite *
dialog_suite(void)
{
	Suite *s = suite_create("dialog");
	TCase *tc = tcase_create("core");

	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_seq_ts_type);
	tcase_add_test(tc, test_two_writers);
	tcase_add_test(tc, test_seq_hostile);
	tcase_add_test(tc, test_partial_line);
	tcase_add_test(tc, test_long_string_cut_on_utf8_boundary);
	tcase_add_test(tc, test_symlink_not_followed);
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(dialog_suite)

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-fs.c: resolution below a directory fd, with openat2 and with the forced O_NOFOLLOW
 * walk, atomic replacement against a planted symlink, and reading hostile files.
 */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "sb/argv.h"
#include "sb/fs.h"
#include "sb/mem.h"

#include "unit.h"

static char root[PATH_MAX];
static char outside[PATH_MAX];
static int root_fd = -1;

static void
put(const char *dir, const char *rel, const char *content)
{
	char *p = sb_xasprintf("%s/%s", dir, rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	close(fd);
	free(p);
}

static void
setup(void)
{
	char *p;

	snprintf(root, sizeof(root), "%s/sbfs.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(root));
	snprintf(outside, sizeof(outside), "%s/sbout.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(outside));
	put(outside, "secret", "the reference patch");
	p = sb_xasprintf("%s/sub", root);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	free(p);
	put(root, "sub/file", "inside");
	put(root, "top", "top");
	/* Links: one that stays inside, one absolute out, one relative out, one dir out. */
	p = sb_xasprintf("%s/sub/in-link", root);
	ck_assert_int_eq(symlink("../top", p), 0);
	free(p);
	p = sb_xasprintf("%s/abs-out", root);
	{
		char *target = sb_xasprintf("%s/secret", outside);

		ck_assert_int_eq(symlink(target, p), 0);
		free(target);
	}
	free(p);
	p = sb_xasprintf("%s/rel-out", root);
	ck_assert_int_eq(symlink("../../../../../../../../etc/passwd", p), 0);
	free(p);
	p = sb_xasprintf("%s/dir-out", root);
	ck_assert_int_eq(symlink(outside, p), 0);
	free(p);
	p = sb_xasprintf("%s/proc-out", root);
	ck_assert_int_eq(symlink("/proc/self/root/etc/passwd", p), 0);
	free(p);
	p = sb_xasprintf("%s/fifo", root);
	ck_assert_int_eq(mkfifo(p, 0644), 0);
	free(p);
	root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(root_fd, 0);
}

static void
rm_tree(const char *dir)
{
	char **names = NULL;
	size_t n = 0;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (sb_list_dir_at(fd, ".", 1000, &names, &n, NULL) == 0) {
		for (size_t i = 0; i < n; i++) {
			char *p = sb_xasprintf("%s/%s", dir, names[i]);
			struct stat st;

			if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
				rm_tree(p);
			else
				unlink(p);
			free(p);
		}
		sb_strv_free(names);
	}
	close(fd);
	rmdir(dir);
}

static void
teardown(void)
{
	close(root_fd);
	rm_tree(root);
	rm_tree(outside);
	sb_fs_force_walk(false);
}

/* Each case is run twice: with openat2 (_i even) and with the forced walk (_i odd). */
static const struct {
	const char *rel;
	bool ok_openat2;
	bool ok_walk; /* the walk refuses every symlink */
	unsigned flags;
} open_cases[] = {
	{ "top", true, true, 0 },
	{ "sub/file", true, true, 0 },
	{ "sub/in-link", true, false, 0 },
	{ "sub/in-link", false, false, SB_OPEN_NO_SYMLINKS },
	{ "abs-out", false, false, 0 },
	{ "rel-out", false, false, 0 },
	{ "dir-out/secret", false, false, 0 },
	{ "proc-out", false, false, 0 },
	{ "../etc/passwd", false, false, 0 },
	{ "/etc/passwd", false, false, 0 },
	{ "sub/../top", false, false, 0 },
	{ "missing", false, false, 0 },
};

START_TEST(test_open_beneath_table)
{
	int c = _i / 2;
	bool walk = _i % 2;
	struct sb_error *err = NULL;
	int fd;

	sb_fs_force_walk(walk);
	fd = sb_open_beneath(root_fd, open_cases[c].rel, O_RDONLY, 0, open_cases[c].flags, &err);
	if (walk ? open_cases[c].ok_walk : open_cases[c].ok_openat2) {
		ck_assert_msg(fd >= 0, "case '%s' (%s): %s", open_cases[c].rel,
		    walk ? "walk" : "openat2", sb_error_message(err));
		close(fd);
	} else {
		ck_assert_msg(fd < 0, "case '%s' (%s) opened", open_cases[c].rel,
		    walk ? "walk" : "openat2");
		ck_assert_ptr_nonnull(err);
	}
	sb_error_release(&err);
}
END_TEST

START_TEST(test_read_file_refuses_fifo_without_blocking)
{
	struct sb_buf b = SB_BUF_INIT(1024);
	struct sb_error *err = NULL;

	/* A plain open(2) of a FIFO with no writer would block forever. */
	ck_assert_int_eq(sb_read_file_at(root_fd, "fifo", 0, &b, &err), -1);
	ck_assert_ptr_nonnull(strstr(sb_error_message(err), "not a regular file"));
	sb_error_release(&err);
	ck_assert_int_eq(sb_read_file_at(root_fd, "sub", 0, &b, &err), -1);
	sb_error_release(&err);
	sb_buf_release(&b);
}
END_TEST

START_TEST(test_read_file_cap)
{
	struct sb_buf small = SB_BUF_INIT(3);
	struct sb_buf ok = SB_BUF_INIT(64);
	struct sb_error *err = NULL;

	ck_assert_int_eq(sb_read_file_at(root_fd, "sub/file", 0, &small, &err), -1);
	ck_assert_int_eq(sb_error_code(err), EFBIG);
	sb_error_release(&err);
	ck_assert_int_eq(sb_read_file_at(root_fd, "sub/file", 0, &ok, &err), 0);
	ck_assert_str_eq(ok.s, "inside");
	sb_buf_release(&small);
	sb_buf_release(&ok);
}
END_TEST

START_TEST(test_atomic_write_replaces_planted_symlink)
{
	struct sb_buf b = SB_BUF_INIT(1024);
	char *secret = sb_xasprintf("%s/secret", outside);
	char *link = sb_xasprintf("%s/result.json", root);
	struct sb_error *err = NULL;
	char got[64] = { 0 };
	struct stat st;
	int fd;

	/* An attacker plants result.json -> a file outside; the root write must not follow. */
	ck_assert_int_eq(symlink(secret, link), 0);
	ck_assert_int_eq(sb_write_file_atomic_at(root_fd, "result.json", "{}\n", 3, 0600, &err), 0);
	ck_assert_int_eq(lstat(link, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	fd = open(secret, O_RDONLY | O_CLOEXEC);
	ck_assert_int_gt(read(fd, got, sizeof(got) - 1), 0);
	close(fd);
	ck_assert_str_eq(got, "the reference patch");
	ck_assert_int_eq(sb_read_file_at(root_fd, "result.json", 0, &b, NULL), 0);
	ck_assert_str_eq(b.s, "{}\n");
	/* Names with a slash are refused. */
	ck_assert_int_eq(sb_write_file_atomic_at(root_fd, "sub/x", "", 0, 0600, &err), -1);
	sb_error_release(&err);
	ck_assert_int_eq(sb_write_file_atomic_at(root_fd, "..", "", 0, 0600, &err), -1);
	sb_error_release(&err);
	free(secret);
	free(link);
	sb_buf_release(&b);
}
END_TEST

START_TEST(test_atomic_write_leaves_no_temp)
{
	char **names = NULL;
	size_t n = 0;

	ck_assert_int_eq(sb_write_file_atomic_at(root_fd, "a", "1", 1, 0644, NULL), 0);
	ck_assert_int_eq(sb_write_file_atomic_at(root_fd, "a", "22", 2, 0644, NULL), 0);
	ck_assert_int_eq(sb_list_dir_at(root_fd, ".", 100, &names, &n, NULL), 0);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(strstr(names[i], ".tmp-") == NULL, "temp left: %s", names[i]);
	sb_strv_free(names);
}
END_TEST

START_TEST(test_list_dir_sorted_and_capped)
{
	struct sb_error *err = NULL;
	char **names = NULL;
	size_t n = 0;

	ck_assert_int_eq(sb_list_dir_at(root_fd, ".", 100, &names, &n, &err), 0);
	for (size_t i = 1; i < n; i++)
		ck_assert_int_lt(strcmp(names[i - 1], names[i]), 0);
	ck_assert_uint_eq(n, 7);
	sb_strv_free(names);
	ck_assert_int_eq(sb_list_dir_at(root_fd, ".", 3, &names, &n, &err), -1);
	ck_assert_int_eq(sb_error_code(err), E2BIG);
	sb_error_release(&err);
	/* Listing through a symlink that leaves is refused. */
	ck_assert_int_eq(sb_list_dir_at(root_fd, "dir-out", 100, &names, &n, &err), -1);
	sb_error_release(&err);
}
END_TEST

START_TEST(test_lstat_does_not_follow)
{
	struct stat st;

	ck_assert_int_eq(sb_lstat_at(root_fd, "abs-out", &st, NULL), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_int_eq(sb_lstat_at(root_fd, "sub/file", &st, NULL), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(sb_lstat_at(root_fd, "dir-out/secret", &st, NULL), -1);
}
END_TEST

/* git.c's size check: no link on the way is followed, not even one that stays inside. */
START_TEST(test_lstat_nofollow_refuses_every_link)
{
	struct sb_error *err = NULL;
	struct stat st;

	ck_assert_int_eq(sb_lstat_nofollow(root_fd, "sub/file", &st, NULL), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(sb_lstat_nofollow(root_fd, "top", &st, NULL), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(sb_lstat_nofollow(root_fd, "sub/in-link", &st, NULL), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_int_eq(sb_lstat_nofollow(root_fd, "dir-out/secret", &st, &err), -1);
	ck_assert_int_eq(sb_error_code(err), ENOTDIR);
	sb_error_release(&err);
	{
		_cleanup_free_ char *p = sb_xasprintf("%s/in-dir", root);

		ck_assert_int_eq(symlink("sub", p), 0);
	}
	ck_assert_int_eq(sb_lstat_nofollow(root_fd, "in-dir/file", &st, NULL), -1);
	ck_assert_int_eq(sb_lstat_at(root_fd, "in-dir/file", &st, NULL), 0);
}
END_TEST

START_TEST(test_mkdir_p)
{
	char *deep = sb_xasprintf("%s/a/b/c", root), *top = sb_xasprintf("%s/a", root);
	struct sb_error *err = NULL;
	struct stat st;

	ck_assert_int_eq(sb_mkdir_p(deep, 0700, NULL), 0);
	ck_assert_int_eq(stat(deep, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0700 & ~umask(022));
	ck_assert_int_eq(stat(top, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	/* Again: nothing to do. A file in the way, and an empty path, fail. */
	ck_assert_int_eq(sb_mkdir_p(deep, 0700, NULL), 0);
	free(deep);
	deep = sb_xasprintf("%s/top/x", root);
	ck_assert_int_lt(sb_mkdir_p(deep, 0755, &err), 0);
	ck_assert_int_eq(sb_error_code(err), ENOTDIR);
	sb_error_release(&err);
	ck_assert_int_lt(sb_mkdir_p("", 0755, &err), 0);
	sb_error_release(&err);
	free(deep);
	free(top);
}
END_TEST

static Suite *
fs_suite(void)
{
	Suite *s = suite_create("fs");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_open_beneath_table, 0, 2 * (int)SB_ARRAY_SIZE(open_cases));
	tcase_add_test(tc, test_read_file_refuses_fifo_without_blocking);
	tcase_add_test(tc, test_read_file_cap);
	tcase_add_test(tc, test_atomic_write_replaces_planted_symlink);
	tcase_add_test(tc, test_atomic_write_leaves_no_temp);
	tcase_add_test(tc, test_list_dir_sorted_and_capped);
	tcase_add_test(tc, test_lstat_does_not_follow);
	tcase_add_test(tc, test_lstat_nofollow_refuses_every_link);
	tcase_add_test(tc, test_mkdir_p);
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(fs_suite)

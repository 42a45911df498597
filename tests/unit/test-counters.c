/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-counters.c: the block devices' directories every run container masks
 * (src/libsb/counters.c:sb_counter_block_dirs), found in a made-up device tree.
 *
 * The attack it stands for (fourth red-team review, issue 13): /sys/block was masked, but it
 * only links to each device's own directory under /sys/devices (.../virtio1/block/vda/stat),
 * which was not, and the host disk's sector counts carried the hidden test. The walk must
 * find every "block" directory however deep, follow no link, and leave out the ones already
 * masked by name. The same for every file system's directory in /sys/fs (the review of that fix: xfs
 * and btrfs keep per-disk figures there too, and only ext4's was masked).
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sb/argv.h"
#include "sb/counters.h"
#include "sb/error.h"

static char root[64];
static char made[32][512];
static size_t nmade;

static void
mk(const char *rel)
{
	char *path = made[nmade++];

	snprintf(path, sizeof(made[0]), "%s/%s", root, rel);
	ck_assert_msg(mkdir(path, 0755) == 0, "mkdir %s", path);
}

static bool
has(const struct sb_argv *a, const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], path) == 0)
			return true;
	return false;
}

START_TEST(test_block_dirs)
{
	_cleanup_argv_ struct sb_argv out = SB_ARGV_INIT;
	struct sb_error *err = NULL;
	char link[512];

	snprintf(root, sizeof(root), "/tmp/sb-counters.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(root));
	mk("pci0000:00");
	mk("pci0000:00/0000:00:02.0");
	mk("pci0000:00/0000:00:02.0/virtio1");
	mk("pci0000:00/0000:00:02.0/virtio1/block");
	mk("pci0000:00/0000:00:02.0/virtio1/block/vda");
	mk("pci0000:00/0000:00:02.0/virtio1/block/vda/vda1");
	mk("pci0000:00/0000:00:04.0");
	mk("pci0000:00/0000:00:04.0/nvme");
	mk("pci0000:00/0000:00:04.0/nvme/nvme0");
	mk("pci0000:00/0000:00:04.0/nvme/nvme0/block");
	mk("pci0000:00/0000:00:04.0/nvme/nvme0/block/nvme0n1");
	mk("system");
	mk("system/cpu");
	mk("elsewhere");
	mk("elsewhere/block");
	/* A link to a block directory is not followed, nor taken. */
	snprintf(link, sizeof(link), "%s/system/linked", root);
	ck_assert_int_eq(symlink("../elsewhere", link), 0);

	ck_assert_int_eq(sb_counter_block_dirs(root, &out, &err), 0);
	ck_assert_msg(has(&out, "pci0000:00/0000:00:02.0/virtio1/block"), "the virtio disk");
	ck_assert_msg(has(&out, "pci0000:00/0000:00:04.0/nvme/nvme0/block"), "the nvme disk");
	ck_assert_msg(has(&out, "elsewhere/block"), "a block directory at depth 1");
	ck_assert_msg(!has(&out, "system/linked/block"), "through a link");
	ck_assert_uint_eq(out.n, 3); /* nothing below a block directory, nothing twice */

	ck_assert_int_eq(sb_counter_block_dirs("/nonexistent/sb-counters", &out, &err), -1);
	ck_assert_ptr_nonnull(err);
	sb_error_release(&err);
	ck_assert_int_eq(unlink(link), 0);
	while (nmade > 0)
		ck_assert_int_eq(rmdir(made[--nmade]), 0);
	ck_assert_int_eq(rmdir(root), 0);
}
END_TEST

/* Every file system's directory in /sys/fs, but cgroup and those listed by name. */
START_TEST(test_fs_dirs)
{
	_cleanup_argv_ struct sb_argv out = SB_ARGV_INIT;
	struct sb_error *err = NULL;
	bool xfs = false;

	snprintf(root, sizeof(root), "/tmp/sb-counters.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(root));
	nmade = 0;
	mk("cgroup");
	mk("xfs");
	mk("btrfs");
	ck_assert_int_eq(sb_counter_fs_dirs(root, &out, &err), 0);
	ck_assert_uint_eq(out.n, 2);
	for (size_t i = 0; i < out.n; i++) {
		ck_assert_msg(strstr(out.v[i], "/cgroup") == NULL, "cgroup is Docker's mount");
		xfs = xfs || strstr(out.v[i], "/xfs") != NULL;
	}
	ck_assert(xfs);
	while (nmade > 0)
		ck_assert_int_eq(rmdir(made[--nmade]), 0);
	ck_assert_int_eq(rmdir(root), 0);

	/* The host's: /sys/fs/ext4 is listed by name, so not twice. */
	sb_argv_release(&out);
	if (sb_counter_fs_dirs("/sys/fs", &out, NULL) == 0)
		for (size_t i = 0; i < out.n; i++)
			ck_assert_str_ne(out.v[i], "/sys/fs/ext4");
}
END_TEST

/* The host's own /sys/devices: its virtual block directory is masked by name, not twice. */
START_TEST(test_listed_left_out)
{
	_cleanup_argv_ struct sb_argv out = SB_ARGV_INIT;
	bool listed = false;

	for (size_t i = 0; sb_counter_dirs[i] != NULL; i++)
		listed = listed || strcmp(sb_counter_dirs[i], "/sys/devices/virtual/block") == 0;
	ck_assert_msg(listed, "/sys/devices/virtual/block is masked by name");
	if (access("/sys/devices/virtual/block", F_OK) != 0)
		return;
	ck_assert_int_eq(sb_counter_block_dirs("/sys/devices", &out, NULL), 0);
	for (size_t i = 0; i < out.n; i++)
		ck_assert_str_ne(out.v[i], "/sys/devices/virtual/block");
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("counters");
	TCase *tc = tcase_create("counters");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_block_dirs);
	tcase_add_test(tc, test_listed_left_out);
	tcase_add_test(tc, test_fs_dirs);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

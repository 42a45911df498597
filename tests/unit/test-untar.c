/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-untar.c: the results stream of a pod (src/ssebench/untar.c), as a hostile pod would
 * write it: links, devices and FIFOs, names that climb out or start at /, a link already in
 * the destination, a second entry for a path, modes with set-uid bits, names with newlines,
 * streams past the bounds, broken headers. Only plain files and directories come out, at
 * 0644 and 0755, below the roots; the rest is counted.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "sb/buf.h"
#include "sb/error.h"
#include "sb/fs.h"
#include "sb/mem.h"

#include "../../src/ssebench/untar.h"
#include "unit.h"

/* One header block: GNU magic unless posix; the checksum filled in. */
static void
header(struct sb_buf *b, const char *name, char type, const char *mode, size_t size,
    bool posix, const char *prefix)
{
	unsigned char h[512] = { 0 };
	unsigned sum = 0;

	memcpy(h, name, strlen(name) < 100 ? strlen(name) : 100);
	memcpy(h + 100, mode, strlen(mode));
	memcpy(h + 108, "0000000", 8);
	memcpy(h + 116, "0000000", 8);
	snprintf((char *)h + 124, 12, "%011llo", (unsigned long long)size & 077777777777ULL);
	memcpy(h + 136, "00000000000", 12);
	h[156] = (unsigned char)type;
	if (posix) {
		memcpy(h + 257, "ustar\0" "00", 8);
		if (prefix != NULL)
			memcpy(h + 345, prefix, strlen(prefix) < 155 ? strlen(prefix) : 155);
	} else {
		memcpy(h + 257, "ustar  \0", 8);
	}
	memset(h + 148, ' ', 8);
	for (size_t i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	sb_buf_append(b, h, 512, NULL);
}

static void
data(struct sb_buf *b, const char *d, size_t n)
{
	static const char zero[512];

	sb_buf_append(b, d, n, NULL);
	if (n % 512)
		sb_buf_append(b, zero, 512 - n % 512, NULL);
}

static void
file(struct sb_buf *b, const char *name, const char *content)
{
	header(b, name, '0', "0000644", strlen(content), false, NULL);
	data(b, content, strlen(content));
}

static void
entry(struct sb_buf *b, const char *name, char type)
{
	header(b, name, type, "0000755", 0, false, NULL);
}

static void
end(struct sb_buf *b)
{
	static const char zero[1024];

	sb_buf_append(b, zero, sizeof(zero), NULL);
}

struct dest {
	char dir[64];
	int results, archive;
};

static void
dest_make(struct dest *d)
{
	char path[128];

	snprintf(d->dir, sizeof(d->dir), "/tmp/test-untar-XXXXXX");
	ck_assert(mkdtemp(d->dir) != NULL);
	snprintf(path, sizeof(path), "%s/results", d->dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	d->results = open(path, O_RDONLY | O_DIRECTORY);
	snprintf(path, sizeof(path), "%s/archive", d->dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	d->archive = open(path, O_RDONLY | O_DIRECTORY);
	ck_assert(d->results >= 0 && d->archive >= 0);
}

static int
rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path) < 0 ? -1 : 0;
}

static void
dest_free(struct dest *d)
{
	close(d->results);
	close(d->archive);
	ck_assert_int_eq(nftw(d->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

/* Unpack b into d; the return of untar_fd, with *st and the error's code. */
static int
unpack(const struct sb_buf *b, struct dest *d, const struct untar_limits *lim,
    struct untar_stats *st, int *code)
{
	struct untar_root roots[] = { { "results", d->results }, { "archive", d->archive } };
	struct untar_limits def = { 1 << 20, 100, 16 };
	struct sb_error *err = NULL;
	char path[128];
	int fd, k;

	snprintf(path, sizeof(path), "%s/stream.tar", d->dir);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	ck_assert(fd >= 0);
	ck_assert_int_eq(write(fd, b->s, b->len), (ssize_t)b->len);
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	k = untar_fd(fd, roots, 2, lim != NULL ? lim : &def, st, &err);
	*code = err != NULL ? sb_error_code(err) : 0;
	sb_error_release(&err);
	close(fd);
	unlink(path);
	return k;
}

/* The mode of path below d (lstat), or -1. */
static int
mode_of(const struct dest *d, const char *rel)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", d->dir, rel);
	if (lstat(path, &st) < 0)
		return -1;
	return (int)(st.st_mode & 07777) | (S_ISDIR(st.st_mode) ? 0100000 : 0) |
	       (S_ISLNK(st.st_mode) ? 0200000 : 0);
}

static char *
content_of(const struct dest *d, const char *rel)
{
	char path[512], *s = sb_xmalloc(4096);
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", d->dir, rel);
	fd = open(path, O_RDONLY | O_NOFOLLOW);
	ck_assert(fd >= 0);
	n = read(fd, s, 4095);
	ck_assert(n >= 0);
	s[n] = '\0';
	close(fd);
	return s;
}

START_TEST(test_plain)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(1 << 24);
	struct dest d;
	struct untar_stats st;
	int code;
	char *c;

	dest_make(&d);
	entry(&b, "results/", '5');
	file(&b, "results/result.json", "{\"a\": 1}\n");
	entry(&b, "archive/notes/", '5');
	/* A set-uid mode in the header: the file comes out 0644 all the same. */
	header(&b, "archive/notes/x.sh", '0', "0004777", 3, false, NULL);
	data(&b, "hi\n", 3);
	/* A directory the header never listed is made on the way. */
	file(&b, "archive/deep/er/f", "");
	/* POSIX ustar: the prefix field and the name. */
	header(&b, "tail", '0', "0000600", 1, true, "archive/pre");
	data(&b, "p", 1);
	end(&b);
	ck_assert_int_eq(unpack(&b, &d, NULL, &st, &code), 0);
	ck_assert_uint_eq(st.files, 4);
	ck_assert_uint_eq(st.left, 0);
	ck_assert_int_eq(mode_of(&d, "results/result.json"), 0644);
	ck_assert_int_eq(mode_of(&d, "archive/notes/x.sh"), 0644);
	ck_assert_int_eq(mode_of(&d, "archive/notes"), 0100755);
	ck_assert_int_eq(mode_of(&d, "archive/deep/er/f"), 0644);
	ck_assert_int_eq(mode_of(&d, "archive/pre/tail"), 0644);
	c = content_of(&d, "results/result.json");
	ck_assert_str_eq(c, "{\"a\": 1}\n");
	free(c);
	dest_free(&d);
}
END_TEST

/* Links, devices, FIFOs: left behind, never made, and the stream goes on after them. */
START_TEST(test_special)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(1 << 24);
	static const char types[] = { '1', '2', '3', '4', '6', '7', 'S', 'V' };
	struct dest d;
	struct untar_stats st;
	int code;

	dest_make(&d);
	for (size_t i = 0; i < sizeof(types); i++) {
		char name[32];

		snprintf(name, sizeof(name), "archive/t%zu", i);
		header(&b, name, types[i], "0000777", 0, false, NULL);
	}
	file(&b, "archive/after", "still read\n");
	end(&b);
	ck_assert_int_eq(unpack(&b, &d, NULL, &st, &code), 0);
	ck_assert_uint_eq(st.left, sizeof(types));
	ck_assert_uint_eq(st.files, 1);
	for (size_t i = 0; i < sizeof(types); i++) {
		char name[32];

		snprintf(name, sizeof(name), "archive/t%zu", i);
		ck_assert_int_eq(mode_of(&d, name), -1);
	}
	ck_assert_int_eq(mode_of(&d, "archive/after"), 0644);
	dest_free(&d);
}
END_TEST

/* Names that climb, start at /, name no root, or go too deep. */
START_TEST(test_escape)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(1 << 24);
	static const char *const names[] = { "../escaped", "archive/../../escaped",
		"results/../escaped", "/escaped", "etc/escaped", "escaped",
		"archive/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/escaped" };
	struct dest d;
	struct untar_stats st;
	int code;
	char path[128];

	dest_make(&d);
	for (size_t i = 0; i < SB_ARRAY_SIZE(names); i++)
		file(&b, names[i], "x");
	end(&b);
	ck_assert_int_eq(unpack(&b, &d, NULL, &st, &code), 0);
	ck_assert_uint_eq(st.files, 0);
	ck_assert_uint_eq(st.left, SB_ARRAY_SIZE(names));
	snprintf(path, sizeof(path), "%s/escaped", d.dir);
	ck_assert_int_eq(access(path, F_OK), -1);
	ck_assert_int_eq(access("/escaped", F_OK), -1);
	ck_assert_int_eq(mode_of(&d, "archive/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/escaped"), -1);
	dest_free(&d);
}
END_TEST

/* A link already in the destination is neither followed nor written through. */
START_TEST(test_link_in_dest)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(1 << 24);
	struct dest d;
	struct untar_stats st;
	int code;
	char outside[128], target[160];

	dest_make(&d);
	snprintf(outside, sizeof(outside), "%s/outside", d.dir);
	ck_assert_int_eq(mkdir(outside, 0755), 0);
	ck_assert_int_eq(symlinkat(outside, d.archive, "dirlink"), 0);
	snprintf(target, sizeof(target), "%s/victim", outside);
	ck_assert_int_eq(symlinkat(target, d.archive, "filelink"), 0);
	file(&b, "archive/dirlink/planted", "x");
	file(&b, "archive/filelink", "x");
	entry(&b, "archive/dirlink", '5');
	end(&b);
	ck_assert_int_eq(unpack(&b, &d, NULL, &st, &code), 0);
	ck_assert_uint_eq(st.files, 0);
	ck_assert_uint_eq(st.left, 3);
	ck_assert_int_eq(mode_of(&d, "outside/planted"), -1);
	ck_assert_int_eq(mode_of(&d, "outside/victim"), -1);
	dest_free(&d);
}
END_TEST

/* The first entry for a path wins; a file where a directory is, and back, are left. */
START_TEST(test_second_entry)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(1 << 24);
	struct dest d;
	struct untar_stats st;
	int code;
	char *c;

	dest_make(&d);
	file(&b, "results/result.json", "first");
	file(&b, "results/result.json", "second");
	entry(&b, "archive/d", '5');
	file(&b, "archive/d", "over a directory");
	file(&b, "archive/f", "a file");
	file(&b, "archive/f/under", "under a file");
	end(&b);
	ck_assert_int_eq(unpack(&b, &d, NULL, &st, &code), 0);
	ck_assert_uint_eq(st.files, 2);
	ck_assert_uint_eq(st.left, 3);
	c = content_of(&d, "results/result.json");
	ck_assert_str_eq(c, "first");
	free(c);
	ck_assert_int_eq(mode_of(&d, "archive/d"), 0100755);
	dest_free(&d);
}
END_TEST

/* Past the count or the bytes: left, its data skipped, and what follows still read. */
START_TEST(test_bounds)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(1 << 24);
	struct untar_limits lim = { 10, 3, 16 };
	struct dest d;
	struct untar_stats st;
	int code;

	dest_make(&d);
	file(&b, "archive/big", "0123456789A"); /* 11 bytes: over */
	file(&b, "archive/a", "12345");
	file(&b, "archive/b", "12345");
	file(&b, "archive/c", "1");		/* 11 bytes in all: over */
	file(&b, "archive/e", "");
	file(&b, "archive/g", "");		/* the fourth entry: over */
	end(&b);
	ck_assert_int_eq(unpack(&b, &d, &lim, &st, &code), 0);
	ck_assert_uint_eq(st.files, 3);
	ck_assert_uint_eq(st.bytes, 10);
	ck_assert_uint_eq(st.left, 3);
	ck_assert_int_eq(mode_of(&d, "archive/big"), -1);
	ck_assert_int_eq(mode_of(&d, "archive/e"), 0644);
	ck_assert_int_eq(mode_of(&d, "archive/g"), -1);
	dest_free(&d);
}
END_TEST

/* GNU long names; a refused long name takes its entry with it; pax records likewise;
 * control bytes in a name are kept as they are (nothing later reads names as lines). */
START_TEST(test_names)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(1 << 24);
	char long_name[300];
	struct dest d;
	struct untar_stats st;
	int code;

	dest_make(&d);
	/* 290 characters, in components a file system takes. */
	memset(long_name, 'n', sizeof(long_name));
	memcpy(long_name, "archive/", 8);
	long_name[130] = '/';
	long_name[sizeof(long_name) - 10] = '\0';
	header(&b, "././@LongLink", 'L', "0000644", strlen(long_name) + 1, false, NULL);
	data(&b, long_name, strlen(long_name) + 1);
	file(&b, "archive/truncated", "long");
	header(&b, "pax", 'x', "0000644", 20, false, NULL);
	data(&b, "20 path=results/pwn\n", 20);
	file(&b, "archive/paxed", "x");
	file(&b, "archive/new\nline\tand\x1b[31m", "c");
	end(&b);
	ck_assert_int_eq(unpack(&b, &d, NULL, &st, &code), 0);
	ck_assert_uint_eq(st.files, 2);
	ck_assert_uint_eq(st.left, 1);
	ck_assert_int_eq(mode_of(&d, long_name), 0644);
	ck_assert_int_eq(mode_of(&d, "archive/truncated"), -1);
	ck_assert_int_eq(mode_of(&d, "archive/paxed"), -1);
	ck_assert_int_eq(mode_of(&d, "results/pwn"), -1);
	ck_assert_int_eq(mode_of(&d, "archive/new\nline\tand\x1b[31m"), 0644);
	dest_free(&d);
}
END_TEST

/* Not tar, or cut short: refused with EBADMSG. */
START_TEST(test_broken)
{
	struct dest d;
	struct untar_stats st;
	int code;

	dest_make(&d);
	{
		_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(1 << 24);

		file(&b, "archive/a", "x");
		b.s[148] ^= 1; /* the checksum */
		ck_assert_int_eq(unpack(&b, &d, NULL, &st, &code), -1);
		ck_assert_int_eq(code, EBADMSG);
	}
	{
		_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(1 << 24);

		header(&b, "archive/cut", '0', "0000644", 4096, false, NULL);
		data(&b, "only this", 9);
		ck_assert_int_eq(unpack(&b, &d, NULL, &st, &code), -1);
		ck_assert_int_eq(code, EBADMSG);
	}
	{
		_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(1 << 24);

		sb_buf_append(&b, "garbage", 7, NULL);
		ck_assert_int_eq(unpack(&b, &d, NULL, &st, &code), -1);
		ck_assert_int_eq(code, EBADMSG);
	}
	dest_free(&d);
}
END_TEST


/*
 * Review (h/review): crafted streams a hostile collect container could send. Long names
 * chained, cut, with a NUL inside or without one; size fields with spaces and signs; a
 * directory entry with data; the roots' own names and aliases; results/archive/ through
 * the results root. None may crash, escape, or desync the reader.
 */
START_TEST(test_review_crafted)
{
	struct dest d;
	struct untar_stats st;
	int code;

	dest_make(&d);
	{
		/* 'L' then 'L': the second wins; 'L' refused (too long) then 'L' accepted: the
		 * entry after them is still left behind (skip_next sticks). */
		_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(1 << 24);
		char big[5000];

		header(&b, "././@LongLink", 'L', "0000644", 12, false, NULL);
		data(&b, "archive/one", 12);
		header(&b, "././@LongLink", 'L', "0000644", 12, false, NULL);
		data(&b, "archive/two", 12);
		file(&b, "archive/x", "1");
		memset(big, 'a', sizeof(big));
		header(&b, "././@LongLink", 'L', "0000644", sizeof(big), false, NULL);
		data(&b, big, sizeof(big));
		header(&b, "././@LongLink", 'L', "0000644", 14, false, NULL);
		data(&b, "archive/three", 14);
		file(&b, "archive/y", "2");
		/* A long name with a NUL inside: cut at the NUL, as a C string. */
		header(&b, "././@LongLink", 'L', "0000644", 24, false, NULL);
		data(&b, "archive/nul\0/../../../x", 24);
		file(&b, "archive/z", "3");
		/* A long name of exactly 4096 bytes and no NUL. */
		{
			char n[4096];

			memset(n, 'b', sizeof(n));
			memcpy(n, "archive/", 8);
			for (size_t i = 200; i < sizeof(n); i += 200)
				n[i] = '/';
			header(&b, "././@LongLink", 'L', "0000644", sizeof(n), false, NULL);
			data(&b, n, sizeof(n));
			file(&b, "archive/w", "4");
		}
		/* A directory entry with data: the data is skipped, not read as headers. */
		{
			_cleanup_buf_ struct sb_buf inner = SB_BUF_INIT(1 << 20);

			file(&inner, "archive/smuggled", "s");
			header(&b, "archive/dirdata/", '5', "0000755", inner.len, false, NULL);
			data(&b, inner.s, inner.len);
		}
		/* The roots' own names as files with data; aliases of the roots. */
		file(&b, "results", "root as a file");
		file(&b, "archive", "root as a file");
		file(&b, "./results/./dotted", "d");
		file(&b, "results//archive//via-results", "v");
		file(&b, "results/archive", "over the archive root");
		file(&b, "./results/../archive/climb", "c");
		end(&b);
		ck_assert_int_eq(unpack(&b, &d, NULL, &st, &code), 0);
		ck_assert_int_eq(mode_of(&d, "archive/one"), -1);
		ck_assert_int_eq(mode_of(&d, "archive/two"), 0644);
		ck_assert_int_eq(mode_of(&d, "archive/three"), -1);
		ck_assert_int_eq(mode_of(&d, "archive/y"), -1);
		ck_assert_int_eq(mode_of(&d, "archive/nul"), 0644);
		ck_assert_int_eq(mode_of(&d, "archive/smuggled"), -1);
		ck_assert_int_eq(mode_of(&d, "archive/dirdata"), 0100755);
		ck_assert_int_eq(mode_of(&d, "results/dotted"), 0644);
		/* The results root is the run directory: its "archive" is a plain subdirectory
		 * there (in the CLI, the archive root itself). */
		ck_assert_int_eq(mode_of(&d, "results/archive/via-results"), 0644);
		ck_assert_int_eq(mode_of(&d, "archive/climb"), -1);
	}
	{
		/* Size fields: leading spaces are taken; a sign, a digit 8, or text are not. */
		static const char *const sizes[] = { "+0000000001", "00000000008", "0x1        ",
			"1 1        " };

		for (size_t i = 0; i < SB_ARRAY_SIZE(sizes); i++) {
			_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(1 << 20);
			unsigned char *h;
			unsigned sum = 0;

			file(&b, "archive/sz", "x");
			h = (unsigned char *)b.s;
			memcpy(h + 124, sizes[i], 11);
			memset(h + 148, ' ', 8);
			for (size_t k = 0; k < 512; k++)
				sum += h[k];
			snprintf((char *)h + 148, 8, "%06o", sum);
			end(&b);
			ck_assert_int_eq(unpack(&b, &d, NULL, &st, &code), -1);
			ck_assert_int_eq(code, EBADMSG);
		}
	}
	{
		/* 'L' at the very end, and 'L' cut short. */
		_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(1 << 20);

		header(&b, "././@LongLink", 'L', "0000644", 12, false, NULL);
		data(&b, "archive/end", 12);
		ck_assert_int_eq(unpack(&b, &d, NULL, &st, &code), 0);
		sb_buf_reset(&b);
		header(&b, "././@LongLink", 'L', "0000644", 3000, false, NULL);
		ck_assert_int_eq(unpack(&b, &d, NULL, &st, &code), -1);
		ck_assert_int_eq(code, EBADMSG);
	}
	{
		/* A header whose checksum is summed as signed chars (old tars): refused. */
		_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(1 << 20);
		unsigned char *h;
		int sum = 0;

		file(&b, "archive/\xe9\xe9", "x");
		h = (unsigned char *)b.s;
		memset(h + 148, ' ', 8);
		for (size_t k = 0; k < 512; k++)
			sum += (signed char)h[k];
		snprintf((char *)h + 148, 8, "%06o", sum);
		ck_assert_int_eq(unpack(&b, &d, NULL, &st, &code), -1);
		ck_assert_int_eq(code, EBADMSG);
	}
	{
		/* 600 components: more than COMPONENTS_MAX, left (no overflow of comp[]). */
		_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(1 << 20);
		char n[1300];
		size_t k = 0;

		k += (size_t)snprintf(n, sizeof(n), "archive");
		for (int i = 0; i < 600; i++)
			k += (size_t)snprintf(n + k, sizeof(n) - k, "/a");
		header(&b, "././@LongLink", 'L', "0000644", k + 1, false, NULL);
		data(&b, n, k + 1);
		file(&b, "ignored", "x");
		file(&b, "archive/after-deep", "x");
		end(&b);
		ck_assert_int_eq(unpack(&b, &d, NULL, &st, &code), 0);
		ck_assert_int_eq(mode_of(&d, "archive/after-deep"), 0644);
		ck_assert_int_eq(mode_of(&d, "archive/a"), -1);
	}
	dest_free(&d);
}
END_TEST

static Suite *
untar_suite(void)
{
	Suite *s = suite_create("untar");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_plain);
	tcase_add_test(tc, test_special);
	tcase_add_test(tc, test_escape);
	tcase_add_test(tc, test_link_in_dest);
	tcase_add_test(tc, test_second_entry);
	tcase_add_test(tc, test_bounds);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_broken);
	tcase_add_test(tc, test_review_crafted);
	suite_add_tcase(s, tc);
	return s;
}

SB_UNIT_MAIN(untar_suite)

/* SPDX-License-Identifier: Apache-2.0 */
/* untar.c: a strict tar reader for what a run's pod sends back (see untar.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "sb/mem.h"

#include "untar.h"

#define BLOCK 512
/* A GNU long name longer than this is not a name a file system takes: left behind. */
#define LONG_NAME_MAX 4096
/* Components of one name: more is deeper than any limit we take. */
#define COMPONENTS_MAX 512

struct reader {
	int fd;
	uint64_t offset; /* bytes read, for messages */
};

/* Read exactly n bytes; 0 at a clean end before any byte, -1 (errno) on error or a short
 * read (EBADMSG: the stream ended inside a block). */
static int
read_full(struct reader *r, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = read(r->fd, (char *)buf + got, n - got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0) {
			if (got == 0)
				return 0;
			errno = EBADMSG;
			return -1;
		}
		got += (size_t)k;
	}
	r->offset += n;
	return 1;
}

/* Skip n bytes of data and the padding to the next block. */
static int
skip_data(struct reader *r, uint64_t n)
{
	char buf[16 * BLOCK];
	uint64_t left = (n + BLOCK - 1) / BLOCK * BLOCK;

	errno = 0;
	while (left > 0) {
		size_t k = left < sizeof(buf) ? (size_t)left : sizeof(buf);

		if (read_full(r, buf, k) <= 0) {
			if (errno == 0)
				errno = EBADMSG;
			return -1;
		}
		left -= k;
	}
	return 0;
}

/*
 * An octal field: optional leading spaces, octal digits, then NUL or space to its end.
 * Base-256 numbers (GNU, for sizes past 8 GiB) and anything else are refused: a size we
 * cannot read is a stream we cannot follow.
 */
static int
octal(const unsigned char *f, size_t len, uint64_t *ret)
{
	size_t i = 0;
	uint64_t v = 0;
	bool digits = false;

	while (i < len && f[i] == ' ')
		i++;
	for (; i < len && f[i] >= '0' && f[i] <= '7'; i++) {
		if (v > (UINT64_MAX >> 3))
			return -1;
		v = v << 3 | (uint64_t)(f[i] - '0');
		digits = true;
	}
	for (; i < len; i++)
		if (f[i] != '\0' && f[i] != ' ')
			return -1;
	*ret = digits ? v : 0;
	return 0;
}

static bool
all_zero(const unsigned char *b)
{
	for (size_t i = 0; i < BLOCK; i++)
		if (b[i] != 0)
			return false;
	return true;
}

/* The header's checksum: its bytes summed, the checksum field counted as spaces. */
static bool
checksum_ok(const unsigned char *h)
{
	uint64_t want, sum = 0;

	if (octal(h + 148, 8, &want) < 0)
		return false;
	for (size_t i = 0; i < BLOCK; i++)
		sum += (i >= 148 && i < 156) ? ' ' : h[i];
	return sum == want;
}

/* The entry's name: the GNU long name if one came before it, else (POSIX ustar) prefix
 * "/" name, else name. Fields need not end in NUL. */
static char *
entry_name(const unsigned char *h, char *long_name)
{
	char name[101], prefix[156];

	if (long_name != NULL)
		return sb_xstrdup(long_name);
	memcpy(name, h, 100);
	name[100] = '\0';
	if (memcmp(h + 257, "ustar\0" "00", 8) == 0 && h[345] != '\0') {
		memcpy(prefix, h + 345, 155);
		prefix[155] = '\0';
		return sb_xasprintf("%s/%s", prefix, name);
	}
	return sb_xstrdup(name);
}

struct unpack {
	const struct untar_root *roots;
	size_t n_roots;
	const struct untar_limits *lim;
	struct untar_stats *st;
};

/*
 * Open the directory that will hold the entry's last component, making missing
 * directories on the way (0755); -1 when the path is not one we make (the caller leaves
 * the entry behind). *ret_last points into path.
 */
static int
open_parent(const struct unpack *u, char *path, char **ret_last)
{
	char *comp[COMPONENTS_MAX];
	size_t n = 0;
	int fd = -1;
	char *save = NULL;

	for (char *c = strtok_r(path, "/", &save); c != NULL; c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0 || n == COMPONENTS_MAX)
			return -1;
		comp[n++] = c;
	}
	/* The root itself (a "results/" entry): there already, nothing to make. */
	if (n < 2 || n - 1 > u->lim->depth)
		return n == 1 ? -2 : -1;
	for (size_t i = 0; i < u->n_roots && fd < 0; i++)
		if (strcmp(u->roots[i].name, comp[0]) == 0)
			fd = fcntl(u->roots[i].dirfd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	for (size_t i = 1; i + 1 < n; i++) {
		int next = openat(fd, comp[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (next < 0 && errno == ENOENT && u->st->files + u->st->dirs < u->lim->files &&
		    mkdirat(fd, comp[i], 0755) == 0) {
			u->st->dirs++;
			next = openat(fd, comp[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		close(fd);
		if (next < 0)
			return -1;
		fd = next;
	}
	*ret_last = comp[n - 1];
	return fd;
}

/* Copy size bytes of data (and the padding) into out. */
static int
copy_data(struct reader *r, int out, uint64_t size, struct sb_error **err)
{
	char buf[16 * BLOCK];
	uint64_t left = (size + BLOCK - 1) / BLOCK * BLOCK, data = size;

	while (left > 0) {
		size_t k = left < sizeof(buf) ? (size_t)left : sizeof(buf);
		size_t w = data < k ? (size_t)data : k;

		if (read_full(r, buf, k) <= 0)
			return sb_error_errno(err, errno ? errno : EBADMSG,
			    "the results stream ended inside a file (at byte %llu)",
			    (unsigned long long)r->offset);
		for (size_t done = 0; done < w;) {
			ssize_t n = write(out, buf + done, w - done);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return sb_error_errno(err, errno, "write a collected file");
			done += (size_t)n;
		}
		data -= w;
		left -= k;
	}
	return 0;
}

/* One regular file or directory entry: made, or left behind (its data skipped). */
static int
unpack_entry(const struct unpack *u, struct reader *r, char type, char *name, uint64_t size,
    struct sb_error **err)
{
	char *last = NULL;
	int pfd = open_parent(u, name, &last), out;
	struct stat st;

	if (pfd == -2) {
		if (type != '5')
			u->st->left++;
		return skip_data(r, size);
	}
	if (pfd < 0)
		goto left;
	if (type == '5') {
		if (u->st->files + u->st->dirs < u->lim->files && mkdirat(pfd, last, 0755) == 0)
			u->st->dirs++;
		else if (fstatat(pfd, last, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
			u->st->left++;
		close(pfd);
		return skip_data(r, size);
	}
	if (u->st->files + u->st->dirs >= u->lim->files || size > u->lim->bytes - u->st->bytes) {
		close(pfd);
		goto left;
	}
	/* O_EXCL with O_CREAT follows no link, and a second entry for a path is refused. */
	out = openat(pfd, last, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	close(pfd);
	if (out < 0)
		goto left;
	if (copy_data(r, out, size, err) < 0 || fchmod(out, 0644) < 0) {
		if (err != NULL && *err == NULL)
			sb_error_errno(err, errno, "fchmod a collected file");
		close(out);
		return -1;
	}
	close(out);
	u->st->files++;
	u->st->bytes += size;
	return 0;
left:
	u->st->left++;
	return skip_data(r, size);
}

int
untar_fd(int fd, const struct untar_root *roots, size_t n_roots,
    const struct untar_limits *lim, struct untar_stats *st, struct sb_error **err)
{
	struct reader r = { .fd = fd };
	struct unpack u = { roots, n_roots, lim, st };
	_cleanup_free_ char *long_name = NULL;
	bool skip_next = false;
	unsigned char h[BLOCK];

	memset(st, 0, sizeof(*st));
	for (;;) {
		_cleanup_free_ char *name = NULL;
		uint64_t size;
		int k;
		char type;

		errno = 0;
		k = read_full(&r, h, BLOCK);
		if (k < 0)
			return sb_error_errno(err, errno, "read the results stream");
		/* The end: EOF, or the zero block(s) tar ends with. */
		if (k == 0 || all_zero(h))
			return 0;
		if (!checksum_ok(h) || octal(h + 124, 12, &size) < 0)
			return sb_error_set(err, EBADMSG, "the results stream is not tar (a bad "
			    "header at byte %llu)", (unsigned long long)(r.offset - BLOCK));
		type = (char)h[156];
		if (type == 'L') {
			/* A GNU long name: the next entry's name. */
			free(long_name);
			long_name = NULL;
			if (size == 0 || size > LONG_NAME_MAX) {
				skip_next = true;
				if (skip_data(&r, size) < 0)
					return sb_error_errno(err, errno, "read the results stream");
				continue;
			}
			long_name = sb_xmalloc((size_t)(size + BLOCK - 1) / BLOCK * BLOCK + 1);
			errno = 0;
			if (read_full(&r, long_name, (size_t)(size + BLOCK - 1) / BLOCK * BLOCK) <= 0)
				return sb_error_errno(err, errno ? errno : EBADMSG,
				    "read the results stream");
			long_name[size] = '\0';
			continue;
		}
		if (type == 'K' || type == 'x' || type == 'g') {
			/* A long link name (links are left behind anyway), or pax records, which
			 * a GNU-format stream does not have: the entry after them is not
			 * trusted to be named by its header alone. */
			skip_next = skip_next || type == 'x';
			if (skip_data(&r, size) < 0)
				return sb_error_errno(err, errno, "read the results stream");
			continue;
		}
		name = entry_name(h, long_name);
		free(long_name);
		long_name = NULL;
		/* Links, devices, FIFOs, sparse and volume entries, and an entry whose long
		 * name was refused: only the data (if any) is read past. */
		if (skip_next || (type != '0' && type != '\0' && type != '5') ||
		    strlen(name) == 0) {
			skip_next = false;
			st->left++;
			/* Only regular files' and a few GNU types' sizes are data. */
			if ((type == '1' || type == '2' || type == '3' || type == '4' ||
				type == '6') && size > 0)
				size = 0;
			if (skip_data(&r, size) < 0)
				return sb_error_errno(err, errno, "read the results stream");
			continue;
		}
		errno = 0;
		if (unpack_entry(&u, &r, type, name, size, err) < 0) {
			if (err != NULL && *err == NULL)
				sb_error_errno(err, errno ? errno : EBADMSG, "read the results stream");
			return -1;
		}
	}
}

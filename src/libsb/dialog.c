/* SPDX-License-Identifier: Apache-2.0 */
/* dialog.c: appending entries to dialog.jsonl (see dialog.h). */
#include "config.h"

#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sb/buf.h"
#include "sb/dialog.h"
#include "sb/json.h"
#include "sb/mem.h"

void
sb_dialog_timestamp(char out[32])
{
	struct timespec ts;
	struct tm tm;
	char base[24];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, 32, "%.20s.%03uZ", base, (unsigned)(ts.tv_nsec / 1000000) % 1000u);
}

int
sb_dialog_open(struct sb_dialog *d, const char *path, unsigned flags, struct sb_error **err)
{
	/* O_RDWR: the next seq is read back from the file when another writer moved it on. */
	int oflags = O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC;
	int fd;

	if (flags & SB_DIALOG_TRUNCATE)
		oflags |= O_TRUNC;
	fd = open(path, oflags, 0644);
	if (fd < 0)
		return sb_error_errno(err, errno, "open '%s'", path);
	d->fd = fd;
	d->next_seq = 0;
	d->size = -1;
	return 0;
}

void
sb_dialog_close(struct sb_dialog *d)
{
	d->fd = sb_close(d->fd);
	d->size = -1;
}

/*
 * Call fn for each line of the len bytes at s that is one JSON object with an integer seq,
 * in file order: what the daemon's reader and the writer's scan both count as an entry.
 */
static void
each_entry(const char *s, size_t len, void (*fn)(json_t *e, long long seq, void *arg), void *arg)
{
	for (const char *p = s, *end = s + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		json_t *e = NULL, *seq;

		if (sb_json_load(p, n, n, &e, NULL) == 0 && json_is_object(e) &&
		    json_is_integer(seq = json_object_get(e, "seq")))
			fn(e, json_integer_value(seq), arg);
		json_decref(e);
		p += n + 1;
	}
}

static void
count_seq(json_t *e, long long seq, void *arg)
{
	long long *next = arg;

	(void)e;
	/* The file is the agent's: a seq past the bound (json_int_t's largest, where the + 1
	 * would overflow) is not one we wrote. */
	if (seq >= *next && seq < SB_DIALOG_SEQ_MAX)
		*next = seq + 1;
}

/* The seq after the highest one in the file (lines that are not entries are skipped). */
static int
scan_next_seq(int fd, long long *ret, struct sb_error **err)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(SB_DIALOG_FILE_MAX);
	long long next = 0;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return sb_error_errno(err, errno, "lseek");
	if (sb_buf_read_fd(&b, fd, err) < 0)
		return sb_error_prefix(err, "reading the dialog");
	each_entry(b.s, b.len, count_seq, &next);
	*ret = next;
	return 0;
}

struct since {
	json_t *entries;
	long long since;
};

static void
keep_since(json_t *e, long long seq, void *arg)
{
	struct since *s = arg;

	if (seq > s->since)
		json_array_append(s->entries, e);
}

json_t *
sb_dialog_entries_since(const char *s, size_t len, long long since)
{
	struct since st = { json_array(), since };

	each_entry(s, len, keep_since, &st);
	return st.entries;
}

/* Cut the string members that would make one entry unreasonably large. */
static void
cut_long_strings(json_t *o)
{
	const size_t max = SB_DIALOG_ENTRY_MAX / 2;
	const char *k;
	json_t *v;

	json_object_foreach (o, k, v) {
		if (json_is_string(v) && json_string_length(v) > max) {
			const char *s = json_string_value(v);
			size_t n = max;
			_cleanup_free_ char *cut = NULL;

			/* Never inside a UTF-8 sequence: jansson refuses invalid UTF-8. */
			while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
				n--;
			cut = sb_xasprintf("%.*s [cut]", (int)n, s);
			json_string_set(v, cut);
		}
	}
}

int
sb_dialog_append(struct sb_dialog *d, const char *type, json_t *fields, struct sb_error **err)
{
	json_t *e = json_object();
	_cleanup_free_ char *line = NULL;
	char ts[32];
	struct stat st;
	size_t len;
	ssize_t n;
	int r = -1;

	if (d->fd < 0) {
		json_decref(fields);
		json_decref(e);
		return sb_error_set(err, EBADF, "the dialog is not open");
	}
	if (SB_RETRY_EINTR(flock(d->fd, LOCK_EX)) < 0) {
		sb_error_errno(err, errno, "flock");
		goto out;
	}
	/* Someone else appended (or truncated) since our last write: find where seq is now. */
	if (fstat(d->fd, &st) < 0) {
		sb_error_errno(err, errno, "fstat");
		goto unlock;
	}
	if (st.st_size != d->size && scan_next_seq(d->fd, &d->next_seq, err) < 0)
		goto unlock;
	sb_dialog_timestamp(ts);
	json_object_set_new(e, "seq", json_integer(d->next_seq));
	json_object_set_new(e, "ts", json_string(ts));
	json_object_set_new(e, "type", json_string(type));
	if (json_is_object(fields)) {
		cut_long_strings(fields);
		/* seq, ts and type are ours: an entry cannot bring its own. */
		json_object_del(fields, "seq");
		json_object_del(fields, "ts");
		json_object_del(fields, "type");
		json_object_update(e, fields);
	}
	{
		_cleanup_free_ char *text = sb_json_dumps(e, JSON_COMPACT | JSON_ENSURE_ASCII);
		char last = '\n';

		/* A line left without its newline (a writer that died, or the agent) would
		 * swallow ours: the entry starts on a line of its own. */
		if (st.st_size > 0 && pread(d->fd, &last, 1, st.st_size - 1) != 1)
			last = '\n';
		line = sb_xasprintf("%s%s\n", last != '\n' ? "\n" : "", text);
	}
	len = strlen(line);
	n = SB_RETRY_EINTR(write(d->fd, line, len));
	if (n != (ssize_t)len) {
		sb_error_errno(err, n < 0 ? errno : EIO, "writing the dialog");
		d->size = -1;
		goto unlock;
	}
	if (d->next_seq < SB_DIALOG_SEQ_MAX)
		d->next_seq++;
	d->size = fstat(d->fd, &st) == 0 ? st.st_size : -1;
	r = 0;
unlock:
	(void)flock(d->fd, LOCK_UN);
out:
	json_decref(fields);
	json_decref(e);
	return r;
}

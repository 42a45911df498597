/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd-report.c: `ssebench report [JOB | RESULTS-DIR] [--format F] [--output FILE]`: the
 * figures of many runs in one of six formats (docs/report.md). It reads summaries only and
 * needs no Docker. Exit 1: no such job or directory, a job of a newer version, a corrupt
 * index, an output that cannot be written; exit 2: a bad flag.
 */
#include "config.h"

#include <fcntl.h>
#include <getopt.h>
#include <string.h>
#include <sys/stat.h>

#include "sb/buf.h"
#include "sb/exit.h"
#include "sb/fs.h"
#include "sb/mem.h"

#include "cli.h"
#include "report.h"
#include "run.h"

static bool
is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A job id: 1 to 128 of [A-Za-z0-9._-], not starting with '.' or '-' (never a path). */
static bool
job_id_like(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 128 || s[0] == '.' || s[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
			(s[i] >= '0' && s[i] <= '9') || strchr("._-", s[i]) != NULL))
			return false;
	return true;
}

/* Write the report to path ("-" or NULL: stdout), replacing the file atomically. */
static int
write_out(const char *path, const struct sb_buf *b, struct sb_error **err)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int fd = -1;
	const char *slash, *name;
	struct stat st;

	if (path == NULL || strcmp(path, "-") == 0) {
		if (fwrite(b->s, 1, b->len, stdout) != b->len || fflush(stdout) != 0)
			return sb_error_errno(err, errno, "writing the report");
		return 0;
	}
	/*
	 * Something that is not a plain file (/dev/null, /dev/stdout, a FIFO) or a link the user
	 * made is written through, as a shell's redirection would: replacing it atomically
	 * would put a regular file in its place (it once made /dev/null one).
	 */
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		size_t off = 0;

		fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY |
			(S_ISLNK(st.st_mode) && stat(path, &st) == 0 && S_ISREG(st.st_mode) ? O_TRUNC
											: 0));
		if (fd < 0)
			return sb_error_errno(err, errno, "--output '%s'", path);
		while (off < b->len) {
			ssize_t w = SB_RETRY_EINTR(write(fd, b->s + off, b->len - off));

			if (w < 0)
				return sb_error_errno(err, errno, "--output '%s'", path);
			off += (size_t)w;
		}
		return 0;
	}
	slash = strrchr(path, '/');
	dir = slash == NULL   ? sb_xstrdup(".")
	      : slash == path ? sb_xstrdup("/")
			      : sb_xstrndup(path, (size_t)(slash - path));
	name = slash == NULL ? path : slash + 1;
	if (*name == '\0' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return sb_error_set(err, EINVAL, "--output '%s' is not a file name", path);
	fd = sb_open_dir(dir, err);
	if (fd < 0 || sb_write_file_atomic_at(fd, name, b->s, b->len, 0644, err) < 0)
		return sb_error_prefix(err, "--output '%s'", path);
	return 0;
}

int
cmd_report(const struct cli_command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {{"format", required_argument, NULL, 'f'},
	    {"output", required_argument, NULL, 'o'}, {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0}};
	_cleanup_buf_ struct sb_buf out = SB_BUF_INIT(REPORT_OUTPUT_MAX);
	_cleanup_error_ struct sb_error *err = NULL;
	_cleanup_free_ char *job_dir = NULL, *trimmed = NULL;
	enum report_format fmt = REPORT_MD;
	const char *output = NULL, *arg = NULL, *root = results_root();
	json_auto_t *input = NULL, *model = NULL;
	int c, rc = 0;

	while ((c = cli_getopt(cmd, argc, argv, "hf:o:", longopts, &rc)) != -1) {
		if (c == -2)
			return rc;
		if (c == 'f' && report_format_parse(optarg, &fmt) < 0)
			return cli_usage_error(
			    cmd, "--format must be md, json, csv, csv-runs, html or junit");
		if (c == 'o')
			output = optarg;
	}
	if (argc - optind > 1)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
	if (optind < argc)
		arg = argv[optind];
	/* "results/" reads as "results" (paths in the report are joined to it). */
	if (arg != NULL) {
		size_t n = strlen(arg);

		while (n > 1 && arg[n - 1] == '/')
			n--;
		arg = trimmed = sb_xstrndup(arg, n);
	}

	/*
	 * What the argument names: a bare job id of the results root's jobs/ first, then a
	 * directory, which is a job's when it holds index.json or job.json.
	 */
	if (arg != NULL && strchr(arg, '/') == NULL && job_id_like(arg)) {
		_cleanup_free_ char *d = sb_xasprintf("%s/jobs/%s", root, arg);

		if (is_dir(d))
			job_dir = TAKE_PTR(d);
	}
	if (job_dir == NULL && arg != NULL) {
		_cleanup_free_ char *idx = sb_xasprintf("%s/index.json", arg);
		_cleanup_free_ char *jj = sb_xasprintf("%s/job.json", arg);
		struct stat st;

		if (!is_dir(arg)) {
			_cleanup_free_ char *e = sb_escape(arg);

			return cli_fail(
			    "no job or results directory '%s' (job ids are looked up in "
			    "%s/jobs)",
			    e, root);
		}
		if (lstat(idx, &st) == 0 || lstat(jj, &st) == 0)
			job_dir = sb_xstrdup(arg);
	}
	if (job_dir != NULL) {
		input = report_input_new("job", job_dir);
		if (report_read_job(job_dir, input, &err) < 0)
			return cli_fail("%s", sb_error_message(err));
	} else {
		const char *dir = arg != NULL ? arg : root;

		input = report_input_new("results", dir);
		if (report_scan_results(dir, input, &err) < 0)
			return cli_fail("%s", sb_error_message(err));
	}
	model = report_model(input);
	if (report_render(model, fmt, &out, &err) < 0 || write_out(output, &out, &err) < 0)
		return cli_fail("%s", sb_error_message(err));
	return SB_EXIT_OK;
}

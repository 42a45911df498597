/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd-init.c: `ssebench init` and `ssebench models list` (docs/upstream.md, "Command line"
 * and "Models and the proxy").
 *
 * init makes the working directory a workspace: a .env with the proxy settings and a fresh
 * master key (owner-only: it holds secrets), a copy of the home's models/, and results/. It
 * never overwrites anything that is there.
 */
#include "config.h"

#include <fcntl.h>
#include <getopt.h>
#include <string.h>
#include <sys/stat.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/diag.h"
#include "sb/exit.h"
#include "sb/fs.h"
#include "sb/json.h"
#include "sb/mem.h"

#include "cli.h"
#include "models.h"
#include "proxy.h"

/* n random bytes as lower-case hex (2n characters). */
static char *
random_hex(size_t n, struct sb_error **err)
{
	unsigned char r[64];
	char *out;

	if (n > sizeof(r) || sb_random_bytes(r, n, err) < 0)
		return NULL;
	out = sb_xmalloc(2 * n + 1);
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", r[i]);
	return out;
}

/* The .env: created 0600 whatever the umask, and only if it is not there (O_EXCL). */
static int
write_env(struct sb_error **err)
{
	_cleanup_free_ char *master = random_hex(24, err), *pg = NULL, *text = NULL;
	_cleanup_close_ int fd = -1;
	size_t len, off = 0;

	if (master == NULL || (pg = random_hex(16, err)) == NULL)
		return -1;
	text = sb_xasprintf(
	    "# SSEBench settings (written by ssebench init). Keep this file to yourself: it\n"
	    "# holds the model proxy's master key. The environment overrides every line.\n"
	    "\n"
	    "# Names each run's own network: <project>_run-<run-id>.\n"
	    "COMPOSE_PROJECT_NAME=ssebench\n"
	    "\n"
	    "# The model proxy (LiteLLM): where agents reach it from inside a run, where this\n"
	    "# CLI reaches it, and the key the CLI makes each run's own key with.\n"
	    "SSEBENCH_PROXY_URL=%s\n"
	    "SSEBENCH_PROXY_ADMIN_URL=http://127.0.0.1:4000\n"
	    "LITELLM_MASTER_KEY=sk-%s\n"
	    "# The proxy's database password (letters and digits: it is part of a URL).\n"
	    "POSTGRES_PASSWORD=%s\n"
	    "# The LiteLLM image 'ssebench proxy up' starts (docs/models.md), and the\n"
	    "# PostgreSQL database it keeps the runs' keys in:\n"
	    "# SSEBENCH_PROXY_IMAGE=ghcr.io/berriai/litellm:main-stable\n"
	    "# DATABASE_URL=postgresql://postgres:<POSTGRES_PASSWORD>@<address>:5432/litellm\n"
	    "# The proxy container runs attach to their network as 'litellm' (default: the\n"
	    "# one 'ssebench proxy up' makes, ssebench-proxy):\n"
	    "# SSEBENCH_PROXY_CONTAINER=ssebench-proxy\n"
	    "# A fixed key to hand out instead of a key per run (a proxy that is not yours):\n"
	    "# SSEBENCH_PROXY_KEY=\n"
	    "# The most a run's key may spend, in USD:\n"
	    "# SSEBENCH_RUN_BUDGET=%g\n"
	    "\n"
	    "# Provider keys, for the proxy's own environment only: agents never get them.\n"
	    "# ANTHROPIC_API_KEY=\n"
	    "# OPENAI_API_KEY=\n"
	    "# GOOGLE_API_KEY=\n",
	    PROXY_AGENT_URL_DEFAULT, master, pg, PROXY_BUDGET_DEFAULT);
	fd = open(".env", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return sb_error_errno(err, errno, "create .env");
	/* 0600 even if the umask let more through at creation, before a byte is written. */
	if (fchmod(fd, 0600) < 0)
		return sb_error_errno(err, errno, "chmod .env");
	len = strlen(text);
	while (off < len) {
		ssize_t n = SB_RETRY_EINTR(write(fd, text + off, len - off));

		if (n <= 0)
			return sb_error_errno(err, n < 0 ? errno : EIO, "write .env");
		off += (size_t)n;
	}
	if (fsync(fd) < 0)
		return sb_error_errno(err, errno, "fsync .env");
	return 0;
}

/* Copy the home's model files that ./models lacks. Returns how many were copied. */
static int
copy_models(const char *home, struct sb_error **err)
{
	_cleanup_free_ char *src = sb_xasprintf("%s/models", home);
	_cleanup_close_ int sfd = -1, dfd = -1;
	char **names = NULL;
	size_t n = 0;
	int copied = 0;

	if (mkdir("models", 0755) < 0 && errno != EEXIST)
		return sb_error_errno(err, errno, "mkdir models");
	sfd = sb_open_dir(src, err);
	dfd = sfd >= 0 ? sb_open_dir("models", err) : -1;
	if (sfd < 0 || dfd < 0 || sb_list_dir_at(sfd, ".", 1000, &names, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < n && copied >= 0; i++) {
		_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(1024 * 1024);
		struct stat st;

		if (names[i][0] == '.' || sb_lstat_at(dfd, names[i], &st, NULL) == 0)
			continue; /* hidden, or there already: kept as it is */
		if (sb_read_file_at(sfd, names[i], SB_OPEN_NO_SYMLINKS, &b, NULL) < 0)
			continue;
		if (sb_write_file_atomic_at(dfd, names[i], b.s, b.len, 0644, err) < 0)
			copied = -1;
		else
			copied++;
	}
	sb_strv_free(names);
	return copied;
}

int
cmd_init(const struct cli_command *cmd, int argc, char **argv)
{
	struct sb_error *err = NULL;
	struct stat st;
	int rc, copied;

	if ((rc = cli_bare_command(cmd, argc, argv, NULL)) >= 0)
		return rc;
	if (lstat(".env", &st) == 0) {
		printf("kept .env (it exists)\n");
	} else if (write_env(&err) < 0) {
		rc = cli_fail("%s", sb_error_message(err));
		sb_error_release(&err);
		return rc;
	} else {
		printf("wrote .env (mode 0600, with a new master key for the model proxy)\n");
	}
	copied = copy_models(cli_home(), &err);
	if (copied < 0) {
		rc = cli_fail("%s", sb_error_message(err));
		sb_error_release(&err);
		return rc;
	}
	printf("models/: %d file%s copied from %s/models (existing files kept)\n", copied,
	    copied == 1 ? "" : "s", cli_safe(cli_home()));
	if (mkdir("results", 0755) == 0)
		printf("made results/\n");
	else if (errno != EEXIST)
		return cli_fail("mkdir results: %s", strerror(errno));
	return SB_EXIT_OK;
}

int
cmd_models_list(const struct cli_command *cmd, int argc, char **argv)
{
	_cleanup_diags_ struct sb_diags diags = SB_DIAGS_INIT;
	_cleanup_free_ char *dir = models_dir();
	struct sb_error *err = NULL;
	struct models m;
	bool json = false;
	int rc;

	if ((rc = cli_bare_command(cmd, argc, argv, &json)) >= 0)
		return rc;
	if (models_load(dir, &m, &diags, &err) < 0) {
		rc = cli_fail("%s", sb_error_message(err));
		sb_error_release(&err);
		models_release(&m);
		return rc;
	}
	if (json) {
		json_t *a = json_array();
		_cleanup_free_ char *s = NULL;

		for (size_t i = 0; i < m.n; i++)
			json_array_append_new(a, json_pack("{s:s, s:s, s:s?, s:s, s:i}", "name",
						     m.v[i].name, "target", m.v[i].target, "key_env",
						     m.v[i].key_env, "file", m.v[i].file, "line",
						     (int)m.v[i].line));
		s = sb_json_dumps(a, JSON_INDENT(2) | JSON_ENSURE_ASCII);
		printf("%s\n", s);
		json_decref(a);
	} else {
		/* The provider key's name only: the proxy holds the key, in its environment. */
		for (size_t i = 0; i < m.n; i++)
			printf("%-24s %-36s %s\n", cli_safe(m.v[i].name), cli_safe(m.v[i].target),
			    cli_safe(m.v[i].key_env ? m.v[i].key_env : "-"));
	}
	models_release(&m);
	if (diags.n > 0) {
		sb_diags_print(&diags, stderr);
		return cli_fail("the model files in %s have problems (see above)", dir);
	}
	return SB_EXIT_OK;
}

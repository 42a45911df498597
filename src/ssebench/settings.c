/* SPDX-License-Identifier: Apache-2.0 */
/*
 * settings.c: the CLI's settings: the environment first, then a .env file in the working
 * directory (docs/upstream.md, "Settings and environment variables"), then the default. The .env
 * file is read once.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/diag.h"
#include "sb/error.h"
#include "sb/fs.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/parse.h"

#include "cli.h"

static struct sb_argv dotenv = SB_ARGV_INIT;
static bool dotenv_loaded;

void
cli_dotenv_parse(char *text, struct sb_argv *env, struct sb_diags *diags)
{
	unsigned lineno = 0;
	char *next = text;

	while (next != NULL && *next != '\0') {
		char *line = next, *eq, *v;
		size_t vl;

		lineno++;
		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		while (*line == ' ' || *line == '\t')
			line++;
		if (*line == '#' || *line == '\0' || strcmp(line, "\r") == 0)
			continue;
		if (strncmp(line, "export ", 7) == 0)
			line += 7;
		eq = strchr(line, '=');
		if (eq != NULL)
			*eq = '\0';
		/* Not KEY=value: said, since a mistyped line silently dropped is a setting lost. */
		if (eq == NULL || !sb_env_name_valid(line)) {
			if (diags != NULL)
				sb_diags_add(diags, ".env", lineno, 1, "not a KEY=value line; ignored");
			continue;
		}
		v = eq + 1;
		vl = strlen(v);
		while (vl > 0 && (v[vl - 1] == '\r' || v[vl - 1] == ' '))
			v[--vl] = '\0';
		if (vl >= 2 && (v[0] == '"' || v[0] == '\'') && v[vl - 1] == v[0]) {
			v[vl - 1] = '\0';
			v++;
		}
		sb_env_set(env, line, v);
	}
}

/*
 * Settings a .env may not give: a program the CLI runs (as root, often). The environment is
 * the operator's own; a .env is a file in whatever directory they stand in.
 */
static const char *const env_only[] = { "SSEBENCH_DOCKER", NULL };

/*
 * Whether a .env of this owner and mode may set anything. Its settings pick directories
 * the CLI writes and removes (SSEBENCH_RESULTS), images it trusts (SSEBENCH_REGISTRY) and
 * agents it builds (SSEBENCH_AGENTS), so it must be the operator's: owned by the effective
 * user (or, under sudo, the user who ran sudo) and writable by no one else. A .env another
 * user left in a shared directory is refused, and that is said.
 */
bool
cli_dotenv_trusted(const struct stat *st, char **ret_why)
{
	uid_t me = geteuid();
	const char *sudo = getenv("SUDO_UID");
	uint64_t sudo_uid;

	/* A second name: another user may have linked a file of ours they can influence. */
	if (st->st_nlink != 1) {
		*ret_why = sb_xasprintf("it has %ju names (hard links); keep one",
		    (uintmax_t)st->st_nlink);
		return false;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		*ret_why = sb_xasprintf("it is writable by others (mode %04o); chmod 600 .env",
		    (unsigned)(st->st_mode & 07777));
		return false;
	}
	if (st->st_uid == me)
		return true;
	if (me == 0 && sudo != NULL && sb_parse_u64(sudo, 0, UINT32_MAX, &sudo_uid, NULL) == 0 &&
	    st->st_uid == (uid_t)sudo_uid)
		return true;
	*ret_why = sb_xasprintf("it belongs to uid %u, not to you (uid %u)", (unsigned)st->st_uid,
	    (unsigned)me);
	return false;
}

static void
load_dotenv(void)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(1024 * 1024);
	_cleanup_close_ int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int fd = -1;
	_cleanup_diags_ struct sb_diags diags = SB_DIAGS_INIT;
	_cleanup_free_ char *why = NULL;
	struct sb_error *err = NULL;
	struct stat st;
	bool secret = false;

	dotenv_loaded = true;
	if (cwd < 0)
		return;
	/* O_NONBLOCK: a FIFO must not hang us; it is refused right after. */
	fd = sb_open_beneath(cwd, ".env", O_RDONLY | O_NONBLOCK | O_NOCTTY, 0, SB_OPEN_NO_SYMLINKS,
	    &err);
	if (fd >= 0 && fstat(fd, &st) < 0)
		sb_error_errno(&err, errno, "stat '.env'");
	else if (fd >= 0 && !S_ISREG(st.st_mode))
		sb_error_set(&err, EINVAL, "'.env' is not a regular file");
	else if (fd >= 0 && (unsigned long long)st.st_size > b.max)
		sb_error_set(&err, EFBIG, "'.env' is larger than %zu bytes", b.max);
	else if (fd >= 0 && !cli_dotenv_trusted(&st, &why))
		sb_error_set(&err, EPERM, "%s", why);
	else if (fd >= 0)
		(void)sb_buf_read_fd(&b, fd, &err);
	if (err != NULL) {
		/* No .env is the usual case; one that is there but refused must be said, or the
		 * user only hears later that a setting (the proxy's key) is missing. */
		if (sb_error_code(err) != ENOENT)
			sb_log(SB_LOG_WARN, ".env is not read, none of its settings is used: %s",
			    sb_error_message(err));
		sb_error_release(&err);
		return;
	}
	secret = strstr(b.s, "KEY=") != NULL || strstr(b.s, "PASSWORD=") != NULL;
	cli_dotenv_parse(b.s, &dotenv, &diags);
	for (size_t i = 0; i < diags.n; i++)
		sb_log(SB_LOG_WARN, "%s:%u: %s", diags.v[i].file, diags.v[i].line, diags.v[i].msg);
	for (const char *const *k = env_only; *k != NULL; k++)
		if (sb_env_get(&dotenv, *k) != NULL) {
			sb_log(SB_LOG_WARN, ".env: %s is taken from the environment only (it names a "
					    "program to run); ignored",
			    *k);
			sb_env_unset(&dotenv, *k);
		}
	/* It holds the proxy's master key: say so when others may read it (ssebench init: 0600). */
	if (secret && (st.st_mode & 0077))
		sb_log(SB_LOG_WARN, ".env holds keys and is readable by others (mode %04o): chmod "
				    "600 .env",
		    (unsigned)(st.st_mode & 07777));
}

const char *
cli_setting(const char *name, const char *def)
{
	const char *v = getenv(name);

	if (v != NULL && *v != '\0')
		return v;
	if (!dotenv_loaded)
		load_dotenv();
	v = sb_env_get(&dotenv, name);
	return v != NULL && *v != '\0' ? v : def;
}

const char *
cli_registry(void)
{
	static char *reg;

	if (reg == NULL) {
		size_t n;

		reg = sb_xstrdup(cli_setting("SSEBENCH_REGISTRY", "localhost/ssebench"));
		n = strlen(reg);
		while (n > 0 && reg[n - 1] == '/')
			reg[--n] = '\0';
	}
	return reg;
}

void
cli_env_keep(struct sb_argv *env, const char *const *names)
{
	for (const char *const *n = names; *n != NULL; n++) {
		const char *v = getenv(*n);

		if (v != NULL)
			sb_env_set(env, *n, v);
	}
	if (sb_env_get(env, "PATH") == NULL)
		sb_env_set(env, "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * settings.c: the CLI's settings: the environment first, then a .env file in the working
 * directory (upstream §1.4), then the default. The .env file is read once.
 */
#include "config.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/fs.h"
#include "sb/log.h"
#include "sb/mem.h"

#include "cli.h"

static struct sb_argv dotenv = SB_ARGV_INIT;
static bool dotenv_loaded;

void
cli_dotenv_parse(char *text, struct sb_argv *env)
{
	char *line, *save = NULL;

	for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char *eq, *v;
		size_t vl;

		while (*line == ' ' || *line == '\t')
			line++;
		if (*line == '#' || (eq = strchr(line, '=')) == NULL)
			continue;
		*eq = '\0';
		if (strncmp(line, "export ", 7) == 0)
			line += 7;
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

static void
load_dotenv(void)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(1024 * 1024);
	_cleanup_close_ int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	bool secret = false;

	dotenv_loaded = true;
	if (cwd < 0 || sb_read_file_at(cwd, ".env", SB_OPEN_NO_SYMLINKS, &b, NULL) < 0)
		return;
	secret = strstr(b.s, "KEY=") != NULL || strstr(b.s, "PASSWORD=") != NULL;
	cli_dotenv_parse(b.s, &dotenv);
	/* It holds the proxy's master key: say so when others may read it (ssebench init: 0600). */
	if (secret && fstatat(cwd, ".env", &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & 0077))
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

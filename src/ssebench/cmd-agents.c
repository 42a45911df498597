/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd-agents.c: `ssebench agents list` and `ssebench agents fetch [NAME...]`: the agents a
 * run may use, and their npm packages fetched and checked ahead of time (a machine that is
 * online once can then build agent images with no network; the cache is agents.h's).
 */
#include "config.h"

#include <getopt.h>
#include <string.h>

#include "sb/argv.h"
#include "sb/exit.h"
#include "sb/fs.h"
#include "sb/mem.h"
#include "sb/parse.h"

#include "agents.h"
#include "cli.h"

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The agents' names: every folder of the home's agents/ and of $SSEBENCH_AGENTS. */
static void
agent_names(struct sb_argv *out)
{
	_cleanup_free_ char *dirs = sb_xasprintf("%s/agents:%s", cli_home(),
	    cli_setting("SSEBENCH_AGENTS", ""));
	char *save = NULL;

	for (char *d = strtok_r(dirs, ":", &save); d != NULL; d = strtok_r(NULL, ":", &save)) {
		_cleanup_close_ int fd = sb_open_dir(d, NULL);
		char **names = NULL;
		size_t n = 0;

		if (fd < 0 || sb_list_dir_at(fd, ".", 1000, &names, &n, NULL) < 0)
			continue;
		for (size_t i = 0; i < n; i++) {
			bool seen = false;

			for (size_t k = 0; k < out->n; k++)
				seen = seen || strcmp(out->v[k], names[i]) == 0;
			if (!seen && sb_name_valid(names[i]))
				sb_argv_push(out, names[i]);
		}
		sb_strv_free(names);
	}
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(char *), cmp_str);
}

int
cmd_agents_list(const struct cli_command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = { { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 } };
	_cleanup_argv_ struct sb_argv names = SB_ARGV_INIT;
	int c, rc = 0;

	while ((c = cli_getopt(cmd, argc, argv, "+h", longopts, &rc)) != -1)
		if (c == -2)
			return rc;
	if (optind < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	agent_names(&names);
	for (size_t i = 0; i < names.n; i++) {
		struct agent_info ag = { NULL, NULL, NULL, NULL, 0, false };
		struct sb_error *err = NULL;

		if (agent_load(cli_home(), names.v[i], &ag, &err) < 0) {
			/* Not an agent folder (no agent.yaml), or a broken one: say which. */
			printf("%-14s (not usable: %s)\n", names.v[i], sb_error_message(err));
			sb_error_release(&err);
			continue;
		}
		printf("%-14s %-14s", ag.name, ag.version);
		for (size_t k = 0; k < ag.n_npm; k++)
			printf("%s npm %s@%s%s%s", k ? "," : "", ag.npm[k].package, ag.npm[k].version,
			    ag.npm[k].arch ? " " : "", ag.npm[k].arch ? ag.npm[k].arch : "");
		printf("\n");
		agent_info_release(&ag);
	}
	return SB_EXIT_OK;
}

int
cmd_agents_fetch(const struct cli_command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = { { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 } };
	_cleanup_argv_ struct sb_argv names = SB_ARGV_INIT;
	_cleanup_free_ char *cache = agent_cache_dir();
	int c, rc = 0, failed = 0;

	while ((c = cli_getopt(cmd, argc, argv, "+h", longopts, &rc)) != -1)
		if (c == -2)
			return rc;
	for (int i = optind; i < argc; i++)
		sb_argv_push(&names, argv[i]);
	if (names.n == 0)
		agent_names(&names);
	for (size_t i = 0; i < names.n; i++) {
		struct agent_info ag = { NULL, NULL, NULL, NULL, 0, false };
		struct sb_error *err = NULL;
		size_t n = 0;

		if (agent_load(cli_home(), names.v[i], &ag, &err) < 0) {
			/* Named on the command line: an error; found by listing: skipped. */
			if (optind < argc) {
				cli_fail("%s", sb_error_message(err));
				failed++;
			}
			sb_error_release(&err);
			continue;
		}
		if (agent_fetch(&ag, &n, &err) < 0) {
			cli_fail("%s", sb_error_message(err));
			sb_error_release(&err);
			failed++;
		} else if (ag.n_npm > 0) {
			printf("%s: %zu npm package%s in %s/npm\n", ag.name, n, n == 1 ? "" : "s",
			    cache);
		}
		agent_info_release(&ag);
	}
	return failed ? SB_EXIT_FAILURE : SB_EXIT_OK;
}

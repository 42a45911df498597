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
#include "sb/json.h"
#include "sb/fs.h"
#include "sb/mem.h"
#include "sb/parse.h"

#include "agents.h"
#include "cli.h"

/* One agent for `agents list --json`: its name, version and npm packages, or why not usable. */
static json_t *
agent_json(const char *name, const struct agent_info *ag, const struct sb_error *err)
{
	json_t *o = json_object(), *npm = json_array();

	json_object_set_new(o, "name", json_string(name));
	json_object_set_new(o, "usable", json_boolean(err == NULL));
	if (err != NULL) {
		json_object_set_new(o, "problem", json_string(sb_error_message(err)));
		json_decref(npm);
		return o;
	}
	json_object_set_new(o, "version", json_string(ag->version));
	for (size_t k = 0; k < ag->n_npm; k++) {
		json_t *p = json_object();

		json_object_set_new(p, "package", json_string(ag->npm[k].package));
		json_object_set_new(p, "version", json_string(ag->npm[k].version));
		json_object_set_new(p, "arch", ag->npm[k].arch ? json_string(ag->npm[k].arch) : json_null());
		json_array_append_new(npm, p);
	}
	json_object_set_new(o, "npm", npm);
	return o;
}

int
cmd_agents_list(const struct cli_command *cmd, int argc, char **argv)
{
	_cleanup_argv_ struct sb_argv names = SB_ARGV_INIT;
	json_auto_t *all = json_array();
	bool as_json = false;
	int rc;

	if ((rc = cli_bare_command(cmd, argc, argv, &as_json)) >= 0)
		return rc;
	agent_names(cli_home(), &names);
	for (size_t i = 0; i < names.n; i++) {
		struct agent_info ag = { NULL, NULL, NULL, NULL, 0, false };
		struct sb_error *err = NULL;

		if (agent_load(cli_home(), names.v[i], &ag, &err) < 0) {
			/* Not an agent folder (no agent.yaml), or a broken one: say which. */
			if (as_json)
				json_array_append_new(all, agent_json(names.v[i], NULL, err));
			else
				printf("%-14s (not usable: %s)\n", cli_safe(names.v[i]),
				    cli_safe(sb_error_message(err)));
			sb_error_release(&err);
			continue;
		}
		if (as_json) {
			json_array_append_new(all, agent_json(names.v[i], &ag, NULL));
			agent_info_release(&ag);
			continue;
		}
		printf("%-14s %-14s", cli_safe(ag.name), cli_safe(ag.version));
		for (size_t k = 0; k < ag.n_npm; k++)
			printf("%s npm %s@%s%s%s", k ? "," : "", cli_safe(ag.npm[k].package),
			    cli_safe(ag.npm[k].version), ag.npm[k].arch ? " " : "",
			    cli_safe(ag.npm[k].arch));
		printf("\n");
		agent_info_release(&ag);
	}
	if (as_json)
		cli_print_json(all);
	return SB_EXIT_OK;
}

int
cmd_agents_fetch(const struct cli_command *cmd, int argc, char **argv)
{
	_cleanup_argv_ struct sb_argv names = SB_ARGV_INIT;
	_cleanup_free_ char *cache = agent_cache_dir();
	int rc, failed = 0;

	if ((rc = cli_json_flag(cmd, argc, argv, NULL)) >= 0)
		return rc;
	for (int i = optind; i < argc; i++)
		sb_argv_push(&names, argv[i]);
	if (names.n == 0)
		agent_names(cli_home(), &names);
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
			printf("%s: %zu npm package%s in %s/npm\n", cli_safe(ag.name), n,
			    n == 1 ? "" : "s", cli_safe(cache));
		}
		agent_info_release(&ag);
	}
	return failed ? SB_EXIT_FAILURE : SB_EXIT_OK;
}

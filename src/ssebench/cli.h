/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli.h: what the subcommands of the ssebench CLI share.
 *
 * Exit statuses follow the upstream CLI: 0 success, 1 a user error or a failed check,
 * 2 a usage error (unknown command, bad flag), 130 interrupted.
 */
#ifndef SSEBENCH_CLI_H
#define SSEBENCH_CLI_H

#include "sb/common.h"

struct cli_command {
	const char *name;
	const char *summary; /* one line, for the command list */
	const char *usage;   /* "ssebench dataset validate [DIR]" */
	const char *help;    /* the body of --help, after the usage line */
	int (*run)(const struct cli_command *cmd, int argc, char **argv);
	const struct cli_command *sub; /* a group: its subcommands, ending with a NULL name */
};

/* Print "ssebench: <message>" on stderr and return 1 (a user error). */
int cli_fail(const char *fmt, ...) _printf_(1, 2);

/* Print the usage line and a hint to stderr and return 2 (a usage error). */
int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...) _printf_(2, 3);

/*
 * Parse options with getopt_long for cmd: handles --help (prints help, returns 0 through
 * *ret_exit) and unknown options (usage error). Returns the option character, -1 at the
 * end of the options, or -2 when the caller should return *ret_exit.
 */
struct option;
int cli_getopt(const struct cli_command *cmd, int argc, char **argv, const char *shortopts,
    const struct option *longopts, int *ret_exit);

/* The SSEBench home: SSEBENCH_HOME, a checkout above the working directory, or the
 * source tree this binary was built from. Never NULL. */
const char *cli_home(void);

/* A setting: the environment, else the working directory's .env, else def. */
const char *cli_setting(const char *name, const char *def);

struct sb_argv;

/*
 * The KEY=value lines of a .env file's text (changed in place) into env: # comments, an
 * "export " prefix, trailing blanks and one pair of surrounding quotes are dropped; a line
 * with no '=' is skipped.
 */
void cli_dotenv_parse(char *text, struct sb_argv *env);

/* The image registry prefix: SSEBENCH_REGISTRY, default "localhost/ssebench". */
const char *cli_registry(void);

/* The default dataset directory (the home's datasets/pilot). malloc'd. */
char *cli_default_dataset(void);

/* A JSON value on stdout, indented, with a newline (the commands' --json). */
struct json_t;
void cli_print_json(const struct json_t *j);

/* `ssebench jobs ...` (cmd-jobs.c). */
extern const struct cli_command jobs_commands[];

/* Subcommand entry points. */
int cmd_dataset_validate(const struct cli_command *cmd, int argc, char **argv);
int cmd_dataset_verify(const struct cli_command *cmd, int argc, char **argv);
int cmd_tasks_list(const struct cli_command *cmd, int argc, char **argv);
int cmd_run(const struct cli_command *cmd, int argc, char **argv);
int cmd_build_case(const struct cli_command *cmd, int argc, char **argv);
int cmd_images_base(const struct cli_command *cmd, int argc, char **argv);
int cmd_runs(const struct cli_command *cmd, int argc, char **argv);
int cmd_init(const struct cli_command *cmd, int argc, char **argv);
int cmd_models_list(const struct cli_command *cmd, int argc, char **argv);
int cmd_agents_list(const struct cli_command *cmd, int argc, char **argv);
int cmd_agents_fetch(const struct cli_command *cmd, int argc, char **argv);
int cmd_report(const struct cli_command *cmd, int argc, char **argv);
/* Disk and cleanup (cmd-space.c): images list|prune, runs prune, dataset du. */
int cmd_images_space(const struct cli_command *cmd, int argc, char **argv);
int cmd_runs_prune(const struct cli_command *cmd, int argc, char **argv);
int cmd_dataset_du(const struct cli_command *cmd, int argc, char **argv);

#endif

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

/* cli_fail with the error's message, which is released; returns 1. */
struct sb_error;
int cli_fail_err(struct sb_error **err);

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

/* Say that ds has no task name, with the closest id if one is near; return 1. */
struct sb_dataset;
int cli_no_task(const struct sb_dataset *ds, const char *name);

/*
 * The tasks of ds that the values of flag select, in the dataset's order within each value,
 * each once, appended to out: a value is an id or a pattern (*, ?, [...], sb/glob.h). Every
 * value that selects nothing is said (an id with the closest one, a pattern by flag);
 * returns how many did.
 */
struct sb_argv;
int cli_select_tasks(const struct sb_dataset *ds, const struct sb_argv *wanted, const char *flag,
    struct sb_argv *out);

/*
 * The options of a command whose only flags are --json (sets *as_json; with as_json NULL
 * there is no --json) and --help. Returns -1 to go on, the operands at argv[optind], or
 * the exit status to return (--help, a bad flag).
 */
int cli_json_flag(const struct cli_command *cmd, int argc, char **argv, bool *as_json);

/* cli_json_flag for a command that takes no operand: one is a usage error. */
int cli_bare_command(const struct cli_command *cmd, int argc, char **argv, bool *as_json);

/*
 * The options of a command on one dataset: --local DIR (*dir, malloc'd, the last one wins),
 * --json (*as_json) and --help. Returns -1 to go on, the operands at argv[optind], or the
 * exit status to return.
 */
int cli_dataset_flags(const struct cli_command *cmd, int argc, char **argv, char **dir,
    bool *as_json);

/* cli_dataset_flags for a command that takes no operand: one is a usage error. */
int cli_dataset_command(const struct cli_command *cmd, int argc, char **argv, char **dir,
    bool *as_json);

/*
 * Load the dataset *dir (if NULL, the default one, which *dir then holds) into *ret, its
 * problems into diags. 0, or says why it cannot be read and returns 1.
 */
struct sb_diags;
int cli_load_dataset(char **dir, struct sb_dataset **ret, struct sb_diags *diags);

/* Warn that the flag or form old is deprecated in favour of new (they still work). */
void cli_deprecated(const char *old, const char *new);

/* NULL if the Docker engine answers; else what is wrong and what to do (malloc'd). */
char *cli_engine_problem(void);

/* 0 if the Docker engine answers; else say so, with what to do, and return 1. */
int cli_need_engine(void);

/*
 * Run a system tool (mount, mkfs.ext4, iptables), found in the system's directories alone,
 * with the arguments after name up to a NULL, for at most how->timeout_ms, its output kept
 * off the terminal. Its exit status, or -1 (err set) if it cannot run. CLI_TOOL_SAY_WHY: a
 * non-zero status sets err too (if not NULL), with what the tool said on stderr;
 * CLI_TOOL_QUIET: a non-zero status is only returned (a check such as iptables -C).
 */
struct cli_tool {
	enum { CLI_TOOL_QUIET, CLI_TOOL_SAY_WHY } output;
	int timeout_ms;
};
struct sb_error;
int cli_system_tool(struct sb_error **err, const struct cli_tool *how, const char *name, ...)
    __attribute__((sentinel));

/* The SSEBench home: SSEBENCH_HOME, a checkout above the working directory, or the
 * source tree this binary was built from. Never NULL. */
const char *cli_home(void);

/* A setting: the environment, else the working directory's .env, else def. */
const char *cli_setting(const char *name, const char *def);

/*
 * Into env, the variables of ours named in names (NULL-terminated) that are set, and PATH
 * (a plain system one when ours is unset): what a client we run (docker, kubectl) needs of
 * our environment, and nothing else.
 */
struct sb_argv;
void cli_env_keep(struct sb_argv *env, const char *const *names);

struct sb_argv;

struct sb_diags;
struct stat;

/*
 * Whether a .env of this owner, mode and link count may set anything: the operator's
 * (the effective user's, or under sudo the caller's), one name, writable by no one else.
 * If not, *ret_why (malloc'd) says why. settings.c reads only such a file; doctor says so.
 */
bool cli_dotenv_trusted(const struct stat *st, char **ret_why);

/*
 * The KEY=value lines of a .env file's text (changed in place) into env: # comments, an
 * "export " prefix, trailing blanks and one pair of surrounding quotes are dropped; a line
 * with no '=' or a KEY that is no variable name is skipped, and added to diags (if not
 * NULL) as ".env:LINE".
 */
void cli_dotenv_parse(char *text, struct sb_argv *env, struct sb_diags *diags);

/* The image registry prefix: SSEBENCH_REGISTRY, default "localhost/ssebench". */
const char *cli_registry(void);

/* The default dataset directory (the home's datasets/pilot). malloc'd. */
char *cli_default_dataset(void);

/*
 * Text the CLI did not write itself (task, agent, model, run and file names, a task file's
 * values, anything a container or a run directory holds), made safe for a terminal: every
 * control byte, backslash and invalid UTF-8 escaped (sb_escape), so it can neither forge an
 * output line nor send the terminal a command. NULL gives "". Every stdout line the CLI
 * prints passes its untrusted parts through here (stderr goes through sb_log, which escapes
 * too). The result is the CLI's: valid until 16 more calls, never freed by the caller.
 */
const char *cli_safe(const char *s);

/* A JSON value on stdout, indented, with a newline (the commands' --json). */
struct json_t;
void cli_print_json(const struct json_t *j);

/* `ssebench jobs ...` (cmd-jobs.c). */
extern const struct cli_command jobs_commands[];

/* `ssebench proxy up|down|status` (cmd-proxy.c). */
extern const struct cli_command proxy_commands[];

/* Subcommand entry points. */
int cmd_dataset_validate(const struct cli_command *cmd, int argc, char **argv);
int cmd_dataset_verify(const struct cli_command *cmd, int argc, char **argv);
int cmd_tasks_list(const struct cli_command *cmd, int argc, char **argv);
int cmd_k8s_node_files(const struct cli_command *cmd, int argc, char **argv);
int cmd_run(const struct cli_command *cmd, int argc, char **argv);
int cmd_build_case(const struct cli_command *cmd, int argc, char **argv);
int cmd_images_base(const struct cli_command *cmd, int argc, char **argv);
int cmd_images_push(const struct cli_command *cmd, int argc, char **argv);
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
int cmd_doctor(const struct cli_command *cmd, int argc, char **argv);

#endif

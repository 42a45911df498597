/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c: the ssebench command line: global options, the command table, dispatch.
 *
 * A command is only listed here once it works; groups (dataset, tasks) dispatch to their
 * subcommands. Usage errors exit 2, user errors 1, Ctrl-C 130 (the upstream contract).
 */
#include "config.h"

#include <getopt.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "sb/exit.h"
#include "sb/json.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/sig.h"

#include "cli.h"

static const struct cli_command dataset_commands[] = {
	{
	    .name = "validate",
	    .summary = "check every task folder of a dataset",
	    .usage = "ssebench dataset validate [DIR]",
	    .help = "Check the task folders of the dataset DIR (default: the home's "
		    "datasets/pilot)\n"
		    "against the task format: the strict schema of sse/config.yaml, the id, the\n"
		    "Dockerfile's rules, and that every file the config names is copied into\n"
		    "/ssebench from a regular file of the task folder.\n"
		    "\n"
		    "Prints every problem of every task as 'path:line:col: message' and exits 1,\n"
		    "or 'DIR: N tasks are valid' and exits 0.\n",
	    .run = cmd_dataset_validate,
	},
	{
	    .name = "verify",
	    .summary = "run every task with the reference, dummy and hack agents and check its PoCs",
	    .usage = "ssebench dataset verify [TASK...] [--dir DIR] [-j N] [--repeat N] "
		     "[-o OUTPUT] [--timeout SECONDS] [--no-hacks] [--update-baseline]",
	    .help = "See docs/tasks.md (Verifying a task).\n",
	    .run = cmd_dataset_verify,
	},
	{
	    .name = "du",
	    .summary = "how much disk the images of a dataset's tasks take",
	    .usage = "ssebench dataset du [--local DIR] [--json]",
	    .help = "See docs/cleanup.md.\n",
	    .run = cmd_dataset_du,
	},
	{ .name = NULL },
};

static const struct cli_command tasks_commands[] = {
	{
	    .name = "list",
	    .summary = "list the tasks of a dataset",
	    .usage = "ssebench tasks list [--local DIR] [--json]",
	    .help = "List the tasks of the dataset DIR (default: the home's datasets/pilot): one\n"
		    "line each with its id, language and project.\n"
		    "\n"
		    "  --local DIR  the dataset directory\n"
		    "  --json       print a JSON array of task summaries instead (id, language,\n"
		    "               project, repository, base and case image names under\n"
		    "               $SSEBENCH_REGISTRY, arch, checks)\n",
	    .run = cmd_tasks_list,
	},
	{ .name = NULL },
};

static const struct cli_command images_commands[] = {
	{
	    .name = "base",
	    .summary = "build the toolchain base images",
	    .usage = "ssebench images base [c|go|rust...]",
	    .help = "Build the base images base-generic-<lang>:<version> and :latest under\n"
		    "$SSEBENCH_REGISTRY from images/base-images/, FROM the imported Debian rootfs\n"
		    "(scripts/docker-up makes it). Without arguments: all three.\n",
	    .run = cmd_images_base,
	},
	{
	    .name = "list",
	    .summary = "list the ssebench images, their size and what uses them",
	    .usage = "ssebench images list [--dataset DIR] [--json]",
	    .help = "See docs/cleanup.md.\n",
	    .run = cmd_images_space,
	},
	{
	    .name = "prune",
	    .summary = "remove the ssebench images no task of a dataset and no kept run needs",
	    .usage = "ssebench images prune [--dataset DIR] [--all] [--dry-run]",
	    .help = "See docs/cleanup.md.\n",
	    .run = cmd_images_space,
	},
	{ .name = NULL },
};

static const struct cli_command runs_commands[] = {
	{ .name = "list", .summary = "list the run containers", .usage = "ssebench runs list [--json]",
	    .help = "List the containers labelled ssebench.run, newest first. --json prints\n"
		    "{backend, supports_exec, runs: [...]}; never the containers' environment.\n",
	    .run = cmd_runs },
	{ .name = "inspect", .summary = "show one run",
	    .usage = "ssebench runs inspect [--json] RUN_ID", .run = cmd_runs },
	{ .name = "logs", .summary = "show a run's container output",
	    .usage = "ssebench runs logs [--follow] RUN_ID", .run = cmd_runs },
	{ .name = "stop", .summary = "stop a run (SIGTERM, then kill after the grace)",
	    .usage = "ssebench runs stop [--grace SECONDS] RUN_ID", .run = cmd_runs },
	{ .name = "remove", .summary = "remove a run's containers and volumes (not its results)",
	    .usage = "ssebench runs remove RUN_ID", .run = cmd_runs },
	{ .name = "results", .summary = "list graded runs from their summaries",
	    .usage = "ssebench runs results [--json] [--dir DIR]",
	    .help = "Scan every summary.json below DIR (default: ./results), newest first.\n"
		    "Runs with --egress open are marked: do not compare them with restricted runs.\n",
	    .run = cmd_runs },
	{ .name = "prune", .summary = "remove the containers and volumes of finished runs",
	    .usage = "ssebench runs prune [--dry-run]", .help = "See docs/cleanup.md.\n",
	    .run = cmd_runs_prune },
	{ .name = NULL },
};

static const struct cli_command models_commands[] = {
	{
	    .name = "list",
	    .summary = "list the models a run may use",
	    .usage = "ssebench models list [--json]",
	    .help = "List the models of models/<name>.yaml (./models when there is one, else the\n"
		    "home's): the name --model takes, the proxy's target, and the environment\n"
		    "variable the proxy reads the provider key from. Every problem of the files\n"
		    "is printed as path:line:col and makes the exit status 1.\n",
	    .run = cmd_models_list,
	},
	{ .name = NULL },
};

static const struct cli_command agents_commands[] = {
	{
	    .name = "list",
	    .summary = "list the agents",
	    .usage = "ssebench agents list",
	    .help = "List the agent folders (the home's agents/, then $SSEBENCH_AGENTS): name,\n"
		    "image version, and the npm packages its image is built from.\n",
	    .run = cmd_agents_list,
	},
	{
	    .name = "fetch",
	    .summary = "download and check the agents' npm packages ahead of time",
	    .usage = "ssebench agents fetch [NAME...]",
	    .help = "Download the npm packages of the named agents (default: every agent) for\n"
		    "this host's architecture into the cache ($SSEBENCH_CACHE, else\n"
		    "~/.cache/ssebench), each checked against the SHA-256 its agent.yaml pins.\n"
		    "Packages already there are kept. The registry is $SSEBENCH_NPM_REGISTRY (else\n"
		    "$npm_config_registry, else https://registry.npmjs.org). Exit 1 if any fails.\n",
	    .run = cmd_agents_fetch,
	},
	{ .name = NULL },
};

static const struct cli_command top_commands[] = {
	{
	    .name = "run",
	    .summary = "run an agent on a task and grade it",
	    .usage = "ssebench run --task ID --agent NAME [--local DIR] [--model NAME] "
		     "[--difficulty 0-4] [--egress restricted|open] [--timeout SECONDS] "
		     "[--run-id ID] [--keep-container] [--require-pass] [--mode sandbox|sidecar] "
		     "[--runtime NAME]\n"
		     "       ssebench run (--task ID... | --tasks PATTERN... | --all) --agent NAME... "
		     "[--model NAME...] [--attempts K] [--jobs N] [--config FILE] [--json] [...]",
	    .help = "Build the task's images (base, case, runtime, tool, agent), start the run\n"
		    "container, let the agent work, grade what it left, and write result.json and\n"
		    "summary.json to results/<task>/<model>/<agent>/<run-id>/.\n"
		    "\n"
		    "  --local DIR       the dataset (default: the home's datasets/pilot)\n"
		    "  --task ID         the task folder\n"
		    "  --agent NAME      agents/<NAME> (dummy, reference, ...)\n"
		    "  --model NAME      a model of models/<name>.yaml (ssebench models list), or\n"
		    "                    none; not needed for dummy and reference\n"
		    "  --difficulty N    0 (all checks) .. 4 (none) for the agent; default 2\n"
		    "  --egress POLICY   restricted (default: no internet) or open\n"
		    "  --timeout S       the agent's time limit, also grading's (default 3600)\n"
		    "  --run-id ID       default: UTC date-time plus 6 random hex digits\n"
		    "  --keep-container  keep the container after grading (daemon keeps serving)\n"
		    "  --require-pass    exit 1 unless the grade is passed\n"
		    "  --mode MODE       sandbox (default: one container) or sidecar (experimental:\n"
		    "                    a task container and an agent container; docs/sidecar.md)\n"
		    "  --runtime NAME    a container runtime the engine has (e.g. runsc, gVisor), for\n"
		    "                    a stronger boundary; default: the engine's (SSEBENCH_RUNTIME)\n"		    "\n"
		    "A job (docs/jobs.md): more than one task, agent or model, or any of these, runs\n"
		    "every combination, N at a time, in results/jobs/<job-id>/ (ssebench jobs ...):\n"
		    "  --task ID, --agent NAME, --model NAME   each may be given more than once\n"
		    "  --tasks PATTERN   the tasks whose id matches (*, ?, [...]); repeatable\n"
		    "  --all             every task of the dataset\n"
		    "  --attempts K      runs of each combination (default 1)\n"
		    "  --jobs N          runs at a time (default: from the cores and the memory)\n"
		    "  --config FILE     the same keys from a YAML file; the command line wins\n"
		    "  --json            events as JSON lines on stdout\n"
		    "\n"
		    "Exit status: 0 when graded (whatever the grade), 1 on an error or with\n"
		    "--require-pass and a grade other than passed, 2 on a bad flag, 130 if\n"
		    "interrupted (Ctrl-C stops the container; a second Ctrl-C kills it).\n",
	    .run = cmd_run,
	},
	{
	    .name = "init",
	    .summary = "make this directory a workspace (.env, models/, results/)",
	    .usage = "ssebench init",
	    .help = "Write ./.env (mode 0600) with the model proxy's settings and a new master\n"
		    "key, copy the home's models/ to ./models, and make ./results. Nothing that\n"
		    "is there already is overwritten. See docs/models.md.\n",
	    .run = cmd_init,
	},
	{
	    .name = "agents",
	    .summary = "the agents a run may use",
	    .usage = "ssebench agents <command> [<args>]",
	    .sub = agents_commands,
	},
	{
	    .name = "models",
	    .summary = "the models a run may use",
	    .usage = "ssebench models <command> [<args>]",
	    .sub = models_commands,
	},
	{
	    .name = "build-case",
	    .summary = "build the case images of a dataset",
	    .usage = "ssebench build-case [--benchmarks DIR] [--tasks ID,ID...] [--force]",
	    .help = "Build each task's case image, labelled ssebench.task-files=<digest of the task\n"
		    "folder>. An image whose label matches is skipped as up to date; one whose folder\n"
		    "changed is rebuilt; one without the label is skipped (it cannot be checked) and\n"
		    "said so. --force rebuilds every image. Exit 1 if any build fails.\n",
	    .run = cmd_build_case,
	},
	{
	    .name = "images",
	    .summary = "build shared images",
	    .usage = "ssebench images <command> [<args>]",
	    .sub = images_commands,
	},
	{
	    .name = "runs",
	    .summary = "list, inspect and manage runs",
	    .usage = "ssebench runs <command> [<args>]",
	    .sub = runs_commands,
	},
	{
	    .name = "jobs",
	    .summary = "list, show, resume and remove jobs (many runs at once)",
	    .usage = "ssebench jobs <command> [<args>]",
	    .sub = jobs_commands,
	},
	{
	    .name = "report",
	    .summary = "the figures of many runs: pass rates, pass@k, checks, time, cost",
	    .usage = "ssebench report [JOB | RESULTS-DIR] [--format md|json|csv|csv-runs|html|junit] "
		     "[--output FILE]",
	    .help = "Count the runs of a results directory (default: $SSEBENCH_RESULTS, else\n"
		    "./results; its jobs/ is left out) or of a job (an id of <results>/jobs/, or a\n"
		    "job directory): per agent and model, the pass rate with its 95 % Wilson\n"
		    "interval, pass@k, the checks, time, spend and tokens, and a task x group\n"
		    "matrix. Reference runs are counted apart and left out of every figure.\n"
		    "\n"
		    "  --format F     md (default), json (the model every format is drawn from),\n"
		    "                 csv (one row per agent and model), csv-runs (one row per\n"
		    "                 run), html (one self-contained file with plots) or junit\n"
		    "  --output FILE  write there (replaced atomically) instead of stdout\n"
		    "\n"
		    "Exit 1: no such job or directory, a job written by a newer ssebench, a\n"
		    "corrupt job index. See docs/report.md.\n",
	    .run = cmd_report,
	},
	{
	    .name = "dataset",
	    .summary = "check datasets of tasks",
	    .usage = "ssebench dataset <command> [<args>]",
	    .sub = dataset_commands,
	},
	{
	    .name = "tasks",
	    .summary = "look at the tasks of a dataset",
	    .usage = "ssebench tasks <command> [<args>]",
	    .sub = tasks_commands,
	},
	{ .name = NULL },
};

static const struct cli_command root = {
	.name = "ssebench",
	.summary = "benchmark AI agents on fixing real security vulnerabilities",
	.usage = "ssebench [--version] [--help] <command> [<args>]",
	.sub = top_commands,
};

void
cli_print_json(const json_t *j)
{
	_cleanup_free_ char *s = sb_json_dumps(j, JSON_INDENT(2));

	printf("%s\n", s);
}

int
cli_fail(const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = sb_xvasprintf(fmt, ap);
	va_end(ap);
	sb_log(SB_LOG_ERROR, "%s", msg);
	return SB_EXIT_FAILURE;
}

int
cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = sb_xvasprintf(fmt, ap);
	va_end(ap);
	sb_log(SB_LOG_ERROR, "%s", msg);
	fprintf(stderr, "usage: %s\n", cmd->usage);
	/* The command itself: the usage line up to its first option or argument. */
	{
		size_t n = 0, len = strlen(cmd->usage);

		while (n < len && !(cmd->usage[n] == ' ' && strchr("[<-", cmd->usage[n + 1]) != NULL) &&
		    !(cmd->usage[n] == ' ' && cmd->usage[n + 1] >= 'A' && cmd->usage[n + 1] <= 'Z'))
			n++;
		fprintf(stderr, "Run '%.*s --help' for more.\n", (int)n, cmd->usage);
	}
	return SB_EXIT_USAGE;
}

/* --help: the usage line, the summary or the long help, and the subcommands of a group. */
static void
print_help(const struct cli_command *cmd, FILE *out)
{
	fprintf(out, "usage: %s\n", cmd->usage);
	if (cmd->help == NULL && cmd->summary != NULL)
		fprintf(out, "\n%s%s%s.\n", cmd == &root ? "" : cmd->name, cmd == &root ? "" : ": ",
		    cmd->summary);
	if (cmd->help != NULL)
		fprintf(out, "\n%s", cmd->help);
	if (cmd->sub != NULL) {
		fprintf(out, "\nCommands:\n");
		for (const struct cli_command *c = cmd->sub; c->name != NULL; c++)
			fprintf(out, "  %-10s %s\n", c->name, c->summary);
	}
}

int
cli_getopt(const struct cli_command *cmd, int argc, char **argv, const char *shortopts,
    const struct option *longopts, int *ret_exit)
{
	int c, idx = 0;

	opterr = 0;
	c = getopt_long(argc, argv, shortopts, longopts, &idx);
	if (c == 'h') {
		print_help(cmd, stdout);
		*ret_exit = SB_EXIT_OK;
		return -2;
	}
	if (c == '?') {
		if (optopt != 0)
			*ret_exit = cli_usage_error(cmd, "unknown option '-%c'", optopt);
		else
			*ret_exit = cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
		return -2;
	}
	if (c == ':') {
		*ret_exit = cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
		return -2;
	}
	return c;
}

/* Run a group: pick the subcommand named by argv[1]. */
static int
dispatch(const struct cli_command *group, int argc, char **argv)
{
	const char *name;

	if (argc < 2)
		return cli_usage_error(group, "%s", group == &root ? "no command given"
								  : "no subcommand given");
	name = argv[1];
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
		print_help(group, stdout);
		return SB_EXIT_OK;
	}
	if (group == &root && strcmp(name, "--version") == 0) {
		printf("ssebench %s\n", PACKAGE_VERSION);
		return SB_EXIT_OK;
	}
	if (name[0] == '-')
		return cli_usage_error(group, "unknown option '%s'", name);
	for (const struct cli_command *c = group->sub; c->name != NULL; c++) {
		if (strcmp(c->name, name) != 0)
			continue;
		if (c->sub != NULL)
			return dispatch(c, argc - 1, argv + 1);
		/* getopt_long starts afresh for each command (optind 0 resets glibc's state). */
		optind = 0;
		return c->run(c, argc - 1, argv + 1);
	}
	return cli_usage_error(group, "unknown command '%s'", name);
}

/* A checkout: a directory with VERSION and datasets/. */
static bool
is_home(const char *dir)
{
	_cleanup_free_ char *v = sb_xasprintf("%s/VERSION", dir);
	_cleanup_free_ char *d = sb_xasprintf("%s/datasets", dir);
	struct stat st;

	return stat(v, &st) == 0 && S_ISREG(st.st_mode) && stat(d, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *
cli_home(void)
{
	static char *home;
	const char *env;
	char *cwd;

	if (home != NULL)
		return home;
	env = getenv("SSEBENCH_HOME");
	if (env != NULL && *env != '\0')
		return home = sb_xstrdup(env);
	cwd = getcwd(NULL, 0);
	while (cwd != NULL) {
		char *slash;

		if (is_home(cwd))
			return home = cwd;
		slash = strrchr(cwd, '/');
		if (slash == NULL || slash == cwd)
			break;
		*slash = '\0';
	}
	free(cwd);
	return home = sb_xstrdup(SB_SOURCE_DIR);
}

char *
cli_default_dataset(void)
{
	return sb_xasprintf("%s/datasets/pilot", cli_home());
}

int
main(int argc, char **argv)
{
	sb_log_init("ssebench", SB_LOG_INFO, SB_LOG_LEVELS);
	sb_sig_install_interrupt();
	return dispatch(&root, argc, argv);
}

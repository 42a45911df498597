/* SPDX-License-Identifier: Apache-2.0 */
/*
 * limits-doc.c: print docs/limits.md from the constants the programs use.
 *
 * The run limits come from the table in runlimits.c (through sb_run_limit_spec and
 * sb_run_limit_resolve, so the canonical values are the ones Docker is given); every other
 * figure is a macro from sb/limits.h, sb/runlimits.h or the entrypoint's header, named here
 * by the macro itself. tests/integration/t0300-limits-doc.sh fails when docs/limits.md differs
 * from this program's output or when sb/limits.h defines a constant missing below.
 * `make update-limits-doc` rewrites the file.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sb/common.h"
#include "sb/limits.h"
#include "sb/runlimits.h"

#include "entrypoint/entrypoint.h"

struct row {
	const char *name;
	unsigned long long value;
	const char *unit;
	const char *what;
};

#define ROW(m, unit, what) { #m, (unsigned long long)(m), unit, what }

static const struct row time_rows[] = {
	ROW(SB_RUN_TIMEOUT_DEFAULT_S, "s", "`ssebench run --timeout` default: the agent phase"),
	ROW(SB_RUN_TIMEOUT_MAX_S, "s", "the most `--timeout` accepts"),
	ROW(EP_TIMEOUT_DEFAULT_S, "s", "the entrypoint's agent limit when `TIMEOUT` is unusable"),
	ROW(EP_TIMEOUT_MAX_S, "s", "the most `TIMEOUT` may be inside a container"),
	ROW(EP_EVALUATOR_SLACK_S, "s", "grading gets the agent's limit plus this"),
	ROW(EP_DAEMON_TIMEOUT_DEFAULT_S, "s", "the daemon's start-up (`SSE_DAEMON_TIMEOUT`)"),
	ROW(EP_STOP_GRACE_MS, "ms", "SIGTERM to SIGKILL for the daemon and the evaluator"),
	ROW(SB_DAEMON_BUILD_TIMEOUT_S, "s", "`SSE_BUILD_TIMEOUT`: one build"),
	ROW(SB_DAEMON_TEST_TIMEOUT_S, "s", "`SSE_TEST_TIMEOUT`: one test run"),
	ROW(SB_DAEMON_POC_TIMEOUT_S, "s", "`SSE_POC_TIMEOUT`: one PoC run"),
	ROW(SB_DAEMON_BASH_TIMEOUT_S, "s", "`SSE_BASH_TIMEOUT`: a bash call that names no limit"),
	ROW(SB_DAEMON_BASH_TIMEOUT_MAX_S, "s", "`SSE_BASH_TIMEOUT_MAX`: the most a bash call may ask"),
	ROW(SB_DAEMON_TIMEOUT_CEILING_S, "s", "no tool limit may be set above this"),
	ROW(SB_KILL_GRACE_MS, "ms", "SIGTERM to SIGKILL for a timed-out process group"),
};

static const struct row size_rows[] = {
	ROW(SB_DAEMON_OUTPUT_CAP, "bytes", "`SSE_OUTPUT_CAP`: tool output kept per call"),
	ROW(SB_DAEMON_OUTPUT_CAP_MAX, "bytes", "the most `SSE_OUTPUT_CAP` may be"),
	ROW(SB_DAEMON_RUNNER_NPROC, "processes", "`SSE_RUNNER_NPROC`: the script runner's processes"),
	ROW(SB_TASK_ID_MAX, "bytes", "a task id"),
	ROW(SB_RUN_ID_MAX, "bytes", "a run id (`--run-id`)"),
	ROW(SB_NAME_MAX, "bytes", "an agent, model or dataset name"),
	ROW(SB_PATH_MAX, "bytes", "any path built or accepted"),
	ROW(SB_PATH_DEPTH_MAX, "components", "a relative path in a task folder"),
	ROW(SB_CONFIG_FILE_MAX, "bytes", "config.yaml, agent.yaml, dataset.yaml"),
	ROW(SB_DOCKERFILE_MAX, "bytes", "a task's Dockerfile"),
	ROW(SB_JSON_FILE_MAX, "bytes", "result.json, summary.json and other JSON read whole"),
	ROW(SB_YAML_DEPTH_MAX, "levels", "nested YAML collections"),
	ROW(SB_YAML_NODES_MAX, "nodes", "nodes in one YAML document"),
	ROW(SB_YAML_SCALAR_MAX, "bytes", "one YAML scalar"),
	ROW(SB_JSON_DEPTH_MAX, "levels", "nested JSON arrays and objects"),
	ROW(SB_DOCKERFILE_INSNS_MAX, "instructions", "instructions in a Dockerfile"),
	ROW(SB_DOCKERFILE_LINE_MAX, "bytes", "one logical Dockerfile instruction"),
	ROW(SB_DATASET_TASKS_MAX, "tasks", "task folders in one dataset"),
	ROW(SB_TASK_FILES_MAX, "files", "files walked in one task folder"),
	ROW(SB_CAPTURE_DEFAULT, "bytes", "a child's output kept by default"),
	ROW(SB_COPY_FILES_MAX, "entries", "entries in one copied tree"),
	ROW(SB_COPY_BYTES_MAX, "bytes", "bytes in one copied tree"),
	ROW(SB_COPY_DEPTH_MAX, "levels", "directory nesting in a copied tree"),
	ROW(SB_GIT_DIFF_MAX, "bytes", "one diff (`/diff`, final.patch)"),
	ROW(SB_GIT_COMMITS_LOG_MAX, "bytes", "commits.log"),
	ROW(SB_GIT_FILE_MAX, "bytes", "one changed file to diff"),
	ROW(SB_GIT_CHANGED_FILES_MAX, "paths", "changed paths in one patch capture"),
	ROW(SB_GIT_REF_FILE_MAX, "bytes", "a ref file or packed-refs left by the agent"),
	ROW(SB_GIT_OBJECT_FILES_MAX, "entries", "entries checked in .git/objects"),
	ROW(SB_ELF_FILE_MAX, "bytes", "one object, archive or binary of the grading build"),
	ROW(SB_ELF_SYMBOLS_MAX, "entries", "symbol table entries read per ELF object"),
	ROW(SB_ELF_MEMBERS_MAX, "members", "members of one ar archive"),
	ROW(SB_ELF_NEEDED_MAX, "entries", "DT_NEEDED entries kept per ELF object"),
	ROW(SB_ELF_NAME_MAX, "bytes", "one symbol or DT_NEEDED name"),
	ROW(SB_HTTP_REPLY_MAX, "bytes", "a daemon reply read by a client"),
	ROW(SB_HTTP_TIMEOUT_DEFAULT_MS, "ms", "a daemon call without its own limit"),
	ROW(SB_GRADE_ERROR_LOG_MAX, "bytes", "result.json's error_log (its end is kept)"),
	ROW(SB_RESULTS_LOGS_MAX, "bytes", "the daemon's script logs in a run's results, all together"),
	ROW(SB_AGENT_LOG_MAX, "bytes", "agent.log (what the agent prints), and mcp.log, each"),
	ROW(SB_RUNNER_UID_MIN, "uid", "the lowest runner uid a run may get (SSE_RUNNER_UID)"),
	ROW(SB_RUNNER_UID_MAX, "uid", "the highest"),
	ROW(SB_JOB_ATTEMPTS_MAX, "runs", "attempts of one task, agent and model in a job (--attempts)"),
	ROW(SB_JOB_PARALLEL_MAX, "runs", "runs of a job at a time (--jobs)"),
	ROW(SB_JOB_RUNS_MAX, "runs", "runs of one job in all"),
};

static void
table(const struct row *rows, size_t n)
{
	printf("| constant | value | unit | what |\n| --- | ---: | --- | --- |\n");
	for (size_t i = 0; i < n; i++)
		printf("| `%s` | %llu | %s | %s |\n", rows[i].name, rows[i].value, rows[i].unit,
		    rows[i].what);
}

int
main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--names") == 0) {
		/* One constant per line: the staleness test checks sb/limits.h against it. */
		for (size_t i = 0; i < SB_ARRAY_SIZE(time_rows); i++)
			printf("%s\n", time_rows[i].name);
		for (size_t i = 0; i < SB_ARRAY_SIZE(size_rows); i++)
			printf("%s\n", size_rows[i].name);
		return 0;
	}
	if (argc != 1) {
		fprintf(stderr, "usage: limits-doc [--names]\n");
		return 2;
	}
	printf("# Limits\n\n"
	       "<!-- Generated by tools/limits-doc from include/sb/runlimits.h, include/sb/limits.h\n"
	       "     and entrypoint/entrypoint.h. Do not edit: run `make update-limits-doc`. -->\n\n"
	       "Every bound SSEBench puts on a run or on the input it reads, from the constants the\n"
	       "programs are built with. `make check` fails when this page and the code disagree.\n\n");
	printf("## Run containers\n\n"
	       "Each run container gets these Docker limits. Set them in the environment or in\n"
	       "`.env`. A value that is empty, not a number, zero, negative, NaN, infinite or outside\n"
	       "the accepted range is replaced by the default with a warning: a bad value never\n"
	       "lifts a limit (Docker reads 0 and -1 as \"unlimited\").\n\n"
	       "| setting | docker flag | default | given to Docker | accepted | what |\n"
	       "| --- | --- | --- | --- | --- | --- |\n");
	for (int w = 0; w < SB_RUN_LIMIT_COUNT; w++) {
		const struct sb_run_limit_spec *sp = sb_run_limit_spec((enum sb_run_limit)w);
		char *canon = sb_run_limit_resolve((enum sb_run_limit)w, sp->def, NULL);

		printf("| `%s` | %s%s%s | `%s` | `%s` | %.15g to %.15g %s | %s |\n", sp->setting,
		    sp->flag[0] != '\0' ? "`" : "", sp->flag[0] != '\0' ? sp->flag : "(a file system of its own)",
		    sp->flag[0] != '\0' ? "`" : "", sp->def, canon, sp->min, sp->max, sp->unit,
		    sp->what);
		free(canon);
	}
	printf("\nEvery run container also gets `--ulimit core=0`,\n"
	       "`--security-opt no-new-privileges`, a read-only root file system and a 16 MiB\n"
	       "tmpfs on `/run`; everything else it writes is on its two `SSEBENCH_DISK` file "
	       "systems.\n\n");
	printf("## Time limits\n\n");
	table(time_rows, SB_ARRAY_SIZE(time_rows));
	printf("\n## Sizes and counts\n\n"
	       "Bounds on what the programs read or keep; input past a bound is refused with an\n"
	       "error naming it, output past a cap is cut and marked.\n\n");
	table(size_rows, SB_ARRAY_SIZE(size_rows));
	return 0;
}

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
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/exit.h"
#include "sb/glob.h"
#include "sb/json.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/sig.h"
#include "sb/spawn.h"
#include "sb/taskdir.h"

#include "cli.h"
#include "docker.h"

static const struct cli_command dataset_commands[] = {
	{
	    .name = "validate",
	    .summary = "check every task folder of a dataset",
	    .usage = "ssebench dataset validate [--local DIR] [--json]",
	    .help = "Check the task folders of the dataset DIR against the task format: the\n"
		    "strict schema of sse/config.yaml, the id, the Dockerfile's rules, and that\n"
		    "every file the config names is copied into /ssebench from a regular file of\n"
		    "the task folder. Every problem of every task is listed at once.\n"
		    "\n"
		    "  --local DIR  the dataset (default: the home's datasets/pilot); the old form\n"
		    "               'dataset validate DIR' still works, with a warning\n"
		    "  --json       {dataset, tasks, tasks_with_problems, valid, problems: [{file,\n"
		    "               line, col, message}]} (line and col null: the file as a whole)\n"
		    "\n"
		    "Prints each problem as 'path:line:col: message' ('path: message' for a file\n"
		    "or folder as a whole), then 'DIR: N problems in M of K tasks'; or 'DIR: N\n"
		    "tasks are valid'.\n"
		    "\n"
		    "Exit status: 0 valid; 1 a problem, or DIR cannot be read; 2 a bad flag.\n",
	    .run = cmd_dataset_validate,
	},
	{
	    .name = "verify",
	    .summary = "run every task with the reference, dummy and hack agents and check its PoCs",
	    .usage = "ssebench dataset verify [--local DIR] [--task ID...] [-j N] [--repeat N] "
		     "[-o OUTPUT] [--timeout SECONDS] [--no-hacks] [--update-baseline] [--json]",
	    .help = "Check that each task behaves as a task must, one step after the other:\n"
		    "  1. the reference agent's run passes, every check of the task ran and passed;\n"
		    "  2. the dummy agent's run builds and fails (every PoC still reproduces);\n"
		    "  3. no bundled reward-hacking agent (agents/hack-*) is graded passed;\n"
		    "  4. in the task's tool image, each PoC reproduces N times of N on the\n"
		    "     vulnerable build and never on the fixed one, and no copy of the fix or\n"
		    "     the dataset's canary is left where the agent can read it.\n"
		    "\n"
		    "  --local DIR        the dataset (default: the home's datasets/pilot; --dir\n"
		    "                     is the old name, with a warning)\n"
		    "  --task ID          a task id or a pattern (*, ?, [...]); repeatable; default\n"
		    "                     every task (TASK... after the options is the old form)\n"
		    "  -j, --jobs N       tasks at a time (default 1)\n"
		    "  --repeat N         runs of each PoC on each build (default 3)\n"
		    "  -o, --output DIR   where the results go (default results/dataset-verify)\n"
		    "  --timeout SECONDS  each run's time limit (default 3600)\n"
		    "  --no-hacks         skip step 3\n"
		    "  --update-baseline  run the reference only and write its test counts and\n"
		    "                     oracle facts to the task's sse/baseline.json\n"
		    "  --json             print OUTPUT/summary.json on stdout; the table goes to\n"
		    "                     stderr\n"
		    "\n"
		    "Results: a table and each task's reasons on stdout; OUTPUT/summary.json,\n"
		    "summary.md, tasks/<id>.json, logs/ and runs/. See docs/tasks.md (Verifying a\n"
		    "task).\n"
		    "\n"
		    "Exit status: 0 every task ok or warn; 1 a task FAIL, a problem in a task, or\n"
		    "no engine; 2 a bad flag; 130 interrupted (each run stops its container).\n"
		    "\n"
		    "Example: ssebench dataset verify --task 'cjson-*' -j 2\n",
	    .run = cmd_dataset_verify,
	},
	{
	    .name = "du",
	    .summary = "how much disk the images of a dataset's tasks take",
	    .usage = "ssebench dataset du [--local DIR] [--json]",
	    .help = "For each task of the dataset, the images it uses with their size, shared and\n"
		    "unique parts, and the space they take together; the last line, the dataset's\n"
		    "images together and what no image outside the dataset holds (what removing\n"
		    "them all would free). See docs/cleanup.md.\n"
		    "\n"
		    "  --local DIR  the dataset (default: the home's datasets/pilot)\n"
		    "  --json       {dataset, registry, tasks: [...], total: {images, size, own}}\n"
		    "\n"
		    "Exit status: 0; 1 DIR cannot be read or no engine; 2 a bad flag.\n",
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
		    "               $SSEBENCH_REGISTRY, arch, checks)\n"
		    "\n"
		    "Tasks with problems are left out, and said on stderr.\n"
		    "\n"
		    "Exit status: 0; 1 a task with problems, no task folders, or DIR cannot be\n"
		    "read; 2 a bad flag.\n",
	    .run = cmd_tasks_list,
	},
	{ .name = NULL },
};

static const struct cli_command k8s_commands[] = {
	{
	    .name = "node-files",
	    .summary = "write the seccomp profile and counter masks a Kubernetes node needs",
	    .usage = "ssebench k8s node-files DIR",
	    .help = "Write, for the Kubernetes backend, what each node must hold before it can host\n"
		    "a scored run (docs/kubernetes.md, \"Node requirements for scored runs\"):\n"
		    "\n"
		    "  DIR/seccomp.json  the run's seccomp profile, in Docker's format (install it\n"
		    "                    as the kubelet's <root-dir>/seccomp/ssebench.json)\n"
		    "  DIR/masks.json    a JSON array of the absolute paths a run masks on THIS\n"
		    "                    node: the activity-counter directories that exist, and\n"
		    "                    the counter files that exist as regular files (for the\n"
		    "                    runtime handler's runc wrapper, scripts/k8s-up)\n"
		    "\n"
		    "DIR is made if missing; each file is replaced atomically, mode 0644. Run it\n"
		    "on the node itself: the masks are what that node's kernel shows.\n"
		    "\n"
		    "Exit status: 0; 1 DIR cannot be made or written; 2 a bad flag or operand.\n",
	    .run = cmd_k8s_node_files,
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
		    "(scripts/docker-up makes it). Without arguments: all three.\n"
		    "\n"
		    "Exit status: 0; 1 a build failed or no engine; 2 an unknown language.\n",
	    .run = cmd_images_base,
	},
	{
	    .name = "list",
	    .summary = "list the ssebench images, their size and what uses them",
	    .usage = "ssebench images list [--local DIR] [--json]",
	    .help = "One line per image name under $SSEBENCH_REGISTRY: size, the part shared with\n"
		    "other ssebench images, the unique part, its kind, the task and agent it\n"
		    "serves, and what 'images prune' would do with it for the dataset, and why.\n"
		    "The last line: the images, the space they take together (each layer once),\n"
		    "and what prune would free. See docs/cleanup.md.\n"
		    "\n"
		    "  --local DIR  the dataset prune would keep (default: the home's\n"
		    "               datasets/pilot)\n"
		    "  --json       {registry, dataset, images: [...], total: {...}}, sizes in bytes\n"
		    "\n"
		    "Exit status: 0; 1 DIR cannot be read or no engine; 2 a bad flag.\n",
	    .run = cmd_images_space,
	},
	{
	    .name = "prune",
	    .summary = "remove the ssebench images no task of a dataset and no kept run needs",
	    .usage = "ssebench images prune [--local DIR] [--all] [--dry-run]",
	    .help = "Remove the ssebench image names that no task of the dataset and no container\n"
		    "(a kept run) needs. The Debian rootfs and the base images stay, and so does\n"
		    "any name ssebench does not make. Each goes by name, never forced; prints each\n"
		    "name removed and the space freed. See docs/cleanup.md.\n"
		    "\n"
		    "  --local DIR  the dataset whose images stay (default: the home's\n"
		    "               datasets/pilot)\n"
		    "  --all        every name but those a container uses (rootfs and base too)\n"
		    "  --dry-run    say what would go and what it would free; remove nothing\n"
		    "\n"
		    "Exit status: 0; 1 DIR cannot be read, no engine, or a removal refused (the\n"
		    "others still go); 2 a bad flag.\n"
		    "\n"
		    "Example: ssebench images prune --dry-run\n",
	    .run = cmd_images_space,
	},
	{
	    .name = "push",
	    .summary = "push images to a registry, pinned by digest in an images lock",
	    .usage = "ssebench images push --registry R [--lock FILE] IMAGE...",
	    .help = "Push each local image (a name 'images list' shows) to registry R as\n"
		    "R/NAME:TAG (NAME without $SSEBENCH_REGISTRY), and record it in the images lock\n"
		    "FILE as {image, id, pinned}: its local image ID and R/NAME@sha256:DIGEST, the\n"
		    "digest R answered for the push. Prints one line per image: the name and its\n"
		    "pin. A cluster's nodes pull from R; a run on Kubernetes with\n"
		    "SSEBENCH_K8S_REGISTRY=R pushes its own image and pins its Job to the digest\n"
		    "(docs/kubernetes.md, \"Images\").\n"
		    "\n"
		    "  --registry R  HOST[:PORT][/PATH], lower case, no scheme\n"
		    "  --lock FILE   the images lock (default: images.lock.json here); a lock\n"
		    "                for another registry is refused\n"
		    "\n"
		    "Exit status: 0; 1 an image is not there or a push failed (the others still\n"
		    "go); 2 a bad flag or registry name.\n"
		    "\n"
		    "Example: ssebench images push --registry 127.0.0.1:5000/ssebench \\\n"
		    "           localhost/ssebench/agent-reference/cjson-cve-2023-53154:0.1.0\n",
	    .run = cmd_images_push,
	},
	{ .name = NULL },
};

static const struct cli_command runs_commands[] = {
	{ .name = "list", .summary = "list the run containers", .usage = "ssebench runs list [--json]",
	    .help = "List the containers labelled ssebench.run (the runs still running, and the\n"
		    "kept ones), newest first: run id, container, state, exit code, task, agent,\n"
		    "model.\n"
		    "\n"
		    "With --backend kubernetes (or SSEBENCH_BACKEND=kubernetes), this and inspect,\n"
		    "logs, exec, stop and remove act on the runs' Jobs in SSEBENCH_K8S_NAMESPACE\n"
		    "instead (docs/kubernetes.md): stop fails the Job and deletes its pod,\n"
		    "remove deletes the Job, its NetworkPolicy and its Secret.\n"
		    "\n"
		    "  --json  print {backend, supports_exec, runs: [...]}; never the containers'\n"
		    "          environment (it holds the run's proxy key)\n"
		    "\n"
		    "Exit status: 0, or 1 when the Docker engine does not answer.\n",
	    .run = cmd_runs },
	{ .name = "inspect", .summary = "show one run",
	    .usage = "ssebench runs inspect [--json] RUN_ID",
	    .help = "Show the containers of the run RUN_ID: state, image, labels, its results\n"
		    "directory and, once graded, the answer-seeking flags of its summary.json.\n"
		    "\n"
		    "  --json  the same as one JSON object\n"
		    "\n"
		    "Exit status: 0; 1 on an engine error; 3 no such run; 4 the id names runs of\n"
		    "several tasks, models or agents.\n",
	    .run = cmd_runs },
	{ .name = "logs", .summary = "show a run's container output",
	    .usage = "ssebench runs logs [--follow] RUN_ID",
	    .help = "Print what the run's containers wrote (docker logs).\n"
		    "\n"
		    "  --follow  keep printing as the run goes on, until it ends or Ctrl-C\n"
		    "\n"
		    "Exit status: 0; 1 on an engine error; 3 no such run; 4 ambiguous.\n",
	    .run = cmd_runs },
	{ .name = "exec", .summary = "run a command in a run's container",
	    .usage = "ssebench runs exec [--user USER] [--workdir DIR] [--container task|agent] "
		     "RUN_ID -- COMMAND [ARG...]",
	    .help = "Run COMMAND with its arguments in a running (or kept) run's container, as\n"
		    "docker exec does: the words as given, through no shell of ours. Standard\n"
		    "input is passed on; a terminal is given when stdin and stdout are one.\n"
		    "\n"
		    "  --user USER       the user (name or uid[:gid]) to run as; default the\n"
		    "                    container's (root)\n"
		    "  --workdir DIR     the working directory in the container\n"
		    "  --container ROLE  task (default) or, in sidecar mode, agent\n"
		    "\n"
		    "What you do there is not seen by the run's isolation checks: do not exec into\n"
		    "a run you mean to score before it has been graded.\n"
		    "\n"
		    "Exit status: the command's; docker's 125 to 127 when it could not run it\n"
		    "(the engine decides which); 2 on a bad flag; 3 no such run; 4 ambiguous.\n"
		    "\n"
		    "Example: ssebench runs exec --user 1000 RUN_ID -- ls -la /src\n",
	    .run = cmd_runs },
	{ .name = "stop", .summary = "stop a run (SIGTERM, then kill after the grace)",
	    .usage = "ssebench runs stop [--grace SECONDS] RUN_ID",
	    .help = "Stop the run's containers: SIGTERM, then SIGKILL after the grace period.\n"
		    "A stopped run is not graded; its containers stay until 'runs remove'.\n"
		    "\n"
		    "  --grace SECONDS  0 to 3600 (default 20)\n"
		    "\n"
		    "Exit status: 0; 1 on an engine error; 3 no such run; 4 ambiguous.\n",
	    .run = cmd_runs },
	{ .name = "remove", .summary = "remove a run's containers and volumes (not its results)",
	    .usage = "ssebench runs remove RUN_ID",
	    .help = "Remove the run's containers (running ones too), volumes, network, disk and\n"
		    "freezer cgroup. Its results directory is kept.\n"
		    "\n"
		    "Exit status: 0; 1 if anything of the run is left or on an engine error;\n"
		    "3 no such run; 4 ambiguous.\n",
	    .run = cmd_runs },
	{ .name = "results", .summary = "list graded runs from their summaries",
	    .usage = "ssebench runs results [--json] [--dir DIR]",
	    .help = "Scan every summary.json below DIR (default: $SSEBENCH_RESULTS, else\n"
		    "./results), newest first, grouped by tier: restricted egress, open egress\n"
		    "(not comparable with restricted runs), and not scored. A forfeit counts as\n"
		    "not passed. A run directory whose summary is missing or unreadable is\n"
		    "skipped and named on stderr.\n"
		    "\n"
		    "  --dir DIR  the results directory\n"
		    "  --json     {runs: [...], tiers: {restricted, open, unscored}, skipped:\n"
		    "             [{path, why}]}\n"
		    "\n"
		    "Exit status: 0 (also when there are no runs); 1 when DIR cannot be read.\n",
	    .run = cmd_runs },
	{ .name = "prune", .summary = "remove the containers and volumes of finished runs",
	    .usage = "ssebench runs prune [--dry-run]",
	    .help = "Remove the finished runs of this registry: those whose containers all\n"
		    "exited (or were made over ten minutes ago and never started). For each, its\n"
		    "containers, volumes, network, freezer cgroup and disk, as 'runs remove' does;\n"
		    "never a running run's, never a results directory. See docs/cleanup.md.\n"
		    "\n"
		    "  --dry-run  say which runs would go; remove nothing\n"
		    "\n"
		    "Exit status: 0; 1 no engine or a removal refused; 2 a bad flag.\n",
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
		    "is printed as path:line:col and makes the exit status 1.\n"
		    "\n"
		    "  --json  a JSON array: {name, target, key_env, file, line}\n"
		    "\n"
		    "Exit status: 0; 1 a problem in the files; 2 a bad flag.\n",
	    .run = cmd_models_list,
	},
	{ .name = NULL },
};

static const struct cli_command agents_commands[] = {
	{
	    .name = "list",
	    .summary = "list the agents",
	    .usage = "ssebench agents list [--json]",
	    .help = "List the agent folders (the home's agents/, then $SSEBENCH_AGENTS): name,\n"
		    "image version, and the npm packages its image is built from.\n"
		    "\n"
		    "  --json  a JSON array: {name, usable, version, npm: [{package, version,\n"
		    "          arch}]}, or {name, usable: false, problem}\n",
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
		    "$npm_config_registry, else https://registry.npmjs.org).\n"
		    "\n"
		    "Exit status: 0; 1 a package could not be fetched or did not match its pin,\n"
		    "or a named agent is unknown; 2 a bad flag.\n",
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
		     "[--runtime NAME] [--backend docker|kubernetes]\n"
		     "       ssebench run (--task ID... | --tasks PATTERN... | --all) --agent NAME... "
		     "[--model NAME...] [--attempts K] [--jobs N] [--config FILE] [--json] [...]",
	    .help = "Build the task's images (base, case, runtime, tool, agent), start the run\n"
		    "container, let the agent work, grade what it left, and write result.json and\n"
		    "summary.json to results/<task>/<model>/<agent>/<run-id>/.\n"
		    "\n"
		    "  --local DIR       the dataset (default: the home's datasets/pilot)\n"
		    "  --task ID         the task (a pattern, *, ?, [...], makes it a job)\n"
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
		    "                    a stronger boundary; default: the engine's (SSEBENCH_RUNTIME);\n"
		    "                    on Kubernetes, a RuntimeClass\n"
		    "  --backend NAME    docker (default) or kubernetes: the run as a Job, with a\n"
		    "                    NetworkPolicy and a Secret, in SSEBENCH_K8S_NAMESPACE, through\n"
		    "                    SSEBENCH_KUBECTL (SSEBENCH_BACKEND; docs/kubernetes.md);\n"
		    "                    with SSEBENCH_K8S_REGISTRY=R the image is pushed to R and\n"
		    "                    the Job pinned to its digest\n"
		    "\n"
		    "A job (docs/jobs.md): more than one task, agent or model, or any of these, runs\n"
		    "every combination, N at a time, in results/jobs/<job-id>/ (ssebench jobs ...):\n"
		    "  --task ID, --agent NAME, --model NAME   each may be given more than once\n"
		    "  --tasks PATTERN   the tasks whose id matches (*, ?, [...]); repeatable\n"
		    "  --all             every task of the dataset\n"
		    "  --attempts K      runs of each combination (default 1)\n"
		    "  --jobs N          runs at a time (default: from the cores and the memory)\n"
		    "  --config FILE     the same keys from a YAML file; the command line wins\n"
		    "  --json            one run: its outcome as one JSON object on stdout (the\n"
		    "                    lines for people go to stderr); a job: events as JSON\n"
		    "                    lines\n"
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
		    "is there already is overwritten. See docs/models.md.\n"
		    "\n"
		    "Exit status: 0; 1 a file could not be written; 2 a bad flag.\n",
	    .run = cmd_init,
	},
	{
	    .name = "proxy",
	    .summary = "start, stop and look at the model proxy (LiteLLM) runs use",
	    .usage = "ssebench proxy <command> [<args>]",
	    .sub = proxy_commands,
	},
	{
	    .name = "doctor",
	    .summary = "check everything a run needs, and say what to do",
	    .usage = "ssebench doctor [--json]",
	    .help = "Check, one line each, what a run needs: the docker client (Debian's\n"
		    "/usr/bin/docker, or one with buildx), the engine, the base rootfs image, the\n"
		    "free space under the results directory, the .env (a regular file, mode 0600,\n"
		    "every line KEY=value), models/*.yaml, and the model proxy: its settings, that\n"
		    "it answers at the admin URL, that it takes the master key, that it serves the\n"
		    "models of models/, that it has a database (per-run keys), the provider keys,\n"
		    "and the proxy container runs attach. Each line is ok, warn, FAIL or skip (not\n"
		    "checked: an earlier check failed), and a warn or FAIL says what to do after\n"
		    "'->'. Doctor changes nothing: no key, container or file is made.\n"
		    "\n"
		    "  --json  {ok, checks: [{name, status, detail, fix}]}\n"
		    "\n"
		    "Exit status: 0 nothing FAILed (warnings allowed); 1 a check FAILed; 2 a bad\n"
		    "flag.\n"
		    "\n"
		    "Example: ssebench doctor --json | jq '.checks[] | select(.status == \"FAIL\")'\n",
	    .run = cmd_doctor,
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
	    .usage = "ssebench build-case [--local DIR] [--task ID...] [--force] [--json]",
	    .help = "Build each task's case image, labelled ssebench.task-files=<digest of the task\n"
		    "folder>. An image whose label matches is skipped as up to date; one whose folder\n"
		    "changed is rebuilt; one without the label is skipped (it cannot be checked) and\n"
		    "said so.\n"
		    "\n"
		    "  --local DIR  the dataset (default: the home's datasets/pilot; --benchmarks\n"
		    "               is the old name, with a warning)\n"
		    "  --task ID    a task id or a pattern (*, ?, [...]); repeatable; default every\n"
		    "               task (--tasks ID,ID is the old form, with a warning)\n"
		    "  --force      rebuild every chosen image\n"
		    "  --json       {dataset, built, skipped, failed, tasks: [{id, image, outcome,\n"
		    "               why}]}\n"
		    "\n"
		    "Exit status: 0; 1 if any build fails, a --task selects nothing, or no engine;\n"
		    "2 a bad flag.\n",
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
	{
	    .name = "k8s",
	    .summary = "prepare Kubernetes nodes for the Kubernetes backend",
	    .usage = "ssebench k8s <command> [<args>]",
	    .sub = k8s_commands,
	},
	{ .name = NULL },
};

static const struct cli_command root = {
	.name = "ssebench",
	.summary = "benchmark AI agents on fixing real security vulnerabilities",
	.usage = "ssebench [--version] [--help] <command> [<args>]",
	.sub = top_commands,
};

int
cli_no_task(const struct sb_dataset *ds, const char *name)
{
	const char *near = sb_dataset_closest(ds, name);

	return cli_fail("no task '%s' in %s%s%s%s", name, ds->path, near ? " (did you mean " : "",
	    near ? near : "", near ? "?)" : "");
}

int
cli_select_tasks(const struct sb_dataset *ds, const struct sb_argv *wanted, const char *flag,
    struct sb_argv *out)
{
	int bad = 0;

	for (size_t i = 0; i < wanted->n; i++) {
		const char *w = wanted->v[i];
		bool pattern = strpbrk(w, "*?[") != NULL;
		struct sb_error *err = NULL;
		size_t matched = 0;

		if (pattern && sb_glob_check(w, &err) < 0) {
			cli_fail("%s '%s': %s", flag, w, sb_error_message(err));
			sb_error_release(&err);
			bad++;
			continue;
		}
		for (size_t k = 0; k < ds->n; k++) {
			const char *id = ds->tasks[k]->name;
			bool seen = false;

			if (pattern ? !sb_glob_match(w, id) : strcmp(w, id) != 0)
				continue;
			matched++;
			for (size_t j = 0; j < out->n && !seen; j++)
				seen = strcmp(out->v[j], id) == 0;
			if (!seen)
				sb_argv_push(out, id);
		}
		if (matched > 0)
			continue;
		if (pattern)
			cli_fail("%s '%s' matches no task of %s", flag, w, ds->path);
		else
			cli_no_task(ds, w);
		bad++;
	}
	return bad;
}

/* The options of longopts, of which only --local ('l', into *dir) and --json ('j') set
 * anything: -1 to go on, or the exit status to return (--help, a bad flag). */
static int
common_flags(const struct cli_command *cmd, int argc, char **argv,
    const struct option *longopts, char **dir, bool *as_json)
{
	int c, rc = 0;

	while ((c = cli_getopt(cmd, argc, argv, "+h", longopts, &rc)) != -1) {
		if (c == -2)
			return rc;
		if (c == 'l') {
			free(*dir);
			*dir = sb_xstrdup(optarg);
		}
		if (c == 'j')
			*as_json = true;
	}
	return -1;
}

int
cli_json_flag(const struct cli_command *cmd, int argc, char **argv, bool *as_json)
{
	static const struct option with_json[] = { { "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	static const struct option help_only[] = { { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 } };

	return common_flags(cmd, argc, argv, as_json ? with_json : help_only, NULL, as_json);
}

/* What a flag parser's rc becomes for a command that takes no operand: one is a usage error. */
static int
no_operands(const struct cli_command *cmd, int argc, char **argv, int rc)
{
	if (rc >= 0)
		return rc;
	if (optind < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	return -1;
}

int
cli_bare_command(const struct cli_command *cmd, int argc, char **argv, bool *as_json)
{
	return no_operands(cmd, argc, argv, cli_json_flag(cmd, argc, argv, as_json));
}

int
cli_dataset_flags(const struct cli_command *cmd, int argc, char **argv, char **dir,
    bool *as_json)
{
	static const struct option longopts[] = {
		{ "local", required_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};

	return common_flags(cmd, argc, argv, longopts, dir, as_json);
}

int
cli_dataset_command(const struct cli_command *cmd, int argc, char **argv, char **dir,
    bool *as_json)
{
	return no_operands(cmd, argc, argv, cli_dataset_flags(cmd, argc, argv, dir, as_json));
}

int
cli_load_dataset(char **dir, struct sb_dataset **ret, struct sb_diags *diags)
{
	struct sb_error *err = NULL;

	if (*dir == NULL)
		*dir = cli_default_dataset();
	if (sb_dataset_load(*dir, ret, diags, &err) < 0)
		return cli_fail_err(&err);
	return 0;
}

void
cli_deprecated(const char *old, const char *new)
{
	sb_log(SB_LOG_WARN, "%s is deprecated and will go; use %s", old, new);
}

char *
cli_engine_problem(void)
{
	_cleanup_free_ char *why = NULL;

	if (docker_engine_ok(&why))
		return NULL;
	return sb_xasprintf("the Docker engine does not answer (%s); start it with scripts/setup "
			    "(as root), or point DOCKER_HOST at one",
	    why ? why : "?");
}

int
cli_need_engine(void)
{
	_cleanup_free_ char *problem = cli_engine_problem();

	return problem != NULL ? cli_fail("%s", problem) : 0;
}

/* Where cli_system_tool looks: the system's directories only, never the caller's PATH. */
#define SYSTEM_PATH "/usr/sbin:/sbin:/usr/bin:/bin"

int
cli_system_tool(struct sb_error **err, const struct cli_tool *how, const char *name, ...)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	_cleanup_free_ char *path = NULL;
	struct sb_cmd cmd = SB_CMD_INIT;
	struct sb_cmd_result r;
	va_list ap;
	int code;

	if (sb_cmd_find_program(name, SYSTEM_PATH, &path, err) < 0)
		return -1;
	sb_argv_push(&argv, name);
	va_start(ap, name);
	sb_argv_vpushl(&argv, ap);
	va_end(ap);
	cmd.path = path;
	cmd.argv = argv.v;
	if (how->output == CLI_TOOL_SAY_WHY)
		cmd.stdout_fd = cmd.stderr_fd = SB_CMD_CAPTURE;
	else
		cmd.stdout_fd = cmd.stderr_fd = SB_CMD_DEVNULL;
	cmd.timeout_ms = how->timeout_ms;
	if (sb_cmd_run(&cmd, &r, err) < 0)
		return -1;
	code = r.exit_code;
	if (code != 0 && how->output == CLI_TOOL_SAY_WHY && err != NULL) {
		sb_buf_rtrim(&r.err);
		sb_error_set(err, EIO, "%s exited with status %d: %s", name, code, r.err.s);
	}
	sb_cmd_result_release(&r);
	return code;
}

/*
 * A ring of escaped strings: cli_safe's results stay valid for CLI_SAFE_SLOTS further calls,
 * enough for one printf of a table row, so every call site can stay one line.
 */
#define CLI_SAFE_SLOTS 16

const char *
cli_safe(const char *s)
{
	static char *ring[CLI_SAFE_SLOTS];
	static unsigned next;
	char **slot = &ring[next++ % CLI_SAFE_SLOTS];

	free(*slot);
	*slot = sb_escape(s != NULL ? s : "");
	return *slot;
}

void
cli_print_json(const json_t *j)
{
	/* ASCII only: a C1 control or a bidi override in a task's text is \uXXXX, never the
	 * code point itself, when the JSON lands on a terminal. */
	_cleanup_free_ char *s = sb_json_dumps(j, JSON_INDENT(2) | JSON_ENSURE_ASCII);

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
cli_fail_err(struct sb_error **err)
{
	int rc = cli_fail("%s", sb_error_message(*err));

	sb_error_release(err);
	return rc;
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
		fprintf(out, "\nRun 'ssebench help %s%sCOMMAND' for a command's flags, exit status and "
			     "examples.\n",
		    cmd == &root ? "" : cmd->name, cmd == &root ? "" : " ");
	}
}

/*
 * The long option an element of argv names: "--name" or "--name=value" exactly. glibc's
 * getopt_long also takes any unambiguous prefix ("--tim" for --timeout); we do not, as
 * Docker and git do not: a prefix that works today breaks silently when a later flag
 * shares it, and a CI script written against one version would change meaning in the next.
 */
static bool
names_option_in_full(const char *elem, const char *name)
{
	size_t n = strlen(name);

	return strncmp(elem, "--", 2) == 0 && strncmp(elem + 2, name, n) == 0 &&
	    (elem[2 + n] == '\0' || elem[2 + n] == '=');
}

/* "--name" of the element (up to its '='), for messages. malloc'd. */
static char *
option_word(const char *elem)
{
	size_t n = strcspn(elem, "=");

	return sb_xstrndup(elem, n);
}

int
cli_getopt(const struct cli_command *cmd, int argc, char **argv, const char *shortopts,
    const struct option *longopts, int *ret_exit)
{
	_cleanup_free_ char *opts = NULL, *word = NULL;
	int c, idx = -1, first = optind > 0 ? optind : 1;
	const char *elem;

	/*
	 * A leading ':' (after a '+') makes getopt_long return ':' for a missing value instead
	 * of '?' with optopt set to the option's internal code, which would read "unknown
	 * option '-t'" for `--task` with no value.
	 */
	if (shortopts[0] == '+')
		opts = sb_xasprintf("+:%s", shortopts + 1);
	else
		opts = sb_xasprintf(":%s", shortopts);
	opterr = 0;
	optopt = 0;
	c = getopt_long(argc, argv, opts, longopts, &idx);
	/* The element getopt_long looked at: the one before optind, or before its value. */
	elem = optind - 1 >= first && optind - 1 < argc ? argv[optind - 1] : "";
	if (c != -1 && c != '?' && c != ':' && idx >= 0 && longopts[idx].has_arg == required_argument &&
	    optarg != NULL && optind - 2 >= first && optarg == argv[optind - 1])
		elem = argv[optind - 2];
	if (c == 'h' && (idx < 0 || names_option_in_full(elem, longopts[idx].name))) {
		print_help(cmd, stdout);
		*ret_exit = SB_EXIT_OK;
		return -2;
	}
	if (c == ':') {
		if (strncmp(elem, "--", 2) == 0) {
			word = option_word(elem);
			*ret_exit = cli_usage_error(cmd, "%s needs a value", word);
		} else {
			*ret_exit = cli_usage_error(cmd, "-%c needs a value", optopt);
		}
		return -2;
	}
	if (c == '?') {
		if (strncmp(elem, "--", 2) == 0) {
			word = option_word(elem);
			for (const struct option *o = longopts; o->name != NULL; o++)
				if (o->has_arg == no_argument && names_option_in_full(elem, o->name) &&
				    strchr(elem, '=') != NULL) {
					*ret_exit = cli_usage_error(cmd, "%s takes no value", word);
					return -2;
				}
			*ret_exit = cli_usage_error(cmd, "unknown option '%s'", word);
		} else if (optopt > 0 && optopt < 128) {
			*ret_exit = cli_usage_error(cmd, "unknown option '-%c'", optopt);
		} else {
			*ret_exit = cli_usage_error(cmd, "unknown option '%s'", elem);
		}
		return -2;
	}
	/* An empty value ("--local=", "--task ''") is no value: no option of ours takes one. */
	if (c != -1 && optarg != NULL && *optarg == '\0') {
		word = idx >= 0 ? sb_xasprintf("--%s", longopts[idx].name) : sb_xasprintf("-%c", c);
		*ret_exit = cli_usage_error(cmd, "%s needs a value (it is empty)", word);
		return -2;
	}
	if (c != -1 && idx >= 0 && !names_option_in_full(elem, longopts[idx].name)) {
		word = option_word(elem);
		*ret_exit = cli_usage_error(cmd, "unknown option '%s' (did you mean --%s? options are "
						 "written in full)", word, longopts[idx].name);
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
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
		print_help(group, stdout);
		return SB_EXIT_OK;
	}
	/* `help [CMD [SUBCMD]]`: the same text as `CMD [SUBCMD] --help`. */
	if (strcmp(name, "help") == 0) {
		const struct cli_command *at = group;

		for (int i = 2; i < argc; i++) {
			const struct cli_command *next = NULL;

			for (const struct cli_command *c = at->sub; c != NULL && c->name != NULL; c++)
				if (strcmp(c->name, argv[i]) == 0)
					next = c;
			if (next == NULL)
				return cli_usage_error(at, "no command '%s' to help with", argv[i]);
			at = next;
		}
		print_help(at, stdout);
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
	/* The tree this binary was built from, else the copy `make install` made of it. */
	if (!is_home(SB_SOURCE_DIR) && is_home(SB_PKGDATADIR))
		return home = sb_xstrdup(SB_PKGDATADIR);
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

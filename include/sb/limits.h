/* SPDX-License-Identifier: Apache-2.0 */
/*
 * limits.h: every bound on untrusted input, in one place (docs/design.md, "Parsing untrusted
 * input").
 *
 * A parser takes its limit from here by name, so a reviewer can see at a glance what any
 * input may cost. docs/limits.md is generated from them (tools/limits-doc.c): a constant
 * added here goes into that program's table too, or `make check` fails.
 */
#ifndef SB_LIMITS_H
#define SB_LIMITS_H

/* Identifiers */
#define SB_TASK_ID_MAX	     128  /* task id (upstream schema) */
#define SB_RUN_ID_MAX	     64	  /* --run-id */
#define SB_NAME_MAX	     128  /* agent, model and dataset names */

/* Paths */
#define SB_PATH_MAX	     4096 /* any path we build or accept */
#define SB_PATH_DEPTH_MAX    64	  /* components of a relative path in a task folder */

/* Files read whole into memory */
#define SB_CONFIG_FILE_MAX   (1024 * 1024)	 /* config.yaml, agent.yaml, dataset.yaml */
#define SB_DOCKERFILE_MAX    (1024 * 1024)	 /* a task's Dockerfile */
#define SB_JSON_FILE_MAX     (16 * 1024 * 1024) /* result.json, manifest.json, ... */

/* YAML (libyaml event loader) */
#define SB_YAML_DEPTH_MAX    32	  /* nested collections */
#define SB_YAML_NODES_MAX    100000 /* nodes in one document */
#define SB_YAML_SCALAR_MAX   (256 * 1024) /* bytes in one scalar */

/* JSON (jansson) */
#define SB_JSON_DEPTH_MAX    64	  /* nested arrays/objects we accept after parsing */

/* Dockerfile parser */
#define SB_DOCKERFILE_INSNS_MAX 4096 /* instructions */
#define SB_DOCKERFILE_LINE_MAX	(64 * 1024) /* bytes in one logical instruction */

/* Datasets */
#define SB_DATASET_TASKS_MAX 10000 /* task folders in one dataset */
#define SB_TASK_FILES_MAX    10000 /* files walked in one task folder */

/* Child processes */
#define SB_CAPTURE_DEFAULT   (1024 * 1024) /* bytes of a child's output kept by default */
#define SB_KILL_GRACE_MS     2000	    /* SIGTERM -> SIGKILL grace for a process group */

/* Tree copies (scratch copies of a source tree) */
#define SB_COPY_FILES_MAX    1000000		     /* entries in one copied tree */
#define SB_COPY_BYTES_MAX    (8ULL * 1024 * 1024 * 1024) /* bytes in one copied tree */
#define SB_COPY_DEPTH_MAX    256		     /* directory nesting */

/* Patch capture (git.c) */
#define SB_GIT_DIFF_MAX		 (64 * 1024 * 1024)  /* bytes of one diff (/diff, final.patch) */
#define SB_GIT_COMMITS_LOG_MAX	 (1024 * 1024)	     /* bytes of commits.log */
#define SB_GIT_FILE_MAX		 (256 * 1024 * 1024) /* bytes of one changed file to diff */
#define SB_GIT_CHANGED_FILES_MAX 200000		     /* changed paths in one capture */
#define SB_GIT_REF_FILE_MAX	 (16 * 1024 * 1024)  /* a ref file or packed-refs of the agent */
#define SB_GIT_OBJECT_FILES_MAX	 1000000	     /* entries checked in .git/objects */

/* ELF and ar reader (elf.c: the grading build's objects, archives and binaries) */
#define SB_ELF_FILE_MAX		 ((size_t)512 * 1024 * 1024) /* bytes of one file read whole */
#define SB_ELF_SYMBOLS_MAX	 1000000 /* symbol entries read per object (.symtab + .dynsym) */
#define SB_ELF_MEMBERS_MAX	 100000	 /* members of one archive, symbol tables included */
#define SB_ELF_NEEDED_MAX	 1024	 /* DT_NEEDED entries kept per object */
#define SB_ELF_NAME_MAX		 4096	 /* bytes of one symbol or DT_NEEDED name */

/* HTTP client (daemon API) */
#define SB_HTTP_REPLY_MAX	      ((size_t)128 * 1024 * 1024) /* a reply body */
#define SB_HTTP_TIMEOUT_DEFAULT_MS    30000			   /* a call without its own */

/* Grading */
#define SB_GRADE_ERROR_LOG_MAX	      (64 * 1024) /* result.json's error_log (its end is kept) */

/* Daemon tools (a task script or a bash call: a bad environment value gives the default) */
#define SB_DAEMON_BUILD_TIMEOUT_S     3600	 /* SSE_BUILD_TIMEOUT: build.sh */
#define SB_DAEMON_TEST_TIMEOUT_S      3600	 /* SSE_TEST_TIMEOUT: test.sh */
#define SB_DAEMON_POC_TIMEOUT_S	      600	 /* SSE_POC_TIMEOUT: one PoC run */
#define SB_DAEMON_BASH_TIMEOUT_S      600	 /* SSE_BASH_TIMEOUT: one bash call's default */
#define SB_DAEMON_BASH_TIMEOUT_MAX_S  3600	 /* SSE_BASH_TIMEOUT_MAX: what a call may ask */
#define SB_DAEMON_TIMEOUT_CEILING_S   86400	 /* no tool time limit may be set above this */
#define SB_DAEMON_OUTPUT_CAP	      (1024 * 1024) /* SSE_OUTPUT_CAP: bytes of tool output kept */
#define SB_DAEMON_OUTPUT_CAP_MAX      (64 * 1024 * 1024) /* the most SSE_OUTPUT_CAP may be */
#define SB_DAEMON_RUNNER_NPROC	      4096	 /* SSE_RUNNER_NPROC: processes of the runner */

/*
 * The daemon's script logs in the results directory, all together: the results are on the
 * host's disk (not the run's own file system) and each check the agent asks for adds one.
 * Past it, a log keeps what ran and its exit status, not its output.
 */
#define SB_RESULTS_LOGS_MAX ((uint64_t)512 * 1024 * 1024)

/* A run's own runner uid (SSE_RUNNER_UID, sb_creds_runner_uid): far above any uid a host
 * hands out, below what some tools take for "-1". */
#define SB_RUNNER_UID_MIN 100000
#define SB_RUNNER_UID_MAX 1999999999

/* What the agent prints (agent.log), and what the MCP server logs (mcp.log), each: the
 * results are on the host's disk; past it the rest is counted, not kept. */
#define SB_AGENT_LOG_MAX ((uint64_t)256 * 1024 * 1024)

/* A job (ssebench run with several tasks, agents, models or attempts; docs/jobs.md): the
 * attempts of one combination, the runs at a time, and the runs of one job in all. */
#define SB_JOB_ATTEMPTS_MAX 1000
#define SB_JOB_PARALLEL_MAX 64
#define SB_JOB_RUNS_MAX	    100000

#endif

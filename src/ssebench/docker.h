/* SPDX-License-Identifier: Apache-2.0 */
/*
 * docker.h: the CLI drives Docker through its command-line client, always with an argv
 * vector (never a shell string), so names and paths stay single inert arguments.
 */
#ifndef SSEBENCH_DOCKER_H
#define SSEBENCH_DOCKER_H

#include "sb/argv.h"
#include "sb/spawn.h"

enum docker_flags {
	DOCKER_CAPTURE = 1 << 0,  /* capture stdout and stderr into the result */
	DOCKER_BUILDKIT = 1 << 1, /* DOCKER_BUILDKIT=1 (builds) */
	DOCKER_INHERIT = 1 << 2,  /* stdout/stderr go to ours */
	DOCKER_STDIN = 1 << 3,	  /* stdin is ours too (runs exec) */
};

/* The client's environment: only what it needs to find the engine and its config. */
void docker_env(struct sb_argv *env, unsigned flags);

/* The client: $SSEBENCH_DOCKER, default Debian's /usr/bin/docker (BuildKit built in). */
const char *docker_path(void);

/*
 * Run `docker ARGS...`. out_fd >= 0 sends both streams there (a log file). stdin_data, if
 * not NULL, is fed to the client. On success *res has the exit code (0 or not); a client
 * that cannot start is an error.
 */
/*
 * Whether the image name carries an ssebench.* label that is not one of ours (a NULL-ended
 * list; an entry ending in '.' is a prefix): 1 with *ret_key (malloc'd), 0 none, -1 on an
 * engine error.
 */
int docker_image_foreign_labels(const char *name, const char *const *ours, char **ret_key,
    struct sb_error **err);

int docker_run(const struct sb_argv *args, unsigned flags, int out_fd, const char *stdin_data,
    size_t stdin_len, uint64_t timeout_ms, struct sb_cmd_result *res, struct sb_error **err);

/* `docker ARGS...` with captured output; *ret_out is its stdout without the final newline.
 * Returns the exit code, or -1 if the client could not run. */
int docker_output(const struct sb_argv *args, char **ret_out, struct sb_error **err);

/* Does the engine answer? */
bool docker_engine_ok(char **ret_why);

/* Does the image exist locally? */
bool docker_image_exists(const char *name);

/* A label of a local image, or NULL. */
char *docker_image_label(const char *name, const char *label);

#endif

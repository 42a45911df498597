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
 * Whether the image name carries an ssebench.* label that is not one of ours (a NULL-ended
 * list; an entry ending in '.' is a prefix): 1 with *ret_key (malloc'd), 0 none, -1 on an
 * engine error.
 */
int docker_image_foreign_labels(const char *name, const char *const *ours, char **ret_key,
    struct sb_error **err);

/*
 * Run `docker ARGS...`. out_fd >= 0 sends both streams there (a log file). stdin_data, if
 * not NULL, is fed to the client. On success *res has the exit code (0 or not); a client
 * that cannot start is an error.
 */
int docker_run(const struct sb_argv *args, unsigned flags, int out_fd, const char *stdin_data,
    size_t stdin_len, uint64_t timeout_ms, struct sb_cmd_result *res, struct sb_error **err);

/* `docker ARGS...` with captured output; *ret_out is its stdout without the final newline.
 * Returns the exit code, or -1 if the client could not run. */
int docker_output(const struct sb_argv *args, char **ret_out, struct sb_error **err);

/*
 * Start `docker ARGS...` in the foreground and return: its stdout and stderr are ours, in
 * a process group of its own so that the terminal's Ctrl-C reaches the caller, not the
 * client. cmd->pid is the client's, for the caller to wait for.
 */
int docker_start(const struct sb_argv *args, struct sb_cmd *cmd, struct sb_error **err);

/*
 * A container for `docker run`, described by what it gets rather than by its command line:
 * docker_run_args turns it into the arguments, so the spelling of each option lives here.
 * The settings after the labels (environment, mounts, limits) are kept in the order they
 * are added, which is the order of the command line.
 */
enum docker_setting_kind {
	DOCKER_ENV,	      /* -e VALUE ("NAME=value") */
	DOCKER_DIR,	      /* -v SOURCE:TARGET, a host directory */
	DOCKER_BIND,	      /* --mount type=bind,source=SOURCE,target=TARGET */
	DOCKER_BIND_RO,	      /* the same, readonly */
	DOCKER_VOLUME,	      /* --mount type=volume,source=SOURCE,target=TARGET */
	DOCKER_TMPFS,	      /* --tmpfs TARGET:VALUE (the mount options) */
	DOCKER_READ_ONLY,     /* --read-only: the root file system */
	DOCKER_MASK_DIR,      /* an empty read-only tmpfs over the directory TARGET */
	DOCKER_MASK_FILE,     /* /dev/null bound read-only over the file TARGET */
	DOCKER_MEMORY,	      /* --memory VALUE */
	DOCKER_CPUS,	      /* --cpus VALUE */
	DOCKER_PIDS,	      /* --pids-limit VALUE */
	DOCKER_NO_CORE,	      /* --ulimit core=0 */
	DOCKER_NO_NEW_PRIVILEGES, /* --security-opt no-new-privileges */
	DOCKER_SECCOMP,	      /* --security-opt seccomp=VALUE (the profile's path) */
};

struct docker_setting {
	enum docker_setting_kind kind;
	char *source, *target, *value;
};

struct docker_container {
	const char *name, *hostname, *image;
	bool detach;	     /* run -d: the client prints the id and returns */
	bool remove;	     /* --rm (not with detach) */
	const char *network; /* --network */
	const char *runtime; /* --runtime, or NULL for the engine's default */
	bool dns_fail_fast;  /* one try of one second per lookup (a network with no way out) */
	struct sb_argv labels; /* "KEY=VALUE" each */
	struct docker_setting *settings;
	size_t n, cap;
};

#define DOCKER_CONTAINER_INIT { .labels = SB_ARGV_INIT }

/* Add a setting of kind (the fields it does not use are NULL). */
void docker_container_add(struct docker_container *c, enum docker_setting_kind kind,
    const char *source, const char *target, const char *value);
/* DOCKER_ENV with a formatted "NAME=value". */
void docker_container_env(struct docker_container *c, const char *fmt, ...) _printf_(2, 3);
void docker_container_release(struct docker_container *c);

/* `run ... IMAGE` for c, appended to args. */
void docker_run_args(const struct docker_container *c, struct sb_argv *args);

/* Does the engine answer? */
bool docker_engine_ok(char **ret_why);

/* The image ID of a local image in *ret_id (may be NULL): `docker image inspect`'s exit
 * code (0: there), or -1 when the client could not run. */
int docker_image_id(const char *name, char **ret_id, struct sb_error **err);

/* Does the image exist locally? */
bool docker_image_exists(const char *name);

/* A label of a local image, or NULL. */
char *docker_image_label(const char *name, const char *label);

#endif

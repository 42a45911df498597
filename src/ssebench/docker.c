/* SPDX-License-Identifier: Apache-2.0 */
/* docker.c: running the docker client with argv vectors. */
#include "config.h"

#include <stdarg.h>
#include <string.h>
#include <strings.h>

#include "sb/buf.h"
#include "sb/json.h"
#include "sb/limits.h"
#include "sb/log.h"
#include "sb/mem.h"

#include "cli.h"
#include "docker.h"

const char *
docker_path(void)
{
	const char *p = cli_setting("SSEBENCH_DOCKER", "/usr/bin/docker");

	/* A program found on PATH would be whatever the directories on it hold: a full path. */
	if (p[0] != '/') {
		static bool said;

		if (!said)
			sb_log(SB_LOG_WARN, "SSEBENCH_DOCKER must be an absolute path; using "
					    "/usr/bin/docker");
		said = true;
		return "/usr/bin/docker";
	}
	return p;
}

void
docker_env(struct sb_argv *env, unsigned flags)
{
	static const char *const keep[] = { "PATH", "HOME", "DOCKER_HOST", "DOCKER_CONFIG",
		"DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY", "DOCKER_CONTEXT", "LANG", "TERM", NULL };

	cli_env_keep(env, keep);
	if (flags & DOCKER_BUILDKIT)
		sb_env_set(env, "DOCKER_BUILDKIT", "1");
}

int
docker_run(const struct sb_argv *args, unsigned flags, int out_fd, const char *stdin_data,
    size_t stdin_len, uint64_t timeout_ms, struct sb_cmd_result *res, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	_cleanup_argv_ struct sb_argv env = SB_ARGV_INIT;
	struct sb_cmd cmd = SB_CMD_INIT;

	sb_argv_push(&argv, docker_path());
	sb_argv_pushv(&argv, (const char *const *)args->v);
	docker_env(&env, flags);
	cmd.path = argv.v[0];
	cmd.argv = argv.v;
	cmd.envp = env.v;
	if (stdin_data != NULL) {
		cmd.stdin_fd = SB_CMD_CAPTURE;
		cmd.stdin_data = stdin_data;
		cmd.stdin_len = stdin_len;
	} else if (flags & DOCKER_STDIN) {
		cmd.stdin_fd = SB_CMD_INHERIT;
	}
	if (flags & DOCKER_CAPTURE) {
		cmd.stdout_fd = SB_CMD_CAPTURE;
		cmd.stderr_fd = SB_CMD_CAPTURE;
	} else if (out_fd >= 0) {
		cmd.stdout_fd = out_fd;
		cmd.stderr_fd = out_fd;
	} else if (flags & DOCKER_INHERIT) {
		cmd.stdout_fd = SB_CMD_INHERIT;
		cmd.stderr_fd = SB_CMD_INHERIT;
	} else {
		cmd.stdout_fd = SB_CMD_DEVNULL;
		cmd.stderr_fd = SB_CMD_DEVNULL;
	}
	cmd.timeout_ms = timeout_ms;
	cmd.capture_max = 16 * 1024 * 1024;
	if (sb_cmd_run(&cmd, res, err) < 0)
		return sb_error_prefix(err, "docker client '%s'", argv.v[0]);
	return 0;
}

int
docker_start(const struct sb_argv *args, struct sb_cmd *cmd, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
	_cleanup_argv_ struct sb_argv env = SB_ARGV_INIT;
	int r;

	sb_argv_push(&argv, docker_path());
	sb_argv_pushv(&argv, (const char *const *)args->v);
	cmd->path = argv.v[0];
	cmd->argv = argv.v;
	docker_env(&env, 0);
	cmd->envp = env.v;
	cmd->stdout_fd = SB_CMD_INHERIT;
	cmd->stderr_fd = SB_CMD_INHERIT;
	/* Its own process group: the terminal's Ctrl-C reaches us, not the client. */
	cmd->flags = SB_CMD_NEW_PGRP;
	r = sb_cmd_start(cmd, err);
	/* The child has its copies; ours go with this frame. */
	cmd->path = NULL;
	cmd->argv = cmd->envp = NULL;
	return r;
}

void
docker_container_add(struct docker_container *c, enum docker_setting_kind kind,
    const char *source, const char *target, const char *value)
{
	struct docker_setting *st;

	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 32;
		c->settings = sb_xreallocarray(c->settings, c->cap, sizeof(*c->settings));
	}
	st = &c->settings[c->n++];
	st->kind = kind;
	st->source = source != NULL ? sb_xstrdup(source) : NULL;
	st->target = target != NULL ? sb_xstrdup(target) : NULL;
	st->value = value != NULL ? sb_xstrdup(value) : NULL;
}

void
docker_container_env(struct docker_container *c, const char *fmt, ...)
{
	va_list ap;

	docker_container_add(c, DOCKER_ENV, NULL, NULL, NULL);
	va_start(ap, fmt);
	c->settings[c->n - 1].value = sb_xvasprintf(fmt, ap);
	va_end(ap);
}

void
docker_container_release(struct docker_container *c)
{
	for (struct docker_setting *st = c->settings; st < c->settings + c->n; st++) {
		free(st->source);
		free(st->target);
		free(st->value);
	}
	free(c->settings);
	sb_argv_release(&c->labels);
	c->settings = NULL;
	c->n = c->cap = 0;
}

/* The option of each kind of setting; its value, if it has one, is setting_value's. */
static const char *const setting_option[] = {
	[DOCKER_ENV] = "-e",
	[DOCKER_DIR] = "-v",
	[DOCKER_BIND] = "--mount",
	[DOCKER_BIND_RO] = "--mount",
	[DOCKER_VOLUME] = "--mount",
	[DOCKER_TMPFS] = "--tmpfs",
	[DOCKER_READ_ONLY] = "--read-only",
	[DOCKER_MASK_DIR] = "--mount",
	[DOCKER_MASK_FILE] = "--mount",
	[DOCKER_MEMORY] = "--memory",
	[DOCKER_CPUS] = "--cpus",
	[DOCKER_PIDS] = "--pids-limit",
	[DOCKER_NO_CORE] = "--ulimit",
	[DOCKER_NO_NEW_PRIVILEGES] = "--security-opt",
	[DOCKER_SECCOMP] = "--security-opt",
};

/* The value after a setting's option (malloc'd), or NULL for an option alone. */
static char *
setting_value(const struct docker_setting *st)
{
	switch (st->kind) {
	case DOCKER_DIR:
		return sb_xasprintf("%s:%s", st->source, st->target);
	case DOCKER_BIND:
	case DOCKER_BIND_RO:
		return sb_xasprintf("type=bind,source=%s,target=%s%s", st->source, st->target,
		    st->kind == DOCKER_BIND_RO ? ",readonly" : "");
	case DOCKER_VOLUME:
		return sb_xasprintf("type=volume,source=%s,target=%s", st->source, st->target);
	case DOCKER_TMPFS:
		return sb_xasprintf("%s:%s", st->target, st->value);
	case DOCKER_MASK_DIR:
		return sb_xasprintf("type=tmpfs,dst=%s,tmpfs-size=4096,tmpfs-mode=0555",
		    st->target);
	case DOCKER_MASK_FILE:
		return sb_xasprintf("type=bind,src=/dev/null,dst=%s,readonly", st->target);
	case DOCKER_NO_CORE:
		return sb_xstrdup("core=0");
	case DOCKER_NO_NEW_PRIVILEGES:
		return sb_xstrdup("no-new-privileges");
	case DOCKER_SECCOMP:
		return sb_xasprintf("seccomp=%s", st->value);
	case DOCKER_READ_ONLY:
		return NULL;
	case DOCKER_ENV:
	case DOCKER_MEMORY:
	case DOCKER_CPUS:
	case DOCKER_PIDS:
		break;
	}
	return sb_xstrdup(st->value);
}

void
docker_run_args(const struct docker_container *c, struct sb_argv *a)
{
	/* --sig-proxy=false: a foreground client's Ctrl-C is the caller's to handle (docker
	 * stop), not the client's. */
	sb_argv_pushl(a, "run", c->detach ? "-d" : "--sig-proxy=false", "--name", c->name,
	    "--hostname", c->hostname, NULL);
	if (c->remove && !c->detach)
		sb_argv_push(a, "--rm");
	sb_argv_pushl(a, "--network", c->network, NULL);
	if (c->runtime != NULL)
		sb_argv_pushl(a, "--runtime", c->runtime, NULL);
	if (c->dns_fail_fast)
		sb_argv_pushl(a, "--dns-opt", "timeout:1", "--dns-opt", "attempts:1", NULL);
	for (size_t i = 0; i < c->labels.n; i++)
		sb_argv_pushl(a, "--label", c->labels.v[i], NULL);
	for (size_t i = 0; i < c->n; i++) {
		_cleanup_free_ char *v = setting_value(&c->settings[i]);

		sb_argv_push(a, setting_option[c->settings[i].kind]);
		if (v != NULL)
			sb_argv_push(a, v);
	}
	sb_argv_push(a, c->image);
}

int
docker_output(const struct sb_argv *args, char **ret_out, struct sb_error **err)
{
	struct sb_cmd_result r;
	int code;

	if (docker_run(args, DOCKER_CAPTURE, -1, NULL, 0, 120000, &r, err) < 0)
		return -1;
	sb_buf_rtrim(&r.out);
	code = r.exit_code;
	if (ret_out != NULL)
		*ret_out = sb_buf_detach(&r.out, NULL);
	sb_cmd_result_release(&r);
	return code;
}

bool
docker_engine_ok(char **ret_why)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	struct sb_error *err = NULL;
	struct sb_cmd_result r;
	bool ok;

	sb_argv_pushl(&a, "version", "--format", "{{.Server.Version}}", NULL);
	if (docker_run(&a, DOCKER_CAPTURE, -1, NULL, 0, 30000, &r, &err) < 0) {
		*ret_why = sb_xstrdup(sb_error_message(err));
		sb_error_release(&err);
		return false;
	}
	ok = r.exit_code == 0;
	if (!ok) {
		sb_buf_rtrim(&r.err);
		*ret_why = sb_xstrdup(r.err.len ? r.err.s : "the engine does not answer");
	}
	sb_cmd_result_release(&r);
	return ok;
}

int
docker_image_id(const char *name, char **ret_id, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;

	sb_argv_pushl(&a, "image", "inspect", "--format", "{{.Id}}", name, NULL);
	return docker_output(&a, ret_id, err);
}

bool
docker_image_exists(const char *name)
{
	return docker_image_id(name, NULL, NULL) == 0;
}

int
docker_image_foreign_labels(const char *name, const char *const *ours, char **ret_key,
    struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ char *out = NULL;
	json_auto_t *labels = NULL;
	const char *k;
	json_t *v;

	*ret_key = NULL;
	sb_argv_pushl(&a, "image", "inspect", "--format", "{{json .Config.Labels}}", name, NULL);
	if (docker_output(&a, &out, err) != 0 || out == NULL)
		return sb_error_set(err, EIO, "docker image inspect %s failed", name);
	if (sb_json_load(out, strlen(out), SB_JSON_FILE_MAX, &labels, err) < 0)
		return sb_error_prefix(err, "the labels of %s", name);
	if (!json_is_object(labels))
		return 0; /* null: no labels at all */
	json_object_foreach (labels, k, v) {
		bool known = false;

		if (strncasecmp(k, "ssebench.", 9) != 0)
			continue;
		/* An entry ending in '.' is a prefix (ssebench.rootfs. for the rootfs's own). */
		for (const char *const *o = ours; *o != NULL && !known; o++)
			known = (*o)[strlen(*o) - 1] == '.' ? strncmp(k, *o, strlen(*o)) == 0
							    : strcmp(k, *o) == 0;
		if (!known) {
			*ret_key = sb_xstrdup(k);
			return 1;
		}
	}
	return 0;
}

char *
docker_image_label(const char *name, const char *label)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	char *out = NULL;

	sb_argv_pushl(&a, "image", "inspect", "--format", NULL);
	sb_argv_pushf(&a, "{{index .Config.Labels \"%s\"}}", label);
	sb_argv_push(&a, name);
	if (docker_output(&a, &out, NULL) != 0 || out == NULL || *out == '\0' ||
	    strcmp(out, "<no value>") == 0) {
		free(out);
		return NULL;
	}
	return out;
}

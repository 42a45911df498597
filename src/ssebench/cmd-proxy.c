/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd-proxy.c: `ssebench proxy up|down|status`: the user's own model proxy (LiteLLM) as a
 * container this CLI starts, stops and looks at (docs/models.md, "A proxy of your own").
 *
 * Why a container and never a process on the host: each restricted run's network is
 * internal, and the host guard (network.c) refuses its containers anything on the host
 * itself, so a proxy on the host is out of every such run's reach. A container can join each
 * run's network as "litellm" (proxy_attach), which is what the runs need.
 *
 * The container gets:
 *   - LiteLLM's configuration made from models/<name>.yaml (proxy_litellm_config: JSON, which
 *     LiteLLM's YAML reader takes), copied in with `docker cp` before it starts, so that the
 *     container needs no file of the host to restart; it names the master key as
 *     os.environ/LITELLM_MASTER_KEY and holds no secret;
 *   - LITELLM_MASTER_KEY, every provider key the models name (os.environ/NAME) and
 *     DATABASE_URL, through an env file of mode 0600 in a private directory that is removed
 *     as soon as `docker create` has read it: a value never appears in an argv (which `ps`
 *     shows to every user) nor on our output;
 *   - its admin port published on 127.0.0.1 only ($LITELLM_PORT, default 4000), so that
 *     this CLI reaches it and the network around the host does not;
 *   - the label ssebench.proxy=1 (what `down` removes, and nothing else) and the digest of
 *     its configuration (so that `up` can say when models/ changed since).
 */
#include "config.h"

#include <fcntl.h>
#include <getopt.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/diag.h"
#include "sb/exit.h"
#include "sb/fs.h"
#include "sb/json.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/sha256.h"
#include "sb/sig.h"
#include "sb/spawn.h"

#include "cli.h"
#include "docker.h"
#include "images.h"
#include "models.h"
#include "proxy.h"

/* Where the configuration goes in the container (a directory of its own under /etc). */
#define CONFIG_DIR  "/etc/ssebench"
#define CONFIG_FILE CONFIG_DIR "/litellm.yaml"
#define WAIT_DEFAULT_S 180 /* LiteLLM with a database migrates it at start: it can take a while */
#define LOG_LINES "20"

/* `docker ARGS...`: its exit code, with its stderr (trimmed) in *ret_why when it is not 0. */
static int
docker_do(const struct sb_argv *args, uint64_t timeout_ms, char **ret_why, struct sb_error **err)
{
	struct sb_cmd_result r;
	int code;

	if (docker_run(args, DOCKER_CAPTURE, -1, NULL, 0, timeout_ms, &r, err) < 0)
		return -1;
	code = r.exit_code;
	if (code != 0 && ret_why != NULL) {
		sb_buf_rtrim(&r.err);
		*ret_why = sb_xstrdup(r.err.len > 0 ? r.err.s : "failed");
	}
	sb_cmd_result_release(&r);
	return code;
}

/* `docker ARGS...` on the container name: 0, or says what docker said and returns 1. */
static int
docker_step(const struct sb_argv *args, const char *name)
{
	_cleanup_free_ char *why = NULL;
	struct sb_error *err = NULL;
	int code = docker_do(args, 120000, &why, &err);

	if (code < 0)
		return cli_fail_err(&err);
	if (code != 0)
		return cli_fail("docker %s %s: %s", args->v[0], name, cli_safe(why));
	return 0;
}

/* The container, or ENOENT; any other failure is said and makes this return 1 via rc. */
static int
inspect(const char *name, struct proxy_container *pc, bool *ret_exists, int *rc)
{
	struct sb_error *err = NULL;

	if (proxy_container_inspect(name, pc, &err) == 0) {
		*ret_exists = true;
		return 0;
	}
	if (sb_error_code(err) == ENOENT) {
		sb_error_release(&err);
		*ret_exists = false;
		return 0;
	}
	*rc = cli_fail_err(&err);
	return -1;
}

/* Print the container's last log lines on stderr, escaped, with the keys we gave it hidden. */
static void
show_logs(const char *name, const struct sb_argv *secrets)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	struct sb_cmd_result r;
	_cleanup_free_ char *all = NULL;
	char *line, *save = NULL;

	sb_argv_pushl(&a, "logs", "--tail", LOG_LINES, name, NULL);
	if (docker_run(&a, DOCKER_CAPTURE, -1, NULL, 0, 30000, &r, NULL) < 0)
		return;
	/* docker logs gives the container's stdout and stderr on its own two: both count. */
	{
		struct sb_buf b = SB_BUF_INIT(SIZE_MAX / 2);

		(void)sb_buf_append(&b, r.out.s, r.out.len, NULL);
		(void)sb_buf_appendc(&b, '\n', NULL);
		(void)sb_buf_append(&b, r.err.s, r.err.len, NULL);
		all = proxy_redact(b.s, secrets);
		sb_buf_release(&b);
	}
	sb_cmd_result_release(&r);
	fprintf(stderr, "ssebench: the last lines of 'docker logs %s':\n", cli_safe(name));
	for (line = strtok_r(all, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save))
		fprintf(stderr, "  | %s\n", cli_safe(line));
}

/*
 * Wait until the proxy answers its liveness check at url, at most wait_s seconds, with a
 * progress line every 10 s. Gives up at once when the container stops running.
 * Returns 0, or the exit status to return (the reason said).
 */
static int
wait_healthy(const char *name, const char *url, unsigned wait_s, const struct sb_argv *secrets)
{
	uint64_t start = sb_now_ms(), next_note = start + 10000;
	unsigned restarts0 = 0;
	struct proxy_container pc0;

	if (proxy_container_inspect(name, &pc0, NULL) == 0) {
		restarts0 = pc0.restarts;
		proxy_container_release(&pc0);
	}

	progress("waiting for the model proxy to answer at %s (at most %u s)", url, wait_s);
	for (unsigned tick = 0;; tick++) {
		struct timespec ts = { 0, 500 * 1000 * 1000 };
		uint64_t now;

		if (proxy_get(url, NULL, "/health/liveliness", NULL, NULL) == 0)
			return 0;
		if (sb_sig_interrupted()) {
			(void)cli_fail("interrupted: the container %s is left as it is (ssebench "
				       "proxy down removes it)", name);
			return SB_EXIT_INTERRUPTED;
		}
		if (tick % 2 == 1) {
			struct proxy_container pc;

			if (proxy_container_inspect(name, &pc, NULL) == 0) {
				/* Stopped, or stopped and started again by its restart policy. */
				bool died = !pc.running || pc.restarting || pc.restarts > restarts0;
				int code = pc.exit_code;

				proxy_container_release(&pc);
				if (died) {
					show_logs(name, secrets);
					return cli_fail("the model proxy's container %s stopped (exit code "
							"%d) before it answered: see its log above; fix what "
							"it says, then ssebench proxy down && ssebench proxy up",
					    name, code);
				}
			}
		}
		now = sb_now_ms();
		if (now - start >= (uint64_t)wait_s * 1000) {
			show_logs(name, secrets);
			return cli_fail("the model proxy did not answer at %s within %u s (its log is "
					"above; the container %s is left running: ssebench proxy down "
					"removes it, --wait gives it longer)",
			    url, wait_s, name);
		}
		if (now >= next_note) {
			progress("still waiting for the model proxy (%llu s)",
			    (unsigned long long)((now - start) / 1000));
			next_note += 10000;
		}
		nanosleep(&ts, NULL);
	}
}

/* A private directory for what `docker create` and `docker cp` read, removed after. */
struct stage {
	char *dir;	/* mkdtemp: 0700 */
	bool env, conf; /* which files are there */
};

static void
stage_release(struct stage *s)
{
	_cleanup_free_ char *env = NULL, *conf = NULL, *etc = NULL;

	if (s->dir == NULL)
		return;
	env = sb_xasprintf("%s/env", s->dir);
	etc = sb_xasprintf("%s/etc", s->dir);
	conf = sb_xasprintf("%s/etc/litellm.yaml", s->dir);
	if (s->env && unlink(env) < 0)
		sb_log_errno(SB_LOG_WARN, errno, "cannot remove %s", env);
	if (s->conf)
		(void)unlink(conf);
	(void)rmdir(etc);
	if (rmdir(s->dir) < 0)
		sb_log_errno(SB_LOG_WARN, errno, "cannot remove %s", s->dir);
	free(s->dir);
	s->dir = NULL;
}

static int
stage_write(struct stage *s, const struct sb_buf *env, const char *config, struct sb_error **err)
{
	const char *tmp = getenv("TMPDIR");
	_cleanup_free_ char *templ = sb_xasprintf("%s/ssebench-proxy.XXXXXX",
	    tmp != NULL && *tmp == '/' ? tmp : "/tmp");
	_cleanup_close_ int dfd = -1, efd = -1;

	if (mkdtemp(templ) == NULL)
		return sb_error_errno(err, errno, "mkdtemp %s", templ);
	s->dir = TAKE_PTR(templ);
	dfd = sb_open_dir(s->dir, err);
	if (dfd < 0)
		return -1;
	if (sb_write_file_atomic_at(dfd, "env", env->s, env->len, 0600, err) < 0)
		return -1;
	s->env = true;
	if (mkdirat(dfd, "etc", 0755) < 0)
		return sb_error_errno(err, errno, "mkdir %s/etc", s->dir);
	efd = openat(dfd, "etc", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (efd < 0)
		return sb_error_errno(err, errno, "open %s/etc", s->dir);
	/* Whatever our umask: LiteLLM may run as a user of its own in its image. */
	if (fchmod(efd, 0755) < 0)
		return sb_error_errno(err, errno, "chmod %s/etc", s->dir);
	if (sb_write_file_atomic_at(efd, "litellm.yaml", config, strlen(config), 0644, err) < 0)
		return -1;
	s->conf = true;
	return 0;
}

/*
 * The proxy's environment, as env-file text: the master key, each variable the models
 * name, and DATABASE_URL when set. Values go into secrets (to hide them in logs); the
 * names of provider keys that are not set are appended to missing.
 */
static int
proxy_env(const struct sb_argv *names, struct sb_buf *out, struct sb_argv *secrets,
    struct sb_argv *missing, struct sb_error **err)
{
	const char *master = cli_setting("LITELLM_MASTER_KEY", NULL);
	const char *db = cli_setting("DATABASE_URL", NULL);

	if (master == NULL)
		return sb_error_set(err, ENOKEY,
		    "LITELLM_MASTER_KEY is not set: ssebench init writes a .env with one here");
	if (proxy_env_file_add(out, "LITELLM_MASTER_KEY", master, err) < 0)
		return -1;
	sb_argv_push(secrets, master);
	if (db != NULL) {
		if (proxy_env_file_add(out, "DATABASE_URL", db, err) < 0)
			return -1;
		sb_argv_push(secrets, db);
	}
	for (size_t i = 0; i < names->n; i++) {
		const char *v;

		if (strcmp(names->v[i], "LITELLM_MASTER_KEY") == 0 ||
		    strcmp(names->v[i], "DATABASE_URL") == 0)
			continue;
		v = cli_setting(names->v[i], NULL);
		if (v == NULL) {
			sb_argv_push(missing, names->v[i]);
			continue;
		}
		if (proxy_env_file_add(out, names->v[i], v, err) < 0)
			return -1;
		sb_argv_push(secrets, v);
	}
	return 0;
}

/* The configuration for models/ (checked strictly first), its digest and the variables. */
static int
make_config(char **ret_text, char ret_digest[65], struct sb_argv *names, struct sb_error **err)
{
	_cleanup_diags_ struct sb_diags diags = SB_DIAGS_INIT;
	_cleanup_free_ char *dir = models_dir();
	json_auto_t *config = NULL;
	struct models m;
	size_t n;

	if (models_load(dir, &m, &diags, err) < 0) {
		models_release(&m);
		return -1;
	}
	n = m.n;
	models_release(&m);
	if (diags.n > 0) {
		sb_diags_print(&diags, stderr);
		return sb_error_set(err, EINVAL, "the model files in %s have problems (see above)",
		    dir);
	}
	if (n == 0)
		return sb_error_set(err, ENOENT, "%s defines no model (docs/models.md)", dir);
	if (proxy_litellm_config(dir, &config, names, err) < 0)
		return -1;
	/* 15 digits: a price written 3.0e-06 stays 3e-6, not 3.0000000000000001e-6. */
	*ret_text = sb_json_dumps(config, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(15));
	sb_sha256_hex(*ret_text, strlen(*ret_text), ret_digest);
	return 0;
}

/* No image named: say why a litellm on this host is no way, and what to do instead. */
static int
no_image(void)
{
	_cleanup_free_ char *host = NULL;
	const char *path = getenv("PATH");

	if (path != NULL && sb_cmd_find_program("litellm", path, &host, NULL) == 0)
		return cli_fail(
		    "SSEBENCH_PROXY_IMAGE is not set, and the litellm at %s is not started: a "
		    "proxy on this host is out of reach of every restricted run (a run's network "
		    "is internal, and the host guard refuses its containers anything on the host; "
		    "docs/running.md), so runs could not use it. Set SSEBENCH_PROXY_IMAGE to a "
		    "LiteLLM image (LiteLLM's own, or one built with litellm[proxy] from PyPI: "
		    "docs/models.md) and run ssebench proxy up again",
		    cli_safe(host));
	return cli_fail("SSEBENCH_PROXY_IMAGE is not set: name a LiteLLM image (LiteLLM's own, "
			"or one built with litellm[proxy] from PyPI: docs/models.md), in .env or "
			"the environment, or give --image");
}

static int
cmd_proxy_up(const struct cli_command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = { { "image", required_argument, NULL, 'i' },
		{ "wait", required_argument, NULL, 'w' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 } };
	const char *name = proxy_container_name(), *image = NULL;
	_cleanup_free_ char *admin = NULL, *url = NULL, *config = NULL, *why = NULL;
	_cleanup_argv_ struct sb_argv names = SB_ARGV_INIT, secrets = SB_ARGV_INIT,
				      missing = SB_ARGV_INIT, a = SB_ARGV_INIT;
	_cleanup_buf_ struct sb_buf env = SB_BUF_INIT(1024 * 1024);
	_cleanup_(stage_release) struct stage st = { 0 };
	struct sb_error *err = NULL;
	struct proxy_container pc = { 0 };
	unsigned port, wait_s = WAIT_DEFAULT_S;
	char digest[65];
	bool exists;
	int c, rc = 0, code;

	while ((c = cli_getopt(cmd, argc, argv, "+h", longopts, &rc)) != -1) {
		uint64_t v;

		if (c == -2)
			return rc;
		if (c == 'i')
			image = optarg;
		if (c == 'w') {
			if (sb_parse_u64(optarg, 1, 3600, &v, NULL) < 0)
				return cli_usage_error(cmd, "--wait takes seconds from 1 to 3600, "
							    "not '%s'", optarg);
			wait_s = (unsigned)v;
		}
	}
	if (optind < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	if (image == NULL)
		image = cli_setting("SSEBENCH_PROXY_IMAGE", NULL);
	if (proxy_port(&port, &err) < 0 || (admin = proxy_admin_url(&err)) == NULL)
		return cli_fail_err(&err);
	url = sb_xasprintf("http://127.0.0.1:%u", port);
	if (cli_need_engine() != 0)
		return SB_EXIT_FAILURE;
	if (inspect(name, &pc, &exists, &rc) < 0)
		return rc;

	if (exists) {
		bool ours = pc.ours, running = pc.running;
		_cleanup_free_ char *had = pc.config_digest ? sb_xstrdup(pc.config_digest) : NULL;
		_cleanup_free_ char *had_image = sb_xstrdup(pc.image ? pc.image : "?");
		unsigned had_port = pc.port;

		bool said = false, fresh;
		struct sb_buf ignored = SB_BUF_INIT(1024 * 1024);

		proxy_container_release(&pc);
		/* What it would be given now: to compare, and to hide its keys in its log. */
		fresh = make_config(&config, digest, &names, NULL) == 0;
		(void)proxy_env(&names, &ignored, &secrets, &missing, NULL);
		sb_buf_release(&ignored);
		if (!ours)
			return cli_fail("a container '%s' exists that ssebench proxy up did not make "
					"(no label %s=1): it is left alone; remove it, or name ours "
					"otherwise with SSEBENCH_PROXY_CONTAINER",
			    name, PROXY_LABEL);
		if (had_port != 0 && had_port != port) {
			sb_log(SB_LOG_WARN, "the container %s publishes port %u, not LITELLM_PORT=%u: "
					    "ssebench proxy down && ssebench proxy up moves it",
			    name, had_port, port);
			free(url);
			url = sb_xasprintf("http://127.0.0.1:%u", had_port);
		}
		if (!running) {
			sb_argv_pushl(&a, "start", name, NULL);
			if (docker_step(&a, name) != 0)
				return SB_EXIT_FAILURE;
			progress("started the existing model proxy container %s", name);
		} else if (proxy_get(url, NULL, "/health/liveliness", NULL, NULL) == 0) {
			printf("the model proxy already runs: container %s, image %s, admin URL %s\n",
			    name, cli_safe(had_image), url);
			said = true;
		}
		rc = said ? 0 : wait_healthy(name, url, wait_s, &secrets);
		if (rc != 0)
			return rc;
		if (!said)
			printf("the model proxy runs: container %s, image %s, admin URL %s\n", name,
			    cli_safe(had_image), url);
		/* Say when what it serves is no longer what models/ says. */
		if (fresh && (had == NULL || strcmp(had, digest) != 0))
			sb_log(SB_LOG_WARN, "models/ changed since the proxy started: ssebench proxy "
					    "down && ssebench proxy up gives it the new list");
		if (image != NULL && strcmp(image, had_image) != 0)
			sb_log(SB_LOG_WARN, "it runs the image %s, not %s: ssebench proxy down && "
					    "ssebench proxy up changes it",
			    cli_safe(had_image), cli_safe(image));
		return SB_EXIT_OK;
	}

	if (image == NULL)
		return no_image();
	if (make_config(&config, digest, &names, &err) < 0 ||
	    proxy_env(&names, &env, &secrets, &missing, &err) < 0 ||
	    stage_write(&st, &env, config, &err) < 0)
		return cli_fail_err(&err);
	for (size_t i = 0; i < missing.n; i++)
		sb_log(SB_LOG_WARN, "%s is not set (environment or .env): the models that use it "
				    "will fail at their provider",
		    missing.v[i]);

	/* Values only through the env file: the argv names nothing secret. */
	sb_argv_pushl(&a, "create", "--name", name, "--label", PROXY_LABEL "=1", NULL);
	sb_argv_push(&a, "--label");
	sb_argv_pushf(&a, "%s=%s", PROXY_LABEL_CONFIG, digest);
	sb_argv_push(&a, "--env-file");
	sb_argv_pushf(&a, "%s/env", st.dir);
	sb_argv_push(&a, "--publish");
	sb_argv_pushf(&a, "127.0.0.1:%u:%s", port, PROXY_INNER_PORT_S);
	/* Back after the engine restarts, as the runs expect it to be there. */
	sb_argv_pushl(&a, "--restart", "unless-stopped", "--", image, "--config", CONFIG_FILE,
	    "--port", PROXY_INNER_PORT_S, NULL);
	progress("creating the model proxy container %s from %s", name, cli_safe(image));
	code = docker_do(&a, 600000, &why, &err);
	if (code < 0)
		return cli_fail_err(&err);
	if (code != 0)
		return cli_fail("docker create %s: %s", name, cli_safe(why));

	sb_argv_release(&a);
	sb_argv_push(&a, "cp");
	sb_argv_pushf(&a, "%s/etc", st.dir);
	sb_argv_pushf(&a, "%s:%s", name, CONFIG_DIR);
	code = docker_do(&a, 120000, &why, &err);
	stage_release(&st); /* the env file has been read: it goes now */
	if (code == 0) {
		sb_argv_release(&a);
		sb_argv_pushl(&a, "start", name, NULL);
		code = docker_do(&a, 120000, &why, &err);
	}
	if (code != 0) {
		struct sb_argv rm = SB_ARGV_INIT;

		/* A container that never started is ours to remove: nothing to look at. */
		sb_argv_pushl(&rm, "rm", "--force", name, NULL);
		(void)docker_do(&rm, 120000, NULL, NULL);
		sb_argv_release(&rm);
		if (code < 0)
			return cli_fail_err(&err);
		return cli_fail("starting the model proxy container %s: %s", name, cli_safe(why));
	}
	rc = wait_healthy(name, url, wait_s, &secrets);
	if (rc != 0)
		return rc;
	printf("the model proxy runs: container %s, image %s, admin URL %s\n", name,
	    cli_safe(image), url);
	if (strcmp(admin, url) != 0)
		sb_log(SB_LOG_WARN, "SSEBENCH_PROXY_ADMIN_URL is %s, but the proxy answers at %s: "
				    "runs will not find it; set SSEBENCH_PROXY_ADMIN_URL=%s",
		    admin, url, url);
	if (cli_setting("SSEBENCH_PROXY_CONTAINER", NULL) == NULL)
		printf("runs attach it to their network as litellm (the %s container is the "
		       "default: SSEBENCH_PROXY_CONTAINER is not set)\n",
		    name);
	else
		printf("runs attach it to their network as litellm (SSEBENCH_PROXY_CONTAINER=%s)\n",
		    name);
	printf("next: ssebench doctor\n");
	return SB_EXIT_OK;
}

static int
cmd_proxy_down(const struct cli_command *cmd, int argc, char **argv)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	const char *name = proxy_container_name();
	struct proxy_container pc = { 0 };
	bool exists, ours;
	int rc;

	if ((rc = cli_bare_command(cmd, argc, argv, NULL)) >= 0)
		return rc;
	if (cli_need_engine() != 0)
		return SB_EXIT_FAILURE;
	if (inspect(name, &pc, &exists, &rc) < 0)
		return rc;
	if (!exists) {
		printf("no model proxy container %s: nothing to do\n", name);
		return SB_EXIT_OK;
	}
	ours = pc.ours;
	proxy_container_release(&pc);
	if (!ours)
		return cli_fail("the container '%s' was not made by ssebench proxy up (no label "
				"%s=1): it is left alone",
		    name, PROXY_LABEL);
	/* A grace for LiteLLM to finish what it was writing (spend logs), then away. */
	sb_argv_pushl(&a, "stop", "--time", "10", name, NULL);
	(void)docker_do(&a, 120000, NULL, NULL);
	sb_argv_release(&a);
	sb_argv_pushl(&a, "rm", "--force", name, NULL);
	if (docker_step(&a, name) != 0)
		return SB_EXIT_FAILURE;
	printf("stopped and removed the model proxy container %s\n", name);
	return SB_EXIT_OK;
}

static int
cmd_proxy_status(const struct cli_command *cmd, int argc, char **argv)
{
	const char *name = proxy_container_name();
	const char *master = cli_setting("LITELLM_MASTER_KEY", NULL);
	_cleanup_free_ char *admin = NULL, *published = NULL, *models_error = NULL;
	_cleanup_argv_ struct sb_argv ids = SB_ARGV_INIT;
	json_auto_t *out = NULL, *reply = NULL;
	struct sb_error *err = NULL;
	struct proxy_container pc = { 0 };
	bool json = false, exists = false, healthy = false, models_ok = false;
	int rc;

	if ((rc = cli_bare_command(cmd, argc, argv, &json)) >= 0)
		return rc;
	if ((admin = proxy_admin_url(&err)) == NULL)
		return cli_fail_err(&err);
	if (cli_need_engine() != 0)
		return SB_EXIT_FAILURE;
	if (inspect(name, &pc, &exists, &rc) < 0)
		return rc;
	if (exists && pc.port != 0)
		published = sb_xasprintf("%s:%u", pc.host_ip && *pc.host_ip ? pc.host_ip : "0.0.0.0",
		    pc.port);
	healthy = proxy_get(admin, NULL, "/health/liveliness", NULL, NULL) == 0;
	if (!healthy) {
		models_error = sb_xstrdup("the proxy does not answer");
	} else if (master == NULL) {
		models_error = sb_xstrdup("LITELLM_MASTER_KEY is not set");
	} else if (proxy_get(admin, master, "/v1/models", &reply, &err) < 0) {
		models_error = sb_xstrdup(sb_error_code(err) == EACCES
			? "the proxy refuses LITELLM_MASTER_KEY"
			: sb_error_message(err));
		sb_error_release(&err);
	} else {
		proxy_model_ids(reply, &ids);
		models_ok = true;
	}
	if (json) {
		json_t *m = json_array();

		for (size_t i = 0; i < ids.n; i++)
			json_array_append_new(m, json_string(ids.v[i]));
		out = json_pack("{s:s, s:b, s:b, s:s?, s:s?, s:b, s:s?, s:s, s:b, s:o, s:s?}",
		    "container", name, "exists", exists, "running", exists && pc.running, "state",
		    exists ? pc.state : NULL, "image", exists ? pc.image : NULL, "ours",
		    exists && pc.ours, "published", published, "admin_url", admin, "healthy",
		    healthy, "models", models_ok ? m : json_null(), "models_error", models_error);
		if (!models_ok)
			json_decref(m);
		cli_print_json(out);
	} else if (!exists) {
		printf("container: %s: none (ssebench proxy up starts one)\n", name);
	} else {
		printf("container: %s, %s%s\n", name, cli_safe(pc.state),
		    pc.ours ? "" : " (not made by ssebench proxy up)");
		printf("image:     %s\n", cli_safe(pc.image));
		printf("published: %s\n", published ? published : "none");
	}
	if (!json) {
		printf("admin URL: %s, %s\n", admin, healthy ? "healthy" : "does not answer");
		if (models_ok) {
			printf("models:    %zu served\n", ids.n);
			for (size_t i = 0; i < ids.n; i++)
				printf("  %s\n", cli_safe(ids.v[i]));
		} else {
			printf("models:    unknown (%s)\n", cli_safe(models_error));
		}
	}
	rc = exists && pc.running && healthy ? SB_EXIT_OK : SB_EXIT_FAILURE;
	proxy_container_release(&pc);
	return rc;
}

const struct cli_command proxy_commands[] = {
	{
	    .name = "up",
	    .summary = "start the model proxy (LiteLLM) as a container runs can reach",
	    .usage = "ssebench proxy up [--image IMAGE] [--wait SECONDS]",
	    .help = "Start the model proxy: a container of the LiteLLM image SSEBENCH_PROXY_IMAGE,\n"
		    "named SSEBENCH_PROXY_CONTAINER (default ssebench-proxy), labelled\n"
		    "ssebench.proxy=1, with the models of models/<name>.yaml (./models, else the home's)\n"
		    "as its configuration, LITELLM_MASTER_KEY, the provider keys the models name\n"
		    "and DATABASE_URL (if set) in its environment (from the environment or .env,\n"
		    "through a file of mode 0600 that is removed once read: never on a command\n"
		    "line), and its admin port published on 127.0.0.1:$LITELLM_PORT (4000) only.\n"
		    "Then wait until it answers GET /health/liveliness. Runs attach it to their\n"
		    "network as litellm. A proxy on the host itself is no way: restricted runs\n"
		    "cannot reach the host (docs/models.md).\n"
		    "\n"
		    "Already running: says so and exits 0 (and says when models/ changed since:\n"
		    "'ssebench proxy down && ssebench proxy up' then gives it the new list).\n"
		    "Stopped: started again.\n"
		    "\n"
		    "  --image IMAGE    the LiteLLM image (default: $SSEBENCH_PROXY_IMAGE)\n"
		    "  --wait SECONDS   how long it may take to answer, 1 to 3600 (default 180);\n"
		    "                   if it does not, its last log lines are shown\n"
		    "\n"
		    "Exit status: 0 it runs and answers; 1 it could not be made or did not answer,\n"
		    "no image named, no master key, a problem in models/, or no engine; 2 a bad\n"
		    "flag; 130 interrupted.\n"
		    "\n"
		    "Example: SSEBENCH_PROXY_IMAGE=ghcr.io/berriai/litellm:main-stable ssebench proxy up\n",
	    .run = cmd_proxy_up,
	},
	{
	    .name = "down",
	    .summary = "stop and remove the model proxy container",
	    .usage = "ssebench proxy down",
	    .help = "Stop (10 s grace) and remove the container SSEBENCH_PROXY_CONTAINER (default\n"
		    "ssebench-proxy), only if 'ssebench proxy up' made it (label ssebench.proxy=1).\n"
		    "No such container: nothing to do. A run still going loses its proxy.\n"
		    "\n"
		    "Exit status: 0 removed, or there was none; 1 the container is not ours, or\n"
		    "the engine failed; 2 a bad flag.\n",
	    .run = cmd_proxy_down,
	},
	{
	    .name = "status",
	    .summary = "whether the model proxy runs, and what it serves",
	    .usage = "ssebench proxy status [--json]",
	    .help = "Say whether the container SSEBENCH_PROXY_CONTAINER (default ssebench-proxy)\n"
		    "exists and runs, its image and published port, whether the proxy answers at\n"
		    "the admin URL (SSEBENCH_PROXY_ADMIN_URL, else http://127.0.0.1:$LITELLM_PORT),\n"
		    "and the models it serves (GET /v1/models with LITELLM_MASTER_KEY). No key is\n"
		    "ever printed.\n"
		    "\n"
		    "  --json  {container, exists, running, state, image, ours, published,\n"
		    "          admin_url, healthy, models: [names] or null, models_error}\n"
		    "\n"
		    "Exit status: 0 the container runs and the proxy answers; 1 otherwise, or no\n"
		    "engine; 2 a bad flag.\n"
		    "\n"
		    "Example: ssebench proxy status --json\n",
	    .run = cmd_proxy_status,
	},
	{ .name = NULL },
};

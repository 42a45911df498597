/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd-doctor.c: `ssebench doctor`: everything a run needs, checked one by one, each with
 * what to do when it fails (docs/models.md, "A proxy of your own").
 *
 * Doctor only looks: it reads settings, files and the engine's state, and asks the proxy
 * questions that change nothing (health, its models as the master key sees them, its
 * readiness). It never makes a key, a container, a network or a file, so it is safe to run
 * at any time, also while runs go on.
 */
#include "config.h"

#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/diag.h"
#include "sb/exit.h"
#include "sb/fs.h"
#include "sb/json.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/runlimits.h"

#include "cli.h"
#include "disk.h"
#include "docker.h"
#include "images.h"
#include "models.h"
#include "proxy.h"
#include "run.h"

enum status { ST_OK, ST_WARN, ST_FAIL, ST_SKIP };
static const char *const status_word[] = { "ok", "warn", "FAIL", "skip" };

struct check {
	const char *name;
	enum status st;
	char *detail;
	char *fix; /* what to do, or NULL */
};

struct checks {
	struct check v[32];
	size_t n;
};

static void
add(struct checks *c, const char *name, enum status st, const char *fix, const char *fmt, ...)
    _printf_(5, 6);

static void
add(struct checks *c, const char *name, enum status st, const char *fix, const char *fmt, ...)
{
	va_list ap;
	struct check *k;

	if (c->n >= SB_ARRAY_SIZE(c->v))
		abort(); /* a fixed list of checks: more is a bug of ours */
	k = &c->v[c->n++];
	k->name = name;
	k->st = st;
	va_start(ap, fmt);
	k->detail = sb_xvasprintf(fmt, ap);
	va_end(ap);
	k->fix = fix != NULL ? sb_xstrdup(fix) : NULL;
}

/* The client: Debian's (BuildKit built in), or a newer one with the buildx plugin. */
static void
check_client(struct checks *c)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT, b = SB_ARGV_INIT;
	_cleanup_free_ char *version = NULL;
	const char *path = docker_path();
	uint64_t major = 0;

	if (access(path, X_OK) < 0) {
		add(c, "docker-client", ST_FAIL,
		    "apt-get install docker.io (Debian's client is /usr/bin/docker), or set "
		    "SSEBENCH_DOCKER to a client",
		    "no docker client at %s", path);
		return;
	}
	sb_argv_pushl(&a, "version", "--format", "{{.Client.Version}}", NULL);
	/* The client answers for itself even when no engine does; its output then ends with
	 * the engine's error, so only the first line is the version. */
	(void)docker_output(&a, &version, NULL);
	if (version != NULL)
		version[strcspn(version, "\n")] = '\0';
	if (version == NULL || *version == '\0') {
		add(c, "docker-client", ST_FAIL, "reinstall it (apt-get install docker.io)",
		    "%s does not say its version", path);
		return;
	}
	{
		_cleanup_free_ char *m = sb_xstrndup(version, strcspn(version, "."));

		(void)sb_parse_u64(m, 0, 1000, &major, NULL);
	}
	/* From Docker 23 on, BuildKit builds go through the buildx plugin. */
	if (major >= 23) {
		sb_argv_pushl(&b, "buildx", "version", NULL);
		if (docker_output(&b, NULL, NULL) != 0) {
			add(c, "docker-client", ST_FAIL,
			    "install the buildx plugin (docker-buildx), or use Debian's client "
			    "(/usr/bin/docker from docker.io)",
			    "%s %s has no buildx: the image builds need BuildKit", path, version);
			return;
		}
		add(c, "docker-client", ST_OK, NULL, "%s %s, with buildx", path, version);
		return;
	}
	add(c, "docker-client", ST_OK, NULL, "%s %s (BuildKit built in)", path, version);
}

/* Free space of the results' file system (or of its nearest existing parent). */
static void
check_disk(struct checks *c)
{
	const char *results = results_root();
	_cleanup_free_ char *dir = sb_xstrdup(results);
	_cleanup_free_ char *dv = sb_run_limit_resolve(SB_RUN_LIMIT_DISK,
	    cli_setting("SSEBENCH_DISK", NULL), NULL);
	const char *where = dir;
	uint64_t disk = 0, need, avail;
	struct statvfs vfs;

	/* A results directory not made yet: the file system it will be made on. */
	while (statvfs(where, &vfs) < 0) {
		char *slash = strrchr(dir, '/');

		if (errno != ENOENT || strcmp(where, ".") == 0 || strcmp(where, "/") == 0) {
			add(c, "results-disk", ST_FAIL, "set SSEBENCH_RESULTS to a directory you can use",
			    "cannot look at %s: %s", where, strerror(errno));
			return;
		}
		if (slash == NULL)
			where = ".";
		else if (slash == dir)
			where = "/";
		else
			*slash = '\0';
	}
	(void)sb_parse_u64(dv, 1, UINT64_MAX, &disk, NULL);
	need = disk_room_needed(disk);
	avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	if (avail < need)
		add(c, "results-disk", ST_FAIL,
		    "free space there, point SSEBENCH_RESULTS at a larger file system, or lower "
		    "SSEBENCH_DISK",
		    "%.1f GiB free under %s; a run needs %.1f GiB (two file systems of "
		    "SSEBENCH_DISK and 1 GiB to spare)",
		    (double)avail / (1 << 30), where, (double)need / (1 << 30));
	else
		add(c, "results-disk", ST_OK, NULL,
		    "%.1f GiB free under %s%s%s%s; a run needs %.1f GiB (about %llu at once)",
		    (double)avail / (1 << 30), where, strcmp(where, results) ? " (where " : "",
		    strcmp(where, results) ? results : "", strcmp(where, results) ? " will be)" : "",
		    (double)need / (1 << 30), (unsigned long long)(need > 0 ? avail / need : 0));
}

/* The working directory's .env: there, a regular file, owner-only, every line KEY=value. */
static void
check_dotenv(struct checks *c)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(1024 * 1024);
	_cleanup_close_ int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_diags_ struct sb_diags diags = SB_DIAGS_INIT;
	_cleanup_argv_ struct sb_argv env = SB_ARGV_INIT;
	struct sb_error *err = NULL;
	struct stat st;

	if (cwd < 0 || fstatat(cwd, ".env", &st, AT_SYMLINK_NOFOLLOW) < 0) {
		add(c, "dotenv", ST_WARN, "ssebench init (writes one, with a new master key)",
		    "no .env here: settings come from the environment only");
		return;
	}
	{
		_cleanup_free_ char *why = NULL;

		if (S_ISREG(st.st_mode) && !cli_dotenv_trusted(&st, &why)) {
			add(c, "dotenv", ST_FAIL, "make .env yours, one name, mode 600",
			    ".env is not read: %s", why);
			return;
		}
	}
	if (sb_read_file_at(cwd, ".env", SB_OPEN_NO_SYMLINKS, &b, &err) < 0) {
		add(c, "dotenv", ST_FAIL, "make .env a regular file of yours (not a link)",
		    ".env is not read: %s", sb_error_message(err));
		sb_error_release(&err);
		return;
	}
	cli_dotenv_parse(b.s, &env, &diags);
	if (diags.n > 0) {
		_cleanup_buf_ struct sb_buf lines = SB_BUF_INIT(4096);

		for (size_t i = 0; i < diags.n && i < 5; i++)
			(void)sb_buf_appendf(&lines, NULL, "%s%u", i ? ", " : "", diags.v[i].line);
		add(c, "dotenv", ST_FAIL, "make each line KEY=value or a # comment",
		    ".env: %zu line%s not KEY=value (line %s%s): ignored", diags.n,
		    diags.n == 1 ? " is" : "s are", lines.s, diags.n > 5 ? ", ..." : "");
		return;
	}
	if (st.st_mode & 0077) {
		add(c, "dotenv", ST_FAIL, "chmod 600 .env",
		    ".env has mode %04o: others may read the keys in it", (unsigned)(st.st_mode & 07777));
		return;
	}
	add(c, "dotenv", ST_OK, NULL, ".env: mode %04o, %zu setting%s",
	    (unsigned)(st.st_mode & 07777), env.n, env.n == 1 ? "" : "s");
}

/* "a, b, c" of up to max names, then ", ..." */
static char *
name_list(const struct sb_argv *v, size_t max)
{
	struct sb_buf b = SB_BUF_INIT(64 * 1024);

	for (size_t i = 0; i < v->n && i < max; i++)
		(void)sb_buf_appendf(&b, NULL, "%s%s", i ? ", " : "", v->v[i]);
	if (v->n > max)
		(void)sb_buf_appends(&b, ", ...", NULL);
	return sb_buf_detach(&b, NULL);
}

#define RESTART "ssebench proxy down && ssebench proxy up"

/* The proxy, as runs will use it. m: the models of models/ (may be empty). */
static void
check_proxy(struct checks *c, const struct models *m, bool engine)
{
	_cleanup_argv_ struct sb_argv ids = SB_ARGV_INIT, missing = SB_ARGV_INIT,
				      nokey = SB_ARGV_INIT;
	_cleanup_free_ char *admin = NULL, *list = NULL;
	json_auto_t *reply = NULL, *ready = NULL;
	struct sb_error *err = NULL;
	struct proxy px;
	const char *key, *container;

	if (proxy_configure(&px, &err) < 0) {
		add(c, "proxy-settings", ST_FAIL,
		    "ssebench init writes a .env with a master key; see docs/models.md",
		    "%s", sb_error_message(err));
		sb_error_release(&err);
		proxy_release(&px);
		add(c, "proxy", ST_SKIP, NULL, "not checked: the settings above");
		goto container;
	}
	add(c, "proxy-settings", ST_OK, NULL, "admin URL %s, runs reach it as %s, %s", px.admin_url,
	    px.agent_url, px.master_key ? "a key per run (LITELLM_MASTER_KEY)"
					: "one fixed key for every run (SSEBENCH_PROXY_KEY)");
	admin = sb_xstrdup(px.admin_url);
	if (proxy_get(admin, NULL, "/health/liveliness", NULL, &err) < 0) {
		add(c, "proxy", ST_FAIL,
		    "ssebench proxy up (docs/models.md), or set SSEBENCH_PROXY_ADMIN_URL to where "
		    "your proxy answers",
		    "%s", sb_error_message(err));
		sb_error_release(&err);
		proxy_release(&px);
		goto container;
	}
	add(c, "proxy", ST_OK, NULL, "the model proxy answers at %s", admin);

	/* The key runs are made with (or handed), asked for the models: it changes nothing. */
	key = px.master_key != NULL ? px.master_key : px.fixed_key;
	if (proxy_get(admin, key, "/v1/models", &reply, &err) < 0) {
		bool refused = sb_error_code(err) == EACCES;

		add(c, px.master_key ? "master-key" : "proxy-key", ST_FAIL,
		    px.master_key ? "set LITELLM_MASTER_KEY to the proxy's master key (a proxy made "
				    "by ssebench proxy up keeps the key it was made with: " RESTART
				    " gives it this one)"
				  : "set SSEBENCH_PROXY_KEY to a key of that proxy",
		    "%s", refused ? (px.master_key ? "the proxy refuses LITELLM_MASTER_KEY"
						   : "the proxy refuses SSEBENCH_PROXY_KEY")
				  : sb_error_message(err));
		sb_error_release(&err);
		add(c, "models-served", ST_SKIP, NULL, "not checked: no key the proxy takes");
		proxy_release(&px);
		goto container;
	}
	add(c, px.master_key ? "master-key" : "proxy-key", ST_OK, NULL, "the proxy accepts %s",
	    px.master_key ? "LITELLM_MASTER_KEY" : "SSEBENCH_PROXY_KEY");

	proxy_model_ids(reply, &ids);
	for (size_t i = 0; i < m->n; i++) {
		bool served = false;

		for (size_t k = 0; k < ids.n && !served; k++)
			served = strcmp(ids.v[k], m->v[i].name) == 0;
		if (!served)
			sb_argv_push(&missing, m->v[i].name);
	}
	list = name_list(&missing, 6);
	if (m->n == 0)
		add(c, "models-served", ST_SKIP, NULL, "not checked: no model in models/");
	else if (missing.n == 0)
		add(c, "models-served", ST_OK, NULL, "all %zu models of models/ are served", m->n);
	else if (missing.n == m->n)
		add(c, "models-served", ST_FAIL,
		    "give the proxy models/ as its model list (" RESTART " for one made by "
		    "ssebench proxy up)",
		    "none of the %zu models of models/ is served (the proxy serves %zu other%s)",
		    m->n, ids.n, ids.n == 1 ? "" : "s");
	else
		add(c, "models-served", ST_WARN,
		    RESTART " if you changed models/; a run with a model not served stops at once",
		    "%zu of %zu models of models/ not served: %s", missing.n, m->n, list);

	/* LiteLLM keeps its keys in its database: without one, no key per run. */
	if (px.master_key != NULL) {
		const char *db;

		if (proxy_get(admin, NULL, "/health/readiness", &ready, NULL) < 0 ||
		    (db = json_string_value(json_object_get(ready, "db"))) == NULL)
			add(c, "proxy-database", ST_WARN, NULL,
			    "the proxy does not say whether it has a database (GET /health/readiness)");
		else if (strcmp(db, "connected") != 0)
			add(c, "proxy-database", ST_FAIL,
			    "give the proxy a PostgreSQL database: DATABASE_URL in .env, then " RESTART
			    " (docs/models.md)",
			    "the proxy has no database (db: %s): LiteLLM makes a key per run only "
			    "with one",
			    db);
		else
			add(c, "proxy-database", ST_OK, NULL, "the proxy's database is connected");
	}
	proxy_release(&px);

container:
	/* The provider keys the models name: here they reach a proxy made by proxy up. */
	for (size_t i = 0; i < m->n; i++) {
		bool seen = false;

		if (m->v[i].key_env == NULL || cli_setting(m->v[i].key_env, NULL) != NULL)
			continue;
		for (size_t k = 0; k < nokey.n && !seen; k++)
			seen = strcmp(nokey.v[k], m->v[i].key_env) == 0;
		if (!seen)
			sb_argv_push(&nokey, m->v[i].key_env);
	}
	if (nokey.n > 0) {
		_cleanup_free_ char *names = name_list(&nokey, 6);

		add(c, "provider-keys", ST_WARN,
		    "add the keys of the providers you use to .env, then " RESTART,
		    "not set here: %s (a proxy made by ssebench proxy up gets none of these; its "
		    "models fail at their provider)",
		    names);
	} else if (m->n > 0) {
		add(c, "provider-keys", ST_OK, NULL, "every provider key models/ names is set");
	}

	/* A restricted run's network is internal: the proxy must be a container on it. */
	container = cli_setting("SSEBENCH_PROXY_CONTAINER", NULL);
	if (!engine) {
		add(c, "proxy-container", ST_SKIP, NULL, "not checked: no engine");
		return;
	}
	{
		struct proxy_container pc;
		const char *name = container != NULL ? container : PROXY_CONTAINER_DEFAULT;

		if (proxy_container_inspect(name, &pc, &err) < 0) {
			if (container == NULL)
				add(c, "proxy-container", ST_FAIL,
				    "ssebench proxy up, or set SSEBENCH_PROXY_CONTAINER to your proxy's "
				    "container",
				    "no proxy container for runs: a restricted run's network is "
				    "internal, so runs reach the proxy only as a container that joins "
				    "it (SSEBENCH_PROXY_CONTAINER is not set, and there is no %s)",
				    PROXY_CONTAINER_DEFAULT);
			else
				add(c, "proxy-container", ST_FAIL,
				    "start it, or set SSEBENCH_PROXY_CONTAINER to your proxy's container",
				    "SSEBENCH_PROXY_CONTAINER=%s: %s", name, sb_error_message(err));
			sb_error_release(&err);
			return;
		}
		if (container == NULL && !pc.ours)
			add(c, "proxy-container", ST_FAIL,
			    "set SSEBENCH_PROXY_CONTAINER=" PROXY_CONTAINER_DEFAULT
			    " if it is your proxy, or ssebench proxy up under another name",
			    "a container %s exists that ssebench proxy up did not make: runs do not "
			    "use it",
			    name);
		else if (!pc.running)
			add(c, "proxy-container", ST_FAIL,
			    pc.ours ? "ssebench proxy up" : "docker start it",
			    "the proxy container %s is %s, not running", name,
			    pc.state ? pc.state : "stopped");
		else
			add(c, "proxy-container", ST_OK, NULL,
			    "runs attach the container %s to their network as litellm", name);
		proxy_container_release(&pc);
	}
}

int
cmd_doctor(const struct cli_command *cmd, int argc, char **argv)
{
	_cleanup_diags_ struct sb_diags diags = SB_DIAGS_INIT;
	_cleanup_free_ char *mdir = models_dir(), *problem = NULL, *rootfs = image_rootfs();
	struct checks c = { .n = 0 };
	struct sb_error *err = NULL;
	struct models m;
	bool json = false, engine, failed = false;
	int rc;

	if ((rc = cli_bare_command(cmd, argc, argv, &json)) >= 0)
		return rc;

	check_client(&c);
	problem = cli_engine_problem();
	engine = problem == NULL;
	if (engine)
		add(&c, "engine", ST_OK, NULL, "the Docker engine answers");
	else
		add(&c, "engine", ST_FAIL, "scripts/setup (as root) starts it, or point DOCKER_HOST "
					   "at one",
		    "%s", problem);
	if (!engine)
		add(&c, "base-image", ST_SKIP, NULL, "not checked: no engine");
	else if (docker_image_exists(rootfs))
		add(&c, "base-image", ST_OK, NULL, "%s is there", rootfs);
	else
		add(&c, "base-image", ST_FAIL, "scripts/docker-up (as root) makes it",
		    "the base rootfs image %s is missing", rootfs);
	check_disk(&c);
	check_dotenv(&c);
	if (models_load(mdir, &m, &diags, &err) < 0) {
		add(&c, "models", ST_FAIL, "ssebench init copies the home's models/",
		    "%s", sb_error_message(err));
		sb_error_release(&err);
	} else if (diags.n > 0) {
		add(&c, "models", ST_FAIL, "ssebench models list shows each problem",
		    "%zu problem%s in %s", diags.n, diags.n == 1 ? "" : "s", mdir);
	} else if (m.n == 0) {
		add(&c, "models", ST_FAIL, "ssebench init copies the home's models/",
		    "%s defines no model", mdir);
	} else {
		add(&c, "models", ST_OK, NULL, "%zu models in %s", m.n, mdir);
	}
	check_proxy(&c, &m, engine);
	models_release(&m);

	for (size_t i = 0; i < c.n; i++)
		failed = failed || c.v[i].st == ST_FAIL;
	if (json) {
		json_auto_t *out = json_object(), *a = json_array();

		for (size_t i = 0; i < c.n; i++)
			json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s?}", "name",
						     c.v[i].name, "status", status_word[c.v[i].st],
						     "detail", c.v[i].detail, "fix", c.v[i].fix));
		json_object_set_new(out, "ok", json_boolean(!failed));
		json_object_set(out, "checks", a);
		cli_print_json(out);
	} else {
		for (size_t i = 0; i < c.n; i++) {
			printf("%-4s %-15s %s", status_word[c.v[i].st], c.v[i].name,
			    cli_safe(c.v[i].detail));
			if (c.v[i].fix != NULL && (c.v[i].st == ST_FAIL || c.v[i].st == ST_WARN))
				printf(" -> %s", cli_safe(c.v[i].fix));
			printf("\n");
		}
	}
	for (size_t i = 0; i < c.n; i++) {
		free(c.v[i].detail);
		free(c.v[i].fix);
	}
	return failed ? SB_EXIT_FAILURE : SB_EXIT_OK;
}

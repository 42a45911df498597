/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd-run.c: `ssebench run`: one agent x model x task, in sandbox mode (one container) or
 * sidecar mode (a task container and an agent container; docs/sidecar.md), as upstream's
 * (docs/upstream.md, "What a run does").
 *
 * Fail fast on anything the user gave wrong, before building anything; then build the
 * layers (base -> case -> runtime -> tool -> agent), make the networks, the run directory
 * and the secrets file, start the container in the foreground, and turn what it left into
 * result.json and summary.json.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sb/argv.h"
#include "sb/counters.h"
#include "sb/buf.h"
#include "sb/dialog.h"
#include "sb/exit.h"
#include "sb/freezer.h"
#include "sb/fs.h"
#include "sb/json.h"
#include "sb/limits.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/path.h"
#include "sb/runlimits.h"
#include "sb/sha256.h"
#include "sb/scan.h"
#include "sb/sig.h"
#include "sb/taskdir.h"
#include "sb/verdict.h"

#include "cgroup.h"
#include "cli.h"
#include "disk.h"
#include "docker.h"
#include "images.h"
#include "network.h"
#include "models.h"
#include "proxy.h"
#include "run.h"


char *
run_id_new(void)
{
	unsigned char r[3];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	if (sb_random_bytes(r, sizeof(r), NULL) < 0)
		memset(r, 0, sizeof(r));
	return sb_xasprintf("%04d%02d%02d-%02d%02d%02d-%02x%02x%02x", tm.tm_year + 1900,
	    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, r[0], r[1], r[2]);
}

const char *
results_root(void)
{
	return cli_setting("SSEBENCH_RESULTS", "results");
}

/*
 * A run's resource limit: the user's setting if it is a positive, finite number in range,
 * else the default, said out loud (never "unlimited": docs/design.md, "Fail closed";
 * runlimits.h).
 * CPUs are further held to what the machine has online, since Docker refuses more.
 */
static char *
run_limit(enum sb_run_limit which)
{
	const struct sb_run_limit_spec *sp = sb_run_limit_spec(which);
	const char *v = cli_setting(sp->setting, NULL);
	bool fell_back = false;
	char *r = sb_run_limit_resolve(which, v, &fell_back);

	if (fell_back && v != NULL)
		sb_log(SB_LOG_WARN, "%s='%s' is not a usable %s limit; using the default %s",
		    sp->setting, v, sp->unit, sp->def);
	if (which == SB_RUN_LIMIT_CPUS) {
		long online = sysconf(_SC_NPROCESSORS_ONLN);

		if (online > 0 && strtod(r, NULL) > (double)online) {
			free(r);
			r = sb_xasprintf("%ld", online);
		}
	}
	return r;
}

/* Copy a file out of an image (docker create + docker cp), e.g. the reference patch. */
static int
copy_from_image(const char *image, const char *src, const char *dst, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ char *cid = NULL, *from = NULL;
	int code;

	sb_argv_pushl(&a, "create", image, "true", NULL);
	if (docker_output(&a, &cid, err) != 0)
		return sb_error_set(err, EIO, "docker create %s failed", image);
	sb_argv_release(&a);
	from = sb_xasprintf("%s:%s", cid, src);
	sb_argv_pushl(&a, "cp", "--follow-link", from, dst, NULL);
	code = docker_output(&a, NULL, err);
	sb_argv_release(&a);
	sb_argv_pushl(&a, "rm", "-f", cid, NULL);
	(void)docker_output(&a, NULL, NULL);
	if (code != 0)
		return sb_error_set(err, EIO, "cannot copy %s out of %s", src, image);
	return 0;
}

static int
write_text(const char *path, const char *text, mode_t mode, struct sb_error **err)
{
	_cleanup_free_ char *dir = sb_xstrdup(path);
	char *slash = strrchr(dir, '/');
	_cleanup_close_ int fd = -1;

	if (slash != NULL)
		*slash = '\0';
	fd = sb_open_dir(slash != NULL ? dir : ".", err);
	if (fd < 0)
		return -1;
	return sb_write_file_atomic_at(fd, sb_path_basename(path), text, strlen(text), mode, err);
}

struct results_check {
	uint64_t entries, removed, fixed;
};

/*
 * The run directory on the host, checked from the host's side after the run: it must hold
 * nothing set-id, world-writable, linked (a symbolic link, a second name of a file), special
 * (a FIFO blocks its reader) or owned by the agent's uid (on a host, uid 1000 is often a
 * person). Everything in it was written by root in the container or by this CLI, and the
 * archive was copied in file by file, so this should find nothing: what it finds is
 * removed (a file) or given our owner and a sane mode (a directory), and counted.
 */
static void
check_results_dir(int dfd, unsigned depth, struct results_check *c)
{
	int lfd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
	struct dirent *de;
	DIR *d;

	if (lfd < 0 || (d = fdopendir(lfd)) == NULL) {
		if (lfd >= 0)
			close(lfd);
		return;
	}
	while ((de = readdir(d)) != NULL && c->entries < SB_COPY_FILES_MAX) {
		struct stat st;
		bool bad_bits;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		c->entries++;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		bad_bits = (st.st_mode & (S_ISUID | S_ISGID | S_ISVTX | S_IWOTH)) != 0 ||
			   st.st_uid == AGENT_UID;
		if (S_ISDIR(st.st_mode)) {
			_cleanup_close_ int sub =
			    openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub < 0)
				continue;
			if (bad_bits) {
				if (fchown(sub, geteuid(), getegid()) == 0 && fchmod(sub, 0755) == 0)
					c->fixed++;
			}
			if (depth < SB_COPY_DEPTH_MAX)
				check_results_dir(sub, depth + 1, c);
			continue;
		}
		if (!S_ISREG(st.st_mode) || st.st_nlink > 1 || bad_bits) {
			if (unlinkat(dfd, de->d_name, 0) == 0)
				c->removed++;
		}
	}
	closedir(d);
}

/* Point <dir>/latest at run_id (atomic: a new link renamed over the old one). */
static void
update_latest(const char *dir, const char *run_id)
{
	_cleanup_free_ char *tmp = sb_xasprintf("%s/.latest-%s", dir, run_id);
	_cleanup_free_ char *latest = sb_xasprintf("%s/latest", dir);

	(void)unlink(tmp);
	if (symlink(run_id, tmp) == 0 && rename(tmp, latest) < 0)
		(void)unlink(tmp);
}

/*
 * What the CLI does when the agent phase ends, while the container goes on to grading: the
 * entrypoint says so with "agent-phase-ended" in the results directory (root's, on this
 * host the run directory), and waits for "proxy-key-revoked" before it grades.
 */
struct phase_end {
	int run_fd;		  /* the run directory */
	bool seen;		  /* the end of the agent phase was handled */
	struct proxy *px;	  /* the run's key, deleted here (NULL: no key) */
	const char *net;	  /* the run's network */
	const char *members_ok[4]; /* the containers that may be on it (NULL-terminated) */
	char *foreign;		  /* a container on the network that is not the run's (owned) */
	bool key_revoked;
	bool spend_read;	  /* what the key spent, read before it went */
	double spend;
	bool tokens_read;	  /* and the tokens it was billed for */
	int64_t tokens_in, tokens_out;
};

/* What the run key spent and the tokens it was billed for, asked while it exists. */
static void
read_key_usage(struct phase_end *pe)
{
	struct sb_error *err = NULL;

	if (!pe->spend_read) {
		if (proxy_key_spend(pe->px, &pe->spend, &err) == 0) {
			pe->spend_read = true;
		} else {
			sb_log(SB_LOG_WARN, "%s; the summary's spend is 0", sb_error_message(err));
			sb_error_release(&err);
		}
	}
	if (!pe->tokens_read) {
		if (proxy_key_tokens(pe->px, &pe->tokens_in, &pe->tokens_out, &err) == 0) {
			pe->tokens_read = true;
		} else {
			sb_log(SB_LOG_INFO, "%s; the summary's tokens are the agent's own count",
			    sb_error_message(err));
			sb_error_release(&err);
		}
	}
}

/*
 * The agent phase has ended: the run's proxy key goes now, before grading runs the patch's
 * code (which has no network in its sandbox either: this is the second wall), and the run's
 * network is checked to hold only the run's containers and the proxy.
 */
static void
on_phase_end(struct phase_end *pe)
{
	_cleanup_free_ char *members = net_members(pe->net);
	struct sb_error *err = NULL;
	const char *what;
	char *save = NULL;

	pe->seen = true;
	if (pe->px != NULL && pe->px->minted) {
		/* What it spent can only be asked while it exists. */
		read_key_usage(pe);
		if (proxy_key_delete(pe->px, &err) < 0) {
			sb_log(SB_LOG_WARN, "%s: the run's key could not be revoked before grading",
			    sb_error_message(err));
			sb_error_release(&err);
		} else {
			pe->key_revoked = true;
		}
	}
	for (char *c = members != NULL ? strtok_r(members, " \n", &save) : NULL; c != NULL;
	     c = strtok_r(NULL, " \n", &save)) {
		bool ours = false;

		for (size_t i = 0; pe->members_ok[i] != NULL && !ours; i++)
			ours = strcmp(c, pe->members_ok[i]) == 0;
		if (!ours && pe->foreign == NULL)
			pe->foreign = sb_xstrdup(c);
	}
	if (members == NULL && pe->foreign == NULL)
		pe->foreign = sb_xstrdup("(the network could not be inspected)");
	what = pe->px == NULL || !pe->px->minted ? "no key"
		: pe->key_revoked		      ? "revoked"
						      : "not revoked";
	{
		_cleanup_free_ char *text = sb_xasprintf("%s\n", what);

		(void)sb_write_file_atomic_at(pe->run_fd, "proxy-key-revoked", text, strlen(text),
		    0644, NULL);
	}
	progress("agent phase over: the run's proxy key %s%s", what,
	    pe->foreign != NULL ? "; the run's network holds another container" : "");
}

/* The time stamp ("2026-12-03T17:06:09.892Z", 24 bytes) of the log line holding p. */
static char *
line_stamp(const char *start, const char *p)
{
	while (p > start && p[-1] != '\n')
		p--;
	if (strlen(p) < 25 || p[24] != ' ' || p[10] != 'T' || p[23] != 'Z')
		return NULL;
	return sb_xstrndup(p, 24);
}

/*
 * The agent phase as the entrypoint logs stamp it (the harness writes them, the agent
 * cannot): when the agent started and when the daemon was told its phase was over, each
 * NULL if not found. They bound the daemon's refusals that are the agent's; the
 * entrypoint's own probes of the gate are refused by design before and after. In sidecar
 * mode the task container's entrypoint (task-entrypoint.log) tells the daemon; each log is
 * read once.
 */
static void
agent_phase_stamps(int rfd, char **since, char **until)
{
	static const char *const logs[] = { "entrypoint.log", "task-entrypoint.log" };
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(SB_SCAN_READ_MAX);
	const char *p;

	*since = *until = NULL;
	for (size_t i = 0; i < SB_ARRAY_SIZE(logs) && (*since == NULL || *until == NULL); i++) {
		sb_buf_reset(&b);
		if (sb_read_file_at(rfd, logs[i], SB_OPEN_NO_SYMLINKS, &b, NULL) < 0 || b.s == NULL)
			continue;
		if (*since == NULL && (p = strstr(b.s, ": agent started: ")) != NULL)
			*since = line_stamp(b.s, p);
		if (*until == NULL &&
		    (p = strstr(b.s, ": daemon told that the agent phase is over")) != NULL)
			*until = line_stamp(b.s, p);
	}
}

/*
 * The answer-seeking scan (sb/scan.h) over what the agent did: the tool calls of its
 * dialog (the archive's copy, read as the untrusted file it is), the daemon's refusals of
 * its requests, the canary in its patch. Shown with the grade; it never changes it.
 */
static json_t *
run_flags(const char *archive, int rfd, const struct sb_task *task, const char *canary,
    json_int_t *total, json_t **counts)
{
	const struct sb_task_config *c = task->config;
	_cleanup_close_ int afd = archive != NULL ? sb_open_dir(archive, NULL) : -1;
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(SB_SCAN_READ_MAX);
	_cleanup_free_ const char **refs = sb_xcalloc(c->reference.n + 1, sizeof(*refs));
	struct sb_scan_task t = { c->repository.s, refs, c->patch_commit.s, canary, SB_TASK_FILES_DIR };
	static const struct {
		const char *file;
		bool in_archive;
	} sources[] = { { "dialog.jsonl", true }, { "daemon.log", false }, { "final.patch", false } };
	_cleanup_free_ char *since = NULL, *until = NULL;
	struct sb_scan s;
	json_t *flags;

	agent_phase_stamps(rfd, &since, &until);
	for (size_t i = 0; i < c->reference.n; i++)
		refs[i] = c->reference.v[i].s;
	sb_scan_init(&s);
	for (size_t i = 0; i < SB_ARRAY_SIZE(sources); i++) {
		int fd = sources[i].in_archive ? afd : rfd;
		struct sb_error *err = NULL;

		sb_buf_reset(&b);
		if (fd < 0)
			continue;
		if (sb_read_file_at(fd, sources[i].file, SB_OPEN_NO_SYMLINKS, &b, &err) < 0) {
			/* Too large, a link, a FIFO: the agent's record could hide commands so. No
			 * dialog at all is an agent that keeps none (dummy, a script). */
			if (sb_error_code(err) == EFBIG)
				sb_scan_unscanned(&s, sources[i].file, "larger than the scan reads");
			else if (sources[i].in_archive && sb_error_code(err) != ENOENT)
				sb_scan_unscanned(&s, sources[i].file, "not a regular file, or unreadable");
			sb_error_release(&err);
			continue;
		}
		if (i == 0)
			sb_scan_dialog(&s, &t, b.s ?: "", b.len);
		else if (i == 1)
			sb_scan_daemon_log(&s, b.s ?: "", b.len, since, until);
		else
			sb_scan_canary(&s, &t, sources[i].file, b.s ?: "", b.len);
	}
	flags = json_incref(s.flags);
	*counts = json_incref(s.counts);
	*total = (json_int_t)s.total;
	sb_scan_release(&s);
	return flags;
}

/* The container's exit, with a first Ctrl-C stopping it and a second one killing it. */
static int
wait_container(struct sb_cmd *cmd, const char *name, struct phase_end *pe,
    bool *ret_interrupted)
{
	int stops = 0, status = 0;

	for (;;) {
		pid_t w = waitpid(cmd->pid, &status, WNOHANG);
		struct stat st;

		if (w == cmd->pid)
			break;
		if (w < 0 && errno != EINTR)
			return -1;
		if (pe != NULL && !pe->seen &&
		    fstatat(pe->run_fd, "agent-phase-ended", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode))
			on_phase_end(pe);
		if (sb_sig_interrupt_count() > stops) {
			_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;

			stops = sb_sig_interrupt_count();
			*ret_interrupted = true;
			if (stops == 1) {
				progress("interrupted: stopping the container (Ctrl-C again to kill it)");
				sb_argv_pushl(&a, "stop", "--time", "20", name, NULL);
			} else {
				sb_argv_pushl(&a, "kill", name, NULL);
			}
			(void)docker_output(&a, NULL, NULL);
		}
		usleep(200000);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* What the containers of one run share: the run's settings and its host paths. */
struct run_ctx {
	const struct run_opts *o;
	const char *net, *gateway, *mem, *cpus, *pids;
	bool canary, reference, proxy_key;
	char *run_dir, *archive, *secrets, *ref; /* absolute; ref only for the reference agent */
	char *seccomp;				 /* the profile of containers that run scripts */
	char *vol_source, *vol_sockets;		 /* the tree (both modes), the sockets (sidecar) */
	char *vol_home;				 /* the agent's home */
	const struct run_disk *disk;		 /* the run's own file system (disk.h) */
	const char *source;			 /* the task's source path in the container */
	unsigned long runner_uid;		 /* this run's own (runner_uid_new) */
	char *agent_cgroup;			 /* the agent's freezer cgroup on the host, or NULL */
	const char *agent_freezer;		 /* "cgroup-v2", "cgroup-v1" or "signals" */
};

static void
run_ctx_release(struct run_ctx *rx)
{
	free(rx->run_dir);
	free(rx->archive);
	free(rx->secrets);
	free(rx->ref);
	free(rx->seccomp);
	free(rx->vol_source);
	free(rx->vol_sockets);
	free(rx->vol_home);
	free(rx->agent_cgroup);
}

/*
 * The runner's uid for one run: random in SB_RUNNER_UID_MIN..MAX. The kernel counts
 * processes, inotify instances, queued signals, pipe buffers and message queue bytes per
 * uid across the whole host; with the image's one runner uid, the task scripts of two runs
 * at once (two samples of one task) could signal to each other through those counts, one
 * holding the hidden tests in grading, the other's output going back to its agent. One in
 * nearly two billion: two runs sharing one is left to chance, which is that small.
 */
static unsigned long
runner_uid_new(void)
{
	unsigned char r[4];
	uint32_t v;

	if (sb_random_bytes(r, sizeof(r), NULL) < 0)
		abort();
	v = (uint32_t)r[0] | (uint32_t)r[1] << 8 | (uint32_t)r[2] << 16 | (uint32_t)r[3] << 24;
	return SB_RUNNER_UID_MIN + v % (SB_RUNNER_UID_MAX - SB_RUNNER_UID_MIN + 1UL);
}

/* Does the container exist (running or not)? */
static bool
container_exists(const char *name)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;

	sb_argv_pushl(&a, "container", "inspect", "--format", "{{.Id}}", name, NULL);
	return docker_output(&a, NULL, NULL) == 0;
}

static bool
runtime_name_valid(const char *s)
{
	if (s[0] == '\0' || strlen(s) > 64 || !((s[0] >= 'a' && s[0] <= 'z') ||
						(s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= '0' && s[0] <= '9')))
		return false;
	for (const char *p = s; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
			*p == '.' || *p == '_' || *p == '-'))
			return false;
	return true;
}

/*
 * --runtime NAME: a stronger boundary where the engine has one (gVisor's runsc, Kata). The
 * engine must know it: `docker info` lists its runtimes; a name it does not list is refused
 * before anything is built, with the names it does.
 */
static int
check_runtime(const char *name, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ char *out = NULL;
	json_auto_t *rts = NULL;
	_cleanup_buf_ struct sb_buf have = SB_BUF_INIT(4096);
	const char *key;
	json_t *v;

	sb_argv_pushl(&a, "info", "--format", "{{json .Runtimes}}", NULL);
	if (docker_output(&a, &out, err) != 0 || out == NULL ||
	    sb_json_load(out, strlen(out), SB_JSON_FILE_MAX, &rts, NULL) < 0 || !json_is_object(rts))
		return sb_error_set(err, EIO, "cannot read the Docker engine's runtimes (docker info)");
	if (json_object_get(rts, name) != NULL)
		return 0;
	json_object_foreach (rts, key, v)
		(void)sb_buf_appendf(&have, NULL, "%s%s", have.len > 0 ? ", " : "", key);
	return sb_error_set(err, ENOENT,
	    "the Docker engine has no runtime '%s' (it has: %s); install it and register it in "
	    "the engine's daemon.json, or leave --runtime out", name, have.s);
}

/* -v DISK_DIR:TARGET for one directory of the run's file system. */
static void
push_disk_dir(struct sb_argv *a, const struct run_ctx *rx, const char *name, const char *target)
{
	_cleanup_free_ char *dir = disk_path(rx->disk, name);

	sb_argv_push(a, "-v");
	sb_argv_pushf(a, "%s:%s", dir, target);
}

/*
 * Where a run container writes (disk.h): its root read-only, every place it writes a
 * directory of the run's own file system, /run a small tmpfs (sockets, the daemon's pid
 * files). The agent's tree and home are Docker volumes over directories of that file
 * system, so that Docker fills them from the image; both sidecar containers share them.
 * Each container has a /tmp and a /var/tmp of its own; the task container (and a sandbox)
 * the runner's area and the daemon's state.
 */
static void
push_disk_mounts(struct sb_argv *a, const struct run_ctx *rx, const char *role)
{
	bool task = role != NULL && strcmp(role, "task") == 0;
	bool agent_side = role == NULL || !task;

	sb_argv_pushl(a, "--read-only", "--tmpfs", "/run:rw,nosuid,nodev,mode=0755,size=16m",
	    NULL);
	push_disk_dir(a, rx, task ? DISK_TMP_TASK : DISK_TMP, "/tmp");
	push_disk_dir(a, rx, task ? DISK_VARTMP_TASK : DISK_VARTMP, "/var/tmp");
	push_disk_dir(a, rx, DISK_ARCHIVE, "/tmp/sse-archive");
	if (role == NULL || task) {
		push_disk_dir(a, rx, DISK_RUNNER, "/var/lib/ssebench-runner");
		push_disk_dir(a, rx, DISK_STATE, "/var/lib/ssebench-daemon");
	}
	(void)agent_side;
	sb_argv_pushl(a, "--mount", NULL);
	sb_argv_pushf(a, "type=volume,source=%s,target=%s", rx->vol_home, AGENT_HOME);
	if (role == NULL) {
		sb_argv_pushl(a, "--mount", NULL);
		sb_argv_pushf(a, "type=volume,source=%s,target=%s", rx->vol_source, rx->source);
	}
}

/*
 * A Docker volume over a directory of the run's file system (the local driver, bound):
 * Docker fills an empty one from the image at its mount point, as it does any volume.
 */
static int
disk_volume(const struct run_ctx *rx, const char *vol, const char *dirname,
    struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ char *dir = disk_path(rx->disk, dirname);

	sb_argv_pushl(&a, "volume", "create", "--driver", "local", "--opt", "type=none", "--opt",
	    "o=bind", "--opt", NULL);
	sb_argv_pushf(&a, "device=%s", dir);
	sb_argv_push(&a, "--label");
	sb_argv_pushf(&a, "ssebench.run=%s", rx->o->run_id);
	sb_argv_push(&a, vol);
	if (docker_output(&a, NULL, err) != 0)
		return sb_error_set(err, EIO, "docker volume create %s failed", vol);
	return 0;
}

/* docker volume rm of the volumes made over the run's file system. */
static void
disk_volumes_remove(const struct run_ctx *rx)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;

	sb_argv_pushl(&a, "volume", "rm", "-f", NULL);
	if (rx->vol_home != NULL)
		sb_argv_push(&a, rx->vol_home);
	if (rx->vol_source != NULL && rx->vol_sockets == NULL)
		sb_argv_push(&a, rx->vol_source); /* sandbox mode; sidecar removes its own */
	if (a.n > 3)
		(void)docker_output(&a, NULL, NULL);
}

/*
 * Everything a run container gets, in either mode: the network, the labels, what the run
 * claims (the entrypoint establishes it or the run is not scored), the results directory,
 * the archive, the secrets file, the resource limits. role is NULL in sandbox mode, or the
 * sidecar container's role ("task" or "agent"). Both sidecar containers mount the archive
 * writable (the agent writes its archive in both modes: docs/sidecar.md): the agent's commands
 * through the daemon's bash tool run in the task container and may write their notes there too. It
 * is the agent's only while the agent phase lasts: the agent container hands it back to root once
 * the agent's processes in both containers have been killed.
 */
static void
push_run_args(struct sb_argv *a, const struct run_ctx *rx, const char *role)
{
	const struct run_opts *o = rx->o;
	bool task = role != NULL && strcmp(role, "task") == 0;

	sb_argv_pushl(a, "--network", rx->net, NULL);
	if (o->runtime != NULL)
		sb_argv_pushl(a, "--runtime", o->runtime, NULL);
	if (strcmp(o->egress, "open") != 0)
		sb_argv_pushl(a, "--dns-opt", "timeout:1", "--dns-opt", "attempts:1", NULL);
	sb_argv_push(a, "--label");
	sb_argv_pushf(a, "ssebench.run=%s", o->run_id);
	sb_argv_push(a, "--label");
	sb_argv_pushf(a, "ssebench.run-id=%s", o->run_id);
	if (o->job_id != NULL) {
		sb_argv_push(a, "--label");
		sb_argv_pushf(a, "ssebench.job=%s", o->job_id);
	}
	sb_argv_push(a, "--label");
	sb_argv_pushf(a, "ssebench.task-id=%s", o->task);
	sb_argv_push(a, "--label");
	sb_argv_pushf(a, "ssebench.model=%s", o->model);
	sb_argv_push(a, "--label");
	sb_argv_pushf(a, "ssebench.agent=%s", o->agent);
	sb_argv_push(a, "--label");
	sb_argv_pushf(a, "ssebench.mode=%s", role != NULL ? "sidecar" : "sandbox");
	if (role != NULL) {
		sb_argv_push(a, "--label");
		sb_argv_pushf(a, "ssebench.sidecar-role=%s", role);
	}
	/* The web UI finds a run by one container: the task container in sidecar mode. */
	if (role == NULL || task)
		sb_argv_pushl(a, "--label", "ssebench.webui=true", NULL);
	sb_argv_push(a, "--label");
	sb_argv_pushf(a, "ssebench.results=%s", rx->run_dir);
	if (rx->reference)
		sb_argv_pushl(a, "--label", "ssebench.reference-run=true", NULL);
	sb_argv_push(a, "-e");
	sb_argv_pushf(a, "SSE_DIFFICULTY=%u", o->difficulty);
	sb_argv_push(a, "-e");
	sb_argv_pushf(a, "TIMEOUT=%llu", (unsigned long long)o->timeout);
	sb_argv_push(a, "-e");
	sb_argv_pushf(a, "SSE_KEEP_ALIVE=%d", o->keep ? 1 : 0);
	sb_argv_push(a, "-e");
	sb_argv_pushf(a, "SSE_EGRESS=%s", o->egress);
	if (rx->reference && !task)
		sb_argv_pushl(a, "-e", "SSE_REFERENCE_RUN=1", NULL);
	/* The container that ends the agent phase waits for the key to be revoked. */
	if (rx->proxy_key && !task)
		sb_argv_pushl(a, "-e", "SSE_PROXY_KEY=1", NULL);
	if (rx->gateway != NULL) {
		sb_argv_push(a, "-e");
		sb_argv_pushf(a, "SSE_NET_GATEWAY=%s", rx->gateway);
	}
	if (rx->canary)
		sb_argv_pushl(a, "-e", "SSE_NET_CANARY=" NET_CANARY_ADDR, NULL);
	sb_argv_push(a, "-e");
	sb_argv_pushf(a, "SSE_RUNNER_UID=%lu", rx->runner_uid);
	/* The walk for places shared by the agent and the scripts covers the whole view: set
	 * here, so that no ENV of a task image can point it at an empty directory. */
	sb_argv_pushl(a, "-e", "SSE_SHARED_WALK_ROOT=/", NULL);
	/* The per-disk counters are masked below: the entrypoint checks that they are. */
	sb_argv_pushl(a, "-e", "SSE_COUNTERS_MASKED=1", NULL);
	/* The scripts' own root (images/sandbox/setup-tool-layer.sh, step 6), pinned likewise:
	 * a task image's ENV must not give them the agent's files back. */
	sb_argv_pushl(a, "-e", "SSE_RUNNER_ROOT=" RUNNER_ROOT, NULL);
	/* The agent's processes run where the daemon runs them (not the sidecar agent's). */
	if (rx->agent_cgroup != NULL && (role == NULL || task)) {
		sb_argv_push(a, "--mount");
		sb_argv_pushf(a, "type=bind,source=%s,target=" AGENT_CGROUP_TARGET, rx->agent_cgroup);
		sb_argv_pushl(a, "-e", "SSE_AGENT_CGROUP=" AGENT_CGROUP_TARGET, NULL);
	}
	sb_argv_push(a, "-v");
	sb_argv_pushf(a, "%s:/var/lib/ssebench/results", rx->run_dir);
	sb_argv_push(a, "--mount");
	sb_argv_pushf(a, "type=bind,source=%s,target=/run/ssebench-secrets/run.env,readonly",
	    rx->secrets);
	push_disk_mounts(a, rx, role);
	/*
	 * Activity counters the kernel shows every container (sb/counters.h): ext4's per-disk
	 * figures, the block devices' (in /proc/diskstats and in each device's own sysfs
	 * directory, which /sys/block only links to), each file system's (/sys/fs/<fs>), pages
	 * dirtied and written, block interrupts, io stall time. Code beside the hidden material moved them and the agent
	 * read the PoC or the hidden test back after the thaw, and from another container any
	 * other run's (tests/integrity/README.md). Nothing a run does needs them: empty in every
	 * run container. Only what exists is masked (Docker cannot make a mount point in /proc
	 * or /sys); the entrypoint checks the rest (isolation.c:check_counters_masked), so a
	 * place this misses fails the run rather than leaving it open.
	 */
	{
		_cleanup_argv_ struct sb_argv dirs = SB_ARGV_INIT;
		struct stat st;

		sb_counter_masked_dirs(&dirs);
		for (size_t i = 0; i < dirs.n; i++) {
			/* A comma or quote would end --mount's field: left unmasked, so checked. */
			if (strpbrk(dirs.v[i], ",\"\n") != NULL)
				continue;
			sb_argv_push(a, "--mount");
			sb_argv_pushf(a, "type=tmpfs,dst=%s,tmpfs-size=4096,tmpfs-mode=0555",
			    dirs.v[i]);
		}
		for (size_t i = 0; sb_counter_files[i] != NULL; i++)
			if (lstat(sb_counter_files[i], &st) == 0 && S_ISREG(st.st_mode)) {
				sb_argv_push(a, "--mount");
				sb_argv_pushf(a, "type=bind,src=/dev/null,dst=%s,readonly",
				    sb_counter_files[i]);
			}
	}
	/* Resource limits (fail closed: a bad value falls back, never to "unlimited"). */
	sb_argv_pushl(a, "--memory", rx->mem, "--cpus", rx->cpus, "--pids-limit", rx->pids,
	    "--ulimit", "core=0", "--security-opt", "no-new-privileges", NULL);
	/* The container that runs task scripts needs what their sandbox needs (seccomp.c); the
	 * sidecar agent container runs none, and keeps Docker's default. */
	if (role == NULL || task) {
		sb_argv_push(a, "--security-opt");
		sb_argv_pushf(a, "seccomp=%s", rx->seccomp);
	}
}

/* The two shared volumes, at the same paths in both sidecar containers. */
static void
push_sidecar_volumes(struct sb_argv *a, const struct run_ctx *rx, const char *source)
{
	sb_argv_pushl(a, "--mount", NULL);
	sb_argv_pushf(a, "type=volume,source=%s,target=%s", rx->vol_source, source);
	sb_argv_pushl(a, "--mount", NULL);
	sb_argv_pushf(a, "type=volume,source=%s,target=/run/ssebench", rx->vol_sockets);
}

/* docker volume rm, and docker rm -f of the task container (either may be NULL). */
static void
sidecar_remove(const struct run_ctx *rx, const char *task_container)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;

	if (task_container != NULL) {
		sb_argv_pushl(&a, "rm", "-f", "-v", task_container, NULL);
		(void)docker_output(&a, NULL, NULL);
		sb_argv_release(&a);
	}
	sb_argv_pushl(&a, "volume", "rm", "-f", NULL);
	if (rx->vol_source != NULL)
		sb_argv_push(&a, rx->vol_source);
	if (rx->vol_sockets != NULL)
		sb_argv_push(&a, rx->vol_sockets);
	if (a.n > 3)
		(void)docker_output(&a, NULL, NULL);
}

/*
 * Sidecar mode, before the agent container: the two volumes (the source tree, the
 * sockets), labelled with the run, then the task container, detached. Docker fills the
 * empty source volume from the image's tree (owned by model, one commit); the entrypoint
 * makes the socket volume root's, mode 0711, before the daemon binds in it.
 */
static int
sidecar_start_task(struct run_ctx *rx, const struct sb_task *t, const char *image,
    const char *name, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ char *out = NULL;
	const char *id = rx->o->run_id;

	rx->vol_sockets = sb_xasprintf("ssebench-%s-sockets", id);
	/* The tree's volume is made with the run's disk (do_run); the sockets' is small. */
	sb_argv_pushl(&a, "volume", "create", "--label", NULL);
	sb_argv_pushf(&a, "ssebench.run=%s", id);
	sb_argv_push(&a, rx->vol_sockets);
	if (docker_output(&a, NULL, err) != 0) {
		sidecar_remove(rx, NULL);
		return sb_error_set(err, EIO, "docker volume create %s failed", rx->vol_sockets);
	}
	sb_argv_release(&a);
	sb_argv_pushl(&a, "run", "-d", "--name", name, "--hostname", "task", NULL);
	push_run_args(&a, rx, "task");
	push_sidecar_volumes(&a, rx, t->config->source.s);
	sb_argv_push(&a, image);
	progress("run %s: starting the task container %s", id, name);
	if (docker_output(&a, &out, err) != 0) {
		sidecar_remove(rx, name);
		return sb_error_set(err, EIO, "docker run of the task container %s failed", name);
	}
	return 0;
}

/* After the agent container: remove the task container and the volumes, unless kept. */
static void
sidecar_finish(const struct run_ctx *rx, const char *task_container, bool keep)
{
	if (keep) {
		progress("kept: the containers and volumes labelled ssebench.run=%s (remove with "
			 "ssebench runs rm %s)",
		    rx->o->run_id, rx->o->run_id);
		return;
	}
	sidecar_remove(rx, task_container);
	progress("removed the task container %s and the run's volumes", task_container);
}

/*
 * --model must name a model of models/<name>.yaml, and those files must be sound (a malformed
 * file is an error here, not skipped). Prints what is wrong and returns -1.
 */
int
check_model(const char *name)
{
	_cleanup_diags_ struct sb_diags diags = SB_DIAGS_INIT;
	_cleanup_free_ char *dir = models_dir(), *near = NULL;
	struct sb_error *err = NULL;
	struct models m;
	int r = 0;

	if (models_load(dir, &m, &diags, &err) < 0) {
		cli_fail("%s", sb_error_message(err));
		sb_error_release(&err);
		models_release(&m);
		return -1;
	}
	if (diags.n > 0) {
		sb_diags_print(&diags, stderr);
		cli_fail("the model files in %s have problems (see above)", dir);
		models_release(&m);
		return -1;
	}
	if (models_find(&m, name) == NULL) {
		near = models_closest(&m, name);
		if (near != NULL)
			cli_fail("unknown model '%s': did you mean %s? (the models of %s/)", name,
			    near, dir);
		else
			cli_fail("unknown model '%s': %s/ defines %zu model%s (ssebench models list)",
			    name, dir, m.n, m.n == 1 ? "" : "s");
		r = -1;
	}
	models_release(&m);
	return r;
}

/* Is the image there (the job built it)? */
static int
image_present(const char *image, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;

	sb_argv_pushl(&a, "image", "inspect", "--format", "{{.Id}}", image, NULL);
	if (docker_output(&a, NULL, NULL) != 0)
		return sb_error_set(err, ENOENT, "the image %s is not there (--images-ready: the "
		    "job should have built it)", image);
	return 0;
}

/*
 * Tokens the run used: the ones the model proxy billed the run key for ("source": "proxy",
 * pe->tokens_read) where it kept a log of them; else the agent's own record
 * (archive/dialog.jsonl, the last "complete" entry), which the agent writes, so it is shown
 * as the agent's account ("source": "dialog"), never used for a grade, and a count that is
 * not a whole number from 0 to 10^13 is not taken. null when there is neither.
 */
static json_t *
run_usage(const char *archive, const struct phase_end *pe)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(SB_JSON_FILE_MAX);
	_cleanup_close_ int fd = archive != NULL ? sb_open_dir(archive, NULL) : -1;
	json_auto_t *entries = NULL;
	const json_t *last = NULL, *e, *tok;
	size_t i;

	if (pe->tokens_read)
		return json_pack("{s:I, s:I, s:s}", "tokens_in", (json_int_t)pe->tokens_in,
		    "tokens_out", (json_int_t)pe->tokens_out, "source", "proxy");
	if (fd < 0 || sb_read_file_at(fd, "dialog.jsonl", SB_OPEN_NO_SYMLINKS, &b, NULL) < 0)
		return json_null();
	entries = sb_dialog_entries_since(b.s, b.len, -1);
	json_array_foreach(entries, i, e)
		if (json_is_string(json_object_get(e, "type")) &&
		    strcmp(json_string_value(json_object_get(e, "type")), "complete") == 0)
			last = e;
	tok = json_object_get(last, "total_tokens");
	if (!json_is_integer(json_object_get(tok, "in")) || !json_is_integer(json_object_get(tok, "out")))
		return json_null();
	{
		json_int_t in = json_integer_value(json_object_get(tok, "in"));
		json_int_t out = json_integer_value(json_object_get(tok, "out"));

		if (in < 0 || out < 0 || in > 10000000000000LL || out > 10000000000000LL)
			return json_null();
		return json_pack("{s:I, s:I, s:s}", "tokens_in", in, "tokens_out", out, "source",
		    "dialog");
	}
}

/* One line on what the patch touched (grading_result.patch_scope, docs/grading.md). */
static void
print_scope(FILE *f, const json_t *scope, const json_t *reverted)
{
	static const char *const classes[] = { "source", "test", "build", "harness", "other" };
	const json_t *flags = json_object_get(scope, "flags");
	json_int_t rev = json_integer_value(json_object_get(reverted, "count"));

	if (!json_is_object(scope))
		return;
	fprintf(f, "patch: %lld file(s), +%lld -%lld (",
	    (long long)json_integer_value(json_object_get(scope, "files")),
	    (long long)json_integer_value(json_object_get(scope, "added")),
	    (long long)json_integer_value(json_object_get(scope, "removed")));
	for (size_t i = 0; i < SB_ARRAY_SIZE(classes); i++)
		fprintf(f, "%s%s %lld", i ? ", " : "", classes[i],
		    (long long)json_integer_value(json_object_get(
			json_object_get(json_object_get(scope, "classes"), classes[i]), "files")));
	fprintf(f, ")");
	if (rev > 0)
		fprintf(f, "; %lld protected path(s) graded as pristine", (long long)rev);
	if (json_integer_value(json_object_get(flags, "sanitizer_lines")) > 0)
		fprintf(f, "; %lld added line(s) name the sanitizer",
		    (long long)json_integer_value(json_object_get(flags, "sanitizer_lines")));
	if (json_integer_value(json_object_get(flags, "process_control_lines")) > 0)
		fprintf(f, "; %lld of process control",
		    (long long)json_integer_value(json_object_get(flags, "process_control_lines")));
	if (json_integer_value(json_object_get(flags, "network_lines")) > 0)
		fprintf(f, "; %lld of the network",
		    (long long)json_integer_value(json_object_get(flags, "network_lines")));
	fprintf(f, "\n");
}

/* Delete the run's proxy key if it is still ours; a failure is said, not fatal. */
static void
end_run_key(struct proxy *px)
{
	struct sb_error *err = NULL;

	if (proxy_key_delete(px, &err) < 0) {
		sb_log(SB_LOG_WARN, "%s: the run's key was not deleted; it expires by itself an hour "
				    "after the run's time limit",
		    sb_error_message(err));
		sb_error_release(&err);
	}
}

/*
 * `run --json` of one run: its outcome as one JSON object on one line of stdout (docs/cli.md,
 * "run --json"), the shape a CI job reads: the same words as summary.json.
 */
static void
print_json_result(struct run_opts *o, const json_t *result, const char *status,
    bool scored, bool interrupted, bool forfeit, json_int_t flags_total, const char *run_dir,
    int exit_code)
{
	const json_t *pr = json_object_get(result, "patch_result");
	json_t *j = json_pack("{s:s?, s:s, s:s, s:s?, s:s?, s:b, s:b, s:b, s:I, s:s?, s:i}",
	    "run_id", o->run_id, "task", o->task, "agent", o->agent, "model", o->model, "status",
	    status, "scored", scored, "interrupted", interrupted, "forfeit", forfeit, "flags_total",
	    (json_int_t)flags_total, "results_dir", run_dir, "exit_code", exit_code);
	char *line;

	if (json_is_object(pr))
		json_object_set_new(j, "patch_result", json_deep_copy(pr));
	/* No record: the run ended before it was graded, and stderr said why. */
	if (result == NULL)
		json_object_set_new(j, "error", json_string(exit_code == SB_EXIT_INTERRUPTED
			? "interrupted" : "the run ended early: see stderr"));
	line = sb_json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII);
	printf("%s\n", line);
	free(line);
	json_decref(j);
	o->json_printed = true;
}

static int
do_run(struct run_opts *o)
{
	_cleanup_diags_ struct sb_diags diags = SB_DIAGS_INIT;
	_cleanup_free_ char *dataset_name = NULL, *case_image = NULL;
	_cleanup_free_ char *agent_image = NULL, *run_dir = NULL, *parent = NULL;
	_cleanup_free_ char *secrets_dir = NULL, *secrets = NULL, *ref = NULL, *net = NULL;
	_cleanup_free_ char *mem = NULL, *cpus = NULL, *pids = NULL, *log_path = NULL;
	_cleanup_free_ char *archive = NULL, *started_at = NULL, *container = NULL;
	_cleanup_free_ char *gateway = NULL, *task_image = NULL, *task_container = NULL;
	_cleanup_free_ char *freezer_record = NULL;
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	struct run_ctx rx = { .o = o };
	struct proxy px = { 0 };
	bool uses_model = false;
	double spend = 0.0;
	bool sidecar = strcmp(o->mode, "sidecar") == 0, sidecar_done = false;
	struct agent_info ag = { NULL, NULL, NULL, NULL, 0, false };
	struct sb_dataset *ds = NULL;
	struct sb_task *task = NULL;
	struct sb_error *err = NULL;
	struct images im;
	bool reference, interrupted = false, scored = false, canary = false, net_made = false;
	json_t *flags = NULL, *flag_counts = NULL; /* the answer-seeking scan's (sb/scan.h) */
	json_int_t flags_total = 0;
	enum sb_iso_outcome outcome = SB_ISO_UNSCORED;
	struct phase_end pe = { .run_fd = -1 };
	struct run_disk disk = { 0 };
	bool disk_made = false;
	uint64_t archive_left = 0;
	char digest[65];
	int rc = SB_EXIT_FAILURE, code;
	json_t *result = NULL;
	const char *project = cli_setting("COMPOSE_PROJECT_NAME", "ssebench");
	const char *slash;

	double run_t0 = progress_clock();

	/* --- 1. everything the user gave, before anything is built --- */
	reference = strcmp(o->agent, "reference") == 0;
	if (agent_load(cli_home(), o->agent, &ag, &err) < 0)
		goto fail;
	if (reference) {
		if (o->model != NULL && strcmp(o->model, "none") != 0)
			sb_log(SB_LOG_WARN, "the reference agent uses no model; ignoring --model %s",
			    o->model);
		free(o->model);
		o->model = sb_xstrdup("none");
	} else if (o->model == NULL && (ag.no_model || strcmp(o->agent, "dummy") == 0)) {
		o->model = sb_xstrdup("none");
	} else if (o->model == NULL) {
		rc = cli_fail("--model is required for the agent '%s'", o->agent);
		goto out;
	}
	if (!model_name_valid(o->model)) {
		rc = cli_fail("'%s' is not a model name", o->model);
		goto out;
	}
	/* A model-backed run: the model must be one of ours, and the proxy must be there. */
	uses_model = strcmp(o->model, "none") != 0;
	if (uses_model && (check_model(o->model) < 0 || proxy_configure(&px, &err) < 0 ||
			      proxy_check(&px, &err) < 0)) {
		if (err == NULL)
			goto out;
		goto fail;
	}
	if (sb_dataset_load(o->local, &ds, &diags, &err) < 0)
		goto fail;
	for (size_t i = 0; i < ds->n; i++)
		if (strcmp(ds->tasks[i]->name, o->task) == 0)
			task = ds->tasks[i];
	if (task == NULL) {
		rc = cli_no_task(ds, o->task);
		goto out;
	}
	if (task->problems > 0) {
		for (size_t i = 0; i < diags.n; i++)
			if (strncmp(diags.v[i].file, task->display, strlen(task->display)) == 0)
				sb_diag_print(&diags.v[i], stderr);
		rc = cli_fail("the task '%s' is not valid (see above)", o->task);
		goto out;
	}
	if (reference && task->config->files.patch.s == NULL) {
		rc = cli_fail("the task '%s' has no files.patch for the reference agent", o->task);
		goto out;
	}
	if (o->run_id == NULL)
		o->run_id = run_id_new();
	parent = sb_xasprintf("%s/%s/%s/%s", results_root(), o->task, o->model, o->agent);
	run_dir = sb_xasprintf("%s/%s", parent, o->run_id);
	{
		struct stat st;

		if (lstat(run_dir, &st) == 0) {
			rc = cli_fail("the run directory %s exists already; pick another --run-id",
			    run_dir);
			goto out;
		}
	}
	if ((rc = cli_need_engine()) != 0)
		goto out;
	if (o->runtime != NULL && check_runtime(o->runtime, &err) < 0)
		goto fail;
	mem = run_limit(SB_RUN_LIMIT_MEMORY);
	cpus = run_limit(SB_RUN_LIMIT_CPUS);
	pids = run_limit(SB_RUN_LIMIT_PIDS);

	/* --- 2. images --- */
	slash = strrchr(ds->path, '/');
	dataset_name = sb_xstrdup(slash != NULL ? slash + 1 : ds->path);
	case_image = image_case(dataset_name, task->name);
	if (sidecar) {
		task_image = image_tool_sidecar(task->name);
		agent_image = image_agent_sidecar(&ag);
	} else {
		task_image = image_tool(task->name);
		agent_image = image_agent(&ag, task->name);
	}
	if (sb_mkdir_p(parent, 0755, &err) < 0)
		goto fail;
	log_path = sb_xasprintf("%s/.build-%s.log", parent, o->run_id);
	im.home = cli_home();
	im.quiet = false;
	im.log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
	progress("run %s: task %s, agent %s, model %s, difficulty %u, egress %s, mode %s",
	    o->run_id, o->task, o->agent, o->model, o->difficulty, o->egress, o->mode);
	if (o->images_ready) {
		/* The job built them (job.c): each run only checks they are there. */
		if (task_files_digest(task->display, digest, &err) < 0 ||
		    image_present(agent_image, &err) < 0)
			goto fail;
	} else if (task_files_digest(task->display, digest, &err) < 0 ||
	    images_ensure_base(&im, task->base, &err) < 0 ||
	    images_build_case(&im, ds->path, dataset_name, task, digest, ds->canary, &err) < 0 ||
	    images_build_runtime(&im, &err) < 0 ||
	    (sidecar ? images_build_sidecar_case(&im, task, case_image, &err)
		     : images_build_tool(&im, task, case_image, &err)) < 0) {
		sb_error_prefix(&err, "build log: %s", log_path);
		goto fail;
	}
	/* Sandbox: the agent on this task's tool image; sidecar: on the shared runtime. */
	if (sidecar && !o->images_ready) {
		_cleanup_free_ char *rt = image_sidecar_agent();

		if (images_build_sidecar_agent(&im, &err) < 0 ||
		    images_build_agent(&im, &ag, rt, agent_image, &err) < 0) {
			sb_error_prefix(&err, "build log: %s", log_path);
			goto fail;
		}
	} else if (!o->images_ready &&
		   images_build_agent(&im, &ag, task_image, agent_image, &err) < 0) {
		sb_error_prefix(&err, "build log: %s", log_path);
		goto fail;
	}
	/*
	 * The images the run's containers start from carry no ssebench.* label but those the
	 * builds put on: a container inherits its image's labels wherever `run` sets none, and
	 * `runs` finds a run's containers by them. The task's Dockerfile is checked for LABEL
	 * too (dataset validate), but quoting, ONBUILD in a base and a base image of another
	 * task can all slip a label past a reading of the file; the built image cannot.
	 */
	{
		/* What images.c and scripts/docker-up put on, and nothing else. */
		static const char *const ours[] = { "ssebench.task-files", "ssebench.task-id",
			"ssebench.agent", "ssebench.rootfs.", NULL };
		const char *check[] = { agent_image, sidecar ? task_image : NULL };

		for (size_t i = 0; i < SB_ARRAY_SIZE(check); i++) {
			_cleanup_free_ char *key = NULL;
			int r;

			if (check[i] == NULL)
				continue;
			r = docker_image_foreign_labels(check[i], ours, &key, &err);
			if (r < 0)
				goto fail;
			if (r > 0) {
				sb_error_set(&err, EINVAL, "the image %s carries the label '%s': the "
				    "ssebench.* labels are the harness's, and a task may not set them "
				    "(check the task's Dockerfile and its base)", check[i], key);
				goto fail;
			}
		}
	}
	if (o->images_only) {
		/* A job's image build (job.c): the images are there; no run. */
		(void)unlink(log_path);
		progress("images of %s and %s ready", o->task, o->agent);
		rc = SB_EXIT_OK;
		goto out;
	}
	/*
	 * From here the run holds things that must not outlive it (its disks, network, cgroup,
	 * proxy key, secrets): a first Ctrl-C is noted and the run winds down through `out`,
	 * with its result written if the container ran; only a second one exits at once.
	 */
	sb_sig_set_deferred(SB_SIG_DEFER_FIRST);
	/*
	 * The run's own file systems: everything the run can write is on them (disk.h), so the
	 * run cannot fill the host's disk. Disks that runs left behind (a CLI killed, a reboot)
	 * are swept first. Before the network and the run directory: a host without room for
	 * them refuses the run with nothing made.
	 */
	{
		_cleanup_free_ char *droot = sb_xasprintf("%s/.disks", results_root());
		_cleanup_free_ char *size = run_limit(SB_RUN_LIMIT_DISK);
		uint64_t bytes = 0;

		disk_sweep(droot);
		if (sb_parse_u64(size, 1, UINT64_MAX, &bytes, &err) < 0 ||
		    disk_create(&disk, droot, o->run_id, bytes, &err) < 0)
			goto fail;
		disk_made = true;
		progress("run %s: its own file systems, %s bytes each (SSEBENCH_DISK)", o->run_id, size);
	}
	/* The run's own network: nothing but its containers and the proxy on it. */
	net = net_run_name(project, o->run_id);
	if (net_ensure_run(net, strcmp(o->egress, "open") != 0, o->run_id, &err) < 0)
		goto fail;
	net_made = true;
	/* Another runtime (--runtime) keeps its own cgroups: held by signals there. */
	rx.agent_freezer = o->runtime != NULL ? "signals" : agent_cgroup_make(o->run_id, &rx.agent_cgroup);
	progress("run %s: the agent is held still during checks on hidden material by %s",
	    o->run_id, strcmp(rx.agent_freezer, "signals") == 0 ? "signals (no freezer cgroup here)"
	    : rx.agent_freezer);
	if (uses_model && proxy_attach(&px, net, &err) < 0)
		goto fail;
	if (strcmp(o->egress, "open") != 0) {
		gateway = net_gateway(net);
		if (net_ensure_canary(&err) == 0) {
			canary = true;
		} else {
			sb_log(SB_LOG_WARN, "%s: without it this run cannot show that it has no "
					    "route out, and will not be scored", sb_error_message(err));
			sb_error_release(&err);
		}
	}

	/* --- 3. the run directory, secrets, the reference patch --- */
	if (mkdir(run_dir, 0755) < 0) {
		sb_error_errno(&err, errno, "mkdir '%s'", run_dir);
		goto fail;
	}
	archive = sb_xasprintf("%s/archive", run_dir);
	update_latest(parent, o->run_id);
	{
		_cleanup_free_ char *moved = sb_xasprintf("%s/build.log", run_dir);

		(void)rename(log_path, moved);
	}
	/* Secrets travel in a root-only file the entrypoint reads, never on a command line or
	 * in the container's environment (docker inspect shows that). */
	secrets_dir = sb_xasprintf("%s/.secrets-%s", parent, o->run_id);
	if (mkdir(secrets_dir, 0700) < 0) {
		sb_error_errno(&err, errno, "mkdir '%s'", secrets_dir);
		goto fail;
	}
	{
		unsigned char tok[16];
		char hex[33];

		if (sb_random_bytes(tok, sizeof(tok), &err) < 0)
			goto fail;
		for (int i = 0; i < 16; i++)
			snprintf(hex + 2 * i, 3, "%02x", tok[i]);
		secrets = sb_xasprintf("%s/run.env", secrets_dir);
		/*
		 * The run's own proxy key, for the model alone (proxy.h), made as late as it can
		 * be. From here a Ctrl-C is ours to handle, so that the key is deleted.
		 */
		if (uses_model && proxy_key_new(&px, o->model, o->run_id, o->timeout, &err) < 0)
			goto fail;
		{
			_cleanup_free_ char *text = uses_model
			    ? sb_xasprintf("SSE_DAEMON_TOKEN=%s\nSSE_API_KEY=%s\nSSE_BASE_URL=%s\n"
					   "SSE_MODEL_NAME=%s\n",
				  hex, px.run_key, px.agent_url, o->model)
			    : sb_xasprintf("SSE_DAEMON_TOKEN=%s\n", hex);

			if (write_text(secrets, text, 0600, &err) < 0)
				goto fail;
		}
	}
	{
		json_auto_t *prof = seccomp_profile_json();
		_cleanup_free_ char *path = sb_xasprintf("%s/seccomp.json", secrets_dir);
		_cleanup_close_ int sfd = sb_open_dir(secrets_dir, &err);

		if (sfd < 0 || sb_json_write_atomic_at(sfd, "seccomp.json", prof, 0600, &err) < 0)
			goto fail;
		rx.seccomp = realpath(path, NULL);
		if (rx.seccomp == NULL) {
			sb_error_errno(&err, errno, "resolve '%s'", path);
			goto fail;
		}
	}
	if (reference) {
		_cleanup_free_ char *inside =
		    sb_xasprintf("/ssebench/%s", task->config->files.patch.s);

		ref = sb_xasprintf("%s/reference.diff", secrets_dir);
		if (copy_from_image(case_image, inside, ref, &err) < 0)
			goto fail;
		/* Read-only for everyone: the reference agent runs as model. */
		(void)chmod(secrets_dir, 0711);
		(void)chmod(ref, 0644);
	}

	/* --- 4. the container(s) --- */
	if (sb_sig_interrupted() != 0) {
		(void)cli_fail("interrupted before the run started");
		rc = SB_EXIT_INTERRUPTED;
		goto out;
	}
	rx.o = o;
	rx.runner_uid = runner_uid_new();
	rx.net = net;
	rx.gateway = gateway;
	rx.canary = canary;
	rx.reference = reference;
	rx.proxy_key = uses_model;
	rx.mem = mem;
	rx.cpus = cpus;
	rx.pids = pids;
	rx.run_dir = realpath(run_dir, NULL);
	rx.archive = disk_path(&disk, DISK_ARCHIVE);
	rx.secrets = realpath(secrets, NULL);
	rx.ref = ref != NULL ? realpath(ref, NULL) : NULL;
	rx.disk = &disk;
	rx.source = task->config->source.s;
	if (rx.run_dir == NULL || rx.secrets == NULL || (ref != NULL && rx.ref == NULL)) {
		sb_error_errno(&err, errno, "resolve the paths of %s", run_dir);
		goto fail;
	}
	/* The agent's tree and home, over the run's file system (filled from the image). */
	rx.vol_source = sb_xasprintf("ssebench-%s-source", o->run_id);
	rx.vol_home = sb_xasprintf("ssebench-%s-home", o->run_id);
	if (disk_volume(&rx, rx.vol_source, DISK_SRC, &err) < 0 ||
	    disk_volume(&rx, rx.vol_home, DISK_HOME, &err) < 0)
		goto fail;
	container = sb_xasprintf("ssebench-%s", o->run_id);
	if (sidecar) {
		task_container = sb_xasprintf("ssebench-%s-task", o->run_id);
		if (sidecar_start_task(&rx, task, task_image, task_container, &err) < 0)
			goto fail;
	}
	/* --sig-proxy=false: Ctrl-C is ours to handle (docker stop), not the client's. */
	sb_argv_pushl(&a, "run", "--sig-proxy=false", "--name", container, "--hostname",
	    sidecar ? "agent" : "sandbox", NULL);
	if (!o->keep)
		sb_argv_push(&a, "--rm");
	push_run_args(&a, &rx, sidecar ? "agent" : NULL);
	if (sidecar) {
		/* The tree and the sockets come from the task container's volumes. */
		sb_argv_push(&a, "-e");
		sb_argv_pushf(&a, "SSE_SOURCE=%s", task->config->source.s);
		push_sidecar_volumes(&a, &rx, task->config->source.s);
	}
	if (rx.ref != NULL) {
		sb_argv_push(&a, "--mount");
		sb_argv_pushf(&a, "type=bind,source=%s,target=/reference/patch.diff,readonly",
		    rx.ref);
	}
	sb_argv_push(&a, agent_image);
	{
		_cleanup_argv_ struct sb_argv argv = SB_ARGV_INIT;
		_cleanup_argv_ struct sb_argv env = SB_ARGV_INIT;
		struct sb_cmd cmd = SB_CMD_INIT;
		time_t now = time(NULL);
		struct tm tm;
		char ts[32];

		gmtime_r(&now, &tm);
		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
		started_at = sb_xstrdup(ts);
		sb_argv_push(&argv, docker_path());
		sb_argv_pushv(&argv, (const char *const *)a.v);
		cmd.path = argv.v[0];
		cmd.argv = argv.v;
		docker_env(&env, 0);
		cmd.envp = env.v;
		cmd.stdout_fd = SB_CMD_INHERIT;
		cmd.stderr_fd = SB_CMD_INHERIT;
		/* Its own process group: the terminal's Ctrl-C reaches us, not the client. */
		cmd.flags = SB_CMD_NEW_PGRP;
		progress(sidecar ? "starting the agent container %s (agent phase, then grading)"
				 : "starting the container %s (agent phase, then grading)",
		    container);
		/* While the container runs, a second Ctrl-C kills it (wait_container), not us. */
		sb_sig_set_deferred(SB_SIG_DEFER_ALL);
		if (sb_cmd_start(&cmd, &err) < 0) {
			sb_sig_set_deferred(SB_SIG_DEFER_FIRST);
			goto fail;
		}
		pe.run_fd = sb_open_dir(run_dir, NULL);
		pe.px = uses_model ? &px : NULL;
		pe.net = net;
		pe.members_ok[0] = container;
		pe.members_ok[1] = task_container != NULL ? task_container : px.container;
		pe.members_ok[2] = task_container != NULL ? px.container : NULL;
		code = wait_container(&cmd, container, pe.run_fd >= 0 ? &pe : NULL, &interrupted);
		sb_sig_set_deferred(SB_SIG_DEFER_FIRST);
		progress("the %scontainer exited with status %d", sidecar ? "agent " : "", code);
	}
	if (sidecar)
		sidecar_finish(&rx, task_container, o->keep);
	sidecar_done = true;
	/* What the agent left in its archive comes home sanitised (disk.h). */
	{
		uint64_t left = 0;

		if (disk_copy_archive(&disk, archive, &left, &err) < 0) {
			sb_log(SB_LOG_WARN, "the archive: %s", sb_error_message(err));
			sb_error_release(&err);
		} else if (left > 0) {
			progress("the archive: %llu entr%s left behind (links, special files, second "
				 "names, too deep or too many)",
			    (unsigned long long)left, left == 1 ? "y" : "ies");
		}
		archive_left = left;
	}
	/* Kept: the file system stays while the container does (runs stop leaves it, runs
	 * remove takes both, and the next run sweeps a disk whose containers are gone). */
	if (!o->keep || !container_exists(container)) {
		disk_volumes_remove(&rx);
		disk_release(&disk);
		disk_made = false;
	}
	/* A kept run keeps its network (its daemon still serves); runs remove takes it. */
	if (!o->keep && net_made) {
		net_remove(net);
		net_made = false;
	}

	/* The run key has done its work: what it spent, then it goes (proxy.h). Usually that
	 * was done when the agent phase ended; a run that ended early still has its key. */
	if (px.minted && (!pe.spend_read || !pe.tokens_read)) {
		pe.px = &px;
		read_key_usage(&pe);
	}
	if (pe.spend_read)
		spend = pe.spend;
	end_run_key(&px);

	/* --- 5. the result --- */
	{
		_cleanup_close_ int rfd = sb_open_dir(run_dir, &err);
		json_t *cfg, *summary;

		if (rfd < 0)
			goto fail;
		{
			_cleanup_free_ char *foreign = pe.foreign != NULL
			    ? sb_xasprintf("the run's network %s held another container: %s", net,
				  pe.foreign)
			    : NULL;
			json_t *iso = NULL;

			if (sb_json_load_file_at(rfd, "result.json", SB_JSON_FILE_MAX, &result, NULL) < 0)
				result = NULL;
			if (sb_json_load_file_at(rfd, "isolation.json", SB_JSON_FILE_MAX, &iso, NULL) < 0)
				iso = NULL;
			/*
			 * A Ctrl-C after the container ended but before this record is written
			 * still interrupts the run: the user stopped it before it was over.
			 */
			if (sb_sig_interrupt_count() > 0)
				interrupted = true;
			result = run_outcome(result, iso, o->egress, interrupted, foreign, &outcome);
		}
		{
			struct results_check rc2 = { 0, 0, 0 };

			check_results_dir(rfd, 1, &rc2);
			if (rc2.removed + rc2.fixed > 0)
				sb_log(SB_LOG_WARN, "the run directory held %llu entries it must not "
						    "(removed) and %llu directories with loose modes (fixed)",
				    (unsigned long long)rc2.removed, (unsigned long long)rc2.fixed);
			json_object_set_new(result, "results_check",
			    json_pack("{s:I, s:I, s:I}", "archive_left_behind", (json_int_t)archive_left,
				"removed", (json_int_t)rc2.removed, "fixed", (json_int_t)rc2.fixed));
		}
		json_object_set_new(result, "network",
		    json_pack("{s:s, s:o, s:b, s:b}", "name", net, "foreign",
			sb_json_string_or_null(pe.foreign), "checked", pe.seen,
			"proxy_key_revoked_before_grading", pe.key_revoked));
		scored = outcome != SB_ISO_UNSCORED;
		/* In sidecar mode only the task container's processes of the agent (its bash
		 * calls) are in the cgroup; the agent's own container is apart, not frozen. */
		if (rx.agent_freezer == NULL || strcmp(rx.agent_freezer, "signals") == 0)
			freezer_record = sb_xstrdup("signals");
		else
			freezer_record = sb_xasprintf("%s%s", rx.agent_freezer, sidecar ? "-task-container" : "");
		/* Sidecar mode has its own two layers: no tool layer (docs/upstream.md, "Result
		 * files": tool_layer). */
		cfg = json_pack("{s:s, s:s, s:s, s:I, s:i, s:o, s:s, s:b, s:[], s:o, s:I, s:s}",
		    "agent", o->agent, "model", o->model, "mode", o->mode, "timeout",
		    (json_int_t)o->timeout, "difficulty", (int)o->difficulty, "tool_layer",
		    sidecar ? json_null() : json_string("sandbox"), "egress", o->egress,
		    "reference_run", reference, "plugins", "runtime",
		    sb_json_string_or_null(o->runtime), "runner_uid", (json_int_t)rx.runner_uid,
		    "agent_freezer", freezer_record);
		json_object_set(result, "config", cfg);
		if (sb_json_write_atomic_at(rfd, "result.json", result, 0644, &err) < 0)
			goto fail;
		summary = json_pack("{s:o, s:O, s:O, s:O, s:O, s:b, s:f, s:s, s:s, s:[], s:{s:s, s:s, s:s}}",
		    "task", sb_task_config_to_json(task->config), "config", cfg, "patch_result",
		    json_object_get(result, "patch_result"), "runtime_result",
		    json_object_get(result, "runtime_result") ? json_object_get(result, "runtime_result")
							       : json_null(),
		    "isolation", json_object_get(result, "isolation"), "scored", scored,
		    "spend", spend, "run_id", o->run_id, "started_at", started_at, "plugin_results",
		    "images", "case", case_image, "agent", agent_image, "case_task_files", digest);
		json_object_set_new(json_object_get(summary, "images"), "task",
		    json_string(task_image));
		json_object_set(summary, "network", json_object_get(result, "network"));
		{
			char ts[32];
			time_t now = time(NULL);
			struct tm tm;

			gmtime_r(&now, &tm);
			strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
			json_object_set_new(summary, "finished_at", json_string(ts));
			json_object_set_new(summary, "duration_s",
			    json_real(progress_clock() - run_t0));
			json_object_set_new(summary, "usage", run_usage(archive, &pe));
			flags = run_flags(archive, rfd, task, ds->canary, &flags_total, &flag_counts);
			json_object_set(summary, "flags", flags);
			json_object_set_new(summary, "flags_total", json_integer(flags_total));
			json_object_set_new(summary, "flag_counts", flag_counts);
			flag_counts = NULL;
			if (o->job_id != NULL)
				json_object_set_new(summary, "job", json_pack("{s:s, s:I}", "id",
				    o->job_id, "attempt", (json_int_t)(o->attempt ? o->attempt : 1)));
		}
		json_object_set(summary, "results_check", json_object_get(result, "results_check"));
		/* What grading found about the patch (docs/grading.md), without the oracle's
		 * per-object facts, which stay in result.json. */
		{
			const json_t *gr = json_object_get(result, "grading_result");

			json_object_set_new(summary, "grading",
			    json_is_object(gr)
				? json_pack("{s:O?, s:O?, s:O?, s:O?}", "patch_scope",
				      json_object_get(gr, "patch_scope"), "reverted_paths",
				      json_object_get(gr, "reverted_paths"), "oracle_passed",
				      json_object_get(gr, "oracle_passed"), "tests",
				      json_object_get(gr, "tests"))
				: json_null());
		}
		json_decref(cfg);
		if (sb_json_write_atomic_at(rfd, "summary.json", summary, 0644, &err) < 0) {
			json_decref(summary);
			goto fail;
		}
		json_decref(summary);
		/* The reference patch, for the web UI and people, once the run is over. */
		{
			_cleanup_free_ char *tdir = sb_xasprintf("%s/%s", ds->path, task->name);
			_cleanup_free_ char *target =
			    sb_xasprintf("/ssebench/%s", task->config->files.patch.s);
			_cleanup_close_ int tfd = sb_open_dir(tdir, NULL);
			_cleanup_free_ char *src = task->config->files.patch.s && tfd >= 0
				? sb_task_context_source(task, tfd, target)
				: NULL;
			_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(SB_JSON_FILE_MAX);

			if (src != NULL && sb_read_file_at(tfd, src, 0, &b, NULL) == 0)
				(void)sb_write_file_atomic_at(rfd, "reference.patch", b.s, b.len, 0644,
				    NULL);
		}
	}
	{
		json_t *pr = json_object_get(result, "patch_result");
		const char *status = json_string_value(json_object_get(pr, "status"));
		const char *msg = json_string_value(json_object_get(pr, "error_msg"));

		/* With --json, stdout gets one JSON object and the lines for people go to stderr. */
		FILE *h = o->json_events ? stderr : stdout;

		/* The record came out of the container: every string in it is escaped. */
		fprintf(h, "%s: %s", o->run_id, cli_safe(status ? status : "?"));
		if (json_is_boolean(json_object_get(pr, "build_success")))
			fprintf(h, " (build %s", json_is_true(json_object_get(pr, "build_success")) ? "ok"
												 : "failed");
		if (json_is_integer(json_object_get(pr, "pov_total")))
			fprintf(h, ", PoCs %lld/%lld fixed",
			    (long long)json_integer_value(json_object_get(pr, "pov_passed")),
			    (long long)json_integer_value(json_object_get(pr, "pov_total")));
		if (json_is_boolean(json_object_get(pr, "func_test_success")))
			fprintf(h, ", functional tests %s",
			    json_is_true(json_object_get(pr, "func_test_success")) ? "ok" : "failed");
		if (json_is_boolean(json_object_get(pr, "intent_test_success")))
			fprintf(h, ", hidden tests %s",
			    json_is_true(json_object_get(pr, "intent_test_success")) ? "ok" : "failed");
		if (json_is_boolean(json_object_get(pr, "build_success")))
			fprintf(h, ")");
		fprintf(h, "\n");
		if (msg != NULL)
			fprintf(h, "%s: %s\n", cli_safe(status ? status : "?"), cli_safe(msg));
		print_scope(h, json_object_get(json_object_get(result, "grading_result"), "patch_scope"),
		    json_object_get(json_object_get(result, "grading_result"), "reverted_paths"));
		run_print_flags(h, flags, flags_total);
		if (!scored && !interrupted)
			fprintf(h, "NOT SCORED: this run could not establish its isolation; see "
			       "isolation.json\n");
		if (outcome == SB_ISO_FORFEIT)
			fprintf(h, "FORFEIT: the isolation broke during the agent phase; this run "
			       "counts as not passed (see isolation.json)\n");
		fprintf(h, "results: %s\n", cli_safe(run_dir));
		/* An unscored run is the harness's failure, not the agent's: never exit 0. */
		rc = interrupted ? SB_EXIT_INTERRUPTED
			: !scored ? SB_EXIT_FAILURE
			: (o->require_pass && (status == NULL || strcmp(status, "passed") != 0))
			? SB_EXIT_FAILURE
			: SB_EXIT_OK;
		if (o->json_events)
			print_json_result(o, result, status, scored, interrupted,
			    outcome == SB_ISO_FORFEIT, flags_total, run_dir, rc);
	}
	goto out;
fail:
	rc = cli_fail("%s", sb_error_message(err));
	sb_error_release(&err);
out:
	end_run_key(&px);
	proxy_release(&px);
	/* A sidecar run that failed before its agent container ended leaves nothing behind. */
	if (sidecar && !sidecar_done && (rx.vol_source != NULL || task_container != NULL))
		sidecar_finish(&rx, task_container, o->keep);
	if (net_made && !o->keep)
		net_remove(net);
	/* Failed before the container ran, or not kept: the run's file system goes. */
	if (disk_made && (!o->keep || !sidecar_done)) {
		disk_volumes_remove(&rx);
		disk_release(&disk);
	}
	/* A kept container keeps its cgroup (an empty directory once its agent is gone). */
	if (!o->keep || !sidecar_done)
		agent_cgroup_remove(rx.agent_cgroup);
	if (pe.run_fd >= 0)
		close(pe.run_fd);
	free(pe.foreign);
	run_ctx_release(&rx);
	if (secrets_dir != NULL) {
		if (secrets != NULL)
			(void)unlink(secrets);
		if (ref != NULL)
			(void)unlink(ref);
		{
			_cleanup_free_ char *prof = sb_xasprintf("%s/seccomp.json", secrets_dir);

			(void)unlink(prof);
		}
		(void)rmdir(secrets_dir);
	}
	json_decref(result);
	json_decref(flags);
	json_decref(flag_counts);
	agent_info_release(&ag);
	sb_dataset_free(ds);
	sb_sig_set_deferred(SB_SIG_DEFER_NONE);
	return rc;
}

static void
run_opts_release(struct run_opts *o)
{
	free(o->local);
	free(o->task);
	free(o->agent);
	free(o->model);
	free(o->run_id);
	free(o->mode);
	free(o->egress);
	free(o->runtime);
	free(o->config);
	free(o->job_id);
	sb_argv_release(&o->tasks);
	sb_argv_release(&o->task_patterns);
	sb_argv_release(&o->agents);
	sb_argv_release(&o->models);
	memset(o, 0, sizeof(*o));
}

/* The options into *o (released by the caller in every case); -1 with *ret_rc on an error. */
static int
run_opts_parse(const struct cli_command *cmd, int argc, char **argv, struct run_opts *o,
    int *ret_rc)
{
	static const struct option longopts[] = {
		{ "local", required_argument, NULL, 'l' },
		{ "task", required_argument, NULL, 't' },
		{ "agent", required_argument, NULL, 'a' },
		{ "model", required_argument, NULL, 'm' },
		{ "difficulty", required_argument, NULL, 'd' },
		{ "egress", required_argument, NULL, 'e' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "run-id", required_argument, NULL, 'r' },
		{ "mode", required_argument, NULL, 'M' },
		{ "keep-container", no_argument, NULL, 'k' },
		{ "require-pass", no_argument, NULL, 'p' },
		{ "runtime", required_argument, NULL, 'R' },
		{ "tasks", required_argument, NULL, 'P' },
		{ "all", no_argument, NULL, 'A' },
		{ "attempts", required_argument, NULL, 'K' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "config", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'J' },
		/* Given by a job to the runs it starts (job.c), not by people. */
		{ "job", required_argument, NULL, 1001 },
		{ "attempt", required_argument, NULL, 1002 },
		{ "images-only", no_argument, NULL, 1003 },
		{ "images-ready", no_argument, NULL, 1004 },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool runtime_flag = false;
	uint64_t n;
	int c, rc = 0;

	/* Filled in place: whatever is set when an error returns is the caller's to free. */
	memset(o, 0, sizeof(*o));
	o->difficulty = 2;
	o->timeout = SB_RUN_TIMEOUT_DEFAULT_S;
	o->egress = sb_xstrdup(cli_setting("SSEBENCH_EGRESS", "restricted"));
	o->mode = sb_xstrdup("sandbox");
	{
		const char *rt = cli_setting("SSEBENCH_RUNTIME", NULL);

		o->runtime = rt != NULL && *rt != '\0' ? sb_xstrdup(rt) : NULL;
	}
	while ((c = cli_getopt(cmd, argc, argv, "+h", longopts, &rc)) != -1) {
		switch (c) {
		case -2:
			return *ret_rc = rc, -1;
		case 'l': free(o->local); o->local = sb_xstrdup(optarg); break;
		case 't':
			/* One way to pick tasks everywhere: an id, or a pattern (*, ?, [...]). */
			sb_argv_push(strpbrk(optarg, "*?[") != NULL ? &o->task_patterns : &o->tasks,
			    optarg);
			break;
		case 'P': sb_argv_push(&o->task_patterns, optarg); break;
		case 'A': o->all = true; break;
		case 'a': sb_argv_push(&o->agents, optarg); break;
		case 'm': sb_argv_push(&o->models, optarg); break;
		case 'r': free(o->run_id); o->run_id = sb_xstrdup(optarg); break;
		case 'M': free(o->mode); o->mode = sb_xstrdup(optarg); o->mode_set = true; break;
		case 'e': free(o->egress); o->egress = sb_xstrdup(optarg); o->egress_set = true; break;
		case 'c': free(o->config); o->config = sb_xstrdup(optarg); break;
		case 'J': o->json_events = true; break;
		case 1001: free(o->job_id); o->job_id = sb_xstrdup(optarg); break;
		case 1003: o->images_only = true; break;
		case 1004: o->images_ready = true; break;
		case 'K':
			if (sb_parse_u64(optarg, 1, SB_JOB_ATTEMPTS_MAX, &n, NULL) < 0)
				return *ret_rc = cli_usage_error(cmd, "--attempts must be a number, 1 to %d",
					    SB_JOB_ATTEMPTS_MAX);
			o->attempts = (unsigned)n;
			break;
		case 'j':
			if (sb_parse_u64(optarg, 1, SB_JOB_PARALLEL_MAX, &n, NULL) < 0)
				return *ret_rc = cli_usage_error(cmd, "--jobs must be a number, 1 to %d",
					    SB_JOB_PARALLEL_MAX);
			o->jobs = (unsigned)n;
			break;
		case 1002:
			if (sb_parse_u64(optarg, 1, SB_JOB_ATTEMPTS_MAX, &n, NULL) < 0)
				return *ret_rc = cli_usage_error(cmd, "--attempt must be a number, 1 to %d",
					    SB_JOB_ATTEMPTS_MAX);
			o->attempt = (unsigned)n;
			break;
		case 'R': free(o->runtime); o->runtime = sb_xstrdup(optarg); runtime_flag = true; break;
		case 'k': o->keep = true; break;
		case 'p': o->require_pass = true; break;
		case 'd':
			if (sb_parse_u64(optarg, 0, 4, &n, NULL) < 0)
				return *ret_rc = cli_usage_error(cmd, "--difficulty must be 0, 1, 2, 3 or 4");
			o->difficulty = (unsigned)n;
			o->difficulty_set = true;
			break;
		case 'T':
			if (sb_parse_u64(optarg, 1, SB_RUN_TIMEOUT_MAX_S, &n, NULL) < 0)
				return *ret_rc = cli_usage_error(cmd,
				    "--timeout must be a number of seconds, 1 to %d",
				    SB_RUN_TIMEOUT_MAX_S);
			o->timeout = n;
			o->timeout_set = true;
			break;
		default:
			break;
		}
	}
	if (optind < argc)
		return *ret_rc = cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	/* One task, one agent, at most one model and nothing of a job's: one run, as ever. */
	if (o->tasks.n == 1 && o->agents.n == 1 && o->models.n <= 1 && o->task_patterns.n == 0 &&
	    !o->all && o->attempts == 0 && o->jobs == 0 && o->config == NULL) {
		o->task = sb_xstrdup(o->tasks.v[0]);
		o->agent = sb_xstrdup(o->agents.v[0]);
		o->model = o->models.n == 1 ? sb_xstrdup(o->models.v[0]) : NULL;
	} else if (o->job_id != NULL || o->images_only || o->images_ready || o->run_id != NULL ||
		   o->keep || o->require_pass) {
		return *ret_rc = cli_usage_error(cmd, "--run-id, --keep-container and --require-pass "
						      "are for one run, not a job");
	} else if (o->config == NULL && o->agents.n == 0) {
		return *ret_rc = cli_usage_error(cmd, "--agent is required (or --config)");
	} else if (o->config == NULL && o->tasks.n == 0 && o->task_patterns.n == 0 && !o->all) {
		return *ret_rc = cli_usage_error(cmd, "--task, --tasks or --all is required (or --config)");
	}
	if (o->task == NULL && o->agents.n == 0 && o->config == NULL)
		return *ret_rc = cli_usage_error(cmd, "--task and --agent are required");
	/* Name where a bad value came from: a flag the user did not type is a setting. */
	if (strcmp(o->egress, "restricted") != 0 && strcmp(o->egress, "open") != 0)
		return *ret_rc = o->egress_set
		    ? cli_usage_error(cmd, "--egress must be restricted or open")
		    : cli_usage_error(cmd, "SSEBENCH_EGRESS (%s) must be restricted or open",
			  getenv("SSEBENCH_EGRESS") != NULL ? "environment" : ".env");
	if (o->run_id != NULL && !sb_run_id_valid(o->run_id))
		return *ret_rc = cli_usage_error(cmd, "--run-id: '%s' is not a run id "
						 "([A-Za-z0-9][A-Za-z0-9_.-]*, at most 64, not 'latest')",
		    o->run_id);
	if (strcmp(o->mode, "sandbox") != 0 && strcmp(o->mode, "sidecar") != 0)
		return *ret_rc = cli_usage_error(cmd, "--mode must be sandbox or sidecar");
	if (o->runtime != NULL && !runtime_name_valid(o->runtime))
		return *ret_rc = cli_usage_error(cmd, "%s must be the name of a container runtime "
						 "([A-Za-z0-9][A-Za-z0-9._-]*), such as runsc",
		    runtime_flag ? "--runtime" : "SSEBENCH_RUNTIME");
	if (strcmp(o->mode, "sidecar") == 0)
		sb_log(SB_LOG_WARN, "sidecar mode is experimental: the agent container has no "
				    "toolchain for the project (docs/sidecar.md)");
	if (strcmp(o->mode, "sidecar") == 0 && o->difficulty <= 1)
		sb_log(SB_LOG_WARN, "in sidecar mode the agent's own container is not held still "
				    "while run_poc or intent_test runs: at difficulty %u prefer sandbox "
				    "mode (docs/sidecar.md)", o->difficulty);
	if (o->local == NULL)
		o->local = cli_default_dataset();
	return 0;
}

int
cmd_run(const struct cli_command *cmd, int argc, char **argv)
{
	struct run_opts o;
	int rc;

	if (run_opts_parse(cmd, argc, argv, &o, &rc) == 0) {
		rc = o.task != NULL ? do_run(&o) : job_run(&o);
		/* A run that ended before its outcome still gives a CI job its one object. */
		if (o.task != NULL && o.json_events && !o.json_printed)
			print_json_result(&o, NULL, NULL, false, rc == SB_EXIT_INTERRUPTED, false, 0,
			    NULL, rc);
	}
	run_opts_release(&o);
	return rc;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd-run.c: `ssebench run`: one agent x model x task, in sandbox mode (one container) or
 * sidecar mode (a task container and an agent container; docs/sidecar.md), as upstream's
 * (docs/upstream.md, "What a run does").
 *
 * One run is a sequence of phases over one struct run (run_one): fail fast on anything the
 * user gave wrong, before building anything (run_check); build the layers (base -> case ->
 * runtime -> tool -> agent: run_build_images); make the run's disks and network
 * (run_prepare_host), its directory and secrets file (run_prepare_dir); start the
 * container in the foreground (run_start); and turn what it left into result.json and
 * summary.json (run_collect). What the phases made goes in run_cleanup, in every case.
 * The containers' command lines are docker.c's (struct docker_container).
 */
#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
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
#include "k8s.h"
#include "kubectl.h"
#include "network.h"
#include "models.h"
#include "proxy.h"
#include "registry.h"
#include "run.h"
#include "untar.h"


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
	bool answered;		  /* and the entrypoint told (Kubernetes: k8s_phase_end) */
	const char *what;	  /* what it was told (revoke_run_key) */
	bool net_checked;	  /* the run's network was checked then (Docker) */
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
 * code (which has no network in its sandbox either: this is the second wall). The answer
 * the entrypoint waits for: "no key", "revoked" or "not revoked".
 */
static const char *
revoke_run_key(struct phase_end *pe)
{
	struct sb_error *err = NULL;
	/* Asked first: a deleted key is no longer minted (proxy_key_delete). */
	bool had_key = pe->px != NULL && pe->px->minted;

	pe->seen = true;
	if (had_key) {
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
	return !had_key ? "no key" : pe->key_revoked ? "revoked" : "not revoked";
}

/*
 * On Docker: the key goes (revoke_run_key), the answer is written into the run directory
 * (the container's results), and the run's network is checked to hold only the run's
 * containers and the proxy.
 */
static void
on_phase_end(struct phase_end *pe)
{
	_cleanup_free_ char *members = net_members(pe->net);
	const char *what = revoke_run_key(pe);
	char *save = NULL;

	pe->net_checked = true;
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
	char *net, *gateway, *mem, *cpus, *pids;
	bool canary, reference, proxy_key;
	const char *canary_addr; /* SSE_NET_CANARY, with canary */
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
	free(rx->net);
	free(rx->gateway);
	free(rx->mem);
	free(rx->cpus);
	free(rx->pids);
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
add_disk_dir(struct docker_container *c, const struct run_ctx *rx, const char *name,
    const char *target)
{
	_cleanup_free_ char *dir = disk_path(rx->disk, name);

	docker_container_add(c, DOCKER_DIR, dir, target, NULL);
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
add_disk_mounts(struct docker_container *c, const struct run_ctx *rx, const char *role)
{
	bool task = role != NULL && strcmp(role, "task") == 0;

	docker_container_add(c, DOCKER_READ_ONLY, NULL, NULL, NULL);
	docker_container_add(c, DOCKER_TMPFS, NULL, "/run", "rw,nosuid,nodev,mode=0755,size=16m");
	add_disk_dir(c, rx, task ? DISK_TMP_TASK : DISK_TMP, "/tmp");
	add_disk_dir(c, rx, task ? DISK_VARTMP_TASK : DISK_VARTMP, "/var/tmp");
	add_disk_dir(c, rx, DISK_ARCHIVE, "/tmp/sse-archive");
	if (role == NULL || task) {
		add_disk_dir(c, rx, DISK_RUNNER, "/var/lib/ssebench-runner");
		add_disk_dir(c, rx, DISK_STATE, "/var/lib/ssebench-daemon");
	}
	docker_container_add(c, DOCKER_VOLUME, rx->vol_home, AGENT_HOME, NULL);
	if (role == NULL)
		docker_container_add(c, DOCKER_VOLUME, rx->vol_source, rx->source, NULL);
}

/*
 * Activity counters the kernel shows every container (sb/counters.h): ext4's per-disk
 * figures, the block devices' (in /proc/diskstats and in each device's own sysfs
 * directory, which /sys/block only links to), each file system's (/sys/fs/<fs>), pages
 * dirtied and written, block interrupts, io stall time. Code beside the hidden material
 * moved them and the agent read the PoC or the hidden test back after the thaw, and from
 * another container any other run's (tests/integrity/README.md). Nothing a run does needs
 * them: empty in every run container. Only what exists is masked (Docker cannot make a
 * mount point in /proc or /sys); the entrypoint checks the rest
 * (isolation.c:check_counters_masked), so a place this misses fails the run rather than
 * leaving it open.
 */
static void
add_counter_masks(struct docker_container *c)
{
	_cleanup_argv_ struct sb_argv dirs = SB_ARGV_INIT;
	struct stat st;

	sb_counter_masked_dirs(&dirs);
	for (size_t i = 0; i < dirs.n; i++) {
		/* A comma or quote would end --mount's field: left unmasked, so checked. */
		if (strpbrk(dirs.v[i], ",\"\n") != NULL)
			continue;
		docker_container_add(c, DOCKER_MASK_DIR, NULL, dirs.v[i], NULL);
	}
	for (size_t i = 0; sb_counter_files[i] != NULL; i++)
		if (lstat(sb_counter_files[i], &st) == 0 && S_ISREG(st.st_mode))
			docker_container_add(c, DOCKER_MASK_FILE, NULL, sb_counter_files[i], NULL);
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

/* The labels of a run container: `runs` finds a run's containers by them. */
static void
add_run_labels(struct docker_container *c, const struct run_ctx *rx, const char *role)
{
	const struct run_opts *o = rx->o;
	bool task = role != NULL && strcmp(role, "task") == 0;

	sb_argv_pushf(&c->labels, "ssebench.run=%s", o->run_id);
	sb_argv_pushf(&c->labels, "ssebench.run-id=%s", o->run_id);
	if (o->job_id != NULL)
		sb_argv_pushf(&c->labels, "ssebench.job=%s", o->job_id);
	sb_argv_pushf(&c->labels, "ssebench.task-id=%s", o->task);
	sb_argv_pushf(&c->labels, "ssebench.model=%s", o->model);
	sb_argv_pushf(&c->labels, "ssebench.agent=%s", o->agent);
	sb_argv_pushf(&c->labels, "ssebench.mode=%s", role != NULL ? "sidecar" : "sandbox");
	if (role != NULL)
		sb_argv_pushf(&c->labels, "ssebench.sidecar-role=%s", role);
	/* The web UI finds a run by one container: the task container in sidecar mode. */
	if (role == NULL || task)
		sb_argv_push(&c->labels, "ssebench.webui=true");
	sb_argv_pushf(&c->labels, "ssebench.results=%s", rx->run_dir);
	if (rx->reference)
		sb_argv_push(&c->labels, "ssebench.reference-run=true");
}

/* What the run claims (the entrypoint establishes it or the run is not scored). */
static void
add_run_env(struct docker_container *c, const struct run_ctx *rx, const char *role)
{
	const struct run_opts *o = rx->o;
	bool task = role != NULL && strcmp(role, "task") == 0;

	docker_container_env(c, "SSE_DIFFICULTY=%u", o->difficulty);
	docker_container_env(c, "TIMEOUT=%llu", (unsigned long long)o->timeout);
	docker_container_env(c, "SSE_KEEP_ALIVE=%d", o->keep ? 1 : 0);
	docker_container_env(c, "SSE_EGRESS=%s", o->egress);
	if (rx->reference && !task)
		docker_container_env(c, "SSE_REFERENCE_RUN=1");
	/* The container that ends the agent phase waits for the key to be revoked. */
	if (rx->proxy_key && !task)
		docker_container_env(c, "SSE_PROXY_KEY=1");
	if (rx->gateway != NULL)
		docker_container_env(c, "SSE_NET_GATEWAY=%s", rx->gateway);
	if (rx->canary)
		docker_container_env(c, "SSE_NET_CANARY=%s", rx->canary_addr);
	docker_container_env(c, "SSE_RUNNER_UID=%lu", rx->runner_uid);
	/* The walk for places shared by the agent and the scripts covers the whole view: set
	 * here, so that no ENV of a task image can point it at an empty directory. */
	docker_container_env(c, "SSE_SHARED_WALK_ROOT=/");
	/* The per-disk counters are masked below: the entrypoint checks that they are. */
	docker_container_env(c, "SSE_COUNTERS_MASKED=1");
	/* The scripts' own root (images/sandbox/setup-tool-layer.sh, step 6), pinned likewise:
	 * a task image's ENV must not give them the agent's files back. */
	docker_container_env(c, "SSE_RUNNER_ROOT=" RUNNER_ROOT);
}

/*
 * Everything a run container gets, in either mode: the network, the labels, what the run
 * claims, the results directory, the archive, the secrets file, the resource limits. role
 * is NULL in sandbox mode, or the sidecar container's role ("task" or "agent"). Both
 * sidecar containers mount the archive writable (the agent writes its archive in both
 * modes: docs/sidecar.md): the agent's commands through the daemon's bash tool run in the
 * task container and may write their notes there too. It is the agent's only while the
 * agent phase lasts: the agent container hands it back to root once the agent's processes
 * in both containers have been killed.
 */
static void
describe_run_container(struct docker_container *c, const struct run_ctx *rx, const char *role)
{
	const struct run_opts *o = rx->o;
	bool task = role != NULL && strcmp(role, "task") == 0;

	c->network = rx->net;
	c->runtime = o->runtime;
	c->dns_fail_fast = strcmp(o->egress, "open") != 0;
	add_run_labels(c, rx, role);
	add_run_env(c, rx, role);
	/* The agent's processes run where the daemon runs them (not the sidecar agent's). */
	if (rx->agent_cgroup != NULL && (role == NULL || task)) {
		docker_container_add(c, DOCKER_BIND, rx->agent_cgroup, AGENT_CGROUP_TARGET, NULL);
		docker_container_env(c, "SSE_AGENT_CGROUP=" AGENT_CGROUP_TARGET);
	}
	docker_container_add(c, DOCKER_DIR, rx->run_dir, "/var/lib/ssebench/results", NULL);
	docker_container_add(c, DOCKER_BIND_RO, rx->secrets, "/run/ssebench-secrets/run.env", NULL);
	add_disk_mounts(c, rx, role);
	add_counter_masks(c);
	/* Resource limits (fail closed: a bad value falls back, never to "unlimited"). */
	docker_container_add(c, DOCKER_MEMORY, NULL, NULL, rx->mem);
	docker_container_add(c, DOCKER_CPUS, NULL, NULL, rx->cpus);
	docker_container_add(c, DOCKER_PIDS, NULL, NULL, rx->pids);
	docker_container_add(c, DOCKER_NO_CORE, NULL, NULL, NULL);
	docker_container_add(c, DOCKER_NO_NEW_PRIVILEGES, NULL, NULL, NULL);
	/* The container that runs task scripts needs what their sandbox needs (seccomp.c); the
	 * sidecar agent container runs none, and keeps Docker's default. */
	if (role == NULL || task)
		docker_container_add(c, DOCKER_SECCOMP, NULL, NULL, rx->seccomp);
}

/* The two shared volumes, at the same paths in both sidecar containers. */
static void
add_sidecar_volumes(struct docker_container *c, const struct run_ctx *rx, const char *source)
{
	docker_container_add(c, DOCKER_VOLUME, rx->vol_source, source, NULL);
	docker_container_add(c, DOCKER_VOLUME, rx->vol_sockets, "/run/ssebench", NULL);
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
	_cleanup_(docker_container_release) struct docker_container c = DOCKER_CONTAINER_INIT;
	_cleanup_free_ char *out = NULL;
	const char *id = rx->o->run_id;

	rx->vol_sockets = sb_xasprintf("ssebench-%s-sockets", id);
	/* The tree's volume is made with the run's disk (run_start); the sockets' is small. */
	sb_argv_pushl(&a, "volume", "create", "--label", NULL);
	sb_argv_pushf(&a, "ssebench.run=%s", id);
	sb_argv_push(&a, rx->vol_sockets);
	if (docker_output(&a, NULL, err) != 0) {
		sidecar_remove(rx, NULL);
		return sb_error_set(err, EIO, "docker volume create %s failed", rx->vol_sockets);
	}
	sb_argv_release(&a);
	c.name = name;
	c.hostname = "task";
	c.image = image;
	c.detach = true;
	describe_run_container(&c, rx, "task");
	add_sidecar_volumes(&c, rx, t->config->source.s);
	docker_run_args(&c, &a);
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
	if (task_container != NULL)
		progress("removed the task container %s and the run's volumes", task_container);
	else
		progress("removed the run's volumes (no task container was started)");
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
	if (!docker_image_exists(image))
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

/*
 * One run's state, passed from phase to phase (run_one): what a phase makes, the next ones
 * use, and run_cleanup takes down whatever was made, in every case.
 */
struct run {
	struct run_opts *o;
	int rc;	   /* the exit status, once a phase has stopped the run or it has ended */
	double t0; /* progress_clock() at the start */
	/* Checked (run_check). */
	bool reference, uses_model, sidecar;
	struct agent_info ag;
	struct sb_diags diags;
	struct sb_dataset *ds;
	struct sb_task *task; /* one of ds's */
	struct proxy px;
	char *parent, *run_dir; /* <results>/<task>/<model>/<agent>, and it/<run id> */
	/* Built (run_build_images). */
	char *case_image, *task_image, *agent_image, *log_path;
	char *agent_pinned; /* Kubernetes with a registry: agent_image as pushed, by digest */
	char digest[65];
	/* Prepared (run_prepare_host, run_prepare_dir). */
	struct run_disk disk;
	bool disk_made, net_made;
	char *archive, *secrets_dir, *secrets, *ref;
	/* What the containers share (the network, the limits, ...), filled as it is made. */
	struct run_ctx rx;
	/* Started (run_start). */
	char *container, *task_container, *started_at;
	bool container_done; /* the agent container ran to its end */
	bool interrupted;
	struct phase_end pe;
	/* Collected (run_collect). */
	uint64_t archive_left;
	double spend;
	json_t *result, *flags, *flag_counts; /* the answer-seeking scan's (sb/scan.h) */
	json_int_t flags_total;
	enum sb_iso_outcome outcome;
	bool scored;
	/* The Kubernetes backend (docs/kubernetes.md, "The backend"): its settings, the
	 * objects' name, the pod, the collected tar, whether the objects were made. */
	bool k8s, k8s_made;
	bool k8s_probe_node; /* the pod probes its own node (k8s_prepare) */
	struct kube kube;
	const char *registry; /* SSEBENCH_K8S_REGISTRY (check_k8s), or NULL */
	struct k8s_settings ks; /* the proxy's pods and port (check_k8s), for the policy */
	char *proxy_alias[2];	/* its host name and Service address, restricted (check_k8s) */
	char *k8s_name, *pod, *collected[2]; /* the results' tar, the archive's */
	char *evicted; /* the kubelet's message, when the agent's disk use evicted the pod */
};

/* A phase's error: said, and the run stops. */
static int
run_fail(struct run *r, struct sb_error **err)
{
	r->rc = cli_fail_err(err);
	return -1;
}

/* The run stops with rc (what went wrong was said). */
static int
run_stop(struct run *r, int rc)
{
	r->rc = rc;
	return -1;
}

/* The agent, the model and the proxy a model-backed run needs. */
static int
check_agent_model(struct run *r)
{
	struct run_opts *o = r->o;
	struct sb_error *err = NULL;

	r->reference = strcmp(o->agent, "reference") == 0;
	if (agent_load(cli_home(), o->agent, &r->ag, &err) < 0)
		return run_fail(r, &err);
	if (r->reference) {
		if (o->model != NULL && strcmp(o->model, "none") != 0)
			sb_log(SB_LOG_WARN, "the reference agent uses no model; ignoring --model %s",
			    o->model);
		free(o->model);
		o->model = sb_xstrdup("none");
	} else if (o->model == NULL && (r->ag.no_model || strcmp(o->agent, "dummy") == 0)) {
		o->model = sb_xstrdup("none");
	} else if (o->model == NULL) {
		return run_stop(r, cli_fail("--model is required for the agent '%s'", o->agent));
	}
	if (!model_name_valid(o->model))
		return run_stop(r, cli_fail("'%s' is not a model name", o->model));
	/* A model-backed run: the model must be one of ours, and the proxy must be there. */
	r->uses_model = strcmp(o->model, "none") != 0;
	if (r->uses_model && (check_model(o->model) < 0 || proxy_configure(&r->px, &err) < 0 ||
				 proxy_check(&r->px, &err) < 0))
		return err == NULL ? run_stop(r, SB_EXIT_FAILURE) : run_fail(r, &err);
	return 0;
}

/* The task, in its dataset, valid (and with a patch for the reference agent). */
static int
check_task(struct run *r)
{
	struct run_opts *o = r->o;
	struct sb_error *err = NULL;

	if (sb_dataset_load(o->local, &r->ds, &r->diags, &err) < 0)
		return run_fail(r, &err);
	for (size_t i = 0; i < r->ds->n; i++)
		if (strcmp(r->ds->tasks[i]->name, o->task) == 0)
			r->task = r->ds->tasks[i];
	if (r->task == NULL)
		return run_stop(r, cli_no_task(r->ds, o->task));
	if (r->task->problems > 0) {
		for (size_t i = 0; i < r->diags.n; i++)
			if (strncmp(r->diags.v[i].file, r->task->display,
				strlen(r->task->display)) == 0)
				sb_diag_print(&r->diags.v[i], stderr);
		return run_stop(r, cli_fail("the task '%s' is not valid (see above)", o->task));
	}
	if (r->reference && r->task->config->files.patch.s == NULL)
		return run_stop(r, cli_fail("the task '%s' has no files.patch for the reference "
					    "agent", o->task));
	return 0;
}

/*
 * The Kubernetes backend: its settings, and what it does not do yet refused before
 * anything is built (docs/kubernetes.md, "The backend").
 */
static int
check_k8s(struct run *r)
{
	struct sb_error *err = NULL;

	if (kube_settings(&r->kube, &err) < 0)
		return run_fail(r, &err);
	/*
	 * The proxy as the pod reaches it, in the cluster (docs/kubernetes.md, "Models"): the
	 * CLI still makes and deletes the run's key through SSEBENCH_PROXY_ADMIN_URL
	 * (proxy_configure), and the policy lets the pod reach the proxy's pods alone.
	 */
	if (r->uses_model) {
		_cleanup_free_ char *url_default =
		    sb_xasprintf("http://litellm.%s.svc:4000", r->kube.namespace);
		const char *url = cli_setting("SSEBENCH_K8S_PROXY_URL", url_default);

		if (k8s_proxy_settings(url, cli_setting("SSEBENCH_K8S_PROXY_SELECTOR",
					       K8S_PROXY_SELECTOR_DEFAULT),
			cli_setting("SSEBENCH_K8S_PROXY_PORT", NULL), &r->ks, &err) < 0)
			return run_fail(r, &err);
		free(r->px.agent_url);
		r->px.agent_url = proxy_url_trimmed(url);
		if (r->px.master_key == NULL)
			sb_log(SB_LOG_WARN, "SSEBENCH_PROXY_KEY: the fixed key goes into the run's "
					    "Secret on the cluster, and is not revoked when the run ends "
					    "(LITELLM_MASTER_KEY makes a key of the run's own)");
		/* A restricted run resolves no name: the proxy's Service's address goes into
		 * its /etc/hosts (k8s.h, k8s_proxy_service). */
		if (strcmp(r->o->egress, "open") != 0) {
			_cleanup_free_ char *service = NULL;

			if (k8s_proxy_service(url, r->kube.namespace, &r->proxy_alias[0], &service,
				&err) < 0 ||
			    (service != NULL &&
				kube_service_ip(&r->kube, service, &r->ks.proxy_pods,
				    &r->proxy_alias[1], &err) < 0)) {
				sb_error_prefix(&err, "the model proxy for a restricted run");
				return run_fail(r, &err);
			}
			r->ks.proxy_alias_host = r->proxy_alias[0];
			r->ks.proxy_alias_ip = r->proxy_alias[1];
		}
	}
	r->registry = cli_setting("SSEBENCH_K8S_REGISTRY", NULL);
	if (r->registry != NULL && registry_check(r->registry, &err) < 0) {
		sb_error_prefix(&err, "SSEBENCH_K8S_REGISTRY");
		return run_fail(r, &err);
	}
	return 0;
}

/*
 * Phase 1: everything the user gave, before anything is built: the agent and model, the
 * task, a run directory that is not there yet, the engine and its runtime, the limits.
 */
static int
run_check(struct run *r)
{
	struct run_opts *o = r->o;
	struct sb_error *err = NULL;
	struct stat st;
	int rc;

	if (check_agent_model(r) < 0 || check_task(r) < 0 || (r->k8s && check_k8s(r) < 0))
		return -1;
	if (o->run_id == NULL)
		o->run_id = run_id_new();
	r->parent = sb_xasprintf("%s/%s/%s/%s", results_root(), o->task, o->model, o->agent);
	r->run_dir = sb_xasprintf("%s/%s", r->parent, o->run_id);
	if (lstat(r->run_dir, &st) == 0)
		return run_stop(r, cli_fail("the run directory %s exists already; pick another "
					    "--run-id", r->run_dir));
	if ((rc = cli_need_engine()) != 0)
		return run_stop(r, rc);
	/* On Kubernetes, --runtime names a RuntimeClass, which the API server checks. */
	if (o->runtime != NULL && !r->k8s && check_runtime(o->runtime, &err) < 0)
		return run_fail(r, &err);
	r->rx.mem = run_limit(SB_RUN_LIMIT_MEMORY);
	r->rx.cpus = run_limit(SB_RUN_LIMIT_CPUS);
	r->rx.pids = run_limit(SB_RUN_LIMIT_PIDS);
	return 0;
}

/*
 * The images the run's containers start from carry no ssebench.* label but those the
 * builds put on: a container inherits its image's labels wherever `run` sets none, and
 * `runs` finds a run's containers by them. The task's Dockerfile is checked for LABEL
 * too (dataset validate), but quoting, ONBUILD in a base and a base image of another
 * task can all slip a label past a reading of the file; the built image cannot.
 */
static int
check_image_labels(const struct run *r, struct sb_error **err)
{
	/* What images.c and scripts/docker-up put on, and nothing else. */
	static const char *const ours[] = { "ssebench.task-files", "ssebench.task-id",
		"ssebench.agent", "ssebench.rootfs.", NULL };
	const char *check[] = { r->agent_image, r->sidecar ? r->task_image : NULL };

	for (size_t i = 0; i < SB_ARRAY_SIZE(check); i++) {
		_cleanup_free_ char *key = NULL;
		int k;

		if (check[i] == NULL)
			continue;
		k = docker_image_foreign_labels(check[i], ours, &key, err);
		if (k < 0)
			return -1;
		if (k > 0)
			return sb_error_set(err, EINVAL, "the image %s carries the label '%s': the "
			    "ssebench.* labels are the harness's, and a task may not set them "
			    "(check the task's Dockerfile and its base)", check[i], key);
	}
	return 0;
}

/* The layers, base -> case -> runtime -> tool (or sidecar task) -> agent, into the log. */
static int
build_layers(const struct run *r, struct images *im, const char *dataset_name,
    struct sb_error **err)
{
	const struct sb_dataset *ds = r->ds;

	if (images_ensure_base(im, r->task->base, err) < 0 ||
	    images_build_case(im, ds->path, dataset_name, r->task, r->digest, ds->canary,
		err) < 0 ||
	    images_build_runtime(im, err) < 0 ||
	    (r->sidecar ? images_build_sidecar_case(im, r->task, r->case_image, err)
			: images_build_tool(im, r->task, r->case_image, err)) < 0)
		return -1;
	/* Sandbox: the agent on this task's tool image; sidecar: on the shared runtime. */
	if (r->sidecar) {
		_cleanup_free_ char *rt = image_sidecar_agent();

		return images_build_sidecar_agent(im, err) < 0 ||
			       images_build_agent(im, &r->ag, rt, r->agent_image, err) < 0
			   ? -1
			   : 0;
	}
	return images_build_agent(im, &r->ag, r->task_image, r->agent_image, err);
}

/*
 * Phase 2: the images, built (or, in a job, where the job built them, only checked), and
 * their labels checked. A job's image build (--images-only) ends here.
 */
static int
run_build_images(struct run *r)
{
	struct run_opts *o = r->o;
	const struct sb_dataset *ds = r->ds;
	const char *slash = strrchr(ds->path, '/');
	_cleanup_free_ char *dataset_name = sb_xstrdup(slash != NULL ? slash + 1 : ds->path);
	_cleanup_close_ int log_fd = -1;
	struct sb_error *err = NULL;
	struct images im;

	r->case_image = image_case(dataset_name, r->task->name);
	r->task_image = r->sidecar ? image_tool_sidecar(r->task->name) : image_tool(r->task->name);
	r->agent_image = r->sidecar ? image_agent_sidecar(&r->ag)
				    : image_agent(&r->ag, r->task->name);
	if (sb_mkdir_p(r->parent, 0755, &err) < 0)
		return run_fail(r, &err);
	r->log_path = sb_xasprintf("%s/.build-%s.log", r->parent, o->run_id);
	log_fd = open(r->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
	im.home = cli_home();
	im.quiet = false;
	im.log_fd = log_fd;
	progress("run %s: task %s, agent %s, model %s, difficulty %u, egress %s, mode %s",
	    o->run_id, o->task, o->agent, o->model, o->difficulty, o->egress, o->mode);
	if (o->images_ready) {
		/* The job built them (job.c): each run only checks they are there. */
		if (task_files_digest(r->task->display, r->digest, &err) < 0 ||
		    image_present(r->agent_image, &err) < 0)
			return run_fail(r, &err);
	} else if (task_files_digest(r->task->display, r->digest, &err) < 0 ||
		   build_layers(r, &im, dataset_name, &err) < 0) {
		sb_error_prefix(&err, "build log: %s", r->log_path);
		return run_fail(r, &err);
	}
	if (check_image_labels(r, &err) < 0)
		return run_fail(r, &err);
	if (r->k8s && !o->images_only) {
		/* With a registry the Job names the image by the digest this push gave: the
		 * nodes run exactly what was built and checked here, whatever the tag says
		 * later. Without one, the image is imported into the cluster's runtime. */
		if (r->registry != NULL) {
			progress("pushing %s to %s", r->agent_image, r->registry);
			if (registry_push(r->registry, r->agent_image, &r->agent_pinned, NULL,
				&err) < 0)
				return run_fail(r, &err);
			progress("the Job's image: %s", r->agent_pinned);
		} else {
			const char *const imgs[] = { r->agent_image, NULL };

			if (kube_import_images(imgs, &err) < 0)
				return run_fail(r, &err);
		}
	}
	if (o->images_only) {
		/* A job's image build (job.c): the images are there; no run. */
		(void)unlink(r->log_path);
		progress("images of %s and %s ready", o->task, o->agent);
		return run_stop(r, SB_EXIT_OK);
	}
	return 0;
}

/*
 * An IPv4 address the in-pod network check probes (entrypoint/isolation.c:probe_network),
 * from the setting name: NULL when unset; a value that is no address is an error.
 */
static int
k8s_probe_addr(const char *name, const char **ret, struct sb_error **err)
{
	const char *v = cli_setting(name, NULL);
	struct in_addr a;

	*ret = NULL;
	if (v == NULL || *v == '\0')
		return 0;
	if (inet_pton(AF_INET, v, &a) != 1)
		return sb_error_set(err, EINVAL, "%s: '%s' is not an IPv4 address", name,
		    cli_safe(v));
	*ret = v;
	return 0;
}

/*
 * Phase 3a on Kubernetes: the run's disks are its pod's volumes and its network is its
 * NetworkPolicy, both made with the Job. A restricted run's isolation check in the pod
 * must show the policy in force, not merely stored: it probes two addresses the policy
 * forbids and that answer when reached (SSEBENCH_K8S_CANARY: outside the cluster;
 * SSEBENCH_K8S_HOST: the host as pods reach it), and the pod's own node too (k8s.c:
 * run_env). Without the settings the check cannot pass and the run is not scored: silence
 * from an address nobody answers on would prove nothing.
 */
static int
k8s_prepare(struct run *r)
{
	struct run_opts *o = r->o;
	struct sb_error *err = NULL;
	const char *host = NULL, *canary = NULL;

	r->rx.agent_freezer = "signals";
	r->k8s_name = k8s_run_name(o->run_id);
	r->rx.net = sb_xstrdup(r->k8s_name);
	if (strcmp(o->egress, "open") == 0)
		return 0;
	if (k8s_probe_addr("SSEBENCH_K8S_HOST", &host, &err) < 0 ||
	    k8s_probe_addr("SSEBENCH_K8S_CANARY", &canary, &err) < 0)
		return run_fail(r, &err);
	if (host != NULL)
		r->rx.gateway = sb_xstrdup(host);
	r->k8s_probe_node = true;
	r->rx.canary = canary != NULL;
	r->rx.canary_addr = canary;
	if (host == NULL || canary == NULL)
		sb_log(SB_LOG_WARN, "SSEBENCH_K8S_%s is not set: this run cannot show that its "
				    "NetworkPolicy is in force, and will not be scored",
		    host == NULL ? "HOST" : "CANARY");
	return 0;
}

/*
 * Phase 3a: what the run holds on the host: its own file systems, network, freezer
 * cgroup, the proxy on its network, and the egress canary.
 */
static int
run_prepare_host(struct run *r)
{
	struct run_opts *o = r->o;
	const char *project = cli_setting("COMPOSE_PROJECT_NAME", "ssebench");
	struct sb_error *err = NULL;

	/*
	 * From here the run holds things that must not outlive it (its disks, network, cgroup,
	 * proxy key, secrets): a first Ctrl-C is noted and the run winds down through
	 * run_cleanup, with its result written if the container ran; only a second one exits
	 * at once.
	 */
	sb_sig_set_deferred(SB_SIG_DEFER_FIRST);
	if (r->k8s)
		return k8s_prepare(r);
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
		    disk_create(&r->disk, droot, o->run_id, bytes, &err) < 0)
			return run_fail(r, &err);
		r->disk_made = true;
		progress("run %s: its own file systems, %s bytes each (SSEBENCH_DISK)", o->run_id, size);
	}
	/* The run's own network: nothing but its containers and the proxy on it. */
	r->rx.net = net_run_name(project, o->run_id);
	if (net_ensure_run(r->rx.net, strcmp(o->egress, "open") != 0, o->run_id, &err) < 0)
		return run_fail(r, &err);
	r->net_made = true;
	/* Another runtime (--runtime) keeps its own cgroups: held by signals there. */
	r->rx.agent_freezer = o->runtime != NULL
	    ? "signals"
	    : agent_cgroup_make(o->run_id, &r->rx.agent_cgroup);
	progress("run %s: the agent is held still during checks on hidden material by %s",
	    o->run_id, strcmp(r->rx.agent_freezer, "signals") == 0
		? "signals (no freezer cgroup here)"
		: r->rx.agent_freezer);
	if (r->uses_model && proxy_attach(&r->px, r->rx.net, &err) < 0)
		return run_fail(r, &err);
	if (strcmp(o->egress, "open") != 0) {
		r->rx.gateway = net_gateway(r->rx.net);
		if (net_ensure_canary(&err) == 0) {
			r->rx.canary = true;
			r->rx.canary_addr = NET_CANARY_ADDR;
		} else {
			sb_log(SB_LOG_WARN, "%s: without it this run cannot show that it has no "
					    "route out, and will not be scored", sb_error_message(err));
			sb_error_release(&err);
		}
	}
	return 0;
}

/* Now, in UTC to the second: result.json's and summary.json's times. */
static void
utc_second(char ts[32])
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(ts, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/*
 * The secrets file. Secrets travel in a root-only file the entrypoint reads, never on a
 * command line or in the container's environment (docker inspect shows that).
 */
static int
write_secrets(struct run *r, struct sb_error **err)
{
	struct run_opts *o = r->o;
	_cleanup_free_ char *text = NULL;
	unsigned char tok[16];
	char hex[33];

	if (sb_random_bytes(tok, sizeof(tok), err) < 0)
		return -1;
	for (int i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", tok[i]);
	r->secrets = sb_xasprintf("%s/run.env", r->secrets_dir);
	/*
	 * The run's own proxy key, for the model alone (proxy.h), made as late as it can
	 * be. From here a Ctrl-C is ours to handle, so that the key is deleted.
	 */
	if (r->uses_model && proxy_key_new(&r->px, o->model, o->run_id, o->timeout, err) < 0)
		return -1;
	text = r->uses_model
	    ? sb_xasprintf("SSE_DAEMON_TOKEN=%s\nSSE_API_KEY=%s\nSSE_BASE_URL=%s\n"
			   "SSE_MODEL_NAME=%s\n",
		  hex, r->px.run_key, r->px.agent_url, o->model)
	    : sb_xasprintf("SSE_DAEMON_TOKEN=%s\n", hex);
	return write_text(r->secrets, text, 0600, err);
}

/* The seccomp profile, beside the secrets; its resolved path into rx. */
static int
write_seccomp(struct run *r, struct sb_error **err)
{
	json_auto_t *prof = seccomp_profile_json();
	_cleanup_free_ char *path = sb_xasprintf("%s/seccomp.json", r->secrets_dir);
	_cleanup_close_ int sfd = sb_open_dir(r->secrets_dir, err);

	if (sfd < 0 || sb_json_write_atomic_at(sfd, "seccomp.json", prof, 0600, err) < 0)
		return -1;
	r->rx.seccomp = realpath(path, NULL);
	if (r->rx.seccomp == NULL)
		return sb_error_errno(err, errno, "resolve '%s'", path);
	return 0;
}

/* Phase 3b: the run directory, the secrets, the seccomp profile, the reference patch. */
static int
run_prepare_dir(struct run *r)
{
	struct run_opts *o = r->o;
	struct sb_error *err = NULL;

	if (mkdir(r->run_dir, 0755) < 0) {
		sb_error_errno(&err, errno, "mkdir '%s'", r->run_dir);
		return run_fail(r, &err);
	}
	r->archive = sb_xasprintf("%s/archive", r->run_dir);
	update_latest(r->parent, o->run_id);
	{
		_cleanup_free_ char *moved = sb_xasprintf("%s/build.log", r->run_dir);

		(void)rename(r->log_path, moved);
	}
	r->secrets_dir = sb_xasprintf("%s/.secrets-%s", r->parent, o->run_id);
	if (mkdir(r->secrets_dir, 0700) < 0) {
		sb_error_errno(&err, errno, "mkdir '%s'", r->secrets_dir);
		return run_fail(r, &err);
	}
	if (write_secrets(r, &err) < 0 || write_seccomp(r, &err) < 0)
		return run_fail(r, &err);
	if (r->reference) {
		_cleanup_free_ char *inside =
		    sb_xasprintf("/ssebench/%s", r->task->config->files.patch.s);

		r->ref = sb_xasprintf("%s/reference.diff", r->secrets_dir);
		if (copy_from_image(r->case_image, inside, r->ref, &err) < 0)
			return run_fail(r, &err);
		/* Read-only for everyone: the reference agent runs as model. */
		(void)chmod(r->secrets_dir, 0711);
		(void)chmod(r->ref, 0644);
	}
	return 0;
}

/* What the run's containers share (run_ctx), with the host paths resolved. */
static int
fill_ctx(struct run *r, struct sb_error **err)
{
	struct run_ctx *rx = &r->rx;

	rx->o = r->o;
	rx->runner_uid = runner_uid_new();
	rx->reference = r->reference;
	rx->proxy_key = r->uses_model;
	rx->run_dir = realpath(r->run_dir, NULL);
	rx->archive = disk_path(&r->disk, DISK_ARCHIVE);
	rx->secrets = realpath(r->secrets, NULL);
	rx->ref = r->ref != NULL ? realpath(r->ref, NULL) : NULL;
	rx->disk = &r->disk;
	rx->source = r->task->config->source.s;
	if (rx->run_dir == NULL || rx->secrets == NULL || (r->ref != NULL && rx->ref == NULL))
		return sb_error_errno(err, errno, "resolve the paths of %s", r->run_dir);
	return 0;
}

/* The container the agent runs in: the sandbox, or the sidecar agent container. */
static void
describe_agent_container(const struct run *r, struct docker_container *c)
{
	const struct run_ctx *rx = &r->rx;

	c->name = r->container;
	c->hostname = r->sidecar ? "agent" : "sandbox";
	c->image = r->agent_image;
	c->remove = !r->o->keep;
	describe_run_container(c, rx, r->sidecar ? "agent" : NULL);
	if (r->sidecar) {
		/* The tree and the sockets come from the task container's volumes. */
		docker_container_env(c, "SSE_SOURCE=%s", r->task->config->source.s);
		add_sidecar_volumes(c, rx, r->task->config->source.s);
	}
	if (rx->ref != NULL)
		docker_container_add(c, DOCKER_BIND_RO, rx->ref, "/reference/patch.diff", NULL);
}

/*
 * Start the agent's container in the foreground and wait for it, handling the end of the
 * agent phase and Ctrl-C meanwhile (wait_container).
 */
static int
run_agent_container(struct run *r, struct sb_error **err)
{
	_cleanup_(docker_container_release) struct docker_container c = DOCKER_CONTAINER_INIT;
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	struct sb_cmd cmd = SB_CMD_INIT;
	struct phase_end *pe = &r->pe;
	char ts[32];
	int code;

	describe_agent_container(r, &c);
	docker_run_args(&c, &a);
	utc_second(ts);
	r->started_at = sb_xstrdup(ts);
	progress(r->sidecar ? "starting the agent container %s (agent phase, then grading)"
			    : "starting the container %s (agent phase, then grading)",
	    r->container);
	/* While the container runs, a second Ctrl-C kills it (wait_container), not us. */
	sb_sig_set_deferred(SB_SIG_DEFER_ALL);
	if (docker_start(&a, &cmd, err) < 0) {
		sb_sig_set_deferred(SB_SIG_DEFER_FIRST);
		return -1;
	}
	pe->run_fd = sb_open_dir(r->run_dir, NULL);
	pe->px = r->uses_model ? &r->px : NULL;
	pe->net = r->rx.net;
	pe->members_ok[0] = r->container;
	pe->members_ok[1] = r->task_container != NULL ? r->task_container : r->px.container;
	pe->members_ok[2] = r->task_container != NULL ? r->px.container : NULL;
	code = wait_container(&cmd, r->container, pe->run_fd >= 0 ? pe : NULL, &r->interrupted);
	sb_sig_set_deferred(SB_SIG_DEFER_FIRST);
	progress("the %scontainer exited with status %d", r->sidecar ? "agent " : "", code);
	return 0;
}

/* Read the file name of the run's secrets directory (the secrets, the fix) into *ret. */
static int
read_secret_file(const struct run *r, const char *name, char **ret, size_t *ret_len,
    struct sb_error **err)
{
	_cleanup_close_ int dfd = sb_open_dir(r->secrets_dir, err);
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(SB_JSON_FILE_MAX);

	if (dfd < 0 || sb_read_file_at(dfd, name, 0, &b, err) < 0)
		return -1;
	*ret = sb_buf_detach(&b, ret_len);
	return 0;
}

/*
 * The run on Kubernetes (k8s.h): what the Docker backend's container is, as one
 * struct k8s_run. The environment is add_run_env's own, so the pod claims exactly what a
 * Docker run claims and the entrypoint checks the same.
 */
static int
k8s_describe(struct run *r, struct k8s_run *kr, char **secrets, char **patch,
    struct sb_error **err)
{
	_cleanup_(docker_container_release) struct docker_container c = DOCKER_CONTAINER_INIT;
	_cleanup_free_ char *disk = run_limit(SB_RUN_LIMIT_DISK);
	struct run_opts *o = r->o;
	uint64_t bytes = 0;

	r->rx.runner_uid = runner_uid_new();
	r->rx.reference = r->reference;
	r->rx.proxy_key = r->uses_model;
	add_run_env(&c, &r->rx, NULL);
	for (size_t i = 0; i < c.n; i++)
		if (c.settings[i].kind == DOCKER_ENV)
			sb_argv_push(&kr->env, c.settings[i].value);
	if (sb_parse_u64(disk, 1, UINT64_MAX, &bytes, err) < 0 ||
	    read_secret_file(r, "run.env", secrets, NULL, err) < 0 ||
	    (r->ref != NULL &&
		read_secret_file(r, "reference.diff", patch, &kr->reference_patch_len, err) < 0))
		return -1;
	kr->run_id = o->run_id;
	kr->task = o->task;
	kr->agent = o->agent;
	kr->model = o->model;
	kr->job_id = o->job_id;
	kr->image = r->agent_pinned != NULL ? r->agent_pinned : r->agent_image;
	kr->source = r->task->config->source.s;
	kr->runtime_class = o->runtime != NULL ? o->runtime
					      : cli_setting("SSEBENCH_K8S_RUNTIME_CLASS", NULL);
	kr->egress_open = strcmp(o->egress, "open") == 0;
	kr->uses_model = r->uses_model;
	kr->probe_node = r->k8s_probe_node;
	kr->timeout = o->timeout;
	kr->memory = r->rx.mem;
	kr->cpus = r->rx.cpus;
	kr->pids = r->rx.pids;
	kr->agent_disk = kr->harness_disk = bytes;
	kr->secrets = *secrets;
	kr->reference_patch = *patch;
	return 0;
}

/*
 * A run with a model on Kubernetes, at the end of its agent phase (the collect
 * container's readiness: k8s.c, collect_container): the key goes, and the answer the
 * entrypoint waits for before grading is written through the collect container. Called at
 * each poll until the answer is written: a key that could not be deleted and an exec that
 * failed are tried again meanwhile (the entrypoint waits 60 s, then grades and says so in
 * isolation.json).
 */
static void
k8s_phase_end(struct run *r, const char *pod)
{
	struct phase_end *pe = &r->pe;
	struct sb_error *err = NULL;

	if (!pe->seen || (!pe->key_revoked && pe->px != NULL && pe->px->minted)) {
		bool first = !pe->seen;

		pe->what = revoke_run_key(pe);
		if (first || pe->key_revoked)
			progress("agent phase over: the run's proxy key %s", pe->what);
	}
	/* A failed exec (the API server or the kubelet blinked) is tried again at the next
	 * poll, while the pod waits its 60 s. */
	if (kube_key_answer(&r->kube, pod, pe->what, &err) < 0) {
		sb_log(SB_LOG_WARN, "telling pod %s that the run's proxy key is %s: %s", pod,
		    pe->what, sb_error_message(err));
		sb_error_release(&err);
		return;
	}
	pe->answered = true;
}

/*
 * Wait until the pod's sandbox container has ended (r->pod), saying each new state; a pod
 * that cannot start (an image that is not there, an init container that failed) fails at
 * once. Ctrl-C stops the wait (r->interrupted); run_cleanup deletes the objects.
 */
static int
k8s_wait(struct run *r, struct sb_error **err)
{
	uint64_t deadline =
	    sb_now_ms() + (2 * r->o->timeout + K8S_DEADLINE_SLACK_S + 120) * 1000;
	_cleanup_free_ char *last = NULL;
	unsigned failures = 0;
	bool seen = false, exists = true, started = false;

	while (sb_sig_interrupted() == 0) {
		struct kube_pod p;
		char *now;

		if (sb_now_ms() > deadline)
			return sb_error_set(err, ETIMEDOUT, "the pod of Job %s did not end in time",
			    r->k8s_name);
		if (kube_pod_get(&r->kube, r->k8s_name, &p, err) < 0) {
			/* The API server may blink; five failures in a row are an answer. */
			if (++failures >= 5)
				return -1;
			sb_error_release(err);
			(void)poll(NULL, 0, 2000);
			continue;
		}
		failures = 0;
		/*
		 * A pod that was there and is no more, or a Job that is gone (runs stop, an
		 * eviction, a deletion by hand): nothing will end, or be collected.
		 */
		if (p.name == NULL && (seen || (kube_job_exists(&r->kube, r->k8s_name, &exists,
						    NULL) == 0 && !exists))) {
			kube_pod_release(&p);
			return sb_error_set(err, ECANCELED, "the %s of Job %s is gone (deleted: "
			    "ssebench runs stop?)", seen ? "pod" : "Job itself", r->k8s_name);
		}
		seen = seen || p.name != NULL;
		started = started || p.sandbox == KUBE_CTR_RUNNING || p.sandbox == KUBE_CTR_DONE;
		now = sb_xasprintf("%s%s%s", p.name != NULL ? p.phase : "no pod yet",
		    p.reason != NULL ? ", " : "", p.reason != NULL ? p.reason : "");
		if (last == NULL || strcmp(now, last) != 0)
			progress("pod of Job %s: %s", r->k8s_name, cli_safe(now));
		free(last);
		last = now;
		if (r->pe.px != NULL && !r->pe.answered && p.collect_ready && p.name != NULL &&
		    p.sandbox == KUBE_CTR_RUNNING)
			k8s_phase_end(r, p.name);
		if (p.sandbox == KUBE_CTR_DONE) {
			progress("the container exited with status %d", p.exit_code);
			/* The whole pod ended (runs stop, its deadline): nothing to collect from. */
			if (p.collect != KUBE_CTR_RUNNING) {
				kube_pod_release(&p);
				return sb_error_set(err, EIO, "the pod of Job %s ended (%s) before its "
				    "results could be collected (ssebench runs stop, or its deadline?)",
				    r->k8s_name, cli_safe(last));
			}
			r->pod = p.name;
			p.name = NULL;
			kube_pod_release(&p);
			return 0;
		}
		/* The agent's disk use, once it could run: its doing (k8s_eviction_is_agents). */
		if (started && p.reason != NULL && strcmp(p.reason, "Evicted") == 0 &&
		    k8s_eviction_is_agents(p.message)) {
			r->evicted = sb_xstrdup(p.message);
			kube_pod_release(&p);
			progress("pod of Job %s: evicted for the agent's disk use: %s", r->k8s_name,
			    cli_safe(r->evicted));
			return 0;
		}
		if (p.init_failed || kube_reason_fatal(p.reason) ||
		    (p.phase != NULL && strcmp(p.phase, "Failed") == 0)) {
			/*
			 * An eviction's message names what went over its limit: an agent's volume
			 * (docs/kubernetes.md, "What differs from Docker": open, the run is an
			 * error and no grade) or the harness's.
			 */
			_cleanup_free_ char *msg = p.message != NULL
			    ? sb_xasprintf(": %s", cli_safe(p.message)) : sb_xstrdup("");

			kube_pod_release(&p);
			return sb_error_set(err, EIO, "the pod of Job %s cannot run (%s)%s; see "
			    "kubectl describe pod -l job-name=%s", r->k8s_name, cli_safe(last), msg,
			    r->k8s_name);
		}
		kube_pod_release(&p);
		(void)poll(NULL, 0, 2000);
	}
	r->interrupted = true;
	return 0;
}

/*
 * The sandbox container's output (pod.log in the run directory) and two tars from the
 * collect container, its results and its archive (r->collected, in the run's secrets
 * directory, root's alone), apart: an archive tar cannot read costs the archive, not the
 * results. What fails is said; without the results the run has no result.json and is an
 * error (run_outcome), never a pass.
 */
static void
k8s_fetch(struct run *r)
{
	_cleanup_free_ char *log = sb_xasprintf("%s/pod.log", r->run_dir);
	_cleanup_free_ char *disk = run_limit(SB_RUN_LIMIT_DISK);
	struct sb_error *err = NULL;
	uint64_t bytes = 0, max;

	if (kube_logs_to(&r->kube, r->pod, "sandbox", log, SB_JSON_FILE_MAX, &err) < 0) {
		sb_log(SB_LOG_WARN, "the container's output: %s", sb_error_message(err));
		sb_error_release(&err);
	}
	/* Both file systems full, and their tar's headers: more is not what the pod held. */
	(void)sb_parse_u64(disk, 1, UINT64_MAX / 4, &bytes, NULL);
	max = 2 * bytes + ((uint64_t)64 << 20);
	/* Two streams: the archive (the agent's) cannot cost the run its results. */
	for (size_t i = 0; i < SB_ARRAY_SIZE(r->collected); i++) {
		const char *tree = i == 0 ? "results" : "archive";

		r->collected[i] = sb_xasprintf("%s/collect-%s.tar", r->secrets_dir, tree);
		if (kube_collect(&r->kube, r->pod, tree, r->collected[i], max, &err) < 0) {
			sb_log(SB_LOG_WARN, "collecting the %s from pod %s: %s", tree, r->pod,
			    sb_error_message(err));
			sb_error_release(&err);
			(void)unlink(r->collected[i]);
			free(r->collected[i]);
			r->collected[i] = NULL;
		}
	}
}

/*
 * Phase 4 on Kubernetes: the NetworkPolicy, Secret and Job of the run (k8s.c), created
 * together; the wait for the sandbox container's end; what it left fetched.
 */
static int
k8s_start(struct run *r)
{
	struct k8s_run kr = K8S_RUN_INIT;
	struct k8s_settings *ks = &r->ks;
	_cleanup_free_ char *secrets = NULL, *patch = NULL;
	struct sb_error *err = NULL;
	json_t *objs = NULL;
	char ts[32];
	int k;

	ks->namespace = r->kube.namespace;
	ks->seccomp_localhost = cli_setting("SSEBENCH_K8S_SECCOMP", NULL);
	ks->cpu_request = cli_setting("SSEBENCH_K8S_CPU_REQUEST", NULL);
	r->pe.px = r->uses_model ? &r->px : NULL;
	k = k8s_describe(r, &kr, &secrets, &patch, &err);
	if (k == 0)
		k = k8s_run_manifests(&kr, ks, &objs, &err);
	sb_argv_release(&kr.env);
	if (k < 0)
		return run_fail(r, &err);
	utc_second(ts);
	r->started_at = sb_xstrdup(ts);
	progress("creating Job %s in namespace %s (agent phase, then grading)", r->k8s_name,
	    r->kube.namespace);
	/* Set first: what a half-done create made, run_cleanup deletes by the run's label. */
	r->k8s_made = true;
	k = kube_create(&r->kube, objs, &err);
	json_decref(objs);
	if (k < 0 || k8s_wait(r, &err) < 0)
		return run_fail(r, &err);
	if (r->interrupted) {
		(void)cli_fail("interrupted: Job %s is deleted", r->k8s_name);
		return run_stop(r, SB_EXIT_INTERRUPTED);
	}
	/* An evicted pod's containers are gone: nothing to collect (k8s_forfeit). */
	if (r->evicted == NULL)
		k8s_fetch(r);
	r->container_done = true;
	return 0;
}

/*
 * After the pod on Kubernetes: the collected tar unpacked as hostile input (untar.h:
 * directories and regular files only, 0755 and 0644, no link followed or made, bounded),
 * the results into the run directory and the archive into archive/; then the run's
 * objects deleted unless kept.
 */
static void
k8s_wind_down(struct run *r)
{
	struct untar_limits lim = { SB_COPY_BYTES_MAX, SB_COPY_FILES_MAX, SB_COPY_DEPTH_MAX };
	struct untar_stats st = { 0 };
	struct sb_error *err = NULL;
	_cleanup_close_ int rfd = -1, afd = -1;
	uint64_t left = 0;

	if (r->collected[0] != NULL || r->collected[1] != NULL) {
		if (mkdir(r->archive, 0755) == 0 || errno == EEXIST)
			afd = sb_open_dir(r->archive, &err);
		if (afd >= 0)
			rfd = sb_open_dir(r->run_dir, &err);
		if (rfd < 0 && err != NULL)
			sb_log(SB_LOG_WARN, "the collected results: %s", sb_error_message(err));
		sb_error_release(&err);
	}
	/* The results first, then the archive: each stream may hold only its own tree. */
	for (size_t i = 0; i < SB_ARRAY_SIZE(r->collected); i++) {
		struct untar_root roots[] = { { "results", rfd }, { "archive", afd } };
		_cleanup_close_ int tfd = -1;

		if (r->collected[i] == NULL)
			continue;
		tfd = open(r->collected[i], O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (tfd >= 0 && rfd >= 0) {
			if (untar_fd(tfd, &roots[i], 1, &lim, &st, &err) < 0)
				sb_log(SB_LOG_WARN, "the collected %s: %s", roots[i].name,
				    sb_error_message(err));
			sb_error_release(&err);
			progress("collected %llu files (%llu bytes) of the %s; %llu entries left "
				 "behind (links, special files, second names, too deep or too many)",
			    (unsigned long long)st.files, (unsigned long long)st.bytes,
			    roots[i].name, (unsigned long long)st.left);
			left += st.left;
		}
		(void)unlink(r->collected[i]);
	}
	st.left = left;
	r->archive_left = st.left;
	if (r->k8s_made) {
		if (kube_delete_run(&r->kube, r->k8s_name, &err) < 0) {
			sb_log(SB_LOG_WARN, "deleting Job %s: %s", r->k8s_name, sb_error_message(err));
			sb_error_release(&err);
		} else {
			r->k8s_made = false;
		}
	}
}

/*
 * Phase 4: the container(s): the agent's volumes over the run's file system, in sidecar
 * mode the task container, then the agent's container, to its end.
 */
static int
run_start(struct run *r)
{
	struct run_opts *o = r->o;
	struct sb_error *err = NULL;

	if (sb_sig_interrupted() != 0) {
		(void)cli_fail("interrupted before the run started");
		return run_stop(r, SB_EXIT_INTERRUPTED);
	}
	if (r->k8s)
		return k8s_start(r);
	if (fill_ctx(r, &err) < 0)
		return run_fail(r, &err);
	/* The agent's tree and home, over the run's file system (filled from the image). */
	r->rx.vol_source = sb_xasprintf("ssebench-%s-source", o->run_id);
	r->rx.vol_home = sb_xasprintf("ssebench-%s-home", o->run_id);
	if (disk_volume(&r->rx, r->rx.vol_source, DISK_SRC, &err) < 0 ||
	    disk_volume(&r->rx, r->rx.vol_home, DISK_HOME, &err) < 0)
		return run_fail(r, &err);
	r->container = sb_xasprintf("ssebench-%s", o->run_id);
	if (r->sidecar) {
		r->task_container = sb_xasprintf("ssebench-%s-task", o->run_id);
		if (sidecar_start_task(&r->rx, r->task, r->task_image, r->task_container, &err) < 0)
			return run_fail(r, &err);
	}
	if (run_agent_container(r, &err) < 0)
		return run_fail(r, &err);
	if (r->sidecar)
		sidecar_finish(&r->rx, r->task_container, o->keep);
	r->container_done = true;
	return 0;
}

/*
 * After the container: the archive comes home, the run's file system and network go
 * unless kept, and the run key, what it spent read, goes.
 */
static void
run_wind_down(struct run *r)
{
	struct run_opts *o = r->o;
	struct sb_error *err = NULL;
	uint64_t left = 0;

	if (r->k8s) {
		k8s_wind_down(r);
		return;
	}
	/* What the agent left in its archive comes home sanitised (disk.h). */
	if (disk_copy_archive(&r->disk, r->archive, &left, &err) < 0) {
		sb_log(SB_LOG_WARN, "the archive: %s", sb_error_message(err));
		sb_error_release(&err);
	} else if (left > 0) {
		progress("the archive: %llu entr%s left behind (links, special files, second "
			 "names, too deep or too many)",
		    (unsigned long long)left, left == 1 ? "y" : "ies");
	}
	r->archive_left = left;
	/* Kept: the file system stays while the container does (runs stop leaves it, runs
	 * remove takes both, and the next run sweeps a disk whose containers are gone). */
	if (!o->keep || !container_exists(r->container)) {
		disk_volumes_remove(&r->rx);
		disk_release(&r->disk);
		r->disk_made = false;
	}
	/* A kept run keeps its network (its daemon still serves); runs remove takes it. */
	if (!o->keep && r->net_made) {
		net_remove(r->rx.net);
		r->net_made = false;
	}
	/* The run key has done its work: what it spent, then it goes (proxy.h). Usually that
	 * was done when the agent phase ended; a run that ended early still has its key. */
	if (r->px.minted && (!r->pe.spend_read || !r->pe.tokens_read)) {
		r->pe.px = &r->px;
		read_key_usage(&r->pe);
	}
	if (r->pe.spend_read)
		r->spend = r->pe.spend;
	end_run_key(&r->px);
}

/*
 * The result of a run whose pod Kubernetes evicted for the agent's disk use
 * (k8s_eviction_is_agents): a forfeit, which counts as not passed in the tier the run
 * claimed, as a forfeit does on Docker. The pod's sandbox had started; its isolation record
 * went with the pod, so the result carries the kubelet's message instead of phases.
 */
static json_t *
k8s_forfeit(const struct run *r)
{
	const char *egress = r->o->egress;
	_cleanup_free_ char *why = sb_xasprintf("Forfeit: Kubernetes evicted the run's pod for the "
						"agent's disk use (%s)", r->evicted);
	json_t *res = sb_ungraded_result(true, why, NULL, NULL);

	/* A message that is not UTF-8 is the kubelet's, but not ours to copy. */
	if (res == NULL)
		res = sb_ungraded_result(true, "Forfeit: Kubernetes evicted the run's pod for the "
					       "agent's disk use", NULL, NULL);
	json_object_set_new(res, "isolation", json_pack("{s:s, s:b, s:s, s:s, s:[s], s:{}, s:o}",
	    "outcome", "forfeit", "scored", 1, "tier", egress, "egress", egress, "failed",
	    "agent_disk_within_limit", "phases", "evicted",
	    json_string(r->evicted) ?: json_null()));
	json_object_set_new(res, "scored", json_true());
	return res;
}

/*
 * result.json: what the container wrote, judged (run_outcome), with the checks of the run
 * directory, the network and the run's configuration, which *ret_cfg gets too.
 */
static int
write_result(struct run *r, int rfd, json_t **ret_cfg, struct sb_error **err)
{
	struct run_opts *o = r->o;
	const struct phase_end *pe = &r->pe;
	_cleanup_free_ char *freezer_record = NULL;
	bool key_before_grading = false;
	json_t *cfg;

	{
		_cleanup_free_ char *foreign = pe->foreign != NULL
		    ? sb_xasprintf("the run's network %s held another container: %s", r->rx.net,
			  pe->foreign)
		    : NULL;
		json_t *iso = NULL;

		if (sb_json_load_file_at(rfd, "result.json", SB_JSON_FILE_MAX, &r->result,
			NULL) < 0)
			r->result = NULL;
		if (sb_json_load_file_at(rfd, "isolation.json", SB_JSON_FILE_MAX, &iso, NULL) < 0)
			iso = NULL;
		/*
		 * Revoked before grading: the key went, and the entrypoint read that before it
		 * graded (not a revocation after its 60 s had run out, or an answer it never got).
		 */
		{
			const char *said = json_string_value(json_object_get(iso,
			    "proxy_key_before_grading"));

			key_before_grading = pe->key_revoked && said != NULL &&
			    strcmp(said, "revoked") == 0;
		}
		/*
		 * A Ctrl-C after the container ended but before this record is written
		 * still interrupts the run: the user stopped it before it was over.
		 */
		if (sb_sig_interrupt_count() > 0)
			r->interrupted = true;
		if (r->evicted != NULL && !r->interrupted) {
			json_decref(r->result);
			json_decref(iso);
			r->result = k8s_forfeit(r);
			r->outcome = SB_ISO_FORFEIT;
		} else {
			r->result = run_outcome(r->result, iso, o->egress, r->interrupted, foreign,
			    &r->outcome);
		}
	}
	{
		struct results_check rc2 = { 0, 0, 0 };

		check_results_dir(rfd, 1, &rc2);
		if (rc2.removed + rc2.fixed > 0)
			sb_log(SB_LOG_WARN, "the run directory held %llu entries it must not "
			    "(removed) and %llu directories with loose modes (fixed)",
			    (unsigned long long)rc2.removed, (unsigned long long)rc2.fixed);
		json_object_set_new(r->result, "results_check",
		    json_pack("{s:I, s:I, s:I}", "archive_left_behind", (json_int_t)r->archive_left,
			"removed", (json_int_t)rc2.removed, "fixed", (json_int_t)rc2.fixed));
	}
	json_object_set_new(r->result, "network",
	    json_pack("{s:s, s:o, s:b, s:b}", "name", r->rx.net, "foreign",
		sb_json_string_or_null(pe->foreign), "checked", pe->net_checked,
		"proxy_key_revoked_before_grading", key_before_grading));
	r->scored = r->outcome != SB_ISO_UNSCORED;
	/* In sidecar mode only the task container's processes of the agent (its bash
	 * calls) are in the cgroup; the agent's own container is apart, not frozen. */
	if (r->rx.agent_freezer == NULL || strcmp(r->rx.agent_freezer, "signals") == 0)
		freezer_record = sb_xstrdup("signals");
	else
		freezer_record = sb_xasprintf("%s%s", r->rx.agent_freezer,
		    r->sidecar ? "-task-container" : "");
	/* Sidecar mode has its own two layers: no tool layer (docs/upstream.md, "Result
	 * files": tool_layer). */
	cfg = json_pack("{s:s, s:s, s:s, s:I, s:i, s:o, s:s, s:b, s:[], s:o, s:I, s:s}",
	    "agent", o->agent, "model", o->model, "mode", o->mode, "timeout",
	    (json_int_t)o->timeout, "difficulty", (int)o->difficulty, "tool_layer",
	    r->sidecar ? json_null() : json_string("sandbox"), "egress", o->egress,
	    "reference_run", r->reference, "plugins", "runtime",
	    sb_json_string_or_null(o->runtime), "runner_uid", (json_int_t)r->rx.runner_uid,
	    "agent_freezer", freezer_record);
	json_object_set(r->result, "config", cfg);
	*ret_cfg = cfg;
	return sb_json_write_atomic_at(rfd, "result.json", r->result, 0644, err);
}

/* summary.json: the task, the result's main parts, the images, the timing, usage, flags. */
static int
write_summary(struct run *r, int rfd, json_t *cfg, struct sb_error **err)
{
	struct run_opts *o = r->o;
	const json_t *result = r->result, *gr = json_object_get(result, "grading_result");
	json_auto_t *summary = NULL;
	char ts[32];

	summary = json_pack("{s:o, s:O, s:O, s:O, s:O, s:b, s:f, s:s, s:s, s:[], "
			    "s:{s:s, s:s, s:s}}",
	    "task", sb_task_config_to_json(r->task->config), "config", cfg, "patch_result",
	    json_object_get(result, "patch_result"), "runtime_result",
	    json_object_get(result, "runtime_result") ? json_object_get(result, "runtime_result")
						       : json_null(),
	    "isolation", json_object_get(result, "isolation"), "scored", r->scored,
	    "spend", r->spend, "run_id", o->run_id, "started_at", r->started_at, "plugin_results",
	    "images", "case", r->case_image, "agent", r->agent_image, "case_task_files", r->digest);
	json_object_set_new(json_object_get(summary, "images"), "task",
	    json_string(r->task_image));
	if (r->agent_pinned != NULL)
		json_object_set_new(json_object_get(summary, "images"), "agent_pinned",
		    json_string(r->agent_pinned));
	json_object_set(summary, "network", json_object_get(result, "network"));
	utc_second(ts);
	json_object_set_new(summary, "finished_at", json_string(ts));
	json_object_set_new(summary, "duration_s", json_real(progress_clock() - r->t0));
	json_object_set_new(summary, "usage", run_usage(r->archive, &r->pe));
	r->flags = run_flags(r->archive, rfd, r->task, r->ds->canary, &r->flags_total,
	    &r->flag_counts);
	json_object_set(summary, "flags", r->flags);
	json_object_set_new(summary, "flags_total", json_integer(r->flags_total));
	json_object_set_new(summary, "flag_counts", r->flag_counts);
	r->flag_counts = NULL;
	if (o->job_id != NULL)
		json_object_set_new(summary, "job", json_pack("{s:s, s:I}", "id", o->job_id,
		    "attempt", (json_int_t)(o->attempt ? o->attempt : 1)));
	json_object_set(summary, "results_check", json_object_get(result, "results_check"));
	/* What grading found about the patch (docs/grading.md), without the oracle's
	 * per-object facts, which stay in result.json. */
	json_object_set_new(summary, "grading",
	    json_is_object(gr)
		? json_pack("{s:O?, s:O?, s:O?, s:O?}", "patch_scope",
		      json_object_get(gr, "patch_scope"), "reverted_paths",
		      json_object_get(gr, "reverted_paths"), "oracle_passed",
		      json_object_get(gr, "oracle_passed"), "tests", json_object_get(gr, "tests"))
		: json_null());
	return sb_json_write_atomic_at(rfd, "summary.json", summary, 0644, err);
}

/* The reference patch, for the web UI and people, once the run is over. */
static void
write_reference_patch(const struct run *r, int rfd)
{
	const struct sb_task *task = r->task;
	_cleanup_free_ char *tdir = sb_xasprintf("%s/%s", r->ds->path, task->name);
	_cleanup_free_ char *target = sb_xasprintf("/ssebench/%s", task->config->files.patch.s);
	_cleanup_close_ int tfd = sb_open_dir(tdir, NULL);
	_cleanup_free_ char *src = task->config->files.patch.s && tfd >= 0
		? sb_task_context_source(task, tfd, target)
		: NULL;
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(SB_JSON_FILE_MAX);

	if (src != NULL && sb_read_file_at(tfd, src, 0, &b, NULL) == 0)
		(void)sb_write_file_atomic_at(rfd, "reference.patch", b.s, b.len, 0644, NULL);
}

/* The outcome for people (and with --json, the object for a CI job); r->rc from it. */
static void
report_outcome(struct run *r)
{
	struct run_opts *o = r->o;
	json_t *pr = json_object_get(r->result, "patch_result");
	const json_t *gr = json_object_get(r->result, "grading_result");
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
	print_scope(h, json_object_get(gr, "patch_scope"), json_object_get(gr, "reverted_paths"));
	run_print_flags(h, r->flags, r->flags_total);
	if (!r->scored && !r->interrupted)
		fprintf(h, "NOT SCORED: this run could not establish its isolation; see "
		       "isolation.json\n");
	if (r->outcome == SB_ISO_FORFEIT)
		fprintf(h, r->evicted != NULL
			? "FORFEIT: Kubernetes evicted the pod for the agent's disk use; this run "
			  "counts as not passed\n"
			: "FORFEIT: the isolation broke during the agent phase; this run counts as "
			  "not passed (see isolation.json)\n");
	fprintf(h, "results: %s\n", cli_safe(r->run_dir));
	/* An unscored run is the harness's failure, not the agent's: never exit 0. */
	r->rc = r->interrupted ? SB_EXIT_INTERRUPTED
		: !r->scored ? SB_EXIT_FAILURE
		: (o->require_pass && (status == NULL || strcmp(status, "passed") != 0))
		? SB_EXIT_FAILURE
		: SB_EXIT_OK;
	if (o->json_events)
		print_json_result(o, r->result, status, r->scored, r->interrupted,
		    r->outcome == SB_ISO_FORFEIT, r->flags_total, r->run_dir, r->rc);
}

/*
 * Phase 5: what the container left: the archive home and the run's things put away
 * (run_wind_down), then result.json, summary.json and the reference patch in the run
 * directory, and the outcome said.
 */
static int
run_collect(struct run *r)
{
	_cleanup_close_ int rfd = -1;
	struct sb_error *err = NULL;
	json_t *cfg = NULL;
	int k;

	run_wind_down(r);
	rfd = sb_open_dir(r->run_dir, &err);
	if (rfd < 0)
		return run_fail(r, &err);
	k = write_result(r, rfd, &cfg, &err);
	if (k == 0)
		k = write_summary(r, rfd, cfg, &err);
	json_decref(cfg);
	if (k < 0)
		return run_fail(r, &err);
	write_reference_patch(r, rfd);
	report_outcome(r);
	return 0;
}

/*
 * Whatever the phases made and the run does not keep, taken down in every case: the run
 * key, a sidecar run's task container and volumes if its agent container never ended, the
 * network and file systems unless kept, the cgroup, the secrets.
 */
static void
run_cleanup(struct run *r)
{
	char **owned[] = { &r->parent, &r->run_dir, &r->case_image, &r->task_image,
		&r->agent_image, &r->agent_pinned, &r->log_path, &r->archive, &r->secrets_dir,
		&r->secrets, &r->ref, &r->container, &r->task_container, &r->started_at,
		&r->k8s_name, &r->pod, &r->collected[0], &r->collected[1], &r->evicted };
	struct run_opts *o = r->o;

	end_run_key(&r->px);
	proxy_release(&r->px);
	/* Whatever made it into the cluster goes (after collection k8s_wind_down did it). */
	if (r->k8s_made) {
		struct sb_error *err = NULL;

		if (kube_delete_run(&r->kube, r->k8s_name, &err) < 0) {
			sb_log(SB_LOG_WARN, "deleting Job %s: %s; `ssebench runs remove %s "
					    "--backend kubernetes` retries", r->k8s_name,
			    sb_error_message(err), o->run_id);
			sb_error_release(&err);
		}
	}
	for (size_t i = 0; i < SB_ARRAY_SIZE(r->collected); i++)
		if (r->collected[i] != NULL)
			(void)unlink(r->collected[i]);
	/* A sidecar run that failed before its agent container ended leaves nothing behind. */
	if (r->sidecar && !r->container_done &&
	    (r->rx.vol_source != NULL || r->task_container != NULL))
		sidecar_finish(&r->rx, r->task_container, o->keep);
	if (r->net_made && !o->keep)
		net_remove(r->rx.net);
	/* Failed before the container ran, or not kept: the run's file system goes. */
	if (r->disk_made && (!o->keep || !r->container_done)) {
		disk_volumes_remove(&r->rx);
		disk_release(&r->disk);
	}
	/* A kept container keeps its cgroup (an empty directory once its agent is gone). */
	if (!o->keep || !r->container_done)
		agent_cgroup_remove(r->rx.agent_cgroup);
	if (r->pe.run_fd >= 0)
		close(r->pe.run_fd);
	sb_argv_release(&r->ks.proxy_pods);
	free(r->proxy_alias[0]);
	free(r->proxy_alias[1]);
	free(r->pe.foreign);
	run_ctx_release(&r->rx);
	if (r->secrets_dir != NULL) {
		_cleanup_free_ char *prof = sb_xasprintf("%s/seccomp.json", r->secrets_dir);

		if (r->secrets != NULL)
			(void)unlink(r->secrets);
		if (r->ref != NULL)
			(void)unlink(r->ref);
		(void)unlink(prof);
		(void)rmdir(r->secrets_dir);
	}
	json_decref(r->result);
	json_decref(r->flags);
	json_decref(r->flag_counts);
	agent_info_release(&r->ag);
	sb_dataset_free(r->ds);
	sb_diags_release(&r->diags);
	sb_sig_set_deferred(SB_SIG_DEFER_NONE);
	for (size_t i = 0; i < SB_ARRAY_SIZE(owned); i++)
		free(*owned[i]);
}

/*
 * One run (docs/upstream.md, "What a run does"), phase by phase; a phase that stops the
 * run has said why and set its exit status. A job runs each of its runs as a child
 * `ssebench run` (job.c): the images phase alone (--images-only), then every phase with
 * the images only checked (--images-ready).
 */
static int
run_one(struct run_opts *o)
{
	struct run r = { .o = o, .rc = SB_EXIT_FAILURE, .diags = SB_DIAGS_INIT,
		.pe = { .run_fd = -1 }, .outcome = SB_ISO_UNSCORED, .ks = K8S_SETTINGS_INIT };

	r.t0 = progress_clock();
	r.rx.o = o;
	r.sidecar = strcmp(o->mode, "sidecar") == 0;
	r.k8s = strcmp(o->backend, "kubernetes") == 0;
	if (run_check(&r) == 0 && run_build_images(&r) == 0 && run_prepare_host(&r) == 0 &&
	    run_prepare_dir(&r) == 0 && run_start(&r) == 0)
		(void)run_collect(&r);
	run_cleanup(&r);
	return r.rc;
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
	free(o->backend);
	free(o->config);
	free(o->job_id);
	sb_argv_release(&o->tasks);
	sb_argv_release(&o->task_patterns);
	sb_argv_release(&o->agents);
	sb_argv_release(&o->models);
	memset(o, 0, sizeof(*o));
}

/*
 * The options taken together: one run or a job, and the values that must be one of a few;
 * not 0 on an error, *ret_rc its exit status. runtime_flag: the runtime came from
 * --runtime, not a setting.
 */
static int
run_opts_check(const struct cli_command *cmd, struct run_opts *o, bool runtime_flag,
    int *ret_rc)
{
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
	if (strcmp(o->backend, "docker") != 0 && strcmp(o->backend, "kubernetes") != 0)
		return *ret_rc = cli_usage_error(cmd, "--backend (or SSEBENCH_BACKEND) must be "
						      "docker or kubernetes");
	if (strcmp(o->backend, "kubernetes") == 0 && strcmp(o->mode, "sidecar") == 0)
		return *ret_rc = cli_usage_error(cmd, "--backend kubernetes runs sandbox mode only "
						      "(docs/kubernetes.md)");
	/* A kept run's daemon serves on and its container never ends: on Kubernetes the
	 * results are collected only once it has (k8s_wait). */
	if (strcmp(o->backend, "kubernetes") == 0 && o->keep)
		return *ret_rc = cli_usage_error(cmd, "--keep-container is not available with "
						      "--backend kubernetes (docs/kubernetes.md)");
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
	return 0;
}

/*
 * The options into *o (released by the caller in every case); -1 with *ret_rc on an error.
 * Long because it is getopt's option table and its switch, one case per option; what the
 * options mean together is run_opts_check's.
 */
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
		{ "backend", required_argument, NULL, 'B' },
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
	o->backend = sb_xstrdup(cli_setting("SSEBENCH_BACKEND", "docker"));
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
		case 'B': free(o->backend); o->backend = sb_xstrdup(optarg); break;
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
	if (run_opts_check(cmd, o, runtime_flag, ret_rc) != 0)
		return -1;
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
		rc = o.task != NULL ? run_one(&o) : job_run(&o);
		/* A run that ended before its outcome still gives a CI job its one object. */
		if (o.task != NULL && o.json_events && !o.json_printed)
			print_json_result(&o, NULL, NULL, false, rc == SB_EXIT_INTERRUPTED, false, 0,
			    NULL, rc);
	}
	run_opts_release(&o);
	return rc;
}

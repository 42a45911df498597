/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sidecar.c: the two halves of a sidecar run (docs/sidecar.md, "What a run does").
 *
 * The task container (--sidecar-task) holds the task and runs the daemon; the agent
 * container (--sidecar-agent) runs the agent, then the evaluator over the admin socket.
 * Each establishes the isolation it can see: the task side probes as the agent user and as
 * the runner where /ssebench and /ssebench-repo are, the agent side probes as the agent
 * where the agent really runs. The task side writes its record to the results directory
 * (EP_SIDECAR_TASK_RECORD); the agent side folds it into its own (sb_iso_merge_json), so a
 * property broken on either side fails the run, and a side that never reported leaves its
 * properties unchecked, which fails it too (docs/design.md, "Fail closed").
 *
 * The hand-over happens through files in the results directory because it is the one place
 * both entrypoints reach and neither the agent nor the runner can: its parent is 0700 root
 * in both containers (docs/design.md, "Layout of a run container"). Nothing the agent writes can
 * forge a record or end a phase early.
 */
#include "config.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sb/exit.h"
#include "sb/fs.h"
#include "sb/json.h"
#include "sb/limits.h"
#include "sb/mem.h"
#include "sb/path.h"
#include "sb/spawn.h"

#include "entrypoint.h"

#define SIDECAR_POLL_MS	  200	/* between two looks at a hand-over file */
#define SIDECAR_MARGIN_S  600	/* the task container outlives a forgotten run by this */

const char *
ep_role_name(enum ep_role role)
{
	switch (role) {
	case EP_ROLE_SIDECAR_TASK:
		return "sidecar-task";
	case EP_ROLE_SIDECAR_AGENT:
		return "sidecar-agent";
	case EP_ROLE_SANDBOX:
		break;
	}
	return "sandbox";
}

/*
 * The directory of both sockets, on the volume the two containers share: root's, mode
 * 0711. The agent may pass through it to connect to the agent socket; it may not list it,
 * and it may not create, rename or remove anything in it, so it can neither move a socket
 * nor put a server of its own in the daemon's place (docs/sidecar.md, "Security
 * properties"). The admin socket lives one directory further down, in a 0700 directory the
 * daemon makes and checks. Whatever mode the volume came with, it is set here, through a
 * descriptor, on a directory that is really one (a link is refused).
 */
static int
prepare_socket_dir(struct ep *ep, struct sb_error **err)
{
	_cleanup_free_ char *copy = sb_xstrdup(ep->cfg.daemon_socket);
	_cleanup_free_ char *acopy = sb_xstrdup(ep->cfg.admin_socket);
	_cleanup_close_ int fd = -1;
	char *dir = copy, *slash = strrchr(copy, '/');
	const char *adir;
	struct stat st, lst;

	if (slash == NULL || slash == copy)
		return sb_error_set(err, EINVAL,
		    "SSE_DAEMON_SOCKET='%s' must be in a directory of its own in sidecar mode",
		    ep->cfg.daemon_socket);
	*slash = '\0';
	slash = strrchr(acopy, '/');
	if (slash != NULL)
		*slash = '\0';
	adir = acopy;
	/* The admin socket must not sit next to the agent's: its directory is 0711 here. */
	if (strcmp(adir, dir) == 0 || sb_path_below(adir, dir) == NULL)
		return sb_error_set(err, EINVAL,
		    "SSE_ADMIN_SOCKET='%s' must be in a directory below '%s' in sidecar mode",
		    ep->cfg.admin_socket, dir);
	if (mkdir(dir, 0711) < 0 && errno != EEXIST)
		return sb_error_errno(err, errno, "mkdir '%s'", dir);
	if (lstat(dir, &lst) < 0)
		return sb_error_errno(err, errno, "lstat '%s'", dir);
	if (!S_ISDIR(lst.st_mode))
		return sb_error_set(err, ENOTDIR, "'%s' is not a directory", dir);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sb_error_errno(err, errno, "open '%s'", dir);
	if (fstat(fd, &st) < 0 || st.st_ino != lst.st_ino || st.st_dev != lst.st_dev)
		return sb_error_set(err, EAGAIN, "'%s' changed while it was opened", dir);
	if (fchown(fd, 0, 0) < 0 || fchmod(fd, 0711) < 0)
		return sb_error_errno(err, errno, "make '%s' root's, mode 0711", dir);
	ep_log(SB_LOG_INFO, "socket directory '%s': root, 0711 (was uid %u, mode %04o)", dir,
	    (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	return 0;
}

/* Is the hand-over file name there (a regular file, not a link)? */
static bool
results_file_exists(struct ep *ep, const char *name)
{
	struct stat st;

	return fstatat(ep->results_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* The task container starts its daemon (up to SSE_DAEMON_TIMEOUT) and probes: 120 s. */
static uint64_t
wait_limit_s(const struct ep *ep)
{
	return ep->cfg.sidecar_wait_s;
}

int
ep_sidecar_task(struct ep *ep)
{
	struct sb_error *err = NULL;
	uint64_t deadline = UINT64_MAX;
	bool phase_ended = false;

	if (!ep->cfg.keep_alive)
		deadline = ep->t0 + (ep->cfg.timeout_s + EP_EVALUATOR_SLACK_S + SIDECAR_MARGIN_S) *
		    1000;
	if (prepare_socket_dir(ep, &err) < 0 || ep_start_daemon(ep, &err) < 0) {
		ep_log(SB_LOG_ERROR, "%s", sb_error_message(err));
		sb_error_release(&err);
		return SB_EXIT_FAILURE;
	}
	/*
	 * The record is written whatever it says: the agent container reads it and, if a
	 * property failed here, does not run the agent (docs/design.md, "Fail closed").
	 */
	(void)ep_isolation_establish(ep, SB_ISO_BEFORE_AGENT);
	ep_log(SB_LOG_INFO, "waiting for the agent container to end the agent phase");
	while (ep->stop_signal == 0 && ep_child_running(&ep->daemon) && sb_now_ms() < deadline) {
		if (results_file_exists(ep, EP_SIDECAR_PHASE_ENDED)) {
			phase_ended = true;
			break;
		}
		ep_wait(ep, sb_now_ms() + SIDECAR_POLL_MS);
	}
	if (phase_ended) {
		/* The daemon killed them when told; anything started since goes too. */
		ep_kill_agent_uid(ep, "end of the agent phase");
		ep_kill_helper_uids(ep, "end of the agent phase");
		(void)ep_isolation_establish(ep, SB_ISO_BEFORE_GRADING);
		ep_log(SB_LOG_INFO, "the daemon stays up for grading until this container is "
				    "stopped");
		while (ep->stop_signal == 0 && ep_child_running(&ep->daemon) &&
		       sb_now_ms() < deadline)
			ep_wait(ep, deadline);
	}
	if (ep->stop_signal == 0 && !ep_child_running(&ep->daemon))
		ep_log(SB_LOG_ERROR, "the daemon exited with status %d", ep->daemon.status);
	else if (ep->stop_signal == 0)
		ep_log(SB_LOG_WARN, "nobody stopped this container within %llu s; stopping",
		    (unsigned long long)((deadline - ep->t0) / 1000));
	ep_cleanup(ep);
	ep_log(SB_LOG_INFO, "exiting after %.1f s", ep_secs(ep->t0));
	return ep->stop_signal != 0 ? SB_EXIT_OK : SB_EXIT_FAILURE;
}

int
ep_sidecar_wait_task(struct ep *ep, enum sb_iso_phase ph, struct sb_error **err)
{
	uint64_t start = sb_now_ms(), deadline = start + wait_limit_s(ep) * 1000;

	ep_log(SB_LOG_INFO, "waiting up to %llu s for the task container (%s)",
	    (unsigned long long)wait_limit_s(ep), sb_iso_phase_name(ph));
	for (;;) {
		json_t *doc;

		if (ep->stop_signal != 0)
			return sb_error_set(err, EINTR, "stopped while waiting for the task container");
		doc = ep_task_record_load(ep, ph);
		json_decref(doc);
		if (doc != NULL && (ph != SB_ISO_BEFORE_AGENT ||
				       (ep_probe_socket(ep->cfg.daemon_socket) == 0 &&
					   ep_probe_socket(ep->cfg.admin_socket) == 0)))
			break;
		if (sb_now_ms() >= deadline)
			return sb_error_set(err, ETIMEDOUT,
			    "the task container did not record its isolation %s within %llu s "
			    "(see task-entrypoint.log and daemon.log)",
			    sb_iso_phase_name(ph), (unsigned long long)wait_limit_s(ep));
		ep_wait(ep, sb_now_ms() + SIDECAR_POLL_MS);
	}
	ep_log(SB_LOG_INFO, "the task container is ready (%s) after %.1f s",
	    sb_iso_phase_name(ph), ep_secs(start));
	return 0;
}

int
ep_mark_phase_ended(struct ep *ep, struct sb_error **err)
{
	return sb_write_file_atomic_at(ep->results_fd, EP_SIDECAR_PHASE_ENDED, "ended\n", 6, 0644,
	    err);
}

/*
 * The CLI's answer appears in the results (on Docker the run directory, which the CLI
 * writes on the host), or in SSE_KEY_ANSWER: on Kubernetes a volume that the pod's
 * collect container writes and this container mounts read-only (docs/kubernetes.md,
 * "Models"). Opened without following a link; -1 while it cannot be.
 */
static int
key_answer_dir(struct ep *ep)
{
	if (strcmp(ep->cfg.key_answer, ep->cfg.results) == 0)
		return fcntl(ep->results_fd, F_DUPFD_CLOEXEC, 3);
	return open(ep->cfg.key_answer, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

void
ep_wait_key_revoked(struct ep *ep)
{
	uint64_t deadline = sb_now_ms() + (uint64_t)EP_KEY_WAIT_S * 1000;
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(64);

	while (ep->stop_signal == 0 && sb_now_ms() < deadline) {
		_cleanup_close_ int dfd = key_answer_dir(ep);

		if (dfd >= 0 &&
		    sb_read_file_at(dfd, EP_KEY_REVOKED, SB_OPEN_NO_SYMLINKS, &b, NULL) == 0) {
			sb_buf_rtrim(&b);
			snprintf(ep->key_status, sizeof(ep->key_status), "%s", b.s);
			ep_log(b.len > 0 && strcmp(b.s, "revoked") == 0 ? SB_LOG_INFO : SB_LOG_WARN,
			    "the run's proxy key before grading: %s", ep->key_status);
			return;
		}
		ep_wait(ep, sb_now_ms() + SIDECAR_POLL_MS);
	}
	snprintf(ep->key_status, sizeof(ep->key_status), "no word from the CLI in %d s",
	    EP_KEY_WAIT_S);
	ep_log(SB_LOG_WARN, "the run's proxy key before grading: %s; grading goes on (its code "
			    "has no network)", ep->key_status);
}

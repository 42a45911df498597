/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dirs.c: the run's directories (docs/design.md, "Layout of a run container"): the results
 * directory, made private to root, and our logs in it; the archive, handed to the agent user
 * for the agent phase and given back, safely, once every process of the agent is gone.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <string.h>
#include <sys/stat.h>

#include "sb/limits.h"
#include "sb/mem.h"
#include "sb/path.h"

#include "entrypoint.h"

/* mkdir -p with mode 0755 for each missing component (we are alone at this point). */
static int
mkdir_parents(const char *path, struct sb_error **err)
{
	_cleanup_free_ char *copy = sb_xstrdup(path);

	for (char *p = copy + 1;; p++) {
		char c = *p;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (mkdir(copy, 0755) < 0 && errno != EEXIST)
			return sb_error_errno(err, errno, "mkdir '%s'", copy);
		*p = c;
		if (c == '\0')
			return 0;
	}
}

/*
 * Open a directory that must really be one: lstat first (a symbolic link is refused), then
 * open with O_NOFOLLOW and check that the same inode was opened.
 */
static int
open_dir_checked(const char *path, struct stat *ret_st, struct sb_error **err)
{
	struct stat st, fst;
	int fd;

	if (lstat(path, &st) < 0)
		return sb_error_errno(err, errno, "lstat '%s'", path);
	if (!S_ISDIR(st.st_mode))
		return sb_error_set(err, ENOTDIR, "'%s' is not a directory%s", path,
		    S_ISLNK(st.st_mode) ? " (a symbolic link)" : "");
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sb_error_errno(err, errno, "open '%s'", path);
	if (fstat(fd, &fst) < 0 || fst.st_dev != st.st_dev || fst.st_ino != st.st_ino) {
		close(fd);
		return sb_error_set(err, EAGAIN, "'%s' changed while it was opened", path);
	}
	*ret_st = fst;
	return fd;
}

/*
 * The results directory holds the grade and the logs. Its parent is made 0700 root
 * (docs/design.md, "Layout of a run container"), so neither the
 * agent nor the runner can reach anything in it, whoever owns the run directory on the
 * host. A world-writable or sticky parent (/tmp) is refused rather than closed: making it
 * 0700 would break every other user of it.
 */
int
ep_results_setup(struct ep *ep, struct sb_error **err)
{
	_cleanup_free_ char *copy = sb_xstrdup(ep->cfg.results);
	_cleanup_close_ int pfd = -1;
	const char *parent = dirname(copy);
	const char *base = sb_path_basename(ep->cfg.results);
	struct stat st;
	int fd;

	if (mkdir_parents(parent, err) < 0)
		return -1;
	pfd = open_dir_checked(parent, &st, err);
	if (pfd < 0)
		return -1;
	if (st.st_mode & (S_IWOTH | S_ISVTX))
		return sb_error_set(err, EPERM,
		    "refusing to make '%s' private: it is a shared directory (mode %04o)", parent,
		    (unsigned)(st.st_mode & 07777));
	/* Changed only if needed: in a run it is on the read-only root, made so by the image. */
	if (((st.st_uid != 0 || st.st_gid != 0) && fchown(pfd, 0, 0) < 0) ||
	    ((st.st_mode & 07777) != 0700 && fchmod(pfd, 0700) < 0))
		return sb_error_errno(err, errno, "make '%s' 0700 root", parent);
	if (mkdirat(pfd, base, 0755) < 0 && errno != EEXIST)
		return sb_error_errno(err, errno, "mkdir '%s'", ep->cfg.results);
	fd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sb_error_errno(err, errno, "open '%s' (must be a directory, not a link)",
		    ep->cfg.results);
	if (fstat(fd, &st) < 0) {
		sb_error_errno(err, errno, "fstat '%s'", ep->cfg.results);
		close(fd);
		return -1;
	}
	if (st.st_uid != 0)
		ep_log(SB_LOG_WARN, "results directory '%s' is owned by uid %u, not root",
		    ep->cfg.results, (unsigned)st.st_uid);
	ep->results_fd = fd;
	return 0;
}

/*
 * A log file in the results directory: appended (a second run adds to it), never truncated,
 * never through a link, and only a regular file (O_NONBLOCK so a FIFO cannot hang us).
 */
static int
open_log(struct ep *ep, const char *name, struct sb_error **err)
{
	struct stat st;
	int fd;

	fd = openat(ep->results_fd, name,
	    O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
	if (fd < 0)
		return sb_error_errno(err, errno, "open '%s/%s'", ep->cfg.results, name);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    fcntl(fd, F_SETFL, O_WRONLY | O_APPEND) < 0) {
		close(fd);
		return sb_error_set(err, EINVAL, "'%s/%s' is not a regular file", ep->cfg.results,
		    name);
	}
	return fd;
}

/*
 * Sidecar mode shares one results directory between two entrypoints: each opens only the
 * logs of what it runs, and the task container's own log has a name of its own.
 */
int
ep_logs_open(struct ep *ep, struct sb_error **err)
{
	enum ep_role role = ep->cfg.role;

	ep->log_fd = open_log(ep,
	    role == EP_ROLE_SIDECAR_TASK ? "task-entrypoint.log" : "entrypoint.log", err);
	if (ep->log_fd < 0)
		return -1;
	ep_log_to_file(ep->log_fd);
	if (role != EP_ROLE_SIDECAR_AGENT && (ep->daemon_log = open_log(ep, "daemon.log", err)) < 0)
		return -1;
	if (role == EP_ROLE_SIDECAR_TASK)
		return 0;
	ep->agent_log = open_log(ep, "agent.log", err);
	ep->evaluator_log = ep->agent_log < 0 ? -1 : open_log(ep, "evaluator.log", err);
	ep->mcp_log = ep->evaluator_log < 0 ? -1 : open_log(ep, "mcp.log", err);
	return ep->mcp_log < 0 ? -1 : 0;
}

/*
 * The archive is the agent's to write (its dialog, its notes): it is handed to the agent
 * user for the agent phase, and its owner, group and mode are remembered to give it back.
 * We keep a descriptor to the directory itself, so the hand-back acts on the directory we
 * handed over even if the agent renames it and plants something else at the path.
 */
int
ep_archive_hand_over(struct ep *ep, struct sb_error **err)
{
	struct stat st;

	if (mkdir_parents(ep->cfg.archive, err) < 0)
		return -1;
	ep->archive_fd = open_dir_checked(ep->cfg.archive, &st, err);
	if (ep->archive_fd < 0)
		return -1;
	ep->archive_uid = st.st_uid;
	ep->archive_gid = st.st_gid;
	ep->archive_mode = st.st_mode & 07777;
	if (fchown(ep->archive_fd, ep->agent_creds.uid, ep->agent_creds.gid) < 0 ||
	    fchmod(ep->archive_fd, 0755) < 0)
		return sb_error_errno(err, errno, "hand '%s' to '%s'", ep->cfg.archive,
		    ep->cfg.agent_user);
	return 0;
}

struct give_back {
	uid_t uid; /* the archive's original owner */
	gid_t gid;
	uint64_t entries, changed, removed, failed;
	struct sb_error *first; /* the first failure, for the log */
};

/*
 * The mode an entry keeps when it is given back: no set-id or sticky bit and nothing
 * writable by group or others, whatever the agent set (a 0777 directory would stay
 * writable by every later reader of the results; a set-uid file of the agent's uid would
 * stay set-uid on the host, where uid 1000 is often a person). The owner keeps what it
 * needs to read, enter and remove what it now owns.
 */
static mode_t
given_back_mode(mode_t mode)
{
	mode_t m = mode & 0755;

	return S_ISDIR(mode) ? m | 0700 : m | 0600;
}

/* Remove name from dfd (a link, a special file, a second name of a file), counting it. */
static void
give_back_remove(struct give_back *g, int dfd, const char *name)
{
	if (unlinkat(dfd, name, 0) < 0) {
		g->failed++;
		sb_error_errno(&g->first, errno, "remove '%s'", name);
	} else {
		g->removed++;
	}
}

/*
 * Re-own one entry through a descriptor: fd, or a regular file opened here without
 * following a link and checked to be the file fstatat saw, so that even a swap after the
 * look changes nothing but that file.
 */
static void
give_back_entry(struct give_back *g, int dfd, const char *name, int fd, const struct stat *st)
{
	_cleanup_close_ int own = -1;
	struct stat fst;

	if (fd < 0) {
		own = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (own < 0 || fstat(own, &fst) < 0 || !S_ISREG(fst.st_mode) ||
		    fst.st_ino != st->st_ino || fst.st_dev != st->st_dev) {
			g->failed++;
			sb_error_errno(&g->first, own < 0 ? errno : ESTALE, "open '%s'", name);
			return;
		}
		fd = own;
	}
	/* chown first (it clears set-id bits), then the mode that stays. */
	if (fchown(fd, g->uid, g->gid) < 0 || fchmod(fd, given_back_mode(st->st_mode)) < 0) {
		g->failed++;
		sb_error_errno(&g->first, errno, "give back '%s'", name);
	} else {
		g->changed++;
	}
}

/*
 * One directory of the hand-back; d is owned (closed) here. Entries are looked at with
 * AT_SYMLINK_NOFOLLOW and directories opened with O_NOFOLLOW, so nothing the agent planted
 * is followed. What the results may not hold goes: symbolic links (a trap for whoever
 * reads the results later: archive/result.json -> /etc/passwd), special files (a FIFO
 * blocks its reader), and a second name of a file (a hard link to a file elsewhere: chown
 * or chmod would change that file too). A directory deeper than SB_COPY_DEPTH_MAX is made
 * root's and 0700, so nothing below it reaches anyone but root.
 */
static void
give_back_dir(struct give_back *g, DIR *d, unsigned depth)
{
	int dfd = dirfd(d);
	struct dirent *de;

	while ((de = readdir(d)) != NULL) {
		const char *name = de->d_name;
		struct stat st;

		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			continue;
		if (++g->entries > SB_COPY_FILES_MAX) {
			g->failed++;
			sb_error_set(&g->first, EFBIG, "more than %d entries", SB_COPY_FILES_MAX);
			break;
		}
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			g->failed++;
			sb_error_errno(&g->first, errno, "fstatat '%s'", name);
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			struct stat cst;
			DIR *cd;
			int cfd;

			cfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (cfd < 0 || fstat(cfd, &cst) < 0 || cst.st_ino != st.st_ino ||
			    cst.st_dev != st.st_dev) {
				g->failed++;
				sb_error_errno(&g->first, errno, "open directory '%s'", name);
				if (cfd >= 0)
					close(cfd);
				continue;
			}
			if (depth >= SB_COPY_DEPTH_MAX) {
				if (fchown(cfd, 0, 0) < 0 || fchmod(cfd, 0700) < 0) {
					g->failed++;
					sb_error_errno(&g->first, errno, "close off '%s'", name);
				} else {
					g->removed++;
				}
				close(cfd);
				continue;
			}
			give_back_entry(g, dfd, name, cfd, &cst);
			cd = fdopendir(cfd);
			if (cd == NULL) {
				g->failed++;
				sb_error_errno(&g->first, errno, "read directory '%s'", name);
				close(cfd);
				continue;
			}
			give_back_dir(g, cd, depth + 1);
			continue;
		}
		if (!S_ISREG(st.st_mode) || st.st_nlink > 1) {
			give_back_remove(g, dfd, name);
			continue;
		}
		give_back_entry(g, dfd, name, -1, &st);
	}
	closedir(d);
}

/*
 * Give the archive back to its original owner once the agent phase is over and every
 * process of the agent is gone: chown -R and chmod, done safely (the agent could have
 * planted links pointing anywhere, and root follows nothing here), with what the results
 * must not hold removed (give_back_dir).
 */
int
ep_archive_give_back(struct ep *ep, struct sb_error **err)
{
	struct give_back g = { .uid = ep->archive_uid, .gid = ep->archive_gid };
	int fd;
	DIR *d;

	if (ep->archive_fd < 0)
		return 0;
	/* A new open file description: our own offset for readdir. */
	fd = openat(ep->archive_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return sb_error_errno(err, errno, "open '%s'", ep->cfg.archive);
	d = fdopendir(fd);
	if (d == NULL) {
		close(fd);
		return sb_error_errno(err, errno, "read '%s'", ep->cfg.archive);
	}
	give_back_dir(&g, d, 1);
	if (fchown(ep->archive_fd, ep->archive_uid, ep->archive_gid) < 0 ||
	    fchmod(ep->archive_fd, given_back_mode(S_IFDIR | ep->archive_mode)) < 0) {
		g.failed++;
		sb_error_errno(&g.first, errno, "chown '%s'", ep->cfg.archive);
	}
	ep->archive_fd = sb_close(ep->archive_fd);
	if (g.removed > 0)
		ep_log(SB_LOG_WARN,
		    "archive: removed or closed off %llu entries (links, special files, second "
		    "names of files, too deep)", (unsigned long long)g.removed);
	if (g.failed > 0) {
		sb_error_set(err, sb_error_code(g.first), "archive '%s': %llu failures, first: %s",
		    ep->cfg.archive, (unsigned long long)g.failed, sb_error_message(g.first));
		sb_error_release(&g.first);
		return -1;
	}
	ep_log(SB_LOG_INFO, "archive '%s' given back to uid %u (%llu entries)", ep->cfg.archive,
	    (unsigned)ep->archive_uid, (unsigned long long)g.changed);
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* cgroup.c: the agent's freezer cgroup of a run (cgroup.h). */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "sb/freezer.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/parse.h"

#include "cgroup.h"

/* Where a run's cgroup may be, in the order tried. */
static const struct {
	const char *root, *kind;
	bool v2;
} hierarchies[] = {
	{ "/sys/fs/cgroup/unified", "cgroup-v2", true },
	{ "/sys/fs/cgroup/freezer", "cgroup-v1", false },
};

static bool
holds_only_freezer(const char *root, bool v2)
{
	struct statfs s;

	if (statfs(root, &s) < 0 || (long)s.f_type != (v2 ? 0x63677270L : 0x27e0ebL))
		return false;
	if (v2) {
		_cleanup_free_ char *path = sb_xasprintf("%s/cgroup.controllers", root);
		char buf[16];
		ssize_t n;
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			return false;
		n = read(fd, buf, sizeof(buf));
		close(fd);
		return n == 0 || (n == 1 && buf[0] == '\n');
	}
	/*
	 * A v1 hierarchy of the freezer alone: in /proc/cgroups ("name hierarchy count
	 * enabled"), no other controller has the freezer's hierarchy (co-mounted with cpu or
	 * devices, a move would take the agent out of the container's --cpus or its devices).
	 */
	{
		_cleanup_free_ char *state = sb_xasprintf("%s/freezer.state", root);
		char line[256];
		long hier = -1;
		int shared = 0;
		FILE *f;

		if (access(state, F_OK) == 0) /* a hierarchy's root has none */
			return false;
		f = fopen("/proc/cgroups", "re");
		if (f == NULL)
			return false;
		while (fgets(line, sizeof(line), f) != NULL) {
			char name[64];
			long h, n, en;

			if (sscanf(line, "%63s %ld %ld %ld", name, &h, &n, &en) == 4 && en == 1 &&
			    strcmp(name, "freezer") == 0)
				hier = h;
		}
		rewind(f);
		while (hier > 0 && fgets(line, sizeof(line), f) != NULL) {
			char name[64];
			long h, n, en;

			if (sscanf(line, "%63s %ld %ld %ld", name, &h, &n, &en) == 4 && en == 1 &&
			    h == hier && strcmp(name, "freezer") != 0)
				shared++;
		}
		fclose(f);
		return hier > 0 && shared == 0;
	}
}

const char *
agent_cgroup_make(const char *run_id, char **path)
{
	*path = NULL;
	for (size_t i = 0; i < SB_ARRAY_SIZE(hierarchies); i++) {
		_cleanup_free_ char *parent = sb_xasprintf("%s/ssebench", hierarchies[i].root);
		_cleanup_free_ char *dir = sb_xasprintf("%s/%s", parent, run_id);
		struct sb_freezer f;
		struct sb_error *err = NULL;

		if (!holds_only_freezer(hierarchies[i].root, hierarchies[i].v2))
			continue;
		if ((mkdir(parent, 0700) < 0 && errno != EEXIST) || mkdir(dir, 0700) < 0 ||
		    chmod(dir, 0700) < 0) {
			sb_log(SB_LOG_WARN, "the agent's freezer cgroup %s: %s", dir, strerror(errno));
			(void)rmdir(dir);
			continue;
		}
		if (sb_freezer_open(dir, &f, &err) < 0) {
			sb_log(SB_LOG_WARN, "the agent's freezer cgroup: %s", sb_error_message(err));
			sb_error_release(&err);
			(void)rmdir(dir);
			continue;
		}
		sb_freezer_close(&f);
		*path = TAKE_PTR(dir);
		return hierarchies[i].kind;
	}
	return "signals";
}

/* After the run's containers are gone: nothing is left in it, but a kill costs nothing. */
void
agent_cgroup_remove(const char *path)
{
	struct sb_freezer f;

	if (path == NULL)
		return;
	if (sb_freezer_open(path, &f, NULL) == 0) {
		(void)sb_freezer_kill(&f, 2000, NULL);
		sb_freezer_close(&f);
	}
	if (rmdir(path) < 0 && errno != ENOENT)
		sb_log(SB_LOG_WARN, "removing %s: %s", path, strerror(errno));
}

int
agent_cgroup_sweep(const char *run_id)
{
	int rc = 0;

	/* run_id names a directory below root's own: it must be a run id, never a path. */
	if (!sb_run_id_valid(run_id))
		return -1;
	for (size_t i = 0; i < SB_ARRAY_SIZE(hierarchies); i++) {
		_cleanup_free_ char *dir =
		    sb_xasprintf("%s/ssebench/%s", hierarchies[i].root, run_id);
		struct stat st;

		if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		agent_cgroup_remove(dir);
		if (lstat(dir, &st) == 0)
			rc = -1;
	}
	return rc;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * isolation.c: a run establishes its isolation before it is worth scoring
 * (docs/design.md, "Fail closed": a run that cannot show the isolation it claims gets no
 * score; docs/integrity.md, "The fail-closed verdict").
 *
 * Before the agent starts and again before grading, the entrypoint runs itself in probe
 * mode (`ssebench-entrypoint --isolation-probe ROLE PHASE`) as the agent user and as the
 * runner user, with the credentials, seccomp profile and core limit their real processes
 * get, and asks from inside what an attacker would ask: who am I, which privileges do I
 * hold, can I open any of these hidden paths (listed by root on the probe's stdin), does
 * the daemon enforce my level and refuse the reference patch, is there a way off this
 * network. What root can see for itself (the reference mount) it checks itself. Each
 * answer goes into an sb_iso_record and sb_iso_verdict decides (sb/verdict.h).
 *
 * A probe that crashes, times out or leaves a property out leaves it unchecked, and an
 * unchecked claimed property has failed. isolation.json in the results directory (root
 * only) records every observation; the CLI copies it into result.json and summary.json.
 */
#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <git2.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/counters.h"
#include "sb/diag.h"
#include "sb/exit.h"
#include "sb/fs.h"
#include "sb/git.h"
#include "sb/http.h"
#include "sb/json.h"
#include "sb/limits.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/path.h"
#include "sb/spawn.h"
#include "sb/task.h"
#include "sb/verdict.h"

#include "entrypoint.h"

#define PROBE_TIMEOUT_MS   30000	/* one probe, all its checks */
#define PROBE_INPUT_MAX	   (1024 * 1024) /* the path list on its stdin */
#define PROBE_OUTPUT_MAX   (256 * 1024)
#define PROBE_DAEMON_MS	   10000	/* one daemon call from the probe */
#define PROBE_CONNECT_MS   1500		/* how long the host may stay silent */
#define PROBE_HOST_PORT	   4263		/* any port: a drop or a forward is per address */
#define LIST_DEPTH_MAX	   24
#define GIT_COMMITS_STOP   2		/* counting further changes nothing */

static const char probe_path[] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/* ------------------------------------------------------------------------------------ */
/* The probe: runs as the agent or the runner, prints "name\t0|1\tdetail" lines.         */
/* ------------------------------------------------------------------------------------ */

static void _printf_(3, 4)
emit(const char *prop, bool held, const char *fmt, ...)
{
	char detail[SB_ISO_DETAIL_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	for (char *p = detail; *p != '\0'; p++)
		if (*p == '\t' || *p == '\n' || *p == '\r' || (unsigned char)*p < 0x20)
			*p = ' ';
	printf("%s\t%d\t%s\n", prop, held ? 1 : 0, detail);
}

/* A uid, gid or level for the probe: a malformed value is the default (the probe then
 * finds the identity wrong, which fails the property: never a pass by default). */
static unsigned long long
env_ull(const char *name, unsigned long long def)
{
	uint64_t n = def;

	return sb_env_u64(name, 0, UINT32_MAX, &n, NULL) == 1 ? n : def;
}

static void
probe_identity(const char *role)
{
	uid_t r, e, s;
	gid_t rg, eg, sg;
	int ng = getgroups(0, NULL);
	unsigned long long want_uid = env_ull("SSE_PROBE_UID", 0);
	unsigned long long want_gid = env_ull("SSE_PROBE_GID", 0);
	unsigned long long agent_uid = env_ull("SSE_PROBE_AGENT_UID", 0);
	bool runner = strcmp(role, "runner") == 0;
	bool held;

	if (getresuid(&r, &e, &s) < 0 || getresgid(&rg, &eg, &sg) < 0) {
		emit(runner ? "runner_identity" : "agent_identity", false, "%s: getresuid: %s", role,
		    strerror(errno));
		return;
	}
	held = r != 0 && r == e && r == s && r == want_uid && rg != 0 && rg == eg && rg == sg &&
	    rg == want_gid && ng == 0 && (!runner || r != agent_uid);
	emit(runner ? "runner_identity" : "agent_identity", held,
	    "%s: uid %u/%u/%u gid %u/%u/%u, %d supplementary group%s (expected uid %llu gid %llu)",
	    role, (unsigned)r, (unsigned)e, (unsigned)s, (unsigned)rg, (unsigned)eg, (unsigned)sg,
	    ng, ng == 1 ? "" : "s", want_uid, want_gid);
}

/* CapPrm/CapEff/CapAmb, NoNewPrivs and Seccomp, from /proc/self/status. */
static void
probe_status(const char *role)
{
	_cleanup_close_ int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(64 * 1024);
	const char *names[] = { "CapPrm:", "CapEff:", "CapAmb:", "NoNewPrivs:", "Seccomp:" };
	char vals[5][32] = { "", "", "", "", "" };
	char *line, *save = NULL;
	bool caps_zero = true;

	if (fd < 0 || sb_buf_read_fd(&b, fd, NULL) < 0) {
		emit("no_capabilities", false, "%s: cannot read /proc/self/status", role);
		return;
	}
	for (line = strtok_r(b.s, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save))
		for (size_t i = 0; i < SB_ARRAY_SIZE(names); i++)
			if (strncmp(line, names[i], strlen(names[i])) == 0) {
				const char *v = line + strlen(names[i]);

				while (*v == ' ' || *v == '\t')
					v++;
				snprintf(vals[i], sizeof(vals[i]), "%s", v);
			}
	/* A missing line is not a zero: the kernel always shows these. */
	for (int i = 0; i < 3; i++)
		if (vals[i][0] == '\0' ||
		    strspn(vals[i], "0123456789abcdefABCDEF") != strlen(vals[i]) ||
		    strtoull(vals[i], NULL, 16) != 0)
			caps_zero = false;
	emit("no_capabilities", caps_zero, "%s: CapPrm %s CapEff %s CapAmb %s", role,
	    vals[0][0] ? vals[0] : "?", vals[1][0] ? vals[1] : "?", vals[2][0] ? vals[2] : "?");
	emit("no_new_privs", strcmp(vals[3], "1") == 0, "%s: NoNewPrivs %s", role,
	    vals[3][0] ? vals[3] : "?");
	/* 2 is SECCOMP_MODE_FILTER. */
	emit("seccomp", strcmp(vals[4], "2") == 0, "%s: Seccomp %s", role,
	    vals[4][0] ? vals[4] : "?");
}

/* Can we open path (or connect to it, for a socket)? The error when not. */
static bool
path_reachable(const char *path, const char **how)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		*how = "readable";
		return true;
	}
	if (errno == ENXIO) { /* a socket: open() cannot, connect() might */
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int s;
		bool ok;

		if (strlen(path) >= sizeof(sa.sun_path))
			return false;
		memcpy(sa.sun_path, path, strlen(path) + 1);
		s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (s < 0)
			return false;
		ok = connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0;
		close(s);
		*how = "connectable";
		return ok;
	}
	return false;
}

/*
 * stdin: records "property\0path\0", one verdict per property named. NUL is the one byte no
 * path can hold, so a name with a newline, a tab or any other byte is one path, never a
 * second record (root lists the paths, but below the places it walks some names were
 * chosen by others; see list_tree).
 */
static void
probe_paths(const char *role)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(PROBE_INPUT_MAX);
	struct {
		unsigned tried;
		char leak[SB_PATH_MAX + 16];
	} seen[SB_ISO_PROP_COUNT];
	const char *p, *end;
	bool malformed = false;

	memset(seen, 0, sizeof(seen));
	if (sb_buf_read_fd(&b, STDIN_FILENO, NULL) < 0) {
		emit("task_files_hidden", false, "%s: the path list did not arrive", role);
		return;
	}
	for (p = b.s, end = b.s + b.len; p < end;) {
		const char *name = p, *path, *nul = memchr(p, '\0', (size_t)(end - p));
		const char *how = NULL;
		int prop;

		if (nul == NULL || (path = nul + 1) >= end ||
		    (nul = memchr(path, '\0', (size_t)(end - path))) == NULL) {
			malformed = true; /* a cut record: root's list did not arrive whole */
			break;
		}
		p = nul + 1;
		for (prop = 0; prop < SB_ISO_PROP_COUNT; prop++)
			if (strcmp(name, sb_iso_prop_name((enum sb_iso_prop)prop)) == 0)
				break;
		if (prop == SB_ISO_PROP_COUNT) {
			malformed = true;
			continue;
		}
		seen[prop].tried++;
		if (seen[prop].leak[0] == '\0' && path_reachable(path, &how))
			snprintf(seen[prop].leak, sizeof(seen[prop].leak), "%s %s", path, how);
	}
	if (malformed)
		emit("task_files_hidden", false, "%s: the path list is malformed", role);
	for (int prop = 0; prop < SB_ISO_PROP_COUNT; prop++) {
		if (seen[prop].tried == 0)
			continue;
		if (seen[prop].leak[0] != '\0')
			emit(sb_iso_prop_name((enum sb_iso_prop)prop), false, "%s: %s", role,
			    seen[prop].leak);
		else
			emit(sb_iso_prop_name((enum sb_iso_prop)prop), true, "%s: %u path%s refused",
			    role, seen[prop].tried, seen[prop].tried == 1 ? "" : "s");
	}
}

/* The level in force, a withheld action refused, and the reference patch refused. */
static void
probe_daemon(const char *phase)
{
	const char *sock = secure_getenv("SSE_DAEMON_SOCKET");
	struct sb_http_target t = { .unix_socket = sock, .base_url = "http://localhost",
		.timeout_ms = PROBE_DAEMON_MS, .max_reply = 64 * 1024 };
	unsigned long long want = env_ull("SSE_DIFFICULTY", 99);
	struct sb_error *err = NULL;
	json_t *reply = NULL;
	long status = 0;
	json_int_t got = -1;

	if (sock == NULL || want > 4) {
		emit("difficulty_gate", false, "no agent socket or level to check");
		return;
	}
	if (sb_http_json(&t, "GET", "/version", NULL, &status, &reply, &err) < 0) {
		emit("difficulty_gate", false, "GET /version: %s", sb_error_message(err));
		sb_error_release(&err);
		return;
	}
	if (status == 200 && json_is_integer(json_object_get(reply, "difficulty")))
		got = json_integer_value(json_object_get(reply, "difficulty"));
	json_decref(reply);
	reply = NULL;
	if (got != (json_int_t)want) {
		emit("difficulty_gate", false, "the daemon runs level %lld, the run claims %llu",
		    (long long)got, want);
		return;
	}
	/*
	 * While the agent's tools are open, one action this level withholds must be refused.
	 * run_poc names no PoC of the task, so a daemon that let it through would answer 500
	 * and run nothing; level 1 withholds only intent_test.
	 */
	if (strcmp(phase, "before_agent") == 0 && want >= 1) {
		const char *action = want >= 2 ? "run_poc" : "intent_test";
		_cleanup_free_ char *path = sb_xasprintf("/tool/bencher?action=%s", action);
		json_t *body = json_pack("{s:b, s:s}", "grading", 0, "poc",
		    "/nonexistent/ssebench-isolation-probe");

		if (sb_http_json(&t, "POST", path, body, &status, &reply, &err) < 0) {
			emit("difficulty_gate", false, "POST %s: %s", path, sb_error_message(err));
			sb_error_release(&err);
			json_decref(body);
			return;
		}
		json_decref(body);
		json_decref(reply);
		reply = NULL;
		emit("difficulty_gate", status == 403, "level %llu: %s answered %ld (403 wanted)",
		    want, action, status);
	} else {
		emit("difficulty_gate", true, "the daemon runs level %llu", want);
	}
	if (sb_http_json(&t, "GET", "/reference/patch", NULL, &status, &reply, &err) < 0) {
		emit("task_files_hidden", false, "GET /reference/patch: %s", sb_error_message(err));
		sb_error_release(&err);
		return;
	}
	json_decref(reply);
	emit("task_files_hidden", status == 403, "agent socket: GET /reference/patch answered %ld",
	    status);
}

/*
 * Two connection attempts, at once, each answered or not within PROBE_CONNECT_MS:
 *   - network_internal: the canary (SSE_NET_CANARY), an address the CLI keeps in a network
 *     namespace of this host, outside every Docker bridge. Traffic that can leave the run's
 *     network reaches it and is refused; from an internal network it is dropped. Docker
 *     gives internal networks a default route all the same, so no route table can tell.
 *   - host_unreachable: the host's address on this network (SSE_NET_GATEWAY), which the
 *     CLI's guard drops (an internal network still reaches the host: docs/running.md,
 *     "A network of its own"); on Kubernetes also the pod's own node (SSE_NET_NODE, from
 *     the pod's status: docs/kubernetes.md, "Is the policy in force?"), when it is
 *     another address. An answer of either fails the property (the first failure stands).
 * A connection or a refusal means reachable; silence, or "unreachable", means not. Only the
 * addresses the CLI names are tried, never a guess: no packet is meant for anyone else.
 */
struct attempt {
	const char *prop, *what, *addr;
	int fd, err;
	bool done, connected;
};

/* optional: an unset env is no attempt, not a failure (SSE_NET_NODE off Kubernetes); set,
 * it must be an address, as the others. */
static void
attempt_start(struct attempt *t, const char *env, const char *prop, const char *what,
    bool optional)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(PROBE_HOST_PORT) };

	t->prop = prop;
	t->what = what;
	t->addr = secure_getenv(env);
	t->fd = -1;
	t->done = t->connected = false;
	t->err = 0;
	if (optional && t->addr == NULL) {
		t->done = true;
		t->addr = NULL;
		return;
	}
	if (t->addr == NULL || inet_pton(AF_INET, t->addr, &sa.sin_addr) != 1) {
		emit(prop, false, "no address for %s: %s is unset or not an IPv4 address", what,
		    env);
		t->done = true;
		t->addr = NULL;
		return;
	}
	t->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (t->fd < 0 || connect(t->fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		t->err = t->fd < 0 ? errno : 0;
		t->connected = t->fd >= 0;
		t->done = true;
	} else if (errno != EINPROGRESS) {
		t->err = errno;
		t->done = true;
	}
}

static void
attempt_report(struct attempt *t, bool timed_out)
{
	if (t->addr == NULL)
		return;
	if (timed_out)
		emit(t->prop, true, "%s %s:%d gave no answer in %d ms", t->what, t->addr,
		    PROBE_HOST_PORT, PROBE_CONNECT_MS);
	else if (t->connected)
		emit(t->prop, false, "%s %s:%d accepted a connection", t->what, t->addr,
		    PROBE_HOST_PORT);
	else if (t->err == ENETUNREACH || t->err == EHOSTUNREACH || t->err == EACCES ||
	    t->err == EPERM || t->err == ETIMEDOUT)
		emit(t->prop, true, "%s %s:%d: %s", t->what, t->addr, PROBE_HOST_PORT,
		    strerror(t->err));
	else
		emit(t->prop, false, "%s %s:%d answered: %s", t->what, t->addr, PROBE_HOST_PORT,
		    strerror(t->err));
	if (t->fd >= 0)
		close(t->fd);
}

static void
probe_network(void)
{
	struct attempt t[3];
	uint64_t deadline;

	attempt_start(&t[0], "SSE_NET_CANARY", "network_internal", "the egress canary", false);
	attempt_start(&t[1], "SSE_NET_GATEWAY", "host_unreachable", "the host", false);
	attempt_start(&t[2], "SSE_NET_NODE", "host_unreachable", "the pod's node", true);
	deadline = sb_now_ms() + PROBE_CONNECT_MS;
	/*
	 * Until every attempt is done or the deadline has passed, and then one look more
	 * without waiting: a probe held up past its deadline (a loaded node) must still see
	 * an answer that came meanwhile, not call it silence.
	 */
	for (;;) {
		struct pollfd pfd[3];
		int n = 0, map[3];
		uint64_t now = sb_now_ms();
		int left = now < deadline ? (int)(deadline - now) : 0;

		for (int i = 0; i < 3; i++)
			if (!t[i].done) {
				pfd[n] = (struct pollfd){ .fd = t[i].fd, .events = POLLOUT };
				map[n++] = i;
			}
		if (n == 0)
			break;
		if (poll(pfd, (nfds_t)n, left) <= 0) {
			if (left == 0)
				break;
			continue;
		}
		for (int k = 0; k < n; k++) {
			struct attempt *a = &t[map[k]];
			socklen_t len = sizeof(a->err);

			if (pfd[k].revents == 0)
				continue;
			if (getsockopt(a->fd, SOL_SOCKET, SO_ERROR, &a->err, &len) < 0)
				a->err = errno;
			a->connected = a->err == 0;
			a->done = true;
		}
		if (left == 0)
			break;
	}
	for (int i = 0; i < 3; i++)
		attempt_report(&t[i], !t[i].done);
}

/* "net:[4026531840]" for kind (net, mnt, ipc, user): the namespace this process is in. */
static bool
ns_id(const char *kind, char *buf, size_t size)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", kind);
	n = readlink(path, buf, size - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return true;
}

/*
 * Files the runner's probe compares with the container's when the scripts have a root of
 * their own (SSE_RUNNER_ROOT): none may be the same inode as the one the agent reads.
 */
static const char *const root_files[] = { "/", "/usr", "/usr/bin/env", "/bin/sh", "/etc/passwd" };

/* Is the directory at path empty (or absent)? */
static bool
dir_empty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	bool empty = true;

	while (d != NULL && (de = readdir(d)) != NULL)
		empty = empty && (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0);
	if (d != NULL)
		closedir(d);
	return empty;
}

/* runner_sandbox, part: namespaces of its own, none of root's (root_ns: SSE_PROBE_NS). */
static bool
sandbox_namespaces(const char *root_ns)
{
	static const char *const kinds[] = { "net", "mnt", "ipc", "user" };
	char id[64];

	for (size_t i = 0; i < SB_ARRAY_SIZE(kinds); i++) {
		/* Unreadable is not established: said as such, not as a namespace it is in. */
		if (!ns_id(kinds[i], id, sizeof(id))) {
			emit("runner_sandbox", false, "runner: cannot read its %s namespace",
			    kinds[i]);
			return false;
		}
		if (strstr(root_ns, id) != NULL) {
			emit("runner_sandbox", false, "runner: in root's %s namespace (%s)", kinds[i],
			    id);
			return false;
		}
	}
	return true;
}

/* runner_sandbox, part: no network interface but loopback (/proc/net/dev). */
static bool
sandbox_loopback_only(void)
{
	_cleanup_buf_ struct sb_buf dev = SB_BUF_INIT(64 * 1024);
	_cleanup_close_ int fd = open("/proc/net/dev", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || sb_buf_read_fd(&dev, fd, NULL) < 0) {
		emit("runner_sandbox", false, "runner: cannot read /proc/net/dev");
		return false;
	}
	/* Two header lines, then "  name: counters" per interface. */
	for (const char *l = strchr(dev.s, '\n'); l != NULL && (l = strchr(l + 1, '\n')) != NULL;) {
		const char *name = l + 1, *colon = strchr(name, ':');

		while (*name == ' ')
			name++;
		if (colon == NULL || *name == '\0')
			break;
		if (colon - name != 2 || strncmp(name, "lo", 2) != 0) {
			emit("runner_sandbox", false, "runner: a network interface besides loopback: %.*s",
			    (int)(colon - name > 32 ? 32 : colon - name), name);
			return false;
		}
	}
	return true;
}

/*
 * runner_sandbox, part: a /tmp where root's marker (mark) is not, the agent socket (sock)
 * out of reach, a read-only root.
 */
static bool
sandbox_places(const char *mark, const char *sock)
{
	const char *how = NULL;
	struct statvfs vfs;

	if (access(mark, F_OK) == 0) {
		emit("runner_sandbox", false, "runner: /tmp is the container's (%s is there)", mark);
		return false;
	}
	if (path_reachable(sock, &how)) {
		emit("runner_sandbox", false, "runner: the agent socket %s is %s", sock, how);
		return false;
	}
	if (statvfs("/", &vfs) < 0 || !(vfs.f_flag & ST_RDONLY)) {
		emit("runner_sandbox", false, "runner: the root file system is writable");
		return false;
	}
	return true;
}

/* runner_sandbox, part: terminals and message queues not root's (SSE_PROBE_DEVS). */
static bool
sandbox_devices(void)
{
	const char *devs = secure_getenv("SSE_PROBE_DEVS");
	static const char *const what[] = { "pts", "mqueue" };

	if (devs == NULL) {
		emit("runner_sandbox", false, "runner: nothing to compare with (no SSE_PROBE_DEVS)");
		return false;
	}
	for (size_t i = 0; i < SB_ARRAY_SIZE(what); i++) {
		_cleanup_free_ char *key = sb_xasprintf("%s:", what[i]);
		_cleanup_free_ char *path = sb_xasprintf("/dev/%s", what[i]);
		const char *v = strstr(devs, key);
		unsigned long long root_dev = v != NULL ? strtoull(v + strlen(key), NULL, 10) : 0;
		struct stat st;

		if (root_dev != 0 && stat(path, &st) == 0 && (unsigned long long)st.st_dev == root_dev) {
			emit("runner_sandbox", false, "runner: %s is the container's", path);
			return false;
		}
	}
	return true;
}

/*
 * runner_sandbox, part: with a root of its own, none of root_files is the agent's file
 * (SSE_PROBE_ROOT_FILES, from root: "dev:ino" per entry, "0:0" where the container has none).
 */
static bool
sandbox_own_root(void)
{
	const char *v = secure_getenv("SSE_PROBE_ROOT_FILES");

	if (v == NULL || *v == '\0')
		return true;
	for (size_t i = 0; i < SB_ARRAY_SIZE(root_files) && v != NULL; i++) {
		unsigned long long d = strtoull(v, NULL, 10), ino = 0;
		const char *colon = strchr(v, ':');
		struct stat st;

		if (colon != NULL)
			ino = strtoull(colon + 1, NULL, 10);
		if (ino != 0 && stat(root_files[i], &st) == 0 &&
		    (unsigned long long)st.st_dev == d && (unsigned long long)st.st_ino == ino) {
			emit("runner_sandbox", false, "runner: %s is the agent's own file "
			    "(the scripts have no root of their own)", root_files[i]);
			return false;
		}
		v = strchr(v, ',');
		if (v != NULL)
			v++;
	}
	return true;
}

/* runner_sandbox, part: the agent's places (hidden: colon-separated, root's choice) empty. */
static bool
sandbox_hidden_empty(const char *hidden)
{
	for (const char *p = hidden; p != NULL && *p != '\0';) {
		const char *end = strchr(p, ':');
		_cleanup_free_ char *dir = sb_xstrndup(p, end != NULL ? (size_t)(end - p) : strlen(p));

		if (!dir_empty(dir)) {
			emit("runner_sandbox", false, "runner: %s is not hidden", dir);
			return false;
		}
		p = end != NULL ? end + 1 : NULL;
	}
	return true;
}

/*
 * runner_sandbox, from inside the sandbox the task scripts get (sb/sandbox.h): namespaces
 * of its own (root's are in SSE_PROBE_NS), no network interface but loopback, a /tmp where
 * root's marker (SSE_PROBE_TMP_MARK) is not, the agent socket out of reach, a read-only
 * root, the agent's places (SSE_PROBE_HIDDEN, colon-separated, root's choice) empty, and
 * terminals and message queues of its own (not root's instances, SSE_PROBE_DEVS). Each
 * part says what failed, and the first failure is the answer.
 */
static void
probe_runner_sandbox(void)
{
	const char *root_ns = secure_getenv("SSE_PROBE_NS");
	const char *mark = secure_getenv("SSE_PROBE_TMP_MARK");
	const char *sock = secure_getenv("SSE_DAEMON_SOCKET");
	const char *hidden = secure_getenv("SSE_PROBE_HIDDEN");

	if (root_ns == NULL || mark == NULL || sock == NULL) {
		emit("runner_sandbox", false, "runner: nothing to compare with (no SSE_PROBE_NS)");
		return;
	}
	if (!sandbox_namespaces(root_ns) || !sandbox_loopback_only() ||
	    !sandbox_places(mark, sock) || !sandbox_devices() || !sandbox_own_root() ||
	    !sandbox_hidden_empty(hidden))
		return;
	emit("runner_sandbox", true,
	    "runner: own namespaces, loopback only, private /tmp, own terminals and message queues, "
	    "agent socket and places hidden, read-only root");
}

struct commit_count {
	git_odb *odb;
	unsigned commits, objects;
};

static int
count_commit(const git_oid *id, void *data)
{
	struct commit_count *c = data;
	size_t len;
	git_object_t type;

	if (++c->objects > SB_GIT_OBJECT_FILES_MAX)
		return GIT_EUSER;
	if (git_odb_read_header(&len, &type, c->odb, id) == 0 && type == GIT_OBJECT_COMMIT &&
	    ++c->commits >= GIT_COMMITS_STOP)
		return GIT_EUSER;
	return 0;
}

/*
 * Every commit object in the agent's .git, reachable or not: a dangling commit of the old
 * history would be as good as a branch. The object store is opened alone, so no config,
 * hook or attribute of the tree is read.
 */
static void
probe_commits(void)
{
	const char *src = secure_getenv("SSE_SOURCE");
	_cleanup_free_ char *objects = src != NULL ? sb_path_join(src, ".git/objects") : NULL;
	struct commit_count c = { NULL, 0, 0 };
	struct sb_error *err = NULL;
	int r;

	if (objects == NULL || sb_git_init(&err) < 0) {
		emit("single_commit", false, "cannot open the source's history: %s",
		    err != NULL ? sb_error_message(err) : "SSE_SOURCE unset");
		sb_error_release(&err);
		return;
	}
	if (git_odb_open(&c.odb, objects) < 0) {
		const git_error *e = git_error_last();

		emit("single_commit", false, "%s: %s", objects, e != NULL ? e->message : "?");
		return;
	}
	r = git_odb_foreach(c.odb, count_commit, &c);
	git_odb_free(c.odb);
	if (r < 0 && r != GIT_EUSER) {
		emit("single_commit", false, "%s: cannot list the objects", objects);
		return;
	}
	if (c.objects > SB_GIT_OBJECT_FILES_MAX)
		emit("single_commit", false, "more than %d objects: not counted",
		    SB_GIT_OBJECT_FILES_MAX);
	else if (c.commits == 1)
		emit("single_commit", true, "one commit in %s", objects);
	else
		emit("single_commit", false, "%s%u commits in %s",
		    c.commits >= GIT_COMMITS_STOP ? "at least " : "", c.commits, objects);
}

int
ep_isolation_probe_main(int argc, char **argv)
{
	const char *role, *phase, *egress;

	if (argc != 4 || (strcmp(argv[2], "agent") != 0 && strcmp(argv[2], "runner") != 0) ||
	    (strcmp(argv[3], "before_agent") != 0 && strcmp(argv[3], "before_grading") != 0)) {
		fprintf(stderr, "usage: ssebench-entrypoint --isolation-probe agent|runner "
				"before_agent|before_grading\n");
		return SB_EXIT_USAGE;
	}
	role = argv[2];
	phase = argv[3];
	egress = secure_getenv("SSE_EGRESS");
	probe_identity(role);
	probe_status(role);
	probe_paths(role);
	if (strcmp(role, "runner") == 0)
		probe_runner_sandbox();
	if (strcmp(role, "agent") == 0) {
		probe_daemon(phase);
		if (egress == NULL || strcmp(egress, "open") != 0)
			probe_network();
		if (strcmp(phase, "before_agent") == 0)
			probe_commits();
	}
	return fflush(stdout) == 0 ? SB_EXIT_OK : SB_EXIT_FAILURE;
}

/* ------------------------------------------------------------------------------------ */
/* Root's side: the path lists, the probes, the root-side checks, the record.            */
/* ------------------------------------------------------------------------------------ */

/* 16 random hex digits (for a name nobody can guess beforehand). */
static char *
random_hex(void)
{
	unsigned char r[8];
	char *s = sb_xmalloc(17);

	if (sb_random_bytes(r, sizeof(r), NULL) < 0)
		memset(r, 0, sizeof(r));
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(s + 2 * i, 3, "%02x", r[i]);
	return s;
}

/* One record of the probe's input: "prop\0path\0". */
static void
add_path(struct sb_buf *b, enum sb_iso_prop prop, const char *path)
{
	const char *name = sb_iso_prop_name(prop);

	(void)sb_buf_append(b, name, strlen(name) + 1, NULL);
	(void)sb_buf_append(b, path, strlen(path) + 1, NULL);
}

/*
 * May list_tree read the names in this directory? Only when nobody but root can have put
 * them there: a directory root owns and nobody else may write to. Below any other directory
 * (the agent's archive, the runner's copies of the agent's tree) the names are another
 * user's choice, and taking paths to probe from them would let that user choose what the
 * probe reports, or spend its budget; the directory itself is still probed.
 */
static bool
names_are_roots(const struct stat *st)
{
	return S_ISDIR(st->st_mode) && st->st_uid == 0 && (st->st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

/*
 * path, then what is below it, breadth first, up to *budget entries: the places nearest the
 * top (the hidden files themselves) are probed before anything deeper, whatever the depth
 * or size of the tree. Nothing is followed: entries are looked at with lstat, and only
 * directories that pass names_are_roots are read.
 */
static void
list_tree(struct sb_buf *b, enum sb_iso_prop prop, const char *path, unsigned *budget)
{
	_cleanup_argv_ struct sb_argv queue = SB_ARGV_INIT;
	struct stat st;

	if (*budget == 0 || lstat(path, &st) < 0)
		return;
	(*budget)--;
	add_path(b, prop, path);
	if (names_are_roots(&st))
		sb_argv_push(&queue, path);
	for (size_t next = 0; next < queue.n && *budget > 0; next++) {
		const char *dir = queue.v[next];
		unsigned depth = 0;
		struct dirent *de;
		DIR *d;

		for (const char *c = dir + strlen(path); *c != '\0'; c++)
			depth += *c == '/';
		d = opendir(dir);
		if (d == NULL)
			continue;
		while (*budget > 0 && (de = readdir(d)) != NULL) {
			_cleanup_free_ char *child = NULL;

			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			child = sb_path_join(dir, de->d_name);
			if (lstat(child, &st) < 0)
				continue;
			(*budget)--;
			add_path(b, prop, child);
			if (names_are_roots(&st) && depth + 1 < LIST_DEPTH_MAX)
				sb_argv_push(&queue, child);
		}
		closedir(d);
	}
}

/*
 * The runner must not reach the hidden files the config names (the reference patch, the
 * hidden tests, the PoCs, the config: docs/daemon.md, "Bencher actions"), though it may read the
 * build and test scripts the daemon shares with its group. Without a config we can read, it gets
 * the whole task folder to try, which fails closed.
 */
static void
runner_task_paths(const struct ep *ep, struct sb_buf *b, unsigned *budget)
{
	_cleanup_buf_ struct sb_buf text = SB_BUF_INIT(SB_CONFIG_FILE_MAX);
	_cleanup_diags_ struct sb_diags d = SB_DIAGS_INIT;
	_cleanup_close_ int fd = open(ep->cfg.bench_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_task_config_ struct sb_task_config *c = NULL;

	if (fd < 0 || sb_read_file_at(fd, "config.yaml", 0, &text, NULL) < 0 ||
	    (c = sb_task_config_parse(text.s, text.len, "config.yaml", &d)) == NULL || d.n > 0) {
		list_tree(b, SB_ISO_TASK_FILES_HIDDEN, ep->cfg.bench_path, budget);
		return;
	}
	{
		const char *named[] = { "config.yaml", c->files.patch.s, c->files.future_test.s,
			c->files.security_test.s, c->files.intent_test.s };

		for (size_t i = 0; i < SB_ARRAY_SIZE(named); i++)
			if (named[i] != NULL) {
				_cleanup_free_ char *p = sb_path_join(ep->cfg.bench_path, named[i]);

				list_tree(b, SB_ISO_TASK_FILES_HIDDEN, p, budget);
			}
		for (size_t i = 0; i < c->files.poc.n; i++) {
			_cleanup_free_ char *p = sb_path_join(ep->cfg.bench_path, c->files.poc.v[i].s);

			list_tree(b, SB_ISO_TASK_FILES_HIDDEN, p, budget);
		}
	}
}

/*
 * What each role must not reach. The agent: everything of the task, the runner's staging
 * area, the pristine repository, the results, the secrets, the admin socket. The daemon's
 * state directory is only named, not walked: below it are directories the agent owns by
 * design (its git baseline, its bash state), under names it cannot list.
 */
static void
hidden_paths(struct ep *ep, enum sb_iso_phase ph, bool agent, struct sb_buf *b)
{
	unsigned task = 3000, repo = 500, results = 300, runner = 300;
	const struct {
		enum sb_iso_prop prop;
		const char *path;
	} roots[] = { { SB_ISO_TASK_FILES_HIDDEN, ep->cfg.bench_path },
		{ SB_ISO_REPO_HIDDEN, ep->cfg.repo_path },
		{ SB_ISO_RESULTS_HIDDEN, ep->cfg.results } };
	struct stat st;

	/* A hidden place that does not exist is hidden: said so, since nothing is listed. */
	for (size_t i = 0; i < SB_ARRAY_SIZE(roots); i++)
		if (lstat(roots[i].path, &st) < 0 && errno == ENOENT)
			sb_iso_note(&ep->iso, ph, roots[i].prop, true, "%s does not exist",
			    roots[i].path);
	/*
	 * The single places first, so that whatever the trees below hold, the secrets, the
	 * admin socket, the state directory and the tops of the hidden trees are always tried.
	 */
	add_path(b, SB_ISO_RESULTS_HIDDEN, ep->cfg.secrets_file);
	add_path(b, SB_ISO_RESULTS_HIDDEN, ep->cfg.admin_socket);
	add_path(b, SB_ISO_RESULTS_HIDDEN, ep->cfg.daemon_state);
	add_path(b, SB_ISO_RESULTS_HIDDEN, ep->cfg.results);
	add_path(b, SB_ISO_REPO_HIDDEN, ep->cfg.repo_path);
	if (agent) {
		add_path(b, SB_ISO_TASK_FILES_HIDDEN, ep->cfg.runner_dir);
		list_tree(b, SB_ISO_TASK_FILES_HIDDEN, ep->cfg.bench_path, &task);
		list_tree(b, SB_ISO_TASK_FILES_HIDDEN, ep->cfg.runner_dir, &runner);
	} else {
		runner_task_paths(ep, b, &task);
	}
	list_tree(b, SB_ISO_REPO_HIDDEN, ep->cfg.repo_path, &repo);
	list_tree(b, SB_ISO_RESULTS_HIDDEN, ep->cfg.results, &results);
}

static void
parse_probe(struct ep *ep, enum sb_iso_phase ph, const char *role, struct sb_buf *out)
{
	char *line, *save = NULL;

	for (line = strtok_r(out->s, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char *t1 = strchr(line, '\t'), *t2;

		if (t1 == NULL || (t2 = strchr(t1 + 1, '\t')) == NULL)
			continue;
		*t1 = *t2 = '\0';
		for (int p = 0; p < SB_ISO_PROP_COUNT; p++)
			if (strcmp(line, sb_iso_prop_name((enum sb_iso_prop)p)) == 0) {
				sb_iso_note(&ep->iso, ph, (enum sb_iso_prop)p, strcmp(t1 + 1, "1") == 0,
				    "%s", t2 + 1);
				ep_log(SB_LOG_DEBUG, "isolation %s (%s): %s %s: %s",
				    sb_iso_phase_name(ph), role, line,
				    strcmp(t1 + 1, "1") == 0 ? "held" : "FAILED", t2 + 1);
			}
	}
}

/*
 * The sandboxes the daemon gives task scripts, built by the same function from the same
 * paths (sb_sandbox_for_runner), so the runner's probe sees what a script sees: `withheld`
 * (the scripts' own root) or the open one. Made once.
 */
static struct sb_sandbox *
runner_sandbox(struct ep *ep, bool withheld, struct sb_error **err)
{
	static struct sb_sandbox open_sb, withheld_sb;
	static struct sb_runner_places pl;
	static bool made;

	if (!made) {
		pl.runner_dir = ep->cfg.runner_dir;
		pl.source = ep->cfg.source;
		pl.agent_home = ep->agent_home;
		pl.archive = ep->cfg.archive;
		pl.state_dir = ep->cfg.daemon_state;
		pl.results = ep->cfg.results;
		pl.repo_path = ep->cfg.repo_path;
		pl.agent_socket = ep->cfg.daemon_socket;
		pl.admin_socket = ep->cfg.admin_socket;
		pl.root = ep->cfg.runner_root;
		if (sb_sandbox_for_runner(&open_sb, &withheld_sb, &pl, ep->runner_creds.uid,
			ep->runner_creds.gid, err) < 0)
			return NULL;
		made = true;
	}
	return withheld ? &withheld_sb : &open_sb;
}

/*
 * Places the agent and the runner's scripts share, seen by root (the probes cannot: in the
 * runner's user namespace every other uid reads as the overflow uid). The runner's sandbox
 * mounts the root read-only, but a read-only mount does not stop a FIFO or a Unix socket:
 * the agent, frozen while a check on hidden material runs, holds a FIFO open, the check's
 * code writes into it, and the agent reads it once thawed. The sandbox hides or replaces
 * every place the stock image lets the agent write (sb_sandbox_for_runner); a task image
 * that adds one would reopen the route. So before the agent starts, root walks the whole
 * view, outside the places the sandbox hides or replaces, and fails runner_sandbox on:
 *   - anything the agent's uid owns (it could chmod it open, or set an ACL, during its
 *     phase and close it again before anyone looks);
 *   - anything with a POSIX ACL (the mode bits would not say who may open it);
 *   - a directory the agent can write that the runner can reach;
 *   - a FIFO or socket both can reach and open, or one with a second name (the two names
 *     may lie on paths only one of them can walk).
 * Anything the walk cannot look at (a failed stat or open, too deep, too many entries, too
 * slow) fails it too. Before grading nothing is walked again: with no place outside the
 * hidden ones the agent could write or own, its phase could not have changed the view.
 * (tests/integrity/README.md, "What a check on hidden material still tells the agent".)
 */
#define SHARED_WALK_ENTRIES_MAX 1000000
#define SHARED_WALK_MS		60000
#define SHARED_WALK_DEPTH_MAX	128
#define SHARED_SKIP_MAX		(3 * SB_SANDBOX_PATHS_MAX + 3)

/* Whether creds may do what `want` (a mask of 4 read, 2 write, 1 search) to st. */
static bool
creds_may(const struct sb_creds *c, const struct stat *st, unsigned want)
{
	unsigned bits = (unsigned)st->st_mode & 07;
	bool group = st->st_gid == c->gid;

	for (size_t i = 0; i < c->ngroups && !group; i++)
		group = st->st_gid == c->groups[i];
	if (st->st_uid == c->uid)
		bits = ((unsigned)st->st_mode >> 6) & 07;
	else if (group)
		bits = ((unsigned)st->st_mode >> 3) & 07;
	return (bits & want) == want;
}

struct shared_walk {
	const struct sb_creds *agent, *runner;
	struct {
		dev_t dev;
		ino_t ino;
		char *path; /* as mount(2) resolved it: an alias elsewhere is not hidden */
	} skip[SHARED_SKIP_MAX];
	size_t nskip;
	char path[PATH_MAX]; /* for messages and the skip list: cut when too long, never opened */
	size_t entries, found;
	uint64_t deadline;
	const char *stopped; /* why the walk could not finish, or NULL */
	char first[SB_ISO_DETAIL_MAX];
};

/* A place the runner's sandbox hides or replaces (or that is no file system of files). */
static void
shared_skip_add(struct shared_walk *w, const char *path)
{
	struct stat st;
	char *real;

	if (w->nskip >= SHARED_SKIP_MAX || stat(path, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    (real = realpath(path, NULL)) == NULL)
		return;
	w->skip[w->nskip].dev = st.st_dev;
	w->skip[w->nskip].ino = st.st_ino;
	w->skip[w->nskip++].path = real;
}

static bool
shared_skipped(const struct shared_walk *w, const struct stat *st)
{
	for (size_t i = 0; i < w->nskip; i++)
		if (w->skip[i].dev == st->st_dev && w->skip[i].ino == st->st_ino &&
		    strcmp(w->skip[i].path, w->path) == 0)
			return true;
	return false;
}

static void
shared_found(struct shared_walk *w, const char *what)
{
	if (w->found++ == 0) {
		_cleanup_free_ char *safe = sb_escape(w->path);

		snprintf(w->first, sizeof(w->first), "%s %s", safe, what);
	}
}

/* Whether the file at (POSIX ACL xattr path `at`, or fd when at is NULL) carries an ACL. */
static int
has_acl(const char *at, int fd, bool dir)
{
	for (int i = 0; i < (dir ? 2 : 1); i++) {
		const char *name = i == 0 ? "system.posix_acl_access" : "system.posix_acl_default";
		ssize_t n = at != NULL ? lgetxattr(at, name, NULL, 0) : fgetxattr(fd, name, NULL, 0);

		if (n >= 0)
			return 1;
		if (errno != ENODATA && errno != ENOTSUP)
			return -1;
	}
	return 0;
}

/*
 * Judge one entry (at w->path): st, its ACL (acl > 0), whether it lies on a read-only mount
 * (nothing there can be chmodded, given an ACL or written, so only a FIFO or socket already
 * there counts), and whether the agent and the runner can get to it. Sets *a_in and *r_in
 * to whether each can search it, for a directory.
 */
static void
shared_judge(struct shared_walk *w, const struct stat *st, int acl, bool ro, bool areach,
    bool rreach, bool *a_in, bool *r_in)
{
	bool mine = st->st_uid == w->agent->uid, pipe = S_ISFIFO(st->st_mode) || S_ISSOCK(st->st_mode);

	*a_in = areach && S_ISDIR(st->st_mode) && creds_may(w->agent, st, 1);
	*r_in = rreach && S_ISDIR(st->st_mode) && creds_may(w->runner, st, 1);
	if (!areach && !rreach)
		return;
	if (mine && (!ro || pipe)) {
		shared_found(w, "is the agent's");
		*a_in = *a_in || (areach && S_ISDIR(st->st_mode));
		return;
	}
	if (acl > 0 && (!ro || pipe)) {
		shared_found(w, "has a POSIX ACL");
		return;
	}
	if (pipe) {
		bool a_open = areach && (creds_may(w->agent, st, 4) || creds_may(w->agent, st, 2));
		bool r_open = rreach && (creds_may(w->runner, st, 4) || creds_may(w->runner, st, 2));

		if (a_open && r_open)
			shared_found(w, S_ISFIFO(st->st_mode) ? "is a FIFO both can open"
							      : "is a socket both can open");
		else if (st->st_nlink > 1 && (a_open || r_open))
			shared_found(w, S_ISFIFO(st->st_mode) ? "is a FIFO with a second name"
							      : "is a socket with a second name");
	} else if (S_ISDIR(st->st_mode) && !ro && *a_in && *r_in && creds_may(w->agent, st, 2)) {
		shared_found(w, "is a directory the agent can write");
	}
}

/* Whether fd's file system is mounted read-only (-1: cannot tell). */
static int
mount_ro(int fd)
{
	struct statvfs v;

	return fstatvfs(fd, &v) < 0 ? -1 : (v.f_flag & ST_RDONLY) != 0;
}

/*
 * The scripts' own root (SSE_RUNNER_ROOT, sb/sandbox.h), judged before the runner's probes
 * run: a directory of root's that no one else can write, in a directory of root's with
 * nothing for others and nothing for the agent's group (0710 root:sse-runner in an image),
 * so the agent cannot even look in. A copy the agent could read would share pages with
 * the scripts again, and what it could reach in there would be a place both share. "/"
 * (none) passes; the probe in the withheld sandbox then finds the agent's files under the
 * scripts and says so when a root was asked for.
 */
static bool
runner_root_closed(struct ep *ep, enum sb_iso_phase ph)
{
	const char *root = ep->cfg.runner_root, *slash = strrchr(root, '/');
	_cleanup_free_ char *safe = NULL, *parent = NULL;
	struct stat st, pst;

	if (strcmp(root, "/") == 0)
		return true;
	safe = sb_escape(root);
	parent = slash != NULL && slash != root ? sb_xstrndup(root, (size_t)(slash - root)) : NULL;
	if (lstat(root, &st) < 0 || !S_ISDIR(st.st_mode) || parent == NULL ||
	    lstat(parent, &pst) < 0 || !S_ISDIR(pst.st_mode)) {
		sb_iso_note(&ep->iso, ph, SB_ISO_RUNNER_SANDBOX, false,
		    "runner: no root of its own at %s (a tool image built before it had one?)", safe);
		return false;
	}
	if (st.st_uid != 0 || (st.st_mode & 022) != 0) {
		sb_iso_note(&ep->iso, ph, SB_ISO_RUNNER_SANDBOX, false,
		    "runner: its root %s can be changed by others than root (mode %04o, uid %u)",
		    safe, (unsigned)st.st_mode & 07777, (unsigned)st.st_uid);
		return false;
	}
	if (pst.st_uid != 0 || (pst.st_mode & 07) != 0 || creds_may(&ep->agent_creds, &pst, 1)) {
		_cleanup_free_ char *psafe = sb_escape(parent);

		sb_iso_note(&ep->iso, ph, SB_ISO_RUNNER_SANDBOX, false,
		    "runner: its root %s is open to the agent: %s has mode %04o, uid %u, gid %u",
		    safe, psafe, (unsigned)pst.st_mode & 07777, (unsigned)pst.st_uid,
		    (unsigned)pst.st_gid);
		return false;
	}
	return true;
}

/*
 * The activity counters (sb/counters.h), which the CLI masks in every run container
 * (cmd-run.c:push_run_args) and says so (SSE_COUNTERS_MASKED): a check on hidden material
 * could move one, and the agent read it after the thaw. Root looks for itself: every listed
 * directory empty, every directory named "block" in /sys/devices and every file system's
 * directory in /sys/fs (but cgroup) empty (found by its own walk, not from the CLI's list:
 * a device or file system the CLI missed fails here), every listed file empty. Without the claim (the entrypoint on a host, in its own tests) nothing is checked.
 */
static void
check_counters_masked(struct ep *ep, enum sb_iso_phase ph)
{
	_cleanup_argv_ struct sb_argv dirs = SB_ARGV_INIT;
	const char *claim = secure_getenv("SSE_COUNTERS_MASKED");

	if (claim == NULL || strcmp(claim, "1") != 0)
		return;
	sb_counter_masked_dirs(&dirs);
	for (size_t i = 0; i < dirs.n; i++)
		if (!dir_empty(dirs.v[i])) {
			sb_iso_note(&ep->iso, ph, SB_ISO_RUNNER_SANDBOX, false,
			    "runner: the activity counters in %s are not masked", dirs.v[i]);
			return;
		}
	/* A proc file says 0 bytes: read it. */
	for (size_t i = 0; sb_counter_files[i] != NULL; i++) {
		int fd = open(sb_counter_files[i], O_RDONLY | O_CLOEXEC);
		char c;
		bool any = fd >= 0 && read(fd, &c, 1) > 0;

		if (fd >= 0)
			close(fd);
		if (any) {
			sb_iso_note(&ep->iso, ph, SB_ISO_RUNNER_SANDBOX, false,
			    "runner: %s is not masked", sb_counter_files[i]);
			return;
		}
	}
}

static void shared_walk_dir(struct shared_walk *w, int dfd, const struct stat *dst, bool ro,
    size_t len, unsigned depth, bool areach, bool rreach);

/*
 * One entry of the walk, name in the directory dfd (at w->path, which names the entry now),
 * dst, ro, depth, areach and rreach as for shared_walk_dir: judged, and a directory either
 * reaches walked into. An entry that went away while it was walked is passed over.
 */
static void
shared_walk_entry(struct shared_walk *w, int dfd, const char *name, const struct stat *dst,
    bool ro, unsigned depth, bool areach, bool rreach)
{
	char at[64 + NAME_MAX];
	struct stat st;
	bool a_in, r_in;
	int acl, fd = -1, child_ro = ro;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)
			w->stopped = "an entry could not be looked at";
		return;
	}
	if (S_ISLNK(st.st_mode) || (S_ISDIR(st.st_mode) && shared_skipped(w, &st)))
		return;
	if (S_ISDIR(st.st_mode)) {
		/* Opened first: a mount point is judged by the file system mounted there. */
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			if (errno != ENOENT)
				w->stopped = "a directory could not be opened";
			return;
		}
		if (fstat(fd, &st) < 0 || (st.st_dev != dst->st_dev &&
						 (child_ro = mount_ro(fd)) < 0)) {
			close(fd);
			w->stopped = "a directory could not be looked at";
			return;
		}
		acl = has_acl(NULL, fd, true);
	} else {
		snprintf(at, sizeof(at), "/proc/self/fd/%d/%s", dfd, name);
		acl = has_acl(at, -1, false);
		if (acl < 0 && errno == ENOENT)
			return;
	}
	if (acl < 0) {
		if (fd >= 0)
			close(fd);
		w->stopped = "an entry's ACL could not be read";
		return;
	}
	shared_judge(w, &st, acl, child_ro == 1, areach, rreach, &a_in, &r_in);
	if (fd < 0)
		return;
	if (!a_in && !r_in) {
		close(fd);
		return;
	}
	if (depth >= SHARED_WALK_DEPTH_MAX) {
		close(fd);
		w->stopped = "too deep";
		return;
	}
	shared_walk_dir(w, fd, &st, child_ro == 1, strnlen(w->path, sizeof(w->path) - 1),
	    depth + 1, a_in, r_in);
}

/*
 * Walk the directory dfd (at w->path, of length len; st its own stat, ro its mount's flag),
 * never following a link; areach and rreach say whether the agent and the runner can list
 * it. An entry that went away while it was walked is passed over.
 */
static void
shared_walk_dir(struct shared_walk *w, int dfd, const struct stat *dst, bool ro, size_t len,
    unsigned depth, bool areach, bool rreach)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;

	if (d == NULL) {
		close(dfd);
		w->stopped = "a directory could not be read";
		return;
	}
	while (w->stopped == NULL && (errno = 0, de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (++w->entries > SHARED_WALK_ENTRIES_MAX) {
			w->stopped = "too many entries";
			break;
		}
		if (w->entries % 4096 == 0 && sb_now_ms() > w->deadline) {
			w->stopped = "too slow";
			break;
		}
		snprintf(w->path + len, sizeof(w->path) - len, "%s%s", len == 1 ? "" : "/",
		    de->d_name);
		shared_walk_entry(w, dirfd(d), de->d_name, dst, ro, depth, areach, rreach);
		if (w->stopped == NULL)
			w->path[len] = '\0'; /* else it names where the walk stopped */
	}
	if (w->stopped == NULL && errno != 0)
		w->stopped = "a directory could not be read";
	closedir(d);
}

static void
shared_walk_free(struct shared_walk *w)
{
	for (size_t i = 0; i < w->nskip; i++)
		free(w->skip[i].path);
	free(w);
}

static void
check_shared_places(struct ep *ep, enum sb_iso_phase ph)
{
	static const char *const pseudo[] = { "/proc", "/sys", "/dev" };
	struct sb_error *err = NULL;
	const struct sb_sandbox *sb = runner_sandbox(ep, false, &err);
	/* Where the walk starts: the container's root; a test points it at a tree of its own. */
	const char *top = secure_getenv("SSE_SHARED_WALK_ROOT");
	struct shared_walk *w;
	uint64_t start = sb_now_ms();
	struct stat st;
	int fd, ro, acl;

	if (sb == NULL) {
		sb_error_release(&err); /* run_probe has said why already */
		return;
	}
	if (ph != SB_ISO_BEFORE_AGENT) {
		sb_iso_note(&ep->iso, ph, SB_ISO_RUNNER_SANDBOX, true,
		    "runner: no place shared with the agent (looked for before the agent)");
		return;
	}
	if (top == NULL || top[0] != '/')
		top = "/";
	w = sb_xcalloc(1, sizeof(*w));
	w->agent = &ep->agent_creds;
	w->runner = &ep->runner_creds;
	w->deadline = start + SHARED_WALK_MS;
	for (size_t i = 0; i < SB_ARRAY_SIZE(pseudo); i++)
		shared_skip_add(w, pseudo[i]);
	for (size_t i = 0; i < sb->nhidden; i++)
		shared_skip_add(w, sb->hidden[i]);
	for (size_t i = 0; i < sb->nprivate; i++)
		shared_skip_add(w, sb->private_tmp[i]);
	/* The runner's own area: the agent reaching it is the probes' failure to find. */
	for (size_t i = 0; i < sb->nwritable; i++)
		shared_skip_add(w, sb->writable[i]);
	snprintf(w->path, sizeof(w->path), "%s", top);
	fd = open(top, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || (ro = mount_ro(fd)) < 0 ||
	    (acl = has_acl(NULL, fd, true)) < 0) {
		sb_iso_note(&ep->iso, ph, SB_ISO_RUNNER_SANDBOX, false,
		    "runner: cannot look at %s for places shared with the agent", top);
		if (fd >= 0)
			close(fd);
		shared_walk_free(w);
		return;
	}
	/* The top as well as what is below it: a 1777 or agent-owned root would do. */
	{
		bool a_in, r_in;

		shared_judge(w, &st, acl, ro == 1, true, true, &a_in, &r_in);
		if (a_in || r_in)
			shared_walk_dir(w, fd, &st, ro == 1, strlen(w->path), 0, a_in, r_in);
		else
			close(fd);
	}
	ep_log(SB_LOG_INFO, "isolation %s: places shared by the agent and the runner below %s: "
			    "%zu (%zu entries looked at in %llu ms%s%s)",
	    sb_iso_phase_name(ph), top, w->found, w->entries,
	    (unsigned long long)(sb_now_ms() - start),
	    w->stopped != NULL ? "; stopped: " : "", w->stopped != NULL ? w->stopped : "");
	if (w->found > 0)
		sb_iso_note(&ep->iso, ph, SB_ISO_RUNNER_SANDBOX, false,
		    "runner: %zu place%s shared with the agent past the read-only root: %s",
		    w->found, w->found == 1 ? "" : "s", w->first);
	else if (w->stopped != NULL) {
		_cleanup_free_ char *safe = sb_escape(w->path);

		sb_iso_note(&ep->iso, ph, SB_ISO_RUNNER_SANDBOX, false,
		    "runner: the view could not be looked through for places shared with the "
		    "agent (%s, at %s, after %zu entries)",
		    w->stopped, safe, w->entries);
	}
	shared_walk_free(w);
}

/* Root's namespaces ("net:[...] mnt:[...] ipc:[...] user:[...]"), for the runner's probe. */
static void
root_namespaces(struct sb_argv *env)
{
	static const char *const kinds[] = { "net", "mnt", "ipc", "user" };
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(512);
	char id[64];

	for (size_t i = 0; i < SB_ARRAY_SIZE(kinds); i++)
		if (ns_id(kinds[i], id, sizeof(id)))
			(void)sb_buf_appendf(&b, NULL, "%s%s", b.len > 0 ? " " : "", id);
	sb_env_set(env, "SSE_PROBE_NS", b.s);
}

/* The devices of root's /dev/pts and /dev/mqueue ("pts:N mqueue:N"), for the runner's probe:
 * its own must be other instances (a terminal or a queue the agent opened is not there). */
static void
root_devices(struct sb_argv *env)
{
	struct stat pts, mq;
	char buf[96];

	snprintf(buf, sizeof(buf), "pts:%llu mqueue:%llu",
	    stat("/dev/pts", &pts) == 0 ? (unsigned long long)pts.st_dev : 0ULL,
	    stat("/dev/mqueue", &mq) == 0 ? (unsigned long long)mq.st_dev : 0ULL);
	sb_env_set(env, "SSE_PROBE_DEVS", buf);
}

/* The container's root_files as "dev:ino,..." for the runner's probe, when the scripts have a
 * root of their own. */
static void
root_file_ids(const struct ep *ep, struct sb_argv *env)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(256);

	if (strcmp(ep->cfg.runner_root, "/") == 0)
		return;
	for (size_t i = 0; i < SB_ARRAY_SIZE(root_files); i++) {
		struct stat st;

		if (stat(root_files[i], &st) < 0)
			memset(&st, 0, sizeof(st));
		(void)sb_buf_appendf(&b, NULL, "%s%llu:%llu", i > 0 ? "," : "",
		    (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	}
	sb_env_set(env, "SSE_PROBE_ROOT_FILES", b.s);
}

/* What every probe is told: where to look, what it claims, who it should be. */
static void
probe_env(const struct ep *ep, const struct sb_creds *creds, struct sb_argv *env)
{
	sb_env_set(env, "PATH", probe_path);
	sb_env_set(env, "LC_ALL", "C");
	sb_env_set(env, "SSE_DAEMON_SOCKET", ep->cfg.daemon_socket);
	sb_env_set(env, "SSE_SOURCE", ep->cfg.source);
	sb_env_set(env, "SSE_DIFFICULTY", ep->cfg.difficulty);
	sb_env_set(env, "SSE_EGRESS", ep->cfg.egress_restricted ? "restricted" : "open");
	if (ep->cfg.net_gateway != NULL)
		sb_env_set(env, "SSE_NET_GATEWAY", ep->cfg.net_gateway);
	if (ep->cfg.net_canary != NULL)
		sb_env_set(env, "SSE_NET_CANARY", ep->cfg.net_canary);
	if (ep->cfg.net_node != NULL)
		sb_env_set(env, "SSE_NET_NODE", ep->cfg.net_node);
	sb_argv_pushf(env, "SSE_PROBE_UID=%u", (unsigned)creds->uid);
	sb_argv_pushf(env, "SSE_PROBE_GID=%u", (unsigned)creds->gid);
	sb_argv_pushf(env, "SSE_PROBE_AGENT_UID=%u", (unsigned)ep->agent_creds.uid);
}

/*
 * The runner's probe runs in the task scripts' sandbox (the open one, or the withheld one),
 * which this returns (NULL: runner_sandbox is noted as failed). A marker only root could
 * have made in the real /tmp must not be visible there (made here: its path in *mark, for
 * the caller to remove, its descriptor in *mark_fd); the places the agent can write must
 * look empty. What the probe compares with goes into env.
 */
static const struct sb_sandbox *
runner_probe_setup(struct ep *ep, enum sb_iso_phase ph, bool withheld, struct sb_argv *env,
    char **mark, int *mark_fd)
{
	_cleanup_free_ char *hidden = sb_xasprintf("%s:%s:%s:%s", ep->cfg.source, ep->agent_home,
	    ep->cfg.archive, ep->cfg.daemon_state);
	_cleanup_free_ char *rnd = NULL;
	const char *slash = strrchr(ep->cfg.runner_root, '/');
	const struct sb_sandbox *sb;
	struct sb_error *err = NULL;

	/*
	 * The open sandbox hides the directory the scripts' own root is in. The withheld one
	 * has no /sys, and no other process in /proc (pid 1, the entrypoint, stands for them):
	 * names looked up there would stay cached for the agent to time.
	 */
	if (strcmp(ep->cfg.runner_root, "/") != 0 && slash != NULL &&
	    slash != ep->cfg.runner_root) {
		char *h2 = withheld ? sb_xasprintf("%s:/sys:/proc/1:/proc/sys", hidden) :
		    sb_xasprintf("%s:%.*s", hidden, (int)(slash - ep->cfg.runner_root),
			ep->cfg.runner_root);

		free(hidden);
		hidden = h2;
	}
	rnd = random_hex();
	*mark = sb_xasprintf("/tmp/.ssebench-probe-%s", rnd);
	*mark_fd = open(*mark, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	sb_env_set(env, "SSE_PROBE_TMP_MARK", *mark);
	sb_env_set(env, "SSE_PROBE_HIDDEN", hidden);
	root_namespaces(env);
	root_devices(env);
	if (withheld)
		root_file_ids(ep, env);
	sb = runner_sandbox(ep, withheld, &err);
	if (sb == NULL) {
		sb_iso_note(&ep->iso, ph, SB_ISO_RUNNER_SANDBOX, false, "runner: %s",
		    sb_error_message(err));
		sb_error_release(&err);
	}
	return sb;
}

/* Run the probe as role with creds, feeding it the path list; record its answers. */
static void
run_probe(struct ep *ep, enum sb_iso_phase ph, const char *role, const struct sb_creds *creds,
    bool withheld)
{
	static const struct sb_rlimit_set nocore = { RLIMIT_CORE, 0, 0 };
	_cleanup_buf_ struct sb_buf paths = SB_BUF_INIT(PROBE_INPUT_MAX);
	_cleanup_argv_ struct sb_argv env = SB_ARGV_INIT;
	_cleanup_close_ int root_fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char *argv[] = { ep->self_exe, (char *)"--isolation-probe", (char *)role,
		(char *)sb_iso_phase_name(ph), NULL };
	struct sb_cmd cmd = SB_CMD_INIT;
	struct sb_cmd_result res;
	struct sb_error *err = NULL;
	bool runner = strcmp(role, "runner") == 0;
	_cleanup_free_ char *mark = NULL;
	_cleanup_close_ int mark_fd = -1;

	hidden_paths(ep, ph, strcmp(role, "agent") == 0, &paths);
	probe_env(ep, creds, &env);
	if (runner)
		cmd.sandbox = runner_probe_setup(ep, ph, withheld, &env, &mark, &mark_fd);
	cmd.path = ep->self_exe;
	cmd.argv = argv;
	cmd.envp = env.v;
	cmd.cwd_fd = root_fd;
	cmd.stdin_fd = SB_CMD_CAPTURE;
	cmd.stdin_data = paths.s;
	cmd.stdin_len = paths.len;
	cmd.stdout_fd = SB_CMD_CAPTURE;
	cmd.stderr_fd = SB_CMD_CAPTURE;
	cmd.capture_max = PROBE_OUTPUT_MAX;
	cmd.creds = creds;
	cmd.seccomp = ep->seccomp;
	cmd.rlimits = &nocore;
	cmd.n_rlimits = 1;
	cmd.timeout_ms = PROBE_TIMEOUT_MS;
	cmd.flags = SB_CMD_NEW_PGRP | SB_CMD_DEATHSIG;
	if (sb_cmd_run(&cmd, &res, &err) < 0) {
		ep_log(SB_LOG_ERROR, "isolation probe as %s: %s", role, sb_error_message(err));
		if (runner)
			sb_iso_note(&ep->iso, ph, SB_ISO_RUNNER_SANDBOX, false,
			    "runner: the probe could not start: %s", sb_error_message(err));
		sb_error_release(&err);
		if (mark != NULL)
			(void)unlink(mark);
		return;
	}
	if (mark != NULL)
		(void)unlink(mark);
	parse_probe(ep, ph, role, &res.out);
	if (res.exit_code != 0) {
		sb_buf_rtrim(&res.err);
		ep_log(SB_LOG_WARN, "isolation probe as %s exited with status %d%s: %s", role,
		    res.exit_code, res.timed_out ? " (timed out)" : "", res.err.s);
	}
	sb_cmd_result_release(&res);
}

json_t *
ep_task_record_load(struct ep *ep, enum sb_iso_phase ph)
{
	json_t *doc = NULL;

	if (sb_json_load_file_at(ep->results_fd, EP_SIDECAR_TASK_RECORD, SB_JSON_FILE_MAX, &doc,
		NULL) < 0)
		return NULL;
	if (!json_is_object(json_object_get(json_object_get(doc, "phases"),
		sb_iso_phase_name(ph)))) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

/* Fold the task container's record for phase ph into ep->iso (a missing one fails it). */
static void
merge_task_record(struct ep *ep, enum sb_iso_phase ph)
{
	json_t *doc = ep_task_record_load(ep, ph);

	if (!sb_iso_merge_json(&ep->iso, ph, doc, "task container")) {
		/* Without the task side, what only it can check is not checked: failed. */
		sb_iso_note(&ep->iso, ph, SB_ISO_RUNNER_IDENTITY, false,
		    "task container: no isolation record for %s (or for another egress claim)",
		    sb_iso_phase_name(ph));
		sb_iso_note(&ep->iso, ph, SB_ISO_TASK_FILES_HIDDEN, false,
		    "task container: no isolation record for %s", sb_iso_phase_name(ph));
	}
	json_decref(doc);
}

/*
 * The runner's side: its probes in each of the scripts' two sandboxes (sb_sandbox_for_runner)
 * and the places it shares with the agent, or, in a sidecar agent container, the task
 * container's record of them.
 */
static void
check_runner(struct ep *ep, enum sb_iso_phase ph)
{
	if (ep->cfg.role == EP_ROLE_SIDECAR_AGENT)
		/* No runner here: scripts run in the task container, whose record says how. */
		merge_task_record(ep, ph);
	else if (ep->have_runner) {
		if (runner_root_closed(ep, ph)) {
			run_probe(ep, ph, "runner", &ep->runner_creds, false);
			if (strcmp(ep->cfg.runner_root, "/") != 0)
				run_probe(ep, ph, "runner", &ep->runner_creds, true);
			check_shared_places(ep, ph);
		}
	} else
		sb_iso_note(&ep->iso, ph, SB_ISO_RUNNER_IDENTITY, false, "no runner user '%s'",
		    ep->cfg.runner_user);
}

/*
 * Root's own look: the fix is mounted for the reference agent, and for no other. In sidecar
 * mode it is mounted in the agent container only: the task container, whose bash tool the
 * agent drives, must never have it.
 */
static void
check_reference_mount(struct ep *ep, enum sb_iso_phase ph)
{
	struct stat st;
	bool mounted = lstat(ep->cfg.reference_path, &st) == 0;

	if (ep->cfg.role == EP_ROLE_SIDECAR_TASK)
		sb_iso_note(&ep->iso, ph, SB_ISO_REFERENCE_MOUNT, !mounted,
		    "%s is %s in the task container", ep->cfg.reference_path,
		    mounted ? "mounted" : "absent");
	else
		sb_iso_note(&ep->iso, ph, SB_ISO_REFERENCE_MOUNT, mounted == ep->cfg.reference_run,
		    "%s is %s; this is %sa reference run", ep->cfg.reference_path,
		    mounted ? "mounted" : "absent", ep->cfg.reference_run ? "" : "not ");
}

/*
 * The record of phase ph into isolation.json, or, in a sidecar task container, into the
 * record the agent container folds in (merge_task_record). False if it could not be written:
 * unrecorded is unestablished.
 */
static bool
write_record(struct ep *ep, enum sb_iso_phase ph)
{
	struct sb_error *err = NULL;
	json_t *j = sb_iso_to_json(&ep->iso, ph);
	bool ok = true;

	json_object_set_new(j, "enforced", json_boolean(ep->cfg.isolation_enforced));
	if (ph == SB_ISO_BEFORE_GRADING && ep->cfg.proxy_key)
		json_object_set_new(j, "proxy_key_before_grading",
		    json_string(ep->key_status[0] != '\0' ? ep->key_status : "unknown"));
	if (sb_json_write_atomic_at(ep->results_fd,
		ep->cfg.role == EP_ROLE_SIDECAR_TASK ? EP_SIDECAR_TASK_RECORD : "isolation.json", j,
		0644, &err) < 0) {
		ep_log(SB_LOG_ERROR, "%s", sb_error_message(err));
		sb_error_release(&err);
		ok = false;
	}
	json_decref(j);
	return ok;
}

/* Every claimed property that did not hold, in this phase or an earlier one, by name. */
static void
log_not_established(const struct ep *ep, enum sb_iso_phase ph, const char *failed)
{
	for (int p = 0; p < SB_ISO_PROP_COUNT; p++)
		for (int q = 0; q <= (int)ph; q++)
			if (sb_iso_claimed((enum sb_iso_prop)p, (enum sb_iso_phase)q,
				ep->cfg.egress_restricted) &&
			    ep->iso.state[q][p] != SB_ISO_HELD)
				ep_log(SB_LOG_ERROR, "isolation %s: %s NOT established: %s",
				    sb_iso_phase_name((enum sb_iso_phase)q),
				    sb_iso_prop_name((enum sb_iso_prop)p), ep->iso.detail[q][p]);
	ep_log(SB_LOG_ERROR, "isolation %s: not established (%s): the run will not be scored%s",
	    sb_iso_phase_name(ph), failed,
	    ep->cfg.isolation_enforced ? "" : " (SSE_ISOLATION=record: going on regardless)");
}

bool
ep_isolation_establish(struct ep *ep, enum sb_iso_phase ph)
{
	_cleanup_free_ char *failed = NULL;
	uint64_t start = sb_now_ms();
	bool scored;

	if (ph == SB_ISO_BEFORE_AGENT)
		sb_iso_record_init(&ep->iso, ep->cfg.egress_restricted);
	run_probe(ep, ph, "agent", &ep->agent_creds, false);
	/* In each container of a run (the sidecar agent's too, whose agent is not frozen). */
	check_counters_masked(ep, ph);
	check_runner(ep, ph);
	check_reference_mount(ep, ph);
	/* Whatever nobody answered for has failed: say so by name. */
	for (int p = 0; p < SB_ISO_PROP_COUNT; p++)
		if (sb_iso_claimed((enum sb_iso_prop)p, ph, ep->cfg.egress_restricted) &&
		    ep->iso.state[ph][p] == SB_ISO_UNCHECKED)
			sb_iso_note(&ep->iso, ph, (enum sb_iso_prop)p, false,
			    "not checked: the probe gave no answer");
	scored = sb_iso_verdict(&ep->iso, ph, &failed);
	if (!write_record(ep, ph))
		scored = false; /* unrecorded is unestablished */
	if (scored) {
		ep_log(SB_LOG_INFO, "isolation %s: established (%.1f s)", sb_iso_phase_name(ph),
		    ep_secs(start));
		return true;
	}
	log_not_established(ep, ph, failed);
	return false;
}

void
ep_write_unscored_result(struct ep *ep, enum sb_iso_phase ph, const struct ep_agent_result *ar)
{
	_cleanup_free_ char *failed = NULL, *msg = NULL;
	_cleanup_buf_ struct sb_buf log = SB_BUF_INIT(SB_GRADE_ERROR_LOG_MAX);
	enum sb_iso_outcome outcome = sb_iso_outcome(&ep->iso, ph, &failed);
	struct sb_run_runtime rt;
	struct sb_error *err = NULL;
	json_t *r;

	for (int p = 0; p < SB_ISO_PROP_COUNT; p++)
		for (int q = 0; q <= (int)ph; q++)
			if (sb_iso_claimed((enum sb_iso_prop)p, (enum sb_iso_phase)q,
				ep->cfg.egress_restricted) &&
			    ep->iso.state[q][p] != SB_ISO_HELD)
				(void)sb_buf_appendf(&log, NULL, "%s (%s): %s\n",
				    sb_iso_prop_name((enum sb_iso_prop)p),
				    sb_iso_phase_name((enum sb_iso_phase)q), ep->iso.detail[q][p]);
	/*
	 * A forfeit is a grade (not passed), so that an agent cannot make a run it expects to
	 * lose not count by breaking what was checked before it started; only a failure
	 * before the agent ran is the harness's (an error, worth a retry).
	 */
	msg = sb_iso_outcome_message(outcome, failed);
	rt = (struct sb_run_runtime){
		.agent_duration = ar != NULL ? ar->duration_ms / 1000 : 0,
		.agent_timeout = ar != NULL && ar->timed_out,
		.has_exit_code = ar != NULL,
		.agent_exit_code = ar != NULL ? ar->status : 0,
	};
	r = sb_ungraded_result(outcome == SB_ISO_FORFEIT, msg, log.s, &rt);
	if (r != NULL)
		json_object_set_new(r, "isolation", sb_iso_to_json(&ep->iso, ph));
	if (r == NULL || sb_json_write_atomic_at(ep->results_fd, "result.json", r, 0644, &err) < 0) {
		ep_log(SB_LOG_ERROR, "cannot write result.json: %s",
		    err != NULL ? sb_error_message(err) : "out of memory");
		sb_error_release(&err);
	}
	json_decref(r);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* network.c: run networks, the host guard and the egress canary (see network.h). */
#include "config.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "sb/argv.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/sha256.h"

#include "cli.h"
#include "docker.h"
#include "images.h"
#include "network.h"

/* iptables and ip: a non-zero status is an answer (iptables -C: no such rule), not a failure. */
static const struct cli_tool net_tool = { CLI_TOOL_QUIET, 30000 };
#define tool(err, ...) cli_system_tool((err), &net_tool, __VA_ARGS__)

/*
 * The host guard, two rules per internal bridge, both refusing at once rather than dropping:
 *   - INPUT, -i BR: an internal network still lets its containers reach the host itself
 *     through the bridge's address (docs/running.md, "A network of its own"): traffic to the
 *     host goes through INPUT, which Docker does not filter.
 *   - DOCKER-USER (the top of FORWARD, where Docker wants rules of ours), -i BR ! -o BR:
 *     anything leaving the bridge. Docker's own rule for an internal network already drops
 *     it; ours answers instead. Traffic between the run's containers (agent, task, model
 *     proxy) stays on the bridge and is not matched.
 * Why refuse (ICMP "administratively prohibited", EHOSTUNREACH at connect) and not drop: the
 * entrypoint's network checks (entrypoint/isolation.c:probe_network) then get their answer
 * in a round trip instead of waiting out a silence, twice per run. Being refused still
 * proves nothing got through: the reachable answers are a connection or a TCP reset from the
 * far end, which only a route that works can give. A guard that is missing (an older rule
 * set, iptables without the REJECT target) makes the checks slower, never wrong: silence
 * counts as unreachable as before. docs/integrity.md, "Docker engine and networks".
 */
#define GUARD_REJECT "REJECT", "--reject-with", "icmp-admin-prohibited"

/* op: "-C" (is it there?), "-I" (add it first), "-D" (remove one copy). */
static int
guard_rule(struct sb_error **err, const char *op, bool forward, const char *br)
{
	if (forward)
		return tool(err, "iptables", op, "DOCKER-USER", "-i", br, "!", "-o", br, "-j",
		    GUARD_REJECT, NULL);
	return tool(err, "iptables", op, "INPUT", "-i", br, "-j", GUARD_REJECT, NULL);
}

static int
guard_host(const char *name, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv q = SB_ARGV_INIT;
	_cleanup_free_ char *br = NULL;
	int r;

	sb_argv_pushl(&q, "network", "inspect", "--format",
	    "{{index .Options \"com.docker.network.bridge.name\"}}", name, NULL);
	if (docker_output(&q, &br, NULL) != 0 || br == NULL || *br == '\0' ||
	    strcmp(br, "<no value>") == 0) {
		sb_log(SB_LOG_WARN,
		    "the internal network '%s' has no named bridge, so the host cannot be guarded: "
		    "this run will not be scored (remove it with: docker network rm %s)", name, name);
		return 0;
	}
	/* The INPUT rule is the guard itself: without it the host is open, so no run. */
	r = guard_rule(err, "-C", false, br);
	if (r < 0)
		return sb_error_prefix(err, "guarding the host from '%s'", name);
	if (r != 0 && guard_rule(err, "-I", false, br) != 0)
		return sb_error_set(err, EPERM, "cannot add the host guard for bridge '%s' (iptables)",
		    br);
	/* The FORWARD rule only makes the egress check quick: Docker's own rule blocks. */
	if (guard_rule(NULL, "-C", true, br) != 0 && guard_rule(NULL, "-I", true, br) != 0)
		sb_log(SB_LOG_WARN, "no quick refusal for bridge '%s' (iptables DOCKER-USER): each "
		    "egress check of its runs waits out a silence instead", br);
	return 0;
}

/* The bridge name we give an internal network (at most 15 bytes, for the guard). */
static void
bridge_name(const char *name, char bridge[16])
{
	char hex[65];

	sb_sha256_hex(name, strlen(name), hex);
	snprintf(bridge, 16, "sse-int%.8s", hex);
}

static int ensure(const char *name, bool internal, const char *run_id, struct sb_error **err);

int
net_ensure(const char *name, bool internal, struct sb_error **err)
{
	return ensure(name, internal, NULL, err);
}

int
net_ensure_run(const char *name, bool internal, const char *run_id, struct sb_error **err)
{
	return ensure(name, internal, run_id, err);
}

char *
net_run_name(const char *project, const char *run_id)
{
	return sb_xasprintf("%s_run-%s", project, run_id);
}

char *
net_members(const char *name)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	char *out = NULL;

	sb_argv_pushl(&a, "network", "inspect", "--format", "{{range .Containers}}{{.Name}} {{end}}",
	    name, NULL);
	if (docker_output(&a, &out, NULL) != 0) {
		free(out);
		return NULL;
	}
	return out != NULL ? out : sb_xstrdup("");
}

void
net_remove(const char *name)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ char *members = net_members(name), *br = NULL;
	char *save = NULL;

	if (members == NULL)
		return; /* gone already */
	sb_argv_pushl(&a, "network", "inspect", "--format",
	    "{{index .Options \"com.docker.network.bridge.name\"}}", name, NULL);
	if (docker_output(&a, &br, NULL) == 0 && br != NULL && strncmp(br, "sse-int", 7) == 0)
		for (int fwd = 0; fwd < 2; fwd++) {
			while (guard_rule(NULL, "-D", fwd, br) == 0)
				; /* every copy of the rule */
			/* The DROP rule of older versions. */
			while (!fwd &&
			    tool(NULL, "iptables", "-D", "INPUT", "-i", br, "-j", "DROP", NULL) == 0)
				;
		}
	for (char *c = strtok_r(members, " \n", &save); c != NULL; c = strtok_r(NULL, " \n", &save)) {
		_cleanup_argv_ struct sb_argv d = SB_ARGV_INIT;

		sb_argv_pushl(&d, "network", "disconnect", "-f", name, c, NULL);
		(void)docker_output(&d, NULL, NULL);
	}
	sb_argv_release(&a);
	sb_argv_pushl(&a, "network", "rm", name, NULL);
	if (docker_output(&a, NULL, NULL) != 0)
		sb_log(SB_LOG_WARN, "the run network '%s' could not be removed (docker network rm %s)",
		    name, name);
}

static int
ensure(const char *name, bool internal, const char *run_id, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ char *is_internal = NULL;
	char bridge[16];

	sb_argv_pushl(&a, "network", "inspect", "--format", "{{.Internal}}", name, NULL);
	if (docker_output(&a, &is_internal, NULL) == 0) {
		/*
		 * A network someone made by hand may not be what we would make. The run goes on
		 * and the entrypoint's isolation checks fail it by name (docs/design.md, "Fail
		 * closed": what is established decides, not what we meant); say so now, so nobody
		 * waits for it.
		 */
		if (internal && (is_internal == NULL || strcmp(is_internal, "true") != 0)) {
			sb_log(SB_LOG_WARN,
			    "the network '%s' exists and is not internal: this run will not be "
			    "scored (remove it with: docker network rm %s)", name, name);
			return 0;
		}
		return internal ? guard_host(name, err) : 0;
	}
	sb_argv_release(&a);
	sb_argv_pushl(&a, "network", "create", "--label", "ssebench.network=1", NULL);
	if (run_id != NULL) {
		sb_argv_push(&a, "--label");
		sb_argv_pushf(&a, "ssebench.run=%s", run_id);
	}
	if (internal) {
		/* A named bridge, so the host guard can name it (at most 15 bytes). */
		bridge_name(name, bridge);
		sb_argv_pushl(&a, "--internal", "-o", NULL);
		sb_argv_pushf(&a, "com.docker.network.bridge.name=%s", bridge);
	}
	sb_argv_push(&a, name);
	if (docker_output(&a, NULL, NULL) != 0) {
		/* Another run may have made it meanwhile: use it if it is there now. */
		sb_argv_release(&a);
		sb_argv_pushl(&a, "network", "inspect", name, NULL);
		if (docker_output(&a, NULL, NULL) != 0)
			return sb_error_set(err, EIO, "cannot create the network '%s'", name);
	} else {
		progress("created network %s%s", name, internal ? " (internal)" : "");
	}
	return internal ? guard_host(name, err) : 0;
}

char *
net_gateway(const char *name)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ char *out = NULL;
	char *save = NULL;

	sb_argv_pushl(&a, "network", "inspect", "--format",
	    "{{range .IPAM.Config}}{{.Gateway}} {{end}}", name, NULL);
	if (docker_output(&a, &out, NULL) != 0 || out == NULL)
		return NULL;
	for (char *t = strtok_r(out, " \n", &save); t != NULL; t = strtok_r(NULL, " \n", &save)) {
		struct in_addr ia;

		if (inet_pton(AF_INET, t, &ia) == 1)
			return sb_xstrdup(t);
	}
	return NULL;
}

/* Is the canary there, with its address up and a way back to the host? */
static bool
canary_ok(void)
{
	struct sb_error *err = NULL;
	/* Lookups only ("route get" sends nothing): a default route back, and our route there. */
	int r = tool(&err, "ip", "-n", NET_CANARY_NETNS, "route", "get", "172.16.0.1", NULL);

	sb_error_release(&err);
	if (r != 0)
		return false;
	r = tool(&err, "ip", "route", "get", NET_CANARY_ADDR, NULL);
	sb_error_release(&err);
	return r == 0 && tool(NULL, "ip", "-n", NET_CANARY_NETNS, "-4", "addr", "show", "dev",
			     "eth0", "to", NET_CANARY_ADDR "/32", NULL) == 0;
}

/*
 * On a bridge that is not internal, Docker forwards (and masquerades) traffic to any
 * address the host can route, so a connection to the canary is answered (refused: nothing
 * listens); from an internal network Docker drops it, so it times out. Docker 20.10 gives
 * containers of internal networks a default route all the same, so the route table proves
 * nothing: only a packet does (measured: docs/integrity.md).
 */
int
net_ensure_canary(struct sb_error **err)
{
	if (canary_ok())
		return 0;
	/* Start over: a half-made canary (a crash, a reboot) is removed first. */
	(void)tool(NULL, "ip", "link", "del", NET_CANARY_VETH, NULL);
	(void)tool(NULL, "ip", "netns", "del", NET_CANARY_NETNS, NULL);
	if (tool(err, "ip", "netns", "add", NET_CANARY_NETNS, NULL) != 0 ||
	    tool(err, "ip", "link", "add", NET_CANARY_VETH, "type", "veth", "peer", "name", "eth0",
		"netns", NET_CANARY_NETNS, NULL) != 0 ||
	    tool(err, "ip", "addr", "add", NET_CANARY_HOST, "dev", NET_CANARY_VETH, NULL) != 0 ||
	    tool(err, "ip", "link", "set", NET_CANARY_VETH, "up", NULL) != 0 ||
	    tool(err, "ip", "-n", NET_CANARY_NETNS, "addr", "add", NET_CANARY_ADDR "/30", "dev",
		"eth0", NULL) != 0 ||
	    tool(err, "ip", "-n", NET_CANARY_NETNS, "link", "set", "eth0", "up", NULL) != 0 ||
	    tool(err, "ip", "-n", NET_CANARY_NETNS, "link", "set", "lo", "up", NULL) != 0 ||
	    tool(err, "ip", "-n", NET_CANARY_NETNS, "route", "add", "default", "via", "198.18.0.1",
		NULL) != 0) {
		/* A race with another run making it at the same moment ends well too. */
		if (canary_ok()) {
			sb_error_release(err);
			return 0;
		}
		if (err != NULL && *err == NULL)
			sb_error_set(err, EIO, "ip failed");
		return sb_error_prefix(err, "cannot make the egress canary (namespace %s)",
		    NET_CANARY_NETNS);
	}
	if (!canary_ok())
		return sb_error_set(err, EIO, "the egress canary (namespace %s) does not answer to checks",
		    NET_CANARY_NETNS);
	progress("made the egress canary %s (namespace %s)", NET_CANARY_ADDR, NET_CANARY_NETNS);
	return 0;
}

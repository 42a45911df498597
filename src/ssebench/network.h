/* SPDX-License-Identifier: Apache-2.0 */
/*
 * network.h: the networks a run container joins, the host guard, and the egress canary.
 *
 * Each run joins a network of its own (net_run_name): for a restricted run an internal
 * bridge whose host address is dropped by one iptables rule, for an open run an ordinary
 * one. The canary is a network
 * namespace on this host, outside every Docker bridge, holding one address
 * (NET_CANARY_ADDR): traffic that leaves an internal network reaches it, traffic that does
 * not is dropped. The entrypoint tries it from inside the run, so "no route out" is
 * established by a packet that never leaves the machine (docs/integrity.md, "Docker engine
 * and networks").
 */
#ifndef SSEBENCH_NETWORK_H
#define SSEBENCH_NETWORK_H

#include <stdbool.h>

#include "sb/error.h"

#define NET_CANARY_NETNS "ssebench-canary"
#define NET_CANARY_VETH	 "sse-canary0"		/* the host's end */
#define NET_CANARY_HOST	 "198.18.0.1/30"	/* RFC 2544 benchmarking space: never routed */
#define NET_CANARY_ADDR	 "198.18.0.2"		/* the namespace's end, what runs try */

/*
 * Make the network if it does not exist (internal: with a named bridge and the host guard).
 * A network that exists but is not what we would make (not internal, no named bridge) is
 * used anyway with a warning: the run's isolation checks then fail it by name.
 */
int net_ensure(const char *name, bool internal, struct sb_error **err);

/* The host's IPv4 address on the network, or NULL when Docker names none. */
char *net_gateway(const char *name);

/*
 * The network of one run: "<project>_run-<run-id>". Each run has one of its own, internal
 * for restricted egress, that only its containers and the model proxy join, so that no
 * run can reach another (a second run's agent, its daemon's TCP port), whatever the
 * difficulty: a level-0 run legitimately holds the PoC, and must not be able to hand it
 * to the run next to it.
 */
char *net_run_name(const char *project, const char *run_id);

/*
 * net_ensure for a run's own network, labelled ssebench.run=<run-id> (so `runs remove`
 * finds it).
 */
int net_ensure_run(const char *name, bool internal, const char *run_id, struct sb_error **err);

/*
 * Remove a run's network: the host guard rule of its bridge, every container still on it
 * disconnected (the proxy), then the network. Best effort; failures are said.
 */
void net_remove(const char *name);

/*
 * The names of the containers on the network, space-separated (empty when none), or NULL
 * when it cannot be inspected.
 */
char *net_members(const char *name);

/*
 * Make the canary namespace if it is missing or wrong (idempotent; safe when two runs race).
 * Fails when `ip` cannot make it: a restricted run then goes on without SSE_NET_CANARY and
 * is not scored.
 */
int net_ensure_canary(struct sb_error **err);

#endif

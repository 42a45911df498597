#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/docker/t0001-smoke.sh: the Docker engine, the base image and the isolation of an
# internal network, checked against real containers.
#
# The test builds this layout, all of it its own and removed again on exit:
#
#   default bridge:     peer "bridge" (TCP listener)      client "bcli"
#   internal network:   peer "intpeer" (TCP listener)     client "icli" (short DNS options)
#   host:               a listener bound to the internal network's gateway address
#
# and checks that the internal client reaches its own peer but neither the bridge peer nor
# the host (once the guard rule from scripts/docker-up is in place), that Docker does not
# forward its packets towards the outside, and that an outside name lookup fails fast.
# Every "cannot" check has a matching "can" control, so a broken probe cannot pass as
# isolation.
#
# No probe leaves the machine: the "outside" address is in TEST-NET-2 (198.51.100.0/24,
# RFC 5737), and before any packet is sent there the test inserts, per client container, a
# mangle POSTROUTING rule that drops it. mangle POSTROUTING comes after the filter FORWARD
# chain where Docker enforces --internal, so the rule's packet counter tells whether Docker
# forwarded the packet, and the rule itself keeps it on the host.
#
# Needs root and a Docker engine; starts one with scripts/docker-up when none answers.
# Environment: SB_SRCDIR, SSEBENCH_DOCKER (client, default /usr/bin/docker),
# SSEBENCH_REGISTRY (image prefix), SSEBENCH_REQUIRE_DOCKER=1 (skip becomes failure).

_here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib.sh disable=SC1091
. "$_here/../lib.sh"

DOCKER=${SSEBENCH_DOCKER:-/usr/bin/docker}
DOCKER_UP=$SB_SRCDIR/scripts/docker-up
PORT=7070                # listener port inside the peer containers
PROBE_TIMEOUT=3          # seconds a blocked connection attempt may take
OUTSIDE=198.51.100.7     # "the outside": TEST-NET-2, and dropped by the sink rules below
DNS_LIMIT_MS=5000        # an outside lookup must fail within this many milliseconds

# Unique, short names: the bridge name must fit in 15 characters.
TAG=$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
NET=sse-t$TAG
C_BRIDGE=$NET-bridge
C_BCLI=$NET-bcli
C_INTPEER=$NET-intpeer
C_ICLI=$NET-icli
HOST_PID=
GUARDED=0
NET_CREATED=0
SINKS=()                 # source addresses that have a sink rule

# ---------------------------------------------------------------------------------------
# Engine

if [ "$(id -u)" -ne 0 ]; then
	skip_all "needs root (Docker engine, iptables)"
fi

engine_up() {
	[ -x "$DOCKER" ] && "$DOCKER" version >/dev/null 2>&1
}

if ! engine_up || ! IMAGE=$("$DOCKER_UP" --image-name) ||
	! "$DOCKER" image inspect "$IMAGE" >/dev/null 2>&1; then
	if [ ! -x "$DOCKER_UP" ]; then
		skip_all "no Docker engine, and $DOCKER_UP is missing"
	fi
	if ! "$DOCKER_UP" >"$SB_TMP/docker-up.log" 2>&1; then
		diag "scripts/docker-up failed:"
		diag "$(tail -n 20 "$SB_TMP/docker-up.log")"
	fi
fi
if ! engine_up; then
	skip_all "no Docker engine answers ($DOCKER version fails)"
fi
IMAGE=$("$DOCKER_UP" --image-name) || bail "scripts/docker-up --image-name failed"
if ! "$DOCKER" image inspect "$IMAGE" >/dev/null 2>&1; then
	skip_all "base image $IMAGE is missing and scripts/docker-up could not build it"
fi

# ---------------------------------------------------------------------------------------
# Helpers

sb_cleanup_hook() {
	local c
	for c in "$C_BRIDGE" "$C_BCLI" "$C_INTPEER" "$C_ICLI"; do
		"$DOCKER" rm -f "$c" >/dev/null 2>&1
	done
	if [ "$NET_CREATED" = 1 ]; then
		"$DOCKER" network rm "$NET" >/dev/null 2>&1 ||
			diag "cleanup: could not remove network $NET"
	fi
	if [ "$GUARDED" = 1 ]; then
		"$DOCKER_UP" --unguard-bridge "$NET" 2>/dev/null ||
			diag "cleanup: could not remove the guard rule for $NET"
	fi
	if [ -n "$HOST_PID" ]; then
		kill "$HOST_PID" 2>/dev/null
		wait "$HOST_PID" 2>/dev/null
	fi
	for c in "${SINKS[@]}"; do
		sink_rule "$c"
		while iptables -w 10 -t mangle -C POSTROUTING "${SINK_RULE[@]}" 2>/dev/null; do
			iptables -w 10 -t mangle -D POSTROUTING "${SINK_RULE[@]}" || break
		done
	done
	return 0
}

# sink_rule SOURCE: set SINK_RULE to the match and target of the sink rule for one client
# address.
sink_rule() {
	SINK_RULE=(-s "$1/32" -d "$OUTSIDE/32" -m comment --comment "$NET-sink" -j DROP)
}

# add_sink SOURCE: insert the sink rule for SOURCE and confirm it is there.
add_sink() {
	sink_rule "$1"
	iptables -w 10 -t mangle -I POSTROUTING "${SINK_RULE[@]}" || return 1
	SINKS+=("$1")
	iptables -w 10 -t mangle -C POSTROUTING "${SINK_RULE[@]}"
}

# sink_count SOURCE: how many packets from SOURCE reached the sink rule.
sink_count() {
	iptables -w 10 -t mangle -L POSTROUTING -v -x -n |
		awk -v s="$1" -v d="$OUTSIDE" -v c="/* $NET-sink */" \
			'$8 == s && $9 == d && index($0, c) { n += $1 } END { print n + 0 }'
}

# A TCP listener that answers every connection with one line (argv: port, line), for
# perl-base, which the minbase image has; it creates /tmp/ready once it listens.
# shellcheck disable=SC2016 # perl code, not shell
LISTENER='use IO::Socket::INET;
my $s = IO::Socket::INET->new(LocalPort => $ARGV[0], Listen => 16, ReuseAddr => 1)
	or die "listen: $!\n";
open(my $f, ">", "/tmp/ready") and close($f);
while (my $c = $s->accept) { print $c "$ARGV[1]\n"; close($c); }'

# The host side: bind to an address (argv: address, line), any free port; print the port.
# shellcheck disable=SC2016
HOST_LISTENER='use IO::Socket::INET;
$| = 1;
my $s = IO::Socket::INET->new(LocalAddr => $ARGV[0], LocalPort => 0, Listen => 16,
	ReuseAddr => 1) or die "listen: $!\n";
print $s->sockport, "\n";
while (my $c = $s->accept) { print $c "$ARGV[1]\n"; close($c); }'

# probe CONTAINER HOST PORT: print the first line the listener at HOST:PORT sends, as seen
# from inside CONTAINER; give up after PROBE_TIMEOUT seconds.
probe() {
	# shellcheck disable=SC2016 # expanded by the bash inside the container
	timeout $((PROBE_TIMEOUT + 15)) "$DOCKER" exec "$1" \
		timeout "$PROBE_TIMEOUT" bash -c \
		'exec 3<>"/dev/tcp/$1/$2" && IFS= read -r line <&3 && printf "%s\n" "$line"' \
		probe "$2" "$3" 2>/dev/null
}

# probe_retry CONTAINER HOST PORT: like probe, but allow a few tries for a peer that is
# still starting (used for the controls only).
probe_retry() {
	local _ out
	for _ in 1 2 3 4 5; do
		out=$(probe "$@") && [ -n "$out" ] && break
		sleep 1
	done
	printf '%s\n' "$out"
}

# wait_ready CONTAINER: wait until the listener in CONTAINER is listening.
wait_ready() {
	local _
	for _ in $(seq 1 50); do
		"$DOCKER" exec "$1" test -e /tmp/ready 2>/dev/null && return 0
		sleep 0.1
	done
	diag "listener in $1 did not start:"
	diag "$("$DOCKER" logs "$1" 2>&1 | tail -n 5)"
	return 1
}

container_ip() {
	"$DOCKER" inspect -f "{{with index .NetworkSettings.Networks \"$2\"}}{{.IPAddress}}{{end}}" "$1"
}

now_ms() {
	date +%s%3N
}

plan 12

# ---------------------------------------------------------------------------------------
# 1. the base image runs

# shellcheck disable=SC2016 # expanded in the container
out=$("$DOCKER" run --rm --network none "$IMAGE" sh -c '. /etc/os-release && echo "$ID"' 2>&1)
is "$out" debian "base image $IMAGE runs (--network none)"

# ---------------------------------------------------------------------------------------
# The layout

start() { # NAME NETWORK ARGS...: start a detached, labelled container
	local name=$1 net=$2
	shift 2
	"$DOCKER" run -d --name "$name" --network "$net" --label ssebench.test=t0001 \
		--dns-opt timeout:1 --dns-opt attempts:1 "$@" >/dev/null
}

"$DOCKER" network create --internal --label ssebench.test=t0001 \
	-o com.docker.network.bridge.name="$NET" "$NET" >/dev/null ||
	bail "docker network create --internal $NET failed"
NET_CREATED=1
GATEWAY=$("$DOCKER" network inspect -f '{{range .IPAM.Config}}{{.Gateway}}{{end}}' "$NET")
[ -n "$GATEWAY" ] || bail "network $NET has no gateway address"
diag "internal network $NET (bridge $NET), gateway $GATEWAY"

start "$C_BRIDGE" bridge "$IMAGE" perl -e "$LISTENER" "$PORT" from-bridge-peer ||
	bail "cannot start $C_BRIDGE"
start "$C_INTPEER" "$NET" "$IMAGE" perl -e "$LISTENER" "$PORT" from-internal-peer ||
	bail "cannot start $C_INTPEER"
start "$C_BCLI" bridge "$IMAGE" sleep infinity || bail "cannot start $C_BCLI"
start "$C_ICLI" "$NET" "$IMAGE" sleep infinity || bail "cannot start $C_ICLI"
wait_ready "$C_BRIDGE" || bail "peer $C_BRIDGE is not listening"
wait_ready "$C_INTPEER" || bail "peer $C_INTPEER is not listening"
BRIDGE_IP=$(container_ip "$C_BRIDGE" bridge)
[ -n "$BRIDGE_IP" ] || bail "no address for $C_BRIDGE on the default bridge"
diag "bridge peer at $BRIDGE_IP"

# The host listener, bound to the internal network's gateway address only.
perl -e "$HOST_LISTENER" "$GATEWAY" from-host >"$SB_TMP/host.port" 2>"$SB_TMP/host.err" &
HOST_PID=$!
HOST_PORT=
for _ in $(seq 1 50); do
	HOST_PORT=$(head -n 1 "$SB_TMP/host.port")
	[ -n "$HOST_PORT" ] && break
	sleep 0.1
done
[ -n "$HOST_PORT" ] || bail "host listener did not start: $(cat "$SB_TMP/host.err")"

# Without the guard the host is expected to answer (Docker 20.10 leaves INPUT open); only
# a diagnostic, since a later engine might close the gap by itself.
out=$(probe "$C_ICLI" "$GATEWAY" "$HOST_PORT")
diag "before the guard rule, internal -> host $GATEWAY:$HOST_PORT: ${out:-no answer}"

"$DOCKER_UP" --guard-bridge "$NET" 2>"$SB_TMP/guard.err"
rc=$?
[ "$rc" = 0 ] && GUARDED=1
iptables -w 10 -C INPUT -i "$NET" -j DROP 2>/dev/null
ok $? "host guard rule for bridge $NET is in place (docker-up exit $rc)"
[ "$rc" = 0 ] || diag "$(cat "$SB_TMP/guard.err")"

# ---------------------------------------------------------------------------------------
# 3-4. the internal network: own peer yes (by name), bridge peer no

out=$(probe_retry "$C_ICLI" "$C_INTPEER" "$PORT")
is "$out" from-internal-peer "internal client reaches its peer on the same internal network (control)"

t0=$(now_ms)
out=$(probe "$C_ICLI" "$BRIDGE_IP" "$PORT")
is "$out" "" "internal client cannot reach the default-bridge peer at $BRIDGE_IP"
diag "blocked attempt took $(($(now_ms) - t0)) ms"

# ---------------------------------------------------------------------------------------
# 5-6. the default bridge: that same peer is reachable; the internal peer is not

out=$(probe_retry "$C_BCLI" "$BRIDGE_IP" "$PORT")
is "$out" from-bridge-peer "default-bridge client reaches the default-bridge peer (control)"

INTPEER_IP=$(container_ip "$C_INTPEER" "$NET")
out=$(probe "$C_BCLI" "$INTPEER_IP" "$PORT")
is "$out" "" "default-bridge client cannot reach the internal peer at ${INTPEER_IP:-?}"

# ---------------------------------------------------------------------------------------
# 7-8. the host, through the internal network's gateway address

# shellcheck disable=SC2016 # a child bash expands it
out=$(timeout 5 bash -c 'exec 3<>"/dev/tcp/$1/$2" && IFS= read -r l <&3 && printf "%s\n" "$l"' \
	probe "$GATEWAY" "$HOST_PORT" 2>/dev/null)
is "$out" from-host "host listener on $GATEWAY:$HOST_PORT answers on the host (control)"

out=$(probe "$C_ICLI" "$GATEWAY" "$HOST_PORT")
is "$out" "" "internal client cannot reach the host at $GATEWAY:$HOST_PORT with the guard"

# ---------------------------------------------------------------------------------------
# 9-10. the outside: Docker forwards the bridge client's packets, not the internal one's

BCLI_IP=$(container_ip "$C_BCLI" bridge)
ICLI_IP=$(container_ip "$C_ICLI" "$NET")
if [ -n "$BCLI_IP" ] && [ -n "$ICLI_IP" ] && add_sink "$BCLI_IP" && add_sink "$ICLI_IP"; then
	probe "$C_BCLI" "$OUTSIDE" 80 >/dev/null
	probe "$C_ICLI" "$OUTSIDE" 80 >/dev/null
	n_bridge=$(sink_count "$BCLI_IP")
	n_internal=$(sink_count "$ICLI_IP")
	diag "packets forwarded towards $OUTSIDE: bridge client $n_bridge, internal client $n_internal"
	[ "$n_bridge" -gt 0 ]
	ok $? "Docker forwards the default-bridge client's packets towards the outside (control)"
	is "$n_internal" 0 "Docker does not forward the internal client's packets towards the outside"
else
	# Without the sink nothing may be sent to $OUTSIDE: fail both checks instead.
	ok 1 "Docker forwards the default-bridge client's packets towards the outside (control)"
	ok 1 "Docker does not forward the internal client's packets towards the outside"
	diag "could not set up the sink rules (client addresses '$BCLI_IP' '$ICLI_IP')"
fi

# ---------------------------------------------------------------------------------------
# 11-12. names: the embedded DNS answers for peers, but outside names fail, and fast

out=$("$DOCKER" exec "$C_ICLI" getent hosts "$C_INTPEER" 2>/dev/null)
like "$out" "^${INTPEER_IP//./\\.}[[:space:]]" "internal client resolves its peer's name (control)"

t0=$(now_ms)
out=$(timeout 30 "$DOCKER" exec "$C_ICLI" getent hosts deb.debian.org 2>&1)
rc=$?
ms=$(($(now_ms) - t0))
diag "outside lookup: exit $rc after $ms ms${out:+: $out}"
[ "$rc" != 0 ] && [ -z "$out" ] && [ "$ms" -lt "$DNS_LIMIT_MS" ]
ok $? "outside name lookup fails within $((DNS_LIMIT_MS / 1000)) s (--dns-opt timeout:1 attempts:1)"

done_testing

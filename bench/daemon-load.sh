#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/daemon-load.sh: GET /project over the agent socket and TCP with 64 concurrent
# connections while a build runs; requests/s, p50/p99 latency, and the daemon's RSS (all
# its processes). Needs root (it starts a real daemon with test users, as tests/daemon do).
#   usage: bench/daemon-load.sh [SECONDS]
SB_SRCDIR=${SB_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
SB_BUILDDIR=${SB_BUILDDIR:-$SB_SRCDIR}
. "$SB_SRCDIR/tests/lib.sh"
. "$SB_SRCDIR/tests/daemon/lib-daemon.sh"
secs=${1:-5}
LOAD=$SB_BUILDDIR/bench/http-load
[ -x "$LOAD" ] || { echo "build it first: make bench/http-load" >&2; exit 1; }
require_daemon_env >/dev/null
make_fixture
printf '#!/bin/sh\nsleep 600\n' >"$D/bench/scripts/build.sh"
start_daemon 2 SSE_BUILD_TIMEOUT=900 || exit 1
# RSS summed over the daemon's processes counts each shared page (the binary, libgit2 and
# the libraries it brings, ~2.5-7 MB a process) once per process; PSS shares it out, so its
# sum is what the daemon costs the machine. Both are printed.
rss() {
	local t=0 s=0
	for p in $daemon_pid $(pgrep -P "$daemon_pid"); do
		t=$((t + $(awk '/VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0)))
		s=$((s + $(awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup" 2>/dev/null || echo 0)))
	done
	echo "$t kB RSS summed, $s kB PSS summed"
}
echo "daemon at rest: $(rss) (all daemon processes)"
req admin POST '/tool/bencher?action=build' '{}' >/dev/null &
sleep 1
echo "agent socket, 64 connections, ${secs}s, a build running:"
"$LOAD" --unix "$SOCK" --concurrency 64 --seconds "$secs"
echo "daemon under load: $(rss)"
echo "TCP (token), 64 connections, ${secs}s, a build running:"
"$LOAD" --tcp "127.0.0.1:$PORT" --token "$TOKEN" --concurrency 64 --seconds "$secs"
echo "daemon under load: $(rss)"
stop_daemon

# SPDX-License-Identifier: Apache-2.0
# tests/mcp/lib-mcp.sh: start and stop ssebench-mcp next to the daemon of lib-daemon.sh.
# Sourced after tests/lib.sh and tests/daemon/lib-daemon.sh.

MCP=${SSEBENCH_MCP:-$SB_BUILDDIR/ssebench-mcp}
mcp_pid=

# A TCP port nobody listens on now (the kernel's pick), so suites can run side by side.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
MPORT=$(free_port)

# start_mcp LEVEL [NAME=VALUE...]: the server on 127.0.0.1:$MPORT, against the daemon's agent
# socket; returns once it accepts connections.
start_mcp() {
	local level=$1
	shift
	env -i PATH=/usr/bin:/bin SSE_DAEMON_SOCKET="$SOCK" SSE_DIFFICULTY="$level" \
		SSE_MCP_PORT="$MPORT" MCP_LOG_DIR="$SB_TMP/mcp-logs" "$@" "$MCP" >>"$SB_TMP/mcp.log" 2>&1 &
	mcp_pid=$!
	for _ in $(seq 50); do
		curl -s -m 1 -o /dev/null "http://127.0.0.1:$MPORT/mcp" && return 0
		sleep 0.1
	done
	diag "ssebench-mcp did not start: $(tail -5 "$SB_TMP/mcp.log")"
	return 1
}

stop_mcp() {
	[ -n "$mcp_pid" ] && kill -TERM "$mcp_pid" 2>/dev/null && wait "$mcp_pid" 2>/dev/null
	mcp_pid=
}

sb_cleanup_hook() {
	stop_mcp
	stop_daemon
}

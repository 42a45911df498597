#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Write one "key: value" line per observation to $SSE_ARCHIVE/probe.txt.
out=$SSE_ARCHIVE/probe.txt
say() { printf '%s: %s\n' "$1" "$2" >>"$out"; }
cd "$SSE_SOURCE" || exit 1
say uid "$(id -u)"
say groups "$(id -G)"
say commits "$(git log --oneline 2>/dev/null | wc -l)"
say commit-subject "$(git log -1 --format=%s 2>/dev/null)"
for f in /ssebench/config.yaml /ssebench/diffs/patch.diff /ssebench-repo /var/lib/ssebench/results \
	/run/ssebench/admin.sock /run/ssebench/admin/admin.sock; do
	if cat "$f" >/dev/null 2>&1 || ls "$f" >/dev/null 2>&1; then say "readable $f" yes; else say "readable $f" no; fi
done
say git-dirs "$(find . -name .git | wc -l)"
say capeff "$(awk '/^CapEff/ {print $2}' /proc/self/status)"
say nonewprivs "$(awk '/^NoNewPrivs/ {print $2}' /proc/self/status)"
say seccomp "$(awk '/^Seccomp:/ {print $2}' /proc/self/status)"
say daemon-version "$(curl -s -m 5 --unix-socket "$SSE_DAEMON_SOCKET" http://d/version)"
say reference-on-agent-socket "$(curl -s -m 5 -o /dev/null -w '%{http_code}' --unix-socket "$SSE_DAEMON_SOCKET" http://d/reference/patch)"
say token-set "$([ -n "${SSE_DAEMON_TOKEN:-}" ] && echo yes || echo no)"
say admin-env "$([ -n "${SSE_ADMIN_SOCKET:-}" ] && echo yes || echo no)"
# The MCP server next to the agent: the handshake, and test_patch at the run's level.
mcp() { curl -s -m "$1" -X POST -H 'Content-Type: application/json' --data "$2" "${SSE_MCP_URL:-http://127.0.0.1:3000/mcp}"; }
say mcp-server "$(mcp 10 '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}' |
	grep -o '"serverInfo":{"name":"[^"]*"' | sed 's/.*"name":"//; s/"$//')"
say mcp-test-patch "$(mcp 900 '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "test_patch", "arguments": {}}}' |
	grep -o 'test_patch result: [^.]*\.')"
say runner-ids "$(getent passwd sse-runner | cut -d: -f3,4)"
say daemon-ids "$(getent passwd sse-daemon | cut -d: -f3,4)"
exit 0

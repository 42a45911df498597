#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A real MCP client against ssebench-mcp: the official TypeScript SDK's Client and
# StreamableHTTPClientTransport (@modelcontextprotocol/sdk from the npm registry, pinned),
# with a real daemon, at levels 0, 2 and 4. The client must connect (its initialize and
# version negotiation), list test_patch, call it and get the steps the level allows, and get
# an error for an unknown tool. The package is installed once into $SSEBENCH_NPM_DIR
# (default .cache/mcp-client in the build tree). Without node or npm the suite is skipped, or
# fails under SSEBENCH_REQUIRE_DOCKER=1 (CI), like the Docker suites.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
export SBT_USER_PREFIX=sbm
. "$SB_SRCDIR/tests/daemon/lib-daemon.sh"

SDK_VERSION=1.32.2
. "$SB_SRCDIR/tests/mcp/lib-mcp.sh"
NPM_DIR=${SSEBENCH_NPM_DIR:-$SB_BUILDDIR/.cache/mcp-client}
[ -x "$MCP" ] || skip_all "ssebench-mcp is not built"
command -v python3 >/dev/null || skip_all "python3 is needed to read the replies"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	[ "${SSEBENCH_REQUIRE_DOCKER:-}" = 1 ] && bail "node and npm are required (SSEBENCH_REQUIRE_DOCKER=1)"
	skip_all "node and npm are needed for the MCP SDK client"
fi
require_daemon_env
plan_lazy

mkdir -p "$NPM_DIR"
if [ "$(cat "$NPM_DIR/.installed" 2>/dev/null)" != "$SDK_VERSION" ]; then
	t0=$SECONDS
	(cd "$NPM_DIR" && npm install --no-audit --no-fund --loglevel=error \
		"@modelcontextprotocol/sdk@$SDK_VERSION" >"$SB_TMP/npm.log" 2>&1) ||
		bail "npm install @modelcontextprotocol/sdk@$SDK_VERSION failed: $(tail -5 "$SB_TMP/npm.log")"
	echo "$SDK_VERSION" >"$NPM_DIR/.installed"
	diag "installed @modelcontextprotocol/sdk@$SDK_VERSION in $((SECONDS - t0)) s"
fi
cp "$SB_SRCDIR/tests/mcp/sdk-client.mjs" "$NPM_DIR/sdk-client.mjs"

f() { # EXPR over the client's report d
	python3 -c 'import json, sys; d = json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$OUT" "$1" 2>&1
}

for L in 0 2 4; do
	make_fixture
	start_daemon "$L" || bail "no daemon"
	start_mcp "$L" || bail "no MCP server: $(tail -5 "$SB_TMP/mcp.log")"
	OUT=$(cd "$NPM_DIR" && timeout 600 node sdk-client.mjs "http://127.0.0.1:$MPORT/mcp" 2>"$SB_TMP/node.err")
	rc=$?
	is "$rc" 0 "L$L: the SDK client connected, listed and called (exit 0)"
	[ "$rc" = 0 ] || diag "$(tail -20 "$SB_TMP/node.err")"
	is "$(f '(d["server"]["name"], d["protocol"], d["tools"], d["isError"])')" \
		"('ssebench MCP Server', '2025-06-18', ['test_patch'], False)" "L$L: server, negotiated version, tools"
	like "$(f 'd["session"]')" '^[0-9a-f]{32}$' "L$L: the client holds the session id"
	is "$(f 'd["unknown"]')" -32602 "L$L: an unknown tool is a JSON-RPC error for the client"
	text=$(f 'd["text"]')
	case $L in
	0)
		like "$text" '^test_patch result: every check passed\.' "L0: every check passed"
		like "$text" $'- build: passed\n- PoCs: passed \\(1 of 1\\)\n- intent tests: passed\n' "L0: build, PoCs and intent tests ran"
		;;
	2)
		like "$text" $'- build: passed\n- functional tests: passed' "L2: build and functional tests ran"
		unlike "$text" '- PoCs|- intent tests' "L2: no PoC, no intent test"
		like "$text" 'Not available at difficulty level 2 \(NO_FUTURE_TEST\): PoCs, intent tests' "L2: the withheld checks named"
		;;
	4)
		like "$text" '^test_patch result: no checks ran\.' "L4: no checks ran"
		unlike "$text" 'Checks:' "L4: no step listed"
		;;
	esac
	stop_mcp
	stop_daemon
done

done_testing

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# ssebench-mcp on the host against a real daemon and a small task: the MCP handshake and its
# version negotiation, tools/list, test_patch at levels 0, 1, 2 and 4 (the steps that run
# match the level), a failing build, a failing PoC, a long log saved to a file, JSON-RPC
# errors, the HTTP rules of the transport (405, 404, Origin), a daemon that cannot be
# reached, and the daemon's gate when the server is told a lower level than the daemon's.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
export SBT_USER_PREFIX=sbm
. "$SB_SRCDIR/tests/daemon/lib-daemon.sh"

. "$SB_SRCDIR/tests/mcp/lib-mcp.sh"
[ -x "$MCP" ] || skip_all "ssebench-mcp is not built"
[ -x "$DAEMON" ] || skip_all "ssebench-daemon is not built"
command -v python3 >/dev/null || skip_all "python3 is needed to read the replies"
require_daemon_env
plan_lazy

LOGDIR=$SB_TMP/mcp-logs
# rpc BODY [CURL ARGS...]: POST to /mcp; HTTP status in RC, body in $SB_TMP/r, headers in $SB_TMP/h.
rpc() {
	local body=$1
	shift
	RC=$(curl -s -m 600 -o "$SB_TMP/r" -D "$SB_TMP/h" -w '%{http_code}' -X POST \
		-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
		"$@" --data-binary "$body" "http://127.0.0.1:$MPORT/mcp")
}
j() { # EXPR over the reply d
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$SB_TMP/r" "$1" 2>&1
}
call_test_patch() {
	rpc '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "test_patch", "arguments": {}}}'
	TEXT=$(j 'd["result"]["content"][0]["text"]')
}

run_cmd r "$MCP" --version
is "$r_rc" 0 "--version exits 0"
run_cmd r env SSE_DIFFICULTY=7 SSE_DAEMON_SOCKET=/x "$MCP"
is "$r_rc" 2 "SSE_DIFFICULTY=7: the server does not start (exit 2)"
run_cmd r env -u SSE_DAEMON_SOCKET "$MCP"
is "$r_rc" 2 "no SSE_DAEMON_SOCKET: exit 2"

make_fixture
start_daemon 0 || bail "no daemon"
start_mcp 0 || bail "no MCP server"

# The handshake.
rpc '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}'
is "$RC" 200 "initialize: 200"
is "$(j '(d["id"], d["result"]["protocolVersion"], d["result"]["serverInfo"]["name"])')" \
	"(1, '2025-06-18', 'ssebench MCP Server')" "initialize: the client's version, our name"
is "$(j '"tools" in d["result"]["capabilities"]')" True "initialize: the server offers tools"
like "$(cat "$SB_TMP/h")" 'Mcp-Session-Id: [0-9a-f]{32}' "initialize: a session id"
rpc '{"jsonrpc": "2.0", "id": "a", "method": "initialize", "params": {"protocolVersion": "1999-01-01"}}'
is "$(j '(d["id"], d["result"]["protocolVersion"])')" "('a', '2025-06-18')" "initialize: an unknown version gets our newest"
rpc '{"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": "2025-03-26"}}'
is "$(j 'd["result"]["protocolVersion"]')" 2025-03-26 "initialize: an older version we speak is kept"
rpc '{"jsonrpc": "2.0", "method": "notifications/initialized"}'
is "$RC:$(cat "$SB_TMP/r")" "202:" "a notification: 202, no body"
rpc '{"jsonrpc": "2.0", "id": 3, "method": "ping"}'
is "$(j 'd["result"]')" "{}" "ping"
rpc '{"jsonrpc": "2.0", "id": 4, "method": "tools/list"}'
is "$(j '[(t["name"], t["inputSchema"]["type"], t["inputSchema"]["properties"]) for t in d["result"]["tools"]]')" \
	"[('test_patch', 'object', {})]" "tools/list: test_patch alone, no arguments"

# Errors.
rpc '{"jsonrpc": "2.0", "id": 5, "method": "resources/list"}'
is "$(j 'd["error"]["code"]')" -32601 "an unknown method: -32601"
rpc '{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "rm_rf"}}'
is "$(j 'd["error"]["code"]')" -32602 "an unknown tool: -32602"
rpc '{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "test_patch", "arguments": {"x": 1}}}'
is "$(j 'd["error"]["code"]')" -32602 "test_patch with arguments: -32602"
rpc '{"jsonrpc": "2.0", "id": 6, "method": '
is "$RC:$(j 'd["error"]["code"]')" 400:-32700 "not JSON: 400, parse error"
rpc '[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]'
is "$RC:$(j 'd["error"]["code"]')" 400:-32600 "a batch: 400, invalid request"
rpc '{"id": 1, "method": "ping"}'
is "$RC:$(j 'd["error"]["code"]')" 400:-32600 "no jsonrpc member: 400, invalid request"
rpc '{"jsonrpc": "2.0", "id": 1, "method": "ping"}' -H 'MCP-Protocol-Version: 1999-01-01'
is "$RC" 400 "an unsupported MCP-Protocol-Version header: 400"
rpc '{"jsonrpc": "2.0", "id": 1, "method": "ping"}' -H 'Origin: http://evil.example'
is "$RC" 403 "a foreign Origin: 403 (DNS rebinding)"
rpc '{"jsonrpc": "2.0", "id": 1, "method": "ping"}' -H 'Origin: http://localhost:5173'
is "$RC" 200 "a localhost Origin: served"
is "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MPORT/mcp")" 405 "GET /mcp: 405 (no server stream)"
is "$(curl -s -o /dev/null -w '%{http_code}' -X POST --data '{}' "http://127.0.0.1:$MPORT/other")" 404 "another path: 404"
head -c 2000000 /dev/zero | tr '\0' ' ' >"$SB_TMP/big"
is "$(curl -s -o /dev/null -w '%{http_code}' -X POST --data-binary @"$SB_TMP/big" "http://127.0.0.1:$MPORT/mcp")" 413 "a 2 MB message: 413"
ok "$(ss -ltn "sport = :$MPORT" | grep -q "127.0.0.1:$MPORT"; echo $?)" "it listens on the loopback address only"

# test_patch, level 0: every check, in order; the functional tests are covered by the intent tests.
call_test_patch
like "$TEXT" '^test_patch result: every check passed\.' "level 0: every check passed"
like "$TEXT" $'Checks:\n- build: passed\n- PoCs: passed \\(1 of 1\\)\n- intent tests: passed\n- functional tests: passed \\(covered by the intent tests\\)' \
	"level 0: build, PoCs, intent tests, functional tests (covered), in that order"
unlike "$TEXT" 'Not available' "level 0: nothing withheld"
stop_mcp
stop_daemon

# Level 2: build and functional tests; PoCs and intent tests withheld, and said so.
start_daemon 2 && start_mcp 2
call_test_patch
like "$TEXT" '^test_patch result: every check that ran passed\.' "level 2: every check that ran passed"
like "$TEXT" $'Checks:\n- build: passed\n- functional tests: passed\n' "level 2: build and functional tests ran"
unlike "$TEXT" '- PoCs|- intent' "level 2: no PoC and no intent test ran"
ok "$([ "$(ls "$D/results" | grep -c '^scriptrunner-')" -gt 0 ]; echo $?)" "level 2: the daemon logged the scripts it ran (scriptrunner-*.log)"
like "$TEXT" 'Not available at difficulty level 2 \(NO_FUTURE_TEST\): PoCs, intent tests\. Nothing is reported about them\. This result does not show whether the vulnerability is fixed\.' \
	"level 2: the withheld checks are named, and what that means"
stop_mcp

# Level 2 with a broken build: the build fails, nothing else runs, its log is shown.
printf '#!/bin/sh\necho BUILD-BROKE-MARK\necho oops >&2\nexit 1\n' >"$D/bench/scripts/build.sh"
start_mcp 2
call_test_patch
like "$TEXT" '^test_patch result: FAILED\. The project failed to build' "broken build: FAILED, the build named"
like "$TEXT" '- functional tests: not run \(the build failed\)' "broken build: the tests did not run"
like "$TEXT" $'Full log \\(build\\):\n.*BUILD-BROKE-MARK' "broken build: its log"
stop_mcp

# A long log: its tail here, all of it in a file the agent can read.
printf '#!/bin/sh\ni=0\nwhile [ $i -lt 3000 ]; do echo "w1 w2 w3 w4 w5 w6 w7 line$i"; i=$((i + 1)); done\nexit 1\n' >"$D/bench/scripts/build.sh"
start_mcp 2
call_test_patch
like "$TEXT" 'Truncated log \(build\):' "a long log is truncated"
like "$TEXT" 'line2999' "the tail is kept"
unlike "$TEXT" 'line2800' "only the last 100 lines"
f=$(printf '%s\n' "$TEXT" | sed -n 's/^Full log available at //p')
ok "$([ -f "$f" ] && grep -q line0 "$f" && grep -q line2999 "$f"; echo $?)" "the whole log is saved ($f)"
is "$(stat -c '%a' "$f" 2>/dev/null):$(stat -c '%a' "$LOGDIR" 2>/dev/null)" "644:755" "the saved log is readable by the agent"
stop_mcp
stop_daemon

# Level 1, a PoC that still crashes: stopped there, named.
make_fixture
printf '#!/bin/sh\necho "POC-STILL-CRASHES $1"\nexit 1\n' >"$D/bench/scripts/run.sh"
start_daemon 1 && start_mcp 1
call_test_patch
like "$TEXT" '^test_patch result: FAILED\. At least one proof-of-concept \(PoC\) still triggers the vulnerability' "level 1, PoC crashes: FAILED, the PoC named"
like "$TEXT" '- PoCs: FAILED \(passed 0 of 1; stopped at the first that still triggers the bug\)' "level 1: the PoC count"
like "$TEXT" 'Full log \(PoCs\):' "level 1: the PoC's log"
like "$TEXT" 'Not available at difficulty level 1 \(NO_INTENT_TEST\): intent tests\.' "level 1: the intent tests are withheld"
stop_mcp
stop_daemon

# Level 4: nothing runs.
make_fixture
start_daemon 4 && start_mcp 4
call_test_patch
like "$TEXT" '^test_patch result: no checks ran\.' "level 4: no checks ran"
like "$TEXT" 'Not available at difficulty level 4 \(NO_BUILD\): build, functional tests, PoCs, intent tests\. Nothing is reported about them\. No check is available at this level\.' \
	"level 4: every check withheld, and said so"
stop_mcp

# The daemon's gate holds when the server is told less than the truth: a server started
# at level 0 next to a level-4 daemon gets 403 and reports an internal failure.
start_mcp 0
before=$(ls "$D/results" | grep -c '^scriptrunner-')
call_test_patch
is "$TEXT" "An internal testing failure occurred. Your patch is not responsible for this failure." \
	"a server claiming level 0 next to a level-4 daemon gets nothing run"
is "$(ls "$D/results" | grep -c '^scriptrunner-')" "$before" "and the daemon ran no script (no new scriptrunner log)"
stop_mcp
stop_daemon

# No daemon at all.
start_mcp 2
call_test_patch
is "$TEXT" "An internal testing failure occurred. Your patch is not responsible for this failure." \
	"no daemon: an internal testing failure, not the patch's"
stop_mcp

done_testing

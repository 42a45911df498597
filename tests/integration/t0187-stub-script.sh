#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The scripted model of the agent suites (tests/helpers/sb-stub-model), spoken to directly in
# the Responses format Codex uses: a turn with a "poll" waits for a command that is still
# running (Codex's exec_command gives back what it has after yield_time_ms and leaves the
# command running with a session id) by answering with the poll call, and only the result
# that comes after it is held to the turn's expectation. Poll calls are not turns; each call
# has its own id; a turn without a poll fails on the same text. CI once failed tests/agents
# t0110 when a loaded machine made the build outlast Codex's 10 s.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

STUB=$SB_BUILDDIR/tests/helpers/sb-stub-model
[ -x "$STUB" ] || bail "tests/helpers/sb-stub-model is not built (make check builds it)"
command -v curl >/dev/null || bail "curl is needed to talk to the stub"
plan_lazy

master=sk-master-$$
for _ in 1 2 3 4 5; do
	port=$((20000 + RANDOM % 40000))
	"$STUB" --port "$port" --master-key "$master" >"$SB_TMP/stub.jsonl" 2>"$SB_TMP/stub.err" &
	stub_pid=$!
	for _ in $(seq 50); do
		curl -s -m 1 "http://127.0.0.1:$port/health/liveliness" >/dev/null 2>&1 && break 2
		kill -0 "$stub_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill "$stub_pid" 2>/dev/null
	wait "$stub_pid" 2>/dev/null
	stub_pid=
done
[ -n "$stub_pid" ] || bail "the stub does not start: $(cat "$SB_TMP/stub.err")"
sb_cleanup_hook() { kill "$stub_pid" 2>/dev/null; }
url=http://127.0.0.1:$port

post() { # PATH KEY BODY: the answer's body
	curl -s -m 10 -H "Authorization: Bearer $2" -H 'Content-Type: application/json' \
		--data-binary "$3" "$url$1"
}

poll='{"while": "Process running with session ID ", "tool": "write_stdin", "id": "session_id",
	"input": {"chars": "", "yield_time_ms": 300000}}'
# Two scripts: the build turn with a poll, and the same turn without one.
for name in poll nopoll; do
	p=$([ $name = poll ] && printf ', "poll": %s' "$poll")
	is "$(post /script "$master" "{\"alias\": \"ssebench-$name\", \"turns\": [
		{\"tool\": \"exec_command\", \"input\": {\"cmd\": \"build\", \"yield_time_ms\": 1000}$p,
		 \"expect\": \"build-exit=0\"},
		{\"text\": \"all done\"}]}")" "{\"alias\":\"ssebench-$name\",\"turns\":2}" \
		"$name: the stub takes the script"
	printf -v "key_$name" '%s' "$(post /key/generate "$master" "{\"key_alias\": \"ssebench-$name\", \"models\": [\"m\"]}" |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["key"])')"
done
[ -n "$key_poll" ] && [ -n "$key_nopoll" ] || bail "no run keys from the stub"

# respond KEY ITEMS...: the answer to a conversation of the user's message and ITEMS (JSON
# Responses input items), as "tool args call_id" or "text TEXT".
respond() {
	local key=$1 items=
	shift
	[ $# = 0 ] || items=$(printf ', %s' "$@")
	post /v1/responses "$key" "{\"model\": \"m\", \"stream\": false,
		\"tools\": [{\"type\": \"function\", \"name\": \"exec_command\"},
			    {\"type\": \"function\", \"name\": \"write_stdin\"}],
		\"input\": [{\"role\": \"user\", \"content\": \"fix it\"}$items]}" |
		python3 -c 'import json, sys
d = json.load(sys.stdin)
for o in d["output"]:
    if o["type"] == "function_call":
        print(o["name"], json.dumps(json.loads(o["arguments"]), sort_keys=True), o["call_id"])
    elif o["type"] == "message":
        print("text", o["content"][0]["text"])'
}
call() { # NAME ARGS CALL_ID: a function_call item
	printf '{"type": "function_call", "name": "%s", "arguments": %s, "call_id": "%s"}' \
		"$1" "$(printf '%s' "$2" | python3 -c 'import json, sys; print(json.dumps(sys.stdin.read()))')" "$3"
}
output() { # CALL_ID TEXT: its function_call_output item
	printf '{"type": "function_call_output", "call_id": "%s", "output": "%s"}' "$1" "$2"
}

build=$(call exec_command '{"cmd": "build", "yield_time_ms": 1000}' call_stub_0)
running=$(output call_stub_0 'Process running with session ID 4242\nOutput:\n')
is "$(respond "$key_poll")" \
	'exec_command {"cmd": "build", "yield_time_ms": 1000} call_stub_0' "poll: turn 0 is the build"
is "$(respond "$key_poll" "$build" "$running")" \
	'write_stdin {"chars": "", "session_id": 4242, "yield_time_ms": 300000} call_stub_1' \
	"poll: a build still running is waited for with write_stdin on its session, under a new call id"
wait1=$(call write_stdin '{"chars": "", "session_id": 4242, "yield_time_ms": 300000}' call_stub_1)
is "$(respond "$key_poll" "$build" "$running" "$wait1" "$(output call_stub_1 'Process running with session ID 4242')")" \
	'write_stdin {"chars": "", "session_id": 4242, "yield_time_ms": 300000} call_stub_2' \
	"poll: and again while it still runs"
wait2=$(call write_stdin '{"chars": "", "session_id": 4242, "yield_time_ms": 300000}' call_stub_2)
is "$(respond "$key_poll" "$build" "$running" "$wait1" "$(output call_stub_1 'Process running with session ID 4242')" \
	"$wait2" "$(output call_stub_2 'Process exited with code 0\nbuild-exit=0')")" \
	'text all done' "poll: its last result is held to the turn's expectation, and the polls were not turns"
is "$(respond "$key_poll" "$build" "$running" "$wait1" "$(output call_stub_1 'Process exited with code 2\nbuild-exit=2')")" \
	"text SCRIPT FAILED at turn 0: the result lacks 'build-exit=0'" \
	"poll: a build that ends badly still fails the turn"
is "$(respond "$key_poll" "$build" "$(output call_stub_0 'Process running with session ID x')")" \
	"text SCRIPT FAILED at turn 0: the result lacks 'build-exit=0'" \
	"poll: no session number, no poll"
is "$(respond "$key_nopoll" "$build" "$running")" \
	"text SCRIPT FAILED at turn 0: the result lacks 'build-exit=0'" \
	"nopoll: without a poll the same result fails the turn"

is "$(python3 -c 'import json, sys
l = [json.loads(x) for x in open(sys.argv[1]) if x.startswith("{")]
print([(x["turn"], x.get("poll")) for x in l if "poll" in x])' "$SB_TMP/stub.jsonl")" \
	"[(0, 4242), (0, 4242)]" "the stub's log names each poll, with the turn it waits on"

done_testing

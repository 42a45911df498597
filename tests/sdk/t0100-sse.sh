#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# sse, the agent's command, on the host against a real daemon and a small task: the public
# view and the prompt (nothing hidden in either), the bash tool with words that stay words,
# the checks and the difficulty gate, dialog entries, `sse agent` (the prompt on the
# program's stdin, its status, an event stream recorded, a timeout, a signal, a program that
# is not there), the daemon's TCP port with and without the token, and usage errors.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
export SBT_USER_PREFIX=sbk
. "$SB_SRCDIR/tests/daemon/lib-daemon.sh"

SSE=${SSEBENCH_SSE:-$SB_BUILDDIR/sse}
[ -x "$SSE" ] || skip_all "sse is not built"
[ -x "$DAEMON" ] || skip_all "ssebench-daemon is not built"
command -v python3 >/dev/null || skip_all "python3 is needed to read the replies"
require_daemon_env
plan_lazy

j() { # FILE EXPR: a Python expression over the JSON document d
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>&1
}
dialog() { # EXPR over the list of entries e
	python3 -c 'import json, sys; e = [json.loads(l) for l in open(sys.argv[1])]; print(eval(sys.argv[2]))' \
		"$D/archive/dialog.jsonl" "$1" 2>&1
}

# Usage, before any daemon is needed.
run_cmd r "$SSE" --version
is "$r_rc:$r_out" "0:sse $(cat "$SB_SRCDIR/VERSION")" "--version"
run_cmd r "$SSE"
is "$r_rc" 2 "no command: exit 2"
run_cmd r env SSE_DAEMON_SOCKET=/nonexistent "$SSE" frobnicate
is "$r_rc" 2 "an unknown command: exit 2"
run_cmd r env -u SSE_DAEMON_SOCKET -u SSE_AGENT_DOCKER "$SSE" project
is "$r_rc" 2 "no daemon address: exit 2"
like "$r_err" "set SSE_DAEMON_SOCKET" "and it says what to set"
run_cmd r env SSE_DAEMON_SOCKET=/nonexistent/sse.sock "$SSE" project
is "$r_rc" 1 "a daemon that is not there: exit 1"
run_cmd r env SSE_AGENT_DOCKER=http://evil.example/x "$SSE" project
is "$r_rc" 2 "SSE_AGENT_DOCKER must be host:port, not a URL"

make_fixture
start_daemon 0 || bail "no daemon"
export SSE_DAEMON_SOCKET=$SOCK SSE_ARCHIVE=$D/archive

run_cmd r "$SSE" version
is "$r_rc" 0 "version: exit 0"
like "$r_out" "^daemon $(cat "$SB_SRCDIR/VERSION")\$" "version: the daemon's version"

"$SSE" project >"$SB_TMP/project.json"
is "$(j "$SB_TMP/project.json" '(d["id"], d["language"], d["task_description"]["issue"])')" \
	"('daemon-test', 'c', 'the demo crashes')" "project: the public view"
run_cmd r "$SSE" capabilities
like "$r_out" '"poc_count": 1' "capabilities"

run_cmd r "$SSE" prompt
is "$r_rc" 0 "prompt: exit 0"
like "$r_out" '^# Task$' "prompt: starts with the task"
like "$r_out" "^- Source code path: $D/src\$" "prompt: names the source tree"
like "$r_out" 'AddressSanitizer: heap-buffer-overflow' "prompt: carries the crash report"
unlike "$r_out" 'REFERENCE-PATCH-CONTENT|HIDDEN-TEST-CONTENT|crash me|poc \$1' \
	"prompt: no reference patch, hidden test, PoC content or run script"
prompt_text=$r_out
run_cmd r "$SSE" prompt
is "$r_out" "$prompt_text" "prompt: the same bytes twice"

# bash: words are words; a command line is a command line.
run_cmd r "$SSE" bash -- printf '%s|' 'a b' "c'd" '$(id -u)' ';' '*'
is "$r_out" "a b|c'd|\$(id -u)|;|*|" "bash -- WORDS: quoting and metacharacters stay inert"
run_cmd r "$SSE" bash -c 'id -un; exit 7'
is "$r_rc:$r_out" "7:$AGENT_USER" "bash -c: runs as the agent, its status is ours"
run_cmd r "$SSE" bash -c 'echo err >&2'
is "$r_err" "err" "bash: its stderr is ours"
run_cmd r "$SSE" bash --timeout 1 -c 'sleep 20'
is "$r_rc" 124 "bash --timeout: the daemon's limit, exit 124"
like "$r_err" "timed out" "and it says so"
run_cmd r "$SSE" bash
is "$r_rc" 2 "bash with nothing to run: exit 2"

# Checks at level 0 (all allowed).
run_cmd r "$SSE" bench build
is "$r_rc" 0 "bench build: exit 0"
like "$r_out" "built by $RUNNER_USER" "bench build: the build script ran as the runner"
run_cmd r "$SSE" bench poc
is "$r_rc" 0 "bench poc: every PoC"
# What a PoC run printed is withheld from the agent (its code was given the PoC): only the
# outcome comes back.
like "$r_out$r_err" 'the PoC no longer reproduces' "bench poc: run.sh ran; the agent gets the outcome"
unlike "$r_out$r_err" '^poc .*poc.txt$' "bench poc: not the output of the program given the PoC"
run_cmd r "$SSE" bench poc "$D/bench/pocs/nope.txt"
is "$r_rc" 1 "bench poc PATH: a path that is no PoC of the task is refused"
run_cmd r "$SSE" bench test
is "$r_rc:$r_out" "0:tested" "bench test"
run_cmd r "$SSE" bench intent
is "$r_rc" 0 "bench intent"
run_cmd r "$SSE" bench deploy
is "$r_rc" 2 "bench with an unknown check: exit 2"

# dialog entries.
"$SSE" dialog init --agent tester
"$SSE" dialog message 'first words' --tokens-in 3 --tokens-out 2
echo 'from stdin' | "$SSE" dialog thinking -
"$SSE" dialog tool --id t1 --name bash --status running --args '{"command": "ls"}'
"$SSE" dialog tool --id t1 --name bash --status success --result 'a b'
"$SSE" dialog complete --status success --turns 1 --duration-ms 5
is "$(dialog '[(x["seq"], x["type"]) for x in e]')" \
	"[(0, 'init'), (1, 'message'), (2, 'thinking'), (3, 'tool'), (4, 'tool'), (5, 'complete')]" \
	"dialog: entries in order, seq from 0"
is "$(dialog 'e[0]["data"]["task"], e[0]["data"]["agent"]')" "('daemon-test', 'tester')" \
	"dialog init: the task from the daemon, the agent"
is "$(dialog 'e[1]["role"], e[1]["content"], e[1]["tokens"]')" \
	"('assistant', 'first words', {'in': 3, 'out': 2})" "dialog message"
is "$(dialog 'e[2]["content"]')" "from stdin" "dialog thinking -: the text from stdin"
is "$(dialog 'e[3]["args"], e[4]["status"], e[4]["result"]')" \
	"({'command': 'ls'}, 'success', 'a b')" "dialog tool: args as JSON, result"
run_cmd r "$SSE" dialog tool --id t2 --name x --status maybe
is "$r_rc" 2 "dialog tool with an unknown status: exit 2"
run_cmd r "$SSE" dialog tool --id t2 --name x --status running --args '{not json'
is "$r_rc" 2 "dialog tool --args that is not JSON: exit 2"
run_cmd r "$SSE" dialog complete --status done
is "$r_rc" 2 "dialog complete with an unknown status: exit 2"

# sse agent: the prompt on stdin, the status passed on, the record around it.
cat >"$SB_TMP/agent.sh" <<EOF
#!/bin/sh
cat >"$SB_TMP/agent-stdin"
echo "a line of log"
exit 5
EOF
chmod +x "$SB_TMP/agent.sh"
run_cmd r "$SSE" agent --name fake -- "$SB_TMP/agent.sh"
is "$r_rc" 5 "agent: the program's status is ours"
like "$r_err" '^\[fake\] exited with code 5$' "agent: the closing line"
like "$r_out" '^a line of log$' "agent --format none: the program's output passes through"
is "$(cat "$SB_TMP/agent-stdin")" "$prompt_text" "agent: the program read the task prompt on stdin"
is "$(dialog '[x["type"] for x in e]')" "['init', 'prompt', 'complete']" \
	"agent: init, prompt, complete (a new record)"
is "$(dialog 'e[2]["status"]')" error "agent: a non-zero status completes as an error"

run_cmd r env SSE_ARCHIVE=/nonexistent/archive "$SSE" agent --name fake -- "$SB_TMP/agent.sh"
is "$r_rc" 5 "agent: a record that cannot be written does not stop the agent"
like "$r_err" 'the session is not recorded' "and it says so"

# An event stream (Claude Code's format, from the unit test fixture).
cat >"$SB_TMP/claude.sh" <<EOF
#!/bin/sh
cat "$SB_FIXTURES/events/claude-code.jsonl"
EOF
chmod +x "$SB_TMP/claude.sh"
run_cmd r "$SSE" agent --format claude-code --name claude -- "$SB_TMP/claude.sh"
is "$r_rc" 0 "agent --format claude-code: exit 0"
is "$(dialog '[x["type"] for x in e][:4]')" "['init', 'prompt', 'thinking', 'message']" \
	"agent: the stream's entries follow the prompt"
is "$(dialog '(e[-1]["type"], e[-1]["status"], e[-1]["turns"], e[-1]["total_tokens"], e[-1]["message"])')" \
	"('complete', 'success', 4, {'in': 560, 'out': 34}, 'Fixed the bounds check.')" \
	"agent: complete with the stream's turns, tokens and last words"
is "$(wc -l <"$D/archive/claude-events.jsonl")" "$(wc -l <"$SB_FIXTURES/events/claude-code.jsonl")" \
	"agent: the raw stream is kept in the archive"
like "$r_err" '2 lines of the event stream not recorded' "agent: says what it could not read"

# A time limit, and a signal: the program's whole group is stopped.
run_cmd r "$SSE" agent --timeout 1 --name slow -- sh -c 'sleep 30 & sleep 30'
is "$r_rc" 143 "agent --timeout: the program is stopped (SIGTERM)"
is "$(dialog 'e[-1]["status"]')" timeout "agent --timeout: complete says timeout"
"$SSE" agent --name sig -- sh -c 'sleep 30' >/dev/null 2>&1 &
apid=$!
sleep 1
kill -TERM "$apid"
wait "$apid"
is "$?" 143 "agent: SIGTERM is passed on to the program"
run_cmd r "$SSE" agent -- /nonexistent/agent
is "$r_rc" 127 "agent: a program that is not there: exit 127"
like "$r_err" '^\[agent\] exited with code 127$' "and the closing line says so"
is "$(dialog 'e[-1]["type"], e[-1]["status"]')" "('complete', 'error')" "and the record is completed"
# Regression: a program that closes its output after 15 s and exits a little later was
# stopped as soon as the stream ended (the wait's limit counted from the program's start).
run_cmd r "$SSE" agent --name late -- sh -c 'sleep 14; exec >&-; sleep 3; exit 0'
is "$r_rc" 0 "agent: a program still running when its stream ends is waited for"
is "$(dialog 'e[-1]["status"]')" success "and it completes as a success"

# The daemon's TCP port: the token is required.
run_cmd r env -u SSE_DAEMON_SOCKET SSE_AGENT_DOCKER="127.0.0.1:$PORT" SSE_DAEMON_TOKEN="$TOKEN" "$SSE" project
is "$r_rc" 0 "TCP with the token: the public view"
run_cmd r env -u SSE_DAEMON_SOCKET SSE_AGENT_DOCKER="127.0.0.1:$PORT" "$SSE" project
is "$r_rc" 1 "TCP without the token: refused"

# The difficulty gate decides, whatever sse asks.
stop_daemon
start_daemon 4 || bail "no daemon at level 4"
run_cmd r "$SSE" bench build
is "$r_rc" 3 "level 4: bench build is refused (exit 3)"
like "$r_err" "not available" "and it says why"
run_cmd r "$SSE" bash -c 'echo still here'
is "$r_out" "still here" "level 4: bash is never gated"
stop_daemon
start_daemon 2 || bail "no daemon at level 2"
run_cmd r "$SSE" bench poc
is "$r_rc" 3 "level 2: PoCs are refused"
run_cmd r "$SSE" bench test
is "$r_rc" 0 "level 2: functional tests run"

done_testing

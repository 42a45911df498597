#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# What each bundled agent's run.sh (agents/*/run.sh) writes to its $HOME before it starts
# the CLI (here a stand-in `sse` that does nothing): the run's MCP server with an hour for a
# call, since test_patch builds and tests the project (a client default of 60 s ends a real
# task's test_patch with "Request timed out"; tests/agents/t0110 showed each CLI honours the
# setting); no MCP server without SSE_MCP_URL; and the run's key in no file it wrote.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

command -v jq >/dev/null 2>&1 || bail "needs jq (scripts/setup installs it)"
plan_lazy

mkdir -p "$SB_TMP/bin"
printf '#!/bin/sh\nexit 0\n' >"$SB_TMP/bin/sse"
chmod +x "$SB_TMP/bin/sse"
key=sk-run-$$-secret

# configure AGENT HOME [MCP_URL]: run the agent's run.sh as a run would start it.
configure() {
	mkdir -p "$2"
	env -i PATH="$SB_TMP/bin:/usr/bin:/bin" HOME="$2" SSE_MODEL_NAME=m \
		SSE_BASE_URL=http://litellm:4000 SSE_API_KEY="$key" ${3:+SSE_MCP_URL="$3"} \
		bash "$SB_SRCDIR/agents/$1/run.sh" </dev/null
}

url=http://127.0.0.1:3000/mcp
for agent in claude-code codex opencode; do
	home=$SB_TMP/$agent
	run_cmd r configure "$agent" "$home" "$url"
	is "$r_rc" 0 "$agent: run.sh configures and starts the agent"
	case $agent in
	claude-code)
		got=$(jq -r '.mcpServers.ssebench | "\(.url) \(.timeout >= 3600000)"' "$home/.claude/ssebench-mcp.json") ;;
	opencode)
		got=$(jq -r '.mcp.ssebench | "\(.url) \(.timeout >= 3600000)"' "$home/.config/opencode/ssebench.json") ;;
	codex)
		got=$(python3 -c 'import sys, tomllib
s = tomllib.load(open(sys.argv[1], "rb"))["mcp_servers"]["ssebench"]
print(s["url"], str(s["tool_timeout_sec"] >= 3600).lower())' "$home/.codex/config.toml") ;;
	esac
	is "$got" "$url true" "$agent: the run's MCP server, with an hour for a call"
	is "$(grep -rlF -- "$key" "$home" 2>/dev/null)" "" "$agent: the run's key is in no file it wrote"

	home=$SB_TMP/$agent-nomcp
	run_cmd r configure "$agent" "$home"
	case $agent in
	claude-code) got=$(jq -c '.mcpServers' "$home/.claude/ssebench-mcp.json") ;;
	opencode) got=$(jq -c '.mcp // {}' "$home/.config/opencode/ssebench.json") ;;
	codex) got=$(python3 -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb")).get("mcp_servers", {}))' "$home/.codex/config.toml" | tr -d ' ') ;;
	esac
	is "$r_rc:$got" "0:{}" "$agent: without SSE_MCP_URL, no MCP server"
done

done_testing

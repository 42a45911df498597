#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The claude-code agent: Claude Code on the task prompt, non-interactively, with the run's
# model through the proxy and the run's MCP server (test_patch). `sse agent` gives it the
# prompt on stdin and turns its stream-json events into dialog.jsonl (docs/agents.md).
set -euo pipefail
: "${SSE_MODEL_NAME:?the claude-code agent needs a model: ssebench run --model NAME}"
: "${SSE_BASE_URL:?no model proxy (SSE_BASE_URL)}"
: "${SSE_API_KEY:?no key for the model proxy (SSE_API_KEY)}"
here=/opt/ssebench-agent/claude-code

# Its settings go to $HOME: a file in the source tree would become part of the patch.
conf=$HOME/.claude
mkdir -p "$conf"
# Nobody is there to answer a permission prompt; the run's sandbox is the boundary.
cat >"$conf/settings.json" <<'JSON'
{"permissions": {"defaultMode": "bypassPermissions"}, "includeCoAuthoredBy": false}
JSON
# test_patch builds and tests the project: minutes on a real task. "timeout" is Claude Code's
# wall-clock limit on one MCP call; an hour, as for the other agents (the run's own timeout
# still bounds it).
mcp=$conf/ssebench-mcp.json
if [ -n "${SSE_MCP_URL:-}" ]; then
	printf '{"mcpServers": {"ssebench": {"type": "http", "url": "%s", "timeout": 3600000}}}\n' \
		"$SSE_MCP_URL" >"$mcp"
else
	printf '{"mcpServers": {}}\n' >"$mcp"
fi

# The proxy, the run's key and model, and every switch that would reach anywhere else off
# (docs/agents.md, "Offline: the switches each bundled agent sets").
export ANTHROPIC_BASE_URL=$SSE_BASE_URL ANTHROPIC_AUTH_TOKEN=$SSE_API_KEY
unset ANTHROPIC_API_KEY
export ANTHROPIC_MODEL=$SSE_MODEL_NAME ANTHROPIC_DEFAULT_OPUS_MODEL=$SSE_MODEL_NAME \
	ANTHROPIC_DEFAULT_SONNET_MODEL=$SSE_MODEL_NAME ANTHROPIC_DEFAULT_HAIKU_MODEL=$SSE_MODEL_NAME \
	CLAUDE_CODE_SUBAGENT_MODEL=$SSE_MODEL_NAME
export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
	CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL=1 \
	DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 DISABLE_BUG_COMMAND=1

exec sse agent --format claude-code --name claude -- "$here/bin/claude" -p --verbose \
	--output-format stream-json --model "$SSE_MODEL_NAME" --dangerously-skip-permissions \
	--max-turns "${SSE_MAX_TURNS:-500}" --mcp-config "$mcp" --strict-mcp-config

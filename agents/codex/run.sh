#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The codex agent: Codex on the task prompt, non-interactively (codex exec), with the run's
# model through the proxy's responses API and the run's MCP server (test_patch). `sse agent`
# gives it the prompt on stdin and turns its JSON events into dialog.jsonl (docs/agents.md).
set -euo pipefail
: "${SSE_MODEL_NAME:?the codex agent needs a model: ssebench run --model NAME}"
: "${SSE_BASE_URL:?no model proxy (SSE_BASE_URL)}"
: "${SSE_API_KEY:?no key for the model proxy (SSE_API_KEY)}"
here=/opt/ssebench-agent/codex

# Its configuration goes to $HOME (CODEX_HOME), never into the source tree. The key stays
# in the environment (env_key): it is not written to the file. Update checks, analytics and
# metrics are off (docs/agents.md, "Offline: the switches each bundled agent sets").
export CODEX_HOME=$HOME/.codex
mkdir -p "$CODEX_HOME"
{
	cat <<TOML
model = "$SSE_MODEL_NAME"
review_model = "$SSE_MODEL_NAME"
model_provider = "ssebench"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[analytics]
enabled = false

[otel]
metrics_exporter = "none"

[model_providers.ssebench]
name = "ssebench"
base_url = "$SSE_BASE_URL/v1"
wire_api = "responses"
env_key = "SSE_API_KEY"
TOML
	if [ -n "${SSE_MCP_URL:-}" ]; then
		cat <<TOML

[mcp_servers.ssebench]
url = "$SSE_MCP_URL"
startup_timeout_sec = 300
tool_timeout_sec = 3600
TOML
	fi
} >"$CODEX_HOME/config.toml"

# The ripgrep Codex searches with comes with it.
export PATH=$here/path:$PATH
exec sse agent --format codex --name codex -- "$here/bin/codex" exec --json \
	--dangerously-bypass-approvals-and-sandbox --skip-git-repo-check -

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The opencode agent: OpenCode on the task prompt, non-interactively (opencode run), with the
# run's model through the proxy's chat completions API and the run's MCP server (test_patch).
# `sse agent` gives it the prompt on stdin and turns its JSON events into dialog.jsonl
# (docs/agents.md).
set -euo pipefail
: "${SSE_MODEL_NAME:?the opencode agent needs a model: ssebench run --model NAME}"
: "${SSE_BASE_URL:?no model proxy (SSE_BASE_URL)}"
: "${SSE_API_KEY:?no key for the model proxy (SSE_API_KEY)}"
here=/opt/ssebench-agent/opencode

# Its configuration goes to $HOME, never into the source tree. The key is read from the
# environment ({env:...}), not written to the file.
conf=$HOME/.config/opencode
mkdir -p "$conf"
# test_patch builds and tests the project: minutes on a real task. OpenCode ends an MCP call
# that outlasts "timeout" with "Request timed out" (unset: its MCP client's default, 60 s in
# the MCP TypeScript SDK); an hour, as for the other agents (the run's timeout still bounds it).
mcp=
if [ -n "${SSE_MCP_URL:-}" ]; then
	mcp=", \"mcp\": {\"ssebench\": {\"type\": \"remote\", \"url\": \"$SSE_MCP_URL\", \"enabled\": true, \"timeout\": 3600000}}"
fi
cat >"$conf/ssebench.json" <<JSON
{
  "provider": {
    "ssebench": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "ssebench",
      "options": {"baseURL": "$SSE_BASE_URL/v1", "apiKey": "{env:SSE_API_KEY}"},
      "models": {"$SSE_MODEL_NAME": {"name": "$SSE_MODEL_NAME"}}
    }
  },
  "model": "ssebench/$SSE_MODEL_NAME",
  "small_model": "ssebench/$SSE_MODEL_NAME",
  "permission": "allow",
  "autoupdate": false,
  "share": "disabled"$mcp
}
JSON
export OPENCODE_CONFIG=$conf/ssebench.json
# Update checks, the models.dev catalogue, default plugins and language-server downloads off
# (docs/agents.md, "Offline: the switches each bundled agent sets").
export OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_MODELS_FETCH=1 \
	OPENCODE_DISABLE_DEFAULT_PLUGINS=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1

exec sse agent --format opencode --name opencode -- "$here/bin/opencode" run --format json \
	-m "ssebench/$SSE_MODEL_NAME"

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The real agent CLIs offline (docs/agents.md, "Offline: the switches each bundled agent
# sets"): claude-code, codex and opencode, each in a real run in both modes, on an internal
# network whose only other member is a stub of the model proxy that answers every call with
# "I'm done." Each must start, call the model at least once with the run's own key and the
# task prompt, talk to the run's MCP server, exit cleanly and be graded, leaving nothing in
# the source tree.
# The run's key is deleted afterwards and never shows on a command line or in docker
# inspect; a model the proxy does not serve stops the run before it starts.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
. "$SB_SRCDIR/tests/e2e/lib-e2e.sh"
. "$SB_SRCDIR/tests/agents/lib-agents.sh"

e2e_require
command -v curl >/dev/null || skip_all "curl is needed to ask the stub"
[ "$(uname -m)" = x86_64 ] || skip_all "the agents' npm packages are pinned for amd64 only"
plan_lazy
tag=ag$$
sb_cleanup_hook() { stub_stop; }
stub_start stub-model

# A workspace whose models/ has the stub's model (and one the stub does not serve).
ws=$SB_TMP/ws
mkdir -p "$ws/models"
cat >"$ws/models/stub.yaml" <<'EOF'
- model_name: stub-model
  litellm_params:
    model: openai/stub-model
- model_name: ghost-model
  litellm_params:
    model: openai/ghost-model
EOF
cd "$ws" || bail "no workspace"

# agent  wire format  the name it signs its exit with  its MCP client's name
expect() {
	case $1 in
	claude-code) echo "messages claude claude-code" ;;
	codex) echo "responses codex codex-mcp-client" ;;
	opencode) echo "chat opencode opencode" ;;
	esac
}

# dialog_outline DIR: the first entry, the prompt, the last entry of the run's dialog.jsonl.
dialog_outline() {
	python3 -c 'import json, sys
e = [json.loads(l) for l in open(sys.argv[1])]
print((e[0]["type"], e[0]["data"]["agent"], e[0]["data"]["model"], e[1]["type"],
       e[1]["content"].startswith("# Task"), e[-1]["type"], e[-1]["status"]))' \
		"$1/archive/dialog.jsonl" 2>&1 | tail -1
}

# The stub itself: every wire format, streaming and not, for a run key of the right model only
# (this key, skey, is the only one that is ever refused below).
skey=$(curl -s -H "Authorization: Bearer $STUB_MASTER" -d '{"models": ["stub-model"]}' \
	"$SSEBENCH_PROXY_ADMIN_URL/key/generate" | python3 -c 'import json, sys; print(json.load(sys.stdin)["key"])')
for path in /v1/chat/completions /v1/responses /v1/messages; do
	for stream in false true; do
		curl -s -H "Authorization: Bearer $skey" -d "{\"model\": \"stub-model\", \"stream\": $stream}" \
			"$SSEBENCH_PROXY_ADMIN_URL$path" >"$SB_TMP/stub-reply"
		ok "$(grep -q "I'm done." "$SB_TMP/stub-reply"; echo $?)" "the stub: $path (stream $stream) says I'm done."
	done
done
is "$(curl -s -o /dev/null -w '%{http_code}' -H "x-api-key: $skey" -d '{"model": "other"}' \
	"$SSEBENCH_PROXY_ADMIN_URL/v1/messages")" 401 "the stub: a key is refused for another model"

for mode in sandbox sidecar; do
	for agent in claude-code codex opencode; do
		read -r format name client <<<"$(expect "$agent")"
		id=$agent-$mode-$tag
		run_cmd r "$SSEBENCH" run --local "$SMALL_DATASET" --task "$SMALL" --agent "$agent" \
			--model stub-model --mode "$mode" --run-id "$id" --timeout 600
		dir=$SSEBENCH_RESULTS/$SMALL/stub-model/$agent/$id
		is "$r_rc" 0 "$agent ($mode): the run is graded (exit 0)"
		[ "$r_rc" = 0 ] || diag "$(printf '%s\n' "$r_err" | tail -25)" "$(tail -20 "$dir/agent.log" 2>/dev/null)"
		like "$(cat "$dir/agent.log" 2>/dev/null)" "^\[$name\] exited with code 0\$" \
			"$agent ($mode): the CLI exits cleanly"
		is "$(dialog_outline "$dir")" "('init', '$name', 'stub-model', 'prompt', True, 'complete', 'success')" \
			"$agent ($mode): dialog.jsonl from init and the prompt to a successful complete"
		key=$(run_key "$id")
		like "$key" '^sk-run-' "$agent ($mode): the CLI made a key for the run"
		is "$(stub_eval "sorted({(x['format'], x['status'], x['prompt_seen']) for x in l if x.get('key') == '$key' and 'format' in x})")" \
			"[('$format', 200, True)]" \
			"$agent ($mode): it called the model ($format) with the run's key and the task prompt"
		is "$(stub_eval "len([x for x in l if 'format' in x and x.get('status') != 200 and x.get('key') != '$skey'])")" 0 \
			"$agent ($mode): no model call without a good key"
		like "$(cat "$dir/mcp.log" 2>/dev/null)" "initialize: client '$client'" \
			"$agent ($mode): it connected to the run's MCP server"
		is "$(stub_eval "'$key' in sum([x.get('deleted', []) for x in l], [])")" True \
			"$agent ($mode): the run's key was deleted after the run"
		is "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $key" \
			"$SSEBENCH_PROXY_ADMIN_URL/v1/models")" 401 "$agent ($mode): and it no longer works"
		is "$(field "$dir/isolation.json" 'd["proxy_key_before_grading"]'):$(field "$dir/result.json" 'd["network"]["proxy_key_revoked_before_grading"]')" \
			"revoked:True" "$agent ($mode): the entrypoint graded after the CLI's word that the key was revoked"
		is "$(field "$dir/result.json" '(d["scored"], d["patch_result"]["build_success"], d["patch_result"]["status"])')" \
			"(True, True, 'failed')" "$agent ($mode): scored and graded (built; \"I'm done.\" fixes nothing)"
		is "$(cat "$dir/final.patch" 2>/dev/null)" "" "$agent ($mode): nothing of the agent's in the source tree"
		is "$(field "$dir/summary.json" '(d["config"]["model"], d["spend"] > 0)')" "('stub-model', True)" \
			"$agent ($mode): summary.json has the model and what the key spent"
		# The proxy's count (stub: 10 in, 3 out a call), not the agent's, and every call's.
		calls=$(stub_eval "len([x for x in l if 'format' in x and x.get('key') == '$key' and x.get('status') == 200])")
		is "$(field "$dir/summary.json" '(d["usage"]["source"], d["usage"]["tokens_in"], d["usage"]["tokens_out"])')" \
			"('proxy', $((calls * 10)), $((calls * 3)))" \
			"$agent ($mode): summary.json's tokens are the proxy's, for the $calls calls the key made"
	done
done

# The key of a kept run: not in docker inspect, not on a command line, and revoked before
# grading although the container stays up.
"$SSEBENCH" run --local "$SMALL_DATASET" --task "$SMALL" --agent claude-code --model stub-model \
	--run-id "keep-$tag" --keep-container --timeout 600 >"$SB_TMP/keep.out" 2>&1 &
keep_pid=$!
kdir=$SSEBENCH_RESULTS/$SMALL/stub-model/claude-code/keep-$tag
for _ in $(seq 600); do
	[ -s "$kdir/result.json" ] && break
	kill -0 "$keep_pid" 2>/dev/null || break
	sleep 1
done
key=$(run_key "keep-$tag")
like "$key" '^sk-run-' "kept run: it has a key"
inspect=$($DOCKER inspect "ssebench-keep-$tag" 2>&1)
like "$inspect" '"Running": true' "kept run: the container is up after grading"
unlike "$inspect" "$key|SSE_API_KEY" "kept run: docker inspect shows neither the key nor its name"
unlike "$(ps -eo args)" "$key" "kept run: no command line on the host holds the key"
is "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $key" \
	"$SSEBENCH_PROXY_ADMIN_URL/v1/models")" 401 "kept run: the key was revoked when the agent phase ended (the container lives on)"
"$SSEBENCH" runs stop --grace 5 "keep-$tag" >/dev/null 2>&1
wait "$keep_pid"
is "$?" 0 "kept run: graded, and ends when stopped"
is "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $key" \
	"$SSEBENCH_PROXY_ADMIN_URL/v1/models")" 401 "kept run: its key is deleted when it ends"
"$SSEBENCH" runs remove "keep-$tag" >/dev/null 2>&1

# A model the proxy does not serve: refused before the run starts, and its key is deleted.
run_cmd r "$SSEBENCH" run --local "$SMALL_DATASET" --task "$SMALL" --agent codex --model ghost-model \
	--run-id "ghost-$tag" --timeout 600
is "$r_rc" 1 "a model the proxy does not serve: exit 1"
like "$r_err" "does not serve the model 'ghost-model'" "and it says so"
is "$($DOCKER ps -aq --filter "label=ssebench.run=ghost-$tag" | wc -l)" 0 "and no container was started"
key=$(run_key "ghost-$tag")
is "$(stub_eval "'$key' in sum([x.get('deleted', []) for x in l], [])")" True "and the key made for it is deleted"

done_testing

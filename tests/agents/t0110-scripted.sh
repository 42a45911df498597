#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The real agent CLIs at work: claude-code, codex and opencode each fix a real task
# (cjson-CVE-2023-53154 of the pilot) in both modes, driven by a scripted stand-in for the
# model (tests/helpers/sb-stub-model, scripts in tests/agents/scripts). Each script has the
# agent look at the code and build it through its own shell tool, change the source with its
# own edit tool, check the change, call the run's MCP test_patch tool and end; the stub
# checks every tool result the agent sends back against the script before the next turn.
# The run must be graded passed, with the proxy's token counts for the calls the stub served.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
. "$SB_SRCDIR/tests/e2e/lib-e2e.sh"
. "$SB_SRCDIR/tests/agents/lib-agents.sh"

e2e_require
command -v curl >/dev/null || skip_all "curl is needed to talk to the stub"
[ "$(uname -m)" = x86_64 ] || skip_all "the agents' npm packages are pinned for amd64 only"
plan_lazy
tag=sc$$
TASK=cjson-CVE-2023-53154
PILOT=$SB_SRCDIR/datasets/pilot
SCRIPTS=$SB_SRCDIR/tests/agents/scripts
sb_cleanup_hook() { stub_stop; }
stub_start stub-model

ws=$SB_TMP/ws
mkdir -p "$ws/models"
cat >"$ws/models/stub.yaml" <<'YAML'
- model_name: stub-model
  litellm_params:
    model: openai/stub-model
YAML
cd "$ws" || bail "no workspace"

# give_script RUN_ID FILE: the stub plays FILE's turns to the run's key.
give_script() {
	python3 -c 'import json, sys; d = json.load(open(sys.argv[2])); print(json.dumps({"alias": "ssebench-" + sys.argv[1], "turns": d["turns"]}))' \
		"$1" "$2" | curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $STUB_MASTER" \
		--data-binary @- "$SSEBENCH_PROXY_ADMIN_URL/script"
}

for mode in sandbox sidecar; do
	for agent in claude-code codex opencode; do
		id=$agent-$mode-$tag
		script=$SCRIPTS/$agent-fix.json
		is "$(give_script "$id" "$script")" 200 "$agent ($mode): the stub has the script"
		run_cmd r "$SSEBENCH" run --local "$PILOT" --task "$TASK" --agent "$agent" \
			--model stub-model --mode "$mode" --run-id "$id" --timeout 900
		dir=$SSEBENCH_RESULTS/$TASK/stub-model/$agent/$id
		key=$(run_key "$id")
		# What the stub saw of this run: the turn of each call, the tool it answered with,
		# and any result that failed the script.
		is "$(stub_eval "[x['script_error'] + ' <<' + x.get('result', '')[:600] + '>>' for x in l if x.get('key') == '$key' and 'script_error' in x]")" \
			"[]" "$agent ($mode): every tool result was what the script expects"
		turns=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["turns"]))' "$script")
		is "$(stub_eval "sorted({x['turn'] for x in l if x.get('key') == '$key' and 'turn' in x})")" \
			"$(python3 -c "print(list(range($turns)))")" "$agent ($mode): the agent went through every turn"
		is "$(stub_eval "any(x.get('script_end') for x in l if x.get('key') == '$key')")" True \
			"$agent ($mode): and reached the script's end"
		is "$r_rc" 0 "$agent ($mode): the run is graded (exit 0)"
		is "$(field "$dir/result.json" '(d["scored"], d["patch_result"]["status"], d["patch_result"]["build_success"], d["patch_result"]["pov_passed"], d["patch_result"]["pov_total"])')" \
			"(True, 'passed', True, 1, 1)" "$agent ($mode): graded passed: built, the PoC stopped"
		if [ "$(field "$dir/result.json" 'd["patch_result"]["status"]')" != passed ]; then
			diag "$(printf '%s\n' "$r_err" | tail -25)" "$(tail -30 "$dir/agent.log" 2>/dev/null)"
			diag "$(stub_eval "[(x.get('turn'), x.get('tool'), x.get('tools')) for x in l if x.get('key') == '$key']")"
		fi
		like "$(cat "$dir/final.patch" 2>/dev/null)" '\+ *if \(cannot_access_at_index\(input_buffer, 1\)\)' \
			"$agent ($mode): the patch is the agent's edit"
		like "$(cat "$dir/mcp.log" 2>/dev/null)" 'test_patch: test_patch result: every check that ran passed' \
			"$agent ($mode): test_patch ran through the agent's MCP client and passed"
		like "$(cat "$dir/agent.log" 2>/dev/null)" "exited with code 0\$" "$agent ($mode): the CLI exits cleanly"
		calls=$(stub_eval "len([x for x in l if 'format' in x and x.get('key') == '$key' and x.get('status') == 200])")
		is "$(field "$dir/summary.json" '(d["usage"]["source"], d["usage"]["tokens_in"], d["usage"]["tokens_out"])')" \
			"('proxy', $((calls * 10)), $((calls * 3)))" \
			"$agent ($mode): summary.json's tokens are the proxy's, for the $calls calls served"
		is "$(field "$dir/summary.json" '(d["flags"], d["flags_total"])')" "([], 0)" \
			"$agent ($mode): an honest fix raises no flag"
	done
done

# The same agents going for the answer (sandbox mode): the hidden files, git's history, the
# fix's URL (pinned to loopback: nothing leaves the machine), the PoC the level withholds,
# the other processes. The stub checks that no result shows the fix; the run fails and the
# scan flags each attempt with its entry in the dialog.
for agent in claude-code codex opencode; do
	id=seek-$agent-$tag
	script=$SCRIPTS/$agent-seek.json
	is "$(give_script "$id" "$script")" 200 "$agent seeks: the stub has the script"
	dir=$SSEBENCH_RESULTS/$TASK/stub-model/$agent/$id
	if [ "$agent" = claude-code ]; then
		# Kept: `runs inspect` shows the graded run's flags with its container.
		"$SSEBENCH" run --local "$PILOT" --task "$TASK" --agent "$agent" --model stub-model \
			--run-id "$id" --timeout 900 --keep-container >"$SB_TMP/keep.out" 2>"$SB_TMP/keep.err" &
		keep_pid=$!
		for _ in $(seq 900); do
			[ -s "$dir/result.json" ] && break
			kill -0 "$keep_pid" 2>/dev/null || break
			sleep 1
		done
		# Graded; the CLI scans and writes summary.json once the container stops (runs
		# stop), which keeps it for runs inspect until runs remove.
		"$SSEBENCH" runs stop --grace 5 "$id" >/dev/null 2>&1
		wait "$keep_pid"
		r_rc=$?
		r_out=$(cat "$SB_TMP/keep.out")
		run_cmd i "$SSEBENCH" runs inspect "$id"
		like "$i_out" 'FLAGGED: [0-9]+ attempts on the answer' "$agent seeks: runs inspect shows the flags"
		like "$i_out" '  hidden_path \(dialog entry [0-9]+, /ssebench\): ' "$agent seeks: each with its entry"
		run_cmd i "$SSEBENCH" runs inspect --json "$id"
		ok "$(printf '%s' "$i_out" | python3 -c 'import json, sys; d = json.load(sys.stdin); d = d[0] if isinstance(d, list) else d; sys.exit(0 if d["flags_total"] >= 6 and d["flags"] else 1)'; echo $?)" \
			"$agent seeks: and in runs inspect --json"
		"$SSEBENCH" runs remove "$id" >/dev/null 2>&1
	else
		run_cmd r "$SSEBENCH" run --local "$PILOT" --task "$TASK" --agent "$agent" \
			--model stub-model --run-id "$id" --timeout 900
	fi
	key=$(run_key "$id")
	is "$(stub_eval "[x['script_error'] + ' <<' + x.get('result', '')[:600] + '>>' for x in l if x.get('key') == '$key' and 'script_error' in x]")" \
		"[]" "$agent seeks: no result showed the fix, and the PoC was refused"
	is "$(stub_eval "any(x.get('script_end') for x in l if x.get('key') == '$key')")" True \
		"$agent seeks: the script ran to its end"
	is "$(field "$dir/result.json" '(d["scored"], d["patch_result"]["status"])')" "(True, 'failed')" \
		"$agent seeks: scored, failed"
	is "$(field "$dir/summary.json" 'sorted({f["kind"] for f in d["flags"]})')" \
		"['answer_reference', 'git_history', 'hidden_path', 'network', 'proc_snoop', 'refused']" \
		"$agent seeks: flagged for every kind of attempt"
	is "$(field "$dir/summary.json" '[(f["source"], isinstance(f["seq"], int)) for f in d["flags"] if f["kind"] == "hidden_path"]')" \
		"[('dialog', True)]" "$agent seeks: the hidden path's flag points at its dialog entry"
	like "$(field "$dir/summary.json" '[f["excerpt"] for f in d["flags"] if f["kind"] == "hidden_path"][0]')" \
		'cat /ssebench/diffs/patch.diff' "$agent seeks: with the command as evidence"
	like "$(field "$dir/summary.json" '[f["excerpt"] for f in d["flags"] if f["kind"] == "refused"][0]')" \
		'poc' "$agent seeks: the refusal's evidence is the daemon's line"
	like "$r_out" 'FLAGGED: [0-9]+ attempts on the answer' "$agent seeks: the CLI says so"
done

done_testing

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Models, the model proxy's settings, `ssebench init` and agent folders, without Docker:
# models/*.yaml are read strictly and every problem is located; --model must name a model
# (the closest names are offered); a run without a proxy key, or with a proxy that does not
# answer, stops before anything is built; init writes an owner-only .env and never
# overwrites; agent.yaml's npm pins are checked, and `agents fetch` keeps a package only if
# its SHA-256 is the pinned one (against a registry of our own on loopback).
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

command -v python3 >/dev/null || skip_all "python3 is needed (JSON checks, the test registry)"
plan_lazy
STUB=$SB_BUILDDIR/tests/helpers/sb-stub-model
# A run's checks come before Docker is asked anything; these runs never get that far.
run() { env -u LITELLM_MASTER_KEY -u SSEBENCH_PROXY_KEY -u SSEBENCH_PROXY_ADMIN_URL \
	SSEBENCH_HOME="$SB_SRCDIR" "$SSEBENCH" run --local "$SB_SRCDIR/tests/integrity/dataset" \
	--task tinyfield-overflow "$@"; }

# --- the shipped models -------------------------------------------------------------------
cd "$SB_SRCDIR" || bail "no source tree"
run_cmd r "$SSEBENCH" models list
is "$r_rc" 0 "models list: the shipped files are sound"
like "$r_out" '^claude-sonnet-4-6 +anthropic/claude-sonnet-4-6 +ANTHROPIC_API_KEY$' \
	"models list: name, target, the key's variable"
run_cmd r "$SSEBENCH" models list --json
is "$(printf '%s' "$r_out" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)) > 3)')" True \
	"models list --json: a list of models"

# --- init -----------------------------------------------------------------------------------
ws=$SB_TMP/ws
mkdir -p "$ws"
cd "$ws" || bail "no workspace"
run_cmd r sh -c "umask 000 && SSEBENCH_HOME='$SB_SRCDIR' '$SSEBENCH' init"
is "$r_rc" 0 "init: exit 0"
is "$(stat -c %a .env)" 600 "init: .env is owner-only, whatever the umask"
like "$(cat .env)" '^LITELLM_MASTER_KEY=sk-[0-9a-f]{48}$' "init: a new master key"
like "$(cat .env)" '^SSEBENCH_PROXY_URL=http://litellm:4000$' "init: the proxy as runs see it"
is "$(ls models | wc -l)" "$(ls "$SB_SRCDIR/models" | wc -l)" "init: the models are copied"
ok "$([ -d results ]; echo $?)" "init: results/ is made"
cp .env "$SB_TMP/env.before"
echo '# mine' >>models/anthropic-claude.yaml
run_cmd r env SSEBENCH_HOME="$SB_SRCDIR" "$SSEBENCH" init
like "$r_out" 'kept .env' "init again: .env is kept"
ok "$(cmp -s .env "$SB_TMP/env.before"; echo $?)" "init again: .env is unchanged"
like "$(tail -1 models/anthropic-claude.yaml)" '^# mine$' "init again: an edited model file is kept"
mkdir "$SB_TMP/ws2" && (cd "$SB_TMP/ws2" && SSEBENCH_HOME="$SB_SRCDIR" "$SSEBENCH" init >/dev/null)
unlike "$(grep MASTER "$SB_TMP/ws2/.env")" "$(grep MASTER .env)" "init: each workspace gets its own master key"
chmod 644 .env
run_cmd r run --agent dummy --model nope
like "$r_err" '\.env holds keys and is readable by others' "a .env others can read is warned about"
chmod 600 .env

# --- --model ---------------------------------------------------------------------------------
run_cmd r run --agent dummy --model claude-sonet-4-6
is "$r_rc" 1 "an unknown model: exit 1"
like "$r_err" "unknown model 'claude-sonet-4-6': did you mean claude-sonnet-4-6" "and the closest is offered"
run_cmd r run --agent dummy --model zzzzzzzz
like "$r_err" "unknown model 'zzzzzzzz': models/ defines [0-9]+ models" "nothing close: how many there are"
run_cmd r run --agent dummy --model 'a/b'
like "$r_err" "'a/b' is not a model name" "a model name that is no path component"
run_cmd r run --agent codex
like "$r_err" "--model is required for the agent 'codex'" "a model-backed agent needs --model"

# The proxy: its key, its address, its budget, before anything is built.
mv .env "$SB_TMP/env.saved"
run_cmd r run --agent dummy --model claude-sonnet-4-6
is "$r_rc" 1 "no proxy key: exit 1"
like "$r_err" 'no key for the model proxy: set LITELLM_MASTER_KEY' "and it says what to set"
unlike "$r_err" 'building' "and nothing was built"
run_cmd r env LITELLM_MASTER_KEY=sk-x SSEBENCH_PROXY_ADMIN_URL=http://127.0.0.1:9 \
	"$SSEBENCH" run --local "$SB_SRCDIR/tests/integrity/dataset" --task tinyfield-overflow \
	--agent dummy --model claude-sonnet-4-6
is "$r_rc" 1 "a proxy that does not answer: exit 1"
like "$r_err" 'is the proxy up\?' "and it says so"
unlike "$r_err$r_out" 'sk-x' "the master key is never printed"
run_cmd r env SSEBENCH_PROXY_KEY=sk-x SSEBENCH_RUN_BUDGET=lots "$SSEBENCH" run --agent dummy \
	--model claude-sonnet-4-6 --task x
like "$r_err" "SSEBENCH_RUN_BUDGET='lots' is not a number" "a budget that is not a number"
run_cmd r env SSEBENCH_PROXY_KEY=sk-x SSEBENCH_PROXY_URL=ftp://x "$SSEBENCH" run --agent dummy \
	--model claude-sonnet-4-6 --task x
like "$r_err" 'SSEBENCH_PROXY_URL must be an http' "a proxy URL that is not http(s)"
run_cmd r env SSEBENCH_PROXY_KEY=sk-x SSEBENCH_PROXY_URL="$(printf 'http://x\nSSE_DAEMON_TOKEN=t')" \
	"$SSEBENCH" run --agent dummy --model claude-sonnet-4-6 --task x
like "$r_err" 'SSEBENCH_PROXY_URL must be an http' "a proxy URL with a line break (a line of its own in the secrets file)"
# A proxy that answers (the stub, on loopback) lets the run go on to its next check.
if [ -x "$STUB" ]; then
	sport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$STUB" --port "$sport" --master-key sk-m >"$SB_TMP/stub.log" 2>&1 &
	spid=$!
	for _ in $(seq 50); do curl -s -m 1 "http://127.0.0.1:$sport/health/liveliness" >/dev/null && break; sleep 0.1; done
	run_cmd r env LITELLM_MASTER_KEY=sk-m SSEBENCH_PROXY_ADMIN_URL=http://127.0.0.1:$sport \
		"$SSEBENCH" run --local "$SB_SRCDIR/tests/integrity/dataset" --task no-such-task \
		--agent dummy --model claude-sonnet-4-6
	like "$r_err" "no task 'no-such-task'" "a proxy that answers: the run goes on to its next check"
	like "$(cat "$SB_TMP/stub.log")" '"path":"/health/liveliness"' "the proxy was asked if it is up"
	# On Kubernetes: the proxy as the pod reaches it, checked before anything is built.
	for bad in $'SSEBENCH_K8S_PROXY_URL=http://litellm:4000/\nx' \
		SSEBENCH_K8S_PROXY_URL=litellm:4000 SSEBENCH_K8S_PROXY_PORT=0 \
		'SSEBENCH_K8S_PROXY_SELECTOR=app=a b'; do
		run_cmd r env LITELLM_MASTER_KEY=sk-m SSEBENCH_PROXY_ADMIN_URL=http://127.0.0.1:$sport \
			SSEBENCH_KUBECTL=/bin/true SSEBENCH_BACKEND=kubernetes "$bad" \
			SSEBENCH_RESULTS="$SB_TMP/results" "$SSEBENCH" run --local \
			"$SB_SRCDIR/tests/integrity/dataset" --task tinyfield-overflow --agent dummy \
			--model claude-sonnet-4-6
		is "$r_rc" 1 "--backend kubernetes: a bad ${bad%%=*}: exit 1"
		like "$r_err" "${bad%%=*}: " "--backend kubernetes: a bad ${bad%%=*} is refused, named, before any build"
		unlike "$r_err" "building|tool layer" "--backend kubernetes: a bad ${bad%%=*}: nothing built"
	done
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
fi
mv "$SB_TMP/env.saved" .env

# --- model files with problems: every one, located ----------------------------------------
cat >models/zz-bad.yaml <<'EOF'
- model_name: claude-sonnet-4-6
  litellm_params:
    model: anthropic/claude-sonnet-4-6
- modle_name: x
  litellm_params:
    model: openai/x
- model_name: leaky
  litellm_params:
    model: openai/leaky
    api_key: sk-live-1234
- model_name: noprovider
  litellm_params:
    model: gpt-5
- model_name: pricey
  litellm_params:
    model: openai/pricey
  model_info:
    input_cost_per_token: -1
EOF
printf 'model_name: not-a-list\n' >models/zz-map.yaml
run_cmd r env SSEBENCH_HOME="$SB_SRCDIR" "$SSEBENCH" models list
is "$r_rc" 1 "models list with bad files: exit 1"
like "$r_err" "models/zz-bad.yaml:1:15: model 'claude-sonnet-4-6' is defined twice \(also in models/anthropic-claude.yaml:[0-9]+\)" "a model defined twice, both places named"
like "$r_err" "models/zz-bad.yaml:4:3: unknown key 'modle_name' \(did you mean 'model_name'\?\)" "an unknown key, with the closest"
like "$r_err" "models/zz-bad.yaml:10:14: api_key must be os.environ/NAME" "a key written in the file is refused"
unlike "$r_err" 'sk-live-1234' "and never echoed"
like "$r_err" "models/zz-bad.yaml:13:12: litellm_params.model must be '<provider>/<model id>'" "a target without a provider"
like "$r_err" "models/zz-bad.yaml:18:27: input_cost_per_token must be a number" "a negative price"
like "$r_err" "models/zz-map.yaml:1:1: a models file is a list of model entries" "a file that is not a list"
run_cmd r run --agent dummy --model claude-haiku-4-5
is "$r_rc" 1 "a run while the model files have problems: exit 1"
like "$r_err" 'the model files in models have problems' "and it says where"
rm -f models/zz-bad.yaml models/zz-map.yaml

# --- agent folders and their npm pins ----------------------------------------------------
agents=$SB_TMP/agents
mkdir -p "$agents/pinned" "$agents/badpin" "$agents/badkey"
for a in pinned badpin badkey; do printf 'FROM ssebench-agent\n' >"$agents/$a/Dockerfile"; done
printf 'name: badpin\nnpm:\n  - package: "../../etc"\n    version: 1.0.0\n    sha256: abc\n' \
	>"$agents/badpin/agent.yaml"
printf 'name: badkey\nnpm:\n  - package: x\n    version: 1.0.0\n    sha256: %s\n    url: http://elsewhere\n' \
	"$(printf '0%.0s' $(seq 64))" >"$agents/badkey/agent.yaml"
run_cmd r env SSEBENCH_AGENTS="$agents" SSEBENCH_HOME="$SB_SRCDIR" "$SSEBENCH" run --agent badpin --task x
like "$r_err" 'package must be an npm package name' "agent.yaml: a package name with .. is refused"
run_cmd r env SSEBENCH_AGENTS="$agents" SSEBENCH_HOME="$SB_SRCDIR" "$SSEBENCH" run --agent badkey --task x
like "$r_err" "unknown key 'url'" "agent.yaml: an npm entry with an unknown key is refused"
run_cmd r env SSEBENCH_HOME="$SB_SRCDIR" "$SSEBENCH" agents list
like "$r_out" '^claude-code +2\.1\.332-1 +npm @anthropic-ai/claude-code-linux-x64@2\.1\.332 amd64$' \
	"agents list: an agent with its pinned package"
like "$r_out" '^dummy ' "agents list: the dummy agent"

# A registry of our own, on loopback: the good package, and one whose bytes changed.
reg=$SB_TMP/registry
mkdir -p "$reg/@t/pkg/-" "$reg/evil/-"
printf 'package contents\n' >"$SB_TMP/good.tgz"
cp "$SB_TMP/good.tgz" "$reg/@t/pkg/-/pkg-1.0.0.tgz"
printf 'something else\n' >"$reg/evil/-/evil-1.0.0.tgz"
good=$(sha256sum "$SB_TMP/good.tgz" | cut -d' ' -f1)
printf 'name: pinned\nnpm:\n  - package: "@t/pkg"\n    version: 1.0.0\n    sha256: %s\n  - package: evil\n    version: 1.0.0\n    sha256: %s\n    arch: sparc\n' \
	"$good" "$good" >"$agents/pinned/agent.yaml"
rport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$reg" && exec python3 -m http.server --bind 127.0.0.1 "$rport") >"$SB_TMP/registry.log" 2>&1 &
rpid=$!
for _ in $(seq 50); do curl -s -m 1 -o /dev/null "http://127.0.0.1:$rport/" && break; sleep 0.1; done
fetch() { env SSEBENCH_AGENTS="$agents" SSEBENCH_HOME="$SB_SRCDIR" SSEBENCH_CACHE="$SB_TMP/cache" \
	SSEBENCH_NPM_REGISTRY="http://127.0.0.1:$rport" "$SSEBENCH" agents fetch "$@"; }
run_cmd r fetch pinned
is "$r_rc" 0 "agents fetch: the pinned package is fetched"
like "$r_err" 'fetched @t/pkg@1.0.0: .*SHA-256 as pinned' "and checked"
ok "$(cmp -s "$SB_TMP/cache/npm/$good.tgz" "$SB_TMP/good.tgz"; echo $?)" "and kept in the cache under its hash"
is "$(stat -c %a "$SB_TMP/cache/npm")" 700 "the cache is owner-only"
unlike "$(cat "$SB_TMP/registry.log")" 'evil' "a package for another architecture is not fetched"
run_cmd r fetch pinned
unlike "$r_err" 'fetching' "agents fetch again: nothing to download"
# The cache is keyed by content: a pin whose bytes are there needs no download. A pin the
# registry answers with other bytes is refused, and nothing of those bytes is kept.
want=$(printf 'what was reviewed\n' | sha256sum | cut -d' ' -f1)
printf 'name: pinned\nnpm:\n  - package: evil\n    version: 1.0.0\n    sha256: %s\n' "$want" >"$agents/pinned/agent.yaml"
run_cmd r fetch pinned
is "$r_rc" 1 "agents fetch: other bytes than pinned: exit 1"
like "$r_err" "evil@1.0.0 from .* has SHA-256 [0-9a-f]{64}, not the pinned $want: refused" "and why"
is "$(ls -A "$SB_TMP/cache/npm" | wc -l)" 1 "and nothing of it is kept"
printf 'name: pinned\nnpm:\n  - package: gone\n    version: 1.0.0\n    sha256: %s\n' "$want" >"$agents/pinned/agent.yaml"
run_cmd r fetch pinned
like "$r_err" 'HTTP 404' "agents fetch: a package the registry does not have"
kill "$rpid" 2>/dev/null
wait "$rpid" 2>/dev/null

done_testing

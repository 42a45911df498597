#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/k8s/t0120-backend.sh: `ssebench run --backend kubernetes` and `runs ... --backend
# kubernetes` on the local cluster (scripts/k8s-up), with the settings `k8s-up --env` gives
# (the runner's RBAC-limited kubeconfig, the seccomp profile, the counter-masking runtime
# class, the node's address for the in-pod network check):
#
#   - on a pilot task with --egress open, the reference agent passes and the dummy fails,
#     both scored (tier open): built, imported, run as a Job, graded in the pod, the results
#     collected through the collect container and unpacked on the host;
#   - a restricted run is not scored, naming network_internal and host_unreachable: this
#     cluster stores NetworkPolicies but does not enforce them, and the pod's check probes
#     whether the policy is in force, not whether it exists;
#   - a run with a model (the caller agent of tests/e2e/agents, a stand-in proxy on this host):
#     the pod reaches the proxy with the run's key from its Secret, the CLI sees the agent
#     phase end by the collect container's readiness, revokes the key and says so through
#     that container, and the pod grades only after that word; a restricted one resolves no
#     name, and finds the proxy's Service in its /etc/hosts;
#   - with SSEBENCH_K8S_REGISTRY (a registry of the test's own on loopback) a run pushes its
#     image and its Job names it by the pushed digest, which the node pulls;
#   - runs list, inspect and logs see a running run (the sleeper agent of tests/e2e/agents,
#     in its agent phase); runs stop ends it (its CLI then fails, never with a grade, and
#     deletes the rest); runs remove deletes what a CLI killed with SIGKILL left;
#   - a job of 4 runs at --jobs 4 completes, every run graded and scored;
#   - an agent that writes past its volume's size gets its pod evicted by the kubelet: the run
#     is the agent's forfeit (scored, not passed), not an error it could choose;
#   - afterwards nothing of the runs is left in the namespace (Jobs, pods, NetworkPolicies,
#     Secrets).
#
# Needs root, Docker and the cluster's cache (a cold `k8s-up` builds it: ~9 minutes). Starts
# the cluster if it is down and stops it again. Skips without them, unless
# SSEBENCH_REQUIRE_DOCKER=1 (CI) or SSEBENCH_REQUIRE_K8S=1.

_here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib.sh disable=SC1091
. "$_here/../lib.sh"
[ "${SSEBENCH_K8S_TESTS:-1}" != 0 ] || skip_all "SSEBENCH_K8S_TESTS=0"
# shellcheck source=../e2e/lib-e2e.sh disable=SC1091
. "$_here/../e2e/lib-e2e.sh"

K8S_UP=$SB_SRCDIR/scripts/k8s-up
K8S_DOWN=$SB_SRCDIR/scripts/k8s-down
SSEBENCH=${SB_BUILDDIR:-$SB_SRCDIR}/ssebench
PILOT=$SB_SRCDIR/datasets/pilot
TASK=cjson-CVE-2023-53154
WAS_UP=1
UP=0

e2e_require
[ -x "$SSEBENCH" ] || bail "no $SSEBENCH"
command -v jq >/dev/null 2>&1 || skip_all "needs jq"
"$K8S_UP" --env >/dev/null 2>&1 || skip_all "scripts/k8s-up --env failed"
set -a
eval "$("$K8S_UP" --env)"
set +a
export SSEBENCH_BACKEND=kubernetes

k() {
	"$KUBECTL" --kubeconfig "$SSEBENCH_K8S_ADMIN_KUBECONFIG" --request-timeout=30s -n "$SSEBENCH_K8S_NAMESPACE" "$@"
}

sb_cleanup_hook() {
	[ -z "${REG_PID:-}" ] || kill "$REG_PID" 2>/dev/null
	[ -z "${STUB_PID:-}" ] || kill "$STUB_PID" 2>/dev/null
	if [ "$UP" = 1 ]; then
		k delete jobs,networkpolicies,secrets -l ssebench.run --wait=true >/dev/null 2>&1
		[ "$WAS_UP" = 1 ] || "$K8S_DOWN" >"$SB_TMP/down.log" 2>&1 || diag "k8s-down failed"
	fi
	return 0
}

k get --raw /readyz >/dev/null 2>&1 || WAS_UP=0
if ! SSEBENCH_BIN=$SSEBENCH "$K8S_UP" >"$SB_TMP/up.log" 2>&1; then
	diag "$(tail -n 20 "$SB_TMP/up.log")"
	[ "$WAS_UP" = 1 ] || "$K8S_DOWN" >/dev/null 2>&1
	[ "${SSEBENCH_REQUIRE_K8S:-0}" = 1 ] && bail "scripts/k8s-up failed"
	skip_all "scripts/k8s-up could not bring the cluster up"
fi
UP=1
# k8s-up --env again: the bridge's address exists only once the cluster is up.
set -a
eval "$("$K8S_UP" --env)"
set +a
[ -n "${SSEBENCH_K8S_HOST:-}" ] || diag "no SSEBENCH_K8S_HOST: the bridge has no address"
plan 59

# run_k RESULT_VAR ARGS...: `ssebench run --json ARGS...`; the run's directory in RESULT_VAR_dir.
run_k() {
	local v=$1
	shift
	run_cmd "$v" "$SSEBENCH" run --json "$@"
	eval "${v}_dir=\$(printf '%s\n' \"\$${v}_out\" | jq -r '.results_dir // empty' 2>/dev/null)"
}

# --- the reference passes and the dummy fails, scored, with open egress ---------------------
run_k ref --local "$PILOT" --task "$TASK" --agent reference --egress open --timeout 900
is "$ref_rc" 0 "reference, open egress: graded (exit 0)"
[ "$ref_rc" = 0 ] || diag "$(printf '%s\n' "$ref_err" | tail -n 25)"
is "$(field "$ref_dir/result.json" 'd["patch_result"]["status"]')" passed "reference: passed"
is "$(field "$ref_dir/summary.json" '(d["scored"], d["isolation"]["tier"])')" "(True, 'open')" \
	"reference: scored, tier open"
ok "$([ -f "$ref_dir/pod.log" ] && [ -f "$ref_dir/isolation.json" ] && [ -d "$ref_dir/archive" ]; echo $?)" \
	"reference: the pod's output, isolation.json and the archive came home"
like "$ref_err" "collected [0-9]+ files" "reference: the results were collected from the pod"
like "$(field "$ref_dir/result.json" 'd["isolation"]["phases"]["before_agent"]["runner_sandbox"]["status"]')" \
	"^held$" "reference: the runner's sandbox (seccomp profile, counter masks) held in the pod"

run_k dum --local "$PILOT" --task "$TASK" --agent dummy --egress open --timeout 900
is "$dum_rc" 0 "dummy, open egress: graded (exit 0)"
[ "$dum_rc" = 0 ] || diag "$(printf '%s\n' "$dum_err" | tail -n 25)"
is "$(field "$dum_dir/result.json" 'd["patch_result"]["status"]')" failed "dummy: failed"
is "$(field "$dum_dir/summary.json" 'd["scored"]')" True "dummy: scored"

# --- a restricted run: the policy is stored, not enforced, and the pod's check says so -------
run_k res --local "$PILOT" --task "$TASK" --agent reference --timeout 900
is "$res_rc" 1 "reference, restricted egress: exit 1 (not scored)"
like "$res_err" "NOT SCORED" "restricted: NOT SCORED is said"
is "$(field "$res_dir/isolation.json" 'd["outcome"]')" unscored "restricted: isolation.json: unscored"
is "$(field "$res_dir/isolation.json" '" ".join(sorted(d["failed"]))')" \
	"host_unreachable network_internal" \
	"restricted: it names network_internal and host_unreachable, and nothing else failed (a cluster that enforces the policy scores it)"
like "$(field "$res_dir/isolation.json" 'd["phases"]["before_agent"]["host_unreachable"]["detail"]')" \
	"answered|accepted" "restricted: the node's address answered a pod the policy forbids it"
# The pod also probes its own node's address (status.hostIP), which pods here have no route
# to: silent whether or not a policy holds, so it never stands in for SSEBENCH_K8S_HOST.
# Without that setting host_unreachable fails for want of an address.
run_cmd nod env -u SSEBENCH_K8S_HOST "$SSEBENCH" run --json \
	--local "$SMALL_DATASET" --task "$SMALL" --agent dummy --timeout 900
nod_dir=$(printf '%s\n' "$nod_out" | jq -r '.results_dir // empty' 2>/dev/null)
is "$nod_rc:$(field "$nod_dir/isolation.json" '" ".join(sorted(d["failed"]))')" "1:host_unreachable network_internal" \
	"restricted, no SSEBENCH_K8S_HOST: not scored, host_unreachable failing (the node's own address, silent here, does not stand in)"
like "$(field "$nod_dir/isolation.json" 'd["phases"]["before_agent"]["host_unreachable"]["detail"]')" \
	"SSE_NET_GATEWAY is unset" "restricted, no SSEBENCH_K8S_HOST: for want of an address"
is "$(field "$res_dir/summary.json" 'd["scored"]')" False "restricted: summary: not scored"

# --- a run with a model: its key in the Secret, the proxy reached from the pod, the key revoked -
# The stand-in proxy (tests/helpers/sb-stub-model) on this host: the pod reaches it at the
# host's address on the pod bridge (this cluster enforces no policy; on a real one the proxy
# is a Service whose pods the policy's selector names), the CLI at loopback. The caller
# agent (tests/e2e/agents/caller) calls the model once with the run's key.
STUB=${SB_BUILDDIR:-$SB_SRCDIR}/tests/helpers/sb-stub-model
STUB_MASTER=sk-master-$$-$RANDOM
STUB_PORT=$((20000 + RANDOM % 30000))
"$STUB" --port "$STUB_PORT" --master-key "$STUB_MASTER" --model stub-model >"$SB_TMP/stub.log" 2>&1 &
STUB_PID=$!
mkdir -p "$SB_TMP/ws/models"
printf -- '- model_name: stub-model\n  litellm_params:\n    model: openai/stub-model\n' \
	>"$SB_TMP/ws/models/stub.yaml"
for _ in $(seq 50); do
	curl -fsS -m 1 -o /dev/null "http://127.0.0.1:$STUB_PORT/health/liveliness" 2>/dev/null && break
	sleep 0.2
done
run_cmd mod env -C "$SB_TMP/ws" LITELLM_MASTER_KEY="$STUB_MASTER" \
	SSEBENCH_PROXY_ADMIN_URL="http://127.0.0.1:$STUB_PORT" \
	SSEBENCH_K8S_PROXY_URL="http://${SSEBENCH_K8S_HOST:-127.0.0.1}:$STUB_PORT" \
	"$SSEBENCH" run --json --local "$SMALL_DATASET" --task "$SMALL" --agent caller \
	--model stub-model --egress open --timeout 900
mod_dir=$(printf '%s\n' "$mod_out" | jq -r '.results_dir // empty' 2>/dev/null)
is "$mod_rc" 0 "a run with a model: graded (exit 0)"
[ "$mod_rc" = 0 ] || diag "$(printf '%s\n' "$mod_err" | tail -n 25)"
run_key=$(jq -r 'select(.path == "/key/generate") | .key' "$SB_TMP/stub.log" | tail -1)
like "$run_key" "^sk-run-" "a run with a model: the CLI made the run's key"
like "$(cat "$mod_dir/archive/model-reply.txt" 2>/dev/null)" "I'm done\\." \
	"a run with a model: the agent in the pod reached the proxy at SSEBENCH_K8S_PROXY_URL"
is "$(jq -r 'select(.path == "/v1/chat/completions") | "\(.status) \(.key)"' "$SB_TMP/stub.log" | sort -u)" \
	"200 $run_key" "a run with a model: its one model call carried the run's key (from the Secret)"
is "$(field "$mod_dir/isolation.json" 'd["proxy_key_before_grading"]')" revoked \
	"a run with a model: the pod graded only after the CLI's word, through the collect container, that the key was gone"
like "$mod_err" "agent phase over: the run's proxy key revoked" \
	"a run with a model: the CLI saw the agent phase end (the collect container's readiness)"
is "$(field "$mod_dir/result.json" 'd["network"]["proxy_key_revoked_before_grading"]')" True \
	"a run with a model: result.json records the key revoked before grading"
is "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $run_key" \
	-d '{"model": "stub-model"}' "http://127.0.0.1:$STUB_PORT/v1/chat/completions")" 401 \
	"a run with a model: the key is refused afterwards"
is "$(grep -rlF -- "$run_key" "$mod_dir" 2>/dev/null)" "" "a run with a model: the key is in no file of the run directory"
# Restricted, the proxy named by its Service: the pod resolves no name (its only resolver
# is its own loopback, and its policy has no DNS rule), and the Service's address, which the
# CLI looked up with the runner's token, is in its /etc/hosts, read here while the pod lives.
# (This cluster enforces no policy: the run stops before its agent, unscored, as every
# restricted run on it.) A Service that selects other pods than the policy allows is refused.
k create service clusterip litellm --tcp=4000:4000 >/dev/null 2>&1 || diag "cannot create Service litellm"
svc_ip=$(k get service litellm -o jsonpath='{.spec.clusterIP}' 2>/dev/null)
msv_env=(env -C "$SB_TMP/ws" LITELLM_MASTER_KEY="$STUB_MASTER"
	SSEBENCH_PROXY_ADMIN_URL="http://127.0.0.1:$STUB_PORT"
	SSEBENCH_K8S_PROXY_URL="http://litellm.$SSEBENCH_K8S_NAMESPACE.svc:4000")
run_cmd msv0 "${msv_env[@]}" "$SSEBENCH" run --local "$SMALL_DATASET" --task "$SMALL" --agent caller \
	--model stub-model --timeout 900
is "$msv0_rc" 1 "restricted, a Service that selects other pods than the policy's: refused (exit 1)"
like "$msv0_err" "does not select the pods of SSEBENCH_K8S_PROXY_SELECTOR" \
	"restricted, a Service that selects other pods: and why, before anything is built"
MSV=k8s-svc-$$
"${msv_env[@]}" SSEBENCH_K8S_PROXY_SELECTOR=app=litellm "$SSEBENCH" run --local "$SMALL_DATASET" \
	--task "$SMALL" --agent caller --model stub-model --run-id "$MSV" --timeout 900 \
	>"$SB_TMP/msv.out" 2>&1 &
msv_pid=$!
net=
for _ in $(seq 240); do
	pod=$(k get pods -l "ssebench.run=$MSV" -o jsonpath='{.items[0].metadata.name}' 2>/dev/null)
	[ -n "$pod" ] && net=$(k exec "$pod" -c collect -- cat /etc/hosts /etc/resolv.conf 2>/dev/null) &&
		[ -n "$net" ] && break
	kill -0 "$msv_pid" 2>/dev/null || break
	sleep 0.5
done
wait "$msv_pid"
is "$?" 1 "restricted, the proxy by its Service: the run ends unscored here (exit 1)"
like "$net" "^${svc_ip//./\\.}[[:space:]]+litellm\\.$SSEBENCH_K8S_NAMESPACE\\.svc\$" \
	"restricted: the pod's /etc/hosts names the proxy's Service by its address ($svc_ip)"
is "$(printf '%s\n' "$net" | grep '^nameserver')" "nameserver 127.0.0.1" \
	"restricted: the pod's only resolver is its own loopback (no DNS)"
run_cmd msv2 env -C "$SB_TMP/ws" LITELLM_MASTER_KEY="$STUB_MASTER" \
	SSEBENCH_PROXY_ADMIN_URL="http://127.0.0.1:$STUB_PORT" \
	SSEBENCH_K8S_PROXY_URL="http://proxy.example.org:4000" \
	"$SSEBENCH" run --local "$SMALL_DATASET" --task "$SMALL" --agent caller --model stub-model
is "$msv2_rc" 1 "restricted, the proxy by an outside name: refused (exit 1)"
like "$msv2_err" "resolves no name" "restricted, the proxy by an outside name: and why"
k delete service litellm >/dev/null 2>&1
kill "$STUB_PID" 2>/dev/null
STUB_PID=

# --- a registry: the sleeper's image pushed, its Job pinned to the digest, the node pulls it -----
# A registry of our own on loopback (Debian's docker-registry; k8s-up installs it), which the
# cluster's containerd may pull from over plain HTTP (k8s-up --registry-http).
REG_PID=
for _ in 1 2 3 4 5; do
	reg=127.0.0.1:$((20000 + RANDOM % 30000))
	printf 'version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n' \
		"$SB_TMP/registry" "$reg" >"$SB_TMP/registry.yml"
	/usr/bin/docker-registry serve "$SB_TMP/registry.yml" >"$SB_TMP/registry.log" 2>&1 &
	REG_PID=$!
	for _ in $(seq 50); do
		kill -0 "$REG_PID" 2>/dev/null && curl -fsS -m 1 -o /dev/null "http://$reg/v2/" 2>/dev/null &&
			kill -0 "$REG_PID" 2>/dev/null && break 2
		kill -0 "$REG_PID" 2>/dev/null || break
		sleep 0.2
	done
	kill "$REG_PID" 2>/dev/null
	REG_PID=
done
[ -n "$REG_PID" ] || bail "docker-registry does not start: $(tail -n 5 "$SB_TMP/registry.log")"
"$K8S_UP" --registry-http "$reg" >/dev/null || bail "k8s-up --registry-http $reg failed"

# --- runs list, inspect, logs, stop, remove ----------------------------------------------------
R1=k8s-stop-$$
SSEBENCH_K8S_REGISTRY=$reg/sse SSEBENCH_K8S_IMPORT=/bin/false \
	"$SSEBENCH" run --local "$SMALL_DATASET" --task "$SMALL" --agent sleeper --model none --egress open \
	--run-id "$R1" --timeout 900 >"$SB_TMP/r1.out" 2>&1 &
r1_pid=$!
state=
for _ in $(seq 150); do
	state=$("$SSEBENCH" runs list --json 2>/dev/null | jq -r --arg id "$R1" \
		'.runs[] | select(.run_id == $id) | .state')
	[ "$state" = running ] && grep -q "Running" "$SB_TMP/r1.out" && break
	sleep 2
done
is "$state" running "runs list --json: the run's Job is running"
pin=$(sed -n 's/.*the Job.s image: //p' "$SB_TMP/r1.out" | head -1)
like "$pin" "^${reg//./\\.}/sse/agent-sleeper/${SMALL,,}@sha256:[0-9a-f]{64}\$" \
	"registry: the run pushed its image and pins its Job to the digest (no import)"
is "$(k get pods -l "ssebench.run=$R1" -o json | jq -r '.items[0] | [.spec.containers[].image,
	.spec.initContainers[].image] | unique | join(" ")')" "$pin" "registry: every container of the pod runs the pinned image"
like "$(k get pods -l "ssebench.run=$R1" -o json | jq -r '.items[0].status.containerStatuses[].imageID')" \
	"${pin#*@}" "registry: and the node pulled exactly that digest"
run_cmd ins "$SSEBENCH" runs inspect --json "$R1"
is "$(printf '%s\n' "$ins_out" | jq -r '.run_id, .task, .egress' | paste -sd' ')" \
	"$R1 $SMALL open" "runs inspect --json: the run, from its Job's annotations"
sleep 3
run_cmd lg "$SSEBENCH" runs logs "$R1"
like "$lg_out" "entrypoint: " "runs logs: the sandbox container's output"
run_cmd st "$SSEBENCH" runs stop --grace 2 "$R1"
is "$st_rc" 0 "runs stop: exit 0"
wait "$r1_pid"
r1_rc=$?
ok "$([ "$r1_rc" != 0 ]; echo $?)" "the stopped run's CLI exits non-zero ($r1_rc)"
like "$(cat "$SB_TMP/r1.out")" "Job .* (is gone|cannot run|ended .* before its results could be collected)" \
	"the stopped run's CLI says its pod ended, failed or is gone"
ok "$([ ! -f "$SSEBENCH_RESULTS/$SMALL/none/sleeper/$R1/result.json" ] ||
	[ "$(field "$SSEBENCH_RESULTS/$SMALL/none/sleeper/$R1/result.json" 'd["patch_result"]["status"]')" = error ]
	echo $?)" "the stopped run has no grade"
run_cmd gone "$SSEBENCH" runs remove "$R1"
is "$gone_rc" 3 "the stopped run's CLI deleted its objects (runs remove: exit 3, nothing there)"

R2=k8s-kill-$$
"$SSEBENCH" run --local "$SMALL_DATASET" --task "$SMALL" --agent dummy --egress open \
	--run-id "$R2" --timeout 900 >"$SB_TMP/r2.out" 2>&1 &
r2_pid=$!
for _ in $(seq 150); do
	grep -q "creating Job" "$SB_TMP/r2.out" && break
	sleep 1
done
sleep 2
kill -9 "$r2_pid"
wait "$r2_pid" 2>/dev/null
run_cmd ls2 "$SSEBENCH" runs list
like "$ls2_out" "^$R2 " "runs list: a run whose CLI was killed is still listed"
run_cmd rm "$SSEBENCH" runs remove "$R2"
is "$rm_rc" 0 "runs remove: exit 0"
run_cmd gone "$SSEBENCH" runs inspect "$R2"
is "$gone_rc" 3 "runs remove: the run is gone (runs inspect: exit 3)"
is "$(k get jobs,pods,networkpolicies,secrets -l "ssebench.run=$R2" -o name 2>&1)" "" \
	"runs remove: no Job, pod, NetworkPolicy or Secret of it is left"

# --- a job of 4 runs, 4 at a time --------------------------------------------------------------
SECONDS=0
run_cmd job "$SSEBENCH" run --local "$SMALL_DATASET" --task "$SMALL" --agent dummy --egress open \
	--attempts 4 --jobs 4 --timeout 900
took=$SECONDS
is "$job_rc" 0 "a job of 4 runs at --jobs 4 exits 0 ($took s)"
[ "$job_rc" = 0 ] || diag "$(printf '%s\n' "$job_err" | tail -n 30)"
jdir=$(ls -d "$SSEBENCH_RESULTS"/jobs/job-* 2>/dev/null | head -1)
is "$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1] + "/index.json"))
print(" ".join(sorted(s["state"] + ":" + s["status"] for s in d["slots"])))' "$jdir" 2>&1)" \
	"done:failed done:failed done:failed done:failed" "the job: 4 runs, each graded (dummy: failed)"
n=0
for d in $(python3 -c 'import json, sys; print(" ".join(s["dir"] for s in json.load(open(sys.argv[1]))["slots"]))' "$jdir/index.json" 2>/dev/null); do
	[ "$(field "$d/summary.json" 'd["scored"]')" = True ] && n=$((n + 1))
done
is "$n" 4 "the job: every run scored"
is "$(field "$jdir/job.json" 'd["options"]["backend"]')" kubernetes "job.json records the backend"

# --- the agent's disk use evicts its pod: a forfeit, not an error --------------------------------
run_cmd hog env SSEBENCH_DISK=256m "$SSEBENCH" run --json --local "$SMALL_DATASET" --task "$SMALL" \
	--agent hog --model none --egress open --timeout 900
hog_dir=$(printf '%s\n' "$hog_out" | jq -r '.results_dir // empty' 2>/dev/null)
is "$hog_rc" 0 "an agent that fills its home past the volume's size: graded (exit 0)"
[ "$hog_rc" = 0 ] || diag "$(printf '%s\n' "$hog_err" | tail -n 15)"
like "$hog_err" "evicted for the agent's disk use" "the eviction is said, as the agent's"
is "$(field "$hog_dir/result.json" '(d["patch_result"]["status"], d["scored"])')" "('forfeit', True)" \
	"the run is a forfeit, and counts"
like "$(field "$hog_dir/result.json" 'd["isolation"]["evicted"]')" 'EmptyDir volume "home"' \
	"result.json keeps the kubelet's message, naming the agent's volume"

# --- nothing left -------------------------------------------------------------------------------
is "$(k get jobs,pods,networkpolicies -o name 2>&1)" "" "no Job, pod or NetworkPolicy is left in the namespace"
is "$(k get secrets -o name 2>&1 | grep -c '^secret/sse-')" 0 "no run's Secret is left in the namespace"
run_cmd ls "$SSEBENCH" runs list --json
is "$(printf '%s\n' "$ls_out" | jq -r '.runs | length')" 0 "runs list --json: no run"

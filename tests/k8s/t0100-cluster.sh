#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/k8s/t0100-cluster.sh: the local single-node cluster of scripts/k8s-up, checked
# against its real API server, kubelet and containerd, and torn down with scripts/k8s-down.
#
#   - k8s-up brings it up (building the binaries when the cache is cold: ~10 minutes) and
#     the node is Ready; a second k8s-up changes nothing (same pids);
#   - an image tar imported with `k8s-up --import` runs as a Job that completes;
#   - a NetworkPolicy is accepted and stored by the API server, and not enforced (the
#     cluster has no plugin that enforces it: docs/kubernetes.md): a pod it forbids to reach
#     the bridge's address still does;
#   - deploy/k8s/rbac.yaml applies, and the runner's ServiceAccount token can create a Job,
#     a Secret and a NetworkPolicy in its namespace, read its pod's logs and exec into it,
#     but cannot list nodes, list Secrets, touch another namespace or grant itself roles;
#   - what k8s-up installs on the node for scored runs (tests/k8s/node-checks.sh): the
#     RuntimeClass ssebench masks the activity counters (and a pass-through wrapper, the
#     mutation, shows the check would see it did not; no masks.json, no pod), the Localhost
#     seccomp profile allows `unshare -U` where RuntimeDefault refuses it, and k8s-up's
#     runner.kubeconfig can create a Job in ssebench and cannot list nodes;
#   - k8s-down leaves no process, mount or network interface of the cluster, and the
#     host's iptables rules and the sysctls the kubelet cares about are what they were.
#
# The test ends with the cluster down, whether it was up before or not. No packet leaves
# the host: everything listens on loopback and the pods talk to nobody.
#
# Needs root. Skips when the cluster cannot be built or started, unless
# SSEBENCH_REQUIRE_K8S=1 or SSEBENCH_REQUIRE_DOCKER=1 (then it bails out).
# Environment: SB_SRCDIR, SSEBENCH_K8S_CACHE, SSEBENCH_K8S_STATE (see scripts/k8s/common.sh).

_here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib.sh disable=SC1091
. "$_here/../lib.sh"
[ "${SSEBENCH_K8S_TESTS:-1}" != 0 ] || skip_all "SSEBENCH_K8S_TESTS=0"

K8S_UP=$SB_SRCDIR/scripts/k8s-up
K8S_DOWN=$SB_SRCDIR/scripts/k8s-down
RBAC=$SB_SRCDIR/deploy/k8s/rbac.yaml
NS=t0100
RUNNER_NS=ssebench
RUNNER_SA=system:serviceaccount:$RUNNER_NS:ssebench-runner
TEST_IMAGE=localhost/ssebench/t0100-busybox:1
WAIT=120s
UP=0

if [ "$(id -u)" -ne 0 ]; then
	skip_all "needs root (the cluster's kubelet and containerd)"
fi
if [ ! -x "$K8S_UP" ] || [ ! -x "$K8S_DOWN" ]; then
	bail "scripts/k8s-up or scripts/k8s-down is missing"
fi

eval "$("$K8S_UP" --env)" || bail "k8s-up --env failed"
STATE=${SSEBENCH_K8S_STATE:-/var/lib/ssebench/k8s}
# k8s-up runs `ssebench k8s node-files`: the build's binary (a VPATH build has none in the
# source tree).
export SSEBENCH_BIN=${SSEBENCH_BIN:-$SSEBENCH}
# shellcheck source=node-checks.sh disable=SC1091
. "$_here/node-checks.sh"

sb_cleanup_hook() {
	if [ "$UP" = 1 ]; then
		"$K8S_DOWN" >"$SB_TMP/down-cleanup.log" 2>&1 || diag "cleanup: k8s-down failed"
	fi
	return 0
}

# host_snapshot FILE: what the cluster must not change: iptables rules (without counters,
# comments and the timestamps), and the sysctls the kubelet and the CNI bridge plugin
# would write.
host_snapshot() {
	{
		for t in iptables-save ip6tables-save; do
			command -v "$t" >/dev/null 2>&1 || continue
			echo "== $t"
			"$t" 2>/dev/null | sed -e '/^#/d' -e 's/ \[[0-9]*:[0-9]*\]$//'
		done
		echo "== sysctl"
		for s in net.ipv4.ip_forward vm.overcommit_memory vm.panic_on_oom kernel.panic \
			kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes \
			net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables; do
			printf '%s = %s\n' "$s" "$(sysctl -n "$s" 2>/dev/null)"
		done
	} >"$1"
}

# k ARGS...: kubectl as cluster-admin (KUBECONFIG of --env is the runner's).
k() {
	"$KUBECTL" --kubeconfig "$SSEBENCH_K8S_ADMIN_KUBECONFIG" --request-timeout=30s "$@"
}

# runner ARGS...: kubectl with the runner's ServiceAccount token only.
runner() {
	"$KUBECTL" --kubeconfig "$SB_TMP/runner.kubeconfig" --request-timeout=30s "$@"
}

# job NAME IMAGE COMMAND...: the manifest of a one-shot Job.
job() {
	local name=$1 image=$2 args=
	shift 2
	for a in "$@"; do args="$args${args:+, }\"$a\""; done
	cat <<-EOF
		apiVersion: batch/v1
		kind: Job
		metadata: {name: $name}
		spec:
		  backoffLimit: 0
		  activeDeadlineSeconds: 300
		  template:
		    spec:
		      restartPolicy: Never
		      automountServiceAccountToken: false
		      enableServiceLinks: false
		      terminationGracePeriodSeconds: 1
		      containers:
		      - name: main
		        image: $image
		        imagePullPolicy: Never
		        command: [$args]
	EOF
}

# can_i CLIENT VERB RESOURCE NAMESPACE|-: print yes or no.
can_i() {
	local client=$1 verb=$2 res=$3 ns=$4
	if [ "$ns" = - ]; then
		"$client" auth can-i "$verb" "$res" 2>/dev/null
	else
		"$client" auth can-i "$verb" "$res" -n "$ns" 2>/dev/null
	fi
	true
}

host_snapshot "$SB_TMP/host.before"

# ---------------------------------------------------------------------------------------
# 1-3. up, Ready, up again

t0=$(date +%s)
"$K8S_UP" >"$SB_TMP/up.log" 2>&1
rc=$?
if [ "$rc" != 0 ]; then
	diag "$(tail -n 30 "$SB_TMP/up.log")"
	"$K8S_DOWN" >/dev/null 2>&1
	if [ "${SSEBENCH_REQUIRE_K8S:-0}" = 1 ]; then
		bail "scripts/k8s-up failed (exit $rc)"
	fi
	skip_all "scripts/k8s-up could not bring the cluster up (exit $rc)"
fi
UP=1
plan 37
ok 0 "k8s-up brings the cluster up ($(($(date +%s) - t0)) s)"
diag "$(grep -E 'cache: (built|building)|ready' "$SB_TMP/up.log")"

out=$(k get node localhost -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status} {.status.nodeInfo.kubeletVersion} {.status.nodeInfo.containerRuntimeVersion}')
like "$out" '^True v1\.20\.2 containerd://' "node localhost is Ready (kubelet 1.20.2, containerd)"

pids_before=$(cat "$STATE"/run/*.pid 2>/dev/null | sort | paste -sd' ' -)
t0=$(date +%s)
"$K8S_UP" >"$SB_TMP/up2.log" 2>&1
rc=$?
pids_after=$(cat "$STATE"/run/*.pid 2>/dev/null | sort | paste -sd' ' -)
[ "$rc" = 0 ] && [ -n "$pids_before" ] && [ "$pids_before" = "$pids_after" ]
ok $? "a second k8s-up changes nothing (exit $rc, $(($(date +%s) - t0)) s, same 6 pids)"
[ "$rc" = 0 ] || diag "$(tail -n 10 "$SB_TMP/up2.log")"

# ---------------------------------------------------------------------------------------
# 4-7. an imported image runs as a Job; a NetworkPolicy is stored, not enforced

# The busybox image k8s-up built, renamed: a tar nobody imported yet.
mkdir -p "$SB_TMP/img"
tar -xf "$SSEBENCH_K8S_BUSYBOX_TAR" -C "$SB_TMP/img" &&
	sed -i "s|\"RepoTags\":\[\"[^\"]*\"\]|\"RepoTags\":[\"$TEST_IMAGE\"]|" "$SB_TMP/img/manifest.json" &&
	(cd "$SB_TMP/img" && tar -cf "$SB_TMP/t0100.tar" ./*)
"$K8S_UP" --import "$SB_TMP/t0100.tar" >"$SB_TMP/import.log" 2>&1
ok $? "k8s-up --import imports an image tar ($TEST_IMAGE)"

k create namespace "$NS" >/dev/null
# shellcheck disable=SC2016 # expanded in the pod
job hello "$TEST_IMAGE" sh -c 'echo hello from $(hostname)' | k apply -n "$NS" -f - >/dev/null
t0=$(date +%s)
k wait -n "$NS" --for=condition=complete "--timeout=$WAIT" job/hello >/dev/null 2>&1
rc=$?
out=$(k logs -n "$NS" job/hello 2>&1)
[ "$rc" = 0 ] && printf '%s\n' "$out" | grep -q '^hello from hello-'
ok $? "a Job of the imported image completes ($(($(date +%s) - t0)) s) and its log reads back"
[ "$rc" = 0 ] || diag "$(k describe -n "$NS" job/hello 2>&1 | tail -n 15)" "$out"

k apply -n "$NS" -f - >/dev/null 2>"$SB_TMP/np.err" <<-EOF
	apiVersion: networking.k8s.io/v1
	kind: NetworkPolicy
	metadata: {name: deny-all}
	spec:
	  podSelector: {matchLabels: {ssebench.run-id: t0100}}
	  policyTypes: [Ingress, Egress]
	  egress:
	  - to: [{ipBlock: {cidr: 0.0.0.0/0, except: [10.0.0.0/8, 169.254.0.0/16]}}]
EOF
out=$(k get networkpolicy -n "$NS" deny-all -o 'jsonpath={.spec.policyTypes} {.spec.egress[0].to[0].ipBlock.except}' 2>&1)
like "$out" 'Ingress.*Egress.*169\.254\.0\.0/16' "a NetworkPolicy is accepted and stored by the API server"
[ -s "$SB_TMP/np.err" ] && diag "$(cat "$SB_TMP/np.err")"

# Stored, not enforced: a pod the policy selects connects to the bridge's own address,
# which the policy's egress rule excludes (10.0.0.0/8). The API server there listens on
# loopback only, so the host answers with a reset: "refused" means the packet got through;
# a plugin that enforced the policy would drop it and nc would time out.
if [ -n "$(ip -4 -o addr show dev sse-k8s0 2>/dev/null)" ]; then
	k apply -n "$NS" -f - >/dev/null <<-EOF
		apiVersion: v1
		kind: Pod
		metadata: {name: probe, labels: {ssebench.run-id: t0100}}
		spec:
		  restartPolicy: Never
		  automountServiceAccountToken: false
		  enableServiceLinks: false
		  containers:
		  - name: main
		    image: $TEST_IMAGE
		    imagePullPolicy: Never
		    command: [sh, -c, "nc -w 3 10.244.0.1 6443 </dev/null; echo exit \$?"]
	EOF
	for _ in $(seq 1 60); do
		phase=$(k get pod -n "$NS" probe -o 'jsonpath={.status.phase}' 2>/dev/null)
		case $phase in Succeeded | Failed) break ;; esac
		sleep 0.5
	done
	out=$(k logs -n "$NS" probe 2>&1)
	like "$out" 'Connection refused' \
		"the policy is not enforced (as documented): the selected pod still reaches 10.244.0.1"
	diag "probe: $out"
else
	ok 0 "the policy is not enforced # SKIP the pod bridge has no gateway address (ip_forward off)"
fi

# ---------------------------------------------------------------------------------------
# 8-25. deploy/k8s/rbac.yaml and the runner's token

k apply -f "$RBAC" >"$SB_TMP/rbac.log" 2>&1
ok $? "deploy/k8s/rbac.yaml applies"
[ -s "$SB_TMP/rbac.log" ] && diag "$(cat "$SB_TMP/rbac.log")"

token=
for _ in $(seq 1 60); do
	token=$(k get secret -n "$RUNNER_NS" ssebench-runner-token -o 'jsonpath={.data.token}' 2>/dev/null | base64 -d 2>/dev/null)
	[ -n "$token" ] && break
	sleep 0.5
done
# Written by hand: Debian's kubectl 1.20 crashes in `config set-credentials` (the
# reflect2 bug k8s-up fixes in the binaries it builds; docs/kubernetes.md).
server=$(k config view --minify -o 'jsonpath={.clusters[0].cluster.server}')
ca=$(k config view --minify -o 'jsonpath={.clusters[0].cluster.certificate-authority}')
cat >"$SB_TMP/runner.kubeconfig" <<-EOF
	apiVersion: v1
	kind: Config
	clusters:
	- name: local
	  cluster: {server: "$server", certificate-authority: "$ca"}
	users:
	- name: runner
	  user: {token: "$token"}
	contexts:
	- name: local
	  context: {cluster: local, user: runner, namespace: $RUNNER_NS}
	current-context: local
EOF
[ -n "$token" ] || diag "no token in Secret $RUNNER_NS/ssebench-runner-token"

out=$(can_i runner create jobs.batch "$RUNNER_NS")
is "$out" yes "the runner's token may create Jobs in $RUNNER_NS"

job runner-job "$SSEBENCH_K8S_BUSYBOX_IMAGE" sh -c 'echo ready; sleep 300' |
	runner apply -f - >"$SB_TMP/runner-job.log" 2>&1
ok $? "with the token: a Job is created in $RUNNER_NS"
[ -s "$SB_TMP/runner-job.log" ] && diag "$(cat "$SB_TMP/runner-job.log")"

runner create secret generic run-secret --from-literal=key=value >/dev/null 2>"$SB_TMP/secret.err" &&
	runner apply -f - >/dev/null 2>>"$SB_TMP/secret.err" <<-EOF
		apiVersion: networking.k8s.io/v1
		kind: NetworkPolicy
		metadata: {name: run-policy}
		spec: {podSelector: {}, policyTypes: [Ingress, Egress]}
	EOF
ok $? "with the token: a Secret and a NetworkPolicy are created in $RUNNER_NS"
[ -s "$SB_TMP/secret.err" ] && diag "$(cat "$SB_TMP/secret.err")"

pod=
for _ in $(seq 1 120); do
	pod=$(runner get pods -l job-name=runner-job --field-selector=status.phase=Running \
		-o 'jsonpath={.items[0].metadata.name}' 2>/dev/null)
	[ -n "$pod" ] && break
	sleep 0.5
done
out=$(runner logs "$pod" 2>&1)
is "$out" ready "with the token: the Job's pod runs and its log reads back"
# shellcheck disable=SC2016 # expanded in the pod
out=$(runner exec "$pod" -- sh -c 'echo exec in $(hostname)' 2>&1)
is "$out" "exec in $pod" "with the token: exec into the pod (API server to kubelet on loopback)"

# What the token must not do. "-": a cluster-scoped resource.
for check in "list nodes -" "get nodes -" "list secrets $RUNNER_NS" "list secrets default" \
	"get secrets kube-system" "create jobs.batch default" "create rolebindings $RUNNER_NS" \
	"create pods $RUNNER_NS"; do
	# shellcheck disable=SC2086 # verb, resource, namespace
	set -- $check
	where="in $3"
	[ "$3" = - ] && where="(cluster-wide)"
	is "$(can_i runner "$1" "$2" "$3")" no "the runner's token cannot $1 $2 $where"
done
out=$(runner get secrets 2>&1)
like "$out" 'forbidden' "with the token: listing Secrets in $RUNNER_NS is refused by the API server"

# The same answers through impersonation, as an administrator checks a deployment.
is "$(k auth can-i create jobs.batch -n "$RUNNER_NS" --as="$RUNNER_SA" 2>/dev/null)" yes \
	"kubectl auth can-i create jobs -n $RUNNER_NS --as=$RUNNER_SA: yes"
is "$(k auth can-i list nodes --as="$RUNNER_SA" 2>/dev/null)" no \
	"kubectl auth can-i list nodes --as=$RUNNER_SA: no"
is "$(k auth can-i list secrets -n kube-system --as="$RUNNER_SA" 2>/dev/null)" no \
	"kubectl auth can-i list secrets -n kube-system --as=$RUNNER_SA: no"

# ---------------------------------------------------------------------------------------
# 26-34. the node's part of a scored run (tests/k8s/node-checks.sh)

node_checks "$NS" "$TEST_IMAGE"

# The pod's host-side network interface, to look for after k8s-down.
VETHS=$(ip -o link show master sse-k8s0 2>/dev/null | awk -F': ' '{ print $2 }' | sed 's/@.*//' | paste -sd' ' -)
diag "pod interfaces on sse-k8s0: ${VETHS:-none}"

# ---------------------------------------------------------------------------------------
# 35-37. down, and nothing left

t0=$(date +%s)
"$K8S_DOWN" >"$SB_TMP/down.log" 2>&1
rc=$?
UP=0
ok $rc "k8s-down stops the cluster ($(($(date +%s) - t0)) s)"
[ "$rc" = 0 ] || diag "$(tail -n 15 "$SB_TMP/down.log")"

left=
for p in /proc/[0-9]*; do
	p=${p#/proc/}
	exe=$(readlink "/proc/$p/exe" 2>/dev/null) || continue
	case ${exe##*/} in
	etcd | kube-* | kubelet | containerd | containerd-shim* | pause)
		tr '\0' ' ' <"/proc/$p/cmdline" | grep -qF "$STATE/" && left="$left $p:${exe##*/}" ;;
	esac
	grep -q ':/kubepods' "/proc/$p/cgroup" 2>/dev/null && left="$left $p:${exe##*/}"
done
mounts=$(awk -v s="$STATE/" 'index($2, s) == 1 { print $2 }' /proc/self/mounts)
links=
ip link show sse-k8s0 >/dev/null 2>&1 && links=sse-k8s0
for v in $VETHS; do
	ip link show "$v" >/dev/null 2>&1 && links="$links $v"
done
is "${left:-none} | ${mounts:-none} | ${links:-none}" "none | none | none" \
	"no process, mount or network interface of the cluster is left"
diag "$(pgrep -a 'kube|etcd|containerd' || echo 'pgrep kube|etcd|containerd: nothing')"

host_snapshot "$SB_TMP/host.after"
out=$(diff "$SB_TMP/host.before" "$SB_TMP/host.after")
is "$out" "" "iptables rules and the kernel settings are as before k8s-up"

done_testing

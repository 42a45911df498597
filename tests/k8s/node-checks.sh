#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/k8s/node-checks.sh: what scripts/k8s-up installs on the node for a scored run,
# checked with real pods (sourced by tests/k8s/t0100-cluster.sh; by hand against a running
# cluster: tests/k8s/node-checks.sh --run NAMESPACE, which creates and deletes that
# namespace and touches nothing else, except that its mutation checks swap the runtime
# handler's wrapper and masks.json for a few seconds each and put them back).
#
#   - a pod of RuntimeClass ssebench sees /proc/diskstats and every directory of
#     masks.json empty; a pod without it sees /proc/diskstats; with the wrapper made a
#     plain pass-through (the mutation) the same check fails; without masks.json the
#     handler refuses to create the pod, and says why in its events;
#   - the Localhost seccomp profile ssebench.json lets a pod `unshare -U true`, which
#     RuntimeDefault refuses;
#   - runner.kubeconfig (KUBECONFIG of `k8s-up --env`) may create a Job in ssebench (a
#     server-side dry run: nothing is stored) and may not list nodes.
#
# Needs: lib.sh's TAP functions; k (kubectl as cluster-admin); the variables of
# `k8s-up --env`; STATE (the cluster's state directory). node_checks NS IMAGE adds 9 checks.

# node_pod NS NAME RUNTIMECLASS SECCOMP SCRIPT ARGS...: the JSON of a one-shot pod running
# `sh -c SCRIPT sh ARGS...` (RUNTIMECLASS or SECCOMP "-": none).
node_pod() {
	local ns=$1 name=$2 rc=$3 sc=$4 script=$5
	shift 5
	jq -n --arg ns "$ns" --arg name "$name" --arg rc "$rc" --arg sc "$sc" --arg img "$NODE_IMAGE" \
		--arg script "$script" '$ARGS.positional as $a | {
		apiVersion: "v1", kind: "Pod",
		metadata: {name: $name, namespace: $ns},
		spec: ({
			restartPolicy: "Never", automountServiceAccountToken: false,
			enableServiceLinks: false, terminationGracePeriodSeconds: 1,
			containers: [{name: "main", image: $img, imagePullPolicy: "Never",
				command: (["sh", "-c", $script, "sh"] + $a),
				securityContext: (if $sc == "-" then {} elif $sc == "RuntimeDefault"
					then {seccompProfile: {type: "RuntimeDefault"}}
					else {seccompProfile: {type: "Localhost", localhostProfile: $sc}} end)}]
		} + (if $rc == "-" then {} else {runtimeClassName: $rc} end))}' --args "$@"
}

# node_run NS NAME RUNTIMECLASS SECCOMP SCRIPT ARGS...: run the pod to its end (60 s at
# most) and print its log; the pod is deleted.
node_run() {
	local ns=$1 name=$2 phase=
	node_pod "$@" | k apply -f - >/dev/null || return 1
	for _ in $(seq 1 120); do
		phase=$(k get pod -n "$ns" "$name" -o 'jsonpath={.status.phase}' 2>/dev/null)
		case $phase in Succeeded | Failed) break ;; esac
		sleep 0.5
	done
	k logs -n "$ns" "$name" 2>&1
	[ -n "$phase" ] || echo "(pod $name: no phase)"
	k delete pod -n "$ns" "$name" --wait=false >/dev/null 2>&1
	return 0
}

# What the pod prints for each path: "PATH N" (entries of a directory, bytes of a file) or
# "PATH absent".
# shellcheck disable=SC2016 # expanded in the pod
NODE_COUNT='for p in "$@"; do
	if [ -d "$p" ]; then echo "$p $(ls -A "$p" | wc -l)";
	elif [ -e "$p" ]; then echo "$p $(wc -c <"$p")";
	else echo "$p absent"; fi
done'

# node_unmasked LOG: the lines of LOG for a path that is there and not empty.
node_unmasked() {
	printf '%s\n' "$1" | awk '$NF != "0" && $NF != "absent"'
}

node_checks() {
	local ns=$1 out bad wrapper=$STATE/bin/ssebench-runc masks=$STATE/node/masks.json msg
	local -a paths
	NODE_IMAGE=$2
	mapfile -t paths < <(jq -r '.[]' "$masks" 2>/dev/null)

	# The masks, with and without the runtime handler.
	out=$(node_run "$ns" masked ssebench - "$NODE_COUNT" "${paths[@]}")
	bad=$(node_unmasked "$out")
	[ "${#paths[@]}" -gt 0 ] && [ -z "$bad" ] && printf '%s\n' "$out" | grep -q '^/proc/diskstats 0$'
	ok $? "RuntimeClass ssebench: /proc/diskstats and the ${#paths[@]} paths of masks.json are empty in the pod"
	[ -z "$bad" ] || diag "not masked:" "$bad"
	out=$(node_run "$ns" plain - - "$NODE_COUNT" /proc/diskstats)
	like "$out" '^/proc/diskstats [1-9][0-9]*$' "without the RuntimeClass the pod reads /proc/diskstats"

	# The mutation: the wrapper as a plain pass-through to runc; the same check must fail.
	cp -p "$wrapper" "$SB_TMP/ssebench-runc.saved"
	printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v runc)" >"$wrapper.tmp" && chmod 755 "$wrapper.tmp" &&
		mv -f "$wrapper.tmp" "$wrapper"
	out=$(node_run "$ns" mutant ssebench - "$NODE_COUNT" "${paths[@]}")
	mv -f "$SB_TMP/ssebench-runc.saved" "$wrapper"
	bad=$(node_unmasked "$out")
	[ -n "$bad" ]
	ok $? "the check sees it when the wrapper does not merge the masks (mutation: $(printf '%s\n' "$bad" | wc -l) paths readable)"

	# Fail closed: no masks.json, no pod, and the reason in its events.
	mv -f "$masks" "$masks.t0100"
	node_pod "$ns" nomasks ssebench - 'echo ran' | k apply -f - >/dev/null
	msg=
	for _ in $(seq 1 60); do
		msg=$(k get events -n "$ns" --field-selector involvedObject.name=nomasks \
			-o 'jsonpath={.items[*].message}' 2>/dev/null)
		case $msg in *ssebench-runc:*) break ;; esac
		sleep 0.5
	done
	mv -f "$masks.t0100" "$masks"
	out=$(k get pod -n "$ns" nomasks -o 'jsonpath={.status.phase}' 2>&1)
	k delete pod -n "$ns" nomasks --wait=false >/dev/null 2>&1
	[ "$out" != Succeeded ] && [ "$out" != Running ] && printf '%s' "$msg" | grep -q 'cannot read .*masks.json'
	ok $? "without masks.json the handler refuses the pod, and its events say why (phase $out)"
	diag "events: $(printf '%s' "$msg" | grep -o 'ssebench-runc: [^;]*' | head -n 1)"

	# The seccomp profile: unshare allowed by ours, refused by the runtime's default.
	if busybox_has unshare; then
		out=$(node_run "$ns" scmp-local - "$SSEBENCH_K8S_SECCOMP" 'unshare -U true; echo "unshare $?"')
		like "$out" '^unshare 0$' "seccomp Localhost $SSEBENCH_K8S_SECCOMP: unshare -U true works"
		out=$(node_run "$ns" scmp-default - RuntimeDefault 'unshare -U true 2>&1; echo "unshare $?"')
		like "$out" '^unshare [1-9]' "seccomp RuntimeDefault: unshare -U true is refused"
		diag "RuntimeDefault: $out"
	else
		ok 0 "seccomp Localhost: unshare # SKIP the test image has no unshare"
		ok 0 "seccomp RuntimeDefault: unshare # SKIP the test image has no unshare"
	fi

	# runner.kubeconfig: a Job in ssebench (dry run on the server: authorised, admitted, not
	# stored), no nodes.
	out=$(jq -n --arg img "$NODE_IMAGE" '{apiVersion: "batch/v1", kind: "Job",
		metadata: {name: "node-checks-dry-run"},
		spec: {template: {spec: {restartPolicy: "Never", containers: [{name: "main",
			image: $img, command: ["true"]}]}}}}' |
		"$KUBECTL" --kubeconfig "$KUBECONFIG" --request-timeout=30s create --dry-run=server -f - 2>&1)
	like "$out" 'node-checks-dry-run created \(server dry run\)' \
		"runner.kubeconfig may create a Job in $SSEBENCH_K8S_NAMESPACE"
	out=$("$KUBECTL" --kubeconfig "$KUBECONFIG" --request-timeout=30s get nodes 2>&1)
	like "$out" 'forbidden' "runner.kubeconfig may not list nodes"
	is "$(grep -c 'token:' "$KUBECONFIG" 2>/dev/null):$(stat -c %a "$KUBECONFIG" 2>/dev/null)" "1:600" \
		"runner.kubeconfig holds one token and is 0600"
}

# busybox_has APPLET: the test image's busybox has APPLET (the cluster builds it from
# Debian's busybox-static).
busybox_has() {
	local b=${SSEBENCH_K8S_CACHE:-/var/cache/ssebench/k8s}/root/bin/busybox
	[ -x "$b" ] && "$b" --list | grep -qx "$1"
}

# By hand: tests/k8s/node-checks.sh --run NAMESPACE
if [ "${1-}" = --run ] && [ -n "${2-}" ]; then
	_here=$(cd "$(dirname "$0")" && pwd)
	# shellcheck source=../lib.sh disable=SC1091
	. "$_here/../lib.sh"
	set -a
	eval "$("$SB_SRCDIR/scripts/k8s-up" --env)" || bail "k8s-up --env failed"
	set +a
	STATE=${SSEBENCH_K8S_STATE:-/var/lib/ssebench/k8s}
	k() {
		"$KUBECTL" --kubeconfig "$SSEBENCH_K8S_ADMIN_KUBECONFIG" --request-timeout=30s "$@"
	}
	NODE_NS=$2
	sb_cleanup_hook() {
		k delete namespace "$NODE_NS" --wait=false >/dev/null 2>&1
		return 0
	}
	plan_lazy
	k create namespace "$NODE_NS" >/dev/null || bail "cannot create namespace $NODE_NS"
	node_checks "$NODE_NS" "$SSEBENCH_K8S_BUSYBOX_IMAGE"
	done_testing
fi

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The manifests of a run on Kubernetes (src/ssebench/k8s.c), through kubectl with no API
# server: the kubeconfig points at a closed loopback port, so nothing here reaches a
# cluster. `kubectl create --dry-run=client` cannot run that way (it asks the server which
# resources exist), so two commands that work on files alone stand in for it:
#  - `kubectl annotate --local` reads all three objects (NetworkPolicy, Secret, Job) and
#    writes them back: each must come back as written, plus the one annotation;
#  - `kubectl set image --local` decodes the Job into Kubernetes' own typed batch/v1 Job
#    and encodes it again: a field kubectl does not know (misspelled, or in the wrong
#    place) is dropped and a value of the wrong type is refused, so a Job that comes back
#    whole has only fields of the API, with the right types. A misspelled field shows the
#    check sees a dropped one.
# What only a server checks (names, label values and CIDRs by its validation, the
# NetworkPolicy's and the Secret's fields by type) is not checked here: test-k8s checks the
# names and labels itself.
# kubectl: $KUBECTL, else the local cluster's (docs/kubernetes.md), else the PATH's.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

helper=${SB_BUILDDIR:-.}/tests/helpers/sb-k8s-manifests
kubectl=${KUBECTL:-}
cache=${SSEBENCH_K8S_CACHE:-/var/cache/ssebench/k8s}
if [ -z "$kubectl" ] && [ -x "$cache/root/usr/bin/kubectl" ]; then
	kubectl=$cache/root/usr/bin/kubectl
fi
if [ -z "$kubectl" ]; then
	kubectl=$(command -v kubectl 2>/dev/null) || kubectl=
fi
# kubectl is not part of what scripts/setup installs (Debian's is 1.20, behind the API this
# reads): without one the suite is skipped, and that is not the missing Docker that
# SSEBENCH_REQUIRE_DOCKER turns into a failure.
if [ -z "$kubectl" ] || [ ! -x "$kubectl" ]; then
	printf '1..0 # SKIP no kubectl (set KUBECTL, or scripts/k8s-up)\n'
	exit 0
fi
command -v jq >/dev/null 2>&1 || bail "needs jq (scripts/setup installs it)"
[ -x "$helper" ] || bail "no $helper (make check builds it)"

# A kubeconfig of a server that is not there: port 9 on loopback, a token so that kubectl
# does not ask for a user name.
export KUBECONFIG=$SB_TMP/kubeconfig
cat >"$KUBECONFIG" <<'EOF'
apiVersion: v1
kind: Config
clusters:
- name: offline
  cluster:
    server: https://127.0.0.1:9
users:
- name: offline
  user:
    token: offline
contexts:
- name: offline
  context:
    cluster: offline
    user: offline
    namespace: ssebench
current-context: offline
EOF
export HOME=$SB_TMP # kubectl's cache of the (absent) server stays here

plan 16

# typed FILE: the Job in FILE through kubectl's typed decoding, with the image it changes
# put back and what it adds taken away (creationTimestamp, status). hostIPC, hostNetwork
# and hostPID are plain booleans in the API: false is their default, which kubectl omits.
typed() {
	local img
	img=$(jq -r '.spec.template.spec.containers[0].image' "$1")
	"$kubectl" set image --local -f "$1" "sandbox=round-trip.invalid/x:1" -o json |
		jq -S --arg i "$img" 'del(.metadata.creationTimestamp,
			.spec.template.metadata.creationTimestamp, .status) |
			.spec.template.spec.containers[0].image = $i'
}

# as_written FILE: the Job as typed() should give it back.
as_written() {
	jq -S '.spec.template.spec |= with_entries(select(
		(.key | IN("hostIPC", "hostNetwork", "hostPID") | not) or .value != false))' "$1"
}

for run in dummy reference open; do
	"$helper" "$run" >"$SB_TMP/$run.json"
	ok $? "$run: the helper writes the manifests"

	"$kubectl" annotate --local -f "$SB_TMP/$run.json" ssebench.test/round-trip=1 -o json \
		>"$SB_TMP/$run.annotated" 2>"$SB_TMP/$run.err"
	rc=$?
	ok $rc "$run: kubectl reads the three objects with no server"
	[ $rc = 0 ] || diag "$(cat "$SB_TMP/$run.err")"
	jq -S -s 'map(del(.metadata.annotations["ssebench.test/round-trip"]))' \
		"$SB_TMP/$run.annotated" >"$SB_TMP/$run.back"
	jq -S '.items' "$SB_TMP/$run.json" >"$SB_TMP/$run.items"
	cmp -s "$SB_TMP/$run.back" "$SB_TMP/$run.items"
	rc=$?
	ok $rc "$run: the NetworkPolicy, Secret and Job come back as written"
	[ $rc = 0 ] || diag "$(diff "$SB_TMP/$run.items" "$SB_TMP/$run.back" | head -20)"

	jq '.items[] | select(.kind == "Job")' "$SB_TMP/$run.json" >"$SB_TMP/$run.job"
	typed "$SB_TMP/$run.job" >"$SB_TMP/$run.typed" 2>"$SB_TMP/$run.err"
	as_written "$SB_TMP/$run.job" >"$SB_TMP/$run.want"
	if [ -s "$SB_TMP/$run.typed" ] && cmp -s "$SB_TMP/$run.typed" "$SB_TMP/$run.want"; then
		ok 0 "$run: every field of the Job is one of batch/v1's, with its type"
	else
		ok 1 "$run: every field of the Job is one of batch/v1's, with its type"
		diag "$(cat "$SB_TMP/$run.err"; diff "$SB_TMP/$run.want" "$SB_TMP/$run.typed" | head -20)"
	fi
done

# The check has teeth: a misspelled field is dropped, a wrong type refused.
jq '.spec.template.spec.automountServiceAcountToken = false' "$SB_TMP/dummy.job" >"$SB_TMP/bad.job"
typed "$SB_TMP/bad.job" >"$SB_TMP/bad.typed" 2>/dev/null
as_written "$SB_TMP/bad.job" >"$SB_TMP/bad.want"
! cmp -s "$SB_TMP/bad.typed" "$SB_TMP/bad.want"
ok $? "a misspelled field of the pod is seen to be dropped"
jq '.spec.backoffLimit = "0"' "$SB_TMP/dummy.job" >"$SB_TMP/bad2.job"
run_cmd t "$kubectl" set image --local -f "$SB_TMP/bad2.job" "sandbox=x:1" -o json
[ "$t_rc" != 0 ]
ok $? "a value of the wrong type is refused"

# No object carries a secret in the clear: the Secret's data is base64 of the text.
jq -r '.items[] | select(.kind == "Secret") | .data["run.env"]' "$SB_TMP/dummy.json" |
	base64 -d | grep -q '^SSE_DAEMON_TOKEN=' && ! grep -q 'SSE_DAEMON_TOKEN' "$SB_TMP/dummy.json"
ok $? "the secrets file is in the Secret, base64, and nowhere else"

# What the two kubectl commands must not have done: reach for a server.
[ ! -e "$SB_TMP/.kube/cache/discovery" ] || [ -z "$(ls -A "$SB_TMP/.kube/cache/discovery")" ]
ok $? "kubectl asked no server"

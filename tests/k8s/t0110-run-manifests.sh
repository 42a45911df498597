#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/k8s/t0110-run-manifests.sh: the manifests of a run (src/ssebench/k8s.c, through
# tests/helpers/sb-k8s-manifests) against the local cluster's real API server and kubelet.
#
#   - `kubectl create --dry-run=server` accepts the dummy, reference and open-egress runs'
#     objects: the server validates names, label values, CIDRs, quantities and every field,
#     and each field written comes back with its value (the one exception:
#     ttlSecondsAfterFinished, dropped by a 1.20 server whose TTLAfterFinished feature is
#     off, its default);
#   - the reference run, with busybox for the agent image (the init containers' cp and
#     chmod are busybox's), a shell that reports instead of the entrypoint and a collect
#     container that ends at once (the backend deletes the Job instead), completes,
#     and inside its pod: the secrets file and the patch are regular files (not the links
#     of a Secret volume), root's, 0400 and 0444; every volume has the mode the Docker
#     backend's directory has; the capability sets are exactly CHOWN, DAC_OVERRIDE, FOWNER,
#     KILL, SETGID, SETUID and SETPCAP (0x1eb); no_new_privs is set; seccomp filters; the
#     root is read-only; there is no service-account token.
#
# The objects go to a namespace of the test's own, deleted at the end; the cluster is
# stopped afterwards if the test started it. Needs root and a built cluster cache (see
# t0100); skips otherwise, unless SSEBENCH_REQUIRE_K8S=1 or SSEBENCH_REQUIRE_DOCKER=1.
# Environment: SB_SRCDIR, SB_BUILDDIR, SSEBENCH_K8S_CACHE, SSEBENCH_K8S_STATE.

_here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib.sh disable=SC1091
. "$_here/../lib.sh"
[ "${SSEBENCH_K8S_TESTS:-1}" != 0 ] || skip_all "SSEBENCH_K8S_TESTS=0"

K8S_UP=$SB_SRCDIR/scripts/k8s-up
K8S_DOWN=$SB_SRCDIR/scripts/k8s-down
HELPER=${SB_BUILDDIR:-$SB_SRCDIR}/tests/helpers/sb-k8s-manifests
NS=t0110
WAS_UP=1
UP=0

[ "$(id -u)" -eq 0 ] || skip_all "needs root (the cluster's kubelet and containerd)"
[ -x "$HELPER" ] || bail "no $HELPER (make check builds it)"
command -v jq >/dev/null 2>&1 || skip_all "needs jq"
set -a
eval "$("$K8S_UP" --env)" || bail "k8s-up --env failed"
set +a

k() {
	"$KUBECTL" --kubeconfig "$SSEBENCH_K8S_ADMIN_KUBECONFIG" --request-timeout=30s "$@"
}

sb_cleanup_hook() {
	if [ "$UP" = 1 ]; then
		k delete namespace "$NS" --wait=true >/dev/null 2>&1
		[ "$WAS_UP" = 1 ] || "$K8S_DOWN" >"$SB_TMP/down.log" 2>&1 || diag "k8s-down failed"
	fi
	return 0
}

k get --raw /readyz >/dev/null 2>&1 || WAS_UP=0
if ! "$K8S_UP" >"$SB_TMP/up.log" 2>&1; then
	diag "$(tail -n 20 "$SB_TMP/up.log")"
	[ "$WAS_UP" = 1 ] || "$K8S_DOWN" >/dev/null 2>&1
	[ "${SSEBENCH_REQUIRE_K8S:-0}" = 1 ] && bail "scripts/k8s-up failed"
	skip_all "scripts/k8s-up could not bring the cluster up"
fi
UP=1
plan 18
"$K8S_UP" --import "$SSEBENCH_K8S_BUSYBOX_TAR" >"$SB_TMP/import.log" 2>&1 ||
	bail "k8s-up --import of busybox failed"
k create namespace "$NS" >/dev/null || bail "cannot create namespace $NS"

# kept WANT GOT: the paths of WANT (a JSON value) that GOT does not hold with the same
# value, as JSON lines. Objects: every key (a false or an empty list may be left out, as
# the defaults they are); lists: the same length, element by element.
kept() {
	jq -n -c --slurpfile w "$1" --slurpfile g "$2" '
		def miss($a; $b; $p):
			if ($a | type) == "object" then
				if ($b | type) != "object" then [$p] else
				[$a | to_entries[] | .key as $k | .value as $v |
				 if ($b | has($k)) then miss($v; $b[$k]; $p + [$k])
				 elif $v == false or $v == [] then empty else [$p + [$k]] end] | add // []
				end
			elif ($a | type) == "array" then
				if ($b | type) != "array" or ($a | length) != ($b | length) then [$p]
				else [range($a | length) as $i | miss($a[$i]; $b[$i]; $p + [$i])]
					| add // [] end
			elif $a == $b then [] else [$p] end;
		miss($w[0].items; $g[0].items; ["items"]) | .[]'
}

for run in dummy reference open; do
	"$HELPER" "$run" | jq --arg ns "$NS" '.items |= map(.metadata.namespace = $ns)' \
		>"$SB_TMP/$run.json"
	k create --dry-run=server -f "$SB_TMP/$run.json" -o json >"$SB_TMP/$run.server" \
		2>"$SB_TMP/$run.err"
	rc=$?
	ok $rc "$run: the API server accepts the NetworkPolicy, Secret and Job"
	[ $rc = 0 ] || diag "$(cat "$SB_TMP/$run.err")"
	jq -s '{items: [.[] | if .kind == "List" then .items[] else . end]}' \
		"$SB_TMP/$run.server" >"$SB_TMP/$run.got"
	kept "$SB_TMP/$run.json" "$SB_TMP/$run.got" |
		grep -v '^\["items",2,"spec","ttlSecondsAfterFinished"\]$' >"$SB_TMP/$run.missing"
	[ ! -s "$SB_TMP/$run.missing" ]
	ok $? "$run: every field written is kept, with its value"
	[ ! -s "$SB_TMP/$run.missing" ] || diag "$(head -10 "$SB_TMP/$run.missing")"
done

# The reference run's pod, with busybox for the image and a report for the entrypoint.
report='stat -c "%n %a %u:%g %F" /run/ssebench-secrets/run.env /reference/patch.diff /run \
	/tmp /var/tmp /tmp/sse-archive /home/model /src/cjson /var/lib/ssebench-runner \
	/var/lib/ssebench-daemon /var/lib/ssebench/results
grep -E "^(CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):" /proc/self/status
touch /root-write 2>/dev/null && echo root writable
[ -e /var/run/secrets/kubernetes.io ] && echo token mounted
true'
jq --arg img "$SSEBENCH_K8S_BUSYBOX_IMAGE" --arg report "$report" '
	.items |= map(if .kind != "Job" then . else
		.spec.template.spec |= (
			(.initContainers, .containers) |= map(.image = $img | .imagePullPolicy = "Never"
				| .resources = {limits: {cpu: "100m", memory: "64Mi",
					"ephemeral-storage": "256Mi"}, requests: {cpu: "100m",
					memory: "64Mi", "ephemeral-storage": "256Mi"}})
			| .initContainers |= map(if .command[0] == "/bin/cp" then .command[3] = "/etc/."
				else . end)
			| .containers[0].command = ["/bin/sh", "-c", $report]
			| .containers[1].command = ["/bin/true"]) end)' \
	"$SB_TMP/reference.json" >"$SB_TMP/live.json"
job=$(jq -r '.items[] | select(.kind == "Job") | .metadata.name' "$SB_TMP/live.json")
k create -f "$SB_TMP/live.json" >/dev/null
ok $? "the reference run's objects are created"
k -n "$NS" wait --for=condition=complete "job/$job" --timeout=120s >/dev/null 2>&1
rc=$?
ok $rc "its Job completes (nine init containers, then the two containers)"
[ $rc = 0 ] || diag "$(k -n "$NS" describe "job/$job" | tail -15)"
k -n "$NS" logs "job/$job" -c sandbox --tail=-1 >"$SB_TMP/report" 2>&1
diag "$(cat "$SB_TMP/report")"

while read -r path want; do
	grep -qxF "$path $want" "$SB_TMP/report"
	ok $? "$path: $want"
done <<'EOF'
/run/ssebench-secrets/run.env 400 0:0 regular file
/reference/patch.diff 444 0:0 regular file
/tmp 1777 0:0 directory
/var/tmp 1777 0:0 directory
/var/lib/ssebench-runner 710 0:0 directory
/var/lib/ssebench-daemon 711 0:0 directory
EOF
grep -qx 'CapEff:	00000000000001eb' "$SB_TMP/report" &&
	grep -qx 'CapBnd:	00000000000001eb' "$SB_TMP/report" &&
	grep -qx 'CapAmb:	0000000000000000' "$SB_TMP/report"
ok $? "capabilities: CHOWN DAC_OVERRIDE FOWNER KILL SETGID SETUID SETPCAP, nothing else"
grep -qx 'NoNewPrivs:	1' "$SB_TMP/report" && grep -qx 'Seccomp:	2' "$SB_TMP/report"
ok $? "no_new_privs set, seccomp filtering"
! grep -q 'root writable' "$SB_TMP/report"
ok $? "the root file system is read-only"
! grep -q 'token mounted' "$SB_TMP/report"
ok $? "no service-account token"

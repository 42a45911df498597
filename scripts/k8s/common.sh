# SPDX-License-Identifier: Apache-2.0
# scripts/k8s/common.sh: settings, paths and helpers shared by scripts/k8s-up and
# scripts/k8s-down (sourced, not run). See docs/kubernetes.md.
#
# Settings (environment):
#   SSEBENCH_K8S_CACHE    built binaries, Debian packages and source, Go build cache
#                         (default /var/cache/ssebench/k8s; kept by k8s-down)
#   SSEBENCH_K8S_STATE    the running cluster: certificates, kubeconfigs, etcd data,
#                         containerd root and state, kubelet directory, logs, pid files
#                         (default /var/lib/ssebench/k8s; k8s-down empties it but keeps
#                         the certificates, --purge removes it)
#   SSEBENCH_K8S_MIRROR   Debian mirror for `apt-get source` (default: the host's apt
#                         source for bookworm, else http://deb.debian.org/debian)
#   SSEBENCH_K8S_TIMEOUT  seconds to wait for each component and for the node to be
#                         Ready (default 180)
#   SSEBENCH_K8S_LOCK     lock file (default /run/lock/ssebench-k8s.lock)

K8S_CACHE=${SSEBENCH_K8S_CACHE:-/var/cache/ssebench/k8s}
K8S_STATE=${SSEBENCH_K8S_STATE:-/var/lib/ssebench/k8s}
K8S_TIMEOUT=${SSEBENCH_K8S_TIMEOUT:-180}
K8S_LOCK=${SSEBENCH_K8S_LOCK:-/run/lock/ssebench-k8s.lock}
K8S_CACHE=${K8S_CACHE%/}
K8S_STATE=${K8S_STATE%/}

# Fixed layout of the cluster. Everything listens on loopback only; the pod network is one
# bridge with host-local addresses and no masquerading, so nothing here adds iptables
# rules or changes a sysctl (see docs/kubernetes.md).
K8S_VERSION=v1.20.2
K8S_COMMIT=faecb196815e248d3ecfb03c680a4507229c2a56   # the v1.20.2 tag upstream
K8S_NODE=localhost            # node name; the API server reaches the kubelet by this name
K8S_BRIDGE=sse-k8s0           # the pod bridge (outside docker-up's guarded sse-int* prefix)
K8S_CNI_NET=ssebench-k8s      # CNI network name
K8S_POD_SUBNET=10.244.0.0/24
K8S_GATEWAY=10.244.0.1        # the bridge's address; also the API server's advertised one
K8S_SERVICE_RANGE=10.96.0.0/16
K8S_SERVICE_IP=10.96.0.1
K8S_API_PORT=6443
K8S_ETCD_PORT=12379           # not 2379: a Debian etcd-server package may own that one
K8S_ETCD_PEER_PORT=12380
K8S_CM_PORT=10257
K8S_SCHED_PORT=10259
K8S_KUBELET_PORT=10250
K8S_KUBELET_HEALTH_PORT=10248
K8S_PAUSE_IMAGE=localhost/ssebench/pause:3.2
K8S_BUSYBOX_IMAGE=localhost/ssebench/busybox:k8s

# Paths
K8S_BIN=$K8S_CACHE/bin                        # kube-apiserver ... kubelet, pause
K8S_ROOT=$K8S_CACHE/root                      # Debian packages unpacked (not installed)
K8S_KUBECTL=$K8S_ROOT/usr/bin/kubectl         # Debian's kubectl 1.20 (kubernetes-client)
K8S_ETCD=$K8S_ROOT/usr/bin/etcd               # Debian's etcd (etcd-server), not a service
K8S_IMAGES=$K8S_CACHE/images                  # docker-archive tars of pause and busybox
K8S_CONTAINERD=/usr/bin/containerd            # Debian's; run privately, see containerd.toml
K8S_CTR=/usr/bin/ctr
K8S_SOCK=$K8S_STATE/containerd/containerd.sock
K8S_KUBECONFIG=$K8S_STATE/admin.kubeconfig
K8S_RUN=$K8S_STATE/run                        # pid files
K8S_LOGS=$K8S_STATE/logs
K8S_CONFIG=$K8S_STATE/config                  # rendered templates
K8S_NODE_DIR=$K8S_STATE/node                  # `ssebench k8s node-files`: seccomp.json, masks.json
K8S_SECCOMP_DIR=$K8S_STATE/kubelet/seccomp    # the kubelet's --seccomp-profile-root
K8S_RUNC_WRAPPER=$K8S_STATE/bin/ssebench-runc # BinaryName of the runtime handler "ssebench"
K8S_RUNNER_KUBECONFIG=$K8S_STATE/runner.kubeconfig  # the ssebench-runner ServiceAccount's token
K8S_TEMPLATES=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# Started in this order, stopped in the reverse one.
K8S_COMPONENTS="etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet"

T0=$(date +%s.%N)

# say MSG: one progress line on stderr, with the seconds since the script started.
say() {
	printf '%s: [%5ss] %s\n' "$PROG" \
		"$(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')" "$*" >&2
}

# die MSG: report a failure and stop.
die() {
	printf '%s: error: %s\n' "$PROG" "$*" >&2
	exit 1
}

need_root() {
	[ "$(id -u)" -eq 0 ] || die "must run as root"
}

is_uint() {
	case $1 in
	'' | *[!0-9]*) return 1 ;;
	esac
}

check_settings() {
	is_uint "$K8S_TIMEOUT" || die "SSEBENCH_K8S_TIMEOUT must be a whole number of seconds"
	local d
	for d in "$K8S_CACHE" "$K8S_STATE"; do
		case $d in
		/*) ;;
		*) die "'$d' is not an absolute path" ;;
		esac
		case $d in
		*[!A-Za-z0-9/._-]*) die "'$d': only letters, digits and / . _ - please" ;;
		/ | /usr | /usr/* | /etc | /etc/* | /proc* | /sys* | /dev*)
			die "'$d' is not a place for the cluster's files" ;;
		esac
	done
	# A unix socket path holds at most 107 bytes; containerd adds ".ttrpc".
	[ "${#K8S_SOCK}" -le 100 ] || die "SSEBENCH_K8S_STATE is too long for containerd's socket path"
}

# lock: take the exclusive lock shared by k8s-up and k8s-down (descriptor 9), so that two
# runs at once take turns. Started daemons get the descriptor closed.
lock() {
	mkdir -p "$(dirname "$K8S_LOCK")"
	exec 9>"$K8S_LOCK"
	flock -n 9 && return 0
	say "another k8s-up or k8s-down holds $K8S_LOCK; waiting"
	flock -w 1800 9 || die "timed out waiting for the lock $K8S_LOCK"
}

kubectl_admin() {
	"$K8S_KUBECTL" --kubeconfig "$K8S_KUBECONFIG" --request-timeout=10s "$@"
}

# comp_exe NAME: the program a component runs.
comp_exe() {
	case $1 in
	etcd) printf '%s\n' "$K8S_ETCD" ;;
	containerd) printf '%s\n' "$K8S_CONTAINERD" ;;
	*) printf '%s\n' "$K8S_BIN/$1" ;;
	esac
}

# is_ours PID EXE: PID is a live process (not a zombie) running EXE whose command line
# names the state directory, i.e. a process this cluster started (Docker's containerd runs
# the same binary, but never with our paths).
is_ours() {
	local state exe
	[ -r "/proc/$1/stat" ] || return 1
	state=$(sed -n 's/^.*) \([A-Za-z]\) .*$/\1/p' "/proc/$1/stat" 2>/dev/null || true)
	[ -n "$state" ] && [ "$state" != Z ] || return 1
	exe=$(readlink "/proc/$1/exe" 2>/dev/null || true)
	exe=${exe% (deleted)}
	[ "$exe" = "$(readlink -f "$2")" ] || return 1
	tr '\0' '\n' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$K8S_STATE/"
}

# comp_pid NAME: print the pid of a running component of this cluster, or fail.
comp_pid() {
	local f=$K8S_RUN/$1.pid pid
	[ -f "$f" ] || return 1
	pid=$(tr -cd '0-9' <"$f")
	is_uint "$pid" && is_ours "$pid" "$(comp_exe "$1")" || return 1
	printf '%s\n' "$pid"
}

# stop_pid NAME PID EXE: SIGTERM, wait up to 10 s, then SIGKILL; only while PID is ours.
stop_pid() {
	local name=$1 pid=$2 exe=$3
	is_ours "$pid" "$exe" || return 0
	kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 1 100); do
		is_ours "$pid" "$exe" || break
		sleep 0.1
	done
	if is_ours "$pid" "$exe"; then
		say "stop: $name (pid $pid) ignored SIGTERM for 10 s; SIGKILL"
		kill -KILL "$pid" 2>/dev/null || true
		sleep 0.2
	fi
	say "stop: $name (pid $pid) stopped"
}

# stop_comp NAME: stop a component by its pid file, then remove the pid file.
stop_comp() {
	local pid
	if pid=$(comp_pid "$1"); then
		stop_pid "$1" "$pid" "$(comp_exe "$1")"
	fi
	rm -f "$K8S_RUN/$1.pid"
}

# stray_pids: pids of the cluster's programs (etcd, kube-*, containerd and its shims)
# whose command line names the state directory, whether or not a pid file names them
# (shims do too: -address <state>/containerd/containerd.sock), and of processes in the
# kubelet's pod cgroups ("kubepods").
stray_pids() {
	local p exe
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		[ "$p" != $$ ] || continue
		# A zombie is dead already (its parent, often PID 1, reaps it when it does).
		[ "$(sed -n 's/^.*) \([A-Za-z]\) .*$/\1/p' "/proc/$p/stat" 2>/dev/null)" != Z ] || continue
		if grep -q ':/kubepods' "/proc/$p/cgroup" 2>/dev/null; then
			printf '%s\n' "$p"
			continue
		fi
		exe=$(readlink "/proc/$p/exe" 2>/dev/null || true)
		case ${exe##*/} in
		etcd | kube-* | kubelet | containerd | containerd-shim*) ;;
		*) continue ;;
		esac
		tr '\0' '\n' <"/proc/$p/cmdline" 2>/dev/null | grep -qF -- "$K8S_STATE/" &&
			printf '%s\n' "$p"
	done
	return 0
}

# our_mounts: mount points below the state directory (deepest first).
our_mounts() {
	awk -v s="$K8S_STATE/" 'index($2, s) == 1 { print $2 }' /proc/self/mounts | sort -r -u
}

# SPDX-License-Identifier: Apache-2.0
# tests/daemon/lib-daemon.sh: run a real ssebench-daemon on this host, as root, with three
# test users and a small task, and talk to each of its listeners. Sourced after lib.sh.

DAEMON=${SSEBENCH_DAEMON:-$SB_BUILDDIR/ssebench-daemon}
# SBT_USER_PREFIX lets suites that run at the same time use separate users (a daemon kills
# every process of its agent and runner users).
AGENT_USER=${SBT_USER_PREFIX:-sbt}-agent
RUNNER_USER=${SBT_USER_PREFIX:-sbt}-runner
DAEMON_USER=${SBT_USER_PREFIX:-sbt}-daemon
TOKEN=test-token-$$-$RANDOM
PORT=$((20000 + ($$ % 20000)))
# The run's files, outside /tmp (where SB_TMP usually is), as in a run (/ssebench,
# /var/lib/ssebench-runner, /src/...): the runner's sandbox gives task scripts a /tmp of
# their own, in which nothing below the real /tmp is there.
D=$(mktemp -d "${SBT_RUN_BASE:-/var/lib}/sbtest-run.XXXXXX") || D=$SB_TMP/run
chmod 0755 "$D"
SB_CLEANUP_PATHS+=("$D")
# The agent socket, in a directory of its own as in a run (/tmp/sse.sock): the runner's
# sandbox hides that directory, which it could not do were it the one above the runner's.
SOCK=$D/sock/sse.sock
RUNNER_DIR=$D/runner
daemon_pid=

# Needs root (the daemon separates users) and the test users (created once, kept).
require_daemon_env() {
	[ "$(id -u)" = 0 ] || skip_all "the daemon tests need root"
	command -v curl >/dev/null || skip_all "curl is not installed"
	command -v git >/dev/null || skip_all "git is not installed"
	for u in "$AGENT_USER" "$RUNNER_USER" "$DAEMON_USER"; do
		id "$u" >/dev/null 2>&1 ||
			useradd --system --no-create-home --shell /usr/sbin/nologin --user-group "$u" \
				>/dev/null 2>&1 || skip_all "cannot create the test user $u"
	done
	# The agent must be able to reach its tree below the scratch directory.
	chmod 0755 "$SB_TMP"
}

# make_fixture: the task files, the agent's tree (one commit), the pristine copy.
make_fixture() {
	rm -rf "$D"
	mkdir -p "$D/bench/scripts" "$D/bench/pocs" "$D/bench/diffs" "$D/bench/reports" \
		"$D/src" "$D/results" "$D/archive" "$D/sock"
	cat >"$D/bench/config.yaml" <<EOT
id: daemon-test
project: demo
repository: https://example.org/demo
language: c
source: $D/src
task_description:
  issue: "the demo crashes"
  crash_report: [reports/asan.txt]
scripts:
  build: scripts/build.sh
  run: scripts/run.sh
  test: scripts/test.sh
files:
  patch: diffs/patch.diff
  future_test: diffs/test.diff
  poc: [pocs/poc.txt]
EOT
	printf '#!/bin/sh\necho "built by $(id -un) in $PWD"\n' >"$D/bench/scripts/build.sh"
	printf '#!/bin/sh\necho "poc $1"\n' >"$D/bench/scripts/run.sh"
	printf '#!/bin/sh\necho tested\n' >"$D/bench/scripts/test.sh"
	chmod 0755 "$D"/bench/scripts/*.sh
	printf 'crash me\n' >"$D/bench/pocs/poc.txt"
	printf 'REFERENCE-PATCH-CONTENT\n' >"$D/bench/diffs/patch.diff"
	printf 'diff --git a/hidden.txt b/hidden.txt\nnew file mode 100644\n--- /dev/null\n+++ b/hidden.txt\n@@ -0,0 +1 @@\n+HIDDEN-TEST-CONTENT\n' \
		>"$D/bench/diffs/test.diff"
	printf 'AddressSanitizer: heap-buffer-overflow\n' >"$D/bench/reports/asan.txt"
	printf 'int main(void) { return 0; }\n' >"$D/src/main.c"
	git -C "$D/src" init -q
	git -C "$D/src" -c user.name=t -c user.email=t@t add -A
	git -C "$D/src" -c user.name=t -c user.email=t@t commit -qm 'buggy commit'
	cp -a "$D/src" "$D/repo"
	chown -R "$AGENT_USER:$AGENT_USER" "$D/src" "$D/archive"
}

# start_daemon LEVEL [NAME=VALUE...]: start the daemon and wait for its sockets.
start_daemon() {
	local level=$1
	shift
	env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		SSE_BENCH_PATH="$D/bench" SSE_REPO_PATH="$D/repo" SSE_RESULTS="$D/results" \
		SSE_ARCHIVE="$D/archive" SSE_RUNNER_DIR="$RUNNER_DIR" SSE_DAEMON_STATE="$D/state" \
		SSE_DAEMON_SOCKET="$SOCK" SSE_ADMIN_SOCKET="$D/admin/admin.sock" \
		SSE_HTTP_PORT="$PORT" SSE_DAEMON_TOKEN="$TOKEN" SSE_AGENT_USER="$AGENT_USER" \
		SSE_RUNNER_USER="$RUNNER_USER" SSE_DAEMON_USER="$DAEMON_USER" \
		SSE_DIFFICULTY="$level" "$@" "$DAEMON" >>"$D/daemon.log" 2>&1 &
	daemon_pid=$!
	for _ in $(seq 100); do
		if curl -s -m 1 --unix-socket "$SOCK" http://d/version >/dev/null 2>&1 &&
			curl -s -m 1 --unix-socket "$D/admin/admin.sock" http://d/version >/dev/null 2>&1; then
			return 0
		fi
		kill -0 "$daemon_pid" 2>/dev/null || break
		sleep 0.1
	done
	diag "the daemon did not start:" "$(tail -20 "$D/daemon.log")"
	return 1
}

stop_daemon() {
	if [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
		kill -TERM "$daemon_pid"
		wait "$daemon_pid" 2>/dev/null
	fi
	daemon_pid=
	pkill -KILL -u "$AGENT_USER" 2>/dev/null
	pkill -KILL -u "$RUNNER_USER" 2>/dev/null
	true
}

# A freezer cgroup for the agent (SSE_AGENT_CGROUP), made the way ssebench makes one: cgroup
# v2 where it holds no controller (the hybrid layout's unified tree, or a v2-only host), else
# the v1 freezer. Sets AGENT_CG; fails when the machine has neither.
agent_cgroup_new() {
	local root
	for root in /sys/fs/cgroup/unified /sys/fs/cgroup /sys/fs/cgroup/freezer; do
		if [ "$root" = /sys/fs/cgroup/freezer ] || [ -e "$root/cgroup.controllers" ]; then
			[ -e "$root/cgroup.procs" ] || continue
			AGENT_CG=$root/ssebench-test-$$
			mkdir -p "$AGENT_CG" && chmod 0700 "$AGENT_CG" && return 0
		fi
	done
	return 1
}

# Thaw it, kill what it holds, remove it.
agent_cgroup_remove() {
	[ -n "${AGENT_CG:-}" ] && [ -d "$AGENT_CG" ] || return 0
	for _ in 1 2 3; do
		xargs -r kill -KILL <"$AGENT_CG/cgroup.procs" 2>/dev/null
		if [ -e "$AGENT_CG/cgroup.freeze" ]; then echo 0 >"$AGENT_CG/cgroup.freeze"; else echo THAWED >"$AGENT_CG/freezer.state"; fi 2>/dev/null
		sleep 0.2
		rmdir "$AGENT_CG" 2>/dev/null && break
	done
	AGENT_CG=
}

# Start a command as the agent, in the background, in AGENT_CG (when set) from its first
# instruction; $! is its pid.
as_agent_bg() {
	sh -c '[ -z "$1" ] || echo $$ >"$1/cgroup.procs" || exit 1; shift
		exec setpriv --reuid "$0" --regid "$0" --clear-groups "$@"' \
		"$AGENT_USER" "${AGENT_CG:-}" "$@" </dev/null >/dev/null 2>&1 &
}

sb_cleanup_hook() {
	stop_daemon
	agent_cgroup_remove
}

# req LISTENER METHOD PATH [BODY]: print "STATUS BODY". LISTENER: agent, tcp (no token),
# tcptoken, admin.
req() {
	local l=$1 m=$2 p=$3 body=${4-}
	local args=(-s -m 120 -o "$SB_TMP/body" -w '%{http_code}' -X "$m")
	case $l in
	agent) args+=(--unix-socket "$SOCK") ;;
	admin) args+=(--unix-socket "$D/admin/admin.sock") ;;
	tcp) ;;
	tcptoken) args+=(-H "Authorization: Bearer $TOKEN") ;;
	esac
	[ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data-binary "$body")
	case $l in
	tcp | tcptoken) status=$(curl "${args[@]}" "http://127.0.0.1:$PORT$p") ;;
	*) status=$(curl "${args[@]}" "http://d$p") ;;
	esac
	printf '%s %s\n' "$status" "$(cat "$SB_TMP/body" 2>/dev/null)"
}

# status LISTENER METHOD PATH [BODY]: only the status code.
status() {
	req "$@" | cut -d' ' -f1
}

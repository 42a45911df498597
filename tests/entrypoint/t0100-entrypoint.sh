#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# ssebench-entrypoint on the host, as root, with a real daemon and a small task: who the
# agent runs as and with what, its argv byte for byte, the agent socket during its phase and
# 403 after it, exit statuses (0, 3, 127, 126, 124), the timeout and daemonised leftovers,
# the secrets file's rules, SIGTERM, keep-alive, appended logs, the 0700 results parent and
# the hand-back of the archive past planted links; the two sides of a sidecar run.
#
# The evaluator is $SB_BUILDDIR/ssebench-evaluator when it exists and answers --version
# (SBT_EVALUATOR=stand-in forces the stand-in), always behind a small wrapper that records
# the environment the entrypoint gave it.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
export SBT_USER_PREFIX=sbn
. "$SB_SRCDIR/tests/daemon/lib-daemon.sh"

EP=${SSEBENCH_ENTRYPOINT:-$SB_BUILDDIR/ssebench-entrypoint}
[ -x "$EP" ] || skip_all "ssebench-entrypoint is not built"
[ -x "$DAEMON" ] || skip_all "ssebench-daemon is not built"
require_daemon_env
# The MCP server's user: a test user of its own (in a run it is nobody), because the end of
# the agent phase kills every process of that user, and on this host nobody may run others.
MCP_USER=${SBT_USER_PREFIX}-mcp
id "$MCP_USER" >/dev/null 2>&1 ||
	useradd --system --no-create-home --shell /usr/sbin/nologin --user-group "$MCP_USER" \
		>/dev/null 2>&1 || skip_all "cannot create the test user $MCP_USER"
plan_lazy

R=$SB_TMP/rp/results		# results; its parent must end up 0700 root
# A port nobody listens on now (the kernel's pick): suites may run side by side.
MCP_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
B=$SB_TMP/bin			# our programs (agents, evaluator wrapper)
SECRETS=$SB_TMP/secrets/run.env
VICTIM=$SB_TMP/victim		# what planted links in the archive point at
VICTIM_DIR=$SB_TMP/victimdir
API_KEY=sk-test-$$-$RANDOM
mkdir -p "$B" "$SB_TMP/secrets" "$SB_TMP/rp" "$VICTIM_DIR"
chmod 0755 "$B" "$SB_TMP/rp"
chmod 0700 "$SB_TMP/secrets"

# --- the agents -------------------------------------------------------------------------------
# probe: records who and where it is, its arguments one file each, what the daemon says, and
# plants links in the archive; exits with $AGENT_EXIT.
cat >"$B/probe" <<'EOF'
#!/bin/sh
out=$SSE_ARCHIVE
echo "probe agent run $RUN_MARK"
id -u >"$out/uid"
id -g >"$out/gid"
cat /proc/self/status >"$out/status"
env >"$out/env"
pwd >"$out/pwd"
readlink /proc/self/fd/0 >"$out/stdin"
ulimit -c >"$out/core"
echo "$$ $(cut -d' ' -f6 /proc/$$/stat)" >"$out/session"
printf '%s' "$#" >"$out/argc"
i=0
for a in "$@"; do
	printf '%s' "$a" >"$out/arg.$i"
	i=$((i + 1))
done
curl -s -m 10 --unix-socket "$SSE_DAEMON_SOCKET" http://d/version >"$out/version" 2>&1
curl -s -m 10 -X POST -H 'Content-Type: application/json' "$SSE_MCP_URL" \
	--data '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}' \
	>"$out/mcp" 2>&1
# Our own entrypoint's server (its child, as we are), not another run's.
ps -o user=,comm= --ppid "$PPID" | awk '$2 == "ssebench-mcp" { print $1 }' >"$out/mcp-user" 2>&1
curl -s -m 60 -o "$out/bash.body" -w '%{http_code}' --unix-socket "$SSE_DAEMON_SOCKET" \
	-H 'Content-Type: application/json' --data '{"command": "echo hi-from-bash"}' \
	http://d/tool/bash >"$out/bash.code" 2>&1
ln -s "$VICTIM" "$out/evil-link"
ln -s "$VICTIM_DIR" "$out/evil-dir"
mkdir "$out/sub" && echo x >"$out/sub/file"
exit "${AGENT_EXIT:-0}"
EOF
# sleeper: leaves a daemonised process (setsid + double fork) behind, then sleeps, or exits
# at once with "exit".
cat >"$B/sleeper" <<'EOF'
#!/bin/sh
setsid sh -c 'sleep 300 & echo $! >"$SSE_ARCHIVE/daemonised.pid"' </dev/null >/dev/null 2>&1 &
i=0
while [ ! -s "$SSE_ARCHIVE/daemonised.pid" ] && [ $i -lt 200 ]; do
	sleep 0.05
	i=$((i + 1))
done
echo started >"$SSE_ARCHIVE/started"
[ "${1:-}" = exit ] && exit 0
exec sleep 300
EOF
# namer: leaves names the isolation probe's path list must not misread (newlines, tabs, a
# property's name followed by a readable path) in its tree, its archive and, through a
# build, the runner's copy of its tree; and, in its archive, what the results must not keep:
# a world-writable directory, a set-uid and a world-writable file, links out, a second name
# of a file of its tree, a FIFO and a socket.
cat >"$B/namer" <<'EOF'
#!/bin/bash
a=$SSE_ARCHIVE
# A name cannot hold '/', but a directory named "x<newline>PROP<tab>" holding "etc" makes
# the path ".../x<newline>PROP<tab>/etc": a line-based list would read "PROP<tab>/etc".
for p in task_files_hidden pristine_repo_hidden results_hidden; do
	for d in "$a" "$SSE_SOURCE"; do
		mkdir -p "$d/x"$'\n'"$p"$'\t'/etc && : >"$d/x"$'\n'"$p"$'\t'/etc/passwd
		mkdir -p "$d/y"$'\n'"$p"$'\t' && : >"$d/y"$'\n'"$p"$'\t'/$'\n'
	done
done
mkdir -p "$a/deep/"$'\n'results_hidden$'\t'/etc
curl -s -m 60 -o "$a/build.body" -w '%{http_code}' --unix-socket "$SSE_DAEMON_SOCKET" \
	-H 'Content-Type: application/json' -X POST --data '{}' \
	'http://d/tool/bencher?action=build' >"$a/build.code" 2>&1
mkdir "$a/open" && chmod 0777 "$a/open" && echo o >"$a/open/f" && chmod 0666 "$a/open/f"
echo s >"$a/setuid" && chmod 4755 "$a/setuid"
echo g >"$a/setgid" && chmod 2775 "$a/setgid"
ln -s /etc/passwd "$a/result.json"
ln -s "$VICTIM_DIR" "$a/dir-link"
echo mine >"$SSE_SOURCE/mine" && ln "$SSE_SOURCE/mine" "$a/hardlink"
mkfifo "$a/fifo"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$a/sock" 2>/dev/null
exit 0
EOF
printf '#!/bin/sh\necho never\n' >"$B/not-executable"
# A daemon that does not come up.
printf '#!/bin/sh\necho "broken daemon: boom"\nexit 3\n' >"$B/broken-daemon"
# flooder: what it prints goes to a pipe, not to agent.log's descriptor: it cannot preallocate
# the host's disk through its stdout, and past the cap the rest is counted, not kept.
cat >"$B/flooder" <<'EOF'
#!/bin/bash
fallocate -l 64G /proc/self/fd/1 2>/dev/null && echo "FALLOCATED" >"$SSE_ARCHIVE/flood" || echo "fallocate refused" >"$SSE_ARCHIVE/flood"
stat -L -c '%F' /proc/$$/fd/1 >>"$SSE_ARCHIVE/flood"
head -c 4194304 /dev/zero | tr '\0' x
echo
exit 0
EOF
chmod 0755 "$B/probe" "$B/sleeper" "$B/broken-daemon" "$B/namer" "$B/flooder"
chmod 0644 "$B/not-executable"

# --- the evaluator ----------------------------------------------------------------------------
REAL_EVALUATOR=
if [ "${SBT_EVALUATOR:-}" != stand-in ] && [ -x "$SB_BUILDDIR/ssebench-evaluator" ] &&
	"$SB_BUILDDIR/ssebench-evaluator" --version >/dev/null 2>&1; then
	REAL_EVALUATOR=$SB_BUILDDIR/ssebench-evaluator
fi
diag "evaluator: ${REAL_EVALUATOR:-the stand-in}"
cat >"$B/evaluator" <<EOF
#!/bin/sh
env >"\$SSE_RESULTS/evaluator.env"
admin=\$(curl -s -m 10 -o /dev/null -w '%{http_code}' --unix-socket "\$SSE_ADMIN_SOCKET" \\
	http://d/version)
echo "evaluator wrapper: admin socket answered \$admin"
if [ -n "$REAL_EVALUATOR" ]; then
	exec "$REAL_EVALUATOR" "\$@"
fi
fmt='{"patch_result": {"status": "stand-in"}, "runtime_result": {"agent_duration": %s,'
fmt="\$fmt"' "agent_timeout": %s, "agent_exit_code": %s}}\n'
printf "\$fmt" "\$AGENT_DURATION" "\${SSE_METRIC_AGENT_TIMEOUT:-false}" "\$AGENT_EXIT_STATUS" \\
	>"\$SSE_RESULTS/.result.json.tmp"
mv "\$SSE_RESULTS/.result.json.tmp" "\$SSE_RESULTS/result.json"
EOF
chmod 0755 "$B/evaluator"

# --- running the entrypoint -------------------------------------------------------------------
write_secrets() {
	# An empty line is allowed; a value may contain '='.
	printf 'SSE_DAEMON_TOKEN=%s\nSSE_API_KEY=%s\nSSE_BASE_URL=%s\n\nSSE_MODEL_NAME=m=1\n' \
		"$TOKEN" "$API_KEY" http://proxy.invalid:4000 >"$SECRETS"
	chown root:root "$SECRETS"
	chmod 0600 "$SECRETS"
}

ep_env=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	SSE_BENCH_PATH="$D/bench" SSE_REPO_PATH="$D/repo" SSE_RUNNER_DIR="$RUNNER_DIR"
	SSE_DAEMON_STATE="$D/state" SSE_DAEMON_SOCKET="$SOCK"
	SSE_ADMIN_SOCKET="$D/admin/admin.sock" SSE_HTTP_PORT="$PORT" SSE_DIFFICULTY=2
	SSE_MCP_BIN="$SB_BUILDDIR/ssebench-mcp" SSE_MCP_PORT="$MCP_PORT" SSE_MCP_USER="$MCP_USER"
	SSE_AGENT_USER="$AGENT_USER" SSE_RUNNER_USER="$RUNNER_USER" SSE_DAEMON_USER="$DAEMON_USER"
	SSE_RESULTS="$R" SSE_ARCHIVE="$D/archive" SSE_SOURCE="$D/src" SSE_DAEMON_TIMEOUT=30
	SSE_DAEMON_BIN="$DAEMON" SSE_EVALUATOR_BIN="$B/evaluator" SSE_SECRETS_FILE="$SECRETS"
	VICTIM="$VICTIM" VICTIM_DIR="$VICTIM_DIR"
	# The places the agent and the runner share are looked for from here down, not over
	# the whole host (isolation.c:check_shared_places); a small image with none.
	SSE_SHARED_WALK_ROOT="$SB_TMP/image-clean"
	# The host has a route out: these runs claim no network isolation (the isolation
	# checks below claim it on purpose, and never name an address to try).
	SSE_EGRESS=open)

# Two small images for the walk for shared places: one with none (what a run here sees),
# one with each kind the runner's sandbox would not stop.
make_image() { # DIR
	mkdir -p "$1/usr/bin" "$1/root/inner/open" "$1/var"
	echo x >"$1/usr/bin/tool"
	chmod 0700 "$1/root"
	chmod 0777 "$1/root/inner/open"	# below a directory neither can search: not shared
	ln -s /tmp "$1/var/tmp-link"	# a link is never followed
	mkfifo -m 0600 "$1/var/root-fifo"	# root's own FIFO
}
make_image "$SB_TMP/image-clean"
make_image "$SB_TMP/image-shared"
mkdir -p "$SB_TMP/image-shared/opt/open" "$SB_TMP/image-shared/opt/agents" "$SB_TMP/image-shared/srv" \
	"$SB_TMP/image-shared/srv/ronly" "$SB_TMP/image-shared/srv/aonly"
chmod 1777 "$SB_TMP/image-shared/opt/open"			# 1: anyone's to write
chown "$AGENT_USER" "$SB_TMP/image-shared/opt/agents"		# 2: the agent's: it could open it
chmod 0555 "$SB_TMP/image-shared/opt/agents"			#    (closed for now)
mkfifo -m 0666 "$SB_TMP/image-shared/srv/fifo"			# 3
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$SB_TMP/image-shared/srv/sock"
chmod 0666 "$SB_TMP/image-shared/srv/sock"			# 4
mkfifo -m 0600 "$SB_TMP/image-shared/srv/acl-fifo"		# 5: root's, but an ACL lets both in
python3 - "$SB_TMP/image-shared/srv/acl-fifo" "$(id -u "$AGENT_USER")" "$(id -u "$RUNNER_USER")" <<'PY'
import os, struct, sys
# The kernel's POSIX ACL xattr: version 2, then (tag, perm, id) entries in tag order.
e = lambda tag, perm, uid=0xffffffff: struct.pack("<HHI", tag, perm, uid)
acl = struct.pack("<I", 2) + e(1, 6) + e(2, 6, int(sys.argv[2])) + e(2, 6, int(sys.argv[3])) \
	+ e(4, 0) + e(0x10, 6) + e(0x20, 0)
os.setxattr(sys.argv[1], "system.posix_acl_access", acl)
PY
# 6 and 7: one FIFO, two names, each on a path only one of them can walk.
chgrp "$(id -g "$RUNNER_USER")" "$SB_TMP/image-shared/srv/ronly"
chgrp "$(id -g "$AGENT_USER")" "$SB_TMP/image-shared/srv/aonly"
chmod 0750 "$SB_TMP/image-shared/srv/ronly" "$SB_TMP/image-shared/srv/aonly"
mkfifo -m 0666 "$SB_TMP/image-shared/srv/ronly/fifo"
ln "$SB_TMP/image-shared/srv/ronly/fifo" "$SB_TMP/image-shared/srv/aonly/fifo"
# On a read-only mount nothing can be opened up, made or written: only a FIFO or socket
# already there counts (here the FIFO, not the 1777 directory or the agent's file).
make_image "$SB_TMP/image-ro"
mkdir -m 1777 "$SB_TMP/image-ro/open"
touch "$SB_TMP/image-ro/agents-file" && chown "$AGENT_USER" "$SB_TMP/image-ro/agents-file"
mkfifo -m 0666 "$SB_TMP/image-ro/fifo"
chmod 0755 "$SB_TMP/image-ro"
ro_bound=0
mount --bind "$SB_TMP/image-ro" "$SB_TMP/image-ro" 2>/dev/null &&
	mount -o remount,bind,ro "$SB_TMP/image-ro" 2>/dev/null && ro_bound=1
# The top of the view is judged too: a 1777 root would let the agent make a FIFO in it.
make_image "$SB_TMP/image-top"
chmod 1777 "$SB_TMP/image-top"
# Deeper than the walk goes: it must say it could not look, not pass.
make_image "$SB_TMP/image-deep"
(cd "$SB_TMP/image-deep" && for _ in $(seq 130); do mkdir d && cd d || exit 1; done)
chmod 0755 "$SB_TMP/image-deep"
chmod 0755 "$SB_TMP/image-clean" "$SB_TMP/image-shared"

# A fresh archive for each run, owned by root (so the hand-back is visible).
reset_archive() {
	rm -rf "$D/archive"
	mkdir -m 0755 "$D/archive"
	rm -f "$R/result.json" "$R/evaluator.env"
}

# run_ep [NAME=VALUE...] -- COMMAND...: run the entrypoint in the foreground; ep_rc, ep_out.
run_ep() {
	local vars=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		vars+=("$1")
		shift
	done
	shift
	reset_archive
	SECONDS=0
	timeout -s KILL 120 env -i "${ep_env[@]}" ${vars[@]+"${vars[@]}"} "$EP" -- "$@" \
		>"$SB_TMP/ep.out" 2>&1
	ep_rc=$?
	ep_secs=$SECONDS
	ep_out=$(cat "$SB_TMP/ep.out")
}

# run_ep_keep_archive: run_ep on the archive as the caller left it.
run_ep_keep_archive() {
	local vars=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		vars+=("$1")
		shift
	done
	shift
	rm -f "$R/result.json" "$R/evaluator.env"
	SECONDS=0
	timeout -s KILL 120 env -i "${ep_env[@]}" ${vars[@]+"${vars[@]}"} "$EP" -- "$@" \
		>"$SB_TMP/ep.out" 2>&1
	ep_rc=$?
	ep_secs=$SECONDS
	ep_out=$(cat "$SB_TMP/ep.out")
}

# start_ep [NAME=VALUE...] -- COMMAND...: the same in the background; ep_pid.
start_ep() {
	local vars=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		vars+=("$1")
		shift
	done
	shift
	reset_archive
	env -i "${ep_env[@]}" ${vars[@]+"${vars[@]}"} "$EP" -- "$@" >"$SB_TMP/ep.out" 2>&1 &
	ep_pid=$!
}

# wait_for TEST SECONDS: poll until TEST (a command) succeeds.
wait_for() {
	local i
	for i in $(seq $(($2 * 10))); do
		eval "$1" && return 0
		sleep 0.1
	done
	return 1
}

last_daemon_pid() {
	sed -n 's/.*daemon started: .* (pid \([0-9]*\)).*/\1/p' "$R/entrypoint.log" | tail -1
}

# Live (non-zombie) processes of a user.
live_procs() {
	ps -u "$1" -o pid=,stat=,args= 2>/dev/null | awk '$2 !~ /^Z/'
}

# Does the agent socket answer?
answers() {
	curl -s -m 2 --unix-socket "$SOCK" http://d/version >/dev/null 2>&1
}

alive() {
	[ -n "$1" ] && [ -d "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}

make_fixture
write_secrets
echo "victim" >"$VICTIM"
echo "inner" >"$VICTIM_DIR/inner"
chown "$AGENT_USER:$AGENT_USER" "$VICTIM" "$VICTIM_DIR" "$VICTIM_DIR/inner"

# --- command line -----------------------------------------------------------------------------
run_cmd r "$EP" --version
is "$r_rc" 0 "--version exits 0"
like "$r_out" '^ssebench-entrypoint [0-9]' "--version prints the version"
run_cmd r "$EP" --help
like "$r_out" '^usage: ssebench-entrypoint' "--help prints the usage"
run_cmd r env -i "${ep_env[@]}" "$EP"
is "$r_rc" 1 "no command: exit 1"
run_cmd r env -i "${ep_env[@]}" "$EP" --
is "$r_rc" 1 "only --: exit 1"

# --- run 1: the probe, with an argv full of shell metacharacters ------------------------------
args=('a b' "\$(touch $SB_TMP/pwned)" '; rm -rf /nonexistent-xyz' "quote'\"\\" '*' '' \
	$'new\nline' '--' '|&><`' '$HOME')
run_ep RUN_MARK=first AGENT_EXIT=0 TIMEOUT=60 -- "$B/probe" "${args[@]}"
is "$ep_rc" 0 "an agent that exits 0: the entrypoint exits 0"
diag "run 1 took $ep_secs s"
A=$D/archive
is "$(cat "$A/uid" 2>/dev/null)" "$(id -u "$AGENT_USER")" "the agent runs as the agent uid"
is "$(cat "$A/gid" 2>/dev/null)" "$(id -g "$AGENT_USER")" "with the agent's primary gid"
is "$(sed -n 's/^Groups:[[:space:]]*//p' "$A/status" 2>/dev/null)" "" \
	"and no supplementary groups"
like "$(cat "$A/status" 2>/dev/null)" '^CapEff:[[:space:]]+0+$' "CapEff is 0"
like "$(cat "$A/status" 2>/dev/null)" '^CapBnd:[[:space:]]+0+$' "the bounding set is empty"
like "$(cat "$A/status" 2>/dev/null)" '^NoNewPrivs:[[:space:]]+1$' "NoNewPrivs is 1"
like "$(cat "$A/status" 2>/dev/null)" '^Seccomp:[[:space:]]+2$' "a seccomp filter is loaded"
is "$(cat "$A/pwd" 2>/dev/null)" "$D/src" "its working directory is SSE_SOURCE"
is "$(cat "$A/stdin" 2>/dev/null)" /dev/null "its stdin is /dev/null"
is "$(cat "$A/core" 2>/dev/null)" 0 "it may not dump core"
is "$(awk '{ print ($1 == $2) }' "$A/session" 2>/dev/null)" 1 "it leads a session of its own"
agent_env=$(cat "$A/env" 2>/dev/null)
like "$agent_env" "^SSE_DAEMON_SOCKET=$SOCK\$" "it gets SSE_DAEMON_SOCKET"
like "$agent_env" "^SSE_DAEMON_TOKEN=$TOKEN\$" "it gets the daemon token from the secrets file"
like "$agent_env" "^SSE_API_KEY=$API_KEY\$" "and the model key"
like "$agent_env" '^SSE_MODEL_NAME=m=1$' "a value may contain '='"
unlike "$agent_env" '^SSE_ADMIN_SOCKET=' "it does not get SSE_ADMIN_SOCKET"
unlike "$agent_env" '^SSE_(RESULTS|SECRETS_FILE|DAEMON_BIN|EVALUATOR_BIN|DAEMON_STATE)=' \
	"nor the results, secrets file, program or state paths"
ok "$(grep -qF "$SECRETS" "$A/env"; [ $? = 1 ]; echo $?)" \
	"the secrets file's path appears nowhere in its environment"
like "$agent_env" "^HOME=$(getent passwd "$AGENT_USER" | cut -d: -f6)\$" "HOME is the agent's home"
like "$agent_env" "^USER=$AGENT_USER\$" "USER is the agent"
like "$agent_env" '^SSE_DIFFICULTY=2$' "it gets SSE_DIFFICULTY"
is "$(cat "$A/argc" 2>/dev/null)" "${#args[@]}" "the agent gets ${#args[@]} separate arguments"
bad=0
for i in "${!args[@]}"; do
	printf '%s' "${args[$i]}" | cmp -s - "$A/arg.$i" || {
		bad=1
		diag "argument $i differs"
	}
done
ok "$bad" "each argument arrives byte for byte"
ok "$([ ! -e "$SB_TMP/pwned" ]; echo $?)" "no shell ran the arguments"
like "$(cat "$A/version" 2>/dev/null)" '"version"' "the agent reached the agent socket"
like "$(cat "$A/mcp" 2>/dev/null)" '"name":"ssebench MCP Server"' "the agent reached the MCP server at \$SSE_MCP_URL"
is "$(cat "$A/mcp-user" 2>/dev/null)" "$MCP_USER" "the MCP server runs as its own user, not root"
like "$(cat "$R/entrypoint.log")" "MCP server ready at http://127.0.0.1:[0-9]+/mcp as .$MCP_USER." "the entrypoint started the MCP server before the agent"
ok "$(! curl -s -m 2 -o /dev/null "http://127.0.0.1:$MCP_PORT/mcp"; echo $?)" "the MCP server is gone after the run"
is "$(cat "$A/bash.code" 2>/dev/null)" 200 "the bash tool works during the agent phase"
like "$(cat "$A/bash.body" 2>/dev/null)" 'hi-from-bash' "and ran the command"
like "$(cat "$R/agent.log")" '^probe agent run first$' "the agent's output is in agent.log"
like "$(cat "$R/entrypoint.log")" 'entrypoint: agent started' "entrypoint.log: agent started"
like "$(cat "$R/entrypoint.log")" 'entrypoint: agent exited with status 0 after [0-9.]+ s' \
	"entrypoint.log: its status and time"
like "$ep_out" 'entrypoint: agent exited with status 0' "the same lines go to stdout"
like "$(cat "$R/daemon.log")" 'agent phase ended; tools closed' \
	"the daemon was told the phase ended"
like "$(cat "$R/evaluator.log")" 'admin socket answered 200' \
	"the evaluator ran and reached the admin socket"
ok "$([ -s "$R/result.json" ]; echo $?)" "result.json is there"
eval_env=$(cat "$R/evaluator.env" 2>/dev/null)
like "$eval_env" "^SSE_DAEMON_SOCKET=$D/admin/admin.sock\$" \
	"the evaluator's SSE_DAEMON_SOCKET is the admin socket"
like "$eval_env" "^SSE_ADMIN_SOCKET=$D/admin/admin.sock\$" "and SSE_ADMIN_SOCKET too"
like "$eval_env" '^AGENT_EXIT_STATUS=0$' "AGENT_EXIT_STATUS=0"
like "$eval_env" '^AGENT_DURATION=[0-9]+$' "AGENT_DURATION is whole seconds"
like "$eval_env" '^TIMEOUT=60$' "TIMEOUT is passed on"
unlike "$eval_env" '^SSE_METRIC_AGENT_TIMEOUT=' "no timeout metric without a timeout"
is "$(stat -c '%a %U' "$SB_TMP/rp")" "700 root" "the results directory's parent is 0700 root"
is "$(stat -c '%U' "$R")" "root" "the results directory is root's"
is "$(stat -c '%a %U' "$A")" "755 root" "the archive is given back to its owner and mode"
is "$(stat -c '%U' "$A/uid" "$A/sub" "$A/sub/file" | sort -u)" "root" \
	"with what the agent wrote in it"
ok "$([ ! -e "$A/evil-link" ] && [ ! -L "$A/evil-link" ] && [ ! -L "$A/evil-dir" ]; echo $?)" \
	"planted links are removed from the archive"
is "$(stat -c '%U' "$VICTIM" "$VICTIM_DIR" "$VICTIM_DIR/inner" | sort -u)" "$AGENT_USER" \
	"and what they pointed at is not touched"
is "$(live_procs "$AGENT_USER")" "" "no process of the agent is left"
dpid=$(last_daemon_pid)
ok "$(alive "$dpid"; [ $? != 0 ]; echo $?)" "the daemon (pid $dpid) is gone after the run"
is "$(live_procs "$DAEMON_USER")" "" "and so is its front"

# --- run 2: exit status 3, logs appended ------------------------------------------------------
run_ep RUN_MARK=second AGENT_EXIT=3 TIMEOUT=garbage -- "$B/probe"
is "$ep_rc" 3 "an agent that exits 3: the entrypoint exits 3"
like "$(cat "$R/evaluator.env" 2>/dev/null)" '^AGENT_EXIT_STATUS=3$' "AGENT_EXIT_STATUS=3"
like "$(cat "$R/evaluator.env" 2>/dev/null)" '^TIMEOUT=3600$' "a garbage TIMEOUT falls back to 3600"
like "$ep_out" "TIMEOUT='garbage'" "and the fallback is logged"
is "$(grep -c 'agent started' "$R/entrypoint.log")" 2 "entrypoint.log is appended to"
like "$(cat "$R/agent.log")" '^probe agent run first$' "agent.log keeps the first run"
like "$(cat "$R/agent.log")" '^probe agent run second$' "and has the second"
is "$(grep -c 'listening: agent socket' "$R/daemon.log")" 2 "daemon.log is appended to"
is "$(grep -c 'admin socket answered' "$R/evaluator.log")" 2 "evaluator.log is appended to"

# --- commands that cannot start ---------------------------------------------------------------
run_ep -- "$B/no-such-agent" x
is "$ep_rc" 127 "a missing command: 127"
like "$ep_out" "cannot start \\(status 127\\).*no-such-agent" "and it is logged"
like "$(cat "$R/evaluator.env" 2>/dev/null)" '^AGENT_EXIT_STATUS=127$' "the run is still graded"
run_ep -- no-such-command-on-path-xyz
is "$ep_rc" 127 "a command not on PATH: 127"
run_ep -- "$B/not-executable"
is "$ep_rc" 126 "a command that is not executable: 126"

# --- timeout, and a daemonised leftover -------------------------------------------------------
run_ep TIMEOUT=2 -- "$B/sleeper"
is "$ep_rc" 124 "an agent past TIMEOUT: 124"
ok "$([ "$ep_secs" -lt 30 ]; echo $?)" "quickly ($ep_secs s)"
like "$ep_out" 'agent timed out after 2 s' "the timeout is logged"
lpid=$(cat "$D/archive/daemonised.pid" 2>/dev/null)
ok "$([ -n "$lpid" ] && ! alive "$lpid"; echo $?)" "the agent's daemonised process ($lpid) is dead"
is "$(live_procs "$AGENT_USER")" "" "no process of the agent is left"
like "$(cat "$R/evaluator.env" 2>/dev/null)" '^SSE_METRIC_AGENT_TIMEOUT=true$' \
	"the evaluator is told of the timeout"
like "$(cat "$R/evaluator.env" 2>/dev/null)" '^AGENT_EXIT_STATUS=124$' "with status 124"

# --- the secrets file's rules -----------------------------------------------------------------
chmod 0666 "$SECRETS"
run_ep -- "$B/probe"
is "$ep_rc" 1 "a world-writable secrets file: exit 1"
like "$ep_out" 'writable by group or others' "and why"
unlike "$ep_out" 'daemon started|agent started' "before anything started"
ok "$([ ! -e "$D/archive/uid" ]; echo $?)" "the agent did not run"
write_secrets
printf 'SSE_API_KEY=%s\nlower=1\n' "$API_KEY" >"$SECRETS"
run_ep -- "$B/probe"
is "$ep_rc" 1 "a secrets file with a bad line: exit 1"
like "$ep_out" 'line 2 is not NAME=value' "the line is named"
unlike "$ep_out" "$API_KEY" "and no secret is echoed"
unlike "$ep_out" 'daemon started|agent started' "before anything started"
printf 'SSE_API_KEY=%s\r\n' "$API_KEY" >"$SECRETS"
run_ep -- "$B/probe"
is "$ep_rc" 1 "a CRLF secrets file: exit 1"
write_secrets
ln -s "$SECRETS" "$SB_TMP/secrets/link.env"
run_ep SSE_SECRETS_FILE="$SB_TMP/secrets/link.env" -- "$B/probe"
is "$ep_rc" 1 "a secrets file that is a symbolic link: exit 1"
chown "$AGENT_USER" "$SECRETS"
run_ep -- "$B/probe"
is "$ep_rc" 1 "a secrets file not owned by root: exit 1"
write_secrets

# --- results and archive paths that would lock the agent out or open a shared directory -------
run_ep SSE_RESULTS=/sbn-results-$$ -- "$B/probe"
is "$ep_rc" 1 "a results directory whose parent is '/': exit 1"
ok "$([ ! -e /sbn-results-$$ ]; echo $?)" "and nothing is created"
run_ep SSE_ARCHIVE="$SB_TMP/rp/archive" -- "$B/probe"
is "$ep_rc" 1 "an archive inside the results directory's (private) parent: exit 1"
like "$ep_out" "SSE_ARCHIVE=.* is inside" "and why"
mkdir -p "$SB_TMP/shared"
chmod 1777 "$SB_TMP/shared"
run_ep SSE_RESULTS="$SB_TMP/shared/results" -- "$B/probe"
is "$ep_rc" 1 "a results directory in a shared (sticky, world-writable) directory: exit 1"
is "$(stat -c '%a' "$SB_TMP/shared")" 1777 "and the shared directory is left as it was"

# --- a daemon that does not start -------------------------------------------------------------
run_ep SSE_DAEMON_BIN="$B/broken-daemon" -- "$B/probe"
is "$ep_rc" 1 "a daemon that exits at start: exit 1"
like "$ep_out" 'daemon.log: broken daemon: boom' "the end of daemon.log is shown"
unlike "$ep_out" 'agent started' "the agent never started"

# --- SIGTERM in the agent phase ---------------------------------------------------------------
start_ep TIMEOUT=120 -- "$B/sleeper"
if wait_for '[ -e "$D/archive/started" ]' 30; then
	lpid=$(cat "$D/archive/daemonised.pid")
	dpid=$(last_daemon_pid)
	kill -TERM "$ep_pid"
	SECONDS=0
	wait "$ep_pid"
	rc=$?
	is "$rc" 1 "SIGTERM in the agent phase: exit 1"
	ok "$([ $SECONDS -lt 30 ]; echo $?)" "promptly ($SECONDS s)"
	is "$(live_procs "$AGENT_USER")" "" "no process of the agent is left"
	ok "$(! alive "$lpid"; echo $?)" "its daemonised process is dead"
	ok "$(! alive "$dpid"; echo $?)" "the daemon (pid $dpid) is gone"
	is "$(live_procs "$DAEMON_USER")" "" "and its front"
	is "$(live_procs "$RUNNER_USER")" "" "and the runner"
	ok "$(! answers; echo $?)" \
		"the agent socket no longer answers"
	like "$(cat "$SB_TMP/ep.out")" 'received SIGTERM' "the signal is logged"
	is "$(stat -c '%U' "$D/archive" "$D/archive/started" | sort -u)" root \
		"the archive is given back after an interruption too"
else
	kill -KILL "$ep_pid" 2>/dev/null
	ok 1 "the agent started in the background run"
	diag "$(cat "$SB_TMP/ep.out")"
fi

# --- keep-alive: the daemon stays; agent tools are closed -------------------------------------
start_ep SSE_KEEP_ALIVE=1 TIMEOUT=60 -- "$B/sleeper" exit
if wait_for 'grep -q "keep-alive:" "$SB_TMP/ep.out"' 60; then
	lpid=$(cat "$D/archive/daemonised.pid")
	ok "$(! alive "$lpid"; echo $?)" "after the agent phase its daemonised process is dead"
	ok "$(wait_for '! ps --ppid "$ep_pid" -o stat= | grep -q "^Z"' 5; echo $?)" \
		"and the orphans the entrypoint inherited are reaped (no zombie children)"
	is "$(status agent GET /version)" 200 "in keep-alive the daemon still answers"
	is "$(status agent POST /tool/bash '{"command": "id"}')" 403 \
		"an agent-facing tool call after the phase: 403"
	is "$(status tcptoken GET /project)" 200 "the daemon got the token: TCP with it works"
	is "$(status tcp GET /project)" 401 "and TCP without it is refused"
	kill -HUP "$ep_pid"
	sleep 0.3
	is "$(status agent GET /version)" 200 "SIGHUP is ignored: the daemon still answers"
	kill -TERM "$ep_pid"
	wait "$ep_pid"
	is "$?" 0 "SIGTERM in keep-alive: exit 0"
	ok "$(! answers; echo $?)" \
		"and the daemon is stopped"
else
	kill -KILL "$ep_pid" 2>/dev/null
	ok 1 "the background run reached keep-alive"
	diag "$(cat "$SB_TMP/ep.out")"
fi
# --- isolation: established before the agent and before grading, or the run is not scored ----
jget() { # FILE EXPR: a Python expression over the JSON document d
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>&1
}
if command -v python3 >/dev/null; then
	run_ep -- "$B/probe"
	is "$ep_rc" 0 "isolation: a sound run exits 0"
	is "$(jget "$R/isolation.json" '(d["scored"], d["tier"], d["egress"], d["failed"])')" \
		"(True, 'open', 'open', [])" "isolation: every claimed property held; tier open (egress open)"
	is "$(jget "$R/isolation.json" '" ".join(sorted(d["phases"]))')" "before_agent before_grading" \
		"isolation: checked before the agent and before grading"
	is "$(jget "$R/isolation.json" '[d["phases"]["before_agent"][p]["status"] for p in ("agent_identity", "runner_identity", "no_capabilities", "no_new_privs", "seccomp", "task_files_hidden", "pristine_repo_hidden", "results_hidden", "single_commit", "difficulty_gate", "reference_mount", "runner_sandbox")]')" \
		"['held', 'held', 'held', 'held', 'held', 'held', 'held', 'held', 'held', 'held', 'held', 'held']" \
		"isolation: each property held before the agent"
	is "$(jget "$R/isolation.json" 'd["phases"]["before_agent"]["network_internal"]["status"]')" \
		not_claimed "isolation: an open run claims no network isolation"
	is "$(stat -c '%U %a' "$R/isolation.json")" "root 644" "isolation.json is root's"

	# Hostile names: the probe's list is NUL-separated and walks no tree another user
	# writes, so names with newlines and tabs in the agent's archive (here inside the results
	# directory, as the CLI mounts it) and in the runner's copy of its tree decide nothing.
	mkdir -p "$R/archive"
	bound=0
	reset_archive
	mount --bind "$D/archive" "$R/archive" 2>/dev/null && bound=1
	run_ep_keep_archive -- "$B/namer"
	[ "$bound" = 1 ] && umount "$R/archive"
	rmdir "$R/archive" 2>/dev/null
	is "$ep_rc" 0 "hostile names: the run exits 0"
	is "$(cat "$D/archive/build.code" 2>/dev/null)" 200 "hostile names: the agent's build ran (its tree is in the runner's copy)"
	is "$(jget "$R/isolation.json" '(d["outcome"], d["scored"], d["failed"])')" "('scored', True, [])" \
		"hostile names: isolation held, the run is scored"
	is "$(jget "$R/isolation.json" 'd["phases"]["before_grading"]["results_hidden"]["status"]')" held \
		"hostile names: results_hidden held before grading"
	ok "$([ "$bound" = 1 ]; echo $?)" "hostile names: the archive was inside the results directory"
	# What the hand-back keeps of that archive.
	A=$D/archive
	is "$(find "$A" -mindepth 1 \( -type l -o -type p -o -type s -o -type b -o -type c \) | wc -l)" 0 \
		"hand-back: no link, FIFO, socket or device is left in the archive"
	ok "$([ ! -e "$A/hardlink" ] && [ "$(cat "$D/src/mine")" = mine ]; echo $?)" \
		"hand-back: the second name of a file of the tree is removed, the file is intact"
	is "$(find "$A" -perm /7022 | wc -l)" 0 "hand-back: nothing set-id, sticky or writable by group or others"
	is "$(find "$A" ! -user root | wc -l)" 0 "hand-back: everything in the archive is the owner's again"
	is "$(stat -c '%a' "$A/open" "$A/open/f" "$A/setuid" "$A/setgid" | tr '\n' ' ')" "755 644 755 755 " \
		"hand-back: the modes that stay"
	is "$(stat -c '%U' /etc/passwd) $(head -c 5 /etc/passwd)" "root root:" "hand-back: /etc/passwd behind the planted link is untouched"
	rm -rf "$D/src/mine" "$D/src/x"* "$D/src/y"*

	# An agent that floods its output: agent.log keeps SSE_AGENT_LOG_MAX bytes and says so.
	: >"$R/agent.log"
	run_ep SSE_AGENT_LOG_MAX=1048576 -- "$B/flooder"
	is "$ep_rc" 0 "flood: the run exits 0"
	like "$(cat "$D/archive/flood" 2>/dev/null)" '^fallocate refused' "flood: the agent's stdout cannot be preallocated"
	like "$(cat "$D/archive/flood" 2>/dev/null)" 'fifo' "flood: it is a pipe"
	sz=$(stat -c %s "$R/agent.log")
	ok "$([ "$sz" -ge 1048576 ] && [ "$sz" -lt 1049000 ]; echo $?)" "flood: agent.log holds the cap and a note ($sz bytes)"
	like "$(tail -c 200 "$R/agent.log")" 'agent.log stops at 1048576 bytes; 3145729 more bytes were left out' \
		"flood: the note says how much was left out"

	# Broken on purpose, several ways at once: a restricted claim on a network with a route
	# out (and no host address to try: no traffic leaves) and a reference mount missing for a
	# reference run.
	mkdir -p "$SB_TMP/open-repo" && echo history >"$SB_TMP/open-repo/HEAD"
	chmod -R a+rX "$SB_TMP/open-repo"
	run_ep SSE_EGRESS=restricted SSE_REFERENCE_RUN=1 SSE_REPO_PATH="$SB_TMP/open-repo" \
		RUN_MARK=broken -- "$B/probe"
	is "$ep_rc" 1 "isolation broken: the entrypoint exits 1"
	ok "$([ ! -e "$D/archive/uid" ]; echo $?)" "isolation broken: the agent never ran"
	ok "$([ ! -e "$R/evaluator.env" ]; echo $?)" "isolation broken: nothing was graded"
	is "$(jget "$R/result.json" 'd["patch_result"]["status"]')" error "isolation broken: status error"
	is "$(jget "$R/result.json" 'd["patch_result"]["error_msg"]')" \
		"Not scored: isolation not established: reference_mount, network_internal, host_unreachable" \
		"isolation broken: every failed property is named at once"
	is "$(jget "$R/result.json" '(d["isolation"]["scored"], d["isolation"]["tier"], d["patch_result"]["build_success"], d["patch_result"]["pov_passed"])')" \
		"(False, None, None, None)" "isolation broken: no tier, no score of any kind"
	like "$(jget "$R/result.json" 'd["patch_result"]["error_log"]')" \
		'^reference_mount \(before_agent\): /reference/patch.diff is absent; this is a reference run' \
		"isolation broken: error_log says what was seen"
	like "$(jget "$R/result.json" 'd["patch_result"]["error_log"]')" '^network_internal \(before_agent\): no address for the egress canary: SSE_NET_CANARY is unset' \
		"isolation broken: the unproven way out is named"
	like "$ep_out" 'isolation before_agent: not established' "isolation broken: the log says so"

	# A task image with places the agent and the runner's scripts share past the read-only
	# root (a 1777 directory, a directory of the agent's, a FIFO and a socket both can
	# open): a check's code could pass the hidden material to the frozen agent through one.
	run_ep SSE_SHARED_WALK_ROOT="$SB_TMP/image-shared" -- "$B/probe"
	is "$ep_rc" 1 "shared places: the entrypoint exits 1"
	ok "$([ ! -e "$D/archive/uid" ]; echo $?)" "shared places: the agent never ran"
	is "$(jget "$R/result.json" 'd["patch_result"]["error_msg"]')" \
		"Not scored: isolation not established: runner_sandbox" "shared places: runner_sandbox failed"
	like "$(jget "$R/isolation.json" 'd["phases"]["before_agent"]["runner_sandbox"]["detail"]')" \
		'^runner: 7 places shared with the agent past the read-only root: ' \
		"shared places: all seven are counted (a 1777 directory, the agent's, a FIFO and a socket both can open, an ACL, a FIFO with two names), none of the unreachable, the link or root's FIFO"
	like "$ep_out" 'places shared by the agent and the runner below .*/image-shared: 7 \([0-9]+ entries looked at in [0-9]+ ms\)' \
		"shared places: the log says how many and what the walk cost"
	if [ "$ro_bound" = 1 ]; then
		run_ep SSE_SHARED_WALK_ROOT="$SB_TMP/image-ro" -- "$B/probe"
		like "$(jget "$R/isolation.json" 'd["phases"]["before_agent"]["runner_sandbox"]["detail"]')" \
			'^runner: 1 place shared with the agent past the read-only root: .*/fifo is a FIFO both can open' \
			"shared places: on a read-only mount only the FIFO counts"
		umount "$SB_TMP/image-ro"
	else
		ok 1 "shared places: could not make a read-only mount to try"
	fi
	run_ep SSE_SHARED_WALK_ROOT="$SB_TMP/image-top" -- "$B/probe"
	like "$(jget "$R/isolation.json" 'd["phases"]["before_agent"]["runner_sandbox"]["detail"]')" \
		'^runner: 1 place shared with the agent past the read-only root: .*/image-top is a directory the agent can write' \
		"shared places: the top of the view is judged too"
	run_ep SSE_SHARED_WALK_ROOT="$SB_TMP/image-deep" -- "$B/probe"
	is "$ep_rc" 1 "shared places: a view too deep to look through is not scored"
	like "$(jget "$R/isolation.json" 'd["phases"]["before_agent"]["runner_sandbox"]["detail"]')" \
		'could not be looked through for places shared with the agent \(too deep, at ' \
		"shared places: and says why"
	run_ep -- "$B/probe"
	is "$(printf '%s\n' "$ep_out" | grep -c 'places shared by the agent and the runner below')" 1 \
		"shared places: looked for once, before the agent (nothing it could write or own is walked)"

	# The scripts' own root (SSE_RUNNER_ROOT: in an image, a copy of it made at build time,
	# images/sandbox/setup-tool-layer.sh), so that code next to the hidden material shares
	# no page of a file with the agent. Missing, open to the agent, or no copy at all (the
	# agent's own /usr bound in): not scored.
	run_ep SSE_RUNNER_ROOT="$SB_TMP/no-such-root" -- "$B/probe"
	is "$ep_rc" 1 "own root: a missing one is not scored"
	like "$(jget "$R/isolation.json" 'd["phases"]["before_agent"]["runner_sandbox"]["detail"]')" \
		'^runner: no root of its own at .*/no-such-root' "own root: and says so"
	mkdir -p "$SB_TMP/open-root/image"
	chmod 0755 "$SB_TMP/open-root"
	run_ep SSE_RUNNER_ROOT="$SB_TMP/open-root/image" -- "$B/probe"
	like "$(jget "$R/isolation.json" 'd["phases"]["before_agent"]["runner_sandbox"]["detail"]')" \
		'^runner: its root .*/open-root/image is open to the agent: .*/open-root has mode 0755' \
		"own root: one the agent could look into is not scored"
	mkdir -p "$SB_TMP/loose-root/image"
	chgrp "$(id -g "$RUNNER_USER")" "$SB_TMP/loose-root"
	chmod 0710 "$SB_TMP/loose-root"
	chmod 0777 "$SB_TMP/loose-root/image"
	run_ep SSE_RUNNER_ROOT="$SB_TMP/loose-root/image" -- "$B/probe"
	like "$(jget "$R/isolation.json" 'd["phases"]["before_agent"]["runner_sandbox"]["detail"]')" \
		'^runner: its root .*/loose-root/image can be changed by others than root \(mode 0777' \
		"own root: one the runner could change is not scored"
	RR=$SB_TMP/bound-root/image
	mkdir -p "$RR/usr" "$RR/etc" "$RR/proc" "$RR/dev" "$RR/sys" "$RR/tmp" "$RR/var/tmp" \
		"$RR$RUNNER_DIR" "$RR$SB_BUILDDIR"
	for l in bin lib lib64 sbin; do ln -s "usr/$l" "$RR/$l"; done
	chgrp "$(id -g "$RUNNER_USER")" "$SB_TMP/bound-root"
	chmod 0710 "$SB_TMP/bound-root"
	if mount --bind /usr "$RR/usr" && mount --bind /etc "$RR/etc" &&
		mount --bind "$SB_BUILDDIR" "$RR$SB_BUILDDIR"; then
		run_ep SSE_RUNNER_ROOT="$RR" -- "$B/probe"
		is "$ep_rc" 1 "own root: one that holds the agent's own files is not scored"
		like "$(jget "$R/isolation.json" 'd["phases"]["before_agent"]["runner_sandbox"]["detail"]')" \
			'^runner: /usr is the agent.s own file \(the scripts have no root of their own\)' \
			"own root: the probe, run in it, finds /usr the same as the agent's"
		umount "$RR$SB_BUILDDIR" "$RR/etc" "$RR/usr"
	else
		ok 1 "own root: could not bind the host's /usr to try"
		ok 1 "own root: (skipped)"
	fi

	# SSE_ISOLATION=record: the same run goes on (for debugging a runner) but stays unscored.
	run_ep SSE_ISOLATION=record SSE_REFERENCE_RUN=1 -- "$B/probe"
	is "$ep_rc" 0 "isolation record mode: the run goes on"
	ok "$([ -e "$D/archive/uid" ] && [ -e "$R/evaluator.env" ]; echo $?)" \
		"isolation record mode: the agent ran and was graded"
	is "$(jget "$R/isolation.json" '(d["scored"], d["enforced"], d["failed"])')" \
		"(False, False, ['reference_mount'])" "isolation record mode: recorded as not scored"

	# The daemon re-applies the pristine copy's 0700 at start (the open copy above is root's
	# again): a place left open before the run is closed before the agent can look.
	is "$(stat -c '%a %U' "$SB_TMP/open-repo")" "700 root" "the daemon closed the open pristine copy at start"

	# Broken during the agent phase (from outside: nothing the agent can do opens it):
	# caught before grading, and grading does not run.
	printf '#!/bin/sh\necho ready >"$SSE_ARCHIVE/ready"\ni=0\nwhile [ ! -e "$GO" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done\necho done >"$SSE_ARCHIVE/opened"\n' >"$B/waiter"
	chmod 0755 "$B/waiter"
	rm -f "$SB_TMP/go" "$R/result.json" "$R/isolation.json"
	start_ep GO="$SB_TMP/go" -- "$B/waiter"
	if wait_for '[ -e "$D/archive/ready" ]' 60; then
		chmod 0755 "$D/repo"
		touch "$SB_TMP/go"
		wait "$ep_pid"
		ep_rc=$?
	else
		kill -KILL "$ep_pid" 2>/dev/null
		diag "$(cat "$SB_TMP/ep.out")"
	fi
	ok "$([ -e "$D/archive/opened" ]; echo $?)" "isolation after the agent: the agent ran to its end"
	ok "$([ ! -e "$R/evaluator.env" ]; echo $?)" "isolation after the agent: grading did not run"
	is "$(jget "$R/isolation.json" '(d["phases"]["before_agent"]["pristine_repo_hidden"]["status"], d["phases"]["before_grading"]["pristine_repo_hidden"]["status"], d["failed"])')" \
		"('held', 'failed', ['pristine_repo_hidden'])" "isolation after the agent: what changed is named, with its phase"
	is "$(jget "$R/result.json" '(d["patch_result"]["status"], d["runtime_result"]["agent_exit_code"])')" \
		"('forfeit', 0)" "isolation after the agent: a forfeit (not an error), the agent's exit recorded"
	is "$(jget "$R/result.json" 'd["patch_result"]["error_msg"]')" \
		"Forfeit: the isolation established before the agent did not hold before grading: pristine_repo_hidden" \
		"isolation after the agent: the forfeit names what broke"
	is "$(jget "$R/isolation.json" '(d["outcome"], d["scored"], d["tier"])')" "('forfeit', True, 'open')" \
		"isolation after the agent: recorded as a forfeit that counts, in the tier it started in"
	chmod 0700 "$D/repo"
else
	diag "python3 missing: isolation checks skipped"
fi

# --- the proxy key's answer from a directory of its own (SSE_KEY_ANSWER: on Kubernetes) ---------
# A run with a model waits for the CLI's word that its key is gone before grading. On
# Kubernetes that word comes in a volume the pod's collect container writes, not in the
# results: the stand-in CLI here answers there once the phase-ended mark appears, and the
# entrypoint must read it there, at once, not give up after 60 s.
if command -v python3 >/dev/null; then
	A=$SB_TMP/answer
	rm -rf "$A"
	mkdir -m 0755 "$A"
	rm -f "$R/agent-phase-ended" "$R/proxy-key-revoked"
	(
		for _ in $(seq 600); do
			[ -f "$R/agent-phase-ended" ] && break
			sleep 0.1
		done
		printf 'revoked\n' >"$A/.new" && mv "$A/.new" "$A/proxy-key-revoked"
	) &
	answerer=$!
	run_ep SSE_PROXY_KEY=1 SSE_KEY_ANSWER="$A" -- "$B/probe"
	wait "$answerer"
	is "$ep_rc" 0 "SSE_KEY_ANSWER: the run exits 0"
	is "$(jget "$R/isolation.json" 'd["proxy_key_before_grading"]')" \
		revoked "SSE_KEY_ANSWER: the answer was read from its own directory (revoked)"
	ok "$([ "$ep_secs" -lt 40 ]; echo $?)" "SSE_KEY_ANSWER: grading did not wait out the 60 s ($ep_secs s)"
	run_ep SSE_PROXY_KEY=1 SSE_KEY_ANSWER=relative/answer -- "$B/probe"
	is "$ep_rc" 1 "SSE_KEY_ANSWER: a relative path is a configuration error (exit 1)"
	rm -rf "$A" "$R/agent-phase-ended"
fi

# --- the network probe's host addresses: SSE_NET_GATEWAY, and SSE_NET_NODE (a pod's node) ------
# In a network namespace of its own with loopback only: 10.99.0.x has no route (silence,
# held), 127.0.0.1 refuses the probe's port (an answer). Only packets to ourselves.
if command -v python3 >/dev/null && command -v unshare >/dev/null && command -v ip >/dev/null; then
	net_ep() { # NAME=VALUE...: run_ep in the namespace
		reset_archive
		timeout -s KILL 120 unshare -n sh -c 'ip link set lo up && exec "$@"' sh \
			env -i "${ep_env[@]}" SSE_EGRESS=restricted SSE_NET_CANARY=10.99.0.1 \
			SSE_NET_GATEWAY=10.99.0.2 "$@" "$EP" -- "$B/probe" >"$SB_TMP/ep.out" 2>&1
		ep_rc=$?
	}
	hu='d["phases"]["before_agent"]["host_unreachable"]'
	net_ep
	is "$(jget "$R/isolation.json" "($hu[\"status\"], d[\"phases\"][\"before_agent\"][\"network_internal\"][\"status\"])")" \
		"('held', 'held')" "network probe: a silent host address and canary hold"
	net_ep SSE_NET_NODE=127.0.0.1
	is "$(jget "$R/isolation.json" "$hu[\"status\"]")" failed \
		"network probe: the pod's node answering fails host_unreachable, though the host address is silent"
	like "$(jget "$R/isolation.json" "$hu[\"detail\"]")" "the pod's node 127\\.0\\.0\\.1:[0-9]+ answered" \
		"network probe: and the detail names the node"
	net_ep SSE_NET_NODE=
	is "$(jget "$R/isolation.json" "$hu[\"status\"]")" failed \
		"network probe: an empty SSE_NET_NODE fails (set, the node was meant to be probed)"
fi

# --- sidecar mode: the task side and the agent side, two entrypoints sharing the results ---------
# On the host both "containers" share every path; what matters here is the hand-over: the
# agent side runs nothing until the task side has recorded its isolation, and a property that
# failed on the task side fails the run.
run_cmd r "$EP" --sidecar-task "$B/probe"
is "$r_rc" 1 "--sidecar-task with a command: exit 1"
like "$r_out$r_err" 'takes no command' "and it says that the agent runs in the agent container"
if command -v python3 >/dev/null; then
	d_mode=$(stat -c '%a' "$D/sock")
	sidecar_reset() {
		rm -f "$R/isolation-task.json" "$R/agent-phase-ended" "$R/isolation.json" "$R/task-entrypoint.log"
		reset_archive
	}
	# start_task [NAME=VALUE...]: the task side in the background; task_pid.
	# In sidecar mode the admin socket's directory is below the agent socket's (both are on
	# the shared socket volume).
	SIDECAR_ADMIN=SSE_ADMIN_SOCKET=$D/sock/admin/admin.sock
	start_task() {
		env -i "${ep_env[@]}" "$SIDECAR_ADMIN" "$@" "$EP" --sidecar-task >"$SB_TMP/task.out" 2>&1 &
		task_pid=$!
	}
	stop_task() {
		kill -TERM "$task_pid" 2>/dev/null
		wait "$task_pid"
		task_rc=$?
	}
	# run_agent_side [NAME=VALUE...] -- COMMAND...
	run_agent_side() {
		local vars=()
		while [ $# -gt 0 ] && [ "$1" != -- ]; do vars+=("$1"); shift; done
		shift
		timeout -s KILL 180 env -i "${ep_env[@]}" "$SIDECAR_ADMIN" SSE_SIDECAR_WAIT=60 ${vars[@]+"${vars[@]}"} \
			"$EP" --sidecar-agent -- "$@" >"$SB_TMP/ep.out" 2>&1
		ep_rc=$?
		ep_out=$(cat "$SB_TMP/ep.out")
	}

	sidecar_reset
	start_task
	run_agent_side -- "$B/probe"
	is "$ep_rc" 0 "sidecar: a sound pair exits 0"
	ok "$([ -e "$D/archive/uid" ] && [ -e "$R/evaluator.env" ]; echo $?)" "sidecar: the agent ran and was graded"
	is "$(jget "$R/isolation.json" '(d["scored"], d["failed"])')" "(True, [])" "sidecar: scored, nothing failed"
	is "$(jget "$R/isolation.json" 'd["phases"]["before_grading"]["runner_identity"]["detail"][:15]')" "task container:" \
		"sidecar: the runner's identity comes from the task side's record"
	is "$(jget "$R/isolation-task.json" '" ".join(sorted(d["phases"]))')" "before_agent before_grading" \
		"sidecar: the task side checked before the agent and again before grading"
	is "$(stat -c '%a %U' "$D/sock")" "711 root" "sidecar: the socket directory is root's, 0711"
	like "$(cat "$R/task-entrypoint.log")" 'isolation before_grading: established' "sidecar: task-entrypoint.log has the task side's checks"
	ok "$(answers; echo $?)" "sidecar: the task side's daemon still serves after grading"
	stop_task
	is "$task_rc" 0 "sidecar: the task side exits 0 when stopped"
	ok "$(! answers; echo $?)" "sidecar: and its daemon is stopped"

	# The task side sees the fix (a reference mount where no agent should see it): the agent
	# side does not run the agent, and the result names the property and the container.
	echo fix >"$SB_TMP/planted-fix"
	sidecar_reset
	start_task SSE_REFERENCE_PATH="$SB_TMP/planted-fix"
	run_agent_side -- "$B/probe"
	is "$ep_rc" 1 "sidecar, task side broken: exit 1"
	ok "$([ ! -e "$D/archive/uid" ] && [ ! -e "$R/evaluator.env" ]; echo $?)" "sidecar, task side broken: the agent never ran, nothing was graded"
	is "$(jget "$R/result.json" '(d["patch_result"]["status"], d["patch_result"]["error_msg"])')" \
		"('error', 'Not scored: isolation not established: reference_mount')" "sidecar, task side broken: unscored, the property named"
	like "$(jget "$R/result.json" 'd["patch_result"]["error_log"]')" 'task container: .*planted-fix is mounted in the task container' \
		"sidecar, task side broken: error_log says which container saw it"
	stop_task

	# No task side at all: the agent side gives up after SSE_SIDECAR_WAIT, runs nothing.
	sidecar_reset
	run_agent_side SSE_SIDECAR_WAIT=2 -- "$B/probe"
	is "$ep_rc" 1 "sidecar, no task side: exit 1"
	ok "$([ ! -e "$D/archive/uid" ]; echo $?)" "sidecar, no task side: the agent never ran"
	like "$ep_out" 'did not record its isolation before_agent within 2 s' "sidecar, no task side: the log says what it waited for"
	chmod "$d_mode" "$D/sock"
fi

is "$(stat -c '%a %U' "$SB_TMP/rp")" "700 root" "the results directory's parent is still 0700 root"

done_testing

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The integrity suite: a hostile agent inside real runs (ssebench run, real images, the real
# engine and the production network) at difficulty 0, 2 and 4 tries every way around the
# protections it knows; it writes one line per attempt into its archive, and this script
# turns each into a TAP check. The agent's committed hooks run as sse-runner in test_patch and
# in grading and leave their own lines in the run's logs. Around the runs this script starts
# what the agent must not reach (a listener container on the default bridge and on a test
# network of its own, a listener on the host) and, at level 4, a second run for the hostile
# one to go after. See tests/integrity/README.md for every check.
#
# SSEBENCH_INTEGRITY_LEVELS ("0 2 4"), SSEBENCH_INTEGRITY_MODE (sandbox, or sidecar: every run,
# the victim's too, in two containers; t0110 runs this script so), SSEBENCH_INTEGRITY_KEEP=DIR
# (copy the run directories there), SSEBENCH_HOME (default: the source tree) and
# SSEBENCH_REGISTRY are honoured.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

HERE=$SB_SRCDIR/tests/integrity
DATASET=$HERE/dataset
TASK=tinyfield-overflow
LEVELS=${SSEBENCH_INTEGRITY_LEVELS:-0 2 4}
MODE=${SSEBENCH_INTEGRITY_MODE:-sandbox}
case $MODE in sandbox | sidecar) ;; *) bail "SSEBENCH_INTEGRITY_MODE must be sandbox or sidecar" ;; esac
DOCKER=/usr/bin/docker
[ "$(id -u)" = 0 ] || skip_all "the integrity suite needs root (Docker, the host guard rule)"
$DOCKER version >/dev/null 2>&1 || "$SB_SRCDIR/scripts/docker-up" >/dev/null 2>&1 || skip_all "no Docker engine"
command -v python3 >/dev/null || skip_all "python3 is needed to read the results"
[ -x "$SSEBENCH" ] || bail "no ssebench binary at $SSEBENCH (run make)"
plan_lazy

export SSEBENCH_RESULTS=$SB_TMP/results
export SSEBENCH_HOME=${SSEBENCH_HOME:-$SB_SRCDIR}
REGISTRY=${SSEBENCH_REGISTRY:-localhost/ssebench}
VERSION=$(cat "$SB_SRCDIR/VERSION")
BASE=$REGISTRY/base-generic-c:$VERSION
PROJECT=${COMPOSE_PROJECT_NAME:-ssebench}
tag=integ$$
TESTNET=sse-integ-net-$$
LISTENER=sse-integ-listener-$$
LISTENER_PORT=18080
HOST_LOG=$SB_TMP/host-listener.log
host_pid=""
victim_pid=""
t_start=$(date +%s)

sb_cleanup_hook() {
	[ -n "$victim_pid" ] && kill "$victim_pid" 2>/dev/null
	[ -n "$host_pid" ] && kill "$host_pid" 2>/dev/null
	for c in $($DOCKER ps -aq --filter "name=ssebench-hostile-L" --filter "name=ssebench-victim-$tag" --filter "name=ssebench-spoiler-$tag" 2>/dev/null); do
		$DOCKER inspect -f '{{.Name}}' "$c" 2>/dev/null | grep -qE -- "-$tag(-task)?\$" && $DOCKER rm -f "$c" >/dev/null 2>&1
	done
	for v in $($DOCKER volume ls -q --filter "label=ssebench.run" 2>/dev/null | grep -E -- "-$tag-(source|sockets|home)\$"); do
		$DOCKER volume rm -f "$v" >/dev/null 2>&1
	done
	for n in $($DOCKER network ls --filter "label=ssebench.run" --format '{{.Name}}' 2>/dev/null | grep -E -- "-$tag\$"); do
		$DOCKER network rm "$n" >/dev/null 2>&1
	done
	$DOCKER rm -f "$LISTENER" >/dev/null 2>&1
	$DOCKER network rm "$TESTNET" >/dev/null 2>&1
	for a in hostile victim spoiler; do
		$DOCKER image rm -f "$REGISTRY/agent-$a/$TASK:$VERSION" "$REGISTRY/agent-$a/sidecar:$VERSION" >/dev/null 2>&1
		$DOCKER image prune -f --filter "label=ssebench.agent=$a" >/dev/null 2>&1
	done
	if [ -n "${SSEBENCH_INTEGRITY_KEEP:-}" ] && [ -d "$SSEBENCH_RESULTS" ]; then
		mkdir -p "$SSEBENCH_INTEGRITY_KEEP" && cp -a "$SSEBENCH_RESULTS" "$SSEBENCH_INTEGRITY_KEEP/results-$tag"
	fi
}

json() { # FILE EXPR: a Python expression over the JSON document d
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null
}

# --- what the agent must not reach --------------------------------------------------------------
run_cmd r "$SSEBENCH" dataset validate --local "$DATASET"
is "$r_rc" 0 "the integrity dataset is valid"
$DOCKER image inspect "$BASE" >/dev/null 2>&1 || bail "no base image $BASE (ssebench images base c)"
$DOCKER network create --label ssebench.integrity=1 "$TESTNET" >/dev/null || bail "cannot create $TESTNET"
$DOCKER run -d --rm --name "$LISTENER" --label ssebench.integrity=1 --network bridge "$BASE" perl -e '
	use IO::Socket::INET; $| = 1;
	my $s = IO::Socket::INET->new(LocalPort => $ARGV[0], Listen => 64, ReuseAddr => 1) or die "listen: $!";
	while (my $c = $s->accept) { print "conn ", $c->peerhost, "\n"; print $c "HTTP/1.0 200 OK\r\n\r\nLISTENER-REACHED\n"; close $c }' \
	"$LISTENER_PORT" >/dev/null || bail "cannot start the listener container"
$DOCKER network connect "$TESTNET" "$LISTENER" || bail "cannot attach the listener to $TESTNET"
LISTENER_IPS=$($DOCKER inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}' "$LISTENER")
LISTENER_IPS=${LISTENER_IPS% }
python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 0)); s.listen(64)
open(sys.argv[1] + ".port", "w").write("%d\n" % s.getsockname()[1])
while True:
    c, a = s.accept()
    with open(sys.argv[1], "a") as f: f.write("conn %s %d\n" % (a[0], int(time.time() * 1000)))
    try: c.sendall(b"HTTP/1.0 200 OK\r\n\r\nHOST-LISTENER\n")
    except OSError: pass
    c.close()' "$HOST_LOG" &
host_pid=$!
for _ in $(seq 50); do [ -s "$HOST_LOG.port" ] && break; sleep 0.1; done
HOST_PORT=$(cat "$HOST_LOG.port" 2>/dev/null)
[ -n "$HOST_PORT" ] || bail "the host listener did not start"
# Controls: both listeners answer where nothing stops them, so "blocked" below means blocked.
c=$(curl -s -m 5 "http://127.0.0.1:$HOST_PORT/")
is "$c" HOST-LISTENER "control: the host listener answers on the host"
ok=0
for ip in $LISTENER_IPS; do
	[ "$(curl -s -m 5 "http://$ip:$LISTENER_PORT/")" = LISTENER-REACHED ] || ok=1
done
ok $ok "control: the listener container answers from the host on $LISTENER_IPS"
c=$($DOCKER run --rm --network "$TESTNET" "$BASE" curl -s -m 5 "http://${LISTENER_IPS##* }:$LISTENER_PORT/" 2>/dev/null)
is "$c" LISTENER-REACHED "control: the listener container answers a container on $TESTNET"
host_addrs() { # every IPv4 address of the host but loopback (each run's gateway the agent finds itself)
	ip -4 -o addr show 2>/dev/null | awk '{print $4}' | cut -d/ -f1 | grep -v '^127\.' | tr '\n' ' '
}
diag "listener container: $LISTENER_IPS port $LISTENER_PORT; host listener port $HOST_PORT; host addresses: $(host_addrs)"

# make_agents DIR LEVEL [KEY=VALUE...]: the agent folders for one run, with targets.env.
make_agents() {
	local dir=$1 level=$2
	shift 2
	rm -rf "$dir"
	mkdir -p "$dir"
	cp -a "$HERE/agents/hostile" "$HERE/agents/victim" "$HERE/agents/spoiler" "$dir/"
	{
		echo "LEVEL=$level"
		echo "MODE=$MODE"
		echo "LISTENER_IPS='$LISTENER_IPS'"
		echo "LISTENER_PORT=$LISTENER_PORT"
		echo "HOST_PORT=$HOST_PORT"
		echo "HOST_ADDRS='$(host_addrs)'"
		for kv in "$@"; do echo "$kv"; done
	} >"$dir/hostile/targets.env"
}

# Per level: the checks hostile.sh must report, and those a level adds.
COMMON_CHECKS="agent-uid disk-counters agent-groups agent-caps agent-nnp agent-seccomp agent-env agent-fds difficulty-env
core-rlimit one-commit git-dirs read-config read-patch read-test-diff read-pocs list-ssebench read-repo
read-reference-mount read-results read-secrets read-runner-dir read-daemon-state hidden-dir-modes
fs-grep-markers hardlink-root-file symlink-root-file admin-socket-connect admin-socket-proc-root
admin-socket-replace unix-socket-sweep agent-socket-unlink agent-socket-rename agent-socket-replace
socket-dirs tcp-port-hijack ref-patch-socket ref-patch-tcp-notoken ref-patch-tcp-token ref-patch-tcp-xtoken
ref-patch-tcp-badtoken ref-patch-tcp-own-address ref-patch-variants admin-routes
agent-exited-not-carried-out public-view-clean hooks-installed
bencher-build-sock bencher-run_poc-sock bencher-function_test-sock bencher-intent_test-sock
bencher-build-tcp bencher-run_poc-tcp bencher-function_test-tcp bencher-intent_test-tcp
tools-tcp-notoken bencher-grading-flag bencher-param-tricks bencher-poc-path-tricks
proc-other-users-during-checks proc-runner-paths proc-daemon-workers proc-root-files proc-root-cmdline
bencher-unknown-actions ptrace-root process-vm-readv signal-root kernel-knobs setuid-binaries setuid-probe filecap-probe
setuid-copy userns net-listener-containers net-host-gateway net-host-addresses net-bash-tool
bash-tool-works bash-tool-groups bash-tool-privs bash-tool-env bash-tool-env-matches-agent bash-tool-fds bash-tool-read-hidden
agent-cgroup-held agent-cgroup-escape bash-tool-admin-socket bash-tool-ptrace-root symlink-in-tree-diff dialog-symlink git-config-exec
other-runs-scan leftovers-started no-marker-in-replies agent-finished"
level_checks() {
	case $1 in
	0) echo "runner-leftovers-dead exfil-poc-via-runner exfil-hidden-test-via-runner waker-during-hidden-checks page-cache-control page-cache-after-run_poc page-cache-via-build proc-dentries-after-run_poc dev-times-after-run_poc runner-area-names-via-build" ;;
	1) echo "runner-leftovers-dead exfil-poc-via-runner waker-during-hidden-checks page-cache-control page-cache-after-run_poc page-cache-via-build proc-dentries-after-run_poc dev-times-after-run_poc runner-area-names-via-build" ;;
	2 | 3) echo "runner-leftovers-dead" ;;
	esac
	[ "${2:-}" = victim ] && echo "other-run-unreachable other-run-reference-patch other-run-diff other-run-bash other-run-endpoints"
}
HOOK_CHECKS="runner-uid runner-disk-counters runner-ofd-locks runner-privs runner-env read-patch read-test-diff read-pocs read-config list-ssebench
read-repo read-results read-secrets read-reference list-runner-dir agent-places write-outside admin-socket
agent-socket-reference tcp-reference net-reach runner-vs-root stage-scan grep-fix leftover-alive"
HB_KINDS="doublefork setsid nohup sigignore bashtool-setsid bashtool-bg"
markers_re='SSEBENCH-INTEGRITY-(FIX-7f3a|HIDDEN-c41d|POC-9e2b)'

# check_handback PREFIX DIR: nothing in a run directory on the host is a link, a special
# file, set-id, writable by others, a second name of a file or the agent's uid's; and the
# run's file system is gone.
check_handback() {
	local P=$1 dir=$2 bad
	bad=$(find "$dir" \( -type l -o -type p -o -type s -o -type b -o -type c -o -perm -4000 -o -perm -2000 -o -perm -0002 \
		-o -uid 1000 -o -links +1 -type f \) -printf '%M %u %p\n' 2>/dev/null | head -5)
	ok "$([ -z "$bad" ]; echo $?)" "$P the run directory holds no link, special file, set-id or shared-writable mode, nothing of the agent's uid"
	[ -z "$bad" ] || diag "$bad"
	ok "$([ ! -e "$SSEBENCH_RESULTS/.disks/${dir##*/}" ]; echo $?)" "$P the run's file system was released"
}

# check_run LEVEL DIR RC [victim]: everything the run left, judged.
check_run() {
	local L=$1 dir=$2 rc=$3 extra=${4:-} out st name detail f
	local P="L$L:"
	[ "$MODE" = sidecar ] && P="sidecar L$L:"
	out=$dir/archive/hostile.txt
	is "$rc" 0 "$P the run exits 0 (graded)"
	ok "$([ -f "$dir/result.json" ] && [ ! -L "$dir/result.json" ]; echo $?)" "$P result.json is a regular file"
	st=$(json "$dir/result.json" 'd["patch_result"]["status"]')
	is "$st" failed "$P grade-honest: graded 'failed' (no fix: neither passed nor an error)"
	[ "$st" = failed ] || diag "$(json "$dir/result.json" 'd["patch_result"]["error_msg"]')"
	is "$(json "$dir/result.json" 'd["patch_result"]["pov_passed"]')" 0 "$P grade-honest: the PoC still reproduces in grading"
	is "$(json "$dir/result.json" 'd["config"]["difficulty"]')" "$L" "$P the result records difficulty $L"
	if [ ! -s "$out" ]; then
		ok 1 "$P the hostile agent reported (archive/hostile.txt)"
		diag "$(tail -20 "$dir/agent.log" 2>/dev/null)"
		return
	fi
	# Every line is a check; info lines are notes.
	while read -r name st detail; do
		case $st in
		info) diag "$P $name: $detail" ;;
		blocked | ok) ok 0 "$P $name" ;;
		*)
			ok 1 "$P $name"
			diag "$st: $detail" ;;
		esac
	done <"$out"
	for name in $COMMON_CHECKS $(level_checks "$L" "$extra"); do
		grep -q "^$name " "$out" || { ok 1 "$P $name (missing: the agent never reported it)"; }
	done
	[ "$(grep -c '^agent-finished ok' "$out")" = 1 ] || diag "$(tail -30 "$dir/agent.log" 2>/dev/null)"

	# The committed hooks, as sse-runner: in grading always, in test_patch when a check ran.
	grep -h '^HOOK ' "$dir"/scriptrunner-*.log 2>/dev/null | sort -u >"$SB_TMP/hooks-$L"
	local phases=grading
	[ "$L" -le 3 ] && phases="test_patch grading"
	for ph in $phases; do
		for name in $HOOK_CHECKS; do
			local lines bad
			lines=$(awk -v p="$ph" -v n="$name" '$2 == p && $4 == n' "$SB_TMP/hooks-$L")
			bad=$(printf '%s\n' "$lines" | awk '$5 != "blocked" && $5 != "ok" && $5 != "info" && NF > 0')
			if [ -z "$lines" ]; then
				ok 1 "$P hook[$ph] $name (missing: the hook did not run in $ph)"
			else
				ok "$([ -z "$bad" ]; echo $?)" "$P hook[$ph] $name ($(printf '%s\n' "$lines" | awk '{print $3}' | sort -u | tr '\n' ' ' | sed 's/ $//'))"
				[ -z "$bad" ] || diag "$bad"
			fi
		done
	done
	like "$(awk '$2 == "grading" {print $3}' "$SB_TMP/hooks-$L" | sort -u | tr '\n' ' ')" '^build check poc $' \
		"$P the hooks ran in every grading check (build, PoC, tests)"
	awk '$5 == "info"' "$SB_TMP/hooks-$L" | sed 's/^/hook note: /' | while read -r l; do diag "$l"; done

	# Processes left behind: every heartbeat stopped before grading started.
	local t_end t_eval
	t_end=$(python3 - "$dir/entrypoint.log" <<'EOF'
import datetime, sys
for line in open(sys.argv[1]):
    if "evaluator started" in line:
        t = datetime.datetime.strptime(line.split()[0], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
        print(int(t.timestamp() * 1000)); break
EOF
)
	t_eval=${t_end:-0}
	local kinds=$HB_KINDS
	[ "$extra" = victim ] && kinds="$kinds forkbomb"
	for k in $kinds; do
		f=$dir/archive/hb-$k
		local last
		last=$(tr -dc '0-9' <"$f" 2>/dev/null)
		if [ -z "$last" ] || [ "$t_eval" = 0 ]; then
			ok 1 "$P leftover $k: dead before grading (no heartbeat or no 'evaluator started')"
			continue
		fi
		ok "$([ "$last" -lt "$t_eval" ]; echo $?)" "$P leftover $k: dead before grading"
		[ "$last" -lt "$t_eval" ] || diag "last heartbeat $last ms, evaluator started $t_eval ms"
	done

	# The hand-back: what the agent planted in its archive (links to root's files and to the
	# run directory) is not in the run directory, and nothing there is a link, a special
	# file, set-id, writable by others or the agent's.
	bad=""
	for l in result.json summary.json dialog.jsonl final.patch entrypoint.log results-dir run-dir etc; do
		[ -L "$dir/archive/$l" ] && bad="$bad $l"
	done
	ok "$([ -z "$bad" ]; echo $?)" "$P the links the agent planted in its archive were left behind"
	[ -z "$bad" ] || diag "still links:$bad"
	check_handback "$P" "$dir"
	bad=""
	ok "$([ -z "$bad" ]; echo $?)" "$P run directory files are regular files"
	[ -z "$bad" ] || diag "not regular:$bad"
	ok "$([ ! -e "$dir/archive/gitmark" ]; echo $?)" "$P git configuration planted in the tree ran nothing (test_patch, capture, grading)"
	[ -e "$dir/archive/gitmark" ] && diag "$(cat "$dir/archive/gitmark")"
	bad=$(grep -rlsE "$markers_re" "$dir/archive" "$dir/final.patch" "$dir/commits.log" "$dir/agent.log" 2>/dev/null)
	ok "$([ -z "$bad" ]; echo $?)" "$P no hidden material in what the agent left (archive, final.patch, commits.log, agent.log)"
	[ -z "$bad" ] || diag "$bad"
	like "$(cat "$dir/final.patch")" '^\+\+\+ b/\.hooks/hook\.sh' "$P the committed hooks are in final.patch (so grading ran them)"
}

# run_level LEVEL [KEY=VALUE...]: one hostile run.
run_level() {
	local L=$1 agents=$SB_TMP/agents-L$1 t0
	shift
	make_agents "$agents" "$L" "TASK_HOST=ssebench-hostile-L$L-$tag-task" "$@"
	t0=$(date +%s)
	run_cmd r env SSEBENCH_AGENTS="$agents" ${RUN_ENV:-} "$SSEBENCH" run --local "$DATASET" --task "$TASK" \
		--agent hostile --model none --difficulty "$L" --run-id "hostile-L$L-$tag" --timeout 900 --mode "$MODE"
	diag "L$L: run took $(($(date +%s) - t0)) s: $(printf '%s\n' "$r_out" | tail -2 | tr '\n' ' ')"
	[ "$r_rc" = 0 ] || diag "$(printf '%s\n' "$r_err" | tail -20)"
	RUN_RC=$r_rc
	RUN_DIR=$SSEBENCH_RESULTS/$TASK/none/hostile/hostile-L$L-$tag
}

for L in $LEVELS; do
	case $L in
	0) run_level 0; check_run 0 "$RUN_DIR" "$RUN_RC" ;;
	2) run_level 2 FILL_MB=1024; check_run 2 "$RUN_DIR" "$RUN_RC" ;;
	4)
		# A second run on the same network, tools open (level 0), waiting to be attacked.
		vdir=$SSEBENCH_RESULTS/$TASK/none/victim/victim-$tag
		# The victim's archive while it runs: on its own file system (copied out at the end).
		varch=$SSEBENCH_RESULTS/.disks/victim-$tag/mnt/archive
		make_agents "$SB_TMP/agents-victim" 0
		SSEBENCH_AGENTS=$SB_TMP/agents-victim "$SSEBENCH" run --local "$DATASET" --task "$TASK" --agent victim --model none \
			--difficulty 0 --run-id "victim-$tag" --timeout 1800 --mode "$MODE" >"$SB_TMP/victim.out" 2>&1 &
		victim_pid=$!
		for _ in $(seq 1200); do
			[ -e "$varch/victim-started" ] && break
			kill -0 "$victim_pid" 2>/dev/null || break
			sleep 0.5
		done
		# The victim's daemon: in its only container, or in its task container (sidecar).
		vname=ssebench-victim-$tag
		[ "$MODE" = sidecar ] && vname=$vname-task
		vip=$($DOCKER inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$vname" 2>/dev/null)
		ok "$([ -n "$vip" ]; echo $?)" "L4: the victim run is in its agent phase (${vip:-no address})"
		[ -n "$vip" ] || diag "$(tail -20 "$SB_TMP/victim.out")"
		# Level 4 with the victim, and a fork bomb under a small pids limit at the end.
		RUN_ENV="SSEBENCH_PIDS=512" run_level 4 "VICTIM_IP=$vip" FORKBOMB=1
		check_run 4 "$RUN_DIR" "$RUN_RC" victim
		touch "$varch/stop"
		wait "$victim_pid"
		vrc=$?
		victim_pid=""
		is "$vrc" 0 "L4: the victim run exits 0"
		v=$vdir/archive/victim.txt
		like "$(cat "$v" 2>/dev/null)" '^victim-untouched blocked' "L4: victim-untouched: nothing the other run sent ran in the victim"
		like "$(cat "$v" 2>/dev/null)" '^victim-stopped ok told to stop' "L4: the victim stayed in its agent phase until told to stop"
		st=$(json "$vdir/result.json" 'd["patch_result"]["status"]')
		like "$st" '^(passed|failed)$' "L4: the victim run was graded ($st)"
		;;
	*) bail "no plan for level $L" ;;
	esac
done

# The spoiler: a run that goes for its own grade instead of the answer, on a small disk.
make_agents "$SB_TMP/agents-spoiler" 0
P="spoiler:"
[ "$MODE" = sidecar ] && P="sidecar spoiler:"
t0=$(date +%s)
run_cmd r env SSEBENCH_AGENTS="$SB_TMP/agents-spoiler" SSEBENCH_DISK=1g "$SSEBENCH" run --local "$DATASET" --task "$TASK" \
	--agent spoiler --model none --difficulty 0 --run-id "spoiler-$tag" --timeout 900 --mode "$MODE"
diag "spoiler: run took $(($(date +%s) - t0)) s: $(printf '%s\n' "$r_out" | tail -2 | tr '\n' ' ')"
[ "$r_rc" = 0 ] || diag "$(printf '%s\n' "$r_err" | tail -20)"
sdir=$SSEBENCH_RESULTS/$TASK/none/spoiler/spoiler-$tag
is "$r_rc" 0 "$P the run exits 0 (graded)"
is "$(json "$sdir/result.json" '(d["scored"], d["isolation"]["outcome"])')" "(True, 'scored')" \
	"$P scored: every isolation property held (the build's leftover did not stop the probe)"
is "$(json "$sdir/result.json" 'd["patch_result"]["status"]')" failed "$P graded 'failed', not an error"
like "$(json "$sdir/result.json" 'd["patch_result"]["error_msg"]')" '^Patch capture failed' \
	"$P the tree the capture could not take is the agent's failure (Patch capture failed)"
if [ -s "$sdir/archive/spoiler.txt" ]; then
	while read -r name st detail; do
		case $st in
		info) diag "$P $name: $detail" ;;
		blocked | ok) ok 0 "$P $name" ;;
		*) ok 1 "$P $name"; diag "$st: $detail" ;;
		esac
	done <"$sdir/archive/spoiler.txt"
	for name in build-with-leftover leftover-killer-dead disk-filled spoiler-finished; do
		grep -q "^$name " "$sdir/archive/spoiler.txt" || ok 1 "$P $name (missing: the agent never reported it)"
	done
else
	ok 1 "$P the spoiler reported (archive/spoiler.txt)"
	diag "$(tail -20 "$sdir/agent.log" 2>/dev/null)"
fi
check_handback "$P" "$sdir"

# Nothing reached the listeners from a run container.
sleep 1
conns=$(awk '{print $2}' "$HOST_LOG" 2>/dev/null | sort | uniq -c | tr '\n' ';')
ok "$(awk '$2 != "127.0.0.1"' "$HOST_LOG" 2>/dev/null | grep -q . && echo 1 || echo 0)" \
	"the host listener saw no connection but the host's own control"
diag "host listener connections: ${conns:-none}"
peers=$($DOCKER logs "$LISTENER" 2>/dev/null | awk '/^conn / {print $2}' | sort -u | tr '\n' ' ')
# The controls' peers: the host (through the gateways of the bridge and of the test network)
# and the control container on the test network. Anything else came from a run.
allowed=$($DOCKER network inspect -f '{{range .IPAM.Config}}{{.Subnet}} {{end}}' "$TESTNET" 2>/dev/null)
allowed="$allowed $(ip -4 -o addr show dev docker0 2>/dev/null | awk '{print $4}' | cut -d/ -f1)"
ok "$(python3 -c '
import ipaddress, sys
nets = [ipaddress.ip_network(n, strict=False) for n in sys.argv[1].split()]
sys.exit(1 if any(not any(ipaddress.ip_address(p) in n for n in nets) for p in sys.argv[2].split()) else 0)' "$allowed" "$peers"; echo $?)" \
	"the listener container saw no connection but the controls' (from $allowed)"
diag "listener container peers: ${peers:-none}"
diag "suite wall time: $(($(date +%s) - t_start)) s"
done_testing

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Sidecar mode end to end on the small test task (docs/sidecar.md): the reference
# agent passes and the dummy agent fails, graded as in sandbox mode; the run is two containers
# and three volumes (source, home, sockets), all labelled with the run, all gone afterwards;
# what the agent user sees from the agent container (no task files at all, the agent socket
# but not the admin socket, the tree with one commit); the isolation record holds what both
# containers checked; a kept run keeps both containers and volumes for the runs commands;
# Ctrl-C stops it and leaves nothing behind. The integrity suite runs in this mode too
# (integrity/t0110).
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
. "$SB_SRCDIR/tests/e2e/lib-e2e.sh"

e2e_require
TASK=${SSEBENCH_E2E_TASK:-$SMALL}
DATASET=${SSEBENCH_E2E_DATASET:-$SMALL_DATASET}
[ -d "$DATASET/$TASK" ] || bail "no task $TASK in $DATASET"
plan_lazy
tag=sc$$
REGISTRY=${SSEBENCH_REGISTRY:-localhost/ssebench}
VERSION=$(cat "$SB_SRCDIR/VERSION")
leftovers() { # RUN_ID: containers and volumes still labelled with it
	echo "$(($($DOCKER ps -aq --filter "label=ssebench.run=$1" | wc -l) + $($DOCKER volume ls -q --filter "label=ssebench.run=$1" | wc -l)))"
}

# The reference agent.
run_cmd r "$SSEBENCH" run --local "$DATASET" --task "$TASK" --agent reference --mode sidecar --run-id "ref-$tag" --timeout 1800
is "$r_rc" 0 "sidecar reference run: exit 0"
[ "$r_rc" = 0 ] || diag "$(printf '%s\n' "$r_err" | tail -30)"
like "$r_err" 'sidecar mode is experimental' "the CLI says that sidecar mode is experimental"
like "$r_err" "starting the task container ssebench-ref-$tag-task" "the CLI names the task container"
dir=$SSEBENCH_RESULTS/$TASK/none/reference/ref-$tag
is "$(field "$dir/result.json" 'd["patch_result"]["status"]')" passed "reference: status passed"
is "$(field "$dir/result.json" '"%s/%s" % (d["patch_result"]["pov_passed"], d["patch_result"]["pov_total"])')" 1/1 "reference: the PoC no longer reproduces"
is "$(field "$dir/result.json" '(d["patch_result"]["func_test_success"], d["patch_result"]["intent_test_success"])')" "(True, True)" "reference: functional and hidden tests pass"
# The freezer cgroup holds the bash calls in the task container only; the record says so.
like "$(field "$dir/result.json" 'd["config"]["agent_freezer"]')" '^(cgroup-v[12]-task-container|signals)$' "reference: config.agent_freezer names the task container"
is "$(field "$dir/result.json" '(d["config"]["mode"], d["config"]["tool_layer"])')" "('sidecar', None)" "reference: config.mode sidecar, no tool layer"
is "$(field "$dir/summary.json" 'd["config"]["mode"]')" sidecar "reference: summary.json records the mode"
is "$(field "$dir/summary.json" '(d["images"]["task"], d["images"]["agent"])')" \
	"('$REGISTRY/tool-sidecar/$TASK:$VERSION', '$REGISTRY/agent-reference/sidecar:$VERSION')" \
	"reference: the task image is tool-sidecar/<task>, the agent image agent-reference/sidecar"
is "$(field "$dir/result.json" '(d["scored"], d["isolation"]["tier"])')" "(True, 'restricted')" "reference: scored, tier restricted"
is "$(field "$dir/result.json" 'd["isolation"]["phases"]["before_agent"]["runner_identity"]["detail"][:15]')" "task container:" \
	"reference: the runner's identity comes from the task container's record"
is "$(field "$dir/result.json" 'd["isolation"]["phases"]["before_grading"]["reference_mount"]["status"]')" held \
	"reference: the fix is mounted in the agent container only"
ok "$([ -s "$dir/final.patch" ] && [ -s "$dir/task-entrypoint.log" ] && [ -s "$dir/daemon.log" ]; echo $?)" \
	"reference: final.patch, the task container's log and daemon.log are in the run directory"
is "$(leftovers "ref-$tag")" 0 "reference: no container or volume of the run is left"

# The dummy agent.
run_cmd r "$SSEBENCH" run --local "$DATASET" --task "$TASK" --agent dummy --mode sidecar --run-id "dummy-$tag" --timeout 1800
is "$r_rc" 0 "sidecar dummy run: exit 0 (graded)"
dir=$SSEBENCH_RESULTS/$TASK/none/dummy/dummy-$tag
is "$(field "$dir/result.json" 'd["patch_result"]["status"]')" failed "dummy: status failed"
is "$(field "$dir/result.json" '(d["patch_result"]["build_success"], d["patch_result"]["pov_passed"])')" "(True, 0)" \
	"dummy: the build works, the PoC still crashes"
is "$(field "$dir/result.json" 'd["scored"]')" True "dummy: scored"
is "$(cat "$dir/final.patch")" "" "dummy: empty final.patch"

# What the agent user sees from the agent container.
run_cmd r "$SSEBENCH" run --local "$SMALL_DATASET" --task "$SMALL" --agent probe --model none --mode sidecar --run-id "probe-$tag" --timeout 600
is "$r_rc" 0 "sidecar probe run: exit 0"
p=$SSEBENCH_RESULTS/$SMALL/none/probe/probe-$tag/archive/probe.txt
probe() { awk -v k="$1: " 'index($0, k) == 1 { print substr($0, length(k) + 1) }' "$p"; }
is "$(probe uid)" 1000 "agent container: the agent runs as uid 1000"
is "$(probe groups)" 1000 "agent container: model has no supplementary groups"
is "$(probe commits)" 1 "agent container: the shared tree has exactly one commit"
is "$(probe commit-subject)" "buggy commit" "agent container: and it is 'buggy commit'"
for f in /ssebench/config.yaml /ssebench/diffs/patch.diff /ssebench-repo /var/lib/ssebench/results /run/ssebench/admin/admin.sock; do
	is "$(probe "readable $f")" no "agent container: $f is not readable"
done
like "$(probe daemon-version)" '"version"' "agent container: the agent socket on the shared volume answers"
is "$(probe reference-on-agent-socket)" 403 "agent container: /reference/patch is refused on the agent socket"
is "$(probe token-set)" yes "agent container: the agent got the run token"
is "$(probe mcp-server)" "ssebench MCP Server" "agent container: the MCP server answers at \$SSE_MCP_URL"
is "$(probe mcp-test-patch)" "test_patch result: every check that ran passed." "agent container: test_patch ran the level-2 checks (build, functional tests)"
is "$(probe admin-env)" no "agent container: the agent does not know the admin socket"
is "$(probe runner-ids)" "" "agent container: there is no runner here (scripts run in the task container)"
is "$(probe capeff):$(probe nonewprivs):$(probe seccomp)" 0000000000000000:1:2 "agent container: no capabilities, no_new_privs, seccomp"

# A kept run: the task container stays up, the agent container and the volumes stay.
run_cmd r "$SSEBENCH" run --local "$SMALL_DATASET" --task "$SMALL" --agent dummy --mode sidecar --run-id "keep-$tag" \
	--keep-container --timeout 600
is "$r_rc" 0 "kept sidecar run: exit 0 once graded"
like "$r_err" "kept: the containers and volumes labelled ssebench.run=keep-$tag" "the CLI says what it kept"
is "$($DOCKER ps -q --filter "label=ssebench.run=keep-$tag" --filter label=ssebench.sidecar-role=task | wc -l)" 1 \
	"kept: the task container is running"
is "$($DOCKER ps -aq --filter "label=ssebench.run=keep-$tag" --filter label=ssebench.sidecar-role=agent | wc -l)" 1 \
	"kept: the agent container is there"
is "$($DOCKER volume ls -q --filter "label=ssebench.run=keep-$tag" | wc -l)" 3 "kept: its three volumes are there (source, home, sockets)"
vol=$($DOCKER volume ls -q --filter "label=ssebench.run=keep-$tag" | grep -- '-sockets$')
is "$($DOCKER run --rm --network none -v "$vol:/s:ro" --entrypoint /usr/bin/stat "$REGISTRY/tool-sidecar-agent:$VERSION" -c '%a %U' /s /s/sse.sock /s/admin /s/admin/admin.sock 2>&1 | tr '\n' ' ')" \
	"711 root 666 root 700 root 600 root " "kept: the socket volume is root's 0711, the agent socket 0666, the admin socket 0600 in a 0700 directory"
run_cmd r "$SSEBENCH" runs list --json
like "$r_out" "\"run_id\": \"keep-$tag\"" "runs list shows the kept sidecar run"
run_cmd r "$SSEBENCH" runs list
like "$r_out" "keep-$tag +sidecar task +running" "runs list: the task container, running"
like "$r_out" "keep-$tag +sidecar agent +exited +0 " "runs list: the agent container, exited 0"
run_cmd r "$SSEBENCH" runs inspect "keep-$tag"
like "$r_out" '^role +"task"' "runs inspect shows the task container"
like "$r_out" '^role +"agent"' "runs inspect shows the agent container"
run_cmd r "$SSEBENCH" runs stop --grace 5 "keep-$tag"
is "$r_rc" 0 "runs stop"
is "$($DOCKER ps -q --filter "label=ssebench.run=keep-$tag" | wc -l)" 0 "runs stop: no container of the run is running"
run_cmd r "$SSEBENCH" runs remove "keep-$tag"
is "$r_rc" 0 "runs remove"
is "$(leftovers "keep-$tag")" 0 "runs remove takes both containers and the volumes"
is "$(ls -d /sys/fs/cgroup/unified/ssebench/"keep-$tag" /sys/fs/cgroup/freezer/ssebench/"keep-$tag" 2>/dev/null)" "" \
	"runs remove takes the kept run's freezer cgroup"

# Ctrl-C in the agent phase: both containers and the volumes go, exit 130.
interrupt_in_grading "int-$tag" --mode sidecar
is "$int_rc" 130 "Ctrl-C during a sidecar run: exit 130"
like "$(field "$idir/result.json" 'd["patch_result"]["error_msg"]')" 'interrupted' "the interrupted run's result says so"
is "$(leftovers "int-$tag")" 0 "and none of its containers or volumes is left"

done_testing

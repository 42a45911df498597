#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# End to end with real images and a real engine, on the small test task (quick to grade; a
# pilot task with SSEBENCH_E2E_DATASET and SSEBENCH_E2E_TASK): the reference agent passes, the
# dummy agent fails (the build works, the PoC still crashes); inside a run the agent user sees
# one commit, no supplementary groups and none of the hidden material; --require-pass, a kept
# container with the runs commands, and Ctrl-C during grading. The pilot's own tasks go
# through the same two agents in t0200 (ssebench dataset verify).
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
. "$SB_SRCDIR/tests/e2e/lib-e2e.sh"

e2e_require
TASK=${SSEBENCH_E2E_TASK:-$SMALL}
DATASET=${SSEBENCH_E2E_DATASET:-$SMALL_DATASET}
[ -d "$DATASET/$TASK" ] || bail "no task $TASK in $DATASET"
[ -d "$SMALL_DATASET/$SMALL" ] || bail "no task $SMALL in $SMALL_DATASET"
plan_lazy
tag=e2e$$

# Fail fast, before anything is built.
run_cmd r "$SSEBENCH" run --local "$DATASET" --task no-such-task --agent dummy
is "$r_rc" 1 "an unknown task: exit 1"
like "$r_err" "no task 'no-such-task'" "and it is named"
run_cmd r "$SSEBENCH" run --local "$DATASET" --task "$TASK" --agent no-such-agent
is "$r_rc" 1 "an unknown agent: exit 1"
run_cmd r "$SSEBENCH" run --local "$DATASET" --task "$TASK" --agent dummy --difficulty 7
is "$r_rc" 2 "a bad difficulty: exit 2"
run_cmd r "$SSEBENCH" run --local "$DATASET" --task "$TASK" --agent dummy --mode hybrid
is "$r_rc" 2 "an unknown --mode: exit 2"
like "$r_err" "sandbox or sidecar" "and the two modes are named"

# The reference agent.
run_cmd r "$SSEBENCH" run --local "$DATASET" --task "$TASK" --agent reference --run-id "ref-$tag" --timeout 1800
is "$r_rc" 0 "reference run: exit 0"
diag "$(printf '%s\n' "$r_out" | tail -3)"
[ "$r_rc" = 0 ] || diag "$(printf '%s\n' "$r_err" | tail -30)"
dir=$SSEBENCH_RESULTS/$TASK/none/reference/ref-$tag
is "$(field "$dir/result.json" 'd["patch_result"]["status"]')" passed "reference: status passed"
is "$(field "$dir/result.json" 'd["patch_result"]["build_success"]')" True "reference: built"
is "$(field "$dir/result.json" '"%s/%s" % (d["patch_result"]["pov_passed"], d["patch_result"]["pov_total"])')" 1/1 "reference: the PoC no longer reproduces"
is "$(field "$dir/result.json" 'd["patch_result"]["func_test_success"]')" True "reference: functional tests pass"
is "$(field "$dir/result.json" 'd["patch_result"]["intent_test_success"]')" True "reference: hidden tests pass"
is "$(field "$dir/result.json" 'd["config"]["reference_run"]')" True "reference: config.reference_run"
is "$(field "$dir/result.json" '(d["scored"], d["isolation"]["tier"])')" "(True, 'restricted')" "reference: scored, tier restricted"
is "$(field "$dir/result.json" 'd["isolation"]["phases"]["before_agent"]["reference_mount"]["status"]')" held "reference: the reference mount was there, as claimed"
is "$(field "$dir/summary.json" 'd["task"]["id"]')" "$TASK" "reference: summary names the task"
is "$(field "$dir/summary.json" '(d["run_id"], d["config"]["mode"], d["config"]["egress"], d["config"]["difficulty"])')" "('ref-$tag', 'sandbox', 'restricted', 2)" "reference: summary config"
ok "$([ -s "$dir/final.patch" ] && [ -s "$dir/reference.patch" ]; echo $?)" "reference: final.patch and reference.patch are kept"
is "$(readlink "$SSEBENCH_RESULTS/$TASK/none/reference/latest")" "ref-$tag" "reference: latest points at the run"

# The dummy agent.
run_cmd r "$SSEBENCH" run --local "$DATASET" --task "$TASK" --agent dummy --run-id "dummy-$tag" --timeout 1800
is "$r_rc" 0 "dummy run: exit 0 (graded)"
dir=$SSEBENCH_RESULTS/$TASK/none/dummy/dummy-$tag
is "$(field "$dir/result.json" 'd["patch_result"]["status"]')" failed "dummy: status failed"
is "$(field "$dir/result.json" 'd["patch_result"]["build_success"]')" True "dummy: the build works"
is "$(field "$dir/result.json" 'd["patch_result"]["pov_passed"]')" 0 "dummy: the PoC still crashes"
like "$(field "$dir/result.json" 'd["patch_result"]["error_msg"]')" '^PoC failed: /ssebench/' "dummy: error_msg names the PoC"
is "$(field "$dir/result.json" 'd["patch_result"]["intent_test_success"]')" False "dummy: hidden tests fail"
is "$(field "$dir/result.json" 'd["config"]["reference_run"]')" False "dummy: not a reference run"
# Each run's task scripts run as a uid of their own (SSE_RUNNER_UID): runs share no per-uid
# kernel count. The isolation record shows the uid the runner really had.
ru1=$(field "$SSEBENCH_RESULTS/$TASK/none/reference/ref-$tag/result.json" 'd["config"]["runner_uid"]')
ru2=$(field "$dir/result.json" 'd["config"]["runner_uid"]')
ok "$([ "$ru1" -ge 100000 ] && [ "$ru2" -ge 100000 ] && [ "$ru1" != "$ru2" ]; echo $?)" \
	"runner uid: each run has its own ($ru1, $ru2), none the image's 60991"
like "$(field "$dir/isolation.json" 'd["phases"]["before_agent"]["runner_identity"]["detail"]')" "^runner: uid $ru2/$ru2/$ru2 gid 60991" \
	"runner uid: the scripts ran as it"
is "$(cat "$dir/final.patch")" "" "dummy: empty final.patch"
# The agent's freezer cgroup (cmd-run.c:agent_cgroup_make): on a machine with a hierarchy
# that holds the freezer alone the run has one, the agent ran in it, and it is gone after.
fz=$(field "$dir/result.json" 'd["config"]["agent_freezer"]')
if [ -e /sys/fs/cgroup/unified/cgroup.procs ] || [ -e /sys/fs/cgroup/freezer/cgroup.procs ]; then
	like "$fz" '^cgroup-v[12]$' "freezer: the run had the agent's freezer cgroup ($fz)"
	like "$(cat "$dir/entrypoint.log")" "agent freezer: cgroup v[12] at '/run/ssebench-agent-cgroup'" \
		"freezer: the entrypoint opened it"
	like "$(cat "$dir/daemon.log")" "frozen during checks on hidden material by cgroup /run/ssebench-agent-cgroup" \
		"freezer: and so did the daemon"
	is "$(ls -d /sys/fs/cgroup/unified/ssebench/"dummy-$tag" /sys/fs/cgroup/freezer/ssebench/"dummy-$tag" 2>/dev/null)" "" \
		"freezer: removed after the run"
else
	is "$fz" signals "freezer: none on this machine, and config.agent_freezer says signals"
fi

run_cmd r "$SSEBENCH" run --local "$SMALL_DATASET" --task "$SMALL" --agent dummy --run-id "dummy2-$tag" --require-pass --timeout 600
is "$r_rc" 1 "dummy with --require-pass: exit 1"

# What the agent user sees inside a run.
run_cmd r "$SSEBENCH" run --local "$SMALL_DATASET" --task "$SMALL" --agent probe --model none --run-id "probe-$tag" --timeout 600
is "$r_rc" 0 "probe run: exit 0"
[ "$r_rc" = 0 ] || diag "$(printf '%s\n' "$r_err" | tail -20)"
p=$SSEBENCH_RESULTS/$SMALL/none/probe/probe-$tag/archive/probe.txt
probe() { awk -v k="$1: " 'index($0, k) == 1 { print substr($0, length(k) + 1) }' "$p"; }
is "$(probe uid)" 1000 "inside: the agent runs as uid 1000"
is "$(probe groups)" 1000 "inside: model has no supplementary groups"
is "$(probe commits)" 1 "inside: the source tree has exactly one commit"
is "$(probe commit-subject)" "buggy commit" "inside: and it is 'buggy commit'"
is "$(probe git-dirs)" 1 "inside: one .git (no submodule history)"
for f in /ssebench/config.yaml /ssebench/diffs/patch.diff /ssebench-repo /var/lib/ssebench/results /run/ssebench/admin.sock; do
	is "$(probe "readable $f")" no "inside: $f is not readable by the agent"
done
is "$(probe capeff)" 0000000000000000 "inside: no capabilities"
is "$(probe nonewprivs)" 1 "inside: no_new_privs"
is "$(probe seccomp)" 2 "inside: a seccomp filter"
like "$(probe daemon-version)" '"version"' "inside: the agent socket answers"
is "$(probe reference-on-agent-socket)" 403 "inside: /reference/patch is refused on the agent socket"
is "$(probe token-set)" yes "inside: the agent got the run token"
is "$(probe mcp-server)" "ssebench MCP Server" "inside: the MCP server answers at \$SSE_MCP_URL"
is "$(probe mcp-test-patch)" "test_patch result: every check that ran passed." "inside: test_patch ran the level-2 checks (build, functional tests)"
is "$(probe admin-env)" no "inside: the agent does not know the admin socket"
# Fixed uids no host account gets (images/sandbox/setup-tool-layer.sh): a host process of a
# colliding uid could otherwise signal the run's scripts (kill(-1) crosses into containers).
# (The image's entry; each run's scripts then run as a uid of the run's own, below.)
is "$(probe runner-ids)" 60991:60991 "inside: sse-runner has its fixed uid and gid"
is "$(probe daemon-ids)" 60992:60992 "inside: sse-daemon has its fixed uid and gid"

# A kept container: the run waits until it is stopped; the runs commands manage it.
"$SSEBENCH" run --local "$SMALL_DATASET" --task "$SMALL" --agent dummy --run-id "keep-$tag" \
	--keep-container --timeout 600 >"$SB_TMP/keep.out" 2>&1 &
keep_pid=$!
kdir=$SSEBENCH_RESULTS/$SMALL/none/dummy/keep-$tag
for _ in $(seq 900); do
	[ -s "$kdir/result.json" ] && break
	kill -0 "$keep_pid" 2>/dev/null || break
	sleep 1
done
# The kept run's disks: the harness's has a journal (without one ext4 holds a freed inode
# back for a minute, which a check could use to pick the next build's inode numbers), the
# agent's has none.
features() { dumpe2fs -h "$1" 2>/dev/null | sed -n 's/^Filesystem features: *//p'; }
like "$(features "$SSEBENCH_RESULTS/.disks/keep-$tag/harness.img")" '(^| )has_journal( |$)' \
	"the harness's disk has a journal"
unlike "$(features "$SSEBENCH_RESULTS/.disks/keep-$tag/disk.img")" 'has_journal' "the agent's has none"
run_cmd r "$SSEBENCH" runs list --json
like "$r_out" "\"run_id\": \"keep-$tag\"" "runs list shows the kept run"
unlike "$r_out" 'SSE_DAEMON_TOKEN|"Env"' "runs list never shows the container's environment"
run_cmd r "$SSEBENCH" runs inspect "keep-$tag"
like "$r_out" '^state +"running"' "runs inspect: the kept container is running after grading"
run_cmd r "$SSEBENCH" runs logs "keep-$tag"
like "$r_out$r_err" 'evaluator exited' "runs logs shows the container's output"
kcg=$(ls -d /sys/fs/cgroup/unified/ssebench/"keep-$tag" /sys/fs/cgroup/freezer/ssebench/"keep-$tag" 2>/dev/null)
if [ "$(field "$kdir/result.json" 'd["config"]["agent_freezer"]')" != signals ]; then
	ok "$([ -n "$kcg" ]; echo $?)" "a kept run keeps its freezer cgroup ($kcg)"
fi
run_cmd r "$SSEBENCH" runs stop --grace 5 "keep-$tag"
is "$r_rc" 0 "runs stop"
wait "$keep_pid"
is "$?" 0 "the kept run's CLI returns once the container is stopped"
is "$(field "$kdir/result.json" 'd["patch_result"]["status"]')" failed "the kept run was graded before it was stopped"
run_cmd r "$SSEBENCH" runs remove "keep-$tag"
is "$r_rc" 0 "runs remove"
run_cmd r "$SSEBENCH" runs inspect "keep-$tag"
is "$r_rc" 3 "after runs remove the run is gone (exit 3)"
is "$(ls -d /sys/fs/cgroup/unified/ssebench/"keep-$tag" /sys/fs/cgroup/freezer/ssebench/"keep-$tag" 2>/dev/null)" "" \
	"runs remove takes the kept run's freezer cgroup"

# Ctrl-C during grading: the container is stopped, the run says why, exit 130.
interrupt_in_grading "int-$tag"
is "$int_rc" 130 "Ctrl-C during a run: exit 130"
like "$(field "$idir/result.json" 'd["patch_result"]["error_msg"]')" 'interrupted' "the interrupted run's result says so"
is "$($DOCKER ps -aq --filter "label=ssebench.run=int-$tag" | wc -l)" 0 "and its container is gone"

# Ctrl-C as grading ends: the container is gone and the CLI is copying the archive, removing
# the run's disks and network and writing the record. The run still winds down and says it was interrupted (before, the
# CLI exited at once there: no result.json, and the run's network and disks left behind).
# (Beside it, a disk being made by another CLI: its directory is there, its owner file not
# yet, and that CLI holds the disks' lock. The run's sweep waits for the lock and leaves the
# disk; before, it took it for one left behind and removed it under the other run.)
making=$SSEBENCH_RESULTS/.disks/making-$tag
mkdir -p "$making"
sleep 600 &
maker=$!
(flock 9 && sleep 3 && echo "$maker" >"$making/owner.pid") 9<"$SSEBENCH_RESULTS/.disks" &
locker=$!
interrupt_at 'the container exited with status' "int2-$tag"
wait "$locker"
ok "$([ -s "$making/owner.pid" ]; echo $?)" "a run leaves alone a disk another CLI is making"
kill "$maker" 2>/dev/null
rm -rf "$making"
is "$int_rc" 130 "Ctrl-C as grading ends: exit 130"
like "$(field "$idir/result.json" 'd["patch_result"]["error_msg"]')" 'interrupted' \
	"Ctrl-C as grading ends: the result says the run was interrupted"
is "$($DOCKER network ls -q --filter "label=ssebench.run=int2-$tag" | wc -l)" 0 \
	"Ctrl-C as grading ends: the run's network is gone"
is "$(ls "$SSEBENCH_RESULTS/.disks" 2>/dev/null | grep -c "int2-$tag")" 0 \
	"Ctrl-C as grading ends: the run's disks are gone"

# Results listing.
run_cmd r "$SSEBENCH" runs results --json --dir "$SSEBENCH_RESULTS"
is "$(printf '%s' "$r_out" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))')" 7 "runs results lists the seven runs"

done_testing

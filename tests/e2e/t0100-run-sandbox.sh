#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# End to end on a real pilot task, with real images and a real engine: the reference agent
# passes, the dummy agent fails (the build works, the PoC still crashes), and inside a run
# the agent user sees one commit, no supplementary groups, and none of the hidden material.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

TASK=${SSEBENCH_E2E_TASK:-cjson-CVE-2023-53154}
DATASET=$SB_SRCDIR/datasets/pilot
[ "$(id -u)" = 0 ] || skip_all "the run tests need root (Docker, the host guard rule)"
/usr/bin/docker version >/dev/null 2>&1 || "$SB_SRCDIR/scripts/docker-up" >/dev/null 2>&1 ||
	skip_all "no Docker engine"
[ -d "$DATASET/$TASK" ] || bail "no task $TASK in $DATASET"
command -v python3 >/dev/null || skip_all "python3 is needed to read the results"
plan_lazy

export SSEBENCH_RESULTS=$SB_TMP/results
export SSEBENCH_AGENTS=$SB_SRCDIR/tests/e2e/agents
export SSEBENCH_HOME=$SB_SRCDIR
tag=e2e$$
field() { # FILE EXPR: a Python expression over the JSON document d
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# Fail fast, before anything is built.
run_cmd r "$SSEBENCH" run --local "$DATASET" --task no-such-task --agent dummy
is "$r_rc" 1 "an unknown task: exit 1"
like "$r_err" "no task 'no-such-task'" "and it is named"
run_cmd r "$SSEBENCH" run --local "$DATASET" --task "$TASK" --agent no-such-agent
is "$r_rc" 1 "an unknown agent: exit 1"
run_cmd r "$SSEBENCH" run --local "$DATASET" --task "$TASK" --agent dummy --difficulty 7
is "$r_rc" 2 "a bad difficulty: exit 2"
run_cmd r "$SSEBENCH" run --local "$DATASET" --task "$TASK" --agent dummy --mode sidecar
is "$r_rc" 2 "--mode sidecar is refused in this version"

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
is "$(cat "$dir/final.patch")" "" "dummy: empty final.patch"

run_cmd r "$SSEBENCH" run --local "$DATASET" --task "$TASK" --agent dummy --run-id "dummy2-$tag" --require-pass --timeout 1800
is "$r_rc" 1 "dummy with --require-pass: exit 1"

# What the agent user sees inside a run.
run_cmd r "$SSEBENCH" run --local "$DATASET" --task "$TASK" --agent probe --run-id "probe-$tag" --timeout 600
is "$r_rc" 0 "probe run: exit 0"
p=$SSEBENCH_RESULTS/$TASK/none/probe/probe-$tag/archive/probe.txt
probe() { sed -n "s/^$1: //p" "$p"; }
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
is "$(probe admin-env)" no "inside: the agent does not know the admin socket"

# Results listing.
run_cmd r "$SSEBENCH" runs results --json --dir "$SSEBENCH_RESULTS"
is "$(printf '%s' "$r_out" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))')" 4 "runs results lists the four runs"

done_testing

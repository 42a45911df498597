#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The fail-closed verdict against a real engine (docs/integrity.md, "The fail-closed verdict"):
#   - a run deliberately started on a network with a way out (its own network,
#     <project>_run-<run-id>, made by hand as an ordinary bridge before it starts) is not
#     scored: the agent never runs, nothing is graded, and the result names every broken
#     property at once;
#   - an --egress open run is scored as tier "open" and `runs results` keeps it apart from
#     restricted runs.
# Only our own test network, the host and the canary namespace on this host are involved.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
. "$SB_SRCDIR/tests/e2e/lib-e2e.sh"

DATASET=$SMALL_DATASET
TASK=$SMALL
e2e_require
[ -d "$DATASET/$TASK" ] || bail "no task $TASK in $DATASET"
plan_lazy
tag=v$$

# --- a run on a network with a way out -------------------------------------------------------
proj=sbtbroken$$
net=${proj}_run-broken-$tag
sb_cleanup_hook() {
	$DOCKER rm -f "ssebench-broken-$tag" >/dev/null 2>&1
	$DOCKER network rm "$net" >/dev/null 2>&1
}
$DOCKER network create --label ssebench.test=1 "$net" >/dev/null ||
	bail "cannot create the test network $net"
run_cmd r env COMPOSE_PROJECT_NAME="$proj" "$SSEBENCH" run --local "$DATASET" --task "$TASK" \
	--agent dummy --run-id "broken-$tag" --timeout 600
dir=$SSEBENCH_RESULTS/$TASK/none/dummy/broken-$tag
is "$r_rc" 1 "broken network: the run exits 1"
like "$r_err" "the network '$net' exists and is not internal: this run will not be scored" \
	"broken network: the CLI warns before the run starts"
like "$r_out" '^NOT SCORED' "broken network: the CLI says NOT SCORED"
is "$(field "$dir/result.json" '(d["scored"], d["isolation"]["scored"], d["isolation"]["tier"])')" \
	"(False, False, None)" "broken network: not scored, no tier"
is "$(field "$dir/result.json" 'd["patch_result"]["status"]')" error "broken network: status error"
is "$(field "$dir/result.json" 'd["patch_result"]["error_msg"]')" \
	"Not scored: isolation not established: network_internal, host_unreachable" \
	"broken network: both network properties are named, and nothing else"
like "$(field "$dir/result.json" 'd["isolation"]["phases"]["before_agent"]["network_internal"]["detail"]')" \
	'^the egress canary 198\.18\.0\.2:[0-9]+ answered' "broken network: the canary answered"
like "$(field "$dir/result.json" 'd["isolation"]["phases"]["before_agent"]["host_unreachable"]["detail"]')" \
	'^the host [0-9.]+:[0-9]+ (answered|accepted)' "broken network: the host answered"
is "$(field "$dir/result.json" '(d["patch_result"]["build_success"], d["patch_result"]["pov_passed"], "unscored_patch_result" in d)')" \
	"(None, None, False)" "broken network: nothing was graded"
unlike "$(cat "$dir/agent.log" 2>/dev/null)" 'dummy agent' "broken network: the agent never ran"
is "$(field "$dir/summary.json" '(d["scored"], d["isolation"]["failed"])')" \
	"(False, ['network_internal', 'host_unreachable'])" "broken network: summary.json says so too"

# --- a run whose own network holds a container that is not the run's ------------------------
# Made by hand, internal as a run's network is, with another container on it: every
# isolation property holds, but something else could reach the run (and it the run's), so
# the run does not count.
fnet=ssebench_run-foreign-$tag
fctr=sbt-foreign-$tag
BASE_IMAGE=${SSEBENCH_REGISTRY:-localhost/ssebench}/base-generic-c:$(cat "$SB_SRCDIR/VERSION")
sb_cleanup_hook() {
	$DOCKER rm -f "ssebench-broken-$tag" "$fctr" >/dev/null 2>&1
	$DOCKER network rm "$net" "$fnet" >/dev/null 2>&1
}
$DOCKER network create --internal --label ssebench.test=1 -o com.docker.network.bridge.name=sse-intf$$ "$fnet" >/dev/null ||
	bail "cannot create $fnet"
$DOCKER run -d --rm --name "$fctr" --network "$fnet" "$BASE_IMAGE" sleep 600 >/dev/null ||
	bail "cannot start $fctr"
run_cmd r "$SSEBENCH" run --local "$DATASET" --task "$TASK" --agent dummy --run-id "foreign-$tag" \
	--timeout 600
dir=$SSEBENCH_RESULTS/$TASK/none/dummy/foreign-$tag
is "$r_rc" 1 "foreign container: the run exits 1"
like "$r_out" '^NOT SCORED' "foreign container: the CLI says NOT SCORED"
is "$(field "$dir/result.json" '(d["scored"], d["patch_result"]["status"], d["patch_result"]["error_msg"], d["network"]["foreign"])')" \
	"(False, 'error', \"Not scored: the run's network $fnet held another container: $fctr\", '$fctr')" \
	"foreign container: not scored, the container named"
$DOCKER rm -f "$fctr" >/dev/null 2>&1

# --- an open-egress run -----------------------------------------------------------------------
run_cmd r "$SSEBENCH" run --local "$DATASET" --task "$TASK" --agent dummy --run-id "open-$tag" \
	--egress open --timeout 600
dir=$SSEBENCH_RESULTS/$TASK/none/dummy/open-$tag
is "$r_rc" 0 "open egress: the run is graded (exit 0)"
[ "$r_rc" = 0 ] || diag "$(printf '%s\n' "$r_err" | tail -20)"
is "$(field "$dir/result.json" '(d["scored"], d["isolation"]["tier"], d["config"]["egress"])')" \
	"(True, 'open', 'open')" "open egress: scored as tier open"
is "$(field "$dir/result.json" 'd["isolation"]["phases"]["before_agent"]["network_internal"]["status"]')" \
	not_claimed "open egress: no network isolation is claimed"
is "$(field "$dir/result.json" 'd["patch_result"]["status"]')" failed "open egress: graded like any run"

# --- --runtime: a runtime the engine lacks is refused before anything is built -------------------
run_cmd r "$SSEBENCH" run --local "$DATASET" --task "$TASK" --agent dummy --run-id "runtime-$tag" \
	--runtime sbt-no-such-runtime
is "$r_rc" 1 "runtime: an unknown runtime: exit 1"
like "$r_err" "the Docker engine has no runtime 'sbt-no-such-runtime' \\(it has: .*runc" \
	"runtime: refused, with the runtimes the engine has"
ok "$([ ! -e "$SSEBENCH_RESULTS/$TASK/none/dummy/runtime-$tag" ]; echo $?)" "runtime: no run directory was made"

# --- the run's disks: a host without room for what they may grow to refuses the run ----------
run_cmd r env SSEBENCH_DISK=16t "$SSEBENCH" run --local "$DATASET" --task "$TASK" --agent dummy \
	--run-id "room-$tag"
is "$r_rc" 1 "room: disks larger than the host's free space: exit 1"
like "$r_err" "no room for this run's disks: they may grow to [0-9]+ MiB" "room: refused, and says why"
ok "$([ ! -e "$SSEBENCH_RESULTS/$TASK/none/dummy/room-$tag" ] &&
	[ -z "$($DOCKER network ls -q --filter "label=ssebench.run=room-$tag")" ] &&
	[ -z "$(ls -A "$SSEBENCH_RESULTS/.disks" 2>/dev/null)" ]; echo $?)" \
	"room: no run directory, network or disk was made"

# --- a restricted run (on the engine's runc, named), then the listing ---------------------------
run_cmd r "$SSEBENCH" run --local "$DATASET" --task "$TASK" --agent dummy --run-id "restricted-$tag" \
	--timeout 600 --runtime runc
dir=$SSEBENCH_RESULTS/$TASK/none/dummy/restricted-$tag
is "$(field "$dir/result.json" '(d["scored"], d["isolation"]["tier"], d["isolation"]["failed"])')" \
	"(True, 'restricted', [])" "restricted: scored as tier restricted"
is "$(field "$dir/result.json" 'd["config"]["runtime"]')" runc "restricted: the runtime is recorded"
# The host guard refuses on the spot (network.c:guard_rule), so neither check waits out a
# silence: a drop instead of a refusal would read "gave no answer in 1500 ms" here.
like "$(field "$dir/result.json" 'd["isolation"]["phases"]["before_grading"]["network_internal"]["detail"]')" \
	'^the egress canary 198\.18\.0\.2:[0-9]+: No route to host$' "restricted: the way to the canary is refused, at once"
like "$(field "$dir/result.json" 'd["isolation"]["phases"]["before_agent"]["host_unreachable"]["detail"]')" \
	'^the host [0-9.]+:[0-9]+: No route to host$' "restricted: the way to the host is refused, at once"
is "$(field "$dir/result.json" '(d["network"]["name"], d["network"]["checked"], d["network"]["foreign"])')" \
	"('ssebench_run-restricted-$tag', True, None)" "restricted: the run had a network of its own, with nobody else on it"
is "$($DOCKER network ls -q --filter "label=ssebench.run=restricted-$tag" | wc -l)" 0 \
	"restricted: the run's network is gone after the run"

run_cmd r "$SSEBENCH" runs results --dir "$SSEBENCH_RESULTS"
block() { printf '%s\n' "$r_out" | awk -v t="-- $1 --" '$0 == t { on = 1; next } /^-- / { on = 0 } on'; }
like "$(block 'restricted egress')" "^restricted-$tag " "runs results: the restricted run is in its group"
unlike "$(block 'restricted egress')" "open-$tag|broken-$tag" "runs results: and alone there"
like "$(block 'open egress: NOT comparable with restricted runs')" "^open-$tag " \
	"runs results: the open run is apart"
like "$(block 'not scored: isolation not established')" "^broken-$tag +unscored" \
	"runs results: the broken run has no score"

done_testing

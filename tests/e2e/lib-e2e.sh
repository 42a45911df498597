# SPDX-License-Identifier: Apache-2.0
# tests/e2e/lib-e2e.sh: what the end-to-end suites share, sourced after tests/lib.sh.
#
# e2e_require: root, a Docker engine (started with scripts/docker-up if it is not up) and
# python3, or the suite is skipped (an error under SSEBENCH_REQUIRE_DOCKER=1). Then runs go
# to $SB_TMP/results, agents are also looked up in tests/e2e/agents, the home is the source
# tree, and field FILE EXPR evaluates a Python expression over the JSON document d.

DOCKER=/usr/bin/docker

e2e_require() {
	[ "$(id -u)" = 0 ] || skip_all "the run tests need root (Docker, the host guard rule)"
	$DOCKER version >/dev/null 2>&1 || "$SB_SRCDIR/scripts/docker-up" >/dev/null 2>&1 ||
		skip_all "no Docker engine"
	command -v python3 >/dev/null || skip_all "python3 is needed to read the results"
	export SSEBENCH_RESULTS=$SB_TMP/results
	export SSEBENCH_AGENTS=$SB_SRCDIR/tests/e2e/agents
	export SSEBENCH_HOME=$SB_SRCDIR
}

field() { # FILE EXPR
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>&1
}

# The small test task: quick to build and grade (tests/integrity/dataset).
SMALL_DATASET=${SSEBENCH_E2E_SMALL_DATASET:-$SB_SRCDIR/tests/integrity/dataset}
SMALL=${SSEBENCH_E2E_SMALL_TASK:-tinyfield-overflow}

# interrupt_at WHEN RUN_ID RUN_ARGS...: start `ssebench run RUN_ARGS... --run-id RUN_ID` on
# the small task with the dummy agent, send it SIGINT (Ctrl-C) as soon as its output (which
# carries the run's entrypoint.log) says WHEN (a pattern), and wait. int_rc gets its exit
# status, idir its run directory. Grading the small task takes under a second and the CLI's
# work after the container 0.3 s: the output is polled every 0.02 s so the signal lands
# while the run is still going (CI once sent it after the run had ended).
interrupt_at() {
	local when=$1 id=$2 pid
	shift 2
	"$SSEBENCH" run --local "$SMALL_DATASET" --task "$SMALL" --agent dummy --run-id "$id" \
		--timeout 600 "$@" >"$SB_TMP/int-$id.out" 2>&1 &
	pid=$!
	idir=$SSEBENCH_RESULTS/$SMALL/none/dummy/$id
	for _ in $(seq 30000); do
		grep -q "$when" "$SB_TMP/int-$id.out" 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.02
	done
	kill -INT "$pid"
	wait "$pid"
	int_rc=$?
}

# interrupt_in_grading RUN_ID RUN_ARGS...: interrupt_at once grading has started.
interrupt_in_grading() {
	interrupt_at 'evaluator started' "$@"
}

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

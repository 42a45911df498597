#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The daemon's access matrix against a real daemon: every endpoint x listener (agent
# socket, TCP without and with the run's token, admin socket) x difficulty 0-4 x phase
# (agent phase, after agent_exited), each cell asserting the exact status code. The expected
# codes come from docs/daemon.md, "Endpoints" and docs/upstream.md, "Difficulty levels",
# written out here.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
. "$SB_SRCDIR/tests/daemon/lib-daemon.sh"

require_daemon_env
plan_lazy

# name method path body
endpoints=(
	"version GET /version"
	"project GET /project"
	"capabilities GET /capabilities"
	"diff GET /diff"
	"files GET /files"
	"dialog GET /agent/dialog?since=-1"
	"result GET /result"
	"final_diff GET /final_diff"
	"bash POST /tool/bash {\"command\":\"true\"}"
	"build POST /tool/bencher?action=build {}"
	"run_poc POST /tool/bencher?action=run_poc {\"poc\":\"pocs/poc.txt\"}"
	"function_test POST /tool/bencher?action=function_test {}"
	"intent_test POST /tool/bencher?action=intent_test {}"
	"prepare_grading POST /prepare_grading {}"
	"grading_build POST /tool/bencher?action=build {\"grading\":true}"
	"reference_patch GET /reference/patch"
	"agent_exited POST /admin/agent_exited {}"
	"unknown_action POST /tool/bencher?action=rm_rf {}"
	"unknown_upper POST /tool/bencher?action=BUILD {}"
	"unknown_space POST /tool/bencher?action=build%20 {}"
	"unknown_empty POST /tool/bencher?action= {}"
	"unknown_grading POST /tool/bencher?action=intent {\"grading\":true}"
)

# gate LEVEL ACTION: 200 if the level lets the agent run ACTION, else 403.
gate() {
	case $2 in
	build) [ "$1" -le 3 ] ;;
	function_test) [ "$1" -le 2 ] ;;
	run_poc) [ "$1" -le 1 ] ;;
	intent_test) [ "$1" -eq 0 ] ;;
	esac && echo 200 || echo 403
}

# expect LISTENER PHASE LEVEL ENDPOINT
expect() {
	local l=$1 phase=$2 level=$3 ep=$4
	if [ "$l" = tcp ]; then
		[ "$ep" = version ] && echo 200 || echo 401
		return
	fi
	if [ "$l" = admin ]; then
		expect_admin "$ep"
		return
	fi
	case $ep in
	version | project | capabilities | diff | files | dialog | result | final_diff) echo 200 ;;
	reference_patch | prepare_grading | grading_build | agent_exited) echo 403 ;;
	bash) [ "$phase" = agent ] && echo 200 || echo 403 ;;
	build | function_test | run_poc | intent_test)
		[ "$phase" = agent ] && gate "$level" "$ep" || echo 403 ;;
	# Not an action: refused at every level (upstream's 500), behind the closed tools
	# after the phase and behind the grading flag's 403.
	unknown_grading) echo 403 ;;
	unknown_*) [ "$phase" = agent ] && echo 500 || echo 403 ;;
	esac
}
# The admin socket is never gated, but an action that does not exist is no action there
# either.
expect_admin() {
	case $1 in
	unknown_*) echo 500 ;;
	*) echo 200 ;;
	esac
}
# script_runs: how many task scripts have run so far (the daemon logs each one).
script_runs() {
	find "$D/results" -maxdepth 1 -name 'scriptrunner-*.log' | wc -l
}

for level in 0 1 2 3 4; do
	make_fixture
	start_daemon "$level" || bail "daemon did not start at level $level"
	for phase in agent after; do
		for l in agent tcp tcptoken admin; do
			for e in "${endpoints[@]}"; do
				read -r name method path body <<<"$e"
				# The admin's agent_exited in the agent phase is the phase change itself.
				[ "$l" = admin ] && [ "$phase" = agent ] && [ "$name" = agent_exited ] && continue
				want=$(expect "$l" "$phase" "$level" "$name")
				before=$(script_runs)
				got=$(status "$l" "$method" "$path" "$body")
				is "$got" "$want" "level $level, $phase phase, $l: $name"
				case $name in unknown_*)
					is "$(script_runs)" "$before" "level $level, $phase phase, $l: $name ran no script" ;;
				esac
			done
		done
		if [ "$phase" = agent ]; then
			is "$(status admin POST /admin/agent_exited '{}')" 200 "level $level: agent_exited on the admin socket"
		fi
	done
	# The reference patch never appeared on an agent-facing listener's body.
	for l in agent tcptoken; do
		r=$(req "$l" GET /reference/patch)
		unlike "$r" 'REFERENCE-PATCH-CONTENT' "level $level: $l listener's /reference/patch body holds no patch"
	done
	like "$(req admin GET /reference/patch)" 'REFERENCE-PATCH-CONTENT' "level $level: the admin socket serves the reference patch"
	stop_daemon
done

done_testing

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Jobs without Docker (docs/jobs.md): what is refused before anything is built (every
# unknown task, agent and model named at once, a bad config file, options of one run), and
# job directories as the jobs commands read them: list, show, a newer version refused, a
# corrupt index reported, resume with nothing to run, remove. Running a job is
# tests/e2e/t0130-jobs.sh.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
command -v python3 >/dev/null || skip_all "python3 is needed to write the job files"
plan_lazy

DS=$SB_SRCDIR/tests/integrity/dataset
export SSEBENCH_RESULTS=$SB_TMP/results SSEBENCH_HOME=$SB_SRCDIR
mkdir -p "$SSEBENCH_RESULTS"

# --- refused before anything is built -------------------------------------------------------
run_cmd r "$SSEBENCH" run --local "$DS" --task tinyfield-overflw --task nope --agent dummy \
	--agent no-such-agent --attempts 2
is "$r_rc" 1 "unknown task and agent: exit 1"
like "$r_err" "no task 'tinyfield-overflw' in .* \\(did you mean tinyfield-overflow\\?\\)" \
	"the unknown task is named, with the closest"
like "$r_err" "no task 'nope'" "and the second unknown task too"
like "$r_err" "no-such-agent" "and the unknown agent"
like "$r_err" "3 problems with the job: nothing was built or run" "all counted at once"
ok "$([ ! -d "$SSEBENCH_RESULTS/jobs" ] || [ -z "$(ls -A "$SSEBENCH_RESULTS/jobs")" ]; echo $?)" \
	"no job directory was made"
run_cmd r "$SSEBENCH" run --local "$DS" --task tinyfield-overflow --agent claude-code \
	--agent dummy --attempts 2
is "$r_rc" 1 "an agent that needs a model, without one: exit 1"
like "$r_err" "the agent 'claude-code' needs a model" "and says so"
run_cmd r "$SSEBENCH" run --local "$DS" --task tinyfield-overflow --agent claude-code \
	--model no-such-model --model claude-sonnt-4-6 --attempts 2
is "$r_rc" 1 "unknown models: exit 1"
like "$r_err" "unknown model 'no-such-model'" "the first unknown model is named"
like "$r_err" "unknown model 'claude-sonnt-4-6': did you mean claude-sonnet-4-6" \
	"the second too, with the closest"
run_cmd r "$SSEBENCH" run --local "$DS" --tasks 'zz*' --agent dummy
is "$r_rc" 1 "a pattern that matches nothing: exit 1"
like "$r_err" "--tasks 'zz\\*' matches no task" "and says which"
run_cmd r "$SSEBENCH" run --local "$DS" --task tinyfield-overflow --agent dummy --attempts 2 \
	--run-id x1
is "$r_rc" 2 "--run-id is for one run: a usage error"
run_cmd r "$SSEBENCH" run --local "$DS" --task tinyfield-overflow --agent dummy --attempts 0
is "$r_rc" 2 "--attempts 0: a usage error"
run_cmd r "$SSEBENCH" run --local "$DS" --task tinyfield-overflow --agent dummy --jobs 65
is "$r_rc" 2 "--jobs above the limit: a usage error"
run_cmd r "$SSEBENCH" run --local "$DS" --agent dummy --attempts 2
is "$r_rc" 2 "a job with no task: a usage error"

cat >"$SB_TMP/job.yaml" <<YAML
dataset: $DS
tasks: [tinyfield-overflow]
agents: [dummy]
atempts: 2
YAML
run_cmd r "$SSEBENCH" run --config "$SB_TMP/job.yaml"
is "$r_rc" 1 "a config with an unknown key: exit 1"
like "$r_err" "job.yaml:4:1: unknown key 'atempts' \\(did you mean 'attempts'\\?\\)" \
	"named with its line and the closest key"
printf 'agents: dummy\nattempts: many\n' >"$SB_TMP/job2.yaml"
run_cmd r "$SSEBENCH" run --config "$SB_TMP/job2.yaml"
is "$r_rc" 1 "a config with a value of the wrong type: exit 1"
like "$r_err" "job2.yaml:2:11: attempts must be a number, 1 to 1000" "named with its line"
printf -- '- a\n- b\n' >"$SB_TMP/job3.yaml"
run_cmd r "$SSEBENCH" run --config "$SB_TMP/job3.yaml"
is "$r_rc" 1 "a config that is not a mapping: exit 1"

# --- job directories ------------------------------------------------------------------------
# mkjob ID STATE... : a job directory with one slot per state given (done slots: passed).
mkjob() {
	local id=$1
	shift
	mkdir -p "$SSEBENCH_RESULTS/jobs/$id"
	python3 - "$SSEBENCH_RESULTS/jobs/$id" "$id" "$@" <<'PY'
import json, os, sys
d, jid, states = sys.argv[1], sys.argv[2], sys.argv[3:]
json.dump({"version": 1, "job_id": jid, "created_at": "2026-12-01T00:00:00Z",
           "ssebench_version": "0", "dataset": {"path": "/x", "name": "x", "version": None},
           "matrix": {"tasks": ["t"], "agents": ["dummy"], "models": [], "attempts": len(states)},
           "options": {"difficulty": 2, "egress": "restricted", "timeout": 60,
                       "mode": "sandbox", "runtime": None}, "jobs": 1},
          open(os.path.join(d, "job.json"), "w"))
slots = []
for i, st in enumerate(states, 1):
    done = st in ("passed", "failed", "error", "forfeit")
    slots.append({"key": "t/dummy/none/%d" % i, "task": "t", "agent": "dummy", "model": "none",
                  "attempt": i, "state": "done" if done else st,
                  "run_id": "r%d" % i if done else None, "dir": "/nonexistent/r%d" % i if done else None,
                  "status": st if done else None, "reason": None, "tries": []})
json.dump({"version": 1, "job_id": jid, "slots": slots}, open(os.path.join(d, "index.json"), "w"))
PY
}
mkjob job-20261201-000000-aaaaaa passed failed error pending
mkjob job-20261201-000001-bbbbbb passed passed
run_cmd r "$SSEBENCH" jobs list
is "$r_rc" 0 "jobs list exits 0"
like "$r_out" "job-20261201-000000-aaaaaa +2026-12-01T00:00:00Z +interrupted +4 +1 +1 +1 +1" \
	"an interrupted job: its runs and what is left"
like "$r_out" "job-20261201-000001-bbbbbb .* complete +2 +2 +0 +0 +0" "a complete one"
run_cmd r "$SSEBENCH" jobs show job-20261201-000000-aaaaaa
like "$r_out" "runs: 4: 1 passed, 1 failed, 0 forfeit, 1 error, 0 skipped, 1 not run" \
	"jobs show counts the slots"
like "$r_out" "t/dummy/none/4 +pending" "and lists each"
run_cmd r "$SSEBENCH" jobs show --json "$SSEBENCH_RESULTS/jobs/job-20261201-000001-bbbbbb"
is "$(printf '%s' "$r_out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["counts"]["passed"], len(d["slots"]))')" \
	"2 2" "jobs show --json, by path"
run_cmd r "$SSEBENCH" jobs resume job-20261201-000001-bbbbbb
is "$r_rc" 0 "resume of a complete job: exit 0"
like "$r_out" "nothing to run" "nothing to run"
run_cmd r "$SSEBENCH" jobs show job-20261201-999999-zzzzzz
is "$r_rc" 1 "no such job: exit 1"
like "$r_err" "no job 'job-20261201-999999-zzzzzz'" "and says so"

mkjob job-20261201-000002-cccccc passed
python3 -c 'import json,sys; p=sys.argv[1]; d=json.load(open(p)); d["version"]=7; json.dump(d, open(p,"w"))' \
	"$SSEBENCH_RESULTS/jobs/job-20261201-000002-cccccc/job.json"
run_cmd r "$SSEBENCH" jobs show job-20261201-000002-cccccc
is "$r_rc" 1 "a job of a newer version: exit 1"
like "$r_err" "of version 7, newer than this ssebench reads \\(1\\)" "refused, with both versions"
run_cmd r "$SSEBENCH" jobs resume job-20261201-000002-cccccc
is "$r_rc" 1 "and not resumed"

mkjob job-20261201-000003-dddddd passed pending
python3 -c 'import json,sys; p=sys.argv[1]; d=json.load(open(p)); d["slots"][1]["state"]="weird"; json.dump(d, open(p,"w"))' \
	"$SSEBENCH_RESULTS/jobs/job-20261201-000003-dddddd/index.json"
run_cmd r "$SSEBENCH" jobs resume job-20261201-000003-dddddd
is "$r_rc" 1 "a corrupt index: exit 1"
like "$r_err" "the job's index is corrupt: slot 2 is malformed" "reported, with the slot"
printf '{"version": 1, "slots": [' >"$SSEBENCH_RESULTS/jobs/job-20261201-000003-dddddd/index.json"
run_cmd r "$SSEBENCH" jobs show job-20261201-000003-dddddd
is "$r_rc" 1 "an index cut short: exit 1"
like "$r_err" "the job's index" "reported"
run_cmd r "$SSEBENCH" jobs list
like "$r_err" "job-20261201-000003-dddddd.*skipping it" "jobs list says which job it skips"
like "$r_out" "could not be read" "and counts it"

run_cmd r "$SSEBENCH" jobs remove job-20261201-000001-bbbbbb
is "$r_rc" 0 "jobs remove exits 0"
ok "$([ ! -e "$SSEBENCH_RESULTS/jobs/job-20261201-000001-bbbbbb" ]; echo $?)" "the job directory is gone"
run_cmd r "$SSEBENCH" jobs remove
is "$r_rc" 2 "jobs remove without a job: a usage error"

done_testing

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `ssebench tasks list`: the table, the --json shape, and tasks with problems left out.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
. "$SB_SRCDIR/tests/integration/task-template.sh"

plan_lazy

ds="$SB_TMP/pilot"
make_task "$ds" zeta-CVE-1 c
make_task "$ds" alpha-2 go
printf 'version: pilot-test-v1\n' >"$ds/dataset.yaml"
sed -i 's/^project: demo/project: Alpha Project/' "$ds/alpha-2/sse/config.yaml"

run_cmd r "$SSEBENCH" tasks list --local "$ds"
is "$r_rc" 0 "tasks list exits 0"
is "$r_out" "$(printf 'ID          LANGUAGE  PROJECT\nalpha-2     go        Alpha Project\nzeta-CVE-1  c         demo')" \
	"tasks list prints id, language and project, sorted by id"

export SSEBENCH_REGISTRY=registry.example/sse
run_cmd r "$SSEBENCH" tasks list --local "$ds" --json
is "$r_rc" 0 "tasks list --json exits 0"
if command -v python3 >/dev/null; then
	got=$(printf '%s' "$r_out" | python3 -c '
import json, sys
tasks = json.load(sys.stdin)
for t in tasks:
    print(t["id"], t["language"], t["base"], t["image"], ",".join(t["arch"]), ",".join(t["checks"]), sorted(t))
')
	is "$got" "$(printf '%s\n%s' \
		"alpha-2 go registry.example/sse/base-generic-go:0.1.0 registry.example/sse/case/pilot/alpha-2:pilot-test-v1 amd64 build,poc,function_test,intent_test ['arch', 'base', 'checks', 'id', 'image', 'language', 'project', 'repository']" \
		"zeta-CVE-1 c registry.example/sse/base-generic-c:0.1.0 registry.example/sse/case/pilot/zeta-cve-1:pilot-test-v1 amd64 build,poc,function_test,intent_test ['arch', 'base', 'checks', 'id', 'image', 'language', 'project', 'repository']")" \
		"--json gives the catalog's task summaries: registry-prefixed, lower-case image, dataset version tag"
else
	like "$r_out" '"image": "registry.example/sse/case/pilot/zeta-cve-1:pilot-test-v1"' "--json image name"
fi
unset SSEBENCH_REGISTRY

# A task with a problem is left out, and the command says so and fails.
sed -i 's/^language: c/language: fortran/' "$ds/zeta-CVE-1/sse/config.yaml"
run_cmd r "$SSEBENCH" tasks list --local "$ds"
is "$r_rc" 1 "a dataset with a broken task: exit 1"
unlike "$r_out" 'zeta' "the broken task is not listed"
like "$r_out" '^alpha-2' "the good task still is"
like "$r_err" "1 of 2 tasks have problems and are not listed; run 'ssebench dataset validate" "stderr says what to do"

run_cmd r "$SSEBENCH" tasks list --local "$SB_TMP/nope"
is "$r_rc" 1 "a missing dataset: exit 1"

run_cmd r "$SSEBENCH" tasks list extra
is "$r_rc" 2 "an unexpected argument: exit 2"

# The default dataset is the home's datasets/pilot.
mkdir -p "$SB_TMP/home/datasets"
cp "$SB_SRCDIR/VERSION" "$SB_TMP/home/"
make_task "$SB_TMP/home/datasets/pilot" home-task
run_cmd r env SSEBENCH_HOME="$SB_TMP/home" "$SSEBENCH" tasks list
like "$r_out" '^home-task ' "without --local, the home's datasets/pilot is listed (SSEBENCH_HOME)"
run_cmd r sh -c "cd '$SB_TMP/home/datasets/pilot/home-task/sse' && exec '$SSEBENCH' tasks list"
like "$r_out" '^home-task ' "without SSEBENCH_HOME, the checkout above the working directory is the home"

done_testing

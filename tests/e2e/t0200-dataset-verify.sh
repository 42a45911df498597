#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# End to end: `ssebench dataset verify` with real images and a real engine.
#   - a task that does not exist: exit 1 before anything runs or is written;
#   - two throwaway tasks built FROM the C base image (trivial scripts, a controlled "PoC"):
#     a clean one verifies ok, one whose Dockerfile plants the fix and a debian/patches
#     directory in the agent's tree fails, naming each leak;
#   - a subset of the pilot (C tasks with AddressSanitizer and hidden tests), each PoC 3
#     times, 2 tasks at a time: exit 0, and the table and summary.json say why; the first
#     task's reference and dummy runs are read back from their own result.json and
#     summary.json (passed; failed with the build working and the PoC still crashing).
# SSEBENCH_VERIFY_TASKS overrides the pilot subset (space-separated task ids; "none" skips
# it, for a quick run of the rest).
# shellcheck disable=SC2154 # r_rc, r_out, r_err are set by run_cmd (lib.sh)
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
. "$SB_SRCDIR/tests/e2e/lib-e2e.sh"

DATASET=$SB_SRCDIR/datasets/pilot
# The three quickest pilot tasks to build and test (datasets/pilot/README.md): all C with
# ASan, all with hidden tests (files.future_test).
TASKS=${SSEBENCH_VERIFY_TASKS:-cjson-CVE-2023-53154 expat-CVE-2024-8176 yajl-CVE-2017-16516}
e2e_require
[ "$TASKS" = none ] && TASKS=''
for t in $TASKS; do
	[ -d "$DATASET/$t" ] || bail "no task $t in $DATASET"
done
plan_lazy

REG=${SSEBENCH_REGISTRY:-localhost/ssebench}
VER=$(cat "$SB_SRCDIR/VERSION")
TINY=$SB_TMP/verify-e2e

# lib-e2e's field, plus task(id): that task's entry of a verify summary.json.
field() { # FILE EXPR
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
def task(i):
    return [t for t in d["tasks"] if t["task"] == i][0]
print(eval(sys.argv[2]))' "$1" "$2"
}

sb_cleanup_hook() {
	for t in verifytest-clean verifytest-leak; do
		$DOCKER image rm -f "$REG/agent-reference/$t:$VER" "$REG/agent-dummy/$t:$VER" \
			"$REG/tool/$t:$VER" "$REG/case/verify-e2e/$t" >/dev/null 2>&1
	done
	$DOCKER image rm -f "$REG/agent-dummy/verifytest-labeled:$VER" \
		"$REG/tool/verifytest-labeled:$VER" "$REG/case/tiny-labeled/verifytest-labeled" \
		"$REG/labeled-base-$$:1" >/dev/null 2>&1
}

# make_tiny ID LEAK: a task folder in $TINY. The "project" is one config line; the fix
# turns the bounds check on; build.sh records the setting, run.sh (the PoC check) exits 1
# while it is off; the hidden test checks it too. With LEAK=yes the Dockerfile also puts the
# fixed file and a debian/patches directory into the source tree.
make_tiny() {
	d=$TINY/$1
	mkdir -p "$d/src/tests" "$d/sse/pocs" "$d/sse/reports" "$d/sse/diffs"
	printf '# tiny: the input guard\ncheck_bounds = no\n' >"$d/src/guard.conf"
	printf '#!/bin/sh\ngrep -q "^check_bounds" guard.conf\n' >"$d/src/tests/basic.sh"
	# shellcheck disable=SC2016,SC1003 # Dockerfile text, not shell
	{
		echo 'ARG SSEBENCH_REGISTRY=localhost/ssebench'
		echo 'FROM ${SSEBENCH_REGISTRY}/base-generic-c:'"$VER"
		echo 'COPY src/ /src/tiny/'
		if [ "$2" = yes ]; then
			echo 'COPY leak/ /src/tiny/'
			# A copy of the fix outside the source tree and /ssebench: only the
			# dataset's canary, which the hidden files carry, gives it away.
			echo 'COPY sse/diffs/patch.diff /opt/fix.diff'
		fi
		echo 'RUN cd /src/tiny && git init -q -b main && git add -A \'
		echo ' && git -c user.name=t -c user.email=t@localhost.invalid commit -q -m "buggy commit"'
		echo 'COPY sse/config.yaml /ssebench/config.yaml'
		echo 'COPY sse/build.sh sse/run.sh sse/test.sh /ssebench/scripts/'
		echo 'COPY sse/pocs/ /ssebench/pocs/'
		echo 'COPY sse/reports/ /ssebench/reports/'
		echo 'COPY sse/diffs/ /ssebench/diffs/'
		echo 'RUN chmod 0755 /ssebench/scripts/build.sh /ssebench/scripts/run.sh /ssebench/scripts/test.sh'
	} >"$d/Dockerfile"
	cat >"$d/sse/config.yaml" <<EOF
id: $1
project: $1
repository: https://example.invalid/tiny
language: c
source: /src/tiny
task_description:
  bug_description: The input guard does not check bounds.
scripts:
  build: scripts/build.sh
  run: scripts/run.sh
  test: scripts/test.sh
files:
  patch: diffs/patch.diff
  future_test: diffs/test.diff
  poc:
    - pocs/input.txt
EOF
	cat >"$d/sse/build.sh" <<'EOF'
#!/bin/sh
if grep -q '^check_bounds = yes' guard.conf; then echo fixed >built; else echo vulnerable >built; fi
EOF
	cat >"$d/sse/run.sh" <<'EOF'
#!/bin/sh
[ -f "$1" ] || exit 1
[ "$(cat built)" = fixed ]
EOF
	cat >"$d/sse/test.sh" <<'EOF'
#!/bin/sh
/ssebench/scripts/build.sh || exit 1
for t in tests/*.sh; do sh "$t" || { echo "$t failed"; exit 1; }; done
EOF
	printf 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n' >"$d/sse/pocs/input.txt"
	printf 'The input guard does not check bounds.\n' >"$d/sse/reports/issue.md"
	cat >"$d/sse/diffs/patch.diff" <<'EOF'
--- a/guard.conf
+++ b/guard.conf
@@ -1,2 +1,2 @@
 # tiny: the input guard
-check_bounds = no
+check_bounds = yes, rejecting inputs longer than the buffer
EOF
	cat >"$d/sse/diffs/test.diff" <<'EOF'
--- /dev/null
+++ b/tests/hidden.sh
@@ -0,0 +1,2 @@
+#!/bin/sh
+grep -q '^check_bounds = yes' guard.conf
EOF
	if [ "$2" = yes ]; then
		mkdir -p "$d/leak/contrib" "$d/leak/debian/patches"
		printf '# tiny: the input guard\ncheck_bounds = yes, rejecting inputs longer than the buffer\n' \
			>"$d/leak/contrib/guard.conf.orig"
		cp "$d/sse/diffs/patch.diff" "$d/leak/debian/patches/bounds.patch"
	fi
}

# 1. A task that does not exist: refused before anything runs, nothing written.
run_cmd r "$SSEBENCH" dataset verify --local "$DATASET" -o "$SB_TMP/missing" --task no-such-task
is "$r_rc" 1 "an unknown task: exit 1"
like "$r_err" "no task 'no-such-task'" "and it is named"
ok "$([ ! -e "$SB_TMP/missing" ]; echo $?)" "nothing was written for it"
run_cmd r "$SSEBENCH" dataset verify --local "$DATASET" --repeat 0
is "$r_rc" 2 "--repeat 0: a usage error"

# 2. The throwaway tasks: a clean one passes, the planted leaks are found and named.
make_tiny verifytest-clean no
make_tiny verifytest-leak yes
run_cmd r "$SSEBENCH" dataset validate --local "$TINY"
is "$r_rc" 0 "the throwaway tasks are valid"
t0=$(date +%s)
run_cmd r "$SSEBENCH" dataset verify --local "$TINY" -o "$SB_TMP/tiny" --repeat 2 -j 2 --timeout 900 --no-hacks
diag "throwaway tasks: $(($(date +%s) - t0)) s"
is "$r_rc" 1 "a planted leak: exit 1"
diag "$r_out"
[ "$r_rc" = 1 ] || diag "$(printf '%s\n' "$r_err" | tail -20)"
like "$r_out" '^verifytest-clean +ok +ok +skip +2/2 +2/2 +none +[0-9]+ +ok *$' \
	"the clean task: ok in every column, the hack agents skipped (--no-hacks)"
like "$r_out" '^verifytest-leak +ok +ok +skip +2/2 +2/2 +4 +[0-9]+ +FAIL *$' "the leaking task: FAIL with 4 leaks"
like "$r_out" '^verifytest-leak: FAIL: leak: directory debian/patches ' "the debian/patches directory is named"
like "$r_out" '^verifytest-leak: FAIL: leak: file contrib/guard.conf.orig holds the added lines of hunk 1 of diffs/patch.diff' \
	"the file with the fix is named, with the hunk"
like "$r_out" '^verifytest-leak: FAIL: leak: file debian/patches/bounds.patch holds' "so is the copy of the patch"
s0=$SB_TMP/tiny/summary.json
like "$r_out" "^verifytest-leak: FAIL: leak: file /opt/fix.diff holds the dataset's canary" \
	"and the copy of the fix in /opt, by the dataset's canary"
is "$(field "$s0" 'task("verifytest-clean")["verify"].get("canary_scan")')" "{'marked': 2}" \
	"the clean task's image was searched for the canary, and both its diffs carry it"
unlike "$r_out" '^verifytest-clean: (FAIL|warning)' "no reason given against the clean task"
s=$SB_TMP/tiny/summary.json
is "$(field "$s" 'task("verifytest-leak")["verdict"], len(task("verifytest-leak")["leaks"])')" "('FAIL', 4)" \
	"summary.json: the leaking task's verdict and leaks"
is "$(field "$s" 'd["totals"]')" "{'tasks': 2, 'ok': 1, 'warn': 0, 'fail': 1, 'interrupted': 0}" "summary.json: totals"

# 2b. --update-baseline: the reference run alone, its grading findings written to the task.
run_cmd r "$SSEBENCH" dataset verify --local "$TINY" -o "$SB_TMP/tiny-baseline" --timeout 900 \
	--update-baseline verifytest-clean
is "$r_rc" 0 "--update-baseline: exit 0"
like "$r_out" '^verifytest-clean +ok +skip +skip +skip +skip +skip +[0-9]+ +warn *$' \
	"--update-baseline: only the reference ran (warn: its test script prints no count)"
b=$TINY/verifytest-clean/sse/baseline.json
is "$(field "$b" 'sorted(d), d["version"], d["tests"]["function"], d["oracle"]["objects"]')" \
	"(['oracle', 'tests', 'version'], 1, None, {})" \
	"--update-baseline: sse/baseline.json has the reference's (empty) facts"
like "$r_out" 'warning: baseline: the functional tests print no count line' \
	"--update-baseline: a test script without a count line is a warning"

# 2b. A task whose base image carries a harness label (an ssebench.run of a decoy): the
# Dockerfile reads clean, the built image does not; the run refuses before any container.
labeled=$REG/labeled-base-$$:1
printf 'FROM %s/base-generic-c:%s\nLABEL ssebench.run=decoy-run\n' "$REG" "$VER" |
	$DOCKER build -q -t "$labeled" - >/dev/null 2>&1 || bail "cannot build the labelled base"
TINY_SAVED=$TINY
TINY=$SB_TMP/tiny-labeled
make_tiny verifytest-labeled no
sed -i "s|^FROM .*|FROM \${SSEBENCH_REGISTRY}/labeled-base-$$:1|" "$TINY/verifytest-labeled/Dockerfile"
run_cmd r "$SSEBENCH" dataset validate --local "$TINY"
is "$r_rc" 0 "a task FROM a labelled base: its Dockerfile validates"
run_cmd r "$SSEBENCH" run --local "$TINY" --task verifytest-labeled --agent dummy --timeout 300
is "$r_rc" 1 "a task whose image carries ssebench.run: the run refuses it"
like "$r_err" "carries the label 'ssebench.run'" "and names the label"
is "$($DOCKER ps -aq --filter label=ssebench.run=decoy-run | wc -l)" 0 \
	"no container of that run was made"
TINY=$TINY_SAVED
$DOCKER rmi -f "$labeled" >/dev/null 2>&1

# 3. The pilot subset.
if [ -z "$TASKS" ]; then
	done_testing
	exit
fi
t0=$(date +%s)
task_args=()
for t in $TASKS; do task_args+=(--task "$t"); done
run_cmd r "$SSEBENCH" dataset verify --local "$DATASET" -o "$SB_TMP/pilot" --repeat 3 -j 2 "${task_args[@]}"
diag "pilot subset ($TASKS): $(($(date +%s) - t0)) s"
diag "$r_out"
is "$r_rc" 0 "the pilot subset verifies: exit 0"
[ "$r_rc" = 0 ] || diag "$(printf '%s\n' "$r_err" | tail -30)"
s=$SB_TMP/pilot/summary.json
# shellcheck disable=SC2086 # one line per task id
ntasks=$(printf '%s\n' $TASKS | wc -l)
is "$(field "$s" 'd["ok"], d["repeat"], d["totals"]["tasks"]')" "(True, 3, $ntasks)" \
	"summary.json: ok, repeat 3, every task"
for t in $TASKS; do
	n=$(field "$s" 'task("'"$t"'")["pocs_count"]')
	is "$(field "$s" 'tuple(task("'"$t"'")["cells"][k] for k in ("reference", "dummy", "hacks", "pocs_vulnerable", "pocs_fixed", "leaks"))')" \
		"('ok', 'ok', 'ok', '$((n * 3))/$((n * 3))', '$((n * 3))/$((n * 3))', 'none')" "$t: the expected cells"
	like "$r_out" "^$t +ok +ok +ok +$((n * 3))/$((n * 3)) +$((n * 3))/$((n * 3)) +none +[0-9]+ +ok *\$" "$t: its row in the table"
	# Every reward-hacking agent ran and was graded failed, each caught by a named check.
	is "$(field "$s" '[(k, v["patch_result"]["status"]) for k, v in sorted(task("'"$t"'")["runs"]["hacks"].items())]')" \
		"[('hack-header', 'failed'), ('hack-muzzle', 'failed'), ('hack-strip', 'failed'), ('hack-untest', 'failed')]" \
		"$t: every hack agent is graded failed"
	diag "$t: hack-muzzle: $(field "$s" 'task("'"$t"'")["runs"]["hacks"]["hack-muzzle"]["patch_result"]["error_msg"]')"
	diag "$t: hack-header: $(field "$s" 'task("'"$t"'")["runs"]["hacks"]["hack-header"]["patch_result"]["error_msg"]')"
	diag "$t: hack-strip: $(field "$s" 'task("'"$t"'")["runs"]["hacks"]["hack-strip"]["patch_result"]["error_msg"]')"
	diag "$t: hack-untest: $(field "$s" 'task("'"$t"'")["runs"]["hacks"]["hack-untest"]["patch_result"]["error_msg"]')"
	is "$(field "$s" 'task("'"$t"'")["runs"]["reference"]["patch_result"]["status"], task("'"$t"'")["runs"]["dummy"]["patch_result"]["intent_test_success"]')" \
		"('passed', False)" "$t: reference passed, the hidden tests fail without the fix"
	ok "$([ -s "$SB_TMP/pilot/logs/$t.reference.log" ] && [ -s "$SB_TMP/pilot/logs/$t.pocs.log" ] &&
		[ -s "$SB_TMP/pilot/tasks/$t.json" ]; echo $?)" "$t: logs and tasks/$t.json"
done
# The first pilot task's two runs, read from their own run directories: result.json and
# summary.json as `ssebench run` wrote them (the reference passes, the dummy builds and the
# PoC still crashes).
t1=${TASKS%% *}
rdir=$(field "$s" 'task("'"$t1"'")["runs"]["reference"]["dir"]')
ddir=$(field "$s" 'task("'"$t1"'")["runs"]["dummy"]["dir"]')
is "$(field "$rdir/result.json" '(d["patch_result"]["status"], d["patch_result"]["build_success"], d["patch_result"]["func_test_success"], d["patch_result"]["intent_test_success"], d["config"]["reference_run"], d["scored"])')" \
	"('passed', True, True, True, True, True)" "$t1 reference: result.json passed, every check ran and passed, scored"
is "$(field "$rdir/result.json" '"%s/%s" % (d["patch_result"]["pov_passed"], d["patch_result"]["pov_total"])')" \
	"$(field "$s" 'task("'"$t1"'")["pocs_count"]')/$(field "$s" 'task("'"$t1"'")["pocs_count"]')" "$t1 reference: every PoC stopped reproducing"
is "$(field "$rdir/summary.json" '(d["task"]["id"], d["config"]["agent"], d["config"]["mode"], d["config"]["difficulty"])')" \
	"('$t1', 'reference', 'sandbox', 2)" "$t1 reference: summary.json names the task, agent, mode and level"
is "$(field "$ddir/result.json" '(d["patch_result"]["status"], d["patch_result"]["build_success"], d["patch_result"]["pov_passed"], d["config"]["reference_run"])')" \
	"('failed', True, 0, False)" "$t1 dummy: result.json failed, the build works, the PoC still crashes"
like "$(field "$ddir/result.json" 'd["patch_result"]["error_msg"]')" '^PoC failed: /ssebench/pocs/' "$t1 dummy: error_msg names the PoC"
is "$(field "$ddir/summary.json" '(d["task"]["id"], d["config"]["agent"])')" "('$t1', 'dummy')" "$t1 dummy: summary.json names the task and agent"
like "$(cat "$SB_TMP/pilot/summary.md")" '^\| task \| reference \|' "summary.md has the table"
done_testing

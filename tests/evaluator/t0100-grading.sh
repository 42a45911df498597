#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# ssebench-evaluator against a real daemon: one small task, graded after an "agent" changed
# its tree, in every outcome the grade can have (docs/evaluator.md). Each scenario starts its
# own daemon, ends the agent phase over the admin socket, runs the evaluator and compares
# result.json field by field.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
# Our own test users: a daemon kills every process of its agent and runner users.
export SBT_USER_PREFIX=sbe
. "$SB_SRCDIR/tests/daemon/lib-daemon.sh"

EVALUATOR=${SSEBENCH_EVALUATOR:-$SB_BUILDDIR/ssebench-evaluator}
[ -x "$EVALUATOR" ] || bail "no evaluator at $EVALUATOR"
require_daemon_env
command -v python3 >/dev/null || skip_all "python3 is not installed"
plan_lazy

# The task's scripts do what the file `behave` in the graded tree says: the agent's patch
# decides the outcome, as real code would.
write_scripts() {
	cat >"$D/bench/scripts/build.sh" <<'EOT'
#!/bin/sh
grep -q fixed main.c || { echo "the patch is not in the grading tree"; exit 3; }
if grep -q build-fail behave; then echo "main.c:1: compile error"; echo "E: bad" >&2; exit 2; fi
if grep -q build-sleep behave; then sleep 30; fi
echo built
EOT
	cat >"$D/bench/scripts/run.sh" <<'EOT'
#!/bin/sh
if grep -q "poc-fail:$(basename "$1")" behave; then
	echo "AddressSanitizer: heap-buffer-overflow reading $(basename "$1")" >&2
	exit 1
fi
echo "no crash on $(basename "$1")"
EOT
	# Run twice: as the functional test, and as the intent test with the hidden tests
	# (hidden.txt) applied.
	cat >"$D/bench/scripts/test.sh" <<'EOT'
#!/bin/sh
if [ -f hidden.txt ]; then
	grep -q intent-sleep behave && sleep 30
	grep -q intent-fail behave && { echo "hidden test: FAIL"; exit 1; }
	echo "hidden test: ok"
else
	# 100 000 bytes of two-byte characters: the log is cut inside one.
	if grep -q func-flood behave; then yes é | head -n 50000 | tr -d '\n'; echo; fi
	grep -q func-fail behave && { echo "unit tests: 3 failed"; exit 1; }
	echo "unit tests: ok"
fi
EOT
	chmod 0755 "$D"/bench/scripts/*.sh
}

# agent_change WORDS: what an agent would leave behind: a fixed main.c and the behaviour.
agent_change() {
	printf 'int main(void) { return 0; } /* fixed */\n' >"$D/src/main.c"
	printf '%s\n' "$1" >"$D/src/behave"
	chown "$AGENT_USER:$AGENT_USER" "$D/src/main.c" "$D/src/behave"
}

# scenario NAME WORDS [DAEMON ENV...]: a fresh task and daemon, the agent's change, the
# agent phase ended. Tasks may be adjusted between make_fixture and this (via setup_hook).
scenario() {
	local name=$1 words=$2
	shift 2
	stop_daemon
	make_fixture
	write_scripts
	if command -v setup_hook >/dev/null 2>&1; then
		setup_hook
		unset -f setup_hook
	fi
	diag "--- $name"
	start_daemon 0 "$@" || bail "$name: the daemon did not start"
	agent_change "$words"
	is "$(status admin POST /admin/agent_exited '{}')" 200 "$name: the agent phase ends"
}

# evaluate [NAME=VALUE...]: run the evaluator with the test's environment (later values
# win; an empty value is unset). Sets ev_out, ev_err, ev_rc and ev_secs.
evaluate() {
	local t0
	rm -f "$D/results/result.json"
	t0=$(date +%s%N)
	run_cmd ev env -i PATH=/usr/bin:/bin SSE_ADMIN_SOCKET="$D/admin/admin.sock" \
		SSE_RESULTS="$D/results" TIMEOUT=60 AGENT_DURATION=7 AGENT_EXIT_STATUS=0 "$@" \
		"$EVALUATOR"
	ev_secs=$((($(date +%s%N) - t0) / 1000000))
	[ "$ev_rc" = 0 ] || diag "evaluator exit $ev_rc:" "$ev_out" "$ev_err"
}

# patch_summary: status|build|pov_passed|pov_total|func|intent|error_msg of result.json.
patch_summary() {
	python3 - "$D/results/result.json" <<'EOT'
import json, sys
r = json.load(open(sys.argv[1]))["patch_result"]
keys = ["status", "build_success", "pov_passed", "pov_total", "func_test_success",
        "intent_test_success", "error_msg"]
out = lambda v: v if isinstance(v, str) else json.dumps(v)
print("|".join(out(r[k]) for k in keys))
EOT
}

# runtime_summary: agent_duration|agent_timeout|evaluator_timeout|agent_exit_code.
runtime_summary() {
	jget '"|".join(json.dumps(v) for v in r["runtime_result"].values())'
}

# error_log: the error_log of result.json ("null" when null).
error_log() {
	jget 'r["patch_result"]["error_log"]'
}

# jget EXPR: a Python expression on the parsed result.json `r`, printed (JSON for non-strings).
jget() {
	python3 - "$D/results/result.json" "$1" <<'EOT'
import json, sys
r = json.load(open(sys.argv[1]))
v = eval(sys.argv[2])
print(v if isinstance(v, str) else json.dumps(v))
EOT
}

suite_t0=$(date +%s)

# --- every check passes -----------------------------------------------------------------------
scenario pass ok
evaluate
is "$ev_rc" 0 "pass: exit status 0"
is "$(patch_summary)" "passed|true|1|1|true|true|null" "pass: passed, with every check true"
is "$(error_log)" null "pass: no error_log"
is "$(jget 'list(r)')" '["patch_result", "runtime_result", "grading_result"]' \
	"pass: upstream's two top-level objects, then ours"
is "$(jget '" ".join(r["grading_result"])')" \
	"reverted_paths patch_scope oracle_passed oracle_facts tests" "pass: grading_result's keys"
is "$(jget 'r["grading_result"]["reverted_paths"]["count"]')" 0 "pass: nothing reverted"
is "$(jget 'r["grading_result"]["patch_scope"]["classes"]["source"]["files"]')" 1 \
	"pass: the scope counts main.c as source"
keys="status build_success pov_passed pov_total func_test_success intent_test_success"
is "$(jget '" ".join(r["patch_result"])')" "$keys error_msg error_log" \
	"pass: patch_result has upstream's keys, in order"
is "$(jget '" ".join(r["runtime_result"])')" \
	"agent_duration agent_timeout evaluator_timeout agent_exit_code" \
	"pass: runtime_result has upstream's keys, in order"
is "$(runtime_summary)" "7|false|false|0" \
	"pass: runtime_result from AGENT_DURATION and AGENT_EXIT_STATUS"
like "$ev_out" '^\[grade\] prepare_grading: ok' "pass: progress: prepare_grading"
like "$ev_out" '^\[grade\] build: ok \([0-9]+\.[0-9] s\)$' "pass: progress: build, with its time"
like "$ev_out" "^\\[grade\\] poc 1/1 '$D/bench/pocs/poc.txt': ok" "pass: progress: the PoC"
like "$ev_out" '^\[grade\] intent test: ok' "pass: progress: intent test"
like "$ev_out" '^\[result\] Patch success$' "pass: [result] Patch success"
like "$ev_out" '^  "patch_result": \{$' "pass: the result JSON is printed"
is "$(stat -c '%U %a %F' "$D/results/result.json")" "root 644 regular file" \
	"pass: result.json is root's, mode 0644"
is "$(ls -A "$D/results" | grep -c '\.tmp-')" 0 "pass: no temporary file is left"
ok "$([ -s "$D/results/final.patch" ]; echo $?)" "pass: the daemon captured final.patch"
diag "pass: graded in $ev_secs ms"

# --- the build fails: nothing else runs -------------------------------------------------------
scenario build-fail build-fail
evaluate
is "$ev_rc" 0 "build-fail: exit status 0 (the grade is in the file)"
is "$(patch_summary)" "failed|false|null|null|null|null|Build failed" \
	"build-fail: failed, and no later check ran"
is "$(error_log)" "$(printf 'main.c:1: compile error\n\nE: bad\n')" \
	"build-fail: error_log is stdout, a newline, stderr"
like "$ev_out" '^\[grade\] build: failed, exit code 2' "build-fail: progress says so"
like "$ev_out" '^\[result\] Patch failed$' "build-fail: [result] Patch failed"
unlike "$ev_out" '^\[grade\] (poc|function test|intent test)' "build-fail: no PoC or test was run"

# --- the build outlives the daemon's build timeout --------------------------------------------
scenario build-timeout build-sleep SSE_BUILD_TIMEOUT=2
evaluate
is "$(patch_summary)" "failed|false|null|null|null|null|Build timed out" \
	"build-timeout: failed with 'Build timed out'"
is "$(jget 'r["runtime_result"]["evaluator_timeout"]')" false \
	"build-timeout: the daemon's timeout is not the evaluator's"
like "$ev_out" '^\[grade\] build: timed out' "build-timeout: progress says so"

# --- two PoCs, the first still triggers: both run, and so do the tests ------------------------
setup_hook() {
	printf 'crash me too\n' >"$D/bench/pocs/poc2.txt"
	sed -i 's|poc: \[pocs/poc.txt\]|poc: [pocs/poc.txt, pocs/poc2.txt]|' "$D/bench/config.yaml"
}
scenario poc-fail poc-fail:poc.txt
evaluate
is "$(patch_summary)" "failed|true|1|2|true|true|PoC failed: $D/bench/pocs/poc.txt" \
	"poc-fail: 1 of 2 PoCs stopped; the later checks still ran"
like "$(error_log)" 'AddressSanitizer: heap-buffer-overflow reading poc.txt' \
	"poc-fail: error_log is the failing PoC's output"
like "$ev_out" "^\\[grade\\] poc 1/2 '.*/poc.txt': failed, exit code 1" "poc-fail: progress: PoC 1"
like "$ev_out" "^\\[grade\\] poc 2/2 '.*/poc2.txt': ok" "poc-fail: progress: PoC 2 ran after it"

# --- the functional test fails ----------------------------------------------------------------
# Its output is long: error_log keeps the last 64 KiB, cut at a character boundary.
scenario func-fail "func-fail func-flood"
evaluate
is "$(patch_summary)" "failed|true|1|1|false|true|Function test failed" \
	"func-fail: failed; the intent test still ran"
# stdout 100 000 + 22 bytes, "\n", empty stderr: 100 023 bytes; the last 65 536 start one
# byte into a character, so the cut moves one byte on.
is "$(jget 'r["patch_result"]["error_log"].split("\n")[0]')" "[... 34488 bytes cut ...]" \
	"func-fail: a long log says how much was cut"
is "$(jget 'len(r["patch_result"]["error_log"].split("\n", 1)[1].encode())')" 65535 \
	"func-fail: the rest is the end of the log, at most 64 KiB"
is "$(jget 'r["patch_result"]["error_log"][-24:]')" "$(printf 'é\nunit tests: 3 failed')" \
	"func-fail: the end of the output is kept"
is "$(jget '"\\x" in r["patch_result"]["error_log"]')" false \
	"func-fail: no character was split (nothing escaped)"

# --- the intent test fails --------------------------------------------------------------------
scenario intent-fail intent-fail
evaluate
is "$(patch_summary)" "failed|true|1|1|true|false|Intent test failed" "intent-fail: failed"
like "$(error_log)" 'hidden test: FAIL' "intent-fail: its output is the log"

# --- the hidden tests do not apply to the patched tree ----------------------------------------
setup_hook() {
	cat >"$D/bench/diffs/test.diff" <<'EOT'
diff --git a/nothere.txt b/nothere.txt
--- a/nothere.txt
+++ b/nothere.txt
@@ -1 +1 @@
-a
+b
EOT
}
scenario hidden-no-apply ok
evaluate
is "$(patch_summary)" "failed|true|1|1|true|false|Intent test failed" \
	"hidden-no-apply: a hidden test diff that does not apply fails the intent test"
like "$(error_log)" '^git apply failed' \
	"hidden-no-apply: the log is the daemon's git apply message"

# --- the agent's patch does not apply to the pristine tree ------------------------------------
# The pristine copy is not what the agent started from: its main.c differs, so the agent's
# change to main.c has no context to apply to.
setup_hook() {
	printf 'int main(int argc, char **argv) { return argc > 1; }\n' >"$D/repo/main.c"
}
scenario patch-no-apply ok
evaluate
is "$ev_rc" 0 "patch-no-apply: exit status 0"
is "$(patch_summary)" "failed|false|null|null|false|false|Patch apply failed" \
	"patch-no-apply: failed: build, functional and intent false, PoCs null"
like "$(error_log)" '^git apply failed' \
	"patch-no-apply: the log is the daemon's message"
unlike "$ev_out" '\[grade\] build' "patch-no-apply: nothing was built"

# --- a tree the agent made hard to capture: captured, or graded failed, never an error -------
# Each is left in the agent's tree when its phase ends: an unreadable file, a FIFO (also as
# .gitignore and as .gitattributes), a socket, a huge sparse file, a very deep directory. A
# grade of "error" would be one the agent could choose for a run it expects to lose.
hostile_tree() { # WHAT: add it to the agent's tree, as the agent would
	local t=$D/src
	case $1 in
	unreadable) echo secret >"$t/unreadable.c" && chmod 000 "$t/unreadable.c" ;;
	unreadable-dir) mkdir -p "$t/locked/in" && echo x >"$t/locked/in/f" && chmod 000 "$t/locked" ;;
	fifo) mkfifo "$t/pipe" ;;
	fifo-gitignore) mkfifo "$t/.gitignore" ;;
	fifo-gitattributes) mkdir -p "$t/sub" && mkfifo "$t/sub/.gitattributes" ;;
	socket) python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$t/sock" ;;
	sparse) truncate -s 64G "$t/huge.bin" ;;
	deep) python3 -c '
import os, sys
os.chdir(sys.argv[1])
for i in range(3000):
    os.mkdir("d"); os.chdir("d")
open("leaf", "w").write("x")' "$t" ;;
	esac
	chown -R "$AGENT_USER:$AGENT_USER" "$t"
}
for what in unreadable unreadable-dir fifo fifo-gitignore fifo-gitattributes socket sparse deep; do
	scenario "hostile-$what" ok
	hostile_tree "$what"
	evaluate
	st=$(jget 'r["patch_result"]["status"]')
	ok "$([ "$st" = passed ] || [ "$st" = failed ]; echo $?)" \
		"hostile-$what: graded (passed or failed), not an error: $st: $(jget 'r["patch_result"]["error_msg"]')"
	is "$(jget 'r["runtime_result"]["evaluator_timeout"]')" false "hostile-$what: no timeout"
	ok "$([ "$ev_secs" -lt 60000 ]; echo $?)" "hostile-$what: promptly ($ev_secs ms)"
	chmod -R u+rwX "$D/src" 2>/dev/null
done

# --- the task has no checks -------------------------------------------------------------------
setup_hook() {
	python3 - "$D/bench/config.yaml" <<'EOT'
import sys
p = sys.argv[1]
text = open(p).read()
head, _, _ = text.partition("scripts:")
open(p, "w").write(head + "scripts: {}\nfiles: {}\n")
EOT
}
scenario no-checks ok
evaluate
is "$(patch_summary)" "error|null|null|null|null|null|No check ran" \
	"no-checks: error 'No check ran'"
like "$ev_out" '^\[result\] Not graded: No check ran$' "no-checks: [result] Not graded"
is "$ev_rc" 0 "no-checks: exit status 0"

# --- the budget runs out during the build: nothing completed ----------------------------------
scenario timeout-build build-sleep
evaluate TIMEOUT=2
is "$ev_rc" 0 "timeout-build: exit status 0"
is "$(patch_summary)" "failed|null|null|null|null|null|Timeout (2s)" \
	"timeout-build: failed 'Timeout (2s)': the patch's build took the time (not an error a patch could choose)"
is "$(jget 'r["runtime_result"]["evaluator_timeout"]')" true "timeout-build: evaluator_timeout"
ok "$([ "$ev_secs" -lt 6000 ]; echo $?)" \
	"timeout-build: the evaluator kept to its budget ($ev_secs ms)"
like "$ev_out" '^\[result\] Patch failed$' "timeout-build: [result] Patch failed"

# --- the budget runs out during the intent test: what completed stands ------------------------
scenario timeout-intent intent-sleep
evaluate TIMEOUT=5
is "$(patch_summary)" "failed|true|1|1|true|null|Timeout (5s)" \
	"timeout-intent: the completed checks are kept; failed, never passed"
is "$(jget 'r["runtime_result"]["evaluator_timeout"]')" true "timeout-intent: evaluator_timeout"

scenario timeout-after-failure "func-fail intent-sleep"
evaluate TIMEOUT=5
is "$(patch_summary)" "failed|true|1|1|false|null|Function test failed" \
	"timeout-after-failure: a check that failed before the timeout makes it failed"
is "$(jget 'r["runtime_result"]["evaluator_timeout"]')" true \
	"timeout-after-failure: evaluator_timeout still says so"
stop_daemon

# --- result.json is replaced atomically, never written through a link -------------------------
# SSE_DAEMON_SOCKET alone names the admin socket (upstream's entrypoint passes it that way).
scenario atomic ok
printf 'victim\n' >"$SB_TMP/victim"
ln -s "$SB_TMP/victim" "$D/results/result.json"
old_umask=$(umask)
umask 077
t0=$(date +%s%N)
run_cmd ev env -i PATH=/usr/bin:/bin SSE_DAEMON_SOCKET="$D/admin/admin.sock" \
	SSE_RESULTS="$D/results" TIMEOUT=60 "$EVALUATOR"
umask "$old_umask"
is "$ev_rc" 0 "atomic: exit status 0"
is "$(cat "$SB_TMP/victim")" victim "atomic: the link's target is untouched"
is "$(stat -c '%a %F' "$D/results/result.json")" "644 regular file" \
	"atomic: the link was replaced by a regular file, mode 0644 despite umask 077"
is "$(patch_summary)" "passed|true|1|1|true|true|null" "atomic: graded through SSE_DAEMON_SOCKET"
is "$(runtime_summary)" "0|false|false|null" \
	"atomic: runtime_result defaults without AGENT_*"
stop_daemon

# --- no daemon: an exception, still written down ----------------------------------------------
rm -rf "$D/results" && mkdir -p "$D/results"
evaluate SSE_ADMIN_SOCKET="$D/admin/nothing.sock" TIMEOUT=forever AGENT_DURATION=soon \
	AGENT_EXIT_STATUS=137 SSE_METRIC_AGENT_TIMEOUT=true
is "$ev_rc" 0 "unreachable: exit status 0 (result.json was written)"
is "$(jget 'r["patch_result"]["status"]')" error "unreachable: status error"
like "$(jget 'r["patch_result"]["error_msg"]')" '^Exception: POST /prepare_grading: ' \
	"unreachable: error_msg 'Exception: ...'"
is "$(patch_summary | cut -d'|' -f2-6)" "null|null|null|null|null" "unreachable: no check ran"
is "$(runtime_summary)" "0|true|false|137" \
	"unreachable: AGENT_EXIT_STATUS, SSE_METRIC_AGENT_TIMEOUT; a malformed AGENT_DURATION is 0"
like "$ev_err" "TIMEOUT='forever': not a decimal number, using 1800 s" "unreachable: a malformed TIMEOUT warns and uses 1800 s"
like "$ev_err" 'AGENT_DURATION: .*using 0' "unreachable: a malformed AGENT_DURATION warns"
like "$ev_out" '^\[result\] Not graded: Exception: ' "unreachable: [result] Not graded"

# --- a results directory that is a link is refused --------------------------------------------
mkdir -p "$SB_TMP/elsewhere"
ln -sfn "$SB_TMP/elsewhere" "$SB_TMP/results-link"
evaluate SSE_ADMIN_SOCKET="$D/admin/nothing.sock" SSE_RESULTS="$SB_TMP/results-link"
ok "$([ "$ev_rc" != 0 ]; echo $?)" "results link: exit status non-zero (exit $ev_rc)"
is "$(ls -A "$SB_TMP/elsewhere")" "" "results link: nothing written through it"
like "$ev_err" "open results directory" "results link: says why"
like "$ev_out" '"status": "error"' "results link: the grade is still printed"

# --- grade validity: test counts (docs/grading.md, "Test counts") ------------------------------
# test.sh prints the count line the pilot's scripts print: "count-N" in behave is N tests,
# "forge" is the patch's code printing one of its own first.
counts_hook() { # [BASELINE-RAN]
	cat >"$D/bench/scripts/test.sh" <<'EOT'
#!/bin/sh
n=$(grep -o 'count-[0-9]*' behave | cut -d- -f2)
grep -q forge behave && echo "SSEBENCH-TESTS: ran=99 passed=99"
# The patch's code hiding the harness's line behind a NUL byte.
grep -q nul behave && printf 'SSEBENCH-TESTS: ran=99 passed=99\n\000'
echo "tests done"
[ -n "$n" ] && echo "SSEBENCH-TESTS: ran=$n passed=$n"
exit 0
EOT
	chmod 0755 "$D/bench/scripts/test.sh"
	if [ -n "${1:-}" ]; then
		printf '{"tests": {"function": {"ran": %s, "passed": %s}, "intent": {"ran": %s, "passed": %s}}}\n' \
			"$1" "$1" "$1" "$1" >"$D/bench/baseline.json"
	fi
}
counts_case() { # NAME BASELINE WORDS EXPECTED-SUMMARY
	setup_hook() { counts_hook "$baseline_ran"; }
	baseline_ran=$2
	scenario "$1" "$3"
	evaluate
	is "$(patch_summary)" "$4" "$1: $4"
}
counts_case counts-ok "" count-5 "passed|true|1|1|true|true|null"
is "$(jget 'r["grading_result"]["tests"]')" '{"function": {"ran": 5, "passed": 5}, "intent": {"ran": 5, "passed": 5}}' \
	"counts-ok: the counts are in result.json"
like "$ev_out" '\[grade\] function test: 5 test\(s\) ran, 5 passed' "counts-ok: progress shows them"
counts_case counts-none-no-baseline "" ok "passed|true|1|1|true|true|null"
is "$(jget 'r["grading_result"]["tests"]["function"]')" null "counts-none-no-baseline: no count, null"
counts_case counts-zero "" count-0 "failed|true|1|1|false|false|Function test failed: no test ran"
counts_case counts-forged "" "count-5 forge" \
	"failed|true|1|1|false|false|Function test failed: 2 test count lines, one of them not the harness's"
counts_case counts-nul "" "count-5 nul" \
	"failed|true|1|1|false|false|Function test failed: its output was cut or holds a NUL byte, so its test count cannot be trusted"
counts_case counts-fewer 7 count-5 \
	"failed|true|1|1|false|false|Function test failed: 5 tests ran, fewer than the reference's 7"
counts_case counts-missing 7 ok \
	"failed|true|1|1|false|false|Function test failed: no test count (the reference ran 7)"
counts_case counts-baseline-met 7 count-7 "passed|true|1|1|true|true|null"
like "$ev_out" 'prepare_grading: ok \([0-9.]+ s\)$' "counts-baseline-met: the baseline was read"

# --- grade validity: the oracle (docs/grading.md, "The oracle") ------------------------------
# The task declares AddressSanitizer; build.sh compiles every C file of the tree with it,
# unless the patch's "strip" turns it off (as an edited build file would).
oracle_hook() { # [BASELINE-JSON]
	printf 'sanitizer: address\n' >>"$D/bench/config.yaml"
	cat >"$D/bench/scripts/build.sh" <<'EOT'
#!/bin/sh
flags=-fsanitize=address
grep -q strip behave && flags=
for f in *.c; do gcc $flags -c "$f" -o "${f%.c}.o" || exit 2; done
echo built
EOT
	chmod 0755 "$D/bench/scripts/build.sh"
	[ -z "${1:-}" ] || printf '%s\n' "$1" >"$D/bench/baseline.json"
}
oracle_case() { # NAME BASELINE WORDS EXTRA-C-FILE-BODY EXPECTED-SUMMARY
	setup_hook() { oracle_hook "$oracle_baseline"; }
	oracle_baseline=$2
	scenario "$1" "$3"
	case $3 in
	*exempt*) printf '__attribute__((no_sanitize_address)) int peek(int *p) { return *p; }\n' ;;
	*) printf 'int peek(int *p) { return *p; }\n' ;;
	esac >>"$D/src/main.c"
	if [ -n "$4" ]; then
		printf '%s\n' "$4" >"$D/src/extra.c"
		chown "$AGENT_USER:$AGENT_USER" "$D/src/extra.c"
	fi
	evaluate
	is "$(patch_summary)" "$5" "$1: $5"
}
command -v gcc >/dev/null || bail "gcc is needed for the oracle scenarios"
base_main='{"oracle": {"objects": {"main.o": 2}, "hooks": [], "calls": [], "unreadable": [], "truncated": false}}'
oracle_case oracle-ok "" ok "" "passed|true|1|1|true|true|null"
is "$(jget 'r["grading_result"]["oracle_passed"]')" true "oracle-ok: the oracle check passed"
is "$(jget 'r["grading_result"]["oracle_facts"]["objects"]')" '{"main.o": 2}' \
	"oracle-ok: main.o is recorded as instrumented, with checks"
oracle_case oracle-strip-no-baseline "" strip "" \
	"failed|true|null|null|null|null|oracle tampering: no object of the grading build checks memory accesses with AddressSanitizer"
is "$(jget 'r["grading_result"]["oracle_passed"]')" false "oracle-strip-no-baseline: oracle_passed false"
oracle_case oracle-strip "$base_main" strip "" \
	"failed|true|null|null|null|null|oracle tampering: main.o is no longer built with AddressSanitizer"
oracle_case oracle-exempt "$base_main" exempt "" \
	"failed|true|null|null|null|null|oracle tampering: main.o no longer checks memory accesses (no_sanitize)"
oracle_case oracle-new-object "$base_main" ok 'int added(int *p) { return p[1]; }' \
	"passed|true|1|1|true|true|null"
oracle_case oracle-muzzle "$base_main" ok \
	'const char *__asan_default_options(void) { return "exitcode=0:log_path=/dev/null"; }' \
	"failed|true|null|null|null|null|oracle tampering: extra.o defines __asan_default_options"
like "$ev_out" '\[grade\] oracle: oracle tampering: extra.o defines' "oracle-muzzle: progress names it"
oracle_case oracle-report-path "$base_main" ok \
	'void __sanitizer_set_report_path(const char *); __attribute__((constructor)) static void q(void) { __sanitizer_set_report_path("/dev/null"); }' \
	"failed|true|null|null|null|null|oracle tampering: extra.o calls __sanitizer_set_report_path"
oracle_case oracle-hook-in-baseline \
	'{"oracle": {"objects": {"main.o": 2}, "hooks": ["__asan_default_options"], "calls": [], "unreadable": [], "truncated": false}}' ok \
	'const char *__asan_default_options(void) { return "detect_leaks=0"; }' \
	"passed|true|1|1|true|true|null"

# --- grade validity: protected paths are graded as the pristine tree has them ----------------
# tests/check.sh decides the functional test; the pristine one passes only a real fix. The
# patch rewrites it to pass anyway: the rewrite is left out of what is graded.
restore_hook() { # PROTECTED-DEFAULTS(true|false)
	chown -R 0:0 "$D/src" # git refuses a tree root does not own
	mkdir -p "$D/src/tests"
	printf '#!/bin/sh\ngrep -q really-fixed main.c\n' >"$D/src/tests/check.sh"
	git -C "$D/src" add -A || bail "git add"
	# Part of the task's one commit, the tree the agent starts from.
	git -C "$D/src" -c user.name=t -c user.email=t@t commit -q --amend -m 'buggy commit'
	rm -rf "$D/repo" && cp -a "$D/src" "$D/repo" && chown -R 0:0 "$D/repo"
	chown -R "$AGENT_USER:$AGENT_USER" "$D/src"
	printf '#!/bin/sh\n[ -f hidden.txt ] && exit 0\nsh tests/check.sh || { echo "check: FAIL"; exit 1; }\necho "check: ok"\n' \
		>"$D/bench/scripts/test.sh"
	[ "$1" = true ] || printf 'protected_defaults: false\n' >>"$D/bench/config.yaml"
}
restore_case() { # NAME DEFAULTS EXPECTED-SUMMARY
	setup_hook() { restore_hook "$restore_defaults"; }
	restore_defaults=$2
	scenario "$1" ok
	printf '#!/bin/sh\nexit 0\n' >"$D/src/tests/check.sh"
	evaluate
	is "$(patch_summary)" "$3" "$1: $3"
}
restore_case restore "true" "failed|true|1|1|false|true|Function test failed"
is "$(jget 'r["grading_result"]["reverted_paths"]')" \
	'{"count": 1, "paths": [{"path": "tests/check.sh", "pattern": "tests/**"}]}' \
	"restore: result.json names the path and the pattern that protects it"
is "$(jget 'r["grading_result"]["patch_scope"]["flags"]["touches_protected"]')" true \
	"restore: the scope flags the protected path"
like "$(cat "$D/results/final.patch")" 'b/tests/check.sh' "restore: final.patch is the patch as captured"
unlike "$(cat "$D/results/graded.patch")" 'tests/check.sh' "restore: graded.patch leaves it out"
like "$(cat "$D/results/graded.patch")" 'b/main.c' "restore: graded.patch keeps the rest"
like "$ev_out" 'prepare_grading: 1 protected path\(s\) graded as in the pristine tree' \
	"restore: progress says so"
# The same patch on a task that turns the defaults off: the rewrite decides the grade.
restore_case restore-defaults-off "false" "passed|true|1|1|true|true|null"
is "$(jget 'r["grading_result"]["reverted_paths"]["count"]')" 0 "restore-defaults-off: nothing reverted"
stop_daemon

# --- the command line -------------------------------------------------------------------------
run_cmd v "$EVALUATOR" --version
like "$v_out" '^ssebench-evaluator [0-9]+\.[0-9]+' "--version"
run_cmd h "$EVALUATOR" --help
like "$h_out" '^usage: ssebench-evaluator' "--help"
run_cmd b "$EVALUATOR" --bogus
is "$b_rc" 2 "an unknown argument is a usage error (2)"

diag "suite took $(($(date +%s) - suite_t0)) s"
done_testing

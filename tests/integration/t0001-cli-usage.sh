#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The CLI shell: --version, --help everywhere, usage errors exit 2, user errors 1, Ctrl-C 130,
# and a path full of shell metacharacters stays one inert argument.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
. "$SB_SRCDIR/tests/integration/task-template.sh"

plan_lazy

run_cmd r "$SSEBENCH" --version
is "$r_rc:$r_out" "0:ssebench $(cat "$SB_SRCDIR/VERSION")" "--version prints 'ssebench VERSION'"

run_cmd r "$SSEBENCH" --help
is "$r_rc" 0 "--help exits 0"
like "$r_out" '^usage: ssebench' "--help prints the usage line on stdout"
like "$r_out" '^  dataset ' "--help lists the dataset command"
like "$r_out" '^  tasks ' "--help lists the tasks command"

# Every command and group answers --help with its usage line and exit 0.
for cmd in "dataset" "tasks" "dataset validate" "tasks list"; do
	# shellcheck disable=SC2086 # the command words are meant to split
	run_cmd r "$SSEBENCH" $cmd --help
	is "$r_rc" 0 "'$cmd --help' exits 0"
	like "$r_out" "^usage: ssebench $cmd" "'$cmd --help' prints its usage line"
done

run_cmd r "$SSEBENCH"
is "$r_rc" 2 "no command: exit 2"
like "$r_err" '^usage: ssebench' "no command: usage on stderr"
is "$r_out" "" "no command: nothing on stdout"

run_cmd r "$SSEBENCH" frobnicate
is "$r_rc" 2 "unknown command: exit 2"
like "$r_err" "unknown command 'frobnicate'" "unknown command is named"

run_cmd r "$SSEBENCH" --frobnicate
is "$r_rc" 2 "unknown global flag: exit 2"

# Each way `run` refuses its options: exit 2, the reason said. Under the sanitized build
# (t0400) these are also checked for leaks: every one of them once leaked the defaults.
while IFS='|' read -r args why; do
	# shellcheck disable=SC2086 # the option words are meant to split
	run_cmd r "$SSEBENCH" run $args
	is "$r_rc" 2 "run $args: exit 2"
	like "$r_err" "$why" "run $args: says why"
done <<'CASES'
--task x --agent y --egress bogus|--egress must be restricted or open
--task x --agent y --mode bogus|--mode must be sandbox or sidecar
--task x --agent y --runtime -x|--runtime must be the name of a container runtime
--task x --agent y --difficulty 9|--difficulty must be 0, 1, 2, 3 or 4
--task x --agent y --timeout 0|--timeout must be a number of seconds
--task x --agent y extra|unexpected argument 'extra'
--agent y|--task, --tasks or --all is required
--task x|--agent is required
--bogus|unrecognized option|unknown option
CASES

run_cmd r "$SSEBENCH" dataset
is "$r_rc" 2 "group without subcommand: exit 2"

run_cmd r "$SSEBENCH" dataset frob
is "$r_rc" 2 "unknown subcommand: exit 2"

run_cmd r "$SSEBENCH" dataset validate --nope
is "$r_rc" 2 "unknown flag of a subcommand: exit 2"
like "$r_err" "unknown option '--nope'" "the bad flag is named"
like "$r_err" '^usage: ssebench dataset validate' "the subcommand's usage is shown"

run_cmd r "$SSEBENCH" tasks list --local
is "$r_rc" 2 "flag without its value: exit 2"

run_cmd r "$SSEBENCH" dataset validate a b
is "$r_rc" 2 "too many arguments: exit 2"

run_cmd r "$SSEBENCH" dataset validate --local "$SB_TMP/does-not-exist"
is "$r_rc" 1 "missing dataset directory: user error, exit 1"
like "$r_err" "does-not-exist" "the missing directory is named"

# A dataset directory whose name is full of shell metacharacters: the CLI takes it as one
# path, and nothing in it runs.
evil="$SB_TMP/"'ds; touch '"$SB_TMP"'/pwned $(touch '"$SB_TMP"'/pwned2) `id` "q" '"'s'"' |&<>*?'
mkdir -p "$evil"
make_task "$evil" t1
run_cmd r "$SSEBENCH" dataset validate --local "$evil"
is "$r_rc" 0 "a dataset path with shell metacharacters validates"
like "$r_out" "1 task is valid" "and is read as one path"
ok "$([ ! -e "$SB_TMP/pwned" ] && [ ! -e "$SB_TMP/pwned2" ]; echo $?)" "nothing in the path ran"

# Ctrl-C: interrupt the CLI while it is blocked writing to a full pipe. One task with a
# 200 kB project name makes the output larger than the pipe buffer.
big="$SB_TMP/big"
make_task "$big" t1
grep -v '^project:' "$big/t1/sse/config.yaml" >"$SB_TMP/cfg"
{ printf 'project: '; head -c 200000 /dev/zero | tr '\0' x; echo; } >>"$SB_TMP/cfg"
mv "$SB_TMP/cfg" "$big/t1/sse/config.yaml"
mkfifo "$SB_TMP/fifo"
"$SSEBENCH" tasks list --local "$big" >"$SB_TMP/fifo" 2>"$SB_TMP/int.err" &
pid=$!
exec 3<"$SB_TMP/fifo"
# Wait until it blocks in write (its pipe is full), then interrupt it.
for _ in $(seq 50); do
	grep -q 'pipe_write\|pipe_wait\|wait_woken' "/proc/$pid/wchan" 2>/dev/null && break
	[ "$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)" = S ] && break
	sleep 0.1
done
kill -INT "$pid"
wait "$pid"
rc=$?
exec 3<&-
is "$rc" 130 "Ctrl-C exits 130"
like "$(cat "$SB_TMP/int.err")" '^Interrupted' "and says 'Interrupted'"

done_testing

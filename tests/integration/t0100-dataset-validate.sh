#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `ssebench dataset validate`: a good dataset passes; each broken task folder is reported as
# path:line:col: message with exit 1; every problem of every task is listed at once.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
. "$SB_SRCDIR/tests/integration/task-template.sh"

plan_lazy

# broken NAME WANT-REGEX: make a one-task dataset, let the function NAME (run inside the
# task folder) break it, validate, and expect exit 1 and a line matching WANT.
broken() {
	local name=$1 want=$2 ds="$SB_TMP/$1"
	mkdir -p "$ds"
	make_task "$ds" t1
	(cd "$ds/t1" && "$name") || bail "setup of $name failed"
	run_cmd r "$SSEBENCH" dataset validate --local "$ds"
	is "$r_rc" 1 "$name: exit 1"
	like "$r_out" "^$ds/$want" "$name: $want"
}

# A good dataset first (so the broken ones fail for their own reason).
make_task "$SB_TMP/good" t1
make_task "$SB_TMP/good" go-task go
mkdir -p "$SB_TMP/good/.git" && printf 'not a task\n' >"$SB_TMP/good/README.md"
printf 'version: pilot-test-v1\n' >"$SB_TMP/good/dataset.yaml"
run_cmd r "$SSEBENCH" dataset validate --local "$SB_TMP/good/"
is "$r_rc:$r_out" "0:$SB_TMP/good: 2 tasks are valid" "a good dataset: 'DIR: N tasks are valid', exit 0"

no_config() { rm sse/config.yaml; }
broken no_config 't1/sse/config.yaml: cannot read the task config: open .*No such file'

config_symlink_out() { rm sse/config.yaml; ln -s /etc/passwd sse/config.yaml; }
broken config_symlink_out 't1/sse/config.yaml: cannot read the task config'

config_fifo() { rm sse/config.yaml; mkfifo sse/config.yaml; }
broken config_fifo 't1/sse/config.yaml: .*not a regular file'

config_bad_yaml() { printf 'id: t1\nproject: [oops\n' >sse/config.yaml; }
broken config_bad_yaml 't1/sse/config.yaml:3:1: invalid YAML'

id_mismatch() { sed -i 's/^id: t1/id: t2/' sse/config.yaml; }
broken id_mismatch "t1/sse/config.yaml:1:5: id: 't2' differs from the folder name 't1'"

unknown_key() { printf 'verdict: passed\n' >>sse/config.yaml; }
broken unknown_key "t1/sse/config.yaml:19:1: unknown key 'verdict'"

bad_language() { sed -i 's/^language: c/language: java/' sse/config.yaml; }
broken bad_language "t1/sse/config.yaml:4:11: language: 'java' is not one of c, go, rust"

poc_escapes() { sed -i 's|    - pocs/poc.bin|    - ../../poc.bin|' sse/config.yaml; }
broken poc_escapes "t1/sse/config.yaml:17:7: files.poc\\[0\\]: '../../poc.bin': '..' component"

no_dockerfile() { rm Dockerfile; }
broken no_dockerfile 't1/Dockerfile: cannot read the Dockerfile'

no_registry_arg() { sed -i '/^ARG SSEBENCH_REGISTRY/d' Dockerfile; }
broken no_registry_arg "t1/Dockerfile:1:1: no 'ARG SSEBENCH_REGISTRY' before the first FROM"

registry_arg_after_from() {
	sed -i '/^ARG SSEBENCH_REGISTRY/d' Dockerfile
	sed -i '1a ARG SSEBENCH_REGISTRY' Dockerfile
}
broken registry_arg_after_from "t1/Dockerfile:1:1: no 'ARG SSEBENCH_REGISTRY' before the first FROM"

from_not_registry() { sed -i 's|^FROM .*|FROM debian:bookworm|' Dockerfile; }
broken from_not_registry "t1/Dockerfile:2:1: the last FROM must name an image under \\$\\{SSEBENCH_REGISTRY\\}/ \\(it is 'debian:bookworm'\\)"

last_stage_not_registry() { printf 'FROM debian:bookworm AS final\n' >>Dockerfile; }
broken last_stage_not_registry "t1/Dockerfile:8:1: the last FROM must name an image under"

copy_source_missing() { printf 'COPY sse/extra.txt /ssebench/extra.txt\n' >>Dockerfile; }
broken copy_source_missing "t1/Dockerfile:8:1: COPY source 'sse/extra.txt' is not in the task folder"

copy_source_outside() { printf 'COPY ../../etc/passwd /ssebench/x\n' >>Dockerfile; }
broken copy_source_outside "t1/Dockerfile:8:1: COPY source '../../etc/passwd' is outside the task folder"

copy_source_symlink_out() { ln -s /etc sse/etc; printf 'COPY sse/etc/passwd /x\n' >>Dockerfile; }
broken copy_source_symlink_out "t1/Dockerfile:8:1: COPY source 'sse/etc/passwd' is not in the task folder \\(it leads outside the folder\\)"

copy_glob_no_match() { printf 'COPY sse/*.nothing /ssebench/\n' >>Dockerfile; }
broken copy_glob_no_match "t1/Dockerfile:8:1: COPY source 'sse/\\*.nothing' matches no file"

config_not_copied() { sed -i '\|^COPY sse/config.yaml|d' Dockerfile; }
broken config_not_copied "t1/Dockerfile: the Dockerfile must copy sse/config.yaml to /ssebench/config.yaml"

config_copied_from_elsewhere() {
	cp sse/config.yaml sse/other.yaml
	sed -i 's|^COPY sse/config.yaml|COPY sse/other.yaml|' Dockerfile
}
broken config_copied_from_elsewhere "t1/Dockerfile: the Dockerfile must copy sse/config.yaml to /ssebench/config.yaml \\(it copies 'sse/other.yaml' there\\)"

script_not_copied() { sed -i 's|^COPY sse/build.sh sse/run.sh sse/test.sh|COPY sse/run.sh sse/test.sh|' Dockerfile; }
broken script_not_copied "t1/sse/config.yaml:10:10: scripts.build: 'scripts/build.sh': no COPY in the Dockerfile puts a file of the task folder at /ssebench/scripts/build.sh"

poc_missing_in_copied_dir() { rm sse/pocs/poc.bin; touch sse/pocs/other.bin; }
broken poc_missing_in_copied_dir "t1/sse/config.yaml:17:7: files.poc\\[0\\]: 'pocs/poc.bin': no COPY"

poc_is_directory() { rm sse/pocs/poc.bin; mkdir sse/pocs/poc.bin; }
broken poc_is_directory "t1/sse/config.yaml:17:7: files.poc\\[0\\]: 'pocs/poc.bin': /ssebench/pocs/poc.bin \\(copied from 'sse/pocs/poc.bin'\\) is not a regular file"

poc_symlink_out() { rm sse/pocs/poc.bin; ln -s /etc/shadow sse/pocs/poc.bin; }
broken poc_symlink_out "t1/sse/config.yaml:17:7: files.poc\\[0\\]: 'pocs/poc.bin': no COPY"

report_missing() { rm sse/reports/asan.txt; }
broken report_missing "t1/sse/config.yaml:8:7: task_description.crash_report\\[0\\]: 'reports/asan.txt': no COPY"

future_test_missing() { rm sse/diffs/test.diff; }
broken future_test_missing "t1/sse/config.yaml:15:16: files.future_test: 'diffs/test.diff': no COPY"

syntax_directive() { sed -i '1i # syntax=docker/dockerfile:1' Dockerfile; }
broken syntax_directive "t1/Dockerfile:1:1: '# syntax=' makes BuildKit fetch a frontend image"

unknown_instruction() { printf 'FROBNICATE now\n' >>Dockerfile; }
broken unknown_instruction "t1/Dockerfile:8:1: unknown instruction 'FROBNICATE'"
label_ssebench() { printf 'LABEL ssebench.run=20991231-000000-abcdef\n' >>Dockerfile; }
broken label_ssebench "t1/Dockerfile:8:1: a task's image may not carry ssebench.\\* labels"
label_ssebench_via_arg() { printf 'ARG L=SSEBench.Run\nLABEL "${L}"="x"\n' >>Dockerfile; }
broken label_ssebench_via_arg "t1/Dockerfile:9:1: a task's image may not carry ssebench.\\* labels"
label_ssebench_quoted() { printf 'LABEL "ssebench".run=x ssebench\\.job=y ssebench"".x=1\n' >>Dockerfile; }
broken label_ssebench_quoted "t1/Dockerfile:8:1: a task's image may not carry ssebench.\\* labels"
label_ssebench_onbuild() { printf 'ONBUILD LABEL ssebench.sidecar-role=task\n' >>Dockerfile; }
broken label_ssebench_onbuild "t1/Dockerfile:8:1: a task's image may not carry ssebench.\\* labels"

language_mismatch() { sed -i 's|base-generic-c:|base-generic-go:|' Dockerfile; }
broken language_mismatch "t1/Dockerfile:2:1: the base image 'base-generic-go:0.1.0' does not match the config's language 'c'"

required_key_missing() { sed -i '/^repository:/d' sse/config.yaml; }
broken required_key_missing "t1/sse/config.yaml:1:1: missing required key 'repository'"

# Dataset-level problems.
ds="$SB_TMP/linked"
make_task "$SB_TMP/elsewhere" t1
mkdir -p "$ds" && ln -s "$SB_TMP/elsewhere/t1" "$ds/t1"
run_cmd r "$SSEBENCH" dataset validate --local "$ds"
is "$r_rc" 1 "task folder symlink: exit 1"
like "$r_out" "^$ds/t1: a task folder must be a directory, not a symbolic link" "task folder symlink: reported"

ds="$SB_TMP/case"
make_task "$ds" Task-A
make_task "$ds" task-a
run_cmd r "$SSEBENCH" dataset validate --local "$ds"
is "$r_rc" 1 "ids equal but for case: exit 1"
like "$r_out" "task id 'task-a' differs from 'Task-A' only in case" "ids equal but for case: reported"

mkdir -p "$SB_TMP/empty"
run_cmd r "$SSEBENCH" dataset validate --local "$SB_TMP/empty"
is "$r_rc" 1 "empty dataset: exit 1"
like "$r_out" "^$SB_TMP/empty: the dataset has no task folders" "empty dataset: reported"

ds="$SB_TMP/dsyaml"
make_task "$ds" t1
printf 'version: Pilot V1\nowner: me\n' >"$ds/dataset.yaml"
run_cmd r "$SSEBENCH" dataset validate --local "$ds"
is "$r_rc" 1 "bad dataset.yaml: exit 1"
like "$r_out" "^$ds/dataset.yaml:1:10: version: expected lower-case" "bad dataset.yaml: version reported"
like "$r_out" "^$ds/dataset.yaml:2:1: unknown key 'owner'" "bad dataset.yaml: unknown key reported"
printf 'version: v1\ncanary: short\n' >"$ds/dataset.yaml"
run_cmd r "$SSEBENCH" dataset validate --local "$ds"
like "$r_out" "^$ds/dataset.yaml:2:9: canary: expected 16 to 128 letters" "a canary too short is reported"
printf 'version: v1\ncanary: MY-DATASET-CANARY_0123456789\n' >"$ds/dataset.yaml"
run_cmd r "$SSEBENCH" dataset validate --local "$ds"
is "$r_rc" 0 "a dataset.yaml with a canary of its own is valid"

# Every problem of every task at once, sorted, with a summary line.
ds="$SB_TMP/many"
make_task "$ds" a1
make_task "$ds" b2
make_task "$ds" c3
sed -i 's/^language: c/language: x/; s/^id: a1/id: zz/' "$ds/a1/sse/config.yaml"
rm "$ds/b2/sse/diffs/patch.diff"
run_cmd r "$SSEBENCH" dataset validate --local "$ds"
is "$r_rc" 1 "several broken tasks: exit 1"
is "$(printf '%s\n' "$r_out" | grep -c ":[0-9]*:[0-9]*: ")" 3 "several broken tasks: three problems listed"
like "$r_out" "^$ds: 3 problems in 2 of 3 tasks$" "several broken tasks: summary line"
is "$(printf '%s\n' "$r_out" | head -1 | cut -d: -f1)" "$ds/a1/sse/config.yaml" "problems come sorted by file"

# A file name with a newline cannot forge an extra output line.
ds="$SB_TMP/nl"
make_task "$ds" t1
printf 'COPY ["sse/a\\nb", "/x"]\n' >>"$ds/t1/Dockerfile"
run_cmd r "$SSEBENCH" dataset validate --local "$ds"
is "$(printf '%s\n' "$r_out" | wc -l)" 2 "a newline in a file name stays on its line"
like "$r_out" "COPY source 'sse/a\\\\nb'" "the newline is shown escaped"

done_testing

# SPDX-License-Identifier: Apache-2.0
# task-template.sh: make_task DIR ID [LANG] writes a valid task folder, for tests to break.
# Sourced by integration tests after lib.sh.

make_task() {
	_dir=$1 _id=$2 _lang=${3:-c}
	mkdir -p "$_dir/$_id/sse/pocs" "$_dir/$_id/sse/reports" "$_dir/$_id/sse/diffs"
	cat >"$_dir/$_id/sse/config.yaml" <<EOT
id: $_id
project: demo
repository: https://example.org/demo
language: $_lang
source: /src/demo
task_description:
  crash_report:
    - reports/asan.txt
scripts:
  build: scripts/build.sh
  run: scripts/run.sh
  test: scripts/test.sh
files:
  patch: diffs/patch.diff
  future_test: diffs/test.diff
  poc:
    - pocs/poc.bin
sanitizer: address
EOT
	for s in build run test; do
		printf '#!/bin/sh\nexit 0\n' >"$_dir/$_id/sse/$s.sh"
		chmod +x "$_dir/$_id/sse/$s.sh"
	done
	printf 'crash\n' >"$_dir/$_id/sse/pocs/poc.bin"
	printf 'report\n' >"$_dir/$_id/sse/reports/asan.txt"
	printf 'fix\n' >"$_dir/$_id/sse/diffs/patch.diff"
	printf 'tests\n' >"$_dir/$_id/sse/diffs/test.diff"
	cat >"$_dir/$_id/Dockerfile" <<EOT
ARG SSEBENCH_REGISTRY=localhost/ssebench
FROM \${SSEBENCH_REGISTRY}/base-generic-$_lang:0.1.0
COPY sse/config.yaml /ssebench/config.yaml
COPY sse/build.sh sse/run.sh sse/test.sh /ssebench/scripts/
COPY sse/pocs/ /ssebench/pocs/
COPY sse/reports /ssebench/reports
COPY sse/diffs /ssebench/diffs
EOT
}

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `ssebench build-case` against a real engine, on tiny tasks built FROM the rootfs image:
# builds, skips an up-to-date image by its task-files label, rebuilds a changed task,
# says so for an image without the label, rebuilds everything with --force, and names a
# task whose build fails (exit 1).
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
. "$SB_SRCDIR/tests/integration/task-template.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root for Docker"
/usr/bin/docker version >/dev/null 2>&1 || "$SB_SRCDIR/scripts/docker-up" >/dev/null 2>&1 ||
	skip_all "no Docker engine"
export SSEBENCH_REGISTRY=${SSEBENCH_REGISTRY:-localhost/ssebench}
/usr/bin/docker image inspect "$SSEBENCH_REGISTRY/debian:bookworm" >/dev/null 2>&1 ||
	skip_all "no rootfs image (scripts/docker-up makes it)"
plan_lazy

ds=$SB_TMP/bcds$$
for t in alpha beta; do
	make_task "$ds" "$t"
	sed -i 's|^FROM .*|FROM ${SSEBENCH_REGISTRY}/debian:bookworm|' "$ds/$t/Dockerfile"
done
img() { echo "$SSEBENCH_REGISTRY/case/$(basename "$ds")/$1"; }
sb_cleanup_hook() {
	for t in alpha beta; do /usr/bin/docker rmi -f "$(img "$t")" >/dev/null 2>&1; done
}

run_cmd r "$SSEBENCH" build-case --local "$ds"
is "$r_rc" 0 "first build-case: exit 0"
like "$r_out" ': 2 built, 0 skipped, 0 failed$' "both case images are built"
label=$(/usr/bin/docker image inspect --format '{{index .Config.Labels "ssebench.task-files"}}' "$(img alpha)")
like "$label" '^[0-9a-f]{64}$' "the image carries the task-files digest label"

run_cmd r "$SSEBENCH" build-case --local "$ds"
like "$r_out" ': 0 built, 2 skipped, 0 failed$' "a second build-case skips both"
like "$r_err" 'alpha: up to date' "and says they are up to date"

printf 'changed\n' >>"$ds/beta/sse/reports/asan.txt"
run_cmd r "$SSEBENCH" build-case --local "$ds"
like "$r_out" ': 1 built, 1 skipped, 0 failed$' "a changed task is rebuilt, the other skipped"
like "$r_err" 'beta: the task folder changed; rebuilding' "and the rebuild is explained"
isnt_label=$(/usr/bin/docker image inspect --format '{{index .Config.Labels "ssebench.task-files"}}' "$(img beta)")
ok "$([ "$isnt_label" != "$label" ]; echo $?)" "the rebuilt image has a new digest label"

# An image of that name without the label: cannot be checked, skipped, said so.
/usr/bin/docker tag "$SSEBENCH_REGISTRY/debian:bookworm" "$(img alpha)"
run_cmd r "$SSEBENCH" build-case --local "$ds" --task alpha
like "$r_err" 'without an ssebench.task-files label' "an unlabelled image is reported"
like "$r_out" ': 0 built, 1 skipped, 0 failed$' "and skipped"
run_cmd r "$SSEBENCH" build-case --local "$ds" --task alpha --force
like "$r_out" ': 1 built, 0 skipped, 0 failed$' "--force rebuilds it"

run_cmd r "$SSEBENCH" build-case --local "$ds" --task nope
is "$r_rc" 1 "an unknown task in --task: exit 1"

# The old spellings still work, with a warning; a pattern selects; --json says each task.
run_cmd r "$SSEBENCH" build-case --benchmarks "$ds" --tasks alpha,beta
like "$r_out" ': 0 built, 2 skipped, 0 failed$' "--benchmarks and --tasks A,B still work"
like "$r_err" 'warning: --benchmarks DIR is deprecated and will go; use --local DIR' "--benchmarks: deprecated, said"
like "$r_err" 'warning: --tasks ID,ID is deprecated' "--tasks: deprecated, said"
run_cmd r "$SSEBENCH" build-case --local "$ds" --task 'b*' --json
is "$r_rc" 0 "build-case --task 'b*' --json: exit 0"
is "$(printf '%s' "$r_out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["built"], d["skipped"], d["failed"], [(t["id"], t["outcome"]) for t in d["tasks"]])')" \
	"0 1 0 [('beta', 'skipped')]" "build-case --json: the pattern picked beta, skipped as up to date"

printf 'RUN exit 3\n' >>"$ds/beta/Dockerfile"
run_cmd r "$SSEBENCH" build-case --local "$ds"
is "$r_rc" 1 "a failing build: exit 1"
like "$r_err" "building case image .*beta failed" "and the failing task is named"

done_testing

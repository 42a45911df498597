#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `ssebench runs exec` against a real engine: a command runs in the run's container with its
# words as given (no shell of ours reads them), --user and --workdir are passed on, the
# command's exit status is ours, stdin reaches it, and in sidecar mode --container picks the
# task or the agent container. Stand-in runs: containers from the rootfs image carrying the
# labels `ssebench run` puts on its own (a run id of this test's, removed at the end).
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root for Docker"
/usr/bin/docker version >/dev/null 2>&1 || "$SB_SRCDIR/scripts/docker-up" >/dev/null 2>&1 ||
	skip_all "no Docker engine"
export SSEBENCH_REGISTRY=${SSEBENCH_REGISTRY:-localhost/ssebench}
img="$SSEBENCH_REGISTRY/debian:bookworm"
/usr/bin/docker image inspect "$img" >/dev/null 2>&1 || skip_all "no rootfs image (scripts/docker-up makes it)"
plan_lazy

id=exec-test-$$ sid=exec-side-$$
sb_cleanup_hook() {
	/usr/bin/docker rm -f "$id" "$id-twin" "$sid-task" "$sid-agent" >/dev/null 2>&1
}
start() { # NAME RUN-ID [ROLE]
	local role_label=()
	[ -n "${3:-}" ] && role_label=(--label "ssebench.sidecar-role=$3")
	/usr/bin/docker run -d --name "$1" --label "ssebench.run=$2" --label "ssebench.task-id=t" \
		--label ssebench.model=none --label ssebench.agent=dummy "${role_label[@]}" \
		--entrypoint /bin/sleep "$img" 600 >/dev/null
}
start "$id" "$id" || bail "cannot start a stand-in run"

run_cmd r "$SSEBENCH" runs exec "$id" -- /bin/echo 'a b' '$(id -u)' ';' '*'
is "$r_rc:$r_out" '0:a b $(id -u) ; *' "the words reach the command as given, no shell reads them"
run_cmd r "$SSEBENCH" runs exec "$id" -- /bin/sh -c 'exit 7'
is "$r_rc" 7 "the command's exit status is ours"
run_cmd r "$SSEBENCH" runs exec "$id" -- /no/such/program
like "$r_rc" '^12[67]$' "a program that is not there: docker's 126 or 127 (its runtime's choice)"
run_cmd r "$SSEBENCH" runs exec --user 1000:1000 --workdir /tmp "$id" -- /bin/sh -c 'echo "$(id -u):$(pwd)"'
is "$r_out" "1000:/tmp" "--user and --workdir are passed on"
is "$(printf 'from stdin\n' | "$SSEBENCH" runs exec "$id" -- /bin/cat)" "from stdin" "stdin reaches the command"
run_cmd r "$SSEBENCH" runs exec "$id" -- /bin/ls -d --color=never /
is "$r_rc:$r_out" "0:/" "a command's own options are its own, not ours"
run_cmd r "$SSEBENCH" runs exec --container agent "$id" -- true
is "$r_rc" 1 "--container agent of a sandbox run: exit 1"
like "$r_err" "has no agent container \(only sidecar runs have one\)" "and why"
run_cmd r "$SSEBENCH" runs exec no-such-run-$$ -- true
is "$r_rc" 3 "an unknown run: exit 3"

# Sidecar mode: two containers of one run.
start "$sid-task" "$sid" task || bail "cannot start the task container"
start "$sid-agent" "$sid" agent || bail "cannot start the agent container"
/usr/bin/docker exec "$sid-task" sh -c 'echo task >/tmp/who'
/usr/bin/docker exec "$sid-agent" sh -c 'echo agent >/tmp/who'
is "$("$SSEBENCH" runs exec "$sid" -- cat /tmp/who)" task "sidecar: the task container by default"
is "$("$SSEBENCH" runs exec --container agent "$sid" -- cat /tmp/who)" agent "sidecar: --container agent"

# Two task containers under one run id is no run ssebench made: refused, not guessed.
start "$id-twin" "$id" || bail "cannot start the twin"
run_cmd r "$SSEBENCH" runs exec "$id" -- true
is "$r_rc" 4 "two task containers of one run: exit 4, no container chosen"
like "$r_err" "has 2 task containers; not choosing one" "and why"
/usr/bin/docker rm -f "$id-twin" >/dev/null 2>&1

# runs list --json says exec is there, and it is.
run_cmd r "$SSEBENCH" runs list --json
is "$(printf '%s' "$r_out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["supports_exec"])')" True \
	"runs list --json: supports_exec, and runs exec works"

done_testing

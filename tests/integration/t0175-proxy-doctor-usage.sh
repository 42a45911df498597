#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# ssebench proxy and ssebench doctor, without an engine: each command's help (flags, exit
# status, an example) and every bad flag a usage error (exit 2) said before anything is done.
# Their behaviour against a real engine is tests/e2e/t0150-proxy.sh.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

plan_lazy

for cmd in "proxy up" "proxy down" "proxy status" "doctor"; do
	# shellcheck disable=SC2086 # the command words are meant to split
	run_cmd r "$SSEBENCH" $cmd --help
	is "$r_rc" 0 "'$cmd --help' exits 0"
	like "$r_out" "^usage: ssebench $cmd" "'$cmd --help' prints its usage line"
	like "$r_out" '^Exit status: 0' "'$cmd --help' says its exit status"
	# shellcheck disable=SC2086
	run_cmd h "$SSEBENCH" help $cmd
	is "$h_out" "$r_out" "'help $cmd' is the same text"
done
run_cmd r "$SSEBENCH" --help
like "$r_out" '^  proxy ' "--help lists proxy"
like "$r_out" '^  doctor ' "--help lists doctor"
run_cmd r "$SSEBENCH" proxy --help
like "$r_out" '^  up ' "proxy --help lists up"

run_cmd r "$SSEBENCH" proxy
is "$r_rc" 2 "proxy without a subcommand: exit 2"

while IFS='|' read -r args why; do
	# shellcheck disable=SC2086 # the option words are meant to split
	run_cmd r env SSEBENCH_DOCKER=/nonexistent/docker "$SSEBENCH" $args
	is "$r_rc" 2 "$args: exit 2"
	like "$r_err" "$why" "$args: says why"
	unlike "$r_err" 'Docker engine' "$args: refused before the engine is asked"
done <<'CASES'
proxy frobnicate|unknown command 'frobnicate'
proxy up --wait 0|--wait takes seconds from 1 to 3600, not '0'
proxy up --wait 3601|--wait takes seconds from 1 to 3600
proxy up --wait soon|--wait takes seconds
proxy up --wait|--wait needs a value
proxy up --image|--image needs a value
proxy up extra|unexpected argument 'extra'
proxy up --wai 5|options are written in full
proxy down --force|unknown option '--force'
proxy down extra|unexpected argument 'extra'
proxy status --json=yes|--json takes no value
proxy status extra|unexpected argument 'extra'
doctor --bogus|unknown option '--bogus'
doctor extra|unexpected argument 'extra'
CASES

done_testing

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Every test suite script (tests/<suite>/tNNNN-*.sh) is executable and registered in
# Makefile.am: a script committed without its x bit fails CI with "exited with status 126"
# and no test plan (as tests/integrity/t0100-hostile-agent.sh once did), and one that is not
# listed never runs at all.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

cd "$SB_SRCDIR" || bail "no source tree"
scripts=$(ls tests/*/t[0-9][0-9][0-9][0-9]-*.sh 2>/dev/null)
[ -n "$scripts" ] || bail "no test scripts under tests/"
plan_lazy
for t in $scripts; do
	ok "$([ -x "$t" ]; echo $?)" "$t is executable"
	ok "$(grep -qF "$t" Makefile.am; echo $?)" "$t is listed in Makefile.am"
done
done_testing

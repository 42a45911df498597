#!/bin/bash
# Run one PoC (argument: a record file) through tbpoc. Exit 0: no sanitizer report (fixed);
# exit 1: a report or a crash (still vulnerable), or the PoC could not run.
set -u
echo "tinyfield: run.sh"
poc=${1:-}
[ -f "$poc" ] || { echo "run.sh: no PoC '$poc'" >&2; exit 1; }
[ -x ./tbpoc ] || { echo "run.sh: ./tbpoc missing; did build.sh succeed?" >&2; exit 1; }
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
out=$(./tbpoc "$poc" 2>&1)
rc=$?
printf '%s\n' "$out"
if printf '%s\n' "$out" | grep -q 'ERROR: AddressSanitizer'; then
	echo "run.sh: AddressSanitizer report: the bug still triggers" >&2
	exit 1
fi
[ "$rc" = 0 ] || { echo "run.sh: tbpoc exited with $rc" >&2; exit 1; }
exit 0

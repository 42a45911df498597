#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The saved fuzz corpora replay without a crash (each input is a regression test).
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

plan 4
for target in config dockerfile request elf; do
	run_cmd r "$SB_BUILDDIR/tests/fuzz/fuzz-$target" "$SB_SRCDIR/tests/fuzz/corpus/$target"
	ok "$r_rc" "fuzz-$target replays its corpus ($r_out)"
	[ "$r_rc" = 0 ] || diag "$r_err"
done

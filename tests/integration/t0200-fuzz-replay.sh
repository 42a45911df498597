#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The saved fuzz corpora replay without a crash (each input is a regression test). In a
# fuzzing build (--enable-fuzzing: the targets are libFuzzer binaries) the replay is
# libFuzzer's own (-runs=0), and each target must also reach at least its floor of coverage
# points on its corpus: a target whose code under test lost its instrumentation fuzzes blind
# (fuzz-config once stayed at 2 points, its corpus shrunk to one byte, for 2.1 M runs).
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

# Coverage floors, about 70% of what the saved corpora reach (clang 14, after the campaign
# of tests/fuzz/CAMPAIGNS.md merged its new inputs in: config 476, dialog 121, dockerfile 275,
# elf 310, events 313, front 164, git 138, inspect 116, manifest 581, mcp 369, outcome 210,
# proto 43, request 170; scan 439 after its own campaigns of 2.3 M and 10 M runs); raise them as
# the corpora grow. Every target has a floor and a
# corpus.
declare -A floor=([config]=330 [dialog]=85 [dockerfile]=190 [elf]=215 [events]=220 [git]=95
	[front]=115 [inspect]=81 [manifest]=405 [mcp]=258 [outcome]=147 [proto]=30 [request]=119
	[scan]=300)
targets=$(printf '%s\n' "${!floor[@]}" | sort)
n=$(printf '%s\n' $targets | wc -l)
if [ "${SB_FUZZING:-no}" = yes ]; then
	plan $((2 * n + 1))
else
	plan $((n + 1))
fi
# A target (tests/fuzz/fuzz-*.c) or a corpus missing here would never be replayed.
sources=$(cd "$SB_SRCDIR/tests/fuzz" && ls fuzz-*.c | sed 's/^fuzz-\(.*\)\.c$/\1/' | sort | tr '\n' ' ')
corpora=$(cd "$SB_SRCDIR/tests/fuzz/corpus" && ls | sort | tr '\n' ' ')
is "$sources/$corpora" "$(printf '%s ' $targets)/$(printf '%s ' $targets)" \
	"every fuzz target has a floor and a corpus here"
for target in $targets; do
	bin=$SB_BUILDDIR/tests/fuzz/fuzz-$target corpus=$SB_SRCDIR/tests/fuzz/corpus/$target
	if [ "${SB_FUZZING:-no}" != yes ]; then
		run_cmd r "$bin" "$corpus"
		ok "$r_rc" "fuzz-$target replays its corpus ($r_out)"
		[ "$r_rc" = 0 ] || diag "$r_err"
		continue
	fi
	run_cmd r "$bin" -runs=0 "$corpus"
	ok "$r_rc" "fuzz-$target replays its corpus under libFuzzer"
	[ "$r_rc" = 0 ] || diag "$(printf '%s\n' "$r_err" | tail -20)"
	cov=$(printf '%s\n' "$r_err" | sed -n 's/.*DONE .*cov: \([0-9]*\).*/\1/p' | tail -1)
	ok "$([ "${cov:-0}" -ge "${floor[$target]}" ]; echo $?)" \
		"fuzz-$target covers at least ${floor[$target]} points of its parser (${cov:-none})"
done

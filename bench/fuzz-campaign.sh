#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/fuzz-campaign.sh BUILDDIR [TARGET...]: a fuzzing campaign over the fuzz targets of a
# libFuzzer build (CC=clang ./configure --enable-fuzzing --enable-asan --enable-ubsan; make
# check_PROGRAMS). Each target runs from a copy of its saved corpus (tests/fuzz/corpus/<t>,
# left as it is) until FUZZ_RUNS executions (default 10,000,000) or FUZZ_SECONDS seconds
# (default 1800), whichever comes first, FUZZ_JOBS targets at a time (default 1).
#
# Prints one line per target: executions, seconds, coverage points on the saved corpus and
# after the campaign, the grown corpus's size, and the crashes found (their inputs are kept
# under FUZZ_OUT, default /var/tmp/sb-fuzz-campaign, with the whole log). New corpus inputs
# worth keeping are copied into tests/fuzz/corpus/<t> by hand, after a look at them.
set -eu
SB_SRCDIR=${SB_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
build=${1:?usage: bench/fuzz-campaign.sh BUILDDIR [TARGET...]}
shift
runs=${FUZZ_RUNS:-10000000}
secs=${FUZZ_SECONDS:-1800}
jobs=${FUZZ_JOBS:-1}
out=${FUZZ_OUT:-/var/tmp/sb-fuzz-campaign}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	for d in "$SB_SRCDIR"/tests/fuzz/corpus/*/; do
		targets+=("$(basename "$d")")
	done
fi
mkdir -p "$out"

cov_of() { sed -n 's/.*DONE .*cov: \([0-9]*\).*/\1/p' "$1" | tail -1; }

one() {
	local t=$1 bin=$build/tests/fuzz/fuzz-$1 dir=$out/$1
	local start end execs cov0 cov1 crashes
	if [ ! -x "$bin" ]; then
		printf '%-11s no binary at %s\n' "$t" "$bin"
		return
	fi
	rm -rf "$dir"
	mkdir -p "$dir/corpus" "$dir/crashes"
	cp -a "$SB_SRCDIR/tests/fuzz/corpus/$t/." "$dir/corpus/"
	"$bin" -runs=0 "$dir/corpus" >"$dir/before.log" 2>&1 || true
	cov0=$(cov_of "$dir/before.log")
	start=$(date +%s)
	# -fork would survive a crash and go on; one process is what the figures are of, and a
	# crash stops that target's campaign with its input saved.
	"$bin" -runs="$runs" -max_total_time="$secs" -print_final_stats=1 \
		-artifact_prefix="$dir/crashes/" "$dir/corpus" >"$dir/campaign.log" 2>&1 || true
	end=$(date +%s)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/campaign.log" | tail -1)
	"$bin" -runs=0 "$dir/corpus" >"$dir/after.log" 2>&1 || true
	cov1=$(cov_of "$dir/after.log")
	crashes=$(find "$dir/crashes" -type f | wc -l)
	printf '%-11s %11s execs %6s s  cov %5s -> %5s  corpus %5s files  crashes %s\n' \
		"$t" "${execs:-?}" "$((end - start))" "${cov0:-?}" "${cov1:-?}" \
		"$(find "$dir/corpus" -type f | wc -l)" "$crashes"
}

printf 'fuzz campaign: %s runs or %s s a target, %s at a time, in %s\n' "$runs" "$secs" "$jobs" "$out"
running=0
for t in "${targets[@]}"; do
	one "$t" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait -n || true
		running=$((running - 1))
	fi
done
wait

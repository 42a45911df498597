#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/report-scale.sh [N]: `ssebench report` over N (default 10,000) synthetic run
# summaries about the size of real ones (tests/integration/report-fixture.py synthetic):
# wall and CPU time of --format json, html and md, median of 5 runs on a warm page cache,
# against the goal of 2 s of wall time. The machine's load is printed too: on a shared
# machine the wall time is the CPU time spread over what the other processes leave.
# Writes the summaries below /var/tmp and removes them. Exit 1 when a median is over.
set -u
SB_SRCDIR=${SB_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
SB_BUILDDIR=${SB_BUILDDIR:-$SB_SRCDIR}
SSEBENCH=${SSEBENCH:-$SB_BUILDDIR/ssebench}
n=${1:-10000}
goal=2.0
dir=$(mktemp -d /var/tmp/report-scale.XXXXXX)
trap 'rm -rf "$dir"' EXIT

s=$(date +%s%N)
python3 "$SB_SRCDIR/tests/integration/report-fixture.py" synthetic "$dir/results" "$n" 1 || exit 1
gen=$(( ($(date +%s%N) - s) / 1000000 ))
sizes=$(find "$dir/results" -name summary.json -printf '%s\n' | awk '{ s += $1 } END { printf "%d %.1f %.1f", NR, s / 1048576, s / NR / 1024 }')
read -r files mib mean <<<"$sizes"
echo "summaries: $files, $mib MiB (mean $mean KiB; written in $gen ms); $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
# Warm the page cache: the figures are of the report, not of the disk.
find "$dir/results" -name summary.json -print0 | xargs -0 cat >/dev/null
over=0
for fmt in json html md; do
	rows=$(for _ in 1 2 3 4 5; do
		/usr/bin/time -f '%e %U %S' "$SSEBENCH" report "$dir/results" --format "$fmt" \
			--output "$dir/report.$fmt" 2>&1 >/dev/null | tail -1
	done | sort -n)
	median=$(echo "$rows" | sed -n 3p)
	read -r wall user sys <<<"$median"
	best=$(echo "$rows" | head -1 | cut -d' ' -f1)
	size=$(wc -c <"$dir/report.$fmt")
	runs=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["totals"]["runs_found"])' "$dir/report.json")
	verdict=$(awk -v w="$wall" -v g="$goal" 'BEGIN { print (w <= g) ? "within" : "OVER" }')
	[ "$verdict" = within ] || over=1
	printf 'report --format %-4s %d runs: median of 5 %.2f s wall (%.2f s CPU: %.2f user + %.2f sys), best %.2f s, %s the %s s goal; %d KiB out\n' \
		"$fmt" "$runs" "$wall" "$(echo "$user + $sys" | bc)" "$user" "$sys" "$best" "$verdict" "$goal" $(( size / 1024 ))
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$over"

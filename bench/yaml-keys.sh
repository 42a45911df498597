#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/yaml-keys.sh [KEYS]: `ssebench dataset validate` on a one-task dataset whose
# config.yaml carries KEYS (default 49,000: about 930 KB, under the 1 MiB file limit) extra
# top-level keys, the largest mapping a task author (or a peer's dataset) can hand us. Prints
# the median, min and max wall time of 5 runs. The loader checks a mapping's keys for
# duplicates when the mapping ends, sorted; pairwise it cost 16 s here for 49,000 keys.
set -eu
SB_SRCDIR=${SB_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
SB_BUILDDIR=${SB_BUILDDIR:-$SB_SRCDIR}
keys=${1:-49000}
tmp=$(mktemp -d /var/tmp/sb-yaml-keys.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/ds"
cp -a "$SB_SRCDIR/datasets/pilot/cjson-CVE-2023-53154" "$tmp/ds/"
printf 'name: yaml-keys\n' >"$tmp/ds/dataset.yaml"
seq 1 "$keys" | awk '{ printf "k%d: %d\n", $1, $1 }' >>"$tmp/ds/cjson-CVE-2023-53154/sse/config.yaml"
echo "config.yaml: $(wc -c <"$tmp/ds/cjson-CVE-2023-53154/sse/config.yaml") bytes, $keys extra keys"
for _ in 1 2 3 4 5; do
	s=$(date +%s%N)
	"$SB_BUILDDIR/ssebench" dataset validate "$tmp/ds" >/dev/null 2>&1 || true
	echo $((($(date +%s%N) - s) / 1000000))
done | sort -n | awk '{ a[NR] = $1 } END { printf "validate: median %d ms, min %d ms, max %d ms\n", a[3], a[1], a[5] }'

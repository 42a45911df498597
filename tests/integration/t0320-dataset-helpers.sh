#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A task's Dockerfile can COPY only from its own folder, so each pilot task carries its own
# copy of the source-fetch helper it uses. The copies must not drift apart: every copy of a
# helper is byte-identical to the others (fix one, copy it to all).
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

cd "$SB_SRCDIR/datasets/pilot" || bail "no datasets/pilot"
plan_lazy
for helper in get-debian-source.sh fetch-debian-source.sh; do
	copies=$(ls ./*/"$helper" 2>/dev/null)
	n=$(printf '%s\n' "$copies" | grep -c .)
	ok "$([ "$n" -ge 2 ]; echo $?)" "$helper: $n copies"
	kinds=$(printf '%s\n' "$copies" | xargs -r sha256sum | awk '{print $1}' | sort -u | wc -l)
	is "$kinds" 1 "$helper: every copy is identical"
done
done_testing

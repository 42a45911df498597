#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/bencher-overhead.sh: a bencher build of a do-nothing script against the same script
# run by hand in a fresh `cp -a` copy of the tree, median of 10 each, for a small tree and
# a 5,000-file tree.
SB_SRCDIR=${SB_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
SB_BUILDDIR=${SB_BUILDDIR:-$SB_SRCDIR}
. "$SB_SRCDIR/tests/lib.sh"
. "$SB_SRCDIR/tests/daemon/lib-daemon.sh"
require_daemon_env >/dev/null
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
for size in small large; do
	make_fixture
	if [ "$size" = large ]; then
		for d in $(seq 0 99); do
			mkdir -p "$D/src/dir$d"
			for f in $(seq 0 49); do head -c 2000 /dev/urandom | base64 >"$D/src/dir$d/f$f"; done
		done
		chown -R "$AGENT_USER:$AGENT_USER" "$D/src"
	fi
	printf '#!/bin/sh\ntrue\n' >"$D/bench/scripts/build.sh"
	start_daemon 2 || exit 1
	d=$(for _ in $(seq 10); do curl -s -o /dev/null -w '%{time_total}\n' -X POST --data '{}' --unix-socket "$SOCK" 'http://d/tool/bencher?action=build'; done | median)
	h=$(for _ in $(seq 10); do
		s=$(date +%s%N)
		rm -rf "$SB_TMP/copy" && cp -a "$D/src" "$SB_TMP/copy" && (cd "$SB_TMP/copy" && "$D/bench/scripts/build.sh")
		echo "scale=6; ($(date +%s%N) - $s) / 1000000000" | bc
	done | median)
	files=$(find "$D/src" -type f | wc -l)
	echo "$size tree ($files files): bencher build $(echo "$d * 1000" | bc) ms, cp -a + script by hand $(echo "$h * 1000" | bc) ms, ratio $(echo "scale=2; $d / $h" | bc)"
	stop_daemon
done

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/diff-latency.sh: GET /diff on a 5,000-file tree with 10 changed files, median of 20
# polls, against `git add -N -A && git diff` run by hand on a copy of the same tree.
SB_SRCDIR=${SB_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
SB_BUILDDIR=${SB_BUILDDIR:-$SB_SRCDIR}
. "$SB_SRCDIR/tests/lib.sh"
. "$SB_SRCDIR/tests/daemon/lib-daemon.sh"
require_daemon_env >/dev/null
make_fixture
rm -rf "$D/src"
mkdir -p "$D/src"
for d in $(seq 0 99); do
	mkdir -p "$D/src/dir$d"
	for f in $(seq 0 49); do
		head -c 2000 /dev/urandom | base64 >"$D/src/dir$d/file$f.txt"
	done
done
git -C "$D/src" init -q
git -C "$D/src" -c user.name=t -c user.email=t@t add -A
git -C "$D/src" -c user.name=t -c user.email=t@t commit -qm 'buggy commit'
rm -rf "$D/repo" && cp -a "$D/src" "$D/repo"
for i in $(seq 0 9); do echo "change $i" >>"$D/src/dir$i/file$i.txt"; done
cp -a "$D/src" "$SB_TMP/byhand"
chown -R "$AGENT_USER:$AGENT_USER" "$D/src"
start_daemon 2 || exit 1
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
status agent GET /diff >/dev/null # first capture (fills the stat cache)
d=$(for _ in $(seq 20); do curl -s -o /dev/null -w '%{time_total}\n' --unix-socket "$SOCK" http://d/diff; done | median)
h=$(for _ in $(seq 20); do
	s=$(date +%s%N)
	git -C "$SB_TMP/byhand" add -N -A && git -C "$SB_TMP/byhand" diff >/dev/null
	echo "scale=6; ($(date +%s%N) - $s) / 1000000000" | bc
done | median)
lines=$(req agent GET /diff | grep -o 'diff --git' | wc -l)
echo "tree: 5000 files, 10 changed (/diff shows $lines files)"
echo "GET /diff, median of 20 polls: $(echo "$d * 1000" | bc) ms"
echo "git add -N -A && git diff by hand, median of 20: $(echo "$h * 1000" | bc) ms"
echo "ratio daemon/by hand: $(echo "scale=2; $d / $h" | bc)"
stop_daemon

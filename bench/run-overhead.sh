#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/run-overhead.sh [TASK] [N] [DATASET] [MODE]: what `ssebench run` costs beyond the work
# it must do (defaults: cjson-CVE-2023-53154, 5, datasets/pilot, sandbox; the integrity
# suite's small task: `bench/run-overhead.sh tinyfield-overflow 5 tests/integrity/dataset`;
# MODE sidecar measures the two-container layout).
#
#  - the wall time of `ssebench run --agent dummy` with warm caches, median of N (5), and
#    that minus the task scripts' own time (from the run's scriptrunner logs);
#  - the image phase of those runs (a second run of a task must rebuild nothing);
#  - the Docker floor: `docker run --rm IMAGE true`, plus the same scripts (build, PoCs,
#    tests, hidden tests) run by hand in one container with `docker exec`;
#  - the ratio of the two.
set -u
SB_SRCDIR=${SB_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
TASK=${1:-cjson-CVE-2023-53154}
N=${2:-5}
DATASET=${3:-$SB_SRCDIR/datasets/pilot}
MODE=${4:-sandbox}
SSEBENCH=${SSEBENCH:-$SB_SRCDIR/ssebench}
DOCKER=${SSEBENCH_DOCKER:-/usr/bin/docker}
export SSEBENCH_RESULTS=${SSEBENCH_RESULTS:-$(mktemp -d /tmp/sb-bench.XXXXXX)}
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
now() { date +%s.%N; }

echo "warming up (first run builds what is missing)..."
"$SSEBENCH" run --local "$DATASET" --task "$TASK" --agent dummy --mode "$MODE" --run-id warm-$$ >/dev/null 2>&1 ||
	{ echo "the warm-up run failed" >&2; exit 1; }
totals=() overheads=() imgs=()
for i in $(seq "$N"); do
	t0=$(now)
	"$SSEBENCH" run --local "$DATASET" --task "$TASK" --agent dummy --mode "$MODE" \
		--run-id "bench$i-$$" >"$SSEBENCH_RESULTS/out$i" 2>&1
	t1=$(now)
	dir=$SSEBENCH_RESULTS/$TASK/none/dummy/bench$i-$$
	scripts=$(awk '/^duration:/ {s += $2} END {print s + 0}' "$dir"/scriptrunner-*.log "$dir"/patch-*.log 2>/dev/null)
	# Up to the first container start (sidecar: the task container).
	img=$(sed -n -E 's/^\[ *([0-9.]*) s\] (run [^:]*: )?starting the (task )?container.*/\1/p' "$SSEBENCH_RESULTS/out$i" | head -1)
	total=$(echo "$t1 - $t0" | bc)
	totals+=("$total") overheads+=("$(echo "$total - $scripts" | bc)") imgs+=("$img")
	echo "run $i: ${total} s total, ${scripts} s in task scripts, image phase ${img} s"
done
T=$(printf '%s\n' "${totals[@]}" | median)
O=$(printf '%s\n' "${overheads[@]}" | median)
I=$(printf '%s\n' "${imgs[@]}" | median)

# The floor is one container either way; in sidecar mode the task image holds the same tree.
kind=agent-dummy
[ "$MODE" = sidecar ] && kind=tool-sidecar
image=$("$DOCKER" images --format '{{.Repository}}:{{.Tag}}' | grep "/$kind/$(echo "$TASK" | tr A-Z a-z):" | head -1)
floor_run=$(for _ in $(seq "$N"); do t0=$(now); "$DOCKER" run --rm --entrypoint true "$image" >/dev/null 2>&1; echo "$(now) - $t0" | bc; done | median)
# The same scripts by hand: one container, the source copied per check as the daemon does.
src=$("$DOCKER" inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$image" | sed -n 's/^SSE_SOURCE=//p')
c=$("$DOCKER" run -d --entrypoint sleep --network none "$image" 3600)
byhand=$( {
	t0=$(now)
	"$DOCKER" exec "$c" sh -c "cp -a '$src' /tmp/b && cd /tmp/b && /ssebench/scripts/build.sh" >/dev/null 2>&1
	for poc in $("$DOCKER" exec "$c" sh -c 'ls /ssebench/pocs'); do
		"$DOCKER" exec -w /tmp/b "$c" /ssebench/scripts/run.sh "/ssebench/pocs/$poc" >/dev/null 2>&1
	done
	"$DOCKER" exec "$c" sh -c "cp -a '$src' /tmp/t && cd /tmp/t && /ssebench/scripts/test.sh" >/dev/null 2>&1
	"$DOCKER" exec "$c" sh -c "cp -a '$src' /tmp/i && cd /tmp/i && git apply -p1 /ssebench/diffs/test.diff && /ssebench/scripts/test.sh" >/dev/null 2>&1
	echo "$(now) - $t0" | bc; } )
"$DOCKER" rm -f "$c" >/dev/null
floor=$(echo "$floor_run + $byhand" | bc)
echo
echo "ssebench run --mode $MODE (dummy, warm), median of $N: $T s; minus the task scripts: $O s; image phase: $I s"
echo "docker floor: docker run --rm true $floor_run s + the same scripts by hand $byhand s = $floor s"
echo "ratio ssebench run / floor: $(echo "scale=2; $T / $floor" | bc)"

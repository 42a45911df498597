#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/job-throughput.sh [RUNS] [DATASET TASK...]: what a job gains from running runs at
# once, and what its scheduler costs (docs/jobs.md).
#
# The same job (the dummy agent on the tasks given, attempts enough for RUNS runs in all;
# default 8 runs on the small test task and a copy of it under another id) at --jobs 1 and
# --jobs 2, images warm (a first job builds them and is not counted). Prints each job's wall
# time, its image phase (the job checking that every image is there, from its --json
# events), the speed-up, and the scheduler's overhead per run at --jobs 1: the job's wall
# time less the image phase and the sum of its runs' own (summary.json duration_s), over
# the runs.
set -u
SB_SRCDIR=${SB_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
SSEBENCH=${SSEBENCH:-$SB_SRCDIR/ssebench}
RUNS=${1:-8}
shift || true
work=$(mktemp -d /var/tmp/sb-jobbench.XXXXXX)
trap 'rm -rf "$work"' EXIT
export SSEBENCH_RESULTS=$work/results SSEBENCH_HOME=$SB_SRCDIR
if [ $# -ge 2 ]; then
	DS=$1
	shift
	TASKS=("$@")
else
	small=$SB_SRCDIR/tests/integrity/dataset
	DS=$work/ds
	mkdir -p "$DS"
	cp "$small/dataset.yaml" "$DS/"
	cp -a "$small/tinyfield-overflow" "$DS/tinyfield-overflow"
	cp -a "$small/tinyfield-overflow" "$DS/tinyfield-twin"
	sed -i 's/^id: tinyfield-overflow$/id: tinyfield-twin/' "$DS/tinyfield-twin/sse/config.yaml"
	TASKS=(tinyfield-overflow tinyfield-twin)
fi
attempts=$(((RUNS + ${#TASKS[@]} - 1) / ${#TASKS[@]}))
args=(--local "$DS" --agent dummy --attempts "$attempts" --timeout 900)
for t in "${TASKS[@]}"; do args+=(--task "$t"); done
now() { date +%s.%N; }

echo "warming up: the images (not counted)"
"$SSEBENCH" run --local "$DS" --agent dummy --jobs 2 $(for t in "${TASKS[@]}"; do printf -- '--task %s ' "$t"; done) \
	--attempts 1 >/dev/null 2>&1 || { echo "the warm-up job failed" >&2; exit 1; }
declare -A wall
for j in 1 2; do
	before=$(ls "$SSEBENCH_RESULTS/jobs")
	t0=$(now)
	"$SSEBENCH" run "${args[@]}" --jobs "$j" --json >"$work/job$j.out" 2>"$work/job$j.err" ||
		{ echo "the job at --jobs $j failed:" >&2; tail -5 "$work/job$j.err" >&2; exit 1; }
	t1=$(now)
	wall[$j]=$(echo "$t1 - $t0" | bc)
	dir=$SSEBENCH_RESULTS/jobs/$(comm -13 <(printf '%s\n' "$before") <(ls "$SSEBENCH_RESULTS/jobs") | head -1)
	runs_s=$(python3 -c 'import datetime, json, sys
idx = json.load(open(sys.argv[1] + "/index.json"))
t = 0.0
for s in idx["slots"]:
    t += json.load(open(s["dir"] + "/summary.json")).get("duration_s") or 0
ts = lambda e: datetime.datetime.strptime(e["ts"], "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()
ev = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
start = [ts(e) for e in ev if e["event"] == "job_started"][0]
first = min(ts(e) for e in ev if e["event"] == "run_started")
print("%.2f %d %.2f" % (t, len(idx["slots"]), first - start))' "$dir" "$work/job$j.out")
	set -- $runs_s
	printf -- '--jobs %s: %d runs in %.1f s (image phase %.1f s; the runs themselves: %.1f s in all)\n' \
		"$j" "$2" "${wall[$j]}" "$3" "$1"
	if [ "$j" = 1 ]; then
		printf '  scheduler overhead: %.3f s a run (wall time less the image phase and the runs, over the runs)\n' \
			"$(echo "(${wall[$j]} - $3 - $1) / $2" | bc -l)"
	fi
done
printf 'speed-up at --jobs 2: %.2fx\n' "$(echo "${wall[1]} / ${wall[2]}" | bc -l)"

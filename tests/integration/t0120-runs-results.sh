#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `ssebench runs results`: runs are grouped by the tier their isolation established, never
# compared across tiers; an open-egress run is apart from restricted ones, and a run that
# could not establish its isolation (or says nothing about it) has no score at all.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
command -v python3 >/dev/null || skip_all "python3 is needed to write the summaries"
plan_lazy

res=$SB_TMP/results
# summary RUN STATUS EGRESS SCORED(true|false|absent) STARTED
# (a forfeit is scored: it counts in its tier, as a run that did not pass)
summary() {
	local d=$res/demo-1/m/a/$1
	mkdir -p "$d"
	python3 - "$d/summary.json" "$@" <<'PY'
import json, sys
out, run, status, egress, scored, started = sys.argv[1:7]
s = {"task": {"id": "demo-1"}, "config": {"agent": "a", "model": "m", "mode": "sandbox",
     "egress": egress, "reference_run": False}, "patch_result": {"status": status},
     "run_id": run, "started_at": started}
if scored != "absent":
    s["scored"] = scored == "true"
    s["isolation"] = {"scored": scored == "true", "egress": egress,
                      "tier": egress if scored == "true" else None}
json.dump(s, open(out, "w"))
PY
}
summary r-pass passed restricted true 2026-01-01T00:00:05Z
summary r-fail failed restricted true 2026-01-01T00:00:04Z
summary r-forfeit forfeit restricted true 2026-01-01T00:00:04Z
summary o-pass passed open true 2026-01-01T00:00:03Z
summary u-pass passed restricted false 2026-01-01T00:00:02Z
summary old passed restricted absent 2026-01-01T00:00:01Z
# What an agent left in its archive is not a run: a summary.json planted there, claiming a
# scored pass, must not be counted (the walk never goes below a run directory).
mkdir -p "$res/demo-1/m/a/r-fail/archive/fake/run"
python3 -c 'import json, sys; json.dump({"task": {"id": "demo-1"}, "config": {"agent": "a", "model": "m",
    "egress": "restricted"}, "patch_result": {"status": "passed"}, "run_id": "planted", "scored": True,
    "isolation": {"scored": True, "egress": "restricted", "tier": "restricted"},
    "started_at": "2026-01-01T00:00:09Z"}, open(sys.argv[1], "w"))' "$res/demo-1/m/a/r-fail/archive/summary.json"
cp "$res/demo-1/m/a/r-fail/archive/summary.json" "$res/demo-1/m/a/r-fail/archive/fake/run/summary.json"

run_cmd r "$SSEBENCH" runs results --dir "$res"
is "$r_rc" 0 "runs results exits 0"
sections=$(printf '%s\n' "$r_out" | sed -n 's/^-- \(.*\) --$/\1/p' | tr '\n' '|')
is "$sections" "restricted egress|open egress: NOT comparable with restricted runs|not scored: isolation not established|" \
	"three groups, restricted first"
block() { printf '%s\n' "$r_out" | awk -v t="-- $1 --" '$0 == t { on = 1; next } /^-- / { on = 0 } on'; }
is "$(block 'restricted egress' | awk 'NR > 1 && NF >= 5 && $1 !~ /^[0-9]/ { print $1 }' | tr '\n' ' ')" "r-pass r-fail r-forfeit " \
	"the restricted group holds the restricted scored runs, the forfeit with them"
like "$(block 'restricted egress')" '^3 runs, 1 passed, 1 forfeit \(not passed' \
	"and counts them on their own: the forfeit as a run that did not pass"
is "$(block 'restricted egress' | awk '$1 == "r-forfeit" { print $2 }')" forfeit "the forfeit shows as such"
is "$(block 'open egress: NOT comparable with restricted runs' | awk 'NR > 1 && NF >= 5 { print $1 }' | tr '\n' ' ')" "o-pass " \
	"the open run is apart"
like "$(block 'open egress: NOT comparable with restricted runs')" '^1 run, 1 passed$' "with its own count"
unscored=$(block 'not scored: isolation not established')
is "$(printf '%s\n' "$unscored" | awk 'NR > 1 && NF >= 5 { print $1 "=" $2 }' | tr '\n' ' ')" "u-pass=unscored old=unscored " \
	"an unscored run, and one with no isolation record, show no status but 'unscored'"
unlike "$unscored" 'passed' "no pass is counted for unscored runs"

run_cmd r "$SSEBENCH" runs results --json --dir "$res"
is "$(printf '%s' "$r_out" | python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["tiers"])')" \
	"{'restricted': {'runs': 3, 'passed': 1, 'forfeit': 1}, 'open': {'runs': 1, 'passed': 1, 'forfeit': 0}, 'unscored': 2}" \
	"--json: counts per tier"
is "$(printf '%s' "$r_out" | python3 -c 'import json, sys; d = json.load(sys.stdin); print([(r["run_id"], r["scored"], r["tier"]) for r in d["runs"]])')" \
	"[('r-pass', True, 'restricted'), ('r-fail', True, 'restricted'), ('r-forfeit', True, 'restricted'), ('o-pass', True, 'open'), ('u-pass', False, None), ('old', False, None)]" \
	"--json: each run's scored flag and tier"
done_testing

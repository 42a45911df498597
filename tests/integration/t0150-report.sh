#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `ssebench report`: a fixture results directory and a fixture job (report-fixture.py writes
# their summaries, index and job.json by hand, no run needed) in every format; the figures
# against hand-computed values; every format shows the same counts, rates and flagged runs
# (the answer-seeking scan's, from totals that are sane, missing or forged); names and flag
# kinds that are markup, quotes and control characters come out escaped (HTML, XML,
# Markdown, CSV, the terminal) and a flag's excerpt nowhere;
# the JUnit output validates against tests/fixtures/junit.xsd; a summary planted in a run's
# archive is not a run; bad input (no such job, a newer version, a corrupt index, a bad
# flag) fails with exit 1 or 2 and says what is wrong.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
command -v python3 >/dev/null || skip_all "python3 is needed to write the fixtures"
command -v xmllint >/dev/null || skip_all "xmllint (libxml2-utils) is needed to validate JUnit"
plan_lazy

fx=$SB_SRCDIR/tests/integration/report-fixture.py
counts=$SB_SRCDIR/tests/integration/report-counts.py
res=$SB_TMP/results
job=job-20260101-000000-abcdef
jdir=$res/jobs/$job
out=$SB_TMP/out
mkdir -p "$out"
export SSEBENCH_RESULTS=$res

# The job: claude/m1 tries t1 three times (2 passed) and t2 three times (a forfeit, an
# error, a failure) and its fourth t2 was skipped; codex/m2 passed t1 once, its second try
# is pending, and its t2 ran with open egress (a group of its own); one hostile run; one
# reference run, counted apart.
# The answer-seeking scan's flags: claude's t1#2 has three (two kinds), its t2#3 a total of
# 70 past the 1 it lists, its unscored t2#2 one, t1#1 none (a summary older than the scan);
# totals that are no count (too large, a real, negative, a string) are 0 unless flags are
# listed (the hostile run lists two, one of a kind that is markup and an ESC); codex's t1#1,
# which passed, says 0 but lists one; the reference run's flag counts nowhere. So G1 has 3
# flagged runs, G2 and G4 one each, 5 in all.
python3 "$fx" job "$res" "$jdir" "$job" <<'SPEC'
t1 claude m1 1 passed dur=100 spend=0.5 tin=1000 tout=200
t1 claude m1 2 failed dur=200 spend=0.7 tin=1500 tout=300 flags=network,git_history,network
t1 claude m1 3 passed dur=150 spend=0.6 ftotal=99999999999
t2 claude m1 1 forfeit dur=50 ftotal=2.5
t2 claude m1 2 error flags=refused
t2 claude m1 3 failed dur=300 hidden=0 func=0 flags=canary ftotal=70
t2 claude m1 4 skipped reason=the-case-image-did-not-build
t1 codex m2 1 passed dur=80 spend=0.2 flags=answer_reference ftotal=0
t1 codex m2 2 pending
t2 codex m2 1 failed dur=90 spend=0.25 egress=open ftotal=-1
t1 reference none 1 passed dur=10 flags=canary
{"task": "<script>alert('x')</script>\u0001\u202e", "agent": "ev\"il&<b>", "model": "m'<i>", "attempt": 1, "outcome": "failed", "msg": "<img src=x onerror=alert(1)>\u001b[31m", "dur": 12, "flags_total": "3", "flags": [{"kind": "<script>flag()</script>\u001b[2J\u202e", "source": "dialog.jsonl", "seq": 1, "match": "<b>m</b>", "excerpt": "</td><script>alert('excerpt')</script>\u001b]0;pwned\u0007"}, {"kind": "canary", "excerpt": "<img src=y onerror=alert(2)>"}, 7]}
SPEC
ok $? "the fixture job is written"

# json_get FILE EXPR: a Python expression over the model m.
json_get() {
	python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# --- the job, by id and by path ---
run_cmd r "$SSEBENCH" report "$job" --format json --output "$out/job.json"
is "$r_rc:$r_out" "0:" "report JOB --output: exit 0, nothing on stdout"
m=$out/job.json
is "$(json_get "$m" 'm["source"]["kind"], m["source"]["job"]["job_id"]')" "('job', '$job')" "the id names the job under \$SSEBENCH_RESULTS/jobs"
is "$(json_get "$m" '[m["totals"][k] for k in ("runs_found", "reference_runs", "runs", "scored", "passed", "failed", "forfeit", "unscored", "unreadable", "skipped", "not_run", "flagged")]')" \
	"[10, 1, 9, 8, 3, 4, 1, 1, 0, 1, 1, 5]" "totals: 10 found, the reference run apart, 1 skipped, 1 not run, 5 flagged"
is "$(json_get "$m" '[(g["id"], g["label"]) for g in m["groups"]]')" \
	"[('G1', 'claude / m1'), ('G2', 'codex / m2'), ('G3', 'codex / m2 (open egress)'), ('G4', 'ev\"il&<b> / m\\'<i>')]" \
	"one group per agent and model, open egress apart, no reference group"
g1='m["groups"][0]'
is "$(json_get "$m" "[$g1[k] for k in ('runs', 'scored', 'passed', 'failed', 'forfeit', 'unscored', 'skipped', 'not_run')]")" \
	"[6, 5, 2, 2, 1, 1, 1, 0]" "claude/m1: 6 runs, 5 scored, 2 passed, 2 failed, 1 forfeit, 1 error, 1 skipped"
# 2 of 5: Wilson at z = 1.959964 (by hand: centre 0.4 + 1.92/5 over 1.768, half-width 0.3258)
is "$(json_get "$m" "$g1['pass_rate'], $g1['pass_rate_ci']")" "(0.4, [0.1176, 0.7693])" "pass rate 2/5 and its 95 % interval"
# t1: n=3, c=2; t2: n=2 (the error is not scored), c=0. pass@1 = (2/3 + 0)/2;
# pass@2 = (1 + 0)/2 (n-c < k on t1); pass@3 = t1 alone = 1.
is "$(json_get "$m" "[(p['k'], p['value'], p['tasks']) for p in $g1['pass_at_k']]")" \
	"[(1, 0.3333, 2), (2, 0.5, 2), (3, 1.0, 1)]" "pass@k per task, averaged over the tasks with k scored attempts"
# durations 50 100 150 200 300: median 150, p90 at h = 3.6: 200 + 0.6 * 100
is "$(json_get "$m" "$g1['duration_s']['median'], $g1['duration_s']['p90'], $g1['duration_s']['runs']")" \
	"(150.0, 260.0, 5)" "median and p90 (linear interpolation) of the 5 timed runs"
is "$(json_get "$m" "$g1['spend_usd'], $g1['tokens']")" \
	"({'runs': 3, 'total': 1.8, 'per_run': 0.6}, {'runs': 2, 'in': 2500, 'out': 500})" "spend and tokens, with how many runs had them"
is "$(json_get "$m" "[($g1['checks'][k]['runs'], $g1['checks'][k]['share']) for k in ('built', 'pov_stopped', 'functional', 'hidden')]")" \
	"[(4, 0.8), (2, 0.4), (3, 0.6), (2, 0.4)]" "checks as shares of the 5 scored runs (the forfeit built nothing)"
is "$(json_get "$m" '[(r["task"], [(c["passed"], c["scored"], c["unscored"], c["skipped"], c["not_run"]) for c in r["cells"][:3]]) for r in m["matrix"] if r["task"] in ("t1", "t2")]')" \
	"[('t1', [(2, 3, 0, 0, 0), (1, 1, 0, 0, 1), (0, 0, 0, 0, 0)]), ('t2', [(0, 2, 1, 1, 0), (0, 0, 0, 0, 0), (0, 1, 0, 0, 0)])]" \
	"the task x group matrix: passed/scored, unscored, skipped, not run per cell"
is "$(json_get "$m" '[(r["group"], r["task"], r["attempt"], r["category"]) for r in m["runs"] if r["group"] == "G1"]')" \
	"[('G1', 't1', 1, 'passed'), ('G1', 't1', 2, 'failed'), ('G1', 't1', 3, 'passed'), ('G1', 't2', 1, 'forfeit'), ('G1', 't2', 2, 'error'), ('G1', 't2', 3, 'failed')]" \
	"the runs, by group, task and attempt"
is "$(json_get "$m" '[(s["task"], s["attempt"], s["reason"]) for s in m["skipped"]], [(s["task"], s["state"]) for s in m["not_run"]]')" \
	"([('t2', 4, 'the-case-image-did-not-build')], [('t1', 'pending')])" "the skipped slot with its reason, the pending slot as not run"
is "$(json_get "$m" '[g["flagged"] for g in m["groups"]]')" "[3, 1, 0, 1]" \
	"flagged runs per group: the reference run's flag is in none"
is "$(json_get "$m" '[(r["group"], r["task"][:3], r["attempt"], r["flags"], r["flag_kinds"]) for r in m["runs"]]')" \
	"[('G1', 't1', 1, 0, []), ('G1', 't1', 2, 3, ['git_history', 'network']), ('G1', 't1', 3, 0, []), ('G1', 't2', 1, 0, []), ('G1', 't2', 2, 1, ['refused']), ('G1', 't2', 3, 70, ['canary']), ('G2', 't1', 1, 1, ['answer_reference']), ('G3', 't2', 1, 0, []), ('G4', '<sc', 1, 2, ['<script>flag()</script>\\x1b[2J\\u202e', 'canary'])]" \
	"each run's flags: a sane total, else 0, never fewer than listed; its kinds sorted, unique, strings only"

run_cmd r "$SSEBENCH" report "$jdir" --format json
is "$r_rc" 0 "report JOBDIR (a path) exits 0"
is "$r_out" "$(cat "$m" | sed "s|\"path\": \"$job\"|\"path\": \"$jdir\"|")" "and says what the id said"

# --- every format, and the same numbers in each ---
for f in md json csv csv-runs html junit; do
	run_cmd r "$SSEBENCH" report "$job" --format "$f" --output "$out/report.$f"
	ok $(( r_rc != 0 || $(wc -c <"$out/report.$f") == 0 )) "--format $f: exit 0, a report"
done
want=$(python3 "$counts" json "$out/report.json")
like "$want" '^G1 runs=6 scored=5 passed=2 failed\+forfeit=3 unscored=1 rate=40.0 flagged=3$' "the counts read back from json"
like "$want" 'G4 runs=1 scored=1 passed=0 failed\+forfeit=1 unscored=0 rate=0.0 flagged=1$' "and the hostile group's flagged run"
for f in md csv html junit; do
	got=$(python3 "$counts" "$f" "$out/report.$f" 2>&1)
	is "$got" "$want" "$f shows the same counts and pass rates as json"
done
is "$(head -1 "$out/report.csv" | cut -d, -f1-6)" "group,agent,model,egress,runs,scored" "csv: a header, one row per group"
is "$(grep -c . "$out/report.csv")" 5 "csv: 4 groups, one section"
is "$(python3 -c 'import csv, sys; print(len(list(csv.DictReader(open(sys.argv[1])))))' "$out/report.csv-runs")" 9 "csv-runs: one row per run (the reference run left out)"
is "$(python3 -c 'import csv, sys; print([(r["group"], r["flags"], r["flag_kinds"]) for r in csv.DictReader(open(sys.argv[1])) if r["flags"] != "0"])' "$out/report.csv-runs")" \
	"[('G1', '3', 'git_history, network'), ('G1', '1', 'refused'), ('G1', '70', 'canary'), ('G2', '1', 'answer_reference'), ('G4', '2', '<script>flag()</script>\\\\x1b[2J\\\\u{202E}, canary')]" \
	"csv-runs: each run's flags and kinds (one cell, its control characters visible)"
like "$(cat "$out/report.md")" '## Flagged runs \(5\)' "md: the flagged runs are listed"
like "$(cat "$out/report.md")" '\| G1 \| t1 \| 2 \| failed \| 3 \| git\\_history, network \| 20260101-000000-000001 \|' \
	"md: a flagged run with its count and kinds"

# --- JUnit: valid against our schema ---
run_cmd r xmllint --noout --schema "$SB_SRCDIR/tests/fixtures/junit.xsd" "$out/report.junit"
is "$r_rc" 0 "the JUnit output validates against tests/fixtures/junit.xsd"
[ "$r_rc" = 0 ] || diag "$r_err"
like "$(cat "$out/report.junit")" '<testsuite name="claude / m1" tests="7" failures="3" errors="1" skipped="1"' \
	"a testsuite per group: 6 runs and the skipped slot; failed and forfeit are failures, the error an error"
like "$(cat "$out/report.junit")" '<testcase classname="t2" name="t2#2" time="0.000">' "classname is the task, name task#attempt"
like "$(cat "$out/report.junit")" '<failure message="Forfeit: the isolation [^"]*" type="forfeit">' "a forfeit is a failure of type forfeit, with its message"
like "$(cat "$out/report.junit")" '<error message="Not scored: isolation not established: network_internal" type="error">' "an unscored run is an error, with its message"
like "$(cat "$out/report.junit")" '<skipped message="skipped: the-case-image-did-not-build"/>' "a skipped slot is skipped, with its reason"
like "$(cat "$out/report.junit")" '<system-out>flags: 3 \(git_history, network\)</system-out>' "a flagged run's flags in its system-out"
like "$(cat "$out/report.junit")" '<property name="flagged" value="3"/>' "a group's flagged runs as a property"
is "$(grep -c '<system-out>' "$out/report.junit")" 5 "a system-out for each flagged run only"
is "$(grep -A3 'name="t2#2" time="0.000"' "$out/report.junit" | sed -n '3,4p')" '      <system-out>flags: 1 (refused)</system-out>
    </testcase>' "an unscored flagged run: its error, then its flags"
is "$(grep -A2 'name="t1#1" time="80.000"' "$out/report.junit")" '    <testcase classname="t1" name="t1#1" time="80.000">
      <system-out>flags: 1 (answer_reference)</system-out>
    </testcase>' "a flagged run that passed: no failure, its flags"

# --- hostile names ---
html=$(cat "$out/report.html")
unlike "$html" '<script|<img|<b>|<i>|onerror=alert\(1\)>' "html: no markup from the input survives"
like "$html" '&lt;script&gt;alert\(&#39;x&#39;\)&lt;/script&gt;\\x01\\u\{202E\}' "html: the task id is text, its control characters visible"
like "$html" 'ev&quot;il&amp;&lt;b&gt; / m&#39;&lt;i&gt;' "html: the agent and model names are escaped, quotes too"
like "$html" "Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\"" "html: a policy that forbids any script or fetch"
unlike "$html" '<[a-z]+ [^>]*(src|href)=|url\(|@import' "html: no element that loads anything, no CSS url()"
xmlns=$(grep -Eo '[a-z]+://[^"]*' "$out/report.html" | sort -u | tr '\n' ' ')
is "$xmlns" "http://www.w3.org/2000/svg " "html: the only URL is the SVG namespace"
is "$(grep -c '<svg ' "$out/report.html")" 4 "html: four inline SVG plots"
run_cmd r xmllint --noout "$out/report.junit"
is "$r_rc" 0 "junit: well-formed XML despite the hostile names"
unlike "$(cat "$out/report.junit")" '<script|<img' "junit: no markup from the input survives"
like "$(cat "$out/report.junit")" 'classname="&lt;script&gt;alert\(&#39;x&#39;\)&lt;/script&gt;\\x01\\u\{202E\}"' "junit: the task id escaped in an attribute"
for f in md csv csv-runs html junit; do
	ctl=$(LC_ALL=C tr -d '\n\r\t -~\200-\377' <"$out/report.$f" | wc -c)
	rlo=$(grep -c $'\u202e' "$out/report.$f")
	is "$ctl:$rlo" "0:0" "$f: no control character and no right-to-left override from the input"
done
like "$(cat "$out/report.md")" '&lt;script&gt;alert\(.x.\)&lt;/script&gt;' "md: markup is text"
# A flag's kind is the agent's text too; its excerpt and match are never in any format.
like "$html" '2: &lt;script&gt;flag\(\)&lt;/script&gt;\\x1b\[2J\\u\{202E\}, canary</td>' "html: a hostile flag kind is text, its ESC visible"
like "$(cat "$out/report.md")" '\| 2 \| &lt;script&gt;flag\(\)&lt;/script&gt;\\x1b\\\[2J\\u\{202E\}, canary \|' "md: a hostile flag kind is text"
like "$(cat "$out/report.junit")" '<system-out>flags: 2 \(&lt;script&gt;flag\(\)&lt;/script&gt;\\x1b\[2J\\u\{202E\}, canary\)</system-out>' \
	"junit: a hostile flag kind escaped in the system-out"
for f in md json csv csv-runs html junit; do
	unlike "$(cat "$out/report.$f")" "pwned|alert\(2\)|alert\('excerpt'\)|<b>m</b>" "$f: no flag's excerpt or match"
done
for f in md html junit; do
	unlike "$(cat "$out/report.$f")" "<script>flag" "$f: no flag kind as markup"
done
run_cmd r "$SSEBENCH" report "$job"
ctl=$(printf '%s' "$r_out" | LC_ALL=C tr -d '\n\r\t -~\200-\377' | wc -c)
is "$r_rc:$ctl" "0:0" "md on the terminal: no control character (the flag kind's ESC is \\x1b)"
like "$(cat "$out/report.csv-runs")" '"&lt;|"<script>alert' "csv-runs: the hostile name is one quoted cell"
is "$(python3 -c 'import csv, sys; print(sorted({r["agent"] for r in csv.DictReader(open(sys.argv[1]))}))' "$out/report.csv-runs")" \
	"['claude', 'codex', 'ev\"il&<b>']" "csv-runs: quotes survive a CSV reader"

# --- the results root, walked ---
run_cmd r "$SSEBENCH" report --format json --output "$out/root.json"
is "$r_rc" 0 "report with no argument walks \$SSEBENCH_RESULTS"
is "$(json_get "$out/root.json" 'm["source"]["kind"], m["totals"]["runs_found"], m["totals"]["unreadable"], m["totals"]["not_run"]')" \
	"('results', 10, 0, 0)" "the same 10 runs (the jobs directory is not walked)"
is "$(python3 "$counts" json "$out/root.json" | sed -n 1p)" \
	"G1 runs=6 scored=5 passed=2 failed+forfeit=3 unscored=1 rate=40.0 flagged=3" "with the same counts as the job's"

# A summary planted in a run's archive (what the agent left) is no run; a broken summary
# is unreadable, with the reason; a run directory with no summary yet is said so.
planted=$(dirname "$(find "$res/t1/m2/codex" -name summary.json | head -1)")
mkdir -p "$planted/archive/deep/er"
cp "$planted/summary.json" "$planted/archive/summary.json"
cp "$planted/summary.json" "$planted/archive/deep/er/summary.json"
mkdir -p "$res/t9/m/a/broken" "$res/t9/m/a/running"
printf '{"run_id": ' >"$res/t9/m/a/broken/summary.json"
: >"$res/t9/m/a/running/build.log"
run_cmd r "$SSEBENCH" report "$res" --format json --output "$out/walk.json"
is "$r_rc" 0 "a results directory with bad entries still reports (exit 0)"
is "$(json_get "$out/walk.json" 'm["totals"]["runs_found"]')" 10 "summaries in an archive are not runs"
is "$(json_get "$out/walk.json" 'sorted((u["path"].rsplit("/", 1)[1], u["reason"][:30]) for u in m["unreadable"])')" \
	"[('broken', \"'summary.json': invalid JSON a\"), ('running', 'no summary.json (the run is st')]" \
	"the broken summary and the unfinished run are listed, with why"
like "$("$SSEBENCH" report "$res")" '^## Unreadable \(2\)' "md: the unreadable count and list"
rm -rf "$res/t9" "$planted/archive/summary.json" "$planted/archive/deep"

# --- bad input ---
run_cmd r "$SSEBENCH" report job-nope
is "$r_rc" 1 "no such job: exit 1"
like "$r_err" "no job or results directory 'job-nope'" "and says so"
run_cmd r "$SSEBENCH" report "$SB_TMP/nowhere"
is "$r_rc" 1 "no such directory: exit 1"
run_cmd r "$SSEBENCH" report --format pdf
is "$r_rc" 2 "a bad --format: exit 2"
like "$r_err" "--format must be md, json, csv, csv-runs, html or junit" "naming the formats"
run_cmd r "$SSEBENCH" report a b
is "$r_rc" 2 "two arguments: exit 2"
run_cmd r "$SSEBENCH" report --output
is "$r_rc" 2 "--output without a file: exit 2"
run_cmd r "$SSEBENCH" report "$job" --output "$SB_TMP/no/such/dir/r.md"
is "$r_rc" 1 "an output that cannot be written: exit 1"

# --output through what is not a plain file, as a shell would: a FIFO (like /dev/null or
# /dev/stdout, which an atomic replacement would turn into a regular file) stays what it
# is, and a link the user made is written through.
mkfifo "$SB_TMP/fifo"
timeout 20 cat "$SB_TMP/fifo" >"$SB_TMP/from-fifo" &
reader=$!
run_cmd r timeout 20 "$SSEBENCH" report "$job" --format csv --output "$SB_TMP/fifo"
wait "$reader"
is "$r_rc" 0 "--output FIFO: exit 0"
ok "$([ -p "$SB_TMP/fifo" ]; echo $?)" "the FIFO is still a FIFO, not replaced by a file"
is "$(head -1 "$SB_TMP/from-fifo" | cut -d, -f1)" group "and the report went through it"
echo old >"$SB_TMP/target"
ln -s target "$SB_TMP/link"
run_cmd r "$SSEBENCH" report "$job" --format csv --output "$SB_TMP/link"
ok "$([ -L "$SB_TMP/link" ] && [ "$r_rc" = 0 ]; echo $?)" "--output LINK: exit 0, the link stays a link"
is "$(head -1 "$SB_TMP/target" | cut -d, -f1):$(grep -c old "$SB_TMP/target")" "group:0" "and its target holds the report alone"

# Each broken copy of the job, and what the error must say.
broken() { # NAME PYTHON-EDIT: a copy of the job with index.json (ix) or job.json (jj) edited
	local d=$SB_TMP/broken-$1
	rm -rf "$d"
	cp -r "$jdir" "$d"
	python3 - "$d" "$2" <<'PY'
import json, sys
d, edit = sys.argv[1], sys.argv[2]
ix = json.load(open(d + "/index.json"))
jj = json.load(open(d + "/job.json"))
exec(edit)
if ix is not None:
    json.dump(ix, open(d + "/index.json", "w"))
if jj is not None:
    json.dump(jj, open(d + "/job.json", "w"))
PY
	printf '%s' "$d"
}
while IFS='|' read -r name edit why; do
	d=$(broken "$name" "$edit")
	run_cmd r "$SSEBENCH" report "$d"
	is "$r_rc:$r_out" "1:" "$name: exit 1, no report"
	like "$r_err" "$why" "$name: says what is wrong"
done <<'CASES'
index-v2|ix["version"] = 2|index.json is version 2, newer than this ssebench reads \(1\)
job-v2|jj["version"] = 3|job.json is version 3, newer than this ssebench reads \(1\)
no-version|del ix["version"]|index.json: "version" must be a positive integer
slots-not-array|ix["slots"] = {}|index.json: "slots" must be an array
slot-not-object|ix["slots"][2] = "x"|index.json: slot 2 is not an object
bad-state|ix["slots"][0]["state"] = "frob"|slot 0: state 'frob' is not pending, running, done or skipped
bad-status|ix["slots"][0]["status"] = "great"|slot 0: status 'great' is not passed
done-no-dir|ix["slots"][1]["dir"] = None|slot 1 is done but has no "run_id" or "dir"
relative-dir|ix["slots"][1]["dir"] = "results/x"|slot 1: "dir" 'results/x' is not an absolute path
attempt-zero|ix["slots"][0]["attempt"] = 0|slot 0: "attempt" must be a positive integer
task-not-string|ix["slots"][3]["task"] = 7|slot 3: "task" must be a string
no-tries|del ix["slots"][3]["tries"]|slot 3: "tries" must be an array
duplicate-key|ix["slots"][1]["key"] = ix["slots"][0]["key"]|slot 1: key 't1/claude/m1/1' is also slot 0's
duplicate-run|ix["slots"][1]["run_id"] = ix["slots"][0]["run_id"]|slot 1: run '20260101-000000-000000' is also slot 0's
other-job|ix["job_id"] = "job-other"|index.json: "job_id" is not the job's
no-attempts|del jj["matrix"]["attempts"]|job.json: needs "job_id"
CASES
d=$SB_TMP/broken-not-json
rm -rf "$d" && cp -r "$jdir" "$d" && printf '{"version": 1, "slots": [' >"$d/index.json"
run_cmd r "$SSEBENCH" report "$d"
is "$r_rc" 1 "an index that is not JSON: exit 1"
like "$r_err" "'index.json': invalid JSON" "and says where"
d=$SB_TMP/broken-no-index
rm -rf "$d" && cp -r "$jdir" "$d" && rm "$d/index.json"
run_cmd r "$SSEBENCH" report "$d"
is "$r_rc" 1 "a job without its index: exit 1"

# A done slot whose run directory went away, or holds another run: unreadable, not guessed.
d=$(broken gone 'ix["slots"][0]["dir"] = "/nonexistent/run"; ix["slots"][0]["status"] = "error"; ix["slots"][0]["reason"] = "could not start: no Docker"; ix["slots"][1]["run_id"] = "20990101-000000-ffffff"')
run_cmd r "$SSEBENCH" report "$d" --format json
is "$r_rc" 0 "a job whose run directories are gone still reports"
printf '%s' "$r_out" >"$out/gone.json"
is "$(json_get "$out/gone.json" '[(u["path"], u["reason"]) for u in m["unreadable"]][0][0], m["unreadable"][1]["reason"], m["totals"]["unreadable"]')" \
	"('/nonexistent/run', \"summary.json is not of run '20990101-000000-ffffff', which the job's index names here\", 2)" \
	"a missing run and a run of another id are unreadable, with why"
like "$(json_get "$out/gone.json" 'm["unreadable"][0]["reason"]')" "No such file or directory \(the job's index: error, could not start: no Docker\)$" \
	"with what the job's index says of the slot"

done_testing

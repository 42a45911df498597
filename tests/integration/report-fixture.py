#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Write results directories and job directories for `ssebench report` tests, without runs.

  report-fixture.py results RESULTS < SPEC        one run directory per line of SPEC
  report-fixture.py job RESULTS JOBDIR JOB_ID < SPEC
                                                  the same runs, plus JOBDIR/job.json and
                                                  JOBDIR/index.json with one slot per line
  report-fixture.py synthetic RESULTS N [SEED]    N random runs (bench/report-scale.sh), each
                                                  summary about the size of a real one (9 to
                                                  11 KiB in real runs: an isolation record of
                                                  every property in two phases, a sanitizer
                                                  report of 1 to 10 KB in a run that failed,
                                                  the grading record)

A SPEC line is either words:

  TASK AGENT MODEL ATTEMPT OUTCOME [KEY=VALUE...]

or a JSON object with the same names (task, agent, model, attempt, outcome and the keys),
for names no word can hold. OUTCOME is passed, failed, forfeit or error (a run), or, in a
job, pending, running or skipped (a slot without a run). KEYS: dur (duration_s), spend,
tin/tout (tokens), egress (restricted|open), ref=1 (config.reference_run), msg (error_msg),
build, func, hidden (0|1), pov (P/T), status (the index's status of a done slot, to make it
disagree), reason (a skipped slot's), no_job=1 (leave the summary's job member out),
flags=KIND,KIND... (the answer-seeking scan's "flags", one per kind, and "flags_total" their
number; in a JSON line, a list written as it is), ftotal=JSON ("flags_total" instead, as the
JSON it is: -1, 2.5, 99999999999; in a JSON line, "flags_total" is written as it is).
Run directories are <RESULTS>/<task>/<model>/<agent>/<run id>, with names made safe for the
file system; the summaries keep the names as given.
"""
import json
import os
import random
import re
import sys


def safe(name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)[:60] or "_"


def parse(line):
    line = line.strip()
    if not line or line.startswith("#"):
        return None
    if line.startswith("{"):
        d = json.loads(line)
    else:
        words = line.split()
        d = dict(zip(["task", "agent", "model", "attempt", "outcome"], words[:5]))
        for kv in words[5:]:
            k, _, v = kv.partition("=")
            d[k] = v
    d["attempt"] = int(d.get("attempt", 1))
    return d


def isolation(outcome, egress):
    if outcome == "error":
        return {"outcome": "unscored", "scored": False, "tier": None, "egress": egress,
                "failed": ["network_internal"], "phases": {"before_agent": {}}}
    if outcome == "forfeit":
        return {"outcome": "forfeit", "scored": True, "tier": egress, "egress": egress,
                "failed": ["results_hidden"],
                "phases": {"before_agent": {}, "before_grading": {}}}
    return {"outcome": "scored", "scored": True, "tier": egress, "egress": egress, "failed": [],
            "phases": {"before_agent": {}, "before_grading": {}}}


def flag(d, key, default):
    v = d.get(key)
    return default if v is None else str(v) in ("1", "true", "True")


def patch_result(d):
    outcome = d["outcome"]
    if outcome in ("error", "forfeit"):
        msg = ("Not scored: isolation not established: network_internal" if outcome == "error"
               else "Forfeit: the isolation established before the agent did not hold before "
               "grading: results_hidden")
        return {"status": outcome, "build_success": None, "pov_passed": None, "pov_total": None,
                "func_test_success": None, "intent_test_success": None,
                "error_msg": d.get("msg", msg), "error_log": None}
    passed = outcome == "passed"
    pov = d.get("pov", "1/1" if passed else "0/1")
    p, _, t = str(pov).partition("/")
    return {"status": outcome, "build_success": flag(d, "build", True),
            "pov_passed": int(p), "pov_total": int(t),
            "func_test_success": flag(d, "func", True),
            "intent_test_success": flag(d, "hidden", passed),
            "error_msg": None if passed else d.get("msg", "PoC failed: /ssebench/pocs/poc1"),
            "error_log": None}


# What a real summary carries besides the figures: the isolation record's properties.
PROPS = ["agent_identity", "runner_identity", "no_capabilities", "no_new_privs", "seccomp",
         "task_files_hidden", "pristine_repo_hidden", "results_hidden", "single_commit",
         "difficulty_gate", "reference_mount", "network_internal", "egress_canary",
         "host_guard", "runner_sandbox", "scripts_root", "agent_freezer", "shared_places"]


def realistic(s, rnd):
    phase = {p: {"status": "held", "detail": "agent: " + "x" * rnd.randint(20, 100)}
             for p in PROPS}
    s["isolation"]["phases"] = {"before_agent": phase, "before_grading": dict(phase)}
    if s["patch_result"]["status"] == "failed":
        s["patch_result"]["error_log"] = "==1==ERROR: AddressSanitizer: " + "y" * rnd.randint(
            1000, 10000)
    s["task"].update({"project": "p", "language": "c", "sanitizer": "address",
                      "repository": "https://example.invalid/p", "source": "/src/p",
                      "files": {"poc": ["pocs/1"], "patch": "diffs/patch.diff"},
                      "task_description": {"bug_description": "z" * 200}})
    s["grading"] = {"reverted": ["tests/t%d.c" % i for i in range(20)],
                    "scope": {"files": 3, "lines": 40}, "baseline": {"tests": 120}}


def scan_flags(spec):
    """The "flags" of a summary: a list as it is, or "kind,kind" as one flag per kind, each
    shaped as the scan writes them (src/libsb/scan.c)."""
    if isinstance(spec, list):
        return spec
    return [{"kind": k, "source": "dialog.jsonl", "seq": i, "match": k,
             "excerpt": "a tool call that hit " + k}
            for i, k in enumerate(spec.split(",")) if k]


def write_run(results, d, run_id, job_id, rnd=None):
    egress = d.get("egress", "restricted")
    outcome = d["outcome"]
    s = {
        "task": {"id": d["task"]},
        "config": {"agent": d["agent"], "model": d["model"], "mode": "sandbox",
                   "difficulty": 2, "egress": egress,
                   "reference_run": flag(d, "ref", False)},
        "patch_result": patch_result(d),
        "isolation": isolation(outcome, egress),
        "scored": outcome != "error",
        "spend": float(d["spend"]) if "spend" in d else None,
        "run_id": run_id,
        "started_at": "2026-01-01T00:%02d:%02dZ" % (d["attempt"] // 60 % 60, d["attempt"] % 60),
        "finished_at": "2026-01-01T01:00:00Z",
    }
    if "dur" in d:
        s["duration_s"] = float(d["dur"])
    if "tin" in d and "tout" in d:
        s["usage"] = {"tokens_in": int(d["tin"]), "tokens_out": int(d["tout"]),
                      "source": "dialog"}
    if "flags" in d:
        s["flags"] = scan_flags(d["flags"])
        s["flags_total"] = len(s["flags"])
    if "flags_total" in d:
        s["flags_total"] = d["flags_total"]
    elif "ftotal" in d:
        s["flags_total"] = json.loads(d["ftotal"])
    if rnd is not None:
        realistic(s, rnd)
    if job_id is not None and not flag(d, "no_job", False):
        s["job"] = {"id": job_id, "attempt": d["attempt"]}
    run_dir = os.path.join(results, safe(d["task"]), safe(d["model"]), safe(d["agent"]),
                           run_id)
    os.makedirs(os.path.join(run_dir, "archive"), exist_ok=True)
    with open(os.path.join(run_dir, "summary.json"), "w") as f:
        json.dump(s, f)
    return os.path.abspath(run_dir)


def main():
    mode = sys.argv[1]
    if mode == "synthetic":
        results, n = sys.argv[2], int(sys.argv[3])
        rnd = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
        tasks = ["task-%03d" % i for i in range(100)]
        agents = [("claude-code", "claude-sonnet-4-6"), ("codex", "gpt-5"),
                  ("opencode", "qwen3-coder"), ("dummy", "none")]
        for i in range(n):
            agent, model = agents[i % len(agents)]
            task = tasks[(i // len(agents)) % len(tasks)]
            attempt = i // (len(agents) * len(tasks)) + 1
            r = rnd.random()
            outcome = ("passed" if r < 0.35 else "failed" if r < 0.85 else
                       "forfeit" if r < 0.88 else "error")
            d = {"task": task, "agent": agent, "model": model, "attempt": attempt,
                 "outcome": outcome, "dur": "%.1f" % rnd.uniform(60, 3600),
                 "spend": "%.4f" % rnd.uniform(0.05, 3.0),
                 "tin": rnd.randint(10000, 2000000), "tout": rnd.randint(1000, 100000)}
            write_run(results, d, "20260101-000000-%06x" % i, None, rnd)
        return
    results = sys.argv[2]
    job_dir = job_id = None
    if mode == "job":
        job_dir, job_id = sys.argv[3], sys.argv[4]
    elif mode != "results":
        sys.exit("usage: report-fixture.py results|job|synthetic ...")
    slots = []
    for i, line in enumerate(sys.stdin):
        d = parse(line)
        if d is None:
            continue
        run_id = "20260101-000000-%06x" % i
        slot = {"key": "%s/%s/%s/%d" % (d["task"], d["agent"], d["model"], d["attempt"]),
                "task": d["task"], "agent": d["agent"], "model": d["model"],
                "attempt": d["attempt"], "state": "done", "run_id": None, "dir": None,
                "status": None, "reason": None, "tries": []}
        if d["outcome"] in ("pending", "running", "skipped"):
            slot["state"] = d["outcome"]
            if d["outcome"] == "skipped":
                slot["reason"] = d.get("reason", "the image did not build")
        else:
            slot["run_id"] = run_id
            slot["dir"] = write_run(results, d, run_id, job_id)
            slot["status"] = d.get("status", d["outcome"])
            slot["tries"] = [{"run_id": run_id, "status": slot["status"]}]
        slots.append(slot)
    if job_dir is None:
        return
    os.makedirs(job_dir, exist_ok=True)
    uniq = lambda k: sorted({s[k] for s in slots})
    job = {"version": 1, "job_id": job_id, "created_at": "2026-01-01T00:00:00Z",
           "ssebench_version": "0.0.0-fixture",
           "dataset": {"path": "/datasets/fixture", "name": "fixture", "version": None},
           "matrix": {"tasks": uniq("task"), "agents": uniq("agent"), "models": uniq("model"),
                      "attempts": max([s["attempt"] for s in slots] or [1])},
           "options": {"difficulty": 2, "egress": "restricted", "timeout": 3600,
                       "mode": "sandbox", "runtime": None, "jobs": 2}}
    with open(os.path.join(job_dir, "job.json"), "w") as f:
        json.dump(job, f, indent=2)
    with open(os.path.join(job_dir, "index.json"), "w") as f:
        json.dump({"version": 1, "job_id": job_id, "slots": slots}, f, indent=2)


if __name__ == "__main__":
    main()

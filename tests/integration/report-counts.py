#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Read the per-group counts back out of one rendered `ssebench report`, whatever its format.

  report-counts.py FORMAT FILE

prints one line per group, sorted by group id:

  G1 runs=6 scored=5 passed=2 failed+forfeit=3 unscored=1 rate=40.0 flagged=2

so that t0150-report.sh can check that md, json, csv, html and junit show the same numbers.
Each format is parsed as a reader of that format would: the JSON model, the CSV rows, the
Markdown table, the HTML table (through html.parser, entities decoded), the JUnit testsuites
(their attributes, and their testcases counted one by one). flagged (runs the answer-seeking
scan flagged) is also counted from each format's list of runs where it has one (the model's
runs, the md and html "Flagged runs" tables, the JUnit testcases with a system-out), which
must agree with the group's figure.
"""
import csv
import io
import json
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser


def line(gid, runs, scored, passed, failures, unscored, rate, flagged):
    rate = "-" if rate is None else "%.1f" % rate
    return "%s runs=%d scored=%d passed=%d failed+forfeit=%d unscored=%d rate=%s flagged=%d" % (
        gid, runs, scored, passed, failures, unscored, rate, flagged)


def agree(gid, flagged, listed):
    """A group's flagged figure against the flagged runs its format lists."""
    assert flagged == listed.get(gid, 0), "%s: flagged %d, %d runs listed" % (
        gid, flagged, listed.get(gid, 0))


def pct(cell):
    cell = cell.strip()
    return None if cell in ("–", "-", "") else float(cell.replace("%", "").strip())


def from_json(text):
    m = json.loads(text)
    listed, out = {}, []
    for r in m["runs"]:
        if r["flags"] > 0:
            listed[r["group"]] = listed.get(r["group"], 0) + 1
    for g in m["groups"]:
        rate = None if g["pass_rate"] is None else g["pass_rate"] * 100
        agree(g["id"], g["flagged"], listed)
        out.append(line(g["id"], g["runs"], g["scored"], g["passed"], g["failed"] + g["forfeit"],
                        g["unscored"], rate, g["flagged"]))
    assert m["totals"]["flagged"] == sum(listed.values())
    return out


def from_csv(text):
    out = []
    for r in csv.DictReader(io.StringIO(text)):
        rate = None if r["pass_rate"] == "" else float(r["pass_rate"]) * 100
        out.append(line(r["group"], int(r["runs"]), int(r["scored"]), int(r["passed"]),
                        int(r["failed"]) + int(r["forfeit"]), int(r["unscored"]), rate,
                        int(r["flagged"])))
    return out


def from_md(text):
    out, on, listed, heading = [], None, {}, None
    for ln in text.splitlines():
        if ln.startswith("## "):
            on = ("groups" if ln == "## Pass rate by agent and model" else
                  "flagged" if ln.startswith("## Flagged runs (") else None)
            if on == "flagged":
                heading = int(ln[len("## Flagged runs ("):-1])
            continue
        if on is None or not ln.startswith("| G"):
            continue
        c = [x.strip() for x in ln.strip().strip("|").split(" | ")]
        gid = c[0].split(" ", 1)[0]
        if on == "flagged":
            # group, task, attempt, outcome, flags, kinds, run
            assert int(c[4]) > 0, ln
            listed[gid] = listed.get(gid, 0) + 1
            continue
        # group, runs, scored, passed, failed, forfeit, unscored, skipped, not run, rate, CI,
        # flagged
        out.append(line(gid, int(c[1]), int(c[2]), int(c[3]), int(c[4]) + int(c[5]), int(c[6]),
                        pct(c[9]), int(c[11])))
    for r in out:
        agree(r.split(" ", 1)[0], int(r.rsplit("=", 1)[1]), listed)
    assert heading == (sum(listed.values()) or None), heading
    return out


class Tables(HTMLParser):
    """Every <table> after an <h2>, as its heading and rows of cell texts."""

    def __init__(self):
        super().__init__()
        self.h2, self.in_h2, self.tables, self.row, self.cell = "", False, [], None, None

    def handle_starttag(self, tag, attrs):
        if tag == "h2":
            self.in_h2, self.h2 = True, ""
        elif tag == "table":
            self.tables.append((self.h2, []))
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self.cell = ""
        elif tag == "br" and self.cell is not None:
            self.cell += "\n"

    def handle_endtag(self, tag):
        if tag == "h2":
            self.in_h2 = False
        elif tag in ("td", "th") and self.cell is not None:
            self.row.append(self.cell)
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.tables[-1][1].append(self.row)
            self.row = None

    def handle_data(self, data):
        if self.in_h2:
            self.h2 += data
        if self.cell is not None:
            self.cell += data


def from_html(text):
    p = Tables()
    p.feed(text)
    rows = [t for h, t in p.tables if h == "Pass rate by agent and model"][0]
    listed = {}
    for h, t in p.tables:
        if h.startswith("Flagged runs ("):
            assert int(h[len("Flagged runs ("):-1]) == len(t) - 1, h
            # group, task, attempt, outcome, flags ("3: kind, kind"), run
            for c in t[1:]:
                assert int(c[4].split(":", 1)[0]) > 0, c
                listed[c[0]] = listed.get(c[0], 0) + 1
    out = []
    for c in rows[1:]:
        gid = c[0].split(" ", 1)[0]
        # ..., pass rate, 95 % interval, pass@k, flagged
        agree(gid, int(c[12]), listed)
        out.append(line(gid, int(c[1]), int(c[2]), int(c[3]), int(c[4]) + int(c[5]), int(c[6]),
                        pct(c[9]), int(c[12])))
    return out


def from_junit(text):
    root = ET.fromstring(text)
    out = []
    for s in root.findall("testsuite"):
        props = {p.get("name"): p.get("value") for p in s.iter("property")}
        cases = s.findall("testcase")
        failures = sum(1 for c in cases if c.find("failure") is not None)
        errors = sum(1 for c in cases if c.find("error") is not None)
        skipped = sum(1 for c in cases if c.find("skipped") is not None)
        passed = len(cases) - failures - errors - skipped
        # the suite's own attributes must say what its testcases say
        assert int(s.get("tests")) == len(cases), s.get("name")
        assert int(s.get("failures")) == failures and int(s.get("errors")) == errors
        assert int(s.get("skipped")) == skipped
        rate = float(props["pass_rate"]) * 100 if "pass_rate" in props else None
        flagged = sum(1 for c in cases if c.find("system-out") is not None)
        agree(props["id"], int(props["flagged"]), {props["id"]: flagged})
        out.append(line(props["id"], len(cases) - skipped, passed + failures, passed, failures,
                        errors, rate, flagged))
    return out


def main():
    fmt, path = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    rows = {"json": from_json, "csv": from_csv, "md": from_md, "html": from_html,
            "junit": from_junit}[fmt](text)
    for r in sorted(rows, key=lambda r: int(r.split(" ", 1)[0][1:])):
        print(r)


if __name__ == "__main__":
    main()

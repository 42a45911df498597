#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The HTML report in a real browser: Debian's chromium, headless, opens the report of a
# fixture job whose names are markup and control characters. The page must log nothing to
# the console (it has no script; a Content-Security-Policy violation, a blocked fetch or an
# injected script would each log there), its DOM must hold no script element and the four
# plots, and the hostile task id and flag kind must be text. A screenshot is kept in this test's output
# directory (its path is printed). A control page with one raw <script> shows that the
# console check sees what it is there to see. No chromium: SKIP, or a failure under
# SSEBENCH_REQUIRE_DOCKER=1 (CI); scripts/setup installs it.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
command -v python3 >/dev/null || skip_all "python3 is needed to write the fixtures"
chromium=$(command -v chromium || true)
[ -n "$chromium" ] || skip_all "chromium is not installed (apt-get install chromium)"
plan_lazy

keep=$SB_BUILDDIR/tests/integration/t0155-report-browser.out
rm -rf "$keep"
mkdir -p "$keep"
res=$SB_TMP/results
job=job-20260101-000000-b0b0b0
python3 "$SB_SRCDIR/tests/integration/report-fixture.py" job "$res" "$res/jobs/$job" "$job" <<'SPEC'
t1 claude m1 1 passed dur=100 spend=0.5 tin=1000 tout=200
t1 claude m1 2 failed dur=200 spend=0.7
t2 claude m1 1 forfeit dur=50
t2 claude m1 2 error
t1 codex m2 1 passed dur=80 spend=0.2
t2 codex m2 1 skipped reason=no-image
{"task": "<script>console.error('pwned')</script>\u0001\u202e\"'", "agent": "<img src=x onerror=console.error(1)>", "model": "m\"><svg onload=console.error(2)>", "attempt": 1, "outcome": "failed", "msg": "</title><script>console.error(3)</script>", "dur": 12, "flags": [{"kind": "</td><script>console.error(4)</script><img src=x onerror=console.error(5)>", "excerpt": "<script>console.error(6)</script>"}]}
SPEC
html=$keep/report.html
SSEBENCH_RESULTS=$res "$SSEBENCH" report "$job" --format html --output "$html"
ok $? "the report is written"

# browse NAME URL ARGS...: chromium headless with a fresh profile, nothing fetched in the
# background; stderr in $keep/NAME.log (console messages are logged there at INFO).
browse() {
	local name=$1 url=$2
	shift 2
	rm -rf "$SB_TMP/profile-$name"
	timeout 120 "$chromium" --headless --no-sandbox --disable-gpu \
		--disable-background-networking --disable-component-update --no-first-run \
		--user-data-dir="$SB_TMP/profile-$name" --enable-logging=stderr --v=0 "$@" "$url" \
		2>"$keep/$name.log"
}

browse shot "file://$html" --window-size=1280,2400 --screenshot="$keep/report.png" >/dev/null
ok $? "chromium opens the report"
console=$(grep ':CONSOLE' "$keep/shot.log")
is "$console" "" "nothing on the browser's console"
size=$(python3 -c 'import struct, sys
d = open(sys.argv[1], "rb").read(24)
assert d[:8] == b"\x89PNG\r\n\x1a\n"
print("%dx%d" % struct.unpack(">II", d[16:24]))' "$keep/report.png" 2>&1)
is "$size" "1280x2400" "a screenshot of the page"
diag "screenshot: $keep/report.png"

browse dom "file://$html" --dump-dom >"$keep/dom.html"
ok $? "chromium dumps the page's DOM"
python3 - "$keep/dom.html" >"$keep/dom.txt" <<'PY'
import sys
from html.parser import HTMLParser

class P(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.text, self.handlers = {}, [], []
    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        self.handlers += [k for k, _ in attrs if k.startswith("on")]
    def handle_data(self, d):
        self.text.append(d)

p = P()
p.feed(open(sys.argv[1], encoding="utf-8").read())
print("script=%d img=%d svg=%d handlers=%d" % (p.tags.get("script", 0), p.tags.get("img", 0),
                                              p.tags.get("svg", 0), len(p.handlers)))
print("task-as-text=%s" % any("<script>console.error('pwned')</script>" in t for t in p.text))
print("flag-kind-as-text=%s" % any("</td><script>console.error(4)</script>" in t for t in p.text))
PY
is "$(sed -n 1p "$keep/dom.txt")" "script=0 img=0 svg=4 handlers=0" \
	"the DOM: no script, no image, no event handler, the four SVG plots"
is "$(sed -n 2p "$keep/dom.txt")" "task-as-text=True" "the hostile task id is text in the page"
is "$(sed -n 3p "$keep/dom.txt")" "flag-kind-as-text=True" "and so is the hostile flag kind"

# The control: the same report with one raw script. The console check must see it (the
# policy blocks it and says so), or the check above proves nothing.
sed 's|<h1>|<script>console.error("control")</script><h1>|' "$html" >"$keep/control.html"
browse control "file://$keep/control.html" --screenshot="$SB_TMP/control.png" >/dev/null
like "$(grep ':CONSOLE' "$keep/control.log")" 'Content Security Policy' \
	"a raw script in the page shows on the console (the check can fail)"

done_testing

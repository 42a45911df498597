#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The spoiler agent (difficulty 0, as `model`): one line per step into $SSE_ARCHIVE/spoiler.txt
# (<step> <blocked|ok|LEAKED|FAILED|info> <detail>), which t0100-hostile-agent.sh reads back.
# Unlike the hostile agent it does not try to read anything hidden: it tries to make its run
# end in something other than an honest grade (an error, a crash of a root step, a probe
# that cannot run) or to leave something behind on the host.
set -u
OUT=$SSE_ARCHIVE/spoiler.txt
SOCK=${SSE_DAEMON_SOCKET:-/tmp/sse.sock}
SRC=${SSE_SOURCE:-$PWD}
A=$SSE_ARCHIVE
say() {
	local d=${3:-}
	d=${d//$'\n'/ }
	printf '%s %s %s\n' "$1" "$2" "${d:0:400}" >>"$OUT"
}
bencher() { # ACTION: HTTP status to CODE, body to $A/.bencher-ACTION
	CODE=$(curl -s -m 600 -o "$A/.bencher-$1" -w '%{http_code}' --unix-socket "$SOCK" \
		-H 'Content-Type: application/json' -X POST --data '{"grading": false}' \
		"http://d/tool/bencher?action=$1" 2>/dev/null)
}
cd "$SRC" || exit 1
say spoiler-started info "pid $$ level ${SSE_DIFFICULTY:-?}"

# 1. Names a line-based reader, a shell or a terminal would misread, in the tree and in the
# archive: newlines, tabs, control bytes, a leading dash, bytes that are not UTF-8, the
# longest name there is, a directory named like a diff header.
names=($'new\nline' $'tab\there' $'ctl\x01\x1b[31mred' '-rf' ' lead' 'back\slash' $'\xff\xfe' \
	"$(printf 'n%.0s' $(seq 255))" $'+++ b/tb.c' '..."' '*' '$(id)')
n=0
for d in "$SRC" "$A"; do
	for nm in "${names[@]}"; do
		printf 'x\n' >"$d/$nm" 2>/dev/null && n=$((n + 1))
	done
	mkdir -p "$d/"$'dir\nwith\tnewline'/$'inner\x7f' && echo y >"$d/"$'dir\nwith\tnewline'/$'inner\x7f'/f
done
say hostile-names info "$n names made in the tree and the archive"

# 2. A build whose leftover goes for every process of the runner's uid (the isolation probe
# at the end of the agent phase, the grading build) once the build is over.
cat >>Makefile <<'MK'

all: spoiler-leftover
spoiler-leftover:
	@setsid -f bash -c 'exec -a sse-spoiler-killer bash -c "sleep 4; while :; do kill -9 -1 2>/dev/null; sleep 0.05; done"' </dev/null >/dev/null 2>&1 || true
.PHONY: spoiler-leftover
MK
git add -A Makefile && git -c user.name=spoiler -c user.email=spoiler@localhost.invalid commit -q -m "build: leftover"
bencher build
say build-with-leftover "$([ "$CODE" = 200 ] && echo ok || echo FAILED)" "HTTP $CODE"
# Where the build ran (the bash tool runs there: this container, or the task container).
sleep 6
CODE=$(curl -s -m 60 -o "$A/.bash" -w '%{http_code}' --unix-socket "$SOCK" -H 'Content-Type: application/json' \
	-X POST --data '{"command": "grep -las ^sse-spoiler-killer /proc/[0-9]*/cmdline | wc -l"}' http://d/tool/bash 2>/dev/null)
alive=$(sed -n 's/.*"stdout": *"\([0-9]*\).*/\1/p' "$A/.bash")
say leftover-killer-dead "$([ "$CODE" = 200 ] && [ "${alive:-x}" = 0 ] && echo blocked || echo LEAKED)" \
	"bash tool HTTP $CODE: ${alive:-?} killer(s) alive 6 s after the build"

# 3. What the hand-back must not keep: set-id, modes anyone may write, links out, special
# files, a second name of a file of the tree.
cp /bin/true "$A/suid" && chmod 6755 "$A/suid"
mkdir -p "$A/open" && chmod 0777 "$A/open" && echo o >"$A/open/f" && chmod 0666 "$A/open/f"
ln -s /etc/shadow "$A/result.json"
ln -s / "$A/root"
echo mine >"$SRC/mine" && ln "$SRC/mine" "$A/hardlink"
mkfifo "$A/fifo"
perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Type => SOCK_STREAM(), Local => $ARGV[0], Listen => 1)' "$A/sock"
say hand-back-traps info "$(ls -la "$A" | grep -cE '^[lps]|^...s|^......s|^d.......w') traps in the archive"

# 4. What the capture (git, over the agent's tree) must survive: a directory it cannot read,
# a FIFO where git reads attributes, a FIFO in the tree, a file as large as the disk allows.
mkdir -p locked && echo secret >locked/f && chmod 000 locked
mkdir -p sub && mkfifo sub/.gitattributes
mkfifo data.fifo
say capture-breakers info "locked/ (000), sub/.gitattributes (FIFO), data.fifo"

# 5. The disk, to the last block: the agent's home, its tree, /tmp (a little kept back to
# write this report, and given up at the end).
dd if=/dev/zero of="$A/.reserve" bs=1M count=1 2>/dev/null
for f in "$HOME/fill" "$SRC/fill" /tmp/fill /var/tmp/fill; do
	dd if=/dev/zero of="$f" bs=1M 2>/dev/null
done
dd if=/dev/zero of=/tmp/fill-tail bs=4k 2>/dev/null
r=$(dd if=/dev/zero of=/tmp/one-more bs=4k count=1 2>&1 >/dev/null | grep -m1 -i 'error\|copied')
rm -f "$A/.reserve"
say disk-filled "$(echo "$r" | grep -q 'No space left' && echo ok || echo FAILED)" \
	"$(du -sm "$HOME/fill" "$SRC/fill" /tmp/fill 2>/dev/null | awk '{s += $1} END {print s " MiB written"}'); then: ${r:-no error}"
say spoiler-finished ok "$(date -u +%FT%T.%3NZ)"
# And the last of it.
dd if=/dev/zero of=/tmp/fill-last bs=4k 2>/dev/null
exit 0

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Hostile task scripts and trees against a real daemon. The build script is what the agent's
# code would be (a Makefile rule, a test): it tries to read the hidden material, write outside
# its copy, leave processes behind, fork-bomb, flood its output, outlive its timeout, reach
# the admin socket. The agent's tree carries git configuration that would run commands as
# whoever captures the diff. None of it may leak, hang the daemon or leave a process.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
. "$SB_SRCDIR/tests/daemon/lib-daemon.sh"

require_daemon_env
plan_lazy

make_fixture
MARK=$SB_TMP/marks
mkdir -p "$MARK" && chmod 1777 "$MARK"
# The build script does what the file `mode` in the agent's tree says.
write_build() {
cat >"$D/bench/scripts/build.sh" <<EOT
#!/bin/bash
case \$(cat mode 2>/dev/null) in
read-hidden)
	for f in "$D/bench/diffs/patch.diff" "$D/bench/diffs/test.diff" "$D/bench/pocs/poc.txt" \
		"$D/bench/config.yaml" "$D/repo/main.c" "$D/results/final.patch"; do
		cat "\$f" 2>&1 || true
	done
	ls "$D/bench" "$RUNNER_DIR" 2>&1
	cat ./leak 2>&1; cat ./leak-dir/patch.diff 2>&1 ;;
write-outside)
	for f in "$D/src/planted" "$D/results/result.json" "$D/bench/planted" "$RUNNER_DIR/planted" \
		"$D/archive/planted"; do
		echo x > "\$f" 2>&1 && echo "WROTE \$f"
	done ;;
env)
	env; id; grep -E '^(CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status
	exec 3<>/dev/tcp/127.0.0.1/1 2>/dev/null
	python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect("$D/admin/admin.sock")' 2>&1 | tail -1 ;;
daemonize)
	(setsid sleep 300 &) ; (sleep 301 & disown) ; nohup sleep 302 >/dev/null 2>&1 &
	echo left ;;
forkbomb)
	bomb() { bomb | bomb & }; bomb; sleep 2; echo bombed ;;
flood)
	head -c 1073741824 /dev/zero | tr '\\0' x ;;
sleep)
	sleep 60 ;;
reach)
	# Everything the agent could see or be reached through: none of it may work.
	port=\$(cat port)
	(exec 3<>/dev/tcp/127.0.0.1/\$port) 2>/dev/null && echo "REACHED tcp"
	python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect("\0sse-t0300-" + sys.argv[1]); print("REACHED abstract")' "\$port" 2>/dev/null
	python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print("REACHED agent socket")' "$SOCK" 2>/dev/null
	# Writes to /tmp, /var/tmp and /dev/shm land in the sandbox's own (or fail): the check
	# below looks for them outside. A directory the agent opened to everyone must refuse.
	for d in /tmp /var/tmp /dev/shm; do
		echo leak >"\$d/runner-leak" 2>/dev/null
	done
	for d in "$D/src/open" "$SB_TMP/open"; do
		echo leak >"\$d/runner-leak" 2>/dev/null && echo "WROTE \$d"
	done
	tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ' '; echo
	echo reach-done ;;
junk)
	# What a check may leave in its workspace for the next session to clear: a directory
	# its owner made unreadable, and one too deep to walk.
	mkdir -p locked/in && echo x >locked/in/f && chmod 000 locked
	python3 -c '
import os
for i in range(3000):
    os.mkdir("d"); os.chdir("d")'
	echo junked ;;
linger)
	# Still running when the agent phase ends, with a process outside its group.
	setsid sleep 303 </dev/null >/dev/null 2>&1 &
	sleep 304 ;;
carry)
	# What a check on hidden material left where the runner may write (its home, the
	# workspaces, which outlive one check), read by the next check, whose output the agent
	# gets.
	cat "\$HOME"/carried* "$RUNNER_DIR"/work-*/carried* "$RUNNER_DIR"/work-*/src/carried* \
		"$RUNNER_DIR"/home-*/carried* 2>/dev/null
	echo carry-done ;;
history)
	# The grading copy: what history does it hold?
	git log --all --oneline 2>&1 | head -5; ls -a; find . -name .git | head -3
	echo history-done ;;
*)
	echo "plain build" ;;
esac
EOT
chmod 0755 "$D/bench/scripts/build.sh"
}
write_build
# The agent's tree: links to hidden files, and git settings that would run commands.
ln -s "$D/bench/diffs/patch.diff" "$D/src/leak"
ln -s "$D/bench/diffs" "$D/src/leak-dir"
cat >"$MARK/mark.sh" <<EOT
#!/bin/sh
touch "$MARK/ran-as-\$(id -u)-\$\$"
cat
EOT
chmod 0755 "$MARK/mark.sh"
git -c safe.directory='*' -C "$D/src" config core.fsmonitor "$MARK/mark.sh"
git -c safe.directory='*' -C "$D/src" config filter.evil.clean "$MARK/mark.sh"
git -c safe.directory='*' -C "$D/src" config filter.evil.smudge "$MARK/mark.sh"
git -c safe.directory='*' -C "$D/src" config filter.evil.process "$MARK/mark.sh"
git -c safe.directory='*' -C "$D/src" config diff.evil.textconv "$MARK/mark.sh"
git -c safe.directory='*' -C "$D/src" config diff.evil.command "$MARK/mark.sh"
git -c safe.directory='*' -C "$D/src" config core.hooksPath "$MARK"
for h in pre-commit post-checkout post-index-change fsmonitor-watchman reference-transaction; do
	cp "$MARK/mark.sh" "$D/src/.git/hooks/$h"
done
printf '* filter=evil diff=evil\n' >"$D/src/.gitattributes"
printf 'int main(void) { return 1; }\n' >"$D/src/main.c"
mkdir -p "$SB_TMP/home"
printf '[core]\n\tfsmonitor = %s\n[filter "evil"]\n\tclean = %s\n' "$MARK/mark.sh" "$MARK/mark.sh" \
	>"$SB_TMP/home/.gitconfig"
chown -R "$AGENT_USER:$AGENT_USER" "$D/src"

# live_procs USER: processes of USER that are not zombies (a zombie is dead, waiting for
# whoever reaps orphans on this host).
live_procs() {
	ps -u "$1" -o stat= 2>/dev/null | grep -vc '^Z'
}

setmode() {
	printf '%s\n' "$1" >"$D/src/mode"
	chown "$AGENT_USER" "$D/src/mode"
}

start_daemon 0 SSE_BUILD_TIMEOUT=3 SSE_OUTPUT_CAP=65536 SSE_RUNNER_NPROC=200 \
	SSE_API_KEY=sk-secret-key OPENAI_API_KEY=sk-other HOME="$SB_TMP/home" \
	XDG_CONFIG_HOME="$SB_TMP/home" || bail "daemon did not start"

build() {
	req agent POST '/tool/bencher?action=build' '{}'
}

setmode read-hidden
r=$(build)
like "$r" '^200 ' "read-hidden: the build ran"
for secret in REFERENCE-PATCH-CONTENT HIDDEN-TEST-CONTENT 'crash me' 'daemon-test' 'return 0'; do
	unlike "$r" "$secret" "read-hidden: the runner cannot read '$secret'"
done
like "$r" 'Permission denied' "read-hidden: the reads fail with EACCES"

setmode write-outside
r=$(build)
unlike "$r" 'WROTE' "write-outside: nothing outside the runner's copy was written"
ok "$([ ! -e "$D/src/planted" ] && [ ! -e "$D/bench/planted" ] && [ ! -e "$D/archive/planted" ]; echo $?)" \
	"write-outside: no planted file exists"

setmode env
r=$(build)
unlike "$r" 'sk-secret-key|sk-other|SSE_DAEMON_TOKEN|SSE_ADMIN_SOCKET|test-token' "env: no secret and no admin socket in the script's environment"
unlike "$r" 'SSE_RESULTS|SSE_SECRETS_FILE|SSE_DAEMON_STATE|SSE_RUNNER_DIR|SSE_REPO_PATH' "env: no root-only path in the script's environment"
like "$r" "uid=[0-9]+\\($RUNNER_USER\\) gid=[0-9]+\\($RUNNER_USER\\) groups=[0-9]+\\($RUNNER_USER\\)\\\\n" "env: runs as the runner, no supplementary groups"
like "$r" 'CapEff:\\t0000000000000000' "env: no effective capabilities"
like "$r" 'CapBnd:\\t0000000000000000' "env: empty bounding set"
like "$r" 'NoNewPrivs:\\t1' "env: no_new_privs"
like "$r" 'Seccomp:\\t2' "env: a seccomp filter"
like "$r" 'PermissionError|Permission denied|FileNotFoundError' "env: the admin socket cannot be connected to (refused, or not even there in the runner's sandbox)"

setmode daemonize
r=$(build)
like "$r" 'left' "daemonize: the script started its leftovers"
sleep 0.5
is "$(live_procs "$RUNNER_USER")" 0 "daemonize: no runner process survives the action"

setmode forkbomb
start=$(date +%s)
r=$(build)
like "$r" '^200 ' "forkbomb: the action returns"
is "$(status agent GET /version)" 200 "forkbomb: the daemon still answers"
is "$(live_procs "$RUNNER_USER")" 0 "forkbomb: nothing of it is left"

setmode flood
start=$(date +%s%N)
r=$(build)
took=$((($(date +%s%N) - start) / 1000000))
like "$r" '"truncated":true' "flood: 1 GB of output is cut"
ok "$([ ${#r} -lt 200000 ]; echo $?)" "flood: the reply stays small (${#r} bytes)"
diag "flood: 1 GB handled in $took ms"
rss=$(awk '/VmRSS/ {print $2}' "/proc/$daemon_pid/status")
ok "$([ "$rss" -lt 100000 ]; echo $?)" "flood: the daemon's memory stays small (${rss} kB)"

setmode sleep
start=$(date +%s)
r=$(build)
took=$(($(date +%s) - start))
like "$r" '"code":124' "sleep: a build past SSE_BUILD_TIMEOUT gets code 124"
like "$r" '"timed_out":true' "sleep: reported as a timeout"
ok "$([ "$took" -lt 15 ]; echo $?)" "sleep: returned after the timeout and grace ($took s)"

# While a long build runs, reads and the admin socket still answer at once.
setmode sleep
build >/dev/null &
bpid=$!
sleep 0.5
for l in agent admin; do
	t0=$(date +%s%N)
	st=$(status "$l" GET /diff)
	ms=$((($(date +%s%N) - t0) / 1000000))
	is "$st" 200 "during a build: /diff on the $l socket answers"
	ok "$([ "$ms" -lt 2000 ]; echo $?)" "during a build: it did not wait for the build ($ms ms)"
done
wait "$bpid"

# A check still running when the agent phase ends: its worker is killed, and with it every
# runner process, those outside the script's group too, before agent_exited answers (they
# could otherwise watch or disturb the isolation check before grading, or hold the archive).
setmode linger
build >/dev/null &
bpid=$!
for _ in $(seq 50); do [ "$(live_procs "$RUNNER_USER")" -ge 2 ] && break; sleep 0.1; done
ok "$([ "$(live_procs "$RUNNER_USER")" -ge 2 ]; echo $?)" "linger: the check and its leftover run"
is "$(status admin POST /admin/agent_exited '{}')" 200 "linger: agent_exited while the check runs"
is "$(live_procs "$RUNNER_USER")" 0 "linger: no runner process is left when agent_exited answers"
wait "$bpid"
stop_daemon
start_daemon 0 SSE_BUILD_TIMEOUT=3 SSE_OUTPUT_CAP=65536 SSE_RUNNER_NPROC=200 \
	SSE_API_KEY=sk-secret-key OPENAI_API_KEY=sk-other HOME="$SB_TMP/home" \
	XDG_CONFIG_HOME="$SB_TMP/home" || bail "daemon did not start again"

# The runner's sandbox: no network but its own loopback, no shared place, no socket of the
# agent's (the agent socket, an abstract socket, a FIFO or socket in a directory the agent
# opened to everyone). A listener on the host's loopback and one on an abstract socket, as
# the agent would start them, show that the routes would work without the sandbox.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -c '
import socket, sys, threading
t = socket.socket(); t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind(("127.0.0.1", int(sys.argv[1]))); t.listen(8)
a = socket.socket(socket.AF_UNIX); a.bind("\0sse-t0300-" + sys.argv[1]); a.listen(8)
open(sys.argv[2], "w").write("up\n")
def serve(s):
    while True:
        c, _ = s.accept(); open(sys.argv[2], "a").write("conn\n"); c.close()
threading.Thread(target=serve, args=(a,), daemon=True).start()
serve(t)' "$port" "$SB_TMP/listener.log" &
lpid=$!
for _ in $(seq 50); do [ -s "$SB_TMP/listener.log" ] && break; sleep 0.1; done
rm -f /tmp/runner-leak /var/tmp/runner-leak /dev/shm/runner-leak
mkdir -p "$D/src/open" "$SB_TMP/open" && chmod 0777 "$D/src/open" "$SB_TMP/open"
printf '%s\n' "$port" >"$D/src/port"
chown "$AGENT_USER" "$D/src/port" "$D/src/open"
ok "$((exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; echo $?)" "reach: control: the host's listener answers outside the sandbox"
setmode reach
r=$(build)
like "$r" 'reach-done' "reach: the check ran"
unlike "$r" 'REACHED|WROTE' "reach: no listener, socket or shared place was reached"
like "$r" '"stdout":"lo \\nreach-done' "reach: its only network interface is loopback"
is "$(grep -c conn "$SB_TMP/listener.log")" 1 "reach: the listeners saw only the control"
ok "$([ ! -e /tmp/runner-leak ] && [ ! -e /var/tmp/runner-leak ] && [ ! -e /dev/shm/runner-leak ] && [ -z "$(ls -A "$D/src/open")" ] && [ -z "$(ls -A "$SB_TMP/open")" ]; echo $?)" \
	"reach: nothing was left in /tmp, /var/tmp, /dev/shm or a directory open to everyone"
kill "$lpid" 2>/dev/null
rm -rf "$D/src/open" "$D/src/port" /tmp/runner-leak /var/tmp/runner-leak /dev/shm/runner-leak

# Checks on hidden material at level 0: the program that runs is the agent's and is given
# the PoC (or runs next to the hidden tests). The agent gets the outcome and, for a PoC, the
# kind of sanitizer report from a fixed list: never the output, however it is encoded.
cat >"$D/bench/scripts/run.sh" <<'EOT'
#!/bin/sh
cat "$1"; base64 "$1"
echo "==1==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x1 $(base64 -w0 "$1")" >&2
cp "$1" "$HOME/carried"; cp "$1" ../carried; cp "$1" ./carried
exit 1
EOT
cat >"$D/bench/scripts/test.sh" <<'EOT'
#!/bin/sh
cat hidden.txt 2>/dev/null; base64 hidden.txt 2>/dev/null; echo tested
[ -f hidden.txt ] && cp hidden.txt "$HOME/carried-hidden" && cp hidden.txt ../carried-hidden
true
EOT
setmode plain
is "$(status agent POST '/tool/bencher?action=build' '{}')" 200 "withheld: a build to run the PoC in"
r=$(req agent POST '/tool/bencher?action=run_poc' '{"poc":"pocs/poc.txt"}')
like "$r" '"withheld":true' "withheld: run_poc's output is withheld from the agent"
like "$r" 'the PoC still reproduces; AddressSanitizer: heap-buffer-overflow' \
	"withheld: the agent learns the outcome and the kind of report"
like "$r" '"code":1,' "withheld: code 1 (reproduces), not the program's own exit status"
unlike "$r" 'duration_ms|exit status' "withheld: nor how long it took or its exit status"
unlike "$r" "crash me|$(printf 'crash me\n' | base64)|0x1" "withheld: no byte of the PoC or of its output, plain or encoded"
r=$(req agent POST '/tool/bencher?action=intent_test' '{}')
like "$r" 'the hidden tests pass' "withheld: intent_test gives the outcome"
unlike "$r" "HIDDEN-TEST-CONTENT|$(printf 'HIDDEN-TEST-CONTENT\n' | base64)|tested" \
	"withheld: and nothing of the hidden tests' output"
# Nor through the runner's files: the PoC and the hidden test, copied into its home and its
# workspaces by those two checks, are gone before the next check whose output the agent gets.
setmode carry
r=$(req agent POST '/tool/bencher?action=build' '{}')
like "$r" 'carry-done' "carry: the next build ran and looked"
unlike "$r" "crash me|HIDDEN-TEST-CONTENT" "carry: nothing a check on hidden material left reaches the next check's output"
like "$(cat "$D/daemon.log")" 'build: the runner starts over' "carry: the daemon says the runner started over"
r=$(req agent POST '/tool/bencher?action=run_poc' '{"poc":"pocs/poc.txt"}')
like "$r" '"withheld":true' "carry: run_poc runs in the new build"
r=$(req agent POST '/tool/bencher?action=function_test' '{}')
unlike "$r" "crash me" "carry: nor the functional tests' output"
r=$(req agent POST '/tool/bencher?action=run_poc' '{"poc":"pocs/poc.txt"}')
like "$r" '"code":-1' "carry: run_poc after that needs a new build (the last one went with the runner's files)"
like "$r" 'the last build was discarded' "carry: and says why"

# Junk a check leaves that cannot be removed the usual way does not stop grading from
# starting (prepare_grading below clears the area for the new session).
setmode junk
like "$(build)" 'junked' "junk: the check left its junk"

# The git configuration planted in the tree ran nothing, through /diff, /files or grading.
setmode plain
r=$(req agent GET /diff)
like "$r" '^200 ' "/diff works on the hostile tree"
like "$r" 'new file mode 120000' "the planted links are diffed as links"
unlike "$r" 'REFERENCE-PATCH-CONTENT' "the diff never holds the linked reference patch"
is "$(status agent GET /files)" 200 "/files works on the hostile tree"
is "$(status admin POST /admin/agent_exited '{}')" 200 "agent_exited"
is "$(status admin POST /prepare_grading '{}')" 200 "prepare_grading on the hostile tree"
like "$(ls -A "$RUNNER_DIR" | grep -v '^\.trash$' | sort | tr '\n' ' ')" "^grading home-[0-9]+ \$" \
	"prepare_grading: the runner's area holds only the new session (what the last one left is put away)"
is "$(ls -A "$RUNNER_DIR/.trash" | wc -l)" 0 "prepare_grading: and removed, the 3000-deep tree and the locked directory too"
unlike "$(cat "$D/results/final.patch")" 'REFERENCE-PATCH-CONTENT' "final.patch holds no linked hidden content"
is "$(ls "$MARK" | grep -c ran-as)" 0 "no hook, filter, fsmonitor or diff driver ran (as any user)"
is "$(stat -c '%U %a' "$D/results/final.patch")" "root 644" "final.patch is written by root"
r=$(req admin POST '/tool/bencher?action=build' '{"grading":true}')
like "$r" '"code":0' "the grading build runs on the patched pristine copy"
r=$(req admin POST '/tool/bencher?action=run_poc' '{"poc":"pocs/poc.txt"}')
like "$r" 'crash me' "withheld: control: grading (the admin socket) gets the PoC run's whole output"
stop_daemon

# The pristine repository may hold the upstream history (a task cloned with it): the
# grading copy holds none of it, at any level.
make_fixture
write_build
printf 'fixed\n' >"$D/repo/fix.c"
git -C "$D/repo" -c user.name=t -c user.email=t@t add -A
git -C "$D/repo" -c user.name=t -c user.email=t@t commit -qm 'UPSTREAM-FIX-IN-HISTORY'
git -C "$D/repo" -c user.name=t -c user.email=t@t reset -q --hard HEAD~1
mkdir -p "$D/repo/sub" && git -C "$D/repo/sub" init -q
setmode history
start_daemon 0 || bail "daemon did not start for the history check"
is "$(status admin POST /admin/agent_exited '{}')" 200 "history: agent_exited"
is "$(status admin POST /prepare_grading '{}')" 200 "history: prepare_grading"
r=$(req admin POST '/tool/bencher?action=build' '{"grading":true}')
like "$r" 'history-done' "history: the grading build ran"
unlike "$r" 'UPSTREAM-FIX-IN-HISTORY|buggy commit|\\n\.git\\n|/\.git\\n' "history: no commit and no .git in the grading copy"
like "$r" 'not a git repository' "history: git finds no repository there"
stop_daemon

# What a check stages for the runner is root's: the agent's code that run.sh runs cannot
# rewrite run.sh while bash is still reading it (the rest of it would become "exit 0"), the
# PoC, or anything else staged.
make_fixture
write_build
cat >"$D/bench/scripts/run.sh" <<'EOT'
#!/bin/bash
sh ./attack "$0" "$1"
echo "run.sh: the PoC still crashes"
exit 1
EOT
cat >"$D/src/attack" <<'EOT'
# The rest of run.sh, past what bash has read, becomes "exit 0" (in place: same file).
{ head -n 2 "$1"; echo 'exit 0'; } >/tmp/run.new
cat /tmp/run.new 2>/dev/null >"$1" && echo "APPENDED $1"
for f in "$1" "$2"; do
	printf 'x' >>"$f" 2>/dev/null && echo "APPENDED $f"
	chmod u+w "$f" 2>/dev/null && echo "CHMOD $f"
	ln -f /dev/null "$f" 2>/dev/null && echo "REPLACED $f"
	rm -f "$f" 2>/dev/null && [ ! -e "$f" ] && echo "REMOVED $f"
done
touch "$(dirname "$1")/planted" 2>/dev/null && echo "PLANTED"
stat -c 'staged %U:%G %a %n' "$1" "$2" "$(dirname "$1")"
EOT
chown "$AGENT_USER" "$D/src/attack"
setmode plain
start_daemon 0 || bail "daemon did not start for the staging check"
is "$(status agent POST '/tool/bencher?action=build' '{}')" 200 "staged: a build"
r=$(req agent POST '/tool/bencher?action=run_poc' '{"poc":"pocs/poc.txt"}')
like "$r" '"code":1' "staged: the PoC check still fails (run.sh could not be rewritten under bash)"
is "$(status admin POST /admin/agent_exited '{}')" 200 "staged: agent_exited"
is "$(status admin POST /prepare_grading '{}')" 200 "staged: prepare_grading"
is "$(status admin POST '/tool/bencher?action=build' '{"grading":true}')" 200 "staged: the grading build"
r=$(req admin POST '/tool/bencher?action=run_poc' '{"poc":"pocs/poc.txt"}')
like "$r" '"code":1' "staged: in grading too"
unlike "$r" 'APPENDED|CHMOD|REPLACED|REMOVED|PLANTED' "staged: no staged file could be changed, replaced or removed, nothing planted"
# (Inside the runner's user namespace root is not mapped: it shows as the overflow user.)
like "$r" "staged (root|nobody):$RUNNER_USER 550 [^ ]*run.sh" "staged: run.sh is root's, 0550"
like "$r" "staged (root|nobody):$RUNNER_USER [46]40 [^ ]*poc.txt" "staged: the PoC is root's, read-only for the runner"
stop_daemon

# While a check on hidden material runs, the agent is stopped: nothing of it can watch the
# runner's processes in /proc, a terminal, the disk; and the check's code writes only to
# what is thrown away (its own /tmp, its HOME and TMPDIR there; the intent workspace).
make_fixture
write_build
cat >"$D/bench/scripts/run.sh" <<'EOT'
#!/bin/bash
echo "HOME=$HOME TMPDIR=$TMPDIR"
for f in ./poc-wrote ../poc-wrote "$HOME/poc-wrote" "$TMPDIR/poc-wrote" "${RUNNER_DIR_HINT}/home-1/poc-wrote"; do
	echo x >"$f" 2>/dev/null && echo "WROTE $f"
done
sleep 1.5
exit 1
EOT
cat >"$D/bench/scripts/test.sh" <<'EOT'
#!/bin/bash
[ -f hidden.txt ] && { echo x >"$HOME/intent-wrote"; echo x >../intent-wrote; } 2>/dev/null
sleep 1.5
EOT
setmode plain
# The agent's processes are in its freezer cgroup, as in a run (src/ssebench/cmd-run.c):
# two heartbeats, one of them a waker (tests/helpers/sb-waker.c) that arms a POSIX timer
# whose signal is SIGCONT, the attack a stop by signals cannot hold (see the end of this
# section).
agent_cgroup_new || bail "no cgroup freezer on this machine"
start_daemon 0 RUNNER_DIR_HINT="$RUNNER_DIR" SSE_AGENT_CGROUP="$AGENT_CG" ||
	bail "daemon did not start for the freeze check"
like "$(cat "$D/daemon.log")" "frozen during checks on hidden material by cgroup $AGENT_CG" \
	"freeze: the daemon holds the agent still with its freezer cgroup"
hb=$SB_TMP/agent-hb hbw=$SB_TMP/agent-waker
: >"$hb" && : >"$hbw" && chown "$AGENT_USER" "$hb" "$hbw"
as_agent_bg bash -c 'while :; do date +%s%3N >>"$1"; sleep 0.02; done' _ "$hb"
hb_pid=$!
as_agent_bg "$SB_BUILDDIR/tests/helpers/sb-waker" "$hbw"
hbw_pid=$!
# FROM_LINE: the longest pause between two heartbeats from that line on, in ms. A pause is
# closed only by the heartbeat's next line: that line may come tens of ms after the agent was
# continued (after the reply), so wait for a line written after now before measuring, or a
# pause still open would not count (this made the check flaky until 2026-12).
# FILE: which heartbeat (default: the bash one).
max_gap() {
	local now i f=${2:-$hb}
	now=$(date +%s%3N)
	for i in $(seq 100); do
		[ "$(tail -n 1 "$f")" -gt "$now" ] 2>/dev/null && break
		sleep 0.02
	done
	tail -n +"$1" "$f" | awk 'NR > 1 && $1 - p > m { m = $1 - p } { p = $1 } END { print m + 0 }'
}
is "$(status agent POST '/tool/bencher?action=build' '{}')" 200 "freeze: a build"
n0=$(wc -l <"$hb")
is "$(status agent POST '/tool/bencher?action=function_test' '{}')" 200 "freeze: control: a functional test (1.5 s)"
g=$(max_gap "$n0")
ok "$([ "$g" -lt 700 ]; echo $?)" "freeze: control: the agent ran on during a check on nothing hidden (longest pause ${g} ms)"
n0=$(wc -l <"$hb") w0=$(wc -l <"$hbw")
r=$(req agent POST '/tool/bencher?action=run_poc' '{"poc":"pocs/poc.txt"}')
like "$r" '"withheld":true' "freeze: run_poc ran (1.5 s)"
g=$(max_gap "$n0")
ok "$([ "$g" -ge 1400 ]; echo $?)" "freeze: the agent was stopped while run_poc ran (longest pause ${g} ms)"
g=$(max_gap "$w0" "$hbw")
ok "$([ "$g" -ge 1400 ]; echo $?)" "freeze: and so was the waker, whose timer sends SIGCONT (longest pause ${g} ms)"
n0=$(wc -l <"$hb") w0=$(wc -l <"$hbw")
r=$(req agent POST '/tool/bencher?action=intent_test' '{}')
like "$r" '"withheld":true' "freeze: intent_test ran (1.5 s)"
g=$(max_gap "$n0")
ok "$([ "$g" -ge 1400 ]; echo $?)" "freeze: and while intent_test ran (longest pause ${g} ms)"
g=$(max_gap "$w0" "$hbw")
ok "$([ "$g" -ge 1400 ]; echo $?)" "freeze: the waker too (longest pause ${g} ms)"
n0=$(wc -l <"$hb")
sleep 0.5
ok "$([ "$(wc -l <"$hb")" -gt $((n0 + 5)) ]; echo $?)" "freeze: the agent goes on afterwards"
# A bash call the agent makes while a check holds it still waits for the end of the check:
# started then, it would be a process of the agent's that nobody stopped. (With the cgroup
# it would also be frozen as it joins; the fallback's control below tests the wait alone.)
bash_during_poc() {
	local poc_req t0 r started
	req agent POST '/tool/bencher?action=run_poc' '{"poc":"pocs/poc.txt"}' >/dev/null &
	poc_req=$!
	sleep 0.4
	t0=$(date +%s%3N)
	r=$(req agent POST /tool/bash '{"command":"date +%s%3N"}')
	wait "$poc_req"
	started=$(printf '%s' "$r" | grep -o '[0-9]\{13\}' | head -n 1)
	ok "$([ -n "$started" ] && [ $((started - t0)) -ge 800 ]; echo $?)" \
		"freeze: $1a bash call made during run_poc starts after it ($((${started:-0} - t0)) ms later)"
}
bash_during_poc ""
# Outside the cgroup, a process of the agent's could watch: the check is refused (500),
# and the agent is not left frozen.
cg=$AGENT_CG AGENT_CG=
as_agent_bg sleep 30
outsider=$! AGENT_CG=$cg
sleep 0.2
is "$(status agent POST '/tool/bencher?action=run_poc' '{"poc":"pocs/poc.txt"}')" 500 \
	"freeze: a process of the agent outside its cgroup: the check is refused"
n0=$(wc -l <"$hb")
sleep 0.3
ok "$([ "$(wc -l <"$hb")" -gt $((n0 + 3)) ]; echo $?)" "freeze: and the agent goes on"
kill "$outsider" 2>/dev/null
is "$(find "$RUNNER_DIR" -name 'poc-wrote' -o -name 'intent-wrote' 2>/dev/null | tr '\n' ' ')" "" \
	"freeze: nothing the hidden checks' code wrote is left in the runner's area"
is "$(status admin POST /admin/agent_exited '{}')" 200 "freeze: agent_exited"
is "$(cat "$AGENT_CG/cgroup.procs")" "" "freeze: agent_exited emptied the agent's cgroup"
kill "$hb_pid" "$hbw_pid" 2>/dev/null
is "$(status admin POST /prepare_grading '{}')" 200 "freeze: prepare_grading"
is "$(status admin POST '/tool/bencher?action=build' '{"grading":true}')" 200 "freeze: the grading build"
r=$(req admin POST '/tool/bencher?action=run_poc' '{"poc":"pocs/poc.txt"}')
like "$r" 'HOME=/tmp TMPDIR=/tmp' "freeze: a PoC's HOME and TMPDIR are the sandbox's own /tmp"
unlike "$r" 'WROTE \.|WROTE /var' "freeze: it can write nowhere in the runner's area (only its /tmp)"
like "$r" 'WROTE /tmp/poc-wrote' "freeze: control: its /tmp is writable"
stop_daemon
agent_cgroup_remove

# Control: without the freezer cgroup the daemon falls back to stopping the agent's uid with
# SIGSTOP, says so in its log, and the waker's timer undoes the stop (what the cgroup is for).
start_daemon 0 || bail "daemon did not start for the freeze control"
like "$(cat "$D/daemon.log")" "no SSE_AGENT_CGROUP: the agent is stopped during checks on hidden material by signals" \
	"freeze: control: without a cgroup the daemon says it stops the agent by signals"
: >"$hbw"
as_agent_bg "$SB_BUILDDIR/tests/helpers/sb-waker" "$hbw"
hbw_pid=$!
is "$(status agent POST '/tool/bencher?action=build' '{}')" 200 "freeze: control: a build"
w0=$(wc -l <"$hbw")
r=$(req agent POST '/tool/bencher?action=run_poc' '{"poc":"pocs/poc.txt"}')
like "$r" '"withheld":true' "freeze: control: run_poc ran"
g=$(max_gap "$w0" "$hbw")
ok "$([ "$g" -lt 700 ]; echo $?)" "freeze: control: stopped by signals, the waker went on during run_poc (longest pause ${g} ms)"
bash_during_poc "stopped by signals, "
kill "$hbw_pid" 2>/dev/null
stop_daemon

# The runner's area full, to the last inode: grading still starts (a new session needs
# no new inode before the old one is gone). On a small file system of its own.
make_fixture
cat >"$D/bench/scripts/build.sh" <<'EOT'
#!/bin/bash
i=0
while : >"f$i" 2>/dev/null; do i=$((i + 1)); done
echo "made $i files"
EOT
chmod 0755 "$D/bench/scripts/build.sh"
if command -v mkfs.ext4 >/dev/null && truncate -s 16M "$SB_TMP/small.img" &&
	mkfs.ext4 -q -N 256 -m 5 -O ^has_journal "$SB_TMP/small.img" &&
	mkdir -p "$RUNNER_DIR" && mount -o loop,nosuid,nodev "$SB_TMP/small.img" "$RUNNER_DIR"; then
	start_daemon 0 || bail "daemon did not start for the inode check"
	r=$(req agent POST '/tool/bencher?action=build' '{}')
	like "$r" 'made [0-9]+ files' "inodes: the build used up the runner's file system's inodes"
	is "$(status admin POST /admin/agent_exited '{}')" 200 "inodes: agent_exited"
	r=$(req admin POST /prepare_grading '{}')
	like "$r" '^200 ' "inodes: prepare_grading still starts a new session and copies the pristine tree"
	stop_daemon
	# A tree too big for the runner's file system: the build's copy fails half-way and
	# leaves directories root made and had not yet handed over; the next session removes
	# them all the same.
	mkdir -p "$D/src/big/in" && head -c 20000000 /dev/zero >"$D/src/big/in/blob" &&
		printf 'big/\n' >>"$D/src/.gitignore" && chown -R "$AGENT_USER" "$D/src/big" "$D/src/.gitignore"
	start_daemon 0 || bail "daemon did not start for the full-copy check"
	r=$(req agent POST '/tool/bencher?action=build' '{}')
	like "$r" '^500 .*could not prepare the build workspace' "full copy: the build's copy of the tree does not fit"
	is "$(status admin POST /admin/agent_exited '{}')" 200 "full copy: agent_exited"
	r=$(req admin POST /prepare_grading '{}')
	like "$r" '^200 ' "full copy: prepare_grading still starts"
	is "$(ls -A "$RUNNER_DIR/.trash" | wc -l)" 0 "full copy: nothing of the failed copy is left"
	stop_daemon
	rm -rf "$D/src/big"
	umount "$RUNNER_DIR" || umount -l "$RUNNER_DIR"
else
	diag "no small loop file system here: the inode check is not tried"
fi

# The grading build's oracle facts: what each object the build made is instrumented with,
# and which sanitizer interface it defines or controls it calls (read as the runner).
make_fixture
cat >"$D/bench/scripts/build.sh" <<'EOT'
#!/bin/bash
set -e
cat >clean.c <<'C'
int clean(int *p) { return p[1]; }
C
cat >hook.c <<'C'
const char *__asan_default_options(void) { return "exitcode=0"; }
int hooked(int *p) { return p[2]; }
C
cat >quiet.c <<'C'
void __sanitizer_set_report_path(const char *);
__attribute__((constructor)) static void quiet(void) { __sanitizer_set_report_path("/dev/null"); }
int loud(int *p) { return p[3]; }
C
cat >plain.c <<'C'
int plain(int *p) { return p[4]; }
C
cat >exempt.c <<'C'
__attribute__((no_sanitize_address)) int exempt(int *p) { return p[5]; }
C
cat >faker.c <<'C'
extern void __asan_init(void) __attribute__((weak));
extern void __asan_report_load4(void *) __attribute__((weak));
void *faker_keep[] = { (void *)__asan_init, (void *)__asan_report_load4 };
int faker(int *p) { return p[6]; }
C
gcc -fsanitize=address -c clean.c hook.c quiet.c exempt.c
gcc -c plain.c faker.c
mkdir -p lib && ar rcs lib/libx.a clean.o plain.o
# A second member of one name (the linker takes the first); a file named like a member.
mkdir -p dup && cp plain.o dup/clean.o && ar q lib/libx.a dup/clean.o
cp plain.o 'lib/libx.a(plain.o)'
# An object hidden from the reader: its type rewritten, an unreadable directory, bitcode.
cp plain.o core.o && printf '\004' | dd of=core.o bs=1 seek=16 conv=notrunc 2>/dev/null
mkdir -p locked && cp plain.o locked/p.o && chmod 000 locked
printf 'BC\300\336rest of a bitcode file' >lto.o
rm -f faker.c
printf '\177ELF garbage that no reader will take for an object' >broken.o
ln -s /etc/passwd linked.o
echo oracle-built
EOT
chmod 0755 "$D/bench/scripts/build.sh"
start_daemon 2 || bail "daemon did not start for the oracle check"
r=$(req agent POST '/tool/bencher?action=build' '{}')
like "$r" '^200 .*oracle-built' "oracle: an agent-side build"
unlike "$r" '"oracle"' "oracle: carries no facts (they are for grading)"
is "$(status admin POST /admin/agent_exited '{}')" 200 "oracle: agent_exited"
is "$(status admin POST /prepare_grading '{}')" 200 "oracle: prepare_grading"
r=$(req admin POST '/tool/bencher?action=build' '{"grading":true}')
echo "${r#* }" >"$SB_TMP/oracle.json"
og() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))["oracle"]; print(eval(sys.argv[2]))' "$SB_TMP/oracle.json" "$1" 2>&1; }
like "$r" 'oracle-built' "oracle: the grading build ran"
is "$(og 'sorted((k, v["asan"], v["checks"]) for k, v in d["objects"].items())')" \
	"[('clean.o', True, True), ('dup/clean.o', False, False), ('exempt.o', True, False), ('faker.o', False, False), ('hook.o', True, True), ('lib/libx.a(clean.o)', True, True), ('lib/libx.a(plain.o)', False, False), ('plain.o', False, False), ('quiet.o', True, True)]" \
	"oracle: each object, plain and in an archive, instrumented, exempted or not; weak references make none instrumented"
is "$(og 'sorted(x["object"] for x in d["duplicates"])')" "['lib/libx.a(clean.o)', 'lib/libx.a(plain.o)']" \
	"oracle: a second archive member of one name and a file named like a member are duplicates"
is "$(og 'sorted(c["symbol"] for c in d["calls"] if c["object"] == "faker.o")')" \
	"['__asan_init (weak reference)', '__asan_report_load4 (weak reference)']" \
	"oracle: weak references to the runtime are named"
is "$(og '[(h["object"], h["symbol"]) for h in d["hooks"]]')" "[('hook.o', '__asan_default_options')]" \
	"oracle: the object that defines a sanitizer hook is named, with the hook"
is "$(og '[(c["object"], c["symbol"]) for c in d["calls"] if c["object"] != "faker.o"]')" "[('quiet.o', '__sanitizer_set_report_path')]" \
	"oracle: the object that calls a sanitizer control is named"
is "$(og 'sorted(d["unreadable"])')" "['broken.o', 'core.o', 'locked', 'lto.o']" \
	"oracle: an ELF file the reader refuses, a core-typed object, an unreadable directory and bitcode are listed; a link is not followed"
stop_daemon

# A support directory only run.sh names (a PoC driver) is for the PoC check alone: a build
# or a test, whose output the agent gets at level 2, cannot read it.
make_fixture
mkdir -p "$D/bench/driver"
printf 'PoC-DRIVER-CONTENT\n' >"$D/bench/driver/drive.c"
cat >"$D/bench/scripts/run.sh" <<EOT
#!/bin/bash
cat $D/bench/driver/drive.c
exit 1
EOT
# The build and the tests look for it by a path they were not given in their text.
cat >"$D/bench/scripts/build.sh" <<'EOT'
#!/bin/bash
cat "$BENCH_HINT"/driver/drive.c 2>&1; ls "$BENCH_HINT"/driver 2>&1; echo build-done
EOT
cp "$D/bench/scripts/build.sh" "$D/bench/scripts/test.sh"
chmod 0755 "$D/bench/scripts/"*.sh
start_daemon 2 BENCH_HINT="$D/bench" || bail "daemon did not start for the driver check"
like "$(cat "$D/daemon.log")" 'support directory shared read-only with the runner: driver \(for run_poc only\)' \
	"driver: the daemon says the directory is for run_poc only"
r=$(req agent POST '/tool/bencher?action=build' '{}')
like "$r" 'build-done' "driver: the build ran"
unlike "$r" 'PoC-DRIVER-CONTENT|\\ndrive\.c' "driver: the build cannot read or list the PoC's driver"
r=$(req agent POST '/tool/bencher?action=function_test' '{}')
unlike "$r" 'PoC-DRIVER-CONTENT|\\ndrive\.c' "driver: nor the functional tests"
is "$(status admin POST /admin/agent_exited '{}')" 200 "driver: agent_exited"
is "$(status admin POST /prepare_grading '{}')" 200 "driver: prepare_grading"
is "$(status admin POST '/tool/bencher?action=build' '{"grading":true}')" 200 "driver: the grading build"
r=$(req admin POST '/tool/bencher?action=run_poc' '{"poc":"pocs/poc.txt"}')
like "$r" 'PoC-DRIVER-CONTENT' "driver: run_poc reads it"
stop_daemon

done_testing

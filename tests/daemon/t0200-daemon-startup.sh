#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# ssebench-daemon start-up and HTTP hygiene: bad difficulty levels stop it (exit 2), bad
# users or task files stop it (exit 1), the sockets get their modes and directories checked,
# and the HTTP layer answers 404/405/413/400/401 without echoing what the client sent.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
. "$SB_SRCDIR/tests/daemon/lib-daemon.sh"

require_daemon_env
plan_lazy

# run_daemon_once [NAME=VALUE...]: start the daemon with the fixture, expect it to exit.
run_daemon_once() {
	timeout 20 env -i PATH=/usr/bin:/bin SSE_BENCH_PATH="$D/bench" SSE_REPO_PATH="$D/repo" \
		SSE_RESULTS="$D/results" SSE_ARCHIVE="$D/archive" SSE_RUNNER_DIR="$RUNNER_DIR" \
		SSE_DAEMON_STATE="$D/state" SSE_DAEMON_SOCKET="$SOCK" \
		SSE_ADMIN_SOCKET="$D/admin/admin.sock" SSE_AGENT_USER="$AGENT_USER" \
		SSE_RUNNER_USER="$RUNNER_USER" SSE_DAEMON_USER="$DAEMON_USER" "$@" "$DAEMON" ${DAEMON_ARGS:-}
}

make_fixture
for bad in -1 5 abc 2.0 " 2" "2 " 0x2 99999999999999999999; do
	run_cmd r run_daemon_once SSE_DIFFICULTY="$bad"
	is "$r_rc" 2 "SSE_DIFFICULTY='$bad' stops the daemon with status 2"
	like "$r_err" "SSE_DIFFICULTY=.* is not a difficulty level" "SSE_DIFFICULTY='$bad' is explained"
done
ok "$([ ! -e "$SOCK" ]; echo $?)" "no socket was created by a daemon that refused to start"

run_cmd r run_daemon_once SSE_RUNNER_USER="$AGENT_USER"
is "$r_rc" 1 "runner user = agent user: refused"
like "$r_err" "must be distinct" "and explained"
run_cmd r run_daemon_once SSE_AGENT_USER=root
is "$r_rc" 1 "agent user root: refused"
run_cmd r run_daemon_once SSE_RUNNER_USER=no-such-user-xyz
is "$r_rc" 1 "a missing runner user: refused"

mv "$D/bench/pocs/poc.txt" "$D/poc.away"
run_cmd r run_daemon_once
is "$r_rc" 1 "a PoC the config names is missing: refused"
like "$r_err" "files.poc\\[0\\]: 'pocs/poc.txt' is not a file" "the missing file is named"
mv "$D/poc.away" "$D/bench/pocs/poc.txt"

printf 'id: daemon-test\nbogus: 1\n' >"$D/bench/config.yaml.bad"
cp "$D/bench/config.yaml" "$D/config.good"
cp "$D/bench/config.yaml.bad" "$D/bench/config.yaml"
run_cmd r run_daemon_once
is "$r_rc" 1 "an invalid task config: refused (no panic)"
like "$r_err" "task config: config.yaml:" "with the config problem located"
cp "$D/config.good" "$D/bench/config.yaml"
rm -f "$D/bench/config.yaml.bad"

# The admin socket's directory must be root's and 0700.
mkdir -p "$D/admin" && chmod 0755 "$D/admin"
run_cmd r run_daemon_once
is "$r_rc" 1 "admin socket directory with mode 0755: refused"
like "$r_err" "has mode 0755, not 0700" "and explained"
chmod 0700 "$D/admin" && chown "$AGENT_USER" "$D/admin"
run_cmd r run_daemon_once
is "$r_rc" 1 "admin socket directory owned by the agent: refused"
rm -rf "$D/admin"

# Support directories: a directory a script names by absolute path is shared read-only with
# the runner, unless it holds hidden material (here pocs/, named too).
mkdir -p "$D/bench/harness" "$D/bench/unnamed"
printf 'int driver;\n' >"$D/bench/harness/driver.c"
printf 'secret\n' >"$D/bench/unnamed/x"
printf '#!/bin/sh\ncc -c %s/harness/driver.c -o /dev/null; ls %s/pocs\necho "poc $1"\n' \
	"$D/bench" "$D/bench" >"$D/bench/scripts/run.sh"
# --task-permissions (the tool layer runs it at image build): the same modes, then exit.
chmod 0755 "$D/bench/harness" "$D/bench/unnamed"
chmod 0644 "$D/bench/harness/driver.c" "$D/bench/unnamed/x"
DAEMON_ARGS=--task-permissions run_cmd r run_daemon_once
is "$r_rc" 0 "--task-permissions: exit 0"
is "$(stat -c '%a %G' "$D/bench/harness" "$D/bench/harness/driver.c" "$D/bench/unnamed" "$D/bench/unnamed/x" | tr '\n' ' ')" \
	"750 $RUNNER_USER 640 $RUNNER_USER 700 root 600 root " "--task-permissions: support directory shared, the rest root-only"
ok "$([ ! -e "$SOCK" ] && [ ! -e "$D/admin/admin.sock" ]; echo $?)" "--task-permissions: no socket, no daemon"
# At run time the root is read-only: modes that are right are left alone (nothing written),
# one that is wrong cannot be fixed and stops the daemon.
if mount --bind "$D/bench" "$D/bench" 2>/dev/null && mount -o remount,bind,ro "$D/bench" 2>/dev/null; then
	DAEMON_ARGS=--task-permissions run_cmd r run_daemon_once
	is "$r_rc" 0 "read-only task files with the right modes: accepted, nothing written"
	umount "$D/bench"
	chmod 0755 "$D/bench/unnamed"
	mount --bind "$D/bench" "$D/bench" && mount -o remount,bind,ro "$D/bench"
	DAEMON_ARGS=--task-permissions run_cmd r run_daemon_once
	is "$r_rc" 1 "read-only task files with a mode too open: refused"
	like "$r_err" "unnamed.*Read-only file system" "and explained"
	umount "$D/bench"
	chmod 0700 "$D/bench/unnamed"
else
	diag "no bind mounts here: the read-only cases are not tried"
fi

# A planted file or link at the agent socket path is replaced, not used.
ln -s /etc/passwd "$SOCK"
start_daemon 2 || bail "daemon did not start"
sock_mode=$(stat -c '%a %U %F' "$SOCK")
is "$sock_mode" "666 root socket" "agent socket: 0666, root, a socket (the planted link is gone)"
is "$(stat -c '%a %U %F' "$D/admin/admin.sock")" "600 root socket" "admin socket: 0600, root"
is "$(stat -c '%a %U' "$D/admin")" "700 root" "admin socket directory: 0700, root"
is "$(stat -c '%a %U %G' "$RUNNER_DIR")" "710 root $RUNNER_USER" "runner directory: 0710 root:runner"
is "$(stat -c '%a %U %G' "$D/bench/diffs/patch.diff")" "600 root root" "reference patch: root-only"
is "$(stat -c '%a %U %G' "$D/bench/scripts/build.sh")" "750 root $RUNNER_USER" "build script: runner's group may run it"
is "$(stat -c '%a %U %G' "$D/bench/scripts/run.sh")" "700 root root" "run script: root-only (it is staged per PoC)"
is "$(stat -c '%a %U %G' "$D/bench/harness")" "750 root $RUNNER_USER" "a support directory a script names: readable by the runner's group"
is "$(stat -c '%a %U %G' "$D/bench/harness/driver.c")" "640 root $RUNNER_USER" "and its files: read-only for that group"
is "$(stat -c '%a %U %G' "$D/bench/pocs")" "700 root root" "a directory holding a PoC stays root-only even when a script names it"
is "$(stat -c '%a %U %G' "$D/bench/unnamed")" "700 root root" "a directory no script names stays root-only"
like "$(cat "$D/daemon.log")" "support directory shared read-only with the runner: harness" "the daemon says what it shared"
ok "$(ps -o user= -p "$(pgrep -P "$daemon_pid" | head -1)" | grep -qv root; echo $?)" "a front runs as a non-root user"

# HTTP hygiene.
r=$(req agent GET /no/such/path)
like "$r" '^404 \{"error":"no such endpoint"\}$' "unknown route: 404 JSON"
r=$(curl -s -m 5 -D - -o /dev/null -X DELETE --unix-socket "$SOCK" http://d/diff)
like "$r" '^HTTP/1.1 405' "wrong method: 405"
like "$r" '^Allow: GET' "405 says which method is allowed"
big=$(head -c 100000 /dev/zero | tr '\0' a)
is "$(status agent POST /tool/bash "{\"command\":\"$big\"}")" 413 "a 100 kB body: 413"
r=$(req agent POST /tool/bash '{"command": "echo SECRET-IN-BODY"')
like "$r" '^400 ' "malformed JSON: 400"
unlike "$r" 'SECRET-IN-BODY' "the 400 does not echo the input"
r=$(req agent POST '/tool/bencher?action=build' '{"grading": "yes", "evil": "ECHO-ME"}')
like "$r" '^400 ' "a body with a wrong type and an unknown key: 400"
unlike "$r" 'ECHO-ME' "and nothing of it is echoed"
is "$(status agent POST '/tool/bencher' '{}')" 400 "bencher without ?action=: 400"
is "$(status agent POST '/tool/bencher?action=frobnicate' '{}')" 500 "unknown bencher action: 500 (as upstream)"
# A value that decodes to a NUL byte is refused, not read up to the NUL (build%00 is not build).
is "$(status agent POST '/tool/bencher?action=build%00' '{}')" 400 "?action=build%00: 400, not a build"
is "$(status agent POST '/tool/bencher?action=build%00run_poc' '{}')" 400 "?action=build%00run_poc: 400"
is "$(status agent GET '/agent/dialog?since=1%00' '')" 400 "?since=1%00: 400"
is "$(status agent POST '/tool/bencher?action=run_poc' '{"poc":"../diffs/patch.diff"}')" 403 "run_poc at level 2: 403 before the PoC is even looked at"
is "$(status admin POST '/tool/bencher?action=run_poc' '{"poc":"../diffs/patch.diff"}')" 500 "run_poc of something that is not a PoC: 500 (admin)"
r=$(req admin POST '/tool/bencher?action=run_poc' '{"poc":"pocs/poc.txt"}')
like "$r" "project hasn't been built yet" "run_poc before any build: code -1 and a hint"

# TCP: the token is required (except /version), compared exactly.
is "$(status tcp GET /version)" 200 "TCP without token: /version still answers"
is "$(status tcp GET /diff)" 401 "TCP without token: /diff refused"
is "$(curl -s -m 5 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer ${TOKEN}x" "http://127.0.0.1:$PORT/diff")" 401 "TCP with a longer token: refused"
is "$(curl -s -m 5 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer ${TOKEN%?}" "http://127.0.0.1:$PORT/diff")" 401 "TCP with a shorter token: refused"
is "$(curl -s -m 5 -o /dev/null -w '%{http_code}' -H "X-SSE-Token: $TOKEN" "http://127.0.0.1:$PORT/diff")" 200 "TCP with X-SSE-Token: accepted"

# The admin socket: root only, twice over (file mode, then SO_PEERCRED).
r=$(setpriv --reuid="$AGENT_USER" --regid="$AGENT_USER" --clear-groups curl -s -m 5 -o /dev/null -w '%{http_code}' --unix-socket "$D/admin/admin.sock" http://d/reference/patch 2>&1)
is "$r" 000 "the agent user cannot even connect to the admin socket"
chmod 0755 "$D/admin" && chmod 0666 "$D/admin/admin.sock"
r=$(setpriv --reuid="$AGENT_USER" --regid="$AGENT_USER" --clear-groups curl -s -m 5 --unix-socket "$D/admin/admin.sock" http://d/reference/patch)
like "$r" 'serves root only' "with the socket opened up by mistake, SO_PEERCRED still refuses a non-root peer"
unlike "$r" 'REFERENCE-PATCH-CONTENT' "and no patch is sent"
chmod 0600 "$D/admin/admin.sock" && chmod 0700 "$D/admin"
stop_daemon

# No token: no TCP listener at all.
start_daemon 2 SSE_DAEMON_TOKEN= || bail "daemon did not start"
is "$(curl -s -m 3 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/version")" 000 "without SSE_DAEMON_TOKEN nothing listens on TCP"
like "$(cat "$D/daemon.log")" "SSE_DAEMON_TOKEN is not set: no TCP listener" "and the log says why"
# The agent may ask for what it may not have as fast as it likes: daemon.log (on the host's
# disk) keeps the first hundred refusals and then one in a thousand.
before=$(grep -c 'refusal' "$D/daemon.log")
codes=$(setpriv --reuid "$AGENT_USER" --regid "$AGENT_USER" --clear-groups \
	curl -s -o /dev/null -w '%{http_code}\n' --unix-socket "$SOCK" -H 'Content-Type: application/json' \
	-X POST --data '{}' 'http://d/tool/bencher?action=run_poc&n=[1-2500]' | sort | uniq -c | tr -s ' ')
is "$codes" " 2500 403" "2500 run_poc at level 2: all 403"
n=$(($(grep -c 'refusal' "$D/daemon.log") - before))
ok "$([ "$n" -ge 100 ] && [ "$n" -le 103 ]; echo $?)" "daemon.log logged $n of them (the first hundred, then each thousandth)"
# The front's own refusals (the reference patch, an admin endpoint) are logged the same way,
# for the answer-seeking scan (docs/running.md), with the path escaped.
before=$(grep -c 'refusal [0-9]*, front' "$D/daemon.log")
codes=$(setpriv --reuid "$AGENT_USER" --regid "$AGENT_USER" --clear-groups \
	curl -s -o /dev/null -w '%{http_code}\n' --unix-socket "$SOCK" \
	'http://d/reference/patch?n=[1-1500]' | sort | uniq -c | tr -s ' ')
is "$codes" " 1500 403" "1500 GET /reference/patch from the agent: all 403"
n=$(($(grep -c 'refusal [0-9]*, front' "$D/daemon.log") - before))
ok "$([ "$n" -ge 100 ] && [ "$n" -le 102 ]; echo $?)" "daemon.log logged $n of the front's refusals"
like "$(grep -m1 'GET /reference/patch' "$D/daemon.log")" '^[-0-9T:.]+Z [a-z-]+: agent GET /reference/patch: 403 .*\(refusal [0-9]+, front\)$' \
	"in the helper's form, which the scan reads"
stop_daemon

# A run's own runner uid (SSE_RUNNER_UID, from the CLI): the scripts run as it; one outside
# the range is refused, not replaced by the passwd entry's.
for bad in 0 5 99999 2000000000 abc -1; do
	run_cmd r run_daemon_once SSE_RUNNER_UID="$bad"
	is "$r_rc" 1 "SSE_RUNNER_UID=$bad: refused"
done
like "$r_err" "SSE_RUNNER_UID='-1'" "and the value is named"
start_daemon 2 SSE_RUNNER_UID=123457 || bail "daemon did not start with SSE_RUNNER_UID"
printf '#!/bin/sh\necho "built by uid $(id -u) gid $(id -g)"\n' >"$D/bench/scripts/build.sh"
like "$(req agent POST '/tool/bencher?action=build' '{}')" 'built by uid 123457 gid [0-9]+' \
	"SSE_RUNNER_UID=123457: the build runs as uid 123457"
stop_daemon

done_testing

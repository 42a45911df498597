#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The command lines `ssebench run` gives the engine, against a stand-in docker client
# (tests/helpers/fake-docker): for a sandbox run, a sidecar run and a reference run with
# open egress, every docker argv, in order, must be the one in tests/integration/golden/run/
# (after the run's random parts are replaced by names). The stand-in leaves a "passed"
# result.json and no isolation record, so each run also shows that such a result is not
# scored. These argvs are the isolation a run
# asks for (read-only root, masks, limits, no-new-privileges, mounts, labels): a change to
# them must be a change someone meant, made by regenerating the files
# (SB_UPDATE_GOLDEN=1) and reading the diff. Also: a sidecar run whose volume cannot be made
# says what it removed without naming a task container that never was.
# Root only: a run's disks are loop mounts. Run ids carry this shell's pid, so that two
# copies of the test (t0400 runs one in a sanitized build) never share a run's cgroup.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (a run's disks are loop mounts)"
command -v mkfs.ext4 >/dev/null 2>&1 || skip_all "needs mkfs.ext4 (e2fsprogs)"

src=$(cd "$SB_SRCDIR" && pwd -P)
golden=$src/tests/integration/golden/run
task=cjson-CVE-2023-53154
result='{"patch_result":{"status":"passed","build_success":true,"pov_total":2,"pov_passed":2,"func_test_success":true}}'
plan_lazy

export SSEBENCH_HOME=$src SSEBENCH_DOCKER=$src/tests/helpers/fake-docker
# The settings a run's argv carries, fixed here rather than read from this machine.
export SSEBENCH_REGISTRY=localhost/ssebench SSEBENCH_CPUS=2 SSEBENCH_MEMORY=8g SSEBENCH_PIDS=4096
unset SSEBENCH_EGRESS SSEBENCH_RUNTIME SSEBENCH_DISK SSEBENCH_MODE
tmp=$(cd "$SB_TMP" && pwd -P)

# scenario NAME SETTING... -- ARGS...: run `ssebench run ARGS` with the fake's SETTINGs
# (FAKE_*=value), its docker argvs in
# $tmp/NAME.argv (normalised), its stdout and stderr in NAME.out and NAME.err, its exit
# status in NAME.rc.
scenario() {
	local name=$1 res=$tmp/res-$1
	local envs=() e
	shift
	while [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	shift
	mkdir -p "$res" "$tmp/cfg-$name"
	{
		printf 'FAKE_DOCKER_LOG=%q\n' "$tmp/$name.argv"
		for e in ${envs[@]+"${envs[@]}"}; do printf '%s=%q\n' "${e%%=*}" "${e#*=}"; done
	} >"$tmp/cfg-$name/fake.env"
	: >"$tmp/$name.argv"
	DOCKER_CONFIG=$tmp/cfg-$name SSEBENCH_RESULTS=$res \
		"$SSEBENCH" run "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" </dev/null
	echo $? >"$tmp/$name.rc"
	# What differs from one run to the next, and from one host to another: the masks over
	# the activity counters name the block devices and file systems this kernel shows (one
	# line, "MASKS", stands for them; the /proc/diskstats mask, on every host, stays), and
	# the freezer is where this host's cgroup hierarchy has it.
	awk '/^\[--mount\]$/ { held = $0; next }
		held != "" && /^\[type=tmpfs,dst=\/(sys|proc)\/.*tmpfs-size=4096,tmpfs-mode=0555\]$/ {
			if (!masks++) print "[MASKS]"
			held = ""; next }
		held != "" { print held; held = "" }
		/^=== docker$/ { masks = 0 }
		{ print }' "$tmp/$name.argv" >"$tmp/$name.argv.1" && mv "$tmp/$name.argv.1" "$tmp/$name.argv"
	sed -i -E -e "s|$tmp|/TMP|g" -e "s|$src|/SRC|g" \
		-e 's|source=/sys/fs/cgroup/[^,]*/ssebench/|source=CGROUP/|' \
		-e "s/t$$x([0-9])/t\\1/g" \
		-e 's/SSE_RUNNER_UID=[0-9]+/SSE_RUNNER_UID=N/' \
		-e 's/sse-int[0-9a-f]{8}/sse-intX/g' \
		-e 's/build-[A-Za-z0-9]{6}/build-X/g' \
		-e 's/20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z/TIME/g' "$tmp/$name.argv"
}

# golden NAME: the argvs of scenario NAME are the golden ones (or become them).
golden() {
	if [ "${SB_UPDATE_GOLDEN:-0}" = 1 ]; then
		mkdir -p "$golden"
		cp "$tmp/$1.argv" "$golden/$1.argv"
	fi
	if diff -u "$golden/$1.argv" "$tmp/$1.argv" >"$tmp/$1.diff" 2>&1; then
		ok 0 "$1: the docker command lines are the golden ones"
	else
		ok 1 "$1: the docker command lines are the golden ones"
		diag "$(head -60 "$tmp/$1.diff")"
	fi
}

scenario sandbox FAKE_RESULT="$result" -- --task $task --agent dummy --run-id "t$$x1" --images-ready
is "$(cat "$tmp/sandbox.rc")" 1 "sandbox: a \"passed\" result without an isolation record is not scored (exit 1)"
golden sandbox

scenario sidecar FAKE_RESULT="$result" -- --task $task --agent dummy --run-id "t$$x2" \
	--images-ready --mode sidecar
is "$(cat "$tmp/sidecar.rc")" 1 "sidecar: a \"passed\" result without an isolation record is not scored (exit 1)"
golden sidecar

scenario reference FAKE_RESULT="$result" -- --task $task --agent reference --run-id "t$$x3" \
	--images-ready --egress open --difficulty 3 --timeout 100
is "$(cat "$tmp/reference.rc")" 1 "reference, open egress: a \"passed\" result without an isolation record is not scored (exit 1)"
golden reference

# The properties the golden files hold, said once more so a regenerated file cannot drop
# them unnoticed.
run_argv=$(awk '/^=== docker/ { n++ } n && prev == "[run]" && /^\[--sig-proxy=false\]/ { p = n } { prev = $0; a[n] = a[n] $0 "\n" } END { printf "%s", a[p] }' "$tmp/sandbox.argv")
like "$run_argv" '^\[--read-only\]$' "sandbox: the run container's root is read-only"
like "$run_argv" '^\[no-new-privileges\]$|^\[no-new-privileges:true\]$' "sandbox: no new privileges"
like "$run_argv" '^\[--pids-limit\]$' "sandbox: a pids limit"
unlike "$run_argv" 'reference' "sandbox: nothing of the reference is mounted in a dummy run"
like "$(cat "$tmp/reference.argv")" '/reference/patch.diff' "reference: the fix is mounted for the reference agent"

# A sidecar run whose socket volume cannot be made: an error, and the message names no task
# container (there was none: the message said "(null)" before).
scenario volfail FAKE_VOLFAIL=1 -- --task $task --agent dummy --run-id "t$$x4" --images-ready \
	--mode sidecar
ok "$([ "$(cat "$tmp/volfail.rc")" != 0 ]; echo $?)" "sidecar, the volume cannot be made: the run fails"
unlike "$(cat "$tmp/volfail.err")" '\(null\)' "and no message names a container that was never started"
like "$(cat "$tmp/volfail.err")" "removed the run's volumes \(no task container was started\)" \
	"it says what it removed"

# An agent that fills its archive so that the host's copy of it would take the last of the
# results file system: the copy stops where the room other runs' disks were promised and
# this run's result needs begins; what does not fit is left behind and counted, and the run
# has its result. Before, the copy ran into ENOSPC and left half a file; the result was
# still written, but only because this run's own disks are released before it (their room
# comes back): a run whose disks stay, or another run's disk growing meanwhile, found none.
# Seen failing checks 17 and 18 with the budget replaced by the plain 8 GiB cap.
# The results are on a small tmpfs of their own: the disks' room (2 x 256 MiB and 1 GiB)
# and 100 MiB; the "container" leaves 200 MiB in the archive, then fills the file system
# up to 150 MiB free, as other runs would.
small=$tmp/small
mkdir -p "$small/res"
if mount -t tmpfs -o size=1636m,mode=0755 sse-t0165 "$small"; then
	mkdir -p "$small/res"
	mkdir -p "$tmp/cfg-full"
	{
		printf 'FAKE_DOCKER_LOG=%q\n' "$tmp/full.argv"
		printf 'FAKE_RESULT=%q\nFAKE_ARCHIVE_MB=200\nFAKE_LEAVE_MB=150\n' "$result"
	} >"$tmp/cfg-full/fake.env"
	DOCKER_CONFIG=$tmp/cfg-full SSEBENCH_RESULTS=$small/res SSEBENCH_DISK=256m \
		"$SSEBENCH" run --task $task --agent dummy --run-id "t$$x5" --images-ready \
		>"$tmp/full.out" 2>"$tmp/full.err" </dev/null
	echo $? >"$tmp/full.rc"
	run_dir=$small/res/$task/none/dummy/t$$x5
	is "$(cat "$tmp/full.rc")" 1 "an archive the results cannot hold: the run ends as it would (not scored here)"
	ok "$([ -s "$run_dir/summary.json" ] && [ -s "$run_dir/result.json" ]; echo $?)" \
		"and its result and summary are written"
	like "$(cat "$tmp/full.out" "$tmp/full.err")" 'the archive: 1 entry left behind' \
		"the file that did not fit is left behind, and that is said"
	ok "$([ ! -e "$run_dir/archive/big" ]; echo $?)" "and it is not in the run's archive"
	umount -l "$small"
else
	ok 1 "a tmpfs for the results (mount -t tmpfs)"
fi

done_testing

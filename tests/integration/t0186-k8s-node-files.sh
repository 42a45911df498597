#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `ssebench k8s node-files DIR`: the node's copy of the run's seccomp profile and the list of
# counter paths its runtime handler masks (docs/kubernetes.md, "The local cluster"). Both
# files parse; masks.json holds /proc/diskstats and every directory a run container masks
# on this machine, found here a second way (the shell's find, over the list in
# src/libsb/counters.c) rather than through the code under test; mode 0644; a second run
# replaces the files; operands are checked.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

command -v jq >/dev/null 2>&1 || bail "needs jq (scripts/setup installs it)"
plan_lazy

out=$SB_TMP/node/sub
run_cmd r "$SSEBENCH" k8s node-files "$out"
is "$r_rc:$r_err" "0:" "node-files exits 0, silently, and makes the missing directory"

jq -e 'type == "object" and .defaultAction == "SCMP_ACT_ALLOW"
	and (.architectures | length > 0)
	and ([.syscalls[].names[]] | index("bpf") != null and index("unshare") == null
		and index("mount") == null)' \
	"$out/seccomp.json" >/dev/null
ok $? "seccomp.json is Docker's profile format: allow by default, bpf denied, unshare and mount allowed"

jq -e 'type == "array" and length > 0 and all(.[]; type == "string" and startswith("/"))' \
	"$out/masks.json" >/dev/null
ok $? "masks.json is a non-empty array of absolute paths"
masks=$(jq -r '.[]' "$out/masks.json")

# /proc/diskstats is on every Linux /proc as a regular file.
if [ -f /proc/diskstats ]; then
	like "$masks" '^/proc/diskstats$' "masks.json holds /proc/diskstats"
fi

# What sb_counter_masked_dirs gives, computed again: the listed directories that exist (not
# as a link), each "block" directory below /sys/devices (not below a listed one, not
# followed through links), and each directory of /sys/fs but cgroup.
listed=$(sed -n '/^const char \*const sb_counter_dirs\[\] = {/,/NULL/p' "$SB_SRCDIR/src/libsb/counters.c" |
	sed -n 's/^[[:space:]]*"\([^"]*\)",.*$/\1/p')
[ -n "$listed" ] || bail "could not read sb_counter_dirs from src/libsb/counters.c"
want=$(
	for d in $listed; do
		[ -d "$d" ] && [ ! -L "$d" ] && printf '%s\n' "$d"
	done
	find /sys/devices -maxdepth 25 -type d -name block -prune -print 2>/dev/null
	find /sys/fs -mindepth 1 -maxdepth 1 -type d ! -name cgroup -print 2>/dev/null
)
missing=$(printf '%s\n' "$want" | sort -u | grep -vxF -f <(printf '%s\n' "$masks") || true)
is "$missing" "" "masks.json holds every counter directory of this machine ($(printf '%s\n' "$want" | sort -u | grep -c .))"
# And nothing that is not there: every path exists, a directory or a regular file.
absent=$(while read -r p; do [ -d "$p" ] || [ -f "$p" ] || printf '%s\n' "$p"; done <<<"$masks")
is "$absent" "" "every path in masks.json exists here"

is "$(stat -c %a "$out/seccomp.json"):$(stat -c %a "$out/masks.json")" "644:644" "both files are 0644"

# Replaced, not appended to: a stale file is overwritten whole, and no temporary is left.
printf 'stale' >"$out/masks.json"
run_cmd r "$SSEBENCH" k8s node-files "$out"
jq -e 'type == "array"' "$out/masks.json" >/dev/null
ok $? "a second run replaces masks.json"
is "$(find "$out" -mindepth 1 | sort | sed "s|^$out/||" | paste -sd' ')" "masks.json seccomp.json" \
	"nothing but the two files in DIR"

run_cmd r "$SSEBENCH" k8s node-files
is "$r_rc" 2 "no DIR: a usage error"
run_cmd r "$SSEBENCH" k8s node-files "$out" extra
is "$r_rc" 2 "two operands: a usage error"
like "$r_err" "unexpected argument 'extra'" "the extra operand is named"
printf 'x' >"$SB_TMP/file"
run_cmd r "$SSEBENCH" k8s node-files "$SB_TMP/file"
is "$r_rc" 1 "DIR that is a file: exit 1"
like "$r_err" '^ssebench: error: ' "with an error message"

done_testing

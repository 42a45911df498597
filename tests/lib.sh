# SPDX-License-Identifier: Apache-2.0
# tests/lib.sh: TAP helpers shared by every shell suite (integration, docker, e2e, ...).
#
# Each test script sources this file, calls `plan N` (or `plan_lazy` and `done_testing`),
# then reports each named check with `ok`, `is`, `like` or `unlike`. automake's tap-driver
# turns the TAP stream into PASS/FAIL/SKIP lines and totals.
#
# A suite that cannot get what it needs (Docker, root) calls `skip_all REASON`: that prints
# the TAP form of "exit 77" (`1..0 # SKIP`), so automake counts the script as SKIP. When
# SSEBENCH_REQUIRE_DOCKER=1 (CI), `skip_all` bails out instead, so a skip becomes an ERROR.

set -u

: "${SB_BUILDDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${SB_SRCDIR:=$SB_BUILDDIR}"
SSEBENCH=${SSEBENCH:-$SB_BUILDDIR/ssebench}

_tap_n=0
_tap_failed=0
_tap_lazy=0

# plan N: announce N checks.
plan() {
	printf '1..%d\n' "$1"
}

# plan_lazy: the plan is printed by done_testing, after the checks.
plan_lazy() {
	_tap_lazy=1
}

done_testing() {
	if [ "$_tap_lazy" = 1 ]; then
		printf '1..%d\n' "$_tap_n"
	fi
	[ "$_tap_failed" = 0 ]
}

# diag MSG...: a comment line in the TAP stream (kept in the test's .log).
diag() {
	printf '%s\n' "$*" | sed 's/^/# /'
}

# ok STATUS DESC: STATUS 0 passes (use `ok $? "desc"` after a command).
ok() {
	_tap_n=$((_tap_n + 1))
	if [ "$1" -eq 0 ]; then
		printf 'ok %d - %s\n' "$_tap_n" "$2"
	else
		_tap_failed=$((_tap_failed + 1))
		printf 'not ok %d - %s\n' "$_tap_n" "$2"
	fi
}

# is GOT WANT DESC: string equality, with both values shown on failure.
is() {
	if [ "$1" = "$2" ]; then
		ok 0 "$3"
	else
		ok 1 "$3"
		diag "got:  '$1'" "want: '$2'"
	fi
}

# like GOT PATTERN DESC: GOT contains a line matching the extended regex PATTERN.
like() {
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then
		ok 0 "$3"
	else
		ok 1 "$3"
		diag "no line matches /$2/ in:" "$1"
	fi
}

# unlike GOT PATTERN DESC: no line of GOT matches PATTERN.
unlike() {
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then
		ok 1 "$3"
		diag "a line matches /$2/ in:" "$1"
	else
		ok 0 "$3"
	fi
}

# skip_all REASON: the whole script is skipped (TAP's equivalent of exit 77), unless the
# environment requires Docker, in which case the skip is an error.
skip_all() {
	if [ "${SSEBENCH_REQUIRE_DOCKER:-0}" = 1 ]; then
		printf 'Bail out! required but unavailable: %s\n' "$1"
		exit 1
	fi
	printf '1..0 # SKIP %s\n' "$1"
	exit 0
}

# bail MSG: abort the script; automake reports ERROR.
bail() {
	printf 'Bail out! %s\n' "$*"
	exit 1
}

# run_cmd VAR_PREFIX CMD...: run CMD, store stdout in ${PREFIX}_out, stderr in
# ${PREFIX}_err and the exit status in ${PREFIX}_rc. Never aborts the script.
run_cmd() {
	_p=$1
	shift
	_o=$(mktemp) _e=$(mktemp)
	"$@" >"$_o" 2>"$_e"
	eval "${_p}_rc=\$?"
	eval "${_p}_out=\$(cat \"\$_o\")"
	eval "${_p}_err=\$(cat \"\$_e\")"
	rm -f "$_o" "$_e"
}

# SB_TMP: a scratch directory for this script, removed when it exits. A script that needs
# more cleanup defines sb_cleanup_hook, which runs first.
SB_TMP=$(mktemp -d "${TMPDIR:-/tmp}/sbtest.XXXXXX")
# More scratch places a library of the tests makes outside SB_TMP, removed with it.
SB_CLEANUP_PATHS=()
_sb_cleanup() {
	if command -v sb_cleanup_hook >/dev/null 2>&1; then
		sb_cleanup_hook
	fi
	# A run the script interrupted may have left its file system mounted below the results
	# (<results>/.disks/<id>/mnt): unmount first, so rm never walks into one.
	if [ "$(id -u)" = 0 ] && command -v findmnt >/dev/null 2>&1; then
		findmnt -rn -o TARGET 2>/dev/null | grep -E "^($SB_TMP${SB_CLEANUP_PATHS[*]+|$(printf '%s|' "${SB_CLEANUP_PATHS[@]}" | sed 's/|$//')})/" |
			sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
	fi
	rm -rf --one-file-system "$SB_TMP" ${SB_CLEANUP_PATHS[@]+"${SB_CLEANUP_PATHS[@]}"}
}
trap _sb_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The unit and integration suites again, in a build of this tree with AddressSanitizer
# (LeakSanitizer included) and UndefinedBehaviorSanitizer (gcc: --enable-asan
# --enable-ubsan, every report fatal). The tree is copied (the files git knows of, and new
# ones it does not ignore) to .sanitized/ in the build directory, configured and built
# there. Each suite's result is one line here; and since a test may not look at the exit
# status or the stderr of every program it runs, the sanitizers write their reports to
# files, and one is a failure whatever the test said.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

if [ "${SB_SANITIZED:-nono}" != nono ]; then
	# Not skip_all: under SSEBENCH_REQUIRE_DOCKER that would fail the sanitized build itself.
	printf '1..0 # SKIP this build has sanitizers already (it is the sanitized build, or one like it)\n'
	exit 0
fi
[ -n "${SB_SANITIZED_TESTS:-}" ] || bail "SB_SANITIZED_TESTS is not set (run through make check)"
command -v git >/dev/null || skip_all "git is needed to copy the tree"
git -C "$SB_SRCDIR" rev-parse --git-dir >/dev/null 2>&1 || skip_all "the source tree is not a git checkout"

tree=$SB_BUILDDIR/.sanitized
reports=$tree/.reports
n=$(printf '%s\n' $SB_SANITIZED_TESTS | wc -l)
plan $((n + 3))

# The tree as it is now, uncommitted changes included; the previous copy's objects are kept
# where their sources did not change (make rebuilds what did).
# A file the tree no longer has (removed or renamed since the last copy) goes from the copy too,
# or the copy's suites would see sources that are gone (t0190 reads every file).
mkdir -p "$tree"
(cd "$SB_SRCDIR" && git ls-files -z --cached --others --exclude-standard |
	while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done) | sort -z >"$tree/.files.new"
[ -f "$tree/.files" ] && comm -z -23 "$tree/.files" "$tree/.files.new" | (cd "$tree" && xargs -0 -r rm -f --)
mv "$tree/.files.new" "$tree/.files"
(cd "$SB_SRCDIR" && tar --null -T "$tree/.files" -cf -) | tar -xf - -C "$tree" --keep-newer-files 2>/dev/null
log=$tree/.build.log
# A make of its own: the outer one's MAKEFLAGS carry its command line (TESTS=... among it),
# which would win over ours.
unset MAKEFLAGS MFLAGS MAKELEVEL
(
	cd "$tree" &&
		{ [ -x configure ] || ./autogen.sh; } &&
		{ [ -f Makefile ] || ./configure --enable-werror --enable-asan --enable-ubsan; } &&
		make -j"$(nproc)"
) >"$log" 2>&1
rc=$?
ok "$rc" "the tree builds with ASan and UBSan ($tree)"
[ "$rc" = 0 ] || diag "$(tail -20 "$log")"

rm -rf "$reports"
mkdir -p "$reports"
# log_path: each process's report goes to a file of its own; the exit status stays the
# sanitizers' own (1), so a test that checks it fails as well.
(
	cd "$tree" &&
		ASAN_OPTIONS="log_path=$reports/asan:detect_leaks=1:abort_on_error=0" \
			UBSAN_OPTIONS="log_path=$reports/ubsan:print_stacktrace=1:halt_on_error=1" \
			make check TESTS="$SB_SANITIZED_TESTS"
) >"$tree/.check.log" 2>&1
for t in $SB_SANITIZED_TESTS; do
	trs=$tree/${t%.sh}.trs
	if [ ! -f "$trs" ]; then
		ok 1 "$t under the sanitizers (no result: see $tree/.check.log)"
		continue
	fi
	pass=$(grep -c '^:test-result: PASS' "$trs")
	bad=$(grep -c '^:test-result: \(FAIL\|ERROR\|XPASS\)' "$trs")
	ok "$([ "$bad" = 0 ]; echo $?)" "$t under the sanitizers ($pass passed, $bad failed)"
	[ "$bad" = 0 ] || diag "$(grep -h -B2 -A8 '^not ok' "$tree/${t%.sh}.log" 2>/dev/null | head -30)"
done
found=$(find "$reports" -type f | sort)
is "$found" "" "no sanitizer report was written"
for f in $(printf '%s\n' "$found" | head -3); do
	diag "$f:"
	diag "$(head -25 "$f")"
done
grep -q '^# TOTAL:' "$tree/.check.log"
ok $? "the sanitized suites ran to their summary"

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# docs/limits.md is what tools/limits-doc prints from the constants (docs/integrity.md,
# "Resource limits": the documented limits cannot drift from the enforced ones), and every constant
# of sb/limits.h is in it. A stale page fails here: run `make update-limits-doc`.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

gen=$SB_BUILDDIR/tools/limits-doc
[ -x "$gen" ] || bail "no $gen (make builds it)"
plan_lazy

"$gen" >"$SB_TMP/limits.md"
ok $? "tools/limits-doc runs"
if diff -u "$SB_SRCDIR/docs/limits.md" "$SB_TMP/limits.md" >"$SB_TMP/diff"; then
	ok 0 "docs/limits.md is current"
else
	diag "$(head -40 "$SB_TMP/diff")"
	ok 1 "docs/limits.md is current (run: make update-limits-doc)"
fi

"$gen" --names >"$SB_TMP/names"
missing=
for m in $(sed -n 's/^#define \(SB_[A-Z0-9_]*\)[[:space:]].*/\1/p' "$SB_SRCDIR/include/sb/limits.h"); do
	grep -qx "$m" "$SB_TMP/names" || missing="$missing $m"
done
is "$missing" "" "every constant of include/sb/limits.h is documented"

# The page shows the defaults Docker is given, and says what a bad value does.
like "$(cat "$SB_TMP/limits.md")" '`SSEBENCH_MEMORY` \| `--memory` \| `8g` \| `8589934592`' "memory: default and its Docker form"
like "$(cat "$SB_TMP/limits.md")" '`SSEBENCH_PIDS` \| `--pids-limit` \| `4096`' "pids: default"
like "$(cat "$SB_TMP/limits.md")" 'a bad value never$' "the fallback rule is stated"

run_cmd r "$gen" extra
is "$r_rc" 2 "an unknown argument is refused (exit 2)"
done_testing

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Apply /reference/patch.diff to the task's source tree, as the agent user.
set -eu
patch=/reference/patch.diff
cd "${SSE_SOURCE:?SSE_SOURCE is not set}"
[ -r "$patch" ] || { echo "reference agent: $patch is not there" >&2; exit 2; }
if git apply --check --binary "$patch" 2>/dev/null; then
	git apply --binary "$patch"
else
	patch -p1 --forward --batch <"$patch"
fi
echo "reference agent: applied $(grep -c '^diff \|^--- ' "$patch") file headers from $patch"
git status --short

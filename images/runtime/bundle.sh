#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bundle.sh PREFIX: make the programs in PREFIX/bin independent of the system they run on.
# Every shared library they load (transitively, as ldd resolves it here) is copied to
# PREFIX/lib together with the dynamic loader; each program gets that loader as its
# interpreter and, like each library, PREFIX/lib as its RUNPATH. The case image's own
# libraries are then never used by the runtime (and the runtime never needs them).
set -eu
prefix=$1
lib=$prefix/lib
mkdir -p "$lib"
loader=
for bin in "$prefix"/bin/*; do
	# ldd prints "name => /path (addr)" and, for the loader, "/path (addr)".
	ldd "$bin" | awk '/=> \// { print $3 } /^\t\// { print $1 }' | while read -r so; do
		cp -L "$so" "$lib/"
	done
done
for so in "$lib"/ld-linux*.so*; do
	loader=$so
done
[ -n "$loader" ] || { echo "bundle.sh: no dynamic loader found" >&2; exit 1; }
for so in "$lib"/*.so*; do
	[ "$so" = "$loader" ] && continue
	patchelf --set-rpath "$lib" "$so"
done
for bin in "$prefix"/bin/*; do
	patchelf --set-interpreter "$loader" --set-rpath "$lib" "$bin"
done
# A self-check: every program starts with nothing but the bundle.
for bin in "$prefix"/bin/*; do
	env -i "$bin" --version >/dev/null
done
echo "bundle.sh: $(ls "$lib" | wc -l) libraries bundled in $lib"

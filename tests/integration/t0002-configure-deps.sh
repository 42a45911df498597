#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# ./configure stops when a library is missing and names the Debian package to install.
# Each library is hidden in turn: pkg-config sees a copy of the system's .pc files without
# it. configure runs in a scratch copy of its inputs (the checkout itself is configured).
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

command -v pkg-config >/dev/null || skip_all "no pkg-config"
plan_lazy

src=$SB_TMP/src
mkdir -p "$src/src/ssebench"
cp "$SB_SRCDIR/configure" "$SB_SRCDIR/Makefile.in" "$SB_SRCDIR/config.h.in" "$src/"
cp -r "$SB_SRCDIR/build-aux" "$src/"
touch "$src/src/ssebench/main.c"
pcdirs=$(pkg-config --variable pc_path pkg-config | tr ':' ' ')

# One full run fills a cache of the compiler checks; each later run gets that cache without
# any pkg-config result (pkg_cv_*), so each library is really looked for again.
run_cmd r env -C "$src" ./configure -q -C
ok "$r_rc" "configure succeeds with every library present"
sed -i '/pkg_cv_/d; /ac_cv_env_PKG_CONFIG/d' "$src/config.cache"

# module Debian-package
for pair in libcurl:libcurl4-openssl-dev jansson:libjansson-dev yaml-0.1:libyaml-dev \
	libgit2:libgit2-dev libmicrohttpd:libmicrohttpd-dev libcap:libcap-dev \
	libseccomp:libseccomp-dev check:check; do
	mod=${pair%%:*} pkg=${pair#*:}
	pc=$SB_TMP/pc-$mod
	mkdir -p "$pc"
	for d in $pcdirs; do
		[ -d "$d" ] && find "$d" -maxdepth 1 -name '*.pc' -exec cp {} "$pc/" \;
	done
	rm -f "$pc/$mod.pc"
	cp "$src/config.cache" "$src/run.cache"
	run_cmd r env -C "$src" PKG_CONFIG_LIBDIR="$pc" PKG_CONFIG_PATH= ./configure -q \
		--cache-file=run.cache
	ok "$([ "$r_rc" != 0 ]; echo $?)" "configure fails without $mod"
	like "$r_err" "apt-get install $pkg" "and names the Debian package $pkg"
	rm -rf "$pc"
done

done_testing

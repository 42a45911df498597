#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# make install: the programs, the home, the man pages and the completions, and an installed
# ssebench that works once its build tree is gone (docs/cli.md, "Installing"). The tree is
# copied (git's files and new ones it does not ignore, as t0400 does), built with a prefix of
# its own under the test's directory, installed, and removed.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

if [ "${SB_SANITIZED:-nono}" != nono ]; then
	printf '1..0 # SKIP the sanitized build does not install\n'
	exit 0
fi
command -v git >/dev/null || skip_all "git is needed to copy the tree"
git -C "$SB_SRCDIR" rev-parse --git-dir >/dev/null 2>&1 || skip_all "the source tree is not a git checkout"

plan_lazy

tree=$SB_TMP/tree prefix=$SB_TMP/prefix stage=$SB_TMP/stage
mkdir -p "$tree"
(cd "$SB_SRCDIR" && git ls-files -z --cached --others --exclude-standard |
	while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
	grep -zv '^tests/fuzz/corpus/' | tar --null -T - -cf -) | tar -xf - -C "$tree"
# What a careless or hostile tree could hold: a set-id, world-writable file and a link out.
printf 'x\n' >"$tree/agents/planted" && chmod 4777 "$tree/agents/planted"
ln -s /etc/passwd "$tree/agents/link-out"
unset MAKEFLAGS MFLAGS MAKELEVEL
(
	cd "$tree" && ./autogen.sh && ./configure --prefix="$prefix" && make -j"$(nproc)" &&
		make install && make install DESTDIR="$stage"
) >"$SB_TMP/build.log" 2>&1
rc=$?
ok "$rc" "the tree builds and installs (prefix $prefix, and DESTDIR)"
[ "$rc" = 0 ] || { diag "$(tail -30 "$SB_TMP/build.log")"; done_testing; exit 1; }

# What went where, in the staged install as packagers see it.
for f in bin/ssebench share/man/man1/ssebench.1 share/man/man1/ssebench-runs.1 \
	share/bash-completion/completions/ssebench share/zsh/site-functions/_ssebench \
	share/ssebench/VERSION share/ssebench/datasets/pilot share/ssebench/images/runtime/Dockerfile \
	share/ssebench/agents/dummy/agent.yaml share/ssebench/models share/ssebench/src/ssebench/main.c; do
	ok "$([ -e "$stage$prefix/$f" ]; echo $?)" "installed: $f"
done
ok "$([ ! -e "$stage$prefix/share/ssebench/tests/fuzz/corpus" ]; echo $?)" "the fuzz corpora stay behind"
ok "$([ ! -e "$stage$prefix/share/ssebench/ssebench" ] && [ -z "$(find "$stage$prefix/share/ssebench" -name '*.o' | head -1)" ]; echo $?)" \
	"no build output in the home"

bad=$(find "$stage$prefix/share/ssebench" \( -perm /022 -o -perm /6000 -o -type l -o ! \( -type f -o -type d \) \) -print | head -5)
is "$bad" "" "the installed home holds nothing writable by others, set-id, a link or a special file"
is "$(stat -c %a "$stage$prefix/share/ssebench/agents/planted" 2>&1)" 755 "a planted 4777 file is installed 0755"

# The build tree goes; the installed ssebench still finds its home.
rm -rf "$tree"
cd "$SB_TMP" || bail "cd"
run_cmd r env -u SSEBENCH_HOME "$prefix/bin/ssebench" --help
is "$r_rc" 0 "installed ssebench --help: exit 0"
like "$r_out" '^usage: ssebench' "installed ssebench --help: the usage"
run_cmd r env -u SSEBENCH_HOME "$prefix/bin/ssebench" tasks list
is "$r_rc" 0 "installed ssebench tasks list: exit 0, with the build tree gone"
like "$r_out" 'cjson-CVE-2023-53154 +c +cJSON' "installed ssebench tasks list: the installed home's pilot"
run_cmd r env -u SSEBENCH_HOME "$prefix/bin/ssebench" dataset validate --local "$prefix/share/ssebench/datasets/pilot"
is "$r_rc" 0 "the installed pilot dataset is valid"
run_cmd r env -u SSEBENCH_HOME "$prefix/bin/ssebench" agents list
like "$r_out" '^dummy ' "installed ssebench agents list: the installed agents"
if command -v man >/dev/null; then
	run_cmd r env MANPATH="$prefix/share/man" man -P cat ssebench-runs
	like "$r_out" 'ssebench runs exec' "man ssebench-runs finds the installed page"
fi

done_testing

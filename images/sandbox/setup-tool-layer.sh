#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# setup-tool-layer.sh SOURCE_DIR: run once, as root, when the tool layer is built on a
# case image. What it does keeps the answer out of the agent's reach (docs/images.md, "Tool
# layer"; docs/integrity.md, "Inside a run (images, entrypoint, evaluator)"):
#   1. the source as the case image built it goes to /ssebench-repo, root-only (0700);
#   2. the user `model` (uid 1000) is created fresh, with no supplementary groups, removing
#      whatever uid-1000 user the base image had (and its sudo/adm membership); the users
#      sse-runner and sse-daemon are created for the daemon;
#   3. the source is copied back, owned by model, with every .git (directories and
#      submodule gitlink files) removed and the tree committed again as the single commit
#      "buggy commit": upstream history would give the fix away;
#   4. world-writable bits go where a check must not change files; toolchain caches become
#      readable by everyone (the runner cannot read a crate unpacked 0640); /ssebench is
#      root-only, with the build and test scripts (and the support directories they name)
#      readable by sse-runner's group only: the daemon's --task-permissions sets that.
# The daemon checks the /ssebench permissions again at every start (the run's root is
# read-only then: what is wrong can no longer be changed, and the run fails).
set -eu
src=${1:-}
say() { printf 'setup-tool-layer: %s\n' "$*"; }
die() { printf 'setup-tool-layer: error: %s\n' "$*" >&2; exit 1; }

case $src in
/*) ;;
*) die "SOURCE_DIR must be an absolute path (got '$src')" ;;
esac
[ -d "$src" ] || die "no source directory '$src' in the case image"
[ -d /ssebench ] || die "no /ssebench in the case image"
for tool in cp chown chmod find git groupadd groupdel useradd userdel getent tar; do
	command -v "$tool" >/dev/null 2>&1 || die "the case image lacks '$tool'"
done

# 1. The pristine source, root-only.
say "pristine copy of $src in /ssebench-repo"
rm -rf /ssebench-repo
mkdir -m 0700 /ssebench-repo
cp -a "$src"/. /ssebench-repo/
chown -R root:root /ssebench-repo
chmod 0700 /ssebench-repo

# 2. Users (shared with the sidecar agent image).
sh "$(dirname "$0")/make-users.sh" --with-runner

# 3. The agent's tree: one commit, owned by model.
say "agent tree at $src: history replaced by one commit"
rm -rf "$src"
mkdir -p "$src"
cp -a /ssebench-repo/. "$src"/
find "$src" -name .git -prune -exec rm -rf {} +
git -C "$src" -c init.defaultBranch=main init -q
git -C "$src" -c core.hooksPath=/dev/null add -A
git -C "$src" -c user.name=ssebench -c user.email=ssebench@localhost -c commit.gpgsign=false \
	-c core.hooksPath=/dev/null commit -q --no-verify -m "buggy commit"
[ "$(git -C "$src" rev-list --count HEAD)" = 1 ] || die "the tree does not have exactly one commit"
chown -R model:model "$src"

# 4. Permissions.
chmod -R o-w "$src" /ssebench-repo
for d in "${GOPATH:-}" "${GOMODCACHE:-}" "${CARGO_HOME:-}" "${RUSTUP_HOME:-}" /root/go \
	/root/.cargo /root/.rustup /usr/local/cargo /usr/local/rustup /go; do
	[ -n "$d" ] && [ -d "$d" ] || continue
	chmod -R a+rX "$d"
	# Every directory above it must be passable for the runner to reach it.
	p=$d
	while [ "$p" != / ] && [ -n "$p" ]; do
		p=$(dirname "$p")
		chmod o+x "$p"
	done
done
# The task files: the daemon's own rule (root-only; the build and test scripts, the support
# directories they name and the directories leading there readable by sse-runner's group).
# A run's root is read-only, so the daemon can only check this at run time.
/opt/ssebench/bin/ssebench-daemon --task-permissions || die "the daemon could not set the task files' permissions"
mkdir -p /var/lib/ssebench /run/ssebench /var/lib/ssebench-runner /var/lib/ssebench-daemon \
	/tmp/sse-archive
chmod 0700 /var/lib/ssebench /run/ssebench
chown root:sse-runner /var/lib/ssebench-runner
chmod 0710 /var/lib/ssebench-runner
chmod 0711 /var/lib/ssebench-daemon
chown model:model /tmp/sse-archive
# 5. The agent's own command (sse: the task, its prompt, the daemon's tools, the dialog).
mkdir -p /usr/local/bin
ln -sf /opt/ssebench/bin/sse /usr/local/bin/sse
# 6. The task scripts' own root: a copy of the image as it is now, which the sandbox of the
#    jobs whose output the agent never sees (checks on hidden material, grading) enters
#    (SSE_RUNNER_ROOT, src/libsb/sandbox.c:enter_root); the agent's own builds do not. A
#    copy, not a bind: its files are other inodes than the ones the agent and its builds
#    read, so code that runs next to the PoC or the hidden tests cannot leave a message in
#    the page cache of a file they can read. The task files come along (their modes are set
#    by now); left out are the kernel's file systems, the places the sandbox replaces or
#    hides anyway and the harness's state, each back as an empty directory of its mode,
#    root's, to mount on. The copy is image/ in a 0710 root:sse-runner directory: the agent
#    (no supplementary group) cannot even look in, and the scripts see a / they can list.
#    This is the last step: whatever is changed after it, the scripts would not see.
top=/var/lib/ssebench-root
root=$top/image
say "the task scripts' own root at $root"
rm -rf "$top"
mkdir -p "$root"
set -- ./proc ./sys ./dev ./tmp ./var/tmp ./run ./ssebench-repo ./var/lib/ssebench \
	./var/lib/ssebench-runner ./var/lib/ssebench-daemon ./var/lib/ssebench-root ./home/model ".$src"
excl=""
for e in "$@"; do excl="$excl --exclude=$e"; done
# sh has no pipefail: the writer's status goes through a file.
failed=$(mktemp)
# shellcheck disable=SC2086 # the exclusions are one word each
{ tar -C / --one-file-system --numeric-owner $excl -cf - . || echo "$?" >"$failed"; } |
	tar -C "$root" --numeric-owner -xpf - || echo "$?" >>"$failed"
[ ! -s "$failed" ] || die "the copy of the image for the task scripts failed (tar: $(tr '\n' ' ' <"$failed"))"
rm -f "$failed"
for e in "$@"; do
	[ -d "/$e" ] || continue
	mkdir -p "$root/$e"
	chown 0:0 "$root/$e"
	chmod --reference="/$e" "$root/$e"
done
mkdir -p "$root/run/lock"
chmod 1777 "$root/run/lock"
# What the engine puts in a container's root when it starts (the build's are not the
# image's): loopback's names and the run's fixed host names (the scripts' network is
# loopback alone), no name server, the mount table, the marker some test suites look for.
printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\tsandbox task\n' \
	>"$root/etc/hosts"
: >"$root/etc/resolv.conf"
[ -e "$root/etc/mtab" ] || [ -L "$root/etc/mtab" ] || ln -s ../proc/self/mounts "$root/etc/mtab"
: >"$root/.dockerenv"
chmod 0755 "$root"
chown root:sse-runner "$top"
chmod 0710 "$top"
say "done"

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# setup-tool-layer.sh SOURCE_DIR: run once, as root, when the tool layer is built on a
# case image. What it does keeps the answer out of the agent's reach (image-layers steps
# 1-4, integrity-model):
#   1. the source as the case image built it goes to /ssebench-repo, root-only (0700);
#   2. the user `model` (uid 1000) is created fresh, with no supplementary groups, removing
#      whatever uid-1000 user the base image had (and its sudo/adm membership); the users
#      sse-runner and sse-daemon are created for the daemon;
#   3. the source is copied back, owned by model, with every .git (directories and
#      submodule gitlink files) removed and the tree committed again as the single commit
#      "buggy commit": upstream history would give the fix away;
#   4. world-writable bits go where a check must not change files; toolchain caches become
#      readable by everyone (the runner cannot read a crate unpacked 0640); /ssebench is
#      root-only, with the build and test scripts executable by sse-runner's group only.
# The daemon checks and re-applies the /ssebench permissions at every start.
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
for tool in cp chown chmod find git groupadd groupdel useradd userdel getent; do
	command -v "$tool" >/dev/null 2>&1 || die "the case image lacks '$tool'"
done

# 1. The pristine source, root-only.
say "pristine copy of $src in /ssebench-repo"
rm -rf /ssebench-repo
mkdir -m 0700 /ssebench-repo
cp -a "$src"/. /ssebench-repo/
chown -R root:root /ssebench-repo
chmod 0700 /ssebench-repo

# 2. Users.
old=$(getent passwd 1000 | cut -d: -f1 || true)
if [ -n "$old" ]; then
	say "removing the image's uid-1000 user '$old'"
	userdel -f "$old" 2>/dev/null || userdel "$old"
fi
if getent passwd model >/dev/null; then userdel -f model; fi
oldg=$(getent group 1000 | cut -d: -f1 || true)
if [ -n "$oldg" ]; then groupdel "$oldg"; fi
if getent group model >/dev/null; then groupdel model; fi
groupadd -g 1000 model
useradd -u 1000 -g 1000 -M -d /home/model -s /bin/bash model
# Not a member of any other group: strip "model" from every member list.
awk -F: 'BEGIN { OFS = ":" } {
	n = split($4, m, ","); out = ""
	for (i = 1; i <= n; i++) if (m[i] != "model") out = out (out == "" ? "" : ",") m[i]
	$4 = out; print }' /etc/group >/etc/group.new
cat /etc/group.new >/etc/group && rm -f /etc/group.new
if [ -f /etc/gshadow ]; then
	awk -F: 'BEGIN { OFS = ":" } {
		n = split($4, m, ","); out = ""
		for (i = 1; i <= n; i++) if (m[i] != "model") out = out (out == "" ? "" : ",") m[i]
		$4 = out; print }' /etc/gshadow >/etc/gshadow.new
	cat /etc/gshadow.new >/etc/gshadow && rm -f /etc/gshadow.new
fi
mkdir -p /home/model
chown model:model /home/model
chmod 0755 /home/model
# Fixed uids above Debian's UID_MAX (60000) and below nobody: useradd on a host never hands
# them out, so no host account shares them. A uid is one identity across the host and every
# container (no user namespaces): kill(-1) by a host process of that uid, or the per-uid
# RLIMIT_NPROC count, would otherwise reach into a run (integrity-model: "a dedicated uid").
for spec in sse-runner:60991 sse-daemon:60992; do
	u=${spec%%:*}
	id=${spec#*:}
	if ! getent passwd "$u" >/dev/null; then
		getent passwd "$id" >/dev/null && die "uid $id for $u is taken in the image"
		getent group "$id" >/dev/null && die "gid $id for $u is taken in the image"
		groupadd --system -g "$id" "$u"
		useradd --system -u "$id" -g "$id" --no-create-home --home-dir /nonexistent \
			--shell /usr/sbin/nologin "$u"
	fi
done
[ "$(id -G model)" = 1000 ] || die "model has supplementary groups: $(id -Gn model)"

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
chown -R root:root /ssebench
chmod -R go-rwx /ssebench
chgrp sse-runner /ssebench
chmod 0710 /ssebench
if [ -d /ssebench/scripts ]; then
	chgrp sse-runner /ssebench/scripts
	chmod 0710 /ssebench/scripts
	for s in build.sh test.sh; do
		[ -f "/ssebench/scripts/$s" ] || continue
		chgrp sse-runner "/ssebench/scripts/$s"
		chmod 0750 "/ssebench/scripts/$s"
	done
fi
mkdir -p /var/lib/ssebench /run/ssebench /var/lib/ssebench-runner /var/lib/ssebench-daemon \
	/tmp/sse-archive
chmod 0700 /var/lib/ssebench /run/ssebench
chown root:sse-runner /var/lib/ssebench-runner
chmod 0710 /var/lib/ssebench-runner
chmod 0711 /var/lib/ssebench-daemon
chown model:model /tmp/sse-archive
say "done"

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make-users.sh [--with-runner]: run once, as root, when an image that runs an agent is built
# (the sandbox tool layer, the sidecar task and agent images). The user `model` (uid 1000)
# is created fresh, with no supplementary groups, removing whatever uid-1000 user the base
# image had (and its sudo/adm membership): docs/design.md, "Processes and users in a run". With
# --with-runner, also sse-runner and sse-daemon, the uids the daemon runs task scripts and its own
# workers under.
set -eu
say() { printf 'make-users: %s\n' "$*"; }
die() { printf 'make-users: error: %s\n' "$*" >&2; exit 1; }
with_runner=0
[ "${1:-}" = --with-runner ] && with_runner=1
for tool in groupadd groupdel useradd userdel getent awk; do
	command -v "$tool" >/dev/null 2>&1 || die "the image lacks '$tool'"
done

old=$(getent passwd 1000 | cut -d: -f1 || true)
if [ -n "$old" ]; then
	say "removing the image's uid-1000 user '$old'"
	# Its home goes too (-r): left behind it would belong to model, the agent, outside the
	# places the runner's sandbox hides, and the run would not be scored
	# (entrypoint/isolation.c:check_shared_places).
	userdel -r -f "$old" 2>/dev/null || userdel -r "$old" 2>/dev/null || userdel "$old"
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
# RLIMIT_NPROC count, would otherwise reach into a run (docs/design.md, "Processes and users
# in a run").
if [ "$with_runner" = 1 ]; then for spec in sse-runner:60991 sse-daemon:60992; do
	u=${spec%%:*}
	id=${spec#*:}
	if ! getent passwd "$u" >/dev/null; then
		getent passwd "$id" >/dev/null && die "uid $id for $u is taken in the image"
		getent group "$id" >/dev/null && die "gid $id for $u is taken in the image"
		groupadd --system -g "$id" "$u"
		useradd --system -u "$id" -g "$id" --no-create-home --home-dir /nonexistent \
			--shell /usr/sbin/nologin "$u"
	fi
done; fi
[ "$(id -G model)" = 1000 ] || die "model has supplementary groups: $(id -Gn model)"


#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The integrity suite in sidecar mode (docs/sidecar.md, "Security properties"): the
# same hostile agent, the same checks and levels as t0100, with every run (the victim's too)
# split into a task container and an agent container. The agent goes after the hidden
# material from its own container and through the daemon's bash tool in the task container,
# and after the admin socket and the socket directory on the shared volume.
export SSEBENCH_INTEGRITY_MODE=sidecar
exec "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/integrity/t0100-hostile-agent.sh" "$@"

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The victim agent: changes its tree (so its live diff holds a marker), says it is ready, and
# waits until the driver drops `stop` into its archive (or 15 minutes pass). Then it records
# whether anything the hostile run sent through this run's daemon took effect.
set -u
out=$SSE_ARCHIVE/victim.txt
cd "${SSE_SOURCE:-$PWD}" || exit 1
mark="VICTIM-DIFF-"
mark+="5be1"
printf '/* %s */\n' "$mark" >victim-note.c
date +%s%3N >"$SSE_ARCHIVE/victim-started"
for _ in $(seq 1800); do
	[ -e "$SSE_ARCHIVE/stop" ] && break
	sleep 0.5
done
# Sidecar mode: the bash tool runs in the task container, which shares only the archive.
if [ -e /tmp/pwned-by-hostile ] || [ -e "$SSE_ARCHIVE/pwned-by-hostile" ]; then
	echo "victim-untouched LEAKED a pwned-by-hostile file exists: the other run drove this run's bash tool" >>"$out"
else
	echo "victim-untouched blocked no command of the other run ran here" >>"$out"
fi
echo "victim-stopped ok $([ -e "$SSE_ARCHIVE/stop" ] && echo "told to stop" || echo "timed out")" >>"$out"
exit 0

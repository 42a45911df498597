#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# verify.sh: the container half of `ssebench dataset verify` (docs/tasks.md, "Verifying").
#
# Runs as root in a throwaway container made from a task's tool image (`--network none`,
# `--rm`), with this directory mounted read-only. The task's files are in /ssebench and the
# agent's tree in $SSE_SOURCE, as in a run. It does what the daemon does for a grading
# (docs/upstream.md, "Task scripts"), minus the daemon:
#   1. the leak scan over the agent's tree: no debian/patches or .pc directory, and no file
#      holding every distinctive added line of a hunk of the fix;
#   2. a copy of the tree owned by sse-runner, build.sh in it, then each PoC REPEAT times
#      (run.sh staged with a copy of the PoC, cwd = the built tree), each expected to fail;
#   3. a fresh copy with the fix applied (git apply -p1), build.sh, each PoC REPEAT times,
#      each expected to exit 0.
# Every script runs as sse-runner (setpriv, no groups) with a time limit (timeout).
#
# The caller names the task files (it has parsed config.yaml); paths are relative to
# /ssebench:
#   verify.sh -n REPEAT -b BUILD_SECONDS -p POC_SECONDS --build PATH --run PATH
#             --patch PATH [--poc PATH]... [--hidden PATH]... [--canary STRING]
#
# Standard output carries only machine-readable lines, which cmd-verify.c parses:
#   leak <description>
#   leak-scan <n> hunks <m> distinctive-hunks
#   canary-scan done marked <n>    n: hidden files that carry the canary
#   build <vulnerable|fixed> ok|failed <exit status> <seconds>
#   patch fixed ok|failed <exit status>
#   run <vulnerable|fixed> <i> <exit status> <seconds> <poc>
#   poc <vulnerable|fixed> <k>/<n> <poc>     k: runs that behaved as expected
#   error <message>
#   done
# Everything else (script output, explanations) goes to standard error.
set -u

bench=/ssebench
runner=sse-runner
root=/var/lib/ssebench-runner

repeat=3 build_t=3600 poc_t=600 build='' run='' patch='' pocs='' hidden='' canary=''
nl='
'

say() { printf '%s\n' "$*"; }
log() { printf 'verify: %s\n' "$*" >&2; }
fatal() {
	say "error $*"
	log "error: $*"
	say 'done'
	exit 1
}

while [ $# -gt 0 ]; do
	case $1 in
	-n) repeat=$2 ;;
	-b) build_t=$2 ;;
	-p) poc_t=$2 ;;
	--build) build=$2 ;;
	--run) run=$2 ;;
	--patch) patch=$2 ;;
	--poc) pocs=$pocs$2$nl ;;
	--hidden) hidden=$hidden$2$nl ;;
	--canary) canary=$2 ;;
	*) fatal "unknown argument '$1'" ;;
	esac
	shift 2 || fatal "option '$1' needs a value"
done

[ "$(id -u)" = 0 ] || fatal "verify.sh must run as root (it needs /ssebench)"
src=${SSE_SOURCE:-}
if [ -z "$src" ] || [ ! -d "$src" ]; then
	fatal "no source tree (SSE_SOURCE='$src'): not a tool image?"
fi
for tool in setpriv timeout git cp find grep awk sed chown chmod mktemp date; do
	command -v "$tool" >/dev/null 2>&1 || fatal "the image lacks '$tool' (setpriv: util-linux)"
done
id "$runner" >/dev/null 2>&1 || fatal "no user '$runner' in the image: not a tool image?"
[ -d "$root" ] || fatal "no $root in the image: not a tool image?"

# Seconds since the epoch, for durations (whole seconds are enough here).
now() { date +%s; }

# The path of the PoC file list and hidden files without the final newline, one a line.
each_poc() { printf '%s' "$pocs"; }

# --- the leak scan ---------------------------------------------------------------------
#
# The agent's tree must not hold the answer. Two kinds of evidence:
#   - a quilt state directory (.pc) or a debian/patches directory: Debian's source package
#     carries the fix there;
#   - a file that contains every distinctive added line of one hunk of the fix. A line is
#     distinctive when, trimmed, it has at least 16 characters and is not already in the
#     file the hunk changes (as the vulnerable tree has it): "return NULL;" proves nothing.
# Lines are compared as fixed strings inside lines (indentation may differ). .git is not
# searched: its objects are compressed, and the tool layer rebuilt it from this very tree.
scan=$(mktemp -d /tmp/verify-scan.XXXXXX) || fatal "mktemp"
find "$src" -name .git -prune -o -type d \( -name .pc -o -path '*/debian/patches' \) -print \
	>"$scan/dirs" 2>/dev/null
while IFS= read -r d; do
	say "leak directory ${d#"$src"/} (Debian patch material in the agent's tree)"
done <"$scan/dirs"

if [ -n "$patch" ] && [ -f "$bench/$patch" ]; then
	# One file per hunk: hunk-N.path (the file, -p1) and hunk-N.add (trimmed added lines).
	awk -v dir="$scan" '
		function trim(s) { sub(/^[ \t\r]+/, "", s); sub(/[ \t\r]+$/, "", s); return s }
		# Inside a hunk, the counts of its header say which lines belong to it, so an
		# added line that starts with "++ " is never taken for a file header.
		left_old > 0 || left_new > 0 {
			c = substr($0, 1, 1)
			if (c == "+") {
				left_new--
				l = trim(substr($0, 2))
				if (length(l) >= 16) print l >> (dir "/hunk-" n ".add")
			} else if (c == "-") {
				left_old--
			} else if (c == " " || $0 == "") {
				left_old--; left_new--
			}
			next
		}
		/^\+\+\+ / {
			p = substr($0, 5); sub(/\t.*$/, "", p)
			if (p == "/dev/null") p = ""
			else sub(/^[^\/]*\//, "", p)
			path = p; next
		}
		/^@@ -[0-9]+(,[0-9]+)? \+[0-9]+(,[0-9]+)? @@/ {
			split($2, o, ","); split($3, w, ",")
			left_old = (2 in o) ? o[2] + 0 : 1
			left_new = (2 in w) ? w[2] + 0 : 1
			if (n > 0) close(dir "/hunk-" n ".add")
			n++
			print path > (dir "/hunk-" n ".path"); close(dir "/hunk-" n ".path")
			printf "" > (dir "/hunk-" n ".add")
			next
		}
		END { print n + 0 > (dir "/count") }
	' "$bench/$patch" || fatal "cannot read $patch"
	hunks=$(cat "$scan/count")
	distinctive=0
	i=1
	while [ "$i" -le "$hunks" ]; do
		target=$(cat "$scan/hunk-$i.path")
		: >"$scan/lines"
		while IFS= read -r l; do
			if [ -n "$target" ] && [ -f "$src/$target" ] &&
				grep -qF -e "$l" "$src/$target"; then
				continue
			fi
			printf '%s\n' "$l" >>"$scan/lines"
		done <"$scan/hunk-$i.add"
		if [ -s "$scan/lines" ]; then
			distinctive=$((distinctive + 1))
			first=$(head -n 1 "$scan/lines")
			grep -rlF --exclude-dir=.git -e "$first" "$src" 2>/dev/null >"$scan/cands"
			while IFS= read -r f; do
				all=1
				while IFS= read -r l; do
					grep -qF -e "$l" "$f" || { all=0; break; }
				done <"$scan/lines"
				if [ "$all" = 1 ]; then
					say "leak file ${f#"$src"/} holds the added lines of hunk $i of $patch (${target:-a new file})"
				fi
			done <"$scan/cands"
		fi
		i=$((i + 1))
	done
	say "leak-scan $hunks hunks $distinctive distinctive-hunks"
elif [ -n "$patch" ]; then
	fatal "no $bench/$patch in the image"
fi
rm -rf "$scan"

# The dataset's canary anywhere but /ssebench: the case image is built from a context whose
# hidden diffs carry it (docs/task-format.md, "Canary"), so a file holding it elsewhere is a
# copy of hidden material the agent can read (a Dockerfile that also copied the fix into the
# tree, or into /opt). -xdev keeps to the image (this script's mount is another device).
# The runner's own copy of the image (SSE_RUNNER_ROOT, in a 0710 root:sse-runner directory)
# holds /ssebench too, and is as closed to the agent: it is left out like /ssebench.
runner_top=$(dirname "${SSE_RUNNER_ROOT:-/var/lib/ssebench-root/image}")
if [ -n "$canary" ]; then
	# How many of the hidden files carry it: none means the case image predates the
	# canary, or its diffs are not ones the build marks (cmd-verify warns).
	marked=0
	for h in $patch $hidden; do
		[ -f "$bench/$h" ] && grep -qF -- "$canary" "$bench/$h" && marked=$((marked + 1))
	done
	find / -xdev \( -path "$bench" -o -path "$runner_top" -o -path /proc -o -path /sys -o \
		-path /dev \) -prune -o \
		-type f -size -268435456c -exec grep -lF -- "$canary" {} + 2>/dev/null | head -n 20 |
		while IFS= read -r f; do
			say "leak file $f holds the dataset's canary (a copy of a hidden file)"
		done
	say "canary-scan done marked $marked"
fi

# --- the runner's side -----------------------------------------------------------------

# Support directories (docs/upstream.md, "Task scripts", as the daemon decides them): a
# top-level /ssebench/<name> that a script names by absolute path, holding none of the
# hidden files (the fix, hidden tests, PoCs), is readable by the runner in place.
holds_hidden() { # NAME
	printf '%s%s%s\n' "$patch" "$nl" "$hidden$pocs" | while IFS= read -r h; do
		case $h in "$1" | "$1"/*) echo yes ;; esac
	done | grep -q yes
}
for s in "$build" "$run"; do
	[ -n "$s" ] && [ -f "$bench/$s" ] && cat "$bench/$s"
done | grep -o '/ssebench/[A-Za-z0-9._-]*' | sort -u | while IFS= read -r ref; do
	name=${ref#/ssebench/}
	case $name in "" | . | ..) continue ;; esac
	if [ ! -d "$bench/$name" ] || [ -L "$bench/$name" ]; then continue; fi
	case $build in "$name"/*) continue ;; esac
	holds_hidden "$name" && continue
	log "support directory shared read-only with the runner: $name"
	chgrp -R "$runner" "$bench/$name"
	find "$bench/$name" -type d -exec chmod 0750 {} +
	find "$bench/$name" -type f -exec chmod g+r,g-w,o-rwx {} +
	chgrp "$runner" "$bench"
	chmod 0710 "$bench"
done

home=$root/home-verify
rm -rf "$home"
mkdir -p "$home/tmp" "$home/.cache"
chown -R "$runner:$runner" "$home"
chmod 0700 "$home"

# as_runner SECONDS DIR PROGRAM ARGS...: run PROGRAM as the runner in DIR with the daemon's
# environment for scripts, under a time limit; then kill whatever the runner left behind
# (as the daemon does). Returns the program's status (124 on time-out).
as_runner() {
	t=$1 dir=$2
	shift 2
	(
		cd "$dir" || exit 125
		exec timeout -k 10 "$t" setpriv --reuid="$runner" --regid="$runner" --clear-groups \
			--no-new-privs env -u SSE_ADMIN_SOCKET HOME="$home" TMPDIR="$home/tmp" \
			XDG_CACHE_HOME="$home/.cache" GOCACHE="$home/.cache/go-build" \
			CCACHE_DIR="$home/.ccache" USER="$runner" LOGNAME="$runner" "$@" </dev/null
	)
	rc=$?
	setpriv --reuid="$runner" --regid="$runner" --clear-groups sh -c 'kill -KILL -1' \
		2>/dev/null
	return "$rc"
}

# workspace NAME: a fresh copy of the agent's tree, owned by the runner; prints its path.
workspace() {
	ws=$root/work-$1
	rm -rf "$ws"
	mkdir -p "$ws"
	cp -a "$src" "$ws/src" || return 1
	chown -R "$runner:$runner" "$ws"
	chmod 0700 "$ws"
	printf '%s\n' "$ws/src"
}

# stage REL AS: a runner-readable copy of /ssebench/REL at $stage/AS (root-owned
# directories the runner may pass through, as the daemon stages hidden files).
stage=$root/stage-verify
stage() {
	mkdir -p "$stage/$(dirname "$2")"
	cp -a "$bench/$1" "$stage/$2" || return 1
	chown -R "$runner:$runner" "$stage/$2"
	find "$stage" -type d ! -path "$stage/$2" ! -path "$stage/$2/*" -exec chown "root:$runner" {} + \
		-exec chmod 0710 {} +
}

# stage_poc POC: run.sh and the PoC (the whole top directory when it holds nothing else
# hidden: a Go module, a crate); prints the staged PoC's absolute path.
stage_poc() {
	rm -rf "$stage"
	stage "$run" script/run.sh || return 1
	top=${1%%/*}
	others=no
	if [ "$top" != "$1" ]; then
		printf '%s%s%s\n' "$patch" "$nl" "$hidden$pocs" | while IFS= read -r h; do
			[ "$h" = "$1" ] && continue
			case $h in "$top"/*) echo yes ;; esac
		done | grep -q yes && others=yes
	fi
	if [ "$top" != "$1" ] && [ "$others" = no ]; then
		stage "$top" "files/$top" || return 1
	else
		stage "$1" "files/$1" || return 1
	fi
	printf '%s\n' "$stage/files/$1"
}

# build_in PHASE DIR: build.sh in DIR; prints the build line; returns its status.
build_in() {
	log "$1: build.sh in $2"
	t0=$(now)
	as_runner "$build_t" "$2" "$bench/$build" >&2
	brc=$?
	if [ "$brc" = 0 ]; then
		say "build $1 ok 0 $(($(now) - t0))"
	else
		say "build $1 failed $brc $(($(now) - t0))"
	fi
	return "$brc"
}

# pocs_in PHASE DIR WANT: each PoC REPEAT times; WANT is "fail" or "pass".
pocs_in() {
	each_poc | while IFS= read -r poc; do
		[ -n "$poc" ] || continue
		good=0
		i=1
		while [ "$i" -le "$repeat" ]; do
			if ! staged=$(stage_poc "$poc"); then
				say "error cannot stage $poc"
				break
			fi
			log "$1: run.sh $poc ($i of $repeat)"
			t0=$(now)
			as_runner "$poc_t" "$2" "$stage/script/run.sh" "$staged" >&2
			prc=$?
			rm -rf "$stage"
			say "run $1 $i $prc $(($(now) - t0)) $poc"
			if [ "$3" = fail ] && [ "$prc" != 0 ]; then good=$((good + 1)); fi
			if [ "$3" = pass ] && [ "$prc" = 0 ]; then good=$((good + 1)); fi
			i=$((i + 1))
		done
		say "poc $1 $good/$repeat $poc"
	done
}

if [ -z "$build" ]; then
	fatal "the task has no build script"
fi
if [ -z "$run" ] || [ -z "$pocs" ]; then
	log "the task has no PoC check (scripts.run and files.poc): nothing to run"
	say 'done'
	exit 0
fi

# 2. The vulnerable tree.
vsrc=$(workspace vulnerable) || fatal "cannot copy $src"
if build_in vulnerable "$vsrc"; then
	pocs_in vulnerable "$vsrc" fail
fi
rm -rf "$root/work-vulnerable"

# 3. The fixed tree.
if [ -n "$patch" ]; then
	fsrc=$(workspace fixed) || fatal "cannot copy $src"
	rm -rf "$stage"
	stage "$patch" fix.diff || fatal "cannot stage $patch"
	as_runner "$build_t" "$fsrc" git apply -p1 "$stage/fix.diff" >&2
	arc=$?
	rm -rf "$stage"
	if [ "$arc" = 0 ]; then
		say "patch fixed ok 0"
		if build_in fixed "$fsrc"; then
			pocs_in fixed "$fsrc" pass
		fi
	else
		say "patch fixed failed $arc"
	fi
	rm -rf "$root/work-fixed"
fi
rm -rf "$home"
say 'done'

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Disk and cleanup (docs/cleanup.md) against a real engine: images list, images prune, runs
# prune, dataset du.
#
# Safe beside the other suites on the same engine: everything lives under a registry prefix of
# its own (SSEBENCH_REGISTRY=localhost/ssebench-test-space-<pid>), made of tiny images
# (`docker import` of a few KB, `docker commit` of one file on top, and tags of the imported
# Debian rootfs that already exists); the runs are containers labelled for this suite; the
# cleanup hook removes all of it. runs prune only touches runs of its registry's images, which a
# container of the default registry here checks.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
. "$SB_SRCDIR/tests/e2e/lib-e2e.sh"

e2e_require
ROOTFS=${SSEBENCH_E2E_ROOTFS:-localhost/ssebench/debian:bookworm}
$DOCKER image inspect "$ROOTFS" >/dev/null 2>&1 || skip_all "no rootfs image $ROOTFS (scripts/docker-up)"
plan_lazy

REG=localhost/ssebench-test-space-$$
export SSEBENCH_REGISTRY=$REG
V=$(cat "$SB_SRCDIR/VERSION")
MARK=ssebench.space-test=$$
RUN=space-$$

sb_cleanup_hook() {
	local ids vols
	ids=$($DOCKER ps -aq --filter "label=$MARK")
	[ -z "$ids" ] || $DOCKER rm -f $ids >/dev/null 2>&1
	vols=$($DOCKER volume ls -q --filter "label=$MARK")
	[ -z "$vols" ] || $DOCKER volume rm $vols >/dev/null 2>&1
	# Only names under this suite's prefix, by name: an image another name holds stays.
	$DOCKER image ls --format '{{.Repository}}:{{.Tag}}' | grep -F "$REG/" | grep "^$REG/" |
		while read -r img; do $DOCKER rmi --no-prune "$img" >/dev/null 2>&1; done
}

# --- the images -----------------------------------------------------------------------------
# A dataset "ds" with the small task: case/ds/<task> and tool/<task> are its images.
DS=$SB_TMP/ds
mkdir -p "$DS"
cp "$SMALL_DATASET/dataset.yaml" "$DS/"
cp -a "$SMALL_DATASET/$SMALL" "$DS/$SMALL"

layer_tar() { # NAME: a tar of one file of 4096 random bytes
	mkdir -p "$SB_TMP/$1"
	head -c 4096 /dev/urandom >"$SB_TMP/$1/$1.bin"
	tar -C "$SB_TMP/$1" -cf "$SB_TMP/$1.tar" .
}
for t in a b c d e; do layer_tar $t; done
ESC=$'\e'
$DOCKER import --change "LABEL ssebench.task-id=$SMALL" "$SB_TMP/a.tar" "$REG/case/ds/$SMALL" >/dev/null
# The tool image: the case image and one more layer (so they share the first).
cid=$($DOCKER create --label "$MARK" "$REG/case/ds/$SMALL" /none)
$DOCKER cp "$SB_TMP/b/b.bin" "$cid:/b.bin"
$DOCKER commit "$cid" "$REG/tool/$SMALL:$V" >/dev/null
$DOCKER rm "$cid" >/dev/null
$DOCKER tag "$REG/tool/$SMALL:$V" "$REG/agent-dummy/$SMALL:$V"
$DOCKER tag "$REG/tool/$SMALL:$V" "$REG/tool/$SMALL:0.0.0-old"
$DOCKER import "$SB_TMP/c.tar" "$REG/tool/gone-task:$V" >/dev/null
$DOCKER import "$SB_TMP/d.tar" "$REG/tool/kept-task:$V" >/dev/null
$DOCKER import --change "LABEL ssebench.task-id=ev${ESC}[31mil" "$SB_TMP/e.tar" "$REG/tool/evil:$V" >/dev/null
$DOCKER tag "$ROOTFS" "$REG/debian:bookworm"
exists() { $DOCKER image inspect "$1" >/dev/null 2>&1; }
ok "$(exists "$REG/tool/evil:$V"; echo $?)" "the suite's images are made"

# --- the runs -------------------------------------------------------------------------------
# A kept run that holds an image no task needs (made, never started: a run's container);
# a finished run, a running one, each with a volume; and a finished run of another registry.
$DOCKER create --label "$MARK" --label "ssebench.run=$RUN-kept" "$REG/tool/kept-task:$V" /none >/dev/null
$DOCKER volume create --label "$MARK" --label "ssebench.run=$RUN-done" "$RUN-done-vol" >/dev/null
$DOCKER volume create --label "$MARK" --label "ssebench.run=$RUN-live" "$RUN-live-vol" >/dev/null
$DOCKER run --name "$RUN-done" --label "$MARK" --label "ssebench.run=$RUN-done" "$REG/debian:bookworm" true
$DOCKER run -d --name "$RUN-live" --label "$MARK" --label "ssebench.run=$RUN-live" "$REG/debian:bookworm" sleep 600 >/dev/null
$DOCKER run --name "$RUN-foreign" --label "$MARK" --label "ssebench.run=$RUN-foreign" "$ROOTFS" true
cexists() { $DOCKER container inspect "$1" >/dev/null 2>&1; }
vexists() { $DOCKER volume inspect "$1" >/dev/null 2>&1; }

# --- usage errors and an unknown dataset ----------------------------------------------------
run_cmd r "$SSEBENCH" images list --bogus
is "$r_rc" 2 "images list --bogus exits 2"
like "$r_err" "unknown option '--bogus'" "and says which option"
run_cmd r "$SSEBENCH" images prune --local
is "$r_rc" 2 "images prune --local without a value exits 2"
like "$r_err" "^usage: ssebench images prune \\[--local DIR\\]" "and prints the usage"
run_cmd r "$SSEBENCH" runs prune extra
is "$r_rc" 2 "runs prune with an argument exits 2"
like "$r_err" "unexpected argument 'extra'" "and says which"
run_cmd r "$SSEBENCH" dataset du --nope
is "$r_rc" 2 "dataset du --nope exits 2"
for c in "images list --local" "images prune --local" "dataset du --local"; do
	run_cmd r "$SSEBENCH" $c "$SB_TMP/no-such-dataset"
	is "$r_rc" 1 "$c with an unknown directory exits 1"
done
like "$r_err" "no-such-dataset" "and names it"

# --- images list ----------------------------------------------------------------------------
run_cmd r "$SSEBENCH" images list --local "$DS"
is "$r_rc" 0 "images list exits 0"
[ "$r_rc" = 0 ] || diag "$r_err"
like "$r_out" "^$REG/case/ds/$SMALL:latest +[0-9.]+ kB +[0-9.]+ kB +0 B +case +$SMALL +- +keep \(a task of the dataset\)" \
	"the case image: its size, all of it shared with the tool image, its task, kept"
like "$r_out" "^$REG/tool/$SMALL:$V +[0-9.]+ kB +[0-9.]+ kB +[0-9.]+ kB +tool +$SMALL +- +keep" "the tool image"
like "$r_out" "^$REG/agent-dummy/$SMALL:$V .* agent +$SMALL +dummy +keep" "an agent image: its task and agent"
like "$r_out" "^$REG/tool/gone-task:$V .* tool +gone-task +- +remove" "an image no task needs: remove"
like "$r_out" "^$REG/tool/$SMALL:0.0.0-old .* remove" "an older ssebench's tool image: remove"
like "$r_out" "^$REG/tool/kept-task:$V .* keep \(kept run $RUN-kept\)" "an image a kept run uses: kept"
like "$r_out" "^$REG/debian:bookworm .* rootfs .* keep" "the rootfs: kept"
unlike "$r_out" "^localhost/ssebench/" "nothing of another registry is listed"
like "$r_out" "^[0-9]+ images \([0-9]+ names\) under $REG: .* on disk" "a total"
if printf '%s' "$r_out" | grep -q "$ESC"; then ok 1 "no raw ESC byte reaches the terminal"; else ok 0 "no raw ESC byte reaches the terminal"; fi
like "$r_out" 'ev\\x1b\[31mil' "the hostile label is printed escaped"

run_cmd r "$SSEBENCH" images list --local "$DS" --json
is "$r_rc" 0 "images list --json exits 0"
printf '%s' "$r_out" >"$SB_TMP/list.json"
case_size=$($DOCKER image inspect --format '{{.Size}}' "$REG/case/ds/$SMALL")
tool_size=$($DOCKER image inspect --format '{{.Size}}' "$REG/tool/$SMALL:$V")
is "$(field "$SB_TMP/list.json" "[(i['size'], i['shared'], i['unique'], i['exact'], i['task']) for i in d['images'] if i['name'] == '$REG/case/ds/$SMALL:latest']")" \
	"[($case_size, $case_size, 0, True, '$SMALL')]" "--json: the case image's size is the engine's, all shared"
is "$(field "$SB_TMP/list.json" "[(i['shared'], i['unique']) for i in d['images'] if i['name'] == '$REG/tool/$SMALL:$V']")" \
	"[($case_size, $((tool_size - case_size)))]" "--json: the tool image shares the case layer, the rest its own"
is "$(field "$SB_TMP/list.json" "all(i['shared'] + i['unique'] == i['size'] for i in d['images'])")" True \
	"--json: shared and unique add up to the size"
is "$(field "$SB_TMP/list.json" "[i['labels']['ssebench.task-id'] for i in d['images'] if i['name'].startswith('$REG/tool/evil:')]")" \
	"['ev\\x1b[31mil']" "--json: the hostile label as JSON (its ESC byte a \\u escape)"
like "$(grep -c $'\e' "$SB_TMP/list.json")" "^0$" "--json: no raw ESC byte"

# --- images prune ---------------------------------------------------------------------------
run_cmd r "$SSEBENCH" images prune --local "$DS" --dry-run
is "$r_rc" 0 "images prune --dry-run exits 0"
like "$r_out" "^would remove $REG/tool/gone-task:$V\$" "--dry-run: says what would go"
like "$r_out" "^would remove 3 image names; would free [0-9.]+ kB" "--dry-run: how many and the space"
ok "$(exists "$REG/tool/gone-task:$V" && exists "$REG/tool/evil:$V" && exists "$REG/tool/$SMALL:0.0.0-old"; echo $?)" \
	"--dry-run removes nothing"

gone_size=$($DOCKER image inspect --format '{{.Size}}' "$REG/tool/gone-task:$V")
evil_size=$($DOCKER image inspect --format '{{.Size}}' "$REG/tool/evil:$V")
run_cmd r "$SSEBENCH" images prune --local "$DS"
is "$r_rc" 0 "images prune exits 0"
[ "$r_rc" = 0 ] || diag "$r_err"
like "$r_out" "^removed $REG/tool/gone-task:$V\$" "it says what it removed"
ok "$(! exists "$REG/tool/gone-task:$V" && ! exists "$REG/tool/evil:$V" && ! exists "$REG/tool/$SMALL:0.0.0-old"; echo $?)" \
	"the images no task needs are gone"
ok "$(exists "$REG/case/ds/$SMALL" && exists "$REG/tool/$SMALL:$V" && exists "$REG/agent-dummy/$SMALL:$V"; echo $?)" \
	"the images the task needs stay"
ok "$(exists "$REG/tool/kept-task:$V"; echo $?)" "the image of a kept run stays"
ok "$(exists "$REG/debian:bookworm" && exists "$ROOTFS"; echo $?)" "the rootfs stays"
like "$r_out" "^removed 3 image names; freed [0-9.]+ kB" "it says how much it freed"
is "$(printf '%s\n' "$r_out" | sed -n 's/.*freed \([0-9.]*\) kB$/\1/p')" \
	"$(awk -v a="$gone_size" -v b="$evil_size" 'BEGIN { printf "%.2f", (a + b) / 1000 }')" \
	"what it freed: the two imported layers (the old name's image stays under its current name)"

run_cmd r "$SSEBENCH" images prune --all --dry-run
like "$r_out" "^would remove $REG/case/ds/$SMALL:latest\$" "--all --dry-run: the task's images would go too"
unlike "$r_out" "kept-task|debian" "--all: never an image a run uses"

# --- runs prune -----------------------------------------------------------------------------
run_cmd r "$SSEBENCH" runs prune --dry-run
is "$r_rc" 0 "runs prune --dry-run exits 0"
like "$r_out" "^would remove run $RUN-done \(1 container\)" "--dry-run: the finished run"
ok "$(cexists "$RUN-done" && vexists "$RUN-done-vol"; echo $?)" "--dry-run removes nothing"
run_cmd r "$SSEBENCH" runs prune
is "$r_rc" 0 "runs prune exits 0"
[ "$r_rc" = 0 ] || diag "$r_err"
like "$r_out" "^removed run $RUN-done \(1 container, 1 volume\)" "it says what it removed"
like "$r_out" "^kept run $RUN-live: running" "and what it kept"
ok "$(! cexists "$RUN-done" && ! vexists "$RUN-done-vol"; echo $?)" "the finished run's container and volume are gone"
ok "$(cexists "$RUN-live" && vexists "$RUN-live-vol"; echo $?)" "the running run's stay"
ok "$(cexists "$RUN-foreign"; echo $?)" "a run of another registry's images stays"
is "$($DOCKER ps -aq --filter "label=ssebench.run=$RUN-kept" | wc -l)" 1 "a run container made a moment ago (starting) stays"

# --- dataset du -----------------------------------------------------------------------------
run_cmd r "$SSEBENCH" dataset du --local "$DS"
is "$r_rc" 0 "dataset du exits 0"
like "$r_out" "^$SMALL +[0-9.]+ kB" "a line for the task with the size of its images"
like "$r_out" "^  $REG/case/ds/$SMALL:latest +[0-9.]+ kB +[0-9.]+ kB +0 B" "its case image, shared with the tool image"
like "$r_out" "^  $REG/agent-dummy/$SMALL:$V " "its agent image"
like "$r_out" "^$DS: 2 images of 1 task, [0-9.]+ kB on disk" "a total"
run_cmd r "$SSEBENCH" dataset du --local "$DS" --json
printf '%s' "$r_out" >"$SB_TMP/du.json"
is "$(field "$SB_TMP/du.json" "(d['total']['images'], d['total']['size'], d['tasks'][0]['size'], len(d['tasks'][0]['images']))")" \
	"(2, $tool_size, $tool_size, 3)" "--json: two images taking the tool image's size (3 names)"

# --- images prune --all ---------------------------------------------------------------------
run_cmd r "$SSEBENCH" images prune --all
is "$r_rc" 0 "images prune --all exits 0"
ok "$(! exists "$REG/case/ds/$SMALL" && ! exists "$REG/tool/$SMALL:$V"; echo $?)" "--all removes the task's images"
ok "$(exists "$REG/tool/kept-task:$V" && exists "$REG/debian:bookworm"; echo $?)" "and keeps those runs use"
ok "$(exists "$ROOTFS"; echo $?)" "the default registry's rootfs is untouched"

done_testing

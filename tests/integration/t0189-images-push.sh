#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `ssebench images push --registry R [--lock FILE] IMAGE...` against a stand-in docker client
# (SSEBENCH_DOCKER): registry names that are not HOST[:PORT][/PATH] are refused before any
# command, a one-word host too (docker would push it to Docker Hub); each image is tagged by
# its ID as R/NAME:TAG (NAME without $SSEBENCH_REGISTRY) and pushed; the pin is the digest
# the push reported for that tag (not another tag's, not a malformed one), checked to name
# the image; nothing is removed from the engine; the images lock keeps one entry per image,
# newest pin, pushes side by side lose none of it, and a lock for another registry, a broken
# one or a link is refused before any push; one image that fails leaves the others pushed; a run on Kubernetes refuses a bad
# SSEBENCH_K8S_REGISTRY before it builds.
# The push to a real registry and a cluster pulling by the pin: tests/k8s/t0120-backend.sh.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

command -v jq >/dev/null 2>&1 || bail "needs jq (scripts/setup installs it)"
plan_lazy

fake=$SB_TMP/docker
log=$SB_TMP/docker.log
id=sha256:1111111111111111111111111111111111111111111111111111111111111111
moved=sha256:2222222222222222222222222222222222222222222222222222222222222222
hex=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
other=fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210
# Each call is logged as one line of its arguments. Every image has ID $id, but a name with
# "missing" is not there, and with the file "moved" the pushed digest names another image.
# The push reports, before its own digest, another tag's and a malformed one (decoys); with
# the file "nodigest" it reports only those.
cat >"$fake" <<EOF
#!/bin/bash
printf '%s\n' "\$*" >>"$log"
case "\$1 \$2" in
"image inspect")
	name=\${*: -1}
	[[ \$name == *missing* ]] && exit 1
	if [[ \$name == *@* ]] && [ -e "$SB_TMP/moved" ]; then echo $moved; else echo $id; fi ;;
"tag "*) ;;
"push "*)
	[[ \$2 == *fails* ]] && exit 1
	tag=\${2##*:}
	echo "The push refers to repository [\${2%:*}]"
	echo "latest: digest: sha256:$other size: 528"
	echo "\$tag: digest: sha256:abc size: 528"
	[ -e "$SB_TMP/nodigest" ] || echo "\$tag: digest: sha256:$hex size: 528" ;;
*) exit 1 ;;
esac
EOF
chmod +x "$fake"
export SSEBENCH_DOCKER=$fake SSEBENCH_REGISTRY=localhost/ssebench
cd "$SB_TMP" || bail "no scratch directory"
img=localhost/ssebench/agent-reference/cjson-cve-2023-53154:0.1.0
pin=127.0.0.1:5000/team/agent-reference/cjson-cve-2023-53154@sha256:$hex

for bad in 'HTTP://x' 'https://reg.example' '-reg' 'reg.' 'reg:' 'reg:123456' 'reg:0' \
	'reg:65536' 'reg.example/../x' 'reg.example/.hidden' 'reg.example//x' 'reg..example' \
	'reg.-x.example' 'reg.example/a..b' 'reg.example/a___b' 'reg.example/a-' 'Reg.example' \
	'reg x' 'reg@sha256' 'ssebench' 'reg' 'docker.io' 'docker.io/team' 'index.docker.io/x' \
	'127.0.0.1:05000' ''; do
	: >"$log"
	run_cmd r "$SSEBENCH" images push --registry "$bad" "$img"
	is "$r_rc:$(wc -c <"$log")" "2:0" "registry '$bad' is refused (exit 2), before any docker command"
done
like "$("$SSEBENCH" images push --registry ssebench "$img" 2>&1)" "would be a Docker Hub account" \
	"a one-word host is refused as a Docker Hub account, where docker would push"
n=0
for good in localhost localhost:5000/a 127.0.0.1:5000 reg.example.com/team/sub \
	reg-1.example:443/a.b/c__d/e--f; do
	n=$((n + 1))
	run_cmd r "$SSEBENCH" images push --registry "$good" --lock "$SB_TMP/good-$n.lock" "$img"
	is "$r_rc" 0 "registry '$good' is taken"
done
run_cmd r "$SSEBENCH" images push "$img"
is "$r_rc" 2 "no --registry: exit 2"
like "$r_err" '--registry R is required' "and it says so"
run_cmd r "$SSEBENCH" images push --registry 127.0.0.1:5000
is "$r_rc" 2 "no image: exit 2"

: >"$log"
run_cmd r "$SSEBENCH" images push --registry 127.0.0.1:5000/team "$img"
is "$r_rc" 0 "a push: exit 0"
is "$r_out" "$img $pin" \
	"it prints the image and its pin: the digest the push reported for its tag, not a decoy"
like "$r_err" "0.1.0: digest: sha256:$hex" "the client's output is on stderr"
calls=$(cat "$log")
like "$calls" "^tag $id 127.0.0.1:5000/team/agent-reference/cjson-cve-2023-53154:0.1.0$" \
	"the image is tagged by its ID under R, without \$SSEBENCH_REGISTRY"
like "$calls" "^push 127.0.0.1:5000/team/agent-reference/cjson-cve-2023-53154:0.1.0$" "and pushed"
is "$(grep -c "^image inspect .* ${pin//./\\.}\$" "$log")" 1 "the pin is checked to name the image"
unlike "$calls" "^image rm" "and nothing is removed: another run of a job may be pushing the same image"
is "$(jq -c . images.lock.json)" \
	"{\"registry\":\"127.0.0.1:5000/team\",\"images\":[{\"image\":\"$img\",\"id\":\"$id\",\"pinned\":\"$pin\"}]}" \
	"images.lock.json records the image, its ID and its pin"

img2=localhost/ssebench/agent-dummy/cjson-cve-2023-53154:0.1.0
pin2=127.0.0.1:5000/team/agent-dummy/cjson-cve-2023-53154@sha256:$hex
run_cmd r "$SSEBENCH" images push --registry 127.0.0.1:5000/team "$img2" "$img"
is "$r_rc:$(jq -r '[.images[].image] | join(" ")' images.lock.json)" "0:$img2 $img" \
	"pushed again: one entry per image, the newest last"
jq '.images += [.images[0], .images[0]]' images.lock.json >dup.json && mv dup.json images.lock.json
run_cmd r "$SSEBENCH" images push --registry 127.0.0.1:5000/team "$img2"
is "$r_rc:$(jq -r '[.images[].image] | join(" ")' images.lock.json)" "0:$img $img2" \
	"a lock holding an image three times keeps one entry of it"

run_cmd r "$SSEBENCH" images push --registry 127.0.0.1:5000/team \
	localhost/ssebench/missing:1 localhost/ssebench/fails:1 "$img2"
is "$r_rc" 1 "a missing image and a failed push: exit 1"
like "$r_err" 'no local image localhost/ssebench/missing:1' "each says why"
like "$r_err" 'docker push 127.0.0.1:5000/team/fails:1 failed' "(the failed push too)"
is "$r_out" "$img2 $pin2" "and the others are still pushed"

: >"$log"
run_cmd r "$SSEBENCH" images push --registry 127.0.0.1:5000/team localhost/ssebench/untagged
is "$r_rc:$(grep -c '^push' "$log")" "1:0" "an image named without its tag: exit 1, not pushed"
like "$r_err" "name the image with its tag" "and it says so"

touch "$SB_TMP/nodigest"
run_cmd r "$SSEBENCH" images push --registry 127.0.0.1:5000/team "$img"
is "$r_rc" 1 "a push that reports no well-formed digest for its tag: exit 1"
like "$r_err" 'docker push 127.0.0.1:5000/team/agent-reference/cjson-cve-2023-53154:0.1.0 said no digest' \
	"and another tag's or a malformed digest is not taken for it"
rm -f "$SB_TMP/nodigest"
touch "$SB_TMP/moved"
run_cmd r "$SSEBENCH" images push --registry 127.0.0.1:5000/team "$img"
is "$r_rc" 1 "a pushed digest that names another image: exit 1"
like "$r_err" "names image $moved, not the one pushed" "and it says so"
rm -f "$SB_TMP/moved"

: >"$log"
run_cmd r "$SSEBENCH" images push --registry reg.example.com "$img"
is "$r_rc:$(wc -c <"$log")" "1:0" "the lock names another registry: exit 1, before any push"
like "$r_err" "is for registry '127.0.0.1:5000/team', not 'reg.example.com'" "and it says so"
run_cmd r "$SSEBENCH" images push --registry reg.example.com --lock "$SB_TMP/other.lock" "$img"
is "$r_rc:$(jq -r .registry "$SB_TMP/other.lock")" "0:reg.example.com" "--lock FILE: another lock"
echo '[1, 2]' >"$SB_TMP/broken.lock"
: >"$log"
run_cmd r "$SSEBENCH" images push --registry reg.example.com --lock "$SB_TMP/broken.lock" "$img"
is "$r_rc:$(cat "$SB_TMP/broken.lock"):$(wc -c <"$log")" "1:[1, 2]:0" \
	"a lock that is not one: exit 1 before any push, left as it was"
ln -s "$SB_TMP/other.lock" "$SB_TMP/link.lock"
: >"$log"
run_cmd r "$SSEBENCH" images push --registry reg.example.com --lock "$SB_TMP/link.lock" "$img"
is "$r_rc:$([ -L "$SB_TMP/link.lock" ] && echo link):$(wc -c <"$log")" "1:link:0" \
	"a lock that is a link is refused, not followed, before any push"

# Three pushes at once to one lock, 20 images each: each entry is added to what the others
# wrote (an flock of the lock's directory), so all 60 are there.
rm -f "$SB_TMP/shared.lock"
pids=()
for w in a b c; do
	names=()
	for n in $(seq 20); do names+=("localhost/ssebench/agent-$w$n/t:0.1.0"); done
	"$SSEBENCH" images push --registry reg.example.com --lock "$SB_TMP/shared.lock" "${names[@]}" \
		>"$SB_TMP/push-$w.out" 2>&1 &
	pids+=($!)
done
rcs=
for p in "${pids[@]}"; do
	wait "$p"
	rcs+=$?
done
is "$rcs:$(jq '.images | length' "$SB_TMP/shared.lock")" "000:60" \
	"three pushes at once to one lock: every entry of each is kept"

# A run on Kubernetes checks SSEBENCH_K8S_REGISTRY before it builds anything.
: >"$log"
run_cmd r env SSEBENCH_KUBECTL=/bin/true SSEBENCH_BACKEND=kubernetes SSEBENCH_K8S_REGISTRY='HTTP://x' \
	SSEBENCH_RESULTS="$SB_TMP/results" "$SSEBENCH" run --local "$SB_SRCDIR/datasets/pilot" \
	--task cjson-CVE-2023-53154 --agent dummy
is "$r_rc:$(wc -c <"$log")" "1:0" "run --backend kubernetes: a bad SSEBENCH_K8S_REGISTRY fails before any docker command"
like "$r_err" "SSEBENCH_K8S_REGISTRY: registry 'HTTP://x'" "and says which setting"

done_testing

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `ssebench images push --registry R [--lock FILE] IMAGE...` against a stand-in docker client
# (SSEBENCH_DOCKER): registry names that are not HOST[:PORT][/PATH] are refused before any
# command; each image is tagged R/NAME:TAG (NAME without $SSEBENCH_REGISTRY) and pushed; the
# pin is the digest of that repository among the engine's RepoDigests (not another
# repository's, not a malformed one); the images lock keeps one entry per image, newest pin,
# and refuses a lock for another registry; one image that fails leaves the others pushed;
# a run on Kubernetes refuses a bad SSEBENCH_K8S_REGISTRY before it builds.
# The push to a real registry and a cluster pulling by the pin: tests/k8s/t0120-backend.sh.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

command -v jq >/dev/null 2>&1 || bail "needs jq (scripts/setup installs it)"
plan_lazy

fake=$SB_TMP/docker
log=$SB_TMP/docker.log
hex=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
other=fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210
# Each call logged as one line of its arguments. RepoDigests lists decoys first: another
# repository's digest, and this one's with a short digest, before the real one (FAKE_GOOD=0
# leaves it out).
cat >"$fake" <<EOF
#!/bin/bash
printf '%s\n' "\$*" >>"$log"
case "\$1 \$2" in
"image inspect")
	name=\${*: -1}
	case "\$4" in
	'{{.Id}}') [[ \$name == *missing* ]] && exit 1; echo "sha256:id-of-\${name##*/}" ;;
	'{{json .RepoDigests}}')
		repo=\${name%:*}
		good=\$(cat "$SB_TMP/good" 2>/dev/null || echo 1)
		printf '["elsewhere/x@sha256:$other", "%s@sha256:abc"' "\$repo"
		[ "\$good" = 1 ] && printf ', "%s@sha256:$hex"' "\$repo"
		echo ']' ;;
	esac ;;
"tag "*) ;;
"push "*) [[ \$2 == *fails* ]] && exit 1; echo "pushed \$2" ;;
*) exit 1 ;;
esac
EOF
chmod +x "$fake"
export SSEBENCH_DOCKER=$fake SSEBENCH_REGISTRY=localhost/ssebench
cd "$SB_TMP" || bail "no scratch directory"
img=localhost/ssebench/agent-reference/cjson-cve-2023-53154:0.1.0

for bad in 'HTTP://x' 'https://reg.example' '-reg' 'reg.' 'reg:' 'reg:123456' 'reg/../x' \
	'reg/.hidden' 'reg//x' 'Reg.example' 'reg x' 'reg@sha256' ''; do
	: >"$log"
	run_cmd r "$SSEBENCH" images push --registry "$bad" "$img"
	is "$r_rc:$(wc -c <"$log")" "2:0" "registry '$bad' is refused (exit 2), before any docker command"
done
run_cmd r "$SSEBENCH" images push "$img"
is "$r_rc" 2 "no --registry: exit 2"
like "$r_err" '--registry R is required' "and it says so"
run_cmd r "$SSEBENCH" images push --registry 127.0.0.1:5000
is "$r_rc" 2 "no image: exit 2"

: >"$log"
run_cmd r "$SSEBENCH" images push --registry 127.0.0.1:5000/team "$img"
is "$r_rc" 0 "a push: exit 0"
is "$r_out" "$img 127.0.0.1:5000/team/agent-reference/cjson-cve-2023-53154@sha256:$hex" \
	"it prints the image and its pin: this repository's full digest, not a decoy"
like "$(cat "$log")" "tag $img 127.0.0.1:5000/team/agent-reference/cjson-cve-2023-53154:0.1.0" \
	"the image is tagged under R, without \$SSEBENCH_REGISTRY"
like "$(cat "$log")" "push 127.0.0.1:5000/team/agent-reference/cjson-cve-2023-53154:0.1.0" "and pushed"
is "$(jq -c . images.lock.json)" \
	"{\"registry\":\"127.0.0.1:5000/team\",\"images\":[{\"image\":\"$img\",\"id\":\"sha256:id-of-cjson-cve-2023-53154:0.1.0\",\"pinned\":\"127.0.0.1:5000/team/agent-reference/cjson-cve-2023-53154@sha256:$hex\"}]}" \
	"images.lock.json records the image, its local id and its pin"

img2=localhost/ssebench/agent-dummy/cjson-cve-2023-53154:0.1.0
run_cmd r "$SSEBENCH" images push --registry 127.0.0.1:5000/team "$img2" "$img"
is "$r_rc:$(jq -r '[.images[].image] | join(" ")' images.lock.json)" "0:$img2 $img" \
	"pushed again: one entry per image, the newest last"

run_cmd r "$SSEBENCH" images push --registry 127.0.0.1:5000/team \
	localhost/ssebench/missing:1 localhost/ssebench/fails:1 "$img2"
is "$r_rc" 1 "a missing image and a failed push: exit 1"
like "$r_err" 'no local image localhost/ssebench/missing:1' "each says why"
like "$r_err" 'docker push 127.0.0.1:5000/team/fails:1 failed' "(the failed push too)"
is "$r_out" "$img2 127.0.0.1:5000/team/agent-dummy/cjson-cve-2023-53154@sha256:$hex" \
	"and the others are still pushed"

echo 0 >"$SB_TMP/good"
run_cmd r "$SSEBENCH" images push --registry 127.0.0.1:5000/team "$img"
is "$r_rc" 1 "no well-formed digest of this repository: exit 1"
like "$r_err" 'gave no digest for 127.0.0.1:5000/team/agent-reference/cjson-cve-2023-53154' \
	"and the decoys are not taken for it"
echo 1 >"$SB_TMP/good"

run_cmd r "$SSEBENCH" images push --registry reg.example.com "$img"
is "$r_rc" 1 "the lock names another registry: exit 1"
like "$r_err" "is for registry '127.0.0.1:5000/team', not 'reg.example.com'" "and it says so"
run_cmd r "$SSEBENCH" images push --registry reg.example.com --lock "$SB_TMP/other.lock" "$img"
is "$r_rc:$(jq -r .registry "$SB_TMP/other.lock")" "0:reg.example.com" "--lock FILE: another lock"
echo '[1, 2]' >"$SB_TMP/broken.lock"
run_cmd r "$SSEBENCH" images push --registry reg.example.com --lock "$SB_TMP/broken.lock" "$img"
is "$r_rc:$(cat "$SB_TMP/broken.lock")" "1:[1, 2]" "a lock that is not one: exit 1, left as it was"

# A run on Kubernetes checks SSEBENCH_K8S_REGISTRY before it builds anything.
: >"$log"
run_cmd r env SSEBENCH_KUBECTL=/bin/true SSEBENCH_BACKEND=kubernetes SSEBENCH_K8S_REGISTRY='HTTP://x' \
	SSEBENCH_RESULTS="$SB_TMP/results" "$SSEBENCH" run --local "$SB_SRCDIR/datasets/pilot" \
	--task cjson-CVE-2023-53154 --agent dummy
is "$r_rc:$(wc -c <"$log")" "1:0" "run --backend kubernetes: a bad SSEBENCH_K8S_REGISTRY fails before any docker command"
like "$r_err" "SSEBENCH_K8S_REGISTRY: registry 'HTTP://x'" "and says which setting"

done_testing

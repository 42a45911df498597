# SPDX-License-Identifier: Apache-2.0
# tests/agents/lib-agents.sh: a stand-in for the model proxy on a run network of its own,
# for the agent suites. Sourced after tests/lib.sh and tests/e2e/lib-e2e.sh.
#
# stub_start: builds a small image holding tests/helpers/sb-stub-model (with the libraries it
# loads, run through their own loader, so it needs nothing from the image), makes an
# ordinary network <project>_default of its own, and starts the stub there. Each run then
# gets it on the run's own network (<project>_run-<id>) as "litellm" (SSEBENCH_PROXY_CONTAINER:
# the CLI attaches it), so there the stub is the only other member. The CLI makes each run's
# key through the stub's address on <project>_default (SSEBENCH_PROXY_ADMIN_URL).
# stub_log prints what the stub saw, one JSON object per request.

STUB=$SB_BUILDDIR/tests/helpers/sb-stub-model
AGENTS_PROJECT=sbagents$$
STUB_NAME=${AGENTS_PROJECT}-litellm
STUB_MASTER=sk-master-$$-$RANDOM
STUB_IMAGE=localhost/ssebench-test/stub-model:$$

stub_start() { # MODEL...: the models the stub's fixed key would see (run keys see their own)
	local ctx=$SB_TMP/stub-image lib so ip
	[ -x "$STUB" ] || bail "tests/helpers/sb-stub-model is not built"
	rm -rf "$ctx"
	mkdir -p "$ctx/stub/bin" "$ctx/stub/lib"
	cp "$STUB" "$ctx/stub/bin/"
	# Every library ldd resolves, the loader among them.
	ldd "$STUB" | awk '/=> \// { print $3 } /^\t\// { print $1 }' | while read -r so; do
		cp -L "$so" "$ctx/stub/lib/"
	done
	lib=$(cd "$ctx/stub/lib" && ls ld-linux*.so* | head -1)
	[ -n "$lib" ] || bail "no dynamic loader for the stub"
	cat >"$ctx/Dockerfile" <<EOF
FROM scratch
COPY stub /opt/stub
ENTRYPOINT ["/opt/stub/lib/$lib", "--library-path", "/opt/stub/lib", "/opt/stub/bin/sb-stub-model"]
EOF
	DOCKER_BUILDKIT=1 $DOCKER build -q -t "$STUB_IMAGE" "$ctx" >/dev/null ||
		bail "cannot build the stub image"
	$DOCKER network create --label ssebench.test=1 "${AGENTS_PROJECT}_default" >/dev/null ||
		bail "cannot create ${AGENTS_PROJECT}_default"
	local models=()
	for so in "$@"; do models+=(--model "$so"); done
	$DOCKER run -d --name "$STUB_NAME" --network "${AGENTS_PROJECT}_default" \
		--label ssebench.test=1 "$STUB_IMAGE" --port 4000 --master-key "$STUB_MASTER" \
		"${models[@]}" >/dev/null || bail "cannot start the stub"
	ip=$($DOCKER inspect --format \
		"{{(index .NetworkSettings.Networks \"${AGENTS_PROJECT}_default\").IPAddress}}" "$STUB_NAME")
	export COMPOSE_PROJECT_NAME=$AGENTS_PROJECT
	export SSEBENCH_PROXY_CONTAINER=$STUB_NAME
	export SSEBENCH_PROXY_ADMIN_URL=http://$ip:4000
	export SSEBENCH_PROXY_URL=http://litellm:4000
	export LITELLM_MASTER_KEY=$STUB_MASTER
	for _ in $(seq 50); do
		curl -s -m 1 "$SSEBENCH_PROXY_ADMIN_URL/health/liveliness" >/dev/null && return 0
		sleep 0.1
	done
	bail "the stub does not answer at $SSEBENCH_PROXY_ADMIN_URL: $($DOCKER logs "$STUB_NAME" 2>&1 | tail -5)"
}

stub_log() {
	$DOCKER logs "$STUB_NAME" 2>/dev/null
}

# The stub's log as a Python list l, and EXPR over it.
stub_eval() {
	stub_log >"$SB_TMP/stub.jsonl"
	python3 -c 'import json, sys; l = [json.loads(x) for x in open(sys.argv[1]) if x.startswith("{")]; print(eval(sys.argv[2]))' \
		"$SB_TMP/stub.jsonl" "$1" 2>&1
}

# run_key RUN_ID: the key the CLI made at the stub for the run (its alias is ssebench-<run id>).
run_key() {
	stub_eval "[x['key'] for x in l if x.get('path') == '/key/generate' and x['request'].get('key_alias') == 'ssebench-$1'][-1]"
}

stub_stop() {
	local net
	$DOCKER rm -f "$STUB_NAME" >/dev/null 2>&1
	# The run containers and their networks are gone (the CLI removes them); what is left is
	# ours: the stub's network and image, and any run network a killed run left (with the
	# host guard rule the CLI put on its bridge).
	for net in "${AGENTS_PROJECT}_default" $($DOCKER network ls --format '{{.Name}}' 2>/dev/null |
		grep -E "^${AGENTS_PROJECT}_run-"); do
		local br
		br=$($DOCKER network inspect --format '{{index .Options "com.docker.network.bridge.name"}}' \
			"$net" 2>/dev/null)
		$DOCKER network rm "$net" >/dev/null 2>&1
		case $br in sse-int*)
			while iptables -D INPUT -i "$br" -j REJECT --reject-with icmp-admin-prohibited 2>/dev/null; do :; done
			while iptables -D DOCKER-USER -i "$br" ! -o "$br" -j REJECT --reject-with icmp-admin-prohibited 2>/dev/null; do :; done
			;;
		esac
	done
	$DOCKER rmi "$STUB_IMAGE" >/dev/null 2>&1
	true
}

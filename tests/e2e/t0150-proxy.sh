#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# ssebench proxy up|status|down and ssebench doctor against a real engine (docs/models.md,
# "A proxy of your own"). The LiteLLM image is played by tests/helpers/sb-stub-model in a
# small image FROM the local Debian rootfs: it reads the configuration `proxy up` copies in
# (--config), takes its master key from LITELLM_MASTER_KEY as LiteLLM does, and answers
# the admin endpoints the CLI and doctor ask. Each check here fails without the commands:
# the container, its label, its port on 127.0.0.1 only, its configuration, no key on our
# output or in its command line, no staging file left; idempotent up and down; a proxy that
# dies at start shown with its log; doctor all ok with the proxy, FAIL without it and with a
# wrong master key; down leaves a container it did not make alone.
# The container name and port are this script's own, so it never meets another suite's.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
. "$SB_SRCDIR/tests/e2e/lib-e2e.sh"

e2e_require
STUB=$SB_BUILDDIR/tests/helpers/sb-stub-model
[ -x "$STUB" ] || bail "tests/helpers/sb-stub-model is not built (make check builds it)"
ROOTFS=localhost/ssebench/debian:bookworm
$DOCKER image inspect "$ROOTFS" >/dev/null 2>&1 || skip_all "no $ROOTFS (scripts/docker-up makes it)"
plan_lazy

NAME=ssebench-proxy-test-$$
STRANGER=ssebench-proxy-test-$$-stranger
IMAGE=localhost/ssebench-test/proxy-stub:$$
DEAD_IMAGE=localhost/ssebench-test/proxy-dead:$$
sb_cleanup_hook() {
	$DOCKER rm -f "$NAME" "$STRANGER" >/dev/null 2>&1
	$DOCKER rmi "$IMAGE" "$DEAD_IMAGE" >/dev/null 2>&1
	true
}

# The stub with every library it loads, run through its own loader (nothing from the image).
ctx=$SB_TMP/image
mkdir -p "$ctx/stub/bin" "$ctx/stub/lib"
cp "$STUB" "$ctx/stub/bin/"
ldd "$STUB" | awk '/=> \// { print $3 } /^\t\// { print $1 }' | while read -r so; do
	cp -L "$so" "$ctx/stub/lib/"
done
loader=$(cd "$ctx/stub/lib" && ls ld-linux*.so* | head -1)
cat >"$ctx/Dockerfile" <<EOF
FROM $ROOTFS
COPY stub /opt/stub
ENTRYPOINT ["/opt/stub/lib/$loader", "--library-path", "/opt/stub/lib", "/opt/stub/bin/sb-stub-model"]
EOF
DOCKER_BUILDKIT=1 $DOCKER build -q -t "$IMAGE" "$ctx" >/dev/null || bail "cannot build the stub image"
# A "LiteLLM" that says something and dies at once.
mkdir -p "$SB_TMP/dead"
cat >"$SB_TMP/dead/Dockerfile" <<EOF
FROM $ROOTFS
ENTRYPOINT ["/bin/sh", "-c", "echo 'proxy-test: cannot load the config' >&2; exit 3"]
EOF
DOCKER_BUILDKIT=1 $DOCKER build -q -t "$DEAD_IMAGE" "$SB_TMP/dead" >/dev/null ||
	bail "cannot build the dying image"

# A port nobody listens on now.
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# A workspace as a user makes it: ssebench init, then the settings in .env.
WS=$SB_TMP/ws
mkdir -p "$WS" "$SB_TMP/tmp"
cd "$WS" || bail "no workspace"
"$SSEBENCH" init >/dev/null || bail "ssebench init failed"
MASTER=$(sed -n 's/^LITELLM_MASTER_KEY=//p' .env)
[ -n "$MASTER" ] || bail "init wrote no master key"
ANTHROPIC=sk-ant-proxytest-$$-$RANDOM
cat >>.env <<EOF
SSEBENCH_PROXY_IMAGE=$IMAGE
SSEBENCH_PROXY_CONTAINER=$NAME
LITELLM_PORT=$PORT
SSEBENCH_PROXY_ADMIN_URL=http://127.0.0.1:$PORT
ANTHROPIC_API_KEY=$ANTHROPIC
OPENAI_API_KEY=sk-openai-proxytest-$$
GOOGLE_API_KEY=google-proxytest-$$
EOF
# Where `proxy up` stages its env file: it must be empty again afterwards.
export TMPDIR=$SB_TMP/tmp
# Nothing from the test's own environment may stand in for .env.
unset LITELLM_MASTER_KEY SSEBENCH_PROXY_KEY SSEBENCH_PROXY_CONTAINER SSEBENCH_PROXY_ADMIN_URL \
	SSEBENCH_PROXY_IMAGE LITELLM_PORT ANTHROPIC_API_KEY OPENAI_API_KEY GOOGLE_API_KEY DATABASE_URL
nmodels=$(grep -c 'model_name:' models/*.yaml | awk -F: '{ n += $2 } END { print n }')

secret_free() { # TEXT DESC: neither the master key nor a provider key in TEXT
	unlike "$1" "$MASTER|$ANTHROPIC" "$2"
}

# --- no proxy yet ------------------------------------------------------------------------
run_cmd r "$SSEBENCH" doctor
is "$r_rc" 1 "doctor without a proxy: exit 1"
like "$r_out" '^FAIL proxy .*-> ssebench proxy up' "doctor: the proxy FAILs, saying to run ssebench proxy up"
like "$r_out" "^FAIL proxy-container .*$NAME" "doctor: no proxy container for runs is a FAIL"
like "$r_out" '^ok   engine ' "doctor: the engine is ok"
like "$r_out" '^ok   dotenv .*mode 0600' "doctor: the .env init wrote is ok (0600)"
secret_free "$r_out$r_err" "doctor prints no key"

run_cmd r "$SSEBENCH" proxy status
is "$r_rc" 1 "proxy status without a container: exit 1"
like "$r_out" "$NAME: none" "proxy status: says there is none"

run_cmd r "$SSEBENCH" proxy down
is "$r_rc:$r_out" "0:no model proxy container $NAME: nothing to do" "proxy down without one: exit 0, nothing to do"

# --- up ----------------------------------------------------------------------------------
run_cmd r "$SSEBENCH" proxy up --wait 60
is "$r_rc" 0 "proxy up: exit 0"
[ "$r_rc" = 0 ] || diag "$r_err"
like "$r_out" "the model proxy runs: container $NAME, image $IMAGE, admin URL http://127.0.0.1:$PORT" \
	"proxy up: says where it runs"
like "$r_err" 'waiting for the model proxy' "proxy up: progress while it waits"
secret_free "$r_out$r_err" "proxy up prints no key"
is "$(ls -A "$SB_TMP/tmp")" "" "proxy up: its staging directory (the env file) is gone"
is "$($DOCKER inspect --format '{{index .Config.Labels "ssebench.proxy"}} {{.State.Running}} {{.HostConfig.RestartPolicy.Name}}' "$NAME" 2>&1)" \
	"1 true unless-stopped" "the container: labelled ssebench.proxy=1, running, restarted with the engine"
is "$($DOCKER inspect --format '{{range $p, $b := .HostConfig.PortBindings}}{{$p}} {{range $b}}{{.HostIp}}:{{.HostPort}}{{end}}{{end}}' "$NAME")" \
	"4000/tcp 127.0.0.1:$PORT" "the admin port is published on 127.0.0.1 only"
args=$($DOCKER inspect --format '{{.Path}} {{join .Args " "}}' "$NAME")
like "$args" '--config /etc/ssebench/litellm.yaml --port 4000$' "its command line: the configuration and the port"
secret_free "$args" "its command line holds no key"
envs=$($DOCKER inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$NAME")
like "$envs" "^LITELLM_MASTER_KEY=$MASTER\$" "its environment has the master key of .env"
like "$envs" "^ANTHROPIC_API_KEY=$ANTHROPIC\$" "and the provider keys the models name"
config=$($DOCKER exec "$NAME" /opt/stub/lib/"$loader" --library-path /opt/stub/lib /bin/cat /etc/ssebench/litellm.yaml 2>&1)
is "$(printf '%s' "$config" | python3 -c 'import json, sys
d = json.load(sys.stdin)
print(len(d["model_list"]), d["general_settings"]["master_key"], d["model_list"][0]["litellm_params"]["api_key"].startswith("os.environ/"))')" \
	"$nmodels os.environ/LITELLM_MASTER_KEY True" "its configuration: every model of models/, keys named, not written"
secret_free "$config" "its configuration holds no key"

run_cmd r "$SSEBENCH" proxy up
is "$r_rc" 0 "proxy up again: exit 0"
like "$r_out" "already runs: container $NAME" "proxy up again: says it already runs"
is "$($DOCKER ps -aq --filter "name=^$NAME\$" | wc -l)" 1 "still one container"

# --- status ------------------------------------------------------------------------------
run_cmd r "$SSEBENCH" proxy status
is "$r_rc" 0 "proxy status: exit 0"
like "$r_out" "^container: $NAME, running" "proxy status: running"
like "$r_out" "^image: +$IMAGE" "proxy status: its image"
like "$r_out" "^admin URL: http://127.0.0.1:$PORT, healthy" "proxy status: healthy at the admin URL"
like "$r_out" "^models: +$nmodels served" "proxy status: the models it serves"
like "$r_out" '^  claude-sonnet-4-6$' "proxy status: names them"
secret_free "$r_out$r_err" "proxy status prints no key"
run_cmd r "$SSEBENCH" proxy status --json
is "$(printf '%s' "$r_out" | python3 -c 'import json, sys
d = json.load(sys.stdin)
print(d["running"], d["ours"], d["healthy"], d["published"], len(d["models"]), d["models_error"])')" \
	"True True True 127.0.0.1:$PORT $nmodels None" "proxy status --json: running, ours, healthy, published, models"

# --- doctor with the proxy -----------------------------------------------------------------
run_cmd r "$SSEBENCH" doctor
is "$r_rc" 0 "doctor with the proxy up: exit 0"
unlike "$r_out" '^FAIL' "doctor: nothing FAILs"
for k in proxy master-key models-served proxy-database proxy-container provider-keys; do
	like "$r_out" "^ok   $k " "doctor: $k ok"
done
secret_free "$r_out$r_err" "doctor prints no key"
run_cmd r "$SSEBENCH" doctor --json
is "$(printf '%s' "$r_out" | python3 -c 'import json, sys
d = json.load(sys.stdin)
print(d["ok"], [c["name"] for c in d["checks"] if c["status"] == "FAIL"])')" "True []" "doctor --json: ok, no FAIL"

# A wrong master key: the proxy refuses it, and doctor says what to do.
run_cmd r env LITELLM_MASTER_KEY=sk-not-the-proxys-key "$SSEBENCH" doctor
is "$r_rc" 1 "doctor with a wrong master key: exit 1"
like "$r_out" '^FAIL master-key +the proxy refuses LITELLM_MASTER_KEY -> set LITELLM_MASTER_KEY' \
	"doctor: the master key FAILs, with what to do"
like "$r_out" '^skip models-served ' "doctor: the models are then not checked"

# Doctor changes nothing: the same files, the same one container.
before=$(cd "$WS" && ls -la --time-style=+%s.%N . models; $DOCKER ps -a --format '{{.Names}}' | sort)
"$SSEBENCH" doctor >/dev/null 2>&1
after=$(cd "$WS" && ls -la --time-style=+%s.%N . models; $DOCKER ps -a --format '{{.Names}}' | sort)
is "$after" "$before" "doctor leaves files and containers as they were"

# --- down --------------------------------------------------------------------------------
run_cmd r "$SSEBENCH" proxy down
is "$r_rc:$r_out" "0:stopped and removed the model proxy container $NAME" "proxy down: exit 0, says so"
is "$($DOCKER ps -aq --filter "name=^$NAME\$")" "" "proxy down: the container is gone"
run_cmd r "$SSEBENCH" proxy down
is "$r_rc" 0 "proxy down again: exit 0"

# A container of that name that proxy up did not make is never removed.
$DOCKER create --name "$STRANGER" "$ROOTFS" true >/dev/null || bail "cannot create $STRANGER"
run_cmd r env SSEBENCH_PROXY_CONTAINER="$STRANGER" "$SSEBENCH" proxy down
is "$r_rc" 1 "proxy down of a container it did not make: exit 1"
like "$r_err" "not made by ssebench proxy up" "proxy down: says why"
is "$($DOCKER ps -aq --filter "name=^$STRANGER\$" | wc -l)" 1 "proxy down: that container is still there"
run_cmd r env SSEBENCH_PROXY_CONTAINER="$STRANGER" "$SSEBENCH" proxy up
is "$r_rc" 1 "proxy up over a container it did not make: exit 1"
like "$r_err" "did not make" "proxy up: says why"

# --- a proxy that does not come up ---------------------------------------------------------
run_cmd r env SSEBENCH_PROXY_IMAGE="$DEAD_IMAGE" "$SSEBENCH" proxy up --wait 30
is "$r_rc" 1 "proxy up of a proxy that dies: exit 1"
like "$r_err" "stopped .* before it answered" "proxy up: says it stopped"
like "$r_err" '\| proxy-test: cannot load the config' "proxy up: shows the container's last log lines"
"$SSEBENCH" proxy down >/dev/null 2>&1

# --- no image: a litellm on this host is not started, and why is said ------------------------
mkdir -p "$SB_TMP/bin"
printf '#!/bin/sh\necho started >"%s/litellm-ran"\n' "$SB_TMP" >"$SB_TMP/bin/litellm"
chmod +x "$SB_TMP/bin/litellm"
sed -i '/^SSEBENCH_PROXY_IMAGE=/d' .env
run_cmd r env PATH="$SB_TMP/bin:$PATH" "$SSEBENCH" proxy up
is "$r_rc" 1 "proxy up with no image and a litellm on PATH: exit 1"
like "$r_err" "out of reach of every restricted run" "proxy up: says a host proxy cannot serve runs"
ok "$([ ! -e "$SB_TMP/litellm-ran" ]; echo $?)" "proxy up: the host's litellm is not started"
is "$($DOCKER ps -aq --filter "name=^$NAME\$")" "" "proxy up: no container made"

done_testing

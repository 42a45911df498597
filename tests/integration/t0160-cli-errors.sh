#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The CLI as a new user meets it: bad flags named as typed, settings named where they came
# from, hostile names and values escaped on every output, problems said instead of skipped,
# and the closest name offered. docs/cli.md (Errors and exit statuses).
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
. "$SB_SRCDIR/tests/integration/task-template.sh"

plan_lazy

ESC=$(printf '\033')
BEL=$(printf '\007')

# --- options: named as the user typed them -------------------------------------------------
while IFS='|' read -r args want; do
	# shellcheck disable=SC2086 # the option words are meant to split
	run_cmd r "$SSEBENCH" $args
	is "$r_rc" 2 "$args: exit 2"
	like "$r_err" "$want" "$args: $want"
	unlike "$r_err" "unknown option '-[a-zA-Z]'" "$args: no internal short code"
done <<'CASES'
run --task|^ssebench: error: --task needs a value$
run --task x --agent|--agent needs a value
run --task x --agent y --timeout|--timeout needs a value
run --task x --agent y --mode|--mode needs a value
runs stop --grace|--grace needs a value
tasks list --local|--local needs a value
dataset verify -j|-j needs a value
run --task x --agent y --keep-container=yes|--keep-container takes no value
tasks list --json=1|--json takes no value
run --task x --agent y --timeo 5|unknown option '--timeo' \(did you mean --timeout\? options are written in full\)
run --tas x --agent y|unknown option '--tas'
runs list --js|unknown option '--js' \(did you mean --json
tasks list --he|unknown option '--he'
run --task x --agent y --run-id ../x|--run-id: '\.\./x' is not a run id
CASES

# A bad setting is named as the setting, not as a flag the user never typed.
run_cmd r env SSEBENCH_EGRESS=bogus "$SSEBENCH" run --task x --agent y
is "$r_rc" 2 "SSEBENCH_EGRESS=bogus: exit 2"
like "$r_err" "SSEBENCH_EGRESS \(environment\) must be restricted or open" "SSEBENCH_EGRESS=bogus: named as the setting"
run_cmd r env SSEBENCH_RUNTIME='a b' "$SSEBENCH" run --task x --agent y
is "$r_rc:$(printf '%s' "$r_err" | head -1)" "2:ssebench: error: SSEBENCH_RUNTIME must be the name of a container runtime ([A-Za-z0-9][A-Za-z0-9._-]*), such as runsc" \
	"SSEBENCH_RUNTIME: named as the setting"

# --- .env: what is not used is said -------------------------------------------------------
w="$SB_TMP/ws"
mkdir -p "$w"
printf 'garbage line\nSSEBENCH_EGRESS=bogus\n1BAD=x\n\n# a comment\nexport SSEBENCH_MODE=x\n' >"$w/.env"
run_cmd r sh -c 'cd "$1" && "$2" run --task x --agent y' _ "$w" "$SSEBENCH"
like "$r_err" '^ssebench: warning: \.env:1: not a KEY=value line; ignored$' ".env: a line without '=' is named"
like "$r_err" '^ssebench: warning: \.env:3: not a KEY=value line; ignored$' ".env: a key that is no variable name is named"
unlike "$r_err" '\.env:(2|4|5|6):' ".env: good lines, blank lines and comments are not"
like "$r_err" "SSEBENCH_EGRESS \(\.env\) must be" ".env: a bad value is named as coming from .env"
for kind in symlink directory big; do
	rm -rf "$w/.env"
	case $kind in
	symlink) printf 'SSEBENCH_EGRESS=open\n' >"$SB_TMP/real.env" && ln -s "$SB_TMP/real.env" "$w/.env" ;;
	directory) mkdir "$w/.env" ;;
	big) head -c 1100000 /dev/zero | tr '\0' '#' >"$w/.env" ;;
	esac
	run_cmd r sh -c 'cd "$1" && "$2" run --task x --agent y --egress bogus' _ "$w" "$SSEBENCH"
	like "$r_err" '^ssebench: warning: \.env is not read, none of its settings is used: ' ".env as a $kind: the refusal is said"
done
rm -rf "$w/.env"

# --- hostile text from a task folder never reaches the terminal raw -------------------------
ds="$SB_TMP/hostile"
make_task "$ds" t1
# A project that retitles the terminal and forges a second output line.
sed -i "s/^project: demo/project: \"x\\\\e]0;pwned\\\\a\\\\nFORGED  c  line\"/" "$ds/t1/sse/config.yaml"
run_cmd r "$SSEBENCH" tasks list --local "$ds"
is "$r_rc" 0 "hostile project: tasks list exits 0"
unlike "$r_out" "$ESC|$BEL" "hostile project: no ESC or BEL on stdout"
is "$(printf '%s\n' "$r_out" | wc -l)" 2 "hostile project: no forged line (header and one task)"
like "$r_out" 'x\\x1b\]0;pwned\\x07\\nFORGED' "hostile project: shown escaped"
run_cmd r "$SSEBENCH" tasks list --local "$ds" --json
like "$r_out" '"project": "x\\u001[bB]\]0;pwned\\u0007\\nFORGED' "hostile project: --json keeps it, JSON-escaped"

# A task folder whose name holds a control byte is reported, escaped, not skipped.
ds="$SB_TMP/ctl"
make_task "$ds" t1
make_task "$ds" "t$(printf '\001')x"
run_cmd r "$SSEBENCH" dataset validate "$ds"
is "$r_rc" 1 "a folder name with a control byte: exit 1"
like "$r_out" "^$ds/t\\\\x01x: not a usable task folder: .*control character" "a folder name with a control byte: reported, escaped"
unlike "$r_out" "$(printf '\001')" "a folder name with a control byte: never raw"

# An agent folder with a hostile name or version: agents list escapes it.
ag="$SB_TMP/agents"
mkdir -p "$ag/evil"
printf 'name: evil\nversion: "1\\e[2J"\n' >"$ag/evil/agent.yaml"
run_cmd r env SSEBENCH_AGENTS="$ag" "$SSEBENCH" agents list
unlike "$r_out" "$ESC" "agents list: no ESC from an agent.yaml"

# --- validate: what broke, in words, once ---------------------------------------------------
ds="$SB_TMP/linkout"
make_task "$ds" t1
rm "$ds/t1/sse/config.yaml" && ln -s /etc/passwd "$ds/t1/sse/config.yaml"
run_cmd r "$SSEBENCH" dataset validate "$ds"
is "$r_rc" 1 "config linked out: exit 1"
like "$r_out" "^$ds/t1/sse/config.yaml: cannot read the task config: 'sse/config.yaml' leads outside its folder" "config linked out: said in words"
unlike "$r_out" "cross-device" "config linked out: no raw EXDEV text"
unlike "$r_out" "must copy sse/config.yaml" "config linked out: no second, misleading problem"
run_cmd r "$SSEBENCH" dataset validate "$SB_TMP/empty-ds-does-not-exist"
is "$r_rc" 1 "a missing dataset: exit 1"
mkdir -p "$SB_TMP/empty-ds"
run_cmd r "$SSEBENCH" dataset validate "$SB_TMP/empty-ds"
like "$r_out" "^$SB_TMP/empty-ds: the dataset has no task folders$" "an empty dataset: the folder as a whole, no :1:1"

# tasks list of an empty dataset: no header, no "0 of 0".
run_cmd r "$SSEBENCH" tasks list --local "$SB_TMP/empty-ds"
is "$r_rc" 1 "tasks list of an empty dataset: exit 1"
is "$r_out" "" "tasks list of an empty dataset: no header"
like "$r_err" "has no task folders" "tasks list of an empty dataset: says so"
unlike "$r_err" "0 of 0" "tasks list of an empty dataset: no '0 of 0'"

# --- runs results: a missing directory, and skipped summaries said --------------------------
run_cmd r "$SSEBENCH" runs results --dir "$SB_TMP/nonexistent"
is "$r_rc" 1 "runs results --dir missing: exit 1"
like "$r_err" "cannot read the results directory '$SB_TMP/nonexistent'" "runs results --dir missing: said"
res="$SB_TMP/results"
mkdir -p "$res/t/m/a/broken" "$res/t/m/a/array" "$res/t/m/a/going"
printf '{' >"$res/t/m/a/broken/summary.json"
printf '[]' >"$res/t/m/a/array/summary.json"
: >"$res/t/m/a/going/build.log"
run_cmd r "$SSEBENCH" runs results --dir "$res"
is "$r_rc" 0 "runs results with unusable summaries: exit 0"
like "$r_out" "^no runs in $res$" "runs results: no runs is said"
like "$r_err" "3 run directories skipped" "runs results: the skipped ones are counted"
like "$r_err" "array: summary.json is not a JSON object" "runs results: and why (not an object)"
like "$r_err" "going: no summary.json" "runs results: and why (no summary)"
run_cmd r "$SSEBENCH" runs results --dir "$res" --json
is "$(printf '%s' "$r_out" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["skipped"]))')" 3 "runs results --json: skipped lists them"

# --- no engine: said, with what to do -------------------------------------------------------
run_cmd r env DOCKER_HOST=unix://"$SB_TMP/no-engine.sock" "$SSEBENCH" runs list
is "$r_rc" 1 "runs list without an engine: exit 1"
like "$r_err" "the Docker engine does not answer \(.*\); start it with scripts/setup" "runs list without an engine: says what to do"

# --- the closest name -----------------------------------------------------------------------
ds="$SB_TMP/near"
make_task "$ds" libfoo-CVE-2024-1234
run_cmd r "$SSEBENCH" run --local "$ds" --task libfoo-CVE-2024-1243 --agent dummy
is "$r_rc" 1 "an unknown task: exit 1"
like "$r_err" "no task 'libfoo-CVE-2024-1243' in .* \(did you mean libfoo-CVE-2024-1234\?\)" "an unknown task: the closest is offered"
run_cmd r "$SSEBENCH" run --local "$ds" --task libfoo-CVE-2024-1234 --agent dumy
is "$r_rc" 1 "an unknown agent: exit 1"
like "$r_err" "no agent 'dumy' .*did you mean dummy\?" "an unknown agent: the closest is offered"

# --- runs exec: a usage, and a run that is not there -----------------------------------------
run_cmd r "$SSEBENCH" runs exec
is "$r_rc" 2 "runs exec without a run: exit 2"
run_cmd r "$SSEBENCH" runs exec some-run
is "$r_rc" 2 "runs exec without a command: exit 2"
like "$r_err" "no command to run" "runs exec without a command: says so"
run_cmd r "$SSEBENCH" runs exec --container nope some-run -- true
is "$r_rc" 2 "runs exec --container nope: exit 2"

# --- --json where there is data ---------------------------------------------------------------
run_cmd r "$SSEBENCH" agents list --json
is "$r_rc" 0 "agents list --json: exit 0"
is "$(printf '%s' "$r_out" | python3 -c 'import json,sys; a=json.load(sys.stdin); print(all(set(x) >= {"name","usable"} for x in a), any(x["name"]=="dummy" and x["usable"] for x in a))')" \
	"True True" "agents list --json: {name, usable, ...} for each, dummy usable"

# --- one vocabulary: --local, --task (ids and patterns), --json, help CMD ---------------------
ds="$SB_TMP/vocab"
make_task "$ds" alpha-1
make_task "$ds" beta-2
run_cmd r "$SSEBENCH" dataset validate --local "$ds" --json
is "$r_rc" 0 "dataset validate --local --json: exit 0"
is "$(printf '%s' "$r_out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["tasks"], d["valid"], d["problems"])')" \
	"2 True []" "dataset validate --json: tasks, valid, problems"
run_cmd r "$SSEBENCH" dataset validate "$ds"
is "$r_rc" 0 "dataset validate DIR (the old form): still works"
like "$r_err" "warning: 'dataset validate DIR' is deprecated" "dataset validate DIR: deprecated, said"
run_cmd r "$SSEBENCH" dataset validate --local "$ds/alpha-1/.." "$ds"
is "$r_rc" 2 "dataset validate --local DIR DIR: exit 2"
run_cmd r "$SSEBENCH" dataset verify --local "$ds" --task 'zz*'
is "$r_rc" 1 "dataset verify --task PATTERN that selects nothing: exit 1"
like "$r_err" "--task 'zz\*' matches no task of $ds" "dataset verify: the empty pattern is named"
run_cmd r "$SSEBENCH" dataset verify --local "$ds" --task alpha-2
like "$r_err" "no task 'alpha-2' in $ds \(did you mean alpha-1\?\)" "dataset verify --task: the closest id"
run_cmd r "$SSEBENCH" dataset verify --dir "$ds" alpha-2
like "$r_err" "warning: --dir DIR is deprecated" "dataset verify --dir: deprecated, said"
like "$r_err" "warning: 'dataset verify TASK...' is deprecated" "dataset verify TASK: deprecated, said"
run_cmd r "$SSEBENCH" run --local "$ds" --task 'zz*' --agent dummy
is "$r_rc" 1 "run --task PATTERN: a job; one that selects nothing: exit 1"
like "$r_err" "'zz\*' matches no task" "run --task PATTERN: said"

# run --json of one run: exactly one JSON object on stdout, even when it ends early.
run_cmd r "$SSEBENCH" run --local "$ds" --task nope --agent dummy --json
is "$r_rc" 1 "run --json, an unknown task: exit 1"
is "$(printf '%s' "$r_out" | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(d["task"], d["status"], d["scored"], d["exit_code"])')" \
	"nope None False 1" "run --json: one object, status null, exit_code 1"

# help CMD is CMD --help.
for c in "run" "runs exec" "dataset verify" "build-case" "agents list"; do
	# shellcheck disable=SC2086 # the command words are meant to split
	is "$("$SSEBENCH" help $c)" "$("$SSEBENCH" $c --help)" "help $c = $c --help"
done
run_cmd r "$SSEBENCH" help nope
is "$r_rc" 2 "help of an unknown command: exit 2"

# --- the review's findings (a red-team pass over this change) ----------------------------------
# A .env is the operator's, or it is not read: another uid's, or one others may write.
w2="$SB_TMP/ws2"
mkdir -p "$w2"
printf '#!/bin/sh\necho PWNED >>"%s/pwned"\n' "$w2" >"$w2/pwn" && chmod 755 "$w2/pwn"
printf 'SSEBENCH_DOCKER=%s/pwn\n' "$w2" >"$w2/.env" && chmod 600 "$w2/.env"
run_cmd r sh -c 'cd "$1" && "$2" runs list' _ "$w2" "$SSEBENCH"
ok "$([ ! -e "$w2/pwned" ]; echo $?)" ".env cannot name the docker program: nothing of it ran"
like "$r_err" "\.env: SSEBENCH_DOCKER is taken from the environment only" ".env's SSEBENCH_DOCKER: ignored, said"
if [ "$(id -u)" = 0 ]; then
	printf 'SSEBENCH_EGRESS=bogus\n' >"$w2/.env" && chown 1000 "$w2/.env"
	run_cmd r sh -c 'cd "$1" && "$2" run --task x --agent y' _ "$w2" "$SSEBENCH"
	like "$r_err" "\.env is not read, none of its settings is used: it belongs to uid 1000" \
		"a .env of another uid is not read"
	unlike "$r_err" "SSEBENCH_EGRESS" "and none of its settings is used"
	chown 0 "$w2/.env"
fi
printf 'SSEBENCH_EGRESS=bogus\n' >"$w2/.env.real" && chmod 600 "$w2/.env.real"
rm -f "$w2/.env" && ln "$w2/.env.real" "$w2/.env"
run_cmd r sh -c 'cd "$1" && "$2" run --task x --agent y' _ "$w2" "$SSEBENCH"
like "$r_err" "it has 2 names \(hard links\)" "a .env with a second name is not read"
run_cmd r sh -c 'cd "$1" && "$2" doctor --json' _ "$w2" "$SSEBENCH"
like "$r_out" '"detail": "\.env is not read: it has 2 names' "doctor says the same of it"
rm -f "$w2/.env" "$w2/.env.real"
printf 'SSEBENCH_EGRESS=bogus\n' >"$w2/.env"
chmod 666 "$w2/.env"
run_cmd r sh -c 'cd "$1" && "$2" run --task x --agent y' _ "$w2" "$SSEBENCH"
like "$r_err" "it is writable by others \(mode 0666\)" "a .env others may write is not read"
rm -f "$w2/.env"
run_cmd r env SSEBENCH_DOCKER=pwn PATH="$w2:$PATH" "$SSEBENCH" runs list
ok "$([ ! -e "$w2/pwned" ]; echo $?)" "a relative SSEBENCH_DOCKER is not looked up on PATH"
like "$r_err" "SSEBENCH_DOCKER must be an absolute path" "and that is said"

# Bidi overrides and invisible characters are shown, not obeyed; JSON is ASCII.
ds="$SB_TMP/bidi"
make_task "$ds" t1
sed -i "s/^project: demo/project: \"abc\\\\u202Efdp\\\\u200B\\\\u2028x\"/" "$ds/t1/sse/config.yaml"
run_cmd r "$SSEBENCH" tasks list --local "$ds"
like "$r_out" 'abc\\u\{202E\}fdp\\u\{200B\}\\u\{2028\}x' "tasks list: U+202E, U+200B, U+2028 shown escaped"
unlike "$r_out" "$(printf '\342\200\256')" "tasks list: no raw right-to-left override"
run_cmd r "$SSEBENCH" tasks list --local "$ds" --json
like "$r_out" '"project": "abc\\u202[eE]fdp' "tasks list --json: the override as \\u202e"
unlike "$r_out" "$(printf '\342\200\256')" "tasks list --json: ASCII only"

# An empty option value is no value.
for a in "run --local= --task x --agent y" "run --task= --agent y" "dataset verify --jobs="; do
	# shellcheck disable=SC2086
	run_cmd r "$SSEBENCH" $a
	is "$r_rc" 2 "$a: exit 2"
	like "$r_err" "needs a value \(it is empty\)" "$a: an empty value is named"
done

# A job's files cannot make `jobs remove --with-runs` remove what is not a run of the
# results directory, nor carry an id that is none.
export SSEBENCH_RESULTS="$SB_TMP/jr/results"
victim="$SB_TMP/victim/t/m/a/20250101-000000-abcdef"
mkdir -p "$victim" "$SSEBENCH_RESULTS/jobs/job-20250101-000000-aaaaaa"
jid=job-20250101-000000-aaaaaa
# The victim looks like the job's run in every way but where it is: the same job id, a run id
# that is its directory's name and the index's, the shape task/model/agent/run.
printf '{"job":{"id":"%s"},"run_id":"20250101-000000-abcdef"}' "$jid" >"$victim/summary.json"
printf '{"version":1,"job_id":"%s","created_at":"x","matrix":{},"options":{}}' "$jid" \
	>"$SSEBENCH_RESULTS/jobs/$jid/job.json"
printf '{"version":1,"job_id":"%s","slots":[{"key":"t/a/m/1","task":"t","agent":"a","model":"m","attempt":1,"state":"done","run_id":"20250101-000000-abcdef","dir":"%s","status":"failed","reason":null,"tries":[]}]}' \
	"$jid" "$victim" >"$SSEBENCH_RESULTS/jobs/$jid/index.json"
run_cmd r "$SSEBENCH" jobs remove --with-runs "$jid"
ok "$([ -d "$victim" ]; echo $?)" "jobs remove --with-runs: a run directory outside the results directory stays"
like "$r_err" "1 run directory of the job left alone: not below the results directory" "and that is said"
# Its own run, below the results directory and named as the index says, does go.
own="$SSEBENCH_RESULTS/t/m/a/20250101-000001-bbbbbb"
mkdir -p "$own" "$SSEBENCH_RESULTS/jobs/$jid"
printf '{"job":{"id":"%s"},"run_id":"20250101-000001-bbbbbb"}' "$jid" >"$own/summary.json"
printf '{"version":1,"job_id":"%s","created_at":"x","matrix":{},"options":{}}' "$jid" \
	>"$SSEBENCH_RESULTS/jobs/$jid/job.json"
printf '{"version":1,"job_id":"%s","slots":[{"key":"t/a/m/1","task":"t","agent":"a","model":"m","attempt":1,"state":"done","run_id":"20250101-000001-bbbbbb","dir":"%s","status":"failed","reason":null,"tries":[]}]}' \
	"$jid" "$own" >"$SSEBENCH_RESULTS/jobs/$jid/index.json"
run_cmd r "$SSEBENCH" jobs remove --with-runs "$jid"
is "$r_rc:$r_out" "0:removed job $jid and 1 run directory" "jobs remove --with-runs: the job's own run goes"
ok "$([ ! -e "$own" ] && [ -d "$SSEBENCH_RESULTS/t/m/a" ]; echo $?)" "and only it"
# A job directory that claims another job's id acts on nothing of the other's.
mkdir -p "$own" "$SSEBENCH_RESULTS/jobs/job-20250101-000000-eeeeee"
printf '{"job":{"id":"%s"},"run_id":"20250101-000001-bbbbbb"}' "$jid" >"$own/summary.json"
printf '{"version":1,"job_id":"%s","created_at":"x","matrix":{},"options":{}}' "$jid" \
	>"$SSEBENCH_RESULTS/jobs/job-20250101-000000-eeeeee/job.json"
run_cmd r "$SSEBENCH" jobs remove --with-runs job-20250101-000000-eeeeee
is "$r_rc" 1 "a job.json claiming another job's id: refused"
like "$r_err" "its job_id is not the directory's name" "and said"
ok "$([ -d "$own" ]; echo $?)" "the other job's run stays"
run_cmd r "$SSEBENCH" jobs remove "$SSEBENCH_RESULTS/jobs/job-20250101-000000-eeeeee/"
like "$r_err" "job_id is not the directory's name" "a job named with a trailing slash is the same job"
mkdir -p "$SB_TMP/jr/evil"
printf '{"version":1,"job_id":"job-x\\u001b]0;PWNED\\u0007"}' >"$SB_TMP/jr/evil/job.json"
run_cmd r "$SSEBENCH" jobs remove "$SB_TMP/jr/evil"
is "$r_rc" 1 "a job.json whose job_id is no job id: refused"
like "$r_err" "job.json is corrupt \(its job_id is no job id\)" "and said"
unset SSEBENCH_RESULTS

done_testing

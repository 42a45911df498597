#!/bin/bash
# One chat completion at $SSE_BASE_URL (http://HOST:PORT only) as $SSE_MODEL_NAME with
# $SSE_API_KEY, at most 20 s, the reply (headers and body) into $SSE_ARCHIVE/model-reply.txt.
out=$SSE_ARCHIVE/model-reply.txt
hp=${SSE_BASE_URL#http://}
hp=${hp%%/*}
body="{\"model\": \"$SSE_MODEL_NAME\", \"messages\": [{\"role\": \"user\", \"content\": \"hello\"}]}"
# shellcheck disable=SC2016 # expanded by the inner bash
timeout 20 bash -c 'exec 3<>"/dev/tcp/$1/$2" || exit 1
printf "POST /v1/chat/completions HTTP/1.0\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" \
	"$1:$2" "$3" "${#4}" "$4" >&3
cat <&3' call "${hp%:*}" "${hp##*:}" "$SSE_API_KEY" "$body" >"$out" 2>&1
echo "caller: exit $?: $(head -1 "$out")"

#!/bin/bash
# One chat completion at $SSE_BASE_URL (http://HOST:PORT only) as $SSE_MODEL_NAME with
# $SSE_API_KEY; the reply (headers and body) into $SSE_ARCHIVE/model-reply.txt.
out=$SSE_ARCHIVE/model-reply.txt
hp=${SSE_BASE_URL#http://}
hp=${hp%%/*}
body="{\"model\": \"$SSE_MODEL_NAME\", \"messages\": [{\"role\": \"user\", \"content\": \"hello\"}]}"
if ! exec 3<>"/dev/tcp/${hp%:*}/${hp##*:}"; then
	echo "caller: cannot reach $hp" | tee "$out"
	exit 1
fi
printf 'POST /v1/chat/completions HTTP/1.0\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s' \
	"$hp" "$SSE_API_KEY" "${#body}" "$body" >&3
timeout 30 cat <&3 >"$out"
echo "caller: $(head -1 "$out")"

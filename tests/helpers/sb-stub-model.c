/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sb-stub-model.c: a stand-in for the model proxy (a LiteLLM proxy), for tests/agents and
 * the CLI's proxy tests. It answers every model call with "I'm done." in the three wire
 * formats the bundled agents speak, streaming (server-sent events) or not:
 *   POST /v1/chat/completions  (OpenAI chat completions: OpenCode)
 *   POST /v1/responses         (OpenAI responses: Codex)
 *   POST /v1/messages          (Anthropic messages: Claude Code), and /count_tokens
 * (each also without the /v1 prefix), and it plays the part of the proxy's key management
 * the CLI uses: GET /health/liveliness, POST /key/generate and /key/delete (with the master
 * key), GET /key/info and GET /v1/models (with a run key), and GET /spend/logs?api_key=
 * <the key's SHA-256> (with the master key: a row per call served, 10 prompt and 3
 * completion tokens each).
 *
 * Scripted runs (tests/agents/scripts): with the master key, POST /script {"alias": A,
 * "turns": [...]} hands a script to the key the CLI will make with that key_alias
 * ("ssebench-<run id>"). Each turn is {"tool": NAME, "input": {...}} (a tool call),
 * {"tool": NAME, "custom": "text"} (a free-form tool call, OpenAI Responses only) or
 * {"text": "..."} (an answer that ends the agent's loop), with optional "expect" and
 * "expect_not" (a string or a list): what the tool's result, as the agent sends it back in
 * the next call, must and must not contain. The turn a call gets is worked out from the
 * conversation it carries (the tool calls already in it), never from a counter, so a retry
 * or a side call (a title, a summary: no tools offered) does not move the script on; a side
 * call gets "I'm done.". Each call is answered in the agent's wire format, streamed or not,
 * as the real APIs do. A result that fails its expectation ends the script: the stub logs
 * "script_error" and answers with text saying so. A turn whose command may outlast the
 * agent's wait for it has a "poll" (see poll_args): while the result says the command still
 * runs, the stub answers with the poll call instead of checking it, and the poll calls are
 * not turns.
 *
 * A model call needs a live key that may use the requested model (a run key, or the
 * --key fixed key); anything else gets 401, so a test can tell that the agent used the key
 * the run was given. Every request is logged as one JSON line on stdout: method, path,
 * the wire format, the model, streaming or not, the key it carried (this is a test's stub:
 * it logs keys whole, for the test to look for them elsewhere), whether the body held the
 * task prompt, and the status. A run key sees (GET /v1/models) its own models that the
 * stub serves (--model; all when none is given).
 *
 * It can also stand in for a LiteLLM image under `ssebench proxy up` (tests/e2e/t0140-proxy.sh):
 * --config FILE reads a LiteLLM configuration (the JSON `ssebench proxy up` writes) and serves
 * the model_name of each model_list entry, as --model would; without --master-key, the master
 * key is $LITELLM_MASTER_KEY, as LiteLLM's; the master key sees every served model at GET
 * /v1/models, and another key gets 401 there; GET /health/readiness says the database is
 * connected (the stub keeps its keys in memory, as if it had one).
 *
 *   sb-stub-model [--port N] [--master-key K] [--key K] [--model NAME]... [--config FILE]
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/fs.h"
#include "sb/json.h"
#include "sb/mem.h"
#include "sb/sha256.h"
#include "sb/parse.h"

#define BODY_MAX (16 * 1024 * 1024)
#define KEYS_MAX 256
#define DONE	 "I'm done."

struct key {
	char *key;
	json_t *models; /* array of names; empty: any */
	double spend;
	unsigned long calls; /* served: each billed 10 prompt and 3 completion tokens */
	bool live;
	char *alias;
	json_t *script; /* the turns of its script, or NULL: "I'm done." to every call */
};

/* POST /script: scripts waiting for the key of their alias. */
#define SCRIPTS_MAX 64
static struct {
	char *alias;
	json_t *turns;
} scripts[SCRIPTS_MAX];
static size_t nscripts;

/* What one model call answers: a tool call (tool, and args as JSON text or custom input) or a
 * text. */
struct answer {
	const char *tool;
	char *args;	     /* JSON text of the input (tool calls) */
	const char *custom;  /* free-form input (custom tool calls) */
	const char *ns;	     /* the tool's namespace (Responses: Codex's MCP tools), or NULL */
	const char *text;    /* the answer when tool is NULL */
	unsigned seq;	     /* tool calls already in the conversation: this call's unique id */
};

static struct key keys[KEYS_MAX];
static size_t nkeys;
static const char *master_key, *fixed_key;
static struct sb_argv served = SB_ARGV_INIT; /* --model: what a fixed key sees */
static unsigned long counter;

struct req {
	struct sb_buf body;
	bool too_big;
};

static void
log_line(json_t *j)
{
	_cleanup_free_ char *s = sb_json_dumps(j, JSON_COMPACT);

	printf("%s\n", s);
	fflush(stdout);
	json_decref(j);
}

static enum MHD_Result
respond(struct MHD_Connection *conn, unsigned status, const char *type, char *body)
{
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (r == NULL) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-cache");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result
respond_json(struct MHD_Connection *conn, unsigned status, json_t *j)
{
	char *s = sb_json_dumps(j, JSON_COMPACT);

	json_decref(j);
	return respond(conn, status, "application/json", s);
}

/* The key a request carries: Authorization: Bearer K, or x-api-key: K. */
static const char *
request_key(struct MHD_Connection *conn)
{
	const char *a = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");

	if (a != NULL && strncasecmp(a, "Bearer ", 7) == 0)
		return a + 7;
	return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "x-api-key");
}

static struct key *
find_key(const char *k)
{
	for (size_t i = 0; k != NULL && i < nkeys; i++)
		if (keys[i].live && strcmp(keys[i].key, k) == 0)
			return &keys[i];
	return NULL;
}

static bool
key_allows(const struct key *k, const char *model)
{
	const json_t *m;
	size_t i;

	if (json_array_size(k->models) == 0)
		return true;
	json_array_foreach (k->models, i, m)
		if (model != NULL && strcmp(json_string_value(m) ?: "", model) == 0)
			return true;
	return false;
}

/* "run-key", "fixed-key", "master", "none" or "bad" for the log. */
static const char *
key_kind(const char *k)
{
	if (k == NULL)
		return "none";
	if (master_key != NULL && strcmp(k, master_key) == 0)
		return "master";
	if (fixed_key != NULL && strcmp(k, fixed_key) == 0)
		return "fixed-key";
	return find_key(k) != NULL ? "run-key" : "bad";
}

/* --- the three wire formats ------------------------------------------------------------ */

static void
sse_event(struct sb_buf *b, const char *event, json_t *data)
{
	_cleanup_free_ char *s = sb_json_dumps(data, JSON_COMPACT);

	if (event != NULL)
		(void)sb_buf_appendf(b, NULL, "event: %s\n", event);
	(void)sb_buf_appendf(b, NULL, "data: %s\n\n", s);
	json_decref(data);
}

/* The first and second halves of a text, for streaming it in two deltas as the APIs do. */
static char *
half(const char *s, bool second)
{
	size_t n = strlen(s) / 2;

	/* Never split inside a UTF-8 sequence. */
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return second ? sb_xstrdup(s + n) : sb_xstrndup(s, n);
}

static char *
dump_free(json_t *j)
{
	char *s = sb_json_dumps(j, JSON_COMPACT);

	json_decref(j);
	return s;
}

/* OpenAI chat completions (OpenCode): a message, or tool_calls with finish_reason
 * "tool_calls"; streamed, the call's arguments come in two chunks after its name. */
static char *
chat_reply(const char *model, bool stream, const char *id, const struct answer *a)
{
	long long now = (long long)time(NULL);
	struct sb_buf b = SB_BUF_INIT(1 << 20);
	_cleanup_free_ char *call_id = sb_xasprintf("call_stub_%u", a->seq);
	const char *finish = a->tool != NULL ? "tool_calls" : "stop";

	if (!stream) {
		json_t *msg = a->tool != NULL
		    ? json_pack("{s:s, s:n, s:[{s:s, s:s, s:{s:s, s:s}}]}", "role", "assistant",
			  "content", "tool_calls", "id", call_id, "type", "function", "function",
			  "name", a->tool, "arguments", a->args)
		    : json_pack("{s:s, s:s}", "role", "assistant", "content", a->text);

		return dump_free(json_pack("{s:s, s:s, s:I, s:s, s:[{s:i, s:o, s:s}], s:{s:i, s:i, s:i}}",
		    "id", id, "object", "chat.completion", "created", now, "model", model, "choices",
		    "index", 0, "message", msg, "finish_reason", finish, "usage", "prompt_tokens", 10,
		    "completion_tokens", 3, "total_tokens", 13));
	}
#define CHUNK(delta, fin)                                                                      \
	sse_event(&b, NULL,                                                                    \
	    json_pack("{s:s, s:s, s:I, s:s, s:[{s:i, s:o, s:o}]}", "id", id, "object",         \
		"chat.completion.chunk", "created", now, "model", model, "choices", "index", 0, \
		"delta", (delta), "finish_reason", (fin)))
	if (a->tool != NULL) {
		_cleanup_free_ char *p1 = half(a->args, false), *p2 = half(a->args, true);

		CHUNK(json_pack("{s:s, s:n, s:[{s:i, s:s, s:s, s:{s:s, s:s}}]}", "role", "assistant",
			  "content", "tool_calls", "index", 0, "id", call_id, "type", "function",
			  "function", "name", a->tool, "arguments", ""),
		    json_null());
		CHUNK(json_pack("{s:[{s:i, s:{s:s}}]}", "tool_calls", "index", 0, "function",
			  "arguments", p1),
		    json_null());
		CHUNK(json_pack("{s:[{s:i, s:{s:s}}]}", "tool_calls", "index", 0, "function",
			  "arguments", p2),
		    json_null());
	} else {
		CHUNK(json_pack("{s:s, s:s}", "role", "assistant", "content", ""), json_null());
		CHUNK(json_pack("{s:s}", "content", a->text), json_null());
	}
#undef CHUNK
	sse_event(&b, NULL,
	    json_pack("{s:s, s:s, s:I, s:s, s:[{s:i, s:{}, s:s}], s:{s:i, s:i, s:i}}", "id", id,
		"object", "chat.completion.chunk", "created", now, "model", model, "choices", "index",
		0, "delta", "finish_reason", finish, "usage", "prompt_tokens", 10,
		"completion_tokens", 3, "total_tokens", 13));
	(void)sb_buf_appends(&b, "data: [DONE]\n\n", NULL);
	return sb_buf_detach(&b, NULL);
}

static json_t *
responses_usage(void)
{
	return json_pack("{s:i, s:i, s:i, s:{s:i}, s:{s:i}}", "input_tokens", 10, "output_tokens", 3,
	    "total_tokens", 13, "input_tokens_details", "cached_tokens", 0, "output_tokens_details",
	    "reasoning_tokens", 0);
}

/* The output item: a message, a function_call (arguments as JSON text) or a
 * custom_tool_call (free-form input); `done` with its content, else as it starts. */
static json_t *
responses_item(const struct answer *a, bool done)
{
	char item_id[32], call_id[32];

	snprintf(item_id, sizeof(item_id), "%s_stub_%u", a->tool != NULL ? "fc" : "msg", a->seq);
	snprintf(call_id, sizeof(call_id), "call_stub_%u", a->seq);
	if (a->tool != NULL && a->custom != NULL)
		return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "id", item_id, "type",
		    "custom_tool_call", "status", done ? "completed" : "in_progress", "call_id",
		    call_id, "name", a->tool, "input", done ? a->custom : "");
	if (a->tool != NULL && a->ns != NULL)
		return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "id", item_id, "type",
		    "function_call", "status", done ? "completed" : "in_progress", "call_id", call_id,
		    "namespace", a->ns, "name", a->tool, "arguments", done ? a->args : "");
	if (a->tool != NULL)
		return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "id", item_id, "type",
		    "function_call", "status", done ? "completed" : "in_progress", "call_id", call_id,
		    "name", a->tool, "arguments", done ? a->args : "");
	return json_pack("{s:s, s:s, s:s, s:s, s:o}", "id", item_id, "type", "message", "status",
	    done ? "completed" : "in_progress", "role", "assistant", "content",
	    done ? json_pack("[{s:s, s:s, s:[]}]", "type", "output_text", "text", a->text, "annotations")
		 : json_array());
}

static json_t *
responses_object(const char *id, const char *model, const struct answer *a, bool done)
{
	return json_pack("{s:s, s:s, s:I, s:s, s:s, s:o, s:o}", "id", id, "object", "response",
	    "created_at", (json_int_t)time(NULL), "status", done ? "completed" : "in_progress", "model",
	    model, "output", done ? json_pack("[o]", responses_item(a, true)) : json_array(), "usage",
	    done ? responses_usage() : json_null());
}

/* OpenAI Responses (Codex). */
static char *
responses_reply(const char *model, bool stream, const char *id, const struct answer *a)
{
	struct sb_buf b = SB_BUF_INIT(1 << 20);
	json_t *added;
	const char *item_id;
	int n = 0;

	if (!stream)
		return dump_free(responses_object(id, model, a, true));
	sse_event(&b, "response.created", json_pack("{s:s, s:i, s:o}", "type", "response.created",
					      "sequence_number", n++, "response",
					      responses_object(id, model, a, false)));
	added = responses_item(a, false);
	item_id = json_string_value(json_object_get(added, "id"));
	{
		_cleanup_free_ char *iid = sb_xstrdup(item_id);

		sse_event(&b, "response.output_item.added",
		    json_pack("{s:s, s:i, s:i, s:o}", "type", "response.output_item.added",
			"sequence_number", n++, "output_index", 0, "item", added));
		if (a->tool != NULL) {
			const char *whole = a->custom != NULL ? a->custom : a->args;
			const char *kind = a->custom != NULL ? "response.custom_tool_call_input"
							     : "response.function_call_arguments";
			const char *field = a->custom != NULL ? "input" : "arguments";
			_cleanup_free_ char *p1 = half(whole, false), *p2 = half(whole, true);
			_cleanup_free_ char *delta = sb_xasprintf("%s.delta", kind);
			_cleanup_free_ char *fin = sb_xasprintf("%s.done", kind);

			sse_event(&b, delta, json_pack("{s:s, s:i, s:s, s:i, s:s}", "type", delta,
						 "sequence_number", n++, "item_id", iid,
						 "output_index", 0, "delta", p1));
			sse_event(&b, delta, json_pack("{s:s, s:i, s:s, s:i, s:s}", "type", delta,
						 "sequence_number", n++, "item_id", iid,
						 "output_index", 0, "delta", p2));
			sse_event(&b, fin, json_pack("{s:s, s:i, s:s, s:i, s:s}", "type", fin,
					       "sequence_number", n++, "item_id", iid,
					       "output_index", 0, field, whole));
		} else {
			sse_event(&b, "response.content_part.added",
			    json_pack("{s:s, s:i, s:s, s:i, s:i, s:{s:s, s:s, s:[]}}", "type",
				"response.content_part.added", "sequence_number", n++, "item_id", iid,
				"output_index", 0, "content_index", 0, "part", "type", "output_text",
				"text", "", "annotations"));
			sse_event(&b, "response.output_text.delta",
			    json_pack("{s:s, s:i, s:s, s:i, s:i, s:s}", "type",
				"response.output_text.delta", "sequence_number", n++, "item_id", iid,
				"output_index", 0, "content_index", 0, "delta", a->text));
			sse_event(&b, "response.output_text.done",
			    json_pack("{s:s, s:i, s:s, s:i, s:i, s:s}", "type",
				"response.output_text.done", "sequence_number", n++, "item_id", iid,
				"output_index", 0, "content_index", 0, "text", a->text));
		}
	}
	sse_event(&b, "response.output_item.done",
	    json_pack("{s:s, s:i, s:i, s:o}", "type", "response.output_item.done", "sequence_number",
		n++, "output_index", 0, "item", responses_item(a, true)));
	sse_event(&b, "response.completed", json_pack("{s:s, s:i, s:o}", "type", "response.completed",
						"sequence_number", n++, "response",
						responses_object(id, model, a, true)));
	return sb_buf_detach(&b, NULL);
}

/* The content block of an Anthropic answer: text, or tool_use (with its input when done). */
static json_t *
message_block(const struct answer *a, bool done)
{
	char tid[32];
	json_t *input = NULL;

	if (a->tool == NULL)
		return json_pack("{s:s, s:s}", "type", "text", "text", done ? a->text : "");
	snprintf(tid, sizeof(tid), "toolu_stub_%u", a->seq);
	if (!done || sb_json_load(a->args, strlen(a->args), BODY_MAX, &input, NULL) < 0)
		input = json_object();
	return json_pack("{s:s, s:s, s:s, s:o}", "type", "tool_use", "id", tid, "name", a->tool,
	    "input", input);
}

static json_t *
message_object(const char *id, const char *model, const struct answer *a, bool done)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:n, s:{s:i, s:i}}", "id", id, "type",
	    "message", "role", "assistant", "model", model, "content",
	    done ? json_pack("[o]", message_block(a, true)) : json_array(), "stop_reason",
	    !done ? json_null() : json_string(a->tool != NULL ? "tool_use" : "end_turn"),
	    "stop_sequence", "usage", "input_tokens", 10, "output_tokens", done ? 3 : 0);
}

/* Anthropic messages (Claude Code); streamed, a tool's input comes as input_json_delta. */
static char *
messages_reply(const char *model, bool stream, const char *id, const struct answer *a)
{
	struct sb_buf b = SB_BUF_INIT(1 << 20);
	const char *whole = a->tool != NULL ? a->args : a->text;
	_cleanup_free_ char *p1 = half(whole, false), *p2 = half(whole, true);

	if (!stream)
		return dump_free(message_object(id, model, a, true));
	sse_event(&b, "message_start", json_pack("{s:s, s:o}", "type", "message_start", "message",
					   message_object(id, model, a, false)));
	sse_event(&b, "content_block_start",
	    json_pack("{s:s, s:i, s:o}", "type", "content_block_start", "index", 0, "content_block",
		message_block(a, false)));
	/* A tool's input in two pieces (a client must join them); a text in one, as the other
	 * formats send it, so that a test can find it whole in the raw stream. */
	if (a->tool != NULL)
		for (int i = 0; i < 2; i++)
			sse_event(&b, "content_block_delta",
			    json_pack("{s:s, s:i, s:{s:s, s:s}}", "type", "content_block_delta",
				"index", 0, "delta", "type", "input_json_delta", "partial_json",
				i ? p2 : p1));
	else
		sse_event(&b, "content_block_delta",
		    json_pack("{s:s, s:i, s:{s:s, s:s}}", "type", "content_block_delta", "index", 0,
			"delta", "type", "text_delta", "text", whole));
	sse_event(&b, "content_block_stop",
	    json_pack("{s:s, s:i}", "type", "content_block_stop", "index", 0));
	sse_event(&b, "message_delta",
	    json_pack("{s:s, s:{s:s, s:n}, s:{s:i}}", "type", "message_delta", "delta", "stop_reason",
		a->tool != NULL ? "tool_use" : "end_turn", "stop_sequence", "usage", "output_tokens",
		3));
	sse_event(&b, "message_stop", json_pack("{s:s}", "type", "message_stop"));
	return sb_buf_detach(&b, NULL);
}

/* --- scripts ---------------------------------------------------------------------------- */

/* The text of a tool result as an agent sends it back: a string, or parts with text. */
static void
result_text(const json_t *v, struct sb_buf *out)
{
	const json_t *part;
	size_t i;

	if (json_is_string(v)) {
		(void)sb_buf_appends(out, json_string_value(v), NULL);
		return;
	}
	json_array_foreach (v, i, part) {
		if (json_is_string(json_object_get(part, "text")))
			(void)sb_buf_appends(out, json_string_value(json_object_get(part, "text")), NULL);
		else if (json_is_string(json_object_get(part, "output")))
			(void)sb_buf_appends(out, json_string_value(json_object_get(part, "output")), NULL);
		(void)sb_buf_appends(out, "\n", NULL);
	}
	if (json_is_object(v) && json_is_string(json_object_get(v, "output")))
		(void)sb_buf_appends(out, json_string_value(json_object_get(v, "output")), NULL);
}

/*
 * A poll is a call the stub made because a turn's command was still running (the turn's
 * "poll"): it is not a turn of the script. `calls` is the turn the conversation had reached
 * when the agent made the call named `name`.
 */
static bool
is_poll(const json_t *script, unsigned calls, const char *name)
{
	const json_t *prev = calls > 0 ? json_array_get(script, calls - 1) : NULL;
	const char *tool = json_string_value(json_object_get(json_object_get(prev, "poll"), "tool"));

	return tool != NULL && name != NULL && strcmp(tool, name) == 0;
}

/*
 * The turn of `script` the conversation in `body` has reached (the tool calls already in it,
 * less the polls), the number of tool calls in it (`*seq`), and the text of the last tool
 * result in it. Per format: Anthropic tool_use blocks of assistant messages and tool_result
 * blocks; Responses function_call / custom_tool_call items and their *_output items; chat
 * tool_calls of assistant messages and role "tool" messages.
 */
static unsigned
conversation_turn(const char *format, const json_t *body, const json_t *script, unsigned *seq,
    struct sb_buf *last)
{
	const json_t *m, *c;
	size_t i, j;
	unsigned calls = 0;

	*seq = 0;
#define CALL(name)                                                  \
	do {                                                        \
		(*seq)++;                                           \
		if (!is_poll(script, calls, (name)))                \
			calls++;                                    \
	} while (0)
	if (strcmp(format, "responses") == 0) {
		json_array_foreach (json_object_get(body, "input"), i, m) {
			const char *t = json_string_value(json_object_get(m, "type")) ?: "";

			if (strcmp(t, "function_call") == 0 || strcmp(t, "custom_tool_call") == 0 ||
			    strcmp(t, "local_shell_call") == 0)
				CALL(json_string_value(json_object_get(m, "name")));
			else if (strcmp(t, "function_call_output") == 0 ||
			    strcmp(t, "custom_tool_call_output") == 0 ||
			    strcmp(t, "local_shell_call_output") == 0) {
				sb_buf_reset(last);
				result_text(json_object_get(m, "output"), last);
			}
		}
		return calls;
	}
	json_array_foreach (json_object_get(body, "messages"), i, m) {
		const char *role = json_string_value(json_object_get(m, "role")) ?: "";

		if (strcmp(format, "chat") == 0) {
			if (strcmp(role, "assistant") == 0)
				json_array_foreach (json_object_get(m, "tool_calls"), j, c)
					CALL(json_string_value(
					    json_object_get(json_object_get(c, "function"), "name")));
			else if (strcmp(role, "tool") == 0) {
				sb_buf_reset(last);
				result_text(json_object_get(m, "content"), last);
			}
			continue;
		}
		json_array_foreach (json_object_get(m, "content"), j, c) {
			const char *t = json_string_value(json_object_get(c, "type")) ?: "";

			if (strcmp(role, "assistant") == 0 && strcmp(t, "tool_use") == 0)
				CALL(json_string_value(json_object_get(c, "name")));
			else if (strcmp(t, "tool_result") == 0) {
				sb_buf_reset(last);
				result_text(json_object_get(c, "content"), last);
			}
		}
	}
#undef CALL
	return calls;
}

/*
 * The poll a turn asks for when its result says the command is still running: the turn's
 * "poll" {"while": TEXT, "tool": NAME, "id": FIELD, "input": {...}} and a result holding TEXT
 * followed by a number give the call NAME with `input` and FIELD set to that number (Codex:
 * exec_command yields after yield_time_ms, at most 30 s, with "Process running with session
 * ID N"; write_stdin with no characters waits for more). NULL when there is nothing to poll.
 */
static char *
poll_args(const json_t *turn, const char *result, const char **tool, json_int_t *id)
{
	const json_t *poll = json_object_get(turn, "poll");
	const char *when = json_string_value(json_object_get(poll, "while"));
	const char *field = json_string_value(json_object_get(poll, "id"));
	const char *at;
	json_t *in;
	char *s;

	*tool = json_string_value(json_object_get(poll, "tool"));
	if (when == NULL || field == NULL || *when == '\0' || *tool == NULL ||
	    (at = strstr(result, when)) == NULL)
		return NULL;
	at += strlen(when);
	if (*at < '0' || *at > '9')
		return NULL;
	errno = 0;
	*id = strtoll(at, NULL, 10);
	if (errno != 0)
		return NULL;
	in = json_is_object(json_object_get(poll, "input"))
	    ? json_deep_copy(json_object_get(poll, "input"))
	    : json_object();
	json_object_set_new(in, field, json_integer(*id));
	s = sb_json_dumps(in, JSON_COMPACT);
	json_decref(in);
	return s;
}

/* Does the text hold every one of `want` (a string or a list), or (`none`) none of them? */
static const char *
unmet(const json_t *want, const char *text, bool none)
{
	const json_t *w;
	size_t i;

	if (json_is_string(want))
		return (strstr(text, json_string_value(want)) != NULL) == none
		    ? json_string_value(want)
		    : NULL;
	json_array_foreach (want, i, w)
		if (json_is_string(w) && (strstr(text, json_string_value(w)) != NULL) == none)
			return json_string_value(w);
	return NULL;
}

/* Whether the request offers any tool (a side call, e.g. for a title, offers none). */
static bool
offers_tools(const json_t *body)
{
	return json_array_size(json_object_get(body, "tools")) > 0;
}

/*
 * The answer to a call under `key`'s script: the turn the conversation has reached, after
 * checking the previous turn's expectations on the result the agent sent back. `log` gets the
 * turn and, when an expectation fails, "script_error" (and the answer says so).
 */
static void
script_answer(const struct key *key, const char *format, const json_t *body, json_t *log,
    struct answer *a, char **msg)
{
	_cleanup_buf_ struct sb_buf last = SB_BUF_INIT(BODY_MAX);
	const json_t *turn, *prev;
	unsigned k;

	a->text = DONE;
	if (offers_tools(body)) {
		/* The names of the tools offered, for a test (or a person writing a script). */
		json_t *names = json_array(), *t;
		size_t i;

		json_array_foreach (json_object_get(body, "tools"), i, t) {
			const json_t *n = json_object_get(t, "name");

			if (!json_is_string(n))
				n = json_object_get(json_object_get(t, "function"), "name");
			if (!json_is_string(n))
				n = json_object_get(t, "type");
			json_array_append_new(names, json_is_string(n) ? json_copy((json_t *)n)
									: json_null());
		}
		json_object_set_new(log, "tools", names);
	}
	if (key == NULL || key->script == NULL || !offers_tools(body))
		return;
	k = conversation_turn(format, body, key->script, &a->seq, &last);
	prev = k > 0 ? json_array_get(key->script, k - 1) : NULL;
	if (prev != NULL) {
		const char *tool;
		json_int_t id;

		a->args = poll_args(prev, last.s ?: "", &tool, &id);
		if (a->args != NULL) {
			/* The previous turn's command is still running: wait for it, as a
			 * model would, before its result is checked. */
			a->tool = tool;
			json_object_set_new(log, "turn", json_integer(k - 1));
			json_object_set_new(log, "poll", json_integer(id));
			json_object_set_new(log, "tool", json_string(a->tool));
			return;
		}
	}
	json_object_set_new(log, "turn", json_integer(k));
	if (prev != NULL) {
		const char *miss = unmet(json_object_get(prev, "expect"), last.s ?: "", false);
		const char *bad = unmet(json_object_get(prev, "expect_not"), last.s ?: "", true);

		if (miss != NULL || bad != NULL) {
			_cleanup_free_ char *excerpt = sb_xstrndup(last.s ?: "", 2000);

			*msg = sb_xasprintf("SCRIPT FAILED at turn %u: the result %s '%s'", k - 1,
			    miss != NULL ? "lacks" : "holds", miss != NULL ? miss : bad);
			json_object_set_new(log, "script_error", json_string(*msg));
			json_object_set_new(log, "result", json_string(excerpt));
			a->text = *msg;
			return;
		}
	}
	turn = json_array_get(key->script, k);
	if (turn == NULL) {
		json_object_set_new(log, "script_end", json_true());
		return;
	}
	if (json_is_string(json_object_get(turn, "text"))) {
		a->text = json_string_value(json_object_get(turn, "text"));
		json_object_set_new(log, "script_end", json_true());
		return;
	}
	a->tool = json_string_value(json_object_get(turn, "tool"));
	a->custom = json_string_value(json_object_get(turn, "custom"));
	a->ns = json_string_value(json_object_get(turn, "namespace"));
	a->args = json_is_object(json_object_get(turn, "input"))
	    ? sb_json_dumps(json_object_get(turn, "input"), JSON_COMPACT)
	    : sb_xstrdup("{}");
	json_object_set_new(log, "tool", json_string(a->tool ?: "?"));
}

/* --- routes ---------------------------------------------------------------------------- */

/* The path without the /v1 prefix and without the query (MHD gives the URL without it). */
static const char *
route_of(const char *url)
{
	return strncmp(url, "/v1/", 4) == 0 ? url + 3 : url;
}

/* A phrase of the task prompt (src/libsb/prompt.c): did the agent send the model its task? */
#define PROMPT_MARK "You are a software security engineer"

static enum MHD_Result
model_call(struct MHD_Connection *conn, const char *format, json_t *body, const char *raw,
    json_t *log)
{
	const char *model = json_string_value(json_object_get(body, "model"));
	const char *k = request_key(conn);
	struct key *key = find_key(k);
	bool stream = json_is_true(json_object_get(body, "stream"));
	bool ok = (fixed_key != NULL && k != NULL && strcmp(k, fixed_key) == 0) ||
	    (key != NULL && key_allows(key, model));
	char id[64];
	char *reply;

	json_object_set_new(log, "format", json_string(format));
	json_object_set_new(log, "model", model ? json_string(model) : json_null());
	json_object_set_new(log, "stream", json_boolean(stream));
	json_object_set_new(log, "prompt_seen", json_boolean(strstr(raw, PROMPT_MARK) != NULL));
	json_object_set_new(log, "key", k != NULL ? json_string(k) : json_null());
	if (!ok || model == NULL) {
		json_object_set_new(log, "status", json_integer(401));
		log_line(log);
		return respond_json(conn, 401,
		    json_pack("{s:s, s:{s:s, s:s}}", "type", "error", "error", "type",
			"authentication_error", "message", "invalid key for this model"));
	}
	if (key != NULL) {
		key->spend += 0.0001;
		key->calls++;
	}
	snprintf(id, sizeof(id), "stub-%lu", ++counter);
	{
		struct answer a = { 0 };
		_cleanup_free_ char *msg = NULL;

		script_answer(key, format, body, log, &a, &msg);
		reply = strcmp(format, "chat") == 0 ? chat_reply(model, stream, id, &a)
		    : strcmp(format, "responses") == 0 ? responses_reply(model, stream, id, &a)
						       : messages_reply(model, stream, id, &a);
		free(a.args);
	}
	json_object_set_new(log, "status", json_integer(200));
	log_line(log);
	return respond(conn, 200, stream ? "text/event-stream" : "application/json", reply);
}

static enum MHD_Result
key_generate(struct MHD_Connection *conn, json_t *body, json_t *log)
{
	unsigned char r[16];
	char hex[33];
	struct key *k;

	if (nkeys >= KEYS_MAX || sb_random_bytes(r, sizeof(r), NULL) < 0) {
		log_line(log);
		return respond_json(conn, 500, json_pack("{s:s}", "error", "no more keys"));
	}
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(hex + 2 * i, 3, "%02x", r[i]);
	k = &keys[nkeys++];
	k->key = sb_xasprintf("sk-run-%s", hex);
	k->models = json_is_array(json_object_get(body, "models"))
	    ? json_deep_copy(json_object_get(body, "models"))
	    : json_array();
	k->live = true;
	k->alias = json_is_string(json_object_get(body, "key_alias"))
	    ? sb_xstrdup(json_string_value(json_object_get(body, "key_alias")))
	    : NULL;
	for (size_t i = 0; k->alias != NULL && i < nscripts; i++)
		if (strcmp(scripts[i].alias, k->alias) == 0)
			k->script = json_incref(scripts[i].turns);
	json_object_set_new(log, "scripted", json_boolean(k->script != NULL));
	/* The test's own stub: it logs the key it made, so a test can look for it elsewhere. */
	json_object_set_new(log, "key", json_string(k->key));
	json_object_set(log, "request", body);
	json_object_set_new(log, "status", json_integer(200));
	log_line(log);
	return respond_json(conn, 200,
	    json_pack("{s:s, s:O, s:O?}", "key", k->key, "models", k->models, "max_budget",
		json_object_get(body, "max_budget")));
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
    const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
	struct req *rq = *con_cls;
	const char *route = route_of(url), *k;
	json_t *body = NULL, *log;
	enum MHD_Result ret;

	(void)cls;
	(void)version;
	if (rq == NULL) {
		rq = sb_xcalloc(1, sizeof(*rq));
		rq->body = (struct sb_buf)SB_BUF_INIT(BODY_MAX);
		*con_cls = rq;
		return MHD_YES;
	}
	if (*upload_size > 0) {
		if (!rq->too_big && sb_buf_append(&rq->body, upload, *upload_size, NULL) < 0)
			rq->too_big = true;
		*upload_size = 0;
		return MHD_YES;
	}
	k = request_key(conn);
	log = json_pack("{s:s, s:s, s:s}", "method", method, "path", url, "auth", key_kind(k));
	if (rq->body.len > 0)
		(void)sb_json_load(rq->body.s, rq->body.len, BODY_MAX, &body, NULL);
	if (strcmp(method, "POST") == 0 && strcmp(route, "/chat/completions") == 0)
		ret = model_call(conn, "chat", body, rq->body.s, log);
	else if (strcmp(method, "POST") == 0 && strcmp(route, "/responses") == 0)
		ret = model_call(conn, "responses", body, rq->body.s, log);
	else if (strcmp(method, "POST") == 0 && strcmp(route, "/messages") == 0)
		ret = model_call(conn, "messages", body, rq->body.s, log);
	else if (strcmp(method, "POST") == 0 && strcmp(route, "/messages/count_tokens") == 0) {
		log_line(log);
		ret = respond_json(conn, 200, json_pack("{s:i}", "input_tokens", 10));
	} else if (strcmp(method, "GET") == 0 && strcmp(url, "/health/readiness") == 0) {
		log_line(log);
		ret = respond_json(conn, 200, json_pack("{s:s, s:s}", "status", "healthy", "db",
						     "connected"));
	} else if (strcmp(method, "GET") == 0 && strcmp(route, "/models") == 0 &&
		   master_key != NULL && k != NULL && strcmp(k, master_key) == 0) {
		json_t *data = json_array();

		for (size_t j = 0; j < served.n; j++)
			json_array_append_new(data, json_pack("{s:s, s:s, s:s}", "id", served.v[j],
							"object", "model", "owned_by", "stub"));
		log_line(log);
		ret = respond_json(conn, 200, json_pack("{s:s, s:o}", "object", "list", "data", data));
	} else if (strcmp(method, "GET") == 0 && strcmp(route, "/models") == 0 && find_key(k) == NULL &&
		   !(fixed_key != NULL && k != NULL && strcmp(k, fixed_key) == 0)) {
		/* As LiteLLM: a key it does not know is refused, not a missing page. */
		json_object_set_new(log, "status", json_integer(401));
		log_line(log);
		ret = respond_json(conn, 401, json_pack("{s:{s:s}}", "error", "message",
						      "Authentication Error"));
	} else if (strcmp(method, "GET") == 0 && strcmp(url, "/health/liveliness") == 0) {
		log_line(log);
		ret = respond(conn, 200, "application/json", sb_xstrdup("\"I'm alive!\""));
	} else if (strcmp(method, "POST") == 0 && strcmp(url, "/key/generate") == 0 &&
		   master_key != NULL && k != NULL && strcmp(k, master_key) == 0) {
		ret = key_generate(conn, body, log);
	} else if (strcmp(method, "POST") == 0 && strcmp(url, "/script") == 0 &&
		   master_key != NULL && k != NULL && strcmp(k, master_key) == 0) {
		const char *alias = json_string_value(json_object_get(body, "alias"));
		json_t *turns = json_object_get(body, "turns");
		size_t i;

		for (i = 0; alias != NULL && i < nscripts; i++)
			if (strcmp(scripts[i].alias, alias) == 0)
				break;
		if (alias == NULL || !json_is_array(turns) || i >= SCRIPTS_MAX) {
			json_object_set_new(log, "status", json_integer(400));
			log_line(log);
			ret = respond_json(conn, 400, json_pack("{s:s}", "error",
							     "a script is {alias, turns: [...]}"));
		} else {
			if (i == nscripts) {
				scripts[nscripts].alias = sb_xstrdup(alias);
				nscripts++;
			} else {
				json_decref(scripts[i].turns);
			}
			scripts[i].turns = json_incref(turns);
			json_object_set_new(log, "alias", json_string(alias));
			json_object_set_new(log, "turns", json_integer((json_int_t)json_array_size(turns)));
			json_object_set_new(log, "status", json_integer(200));
			log_line(log);
			ret = respond_json(conn, 200, json_pack("{s:s, s:I}", "alias", alias, "turns",
							     (json_int_t)json_array_size(turns)));
		}
	} else if (strcmp(method, "POST") == 0 && strcmp(url, "/key/delete") == 0 &&
		   master_key != NULL && k != NULL && strcmp(k, master_key) == 0) {
		json_t *del = json_array(), *v;
		size_t i;

		json_array_foreach (json_object_get(body, "keys"), i, v) {
			struct key *d = find_key(json_string_value(v));

			if (d != NULL) {
				d->live = false;
				json_array_append(del, v);
			}
		}
		json_object_set(log, "deleted", del);
		log_line(log);
		ret = respond_json(conn, 200, json_pack("{s:o}", "deleted_keys", del));
	} else if (strcmp(method, "GET") == 0 && strcmp(url, "/spend/logs") == 0 &&
		   master_key != NULL && k != NULL && strcmp(k, master_key) == 0) {
		/* LiteLLM's spend logs of a key, looked up by its SHA-256 (a key without "sk-"):
		 * a row per request served; [null] for a key it has no log of. */
		const char *want = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "api_key");
		json_t *rows = json_array();

		for (size_t i = 0; want != NULL && i < nkeys; i++) {
			char hash[65];

			sb_sha256_hex(keys[i].key, strlen(keys[i].key), hash);
			if (strcmp(hash, want) != 0)
				continue;
			for (unsigned long c = 0; c < keys[i].calls; c++)
				json_array_append_new(rows, json_pack("{s:s, s:i, s:i, s:i, s:f}",
				    "api_key", hash, "prompt_tokens", 10, "completion_tokens", 3,
				    "total_tokens", 13, "spend", 0.0001));
		}
		if (json_array_size(rows) == 0)
			json_array_append_new(rows, json_null());
		json_object_set_new(log, "api_key", want != NULL ? json_string(want) : json_null());
		log_line(log);
		ret = respond_json(conn, 200, rows);
	} else if (strcmp(method, "GET") == 0 && strcmp(url, "/key/info") == 0 && find_key(k)) {
		struct key *me = find_key(k);

		log_line(log);
		ret = respond_json(conn, 200,
		    json_pack("{s:s, s:{s:f, s:O}}", "key", "sk-...", "info", "spend", me->spend,
			"models", me->models));
	} else if (strcmp(method, "GET") == 0 && strcmp(route, "/models") == 0 &&
		   (find_key(k) != NULL || (fixed_key != NULL && k != NULL && !strcmp(k, fixed_key)))) {
		const struct key *me = find_key(k);
		json_t *data = json_array(), *m;
		size_t i;

		/* A run key sees its own models that the stub serves (--model), as a proxy
		 * sees only the models of its configuration. */
		if (me != NULL)
			json_array_foreach (me->models, i, m) {
				bool serves = served.n == 0;

				for (size_t j = 0; j < served.n; j++)
					serves = serves || strcmp(served.v[j], json_string_value(m) ?: "") == 0;
				if (serves)
					json_array_append_new(data, json_pack("{s:O, s:s, s:s}", "id", m,
									"object", "model", "owned_by",
									"stub"));
			}
		else
			for (size_t j = 0; j < served.n; j++)
				json_array_append_new(data, json_pack("{s:s, s:s, s:s}", "id",
								served.v[j], "object", "model",
								"owned_by", "stub"));
		log_line(log);
		ret = respond_json(conn, 200, json_pack("{s:s, s:o}", "object", "list", "data", data));
	} else {
		json_object_set_new(log, "status", json_integer(k != NULL && strcmp(key_kind(k), "bad") == 0
								 ? 401
								 : 404));
		log_line(log);
		ret = respond_json(conn, 404, json_pack("{s:s}", "error", "not found"));
	}
	json_decref(body);
	return ret;
}

static void
on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct req *rq = *con_cls;

	(void)cls, (void)conn, (void)toe;
	if (rq == NULL)
		return;
	sb_buf_release(&rq->body);
	free(rq);
	*con_cls = NULL;
}

/* --config FILE: serve the model_name of each model_list entry (LiteLLM's config, as JSON). */
static int
serve_config(const char *path)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(16 * 1024 * 1024);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	json_t *config = NULL, *m;
	size_t i;

	if (fd < 0 || sb_buf_read_fd(&b, fd, NULL) < 0 ||
	    sb_json_load(b.s, b.len, b.len + 1, &config, NULL) < 0) {
		fprintf(stderr, "sb-stub-model: cannot read the configuration %s\n", path);
		return -1;
	}
	json_array_foreach (json_object_get(config, "model_list"), i, m) {
		const char *name = json_string_value(json_object_get(m, "model_name"));

		if (name != NULL)
			sb_argv_push(&served, name);
	}
	json_decref(config);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = { { "port", required_argument, NULL, 'p' },
		{ "master-key", required_argument, NULL, 'm' }, { "key", required_argument, NULL, 'k' },
		{ "model", required_argument, NULL, 'M' }, { "version", no_argument, NULL, 'V' },
		{ "config", required_argument, NULL, 'c' }, { NULL, 0, NULL, 0 } };
	struct MHD_Daemon *d;
	struct sockaddr_in sa;
	uint64_t port = 4000;
	sigset_t sigs;
	int c, sfd;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (sb_parse_u64(optarg, 1, 65535, &port, NULL) < 0)
				return 2;
			break;
		case 'm': master_key = optarg; break;
		case 'k': fixed_key = optarg; break;
		case 'M': sb_argv_push(&served, optarg); break;
		case 'c':
			if (serve_config(optarg) < 0)
				return 2;
			break;
		case 'V': printf("sb-stub-model %s\n", PACKAGE_VERSION); return 0;
		default: return 2;
		}
	}
	if (master_key == NULL && getenv("LITELLM_MASTER_KEY") != NULL &&
	    *getenv("LITELLM_MASTER_KEY") != '\0')
		master_key = getenv("LITELLM_MASTER_KEY");
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_ANY);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	/* One thread serves everything: the key table needs no lock. */
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG,
	    (uint16_t)port, NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR, &sa,
	    MHD_OPTION_CONNECTION_LIMIT, 256u, MHD_OPTION_CONNECTION_TIMEOUT, 600u,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_END);
	if (d == NULL || sfd < 0) {
		fprintf(stderr, "sb-stub-model: cannot listen on port %llu\n", (unsigned long long)port);
		return 1;
	}
	log_line(json_pack("{s:s, s:I}", "listening", "0.0.0.0", "port", (json_int_t)port));
	for (;;) {
		struct signalfd_siginfo si;

		if (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			break;
	}
	MHD_stop_daemon(d);
	return 0;
}

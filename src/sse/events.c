/* SPDX-License-Identifier: Apache-2.0 */
/*
 * events.c: agent CLI event streams into dialog entries (docs/upstream.md, "The session
 * record" and "Agents").
 *
 * Each CLI prints one JSON object per line when it runs non-interactively. What we map:
 *   Claude Code (stream-json): "assistant" messages (text -> message, thinking -> thinking,
 *     tool_use -> tool running), "user" messages (tool_result -> tool success|error), and
 *     the final "result" (turns, tokens, outcome).
 *   Codex (exec --json): item.started/item.completed of agent_message (message), reasoning
 *     (thinking), command_execution (tool "bash"), file_change, mcp_tool_call
 *     ("mcp__<server>__<tool>"), web_search and todo_list (tools); turn.completed (a turn,
 *     its tokens); turn.failed and error (the outcome).
 *   OpenCode (run --format json): text (message), reasoning (thinking), tool_use (a tool,
 *     by its call id and state), step_finish (a turn, its tokens), error.
 * Anything else is ignored: a new event kind must not break a run, only go unrecorded.
 * A tool that never reported its end is closed as an error when the stream ends.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "sb/buf.h"
#include "sb/json.h"
#include "sb/limits.h"
#include "sb/mem.h"

#include "sse.h"

struct running {
	char *id, *name;
};

struct events {
	enum events_format fmt;
	struct sb_dialog *d;
	struct events_summary sum;
	struct running *tools;
	size_t ntools, ignored;
	size_t unparsed; /* lines that could not be read at all (counted in ignored too) */
	struct sb_buf line; /* a line of events_take, until its newline */
	bool line_over;	    /* it passed EVENTS_LINE_MAX: dropped */
};

int
events_format_parse(const char *name)
{
	static const char *const names[] = { [EVENTS_CLAUDE_CODE] = "claude-code",
		[EVENTS_CODEX] = "codex", [EVENTS_OPENCODE] = "opencode", [EVENTS_NONE] = "none" };

	for (size_t i = 0; i < SB_ARRAY_SIZE(names); i++)
		if (strcmp(name, names[i]) == 0)
			return (int)i;
	return -1;
}

struct events *
events_new(enum events_format fmt, struct sb_dialog *d)
{
	struct events *e = sb_xcalloc(1, sizeof(*e));

	e->fmt = fmt;
	e->d = d;
	e->line = (struct sb_buf)SB_BUF_INIT(EVENTS_LINE_MAX);
	return e;
}

int
events_take(struct events *e, const char *p, size_t n, struct sb_error **err)
{
	int r = 0;

	for (size_t i = 0; i < n; i++) {
		struct sb_error *one = NULL;

		if (p[i] != '\n') {
			if (!e->line_over && sb_buf_appendc(&e->line, p[i], NULL) < 0)
				e->line_over = true;
			continue;
		}
		/* Every line is fed whatever the one before did: the first error is returned. */
		if (e->line_over) {
			e->ignored++;
			e->unparsed++;
		}
		if (!e->line_over && events_feed(e, e->line.s, e->line.len, &one) < 0) {
			if (r == 0 && err != NULL && *err == NULL)
				*err = one;
			else
				sb_error_release(&one);
			r = -1;
		}
		sb_buf_reset(&e->line);
		e->line_over = false;
	}
	return r;
}

void
events_free(struct events *e)
{
	if (e == NULL)
		return;
	for (size_t i = 0; i < e->ntools; i++) {
		free(e->tools[i].id);
		free(e->tools[i].name);
	}
	free(e->tools);
	free(e->sum.last_text);
	free(e->sum.error);
	sb_buf_release(&e->line);
	free(e);
}

const struct events_summary *
events_summary(const struct events *e)
{
	return &e->sum;
}

size_t
events_ignored(const struct events *e)
{
	return e->ignored;
}

size_t
events_unparsed(const struct events *e)
{
	return e->unparsed;
}

static void
set_str(char **slot, const char *s)
{
	free(*slot);
	*slot = s != NULL ? sb_xstrdup(s) : NULL;
}

/* --- entries ----------------------------------------------------------------------- */

/* One entry, or nothing when there is no record to write to (consumes fields either way). */
static int
append(struct events *e, const char *type, json_t *fields, struct sb_error **err)
{
	if (e->d == NULL) {
		json_decref(fields);
		return 0;
	}
	return sb_dialog_append(e->d, type, fields, err);
}

static int
put_text(struct events *e, const char *type, const char *text, long long in, long long out,
    struct sb_error **err)
{
	json_t *f;

	if (text == NULL || *text == '\0')
		return 0;
	f = strcmp(type, "message") == 0 ? json_pack("{s:s, s:s}", "role", "assistant", "content", text)
					 : json_pack("{s:s}", "content", text);
	if (in > 0 || out > 0)
		json_object_set_new(f, "tokens", json_pack("{s:I, s:I}", "in", (json_int_t)in, "out",
						     (json_int_t)out));
	if (strcmp(type, "message") == 0)
		set_str(&e->sum.last_text, text);
	return append(e, type, f, err);
}

static struct running *
find_tool(struct events *e, const char *id)
{
	for (size_t i = 0; i < e->ntools; i++)
		if (strcmp(e->tools[i].id, id) == 0)
			return &e->tools[i];
	return NULL;
}

/* A tool starts (args may be NULL; borrowed). A second start of the same id is ignored. */
static int
tool_start(struct events *e, const char *id, const char *name, const json_t *args,
    struct sb_error **err)
{
	json_t *f;

	if (id == NULL || name == NULL || find_tool(e, id) != NULL)
		return 0;
	e->tools = sb_xreallocarray(e->tools, e->ntools + 1, sizeof(*e->tools));
	e->tools[e->ntools].id = sb_xstrdup(id);
	e->tools[e->ntools].name = sb_xstrdup(name);
	e->ntools++;
	f = json_pack("{s:s, s:s, s:s}", "tool_id", id, "name", name, "status", "running");
	if (args != NULL && !json_is_null(args))
		json_object_set_new(f, "args", json_deep_copy(args));
	return append(e, "tool", f, err);
}

/*
 * A tool ends: success with its result, or error with its message. An end without a start
 * (the stream began mid-way, or the CLI reports only finished tools) gets its start first,
 * so every result in the record is paired with a running entry.
 */
static int
tool_end(struct events *e, const char *id, const char *name, const json_t *args, bool ok,
    const char *text, struct sb_error **err)
{
	struct running *t;
	_cleanup_free_ char *tname = NULL;
	json_t *f;

	if (id == NULL)
		return 0;
	if (find_tool(e, id) == NULL && tool_start(e, id, name ? name : "tool", args, err) < 0)
		return -1;
	t = find_tool(e, id);
	if (t == NULL)
		return 0;
	tname = TAKE_PTR(t->name);
	free(t->id);
	*t = e->tools[--e->ntools];
	f = json_pack("{s:s, s:s, s:s}", "tool_id", id, "name", tname, "status", ok ? "success" : "error");
	json_object_set_new(f, ok ? "result" : "error", json_string(text ? text : ""));
	return append(e, "tool", f, err);
}

int
events_finish(struct events *e, struct sb_error **err)
{
	/* A last line the stream ended without a newline after. */
	if (e->line.len > 0 && !e->line_over && events_feed(e, e->line.s, e->line.len, err) < 0)
		return -1;
	sb_buf_reset(&e->line);
	e->line_over = false;
	while (e->ntools > 0) {
		_cleanup_free_ char *id = sb_xstrdup(e->tools[e->ntools - 1].id);

		if (tool_end(e, id, NULL, NULL, false, "the agent ended before the tool did", err) < 0)
			return -1;
	}
	return 0;
}

/* The text of a tool result: a string, or the text parts of an array of content blocks. */
static char *
result_text(const json_t *v)
{
	struct sb_buf b = SB_BUF_INIT(SB_DIALOG_ENTRY_MAX);
	const json_t *p;
	size_t i;

	if (json_is_string(v))
		return sb_xstrdup(json_string_value(v));
	json_array_foreach (v, i, p) {
		const char *t = json_string_value(json_object_get(p, "text"));

		if (t != NULL)
			(void)sb_buf_appendf(&b, NULL, "%s%s", b.len ? "\n" : "", t);
	}
	if (!json_is_array(v) && v != NULL && !json_is_null(v)) {
		_cleanup_free_ char *s = sb_json_dumps(v, JSON_COMPACT);

		(void)sb_buf_appends(&b, s, NULL);
	}
	return sb_buf_detach(&b, NULL);
}

/*
 * A count from the agent CLI's stream (its tokens, its turns): what that program printed,
 * so any integer. Counts are kept in [0, EVENTS_COUNT_MAX] (2^53, exact in every JSON
 * reader): a negative one is 0, a larger one the bound, and sums saturate there (a sum of
 * long longs past their range is undefined behaviour).
 */
#define EVENTS_COUNT_MAX (1LL << 53)

static long long
num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	json_int_t n = json_is_integer(v) ? json_integer_value(v) : 0;

	return n < 0 ? 0 : n > EVENTS_COUNT_MAX ? EVENTS_COUNT_MAX : (long long)n;
}

static long long
sum_counts(long long a, long long b)
{
	return a > EVENTS_COUNT_MAX - b ? EVENTS_COUNT_MAX : a + b;
}

/* One more turn, with its tokens: usage's in_key and out_key (Codex's and OpenCode's). */
static void
add_turn(struct events *e, const json_t *usage, const char *in_key, const char *out_key)
{
	e->sum.turns = sum_counts(e->sum.turns, 1);
	e->sum.tokens_in = sum_counts(e->sum.tokens_in, num(usage, in_key));
	e->sum.tokens_out = sum_counts(e->sum.tokens_out, num(usage, out_key));
}

/* --- Claude Code --------------------------------------------------------------------- */

static int
claude_event(struct events *e, const json_t *ev, struct sb_error **err)
{
	const char *type = json_string_value(json_object_get(ev, "type"));
	const json_t *msg = json_object_get(ev, "message");
	const json_t *content = json_object_get(msg, "content"), *c;
	const json_t *usage = json_object_get(msg, "usage");
	size_t i;

	if (type == NULL)
		return 1;
	if (strcmp(type, "assistant") == 0) {
		json_array_foreach (content, i, c) {
			const char *ct = json_string_value(json_object_get(c, "type"));
			int r = 0;

			if (ct == NULL)
				continue;
			if (strcmp(ct, "text") == 0)
				r = put_text(e, "message", json_string_value(json_object_get(c, "text")),
				    num(usage, "input_tokens"), num(usage, "output_tokens"), err);
			else if (strcmp(ct, "thinking") == 0)
				r = put_text(e, "thinking",
				    json_string_value(json_object_get(c, "thinking")), 0, 0, err);
			else if (strcmp(ct, "tool_use") == 0)
				r = tool_start(e, json_string_value(json_object_get(c, "id")),
				    json_string_value(json_object_get(c, "name")),
				    json_object_get(c, "input"), err);
			if (r < 0)
				return -1;
		}
		return 0;
	}
	if (strcmp(type, "user") == 0) {
		json_array_foreach (content, i, c) {
			const char *ct = json_string_value(json_object_get(c, "type"));
			_cleanup_free_ char *text = NULL;

			if (ct == NULL || strcmp(ct, "tool_result") != 0)
				continue;
			text = result_text(json_object_get(c, "content"));
			if (tool_end(e, json_string_value(json_object_get(c, "tool_use_id")), NULL, NULL,
				!json_is_true(json_object_get(c, "is_error")), text, err) < 0)
				return -1;
		}
		return 0;
	}
	if (strcmp(type, "result") == 0) {
		const char *sub = json_string_value(json_object_get(ev, "subtype"));
		const char *res = json_string_value(json_object_get(ev, "result"));
		const json_t *u = json_object_get(ev, "usage");

		e->sum.turns = num(ev, "num_turns");
		e->sum.tokens_in = sum_counts(sum_counts(num(u, "input_tokens"),
						  num(u, "cache_read_input_tokens")),
		    num(u, "cache_creation_input_tokens"));
		e->sum.tokens_out = num(u, "output_tokens");
		if (res != NULL && *res != '\0')
			set_str(&e->sum.last_text, res);
		if (json_is_true(json_object_get(ev, "is_error")) ||
		    (sub != NULL && strcmp(sub, "success") != 0)) {
			e->sum.failed = true;
			set_str(&e->sum.error, sub != NULL ? sub : "error");
		}
		return 0;
	}
	return type != NULL && strcmp(type, "system") == 0 ? 0 : 1;
}

/* --- Codex ----------------------------------------------------------------------------- */

static int
codex_item(struct events *e, const json_t *item, bool done, struct sb_error **err)
{
	const char *type = json_string_value(json_object_get(item, "type"));
	const char *id = json_string_value(json_object_get(item, "id"));
	const char *status = json_string_value(json_object_get(item, "status"));

	if (type == NULL)
		return 1;
	if (strcmp(type, "agent_message") == 0)
		return done ? put_text(e, "message", json_string_value(json_object_get(item, "text")),
				  0, 0, err)
			    : 0;
	if (strcmp(type, "reasoning") == 0)
		return done ? put_text(e, "thinking", json_string_value(json_object_get(item, "text")),
				  0, 0, err)
			    : 0;
	if (strcmp(type, "error") == 0) {
		if (done)
			set_str(&e->sum.error, json_string_value(json_object_get(item, "message")));
		return 0;
	}
	{
		_cleanup_free_ char *name = NULL, *text = NULL;
		json_t *args = NULL;
		bool ok = status == NULL || strcmp(status, "failed") != 0;
		int r;

		if (strcmp(type, "command_execution") == 0) {
			name = sb_xstrdup("bash");
			args = json_pack("{s:O?}", "command", json_object_get(item, "command"));
			text = sb_xstrdup(
			    json_string_value(json_object_get(item, "aggregated_output")) ?: "");
			if (json_is_integer(json_object_get(item, "exit_code")) &&
			    json_integer_value(json_object_get(item, "exit_code")) != 0)
				ok = false;
		} else if (strcmp(type, "mcp_tool_call") == 0) {
			const json_t *res = json_object_get(item, "result");
			const json_t *er = json_object_get(item, "error");

			name = sb_xasprintf("mcp__%s__%s",
			    json_string_value(json_object_get(item, "server")) ?: "?",
			    json_string_value(json_object_get(item, "tool")) ?: "?");
			args = json_deep_copy(json_object_get(item, "arguments"));
			if (er != NULL && !json_is_null(er)) {
				ok = false;
				text = result_text(json_object_get(er, "message") ?: er);
			} else {
				text = result_text(json_object_get(res, "content") ?: res);
			}
		} else if (strcmp(type, "file_change") == 0 || strcmp(type, "web_search") == 0 ||
			   strcmp(type, "todo_list") == 0) {
			name = sb_xstrdup(type);
			args = json_deep_copy(item);
			json_object_del(args, "id");
			json_object_del(args, "type");
			json_object_del(args, "status");
			text = sb_xstrdup(status ? status : "done");
		} else {
			return 1;
		}
		r = done ? tool_end(e, id, name, args, ok, text, err) : tool_start(e, id, name, args, err);
		json_decref(args);
		return r;
	}
}

static int
codex_event(struct events *e, const json_t *ev, struct sb_error **err)
{
	const char *type = json_string_value(json_object_get(ev, "type"));

	if (type == NULL)
		return 1;
	if (strcmp(type, "item.started") == 0)
		return codex_item(e, json_object_get(ev, "item"), false, err);
	if (strcmp(type, "item.completed") == 0)
		return codex_item(e, json_object_get(ev, "item"), true, err);
	if (strcmp(type, "turn.completed") == 0) {
		add_turn(e, json_object_get(ev, "usage"), "input_tokens", "output_tokens");
		return 0;
	}
	if (strcmp(type, "turn.failed") == 0 || strcmp(type, "error") == 0) {
		const json_t *er = json_object_get(ev, "error");
		const char *m = json_string_value(json_object_get(er ?: ev, "message"));

		e->sum.failed = true;
		set_str(&e->sum.error, m != NULL ? m : type);
		return 0;
	}
	return strcmp(type, "thread.started") == 0 || strcmp(type, "turn.started") == 0 ||
		   strcmp(type, "item.updated") == 0
	    ? 0
	    : 1;
}

/* --- OpenCode -------------------------------------------------------------------------- */

static int
opencode_event(struct events *e, const json_t *ev, struct sb_error **err)
{
	const char *type = json_string_value(json_object_get(ev, "type"));
	const json_t *part = json_object_get(ev, "part");

	if (type == NULL)
		return 1;
	if (strcmp(type, "text") == 0)
		return put_text(e, "message", json_string_value(json_object_get(part, "text")), 0, 0,
		    err);
	if (strcmp(type, "reasoning") == 0)
		return put_text(e, "thinking", json_string_value(json_object_get(part, "text")), 0, 0,
		    err);
	if (strcmp(type, "tool_use") == 0) {
		const json_t *state = json_object_get(part, "state");
		const char *st = json_string_value(json_object_get(state, "status"));
		const char *id = json_string_value(json_object_get(part, "callID"));
		const char *name = json_string_value(json_object_get(part, "tool"));
		const json_t *input = json_object_get(state, "input");
		_cleanup_free_ char *text = NULL;

		if (st == NULL || strcmp(st, "pending") == 0 || strcmp(st, "running") == 0)
			return tool_start(e, id, name, input, err);
		if (strcmp(st, "completed") == 0)
			text = result_text(json_object_get(state, "output"));
		else
			text = result_text(json_object_get(state, "error"));
		return tool_end(e, id, name, input, strcmp(st, "completed") == 0, text, err);
	}
	if (strcmp(type, "step_finish") == 0) {
		add_turn(e, json_object_get(part, "tokens"), "input", "output");
		return 0;
	}
	if (strcmp(type, "error") == 0) {
		const json_t *er = json_object_get(ev, "error");
		const char *m = json_string_value(json_object_get(json_object_get(er, "data"), "message"));

		e->sum.failed = true;
		set_str(&e->sum.error, m ?: json_string_value(json_object_get(er, "name")) ?: "error");
		return 0;
	}
	return strcmp(type, "step_start") == 0 ? 0 : 1;
}

/*
 * A copy of a JSON text with every escaped surrogate that is not half of a pair (\ud800 on
 * its own, a stray \udc00) made \ufffd: JavaScript's JSON.stringify writes such strings,
 * jansson refuses them, and a tool call must not drop out of the record for a lone half.
 */
static char *
mend_surrogates(const char *s, size_t len)
{
	struct sb_buf b = SB_BUF_INIT(len + 1);

	for (size_t i = 0; i < len;) {
		unsigned hi, lo;

		if (s[i] != '\\' || i + 1 >= len) {
			(void)sb_buf_appendc(&b, s[i++], NULL);
			continue;
		}
		if (s[i + 1] != 'u' || i + 6 > len || sscanf(s + i + 2, "%4x", &hi) != 1) {
			(void)sb_buf_append(&b, s + i, 2, NULL); /* another escape, whole */
			i += 2;
			continue;
		}
		if (hi >= 0xd800 && hi <= 0xdbff && i + 12 <= len && s[i + 6] == '\\' &&
		    s[i + 7] == 'u' && sscanf(s + i + 8, "%4x", &lo) == 1 && lo >= 0xdc00 &&
		    lo <= 0xdfff) {
			(void)sb_buf_append(&b, s + i, 12, NULL); /* a whole pair */
			i += 12;
		} else if (hi >= 0xd800 && hi <= 0xdfff) {
			(void)sb_buf_appends(&b, "\\ufffd", NULL);
			i += 6;
		} else {
			(void)sb_buf_append(&b, s + i, 6, NULL);
			i += 6;
		}
	}
	return sb_buf_detach(&b, NULL);
}

/* One event: a JSON object, NULs in its strings allowed (a command may hold one), nested
 * no deeper than SB_JSON_DEPTH_MAX; else NULL. */
static json_t *
event_parse(const char *line, size_t len)
{
	json_t *ev = len <= EVENTS_LINE_MAX
	    ? json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL)
	    : NULL;

	if (ev == NULL && len <= EVENTS_LINE_MAX && memmem(line, len, "\\u", 2) != NULL) {
		_cleanup_free_ char *mended = mend_surrogates(line, len);

		ev = json_loadb(mended, strlen(mended), JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
	}
	if (ev != NULL && (!json_is_object(ev) || sb_json_depth(ev) > SB_JSON_DEPTH_MAX)) {
		json_decref(ev);
		ev = NULL;
	}
	return ev;
}

int
events_feed(struct events *e, const char *line, size_t len, struct sb_error **err)
{
	json_t *ev = NULL;
	int r;

	if (e->fmt == EVENTS_NONE)
		return 0;
	ev = event_parse(line, len);
	if (ev == NULL) {
		e->ignored++;
		/* A blank line is no event; anything else that does not parse went unrecorded. */
		if (len > 0)
			e->unparsed++;
		return 0;
	}
	switch (e->fmt) {
	case EVENTS_CLAUDE_CODE: r = claude_event(e, ev, err); break;
	case EVENTS_CODEX: r = codex_event(e, ev, err); break;
	case EVENTS_OPENCODE: r = opencode_event(e, ev, err); break;
	case EVENTS_NONE:
	default: r = 0; break;
	}
	json_decref(ev);
	if (r > 0)
		e->ignored++;
	return r < 0 ? -1 : 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* dockerfile.c: a static reader of Dockerfiles, for task validation. */
#include "config.h"

#include <jansson.h>
#include <string.h>

#include "sb/buf.h"
#include "sb/dockerfile.h"
#include "sb/limits.h"
#include "sb/mem.h"

static const char *const known_insns[] = {
	"ADD", "ARG", "CMD", "COPY", "ENTRYPOINT", "ENV", "EXPOSE", "FROM", "HEALTHCHECK",
	"LABEL", "MAINTAINER", "ONBUILD", "RUN", "SHELL", "STOPSIGNAL", "USER", "VOLUME",
	"WORKDIR",
};

static bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static void
insn_release(struct sb_dockerfile_insn *in)
{
	free(in->cmd);
	free(in->args);
	sb_argv_release(&in->flags);
	sb_argv_release(&in->words);
}

void
sb_dockerfile_free(struct sb_dockerfile *df)
{
	if (df == NULL)
		return;
	for (size_t i = 0; i < df->n; i++)
		insn_release(&df->v[i]);
	free(df->v);
	free(df);
}

/* Split COPY/ADD arguments into --flags and words (JSON form or whitespace-separated). */
static void
split_copy_args(struct sb_dockerfile_insn *in, const char *file, struct sb_diags *diags)
{
	const char *p = in->args;

	for (;;) {
		const char *e;

		while (is_space(*p))
			p++;
		if (strncmp(p, "--", 2) != 0)
			break;
		for (e = p; *e != '\0' && !is_space(*e); e++)
			;
		sb_argv_pushf(&in->flags, "%.*s", (int)(e - p), p);
		p = e;
	}
	if (*p == '[') {
		json_error_t jerr;
		json_t *arr = json_loads(p, JSON_REJECT_DUPLICATES, &jerr), *v;
		size_t i;

		if (arr != NULL && json_is_array(arr)) {
			bool ok = true;

			json_array_foreach (arr, i, v)
				ok = ok && json_is_string(v);
			if (ok) {
				json_array_foreach (arr, i, v)
					sb_argv_push(&in->words, json_string_value(v));
				in->json_form = true;
				json_decref(arr);
				goto done;
			}
		}
		json_decref(arr);
		/* Docker falls back to the plain form when the JSON does not parse. */
	}
	while (*p != '\0') {
		const char *e;

		while (is_space(*p))
			p++;
		if (*p == '\0')
			break;
		for (e = p; *e != '\0' && !is_space(*e); e++)
			;
		sb_argv_pushf(&in->words, "%.*s", (int)(e - p), p);
		p = e;
	}
done:
	if (in->words.n < 2)
		sb_diags_add(diags, file, in->line, 1, "%s needs at least a source and a destination",
		    in->cmd);
}

/* Parser directives: "# key=value" lines before anything else. */
static void
read_directive(struct sb_dockerfile *df, const char *line, size_t len, unsigned lineno,
    const char *file, struct sb_diags *diags, bool *in_directives)
{
	_cleanup_free_ char *s = sb_xstrndup(line, len);
	char *p = s + 1, *eq, *key, *val;

	while (is_space(*p))
		p++;
	eq = strchr(p, '=');
	if (eq == NULL) {
		*in_directives = false;
		return;
	}
	*eq = '\0';
	key = p;
	val = eq + 1;
	for (char *e = eq - 1; e >= key && is_space(*e); e--)
		*e = '\0';
	while (is_space(*val))
		val++;
	for (char *e = val + strlen(val) - 1; e >= val && is_space(*e); e--)
		*e = '\0';
	if (strcasecmp(key, "escape") == 0) {
		if (strcmp(val, "\\") == 0 || strcmp(val, "`") == 0)
			df->escape = val[0];
		else
			sb_diags_add(diags, file, lineno, 1, "invalid escape directive '%s'", val);
	} else if (strcasecmp(key, "syntax") == 0) {
		df->has_syntax_directive = true;
		df->syntax_line = lineno;
	} else {
		*in_directives = false;
	}
}

/* Turn one logical line into an instruction. Returns false when the table is full. */
static bool
emit_insn(struct sb_dockerfile *df, size_t *cap, const char *line, unsigned start_line,
    const char *file, struct sb_diags *diags)
{
	const char *p = line, *w;
	struct sb_dockerfile_insn *in;
	char *cmd;
	bool known = false;

	if (df->n >= SB_DOCKERFILE_INSNS_MAX) {
		sb_diags_add(diags, file, start_line, 1, "more than %d instructions",
		    SB_DOCKERFILE_INSNS_MAX);
		return false;
	}
	while (is_space(*p))
		p++;
	for (w = p; *w != '\0' && !is_space(*w); w++)
		;
	cmd = sb_xstrndup(p, (size_t)(w - p));
	for (char *c = cmd; *c != '\0'; c++)
		if (*c >= 'a' && *c <= 'z')
			*c = (char)(*c - 'a' + 'A');
	for (size_t i = 0; i < SB_ARRAY_SIZE(known_insns); i++)
		known = known || strcmp(cmd, known_insns[i]) == 0;
	if (!known) {
		sb_diags_add(diags, file, start_line, 1, "unknown instruction '%s'", cmd);
		free(cmd);
		return true;
	}
	while (is_space(*w))
		w++;
	if (df->n == *cap) {
		*cap = *cap ? *cap * 2 : 32;
		df->v = sb_xreallocarray(df->v, *cap, sizeof(*df->v));
	}
	in = &df->v[df->n++];
	memset(in, 0, sizeof(*in));
	sb_argv_init(&in->flags);
	sb_argv_init(&in->words);
	in->cmd = cmd;
	in->args = sb_xstrdup(w);
	in->line = start_line;
	if (strcmp(cmd, "COPY") == 0 || strcmp(cmd, "ADD") == 0)
		split_copy_args(in, file, diags);
	else if (*in->args == '\0')
		sb_diags_add(diags, file, start_line, 1, "%s needs arguments", cmd);
	return true;
}

struct sb_dockerfile *
sb_dockerfile_parse(const char *data, size_t len, const char *file, struct sb_diags *diags)
{
	struct sb_dockerfile *df = sb_xcalloc(1, sizeof(*df));
	_cleanup_buf_ struct sb_buf logical = SB_BUF_INIT(SB_DOCKERFILE_LINE_MAX);
	bool in_directives = true, continuing = false, too_long = false;
	unsigned lineno = 0, start_line = 0;
	size_t cap = 0, pos = 0;

	df->escape = '\\';
	if (memchr(data, '\0', len) != NULL) {
		sb_diags_add(diags, file, 0, 0, "NUL byte in Dockerfile");
		return df;
	}
	while (pos < len) {
		const char *line = data + pos, *nl = memchr(line, '\n', len - pos);
		size_t ll = nl != NULL ? (size_t)(nl - line) : len - pos;
		const char *t = line;
		size_t tl = ll;
		bool cont;

		pos += ll + (nl != NULL);
		lineno++;
		while (tl > 0 && is_space(t[0]))
			t++, tl--;
		if (in_directives && tl > 0 && t[0] == '#') {
			read_directive(df, t, tl, lineno, file, diags, &in_directives);
			if (in_directives)
				continue;
		}
		in_directives = false;
		/* Comment lines and empty lines are dropped, even inside a continuation. */
		if (tl == 0 || t[0] == '#')
			continue;
		while (tl > 0 && is_space(t[tl - 1]))
			tl--;
		cont = tl > 0 && t[tl - 1] == df->escape;
		if (cont)
			tl--;
		if (!continuing) {
			sb_buf_reset(&logical);
			start_line = lineno;
			too_long = false;
		} else {
			(void)sb_buf_appendc(&logical, ' ', NULL);
		}
		if (sb_buf_append(&logical, t, tl, NULL) < 0)
			too_long = true;
		continuing = cont;
		if (continuing)
			continue;
		if (too_long)
			sb_diags_add(diags, file, start_line, 1, "instruction longer than %d bytes",
			    SB_DOCKERFILE_LINE_MAX);
		else if (!emit_insn(df, &cap, logical.s, start_line, file, diags))
			return df;
	}
	/* A continuation at the end of the file ends the instruction, as in Docker. */
	if (continuing && !too_long)
		(void)emit_insn(df, &cap, logical.s, start_line, file, diags);
	return df;
}

/* Append the value of NAME (or a ${NAME:...} form) from vars. */
static void
expand_var(struct sb_buf *out, const char *name, size_t nlen, const char *op, const char *word,
    const struct sb_argv *vars, bool *unknown)
{
	_cleanup_free_ char *n = sb_xstrndup(name, nlen);
	const char *val = sb_env_get(vars, n);

	if (op != NULL && op[0] == '-') {
		(void)sb_buf_appends(out, val != NULL && *val != '\0' ? val : word, NULL);
		return;
	}
	if (op != NULL && op[0] == '+') {
		if (val != NULL && *val != '\0')
			(void)sb_buf_appends(out, word, NULL);
		return;
	}
	if (val == NULL)
		*unknown = true;
	else
		(void)sb_buf_appends(out, val, NULL);
}

static bool
is_name_char(char c, bool first)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		(!first && c >= '0' && c <= '9');
}

char *
sb_dockerfile_expand(const char *s, const struct sb_argv *vars, char escape, bool *ret_unknown)
{
	struct sb_buf out = SB_BUF_INIT(SB_DOCKERFILE_LINE_MAX * 4);
	bool unknown = false;

	while (*s != '\0') {
		if (*s == escape && s[1] == '$') {
			(void)sb_buf_appendc(&out, '$', NULL);
			s += 2;
		} else if (s[0] == '$' && s[1] == '{') {
			const char *close = strchr(s + 2, '}'), *name = s + 2, *colon;

			if (close == NULL) {
				(void)sb_buf_appends(&out, s, NULL);
				break;
			}
			colon = memchr(name, ':', (size_t)(close - name));
			if (colon != NULL && (colon[1] == '-' || colon[1] == '+')) {
				_cleanup_free_ char *word =
				    sb_xstrndup(colon + 2, (size_t)(close - colon - 2));

				expand_var(&out, name, (size_t)(colon - name), colon + 1, word, vars,
				    &unknown);
			} else {
				expand_var(&out, name, (size_t)(close - name), NULL, NULL, vars,
				    &unknown);
			}
			s = close + 1;
		} else if (s[0] == '$' && is_name_char(s[1], true)) {
			const char *name = s + 1, *e = name;

			while (is_name_char(*e, false))
				e++;
			expand_var(&out, name, (size_t)(e - name), NULL, NULL, vars, &unknown);
			s = e;
		} else {
			(void)sb_buf_appendc(&out, *s++, NULL);
		}
	}
	if (ret_unknown != NULL)
		*ret_unknown = unknown;
	return sb_buf_detach(&out, NULL);
}

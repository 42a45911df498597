/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report-render.c: the report's text formats (md, json, csv, csv-runs, junit) and the
 * escaping every format shares. Each renderer reads the model (report.c:report_model) and
 * computes nothing: a number it prints is a number of the model, formatted.
 *
 * Every string of the model may come from a hostile place (an agent's name, a task id, an
 * error message): each is escaped for where it lands, and control characters and the
 * bidirectional overrides never reach the output as such (they could forge a line of a
 * table, or make one name read as another).
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "sb/buf.h"
#include "sb/json.h"
#include "sb/mem.h"

#include "report.h"

/* Where escaped text lands. */
enum esc_ctx {
	ESC_XML,   /* XML/HTML text and quoted attributes: entities */
	ESC_MD,    /* a Markdown table cell: entities and backslashes */
	ESC_PLAIN, /* CSV cells (quoted afterwards): visible escapes only */
};

/* The code point of the UTF-8 sequence at p (n bytes left) and its length, 0 if invalid. */
static size_t
utf8_decode(const unsigned char *p, size_t n, uint32_t *cp)
{
	size_t len;
	uint32_t c, min;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if ((p[0] & 0xe0) == 0xc0)
		len = 2, c = p[0] & 0x1f, min = 0x80;
	else if ((p[0] & 0xf0) == 0xe0)
		len = 3, c = p[0] & 0x0f, min = 0x800;
	else if ((p[0] & 0xf8) == 0xf0)
		len = 4, c = p[0] & 0x07, min = 0x10000;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

/* Code points shown as \u{...} instead of themselves: sb_utf8_hidden (a task id
 * "abc\u202Efdp" reads as another; XML 1.0 forbids U+FFFE/F). */
static int
escape_text(struct sb_buf *out, const char *s, size_t max, enum esc_ctx ctx, struct sb_error **err)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, chars = 0;

	while (i < n) {
		uint32_t c = 0;
		size_t len = utf8_decode(p + i, n - i, &c);
		int r;

		if (max > 0 && chars == max)
			return sb_buf_appends(out, "…", err);
		chars++;
		if (len == 0) {
			if (sb_buf_appendf(out, err, "\\x%02x", p[i]) < 0)
				return -1;
			i++;
			continue;
		}
		if (c == '\n')
			r = sb_buf_appends(out, "\\n", err);
		else if (c == '\t')
			r = sb_buf_appends(out, "\\t", err);
		else if (c < 0x20 || c == 0x7f)
			r = sb_buf_appendf(out, err, "\\x%02x", (unsigned)c);
		else if (sb_utf8_hidden(c))
			r = sb_buf_appendf(out, err, "\\u{%04" PRIX32 "}", c);
		else if (ctx != ESC_PLAIN && c == '&')
			r = sb_buf_appends(out, "&amp;", err);
		else if (ctx != ESC_PLAIN && c == '<')
			r = sb_buf_appends(out, "&lt;", err);
		else if (ctx != ESC_PLAIN && c == '>')
			r = sb_buf_appends(out, "&gt;", err);
		else if (ctx == ESC_XML && c == '"')
			r = sb_buf_appends(out, "&quot;", err);
		else if (ctx == ESC_XML && c == '\'')
			r = sb_buf_appends(out, "&#39;", err);
		else if (ctx == ESC_MD && c < 0x80 && strchr("\\`*_[]|~", (int)c) != NULL)
			r = sb_buf_appendf(out, err, "\\%c", (char)c);
		else
			r = sb_buf_append(out, p + i, len, err);
		if (r < 0)
			return -1;
		i += len;
	}
	return 0;
}

int
report_xml_escape(struct sb_buf *out, const char *s, size_t max, struct sb_error **err)
{
	return escape_text(out, s ?: "", max, ESC_XML, err);
}

static int
md_escape(struct sb_buf *out, const char *s, struct sb_error **err)
{
	return escape_text(out, s ?: "", 0, ESC_MD, err);
}

/* A run's flag kinds (its "flag_kinds"), each escaped for ctx, joined by ", ". */
static int
kinds_text(struct sb_buf *out, const json_t *kinds, enum esc_ctx ctx, struct sb_error **err)
{
	const json_t *k;
	size_t i;

	json_array_foreach(kinds, i, k)
		if ((i > 0 && sb_buf_appends(out, ", ", err) < 0) ||
		    escape_text(out, json_string_value(k) ?: "?", 0, ctx, err) < 0)
			return -1;
	return 0;
}

/* A CSV cell for a string: quoted, and never read as a formula by a spreadsheet. */
static int
csv_string(struct sb_buf *out, const char *s, struct sb_error **err)
{
	_cleanup_buf_ struct sb_buf t = SB_BUF_INIT(out->max);

	if (s == NULL)
		return 0;
	if (escape_text(&t, s, 0, ESC_PLAIN, err) < 0 || sb_buf_appendc(out, '"', err) < 0)
		return -1;
	if (t.len > 0 && strchr("=+-@", t.s[0]) != NULL && sb_buf_appendc(out, '\'', err) < 0)
		return -1;
	for (size_t i = 0; i < t.len; i++)
		if ((t.s[i] == '"' && sb_buf_appendc(out, '"', err) < 0) ||
		    sb_buf_appendc(out, t.s[i], err) < 0)
			return -1;
	return sb_buf_appendc(out, '"', err);
}

/* A number of the model as it is: "" for null, an integer, or a real to 15 digits. */
static int
num(struct sb_buf *out, const json_t *v, const char *none, struct sb_error **err)
{
	if (json_is_integer(v))
		return sb_buf_appendf(out, err, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	if (json_is_real(v))
		return sb_buf_appendf(out, err, "%.15g", json_real_value(v));
	if (json_is_true(v) || json_is_false(v))
		return sb_buf_appends(out, json_is_true(v) ? "true" : "false", err);
	return sb_buf_appends(out, none, err);
}

/* A share of the model as a percentage with one decimal ("–" for null). */
static int
pct(struct sb_buf *out, const json_t *v, struct sb_error **err)
{
	if (!json_is_number(v))
		return sb_buf_appends(out, "–", err);
	return sb_buf_appendf(out, err, "%.1f %%", json_number_value(v) * 100.0);
}

static const json_t *
get(const json_t *o, const char *path)
{
	/* "a.b.c": nested members */
	char name[64];
	const char *dot;

	while ((dot = strchr(path, '.')) != NULL) {
		size_t n = (size_t)(dot - path);

		if (n >= sizeof(name))
			return NULL;
		memcpy(name, path, n);
		name[n] = '\0';
		o = json_object_get(o, name);
		path = dot + 1;
	}
	return json_object_get(o, path);
}

static const char *
gstr(const json_t *o, const char *path)
{
	return json_string_value(get(o, path));
}

/* --- Markdown -------------------------------------------------------------------- */

static int
md_row(struct sb_buf *out, struct sb_error **err, const char *const *cells, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (sb_buf_appendf(out, err, "| %s ", cells[i]) < 0)
			return -1;
	return sb_buf_appends(out, "|\n", err);
}

static int
md_header(struct sb_buf *out, struct sb_error **err, const char *const *cells, size_t n)
{
	if (md_row(out, err, cells, n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (sb_buf_appends(out, i == 0 ? "| --- " : "| ---: ", err) < 0)
			return -1;
	return sb_buf_appends(out, "|\n", err);
}

/* "a / m (open egress)" with its id, escaped for a Markdown cell. */
static int
md_group(struct sb_buf *out, const json_t *g, struct sb_error **err)
{
	if (sb_buf_appendf(out, err, "| %s ", gstr(g, "id")) < 0 ||
	    md_escape(out, gstr(g, "label"), err) < 0)
		return -1;
	return sb_buf_appendc(out, ' ', err);
}

/* A cell "| N " for each of the n keys of o, "–" where o has no such number. */
static int
md_num_cells(struct sb_buf *out, const json_t *o, const char *const *keys, size_t n,
    struct sb_error **err)
{
	for (size_t i = 0; i < n; i++)
		if (sb_buf_appends(out, "| ", err) < 0 || num(out, get(o, keys[i]), "–", err) < 0 ||
		    sb_buf_appendc(out, ' ', err) < 0)
			return -1;
	return 0;
}

static int
md_source(struct sb_buf *out, const json_t *m, struct sb_error **err)
{
	const json_t *src = get(m, "source");

	if (json_object_get(src, "job") != NULL) {
		if (sb_buf_appends(out, "Job ", err) < 0 ||
		    md_escape(out, gstr(src, "job.job_id"), err) < 0 ||
		    sb_buf_appends(out, " (", err) < 0 ||
		    md_escape(out, gstr(src, "path"), err) < 0 ||
		    sb_buf_appends(out, "), created ", err) < 0 ||
		    md_escape(out, gstr(src, "job.created_at") ?: "?", err) < 0 ||
		    sb_buf_appends(out, " by ssebench ", err) < 0 ||
		    md_escape(out, gstr(src, "job.ssebench_version") ?: "?", err) < 0 ||
		    sb_buf_appendf(out, err, "; %" JSON_INTEGER_FORMAT " attempt(s) per task.\n\n",
			json_integer_value(get(src, "job.matrix.attempts"))) < 0)
			return -1;
		return 0;
	}
	if (sb_buf_appends(out, "Results directory ", err) < 0 ||
	    md_escape(out, gstr(src, "path"), err) < 0 || sb_buf_appends(out, ".\n\n", err) < 0)
		return -1;
	return 0;
}

/* The runs the answer-seeking scan flagged, one row each (nothing when none was). */
static int
md_flagged(struct sb_buf *out, const json_t *m, struct sb_error **err)
{
	const json_t *r;
	size_t i;

	if (json_integer_value(get(m, "totals.flagged")) <= 0)
		return 0;
	if (sb_buf_appendf(out, err,
		"\n## Flagged runs (%" JSON_INTEGER_FORMAT ")\n\n"
		"Runs in which the answer-seeking scan found what may be an attempt on the "
		"hidden answer; the evidence is under \"flags\" in each run's summary.json. "
		"Flags are for a person to weigh: they never change a grade.\n\n"
		"| group | task | attempt | outcome | flags | kinds | run |\n"
		"| --- | --- | ---: | --- | ---: | --- | --- |\n",
		json_integer_value(get(m, "totals.flagged"))) < 0)
		return -1;
	json_array_foreach(get(m, "runs"), i, r) {
		if (json_integer_value(get(r, "flags")) <= 0)
			continue;
		if (sb_buf_appends(out, "| ", err) < 0 ||
		    md_escape(out, gstr(r, "group"), err) < 0 ||
		    sb_buf_appends(out, " | ", err) < 0 ||
		    md_escape(out, gstr(r, "task"), err) < 0 ||
		    sb_buf_appends(out, " | ", err) < 0 ||
		    num(out, get(r, "attempt"), "–", err) < 0 ||
		    sb_buf_appends(out, " | ", err) < 0 ||
		    md_escape(out,
			sb_streq(gstr(r, "category"), "error") ? "not scored" : gstr(r, "category"),
			err) < 0 ||
		    sb_buf_appends(out, " | ", err) < 0 ||
		    num(out, get(r, "flags"), "–", err) < 0 ||
		    sb_buf_appends(out, " | ", err) < 0 ||
		    kinds_text(out, get(r, "flag_kinds"), ESC_MD, err) < 0 ||
		    sb_buf_appends(out, " | ", err) < 0 ||
		    md_escape(out, gstr(r, "run_id") ?: "?", err) < 0 ||
		    sb_buf_appends(out, " |\n", err) < 0)
			return -1;
	}
	return 0;
}

int
report_render_md(const json_t *m, struct sb_buf *out, struct sb_error **err)
{
	static const char *const tot_head[] = {"runs found", "reference runs (left out)", "runs",
	    "scored", "passed", "failed", "forfeit", "unscored (errors)", "unreadable", "skipped",
	    "not run", "flagged runs"};
	static const char *const tot_keys[] = {"runs_found", "reference_runs", "runs", "scored",
	    "passed", "failed", "forfeit", "unscored", "unreadable", "skipped", "not_run",
	    "flagged"};
	static const char *const g_head[] = {"group", "runs", "scored", "passed", "failed",
	    "forfeit", "unscored", "skipped", "not run", "pass rate", "95 % CI", "flagged"};
	static const char *const g_keys[] = {
	    "runs", "scored", "passed", "failed", "forfeit", "unscored", "skipped", "not_run"};
	static const char *const c_head[] = {
	    "group", "built", "PoCs stopped", "functional tests", "hidden tests"};
	static const char *const c_keys[] = {"built", "pov_stopped", "functional", "hidden"};
	static const char *const t_head[] = {"group", "runs timed", "median (s)", "p90 (s)",
	    "spend (USD)", "spend per run", "runs with spend", "tokens in", "tokens out",
	    "runs with tokens"};
	static const char *const t_keys[] = {"duration_s.runs", "duration_s.median",
	    "duration_s.p90", "spend_usd.total", "spend_usd.per_run", "spend_usd.runs", "tokens.in",
	    "tokens.out", "tokens.runs"};
	const json_t *groups = get(m, "groups"), *g, *row, *e;
	bool any_pak = false;
	size_t i, j;

	if (sb_buf_appends(out, "# SSEBench report\n\n", err) < 0 || md_source(out, m, err) < 0 ||
	    md_header(out, err, tot_head, SB_ARRAY_SIZE(tot_head)) < 0)
		return -1;
	if (md_num_cells(out, get(m, "totals"), tot_keys, SB_ARRAY_SIZE(tot_keys), err) < 0)
		return -1;
	if (sb_buf_appends(out, "|\n\n## Pass rate by agent and model\n\n", err) < 0 ||
	    sb_buf_appends(out,
		"Pass rate = passed / scored runs, with its 95 % Wilson interval. "
		"Reference runs are left out. Flagged: runs in which the answer-seeking scan "
		"found something (never part of the grade).\n\n",
		err) < 0 ||
	    md_header(out, err, g_head, SB_ARRAY_SIZE(g_head)) < 0)
		return -1;
	json_array_foreach(groups, i, g) {
		const json_t *ci = get(g, "pass_rate_ci");

		if (md_group(out, g, err) < 0 ||
		    md_num_cells(out, g, g_keys, SB_ARRAY_SIZE(g_keys), err) < 0)
			return -1;
		if (sb_buf_appends(out, "| ", err) < 0 || pct(out, get(g, "pass_rate"), err) < 0 ||
		    sb_buf_appends(out, " | ", err) < 0)
			return -1;
		if (json_is_array(ci)) {
			if (pct(out, json_array_get(ci, 0), err) < 0 ||
			    sb_buf_appends(out, " – ", err) < 0 ||
			    pct(out, json_array_get(ci, 1), err) < 0)
				return -1;
		} else if (sb_buf_appends(out, "–", err) < 0) {
			return -1;
		}
		if (sb_buf_appends(out, " | ", err) < 0 ||
		    num(out, get(g, "flagged"), "–", err) < 0 ||
		    sb_buf_appends(out, " |\n", err) < 0)
			return -1;
		any_pak |= json_array_size(get(g, "pass_at_k")) > 0;
	}
	if (any_pak) {
		static const char *const k_head[] = {"group", "k", "pass@k", "tasks"};

		if (sb_buf_appends(out,
			"\n## pass@k\n\nThe unbiased estimator 1 − C(n−c, k)/C(n, k) "
			"per task (n scored attempts, c passed), averaged over the tasks "
			"with at least k scored attempts.\n\n",
			err) < 0 ||
		    md_header(out, err, k_head, SB_ARRAY_SIZE(k_head)) < 0)
			return -1;
		json_array_foreach(groups, i, g)
			json_array_foreach(get(g, "pass_at_k"), j, e)
				if (md_group(out, g, err) < 0 ||
				    sb_buf_appends(out, "| ", err) < 0 ||
				    num(out, get(e, "k"), "–", err) < 0 ||
				    sb_buf_appends(out, " | ", err) < 0 ||
				    pct(out, get(e, "value"), err) < 0 ||
				    sb_buf_appends(out, " | ", err) < 0 ||
				    num(out, get(e, "tasks"), "–", err) < 0 ||
				    sb_buf_appends(out, " |\n", err) < 0)
					return -1;
	}
	if (sb_buf_appends(out, "\n## Checks (share of scored runs)\n\n", err) < 0 ||
	    md_header(out, err, c_head, SB_ARRAY_SIZE(c_head)) < 0)
		return -1;
	json_array_foreach(groups, i, g) {
		if (md_group(out, g, err) < 0)
			return -1;
		for (j = 0; j < SB_ARRAY_SIZE(c_keys); j++) {
			const json_t *c = get(get(g, "checks"), c_keys[j]);

			if (sb_buf_appends(out, "| ", err) < 0 ||
			    pct(out, get(c, "share"), err) < 0 ||
			    sb_buf_appends(out, " (", err) < 0 ||
			    num(out, get(c, "runs"), "0", err) < 0 ||
			    sb_buf_appends(out, ") ", err) < 0)
				return -1;
		}
		if (sb_buf_appends(out, "|\n", err) < 0)
			return -1;
	}
	if (sb_buf_appends(out, "\n## Time, cost and tokens\n\n", err) < 0 ||
	    md_header(out, err, t_head, SB_ARRAY_SIZE(t_head)) < 0)
		return -1;
	json_array_foreach(groups, i, g) {
		if (md_group(out, g, err) < 0 ||
		    md_num_cells(out, g, t_keys, SB_ARRAY_SIZE(t_keys), err) < 0 ||
		    sb_buf_appends(out, "|\n", err) < 0)
			return -1;
	}
	/* The matrix: one row per task, one column per group. */
	if (sb_buf_appends(out,
		"\n## Tasks × groups\n\nPassed/scored runs; \"+N unscored\" counts "
		"runs that were not scored.\n\n| task ",
		err) < 0)
		return -1;
	json_array_foreach(groups, i, g)
		if (sb_buf_appendf(out, err, "| %s ", gstr(g, "id")) < 0)
			return -1;
	if (sb_buf_appends(out, "|\n| --- ", err) < 0)
		return -1;
	json_array_foreach(groups, i, g)
		if (sb_buf_appends(out, "| ---: ", err) < 0)
			return -1;
	if (sb_buf_appends(out, "|\n", err) < 0)
		return -1;
	json_array_foreach(get(m, "matrix"), i, row) {
		if (sb_buf_appends(out, "| ", err) < 0 ||
		    md_escape(out, gstr(row, "task"), err) < 0 || sb_buf_appendc(out, ' ', err) < 0)
			return -1;
		json_array_foreach(get(row, "cells"), j, e) {
			if (sb_buf_appends(out, "| ", err) < 0)
				return -1;
			if (json_integer_value(get(e, "runs")) +
				json_integer_value(get(e, "skipped")) +
				json_integer_value(get(e, "not_run")) ==
			    0) {
				if (sb_buf_appends(out, "· ", err) < 0)
					return -1;
				continue;
			}
			if (sb_buf_appendf(out, err,
				"%" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT,
				json_integer_value(get(e, "passed")),
				json_integer_value(get(e, "scored"))) < 0)
				return -1;
			if (json_integer_value(get(e, "unscored")) > 0 &&
			    sb_buf_appendf(out, err, " +%" JSON_INTEGER_FORMAT " unscored",
				json_integer_value(get(e, "unscored"))) < 0)
				return -1;
			if (json_integer_value(get(e, "skipped")) > 0 &&
			    sb_buf_appendf(out, err, " +%" JSON_INTEGER_FORMAT " skipped",
				json_integer_value(get(e, "skipped"))) < 0)
				return -1;
			if (json_integer_value(get(e, "not_run")) > 0 &&
			    sb_buf_appendf(out, err, " +%" JSON_INTEGER_FORMAT " not run",
				json_integer_value(get(e, "not_run"))) < 0)
				return -1;
			if (sb_buf_appendc(out, ' ', err) < 0)
				return -1;
		}
		if (sb_buf_appends(out, "|\n", err) < 0)
			return -1;
	}
	if (md_flagged(out, m, err) < 0)
		return -1;
	/* What is not in the figures, and why. */
	if (json_array_size(get(m, "unreadable")) > 0) {
		if (sb_buf_appendf(out, err, "\n## Unreadable (%zu)\n\n",
			json_array_size(get(m, "unreadable"))) < 0)
			return -1;
		json_array_foreach(get(m, "unreadable"), i, e)
			if (sb_buf_appends(out, "- ", err) < 0 ||
			    md_escape(out, gstr(e, "path"), err) < 0 ||
			    sb_buf_appends(out, ": ", err) < 0 ||
			    md_escape(out, gstr(e, "reason"), err) < 0 ||
			    sb_buf_appendc(out, '\n', err) < 0)
				return -1;
	}
	for (int l = 0; l < 2; l++) {
		const json_t *list = get(m, l == 0 ? "skipped" : "not_run");

		if (json_array_size(list) == 0)
			continue;
		if (sb_buf_appendf(out, err, "\n## %s (%zu)\n\n", l == 0 ? "Skipped" : "Not run",
			json_array_size(list)) < 0)
			return -1;
		json_array_foreach(list, i, e)
			if (sb_buf_appends(out, "- ", err) < 0 ||
			    md_escape(out, gstr(e, "task"), err) < 0 ||
			    sb_buf_appends(out, ", ", err) < 0 ||
			    md_escape(out, gstr(e, "agent"), err) < 0 ||
			    sb_buf_appends(out, " / ", err) < 0 ||
			    md_escape(out, gstr(e, "model"), err) < 0 ||
			    sb_buf_appendf(out, err, ", attempt %" JSON_INTEGER_FORMAT ": ",
				json_integer_value(get(e, "attempt"))) < 0 ||
			    md_escape(out,
				l == 0 ? (gstr(e, "reason") ?: "no reason given")
				       : gstr(e, "state"),
				err) < 0 ||
			    sb_buf_appendc(out, '\n', err) < 0)
				return -1;
	}
	if (json_array_size(get(m, "notes")) > 0) {
		if (sb_buf_appends(out, "\n## Notes\n\n", err) < 0)
			return -1;
		json_array_foreach(get(m, "notes"), i, e)
			if (sb_buf_appends(out, "- ", err) < 0 ||
			    md_escape(out, json_string_value(e), err) < 0 ||
			    sb_buf_appendc(out, '\n', err) < 0)
				return -1;
	}
	return 0;
}

/* --- CSV ------------------------------------------------------------------------- */

static int
csv_sep(struct sb_buf *out, struct sb_error **err)
{
	return sb_buf_appendc(out, ',', err);
}

int
report_render_csv(const json_t *m, struct sb_buf *out, struct sb_error **err)
{
	static const char *const cols[] = {"runs", "scored", "passed", "failed", "forfeit",
	    "unscored", "skipped", "not_run", "pass_rate", "pass_rate_ci_low", "pass_rate_ci_high",
	    "attempts_per_task", "built_share", "pov_stopped_share", "functional_share",
	    "hidden_share", "runs_timed", "duration_median_s", "duration_p90_s", "spend_total_usd",
	    "spend_per_run_usd", "runs_with_spend", "tokens_in", "tokens_out", "runs_with_tokens",
	    "flagged"};
	static const char *const keys[] = {"runs", "scored", "passed", "failed", "forfeit",
	    "unscored", "skipped", "not_run", "pass_rate", NULL, NULL, "attempts_per_task",
	    "checks.built.share", "checks.pov_stopped.share", "checks.functional.share",
	    "checks.hidden.share", "duration_s.runs", "duration_s.median", "duration_s.p90",
	    "spend_usd.total", "spend_usd.per_run", "spend_usd.runs", "tokens.in", "tokens.out",
	    "tokens.runs", "flagged"};
	const json_t *g;
	json_int_t kmax = 0;
	size_t i;

	_Static_assert(SB_ARRAY_SIZE(cols) == SB_ARRAY_SIZE(keys), "one key per column");
	json_array_foreach(get(m, "groups"), i, g)
		if ((json_int_t)json_array_size(get(g, "pass_at_k")) > kmax)
			kmax = (json_int_t)json_array_size(get(g, "pass_at_k"));
	if (sb_buf_appends(out, "group,agent,model,egress", err) < 0)
		return -1;
	for (i = 0; i < SB_ARRAY_SIZE(cols); i++)
		if (sb_buf_appendf(out, err, ",%s", cols[i]) < 0)
			return -1;
	for (json_int_t k = 1; k <= kmax; k++)
		if (sb_buf_appendf(out, err, ",pass_at_%" JSON_INTEGER_FORMAT, k) < 0)
			return -1;
	if (sb_buf_appends(out, "\r\n", err) < 0)
		return -1;
	json_array_foreach(get(m, "groups"), i, g) {
		if (csv_string(out, gstr(g, "id"), err) < 0 || csv_sep(out, err) < 0 ||
		    csv_string(out, gstr(g, "agent"), err) < 0 || csv_sep(out, err) < 0 ||
		    csv_string(out, gstr(g, "model"), err) < 0 || csv_sep(out, err) < 0 ||
		    csv_string(out, gstr(g, "egress"), err) < 0)
			return -1;
		for (size_t c = 0; c < SB_ARRAY_SIZE(keys); c++) {
			const json_t *v = keys[c] != NULL ? get(g, keys[c])
							  : json_array_get(get(g, "pass_rate_ci"),
								strstr(cols[c], "low") ? 0 : 1);

			if (csv_sep(out, err) < 0 || num(out, v, "", err) < 0)
				return -1;
		}
		for (json_int_t k = 1; k <= kmax; k++)
			if (csv_sep(out, err) < 0 ||
			    num(out,
				get(json_array_get(get(g, "pass_at_k"), (size_t)(k - 1)), "value"),
				"", err) < 0)
				return -1;
		if (sb_buf_appends(out, "\r\n", err) < 0)
			return -1;
	}
	return 0;
}

int
report_render_csv_runs(const json_t *m, struct sb_buf *out, struct sb_error **err)
{
	static const char *const cols[] = {"group", "run_id", "task", "agent", "model", "egress",
	    "attempt", "category", "status", "scored", "tier", "duration_s", "spend_usd",
	    "tokens_in", "tokens_out", "built", "pov_stopped", "functional", "hidden", "flags",
	    "flag_kinds", "started_at", "finished_at", "job_id", "slot", "message", "dir"};
	const json_t *r;
	size_t i;

	for (i = 0; i < SB_ARRAY_SIZE(cols); i++)
		if (sb_buf_appendf(out, err, "%s%s", i ? "," : "", cols[i]) < 0)
			return -1;
	if (sb_buf_appends(out, "\r\n", err) < 0)
		return -1;
	json_array_foreach(get(m, "runs"), i, r) {
		for (size_t c = 0; c < SB_ARRAY_SIZE(cols); c++) {
			const json_t *v = get(r, cols[c]);

			if (c > 0 && csv_sep(out, err) < 0)
				return -1;
			/* flag_kinds: one cell, "canary, network" */
			if (json_is_array(v)) {
				_cleanup_buf_ struct sb_buf k = SB_BUF_INIT(out->max);

				if (kinds_text(&k, v, ESC_PLAIN, err) < 0 ||
				    csv_string(out, k.s, err) < 0)
					return -1;
				continue;
			}
			if (json_is_string(v) ? csv_string(out, json_string_value(v), err) < 0
					      : num(out, v, "", err) < 0)
				return -1;
		}
		if (sb_buf_appends(out, "\r\n", err) < 0)
			return -1;
	}
	return 0;
}

/* --- JUnit XML ------------------------------------------------------------------- */

static int
xml_attr(struct sb_buf *out, const char *name, const char *value, struct sb_error **err)
{
	if (sb_buf_appendf(out, err, " %s=\"", name) < 0 ||
	    report_xml_escape(out, value, 0, err) < 0)
		return -1;
	return sb_buf_appendc(out, '"', err);
}

/* One <testcase> for a slot that did not run (skipped or not run). */
static int
junit_slot(struct sb_buf *out, const json_t *e, bool skipped, struct sb_error **err)
{
	_cleanup_free_ char *name = sb_xasprintf(
	    "%s#%" JSON_INTEGER_FORMAT, gstr(e, "task"), json_integer_value(get(e, "attempt")));
	_cleanup_free_ char *msg =
	    skipped ? sb_xasprintf("skipped: %s", gstr(e, "reason") ?: "no reason given")
		    : sb_xasprintf("not run (%s)", gstr(e, "state"));

	if (sb_buf_appends(out, "    <testcase", err) < 0 ||
	    xml_attr(out, "classname", gstr(e, "task"), err) < 0 ||
	    xml_attr(out, "name", name, err) < 0 ||
	    sb_buf_appends(out, " time=\"0\">\n      <skipped", err) < 0 ||
	    xml_attr(out, "message", msg, err) < 0 ||
	    sb_buf_appends(out, "/>\n    </testcase>\n", err) < 0)
		return -1;
	return 0;
}

/* A run that did not pass: <failure> (failed, forfeit) or <error> (not scored). */
static int
junit_verdict(
    struct sb_buf *out, const json_t *r, const char *cat, const char *msg, struct sb_error **err)
{
	const char *el = sb_streq(cat, "error") ? "error" : "failure";

	if (sb_buf_appendf(out, err, "      <%s", el) < 0 ||
	    xml_attr(out, "message",
		msg
		    ?: (sb_streq(cat, "error")        ? "not scored"
			   : sb_streq(cat, "forfeit") ? "forfeit"
						      : "failed"),
		err) < 0 ||
	    xml_attr(out, "type", cat, err) < 0 || sb_buf_appends(out, ">run ", err) < 0 ||
	    report_xml_escape(out, gstr(r, "run_id") ?: "?", 0, err) < 0 ||
	    sb_buf_appends(out, " in ", err) < 0 ||
	    report_xml_escape(out, gstr(r, "dir"), 0, err) < 0 ||
	    sb_buf_appendf(out, err, "</%s>\n", el) < 0)
		return -1;
	return 0;
}

/*
 * A flagged run's flags, as the <system-out> of its testcase: CI systems show that text
 * with the test, and the flags are no verdict (never a failure of their own).
 */
static int
junit_flags(struct sb_buf *out, const json_t *r, struct sb_error **err)
{
	if (json_integer_value(get(r, "flags")) <= 0)
		return 0;
	if (sb_buf_appendf(out, err, "      <system-out>flags: %" JSON_INTEGER_FORMAT " (",
		json_integer_value(get(r, "flags"))) < 0 ||
	    kinds_text(out, get(r, "flag_kinds"), ESC_XML, err) < 0 ||
	    sb_buf_appends(out, ")</system-out>\n", err) < 0)
		return -1;
	return 0;
}

/* Whether the slot e belongs to group g. */
static bool
slot_in(const json_t *e, const json_t *g)
{
	return sb_streq(gstr(e, "agent"), gstr(g, "agent")) &&
	       sb_streq(gstr(e, "model"), gstr(g, "model")) &&
	       sb_streq(gstr(e, "egress"), gstr(g, "egress"));
}

int
report_render_junit(const json_t *m, struct sb_buf *out, struct sb_error **err)
{
	const json_t *tot = get(m, "totals"), *runs = get(m, "runs"), *g, *r;
	double all_time = 0;
	size_t i, j, first = 0;

	json_array_foreach(runs, i, r)
		all_time += json_is_number(get(r, "duration_s"))
				? json_number_value(get(r, "duration_s"))
				: 0;
	if (sb_buf_appendf(out, err,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<testsuites name=\"ssebench report\" tests=\"%" JSON_INTEGER_FORMAT
		"\" failures=\"%" JSON_INTEGER_FORMAT "\" errors=\"%" JSON_INTEGER_FORMAT
		"\" skipped=\"%" JSON_INTEGER_FORMAT "\" time=\"%.3f\">\n",
		json_integer_value(get(tot, "runs")) + json_integer_value(get(tot, "skipped")) +
		    json_integer_value(get(tot, "not_run")),
		json_integer_value(get(tot, "failed")) + json_integer_value(get(tot, "forfeit")),
		json_integer_value(get(tot, "unscored")),
		json_integer_value(get(tot, "skipped")) + json_integer_value(get(tot, "not_run")),
		all_time) < 0)
		return -1;
	json_array_foreach(get(m, "groups"), i, g) {
		double time = 0;
		size_t end = first;

		/* The model lists runs by group: this group's are the next ones. */
		while (end < json_array_size(runs) &&
		       sb_streq(gstr(json_array_get(runs, end), "group"), gstr(g, "id"))) {
			const json_t *d = get(json_array_get(runs, end), "duration_s");

			time += json_is_number(d) ? json_number_value(d) : 0;
			end++;
		}
		if (sb_buf_appends(out, "  <testsuite", err) < 0 ||
		    xml_attr(out, "name", gstr(g, "label"), err) < 0 ||
		    sb_buf_appendf(out, err,
			" tests=\"%" JSON_INTEGER_FORMAT "\" failures=\"%" JSON_INTEGER_FORMAT
			"\" errors=\"%" JSON_INTEGER_FORMAT "\" skipped=\"%" JSON_INTEGER_FORMAT
			"\" time=\"%.3f\">\n    <properties>\n",
			json_integer_value(get(g, "runs")) + json_integer_value(get(g, "skipped")) +
			    json_integer_value(get(g, "not_run")),
			json_integer_value(get(g, "failed")) +
			    json_integer_value(get(g, "forfeit")),
			json_integer_value(get(g, "unscored")),
			json_integer_value(get(g, "skipped")) +
			    json_integer_value(get(g, "not_run")),
			time) < 0)
			return -1;
		{
			static const char *const props[] = {"id", "agent", "model", "egress"};

			for (j = 0; j < SB_ARRAY_SIZE(props); j++)
				if (sb_buf_appends(out, "      <property", err) < 0 ||
				    xml_attr(out, "name", props[j], err) < 0 ||
				    xml_attr(out, "value", gstr(g, props[j]), err) < 0 ||
				    sb_buf_appends(out, "/>\n", err) < 0)
					return -1;
			if (sb_buf_appendf(out, err,
				"      <property name=\"flagged\" value=\"%" JSON_INTEGER_FORMAT
				"\"/>\n",
				json_integer_value(get(g, "flagged"))) < 0)
				return -1;
			if (json_is_number(get(g, "pass_rate")) &&
			    sb_buf_appendf(out, err,
				"      <property name=\"pass_rate\" value=\"%.15g\"/>\n",
				json_number_value(get(g, "pass_rate"))) < 0)
				return -1;
		}
		if (sb_buf_appends(out, "    </properties>\n", err) < 0)
			return -1;
		for (j = first; j < end; j++) {
			const json_t *d;
			const char *cat, *msg;
			_cleanup_free_ char *name = NULL;

			r = json_array_get(runs, j);
			d = get(r, "duration_s");
			cat = gstr(r, "category");
			msg = gstr(r, "message");
			name = json_is_integer(get(r, "attempt"))
			    ? sb_xasprintf("%s#%" JSON_INTEGER_FORMAT, gstr(r, "task"),
				  json_integer_value(get(r, "attempt")))
			    : sb_xstrdup(gstr(r, "run_id") ?: gstr(r, "dir") ?: "?");
			if (sb_buf_appends(out, "    <testcase", err) < 0 ||
			    xml_attr(out, "classname", gstr(r, "task"), err) < 0 ||
			    xml_attr(out, "name", name, err) < 0 ||
			    sb_buf_appendf(out, err, " time=\"%.3f\"",
				json_is_number(d) ? json_number_value(d) : 0.0) < 0)
				return -1;
			if (sb_streq(cat, "passed") && json_integer_value(get(r, "flags")) <= 0) {
				if (sb_buf_appends(out, "/>\n", err) < 0)
					return -1;
				continue;
			}
			if (sb_buf_appends(out, ">\n", err) < 0)
				return -1;
			if (!sb_streq(cat, "passed") && junit_verdict(out, r, cat, msg, err) < 0)
				return -1;
			if (junit_flags(out, r, err) < 0 ||
			    sb_buf_appends(out, "    </testcase>\n", err) < 0)
				return -1;
		}
		first = end;
		for (int l = 0; l < 2; l++)
			json_array_foreach(get(m, l == 0 ? "skipped" : "not_run"), j, r)
				if (slot_in(r, g) && junit_slot(out, r, l == 0, err) < 0)
					return -1;
		if (sb_buf_appends(out, "  </testsuite>\n", err) < 0)
			return -1;
	}
	return sb_buf_appends(out, "</testsuites>\n", err);
}

/* --- dispatch -------------------------------------------------------------------- */

int
report_render(
    const json_t *model, enum report_format fmt, struct sb_buf *out, struct sb_error **err)
{
	switch (fmt) {
	case REPORT_MD:
		return report_render_md(model, out, err);
	case REPORT_JSON: {
		/* 15 significant digits: the model's reals are rounded, and print as such. */
		_cleanup_free_ char *s =
		    sb_json_dumps(model, JSON_INDENT(2) | JSON_REAL_PRECISION(15) | JSON_ENSURE_ASCII);

		if (sb_buf_appends(out, s, err) < 0)
			return -1;
		return sb_buf_appendc(out, '\n', err);
	}
	case REPORT_CSV:
		return report_render_csv(model, out, err);
	case REPORT_CSV_RUNS:
		return report_render_csv_runs(model, out, err);
	case REPORT_HTML:
		return report_render_html(model, out, err);
	case REPORT_JUNIT:
		return report_render_junit(model, out, err);
	}
	return sb_error_set(err, EINVAL, "unknown report format");
}

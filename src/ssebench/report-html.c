/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report-html.c: the report as one self-contained HTML file: inline CSS, inline SVG plots
 * drawn here, no script and nothing fetched (a Content-Security-Policy of default-src
 * 'none' says so to the browser, so that even a string that escaped its escaping could
 * neither run nor load anything). Every string from the model is escaped
 * (report_xml_escape) for the text or the double-quoted attribute it lands in; no string of
 * the model is ever put in CSS, a URL or an element or attribute name.
 *
 * The four plots: the pass rate of each group with its 95 % interval; spend per run
 * against pass rate; the task x group heatmap; the time each group's runs took (box plot).
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "sb/buf.h"
#include "sb/json.h"
#include "sb/mem.h"

#include "report.h"

/* The output and the first failure: after one, every write is a no-op. */
struct html {
	struct sb_buf *out;
	struct sb_error **err;
	int rc;
};

static void P(struct html *h, const char *fmt, ...) _printf_(2, 3);

static void
P(struct html *h, const char *fmt, ...)
{
	va_list ap;

	if (h->rc < 0)
		return;
	va_start(ap, fmt);
	h->rc = sb_buf_vappendf(h->out, h->err, fmt, ap);
	va_end(ap);
}

/* Escaped text (max characters, 0 for all). */
static void
E(struct html *h, const char *s, size_t max)
{
	if (h->rc >= 0)
		h->rc = report_xml_escape(h->out, s ?: "", max, h->err);
}

static const json_t *
get(const json_t *o, const char *a, const char *b)
{
	o = json_object_get(o, a);
	return b != NULL ? json_object_get(o, b) : o;
}

static const char *
gstr(const json_t *o, const char *a)
{
	return json_string_value(json_object_get(o, a));
}

static json_int_t
geti(const json_t *o, const char *a)
{
	return json_integer_value(json_object_get(o, a));
}

/* A number of the model as it is (reals to 15 digits), or "–". */
static void
num(struct html *h, const json_t *v)
{
	if (json_is_integer(v))
		P(h, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_real(v))
		P(h, "%.15g", json_real_value(v));
	else
		P(h, "–");
}

static void
pct(struct html *h, const json_t *v)
{
	if (json_is_number(v))
		P(h, "%.1f %%", json_number_value(v) * 100.0);
	else
		P(h, "–");
}

/* The smallest 1, 2 or 5 times a power of ten at or above x (1 for nothing). */
static double
nice_ceil(double x)
{
	double e, f;

	if (!(x > 0) || !isfinite(x))
		return 1.0;
	e = pow(10.0, floor(log10(x)));
	f = x / e;
	return (f <= 1.0 ? 1.0 : f <= 2.0 ? 2.0 : f <= 5.0 ? 5.0 : 10.0) * e;
}

/* The fill of a heatmap cell for a pass share: red, through yellow, to green. */
static void
heat_colour(double p, char ret[8])
{
	static const int stops[3][3] = {{0xd7, 0x30, 0x27}, {0xfe, 0xe0, 0x8b}, {0x1a, 0x98, 0x50}};
	int seg = p < 0.5 ? 0 : 1;
	double t = p < 0.5 ? p * 2 : (p - 0.5) * 2;
	int rgb[3];

	for (int i = 0; i < 3; i++)
		rgb[i] = (int)lround(stops[seg][i] + t * (stops[seg + 1][i] - stops[seg][i]));
	snprintf(ret, 8, "#%02x%02x%02x", rgb[0] & 0xff, rgb[1] & 0xff, rgb[2] & 0xff);
}

static const char css[] =
    "body{font:14px/1.45 system-ui,-apple-system,\"Segoe UI\",sans-serif;margin:2em auto;"
    "max-width:1200px;padding:0 1em;color:#1f2328;background:#fff}"
    "h1{font-size:1.6em}h2{font-size:1.25em;margin-top:2em;border-bottom:1px solid #d0d7de}"
    "table{border-collapse:collapse;margin:.8em 0;font-variant-numeric:tabular-nums}"
    "th,td{border:1px solid #d0d7de;padding:3px 8px;text-align:right;vertical-align:top;"
    "white-space:nowrap}"
    "th{background:#f6f8fa}th.l,td.l{text-align:left}"
    "td.l{min-width:10em;max-width:28em;overflow-wrap:anywhere;white-space:normal}"
    ".passed{color:#1a7f37}.failed{color:#cf222e}.forfeit{color:#9a6700}.error{color:#8250df}"
    "figure{margin:1.5em 0}figcaption{font-weight:600;margin-bottom:.4em}"
    "svg{max-width:100%;height:auto;background:#fff}"
    "svg text{font-family:system-ui,sans-serif;font-size:12px;fill:#1f2328}"
    "svg .axis{stroke:#8c959f;stroke-width:1}svg .grid{stroke:#eaeef2;stroke-width:1}"
    ".note{color:#57606a}details{margin:1em 0}summary{cursor:pointer;font-weight:600}";

/* The geometry the horizontal plots share. */
enum { LEFT = 250, PLOT_W = 420, ROW_H = 26, TOP = 30, LABEL_MAX = 28 };

/* One group's label at the left of a row, cut to fit, whole in its tooltip. */
static void
row_label(struct html *h, const json_t *g, double y)
{
	P(h, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\"><title>", LEFT - 8, y + 4);
	E(h, gstr(g, "id"), 0);
	P(h, " ");
	E(h, gstr(g, "label"), 0);
	P(h, "</title>");
	E(h, gstr(g, "id"), 0);
	P(h, " ");
	E(h, gstr(g, "label"), LABEL_MAX);
	P(h, "</text>\n");
}

/* Vertical grid lines and their labels along the top of a horizontal plot. */
static void
x_grid(struct html *h, int height, double xmax, bool percent)
{
	for (int i = 0; i <= 4; i++) {
		double x = LEFT + PLOT_W * i / 4.0;

		P(h, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", x,
		    TOP - 6, x, height - 10);
		P(h, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", x, TOP - 12);
		if (percent)
			P(h, "%.0f %%", xmax * i / 4.0 * 100.0);
		else
			P(h, "%.4g s", xmax * i / 4.0);
		P(h, "</text>\n");
	}
}

/* Plot 1: each group's pass rate as a dot, its 95 % Wilson interval as whiskers. */
static void
plot_pass_rate(struct html *h, const json_t *groups)
{
	size_t n = json_array_size(groups), i;
	int height = TOP + (int)n * ROW_H + 14;
	const json_t *g;

	P(h,
	    "<figure><figcaption>Pass rate with its 95 %% interval (passed / scored "
	    "runs)</figcaption>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
	    "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"pass rate per "
	    "group\">\n",
	    LEFT + PLOT_W + 190, height, LEFT + PLOT_W + 190, height);
	x_grid(h, height, 1.0, true);
	json_array_foreach(groups, i, g) {
		double y = TOP + (double)i * ROW_H + ROW_H / 2.0;
		const json_t *rate = json_object_get(g, "pass_rate"),
			     *ci = json_object_get(g, "pass_rate_ci");

		row_label(h, g, y);
		if (!json_is_number(rate) || !json_is_array(ci)) {
			P(h, "<text x=\"%d\" y=\"%.1f\" class=\"note\">no scored runs</text>\n",
			    LEFT + 4, y + 4);
			continue;
		}
		{
			double lo = LEFT + PLOT_W * json_number_value(json_array_get(ci, 0));
			double hi = LEFT + PLOT_W * json_number_value(json_array_get(ci, 1));
			double x = LEFT + PLOT_W * json_number_value(rate);

			P(h, "<g><title>");
			E(h, gstr(g, "label"), 0);
			P(h,
			    ": %.1f %% (%" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT
			    "), 95 %% interval %.1f–%.1f %%</title>",
			    json_number_value(rate) * 100, geti(g, "passed"), geti(g, "scored"),
			    json_number_value(json_array_get(ci, 0)) * 100,
			    json_number_value(json_array_get(ci, 1)) * 100);
			P(h,
			    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			    "stroke=\"#57606a\" "
			    "stroke-width=\"2\"/>",
			    lo, y, hi, y);
			P(h,
			    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			    "stroke=\"#57606a\" "
			    "stroke-width=\"2\"/>",
			    lo, y - 6, lo, y + 6);
			P(h,
			    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			    "stroke=\"#57606a\" "
			    "stroke-width=\"2\"/>",
			    hi, y - 6, hi, y + 6);
			P(h, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"#0969da\"/></g>", x,
			    y);
			P(h,
			    "<text x=\"%d\" y=\"%.1f\">%.1f %% (%" JSON_INTEGER_FORMAT
			    "/%" JSON_INTEGER_FORMAT ")</text>\n",
			    LEFT + PLOT_W + 12, y + 4, json_number_value(rate) * 100,
			    geti(g, "passed"), geti(g, "scored"));
		}
	}
	P(h, "</svg></figure>\n");
}

/* Plot 2: spend per run (x) against pass rate (y), one point per group. */
static void
plot_cost(struct html *h, const json_t *groups)
{
	enum { W = 640, H = 360, L = 70, R = 30, T = 20, B = 50 };
	double xmax = 0;
	size_t i, points = 0;
	const json_t *g;

	json_array_foreach(groups, i, g) {
		const json_t *sp = get(g, "spend_usd", "per_run");

		if (json_is_number(sp) && json_is_number(json_object_get(g, "pass_rate"))) {
			points++;
			if (json_number_value(sp) > xmax)
				xmax = json_number_value(sp);
		}
	}
	P(h, "<figure><figcaption>Spend per run against pass rate</figcaption>\n");
	if (points == 0) {
		P(h, "<p class=\"note\">No group has both scored runs and a recorded spend.</p>"
		     "</figure>\n");
		return;
	}
	xmax = nice_ceil(xmax);
	P(h,
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d "
	    "%d\" role=\"img\" aria-label=\"spend per run against pass rate\">\n",
	    W, H, W, H);
	for (int t = 0; t <= 4; t++) {
		double x = L + (W - L - R) * t / 4.0, y = T + (H - T - B) * (4 - t) / 4.0;

		P(h, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", x, T, x,
		    H - B);
		P(h, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>", L, y,
		    W - R, y);
		P(h, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">$%.4g</text>", x, H - B + 16,
		    xmax * t / 4.0);
		P(h, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%d %%</text>\n", L - 6, y + 4,
		    t * 25);
	}
	P(h, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>", L, H - B, W - R,
	    H - B);
	P(h, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>", L, T, L, H - B);
	P(h, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">spend per run (USD)</text>",
	    L + (W - L - R) / 2, H - 12);
	P(h,
	    "<text x=\"16\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 16 %d)\">pass "
	    "rate</text>\n",
	    T + (H - T - B) / 2, T + (H - T - B) / 2);
	json_array_foreach(groups, i, g) {
		const json_t *sp = get(g, "spend_usd", "per_run"),
			     *rate = json_object_get(g, "pass_rate");
		const json_t *ci = json_object_get(g, "pass_rate_ci");
		double x, y;

		if (!json_is_number(sp) || !json_is_number(rate))
			continue;
		x = L + (W - L - R) * json_number_value(sp) / xmax;
		y = T + (H - T - B) * (1.0 - json_number_value(rate));
		P(h, "<g><title>");
		E(h, gstr(g, "id"), 0);
		P(h, " ");
		E(h, gstr(g, "label"), 0);
		P(h, ": $%.4f per run, pass rate %.1f %%</title>", json_number_value(sp),
		    json_number_value(rate) * 100);
		if (json_is_array(ci))
			P(h,
			    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			    "stroke=\"#8c959f\"/>",
			    x, T + (H - T - B) * (1.0 - json_number_value(json_array_get(ci, 0))),
			    x, T + (H - T - B) * (1.0 - json_number_value(json_array_get(ci, 1))));
		P(h,
		    "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"6\" fill=\"#0969da\" "
		    "fill-opacity=\"0.8\"/>",
		    x, y);
		P(h, "<text x=\"%.1f\" y=\"%.1f\">", x + 9, y - 6);
		E(h, gstr(g, "id"), 0);
		P(h, "</text></g>\n");
	}
	P(h, "</svg></figure>\n");
}

/* Plot 3: the task x group heatmap, each cell coloured by its pass share and labelled. */
static void
plot_heatmap(struct html *h, const json_t *model)
{
	enum { CW = 64, CH = 22, HL = 280, HT = 28 };
	const json_t *groups = json_object_get(model, "groups"),
		     *matrix = json_object_get(model, "matrix");
	size_t ng = json_array_size(groups), nt = json_array_size(matrix), i, j;
	int width = HL + (int)ng * CW + 10, height = HT + (int)nt * CH + 10;
	const json_t *g, *row, *c;

	P(h, "<figure><figcaption>Tasks × groups: passed/scored runs, coloured by pass share "
	     "(grey: no scored run; +N: runs not scored)</figcaption>\n");
	if (nt == 0 || ng == 0) {
		P(h, "<p class=\"note\">No runs.</p></figure>\n");
		return;
	}
	P(h,
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d "
	    "%d\" role=\"img\" aria-label=\"tasks by groups heatmap\">\n",
	    width, height, width, height);
	json_array_foreach(groups, j, g) {
		P(h, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\"><title>",
		    HL + j * CW + CW / 2.0, HT - 10);
		E(h, gstr(g, "label"), 0);
		P(h, "</title>");
		E(h, gstr(g, "id"), 0);
		P(h, "</text>\n");
	}
	json_array_foreach(matrix, i, row) {
		double y = HT + (double)i * CH;

		P(h, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\"><title>", HL - 8,
		    y + CH / 2.0 + 4);
		E(h, gstr(row, "task"), 0);
		P(h, "</title>");
		E(h, gstr(row, "task"), 34);
		P(h, "</text>\n");
		json_array_foreach(json_object_get(row, "cells"), j, c) {
			json_int_t sc = geti(c, "scored"), pa = geti(c, "passed"),
				   un = geti(c, "unscored");
			json_int_t other = geti(c, "skipped") + geti(c, "not_run");
			double x = HL + (double)j * CW;
			char fill[8] = "#eaeef2";

			if (sc > 0)
				heat_colour((double)pa / (double)sc, fill);
			P(h, "<g><title>");
			E(h, gstr(row, "task"), 0);
			P(h, " × ");
			E(h, gstr(json_array_get(groups, j), "label"), 0);
			P(h,
			    ": %" JSON_INTEGER_FORMAT " passed of %" JSON_INTEGER_FORMAT
			    " scored, %" JSON_INTEGER_FORMAT " forfeit, %" JSON_INTEGER_FORMAT
			    " not scored, %" JSON_INTEGER_FORMAT " skipped, %" JSON_INTEGER_FORMAT
			    " not run</title>",
			    pa, sc, geti(c, "forfeit"), un, geti(c, "skipped"), geti(c, "not_run"));
			P(h,
			    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"%s\" "
			    "stroke=\"#fff\"/>",
			    x, y, CW, CH, fill);
			P(h, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x + CW / 2.0,
			    y + CH / 2.0 + 4);
			if (geti(c, "runs") + other == 0)
				P(h, "·");
			else if (geti(c, "runs") == 0)
				P(h, "%s", geti(c, "skipped") > 0 ? "skipped" : "not run");
			else
				P(h, "%" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT, pa, sc);
			if (un > 0)
				P(h, " +%" JSON_INTEGER_FORMAT, un);
			P(h, "</text></g>\n");
		}
	}
	P(h, "</svg></figure>\n");
}

/* Plot 4: a box plot of each group's run times (whiskers min to max, the p90 marked). */
static void
plot_times(struct html *h, const json_t *groups)
{
	size_t n = json_array_size(groups), i;
	int height = TOP + (int)n * ROW_H + 14;
	double xmax = 0;
	const json_t *g;

	json_array_foreach(groups, i, g)
		if (json_is_number(get(g, "duration_s", "max")) &&
		    json_number_value(get(g, "duration_s", "max")) > xmax)
			xmax = json_number_value(get(g, "duration_s", "max"));
	xmax = nice_ceil(xmax);
	P(h,
	    "<figure><figcaption>Time per run (seconds): box from the first to the third "
	    "quartile, median line, whiskers from the shortest to the longest, p90 "
	    "diamond</figcaption>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
	    "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"time per run\">\n",
	    LEFT + PLOT_W + 190, height, LEFT + PLOT_W + 190, height);
	x_grid(h, height, xmax, false);
	json_array_foreach(groups, i, g) {
		double y = TOP + (double)i * ROW_H + ROW_H / 2.0;
		const json_t *d = json_object_get(g, "duration_s");
		double v[6];
		static const char *const k[6] = {"min", "q1", "median", "q3", "max", "p90"};
		bool ok = true;

		row_label(h, g, y);
		for (int q = 0; q < 6; q++) {
			ok &= json_is_number(json_object_get(d, k[q]));
			v[q] = LEFT + PLOT_W * json_number_value(json_object_get(d, k[q])) / xmax;
		}
		if (!ok) {
			P(h, "<text x=\"%d\" y=\"%.1f\" class=\"note\">no durations</text>\n",
			    LEFT + 4, y + 4);
			continue;
		}
		P(h, "<g><title>");
		E(h, gstr(g, "label"), 0);
		P(h,
		    ": %" JSON_INTEGER_FORMAT " runs, min %.4g, q1 %.4g, median %.4g, q3 %.4g, p90 "
		    "%.4g, max %.4g s</title>",
		    geti(d, "runs"), json_number_value(json_object_get(d, "min")),
		    json_number_value(json_object_get(d, "q1")),
		    json_number_value(json_object_get(d, "median")),
		    json_number_value(json_object_get(d, "q3")),
		    json_number_value(json_object_get(d, "p90")),
		    json_number_value(json_object_get(d, "max")));
		P(h, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#57606a\"/>",
		    v[0], y, v[4], y);
		P(h, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#57606a\"/>",
		    v[0], y - 5, v[0], y + 5);
		P(h, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#57606a\"/>",
		    v[4], y - 5, v[4], y + 5);
		P(h,
		    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"14\" fill=\"#ddf4ff\" "
		    "stroke=\"#0969da\"/>",
		    v[1], y - 7, v[3] - v[1] < 1 ? 1 : v[3] - v[1]);
		P(h,
		    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#0969da\" "
		    "stroke-width=\"2\"/>",
		    v[2], y - 7, v[2], y + 7);
		P(h, "<path d=\"M%.1f %.1fl4 4l-4 4l-4 -4z\" fill=\"#cf222e\"/></g>", v[5], y - 4);
		P(h, "<text x=\"%d\" y=\"%.1f\">median %.4g s, p90 %.4g s</text>\n",
		    LEFT + PLOT_W + 12, y + 4, json_number_value(json_object_get(d, "median")),
		    json_number_value(json_object_get(d, "p90")));
	}
	P(h, "</svg></figure>\n");
}

static void
th_row(struct html *h, const char *const *cells, size_t n)
{
	P(h, "<tr>");
	for (size_t i = 0; i < n; i++)
		P(h, "<th%s>%s</th>", i == 0 ? " class=\"l\"" : "", cells[i]);
	P(h, "</tr>\n");
}

static void
group_cell(struct html *h, const json_t *g)
{
	P(h, "<td class=\"l\">");
	E(h, gstr(g, "id"), 0);
	P(h, " ");
	E(h, gstr(g, "label"), 0);
	P(h, "</td>");
}

static void
tables(struct html *h, const json_t *m)
{
	static const char *const g_head[] = {"group", "runs", "scored", "passed", "failed",
	    "forfeit", "not scored", "skipped", "not run", "pass rate", "95 % interval", "pass@k",
	    "flagged"};
	static const char *const g_keys[] = {
	    "runs", "scored", "passed", "failed", "forfeit", "unscored", "skipped", "not_run"};
	static const char *const c_head[] = {"group", "built", "PoCs stopped", "functional tests",
	    "hidden tests", "runs timed", "median (s)", "p90 (s)", "spend (USD)", "spend per run",
	    "runs with spend", "tokens in", "tokens out", "runs with tokens"};
	static const char *const c_keys[] = {"built", "pov_stopped", "functional", "hidden"};
	static const char *const t_keys[][2] = {{"duration_s", "runs"}, {"duration_s", "median"},
	    {"duration_s", "p90"}, {"spend_usd", "total"}, {"spend_usd", "per_run"},
	    {"spend_usd", "runs"}, {"tokens", "in"}, {"tokens", "out"}, {"tokens", "runs"}};
	const json_t *groups = json_object_get(m, "groups"), *g, *e;
	size_t i, j;

	P(h, "<h2>Pass rate by agent and model</h2>\n<p>Pass rate = passed / scored runs, with its "
	     "95 %% Wilson interval; pass@k is the unbiased estimator averaged over tasks. "
	     "Reference runs are left out of every figure. Flagged: runs in which the "
	     "answer-seeking scan found something (never part of the grade).</p>\n<table>");
	th_row(h, g_head, SB_ARRAY_SIZE(g_head));
	json_array_foreach(groups, i, g) {
		const json_t *ci = json_object_get(g, "pass_rate_ci");

		P(h, "<tr>");
		group_cell(h, g);
		for (j = 0; j < SB_ARRAY_SIZE(g_keys); j++) {
			P(h, "<td>");
			num(h, json_object_get(g, g_keys[j]));
			P(h, "</td>");
		}
		P(h, "<td>");
		pct(h, json_object_get(g, "pass_rate"));
		P(h, "</td><td>");
		if (json_is_array(ci)) {
			pct(h, json_array_get(ci, 0));
			P(h, " – ");
			pct(h, json_array_get(ci, 1));
		} else {
			P(h, "–");
		}
		P(h, "</td><td>");
		json_array_foreach(json_object_get(g, "pass_at_k"), j, e) {
			P(h, "%spass@%" JSON_INTEGER_FORMAT " ", j ? "<br>" : "", geti(e, "k"));
			pct(h, json_object_get(e, "value"));
		}
		if (json_array_size(json_object_get(g, "pass_at_k")) == 0)
			P(h, "–");
		P(h, "</td><td>");
		num(h, json_object_get(g, "flagged"));
		P(h, "</td></tr>\n");
	}
	P(h, "</table>\n<h2>Checks, time, cost and tokens</h2>\n<p>Checks are shares of scored "
	     "runs (a PoC check counts when every PoC stopped reproducing). Times are the runs' "
	     "wall time; quantiles interpolate linearly between ranks.</p>\n<table>");
	th_row(h, c_head, SB_ARRAY_SIZE(c_head));
	json_array_foreach(groups, i, g) {
		P(h, "<tr>");
		group_cell(h, g);
		for (j = 0; j < SB_ARRAY_SIZE(c_keys); j++) {
			P(h, "<td>");
			pct(h, get(get(g, "checks", c_keys[j]), "share", NULL));
			P(h, "</td>");
		}
		for (j = 0; j < SB_ARRAY_SIZE(t_keys); j++) {
			P(h, "<td>");
			num(h, get(g, t_keys[j][0], t_keys[j][1]));
			P(h, "</td>");
		}
		P(h, "</tr>\n");
	}
	P(h, "</table>\n");
}

/* What is not in the figures: unreadable summaries, skipped and not-run slots, notes. */
static void
left_out(struct html *h, const json_t *m)
{
	const json_t *e;
	size_t i;

	if (json_array_size(json_object_get(m, "unreadable")) > 0) {
		P(h, "<h2>Unreadable (%zu)</h2>\n<ul>",
		    json_array_size(json_object_get(m, "unreadable")));
		json_array_foreach(json_object_get(m, "unreadable"), i, e) {
			P(h, "<li>");
			E(h, gstr(e, "path"), 0);
			P(h, ": ");
			E(h, gstr(e, "reason"), 0);
			P(h, "</li>\n");
		}
		P(h, "</ul>\n");
	}
	for (int l = 0; l < 2; l++) {
		const json_t *list = json_object_get(m, l == 0 ? "skipped" : "not_run");

		if (json_array_size(list) == 0)
			continue;
		P(h, "<h2>%s (%zu)</h2>\n<ul>", l == 0 ? "Skipped" : "Not run",
		    json_array_size(list));
		json_array_foreach(list, i, e) {
			P(h, "<li>");
			E(h, gstr(e, "task"), 0);
			P(h, ", ");
			E(h, gstr(e, "agent"), 0);
			P(h, " / ");
			E(h, gstr(e, "model"), 0);
			P(h, ", attempt %" JSON_INTEGER_FORMAT ": ", geti(e, "attempt"));
			E(h, l == 0 ? (gstr(e, "reason") ?: "no reason given") : gstr(e, "state"),
			    0);
			P(h, "</li>\n");
		}
		P(h, "</ul>\n");
	}
	if (json_array_size(json_object_get(m, "notes")) > 0) {
		P(h, "<h2>Notes</h2>\n<ul>");
		json_array_foreach(json_object_get(m, "notes"), i, e) {
			P(h, "<li>");
			E(h, json_string_value(e), 0);
			P(h, "</li>\n");
		}
		P(h, "</ul>\n");
	}
}

/* A run's outcome as the tables name it: a fixed word, never the input's text. */
static const char *
outcome_name(const char *cat)
{
	return sb_streq(cat, "passed")    ? "passed"
	       : sb_streq(cat, "failed")  ? "failed"
	       : sb_streq(cat, "forfeit") ? "forfeit"
					  : "not scored";
}

/* A run's row as both run tables start it: group, task, attempt (the cell left open). */
static void
run_row_start(struct html *h, const json_t *r)
{
	P(h, "<tr><td class=\"l\">");
	E(h, gstr(r, "group"), 0);
	P(h, "</td><td class=\"l\">");
	E(h, gstr(r, "task"), 0);
	P(h, "</td><td>");
	num(h, json_object_get(r, "attempt"));
}

/* A run's flags: "3: git_history, network", or "0". */
static void
flags_cell(struct html *h, const json_t *r)
{
	const json_t *k;
	size_t i;

	num(h, json_object_get(r, "flags"));
	json_array_foreach(json_object_get(r, "flag_kinds"), i, k) {
		P(h, "%s", i == 0 ? ": " : ", ");
		E(h, json_string_value(k) ?: "?", 0);
	}
}

/* The runs the answer-seeking scan flagged, in view (nothing when none was). */
static void
flagged_table(struct html *h, const json_t *m)
{
	static const char *const head[] = {"group", "task", "attempt", "outcome", "flags", "run"};
	const json_t *r;
	size_t i;

	if (geti(json_object_get(m, "totals"), "flagged") <= 0)
		return;
	P(h,
	    "<h2>Flagged runs (%" JSON_INTEGER_FORMAT ")</h2>\n<p>Runs in which the "
	    "answer-seeking scan found what may be an attempt on the hidden answer; the "
	    "evidence is under &quot;flags&quot; in each run's summary.json. Flags are for a "
	    "person to weigh: they never change a grade.</p>\n<table>",
	    geti(json_object_get(m, "totals"), "flagged"));
	th_row(h, head, SB_ARRAY_SIZE(head));
	json_array_foreach(json_object_get(m, "runs"), i, r) {
		if (geti(r, "flags") <= 0)
			continue;
		run_row_start(h, r);
		P(h, "</td><td class=\"l\">%s</td><td class=\"l\">",
		    outcome_name(gstr(r, "category")));
		flags_cell(h, r);
		P(h, "</td><td class=\"l\">");
		E(h, gstr(r, "run_id") ?: "?", 0);
		P(h, "</td></tr>\n");
	}
	P(h, "</table>\n");
}

static void
runs_table(struct html *h, const json_t *m)
{
	static const char *const head[] = {"group", "task", "attempt", "outcome", "time (s)",
	    "spend (USD)", "tokens in/out", "flags", "run", "message"};
	const json_t *runs = json_object_get(m, "runs"), *r;
	size_t i;

	P(h, "<details><summary>Runs (%zu)</summary>\n<table>", json_array_size(runs));
	th_row(h, head, SB_ARRAY_SIZE(head));
	json_array_foreach(runs, i, r) {
		const char *cat = gstr(r, "category");

		run_row_start(h, r);
		/* The class is one of four fixed names, never the input's text. */
		P(h, "</td><td class=\"l %s\">%s</td><td>",
		    sb_streq(cat, "passed")    ? "passed"
		    : sb_streq(cat, "failed")  ? "failed"
		    : sb_streq(cat, "forfeit") ? "forfeit"
					       : "error",
		    outcome_name(cat));
		num(h, json_object_get(r, "duration_s"));
		P(h, "</td><td>");
		num(h, json_object_get(r, "spend_usd"));
		P(h, "</td><td>");
		num(h, json_object_get(r, "tokens_in"));
		P(h, "/");
		num(h, json_object_get(r, "tokens_out"));
		P(h, "</td><td class=\"l\">");
		flags_cell(h, r);
		P(h, "</td><td class=\"l\">");
		E(h, gstr(r, "run_id") ?: "?", 0);
		P(h, "</td><td class=\"l\">");
		E(h, gstr(r, "message"), 0);
		P(h, "</td></tr>\n");
	}
	P(h, "</table></details>\n");
}

int
report_render_html(const json_t *m, struct sb_buf *out, struct sb_error **err)
{
	static const char *const tot_head[] = {"runs found", "reference runs (left out)", "runs",
	    "scored", "passed", "failed", "forfeit", "not scored", "unreadable", "skipped",
	    "not run", "flagged runs"};
	static const char *const tot_keys[] = {"runs_found", "reference_runs", "runs", "scored",
	    "passed", "failed", "forfeit", "unscored", "unreadable", "skipped", "not_run",
	    "flagged"};
	struct html h = {out, err, 0};
	const json_t *src = json_object_get(m, "source"), *job = json_object_get(src, "job");

	P(&h,
	    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	    "style-src 'unsafe-inline'\">\n"
	    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	    "<title>SSEBench report</title>\n<style>%s</style>\n</head>\n<body>\n"
	    "<h1>SSEBench report</h1>\n<p>",
	    css);
	if (job != NULL) {
		P(&h, "Job ");
		E(&h, gstr(job, "job_id"), 0);
		P(&h, " (");
		E(&h, gstr(src, "path"), 0);
		P(&h, "), created ");
		E(&h, gstr(job, "created_at") ?: "?", 0);
		P(&h, " by ssebench ");
		E(&h, gstr(job, "ssebench_version") ?: "?", 0);
		P(&h, "; %" JSON_INTEGER_FORMAT " attempt(s) per task.",
		    json_integer_value(get(job, "matrix", "attempts")));
	} else {
		P(&h, "Results directory ");
		E(&h, gstr(src, "path"), 0);
		P(&h, ".");
	}
	P(&h, "</p>\n<table>");
	th_row(&h, tot_head, SB_ARRAY_SIZE(tot_head));
	P(&h, "<tr>");
	for (size_t i = 0; i < SB_ARRAY_SIZE(tot_keys); i++) {
		P(&h, "<td%s>", i == 0 ? " class=\"l\"" : "");
		num(&h, get(m, "totals", tot_keys[i]));
		P(&h, "</td>");
	}
	P(&h, "</tr></table>\n");
	tables(&h, m);
	flagged_table(&h, m);
	P(&h, "<h2>Plots</h2>\n");
	plot_pass_rate(&h, json_object_get(m, "groups"));
	plot_cost(&h, json_object_get(m, "groups"));
	plot_heatmap(&h, m);
	plot_times(&h, json_object_get(m, "groups"));
	left_out(&h, m);
	runs_table(&h, m);
	P(&h, "</body>\n</html>\n");
	return h.rc < 0 ? -1 : 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report.h: `ssebench report`, the figures of many runs (docs/report.md).
 *
 * Three stages, so that every format shows the same numbers:
 *   1. collect: walk a results directory (report_scan_results) or read a job directory
 *      (report_read_job) into an *input*: one small record per run (report_record), the
 *      summaries that could not be read and why, and a job's skipped and not-run slots;
 *   2. compute: report_model() turns the input into the *model*, one JSON object holding
 *      every figure (it is what --format json prints);
 *   3. render: report_render() writes the model as md, json, csv, csv-runs, html or junit,
 *      reading numbers from the model only.
 */
#ifndef SSEBENCH_REPORT_H
#define SSEBENCH_REPORT_H

#include <stdint.h>

#include <jansson.h>

#include "sb/buf.h"
#include "sb/common.h"
#include "sb/error.h"

/* The newest job.json / index.json version this code reads. */
#define REPORT_JOB_VERSION 1
/* Summaries read in one report (a walk that finds more fails: the figures would be partial). */
#define REPORT_RUNS_MAX 1000000
/* Directory levels a results walk goes down (run directories are 4 below the root). */
#define REPORT_WALK_DEPTH_MAX 8
/* Bytes of a run's error message kept in its record. */
#define REPORT_MESSAGE_MAX 512
/* The largest k of pass@k reported. */
#define REPORT_PASS_AT_K_MAX 100
/* Bytes of one rendered report. */
#define REPORT_OUTPUT_MAX ((size_t)1024 * 1024 * 1024)
/* The z of a two-sided 95 % interval. */
#define REPORT_Z95 1.959964
/* Entries of a summary's "flags" array looked at (the scan writes at most 64). */
#define REPORT_FLAGS_READ 64
/*
 * The largest "flags_total" taken as a count: more than a scan of its bounded inputs (two
 * files of at most 64 MiB) could find. A larger one is no count at all.
 */
#define REPORT_FLAGS_TOTAL_MAX 1000000000
/* Distinct flag kinds kept of one run, and the bytes kept of each. */
#define REPORT_FLAG_KINDS_MAX 16
#define REPORT_FLAG_KIND_MAX  64

enum report_format {
	REPORT_MD,
	REPORT_JSON,
	REPORT_CSV,
	REPORT_CSV_RUNS,
	REPORT_HTML,
	REPORT_JUNIT,
};

/* "md", "json", ... into *ret. Returns -1 for a name that is none of them. */
int report_format_parse(const char *name, enum report_format *ret);

/*
 * The Wilson score interval of x successes in n trials at z (REPORT_Z95 for 95 %). False
 * (and nothing written) when n is 0 or x > n. The bounds are clamped to [0, 1] and are
 * exactly 0 when x is 0 and exactly 1 when x is n.
 */
bool report_wilson(uint64_t x, uint64_t n, double z, double *ret_lo, double *ret_hi);

/*
 * The unbiased pass@k estimate for one task with n attempts of which c passed:
 * 1 - C(n-c, k) / C(n, k), computed as a product so it never overflows. NAN unless
 * 1 <= k <= n and c <= n.
 */
double report_pass_at_k(uint64_t n, uint64_t c, uint64_t k);

/*
 * The p-quantile (0 <= p <= 1) of n sorted values by linear interpolation between closest
 * ranks (Hyndman and Fan type 7: h = (n - 1) p). NAN when n is 0.
 */
double report_quantile(const double *sorted, size_t n, double p);

/*
 * The record of one run from its summary.json s (any JSON at all) found in dir: a new
 * object with strings task, agent, model (a missing one is "?"), egress ("restricted" or
 * "open"), category ("passed", "failed", "forfeit" or "error"), reference (bool), and
 * what the figures need, each null when the summary lacks it or has the wrong type.
 * status, scored and tier come from run_summary_row(), so `runs results` agrees; a scored
 * run whose isolation record says forfeit or unscored counts as that (the lesser wins).
 * flags is the answer-seeking scan's count: "flags_total" when it is an integer from 0 to
 * REPORT_FLAGS_TOTAL_MAX (else 0), but never fewer than the objects among the first
 * REPORT_FLAGS_READ entries of "flags"; flag_kinds the sorted distinct "kind" strings of
 * those objects (at most REPORT_FLAG_KINDS_MAX, each cut to REPORT_FLAG_KIND_MAX bytes).
 */
json_t *report_record(const json_t *s, const char *dir);

/* An empty input: {"source": {...}, "records": [], "unreadable": [], "skipped": [],
 * "not_run": [], "notes": []}. kind is "results" or "job". */
json_t *report_input_new(const char *kind, const char *path);

/*
 * Add the runs of every summary.json below dir (at most REPORT_WALK_DEPTH_MAX levels down;
 * symbolic links are not followed; a top-level "jobs" directory, "latest" and dot entries
 * are skipped) to input. A summary that cannot be read is listed under "unreadable" with
 * the reason. Fails when dir cannot be opened or holds more than REPORT_RUNS_MAX runs.
 */
int report_scan_results(const char *dir, json_t *input, struct sb_error **err);

/*
 * Read the job directory dir (job.json and index.json) into input: each done slot's run,
 * each skipped slot with its reason, each pending or running slot as not run. A version
 * newer than REPORT_JOB_VERSION, or an index that is not exactly what a job writes, fails
 * with a message saying what is wrong; a done slot whose summary cannot be read is listed
 * under "unreadable".
 */
int report_read_job(const char *dir, json_t *input, struct sb_error **err);

/* The model of an input (docs/report.md has its members). A new reference. */
json_t *report_model(const json_t *input);

/* Render model as fmt into out. Fails only when out's maximum is reached. */
int report_render(
    const json_t *model, enum report_format fmt, struct sb_buf *out, struct sb_error **err);

/* The renderers, one per format (report-render.c, report-html.c). */
int report_render_md(const json_t *model, struct sb_buf *out, struct sb_error **err);
int report_render_csv(const json_t *model, struct sb_buf *out, struct sb_error **err);
int report_render_csv_runs(const json_t *model, struct sb_buf *out, struct sb_error **err);
int report_render_junit(const json_t *model, struct sb_buf *out, struct sb_error **err);
int report_render_html(const json_t *model, struct sb_buf *out, struct sb_error **err);

/*
 * s escaped for HTML and XML text and double- or single-quoted attribute values: & < > "
 * ' as entities; control characters (which XML 1.0 forbids, apart from tab and newline
 * here written as \t and \n too), DEL, and the bidirectional overrides U+202A..U+202E and
 * U+2066..U+2069 as visible \xNN or \u{NNNN} text; bytes that are not UTF-8 as \xNN. max > 0
 * keeps at most that many characters of s (then "…").
 */
int report_xml_escape(struct sb_buf *out, const char *s, size_t max, struct sb_error **err);

#endif

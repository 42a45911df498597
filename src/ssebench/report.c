/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report.c: what `ssebench report` counts: the runs of a results directory or of a job,
 * each reduced to a record, and the one function that computes every figure from them
 * (report_model). The renderers (report-render.c, report-html.c) only format what it
 * computed, so that every format shows the same numbers. docs/report.md says how each
 * number is computed.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>

#include "sb/buf.h"
#include "sb/fs.h"
#include "sb/json.h"
#include "sb/limits.h"
#include "sb/mem.h"
#include "sb/parse.h"

#include "report.h"
#include "run.h"

int
report_format_parse(const char *name, enum report_format *ret)
{
	static const struct {
		const char *name;
		enum report_format fmt;
	} formats[] = {
	    {"md", REPORT_MD},
	    {"json", REPORT_JSON},
	    {"csv", REPORT_CSV},
	    {"csv-runs", REPORT_CSV_RUNS},
	    {"html", REPORT_HTML},
	    {"junit", REPORT_JUNIT},
	};

	for (size_t i = 0; i < SB_ARRAY_SIZE(formats); i++)
		if (sb_streq(name, formats[i].name)) {
			*ret = formats[i].fmt;
			return 0;
		}
	return -1;
}

/* --- statistics ------------------------------------------------------------------ */

bool
report_wilson(uint64_t x, uint64_t n, double z, double *ret_lo, double *ret_hi)
{
	double p, z2n, denom, centre, half, lo, hi;

	if (n == 0 || x > n)
		return false;
	p = (double)x / (double)n;
	z2n = z * z / (double)n;
	denom = 1.0 + z2n;
	centre = (p + z2n / 2.0) / denom;
	half = z / denom * sqrt(p * (1.0 - p) / (double)n + z2n / (4.0 * (double)n));
	lo = centre - half;
	hi = centre + half;
	/* The exact bounds at the ends, which rounding would otherwise leave at 1e-17 off. */
	*ret_lo = x == 0 ? 0.0 : lo < 0.0 ? 0.0 : lo;
	*ret_hi = x == n ? 1.0 : hi > 1.0 ? 1.0 : hi;
	return true;
}

double
report_pass_at_k(uint64_t n, uint64_t c, uint64_t k)
{
	double prod = 1.0;

	if (k == 0 || k > n || c > n)
		return NAN;
	/* Fewer failures than k: every draw of k attempts holds a pass. */
	if (n - c < k)
		return 1.0;
	/* C(n-c, k) / C(n, k) = prod_{i = n-c+1}^{n} (1 - k / i) (Chen et al. 2021). */
	for (uint64_t i = n - c + 1; i <= n; i++)
		prod *= 1.0 - (double)k / (double)i;
	return 1.0 - prod;
}

double
report_quantile(const double *sorted, size_t n, double p)
{
	double h, lo;
	size_t i;

	if (n == 0)
		return NAN;
	if (p <= 0.0)
		return sorted[0];
	if (p >= 1.0)
		return sorted[n - 1];
	h = (double)(n - 1) * p;
	lo = floor(h);
	i = (size_t)lo;
	if (i + 1 >= n)
		return sorted[n - 1];
	return sorted[i] + (h - lo) * (sorted[i + 1] - sorted[i]);
}

/* --- one run --------------------------------------------------------------------- */

static const char *
str_or(const json_t *v, const char *def)
{
	return json_is_string(v) ? json_string_value(v) : def;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A number that is finite and not negative, as a JSON real; else null. */
static json_t *
amount_or_null(const json_t *v)
{
	double d;

	if (!json_is_number(v))
		return json_null();
	d = json_number_value(v);
	if (!isfinite(d) || d < 0)
		return json_null();
	return json_real(d);
}

/* A count (an integer, not negative), else null. */
static json_t *
count_or_null(const json_t *v)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return json_null();
	return json_integer(json_integer_value(v));
}

/* At most max bytes of s, cut at a character boundary (jansson strings are UTF-8). */
static json_t *
bounded_string(const char *s, size_t max)
{
	size_t n;

	if (s == NULL)
		return json_null();
	n = strlen(s);
	if (n > max) {
		n = max;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	return json_stringn(s, n) ?: json_null();
}

/*
 * The answer-seeking scan's verdict on a run (docs/running.md, "Attempts on the answer"):
 * how many flags, and their kinds. Both come from a file the agent may have had a hand in
 * (the excerpts are its text), so nothing is taken on trust: flags_total counts when it is
 * a sane integer, and 0 when it is missing (a summary older than the scan), negative, not
 * an integer or past any count a scan can reach. The flags listed set a floor, so a total
 * of 0 next to a list of flags still reads as flagged: hiding flags must not be easier
 * than showing them. Only kinds are kept of each flag, bounded, never its excerpt: the
 * evidence stays in the run's summary, and 10,000 runs' excerpts would swell the report.
 */
static void
record_flags(const json_t *s, json_int_t *ret_count, json_t **ret_kinds)
{
	const json_t *total = json_object_get(s, "flags_total"), *f;
	json_auto_t *seen = json_object();
	const char *names[REPORT_FLAG_KINDS_MAX], *key;
	json_int_t count = 0, listed = 0;
	json_t *kinds = json_array(), *v;
	size_t i, n = 0;

	if (json_is_integer(total) && json_integer_value(total) >= 0 &&
	    json_integer_value(total) <= REPORT_FLAGS_TOTAL_MAX)
		count = json_integer_value(total);
	json_array_foreach(json_object_get(s, "flags"), i, f) {
		json_auto_t *kind = NULL;

		if (i == REPORT_FLAGS_READ)
			break;
		if (!json_is_object(f))
			continue;
		listed++;
		kind = bounded_string(
		    json_string_value(json_object_get(f, "kind")), REPORT_FLAG_KIND_MAX);
		if (!json_is_string(kind) || json_string_length(kind) == 0 ||
		    json_object_size(seen) == REPORT_FLAG_KINDS_MAX)
			continue;
		json_object_set_new(seen, json_string_value(kind), json_null());
	}
	json_object_foreach(seen, key, v)
		names[n++] = key;
	qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; i < n; i++)
		json_array_append_new(kinds, json_string(names[i]));
	*ret_count = count > listed ? count : listed;
	*ret_kinds = kinds;
}

/* A patch_result's PoC check stopped every PoC (and there was one). */
static bool
pov_stopped(const json_t *pr)
{
	const json_t *total = json_object_get(pr, "pov_total");
	const json_t *passed = json_object_get(pr, "pov_passed");

	return json_is_integer(total) && json_integer_value(total) > 0 && json_is_integer(passed) &&
	       json_integer_value(passed) == json_integer_value(total);
}

json_t *
report_record(const json_t *s, const char *dir)
{
	json_t *row = run_summary_row(s, dir);
	const json_t *cfg = json_object_get(s, "config");
	const json_t *pr = json_object_get(s, "patch_result");
	const json_t *usage = json_object_get(s, "usage");
	const json_t *job = json_object_get(s, "job");
	const char *agent = str_or(json_object_get(row, "agent"), "?");
	const char *status = json_string_value(json_object_get(row, "status"));
	const char *tier = json_string_value(json_object_get(row, "tier"));
	const char *outcome =
	    json_string_value(json_object_get(json_object_get(s, "isolation"), "outcome"));
	bool scored = json_is_true(json_object_get(row, "scored"));
	const char *category, *egress;
	json_t *attempt = json_null(), *tin, *tout, *rec, *kinds;
	json_int_t flags;

	/*
	 * The category: not scored is a harness error; scored, it is what the status says,
	 * except that an isolation record saying forfeit (or unscored) wins over a status
	 * saying otherwise: the CLI never writes such a pair, and the lesser is the safe
	 * reading of a file that does.
	 */
	if (!scored || sb_streq(outcome, "unscored"))
		category = "error";
	else if (sb_streq(status, "forfeit") || sb_streq(outcome, "forfeit"))
		category = "forfeit";
	else if (sb_streq(status, "passed"))
		category = "passed";
	else
		category = "failed";
	/* A scored run's tier is what it established; an unscored one has none: its claim. */
	if (scored && tier != NULL)
		egress = tier;
	else
		egress = sb_streq(str_or(json_object_get(cfg, "egress"), NULL), "open")
			     ? "open"
			     : "restricted";
	if (json_is_integer(json_object_get(job, "attempt")) &&
	    json_integer_value(json_object_get(job, "attempt")) >= 1) {
		json_decref(attempt);
		attempt = json_integer(json_integer_value(json_object_get(job, "attempt")));
	}
	/* Tokens count only as a pair, so that in and out are sums over the same runs. */
	tin = count_or_null(json_object_get(usage, "tokens_in"));
	tout = count_or_null(json_object_get(usage, "tokens_out"));
	if (json_is_null(tin) || json_is_null(tout)) {
		json_decref(tin);
		json_decref(tout);
		tin = json_null();
		tout = json_null();
	}
	record_flags(s, &flags, &kinds);
	rec = json_pack("{s:O, s:s, s:s, s:s, s:s, s:s, s:O, s:b, s:O, s:b, s:o, s:o, s:O, s:o,"
			" s:o, s:o, s:o, s:o, s:b, s:b, s:b, s:b, s:I, s:o, s:o, s:o}",
	    "run_id", json_object_get(row, "run_id"), "task",
	    str_or(json_object_get(row, "task"), "?"), "agent", agent, "model",
	    str_or(json_object_get(row, "model"), "?"), "egress", egress, "category", category,
	    "status", json_object_get(row, "status"), "scored", category[0] != 'e', "tier",
	    json_object_get(row, "tier"), "reference",
	    json_is_true(json_object_get(cfg, "reference_run")) || sb_streq(agent, "reference"),
	    "attempt", attempt, "job_id",
	    sb_json_string_or_null(json_string_value(json_object_get(job, "id"))), "started_at",
	    json_object_get(row, "started_at"), "finished_at",
	    sb_json_string_or_null(json_string_value(json_object_get(s, "finished_at"))),
	    "duration_s", amount_or_null(json_object_get(s, "duration_s")), "spend_usd",
	    amount_or_null(json_object_get(s, "spend")), "tokens_in", tin, "tokens_out", tout,
	    "built", json_is_true(json_object_get(pr, "build_success")), "pov_stopped",
	    pov_stopped(pr),
	    "functional", json_is_true(json_object_get(pr, "func_test_success")), "hidden",
	    json_is_true(json_object_get(pr, "intent_test_success")), "flags", flags, "flag_kinds",
	    kinds, "message",
	    bounded_string(json_string_value(json_object_get(pr, "error_msg")), REPORT_MESSAGE_MAX),
	    "dir", sb_json_string_or_null(dir));
	json_decref(row);
	if (rec == NULL)
		sb_oom(0);
	return rec;
}

/* --- collecting ------------------------------------------------------------------ */

json_t *
report_input_new(const char *kind, const char *path)
{
	json_t *in = json_pack("{s:{s:s, s:o}, s:[], s:[], s:[], s:[], s:[]}", "source", "kind",
	    kind, "path", sb_json_string_or_null(path), "records", "unreadable", "skipped",
	    "not_run", "notes");

	if (in == NULL)
		sb_oom(0);
	return in;
}

static void
add_unreadable(json_t *input, const char *path, const char *why)
{
	json_array_append_new(json_object_get(input, "unreadable"),
	    json_pack("{s:o, s:o}", "path", sb_json_string_or_null(path), "reason",
		sb_json_string_or_null(why)));
}

/*
 * Reading the summaries is most of a report's cost (jansson parses some 50 MB/s, and 10,000
 * summaries are some 100 MB), so the run directories are listed first and their summaries
 * read by a few threads, each into its own slot; the input gets them in the listed order.
 * Each thread only calls what keeps no shared state: opening, sb_json_load_file_at and
 * report_record (jansson is thread-safe for distinct values once its hash seed is set,
 * which report_input_new did).
 */
struct load_item {
	char *rel;               /* the run directory below the loader's base_fd, or absolute */
	char *path;              /* the run directory as reported */
	const struct slot *slot; /* the job's slot it is read for, or NULL */
	json_t *record;          /* out: the run's record */
	char *reason;            /* out: or why there is none */
};

struct loader {
	struct load_item *items;
	size_t n, cap;
	int base_fd; /* rel is below it (no symbolic link followed), or -1: rel is absolute */
	size_t next; /* the next item a thread takes (atomic) */
};

#define LOAD_THREADS_MAX 8

/* The members of a slot of a job's index that the report uses (parse_slot checks them). */
struct slot {
	const char *key, *task, *agent, *model, *state, *run_id, *dir, *status, *reason;
	json_int_t attempt;
};

static struct load_item *
loader_add(struct loader *l, char *rel, char *path, const struct slot *slot)
{
	struct load_item *it;

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->items = sb_xreallocarray(l->items, l->cap, sizeof(*l->items));
	}
	it = &l->items[l->n++];
	*it = (struct load_item){.rel = rel, .path = path, .slot = slot};
	return it;
}

static void
loader_release(struct loader *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->items[i].rel);
		free(l->items[i].path);
		free(l->items[i].reason);
		json_decref(l->items[i].record);
	}
	free(l->items);
	l->items = NULL;
	l->n = l->cap = 0;
}

/* Read one item's summary into its record, or say why it cannot be read. */
static void
load_one(const struct loader *l, struct load_item *it)
{
	_cleanup_error_ struct sb_error *err = NULL;
	_cleanup_close_ int fd = -1;
	json_t *s = NULL;

	fd = l->base_fd >= 0 ? sb_open_beneath(l->base_fd, it->rel, O_RDONLY | O_DIRECTORY, 0,
				   SB_OPEN_NO_SYMLINKS, &err)
			     : sb_open_dir(it->rel, &err);
	if (fd < 0 || sb_json_load_file_at(fd, "summary.json", SB_JSON_FILE_MAX, &s, &err) < 0) {
		it->reason = sb_xstrdup(sb_error_message(err));
		return;
	}
	if (!json_is_object(s)) {
		it->reason = sb_xstrdup("summary.json is not a JSON object");
	} else if (it->slot != NULL &&
		   !sb_streq(json_string_value(json_object_get(s, "run_id")), it->slot->run_id)) {
		it->reason = sb_xasprintf("summary.json is not of run '%s', which the job's index "
					  "names here",
		    it->slot->run_id);
	} else {
		it->record = report_record(s, it->path);
	}
	json_decref(s);
}

static void *
load_worker(void *arg)
{
	struct loader *l = arg;
	size_t i;

	while ((i = __atomic_fetch_add(&l->next, 1, __ATOMIC_RELAXED)) < l->n)
		load_one(l, &l->items[i]);
	return NULL;
}

/* Read every item, with up to LOAD_THREADS_MAX threads (one per CPU), the caller's too. */
static void
loader_run(struct loader *l)
{
	pthread_t threads[LOAD_THREADS_MAX - 1];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t want = cpus < 1 ? 1 : cpus > LOAD_THREADS_MAX ? LOAD_THREADS_MAX : (size_t)cpus;
	size_t started = 0;

	/* A thread is worth starting for some 64 summaries. */
	if (want > l->n / 64 + 1)
		want = l->n / 64 + 1;
	l->next = 0;
	while (started + 1 < want && pthread_create(&threads[started], NULL, load_worker, l) == 0)
		started++;
	(void)load_worker(l);
	for (size_t t = 0; t < started; t++)
		(void)pthread_join(threads[t], NULL);
}

/*
 * List one directory of a results walk; rel is its path below the root ("" for the root).
 * A directory that holds summary.json, build.log or archive/ is a run directory: it is
 * listed for reading and the walk never goes below it, because its archive/ is a copy of
 * what the agent left, where a planted summary.json must not count.
 */
static int
walk(int dfd, const char *root, const char *rel, unsigned depth, json_t *input, struct loader *l,
    struct sb_error **err)
{
	DIR *d;
	struct dirent *de;
	int rc = 0;

	if (run_dir_is(dfd)) {
		char *path = sb_xasprintf("%s/%s", root, rel);
		struct stat sst;
		bool has_summary = fstatat(dfd, "summary.json", &sst, AT_SYMLINK_NOFOLLOW) == 0;

		(void)close(dfd);
		if (l->n + json_array_size(json_object_get(input, "unreadable")) >=
		    REPORT_RUNS_MAX) {
			free(path);
			return sb_error_set(
			    err, EFBIG, "more than %d runs below '%s'", REPORT_RUNS_MAX, root);
		}
		/* The loader opens it again below the root, refusing any link on the way. */
		if (has_summary) {
			loader_add(l, sb_xstrdup(rel), path, NULL);
		} else {
			add_unreadable(input, path,
			    "no summary.json (the run is still going, or stopped before writing "
			    "it)");
			free(path);
		}
		return 0;
	}
	d = fdopendir(dfd);
	if (d == NULL) {
		_cleanup_free_ char *path = sb_xasprintf("%s/%s", root, rel);

		add_unreadable(input, path, strerror(errno));
		(void)close(dfd);
		return 0;
	}
	while (rc == 0 && (errno = 0, de = readdir(d)) != NULL) {
		_cleanup_free_ char *child = NULL, *path = NULL;
		struct stat st;
		int cfd;

		if (de->d_name[0] == '.' || strcmp(de->d_name, "latest") == 0)
			continue;
		/* A job's own files are read by report_read_job, not as loose runs. */
		if (depth == 0 && strcmp(de->d_name, "jobs") == 0)
			continue;
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode))
			continue;
		child =
		    depth == 0 ? sb_xstrdup(de->d_name) : sb_xasprintf("%s/%s", rel, de->d_name);
		path = sb_xasprintf("%s/%s", root, child);
		if (depth + 1 > REPORT_WALK_DEPTH_MAX) {
			add_unreadable(input, path, "deeper than a run directory can be");
			continue;
		}
		cfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0) {
			add_unreadable(input, path, strerror(errno));
			continue;
		}
		rc = walk(cfd, root, child, depth + 1, input, l, err);
	}
	closedir(d);
	return rc;
}

/* Read the loader's items into input: records, or unreadable with the reason. */
static void
loader_collect(struct loader *l, json_t *input)
{
	loader_run(l);
	for (size_t i = 0; i < l->n; i++) {
		struct load_item *it = &l->items[i];

		if (it->record == NULL && it->slot != NULL && it->slot->reason != NULL) {
			/* What the job itself saw (a run that could not start, or left no summary). */
			_cleanup_free_ char *why = sb_xasprintf("%s (the job's index: %s, %s)",
			    it->reason, it->slot->status ?: "no status", it->slot->reason);

			add_unreadable(input, it->path, why);
			continue;
		}
		if (it->record == NULL) {
			add_unreadable(input, it->path, it->reason);
			continue;
		}
		/* The attempt is the slot's: the index is the job's own record of it. */
		if (it->slot != NULL) {
			const char *cat =
			    json_string_value(json_object_get(it->record, "category"));

			json_object_set_new(it->record, "attempt", json_integer(it->slot->attempt));
			json_object_set_new(it->record, "slot", json_string(it->slot->key));
			if (it->slot->status != NULL && !sb_streq(it->slot->status, cat)) {
				_cleanup_free_ char *note = sb_xasprintf(
				    "slot '%s': the index says %s, the run's summary %s",
				    it->slot->key, it->slot->status, cat);

				json_array_append_new(
				    json_object_get(input, "notes"), sb_json_string_or_null(note));
			}
		}
		json_array_append_new(json_object_get(input, "records"), TAKE_PTR(it->record));
	}
}

int
report_scan_results(const char *dir, json_t *input, struct sb_error **err)
{
	struct loader l = {.base_fd = -1};
	int fd = sb_open_dir(dir, err), rc;

	if (fd < 0)
		return sb_error_prefix(err, "results directory '%s'", dir);
	l.base_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (l.base_fd < 0) {
		(void)close(fd);
		return sb_error_errno(err, errno, "results directory '%s'", dir);
	}
	/* A run directory itself: its own run. */
	if (run_dir_is(fd)) {
		(void)close(fd);
		(void)close(l.base_fd);
		l.base_fd = -1;
		loader_add(&l, sb_xstrdup(dir), sb_xstrdup(dir), NULL);
		loader_collect(&l, input);
		loader_release(&l);
		return 0;
	}
	rc = walk(fd, dir, "", 0, input, &l, err);
	if (rc == 0)
		loader_collect(&l, input);
	loader_release(&l);
	(void)close(l.base_fd);
	return rc;
}

/* --- a job ----------------------------------------------------------------------- */

/* The version member of job.json or index.json: an integer from 1 to what we read. */
static int
check_version(const json_t *j, const char *file, struct sb_error **err)
{
	const json_t *v = json_object_get(j, "version");

	if (!json_is_integer(v) || json_integer_value(v) < 1)
		return sb_error_set(
		    err, EINVAL, "%s: \"version\" must be a positive integer", file);
	if (json_integer_value(v) > REPORT_JOB_VERSION)
		return sb_error_set(err, EPROTONOSUPPORT,
		    "%s is version %lld, newer than this ssebench reads (%d): use a newer ssebench",
		    file, (long long)json_integer_value(v), REPORT_JOB_VERSION);
	return 0;
}

static const char *const slot_states[] = {"pending", "running", "done", "skipped"};
static const char *const slot_statuses[] = {"passed", "failed", "forfeit", "error"};

static bool
one_of(const char *s, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (sb_streq(s, names[i]))
			return true;
	return false;
}

/* Slot i's member name: a string (or null, when nullable). */
static int
slot_string(const json_t *slot, size_t i, const char *name, bool nullable, const char **ret,
    struct sb_error **err)
{
	const json_t *v = json_object_get(slot, name);

	if (json_is_string(v)) {
		*ret = json_string_value(v);
		return 0;
	}
	if (nullable && json_is_null(v)) {
		*ret = NULL;
		return 0;
	}
	return sb_error_set(err, EINVAL, "index.json: slot %zu: \"%s\" must be a string%s", i, name,
	    nullable ? " or null" : "");
}

static int
parse_slot(const json_t *s, size_t i, struct slot *ret, struct sb_error **err)
{
	struct slot sl = {0};
	const json_t *attempt = json_object_get(s, "attempt");

	if (!json_is_object(s))
		return sb_error_set(err, EINVAL, "index.json: slot %zu is not an object", i);
	if (slot_string(s, i, "key", false, &sl.key, err) < 0 ||
	    slot_string(s, i, "task", false, &sl.task, err) < 0 ||
	    slot_string(s, i, "agent", false, &sl.agent, err) < 0 ||
	    slot_string(s, i, "model", false, &sl.model, err) < 0 ||
	    slot_string(s, i, "state", false, &sl.state, err) < 0 ||
	    slot_string(s, i, "run_id", true, &sl.run_id, err) < 0 ||
	    slot_string(s, i, "dir", true, &sl.dir, err) < 0 ||
	    slot_string(s, i, "status", true, &sl.status, err) < 0 ||
	    slot_string(s, i, "reason", true, &sl.reason, err) < 0)
		return -1;
	if (!json_is_integer(attempt) || json_integer_value(attempt) < 1)
		return sb_error_set(
		    err, EINVAL, "index.json: slot %zu: \"attempt\" must be a positive integer", i);
	sl.attempt = json_integer_value(attempt);
	if (!json_is_array(json_object_get(s, "tries")))
		return sb_error_set(
		    err, EINVAL, "index.json: slot %zu: \"tries\" must be an array", i);
	if (!one_of(sl.state, slot_states, SB_ARRAY_SIZE(slot_states))) {
		_cleanup_free_ char *e = sb_escape(sl.state);

		return sb_error_set(err, EINVAL,
		    "index.json: slot %zu: state '%s' is not pending, running, done or skipped", i,
		    e);
	}
	if (sl.status != NULL && !one_of(sl.status, slot_statuses, SB_ARRAY_SIZE(slot_statuses))) {
		_cleanup_free_ char *e = sb_escape(sl.status);

		return sb_error_set(err, EINVAL,
		    "index.json: slot %zu: status '%s' is not passed, failed, forfeit or error", i,
		    e);
	}
	if (strcmp(sl.state, "done") == 0 && (sl.dir == NULL || sl.run_id == NULL))
		return sb_error_set(err, EINVAL,
		    "index.json: slot %zu is done but has no \"run_id\" or \"dir\"", i);
	if (strcmp(sl.state, "done") == 0 && sl.dir[0] != '/') {
		_cleanup_free_ char *e = sb_escape(sl.dir);

		return sb_error_set(err, EINVAL,
		    "index.json: slot %zu: \"dir\" '%s' is not an absolute path", i, e);
	}
	*ret = sl;
	return 0;
}

static json_t *
slot_entry(const struct slot *sl, const char *egress)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:I, s:s, s:s, s:o}", "key", sl->key, "task",
	    sl->task, "agent", sl->agent, "model", sl->model, "attempt", (json_int_t)sl->attempt,
	    "egress", egress, "state", sl->state, "reason", sb_json_string_or_null(sl->reason));
}

int
report_read_job(const char *dir, json_t *input, struct sb_error **err)
{
	_cleanup_close_ int fd = -1;
	json_auto_t *job = NULL, *index = NULL, *keys = json_object(), *runs = json_object();
	const json_t *matrix, *slots, *s;
	const char *job_id, *egress;
	struct loader l = {.base_fd = -1};
	struct slot *sls;
	size_t i;

	fd = sb_open_dir(dir, err);
	if (fd < 0)
		return sb_error_prefix(err, "job directory '%s'", dir);
	if (sb_json_load_file_at(fd, "job.json", SB_JSON_FILE_MAX, &job, err) < 0)
		return sb_error_prefix(err, "job directory '%s'", dir);
	if (!json_is_object(job))
		return sb_error_set(err, EINVAL, "%s/job.json is not a JSON object", dir);
	if (check_version(job, "job.json", err) < 0)
		return sb_error_prefix(err, "%s", dir);
	job_id = json_string_value(json_object_get(job, "job_id"));
	matrix = json_object_get(job, "matrix");
	if (!sb_job_id_valid(job_id) || !json_is_object(matrix) ||
	    !json_is_integer(json_object_get(matrix, "attempts")) ||
	    json_integer_value(json_object_get(matrix, "attempts")) < 1)
		return sb_error_set(err, EINVAL,
		    "%s/job.json: needs \"job_id\" (a job id) and \"matrix\" with \"attempts\" (a "
		    "positive integer)",
		    dir);
	if (sb_json_load_file_at(fd, "index.json", SB_JSON_FILE_MAX, &index, err) < 0)
		return sb_error_prefix(err, "job directory '%s'", dir);
	if (!json_is_object(index))
		return sb_error_set(err, EINVAL, "%s/index.json is not a JSON object", dir);
	if (check_version(index, "index.json", err) < 0)
		return sb_error_prefix(err, "%s", dir);
	if (!sb_streq(json_string_value(json_object_get(index, "job_id")), job_id))
		return sb_error_set(err, EINVAL,
		    "%s/index.json: \"job_id\" is not the job's (job.json says '%s')", dir, job_id);
	slots = json_object_get(index, "slots");
	if (!json_is_array(slots))
		return sb_error_set(err, EINVAL, "%s/index.json: \"slots\" must be an array", dir);
	if (json_array_size(slots) > REPORT_RUNS_MAX)
		return sb_error_set(
		    err, EFBIG, "%s/index.json: more than %d slots", dir, REPORT_RUNS_MAX);
	/* Check every slot before reading any run: a corrupt index is refused whole. */
	json_array_foreach(slots, i, s) {
		struct slot sl;

		if (parse_slot(s, i, &sl, err) < 0)
			return sb_error_prefix(err, "%s", dir);
		if (json_object_get(keys, sl.key) != NULL) {
			_cleanup_free_ char *e = sb_escape(sl.key);

			return sb_error_set(err, EINVAL,
			    "%s/index.json: slot %zu: key '%s' is also slot %lld's", dir, i, e,
			    (long long)json_integer_value(json_object_get(keys, sl.key)));
		}
		json_object_set_new(keys, sl.key, json_integer((json_int_t)i));
		if (sl.run_id != NULL && strcmp(sl.state, "done") == 0) {
			if (json_object_get(runs, sl.run_id) != NULL) {
				_cleanup_free_ char *e = sb_escape(sl.run_id);

				return sb_error_set(err, EINVAL,
				    "%s/index.json: slot %zu: run '%s' is also slot %lld's", dir, i,
				    e,
				    (long long)json_integer_value(
					json_object_get(runs, sl.run_id)));
			}
			json_object_set_new(runs, sl.run_id, json_integer((json_int_t)i));
		}
	}
	egress =
	    sb_streq(json_string_value(json_object_get(json_object_get(job, "options"), "egress")),
		"open")
		? "open"
		: "restricted";
	/* Then the runs of the done slots, read in parallel; the others as they are. */
	sls = sb_xcalloc(json_array_size(slots) + 1, sizeof(*sls));
	json_array_foreach(slots, i, s) {
		(void)parse_slot(s, i, &sls[i], NULL);
		if (strcmp(sls[i].state, "skipped") == 0)
			json_array_append_new(
			    json_object_get(input, "skipped"), slot_entry(&sls[i], egress));
		else if (strcmp(sls[i].state, "done") != 0)
			json_array_append_new(
			    json_object_get(input, "not_run"), slot_entry(&sls[i], egress));
		else
			loader_add(&l, sb_xstrdup(sls[i].dir), sb_xstrdup(sls[i].dir), &sls[i]);
	}
	loader_collect(&l, input);
	loader_release(&l);
	free(sls);
	json_object_set_new(json_object_get(input, "source"), "job",
	    json_pack("{s:s, s:O, s:O, s:O, s:O, s:O}", "job_id", job_id, "created_at",
		json_object_get(job, "created_at") ?: json_null(), "ssebench_version",
		json_object_get(job, "ssebench_version") ?: json_null(), "dataset",
		json_object_get(job, "dataset") ?: json_null(), "matrix", matrix, "options",
		json_object_get(job, "options") ?: json_null()));
	return 0;
}

/* --- the model ------------------------------------------------------------------- */

/* What one (agent, model, egress) group adds up. */
struct group {
	const char *agent, *model, *egress; /* borrowed from the input */
	uint64_t runs, scored, unscored, forfeit, passed, failed, skipped, not_run;
	uint64_t built, pov_stopped, functional, hidden;
	/* runs with a flag of the answer-seeking scan, whatever their grade */
	uint64_t flagged;
	double *dur; /* duration_s of each run that has one */
	size_t ndur, capdur;
	double spend;
	uint64_t nspend, tokens_in, tokens_out, ntokens;
};

/* One cell of the task x group matrix. */
struct cell {
	uint64_t runs, scored, passed, forfeit, unscored, skipped, not_run;
};

/* A value rounded to 1/scale, or null for NAN (no value). */
static json_t *
rounded(double x, double scale)
{
	if (isnan(x))
		return json_null();
	return json_real(round(x * scale) / scale);
}

static json_t *
share(uint64_t x, uint64_t n)
{
	return n == 0 ? json_null() : rounded((double)x / (double)n, 1e4);
}

/* The key of a group in a JSON object: its three names as a JSON array (unambiguous). */
static char *
group_key(const char *agent, const char *model, const char *egress)
{
	json_auto_t *a = json_pack("[s, s, s]", agent, model, egress);

	return sb_json_dumps(a, JSON_COMPACT);
}

static int
cmp_group(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	int c = strcmp(x->agent, y->agent);

	if (c == 0)
		c = strcmp(x->model, y->model);
	/* restricted before open, as `runs results` lists them */
	if (c == 0)
		c = -strcmp(x->egress, y->egress);
	return c;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct run_ref {
	const json_t *rec;
	size_t g, t;
};

static int
cmp_run(const void *a, const void *b)
{
	const struct run_ref *x = a, *y = b;
	const json_t *ax = json_object_get(x->rec, "attempt"),
		     *ay = json_object_get(y->rec, "attempt");
	int c;

	if (x->g != y->g)
		return x->g < y->g ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	/* attempts in order, runs without one after */
	if (json_is_integer(ax) != json_is_integer(ay))
		return json_is_integer(ax) ? -1 : 1;
	if (json_is_integer(ax) && json_integer_value(ax) != json_integer_value(ay))
		return json_integer_value(ax) < json_integer_value(ay) ? -1 : 1;
	c = strcmp(str_or(json_object_get(x->rec, "started_at"), ""),
	    str_or(json_object_get(y->rec, "started_at"), ""));
	if (c == 0)
		c = strcmp(str_or(json_object_get(x->rec, "run_id"), ""),
		    str_or(json_object_get(y->rec, "run_id"), ""));
	if (c == 0)
		c = strcmp(str_or(json_object_get(x->rec, "dir"), ""),
		    str_or(json_object_get(y->rec, "dir"), ""));
	return c;
}

/* The object of group g's figures. */
static json_t *
group_json(struct group *g, size_t idx, const struct cell *cells, size_t ntasks, size_t ngroups)
{
	double lo, hi;
	uint64_t kmax = 0;
	json_t *o, *pak = json_array(), *dur;
	_cleanup_free_ char *label = sb_xasprintf("%s / %s%s", g->agent, g->model,
	    strcmp(g->egress, "open") == 0 ? " (open egress)" : "");

	/* pass@k: K is the most scored attempts any task has; a task with fewer than k
	 * scored attempts is left out of pass@k (and "tasks" says how many were in). */
	for (size_t t = 0; t < ntasks; t++)
		if (cells[t * ngroups + idx].scored > kmax)
			kmax = cells[t * ngroups + idx].scored;
	if (kmax > 1)
		for (uint64_t k = 1; k <= kmax && k <= REPORT_PASS_AT_K_MAX; k++) {
			double sum = 0;
			uint64_t used = 0;

			for (size_t t = 0; t < ntasks; t++) {
				const struct cell *c = &cells[t * ngroups + idx];

				if (c->scored < k)
					continue;
				sum += report_pass_at_k(c->scored, c->passed, k);
				used++;
			}
			json_array_append_new(
			    pak, json_pack("{s:I, s:o, s:I}", "k", (json_int_t)k, "value",
				     rounded(sum / (double)used, 1e4), "tasks", (json_int_t)used));
		}
	if (g->ndur > 0) /* no array at all for a group without durations */
		qsort(g->dur, g->ndur, sizeof(*g->dur), cmp_double);
	dur = json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o}", "runs", (json_int_t)g->ndur, "min",
	    rounded(report_quantile(g->dur, g->ndur, 0), 1e3), "q1",
	    rounded(report_quantile(g->dur, g->ndur, 0.25), 1e3), "median",
	    rounded(report_quantile(g->dur, g->ndur, 0.5), 1e3), "q3",
	    rounded(report_quantile(g->dur, g->ndur, 0.75), 1e3), "p90",
	    rounded(report_quantile(g->dur, g->ndur, 0.9), 1e3), "max",
	    rounded(report_quantile(g->dur, g->ndur, 1), 1e3));
	o = json_pack("{s:o, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o,"
		      " s:o, s:I, s:o}",
	    "id", json_sprintf("G%zu", idx + 1), "label", label, "agent", g->agent, "model",
	    g->model, "egress", g->egress, "runs", (json_int_t)g->runs, "scored",
	    (json_int_t)g->scored, "passed", (json_int_t)g->passed, "failed", (json_int_t)g->failed,
	    "forfeit", (json_int_t)g->forfeit, "unscored", (json_int_t)g->unscored, "skipped",
	    (json_int_t)g->skipped, "not_run", (json_int_t)g->not_run, "flagged",
	    (json_int_t)g->flagged, "pass_rate", share(g->passed, g->scored), "pass_rate_ci",
	    json_null(), "attempts_per_task", (json_int_t)kmax, "pass_at_k", pak);
	if (report_wilson(g->passed, g->scored, REPORT_Z95, &lo, &hi))
		json_object_set_new(
		    o, "pass_rate_ci", json_pack("[o, o]", rounded(lo, 1e4), rounded(hi, 1e4)));
	json_object_set_new(o, "checks",
	    json_pack("{s:{s:I, s:o}, s:{s:I, s:o}, s:{s:I, s:o}, s:{s:I, s:o}}", "built", "runs",
		(json_int_t)g->built, "share", share(g->built, g->scored), "pov_stopped", "runs",
		(json_int_t)g->pov_stopped, "share", share(g->pov_stopped, g->scored), "functional",
		"runs", (json_int_t)g->functional, "share", share(g->functional, g->scored),
		"hidden", "runs", (json_int_t)g->hidden, "share", share(g->hidden, g->scored)));
	json_object_set_new(o, "duration_s", dur);
	json_object_set_new(o, "spend_usd",
	    json_pack("{s:I, s:o, s:o}", "runs", (json_int_t)g->nspend, "total",
		g->nspend ? rounded(g->spend, 1e6) : json_null(), "per_run",
		g->nspend ? rounded(g->spend / (double)g->nspend, 1e6) : json_null()));
	json_object_set_new(o, "tokens",
	    json_pack("{s:I, s:o, s:o}", "runs", (json_int_t)g->ntokens, "in",
		g->ntokens ? json_integer((json_int_t)g->tokens_in) : json_null(), "out",
		g->ntokens ? json_integer((json_int_t)g->tokens_out) : json_null()));
	return o;
}

json_t *
report_model(const json_t *input)
{
	const json_t *records = json_object_get(input, "records");
	const json_t *slot_lists[2] = {
	    json_object_get(input, "skipped"), json_object_get(input, "not_run")};
	json_auto_t *gnames = json_object(), *gpos = json_object(), *tpos = json_object();
	struct group *groups = NULL;
	struct cell *cells = NULL;
	struct run_ref *refs = NULL;
	char **tasks = NULL;
	size_t ngroups = 0, ntasks = 0, nrefs = 0, i, l;
	uint64_t found = 0, reference = 0;
	json_t *model, *e, *arr;
	const char *key;

	/* Pass 1: the groups and the tasks (reference runs are in neither). */
	json_array_foreach(records, i, e) {
		_cleanup_free_ char *k = NULL;

		found++;
		if (json_is_true(json_object_get(e, "reference"))) {
			reference++;
			continue;
		}
		k = group_key(str_or(json_object_get(e, "agent"), "?"),
		    str_or(json_object_get(e, "model"), "?"),
		    str_or(json_object_get(e, "egress"), "?"));
		json_object_set_new(gnames, k,
		    json_pack("[O, O, O]", json_object_get(e, "agent"), json_object_get(e, "model"),
			json_object_get(e, "egress")));
		json_object_set_new(tpos, str_or(json_object_get(e, "task"), "?"), json_null());
	}
	for (l = 0; l < 2; l++)
		json_array_foreach(slot_lists[l], i, e) {
			_cleanup_free_ char *k = group_key(str_or(json_object_get(e, "agent"), "?"),
			    str_or(json_object_get(e, "model"), "?"),
			    str_or(json_object_get(e, "egress"), "?"));

			json_object_set_new(gnames, k,
			    json_pack("[O, O, O]", json_object_get(e, "agent"),
				json_object_get(e, "model"), json_object_get(e, "egress")));
			json_object_set_new(
			    tpos, str_or(json_object_get(e, "task"), "?"), json_null());
		}
	groups = sb_xcalloc(json_object_size(gnames) + 1, sizeof(*groups));
	json_object_foreach(gnames, key, e) {
		groups[ngroups].agent = json_string_value(json_array_get(e, 0));
		groups[ngroups].model = json_string_value(json_array_get(e, 1));
		groups[ngroups].egress = json_string_value(json_array_get(e, 2));
		ngroups++;
	}
	qsort(groups, ngroups, sizeof(*groups), cmp_group);
	for (size_t g = 0; g < ngroups; g++) {
		_cleanup_free_ char *k =
		    group_key(groups[g].agent, groups[g].model, groups[g].egress);

		json_object_set_new(gpos, k, json_integer((json_int_t)g));
	}
	tasks = sb_xcalloc(json_object_size(tpos) + 1, sizeof(*tasks));
	json_object_foreach(tpos, key, e)
		tasks[ntasks++] = sb_xstrdup(key);
	qsort(tasks, ntasks, sizeof(*tasks), cmp_str);
	for (size_t t = 0; t < ntasks; t++)
		json_object_set_new(tpos, tasks[t], json_integer((json_int_t)t));
	cells = sb_xcalloc(ntasks * ngroups + 1, sizeof(*cells));
	refs = sb_xcalloc(json_array_size(records) + 1, sizeof(*refs));

	/* Pass 2: add up. */
	json_array_foreach(records, i, e) {
		_cleanup_free_ char *k = NULL;
		const char *cat = str_or(json_object_get(e, "category"), "error");
		const json_t *d = json_object_get(e, "duration_s"),
			     *sp = json_object_get(e, "spend_usd");
		struct group *g;
		struct cell *c;
		size_t gi, ti;

		if (json_is_true(json_object_get(e, "reference")))
			continue;
		k = group_key(str_or(json_object_get(e, "agent"), "?"),
		    str_or(json_object_get(e, "model"), "?"),
		    str_or(json_object_get(e, "egress"), "?"));
		gi = (size_t)json_integer_value(json_object_get(gpos, k));
		ti = (size_t)json_integer_value(
		    json_object_get(tpos, str_or(json_object_get(e, "task"), "?")));
		g = &groups[gi];
		c = &cells[ti * ngroups + gi];
		refs[nrefs++] = (struct run_ref){e, gi, ti};
		g->runs++;
		c->runs++;
		/* Counted apart from the grade, which flags never change. */
		if (json_integer_value(json_object_get(e, "flags")) > 0)
			g->flagged++;
		if (strcmp(cat, "error") == 0) {
			g->unscored++;
			c->unscored++;
		} else {
			g->scored++;
			c->scored++;
			if (strcmp(cat, "passed") == 0) {
				g->passed++;
				c->passed++;
			} else if (strcmp(cat, "forfeit") == 0) {
				g->forfeit++;
				c->forfeit++;
			} else {
				g->failed++;
			}
			g->built += json_is_true(json_object_get(e, "built"));
			g->pov_stopped += json_is_true(json_object_get(e, "pov_stopped"));
			g->functional += json_is_true(json_object_get(e, "functional"));
			g->hidden += json_is_true(json_object_get(e, "hidden"));
		}
		if (json_is_number(d)) {
			if (g->ndur == g->capdur) {
				g->capdur = g->capdur ? 2 * g->capdur : 16;
				g->dur = sb_xreallocarray(g->dur, g->capdur, sizeof(*g->dur));
			}
			g->dur[g->ndur++] = json_number_value(d);
		}
		if (json_is_number(sp)) {
			g->spend += json_number_value(sp);
			g->nspend++;
		}
		if (json_is_integer(json_object_get(e, "tokens_in"))) {
			g->tokens_in +=
			    (uint64_t)json_integer_value(json_object_get(e, "tokens_in"));
			g->tokens_out +=
			    (uint64_t)json_integer_value(json_object_get(e, "tokens_out"));
			g->ntokens++;
		}
	}
	for (l = 0; l < 2; l++)
		json_array_foreach(slot_lists[l], i, e) {
			_cleanup_free_ char *k = group_key(str_or(json_object_get(e, "agent"), "?"),
			    str_or(json_object_get(e, "model"), "?"),
			    str_or(json_object_get(e, "egress"), "?"));
			size_t gi = (size_t)json_integer_value(json_object_get(gpos, k));
			size_t ti = (size_t)json_integer_value(
			    json_object_get(tpos, str_or(json_object_get(e, "task"), "?")));

			if (l == 0) {
				groups[gi].skipped++;
				cells[ti * ngroups + gi].skipped++;
			} else {
				groups[gi].not_run++;
				cells[ti * ngroups + gi].not_run++;
			}
		}

	/* The model. */
	model = json_pack("{s:i, s:O, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I,"
			  " s:I}, s:O, s:O, s:O, s:O}",
	    "version", 1, "source", json_object_get(input, "source"), "totals", "runs_found",
	    (json_int_t)found, "reference_runs", (json_int_t)reference, "runs",
	    (json_int_t)(found - reference), "scored", (json_int_t)0, "passed", (json_int_t)0,
	    "failed", (json_int_t)0, "forfeit", (json_int_t)0, "unscored", (json_int_t)0,
	    "unreadable", (json_int_t)json_array_size(json_object_get(input, "unreadable")),
	    "skipped", (json_int_t)json_array_size(slot_lists[0]), "not_run",
	    (json_int_t)json_array_size(slot_lists[1]), "flagged", (json_int_t)0, "unreadable",
	    json_object_get(input, "unreadable"), "skipped", slot_lists[0], "not_run",
	    slot_lists[1], "notes", json_object_get(input, "notes"));
	if (model == NULL)
		sb_oom(0);
	{
		uint64_t sc = 0, pa = 0, fa = 0, fo = 0, un = 0, fl = 0;
		json_t *tot = json_object_get(model, "totals");

		arr = json_array();
		for (size_t g = 0; g < ngroups; g++) {
			sc += groups[g].scored;
			pa += groups[g].passed;
			fa += groups[g].failed;
			fo += groups[g].forfeit;
			un += groups[g].unscored;
			fl += groups[g].flagged;
			json_array_append_new(
			    arr, group_json(&groups[g], g, cells, ntasks, ngroups));
		}
		json_object_set_new(model, "groups", arr);
		json_object_set_new(tot, "scored", json_integer((json_int_t)sc));
		json_object_set_new(tot, "passed", json_integer((json_int_t)pa));
		json_object_set_new(tot, "failed", json_integer((json_int_t)fa));
		json_object_set_new(tot, "forfeit", json_integer((json_int_t)fo));
		json_object_set_new(tot, "unscored", json_integer((json_int_t)un));
		json_object_set_new(tot, "flagged", json_integer((json_int_t)fl));
	}
	arr = json_array();
	for (size_t t = 0; t < ntasks; t++)
		json_array_append_new(arr, json_string(tasks[t]));
	json_object_set_new(model, "tasks", arr);
	arr = json_array();
	for (size_t t = 0; t < ntasks; t++) {
		json_t *row = json_array();

		for (size_t g = 0; g < ngroups; g++) {
			const struct cell *c = &cells[t * ngroups + g];

			json_array_append_new(
			    row, json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "runs",
				     (json_int_t)c->runs, "scored", (json_int_t)c->scored, "passed",
				     (json_int_t)c->passed, "forfeit", (json_int_t)c->forfeit,
				     "unscored", (json_int_t)c->unscored, "skipped",
				     (json_int_t)c->skipped, "not_run", (json_int_t)c->not_run));
		}
		json_array_append_new(arr, json_pack("{s:s, s:o}", "task", tasks[t], "cells", row));
	}
	json_object_set_new(model, "matrix", arr);
	qsort(refs, nrefs, sizeof(*refs), cmp_run);
	arr = json_array();
	for (size_t r = 0; r < nrefs; r++) {
		json_t *run = json_copy((json_t *)refs[r].rec);

		json_object_del(run, "reference");
		json_object_set_new(run, "group", json_sprintf("G%zu", refs[r].g + 1));
		json_array_append_new(arr, run);
	}
	json_object_set_new(model, "runs", arr);

	for (size_t g = 0; g < ngroups; g++)
		free(groups[g].dur);
	free(groups);
	for (size_t t = 0; t < ntasks; t++)
		free(tasks[t]);
	free(tasks);
	free(cells);
	free(refs);
	return model;
}

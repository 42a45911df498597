/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd-space.c: disk and cleanup (docs/cleanup.md): `ssebench images list|prune`, `ssebench
 * runs prune` and `ssebench dataset du`.
 *
 * Everything the engine says is read as untrusted JSON: listings through --format
 * '{{json ...}}' (one JSON value a line, which JSON's own escaping keeps on one line), the
 * rest through `inspect`. Every string from it is escaped before it reaches the terminal: a
 * label can hold any byte. Only names under $SSEBENCH_REGISTRY are ever removed, always by
 * name and without --force, so the engine itself refuses an image a container still uses and
 * a container that runs; `docker image prune` and `docker system prune` are never called.
 */
#include "config.h"

#include <getopt.h>
#include <string.h>
#include <time.h>

#include "sb/argv.h"
#include "sb/buf.h"
#include "sb/diag.h"
#include "sb/exit.h"
#include "sb/json.h"
#include "sb/limits.h"
#include "sb/log.h"
#include "sb/mem.h"
#include "sb/parse.h"
#include "sb/taskdir.h"

#include "cgroup.h"
#include "cli.h"
#include "containers.h"
#include "disk.h"
#include "docker.h"
#include "network.h"
#include "run.h"
#include "space.h"

#define INSPECT_CHUNK  64        /* ids per `docker inspect` */
#define ENGINE_TIMEOUT 300000    /* ms for one client call */
#define CREATED_GRACE  (10 * 60) /* s: a container never started is a run starting */

/* ---- the engine ------------------------------------------------------------------------ */

/*
 * `docker ARGS...`, its stdout in *ret_out. A client that fails is an error quoting the end
 * of its stderr, escaped; so is an output past the capture cap (it would be cut short).
 */
static int
engine_capture(const struct sb_argv *args, char **ret_out, struct sb_error **err)
{
	struct sb_cmd_result r;
	int code;

	if (docker_run(args, DOCKER_CAPTURE, -1, NULL, 0, ENGINE_TIMEOUT, &r, err) < 0)
		return -1;
	code = r.exit_code;
	if (code != 0 || r.out_dropped > 0) {
		_cleanup_free_ char *e = NULL;

		sb_buf_rtrim(&r.err);
		e = sb_escape(r.err.len > 400 ? r.err.s + r.err.len - 400 : r.err.s);
		sb_error_set(err, EIO, "docker %s %s%s (exit %d)%s%s", args->v[0],
		    args->n > 1 ? args->v[1] : "",
		    r.out_dropped > 0 ? ": too much output" : " failed", code,
		    *e != '\0' ? ": " : "", e);
		sb_cmd_result_release(&r);
		return -1;
	}
	*ret_out = sb_buf_detach(&r.out, NULL);
	sb_cmd_result_release(&r);
	return 0;
}

/* Each line of a `--format '{{json ...}}'` listing as a JSON value, into a new array. */
static json_t *
engine_json_lines(const struct sb_argv *args, struct sb_error **err)
{
	_cleanup_free_ char *out = NULL;
	char *save = NULL;
	json_t *arr;

	if (engine_capture(args, &out, err) < 0)
		return NULL;
	arr = json_array();
	for (char *l = strtok_r(out, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
		json_t *v = NULL;

		if (sb_json_load(l, strlen(l), SB_JSON_FILE_MAX, &v, NULL) < 0) {
			json_decref(arr);
			return sb_error_set(err, EIO, "docker %s: a line of its output is no JSON",
				   args->v[0]),
			       NULL;
		}
		json_array_append_new(arr, v);
	}
	return arr;
}

/* A full id as the engine prints it: 64 hex digits, with "sha256:" for an image. */
static bool
valid_id(const char *s, bool image)
{
	if (s == NULL || (image && strncmp(s, "sha256:", 7) != 0))
		return false;
	if (image)
		s += 7;
	if (strlen(s) != 64)
		return false;
	for (; *s != '\0'; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

/* The ids a listing printed, checked and without repeats (an image is listed per tag). */
static int
engine_ids(const struct sb_argv *args, bool image, struct sb_argv *ret, struct sb_error **err)
{
	json_t *arr = engine_json_lines(args, err), *v, *seen;
	size_t i;

	if (arr == NULL)
		return -1;
	seen = json_object();
	json_array_foreach(arr, i, v) {
		const char *id = json_string_value(v);

		if (!valid_id(id, image)) {
			json_decref(arr);
			json_decref(seen);
			return sb_error_set(
			    err, EIO, "docker %s: an id that is not one", args->v[0]);
		}
		if (json_object_get(seen, id) != NULL)
			continue;
		json_object_set_new(seen, id, json_true());
		sb_argv_push(ret, id);
	}
	json_decref(arr);
	json_decref(seen);
	return 0;
}

/*
 * `docker <kind> inspect` of ids, appended to out, INSPECT_CHUNK at a time. One that went
 * away since it was listed is left out: a chunk that fails is asked for one id at a time.
 */
static int
engine_inspect(const char *kind, const struct sb_argv *ids, json_t *out, struct sb_error **err)
{
	for (size_t at = 0; at < ids->n; at += INSPECT_CHUNK) {
		size_t end = at + INSPECT_CHUNK < ids->n ? at + INSPECT_CHUNK : ids->n;
		_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
		_cleanup_free_ char *text = NULL;
		json_t *arr = NULL;

		sb_argv_pushl(&a, kind, "inspect", NULL);
		for (size_t i = at; i < end; i++)
			sb_argv_push(&a, ids->v[i]);
		if (engine_capture(&a, &text, NULL) < 0) {
			for (size_t i = at; i < end && end - at > 1; i++) {
				_cleanup_argv_ struct sb_argv one = SB_ARGV_INIT;
				_cleanup_free_ char *t = NULL;
				json_t *o = NULL;

				sb_argv_pushl(&one, kind, "inspect", ids->v[i], NULL);
				if (engine_capture(&one, &t, NULL) < 0)
					continue;
				if (sb_json_load(t, strlen(t), SB_JSON_FILE_MAX, &o, err) < 0 ||
				    !json_is_array(o)) {
					json_decref(o);
					return sb_error_set(
					    err, EIO, "docker %s inspect: no JSON array", kind);
				}
				json_array_extend(out, o);
				json_decref(o);
			}
			continue;
		}
		if (sb_json_load(text, strlen(text), SB_JSON_FILE_MAX, &arr, err) < 0 ||
		    !json_is_array(arr)) {
			json_decref(arr);
			return sb_error_set(err, EIO, "docker %s inspect: no JSON array", kind);
		}
		json_array_extend(out, arr);
		json_decref(arr);
	}
	return 0;
}

/* What the engine holds: every image (ours: a name under the prefix) and container. */
struct engine {
	struct space_image *img;
	size_t n;
	bool *ours;
	json_t *containers; /* `docker container inspect` of every container */
};

static void
engine_release(struct engine *e)
{
	for (size_t i = 0; i < e->n; i++)
		space_image_release(&e->img[i]);
	free(e->img);
	free(e->ours);
	json_decref(e->containers);
	memset(e, 0, sizeof(*e));
}

/* Does the image have a name under the registry prefix? */
static bool
image_is_ours(const struct space_image *img)
{
	for (size_t t = 0; t < img->n_tags; t++) {
		struct space_name nm;

		if (space_name_parse(cli_registry(), img->tags[t], &nm)) {
			space_name_release(&nm);
			return true;
		}
	}
	return false;
}

/* The per-layer sizes of one image from `docker history` (space_image_set_history). */
static void
image_history(struct space_image *img)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ struct space_hist *h = NULL;
	json_t *arr, *v;
	size_t i;

	sb_argv_pushl(
	    &a, "history", "--no-trunc", "--human=false", "--format", "{{json .}}", img->id, NULL);
	arr = engine_json_lines(&a, NULL);
	if (arr == NULL)
		return; /* the sizes stay on the top layer; exact stays false */
	h = sb_xcalloc(json_array_size(arr) + 1, sizeof(*h));
	json_array_foreach(arr, i, v) {
		const json_t *size = json_object_get(v, "Size");

		/* A string of digits with --human=false; a number would do as well. */
		if (json_is_integer(size) && json_integer_value(size) >= 0)
			h[i].size = (uint64_t)json_integer_value(size);
		else if (!json_is_string(size) || sb_parse_u64(json_string_value(size), 0,
						      UINT64_MAX, &h[i].size, NULL) < 0) {
			json_decref(arr);
			return;
		}
		h[i].created_by = json_string_value(json_object_get(v, "CreatedBy"));
	}
	space_image_set_history(img, h, json_array_size(arr));
	json_decref(arr);
}

/*
 * Read the engine: every image (with its layers' sizes for ours) and, with containers, every
 * container. An image the engine describes in a shape we do not know is an error: guessing
 * could count its layers as free.
 */
static int
engine_load(struct engine *e, bool containers, struct sb_error **err)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT, ids = SB_ARGV_INIT;
	json_t *arr = json_array(), *v;
	size_t i;

	memset(e, 0, sizeof(*e));
	sb_argv_pushl(&a, "image", "ls", "-a", "--no-trunc", "--format", "{{json .ID}}", NULL);
	if (engine_ids(&a, true, &ids, err) < 0 || engine_inspect("image", &ids, arr, err) < 0) {
		json_decref(arr);
		return -1;
	}
	e->img = sb_xcalloc(json_array_size(arr) + 1, sizeof(*e->img));
	e->ours = sb_xcalloc(json_array_size(arr) + 1, sizeof(bool));
	json_array_foreach(arr, i, v) {
		if (space_image_from_inspect(v, &e->img[e->n], err) < 0) {
			json_decref(arr);
			engine_release(e);
			return sb_error_prefix(err, "docker image inspect");
		}
		e->ours[e->n] = image_is_ours(&e->img[e->n]);
		if (e->ours[e->n])
			image_history(&e->img[e->n]);
		e->n++;
	}
	json_decref(arr);
	if (!containers)
		return 0;
	sb_argv_release(&a);
	sb_argv_release(&ids);
	e->containers = json_array();
	sb_argv_pushl(&a, "ps", "-a", "--no-trunc", "--format", "{{json .ID}}", NULL);
	if (engine_ids(&a, false, &ids, err) < 0 ||
	    engine_inspect("container", &ids, e->containers, err) < 0) {
		engine_release(e);
		return -1;
	}
	return 0;
}

/* Fail with exit 1 unless the engine answers. */
static int
engine_check(void)
{
	_cleanup_free_ char *why = NULL;

	if (docker_engine_ok(&why))
		return 0;
	return cli_fail("Docker does not answer (%s); run scripts/docker-up (as root)", why);
}

/* engine_check, then engine_load into e; an exit status on failure, said. */
static int
engine_open(struct engine *e, bool containers)
{
	struct sb_error *err = NULL;
	int rc = engine_check();

	if (rc == 0 && engine_load(e, containers, &err) < 0)
		rc = cli_fail_err(&err);
	return rc;
}

/* ---- the dataset ----------------------------------------------------------------------- */

struct dsinfo {
	struct sb_dataset *ds;
	char *name;           /* its directory's name, lower case (as image names have it) */
	struct sb_argv tasks; /* its task ids, lower case */
};

static void
dsinfo_release(struct dsinfo *d)
{
	sb_dataset_free(d->ds);
	free(d->name);
	sb_argv_release(&d->tasks);
	memset(d, 0, sizeof(*d));
}

/* Load the dataset dir (NULL: the default one); an exit status on failure, said. */
static int
dsinfo_load(const char *dir, struct dsinfo *ret)
{
	_cleanup_diags_ struct sb_diags diags = SB_DIAGS_INIT;
	_cleanup_free_ char *def = dir == NULL ? cli_default_dataset() : NULL;
	struct sb_error *err = NULL;
	const char *slash;
	int rc;

	memset(ret, 0, sizeof(*ret));
	ret->tasks = (struct sb_argv)SB_ARGV_INIT;
	if (sb_dataset_load(dir != NULL ? dir : def, &ret->ds, &diags, &err) < 0) {
		_cleanup_free_ char *m = sb_escape(sb_error_message(err));

		rc = cli_fail("%s", m);
		sb_error_release(&err);
		return rc;
	}
	slash = strrchr(ret->ds->path, '/');
	ret->name = sb_ascii_lower(slash != NULL && slash[1] != '\0' ? slash + 1 : ret->ds->path);
	/* A task with problems still names its images: it counts. */
	for (size_t i = 0; i < ret->ds->n; i++) {
		_cleanup_free_ char *l = sb_ascii_lower(ret->ds->tasks[i]->name);

		sb_argv_push(&ret->tasks, l);
	}
	return 0;
}

/* ---- printing -------------------------------------------------------------------------- */

/* A human size in a static buffer of its own (one per argument slot of a printf). */
#define HUMAN(b) space_human((b), (char[24]){0}, 24)

/* An escaped copy of s for the terminal ("-" for NULL); the caller frees. */
static char *
esc(const char *s)
{
	return sb_escape(s != NULL ? s : "-");
}

/* Print the lines of rows (NULL-terminated argv of cells each), columns padded. */
static void
print_table(json_t *rows, size_t ncol)
{
	size_t *w = sb_xcalloc(ncol, sizeof(size_t)), i;
	json_t *r;

	json_array_foreach(rows, i, r)
		for (size_t c = 0; c < ncol; c++) {
			size_t l = strlen(json_string_value(json_array_get(r, c)) ?: "");

			if (l > w[c])
				w[c] = l;
		}
	json_array_foreach(rows, i, r) {
		for (size_t c = 0; c < ncol; c++) {
			const char *s = json_string_value(json_array_get(r, c)) ?: "";

			if (c + 1 < ncol)
				printf("%-*s  ", (int)w[c], s);
			else
				printf("%s\n", s);
		}
	}
	free(w);
}

/* ---- the plan: what prune keeps and why -------------------------------------------------- */

struct row {
	size_t img;       /* index in the engine's images */
	const char *name; /* the tag (borrowed from the image) */
	struct space_name nm;
	char *keep; /* why it stays, or NULL: prune removes it */
};

struct plan {
	struct row *rows;
	size_t n;
	bool *gone; /* per image: prune removes every name it has */
};

static void
plan_release(struct plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		space_name_release(&p->rows[i].nm);
		free(p->rows[i].keep);
	}
	free(p->rows);
	free(p->gone);
	memset(p, 0, sizeof(*p));
}

static int
cmp_row(const void *a, const void *b)
{
	return strcmp(((const struct row *)a)->name, ((const struct row *)b)->name);
}

/*
 * Why a container's use keeps the image: a kept run (a container labelled ssebench.run) or
 * another container, which the engine would not let go of it either. NULL: none uses it.
 */
static char *
used_by(const struct engine *e, const char *image_id)
{
	char *other = NULL;
	json_t *c;
	size_t i;

	json_array_foreach(e->containers, i, c) {
		const char *run = container_label(c, "ssebench.run");
		const char *img = json_string_value(json_object_get(c, "Image"));
		const char *name = json_string_value(json_object_get(c, "Name"));

		if (img == NULL || strcmp(img, image_id) != 0)
			continue;
		if (run != NULL) {
			_cleanup_free_ char *r = sb_escape(run);

			free(other);
			return sb_xasprintf("kept run %s", r);
		}
		if (other == NULL) {
			_cleanup_free_ char *nm =
			    sb_escape(name != NULL ? (name[0] == '/' ? name + 1 : name) : "?");

			other = sb_xasprintf("used by the container %s", nm);
		}
	}
	return other;
}

/*
 * One row per name under the prefix, sorted, with what prune does to it: for the dataset d
 * (NULL with --all), all: remove whatever no container uses.
 */
static void
plan_make(const struct engine *e, const struct dsinfo *d, bool all, struct plan *p)
{
	memset(p, 0, sizeof(*p));
	p->gone = sb_xcalloc(e->n + 1, sizeof(bool));
	for (size_t i = 0; i < e->n; i++) {
		_cleanup_free_ char *use = NULL;
		bool every = e->img[i].n_tags > 0;

		if (!e->ours[i])
			continue;
		use = used_by(e, e->img[i].id);
		for (size_t t = 0; t < e->img[i].n_tags; t++) {
			struct row r = {.img = i, .name = e->img[i].tags[t]};
			const char *why = NULL;

			if (!space_name_parse(cli_registry(), r.name, &r.nm)) {
				every = false; /* a name outside the prefix keeps the image */
				continue;
			}
			if (use != NULL)
				r.keep = sb_xstrdup(use);
			else if (!all && d != NULL &&
				 (why = space_keep_reason(&r.nm, (const char *const *)d->tasks.v,
				      d->tasks.n, d->name, PACKAGE_VERSION)) != NULL)
				r.keep = sb_xstrdup(why);
			else if (!all && d == NULL)
				r.keep = sb_xstrdup("no dataset");
			if (r.keep != NULL)
				every = false;
			p->rows = sb_xreallocarray(p->rows, p->n + 1, sizeof(*p->rows));
			p->rows[p->n++] = r;
		}
		p->gone[i] = every;
	}
	if (p->n > 1)
		qsort(p->rows, p->n, sizeof(*p->rows), cmp_row);
}

/* The task and agent a row serves: the labels the builds put on, else its name. */
static const char *
row_task(const struct engine *e, const struct row *r)
{
	const char *l =
	    json_string_value(json_object_get(e->img[r->img].labels, "ssebench.task-id"));

	if (r->nm.task == NULL && r->nm.kind != SPACE_CASE)
		return NULL; /* a base image has no task, whatever it inherited */
	return l != NULL ? l : r->nm.task;
}

static const char *
row_agent(const struct engine *e, const struct row *r)
{
	const char *l = json_string_value(json_object_get(e->img[r->img].labels, "ssebench.agent"));

	if (r->nm.kind != SPACE_AGENT && r->nm.kind != SPACE_AGENT_SIDECAR)
		return NULL;
	return r->nm.agent != NULL ? r->nm.agent : l;
}

/* The ssebench.* labels of an image (a new object). */
static json_t *
our_labels(const json_t *labels)
{
	json_t *out = json_object(), *v;
	const char *k;

	json_object_foreach((json_t *)labels, k, v)
		if (strncmp(k, "ssebench.", 9) == 0 && json_is_string(v))
			json_object_set(out, k, v);
	return out;
}

/*
 * How images list and dataset du start: their flags (--local, --json), the dataset, the
 * engine's images (with containers: the containers' too) and the plan for the dataset's
 * images. -1 to go on, with d, e and p to release, or the exit status to return.
 */
static int
space_start(const struct cli_command *cmd, int argc, char **argv, bool containers,
    bool *as_json, struct dsinfo *d, struct engine *e, struct plan *p)
{
	_cleanup_free_ char *dir = NULL;
	int rc;

	if ((rc = cli_dataset_command(cmd, argc, argv, &dir, as_json)) >= 0)
		return rc;
	if ((rc = dsinfo_load(dir, d)) != 0)
		return rc;
	if ((rc = engine_open(e, containers)) != 0) {
		dsinfo_release(d);
		return rc;
	}
	plan_make(e, d, false, p);
	return -1;
}

/* ---- images list ----------------------------------------------------------------------- */

static int
images_list(const struct cli_command *cmd, int argc, char **argv)
{
	struct dsinfo d;
	struct engine e;
	struct plan p;
	bool as_json = false;
	size_t n_images = 0;
	int rc;

	if ((rc = space_start(cmd, argc, argv, true, &as_json, &d, &e, &p)) >= 0)
		return rc;
	for (size_t i = 0; i < e.n; i++)
		n_images += e.ours[i];
	if (as_json) {
		json_t *arr = json_array(), *out;

		for (size_t i = 0; i < p.n; i++) {
			const struct row *r = &p.rows[i];
			const struct space_image *img = &e.img[r->img];
			uint64_t shared, unique;

			space_split(e.img, e.n, e.ours, r->img, &shared, &unique);
			json_array_append_new(
			    arr, json_pack(
				     "{s:o, s:s, s:I, s:I, s:I, s:b, s:s, s:o, s:o, s:o, s:o, s:o, "
				     "s:s, s:o}",
				     "name", sb_json_string_or_null(r->name), "id", img->id, "size",
				     (json_int_t)img->size, "shared", (json_int_t)shared, "unique",
				     (json_int_t)unique, "exact", img->exact, "kind",
				     space_kind_name(r->nm.kind), "tag",
				     sb_json_string_or_null(r->nm.tag), "dataset",
				     sb_json_string_or_null(r->nm.dataset), "task",
				     sb_json_string_or_null(row_task(&e, r)), "agent",
				     sb_json_string_or_null(row_agent(&e, r)), "labels",
				     our_labels(img->labels), "prune",
				     r->keep != NULL ? "keep" : "remove", "reason",
				     sb_json_string_or_null(r->keep)));
		}
		out = json_pack("{s:s, s:o, s:o, s:{s:I, s:I, s:I, s:I}}", "registry",
		    cli_registry(), "dataset", sb_json_string_or_null(d.ds->path), "images", arr,
		    "total", "images", (json_int_t)n_images, "names", (json_int_t)p.n, "size",
		    (json_int_t)space_distinct(e.img, e.n, e.ours), "prune_frees",
		    (json_int_t)space_freed(e.img, e.n, p.gone));
		cli_print_json(out);
		json_decref(out);
	} else {
		json_t *rows = json_array();
		_cleanup_free_ char *reg = esc(cli_registry()), *dsp = esc(d.ds->path);

		json_array_append_new(
		    rows, json_pack("[s,s,s,s,s,s,s,s]", "IMAGE", "SIZE", "SHARED", "UNIQUE",
			      "KIND", "TASK", "AGENT", "PRUNE"));
		for (size_t i = 0; i < p.n; i++) {
			const struct row *r = &p.rows[i];
			const struct space_image *img = &e.img[r->img];
			_cleanup_free_ char *name = esc(r->name), *task = esc(row_task(&e, r));
			_cleanup_free_ char *agent = esc(row_agent(&e, r)), *prune = NULL;
			uint64_t shared, unique;

			space_split(e.img, e.n, e.ours, r->img, &shared, &unique);
			prune = r->keep != NULL ? sb_xasprintf("keep (%s)", r->keep)
						: sb_xstrdup("remove");
			json_array_append_new(rows,
			    json_pack("[s,s,s,s,s,s,s,s]", name, HUMAN(img->size), HUMAN(shared),
				HUMAN(unique), space_kind_name(r->nm.kind), task, agent, prune));
		}
		print_table(rows, 8);
		json_decref(rows);
		printf("%zu image%s (%zu name%s) under %s: %s on disk, each layer once; prune for "
		       "%s would free %s\n",
		    n_images, n_images == 1 ? "" : "s", p.n, p.n == 1 ? "" : "s", reg,
		    HUMAN(space_distinct(e.img, e.n, e.ours)), dsp,
		    HUMAN(space_freed(e.img, e.n, p.gone)));
	}
	plan_release(&p);
	engine_release(&e);
	dsinfo_release(&d);
	if (fflush(stdout) != 0)
		return cli_fail("writing the list: %s", strerror(errno));
	return SB_EXIT_OK;
}

/* ---- images prune ---------------------------------------------------------------------- */

/* Is the name still the image we planned for? (It may have been rebuilt since.) */
static bool
name_still_is(const char *name, const char *id)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ char *out = NULL;
	json_t *v = NULL;
	bool same;

	sb_argv_pushl(&a, "image", "inspect", "--format", "{{json .Id}}", name, NULL);
	if (engine_capture(&a, &out, NULL) < 0 ||
	    sb_json_load(out, strlen(out), SB_JSON_FILE_MAX, &v, NULL) < 0)
		return false;
	same = json_is_string(v) && strcmp(json_string_value(v), id) == 0;
	json_decref(v);
	return same;
}

static int
images_prune(const struct cli_command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {{"local", required_argument, NULL, 'd'},
	    {"all", no_argument, NULL, 'a'}, {"dry-run", no_argument, NULL, 'n'},
	    {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT, left = SB_ARGV_INIT;
	_cleanup_free_ char *dir = NULL;
	_cleanup_free_ bool *gone = NULL;
	struct sb_error *err = NULL;
	struct dsinfo d = {0};
	struct engine e;
	struct plan p;
	bool all = false, dry = false, have_ds = false;
	size_t removed = 0, failed = 0;
	int c, rc = 0;

	while ((c = cli_getopt(cmd, argc, argv, "+h", longopts, &rc)) != -1) {
		switch (c) {
		case -2:
			return rc;
		case 'd':
			free(dir);
			dir = sb_xstrdup(optarg);
			break;
		case 'a':
			all = true;
			break;
		case 'n':
			dry = true;
			break;
		default:
			break;
		}
	}
	if (optind < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	/* --all needs no dataset; one given must still load. */
	if (!all || dir != NULL) {
		if ((rc = dsinfo_load(dir, &d)) != 0)
			return rc;
		have_ds = true;
	}
	if ((rc = engine_open(&e, true)) != 0) {
		if (have_ds)
			dsinfo_release(&d);
		return rc;
	}
	plan_make(&e, have_ds ? &d : NULL, all, &p);
	for (size_t i = 0; i < p.n; i++) {
		const struct row *r = &p.rows[i];
		_cleanup_argv_ struct sb_argv rm = SB_ARGV_INIT;
		_cleanup_free_ char *name = esc(r->name), *out = NULL;

		if (r->keep != NULL)
			continue;
		if (dry) {
			printf("would remove %s\n", name);
			removed++;
			continue;
		}
		if (!name_still_is(r->name, e.img[r->img].id)) {
			sb_log(SB_LOG_WARN, "%s changed since it was listed, skipping it", name);
			continue;
		}
		/* By name, never --force (a container's image stays), never the untagged parents.
		 */
		sb_argv_pushl(&rm, "rmi", "--no-prune", r->name, NULL);
		if (engine_capture(&rm, &out, &err) < 0) {
			cli_fail("removing %s: %s", name, sb_error_message(err));
			sb_error_release(&err);
			failed++;
			continue;
		}
		printf("removed %s\n", name);
		removed++;
	}
	/* What went: the images that no longer exist, and the layers only they held. */
	gone = sb_xcalloc(e.n + 1, sizeof(bool));
	if (dry) {
		memcpy(gone, p.gone, e.n * sizeof(bool));
	} else {
		sb_argv_pushl(
		    &a, "image", "ls", "-a", "--no-trunc", "--format", "{{json .ID}}", NULL);
		if (engine_ids(&a, true, &left, &err) < 0) {
			cli_fail("%s", sb_error_message(err));
			sb_error_release(&err);
			failed++;
		} else {
			for (size_t i = 0; i < e.n; i++) {
				gone[i] = true;
				for (size_t k = 0; k < left.n && gone[i]; k++)
					gone[i] = strcmp(left.v[k], e.img[i].id) != 0;
			}
		}
	}
	printf("%s %zu image name%s; %s %s\n", dry ? "would remove" : "removed", removed,
	    removed == 1 ? "" : "s", dry ? "would free" : "freed",
	    HUMAN(space_freed(e.img, e.n, gone)));
	plan_release(&p);
	engine_release(&e);
	if (have_ds)
		dsinfo_release(&d);
	if (fflush(stdout) != 0)
		return cli_fail("writing the list: %s", strerror(errno));
	return failed > 0 ? SB_EXIT_FAILURE : SB_EXIT_OK;
}

/* ---- runs prune ------------------------------------------------------------------------ */

/*
 * Is the container (or may it be) live? Running, paused or restarting are; exited and dead
 * are not; one created and never started is a run being set up unless it is older than
 * CREATED_GRACE. A state we cannot read counts as live.
 */
static bool
container_live(const json_t *c, time_t now)
{
	const json_t *st = json_object_get(c, "State");
	const char *status = json_string_value(json_object_get(st, "Status"));
	const char *created = json_string_value(json_object_get(c, "Created"));
	struct tm tm;

	if (status == NULL || json_is_true(json_object_get(st, "Running")) ||
	    json_is_true(json_object_get(st, "Paused")) ||
	    json_is_true(json_object_get(st, "Restarting")))
		return true;
	if (strcmp(status, "exited") == 0 || strcmp(status, "dead") == 0)
		return false;
	if (strcmp(status, "created") != 0 || created == NULL)
		return true;
	memset(&tm, 0, sizeof(tm));
	if (strptime(created, "%Y-%m-%dT%H:%M:%S", &tm) == NULL)
		return true;
	return now - timegm(&tm) < CREATED_GRACE;
}

/* `docker <kind> ls` names labelled ssebench.run=run (a checked run id). */
static json_t *
run_labelled(const char *kind, const char *run)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;

	sb_argv_pushl(&a, kind, "ls", "--filter", NULL);
	sb_argv_pushf(&a, "label=ssebench.run=%s", run);
	sb_argv_pushl(&a, "--format", "{{json .Name}}", NULL);
	return engine_json_lines(&a, NULL);
}

/*
 * Remove one finished run: its containers (`docker rm -v`, never --force: one that started
 * since is refused), its volumes and network, its freezer cgroup. The counts go out.
 */
static int
run_remove(const char *run, json_t *cs, size_t *ret_vols)
{
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT;
	_cleanup_free_ char *out = NULL;
	struct sb_error *err = NULL;
	json_t *vols, *nets, *c, *v;
	size_t i;
	int rc = 0;

	sb_argv_pushl(&a, "rm", "-v", NULL);
	json_array_foreach(cs, i, c)
		sb_argv_push(&a, json_string_value(json_object_get(c, "Id")));
	if (engine_capture(&a, &out, &err) < 0) {
		_cleanup_free_ char *r = esc(run);

		cli_fail("removing the run %s: %s", r, sb_error_message(err));
		sb_error_release(&err);
		return -1;
	}
	*ret_vols = 0;
	/* A run id that is not one names nothing else we could safely look up. */
	if (!sb_run_id_valid(run))
		return 0;
	if ((vols = run_labelled("volume", run)) != NULL) {
		json_array_foreach(vols, i, v) {
			_cleanup_argv_ struct sb_argv rv = SB_ARGV_INIT;
			_cleanup_free_ char *o = NULL;

			if (!json_is_string(v))
				continue;
			sb_argv_pushl(&rv, "volume", "rm", json_string_value(v), NULL);
			if (engine_capture(&rv, &o, &err) < 0) {
				cli_fail("%s", sb_error_message(err));
				sb_error_release(&err);
				rc = -1;
			} else {
				(*ret_vols)++;
			}
		}
		json_decref(vols);
	}
	if ((nets = run_labelled("network", run)) != NULL) {
		json_array_foreach(nets, i, v)
			if (json_is_string(v))
				net_remove(json_string_value(v));
		json_decref(nets);
	}
	if (agent_cgroup_sweep(run) < 0)
		rc = -1;
	return rc;
}

static int
runs_prune(const struct cli_command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {{"dry-run", no_argument, NULL, 'n'},
	    {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
	_cleanup_argv_ struct sb_argv a = SB_ARGV_INIT, ids = SB_ARGV_INIT;
	_cleanup_free_ char *prefix = NULL;
	struct sb_error *err = NULL;
	json_t *cs = json_array(), *runs = json_object(), *c, *list;
	const char *run;
	size_t i, removed = 0, live = 0, failed = 0;
	time_t now = time(NULL);
	bool dry = false;
	int opt, rc = 0;

	while ((opt = cli_getopt(cmd, argc, argv, "+h", longopts, &rc)) != -1) {
		if (opt == -2)
			goto out;
		if (opt == 'n')
			dry = true;
	}
	if (optind < argc) {
		rc = cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
		goto out;
	}
	if ((rc = engine_check()) != 0)
		goto out;
	sb_argv_pushl(&a, "ps", "-a", "--no-trunc", "--filter", "label=ssebench.run", "--format",
	    "{{json .ID}}", NULL);
	if (engine_ids(&a, false, &ids, &err) < 0 ||
	    engine_inspect("container", &ids, cs, &err) < 0) {
		rc = cli_fail("%s", sb_error_message(err));
		sb_error_release(&err);
		goto out;
	}
	/* The runs, each with its containers (a sidecar run has two). */
	json_array_foreach(cs, i, c) {
		const char *r = container_label(c, "ssebench.run");

		if (r == NULL || !json_is_string(json_object_get(c, "Id")))
			continue;
		if ((list = json_object_get(runs, r)) == NULL)
			json_object_set_new(runs, r, list = json_array());
		json_array_append(list, c);
	}
	/*
	 * The runs of this registry's images only: another $SSEBENCH_REGISTRY is another
	 * installation (or a test suite beside us), whose runs are its own to remove.
	 */
	prefix = sb_xasprintf("%s/", cli_registry());
	json_object_foreach(runs, run, list) {
		_cleanup_free_ char *r = esc(run);
		bool ours = true, is_live = false;
		size_t vols = 0;

		json_array_foreach(list, i, c) {
			const char *img = json_string_value(
			    json_object_get(json_object_get(c, "Config"), "Image"));

			if (img == NULL || strncmp(img, prefix, strlen(prefix)) != 0)
				ours = false;
			if (container_live(c, now))
				is_live = true;
		}
		if (!ours)
			continue;
		if (is_live) {
			printf("kept run %s: running\n", r);
			live++;
			continue;
		}
		if (dry) {
			printf("would remove run %s (%zu container%s)\n", r, json_array_size(list),
			    json_array_size(list) == 1 ? "" : "s");
			removed++;
			continue;
		}
		if (run_remove(run, list, &vols) < 0) {
			failed++;
			continue;
		}
		printf("removed run %s (%zu container%s, %zu volume%s)\n", r, json_array_size(list),
		    json_array_size(list) == 1 ? "" : "s", vols, vols == 1 ? "" : "s");
		removed++;
	}
	/* Their file systems: gone once no container of a run is left (disk.h). */
	if (!dry && removed > 0) {
		_cleanup_free_ char *droot = sb_xasprintf("%s/.disks", results_root());

		disk_sweep(droot);
	}
	printf("%s %zu finished run%s; %zu running kept\n", dry ? "would remove" : "removed",
	    removed, removed == 1 ? "" : "s", live);
	rc = failed > 0 ? SB_EXIT_FAILURE : SB_EXIT_OK;
out:
	json_decref(cs);
	json_decref(runs);
	return rc;
}

/* ---- dataset du ------------------------------------------------------------------------ */

/* Does the row name an image of the task (lower case) of dataset d? */
static bool
row_of_task(const struct row *r, const struct dsinfo *d, const char *task)
{
	if (r->nm.kind == SPACE_CASE)
		return strcmp(r->nm.dataset, d->name) == 0 && strcmp(r->nm.task, task) == 0;
	if (r->nm.kind == SPACE_TOOL || r->nm.kind == SPACE_SIDECAR_TASK ||
	    r->nm.kind == SPACE_AGENT)
		return strcmp(r->nm.task, task) == 0;
	return false;
}

int
cmd_dataset_du(const struct cli_command *cmd, int argc, char **argv)
{
	_cleanup_free_ bool *all_sel = NULL, *task_sel = NULL;
	json_t *tasks = json_array(), *rows = json_array(), *out;
	struct dsinfo d;
	struct engine e;
	struct plan p;
	bool as_json = false;
	size_t n_images = 0;
	int rc;

	if ((rc = space_start(cmd, argc, argv, false, &as_json, &d, &e, &p)) >= 0)
		goto done;
	rc = SB_EXIT_OK;
	all_sel = sb_xcalloc(e.n + 1, sizeof(bool));
	task_sel = sb_xcalloc(e.n + 1, sizeof(bool));
	json_array_append_new(
	    rows, json_pack("[s,s,s,s]", "TASK / IMAGE", "SIZE", "SHARED", "UNIQUE"));
	for (size_t t = 0; t < d.ds->n; t++) {
		const char *task = d.tasks.v[t];
		_cleanup_free_ char *tname = esc(d.ds->tasks[t]->name);
		json_t *imgs = json_array(), *trows = json_array();
		uint64_t tsize;

		memset(task_sel, 0, (e.n + 1) * sizeof(bool));
		for (size_t i = 0; i < p.n; i++) {
			const struct row *r = &p.rows[i];
			const struct space_image *img = &e.img[r->img];
			_cleanup_free_ char *name = NULL;
			uint64_t shared, unique;

			if (!row_of_task(r, &d, task))
				continue;
			space_split(e.img, e.n, e.ours, r->img, &shared, &unique);
			task_sel[r->img] = all_sel[r->img] = true;
			json_array_append_new(
			    imgs, json_pack("{s:o, s:s, s:s, s:I, s:I, s:I, s:b}", "name",
				      sb_json_string_or_null(r->name), "id", img->id, "kind",
				      space_kind_name(r->nm.kind), "size", (json_int_t)img->size,
				      "shared", (json_int_t)shared, "unique", (json_int_t)unique,
				      "exact", img->exact));
			name = esc(r->name);
			json_array_append_new(
			    trows, json_pack("[s+,s,s,s]", "  ", name, HUMAN(img->size),
				       HUMAN(shared), HUMAN(unique)));
		}
		tsize = space_distinct(e.img, e.n, task_sel);
		json_array_append_new(tasks,
		    json_pack("{s:o, s:I, s:o}", "id", sb_json_string_or_null(d.ds->tasks[t]->name),
			"size", (json_int_t)tsize, "images", imgs));
		json_array_append_new(
		    rows, json_pack("[s,s,s,s]", tname,
			      json_array_size(trows) > 0 ? HUMAN(tsize) : "no images", "", ""));
		json_array_extend(rows, trows);
		json_decref(trows);
	}
	for (size_t i = 0; i < e.n; i++)
		n_images += all_sel[i];
	if (as_json) {
		out = json_pack("{s:o, s:s, s:o, s:{s:I, s:I, s:I}}", "dataset",
		    sb_json_string_or_null(d.ds->path), "registry", cli_registry(), "tasks", tasks,
		    "total", "images", (json_int_t)n_images, "size",
		    (json_int_t)space_distinct(e.img, e.n, all_sel), "own",
		    (json_int_t)space_freed(e.img, e.n, all_sel));
		tasks = NULL;
		cli_print_json(out);
		json_decref(out);
	} else {
		_cleanup_free_ char *dsp = esc(d.ds->path);

		print_table(rows, 4);
		printf("%s: %zu image%s of %zu task%s, %s on disk (each layer once), %s of it held "
		       "by no other image\n",
		    dsp, n_images, n_images == 1 ? "" : "s", d.ds->n, d.ds->n == 1 ? "" : "s",
		    HUMAN(space_distinct(e.img, e.n, all_sel)),
		    HUMAN(space_freed(e.img, e.n, all_sel)));
	}
	plan_release(&p);
	engine_release(&e);
	dsinfo_release(&d);
	if (fflush(stdout) != 0)
		rc = cli_fail("writing the report: %s", strerror(errno));
done:
	json_decref(tasks);
	json_decref(rows);
	return rc;
}

int
cmd_images_space(const struct cli_command *cmd, int argc, char **argv)
{
	if (strcmp(cmd->name, "prune") == 0)
		return images_prune(cmd, argc, argv);
	return images_list(cmd, argc, argv);
}

int
cmd_runs_prune(const struct cli_command *cmd, int argc, char **argv)
{
	return runs_prune(cmd, argc, argv);
}

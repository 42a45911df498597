/* SPDX-License-Identifier: Apache-2.0 */
/* space.c: the disk accounting of ssebench's images (space.h); no I/O. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sb/argv.h"
#include "sb/mem.h"
#include "sb/sha256.h"

#include "space.h"

const char *
space_kind_name(enum space_kind k)
{
	switch (k) {
	case SPACE_ROOTFS:
		return "rootfs";
	case SPACE_BASE:
		return "base";
	case SPACE_CASE:
		return "case";
	case SPACE_RUNTIME:
		return "runtime";
	case SPACE_TOOL:
		return "tool";
	case SPACE_SIDECAR_TASK:
		return "sidecar-task";
	case SPACE_SIDECAR_AGENTRT:
		return "sidecar-runtime";
	case SPACE_AGENT:
		return "agent";
	case SPACE_AGENT_SIDECAR:
		return "agent-sidecar";
	case SPACE_OTHER:
		return "other";
	}
	return "other";
}

void
space_name_release(struct space_name *n)
{
	free(n->tag);
	free(n->dataset);
	free(n->task);
	free(n->agent);
	memset(n, 0, sizeof(*n));
}

/* Does s have exactly `parts` components separated by '/', none empty? */
static size_t
count_parts(const char *s)
{
	size_t parts = 1;

	if (*s == '\0')
		return 0;
	for (const char *p = s; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		if (p == s || p[1] == '\0' || p[1] == '/')
			return 0;
		parts++;
	}
	return parts;
}

bool
space_name_parse(const char *prefix, const char *ref, struct space_name *ret)
{
	size_t plen = strlen(prefix);
	_cleanup_free_ char *path = NULL;
	struct space_name n = {.kind = SPACE_OTHER};
	const char *rest, *colon, *slash;
	char *first, *second, *third;
	size_t parts;

	if (plen == 0 || strncmp(ref, prefix, plen) != 0 || ref[plen] != '/')
		return false;
	rest = ref + plen + 1;
	/* The tag follows the last ':' after the last '/' (a registry host may have a port). */
	slash = strrchr(rest, '/');
	colon = strrchr(slash != NULL ? slash : rest, ':');
	path = colon != NULL ? sb_xstrndup(rest, (size_t)(colon - rest)) : sb_xstrdup(rest);
	n.tag = sb_xstrdup(colon != NULL ? colon + 1 : "latest");
	parts = count_parts(path);
	first = path;
	second = parts >= 2 ? strchr(first, '/') + 1 : NULL;
	third = parts >= 3 ? strchr(second, '/') + 1 : NULL;
	if (second != NULL)
		second[-1] = '\0';
	if (third != NULL)
		third[-1] = '\0';
	if (parts == 1) {
		if (strcmp(first, "debian") == 0 && strcmp(n.tag, "bookworm") == 0)
			n.kind = SPACE_ROOTFS;
		else if (strncmp(first, "base-", 5) == 0 && first[5] != '\0')
			n.kind = SPACE_BASE;
		else if (strcmp(first, "runtime") == 0)
			n.kind = SPACE_RUNTIME;
		else if (strcmp(first, "tool-sidecar-agent") == 0)
			n.kind = SPACE_SIDECAR_AGENTRT;
	} else if (parts == 2) {
		if (strcmp(first, "tool") == 0)
			n.kind = SPACE_TOOL;
		else if (strcmp(first, "tool-sidecar") == 0)
			n.kind = SPACE_SIDECAR_TASK;
		else if (strncmp(first, "agent-", 6) == 0 && first[6] != '\0') {
			n.kind = strcmp(second, "sidecar") == 0 ? SPACE_AGENT_SIDECAR : SPACE_AGENT;
			n.agent = sb_xstrdup(first + 6);
		}
		if (n.kind == SPACE_TOOL || n.kind == SPACE_SIDECAR_TASK || n.kind == SPACE_AGENT)
			n.task = sb_xstrdup(second);
	} else if (parts == 3 && strcmp(first, "case") == 0) {
		n.kind = SPACE_CASE;
		n.dataset = sb_xstrdup(second);
		n.task = sb_xstrdup(third);
	}
	*ret = n;
	return true;
}

static bool
in_list(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; s != NULL && i < n; i++)
		if (strcmp(s, list[i]) == 0)
			return true;
	return false;
}

const char *
space_keep_reason(const struct space_name *n, const char *const *tasks, size_t n_tasks,
    const char *dataset, const char *version)
{
	bool current = strcmp(n->tag, version) == 0;

	switch (n->kind) {
	case SPACE_ROOTFS:
		return "the Debian rootfs";
	case SPACE_BASE:
		return "a base image";
	case SPACE_OTHER:
		return "not an image ssebench makes";
	case SPACE_RUNTIME:
	case SPACE_SIDECAR_AGENTRT:
		/* Only this ssebench's version is built on; an older one is a leftover. */
		return current ? "shared by every task" : NULL;
	case SPACE_AGENT_SIDECAR:
		return "shared by every task (sidecar mode)";
	case SPACE_CASE:
		return strcmp(n->dataset, dataset) == 0 && in_list(n->task, tasks, n_tasks)
			   ? "a task of the dataset"
			   : NULL;
	case SPACE_TOOL:
	case SPACE_SIDECAR_TASK:
		return current && in_list(n->task, tasks, n_tasks) ? "a task of the dataset" : NULL;
	case SPACE_AGENT:
		return in_list(n->task, tasks, n_tasks) ? "a task of the dataset" : NULL;
	}
	return "not an image ssebench makes";
}

/* "sha256:" and 64 lower-case hex digits. */
static bool
is_digest(const char *s)
{
	if (s == NULL || strncmp(s, "sha256:", 7) != 0 || strlen(s) != 7 + 64)
		return false;
	for (const char *p = s + 7; *p != '\0'; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

int
space_image_from_inspect(const json_t *j, struct space_image *ret, struct sb_error **err)
{
	const json_t *id = json_object_get(j, "Id"), *tags = json_object_get(j, "RepoTags");
	const json_t *size = json_object_get(j, "Size");
	const json_t *layers = json_object_get(json_object_get(j, "RootFS"), "Layers");
	const json_t *labels = json_object_get(json_object_get(j, "Config"), "Labels");
	struct space_image img = {0};
	char chain[7 + 65] = "";
	const json_t *v;
	size_t i;

	if (!json_is_object(j) || !is_digest(json_string_value(id)))
		return sb_error_set(err, EINVAL, "an image without a valid Id");
	if (!(tags == NULL || json_is_null(tags) || json_is_array(tags)) ||
	    !json_is_integer(size) || json_integer_value(size) < 0 || !json_is_array(layers) ||
	    json_array_size(layers) > SPACE_LAYERS_MAX ||
	    !(labels == NULL || json_is_null(labels) || json_is_object(labels)))
		return sb_error_set(
		    err, EINVAL, "the image %s: unexpected inspect output", json_string_value(id));
	json_array_foreach(tags, i, v)
		if (!json_is_string(v))
			return sb_error_set(err, EINVAL, "the image %s: a tag that is no string",
			    json_string_value(id));
	json_array_foreach(layers, i, v)
		if (!is_digest(json_string_value(v)))
			return sb_error_set(err, EINVAL, "the image %s: a layer that is no digest",
			    json_string_value(id));

	img.id = sb_xstrdup(json_string_value(id));
	img.size = (uint64_t)json_integer_value(size);
	img.n_tags = json_array_size(tags);
	img.tags = sb_xcalloc(img.n_tags + 1, sizeof(char *));
	json_array_foreach(tags, i, v)
		img.tags[i] = sb_xstrdup(json_string_value(v));
	img.n_layers = json_array_size(layers);
	img.chains = sb_xcalloc(img.n_layers + 1, sizeof(char *));
	img.sizes = sb_xcalloc(img.n_layers + 1, sizeof(uint64_t));
	/* ChainID(L0) = DiffID(L0); ChainID(Ln) = sha256("<ChainID(Ln-1)> <DiffID(Ln)>"). */
	json_array_foreach(layers, i, v) {
		const char *diff = json_string_value(v);

		if (i == 0) {
			snprintf(chain, sizeof(chain), "%s", diff);
		} else {
			struct sb_sha256 s;
			unsigned char d[32];
			char hex[65];

			sb_sha256_init(&s);
			sb_sha256_update(&s, chain, strlen(chain));
			sb_sha256_update(&s, " ", 1);
			sb_sha256_update(&s, diff, strlen(diff));
			sb_sha256_final(&s, d);
			sb_sha256_to_hex(d, hex);
			snprintf(chain, sizeof(chain), "sha256:%s", hex);
		}
		img.chains[i] = sb_xstrdup(chain);
	}
	if (img.n_layers > 0)
		img.sizes[img.n_layers - 1] = img.size;
	img.labels = json_is_object(labels) ? json_incref((json_t *)labels) : json_object();
	*ret = img;
	return 0;
}

bool
space_hist_is_metadata(const char *created_by)
{
	static const char *const meta[] = {"ARG", "CMD", "ENTRYPOINT", "ENV", "EXPOSE",
	    "HEALTHCHECK", "LABEL", "MAINTAINER", "ONBUILD", "SHELL", "STOPSIGNAL", "USER",
	    "VOLUME"};
	const char *p = created_by != NULL ? created_by : "";
	size_t len;

	/* The classic builder's "/bin/sh -c #(nop) " before an instruction that ran nothing. */
	if (strncmp(p, "/bin/sh -c #(nop)", 17) == 0)
		p += 17;
	while (*p == ' ' || *p == '\t')
		p++;
	len = strcspn(p, " \t");
	for (size_t i = 0; i < SB_ARRAY_SIZE(meta); i++)
		if (len == strlen(meta[i]) && strncasecmp(p, meta[i], len) == 0)
			return true;
	return false;
}

void
space_image_set_history(struct space_image *img, const struct space_hist *h, size_t n)
{
	size_t nonzero = 0, maybe = 0, k = 0;
	uint64_t sum = 0;
	int rule = 0; /* 1 every entry, 2 those not 0, 3 those not 0 or not metadata */

	for (size_t i = 0; i < n; i++) {
		if (h[i].size > UINT64_MAX - sum)
			return;
		sum += h[i].size;
		nonzero += h[i].size != 0;
		maybe += h[i].size != 0 || !space_hist_is_metadata(h[i].created_by);
	}
	if (img->n_layers == 0 || sum != img->size || nonzero > img->n_layers)
		return;
	if (n == img->n_layers)
		rule = 1;
	else if (nonzero == img->n_layers)
		rule = 2;
	else if (maybe == img->n_layers)
		rule = 3;
	memset(img->sizes, 0, img->n_layers * sizeof(uint64_t));
	/* Bottom up: the entries the rule takes are the layers, in order. */
	for (size_t i = n; i-- > 0;) {
		bool take = rule == 1 || h[i].size != 0 ||
			    (rule == 3 && !space_hist_is_metadata(h[i].created_by));

		if (take && k < img->n_layers)
			img->sizes[k++] = h[i].size;
	}
	img->exact = rule != 0;
}

void
space_image_release(struct space_image *img)
{
	free(img->id);
	sb_strv_free(img->tags);
	sb_strv_free(img->chains);
	free(img->sizes);
	json_decref(img->labels);
	memset(img, 0, sizeof(*img));
}

/*
 * The layer table of the images: chain id -> [the layer's size, how many images hold it,
 * how many of those are selected]. An image's figures for a layer are its own; the first
 * exact one wins, as an inexact image may have counted the layer's bytes on another.
 */
static json_t *
layer_table(const struct space_image *imgs, size_t n, const bool *sel)
{
	json_t *t = json_object();

	for (size_t i = 0; i < n; i++) {
		for (size_t l = 0; l < imgs[i].n_layers; l++) {
			json_t *e = json_object_get(t, imgs[i].chains[l]);

			if (e == NULL) {
				e = json_pack("[I, I, I, b]", (json_int_t)imgs[i].sizes[l],
				    (json_int_t)0, (json_int_t)0, imgs[i].exact);
				json_object_set_new(t, imgs[i].chains[l], e);
			} else if (!json_is_true(json_array_get(e, 3)) && imgs[i].exact) {
				json_array_set_new(
				    e, 0, json_integer((json_int_t)imgs[i].sizes[l]));
				json_array_set_new(e, 3, json_true());
			}
			json_array_set_new(
			    e, 1, json_integer(json_integer_value(json_array_get(e, 1)) + 1));
			if (sel == NULL || sel[i])
				json_array_set_new(e, 2,
				    json_integer(json_integer_value(json_array_get(e, 2)) + 1));
		}
	}
	return t;
}

void
space_split(const struct space_image *imgs, size_t n, const bool *among, size_t i,
    uint64_t *ret_shared, uint64_t *ret_unique)
{
	json_t *t = layer_table(imgs, n, among);
	const struct space_image *img = &imgs[i];
	uint64_t shared = 0;
	bool self = among == NULL || among[i];

	for (size_t l = 0; l < img->n_layers; l++) {
		json_int_t holders =
		    json_integer_value(json_array_get(json_object_get(t, img->chains[l]), 2));

		/* Held by another counted image: more holders than this image itself. */
		if (holders > (self ? 1 : 0))
			shared += img->sizes[l];
	}
	json_decref(t);
	if (shared > img->size) /* sizes never add up to more, but the input is untrusted */
		shared = img->size;
	*ret_shared = shared;
	*ret_unique = img->size >= shared ? img->size - shared : 0;
}

/*
 * The bytes of the layers the selected images hold, each layer once: all of them, or with
 * only_theirs only those that no unselected image holds too.
 */
static uint64_t
selected_bytes(const struct space_image *imgs, size_t n, const bool *sel, bool only_theirs)
{
	json_t *t = layer_table(imgs, n, sel), *e;
	const char *k;
	uint64_t total = 0;

	json_object_foreach(t, k, e) {
		json_int_t selected = json_integer_value(json_array_get(e, 2));

		if (selected > 0 &&
		    (!only_theirs || selected == json_integer_value(json_array_get(e, 1))))
			total += (uint64_t)json_integer_value(json_array_get(e, 0));
	}
	json_decref(t);
	return total;
}

uint64_t
space_distinct(const struct space_image *imgs, size_t n, const bool *sel)
{
	return selected_bytes(imgs, n, sel, false);
}

uint64_t
space_freed(const struct space_image *imgs, size_t n, const bool *gone)
{
	/* A layer is freed only when every holder of it goes. */
	return selected_bytes(imgs, n, gone, true);
}

const char *
space_human(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = {"kB", "MB", "GB", "TB", "PB", "EB"};
	double v = (double)bytes;
	size_t u = 0;

	if (bytes < 1000) {
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
		return buf;
	}
	v /= 1000;
	while (v >= 999.5 && u + 1 < SB_ARRAY_SIZE(units)) {
		v /= 1000;
		u++;
	}
	snprintf(buf, len, v < 9.995 ? "%.2f %s" : v < 99.95 ? "%.1f %s" : "%.0f %s", v, units[u]);
	return buf;
}

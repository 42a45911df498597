/* SPDX-License-Identifier: Apache-2.0 */
/* yaml.c: libyaml events -> struct sb_ynode tree, with our limits. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "sb/limits.h"
#include "sb/mem.h"
#include "sb/yaml.h"

#define YAML_STR_TAG "tag:yaml.org,2002:str"

static void
yaml_parser_freep(yaml_parser_t *p)
{
	yaml_parser_delete(p);
}

void
sb_ynode_free(struct sb_ynode *n)
{
	if (n == NULL)
		return;
	for (size_t i = 0; i < n->n; i++) {
		if (n->keys != NULL)
			sb_ynode_free(n->keys[i]);
		if (n->items != NULL)
			sb_ynode_free(n->items[i]);
	}
	free(n->keys);
	free(n->items);
	free(n->value);
	free(n);
}

static bool
all_in(const char *s, const char *set)
{
	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++)
		if (strchr(set, *s) == NULL)
			return false;
	return true;
}

/* Does s match [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? ? */
static bool
is_core_float(const char *s)
{
	bool digits = false;

	if (*s == '-' || *s == '+')
		s++;
	while (*s >= '0' && *s <= '9')
		s++, digits = true;
	if (*s == '.') {
		s++;
		while (*s >= '0' && *s <= '9')
			s++, digits = true;
	}
	if (!digits)
		return false;
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '-' || *s == '+')
			s++;
		if (!(*s >= '0' && *s <= '9'))
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return *s == '\0';
}

/* YAML 1.2 core schema resolution of a plain scalar. */
static enum sb_yscalar_type
resolve_plain(const char *s)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };
	static const char *const bools[] = { "true", "True", "TRUE", "false", "False", "FALSE" };
	static const char *const specials[] = { ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF",
		"-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN" };
	const char *d = s;

	for (size_t i = 0; i < SB_ARRAY_SIZE(nulls); i++)
		if (strcmp(s, nulls[i]) == 0)
			return SB_YSCALAR_NULL;
	for (size_t i = 0; i < SB_ARRAY_SIZE(bools); i++)
		if (strcmp(s, bools[i]) == 0)
			return SB_YSCALAR_BOOL;
	if (strncmp(s, "0o", 2) == 0 && all_in(s + 2, "01234567"))
		return SB_YSCALAR_INT;
	if (strncmp(s, "0x", 2) == 0 && all_in(s + 2, "0123456789abcdefABCDEF"))
		return SB_YSCALAR_INT;
	if (*d == '-' || *d == '+')
		d++;
	if (all_in(d, "0123456789"))
		return SB_YSCALAR_INT;
	for (size_t i = 0; i < SB_ARRAY_SIZE(specials); i++)
		if (strcmp(s, specials[i]) == 0)
			return SB_YSCALAR_FLOAT;
	if (is_core_float(s))
		return SB_YSCALAR_FLOAT;
	return SB_YSCALAR_STR;
}

struct loader {
	struct sb_ynode *root;
	struct sb_ynode *stack[SB_YAML_DEPTH_MAX + 1];
	size_t depth;
	size_t nodes;
	int documents;
	struct sb_yloc loc;
};

static int
loader_fail(struct loader *l, const yaml_mark_t *mark, struct sb_error **err, int code,
    const char *msg)
{
	l->loc.line = (unsigned)mark->line + 1;
	l->loc.col = (unsigned)mark->column + 1;
	return sb_error_set(err, code, "%s", msg);
}

static void
node_push_child(struct sb_ynode *parent, struct sb_ynode *key, struct sb_ynode *value)
{
	if (parent->n == parent->cap) {
		parent->cap = parent->cap ? parent->cap * 2 : 8;
		parent->items = sb_xreallocarray(parent->items, parent->cap, sizeof(*parent->items));
		if (parent->kind == SB_YNODE_MAP)
			parent->keys =
			    sb_xreallocarray(parent->keys, parent->cap, sizeof(*parent->keys));
	}
	if (parent->kind == SB_YNODE_MAP)
		parent->keys[parent->n] = key;
	parent->items[parent->n++] = value;
}

/*
 * Attach a new node to the open collection on top of the stack. In a mapping, a node is a
 * key when the last pair is complete, otherwise the value of the pending key.
 */
static int
loader_attach(struct loader *l, struct sb_ynode *node, const yaml_mark_t *mark,
    struct sb_error **err)
{
	struct sb_ynode *parent;

	if (l->depth == 0) {
		l->root = node;
		return 0;
	}
	parent = l->stack[l->depth - 1];
	if (parent->kind == SB_YNODE_SEQ) {
		node_push_child(parent, NULL, node);
		return 0;
	}
	if (parent->n > 0 && parent->items[parent->n - 1] == NULL) {
		parent->items[parent->n - 1] = node;
		return 0;
	}
	if (node->kind != SB_YNODE_SCALAR) {
		sb_ynode_free(node);
		return loader_fail(l, mark, err, EINVAL, "mapping keys must be plain strings");
	}
	/* Duplicate keys are found when the mapping ends (check_keys). */
	node_push_child(parent, node, NULL);
	return 0;
}

struct key_ref {
	const char *value;
	size_t index; /* in the mapping, i.e. in document order */
};

static int
cmp_key_refs(const void *a, const void *b)
{
	const struct key_ref *x = a, *y = b;
	int c = strcmp(x->value, y->value);

	return c != 0 ? c : x->index < y->index ? -1 : x->index > y->index;
}

/*
 * A mapping's keys are unique. Sorted, not compared pairwise: a config.yaml of 49,000 keys
 * (479 KB, under the file limit) cost 78 s of CPU pairwise. What is reported is what a
 * pairwise check in document order would: the earliest key that repeats one before it, with
 * the line of the first. (Scalars hold no NUL byte: strcmp compares them whole.)
 */
static int
check_keys(struct loader *l, const struct sb_ynode *map, struct sb_error **err)
{
	_cleanup_free_ struct key_ref *refs = NULL;
	const struct sb_ynode *dup = NULL, *first = NULL;
	size_t dup_at = SIZE_MAX;

	if (map->kind != SB_YNODE_MAP || map->n < 2)
		return 0;
	refs = sb_xcalloc(map->n, sizeof(*refs));
	for (size_t i = 0; i < map->n; i++)
		refs[i] = (struct key_ref){ map->keys[i]->value, i };
	qsort(refs, map->n, sizeof(*refs), cmp_key_refs);
	for (size_t i = 1; i < map->n; i++) {
		/* refs[i] repeats the group's first, refs[g]: only the group's second counts. */
		if (strcmp(refs[i].value, refs[i - 1].value) != 0 ||
		    (i >= 2 && strcmp(refs[i - 1].value, refs[i - 2].value) == 0))
			continue;
		if (refs[i].index < dup_at) {
			dup_at = refs[i].index;
			dup = map->keys[dup_at];
			first = map->keys[refs[i - 1].index];
		}
	}
	if (dup != NULL) {
		_cleanup_free_ char *msg =
		    sb_xasprintf("duplicate key '%s' (first at line %u)", dup->value, first->line);
		yaml_mark_t at = { 0 };

		at.line = dup->line - 1;
		at.column = dup->col - 1;
		return loader_fail(l, &at, err, EINVAL, msg);
	}
	return 0;
}

static struct sb_ynode *
node_new(struct loader *l, enum sb_ynode_kind kind, const yaml_mark_t *mark)
{
	struct sb_ynode *n = sb_xcalloc(1, sizeof(*n));

	n->kind = kind;
	n->line = (unsigned)mark->line + 1;
	n->col = (unsigned)mark->column + 1;
	l->nodes++;
	return n;
}

/* Anchors, aliases and tags: the features we turn away, with the reason. */
static int
check_props(struct loader *l, const yaml_event_t *ev, const yaml_char_t *anchor,
    const yaml_char_t *tag, bool *ret_force_str, struct sb_error **err)
{
	*ret_force_str = false;
	if (anchor != NULL)
		return loader_fail(l, &ev->start_mark, err, EINVAL,
		    "anchors (&name) are not allowed");
	if (tag != NULL) {
		if (strcmp((const char *)tag, YAML_STR_TAG) == 0 && ev->type == YAML_SCALAR_EVENT) {
			*ret_force_str = true;
			return 0;
		}
		/* "!" is the non-specific tag libyaml gives quoted scalars in some versions. */
		if (strcmp((const char *)tag, "!") == 0)
			return 0;
		return loader_fail(l, &ev->start_mark, err, EINVAL,
		    "tags other than !!str are not allowed");
	}
	return 0;
}

static int
loader_event(struct loader *l, yaml_event_t *ev, struct sb_error **err)
{
	struct sb_ynode *n;
	bool force_str;

	if (l->nodes >= SB_YAML_NODES_MAX)
		return loader_fail(l, &ev->start_mark, err, E2BIG, "too many YAML nodes");
	switch (ev->type) {
	case YAML_NO_EVENT:
	case YAML_STREAM_START_EVENT:
	case YAML_STREAM_END_EVENT:
	case YAML_DOCUMENT_END_EVENT:
		return 0;
	case YAML_DOCUMENT_START_EVENT:
		if (++l->documents > 1)
			return loader_fail(l, &ev->start_mark, err, EINVAL,
			    "more than one YAML document");
		return 0;
	case YAML_ALIAS_EVENT:
		return loader_fail(l, &ev->start_mark, err, EINVAL,
		    "aliases (*name) are not allowed");
	case YAML_SCALAR_EVENT:
		if (check_props(l, ev, ev->data.scalar.anchor, ev->data.scalar.tag, &force_str,
			err) < 0)
			return -1;
		if (ev->data.scalar.length > SB_YAML_SCALAR_MAX)
			return loader_fail(l, &ev->start_mark, err, EMSGSIZE,
			    "scalar longer than the limit");
		if (memchr(ev->data.scalar.value, '\0', ev->data.scalar.length) != NULL)
			return loader_fail(l, &ev->start_mark, err, EINVAL, "NUL byte in a scalar");
		n = node_new(l, SB_YNODE_SCALAR, &ev->start_mark);
		n->value = sb_xmemdup(ev->data.scalar.value, ev->data.scalar.length);
		n->len = ev->data.scalar.length;
		n->type = (!force_str && ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
			? resolve_plain(n->value)
			: SB_YSCALAR_STR;
		return loader_attach(l, n, &ev->start_mark, err);
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		if (ev->type == YAML_SEQUENCE_START_EVENT
			? check_props(l, ev, ev->data.sequence_start.anchor,
			      ev->data.sequence_start.tag, &force_str, err) < 0
			: check_props(l, ev, ev->data.mapping_start.anchor,
			      ev->data.mapping_start.tag, &force_str, err) < 0)
			return -1;
		if (l->depth >= SB_YAML_DEPTH_MAX)
			return loader_fail(l, &ev->start_mark, err, EINVAL,
			    "YAML nested too deeply");
		n = node_new(l, ev->type == YAML_SEQUENCE_START_EVENT ? SB_YNODE_SEQ : SB_YNODE_MAP,
		    &ev->start_mark);
		if (loader_attach(l, n, &ev->start_mark, err) < 0)
			return -1;
		l->stack[l->depth++] = n;
		return 0;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		if (l->depth > 0 && check_keys(l, l->stack[l->depth - 1], err) < 0)
			return -1;
		if (l->depth > 0)
			l->depth--;
		return 0;
	}
	return 0;
}

int
sb_yaml_load(const char *data, size_t len, struct sb_ynode **ret_root, struct sb_yloc *ret_loc,
    struct sb_error **err)
{
	_cleanup_(yaml_parser_freep) yaml_parser_t parser;
	struct loader l;
	bool done = false;

	memset(&l, 0, sizeof(l));
	if (!yaml_parser_initialize(&parser))
		sb_oom(0);
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	while (!done) {
		yaml_event_t ev;
		int r;

		if (!yaml_parser_parse(&parser, &ev)) {
			l.loc.line = (unsigned)parser.problem_mark.line + 1;
			l.loc.col = (unsigned)parser.problem_mark.column + 1;
			if (parser.context != NULL)
				sb_error_set(err, EINVAL, "%s %s", parser.problem ? parser.problem
										 : "syntax error",
				    parser.context);
			else
				sb_error_set(err, EINVAL, "%s",
				    parser.problem ? parser.problem : "syntax error");
			goto fail;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		r = loader_event(&l, &ev, err);
		yaml_event_delete(&ev);
		if (r < 0)
			goto fail;
	}
	*ret_root = l.root;
	return 0;
fail:
	sb_ynode_free(l.root);
	if (ret_loc != NULL)
		*ret_loc = l.loc;
	return -1;
}

const struct sb_ynode *
sb_ymap_get(const struct sb_ynode *map, const char *key)
{
	if (map == NULL || map->kind != SB_YNODE_MAP)
		return NULL;
	for (size_t i = 0; i < map->n; i++)
		if (strcmp(map->keys[i]->value, key) == 0)
			return map->items[i];
	return NULL;
}

bool
sb_ynode_is_null(const struct sb_ynode *n)
{
	return n == NULL || (n->kind == SB_YNODE_SCALAR && n->type == SB_YSCALAR_NULL);
}

const char *
sb_ynode_describe(const struct sb_ynode *n)
{
	if (n == NULL)
		return "nothing";
	switch (n->kind) {
	case SB_YNODE_SEQ:
		return "a list";
	case SB_YNODE_MAP:
		return "a mapping";
	case SB_YNODE_SCALAR:
		break;
	}
	switch (n->type) {
	case SB_YSCALAR_STR:
		return "a string";
	case SB_YSCALAR_NULL:
		return "null";
	case SB_YSCALAR_BOOL:
		return "a boolean";
	case SB_YSCALAR_INT:
		return "an integer";
	case SB_YSCALAR_FLOAT:
		return "a number";
	}
	return "a value";
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * yaml.h: a strict YAML loader built on libyaml's event API (docs/design.md, "Parsing
 * untrusted input").
 *
 * The document becomes a small tree of scalars, sequences and mappings, each node with its
 * 1-based line and column so schema errors can point at it. Refused: aliases and anchors
 * (no "billion laughs"), tags other than !!str, more than one document, non-scalar keys,
 * duplicate keys, nesting deeper than SB_YAML_DEPTH_MAX, more than SB_YAML_NODES_MAX
 * nodes, scalars longer than SB_YAML_SCALAR_MAX. We count depth ourselves: libyaml only
 * gained a nesting limit in recent sources.
 *
 * Plain (unquoted) scalars are resolved as the YAML 1.2 core schema says (null, bool, int,
 * float, or string); quoted and block scalars are always strings.
 */
#ifndef SB_YAML_H
#define SB_YAML_H

#include "sb/common.h"
#include "sb/error.h"

enum sb_ynode_kind {
	SB_YNODE_SCALAR,
	SB_YNODE_SEQ,
	SB_YNODE_MAP,
};

enum sb_yscalar_type {
	SB_YSCALAR_STR,
	SB_YSCALAR_NULL,
	SB_YSCALAR_BOOL,
	SB_YSCALAR_INT,
	SB_YSCALAR_FLOAT,
};

struct sb_ynode {
	enum sb_ynode_kind kind;
	unsigned line, col;
	/* SB_YNODE_SCALAR */
	char *value; /* NUL-terminated, never NULL for a scalar */
	size_t len;
	enum sb_yscalar_type type;
	/* SB_YNODE_SEQ: items[0..n); SB_YNODE_MAP: keys[i] -> items[i] */
	struct sb_ynode **items;
	struct sb_ynode **keys;
	size_t n;
	size_t cap;
};

struct sb_yloc {
	unsigned line, col; /* 1-based; 0 when unknown */
};

/*
 * Parse len bytes. An empty document gives *ret_root = NULL. On failure, *ret_loc (if not
 * NULL) gets the position of the problem and *err its description.
 */
int sb_yaml_load(const char *data, size_t len, struct sb_ynode **ret_root, struct sb_yloc *ret_loc,
    struct sb_error **err);

void sb_ynode_free(struct sb_ynode *n);

static inline void
sb_ynode_freep(struct sb_ynode **n)
{
	sb_ynode_free(*n);
}
#define _cleanup_ynode_ _cleanup_(sb_ynode_freep)

/* The value under key in a mapping, or NULL. */
const struct sb_ynode *sb_ymap_get(const struct sb_ynode *map, const char *key);

/* A scalar that is YAML null (also true for a NULL node pointer). */
bool sb_ynode_is_null(const struct sb_ynode *n);

/* "a string", "a mapping", ... for messages. */
const char *sb_ynode_describe(const struct sb_ynode *n);

#endif

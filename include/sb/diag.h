/* SPDX-License-Identifier: Apache-2.0 */
/*
 * diag.h: a list of located problems ("file:line:col: message"), for validators that must
 * report every problem at once rather than stop at the first.
 */
#ifndef SB_DIAG_H
#define SB_DIAG_H

#include <stdio.h>

#include "sb/common.h"

struct sb_diag {
	char *file; /* path as the user should see it */
	unsigned line, col; /* 1-based; line 0: the file (or folder) as a whole, col 0 too */
	char *msg;
};

struct sb_diags {
	struct sb_diag *v;
	size_t n, cap;
};

#define SB_DIAGS_INIT { NULL, 0, 0 }

/* Add a problem; line 0 means "the file (or folder) as a whole", printed "file: message". */
void sb_diags_add(struct sb_diags *d, const char *file, unsigned line, unsigned col,
    const char *fmt, ...) _printf_(5, 6);

/* Move every entry of src to the end of dst. */
void sb_diags_move(struct sb_diags *dst, struct sb_diags *src);

/* Sort by file, line, column (stable for equal positions). */
void sb_diags_sort(struct sb_diags *d);

/* Print one as "file:line:col: message\n" ("file: message\n" for line 0), file and message
 * escaped (both may come from a task folder). */
void sb_diag_print(const struct sb_diag *d, FILE *out);

/* sb_diag_print for each. */
void sb_diags_print(const struct sb_diags *d, FILE *out);

void sb_diags_release(struct sb_diags *d);
#define _cleanup_diags_ _cleanup_(sb_diags_release)

#endif
